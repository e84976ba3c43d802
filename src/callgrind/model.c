/*
 * model.c - converts one parsed callgrind part into the shared profile
 * model (include/prof/model.h) for the cross-check.  The mapping is
 * documented at cg_part_to_model() in include/prof/callgrind.h: one frame
 * per function (fi=/fe= rows folded into their function), self cost of one
 * event as depth-1 PROF_M_SAMPLES stacks, calls as edges.
 */
#include "prof/callgrind.h"
#include <errno.h>
#include <string.h>

static uint32_t frame_of(const struct cg_profile *cg, const struct cg_fn *fn,
			 struct prof_profile *out)
{
	const char *obj = strtab_get(&cg->strs, fn->object);
	struct prof_frame f = {
		.func = prof_intern(out, strtab_get(&cg->strs, fn->name)),
		.file = prof_intern(out, strtab_get(&cg->strs, fn->home_file)),
		.module = *obj ? prof_module_intern(out, obj, "", 0) : PROF_NONE,
		.kind = PROF_FRAME_USER,
	};
	return prof_frame_intern(out, &f);
}

int cg_part_to_model(const struct cg_profile *cg, const struct cg_part *part,
		     int event_index, struct prof_profile *out)
{
	if (event_index < 0 || (size_t)event_index >= cg_nev(part))
		return -EINVAL;
	const char *cmd = strtab_get(&cg->strs, part->cmd);
	while (*cmd == ' ')
		cmd++;
	size_t cl = strcspn(cmd, " ");
	const char *base = memrchr(cmd, '/', cl);
	char *comm = xstrndup(base ? base + 1 : cmd, base ? cl - (size_t)(base + 1 - cmd) : cl);
	uint32_t thread = prof_thread_intern(out, part->pid, part->pid, comm);
	free(comm);

	uint32_t *frames = xcalloc(part->fns.n + 1, sizeof(uint32_t));
	for (size_t i = 0; i < part->fns.n; i++) {
		const struct cg_fn *fn = &part->fns.v[i];
		frames[i] = frame_of(cg, fn, out);
		uint64_t self = cg_cost(part, fn->self)[event_index];
		if (self)
			prof_add(out, thread, prof_node_child(out, 0, frames[i]), PROF_M_SAMPLES, self);
	}
	/* edges between the same two frames (fi= rows folded) are summed */
	struct u64map edge_index = { 0 };
	for (size_t i = 0; i < part->calls.n; i++) {
		const struct cg_call *c = &part->calls.v[i];
		uint32_t a = frames[c->caller], b = frames[c->callee];
		bool created;
		uint64_t *slot = u64map_slot(&edge_index, (uint64_t)a << 32 | b, &created);
		uint64_t v[PROF_METRIC_COUNT] = { 0 };
		v[PROF_M_SAMPLES] = cg_cost(part, c->cost)[event_index];
		if (created) {
			*slot = out->edges.n;
			prof_edge_add(out, a, b, c->calls, v);
		} else {
			out->edges.v[*slot].calls += c->calls;
			out->edges.v[*slot].value[PROF_M_SAMPLES] += v[PROF_M_SAMPLES];
		}
	}
	u64map_free(&edge_index);
	free(frames);

	char num[32];
	prof_meta_set(out, "source", "callgrind");
	prof_meta_set(out, "event", strtab_get(&cg->strs, part->events.v[event_index]));
	prof_meta_set(out, "command", strtab_get(&cg->strs, part->cmd));
	prof_meta_set(out, "creator", strtab_get(&cg->strs, part->creator));
	snprintf(num, sizeof(num), "%u", part->number);
	prof_meta_set(out, "callgrind_part", num);
	prof_meta_set(out, "callgrind_trigger", strtab_get(&cg->strs, part->trigger));
	out->samples += cg_cost(part, part->totals)[event_index];
	return 0;
}

/* fib'2 and friends: callgrind's names for deeper recursion levels. */
bool cg_is_recursion_row(const char *name)
{
	const char *q = strrchr(name, '\'');
	if (!q || !q[1])
		return false;
	for (q++; *q; q++)
		if (*q < '0' || *q > '9')
			return false;
	return true;
}

uint32_t *cg_part_identities(struct prof_idset *s, const struct cg_profile *p,
			     const struct cg_part *part, bool skip_recursion)
{
	struct prof_ident_rec *recs = xcalloc(part->fns.n + 1, sizeof(*recs));
	uint32_t *ids = xcalloc(part->fns.n + 1, sizeof(*ids));
	size_t n = 0;

	for (size_t i = 0; i < part->fns.n; i++) {
		const struct cg_fn *f = &part->fns.v[i];
		if (skip_recursion && cg_is_recursion_row(strtab_get(&p->strs, f->name)))
			continue;
		recs[n++] = (struct prof_ident_rec){
			.name = strtab_get(&p->strs, f->name),
			.module = strtab_get(&p->strs, f->object),
			.file = strtab_get(&p->strs, f->home_file),
			.token = (uint64_t)f->home_file + 1,
		};
	}
	prof_idset_add_input(s, recs, n, ids);
	/* spread out in place, from the end: row i takes the k-th identity */
	for (size_t i = part->fns.n, k = n; i-- > 0;) {
		bool skipped = skip_recursion &&
			       cg_is_recursion_row(strtab_get(&p->strs, part->fns.v[i].name));
		ids[i] = skipped ? PROF_NONE : ids[--k];
	}
	free(recs);
	return ids;
}
