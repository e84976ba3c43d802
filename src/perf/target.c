/*
 * target.c - opening a live recording's events on its targets (see
 * include/prof/target.h): attached processes or the whole machine.
 *
 * Design notes:
 *  - Attach opens ncpus fds per thread, so the soft fd limit is raised to
 *    the hard one first.  A thread that exits while we open is skipped
 *    (ESRCH); a process that is gone before its maps are read is an error.
 *  - System-wide synthesizes every process after the events exist and
 *    before they are enabled.  A process that starts in between has no
 *    FORK record and no snapshot: the replay engine loads it from /proc the
 *    first time one of its records arrives, so nothing is lost, only read
 *    later.  Processes that vanish during the scan are skipped.
 */
#include "prof/target.h"
#include "prof/proc.h"
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static int open_threads(struct prof_perf *pf, pid_t pid, struct prof_offcpu *oc)
{
	pid_t *tids;
	size_t n;
	int ret = 0;

	if (!prof_proc_exists(pid) || prof_proc_tids(pid, &tids, &n) < 0)
		return error("no process with pid %d", (int)pid), -ESRCH;
	for (size_t t = 0; t < n && !ret; t++) {
		ret = prof_perf_open_task(pf, tids[t]);
		if (ret == -ESRCH)
			ret = 0;
		else if (!ret && oc)
			prof_offcpu_open_task(oc, tids[t]);
	}
	free(tids);
	return ret;
}

int prof_target_attach(struct prof_perf *pf, struct prof_replay *rp, const pid_t *pids, size_t n,
		       struct prof_offcpu *oc, struct prof_restrack *rt)
{
	raise_fd_limit();
	for (size_t i = 0; i < n; i++) {
		int ret = open_threads(pf, pids[i], oc);
		if (ret < 0)
			return ret;
		if (rt)
			prof_restrack_add_pid(rt, (uint32_t)pids[i]);
		if (prof_replay_add_process(rp, pids[i]) < 0)
			return error("no process with pid %d (it exited while prof attached)", (int)pids[i]), -ESRCH;
	}
	return 0;
}

int prof_target_system_wide(struct prof_perf *pf, struct prof_replay *rp, const int *cpus,
			    size_t n)
{
	pid_t *pids;
	size_t np;
	int ret = 0;

	for (size_t i = 0; cpus && i < n && !ret; i++)
		if ((ret = prof_perf_open_cpu(pf, cpus[i])) == -ENODEV)
			error("CPU %d is offline", cpus[i]);
	for (int cpu = 0; !cpus && cpu < pf->ncpus && !ret; cpu++) {
		ret = prof_perf_open_cpu(pf, cpu);
		if (ret == -ENODEV)	/* offline: not an error without -C */
			ret = 0;
	}
	if (ret < 0)
		return ret;
	if ((ret = prof_proc_pids(&pids, &np)) < 0)
		return error("cannot list /proc: %s", strerror(-ret)), ret;
	for (size_t i = 0; i < np; i++)
		prof_replay_add_process(rp, pids[i]);	/* -ESRCH: it just exited */
	free(pids);
	return 0;
}

bool prof_target_any_alive(const pid_t *pids, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (kill(pids[i], 0) == 0 || errno == EPERM)
			return true;
	return false;
}
