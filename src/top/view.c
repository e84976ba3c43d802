/*
 * view.c - the aggregation behind `prof top` (see include/prof/top.h): a
 * sliding window of samples and, on demand, the table of functions (self
 * and total weight) or the callers of one function.
 *
 * Design notes / invariants:
 *  - The window is a circular queue of (time, thread, node, weight) in feed
 *    order.  Samples arrive nearly time-sorted (the rings are merged by
 *    time), so expiring pops from the front while the front is too old.
 *  - node_w (node -> weight in the window) and pid_w (pid -> weight) are
 *    updated on every feed and expire, so a table costs one walk per
 *    distinct stack in the window, not per sample.  Entries that reach 0
 *    stay in the maps until they outnumber the live ones, then the maps
 *    are rebuilt: memory follows what is in the window, not what ever was.
 *  - A function is (frame.func, frame.module): two frames of one function
 *    at different lines or inline sites are one row.  Inlined frames are
 *    functions of their own, as in every other prof view.
 *  - The view never changes the profile; it only reads the trie, threads
 *    and strings, which only grow, so held node ids stay valid.
 */
#include "prof/top.h"
#include <stdlib.h>
#include <string.h>

struct win_sample {
	uint64_t time, weight;
	uint32_t thread, node;
};

struct prof_top_view {
	const struct prof_profile *p;
	uint64_t window_ns;
	struct win_sample *q;		/* circular: q[(head + i) % cap], i < n */
	size_t head, n, cap;
	struct u64map node_w, pid_w;
	struct u64map pid_thread;	/* pid -> the thread it was last fed with */
	size_t node_live, pid_live;	/* entries with weight > 0 */
	uint64_t weight;
};

struct prof_top_view *prof_top_view_new(const struct prof_profile *p, uint64_t window_ns)
{
	struct prof_top_view *v = xcalloc(1, sizeof(*v));

	v->p = p;
	v->window_ns = window_ns;
	return v;
}

void prof_top_view_free(struct prof_top_view *v)
{
	if (!v)
		return;
	free(v->q);
	u64map_free(&v->node_w);
	u64map_free(&v->pid_w);
	u64map_free(&v->pid_thread);
	free(v);
}

uint64_t prof_top_weight(const struct prof_top_view *v) { return v->weight; }
uint64_t prof_top_samples(const struct prof_top_view *v) { return v->n; }

static void queue_grow(struct prof_top_view *v)
{
	size_t cap = v->cap ? v->cap * 2 : 1024;
	struct win_sample *q = xmalloc(cap * sizeof(*q));

	for (size_t i = 0; i < v->n; i++)
		q[i] = v->q[(v->head + i) % v->cap];
	free(v->q);
	v->q = q;
	v->cap = cap;
	v->head = 0;
}

/* Adds delta to key's weight, keeping *live = entries with weight > 0. */
static void map_add(struct u64map *m, size_t *live, uint64_t key, int64_t delta)
{
	bool created;
	uint64_t *w = u64map_slot(m, key, &created);

	if (created)
		*w = 0;
	if (!*w && delta > 0)
		(*live)++;
	*w = (uint64_t)((int64_t)*w + delta);
	if (!*w && delta < 0)
		(*live)--;
}

/* Rebuilds m without its zero entries once they are the majority;
 * follow (when not NULL) keeps only the keys that stay in m. */
static void map_compact(struct u64map *m, size_t live, struct u64map *follow)
{
	struct u64map fresh = { 0 }, fresh_follow = { 0 };
	size_t it = 0;
	uint64_t k, w, x;

	if (m->n <= 2 * live + 256)
		return;
	while (u64map_next(m, &it, &k, &w)) {
		if (!w)
			continue;
		u64map_put(&fresh, k, w);
		if (follow && u64map_get(follow, k, &x))
			u64map_put(&fresh_follow, k, x);
	}
	u64map_free(m);
	*m = fresh;
	if (follow) {
		u64map_free(follow);
		*follow = fresh_follow;
	}
}

static uint32_t pid_of(const struct prof_top_view *v, uint32_t thread)
{
	return thread < v->p->threads.n ? v->p->threads.v[thread].pid : 0;
}

static void account(struct prof_top_view *v, const struct win_sample *s, int sign)
{
	int64_t d = sign * (int64_t)s->weight;

	map_add(&v->node_w, &v->node_live, s->node, d);
	map_add(&v->pid_w, &v->pid_live, pid_of(v, s->thread), d);
	v->weight = (uint64_t)((int64_t)v->weight + d);
}

void prof_top_feed(struct prof_top_view *v, uint64_t time_ns, uint32_t thread, uint32_t node,
		   uint64_t weight)
{
	struct win_sample s = { time_ns, weight, thread, node };

	if (!weight || node >= v->p->nodes.n)
		return;
	if (v->n == v->cap)
		queue_grow(v);
	v->q[(v->head + v->n) % v->cap] = s;
	v->n++;
	account(v, &s, +1);
	u64map_put(&v->pid_thread, pid_of(v, thread), thread);
}

void prof_top_expire(struct prof_top_view *v, uint64_t now_ns)
{
	uint64_t oldest = now_ns > v->window_ns ? now_ns - v->window_ns : 0;

	while (v->n && v->q[v->head].time < oldest) {
		account(v, &v->q[v->head], -1);
		v->head = (v->head + 1) % v->cap;
		v->n--;
	}
	map_compact(&v->node_w, v->node_live, NULL);
	map_compact(&v->pid_w, v->pid_live, &v->pid_thread);
}

/* --- tables ------------------------------------------------------------------- */

void prof_top_table_free(struct prof_top_table *t)
{
	VEC_FREE(&t->rows);
	VEC_FREE(&t->procs);
}

static uint64_t func_key(uint32_t func, uint32_t module)
{
	return ((uint64_t)func << 32) | module;
}

/* The row of (func, module), appended on first use; index in rows. */
static size_t row_of(struct prof_top_table *t, struct u64map *index, uint32_t func, uint32_t module)
{
	bool created;
	uint64_t *slot = u64map_slot(index, func_key(func, module), &created);

	if (created) {
		struct prof_top_row r = { func, module, 0, 0 };
		*slot = t->rows.n;
		VEC_PUSH(&t->rows, r);
	}
	return (size_t)*slot;
}

static const struct prof_frame *node_frame(const struct prof_profile *p, uint32_t node)
{
	uint32_t f = p->nodes.v[node].frame;

	return f == PROF_NONE ? NULL : &p->frames.v[f];
}

static enum prof_top_sort sort_key;

static int cmp_rows(const void *a, const void *b)
{
	const struct prof_top_row *x = a, *y = b;
	uint64_t kx = sort_key == PROF_TOP_BY_SELF ? x->self : x->total;
	uint64_t ky = sort_key == PROF_TOP_BY_SELF ? y->self : y->total;
	uint64_t sx = sort_key == PROF_TOP_BY_SELF ? x->total : x->self;
	uint64_t sy = sort_key == PROF_TOP_BY_SELF ? y->total : y->self;

	if (kx != ky)
		return kx > ky ? -1 : 1;
	if (sx != sy)
		return sx > sy ? -1 : 1;
	if (x->func != y->func)	/* a stable order between refreshes */
		return x->func < y->func ? -1 : 1;
	return x->module < y->module ? -1 : x->module > y->module;
}

static void sort_rows(struct prof_top_table *t, enum prof_top_sort sort)
{
	sort_key = sort;
	if (t->rows.n)	/* qsort's base may not be NULL, even for 0 rows */
		qsort(t->rows.v, t->rows.n, sizeof(*t->rows.v), cmp_rows);
}

static int cmp_procs(const void *a, const void *b)
{
	const struct prof_top_proc *x = a, *y = b;

	if (x->weight != y->weight)
		return x->weight > y->weight ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* Per-process weights, named after the thread each was last fed with. */
static void fill_procs(const struct prof_top_view *v, struct prof_top_table *t)
{
	size_t it = 0;
	uint64_t pid, w, thread;

	t->procs.n = 0;
	while (u64map_next(&v->pid_w, &it, &pid, &w)) {
		struct prof_top_proc pr = { (uint32_t)pid, 0, w };
		if (!w)
			continue;
		if (u64map_get(&v->pid_thread, pid, &thread) && thread < v->p->threads.n)
			pr.comm = v->p->threads.v[thread].comm;
		VEC_PUSH(&t->procs, pr);
	}
	if (t->procs.n)
		qsort(t->procs.v, t->procs.n, sizeof(*t->procs.v), cmp_procs);
}

static bool name_matches(const struct prof_profile *p, const regex_t *filter, uint32_t func)
{
	return !filter || regexec(filter, prof_str(p, func), 0, NULL, 0) == 0;
}

static void begin_table(const struct prof_top_view *v, struct prof_top_table *t)
{
	t->rows.n = 0;
	t->weight = v->weight;
	t->samples = v->n;
	t->callers = false;
	fill_procs(v, t);
}

void prof_top_functions(const struct prof_top_view *v, enum prof_top_sort sort,
			const regex_t *filter, struct prof_top_table *t)
{
	const struct prof_profile *p = v->p;
	struct u64map index = { 0 };
	VEC(uint64_t) stamp = { 0 };	/* per row: the last stack that counted it */
	size_t it = 0, keep = 0;
	uint64_t node, w, walk = 0;

	begin_table(v, t);
	while (u64map_next(&v->node_w, &it, &node, &w)) {
		if (!w)
			continue;
		walk++;
		for (uint32_t n = (uint32_t)node; n != 0 && n != PROF_NONE; n = p->nodes.v[n].parent) {
			const struct prof_frame *f = node_frame(p, n);
			if (!f)
				break;
			size_t r = row_of(t, &index, f->func, f->module);
			while (stamp.n < t->rows.n)
				VEC_PUSH(&stamp, 0);
			if (n == node)
				t->rows.v[r].self += w;
			if (stamp.v[r] != walk) {	/* recursion: once per stack */
				stamp.v[r] = walk;
				t->rows.v[r].total += w;
			}
		}
	}
	for (size_t i = 0; i < t->rows.n; i++)
		if (name_matches(p, filter, t->rows.v[i].func))
			t->rows.v[keep++] = t->rows.v[i];
	t->rows.n = keep;
	sort_rows(t, sort);
	VEC_FREE(&stamp);
	u64map_free(&index);
}

void prof_top_callers(const struct prof_top_view *v, uint32_t func, uint32_t module,
		      struct prof_top_table *t)
{
	const struct prof_profile *p = v->p;
	struct u64map index = { 0 };
	size_t it = 0;
	uint64_t node, w;

	begin_table(v, t);
	t->callers = true;
	t->of = (struct prof_top_row){ func, module, 0, 0 };
	while (u64map_next(&v->node_w, &it, &node, &w)) {
		uint32_t n = (uint32_t)node;
		const struct prof_frame *f;

		if (!w)
			continue;
		while (n != 0 && n != PROF_NONE && (f = node_frame(p, n)) &&
		       func_key(f->func, f->module) != func_key(func, module))
			n = p->nodes.v[n].parent;
		if (n == 0 || n == PROF_NONE || !node_frame(p, n))
			continue;
		t->of.total += w;
		t->of.self += n == (uint32_t)node ? w : 0;
		const struct prof_frame *caller = node_frame(p, p->nodes.v[n].parent);
		size_t r = caller ? row_of(t, &index, caller->func, caller->module)
				  : row_of(t, &index, 0, PROF_NONE);	/* no caller: the stack's root */
		t->rows.v[r].self += w;
		t->rows.v[r].total += w;
	}
	sort_rows(t, PROF_TOP_BY_TOTAL);
	u64map_free(&index);
}
