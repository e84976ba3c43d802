/*
 * proc-probe.c - what reading one thread's /proc files costs (not part of
 * the build; kernel-notes/offcpu.md, "Per-thread totals at exit"):
 *   cc -O2 -o /tmp/proc-probe kernel-notes/proc-probe.c
 *   sleep 100 & /tmp/proc-probe $!
 * For each of stat, status, children and schedstat of /proc/PID/task/PID,
 * the mean time of 20,000 open + read + close, and of 20,000 preads from
 * offset 0 of one open file (the kernel renders the text anew each time).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
static double us_since(const struct timespec *a, int n) {
	struct timespec b; clock_gettime(CLOCK_MONOTONIC, &b);
	return ((b.tv_sec - a->tv_sec) * 1e9 + (b.tv_nsec - a->tv_nsec)) / n / 1000;
}
int main(int argc, char **argv) {
	char path[128], buf[4096]; int n = 20000, fd; struct timespec a;
	const char *files[] = {"stat", "status", "children", "schedstat"};
	if (argc < 2) return 2;
	for (int f = 0; f < 4; f++) {
		snprintf(path, sizeof path, "/proc/%s/task/%s/%s", argv[1], argv[1], files[f]);
		clock_gettime(CLOCK_MONOTONIC, &a);
		for (int i = 0; i < n; i++) { if ((fd = open(path, O_RDONLY)) < 0) return 1; read(fd, buf, sizeof buf); close(fd); }
		printf("%-10s %.2f us per open+read+close, ", files[f], us_since(&a, n));
		if ((fd = open(path, O_RDONLY)) < 0) return 1;
		clock_gettime(CLOCK_MONOTONIC, &a);
		for (int i = 0; i < n; i++) pread(fd, buf, sizeof buf, 0);
		printf("%.2f us per pread of the open file\n", us_since(&a, n));
		close(fd);
	}
	return 0;
}
