/*
 * report.c - `prof report`: loads a prof.data file and prints it as a flat
 * function table (default), a caller-first call tree, folded stacks or
 * JSON (schema: src/output/json.c).  Option parsing, error wording,
 * the interrupted-recording warning and the loading progress live here;
 * the rendering lives in src/output/.
 */
#include "prof/cmd.h"
#include "prof/data.h"
#include "prof/options.h"
#include "prof/output.h"
#include "prof/perfdata.h"
#include "prof/render.h"
#include "help-prof-report.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>


enum fmt { FMT_TEXT, FMT_FOLDED, FMT_JSON, FMT_FLAMEGRAPH, FMT_HTML, FMT_SPEEDSCOPE,
	   FMT_PPROF, FMT_CALLGRIND };

static const struct format_desc {
	const char *name;
	int (*render)(FILE *, const struct prof_profile *, const struct prof_view *);
	const char *default_output;	/* written there when stdout is a terminal */
} formats[] = {
	[FMT_TEXT] = { "text", NULL, NULL },
	[FMT_FOLDED] = { "folded", prof_output_folded, NULL },
	[FMT_JSON] = { "json", prof_output_json, NULL },
	[FMT_FLAMEGRAPH] = { "flamegraph", prof_render_flamegraph, "flamegraph.svg" },
	[FMT_HTML] = { "html", prof_render_html, "prof.html" },
	[FMT_SPEEDSCOPE] = { "speedscope", prof_render_speedscope, NULL },
	[FMT_PPROF] = { "pprof", prof_render_pprof, "prof.pb.gz" },
	[FMT_CALLGRIND] = { "callgrind", prof_render_callgrind, NULL },
};

struct report_opts {
	VEC(const char *) source_roots;
	const char *input, *output;
	const char *diff_base, *diff_head;
	enum fmt format;
	bool tree, have_limit, open;
	int color;			/* 0 auto, 1 always, 2 never */
	struct prof_view view;
};

static int parse_format(const char *name, enum fmt *out)
{
	for (size_t i = 0; i < ARRAY_SIZE(formats); i++)
		if (!strcmp(name, formats[i].name)) {
			*out = (enum fmt)i;
			return 0;
		}
	return -EINVAL;
}

static void show_progress(void *arg, uint64_t done, uint64_t total)
{
	progress_update(arg, done, total);
}

enum { O_INPUT = 1, O_OUTPUT, O_FORMAT, O_FLAT, O_TREE, O_PID, O_TID, O_COMM, O_DSO, O_LIMIT,
       O_SORT, O_METRIC, O_DIFF, O_OPEN, O_INVERTED, O_STDIO, O_CHILDREN, O_NO_CHILDREN,
       O_NR_SAMPLES, O_GRAPH, O_MAX_STACK, O_QUIET, O_HEADER, O_COLOR, O_SOURCE_ROOT };

static const struct opt options[] = {
	{ O_INPUT, 'i', "input", OPT_VALUE }, { O_OUTPUT, 'o', "output", OPT_VALUE },
	{ O_FORMAT, 0, "format", OPT_VALUE }, { O_FLAT, 0, "flat", OPT_FLAG },
	{ O_TREE, 0, "tree", OPT_FLAG }, { O_PID, 0, "pid", OPT_VALUE },
	{ O_TID, 0, "tid", OPT_VALUE }, { O_COMM, 0, "comm", OPT_VALUE },
	{ O_DSO, 0, "dso", OPT_VALUE }, { O_LIMIT, 0, "percent-limit", OPT_VALUE },
	{ O_SORT, 0, "sort", OPT_VALUE }, { O_METRIC, 0, "metric", OPT_VALUE },
	{ O_DIFF, 0, "diff", OPT_VALUE }, { O_OPEN, 0, "open", OPT_FLAG },
	{ O_INVERTED, 0, "inverted", OPT_FLAG }, { O_SOURCE_ROOT, 0, "source-root", OPT_VALUE },
	/* perf report's flags, with perf's meaning */
	{ O_STDIO, 0, "stdio", OPT_FLAG }, { O_CHILDREN, 0, "children", OPT_FLAG },
	{ O_NO_CHILDREN, 0, "no-children", OPT_FLAG }, { O_NR_SAMPLES, 'n', "show-nr-samples", OPT_FLAG },
	{ O_GRAPH, 'g', "call-graph", OPT_VALUE }, { O_MAX_STACK, 0, "max-stack", OPT_VALUE },
	{ O_QUIET, 'q', "quiet", OPT_FLAG }, { O_HEADER, 0, "header", OPT_FLAG },
	{ O_COLOR, 0, "color", OPT_OPTIONAL },
	{ 0 },
};

static int parse_id(const char *flag, const char *arg, int64_t *out)
{
	uint64_t v;

	if (opt_u64(flag, arg, 0, UINT32_MAX, &v) < 0)
		return -EINVAL;
	*out = (int64_t)v;
	return 0;
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
	int keys[16];
	size_t n;

	if (!strcmp(arg, "self") || !strcmp(arg, "total")) {
		o->view.sort = arg[0] == 's' ? PROF_SORT_SELF : PROF_SORT_TOTAL;
		o->view.sort_keys = NULL;
		return 0;
	}
	if (prof_sort_keys_parse(arg, keys, ARRAY_SIZE(keys), &n) < 0)
		return usage_error("unknown %s '%s' (want self, total, or keys from comm, pid, tid, dso, sym, srcline)",
				   flag, arg);
	o->view.sort_keys = arg;
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
		if (parse_format(arg, &o->format) < 0)
			return usage_error("unknown --format '%s' (want text, folded, json, flamegraph, "
					   "html, speedscope, pprof or callgrind)", arg);
		return 0;
	case O_DIFF: o->diff_base = arg; return 0;
	case O_OPEN: o->open = true; o->format = FMT_HTML; return 0;
	case O_INVERTED: o->view.inverted = true; return 0;
	case O_SOURCE_ROOT:
		VEC_PUSH(&o->source_roots, arg);
		o->view.source_roots = o->source_roots.v;
		o->view.n_source_roots = o->source_roots.n;
		return 0;
	case O_FLAT: o->tree = false; return 0;
	case O_TREE: o->tree = true; return 0;
	case O_PID: return parse_id(flag, arg, &o->view.pid);
	case O_TID: return parse_id(flag, arg, &o->view.tid);
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
	case O_COLOR: {
		static const char *const whens[] = { "auto", "always", "never", NULL };
		int k = arg ? opt_choice(flag, arg, whens) : 1;	/* --color alone: always */
		if (k < 0)
			return k;
		o->color = k;
		return 0;
	}
	case O_METRIC:
		if (prof_view_metric_parse(arg, &o->view.metric) < 0)
			return usage_error("unknown --metric '%s' (want cpu, off-cpu, io-wait, sleep or wall)",
					   arg);
		return 0;
	}
	return -EINVAL;
}

/* Returns 0, OPT_HELP or -EINVAL. */
static int parse_args(int argc, char **argv, struct report_opts *o)
{
	int ret = opt_parse(options, argc, argv, 0, apply_option, o, NULL);

	if (ret)
		return ret;
	if (o->diff_base && !o->diff_head)
		return usage_error("--diff wants two recordings, BASE and HEAD; got only '%s'",
				   o->diff_base);
	if (!o->input)
		o->input = PROF_DATA_DEFAULT;
	if (!o->have_limit && o->tree && o->format == FMT_TEXT)
		o->view.percent_limit = 0.5;
	return 0;
}

static int load_file(const char *input, struct prof_profile *p);

/* -i -: stdin (a pipe from `prof record -o -` or `perf record -o -`) is
 * copied to a temporary file, then read like any recording. */
static int load_stdin(struct prof_profile *p)
{
	char path[] = "/tmp/prof-stdin.XXXXXX";
	int fd = mkstemp(path), ret = 0;
	char buf[65536];
	ssize_t n;

	if (fd < 0)
		return error("cannot create a temporary file: %s", strerror(errno)), -errno;
	while (!ret && ((n = read(0, buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR)))
		if (n > 0)
			ret = write_all(fd, buf, (size_t)n);
	if (n < 0 || ret < 0)
		ret = error("cannot copy stdin: %s", strerror(n < 0 ? errno : -ret));
	close(fd);
	if (!ret)
		ret = load_file(path, p);
	unlink(path);
	return ret;
}

static int load(const char *input, struct prof_profile *p)
{
	return strcmp(input, "-") ? load_file(input, p) : load_stdin(p);
}

/* prof.data or perf.data (data/load.c), with the loading progress line. */
static int load_file(const char *input, struct prof_profile *p)
{
	struct progress pr;
	int ret;

	progress_start(&pr, "loading", false);
	ret = prof_load_any(input, p, show_progress, &pr);
	progress_done(&pr);
	return ret;
}

static int render(FILE *f, const struct report_opts *o, const struct prof_profile *p)
{
	if (o->format == FMT_TEXT && o->view.sort_keys)
		return prof_output_text_keys(f, p, &o->view);
	if (o->format == FMT_TEXT)
		return o->tree ? prof_output_text_tree(f, p, &o->view)
			       : prof_output_text_flat(f, p, &o->view);
	return formats[o->format].render(f, p, &o->view);
}

static int render_diff(FILE *f, const struct report_opts *o, const struct prof_profile *base,
		       const struct prof_profile *head)
{
	switch (o->format) {
	case FMT_FOLDED: return prof_output_folded_diff(f, base, head, &o->view);
	case FMT_FLAMEGRAPH: return prof_render_flamegraph_diff(f, base, head, &o->view);
	case FMT_HTML: return prof_render_html_diff(f, base, head, &o->view);
	default: return prof_output_text_diff(f, base, head, &o->view);
	}
}

/* Where the report goes: -o, the format's default file on a terminal, or stdout. */
static const char *output_path(const struct report_opts *o)
{
	if (o->output)
		return strcmp(o->output, "-") ? o->output : NULL;
	if (formats[o->format].default_output && isatty(1))
		return formats[o->format].default_output;
	return NULL;
}

static int write_report(const struct report_opts *o, const struct prof_profile *p,
			const struct prof_profile *head)
{
	const char *path = output_path(o);
	FILE *f = stdout;
	int ret;

	if (path && !(f = fopen_output(path)))
		return error("cannot create '%s': %s", path, strerror(errno));
	ret = head ? render_diff(f, o, p, head) : render(f, o, p);
	if (ret == -1)
		ret = -EIO;
	if (f != stdout) {
		if (fclose(f) != 0 && !ret)
			ret = -errno;
	} else if (fflush(f) != 0 && !ret) {
		ret = -errno;
	}
	if (ret < 0)
		return error("cannot write '%s': %s", path ? path : "stdout", strerror(-ret));
	if (path && !o->output)
		info("wrote %s", path);
	return 0;
}

/* --color: always, never, or auto: stdout is a terminal and the user has
 * not asked for no colour (NO_COLOR, no-color.org). */
static bool want_color(const struct report_opts *o)
{
	if (o->color != 0)
		return o->color == 1;
	return !output_path(o) && isatty(1) && !getenv("NO_COLOR");
}

/* --open: the HTML report in a fresh temporary file, its path on stdout. */
static int open_report(struct report_opts *o, const struct prof_profile *p)
{
	char dir[] = "/tmp/prof-report.XXXXXX";

	if (!mkdtemp(dir))
		return error("cannot create a temporary directory: %s", strerror(errno));
	char *path = xasprintf("%s/report.html", dir);
	o->output = path;
	int ret = write_report(o, p, NULL);
	if (!ret)
		printf("%s\n", path);
	free(path);
	return ret;
}

static int validate(const struct report_opts *o)
{
	if (o->diff_base && o->format != FMT_TEXT && o->format != FMT_FOLDED &&
	    o->format != FMT_FLAMEGRAPH && o->format != FMT_HTML)
		return error("--diff makes text, folded, flamegraph or html output, not %s",
			     formats[o->format].name);
	if (o->diff_base && o->open)
		return error("--open shows one recording; use --diff with --format=flamegraph -o FILE");
	return 0;
}

int cmd_report(int argc, char **argv)
{
	struct report_opts o = { 0 };
	struct prof_profile p;
	int ret;

	prof_view_init(&o.view);
	ret = parse_args(argc, argv, &o);
	if (ret == OPT_HELP) {
		fputs(help_prof_report, stdout);
		VEC_FREE(&o.source_roots);
		return 0;
	}
	if (ret < 0 || validate(&o) < 0) {
		VEC_FREE(&o.source_roots);
		return EXIT_USAGE;
	}
	o.view.title = o.diff_head ? o.diff_head : o.input;
	o.view.color = want_color(&o);
	prof_profile_init(&p);
	/* time-ordered outputs need every sample with its time */
	p.keep_timed = o.format == FMT_SPEEDSCOPE || o.format == FMT_HTML;
	if (o.diff_base) {
		struct prof_profile head;
		prof_profile_init(&head);
		ret = load(o.diff_base, &p);
		if (!ret)
			ret = load(o.diff_head, &head);
		if (!ret)
			ret = write_report(&o, &p, &head);
		prof_profile_free(&head);
	} else {
		ret = load(o.input, &p);
		if (!ret)
			ret = o.open ? open_report(&o, &p) : write_report(&o, &p, NULL);
	}
	prof_profile_free(&p);
	VEC_FREE(&o.source_roots);
	return ret ? EXIT_USAGE : 0;
}
