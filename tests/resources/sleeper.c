/*
 * sleeper.c - sleeps (S state, never I/O) for MS milliseconds in naps of
 * NAP_MS (default 10) inside sleep_a_while(); the off-CPU sleep metric
 * must see it, the I/O-wait metric must not.  Prints the time it measured
 * around its nanosleep calls (slept_ns).  usage: sleeper [MS [NAP_MS]]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static unsigned long long now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

/* Returns the ns it spent in nanosleep (naps overshoot on a busy machine). */
__attribute__((noinline)) static unsigned long long sleep_a_while(int ms, int nap_ms)
{
	struct timespec nap = { 0, nap_ms * 1000000L };
	unsigned long long slept = 0;

	for (int i = 0; i < ms / nap_ms; i++) {
		unsigned long long t0 = now();
		nanosleep(&nap, NULL);
		slept += now() - t0;
	}
	return slept;
}

int main(int argc, char **argv)
{
	int ms = argc > 1 ? atoi(argv[1]) : 500;
	int nap_ms = argc > 2 ? atoi(argv[2]) : 10;

	if (nap_ms < 1 || nap_ms > 999) {
		fprintf(stderr, "usage: sleeper [MS [NAP_MS (1-999)]]\n");
		return 2;
	}
	unsigned long long ns = sleep_a_while(ms, nap_ms);
	printf("slept_ms %d slept_ns %llu\n", ms, ns);
	return 0;
}
