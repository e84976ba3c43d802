/*
 * render_util.c - small helpers shared by the picture/interop renderers
 * (output.h): quoted JSON strings, JSON made safe to embed in an HTML
 * <script> element, writing a finished buffer out, and the walk over the
 * timed samples that the time-ordered exports (speedscope, Firefox
 * Profiler) and the HTML application share: grouped by thread, filtered
 * and weighed under the view; and the order of a capped list, heaviest
 * first.
 */
#include "prof/output.h"
#include "output-priv.h"
#include <errno.h>
#include <string.h>

void render_json_str(struct strbuf *sb, const char *s)
{
	json_escape(sb, s ? s : "");	/* it writes the quotes too */
}

void render_json_strtab(struct strbuf *sb, const struct strtab *t)
{
	sb_addch(sb, '[');
	for (size_t i = 0; i < t->strs.n; i++) {
		if (i)
			sb_addch(sb, ',');
		render_json_str(sb, t->strs.v[i]);
	}
	sb_addch(sb, ']');
}

void render_json_script_safe(struct strbuf *sb, const char *json)
{
	/* '<' can only occur inside JSON strings, where \u003c means the same
	 * character; this keeps "</script>" in a symbol from closing the tag. */
	for (const char *c = json; *c; c++) {
		switch (*c) {
		case '<': sb_adds(sb, "\\u003c"); break;
		case '>': sb_adds(sb, "\\u003e"); break;
		case '&': sb_adds(sb, "\\u0026"); break;
		default: sb_addch(sb, *c);
		}
	}
}

int render_flush(FILE *f, const struct strbuf *sb)
{
	if (sb->len && fwrite(sb->buf, 1, sb->len, f) != sb->len)
		return -EIO;
	return fflush(f) ? -EIO : 0;
}

void render_weight(struct strbuf *sb, const struct prof_view *v, uint64_t w)
{
	if (v->metric == PROF_VIEW_CPU)
		sb_addf(sb, "%llu sample%s", (unsigned long long)w, w == 1 ? "" : "s");
	else if (prof_view_metric_is_heap(v->metric))	/* bytes or allocations */
		sb_addf(sb, "%llu %s", (unsigned long long)w, prof_view_metric_unit(v->metric));
	else	/* time metrics weigh in ns (prof_view_weight) */
		sb_addf(sb, "%.3f ms", w / 1e6);
}

void render_timed_by_thread(const struct prof_profile *p, size_t **startp, size_t **orderp)
{
	/* One counting pass: threads x samples would be quadratic for a
	 * system-wide recording. */
	size_t *start = xcalloc(p->threads.n + 1, sizeof(*start));
	size_t *order = xmalloc((p->timed.n + 1) * sizeof(*order));
	size_t *fill = xmalloc((p->threads.n + 1) * sizeof(*fill));

	for (size_t i = 0; i < p->timed.n; i++)
		if (p->timed.v[i].thread < p->threads.n)
			start[p->timed.v[i].thread + 1]++;
	for (size_t t = 0; t < p->threads.n; t++)
		start[t + 1] += start[t];
	memcpy(fill, start, (p->threads.n + 1) * sizeof(*fill));
	for (size_t i = 0; i < p->timed.n; i++)
		if (p->timed.v[i].thread < p->threads.n)
			order[fill[p->timed.v[i].thread]++] = i;
	free(fill);
	*startp = start;
	*orderp = order;
}

bool render_view_passes(const struct prof_profile *p, const struct prof_view *v, uint32_t thread,
			uint32_t node)
{
	struct prof_view any = *v;
	struct prof_agg probe = { .thread = thread, .node = node };

	any.metric = PROF_VIEW_CPU;
	probe.value[PROF_M_SAMPLES] = 1;
	return prof_view_weight(p, &any, &probe) != 0;
}

bool render_timed_has_cpu_ns(const struct prof_profile *p)
{
	for (size_t i = 0; i < p->timed.n; i++)
		if (p->timed.v[i].metric == PROF_M_CPU_NS)
			return true;
	return false;
}

uint64_t render_timed_weight(const struct prof_profile *p, const struct prof_view *v,
			     const struct prof_timed_sample *e, bool cpu_ns)
{
	struct prof_agg a = { .thread = e->thread, .node = e->node };
	unsigned metric = e->metric;
	uint64_t value = e->value;

	if (metric >= PROF_METRIC_COUNT)
		return 0;
	if (metric == PROF_M_SAMPLES && !cpu_ns && p->period_ns) {
		metric = PROF_M_CPU_NS;
		value *= p->period_ns;
	}
	if (v->metric == PROF_VIEW_CPU && (cpu_ns || p->period_ns)) {
		if (metric != PROF_M_CPU_NS)
			return 0;
		return render_view_passes(p, v, e->thread, e->node) ? value : 0;
	}
	a.value[metric] = value;
	return prof_view_weight(p, v, &a);
}

static int heavier_first(const void *x, const void *y, void *weights)
{
	const uint64_t *w = weights;
	size_t a = *(const size_t *)x, b = *(const size_t *)y;

	if (w[a] != w[b])
		return w[a] > w[b] ? -1 : 1;
	return (a > b) - (a < b);
}

size_t *render_order_heaviest_first(const uint64_t *weight, size_t n)
{
	size_t *order = xcalloc(n + 1, sizeof(*order));

	for (size_t i = 0; i < n; i++)
		order[i] = i;
	if (n)		/* qsort(NULL, 0) is undefined */
		qsort_r(order, n, sizeof(*order), heavier_first, (void *)weight);
	return order;
}
