/*
 * diffview.c - the differential views of `prof report --diff BASE HEAD`
 * that are not pictures: the two-count folded form (difffolded.pl's
 * "stack base head" lines, which flamegraph.pl --negate and speedscope
 * read) and a text table of the largest movers.
 *
 * Recordings of different lengths are compared by share of their own
 * total (percentage points), which is what a reader of two flame graphs
 * compares by eye; the absolute counts are printed beside it.  The movers
 * table joins functions by identity (src/model/identity.c), so two builds
 * of different names or Rust hashes do not show every function as gone
 * and new.  The folded lines join the same way: each frame by its
 * identity name (no compiler hashes), and the program's command name
 * (its file name, which changes between builds) written as head's.
 * Stacks and functions present on one side only are listed too (count 0
 * on the other).
 */
#include "output-priv.h"
#include "prof/identity.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

struct folded_line {
	char *stack;
	uint64_t base, head;
};
typedef VEC(struct folded_line) folded_vec;

static int folded_cmp(const void *a, const void *b)
{
	return strcmp(((const struct folded_line *)a)->stack, ((const struct folded_line *)b)->stack);
}

/* The command name of p's program: the first 15 bytes (the kernel's comm
 * size) of its one executable's file name; NULL when p ran no program or
 * several (then no comm is renamed). */
static char *program_comm(const struct prof_profile *p)
{
	char *comm = NULL;

	for (size_t i = 0; i < p->modules.n; i++) {
		const char *path = prof_str(p, p->modules.v[i].path);
		const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;

		if (!*base || base[0] == '[' || prof_ident_is_shared_object(base))
			continue;
		if (comm && strncmp(comm, base, 15)) {
			free(comm);
			return NULL;
		}
		if (!comm)
			comm = xstrndup(base, 15);
	}
	return comm;
}

/* line ("comm;frame;frame_[k]") with the program's comm as head's and each
 * frame by its identity name; the marks _[k] and _[i] stay. */
static void identity_line(const char *line, const char *comm, const char *head_comm,
			  struct strbuf *out)
{
	struct strbuf name = STRBUF_INIT, clone = STRBUF_INIT, frame = STRBUF_INIT;
	const char *end = strchr(line, ';');
	size_t len = end ? (size_t)(end - line) : strlen(line);

	sb_reset(out);
	if (comm && head_comm && strlen(comm) == len && !strncmp(line, comm, len))
		sb_adds(out, head_comm);
	else
		sb_add(out, line, len);
	for (const char *f = end; f; f = end) {
		f++;
		end = strchr(f, ';');
		len = end ? (size_t)(end - f) : strlen(f);
		const char *mark = len > 4 && f[len - 1] == ']' && f[len - 4] == '_' ? f + len - 4 : NULL;
		sb_reset(&frame);
		sb_add(&frame, f, mark ? len - 4 : len);
		prof_ident_normalize(sb_str(&frame), &name, &clone);
		sb_addf(out, ";%s%s%.*s", sb_str(&name), sb_str(&clone), mark ? 4 : 0, mark ? mark : "");
	}
	sb_release(&name);
	sb_release(&clone);
	sb_release(&frame);
}

/* Renders one side's folded text and adds its lines, by identity, to the
 * merged table. */
static int collect_folded(const struct prof_profile *p, const struct prof_view *v, bool is_head,
			  const char *head_comm, struct strtab *names, folded_vec *out)
{
	char *comm = program_comm(p);
	struct strbuf key = STRBUF_INIT;
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);

	if (!mem)
		return -errno;
	int ret = prof_output_folded(mem, p, v);
	fclose(mem);
	for (char *line = text, *nl; ret == 0 && line && *line; line = nl ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		char *sp = strrchr(line, ' ');
		if (!sp)
			continue;
		*sp = '\0';
		uint64_t count = strtoull(sp + 1, NULL, 10);
		size_t before = names->strs.n;
		identity_line(line, comm, head_comm, &key);
		uint32_t id = strtab_intern(names, sb_str(&key));
		if (names->strs.n != before)	/* first time this stack is seen */
			VEC_PUSH(out, ((struct folded_line){ names->strs.v[id], 0, 0 }));
		/* ids are dense from 1 ("" is 0), so line id-1 belongs to stack id */
		if (is_head)
			out->v[id - 1].head += count;
		else
			out->v[id - 1].base += count;
	}
	free(text);
	free(comm);
	sb_release(&key);
	return ret;
}

int prof_output_folded_diff(FILE *f, const struct prof_profile *base,
			    const struct prof_profile *head, const struct prof_view *v)
{
	folded_vec lines = { 0 };
	struct strtab names;
	char *head_comm = program_comm(head);
	int ret;

	strtab_init(&names);
	ret = collect_folded(base, v, false, head_comm, &names, &lines);
	if (!ret)
		ret = collect_folded(head, v, true, head_comm, &names, &lines);
	free(head_comm);
	if (!ret) {
		qsort(lines.v, lines.n, sizeof(*lines.v), folded_cmp);
		for (size_t i = 0; i < lines.n; i++)
			fprintf(f, "%s %llu %llu\n", lines.v[i].stack,
				(unsigned long long)lines.v[i].base, (unsigned long long)lines.v[i].head);
	}
	VEC_FREE(&lines);
	strtab_free(&names);
	return ret ? ret : (ferror(f) ? -EIO : 0);
}

struct mover {
	const char *name, *module;
	uint64_t base, head;
	double base_pct, head_pct;
};
typedef VEC(struct mover) mover_vec;

static int mover_cmp(const void *a, const void *b)
{
	const struct mover *x = a, *y = b;
	double dx = fabs(x->head_pct - x->base_pct), dy = fabs(y->head_pct - y->base_pct);

	return dx < dy ? 1 : dx > dy ? -1 : strcmp(x->name, y->name);
}

/* Adds one side's function table to the movers, joined by identity
 * (src/model/identity.c): builds of different names and paths, and Rust
 * functions whose hash changed, land on the same row.  Rows are indexed by
 * identity id (movers grow to cover every id). */
static void collect_movers(const struct prof_profile *p, const struct prof_view *v, bool is_head,
			   struct prof_idset *ids, mover_vec *out)
{
	struct prof_fn_table t;

	prof_output_fn_table_build(p, v, &t);
	struct prof_ident_rec *recs = xcalloc(t.rows.n + 1, sizeof(*recs));
	uint32_t *id = xcalloc(t.rows.n + 1, sizeof(*id));
	for (size_t i = 0; i < t.rows.n; i++) {
		const struct prof_fn_row *r = &t.rows.v[i];
		recs[i] = (struct prof_ident_rec){
			.name = render_fn_name(p, r->func),
			.module = r->module < p->modules.n ? prof_str(p, p->modules.v[r->module].path) : "",
			.file = prof_str(p, r->file),
		};
	}
	prof_idset_add_input(ids, recs, t.rows.n, id);
	while (out->n < ids->ids.n)
		VEC_PUSH(out, ((struct mover){ 0 }));
	for (size_t i = 0; i < t.rows.n; i++) {
		const struct prof_fn_row *r = &t.rows.v[i];
		struct mover *m = &out->v[id[i]];
		double pct = percent(r->self, t.grand_total);
		m->name = prof_ident_name(ids, id[i]);
		m->module = prof_ident_module(ids, id[i]);
		if (is_head) {
			m->head += r->self;
			m->head_pct += pct;
		} else {
			m->base += r->self;
			m->base_pct += pct;
		}
	}
	free(recs);
	free(id);
	prof_output_fn_table_free(&t);
}

/* Folds clones only one side has (base "walk.constprop.0", head "walk")
 * into one row, and drops the ids neither side has self time for: a
 * function only ever on the stack (main) is no mover, and printed as 0/0
 * it would read as "(new)". */
static void join_movers(const struct prof_idset *ids, mover_vec *movers)
{
	uint8_t *present = xcalloc(movers->n + 1, 1);
	uint32_t *canon = xcalloc(movers->n + 1, sizeof(*canon));
	size_t kept = 0;

	for (size_t i = 0; i < movers->n; i++)
		present[i] = (movers->v[i].base ? 1 : 0) | (movers->v[i].head ? 2 : 0);
	prof_idset_merge_clones(ids, present, canon);
	for (size_t i = 0; i < movers->n; i++) {
		struct mover *from = &movers->v[i], *to = &movers->v[canon[i]];
		if (canon[i] == i)
			continue;
		to->head += from->head;
		to->head_pct += from->head_pct;
		memset(from, 0, sizeof(*from));
	}
	for (size_t i = 0; i < movers->n; i++)
		if (movers->v[i].name && (movers->v[i].base || movers->v[i].head))
			movers->v[kept++] = movers->v[i];
	movers->n = kept;
	free(present);
	free(canon);
}

int prof_output_text_diff(FILE *f, const struct prof_profile *base,
			  const struct prof_profile *head, const struct prof_view *v)
{
	mover_vec movers = { 0 };
	struct prof_idset ids;
	const char *unit = prof_view_metric_is_heap(v->metric) ? prof_view_metric_unit(v->metric)
			   : view_is_time(v) ? "us" : "samples";

	prof_idset_init(&ids);
	collect_movers(base, v, false, &ids, &movers);
	collect_movers(head, v, true, &ids, &movers);
	join_movers(&ids, &movers);
	if (movers.n)
		qsort(movers.v, movers.n, sizeof(*movers.v), mover_cmp);
	fprintf(f, "# prof report --diff: self share of each side's total (%s), largest movers first\n", unit);
	if (base->heap.scope[0] || head->heap.scope[0])	/* report --since/--at: two snapshots */
		fprintf(f, "#   base: heap %s, head: heap %s\n#\n",
			base->heap.scope[0] ? base->heap.scope : "at the end",
			head->heap.scope[0] ? head->heap.scope : "at the end");
	else
		fprintf(f, "#   base: %llu samples, head: %llu samples\n#\n",
			(unsigned long long)base->samples, (unsigned long long)head->samples);
	fprintf(f, "%8s %8s %9s %12s %12s  %-32s %s\n", "Base%", "Head%", "Delta", "Base", "Head",
		"Function", "Module");
	for (size_t i = 0; i < movers.n; i++) {
		const struct mover *m = &movers.v[i];
		double d = m->head_pct - m->base_pct;
		if (v->percent_limit > 0 && fabs(d) < v->percent_limit)
			continue;
		const char *tag = !m->base ? "  (new)" : !m->head ? "  (gone)" : "";
		fprintf(f, "%7.2f%% %7.2f%% %+8.2fpp %12llu %12llu  %-32s %s%s\n", m->base_pct,
			m->head_pct, d, (unsigned long long)view_units(v, m->base),
			(unsigned long long)view_units(v, m->head), m->name, m->module, tag);
	}
	VEC_FREE(&movers);
	prof_idset_free(&ids);
	return ferror(f) ? -EIO : 0;
}
