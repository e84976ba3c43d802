/*
 * hiccup.c - the attach benchmark's target: a loop of short work units
 * that measures its own latency.  Every iteration's duration goes into
 * 50 ms buckets (max per bucket); at exit it prints one line per bucket,
 * "START_NS MAX_NS" (CLOCK_MONOTONIC), so the script can compare the
 * worst iteration around attach and detach with the quiet baseline.
 *
 *   hiccup SECONDS     run, then print the buckets
 *   hiccup now         print CLOCK_MONOTONIC ns (the script's stopwatch)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BUCKET_NS 50000000ULL

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static __attribute__((noinline)) uint64_t work(uint64_t x)
{
	for (int i = 0; i < 2000; i++)	/* a few microseconds */
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	return x;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "now")) {
		printf("%llu\n", (unsigned long long)now_ns());
		return 0;
	}
	double secs = argc > 1 ? atof(argv[1]) : 5;
	size_t nb = (size_t)(secs * 1e9 / BUCKET_NS) + 2;
	uint64_t *maxv = calloc(nb, sizeof(*maxv)), acc = 1;
	uint64_t t0 = now_ns(), prev = t0, end = t0 + (uint64_t)(secs * 1e9);

	while (prev < end) {
		acc = work(acc);
		uint64_t t = now_ns();
		size_t b = (size_t)((t - t0) / BUCKET_NS);
		if (b < nb && t - prev > maxv[b])
			maxv[b] = t - prev;
		prev = t;
	}
	for (size_t b = 0; b < nb; b++)
		if (maxv[b])
			printf("%llu %llu\n", (unsigned long long)(t0 + b * BUCKET_NS),
			       (unsigned long long)maxv[b]);
	return acc == 42;
}
