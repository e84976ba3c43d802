/*
 * burn.c - burns CPU for about MS ms in user space (burn_user) and MS ms
 * in the kernel (burn_sys: syscalls that do real work,
 * reads of 64 KiB from /dev/zero), then prints its own rusage user and
 * system time.  usage: burn [MS]
 */
#include <fcntl.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static unsigned long burn_user(double secs)
{
	volatile unsigned long x = 1;
	double end = cpu_s() + secs;

	while (cpu_s() < end)
		for (int i = 0; i < 100000; i++)
			x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}

__attribute__((noinline)) static void burn_sys(double secs)
{
	static char buf[1 << 16];
	int fd = open("/dev/zero", O_RDONLY);
	double end = cpu_s() + secs;

	while (fd >= 0 && cpu_s() < end)
		for (int i = 0; i < 50; i++)
			if (read(fd, buf, sizeof(buf)) < 0)
				return;
	if (fd >= 0)
		close(fd);
}

int main(int argc, char **argv)
{
	int ms = argc > 1 ? atoi(argv[1]) : 500;

	burn_user(ms / 1000.0);
	burn_sys(ms / 1000.0);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	/* The truth prof's cpu_user_s / cpu_sys_s are compared with. */
	printf("burned_ms %d user_us %ld sys_us %ld\n", ms,
	       (long)ru.ru_utime.tv_sec * 1000000 + (long)ru.ru_utime.tv_usec,
	       (long)ru.ru_stime.tv_sec * 1000000 + (long)ru.ru_stime.tv_usec);
	return 0;
}
