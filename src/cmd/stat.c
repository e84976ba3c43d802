/*
 * stat.c - `prof stat`: run a command N times and report CPU, memory, I/O
 * wait and off-CPU statistics across the runs (min, median, mean, p95, p99,
 * max, stddev, cv, modified-z outliers), optionally with perf counters, and
 * compare against a saved baseline with Mann-Whitney U + bootstrap CI.
 *
 * Design notes: every metric is a column of doubles, one per measured run
 * (warm-up runs are discarded).  A metric is "unavailable" (not zero) when
 * this machine cannot measure it: io_wait_s with task_delayacct off, a perf
 * counter the kernel refuses.  Unavailable metrics are shown as such in
 * text and JSON and never compared.
 */
#include "prof/cmd.h"
#include "prof/resource.h"
#include "prof/stats.h"
#include "prof/util.h"
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define EXIT_CMD_FAILED 3
#define MAX_METRICS (16 + RES_MAX_COUNTERS)
/*
 * Metrics whose regression fails the exit status by default.  Context
 * switches and faults follow machine load and page-cache state more than the
 * program; they are reported but only gate when asked for (--gate).
 */
#define DEFAULT_GATE "wall_s,cpu_user_s,cpu_sys_s,rss_peak_bytes"

struct metric {
	const char *name, *unit;
	bool available;
	const char *why_not;		/* when !available */
	const char *source;		/* how it was measured, when there are several ways */
	VEC(double) runs;
};

struct stat_opts {
	uint64_t runs, warmup;
	bool json, ignore_failure;
	const char *out_path, *baseline, *save_baseline;
	double threshold, alpha;
	const char *gate;		/* comma list of metrics, or "all" */
	const struct prof_perf_event_desc *counters[RES_MAX_COUNTERS];
	unsigned n_counters;
	char **argv;
};

struct comparison {
	const char *name;
	double base_median, median, change, lo, hi, p, q;
	size_t n_base, n_new;
	const char *verdict;
	uint64_t runs_needed;
	bool gating;			/* counts for the exit status */
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: prof stat [-r N] [--warmup K] [-e EVENTS] [--format=text|json] [-o FILE]\n"
		"                 [--baseline FILE] [--save-baseline FILE] [--threshold PCT]\n"
		"                 [--ignore-failure] -- CMD [ARGS]\n"
		"\n"
		"Run CMD N times (its stdout/stderr pass through) and report, per metric, min,\n"
		"median, mean, p95, p99, max, stddev and cv across runs, flagging outliers by\n"
		"modified z-score (|z| > 3.5).  Metrics: wall_s, cpu_user_s, cpu_sys_s,\n"
		"off_cpu_s (wall - user - sys: exact only for single-threaded commands),\n"
		"io_wait_s (block I/O delay of the main thread with kernel.task_delayacct=1;\n"
		"else, as prof record measures it, D-state switch-outs with an I/O wait on the\n"
		"kernel stack, of every thread and descendant: needs root or CAP_PERFMON),\n"
		"runq_wait_s (runnable but waiting for a CPU; delayacct + CAP_NET_ADMIN),\n"
		"rss_peak_bytes (largest peak RSS of the command or any one descendant),\n"
		"ctx_switches_voluntary, ctx_switches_involuntary, page_faults_minor,\n"
		"page_faults_major, read_bytes, write_bytes (/proc/PID/io) and each -e counter.\n"
		"\n"
		"  -r, --runs N          measured runs (default 1)\n"
		"      --warmup K        unmeasured runs first (default 0)\n"
		"  -e, --events LIST     perf counters, comma-separated: %s\n"
		"      --format FMT      text (default) or json\n"
		"  -o, --output FILE     write the report to FILE (default: stderr, as perf\n"
		"                        stat does, so CMD's stdout passes through clean)\n"
		"      --save-baseline F also write the JSON report to F\n"
		"      --baseline FILE   compare with a saved JSON report: per metric,\n"
		"                        Mann-Whitney U (Benjamini-Hochberg across metrics)\n"
		"                        and a 95%% bootstrap CI of the ratio of medians\n"
		"      --threshold PCT   changes inside +-PCT%% are noise (default 2)\n"
		"      --alpha A         significance level (default 0.05)\n"
		"      --gate LIST       metrics whose regression sets the exit status\n"
		"                        (default " DEFAULT_GATE "; 'all' for every one)\n"
		"      --ignore-failure  keep going when CMD exits non-zero\n"
		"\n"
		"A change is a regression when its q-value < alpha and the whole CI lies above\n"
		"1 + PCT%% (every metric here is lower-is-better).  With 5 runs per side the\n"
		"smallest possible p is 0.008, which Benjamini-Hochberg across a dozen metrics\n"
		"does not accept: use -r 8 or more on both sides.\n"
		"\n"
		"exit status: 0 no significant regression, 1 regression of a --gate metric\n"
		"against --baseline, "
"2 usage or input error, 3 the command failed (without --ignore-failure).\n",
		prof_perf_event_names());
}

/* --- options -------------------------------------------------------------------- */

static int parse_events(struct stat_opts *o, const char *list)
{
	char *copy = xstrdup(list), *save = NULL;
	int ret = 0;

	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		const struct prof_perf_event_desc *spec = prof_perf_event_find(tok);

		if (!spec) {
			ret = error("unknown event '%s' for -e (known: %s)", tok, prof_perf_event_names());
			break;
		}
		if (o->n_counters == RES_MAX_COUNTERS) {
			ret = error("too many -e events (at most %d)", RES_MAX_COUNTERS);
			break;
		}
		o->counters[o->n_counters++] = spec;
	}
	free(copy);
	return ret;
}

static int parse_double(const char *s, const char *what, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	if (errno || end == s || *end || !(*out >= 0))
		return error("invalid %s '%s' (want a non-negative number)", what, s);
	return 0;
}

static int parse_options(int argc, char **argv, struct stat_opts *o)
{
	enum { OPT_WARMUP = 256, OPT_FORMAT, OPT_BASELINE, OPT_SAVE, OPT_IGNORE, OPT_THRESH, OPT_ALPHA, OPT_GATE };
	static const struct option longopts[] = {
		{ "runs", required_argument, NULL, 'r' },
		{ "events", required_argument, NULL, 'e' },
		{ "output", required_argument, NULL, 'o' },
		{ "warmup", required_argument, NULL, OPT_WARMUP },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "baseline", required_argument, NULL, OPT_BASELINE },
		{ "save-baseline", required_argument, NULL, OPT_SAVE },
		{ "ignore-failure", no_argument, NULL, OPT_IGNORE },
		{ "threshold", required_argument, NULL, OPT_THRESH },
		{ "alpha", required_argument, NULL, OPT_ALPHA },
		{ "gate", required_argument, NULL, OPT_GATE },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	o->runs = 1;
	o->threshold = 0.02;
	o->gate = DEFAULT_GATE;
	o->alpha = 0.05;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+r:e:o:", longopts, NULL)) != -1) {
		switch (c) {
		case 'r':
			if (parse_u64(optarg, &o->runs) < 0 || !o->runs || o->runs > 1000000)
				return error("invalid -r '%s' (want 1..1000000 runs)", optarg);
			break;
		case OPT_WARMUP:
			if (parse_u64(optarg, &o->warmup) < 0 || o->warmup > 1000000)
				return error("invalid --warmup '%s' (want 0..1000000)", optarg);
			break;
		case 'e':
			if (parse_events(o, optarg) < 0)
				return -1;
			break;
		case 'o': o->out_path = optarg; break;
		case OPT_FORMAT:
			if (strcmp(optarg, "text") && strcmp(optarg, "json"))
				return error("unknown --format '%s' (want text or json)", optarg);
			o->json = !strcmp(optarg, "json");
			break;
		case OPT_BASELINE: o->baseline = optarg; break;
		case OPT_SAVE: o->save_baseline = optarg; break;
		case OPT_IGNORE: o->ignore_failure = true; break;
		case OPT_THRESH:
			if (parse_double(optarg, "--threshold", &o->threshold) < 0)
				return -1;
			o->threshold /= 100;
			break;
		case OPT_GATE: o->gate = optarg; break;
		case OPT_ALPHA:
			if (parse_double(optarg, "--alpha", &o->alpha) < 0 || o->alpha >= 1)
				return error("invalid --alpha '%s' (want 0 < A < 1)", optarg);
			break;
		default:
			return error("unknown or incomplete option '%s' (see 'prof stat --help')",
				     argv[optind - 1]);
		}
	}
	if (optind < argc && !strcmp(argv[optind], "--"))
		optind++;
	if (optind >= argc)
		return error("no command given (usage: prof stat [options] -- CMD [ARGS])");
	o->argv = argv + optind;
	return 0;
}

/*
 * Drop -e events this kernel refuses (no PMU here: cycles, instructions...),
 * saying so once; fail only if nothing the user asked for is countable.
 */
static int probe_counters(struct stat_opts *o)
{
	unsigned kept = 0, asked = o->n_counters;

	for (unsigned i = 0; i < asked; i++) {
		bool user_only;
		int r = res_counter_probe(o->counters[i], &user_only);

		if (r == 0) {
			if (user_only)
				warning("event '%s' excludes the kernel (perf_event_paranoid >= 2): "
					"kernel-side counts are missing; run as root or lower "
					"kernel.perf_event_paranoid", o->counters[i]->name);
			o->counters[kept++] = o->counters[i];
			continue;
		}
		warning("event '%s' cannot be counted here (%s%s); continuing without it",
			o->counters[i]->name, strerror(-r),
			(r == -ENOENT || r == -EOPNOTSUPP) ? ": no such PMU event on this machine" : "");
	}
	o->n_counters = kept;
	if (asked && !kept)
		return error("none of the -e events can be counted on this machine");
	return 0;
}

/* --- measuring ------------------------------------------------------------------ */

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

/* io_wait_on: delay accounting or the sched_switch samples work here. */
static void init_metrics(struct metric *m, size_t *n, const struct stat_opts *o, bool delayacct,
			 bool io_wait_on)
{
	size_t k = 0;

	for (size_t i = 0; i < M_NBASE; i++)
		m[k++] = (struct metric){ .name = base_metrics[i][0], .unit = base_metrics[i][1],
					  .available = true };
	if (!delayacct) {
		m[M_RUNQ_WAIT].available = false;
		m[M_RUNQ_WAIT].why_not = DELAYACCT_OFF;
	}
	if (!io_wait_on) {
		m[M_IO_WAIT].available = false;
		m[M_IO_WAIT].why_not = DELAYACCT_OFF;
	}
	for (unsigned i = 0; i < o->n_counters; i++) {
		const char *nm = o->counters[i]->name;
		bool ns = !strcmp(nm, "task-clock") || !strcmp(nm, "cpu-clock");

		m[k++] = (struct metric){ .name = nm, .unit = ns ? "ns" : "count", .available = true };
	}
	*n = k;
}

static void unavailable(struct metric *m, const char *why)
{
	if (m->available) {
		m->available = false;
		m->why_not = why;
	}
}

/* A metric missing from any run is unavailable for all: no partial columns. */
static void record_run(struct metric *m, size_t nm, const struct res_usage *u)
{
	double v[MAX_METRICS] = {
		[M_WALL] = u->wall_s, [M_USER] = u->user_s, [M_SYS] = u->sys_s,
		[M_OFF_CPU] = u->off_cpu_s, [M_IO_WAIT] = u->io_wait_s,
		[M_RUNQ_WAIT] = u->runq_wait_s, [M_RSS] = (double)u->rss_peak_bytes,
		[M_VCS] = (double)u->vol_cs, [M_IVCS] = (double)u->invol_cs,
		[M_MINFLT] = (double)u->minflt, [M_MAJFLT] = (double)u->majflt,
		[M_READ] = (double)u->read_bytes, [M_WRITE] = (double)u->write_bytes,
	};

	for (size_t i = M_NBASE; i < nm; i++)
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
	for (size_t i = 0; i < nm; i++)
		VEC_PUSH(&m[i].runs, v[i]);
}

/* Returns 0, EXIT_CMD_FAILED or -1 (could not run at all). */
static int run_all(const struct stat_opts *o, struct metric *m, size_t nm, uint64_t *failed)
{
	struct res_run_opts ro = {
		.argv = o->argv, .counters = o->counters, .n_counters = o->n_counters,
		.stdout_fd = -1, .stderr_fd = -1,
	};
	char buf[64];

	*failed = 0;
	for (uint64_t i = 0; i < o->warmup + o->runs; i++) {
		struct res_usage u;
		int r = res_run(&ro, &u);

		if (r < 0)
			return error("cannot run '%s': %s", o->argv[0], strerror(-r));
		if (!WIFEXITED(u.wait_status) || WEXITSTATUS(u.wait_status)) {
			(*failed)++;
			if (!o->ignore_failure) {
				error("run %" PRIu64 ": '%s' failed (%s); use --ignore-failure to measure anyway",
				      i + 1, o->argv[0], res_status_str(u.wait_status, buf, sizeof(buf)));
				return EXIT_CMD_FAILED;
			}
		}
		if (i >= o->warmup)
			record_run(m, nm, &u);
	}
	return 0;
}

/* --- comparing -------------------------------------------------------------------- */

static uint64_t name_seed(const char *name)
{
	return hash_bytes(name, strlen(name)) ^ 0x70726f66ULL;
}

static void compare_one(const struct metric *m, const double *base, size_t nb,
			const struct stat_opts *o, struct comparison *c)
{
	const double *cur = m->runs.v;
	size_t nc = m->runs.n;
	struct stats_mwu mwu;
	struct stats_ci ci;

	memset(c, 0, sizeof(*c));
	c->name = m->name;
	c->n_base = nb;
	c->n_new = nc;
	c->base_median = stats_median(base, nb);
	c->median = stats_median(cur, nc);
	stats_mann_whitney(base, nb, cur, nc, &mwu);
	c->p = mwu.p;
	if (c->base_median > 0) {
		c->change = c->median / c->base_median - 1;
		stats_bootstrap_ci(base, nb, cur, nc, STATS_MEDIAN, STATS_RATIO, 2000,
				   1 - o->alpha, name_seed(m->name), &ci);
		c->lo = ci.lo - 1;
		c->hi = ci.hi - 1;
	} else if (c->median == 0) {
		c->change = c->lo = c->hi = 0;
	} else {
		/*
		 * Zero baseline (e.g. 0 major faults): a ratio is undefined, so
		 * the CI is the bootstrap CI of the difference, and only its sign
		 * is used: any CI that excludes 0 counts as beyond the threshold.
		 */
		stats_bootstrap_ci(base, nb, cur, nc, STATS_MEDIAN, STATS_DIFF, 2000,
				   1 - o->alpha, name_seed(m->name), &ci);
		c->change = c->median > 0 ? INFINITY : -INFINITY;
		c->lo = ci.lo > 0 ? INFINITY : ci.lo < 0 && ci.hi < 0 ? -INFINITY : 0;
		c->hi = ci.hi < 0 ? -INFINITY : ci.lo > 0 ? INFINITY : 0;
	}
	double diff = c->median - c->base_median;
	if (nb < 2 || nc < 2)	/* no spread observed yet: cannot extrapolate */
		return;
	c->runs_needed = stats_runs_needed(diff, stats_stddev(base, nb), stats_stddev(cur, nc),
					   1 - o->alpha, 0.8);
}

static void verdicts(struct comparison *c, size_t n, const struct stat_opts *o)
{
	double p[MAX_METRICS], q[MAX_METRICS];

	for (size_t i = 0; i < n; i++)
		p[i] = c[i].p;
	stats_bh_qvalues(p, n, q);
	for (size_t i = 0; i < n; i++) {
		c[i].q = q[i];
		if (q[i] < o->alpha && c[i].lo > o->threshold)
			c[i].verdict = "regression";
		else if (q[i] < o->alpha && c[i].hi < -o->threshold)
			c[i].verdict = "improvement";
		else if (fabs(c[i].change) > o->threshold && q[i] >= o->alpha)
			c[i].verdict = "inconclusive";
		else
			c[i].verdict = "no change";
	}
}

/* Before any run, so a bad path or file costs the user no waiting. */
static char *load_baseline(const char *path)
{
	char *json = read_file(path, NULL);
	double *v;
	size_t n;

	if (!json) {
		error("cannot read baseline '%s': %s", path, strerror(errno));
		return NULL;
	}
	if (res_baseline_runs(json, "wall_s", &v, &n) < 0) {
		error("'%s' is not a prof stat JSON report (write one with --save-baseline)", path);
		free(json);
		return NULL;
	}
	free(v);
	return json;
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

static int compare_baseline(const struct stat_opts *o, char *json, struct metric *m, size_t nm,
			    struct comparison *c, size_t *nc)
{
	*nc = 0;
	for (size_t i = 0; i < nm; i++) {
		double *base;
		size_t nb;
		int r = res_baseline_runs(json, m[i].name, &base, &nb);

		if (r == -EINVAL) {
			return error("'%s' is not a prof stat JSON report (write one with --save-baseline)",
				     o->baseline);
		}
		if (r < 0 || !nb || !m[i].available || !m[i].runs.n) {
			free(base);
			continue;
		}
		compare_one(&m[i], base, nb, o, &c[*nc]);
		c[(*nc)++].gating = in_list(o->gate, m[i].name);
		free(base);
	}
	verdicts(c, *nc, o);
	return 0;
}

/* --- output ----------------------------------------------------------------------- */

static void json_str(struct strbuf *sb, const char *s)
{
	sb_addch(sb, '"');
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			sb_addf(sb, "\\%c", ch);
		else if (ch < 0x20)
			sb_addf(sb, "\\u%04x", ch);
		else
			sb_addch(sb, (char)ch);
	}
	sb_addch(sb, '"');
}

/* JSON has no inf/nan: write null. */
static void json_num(struct strbuf *sb, double v)
{
	if (isfinite(v))
		sb_addf(sb, "%.10g", v);
	else
		sb_adds(sb, "null");
}

/*
 * Modified z-score outliers (hyperfine's rule), but only where the run is
 * also more than 1% away from the median: near-constant metrics (peak RSS,
 * fault counts) have a tiny MAD, and a 0.1% wobble is not worth a warning.
 */
static size_t flag_outliers(const struct metric *m, bool *flags)
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

static void json_metric(struct strbuf *sb, const struct metric *m)
{
	struct stats_summary s;
	bool flags[m->runs.n ? m->runs.n : 1];

	json_str(sb, m->name);
	sb_addf(sb, ": {\"unit\": \"%s\", \"available\": %s", m->unit, m->available ? "true" : "false");
	if (m->source && m->available) {
		sb_adds(sb, ", \"source\": ");
		json_str(sb, m->source);
	}
	if (!m->available || !m->runs.n) {
		sb_adds(sb, ", \"reason\": ");
		json_str(sb, m->why_not ? m->why_not : "no runs");
		sb_adds(sb, "}");
		return;
	}
	stats_summarize(m->runs.v, m->runs.n, &s);
	flag_outliers(m, flags);
	const char *keys[] = { "min", "median", "mean", "p95", "p99", "max", "stddev", "cv" };
	double vals[] = { s.min, s.median, s.mean, s.p95, s.p99, s.max, s.stddev, s.cv };
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		sb_addf(sb, ", \"%s\": ", keys[i]);
		json_num(sb, vals[i]);
	}
	sb_adds(sb, ", \"outliers\": [");
	for (size_t i = 0, k = 0; i < m->runs.n; i++)
		if (flags[i])
			sb_addf(sb, "%s%zu", k++ ? ", " : "", i);
	sb_adds(sb, "], \"runs\": [");
	for (size_t i = 0; i < m->runs.n; i++) {
		if (i)
			sb_adds(sb, ", ");
		json_num(sb, m->runs.v[i]);
	}
	sb_adds(sb, "]}");
}

static void json_comparison(struct strbuf *sb, const struct stat_opts *o,
			    const struct comparison *c, size_t nc)
{
	sb_adds(sb, ",\n  \"comparison\": {\"baseline\": ");
	json_str(sb, o->baseline);
	sb_addf(sb, ", \"alpha\": %g, \"threshold\": %g, \"metrics\": {", o->alpha, o->threshold);
	for (size_t i = 0; i < nc; i++) {
		sb_adds(sb, i ? ",\n    " : "\n    ");
		json_str(sb, c[i].name);
		const char *keys[] = { "baseline_median", "median", "change", "ci_lo", "ci_hi", "p", "q" };
		double vals[] = { c[i].base_median, c[i].median, c[i].change, c[i].lo, c[i].hi,
				  c[i].p, c[i].q };
		sb_adds(sb, ": {");
		for (size_t k = 0; k < ARRAY_SIZE(keys); k++) {
			sb_addf(sb, "%s\"%s\": ", k ? ", " : "", keys[k]);
			json_num(sb, vals[k]);
		}
		sb_addf(sb, ", \"runs_needed\": %" PRIu64 ", \"verdict\": \"%s\", \"gating\": %s}",
			c[i].runs_needed, c[i].verdict, c[i].gating ? "true" : "false");
	}
	sb_adds(sb, "}}");
}

static void render_json(struct strbuf *sb, const struct stat_opts *o, const struct metric *m,
			size_t nm, uint64_t failed, bool delayacct, const struct comparison *c,
			size_t nc)
{
	sb_adds(sb, "{\n  \"tool\": \"prof stat\", \"version\": \"" PROF_VERSION "\",\n  \"command\": [");
	for (char **a = o->argv; *a; a++) {
		if (a != o->argv)
			sb_adds(sb, ", ");
		json_str(sb, *a);
	}
	sb_addf(sb, "],\n  \"runs\": %" PRIu64 ", \"warmup\": %" PRIu64 ", \"failed_runs\": %" PRIu64
		", \"delayacct\": %s,\n  \"metrics\": {",
		o->runs, o->warmup, failed, delayacct ? "true" : "false");
	for (size_t i = 0; i < nm; i++) {
		sb_adds(sb, i ? ",\n    " : "\n    ");
		json_metric(sb, &m[i]);
	}
	sb_adds(sb, "\n  }");
	if (c)
		json_comparison(sb, o, c, nc);
	sb_adds(sb, "\n}\n");
}

/* Seconds with microsecond digits; counts and bytes as integers when whole. */
static void text_val(struct strbuf *sb, const char *unit, double v)
{
	if (!strcmp(unit, "s"))
		sb_addf(sb, " %11.6f", v);
	else if (v == floor(v) && fabs(v) < 1e15)
		sb_addf(sb, " %11.0f", v);
	else
		sb_addf(sb, " %11.1f", v);
}

static void text_metric(struct strbuf *sb, const struct metric *m)
{
	struct stats_summary s;
	bool flags[m->runs.n ? m->runs.n : 1];
	size_t nout;

	if (!m->available || !m->runs.n) {
		sb_addf(sb, "%-26s unavailable: %s\n", m->name, m->why_not ? m->why_not : "no runs");
		return;
	}
	stats_summarize(m->runs.v, m->runs.n, &s);
	nout = flag_outliers(m, flags);
	sb_addf(sb, "%-26s", m->name);
	double vals[] = { s.min, s.median, s.mean, s.p95, s.p99, s.max, s.stddev };
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
}

static const struct metric *find_metric(const struct metric *m, size_t nm, const char *name)
{
	for (size_t i = 0; i < nm; i++)
		if (!strcmp(m[i].name, name))
			return &m[i];
	return &m[0];
}

static void render_text(struct strbuf *sb, const struct stat_opts *o, const struct metric *m,
			size_t nm, uint64_t failed, const struct comparison *c, size_t nc)
{
	sb_addf(sb, "\n prof stat: %" PRIu64 " run%s of '", o->runs, o->runs == 1 ? "" : "s");
	for (char **a = o->argv; *a; a++)
		sb_addf(sb, "%s%s", a == o->argv ? "" : " ", *a);
	sb_addf(sb, "'");
	if (o->warmup)
		sb_addf(sb, " after %" PRIu64 " warm-up run%s", o->warmup, o->warmup == 1 ? "" : "s");
	if (failed)
		sb_addf(sb, ", %" PRIu64 " failed", failed);
	sb_addf(sb, "\n\n%-26s %11s %11s %11s %11s %11s %11s %11s %7s\n", "metric", "min", "median",
		"mean", "p95", "p99", "max", "stddev", "cv");
	for (size_t i = 0; i < nm; i++)
		text_metric(sb, &m[i]);
	if (!c)
		return;
	sb_addf(sb, "\ncompared with %s (alpha %g, noise threshold %g%%):\n", o->baseline, o->alpha,
		100 * o->threshold);
	for (size_t i = 0; i < nc; i++) {
		const struct metric *mi = find_metric(m, nm, c[i].name);

		sb_addf(sb, "%-26s", c[i].name);
		text_val(sb, mi->unit, c[i].base_median);
		sb_adds(sb, " ->");
		text_val(sb, mi->unit, c[i].median);
		sb_addf(sb, "  %+7.1f%%  CI [%+.1f%%, %+.1f%%]  p=%.3g q=%.3g  %s", 100 * c[i].change,
			100 * c[i].lo, 100 * c[i].hi, c[i].p, c[i].q, c[i].verdict);
		if (!strcmp(c[i].verdict, "regression") && !c[i].gating)
			sb_adds(sb, " (not in --gate)");
		/* Only worth saying when it asks for more than was run. */
		if (!strcmp(c[i].verdict, "inconclusive") && c[i].runs_needed > c[i].n_new)
			sb_addf(sb, " (~%" PRIu64 " runs per side needed)", c[i].runs_needed);
		else if (!strcmp(c[i].verdict, "inconclusive") && (c[i].n_base < 2 || c[i].n_new < 2))
			sb_adds(sb, " (run -r 8 or more on both sides)");
		sb_addch(sb, '\n');
	}
}

static int write_text_file(const char *path, const struct strbuf *sb)
{
	FILE *f = fopen_output(path);

	if (!f)
		return error("cannot open '%s': %s", path, strerror(errno));
	fwrite(sb->buf, 1, sb->len, f);
	if (fclose(f) != 0)
		return error("cannot write '%s': %s", path, strerror(errno));
	return 0;
}

static void free_metrics(struct metric *m, size_t nm)
{
	for (size_t i = 0; i < nm; i++)
		VEC_FREE(&m[i].runs);
}

static int emit(const struct stat_opts *o, struct metric *m, size_t nm, uint64_t failed,
		bool delayacct, const struct comparison *c, size_t nc)
{
	struct strbuf out = STRBUF_INIT, base = STRBUF_INIT;
	int ret = 0;

	if (o->json)
		render_json(&out, o, m, nm, failed, delayacct, c, nc);
	else
		render_text(&out, o, m, nm, failed, c, nc);
	if (o->save_baseline) {
		render_json(&base, o, m, nm, failed, delayacct, NULL, 0);
		ret = write_text_file(o->save_baseline, &base);
	}
	if (o->out_path) {
		if (write_text_file(o->out_path, &out) < 0)
			ret = -1;
	} else {
		fflush(stdout);
		/* stderr like perf stat: CMD's stdout passes through unmixed */
		if (write_all(2, out.buf, out.len) < 0)
			ret = -1;
	}
	sb_release(&out);
	sb_release(&base);
	return ret;
}

int cmd_stat(int argc, char **argv)
{
	struct stat_opts o = { 0 };
	struct metric m[MAX_METRICS];
	struct comparison c[MAX_METRICS];
	size_t nm, nc = 0;
	uint64_t failed;
	char *baseline = NULL;
	bool delayacct, switches = false;
	char why[512];
	int st, regressions = 0;

	if (wants_help(argc, argv)) {
		usage(stdout);
		return 0;
	}
	if (parse_options(argc, argv, &o) < 0 || probe_counters(&o) < 0)
		return EXIT_USAGE;
	if (o.baseline && !(baseline = load_baseline(o.baseline)))
		return EXIT_USAGE;
	delayacct = res_delayacct_enabled() == 1;
	if (!delayacct && !(switches = res_iowait_probe(why, sizeof(why)) == 0))
		info("io_wait_s unavailable: kernel.task_delayacct is 0 (sysctl -w kernel.task_delayacct=1 enables it), and %s",
		     why);
	init_metrics(m, &nm, &o, delayacct, delayacct || switches);
	st = run_all(&o, m, nm, &failed);
	if (st < 0 || (st == 0 && baseline && compare_baseline(&o, baseline, m, nm, c, &nc) < 0)) {
		free_metrics(m, nm);
		free(baseline);
		return EXIT_USAGE;
	}
	free(baseline);
	if (m[0].runs.n && emit(&o, m, nm, failed, delayacct, o.baseline && st == 0 ? c : NULL, nc) < 0)
		st = st ? st : EXIT_USAGE;
	for (size_t i = 0; i < nc; i++)
		regressions += c[i].gating && !strcmp(c[i].verdict, "regression");
	free_metrics(m, nm);
	if (st)
		return st;
	if (regressions)
		info("%d metric%s regressed against %s", regressions, regressions == 1 ? "" : "s",
		     o.baseline);
	return regressions ? EXIT_REGRESSION : 0;
}
