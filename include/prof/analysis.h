/*
 * analysis.h - comparing profiles: the per-function time of repeated runs
 * on two sides (base, head), its change with a confidence interval, a
 * Mann-Whitney p-value, Benjamini-Hochberg q-values and a verdict
 * (`prof diff`); and the join of those time changes with callgrind
 * instruction counts (`prof crosscheck`).
 *
 * Design notes / invariants:
 *  - Functions are keyed by identity (include/prof/identity.h: name without
 *    compiler hashes, the program / soname role, never a path) in one
 *    struct an_fnset shared by every input, so builds of different names
 *    and directories match.  Ids are dense and stable.  an_join_sides()
 *    then joins clones only one build has and counts the match rate.
 *  - A side holds one struct an_run per recording: per function its self
 *    and inclusive cost (seconds, or samples when the event has no period)
 *    and the sample counts behind them (for the Poisson noise floor).
 *    Inclusive counts every function once per stack (recursion-safe).
 *  - With fold_inlined, an inlined frame's samples are charged to its
 *    nearest non-inlined caller, as callgrind charges inlined code.
 *  - Noise model: the variance of a function's cost per run is the one
 *    observed across runs (it holds within-run sampling noise and
 *    run-to-run noise); with 2 runs it is floored at the Poisson variance
 *    of the sample count; with one run on a side the between-run part is
 *    unknown: Poisson + an assumed coefficient of variation (assumed_cv),
 *    and the result says so.  See src/analysis/compare.c.
 */
#ifndef PROF_ANALYSIS_H
#define PROF_ANALYSIS_H

#include "prof/model.h"
#include "prof/callgrind.h"
#include "prof/identity.h"
#include <stdio.h>

/* The functions of every input, keyed by identity (include/prof/identity.h):
 * the same function in base, head and the callgrind files gets one id. */
struct an_fnset {
	struct prof_idset ids;
	VEC(uint32_t) canon;	/* after an_join_clones: the id each id was joined to */
};
void an_fnset_init(struct an_fnset *fs);
void an_fnset_free(struct an_fnset *fs);
static inline size_t an_fn_count(const struct an_fnset *fs)
{
	return fs->ids.ids.n;
}
/* Id of a function by name (and module, a path or soname, when non-NULL);
 * PROF_NONE if absent or, without module, ambiguous. */
uint32_t an_fn_find(const struct an_fnset *fs, const char *name, const char *module);
static inline const char *an_fn_name(const struct an_fnset *fs, uint32_t id)
{
	return prof_ident_name(&fs->ids, id);
}
static inline const char *an_fn_module(const struct an_fnset *fs, uint32_t id)
{
	return prof_ident_module(&fs->ids, id);
}
/* The source file that tells two same-name functions apart, "" if none. */
static inline const char *an_fn_file(const struct an_fnset *fs, uint32_t id)
{
	return prof_ident_file(&fs->ids, id);
}

struct an_cost {
	double self, incl;		/* seconds (or samples) in this run */
	double self_n, incl_n;		/* samples behind them */
};
struct an_run {
	VEC(struct an_cost) fn;		/* by function id; may be shorter than fnset */
	double total, total_n;		/* whole-run cost and samples */
	const char *unit;		/* "s" or "samples" */
};
struct an_side {
	VEC(struct an_run) runs;
};
void an_side_free(struct an_side *s);
/* The cost of fn in a run, the vector grown with zeros as needed. */
struct an_cost *an_run_cost(struct an_run *r, uint32_t fn);

struct an_load_opts {
	enum prof_view_metric metric;	/* cpu (default), wall, io-wait... */
	bool fold_inlined;		/* crosscheck: inlined frames -> caller */
};
/* Adds one recording as a run of side.  0 or -EINVAL (nothing to weigh). */
int an_side_add_profile(struct an_fnset *fs, struct an_side *side,
			const struct prof_profile *p, const struct an_load_opts *o);

/* --- comparing one function -------------------------------------------------- */
enum an_verdict {
	AN_NO_CHANGE, AN_REGRESSION, AN_IMPROVEMENT, AN_INCONCLUSIVE,
	AN_CONFIRMED, AN_INSTR_ONLY, AN_TIME_ONLY,
};
const char *an_verdict_name(enum an_verdict v);

enum an_normalize { AN_NORM_NONE, AN_NORM_TOTAL, AN_NORM_FUNCTION };

struct an_opts {
	double alpha;		/* significance level for q-values and CIs (0.05) */
	double min_effect;	/* fraction: smaller changes are not reported (0.03) */
	double assumed_cv;	/* run-to-run CV assumed with 1 run per side (0.25) */
	double min_samples;	/* mean samples per run below which a function is not tested */
	bool inclusive;		/* compare inclusive (else self) costs */
	enum an_normalize normalize;
	uint32_t norm_fn;	/* AN_NORM_FUNCTION: divide by its inclusive cost */
	uint64_t seed;
};
void an_opts_init(struct an_opts *o);

struct an_result {
	uint32_t fn;
	bool tested;		/* enough samples to be in the BH family */
	bool noise_assumed;	/* a side had 1 run: between-run noise assumed */
	size_t na, nb;
	double base, head;	/* mean cost per run */
	double base_n, head_n;	/* mean samples per run */
	double change, lo, hi;	/* fractions: head/base - 1 and its CI */
	double sd_a, sd_b;	/* per-run sd of the log cost, both noise sources */
	double p, q;
	const char *p_method;	/* "mann-whitney" or "normal (assumed cv)" */
	enum an_verdict verdict;
	uint64_t runs_needed;	/* per side, for inconclusive verdicts */
};

/*
 * Compares the per-run values a (base) and b (head) of one function.
 * count_a/count_b are the mean samples per run behind them (Poisson floor).
 * Fills everything but q and verdict.  0 or -EINVAL (na or nb == 0).
 */
int an_compare_values(const double *a, size_t na, const double *b, size_t nb,
		      double count_a, double count_b, const struct an_opts *o,
		      struct an_result *r);
/* Verdict of a compared function once q is known (diff verdicts). */
void an_decide(struct an_result *r, const struct an_opts *o);

/* Every function of the two sides, compared, with q-values and verdicts,
 * sorted by verdict severity then |change|.  0 or -EINVAL (a side empty or
 * the normalizing function absent). */
typedef VEC(struct an_result) an_results;
int an_compare_sides(const struct an_fnset *fs, const struct an_side *base,
		     const struct an_side *head, const struct an_opts *o,
		     an_results *out);

/* Student t quantile (two-sided critical values: an_t_quantile(0.975, df)). */
double an_t_quantile(double p, double df);

/* --- crosscheck ---------------------------------------------------------------- */
#define AN_MAX_EVENTS 16
struct an_ir {			/* one function on the callgrind side */
	double base[AN_MAX_EVENTS], head[AN_MAX_EVENTS];	/* inclusive */
	bool in_base, in_head;
};
struct an_cg_side {
	const char *events[AN_MAX_EVENTS];	/* names (static storage) */
	size_t nev;
	VEC(struct an_ir) fn;	/* by an_fnset id */
	double total[2];	/* Ir of the parts used: base, head */
};
/* Adds the inclusive costs of every function of a callgrind profile (the
 * part whose trigger is benchmark, or all non-empty parts summed) to side
 * cg as base (head = false) or head.  0 or -EINVAL after an error line. */
int an_cg_add(struct an_fnset *fs, struct an_cg_side *cg, const struct cg_profile *p,
	      const char *benchmark, bool head);
void an_cg_free(struct an_cg_side *cg);

struct an_xrow {
	uint32_t fn;
	bool has_ir;
	double ir_base, ir_head, ir_change;	/* Ir, inclusive */
	struct an_result time;			/* inclusive time */
	enum an_verdict verdict;
	char moved[160];			/* events that moved: "D1mr +45%, DLmr +300%" */
};
typedef VEC(struct an_xrow) an_xrows;
/* Joins the callgrind side with the time side (inclusive costs, inlined
 * frames folded) and decides a verdict per function.  ir_threshold is a
 * fraction.  0 or -EINVAL. */
int an_crosscheck(const struct an_fnset *fs, const struct an_cg_side *cg,
		  const struct an_side *base, const struct an_side *head,
		  const struct an_opts *o, double ir_threshold, an_xrows *out);

/* Loads a callgrind file into p (owned by the caller, cg_profile_init'ed)
 * and adds it with an_cg_add.  0 or -errno / -EINVAL after an error line. */
int an_cg_load(struct an_fnset *fs, struct an_cg_side *cg, struct cg_profile *p,
	       const char *path, const char *benchmark, bool head);

/* The rows of one benchmark (callgrind part, by its trigger URI). */
struct an_part_rows {
	const char *benchmark;		/* points into the base cg_profile */
	an_xrows rows;			/* only functions of that part */
};
typedef VEC(struct an_part_rows) an_parts;
/* Crosschecks every benchmark of the base callgrind file that the head
 * file has too, against the same recordings: what `--format=json` groups
 * per part when no --benchmark is given.  0 or -EINVAL. */
int an_crosscheck_parts(struct an_fnset *fs, const struct cg_profile *cb,
			const struct cg_profile *ch, const struct an_side *base,
			const struct an_side *head, const struct an_opts *o, double ir_threshold,
			an_parts *out);
void an_parts_free(an_parts *parts);

/* --- the join of the inputs (join.c) ------------------------------------------ */
#define AN_JOIN_SHARE 0.001	/* functions with >= 0.1% of a side's cost are counted */
#define AN_JOIN_WARN 0.80	/* under 80% matched: warn with the unmatched names */
struct an_join {
	const char *what;		/* "callgrind functions with >= 0.1% of Ir matched ..." */
	size_t total, matched;
	VEC(uint32_t) unmatched;	/* function ids, heaviest first */
	VEC(double) weight;		/* their share */
};
void an_join_free(struct an_join *j);
/* Callgrind functions with >= AN_JOIN_SHARE of Ir (base or head) whose Ir
 * share would give min_samples a run, found in any recording. */
void an_join_callgrind(const struct an_fnset *fs, const struct an_cg_side *cg,
		       const struct an_side *base, const struct an_side *head,
		       double min_samples, struct an_join *out);
double an_join_rate(const struct an_join *j);	/* matched / total, 1 when empty */
/* What `prof diff` does once both sides are loaded: joins clones, counts
 * base<->head into out and checks it (an_join_check's result). */
int an_join_diff(struct an_fnset *fs, struct an_side *base, struct an_side *head,
		 double min_samples, struct an_join *out);
/* The same for `prof crosscheck`: out[0] callgrind->recordings, out[1] base<->head. */
int an_join_crosscheck(struct an_fnset *fs, struct an_cg_side *cg, struct an_side *base,
		       struct an_side *head, double min_samples, struct an_join out[2]);

/* --- output (render.c) --------------------------------------------------------- */
struct an_report_info {
	const char *metric, *unit;
	size_t na, nb;
	size_t untested;	/* functions under min_samples */
	bool all;		/* text: also no-change rows */
	const struct an_join *joins[2];	/* match rates to print (NULL: none) */
	const an_parts *parts;		/* crosscheck json: rows per benchmark (or NULL) */
};
int an_diff_text(FILE *f, const struct an_fnset *fs, const an_results *r,
		 const struct an_opts *o, const struct an_report_info *info);
int an_diff_json(FILE *f, const struct an_fnset *fs, const an_results *r,
		 const struct an_opts *o, const struct an_report_info *info);
int an_crosscheck_text(FILE *f, const struct an_fnset *fs, const an_xrows *x,
		       const struct an_opts *o, const struct an_report_info *info);
int an_crosscheck_json(FILE *f, const struct an_fnset *fs, const an_xrows *x,
		       const struct an_opts *o, const struct an_report_info *info);

/* --- command line shared by diff and crosscheck (cli.c) ------------------------ */
typedef VEC(char *) an_paths;
struct an_cli {
	an_paths base, head, positional;
	an_paths map_modules, map_functions;	/* --map-module / --map-function OLD=NEW */
	struct an_opts o;
	enum prof_view_metric metric;
	double ir_threshold;		/* crosscheck --threshold, fraction */
	const char *normalize, *output, *cg_base, *cg_head, *benchmark;
	bool json, all;
};
/* Parses argv (argv[0] is the command name).  0, OPT_HELP (-h/--help) or
 * -EINVAL after an error line. */
int an_cli_parse(struct an_cli *c, int argc, char **argv, bool crosscheck);
void an_cli_free(struct an_cli *c);
/* The report header both commands print. */
struct an_report_info an_cli_report_info(const struct an_cli *c, const struct an_side *base,
					 const struct an_side *head);
/* An empty function set with the --map-module / --map-function overrides. */
void an_cli_fnset_init(const struct an_cli *c, struct an_fnset *fs);
/* Reads each prof.data file as one run of side.  0 or -errno after an error line. */
int an_load_side(struct an_fnset *fs, struct an_side *side, char **paths, size_t n,
		 const struct an_load_opts *o);

/* --- prof stat: metric columns and the comparison with a baseline (stat.c) ----- */
struct res_usage;
struct prof_perf_event_desc;
#define AN_STAT_MAX_METRICS 32		/* 13 built-in + up to RES_MAX_COUNTERS (16) */
struct an_stat_metric {
	const char *name, *unit;	/* "wall_s", "s" */
	bool available;
	const char *why_not;		/* when !available */
	const char *source;		/* how it was measured, when there are several ways */
	VEC(double) runs;		/* one value per measured run */
};
struct an_stat_cmp {
	const char *name, *unit;
	double base_median, median, change, lo, hi, p, q;	/* change, lo, hi: fractions */
	size_t n_base, n_new;
	enum an_verdict verdict;	/* regression, improvement, inconclusive or no-change */
	uint64_t runs_needed;		/* per side for 80% power, 0 if unknown */
	bool gating;			/* in --gate: counts for the exit status */
};
struct an_stat {
	struct an_stat_metric m[AN_STAT_MAX_METRICS];
	size_t nm;
	struct an_stat_cmp c[AN_STAT_MAX_METRICS];
	size_t nc;			/* 0 without a baseline */
};
struct an_stat_opts {
	double alpha, threshold;	/* threshold: fraction (0.02) */
	const char *gate;		/* comma list of metric names, or "all" */
};
/* The built-in metrics then one per counter; runq wait unavailable without
 * delayacct, io wait without io_wait_on (delayacct or sched_switch samples). */
void an_stat_init(struct an_stat *st, const struct prof_perf_event_desc *const *counters,
		  unsigned n_counters, bool delayacct, bool io_wait_on);
void an_stat_add_run(struct an_stat *st, const struct res_usage *u);
void an_stat_free(struct an_stat *st);
/* Outliers by Tukey's far-out fences (stats_outliers(): none under 10 runs)
 * that are also more than 1% from the median (a near-constant metric's tiny
 * spread makes a 0.1% wobble look wild);
 * flags has m->runs.n entries.  Returns how many. */
size_t an_stat_outliers(const struct an_stat_metric *m, bool *flags);
/* Compares every available metric with its runs in a saved JSON report:
 * fills st->c.  0, or -EINVAL when the JSON is not a prof stat report. */
int an_stat_compare(struct an_stat *st, const char *baseline_json, const struct an_stat_opts *o);
/* Gating metrics whose verdict is AN_REGRESSION. */
unsigned an_stat_regressions(const struct an_stat *st);

#endif
