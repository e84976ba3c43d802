/*
 * model.h - the in-memory profile of sampled stacks.  The recorder (live
 * samples), the prof.data reader and the perf.data importer build a struct
 * prof_profile; report, diff and every export format only read it.
 *
 * Which model each command reads, and why there are two:
 *  - record writes this model; report and diff read it (from prof.data, or
 *    from perf.data through the importer).
 *  - callgrind annotate and callgrind diff read struct cg_profile
 *    (callgrind.h): per-function self and inclusive instruction counts and
 *    call edges, but no stacks.  Turning that into a stack trie would
 *    invent stacks callgrind never saw, so it stays its own model.
 *  - crosscheck reads both: the time side is this model, the instruction
 *    side cg_profile, joined per function in src/analysis/crosscheck.c.
 *  - stat reads neither: it measures whole runs (resource.h, analysis.h).
 *
 * Design notes / invariants:
 *  - Everything is an integer handle into a flat table (no pointers between
 *    objects), so a profile can be serialized incrementally and freed in one
 *    go.  String handles index p->strings; id 0 is "".
 *  - modules, frames and threads are deduplicated on insert; their ids are
 *    dense and never change, which is what lets prof.data write each one
 *    exactly once, the first time it is used (see src/data/).
 *  - Stacks live in a trie: node 0 is the root (frame PROF_NONE); a node's
 *    parent is the caller.  A sample points at its innermost node.
 *  - Inline expansion has already happened: an inlined function is its own
 *    frame with .inlined = 1, sitting below the frame it was inlined into.
 *  - Weights are aggregated per (thread, node) in a vector of
 *    PROF_METRIC_COUNT u64s, so one profile carries CPU samples and
 *    off-CPU / I/O-wait nanoseconds side by side.
 */
#ifndef PROF_MODEL_H
#define PROF_MODEL_H

#include "prof/util.h"

enum prof_metric {
	PROF_M_SAMPLES,		/* on-CPU samples (count) */
	PROF_M_CPU_NS,		/* on-CPU time, ns (samples x period for clock events) */
	PROF_M_OFFCPU_NS,	/* all off-CPU time, ns (sum of the four below) */
	PROF_M_IOWAIT_NS,	/* blocked in D state on I/O */
	PROF_M_UNINT_NS,	/* other uninterruptible waits */
	PROF_M_SLEEP_NS,	/* S state: sleep, futex, poll... */
	PROF_M_PREEMPT_NS,	/* runnable but descheduled */
	/* Heap (prof record --heap): estimates, each sampled allocation
	 * weighted by its inverse sampling probability.  A free is charged to
	 * the stack that allocated the block, so alloc minus free is what
	 * is still live (src/model/heap.c). */
	PROF_M_ALLOCS,		/* allocations (count) */
	PROF_M_ALLOC_BYTES,	/* bytes allocated */
	PROF_M_FREES,		/* of those, freed (count) */
	PROF_M_FREE_BYTES,	/* of those, bytes freed */
	PROF_M_PEAK_BYTES,	/* live when the heap was largest: derived on load, never stored */
	PROF_METRIC_COUNT
};
#define PROF_M_HEAP_FIRST PROF_M_ALLOCS	/* heap metrics: PROF_M_HEAP_FIRST .. PEAK_BYTES */
/* An off-CPU interval's length in ns (its sample's time is the start);
 * the heap metrics are bytes and counts, never durations. */
static inline bool prof_metric_is_duration(unsigned m)
{
	return m >= PROF_M_OFFCPU_NS && m <= PROF_M_PREEMPT_NS;
}

enum prof_frame_kind {
	PROF_FRAME_USER,	/* native code in a file-backed mapping */
	PROF_FRAME_KERNEL,
	PROF_FRAME_JIT,		/* from /tmp/perf-PID.map */
	PROF_FRAME_ANON,	/* anonymous executable memory, no map file */
	PROF_FRAME_UNKNOWN,	/* address outside any known mapping */
};

enum prof_module_flags {
	PROF_MOD_KERNEL = 1 << 0,
	PROF_MOD_VDSO = 1 << 1,
	PROF_MOD_DELETED = 1 << 2,	/* mapped file was deleted/replaced */
	PROF_MOD_NO_SYMBOLS = 1 << 3,	/* stripped, no debug file found */
	PROF_MOD_JIT = 1 << 4,
	PROF_MOD_PYTHON = 1 << 5,	/* a Python source file: its frames are Python functions */
};

struct prof_module {
	uint32_t path;		/* string id: file path, "[kernel]", "[vdso]" */
	uint32_t build_id;	/* string id: lowercase hex, "" if none */
	uint32_t flags;		/* enum prof_module_flags */
};

struct prof_frame {
	uint32_t func;		/* string id: demangled-as-found function name */
	uint32_t file;		/* string id: source file, "" if unknown */
	uint32_t line;		/* 0 if unknown */
	uint32_t module;	/* module id, PROF_NONE if none */
	uint64_t addr;		/* module-relative address (file vaddr), 0 if n/a */
	uint64_t pc;		/* innermost frame of a sample's leaf only: file vaddr
				 * of the sampled instruction (for `prof annotate`);
				 * 0 elsewhere and in files written before it existed */
	uint8_t kind;		/* enum prof_frame_kind */
	uint8_t inlined;	/* 1: inlined into the frame below it (its caller) */
};

struct prof_node {
	uint32_t parent;	/* caller node; PROF_NONE for the root */
	uint32_t frame;		/* PROF_NONE for the root */
};

struct prof_thread {
	uint32_t pid, tid;
	uint32_t comm;		/* string id, latest name seen */
};

struct prof_agg {		/* aggregated weight of one (thread, stack) */
	uint32_t thread, node;
	uint64_t value[PROF_METRIC_COUNT];
};

struct prof_meta {		/* string key/value pairs, in insertion order */
	uint32_t key, value;
};

/*
 * Resource usage of one process (tid 0) or one thread, as read from /proc
 * by `prof record` (src/record/timeline.c).  A later value for the same
 * (pid, tid) replaces the earlier one: these are running totals, and the
 * last reading wins.  Off-CPU / I/O-wait / sleep time is not stored here:
 * it is the sum of the PROF_M_*_NS metrics of the thread's aggs.
 */
struct prof_resources {
	uint32_t pid, tid;		/* tid 0: the whole process */
	uint64_t user_ns, sys_ns;	/* CPU time (clock-tick resolution) */
	uint64_t vol_cs, invol_cs;	/* context switches */
	uint64_t minflt, majflt;	/* page faults */
	uint64_t rss_peak_bytes;	/* process: VmHWM (or wait4's ru_maxrss) */
	uint64_t io_read_bytes, io_write_bytes;	/* process: /proc/PID/io */
};

/* One point of a process's resource timeline (at least every 100 ms). */
struct prof_timeline_sample {
	uint64_t t_ns;			/* CLOCK_MONOTONIC, like sample times */
	uint32_t pid;
	uint64_t rss_bytes;
	uint32_t cpu_pct_x100;		/* CPU% over the interval ending at t, x100 */
	uint32_t io_wait_pct_x100;	/* I/O-wait% of the interval, x100 */
};

/* A task's fork, exec or exit, from the kernel's records (never guessed
 * from when its samples start or stop). */
enum prof_task_event_kind { PROF_TASK_FORK, PROF_TASK_EXEC, PROF_TASK_EXIT };
struct prof_task_event {
	uint64_t t_ns;			/* CLOCK_MONOTONIC */
	uint32_t pid, tid;
	uint32_t kind;			/* enum prof_task_event_kind */
	uint32_t thread;		/* the identity it starts or ends; PROF_NONE: one
					 * that never had a sample */
};

/*
 * One sample as it was taken, kept only when p->keep_timed is set before
 * loading (the time-ordered exports and the HTML timeline need it; text
 * reports do not, and 1M samples cost 32 MB here).
 */
struct prof_timed_sample {
	uint64_t t_ns;			/* CLOCK_MONOTONIC */
	uint64_t value;			/* count or ns, as prof_add() got it */
	uint32_t thread, node;
	uint32_t metric;		/* enum prof_metric */
};

/* What a recorder says of a sample beside its weight (the prof_replay_sink
 * flags, stored by the prof.data writer). */
enum prof_sample_flags {
	PROF_SAMPLE_TRUNCATED = 1 << 0,	/* unwind stopped before the outermost frame */
	PROF_SAMPLE_KERNEL = 1 << 1,	/* sample hit in kernel mode */
	/* On a PROF_M_ALLOCS / PROF_M_ALLOC_BYTES sample: not an
	 * allocation but a sampled block still live when the recording ended,
	 * at its allocation's time (format.c, HEAP_SAMPLES; the leak view). */
	PROF_SAMPLE_LIVE_AT_END = 1 << 2,
};

/* The heap figures of a profile (prof_profile_heap_derive). */
struct prof_profile_heap_summary {
	bool present;			/* the profile has heap samples */
	uint64_t rate;			/* mean bytes between samples (1: every allocation) */
	uint64_t samples, frees;	/* sampled allocations, and their frees seen */
	uint64_t lost;			/* samples the kernel dropped (estimates too low) */
	double allocs, alloc_bytes, live_bytes, peak_bytes;	/* estimates */
	double allocs_err, alloc_bytes_err, live_bytes_err, peak_bytes_err;	/* their standard errors */
	uint64_t peak_ns;		/* when the estimated heap was largest */
	char scope[96];			/* "": the whole recording; else what
					 * prof_profile_heap_until/leaks kept */
};

struct prof_profile {
	struct strtab strings;
	VEC(struct prof_module) modules;
	VEC(struct prof_frame) frames;
	VEC(struct prof_node) nodes;
	VEC(struct prof_thread) threads;
	VEC(struct prof_agg) aggs;
	VEC(struct prof_meta) meta;
	VEC(struct prof_resources) resources;	/* unique (pid, tid) */
	VEC(struct prof_timeline_sample) timeline;	/* append order = time order per pid */
	VEC(struct prof_task_event) task_events;	/* record order */
	bool keep_timed;		/* set before loading: fill timed[] too */
	VEC(struct prof_timed_sample) timed;	/* load order; see prof_timed_sort() */

	/* summary numbers, kept by whoever fills the profile */
	uint64_t samples;		/* CPU samples taken (incl. filtered later) */
	uint64_t samples_truncated;	/* samples whose unwind stopped early */
	uint64_t lost;			/* samples the kernel dropped */
	uint64_t period_ns;		/* nominal ns per sample, 0 if not a clock */
	uint64_t start_ns, end_ns;	/* CLOCK_MONOTONIC of first/last record */

	/* heap samples in load order (time, thread, node, metric, value): the
	 * peak needs them in time order; few (one per sampled allocation) */
	VEC(struct prof_timed_sample) heap_log;
	/* the sampled blocks still live when the recording ended, at their
	 * allocation's time: PROF_M_ALLOCS then PROF_M_ALLOC_BYTES per block
	 * (their weights); empty for a recording cut short */
	VEC(struct prof_timed_sample) heap_live;
	struct prof_profile_heap_summary heap;

	/* private indexes */
	struct u64map module_index, frame_index, node_index, thread_index, agg_index;
	struct u64map resources_index;	/* pid << 32 | tid -> index + 1 */
};

void prof_profile_init(struct prof_profile *p);
void prof_profile_free(struct prof_profile *p);

static inline const char *prof_str(const struct prof_profile *p, uint32_t id)
{
	return strtab_get(&p->strings, id);
}
uint32_t prof_intern(struct prof_profile *p, const char *s);

uint32_t prof_module_intern(struct prof_profile *p, const char *path,
			    const char *build_id, uint32_t flags);
uint32_t prof_frame_intern(struct prof_profile *p, const struct prof_frame *f);
/* The trie child of parent for frame (created on first use). */
uint32_t prof_node_child(struct prof_profile *p, uint32_t parent, uint32_t frame);
/* Insert a stack given innermost-first (as unwinders produce it); returns the leaf node. */
uint32_t prof_node_from_stack(struct prof_profile *p, const uint32_t *frames_inner_first, size_t n);
/* Depth of a node (root = 0). */
size_t prof_node_depth(const struct prof_profile *p, uint32_t node);
/* A list of frame or node ids. */
struct u32vec { uint32_t *v; size_t n, cap; };
/* The stack of one node as frame ids, outermost first, into out (reset). */
void prof_node_frames_outer_first(const struct prof_profile *p, uint32_t node,
				  struct u32vec *out);

/* Finds or creates the thread; a non-empty comm replaces the stored one. */
uint32_t prof_thread_intern(struct prof_profile *p, uint32_t pid, uint32_t tid, const char *comm);
/*
 * Always appends a new thread entry for (pid, tid) and makes it the one
 * prof_thread_intern() finds from now on.  Used at exec: samples before and
 * after an exec keep their own comm (a forked child that execs "split"
 * shows its pre-exec work under the parent's name, the rest under "split").
 */
uint32_t prof_thread_add(struct prof_profile *p, uint32_t pid, uint32_t tid, const char *comm);
/* A new thread entry that prof_thread_intern() does not find: the thread
 * as it was named before an exec, for a sample of that time replayed after
 * the exec made (pid, tid) another. */
uint32_t prof_thread_add_past(struct prof_profile *p, uint32_t pid, uint32_t tid, const char *comm);
/* Adds value to metric for (thread, node). */
void prof_add(struct prof_profile *p, uint32_t thread, uint32_t node,
	      enum prof_metric metric, uint64_t value);
/* prof_add(), and when p->keep_timed, also logs the sample with its time. */
void prof_add_timed(struct prof_profile *p, uint64_t t_ns, uint32_t thread, uint32_t node,
		    enum prof_metric metric, uint64_t value);
/* Sorts p->timed by time (stable: equal times keep load order). */
void prof_timed_sort(struct prof_profile *p);

void prof_meta_set(struct prof_profile *p, const char *key, const char *value);
const char *prof_meta_get(const struct prof_profile *p, const char *key); /* NULL if unset */

/* Sets the resource totals of (r->pid, r->tid), replacing older ones. */
void prof_resources_set(struct prof_profile *p, const struct prof_resources *r);
/* The stored totals of (pid, tid), or NULL. */
const struct prof_resources *prof_resources_get(const struct prof_profile *p,
						uint32_t pid, uint32_t tid);

/* Sum of one metric over all aggs. */
uint64_t prof_total(const struct prof_profile *p, enum prof_metric m);

/* --- heap metrics (src/model/heap.c) ------------------------------------------
 * Called by whoever filled a profile with heap samples (the prof.data
 * reader at the end of a load): derives PROF_M_PEAK_BYTES from the heap
 * samples in time order and the header figures.  Cheap: it walks only the
 * heap samples kept in p->heap_log. */
void prof_profile_heap_derive(struct prof_profile *p);
const struct prof_profile_heap_summary *prof_profile_heap_summary(const struct prof_profile *p);
/* Snapshots: the heap metrics (columns, p->timed, the summary) as if the
 * recording had ended at t_ns, so live-bytes is what was live then; the
 * snapshot diff is two of them (live at B minus live at A).  Other
 * metrics are untouched. */
void prof_profile_heap_until(struct prof_profile *p, uint64_t t_ns);
/* The leak view: the heap metrics count only the sampled blocks live when
 * the recording ended that were allocated at least min_age_ns before its
 * end (allocs: how many, live-bytes: their bytes).  -ENOENT: no heap
 * samples; -ENODATA: the recording does not say which blocks are live,
 * or not all of them (cut short: meta heap_live_blocks, the length of
 * the list, is missing or more than the blocks read). */
int prof_profile_heap_leaks(struct prof_profile *p, uint64_t min_age_ns);
/* Whether p->heap_live is the whole list of blocks live at the end (a
 * recording cut short has none of it or part of it). */
bool prof_profile_heap_live_known(const struct prof_profile *p);

/* --- the view: what a report looks at (src/model/view.c) -----------------
 * Which metric weighs each (thread, stack) aggregate, and which aggregates
 * pass the --pid/--tid/--comm/--dso filters.  Every renderer and `prof
 * diff` ask prof_view_weight() and nothing else, so all formats agree on
 * what is counted.  sort, inverted and title are the renderers' choices
 * carried along with it. */
enum prof_view_metric {	/* what --metric selects */
	PROF_VIEW_CPU,		/* on-CPU samples (weights are sample counts) */
	PROF_VIEW_OFFCPU,	/* off-CPU ns */
	PROF_VIEW_IOWAIT,	/* I/O wait ns */
	PROF_VIEW_SLEEP,	/* sleep ns */
	PROF_VIEW_WALL,		/* on-CPU ns + off-CPU ns */
	PROF_VIEW_ALLOCS,	/* heap: allocations (count) */
	PROF_VIEW_ALLOC_BYTES,	/* heap: bytes allocated */
	PROF_VIEW_LIVE_BYTES,	/* heap: allocated, not freed at the end */
	PROF_VIEW_PEAK_BYTES,	/* heap: live at the largest estimated heap */
};
/* The heap metrics weigh in bytes or allocations, not samples or ns. */
static inline bool prof_view_metric_is_heap(enum prof_view_metric m)
{
	return m >= PROF_VIEW_ALLOCS;
}
int prof_view_metric_parse(const char *s, enum prof_view_metric *m);
const char *prof_view_metric_name(enum prof_view_metric m);
const char *prof_view_metric_unit(enum prof_view_metric m);	/* "samples", "us", "bytes", "allocations" */

enum prof_sort { PROF_SORT_SELF, PROF_SORT_TOTAL };
#define PROF_VIEW_IDS_MAX 64

struct prof_view {
	enum prof_view_metric metric;
	enum prof_sort sort;
	double percent_limit;		/* hide rows under this % (0: show all) */
	uint32_t pids[PROF_VIEW_IDS_MAX], tids[PROF_VIEW_IDS_MAX];	/* --pid, --tid lists */
	size_t npids, ntids;		/* 0: any */
	const char *comm;		/* NULL: any; a comma list of names, as perf's --comms */
	const char *dso;		/* NULL: any; a comma list of module basenames or paths
					 * of the leaf frame, as perf's --dsos */
	bool percent_relative;		/* --percentage relative: of the filtered total */
	bool inverted;			/* flame graph: icicle; text tree: callee first */
	const char *title;
	uint32_t max_stack;		/* count only the innermost N frames (0: all) */
	const char *sort_keys;		/* text: one row per comm,pid,tid,dso,sym,srcline tuple */
	bool quiet;			/* text: no "#" header and no column titles */
	bool full_header;		/* text: every meta key of the recording first */
	bool color;			/* text: ANSI colours (hot rows, modules, headers) */
	const char *const *source_roots;	/* --source-root DIRs (HTML source view) */
	size_t n_source_roots;
};
void prof_view_init(struct prof_view *v);	/* defaults: cpu, self, all */

/* Weight of one aggregate under the view; 0 if filtered out. */
uint64_t prof_view_weight(const struct prof_profile *p, const struct prof_view *v,
			  const struct prof_agg *a);

/* True when pid passes --pid, comm passes --comm. */
bool prof_view_pid_selected(const struct prof_view *v, uint32_t pid);
bool prof_view_comm_selected(const struct prof_view *v, const char *comm);
/* True when a --pid/--tid/--comm/--dso filter is set. */
bool prof_view_filtered(const struct prof_view *v);
/*
 * What a report's percentages divide by, as perf's --percentage: absolute
 * (the default) is the metric's total over the whole recording, relative
 * is filtered_total (the weight that passed the filters).
 */
uint64_t prof_view_percent_base(const struct prof_profile *p, const struct prof_view *v,
				uint64_t filtered_total);

/* Basename of a module's path, "" for PROF_NONE. */
const char *prof_module_basename(const struct prof_profile *p, uint32_t module);
/* Module path of a frame, "" if none. */
const char *prof_frame_module_path(const struct prof_profile *p, const struct prof_frame *f);

#endif
