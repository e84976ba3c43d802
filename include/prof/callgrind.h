/*
 * callgrind.h - the callgrind subsystem: a parser for valgrind's callgrind
 * output (stock valgrind and CodSpeed's valgrind-codspeed, plain, gzip or
 * zstd), annotation (flat table, call tree, source lines, JSON), the
 * part-by-part diff, the valgrind runner and the function identities of
 * its rows (include/prof/identity.h) for the cross-check.  Callgrind keeps
 * its own model: nothing converts it to include/prof/model.h.
 *
 * Design notes / invariants:
 *  - A struct cg_profile holds one or more files; every file contributes
 *    one or more parts (a `part:` line starts a new one, and each file
 *    stock valgrind writes per dump is its own part).  Parts are
 *    independent: each has its own events, functions, calls and costs.
 *  - A function row is keyed exactly as callgrind_annotate 3.19 keys it:
 *    "file:function", where file is the one set by the latest fl=, fi= or
 *    fe= line (inlined code therefore gets its own row under the inlined
 *    file) with "$PWD/" stripped.  The object is not part of the key.
 *    Self costs of a row are the sum of its non-call cost lines, so the
 *    rows equal callgrind_annotate's number for number (with
 *    CG_ANNOTATE_COMPAT for dumps taken mid-run, which have calls=0 lines).
 *  - Costs live in one flat u64 array per part (nev values per entry);
 *    structures hold offsets into it, never pointers, so the array can grow.
 *  - Inclusive cost of a row = self + the inclusive costs of its calls to
 *    other rows (calls to itself are recursion: already inside self).  This
 *    is exact for direct recursion (fib -> fib'2 -> fib'2) and overcounts
 *    only mutual recursion, like every tool without cycle detection.
 *  - All names are interned in p->strs; the three name-compression spaces
 *    (ob/cob; fl/fi/fe/cfi/cfl/jfi; fn/cfn/jfn) map "(id)" to strtab ids per
 *    file.  cfni= lines (valgrind-codspeed inline markers) attribute the
 *    following self costs also to that inlined function (part->inl; the
 *    row's self cost still includes them, so nothing is counted twice).
 *    jump=, jcnd=, rec=, frfn= and ln= lines are understood and skipped.
 */
#ifndef PROF_CALLGRIND_H
#define PROF_CALLGRIND_H

#include "prof/util.h"
#include "prof/model.h"
#include "prof/identity.h"
#include <stdio.h>

enum cg_parse_flags {
	CG_KEEP_LINES = 1 << 0,	/* keep per-(file, line) costs for --auto */
	/* count the cost line after calls=0 (a call still running when the
	 * dump was taken) as self cost, as callgrind_annotate 3.19 does; by
	 * default it is what it is, an inclusive call cost */
	CG_ANNOTATE_COMPAT = 1 << 1,
};

struct cg_fn {
	uint32_t file;		/* string id: file of the row (fl/fi/fe), $PWD/ stripped */
	uint32_t name;		/* string id: function name as written (fib'2 etc.) */
	uint32_t object;	/* string id: ob= (or cob= for callee-only rows) */
	uint32_t home_file;	/* string id: the file current at fn= (the function's own) */
	uint32_t self;		/* cost offset: self costs */
	uint32_t incl;		/* cost offset: inclusive costs (cg_part_finish) */
	uint64_t calls_in;	/* number of calls into this row */
	uint8_t defined;	/* 1: seen as fn=/fi=/fe= (callgrind_annotate lists it) */
};

struct cg_call {
	uint32_t caller, callee;	/* row indexes */
	uint64_t calls;
	uint32_t cost;			/* cost offset: inclusive cost of the calls */
};

struct cg_line {
	uint32_t file, line;
	uint32_t cost;
};

struct cg_inline {		/* self cost marked by cfni= (valgrind-codspeed) */
	uint32_t row;		/* the row whose self cost it is part of */
	uint32_t name;		/* string id: the inlined function */
	uint32_t cost;
};

struct cg_part {
	uint32_t number;	/* from part: (1-based), else the index in its file */
	uint32_t trigger;	/* string id: "harness.c::bench_fib", "Program termination" */
	uint32_t source;	/* string id: the file it came from */
	uint32_t creator, cmd;	/* string ids */
	uint32_t pid;
	unsigned positions;	/* CG_POS_* bits */
	VEC(uint32_t) events;	/* string ids of the events: line */
	VEC(uint64_t) costs;	/* the flat cost pool */
	uint32_t totals;	/* cost offset: totals: line (or summary:, or sum of self) */
	uint8_t has_totals, has_data, totals_calculated;
	VEC(struct cg_fn) fns;
	VEC(struct cg_call) calls;
	VEC(struct cg_line) lines;
	VEC(struct cg_inline) inl;
	struct u64map fn_index, call_index, line_index, inl_index;
};
#define CG_POS_LINE 1u
#define CG_POS_INSTR 2u

struct cg_profile {
	struct strtab strs;
	VEC(struct cg_part *) parts;
	unsigned flags;		/* enum cg_parse_flags */
	char *strip_prefix;	/* "$PWD/": stripped from file names, as callgrind_annotate does */
	unsigned warnings;	/* warnings emitted (capped per file) */
};

void cg_profile_init(struct cg_profile *p, unsigned flags);
void cg_profile_free(struct cg_profile *p);

/*
 * Parses a whole callgrind file already in memory (any of: plain, gzip,
 * zstd) and appends its parts.  name is used in messages.  Returns 0,
 * or -EINVAL when nothing usable is in it (after one error line); problems
 * it can survive (unknown lines, a missing totals: line) are warnings.
 */
int cg_parse_buffer(struct cg_profile *p, const char *buf, size_t len, const char *name);
/* Reads and parses one file; -errno / -EINVAL with an error line. */
int cg_load_file(struct cg_profile *p, const char *path);

/* Decompresses gzip or zstd input into *out (malloc'ed) when buf starts
 * with their magic: 1 if it did, 0 if buf is not compressed, -EINVAL on a
 * corrupt stream or output above max_out bytes. */
int cg_decompress(const char *buf, size_t len, size_t max_out, char **out, size_t *out_len);

static inline const uint64_t *cg_cost(const struct cg_part *part, uint32_t off)
{
	return &part->costs.v[off];
}
static inline size_t cg_nev(const struct cg_part *part) { return part->events.n; }
/* Index of an event in the part, -1 if absent. */
int cg_event_index(const struct cg_profile *p, const struct cg_part *part, const char *event);
/* Finds the part by number or by trigger (benchmark URI); NULL if none. */
struct cg_part *cg_find_part(const struct cg_profile *p, int number, const char *uri);
/* True for parts with no cost lines at all (codspeed metadata dumps, ...). */
bool cg_part_empty(const struct cg_part *part);

/* --- annotate (annotate.c) ------------------------------------------------ */
enum cg_tree { CG_TREE_NONE, CG_TREE_CALLER = 1, CG_TREE_CALLEE = 2, CG_TREE_BOTH = 3 };
struct cg_annotate_opts {
	bool inclusive;		/* show and sort by inclusive costs */
	unsigned tree;		/* enum cg_tree */
	bool auto_source;	/* per-line source annotation */
	double threshold;	/* percent of the first shown event to cover (100: all) */
	const char *show;	/* comma separated events, NULL: all */
	bool json;
	uint64_t part;		/* --part N: only that part (0: every part) */
	const char *benchmark;	/* --benchmark URI: only the part it triggered */
};
int cg_annotate_text(FILE *f, const struct cg_profile *p, const struct cg_part *part,
		     const struct cg_annotate_opts *o);
/* Writes {"schema":"prof-callgrind/1","parts":[...]} for the given parts. */
int cg_annotate_json(FILE *f, const struct cg_profile *p, struct cg_part **parts, size_t n,
		     const struct cg_annotate_opts *o);
/* `prof callgrind annotate`: the parts o selects (--part, --benchmark), as
 * text or JSON.  -EINVAL after one error line when nothing is selected or
 * --show names an event a selected part lacks. */
int cg_annotate(FILE *f, const struct cg_profile *p, const struct cg_annotate_opts *o);

/* --- diff (diff.c) -------------------------------------------------------- */
struct cg_diff_opts {
	const char *event;	/* default: the first event of each part */
	const char *benchmark;	/* only this part (trigger) */
	bool json;
};
/* Compares base and head part by part (paired by trigger / benchmark name).
 * Returns 0, or -EINVAL (after an error line) when nothing could be paired
 * or the event is unknown. */
int cg_diff(FILE *f, const struct cg_profile *base, const struct cg_profile *head,
	    const struct cg_diff_opts *o);

/* --- run (run.c) ---------------------------------------------------------- */
struct cg_run_opts {
	const char *label;	/* profiles/LABEL.callgrind... */
	bool codspeed;		/* CodSpeed runner flags */
	char **argv;		/* the command */
};
/* Runs the command under callgrind and writes the three profile files.
 * Returns the command's exit status (>= 0) or -errno after an error line. */
int cg_run(const struct cg_run_opts *o);

/* --- model (model.c) ------------------------------------------------------ */
/*
 * The identity (include/prof/identity.h) of every row of a part, added to
 * s as one input: ids[i] for part->fns.v[i] (malloc'ed), PROF_NONE for
 * recursion rows when skip_recursion.  Keyed by the function's own file
 * (fl= at fn=), so inlined-code rows share their function's identity.
 */
uint32_t *cg_part_identities(struct prof_idset *s, const struct cg_profile *p,
			     const struct cg_part *part, bool skip_recursion);

/* Shared helpers for the renderers. */
void cg_json_string(FILE *f, const char *s);
/* s with control characters (terminal escapes) shown as '?'. */
void cg_put_printable(FILE *f, const char *s);

#endif
