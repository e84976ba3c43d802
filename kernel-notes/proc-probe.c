/*
 * proc-probe.c - what reading one thread's /proc files costs (not part of
 * the build; kernel-notes/offcpu.md, "Per-thread totals at exit"):
 *   cc -O2 -o /tmp/proc-probe kernel-notes/proc-probe.c
 *   sleep 100 & /tmp/proc-probe $!
 * For each of stat, status, children and schedstat of /proc/PID/task/PID,
 * the mean time of 20,000 open + read + close.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
int main(int argc, char **argv) {
	char path[128], buf[4096]; int n = 20000; struct timespec a, b;
	const char *files[] = {"stat", "status", "children", "schedstat"};
	for (int f = 0; f < 4; f++) {
		snprintf(path, sizeof path, "/proc/%s/task/%s/%s", argv[1], argv[1], files[f]);
		clock_gettime(CLOCK_MONOTONIC, &a);
		for (int i = 0; i < n; i++) { int fd = open(path, O_RDONLY); if (fd < 0) return 1; read(fd, buf, sizeof buf); close(fd); }
		clock_gettime(CLOCK_MONOTONIC, &b);
		printf("%-10s %.2f us per open+read+close\n", files[f], ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n / 1000);
	}
	return 0;
}
