/*
 * json.c - the stable machine-readable report, schema "prof-report/1"
 * (fields as listed below).  Weights ("samples" of
 * processes/threads, "self"/"total" of functions) are in the metric's unit:
 * samples for cpu, microseconds for time metrics, bytes or allocations
 * ("unit") for the heap metrics.  Every string goes through json_escape();
 * numbers are never NaN.
 *
 * A recording with heap samples (record --heap) has a "heap" object:
 * rate_bytes (mean bytes between samples, 1: every allocation), sampled,
 * freed and lost (samples), and the whole-heap estimates allocs,
 * alloc_bytes, live_bytes (at the end) and peak_bytes, each with its
 * standard error (*_err), and peak_s (when the estimated heap was largest,
 * s since the first sample), and scope when the report shows part of it
 * (report --at, --min-age: a phrase).  start_ns and end_ns are the
 * CLOCK_MONOTONIC times of the first and last record (what --at and
 * --min-age count from).
 *
 * Resource fields (src/output/resources.c): every processes[]
 * entry also has cpu_user_s, cpu_sys_s, rss_peak_bytes, io_wait_s,
 * off_cpu_s, sleep_s, io_read_bytes, io_write_bytes and a timeline array
 * of {t (s since the first sample), rss_bytes, cpu_pct, io_wait_pct};
 * every thread has the five *_s time fields.  Both also carry
 * voluntary_switches, involuntary_switches, minor_faults, major_faults
 * (a process's switches are the sum of its threads').  They do not depend on
 * --metric (0 when the recording has no such data).
 */
#include "output-priv.h"
#include <errno.h>
#include <string.h>

struct thread_w {
	uint32_t thread;
	uint64_t w;
};

static int by_pid_then_weight(const void *pa, const void *pb, void *arg)
{
	const struct prof_profile *p = arg;
	const struct thread_w *a = pa, *b = pb;
	const struct prof_thread *ta = &p->threads.v[a->thread], *tb = &p->threads.v[b->thread];

	if (ta->pid != tb->pid)
		return ta->pid < tb->pid ? -1 : 1;
	if (a->w != b->w)
		return a->w > b->w ? -1 : 1;
	return (ta->tid > tb->tid) - (ta->tid < tb->tid);
}

static void add_str_field(struct strbuf *sb, const char *key, const char *val)
{
	sb_addf(sb, "\"%s\": ", key);
	json_escape(sb, val ? val : "");
}

/* processes[] (render_view_process_pids), each with its threads that weigh
 * something under the view, heaviest first. */
static void add_processes(struct strbuf *sb, const struct prof_profile *p,
			  const struct prof_view *v)
{
	uint64_t *tw = xcalloc(p->threads.n + 1, sizeof(*tw));
	VEC(struct thread_w) ts = { 0 };
	struct proc_table pt;
	size_t np, j = 0;
	uint32_t *pids = render_view_process_pids(p, v, &np);

	render_proc_table_build(&pt, p);
	for (size_t i = 0; i < p->aggs.n; i++)
		tw[p->aggs.v[i].thread] += prof_view_weight(p, v, &p->aggs.v[i]);
	for (uint32_t i = 0; i < p->threads.n; i++)
		if (tw[i])
			VEC_PUSH(&ts, ((struct thread_w){ i, tw[i] }));
	if (ts.n)
		qsort_r(ts.v, ts.n, sizeof(*ts.v), by_pid_then_weight, (void *)p);
	sb_adds(sb, "  \"processes\": [");
	for (size_t i = 0; i < np; i++) {
		uint32_t pid = pids[i];
		size_t k0;
		uint64_t sum = 0;

		while (j < ts.n && p->threads.v[ts.v[j].thread].pid < pid)
			j++;
		for (k0 = j; j < ts.n && p->threads.v[ts.v[j].thread].pid == pid; j++)
			sum += ts.v[j].w;
		sb_addf(sb, "%s\n    {\"pid\": %u, ", i ? "," : "", pid);
		add_str_field(sb, "comm", render_proc_table_get(&pt, pid)->comm);
		sb_addf(sb, ", \"samples\": %llu", (unsigned long long)view_units(v, sum));
		render_json_process_resources(sb, p, &pt, pid);
		sb_adds(sb, ",\n     \"threads\": [");
		for (size_t k = k0; k < j; k++) {
			const struct prof_thread *t = &p->threads.v[ts.v[k].thread];
			sb_addf(sb, "%s{\"tid\": %u, ", k > k0 ? ", " : "", t->tid);
			add_str_field(sb, "comm", prof_str(p, t->comm));
			sb_addf(sb, ", \"samples\": %llu", (unsigned long long)view_units(v, ts.v[k].w));
			render_json_thread_resources(sb, p, &pt, ts.v[k].thread);
			sb_adds(sb, "}");
		}
		sb_adds(sb, "]}");
	}
	sb_adds(sb, np ? "\n  ],\n" : "],\n");
	VEC_FREE(&ts);
	render_proc_table_free(&pt);
	free(tw);
	free(pids);
}

static void add_functions(struct strbuf *sb, const struct prof_profile *p,
			  const struct prof_view *v)
{
	struct prof_fn_table t;
	size_t shown = 0;

	prof_output_fn_table_build(p, v, &t);
	sb_adds(sb, "  \"functions\": [");
	for (size_t i = 0; i < t.rows.n; i++) {
		const struct prof_fn_row *r = &t.rows.v[i];
		double self = percent(r->self, t.grand_total), total = percent(r->total, t.grand_total);
		if ((v->sort == PROF_SORT_SELF ? self : total) < v->percent_limit)
			continue;
		sb_adds(sb, shown++ ? ",\n    {" : "\n    {");
		add_str_field(sb, "name", render_fn_name(p, r->func));
		sb_adds(sb, ", ");
		add_str_field(sb, "module", r->module < p->modules.n ?
			      prof_str(p, p->modules.v[r->module].path) : "");
		sb_adds(sb, ", ");
		add_str_field(sb, "file", prof_str(p, r->file));
		sb_addf(sb, ", \"line\": %u, \"self\": %llu, \"total\": %llu, "
			"\"self_pct\": %.2f, \"total_pct\": %.2f}", r->line,
			(unsigned long long)view_units(v, r->self),
			(unsigned long long)view_units(v, r->total), self, total);
	}
	sb_adds(sb, shown ? "\n  ]\n" : "]\n");
	prof_output_fn_table_free(&t);
}

/* record --heap: the rate and the whole-heap estimates with their
 * standard errors (src/model/heap.c), in bytes and allocations. */
static void add_heap(struct strbuf *sb, const struct prof_profile *p)
{
	const struct prof_profile_heap_summary *h = prof_profile_heap_summary(p);

	if (!h->present)
		return;
	sb_addf(sb, "  \"heap\": {\"rate_bytes\": %llu, \"sampled\": %llu, \"freed\": %llu, \"lost\": %llu, "
		"\"allocs\": %.0f, \"allocs_err\": %.0f, \"alloc_bytes\": %.0f, \"alloc_bytes_err\": %.0f, "
		"\"live_bytes\": %.0f, \"live_bytes_err\": %.0f, \"peak_bytes\": %.0f, \"peak_bytes_err\": %.0f, "
		"\"peak_s\": %.3f",
		(unsigned long long)h->rate, (unsigned long long)h->samples, (unsigned long long)h->frees,
		(unsigned long long)h->lost, h->allocs, h->allocs_err, h->alloc_bytes, h->alloc_bytes_err,
		h->live_bytes, h->live_bytes_err, h->peak_bytes, h->peak_bytes_err,
		h->peak_ns > p->start_ns && p->start_ns ? (double)(h->peak_ns - p->start_ns) / 1e9 : 0.0);
	if (h->scope[0]) {
		sb_adds(sb, ", \"scope\": ");
		json_escape(sb, h->scope);
	}
	sb_adds(sb, "},\n");
}

int prof_output_json(FILE *f, const struct prof_profile *p, const struct prof_view *v)
{
	struct strbuf sb = STRBUF_INIT;
	uint64_t freq = 0;
	const char *fs = prof_meta_get(p, "frequency");
	double secs = p->end_ns > p->start_ns ? (double)(p->end_ns - p->start_ns) / 1e9 : 0;
	uint64_t good = p->samples - MIN(p->samples_truncated, p->samples);

	if (fs && parse_u64(fs, &freq) < 0)
		freq = 0;
	sb_adds(&sb, "{\n  \"schema\": \"prof-report/1\",\n  ");
	add_str_field(&sb, "file", v->title ? v->title : "prof.data");
	sb_adds(&sb, ",\n  ");
	add_str_field(&sb, "event", prof_meta_get(p, "event"));
	sb_addf(&sb, ", \"frequency\": %llu, \"metric\": \"%s\", \"unit\": \"%s\",\n",
		(unsigned long long)freq, prof_view_metric_name(v->metric),
		prof_view_metric_unit(v->metric));
	sb_addf(&sb, "  \"samples\": %llu, \"lost\": %llu, \"truncated_stacks\": %llu, "
		"\"complete_pct\": %.1f,\n", (unsigned long long)p->samples,
		(unsigned long long)p->lost, (unsigned long long)p->samples_truncated,
		p->samples ? percent(good, p->samples) : 100.0);
	sb_addf(&sb, "  \"duration_s\": %.3f, \"start_ns\": %llu, \"end_ns\": %llu, ", secs,
		(unsigned long long)p->start_ns, (unsigned long long)p->end_ns);
	add_str_field(&sb, "command", prof_meta_get(p, "command"));
	sb_adds(&sb, ",\n");
	add_heap(&sb, p);
	add_processes(&sb, p, v);
	add_functions(&sb, p, v);
	sb_adds(&sb, "}\n");
	fwrite(sb.buf, 1, sb.len, f);
	sb_release(&sb);
	return ferror(f) ? -EIO : 0;
}
