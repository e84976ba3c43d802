/*
 * inline - a hot function that only exists inlined.
 * Truth: ~90% of samples are in inline_hot (always_inline, no out-of-line
 * copy) inlined into the noinline outer_caller; ~10% in outer_caller's own
 * loop body.  DWARF describes inline_hot as DW_TAG_inlined_subroutine, so
 * a profiler with inline support shows main;outer_caller;inline_hot.
 * Usage: inline [SECONDS=2]
 */
#include "wl.h"

volatile unsigned long wl_sink;

static inline __attribute__((always_inline)) void inline_hot(unsigned long n)
{
	WL_BURN(n, 0x1411e);
}

WL_NOINLINE void outer_caller(unsigned long n)
{
	inline_hot(9 * n);
	WL_BURN(n, 0x0c);	/* outer_caller's own work */
}

int main(int argc, char **argv)
{
	double secs = wl_seconds_arg(argc, argv, 1, 2.0);
	double end = wl_cpu_now() + secs;
	unsigned long rounds = 0;

	while (wl_cpu_now() < end) {
		outer_caller(100UL * wl_round_permille());
		rounds++;
	}
	printf("inline: %lu rounds\n", rounds);
	return 0;
}
