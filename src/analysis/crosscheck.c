/*
 * crosscheck.c - joins callgrind's instruction counts with sampled time,
 * function by function, and says whether a change is real (confirmed by
 * both), an artifact of counting instructions (instructions-only: the time
 * interval excludes what the instructions predict), or invisible to
 * instruction counts (time-only: memory system, syscalls, I/O, locks).
 *
 * Design notes: both sides are keyed by identity (src/model/identity.c)
 * in one an_fnset.  Callgrind costs are inclusive and taken per function name:
 * rows of the same function under different files (fi=/fe= inlined code)
 * are summed; recursion rows (fib'2) are skipped because the inclusive
 * cost of the outer row already contains them.  The time side is loaded
 * with inlined frames folded into their callers (see series.c), which is
 * how callgrind charges inlined code.  The prediction "time changes like
 * instructions" is the null hypothesis of the artifact test.
 */
#include "prof/analysis.h"
#include "prof/stats.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Events worth naming when time moved without instructions. */
static const char *const cg_events[AN_MAX_EVENTS] = {
	"Ir", "Dr", "Dw", "I1mr", "D1mr", "D1mw", "ILmr", "DLmr", "DLmw",
	"Bc", "Bcm", "Bi", "Bim", "sysCount", "sysTime", "sysCpuTime",
};

void an_cg_free(struct an_cg_side *cg)
{
	VEC_FREE(&cg->fn);
}

static struct an_ir *cg_fn(struct an_cg_side *cg, uint32_t fn)
{
	if (fn >= cg->fn.n) {
		VEC_GROW(&cg->fn, (size_t)fn + 1);
		memset(cg->fn.v + cg->fn.n, 0, (fn + 1 - cg->fn.n) * sizeof(*cg->fn.v));
		cg->fn.n = (size_t)fn + 1;
	}
	return &cg->fn.v[fn];
}

static void add_part(struct an_fnset *fs, struct an_cg_side *cg, const struct cg_profile *p,
		     const struct cg_part *part, bool head)
{
	int ev[AN_MAX_EVENTS];
	uint32_t *ids = cg_part_identities(&fs->ids, p, part, true);

	for (size_t e = 0; e < cg->nev; e++)
		ev[e] = cg_event_index(p, part, cg->events[e]);
	if (ev[0] >= 0)
		cg->total[head] += (double)cg_cost(part, part->totals)[ev[0]];
	for (size_t i = 0; i < part->fns.n; i++) {
		const struct cg_fn *f = &part->fns.v[i];
		if (ids[i] == PROF_NONE)
			continue;
		/* a clone joined by an_join_clones() stays joined in later parts */
		uint32_t id = ids[i] < fs->canon.n ? fs->canon.v[ids[i]] : ids[i];
		struct an_ir *ir = cg_fn(cg, id);
		const uint64_t *c = cg_cost(part, f->incl);
		double *dst = head ? ir->head : ir->base;
		for (size_t e = 0; e < cg->nev; e++)
			if (ev[e] >= 0)
				dst[e] += (double)c[ev[e]];
		if (head)
			ir->in_head = true;
		else
			ir->in_base = true;
	}
	free(ids);
}

int an_cg_add(struct an_fnset *fs, struct an_cg_side *cg, const struct cg_profile *p,
	      const char *benchmark, bool head)
{
	size_t used = 0;

	if (!cg->nev) {
		memcpy(cg->events, cg_events, sizeof(cg_events));
		cg->nev = AN_MAX_EVENTS;
	}
	if (benchmark) {
		const struct cg_part *part = cg_find_part(p, 0, benchmark);
		if (!part)
			return error("no part for benchmark '%s' in the %s callgrind profile "
				     "(see 'prof callgrind annotate' for the benchmarks in it)",
				     benchmark, head ? "head" : "base");
		add_part(fs, cg, p, part, head);
		return 0;
	}
	for (size_t i = 0; i < p->parts.n; i++) {
		const struct cg_part *part = p->parts.v[i];
		if (cg_part_empty(part) || cg_event_index(p, part, "Ir") < 0)
			continue;
		add_part(fs, cg, p, part, head);
		used++;
	}
	if (!used)
		return error("the %s callgrind profile has no part with Ir costs", head ? "head" : "base");
	return 0;
}

/* The callgrind row of fn: the same key, else the only row with its name. */
static const struct an_ir *find_ir(const struct an_fnset *fs, const struct an_cg_side *cg,
				   uint32_t fn)
{
	const struct an_ir *found = NULL;

	if (fn < cg->fn.n && cg->fn.v[fn].in_base && cg->fn.v[fn].in_head)
		return &cg->fn.v[fn];
	for (size_t i = 0; i < cg->fn.n; i++) {
		const struct prof_ident *a = &fs->ids.ids.v[i], *b = &fs->ids.ids.v[fn];
		if (i == fn || !cg->fn.v[i].in_base || !cg->fn.v[i].in_head ||
		    a->name != b->name || a->clone != b->clone)
			continue;
		if (found)
			return NULL;	/* the name alone is ambiguous */
		found = &cg->fn.v[i];
	}
	return found;
}

/* "D1mr +45%, DLmr +310%": the non-Ir events that moved beyond threshold. */
static void describe_moved(const struct an_cg_side *cg, const struct an_ir *ir,
			   double threshold, char *out, size_t size)
{
	size_t len = 0;

	out[0] = '\0';
	for (size_t e = 1; e < cg->nev && len + 32 < size; e++) {
		double b = ir->base[e], h = ir->head[e];
		if (b <= 0 && h <= 0)
			continue;
		double ch = b > 0 ? h / b - 1 : INFINITY;
		if (fabs(ch) <= MAX(threshold, 0.10) || fabs(h - b) < 100)
			continue;
		const char *sep = len ? ", " : "";
		if (isinf(ch))
			len += (size_t)snprintf(out + len, size - len, "%s%s new", sep, cg->events[e]);
		else
			len += (size_t)snprintf(out + len, size - len, "%s%s %+.0f%%", sep,
						cg->events[e], ch * 100);
	}
}

static enum an_verdict decide(const struct an_xrow *x, const struct an_opts *o,
			      double ir_threshold)
{
	const struct an_result *t = &x->time;
	bool ir_moved = x->has_ir && fabs(x->ir_change) > ir_threshold;
	bool time_moved = t->tested && t->q < o->alpha && (t->lo > 0 || t->hi < 0) &&
			  fabs(t->change) >= o->min_effect;
	bool time_flat = t->tested && t->lo >= -o->min_effect && t->hi <= o->min_effect;

	if (!t->tested || !x->has_ir)	/* no instructions to compare with */
		return AN_INCONCLUSIVE;
	if (ir_moved && time_moved && (t->change > 0) == (x->ir_change > 0))
		return AN_CONFIRMED;
	if (ir_moved && (x->ir_change < t->lo || x->ir_change > t->hi))
		return AN_INSTR_ONLY;
	if (!ir_moved && time_moved)
		return AN_TIME_ONLY;
	if (!ir_moved && time_flat)
		return AN_NO_CHANGE;
	return AN_INCONCLUSIVE;
}

/* Artifacts and real changes first, then by absolute time moved. */
static int xrow_cmp(const void *x, const void *y)
{
	static const int rank[] = {
		[AN_CONFIRMED] = 0, [AN_TIME_ONLY] = 1, [AN_INSTR_ONLY] = 2,
		[AN_REGRESSION] = 3, [AN_IMPROVEMENT] = 3, [AN_INCONCLUSIVE] = 4,
		[AN_NO_CHANGE] = 5,
	};
	const struct an_xrow *a = x, *b = y;
	int ra = rank[a->verdict] + (a->time.tested ? 0 : 10);
	int rb = rank[b->verdict] + (b->time.tested ? 0 : 10);
	if (ra != rb)
		return ra - rb;
	double da = fabs(a->time.head - a->time.base), db = fabs(b->time.head - b->time.base);
	return da < db ? 1 : da > db ? -1 : (a->fn > b->fn) - (a->fn < b->fn);
}

/*
 * q-values over the rows a verdict can be given for: tested, and with
 * instructions to compare.  Rows without Ir (kernel, code outside the
 * instrumented part) are inconclusive whatever their p, so they are not
 * part of the family of tests; counting them (hundreds of kernel
 * functions on a server) made 5+5 runs unable to confirm anything
 * (measured: lookup p 0.008, q 0.115 among all; a family of the rows with
 * Ir gives q = p x (family size / rank) as BH intends).
 */
static void family_qvalues(an_xrows *rows)
{
	double *p = xcalloc(rows->n + 1, sizeof(*p)), *q = xcalloc(rows->n + 1, sizeof(*q));
	size_t m = 0;

	for (size_t i = 0; i < rows->n; i++)
		if (rows->v[i].time.tested && rows->v[i].has_ir)
			p[m++] = rows->v[i].time.p;
	if (m)
		stats_bh_qvalues(p, m, q);
	m = 0;
	for (size_t i = 0; i < rows->n; i++)
		if (rows->v[i].time.tested && rows->v[i].has_ir)
			rows->v[i].time.q = q[m++];
	free(p);
	free(q);
}

int an_crosscheck(const struct an_fnset *fs, const struct an_cg_side *cg,
		  const struct an_side *base, const struct an_side *head,
		  const struct an_opts *o, double ir_threshold, an_xrows *out)
{
	an_results time = { 0 };
	struct an_opts io = *o;
	int ret;

	io.inclusive = true;
	if ((ret = an_compare_sides(fs, base, head, &io, &time)))
		return ret;
	size_t first = out->n;
	for (size_t i = 0; i < time.n; i++) {
		struct an_xrow x = { .fn = time.v[i].fn, .time = time.v[i] };
		const struct an_ir *ir = find_ir(fs, cg, x.fn);
		if (ir && ir->base[0] > 0) {
			x.has_ir = true;
			x.ir_base = ir->base[0];
			x.ir_head = ir->head[0];
			x.ir_change = x.ir_head / x.ir_base - 1;
		}
		VEC_PUSH(out, x);
	}
	VEC_FREE(&time);
	an_xrows mine = { out->v + first, out->n - first, 0 };
	family_qvalues(&mine);
	for (size_t i = first; i < out->n; i++) {
		struct an_xrow *x = &out->v[i];
		x->verdict = decide(x, o, ir_threshold);
		if (x->verdict == AN_TIME_ONLY)
			describe_moved(cg, find_ir(fs, cg, x->fn), ir_threshold, x->moved,
				       sizeof(x->moved));
		if (!x->has_ir)
			snprintf(x->moved, sizeof(x->moved), "not in callgrind (kernel, or outside "
				 "the instrumented part): instructions unknown");
		if (x->verdict != AN_INCONCLUSIVE || !x->has_ir)
			x->time.runs_needed = 0;
	}
	if (out->n > first)
		qsort(out->v + first, out->n - first, sizeof(*out->v), xrow_cmp);
	return 0;
}

int an_cg_load(struct an_fnset *fs, struct an_cg_side *cg, struct cg_profile *p,
	       const char *path, const char *benchmark, bool head)
{
	int ret = cg_load_file(p, path);
	return ret ? ret : an_cg_add(fs, cg, p, benchmark, head);
}

void an_parts_free(an_parts *parts)
{
	for (size_t i = 0; i < parts->n; i++)
		VEC_FREE(&parts->v[i].rows);
	VEC_FREE(parts);
}

/* The crosscheck of one benchmark: only the rows of its part's functions. */
static int crosscheck_part(struct an_fnset *fs, const struct cg_profile *cb,
			   const struct cg_profile *ch, const char *uri, const struct an_side *base,
			   const struct an_side *head, const struct an_opts *o, double ir_threshold,
			   an_xrows *out)
{
	struct an_cg_side cg = { 0 };
	an_xrows all = { 0 };
	int ret = an_cg_add(fs, &cg, cb, uri, false);

	if (!ret)
		ret = an_cg_add(fs, &cg, ch, uri, true);
	if (!ret)
		ret = an_crosscheck(fs, &cg, base, head, o, ir_threshold, &all);
	for (size_t i = 0; !ret && i < all.n; i++)
		if (all.v[i].has_ir)
			VEC_PUSH(out, all.v[i]);
	VEC_FREE(&all);
	an_cg_free(&cg);
	return ret;
}

int an_crosscheck_parts(struct an_fnset *fs, const struct cg_profile *cb,
			const struct cg_profile *ch, const struct an_side *base,
			const struct an_side *head, const struct an_opts *o, double ir_threshold,
			an_parts *out)
{
	for (size_t i = 0; i < cb->parts.n; i++) {
		const struct cg_part *part = cb->parts.v[i];
		const char *uri = strtab_get(&cb->strs, part->trigger);
		if (!*uri || cg_part_empty(part) || cg_event_index(cb, part, "Ir") < 0 ||
		    !cg_find_part(ch, 0, uri))
			continue;	/* unnamed, metadata, or not in the head file */
		struct an_part_rows pr = { .benchmark = uri };
		int ret = crosscheck_part(fs, cb, ch, uri, base, head, o, ir_threshold, &pr.rows);
		VEC_PUSH(out, pr);
		if (ret)
			return ret;
	}
	return 0;
}
