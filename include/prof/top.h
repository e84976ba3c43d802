/*
 * top.h - `prof top`, the live view (src/top/).  Three layers, each usable
 * and testable alone:
 *
 *  - the view (view.c): a sliding window of the samples fed to it (trie
 *    node of the model + thread + time + weight: one per CPU sample, or
 *    the ns of an off-CPU interval with --off-cpu), turned on demand into a
 *    table of functions with self and total weight, or into the callers of
 *    one function.  It is a sample consumer: whoever turns perf records
 *    into trie nodes (the replay engine's consumer in live.c) calls
 *    prof_top_feed() per sample.
 *  - the screen (screen.c): the UI state (sort, filter, selection, pause,
 *    callers view, the filter prompt), the key handling that changes it,
 *    and the rendering of a table into exactly the lines a terminal of a
 *    given size can show (never wider, never taller; control characters in
 *    names are replaced) or into an unbounded table for --stdio.
 *  - the terminal (tty.c): raw mode, the alternate screen, resize, and
 *    restoring the terminal on exit, on fatal signals and on Ctrl-Z.
 *
 * live.c drives the three from a live recording for src/cmd/top.c.
 */
#ifndef PROF_TOP_H
#define PROF_TOP_H

#include "prof/model.h"
#include <regex.h>

/* --- the view ----------------------------------------------------------------- */

struct prof_top_view;

/* A view over p's trie; samples older than window_ns before the newest
 * time given to prof_top_expire() drop out.  p must outlive the view. */
struct prof_top_view *prof_top_view_new(const struct prof_profile *p, uint64_t window_ns);
void prof_top_view_free(struct prof_top_view *v);
/* One sample: its time (CLOCK_MONOTONIC ns), model thread, innermost trie node, weight. */
void prof_top_feed(struct prof_top_view *v, uint64_t time_ns, uint32_t thread, uint32_t node,
		   uint64_t weight);
/* Drops the samples older than now_ns - window. */
void prof_top_expire(struct prof_top_view *v, uint64_t now_ns);
/* Total weight and number of samples in the window. */
uint64_t prof_top_weight(const struct prof_top_view *v);
uint64_t prof_top_samples(const struct prof_top_view *v);

enum prof_top_sort { PROF_TOP_BY_SELF, PROF_TOP_BY_TOTAL };

struct prof_top_row {
	uint32_t func;		/* string id of the function name */
	uint32_t module;	/* module id, PROF_NONE when unknown */
	uint64_t self, total;	/* weight in the window */
};

struct prof_top_proc {		/* one process's weight in the window */
	uint32_t pid;
	uint32_t comm;		/* string id: its latest thread name */
	uint64_t weight;
};

struct prof_top_table {
	VEC(struct prof_top_row) rows;	/* sorted, heaviest first */
	VEC(struct prof_top_proc) procs;	/* heaviest first */
	uint64_t weight;		/* the window's total: 100% */
	uint64_t samples;
	/* callers view only: the function whose callers these rows are */
	bool callers;
	struct prof_top_row of;
};
void prof_top_table_free(struct prof_top_table *t);

/*
 * Fills t (replacing its rows) with one row per function in the window:
 * self = weight of samples whose innermost frame it is, total = weight of
 * samples with it anywhere on the stack (recursion counted once).  Rows
 * whose function name does not match filter (when not NULL) are left out;
 * the total stays the whole window's.
 */
void prof_top_functions(const struct prof_top_view *v, enum prof_top_sort sort,
			const regex_t *filter, struct prof_top_table *t);
/*
 * Fills t with the callers of (func, module): one row per caller function
 * (func "[root]"-less: the outermost frame's caller is PROF_NONE, shown as
 * "[no caller]"), weight = samples through the function called from it
 * (the innermost occurrence per sample).  t->of is the function's own row.
 */
void prof_top_callers(const struct prof_top_view *v, uint32_t func, uint32_t module,
		      struct prof_top_table *t);

/* --- the screen ----------------------------------------------------------------- */

enum prof_top_action { PROF_TOP_NONE, PROF_TOP_REDRAW, PROF_TOP_QUIT };

#define PROF_TOP_KEY_UP 0x101
#define PROF_TOP_KEY_DOWN 0x102
#define PROF_TOP_KEY_PGUP 0x103
#define PROF_TOP_KEY_PGDN 0x104
#define PROF_TOP_KEY_LEFT 0x105
#define PROF_TOP_KEY_ESC 0x1b
#define PROF_TOP_KEY_ENTER '\r'
#define PROF_TOP_KEY_BACKSPACE 0x7f

struct prof_top_ui {
	enum prof_top_sort sort;
	bool paused;
	bool editing;			/* the '/' prompt is open */
	char input[128];		/* the prompt's text */
	char filter_text[128];		/* the applied filter, "" for none */
	regex_t filter;			/* valid when filter_text[0] */
	char message[128];		/* one-shot status line ("bad regex ...") */
	size_t selected, scroll;	/* row index, first visible row */
	/* the callers view: a stack of functions (Enter pushes, Esc pops) */
	struct { uint32_t func, module; } callers[16];
	size_t depth;
};
void prof_top_ui_init(struct prof_top_ui *ui);
void prof_top_ui_free(struct prof_top_ui *ui);
/* Applies one key (a byte or PROF_TOP_KEY_*); t is the table on screen
 * (Enter picks its selected row). */
enum prof_top_action prof_top_key(struct prof_top_ui *ui, int key, const struct prof_top_table *t,
				  size_t visible_rows);
/* The table the UI asks for now: functions, or the callers of the top of the stack. */
void prof_top_table_for(const struct prof_top_view *v, struct prof_top_ui *ui,
			struct prof_top_table *t);

struct prof_top_status {	/* the header's numbers besides the table */
	uint64_t lost;		/* samples the kernel dropped, since the start */
	uint64_t period_ns;	/* ns per unit of weight: CPU% per process */
	uint64_t span_ns;	/* the window's length (or time since start, if shorter) */
	double iowait_pct;	/* machine I/O wait over the last interval, <0 unknown */
	const char *target;	/* "pid 123", "all CPUs" */
	bool offcpu;		/* the weight is off-CPU ns (--off-cpu), not samples */
};

/*
 * Renders the screen into out as lines separated by '\n'.  With height > 0
 * exactly height lines of at most width columns (a terminal); returns the
 * index of the selected row's line, or -1.  With height == 0 (--stdio),
 * the header and at most max_rows rows, no selection and no key help.
 */
int prof_top_render(const struct prof_profile *p, const struct prof_top_table *t,
		    const struct prof_top_status *st, struct prof_top_ui *ui, int width, int height,
		    size_t max_rows, struct strbuf *out);
/* Rows of table t a height-line screen shows (for PgUp/PgDn). */
size_t prof_top_visible_rows(const struct prof_top_ui *ui, const struct prof_top_table *t, int height);

/* --- the terminal --------------------------------------------------------------- */

/*
 * Enters raw mode and the alternate screen on fd 0/1 (both must be a TTY:
 * -ENOTTY).  From here until prof_tty_close() the terminal is restored on
 * SIGINT/SIGTERM/SIGHUP/SIGQUIT (which then make prof_tty_stopped() true),
 * on SIGSEGV/SIGBUS/SIGABRT (then re-raised), and around Ctrl-Z.
 */
int prof_tty_open(void);
void prof_tty_close(void);
/* The terminal's size (80x24 when unknown); clears the resize flag. */
void prof_tty_size(int *width, int *height);
bool prof_tty_resized(void);
bool prof_tty_stopped(void);
/* The next key, waiting up to timeout_ms: a byte, PROF_TOP_KEY_*, or -1 (none). */
int prof_tty_key(int timeout_ms);
/* Paints rendered lines from the top-left, the selected line inverted;
 * 0, or -EPIPE / -EIO when the terminal is gone. */
int prof_tty_paint(const char *lines, int selected);

/* --- live ----------------------------------------------------------------------- */

struct prof_perf_config;

struct prof_top_opts {
	const struct prof_perf_config *perf;
	const pid_t *pids;		/* -p */
	size_t npids;
	bool system_wide;		/* -a */
	const int *cpus;		/* -C: NULL for every CPU */
	size_t ncpus;
	double duration;		/* -d: seconds, 0 = until q / Ctrl-C */
	double delay;			/* --delay: seconds between refreshes */
	bool stdio;			/* one table per interval on stdout */
	size_t max_rows;		/* --stdio rows per table */
	enum prof_top_sort sort;	/* --sort: the first order (s/t change it) */
	const char *comm;		/* --comm: a comma list of thread names, NULL: all */
	bool no_python;			/* --no-python: CPython stacks stay native */
	bool off_cpu;			/* --off-cpu: the table is off-CPU time, not CPU samples */
};
/* Runs the live view until q, Ctrl-C, -d or the targets' end.  0, or
 * -errno after printing one line. */
int prof_top_run(const struct prof_top_opts *o);

#endif
