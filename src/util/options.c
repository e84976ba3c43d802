/*
 * options.c - the command-line option parser and number parsers declared
 * in prof/options.h.  Lives in the library (not in main) so that the fuzz
 * targets, which link the command objects without prof.c, resolve it too.
 *
 * Errors name the option exactly as the user typed it: for a bundle such
 * as -nq the culprit is "-q", never the whole argument, never the command.
 */
#include "prof/options.h"
#include "prof/util.h"
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int usage_error(const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (prof_cmd_name)
		error("%s (see 'prof %s --help')", line, prof_cmd_name);
	else
		error("%s (see 'prof --help')", line);
	return -EINVAL;
}

static const struct opt *find_long(const struct opt *t, const char *name, size_t len)
{
	for (; t->id; t++)
		if (t->long_name && strlen(t->long_name) == len && !strncmp(t->long_name, name, len))
			return t;
	return NULL;
}

static const struct opt *find_short(const struct opt *t, char c)
{
	for (; t->id; t++)
		if (t->short_name == c)
			return t;
	return NULL;
}

/* --name, --name=value, --name value.  Returns 0, OPT_HELP or -EINVAL. */
static int parse_long(const struct opt *table, int argc, char **argv, int *i,
		      opt_apply_fn apply, void *ctx)
{
	const char *arg = argv[*i] + 2, *eq = strchr(arg, '=');
	size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
	const struct opt *o = find_long(table, arg, len);
	char flag[128];

	snprintf(flag, sizeof(flag), "--%.*s", (int)MIN(len, 100), arg);
	if (!o) {
		if (!strcmp(flag, "--help"))
			return OPT_HELP;
		return usage_error("unknown option '%s'", flag);
	}
	if (o->kind == OPT_FLAG) {
		if (eq)
			return usage_error("option '%s' takes no value", flag);
		return apply(ctx, o->id, NULL, flag);
	}
	if (eq || o->kind == OPT_OPTIONAL)
		return apply(ctx, o->id, eq ? eq + 1 : NULL, flag);
	if (*i + 1 >= argc)
		return usage_error("option '%s' needs a value", flag);
	return apply(ctx, o->id, argv[++*i], flag);
}

/* -a, -abc (bundled flags), -ovalue, -o value. */
static int parse_short(const struct opt *table, int argc, char **argv, int *i,
		       opt_apply_fn apply, void *ctx)
{
	const char *arg = argv[*i];

	for (size_t k = 1; arg[k]; k++) {
		char flag[3] = { '-', arg[k], 0 };
		const struct opt *o = find_short(table, arg[k]);
		int ret;

		if (!o) {
			if (arg[k] == 'h')
				return OPT_HELP;
			return usage_error("unknown option '%s'", flag);
		}
		if (o->kind == OPT_FLAG) {
			if ((ret = apply(ctx, o->id, NULL, flag)) != 0)
				return ret;
			continue;
		}
		if (arg[k + 1] || o->kind == OPT_OPTIONAL)
			return apply(ctx, o->id, arg[k + 1] ? arg + k + 1 : NULL, flag);
		if (*i + 1 >= argc)
			return usage_error("option '%s' needs a value", flag);
		return apply(ctx, o->id, argv[++*i], flag);
	}
	return 0;
}

int opt_parse(const struct opt *table, int argc, char **argv, unsigned flags,
	      opt_apply_fn apply, void *ctx, int *rest)
{
	int i, ret = 0;

	for (i = 1; i < argc && !ret; i++) {
		const char *arg = argv[i];

		if (!strcmp(arg, "--")) {
			i++;
			break;
		}
		if (arg[0] != '-' || !arg[1]) {	/* plain argument; "-" is stdin/stdout */
			if (flags & OPT_STOP_AT_ARG)
				break;
			ret = apply(ctx, OPT_ARG, arg, NULL);
		} else if (arg[1] == '-') {
			ret = parse_long(table, argc, argv, &i, apply, ctx);
		} else {
			ret = parse_short(table, argc, argv, &i, apply, ctx);
		}
	}
	if (ret)
		return ret < 0 ? -EINVAL : ret;
	if (!(flags & OPT_STOP_AT_ARG))
		for (; i < argc; i++)	/* after "--": all plain */
			if ((ret = apply(ctx, OPT_ARG, argv[i], NULL)) < 0)
				return -EINVAL;
	if (rest)
		*rest = i;
	return 0;
}

int opt_u64(const char *flag, const char *value, uint64_t lo, uint64_t hi, uint64_t *out)
{
	uint64_t v;

	if (parse_u64(value, &v) < 0 || v < lo || v > hi)
		return usage_error("invalid value '%s' for %s (want a whole number from %llu to %llu)",
				   value, flag, (unsigned long long)lo, (unsigned long long)hi);
	*out = v;
	return 0;
}

int opt_id_list(const char *flag, const char *value, uint64_t lo, uint64_t hi,
		opt_id_fn add, void *ctx)
{
	char *copy = xstrdup(value), *save = NULL;
	bool any = false;
	int ret = 0;

	for (char *t = strtok_r(copy, ",", &save); t && !ret; t = strtok_r(NULL, ",", &save)) {
		uint64_t v = 0;
		if (!(ret = opt_u64(flag, t, lo, hi, &v)))
			ret = add(ctx, v, flag);
		any = true;
	}
	if (!any)
		ret = usage_error("no id in '%s' for %s", value, flag);
	free(copy);
	return ret;
}

int opt_double(const char *flag, const char *value, double lo, double hi, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(value, &end);
	if (errno || end == value || *end || !isfinite(v) || v < lo || v > hi)
		return usage_error("invalid value '%s' for %s (want a number from %g to %g)",
				   value, flag, lo, hi);
	*out = v;
	return 0;
}

int opt_percent(const char *flag, const char *value, double hi, double *out)
{
	size_t n = strlen(value);
	char *copy = xstrdup(value);
	double v;
	int ret;

	if (n && copy[n - 1] == '%')
		copy[n - 1] = 0;
	ret = opt_double(flag, copy, 0, hi, &v);
	free(copy);
	if (ret < 0)
		return ret;
	*out = v / 100;
	return 0;
}

int opt_choice(const char *flag, const char *value, const char *const *names)
{
	struct strbuf want = STRBUF_INIT;
	size_t n = 0;

	for (; names[n]; n++)
		if (!strcmp(value, names[n]))
			return (int)n;
	for (size_t i = 0; i < n; i++)
		sb_addf(&want, "%s%s", i ? (i + 1 == n ? " or " : ", ") : "", names[i]);
	usage_error("unknown %s '%s' (want %s)", flag, value, sb_str(&want));
	sb_release(&want);
	return -EINVAL;
}

int opt_text_or_json(const char *flag, const char *value, bool *json)
{
	static const char *const formats[] = { "text", "json", NULL };
	int k = opt_choice(flag, value, formats);

	if (k < 0)
		return k;
	*json = k == 1;
	return 0;
}

int opt_color(const char *flag, const char *value, int *when)
{
	static const char *const whens[] = { "auto", "always", "never", NULL };
	int k = value ? opt_choice(flag, value, whens) : 1;

	if (k < 0)
		return k;
	*when = k;
	return 0;
}

bool color_wanted(int when, bool to_terminal)
{
	if (when != 0)
		return when == 1;
	return to_terminal && !getenv("NO_COLOR");
}
