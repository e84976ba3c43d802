/*
 * switchpair.h - the one place that pairs a thread's switch-out with its
 * next switch-in into an off-CPU interval and gives the interval the
 * switch-out sample taken in the same __schedule() call
 * (src/record/switchpair.c).  `prof record` (src/record/offcpu.c) and `prof
 * stat`'s I/O wait (src/record/iowait.c) both feed it; it knows nothing
 * of rings, profiles or sinks.
 *
 * Feed it records in any order between the kinds (the switch records and
 * the samples come from different rings), but each kind in time order per
 * thread.  Intervals and samples wait per thread until both sides are
 * there; charge() is called once per interval, oldest first per thread,
 * with the interval's sample or NULL when the kernel dropped it (then
 * `m` is a guess: preempted when the switch record says so, else the
 * thread's last sampled voluntary state).
 */
#ifndef PROF_SWITCHPAIR_H
#define PROF_SWITCHPAIR_H

#include "prof/model.h"

struct prof_switchpair;

struct prof_switch_interval {
	uint64_t t_on;			/* the switch-in before it (0: not seen) */
	uint64_t t_out, t_in;
	uint32_t tid, pid, thread;	/* thread: the caller's id at the switch-out */
	bool preempt;			/* switched out while runnable */
	uint8_t edge;			/* PROF_SWITCH_FROM_START, PROF_SWITCH_TO_END */
};

/* An interval cut by the recording's window: */
enum {
	PROF_SWITCH_FROM_START = 1,	/* off the CPU when it began: t_out is its start, no sample */
	PROF_SWITCH_TO_END = 2,		/* still off the CPU when it ended: t_in is its end */
};

/* What a switch-out sample says about its interval. */
struct prof_switch_sample {
	uint64_t time;
	uint32_t thread, node;		/* the caller's ids (node: a stack) */
	uint32_t tag;			/* the caller's, PROF_NONE once restacked */
	uint8_t metric;			/* enum prof_metric; PROF_METRIC_COUNT: exiting */
};

typedef void (*prof_switch_charge_fn)(void *arg, const struct prof_switch_interval *iv,
				      const struct prof_switch_sample *s, enum prof_metric m);

struct prof_switchpair *prof_switchpair_new(prof_switch_charge_fn charge, void *arg);
void prof_switchpair_free(struct prof_switchpair *sp);

/* A switch record: out opens tid's interval, the next in closes it. */
void prof_switchpair_out(struct prof_switchpair *sp, uint32_t tid, uint32_t pid, uint32_t thread,
			 uint64_t time, bool preempt);
void prof_switchpair_in(struct prof_switchpair *sp, uint32_t tid, uint64_t time);
/* tid's switch-out sample.  Ignored for a tid that exited (its last
 * switch-out comes after EXIT). */
void prof_switchpair_sample(struct prof_switchpair *sp, uint32_t tid, const struct prof_switch_sample *s);
/* The newest waiting sample of tid within `slack` ns of better->time is
 * takes better's thread, node, tag and metric (a better sample of the
 * same switch arrived; it keeps its time); false if none. */
bool prof_switchpair_restack(struct prof_switchpair *sp, uint32_t tid, uint64_t slack,
			     const struct prof_switch_sample *better);
/* EXIT: tid's intervals are settled and its state freed. */
void prof_switchpair_exit(struct prof_switchpair *sp, uint32_t tid, uint64_t time);
/* Forgets exited tids whose last switch-out never came (per-task events
 * die with the task); call between batches. */
void prof_switchpair_prune(struct prof_switchpair *sp);
/*
 * A thread that exists when the recording starts at `start` (attach):
 * if its first switch record is a switch-in, it was off the CPU from
 * `start` until then (an interval with edge PROF_SWITCH_FROM_START,
 * charged at once with no sample: the caller knows the stack, if
 * anyone does); a switch-out first means it was running.
 */
void prof_switchpair_begin(struct prof_switchpair *sp, uint32_t tid, uint32_t pid, uint32_t thread,
			   uint64_t start);
/* End: every interval still waiting for a sample is charged as lost.
 * With end (the window's end, else 0) a thread still off the CPU is
 * charged up to it (PROF_SWITCH_TO_END): from its last switch-out, with
 * that switch-out's sample, or from `start` when it never ran. */
void prof_switchpair_finish(struct prof_switchpair *sp, uint64_t end);
uint64_t prof_switchpair_switches(const struct prof_switchpair *sp);

#endif
