/*
 * cli.c - what `prof diff` and `prof crosscheck` share on the command line:
 * one option parser (multi-file --base/--head lists, --opt=value and
 * --opt value forms) and loading a list of prof.data files as the runs of
 * one side.  Returns 0, OPT_HELP or -EINVAL after one error line; never
 * exits or prints help (the commands do).
 */
#include "prof/analysis.h"
#include "prof/options.h"
#include "prof/data.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void an_cli_free(struct an_cli *c)
{
	VEC_FREE(&c->base);
	VEC_FREE(&c->head);
	VEC_FREE(&c->positional);
	VEC_FREE(&c->map_modules);
	VEC_FREE(&c->map_functions);
}

/*
 * The options of both commands.  An option only crosscheck knows is
 * marked in cross_only[]; diff refuses it as unknown.  A new option is one
 * row here and one case in apply_option().
 */
enum { C_BASE = 1, C_HEAD, C_METRIC, C_ALPHA, C_MIN_EFFECT, C_FORMAT, C_NORMALIZE,
       C_MIN_SAMPLES, C_ASSUMED_CV, C_OUTPUT, C_INCLUSIVE, C_ALL,
       C_CG_BASE, C_CG_HEAD, C_BENCHMARK, C_THRESHOLD, C_MAP_MODULE, C_MAP_FUNCTION,
       C_COUNT };

static const struct opt options[] = {
	{ C_BASE, 0, "base", OPT_OPTIONAL }, { C_HEAD, 0, "head", OPT_OPTIONAL },
	{ C_METRIC, 0, "metric", OPT_VALUE }, { C_ALPHA, 0, "alpha", OPT_VALUE },
	{ C_MIN_EFFECT, 0, "min-effect", OPT_VALUE }, { C_FORMAT, 0, "format", OPT_VALUE },
	{ C_NORMALIZE, 0, "normalize", OPT_VALUE }, { C_MIN_SAMPLES, 0, "min-samples", OPT_VALUE },
	{ C_ASSUMED_CV, 0, "assumed-cv", OPT_VALUE }, { C_OUTPUT, 'o', "output", OPT_VALUE },
	{ C_INCLUSIVE, 0, "inclusive", OPT_FLAG }, { C_ALL, 0, "all", OPT_FLAG },
	{ C_CG_BASE, 0, "callgrind-base", OPT_VALUE }, { C_CG_HEAD, 0, "callgrind-head", OPT_VALUE },
	{ C_BENCHMARK, 0, "benchmark", OPT_VALUE }, { C_THRESHOLD, 0, "threshold", OPT_VALUE },
	{ C_MAP_MODULE, 0, "map-module", OPT_VALUE }, { C_MAP_FUNCTION, 0, "map-function", OPT_VALUE },
	{ 0 },
};

static const bool cross_only[C_COUNT] = {
	[C_CG_BASE] = true, [C_CG_HEAD] = true, [C_BENCHMARK] = true, [C_THRESHOLD] = true,
};
static const bool diff_only[C_COUNT] = { [C_INCLUSIVE] = true };

struct parse_state {
	struct an_cli *c;
	an_paths *list;		/* where bare file names go */
	bool cross;
};

/* --base/--head switch the list later file names go to; --base=F adds F. */
static void set_side(struct parse_state *ps, an_paths *side, const char *file)
{
	ps->list = side;
	if (file)
		VEC_PUSH(side, (char *)file);
}

static int apply_option(void *ctx, int id, const char *val, const char *flag)
{
	struct parse_state *ps = ctx;
	struct an_cli *c = ps->c;

	if (id > 0 && ((cross_only[id] && !ps->cross) || (diff_only[id] && ps->cross)))
		return usage_error("unknown option '%s'", flag);
	switch (id) {
	case OPT_ARG: VEC_PUSH(ps->list, (char *)val); return 0;
	case C_BASE: set_side(ps, &c->base, val); return 0;
	case C_HEAD: set_side(ps, &c->head, val); return 0;
	case C_METRIC:
		if (prof_view_metric_parse(val, &c->metric) < 0)
			return usage_error("unknown %s '%s' (want cpu, wall, off-cpu, io-wait or sleep)",
					   flag, val);
		return 0;
	case C_ALPHA: return opt_double(flag, val, 1e-6, 0.5, &c->o.alpha);
	case C_MIN_EFFECT: return opt_percent(flag, val, 1000, &c->o.min_effect);
	case C_THRESHOLD: return opt_percent(flag, val, 1000, &c->ir_threshold);
	case C_ASSUMED_CV: return opt_percent(flag, val, 1000, &c->o.assumed_cv);
	case C_MIN_SAMPLES: return opt_double(flag, val, 0, 1e12, &c->o.min_samples);
	case C_FORMAT: return opt_text_or_json(flag, val, &c->json);
	case C_NORMALIZE: c->normalize = val; return 0;
	case C_OUTPUT: c->output = val; return 0;
	case C_CG_BASE: c->cg_base = val; return 0;
	case C_CG_HEAD: c->cg_head = val; return 0;
	case C_BENCHMARK: c->benchmark = val; return 0;
	case C_INCLUSIVE: c->o.inclusive = true; return 0;
	case C_ALL: c->all = true; return 0;
	case C_MAP_MODULE:
	case C_MAP_FUNCTION: {
		const char *eq = strchr(val, '=');
		if (!eq || eq == val || !eq[1])
			return usage_error("invalid value '%s' for %s (want OLD=NEW)", val, flag);
		VEC_PUSH(id == C_MAP_MODULE ? &c->map_modules : &c->map_functions, (char *)val);
		return 0;
	}
	}
	return -EINVAL;
}

int an_cli_parse(struct an_cli *c, int argc, char **argv, bool cross)
{
	struct parse_state ps = { .c = c, .list = &c->positional, .cross = cross };

	memset(c, 0, sizeof(*c));
	an_opts_init(&c->o);
	c->ir_threshold = 0.02;
	return opt_parse(options, argc, argv, 0, apply_option, &ps, NULL);
}

void an_cli_fnset_init(const struct an_cli *c, struct an_fnset *fs)
{
	an_fnset_init(fs);
	for (size_t i = 0; i < c->map_modules.n; i++)
		prof_idset_map_module(&fs->ids, c->map_modules.v[i]);	/* checked when parsed */
	for (size_t i = 0; i < c->map_functions.n; i++)
		prof_idset_map_function(&fs->ids, c->map_functions.v[i]);
}

int an_load_side(struct an_fnset *fs, struct an_side *side, char **paths, size_t n,
		 const struct an_load_opts *o)
{
	for (size_t i = 0; i < n; i++) {
		struct prof_profile p;
		struct prof_read_info info;
		int ret;

		prof_profile_init(&p);
		ret = prof_data_read(paths[i], &p, &info);
		if (ret < 0) {
			prof_profile_free(&p);
			return ret;
		}
		if (info.truncated || !info.complete)
			warning("%s is truncated (recording was interrupted); using the samples before the cut",
				paths[i]);
		ret = an_side_add_profile(fs, side, &p, o);
		prof_profile_free(&p);
		if (ret < 0)
			return error("'%s' has no samples for the chosen --metric", paths[i]);
	}
	return 0;
}

struct an_report_info an_cli_report_info(const struct an_cli *c, const struct an_side *base,
					 const struct an_side *head)
{
	return (struct an_report_info){
		.metric = prof_view_metric_name(c->metric),
		.unit = base->runs.v[0].unit, .na = base->runs.n, .nb = head->runs.n,
		.all = c->all,
	};
}
