/*
 * split.cpp - the C++ kind of the compatibility matrix (tests/t1200): the
 * known 60:30:10 split of split.c, in functions whose names only a
 * demangler gets right: a class template's member, a namespaced free
 * function and an overloaded operator.
 * Truth (self): compat::Engine<long>::alpha 60%, compat::beta 30%,
 * compat::Counter::operator() 10%.  Usage: split-cxx [CPU-SECONDS=2]
 */
#include <cstdio>
#include <cstdlib>
#include <ctime>

volatile unsigned long sink;

#define BURN(n, seed)                                                          \
	do {                                                                   \
		unsigned long x = (seed);                                      \
		for (unsigned long i = 0; i < (n); i++) {                      \
			x = x * 6364136223846793005UL + 1442695040888963407UL; \
			sink = x;                                              \
		}                                                              \
	} while (0)

namespace compat {
template <typename T> struct Engine {
	__attribute__((noinline)) void alpha(unsigned long n) { BURN(n, 0xa + sizeof(T)); }
};
__attribute__((noinline)) void beta(unsigned long n) { BURN(n, 0xb); }
struct Counter {
	__attribute__((noinline)) void operator()(unsigned long n) { BURN(n, 0xc); }
};
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2.0;
	// a budget of CPU time, as ../wl.h's wl_cpu_now: a loaded machine
	// stretches the run instead of starving it of samples
	std::clock_t end = std::clock() + (std::clock_t)(secs * CLOCKS_PER_SEC);
	compat::Engine<long> engine;
	compat::Counter counter;
	// rounds of varying length (as wl_round_permille in ../wl.h): a
	// fixed-length round can alias with the sampling clock
	unsigned long state = 0x9e3779b97f4a7c15UL;
	while (std::clock() < end) {
		state = state * 6364136223846793005UL + 1442695040888963407UL;
		unsigned long unit = 100 * (500 + (state >> 33) % 1000);
		engine.alpha(6 * unit);
		compat::beta(3 * unit);
		counter(unit);
	}
	std::printf("split-cxx done\n");
	return 0;
}
