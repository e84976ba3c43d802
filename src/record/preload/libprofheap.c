/*
 * libprofheap.c - the allocation sampler that `prof record --heap`
 * preloads into a launched command (LD_PRELOAD).  It interposes the
 * allocator's entry points (malloc, calloc, realloc, free, posix_memalign,
 * aligned_alloc, memalign, valloc, pvalloc, and anonymous mmap/munmap), passes
 * every call on to the next definition (glibc, or jemalloc/tcmalloc when
 * the program uses them), and decides in-process which allocations to
 * sample, so an unsampled call costs a few instructions and no trap.
 *
 * Sampling is by bytes, as tcmalloc, jemalloc and Go do: each thread
 * counts down a number of bytes drawn from an exponential distribution of
 * mean PROF_HEAP_RATE (bytes; 1 = every allocation).  The allocation that
 * crosses zero is sampled; by memorylessness an allocation of s bytes is
 * sampled with probability 1 - exp(-s/rate), which the recorder inverts
 * into its weight.  A sampled allocation calls prof_heap_alloc(ptr, size,
 * kind), a function that does nothing: prof has a uprobe perf event on it
 * that takes the user registers (the arguments) and the user stack, which
 * prof's DWARF unwinder turns into the allocation's stack.
 *
 * Sampled pointers are kept in a striped hash, so that their free (or
 * realloc, or munmap) calls prof_heap_free(ptr), also probed.  Every free
 * looks at one bit of a small bitmap indexed by the pointer's hash first:
 * clear means "no sampled block live here", and the free goes straight on.
 *
 * A sampled call that leaves the recorder too far behind waits for it
 * (flow.h), so that a loaded machine slows the program rather than drop
 * its records.
 *
 * Design notes / invariants:
 *  - This file is built alone (-fPIC -shared) and embedded in ./prof; it
 *    uses nothing of prof's and allocates nothing through malloc (its
 *    tables come from mmap), so it never recurses into itself.
 *  - dlsym() may allocate before the real functions are known: those
 *    calls are served from a static bootstrap arena and never freed.
 *  - The probes fire before the real free (the kernel sees the free of a
 *    pointer before the allocator can hand it out again) and after the
 *    real allocation.
 *  - mmap/munmap calls made by the allocator itself (jemalloc's and
 *    tcmalloc's arenas) are not counted: a per-thread depth says we are
 *    inside an allocator call.
 */
#include "flow.h"
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))
#define TLS __thread __attribute__((tls_model("initial-exec")))

/* kinds passed to prof_heap_alloc (the recorder reads them from rdx) */
enum { KIND_MALLOC = 0, KIND_MMAP = 1 };

/* --- the probes: prof's uprobes sit on their first instruction ---------- */

#if defined(__x86_64__)
/*
 * A uprobe traps (int3) and then runs the instruction it replaced: a jmp
 * (and call, jcc, push) the kernel emulates in the trap, anything else it
 * copies out of line and single-steps, a second trap.  An empty C function
 * is a lone `ret`, single-stepped: on a 2-vCPU VM a sampled allocation and
 * its free then cost the program about 47 us, 3.0 s for 63,000 samples.
 * So each probe's first instruction is a jmp to the next one (emulated
 * since uprobes exist).  The arguments are in rdi, rsi, rdx as the
 * recorder reads them; the default CFI (return address on top) is right
 * at both instructions.
 */
#define PROBE_FUNC(name)                    \
	".globl " #name "\n"                 \
	".type " #name ", @function\n"       \
	#name ":\n"                          \
	".cfi_startproc\n"                   \
	"jmp 1f\n"                           \
	"1: ret\n"                           \
	".cfi_endproc\n"                     \
	".size " #name ", .-" #name "\n"
__asm__(".text\n" PROBE_FUNC(prof_heap_alloc) PROBE_FUNC(prof_heap_free));
EXPORT void prof_heap_alloc(void *ptr, size_t size, unsigned long kind);
EXPORT void prof_heap_free(void *ptr);
#else
EXPORT __attribute__((noinline, noipa)) void prof_heap_alloc(void *ptr, size_t size, unsigned long kind)
{
	__asm__ volatile("" : : "r"(ptr), "r"(size), "r"(kind) : "memory");
}

EXPORT __attribute__((noinline, noipa)) void prof_heap_free(void *ptr)
{
	__asm__ volatile("" : : "r"(ptr) : "memory");
}
#endif

/* --- the next definitions ------------------------------------------------- */

static void *(*real_malloc)(size_t);
static void (*real_free)(void *);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static int (*real_posix_memalign)(void **, size_t, size_t);
static void *(*real_aligned_alloc)(size_t, size_t);
static void *(*real_memalign)(size_t, size_t);
static void *(*real_valloc)(size_t);
static void *(*real_pvalloc)(size_t);
static void *(*real_mmap)(void *, size_t, int, int, int, off_t);
static int (*real_munmap)(void *, size_t);

static char boot[65536] __attribute__((aligned(64)));
static size_t boot_used;
static int resolving;

static void *boot_alloc(size_t n)
{
	size_t at = __atomic_fetch_add(&boot_used, (n + 63) & ~(size_t)63, __ATOMIC_RELAXED);

	return at + n <= sizeof(boot) ? boot + at : NULL;
}

static int is_boot(const void *p)
{
	return (const char *)p >= boot && (const char *)p < boot + sizeof(boot);
}

static uint64_t rate;		/* 0: not sampling (no PROF_HEAP_RATE) */
static uint64_t seed;

static void resolve(void)
{
	if (real_malloc || resolving)
		return;
	resolving = 1;
	real_free = dlsym(RTLD_NEXT, "free");
	real_calloc = dlsym(RTLD_NEXT, "calloc");
	real_realloc = dlsym(RTLD_NEXT, "realloc");
	real_posix_memalign = dlsym(RTLD_NEXT, "posix_memalign");
	real_aligned_alloc = dlsym(RTLD_NEXT, "aligned_alloc");
	real_memalign = dlsym(RTLD_NEXT, "memalign");
	real_valloc = dlsym(RTLD_NEXT, "valloc");
	real_pvalloc = dlsym(RTLD_NEXT, "pvalloc");
	real_mmap = dlsym(RTLD_NEXT, "mmap");
	real_munmap = dlsym(RTLD_NEXT, "munmap");
	const char *r = getenv("PROF_HEAP_RATE"), *s = getenv("PROF_HEAP_SEED");
	rate = r ? strtoull(r, NULL, 10) : 0;
	seed = s ? strtoull(s, NULL, 10) : 0;
	__atomic_store_n(&real_malloc, (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc"), __ATOMIC_RELEASE);
	resolving = 0;
}

/* --- keeping pace with the recorder (flow.h) ------------------------------------ */

static struct prof_heap_flow *flow;	/* NULL: no pacing */

/* Maps the recorder's flow page, once per exec (a fork shares it).  A
 * program that changed user cannot open it, and goes unpaced. */
static void open_flow(void)
{
	const char *path = getenv(PROF_HEAP_FLOW_ENV);
	long fd;
	void *p;

	if (!path || (fd = syscall(SYS_openat, AT_FDCWD, path, O_RDWR | O_CLOEXEC)) < 0)
		return;
	p = (void *)syscall(SYS_mmap, NULL, sizeof(struct prof_heap_flow), PROT_READ | PROT_WRITE, MAP_SHARED,
			    (int)fd, 0);
	syscall(SYS_close, fd);
	if (p != MAP_FAILED)
		flow = p;
}

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

/* How many calls up to number issued the pumps have not settled: none
 * when settled is past it already (a later call of another thread). */
static uint64_t ahead(const struct prof_heap_flow *f, int k, uint64_t issued)
{
	int64_t d = (int64_t)(issued - __atomic_load_n(&f->settled[k], __ATOMIC_ACQUIRE));

	return d > 0 ? (uint64_t)d : 0;
}

/* Whether the recorder is gone, or has not read for FLOW_IDLE_NS: then
 * pacing is off for every thread and process of the command. */
static int recorder_lost(struct prof_heap_flow *f, uint64_t idle_ns)
{
	pid_t pid = __atomic_load_n(&f->recorder, __ATOMIC_RELAXED);

	if (idle_ns <= FLOW_IDLE_NS && (pid <= 0 || syscall(SYS_kill, pid, 0) == 0 || errno == EPERM))
		return 0;
	__atomic_store_n(&f->budget[0], 0, __ATOMIC_RELAXED);
	__atomic_store_n(&f->budget[1], 0, __ATOMIC_RELAXED);
	__atomic_fetch_add(&f->gave_up, 1, __ATOMIC_RELAXED);
	return 1;
}

/* Sleeps until the recorder's pump is within half the budget of call
 * number issued (flow.h). */
static void wait_for_recorder(struct prof_heap_flow *f, int k, uint64_t issued)
{
	const struct timespec nap = { 0, 200000 };
	uint64_t start = now_ns(), moved = start, seen = __atomic_load_n(&f->settled[k], __ATOMIC_ACQUIRE);
	int saved = errno;

	for (unsigned n = 1;; n++) {
		nanosleep(&nap, NULL);
		uint64_t budget = __atomic_load_n(&f->budget[k], __ATOMIC_RELAXED), now = now_ns(), s;
		if (!budget || ahead(f, k, issued) <= budget / 2)
			break;
		if ((s = __atomic_load_n(&f->settled[k], __ATOMIC_ACQUIRE)) != seen) {
			seen = s;
			moved = now;
		}
		if (n % 512 == 0 && recorder_lost(f, now - moved))	/* every ~0.1 s */
			break;
	}
	__atomic_fetch_add(&f->waits, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&f->wait_ns, now_ns() - start, __ATOMIC_RELAXED);
	errno = saved;
}

/* After probe k's call: counted, and waited for when too far ahead. */
static void pace(int k)
{
	struct prof_heap_flow *f = flow;

	if (!f)
		return;
	uint64_t issued = __atomic_add_fetch(&f->issued[k], 1, __ATOMIC_RELEASE);
	uint64_t budget = __atomic_load_n(&f->budget[k], __ATOMIC_RELAXED);
	if (budget && ahead(f, k, issued) > budget)
		wait_for_recorder(f, k, issued);
}

__attribute__((constructor)) static void init(void)
{
	resolve();
	open_flow();
}

/* --- the sampled-pointer set ------------------------------------------------ */

/*
 * Every free asks "was this pointer sampled?" of a bitmap with one bit per
 * hash slot (the top FILTER_BITS bits of the pointer's hash): set while a
 * sampled block with that slot is live.  8 KiB, so that the unsampled
 * free's one load stays in the cache: a table of 32-bit counts instead
 * (256 KiB, one random line per free) missed on nearly every free of
 * redis-server, 0.3% of its CPU time.  The counts behind the bits are
 * touched only by sampled blocks and by the rare free whose bit is set.
 * A slot's top 6 bits are its stripe, so a bitmap word (64 slots) and its
 * counts change only under that stripe's lock.
 */
#define FILTER_BITS 16
#define NSTRIPES 64

static uint64_t filter[(1 << FILTER_BITS) / 64];	/* bit set: a sampled block may be live */
static uint32_t filter_live[1 << FILTER_BITS];		/* sampled blocks live per slot */

struct stripe {
	int lock;
	uint32_t used, live, cap;	/* used counts tombstones too */
	uintptr_t *keys;		/* 0: empty, 1: tombstone */
} __attribute__((aligned(64)));

static struct stripe stripes[NSTRIPES];

static uint64_t hash_ptr(uintptr_t p)
{
	return (uint64_t)(p >> 4) * 0x9e3779b97f4a7c15ULL;
}

/* The filter slot of a hash: its top bits, whose top 6 are the stripe. */
static uint32_t filter_slot(uint64_t h)
{
	return (uint32_t)(h >> (64 - FILTER_BITS));
}

/* Under the slot's stripe lock: one more (d 1) or one fewer (-1) live. */
static void filter_count(uint32_t slot, int d)
{
	uint64_t *w = &filter[slot / 64], bit = 1ULL << (slot % 64);

	filter_live[slot] += (uint32_t)d;
	if (d > 0 && filter_live[slot] == 1)
		__atomic_store_n(w, *w | bit, __ATOMIC_RELAXED);
	else if (d < 0 && filter_live[slot] == 0)
		__atomic_store_n(w, *w & ~bit, __ATOMIC_RELAXED);
}

static void lock(struct stripe *s)
{
	while (__atomic_exchange_n(&s->lock, 1, __ATOMIC_ACQUIRE))
		while (__atomic_load_n(&s->lock, __ATOMIC_RELAXED))
			__builtin_ia32_pause();
}

static void unlock(struct stripe *s)
{
	__atomic_store_n(&s->lock, 0, __ATOMIC_RELEASE);
}

static void *raw_mmap(size_t len)
{
	void *p = (void *)syscall(SYS_mmap, NULL, len, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

/* Rehashes s into a table of cap slots (live keys only); -1 without memory. */
static int rehash(struct stripe *s, uint32_t cap)
{
	uintptr_t *keys = raw_mmap(cap * sizeof(uintptr_t));

	if (!keys)
		return -1;
	for (uint32_t i = 0; i < s->cap; i++) {
		uintptr_t k = s->keys[i];
		if (k <= 1)
			continue;
		uint32_t j = (uint32_t)(hash_ptr(k) >> 32) & (cap - 1);
		while (keys[j])
			j = (j + 1) & (cap - 1);
		keys[j] = k;
	}
	if (s->keys)
		syscall(SYS_munmap, s->keys, s->cap * sizeof(uintptr_t));
	s->keys = keys;
	s->cap = cap;
	s->used = s->live;
	return 0;
}

/* Remembers a sampled pointer; 0, or -1 when it cannot (then it is not
 * reported either, so no free goes missing). */
static int set_add(uintptr_t p)
{
	uint64_t h = hash_ptr(p);
	struct stripe *s = &stripes[h >> 58];
	int ret = 0;

	lock(s);
	if ((s->used + 1) * 2 > s->cap &&
	    rehash(s, s->cap && (s->live + 1) * 4 > s->cap ? s->cap * 2 : (s->cap ? s->cap : 256)) < 0) {
		ret = -1;
	} else {
		uint32_t j = (uint32_t)(h >> 32) & (s->cap - 1);
		while (s->keys[j] > 1)
			j = (j + 1) & (s->cap - 1);
		if (!s->keys[j])
			s->used++;
		s->keys[j] = p;
		s->live++;
		filter_count(filter_slot(h), 1);
	}
	unlock(s);
	return ret;
}

/* Forgets p; 1 if it was sampled. */
static int set_take(uintptr_t p)
{
	uint64_t h = hash_ptr(p);
	uint32_t slot = filter_slot(h);
	struct stripe *s = &stripes[h >> 58];
	int found = 0;

	if (!(__atomic_load_n(&filter[slot / 64], __ATOMIC_RELAXED) >> (slot % 64) & 1))
		return 0;
	lock(s);
	if (s->cap) {
		uint32_t j = (uint32_t)(h >> 32) & (s->cap - 1);
		for (; s->keys[j]; j = (j + 1) & (s->cap - 1))
			if (s->keys[j] == p) {
				s->keys[j] = 1;
				s->live--;
				found = 1;
				filter_count(slot, -1);
				break;
			}
	}
	unlock(s);
	return found;
}

/* --- sampling ----------------------------------------------------------------- */

static TLS int64_t countdown;
static TLS uint64_t rng;
static TLS int depth;		/* > 0: inside an allocator call */

static double uniform01(void)
{
	if (!rng)
		rng = (seed ? seed : (uint64_t)time(NULL) ^ ((uint64_t)(uintptr_t)&rng << 16)) ^
		      ((uint64_t)syscall(SYS_gettid) * 0x2545f4914f6cdd1dULL) ^ 0x5851f42d4c957f2dULL;
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	/* 53 random bits in (0, 1] */
	return ((double)((rng * 0x2545f4914f6cdd1dULL) >> 11) + 1.0) / 9007199254740992.0;
}

static int64_t draw(void)
{
	double d = -log(uniform01()) * (double)rate;

	return d >= 9.0e18 ? INT64_MAX : (int64_t)d + 1;
}

static int should_sample(size_t size)
{
	if (rate <= 1)
		return rate == 1;
	if (!countdown)
		countdown = draw();
	countdown -= (int64_t)size;
	if (countdown > 0)
		return 0;
	countdown = draw();
	return 1;
}

static void note_alloc(void *p, size_t size, unsigned long kind)
{
	if (p && should_sample(size) && set_add((uintptr_t)p) == 0) {
		prof_heap_alloc(p, size, kind);
		pace(0);
	}
}

static void note_free(void *p)
{
	if (p && set_take((uintptr_t)p)) {
		prof_heap_free(p);
		pace(1);
	}
}

/* --- the interposed functions ------------------------------------------------------ */

/* After the next definition returned p (called with depth raised, so that
 * what it calls itself is not counted): p, noted. */
static void *noted(void *p, size_t size)
{
	depth--;
	if (!depth)
		note_alloc(p, size, KIND_MALLOC);
	return p;
}

EXPORT void *malloc(size_t n)
{
	if (!real_malloc) {
		resolve();
		if (!real_malloc)
			return boot_alloc(n);
	}
	depth++;
	return noted(real_malloc(n), n);
}

EXPORT void free(void *p)
{
	if (!p || is_boot(p))
		return;
	if (!depth)
		note_free(p);
	depth++;
	real_free(p);
	depth--;
}

EXPORT void *calloc(size_t n, size_t sz)
{
	if (!real_calloc) {
		resolve();
		if (!real_calloc) {	/* dlsym's own calloc: zeroed boot memory */
			if (sz && n > SIZE_MAX / sz)
				return NULL;
			return boot_alloc(n * sz);
		}
	}
	depth++;
	return noted(real_calloc(n, sz), n * sz);
}

EXPORT void *realloc(void *old, size_t n)
{
	if (is_boot(old)) {	/* move out of the arena; the old block stays */
		void *p = malloc(n);
		if (p)
			memcpy(p, old, n < (size_t)(boot + sizeof(boot) - (char *)old) ? n
					: (size_t)(boot + sizeof(boot) - (char *)old));
		return p;
	}
	if (!real_realloc)
		resolve();
	if (old && !depth)
		note_free(old);
	/* A failed realloc leaves old allocated but reported freed: an
	 * under-count of one block at most per failure. */
	depth++;
	return noted(real_realloc(old, n), n);
}

EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
	if (!real_posix_memalign)
		resolve();
	depth++;
	int ret = real_posix_memalign(out, align, n);
	depth--;
	if (!ret && !depth)
		note_alloc(*out, n, KIND_MALLOC);
	return ret;
}

EXPORT void *aligned_alloc(size_t align, size_t n)
{
	if (!real_aligned_alloc)
		resolve();
	depth++;
	return noted(real_aligned_alloc(align, n), n);
}

EXPORT void *memalign(size_t align, size_t n)
{
	if (!real_memalign)
		resolve();
	depth++;
	return noted(real_memalign(align, n), n);
}

EXPORT void *valloc(size_t n)
{
	if (!real_valloc)
		resolve();
	depth++;
	return noted(real_valloc(n), n);
}

/* The size asked, not the pages it is rounded up to, like valloc's. */
EXPORT void *pvalloc(size_t n)
{
	if (!real_pvalloc)
		resolve();
	if (!real_pvalloc) {	/* an allocator without it: whole pages from valloc, noted rounded */
		size_t page = (size_t)sysconf(_SC_PAGESIZE);
		return valloc(n ? (n + page - 1) & ~(page - 1) : page);
	}
	depth++;
	return noted(real_pvalloc(n), n);
}

EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	if (!real_mmap)
		resolve();
	void *p = real_mmap(addr, len, prot, flags, fd, off);
	if (!depth && p != MAP_FAILED && (flags & MAP_ANONYMOUS) && !(flags & MAP_FIXED))
		note_alloc(p, len, KIND_MMAP);
	return p;
}

EXPORT int munmap(void *addr, size_t len)
{
	if (!real_munmap)
		resolve();
	if (!depth)
		note_free(addr);
	return real_munmap(addr, len);
}
