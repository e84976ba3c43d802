/*
 * unwind-priv.h - what the unwinder backends share: the per-sample context
 * (registers + stack copy, with bounds-checked reads), the per-address-space
 * state slot each backend keeps its caches in, and the backend entry points.
 */
#ifndef PROF_UNWIND_PRIV_H
#define PROF_UNWIND_PRIV_H

#include "prof/unwind.h"

struct unwind_ctx {
	struct prof_addrspace *as;
	pid_t tid;
	const struct prof_user_regs *regs;
	uint64_t sp;		/* address of stack->data[0] */
	const uint8_t *stack;
	uint64_t stack_size;
	bool no_fast_path;	/* PROF_UNWIND_NO_FAST_PATH: libdw's general unwinder only */
	struct prof_unwind_reads *reads;	/* every stack read is logged here */
};

static inline void ctx_log_read(const struct unwind_ctx *c, uint64_t off)
{
	struct prof_unwind_reads *r = c->reads;

	if (off + 8 > r->top)
		r->top = (uint32_t)(off + 8);
	if (r->n >= PROF_UNWIND_MAX_READS || off > UINT16_MAX)
		r->overflow = true;
	else
		r->off[r->n++] = (uint16_t)off;
}

/* Copies one 8-byte word of the captured stack, not logged (the caller
 * logs it if it uses it); false outside the copy. */
static inline bool ctx_peek_stack(const struct unwind_ctx *c, uint64_t addr, uint64_t *val)
{
	if (addr < c->sp || addr - c->sp > c->stack_size || c->stack_size - (addr - c->sp) < 8) {
		c->reads->past_end |= addr >= c->sp;
		return false;
	}
	__builtin_memcpy(val, c->stack + (addr - c->sp), 8);
	return true;
}

/* Reads one 8-byte word of the captured stack; false outside the copy. */
static inline bool ctx_read_stack(const struct unwind_ctx *c, uint64_t addr, uint64_t *val)
{
	if (!ctx_peek_stack(c, addr, val))
		return false;
	ctx_log_read(c, addr - c->sp);
	return true;
}

/* x86_64 DWARF (and libunwind UNW_X86_64_*) register i is perf register
 * unwind_dwarf_to_perf[i]: rax rdx rcx rbx rsi rdi rbp rsp r8-r15 rip. */
#define UNWIND_DWARF_NREGS 17
extern const int unwind_dwarf_to_perf[UNWIND_DWARF_NREGS];

/* Whether a binary mapped in as is Go's (cached per mapping generation):
 * walks outside the fast path check their frames below only then. */
bool prof_unwind_as_has_go(struct prof_addrspace *as);
/* Whether return address ret of as is in a Go function where Go's own
 * traceback ends the stack (TOPFRAME, or SPWRITE: it switched stacks, so
 * the word its CFI names as its return address is stale): walks end
 * there, complete.  Cached per address space. */
bool prof_unwind_ret_ends_go_stack(struct prof_addrspace *as, uint64_t ret);

/* Reads a word from the stack copy, else from a mapped ELF file's contents. */
bool prof_unwind_read_word(const struct unwind_ctx *c, uint64_t addr, uint64_t *val);

/* as->unwind_state: one slot per backend, so backends can share a space. */
struct prof_unwind_as_state {
	void *libdw;
	void (*libdw_free)(void *);
	void *libunwind;
	void (*libunwind_free)(void *);
	uint64_t roots_generation;	/* roots is valid for this mapping generation */
	uint64_t go_generation;		/* has_go is valid for this one */
	bool has_go;			/* a binary of the space has Go's tables */
	struct u64map roots;		/* lookup pc -> is a thread root (unwind.c) */
};
struct prof_unwind_as_state *prof_unwind_as_state(struct prof_addrspace *as);

/* Backends fill pcs[0..n) and res; pcs[0] is already the sampled ip. */
void prof_unwind_libdw(const struct unwind_ctx *c, uint64_t *pcs, size_t max,
		       struct prof_unwind_result *res);
struct prof_unwind_libunwind;
struct prof_unwind_libunwind *prof_unwind_libunwind_new(void);
void prof_unwind_libunwind_free(struct prof_unwind_libunwind *lu);
void prof_unwind_libunwind(struct prof_unwind_libunwind *lu, const struct unwind_ctx *c, uint64_t *pcs,
			   size_t max, struct prof_unwind_result *res);

#endif
