/*
 * heap.c - the planted heap workload of `prof record --heap`'s tests and
 * of scripts/bench/heap.sh.  Three functions with known allocation
 * behaviour, and the truth printed at the end:
 *   leak_planted   4096 blocks of 1 KiB, never freed (a 4 MiB leak);
 *   temp_planted   PAIRS malloc(64)/free pairs, nothing kept;
 *   peak_planted   64 blocks of 1 MiB held together, then freed: the heap
 *                  is largest while they live (64 MiB + the 4 MiB leak).
 * Lines "truth FUNCTION allocs=N bytes=B live=L peak=P" (bytes) follow.
 *
 *   heap [PAIRS=200000] [WAITFILE|-] [phases|realloc|aligned|realloc+aligned]
 * With WAITFILE, prints "heap: ready pid=N" and waits until the file
 * exists before allocating (tests attach with -p meanwhile).
 * With phases (the leak view and snapshot tests), the phases are apart
 * and marked, and one more function allocates last:
 *   young_planted  256 blocks of 4 KiB, kept (live at the end, young);
 * "phase NAME t=NS" lines give CLOCK_MONOTONIC (the clock of prof's
 * samples) at a quiet moment between two phases: after_leak, mid_peak
 * (the 64 blocks live), after_peak.  Every allocation of the phases
 * before a mark is earlier than it, every one after is later.
 * With realloc (the attached tests), last:
 *   realloc_planted  PAIRS times realloc(NULL, 64) (glibc's jumps to its
 *                    malloc: one allocation, not two), realloc to 256
 *                    bytes (a free and an allocation), free.
 * With aligned (or realloc+aligned: both), last, each keeping ALIGN_N
 * blocks of 1 KiB (a 1 MiB leak per function):
 *   pmalign_planted      posix_memalign into a local (the usual call),
 *                        and ALIGN_N more of 1 KiB, each freed at once;
 *   pmalign_far_planted  posix_memalign into a static array: the
 *                        pointer is stored off the caller's stack;
 *   aligned_planted, memalign_planted, valloc_planted, pvalloc_planted,
 *   reallocarray_planted one entry point each (glibc's reallocarray calls
 *                        realloc through its PLT: both modes see realloc).
 */
#include "wl.h"
#include <stdint.h>
#include <malloc.h>
#include <string.h>
#include <unistd.h>

volatile unsigned long wl_sink;
static void *volatile keep;	/* the compiler cannot drop a malloc/free pair */

#define LEAK_N 4096
#define LEAK_SIZE 1024
#define TEMP_SIZE 64
#define PEAK_N 64
#define PEAK_SIZE (1 << 20)
#define YOUNG_N 256
#define YOUNG_SIZE 4096
#define GROW_SIZE 256
#define ALIGN_N 1024
#define ALIGN_SIZE 1024

static int phases;
static void *volatile no_block;	/* realloc(NULL, n) stays a realloc */

/* Between two phases: a quiet moment, its time printed. */
static void mark(const char *name)
{
	struct timespec ts;

	if (!phases)
		return;
	usleep(20000);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	printf("phase %s t=%lld\n", name, (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
	usleep(20000);
}

WL_NOINLINE static void leak_planted(void)
{
	for (int i = 0; i < LEAK_N; i++) {
		char *p = malloc(LEAK_SIZE);
		p[0] = (char)i;
		keep = p;
	}
}

WL_NOINLINE static void temp_planted(long pairs)
{
	for (long i = 0; i < pairs; i++) {
		char *p = malloc(TEMP_SIZE);
		p[0] = (char)i;
		keep = p;
		free(keep);
	}
}

WL_NOINLINE static void peak_planted(void)
{
	static char *blocks[PEAK_N];

	for (int i = 0; i < PEAK_N; i++) {
		blocks[i] = malloc(PEAK_SIZE);
		blocks[i][0] = (char)i;
	}
	mark("mid_peak");
	for (int i = 0; i < PEAK_N; i++)
		free(blocks[i]);
}

WL_NOINLINE static void young_planted(void)
{
	for (int i = 0; i < YOUNG_N; i++) {
		char *p = malloc(YOUNG_SIZE);
		p[0] = (char)i;
		keep = p;
	}
}

WL_NOINLINE static void realloc_planted(long pairs)
{
	for (long i = 0; i < pairs; i++) {
		char *p = realloc(no_block, TEMP_SIZE);
		p[0] = (char)i;
		p = realloc(p, GROW_SIZE);
		p[1] = (char)i;
		keep = p;
		free(keep);
	}
}

WL_NOINLINE static void pmalign_planted(void)
{
	void *p;

	for (int i = 0; i < ALIGN_N; i++) {
		if (posix_memalign(&p, 64, ALIGN_SIZE))
			abort();
		((char *)p)[0] = (char)i;
		keep = p;
	}
	for (int i = 0; i < ALIGN_N; i++) {
		if (posix_memalign(&p, 64, ALIGN_SIZE))
			abort();
		((char *)p)[0] = (char)i;
		keep = p;
		free(keep);
	}
}

WL_NOINLINE static void pmalign_far_planted(void)
{
	static void *far[ALIGN_N];

	for (int i = 0; i < ALIGN_N; i++) {
		if (posix_memalign(&far[i], 64, ALIGN_SIZE))
			abort();
		((char *)far[i])[0] = (char)i;
	}
}

/* kind: 'a' aligned_alloc, 'm' memalign, 'v' valloc, 'p' pvalloc,
 * 'r' reallocarray */
static void *aligned_one(int kind)
{
	switch (kind) {
	case 'a': return aligned_alloc(64, ALIGN_SIZE);
	case 'm': return memalign(64, ALIGN_SIZE);
	case 'v': return valloc(ALIGN_SIZE);
	case 'p': return pvalloc(ALIGN_SIZE);
	default: return reallocarray(no_block, 16, ALIGN_SIZE / 16);
	}
}

#define ALIGNED_FN(name, kind)					\
	WL_NOINLINE static void name(void)			\
	{							\
		for (int i = 0; i < ALIGN_N; i++) {		\
			char *p = aligned_one(kind);		\
			p[0] = (char)i;				\
			keep = p;				\
		}						\
	}
ALIGNED_FN(aligned_planted, 'a')
ALIGNED_FN(memalign_planted, 'm')
ALIGNED_FN(valloc_planted, 'v')
ALIGNED_FN(pvalloc_planted, 'p')
ALIGNED_FN(reallocarray_planted, 'r')

int main(int argc, char **argv)
{
	long pairs = argc > 1 ? atol(argv[1]) : 200000;

	phases = argc > 3 && !strcmp(argv[3], "phases");
	int reallocs = argc > 3 && strstr(argv[3], "realloc");
	int aligned = argc > 3 && strstr(argv[3], "aligned");
	if (argc > 2 && strcmp(argv[2], "-")) {
		printf("heap: ready pid=%d\n", (int)getpid());
		fflush(stdout);
		while (access(argv[2], F_OK) != 0)
			usleep(10000);
	}
	leak_planted();
	mark("after_leak");
	temp_planted(pairs);
	peak_planted();
	if (phases) {
		mark("after_peak");
		young_planted();
	}
	if (reallocs)
		realloc_planted(pairs);
	if (aligned) {
		pmalign_planted();
		pmalign_far_planted();
		aligned_planted();
		memalign_planted();
		valloc_planted();
		pvalloc_planted();
		reallocarray_planted();
	}
	printf("truth leak_planted allocs=%d bytes=%d live=%d peak=%d\n", LEAK_N,
	       LEAK_N * LEAK_SIZE, LEAK_N * LEAK_SIZE, LEAK_N * LEAK_SIZE);
	printf("truth temp_planted allocs=%ld bytes=%ld live=0 peak=0\n", pairs, pairs * TEMP_SIZE);
	printf("truth peak_planted allocs=%d bytes=%ld live=0 peak=%ld\n", PEAK_N,
	       (long)PEAK_N * PEAK_SIZE, (long)PEAK_N * PEAK_SIZE);
	if (reallocs)
		printf("truth realloc_planted allocs=%ld bytes=%ld live=0 peak=0\n", 2 * pairs,
		       pairs * (TEMP_SIZE + GROW_SIZE));
	if (aligned) {
		const char *fns[] = { "pmalign_far_planted", "aligned_planted", "memalign_planted",
				      "valloc_planted", "pvalloc_planted", "reallocarray_planted" };
		printf("truth pmalign_planted allocs=%d bytes=%d live=%d peak=0\n", 2 * ALIGN_N,
		       2 * ALIGN_N * ALIGN_SIZE, ALIGN_N * ALIGN_SIZE);
		for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)
			printf("truth %s allocs=%d bytes=%d live=%d peak=0\n", fns[i], ALIGN_N,
			       ALIGN_N * ALIGN_SIZE, ALIGN_N * ALIGN_SIZE);
	}
	if (phases)
		printf("truth young_planted allocs=%d bytes=%d live=%d peak=0\n", YOUNG_N,
		       YOUNG_N * YOUNG_SIZE, YOUNG_N * YOUNG_SIZE);
	return 0;
}
