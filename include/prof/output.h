/*
 * output.h - renderers of a struct prof_profile under a struct prof_view
 * (model.h), and the per-function self/total table every tabular format
 * prints.
 *
 * Renderers read the model only; they never know where it came from
 * (recording, perf.data, callgrind).  Each returns 0 or a negative errno.
 */
#ifndef PROF_OUTPUT_H
#define PROF_OUTPUT_H

#include "prof/model.h"
#include <stdio.h>

struct prof_fn_row {
	uint32_t func, module, file, line;	/* string/module ids (module PROF_NONE if none) */
	uint64_t self, total;			/* total counts each stack once per function */
};
struct prof_fn_table {
	VEC(struct prof_fn_row) rows;		/* sorted by the view's sort key, descending */
	uint64_t grand_total;
};
/* Functions are keyed by (name, module): inlined copies and lines merge. */
void prof_fn_table_build(const struct prof_profile *p, const struct prof_view *v,
			 struct prof_fn_table *t);
void prof_fn_table_free(struct prof_fn_table *t);

/* Text and machine formats (src/output/). */
int prof_output_text_flat(FILE *f, const struct prof_profile *p, const struct prof_view *v);
int prof_output_text_tree(FILE *f, const struct prof_profile *p, const struct prof_view *v);
/* --sort KEYS (perf report's comm,pid,tid,dso,sym,srcline): one row per
 * distinct tuple of the keys in view->sort_keys. */
int prof_output_text_keys(FILE *f, const struct prof_profile *p, const struct prof_view *v);
/* --sort: self or total (the table's order), or perf report's keys (s is
 * kept as v->sort_keys).  0 or -EINVAL. */
int prof_view_sort_parse(struct prof_view *v, const char *s);
int prof_output_folded(FILE *f, const struct prof_profile *p, const struct prof_view *v);
int prof_output_json(FILE *f, const struct prof_profile *p, const struct prof_view *v);

/* Differential views of two recordings (src/output/diffview.c). */
int prof_output_folded_diff(FILE *f, const struct prof_profile *base,
			    const struct prof_profile *head, const struct prof_view *v);
int prof_output_text_diff(FILE *f, const struct prof_profile *base,
			  const struct prof_profile *head, const struct prof_view *v);

/* The formats of `prof report --format` by name (src/output/formats.c).
 * terminal_file: where a binary or page format is written when stdout is
 * a terminal (NULL: stdout).  timed: the format draws samples in time
 * order, so the model must keep every sample's time.  has_diff: --diff
 * can draw it.  render draws text as a call tree when tree is set (or by
 * view->sort_keys).  Each returns 0 or a negative errno. */
enum prof_format { PROF_FMT_TEXT, PROF_FMT_FOLDED, PROF_FMT_JSON, PROF_FMT_FLAMEGRAPH,
		   PROF_FMT_HTML, PROF_FMT_SPEEDSCOPE, PROF_FMT_PPROF, PROF_FMT_CALLGRIND,
		   PROF_FMT_FIREFOX };
int prof_format_parse(const char *name, enum prof_format *out);
const char *prof_format_name(enum prof_format fmt);
const char *prof_format_terminal_file(enum prof_format fmt);
bool prof_format_timed(enum prof_format fmt);
bool prof_format_has_diff(enum prof_format fmt);
int prof_format_render(FILE *f, enum prof_format fmt, bool tree, const struct prof_profile *p,
		       const struct prof_view *v);
int prof_format_render_diff(FILE *f, enum prof_format fmt, const struct prof_profile *base,
			    const struct prof_profile *head, const struct prof_view *v);

/* prof stat's report (src/output/stat.c): the metric table and the
 * baseline comparison (when baseline is set), as text or JSON. */
struct an_stat;
struct prof_stat_report {
	char **argv;			/* the measured command */
	uint64_t runs, warmup, failed;
	char failed_how[64];		/* the last failed run's "exit 3" / "killed by SIGSEGV" */
	bool delayacct;
	const struct an_stat *st;
	const char *baseline;		/* NULL: no comparison */
	double alpha, threshold;
};
void prof_output_stat_text(struct strbuf *sb, const struct prof_stat_report *r);
void prof_output_stat_json(struct strbuf *sb, const struct prof_stat_report *r);

#endif
