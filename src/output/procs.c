/*
 * procs.c - what the formats say per process, from one pass over the
 * profile: its name, how many tasks it had, the off-CPU sums of each
 * process and each thread, and its timeline points.  One pass, because
 * scanning every thread, aggregate and timeline point once per process (or
 * per thread) is quadratic: `prof report --format=json` of an
 * hour of `prof record -a` (32,500 processes, 46,417 threads) ran for
 * over ten CPU-minutes in those scans.  Here each lookup is one hash.
 */
#include "output-priv.h"
#include <string.h>

static struct proc_info *info_of(struct proc_table *t, uint32_t pid)
{
	bool created;
	uint64_t *slot = u64map_slot(&t->index, pid, &created);

	if (created) {
		*slot = t->procs.n;
		VEC_PUSH(&t->procs, ((struct proc_info){ .pid = pid, .comm = "" }));
	}
	return &t->procs.v[*slot];
}

/*
 * Threads in recording order: the process is named by its main thread's
 * last entry (the latest exec, unless name_by_exec says otherwise), or,
 * without a main thread, by its first thread with a name.  An exec gives
 * a task a second entry, so tasks are counted by (pid, tid).
 */
static void add_threads(struct proc_table *t, const struct prof_profile *p)
{
	struct u64map tasks = { 0 };
	bool created;

	for (uint32_t i = 0; i < p->threads.n; i++) {
		const struct prof_thread *th = &p->threads.v[i];
		struct proc_info *pi = info_of(t, th->pid);
		bool main = th->tid == th->pid;

		u64map_slot(&tasks, (uint64_t)th->pid << 32 | th->tid, &created);
		pi->tasks += created;
		if (main || (!pi->main_seen && !*pi->comm))
			pi->comm = prof_str(p, th->comm);
		pi->main_seen |= main;
	}
	u64map_free(&tasks);
}

/* Where an exec started an identity, the latest such names the process:
 * an entry made after it for a sample from before it (the off-CPU
 * accountant's, replayed behind the exec) is the old image's. */
static void name_by_exec(struct proc_table *t, const struct prof_profile *p)
{
	for (size_t i = 0; i < p->task_events.n; i++) {
		const struct prof_task_event *e = &p->task_events.v[i];
		if (e->kind == PROF_TASK_EXEC && e->thread < p->threads.n && e->tid == e->pid)
			info_of(t, e->pid)->comm = prof_str(p, p->threads.v[e->thread].comm);
	}
}

static void add_sums(struct res_sums *s, const struct prof_agg *a)
{
	s->off_cpu_ns += a->value[PROF_M_OFFCPU_NS];
	s->io_wait_ns += a->value[PROF_M_IOWAIT_NS];
	s->sleep_ns += a->value[PROF_M_SLEEP_NS];
	s->cpu_ns += a->value[PROF_M_CPU_NS];
}

void render_proc_table_build(struct proc_table *t, const struct prof_profile *p)
{
	memset(t, 0, sizeof(*t));
	t->thread_sums = xcalloc(p->threads.n + 1, sizeof(*t->thread_sums));
	add_threads(t, p);
	name_by_exec(t, p);
	for (size_t i = 0; i < p->aggs.n; i++) {
		const struct prof_agg *a = &p->aggs.v[i];
		if (a->thread >= p->threads.n)
			continue;
		add_sums(&t->thread_sums[a->thread], a);
		add_sums(&info_of(t, p->threads.v[a->thread].pid)->sums, a);
	}
	for (size_t k = 0; k < p->timeline.n; k++) {
		const struct prof_timeline_sample *s = &p->timeline.v[k];
		struct proc_info *pi = info_of(t, s->pid);
		if (!pi->points.n)
			pi->t_first = s->t_ns;
		pi->t_last = s->t_ns;
		VEC_PUSH(&pi->points, (uint32_t)k);
	}
}

const struct proc_info *render_proc_table_get(const struct proc_table *t, uint32_t pid)
{
	static const struct proc_info none = { .comm = "" };
	uint64_t ix;

	return u64map_get(&t->index, pid, &ix) ? &t->procs.v[ix] : &none;
}

void render_proc_table_free(struct proc_table *t)
{
	for (size_t i = 0; i < t->procs.n; i++)
		VEC_FREE(&t->procs.v[i].points);
	VEC_FREE(&t->procs);
	u64map_free(&t->index);
	free(t->thread_sums);
}
