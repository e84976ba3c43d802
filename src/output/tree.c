/*
 * tree.c - the caller-first call tree (--tree): the stack trie re-keyed by
 * function (frames of one function at different lines merge), with total
 * and self per node, children by total descending, rows under
 * --percent-limit hidden with their subtrees.
 *
 * Design notes: tmemo[trie node] caches the tree node of every trie node
 * already mapped, so each trie node is resolved once however many
 * aggregates share it; the tree's parent of a node is always created
 * before the node (ids ascend from the root), like the trie's.
 */
#include "output-priv.h"
#include <errno.h>
#include <string.h>

struct tnode {
	uint32_t fn, parent;
	uint64_t self, total;
	uint32_t first_child, next_sibling;
};

struct tree {
	VEC(struct tnode) nodes;
	struct u64map index;		/* (parent << 32 | fn) -> tree node */
	uint32_t *tmemo;		/* trie node -> tree node, PROF_NONE = not yet */
	struct fn_index ix;
};

static uint32_t tree_child(struct tree *t, uint32_t parent, uint32_t fn)
{
	bool created;
	uint64_t *slot = u64map_slot(&t->index, ((uint64_t)parent << 32) | fn, &created);

	if (created) {
		*slot = t->nodes.n;
		struct tnode n = { fn, parent, 0, 0, PROF_NONE, PROF_NONE };
		VEC_PUSH(&t->nodes, n);
	}
	return (uint32_t)*slot;
}

/* The tree node of a trie node, mapping its unmapped ancestors first. */
static uint32_t tree_of(struct tree *t, const struct prof_profile *p, uint32_t node)
{
	VEC(uint32_t) chain = { 0 };
	uint32_t n = node;

	while (t->tmemo[n] == PROF_NONE) {
		VEC_PUSH(&chain, n);
		n = p->nodes.v[n].parent;
	}
	uint32_t tn = t->tmemo[n];
	while (chain.n) {
		n = chain.v[--chain.n];
		tn = tree_child(t, tn, t->ix.frame_fn[p->nodes.v[n].frame]);
		t->tmemo[n] = tn;
	}
	VEC_FREE(&chain);
	return tn;
}

/*
 * -g callee: the stack from its innermost frame outwards, so the roots are
 * the functions that were running and their children are their callers.
 * The root carries the self weight; every node on the path the total.
 */
static void add_callee_first(struct tree *t, const struct prof_profile *p, uint32_t node,
			     uint64_t w, uint32_t max_stack)
{
	uint32_t tn = 0, depth = 0;

	t->nodes.v[0].total += w;
	for (uint32_t n = node; n && (!max_stack || depth < max_stack);
	     n = p->nodes.v[n].parent, depth++) {
		tn = tree_child(t, tn, t->ix.frame_fn[p->nodes.v[n].frame]);
		t->nodes.v[tn].total += w;
		if (n == node)
			t->nodes.v[tn].self += w;
	}
}

static uint64_t build(struct tree *t, const struct prof_profile *p, const struct prof_view *v)
{
	uint64_t grand = 0;

	render_fn_index_build(&t->ix, p);
	t->tmemo = xmalloc(p->nodes.n * sizeof(*t->tmemo));
	memset(t->tmemo, 0xff, p->nodes.n * sizeof(*t->tmemo));
	t->tmemo[0] = 0;
	VEC_PUSH(&t->nodes, ((struct tnode){ PROF_NONE, PROF_NONE, 0, 0, PROF_NONE, PROF_NONE }));
	for (size_t i = 0; i < p->aggs.n; i++) {
		uint64_t w = prof_view_weight(p, v, &p->aggs.v[i]);
		if (!w)
			continue;
		grand += w;
		if (v->inverted) {
			add_callee_first(t, p, p->aggs.v[i].node, w, v->max_stack);
			continue;
		}
		uint32_t tn = tree_of(t, p, p->aggs.v[i].node);
		t->nodes.v[tn].self += w;
		for (; tn != PROF_NONE; tn = t->nodes.v[tn].parent)
			t->nodes.v[tn].total += w;
	}
	return grand;
}

static int by_total_desc(const void *pa, const void *pb, void *arg)
{
	const struct tnode *nodes = arg;
	const struct tnode *a = &nodes[*(const uint32_t *)pa], *b = &nodes[*(const uint32_t *)pb];

	if (a->total != b->total)
		return a->total > b->total ? -1 : 1;
	return (a->fn > b->fn) - (a->fn < b->fn);
}

/* Links each node's children into a sibling list sorted by total. */
static void link_children(struct tree *t)
{
	uint32_t *order = xmalloc(t->nodes.n * sizeof(*order));
	size_t n = 0;

	for (uint32_t i = 1; i < t->nodes.n; i++)
		order[n++] = i;
	qsort_r(order, n, sizeof(*order), by_total_desc, t->nodes.v);
	/* Walk backwards, pushing on the front: lists come out descending. */
	for (size_t i = n; i-- > 0;) {
		struct tnode *c = &t->nodes.v[order[i]];
		struct tnode *parent = &t->nodes.v[c->parent];
		c->next_sibling = parent->first_child;
		parent->first_child = order[i];
	}
	free(order);
}

static void print_row(FILE *f, const struct prof_profile *p, const struct tree *t,
		      uint32_t id, size_t depth, uint64_t grand, const struct prof_view *v,
		      struct strbuf *sb)
{
	const struct tnode *n = &t->nodes.v[id];
	const struct prof_fn_row *fn = &t->ix.fns.v[n->fn];

	sb_reset(sb);
	for (size_t i = 0; i < depth; i++)
		sb_adds(sb, "  ");
	add_printable(sb, render_fn_name(p, fn->func), "", '?');
	const char *mod = prof_module_basename(p, fn->module);
	if (*mod) {	/* "[app]", but "[kernel.kallsyms]" is bracketed already */
		bool bracketed = mod[0] == '[';
		sb_adds(sb, bracketed ? "  " : "  [");
		add_printable(sb, mod, "", '?');
		if (!bracketed)
			sb_addch(sb, ']');
	}
	double total = percent(n->total, grand), self = percent(n->self, grand);

	fprintf(f, "%s%6.2f%%%s  %s%6.2f%%%s  ", color_percent(v, total), total,
		color(v, *color_percent(v, total) ? COLOR_RESET : ""), color_percent(v, self), self,
		color(v, *color_percent(v, self) ? COLOR_RESET : ""));
	if (view_is_time(v))
		fprintf(f, "%10.2f  %s\n", (double)n->total / 1e6, sb->buf);
	else
		fprintf(f, "%8llu  %s\n", (unsigned long long)n->total, sb->buf);
}

int prof_output_text_tree(FILE *f, const struct prof_profile *p, const struct prof_view *v)
{
	struct tree t;
	struct strbuf sb = STRBUF_INIT;
	VEC(uint32_t) stack = { 0 }, depth = { 0 };

	memset(&t, 0, sizeof(t));
	uint64_t filtered = build(&t, p, v), grand = prof_view_percent_base(p, v, filtered);
	link_children(&t);
	render_text_header(f, p, v, filtered);
	if (!v->quiet)
		fprintf(f, "%s Total%%    Self%%  %*s  Call tree (%s first)%s\n",
			color(v, COLOR_HEADER), view_is_time(v) ? 10 : 8,
			view_is_time(v) ? "Total(ms)" : "Samples", v->inverted ? "callee" : "caller",
			color(v, COLOR_RESET));
	/* Iterative DFS: stacks can be thousands of frames deep. */
	VEC_PUSH(&stack, 0);
	VEC_PUSH(&depth, 0);
	while (stack.n) {
		uint32_t id = stack.v[--stack.n];
		size_t d = depth.v[--depth.n];
		if (id != 0)
			print_row(f, p, &t, id, d - 1, grand, v, &sb);
		/* Push the children, then reverse them so the biggest pops first
		 * (siblings share one depth, so only stack needs reversing). */
		size_t mark = stack.n;
		for (uint32_t c = t.nodes.v[id].first_child; c != PROF_NONE;
		     c = t.nodes.v[c].next_sibling) {
			if (percent(t.nodes.v[c].total, grand) < v->percent_limit)
				continue;
			VEC_PUSH(&stack, c);
			VEC_PUSH(&depth, d + 1);
		}
		for (size_t i = mark, j = stack.n; i + 1 < j; i++, j--) {
			uint32_t tmp = stack.v[i];
			stack.v[i] = stack.v[j - 1];
			stack.v[j - 1] = tmp;
		}
	}
	if (!filtered)
		fprintf(f, "# no samples match (metric %s)\n", prof_view_metric_name(v->metric));
	VEC_FREE(&stack);
	VEC_FREE(&depth);
	sb_release(&sb);
	free(t.tmemo);
	VEC_FREE(&t.nodes);
	u64map_free(&t.index);
	render_fn_index_free(&t.ix);
	return ferror(f) ? -EIO : 0;
}
