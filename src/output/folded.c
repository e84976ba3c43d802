/*
 * folded.c - stackcollapse-perf style output for flamegraph.pl and
 * speedscope: one line per unique (comm, stack), outermost frame first,
 * "_[i]" on inlined and "_[k]" on kernel frames, then a space and the
 * weight (samples, or microseconds for time metrics), lines sorted.
 */
#include "output-priv.h"
#include <errno.h>
#include <string.h>

typedef VEC(uint32_t) frame_vec;

struct line {
	char *text;
	uint64_t weight;
};

static int line_cmp(const void *a, const void *b)
{
	return strcmp(((const struct line *)a)->text, ((const struct line *)b)->text);
}

static char *stack_text(const struct prof_profile *p, const struct prof_agg *a,
			frame_vec *frames)
{
	struct strbuf sb = STRBUF_INIT;
	const char *comm = prof_str(p, p->threads.v[a->thread].comm);

	/* ';' separates frames and ' ' precedes the count only at line end,
	 * so only ';' and control characters must go. */
	add_printable(&sb, *comm ? comm : "[unknown]", ";", '_');
	frames->n = 0;
	for (uint32_t n = a->node; n; n = p->nodes.v[n].parent)
		VEC_PUSH(frames, p->nodes.v[n].frame);
	for (size_t i = frames->n; i-- > 0;) {
		const struct prof_frame *f = &p->frames.v[frames->v[i]];
		sb_addch(&sb, ';');
		add_printable(&sb, render_fn_name(p, f->func), ";", ':');
		if (f->kind == PROF_FRAME_KERNEL)
			sb_adds(&sb, "_[k]");
		else if (f->inlined)
			sb_adds(&sb, "_[i]");
	}
	return sb.buf;
}

int prof_output_folded(FILE *f, const struct prof_profile *p, const struct prof_view *v)
{
	VEC(struct line) lines = { 0 };
	frame_vec frames = { 0 };

	for (size_t i = 0; i < p->aggs.n; i++) {
		uint64_t w = prof_view_weight(p, v, &p->aggs.v[i]);
		if (w)
			VEC_PUSH(&lines, ((struct line){ stack_text(p, &p->aggs.v[i], &frames), w }));
	}
	if (lines.n)
		qsort(lines.v, lines.n, sizeof(*lines.v), line_cmp);
	/* Equal texts are adjacent now: sum them, convert units once. */
	for (size_t i = 0; i < lines.n;) {
		size_t j = i + 1;
		uint64_t w = lines.v[i].weight;
		for (; j < lines.n && !strcmp(lines.v[i].text, lines.v[j].text); j++)
			w += lines.v[j].weight;
		uint64_t units = view_units(v, w);
		if (units)
			fprintf(f, "%s %llu\n", lines.v[i].text, (unsigned long long)units);
		for (; i < j; i++)
			free(lines.v[i].text);
	}
	VEC_FREE(&lines);
	VEC_FREE(&frames);
	return ferror(f) ? -EIO : 0;
}
