/*
 * offcpu.h - off-CPU profiling during `prof record` (src/perf/offcpu.c):
 * every off-CPU interval of a profiled thread is bounded by its
 * context-switch records (attr.context_switch=1, in a ring of their own),
 * classified (I/O wait, other uninterruptible, sleep, preempted) and
 * charged in ns to the stack of the sched:sched_switch sample taken at
 * the switch-out (same user regs + stack copy and kernel callchain as the
 * CPU event), or to "[stack lost]" when the kernel dropped that sample.
 * Facts about the kernel: kernel-notes/offcpu.md.
 */
#ifndef PROF_OFFCPU_H
#define PROF_OFFCPU_H

#include "prof/perf.h"
#include "prof/replay.h"

struct prof_offcpu;

/*
 * Probes tracefs and the permission to sample the tracepoint with raw
 * data; on success returns the (not yet opened) off-CPU events set up like
 * main's callgraph.  NULL with the reason in why (one line) otherwise.
 */
struct prof_offcpu *prof_offcpu_new(const struct prof_perf *main, char *why, size_t len);
/* One event per CPU for tid (inherit=1), like prof_perf_open_task. */
int prof_offcpu_open_task(struct prof_offcpu *oc, pid_t tid);
/* System-wide (-a): both events on cpu for every task; 0 / -errno. */
int prof_offcpu_open_cpu(struct prof_offcpu *oc, int cpu);
/* -a: leaves the switches of the idle task and of prof's own threads
 * (listed now, so call it once they all run) out of the stack samples,
 * in the kernel; 0 / -errno.  Without it they are only dropped later. */
int prof_offcpu_exclude_self(struct prof_offcpu *oc);
void prof_offcpu_enable(struct prof_offcpu *oc);
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
 * waiting for a stack sample are charged to [stack lost]. */
void prof_offcpu_finish(struct prof_offcpu *oc);
/* I/O-wait ns of pid's threads that fall inside [from, to), from the
 * intervals charged so far (an interval still open is not known yet). */
uint64_t prof_offcpu_iowait_between(const struct prof_offcpu *oc, uint32_t pid,
				    uint64_t from, uint64_t to);
/* Forgets the I/O intervals that ended before t (nobody asks about them). */
void prof_offcpu_io_prune(struct prof_offcpu *oc, uint64_t t);
/* Switch-out stack samples the kernel dropped (ring full, counted). */
uint64_t prof_offcpu_lost(const struct prof_offcpu *oc);
/* Intervals charged to [stack lost] (their stack sample was dropped). */
uint64_t prof_offcpu_stacks_lost(const struct prof_offcpu *oc);
/* Switch records the kernel dropped from the time ring: time is missing. */
uint64_t prof_offcpu_switches_lost(const struct prof_offcpu *oc);
/* The time ring (context-switch records), drained like the others. */
struct prof_perf *prof_offcpu_switch_perf(struct prof_offcpu *oc);
void prof_offcpu_free(struct prof_offcpu *oc);

/* For a reader of its own (prof stat's I/O wait, src/resource/iowait.c):
 * the prev_state of a decoded switch-out sample. */
uint64_t prof_offcpu_prev_state(const struct prof_offcpu *oc, const struct prof_perf_sample *s);

/* Classification of one blocked interval (exposed for unit tests). */
enum prof_metric prof_offcpu_classify(uint64_t prev_state, bool kernel_stack_in_io);
/* Is this kernel function a block-layer / filesystem I/O wait? */
bool prof_offcpu_is_io_function(const char *name);

#endif
