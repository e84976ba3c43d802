/*
 * htmlapp.c - the data behind the HTML report's application (tracks on a
 * time axis, range selection, every panel recomputed for the selection):
 * the recording's samples aggregated by (time bucket, thread, stack), as
 * one JSON object the embedded script (html_app.js) reads.
 *
 * Design notes:
 *  - Time is cut into at most HTML_BUCKETS buckets (at least 1 ms each).
 *    An off-CPU interval (switch-out time + duration) is spread over the
 *    buckets it covers, so the off-CPU track shows when a thread waited,
 *    not only when it left the CPU.
 *  - The tracks ("lanes") keep those fine buckets: per thread and bucket
 *    the share of the bucket on CPU, in I/O wait, other off-CPU and sleep,
 *    one base64 digit each (emit_lanes()); a thread costs at most 4 bytes
 *    a bucket whatever the number of samples.
 *  - The rows (bucket, thread, stack) that range selection needs are
 *    bounded too: while there are more than HTML_ROW_BUDGET, adjacent
 *    buckets are merged in pairs (coarsen_rows()).  A recording where
 *    nearly every sample has a stack of its own then gets a coarser
 *    selection grid instead of a page the browser needs seconds to load;
 *    the selection snaps to those buckets and its totals stay exact.
 *  - Frames are merged by (name, module, file, line, kind, inlined): the
 *    pc that prof.data keeps per leaf instruction is for `prof annotate`
 *    and would only multiply rows here.  Stacks are a trie over the merged
 *    frames, parent < id; only those the rows name are written
 *    (prune_stacks()), as (id - parent, frame + 1) VLQ pairs.
 *  - Each row: CPU samples, CPU ns, off-CPU ns, of which I/O wait and
 *    sleep; emit_rows() says how they are packed.
 *  - Tracks are capped at HTML_TRACK_THREADS threads, the busiest; the
 *    others are folded into one "other threads" entry (fold_threads()).
 *    An hour of `record -a` under churn has 180,000 threads: a track each
 *    made a canvas past the browser's size limit, rows the bucket merging
 *    could not bring under the budget, and a 38 MB page that did not load.
 *  - When even one time bucket would hold too many rows (more distinct
 *    (thread, stack) pairs than HTML_ROW_BUDGET / 4), stacks under
 *    HTML_TRIM_SHARE of the CPU and of the off-CPU time are folded into a
 *    "(trimmed)" frame under their nearest kept ancestor (trim_stacks()), as
 *    pprof drops small nodes: totals stay exact, and the time axis keeps
 *    its buckets instead of collapsing into one.
 *  - Markers (start, exec, exit) come from the kernel's FORK, COMM-exec
 *    and EXIT records the profile keeps (emit_events()), never from when a
 *    thread's samples begin or end.
 *  - Without sample times (callgrind input, or a profile loaded without
 *    keep_timed) every aggregate becomes one row in bucket 0.
 *  - Source text is embedded only as include/prof/annotate.h's policy
 *    allows: files the build-id-verified binaries name, or below the
 *    view's --source-root directories; for the hottest functions only.
 */
#include "output-priv.h"
#include "prof/annotate.h"
#include "prof/output.h"
#include <string.h>

#define HTML_BUCKETS 1000
#define HTML_ROW_BUDGET 150000
#define HTML_SOURCE_FUNCTIONS 12
#define HTML_TRACK_THREADS 200
#define HTML_TRIM_SHARE 1e-4
#define TRIMMED_FRAME UINT32_MAX	/* in app.frames: the "(trimmed)" frame */

/* columns; the heap's: allocations, bytes allocated and bytes freed at
 * their times, bytes live at the peak (in the peak's bucket), and the
 * blocks live at the end (count and bytes) at their allocation's time */
enum { C_N, C_CPU, C_OFF, C_IO, C_SL, C_AC, C_AB, C_FB, C_PK, C_LN, C_LB, C_COLS };

struct app_row {
	uint32_t bucket, thread, stack;
	uint64_t v[C_COLS];
};

struct app {
	const struct prof_profile *p;
	const struct prof_view *v;
	struct strtab strs;
	struct u64map frame_ix, stack_ix, row_ix;
	VEC(uint32_t) frames;		/* merged frame -> a profile frame id */
	VEC(uint32_t) stack_parent, stack_frame;
	uint32_t *node_stack;		/* profile node -> merged stack */
	VEC(struct app_row) rows;
	VEC(struct app_row) lanes;	/* per (thread, fine bucket): see build_lanes() */
	VEC(uint32_t) shown;		/* emitted thread -> profile thread (when folded) */
	size_t folded, folded_pids;	/* threads in "other threads", their processes */
	double trimmed;			/* share of the samples in "(trimmed)" */
	uint64_t t0, bucket_ns;		/* fine buckets */
	uint32_t nbuckets, per;		/* fine buckets; fine buckets per row bucket */
	bool cpu_ns_seen;
};

static uint64_t frame_key(const struct prof_frame *f)
{
	return hash64(((uint64_t)f->func << 32) ^ f->file) ^
	       hash64(((uint64_t)f->line << 32 | f->module) * 7 + f->kind * 3 + f->inlined);
}

static bool same_merged(const struct prof_frame *a, const struct prof_frame *b)
{
	return a->func == b->func && a->file == b->file && a->line == b->line &&
	       a->module == b->module && a->kind == b->kind && a->inlined == b->inlined;
}

static uint32_t merged_frame(struct app *a, uint32_t frame)
{
	const struct prof_frame *f = &a->p->frames.v[frame];
	uint64_t key = frame_key(f), idx;

	for (uint64_t k = 0;; k++) {
		if (!u64map_get(&a->frame_ix, key + k, &idx)) {
			u64map_put(&a->frame_ix, key + k, a->frames.n);
			VEC_PUSH(&a->frames, frame);
			return (uint32_t)(a->frames.n - 1);
		}
		if (same_merged(&a->p->frames.v[a->frames.v[idx]], f))
			return (uint32_t)idx;
	}
}

/* The profile's trie over merged frames; parents come before children. */
static void build_stacks(struct app *a)
{
	const struct prof_profile *p = a->p;

	a->node_stack = xcalloc(p->nodes.n + 1, sizeof(*a->node_stack));
	VEC_PUSH(&a->stack_parent, 0);
	VEC_PUSH(&a->stack_frame, 0);
	for (uint32_t n = 1; n < p->nodes.n; n++) {
		const struct prof_node *node = &p->nodes.v[n];
		uint32_t parent = node->parent < n ? a->node_stack[node->parent] : 0;
		if (node->frame >= p->frames.n) {
			a->node_stack[n] = parent;
			continue;
		}
		uint32_t f = merged_frame(a, node->frame);
		bool created;
		uint64_t *slot = u64map_slot(&a->stack_ix, (uint64_t)parent << 32 | f, &created);
		if (created) {
			*slot = a->stack_parent.n;
			VEC_PUSH(&a->stack_parent, parent);
			VEC_PUSH(&a->stack_frame, f + 1);	/* 0 is the root's "no frame" */
		}
		a->node_stack[n] = (uint32_t)*slot;
	}
}

static struct app_row *row_for(struct app *a, uint32_t bucket, uint32_t thread, uint32_t stack)
{
	uint64_t key = hash64(((uint64_t)bucket << 40) ^ ((uint64_t)thread << 20) ^
			      hash64(stack)), idx;

	for (uint64_t k = 0;; k++) {
		if (!u64map_get(&a->row_ix, key + k, &idx)) {
			u64map_put(&a->row_ix, key + k, a->rows.n);
			VEC_PUSH(&a->rows, ((struct app_row){ bucket, thread, stack, { 0 } }));
			return &a->rows.v[a->rows.n - 1];
		}
		struct app_row *r = &a->rows.v[idx];
		if (r->bucket == bucket && r->thread == thread && r->stack == stack)
			return r;
	}
}

static uint32_t bucket_of(const struct app *a, uint64_t t)
{
	uint64_t b = t > a->t0 ? (t - a->t0) / a->bucket_ns : 0;

	return b >= a->nbuckets ? a->nbuckets - 1 : (uint32_t)b;
}

/* Adds len ns to column col, spread over the buckets [t, t + len) covers. */
static void add_spread(struct app *a, uint32_t thread, uint32_t stack, int col,
		       uint64_t t, uint64_t len)
{
	uint64_t end = t + len;

	for (uint64_t at = t; at < end;) {
		uint32_t b = bucket_of(a, at);
		uint64_t b_end = b + 1 == a->nbuckets ? end : a->t0 + (uint64_t)(b + 1) * a->bucket_ns;
		uint64_t stop = end < b_end ? end : b_end;
		row_for(a, b, thread, stack)->v[col] += stop - at;
		at = stop;
	}
}

static void add_timed(struct app *a, const struct prof_timed_sample *e)
{
	uint32_t st = a->node_stack[e->node];

	switch (e->metric) {
	case PROF_M_SAMPLES:
		row_for(a, bucket_of(a, e->t_ns), e->thread, st)->v[C_N] += e->value;
		if (!a->cpu_ns_seen)
			row_for(a, bucket_of(a, e->t_ns), e->thread, st)->v[C_CPU] +=
				e->value * a->p->period_ns;
		break;
	case PROF_M_CPU_NS: row_for(a, bucket_of(a, e->t_ns), e->thread, st)->v[C_CPU] += e->value; break;
	case PROF_M_OFFCPU_NS: add_spread(a, e->thread, st, C_OFF, e->t_ns, e->value); break;
	case PROF_M_IOWAIT_NS: add_spread(a, e->thread, st, C_IO, e->t_ns, e->value); break;
	case PROF_M_SLEEP_NS: add_spread(a, e->thread, st, C_SL, e->t_ns, e->value); break;
	case PROF_M_ALLOCS: row_for(a, bucket_of(a, e->t_ns), e->thread, st)->v[C_AC] += e->value; break;
	case PROF_M_ALLOC_BYTES: row_for(a, bucket_of(a, e->t_ns), e->thread, st)->v[C_AB] += e->value; break;
	case PROF_M_FREE_BYTES: row_for(a, bucket_of(a, e->t_ns), e->thread, st)->v[C_FB] += e->value; break;
	default: break;
	}
}

/* PROF_M_PEAK_BYTES is derived on load, not timed: in the peak's bucket. */
static void add_peak(struct app *a)
{
	const struct prof_profile *p = a->p;

	for (size_t i = 0; p->heap.present && i < p->aggs.n; i++) {
		const struct prof_agg *g = &p->aggs.v[i];
		if (!g->value[PROF_M_PEAK_BYTES] || g->thread >= p->threads.n || g->node >= p->nodes.n ||
		    !render_view_passes(p, a->v, g->thread, g->node))
			continue;
		row_for(a, p->timed.n ? bucket_of(a, p->heap.peak_ns) : 0, g->thread,
			a->node_stack[g->node])->v[C_PK] += g->value[PROF_M_PEAK_BYTES];
	}
}

/*
 * The sampled blocks still live when the recording ended, in their
 * allocation's bucket: the leak view (html_app.js) sums the buckets
 * older than the age the user sets, as `report --min-age` sums the
 * blocks.  Only when the recording says it holds the whole list.
 */
static void add_live(struct app *a)
{
	const struct prof_profile *p = a->p;

	for (size_t i = 0; prof_profile_heap_live_known(p) && i + 1 < p->heap_live.n; i += 2) {
		const struct prof_timed_sample *c = &p->heap_live.v[i];
		if (c->thread >= p->threads.n || c->node >= p->nodes.n || !render_view_passes(p, a->v, c->thread, c->node))
			continue;
		struct app_row *r = row_for(a, bucket_of(a, c->t_ns), c->thread, a->node_stack[c->node]);
		r->v[C_LN] += c[0].value;
		r->v[C_LB] += c[1].value;
	}
}

static void build_rows(struct app *a)
{
	const struct prof_profile *p = a->p;
	uint64_t t_end = 0;

	a->t0 = p->timed.n ? p->timed.v[0].t_ns : 0;
	for (size_t i = 0; i < p->timed.n; i++) {
		const struct prof_timed_sample *e = &p->timed.v[i];
		uint64_t end = e->t_ns + (prof_metric_is_duration(e->metric) ? e->value : 0);
		t_end = end > t_end ? end : t_end;
		a->cpu_ns_seen |= e->metric == PROF_M_CPU_NS;
	}
	uint64_t span = t_end > a->t0 ? t_end - a->t0 + 1 : 1;
	a->bucket_ns = span / HTML_BUCKETS + 1 > 1000000 ? span / HTML_BUCKETS + 1 : 1000000;
	a->nbuckets = (uint32_t)((span + a->bucket_ns - 1) / a->bucket_ns);
	a->nbuckets = a->nbuckets ? a->nbuckets : 1;
	for (size_t i = 0; i < p->timed.n; i++) {
		const struct prof_timed_sample *e = &p->timed.v[i];
		if (e->thread < p->threads.n && e->node < p->nodes.n && render_view_passes(p, a->v, e->thread, e->node))
			add_timed(a, e);
	}
	add_peak(a);
	if (p->timed.n) {
		add_live(a);
		return;
	}
	for (size_t i = 0; i < p->aggs.n; i++) {	/* no times: one bucket */
		const struct prof_agg *g = &p->aggs.v[i];
		if (g->thread >= p->threads.n || g->node >= p->nodes.n || !render_view_passes(p, a->v, g->thread, g->node))
			continue;
		struct app_row *r = row_for(a, 0, g->thread, a->node_stack[g->node]);
		r->v[C_N] += g->value[PROF_M_SAMPLES];
		r->v[C_CPU] += g->value[PROF_M_CPU_NS];
		r->v[C_OFF] += g->value[PROF_M_OFFCPU_NS];
		r->v[C_IO] += g->value[PROF_M_IOWAIT_NS];
		r->v[C_SL] += g->value[PROF_M_SLEEP_NS];
		r->v[C_AC] += g->value[PROF_M_ALLOCS];
		r->v[C_AB] += g->value[PROF_M_ALLOC_BYTES];
		r->v[C_FB] += g->value[PROF_M_FREE_BYTES];
	}
}

/* Processes among the threads order[from..n) (the ones "other threads" holds). */
static size_t count_pids(const struct app *a, const size_t *order, size_t from, size_t n)
{
	struct u64map pids = { 0 };
	size_t count = 0;

	for (size_t i = from; i < n; i++) {
		bool created;
		u64map_slot(&pids, a->p->threads.v[order[i]].pid, &created);
		count += created;
	}
	u64map_free(&pids);
	return count;
}

/*
 * Over HTML_TRACK_THREADS threads with samples: the busiest (on-CPU time,
 * then off-CPU time, as the tracks are ordered) keep a track and are
 * renumbered 0..N-1 in profile order, every other thread's rows move to
 * thread N, "other threads".  Rows of one key are merged later
 * (coarsen_rows()).  CPU comes first: CPU plus off-CPU time is a thread's
 * life in the window, as long for a sleeper as for the busiest.
 */
static void fold_threads(struct app *a)
{
	size_t nt = a->p->threads.n, active = 0, *order;
	uint64_t *ns = xcalloc(nt + 1, sizeof(*ns)), *cpu = xcalloc(nt + 1, sizeof(*cpu));
	uint32_t *map;

	for (size_t i = 0; i < a->rows.n; i++) {	/* + 1: a row with no time still counts */
		ns[a->rows.v[i].thread] += a->rows.v[i].v[C_OFF] + 1;
		cpu[a->rows.v[i].thread] += a->rows.v[i].v[C_CPU];
	}
	for (size_t t = 0; t < nt; t++) {
		active += ns[t] > 0;
		if (cpu[t])	/* any CPU time ranks above any off-CPU time */
			ns[t] = 1ULL << 63 | MIN(cpu[t], (1ULL << 63) - 1);
	}
	free(cpu);
	if (active <= HTML_TRACK_THREADS) {
		free(ns);
		return;
	}
	order = render_order_heaviest_first(ns, nt);
	a->folded = active - HTML_TRACK_THREADS;
	a->folded_pids = count_pids(a, order, HTML_TRACK_THREADS, active);
	map = xcalloc(nt + 1, sizeof(*map));
	for (size_t i = 0; i < HTML_TRACK_THREADS; i++)
		map[order[i]] = 1;
	for (size_t t = 0; t < nt; t++)
		if (map[t]) {
			map[t] = (uint32_t)a->shown.n;
			VEC_PUSH(&a->shown, (uint32_t)t);
		} else {
			map[t] = HTML_TRACK_THREADS;
		}
	for (size_t i = 0; i < a->rows.n; i++)
		a->rows.v[i].thread = map[a->rows.v[i].thread];
	free(map);
	free(order);
	free(ns);
}

static int row_cmp(const void *x, const void *y)
{
	const struct app_row *r = x, *q = y;

	if (r->bucket != q->bucket)
		return r->bucket < q->bucket ? -1 : 1;
	if (r->thread != q->thread)
		return r->thread < q->thread ? -1 : 1;
	return (r->stack > q->stack) - (r->stack < q->stack);
}

/* Sorts the rows by (bucket, thread, stack), merging rows of one key. */
static void sort_and_merge_rows(struct app *a)
{
	size_t out = 0;

	if (!a->rows.n)		/* qsort(NULL, 0) is undefined */
		return;
	qsort(a->rows.v, a->rows.n, sizeof(*a->rows.v), row_cmp);
	for (size_t i = 0; i < a->rows.n; i++) {
		const struct app_row *r = &a->rows.v[i];
		struct app_row *last = out ? &a->rows.v[out - 1] : NULL;
		if (last && !row_cmp(last, r)) {
			for (int c = 0; c < C_COLS; c++)
				last->v[c] += r->v[c];
			continue;
		}
		a->rows.v[out++] = *r;
	}
	a->rows.n = out;
}

/*
 * Per (thread, fine bucket) sums of the fine rows, for the tracks; the
 * lane's "bucket" field holds the thread and "thread" the bucket, so that
 * row_cmp() sorts them by thread, then time.
 */
static void build_lanes(struct app *a)
{
	struct u64map ix = { 0 };

	for (size_t i = 0; i < a->rows.n; i++) {
		const struct app_row *r = &a->rows.v[i];
		bool created;
		uint64_t *slot = u64map_slot(&ix, (uint64_t)r->thread << 32 | r->bucket, &created);
		if (created) {
			*slot = a->lanes.n;
			VEC_PUSH(&a->lanes, ((struct app_row){ r->thread, r->bucket, 0, { 0 } }));
		}
		for (int c = 0; c < C_COLS; c++)
			a->lanes.v[*slot].v[c] += r->v[c];
	}
	u64map_free(&ix);
	if (a->lanes.n)
		qsort(a->lanes.v, a->lanes.n, sizeof(*a->lanes.v), row_cmp);
}

/* Distinct (thread, stack) pairs: the rows a single time bucket would hold. */
static size_t thread_stack_pairs(const struct app *a)
{
	struct u64map pairs = { 0 };
	size_t n = 0;

	for (size_t i = 0; i < a->rows.n; i++) {
		bool created;
		u64map_slot(&pairs, (uint64_t)a->rows.v[i].thread << 32 | a->rows.v[i].stack, &created);
		n += created;
	}
	u64map_free(&pairs);
	return n;
}

/* The stack for "(trimmed)" under stack `under`, made on first use. */
static uint32_t trimmed_stack(struct app *a, struct u64map *made, uint32_t under)
{
	bool created;
	uint64_t *slot = u64map_slot(made, under, &created);

	if (created) {
		if (!a->frames.n || a->frames.v[a->frames.n - 1] != TRIMMED_FRAME)
			VEC_PUSH(&a->frames, TRIMMED_FRAME);
		*slot = a->stack_parent.n;
		VEC_PUSH(&a->stack_parent, under);
		VEC_PUSH(&a->stack_frame, (uint32_t)a->frames.n);	/* frame + 1 */
	}
	return (uint32_t)*slot;
}

/* At least HTML_TRIM_SHARE of a total that is not 0. */
static bool big_enough(uint64_t part, uint64_t total)
{
	return total && (double)part >= HTML_TRIM_SHARE * (double)total;
}

/* See the design notes: rare stacks into "(trimmed)" when the rows cannot fit. */
static void trim_stacks(struct app *a)
{
	size_t ns = a->stack_parent.n;
	uint64_t *cpu, *off, tot_cpu = 0, tot_off = 0;
	struct u64map made = { 0 };

	if (thread_stack_pairs(a) <= HTML_ROW_BUDGET / 4)
		return;
	cpu = xcalloc(ns + 1, sizeof(*cpu));
	off = xcalloc(ns + 1, sizeof(*off));
	for (size_t i = 0; i < a->rows.n; i++) {
		cpu[a->rows.v[i].stack] += a->rows.v[i].v[C_CPU];
		off[a->rows.v[i].stack] += a->rows.v[i].v[C_OFF];
	}
	for (size_t s = ns; s-- > 1;) {		/* children after parents: inclusive sums */
		cpu[a->stack_parent.v[s]] += cpu[s];
		off[a->stack_parent.v[s]] += off[s];
	}
	tot_cpu = cpu[0], tot_off = off[0];
	uint64_t samples = 0, trimmed = 0;
	for (size_t i = 0; i < a->rows.n; i++) {
		uint32_t s = a->rows.v[i].stack, k = s;
		while (k && !big_enough(cpu[k], tot_cpu) && !big_enough(off[k], tot_off))
			k = a->stack_parent.v[k];
		samples += a->rows.v[i].v[C_N];
		if (k == s)
			continue;
		a->rows.v[i].stack = trimmed_stack(a, &made, k);
		trimmed += a->rows.v[i].v[C_N];
	}
	a->trimmed = samples ? (double)trimmed / (double)samples : 0;
	u64map_free(&made);
	free(cpu);
	free(off);
}

/* Merges adjacent buckets in pairs until the rows fit HTML_ROW_BUDGET. */
static void coarsen_rows(struct app *a)
{
	a->per = 1;
	sort_and_merge_rows(a);
	while (a->rows.n > HTML_ROW_BUDGET && a->per < a->nbuckets) {
		a->per *= 2;
		for (size_t i = 0; i < a->rows.n; i++)
			a->rows.v[i].bucket >>= 1;
		sort_and_merge_rows(a);
	}
}

/*
 * Keeps only the stacks the rows name, their ancestors, and the frames
 * those stacks use, renumbered in their old order: a parent still comes
 * before its children and the rows' order by stack is unchanged.  The
 * profile's trie holds every stack of every thread, and a view's filters
 * leave fewer: an hour of `record -a` wrote 38.7 MB of stacks without it.
 */
static void prune_stacks(struct app *a)
{
	size_t ns = a->stack_parent.n, nf = a->frames.n, ks = 0, kf = 0;
	uint32_t *snew = xcalloc(ns + 1, sizeof(*snew)), *fnew = xcalloc(nf + 1, sizeof(*fnew));

	/* mark: 1 + the new id, 0 for "not kept" */
	snew[0] = 1;
	for (size_t i = 0; i < a->rows.n; i++)
		for (uint32_t s = a->rows.v[i].stack; s && !snew[s]; s = a->stack_parent.v[s])
			snew[s] = 1;
	for (size_t s = 0; s < ns; s++) {
		if (!snew[s])
			continue;
		snew[s] = (uint32_t)++ks;
		if (a->stack_frame.v[s])
			fnew[a->stack_frame.v[s] - 1] = 1;
	}
	for (size_t f = 0; f < nf; f++)
		if (fnew[f]) {
			fnew[f] = (uint32_t)++kf;
			a->frames.v[kf - 1] = a->frames.v[f];
		}
	for (size_t s = 0; s < ns; s++) {
		if (!snew[s])
			continue;
		uint32_t to = snew[s] - 1, fr = a->stack_frame.v[s];
		a->stack_parent.v[to] = snew[a->stack_parent.v[s]] - 1;
		a->stack_frame.v[to] = fr ? fnew[fr - 1] : 0;
	}
	for (size_t i = 0; i < a->rows.n; i++)
		a->rows.v[i].stack = snew[a->rows.v[i].stack] - 1;
	a->stack_parent.n = a->stack_frame.n = ks;
	a->frames.n = kf;
	free(snew);
	free(fnew);
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/*
 * One unsigned number as base64 VLQ digits, as source maps write them but
 * unsigned: 5 bits a digit, lowest first, 32 added while more follow.
 * Numbers below 32 take one character and below 32,768 three, against
 * two to six for a JSON number and its comma; the browser reads a string
 * of them faster than a JSON array of the same numbers.
 */
static void sb_add_vlq(struct strbuf *sb, uint64_t v)
{
	do {
		unsigned digit = v & 31;

		v >>= 5;
		sb_addch(sb, b64[digit | (v ? 32 : 0)]);
	} while (v);
}

/* A share of one fine bucket as one base64 digit, 0..63; a non-zero share
 * never rounds to 0, so a short wait still marks its bucket. */
static char lane_digit(const struct app *a, uint64_t ns)
{
	uint64_t q = (ns * 63 + a->bucket_ns / 2) / a->bucket_ns;

	return b64[ns ? (q < 1 ? 1 : q > 63 ? 63 : q) : 0];
}

/*
 * Each track's exact on-CPU and off-CPU ns, by thread entry (n of them):
 * the viewer orders processes by these.  Its digits cannot serve: a
 * bucket with any time shows at least one digit, so summed over many
 * threads that barely ran they outweigh one thread that ran all along.
 */
static void lane_totals(const struct app *a, size_t n, uint64_t *cpu, uint64_t *off)
{
	for (size_t i = 0; i < a->lanes.n; i++) {
		const struct app_row *l = &a->lanes.v[i];
		if (l->bucket < n) {	/* a lane's "bucket" is its thread */
			cpu[l->bucket] += l->v[C_CPU];
			off[l->bucket] += l->v[C_OFF];
		}
	}
}

/*
 * "lanes": [thread, first fine bucket, digits] per thread with samples;
 * digits holds 4 per fine bucket from the first to the last the thread
 * was seen in: on CPU, I/O wait, other off-CPU (preempted, D), sleep.
 */
static void emit_lanes(struct app *a, struct strbuf *sb)
{
	sb_adds(sb, ",\n\"lanes\":[");
	for (size_t i = 0; i < a->lanes.n;) {
		uint32_t th = a->lanes.v[i].bucket, next = a->lanes.v[i].thread;
		sb_addf(sb, "%s[%u,%u,\"", i ? "," : "", th, next);
		for (; i < a->lanes.n && a->lanes.v[i].bucket == th; i++) {
			const struct app_row *l = &a->lanes.v[i];
			uint64_t waits = l->v[C_IO] + l->v[C_SL];
			for (; next < l->thread; next++)
				sb_adds(sb, "AAAA");
			sb_addch(sb, lane_digit(a, l->v[C_CPU]));
			sb_addch(sb, lane_digit(a, l->v[C_IO]));
			sb_addch(sb, lane_digit(a, l->v[C_OFF] > waits ? l->v[C_OFF] - waits : 0));
			sb_addch(sb, lane_digit(a, l->v[C_SL]));
			next = l->thread + 1;
		}
		sb_adds(sb, "\"]");
	}
	sb_adds(sb, "]");
}

static void emit_strings_of_frames(struct app *a, struct strbuf *sb)
{
	const struct prof_profile *p = a->p;

	sb_adds(sb, ",\n\"frames\":[");
	for (size_t i = 0; i < a->frames.n; i++) {
		if (a->frames.v[i] == TRIMMED_FRAME) {
			sb_addf(sb, "%s[%u,0,0,0,0,0]", i ? "," : "", strtab_intern(&a->strs, "(trimmed)"));
			continue;
		}
		const struct prof_frame *f = &p->frames.v[a->frames.v[i]];
		const char *mod = f->module < p->modules.n ? prof_str(p, p->modules.v[f->module].path) : "";
		bool py = f->module < p->modules.n && (p->modules.v[f->module].flags & PROF_MOD_PYTHON);
		/* the flags as the flame nodes' (html.c): 1 inlined, 2 Python */
		sb_addf(sb, "%s[%u,%u,%u,%u,%u,%u]", i ? "," : "",
			strtab_intern(&a->strs, prof_str(p, f->func)), strtab_intern(&a->strs, mod),
			strtab_intern(&a->strs, prof_str(p, f->file)), f->line, f->kind,
			(f->inlined ? 1u : 0u) | (py ? 2u : 0u));
	}
	/* per stack: its distance to its parent (small: a child follows its
	 * parent closely) and its frame + 1, as base64 VLQ numbers */
	sb_adds(sb, "],\n\"stacks\":\"");
	for (size_t i = 0; i < a->stack_parent.n; i++) {
		sb_add_vlq(sb, i - a->stack_parent.v[i]);
		sb_add_vlq(sb, a->stack_frame.v[i]);
	}
	sb_adds(sb, "\",\n\"threads\":[");
	size_t n = a->folded ? a->shown.n : p->threads.n;
	uint64_t *cpu = xcalloc(2 * (n + 1), sizeof(*cpu)), *off = cpu + n + 1;
	lane_totals(a, n + 1, cpu, off);
	for (size_t i = 0; i < n; i++) {
		const struct prof_thread *t = &p->threads.v[a->folded ? a->shown.v[i] : i];
		sb_addf(sb, "%s[%u,%u,%u,%llu,%llu]", i ? "," : "", t->pid, t->tid,
			strtab_intern(&a->strs, prof_str(p, t->comm)), (unsigned long long)cpu[i],
			(unsigned long long)off[i]);
	}
	if (a->folded) {	/* pid and tid -1: no process of its own */
		char label[96];
		snprintf(label, sizeof(label), "%zu other threads (%zu processes)", a->folded,
			 a->folded_pids);
		sb_addf(sb, ",[-1,-1,%u,%llu,%llu]", strtab_intern(&a->strs, label),
			(unsigned long long)cpu[n], (unsigned long long)off[n]);
	}
	sb_adds(sb, "]");
	free(cpu);
}

/*
 * Row i's value of column col in the file's unit, and whether it is the
 * one the reader assumes when the file leaves it out.  C_OFF is written
 * as the off-CPU time that is neither I/O wait nor sleep: an interval is
 * one of the three, so each of the three columns stays sparse.
 */
static uint64_t column_value(const struct app *a, size_t i, int col, uint64_t scale, bool *expected)
{
	const struct app_row *r = &a->rows.v[i];
	uint64_t expect = col == C_N ? 1 : col == C_CPU ? r->v[C_N] * a->p->period_ns : 0;
	uint64_t waits = r->v[C_IO] + r->v[C_SL], x = r->v[col];

	if (col == C_OFF)
		x = x > waits ? x - waits : 0;
	uint64_t v = (x + scale / 2) / scale;
	*expected = x == expect || (col > C_CPU && !v);
	if (col >= C_AC)	/* the heap's: 0 expected */
		*expected = !v;
	return v;
}

/*
 * A column: (row delta, value) pairs for the rows whose value is not the
 * expected one, or {"dense": every row's value} when that is shorter
 * (most rows unexpected: merged buckets hold counts above 1).  Numbers
 * as one string of base64 VLQ digits (sb_add_vlq()).
 */
static void emit_column(struct app *a, struct strbuf *sb, const char *name, int col, uint64_t scale)
{
	size_t last = 0, listed = 0;
	bool expected, dense;

	for (size_t i = 0; i < a->rows.n; i++) {
		column_value(a, i, col, scale, &expected);
		listed += !expected;
	}
	dense = listed * 2 > a->rows.n;
	sb_addf(sb, dense ? ",\"%s\":{\"dense\":\"" : ",\"%s\":\"", name);
	for (size_t i = 0; i < a->rows.n; i++) {
		uint64_t v = column_value(a, i, col, scale, &expected);
		if (dense) {
			sb_add_vlq(sb, v);
		} else if (!expected) {
			sb_add_vlq(sb, i - last);
			sb_add_vlq(sb, v);
			last = i;
		}
	}
	sb_adds(sb, dense ? "\"}" : "\"");
}

/*
 * Rows sorted by (bucket, thread, stack), written compactly as there can
 * be HTML_ROW_BUDGET of them: runs of (bucket, thread, length), each
 * row's stack as a delta from the previous one in its run, sample counts
 * only where not 1, CPU ns only where not count x period, I/O wait, sleep
 * and other off-CPU time in microseconds and only where non-zero
 * (emit_column()).  Every list is a string of base64 VLQ numbers.
 */
static void emit_rows(struct app *a, struct strbuf *sb)
{
	sb_addf(sb, ",\n\"rows\":{\"count\":%zu,\"period\":%llu,\"runs\":\"", a->rows.n,
		(unsigned long long)a->p->period_ns);
	for (size_t i = 0, start = 0; i < a->rows.n; i++) {
		const struct app_row *r = &a->rows.v[i], *next = i + 1 < a->rows.n ? r + 1 : NULL;
		if (next && next->bucket == r->bucket && next->thread == r->thread)
			continue;
		sb_add_vlq(sb, r->bucket);
		sb_add_vlq(sb, r->thread);
		sb_add_vlq(sb, i + 1 - start);
		start = i + 1;
	}
	sb_adds(sb, "\",\"st\":\"");
	for (size_t i = 0; i < a->rows.n; i++) {
		const struct app_row *r = &a->rows.v[i], *prev = i ? r - 1 : NULL;
		bool same_run = prev && prev->bucket == r->bucket && prev->thread == r->thread;
		sb_add_vlq(sb, same_run ? r->stack - prev->stack : r->stack);
	}
	sb_addch(sb, '"');
	emit_column(a, sb, "n", C_N, 1);
	emit_column(a, sb, "cpu", C_CPU, 1);
	emit_column(a, sb, "other_us", C_OFF, 1000);
	emit_column(a, sb, "io_us", C_IO, 1000);
	emit_column(a, sb, "sl_us", C_SL, 1000);
	if (a->p->heap.present) {
		emit_column(a, sb, "allocs", C_AC, 1);
		emit_column(a, sb, "alloc_b", C_AB, 1);
		emit_column(a, sb, "free_b", C_FB, 1);
		emit_column(a, sb, "peak_b", C_PK, 1);
	}
	if (a->p->heap.present && a->p->timed.n && prof_profile_heap_live_known(a->p)) {
		emit_column(a, sb, "live_n", C_LN, 1);
		emit_column(a, sb, "live_b", C_LB, 1);
	}
	sb_addch(sb, '}');
}

/*
 * "events": [track, fine bucket, kind] for the forks, execs and exits the
 * kernel recorded of threads that have a track (the replay engine tied
 * each to the thread identity it starts or ends); the tracks draw these
 * markers and no others (a thread's samples starting late is no start).
 */
static void emit_events(struct app *a, struct strbuf *sb)
{
	const struct prof_profile *p = a->p;
	size_t n = a->folded ? a->shown.n : p->threads.n;
	uint32_t *track_of = xmalloc((p->threads.n + 1) * sizeof(*track_of));
	bool comma = false;

	for (size_t i = 0; i < p->threads.n; i++)
		track_of[i] = a->folded ? UINT32_MAX : (uint32_t)i;
	for (size_t i = 0; a->folded && i < n; i++)
		track_of[a->shown.v[i]] = (uint32_t)i;
	sb_adds(sb, ",\n\"events\":[");
	for (size_t i = 0; i < p->task_events.n && p->timed.n; i++) {
		const struct prof_task_event *e = &p->task_events.v[i];
		double b = e->t_ns > a->t0 ? (double)(e->t_ns - a->t0) / (double)a->bucket_ns : 0;
		if (e->thread >= p->threads.n || track_of[e->thread] == UINT32_MAX)
			continue;
		sb_addf(sb, "%s[%u,%.2f,%u]", comma ? "," : "", track_of[e->thread],
			b < a->nbuckets ? b : a->nbuckets, e->kind);
		comma = true;
	}
	sb_adds(sb, "]");
	free(track_of);
}

/* RSS, CPU and I/O wait points of the processes that have a track. */
static void emit_timeline(struct app *a, struct strbuf *sb)
{
	const struct prof_profile *p = a->p;
	struct u64map shown_pids = { 0 };
	bool first = true;

	for (size_t i = 0; i < a->shown.n; i++)
		u64map_put(&shown_pids, p->threads.v[a->shown.v[i]].pid, 1);
	sb_adds(sb, ",\n\"timeline\":[");
	for (size_t i = 0; i < p->timeline.n; i++) {
		const struct prof_timeline_sample *s = &p->timeline.v[i];
		uint64_t unused;
		if (a->folded && !u64map_get(&shown_pids, s->pid, &unused))
			continue;
		double b = s->t_ns > a->t0 ? (double)(s->t_ns - a->t0) / (double)(a->bucket_ns * a->per) : 0;
		sb_addf(sb, "%s[%u,%.2f,%llu,%u,%u]", first ? "" : ",", s->pid, b,
			(unsigned long long)s->rss_bytes, s->cpu_pct_x100, s->io_wait_pct_x100);
		first = false;
	}
	sb_adds(sb, "]");
	u64map_free(&shown_pids);
}

/*
 * record --heap: each process's estimated live heap over time, the value
 * at the end of each fine bucket with a change ([pid, bucket, bytes]),
 * drawn beside its RSS.  p->heap_log is in time order (prof_profile_heap_derive).
 */
struct heap_point {
	uint32_t pid;
	uint64_t fine, bytes;
};

static void heap_point_out(const struct app *a, struct strbuf *sb, const struct heap_point *h, bool *first)
{
	sb_addf(sb, "%s[%u,%.2f,%llu]", *first ? "" : ",", h->pid,
		(double)h->fine / (double)a->per, (unsigned long long)h->bytes);
	*first = false;
}

static void emit_heap(struct app *a, struct strbuf *sb)
{
	const struct prof_profile *p = a->p;
	struct u64map ix = { 0 };	/* pid -> pending index + 1 */
	VEC(struct heap_point) pend = { 0 };
	bool first = true;
	uint64_t k;

	if (!p->heap.present)
		return;
	sb_adds(sb, ",\n\"heap\":[");
	for (size_t i = 0; i < p->heap_log.n; i++) {
		const struct prof_timed_sample *e = &p->heap_log.v[i];
		if ((e->metric != PROF_M_ALLOC_BYTES && e->metric != PROF_M_FREE_BYTES) ||
		    e->thread >= p->threads.n)
			continue;
		uint32_t pid = p->threads.v[e->thread].pid;
		uint64_t fine = e->t_ns > a->t0 ? (e->t_ns - a->t0) / a->bucket_ns : 0;
		if (!u64map_get(&ix, pid, &k)) {
			VEC_PUSH(&pend, ((struct heap_point){ pid, fine, 0 }));
			k = pend.n;
			u64map_put(&ix, pid, k);
		}
		struct heap_point *h = &pend.v[k - 1];
		if (fine != h->fine) {	/* the previous bucket's last value */
			heap_point_out(a, sb, h, &first);
			h->fine = fine;
		}
		h->bytes = e->metric == PROF_M_ALLOC_BYTES ? h->bytes + e->value
							     : h->bytes - MIN(h->bytes, e->value);
	}
	for (size_t i = 0; i < pend.n; i++)
		heap_point_out(a, sb, &pend.v[i], &first);
	sb_adds(sb, "]");
	u64map_free(&ix);
	VEC_FREE(&pend);
}

/* Source files of the hottest functions, as far as the policy allows. */
static void emit_sources(struct app *a, struct strbuf *sb)
{
	const struct prof_profile *p = a->p;
	struct prof_source_policy sp = { .roots = a->v->source_roots, .nroots = a->v->n_source_roots };
	struct prof_fn_table t = { 0 };
	struct strtab files;
	bool first = true;

	strtab_init(&files);
	prof_output_fn_table_build(p, a->v, &t);
	for (size_t i = 0; i < t.rows.n && i < HTML_SOURCE_FUNCTIONS; i++) {
		struct prof_annotation an;
		struct prof_disassembly d = { 0 };
		if (prof_annotate_build(p, a->v, prof_str(p, t.rows.v[i].func), &an) == 0 &&
		    prof_annotate_disassemble(p, &an, &d) == 0)
			prof_source_allow_disassembly(&sp, &d);
		prof_disassembly_free(&d);
		for (size_t k = 0; k < an.lines.n; k++)
			strtab_intern(&files, prof_str(p, an.lines.v[k].file));
		prof_annotation_free(&an);
	}
	sb_adds(sb, ",\n\"sources\":{");
	for (size_t i = 1; i < files.strs.n; i++) {
		size_t len;
		char *text = prof_source_read(&sp, files.strs.v[i], &len);
		if (!text)
			continue;
		sb_adds(sb, first ? "" : ",\n");
		render_json_str(sb, files.strs.v[i]);
		sb_addch(sb, ':');
		render_json_str(sb, text);
		free(text);
		first = false;
	}
	sb_adds(sb, "}");
	strtab_free(&files);
	prof_output_fn_table_free(&t);
	prof_source_policy_free(&sp);
}

void render_html_app_data(struct strbuf *sb, const struct prof_profile *p, const struct prof_view *v)
{
	struct app a = { .p = p, .v = v };
	struct strbuf body = STRBUF_INIT;

	strtab_init(&a.strs);
	build_stacks(&a);
	build_rows(&a);
	fold_threads(&a);
	build_lanes(&a);
	trim_stacks(&a);
	coarsen_rows(&a);
	prune_stacks(&a);
	emit_strings_of_frames(&a, &body);
	emit_lanes(&a, &body);
	emit_rows(&a, &body);
	emit_timeline(&a, &body);
	emit_events(&a, &body);
	emit_heap(&a, &body);
	emit_sources(&a, &body);
	/* bucket_ns, nbuckets: the rows' (selection) buckets; lane_*: the tracks';
	 * start_rel, end_rel: the recording's first and last record from t0
	 * (report --at counts from the first, --min-age back from the last) */
	sb_addf(sb, "{\"metric\":\"%s\",\"t0\":%llu,\"start_rel\":%lld,\"end_rel\":%lld,\"bucket_ns\":%llu,\"nbuckets\":%u,"
		"\"lane_ns\":%llu,\"nlanes\":%u,\"lane_per\":%u,\"timed\":%s,\"trim_share\":%g,"
		"\"trim_samples\":%.4f,\"strings\":",
		prof_view_metric_name(v->metric), (unsigned long long)a.t0,
		(long long)(p->start_ns - a.t0), (long long)(p->end_ns - a.t0),
		(unsigned long long)(a.bucket_ns * a.per), (a.nbuckets + a.per - 1) / a.per,
		(unsigned long long)a.bucket_ns, a.nbuckets, a.per, p->timed.n ? "true" : "false",
		HTML_TRIM_SHARE, a.trimmed);
	render_json_strtab(sb, &a.strs);
	sb_add(sb, body.buf ? body.buf : "", body.len);
	sb_adds(sb, "}");
	sb_release(&body);
	strtab_free(&a.strs);
	u64map_free(&a.frame_ix);
	u64map_free(&a.stack_ix);
	u64map_free(&a.row_ix);
	VEC_FREE(&a.frames);
	VEC_FREE(&a.stack_parent);
	VEC_FREE(&a.stack_frame);
	VEC_FREE(&a.rows);
	VEC_FREE(&a.lanes);
	VEC_FREE(&a.shown);
	free(a.node_stack);
}
