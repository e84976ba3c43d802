/*
 * flametree.c - the "flame tree" every picture renderer draws: the stack
 * trie of a profile re-merged by (function name, module path, inlined)
 * along each path, as flamegraph.pl merges sibling frames by name, with
 * one weight per slot (head, base, gone) so a differential flame graph can
 * overlay two profiles.
 *
 * Design notes / invariants:
 *  - Nodes are keyed by strings, not profile ids: two profiles' string
 *    tables differ, and the diff must match "main;work" in both.  Strings
 *    are borrowed from the profiles, which must outlive the tree.
 *  - Node 0 is the root (name ""); value[slot] of a node is the sum over
 *    the stacks passing through it; self[slot] over the stacks ending there.
 *  - Lookup: hash(parent, name, module, inlined) probed linearly in a
 *    u64map (key + k), comparing the real fields, as model/profile.c does.
 *  - child lists exist only after render_flame_tree_finish(), sorted by name like
 *    flamegraph.pl's alphabetical sibling order.
 */
#include "prof/output.h"
#include "output-priv.h"
#include "prof/identity.h"
#include <string.h>

void render_flame_tree_init(struct flame_tree *t)
{
	memset(t, 0, sizeof(*t));
	struct flame_node root = { .parent = PROF_NONE, .name = "", .module = "", .file = "",
				   .name_key = "", .module_key = "" };
	VEC_PUSH(&t->nodes, root);
}

void render_flame_tree_init_identity(struct flame_tree *t)
{
	render_flame_tree_init(t);
	t->by_identity = true;
	strtab_init(&t->keys);
}

void render_flame_tree_free(struct flame_tree *t)
{
	VEC_FREE(&t->nodes);
	VEC_FREE(&t->child_ids);
	u64map_free(&t->index);
	if (t->by_identity)
		strtab_free(&t->keys);
}

/* The strings a frame merges by: its own, or its identity in a diff tree
 * (name + clone suffix without hashes, module role; interned in t->keys). */
static void frame_keys(struct flame_tree *t, const char *name, const char *module,
		       const char **name_key, const char **module_key)
{
	struct strbuf n = STRBUF_INIT, clone = STRBUF_INIT;

	if (!t->by_identity) {
		*name_key = name;
		*module_key = module;
		return;
	}
	prof_ident_normalize(name, &n, &clone);
	sb_adds(&n, sb_str(&clone));
	*name_key = strtab_get(&t->keys, strtab_intern(&t->keys, sb_str(&n)));
	prof_ident_module_role(module, &n);
	*module_key = strtab_get(&t->keys, strtab_intern(&t->keys, sb_str(&n)));
	sb_release(&n);
	sb_release(&clone);
}

static uint32_t flame_child(struct flame_tree *t, uint32_t parent,
			    const struct prof_profile *p, const struct prof_frame *f)
{
	const char *name = *prof_str(p, f->func) ? prof_str(p, f->func) : "[unknown]";
	const char *module = prof_frame_module_path(p, f), *name_key, *module_key;

	frame_keys(t, name, module, &name_key, &module_key);
	uint64_t key = hash64(parent) ^ hash_bytes(name_key, strlen(name_key)) ^
		       (hash_bytes(module_key, strlen(module_key)) * 31) ^ f->inlined;

	for (uint64_t k = 0;; k++) {
		bool created;
		uint64_t *slot = u64map_slot(&t->index, key + k, &created);
		if (created) {
			struct flame_node n = {
				.parent = parent, .name = name, .module = module,
				.name_key = name_key, .module_key = module_key,
				.file = prof_str(p, f->file), .line = f->line,
				.kind = f->kind, .inlined = f->inlined,
				.python = f->module < p->modules.n &&
					  (p->modules.v[f->module].flags & PROF_MOD_PYTHON),
				.depth = t->nodes.v[parent].depth + 1,
			};
			*slot = t->nodes.n;
			VEC_PUSH(&t->nodes, n);
			if (n.depth > t->max_depth)
				t->max_depth = n.depth;
			return (uint32_t)*slot;
		}
		struct flame_node *have = &t->nodes.v[*slot];
		if (have->parent == parent && have->inlined == f->inlined &&
		    !strcmp(have->name_key, name_key) && !strcmp(have->module_key, module_key))
			return (uint32_t)*slot;
	}
}

/* Walks (creating) the tree path of one agg's stack into path (root first). */
static void flame_path(struct flame_tree *t, const struct prof_profile *p,
		       uint32_t node, struct u32vec *frames, struct u32vec *path)
{
	prof_node_frames_outer_first(p, node, frames);
	path->n = 0;
	VEC_PUSH(path, 0);
	uint32_t cur = 0;
	for (size_t i = 0; i < frames->n; i++) {
		if (frames->v[i] >= p->frames.n)
			continue;	/* corrupt id: skip rather than crash */
		cur = flame_child(t, cur, p, &p->frames.v[frames->v[i]]);
		VEC_PUSH(path, cur);
	}
}

static void flame_add_path(struct flame_tree *t, const struct u32vec *path, int slot, uint64_t w)
{
	for (size_t i = 0; i < path->n; i++)
		t->nodes.v[path->v[i]].value[slot] += w;
	t->nodes.v[path->v[path->n - 1]].self[slot] += w;
}

/* Gone: some frame of the path never occurred in head. */
static bool path_gone(const struct flame_tree *t, const struct u32vec *path)
{
	for (size_t k = 0; k < path->n; k++)
		if (t->nodes.v[path->v[k]].value[FLAME_HEAD] == 0)
			return true;
	return false;
}

/* Every aggregate of p that the view weighs goes into slot; with
 * mark_gone, a path that head never had also goes, whole (ancestors
 * included, for context), into FLAME_GONE. */
static void add_aggs(struct flame_tree *t, const struct prof_profile *p, const struct prof_view *v,
		     int slot, bool mark_gone)
{
	struct u32vec frames = { 0 }, path = { 0 };

	for (size_t i = 0; i < p->aggs.n; i++) {
		uint64_t w = prof_view_weight(p, v, &p->aggs.v[i]);
		if (!w)
			continue;
		flame_path(t, p, p->aggs.v[i].node, &frames, &path);
		flame_add_path(t, &path, slot, w);
		if (mark_gone && path_gone(t, &path))
			flame_add_path(t, &path, FLAME_GONE, w);
	}
	VEC_FREE(&frames);
	VEC_FREE(&path);
}

void render_flame_tree_add_profile(struct flame_tree *t, const struct prof_profile *p,
				   const struct prof_view *v, int slot)
{
	add_aggs(t, p, v, slot, false);
}

void render_flame_tree_add_base(struct flame_tree *t, const struct prof_profile *p,
				const struct prof_view *v)
{
	add_aggs(t, p, v, FLAME_BASE, true);
}

static int cmp_child(const void *a, const void *b, void *tree)
{
	const struct flame_tree *t = tree;
	const struct flame_node *x = &t->nodes.v[*(const uint32_t *)a];
	const struct flame_node *y = &t->nodes.v[*(const uint32_t *)b];
	int c = strcmp(x->name, y->name);

	if (!c)
		c = strcmp(x->module, y->module);
	return c ? c : (int)x->inlined - (int)y->inlined;
}

void render_flame_tree_finish(struct flame_tree *t)
{
	size_t n = t->nodes.n;

	/* Counting sort of node ids by parent, then sort each sibling run. */
	for (size_t i = 0; i < n; i++)
		t->nodes.v[i].n_children = 0;
	for (size_t i = 1; i < n; i++)
		t->nodes.v[t->nodes.v[i].parent].n_children++;
	uint32_t at = 0;
	for (size_t i = 0; i < n; i++) {
		t->nodes.v[i].first_child = at;
		at += t->nodes.v[i].n_children;
		t->nodes.v[i].n_children = 0;
	}
	t->child_ids.n = 0;
	VEC_GROW(&t->child_ids, n);
	t->child_ids.n = n ? n - 1 : 0;
	for (size_t i = 1; i < n; i++) {
		struct flame_node *par = &t->nodes.v[t->nodes.v[i].parent];
		t->child_ids.v[par->first_child + par->n_children++] = (uint32_t)i;
	}
	for (size_t i = 0; i < n; i++)
		if (t->nodes.v[i].n_children > 1)
			qsort_r(t->child_ids.v + t->nodes.v[i].first_child,
				t->nodes.v[i].n_children, sizeof(uint32_t), cmp_child, t);
}
