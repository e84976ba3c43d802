/*
 * counts.c - compare how often something was sampled (a function's sample
 * count out of a run's total) between a baseline and a new build, using
 * both noise sources: within one run the count is binomial; between runs
 * there is extra variation that only repeated runs reveal.  With one run
 * per side the exact conditional Poisson test is used; with more, a
 * quasi-binomial test inflates the binomial variance by the observed
 * dispersion (Pearson chi-square / df, floored at 1) and then uses Student t.
 */
#include "prof/stats.h"
#include "prof/util.h"
#include <errno.h>
#include <math.h>
#include <string.h>

struct side { double k, n, rate, chi2; size_t df; };

/* Pooled rate and Pearson X^2 of the per-run counts around it. */
static void pool(const uint64_t *k, const uint64_t *n, size_t runs, struct side *s)
{
	memset(s, 0, sizeof(*s));
	for (size_t i = 0; i < runs; i++) {
		s->k += (double)k[i];
		s->n += (double)n[i];
	}
	s->rate = s->n > 0 ? s->k / s->n : 0;
	if (s->rate <= 0 || s->rate >= 1)
		return;		/* no variance to compare against */
	for (size_t i = 0; i < runs; i++) {
		double e = (double)n[i] * s->rate;

		if (n[i])
			s->chi2 += ((double)k[i] - e) * ((double)k[i] - e) / (e * (1 - s->rate));
	}
	s->df = runs - 1;
}

/* One run per side: exact conditional test, Wilson CI on kb/(ka+kb). */
static void single_run(const struct side *a, const struct side *b, double level,
		       struct stats_count_cmp *out)
{
	double plo, phi;
	uint64_t ka = (uint64_t)a->k, kb = (uint64_t)b->k;

	out->p = stats_poisson_rate_test(kb, b->n, ka, a->n);
	stats_wilson_ci(kb, ka + kb, level, &plo, &phi);
	/* ratio = pi/(1-pi) * n_a/n_b, monotone in pi */
	out->lo = plo / (1 - plo) * a->n / b->n;
	out->hi = phi >= 1 ? INFINITY : phi / (1 - phi) * a->n / b->n;
}

/*
 * Several runs: log ratio with binomial variance (1-rate)/K per side times
 * the dispersion; a zero count gets Haldane's +0.5 so the log is finite.
 */
static void quasi(const struct side *a, const struct side *b, double level, double df,
		  struct stats_count_cmp *out)
{
	double ka = a->k > 0 ? a->k : 0.5, kb = b->k > 0 ? b->k : 0.5;
	double lr = log((kb / b->n) / (ka / a->n));
	double se = sqrt(out->dispersion * ((1 - a->rate) / ka + (1 - b->rate) / kb));
	bool t = out->dispersion > 1;	/* estimated variance: Student t */
	double z = t ? stats_t_quantile((1 + level) / 2, df) : stats_norm_quantile((1 + level) / 2);

	if (!(se > 0))
		out->p = lr == 0 ? 1 : 0;
	else
		out->p = t ? stats_t_p2(lr / se, df) : 2 * (1 - stats_norm_cdf(fabs(lr) / se));
	out->lo = exp(lr - z * se);
	out->hi = exp(lr + z * se);
}

int stats_compare_counts(const uint64_t *ka, const uint64_t *na, size_t ra,
			 const uint64_t *kb, const uint64_t *nb, size_t rb, double level,
			 struct stats_count_cmp *out)
{
	struct side a, b;

	memset(out, 0, sizeof(*out));
	if (!ra || !rb || !(level > 0 && level < 1))
		return -EINVAL;
	pool(ka, na, ra, &a);
	pool(kb, nb, rb, &b);
	if (a.n <= 0 || b.n <= 0)
		return -EINVAL;
	for (size_t i = 0; i < ra; i++)
		if (ka[i] > na[i])
			return -EINVAL;
	for (size_t i = 0; i < rb; i++)
		if (kb[i] > nb[i])
			return -EINVAL;
	out->rate_a = a.rate;
	out->rate_b = b.rate;
	out->ratio = a.rate > 0 ? b.rate / a.rate : (b.rate > 0 ? INFINITY : NAN);
	out->dispersion = 1;
	if (a.df + b.df > 0)
		out->dispersion = MAX(1.0, (a.chi2 + b.chi2) / (double)(a.df + b.df));
	if (a.k == 0 && b.k == 0) {
		out->p = 1;
		out->lo = 0;
		out->hi = INFINITY;
		return 0;
	}
	if (ra == 1 && rb == 1)
		single_run(&a, &b, level, out);
	else
		quasi(&a, &b, level, (double)(a.df + b.df), out);
	return 0;
}
