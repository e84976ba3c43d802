/*
 * report-options.c - `prof report`'s command line: prof's own flags
 * (--format, --metric, --diff, --open, filters) and perf report's, with
 * perf's meaning (--stdio, --children/--no-children, -s/--sort KEYS, -n,
 * -g caller|callee, --max-stack, -q, --header, --color, --percentage,
 * comma lists for --pid/--tid/-c/--comms/-d/--dsos).  perf flags prof
 * does not implement are refused with the reason (report-perf-only.c).
 */
#include "prof/data.h"
#include "prof/options.h"
#include "perf-only-priv.h"
#include "report-priv.h"
#include <errno.h>
#include <string.h>

enum { O_INPUT = 1, O_OUTPUT, O_FORMAT, O_FLAT, O_TREE, O_PID, O_TID, O_COMM, O_DSO, O_LIMIT,
       O_SORT, O_METRIC, O_DIFF, O_OPEN, O_INVERTED, O_STDIO, O_CHILDREN, O_NO_CHILDREN,
       O_NR_SAMPLES, O_GRAPH, O_MAX_STACK, O_QUIET, O_HEADER, O_COLOR, O_SOURCE_ROOT,
       O_PERCENTAGE, O_AT, O_SINCE, O_MIN_AGE, O_PERF_ONLY };

#define PERF_ONLY_MAX 40

static struct opt options[O_PERF_ONLY + PERF_ONLY_MAX + 1] = {
	{ O_INPUT, 'i', "input", OPT_VALUE }, { O_OUTPUT, 'o', "output", OPT_VALUE },
	{ O_FORMAT, 0, "format", OPT_VALUE }, { O_FLAT, 0, "flat", OPT_FLAG },
	{ O_TREE, 0, "tree", OPT_FLAG }, { O_PID, 0, "pid", OPT_VALUE },
	{ O_TID, 0, "tid", OPT_VALUE }, { O_COMM, 0, "comm", OPT_VALUE },
	{ O_COMM, 'c', "comms", OPT_VALUE }, { O_DSO, 0, "dso", OPT_VALUE },
	{ O_DSO, 'd', "dsos", OPT_VALUE }, { O_LIMIT, 0, "percent-limit", OPT_VALUE },
	{ O_SORT, 's', "sort", OPT_VALUE }, { O_METRIC, 0, "metric", OPT_VALUE },
	{ O_PERCENTAGE, 0, "percentage", OPT_VALUE }, { O_HEADER, 'I', "show-info", OPT_FLAG },
	{ O_DIFF, 0, "diff", OPT_VALUE }, { O_OPEN, 0, "open", OPT_FLAG },
	{ O_INVERTED, 0, "inverted", OPT_FLAG }, { O_SOURCE_ROOT, 0, "source-root", OPT_VALUE },
	{ O_AT, 0, "at", OPT_VALUE }, { O_SINCE, 0, "since", OPT_VALUE },
	{ O_MIN_AGE, 0, "min-age", OPT_VALUE },
	/* perf report's flags, with perf's meaning */
	{ O_STDIO, 0, "stdio", OPT_FLAG }, { O_CHILDREN, 0, "children", OPT_FLAG },
	{ O_NO_CHILDREN, 0, "no-children", OPT_FLAG }, { O_NR_SAMPLES, 'n', "show-nr-samples", OPT_FLAG },
	{ O_GRAPH, 'g', "call-graph", OPT_VALUE }, { O_MAX_STACK, 0, "max-stack", OPT_VALUE },
	{ O_QUIET, 'q', "quiet", OPT_FLAG }, { O_HEADER, 0, "header", OPT_FLAG },
	{ O_COLOR, 0, "color", OPT_OPTIONAL },
};

/* perf's comma lists: --pid 1,2 --tid 3 (repeated flags add to the list). */
struct id_slots {
	uint32_t *ids;
	size_t *n;
};

static int add_id(void *ctx, uint64_t id, const char *flag)
{
	struct id_slots *s = ctx;

	if (*s->n == PROF_VIEW_IDS_MAX)
		return usage_error("too many ids for %s (at most %d)", flag, PROF_VIEW_IDS_MAX);
	s->ids[(*s->n)++] = (uint32_t)id;
	return 0;
}

static int parse_ids(const char *flag, const char *arg, uint32_t *ids, size_t *n)
{
	struct id_slots s = { ids, n };

	return opt_id_list(flag, arg, 0, UINT32_MAX, add_id, &s);
}

/* A plain argument: HEAD after --diff BASE, else the input file. */
static int set_file(struct report_opts *o, const char *arg)
{
	if (o->diff_base && !o->diff_head)
		o->diff_head = arg;
	else if (!o->input)
		o->input = arg;		/* `prof report FILE` works too */
	else
		return usage_error("unexpected argument '%s'", arg);
	return 0;
}

/* --sort self|total (prof's table order) or perf's keys: comm,dso,sym... */
static int parse_sort(struct report_opts *o, const char *flag, const char *arg)
{
	if (prof_output_sort_parse(&o->view, arg) < 0)
		return usage_error("unknown %s '%s' (want self, total, or keys from comm, pid, tid, dso, sym, srcline)",
				   flag, arg);
	return 0;
}

/* perf's -g caller|callee (the tree's direction); none: the flat table. */
static int parse_graph(struct report_opts *o, const char *flag, const char *arg)
{
	static const char *const modes[] = { "caller", "callee", "none", NULL };
	int k = opt_choice(flag, arg, modes);

	if (k < 0)
		return k;
	o->tree = k != 2;
	o->view.inverted = k == 1;
	return 0;
}

static int apply_option(void *ctx, int id, const char *arg, const char *flag)
{
	struct report_opts *o = ctx;

	switch (id) {
	case OPT_ARG: return set_file(o, arg);
	case O_INPUT: o->input = arg; return 0;
	case O_OUTPUT: o->output = arg; return 0;
	case O_FORMAT:
		if (prof_format_parse(arg, &o->format) < 0)
			return usage_error("unknown --format '%s' (want text, folded, json, flamegraph, "
					   "html, speedscope, pprof, callgrind or firefox)", arg);
		return 0;
	case O_DIFF: o->diff_base = arg; return 0;
	case O_OPEN: o->open = true; o->format = PROF_FMT_HTML; return 0;
	case O_INVERTED: o->view.inverted = true; return 0;
	case O_SOURCE_ROOT:
		VEC_PUSH(&o->source_roots, arg);
		o->view.source_roots = o->source_roots.v;
		o->view.n_source_roots = o->source_roots.n;
		return 0;
	case O_FLAT: o->tree = false; return 0;
	case O_TREE: o->tree = true; return 0;
	case O_PID: return parse_ids(flag, arg, o->view.pids, &o->view.npids);
	case O_TID: return parse_ids(flag, arg, o->view.tids, &o->view.ntids);
	case O_PERCENTAGE: {
		static const char *const kinds[] = { "absolute", "relative", NULL };
		int k = opt_choice(flag, arg, kinds);
		if (k < 0)
			return k;
		o->view.percent_relative = k == 1;
		return 0;
	}
	case O_COMM: o->view.comm = arg; return 0;
	case O_DSO: o->view.dso = arg; return 0;
	case O_LIMIT:
		o->have_limit = true;
		return opt_double(flag, arg, 0, 100, &o->view.percent_limit);
	case O_SORT: return parse_sort(o, flag, arg);
	case O_CHILDREN: o->view.sort = PROF_SORT_TOTAL; return 0;
	case O_NO_CHILDREN: o->view.sort = PROF_SORT_SELF; return 0;
	case O_STDIO: case O_NR_SAMPLES: return 0;	/* text is the default; samples are shown */
	case O_GRAPH: return parse_graph(o, flag, arg);
	case O_MAX_STACK: {
		uint64_t v;
		if (opt_u64(flag, arg, 1, UINT32_MAX, &v) < 0)
			return -EINVAL;
		o->view.max_stack = (uint32_t)v;
		return 0;
	}
	case O_QUIET: o->view.quiet = true; prof_quiet = 1; return 0;
	case O_HEADER: o->view.full_header = true; return 0;
	case O_COLOR: return opt_color(flag, arg, &o->color);
	case O_AT: return opt_double(flag, arg, 0, 1e9, &o->at);
	case O_SINCE: return opt_double(flag, arg, 0, 1e9, &o->since);
	case O_MIN_AGE: return opt_double(flag, arg, 0, 1e9, &o->min_age);
	case O_METRIC:
		o->have_metric = true;
		if (prof_view_metric_parse(arg, &o->view.metric) < 0)
			return usage_error("unknown --metric '%s' (want cpu, off-cpu, io-wait, sleep, wall, allocs, alloc-bytes, live-bytes or peak-bytes)",
					   arg);
		return 0;
	}
	return cmd_perf_only_refuse(&report_perf_only, id - O_PERF_ONLY, flag);
}

/* --at, --since, --min-age: heap metrics only (live-bytes unless another
 * is asked for), one recording, and the leak view is at the end. */
static int check_snapshot(struct report_opts *o)
{
	bool at = o->at >= 0, since = o->since >= 0, age = o->min_age >= 0;

	if (!at && !since && !age)
		return 0;
	if (!o->have_metric)
		o->view.metric = PROF_VIEW_LIVE_BYTES;
	else if (!prof_view_metric_is_heap(o->view.metric))
		return usage_error("--at, --since and --min-age show heap metrics, not --metric=%s",
				   prof_view_metric_name(o->view.metric));
	if (o->diff_base)
		return usage_error("--at, --since and --min-age take one recording, not --diff");
	if (age && (at || since))
		return usage_error("--min-age is the leak view at the end; it takes no --at or --since");
	if (since && at && o->since > o->at)
		return usage_error("--since %g is after --at %g", o->since, o->at);
	return 0;
}

/* Returns 0, OPT_HELP or -EINVAL. */
int cmd_report_parse_args(int argc, char **argv, struct report_opts *o)
{
	int ret = opt_parse(cmd_perf_only_append(&report_perf_only, options, ARRAY_SIZE(options) - 1, O_PERF_ONLY),
			argc, argv, 0, apply_option, o, NULL);

	if (ret)
		return ret;
	if (o->diff_base && !o->diff_head)
		return usage_error("--diff wants two recordings, BASE and HEAD; got only '%s'",
				   o->diff_base);
	if (!o->input)
		o->input = PROF_DATA_DEFAULT;
	if ((ret = check_snapshot(o)) < 0)
		return ret;
	if (!o->have_limit && o->tree && o->format == PROF_FMT_TEXT)
		o->view.percent_limit = 0.5;
	return 0;
}

