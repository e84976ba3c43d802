/*
 * sleeper.c - `sleeper SECONDS`: sleeps SECONDS and exits, using almost no
 * CPU.  Known truth for prof stat: off_cpu_s ~ SECONDS, io_wait_s ~ 0.
 */
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
	double s = argc > 1 ? atof(argv[1]) : 0.1;
	struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };

	while (nanosleep(&ts, &ts) != 0)
		;
	return 0;
}
