/*
 * describe.c - descriptive statistics for a handful of repeated measurements:
 * sort, type-7 percentiles, mean, sample stddev, MAD, the modified z-score
 * outlier rule, plus the normal and gamma functions the tests need.  Inputs
 * are never modified; functions that need order sort a private copy.
 */
#include "prof/stats.h"
#include "prof/util.h"
#include <errno.h>
#include <math.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

void stats_sort(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
}

static double *sorted_copy(const double *v, size_t n)
{
	double *c = xmalloc((n ? n : 1) * sizeof(*c));

	memcpy(c, v, n * sizeof(*c));
	stats_sort(c, n);
	return c;
}

double stats_percentile_sorted(const double *sorted, size_t n, double p)
{
	if (!n)
		return NAN;
	if (p <= 0)
		return sorted[0];
	if (p >= 100)
		return sorted[n - 1];
	double h = (double)(n - 1) * p / 100.0;
	size_t lo = (size_t)floor(h);
	size_t hi = lo + 1 < n ? lo + 1 : lo;
	return sorted[lo] + (h - (double)lo) * (sorted[hi] - sorted[lo]);
}

double stats_percentile(const double *v, size_t n, double p)
{
	double *c = sorted_copy(v, n);
	double r = stats_percentile_sorted(c, n, p);

	free(c);
	return r;
}

double stats_median(const double *v, size_t n)
{
	return stats_percentile(v, n, 50);
}

double stats_mean(const double *v, size_t n)
{
	double s = 0;

	if (!n)
		return NAN;
	for (size_t i = 0; i < n; i++)
		s += v[i];
	return s / (double)n;
}

/* Two-pass formula: numerically safer than sum of squares for tiny spreads. */
double stats_stddev(const double *v, size_t n)
{
	double m, ss = 0;

	if (n < 2)
		return 0;
	m = stats_mean(v, n);
	for (size_t i = 0; i < n; i++)
		ss += (v[i] - m) * (v[i] - m);
	return sqrt(ss / (double)(n - 1));
}

static double stats_mad(const double *v, size_t n)
{
	double med, *dev, r;

	if (!n)
		return NAN;
	med = stats_median(v, n);
	dev = xmalloc(n * sizeof(*dev));
	for (size_t i = 0; i < n; i++)
		dev[i] = fabs(v[i] - med);
	r = stats_median(dev, n);
	free(dev);
	return r;
}

int stats_summarize(const double *v, size_t n, struct stats_summary *out)
{
	double *c;

	memset(out, 0, sizeof(*out));
	if (!n)
		return -EINVAL;
	c = sorted_copy(v, n);
	out->n = n;
	out->min = c[0];
	out->max = c[n - 1];
	out->median = stats_percentile_sorted(c, n, 50);
	out->p95 = stats_percentile_sorted(c, n, 95);
	out->p99 = stats_percentile_sorted(c, n, 99);
	out->mean = stats_mean(c, n);
	out->stddev = stats_stddev(c, n);
	out->cv = out->mean != 0 ? out->stddev / fabs(out->mean) : 0;
	out->mad = stats_mad(c, n);
	free(c);
	return 0;
}

size_t stats_outliers(const double *v, size_t n, bool *flags)
{
	size_t count = 0;
	double q1, q3, iqr;
	double *s;

	if (flags)
		for (size_t i = 0; i < n; i++)
			flags[i] = false;
	if (n < STATS_OUTLIER_MIN_N)
		return 0;
	s = xmalloc(n * sizeof(*s));
	memcpy(s, v, n * sizeof(*s));
	stats_sort(s, n);
	q1 = stats_percentile_sorted(s, n, 25);
	q3 = stats_percentile_sorted(s, n, 75);
	iqr = q3 - q1;
	free(s);
	for (size_t i = 0; i < n; i++) {
		bool out = v[i] < q1 - 3 * iqr || v[i] > q3 + 3 * iqr;

		if (flags)
			flags[i] = out;
		count += out;
	}
	return count;
}

double stats_norm_cdf(double z)
{
	return 0.5 * erfc(-z / M_SQRT2);
}

/*
 * Bisection on the CDF: 200 halvings of [-40, 40] reach double precision,
 * and this is called a few times per comparison, so speed does not matter
 * while monotonicity and no magic constants do.
 */
double stats_norm_quantile(double p)
{
	double lo = -40, hi = 40;

	if (!(p > 0 && p < 1))
		return p <= 0 ? -INFINITY : INFINITY;
	for (int i = 0; i < 200 && hi - lo > 1e-15; i++) {
		double mid = 0.5 * (lo + hi);

		if (stats_norm_cdf(mid) < p)
			lo = mid;
		else
			hi = mid;
	}
	return 0.5 * (lo + hi);
}

/*
 * P(a,x) by its power series for x < a+1 and by the Legendre continued
 * fraction for Q = 1-P otherwise (modified Lentz evaluation); both converge
 * quickly in their region.
 */
static double gamma_p_series(double a, double x)
{
	double term = 1.0 / a, sum = term;

	for (int k = 1; k < 100000; k++) {
		term *= x / (a + k);
		sum += term;
		if (fabs(term) < fabs(sum) * 1e-16)
			break;
	}
	return sum * exp(-x + a * log(x) - lgamma(a));
}

static double gamma_q_fraction(double a, double x)
{
	const double tiny = 1e-300;
	double b = x + 1 - a, c = 1 / tiny, d = 1 / b, h = d;

	for (int i = 1; i < 100000; i++) {
		double an = -i * (i - a), del;

		b += 2;
		d = an * d + b;
		if (fabs(d) < tiny)
			d = tiny;
		c = b + an / c;
		if (fabs(c) < tiny)
			c = tiny;
		d = 1 / d;
		del = d * c;
		h *= del;
		if (fabs(del - 1) < 1e-16)
			break;
	}
	return exp(-x + a * log(x) - lgamma(a)) * h;
}

/* Continued fraction for I_x(a,b) (modified Lentz), valid for x < (a+1)/(a+b+2). */
static double beta_fraction(double a, double b, double x)
{
	const double tiny = 1e-300;
	double c = 1, d = 1 - (a + b) * x / (a + 1), h;

	d = 1 / (fabs(d) < tiny ? tiny : d);
	h = d;
	for (int m = 1; m < 100000; m++) {
		double m2 = 2.0 * m, num, del;

		num = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
		d = 1 + num * d;
		d = 1 / (fabs(d) < tiny ? tiny : d);
		c = 1 + num / c;
		c = fabs(c) < tiny ? tiny : c;
		h *= d * c;
		num = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
		d = 1 + num * d;
		d = 1 / (fabs(d) < tiny ? tiny : d);
		c = 1 + num / c;
		c = fabs(c) < tiny ? tiny : c;
		del = d * c;
		h *= del;
		if (fabs(del - 1) < 1e-16)
			break;
	}
	return h;
}

double stats_beta_inc(double a, double b, double x)
{
	double front;

	if (x <= 0)
		return 0;
	if (x >= 1)
		return 1;
	front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
	/* Use the symmetry I_x(a,b) = 1 - I_{1-x}(b,a) where the fraction converges. */
	if (x < (a + 1) / (a + b + 2))
		return front * beta_fraction(a, b, x) / a;
	return 1 - front * beta_fraction(b, a, 1 - x) / b;
}

double stats_t_p2(double t, double df)
{
	if (!(df > 0))
		return NAN;
	return stats_beta_inc(df / 2, 0.5, df / (df + t * t));
}

/* Bisection on the monotone two-sided tail: t > 0 with stats_t_p2(t) = 1-p. */
double stats_t_quantile(double p, double df)
{
	double lo = 0, hi = 1e6, tail = 2 * (1 - p);

	if (!(p > 0 && p < 1) || !(df > 0))
		return NAN;
	if (p < 0.5)
		return -stats_t_quantile(1 - p, df);
	for (int i = 0; i < 300 && hi - lo > 1e-13 * MAX(1.0, hi); i++) {
		double mid = 0.5 * (lo + hi);

		if (stats_t_p2(mid, df) > tail)
			lo = mid;
		else
			hi = mid;
	}
	return 0.5 * (lo + hi);
}

double stats_gamma_p(double a, double x)
{
	if (x <= 0 || a <= 0)
		return 0;
	if (x < a + 1)
		return gamma_p_series(a, x);
	return 1 - gamma_q_fraction(a, x);
}
