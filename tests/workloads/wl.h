/*
 * wl.h - tiny helpers shared by the test workloads: a CPU-time clock, an
 * argument parser for "seconds" arguments, and a burn loop that the compiler
 * cannot delete.  Everything is static inline so each workload stays one
 * self-contained translation unit; the functions that must show up in
 * profiles are defined (noinline) in the workloads themselves, never here.
 */
#ifndef WL_H
#define WL_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* noclone keeps gcc from making .constprop/.isra copies with other names. */
#if defined(__clang__)
#define WL_NOINLINE __attribute__((noinline))
#else
#define WL_NOINLINE __attribute__((noinline, noclone))
#endif

/* Sink for every burn loop: a volatile store per iteration keeps the loop. */
extern volatile unsigned long wl_sink;

/*
 * Seconds of CPU time the whole process has used.  Workloads run for a
 * CPU-time budget, not a wall-clock one: cpu-clock samples follow CPU
 * time, so a machine busy with other work stretches the run instead of
 * starving it of samples (on a loaded machine a 2 s wall-clock split got
 * 69 samples and missed its 6:3:1 split).
 */
static inline double wl_cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* CLOCK_MONOTONIC seconds, the clock of perf's sample times: for a
 * workload whose phases are compared with the samples' times. */
static inline double wl_wall_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* argv[i] as seconds (a double > 0), or the default when absent/bad. */
static inline double wl_seconds_arg(int argc, char **argv, int i, double dflt)
{
	double v;

	if (argc <= i)
		return dflt;
	v = strtod(argv[i], NULL);
	return v > 0 ? v : dflt;
}

/*
 * A fixed-seed pseudo-random factor in [500, 1500) per mille, drawn once a
 * round and applied to every function of the round.  Rounds that all take
 * the same time lock onto the sampling clock and skew the split (1.11 ms
 * rounds of split.c under a 901 Hz clock gave spin_b 22-34% instead of
 * 30%); rounds of varying length leave no period to alias with, and the
 * split within each round stays exact.  Per thread, so threads do not race.
 */
static inline unsigned long wl_round_permille(void)
{
	static __thread unsigned long state = 0x9e3779b97f4a7c15UL;

	state = state * 6364136223846793005UL + 1442695040888963407UL;
	return 500 + (state >> 33) % 1000;
}

/*
 * One LCG step per iteration with a volatile store: the same amount of work
 * per iteration everywhere, so iteration counts translate into CPU time.
 * `seed` differs per caller so identical-code folding cannot merge callers.
 */
#define WL_BURN(iters, seed)                                              \
	do {                                                              \
		unsigned long wl_x_ = (seed);                             \
		for (unsigned long wl_i_ = 0; wl_i_ < (iters); wl_i_++) { \
			wl_x_ = wl_x_ * 6364136223846793005UL +           \
				1442695040888963407UL;                    \
			wl_sink = wl_x_;                                  \
		}                                                         \
	} while (0)

#endif
