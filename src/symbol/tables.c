/*
 * tables.c - sorted (address, size, name) tables for code that has no ELF
 * file: /proc/kallsyms (loaded once per process) and /tmp/perf-PID.map JIT
 * maps ("START SIZE name" lines, hex, as perf and V8/JVM agents write them).
 *
 * Invariant: entries are sorted by start after load; lookups are binary
 * searches.  kallsyms entries have no size, so a symbol covers up to the
 * next one.
 */
#include "tables.h"
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static int sym_cmp(const void *a, const void *b)
{
	const struct sym_entry *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

static bool sym_table_sorted(const struct sym_table *t)
{
	for (size_t i = 1; i < t->syms.n; i++)
		if (t->syms.v[i - 1].start > t->syms.v[i].start)
			return false;
	return true;
}

void sym_table_sort(struct sym_table *t)
{
	/* /proc/kallsyms comes sorted: a merge sort of 120k entries is not free */
	if (!sym_table_sorted(t))
		qsort(t->syms.v, t->syms.n, sizeof(*t->syms.v), sym_cmp);
	/* kallsyms has no sizes: a symbol ends where the next begins */
	for (size_t i = 0; i < t->syms.n; i++)
		if (t->syms.v[i].size == 0)
			t->syms.v[i].size = i + 1 < t->syms.n ? t->syms.v[i + 1].start - t->syms.v[i].start
							   : 4096;
}

const struct sym_entry *sym_table_find(const struct sym_table *t, uint64_t addr)
{
	size_t lo = 0, hi = t->syms.n;

	while (lo < hi) {	/* last entry with start <= addr */
		size_t mid = lo + (hi - lo) / 2;
		if (t->syms.v[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	const struct sym_entry *s = &t->syms.v[lo - 1];
	return addr - s->start < s->size ? s : NULL;
}

void sym_table_free(struct sym_table *t)
{
	for (size_t i = 0; i < t->syms.n; i++)
		free(t->syms.v[i].name);
	VEC_FREE(&t->syms);
}

int sym_table_load_perf_map(struct sym_table *t, const char *path)
{
	struct stat st;
	FILE *f = fopen(path, "re");

	sym_table_free(t);
	t->file_size = -1;
	if (!f)
		return -errno;
	if (fstat(fileno(f), &st) == 0)
		t->file_size = st.st_size;
	char *line = NULL;
	size_t cap = 0;
	while (getline(&line, &cap, f) > 0) {
		uint64_t start, size;
		int pos = 0;
		if (sscanf(line, "%" SCNx64 " %" SCNx64 " %n", &start, &size, &pos) < 2 || !pos)
			continue;
		char *name = line + pos;
		name[strcspn(name, "\n")] = '\0';
		struct sym_entry e = { start, size ? size : 1, xstrdup(*name ? name : "[jit]") };
		VEC_PUSH(&t->syms, e);
	}
	free(line);
	fclose(f);
	sym_table_sort(t);
	return 0;
}

/* One /proc/kallsyms line, "ADDR TYPE NAME[\t[module]]": a hand-written
 * parser, because sscanf was a third of loading 120k lines. */
static bool parse_kallsyms_line(char *line, uint64_t *start, char *type, char **name)
{
	uint64_t v = 0;
	char *c = line;

	for (;; c++) {
		unsigned d = (unsigned)(*c | 0x20);	/* lower-case letters */
		if (*c >= '0' && *c <= '9')
			v = v << 4 | (unsigned)(*c - '0');
		else if (d >= 'a' && d <= 'f')
			v = v << 4 | (d - 'a' + 10);
		else
			break;
	}
	if (c == line || c[0] != ' ' || !c[1] || c[2] != ' ')
		return false;
	*start = v;
	*type = c[1];
	*name = c + 3;
	(*name)[strcspn(*name, " \t\n")] = '\0';
	return **name != '\0';
}

/* Returns 0, or -errno; *all_zero tells if kptr_restrict hid the addresses. */
int sym_table_load_kallsyms(struct sym_table *t, const char *path, bool *all_zero)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	static char buf[1 << 16];	/* fewer read() calls into seq_file */
	setvbuf(f, buf, _IOFBF, sizeof(buf));
	char *line = NULL;
	size_t cap = 0;
	*all_zero = true;
	while (getline(&line, &cap, f) > 0) {
		uint64_t start;
		char type, *name;
		if (!parse_kallsyms_line(line, &start, &type, &name))
			continue;
		if (start)
			*all_zero = false;
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		struct sym_entry e = { start, 0, xstrdup(name) };
		VEC_PUSH(&t->syms, e);
	}
	free(line);
	fclose(f);
	sym_table_sort(t);
	return 0;
}
