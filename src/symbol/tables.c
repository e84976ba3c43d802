/*
 * tables.c - sorted (address, size, name) tables for code that has no ELF
 * file: /tmp/perf-PID.map JIT maps ("START SIZE name" lines, hex, as perf
 * and V8/JVM agents write them).  (/proc/kallsyms has its own flat table,
 * ksyms.c.)
 *
 * Invariant: entries are sorted by start after load; lookups are binary
 * searches.  An entry without a size covers up to the next one.
 */
#include "tables-priv.h"
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
	if (!sym_table_sorted(t))
		qsort(t->syms.v, t->syms.n, sizeof(*t->syms.v), sym_cmp);
	/* no size: a symbol ends where the next begins */
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
