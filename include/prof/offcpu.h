/*
 * offcpu.h - off-CPU profiling during `prof record` (src/record/offcpu.c):
 * every off-CPU interval of a profiled thread is bounded by its
 * context-switch records (attr.context_switch=1, in a ring of their own),
 * classified (I/O wait, other uninterruptible, sleep, preempted), and
 * charged in ns to stacks: its own (a D-state wait; every interval with
 * --offcpu-stacks=all, or "[stack lost]" when the kernel dropped it), or
 * (sampled mode) its thread's time shared among the stacks of sampled
 * switch-outs, weighted so that the shares are unbiased.  Facts about the kernel:
 * kernel-notes/offcpu.md; the method and its error: docs/offcpu.md.
 */
#ifndef PROF_OFFCPU_H
#define PROF_OFFCPU_H

#include "prof/perf.h"
#include "prof/replay.h"

struct prof_offcpu;

enum prof_offcpu_mode {
	PROF_OFFCPU_SAMPLED,	/* full stacks of 1 in `period` switch-outs at random, of
				 * a thread's first after 20 ms without, and of every
				 * D-state one; time and state of all */
	PROF_OFFCPU_ALL,	/* every switch-out's full stack (--offcpu-stacks=all) */
	PROF_OFFCPU_STATE,	/* state and kernel callchain only (prof stat) */
};

/* The sampled mode's default: 1 in this many switch-outs has a random
 * full stack (docs/offcpu.md: its cost and its error). */
#define PROF_OFFCPU_PERIOD 61

struct prof_offcpu_stats {
	uint64_t lost;		/* switch-out samples the kernel dropped (all) */
	uint64_t full_lost;	/* sampled full stacks the kernel dropped (sampled) */
	uint64_t stacks_lost;	/* intervals charged to [stack lost] (all) */
	uint64_t switches_lost;	/* switch records dropped: off-CPU time missing */
	uint64_t full_stacks;	/* sampled full stacks (sampled) */
	uint64_t by_rule[3];	/* of them: kept at random, by the stale rule, in D state */
	uint64_t repeats;	/* of them: the accountant's repeats of a stack unwound before */
	uint64_t repeats_unnamed;	/* repeats of a stack no longer known: charged by the estimator */
	uint64_t to_base;	/* full stacks copied to the thread's learned stack end only, */
	uint64_t to_base_short;	/* and of them those whose unwind needed more (the end unlearned) */
	uint64_t d_kernel;	/* kernel stacks of D-state switch-outs (the accountant's user ones are sampled) */
	uint64_t d_kernel_missing;	/* D-state switch-outs without one (the accountant's) */
	uint64_t d_io_flag;	/* D-state switch-outs in I/O wait by the kernel's flag alone, unsampled: no stack */
	uint64_t estimated;	/* intervals charged by the estimator (sampled) */
	uint64_t unsampled_ns;	/* ns charged to [stack not sampled] (sampled) */
	uint64_t stale_budget;	/* of the stale keeps: paid by the CPUs' budget (the accountant's) */
	uint64_t stale_refused;	/* switch-outs due a stale keep that the budget refused */
	uint64_t spent_ns;	/* the accountant's time inside recorded threads' switch-outs, */
	uint64_t spent_runs;	/* how many it ran in, */
	uint64_t own_taken;	/* and the CPU samples that fell due meanwhile, dropped */
	bool own_tested;	/* the samples were tested so (the kernel's BTF allowed it) */
};

/*
 * Probes tracefs and the permission to sample the tracepoint with raw
 * data; on success returns the (not yet opened) off-CPU events set up like
 * main's callgraph.  NULL with the reason in why (one line) otherwise.
 */
struct prof_offcpu *prof_offcpu_new(const struct prof_perf *main, enum prof_offcpu_mode mode,
				    uint32_t period, char *why, size_t len);
/* The mode in use (sampled with period 1 is all). */
enum prof_offcpu_mode prof_offcpu_mode(const struct prof_offcpu *oc);
/* 1 in how many switch-outs has a random full stack (1: all). */
uint32_t prof_offcpu_period(const struct prof_offcpu *oc);
/* The accountant's budget of stale keeps a second per CPU (0: none). */
uint32_t prof_offcpu_stale_per_cpu(const struct prof_offcpu *oc);
/* Is off-CPU time timed in the kernel (the BPF accountant), not from
 * PERF_RECORD_SWITCH records? */
bool prof_offcpu_in_kernel(const struct prof_offcpu *oc);
/* The CPU-sampling events cpu (not yet opened) drop the samples that fell
 * due while the accountant's program ran, with interrupts off, inside a
 * switch (src/perf/bpf/owntime.h): where they carry no program, they get
 * the plain one (prof_bpf_targets_open).  Nothing without the accountant,
 * or for events other than cpu-clock and task-clock. */
void prof_offcpu_own_samples(const struct prof_offcpu *oc, struct prof_perf *cpu);
/* Are the samples chosen by BPF filters (else the tracepoint's period,
 * and no stale rule)? */
bool prof_offcpu_filtered(const struct prof_offcpu *oc);
/* Is the filter's stale rule per class (preempted or not), or per thread? */
bool prof_offcpu_stale_by_class(const struct prof_offcpu *oc);
/* One event per CPU for tid (inherit=1), like prof_perf_open_task; with
 * the in-kernel accountant none, and tid's process becomes one of its
 * targets when it starts (unless events are per CPU).  A tid opened
 * before prof_offcpu_enable existed when the recording began (attach):
 * off the CPU then, it is charged from that start. */
int prof_offcpu_open_task(struct prof_offcpu *oc, pid_t tid);
/* A thread that exists now, watched by per-CPU events (-a): as one opened
 * by prof_offcpu_open_task, if it is off the CPU when prof_offcpu_enable
 * begins the recording, it is charged from that start. */
void prof_offcpu_present(struct prof_offcpu *oc, pid_t tid);
/* System-wide (-a): both events on cpu for every task; 0 / -errno. */
int prof_offcpu_open_cpu(struct prof_offcpu *oc, int cpu);
/* Events per CPU serving some processes (-p): only the pids and what
 * they fork from now on are timed and get stacks; before the events are
 * opened.  0, or -ENOTSUP without the in-kernel accountant (the caller
 * then opens events per thread). */
int prof_offcpu_only(struct prof_offcpu *oc, const pid_t *pids, size_t n);
/* -a: leaves the switches of the idle task and of prof's own threads
 * (listed now, so call it once they all run) out of the stack samples,
 * in the kernel; 0 / -errno.  Without it they are only dropped later. */
int prof_offcpu_exclude_self(struct prof_offcpu *oc);
/* The in-kernel accountant starts (it runs on a tracepoint, not on the
 * events): a launched command's (pid launched) just before it is let
 * run, taking it from its exec on, as its events; prof_offcpu_enable
 * calls it for the others (launched 0). */
void prof_offcpu_arm(struct prof_offcpu *oc, pid_t launched);
void prof_offcpu_enable(struct prof_offcpu *oc);
/* The Python frames of the in-kernel accountant's samples, read by py
 * (its perf rings' samples get theirs from the ring pump's hook): by
 * py's BPF program at the switch-out where it has one, else by py at
 * the drain, and the wait of waits (prof_perf_poll: the driver's loop)
 * then also ends when a CPython thread's kept stack waits to be read. */
/* For a live view (prof top): a thread's window is charged once it is a
 * second old, whatever the spread of its samples' weights.  A recording
 * waits up to 10 s for a steadier share (OFFCPU_WINDOW_MAX_NS); a view
 * of the last seconds would show none of the time of a thread whose
 * waits are short and many (each is kept 1 in 61 at random, weight 61,
 * beside its stale-rule samples), only the exact total shared less
 * steadily among its stacks. */
void prof_offcpu_live(struct prof_offcpu *oc);
/* pf's ring pump (started after this) also empties the in-kernel
 * accountant's ring into memory, so that a main thread busy for long
 * (the first batch of a recording) loses none of its records.  The pump
 * must be stopped before oc is freed. */
void prof_offcpu_pump_with(struct prof_offcpu *oc, struct prof_perf *pf);
struct prof_python;
void prof_offcpu_python(struct prof_offcpu *oc, struct prof_python *py, struct prof_perf *waits);
/* The driver has replayed every ring record timed before t (a drain
 * pass's end): the accountant's samples and records up to t can be
 * handled, before the batch ends (oc may be NULL). */
void prof_offcpu_rings_passed(struct prof_offcpu *oc, uint64_t t);
void prof_offcpu_disable(struct prof_offcpu *oc);
/* The off-CPU events' rings: the driver feeds their records to the
 * replay engine tagged with this pointer, after the CPU event's (prof
 * stat's I/O-wait reader drains them itself). */
struct prof_perf *prof_offcpu_perf(struct prof_offcpu *oc);
/* Registers the consumer that pairs switch-outs (resolved samples) with
 * switch-ins and puts the charged intervals into sink; p is the profile
 * the engine fills (its kernel frames tell I/O waits). */
void prof_offcpu_attach(struct prof_offcpu *oc, struct prof_replay *rp,
			struct prof_profile *p, const struct prof_replay_sink *sink);
/* End of the recording, after the last drain: the intervals still
 * waiting are charged (all: to [stack lost]; sampled: every thread's
 * last window is shared), and a thread still off the CPU is charged up
 * to prof_offcpu_disable. */
void prof_offcpu_finish(struct prof_offcpu *oc);
/* I/O-wait ns of pid's threads that fall inside [from, to), from the
 * intervals charged so far (an interval still open is not known yet). */
uint64_t prof_offcpu_iowait_between(const struct prof_offcpu *oc, uint32_t pid,
				    uint64_t from, uint64_t to);
/* Forgets the I/O intervals that ended before t (nobody asks about them). */
void prof_offcpu_io_prune(struct prof_offcpu *oc, uint64_t t);
const struct prof_offcpu_stats *prof_offcpu_stats(const struct prof_offcpu *oc);
/* The time ring (context-switch records), drained like the others. */
struct prof_perf *prof_offcpu_switch_perf(struct prof_offcpu *oc);
/* Every ring of the off-CPU events, for the driver to drain (at most
 * PROF_OFFCPU_MAX_PERFS); how many. */
#define PROF_OFFCPU_MAX_PERFS 4
size_t prof_offcpu_perfs(struct prof_offcpu *oc, struct prof_perf **out);
void prof_offcpu_free(struct prof_offcpu *oc);

/* The kernel stacks of D-state switch-outs that the in-kernel accountant
 * takes (src/record/kstacks.c): prof_kstacks_node makes one (innermost
 * address first) into a node of p, from __schedule inwards. */
struct prof_kstacks;
struct prof_kstacks *prof_kstacks_new(struct prof_profile *p);
uint32_t prof_kstacks_node(struct prof_kstacks *ks, const uint64_t *ips, size_t n);
/* The frame that called __schedule in ips (innermost first), or 0: the
 * kernel leaf a perf sample of the switch-out has. */
uint64_t prof_kstacks_schedule_caller(struct prof_kstacks *ks, const uint64_t *ips, size_t n);
/* Whether kernel address pc is in schedule(). */
bool prof_kstacks_in_schedule(struct prof_kstacks *ks, uint64_t pc);
/* tid's kernel frames now, innermost first, as nodes' frames of p:
 * /proc/TID/stack ("[<0>] do_nanosleep+0x6b/0x170"), or its wait channel
 * alone when the stack is for root only; how many. */
size_t prof_kstacks_of_proc(struct prof_kstacks *ks, pid_t tid, uint32_t *frames, size_t max);
void prof_kstacks_free(struct prof_kstacks *ks);

/* For a reader of its own (prof stat's I/O wait, src/record/iowait.c):
 * the prev_state of a decoded switch-out sample. */
uint64_t prof_offcpu_prev_state(const struct prof_offcpu *oc, const struct prof_perf_sample *s);

/*
 * The sampled mode's estimator, exposed for unit tests (the rest of it,
 * per thread and window, is in offcpu.c).  prof_offcpu_share shares a
 * class's exact time among its sampled intervals in proportion to weight
 * (1/p of the rule that kept it) x ns: parts[i].share, rounded so that
 * the shares sum to exact.
 */
struct prof_offcpu_part {
	uint64_t t_out, ns, share;
	uint32_t thread, node, weight;
};
void prof_offcpu_share(uint64_t exact, struct prof_offcpu_part *parts, size_t n);
/* The estimated squared coefficient of variation of the weighted total
 * sum weight x ns (the Horvitz-Thompson variance estimate over its
 * square); infinite with no sample.  Windows last until it is small. */
double prof_offcpu_cv2(const struct prof_offcpu_part *parts, size_t n);
/*
 * The filter's stale rule (src/perf/bpf_filter.c) replayed over one
 * thread's kept samples, in time order: true if the sample at t of class
 * cls (0 preempted, 1 not; always 0 when the filter keys by thread) was
 * kept by the stale rule (weight 1), false if at random.
 */
struct prof_offcpu_stale {
	uint64_t last[2];	/* the last stale one, by class */
	uint8_t seen;		/* classes with one: bit 1 << class */
};
bool prof_offcpu_stale_replay(struct prof_offcpu_stale *st, uint64_t t, int cls, uint64_t tau);

/* Classification of one blocked interval (exposed for unit tests). */
/* Does the kernel part of node's stack (its innermost frames) wait on I/O? */
bool prof_offcpu_kernel_stack_in_io(const struct prof_profile *p, uint32_t node);
enum prof_metric prof_offcpu_classify(uint64_t prev_state, bool kernel_stack_in_io);
/* Is this kernel function a block-layer / filesystem I/O wait? */
bool prof_offcpu_is_io_function(const char *name);

/* prof stat's I/O wait of a command, from sched_switch (src/record/iowait.c):
 * the same pairing of switch-outs and switch-ins as recording's. */
struct prof_iowait;
#define PROF_IOWAIT_SCHED_SWITCH "sched_switch (D state with an I/O wait function on the kernel stack)"
/* Can sched:sched_switch be sampled here?  0, or -ENOTSUP with why filled. */
int prof_iowait_probe(char *why, size_t len);
/* Starts measuring pid, held before its exec (its events start at exec):
 * NULL with why filled when it cannot. */
struct prof_iowait *prof_iowait_start(pid_t pid, char *why, size_t len);
/* After pid exited (not yet reaped): I/O-wait ns of its threads and
 * descendants; *lost: switch samples the kernel dropped.  Frees iw. */
uint64_t prof_iowait_finish(struct prof_iowait *iw, uint64_t *lost);

#endif
