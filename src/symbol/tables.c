/*
 * tables.c - sorted (address, size, name) tables for code that has no ELF
 * file: /tmp/perf-PID.map JIT maps ("START SIZE name" lines, hex, as perf
 * and V8/JVM agents write them), and the parts of V8's names in them
 * (prof_jit_name_parse).  (/proc/kallsyms has its own flat table, ksyms.c.)
 *
 * Invariant: entries are sorted by start after load; lookups are binary
 * searches.  An entry without a size covers up to the next one.
 */
#include "tables-priv.h"
#include "prof/symbol.h"
#include <ctype.h>
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

static void sym_table_sort(struct sym_table *t)
{
	if (!sym_table_sorted(t))
		qsort(t->syms.v, t->syms.n, sizeof(*t->syms.v), sym_cmp);
	/* no size: a symbol ends where the next begins */
	for (size_t i = 0; i < t->syms.n; i++)
		if (t->syms.v[i].size == 0)
			t->syms.v[i].size = i + 1 < t->syms.n ? t->syms.v[i + 1].start - t->syms.v[i].start
							   : 4096;
}

const struct sym_entry *prof_sym_table_find(const struct sym_table *t, uint64_t addr)
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

void prof_sym_table_free(struct sym_table *t)
{
	for (size_t i = 0; i < t->syms.n; i++)
		free(t->syms.v[i].name);
	VEC_FREE(&t->syms);
}

/* One "START SIZE name" line (NUL-terminated, no newline); false if it
 * is not one (perf skips those too). */
static bool parse_perf_map_line(const char *line, struct sym_entry *e)
{
	uint64_t start, size;
	int pos = 0;

	if (sscanf(line, "%" SCNx64 " %" SCNx64 " %n", &start, &size, &pos) < 2 || !pos)
		return false;
	*e = (struct sym_entry){ start, size ? size : 1, xstrdup(line[pos] ? line + pos : "[jit]") };
	return true;
}

void prof_sym_table_parse_perf_map(struct sym_table *t, const char *text, size_t len)
{
	const char *p = text, *end = text + len;
	struct strbuf line = STRBUF_INIT;
	struct sym_entry e;

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		if (!eol)
			eol = end;
		sb_reset(&line);
		sb_add(&line, p, (size_t)(eol - p));	/* NUL-terminated; a NUL inside ends it */
		if (parse_perf_map_line(sb_str(&line), &e))
			VEC_PUSH(&t->syms, e);
		p = eol + 1;
	}
	sb_release(&line);
	sym_table_sort(t);
}

static int sym_table_load_perf_map(struct sym_table *t, const char *path)
{
	struct stat st;
	size_t len;
	int64_t size = stat(path, &st) == 0 ? st.st_size : -1;	/* before: a JIT may append */
	char *text = read_file(path, &len);

	prof_sym_table_free(t);
	t->file_size = -1;
	if (!text)
		return -errno;
	t->file_size = size;
	prof_sym_table_parse_perf_map(t, text, len);
	free(text);
	return 0;
}

/* A JIT's map as the process wrote it: the path is fixed at the first
 * lookup (a container's map is reached through /proc/PID/root). */
struct prof_jitmap {
	struct sym_table table;
	char *path;
};

struct prof_jitmap *prof_jitmap_open(char *path)
{
	struct prof_jitmap *j = xcalloc(1, sizeof(*j));

	j->path = path;
	sym_table_load_perf_map(&j->table, j->path);	/* missing file: empty table */
	return j;
}

/* JITs append to their map as they compile: reload when it has grown. */
static bool jit_reload_if_grown(struct prof_jitmap *j)
{
	struct stat st;

	if (stat(j->path, &st) < 0 || st.st_size == j->table.file_size)
		return false;
	sym_table_load_perf_map(&j->table, j->path);
	return true;
}

const char *prof_jitmap_find(struct prof_jitmap *j, uint64_t addr, uint64_t *start)
{
	const struct sym_entry *e = prof_sym_table_find(&j->table, addr);

	if (!e && jit_reload_if_grown(j))
		e = prof_sym_table_find(&j->table, addr);
	if (!e)
		return NULL;
	*start = e->start;
	return e->name;
}

void prof_jitmap_free(struct prof_jitmap *j)
{
	if (!j)
		return;
	prof_sym_table_free(&j->table);
	free(j->path);
	free(j);
}

/* "path:line:col" at the end of s: true with path cut there. */
static bool split_position(char *s, uint32_t *line, uint32_t *col)
{
	char *c2 = strrchr(s, ':'), *c1, *end;
	unsigned long l, c;

	if (!c2 || c2 == s)
		return false;
	*c2 = 0;
	c1 = strrchr(s, ':');
	if (!c1 || c1 == s) {
		*c2 = ':';
		return false;
	}
	l = strtoul(c1 + 1, &end, 10);
	if (end == c1 + 1 || *end || !isdigit((unsigned char)c2[1]) || l > UINT32_MAX) {
		*c2 = ':';
		return false;
	}
	c = strtoul(c2 + 1, &end, 10);
	if (*end || c > UINT32_MAX) {
		*c2 = ':';
		return false;
	}
	*c1 = 0;
	*line = (uint32_t)l;
	*col = (uint32_t)c;
	return true;
}

bool prof_jit_name_parse(const char *name, struct prof_jit_name *out)
{
	static const char *const kinds[] = { "JS:", "LazyCompile:", "Function:", "Script:", "Eval:" };
	const char *rest = NULL;
	char *buf, *space;
	uint32_t line, col;

	for (size_t i = 0; i < ARRAY_SIZE(kinds) && !rest; i++)
		if (!strncmp(name, kinds[i], strlen(kinds[i])))
			rest = name + strlen(kinds[i]);
	if (!rest)
		return false;
	if (*rest && strchr("*~^+-", *rest))
		rest++;
	buf = xstrdup(rest);
	/* the script follows the last space, unless an absolute path (which
	 * may hold spaces) starts at an earlier one */
	space = strstr(buf, " /");
	if (!space)
		space = strrchr(buf, ' ');
	if (!space || !split_position(space + 1, &line, &col)) {
		free(buf);
		return false;
	}
	*space = 0;
	*out = (struct prof_jit_name){ .buf = buf, .func = *buf ? buf : "(anonymous)",
				       .file = space + 1, .line = line, .column = col };
	return true;
}

void prof_jit_name_free(struct prof_jit_name *n)
{
	free(n->buf);
	n->buf = NULL;
}
