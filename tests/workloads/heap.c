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
 *   heap [PAIRS=200000] [WAITFILE]
 * With WAITFILE, prints "heap: ready pid=N" and waits until the file
 * exists before allocating (tests attach with -p meanwhile).
 */
#include "wl.h"
#include <stdint.h>
#include <string.h>
#include <unistd.h>

volatile unsigned long wl_sink;
static void *volatile keep;	/* the compiler cannot drop a malloc/free pair */

#define LEAK_N 4096
#define LEAK_SIZE 1024
#define TEMP_SIZE 64
#define PEAK_N 64
#define PEAK_SIZE (1 << 20)

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
	for (int i = 0; i < PEAK_N; i++)
		free(blocks[i]);
}

int main(int argc, char **argv)
{
	long pairs = argc > 1 ? atol(argv[1]) : 200000;

	if (argc > 2) {
		printf("heap: ready pid=%d\n", (int)getpid());
		fflush(stdout);
		while (access(argv[2], F_OK) != 0)
			usleep(10000);
	}
	leak_planted();
	temp_planted(pairs);
	peak_planted();
	printf("truth leak_planted allocs=%d bytes=%d live=%d peak=%d\n", LEAK_N,
	       LEAK_N * LEAK_SIZE, LEAK_N * LEAK_SIZE, LEAK_N * LEAK_SIZE);
	printf("truth temp_planted allocs=%ld bytes=%ld live=0 peak=0\n", pairs, pairs * TEMP_SIZE);
	printf("truth peak_planted allocs=%d bytes=%ld live=0 peak=%ld\n", PEAK_N,
	       (long)PEAK_N * PEAK_SIZE, (long)PEAK_N * PEAK_SIZE);
	return 0;
}
