/*
 * threads - threads that start late, with names.
 * Truth: main burns in main_work for ~0.5 s, then starts two threads named
 * "wl-alpha" and "wl-beta" (pthread_setname_np) that burn in alpha_work and
 * beta_work until SECONDS have passed; main then waits in pthread_join.
 * The thread tids are printed so tests can match them.
 * Usage: threads [SECONDS=2]
 */
#include "wl.h"
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

volatile unsigned long wl_sink;
static double end_time;

WL_NOINLINE void main_work(unsigned long n) { WL_BURN(n, 0x3a1); }
WL_NOINLINE void alpha_work(unsigned long n) { WL_BURN(n, 0xa1f); }
WL_NOINLINE void beta_work(unsigned long n) { WL_BURN(n, 0xbe7); }

static void *alpha_thread(void *arg)
{
	pthread_setname_np(pthread_self(), "wl-alpha");	/* before any work */
	printf("threads: wl-alpha tid %ld\n", (long)syscall(SYS_gettid));
	while (wl_cpu_now() < end_time)
		alpha_work(100000UL);
	return arg;
}

static void *beta_thread(void *arg)
{
	pthread_setname_np(pthread_self(), "wl-beta");
	printf("threads: wl-beta tid %ld\n", (long)syscall(SYS_gettid));
	while (wl_cpu_now() < end_time)
		beta_work(100000UL);
	return arg;
}

int main(int argc, char **argv)
{
	double secs = wl_seconds_arg(argc, argv, 1, 2.0);
	double start = wl_cpu_now(), late = start + (secs < 1.0 ? secs / 2 : 0.5);
	pthread_t a, b;

	setvbuf(stdout, NULL, _IOLBF, 0);
	end_time = start + secs;
	while (wl_cpu_now() < late)
		main_work(100000UL);
	if (pthread_create(&a, NULL, alpha_thread, NULL) ||
	    pthread_create(&b, NULL, beta_thread, NULL)) {
		fprintf(stderr, "threads: cannot create threads\n");
		return 1;
	}
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("threads: done\n");
	return 0;
}
