/*
 * unwind.c - the unwinder front end: backend selection, the per-sample
 * context, the per-address-space state slots, the frame-pointer walker
 * (a backend of its own and the fallback when a CFI unwind cannot start),
 * the walker of Go code that has no CFI, by Go's own frame sizes, and
 * where a walk ends: at a thread root, Go's stack switches included
 * (roots.c), with the frames read past it dropped.
 *
 * The stack copy is untrusted: every read goes through ctx_read_stack(),
 * which refuses anything outside [sp, sp + size).  Every walk is bounded by
 * max and requires the stack pointer / frame pointer to grow, so a corrupt
 * or cyclic stack ends the walk instead of looping.
 */
#include "unwind-priv.h"
#include <errno.h>
#include <string.h>

struct prof_unwinder {
	enum prof_unwinder_kind kind;
	bool no_fast_path;	/* debugging/testing knob, read once */
	struct prof_unwind_libunwind *lu;
};

const int unwind_dwarf_to_perf[UNWIND_DWARF_NREGS] = {
	PERF_REG_X86_AX, PERF_REG_X86_DX, PERF_REG_X86_CX, PERF_REG_X86_BX,
	PERF_REG_X86_SI, PERF_REG_X86_DI, PERF_REG_X86_BP, PERF_REG_X86_SP,
	PERF_REG_X86_R8, PERF_REG_X86_R9, PERF_REG_X86_R10, PERF_REG_X86_R11,
	PERF_REG_X86_R12, PERF_REG_X86_R13, PERF_REG_X86_R14, PERF_REG_X86_R15,
	PERF_REG_X86_IP,
};

int prof_unwinder_parse(const char *name, enum prof_unwinder_kind *kind)
{
	static const char *const names[] = { "libdw", "libunwind", "fp", "none" };

	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (name && !strcmp(name, names[i])) {
			*kind = (enum prof_unwinder_kind)i;
			return 0;
		}
	return -EINVAL;
}

struct prof_unwinder *prof_unwinder_new(enum prof_unwinder_kind kind)
{
	struct prof_unwinder *u = xcalloc(1, sizeof(*u));

	u->kind = kind;
	u->no_fast_path = getenv("PROF_UNWIND_NO_FAST_PATH") != NULL;
	if (kind == PROF_UNWIND_LIBUNWIND)
		u->lu = prof_unwind_libunwind_new();
	return u;
}

void prof_unwinder_free(struct prof_unwinder *u)
{
	if (!u)
		return;
	if (u->lu)
		prof_unwind_libunwind_free(u->lu);
	free(u);
}

static void as_state_free(void *p)
{
	struct prof_unwind_as_state *st = p;

	if (st->libdw && st->libdw_free)
		st->libdw_free(st->libdw);
	if (st->libunwind && st->libunwind_free)
		st->libunwind_free(st->libunwind);
	u64map_free(&st->roots);
	free(st);
}

struct prof_unwind_as_state *prof_unwind_as_state(struct prof_addrspace *as)
{
	if (!as->unwind_state) {
		struct prof_unwind_as_state *st = xcalloc(1, sizeof(*st));
		st->roots_generation = st->go_generation = as->generation - 1;
		as->unwind_state = st;
		as->unwind_state_free = as_state_free;
	}
	return as->unwind_state;
}

/* A word of a mapped ELF file's contents. */
static bool read_file_word(const struct unwind_ctx *c, uint64_t addr, uint64_t *val)
{
	if (!c->as)
		return false;
	const struct prof_mapping *m = prof_addrspace_find(c->as, addr);
	if (m)
		return m->elf && prof_elf_read_vaddr(m->elf, addr - m->bias, val, 8) == 0;
	/* Only executable mappings are tracked, but CFI tables (.eh_frame_hdr)
	 * sit in the read-only segment next to them: try the binaries mapped
	 * just below and just above addr, at their bias. */
	const struct prof_addrspace *as = c->as;
	size_t lo = 0, hi = as->maps.n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (as->maps.v[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo ? lo - 1 : 0; i < as->maps.n && i <= lo; i++) {
		m = &as->maps.v[i];
		if (m->elf && prof_elf_read_vaddr(m->elf, addr - m->bias, val, 8) == 0)
			return true;
	}
	return false;
}

bool prof_unwind_read_word(const struct unwind_ctx *c, uint64_t addr, uint64_t *val)
{
	bool past_end = c->reads->past_end;

	if (ctx_read_stack(c, addr, val))
		return true;
	if (!read_file_word(c, addr, val))
		return false;
	c->reads->past_end = past_end;	/* a file's word, not one beyond the copy */
	return true;
}

/* The walk reached the end of the stack. */
static void walk_complete(struct prof_unwind_result *res)
{
	res->complete = true;
	res->stop = NULL;
}

static void unwind_fp(const struct unwind_ctx *c, uint64_t *pcs, size_t max,
	       struct prof_unwind_result *res)
{
	uint64_t bp = c->regs->r[PERF_REG_X86_BP];

	res->n = 1;
	while (res->n < max) {
		uint64_t saved_bp, ret;
		if (bp == 0) {	/* the ABI's end marker: _start zeroes rbp */
			walk_complete(res);
			return;
		}
		if (!ctx_read_stack(c, bp, &saved_bp) || !ctx_read_stack(c, bp + 8, &ret)) {
			res->stop = "frame pointer outside the stack copy";
			return;
		}
		if (ret == 0) {
			walk_complete(res);
			return;
		}
		pcs[res->n++] = ret;
		if (saved_bp != 0 && saved_bp <= bp) {
			res->stop = "frame pointer does not grow (loop or corrupt stack)";
			return;
		}
		bp = saved_bp;
	}
	res->stop = "frame limit reached";
}

/* Go code without CFI (built -ldflags=-w): Go's own pcsp table gives the
 * frame size at every pc, so the return address is at sp + size and the
 * caller's sp just above it, as Go's runtime walks its stacks.  Frame
 * pointers cannot do this: leaf functions have no frame, and their
 * caller would be skipped.  Leaves the walk where a pc is not Go code (a
 * cgo or assembly frame without a table): the frame pointers go on from
 * there, with rbp as saved by the last Go frame. */
static bool pc_is_root(struct prof_addrspace *as, uint64_t pc, bool is_return_addr);

static void unwind_go(const struct unwind_ctx *c, uint64_t *pcs, size_t max,
		      struct prof_unwind_result *res)
{
	uint64_t sp = c->regs->r[PERF_REG_X86_SP], bp = c->regs->r[PERF_REG_X86_BP];
	uint32_t size;

	res->n = 1;
	while (res->n < max && prof_addrspace_go_frame_size(c->as, pcs[res->n - 1], res->n > 1, &size)) {
		uint64_t ret, saved_bp;
		if (!ctx_read_stack(c, sp + size, &ret)) {
			res->stop = "Go frame outside the stack copy";
			return;
		}
		if (ret == 0) {
			walk_complete(res);
			return;
		}
		/* a frame of its own saves the caller's rbp just below the return address */
		if (size >= 8 && ctx_read_stack(c, sp + size - 8, &saved_bp))
			bp = saved_bp;
		pcs[res->n++] = ret;
		sp += size + 8;
		if (pc_is_root(c->as, ret, true)) {	/* runtime.goexit */
			walk_complete(res);
			return;
		}
	}
	if (res->n >= max) {
		res->stop = "frame limit reached";
		return;
	}
	struct prof_user_regs regs = *c->regs;
	struct unwind_ctx rest = *c;
	struct prof_unwind_result fp = { .n = 1 };
	regs.r[PERF_REG_X86_BP] = bp;
	rest.regs = &regs;
	unwind_fp(&rest, pcs + res->n - 1, max - res->n + 1, &fp);
	res->n += fp.n - 1;
	res->complete = fp.complete;
	res->stop = fp.stop;
}

/* How many outermost frames may be garbage read past a thread root. */
#define ROOT_LOOKBACK 3

enum { PC_ROOT = 1, PC_GO_END = 2 };

/* PC_ROOT when lookup pc key of as is in a thread root (roots.c), with
 * PC_GO_END when that is a Go function where Go's traceback ends. */
static uint64_t pc_kind_of(struct prof_addrspace *as, uint64_t key)
{
	const struct prof_mapping *m = prof_addrspace_find(as, key);

	if (!m || !m->elf)
		return 0;
	if (prof_elf_vaddr_ends_go_stack(m->elf, key - m->bias))
		return PC_ROOT | PC_GO_END;
	return prof_elf_vaddr_is_root(m->elf, key - m->bias) ? PC_ROOT : 0;
}

/* pc_kind_of, cached per address space by lookup pc until its mappings
 * change: the symbol lookups behind it were most of the cost of an unwind
 * whose rules are all cached. */
static uint64_t pc_kind(struct prof_addrspace *as, uint64_t pc, bool is_return_addr)
{
	struct prof_unwind_as_state *st = prof_unwind_as_state(as);
	uint64_t key = is_return_addr && pc ? pc - 1 : pc;
	bool created;

	if (st->roots_generation != as->generation) {
		u64map_free(&st->roots);
		memset(&st->roots, 0, sizeof(st->roots));
		st->roots_generation = as->generation;
	}
	uint64_t *kind = u64map_slot(&st->roots, key, &created);
	if (created)	/* the lookup does not touch roots: the slot stays valid */
		*kind = pc_kind_of(as, key);
	return *kind;
}

static bool pc_is_root(struct prof_addrspace *as, uint64_t pc, bool is_return_addr)
{
	return pc_kind(as, pc, is_return_addr) & PC_ROOT;
}

bool prof_unwind_as_has_go(struct prof_addrspace *as)
{
	struct prof_unwind_as_state *st = prof_unwind_as_state(as);

	if (st->go_generation != as->generation) {
		st->has_go = false;
		for (size_t i = 0; i < as->maps.n && !st->has_go; i++)
			st->has_go = as->maps.v[i].elf && prof_elf_is_go(as->maps.v[i].elf);
		st->go_generation = as->generation;
	}
	return st->has_go;
}

bool prof_unwind_ret_ends_go_stack(struct prof_addrspace *as, uint64_t ret)
{
	return pc_kind(as, ret, true) & PC_GO_END;
}

/* A walk that got to a thread root is complete whatever stopped it there:
 * libdw fails on the loader's _start (no "return address undefined" in
 * its CFI), restoring the outermost frame's registers reads past the stack
 * copy, which the kernel cuts at the end of the stack, and Go's rt0_go,
 * entered by a jump, has argc where a return address would be: frames read
 * beyond the root are dropped. */
static void end_at_root(struct prof_addrspace *as, uint64_t *pcs, struct prof_unwind_result *res)
{
	for (size_t k = 0; k < ROOT_LOOKBACK && k < res->n; k++) {
		size_t i = res->n - 1 - k;
		if (pc_is_root(as, pcs[i], i > 0)) {
			res->n = i + 1;
			walk_complete(res);
			res->at_root = true;
			return;
		}
	}
	/* Sampled inside a Go function that switches stacks (SPWRITE), the
	 * frame's CFI holds only before the switch: Go's profiler keeps the
	 * leaf alone, and so does prof when the walk from it got nowhere. */
	if (!res->complete && (pc_kind(as, pcs[0], false) & PC_GO_END)) {
		res->n = 1;
		walk_complete(res);
		res->at_root = true;
	}
}

void prof_unwind(struct prof_unwinder *u, struct prof_addrspace *as, pid_t tid,
		 const struct prof_user_regs *regs, const struct prof_ustack *stack,
		 uint64_t *pcs, size_t max, struct prof_unwind_result *res)
{
	struct unwind_ctx c = {
		.as = as, .tid = tid, .regs = regs,
		.sp = regs->r[PERF_REG_X86_SP],
		.stack = stack ? stack->data : NULL,
		.stack_size = stack && stack->data ? stack->size : 0,
		.no_fast_path = u->no_fast_path,
		.reads = &res->reads,
	};

	res->n = 0;
	res->reads.n = res->reads.top = 0;
	res->reads.overflow = res->reads.past_end = false;
	res->reads.bp_used = true;	/* unless the CFI fast path walks it all */
	res->complete = res->at_root = false;
	res->stop = "no room for frames";
	if (max == 0)
		return;
	pcs[0] = regs->r[PERF_REG_X86_IP];
	if (as && !prof_addrspace_find(as, pcs[0]))
		prof_addrspace_refresh(as, pcs[0]);
	res->n = 1;
	res->stop = "no call graph";
	max = MIN(max, (size_t)PROF_MAX_FRAMES);
	enum prof_unwinder_kind kind = as ? u->kind : PROF_UNWIND_FP;	/* CFI needs the mappings */
	/* Go without CFI: libdw's own fallback would walk frame pointers
	 * and lose the callers of frameless leaf functions. */
	bool go = kind != PROF_UNWIND_FP && kind != PROF_UNWIND_NONE && prof_addrspace_go_without_cfi(as, pcs[0]);
	switch (go ? PROF_UNWIND_NONE : kind) {
	case PROF_UNWIND_LIBDW:
		prof_unwind_libdw(&c, pcs, max, res);
		break;
	case PROF_UNWIND_LIBUNWIND:
		prof_unwind_libunwind(u->lu, &c, pcs, max, res);
		break;
	case PROF_UNWIND_FP:
		unwind_fp(&c, pcs, max, res);
		return;
	case PROF_UNWIND_NONE:
		if (!go)
			return;
		unwind_go(&c, pcs, max, res);
		break;
	}
	/* Backends may call an unwind "done" after wandering into garbage (libunwind
	 * stops quietly at a zero rip): only an end inside known code is complete. */
	if (res->complete && res->n > 1 && as) {
		const struct prof_mapping *m = prof_addrspace_find(as, pcs[res->n - 1] - 1);
		if (!m || !m->elf) {
			res->complete = false;
			res->stop = "unwind ended outside known code";
		}
	}
	if (as)
		end_at_root(as, pcs, res);
	/* A CFI unwind that could not even start: frame pointers may still work. */
	if (res->n <= 1 && !res->complete) {
		struct prof_unwind_result fp = { .n = 1 };
		unwind_fp(&c, pcs, max, &fp);
		if (fp.n > 1)
			*res = fp;
	}
}
