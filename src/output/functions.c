/*
 * functions.c - the per-function self/total table behind the flat and
 * JSON reports, and the frame -> function index the tree shares.
 * Functions are keyed by (name, module), so a function's inlined copies
 * and its different lines/addresses merge into one row.
 *
 * Design notes: "total" must count a stack once per function even when
 * the function recurses; stamp[fn] remembers the last aggregate that
 * credited fn, which makes that check O(1) per frame.
 */
#include "output-priv.h"
#include <string.h>

const char *render_fn_name(const struct prof_profile *p, uint32_t func)
{
	const char *s = prof_str(p, func);
	return *s ? s : "[unknown]";
}

void render_fn_index_build(struct fn_index *ix, const struct prof_profile *p)
{
	memset(ix, 0, sizeof(*ix));
	ix->frame_fn = xmalloc((p->frames.n + 1) * sizeof(*ix->frame_fn));
	for (size_t i = 0; i < p->frames.n; i++) {
		const struct prof_frame *f = &p->frames.v[i];
		bool created;
		uint64_t key = ((uint64_t)f->func << 32) | (uint32_t)(f->module + 1);
		uint64_t *slot = u64map_slot(&ix->by_key, key, &created);
		if (created) {
			struct prof_fn_row row = { f->func, f->module, f->file, f->line, 0, 0 };
			*slot = ix->fns.n;
			VEC_PUSH(&ix->fns, row);
		}
		ix->frame_fn[i] = (uint32_t)*slot;
	}
}

void render_fn_index_free(struct fn_index *ix)
{
	free(ix->frame_fn);
	VEC_FREE(&ix->fns);
	u64map_free(&ix->by_key);
}

struct sort_ctx {
	enum prof_sort key;
	const struct prof_profile *p;
};

/* Sort key descending, then the other key, then name: deterministic. */
static int row_cmp(const void *pa, const void *pb, void *arg)
{
	const struct prof_fn_row *a = pa, *b = pb;
	const struct sort_ctx *ctx = arg;
	enum prof_sort sort_key = ctx->key;
	uint64_t ka = sort_key == PROF_SORT_SELF ? a->self : a->total;
	uint64_t kb = sort_key == PROF_SORT_SELF ? b->self : b->total;
	uint64_t oa = sort_key == PROF_SORT_SELF ? a->total : a->self;
	uint64_t ob = sort_key == PROF_SORT_SELF ? b->total : b->self;

	if (ka != kb)
		return ka > kb ? -1 : 1;
	if (oa != ob)
		return oa > ob ? -1 : 1;
	int c = strcmp(prof_str(ctx->p, a->func), prof_str(ctx->p, b->func));
	return c ? c : (a->module > b->module) - (a->module < b->module);
}

void prof_output_fn_table_build(const struct prof_profile *p, const struct prof_view *v,
				struct prof_fn_table *t)
{
	struct fn_index ix;
	uint64_t *stamp;

	memset(t, 0, sizeof(*t));
	render_fn_index_build(&ix, p);
	stamp = xcalloc(ix.fns.n + 1, sizeof(*stamp));
	for (size_t i = 0; i < p->aggs.n; i++) {
		const struct prof_agg *a = &p->aggs.v[i];
		uint64_t w = prof_view_weight(p, v, a);
		if (!w)
			continue;
		t->grand_total += w;
		if (a->node == 0)
			continue;
		ix.fns.v[ix.frame_fn[p->nodes.v[a->node].frame]].self += w;
		uint32_t depth = 0;
		for (uint32_t n = a->node; n && (!v->max_stack || depth < v->max_stack);
		     n = p->nodes.v[n].parent, depth++) {
			uint32_t fn = ix.frame_fn[p->nodes.v[n].frame];
			if (stamp[fn] != i + 1) {
				stamp[fn] = i + 1;
				ix.fns.v[fn].total += w;
			}
		}
	}
	for (size_t i = 0; i < ix.fns.n; i++)
		if (ix.fns.v[i].total)
			VEC_PUSH(&t->rows, ix.fns.v[i]);
	struct sort_ctx ctx = { v->sort, p };
	if (t->rows.n)
		qsort_r(t->rows.v, t->rows.n, sizeof(*t->rows.v), row_cmp, &ctx);
	free(stamp);
	render_fn_index_free(&ix);
}

void prof_output_fn_table_free(struct prof_fn_table *t)
{
	VEC_FREE(&t->rows);
	t->grand_total = 0;
}
