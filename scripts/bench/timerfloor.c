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
 * With -s BYTES (before -a) each event also writes what a DWARF
 * sampler's does, into a 1-MiB ring per CPU: ip, tid, time, the kernel
 * callchain, the user registers and BYTES of user stack (perf's and
 * prof's --call-graph dwarf), and this process empties the rings without
 * reading them: the floor of any profiler that copies stacks at HZ, with
 * no recorder work (scripts/bench/busy-host.sh's sfloor).
 *
 *   timerfloor [-s BYTES] [-a] HZ COMMAND [ARGS...]
 *   timerfloor -p PID HZ
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define RING_PAGES 256		/* 1 MiB of data, and the header page */
#define MAX_CPUS 256
#define X86_DWARF_REGS 0xff0fffULL	/* perf's sample_regs_user for DWARF on x86-64 */

static unsigned stack_bytes;	/* -s: the DWARF sample's stack copy; 0: no ring */
static struct perf_event_mmap_page *rings[MAX_CPUS];
static int nrings;

/* on_exec: the event starts at the process's exec, else at once; -1
 * (said on stderr) when the event or its ring cannot be had */
static int open_timer(pid_t pid, int cpu, int hz, int on_exec)
{
	struct perf_event_attr a;
	int fd;

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
	if (stack_bytes) {
		a.sample_type |= PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN |
				 PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
		a.exclude_callchain_user = 1;
		a.sample_regs_user = X86_DWARF_REGS;
		a.sample_stack_user = stack_bytes;
		a.watermark = 1;
		a.wakeup_watermark = RING_PAGES * 4096 / 4;
	}
	fd = (int)syscall(SYS_perf_event_open, &a, pid, cpu, -1, 0);
	if (fd < 0) {
		perror("timerfloor: perf_event_open");
		return -1;
	}
	if (stack_bytes) {
		void *m = nrings < MAX_CPUS ? mmap(NULL, (RING_PAGES + 1) * 4096UL, PROT_READ | PROT_WRITE,
						   MAP_SHARED, fd, 0) : MAP_FAILED;
		if (m == MAP_FAILED) {
			fprintf(stderr, "timerfloor: no ring for cpu %d: %s\n", cpu,
				nrings < MAX_CPUS ? strerror(errno) : "too many CPUs");
			return -1;
		}
		rings[nrings++] = m;
	}
	return fd;
}

/* Empties every ring unread, until child exits (its status) */
static int drain_until_exit(pid_t child)
{
	unsigned long long bytes = 0;
	int status;

	for (;;) {
		for (int i = 0; i < nrings; i++) {
			__u64 head = __atomic_load_n(&rings[i]->data_head, __ATOMIC_ACQUIRE);
			bytes += head - rings[i]->data_tail;
			__atomic_store_n(&rings[i]->data_tail, head, __ATOMIC_RELEASE);
		}
		if (waitpid(child, &status, WNOHANG) == child) {
			fprintf(stderr, "timerfloor: %llu bytes of samples emptied\n", bytes);
			return status;
		}
		usleep(50000);	/* a 1-MiB ring holds more than 50 ms of 8-KiB samples at 999 Hz */
	}
}

/* -p PID HZ: the process's events until it exits (a pidfd polls readable then) */
static int attach(pid_t pid, int hz)
{
	long ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	struct pollfd p = { .events = POLLIN };

	for (int cpu = 0; cpu < ncpus; cpu++)
		if (open_timer(pid, cpu, hz, 0) < 0)
			return 1;
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
	int system_wide, go[2], status, hz;
	char b;
	pid_t pid;

	if (argc == 4 && strcmp(argv[1], "-p") == 0 && atoi(argv[2]) > 0 && atoi(argv[3]) > 0)
		return attach(atoi(argv[2]), atoi(argv[3]));
	if (argc > 2 && strcmp(argv[1], "-s") == 0) {
		stack_bytes = (unsigned)atoi(argv[2]) & ~7u;
		argv += 2;
		argc -= 2;
	}
	system_wide = argc > 1 && strcmp(argv[1], "-a") == 0;
	argv += system_wide;
	argc -= system_wide;
	if (argc < 3 || (hz = atoi(argv[1])) <= 0 || pipe(go) < 0) {
		fprintf(stderr, "usage: timerfloor [-s BYTES] [-a] HZ COMMAND [ARGS...] | -p PID HZ\n");
		return 2;
	}
	if ((pid = fork()) == 0) {	/* waits until the events exist, then execs */
		if (read(go[0], &b, 1) != 1)
			_exit(126);
		execvp(argv[2], argv + 2);
		_exit(127);
	}
	for (int cpu = 0; cpu < ncpus; cpu++)
		if (open_timer(system_wide ? -1 : pid, cpu, hz, !system_wide) < 0)
			return 1;
	if (write(go[1], "g", 1) != 1)
		return 1;
	if (stack_bytes)
		status = drain_until_exit(pid);
	else if (waitpid(pid, &status, 0) < 0)
		return 1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
