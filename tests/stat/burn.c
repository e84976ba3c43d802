/*
 * burn.c - `burn user SECONDS` spins in user space; `burn sys SECONDS`
 * spends the time in the kernel (64 KiB reads from /dev/zero, which the
 * kernel fills with clear_user).  Both stop once the process has used
 * SECONDS of CPU.  Known truth for prof stat: the user/sys split.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	static char buf[65536];
	double want = argc > 2 ? atof(argv[2]) : 0.3;
	volatile unsigned long x = 1;
	int sys = argc > 1 && !strcmp(argv[1], "sys");
	int fd = sys ? open("/dev/zero", O_RDONLY) : -1;

	if (sys && fd < 0) {
		perror("burn: /dev/zero");
		return 1;
	}
	/* Check the clock (a syscall) rarely so "user" stays user. */
	while (cpu_seconds() < want) {
		for (int i = 0; i < (sys ? 200 : 2000000); i++) {
			if (sys) {
				if (read(fd, buf, sizeof(buf)) < 0)
					return 1;
			} else {
				x = x * 6364136223846793005UL + 1442695040888963407UL;
			}
		}
	}
	return 0;
}
