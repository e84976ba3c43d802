/*
 * report.c - `prof report`: loads a prof.data file and prints it as a flat
 * function table (default), a caller-first call tree, folded stacks or
 * JSON (schema: src/output/json.c).  Option parsing, error wording,
 * the interrupted-recording warning and the loading progress live here;
 * the rendering lives in src/output/.
 */
#include "prof/cmd.h"
#include "prof/data.h"
#include "prof/output.h"
#include "prof/perfdata.h"
#include "prof/render.h"
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char usage_text[] =
	"usage: prof report [-i FILE] [--format=FMT] [-o OUT] [--flat|--tree]\n"
	"                   [--pid P] [--tid T] [--comm C] [--dso D] [--percent-limit X]\n"
	"                   [--sort self|total] [--metric cpu|off-cpu|io-wait|sleep|wall]\n"
	"       prof report --diff BASE HEAD [--format=text|folded|flamegraph]\n"
	"       prof report --open [-i FILE]\n"
	"\n"
	"Shows a recording made by 'prof record', or a perf.data file made by\n"
	"'perf record' (detected by its header).\n"
	"\n"
	"  -i, --input FILE      the recording (default prof.data)\n"
	"  -o, --output OUT      write the report to OUT instead of stdout; with no -o,\n"
	"                        flamegraph, html and pprof go to flamegraph.svg,\n"
	"                        prof.html and prof.pb.gz when stdout is a terminal\n"
	"  --format FMT          text (default), folded (flamegraph.pl input), json,\n"
	"                        flamegraph (interactive SVG), html (single-file report),\n"
	"                        speedscope, pprof (gzipped profile.proto), callgrind\n"
	"  --inverted            flamegraph: icicle graph (roots at the top)\n"
	"  --source-root DIR     html: also embed sources found below DIR (repeatable);\n"
	"                        otherwise only files the recorded binary (same build-id)\n"
	"                        names in its line table\n"
	"  --diff BASE HEAD      compare two recordings: text (largest movers), folded\n"
	"                        (difffolded.pl 'stack base head' lines) or flamegraph\n"
	"                        (red grew, blue shrank, shaped by HEAD)\n"
	"  --open                write the HTML report to a temporary file, print its path\n"
	"  --flat                text: one row per function (default)\n"
	"  --tree                text: caller-first call tree\n"
	"  --pid P, --tid T      only samples of this process / thread\n"
	"  --comm C              only threads named C\n"
	"  --dso D               only samples whose innermost frame is in module D\n"
	"                        (basename or full path)\n"
	"  --percent-limit X     hide rows under X% (default 0, tree 0.5)\n"
	"  --sort self|total     order of the flat and json tables (default self)\n"
	"  --metric M            cpu (samples, default), off-cpu, io-wait, sleep, wall\n"
	"                        (time metrics: ms in text, microseconds in folded/json)\n"
	"  -h, --help            this help\n";

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
	bool tree, have_limit, help, open;
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

struct progress {
	uint64_t last_ns;
	bool shown;
};

static void show_progress(void *arg, uint64_t done, uint64_t total)
{
	struct progress *pr = arg;
	uint64_t now = now_ns();

	if (now - pr->last_ns < 250000000ULL || !total)
		return;
	pr->last_ns = now;
	pr->shown = true;
	fprintf(stderr, "\rloading %d%%", (int)(done * 100 / total));
	fflush(stderr);
}

static int usage_error(const char *what, const char *arg)
{
	error("%s '%s' (see 'prof report --help')", what, arg);
	return -EINVAL;
}

static int parse_id(const char *arg, const char *opt, int64_t *out)
{
	uint64_t v;

	if (parse_u64(arg, &v) < 0 || v > UINT32_MAX)
		return usage_error(opt, arg);
	*out = (int64_t)v;
	return 0;
}

static int parse_percent(const char *arg, double *out)
{
	char *end;
	double d = strtod(arg, &end);

	if (end == arg || *end || !(d >= 0 && d <= 100))
		return usage_error("--percent-limit wants a number from 0 to 100, not", arg);
	*out = d;
	return 0;
}

static int parse_args(int argc, char **argv, struct report_opts *o)
{
	enum { O_FORMAT = 256, O_FLAT, O_TREE, O_PID, O_TID, O_COMM, O_DSO, O_LIMIT, O_SORT, O_METRIC,
	       O_DIFF, O_OPEN, O_INVERTED, O_SOURCE_ROOT };
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "input", required_argument, NULL, 'i' },
		{ "output", required_argument, NULL, 'o' },
		{ "format", required_argument, NULL, O_FORMAT },
		{ "flat", no_argument, NULL, O_FLAT },
		{ "tree", no_argument, NULL, O_TREE },
		{ "pid", required_argument, NULL, O_PID },
		{ "tid", required_argument, NULL, O_TID },
		{ "comm", required_argument, NULL, O_COMM },
		{ "dso", required_argument, NULL, O_DSO },
		{ "percent-limit", required_argument, NULL, O_LIMIT },
		{ "sort", required_argument, NULL, O_SORT },
		{ "metric", required_argument, NULL, O_METRIC },
		{ "diff", required_argument, NULL, O_DIFF },
		{ "open", no_argument, NULL, O_OPEN },
		{ "inverted", no_argument, NULL, O_INVERTED },
		{ "source-root", required_argument, NULL, O_SOURCE_ROOT },
		{ NULL, 0, NULL, 0 },
	};
	int c, ret = 0;

	opterr = 0;
	optind = 1;
	while (!ret && (c = getopt_long(argc, argv, ":hi:o:", longopts, NULL)) != -1) {
		switch (c) {
		case 'h': o->help = true; break;
		case 'i': o->input = optarg; break;
		case 'o': o->output = optarg; break;
		case O_FORMAT:
			if (parse_format(optarg, &o->format) < 0)
				ret = usage_error("--format is text, folded, json, flamegraph, html, "
						  "speedscope, pprof or callgrind, not", optarg);
			break;
		case O_DIFF:
			/* --diff BASE HEAD: HEAD is the next plain argument */
			o->diff_base = optarg;
			if (optind < argc && argv[optind][0] != '-')
				o->diff_head = argv[optind++];
			else
				ret = usage_error("--diff wants two recordings, BASE and HEAD; got only",
						  optarg);
			break;
		case O_OPEN: o->open = true; o->format = FMT_HTML; break;
		case O_INVERTED: o->view.inverted = true; break;
		case O_SOURCE_ROOT:
			VEC_PUSH(&o->source_roots, optarg);
			o->view.source_roots = o->source_roots.v;
			o->view.n_source_roots = o->source_roots.n;
			break;
		case O_FLAT: o->tree = false; break;
		case O_TREE: o->tree = true; break;
		case O_PID: ret = parse_id(optarg, "--pid wants a process id, not", &o->view.pid); break;
		case O_TID: ret = parse_id(optarg, "--tid wants a thread id, not", &o->view.tid); break;
		case O_COMM: o->view.comm = optarg; break;
		case O_DSO: o->view.dso = optarg; break;
		case O_LIMIT:
			ret = parse_percent(optarg, &o->view.percent_limit);
			o->have_limit = true;
			break;
		case O_SORT:
			if (!strcmp(optarg, "self")) o->view.sort = PROF_SORT_SELF;
			else if (!strcmp(optarg, "total")) o->view.sort = PROF_SORT_TOTAL;
			else ret = usage_error("--sort is self or total, not", optarg);
			break;
		case O_METRIC:
			if (prof_view_metric_parse(optarg, &o->view.metric) < 0)
				ret = usage_error("--metric is cpu, off-cpu, io-wait, sleep or wall, not",
						  optarg);
			break;
		case ':':
			ret = usage_error("missing value for option", argv[optind - 1]);
			break;
		default:
			ret = usage_error("unknown option", argv[optind - 1]);
		}
	}
	if (!ret && optind < argc) {
		if (o->input || optind + 1 < argc)
			ret = usage_error("unexpected argument", argv[optind + (o->input ? 0 : 1)]);
		else
			o->input = argv[optind];	/* `prof report FILE` works too */
	}
	if (!o->input)
		o->input = PROF_DATA_DEFAULT;
	if (!o->have_limit && o->tree && o->format == FMT_TEXT)
		o->view.percent_limit = 0.5;
	return ret;
}

static int load(const char *input, struct prof_profile *p)
{
	struct progress pr = { now_ns(), false };
	int ret = prof_load_any(input, p, stderr_is_tty() ? show_progress : NULL, &pr);

	if (pr.shown)
		fprintf(stderr, "\r              \r");
	return ret;
}

static int render(FILE *f, const struct report_opts *o, const struct prof_profile *p)
{
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
	if (!ret && o.help)
		fputs(usage_text, stdout);
	if (!ret && !o.help)
		ret = validate(&o);
	if (ret < 0 || o.help) {
		VEC_FREE(&o.source_roots);
		return ret < 0 ? EXIT_USAGE : 0;
	}
	o.view.title = o.diff_head ? o.diff_head : o.input;
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
