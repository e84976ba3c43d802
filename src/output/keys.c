/*
 * keys.c - `prof report --sort comm,dso,sym...`: perf report's sort keys.
 * Every sample is counted in the one row of its key tuple (comm, pid, tid
 * of its thread; dso, sym, srcline of its innermost frame), so the rows
 * add up to 100% as perf's do with --no-children.
 */
#include "output-priv.h"
#include <errno.h>
#include <string.h>

enum key { K_COMM, K_PID, K_TID, K_DSO, K_SYM, K_SRCLINE, K_COUNT };
static const char *const key_names[K_COUNT + 1] = {
	"comm", "pid", "tid", "dso", "sym", "srcline", NULL
};
static const char *const key_titles[K_COUNT] = {
	"Command", "Pid", "Tid", "Shared Object", "Symbol", "Source:Line"
};

/* The keys of a --sort list into keys[] (at most max): 0 or -EINVAL. */
static int prof_sort_keys_parse(const char *list, int *keys, size_t max, size_t *n)
{
	const char *p = list;

	*n = 0;
	while (*p) {
		size_t len = strcspn(p, ","), k;

		for (k = 0; k < K_COUNT; k++)
			if (strlen(key_names[k]) == len && !strncmp(p, key_names[k], len))
				break;
		if (k == K_COUNT || *n == max)
			return -EINVAL;
		keys[(*n)++] = (int)k;
		p += len + (p[len] == ',');
	}
	return *n ? 0 : -EINVAL;
}

int prof_output_sort_parse(struct prof_view *v, const char *s)
{
	int keys[16];
	size_t n;

	if (!strcmp(s, "self") || !strcmp(s, "total")) {
		v->sort = s[0] == 's' ? PROF_SORT_SELF : PROF_SORT_TOTAL;
		v->sort_keys = NULL;
		return 0;
	}
	if (prof_sort_keys_parse(s, keys, ARRAY_SIZE(keys), &n) < 0)
		return -EINVAL;
	v->sort_keys = s;
	return 0;
}

/* One key of one sample as text, appended to sb. */
static void add_key(struct strbuf *sb, const struct prof_profile *p, const struct prof_agg *a,
		    int key)
{
	const struct prof_thread *t = &p->threads.v[a->thread];
	const struct prof_frame *f = a->node && a->node < p->nodes.n
		? &p->frames.v[p->nodes.v[a->node].frame] : NULL;

	switch (key) {
	case K_COMM: add_printable(sb, prof_str(p, t->comm), "\t", '?'); break;
	case K_PID: sb_addf(sb, "%u", t->pid); break;
	case K_TID: sb_addf(sb, "%u", t->tid); break;
	case K_DSO: add_printable(sb, f ? prof_module_basename(p, f->module) : "", "\t", '?'); break;
	case K_SYM: add_printable(sb, f ? render_fn_name(p, f->func) : "[unknown]", "\t", '?'); break;
	case K_SRCLINE:
		if (f && f->file && *prof_str(p, f->file)) {
			add_printable(sb, prof_str(p, f->file), "\t", '?');
			sb_addf(sb, ":%u", f->line);
		} else {
			sb_adds(sb, "??:0");
		}
		break;
	}
}

struct key_row { char *text; uint64_t weight; };

static int by_weight(const void *pa, const void *pb)
{
	const struct key_row *a = pa, *b = pb;

	if (a->weight != b->weight)
		return a->weight > b->weight ? -1 : 1;
	return strcmp(a->text, b->text);
}

static void print_rows(FILE *f, const struct prof_view *v, const int *keys, size_t nk,
		       struct key_row *rows, size_t n, uint64_t grand)
{
	if (!v->quiet) {
		fprintf(f, "%s  Overhead  %8s", color(v, COLOR_HEADER),
			view_column(v));
		for (size_t k = 0; k < nk; k++)
			fprintf(f, "  %s", key_titles[keys[k]]);
		fprintf(f, "%s\n", color(v, COLOR_RESET));
	}
	for (size_t i = 0; i < n; i++) {
		if (percent(rows[i].weight, grand) < v->percent_limit)
			continue;
		double pct = percent(rows[i].weight, grand);

		fprintf(f, "%s%9.2f%%%s  ", color_percent(v, pct), pct,
			color(v, *color_percent(v, pct) ? COLOR_RESET : ""));
		if (view_is_time(v))
			fprintf(f, "%8.2f", (double)rows[i].weight / 1e6);
		else
			fprintf(f, "%8llu", (unsigned long long)rows[i].weight);
		/* the key columns were joined with tabs (never inside a key) */
		for (const char *c = rows[i].text; *c; c++)
			fputs(*c == '\t' ? "  " : (char[]){ *c, 0 }, f);
		fputc('\n', f);
	}
}

int prof_output_text_keys(FILE *f, const struct prof_profile *p, const struct prof_view *v)
{
	int keys[K_COUNT * 2];
	size_t nk, nrows = 0;
	struct u64map index = { 0 };
	VEC(struct key_row) rows = { 0 };
	struct strbuf sb = STRBUF_INIT;
	uint64_t grand = 0;

	if (prof_sort_keys_parse(v->sort_keys, keys, ARRAY_SIZE(keys), &nk) < 0)
		return -EINVAL;
	for (size_t i = 0; i < p->aggs.n; i++) {
		uint64_t w = prof_view_weight(p, v, &p->aggs.v[i]), h, *slot;
		bool created;

		if (!w)
			continue;
		grand += w;
		sb_reset(&sb);
		for (size_t k = 0; k < nk; k++) {
			sb_addch(&sb, '\t');
			add_key(&sb, p, &p->aggs.v[i], keys[k]);
		}
		/* the hash picks a chain of candidate rows; the text decides */
		for (h = hash_bytes(sb.buf, sb.len);; h++) {
			slot = u64map_slot(&index, h, &created);
			if (created || !strcmp(rows.v[*slot].text, sb.buf))
				break;
		}
		if (created) {
			*slot = rows.n;
			VEC_PUSH(&rows, ((struct key_row){ xstrdup(sb.buf), 0 }));
		}
		rows.v[*slot].weight += w;
	}
	nrows = rows.n;
	if (nrows)
		qsort(rows.v, nrows, sizeof(*rows.v), by_weight);
	render_text_header(f, p, v, grand);
	print_rows(f, v, keys, nk, rows.v, nrows, prof_view_percent_base(p, v, grand));
	if (!grand)
		fprintf(f, "# no samples match (metric %s)\n", prof_view_metric_name(v->metric));
	for (size_t i = 0; i < nrows; i++)
		free(rows.v[i].text);
	VEC_FREE(&rows);
	u64map_free(&index);
	sb_release(&sb);
	return ferror(f) ? -EIO : 0;
}
