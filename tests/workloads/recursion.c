/*
 * recursion - deep recursion, then a hot leaf.
 * Truth: almost every sample is in hot_leaf, called from DEPTH+1 nested
 * recurse() frames (default DEPTH 200 -> 201 recurse frames), under main,
 * __libc_start_call_main, __libc_start_main and _start.
 * recurse() has a real stack frame (a volatile local array) and does work
 * after the recursive call, so the call is neither a tail call nor a loop.
 * Usage: recursion [SECONDS=2] [DEPTH=200]
 */
#include "wl.h"

volatile unsigned long wl_sink;

WL_NOINLINE void hot_leaf(void) { WL_BURN(2000000UL, 0x1eaf); }

WL_NOINLINE unsigned long recurse(int depth)
{
	volatile unsigned char pad[48];
	unsigned long r;

	pad[depth % 48] = (unsigned char)depth;
	if (depth == 0)
		hot_leaf();
	else
		recurse(depth - 1);
	r = pad[depth % 48] + 1;	/* work after the call: no tail call */
	wl_sink += r;
	return r;
}

int main(int argc, char **argv)
{
	double secs = wl_seconds_arg(argc, argv, 1, 2.0);
	int depth = argc > 2 ? atoi(argv[2]) : 200;
	double end = wl_cpu_now() + secs;
	unsigned long calls = 0;

	if (depth < 0 || depth > 5000)
		depth = 200;
	while (wl_cpu_now() < end) {
		recurse(depth);
		calls++;
	}
	printf("recursion: depth %d, %lu descents\n", depth, calls);
	return 0;
}
