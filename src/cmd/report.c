/*
 * report.c - `prof report`: loads a prof.data file and prints it as a flat
 * function table (default), a caller-first call tree, folded stacks or
 * JSON (contract: SPEC.md "prof report").  Option parsing, error wording,
 * the interrupted-recording warning and the loading progress live here;
 * the rendering lives in src/output/.
 */
#include "prof/cmd.h"
#include "prof/data.h"
#include "prof/output.h"
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char usage_text[] =
	"usage: prof report [-i FILE] [--format=text|folded|json] [-o OUT] [--flat|--tree]\n"
	"                   [--pid P] [--tid T] [--comm C] [--dso D] [--percent-limit X]\n"
	"                   [--sort self|total] [--metric cpu|off-cpu|io-wait|sleep|wall]\n"
	"\n"
	"Shows a recording made by 'prof record'.\n"
	"\n"
	"  -i, --input FILE      the recording (default prof.data)\n"
	"  -o, --output OUT      write the report to OUT instead of stdout\n"
	"  --format FMT          text (default), folded (flamegraph.pl input), json\n"
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

enum fmt { FMT_TEXT, FMT_FOLDED, FMT_JSON };

struct report_opts {
	const char *input, *output;
	enum fmt format;
	bool tree, have_limit, help;
	struct prof_view view;
};

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
	enum { O_FORMAT = 256, O_FLAT, O_TREE, O_PID, O_TID, O_COMM, O_DSO, O_LIMIT, O_SORT, O_METRIC };
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
			if (!strcmp(optarg, "text")) o->format = FMT_TEXT;
			else if (!strcmp(optarg, "folded")) o->format = FMT_FOLDED;
			else if (!strcmp(optarg, "json")) o->format = FMT_JSON;
			else ret = usage_error("--format is text, folded or json, not", optarg);
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

static int load(const struct report_opts *o, struct prof_profile *p)
{
	struct prof_read_info info;
	struct progress pr = { now_ns(), false };
	int fd = open(o->input, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		int e = errno;
		error("cannot open '%s': %s (record one with 'prof record -- CMD')", o->input,
		      strerror(e));
		return -e;
	}
	close(fd);
	int ret = prof_data_read_progress(o->input, p, &info,
					  stderr_is_tty() ? show_progress : NULL, &pr);
	if (pr.shown)
		fprintf(stderr, "\r              \r");
	if (ret < 0)
		return ret;
	if (info.truncated || !info.complete)
		warning("%s is truncated (recording was interrupted); showing the %llu samples "
			"before the cut", o->input, (unsigned long long)p->samples);
	if (info.dropped)
		warning("%llu samples refer to stacks or threads missing from %s; ignored",
			(unsigned long long)info.dropped, o->input);
	return 0;
}

static int render(FILE *f, const struct report_opts *o, const struct prof_profile *p)
{
	switch (o->format) {
	case FMT_FOLDED: return prof_output_folded(f, p, &o->view);
	case FMT_JSON: return prof_output_json(f, p, &o->view);
	default:
		return o->tree ? prof_output_text_tree(f, p, &o->view)
			       : prof_output_text_flat(f, p, &o->view);
	}
}

static int write_report(const struct report_opts *o, const struct prof_profile *p)
{
	FILE *f = stdout;
	int ret;

	if (o->output && strcmp(o->output, "-")) {
		f = fopen_output(o->output);
		if (!f)
			return error("cannot create '%s': %s", o->output, strerror(errno));
	}
	ret = render(f, o, p);
	if (f != stdout) {
		if (fclose(f) != 0 && !ret)
			ret = -errno;
	} else if (fflush(f) != 0 && !ret) {
		ret = -errno;
	}
	if (ret < 0)
		return error("cannot write '%s': %s", o->output ? o->output : "stdout",
			     strerror(ret == -1 ? EIO : -ret));
	return 0;
}

int cmd_report(int argc, char **argv)
{
	struct report_opts o = { 0 };
	struct prof_profile p;
	int ret;

	prof_view_init(&o.view);
	if (parse_args(argc, argv, &o) < 0)
		return EXIT_USAGE;
	if (o.help) {
		fputs(usage_text, stdout);
		return 0;
	}
	o.view.title = o.input;
	prof_profile_init(&p);
	ret = load(&o, &p);
	if (!ret)
		ret = write_report(&o, &p);
	prof_profile_free(&p);
	return ret ? EXIT_USAGE : 0;
}
