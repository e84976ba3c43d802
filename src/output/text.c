/*
 * text.c - the default human report: the "# ..." header (what was
 * recorded, how much, how well unwound) and the flat per-function table
 * with Self%, Total%, the self weight and the module.  Time metrics print
 * milliseconds.
 */
#include "output-priv.h"
#include <errno.h>
#include <math.h>
#include <string.h>

static void header_event_line(FILE *f, const struct prof_profile *p)
{
	const char *event = prof_meta_get(p, "event");
	const char *freq = prof_meta_get(p, "frequency");
	const char *cg = prof_meta_get(p, "callgraph");
	const char *unw = prof_meta_get(p, "unwinder");
	struct strbuf sb = STRBUF_INIT;

	add_printable(&sb, event && *event ? event : "unknown", "", '?');
	if (freq && *freq)
		sb_addf(&sb, ", %s Hz", freq);
	if (cg && *cg) {
		sb_addf(&sb, ", callgraph %s", cg);
		if (unw && *unw && strcmp(cg, "none") && strcmp(cg, "fp"))
			sb_addf(&sb, " (%s)", unw);
	}
	fprintf(f, "# event: %s\n", sb_str(&sb));
	sb_release(&sb);
}

struct proc_samples {
	uint32_t pid, comm;	/* comm: the name of its busiest thread */
	uint64_t samples, best_thread;
};

static int by_samples_desc(const void *a, const void *b)
{
	const struct proc_samples *x = a, *y = b;

	return x->samples != y->samples ? (x->samples > y->samples ? -1 : 1) : (x->pid > y->pid) - (x->pid < y->pid);
}

/*
 * Without resource readings (system-wide, --no-resources) the busiest
 * processes by CPU samples, one line each: a recording of many processes
 * says who was busy before it says where.  --pid / --comm narrow it.
 */
static void text_process_samples(FILE *f, const struct prof_profile *p, const struct prof_view *v)
{
	VEC(uint64_t) per_thread = { 0 };
	VEC(struct proc_samples) procs = { 0 };
	struct u64map index = { 0 };
	uint64_t total = 0, all = 0, at;

	for (size_t i = 0; i < p->threads.n; i++)
		VEC_PUSH(&per_thread, 0);
	for (size_t i = 0; i < p->aggs.n; i++) {
		per_thread.v[p->aggs.v[i].thread] += p->aggs.v[i].value[PROF_M_SAMPLES];
		all += p->aggs.v[i].value[PROF_M_SAMPLES];
	}
	for (size_t i = 0; i < p->threads.n; i++) {
		const struct prof_thread *t = &p->threads.v[i];
		bool created;
		if (!per_thread.v[i] || !prof_view_pid_selected(v, t->pid) ||
		    !prof_view_comm_selected(v, prof_str(p, t->comm)))
			continue;
		at = *u64map_slot(&index, t->pid, &created);
		if (created) {
			VEC_PUSH(&procs, ((struct proc_samples){ t->pid, t->comm, 0, 0 }));
			u64map_put(&index, t->pid, at = procs.n - 1);
		}
		procs.v[at].samples += per_thread.v[i];
		if (per_thread.v[i] > procs.v[at].best_thread) {
			procs.v[at].best_thread = per_thread.v[i];
			procs.v[at].comm = t->comm;
		}
		total += per_thread.v[i];
	}
	if (procs.n > 1) {
		struct strbuf sb = STRBUF_INIT;
		qsort(procs.v, procs.n, sizeof(*procs.v), by_samples_desc);
		if (!v->percent_relative && prof_view_filtered(v))
			total = all;	/* perf's --percentage absolute */
		fprintf(f, "# processes: %zu with samples; the busiest:\n", procs.n);
		for (size_t i = 0; i < procs.n && i < 10; i++) {
			sb_reset(&sb);
			add_printable(&sb, prof_str(p, procs.v[i].comm), "", '?');
			fprintf(f, "#   %6.2f%%  %8llu  pid %-7u %s\n", percent(procs.v[i].samples, total),
				(unsigned long long)procs.v[i].samples, procs.v[i].pid, sb_str(&sb));
		}
		sb_release(&sb);
	}
	u64map_free(&index);
	VEC_FREE(&procs);
	VEC_FREE(&per_thread);
}

/* --header: everything the recording says about itself. */
static void text_meta_header(FILE *f, const struct prof_profile *p)
{
	struct strbuf sb = STRBUF_INIT;

	fprintf(f, "# ========\n# recording header\n");
	for (size_t i = 0; i < p->meta.n; i++) {
		sb_reset(&sb);
		add_printable(&sb, prof_str(p, p->meta.v[i].key), "", '?');
		sb_adds(&sb, ": ");
		add_printable(&sb, prof_str(p, p->meta.v[i].value), "", '?');
		fprintf(f, "# %s\n", sb.buf);
	}
	fprintf(f, "# ========\n#\n");
	sb_release(&sb);
}

/* A byte figure in the header: "4.00 MiB". */
static void add_bytes(struct strbuf *sb, double b)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	size_t u = 0;

	while (fabs(b) >= 1024 && u + 1 < ARRAY_SIZE(units)) {
		b /= 1024;
		u++;
	}
	sb_addf(sb, u ? "%.2f %s" : "%.0f %s", b, units[u]);
}

/* The heap estimates with their standard errors (src/model/heap.c). */
static void text_heap_header(FILE *f, const struct prof_profile *p)
{
	const struct prof_profile_heap_summary *h = prof_profile_heap_summary(p);
	struct strbuf sb = STRBUF_INIT;
	const char *mode = prof_meta_get(p, "heap_mode");

	if (h->rate <= 1)
		sb_adds(&sb, "every allocation");
	else {
		sb_adds(&sb, "one sample per ");
		add_bytes(&sb, (double)h->rate);
		sb_adds(&sb, " allocated on average");
	}
	fprintf(f, "# heap: %s (%s), %llu allocations sampled, %llu of them freed; estimates +- one standard error\n",
		sb_str(&sb), mode ? mode : "?", (unsigned long long)h->samples,
		(unsigned long long)h->frees);
	sb_reset(&sb);
	sb_addf(&sb, "allocs %.0f +- %.0f, alloc-bytes ", h->allocs, h->allocs_err);
	add_bytes(&sb, h->alloc_bytes);
	sb_adds(&sb, " +- ");
	add_bytes(&sb, h->alloc_bytes_err);
	sb_adds(&sb, ", live-bytes at the end ");
	add_bytes(&sb, h->live_bytes);
	sb_adds(&sb, " +- ");
	add_bytes(&sb, h->live_bytes_err);
	sb_adds(&sb, ", peak-bytes ");
	add_bytes(&sb, h->peak_bytes);
	sb_adds(&sb, " +- ");
	add_bytes(&sb, h->peak_bytes_err);
	if (h->peak_ns > p->start_ns && p->start_ns)
		sb_addf(&sb, " at %.3f s", (double)(h->peak_ns - p->start_ns) / 1e9);
	fprintf(f, "# heap: %s\n", sb_str(&sb));
	if (h->scope[0])
		fprintf(f, "# heap: showing %s\n", h->scope);
	if (h->lost)
		fprintf(f, "# heap: %llu samples were lost (the kernel's ring was full): the estimates are low, leaks may be overstated\n",
			(unsigned long long)h->lost);
	sb_release(&sb);
}

static void add_ids(struct strbuf *sb, const char *what, const uint32_t *ids, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sb_addf(sb, "%s%u", i ? "," : what, ids[i]);
}

/* The filters, and what the percentages divide by (perf's --percentage). */
static void text_filter_line(FILE *f, const struct prof_view *v)
{
	struct strbuf sb = STRBUF_INIT;

	if (!prof_view_filtered(v))
		return;
	add_ids(&sb, " pid ", v->pids, v->npids);
	add_ids(&sb, " tid ", v->tids, v->ntids);
	if (v->comm) {
		sb_adds(&sb, " comm ");
		add_printable(&sb, v->comm, "", '?');
	}
	if (v->dso) {
		sb_adds(&sb, " dso ");
		add_printable(&sb, v->dso, "", '?');
	}
	fprintf(f, "# filter:%s; percentages %s\n", sb.buf,
		v->percent_relative ? "relative: of what the filter keeps"
				    : "absolute: of the whole recording (--percentage relative: of what the filter keeps)");
	sb_release(&sb);
}

/* How the Python frames went (meta "python_samples": samples merged
 * mismatched unread, written by the recorder; "python_read": chains read
 * at the sample by the BPF program, after it by the recorder, and (a
 * third number from when off-CPU stacks got Python frames) those of
 * switched-out threads, read by the recorder while they stayed blocked,
 * and (a fourth, from when the switch program read them) those read by
 * the BPF program at the switch-out): a
 * mismatch is a stack left native because the Python chain did not fit
 * it, or had changed by the time it (or a code object of it) was read. */
static void header_python_line(FILE *f, const struct prof_profile *p)
{
	const char *ver = prof_meta_get(p, "python"), *st = prof_meta_get(p, "python_samples");
	const char *rd = prof_meta_get(p, "python_read");
	unsigned long long n = 0, merged = 0, moved = 0, unread = 0, at = 0, after = 0, blocked = 0, at_switch = 0;

	if (!ver || !st || sscanf(st, "%llu %llu %llu %llu", &n, &merged, &moved, &unread) != 4 || !n)
		return;
	int known = rd ? sscanf(rd, "%llu %llu %llu %llu", &at, &after, &blocked, &at_switch) : 0;
	fprintf(f, "# python: CPython %s frames in %llu of %llu stacks (%.1f%%); %llu mismatched "
		"(%.2f%%: the chain did not fit the native stack or had changed when read, kept native), "
		"%llu unreadable", ver, merged, n, percent(merged, n), moved, percent(moved, n), unread);
	if (known >= 3)
		fprintf(f, "; off-CPU stacks read while blocked %llu", blocked);
	if (known == 4)
		fprintf(f, ", at the switch-out (BPF) %llu", at_switch);
	if (known >= 2)
		fprintf(f, "; chains read at the sample (BPF) %llu, after it %llu", at, after);
	fputc('\n', f);
}

void render_text_header(FILE *f, const struct prof_profile *p, const struct prof_view *v,
			uint64_t grand_total)
{
	const char *cmd = prof_meta_get(p, "command");
	double secs = p->end_ns > p->start_ns ? (double)(p->end_ns - p->start_ns) / 1e9 : 0;
	struct strbuf sb = STRBUF_INIT;

	if (v->quiet)
		return;
	if (v->full_header)
		text_meta_header(f, p);
	add_printable(&sb, v->title ? v->title : "prof.data", "", '?');
	fprintf(f, "%s# prof report: %s%s\n", color(v, COLOR_HEADER), sb_str(&sb),
		color(v, COLOR_RESET));
	header_event_line(f, p);
	fprintf(f, "# samples: %llu, lost: %llu, duration: %.2f s, fully unwound: %.1f%%\n",
		(unsigned long long)p->samples, (unsigned long long)p->lost, secs,
		p->samples ? percent(p->samples - MIN(p->samples_truncated, p->samples), p->samples)
			   : 100.0);
	if (cmd && *cmd) {
		sb_reset(&sb);
		add_printable(&sb, cmd, "", '?');
		fprintf(f, "# command: %s\n", sb_str(&sb));
	}
	header_python_line(f, p);
	if (p->resources.n)
		render_text_resources_header(f, p, v);
	else
		text_process_samples(f, p, v);
	if (view_is_time(v))
		fprintf(f, "# metric: %s, total %.2f ms\n", prof_view_metric_name(v->metric),
			(double)grand_total / 1e6);
	else if (prof_view_metric_is_heap(v->metric))
		fprintf(f, "# metric: %s, total %llu %s\n", prof_view_metric_name(v->metric),
			(unsigned long long)grand_total, prof_view_metric_unit(v->metric));
	if (p->heap.present)
		text_heap_header(f, p);
	text_filter_line(f, v);
	fprintf(f, "#\n");
	sb_release(&sb);
}

int prof_output_text_flat(FILE *f, const struct prof_profile *p, const struct prof_view *v)
{
	struct prof_fn_table t;
	struct strbuf name = STRBUF_INIT;
	uint64_t base;

	prof_output_fn_table_build(p, v, &t);
	base = prof_view_percent_base(p, v, t.grand_total);
	render_text_header(f, p, v, t.grand_total);
	if (!v->quiet)
		fprintf(f, "%s  Self%%   Total%%  %8s  %-32s %s%s\n", color(v, COLOR_HEADER),
			view_column(v), "Function", "Module",
			color(v, COLOR_RESET));
	for (size_t i = 0; i < t.rows.n; i++) {
		const struct prof_fn_row *r = &t.rows.v[i];
		double self = percent(r->self, base), total = percent(r->total, base);
		if ((v->sort == PROF_SORT_SELF ? self : total) < v->percent_limit)
			continue;
		sb_reset(&name);
		add_printable(&name, render_fn_name(p, r->func), "", '?');
		fprintf(f, "%s%6.2f%%%s  %s%6.2f%%%s  ", color_percent(v, self), self,
			color(v, *color_percent(v, self) ? COLOR_RESET : ""), color_percent(v, total),
			total, color(v, *color_percent(v, total) ? COLOR_RESET : ""));
		if (view_is_time(v))
			fprintf(f, "%8.2f", (double)r->self / 1e6);
		else
			fprintf(f, "%8llu", (unsigned long long)r->self);
		fprintf(f, "  %-32s ", sb_str(&name));
		sb_reset(&name);
		add_printable(&name, prof_module_basename(p, r->module), "", '?');
		fprintf(f, "%s%s%s\n", color(v, COLOR_MODULE), sb_str(&name),
			color(v, *sb_str(&name) ? COLOR_RESET : ""));
	}
	if (!t.grand_total)
		fprintf(f, "# no samples match (metric %s)\n", prof_view_metric_name(v->metric));
	sb_release(&name);
	prof_output_fn_table_free(&t);
	return ferror(f) ? -EIO : 0;
}
