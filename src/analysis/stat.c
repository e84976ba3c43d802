/*
 * stat.c - the numbers behind `prof stat`: one column of doubles per
 * metric (one value per measured run), the outlier rule, and the
 * comparison of every column with a saved baseline report (Mann-Whitney U,
 * Benjamini-Hochberg across metrics, a bootstrap CI of the ratio of
 * medians) ending in an enum an_verdict per metric.
 *
 * A metric is "unavailable" (not zero) when the machine cannot measure it:
 * io_wait_s with task_delayacct off, a /proc file that cannot be read.
 * Unavailable metrics are shown as such and never compared.
 */
#include "prof/analysis.h"
#include "prof/resource.h"
#include "prof/stats.h"
#include <errno.h>
#include <math.h>
#include <string.h>

/* The built-in metrics, in report order; -e counters follow them. */
enum {
	M_WALL, M_USER, M_SYS, M_OFF_CPU, M_IO_WAIT, M_RUNQ_WAIT, M_RSS, M_VCS, M_IVCS,
	M_MINFLT, M_MAJFLT, M_READ, M_WRITE, M_NBASE
};

static const char *const base_metrics[M_NBASE][2] = {
	[M_WALL] = { "wall_s", "s" }, [M_USER] = { "cpu_user_s", "s" },
	[M_SYS] = { "cpu_sys_s", "s" }, [M_OFF_CPU] = { "off_cpu_s", "s" },
	[M_IO_WAIT] = { "io_wait_s", "s" }, [M_RUNQ_WAIT] = { "runq_wait_s", "s" },
	[M_RSS] = { "rss_peak_bytes", "bytes" },
	[M_VCS] = { "ctx_switches_voluntary", "count" },
	[M_IVCS] = { "ctx_switches_involuntary", "count" },
	[M_MINFLT] = { "page_faults_minor", "count" }, [M_MAJFLT] = { "page_faults_major", "count" },
	[M_READ] = { "read_bytes", "bytes" }, [M_WRITE] = { "write_bytes", "bytes" },
};

#define DELAYACCT_OFF "kernel.task_delayacct is 0 (enable: sysctl -w kernel.task_delayacct=1)"

void an_stat_init(struct an_stat *st, const struct prof_perf_event_desc *const *counters,
		  unsigned n_counters, bool delayacct, bool io_wait_on)
{
	struct an_stat_metric *m = st->m;
	size_t k = 0;

	memset(st, 0, sizeof(*st));
	for (size_t i = 0; i < M_NBASE; i++)
		m[k++] = (struct an_stat_metric){ .name = base_metrics[i][0],
						  .unit = base_metrics[i][1], .available = true };
	if (!delayacct) {
		m[M_RUNQ_WAIT].available = false;
		m[M_RUNQ_WAIT].why_not = DELAYACCT_OFF;
	}
	if (!io_wait_on) {
		m[M_IO_WAIT].available = false;
		m[M_IO_WAIT].why_not = DELAYACCT_OFF;
	}
	for (unsigned i = 0; i < n_counters && k < AN_STAT_MAX_METRICS; i++) {
		const char *nm = counters[i]->name;
		bool ns = !strcmp(nm, "task-clock") || !strcmp(nm, "cpu-clock");

		m[k++] = (struct an_stat_metric){ .name = nm, .unit = ns ? "ns" : "count",
						  .available = true };
	}
	st->nm = k;
}

void an_stat_free(struct an_stat *st)
{
	for (size_t i = 0; i < st->nm; i++)
		VEC_FREE(&st->m[i].runs);
}

static void unavailable(struct an_stat_metric *m, const char *why)
{
	if (m->available) {
		m->available = false;
		m->why_not = why;
	}
}

/* A metric missing from any run is unavailable for all: no partial columns. */
void an_stat_add_run(struct an_stat *st, const struct res_usage *u)
{
	struct an_stat_metric *m = st->m;
	double v[AN_STAT_MAX_METRICS] = {
		[M_WALL] = u->wall_s, [M_USER] = u->user_s, [M_SYS] = u->sys_s,
		[M_OFF_CPU] = u->off_cpu_s, [M_IO_WAIT] = u->io_wait_s,
		[M_RUNQ_WAIT] = u->runq_wait_s, [M_RSS] = (double)u->rss_peak_bytes,
		[M_VCS] = (double)u->vol_cs, [M_IVCS] = (double)u->invol_cs,
		[M_MINFLT] = (double)u->minflt, [M_MAJFLT] = (double)u->majflt,
		[M_READ] = (double)u->read_bytes, [M_WRITE] = (double)u->write_bytes,
	};

	for (size_t i = M_NBASE; i < st->nm; i++)
		v[i] = (double)u->counters[i - M_NBASE];
	if (!u->have_io_wait)
		unavailable(&m[M_IO_WAIT], "no I/O-wait source during a run (kernel.task_delayacct was 0 and sched_switch could not be sampled)");
	else if (!m[M_IO_WAIT].source)
		m[M_IO_WAIT].source = u->io_wait_source;
	if (!u->have_runq_wait)
		unavailable(&m[M_RUNQ_WAIT], "needs delay accounting via taskstats (CAP_NET_ADMIN)");
	if (!u->have_proc_io) {
		unavailable(&m[M_READ], "/proc/PID/io unreadable");
		unavailable(&m[M_WRITE], "/proc/PID/io unreadable");
	}
	for (size_t i = 0; i < st->nm; i++)
		VEC_PUSH(&m[i].runs, v[i]);
}

size_t an_stat_outliers(const struct an_stat_metric *m, bool *flags)
{
	double med = stats_median(m->runs.v, m->runs.n);
	size_t n = 0;

	stats_outliers(m->runs.v, m->runs.n, flags);
	for (size_t i = 0; i < m->runs.n; i++) {
		if (flags[i] && fabs(m->runs.v[i] - med) <= 0.01 * fabs(med))
			flags[i] = false;
		n += flags[i];
	}
	return n;
}

/* --- comparing with a baseline -------------------------------------------------- */

static uint64_t name_seed(const char *name)
{
	return hash_bytes(name, strlen(name)) ^ 0x70726f66ULL;
}

/*
 * Zero baseline (e.g. 0 major faults): a ratio is undefined, so the CI is
 * the bootstrap CI of the difference, and only its sign is used: any CI
 * that excludes 0 counts as beyond the threshold.
 */
static void zero_base_ci(const double *base, size_t nb, const struct an_stat_metric *m,
			 double alpha, struct an_stat_cmp *c)
{
	struct stats_ci ci;

	stats_bootstrap_ci(base, nb, m->runs.v, m->runs.n, STATS_MEDIAN, STATS_DIFF, 2000,
			   1 - alpha, name_seed(m->name), &ci);
	c->change = c->median > 0 ? INFINITY : -INFINITY;
	c->lo = ci.lo > 0 ? INFINITY : ci.lo < 0 && ci.hi < 0 ? -INFINITY : 0;
	c->hi = ci.hi < 0 ? -INFINITY : ci.lo > 0 ? INFINITY : 0;
}

static void compare_one(const struct an_stat_metric *m, const double *base, size_t nb,
			double alpha, struct an_stat_cmp *c)
{
	const double *cur = m->runs.v;
	size_t nc = m->runs.n;
	struct stats_mwu mwu;
	struct stats_ci ci;

	memset(c, 0, sizeof(*c));
	c->name = m->name;
	c->unit = m->unit;
	c->n_base = nb;
	c->n_new = nc;
	c->base_median = stats_median(base, nb);
	c->median = stats_median(cur, nc);
	stats_mann_whitney(base, nb, cur, nc, &mwu);
	c->p = mwu.p;
	if (c->base_median > 0) {
		c->change = c->median / c->base_median - 1;
		stats_bootstrap_ci(base, nb, cur, nc, STATS_MEDIAN, STATS_RATIO, 2000,
				   1 - alpha, name_seed(m->name), &ci);
		c->lo = ci.lo - 1;
		c->hi = ci.hi - 1;
	} else if (c->median != 0) {
		zero_base_ci(base, nb, m, alpha, c);
	}
	if (nb < 2 || nc < 2)	/* no spread observed yet: cannot extrapolate */
		return;
	c->runs_needed = stats_runs_needed(c->median - c->base_median, stats_stddev(base, nb),
					   stats_stddev(cur, nc), 1 - alpha, 0.8);
}

static void decide(struct an_stat_cmp *c, size_t n, const struct an_stat_opts *o)
{
	double p[AN_STAT_MAX_METRICS] = { 0 }, q[AN_STAT_MAX_METRICS];

	for (size_t i = 0; i < n; i++)
		p[i] = c[i].p;
	stats_bh_qvalues(p, n, q);
	for (size_t i = 0; i < n; i++) {
		c[i].q = q[i];
		if (q[i] < o->alpha && c[i].lo > o->threshold)
			c[i].verdict = AN_REGRESSION;
		else if (q[i] < o->alpha && c[i].hi < -o->threshold)
			c[i].verdict = AN_IMPROVEMENT;
		else if (fabs(c[i].change) > o->threshold && q[i] >= o->alpha)
			c[i].verdict = AN_INCONCLUSIVE;
		else
			c[i].verdict = AN_NO_CHANGE;
	}
}

static bool in_list(const char *list, const char *name)
{
	size_t n = strlen(name);

	if (!strcmp(list, "all"))
		return true;
	for (const char *p = list; (p = strstr(p, name)); p += n)
		if ((p == list || p[-1] == ',') && (p[n] == ',' || !p[n]))
			return true;
	return false;
}

int an_stat_compare(struct an_stat *st, const char *baseline_json, const struct an_stat_opts *o)
{
	st->nc = 0;
	for (size_t i = 0; i < st->nm; i++) {
		const struct an_stat_metric *m = &st->m[i];
		double *base;
		size_t nb;
		int r = res_baseline_runs(baseline_json, m->name, &base, &nb);

		if (r == -EINVAL)
			return -EINVAL;
		if (r < 0 || !nb || !m->available || !m->runs.n) {
			free(base);
			continue;
		}
		compare_one(m, base, nb, o->alpha, &st->c[st->nc]);
		st->c[st->nc++].gating = in_list(o->gate, m->name);
		free(base);
	}
	decide(st->c, st->nc, o);
	return 0;
}

unsigned an_stat_regressions(const struct an_stat *st)
{
	unsigned n = 0;

	for (size_t i = 0; i < st->nc; i++)
		n += st->c[i].gating && st->c[i].verdict == AN_REGRESSION;
	return n;
}
