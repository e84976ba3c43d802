/*
 * diff.c - `prof diff`: compare recordings of a base and a head build,
 * function by function: change of the time per run with a confidence
 * interval, Mann-Whitney p, Benjamini-Hochberg q and a verdict.  The
 * statistics live in src/analysis/; this file wires options, files and
 * output, and turns "a regression was found" into exit status 1.
 */
#include "prof/analysis.h"
#include "prof/cmd.h"
#include "prof/data.h"
#include "prof/perfdata.h"
#include "help-prof-diff.h"
#include "prof/options.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>


static void usage(FILE *f)
{
	fputs(help_prof_diff, f);
}

/* Applies --normalize once the function names are known. */
static int resolve_normalize(struct an_cli *c, const struct an_fnset *fs)
{
	if (!c->normalize)
		return 0;
	if (!strcmp(c->normalize, "total")) {
		c->o.normalize = AN_NORM_TOTAL;
		return 0;
	}
	c->o.normalize = AN_NORM_FUNCTION;
	c->o.norm_fn = an_fn_find(fs, c->normalize, NULL);
	if (c->o.norm_fn == PROF_NONE)
		return error("--normalize: no function '%s' in the recordings (or it is in several "
			     "modules)", c->normalize);
	return 0;
}

static int check_files(struct an_cli *c)
{
	if (!c->base.n && !c->head.n && c->positional.n == 2) {
		VEC_PUSH(&c->base, c->positional.v[0]);
		VEC_PUSH(&c->head, c->positional.v[1]);
		return 0;
	}
	if (c->positional.n || !c->base.n || !c->head.n)
		return error("give BASE.data HEAD.data, or --base FILE... --head FILE... "
			     "(see 'prof diff --help')");
	return 0;
}

static int run_diff(struct an_cli *c, bool *regression)
{
	struct an_load_opts lo = { .metric = c->metric };
	struct an_fnset fs;
	struct an_side base = { 0 }, head = { 0 };
	an_results res = { 0 };
	struct an_join join = { 0 };
	struct out_file out = { 0 };
	int ret;

	an_cli_fnset_init(c, &fs);
	ret = an_load_side(&fs, &base, c->base.v, c->base.n, &lo);
	if (!ret)
		ret = an_load_side(&fs, &head, c->head.v, c->head.n, &lo);
	if (!ret)
		ret = an_join_diff(&fs, &base, &head, c->o.min_samples, &join);
	if (!ret)
		ret = resolve_normalize(c, &fs);
	if (!ret && (ret = an_compare_sides(&fs, &base, &head, &c->o, &res)))
		error("--normalize: '%s' has no time in some run", c->normalize ? c->normalize : "");
	if (!ret && !(ret = perfdata_refuse_over_recording(c->output)))
		ret = out_open(&out, c->output);
	if (!ret) {
		struct an_report_info info = an_cli_report_info(c, &base, &head);
		info.joins[0] = &join;
		ret = c->json ? an_diff_json(out.f, &fs, &res, &c->o, &info)
			      : an_diff_text(out.f, &fs, &res, &c->o, &info);
		for (size_t i = 0; i < res.n; i++)
			*regression |= res.v[i].verdict == AN_REGRESSION;
		if (ret)
			out_discard(&out);	/* the file at -o stays as it was */
		else
			ret = out_commit(&out);
	}
	VEC_FREE(&res);
	an_join_free(&join);
	an_side_free(&base);
	an_side_free(&head);
	an_fnset_free(&fs);
	return ret;
}

int cmd_analysis_main(int argc, char **argv, const struct cmd_analysis *cmd)
{
	struct an_cli c;
	bool regression = false;
	int ret = an_cli_parse(&c, argc, argv, cmd->crosscheck);

	if (ret == OPT_HELP)
		cmd->usage(stdout);
	if (ret || cmd->check(&c) < 0) {
		an_cli_free(&c);
		return ret == OPT_HELP ? 0 : EXIT_USAGE;
	}
	ret = cmd->run(&c, &regression);
	an_cli_free(&c);
	if (ret < 0)
		return EXIT_USAGE;
	return regression ? EXIT_REGRESSION : 0;
}

int cmd_diff(int argc, char **argv)
{
	static const struct cmd_analysis cmd = { false, usage, check_files, run_diff };

	return cmd_analysis_main(argc, argv, &cmd);
}
