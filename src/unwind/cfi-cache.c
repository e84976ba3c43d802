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
 *    rbp unchanged).  Anything else (DWARF expressions such as PLT
 *    entries, signal frames, pcs without CFI) is marked "complex" and the
 *    whole sample goes to libdw's general unwinder, so results never
 *    differ between the two paths.
 *  - Rules are cached by runtime pc in the per-address-space state, which
 *    is dropped with the Dwfl whenever the mappings change.
 *  - "ra undefined" (the outermost frame, e.g. _start) ends the walk as
 *    complete, exactly as libdw reports it.
 */
#include "cfi-cache-priv.h"
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <string.h>

enum { RULE_COMPLEX, RULE_SIMPLE, RULE_OUTERMOST };
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

static struct cfi_rule rule_from_frame(Dwarf_Frame *f)
{
	struct cfi_rule r = { .kind = RULE_COMPLEX };
	Dwarf_Op *ops, mem[3];
	size_t nops;
	bool signal;

	if (dwarf_frame_info(f, NULL, NULL, &signal) < 0 || signal)
		return r;
	/* libdw states "register + offset" CFAs as DW_OP_bregx reg, off */
	if (dwarf_frame_cfa(f, &ops, &nops) != 0 || nops != 1)
		return r;
	if (ops[0].atom == DW_OP_bregx) {
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
	r.kind = RULE_SIMPLE;
	return r;
}

static struct cfi_rule rule_for_pc(Dwfl *dwfl, uint64_t pc)
{
	struct cfi_rule r = { .kind = RULE_COMPLEX };
	Dwfl_Module *mod = dwfl_addrmodule(dwfl, pc);
	Dwarf_Addr bias;
	Dwarf_Frame *frame;

	if (!mod)
		return r;
	Dwarf_CFI *cfi = dwfl_module_eh_cfi(mod, &bias);
	if (!cfi || dwarf_cfi_addrframe(cfi, pc - bias, &frame) != 0)
		return r;
	r = rule_from_frame(frame);
	free(frame);
	return r;
}

static const struct cfi_rule *cached_rule(struct cfi_cache *cc, Dwfl *dwfl, uint64_t pc)
{
	bool created;
	uint64_t *slot = u64map_slot(&cc->index, pc, &created);

	if (created) {
		*slot = cc->rules.n;
		struct cfi_rule r = rule_for_pc(dwfl, pc);
		VEC_PUSH(&cc->rules, r);
	}
	return &cc->rules.v[*slot];
}

void cfi_cache_reset(struct cfi_cache *cc)
{
	u64map_free(&cc->index);
	memset(&cc->index, 0, sizeof(cc->index));
	cc->rules.n = 0;
}

void cfi_cache_free(struct cfi_cache *cc)
{
	u64map_free(&cc->index);
	VEC_FREE(&cc->rules);
}

bool cfi_fast_unwind(struct cfi_cache *cc, Dwfl *dwfl, const struct unwind_ctx *c,
		     uint64_t *pcs, size_t max, struct prof_unwind_result *res)
{
	uint64_t pc = c->regs->r[PERF_REG_X86_IP];
	uint64_t sp = c->regs->r[PERF_REG_X86_SP], bp = c->regs->r[PERF_REG_X86_BP];
	size_t n = 1;

	for (;;) {
		/* return addresses point after the call: look up the call itself */
		const struct cfi_rule *r = cached_rule(cc, dwfl, n == 1 ? pc : pc - 1);
		if (r->kind == RULE_COMPLEX)
			return false;
		if (r->kind == RULE_OUTERMOST) {
			res->complete = true;
			res->stop = NULL;
			break;
		}
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
		if (r->rbp_saved && rbp_slot >= sp && !ctx_read_stack(c, rbp_slot, &bp)) {
			res->stop = "stack copy exhausted";
			break;
		}
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
