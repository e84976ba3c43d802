/*
 * tp.c - the benchmark target: CPU-bound work with realistic call depth
 * (a small recursive tree walk, hashing, sorting), run for a fixed wall
 * time by T threads, printing how many operations it completed and the
 * CPU time (user+sys, all threads) it used.  The ops count is the
 * throughput the overhead benchmark compares between bare, perf and prof
 * runs; ops per CPU second is the same with the noise of other tenants of
 * the machine removed (the kernel's sampling work runs in the target's
 * context and is counted in its sys time).  Built without frame pointers,
 * like real code.
 *
 *   tp SECONDS [THREADS]
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

static double seconds;
static volatile int stop;

static __attribute__((noinline)) uint64_t mix(uint64_t x)
{
	x ^= x >> 31;
	x *= 0x7fb5d329728ea185ULL;
	x ^= x >> 27;
	return x;
}

static __attribute__((noinline)) uint64_t walk(uint64_t seed, int depth)
{
	if (depth == 0)
		return mix(seed);
	return walk(mix(seed) + 1, depth - 1) ^ (depth & 1 ? walk(seed ^ depth, depth - 2 > 0 ? depth - 2 : 0) : 0);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static __attribute__((noinline)) uint64_t sort_batch(uint64_t seed)
{
	uint64_t v[256];

	for (int i = 0; i < 256; i++)
		v[i] = mix(seed + i);
	qsort(v, 256, sizeof(v[0]), cmp_u64);
	return v[17];
}

static void *worker(void *arg)
{
	uint64_t ops = 0, acc = (uintptr_t)arg;

	while (!stop) {
		acc += walk(acc, 12);
		acc += sort_batch(acc);
		ops++;
	}
	*(uint64_t *)arg = ops + (acc == 42);
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 2 ? atoi(argv[2]) : 1;
	pthread_t tid[64];
	uint64_t ops[64], total = 0;
	struct timespec ts;

	seconds = argc > 1 ? atof(argv[1]) : 5;
	if (threads < 1 || threads > 64)
		threads = 1;
	for (int i = 0; i < threads; i++) {
		ops[i] = (uint64_t)i + 1;
		pthread_create(&tid[i], NULL, worker, &ops[i]);
	}
	ts.tv_sec = (time_t)seconds;
	ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
	nanosleep(&ts, NULL);
	stop = 1;
	for (int i = 0; i < threads; i++) {
		pthread_join(tid[i], NULL);
		total += ops[i];
	}
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("ops %llu cpu %.6f\n", (unsigned long long)total,
	       (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
		       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6);
	return 0;
}
