/*
 * perf-only-priv.h - perf's flags that a prof command does not have, known
 * by name so that a perf user who types one reads perf's meaning, why
 * prof lacks it and what to use instead, never "unknown option".  Each
 * command keeps its own table (record-perf-only.c, report-perf-only.c);
 * perf-only.c appends a table to the command's option rows and words the
 * refusal.  Their kinds (flag, value, optional value) mirror perf's so
 * that a flag's value is never mistaken for a command or a file.
 */
#ifndef PROF_PERF_ONLY_PRIV_H
#define PROF_PERF_ONLY_PRIV_H

#include "prof/options.h"
#include <stddef.h>

struct perf_only {
	char s;			/* short name, 0: none */
	const char *l;		/* long name, NULL: none */
	enum opt_kind kind;
	const char *meaning;	/* what it does in perf, NULL: the name says it */
	const char *why;	/* why prof lacks it, and what to use instead */
};

struct perf_only_table {
	const struct perf_only *v;
	size_t n;
};

/* Appends the rows of t (ids first_id + i) after table's own rows (which
 * end at a zero id), never past row cap; returns table for opt_parse(). */
const struct opt *cmd_perf_only_append(const struct perf_only_table *t, struct opt *table, size_t cap,
				       int first_id);
/* The one usage line for row i of t as typed (flag): "perf's FLAG (MEANING)
 * is not supported by prof: WHY"; -EINVAL. */
int cmd_perf_only_refuse(const struct perf_only_table *t, int i, const char *flag);

extern const struct perf_only_table record_perf_only, report_perf_only;

#endif
