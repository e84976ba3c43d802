/*
 * baseline.c - read the per-run values of one metric back from a JSON file
 * written by `prof stat --format=json` / `--save-baseline`.  This is not a
 * general JSON parser: it walks to "metrics" -> "<name>" -> "runs" with a
 * scanner that skips strings and balances braces, which is all the format
 * prof writes needs, and rejects anything else with -EINVAL.
 * res_baseline_load reads and checks a whole file before any run, so a bad
 * path or file costs the user no waiting.
 */
#include "prof/resource.h"
#include "prof/util.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Skip a JSON string starting at the opening quote; returns past the close. */
static const char *skip_string(const char *p)
{
	for (p++; *p && *p != '"'; p++)
		if (*p == '\\' && p[1])
			p++;
	return *p ? p + 1 : p;
}

static const char *skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
		p++;
	return p;
}

/*
 * In the object whose '{' is at p, find key at depth 1 and return a pointer
 * to its value, or NULL.
 */
static const char *object_member(const char *p, const char *key)
{
	size_t klen = strlen(key);
	int depth = 0;

	for (; *p; p++) {
		if (*p == '"') {
			const char *s = p + 1, *e = skip_string(p);

			if (depth == 1 && (size_t)(e - s - 1) == klen && !strncmp(s, key, klen)) {
				e = skip_ws(e);
				if (*e == ':')
					return skip_ws(e + 1);
			}
			p = e - 1;
		} else if (*p == '{' || *p == '[') {
			depth++;
		} else if (*p == '}' || *p == ']') {
			if (--depth == 0)
				return NULL;
		}
	}
	return NULL;
}

int res_baseline_runs(const char *json, const char *metric, double **vals, size_t *n)
{
	const char *p = skip_ws(json), *m;
	VEC(double) v = { 0 };

	*vals = NULL;
	*n = 0;
	if (*p != '{')
		return -EINVAL;
	m = object_member(p, "metrics");
	if (!m || *m != '{')
		return -EINVAL;
	m = object_member(m, metric);
	if (!m || *m != '{')
		return -ENOENT;
	m = object_member(m, "runs");
	if (!m || *m != '[')
		return -ENOENT;	/* metric present but unavailable in that run */
	for (m = skip_ws(m + 1); *m != ']';) {
		char *end;
		double x = strtod(m, &end);

		if (end == m) {
			VEC_FREE(&v);
			return -EINVAL;
		}
		VEC_PUSH(&v, x);
		m = skip_ws(end);
		if (*m == ',')
			m = skip_ws(m + 1);
		else if (*m != ']') {
			VEC_FREE(&v);
			return -EINVAL;
		}
	}
	*vals = v.v;
	*n = v.n;
	return 0;
}

char *res_baseline_load(const char *path)
{
	char *json = read_file(path, NULL);
	double *v;
	size_t n;

	if (!json) {
		error("cannot read baseline '%s': %s", path, strerror(errno));
		return NULL;
	}
	if (res_baseline_runs(json, "wall_s", &v, &n) < 0) {
		error("'%s' is not a prof stat JSON report (write one with --save-baseline)", path);
		free(json);
		return NULL;
	}
	free(v);
	return json;
}
