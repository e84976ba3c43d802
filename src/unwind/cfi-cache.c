/*
 * cfi-cache.c - the libdw backend's fast path: per-pc unwind rules
 * distilled from libdw's CFI (dwarf_cfi_addrframe) once, then applied to
 * every later sample with a hash lookup and two or three reads of the
 * stack copy per frame.  libdw's own frame unwinder re-interprets the CFI
 * program and allocates frame states for every frame of every sample;
 * with the rule cache a 20-frame stack costs a few hundred nanoseconds.
 *
 * Design notes / invariants:
 *  - A rule covers the overwhelmingly common x86_64 shape: CFA = rsp or
 *    rbp + constant, return address and saved rbp at CFA + constant (or
 *    rbp unchanged).  A CFA expression that only adds a function of rip
 *    to rsp (PLT entries) is evaluated for the one pc it is looked up at.
 *    Anything else (other DWARF expressions, signal frames, pcs without
 *    CFI) is marked "complex" and the whole sample goes to libdw's general
 *    unwinder, so results never differ between the two paths.
 *  - Two levels.  Rules are distilled per binary, by file vaddr, from the
 *    binary's own CFI handles (prof_elf_eh_cfi, prof_elf_debug_cfi: .eh_frame
 *    first, then .debug_frame, libdw's order), and kept with the binary:
 *    every process of the same libc or shell shares them, so a new process
 *    costs no CFI parsing at all.  In front of them each address space
 *    keeps its own cache by runtime pc, dropped whenever its mappings
 *    change; a hit there is one hash lookup.
 *  - "ra undefined" (the outermost frame, e.g. _start) ends the walk as
 *    complete, exactly as libdw reports it.
 */
#include "cfi-cache-priv.h"
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <string.h>

/* ROOT: no CFI at all, in a thread root (the loader's _start and
 * _dl_start_user have none): the walk ends there, as libdw's ends in a
 * thread root after at most a few garbage frames that prof_unwind drops.
 * SIMPLE_AT_PC: simple, from a CFA expression of rip evaluated at the
 * lookup pc, which is rip only in the sampled frame (callers look up
 * ra - 1).  GO_END: a Go function where Go's traceback ends the stack
 * (runtime.systemstack, mcall, morestack, goexit, ...: roots.c): the walk
 * ends when a caller's frame is in it, as the CFI after its stack switch
 * names a stale word as the return address; the sampled frame follows
 * its CFI (leaf_kind), right until the switch. */
enum { RULE_COMPLEX, RULE_SIMPLE, RULE_OUTERMOST, RULE_ROOT, RULE_SIMPLE_AT_PC, RULE_GO_END };
enum { DW_RBP = 6, DW_RSP = 7, DW_RA = 16 };

/* CFA + off for "the value lives at CFA + off"; false for anything else. */
static bool saved_at_cfa(const Dwarf_Op *ops, size_t nops, int32_t *off)
{
	if (nops == 1 && ops[0].atom == DW_OP_call_frame_cfa) {
		*off = 0;
		return true;
	}
	if (nops == 2 && ops[0].atom == DW_OP_call_frame_cfa && ops[1].atom == DW_OP_plus_uconst) {
		*off = (int32_t)(int64_t)ops[1].number;
		return true;
	}
	if (nops == 3 && ops[0].atom == DW_OP_call_frame_cfa &&
	    (ops[1].atom == DW_OP_consts || ops[1].atom == DW_OP_constu) && ops[2].atom == DW_OP_plus) {
		*off = (int32_t)(int64_t)ops[1].number;
		return true;
	}
	return false;
}

/* A value on the expression stack: rsp_count * rsp + k. */
struct cfa_term {
	int64_t k;
	int rsp_count;
};

/* Applies one binary operator to the two top terms; false if it is not
 * one we know or it would not leave a plain "rsp + k" or constant. */
static bool cfa_binop(uint8_t atom, struct cfa_term *a, const struct cfa_term *b)
{
	if (atom == DW_OP_plus) {
		a->k += b->k;
		a->rsp_count += b->rsp_count;
		return a->rsp_count <= 1;
	}
	if (atom == DW_OP_minus && b->rsp_count == 0) {
		a->k -= b->k;
		return true;
	}
	if (a->rsp_count || b->rsp_count)
		return false;
	switch (atom) {
	case DW_OP_and: a->k &= b->k; return true;
	case DW_OP_or: a->k |= b->k; return true;
	case DW_OP_shl: a->k = (uint64_t)b->k < 64 ? (int64_t)((uint64_t)a->k << b->k) : 0; return true;
	case DW_OP_shr: a->k = (uint64_t)b->k < 64 ? (int64_t)((uint64_t)a->k >> b->k) : 0; return true;
	case DW_OP_ge: a->k = a->k >= b->k; return true;
	case DW_OP_gt: a->k = a->k > b->k; return true;
	case DW_OP_le: a->k = a->k <= b->k; return true;
	case DW_OP_lt: a->k = a->k < b->k; return true;
	case DW_OP_eq: a->k = a->k == b->k; return true;
	case DW_OP_ne: a->k = a->k != b->k; return true;
	default: return false;
	}
}

/* Evaluates a CFA expression made of rsp, rip, constants and arithmetic
 * (the PLT's "rsp + 8 + ((rip & 15) >= 11) * 8") at rip; true with
 * *off when its value is rsp + *off.  Anything else (memory reads, other
 * registers, branches) is left to libdw. */
static bool cfa_expr_rsp_offset(const Dwarf_Op *ops, size_t nops, uint64_t rip, int32_t *off)
{
	struct cfa_term st[8];
	size_t n = 0;

	for (size_t i = 0; i < nops; i++) {
		uint8_t atom = ops[i].atom;
		if (n == ARRAY_SIZE(st))
			return false;
		if (atom >= DW_OP_lit0 && atom <= DW_OP_lit31) {
			st[n++] = (struct cfa_term){ atom - DW_OP_lit0, 0 };
		} else if (atom == DW_OP_breg0 + DW_RSP) {
			st[n++] = (struct cfa_term){ (int64_t)ops[i].number, 1 };
		} else if (atom == DW_OP_breg0 + DW_RA) {
			st[n++] = (struct cfa_term){ (int64_t)(rip + ops[i].number), 0 };
		} else if (atom == DW_OP_const1u || atom == DW_OP_const2u || atom == DW_OP_const4u ||
			   atom == DW_OP_const1s || atom == DW_OP_const2s || atom == DW_OP_const4s ||
			   atom == DW_OP_constu || atom == DW_OP_consts) {
			st[n++] = (struct cfa_term){ (int64_t)ops[i].number, 0 };
		} else if (atom == DW_OP_plus_uconst && n >= 1) {
			st[n - 1].k += (int64_t)ops[i].number;
		} else if (n >= 2 && cfa_binop(atom, &st[n - 2], &st[n - 1])) {
			n--;
		} else {
			return false;
		}
	}
	if (n != 1 || st[0].rsp_count != 1 || st[0].k != (int32_t)st[0].k)
		return false;
	*off = (int32_t)st[0].k;
	return true;
}

/* The CFA offset from rsp of expression ops at file vaddr pc, valid at
 * any load bias: the bias is a multiple of the page size, so an expression
 * that reads only rip's low bits (the PLT's rip & 15) has the same value
 * at pc and at pc + 4 GiB; one that reads more of rip does not. */
static bool cfa_expr_at_pc(const Dwarf_Op *ops, size_t nops, uint64_t pc, int32_t *off)
{
	int32_t other;

	return cfa_expr_rsp_offset(ops, nops, pc, off) &&
	       cfa_expr_rsp_offset(ops, nops, pc + (1ULL << 32), &other) && other == *off;
}

/* The rule of frame f, looked up at file vaddr pc. */
static struct cfi_rule rule_from_frame(Dwarf_Frame *f, uint64_t pc)
{
	struct cfi_rule r = { .kind = RULE_COMPLEX };
	Dwarf_Op *ops, mem[3];
	size_t nops;
	bool signal;

	if (dwarf_frame_info(f, NULL, NULL, &signal) < 0 || signal)
		return r;
	if (dwarf_frame_cfa(f, &ops, &nops) != 0 || nops == 0)
		return r;
	/* libdw states "register + offset" CFAs as DW_OP_bregx reg, off */
	size_t nops_cfa = nops;
	if (nops > 1) {
		if (!cfa_expr_at_pc(ops, nops, pc, &r.cfa_off))
			return r;
		r.cfa_reg = DW_RSP;
	} else if (ops[0].atom == DW_OP_bregx) {
		r.cfa_reg = (uint8_t)ops[0].number;
		r.cfa_off = (int32_t)(int64_t)ops[0].number2;
	} else if (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31) {
		r.cfa_reg = (uint8_t)(ops[0].atom - DW_OP_breg0);
		r.cfa_off = (int32_t)(int64_t)ops[0].number;
	} else {
		return r;
	}
	if (r.cfa_reg != DW_RSP && r.cfa_reg != DW_RBP)
		return r;

	if (dwarf_frame_register(f, DW_RA, mem, &ops, &nops) != 0)
		return r;
	if (nops == 0 && ops == mem) {	/* undefined: the outermost frame */
		r.kind = RULE_OUTERMOST;
		return r;
	}
	if (!saved_at_cfa(ops, nops, &r.ra_off))
		return r;

	if (dwarf_frame_register(f, DW_RBP, mem, &ops, &nops) != 0)
		return r;
	if (nops == 0) {		/* same value, or undefined: keep it */
		r.rbp_saved = false;
	} else if (saved_at_cfa(ops, nops, &r.rbp_off)) {
		r.rbp_saved = true;
	} else {
		return r;
	}
	r.kind = nops_cfa > 1 ? RULE_SIMPLE_AT_PC : RULE_SIMPLE;
	return r;
}

/* The rule at file vaddr pc of e: .eh_frame first, .debug_frame when it
 * has no entry for pc (libdw's order); complex when neither has one. */
static struct cfi_rule rule_for_vaddr(struct prof_elf *e, uint64_t pc)
{
	struct cfi_rule r = { .kind = RULE_COMPLEX };
	Dwarf_CFI *cfi = prof_elf_eh_cfi(e);
	int64_t delta = 0;
	Dwarf_Frame *frame;

	if (!cfi || dwarf_cfi_addrframe(cfi, pc, &frame) != 0) {
		cfi = prof_elf_debug_cfi(e, &delta);
		if (!cfi || dwarf_cfi_addrframe(cfi, pc + (uint64_t)delta, &frame) != 0) {
			if (prof_elf_vaddr_is_root(e, pc))
				r.kind = RULE_ROOT;
			return r;
		}
	}
	r = rule_from_frame(frame, pc);
	free(frame);
	return r;
}

/* r, made a GO_END rule when pc of e is where Go's traceback ends. */
static struct cfi_rule mark_go_end(struct prof_elf *e, uint64_t pc, struct cfi_rule r)
{
	if (prof_elf_vaddr_ends_go_stack(e, pc)) {
		r.leaf_kind = r.kind;
		r.kind = RULE_GO_END;
	}
	return r;
}

/* Appends r to cc's rules; returns its index. */
static uint64_t add_rule(struct cfi_cache *cc, struct cfi_rule r)
{
	VEC_PUSH(&cc->rules, r);
	return cc->rules.n - 1;
}

static void binary_rules_free(void *p)
{
	prof_unwind_cfi_cache_free(p);
	free(p);
}

/* The rule at file vaddr pc of e, from the binary's shared cache. */
static struct cfi_rule binary_rule(struct prof_elf *e, uint64_t pc)
{
	void **cache = prof_elf_unwind_slot(e, binary_rules_free);
	bool created;

	if (!*cache)
		*cache = xcalloc(1, sizeof(struct cfi_cache));
	struct cfi_cache *cc = *cache;
	uint64_t *slot = u64map_slot(&cc->index, pc, &created);
	if (created)	/* rule_for_vaddr does not touch cc: slot stays valid */
		*slot = add_rule(cc, mark_go_end(e, pc, rule_for_vaddr(e, pc)));
	return cc->rules.v[*slot];
}

/* The binary's rule at runtime pc of as (complex outside known binaries);
 * out of line: the hot loop stays small. */
static __attribute__((noinline)) struct cfi_rule runtime_rule(struct prof_addrspace *as, uint64_t pc)
{
	const struct prof_mapping *m = prof_addrspace_find(as, pc);
	struct cfi_rule none = { .kind = RULE_COMPLEX };

	return m && m->elf ? binary_rule(m->elf, pc - m->bias) : none;
}

/* The rule at runtime pc of the address space: one hash lookup in its own
 * cache (the hot path), else the binary's rule at pc's file vaddr. */
static const struct cfi_rule *cached_rule(struct cfi_cache *cc, struct prof_addrspace *as,
					  uint64_t pc)
{
	bool created;
	uint64_t *slot = u64map_slot(&cc->index, pc, &created);

	if (created)	/* runtime_rule fills other caches, not cc */
		*slot = add_rule(cc, runtime_rule(as, pc));
	return &cc->rules.v[*slot];
}

void prof_unwind_cfi_cache_reset(struct cfi_cache *cc)
{
	u64map_free(&cc->index);
	memset(&cc->index, 0, sizeof(cc->index));
	cc->rules.n = 0;
}

void prof_unwind_cfi_cache_free(struct cfi_cache *cc)
{
	u64map_free(&cc->index);
	VEC_FREE(&cc->rules);
}

bool prof_unwind_cfi_fast(struct cfi_cache *cc, const struct unwind_ctx *c,
			  uint64_t *pcs, size_t max, struct prof_unwind_result *res)
{
	uint64_t pc = c->regs->r[PERF_REG_X86_IP];
	uint64_t sp = c->regs->r[PERF_REG_X86_SP], bp = c->regs->r[PERF_REG_X86_BP];
	uint64_t bp_slot = 0;	/* where bp was restored from; 0: the sampled register */
	size_t n = 1;

	c->reads->bp_used = false;
	for (;;) {
		/* return addresses point after the call: look up the call itself */
		const struct cfi_rule *r = cached_rule(cc, c->as, n == 1 ? pc : pc - 1);
		if (r->kind != RULE_SIMPLE) {
			uint8_t kind = r->kind == RULE_GO_END && n == 1 ? r->leaf_kind : r->kind;
			if (kind == RULE_COMPLEX || (kind == RULE_SIMPLE_AT_PC && n > 1))
				return false;
			if (kind == RULE_OUTERMOST || kind == RULE_ROOT || kind == RULE_GO_END) {
				res->complete = true;
				res->stop = NULL;
				break;
			}
		}
		if (r->cfa_reg != DW_RSP && !bp_slot)	/* bp is the walk's input only where a CFA uses it */
			c->reads->bp_used = true;
		else if (r->cfa_reg != DW_RSP)
			ctx_log_read(c, bp_slot - c->sp);
		uint64_t cfa = (r->cfa_reg == DW_RSP ? sp : bp) + (int64_t)r->cfa_off, ra;
		if (!ctx_read_stack(c, cfa + (int64_t)r->ra_off, &ra)) {
			res->stop = "stack copy exhausted";
			break;
		}
		/* In an epilogue GCC's CFI still says "rbp saved at CFA-N" after the
		 * pop: the slot is below sp, popped and not in the stack copy, and
		 * rbp already holds the caller's value, so it is kept.  Stopping
		 * there left 2% of CPython's samples (multadd, quorem) one frame
		 * deep, where libunwind and perf go on.  (libdw's general walk,
		 * taken for complex rules, still stops at such a pc.) */
		uint64_t rbp_slot = cfa + (int64_t)r->rbp_off;
		if (r->rbp_saved && rbp_slot >= sp && !ctx_peek_stack(c, rbp_slot, &bp)) {
			res->stop = "stack copy exhausted";
			break;
		}
		if (r->rbp_saved && rbp_slot >= sp)
			bp_slot = rbp_slot;
		if (cfa <= sp) {
			res->stop = "stack pointer did not grow (corrupt stack)";
			break;
		}
		if (ra == 0) {	/* what libdw also treats as the end */
			res->complete = true;
			res->stop = NULL;
			break;
		}
		if (n >= max) {
			res->stop = "frame limit reached";
			break;
		}
		sp = cfa;
		pc = ra;
		pcs[n++] = ra;
	}
	res->n = n;
	return true;
}
