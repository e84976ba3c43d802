/*
 * stripped - built, then `strip --strip-all`ed into bin/stripped: no
 * .symtab, no .debug_*, only .dynsym and .eh_frame remain.
 * Truth: ~2/3 of samples in stripped_exported_spin, which stays named
 * because it is exported to .dynsym (--export-dynamic-symbol); ~1/3 in
 * the static hidden_spin, which has no name left anywhere, so a profiler
 * must show it as "stripped+0xOFFSET".  Unwinding still works via .eh_frame.
 * bin/stripped-debug is the same code unstripped, for comparison.
 * Usage: stripped [SECONDS=2]
 */
#include "wl.h"

volatile unsigned long wl_sink;

WL_NOINLINE void stripped_exported_spin(unsigned long n) { WL_BURN(n, 0x5e1); }
WL_NOINLINE static void hidden_spin(unsigned long n) { WL_BURN(n, 0x41d); }

int main(int argc, char **argv)
{
	double secs = wl_seconds_arg(argc, argv, 1, 2.0);
	double end = wl_cpu_now() + secs;
	unsigned long rounds = 0;

	while (wl_cpu_now() < end) {
		unsigned long unit = 100UL * wl_round_permille();

		stripped_exported_spin(2 * unit);
		hidden_spin(unit);
		rounds++;
	}
	printf("stripped: %lu rounds\n", rounds);
	return 0;
}
