/*
 * stats.h - the statistics `prof stat`, `prof diff` and `prof crosscheck`
 * use to tell a real change from noise: descriptive summaries, outlier
 * flags (modified z-score), Mann-Whitney U, bootstrap and Hodges-Lehmann
 * confidence intervals, Benjamini-Hochberg q-values, Poisson/binomial
 * intervals and tests for sample counts, and a "runs needed" estimate.
 * Pure C on libm; every function is deterministic (the bootstrap takes a
 * seed).  Functions return 0 or a negative errno (-EINVAL for n == 0 etc.).
 */
#ifndef PROF_STATS_H
#define PROF_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* --- descriptive --------------------------------------------------------- */
struct stats_summary {
	size_t n;
	double min, max, mean, median, p95, p99;
	double stddev;	/* sample (n-1) standard deviation; 0 when n < 2 */
	double cv;	/* stddev / mean; 0 when mean == 0 */
	double mad;	/* raw median absolute deviation (unscaled) */
};

void stats_sort(double *v, size_t n);
/*
 * Percentile p in [0,100] of an ascending array, by linear interpolation
 * between closest ranks: h = (n-1)*p/100, v[floor h] + frac(h)*(v[ceil h] -
 * v[floor h]).  This is Hyndman-Fan type 7, the default of numpy.percentile,
 * R quantile() and Python statistics.quantiles(method='inclusive').
 */
double stats_percentile_sorted(const double *sorted, size_t n, double p);
double stats_percentile(const double *v, size_t n, double p);	/* copies */
double stats_median(const double *v, size_t n);
double stats_mean(const double *v, size_t n);
double stats_stddev(const double *v, size_t n);			/* sample */
int stats_summarize(const double *v, size_t n, struct stats_summary *out);

/*
 * Outliers by Tukey's far-out fences: flags[i] when v[i] lies more than 3
 * interquartile ranges below the first quartile or above the third.  None
 * under STATS_OUTLIER_MIN_N values: quartiles of fewer say too little (and
 * a MAD of three values is their closest pair's distance).
 * Measured by simulation (5,000 sets of standard normal values per size,
 * Python's random, seed 1): a set of 10 has some value flagged 4.5% of
 * the time, of 30 1.2%, of 100 0.3%; of 3 runs the modified z-score
 * (|z| > 3.5) flagged one 28% of the time.  Returns the number flagged; flags
 * may be NULL.
 */
#define STATS_OUTLIER_MIN_N 10
size_t stats_outliers(const double *v, size_t n, bool *flags);

/* --- distributions ------------------------------------------------------- */
double stats_norm_cdf(double z);
double stats_norm_quantile(double p);		/* inverse of norm_cdf, p in (0,1) */
/* Regularized lower incomplete gamma P(a, x). */
double stats_gamma_p(double a, double x);
/* Regularized incomplete beta I_x(a, b). */
double stats_beta_inc(double a, double b, double x);
/* Student t: two-sided tail P(|T| > |t|), and the quantile (P(T <= q) = p). */
double stats_t_p2(double t, double df);
double stats_t_quantile(double p, double df);

/* --- Mann-Whitney U (two-sided) ------------------------------------------- */
struct stats_mwu {
	double u1;	/* U of sample a: #pairs a_i > b_j (+0.5 per tie) */
	double u2;	/* n1*n2 - u1 */
	double z;	/* normal-approximation z (0 when exact) */
	double p;	/* two-sided p-value */
	bool exact;	/* exact null distribution was used */
};
#define STATS_MWU_EXACT_MAX 20	/* exact when both n <= this and no ties */
/*
 * Exact: p = min(1, 2 P(U <= min(u1,u2))) from the permutation distribution.
 * Otherwise normal approximation with tie correction and continuity
 * correction 0.5, the scipy.stats.mannwhitneyu(method='asymptotic') formula.
 */
int stats_mann_whitney(const double *a, size_t na, const double *b, size_t nb,
		       struct stats_mwu *out);

/* --- PRNG: xoshiro256** seeded through splitmix64 ------------------------- */
struct stats_rng { uint64_t s[4]; };
void stats_rng_seed(struct stats_rng *r, uint64_t seed);
uint64_t stats_rng_next(struct stats_rng *r);
uint64_t stats_rng_below(struct stats_rng *r, uint64_t n);	/* uniform [0,n) */

/* --- confidence intervals for the change from a to b ---------------------- */
enum stats_estimator { STATS_MEDIAN, STATS_MEAN };
enum stats_effect { STATS_RATIO, STATS_DIFF };	/* est(b)/est(a) or est(b)-est(a) */
struct stats_ci { double estimate, lo, hi, level; };
/*
 * Percentile bootstrap: resample a and b independently with replacement
 * `iters` times, take the (1-level)/2 and (1+level)/2 percentiles (type 7) of
 * the resampled effect.  Same seed, same interval.  A ratio with est(a) == 0
 * in a resample is skipped; -EDOM if every resample was skipped.
 */
int stats_bootstrap_ci(const double *a, size_t na, const double *b, size_t nb,
		       enum stats_estimator est, enum stats_effect eff,
		       unsigned iters, double level, uint64_t seed,
		       struct stats_ci *out);
/*
 * Hodges-Lehmann shift b - a: the median of all b_j - a_i, with the
 * distribution-free CI of Hollander & Wolfe with the normal approximation:
 * order statistics C and n1*n2+1-C (1-based) of the sorted differences,
 * C = floor(n1 n2/2 - z sqrt(n1 n2 (n1+n2+1)/12)), at least 1.
 */
int stats_hodges_lehmann(const double *a, size_t na, const double *b, size_t nb,
			 double level, struct stats_ci *out);

/* --- multiple testing ------------------------------------------------------ */
/* Benjamini-Hochberg q-values (step-up, monotone, capped at 1). */
void stats_bh_qvalues(const double *p, size_t n, double *q);

/* --- counts ----------------------------------------------------------------- */
/* Exact (Garwood) two-sided interval for a Poisson mean after observing k. */
int stats_poisson_ci(uint64_t k, double level, double *lo, double *hi);
/* Wilson score interval for a binomial proportion k/n. */
int stats_wilson_ci(uint64_t k, uint64_t n, double level, double *lo, double *hi);
/* P(X <= k) for X ~ Binomial(n, p). */
double stats_binom_cdf(uint64_t k, uint64_t n, double p);
/*
 * Two Poisson counts k1 over exposure t1 and k2 over t2 (e.g. samples of one
 * function in one run per side, exposure = total samples of the run): is the
 * rate different?  Conditional exact test: given k1+k2, k1 ~ Binomial(k1+k2,
 * t1/(t1+t2)); two-sided p = min(1, 2 min(P(X<=k1), P(X>=k1))).
 */
double stats_poisson_rate_test(uint64_t k1, double t1, uint64_t k2, double t2);

/* --- planning ---------------------------------------------------------------- */
/*
 * Runs per side so that a two-sided `level` CI of the difference of means
 * excludes zero with probability `power` (0.5 = "on average"), normal
 * approximation: n = ((z_{(1+level)/2} + z_power) * sqrt(sd_a^2 + sd_b^2) /
 * |effect|)^2, rounded up, at least 2.  Returns 0 when effect == 0 or the
 * inputs are not finite (cannot say).
 */
uint64_t stats_runs_needed(double effect, double sd_a, double sd_b, double level,
			   double power);

#endif
