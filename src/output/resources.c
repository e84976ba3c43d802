/*
 * resources.c - the resource side of `prof report`: per-process and
 * per-thread CPU user/sys, peak RSS, I/O bytes (struct prof_resources,
 * recorded from /proc) and off-CPU / I/O-wait / sleep seconds (sums of the
 * off-CPU metrics of the thread's stacks), as JSON fields, as text header
 * lines, and the recorded timeline as the HTML report's prof_timeline.
 * All of it reads only the model; a profile without resource data (old
 * files, perf.data, callgrind) prints zeros in JSON and no text lines.
 */
#include "output-priv.h"
#include "prof/output.h"
#include <string.h>

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

struct pid_set {
	struct u64map seen;
	VEC(uint32_t) pids;
	const struct prof_view *v;	/* its --pid */
};

static void pid_set_add(struct pid_set *s, uint32_t pid)
{
	bool created;

	if (!prof_view_pid_selected(s->v, pid))
		return;
	u64map_slot(&s->seen, pid, &created);
	if (created)
		VEC_PUSH(&s->pids, pid);
}

uint32_t *render_view_process_pids(const struct prof_profile *p, const struct prof_view *v, size_t *n)
{
	bool unweighted_too = !v->ntids && !v->comm && !v->dso;
	struct pid_set s = { .v = v };

	for (size_t i = 0; i < p->aggs.n; i++)
		if (p->aggs.v[i].thread < p->threads.n && prof_view_weight(p, v, &p->aggs.v[i]))
			pid_set_add(&s, p->threads.v[p->aggs.v[i].thread].pid);
	for (size_t i = 0; unweighted_too && i < p->resources.n; i++)
		pid_set_add(&s, p->resources.v[i].pid);
	u64map_free(&s.seen);
	if (s.pids.n)
		qsort(s.pids.v, s.pids.n, sizeof(*s.pids.v), cmp_u32);
	*n = s.pids.n;
	return s.pids.v;
}

static void add_times(struct strbuf *sb, const struct prof_resources *r, const struct res_sums *s)
{
	static const struct prof_resources none;

	if (!r)
		r = &none;
	sb_addf(sb, ", \"cpu_user_s\": %.3f, \"cpu_sys_s\": %.3f, \"io_wait_s\": %.3f, "
		"\"off_cpu_s\": %.3f, \"sleep_s\": %.3f",
		(double)r->user_ns / 1e9, (double)r->sys_ns / 1e9,
		(double)s->io_wait_ns / 1e9, (double)s->off_cpu_ns / 1e9, (double)s->sleep_ns / 1e9);
	sb_addf(sb, ", \"voluntary_switches\": %llu, \"involuntary_switches\": %llu, "
		"\"minor_faults\": %llu, \"major_faults\": %llu",
		(unsigned long long)r->vol_cs, (unsigned long long)r->invol_cs,
		(unsigned long long)r->minflt, (unsigned long long)r->majflt);
}

void render_json_process_resources(struct strbuf *sb, const struct prof_profile *p,
				   const struct proc_table *t, uint32_t pid)
{
	const struct prof_resources *r = prof_resources_get(p, pid, 0);
	const struct proc_info *pi = render_proc_table_get(t, pid);

	add_times(sb, r, &pi->sums);
	sb_addf(sb, ", \"rss_peak_bytes\": %llu, \"io_read_bytes\": %llu, \"io_write_bytes\": %llu",
		(unsigned long long)(r ? r->rss_peak_bytes : 0),
		(unsigned long long)(r ? r->io_read_bytes : 0),
		(unsigned long long)(r ? r->io_write_bytes : 0));
	sb_adds(sb, ",\n     \"timeline\": [");
	for (size_t i = 0; i < pi->points.n; i++) {
		const struct prof_timeline_sample *e = &p->timeline.v[pi->points.v[i]];
		double rel = e->t_ns > p->start_ns && p->start_ns ? (double)(e->t_ns - p->start_ns) / 1e9 : 0;
		sb_addf(sb, "%s{\"t\": %.3f, \"rss_bytes\": %llu, \"cpu_pct\": %.2f, \"io_wait_pct\": %.2f}",
			i ? ", " : "", rel, (unsigned long long)e->rss_bytes,
			e->cpu_pct_x100 / 100.0, e->io_wait_pct_x100 / 100.0);
	}
	sb_adds(sb, "]");
}

void render_json_thread_resources(struct strbuf *sb, const struct prof_profile *p,
				  const struct proc_table *t, uint32_t thread_idx)
{
	const struct prof_thread *th = &p->threads.v[thread_idx];

	add_times(sb, prof_resources_get(p, th->pid, th->tid), &t->thread_sums[thread_idx]);
}

static void add_bytes(struct strbuf *sb, uint64_t b)
{
	if (b >= (1ULL << 30))
		sb_addf(sb, "%.2f GiB", (double)b / (double)(1ULL << 30));
	else
		sb_addf(sb, "%.1f MiB", (double)b / (double)(1ULL << 20));
}

static int by_cpu_desc(const void *pa, const void *pb)
{
	const struct prof_resources *a = pa, *b = pb;
	uint64_t ca = a->user_ns + a->sys_ns, cb = b->user_ns + b->sys_ns;

	if (ca != cb)
		return ca > cb ? -1 : 1;
	return (a->pid > b->pid) - (a->pid < b->pid);
}

static void text_process_line(FILE *f, const struct prof_resources *r, const struct proc_info *pi)
{
	struct strbuf sb = STRBUF_INIT;
	const struct res_sums *s = &pi->sums;
	double cpu = (double)(r->user_ns + r->sys_ns) / 1e9;
	/* the time it existed: its timeline's first to last point */
	double wall = pi->t_last > pi->t_first ? (double)(pi->t_last - pi->t_first) / 1e9 : 0;

	sb_addf(&sb, "# pid %u: cpu %.2f s user, %.2f s sys; peak rss ", r->pid,
		(double)r->user_ns / 1e9, (double)r->sys_ns / 1e9);
	add_bytes(&sb, r->rss_peak_bytes);
	sb_addf(&sb, "; io wait %.3f s, off-cpu %.3f s (sleep %.3f s)", (double)s->io_wait_ns / 1e9,
		(double)s->off_cpu_ns / 1e9, (double)s->sleep_ns / 1e9);
	if (wall > 0)	/* time it existed but was not on a CPU (lower bound with threads) */
		sb_addf(&sb, "; wall - cpu = %.2f s", wall - cpu);
	sb_addf(&sb, "; read %llu B, written %llu B\n", (unsigned long long)r->io_read_bytes,
		(unsigned long long)r->io_write_bytes);
	fputs(sb.buf, f);
	sb_release(&sb);
}

#define TEXT_MAX_PROCESSES 8

/* One line per process of render_view_process_pids(): the command (recorded
 * first), then the busiest by CPU time, at most TEXT_MAX_PROCESSES lines.
 * Nothing for a profile without resource data. */
void render_text_resources_header(FILE *f, const struct prof_profile *p, const struct prof_view *v)
{
	VEC(struct prof_resources) procs = { 0 };
	struct proc_table pt;
	uint32_t *pids, first = PROF_NONE;
	size_t n, sorted_from = 0;

	for (size_t i = 0; i < p->resources.n && first == PROF_NONE; i++)
		if (!p->resources.v[i].tid)
			first = p->resources.v[i].pid;
	if (first == PROF_NONE)
		return;
	pids = render_view_process_pids(p, v, &n);
	for (size_t i = 0; i < n; i++) {
		const struct prof_resources *r = prof_resources_get(p, pids[i], 0);
		VEC_PUSH(&procs, r ? *r : (struct prof_resources){ .pid = pids[i] });
		if (pids[i] == first) {	/* the command first */
			struct prof_resources t = procs.v[0];
			procs.v[0] = procs.v[procs.n - 1];
			procs.v[procs.n - 1] = t;
			sorted_from = 1;
		}
	}
	if (procs.n > sorted_from + 1)
		qsort(procs.v + sorted_from, procs.n - sorted_from, sizeof(*procs.v), by_cpu_desc);
	render_proc_table_build(&pt, p);
	for (size_t i = 0; i < procs.n && i < TEXT_MAX_PROCESSES; i++)
		text_process_line(f, &procs.v[i], render_proc_table_get(&pt, procs.v[i].pid));
	render_proc_table_free(&pt);
	if (procs.n > TEXT_MAX_PROCESSES)
		fprintf(f, "# ... and %zu more processes (see --format=json)\n",
			procs.n - TEXT_MAX_PROCESSES);
	VEC_FREE(&procs);
	free(pids);
}

void render_html_resource_heads(struct strbuf *sb)
{
	sb_adds(sb, "<th class=\"n\">CPU user</th><th class=\"n\">CPU sys</th>"
		"<th class=\"n\">Peak RSS</th><th class=\"n\">I/O wait</th>"
		"<th class=\"n\">Off-CPU</th>");
}

void render_html_resource_cells(struct strbuf *sb, const struct prof_profile *p,
				const struct proc_info *pi)
{
	const struct prof_resources *r = prof_resources_get(p, pi->pid, 0);
	const struct res_sums s = pi->sums;

	sb_addf(sb, "<td class=\"n\">%.2f s</td><td class=\"n\">%.2f s</td><td class=\"n\">",
		r ? (double)r->user_ns / 1e9 : 0.0, r ? (double)r->sys_ns / 1e9 : 0.0);
	add_bytes(sb, r ? r->rss_peak_bytes : 0);
	sb_addf(sb, "</td><td class=\"n\">%.3f s</td><td class=\"n\">%.3f s</td>",
		(double)s.io_wait_ns / 1e9, (double)s.off_cpu_ns / 1e9);
}

/* The timeline of the process with the most points (the command), as
 * the HTML report's three series.  Strings are static. */
void prof_output_timeline_from_profile(const struct prof_profile *p, struct prof_timeline *tl)
{
	static const char *const names[] = { "CPU", "RSS", "I/O wait" };
	static const char *const units[] = { "%", "MiB", "%" };
	const struct proc_info *best = NULL;
	struct proc_table pt;

	memset(tl, 0, sizeof(*tl));
	render_proc_table_build(&pt, p);
	for (size_t i = 0; i < p->resources.n; i++) {
		const struct proc_info *pi = render_proc_table_get(&pt, p->resources.v[i].pid);
		if (!p->resources.v[i].tid && pi->points.n > (best ? best->points.n : 0))
			best = pi;
	}
	for (int s = 0; best && s < 3; s++) {
		struct prof_timeline_series ser = { .name = names[s], .unit = units[s] };
		for (size_t k = 0; k < best->points.n; k++) {
			const struct prof_timeline_sample *t = &p->timeline.v[best->points.v[k]];
			double v = s == 0 ? t->cpu_pct_x100 / 100.0
				 : s == 1 ? (double)t->rss_bytes / (double)(1 << 20)
					  : t->io_wait_pct_x100 / 100.0;
			VEC_PUSH(&ser.points, ((struct prof_timeline_point){ t->t_ns, v }));
		}
		VEC_PUSH(&tl->series, ser);
	}
	render_proc_table_free(&pt);
}

void prof_output_timeline_free(struct prof_timeline *tl)
{
	for (size_t i = 0; i < tl->series.n; i++)
		VEC_FREE(&tl->series.v[i].points);
	VEC_FREE(&tl->series);
}
