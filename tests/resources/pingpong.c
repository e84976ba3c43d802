/*
 * pingpong.c - a switch-heavy server in miniature: PAIRS pairs of
 * threads, "ping" and "pong", bounce one byte over a pair of pipes for
 * SECONDS, so each
 * blocks in read() on every round trip (two context switches per trip
 * per thread).  It measures its own truth: per thread, the wall time it
 * lived minus its CPU time (CLOCK_THREAD_CPUTIME_ID) is the time it was
 * off the CPU, blocked or waiting to run; and the round trips per second
 * are its throughput (what a profiler's overhead takes away).
 * Prints "round_trips N", "trips_per_s N", "switches_per_s N" (the
 * process's voluntary + involuntary, getrusage) and "offcpu_ns N" (all
 * threads).  usage: pingpong [SECONDS] [PAIRS]
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* pthread_setname_np */
#endif
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static volatile int stop;

static unsigned long long clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

struct side {
	const char *name;
	int in, out;
	unsigned long long trips, offcpu_ns;
};

/* The blocking function the off-CPU stacks must name. */
__attribute__((noinline)) static int wait_for_ball(int fd, char *c)
{
	return read(fd, c, 1) == 1;
}

static void *bounce(void *arg)
{
	struct side *s = arg;
	unsigned long long wall0 = clock_ns(CLOCK_MONOTONIC);
	unsigned long long cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	char c = 'x';

	pthread_setname_np(pthread_self(), s->name);
	if (s->name[1] == 'i' && write(s->out, &c, 1) != 1)	/* ping serves first */
		return NULL;
	while (wait_for_ball(s->in, &c)) {
		s->trips++;
		if (stop)
			c = 0;	/* tells the other side to stop too */
		if (write(s->out, &c, 1) != 1 || !c)
			break;
	}
	s->offcpu_ns = (clock_ns(CLOCK_MONOTONIC) - wall0) - (clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0);
	return NULL;
}

#define MAX_PAIRS 16

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2;
	int pairs = argc > 2 ? atoi(argv[2]) : 2;
	struct side sides[2 * MAX_PAIRS];
	struct timespec run = { (time_t)secs, (long)((secs - (time_t)secs) * 1e9) };
	pthread_t th[2 * MAX_PAIRS];
	unsigned long long trips = 0, offcpu = 0;

	if (secs <= 0 || pairs < 1 || pairs > MAX_PAIRS) {
		fprintf(stderr, "usage: pingpong [SECONDS] [PAIRS <= %d]\n", MAX_PAIRS);
		return 2;
	}
	unsigned long long t0 = clock_ns(CLOCK_MONOTONIC);
	for (int i = 0; i < pairs; i++) {
		int to_pong[2], to_ping[2];
		if (pipe(to_pong) < 0 || pipe(to_ping) < 0)
			return perror("pipe"), 1;
		sides[2 * i] = (struct side){ "ping", to_ping[0], to_pong[1], 0, 0 };
		sides[2 * i + 1] = (struct side){ "pong", to_pong[0], to_ping[1], 0, 0 };
	}
	for (int i = 0; i < 2 * pairs; i++)
		pthread_create(&th[i], NULL, bounce, &sides[i]);
	nanosleep(&run, NULL);
	stop = 1;
	for (int i = 0; i < 2 * pairs; i++) {
		pthread_join(th[i], NULL);
		trips += i % 2 ? 0 : sides[i].trips;
		offcpu += sides[i].offcpu_ns;
	}
	double el = (double)(clock_ns(CLOCK_MONOTONIC) - t0) / 1e9;
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("round_trips %llu\ntrips_per_s %.0f\nswitches_per_s %.0f\noffcpu_ns %llu\n", trips,
	       (double)trips / el, (double)(ru.ru_nvcsw + ru.ru_nivcsw) / el, offcpu);
	return 0;
}
