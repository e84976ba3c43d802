/*
 * profile.c - the profile model's tables: interning of modules, frames,
 * trie nodes and threads, and the (thread, node) weight aggregation.
 * See include/prof/model.h for the invariants this file keeps.
 */
#include "prof/model.h"
#include <errno.h>
#include <string.h>

void prof_profile_init(struct prof_profile *p)
{
	memset(p, 0, sizeof(*p));
	strtab_init(&p->strings);
	VEC_PUSH(&p->nodes, ((struct prof_node){ PROF_NONE, PROF_NONE }));
}

void prof_profile_free(struct prof_profile *p)
{
	strtab_free(&p->strings);
	VEC_FREE(&p->modules);
	VEC_FREE(&p->frames);
	VEC_FREE(&p->nodes);
	VEC_FREE(&p->threads);
	VEC_FREE(&p->aggs);
	VEC_FREE(&p->meta);
	VEC_FREE(&p->resources);
	VEC_FREE(&p->timeline);
	VEC_FREE(&p->task_events);
	VEC_FREE(&p->timed);
	VEC_FREE(&p->heap_log);
	VEC_FREE(&p->heap_live);
	u64map_free(&p->module_index);
	u64map_free(&p->frame_index);
	u64map_free(&p->node_index);
	u64map_free(&p->thread_index);
	u64map_free(&p->agg_index);
	u64map_free(&p->resources_index);
}

uint32_t prof_intern(struct prof_profile *p, const char *s)
{
	return strtab_intern(&p->strings, s);
}

uint32_t prof_module_intern(struct prof_profile *p, const char *path,
			    const char *build_id, uint32_t flags)
{
	struct prof_module m = {
		.path = prof_intern(p, path),
		.build_id = prof_intern(p, build_id ? build_id : ""),
		.flags = flags,
	};
	uint64_t key = hash64(((uint64_t)m.path << 32) | m.build_id);

	/* Probe on (key + k) and compare the real fields: hashes may collide. */
	for (uint64_t k = 0;; k++) {
		bool created;
		uint64_t *slot = u64map_slot(&p->module_index, key + k, &created);
		if (created) {
			*slot = p->modules.n;
			VEC_PUSH(&p->modules, m);
			return (uint32_t)*slot;
		}
		struct prof_module *have = &p->modules.v[*slot];
		if (have->path == m.path && have->build_id == m.build_id) {
			have->flags |= flags;
			return (uint32_t)*slot;
		}
	}
}

static bool frame_equal(const struct prof_frame *a, const struct prof_frame *b)
{
	return a->func == b->func && a->file == b->file && a->line == b->line &&
	       a->module == b->module && a->addr == b->addr && a->pc == b->pc &&
	       a->kind == b->kind && a->inlined == b->inlined;
}

uint32_t prof_frame_intern(struct prof_profile *p, const struct prof_frame *f)
{
	/* The struct has padding, so hash the fields, not the bytes. */
	uint64_t key = hash64(((uint64_t)f->func << 32) ^ f->file) ^
		       hash64((((uint64_t)f->line << 32) | f->module) + f->addr * 31 +
			      (uint64_t)f->kind * 7 + f->inlined) ^ f->pc * 0x9e3779b97f4a7c15ULL;

	for (uint64_t k = 0;; k++) {
		bool created;
		uint64_t *slot = u64map_slot(&p->frame_index, key + k, &created);
		if (created) {
			*slot = p->frames.n;
			VEC_PUSH(&p->frames, *f);
			return (uint32_t)*slot;
		}
		if (frame_equal(&p->frames.v[*slot], f))
			return (uint32_t)*slot;
	}
}

uint32_t prof_node_child(struct prof_profile *p, uint32_t parent, uint32_t frame)
{
	/* Both ids fit in 32 bits, so the key is exact: no collision check. */
	bool created;
	uint64_t *slot = u64map_slot(&p->node_index, ((uint64_t)parent << 32) | frame, &created);

	if (created) {
		*slot = p->nodes.n;
		VEC_PUSH(&p->nodes, ((struct prof_node){ parent, frame }));
	}
	return (uint32_t)*slot;
}

uint32_t prof_node_from_stack(struct prof_profile *p, const uint32_t *frames, size_t n)
{
	uint32_t node = 0;

	for (size_t i = n; i-- > 0;)
		node = prof_node_child(p, node, frames[i]);
	return node;
}

size_t prof_node_depth(const struct prof_profile *p, uint32_t node)
{
	size_t d = 0;

	while (node != 0 && node != PROF_NONE) {
		node = p->nodes.v[node].parent;
		d++;
	}
	return d;
}

void prof_node_frames_outer_first(const struct prof_profile *p, uint32_t node,
				  struct u32vec *out)
{
	out->n = 0;
	while (node != 0 && node != PROF_NONE && node < p->nodes.n) {
		VEC_PUSH(out, p->nodes.v[node].frame);
		node = p->nodes.v[node].parent;
	}
	for (size_t i = 0, j = out->n; i + 1 < j; i++, j--) {
		uint32_t tmp = out->v[i];
		out->v[i] = out->v[j - 1];
		out->v[j - 1] = tmp;
	}
}

uint32_t prof_thread_intern(struct prof_profile *p, uint32_t pid, uint32_t tid, const char *comm)
{
	bool created;
	uint64_t *slot = u64map_slot(&p->thread_index, ((uint64_t)pid << 32) | tid, &created);

	if (created) {
		*slot = p->threads.n;
		VEC_PUSH(&p->threads, ((struct prof_thread){ pid, tid, 0 }));
	}
	if (comm && *comm)
		p->threads.v[*slot].comm = prof_intern(p, comm);
	return (uint32_t)*slot;
}

uint32_t prof_thread_add_past(struct prof_profile *p, uint32_t pid, uint32_t tid, const char *comm)
{
	VEC_PUSH(&p->threads, ((struct prof_thread){ pid, tid, prof_intern(p, comm) }));
	return (uint32_t)(p->threads.n - 1);
}

uint32_t prof_thread_add(struct prof_profile *p, uint32_t pid, uint32_t tid, const char *comm)
{
	uint32_t th = prof_thread_add_past(p, pid, tid, comm);

	u64map_put(&p->thread_index, ((uint64_t)pid << 32) | tid, th);
	return th;
}

void prof_add(struct prof_profile *p, uint32_t thread, uint32_t node,
	      enum prof_metric metric, uint64_t value)
{
	bool created;
	uint64_t *slot = u64map_slot(&p->agg_index, ((uint64_t)thread << 32) | node, &created);

	if (created) {
		*slot = p->aggs.n;
		struct prof_agg a = { .thread = thread, .node = node };
		VEC_PUSH(&p->aggs, a);
	}
	p->aggs.v[*slot].value[metric] += value;
}

void prof_add_timed(struct prof_profile *p, uint64_t t_ns, uint32_t thread, uint32_t node,
		    enum prof_metric metric, uint64_t value)
{
	prof_add(p, thread, node, metric, value);
	if (p->keep_timed)
		VEC_PUSH(&p->timed, ((struct prof_timed_sample){
			.t_ns = t_ns, .value = value, .thread = thread, .node = node,
			.metric = (uint32_t)metric }));
}

void prof_timed_sort(struct prof_profile *p)
{
	/* Samples arrive in per-CPU runs that are each time-ordered, so most
	 * of the log is already sorted: check before paying for a sort.  The
	 * sort is a bottom-up merge sort because qsort is not stable. */
	size_t n = p->timed.n;
	bool sorted = true;

	for (size_t i = 1; i < n && sorted; i++)
		sorted = p->timed.v[i - 1].t_ns <= p->timed.v[i].t_ns;
	if (sorted)
		return;
	struct prof_timed_sample *tmp = xmalloc(n * sizeof(*tmp)), *a = p->timed.v, *b = tmp;
	for (size_t width = 1; width < n; width *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * width) {
			size_t mid = MIN(lo + width, n), hi = MIN(lo + 2 * width, n);
			size_t i = lo, j = mid, k = lo;
			while (i < mid && j < hi)
				b[k++] = a[j].t_ns < a[i].t_ns ? a[j++] : a[i++];
			while (i < mid)
				b[k++] = a[i++];
			while (j < hi)
				b[k++] = a[j++];
		}
		struct prof_timed_sample *swap = a; a = b; b = swap;
	}
	if (a != p->timed.v)
		memcpy(p->timed.v, a, n * sizeof(*a));
	free(tmp);
}

void prof_meta_set(struct prof_profile *p, const char *key, const char *value)
{
	uint32_t k = prof_intern(p, key), v = prof_intern(p, value ? value : "");

	for (size_t i = 0; i < p->meta.n; i++)
		if (p->meta.v[i].key == k) {
			p->meta.v[i].value = v;
			return;
		}
	VEC_PUSH(&p->meta, ((struct prof_meta){ k, v }));
}

const char *prof_meta_get(const struct prof_profile *p, const char *key)
{
	for (size_t i = 0; i < p->meta.n; i++)
		if (!strcmp(prof_str(p, p->meta.v[i].key), key))
			return prof_str(p, p->meta.v[i].value);
	return NULL;
}

uint64_t prof_total(const struct prof_profile *p, enum prof_metric m)
{
	uint64_t t = 0;

	for (size_t i = 0; i < p->aggs.n; i++)
		t += p->aggs.v[i].value[m];
	return t;
}

static struct prof_resources *resources_find(const struct prof_profile *p,
					     uint32_t pid, uint32_t tid)
{
	uint64_t v;

	if (!u64map_get(&p->resources_index, (uint64_t)pid << 32 | tid, &v))
		return NULL;
	return &p->resources.v[v - 1];
}

void prof_resources_set(struct prof_profile *p, const struct prof_resources *r)
{
	struct prof_resources *old = resources_find(p, r->pid, r->tid);

	if (old) {
		*old = *r;
		return;
	}
	VEC_PUSH(&p->resources, *r);
	u64map_put(&p->resources_index, (uint64_t)r->pid << 32 | r->tid, p->resources.n);
}

const struct prof_resources *prof_resources_get(const struct prof_profile *p,
						uint32_t pid, uint32_t tid)
{
	return resources_find(p, pid, tid);
}
