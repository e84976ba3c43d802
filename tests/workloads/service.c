/*
 * service - a long-running target for attach tests.
 * Prints "service: ready pid=PID" (flushed) once both workers run, then
 * runs until killed.  Two threads, "svc-worker1" and "svc-worker2", loop:
 * burn ~20 ms in service_work (worker1) / service_poll (worker2), then
 * sleep ~30 ms; the main thread sleeps in pause().
 * Truth while attached: samples split roughly evenly between service_work
 * and service_poll, each ~40% of one CPU; no samples in main.
 * Usage: service [SECONDS=0 (forever)]
 */
#include "wl.h"
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

volatile unsigned long wl_sink;

WL_NOINLINE void service_work(unsigned long n) { WL_BURN(n, 0x5e7); }
WL_NOINLINE void service_poll(unsigned long n) { WL_BURN(n, 0x9011); }

static void burn_then_sleep(void (*fn)(unsigned long))
{
	double until = wl_cpu_now() + 0.020;
	struct timespec nap = { 0, 30 * 1000 * 1000 };

	while (wl_cpu_now() < until)
		fn(20000UL);
	nanosleep(&nap, NULL);
}

static void *worker1(void *arg)
{
	pthread_setname_np(pthread_self(), "svc-worker1");
	for (;;)
		burn_then_sleep(service_work);
	return arg;
}

static void *worker2(void *arg)
{
	pthread_setname_np(pthread_self(), "svc-worker2");
	for (;;)
		burn_then_sleep(service_poll);
	return arg;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? strtod(argv[1], NULL) : 0;
	pthread_t t1, t2;

	if (pthread_create(&t1, NULL, worker1, NULL) ||
	    pthread_create(&t2, NULL, worker2, NULL)) {
		fprintf(stderr, "service: cannot create threads\n");
		return 1;
	}
	printf("service: ready pid=%d\n", (int)getpid());
	fflush(stdout);
	if (secs > 0) {
		struct timespec t = { (time_t)secs, (long)((secs - (time_t)secs) * 1e9) };

		nanosleep(&t, NULL);
		return 0;
	}
	for (;;)
		pause();
}
