/*
 * model.c - callgrind rows as function identities (include/prof/identity.h)
 * for the cross-check: recursion rows (fib'2) and the identity of every row
 * of a part.  Callgrind keeps its own model (no stacks, only call edges);
 * nothing here converts it to the sampled profile model.
 */
#include "prof/callgrind.h"
#include <string.h>

/* fib'2 and friends: callgrind's names for deeper recursion levels. */
/* fib'2, fib'3: callgrind's rows for deeper recursion levels. */
static bool cg_is_recursion_row(const char *name)
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
