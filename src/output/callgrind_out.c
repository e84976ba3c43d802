/*
 * callgrind_out.c - export a sampled profile in callgrind's format so
 * callgrind_annotate and KCachegrind open it: one event (Samples for CPU,
 * <metric>_ns for time metrics), self cost per (function, line) and call
 * edges with inclusive cost derived from the stack trie.
 *
 * Design notes / invariants:
 *  - A function is (name, module), like prof_output_fn_table_build: ob= is the
 *    module, fl= the file of its first frame seen, fn= the name.  Names and
 *    files use callgrind's "(id) name" compression.
 *  - Self cost: the leaf frame of each stack, at the leaf's line.  So the
 *    sum of all self costs (callgrind_annotate's PROGRAM TOTALS) equals the
 *    view's total weight.
 *  - Call edges: each adjacent (caller frame, callee frame) pair of a stack
 *    adds the stack's weight to edge (caller fn, caller line, callee fn)
 *    ONCE per stack even under recursion (edge.last_agg marks it), so an
 *    edge's inclusive cost never exceeds the total.
 *  - calls= cannot be known from sampling: we write the number of distinct
 *    sampled (thread, stack) aggregates through the edge (always >= 1).
 */
#include "prof/output.h"
#include "output-priv.h"
#include <stdlib.h>
#include <string.h>

struct cg_fn { uint32_t name, module, file, line; };
struct cg_self { uint32_t fn, line; uint64_t cost; };
struct cg_call {
	uint32_t caller, line, callee, callee_line;
	uint64_t calls, cost;
	size_t last_agg;
};

struct cg_state {
	const struct prof_profile *p;
	VEC(struct cg_fn) fns;
	VEC(struct cg_self) selfs;
	VEC(struct cg_call) calls;
	struct u64map fn_index, self_index, call_index;
	struct u64map ob_ids, fl_ids, fn_ids;	/* name compression: string id -> (n) */
};

static uint32_t cg_fn_of(struct cg_state *s, const struct prof_frame *f)
{
	bool created;
	uint64_t *slot = u64map_slot(&s->fn_index, ((uint64_t)f->func << 32) | f->module, &created);

	if (created) {
		*slot = s->fns.n;
		VEC_PUSH(&s->fns, ((struct cg_fn){ f->func, f->module, f->file, f->line }));
	}
	return (uint32_t)*slot;
}

static void cg_add_self(struct cg_state *s, uint32_t fn, uint32_t line, uint64_t w)
{
	bool created;
	uint64_t *slot = u64map_slot(&s->self_index, ((uint64_t)fn << 32) | line, &created);

	if (created) {
		*slot = s->selfs.n;
		VEC_PUSH(&s->selfs, ((struct cg_self){ fn, line, 0 }));
	}
	s->selfs.v[*slot].cost += w;
}

static void cg_add_call(struct cg_state *s, uint32_t caller, uint32_t line, uint32_t callee,
			uint32_t callee_line, uint64_t w, size_t agg)
{
	uint64_t key = hash64(((uint64_t)caller << 32) | line) ^ hash64(callee + 0x9e3779b9ULL);

	for (uint64_t k = 0;; k++) {
		bool created;
		uint64_t *slot = u64map_slot(&s->call_index, key + k, &created);
		if (created) {
			*slot = s->calls.n;
			struct cg_call c = { caller, line, callee, callee_line, 0, 0, SIZE_MAX };
			VEC_PUSH(&s->calls, c);
		}
		struct cg_call *c = &s->calls.v[*slot];
		if (c->caller != caller || c->line != line || c->callee != callee)
			continue;
		if (c->last_agg != agg) {	/* once per stack, even if recursive */
			c->last_agg = agg;
			c->calls++;
			c->cost += w;
		}
		return;
	}
}

static void cg_collect(struct cg_state *s, const struct prof_view *v)
{
	const struct prof_profile *p = s->p;
	struct u32vec stack = { 0 };

	for (size_t i = 0; i < p->aggs.n; i++) {
		uint64_t w = prof_view_weight(p, v, &p->aggs.v[i]);
		if (!w)
			continue;
		prof_node_frames_outer_first(p, p->aggs.v[i].node, &stack);
		const struct prof_frame *prev = NULL;
		uint32_t prev_fn = 0;
		for (size_t k = 0; k < stack.n; k++) {
			if (stack.v[k] >= p->frames.n)
				continue;
			const struct prof_frame *f = &p->frames.v[stack.v[k]];
			uint32_t fn = cg_fn_of(s, f);
			if (prev)
				cg_add_call(s, prev_fn, prev->line, fn, f->line, w, i);
			prev = f;
			prev_fn = fn;
		}
		if (prev)
			cg_add_self(s, prev_fn, prev->line, w);
	}
	VEC_FREE(&stack);
}

/* Writes "key=(n) name" the first time a string is used, "key=(n)" after. */
static void cg_name(struct strbuf *sb, struct u64map *ids, const char *key,
		    uint32_t str, const char *text)
{
	bool created;
	uint64_t *slot = u64map_slot(ids, str, &created);

	if (created)
		*slot = ids->n;
	sb_addf(sb, "%s=(%llu)", key, (unsigned long long)*slot);
	if (!created) {
		sb_addch(sb, '\n');
		return;
	}
	sb_addch(sb, ' ');
	for (const char *c = *text ? text : "???"; *c; c++)	/* one record per line */
		sb_addch(sb, *c == '\n' || *c == '\r' ? ' ' : *c);
	sb_addch(sb, '\n');
}

static void cg_fn_header(struct strbuf *sb, struct cg_state *s, const struct cg_fn *fn,
			 const char *ob, const char *fl, const char *fnk)
{
	const struct prof_profile *p = s->p;
	bool has_mod = fn->module != PROF_NONE && fn->module < p->modules.n;
	uint32_t mod_str = has_mod ? p->modules.v[fn->module].path : 0;

	cg_name(sb, &s->ob_ids, ob, mod_str, prof_str(p, mod_str));
	cg_name(sb, &s->fl_ids, fl, fn->file, prof_str(p, fn->file));
	cg_name(sb, &s->fn_ids, fnk, fn->name, prof_str(p, fn->name));
}

static int cmp_self(const void *a, const void *b)
{
	const struct cg_self *x = a, *y = b;

	if (x->fn != y->fn)
		return x->fn < y->fn ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

static int cmp_call(const void *a, const void *b)
{
	const struct cg_call *x = a, *y = b;

	if (x->caller != y->caller)
		return x->caller < y->caller ? -1 : 1;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return x->callee < y->callee ? -1 : x->callee > y->callee;
}

static const char *cg_event_name(enum prof_view_metric m)
{
	switch (m) {
	case PROF_VIEW_OFFCPU: return "OffCPU_ns";
	case PROF_VIEW_IOWAIT: return "IOWait_ns";
	case PROF_VIEW_SLEEP: return "Sleep_ns";
	case PROF_VIEW_WALL: return "Wall_ns";
	default: return "Samples";
	}
}

static void cg_write(struct strbuf *sb, struct cg_state *s, const struct prof_view *v)
{
	const char *cmd = prof_meta_get(s->p, "command");
	uint64_t total = 0;

	for (size_t i = 0; i < s->selfs.n; i++)
		total += s->selfs.v[i].cost;
	sb_adds(sb, "# callgrind format\nversion: 1\ncreator: prof\n");
	if (cmd && *cmd) {
		sb_adds(sb, "cmd: ");
		for (const char *c = cmd; *c; c++)
			sb_addch(sb, *c == '\n' ? ' ' : *c);
		sb_addch(sb, '\n');
	}
	sb_addf(sb, "positions: line\nevents: %s\nsummary: %llu\n\n",
		cg_event_name(v->metric), (unsigned long long)total);

	if (s->selfs.n > 1)	/* qsort(NULL, 0) is undefined */
		qsort(s->selfs.v, s->selfs.n, sizeof(*s->selfs.v), cmp_self);
	if (s->calls.n > 1)
		qsort(s->calls.v, s->calls.n, sizeof(*s->calls.v), cmp_call);
	size_t si = 0, ci = 0;
	for (uint32_t fn = 0; fn < s->fns.n; fn++) {
		bool has_self = si < s->selfs.n && s->selfs.v[si].fn == fn;
		bool has_calls = ci < s->calls.n && s->calls.v[ci].caller == fn;
		if (!has_self && !has_calls)
			continue;
		cg_fn_header(sb, s, &s->fns.v[fn], "ob", "fl", "fn");
		for (; si < s->selfs.n && s->selfs.v[si].fn == fn; si++)
			sb_addf(sb, "%u %llu\n", s->selfs.v[si].line,
				(unsigned long long)s->selfs.v[si].cost);
		for (; ci < s->calls.n && s->calls.v[ci].caller == fn; ci++) {
			const struct cg_call *c = &s->calls.v[ci];
			cg_fn_header(sb, s, &s->fns.v[c->callee], "cob", "cfi", "cfn");
			sb_addf(sb, "calls=%llu %u\n%u %llu\n", (unsigned long long)c->calls,
				c->callee_line, c->line, (unsigned long long)c->cost);
		}
		sb_addch(sb, '\n');
	}
	sb_addf(sb, "totals: %llu\n", (unsigned long long)total);
}

int prof_output_callgrind(FILE *f, const struct prof_profile *p, const struct prof_view *v)
{
	struct cg_state s = { .p = p };
	struct strbuf sb = STRBUF_INIT;

	cg_collect(&s, v);
	cg_write(&sb, &s, v);
	int rc = render_flush(f, &sb);

	sb_release(&sb);
	VEC_FREE(&s.fns);
	VEC_FREE(&s.selfs);
	VEC_FREE(&s.calls);
	u64map_free(&s.fn_index);
	u64map_free(&s.self_index);
	u64map_free(&s.call_index);
	u64map_free(&s.ob_ids);
	u64map_free(&s.fl_ids);
	u64map_free(&s.fn_ids);
	return rc;
}
