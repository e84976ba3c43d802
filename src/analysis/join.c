/*
 * join.c - how well the inputs of `prof diff` and `prof crosscheck` were
 * joined, function by function, and the one join identity cannot do alone:
 * a clone (walk.constprop.0) that only one build has.
 *
 * Why a match rate: when base and head (or callgrind and the recordings)
 * do not name their functions alike, every function is "gone" on one side
 * and "new" on the other, and every verdict turns into "inconclusive"
 * without any error.  So both commands count how many of the functions
 * that matter (>= AN_JOIN_SHARE of a side's cost) were found on the other
 * side, print it, warn with the unmatched names under AN_JOIN_WARN, and
 * refuse to go on (exit 2) when nothing at all matched.
 */
#include "prof/analysis.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

void an_join_free(struct an_join *j)
{
	VEC_FREE(&j->unmatched);
	VEC_FREE(&j->weight);
}

/* Bits of present[fn]: 1 the base side has fn, 2 the head side has it. */
static void side_presence(const struct an_side *s, uint8_t bit, uint8_t *present)
{
	for (size_t r = 0; r < s->runs.n; r++)
		for (size_t fn = 0; fn < s->runs.v[r].fn.n; fn++)
			if (s->runs.v[r].fn.v[fn].incl > 0)
				present[fn] |= bit;
}

static void move_cost(struct an_side *s, uint32_t from, uint32_t to)
{
	for (size_t r = 0; r < s->runs.n; r++) {
		struct an_run *run = &s->runs.v[r];
		if (from >= run->fn.n)
			continue;
		struct an_cost *b = an_run_cost(run, to), *a = &run->fn.v[from];
		b->self += a->self;
		b->incl += a->incl;
		b->self_n += a->self_n;
		b->incl_n += a->incl_n;
		memset(a, 0, sizeof(*a));
	}
}

static void move_ir(struct an_cg_side *cg, uint32_t from, uint32_t to)
{
	if (from >= cg->fn.n || to >= cg->fn.n)
		return;
	struct an_ir *a = &cg->fn.v[from], *b = &cg->fn.v[to];
	for (size_t e = 0; e < AN_MAX_EVENTS; e++) {
		b->base[e] += a->base[e];
		b->head[e] += a->head[e];
	}
	b->in_base |= a->in_base;
	b->in_head |= a->in_head;
	memset(a, 0, sizeof(*a));
}

/* Joins clones only one build has (base walk.constprop.0, head walk) and
 * moves their costs to one id.  Call once every input is loaded; cg may be NULL. */
static void an_join_clones(struct an_fnset *fs, struct an_side *base, struct an_side *head,
		    struct an_cg_side *cg)
{
	size_t n = an_fn_count(fs);
	uint8_t *present = xcalloc(n + 1, 1);
	uint32_t *canon = xcalloc(n + 1, sizeof(*canon));

	side_presence(base, 1, present);
	side_presence(head, 2, present);
	for (size_t fn = 0; cg && fn < cg->fn.n; fn++)
		present[fn] |= (cg->fn.v[fn].in_base ? 1 : 0) | (cg->fn.v[fn].in_head ? 2 : 0);
	prof_idset_merge_clones(&fs->ids, present, canon);
	VEC_FREE(&fs->canon);
	for (uint32_t fn = 0; fn < n; fn++)
		VEC_PUSH(&fs->canon, canon[fn]);	/* for callgrind parts added later */
	for (uint32_t fn = 0; fn < n; fn++) {
		if (canon[fn] == fn)
			continue;
		/* one side's clone: never both in one run, so sums are exact */
		move_cost(base, fn, canon[fn]);
		move_cost(head, fn, canon[fn]);
		if (cg)
			move_ir(cg, fn, canon[fn]);
	}
	free(present);
	free(canon);
}

/* Mean share of fn's inclusive cost in the runs of a side, and the mean
 * samples per run behind it (0 for metrics without sample counts). */
static double side_share(const struct an_side *s, uint32_t fn, double *samples)
{
	double sum = 0, n = 0;

	for (size_t r = 0; r < s->runs.n; r++) {
		const struct an_run *run = &s->runs.v[r];
		if (fn < run->fn.n && run->total > 0) {
			sum += run->fn.v[fn].incl / run->total;
			n += run->fn.v[fn].incl_n;
		}
	}
	*samples = s->runs.n ? n / (double)s->runs.n : 0;
	return s->runs.n ? sum / (double)s->runs.n : 0;
}

/* Would `runs` runs see a function sampled `per_run` times a run?  Under 3
 * expected samples, a Poisson miss is too likely (> 5%) to call it unmatched.
 * Time metrics without counts (wall, off-cpu) always would. */
static bool visible(double per_run, double runs, bool counted)
{
	return !counted || per_run * runs >= 3;
}

static bool side_counted(const struct an_side *s)
{
	return s->runs.n && s->runs.v[0].total_n > 0;
}

static bool side_has(const struct an_side *s, uint32_t fn)
{
	for (size_t r = 0; r < s->runs.n; r++)
		if (fn < s->runs.v[r].fn.n && s->runs.v[r].fn.v[fn].incl > 0)
			return true;
	return false;
}

static void count(struct an_join *j, uint32_t fn, double weight, bool matched)
{
	j->total++;
	if (matched) {
		j->matched++;
		return;
	}
	VEC_PUSH(&j->unmatched, fn);
	VEC_PUSH(&j->weight, weight);
}

/* Unmatched functions, heaviest first. */
static void sort_unmatched(struct an_join *j)
{
	for (size_t i = 1; i < j->unmatched.n; i++)
		for (size_t k = i; k > 0 && j->weight.v[k] > j->weight.v[k - 1]; k--) {
			double w = j->weight.v[k];
			uint32_t f = j->unmatched.v[k];
			j->weight.v[k] = j->weight.v[k - 1];
			j->unmatched.v[k] = j->unmatched.v[k - 1];
			j->weight.v[k - 1] = w;
			j->unmatched.v[k - 1] = f;
		}
}

/* One pass of an_join_sides: functions with at least `floor` samples a run
 * on one side (and >= AN_JOIN_SHARE of its cost) that the other side has. */
static void join_sides_over(const struct an_fnset *fs, const struct an_side *base,
			    const struct an_side *head, double floor, struct an_join *out)
{
	bool counted = side_counted(base) && side_counted(head);

	for (uint32_t fn = 0; fn < an_fn_count(fs); fn++) {
		double nb, nh, sb = side_share(base, fn, &nb), sh = side_share(head, fn, &nh);
		if (sb >= AN_JOIN_SHARE && visible(nb, (double)head->runs.n, counted) &&
		    (!counted || nb >= floor))
			count(out, fn, sb, side_has(head, fn));
		if (sh >= AN_JOIN_SHARE && visible(nh, (double)base->runs.n, counted) &&
		    (!counted || nh >= floor))
			count(out, fn, sh, side_has(base, fn));
	}
}

/*
 * Which functions count: those a comparison would test (min_samples a run),
 * as their verdicts are what an unmatched name spoils.  Counting every
 * function three samples could show made the rate follow noise: one kernel
 * path (munmap -> ... -> flush_tlb_mm_range, 20 frames, 7 samples in five
 * runs of one build and none in five of the other) took a renamed pair
 * from 100% to 76%.  When no function has that many samples (short
 * recordings), the Poisson floor alone decides, so a renamed build is still
 * caught.
 */
/* base<->head: functions with >= AN_JOIN_SHARE of one side's time and
 * min_samples a run (the ones a comparison tests) that the other side has. */
static void an_join_sides(const struct an_fnset *fs, const struct an_side *base,
		   const struct an_side *head, double min_samples, struct an_join *out)
{
	memset(out, 0, sizeof(*out));
	out->what = "functions a comparison tests (--min-samples) on one side (base<->head) "
		    "found on the other";
	join_sides_over(fs, base, head, min_samples, out);
	if (!out->total) {
		out->what = "functions with >= 0.1% of the time on one side (base<->head) found "
			    "on the other";
		join_sides_over(fs, base, head, 0, out);
	}
	sort_unmatched(out);
}

/* Names no recording can have: valgrind's "(below main)" (whatever calls
 * main) and "0x000000000001ab70" (code without a symbol). */
static bool joinable_name(const char *name)
{
	return strcmp(name, "(below main)") && strncmp(name, "0x", 2);
}

/* One pass of an_join_callgrind: callgrind functions with >= AN_JOIN_SHARE
 * of Ir that the recordings would give at least `floor` samples a run (3 in
 * all when floor is 0), were their time share their Ir share. */
static void join_callgrind_over(const struct an_fnset *fs, const struct an_cg_side *cg,
				const struct an_side *base, const struct an_side *head,
				double floor, struct an_join *out)
{
	/* samples a function with all of Ir would get in all the recordings */
	double all = 0;
	size_t runs = base->runs.n + head->runs.n;
	bool counted = side_counted(base) && side_counted(head);

	for (size_t r = 0; r < base->runs.n; r++)
		all += base->runs.v[r].total_n;
	for (size_t r = 0; r < head->runs.n; r++)
		all += head->runs.v[r].total_n;
	for (uint32_t fn = 0; fn < cg->fn.n; fn++) {
		const struct an_ir *ir = &cg->fn.v[fn];
		double share = 0;
		if (cg->total[0] > 0)
			share = ir->base[0] / cg->total[0];
		if (cg->total[1] > 0 && ir->head[0] / cg->total[1] > share)
			share = ir->head[0] / cg->total[1];
		if (share < AN_JOIN_SHARE || !visible(share * all, 1, counted) ||
		    (counted && runs && share * all / (double)runs < floor) ||
		    !joinable_name(an_fn_name(fs, fn)))
			continue;
		count(out, fn, share, side_has(base, fn) || side_has(head, fn));
	}
}

/*
 * As an_join_sides: the callgrind functions that count are those whose Ir
 * share would give a tested comparison (min_samples a run).  A benchmark's
 * mix is not production's: __vfprintf_internal, 0.1-1% of the benchmark's
 * Ir, had 0 or 1 sample in ten recordings of the server under load, and
 * took a correct join from 100% to 71% in 1 of 6 runs.  When no function
 * is that heavy (short recordings), the 0.1% and Poisson floors decide.
 */
void an_join_callgrind(const struct an_fnset *fs, const struct an_cg_side *cg,
		       const struct an_side *base, const struct an_side *head,
		       double min_samples, struct an_join *out)
{
	memset(out, 0, sizeof(*out));
	out->what = "callgrind functions a comparison tests (Ir share x samples >= "
		    "--min-samples a run) matched sampled functions";
	join_callgrind_over(fs, cg, base, head, min_samples, out);
	if (!out->total) {
		out->what = "callgrind functions with >= 0.1% of Ir matched sampled functions";
		join_callgrind_over(fs, cg, base, head, 0, out);
	}
	sort_unmatched(out);
}

double an_join_rate(const struct an_join *j)
{
	return j->total ? (double)j->matched / (double)j->total : 1;
}

/* Under AN_JOIN_WARN: a warning naming the unmatched functions; nothing
 * matched at all: an error line and -ENOENT (the commands exit 2). */
static int an_join_check(const struct an_fnset *fs, const struct an_join *j)
{
	struct strbuf names = STRBUF_INIT;

	if (an_join_rate(j) >= AN_JOIN_WARN)
		return 0;
	for (size_t i = 0; i < j->unmatched.n && i < 8; i++)
		sb_addf(&names, "%s%s", i ? ", " : "", an_fn_name(fs, j->unmatched.v[i]));
	if (j->unmatched.n > 8)
		sb_addf(&names, " and %zu more", j->unmatched.n - 8);
	if (!j->matched) {
		error("nothing joined: 0 of %zu %s (unmatched: %s); are these builds of the same "
		      "program? --map-module OLD=NEW and --map-function OLD=NEW join what names "
		      "cannot", j->total, j->what, sb_str(&names));
		sb_release(&names);
		return -ENOENT;
	}
	warning("only %zu of %zu %s (%.0f%%): verdicts of the others are meaningless; "
		"unmatched: %s; --map-module OLD=NEW and --map-function OLD=NEW join what names "
		"cannot", j->matched, j->total, j->what, 100 * an_join_rate(j), sb_str(&names));
	sb_release(&names);
	return 0;
}

int an_join_diff(struct an_fnset *fs, struct an_side *base, struct an_side *head,
		 double min_samples, struct an_join *out)
{
	an_join_clones(fs, base, head, NULL);
	an_join_sides(fs, base, head, min_samples, out);
	return an_join_check(fs, out);
}

int an_join_crosscheck(struct an_fnset *fs, struct an_cg_side *cg, struct an_side *base,
		       struct an_side *head, double min_samples, struct an_join out[2])
{
	an_join_clones(fs, base, head, cg);
	an_join_callgrind(fs, cg, base, head, min_samples, &out[0]);
	an_join_sides(fs, base, head, min_samples, &out[1]);
	int ret = an_join_check(fs, &out[0]);
	return ret ? ret : an_join_check(fs, &out[1]);
}
