/*
 * infer.c - inference for "did it change?": Mann-Whitney U (exact and
 * normal), the seeded xoshiro256** PRNG, percentile-bootstrap and
 * Hodges-Lehmann confidence intervals, Benjamini-Hochberg q-values,
 * Poisson/binomial intervals and rate tests for sample counts, and the
 * runs-needed estimate.  Formulas and conventions are documented in
 * include/prof/stats.h; this file says how they are computed.
 */
#include "prof/stats.h"
#include "prof/util.h"
#include <errno.h>
#include <math.h>
#include <string.h>

/* --- Mann-Whitney U -------------------------------------------------------- */

struct ranked { double v; int side; };

static int cmp_ranked(const void *a, const void *b)
{
	double x = ((const struct ranked *)a)->v, y = ((const struct ranked *)b)->v;

	return (x > y) - (x < y);
}

/*
 * Number of orderings of m a's and n b's whose U_a (pairs a > b) is u, for
 * every u: f(m,n,u) = f(m-1,n,u-n) + f(m,n-1,u) (last element an a that
 * beats all n b's, or a b).  Returns P(U <= u) under H0.
 */
static double mwu_exact_cdf(size_t m, size_t n, double u)
{
	size_t maxu = m * n, stride = maxu + 1;
	double *f = xcalloc((m + 1) * (n + 1) * stride, sizeof(*f));
	double total = 0, below = 0;
#define F(i, j) (f + ((i) * (n + 1) + (j)) * stride)

	for (size_t i = 0; i <= m; i++)
		for (size_t j = 0; j <= n; j++) {
			double *cur = F(i, j);

			if (!i || !j) {
				cur[0] = 1;
				continue;
			}
			for (size_t x = 0; x <= i * j; x++)
				cur[x] = (x >= j ? F(i - 1, j)[x - j] : 0) + F(i, j - 1)[x];
		}
	for (size_t x = 0; x <= maxu; x++) {
		total += F(m, n)[x];
		if ((double)x <= u + 1e-9)
			below += F(m, n)[x];
	}
#undef F
	free(f);
	return below / total;
}

int stats_mann_whitney(const double *a, size_t na, const double *b, size_t nb,
		       struct stats_mwu *out)
{
	size_t n = na + nb;
	struct ranked *r;
	double rank_sum_a = 0, tie_term = 0;
	bool ties = false;

	memset(out, 0, sizeof(*out));
	if (!na || !nb)
		return -EINVAL;
	r = xmalloc(n * sizeof(*r));
	for (size_t i = 0; i < na; i++)
		r[i] = (struct ranked){ a[i], 0 };
	for (size_t j = 0; j < nb; j++)
		r[na + j] = (struct ranked){ b[j], 1 };
	qsort(r, n, sizeof(*r), cmp_ranked);
	/* Midranks: a run of t equal values [i, k) all get rank (i+1+k)/2. */
	for (size_t i = 0; i < n;) {
		size_t k = i + 1;

		while (k < n && r[k].v == r[i].v)
			k++;
		double t = (double)(k - i), mid = (double)(i + 1 + k) / 2;
		for (size_t x = i; x < k; x++)
			if (!r[x].side)
				rank_sum_a += mid;
		if (t > 1) {
			ties = true;
			tie_term += t * t * t - t;
		}
		i = k;
	}
	free(r);
	double n1 = (double)na, n2 = (double)nb, nn = (double)n;
	out->u1 = rank_sum_a - n1 * (n1 + 1) / 2;
	out->u2 = n1 * n2 - out->u1;
	double umin = MIN(out->u1, out->u2);

	if (!ties && na <= STATS_MWU_EXACT_MAX && nb <= STATS_MWU_EXACT_MAX) {
		out->exact = true;
		out->p = MIN(1.0, 2 * mwu_exact_cdf(na, nb, umin));
		return 0;
	}
	double mu = n1 * n2 / 2;
	double var = n1 * n2 / 12 * ((nn + 1) - tie_term / (nn * (nn - 1)));
	if (var <= 0) {		/* every value tied: no evidence at all */
		out->p = 1;
		return 0;
	}
	double dev = fabs(out->u1 - mu) - 0.5;
	out->z = MAX(dev, 0) / sqrt(var);
	out->p = MIN(1.0, 2 * (1 - stats_norm_cdf(out->z)));
	return 0;
}

/* --- PRNG -------------------------------------------------------------------- */

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void stats_rng_seed(struct stats_rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t stats_rng_next(struct stats_rng *r)
{
	uint64_t *s = r->s, result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

/* Rejection sampling: no modulo bias even for large n. */
uint64_t stats_rng_below(struct stats_rng *r, uint64_t n)
{
	uint64_t limit, x;

	if (n <= 1)
		return 0;
	limit = UINT64_MAX - UINT64_MAX % n;
	do
		x = stats_rng_next(r);
	while (x >= limit);
	return x % n;
}

/* --- bootstrap and Hodges-Lehmann ----------------------------------------------- */

static double estimate(const double *v, size_t n, enum stats_estimator est)
{
	return est == STATS_MEAN ? stats_mean(v, n) : stats_median(v, n);
}

static double effect(double ea, double eb, enum stats_effect eff)
{
	return eff == STATS_DIFF ? eb - ea : eb / ea;
}

static void resample(struct stats_rng *r, const double *v, size_t n, double *out)
{
	for (size_t i = 0; i < n; i++)
		out[i] = v[stats_rng_below(r, n)];
}

int stats_bootstrap_ci(const double *a, size_t na, const double *b, size_t nb,
		       enum stats_estimator est, enum stats_effect eff,
		       unsigned iters, double level, uint64_t seed,
		       struct stats_ci *out)
{
	struct stats_rng rng;
	double *ra, *rb, *effects;
	size_t kept = 0;
	double ea = estimate(a, na, est), eb = estimate(b, nb, est);

	memset(out, 0, sizeof(*out));
	if (!na || !nb || !iters || !(level > 0 && level < 1))
		return -EINVAL;
	out->level = level;
	out->estimate = (eff == STATS_RATIO && ea == 0) ? NAN : effect(ea, eb, eff);
	stats_rng_seed(&rng, seed);
	ra = xmalloc(na * sizeof(*ra));
	rb = xmalloc(nb * sizeof(*rb));
	effects = xmalloc(iters * sizeof(*effects));
	for (unsigned i = 0; i < iters; i++) {
		resample(&rng, a, na, ra);
		resample(&rng, b, nb, rb);
		double xa = estimate(ra, na, est), xb = estimate(rb, nb, est);

		if (eff == STATS_RATIO && xa == 0)
			continue;
		effects[kept++] = effect(xa, xb, eff);
	}
	free(ra);
	free(rb);
	if (!kept) {
		free(effects);
		return -EDOM;
	}
	stats_sort(effects, kept);
	out->lo = stats_percentile_sorted(effects, kept, 100 * (1 - level) / 2);
	out->hi = stats_percentile_sorted(effects, kept, 100 * (1 + level) / 2);
	free(effects);
	return 0;
}

int stats_hodges_lehmann(const double *a, size_t na, const double *b, size_t nb,
			 double level, struct stats_ci *out)
{
	size_t m = na * nb, k = 0;
	double *d, z, c;

	memset(out, 0, sizeof(*out));
	if (!na || !nb || !(level > 0 && level < 1))
		return -EINVAL;
	d = xmalloc(m * sizeof(*d));
	for (size_t i = 0; i < na; i++)
		for (size_t j = 0; j < nb; j++)
			d[k++] = b[j] - a[i];
	stats_sort(d, m);
	z = stats_norm_quantile((1 + level) / 2);
	c = floor((double)m / 2 - z * sqrt((double)na * nb * (na + nb + 1) / 12.0));
	if (c < 1)	/* samples too small for this level: widest interval */
		c = 1;
	out->level = level;
	out->estimate = stats_percentile_sorted(d, m, 50);
	out->lo = d[(size_t)c - 1];
	out->hi = d[m - (size_t)c];
	free(d);
	return 0;
}

/* --- Benjamini-Hochberg ------------------------------------------------------------ */

struct pidx { double p; size_t i; };

static int cmp_pidx(const void *a, const void *b)
{
	double x = ((const struct pidx *)a)->p, y = ((const struct pidx *)b)->p;

	return (x > y) - (x < y);
}

/* q_(k) = min over j >= k of p_(j) * n / j, walking down from the largest p. */
void stats_bh_qvalues(const double *p, size_t n, double *q)
{
	struct pidx *s;
	double run = 1;

	if (!n)
		return;
	s = xmalloc(n * sizeof(*s));
	for (size_t i = 0; i < n; i++)
		s[i] = (struct pidx){ p[i], i };
	qsort(s, n, sizeof(*s), cmp_pidx);
	for (size_t k = n; k-- > 0;) {
		double v = s[k].p * (double)n / (double)(k + 1);

		run = MIN(run, v);
		q[s[k].i] = run;
	}
	free(s);
}

/* --- counts ------------------------------------------------------------------------ */

/* Bisection for the mu where f(mu) crosses target; f increasing in mu. */
static double solve_increasing(double (*f)(double, double), double a, double target,
			       double lo, double hi)
{
	for (int i = 0; i < 300 && hi - lo > 1e-12 * MAX(1.0, hi); i++) {
		double mid = 0.5 * (lo + hi);

		if (f(a, mid) < target)
			lo = mid;
		else
			hi = mid;
	}
	return 0.5 * (lo + hi);
}

/* P(X >= k | mu) = P(k, mu) rises with mu; P(X <= k | mu) = 1 - P(k+1, mu) falls. */
int stats_poisson_ci(uint64_t k, double level, double *lo, double *hi)
{
	double alpha = 1 - level, top = (double)k + 50 * sqrt((double)k + 1) + 50;

	if (!(level > 0 && level < 1))
		return -EINVAL;
	*lo = k ? solve_increasing(stats_gamma_p, (double)k, alpha / 2, 0, top) : 0;
	*hi = solve_increasing(stats_gamma_p, (double)k + 1, 1 - alpha / 2, 0, top);
	return 0;
}

int stats_wilson_ci(uint64_t k, uint64_t n, double level, double *lo, double *hi)
{
	double z, phat, den, centre, half;

	if (!n || k > n || !(level > 0 && level < 1))
		return -EINVAL;
	z = stats_norm_quantile((1 + level) / 2);
	phat = (double)k / (double)n;
	den = 1 + z * z / (double)n;
	centre = (phat + z * z / (2.0 * (double)n)) / den;
	half = z / den * sqrt(phat * (1 - phat) / (double)n + z * z / (4.0 * (double)n * (double)n));
	*lo = MAX(0.0, centre - half);
	*hi = MIN(1.0, centre + half);
	return 0;
}

static double binom_log_pmf(uint64_t x, uint64_t n, double lp, double lq)
{
	return lgamma((double)n + 1) - lgamma((double)x + 1) - lgamma((double)(n - x) + 1) +
	       (double)x * lp + (double)(n - x) * lq;
}

/* Sums the shorter tail term by term (O(min(k, n-k)) lgamma calls). */
double stats_binom_cdf(uint64_t k, uint64_t n, double p)
{
	double lp, lq, s = 0;

	if (k >= n || p <= 0)
		return 1;
	if (p >= 1)
		return 0;
	lp = log(p);
	lq = log1p(-p);
	if (k < n / 2) {
		for (uint64_t x = 0; x <= k; x++)
			s += exp(binom_log_pmf(x, n, lp, lq));
		return MIN(1.0, s);
	}
	for (uint64_t x = k + 1; x <= n; x++)
		s += exp(binom_log_pmf(x, n, lp, lq));
	return MAX(0.0, 1 - s);
}

double stats_poisson_rate_test(uint64_t k1, double t1, uint64_t k2, double t2)
{
	uint64_t n = k1 + k2;
	double p0, below, above;

	if (!n || !(t1 > 0) || !(t2 > 0))
		return 1;
	p0 = t1 / (t1 + t2);
	below = stats_binom_cdf(k1, n, p0);
	above = k1 ? 1 - stats_binom_cdf(k1 - 1, n, p0) : 1;
	return MIN(1.0, 2 * MIN(below, above));
}

/* --- planning ------------------------------------------------------------------------ */

uint64_t stats_runs_needed(double effect_size, double sd_a, double sd_b, double level,
			   double power)
{
	double z, zp, sd, n;

	if (effect_size == 0 || !isfinite(effect_size) || !isfinite(sd_a) || !isfinite(sd_b) ||
	    !(level > 0 && level < 1) || !(power > 0 && power < 1))
		return 0;
	z = stats_norm_quantile((1 + level) / 2);
	zp = stats_norm_quantile(power);
	sd = sqrt(sd_a * sd_a + sd_b * sd_b);
	n = ceil(pow((z + zp) * sd / fabs(effect_size), 2));
	return n < 2 ? 2 : n > 1e9 ? 1000000000 : (uint64_t)n;
}
