/*
 * target.c - opening a live recording's events on its targets (see
 * include/prof/target.h): attached processes or the whole machine.
 *
 * Design notes:
 *  - Attach is per CPU where the machine may be recorded: the events of
 *    -a, with the replay engine and the off-CPU accountant keeping the
 *    targets' records only (attach_per_cpu says why); else per thread.
 *  - Per thread, attach opens ncpus fds per thread, so the soft fd limit is raised to
 *    the hard one first.  A thread that exits while we open is skipped
 *    (ESRCH); a process that is gone before its maps are read is an error.
 *  - System-wide synthesizes every process after the events exist and
 *    before they are enabled.  A process that starts in between has no
 *    FORK record and no snapshot: the replay engine loads it from /proc the
 *    first time one of its records arrives, so nothing is lost, only read
 *    later.  Processes that vanish during the scan are skipped.  Without
 *    -C, the threads found are those the off-CPU pairing charges from the
 *    start when they were blocked then.
 */
#include "prof/target.h"
#include "prof/proc.h"
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static size_t open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	size_t n = 0;

	if (!d)
		return 0;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/*
 * Room for `more` descriptors beyond those open now, as perf makes it
 * when it runs out (tools/perf/util/rlimit.c): the soft limit up to the
 * hard one and, as root (CAP_SYS_RESOURCE), the hard one up to what is
 * needed, at most fs.nr_open.  A thread takes an event per CPU for the
 * samples and one per CPU for each off-CPU event: 4,001 threads on 2
 * CPUs took about 32,000, above this machine's hard limit of 20,000.
 */
static void make_fd_room(size_t more)
{
	struct rlimit rl;
	rlim_t want = (rlim_t)(open_fds() + more + 64);

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || want <= rl.rlim_cur)
		return;
	if (want > rl.rlim_max) {
		char *s = read_file("/proc/sys/fs/nr_open", NULL);
		rlim_t max = s ? (rlim_t)strtoull(s, NULL, 10) : 0;
		struct rlimit up = { MIN(want, max), MIN(want, max) };

		free(s);
		if (up.rlim_max > rl.rlim_max && setrlimit(RLIMIT_NOFILE, &up) == 0)
			return;
	}
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
}

/* The threads to sample in process pid: those of only (-t) in it, else all. */
static int target_threads(pid_t pid, const pid_t *only, size_t n_only, pid_t **tids, size_t *n)
{
	if (!n_only)
		return prof_proc_tids(pid, tids, n);
	*tids = xmalloc(n_only * sizeof(**tids));
	*n = 0;
	for (size_t i = 0; i < n_only; i++)
		if (prof_proc_tgid(only[i]) == pid)
			(*tids)[(*n)++] = only[i];
	return 0;
}

/* The descriptors one thread's events take. */
static size_t fds_per_thread(const struct prof_perf *pf, struct prof_offcpu *oc)
{
	struct prof_perf *off[PROF_OFFCPU_MAX_PERFS];

	return (size_t)pf->ncpus * (1 + (oc ? prof_offcpu_perfs(oc, off) : 0));
}

/* Events on every thread of pid (only those of `only` when n_only; a
 * thread that exits meanwhile is skipped), its threads' names and maps;
 * 0 or -errno (-ESRCH: gone). */
static int attach_one(struct prof_perf *pf, struct prof_replay *rp, pid_t pid,
		      const pid_t *only, size_t n_only, struct prof_offcpu *oc,
		      struct prof_restrack *rt)
{
	pid_t *tids;
	size_t n;
	int ret = 0;

	if (!prof_proc_exists(pid) || target_threads(pid, only, n_only, &tids, &n) < 0)
		return -ESRCH;
	make_fd_room(n * fds_per_thread(pf, oc));
	for (size_t t = 0; t < n && !ret; t++) {
		ret = prof_perf_open_task(pf, tids[t]);
		if (ret == -ESRCH)
			ret = 0;
		else if (!ret && oc)
			prof_offcpu_open_task(oc, tids[t]);
	}
	free(tids);
	if (ret < 0)
		return ret;
	if (rt)
		prof_restrack_add_attached(rt, (uint32_t)pid);
	return prof_replay_add_process(rp, pid);
}

/* The descendants of pid that run now, each once (a pid given with -p
 * too is already attached); one that exits meanwhile is skipped. */
static int attach_descendants(struct prof_perf *pf, struct prof_replay *rp, pid_t pid,
			      struct prof_offcpu *oc, struct prof_restrack *rt, struct u64map *done)
{
	pid_t *kids;
	size_t n;
	int ret = 0;
	bool fresh;

	if (prof_proc_descendants(pid, &kids, &n) < 0)
		return 0;
	for (size_t i = 0; i < n && (ret == 0 || ret == -ESRCH); i++) {
		u64map_slot(done, (uint64_t)kids[i], &fresh);
		if (fresh)
			ret = attach_one(pf, rp, kids[i], NULL, 0, oc, rt);
	}
	free(kids);
	return ret == -ESRCH ? 0 : ret;
}

/* Per thread: an event per CPU on every thread of the targets, inherited
 * by what they start. */
static int attach_per_thread(struct prof_perf *pf, struct prof_replay *rp,
			     const struct prof_target_spec *t, struct prof_offcpu *oc,
			     struct prof_restrack *rt)
{
	struct u64map done = { 0 };	/* pids attached */
	int ret = 0;
	bool fresh;

	for (size_t i = 0; i < t->n && ret == 0; i++) {
		u64map_slot(&done, (uint64_t)t->pids[i], &fresh);
		if (fresh && (ret = attach_one(pf, rp, t->pids[i], t->tids, t->ntids, oc, rt)) == -ESRCH)
			error("no process with pid %d", (int)t->pids[i]);
	}
	for (size_t i = 0; i < t->n && ret == 0 && t->children; i++)
		ret = attach_descendants(pf, rp, t->pids[i], oc, rt, &done);
	u64map_free(&done);
	return ret;
}

/* A list of pids, each once. */
struct pidlist {
	pid_t *v;
	size_t n;
	struct u64map seen;
};

static void pidlist_add(struct pidlist *l, pid_t pid)
{
	bool fresh;

	u64map_slot(&l->seen, (uint64_t)pid, &fresh);
	if (!fresh)
		return;
	l->v = xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
	l->v[l->n++] = pid;
}

static void pidlist_free(struct pidlist *l)
{
	free(l->v);
	u64map_free(&l->seen);
}

/* The target processes (keep; with children their running descendants
 * too), and their running descendants that are not (skip): the rest of
 * their family, whose records the per-CPU events also see.  -ESRCH after
 * one line when a target is not there. */
static int target_processes(const struct prof_target_spec *t, struct pidlist *keep, struct pidlist *skip)
{
	pid_t *kids;
	size_t nkids;

	for (size_t i = 0; i < t->n; i++) {
		if (!prof_proc_exists(t->pids[i]))
			return error("no process with pid %d", (int)t->pids[i]), -ESRCH;
		pidlist_add(keep, t->pids[i]);
	}
	for (size_t i = 0; i < t->n; i++) {
		if (prof_proc_descendants(t->pids[i], &kids, &nkids) < 0)
			continue;
		for (size_t k = 0; k < nkids; k++)
			if (t->children && kids[k] != getpid())	/* prof -p $$ */
				pidlist_add(keep, kids[k]);
			else if (!u64map_get(&keep->seen, (uint64_t)kids[k], NULL))
				pidlist_add(skip, kids[k]);
		free(kids);
	}
	return 0;
}

/* The CPU event on cpu, and the off-CPU events beside it (their failure
 * on one CPU only costs that CPU's off-CPU time, as a thread's does). */
static int open_cpu(struct prof_perf *pf, struct prof_offcpu *oc, int cpu)
{
	int ret = prof_perf_open_cpu(pf, cpu);

	if (!ret && oc)
		prof_offcpu_open_cpu(oc, cpu);
	return ret;
}

/* Every thread of pids but prof's own exists when the recording begins:
 * one off the CPU then is charged from the start.  Not with -C: a thread
 * that does not run on those CPUs may run on others. */
static void offcpu_present_all(struct prof_offcpu *oc, const pid_t *pids, size_t np)
{
	for (size_t i = 0; i < np; i++) {
		pid_t *tids;
		size_t n;
		if (pids[i] == getpid() || prof_proc_tids(pids[i], &tids, &n) < 0)
			continue;
		for (size_t t = 0; t < n; t++)
			prof_offcpu_present(oc, tids[t]);
		free(tids);
	}
}

/* The CPU events keep the targets' samples only, dropped in the kernel
 * before their stack copies: by the Python frame reader's program where
 * it is on them (an event takes one program), else by the plain filter.
 * Where neither can, the replay engine drops the rest. */
static void filter_cpu_samples(struct prof_perf *pf, struct prof_python *py, const pid_t *pids, size_t n)
{
	if (pf->targets) {	/* the plain program, there for prof's own samples */
		(void)prof_bpf_targets_only(pf->targets, pids, n);
		return;
	}
	if (pf->bpf_prog > 0) {
		if (py)
			(void)prof_python_only(py, pids, n);
		return;
	}
	if ((pf->targets = prof_bpf_targets_open(pids, n)))
		pf->bpf_prog = prof_bpf_targets_prog(pf->targets);
}

/*
 * Per CPU: the events of -a, whose records the replay engine and the
 * off-CPU accountant keep for the targets and what they fork only.  Why:
 * an event per thread is switched out and in with its thread, inside
 * every context switch of the target (its cpu-clock timer stopped and
 * restarted); on a server that blocks tens of thousands of times a
 * second, that is the server's cost (docs/offcpu.md).  Per CPU, a switch
 * costs what it costs under -a.  1, or 0 when it cannot be done this way
 * (the caller attaches per thread), or -errno after one line.
 */
static int attach_per_cpu(struct prof_perf *pf, struct prof_replay *rp, const struct prof_target_spec *t,
			  struct prof_offcpu *oc, struct prof_restrack *rt)
{
	struct pidlist keep = { 0 }, skip = { 0 };
	int ret = target_processes(t, &keep, &skip);

	if (ret == 0 && oc && prof_offcpu_only(oc, keep.v, keep.n) < 0)
		ret = 0;	/* no in-kernel accountant to filter the off-CPU events */
	else if (ret == 0)
		ret = 1;
	if (ret > 0)
		filter_cpu_samples(pf, t->py, keep.v, keep.n);
	for (int cpu = 0; cpu < pf->ncpus && ret > 0; cpu++)
		if ((ret = open_cpu(pf, oc, cpu)) >= 0 || ret == -ENODEV)	/* offline */
			ret = 1;
	if (ret > 0) {
		prof_replay_only(rp, keep.v, keep.n, skip.v, skip.n);
		for (size_t i = 0; i < keep.n; i++)
			if (prof_replay_add_process(rp, keep.v[i]) == 0 && rt)	/* else: just exited */
				prof_restrack_add_attached(rt, (uint32_t)keep.v[i]);
		if (oc)
			offcpu_present_all(oc, keep.v, keep.n);
	}
	pidlist_free(&keep);
	pidlist_free(&skip);
	return ret;
}

int prof_target_attach(struct prof_perf *pf, struct prof_replay *rp, const struct prof_target_spec *t,
		       struct prof_offcpu *oc, struct prof_restrack *rt)
{
	int ret = 0;

	if (!t->per_thread && !t->ntids && !pf->cfg.no_inherit && prof_perf_may_record_cpus())
		ret = attach_per_cpu(pf, rp, t, oc, rt);
	if (!ret)
		ret = attach_per_thread(pf, rp, t, oc, rt);
	/* Before the events are enabled, so that the first switch-outs
	 * already read Python frames; after the attach, because looked at
	 * before it, children born in the recording went unfollowed (t4130;
	 * the cause was not found). */
	if (ret >= 0 && t->py)
		prof_python_look_at(t->py, t->pids, t->n);
	return ret;
}

int prof_target_system_wide(struct prof_perf *pf, struct prof_replay *rp, const int *cpus,
			    size_t n, struct prof_offcpu *oc)
{
	pid_t *pids;
	size_t np;
	int ret = 0;

	for (size_t i = 0; cpus && i < n && !ret; i++)
		if ((ret = open_cpu(pf, oc, cpus[i])) == -ENODEV)
			error("CPU %d is offline", cpus[i]);
	for (int cpu = 0; !cpus && cpu < pf->ncpus && !ret; cpu++) {
		ret = open_cpu(pf, oc, cpu);
		if (ret == -ENODEV)	/* offline: not an error without -C */
			ret = 0;
	}
	if (ret < 0)
		return ret;
	if ((ret = prof_proc_pids(&pids, &np)) < 0)
		return error("cannot list /proc: %s", strerror(-ret)), ret;
	for (size_t i = 0; i < np; i++)
		prof_replay_add_process(rp, pids[i]);	/* -ESRCH: it just exited */
	if (oc && !cpus)
		offcpu_present_all(oc, pids, np);
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
