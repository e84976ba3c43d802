/*
 * annotate.c - renders one parsed callgrind part the way
 * callgrind_annotate does (flat table of file:function rows with event
 * columns, optional caller/callee tree and per-line source annotation),
 * and all parts as JSON (schema "prof-callgrind/1"); cg_annotate picks
 * the parts a command line selects and checks them before printing any.
 */
#include "prof/callgrind.h"
#include <errno.h>
#include <string.h>

static const char fancy[] =
	"--------------------------------------------------------------------------------\n";

static void cg_commify(char *buf, size_t size, uint64_t v)
{
	char tmp[32];
	int n = snprintf(tmp, sizeof(tmp), "%llu", (unsigned long long)v);
	size_t o = 0;

	for (int i = 0; i < n && o + 2 < size; i++) {
		if (i && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = tmp[i];
	}
	buf[o] = 0;
}

void cg_put_printable(FILE *f, const char *s)
{
	/* Names come from the profile: a control character (an escape
	 * sequence) must not reach the terminal. */
	for (const unsigned char *u = (const unsigned char *)s; *u; u++)
		fputc(*u < 0x20 || *u == 0x7f ? '?' : *u, f);
}

/* One escaping routine for every JSON writer: the report's json_escape. */
void cg_json_string(FILE *f, const char *s)
{
	struct strbuf sb = STRBUF_INIT;

	json_escape(&sb, s);
	fputs(sb_str(&sb), f);
	sb_release(&sb);
}

/* Parses --show for a part into event indexes; -EINVAL (with an error line) for unknown names. */
static int cg_show_events(const struct cg_profile *p, const struct cg_part *part,
		   const char *show, int **ev, size_t *nev)
{
	size_t n = 0, cap = cg_nev(part) + 1;
	int *v = xcalloc(cap, sizeof(int));

	if (!show || !*show) {
		for (size_t i = 0; i < cg_nev(part); i++)
			v[n++] = (int)i;
	} else {
		char *dup = xstrdup(show), *save = NULL;
		for (char *tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			int idx = cg_event_index(p, part, tok);
			if (idx < 0) {
				struct strbuf sb = STRBUF_INIT;
				for (size_t i = 0; i < cg_nev(part); i++)
					sb_addf(&sb, "%s%s", i ? " " : "", strtab_get(&p->strs, part->events.v[i]));
				error("unknown event '%s' (this profile has: %s)", tok, sb_str(&sb));
				sb_release(&sb);
				free(dup);
				free(v);
				return -EINVAL;
			}
			if (n + 1 >= cap) {
				cap *= 2;
				v = xrealloc(v, cap * sizeof(int));
			}
			v[n++] = idx;
		}
		free(dup);
	}
	*ev = v;
	*nev = n;
	return 0;
}

/* qsort context: glibc's qsort_r */
struct sort_ctx {
	const struct cg_profile *p;
	const struct cg_part *part;
	const int *ev;
	size_t nev;
	bool inclusive;
};

static uint32_t row_cost_off(const struct cg_fn *f, bool inclusive)
{
	return inclusive ? f->incl : f->self;
}

static int row_cmp(const void *a, const void *b, void *arg)
{
	const struct sort_ctx *c = arg;
	const struct cg_fn *fa = &c->part->fns.v[*(const uint32_t *)a];
	const struct cg_fn *fb = &c->part->fns.v[*(const uint32_t *)b];
	const uint64_t *ca = cg_cost(c->part, row_cost_off(fa, c->inclusive));
	const uint64_t *cb = cg_cost(c->part, row_cost_off(fb, c->inclusive));

	for (size_t i = 0; i < c->nev; i++) {
		int e = c->ev[i];
		if (ca[e] != cb[e])
			return ca[e] > cb[e] ? -1 : 1;
	}
	int r = strcmp(strtab_get(&c->p->strs, fa->file), strtab_get(&c->p->strs, fb->file));
	if (r)
		return r;
	return strcmp(strtab_get(&c->p->strs, fa->name), strtab_get(&c->p->strs, fb->name));
}

/* Rows of a part sorted as callgrind_annotate sorts them (by the shown
 * events in order, descending; then by name).  Returns the count; *rows is malloc'ed. */
static size_t cg_sorted_rows(const struct cg_profile *p, const struct cg_part *part,
		      const int *ev, size_t nev, bool inclusive, uint32_t **rows)
{
	struct sort_ctx c = { p, part, ev, nev, inclusive };
	uint32_t *r = xcalloc(part->fns.n + 1, sizeof(uint32_t));
	size_t n = 0;

	for (size_t i = 0; i < part->fns.n; i++)
		r[n++] = (uint32_t)i;
	qsort_r(r, n, sizeof(uint32_t), row_cmp, &c);
	*rows = r;
	return n;
}

/* --- text ----------------------------------------------------------------- */

struct cols {
	const int *ev;
	size_t nev;
	size_t width[64];
	const uint64_t *totals;
};

static size_t cell_text(char *buf, size_t size, uint64_t v, uint64_t total)
{
	char num[40];

	cg_commify(num, sizeof(num), v);
	if (!v) {
		snprintf(buf, size, "%s         ", num);
	} else {
		double pct = total ? 100.0 * (double)v / (double)total : 0;
		snprintf(buf, size, pct < 99.995 ? "%s (%5.2f%%)" : "%s (%5.1f%%)", num, pct);
	}
	return strlen(buf);
}

static void widen(struct cols *c, const uint64_t *cost)
{
	char buf[80];

	for (size_t i = 0; i < c->nev && i < 64; i++) {
		size_t w = cell_text(buf, sizeof(buf), cost[c->ev[i]], c->totals[c->ev[i]]);
		c->width[i] = MAX(c->width[i], w);
	}
}

static void print_cells(FILE *f, const struct cols *c, const uint64_t *cost)
{
	char buf[80];

	for (size_t i = 0; i < c->nev && i < 64; i++) {
		if (cost)
			cell_text(buf, sizeof(buf), cost[c->ev[i]], c->totals[c->ev[i]]);
		else
			buf[0] = 0;
		fprintf(f, "%*s ", (int)c->width[i], buf);
	}
}

static void print_event_header(FILE *f, const struct cg_profile *p, const struct cg_part *part,
			       const struct cols *c)
{
	for (size_t i = 0; i < c->nev && i < 64; i++)
		fprintf(f, "%-*s ", (int)c->width[i], strtab_get(&p->strs, part->events.v[c->ev[i]]));
}

static void print_row_name(FILE *f, const struct cg_profile *p, const struct cg_fn *fn)
{
	cg_put_printable(f, strtab_get(&p->strs, fn->file));
	fputc(':', f);
	cg_put_printable(f, strtab_get(&p->strs, fn->name));
	if (fn->object) {
		fputs(" [", f);
		cg_put_printable(f, strtab_get(&p->strs, fn->object));
		fputc(']', f);
	}
}

/* Calls of each row, callers and callees, sorted by the first shown event
 * (descending): built once so the tree view stays linear in the calls. */
struct call_index {
	uint32_t *in_start, *out_start;	/* per row: range in in_calls / out_calls */
	uint32_t *in_calls, *out_calls;	/* call indexes */
};

static const struct cg_part *sort_part;
static int sort_ev;

static int call_cmp(const void *a, const void *b)
{
	const struct cg_call *x = &sort_part->calls.v[*(const uint32_t *)a];
	const struct cg_call *y = &sort_part->calls.v[*(const uint32_t *)b];
	uint64_t cx = cg_cost(sort_part, x->cost)[sort_ev], cy = cg_cost(sort_part, y->cost)[sort_ev];

	return cx != cy ? (cx > cy ? -1 : 1) : 0;
}

static void bucket(const struct cg_part *part, bool by_callee, uint32_t **start, uint32_t **list)
{
	size_t nf = part->fns.n, nc = part->calls.n;
	uint32_t *st = xcalloc(nf + 2, sizeof(uint32_t)), *l = xcalloc(nc + 1, sizeof(uint32_t));

	for (size_t i = 0; i < nc; i++)
		st[(by_callee ? part->calls.v[i].callee : part->calls.v[i].caller) + 1]++;
	for (size_t i = 0; i < nf; i++)
		st[i + 1] += st[i];
	uint32_t *fill = xcalloc(nf + 1, sizeof(uint32_t));
	for (size_t i = 0; i < nc; i++) {
		uint32_t r = by_callee ? part->calls.v[i].callee : part->calls.v[i].caller;
		l[st[r] + fill[r]++] = (uint32_t)i;
	}
	for (size_t i = 0; i < nf; i++)
		qsort(l + st[i], st[i + 1] - st[i], sizeof(uint32_t), call_cmp);
	free(fill);
	*start = st;
	*list = l;
}

static void call_index_build(struct call_index *ci, const struct cg_part *part, int ev)
{
	sort_part = part;
	sort_ev = ev;
	bucket(part, true, &ci->in_start, &ci->in_calls);
	bucket(part, false, &ci->out_start, &ci->out_calls);
}

static void call_index_free(struct call_index *ci)
{
	free(ci->in_start);
	free(ci->out_start);
	free(ci->in_calls);
	free(ci->out_calls);
}

static void print_tree(FILE *f, const struct cg_profile *p, const struct cg_part *part,
		       const struct cols *c, const struct call_index *ci, uint32_t row, bool callers)
{
	const uint32_t *start = callers ? ci->in_start : ci->out_start;
	const uint32_t *list = callers ? ci->in_calls : ci->out_calls;

	for (uint32_t i = start[row]; i < start[row + 1]; i++) {
		const struct cg_call *k = &part->calls.v[list[i]];
		print_cells(f, c, cg_cost(part, k->cost));
		fputs(callers ? " <   " : " >   ", f);
		print_row_name(f, p, &part->fns.v[callers ? k->caller : k->callee]);
		char num[40];
		cg_commify(num, sizeof(num), k->calls);
		fprintf(f, " (%sx)\n", num);
	}
}

static void print_header(FILE *f, const struct cg_profile *p, const struct cg_part *part)
{
	const char *trig = strtab_get(&p->strs, part->trigger);

	fputs(fancy, f);
	fputs("Profile data file '", f);
	cg_put_printable(f, strtab_get(&p->strs, part->source));
	fputc('\'', f);
	if (part->creator) {
		fputs(" (creator: ", f);
		cg_put_printable(f, strtab_get(&p->strs, part->creator));
		fputc(')', f);
	}
	fprintf(f, "\n%s", fancy);
	fprintf(f, "Part:             %u%s", part->number, *trig ? " - " : "");
	cg_put_printable(f, trig);
	fputs("\nProfiled target:  ", f);
	cg_put_printable(f, part->cmd ? strtab_get(&p->strs, part->cmd) : "(unknown)");
	fprintf(f, " (PID %u)\n", part->pid);
	fputs("Events recorded: ", f);
	for (size_t i = 0; i < cg_nev(part); i++) {
		fputc(' ', f);
		cg_put_printable(f, strtab_get(&p->strs, part->events.v[i]));
	}
	fputc('\n', f);
}

/* Source annotation of one file: lines with costs and 3 lines of context. */
static void annotate_source(FILE *f, const struct cg_profile *p, const struct cg_part *part,
			    const struct cols *c, uint32_t file)
{
	const char *path = strtab_get(&p->strs, file);
	size_t len;
	char *src = read_file(path, &len);

	if (!src)
		return;
	fprintf(f, "%s-- Auto-annotated source: %s\n%s", fancy, path, fancy);
	size_t nlines = 1;
	for (size_t i = 0; i < len; i++)
		nlines += src[i] == '\n';
	uint32_t *cost_of = xcalloc(nlines + 2, sizeof(uint32_t));
	bool any = false;
	for (size_t i = 0; i < part->lines.n; i++) {
		const struct cg_line *l = &part->lines.v[i];
		if (l->file == file && l->line >= 1 && l->line <= nlines) {
			cost_of[l->line] = l->cost + 1;
			any = true;
		}
	}
	if (any) {
		const int ctx = 3;
		char *s = src;
		int last_printed = 0;
		for (size_t ln = 1; ln <= nlines && s; ln++) {
			char *nl = strchr(s, '\n');
			bool near = false;
			for (size_t k = ln > (size_t)ctx ? ln - ctx : 1; k <= MIN(nlines, ln + ctx); k++)
				near |= cost_of[k] != 0;
			if (near) {
				if (last_printed && (size_t)last_printed + 1 != ln)
					fprintf(f, "-- line %zu ----------------------------------------\n", ln);
				print_cells(f, c, cost_of[ln] ? cg_cost(part, cost_of[ln] - 1) : NULL);
				fprintf(f, " %.*s\n", (int)(nl ? nl - s : (long)strlen(s)), s);
				last_printed = (int)ln;
			}
			s = nl ? nl + 1 : NULL;
		}
	}
	fputc('\n', f);
	free(cost_of);
	free(src);
}

int cg_annotate_text(FILE *f, const struct cg_profile *p, const struct cg_part *part,
		     const struct cg_annotate_opts *o)
{
	int *ev;
	size_t nev;
	uint32_t *rows;

	if (cg_show_events(p, part, o->show, &ev, &nev) < 0)
		return -EINVAL;
	struct cols c = { ev, MIN(nev, 64), { 0 }, cg_cost(part, part->totals) };
	for (size_t i = 0; i < c.nev; i++)
		c.width[i] = strlen(strtab_get(&p->strs, part->events.v[ev[i]]));

	print_header(f, p, part);
	fputs("Events shown:    ", f);
	for (size_t i = 0; i < c.nev; i++)
		fprintf(f, " %s", strtab_get(&p->strs, part->events.v[ev[i]]));
	fprintf(f, "\nShowing:          %s costs, threshold %g%%\n\n",
		o->inclusive ? "inclusive" : "self", o->threshold);

	struct cols tc = c;
	widen(&tc, c.totals);
	fputs(fancy, f);
	print_event_header(f, p, part, &tc);
	fprintf(f, "\n%s", fancy);
	print_cells(f, &tc, c.totals);
	fprintf(f, " PROGRAM TOTALS%s\n\n", part->totals_calculated ? " (calculated)" : "");

	size_t n = cg_sorted_rows(p, part, ev, c.nev, o->inclusive, &rows);
	for (size_t i = 0; i < n; i++)
		widen(&c, cg_cost(part, row_cost_off(&part->fns.v[rows[i]], o->inclusive)));
	for (size_t i = 0; i < part->calls.n && o->tree; i++)
		widen(&c, cg_cost(part, part->calls.v[i].cost));
	fputs(fancy, f);
	print_event_header(f, p, part, &c);
	fprintf(f, " file:function\n%s", fancy);

	struct call_index ci = { 0 };
	if (o->tree)
		call_index_build(&ci, part, c.nev ? ev[0] : 0);
	uint64_t covered = 0, total = c.nev ? c.totals[ev[0]] : 0;
	VEC(uint32_t) files = { 0 };
	for (size_t i = 0; i < n; i++) {
		const struct cg_fn *fn = &part->fns.v[rows[i]];
		if (o->threshold < 100 && total && (double)covered * 100.0 >= o->threshold * (double)total)
			break;
		const uint64_t *cost = cg_cost(part, row_cost_off(fn, o->inclusive));
		if (o->tree)
			fputc('\n', f);
		if (o->tree & CG_TREE_CALLER)
			print_tree(f, p, part, &c, &ci, rows[i], true);
		print_cells(f, &c, cost);
		fputs(o->tree ? " * " : " ", f);
		print_row_name(f, p, fn);
		fputc('\n', f);
		if (o->tree & CG_TREE_CALLEE)
			print_tree(f, p, part, &c, &ci, rows[i], false);
		if (c.nev)
			covered += o->inclusive ? cg_cost(part, fn->self)[ev[0]] : cost[ev[0]];
		bool seen = false;
		for (size_t k = 0; k < files.n; k++)
			seen |= files.v[k] == fn->file;
		if (!seen)
			VEC_PUSH(&files, fn->file);
	}
	fputc('\n', f);
	if (o->auto_source)
		for (size_t k = 0; k < files.n; k++)
			annotate_source(f, p, part, &c, files.v[k]);
	VEC_FREE(&files);
	if (o->tree)
		call_index_free(&ci);
	free(rows);
	free(ev);
	return 0;
}

/* --- json ----------------------------------------------------------------- */

static void json_costs(FILE *f, const struct cg_profile *p, const struct cg_part *part,
		       const uint64_t *cost)
{
	fputc('{', f);
	for (size_t i = 0; i < cg_nev(part); i++) {
		if (i)
			fputc(',', f);
		cg_json_string(f, strtab_get(&p->strs, part->events.v[i]));
		fprintf(f, ":%llu", (unsigned long long)cost[i]);
	}
	fputc('}', f);
}

/* "inlined":[{"function":..., "self":{...}}] from cfni= markers, if any.
 * next[] chains each row's entries (head[row] + 1, 0 = end). */
static void json_inlined(FILE *f, const struct cg_profile *p, const struct cg_part *part,
			 const uint32_t *head, const uint32_t *next, uint32_t row)
{
	bool any = false;

	for (uint32_t i = head[row]; i; i = next[i - 1]) {
		const struct cg_inline *in = &part->inl.v[i - 1];
		fputs(any ? ",{\"function\":" : ",\"inlined\":[{\"function\":", f);
		cg_json_string(f, strtab_get(&p->strs, in->name));
		fputs(",\"self\":", f);
		json_costs(f, p, part, cg_cost(part, in->cost));
		fputc('}', f);
		any = true;
	}
	if (any)
		fputc(']', f);
}

static void json_part(FILE *f, const struct cg_profile *p, const struct cg_part *part,
		      const struct cg_annotate_opts *o)
{
	int all[1] = { 0 };
	uint32_t *rows;
	size_t n = cg_sorted_rows(p, part, all, cg_nev(part) ? 1 : 0, o->inclusive, &rows);
	uint32_t *head = xcalloc(part->fns.n + 1, sizeof(uint32_t));
	uint32_t *next = xcalloc(part->inl.n + 1, sizeof(uint32_t));
	for (size_t i = part->inl.n; i-- > 0;) {	/* backwards: lists keep file order */
		next[i] = head[part->inl.v[i].row];
		head[part->inl.v[i].row] = (uint32_t)i + 1;
	}

	fprintf(f, "{\"part\":%u,\"trigger\":", part->number);
	cg_json_string(f, strtab_get(&p->strs, part->trigger));
	fputs(",\"file\":", f);
	cg_json_string(f, strtab_get(&p->strs, part->source));
	fputs(",\"creator\":", f);
	cg_json_string(f, strtab_get(&p->strs, part->creator));
	fputs(",\"cmd\":", f);
	cg_json_string(f, strtab_get(&p->strs, part->cmd));
	fprintf(f, ",\"pid\":%u,\"events\":[", part->pid);
	for (size_t i = 0; i < cg_nev(part); i++) {
		if (i)
			fputc(',', f);
		cg_json_string(f, strtab_get(&p->strs, part->events.v[i]));
	}
	fputs("],\"totals\":", f);
	json_costs(f, p, part, cg_cost(part, part->totals));
	fprintf(f, ",\"totals_calculated\":%s,\"functions\":[", part->totals_calculated ? "true" : "false");
	for (size_t i = 0; i < n; i++) {
		const struct cg_fn *fn = &part->fns.v[rows[i]];
		fputs(i ? ",\n{\"file\":" : "\n{\"file\":", f);
		cg_json_string(f, strtab_get(&p->strs, fn->file));
		fputs(",\"function\":", f);
		cg_json_string(f, strtab_get(&p->strs, fn->name));
		fputs(",\"object\":", f);
		cg_json_string(f, strtab_get(&p->strs, fn->object));
		fputs(",\"self\":", f);
		json_costs(f, p, part, cg_cost(part, fn->self));
		fputs(",\"inclusive\":", f);
		json_costs(f, p, part, cg_cost(part, fn->incl));
		fprintf(f, ",\"calls\":%llu,\"listed_by_callgrind_annotate\":%s",
			(unsigned long long)fn->calls_in, fn->defined ? "true" : "false");
		json_inlined(f, p, part, head, next, rows[i]);
		fputc('}', f);
	}
	fputs("],\"calls\":[", f);
	for (size_t i = 0; i < part->calls.n; i++) {
		const struct cg_call *k = &part->calls.v[i];
		const struct cg_fn *a = &part->fns.v[k->caller], *b = &part->fns.v[k->callee];
		fputs(i ? ",\n{\"caller\":" : "\n{\"caller\":", f);
		cg_json_string(f, strtab_get(&p->strs, a->name));
		fputs(",\"caller_file\":", f);
		cg_json_string(f, strtab_get(&p->strs, a->file));
		fputs(",\"callee\":", f);
		cg_json_string(f, strtab_get(&p->strs, b->name));
		fputs(",\"callee_file\":", f);
		cg_json_string(f, strtab_get(&p->strs, b->file));
		fprintf(f, ",\"count\":%llu,\"inclusive\":", (unsigned long long)k->calls);
		json_costs(f, p, part, cg_cost(part, k->cost));
		fputc('}', f);
	}
	fputs("]}", f);
	free(head);
	free(next);
	free(rows);
}

int cg_annotate_json(FILE *f, const struct cg_profile *p, struct cg_part **parts, size_t n,
		     const struct cg_annotate_opts *o)
{
	fputs("{\"schema\":\"prof-callgrind/1\",\"parts\":[\n", f);
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputs(",\n", f);
		json_part(f, p, parts[i], o);
	}
	fputs("\n]}\n", f);
	return 0;
}

/* The parts --part and --benchmark keep, in file order. */
static void select_parts(const struct cg_profile *p, const struct cg_annotate_opts *o,
			 struct cg_part ***sel, size_t *n)
{
	VEC(struct cg_part *) v = { 0 };

	for (size_t i = 0; i < p->parts.n; i++) {
		struct cg_part *part = p->parts.v[i];

		if (o->part && part->number != o->part)
			continue;
		if (o->benchmark && strcmp(strtab_get(&p->strs, part->trigger), o->benchmark))
			continue;
		VEC_PUSH(&v, part);
	}
	*sel = v.v;
	*n = v.n;
}

static int no_part_error(const struct cg_annotate_opts *o)
{
	if (o->benchmark)
		error("no part for benchmark '%s' (the Part: lines of 'prof callgrind annotate FILE' list them)",
		      o->benchmark);
	else if (o->part)
		error("no part %llu (the Part: lines of 'prof callgrind annotate FILE' list them)",
		      (unsigned long long)o->part);
	else
		error("no parts in the profile");
	return -EINVAL;
}

/* --show against every selected part first: one clean error, no half output. */
static int check_show(const struct cg_profile *p, struct cg_part **sel, size_t n,
		      const char *show)
{
	for (size_t i = 0; i < n; i++) {
		int *ev;
		size_t nev;

		if (cg_show_events(p, sel[i], show, &ev, &nev) < 0)
			return -EINVAL;
		free(ev);
	}
	return 0;
}

static void annotate_parts_text(FILE *f, const struct cg_profile *p, struct cg_part **sel,
				size_t n, const struct cg_annotate_opts *o)
{
	bool all = !o->part && !o->benchmark;

	for (size_t i = 0; i < n; i++) {
		if (cg_part_empty(sel[i]) && n > 1 && all) {
			fprintf(f, "Part %u%s%s: empty (no costs)\n\n", sel[i]->number,
				sel[i]->trigger ? " - " : "", strtab_get(&p->strs, sel[i]->trigger));
			continue;
		}
		if (cg_part_empty(sel[i]))
			warning("part %u has no costs", sel[i]->number);
		cg_annotate_text(f, p, sel[i], o);
	}
}

int cg_annotate(FILE *f, const struct cg_profile *p, const struct cg_annotate_opts *o)
{
	struct cg_part **sel;
	size_t n;
	int ret = 0;

	select_parts(p, o, &sel, &n);
	if (!n)
		ret = no_part_error(o);
	else if (check_show(p, sel, n, o->show) < 0)
		ret = -EINVAL;
	else if (o->json)
		ret = cg_annotate_json(f, p, sel, n, o);
	else
		annotate_parts_text(f, p, sel, n, o);
	free(sel);
	return ret;
}
