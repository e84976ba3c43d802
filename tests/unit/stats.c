/*
 * stats.c - unit tests for src/stats: hand-computable cases, invariances,
 * and reference numbers from SciPy 1.10.1 (Debian 12 python3-scipy, run
 * once with /usr/bin/python3; the calls are quoted next to each number so
 * they can be re-run).  Nothing here depends on timing.
 */
#include "tap.h"
#include "prof/stats.h"
#include <math.h>
#include <errno.h>
#include <stdbool.h>

#define N(a) (sizeof(a) / sizeof((a)[0]))

static int near(double got, double want, double tol, const char *what)
{
	int r = ok(fabs(got - want) <= tol, "%s", what);

	if (!r)
		printf("#   got %.12g, want %.12g (tol %g)\n", got, want, tol);
	return r;
}

static void test_descriptive(void)
{
	double v[] = { 10, 1, 4, 3, 2 };
	struct stats_summary s;

	ok(stats_summarize(v, N(v), &s) == 0, "summarize");
	near(s.min, 1, 0, "min");
	near(s.max, 10, 0, "max");
	near(s.mean, 4, 1e-12, "mean (20/5)");
	near(s.median, 3, 0, "median");
	/* numpy.percentile([1,2,3,4,10], [95, 99]) -> 8.8, 9.76 (type 7) */
	near(s.p95, 8.8, 1e-12, "p95 type 7 = 8.8 (numpy)");
	near(s.p99, 9.76, 1e-12, "p99 type 7 = 9.76 (numpy)");
	near(stats_percentile(v, N(v), 25), 2, 1e-12, "p25");
	/* sum of squared deviations 36+9+1+0+4 = 50, /4 -> sqrt(12.5) */
	near(s.stddev, sqrt(12.5), 1e-12, "sample stddev sqrt(12.5)");
	near(s.cv, sqrt(12.5) / 4, 1e-12, "cv = stddev/mean");
	/* |x - 3| = 7,2,1,0,1 -> median 1 */
	near(s.mad, 1, 0, "MAD");
	near(v[0], 10, 0, "input not reordered");
	ok(stats_summarize(v, 0, &s) == -EINVAL, "n=0 rejected");
	double one = 7;
	stats_summarize(&one, 1, &s);
	ok(s.stddev == 0 && s.median == 7 && s.p99 == 7, "single value: stddev 0, all percentiles equal");
	near(stats_percentile((double[]){ 1, 2 }, 2, 50), 1.5, 1e-12, "even-n median interpolates");
}

static void test_outliers(void)
{
	double v[] = { 10, 10.2, 9.9, 10.1, 10.0, 9.8, 10.3, 9.7, 10.05, 30 };
	bool f[N(v)];

	/* quartiles 9.925 and 10.1375: the fences are 9.29 and 10.775 */
	ok(stats_outliers(v, N(v), f) == 1 && f[9], "30 among ten ~10s is the one outlier");
	ok(stats_outliers(v, N(v) - 1, NULL) == 0, "nine values: no outlier rule (fewer than 10)");
	double three[] = { 1.00, 1.01, 1.10 };
	ok(stats_outliers(three, N(three), NULL) == 0, "three runs: nothing flagged");
	double same[] = { 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 9 };
	ok(stats_outliers(same, N(same), NULL) == 1, "IQR 0: a value off the common one is flagged");
}

static void test_distributions(void)
{
	/* scipy.stats.norm.ppf(0.975), norm.ppf(0.8) */
	near(stats_norm_quantile(0.975), 1.959963984540054, 1e-9, "norm quantile 0.975");
	near(stats_norm_quantile(0.8), 0.8416212335729143, 1e-9, "norm quantile 0.8");
	near(stats_norm_cdf(0), 0.5, 1e-15, "norm cdf 0");
	/* scipy.special.betainc(2.5, 3.5, 0.4), betainc(30, 0.5, 0.9) */
	near(stats_beta_inc(2.5, 3.5, 0.4), 0.4869041915261175, 1e-10, "incomplete beta, direct branch");
	near(stats_beta_inc(30, 0.5, 0.9), 0.012282448499852758, 1e-10, "incomplete beta, symmetric branch");
	/* 2*scipy.stats.t.sf(2.1, 5), 2*t.sf(0.5, 30); t.ppf(0.975, 3), t.ppf(0.975, 18) */
	near(stats_t_p2(2.1, 5), 0.08975324988459868, 1e-10, "t two-sided p, 5 df");
	near(stats_t_p2(-0.5, 30), 0.6207230048851273, 1e-10, "t two-sided p, 30 df, sign-free");
	near(stats_t_quantile(0.975, 3), 3.182446305284263, 1e-8, "t quantile 0.975, 3 df");
	near(stats_t_quantile(0.975, 18), 2.10092204024096, 1e-8, "t quantile 0.975, 18 df");
	near(stats_t_quantile(0.025, 18), -2.10092204024096, 1e-8, "t quantile is antisymmetric");
	/* scipy.special.gammainc(3.5, 2.0), gammainc(10, 15) */
	near(stats_gamma_p(3.5, 2.0), 0.22022259152428406, 1e-10, "gamma P(3.5, 2) series branch");
	near(stats_gamma_p(10, 15), 0.9301463393005901, 1e-10, "gamma P(10, 15) fraction branch");
	/* scipy.stats.binom.cdf(3, 20, 0.3), binom.cdf(60, 100, 0.5) */
	near(stats_binom_cdf(3, 20, 0.3), 0.10708680450373087, 1e-10, "binom cdf lower tail");
	near(stats_binom_cdf(60, 100, 0.5), 0.9823998998911476, 1e-10, "binom cdf upper-tail path");
}

static void test_mwu(void)
{
	struct stats_mwu r;
	double a[] = { 1, 2, 3 }, b[] = { 4, 5, 6 };

	stats_mann_whitney(a, 3, b, 3, &r);
	/* complete separation: P(U=0) = 1/C(6,3) = 1/20, two-sided 0.1 */
	ok(r.exact && r.u1 == 0 && r.u2 == 9, "U1=0 U2=9, exact");
	near(r.p, 0.1, 1e-12, "3v3 separated: p = 2/20");
	double a5[] = { 1, 2, 3, 4, 5 }, b5[] = { 6, 7, 8, 9, 10 };
	stats_mann_whitney(a5, 5, b5, 5, &r);
	near(r.p, 2.0 / 252, 1e-12, "5v5 separated: p = 2/C(10,5) = 0.0079365");

	/* scipy.stats.mannwhitneyu([19,22,16,29,24],[20,11,17,12],method='exact') -> U=17, p=0.1111 */
	double x[] = { 19, 22, 16, 29, 24 }, y[] = { 20, 11, 17, 12 };
	stats_mann_whitney(x, N(x), y, N(y), &r);
	near(r.u1, 17, 0, "U1 = 17 (scipy)");
	near(r.p, 0.1111111111111111, 1e-12, "exact p 0.1111 (scipy)");
	struct stats_mwu r2;
	stats_mann_whitney(y, N(y), x, N(x), &r2);
	ok(r2.u1 == r.u2 && fabs(r2.p - r.p) < 1e-15, "swapping samples swaps U, keeps p");

	/* scipy exact, 12 v 10 -> U=65, p=0.7713030004051677 */
	double x2[] = { 3.1, 4.5, 2.2, 5.9, 6.1, 7.7, 1.05, 8.4, 9.9, 10.2, 11.5, 12.25 };
	double y2[] = { 0.5, 1.5, 2.5, 3.5, 4.25, 5.5, 6.5, 13.5, 14.5, 15.5 };
	stats_mann_whitney(x2, N(x2), y2, N(y2), &r);
	near(r.u1, 65, 0, "12v10 U=65 (scipy)");
	near(r.p, 0.7713030004051677, 1e-10, "12v10 exact p (scipy)");

	/* ties: scipy asymptotic, use_continuity=True -> U=7.5, p=0.006373133838085873 */
	double t1[] = { 1, 2, 2, 3, 3, 3, 4, 5 }, t2[] = { 3, 4, 4, 5, 5, 6, 7, 7, 8 };
	stats_mann_whitney(t1, N(t1), t2, N(t2), &r);
	ok(!r.exact, "ties force the normal approximation");
	near(r.u1, 7.5, 0, "tied U = 7.5 (scipy)");
	near(r.p, 0.006373133838085873, 1e-10, "tie-corrected p (scipy)");

	/* 25 v 30 without ties (beyond the exact limit): scipy asymptotic U=275, p=0.09259657901334994 */
	double L1[] = { 10.6912, 11.6432, 10.6609, 7.3937, 11.8107, 10.8927, 8.9261, 11.1622, 10.7291,
			10.5883, 10.0568, 11.0934, 8.5271, 9.6742, 9.0358, 11.1977, 10.0794, 9.4151,
			8.4362, 9.4856, 10.0163, 9.4488, 12.5881, 12.0134, 4.5777 };
	double L2[] = { 7.222, 10.6505, 10.1556, 11.4273, 11.4346, 15.2357, 8.776, 10.2448, 15.0855,
			12.2934, 12.3261, 9.972, 7.7038, 11.3349, 11.218, 8.5453, 9.6335, 10.8559,
			9.1105, 10.8035, 11.191, 11.0712, 9.9874, 12.1875, 12.7823, 11.6417, 9.3635,
			12.4633, 9.9971, 12.7583 };
	stats_mann_whitney(L1, N(L1), L2, N(L2), &r);
	ok(!r.exact, "25v30 uses the normal approximation");
	near(r.u1, 275, 0, "25v30 U=275 (scipy)");
	near(r.p, 0.09259657901334994, 1e-10, "25v30 p (scipy)");

	double same[] = { 4, 4, 4 };
	stats_mann_whitney(same, 3, same, 3, &r);
	near(r.p, 1, 0, "all tied: p = 1");
	ok(stats_mann_whitney(a, 0, b, 3, &r) < 0, "empty sample rejected");
}

static void test_rng_bootstrap(void)
{
	struct stats_rng r1, r2;
	int same = 1;

	stats_rng_seed(&r1, 42);
	stats_rng_seed(&r2, 42);
	for (int i = 0; i < 100; i++)
		same &= stats_rng_next(&r1) == stats_rng_next(&r2);
	ok(same, "same seed, same stream");
	int inrange = 1, hist[10] = { 0 };
	for (int i = 0; i < 100000; i++) {
		uint64_t x = stats_rng_below(&r1, 10);
		inrange &= x < 10;
		hist[x < 10 ? x : 0]++;
	}
	int flat = 1;
	for (int i = 0; i < 10; i++)	/* expected 10000, sd ~95: 6 sd band */
		flat &= hist[i] > 9400 && hist[i] < 10600;
	ok(inrange && flat, "rng_below uniform over [0,10)");

	double a[] = { 100, 102, 98, 101, 99, 100.5, 99.5, 100.2 };
	double b[N(a)];
	for (size_t i = 0; i < N(a); i++)
		b[i] = a[i] * 1.5;
	struct stats_ci ci, ci2;
	ok(stats_bootstrap_ci(a, N(a), b, N(b), STATS_MEDIAN, STATS_RATIO, 2000, 0.95, 7, &ci) == 0,
	   "bootstrap runs");
	near(ci.estimate, 1.5, 1e-12, "ratio of medians 1.5");
	ok(ci.lo <= 1.5 && ci.hi >= 1.5 && ci.lo > 1.3 && ci.hi < 1.7, "95%% CI [%g, %g] brackets 1.5 and excludes 1",
	   ci.lo, ci.hi);
	stats_bootstrap_ci(a, N(a), b, N(b), STATS_MEDIAN, STATS_RATIO, 2000, 0.95, 7, &ci2);
	ok(ci.lo == ci2.lo && ci.hi == ci2.hi, "same seed, same interval");
	stats_bootstrap_ci(a, N(a), a, N(a), STATS_MEAN, STATS_DIFF, 2000, 0.95, 1, &ci);
	ok(ci.estimate == 0 && ci.lo < 0 && ci.hi > 0, "identical samples: diff CI [%g, %g] contains 0",
	   ci.lo, ci.hi);
	double z[] = { 0, 0, 0 };
	ok(stats_bootstrap_ci(z, 3, a, 3, STATS_MEDIAN, STATS_RATIO, 100, 0.95, 1, &ci) == -EDOM,
	   "ratio against all-zero baseline is -EDOM");

	/* Hodges-Lehmann: b = a + 5 exactly -> every pairwise diff median is 5 */
	double hb[N(a)];
	for (size_t i = 0; i < N(a); i++)
		hb[i] = a[i] + 5;
	stats_hodges_lehmann(a, N(a), hb, N(hb), 0.95, &ci);
	near(ci.estimate, 5, 1e-12, "HL shift estimate 5");
	ok(ci.lo < 5 && ci.hi > 5, "HL CI [%g, %g] contains 5", ci.lo, ci.hi);
	/* n=8 per side: C = floor(32 - 1.96*sqrt(64*17/12)) = floor(13.34) = 13; the
	 * diffs are 1..8 eight times each, so the 13th is 2 and the 52nd is 7 */
	double d1[] = { 1, 2, 3, 4, 5, 6, 7, 8 }, d0[] = { 0, 0, 0, 0, 0, 0, 0, 0 };
	stats_hodges_lehmann(d0, 8, d1, 8, 0.95, &ci);
	ok(ci.lo == 2 && ci.hi == 7, "HL CI order statistics 13 and 52 of 64 diffs -> [2, 7] (got [%g, %g])",
	   ci.lo, ci.hi);
}

static void test_bh(void)
{
	/* by hand: sorted 0.005,0.01,0.03,0.04,0.5 -> p*5/k = .025,.025,.05,.05,.5 */
	double p[] = { 0.01, 0.04, 0.03, 0.005, 0.5 }, q[5];
	double want[] = { 0.025, 0.05, 0.05, 0.025, 0.5 };
	int good = 1;

	stats_bh_qvalues(p, 5, q);
	for (int i = 0; i < 5; i++)
		good &= fabs(q[i] - want[i]) < 1e-12;
	ok(good, "BH q-values match the hand computation");
	double p2[] = { 0.9, 0.95 }, q2[2];
	stats_bh_qvalues(p2, 2, q2);
	ok(q2[0] == 0.95 && q2[1] == 0.95, "monotone step-up: q = min over larger ranks");
}

static void test_counts(void)
{
	double lo, hi;

	/* Garwood: scipy.stats.chi2.ppf(0.025, 20)/2, chi2.ppf(0.975, 22)/2 */
	stats_poisson_ci(10, 0.95, &lo, &hi);
	near(lo, 4.7953886961324335, 1e-7, "Poisson k=10 lower 4.795 (scipy chi2)");
	near(hi, 18.39035604201778, 1e-7, "Poisson k=10 upper 18.390 (scipy chi2)");
	stats_poisson_ci(0, 0.95, &lo, &hi);
	ok(lo == 0, "k=0 lower bound 0");
	near(hi, 3.6888794541139354, 1e-7, "k=0 upper = -ln(0.025) = 3.689");

	/* Wilson 8/10 at 95%: (0.8 + 0.19208)/1.38415 -/+ 1.95996/1.38415*sqrt(0.016+0.0096037) */
	stats_wilson_ci(8, 10, 0.95, &lo, &hi);
	near(lo, 0.490162, 1e-5, "Wilson 8/10 lower 0.4902");
	near(hi, 0.943318, 1e-5, "Wilson 8/10 upper 0.9433");
	stats_wilson_ci(0, 10, 0.95, &lo, &hi);
	ok(lo == 0 && hi > 0.2 && hi < 0.35, "Wilson 0/10 is [0, %g]", hi);

	/* binomtest(30, 50, 0.4) doubled min tail: 2*min(cdf(30), sf(29)) = 0.0067207645 */
	near(stats_poisson_rate_test(30, 2, 20, 3), 0.0067207645260454986, 1e-10,
	     "rate test 30/2 vs 20/3 (scipy binom tails)");
	near(stats_poisson_rate_test(100, 1, 100, 1), 1, 1e-12, "equal counts, equal exposure: p = 1");
	ok(stats_poisson_rate_test(1000, 1, 1200, 1) < 0.001, "1000 vs 1200 samples: significant");
}

static void test_runs_needed(void)
{
	/* ((1.96 + 0) * sqrt(2) * 1 / 1)^2 = 7.68 -> 8 */
	is_u64(stats_runs_needed(1, 1, 1, 0.95, 0.5), 8, "effect = sd: 8 runs per side");
	/* (1.96+0.8416)^2 * 2 * 4 = 62.8 -> 63 */
	is_u64(stats_runs_needed(0.5, 1, 1, 0.95, 0.8), 63, "half-sd effect at 80%% power: 63");
	is_u64(stats_runs_needed(0, 1, 1, 0.95, 0.5), 0, "no effect: cannot say");
	is_u64(stats_runs_needed(100, 1, 1, 0.95, 0.5), 2, "huge effect: at least 2");
}

int main(void)
{
	test_descriptive();
	test_outliers();
	test_distributions();
	test_mwu();
	test_rng_bootstrap();
	test_bh();
	test_counts();
	test_runs_needed();
	return done_testing();
}
