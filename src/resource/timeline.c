/*
 * timeline.c - the periodic /proc sampler of `prof record` (see
 * include/prof/restrack.h): resource totals per process and thread, and
 * the per-process timeline of RSS, CPU% and I/O-wait%.  Parsing reuses
 * res_parse_stat_field / res_parse_keyed / res_parse_io (src/resource/run.c).
 *
 * Design notes / invariants:
 *  - procs holds every process ever tracked; .alive drops to false the
 *    first time /proc/PID/stat cannot be read (or at its final reading),
 *    and a dead process is never read again (its pid may be reused).
 *  - Totals only grow: a reading that fails keeps the previous values,
 *    and rss_peak_bytes is the maximum of every VmHWM / ru_maxrss seen.
 *  - A process's context switches are the sum over its threads' stored
 *    values (the kernel reports them per task only).
 *  - Timeline points: t is CLOCK_MONOTONIC (the clock of the samples);
 *    CPU% = delta(utime+stime) / delta(t); I/O-wait% = delta(off-CPU
 *    I/O-wait ns of the process) / delta(t).  Both may exceed 100 with
 *    several threads.
 */
#include "prof/restrack.h"
#include "prof/proc.h"
#include "prof/resource.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

struct proc_state {
	uint32_t pid;
	bool alive;
	uint64_t last_t, last_cpu_ns, last_iowait_ns;
};

struct prof_restrack {
	struct prof_profile *p;
	struct prof_offcpu *oc;
	VEC(struct proc_state) procs;
	uint64_t next_sample;
	uint64_t tick_ns, page_size;
};

struct prof_restrack *prof_restrack_new(struct prof_profile *p, struct prof_offcpu *oc)
{
	struct prof_restrack *rt = xcalloc(1, sizeof(*rt));
	long tck = sysconf(_SC_CLK_TCK);

	rt->p = p;
	rt->oc = oc;
	rt->tick_ns = 1000000000ULL / (uint64_t)(tck > 0 ? tck : 100);
	rt->page_size = (uint64_t)sysconf(_SC_PAGESIZE);
	return rt;
}

void prof_restrack_free(struct prof_restrack *rt)
{
	if (!rt)
		return;
	VEC_FREE(&rt->procs);
	free(rt);
}

static struct proc_state *proc_find(struct prof_restrack *rt, uint32_t pid)
{
	for (size_t i = rt->procs.n; i-- > 0;)	/* newest first: pids get reused */
		if (rt->procs.v[i].pid == pid)
			return &rt->procs.v[i];
	return NULL;
}

void prof_restrack_add_pid(struct prof_restrack *rt, uint32_t pid)
{
	struct proc_state *ps = proc_find(rt, pid);

	if (ps && ps->alive)
		return;
	VEC_PUSH(&rt->procs, ((struct proc_state){ .pid = pid, .alive = true }));
}

static char *read_proc(uint32_t pid, uint32_t tid, const char *name)
{
	char path[96];

	if (tid)
		snprintf(path, sizeof(path), "/proc/%u/task/%u/%s", pid, tid, name);
	else
		snprintf(path, sizeof(path), "/proc/%u/%s", pid, name);
	return read_file(path, NULL);
}

/* utime, stime, minflt, majflt of a stat line into r; 0 / -EINVAL. */
static int parse_stat(const struct prof_restrack *rt, const char *stat, struct prof_resources *r)
{
	uint64_t ut, st, minf, majf;

	if (res_parse_stat_field(stat, 10, &minf) < 0 || res_parse_stat_field(stat, 12, &majf) < 0 ||
	    res_parse_stat_field(stat, 14, &ut) < 0 || res_parse_stat_field(stat, 15, &st) < 0)
		return -EINVAL;
	r->user_ns = MAX(r->user_ns, ut * rt->tick_ns);
	r->sys_ns = MAX(r->sys_ns, st * rt->tick_ns);
	r->minflt = MAX(r->minflt, minf);
	r->majflt = MAX(r->majflt, majf);
	return 0;
}

static struct prof_resources current(const struct prof_profile *p, uint32_t pid, uint32_t tid)
{
	const struct prof_resources *old = prof_resources_get(p, pid, tid);

	return old ? *old : (struct prof_resources){ .pid = pid, .tid = tid };
}

/* One thread's totals from /proc/PID/task/TID; false when unreadable. */
static bool sample_thread(struct prof_restrack *rt, uint32_t pid, uint32_t tid)
{
	struct prof_resources r = current(rt->p, pid, tid);
	char *stat = read_proc(pid, tid, "stat"), *status = read_proc(pid, tid, "status");
	bool ok = stat && parse_stat(rt, stat, &r) == 0;
	uint64_t v;

	if (ok && status) {
		if (res_parse_keyed(status, "\nvoluntary_ctxt_switches:", &v) == 0)
			r.vol_cs = MAX(r.vol_cs, v);
		if (res_parse_keyed(status, "\nnonvoluntary_ctxt_switches:", &v) == 0)
			r.invol_cs = MAX(r.invol_cs, v);
	}
	if (ok)
		prof_resources_set(rt->p, &r);
	free(stat);
	free(status);
	return ok;
}

static void sum_thread_switches(struct prof_profile *p, struct prof_resources *proc)
{
	uint64_t vol = 0, invol = 0;

	for (size_t i = 0; i < p->resources.n; i++) {
		const struct prof_resources *t = &p->resources.v[i];
		if (t->pid == proc->pid && t->tid) {
			vol += t->vol_cs;
			invol += t->invol_cs;
		}
	}
	proc->vol_cs = MAX(proc->vol_cs, vol);
	proc->invol_cs = MAX(proc->invol_cs, invol);
}

/* Process totals + a timeline point; false when the process is gone. */
static bool sample_process(struct prof_restrack *rt, struct proc_state *ps, bool final)
{
	struct prof_resources r = current(rt->p, ps->pid, 0);
	char *stat = read_proc(ps->pid, 0, "stat");
	char *status, *io;
	uint64_t now = now_ns(), v, rss = 0, rd, wr;
	pid_t *tids;
	size_t n;

	if (!stat || parse_stat(rt, stat, &r) < 0) {
		free(stat);
		return false;
	}
	if (res_parse_stat_field(stat, 24, &v) == 0)	/* rss, pages */
		rss = v * rt->page_size;
	free(stat);
	if ((status = read_proc(ps->pid, 0, "status"))) {
		if (res_parse_keyed(status, "\nVmHWM:", &v) == 0)
			r.rss_peak_bytes = MAX(r.rss_peak_bytes, v * 1024);
		free(status);
	}
	r.rss_peak_bytes = MAX(r.rss_peak_bytes, rss);
	if ((io = read_proc(ps->pid, 0, "io")) && res_parse_io(io, &rd, &wr) == 0) {
		r.io_read_bytes = MAX(r.io_read_bytes, rd);
		r.io_write_bytes = MAX(r.io_write_bytes, wr);
	}
	free(io);
	if (!final && prof_proc_tids((pid_t)ps->pid, &tids, &n) == 0) {
		for (size_t i = 0; i < n; i++)
			sample_thread(rt, ps->pid, (uint32_t)tids[i]);
		free(tids);
	} else if (final) {
		sample_thread(rt, ps->pid, ps->pid);	/* the zombie leader */
	}
	sum_thread_switches(rt->p, &r);
	prof_resources_set(rt->p, &r);

	uint64_t cpu = r.user_ns + r.sys_ns, iow = prof_offcpu_iowait_ns(rt->oc, ps->pid);
	if (ps->last_t && now > ps->last_t) {
		double dt = (double)(now - ps->last_t);
		double cpu_pct = 100.0 * (double)(cpu - ps->last_cpu_ns) / dt;
		double io_pct = 100.0 * (double)(iow - ps->last_iowait_ns) / dt;
		VEC_PUSH(&rt->p->timeline, ((struct prof_timeline_sample){
			.t_ns = now, .pid = ps->pid, .rss_bytes = rss,
			.cpu_pct_x100 = (uint32_t)(cpu_pct * 100 + 0.5),
			.io_wait_pct_x100 = (uint32_t)(io_pct * 100 + 0.5) }));
	} else {
		VEC_PUSH(&rt->p->timeline, ((struct prof_timeline_sample){
			.t_ns = now, .pid = ps->pid, .rss_bytes = rss }));
	}
	ps->last_t = now;
	ps->last_cpu_ns = cpu;
	ps->last_iowait_ns = iow;
	return true;
}

void prof_restrack_sample(struct prof_restrack *rt)
{
	for (size_t i = 0; i < rt->procs.n; i++)
		if (rt->procs.v[i].alive && !sample_process(rt, &rt->procs.v[i], false))
			rt->procs.v[i].alive = false;
	rt->next_sample = now_ns() + PROF_RESTRACK_INTERVAL_NS;
}

void prof_restrack_final(struct prof_restrack *rt, uint32_t pid)
{
	struct proc_state *ps = proc_find(rt, pid);

	if (ps && ps->alive) {
		sample_process(rt, ps, true);
		ps->alive = false;
	}
}

void prof_restrack_rusage(struct prof_restrack *rt, uint32_t pid, const struct rusage *ru)
{
	struct prof_resources r = current(rt->p, pid, 0);

	if (!ru)
		return;
	/* ru_maxrss (KiB) is the largest peak of the command or of any one
	 * waited-for descendant: exact even for a spike just before exit. */
	r.rss_peak_bytes = MAX(r.rss_peak_bytes, (uint64_t)ru->ru_maxrss * 1024);
	prof_resources_set(rt->p, &r);
}

/* --- recorder hooks ------------------------------------------------------------ */

static void after_drain(void *arg, struct prof_recorder *r)
{
	struct prof_restrack *rt = arg;

	if (rt->oc)
		prof_offcpu_drain(rt->oc, r);
	if (now_ns() >= rt->next_sample)
		prof_restrack_sample(rt);
}

static void on_task(void *arg, const struct perf_event_header *h)
{
	struct prof_restrack *rt = arg;
	struct prof_perf_task t;

	if (prof_perf_parse_task(h, &t) < 0)
		return;
	if (h->type == PERF_RECORD_FORK) {
		if (t.pid != t.ppid)
			prof_restrack_add_pid(rt, t.pid);
		return;
	}
	/* EXIT: the thread's /proc entry is usually gone already (threads are
	 * reaped at exit); when it is still there, these are its final values. */
	struct proc_state *ps = proc_find(rt, t.pid);
	if (ps && ps->alive)
		sample_thread(rt, t.pid, t.tid);
}

void prof_restrack_attach(struct prof_restrack *rt, struct prof_recorder *r)
{
	prof_recorder_set_hooks(r, after_drain, on_task, rt);
}
