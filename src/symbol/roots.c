/*
 * roots.c - whether a stack is complete: it is only when its outermost
 * frame is where a thread begins.  An unwinder saying "done" is not
 * enough: libunwind stops quietly at a zero return address, frame-pointer
 * chains end at any zero rbp, and a walk that loses its way in code
 * without CFI ends in "[unknown]".  Counting those as complete made
 * "fully unwound" read 100% on Go -g fp profiles where 27% of stacks
 * ended in [unknown].
 *
 * Thread roots, by name (any module, "@VERSION" already dropped):
 *  - the program's entry point (_start; the loader's _dl_start_user);
 *  - threads: clone / clone3 (glibc's __clone*), or start_thread when
 *    clone3's frame is not produced;
 *  - kernel threads: ret_from_fork / ret_from_fork_asm;
 *  - Go: runtime.goexit (every goroutine), runtime.mstart and
 *    runtime.clone (the g0 stacks of Ms), runtime.rt0_go and the entry
 *    point _rt0_amd64_linux with _rt0_amd64, which it jumps to and which
 *    jumps to rt0_go (the first M: no call, no return address between
 *    them), with or without their ".abi0" suffix.
 *
 * And by Go's own tables: every function where Go's traceback ends a stack
 * (flagged TOPFRAME or SPWRITE in .gopclntab, golang.c).  A Go thread runs
 * the scheduler, the garbage collector and stack growth on its g0 stack,
 * entered through runtime.systemstack, mcall or morestack, which write SP;
 * the goroutine's own frames are on another stack, never in the sample's
 * stack copy, and the word above the switch is stale g0 data.  Go's
 * profiler stops there too (or, with the M's curg at hand, which a
 * sample does not have, jumps to the goroutine's stack).
 */
#include "symbol-priv.h"
#include <string.h>

static const char *const exact_roots[] = {
	"_start", "__start", "_dl_start_user",
	"clone", "__clone", "clone3", "__clone3", "start_thread",
	"ret_from_fork", "ret_from_fork_asm",
};

static const char *const go_roots[] = {	/* prefixes: ".abi0" may follow */
	"runtime.goexit", "runtime.mstart", "runtime.clone", "runtime.rt0_go", "_rt0_amd64_linux",
	"_rt0_amd64",
};

bool prof_sym_is_thread_root(const char *func)
{
	char plain[64];

	if (strchr(func, '@') && strlen(func) < sizeof(plain)) {	/* clone3@@GLIBC_2.34 */
		memcpy(plain, func, strcspn(func, "@"));
		plain[strcspn(func, "@")] = '\0';
		func = plain;
	}
	for (size_t i = 0; i < sizeof(exact_roots) / sizeof(exact_roots[0]); i++)
		if (!strcmp(func, exact_roots[i]))
			return true;
	for (size_t i = 0; i < sizeof(go_roots) / sizeof(go_roots[0]); i++) {
		size_t n = strlen(go_roots[i]);
		if (!strncmp(func, go_roots[i], n) && (!func[n] || !strcmp(func + n, ".abi0")))
			return true;
	}
	return false;
}

bool prof_elf_vaddr_is_root(struct prof_elf *e, uint64_t vaddr)
{
	const char *name = prof_elf_symbol_name(e, vaddr);

	return (name && prof_sym_is_thread_root(name)) || prof_elf_vaddr_ends_go_stack(e, vaddr);
}
