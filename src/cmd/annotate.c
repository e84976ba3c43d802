/*
 * annotate.c - `prof annotate FUNCTION`: one function's costs per source
 * line and per instruction.  Options and wiring only; the work is in
 * src/annotate/.
 */
#include "prof/annotate.h"
#include "prof/cmd.h"
#include "prof/data.h"
#include "prof/perfdata.h"
#include "prof/options.h"
#include "help-prof-annotate.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>

enum { O_INPUT = 1, O_METRIC, O_STDIO, O_ROOT, O_NO_SOURCE, O_NO_ASM };

static const struct opt options[] = {
	{ O_INPUT, 'i', "input", OPT_VALUE }, { O_METRIC, 0, "metric", OPT_VALUE },
	{ O_STDIO, 0, "stdio", OPT_FLAG }, { O_ROOT, 0, "source-root", OPT_VALUE },
	{ O_NO_SOURCE, 0, "no-source", OPT_FLAG }, { O_NO_ASM, 0, "no-asm", OPT_FLAG },
	{ 0 },
};

struct annotate_opts {
	const char *input, *func;
	struct prof_view view;
	VEC(const char *) roots;
	bool no_source, no_asm;
};

static int apply_option(void *ctx, int id, const char *arg, const char *flag)
{
	struct annotate_opts *o = ctx;

	switch (id) {
	case OPT_ARG:
		if (o->func)
			return usage_error("one FUNCTION only; unexpected '%s'", arg);
		o->func = arg;
		return 0;
	case O_INPUT: o->input = arg; return 0;
	case O_STDIO: return 0;
	case O_ROOT: VEC_PUSH(&o->roots, arg); return 0;
	case O_NO_SOURCE: o->no_source = true; return 0;
	case O_NO_ASM: o->no_asm = true; return 0;
	case O_METRIC:
		if (prof_view_metric_parse(arg, &o->view.metric) < 0)
			return usage_error("unknown %s '%s' (want cpu, off-cpu, io-wait, sleep, wall, allocs, alloc-bytes, live-bytes or peak-bytes)",
					   flag, arg);
		return 0;
	}
	return -EINVAL;
}

/* 0, OPT_HELP or -EINVAL. */
static int parse_args(int argc, char **argv, struct annotate_opts *o)
{
	int ret = opt_parse(options, argc, argv, 0, apply_option, o, NULL);

	if (ret)
		return ret;
	if (!o->func)
		return usage_error("missing FUNCTION");
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

int cmd_annotate(int argc, char **argv)
{
	struct annotate_opts o = { 0 };
	struct prof_profile p;

	prof_view_init(&o.view);
	int st = parse_args(argc, argv, &o);
	if (st) {
		if (st == OPT_HELP)
			fputs(help_prof_annotate, stdout);
		VEC_FREE(&o.roots);
		return st == OPT_HELP ? 0 : EXIT_USAGE;
	}
	prof_profile_init(&p);
	int ret = perfdata_load_any(o.input, &p, NULL, NULL);
	if (!ret)
		ret = annotate(&o, &p);
	prof_profile_free(&p);
	VEC_FREE(&o.roots);
	return ret ? EXIT_USAGE : 0;
}
