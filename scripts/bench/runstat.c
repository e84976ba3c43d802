/*
 * runstat.c - runs a command and prints "CPU_S WALL_S MAXRSS_KIB USER_S
 * SYS_S VCSW NIVCSW" on fd 3 (user+sys of the command and its waited-for
 * children, from wait4's rusage, which the kernel keeps in nanoseconds;
 * /usr/bin/time rounds to 10 ms, too coarse for the scaling benchmark's
 * small points; then user and system time apart, and the voluntary and
 * involuntary context switches of all its threads).
 *
 *   runstat CMD [ARGS...] 3>FILE
 */
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct rusage ru;
	int status;

	if (argc < 2) {
		fprintf(stderr, "usage: runstat CMD [ARGS...] 3>FILE\n");
		return 2;
	}
	double t0 = now_s();
	pid_t pid = fork();
	if (pid == 0) {
		close(3);
		execvp(argv[1], argv + 1);
		perror(argv[1]);
		_exit(127);
	}
	if (pid < 0 || wait4(pid, &status, 0, &ru) < 0) {
		perror("runstat");
		return 1;
	}
	double cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
		     (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
	double user = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
	double sys = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	dprintf(3, "%.6f %.6f %ld %.6f %.6f %ld %ld\n", cpu, now_s() - t0, ru.ru_maxrss, user, sys,
		ru.ru_nvcsw, ru.ru_nivcsw);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
