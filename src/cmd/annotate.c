/*
 * annotate.c - `prof annotate FUNCTION`: one function's costs per source
 * line and per instruction.  Options and wiring only; the work is in
 * src/annotate/.
 */
#include "prof/annotate.h"
#include "prof/cmd.h"
#include "prof/data.h"
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

static const char usage_text[] =
	"usage: prof annotate FUNCTION [-i FILE] [--metric M] [--stdio] [--source-root DIR]\n"
	"\n"
	"Costs of one function per source line (self and total, with the source\n"
	"text) and per instruction (disassembly of the recorded binary, matched\n"
	"by build-id).  Code inlined into FUNCTION shows under its own lines.\n"
	"\n"
	"  -i, --input FILE        prof.data or perf.data (default prof.data)\n"
	"      --metric M          cpu (default), off-cpu, io-wait, sleep, wall\n"
	"      --stdio             text output (the only one; as perf annotate --stdio)\n"
	"      --source-root DIR   also read sources below DIR (repeatable); otherwise\n"
	"                          only files the verified binary's line table names\n"
	"      --no-source         costs per line without the source text\n"
	"      --no-asm            no disassembly\n"
	"  -h, --help              this help\n";

enum { O_METRIC = 256, O_STDIO, O_ROOT, O_NO_SOURCE, O_NO_ASM };

struct annotate_opts {
	const char *input, *func;
	struct prof_view view;
	VEC(const char *) roots;
	bool help, no_source, no_asm;
};

static int bad(const char *what, const char *arg)
{
	error("%s '%s' (see 'prof annotate --help')", what, arg);
	return -EINVAL;
}

static int parse_args(int argc, char **argv, struct annotate_opts *o)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "input", required_argument, NULL, 'i' },
		{ "metric", required_argument, NULL, O_METRIC },
		{ "stdio", no_argument, NULL, O_STDIO },
		{ "source-root", required_argument, NULL, O_ROOT },
		{ "no-source", no_argument, NULL, O_NO_SOURCE },
		{ "no-asm", no_argument, NULL, O_NO_ASM },
		{ NULL, 0, NULL, 0 },
	};
	int c, ret = 0;

	opterr = 0;
	optind = 1;
	while (!ret && (c = getopt_long(argc, argv, ":hi:", longopts, NULL)) != -1) {
		switch (c) {
		case 'h': o->help = true; break;
		case 'i': o->input = optarg; break;
		case O_STDIO: break;
		case O_ROOT: VEC_PUSH(&o->roots, optarg); break;
		case O_NO_SOURCE: o->no_source = true; break;
		case O_NO_ASM: o->no_asm = true; break;
		case O_METRIC:
			if (prof_view_metric_parse(optarg, &o->view.metric) < 0)
				ret = bad("--metric is cpu, off-cpu, io-wait, sleep or wall, not", optarg);
			break;
		case ':': ret = bad("missing value for option", argv[optind - 1]); break;
		default: ret = bad("unknown option", argv[optind - 1]);
		}
	}
	if (ret || o->help)
		return ret;
	if (optind + 1 != argc)
		return optind < argc ? bad("one FUNCTION only; unexpected", argv[optind + 1])
				     : bad("missing FUNCTION", "");
	o->func = argv[optind];
	o->input = o->input ? o->input : PROF_DATA_DEFAULT;
	return 0;
}

static int annotate(const struct annotate_opts *o, const struct prof_profile *p)
{
	struct prof_source_policy sp = { .roots = o->roots.v, .nroots = o->roots.n };
	struct prof_annotate_opts ao = { .sources = &sp, .no_source = o->no_source,
					 .no_asm = o->no_asm };
	struct prof_annotation a;
	int ret = prof_annotate_build(p, &o->view, o->func, &a);

	if (ret == -ENOENT)
		ret = error("no %s samples in a function named '%s' in %s",
			    prof_view_metric_name(o->view.metric), o->func, o->input);
	else if (!ret && prof_annotate_print(stdout, p, &o->view, &a, &ao) < 0)
		ret = error("cannot write stdout: %s", strerror(errno));
	prof_annotation_free(&a);
	prof_source_policy_free(&sp);
	return ret;
}

int cmd_annotate_function(int argc, char **argv)
{
	struct annotate_opts o = { 0 };
	struct prof_profile p;

	prof_view_init(&o.view);
	if (parse_args(argc, argv, &o) < 0) {
		VEC_FREE(&o.roots);
		return EXIT_USAGE;
	}
	if (o.help) {
		fputs(usage_text, stdout);
		VEC_FREE(&o.roots);
		return 0;
	}
	prof_profile_init(&p);
	int ret = prof_load_any(o.input, &p, NULL, NULL);
	if (!ret)
		ret = annotate(&o, &p);
	prof_profile_free(&p);
	VEC_FREE(&o.roots);
	return ret ? EXIT_USAGE : 0;
}
