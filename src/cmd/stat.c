/*
 * stat.c - `prof stat`: run a command N times and report CPU, memory, I/O
 * wait and off-CPU statistics across the runs, optionally with perf
 * counters, and compare against a saved baseline.  This file holds the
 * options and the wiring: res_run() measures one run (src/resource/), the
 * columns, outliers and verdicts are src/analysis/stat.c, the text and
 * JSON report src/output/stat.c.
 */
#include "prof/analysis.h"
#include "prof/cmd.h"
#include "prof/data.h"
#include "prof/perfdata.h"
#include "help-prof-stat.h"
#include "prof/options.h"
#include "prof/output.h"
#include "prof/offcpu.h"
#include "prof/resource.h"
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/*
 * Metrics whose regression fails the exit status by default.  Context
 * switches and faults follow machine load and page-cache state more than the
 * program; they are reported but only gate when asked for (--gate).
 */
#define DEFAULT_GATE "wall_s,cpu_user_s,cpu_sys_s,rss_peak_bytes"

struct stat_opts {
	uint64_t runs, warmup;
	bool json, ignore_failure;
	const char *out_path, *baseline, *save_baseline;
	struct an_stat_opts cmp;
	const struct prof_perf_event_desc *counters[RES_MAX_COUNTERS];
	unsigned n_counters;
	char **argv;
};

static void usage(FILE *f)
{
	fputs(help_prof_stat, f);
}

/* --- options -------------------------------------------------------------------- */

static int parse_events(struct stat_opts *o, const char *flag, const char *list)
{
	char *copy = xstrdup(list), *save = NULL;
	int ret = 0;

	for (char *tok = strtok_r(copy, ",", &save); tok && !ret; tok = strtok_r(NULL, ",", &save)) {
		const struct prof_perf_event_desc *spec = prof_perf_event_find(tok);

		if (!spec)
			ret = usage_error("unknown event '%s' for %s (known: %s)", tok, flag,
					  prof_perf_event_names());
		else if (o->n_counters == RES_MAX_COUNTERS)
			ret = usage_error("too many %s events (at most %d)", flag, RES_MAX_COUNTERS);
		else
			o->counters[o->n_counters++] = spec;
	}
	free(copy);
	return ret;
}

enum { O_RUNS = 1, O_EVENTS, O_OUTPUT, O_WARMUP, O_FORMAT, O_BASELINE, O_SAVE, O_IGNORE,
       O_THRESHOLD, O_ALPHA, O_GATE };

static const struct opt options[] = {
	{ O_RUNS, 'r', "runs", OPT_VALUE }, { O_EVENTS, 'e', "events", OPT_VALUE },
	{ O_OUTPUT, 'o', "output", OPT_VALUE }, { O_WARMUP, 0, "warmup", OPT_VALUE },
	{ O_FORMAT, 0, "format", OPT_VALUE }, { O_BASELINE, 0, "baseline", OPT_VALUE },
	{ O_SAVE, 0, "save-baseline", OPT_VALUE }, { O_IGNORE, 0, "ignore-failure", OPT_FLAG },
	{ O_THRESHOLD, 0, "threshold", OPT_VALUE }, { O_ALPHA, 0, "alpha", OPT_VALUE },
	{ O_GATE, 0, "gate", OPT_VALUE },
	{ 0 },
};

static int apply_option(void *ctx, int id, const char *arg, const char *flag)
{
	struct stat_opts *o = ctx;

	switch (id) {
	case O_RUNS: return opt_u64(flag, arg, 1, 1000000, &o->runs);
	case O_WARMUP: return opt_u64(flag, arg, 0, 1000000, &o->warmup);
	case O_EVENTS: return parse_events(o, flag, arg);
	case O_OUTPUT: o->out_path = arg; return 0;
	case O_FORMAT: return opt_text_or_json(flag, arg, &o->json);
	case O_BASELINE: o->baseline = arg; return 0;
	case O_SAVE: o->save_baseline = arg; return 0;
	case O_IGNORE: o->ignore_failure = true; return 0;
	case O_THRESHOLD: return opt_percent(flag, arg, 1000, &o->cmp.threshold);
	case O_ALPHA: return opt_double(flag, arg, 1e-9, 0.999999, &o->cmp.alpha);
	case O_GATE: o->cmp.gate = arg; return 0;
	}
	return -EINVAL;
}

/* Returns 0, OPT_HELP or -EINVAL. */
static int parse_options(int argc, char **argv, struct stat_opts *o)
{
	int rest, ret;

	o->runs = 1;
	o->cmp = (struct an_stat_opts){ .alpha = 0.05, .threshold = 0.02, .gate = DEFAULT_GATE };
	ret = opt_parse(options, argc, argv, OPT_STOP_AT_ARG, apply_option, o, &rest);
	if (ret)
		return ret;
	if (rest >= argc)
		return usage_error("no command given (usage: prof stat [options] -- CMD [ARGS])");
	o->argv = argv + rest;
	return 0;
}

/* --- running ----------------------------------------------------------------------- */

/* Returns 0, EXIT_CMD_FAILED or -errno (could not run at all); rep gets the
 * failed runs' count and how the last one failed (rep). */
static int run_all(const struct stat_opts *o, struct an_stat *st, struct prof_stat_report *rep)
{
	struct res_run_opts ro = {
		.argv = o->argv, .counters = o->counters, .n_counters = o->n_counters,
		.stdout_fd = -1, .stderr_fd = -1,
	};
	uint64_t n = o->warmup + o->runs;
	struct progress pr;

	rep->failed = 0;
	progress_start(&pr, "run", true);
	for (uint64_t i = 0; i < n; i++) {
		struct res_usage u;
		int r;

		if (n > 1)
			progress_update(&pr, i, n);
		r = res_run(&ro, &u);
		progress_done(&pr);

		if (r < 0)
			return error("cannot run '%s': %s", o->argv[0], strerror(-r)), r;
		if (!WIFEXITED(u.wait_status) || WEXITSTATUS(u.wait_status)) {
			rep->failed++;
			res_status_str(u.wait_status, rep->failed_how, sizeof(rep->failed_how));
			if (!o->ignore_failure) {
				error("run %" PRIu64 ": '%s' failed (%s); use --ignore-failure to measure anyway",
				      i + 1, o->argv[0], rep->failed_how);
				return EXIT_CMD_FAILED;
			}
		}
		if (i >= o->warmup)
			an_stat_add_run(st, &u);
	}
	return 0;
}

/* --- output ----------------------------------------------------------------------- */

static int write_text_file(const char *path, const struct strbuf *sb)
{
	struct out_file out;
	int ret = perfdata_refuse_over_recording(path);

	if (ret < 0 || (ret = out_open(&out, path)) < 0)
		return ret;
	fwrite(sb->buf, 1, sb->len, out.f);
	return out_commit(&out);
}

static int emit(const struct stat_opts *o, struct prof_stat_report *r)
{
	struct strbuf out = STRBUF_INIT, base = STRBUF_INIT;
	int ret = 0;

	if (o->json)
		prof_output_stat_json(&out, r);
	else
		prof_output_stat_text(&out, r);
	if (o->save_baseline) {
		struct prof_stat_report plain = *r;

		plain.baseline = NULL;
		prof_output_stat_json(&base, &plain);
		ret = write_text_file(o->save_baseline, &base);
	}
	if (o->out_path) {
		if (write_text_file(o->out_path, &out) < 0)
			ret = -EIO;
	} else {
		fflush(stdout);
		/* stderr like perf stat: CMD's stdout passes through unmixed */
		if (write_all(2, out.buf, out.len) < 0)
			ret = -EIO;
	}
	sb_release(&out);
	sb_release(&base);
	return ret;
}

static int measure(const struct stat_opts *o, struct an_stat *st, char *baseline)
{
	struct prof_stat_report r = { .argv = o->argv, .runs = o->runs, .warmup = o->warmup,
				      .st = st, .alpha = o->cmp.alpha, .threshold = o->cmp.threshold };
	bool switches = false;
	char why[512];
	int ret;

	r.delayacct = res_delayacct_enabled() == 1;
	if (!r.delayacct && !(switches = prof_iowait_probe(why, sizeof(why)) == 0))
		info("io_wait_s unavailable: kernel.task_delayacct is 0 (sysctl -w kernel.task_delayacct=1 enables it), and %s",
		     why);
	an_stat_init(st, o->counters, o->n_counters, r.delayacct, r.delayacct || switches);
	ret = run_all(o, st, &r);
	if (ret < 0)
		return EXIT_USAGE;
	if (ret == 0 && baseline) {
		if (an_stat_compare(st, baseline, &o->cmp) < 0)
			return error("'%s' is not a prof stat JSON report (write one with --save-baseline)",
				     o->baseline), EXIT_USAGE;
		r.baseline = o->baseline;
	}
	if (st->m[0].runs.n && emit(o, &r) < 0 && !ret)
		ret = EXIT_USAGE;
	return ret;
}

int cmd_stat(int argc, char **argv)
{
	struct stat_opts o = { 0 };
	struct an_stat *st;
	char *baseline = NULL;
	int ret = parse_options(argc, argv, &o);
	unsigned regressions;

	if (ret == OPT_HELP)
		usage(stdout);
	if (ret)
		return ret == OPT_HELP ? 0 : EXIT_USAGE;
	if (res_counters_keep_countable(o.counters, &o.n_counters) < 0)
		return EXIT_USAGE;
	if (o.baseline && !(baseline = res_baseline_load(o.baseline)))
		return EXIT_USAGE;
	st = xmalloc(sizeof(*st));
	ret = measure(&o, st, baseline);
	regressions = ret ? 0 : an_stat_regressions(st);
	an_stat_free(st);
	free(st);
	free(baseline);
	if (ret)
		return ret;
	if (regressions)
		info("%u metric%s regressed against %s", regressions, regressions == 1 ? "" : "s",
		     o.baseline);
	return regressions ? EXIT_REGRESSION : 0;
}
