/*
 * view.c - what a report looks at: the --metric that weighs each
 * (thread, stack) aggregate and the --pid/--tid/--comm/--dso filters.
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
	v->pid = v->tid = -1;
}

const char *prof_module_basename(const struct prof_profile *p, uint32_t module)
{
	if (module >= p->modules.n)
		return "";
	const char *path = prof_str(p, p->modules.v[module].path);
	const char *slash = strrchr(path, '/');
	return slash && slash[1] ? slash + 1 : path;
}

static bool dso_matches(const struct prof_profile *p, const struct prof_view *v, uint32_t node)
{
	if (node == 0 || node >= p->nodes.n)
		return false;
	uint32_t frame = p->nodes.v[node].frame;
	uint32_t module = frame < p->frames.n ? p->frames.v[frame].module : PROF_NONE;
	if (module >= p->modules.n)
		return false;
	return !strcmp(v->dso, prof_module_basename(p, module)) ||
	       !strcmp(v->dso, prof_str(p, p->modules.v[module].path));
}

static bool passes_filters(const struct prof_profile *p, const struct prof_view *v,
			   const struct prof_agg *a)
{
	const struct prof_thread *t = &p->threads.v[a->thread];

	if (v->pid >= 0 && t->pid != (uint64_t)v->pid)
		return false;
	if (v->tid >= 0 && t->tid != (uint64_t)v->tid)
		return false;
	if (v->comm && strcmp(v->comm, prof_str(p, t->comm)))
		return false;
	if (v->dso && !dso_matches(p, v, a->node))
		return false;
	return true;
}

uint64_t prof_view_weight(const struct prof_profile *p, const struct prof_view *v,
			  const struct prof_agg *a)
{
	uint64_t w;

	switch (v->metric) {
	case PROF_VIEW_CPU: w = a->value[PROF_M_SAMPLES]; break;
	case PROF_VIEW_OFFCPU: w = a->value[PROF_M_OFFCPU_NS]; break;
	case PROF_VIEW_IOWAIT: w = a->value[PROF_M_IOWAIT_NS]; break;
	case PROF_VIEW_SLEEP: w = a->value[PROF_M_SLEEP_NS]; break;
	case PROF_VIEW_WALL: w = a->value[PROF_M_CPU_NS] + a->value[PROF_M_OFFCPU_NS]; break;
	case PROF_VIEW_ALLOCS: w = a->value[PROF_M_ALLOCS]; break;
	case PROF_VIEW_ALLOC_BYTES: w = a->value[PROF_M_ALLOC_BYTES]; break;
	case PROF_VIEW_LIVE_BYTES:	/* a free is charged to its allocation's stack */
		w = a->value[PROF_M_ALLOC_BYTES] > a->value[PROF_M_FREE_BYTES]
			    ? a->value[PROF_M_ALLOC_BYTES] - a->value[PROF_M_FREE_BYTES] : 0;
		break;
	case PROF_VIEW_PEAK_BYTES: w = a->value[PROF_M_PEAK_BYTES]; break;
	default: return 0;
	}
	if (!w || !passes_filters(p, v, a))
		return 0;
	return w;
}
