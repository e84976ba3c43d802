/*
 * series.c - turns recordings into per-run, per-function costs: the input
 * of `prof diff` and the time side of `prof crosscheck`.  Each recording is
 * one run; a function's cost in a run is its self and inclusive weight under
 * the chosen metric (CPU ns for cpu-clock samples, ns for the off-CPU
 * metrics), with the sample counts kept for the Poisson noise floor.
 *
 * Design notes: functions are interned by identity (src/model/identity.c)
 * in the shared an_fnset (see include/prof/analysis.h); a run's cost vector is
 * indexed by that id and grows on demand, so ids interned by a later run
 * read as zero cost in earlier runs.
 */
#include "prof/analysis.h"
#include <errno.h>
#include <string.h>

void an_fnset_init(struct an_fnset *fs)
{
	memset(fs, 0, sizeof(*fs));
	prof_idset_init(&fs->ids);
}

void an_fnset_free(struct an_fnset *fs)
{
	prof_idset_free(&fs->ids);
	VEC_FREE(&fs->canon);
}

uint32_t an_fn_find(const struct an_fnset *fs, const char *name, const char *module)
{
	return prof_idset_find(&fs->ids, name, module);
}

void an_side_free(struct an_side *s)
{
	for (size_t i = 0; i < s->runs.n; i++)
		VEC_FREE(&s->runs.v[i].fn);
	VEC_FREE(&s->runs);
}

struct an_cost *an_run_cost(struct an_run *r, uint32_t fn)
{
	if (fn >= r->fn.n) {
		VEC_GROW(&r->fn, (size_t)fn + 1);
		memset(r->fn.v + r->fn.n, 0, (fn + 1 - r->fn.n) * sizeof(*r->fn.v));
		r->fn.n = (size_t)fn + 1;
	}
	return &r->fn.v[fn];
}

/* Cost of one aggregate in seconds (or samples) and the samples behind it. */
static void agg_weight(const struct prof_profile *p, const struct prof_view *v,
		       const struct prof_agg *a, double *cost, double *count, bool *timed)
{
	uint64_t w = prof_view_weight(p, v, a);

	if (prof_view_metric_is_heap(v->metric)) {
		/* bytes or allocations; the samples behind them: about one per
		 * rate bytes allocated (every allocation at rate 1) */
		uint64_t rate = p->heap.rate;
		*cost = (double)w;
		*count = !w ? 0 : rate > 1 ? (double)a->value[PROF_M_ALLOC_BYTES] / (double)rate
					  : (double)a->value[PROF_M_ALLOCS];
		return;
	}
	if (v->metric != PROF_VIEW_CPU) {	/* already ns; not sample counts */
		*cost = (double)w / 1e9;
		*count = 0;
		*timed = true;
		return;
	}
	*count = (double)w;
	if (w && a->value[PROF_M_CPU_NS])
		*cost = (double)a->value[PROF_M_CPU_NS] / 1e9;
	else if (p->period_ns)
		*cost = (double)w * (double)p->period_ns / 1e9;
	else {
		*cost = (double)w;
		*timed = false;
	}
}

/*
 * Charges one stack: self to the innermost counted frame, inclusive once
 * per function.  With fold, inlined frames are skipped, so their samples
 * land on the nearest non-inlined caller.
 */
static void charge_stack(const struct prof_profile *p, const uint32_t *frame_fn,
			 uint64_t *stamp, uint64_t gen, struct an_run *r,
			 uint32_t leaf, double cost, double count, bool fold)
{
	bool self_done = false;

	for (uint32_t n = leaf; n && n < p->nodes.n; n = p->nodes.v[n].parent) {
		uint32_t frame = p->nodes.v[n].frame;
		if (frame >= p->frames.n || (fold && p->frames.v[frame].inlined))
			continue;
		uint32_t fn = frame_fn[frame];
		struct an_cost *c = an_run_cost(r, fn);
		if (!self_done) {
			c->self += cost;
			c->self_n += count;
			self_done = true;
		}
		if (stamp[fn] != gen) {
			stamp[fn] = gen;
			c->incl += cost;
			c->incl_n += count;
		}
	}
}

int an_side_add_profile(struct an_fnset *fs, struct an_side *side,
			const struct prof_profile *p, const struct an_load_opts *o)
{
	struct prof_view v;
	struct an_run run = { .unit = "s" };
	bool timed = true;
	uint32_t *frame_fn = prof_idset_add_profile(&fs->ids, p);
	uint64_t *stamp = xcalloc(an_fn_count(fs) + 1, sizeof(*stamp));

	prof_view_init(&v);
	v.metric = o->metric;
	for (size_t i = 0; i < p->aggs.n; i++) {
		const struct prof_agg *a = &p->aggs.v[i];
		double cost, count;

		agg_weight(p, &v, a, &cost, &count, &timed);
		if (cost <= 0)
			continue;
		run.total += cost;
		run.total_n += count;
		charge_stack(p, frame_fn, stamp, i + 1, &run, a->node, cost, count,
			     o->fold_inlined);
	}
	free(stamp);
	free(frame_fn);
	if (!timed)
		run.unit = "samples";
	if (prof_view_metric_is_heap(o->metric))
		run.unit = prof_view_metric_unit(o->metric);	/* "bytes", "allocations" */
	if (run.total <= 0) {
		VEC_FREE(&run.fn);
		return -EINVAL;
	}
	VEC_PUSH(&side->runs, run);
	return 0;
}
