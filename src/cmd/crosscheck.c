/*
 * crosscheck.c - `prof crosscheck`: join callgrind instruction counts of a
 * base and a head build with sampled time of the same builds under load,
 * and tell per function whether a change is confirmed by both, an artifact
 * of instruction counting, or invisible to it.  The logic lives in
 * src/analysis/crosscheck.c; this file wires files, options and output.
 */
#include "prof/analysis.h"
#include "prof/callgrind.h"
#include "prof/cmd.h"
#include "prof/data.h"
#include "prof/perfdata.h"
#include "help-prof-crosscheck.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>


static void usage(FILE *f)
{
	fputs(help_prof_crosscheck, f);
}

static int check_args(struct an_cli *c)
{
	if (!c->cg_base || !c->cg_head)
		return error("give --callgrind-base FILE and --callgrind-head FILE "
			     "(see 'prof crosscheck --help')");
	if (c->positional.n)
		return error("unexpected argument '%s': put recordings after --base or --head",
			     c->positional.v[0]);
	if (!c->base.n || !c->head.n)
		return error("give recordings of both builds: --base P.data... --head P.data...");
	if (c->normalize)
		return error("--normalize is not supported by crosscheck (instruction counts "
			     "are absolute)");
	return 0;
}

static bool is_slowdown(const struct an_xrow *x)
{
	return (x->verdict == AN_CONFIRMED || x->verdict == AN_TIME_ONLY) && x->time.change > 0;
}

static int run_crosscheck(struct an_cli *c, bool *regression)
{
	struct an_load_opts lo = { .metric = c->metric, .fold_inlined = true };
	struct an_fnset fs;
	struct an_cg_side cg = { 0 };
	struct an_side base = { 0 }, head = { 0 };
	an_xrows rows = { 0 };
	an_parts parts = { 0 };
	struct cg_profile cb, ch;
	struct an_join join[2] = { 0 };
	struct out_file out = { 0 };
	int ret;

	an_cli_fnset_init(c, &fs);
	cg_profile_init(&cb, 0);
	cg_profile_init(&ch, 0);
	ret = an_cg_load(&fs, &cg, &cb, c->cg_base, c->benchmark, false);
	if (!ret)
		ret = an_cg_load(&fs, &cg, &ch, c->cg_head, c->benchmark, true);
	if (!ret)
		ret = an_load_side(&fs, &base, c->base.v, c->base.n, &lo);
	if (!ret)
		ret = an_load_side(&fs, &head, c->head.v, c->head.n, &lo);
	if (!ret)
		ret = an_join_crosscheck(&fs, &cg, &base, &head, c->o.min_samples, join);
	if (!ret)
		ret = an_crosscheck(&fs, &cg, &base, &head, &c->o, c->ir_threshold, &rows);
	if (!ret && c->json && !c->benchmark)
		ret = an_crosscheck_parts(&fs, &cb, &ch, &base, &head, &c->o, c->ir_threshold, &parts);
	if (!ret && !(ret = perfdata_refuse_over_recording(c->output)))
		ret = out_open(&out, c->output);
	if (!ret) {
		struct an_report_info info = an_cli_report_info(c, &base, &head);
		info.joins[0] = &join[0];
		info.joins[1] = &join[1];
		info.parts = c->benchmark ? NULL : &parts;
		ret = c->json ? an_crosscheck_json(out.f, &fs, &rows, &c->o, &info)
			      : an_crosscheck_text(out.f, &fs, &rows, &c->o, &info);
		for (size_t i = 0; i < rows.n; i++)
			*regression |= is_slowdown(&rows.v[i]);
		if (ret)
			out_discard(&out);	/* the file at -o stays as it was */
		else
			ret = out_commit(&out);
	}
	VEC_FREE(&rows);
	an_parts_free(&parts);
	cg_profile_free(&cb);
	cg_profile_free(&ch);
	an_join_free(&join[0]);
	an_join_free(&join[1]);
	an_cg_free(&cg);
	an_side_free(&base);
	an_side_free(&head);
	an_fnset_free(&fs);
	return ret;
}

int cmd_crosscheck(int argc, char **argv)
{
	static const struct cmd_analysis cmd = { true, usage, check_args, run_crosscheck };

	return cmd_analysis_main(argc, argv, &cmd);
}
