/*
 * offcpu-probe.c - can this user open the sched:sched_switch tracepoint
 * per task, with and without raw data and kernel sampling?  The questions
 * behind kernel-notes/offcpu.md.  Not part of the build:
 *   cc -o /tmp/offcpu-probe kernel-notes/offcpu-probe.c
 *   /tmp/offcpu-probe $(cat /sys/kernel/tracing/events/sched/sched_switch/id)
 *   setpriv --reuid=nobody --regid=nogroup --clear-groups /tmp/offcpu-probe 372
 * (as nobody the id file is unreadable: pass the number root saw).
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	unsigned long long id = argc > 1 ? strtoull(argv[1], NULL, 10) : 0;

	if (!id) {
		fprintf(stderr, "usage: offcpu-probe TRACEPOINT_ID\n");
		return 2;
	}
	for (int raw = 0; raw < 2; raw++)
		for (int exk = 0; exk < 2; exk++) {
			struct perf_event_attr a;
			memset(&a, 0, sizeof(a));
			a.size = sizeof(a);
			a.type = PERF_TYPE_TRACEPOINT;
			a.config = id;
			a.sample_period = 1;
			a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN |
					(raw ? PERF_SAMPLE_RAW : 0);
			a.exclude_kernel = exk;
			a.context_switch = 1;
			a.disabled = 1;
			int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
			printf("raw=%d exclude_kernel=%d: %s\n", raw, exk, fd < 0 ? strerror(errno) : "ok");
			if (fd >= 0)
				close(fd);
		}
	return 0;
}
