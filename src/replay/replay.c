/*
 * replay.c - the replay engine (see include/prof/replay.h): gives perf
 * records their meaning once, for live recording and perf.data import
 * alike, and hands resolved samples and the other events to consumers.
 *
 * Design notes / invariants:
 *  - spaces maps pid -> struct prof_addrspace *.  A space is created on
 *    FORK of a new process (a copy of the parent's), for a launched child
 *    (empty), at attach or at first sight of a pid (live: from
 *    /proc/PID/maps; a file: empty, its MMAP records fill it), and is
 *    replaced by an empty one at COMM with MISC_COMM_EXEC.  A pid seen
 *    again after its space was freed gets a new one the same way.
 *  - The image before an exec stays, with the exec'ing thread's name then,
 *    for EXEC_KEPT_NS of the samples' time (`execs`): a sample timed
 *    before the exec that comes after it (the off-CPU accountant's,
 *    replayed at the batch's end) is unwound in the image it was taken in
 *    and goes to the thread as it was then, not to the new program; one
 *    taken inside the exec, whose user registers are still the old
 *    image's, names the old image's call of execve.
 *  - Live only: nthreads maps pid -> threads not yet EXITed.  When it
 *    drops to 0 the space is `exiting`: still the pid's until the end of
 *    the batch, when it moves to `dead` and is freed, since a sample of
 *    the exiting process may still come behind the EXIT (records within
 *    a few microseconds of each other on two CPUs; the off-CPU
 *    accountant's samples, replayed at the batch's end).  A file keeps every space: with no count of the
 *    threads that existed before recording, an EXIT cannot tell the last.
 *  - tasks maps tid -> index + 1 into task, the thread's name (string id)
 *    and its profile thread + 1 (0 until its first sample, so threads
 *    without samples do not show up).  FORK gives a new thread its
 *    creator's name; COMM renames in place; COMM-exec gives the thread a
 *    new identity (prof_thread_add at its next sample): samples before an
 *    exec keep the old name, those after it the new image's.
 *  - A thread's records may come after it was first named: a consumer
 *    asks for its identity from state the kernel keeps (the off-CPU
 *    accountant's totals), which runs ahead of the rings, and a COMM
 *    may be replayed before the FORK.  The kernel reuses a tid only
 *    after its thread exited, so FORK starts a new identity only for a
 *    tid whose task saw its EXIT (or belongs to another process); else
 *    the identity and name it already has are the new thread's own.
 *  - The per-sample path uses only fixed buffers here: no allocation
 *    (beyond first-seen frames/nodes in the model) and no syscalls,
 *    except (live) reading /proc/TID/comm once per new thread.
 *  - Stacks are innermost first: kernel frames, then user frames; every
 *    user pc but the first is a return address.
 *  - Live only: a lost EXIT record (ring full: common system-wide on a
 *    busy machine) would keep a space forever, so about once a second
 *    batch_end sweeps the spaces of pids that no longer exist, and gives
 *    freed pages back (malloc_trim): memory follows the live processes,
 *    not every process the recording saw.  A pid found gone at time T
 *    (CLOCK_MONOTONIC, the clock of the records) is freed only once the
 *    samples fed have passed T: a process that exited while its samples
 *    still wait in a backlog needs its space for them.
 */
#include "prof/replay.h"
#include "prof/proc.h"
#include "pysplice-priv.h"
#include "prof/symbol.h"
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <unistd.h>

#define MAX_OUT_FRAMES (PROF_MAX_FRAMES * 4)
#define MAX_STACK_DEFAULT 127	/* sysctl kernel.perf_event_max_stack */

struct task {
	uint32_t pid;
	uint32_t comm;		/* string id, 0 = not known */
	uint32_t thread;	/* profile thread + 1, 0 = none yet */
	bool fresh;		/* exec'd: the next identity is a new one */
	bool exited;		/* EXIT seen (since its identity, if any, was
				 * made): a FORK of the tid is another thread */
	uint32_t pending[2];	/* its fork / exec events + 1, waiting for the
				 * identity they start (made at its next sample) */
};

/* A process's image before an exec replayed in this batch. */
struct exec_past {
	uint32_t pid, tid;		/* the exec'ing thread */
	uint32_t comm;			/* its name before, 0 = not known */
	uint32_t thread;		/* its profile thread then + 1; 0 = none yet */
	uint64_t time;			/* the exec's */
	struct prof_addrspace *as;	/* the old image (retire_execs frees it) */
	bool ran;			/* a sample has shown the new image running */
};

/* The longest an image left by exec is kept, in the samples' time, for a
 * new image not seen running. */
#define EXEC_KEPT_NS 1000000000ULL

struct consumer {
	const struct prof_replay_ops *ops;
	void *arg;
};

struct prof_replay {
	struct prof_replay_config cfg;
	struct prof_profile *p;
	struct prof_symbolizer *sym;
	struct prof_unwinder *unw;	/* created at the first stack copy */
	struct prof_pysplice *pysplice;	/* NULL without cfg.python */
	struct u64map spaces, nthreads, seen_pids, tasks;
	VEC(struct task) task;
	VEC(struct prof_addrspace *) dead;
	VEC(struct prof_addrspace *) exiting;	/* still mapped by their pid until the batch ends */
	VEC(struct exec_past) execs;	/* this batch's execs, for the samples timed before */
	VEC(struct consumer) consumers;
	pid_t self;			/* live: prof's own pid, else 0 */
	bool only;			/* prof_replay_only */
	struct u64map only_pids;	/* pid -> ONLY_KEPT / ONLY_DROPPED, as decided */
	uint64_t next_sweep;		/* live: CLOCK_MONOTONIC ns */
	struct u64map suspects;		/* pid -> CLOCK_MONOTONIC ns it was first seen gone */
	uint64_t last_time;		/* the newest sample time fed */
	size_t spaces_peak, spaces_freed;	/* prof_replay_space_stats */
	bool kernel_checked;
	uint64_t pcs[PROF_MAX_FRAMES];
	size_t npcs;			/* user pcs of the last DWARF unwind */
	struct prof_unwind_result ures;	/* the last DWARF unwind's result, with the stack words it read */
	bool unwound;			/* the last sample had a stack copy unwound */
	bool before_exec;		/* the last sample was of an image since left by exec */
	uint32_t frames[MAX_OUT_FRAMES];
	size_t nframes;
	struct prof_user_regs regs;
};

#define FOR_EACH_CONSUMER(rp, c) \
	for (struct consumer *c = (rp)->consumers.v; c < (rp)->consumers.v + (rp)->consumers.n; c++)

struct prof_replay *prof_replay_new(const struct prof_replay_config *cfg)
{
	struct prof_replay *rp = xcalloc(1, sizeof(*rp));

	rp->cfg = *cfg;
	rp->p = cfg->p;
	rp->sym = prof_symbolizer_new(cfg->p);
	if (cfg->python)
		rp->pysplice = prof_pysplice_new(cfg->p, cfg->python);
	if (cfg->live) {
		prof_symbolizer_prewarm(rp->sym);	/* before sampling: see symbol.h */
		rp->self = getpid();
	}
	return rp;
}

/* as leaves the exiting list, if it is on it; true if it was. */
static bool drop_exiting(struct prof_replay *rp, const struct prof_addrspace *as)
{
	for (size_t i = 0; i < rp->exiting.n; i++)
		if (rp->exiting.v[i] == as) {
			rp->exiting.v[i] = rp->exiting.v[--rp->exiting.n];
			return true;
		}
	return false;
}

/* The batch is over: the exiting spaces are no longer their pids'. */
static void retire_exiting(struct prof_replay *rp)
{
	for (size_t i = 0; i < rp->exiting.n; i++) {
		struct prof_addrspace *as = rp->exiting.v[i];
		u64map_put(&rp->spaces, (uint64_t)as->pid, 0);
		VEC_PUSH(&rp->dead, as);
	}
	rp->exiting.n = 0;
}

static void free_dead(struct prof_replay *rp)
{
	for (size_t i = 0; i < rp->dead.n; i++)
		prof_addrspace_free(rp->dead.v[i]);
	rp->spaces_freed += rp->dead.n;
	rp->dead.n = 0;
}

void prof_replay_space_stats(const struct prof_replay *rp, size_t *peak_live, size_t *freed)
{
	*peak_live = rp->spaces_peak;
	*freed = rp->spaces_freed;
}

/* Counts the spaces alive now and keeps the peak. */
static void count_spaces(struct prof_replay *rp)
{
	size_t it = 0, live = 0;
	uint64_t pid, ptr;

	while (u64map_next(&rp->spaces, &it, &pid, &ptr))
		live += ptr != 0;
	rp->spaces_peak = MAX(rp->spaces_peak, live);
}

/* Moves the spaces of processes that are gone without an EXIT to dead. */
static void sweep_vanished(struct prof_replay *rp)
{
	struct u64map gone = { 0 };
	size_t it = 0, first = rp->dead.n;
	uint64_t pid, ptr, x;

	while (u64map_next(&rp->spaces, &it, &pid, &ptr)) {
		if (!ptr || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		if (!u64map_get(&rp->suspects, pid, &x))
			x = now_ns();
		if (rp->last_time > x)	/* the records have passed its death */
			VEC_PUSH(&rp->dead, (struct prof_addrspace *)(uintptr_t)ptr);
		else
			u64map_put(&gone, pid, x);
	}
	for (size_t i = first; i < rp->dead.n; i++)	/* no inserts while iterating */
		u64map_put(&rp->spaces, (uint64_t)rp->dead.v[i]->pid, 0);
	u64map_free(&rp->suspects);
	rp->suspects = gone;
}

void prof_replay_free(struct prof_replay *rp)
{
	size_t it = 0;
	uint64_t pid, ptr;

	if (!rp)
		return;
	free_dead(rp);
	while (u64map_next(&rp->spaces, &it, &pid, &ptr))
		prof_addrspace_free((struct prof_addrspace *)(uintptr_t)ptr);
	for (size_t i = 0; i < rp->execs.n; i++)
		prof_addrspace_free(rp->execs.v[i].as);
	u64map_free(&rp->spaces);
	u64map_free(&rp->nthreads);
	u64map_free(&rp->seen_pids);
	u64map_free(&rp->suspects);
	u64map_free(&rp->tasks);
	u64map_free(&rp->only_pids);
	VEC_FREE(&rp->task);
	VEC_FREE(&rp->dead);
	VEC_FREE(&rp->exiting);	/* still in spaces: freed above */
	VEC_FREE(&rp->execs);
	VEC_FREE(&rp->consumers);
	if (rp->unw)
		prof_unwinder_free(rp->unw);
	prof_symbolizer_free(rp->sym);
	prof_pysplice_free(rp->pysplice);
	free(rp);
}

void prof_replay_add_consumer(struct prof_replay *rp, const struct prof_replay_ops *ops, void *arg)
{
	VEC_PUSH(&rp->consumers, ((struct consumer){ ops, arg }));
}

void prof_replay_python_stats(const struct prof_replay *rp, struct prof_pysplice_stats *st)
{
	if (rp->pysplice)
		prof_pysplice_stats(rp->pysplice, st);
	else
		memset(st, 0, sizeof(*st));
}

size_t prof_replay_processes(const struct prof_replay *rp)
{
	return rp->seen_pids.n;
}

void prof_replay_count_sample(struct prof_profile *p, uint64_t time, bool complete)
{
	p->samples++;
	p->samples_truncated += !complete;
	if (!time)
		return;
	if (!p->start_ns || time < p->start_ns)
		p->start_ns = time;
	if (time > p->end_ns)
		p->end_ns = time;
}

/* --- address spaces ---------------------------------------------------------- */

static struct prof_addrspace *space_get(struct prof_replay *rp, uint32_t pid)
{
	uint64_t v;

	return u64map_get(&rp->spaces, pid, &v) ? (struct prof_addrspace *)(uintptr_t)v : NULL;
}

/* Installs as for pid; returns the space it replaces, now the caller's. */
static struct prof_addrspace *space_swap(struct prof_replay *rp, uint32_t pid, struct prof_addrspace *as)
{
	struct prof_addrspace *old = space_get(rp, pid);

	u64map_put(&rp->spaces, pid, (uint64_t)(uintptr_t)as);
	u64map_put(&rp->seen_pids, pid, 1);
	if (!old || old == as)
		return NULL;
	drop_exiting(rp, old);
	return old;
}

/* Installs as for pid; an older space goes at the end of the batch. */
static void space_set(struct prof_replay *rp, uint32_t pid, struct prof_addrspace *as)
{
	struct prof_addrspace *old = space_swap(rp, pid, as);

	if (old)
		VEC_PUSH(&rp->dead, old);
}

/* The space of pid, created at first sight (live: from /proc). */
static struct prof_addrspace *space_of(struct prof_replay *rp, uint32_t pid)
{
	struct prof_addrspace *as = space_get(rp, pid);

	if (!as) {
		as = prof_addrspace_new((pid_t)pid);
		if (rp->cfg.live)
			prof_addrspace_load_proc(as);	/* best effort: may be gone */
		space_set(rp, pid, as);
	}
	return as;
}

/* Live: counts pid's threads; the space goes when the last one exits. */
static void threads_add(struct prof_replay *rp, uint32_t pid, int64_t delta)
{
	bool created;
	uint64_t *n;

	if (!rp->cfg.live)
		return;
	n = u64map_slot(&rp->nthreads, pid, &created);
	if (created)
		*n = 0;
	*n = (uint64_t)((int64_t)*n + delta);
	if ((int64_t)*n <= 0) {
		struct prof_addrspace *as = space_get(rp, pid);
		*n = 0;
		if (as) {
			drop_exiting(rp, as);	/* on the list once */
			VEC_PUSH(&rp->exiting, as);
		}
	}
}

/* --- threads --------------------------------------------------------------------- */

static struct task *task_of(struct prof_replay *rp, uint32_t tid, uint32_t pid, bool *created)
{
	uint64_t *slot = u64map_slot(&rp->tasks, tid, created);

	if (*created) {
		VEC_PUSH(&rp->task, ((struct task){ .pid = pid }));
		*slot = rp->task.n;
	}
	return &rp->task.v[*slot - 1];
}

/* A new name for tid: renames its profile thread in place, or starts a
 * new identity at its next sample after an exec. */
static void task_name(struct prof_replay *rp, uint32_t pid, uint32_t tid, const char *comm,
		      bool exec)
{
	bool created;
	struct task *t = task_of(rp, tid, pid, &created);

	t->pid = pid;
	t->comm = prof_intern(rp->p, comm);
	if (exec) {
		t->fresh = t->fresh || t->thread;
		t->thread = 0;
	} else if (t->thread) {
		prof_thread_intern(rp->p, pid, tid, comm);
	}
}

/*
 * The profile thread of a sample's (pid, tid).  The kernel writes tid -1
 * for a thread it has already unhashed (a sample in its exit path): its
 * process is known, its thread no longer is, so the sample goes to the
 * process's main thread instead of a nameless thread -1.  Task 0 is the
 * idle task, named "swapper" as perf names it.
 */
static uint32_t thread_of(struct prof_replay *rp, uint32_t pid, uint32_t tid)
{
	bool created;
	struct task *t;
	char comm[64] = "";
	uint32_t th;

	if (tid == UINT32_MAX && pid != UINT32_MAX)
		tid = pid;
	t = task_of(rp, tid, pid, &created);
	if (!t->comm && !pid && !tid)
		t->comm = prof_intern(rp->p, "swapper");

	if (t->thread && t->pid == pid)
		return t->thread - 1;
	if (!t->comm && rp->cfg.live && prof_proc_comm((pid_t)pid, (pid_t)tid, comm, sizeof(comm)) == 0)
		t->comm = prof_intern(rp->p, comm);
	th = t->fresh ? prof_thread_add(rp->p, pid, tid, prof_str(rp->p, t->comm))
		      : prof_thread_intern(rp->p, pid, tid, prof_str(rp->p, t->comm));
	t->pid = pid;
	t->thread = th + 1;
	t->fresh = false;
	t->exited = false;
	for (int k = 0; k < 2; k++)	/* the fork / exec that started it */
		if (t->pending[k]) {
			rp->p->task_events.v[t->pending[k] - 1].thread = th;
			t->pending[k] = 0;
		}
	return th;
}

uint32_t prof_replay_thread(struct prof_replay *rp, pid_t pid, pid_t tid)
{
	return thread_of(rp, (uint32_t)pid, (uint32_t)tid);
}

void prof_replay_add_child(struct prof_replay *rp, pid_t pid, const char *comm)
{
	space_set(rp, (uint32_t)pid, prof_addrspace_new(pid));
	threads_add(rp, (uint32_t)pid, 1);
	task_name(rp, (uint32_t)pid, (uint32_t)pid, comm, false);
}

int prof_replay_add_process(struct prof_replay *rp, pid_t pid)
{
	pid_t *tids;
	size_t n;
	char comm[64];
	struct prof_addrspace *as;

	if (prof_proc_tids(pid, &tids, &n) < 0)
		return -ESRCH;
	for (size_t i = 0; i < n; i++)
		if (prof_proc_comm(pid, tids[i], comm, sizeof(comm)) == 0)
			task_name(rp, (uint32_t)pid, (uint32_t)tids[i], comm, false);
	free(tids);
	as = prof_addrspace_new(pid);
	if (prof_addrspace_load_proc(as) < 0) {
		prof_addrspace_free(as);
		return -ESRCH;
	}
	space_set(rp, (uint32_t)pid, as);
	threads_add(rp, (uint32_t)pid, (int64_t)n);
	return 0;
}

/* --- the processes replayed (events per CPU attached to some) ------------------------- */

enum { ONLY_KEPT = 1, ONLY_DROPPED = 2 };

void prof_replay_only(struct prof_replay *rp, const pid_t *keep, size_t nkeep, const pid_t *skip,
		      size_t nskip)
{
	rp->only = true;
	for (size_t i = 0; i < nskip; i++)
		u64map_put(&rp->only_pids, (uint64_t)skip[i], ONLY_DROPPED);
	for (size_t i = 0; i < nkeep; i++)
		u64map_put(&rp->only_pids, (uint64_t)keep[i], ONLY_KEPT);
}

/* A process not decided yet (its first record came from another CPU's
 * ring before its FORK, or it is no descendant): kept when /proc shows a
 * kept ancestor before a dropped one. */
static bool has_kept_ancestor(struct prof_replay *rp, pid_t pid)
{
	uint64_t v;

	for (int depth = 0; depth < 64 && pid > 1; depth++) {
		if ((pid = prof_proc_ppid(pid)) <= 0)
			return false;
		if (u64map_get(&rp->only_pids, (uint64_t)pid, &v))
			return v == ONLY_KEPT;
	}
	return false;
}

/* Are pid's records replayed?  Always, unless prof_replay_only chose. */
static bool wanted(struct prof_replay *rp, uint32_t pid)
{
	uint64_t v;

	if (!rp->only)
		return true;
	if (u64map_get(&rp->only_pids, pid, &v))
		return v == ONLY_KEPT;
	v = pid != UINT32_MAX && has_kept_ancestor(rp, (pid_t)pid) ? ONLY_KEPT : ONLY_DROPPED;
	u64map_put(&rp->only_pids, pid, v);
	return v == ONLY_KEPT;
}

bool prof_replay_wanted(struct prof_replay *rp, pid_t pid)
{
	return wanted(rp, (uint32_t)pid);
}

/* A new process: a kept one's child is kept (as an inherited event
 * follows it); a reused pid is decided again. */
static void only_fork(struct prof_replay *rp, uint32_t pid, uint32_t ppid)
{
	if (rp->only && pid != ppid)
		u64map_put(&rp->only_pids, pid, wanted(rp, ppid) ? ONLY_KEPT : ONLY_DROPPED);
}

/* --- side-band records --------------------------------------------------------------- */

/*
 * A fork, exec or exit as the profile keeps it (the HTML tracks' markers),
 * with the thread identity it belongs to: an exit to the task's current
 * one; a fork or an exec to the identity it starts, which exists only at
 * the task's next sample (thread_of() fills it in; never sampled: none).
 */
static void task_event(struct prof_replay *rp, uint64_t time, uint32_t pid, uint32_t tid,
		       enum prof_task_event_kind kind)
{
	bool created;
	struct task *t;

	if ((pid_t)pid == rp->self || pid == UINT32_MAX || tid == UINT32_MAX)
		return;
	t = task_of(rp, tid, pid, &created);
	VEC_PUSH(&rp->p->task_events, ((struct prof_task_event){ time, pid, tid, kind, PROF_NONE }));
	/* an exit, or a fork the thread's own records came before, belongs
	 * to the identity the task has */
	if (kind == PROF_TASK_EXIT || t->thread)
		rp->p->task_events.v[rp->p->task_events.n - 1].thread = t->thread ? t->thread - 1 : PROF_NONE;
	else
		t->pending[kind == PROF_TASK_EXEC] = (uint32_t)rp->p->task_events.n;
}

/* An exec at time: a new image, with no mappings until its MMAPs.  The
 * old one stays for the samples of its time (retire_execs).  The new one
 * is never re-read from /proc (not live): its MMAPs are all in the rings,
 * and /proc may already show a later image of the pid, which a re-read
 * for one of this image's late samples would put in its place. */
static void image_exec(struct prof_replay *rp, uint32_t pid, uint32_t tid, uint64_t time)
{
	struct prof_addrspace *old = space_swap(rp, pid, prof_addrspace_new((pid_t)pid));
	const struct task *t;
	uint64_t slot;

	if (!old)
		return;
	if (!old->maps.n || !time) {
		VEC_PUSH(&rp->dead, old);
		return;
	}
	t = u64map_get(&rp->tasks, tid, &slot) ? &rp->task.v[slot - 1] : NULL;
	bool same = t && t->pid == pid;
	VEC_PUSH(&rp->execs, ((struct exec_past){ pid, tid, same ? t->comm : 0, same ? t->thread : 0, time, old,
						  false }));
}

/* At a batch's end: the images left by an exec whose new image was seen
 * running, or EXEC_KEPT_NS before the newest sample, are freed.  Not at
 * the exec's batch's end already, for the samples taken inside an exec
 * that the batch's end parted from its COMM record (image_in_exec); once
 * the new image runs, the samples in time order have passed them, and the
 * off-CPU accountant's that come late have been replayed at the end of the
 * exec's batch. */
static void retire_execs(struct prof_replay *rp)
{
	size_t k = 0;

	for (size_t i = 0; i < rp->execs.n; i++) {
		struct exec_past *e = &rp->execs.v[i];
		if (!e->ran && e->time + EXEC_KEPT_NS > rp->last_time)
			rp->execs.v[k++] = *e;
		else
			VEC_PUSH(&rp->dead, e->as);
	}
	rp->execs.n = k;
}

/* The image pid ran at time t, if an exec kept in execs came after t:
 * the first such exec's old one. */
static struct exec_past *image_before(struct prof_replay *rp, uint32_t pid, uint64_t t)
{
	struct exec_past *first = NULL;

	for (size_t i = 0; i < rp->execs.n; i++) {
		struct exec_past *e = &rp->execs.v[i];
		if (e->pid == pid && t < e->time && (!first || e->time < first->time))
			first = e;
	}
	return first;
}

/*
 * The image before the exec a sample was taken inside of: at or after the
 * exec's COMM record, before the new image runs, the thread's user
 * registers are still the old image's, at its call of execve, while its
 * memory is the new one's (so its stack copy holds nothing to unwind).
 * Told by the user pc: in no mapping of the new image, in one of the old
 * (one in the new image's marks the exec done).  *pc: that pc.
 */
static struct exec_past *image_in_exec(struct prof_replay *rp, const struct prof_perf_sample *s,
				       const struct prof_addrspace *now, uint64_t *pc)
{
	uint64_t regs[PERF_REG_X86_64_MAX] = { 0 };
	struct exec_past *last = NULL;

	if (!s->regs_abi || !s->regs)
		return NULL;
	for (size_t i = 0; i < rp->execs.n; i++) {
		struct exec_past *e = &rp->execs.v[i];
		if (e->pid == s->pid && e->time <= s->time && (!last || e->time > last->time))
			last = e;
	}
	if (!last || last->ran)
		return NULL;	/* the per-sample path: most samples stop here */
	prof_perf_sample_regs(s, regs, ARRAY_SIZE(regs));
	*pc = regs[PERF_REG_X86_IP];
	if (*pc && now && prof_addrspace_find(now, *pc))
		last->ran = true;
	if (last->ran || !*pc || !prof_addrspace_find(last->as, *pc)) {
		*pc = 0;
		return NULL;
	}
	return last;
}

/* The profile thread of a sample of tid taken before the exec of e. */
static uint32_t thread_before(struct prof_replay *rp, struct exec_past *e, uint32_t tid)
{
	if (tid != e->tid || !e->comm)
		return thread_of(rp, e->pid, tid);
	if (!e->thread)
		e->thread = 1 + prof_thread_add_past(rp->p, e->pid, tid, prof_str(rp->p, e->comm));
	return e->thread - 1;
}

static void on_comm(struct prof_replay *rp, const struct perf_event_attr *attr,
		    const struct perf_event_header *h)
{
	struct prof_perf_comm c;
	struct prof_perf_sample_id id = { 0 };

	if (prof_perf_parse_comm(h, &c) < 0 || (pid_t)c.pid == rp->self || !wanted(rp, c.pid))
		return;
	if (c.exec)
		image_exec(rp, c.pid, c.tid, prof_perf_parse_id(attr, h, &id) == 0 ? id.time : 0);
	task_name(rp, c.pid, c.tid, c.comm, c.exec);
	if (c.exec && id.time)
		task_event(rp, id.time, c.pid, c.tid, PROF_TASK_EXEC);
}

static void on_mmap(struct prof_replay *rp, const struct perf_event_header *h)
{
	struct prof_perf_mmap2 m;

	if (prof_perf_parse_mmap2(h, &m) < 0 || m.pid == UINT32_MAX ||	/* -1: the kernel's */
	    !(m.prot & PROT_EXEC) || (pid_t)m.pid == rp->self || !wanted(rp, m.pid))
		return;
	const char *build_id = m.build_id;
	if (!*build_id && rp->cfg.build_id_of)
		build_id = rp->cfg.build_id_of(rp->cfg.build_id_arg, m.filename);
	prof_addrspace_map_build_id(space_of(rp, m.pid), m.addr, m.len, m.pgoff, m.filename,
				    m.prot, build_id);
	FOR_EACH_CONSUMER(rp, c)
		if (c->ops->mmap)
			c->ops->mmap(c->arg, &m);
}

/*
 * The task of a FORK's new thread.  A reused tid starts a new identity:
 * the old one belongs to the dead.  A task that did not exit is the new
 * thread itself, named or looked up before its FORK was replayed: it
 * keeps its identity, and the name it was given since, over its
 * creator's.
 */
static void task_fork(struct prof_replay *rp, const struct prof_perf_task *t)
{
	uint64_t parent;
	bool created;
	uint32_t comm = u64map_get(&rp->tasks, t->ptid, &parent) ? rp->task.v[parent - 1].comm : 0;
	struct task *child = task_of(rp, t->tid, t->pid, &created);

	if (created || child->exited || child->pid != t->pid)
		*child = (struct task){ .pid = t->pid, .comm = comm,
					.fresh = child->thread || child->fresh };
	else if (!child->comm)
		child->comm = comm;
}

static void on_task(struct prof_replay *rp, const struct perf_event_header *h, bool exit)
{
	struct prof_perf_task t;

	if (prof_perf_parse_task(h, &t) < 0)
		return;
	if (!exit)
		only_fork(rp, t.pid, t.ppid);
	if (!wanted(rp, t.pid))
		return;
	if (exit) {
		uint64_t slot;
		task_event(rp, t.time, t.pid, t.tid, PROF_TASK_EXIT);
		if (u64map_get(&rp->tasks, t.tid, &slot))
			rp->task.v[slot - 1].exited = true;
		threads_add(rp, t.pid, -1);
	} else {
		task_fork(rp, &t);
		if (t.pid != t.ppid) {	/* a new process: a copy of the parent's maps */
			struct prof_addrspace *pas = space_get(rp, t.ppid);
			space_set(rp, t.pid, pas ? prof_addrspace_fork(pas, (pid_t)t.pid)
						 : prof_addrspace_new((pid_t)t.pid));
		}
		threads_add(rp, t.pid, 1);
		task_event(rp, t.time, t.pid, t.tid, PROF_TASK_FORK);
	}
	FOR_EACH_CONSUMER(rp, c)
		if (c->ops->task)
			c->ops->task(c->arg, &t, exit);
}

static void on_lost(struct prof_replay *rp, const struct perf_event_attr *attr, const void *event,
		    const struct perf_event_header *h, uint32_t type)
{
	struct prof_perf_sample_id id;
	uint64_t n = prof_perf_lost_count(h);

	if (!n)
		return;
	prof_perf_parse_id(attr, h, &id);
	FOR_EACH_CONSUMER(rp, c)
		if (c->ops->lost)
			c->ops->lost(c->arg, event, type, id.time, n);
}

static void on_switch(struct prof_replay *rp, const struct perf_event_attr *attr, const void *event,
		      const struct perf_event_header *h)
{
	struct prof_perf_sample_id id;
	uint16_t misc = prof_perf_record_misc(h);
	struct prof_replay_switch sw = { &id, PROF_NONE, (misc & PERF_RECORD_MISC_SWITCH_OUT) != 0,
					 (misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT) != 0 };

	if (prof_perf_parse_id(attr, h, &id) < 0 || (pid_t)id.pid == rp->self || !wanted(rp, id.pid))
		return;	/* prof's own switches appear system-wide (-a) */
	if (sw.out)	/* its interval may have to be charged without a stack sample */
		sw.thread = thread_of(rp, id.pid, id.tid);
	FOR_EACH_CONSUMER(rp, c)
		if (c->ops->context_switch)
			c->ops->context_switch(c->arg, event, &sw);
}

/* --- samples: frames ------------------------------------------------------------------ */

/* Kernel pcs are resolved with this machine's /proc/kallsyms: say so once
 * when the records come from another kernel. */
static void check_kernel_release(struct prof_replay *rp)
{
	struct utsname u;

	rp->kernel_checked = true;
	if (rp->cfg.kernel_release && uname(&u) == 0 && strcmp(u.release, rp->cfg.kernel_release))
		warning("perf.data was recorded on kernel %s but this is %s; kernel symbols "
			"come from this machine's /proc/kallsyms and may be wrong",
			rp->cfg.kernel_release, u.release);
}

static void push_kernel(struct prof_replay *rp, uint64_t pc)
{
	if (!rp->kernel_checked)
		check_kernel_release(rp);
	if (rp->nframes < MAX_OUT_FRAMES)
		rp->nframes += prof_symbolize_kernel(rp->sym, pc, rp->frames + rp->nframes,
						     MAX_OUT_FRAMES - rp->nframes);
}

static void push_user(struct prof_replay *rp, struct prof_addrspace *as, uint64_t pc, bool ret)
{
	if (rp->nframes < MAX_OUT_FRAMES)
		rp->nframes += prof_symbolize_user(rp->sym, as, pc, ret, rp->frames + rp->nframes,
						   MAX_OUT_FRAMES - rp->nframes);
}

/*
 * Walks the callchain: context markers (PERF_CONTEXT_*) switch between
 * kernel and user entries; user entries are skipped when the sample has a
 * stack copy to unwind.  Returns the number of pcs (markers excluded).
 */
static uint64_t walk_callchain(struct prof_replay *rp, struct prof_addrspace *as,
			       const struct prof_perf_sample *s, bool want_user)
{
	uint64_t ctx = PERF_CONTEXT_USER, npcs = 0, nuser = 0;

	for (uint64_t i = 0; i < s->nr_callchain; i++) {
		uint64_t pc = prof_perf_callchain(s, i);
		if (pc >= (uint64_t)PERF_CONTEXT_MAX) {
			ctx = pc;
			continue;
		}
		npcs++;
		if (ctx == PERF_CONTEXT_KERNEL)
			push_kernel(rp, pc);
		else if (ctx == PERF_CONTEXT_USER && want_user)
			push_user(rp, as, pc, nuser++ > 0);
	}
	return npcs;
}

/* -g dwarf: unwinds the stack copy; false when it stopped early.  *at_root:
 * the unwinder found the outermost frame in a thread root by its binary's
 * symbols or Go's tables, which a frame's name alone may not tell
 * (runtime.systemstack, runtime.mcall: roots.c). */
static bool unwind_user(struct prof_replay *rp, struct prof_addrspace *as,
			const struct prof_perf_sample *s, bool *at_root)
{
	struct prof_ustack st = { s->stack, s->stack_size };
	struct prof_unwind_result *res = &rp->ures;	/* not a local: no copy of its reads log */

	if (!s->regs_abi || !s->regs)
		return true;	/* a kernel thread: no user stack */
	if (!rp->unw)
		rp->unw = prof_unwinder_new(rp->cfg.unwinder);
	prof_perf_sample_regs(s, rp->regs.r, ARRAY_SIZE(rp->regs.r));
	prof_unwind(rp->unw, as, (pid_t)s->tid, &rp->regs, &st, rp->pcs, PROF_MAX_FRAMES, res);
	rp->npcs = res->n;
	rp->unwound = true;
	for (size_t i = 0; i < res->n; i++)
		push_user(rp, as, rp->pcs[i], i > 0);
	*at_root = res->at_root;
	return res->complete;
}

/* Whether the stack built so far ends where a thread starts. */
static bool reaches_root(const struct prof_replay *rp)
{
	const struct prof_frame *outer;

	if (!rp->nframes)
		return false;
	outer = &rp->p->frames.v[rp->frames[rp->nframes - 1]];
	return prof_sym_is_thread_root(prof_str(rp->p, outer->func));
}

/* The sample's stack as a trie node; *complete: not truncated.  exec_pc:
 * a sample inside an exec (image_in_exec), whose one user frame is that. */
static uint32_t resolve_stack(struct prof_replay *rp, const struct perf_event_attr *a,
			      const struct prof_perf_sample *s, struct prof_addrspace *as,
			      uint64_t exec_pc, bool *complete)
{
	bool dwarf = (a->sample_type & PERF_SAMPLE_STACK_USER) != 0, at_root = false;

	*complete = true;
	rp->nframes = 0;
	rp->npcs = 0;
	if (s->nr_callchain) {
		uint64_t limit = a->sample_max_stack ? a->sample_max_stack : MAX_STACK_DEFAULT;
		if (walk_callchain(rp, as, s, !dwarf) >= limit && !dwarf)
			*complete = false;	/* the kernel's depth limit cut it */
	} else if (s->kernel) {
		push_kernel(rp, s->ip);
	} else if (!dwarf) {
		push_user(rp, as, s->ip, false);
	}
	if (exec_pc) {
		push_user(rp, as, exec_pc, false);
		*complete = false;
	} else if (dwarf) {
		*complete = unwind_user(rp, as, s, &at_root);
	}
	if (!rp->nframes)	/* never an empty stack */
		push_user(rp, as, s->ip, false);
	if ((a->sample_type & PERF_SAMPLE_CALLCHAIN) || dwarf)	/* complete only at a thread root */
		*complete = *complete && (at_root || reaches_root(rp));
	if (rp->pysplice)
		rp->nframes = prof_pysplice_apply(rp->pysplice, s->tid, s->time, rp->frames, rp->nframes,
						  MAX_OUT_FRAMES, *complete);
	return prof_node_from_stack(rp->p, rp->frames, rp->nframes);
}

uint32_t prof_replay_sample(struct prof_replay *rp, const struct perf_event_attr *attr, const void *event,
			    const struct prof_perf_sample *s)
{
	struct prof_replay_sample rs = { .s = s, .event = event, .attr = attr };
	struct exec_past *before;

	rp->last_time = MAX(rp->last_time, s->time);
	rp->unwound = false;
	rp->before_exec = false;
	if ((pid_t)s->pid == rp->self || !wanted(rp, s->pid))
		return PROF_NONE;
	if ((before = rp->execs.n ? image_before(rp, s->pid, s->time) : NULL)) {
		rp->before_exec = true;
		rs.thread = thread_before(rp, before, s->tid);
		rs.node = resolve_stack(rp, attr, s, before->as, 0, &rs.complete);
	} else {
		struct prof_addrspace *as = space_of(rp, s->pid);
		uint64_t pc = 0;
		before = rp->execs.n ? image_in_exec(rp, s, as, &pc) : NULL;
		rs.thread = thread_of(rp, s->pid, s->tid);
		rs.node = resolve_stack(rp, attr, s, before ? before->as : as, pc, &rs.complete);
	}
	rs.upcs = rp->pcs;
	rs.n_upcs = rp->npcs;
	FOR_EACH_CONSUMER(rp, c)
		if (c->ops->sample)
			c->ops->sample(c->arg, &rs);
	return rs.node;
}

const struct prof_unwind_result *prof_replay_unwound(const struct prof_replay *rp)
{
	return rp->unwound ? &rp->ures : NULL;
}

bool prof_replay_before_exec(const struct prof_replay *rp)
{
	return rp->before_exec;
}

static int on_sample(struct prof_replay *rp, const struct perf_event_attr *attr, const void *event,
		     const struct perf_event_header *h)
{
	struct prof_perf_sample s;

	if (prof_perf_parse_sample(attr, h, &s) < 0)
		return -EINVAL;
	prof_replay_sample(rp, attr, event, &s);
	return PROF_REPLAY_USED;
}

int prof_replay_source_fn(void *ctx, const struct perf_event_header *h)
{
	const struct prof_replay_source *src = ctx;

	prof_replay_record(src->rp, &src->pf->attr, src->pf, h);
	return 0;
}

int prof_replay_record(struct prof_replay *rp, const struct perf_event_attr *attr,
		       const void *event, const struct perf_event_header *h)
{
	struct perf_event_header hdr;

	memcpy(&hdr, h, sizeof(hdr));	/* records in a file may be unaligned */
	switch (hdr.type) {
	case PERF_RECORD_SAMPLE: return on_sample(rp, attr, event, h);
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2: on_mmap(rp, h); break;
	case PERF_RECORD_COMM: on_comm(rp, attr, h); break;
	case PERF_RECORD_FORK: on_task(rp, h, false); break;
	case PERF_RECORD_EXIT: on_task(rp, h, true); break;
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES: on_lost(rp, attr, event, h, hdr.type); break;
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE: on_switch(rp, attr, event, h); break;
	case PROF_RECORD_PYSTACK:
		if (!rp->pysplice)
			return PROF_REPLAY_UNUSED;
		prof_pysplice_record(rp->pysplice, h);
		break;
	default: return PROF_REPLAY_UNUSED;
	}
	return PROF_REPLAY_USED;
}

void prof_replay_batch_end(struct prof_replay *rp)
{
	uint64_t now;

	FOR_EACH_CONSUMER(rp, c)
		if (c->ops->batch_end)
			c->ops->batch_end(c->arg);
	retire_execs(rp);
	retire_exiting(rp);
	count_spaces(rp);
	if (rp->cfg.live && (now = now_ns()) >= rp->next_sweep) {
		size_t before = rp->spaces_freed;
		sweep_vanished(rp);
		free_dead(rp);
		if (rp->spaces_freed != before)	/* libdw's state is many small blocks */
			malloc_trim(0);
		rp->next_sweep = now + 1000000000ULL;
	}
	free_dead(rp);
}
