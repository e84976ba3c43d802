/*
 * cli.c - what `prof diff` and `prof crosscheck` share on the command line:
 * one option parser (multi-file --base/--head lists, --opt=value and
 * --opt value forms) and loading a list of prof.data files as the runs of
 * one side.  Returns 0 or -EINVAL after one error line; never exits.
 */
#include "prof/analysis.h"
#include "prof/cmd.h"
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

static int parse_double(const char *s, const char *opt, double lo, double hi, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v < lo || v > hi)
		return error("invalid value '%s' for %s (want a number from %g to %g)", s, opt, lo, hi);
	*out = v;
	return 0;
}

/* Options taking a value: name, and whether only crosscheck knows it. */
static const struct { const char *name; bool cross; } valued[] = {
	{ "--metric", false }, { "--alpha", false }, { "--min-effect", false },
	{ "--format", false }, { "--normalize", false }, { "--min-samples", false },
	{ "--assumed-cv", false }, { "--output", false }, { "-o", false },
	{ "--callgrind-base", true }, { "--callgrind-head", true },
	{ "--benchmark", true }, { "--threshold", true },
	{ "--map-module", false }, { "--map-function", false },
};

static int set_value(struct an_cli *c, const char *opt, const char *val)
{
	double d;

	if (!strcmp(opt, "--metric")) {
		if (prof_view_metric_parse(val, &c->metric) < 0)
			return error("unknown --metric '%s' (want cpu, wall, off-cpu, io-wait or sleep)", val);
	} else if (!strcmp(opt, "--alpha")) {
		return parse_double(val, opt, 1e-6, 0.5, &c->o.alpha);
	} else if (!strcmp(opt, "--min-effect")) {
		if (parse_double(val, opt, 0, 1000, &d) < 0)
			return -EINVAL;
		c->o.min_effect = d / 100;
	} else if (!strcmp(opt, "--threshold")) {
		if (parse_double(val, opt, 0, 1000, &d) < 0)
			return -EINVAL;
		c->ir_threshold = d / 100;
	} else if (!strcmp(opt, "--assumed-cv")) {
		if (parse_double(val, opt, 0, 1000, &d) < 0)
			return -EINVAL;
		c->o.assumed_cv = d / 100;
	} else if (!strcmp(opt, "--min-samples")) {
		return parse_double(val, opt, 0, 1e12, &c->o.min_samples);
	} else if (!strcmp(opt, "--format")) {
		if (strcmp(val, "text") && strcmp(val, "json"))
			return error("unknown --format '%s' (want text or json)", val);
		c->json = !strcmp(val, "json");
	} else if (!strcmp(opt, "--normalize")) {
		c->normalize = val;
	} else if (!strcmp(opt, "--output") || !strcmp(opt, "-o")) {
		c->output = val;
	} else if (!strcmp(opt, "--callgrind-base")) {
		c->cg_base = val;
	} else if (!strcmp(opt, "--callgrind-head")) {
		c->cg_head = val;
	} else if (!strcmp(opt, "--benchmark")) {
		c->benchmark = val;
	} else if (!strcmp(opt, "--map-module") || !strcmp(opt, "--map-function")) {
		const char *eq = strchr(val, '=');
		if (!eq || eq == val || !eq[1])
			return error("invalid value '%s' for %s (want OLD=NEW)", val, opt);
		an_paths *maps = !strcmp(opt, "--map-module") ? &c->map_modules : &c->map_functions;
		VEC_PUSH(maps, (char *)val);
	}
	return 0;
}

static int parse_option(struct an_cli *c, int argc, char **argv, int *i, bool cross)
{
	const char *arg = argv[*i];
	const char *eq = strchr(arg, '=');
	size_t len = eq ? (size_t)(eq - arg) : strlen(arg);

	for (size_t k = 0; k < ARRAY_SIZE(valued); k++) {
		if (strlen(valued[k].name) != len || strncmp(arg, valued[k].name, len) ||
		    (valued[k].cross && !cross))
			continue;
		if (eq)
			return set_value(c, valued[k].name, eq + 1);
		if (*i + 1 >= argc)
			return error("option %s needs a value", valued[k].name);
		return set_value(c, valued[k].name, argv[++*i]);
	}
	if (!strcmp(arg, "--inclusive") && !cross)
		c->o.inclusive = true;
	else if (!strcmp(arg, "--all"))
		c->all = true;
	else
		return error("unknown option '%s' (see 'prof %s --help')", arg,
			     cross ? "crosscheck" : "diff");
	return 0;
}

int an_cli_parse(struct an_cli *c, int argc, char **argv, bool cross)
{
	void *list = &c->positional;	/* where bare file names go */

	memset(c, 0, sizeof(*c));
	an_opts_init(&c->o);
	c->ir_threshold = 0.02;
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		if (!strcmp(arg, "--base") || !strcmp(arg, "--head")) {
			list = arg[2] == 'b' ? (void *)&c->base : (void *)&c->head;
			continue;
		}
		if (!strncmp(arg, "--base=", 7) || !strncmp(arg, "--head=", 7)) {
			list = arg[2] == 'b' ? (void *)&c->base : (void *)&c->head;
			VEC_PUSH((an_paths *)list, (char *)arg + 7);
			continue;
		}
		if (arg[0] == '-' && arg[1]) {
			if (parse_option(c, argc, argv, &i, cross) < 0)
				return -EINVAL;
			continue;
		}
		VEC_PUSH((an_paths *)list, (char *)arg);
	}
	return 0;
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

FILE *an_cli_open_output(const struct an_cli *c)
{
	FILE *f;

	if (!c->output || !strcmp(c->output, "-"))
		return stdout;
	if (!(f = fopen_output(c->output)))
		error("cannot create '%s': %s", c->output, strerror(errno));
	return f;
}

int an_cli_close_output(const struct an_cli *c, FILE *f)
{
	if (f == stdout)
		return fflush(f) ? error("cannot write to stdout: %s", strerror(errno)), -EIO : 0;
	if (fclose(f))
		return error("cannot write '%s': %s", c->output, strerror(errno)), -EIO;
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

int an_cli_main(int argc, char **argv, const struct an_command *cmd)
{
	struct an_cli c;
	bool regression = false;
	int ret;

	if (wants_help(argc, argv)) {
		cmd->usage(stdout);
		return 0;
	}
	if (an_cli_parse(&c, argc, argv, cmd->crosscheck) < 0 || cmd->check(&c) < 0) {
		an_cli_free(&c);
		return EXIT_USAGE;
	}
	ret = cmd->run(&c, &regression);
	an_cli_free(&c);
	if (ret < 0)
		return EXIT_USAGE;
	return regression ? EXIT_REGRESSION : 0;
}
