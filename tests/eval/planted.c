/*
 * planted.c - programs with planted changes of known nature and size, for
 * evaluating `prof diff` and `prof crosscheck` (tests/eval/README.md,
 * scripts/eval-crosscheck.sh, tests/t60*-*.sh).
 *
 *   planted cpu PCT [SCALE]     hot() does PCT% more ALU work (0 = A/A)
 *   planted memhide 0|1 [SCALE] chase() walks a dependent pointer chain over
 *                               a buffer 4x the LLC; variant 1 adds ALU work
 *                               that hides under the cache misses
 *                               (instructions up, time flat)
 *   planted layout 0|1 [SCALE]  walk() runs the same instruction stream;
 *                               variant 1 uses a cache-hostile stride
 *                               (instructions flat, time up)
 *
 * Every mode also runs steady(), a fixed amount of ALU work that never
 * changes.  The amount of work is FIXED for a given (mode, variant, SCALE),
 * so absolute time per function is comparable across runs.  SCALE (default
 * 1) multiplies the iteration counts; callgrind runs use a small SCALE.
 * The variant is a run-time argument on purpose: "base build" and "head
 * build" are the same binary, so function names and layout are identical
 * and only the planted change differs.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))
#define BUF_BYTES (128u << 20)		/* 4x the 32 MiB LLC of the eval machine */

static volatile uint64_t sink;

/* A serial multiply-add chain: one dependent op per step, so time is
 * proportional to iterations.  A macro, not a function, so each caller's
 * samples stay in that caller (no shared leaf, no inlined frame). */
#define ALU_CHAIN(iters, x0) ({						\
	uint64_t x_ = (x0);						\
	for (uint64_t i_ = 0; i_ < (iters); i_++)			\
		x_ = x_ * 6364136223846793005ull + 1442695040888963407ull; \
	x_; })

static NOINLINE void steady(double scale)
{
	sink += ALU_CHAIN((uint64_t)(200e6 * scale), 7);
}

static NOINLINE void hot(double scale, unsigned pct)
{
	sink += ALU_CHAIN((uint64_t)(400e6 * scale * (100 + pct) / 100.0), 3);
}

/* A single cycle through all slots with a stride of P slots: every step is
 * on a new page, and the address depends on the loaded value, so neither
 * prefetchers nor out-of-order execution can run ahead. */
static uint64_t *make_chain(size_t n)
{
	uint64_t *buf = malloc(n * sizeof(*buf));
	const size_t stride = 1048573;	/* prime: gcd(stride, n) == 1 for n = 2^k */

	if (!buf) {
		perror("malloc");
		exit(1);
	}
	for (size_t i = 0; i < n; i++)
		buf[i] = (i + stride) & (n - 1);
	return buf;
}

/* extra > 0 adds `extra` multiply-adds per step on an accumulator that does
 * not feed the next address: they execute in the shadow of the miss. */
static NOINLINE uint64_t chase(const uint64_t *buf, uint64_t steps, unsigned extra)
{
	uint64_t at = 0, acc = 1;

	for (uint64_t i = 0; i < steps; i++) {
		at = buf[at];
		for (unsigned k = 0; k < extra; k++)
			acc = acc * 2862933555777941757ull + at;
	}
	return at + acc;
}

/* Same instructions for any stride; stride 1 streams through cache lines,
 * a large odd stride touches a new line (and page) every access. */
static NOINLINE uint64_t walk(const uint64_t *buf, size_t mask, uint64_t steps, uint64_t stride)
{
	uint64_t sum = 0;

	for (uint64_t i = 0; i < steps; i++)
		sum += buf[(i * stride) & mask];
	return sum;
}

static void usage(void)
{
	fprintf(stderr, "usage: planted cpu PCT | memhide 0|1 | layout 0|1 [SCALE]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	if (argc < 3)
		usage();
	const char *mode = argv[1];
	unsigned variant = (unsigned)strtoul(argv[2], NULL, 10);
	double scale = argc > 3 ? strtod(argv[3], NULL) : 1.0;
	size_t n = BUF_BYTES / sizeof(uint64_t);

	if (!(scale > 0))
		usage();
	steady(scale);
	if (!strcmp(mode, "cpu")) {
		hot(scale, variant);
	} else if (!strcmp(mode, "memhide")) {
		uint64_t *buf = make_chain(n);
		sink += chase(buf, (uint64_t)(3e6 * scale), variant ? 8 : 0);
		free(buf);
	} else if (!strcmp(mode, "layout")) {
		uint64_t *buf = make_chain(n);
		sink += walk(buf, n - 1, (uint64_t)(30e6 * scale), variant ? 4099 : 1);
		free(buf);
	} else {
		usage();
	}
	return 0;
}
