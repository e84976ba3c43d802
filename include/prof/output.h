/*
 * output.h - renderers of a struct prof_profile under a struct prof_view
 * (model.h), and the per-function self/total table every tabular format
 * prints.
 *
 * Renderers read the model only; they never know where it came from
 * (recording, perf.data, callgrind).  Each returns 0 or a negative errno.
 *
 * The picture and interop renderers (second half): interactive flame graph
 * SVG (plain and differential), a self-contained HTML report, speedscope
 * JSON, pprof (gzipped profile.proto), a callgrind-format export and the
 * Firefox Profiler's processed profile.  Also the "flame tree" they share:
 * the trie merged by (function, module, inlined) along each path, as
 * flamegraph.pl merges sibling frames by name.  No renderer writes a raw
 * symbol name: SVG/HTML go through xml_escape, JSON through json_escape
 * (and, inside HTML <script>, '<' '>' '&' become \u003c...).
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
void prof_output_fn_table_build(const struct prof_profile *p, const struct prof_view *v,
				struct prof_fn_table *t);
void prof_output_fn_table_free(struct prof_fn_table *t);

/* Text and machine formats (src/output/). */
int prof_output_text_flat(FILE *f, const struct prof_profile *p, const struct prof_view *v);
int prof_output_text_tree(FILE *f, const struct prof_profile *p, const struct prof_view *v);
/* --sort KEYS (perf report's comm,pid,tid,dso,sym,srcline): one row per
 * distinct tuple of the keys in view->sort_keys. */
int prof_output_text_keys(FILE *f, const struct prof_profile *p, const struct prof_view *v);
/* --sort: self or total (the table's order), or perf report's keys (s is
 * kept as v->sort_keys).  0 or -EINVAL. */
int prof_output_sort_parse(struct prof_view *v, const char *s);
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

/* --- timeline data hook for the HTML report --------------------------------
 * `prof record` stores a per-process timeline (p->timeline); a source that samples CPU%, RSS or I/O wait
 * over time fills a prof_timeline and passes it to prof_output_html_ex();
 * the HTML "Timeline" section is emitted only when at least one series has
 * points.
 */
struct prof_timeline_point { uint64_t t_ns; double value; };
struct prof_timeline_series {
	const char *name;	/* "CPU", "RSS", "I/O wait" */
	const char *unit;	/* "%", "bytes", "ms/s" */
	VEC(struct prof_timeline_point) points;	/* time-ordered */
};
struct prof_timeline {
	VEC(struct prof_timeline_series) series;
};
/* CPU%, RSS and I/O-wait% series from the timeline `prof record` stored
 * (the process with the most points); empty when there is none.
 * prof_output_html() uses it.  Free with prof_output_timeline_free. */
void prof_output_timeline_from_profile(const struct prof_profile *p, struct prof_timeline *tl);
void prof_output_timeline_free(struct prof_timeline *tl);

/* --- renderers -------------------------------------------------------------- */
int prof_output_flamegraph(FILE *f, const struct prof_profile *p, const struct prof_view *v);
/* difffolded.pl convention: shaped by head; red = grew, blue = shrank
 * (per-frame inclusive share, base normalised to head's total); stacks only
 * in base are drawn as a separate grey flame graph below, sized by their
 * base weight, titled "Disappeared". */
int prof_output_flamegraph_diff(FILE *f, const struct prof_profile *base,
				const struct prof_profile *head, const struct prof_view *v);
int prof_output_html(FILE *f, const struct prof_profile *p, const struct prof_view *v);
/* The same page for two recordings: head's flame graph coloured by the
 * change of share (red grew, blue shrank) and a movers table. */
int prof_output_html_diff(FILE *f, const struct prof_profile *base, const struct prof_profile *head,
			  const struct prof_view *v);
int prof_output_html_ex(FILE *f, const struct prof_profile *p, const struct prof_view *v,
			const struct prof_timeline *timeline);
int prof_output_speedscope(FILE *f, const struct prof_profile *p, const struct prof_view *v);
int prof_output_pprof(FILE *f, const struct prof_profile *p, const struct prof_view *v);
int prof_output_callgrind(FILE *f, const struct prof_profile *p, const struct prof_view *v);
/* The Firefox Profiler's processed profile format (src/output/firefox.c). */
int prof_output_firefox(FILE *f, const struct prof_profile *p, const struct prof_view *v);

#endif
