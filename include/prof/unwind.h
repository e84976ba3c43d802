/*
 * unwind.h - turning a sample's captured user registers and stack copy into
 * a list of return addresses.  Backends: libdw CFI (default), libunwind,
 * frame pointers.  Unwind information is cached per binary (and per PC
 * where the backend allows), never rebuilt per sample.
 *
 * Registers use the kernel's perf_regs numbering (asm/perf_regs.h); the
 * recorder asks for PROF_PERF_REGS_USER_MASK (perf.h) in sample_regs_user.
 *
 * libdw backend: per-pc rules distilled from libdw's CFI serve most samples
 * (src/unwind/cfi-cache.c); PROF_UNWIND_NO_FAST_PATH=1 in the environment
 * (read by prof_unwinder_new) forces libdw's general unwinder, for debugging.
 */
#ifndef PROF_UNWIND_H
#define PROF_UNWIND_H

#include "prof/symbol.h"
#include <asm/perf_regs.h>

#define PROF_MAX_FRAMES 1024

struct prof_user_regs {
	uint64_t r[PERF_REG_X86_64_MAX];	/* indexed by PERF_REG_X86_* */
};

struct prof_ustack {
	const uint8_t *data;	/* copy of user memory starting at r[PERF_REG_X86_SP] */
	uint64_t size;		/* bytes valid (the sample's dyn_size) */
};

enum prof_unwinder_kind {
	PROF_UNWIND_LIBDW,
	PROF_UNWIND_LIBUNWIND,
	PROF_UNWIND_FP,
	PROF_UNWIND_NONE,
};
/* "libdw" / "libunwind" / "fp" / "none" -> kind; 0 or -EINVAL. */
int prof_unwinder_parse(const char *name, enum prof_unwinder_kind *kind);

struct prof_unwinder;
struct prof_unwinder *prof_unwinder_new(enum prof_unwinder_kind kind);
void prof_unwinder_free(struct prof_unwinder *u);

/* The words of the stack copy an unwind read, by offset from sp.  The
 * unwind is a function of the sampled ip, sp and bp, of these words and
 * of the binaries' contents (CFA rules on x86-64 are on sp or bp): a
 * later sample whose registers and words there are the same unwinds the
 * same, which lets the off-CPU accountant send a repeat of a thread's
 * last stack instead of a new copy (src/record/offcpu_swa.c). */
#define PROF_UNWIND_MAX_READS 64
struct prof_unwind_reads {
	uint16_t off[PROF_UNWIND_MAX_READS];
	uint32_t n;
	uint32_t top;		/* the end of the highest word read, from sp (whatever off holds) */
	bool overflow;		/* more reads than off holds, or an offset past 64 KiB */
	bool past_end;		/* a read at or above sp failed: the copy's length mattered */
	bool bp_used;		/* the sampled bp mattered (a CFA on rbp not restored from
				 * a word read; every walk but the CFI fast path's) */
};

struct prof_unwind_result {
	size_t n;		/* pcs[0] is the sampled ip, the rest return addresses */
	bool complete;		/* reached the outermost frame (not out of stack / error) */
	bool at_root;		/* pcs[n - 1] is a thread root by its binary's symbols or
				 * Go's tables (roots.c) */
	const char *stop;	/* why it stopped early, static string, NULL if complete */
	struct prof_unwind_reads reads;
};

/*
 * Unwinds one sample.  The libdw and libunwind backends fall back to frame
 * pointers for code without CFI.  Never fails: an unwind that cannot start
 * still returns the sampled ip (n = 1, complete = false).
 */
void prof_unwind(struct prof_unwinder *u, struct prof_addrspace *as, pid_t tid,
		 const struct prof_user_regs *regs, const struct prof_ustack *stack,
		 uint64_t *pcs, size_t max, struct prof_unwind_result *res);

#endif
