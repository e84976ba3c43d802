/*
 * compare.c - is a function's cost different between base and head?  For
 * every function: the change of its mean cost per run with a confidence
 * interval, a Mann-Whitney p-value, Benjamini-Hochberg q-values across all
 * tested functions, a verdict, and for unclear cases the runs that would
 * settle it.
 *
 * Method (and why):
 *  - The estimate is the ratio of mean costs per run.  Means, not medians:
 *    sample counts are Poisson, for which the mean is the efficient
 *    estimator, and with 5 runs a median CI is too coarse to be useful.
 *  - Per-run variance: with >= 3 runs, the variance observed across runs,
 *    which holds both noise sources (sampling within a run and run-to-run).
 *    With 2 runs that estimate is too shaky, so it is floored at the
 *    Poisson variance of the sample count.  With 1 run on a side, run-to-run
 *    noise is unknown: Poisson + an assumed CV (25%).  Why no Poisson floor
 *    from 3 runs on: cpu-clock sampling is a periodic timer, i.e. systematic
 *    sampling, so a contiguous phase of work gets its samples far more
 *    precisely than Poisson says (measured here: 222, 226, 223, 219, 223
 *    samples in 5 runs, CV 1.2%, where Poisson predicts 6.7%); the floor
 *    would bury every real change of 5-10% under made-up noise.
 *    The assumed CV is a worst case, not a typical value: measured over 20
 *    runs here, a CPU-bound function varies by 0.8% (CV) but a memory-bound
 *    pointer chase by 27% (212 to 430 samples); with 5% assumed, one run per
 *    side flagged 32% of memory-bound A/A pairs.
 *  - CI: Welch t on the log ratio (delta method), Welch-Satterthwaite df,
 *    so few runs give honestly wide intervals.
 *  - p: two-sided Mann-Whitney U over the per-run costs (exact for small
 *    untied samples); it assumes nothing about the run-to-run distribution.
 *    With 1 run on a side a rank test cannot work, so p comes from the
 *    normal approximation with the assumed noise (and says so).
 *  - q: Benjamini-Hochberg across the tested functions (those with enough
 *    samples: filtering on the pooled size is independent of the test
 *    under the null, so it keeps the FDR guarantee and adds power).
 *  - regression: q < alpha, the CI excludes 0 and the change is at least
 *    min_effect; no-change: the CI lies inside +-min_effect; otherwise
 *    inconclusive with a normal-approximation "runs needed" at 80% power.
 */
#include "prof/analysis.h"
#include "prof/stats.h"
#include <errno.h>
#include <math.h>
#include <string.h>

static const char *const verdict_names[] = {
	[AN_NO_CHANGE] = "no-change",
	[AN_REGRESSION] = "regression",
	[AN_IMPROVEMENT] = "improvement",
	[AN_INCONCLUSIVE] = "inconclusive",
	[AN_CONFIRMED] = "confirmed",
	[AN_INSTR_ONLY] = "instructions-only",
	[AN_TIME_ONLY] = "time-only",
};

const char *an_verdict_name(enum an_verdict v)
{
	return (unsigned)v < ARRAY_SIZE(verdict_names) ? verdict_names[v] : "?";
}

void an_opts_init(struct an_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->alpha = 0.05;
	o->min_effect = 0.03;
	o->assumed_cv = 0.25;	/* memory-bound code here: 27% */
	o->min_samples = 20;
	o->norm_fn = PROF_NONE;
	o->seed = 42;
}

/*
 * Student t quantile: exact for df 1 and 2, otherwise the Cornish-Fisher
 * expansion around the normal quantile (Abramowitz & Stegun 26.7.5), good
 * to ~0.1% for df >= 3 at the usual levels.
 */
double an_t_quantile(double p, double df)
{
	if (!(df > 0) || df > 1e6)
		return stats_norm_quantile(p);
	if (df < 1.5)
		return tan(M_PI * (p - 0.5));
	if (df < 2.5) {
		double a = 4 * p * (1 - p);
		return (p < 0.5 ? -1 : 1) * sqrt(2 / a - 2);
	}
	double z = stats_norm_quantile(p), z2 = z * z;
	double g1 = z * (z2 + 1) / 4;
	double g2 = z * ((5 * z2 + 16) * z2 + 3) / 96;
	double g3 = z * (((3 * z2 + 19) * z2 + 17) * z2 - 15) / 384;
	double g4 = z * ((((79 * z2 + 776) * z2 + 1482) * z2 - 1920) * z2 - 945) / 92160;
	return z + g1 / df + g2 / (df * df) + g3 / (df * df * df) + g4 / (df * df * df * df);
}

/* Per-run variance of a side: observed, Poisson-floored, or assumed. */
static double side_variance(const double *v, size_t n, double mean, double count,
			    const struct an_opts *o)
{
	double poisson = count > 0 ? mean * mean / count : 0;

	if (n < 2)
		return poisson + (o->assumed_cv * mean) * (o->assumed_cv * mean);
	double sd = stats_stddev(v, n);
	return n < 3 ? MAX(sd * sd, poisson) : sd * sd;
}

int an_compare_values(const double *a, size_t na, const double *b, size_t nb,
		      double count_a, double count_b, const struct an_opts *o,
		      struct an_result *r)
{
	if (!na || !nb)
		return -EINVAL;
	r->na = na;
	r->nb = nb;
	r->base = stats_mean(a, na);
	r->head = stats_mean(b, nb);
	r->base_n = count_a;
	r->head_n = count_b;
	r->noise_assumed = na < 2 || nb < 2;

	/* half a sample of continuity when a side never saw the function */
	double ma = r->base, mb = r->head;
	if (ma <= 0 && mb <= 0) {
		r->change = r->lo = r->hi = 0;
		r->p = 1;
		r->p_method = "none";
		return 0;
	}
	if (ma <= 0)
		ma = 0.5 * mb / MAX(count_b, 1.0), count_a = 0.5;
	if (mb <= 0)
		mb = 0.5 * ma / MAX(count_a, 1.0), count_b = 0.5;

	double va = side_variance(a, na, ma, count_a, o);
	double vb = side_variance(b, nb, mb, count_b, o);
	double ua = va / ((double)na * ma * ma), ub = vb / ((double)nb * mb * mb);
	double se = sqrt(ua + ub), df = 1e9;
	if (na >= 2 && nb >= 2 && ua + ub > 0)
		df = (ua + ub) * (ua + ub) / (ua * ua / (double)(na - 1) + ub * ub / (double)(nb - 1));
	double t = an_t_quantile(1 - o->alpha / 2, df);
	double lr = log(mb / ma);

	r->change = mb / ma - 1;
	r->lo = exp(lr - t * se) - 1;
	r->hi = exp(lr + t * se) - 1;
	r->sd_a = sqrt(va) / ma;
	r->sd_b = sqrt(vb) / mb;
	if (!r->noise_assumed) {
		struct stats_mwu u;
		stats_mann_whitney(a, na, b, nb, &u);
		r->p = u.p;
		r->p_method = "mann-whitney";
	} else {
		r->p = se > 0 ? 2 * (1 - stats_norm_cdf(fabs(lr) / se)) : 1;
		r->p_method = "normal (assumed cv)";
	}
	double effect = MAX(fabs(lr), log1p(o->min_effect));
	r->runs_needed = stats_runs_needed(effect, r->sd_a, r->sd_b, 1 - o->alpha, 0.8);
	return 0;
}

void an_decide(struct an_result *r, const struct an_opts *o)
{
	bool sig = r->tested && r->q < o->alpha;

	if (sig && r->lo > 0 && r->change >= o->min_effect)
		r->verdict = AN_REGRESSION;
	else if (sig && r->hi < 0 && r->change <= -o->min_effect)
		r->verdict = AN_IMPROVEMENT;
	else if (r->tested && r->lo >= -o->min_effect && r->hi <= o->min_effect)
		r->verdict = AN_NO_CHANGE;
	else
		r->verdict = AN_INCONCLUSIVE;
	if (r->verdict != AN_INCONCLUSIVE)
		r->runs_needed = 0;
	else if (r->runs_needed && r->runs_needed <= MIN(r->na, r->nb))
		r->runs_needed = MIN(r->na, r->nb) + 1;	/* "more", never fewer */
	/* Mann-Whitney cannot reach p < 0.05 with fewer than 4+4 runs, and
	 * after BH across several functions rarely with fewer than 5+5 */
	if (r->verdict == AN_INCONCLUSIVE && r->runs_needed && r->runs_needed < 5)
		r->runs_needed = 5;
}

/* Normalizer of one run: 1, its total, or a function's inclusive cost. */
static double run_norm(const struct an_run *run, const struct an_opts *o)
{
	if (o->normalize == AN_NORM_TOTAL)
		return run->total;
	if (o->normalize == AN_NORM_FUNCTION)
		return o->norm_fn < run->fn.n ? run->fn.v[o->norm_fn].incl : 0;
	return 1;
}

/* Values of fn per run of a side (normalized) and the mean sample count. */
static int side_values(const struct an_side *s, uint32_t fn, const struct an_opts *o,
		       double *v, double *count)
{
	double n = 0;

	for (size_t i = 0; i < s->runs.n; i++) {
		const struct an_run *run = &s->runs.v[i];
		const struct an_cost *c = fn < run->fn.n ? &run->fn.v[fn] : NULL;
		double norm = run_norm(run, o);
		if (!(norm > 0))
			return -EINVAL;
		v[i] = c ? (o->inclusive ? c->incl : c->self) / norm : 0;
		n += c ? (o->inclusive ? c->incl_n : c->self_n) : 0;
	}
	*count = n / (double)s->runs.n;
	return 0;
}

static bool is_tested(const struct an_result *r, const struct an_side *base,
		      const struct an_opts *o)
{
	if (r->base_n > 0 || r->head_n > 0)
		return (r->base_n + r->head_n) / 2 >= o->min_samples;
	/* time metrics have no sample counts: one "sample" per millisecond */
	bool seconds = base->runs.n && !strcmp(base->runs.v[0].unit, "s");
	return seconds && o->normalize == AN_NORM_NONE &&
	       (r->base + r->head) / 2 >= o->min_samples * 1e-3;
}

static int verdict_rank(enum an_verdict v)
{
	static const int rank[] = {
		[AN_REGRESSION] = 0, [AN_CONFIRMED] = 0, [AN_TIME_ONLY] = 1,
		[AN_INSTR_ONLY] = 2, [AN_IMPROVEMENT] = 3, [AN_INCONCLUSIVE] = 4,
		[AN_NO_CHANGE] = 5,
	};
	return rank[v];
}

static int result_cmp(const void *x, const void *y)
{
	const struct an_result *a = x, *b = y;
	int ra = verdict_rank(a->verdict) + (a->tested ? 0 : 10);
	int rb = verdict_rank(b->verdict) + (b->tested ? 0 : 10);
	if (ra != rb)
		return ra - rb;
	double da = fabs(a->head - a->base), db = fabs(b->head - b->base);
	return da < db ? 1 : da > db ? -1 : (a->fn > b->fn) - (a->fn < b->fn);
}

/* Benjamini-Hochberg over the tested results; untested get q = 1. */
static void assign_qvalues(an_results *out)
{
	double *p = xcalloc(out->n + 1, sizeof(*p)), *q = xcalloc(out->n + 1, sizeof(*q));
	size_t m = 0;

	for (size_t i = 0; i < out->n; i++)
		if (out->v[i].tested)
			p[m++] = out->v[i].p;
	if (m)
		stats_bh_qvalues(p, m, q);
	m = 0;
	for (size_t i = 0; i < out->n; i++)
		out->v[i].q = out->v[i].tested ? q[m++] : 1;
	free(p);
	free(q);
}

int an_compare_sides(const struct an_fnset *fs, const struct an_side *base,
		     const struct an_side *head, const struct an_opts *o,
		     an_results *out)
{
	size_t na = base->runs.n, nb = head->runs.n;
	double *a, *b;
	int ret = 0;

	if (!na || !nb)
		return -EINVAL;
	a = xcalloc(na, sizeof(*a));
	b = xcalloc(nb, sizeof(*b));
	for (uint32_t fn = 0; fn < an_fn_count(fs) && !ret; fn++) {
		struct an_result r = { .fn = fn };
		double ca, cb;
		if ((ret = side_values(base, fn, o, a, &ca)) ||
		    (ret = side_values(head, fn, o, b, &cb)))
			break;
		an_compare_values(a, na, b, nb, ca, cb, o, &r);
		if (r.base <= 0 && r.head <= 0)
			continue;
		r.tested = is_tested(&r, base, o);
		VEC_PUSH(out, r);
	}
	free(a);
	free(b);
	if (ret)
		return ret;
	assign_qvalues(out);
	for (size_t i = 0; i < out->n; i++)
		an_decide(&out->v[i], o);
	if (out->n)
		qsort(out->v, out->n, sizeof(*out->v), result_cmp);
	return 0;
}
