/*
 * diff.c - compares two callgrind profiles benchmark by benchmark.  Parts
 * are paired by their trigger (the benchmark URI of a codspeed dump, or
 * "Program termination"), falling back to the part number; functions are
 * paired by identity (src/model/identity.c: no Rust hashes, no object
 * paths) and the row's file, so inlined-code rows (fi=/fe=) pair with
 * their own counterpart and nothing is counted twice; builds of different
 * names and directories pair up.  Rows are sorted by
 * the absolute change of self cost, largest first.
 */
#include "prof/callgrind.h"
#include <errno.h>
#include <inttypes.h>
#include <string.h>

struct drow {
	const char *file, *name;
	uint64_t self[2], incl[2];
	bool present[2];
};

typedef VEC(struct drow) drow_vec;

static int64_t change(uint64_t a, uint64_t b) { return (int64_t)(b - a); }

static double pct(uint64_t a, uint64_t b)
{
	return a ? 100.0 * ((double)b - (double)a) / (double)a : 0.0;
}

static int drow_cmp(const void *x, const void *y)
{
	const struct drow *a = x, *b = y;
	int64_t ca = change(a->self[0], a->self[1]), cb = change(b->self[0], b->self[1]);
	uint64_t aa = (uint64_t)(ca < 0 ? -ca : ca), ab = (uint64_t)(cb < 0 ? -cb : cb);

	if (aa != ab)
		return aa > ab ? -1 : 1;
	int r = strcmp(a->name, b->name);
	return r ? r : strcmp(a->file, b->file);
}

/* The file part of a row's key: "" for the function's own file, else the
 * inlined file, relative to the function's directory when under it (so
 * /ci/base/src/util.h and /w/head/src/util.h pair up). */
static const char *row_file_key(const char *file, const char *home)
{
	const char *slash = strrchr(home, '/');
	size_t dir = slash ? (size_t)(slash + 1 - home) : 0;

	if (!strcmp(file, home))
		return "";
	return dir && !strncmp(file, home, dir) ? file + dir : file;
}

/* Collects rows of one side into the merged table, keyed by the function's
 * identity (canon[ids[i]]: src/model/identity.c) and the row's file. */
static void collect(const struct cg_profile *p, const struct cg_part *part, int ev, int side,
		    const uint32_t *ids, const uint32_t *canon, struct strtab *keys, drow_vec *rows)
{
	struct strbuf key = STRBUF_INIT;

	for (size_t i = 0; i < part->fns.n; i++) {
		const struct cg_fn *fn = &part->fns.v[i];
		const char *file = strtab_get(&p->strs, fn->file), *name = strtab_get(&p->strs, fn->name);
		sb_reset(&key);
		sb_addf(&key, "%u\x1f%s", canon[ids[i]],
			row_file_key(file, strtab_get(&p->strs, fn->home_file)));
		size_t before = keys->strs.n;
		uint32_t id = strtab_intern(keys, sb_str(&key)) - 1;	/* id 0 is "" */
		if (keys->strs.n != before)
			VEC_PUSH(rows, ((struct drow){ .file = file, .name = name }));
		struct drow *d = &rows->v[id];
		d->self[side] += cg_cost(part, fn->self)[ev];
		d->incl[side] += cg_cost(part, fn->incl)[ev];
		d->present[side] = true;
	}
	sb_release(&key);
}

/* Identities of both parts' rows, with clones only one side has joined. */
static uint32_t *part_pair_identities(struct prof_idset *ids, const struct cg_profile *base,
				      const struct cg_part *pa, const struct cg_profile *head,
				      const struct cg_part *pb, uint32_t **ia, uint32_t **ib)
{
	*ia = cg_part_identities(ids, base, pa, false);
	*ib = cg_part_identities(ids, head, pb, false);
	uint8_t *present = xcalloc(ids->ids.n + 1, 1);
	uint32_t *canon = xcalloc(ids->ids.n + 1, sizeof(*canon));
	for (size_t i = 0; i < pa->fns.n; i++)
		present[(*ia)[i]] |= 1;
	for (size_t i = 0; i < pb->fns.n; i++)
		present[(*ib)[i]] |= 2;
	prof_idset_merge_clones(ids, present, canon);
	free(present);
	return canon;
}

static void print_change(FILE *f, uint64_t a, uint64_t b)
{
	int64_t c = change(a, b);
	fprintf(f, " %+14" PRId64, c);
	if (a)
		fprintf(f, " %+8.2f%%", pct(a, b));
	else
		fprintf(f, " %9s", b ? "new" : "");
}

static void json_side(FILE *f, const char *key, const struct drow *d, const uint64_t *v)
{
	fprintf(f, ",\"%s\":{\"base\":%" PRIu64 ",\"head\":%" PRIu64 ",\"change\":%" PRId64
		",\"change_pct\":%.4f}", key, v[0], v[1], change(v[0], v[1]), pct(v[0], v[1]));
	(void)d;
}

static void diff_part(FILE *f, const struct cg_profile *base, const struct cg_part *pa,
		      const struct cg_profile *head, const struct cg_part *pb,
		      int ea, int eb, const char *event, const struct cg_diff_opts *o, bool first)
{
	struct strtab keys;
	struct prof_idset ids;
	drow_vec rows = { 0 };
	uint64_t tot[2] = { cg_cost(pa, pa->totals)[ea], cg_cost(pb, pb->totals)[eb] };
	const char *trig = strtab_get(&base->strs, pa->trigger);
	uint32_t *ia, *ib, *canon;

	strtab_init(&keys);
	prof_idset_init(&ids);
	canon = part_pair_identities(&ids, base, pa, head, pb, &ia, &ib);
	collect(base, pa, ea, 0, ia, canon, &keys, &rows);
	collect(head, pb, eb, 1, ib, canon, &keys, &rows);
	free(ia);
	free(ib);
	free(canon);
	prof_idset_free(&ids);
	qsort(rows.v, rows.n, sizeof(*rows.v), drow_cmp);

	if (o->json) {
		fprintf(f, "%s{\"benchmark\":", first ? "" : ",\n");
		cg_json_string(f, trig);
		fprintf(f, ",\"base_part\":%u,\"head_part\":%u,\"event\":", pa->number, pb->number);
		cg_json_string(f, event);
		json_side(f, "total", NULL, tot);
		fputs(",\"functions\":[", f);
		for (size_t i = 0; i < rows.n; i++) {
			const struct drow *d = &rows.v[i];
			fputs(i ? ",\n{\"function\":" : "\n{\"function\":", f);
			cg_json_string(f, d->name);
			fputs(",\"file\":", f);
			cg_json_string(f, d->file);
			fprintf(f, ",\"status\":\"%s\"", !d->present[0] ? "added" : !d->present[1] ? "removed"
							 : "changed");
			json_side(f, "self", d, d->self);
			json_side(f, "inclusive", d, d->incl);
			fputc('}', f);
		}
		fputs("]}", f);
	} else {
		fputs("# benchmark: ", f);
		cg_put_printable(f, *trig ? trig : "(unnamed)");
		fprintf(f, " (base part %u, head part %u), event ", pa->number, pb->number);
		cg_put_printable(f, event);
		fputc('\n', f);
		fprintf(f, "# total: %" PRIu64 " -> %" PRIu64, tot[0], tot[1]);
		print_change(f, tot[0], tot[1]);
		fprintf(f, "\n%14s %14s %14s %9s %14s %14s  %-8s %s\n", "self base", "self head",
			"change", "%", "incl base", "incl head", "status", "file:function");
		for (size_t i = 0; i < rows.n; i++) {
			const struct drow *d = &rows.v[i];
			if (d->self[0] == d->self[1] && d->incl[0] == d->incl[1] &&
			    d->present[0] == d->present[1])
				continue;	/* unchanged rows are noise here */
			fprintf(f, "%14" PRIu64 " %14" PRIu64, d->self[0], d->self[1]);
			print_change(f, d->self[0], d->self[1]);
			fprintf(f, " %14" PRIu64 " %14" PRIu64 "  %-8s ", d->incl[0], d->incl[1],
				!d->present[0] ? "added" : !d->present[1] ? "removed" : "");
			cg_put_printable(f, d->file);
			fputc(':', f);
			cg_put_printable(f, d->name);
			fputc('\n', f);
		}
		fputc('\n', f);
	}
	VEC_FREE(&rows);
	strtab_free(&keys);
}

static const struct cg_part *pair_of(const struct cg_profile *base, const struct cg_part *pa,
				     const struct cg_profile *head)
{
	const char *trig = strtab_get(&base->strs, pa->trigger);

	for (size_t i = 0; i < head->parts.n; i++)
		if (*trig && !strcmp(trig, strtab_get(&head->strs, head->parts.v[i]->trigger)))
			return head->parts.v[i];
	for (size_t i = 0; i < head->parts.n; i++)
		if (!*trig && !head->parts.v[i]->trigger && head->parts.v[i]->number == pa->number)
			return head->parts.v[i];
	return NULL;
}

int cg_diff(FILE *f, const struct cg_profile *base, const struct cg_profile *head,
	    const struct cg_diff_opts *o)
{
	size_t paired = 0;
	bool first = true;

	if (o->json)
		fputs("{\"schema\":\"prof-callgrind-diff/1\",\"benchmarks\":[\n", f);
	for (size_t i = 0; i < base->parts.n; i++) {
		const struct cg_part *pa = base->parts.v[i];
		const char *trig = strtab_get(&base->strs, pa->trigger);
		if (o->benchmark && strcmp(o->benchmark, trig))
			continue;
		const struct cg_part *pb = pair_of(base, pa, head);
		if (!pb) {
			if (!cg_part_empty(pa))
				warning("benchmark '%s' (part %u) is only in the base profile", trig, pa->number);
			continue;
		}
		if (cg_part_empty(pa) && cg_part_empty(pb))
			continue;	/* codspeed metadata / termination dumps */
		const char *ev = o->event;
		if (!ev && cg_nev(pa))
			ev = strtab_get(&base->strs, pa->events.v[0]);
		int ea = ev ? cg_event_index(base, pa, ev) : -1, eb = ev ? cg_event_index(head, pb, ev) : -1;
		if (ea < 0 || eb < 0) {
			if (o->json)
				fputs("]}\n", f);
			return error("event '%s' is not in both profiles' part %u (see the Events recorded: line of 'prof callgrind annotate')",
				     ev ? ev : "?", pa->number);
		}
		diff_part(f, base, pa, head, pb, ea, eb, ev, o, first);
		first = false;
		paired++;
	}
	for (size_t i = 0; i < head->parts.n; i++) {
		const struct cg_part *pb = head->parts.v[i];
		const char *trig = strtab_get(&head->strs, pb->trigger);
		if (o->benchmark && strcmp(o->benchmark, trig))
			continue;
		bool found = false;
		for (size_t k = 0; k < base->parts.n && !found; k++)
			found = pair_of(base, base->parts.v[k], head) == pb;
		if (!found && !cg_part_empty(pb))
			warning("benchmark '%s' (part %u) is only in the head profile", trig, pb->number);
	}
	if (o->json)
		fputs("\n]}\n", f);
	if (!paired)
		return o->benchmark ? error("benchmark '%s' is not in both profiles", o->benchmark)
				    : error("no benchmark (part with costs) is in both profiles");
	return 0;
}
