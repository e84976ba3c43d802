/*
 * view.c - what a report looks at: the --metric that weighs each
 * (thread, stack) aggregate, the --pid/--tid/--comm/--dso filters (comma
 * lists, as perf's) and what percentages divide by (--percentage).
 * Every renderer asks prof_view_weight() and nothing else, so all formats
 * agree on what is counted.
 */
#include "prof/model.h"
#include <errno.h>
#include <string.h>

static const char *const metric_names[] = {
	[PROF_VIEW_CPU] = "cpu",
	[PROF_VIEW_OFFCPU] = "off-cpu",
	[PROF_VIEW_IOWAIT] = "io-wait",
	[PROF_VIEW_SLEEP] = "sleep",
	[PROF_VIEW_WALL] = "wall",
	[PROF_VIEW_ALLOCS] = "allocs",
	[PROF_VIEW_ALLOC_BYTES] = "alloc-bytes",
	[PROF_VIEW_LIVE_BYTES] = "live-bytes",
	[PROF_VIEW_PEAK_BYTES] = "peak-bytes",
};

int prof_view_metric_parse(const char *s, enum prof_view_metric *m)
{
	for (size_t i = 0; i < ARRAY_SIZE(metric_names); i++)
		if (!strcmp(s, metric_names[i])) {
			*m = (enum prof_view_metric)i;
			return 0;
		}
	return -EINVAL;
}

const char *prof_view_metric_name(enum prof_view_metric m)
{
	return (unsigned)m < ARRAY_SIZE(metric_names) ? metric_names[m] : "?";
}

const char *prof_view_metric_unit(enum prof_view_metric m)
{
	if (m == PROF_VIEW_ALLOCS)
		return "allocations";
	if (prof_view_metric_is_heap(m))
		return "bytes";
	return m == PROF_VIEW_CPU ? "samples" : "us";
}

void prof_view_init(struct prof_view *v)
{
	memset(v, 0, sizeof(*v));
	v->metric = PROF_VIEW_CPU;
	v->sort = PROF_SORT_SELF;
}

const char *prof_module_basename(const struct prof_profile *p, uint32_t module)
{
	if (module >= p->modules.n)
		return "";
	const char *path = prof_str(p, p->modules.v[module].path);
	const char *slash = strrchr(path, '/');
	return slash && slash[1] ? slash + 1 : path;
}

const char *prof_frame_module_path(const struct prof_profile *p, const struct prof_frame *f)
{
	if (f->module == PROF_NONE || f->module >= p->modules.n)
		return "";
	return prof_str(p, p->modules.v[f->module].path);
}

/* name is one of the comma list's items. */
static bool in_list(const char *list, const char *name)
{
	size_t len = strlen(name);

	for (const char *p = list;; p++) {
		size_t n = strcspn(p, ",");
		if (n == len && !strncmp(p, name, len))
			return true;
		p += n;
		if (!*p)
			return false;
	}
}

static bool id_in(const uint32_t *ids, size_t n, uint32_t id)
{
	for (size_t i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

bool prof_view_pid_selected(const struct prof_view *v, uint32_t pid)
{
	return !v->npids || id_in(v->pids, v->npids, pid);
}

/* True when tid passes --tid. */
static bool prof_view_tid_selected(const struct prof_view *v, uint32_t tid)
{
	return !v->ntids || id_in(v->tids, v->ntids, tid);
}

bool prof_view_comm_selected(const struct prof_view *v, const char *comm)
{
	return !v->comm || in_list(v->comm, comm);
}

bool prof_view_filtered(const struct prof_view *v)
{
	return v->npids || v->ntids || v->comm || v->dso;
}

static bool dso_matches(const struct prof_profile *p, const struct prof_view *v, uint32_t node)
{
	if (node == 0 || node >= p->nodes.n)
		return false;
	uint32_t frame = p->nodes.v[node].frame;
	uint32_t module = frame < p->frames.n ? p->frames.v[frame].module : PROF_NONE;
	if (module >= p->modules.n)
		return false;
	return in_list(v->dso, prof_module_basename(p, module)) ||
	       in_list(v->dso, prof_str(p, p->modules.v[module].path));
}

static bool passes_filters(const struct prof_profile *p, const struct prof_view *v,
			   const struct prof_agg *a)
{
	const struct prof_thread *t = &p->threads.v[a->thread];

	return prof_view_pid_selected(v, t->pid) && prof_view_tid_selected(v, t->tid) &&
	       prof_view_comm_selected(v, prof_str(p, t->comm)) &&
	       (!v->dso || dso_matches(p, v, a->node));
}

static uint64_t metric_weight(enum prof_view_metric m, const struct prof_agg *a)
{
	switch (m) {
	case PROF_VIEW_CPU: return a->value[PROF_M_SAMPLES];
	case PROF_VIEW_OFFCPU: return a->value[PROF_M_OFFCPU_NS];
	case PROF_VIEW_IOWAIT: return a->value[PROF_M_IOWAIT_NS];
	case PROF_VIEW_SLEEP: return a->value[PROF_M_SLEEP_NS];
	case PROF_VIEW_WALL: return a->value[PROF_M_CPU_NS] + a->value[PROF_M_OFFCPU_NS];
	case PROF_VIEW_ALLOCS: return a->value[PROF_M_ALLOCS];
	case PROF_VIEW_ALLOC_BYTES: return a->value[PROF_M_ALLOC_BYTES];
	case PROF_VIEW_LIVE_BYTES:	/* a free is charged to its allocation's stack */
		return a->value[PROF_M_ALLOC_BYTES] > a->value[PROF_M_FREE_BYTES]
			       ? a->value[PROF_M_ALLOC_BYTES] - a->value[PROF_M_FREE_BYTES] : 0;
	case PROF_VIEW_PEAK_BYTES: return a->value[PROF_M_PEAK_BYTES];
	}
	return 0;
}

uint64_t prof_view_percent_base(const struct prof_profile *p, const struct prof_view *v,
				uint64_t filtered_total)
{
	uint64_t all = 0;

	if (v->percent_relative || !prof_view_filtered(v))
		return filtered_total;
	for (size_t i = 0; i < p->aggs.n; i++)
		all += metric_weight(v->metric, &p->aggs.v[i]);
	return all;
}

uint64_t prof_view_weight(const struct prof_profile *p, const struct prof_view *v,
			  const struct prof_agg *a)
{
	uint64_t w = metric_weight(v->metric, a);

	return w && passes_filters(p, v, a) ? w : 0;
}
