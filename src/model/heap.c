/*
 * heap.c - the heap figures of a profile that holds sampled allocations
 * (prof record --heap): the live bytes at the moment the estimated heap
 * was largest, per (thread, stack), and the estimates' standard errors
 * for the report header.
 *
 * Each sampled allocation arrives as two heap samples of the same time,
 * thread and stack: PROF_M_ALLOCS with its count weight C = 1/p and
 * PROF_M_ALLOC_BYTES with its byte weight W = size/p, where p is the
 * probability that the sampler picked it.  Its free (when seen) repeats
 * both weights as PROF_M_FREES and PROF_M_FREE_BYTES on the allocating
 * stack.  These sums are Horvitz-Thompson estimates: unbiased, with the
 * variance estimated by the sum of W^2 (1 - p) over the samples behind a
 * figure (each sample independent: Poisson sampling).
 *
 * Design notes:
 *  - The peak needs time order; p->heap_log keeps the heap samples in
 *    load order (one per sampled allocation or free: few), sorted here.
 *  - A free is paired with an allocation of the same (thread, node, W)
 *    for the variance of what is live: blocks with equal byte weight have
 *    equal size and probability, so which of them is paired does not
 *    change the sum.
 */
#include "prof/model.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Standard error of one sampled weight w (bytes or count) whose count weight
 * (1/probability) is c: sqrt(w^2 (1 - 1/c)), the Horvitz-Thompson variance term. */
static double prof_heap_var_term(double w, double c)
{
	return c > 1 ? w * w * (1 - 1 / c) : 0;
}

struct ordered {
	struct prof_timed_sample e;
	size_t i;
};

static int by_time(const void *x, const void *y)
{
	const struct ordered *a = x, *b = y;

	if (a->e.t_ns != b->e.t_ns)
		return a->e.t_ns < b->e.t_ns ? -1 : 1;
	return (a->i > b->i) - (a->i < b->i);
}

/* Time order, ties in load order (an allocation's two samples share a
 * time and stay together).  A recording writes them in order already. */
static void sort_log(struct prof_profile *p)
{
	size_t n = p->heap_log.n, i;

	for (i = 1; i < n && p->heap_log.v[i].t_ns >= p->heap_log.v[i - 1].t_ns; i++)
		;
	if (i >= n)
		return;
	struct ordered *o = xmalloc(n * sizeof(*o));
	for (i = 0; i < n; i++)
		o[i] = (struct ordered){ p->heap_log.v[i], i };
	qsort(o, n, sizeof(*o), by_time);
	for (i = 0; i < n; i++)
		p->heap_log.v[i] = o[i].e;
	free(o);
}

/* Key of a block class: thread, node and byte weight. */
static uint64_t class_key(const struct prof_timed_sample *e, uint64_t w)
{
	uint64_t h = ((uint64_t)e->thread << 32 | e->node) * 0x9e3779b97f4a7c15ULL;

	return (h ^ (w * 0xc2b2ae3d27d4eb4fULL)) | 1;
}

/* The live-bytes variance of the blocks still live after log entry `upto`
 * (exclusive), and the samples that allocated them. */
static double live_var(const struct prof_profile *p, size_t upto)
{
	struct u64map open = { 0 };	/* class -> blocks allocated and not freed */
	double var = 0;

	for (size_t i = 0; i + 1 < upto; i++) {
		const struct prof_timed_sample *c = &p->heap_log.v[i], *w = c + 1;
		uint64_t n = 0, k;
		if (c->metric == PROF_M_ALLOCS && w->metric == PROF_M_ALLOC_BYTES) {
			k = class_key(c, w->value);
			u64map_get(&open, k, &n);
			u64map_put(&open, k, n + 1);
			i++;
		} else if (c->metric == PROF_M_FREES && w->metric == PROF_M_FREE_BYTES) {
			k = class_key(c, w->value);
			if (u64map_get(&open, k, &n) && n)
				u64map_put(&open, k, n - 1);
			i++;
		}
	}
	for (size_t i = 0; i + 1 < upto; i++) {
		const struct prof_timed_sample *c = &p->heap_log.v[i], *w = c + 1;
		uint64_t n = 0, k;
		if (c->metric != PROF_M_ALLOCS || w->metric != PROF_M_ALLOC_BYTES)
			continue;
		k = class_key(c, w->value);
		if (u64map_get(&open, k, &n) && n) {
			var += prof_heap_var_term((double)w->value, (double)c->value);
			u64map_put(&open, k, n - 1);
		}
		i++;
	}
	u64map_free(&open);
	return var;
}

/* Index one past the log entry after which the estimated heap was
 * largest (0: never above zero), and that size. */
static size_t find_peak(const struct prof_profile *p, double *peak, uint64_t *when)
{
	double live = 0;
	size_t at = 0;

	*peak = 0;
	*when = 0;
	for (size_t i = 0; i < p->heap_log.n; i++) {
		const struct prof_timed_sample *e = &p->heap_log.v[i];
		if (e->metric == PROF_M_ALLOC_BYTES)
			live += (double)e->value;
		else if (e->metric == PROF_M_FREE_BYTES)
			live -= (double)e->value;
		else
			continue;
		if (live > *peak) {
			*peak = live;
			*when = e->t_ns;
			at = i + 1;
		}
	}
	return at;
}

/* PROF_M_PEAK_BYTES of every (thread, node): live after entry upto. */
static void charge_peak(struct prof_profile *p, size_t upto)
{
	struct u64map live = { 0 };	/* thread << 32 | node -> bytes */
	size_t it = 0;
	uint64_t k, v;

	for (size_t i = 0; i < upto; i++) {
		const struct prof_timed_sample *e = &p->heap_log.v[i];
		if (e->metric != PROF_M_ALLOC_BYTES && e->metric != PROF_M_FREE_BYTES)
			continue;
		k = (uint64_t)e->thread << 32 | e->node;
		v = 0;
		u64map_get(&live, k, &v);
		v += e->metric == PROF_M_ALLOC_BYTES ? e->value : (uint64_t)-e->value;
		u64map_put(&live, k, v);
	}
	while (u64map_next(&live, &it, &k, &v))
		if ((int64_t)v > 0)
			prof_add(p, (uint32_t)(k >> 32), (uint32_t)k, PROF_M_PEAK_BYTES, v);
	u64map_free(&live);
}

void prof_profile_heap_derive(struct prof_profile *p)
{
	struct prof_profile_heap_summary *h = &p->heap;
	const char *rate = prof_meta_get(p, "heap_rate");
	double va = 0, vb = 0;

	memset(h, 0, sizeof(*h));
	h->rate = rate ? strtoull(rate, NULL, 10) : 0;
	const char *lost = prof_meta_get(p, "heap_lost");
	h->lost = lost ? strtoull(lost, NULL, 10) : 0;
	if (!p->heap_log.n)
		return;
	h->present = true;
	sort_log(p);
	for (size_t i = 0; i + 1 < p->heap_log.n; i++) {
		const struct prof_timed_sample *c = &p->heap_log.v[i], *w = c + 1;
		if (c->metric == PROF_M_ALLOCS && w->metric == PROF_M_ALLOC_BYTES) {
			h->samples++;
			va += prof_heap_var_term((double)c->value, (double)c->value);
			vb += prof_heap_var_term((double)w->value, (double)c->value);
		} else if (c->metric == PROF_M_FREES && w->metric == PROF_M_FREE_BYTES) {
			h->frees++;
		}
	}
	h->allocs = (double)prof_total(p, PROF_M_ALLOCS);
	h->alloc_bytes = (double)prof_total(p, PROF_M_ALLOC_BYTES);
	h->live_bytes = h->alloc_bytes - (double)prof_total(p, PROF_M_FREE_BYTES);
	h->allocs_err = sqrt(va);
	h->alloc_bytes_err = sqrt(vb);
	h->live_bytes_err = sqrt(live_var(p, p->heap_log.n));
	size_t at = find_peak(p, &h->peak_bytes, &h->peak_ns);
	h->peak_bytes_err = sqrt(live_var(p, at));
	charge_peak(p, at);
}

const struct prof_profile_heap_summary *prof_profile_heap_summary(const struct prof_profile *p)
{
	return &p->heap;
}

/* The heap columns of every aggregate and the heap samples of p->timed,
 * again from p->heap_log; then the derived figures. */
static void rebuild(struct prof_profile *p)
{
	bool was = p->heap.present;

	for (size_t i = 0; i < p->aggs.n; i++)
		for (unsigned m = PROF_M_HEAP_FIRST; m <= PROF_M_PEAK_BYTES; m++)
			p->aggs.v[i].value[m] = 0;
	for (size_t i = 0; i < p->heap_log.n; i++) {
		const struct prof_timed_sample *e = &p->heap_log.v[i];
		prof_add(p, e->thread, e->node, (enum prof_metric)e->metric, e->value);
	}
	if (p->keep_timed) {
		size_t n = 0;
		for (size_t i = 0; i < p->timed.n; i++)
			if (p->timed.v[i].metric < PROF_M_HEAP_FIRST)
				p->timed.v[n++] = p->timed.v[i];
		p->timed.n = n;
		for (size_t i = 0; i < p->heap_log.n; i++)
			VEC_PUSH(&p->timed, p->heap_log.v[i]);
		prof_timed_sort(p);
	}
	prof_profile_heap_derive(p);
	p->heap.present |= was;	/* a heap recording, with nothing in this view */
}

void prof_profile_heap_until(struct prof_profile *p, uint64_t t_ns)
{
	size_t n = 0;

	for (size_t i = 0; i < p->heap_log.n; i++)	/* in time order (prof_profile_heap_derive) */
		if (p->heap_log.v[i].t_ns <= t_ns)
			p->heap_log.v[n++] = p->heap_log.v[i];
	p->heap_log.n = n;
	p->heap_live.n = 0;	/* which blocks are live at t is not known */
	rebuild(p);
	snprintf(p->heap.scope, sizeof(p->heap.scope), "as at %.3f s",
		 t_ns > p->start_ns ? (double)(t_ns - p->start_ns) / 1e9 : 0.0);
}

bool prof_profile_heap_live_known(const struct prof_profile *p)
{
	const char *n = prof_meta_get(p, "heap_live_blocks");	/* written with the list */

	return n && strtoull(n, NULL, 10) == p->heap_live.n / 2;
}

int prof_profile_heap_leaks(struct prof_profile *p, uint64_t min_age_ns)
{
	if (!p->heap.present)
		return -ENOENT;
	if (!prof_profile_heap_live_known(p))
		return -ENODATA;
	p->heap_log.n = 0;
	for (size_t i = 0; i + 1 < p->heap_live.n; i += 2) {
		const struct prof_timed_sample *c = &p->heap_live.v[i];
		if (c->t_ns <= p->end_ns && p->end_ns - c->t_ns >= min_age_ns) {
			VEC_PUSH(&p->heap_log, c[0]);
			VEC_PUSH(&p->heap_log, c[1]);
		}
	}
	rebuild(p);
	snprintf(p->heap.scope, sizeof(p->heap.scope),
		 "blocks live at the end, allocated at least %.3f s before it", (double)min_age_ns / 1e9);
	return 0;
}
