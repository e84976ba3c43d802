/*
 * run.c - measure one run of a command (see the design notes in
 * include/prof/resource.h for what each number includes).
 *
 * Design notes: the child is held before exec (util/spawn.c) until the
 * parent has attached every counter with enable_on_exec, so counts start
 * exactly at exec and include every descendant (inherit=1).  Exec failure
 * comes back as an errno, so "no such command" is an error of prof, not a
 * run with exit status 127.  Between waitid(WNOWAIT) and wait4()
 * the child is a zombie whose /proc entries are still readable; it is always
 * reaped before returning.
 */
#include "prof/offcpu.h"
#include "prof/resource.h"
#include "prof/proc.h"
#include "prof/util.h"
#include "resource-priv.h"
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int res_delayacct_enabled(void)
{
	char *s = read_file("/proc/sys/kernel/task_delayacct", NULL);
	int on;

	if (!s)
		return -errno;
	on = atoi(s) != 0;
	free(s);
	return on;
}

const char *res_status_str(int st, char *buf, size_t len)
{
	if (WIFEXITED(st))
		snprintf(buf, len, "exit %d", WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		snprintf(buf, len, "killed by SIG%s", sigabbrev_np(WTERMSIG(st)) ?: "?");
	else
		snprintf(buf, len, "status 0x%x", st);
	return buf;
}

/*
 * Delay accounting, best source first: taskstats (ns, needs CAP_NET_ADMIN),
 * else /proc/PID/stat field 42 (clock ticks).  Only when delayacct was on
 * for the whole run; otherwise the kernel's zeros would be a lie.
 */
static void read_delays(pid_t pid, const char *stat_text, struct res_usage *out)
{
	uint64_t blkio_ns, cpu_ns, ticks;

	if (res_taskstats_delays(pid, &blkio_ns, &cpu_ns) == 0) {
		out->io_wait_s = (double)blkio_ns / 1e9;
		out->runq_wait_s = (double)cpu_ns / 1e9;
		out->have_io_wait = out->have_runq_wait = true;
		out->io_wait_resolution_s = 1e-9;
		out->io_wait_source = "delayacct (taskstats)";
	} else if (stat_text && prof_proc_parse_stat_blkio(stat_text, &ticks) == 0) {
		out->io_wait_s = (double)ticks / (double)sysconf(_SC_CLK_TCK);
		out->have_io_wait = true;
		out->io_wait_resolution_s = 1.0 / (double)sysconf(_SC_CLK_TCK);
		out->io_wait_source = "delayacct (/proc/PID/stat)";
	}
}

static void read_zombie_proc(pid_t pid, struct res_usage *out, bool delayacct)
{
	char path[64];
	char *text;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	text = read_file(path, NULL);
	if (delayacct)
		read_delays(pid, text, out);
	free(text);
	snprintf(path, sizeof(path), "/proc/%d/io", (int)pid);
	text = read_file(path, NULL);
	if (text && prof_proc_parse_io(text, &out->read_bytes, &out->write_bytes) == 0)
		out->have_proc_io = true;
	free(text);
}

/* Without delay accounting: the sched_switch intervals (iowait.c). */
static void take_switch_iowait(struct prof_iowait *iw, struct res_usage *out)
{
	out->io_wait_s = (double)prof_iowait_finish(iw, &out->io_wait_lost) / 1e9;
	out->have_io_wait = true;
	out->io_wait_resolution_s = 1e-9;
	out->io_wait_source = PROF_IOWAIT_SCHED_SWITCH;
}

static void fill_rusage(const struct rusage *ru, struct res_usage *out)
{
	out->user_s = (double)ru->ru_utime.tv_sec + ru->ru_utime.tv_usec / 1e6;
	out->sys_s = (double)ru->ru_stime.tv_sec + ru->ru_stime.tv_usec / 1e6;
	out->rss_peak_bytes = (uint64_t)ru->ru_maxrss * 1024;	/* Linux: KiB */
	out->vol_cs = (uint64_t)ru->ru_nvcsw;
	out->invol_cs = (uint64_t)ru->ru_nivcsw;
	out->minflt = (uint64_t)ru->ru_minflt;
	out->majflt = (uint64_t)ru->ru_majflt;
	out->off_cpu_s = MAX(0.0, out->wall_s - out->user_s - out->sys_s);
}

static void close_all(int *fds, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

/* Reap pid no matter what (used on error paths). */
static void reap(pid_t pid, int *status, struct rusage *ru)
{
	while (wait4(pid, status, 0, ru) < 0 && errno == EINTR)
		;
}

int res_run(const struct res_run_opts *o, struct res_usage *out)
{
	int fds[RES_MAX_COUNTERS], exec_errno, st = 0;
	bool delayacct = res_delayacct_enabled() == 1;
	struct prof_iowait *iw = NULL;
	char why[256];
	struct spawn child;
	struct rusage ru;
	siginfo_t si;
	uint64_t t0;

	memset(out, 0, sizeof(*out));
	if (o->n_counters > RES_MAX_COUNTERS)
		return -E2BIG;
	if ((exec_errno = spawn_held(&child, o->argv, o->stdout_fd, o->stderr_fd)) < 0)
		return exec_errno;
	for (unsigned i = 0; i < o->n_counters; i++) {
		fds[i] = res_counter_open(o->counters[i], child.pid, true);
		if (fds[i] < 0) {
			int e = fds[i];

			error("cannot count '%s' on the command: %s", o->counters[i]->name, strerror(-e));
			close_all(fds, i);
			spawn_abort(&child);
			return e;
		}
	}
	if (!delayacct)
		iw = prof_iowait_start(child.pid, why, sizeof(why));
	t0 = now_ns();
	exec_errno = spawn_release(&child);
	while (waitid(P_PID, child.pid, &si, WEXITED | WNOWAIT) < 0 && errno == EINTR)
		;
	out->wall_s = (double)(now_ns() - t0) / 1e9;
	read_zombie_proc(child.pid, out, delayacct && res_delayacct_enabled() == 1);
	if (iw)
		take_switch_iowait(iw, out);
	for (unsigned i = 0; i < o->n_counters; i++)
		if (res_counter_read(fds[i], &out->counters[i]) < 0)
			out->counters[i] = 0;
	close_all(fds, o->n_counters);
	reap(child.pid, &st, &ru);
	if (exec_errno)
		return exec_errno;
	out->wait_status = st;
	fill_rusage(&ru, out);
	return 0;
}
