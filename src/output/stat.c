/*
 * stat.c - prints `prof stat`'s report: the per-metric table (min, median,
 * mean, p95, p99, max, stddev, cv, outlier runs) and the comparison with a
 * baseline, as text or as JSON.  Every string goes through the shared
 * escaper, so a command line with any bytes in it still makes valid JSON.
 */
#include "prof/analysis.h"
#include "prof/output.h"
#include "prof/stats.h"
#include "output-priv.h"
#include <inttypes.h>
#include <math.h>
#include <string.h>

/* Runs a percentile needs before the report shows it (JSON: null): below
 * 20 and 100 runs, p95 and p99 are interpolations between the two largest
 * values, not an estimate of a tail. */
#define P95_MIN_RUNS 20
#define P99_MIN_RUNS 100

/* --- JSON ------------------------------------------------------------------------ */

static void json_metric(struct strbuf *sb, const struct an_stat_metric *m)
{
	struct stats_summary s;
	bool *flags;

	json_escape(sb, m->name);
	sb_addf(sb, ": {\"unit\": \"%s\", \"available\": %s", m->unit, m->available ? "true" : "false");
	if (m->source && m->available) {
		sb_adds(sb, ", \"source\": ");
		json_escape(sb, m->source);
	}
	if (!m->available || !m->runs.n) {
		sb_adds(sb, ", \"reason\": ");
		json_escape(sb, m->why_not ? m->why_not : "no runs");
		sb_adds(sb, "}");
		return;
	}
	stats_summarize(m->runs.v, m->runs.n, &s);
	flags = xcalloc(m->runs.n, sizeof(*flags));
	an_stat_outliers(m, flags);
	const char *keys[] = { "min", "median", "mean", "p95", "p99", "max", "stddev", "cv" };
	double vals[] = { s.min, s.median, s.mean, m->runs.n >= P95_MIN_RUNS ? s.p95 : NAN,
			  m->runs.n >= P99_MIN_RUNS ? s.p99 : NAN, s.max, s.stddev, s.cv };
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		sb_addf(sb, ", \"%s\": ", keys[i]);
		if (isnan(vals[i]))
			sb_adds(sb, "null");	/* too few runs for it */
		else
			json_number(sb, vals[i]);
	}
	sb_adds(sb, ", \"outliers\": [");
	for (size_t i = 0, k = 0; i < m->runs.n; i++)
		if (flags[i])
			sb_addf(sb, "%s%zu", k++ ? ", " : "", i);
	sb_adds(sb, "], \"runs\": [");
	for (size_t i = 0; i < m->runs.n; i++) {
		if (i)
			sb_adds(sb, ", ");
		json_number(sb, m->runs.v[i]);
	}
	sb_adds(sb, "]}");
	free(flags);
}

static void json_comparison(struct strbuf *sb, const struct prof_stat_report *r)
{
	const struct an_stat *st = r->st;

	sb_adds(sb, ",\n  \"comparison\": {\"baseline\": ");
	json_escape(sb, r->baseline);
	sb_adds(sb, ", \"alpha\": ");
	json_number(sb, r->alpha);
	sb_adds(sb, ", \"threshold\": ");
	json_number(sb, r->threshold);
	sb_adds(sb, ", \"metrics\": {");
	for (size_t i = 0; i < st->nc; i++) {
		const struct an_stat_cmp *c = &st->c[i];
		const char *keys[] = { "baseline_median", "median", "change", "ci_lo", "ci_hi", "p", "q" };
		double vals[] = { c->base_median, c->median, c->change, c->lo, c->hi, c->p, c->q };

		sb_adds(sb, i ? ",\n    " : "\n    ");
		json_escape(sb, c->name);
		sb_adds(sb, ": {");
		for (size_t k = 0; k < ARRAY_SIZE(keys); k++) {
			sb_addf(sb, "%s\"%s\": ", k ? ", " : "", keys[k]);
			json_number(sb, vals[k]);
		}
		sb_addf(sb, ", \"runs_needed\": %" PRIu64 ", \"verdict\": \"%s\", \"gating\": %s}",
			c->runs_needed, an_verdict_name(c->verdict), c->gating ? "true" : "false");
	}
	sb_adds(sb, "}}");
}

void prof_output_stat_json(struct strbuf *sb, const struct prof_stat_report *r)
{
	sb_adds(sb, "{\n  \"tool\": \"prof stat\", \"version\": \"" PROF_VERSION "\",\n  \"command\": [");
	for (char **a = r->argv; *a; a++) {
		if (a != r->argv)
			sb_adds(sb, ", ");
		json_escape(sb, *a);
	}
	sb_addf(sb, "],\n  \"runs\": %" PRIu64 ", \"warmup\": %" PRIu64 ", \"failed_runs\": %" PRIu64,
		r->runs, r->warmup, r->failed);
	if (r->failed) {
		sb_adds(sb, ", \"last_failure\": ");
		json_escape(sb, r->failed_how);
	}
	sb_addf(sb, ", \"delayacct\": %s,\n  \"metrics\": {", r->delayacct ? "true" : "false");
	for (size_t i = 0; i < r->st->nm; i++) {
		sb_adds(sb, i ? ",\n    " : "\n    ");
		json_metric(sb, &r->st->m[i]);
	}
	sb_adds(sb, "\n  }");
	if (r->baseline)
		json_comparison(sb, r);
	sb_adds(sb, "\n}\n");
}

/* --- text ------------------------------------------------------------------------ */

/* One value in an 11-column cell: seconds with microsecond digits, bytes
 * in B/KiB/MiB/GiB, nanoseconds in ms, counts as integers when whole. */
static void text_val(struct strbuf *sb, const char *unit, double v)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	size_t u = 0;

	if (isnan(v)) {
		sb_addf(sb, " %11s", "-");
	} else if (!strcmp(unit, "s")) {
		sb_addf(sb, " %11.6f", v);
	} else if (!strcmp(unit, "bytes")) {
		while (fabs(v) >= 1024 && u + 1 < ARRAY_SIZE(units)) {
			v /= 1024;
			u++;
		}
		sb_addf(sb, u ? " %7.2f %-3s" : " %9.0f %-1s", v, units[u]);
	} else if (!strcmp(unit, "ns")) {
		sb_addf(sb, " %8.3f ms", v / 1e6);
	} else if (v == floor(v) && fabs(v) < 1e15) {
		sb_addf(sb, " %11.0f", v);
	} else {
		sb_addf(sb, " %11.1f", v);
	}
}

static void text_metric(struct strbuf *sb, const struct an_stat_metric *m)
{
	struct stats_summary s;
	bool *flags;

	if (!m->available || !m->runs.n) {
		sb_addf(sb, "%-26s unavailable: %s\n", m->name, m->why_not ? m->why_not : "no runs");
		return;
	}
	stats_summarize(m->runs.v, m->runs.n, &s);
	flags = xcalloc(m->runs.n, sizeof(*flags));
	size_t nout = an_stat_outliers(m, flags);
	sb_addf(sb, "%-26s", m->name);
	double vals[] = { s.min, s.median, s.mean, m->runs.n >= P95_MIN_RUNS ? s.p95 : NAN,
			  m->runs.n >= P99_MIN_RUNS ? s.p99 : NAN, s.max, s.stddev };
	for (size_t i = 0; i < ARRAY_SIZE(vals); i++)
		text_val(sb, m->unit, vals[i]);
	sb_addf(sb, " %6.1f%%", 100 * s.cv);
	if (nout) {
		sb_adds(sb, "  outlier run");
		for (size_t i = 0; i < m->runs.n; i++)
			if (flags[i])
				sb_addf(sb, " %zu", i + 1);
	}
	if (m->source)
		sb_addf(sb, "  from %s", m->source);
	sb_addch(sb, '\n');
	free(flags);
}

static void text_comparison(struct strbuf *sb, const struct prof_stat_report *r)
{
	const struct an_stat *st = r->st;

	sb_addf(sb, "\ncompared with ");
	add_printable(sb, r->baseline, "", '?');
	sb_addf(sb, " (alpha %g, noise threshold %g%%):\n", r->alpha, 100 * r->threshold);
	for (size_t i = 0; i < st->nc; i++) {
		const struct an_stat_cmp *c = &st->c[i];

		sb_addf(sb, "%-26s", c->name);
		text_val(sb, c->unit, c->base_median);
		sb_adds(sb, " ->");
		text_val(sb, c->unit, c->median);
		sb_addf(sb, "  %+7.1f%%  CI [%+.1f%%, %+.1f%%]  p=%.3g q=%.3g  %s", 100 * c->change,
			100 * c->lo, 100 * c->hi, c->p, c->q, an_verdict_name(c->verdict));
		if (c->verdict == AN_REGRESSION && !c->gating)
			sb_adds(sb, " (not in --gate)");
		/* Only worth saying when it asks for more than was run. */
		if (c->verdict == AN_INCONCLUSIVE && c->runs_needed > c->n_new)
			sb_addf(sb, " (~%" PRIu64 " runs per side needed)", c->runs_needed);
		else if (c->verdict == AN_INCONCLUSIVE && (c->n_base < 2 || c->n_new < 2))
			sb_adds(sb, " (run -r 8 or more on both sides)");
		sb_addch(sb, '\n');
	}
}

/* One argument as a shell would need it: bare when safe, else in single
 * quotes (a ' inside as '\''), so the title reads back as the command. */
static void add_shell_word(struct strbuf *sb, const char *a)
{
	if (*a && !a[strspn(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=/.,:@%")]) {
		add_printable(sb, a, "", '?');
		return;
	}
	sb_addch(sb, '\'');
	for (const char *q = a; *q; q++) {
		if (*q == '\'')
			sb_adds(sb, "'\\''");
		else
			add_printable(sb, (char[]){ *q, 0 }, "", '?');
	}
	sb_addch(sb, '\'');
}

void prof_output_stat_text(struct strbuf *sb, const struct prof_stat_report *r)
{
	sb_addf(sb, "\n prof stat: %" PRIu64 " run%s of ", r->runs, r->runs == 1 ? "" : "s");
	for (char **a = r->argv; *a; a++) {
		if (a != r->argv)
			sb_addch(sb, ' ');
		add_shell_word(sb, *a);
	}
	if (r->warmup)
		sb_addf(sb, " after %" PRIu64 " warm-up run%s", r->warmup, r->warmup == 1 ? "" : "s");
	if (r->failed)
		sb_addf(sb, ", %" PRIu64 " failed (%s%s)", r->failed, r->failed > 1 ? "the last: " : "",
			r->failed_how);
	if (r->runs < P99_MIN_RUNS)
		sb_addf(sb, "\n %" PRIu64 " run%s: p95 needs %d or more (-r N), p99 %d, outlier flags %d",
			r->runs, r->runs == 1 ? "" : "s", P95_MIN_RUNS, P99_MIN_RUNS, STATS_OUTLIER_MIN_N);
	sb_addf(sb, "\n\n%-26s %11s %11s %11s %11s %11s %11s %11s %7s\n", "metric", "min", "median",
		"mean", "p95", "p99", "max", "stddev", "cv");
	for (size_t i = 0; i < r->st->nm; i++)
		text_metric(sb, &r->st->m[i]);
	if (r->baseline)
		text_comparison(sb, r);
}
