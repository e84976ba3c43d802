/*
 * unwind.c - unit tests for the unwinders on real code: the test captures
 * its own registers and stack deep inside noinline functions built without
 * frame pointers (-O2 on x86_64), unwinds the copy with libdw and
 * libunwind, symbolizes the pcs and checks the call chain, a 150-deep
 * recursion, unwinding through libc (qsort -> comparator), a sample in a
 * function's epilogue after `pop %rbp` (GCC's CFI still says rbp is saved,
 * in a slot now below sp: the cached-rule path keeps rbp and goes on;
 * libdw's general walk still stops there), robustness on garbage stacks, and prints the
 * measured cost per sample.
 */
#include "tap.h"
#include "capture.h"
#include "prof/replay.h"
#include "prof/unwind.h"
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define NOINL __attribute__((noinline, noclone, optimize("omit-frame-pointer")))
#define BARRIER() __asm__ volatile("" ::: "memory")

static struct capture cap;
static volatile int sink;

NOINL void leaf_capture(struct capture *c)
{
	CAPTURE(c);
	BARRIER();
}

NOINL int chain_c(struct capture *c, int x)
{
	leaf_capture(c);
	sink = x;
	return x + 1;
}

/* CFA from rbp: a frame-pointer function and a dynamically sized frame */
__attribute__((noinline, noclone, optimize("no-omit-frame-pointer"))) int fp_frame(struct capture *c, int x)
{
	int r = chain_c(c, x);
	sink = r;
	return r + 2;
}

NOINL int vla_frame(struct capture *c, int x)
{
	volatile char buf[(x & 7) + 16];
	buf[0] = (char)x;
	int r = fp_frame(c, x + buf[0]);
	sink = r;
	return r;
}

NOINL int chain_b(struct capture *c, int x)
{
	int r = vla_frame(c, x * 2);
	sink = r;
	return r * 3;
}

NOINL int chain_a(struct capture *c, int x)
{
	int r = chain_b(c, x + 5);
	sink = r;
	return r - 1;
}

NOINL int recurse(struct capture *c, int depth)
{
	int r = depth == 0 ? (leaf_capture(c), 0) : recurse(c, depth - 1);
	sink = depth;
	return r + 1;
}

/* A libc function's real address (sanitizers interpose many libc names). */
static void *libc_sym(const char *name)
{
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	void *p = libc ? dlsym(libc, name) : NULL;

	if (libc)
		dlclose(libc);	/* NOLOAD only took a reference; libc stays */
	return p;
}

static int cmp_calls;
NOINL int cmp_capture(const void *a, const void *b)
{
	if (cmp_calls++ == 3)
		leaf_capture(&cap);
	return *(const int *)a - *(const int *)b;
}

/* Unwinds cap with the backend and symbolizes; names[i] = innermost-first function names. */
struct unwound {
	uint64_t pcs[PROF_MAX_FRAMES];
	struct prof_unwind_result res;
	const char *names[PROF_MAX_FRAMES * 2];
	const char *modules[PROF_MAX_FRAMES * 2];
	const char *files[PROF_MAX_FRAMES * 2];
	size_t nnames;
};

static struct prof_profile prof;
static struct prof_symbolizer *sym;
static struct prof_addrspace *self_as;

static void unwind_and_symbolize(enum prof_unwinder_kind kind, struct unwound *u)
{
	struct prof_unwinder *uw = prof_unwinder_new(kind);
	struct prof_ustack st = { cap.stack, cap.size };

	prof_unwind(uw, self_as, getpid(), &cap.regs, &st, u->pcs, PROF_MAX_FRAMES, &u->res);
	u->nnames = 0;
	for (size_t i = 0; i < u->res.n; i++) {
		uint32_t ids[16];
		size_t n = prof_symbolize_user(sym, self_as, u->pcs[i], i > 0, ids, 16);
		for (size_t j = 0; j < n && u->nnames < ARRAY_SIZE(u->names); j++) {
			const struct prof_frame *f = &prof.frames.v[ids[j]];
			u->files[u->nnames] = prof_str(&prof, f->file);
			u->modules[u->nnames] =
				f->module == PROF_NONE ? "" : prof_str(&prof, prof.modules.v[f->module].path);
			u->names[u->nnames++] = prof_str(&prof, f->func);
		}
	}
	prof_unwinder_free(uw);
}

static void dump(const struct unwound *u)
{
	for (size_t i = 0; i < u->nnames; i++)
		printf("#   %2zu %s (%s)\n", i, u->names[i], u->modules[i]);
	if (u->res.stop)
		printf("#   stop: %s\n", u->res.stop);
}

/* Index of name in u->names at or after from, or -1. */
static long find_name(const struct unwound *u, const char *name, size_t from)
{
	for (size_t i = from; i < u->nnames; i++)
		if (!strcmp(u->names[i], name))
			return (long)i;
	return -1;
}

static bool in_order(const struct unwound *u, const char *const *want, size_t n)
{
	long at = 0;

	for (size_t i = 0; i < n; i++) {
		at = find_name(u, want[i], (size_t)at);
		if (at < 0)
			return false;
	}
	return true;
}

static NOINL void test_chain(enum prof_unwinder_kind kind, const char *label)
{
	static struct unwound u;
	static const char *const want[] = { "leaf_capture", "chain_c", "fp_frame", "vla_frame",
					    "chain_b", "chain_a", "test_chain", "main" };

	memset(&cap, 0, sizeof(cap));
	chain_a(&cap, 1);
	sink = 0;
	unwind_and_symbolize(kind, &u);
	ok(u.nnames > 0 && !strcmp(u.names[0], "leaf_capture"), "%s: leaf frame is leaf_capture", label);
	if (!ok(in_order(&u, want, ARRAY_SIZE(want)), "%s: leaf_capture..fp_frame..vla_frame..chain_a..main in order", label))
		dump(&u);
	ok(u.res.complete, "%s: unwind complete (%s)", label, u.res.stop ? u.res.stop : "ok");
	ok(find_name(&u, "__libc_start_call_main", 0) > find_name(&u, "main", 0),
	   "%s: libc start code is outer to main", label);
}

static NOINL void test_recursion(enum prof_unwinder_kind kind, const char *label)
{
	static struct unwound u;
	size_t depth = 0;

	memset(&cap, 0, sizeof(cap));
	recurse(&cap, 150);
	unwind_and_symbolize(kind, &u);
	for (size_t i = 0; i < u.nnames; i++)
		depth += !strcmp(u.names[i], "recurse");
	is_u64(depth, 151, "%s: 151 recurse frames with a %" PRIu64 "-byte stack copy", label, cap.size);
	ok(u.res.complete, "%s: 150-deep recursion unwinds completely (%s)", label,
	   u.res.stop ? u.res.stop : "ok");
}

static NOINL void test_qsort(enum prof_unwinder_kind kind, const char *label)
{
	static struct unwound u;
	int v[16];

	memset(&cap, 0, sizeof(cap));
	for (int i = 0; i < 16; i++)
		v[i] = (i * 7919) % 16;
	/* libc's qsort itself: sanitizers replace the qsort symbol */
	void (*libc_qsort)(void *, size_t, size_t, int (*)(const void *, const void *)) =
		(void (*)(void *, size_t, size_t, int (*)(const void *, const void *)))libc_sym("qsort");
	if (!libc_qsort)
		libc_qsort = qsort;
	cmp_calls = 0;
	libc_qsort(v, 16, sizeof(v[0]), cmp_capture);
	unwind_and_symbolize(kind, &u);
	long libc_at = -1;
	bool libc_line = false;
	for (size_t i = 0; i < u.nnames; i++)
		if (strstr(u.modules[i], "libc.so")) {
			if (libc_at < 0)
				libc_at = (long)i;
			libc_line |= *u.files[i] != '\0';
		}
	ok(u.nnames > 1 && !strcmp(u.names[1], "cmp_capture"), "%s: comparator frame under leaf", label);
	if (!ok(libc_at >= 2 && find_name(&u, "test_qsort", 2) > libc_at && find_name(&u, "main", 2) > 0,
		"%s: comparator <- libc (qsort) <- test_qsort <- main", label))
		dump(&u);
	ok(find_name(&u, "qsort_r", 0) > 0 || find_name(&u, "__qsort_r", 0) > 0,
	   "%s: libc frame symbolized as qsort_r", label);
	ok(libc_line, "%s: libc frames have file:line (libc6-dbg debug info)", label);
	ok(u.res.complete, "%s: unwind through libc complete (%s)", label,
	   u.res.stop ? u.res.stop : "ok");
}

/* A function as GCC ends it: the CFI keeps "rbp saved at CFA-16" after the
 * pop, so at epilogue_after_pop that slot is below sp. */
__asm__(".text\n"
	".globl epilogue_probe\n.type epilogue_probe, @function\n"
	"epilogue_probe:\n\t.cfi_startproc\n"
	"\tpush %rbp\n\t.cfi_def_cfa_offset 16\n\t.cfi_offset %rbp, -16\n"
	"\tmov $1, %ebp\n"
	"\tpop %rbp\n\t.cfi_def_cfa_offset 8\n"
	".globl epilogue_after_pop\nepilogue_after_pop:\n"
	"\tret\n\t.cfi_endproc\n"
	".size epilogue_probe, .-epilogue_probe\n");
extern char epilogue_after_pop[];

/* The chain captured in leaf_capture, as if leaf_capture had called
 * epilogue_probe and the sample hit its `ret`: the stack copy gets the
 * return address pushed in front, and rbp holds what the pop restored. */
static NOINL void test_epilogue(const char *label)
{
	static struct capture ep, saved;
	static struct unwound u;

	saved = cap;
	memset(&cap, 0, sizeof(cap));
	chain_a(&cap, 1);
	ep.regs = cap.regs;
	ep.regs.r[PERF_REG_X86_IP] = (uintptr_t)epilogue_after_pop;
	ep.regs.r[PERF_REG_X86_SP] = cap.regs.r[PERF_REG_X86_SP] - 8;
	memcpy(ep.stack, &cap.regs.r[PERF_REG_X86_IP], 8);
	memcpy(ep.stack + 8, cap.stack, MIN(cap.size, sizeof(ep.stack) - 8));
	ep.size = MIN(cap.size + 8, sizeof(ep.stack));
	cap = ep;
	unwind_and_symbolize(PROF_UNWIND_LIBDW, &u);
	cap = saved;
	if (!ok(u.res.n > 3 && find_name(&u, "chain_a", 0) > 0,
		"%s: a sample after an epilogue's pop %%rbp unwinds past it to chain_a", label))
		dump(&u);
	ok(u.res.complete, "%s: and completely (%s)", label, u.res.stop ? u.res.stop : "ok");
}

static void test_garbage(enum prof_unwinder_kind kind, const char *label)
{
	static uint8_t junk[4096];
	struct prof_user_regs regs = cap.regs;
	uint64_t pcs[64];
	struct prof_unwind_result res;
	struct prof_unwinder *uw = prof_unwinder_new(kind);
	unsigned seed = 42;

	for (int round = 0; round < 200; round++) {
		for (size_t i = 0; i < sizeof(junk); i++)
			junk[i] = (uint8_t)rand_r(&seed);
		/* plant pointers back into the copy, so walks chase loops */
		for (size_t i = 0; i < sizeof(junk) / 8; i += 3) {
			uint64_t p = regs.r[PERF_REG_X86_SP] + (rand_r(&seed) % sizeof(junk));
			memcpy(junk + i * 8, &p, 8);
		}
		regs.r[PERF_REG_X86_BP] = regs.r[PERF_REG_X86_SP] + (rand_r(&seed) % sizeof(junk));
		struct prof_ustack st = { junk, sizeof(junk) - (size_t)(rand_r(&seed) % 64) };
		prof_unwind(uw, self_as, getpid(), &regs, &st, pcs, 64, &res);
		if (res.n < 1 || res.n > 64)
			break;
	}
	ok(res.n >= 1 && res.n <= 64, "%s: 200 garbage stacks unwound within bounds", label);
	/* a frame-pointer cycle: bp -> bp */
	uint64_t loop[4] = { regs.r[PERF_REG_X86_SP], 0x1234, 0, 0 };
	regs.r[PERF_REG_X86_BP] = regs.r[PERF_REG_X86_SP];
	struct prof_ustack st = { (const uint8_t *)loop, sizeof(loop) };
	prof_unwind(uw, self_as, getpid(), &regs, &st, pcs, 64, &res);
	if (!ok(!res.complete && res.n <= 64, "%s: self-referencing frame is cut, not followed", label))
		printf("#   n=%zu stop=%s pcs[1]=%" PRIx64 "\n", res.n, res.stop ? res.stop : "-", res.n > 1 ? pcs[1] : 0);
	prof_unwinder_free(uw);
}

static void bench(enum prof_unwinder_kind kind, const char *label)
{
	static uint64_t pcs[PROF_MAX_FRAMES];
	struct prof_unwind_result res;
	struct prof_unwinder *uw = prof_unwinder_new(kind);
	struct prof_ustack st = { cap.stack, cap.size };
	const char *env = getenv("PROF_UNWIND_BENCH_ITERS");	/* for profiling the unwinders */
	const int iters = env ? atoi(env) : 3000;

	prof_unwind(uw, self_as, getpid(), &cap.regs, &st, pcs, PROF_MAX_FRAMES, &res);	/* warm */
	/* thread CPU time: wall time is meaningless on a loaded 2-vCPU box */
	struct timespec a, b;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	for (int i = 0; i < iters; i++)
		prof_unwind(uw, self_as, getpid(), &cap.regs, &st, pcs, PROF_MAX_FRAMES, &res);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	double us = ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / 1e3;
	printf("# %s: %.2f us/sample (thread CPU time) for a %zu-frame stack (%d samples, warm caches)\n",
	       label, us / iters, res.n, iters);
	ok(res.n >= 20, "%s: benchmark stack has %zu frames", label, res.n);
	if (!strcmp(label, "libdw")) {	/* symbolizing the same stack, warm cache */
		uint32_t ids[16];
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
		for (int i = 0; i < iters; i++)
			for (size_t j = 0; j < res.n; j++)
				prof_symbolize_user(sym, self_as, pcs[j], j > 0, ids, 16);
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
		us = ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / 1e3;
		printf("# symbolize: %.2f us/sample for the %zu pcs (cached)\n", us / iters, res.n);
	}
	prof_unwinder_free(uw);
}

/* The two CFI backends are independent implementations: same pcs expected. */
static void test_backends_agree(const char *what)
{
	static uint64_t a[PROF_MAX_FRAMES], b[PROF_MAX_FRAMES];
	struct prof_unwind_result ra, rb;
	struct prof_unwinder *dw = prof_unwinder_new(PROF_UNWIND_LIBDW);
	struct prof_unwinder *lu = prof_unwinder_new(PROF_UNWIND_LIBUNWIND);
	struct prof_ustack st = { cap.stack, cap.size };

	prof_unwind(dw, self_as, getpid(), &cap.regs, &st, a, PROF_MAX_FRAMES, &ra);
	prof_unwind(lu, self_as, getpid(), &cap.regs, &st, b, PROF_MAX_FRAMES, &rb);
	ok(ra.n == rb.n && !memcmp(a, b, ra.n * sizeof(a[0])) && ra.complete == rb.complete,
	   "%s: libdw and libunwind give the same %zu pcs", what, ra.n);
	/* a truncated copy: both stop early, never read past it */
	st.size = 200;
	prof_unwind(dw, self_as, getpid(), &cap.regs, &st, a, PROF_MAX_FRAMES, &ra);
	prof_unwind(lu, self_as, getpid(), &cap.regs, &st, b, PROF_MAX_FRAMES, &rb);
	ok(!ra.complete && !rb.complete && ra.n >= 1 && ra.n == rb.n,
	   "%s: 200-byte copy: both incomplete after %zu/%zu frames (%s)", what, ra.n, rb.n,
	   ra.stop ? ra.stop : "-");
	/* max bounds the output */
	prof_unwind(dw, self_as, getpid(), &cap.regs, &st, a, 3, &ra);
	ok(ra.n == 3 && !ra.complete, "%s: max=3 gives 3 frames, incomplete", what);
	prof_unwinder_free(dw);
	prof_unwinder_free(lu);
}

/* Mappings arriving one by one (as MMAP2 events do): the libdw state is
 * extended in place, and rebuilt when code is unmapped. */
static void test_incremental(void)
{
	static uint64_t a[PROF_MAX_FRAMES], b[PROF_MAX_FRAMES];
	struct prof_unwind_result ra, rb;
	struct prof_unwinder *dw = prof_unwinder_new(PROF_UNWIND_LIBDW);
	struct prof_ustack st = { cap.stack, cap.size };
	struct prof_addrspace *as = prof_addrspace_new(getpid());
	const struct prof_mapping *exe = prof_addrspace_find(self_as, (uintptr_t)&leaf_capture);
	const struct prof_mapping *libc = prof_addrspace_find(self_as, (uintptr_t)libc_sym("qsort"));

	prof_addrspace_map(as, exe->start, exe->end - exe->start, exe->pgoff, exe->path, PROT_EXEC);
	prof_unwind(dw, as, getpid(), &cap.regs, &st, a, PROF_MAX_FRAMES, &ra);
	ok(!ra.complete && ra.n >= 5, "only the executable mapped: %zu frames, incomplete (%s)", ra.n,
	   ra.stop ? ra.stop : "-");
	for (size_t i = 0; i < self_as->maps.n; i++) {
		const struct prof_mapping *m = &self_as->maps.v[i];
		if (m->start != exe->start)
			prof_addrspace_map(as, m->start, m->end - m->start, m->pgoff, m->path, PROT_EXEC);
	}
	prof_unwind(dw, as, getpid(), &cap.regs, &st, a, PROF_MAX_FRAMES, &ra);
	prof_unwind(dw, self_as, getpid(), &cap.regs, &st, b, PROF_MAX_FRAMES, &rb);
	ok(ra.complete && ra.n == rb.n && !memcmp(a, b, ra.n * sizeof(a[0])),
	   "libraries added later: extended state unwinds completely (%zu frames)", ra.n);
	uint64_t gen = as->generation;
	prof_addrspace_map(as, 0x1000, 0x1000, 0, "//anon", PROT_READ);
	is_u64(as->generation, gen, "a data mapping touching no code keeps the generation");
	if (libc) {
		prof_addrspace_map(as, libc->start, libc->end - libc->start, 0, "//anon", PROT_READ);
		prof_unwind(dw, as, getpid(), &cap.regs, &st, a, PROF_MAX_FRAMES, &ra);
		ok(!ra.complete, "libc unmapped: rebuilt state no longer reaches _start (%zu frames)", ra.n);
	}
	prof_addrspace_free(as);
	prof_unwinder_free(dw);
}

static int open_file_fds(void);

/* A new address space of binaries already known (a new process of the same
 * programs): its rules come from the binaries' shared cache, so its first
 * unwind opens nothing, where a Dwfl per address space reopened (dup'd)
 * every module's file, and gives the same pcs. */
static void test_shared_binaries(void)
{
	static uint64_t a[PROF_MAX_FRAMES], b[PROF_MAX_FRAMES];
	struct prof_unwind_result ra, rb;
	struct prof_unwinder *dw = prof_unwinder_new(PROF_UNWIND_LIBDW);
	struct prof_ustack st = { cap.stack, cap.size };
	struct prof_addrspace *as = prof_addrspace_new(getpid());

	prof_unwind(dw, self_as, getpid(), &cap.regs, &st, a, PROF_MAX_FRAMES, &ra);
	prof_addrspace_load_proc(as);
	int fds = open_file_fds();
	prof_unwind(dw, as, getpid(), &cap.regs, &st, b, PROF_MAX_FRAMES, &rb);
	is_u64((uint64_t)open_file_fds(), (uint64_t)fds,
	       "a new address space of known binaries: its first unwind opens no file");
	ok(rb.complete && ra.n == rb.n && !memcmp(a, b, ra.n * sizeof(a[0])),
	   "a new address space of known binaries: the same %zu pcs", rb.n);
	prof_addrspace_free(as);
	prof_unwinder_free(dw);
}

static void test_parse(void)
{
	enum prof_unwinder_kind k;

	ok(prof_unwinder_parse("libdw", &k) == 0 && k == PROF_UNWIND_LIBDW, "parse libdw");
	ok(prof_unwinder_parse("libunwind", &k) == 0 && k == PROF_UNWIND_LIBUNWIND, "parse libunwind");
	ok(prof_unwinder_parse("fp", &k) == 0 && k == PROF_UNWIND_FP, "parse fp");
	ok(prof_unwinder_parse("gdb", &k) == -EINVAL, "unknown unwinder rejected");
}

/* Descriptors of regular files (binaries, debug files, the vdso memfd);
 * libunwind keeps an internal pipe of its own. */
static int open_file_fds(void)
{
	int n = 0;
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	struct stat st;

	while (d && (de = readdir(d)))
		if (fstatat(dirfd(d), de->d_name, &st, 0) == 0 && S_ISREG(st.st_mode))
			n++;
	if (d)
		closedir(d);
	return n;
}

int main(void)
{
	int fds_before = open_file_fds();
	static const struct { enum prof_unwinder_kind kind; const char *label; } backends[] = {
		{ PROF_UNWIND_LIBDW, "libdw" }, { PROF_UNWIND_LIBUNWIND, "libunwind" },
	};

	prof_profile_init(&prof);
	sym = prof_symbolizer_new(&prof);
	self_as = prof_addrspace_new(getpid());
	if (prof_addrspace_load_proc(self_as) < 0)
		return printf("1..0 # SKIP cannot read /proc/self/maps\n"), 0;
	test_parse();
	for (size_t b = 0; b < ARRAY_SIZE(backends); b++) {
		test_chain(backends[b].kind, backends[b].label);
		test_recursion(backends[b].kind, backends[b].label);
		test_qsort(backends[b].kind, backends[b].label);
	}
	test_epilogue("libdw");
	test_backends_agree("qsort");
	/* the same cross-checks with libdw's general unwinder instead of the
	 * cached-rule fast path */
	setenv("PROF_UNWIND_NO_FAST_PATH", "1", 1);
	test_backends_agree("qsort, libdw general path");
	memset(&cap, 0, sizeof(cap));
	chain_a(&cap, 1);
	test_backends_agree("chain, libdw general path");
	unsetenv("PROF_UNWIND_NO_FAST_PATH");
	test_backends_agree("chain");
	test_incremental();
	test_shared_binaries();
	memset(&cap, 0, sizeof(cap));
	recurse(&cap, 20);
	test_backends_agree("recursion");
	for (size_t b = 0; b < ARRAY_SIZE(backends); b++)
		bench(backends[b].kind, backends[b].label);
	setenv("PROF_UNWIND_NO_FAST_PATH", "1", 1);
	bench(PROF_UNWIND_LIBDW, "libdw general path (no rule cache)");
	unsetenv("PROF_UNWIND_NO_FAST_PATH");
	for (size_t b = 0; b < ARRAY_SIZE(backends); b++)
		test_garbage(backends[b].kind, backends[b].label);
	test_garbage(PROF_UNWIND_FP, "fp");
	prof_addrspace_free(self_as);
	prof_symbolizer_free(sym);
	prof_profile_free(&prof);
	prof_elf_cache_free();
	is_u64(open_file_fds(), fds_before, "every file descriptor closed after freeing everything");
	return done_testing();
}
