/*
 * parse.c - parsers of the text /proc gives for a task (stat, status, io):
 * the recorder's resource timeline reads live tasks with them and `prof
 * stat` reads its zombie child.  Pure functions of the text, so unit tests
 * feed them fixed strings.
 */
#include "prof/proc.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Fields after the ")" of comm (which may contain spaces and parens). */
int prof_proc_parse_stat_field(const char *stat_text, int want, uint64_t *value)
{
	const char *p = strrchr(stat_text, ')');	/* comm may hold spaces and ')' */
	int field = 2;

	if (!p)
		return -EINVAL;
	p++;
	while (*p) {
		while (*p == ' ')
			p++;
		if (!*p)
			break;
		if (++field == want) {
			char *end;

			*value = strtoull(p, &end, 10);
			return end == p ? -EINVAL : 0;
		}
		while (*p && *p != ' ')
			p++;
	}
	return -EINVAL;
}

int prof_proc_parse_stat_blkio(const char *stat_text, uint64_t *ticks)
{
	return prof_proc_parse_stat_field(stat_text, 42, ticks);
}

int prof_proc_parse_keyed(const char *text, const char *key, uint64_t *v)
{
	const char *p = strstr(text, key);

	if (!p)
		return -EINVAL;
	*v = strtoull(p + strlen(key), NULL, 10);
	return 0;
}

int prof_proc_parse_io(const char *io_text, uint64_t *read_bytes, uint64_t *write_bytes)
{
	if (prof_proc_parse_keyed(io_text, "\nread_bytes:", read_bytes) < 0 ||
	    prof_proc_parse_keyed(io_text, "\nwrite_bytes:", write_bytes) < 0)
		return -EINVAL;
	return 0;
}
