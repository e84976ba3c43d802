/*
 * split - known time split between three functions.
 * Truth: spin_a 60%, spin_b 30%, spin_c 10% of the CPU samples (self).
 * Each round calls the three with iteration counts 6:3:1 through the same
 * burn loop (WL_BURN), so the split is set by the counts, not by timing;
 * rounds vary in length (wl_round_permille) so none aliases with the clock.
 * Usage: split [SECONDS=2]
 */
#include "wl.h"

volatile unsigned long wl_sink;

#define UNIT 100000UL	/* iterations per share point: ~0.1 ms */

WL_NOINLINE void spin_a(unsigned long n) { WL_BURN(n, 0xa); }
WL_NOINLINE void spin_b(unsigned long n) { WL_BURN(n, 0xb); }
WL_NOINLINE void spin_c(unsigned long n) { WL_BURN(n, 0xc); }

int main(int argc, char **argv)
{
	double secs = wl_seconds_arg(argc, argv, 1, 2.0);
	double end = wl_cpu_now() + secs;
	unsigned long rounds = 0;

	while (wl_cpu_now() < end) {
		unsigned long unit = UNIT * wl_round_permille() / 1000;

		spin_a(6 * unit);
		spin_b(3 * unit);
		spin_c(1 * unit);
		rounds++;
	}
	printf("split: %lu rounds (a:b:c = 6:3:1)\n", rounds);
	return 0;
}
