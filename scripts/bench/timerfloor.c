/*
 * timerfloor.c - the floor under goal 1: runs a command under a cpu-clock
 * sampling event at HZ (inherit, one event per CPU, enable_on_exec) that
 * has NO ring buffer, so each timer interrupt reaches the overflow
 * handler and stops there (no callchain, no stack copy, no record).  The
 * target's throughput under it is what the kernel's sampling timer alone
 * costs on this machine: no profiler built on cpu-clock can cost less.
 * With -a the events count every task on each CPU (pid -1, as `perf
 * record -a` opens them) for as long as COMMAND runs: the floor of a
 * whole-host recording (scripts/bench/busy-host.sh).  With -p the
 * events count a running process until it exits, and the threads it
 * starts afterwards (inherit): the floor of an attach made at the
 * process's start, before its threads exist (scripts/bench/python-pairs.sh).
 *
 *   timerfloor [-a] HZ COMMAND [ARGS...]
 *   timerfloor -p PID HZ
 */
#include <linux/perf_event.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* on_exec: the event starts at the process's exec, else at once */
static int open_timer(pid_t pid, int cpu, int hz, int on_exec)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.freq = 1;
	a.sample_freq = (unsigned long long)hz;
	a.sample_type = PERF_SAMPLE_IP;
	a.inherit = pid != -1;
	a.disabled = on_exec;
	a.enable_on_exec = on_exec;
	a.exclude_hv = 1;
	return (int)syscall(SYS_perf_event_open, &a, pid, cpu, -1, 0);
}

/* -p PID HZ: the process's events until it exits (a pidfd polls readable then) */
static int attach(pid_t pid, int hz)
{
	long ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	struct pollfd p = { .events = POLLIN };

	for (int cpu = 0; cpu < ncpus; cpu++)
		if (open_timer(pid, cpu, hz, 0) < 0) {
			perror("timerfloor: perf_event_open");
			return 1;
		}
	p.fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (p.fd < 0) {
		perror("timerfloor: pidfd_open");
		return 1;
	}
	return poll(&p, 1, -1) == 1 ? 0 : 1;
}

int main(int argc, char **argv)
{
	long ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	int system_wide = argc > 1 && strcmp(argv[1], "-a") == 0;
	int go[2], status, hz;
	char b;
	pid_t pid;

	if (argc == 4 && strcmp(argv[1], "-p") == 0 && atoi(argv[2]) > 0 && atoi(argv[3]) > 0)
		return attach(atoi(argv[2]), atoi(argv[3]));
	argv += system_wide;
	argc -= system_wide;
	if (argc < 3 || (hz = atoi(argv[1])) <= 0 || pipe(go) < 0) {
		fprintf(stderr, "usage: timerfloor [-a] HZ COMMAND [ARGS...] | -p PID HZ\n");
		return 2;
	}
	if ((pid = fork()) == 0) {	/* waits until the events exist, then execs */
		if (read(go[0], &b, 1) != 1)
			_exit(126);
		execvp(argv[2], argv + 2);
		_exit(127);
	}
	for (int cpu = 0; cpu < ncpus; cpu++)
		if (open_timer(system_wide ? -1 : pid, cpu, hz, !system_wide) < 0) {
			perror("timerfloor: perf_event_open");
			return 1;
		}
	if (write(go[1], "g", 1) != 1 || waitpid(pid, &status, 0) < 0)
		return 1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
