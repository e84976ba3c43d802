/*
 * annotate.c - one function's costs per source line and per instruction,
 * from the profile alone (what annotate.h describes).  Source text and
 * disassembly come from source.c and disasm.c; print.c prints.
 *
 * Design notes:
 *  - A stack is cut into "physical groups" walking from the leaf out: a
 *    run of inlined frames ends at the non-inlined frame they were inlined
 *    into.  A sample is in F's code when the leaf group's physical frame is
 *    F; its line is the leaf frame's (possibly an inlined callee's line),
 *    its instruction the leaf frame's pc.
 *  - Totals count each (sample, line) once, so recursion does not count a
 *    line twice for one sample.
 */
#include "prof/annotate.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct builder {
	const struct prof_profile *p;
	struct prof_annotation *a;
	struct u64map line_index, insn_index;	/* key -> index + 1 */
	uint32_t func;				/* string id of F */
};

static bool is_target(const struct builder *b, const struct prof_frame *f)
{
	return f->func == b->func && !f->inlined && f->module == b->a->module;
}

static size_t line_of(struct builder *b, const struct prof_frame *f,
		      const struct prof_frame *physical)
{
	uint64_t key = ((uint64_t)f->file << 32) | f->line;
	bool created;
	uint64_t *slot = u64map_slot(&b->line_index, key, &created);

	if (created) {
		struct prof_annotate_line l = { .file = f->file, .line = f->line,
			.inlined_func = f != physical ? f->func : 0 };
		*slot = b->a->lines.n;
		VEC_PUSH(&b->a->lines, l);
	}
	return (size_t)*slot;
}

static void add_insn(struct builder *b, const struct prof_frame *leaf, uint64_t w)
{
	bool created;
	uint64_t *slot = u64map_slot(&b->insn_index, leaf->pc, &created);

	if (created) {
		struct prof_annotate_insn in = { .pc = leaf->pc, .file = leaf->file,
						 .line = leaf->line };
		*slot = b->a->insns.n;
		VEC_PUSH(&b->a->insns, in);
	}
	b->a->insns.v[*slot].self += w;
}

/* Total of each of F's lines in one physical group, once per sample. */
static void add_group_totals(struct builder *b, const uint32_t *frames, size_t from, size_t to,
			     size_t *seen, size_t *nseen, size_t max_seen, uint64_t w)
{
	const struct prof_frame *fr = b->p->frames.v;

	for (size_t k = from; k <= to; k++) {
		size_t l = line_of(b, &fr[frames[k]], &fr[frames[to]]);
		bool dup = false;
		for (size_t s = 0; s < *nseen && !dup; s++)
			dup = seen[s] == l;
		if (dup)
			continue;
		b->a->lines.v[l].total += w;
		if (*nseen < max_seen)
			seen[(*nseen)++] = l;
	}
}

/* Adds one weighted stack (frames innermost first). */
static void add_stack(struct builder *b, const uint32_t *frames, size_t n, uint64_t w)
{
	const struct prof_frame *fr = b->p->frames.v;
	size_t seen[64], nseen = 0, group_start = 0;
	bool in_f = false;

	if (!n)
		return;
	if (fr[frames[0]].func == b->func && fr[frames[0]].module == b->a->module)
		b->a->self_fn += w;
	for (size_t i = 0; i < n; i++) {
		const struct prof_frame *f = &fr[frames[i]];
		if (f->inlined && i + 1 < n)
			continue;
		/* frames[group_start..i] is one physical group, f its function */
		if (is_target(b, f)) {
			in_f = true;
			add_group_totals(b, frames, group_start, i, seen, &nseen, ARRAY_SIZE(seen), w);
			if (group_start == 0) {
				b->a->in_code += w;
				b->a->lines.v[line_of(b, &fr[frames[0]], f)].self += w;
				if (fr[frames[0]].pc)
					add_insn(b, &fr[frames[0]], w);
				else
					b->a->no_pc += w;
			}
		}
		group_start = i + 1;
	}
	if (in_f)
		b->a->total += w;
}

/* Innermost-first frame ids of a node into out; returns the count. */
static size_t node_frames(const struct prof_profile *p, uint32_t node, struct u32vec *out)
{
	out->n = 0;
	for (; node && node < p->nodes.n; node = p->nodes.v[node].parent)
		if (p->nodes.v[node].frame < p->frames.n)
			VEC_PUSH(out, p->nodes.v[node].frame);
	return out->n;
}

/* The leaf's physical frame: the first non-inlined frame from the leaf out. */
static const struct prof_frame *leaf_physical(const struct prof_profile *p, const struct u32vec *st)
{
	for (size_t i = 0; i < st->n; i++)
		if (!p->frames.v[st->v[i]].inlined || i + 1 == st->n)
			return &p->frames.v[st->v[i]];
	return NULL;
}

/*
 * The module of F: the one whose F has the most samples in its code; a
 * function that only appears as a caller falls back to the first module
 * with a non-inlined F.  PROF_NONE when no frame is named func.
 */
static uint32_t pick_module(const struct prof_profile *p, const struct prof_view *v,
			    uint32_t func, struct u32vec *st)
{
	struct u64map weight = { 0 };
	uint32_t best = PROF_NONE;
	uint64_t best_w = 0;

	for (size_t i = 0; i < p->frames.n && best == PROF_NONE; i++)
		if (p->frames.v[i].func == func && !p->frames.v[i].inlined)
			best = p->frames.v[i].module;
	for (size_t i = 0; i < p->aggs.n; i++) {
		uint64_t w = prof_view_weight(p, v, &p->aggs.v[i]);
		if (!w || !node_frames(p, p->aggs.v[i].node, st))
			continue;
		const struct prof_frame *f = leaf_physical(p, st);
		if (f->func != func)
			continue;
		uint64_t *slot = u64map_slot(&weight, f->module, NULL);
		if ((*slot += w) > best_w) {
			best_w = *slot;
			best = f->module;
		}
	}
	u64map_free(&weight);
	return best;
}

static uint32_t find_string(const struct prof_profile *p, const char *s)
{
	for (size_t i = 0; i < p->frames.n; i++)
		if (!strcmp(prof_str(p, p->frames.v[i].func), s))
			return p->frames.v[i].func;
	return 0;
}

static int cmp_line(const void *x, const void *y)
{
	const struct prof_annotate_line *a = x, *b = y;

	if (a->file != b->file)
		return a->file < b->file ? -1 : 1;
	return (a->line > b->line) - (a->line < b->line);
}

static int cmp_insn(const void *x, const void *y)
{
	const struct prof_annotate_insn *a = x, *b = y;

	return (a->pc > b->pc) - (a->pc < b->pc);
}

int prof_annotate_build(const struct prof_profile *p, const struct prof_view *v,
			const char *func, struct prof_annotation *a)
{
	struct builder b = { .p = p, .a = a };
	struct u32vec st = { 0 };

	memset(a, 0, sizeof(*a));
	b.func = a->func = find_string(p, func);
	if (!b.func)
		return -ENOENT;
	a->module = pick_module(p, v, b.func, &st);
	for (size_t i = 0; i < p->frames.n; i++)
		if (p->frames.v[i].func == b.func && !p->frames.v[i].inlined &&
		    p->frames.v[i].module == a->module) {
			a->entry = p->frames.v[i].addr;
			break;
		}
	for (size_t i = 0; i < p->aggs.n; i++) {
		uint64_t w = prof_view_weight(p, v, &p->aggs.v[i]);
		a->grand_total += w;
		if (w && node_frames(p, p->aggs.v[i].node, &st))
			add_stack(&b, st.v, st.n, w);
	}
	if (a->lines.n)		/* qsort(NULL, 0) is undefined */
		qsort(a->lines.v, a->lines.n, sizeof(*a->lines.v), cmp_line);
	if (a->insns.n)
		qsort(a->insns.v, a->insns.n, sizeof(*a->insns.v), cmp_insn);
	u64map_free(&b.line_index);
	u64map_free(&b.insn_index);
	VEC_FREE(&st);
	return a->total || a->in_code ? 0 : -ENOENT;
}

void prof_annotation_free(struct prof_annotation *a)
{
	VEC_FREE(&a->lines);
	VEC_FREE(&a->insns);
}
