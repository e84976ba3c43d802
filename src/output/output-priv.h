/*
 * output-priv.h - helpers shared by the renderers in src/output/ only: the
 * function index (frames merged by (name, module)), unit conversion of view
 * weights, percentages and name sanitizing for line-oriented formats, and
 * the flame tree the SVG and HTML flame graphs are drawn from.
 */
#ifndef PROF_OUTPUT_PRIV_H
#define PROF_OUTPUT_PRIV_H

#include "prof/output.h"
#include <stdio.h>

/* Every frame of a profile mapped to its function (dense ids). */
struct fn_index {
	uint32_t *frame_fn;		/* frame id -> function id */
	VEC(struct prof_fn_row) fns;	/* function id -> (func, module, file, line) */
	struct u64map by_key;
};
void render_fn_index_build(struct fn_index *ix, const struct prof_profile *p);
void render_fn_index_free(struct fn_index *ix);

static inline bool view_is_time(const struct prof_view *v)
{
	return v->metric != PROF_VIEW_CPU && !prof_view_metric_is_heap(v->metric);
}
/* The text column of a weight: "Time(ms)", "Samples", "Bytes", "Allocs". */
static inline const char *view_column(const struct prof_view *v)
{
	if (view_is_time(v))
		return "Time(ms)";
	if (v->metric == PROF_VIEW_ALLOCS)
		return "Allocs";
	return prof_view_metric_is_heap(v->metric) ? "Bytes" : "Samples";
}
/* A weight in the view's display unit: samples, or ns -> us (rounded). */
static inline uint64_t view_units(const struct prof_view *v, uint64_t w)
{
	return view_is_time(v) ? (w + 500) / 1000 : w;
}
static inline double percent(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}
/* "name" of a function id, "[unknown]" if empty. */
const char *render_fn_name(const struct prof_profile *p, uint32_t func);

/* ANSI colours of the text reports, "" when the view has none: headers
 * bold, percentages red from 5% and green from 0.5% (perf's thresholds),
 * module names cyan. */
#define COLOR_HEADER "\033[1m"
#define COLOR_MODULE "\033[36m"
#define COLOR_RESET "\033[m"
static inline const char *color(const struct prof_view *v, const char *code)
{
	return v->color ? code : "";
}
static inline const char *color_percent(const struct prof_view *v, double pct)
{
	if (!v->color || pct < 0.5)
		return "";
	return pct >= 5 ? "\033[31m" : "\033[32m";
}

/* The "# ..." header lines of the text formats. */
void render_text_header(FILE *f, const struct prof_profile *p, const struct prof_view *v,
			uint64_t grand_total);

/* Off-CPU sums of a thread or a process, over every stack whatever the
 * view's filters. */
struct res_sums {
	uint64_t off_cpu_ns, io_wait_ns, sleep_ns, cpu_ns;
};

/* What the formats say per process (src/output/procs.c), from one pass
 * over the profile instead of one per process. */
struct proc_info {
	uint32_t pid;
	const char *comm;	/* the main thread's latest name, else the first thread's */
	bool main_seen;
	size_t tasks;		/* distinct tids */
	struct res_sums sums;
	VEC(uint32_t) points;	/* its timeline samples, in order */
	uint64_t t_first, t_last;	/* first and last timeline point, ns */
};
struct proc_table {
	struct u64map index;	/* pid -> procs index */
	VEC(struct proc_info) procs;
	struct res_sums *thread_sums;	/* by thread index */
};
void render_proc_table_build(struct proc_table *t, const struct prof_profile *p);
/* An empty entry (no name, no tasks) for a pid the profile never saw. */
const struct proc_info *render_proc_table_get(const struct proc_table *t, uint32_t pid);
void render_proc_table_free(struct proc_table *t);

/* Resource data (src/output/resources.c): JSON fields appended inside a
 * process / thread object, and the text header lines. */
void render_json_process_resources(struct strbuf *sb, const struct prof_profile *p,
				   const struct proc_table *t, uint32_t pid);
void render_json_thread_resources(struct strbuf *sb, const struct prof_profile *p,
				  const struct proc_table *t, uint32_t thread_idx);
/*
 * The processes every format lists, sorted by pid (malloc'ed, *n of them):
 * each with weight under the view, and, unless --tid, --comm or --dso
 * narrows the view, each with resource readings (an attached process that
 * was never sampled is still there; a perf.data file's idle processes are
 * not).  --pid limits it to that process.
 */
uint32_t *render_view_process_pids(const struct prof_profile *p, const struct prof_view *v, size_t *n);
/* --pid limits the lines to that process. */
void render_text_resources_header(FILE *f, const struct prof_profile *p, const struct prof_view *v);
/* HTML process table: extra <th> / <td> cells (CPU user/sys, peak RSS,
 * I/O wait, off-CPU), for profiles that have resource data. */
void render_html_resource_heads(struct strbuf *sb);
void render_html_resource_cells(struct strbuf *sb, const struct prof_profile *p,
				const struct proc_info *pi);

/* The HTML application's data object (src/output/htmlapp.c). */
void render_html_app_data(struct strbuf *sb, const struct prof_profile *p, const struct prof_view *v);

/* --- tiny protobuf encoder (src/output/protobuf.c) ------------------------- */
void render_pb_uint(struct strbuf *sb, uint32_t field, uint64_t v);	/* wire type 0; skips 0 */
void render_pb_bytes(struct strbuf *sb, uint32_t field, const void *data, size_t len); /* wire type 2 */
void render_pb_packed(struct strbuf *sb, uint32_t field, const uint64_t *v, size_t n);
/* gzip (RFC 1952) of in via zlib deflateInit2(windowBits 31): 0 / -errno. */
int render_gzip(const void *in, size_t len, struct strbuf *out);

/* A JSON string literal, quotes included (json_escape writes them). */
void render_json_str(struct strbuf *sb, const char *s);
/* A string table as a JSON array of its strings, in id order. */
void render_json_strtab(struct strbuf *sb, const struct strtab *t);
/* A weight in the view's unit: "123 samples" or "12.345 ms". */
void render_weight(struct strbuf *sb, const struct prof_view *v, uint64_t w);
/* Writes the whole buffer to f: 0 or -EIO. */
int render_flush(FILE *f, const struct strbuf *sb);
/* Indexes 0..n-1 of weight[], heaviest first, ties in index order (the
 * busiest processes, threads: what a capped list keeps).  Malloc'ed. */
size_t *render_order_heaviest_first(const uint64_t *weight, size_t n);

/* --- timed samples (src/output/render_util.c) ------------------------------
 * p->timed indexes grouped by thread, time order kept: thread t's samples
 * are (*order)[(*start)[t] .. (*start)[t + 1]).  Both malloc'ed. */
void render_timed_by_thread(const struct prof_profile *p, size_t **start, size_t **order);
/* Whether (thread, node) passes the view's --pid/--tid/--comm/--dso filters. */
bool render_view_passes(const struct prof_profile *p, const struct prof_view *v, uint32_t thread,
			uint32_t node);
/* Whether the samples carry PROF_M_CPU_NS companions (each CPU sample's
 * period, same time, thread and node). */
bool render_timed_has_cpu_ns(const struct prof_profile *p);
/*
 * The weight of one timed sample under the view, 0 if it does not count.
 * cpu_ns (render_timed_has_cpu_ns): the companions then stand for the CPU samples,
 * so the unit is ns.  Files without companions but with a nominal period
 * get period x count.
 */
uint64_t render_timed_weight(const struct prof_profile *p, const struct prof_view *v,
			     const struct prof_timed_sample *e, bool cpu_ns);

/* HTML-in-<script> safe JSON: replace '<', '>' and '&' by \u003c \u003e \u0026. */
void render_json_script_safe(struct strbuf *sb, const char *json);

/* A file of src/output (the viewer's .js, .css and .html), embedded whole
 * at build time as the NUL-terminated string sym; the Makefile makes the
 * object depend on the viewer's files. */
#define OUTPUT_EMBED(sym, file)                                              \
	__asm__(".section .rodata\n.global " #sym "\n" #sym ":\n"           \
		".incbin \"src/output/" file "\"\n.byte 0\n.previous\n");    \
	extern const char sym[]

/* --- flame tree (src/output/flametree.c) ----------------------------------
 * Nodes are keyed by their *strings* (name, module path, inlined), not by
 * profile ids, so stacks of two different profiles merge into one tree
 * (the differential flame graph needs that).  Node 0 is the root.
 * Invariants: value[k] of a node = sum of value[k] of its children + its
 * own self[k]; children of a node are sorted by name after render_flame_tree_finish().
 */
enum { FLAME_HEAD, FLAME_BASE, FLAME_GONE, FLAME_SLOTS };

struct flame_node {
	uint32_t parent;
	const char *name, *module, *file;	/* borrowed from the profile */
	const char *name_key, *module_key;	/* what merges: the same, or identities */
	uint32_t line;
	uint8_t kind, inlined;
	bool python;				/* a Python function (PROF_MOD_PYTHON) */
	uint64_t value[FLAME_SLOTS];		/* inclusive weight per slot */
	uint64_t self[FLAME_SLOTS];
	uint32_t first_child, n_children;	/* into child_ids, after render_flame_tree_finish */
	uint32_t depth;
};

struct flame_tree {
	VEC(struct flame_node) nodes;
	VEC(uint32_t) child_ids;
	struct u64map index;	/* hash(parent, strings) + probe -> node id */
	uint32_t max_depth;
	/* Diffs of two builds merge frames by identity (src/model/identity.c):
	 * the name without compiler hashes, the module by role (the program,
	 * a soname), so builds of other names and paths share their frames. */
	bool by_identity;
	struct strtab keys;	/* the identity strings, by_identity only */
};

void render_flame_tree_init(struct flame_tree *t);
/* A tree for a base/head diff: frames merge by identity (see above). */
void render_flame_tree_init_identity(struct flame_tree *t);
void render_flame_tree_free(struct flame_tree *t);
/* Add every agg of p passing the view, with its view weight, to slot. */
void render_flame_tree_add_profile(struct flame_tree *t, const struct prof_profile *p,
				   const struct prof_view *v, int slot);
/* Base stacks for a diff: adds to FLAME_BASE, and to FLAME_GONE along
 * paths (or path tails) that the head slot never reached. */
void render_flame_tree_add_base(struct flame_tree *t, const struct prof_profile *p,
				const struct prof_view *v);
void render_flame_tree_finish(struct flame_tree *t);	/* sorts children, sets depths */

#endif
