/*
 * burn.c - a stand-in for a recorder's CPU and nothing else: one thread
 * that spins CPU_SECONDS of its own CPU time spread evenly over SECONDS
 * of wall time, in 1.25-ms slices on absolute deadlines, at the caller's
 * priority.  Beside a load that keeps every CPU busy
 * (scripts/bench/busy-host.sh), what it costs the load is what a
 * recorder's CPU alone would cost it: a recorder that costs more than a
 * burner of its own CPU pays for something else too (work in the
 * sampled threads' context: the sample's copy, the switch program).
 *
 *   burn SECONDS CPU_SECONDS
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define SLICE_S 0.00125

static double clock_s(clockid_t id)
{
	struct timespec t;

	clock_gettime(id, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static void spin(double seconds)
{
	double start = clock_s(CLOCK_THREAD_CPUTIME_ID);

	while (clock_s(CLOCK_THREAD_CPUTIME_ID) - start < seconds)
		;
}

/* Sleeps until the CLOCK_MONOTONIC time at (never returns early). */
static void sleep_until(double at)
{
	struct timespec t = { .tv_sec = (time_t)at, .tv_nsec = (long)((at - (time_t)at) * 1e9) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL))
		;
}

int main(int argc, char **argv)
{
	double seconds, cpu, period, start, next;

	if (argc != 3 || (seconds = atof(argv[1])) <= 0 || (cpu = atof(argv[2])) <= 0 || cpu > seconds) {
		fprintf(stderr, "usage: burn SECONDS CPU_SECONDS (0 < CPU_SECONDS <= SECONDS)\n");
		return 2;
	}
	period = SLICE_S * seconds / cpu;
	start = next = clock_s(CLOCK_MONOTONIC);
	while (next < start + seconds) {
		spin(SLICE_S);
		next += period;
		sleep_until(next);
	}
	return 0;
}
