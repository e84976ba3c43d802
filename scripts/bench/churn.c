/*
 * churn.c - a host's background in miniature, for the cost of recording
 * the whole machine: RATE new processes a second for SECONDS, each a
 * fresh exec of this program (a new address space mapping its own image,
 * libc and ld.so), which starts THREADS threads that nap 1 ms NAPS times
 * and exit.  Paced on absolute deadlines, so the count of processes,
 * threads and switch-outs is the same in every run whatever the
 * recorder's cost (a late deadline is run at once, not skipped).  Prints
 * "processes N" and "late_ms N" (how far behind the pace it ended).
 *
 *   churn SECONDS [RATE=100] [THREADS=2] [NAPS=5]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int naps;

static void *napper(void *arg)
{
	struct timespec ms = { 0, 1000000 };

	for (int i = 0; i < naps; i++)
		nanosleep(&ms, NULL);
	return arg;
}

/* One short-lived process: THREADS nappers, joined. */
static int child(int threads)
{
	pthread_t t[64];

	if (threads > 64)
		threads = 64;
	for (int i = 0; i < threads; i++)
		if (pthread_create(&t[i], NULL, napper, NULL))
			return 1;
	for (int i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	return 0;
}

static unsigned long long mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

static void reap(int flags)
{
	while (waitpid(-1, NULL, flags) > 0)
		;
}

int main(int argc, char **argv)
{
	if (argc >= 4 && argv[1][0] == '-') {	/* churn -c THREADS NAPS */
		naps = atoi(argv[3]);
		return child(atoi(argv[2]));
	}
	if (argc < 2) {
		fprintf(stderr, "usage: churn SECONDS [RATE] [THREADS] [NAPS]\n");
		return 2;
	}
	double secs = atof(argv[1]);
	long rate = argc > 2 ? atol(argv[2]) : 100;
	char self[4096];
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *cargv[] = { self, "-c", argc > 3 ? argv[3] : "2", argc > 4 ? argv[4] : "5", NULL };
	if (len <= 0) {
		perror("churn: /proc/self/exe");
		return 1;
	}
	self[len] = 0;
	long n = (long)(secs * (double)rate);
	unsigned long long t0 = mono_ns(), step = 1000000000ULL / (unsigned long long)(rate > 0 ? rate : 1);

	for (long i = 0; i < n; i++) {
		unsigned long long due = t0 + (unsigned long long)i * step;
		struct timespec ts = { (time_t)(due / 1000000000ULL), (long)(due % 1000000000ULL) };
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		pid_t pid = fork();
		if (pid == 0) {
			execv(self, cargv);
			_exit(127);
		}
		reap(WNOHANG);
	}
	reap(0);
	long late = (long)((mono_ns() - t0) / 1000000ULL) - (long)(secs * 1000.0);
	printf("processes %ld\nlate_ms %ld\n", n, late > 0 ? late : 0);
	return 0;
}
