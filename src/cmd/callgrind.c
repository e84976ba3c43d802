/*
 * callgrind.c - `prof callgrind annotate|run|diff`: option parsing and
 * wiring for the callgrind subsystem (src/callgrind/).  Exit codes: 0 ok,
 * 2 usage or bad input; run exits with the profiled command's status.
 */
#include "prof/callgrind.h"
#include "prof/cmd.h"
#include "help-prof-callgrind.h"
#include "prof/options.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const usage_main = help_prof_callgrind;

static int load_all(struct cg_profile *p, char **files, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (cg_load_file(p, files[i]) < 0)
			return -1;
	return 0;
}

struct annotate_args {
	struct cg_annotate_opts o;
	VEC(char *) files;
	bool compat;
};

enum { A_PART = 1, A_BENCH, A_COMPAT, A_INCLUSIVE, A_TREE, A_AUTO, A_THRESHOLD, A_SHOW, A_FORMAT };

static const struct opt annotate_options[] = {
	{ A_PART, 0, "part", OPT_VALUE }, { A_BENCH, 0, "benchmark", OPT_VALUE },
	{ A_COMPAT, 0, "compat", OPT_FLAG }, { A_INCLUSIVE, 0, "inclusive", OPT_OPTIONAL },
	{ A_TREE, 0, "tree", OPT_VALUE }, { A_AUTO, 0, "auto", OPT_OPTIONAL },
	{ A_THRESHOLD, 0, "threshold", OPT_VALUE }, { A_SHOW, 0, "show", OPT_VALUE },
	{ A_FORMAT, 0, "format", OPT_VALUE },
	{ 0 },
};

/* callgrind_annotate's --inclusive=yes|no and --auto=yes|no. */
static int yes_no(const char *flag, const char *arg, bool *out)
{
	static const char *const yn[] = { "yes", "no", NULL };
	int k = arg ? opt_choice(flag, arg, yn) : 0;

	if (k < 0)
		return k;
	*out = k == 0;
	return 0;
}

static int annotate_option(void *ctx, int id, const char *arg, const char *flag)
{
	static const char *const trees[] = { "caller", "callee", "both", "none", "calling", NULL };
	static const enum cg_tree tree_of[] = { CG_TREE_CALLER, CG_TREE_CALLEE, CG_TREE_BOTH,
						CG_TREE_NONE, CG_TREE_CALLEE };
	struct annotate_args *a = ctx;
	int k;

	switch (id) {
	case OPT_ARG: VEC_PUSH(&a->files, (char *)arg); return 0;
	case A_PART: return opt_u64(flag, arg, 1, UINT32_MAX, &a->o.part);
	case A_BENCH: a->o.benchmark = arg; return 0;
	case A_COMPAT: a->compat = true; return 0;
	case A_INCLUSIVE: return yes_no(flag, arg, &a->o.inclusive);
	case A_AUTO: return yes_no(flag, arg, &a->o.auto_source);
	case A_TREE:
		if ((k = opt_choice(flag, arg, trees)) < 0)
			return k;
		a->o.tree = tree_of[k];
		return 0;
	case A_THRESHOLD:
		if (opt_percent(flag, arg, 100, &a->o.threshold) < 0)
			return -EINVAL;
		a->o.threshold *= 100;
		return 0;
	case A_SHOW: a->o.show = arg; return 0;
	case A_FORMAT: return opt_text_or_json(flag, arg, &a->o.json);
	}
	return -EINVAL;
}

static int cmd_callgrind_annotate(int argc, char **argv)
{
	struct annotate_args a = { .o = { .threshold = 99 } };
	struct cg_profile p;
	int rc;

	if ((rc = opt_parse(annotate_options, argc, argv, 0, annotate_option, &a, NULL)) != 0) {
		VEC_FREE(&a.files);
		if (rc == OPT_HELP)
			fputs(usage_main, stdout);
		return rc == OPT_HELP ? 0 : EXIT_USAGE;
	}
	if (!a.files.n) {
		usage_error("annotate needs a callgrind FILE");
		return EXIT_USAGE;
	}
	cg_profile_init(&p, (a.o.auto_source ? CG_KEEP_LINES : 0) |
				    (a.compat ? CG_ANNOTATE_COMPAT : 0));
	rc = load_all(&p, a.files.v, a.files.n) < 0 || cg_annotate(stdout, &p, &a.o) < 0
		     ? EXIT_USAGE : 0;
	VEC_FREE(&a.files);
	cg_profile_free(&p);
	return rc;
}

struct diff_args {
	struct cg_diff_opts o;
	const char *files[2];
	size_t nfiles;
};

enum { D_BENCH = 1, D_EVENT, D_FORMAT };

static const struct opt diff_options[] = {
	{ D_BENCH, 0, "benchmark", OPT_VALUE }, { D_EVENT, 0, "event", OPT_VALUE },
	{ D_FORMAT, 0, "format", OPT_VALUE },
	{ 0 },
};

static int diff_option(void *ctx, int id, const char *arg, const char *flag)
{
	struct diff_args *d = ctx;

	switch (id) {
	case OPT_ARG:
		if (d->nfiles == 2)
			return usage_error("diff takes two files, BASE and HEAD; extra '%s'", arg);
		d->files[d->nfiles++] = arg;
		return 0;
	case D_BENCH: d->o.benchmark = arg; return 0;
	case D_EVENT: d->o.event = arg; return 0;
	case D_FORMAT: return opt_text_or_json(flag, arg, &d->o.json);
	}
	return -EINVAL;
}

static int callgrind_cmd_diff(int argc, char **argv)
{
	struct diff_args d = { 0 };
	int ret = opt_parse(diff_options, argc, argv, 0, diff_option, &d, NULL);

	if (ret == OPT_HELP)
		fputs(usage_main, stdout);
	if (ret)
		return ret == OPT_HELP ? 0 : EXIT_USAGE;
	if (d.nfiles != 2) {
		usage_error("diff needs BASE and HEAD callgrind files");
		return EXIT_USAGE;
	}
	const char **files = d.files;
	struct cg_diff_opts o = d.o;

	struct cg_profile base, head;
	int rc = EXIT_USAGE;
	cg_profile_init(&base, 0);
	cg_profile_init(&head, 0);
	if (cg_load_file(&base, files[0]) == 0 && cg_load_file(&head, files[1]) == 0)
		rc = cg_diff(stdout, &base, &head, &o) < 0 ? EXIT_USAGE : 0;
	cg_profile_free(&base);
	cg_profile_free(&head);
	return rc;
}

enum { R_LABEL = 1, R_CODSPEED };

static const struct opt run_options[] = {
	{ R_LABEL, 'l', "label", OPT_VALUE }, { R_CODSPEED, 0, "codspeed", OPT_FLAG },
	{ 0 },
};

static int run_option(void *ctx, int id, const char *arg, const char *flag)
{
	struct cg_run_opts *o = ctx;

	if (id == R_CODSPEED) {
		o->codspeed = true;
		return 0;
	}
	if (!*arg || strchr(arg, '/'))
		return usage_error("%s wants a plain name, not '%s'", flag, arg);
	o->label = arg;
	return 0;
}

static int cmd_run(int argc, char **argv)
{
	struct cg_run_opts o = { .label = "callgrind" };
	int rest, ret = opt_parse(run_options, argc, argv, OPT_STOP_AT_ARG, run_option, &o, &rest);

	if (ret == OPT_HELP)
		fputs(usage_main, stdout);
	if (ret)
		return ret == OPT_HELP ? 0 : EXIT_USAGE;
	if (rest >= argc) {
		usage_error("run needs a command: prof callgrind run -- CMD [ARGS]");
		return EXIT_USAGE;
	}
	o.argv = argv + rest;
	ret = cg_run(&o);
	return ret < 0 ? EXIT_USAGE : ret;
}

int cmd_callgrind(int argc, char **argv)
{
	if (argc < 2) {
		fputs(usage_main, stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		fputs(usage_main, stdout);
		return 0;
	}
	if (!strcmp(argv[1], "annotate"))
		return cmd_callgrind_annotate(argc - 1, argv + 1);
	if (!strcmp(argv[1], "diff"))
		return callgrind_cmd_diff(argc - 1, argv + 1);
	if (!strcmp(argv[1], "run"))
		return cmd_run(argc - 1, argv + 1);
	usage_error("'%s' is not a callgrind subcommand (annotate, run, diff)", argv[1]);
	return EXIT_USAGE;
}
