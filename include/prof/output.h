/*
 * output.h - renderers of a struct prof_profile, and the "view" they share:
 * which metric weighs a stack, which samples pass the filters, and the
 * per-function self/total table every tabular format prints.
 *
 * Renderers read the model only; they never know where it came from
 * (recording, perf.data, callgrind).  Each returns 0 or a negative errno.
 */
#ifndef PROF_OUTPUT_H
#define PROF_OUTPUT_H

#include "prof/model.h"
#include <stdio.h>

enum prof_view_metric {	/* what --metric selects */
	PROF_VIEW_CPU,		/* on-CPU samples (weights are sample counts) */
	PROF_VIEW_OFFCPU,	/* off-CPU ns */
	PROF_VIEW_IOWAIT,	/* I/O wait ns */
	PROF_VIEW_SLEEP,	/* sleep ns */
	PROF_VIEW_WALL,		/* on-CPU ns + off-CPU ns */
};
int prof_view_metric_parse(const char *s, enum prof_view_metric *m);
const char *prof_view_metric_name(enum prof_view_metric m);
const char *prof_view_metric_unit(enum prof_view_metric m);	/* "samples" / "us" */

enum prof_sort { PROF_SORT_SELF, PROF_SORT_TOTAL };

struct prof_view {
	enum prof_view_metric metric;
	enum prof_sort sort;
	double percent_limit;		/* hide rows under this % (0: show all) */
	int64_t pid, tid;		/* -1: any */
	const char *comm;		/* NULL: any */
	const char *dso;		/* NULL: any; matches module basename or path of the leaf frame */
	bool inverted;			/* flame graph: icicle */
	const char *title;
};
void prof_view_init(struct prof_view *v);	/* defaults: cpu, self, all */

/* Weight of one aggregate under the view; 0 if filtered out. */
uint64_t prof_view_weight(const struct prof_profile *p, const struct prof_view *v,
			  const struct prof_agg *a);

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
int prof_output_folded(FILE *f, const struct prof_profile *p, const struct prof_view *v);
int prof_output_json(FILE *f, const struct prof_profile *p, const struct prof_view *v);

/* Differential views of two recordings (src/output/diffview.c). */
int prof_output_folded_diff(FILE *f, const struct prof_profile *base,
			    const struct prof_profile *head, const struct prof_view *v);
int prof_output_text_diff(FILE *f, const struct prof_profile *base,
			  const struct prof_profile *head, const struct prof_view *v);

/* prof stat's report (src/output/stat.c): the metric table and the
 * baseline comparison (when baseline is set), as text or JSON. */
struct an_stat;
struct prof_stat_report {
	char **argv;			/* the measured command */
	uint64_t runs, warmup, failed;
	bool delayacct;
	const struct an_stat *st;
	const char *baseline;		/* NULL: no comparison */
	double alpha, threshold;
};
void prof_output_stat_text(struct strbuf *sb, const struct prof_stat_report *r);
void prof_output_stat_json(struct strbuf *sb, const struct prof_stat_report *r);

/* Escaping shared by every format (never emit a raw symbol name).
 * json_escape appends a complete "quoted" JSON string (<, >, & as \u00XX,
 * invalid UTF-8 as \ufffd); xml_escape appends text safe inside XML/HTML
 * elements and attribute values (no quotes added). */
void json_escape(struct strbuf *sb, const char *s);
/* A JSON number with 10 significant digits; null for inf and nan. */
void json_number(struct strbuf *sb, double v);
void xml_escape(struct strbuf *sb, const char *s);

#endif
