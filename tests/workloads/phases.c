/*
 * phases - two threads and an I/O phase, for the time-aware views (the
 * HTML report's tracks and range selection, speedscope's time order,
 * `prof annotate`).
 * Truth: thread "wl-worker" runs work_function for the whole run.  The
 * main thread runs compute_phase for S/3 seconds, then io_phase (write 4
 * MiB + fdatasync in a loop, in DIR) for S/3, then compute_phase again.
 * It prints "phases: io_start_ns A io_end_ns B" (CLOCK_MONOTONIC, the
 * clock of sample times) so a test can select exactly the I/O phase.
 * work_function's loop body spans three source lines on purpose: the
 * source view and `prof annotate` must spread its samples over them.
 * Usage: phases DIR [S=1.5]
 */
#include "wl.h"
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

volatile unsigned long wl_sink;
static volatile double end_time;	/* moved by main, read by the worker */

WL_NOINLINE unsigned long work_function(unsigned long n)
{
	unsigned long x = 0x77, y = 1;

	for (unsigned long i = 0; i < n; i++) {
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		y ^= (x >> 17) * (i | 1);
		wl_sink = x + y;
	}
	return y;
}

WL_NOINLINE void compute_phase(double until)
{
	while (wl_wall_now() < until)
		WL_BURN(100000UL, 0xc0de);
}

WL_NOINLINE void io_phase(const char *dir, double until)
{
	static char buf[1 << 20];
	char path[4096];

	snprintf(path, sizeof(path), "%s/phases.io", dir);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		perror(path);
		exit(1);
	}
	for (int round = 0; wl_wall_now() < until; round++) {
		memset(buf, 'a' + round % 26, sizeof(buf));
		lseek(fd, 0, SEEK_SET);
		for (int i = 0; i < 4; i++)
			if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf)) {
				perror("write");
				exit(1);
			}
		fdatasync(fd);
	}
	close(fd);
	unlink(path);
}

static void *worker(void *arg)
{
	pthread_setname_np(pthread_self(), "wl-worker");
	while (wl_wall_now() < end_time)
		wl_sink += work_function(200000UL);
	return arg;
}

static unsigned long long ns(double t)
{
	return (unsigned long long)(t * 1e9);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: phases DIR [SECONDS]\n");
		return 2;
	}
	double s = wl_seconds_arg(argc, argv, 2, 1.5), t0 = wl_wall_now();
	pthread_t t;

	end_time = t0 + s;
	pthread_create(&t, NULL, worker, NULL);
	compute_phase(t0 + s / 3);
	double io_start = wl_wall_now();
	io_phase(argv[1], t0 + 2 * s / 3);
	double io_end = wl_wall_now();
	/* S/3 at least: on a loaded machine the last fdatasync ran 0.5 s past
	 * the planned end, which left no compute phase after the I/O (t5220's
	 * stack chart wants one); the worker runs to the moved end too */
	if (end_time < io_end + s / 3)
		end_time = io_end + s / 3;
	compute_phase(end_time);
	pthread_join(t, NULL);
	printf("phases: io_start_ns %llu io_end_ns %llu\n", ns(io_start), ns(io_end));
	return 0;
}
