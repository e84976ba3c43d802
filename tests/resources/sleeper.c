/*
 * sleeper.c - sleeps (S state, never I/O) for MS milliseconds in 10 ms
 * naps inside sleep_a_while(); the off-CPU sleep metric must see it, the
 * I/O-wait metric must not.  Prints the time it measured around its
 * nanosleep calls (slept_ns).  usage: sleeper [MS]
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
__attribute__((noinline)) static unsigned long long sleep_a_while(int ms)
{
	struct timespec nap = { 0, 10 * 1000000L };
	unsigned long long slept = 0;

	for (int i = 0; i < ms / 10; i++) {
		unsigned long long t0 = now();
		nanosleep(&nap, NULL);
		slept += now() - t0;
	}
	return slept;
}

int main(int argc, char **argv)
{
	int ms = argc > 1 ? atoi(argv[1]) : 500;

	unsigned long long ns = sleep_a_while(ms);
	printf("slept_ms %d slept_ns %llu\n", ms, ns);
	return 0;
}
