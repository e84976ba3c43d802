/*
 * perf-only.c - the refusal of a perf flag a prof command does not have
 * (perf-only-priv.h): the rows appended to the command's option table,
 * and the one line that says perf's meaning and prof's reason.
 */
#include "perf-only-priv.h"
#include <errno.h>

const struct opt *cmd_perf_only_append(const struct perf_only_table *t, struct opt *table, size_t cap,
				       int first_id)
{
	size_t n = 0;

	while (table[n].id && table[n].id != first_id)
		n++;
	for (size_t i = 0; i < t->n && n < cap; i++, n++)	/* again: the same rows */
		table[n] = (struct opt){ first_id + (int)i, t->v[i].s, t->v[i].l, t->v[i].kind };
	return table;
}

int cmd_perf_only_refuse(const struct perf_only_table *t, int i, const char *flag)
{
	const struct perf_only *f;

	if (i < 0 || (size_t)i >= t->n)
		return -EINVAL;
	f = &t->v[i];
	if (f->meaning)
		return usage_error("perf's %s (%s) is not supported by prof: %s", flag, f->meaning,
				   f->why);
	return usage_error("perf's %s is not supported by prof: %s", flag, f->why);
}
