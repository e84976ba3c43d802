/*
 * timeline.c - the /proc sampler of `prof record` (see
 * include/prof/restrack.h): resource totals per process and thread, and
 * the per-process timeline of RSS, CPU% and I/O-wait%.  Parsing reuses
 * prof_proc_parse_stat_field / prof_proc_parse_keyed / prof_proc_parse_io (src/proc/parse.c).
 *
 * Design notes / invariants:
 *  - A sampler thread reads /proc every 100 ms, whatever the main loop is
 *    doing (the first drain of a big program can take a second while its
 *    debug info loads).  It never touches the profile: it updates the
 *    private tables res / procs and queues timeline points in `points`.
 *    The main thread moves them into the profile (merge) after each drain.
 *    Everything in struct prof_restrack below `lock` is guarded by it.
 *  - procs holds every process ever tracked (the command, attach targets,
 *    and their descendants found through FORK records or the /proc
 *    children files); .alive drops to false the
 *    first time /proc/PID/stat cannot be read (or at its final reading),
 *    and a dead process is never read again (its pid may be reused).
 *  - res is indexed by res_index; res_dirty marks the entries changed
 *    since the last merge, so a merge copies only those into the profile.
 *  - Totals only grow: a reading that fails keeps the previous values,
 *    and rss_peak_bytes is the maximum of every VmHWM / ru_maxrss seen.
 *  - The recording window: a process that ran before the recording (an
 *    attach target, or one of its descendants with --children) has a
 *    baseline, its and its threads' /proc readings at prof_restrack_start,
 *    and every figure stored is the reading minus the baseline.  Its peak
 *    RSS is VmHWM only when VmHWM grew in the window (the peak is then in
 *    it), else the largest RSS read.  Threads and processes born in the
 *    window have a zero baseline: the kernel starts their counters at 0.
 *    base is index-aligned with res.
 *  - not_ours: children that already ran when their parent was attached
 *    without them (no --children); the /proc children walk skips them, so
 *    only processes that are sampled are listed.
 *  - A process's context switches are the sum over its threads' values
 *    (the kernel reports them per task only).
 *  - Timeline points: t is CLOCK_MONOTONIC (the clock of the samples);
 *    CPU% = delta(utime+stime) / delta(t), from the sampler; I/O-wait% is
 *    filled at merge time from the off-CPU I/O intervals overlapping
 *    (t_prev, t] (an interval still open at merge time is not counted).
 *    Both may exceed 100 with several threads.
 */
#include "prof/restrack.h"
#include "prof/proc.h"
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct proc_state {
	uint32_t pid;
	bool alive;
	bool attached;			/* ran before: take a baseline at start */
	bool threads_read;		/* its threads' files were read in this round */
	bool single;			/* one thread at its last reading, and never more */
	bool had_threads;		/* more than one thread seen at some reading */
	uint64_t last_t, last_cpu_ns;
	uint64_t due, every;		/* read it again from due, every `every` ns */
	uint64_t threads_due;		/* read its threads' files again from then */
};

/* Each file read costs 4-14 us (kernel-notes/offcpu.md), three of the
 * process's (stat, status, io) and three of each thread's (stat, status,
 * children).  Read in every 100-ms round, a process of 1,001 idle threads
 * cost the recorder 35% of a CPU (prof record -p of it for 10 s: 3.8 s
 * of CPU, 0.1 s with --no-resources) and 300 sleeping child processes
 * (--children) 24%.  So with P processes each is read every P x 2 ms,
 * and a process's threads, which only feed per-thread totals and the
 * search for new children (the process's own files give its timeline and
 * its totals, dead threads included), every N x 2 ms for N threads; both
 * at least every round.  A thread that exits loses at most that much of
 * its own counters; the timeline's points are that far apart.  The files
 * stay open between rounds (src/proc/files.c): a read of an open file
 * costs a third of an open, read and close. */
#define PROC_READ_NS 2000000ULL
#define THREAD_READ_NS 2000000ULL

struct point {
	struct prof_timeline_sample s;
	uint64_t t_prev;		/* start of its interval, 0 for the first */
};

struct prof_restrack {
	struct prof_profile *p;
	struct prof_offcpu *oc;
	uint64_t tick_ns, page_size;
	pthread_t thread;
	bool thread_started;

	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool stop;
	VEC(struct proc_state) procs;
	VEC(struct prof_resources) res;	/* unique (pid, tid) */
	VEC(struct prof_resources) base;	/* index-aligned: raw readings at the start */
	VEC(bool) res_dirty;		/* index-aligned: changed since the last merge */
	struct u64map not_ours;		/* pid -> 1: ran before, parent attached alone */
	struct u64map res_index;	/* pid << 32 | tid -> index + 1 */
	VEC(struct point) points;	/* not merged yet */
	struct prof_proc_files *files;	/* the files read each round, kept open */
};

/* --- /proc readings (lock held) ------------------------------------------------ */

static struct prof_resources *res_slot(struct prof_restrack *rt, uint32_t pid, uint32_t tid)
{
	uint64_t key = (uint64_t)pid << 32 | tid, v;

	if (u64map_get(&rt->res_index, key, &v))
		return &rt->res.v[v - 1];
	VEC_PUSH(&rt->res, ((struct prof_resources){ .pid = pid, .tid = tid }));
	VEC_PUSH(&rt->base, ((struct prof_resources){ .pid = pid, .tid = tid }));
	VEC_PUSH(&rt->res_dirty, true);
	u64map_put(&rt->res_index, key, rt->res.n);
	return &rt->res.v[rt->res.n - 1];
}

/* Index of the slot of (pid, tid) in res and base (created on first use). */
static size_t slot_index(struct prof_restrack *rt, uint32_t pid, uint32_t tid)
{
	struct prof_resources *slot = res_slot(rt, pid, tid);	/* may grow res */

	return (size_t)(slot - rt->res.v);
}

/* Stores r in its slot and marks it for the next merge when it changed. */
static void res_store(struct prof_restrack *rt, const struct prof_resources *r)
{
	struct prof_resources *slot = res_slot(rt, r->pid, r->tid);

	if (memcmp(slot, r, sizeof(*r))) {
		*slot = *r;
		rt->res_dirty.v[slot - rt->res.v] = true;
	}
}

static struct proc_state *proc_find(struct prof_restrack *rt, uint32_t pid)
{
	for (size_t i = rt->procs.n; i-- > 0;)	/* newest first: pids get reused */
		if (rt->procs.v[i].pid == pid)
			return &rt->procs.v[i];
	return NULL;
}

static char *read_proc(struct prof_restrack *rt, uint32_t pid, uint32_t tid, const char *name)
{
	return prof_proc_files_read(rt->files, (pid_t)pid, (pid_t)tid, name, NULL);
}

/* Raw utime, stime, minflt, majflt of a stat line into raw; 0 / -EINVAL. */
static int parse_stat(const struct prof_restrack *rt, const char *stat, struct prof_resources *raw)
{
	uint64_t ut, st;

	if (prof_proc_parse_stat_field(stat, 10, &raw->minflt) < 0 ||
	    prof_proc_parse_stat_field(stat, 12, &raw->majflt) < 0 ||
	    prof_proc_parse_stat_field(stat, 14, &ut) < 0 || prof_proc_parse_stat_field(stat, 15, &st) < 0)
		return -EINVAL;
	raw->user_ns = ut * rt->tick_ns;
	raw->sys_ns = st * rt->tick_ns;
	return 0;
}

static uint64_t since(uint64_t now, uint64_t base)
{
	return now > base ? now - base : 0;
}

/*
 * Folds a raw reading of (raw->pid, raw->tid) into its stored totals:
 * minus the baseline, never below what was stored before.  rss is the
 * current RSS of a process (0 for a thread).
 */
static void res_update(struct prof_restrack *rt, const struct prof_resources *raw, uint64_t rss)
{
	size_t i = slot_index(rt, raw->pid, raw->tid);
	struct prof_resources r = rt->res.v[i];
	const struct prof_resources *b = &rt->base.v[i];
	uint64_t peak = raw->rss_peak_bytes > b->rss_peak_bytes ? raw->rss_peak_bytes : rss;

	r.user_ns = MAX(r.user_ns, since(raw->user_ns, b->user_ns));
	r.sys_ns = MAX(r.sys_ns, since(raw->sys_ns, b->sys_ns));
	r.minflt = MAX(r.minflt, since(raw->minflt, b->minflt));
	r.majflt = MAX(r.majflt, since(raw->majflt, b->majflt));
	r.vol_cs = MAX(r.vol_cs, since(raw->vol_cs, b->vol_cs));
	r.invol_cs = MAX(r.invol_cs, since(raw->invol_cs, b->invol_cs));
	r.io_read_bytes = MAX(r.io_read_bytes, since(raw->io_read_bytes, b->io_read_bytes));
	r.io_write_bytes = MAX(r.io_write_bytes, since(raw->io_write_bytes, b->io_write_bytes));
	r.rss_peak_bytes = MAX(r.rss_peak_bytes, MAX(peak, rss));
	res_store(rt, &r);
}

/* A thread's context switches from its status file (a process's file
 * counts its leader's). */
static void parse_switches(const char *status, struct prof_resources *raw)
{
	prof_proc_parse_keyed(status, "\nvoluntary_ctxt_switches:", &raw->vol_cs);
	prof_proc_parse_keyed(status, "\nnonvoluntary_ctxt_switches:", &raw->invol_cs);
}

/* One thread's raw counters from /proc/PID/task/TID; false when unreadable. */
static bool read_thread(struct prof_restrack *rt, uint32_t pid, uint32_t tid,
			struct prof_resources *raw)
{
	char *stat = read_proc(rt, pid, tid, "stat"), *status = read_proc(rt, pid, tid, "status");
	bool ok = stat && parse_stat(rt, stat, raw) == 0;

	if (ok && status)
		parse_switches(status, raw);
	free(stat);
	free(status);
	return ok;
}

static bool sample_thread(struct prof_restrack *rt, uint32_t pid, uint32_t tid)
{
	struct prof_resources raw = { .pid = pid, .tid = tid };

	if (!read_thread(rt, pid, tid, &raw))
		return false;
	res_update(rt, &raw, 0);
	return true;
}

static void sum_thread_switches(struct prof_restrack *rt, struct prof_resources *proc)
{
	uint64_t vol = 0, invol = 0;

	for (size_t i = 0; i < rt->res.n; i++) {
		const struct prof_resources *t = &rt->res.v[i];
		if (t->pid == proc->pid && t->tid) {
			vol += t->vol_cs;
			invol += t->invol_cs;
		}
	}
	proc->vol_cs = MAX(proc->vol_cs, vol);
	proc->invol_cs = MAX(proc->invol_cs, invol);
}

/* Reads the files of pid's threads; how many it has. */
static size_t sample_threads(struct prof_restrack *rt, uint32_t pid, bool final)
{
	pid_t *tids;
	size_t n;

	if (final) {	/* a zombie: only the leader's entry is left */
		sample_thread(rt, pid, pid);
		return 1;
	}
	if (prof_proc_tids((pid_t)pid, &tids, &n) < 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		sample_thread(rt, pid, (uint32_t)tids[i]);
	free(tids);
	return n;
}

/*
 * A process's raw counters, VmHWM (as rss_peak_bytes) and /proc/PID/io;
 * its current RSS in *rss.  False when the process is gone.
 *
 * Most server processes have one thread (PostgreSQL's backends, forked
 * workers), and then the process's stat and status are its thread's
 * counters too: that thread's two files, and the listing of its task
 * directory, need not be read.  Only while it never had another thread,
 * whose CPU time would stay in the process's totals after it exited.
 */
static bool read_process(struct prof_restrack *rt, struct proc_state *ps, struct prof_resources *raw,
			 uint64_t *rss, struct prof_resources *leader)
{
	char *stat = read_proc(rt, ps->pid, 0, "stat"), *status, *io;
	uint64_t v, nthreads = 0;

	*rss = 0;
	if (!stat || parse_stat(rt, stat, raw) < 0) {
		free(stat);
		return false;
	}
	if (prof_proc_parse_stat_field(stat, 24, &v) == 0)
		*rss = v * rt->page_size;
	prof_proc_parse_stat_field(stat, 20, &nthreads);
	free(stat);
	ps->had_threads |= nthreads > 1;
	ps->single = nthreads == 1 && !ps->had_threads;
	*leader = (struct prof_resources){ .pid = ps->pid, .tid = ps->pid, .user_ns = raw->user_ns,
					   .sys_ns = raw->sys_ns, .minflt = raw->minflt, .majflt = raw->majflt };
	if ((status = read_proc(rt, ps->pid, 0, "status"))) {
		if (prof_proc_parse_keyed(status, "\nVmHWM:", &v) == 0)
			raw->rss_peak_bytes = v * 1024;
		parse_switches(status, leader);
	}
	free(status);
	if ((io = read_proc(rt, ps->pid, 0, "io")))
		prof_proc_parse_io(io, &raw->io_read_bytes, &raw->io_write_bytes);
	free(io);
	return true;
}

static void queue_point(struct prof_restrack *rt, struct proc_state *ps, uint64_t now,
			uint64_t rss, uint64_t cpu)
{
	struct point pt = { .s = { .t_ns = now, .pid = ps->pid, .rss_bytes = rss }, .t_prev = ps->last_t };

	if (ps->last_t && now > ps->last_t)
		pt.s.cpu_pct_x100 = (uint32_t)(1e4 * (double)since(cpu, ps->last_cpu_ns) /
					       (double)(now - ps->last_t) + 0.5);
	VEC_PUSH(&rt->points, pt);
	ps->last_t = now;
	ps->last_cpu_ns = cpu;
}

/* Process totals + a queued timeline point; false when the process is gone. */
static bool sample_process(struct prof_restrack *rt, struct proc_state *ps, bool final)
{
	struct prof_resources raw = { .pid = ps->pid }, leader, *r;
	uint64_t now = now_ns(), rss;

	if (!read_process(rt, ps, &raw, &rss, &leader))
		return false;
	ps->threads_read = final || now >= ps->threads_due;
	if (ps->single)
		res_update(rt, &leader, 0);
	if (ps->threads_read) {
		size_t n = ps->single ? 1 : sample_threads(rt, ps->pid, final);
		uint64_t every = MAX(MAX(PROF_RESTRACK_INTERVAL_NS, ps->every), n * THREAD_READ_NS);
		ps->threads_due = now + every - PROF_RESTRACK_INTERVAL_NS / 2;	/* a late round still reads */
	}
	res_update(rt, &raw, rss);
	r = res_slot(rt, ps->pid, 0);
	struct prof_resources sum = *r;
	sum_thread_switches(rt, &sum);
	res_store(rt, &sum);
	queue_point(rt, ps, now, rss, sum.user_ns + sum.sys_ns);
	return true;
}

/* The readings every later one of an attached process is measured from,
 * and the first point of its timeline (the window's start). */
static void take_baseline(struct prof_restrack *rt, struct proc_state *ps)
{
	struct prof_resources raw = { .pid = ps->pid }, leader;
	uint64_t now = now_ns(), rss;
	pid_t *tids;
	size_t n, slot;

	ps->attached = false;
	if (!read_process(rt, ps, &raw, &rss, &leader))
		return;
	slot = slot_index(rt, ps->pid, 0);	/* may grow base: index it after */
	rt->base.v[slot] = raw;
	if (ps->single) {	/* measured from the same files as its readings */
		slot = slot_index(rt, ps->pid, ps->pid);
		rt->base.v[slot] = leader;
	} else if (prof_proc_tids((pid_t)ps->pid, &tids, &n) == 0) {
		for (size_t i = 0; i < n; i++) {
			struct prof_resources t = { .pid = ps->pid, .tid = (uint32_t)tids[i] };
			if (read_thread(rt, ps->pid, t.tid, &t)) {
				slot = slot_index(rt, ps->pid, t.tid);
				rt->base.v[slot] = t;
			}
		}
		free(tids);
	}
	queue_point(rt, ps, now, rss, 0);
}

static void add_pid_locked(struct prof_restrack *rt, uint32_t pid);

/* Children of every thread of pid (/proc/PID/task/TID/children): the
 * sampler finds a new process when it next reads pid's threads (every
 * round below 50 threads), even when the drain that brings its FORK
 * record is late. */
static void discover_children(struct prof_restrack *rt, uint32_t pid, bool single)
{
	pid_t *kids;
	size_t n;
	uint64_t skip;

	if ((single ? prof_proc_leader_children : prof_proc_children)(rt->files, (pid_t)pid, &kids, &n) < 0)
		return;
	for (size_t i = 0; i < n; i++)
		if (!(u64map_get(&rt->not_ours, (uint64_t)kids[i], &skip) && skip))
			add_pid_locked(rt, (uint32_t)kids[i]);
	free(kids);
}

static void sample_all(struct prof_restrack *rt)
{
	size_t n = rt->procs.n, alive = 0;	/* discover_children may append */
	uint64_t now = now_ns(), every;

	for (size_t i = 0; i < n; i++)
		alive += rt->procs.v[i].alive;
	every = MAX(PROF_RESTRACK_INTERVAL_NS, alive * PROC_READ_NS);
	for (size_t i = 0; i < n; i++) {
		struct proc_state *ps = &rt->procs.v[i];
		if (!ps->alive || now < ps->due)
			continue;
		ps->due = now + every - PROF_RESTRACK_INTERVAL_NS / 2;	/* a late round still reads */
		ps->every = every;
		if (!sample_process(rt, ps, false))
			ps->alive = false;
		else if (ps->threads_read)
			discover_children(rt, ps->pid, ps->single);	/* may move procs.v: ps is not used after */
	}
}

/* --- the sampler thread ---------------------------------------------------------- */

static void *sampler_main(void *arg)
{
	struct prof_restrack *rt = arg;
	struct timespec next;

	pthread_setname_np(pthread_self(), "prof-resources");
	clock_gettime(CLOCK_MONOTONIC, &next);
	pthread_mutex_lock(&rt->lock);
	while (!rt->stop) {
		sample_all(rt);
		next.tv_nsec += (long)PROF_RESTRACK_INTERVAL_NS;
		if (next.tv_nsec >= 1000000000L) {
			next.tv_sec++;
			next.tv_nsec -= 1000000000L;
		}
		while (!rt->stop && pthread_cond_timedwait(&rt->wake, &rt->lock, &next) == 0)
			;	/* woken early without stop: keep waiting */
	}
	pthread_mutex_unlock(&rt->lock);
	return NULL;
}

struct prof_restrack *prof_restrack_new(struct prof_profile *p, struct prof_offcpu *oc)
{
	struct prof_restrack *rt = xcalloc(1, sizeof(*rt));
	pthread_condattr_t ca;
	long tck = sysconf(_SC_CLK_TCK);

	rt->p = p;
	rt->oc = oc;
	rt->tick_ns = 1000000000ULL / (uint64_t)(tck > 0 ? tck : 100);
	rt->page_size = (uint64_t)sysconf(_SC_PAGESIZE);
	rt->files = prof_proc_files_new();
	pthread_mutex_init(&rt->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&rt->wake, &ca);
	pthread_condattr_destroy(&ca);
	return rt;
}

void prof_restrack_start(struct prof_restrack *rt)
{
	pthread_mutex_lock(&rt->lock);
	for (size_t i = 0; i < rt->procs.n; i++)
		if (rt->procs.v[i].attached && rt->procs.v[i].alive)
			take_baseline(rt, &rt->procs.v[i]);
	pthread_mutex_unlock(&rt->lock);
	if (!rt->thread_started && thread_start_nosignals(&rt->thread, sampler_main, rt) == 0)
		rt->thread_started = true;
}

static void stop_thread(struct prof_restrack *rt)
{
	if (!rt->thread_started)
		return;
	pthread_mutex_lock(&rt->lock);
	rt->stop = true;
	pthread_cond_signal(&rt->wake);
	pthread_mutex_unlock(&rt->lock);
	pthread_join(rt->thread, NULL);
	rt->thread_started = false;
}

void prof_restrack_free(struct prof_restrack *rt)
{
	if (!rt)
		return;
	stop_thread(rt);
	pthread_mutex_destroy(&rt->lock);
	pthread_cond_destroy(&rt->wake);
	VEC_FREE(&rt->procs);
	VEC_FREE(&rt->res);
	VEC_FREE(&rt->base);
	VEC_FREE(&rt->res_dirty);
	u64map_free(&rt->not_ours);
	u64map_free(&rt->res_index);
	VEC_FREE(&rt->points);
	prof_proc_files_free(rt->files);
	free(rt);
}

/* --- main-thread side -------------------------------------------------------------- */

static void add_pid_locked(struct prof_restrack *rt, uint32_t pid)
{
	struct proc_state *ps = proc_find(rt, pid);

	if (!ps || !ps->alive)
		VEC_PUSH(&rt->procs, ((struct proc_state){ .pid = pid, .alive = true }));
}

void prof_restrack_add_pid(struct prof_restrack *rt, uint32_t pid)
{
	pthread_mutex_lock(&rt->lock);
	add_pid_locked(rt, pid);
	pthread_mutex_unlock(&rt->lock);
}

/* The children pid has now; those not tracked become not_ours. */
static void mark_children_not_ours(struct prof_restrack *rt, uint32_t pid)
{
	pid_t *kids;
	size_t n;

	if (prof_proc_children(NULL, (pid_t)pid, &kids, &n) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		struct proc_state *ps = proc_find(rt, (uint32_t)kids[i]);
		if (!ps || !ps->alive)
			u64map_put(&rt->not_ours, (uint64_t)kids[i], 1);
	}
	free(kids);
}

void prof_restrack_add_attached(struct prof_restrack *rt, uint32_t pid)
{
	pthread_mutex_lock(&rt->lock);
	u64map_put(&rt->not_ours, pid, 0);
	add_pid_locked(rt, pid);
	proc_find(rt, pid)->attached = true;
	mark_children_not_ours(rt, pid);
	pthread_mutex_unlock(&rt->lock);
}

/* Moves the sampler's news into the profile (lock held). */
static void merge_locked(struct prof_restrack *rt)
{
	uint64_t oldest = UINT64_MAX;

	for (size_t i = 0; i < rt->res.n; i++)
		if (rt->res_dirty.v[i]) {
			prof_resources_set(rt->p, &rt->res.v[i]);
			rt->res_dirty.v[i] = false;
		}
	for (size_t i = 0; i < rt->points.n; i++) {
		struct point *pt = &rt->points.v[i];
		if (pt->t_prev && pt->s.t_ns > pt->t_prev) {
			uint64_t io = prof_offcpu_iowait_between(rt->oc, pt->s.pid, pt->t_prev, pt->s.t_ns);
			pt->s.io_wait_pct_x100 = (uint32_t)(1e4 * (double)io /
							    (double)(pt->s.t_ns - pt->t_prev) + 0.5);
		}
		VEC_PUSH(&rt->p->timeline, pt->s);
		oldest = MIN(oldest, pt->s.t_ns);
		/* The window the figures cover is the recording's, too. */
		if (!rt->p->start_ns || pt->s.t_ns < rt->p->start_ns)
			rt->p->start_ns = pt->s.t_ns;
		rt->p->end_ns = MAX(rt->p->end_ns, pt->s.t_ns);
	}
	rt->points.n = 0;
	/* Later points start at or after the newest merged point of their
	 * pid; the oldest of those bounds what can still be asked. */
	if (oldest != UINT64_MAX) {
		uint64_t keep = UINT64_MAX;
		for (size_t i = 0; i < rt->procs.n; i++)
			if (rt->procs.v[i].alive && rt->procs.v[i].last_t)
				keep = MIN(keep, rt->procs.v[i].last_t);
		if (keep != UINT64_MAX)
			prof_offcpu_io_prune(rt->oc, keep);
	}
}

void prof_restrack_sample(struct prof_restrack *rt)
{
	pthread_mutex_lock(&rt->lock);
	for (size_t i = 0; i < rt->procs.n; i++)
		rt->procs.v[i].due = rt->procs.v[i].threads_due = 0;	/* final values: all */
	sample_all(rt);
	merge_locked(rt);
	pthread_mutex_unlock(&rt->lock);
}

void prof_restrack_final(struct prof_restrack *rt, uint32_t pid)
{
	pthread_mutex_lock(&rt->lock);
	struct proc_state *ps = proc_find(rt, pid);
	if (ps && ps->alive) {
		sample_process(rt, ps, true);
		ps->alive = false;
	}
	merge_locked(rt);
	pthread_mutex_unlock(&rt->lock);
}

void prof_restrack_rusage(struct prof_restrack *rt, uint32_t pid, const struct rusage *ru)
{
	if (!ru)
		return;
	pthread_mutex_lock(&rt->lock);
	struct prof_resources r = *res_slot(rt, pid, 0);
	/* ru_maxrss (KiB) is the largest peak of the command or of any one
	 * waited-for descendant: exact even for a spike just before exit,
	 * but only the command's own when it started no other process. */
	if (rt->procs.n == 1)
		r.rss_peak_bytes = MAX(r.rss_peak_bytes, (uint64_t)ru->ru_maxrss * 1024);
	res_store(rt, &r);
	merge_locked(rt);
	pthread_mutex_unlock(&rt->lock);
}

/* --- consumer of the replay engine ------------------------------------------- */

/* After each batch (the off-CPU intervals of it are charged by then). */
static void on_batch_end(void *arg)
{
	struct prof_restrack *rt = arg;

	pthread_mutex_lock(&rt->lock);
	merge_locked(rt);
	pthread_mutex_unlock(&rt->lock);
}

static void on_task(void *arg, const struct prof_perf_task *t, bool exit)
{
	struct prof_restrack *rt = arg;

	pthread_mutex_lock(&rt->lock);
	if (!exit) {
		if (t->pid != t->ppid)
			add_pid_locked(rt, t->pid);
	} else {
		/* EXIT: the thread's /proc entry is usually gone already
		 * (threads are reaped at exit); if it is still there, these
		 * are its final values.  A main thread's exit may leave a
		 * zombie the parent has not reaped yet: the process's final
		 * values then. */
		struct proc_state *ps = proc_find(rt, t->pid);
		if (ps && ps->alive && t->tid == t->pid) {
			ps->threads_due = 0;
			sample_process(rt, ps, false);
		}
		else if (ps && ps->alive)
			sample_thread(rt, t->pid, t->tid);
	}
	pthread_mutex_unlock(&rt->lock);
}

static const struct prof_replay_ops restrack_ops = {
	.task = on_task,
	.batch_end = on_batch_end,
};

void prof_restrack_attach(struct prof_restrack *rt, struct prof_replay *rp)
{
	prof_replay_add_consumer(rp, &restrack_ops, rt);
}
