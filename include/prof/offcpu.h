/*
 * offcpu.h - off-CPU profiling during `prof record` (src/perf/offcpu.c):
 * the sched:sched_switch tracepoint sampled on every switch-out of a
 * profiled thread (same user regs + stack copy and kernel callchain as the
 * CPU event), paired with the thread's next switch-in (PERF_RECORD_SWITCH,
 * attr.context_switch=1) to get the blocked interval, which is classified
 * (I/O wait, other uninterruptible, sleep, preempted) and charged to the
 * switch-out stack in ns.  Facts about the kernel: kernel-notes/offcpu.md.
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
void prof_offcpu_enable(struct prof_offcpu *oc);
void prof_offcpu_disable(struct prof_offcpu *oc);
/* The off-CPU events' rings: the driver feeds their records to the
 * replay engine tagged with this pointer, after the CPU event's. */
struct prof_perf *prof_offcpu_perf(struct prof_offcpu *oc);
/* Registers the consumer that pairs switch-outs (resolved samples) with
 * switch-ins and puts the charged intervals into sink; p is the profile
 * the engine fills (its kernel frames tell I/O waits). */
void prof_offcpu_attach(struct prof_offcpu *oc, struct prof_replay *rp,
			const struct prof_profile *p, const struct prof_replay_sink *sink);
/* I/O-wait ns of pid's threads that fall inside [from, to), from the
 * intervals charged so far (an interval still open is not known yet). */
uint64_t prof_offcpu_iowait_between(const struct prof_offcpu *oc, uint32_t pid,
				    uint64_t from, uint64_t to);
/* Forgets the I/O intervals that ended before t (nobody asks about them). */
void prof_offcpu_io_prune(struct prof_offcpu *oc, uint64_t t);
/* Switch-out samples the kernel dropped (ring full). */
uint64_t prof_offcpu_lost(const struct prof_offcpu *oc);
void prof_offcpu_free(struct prof_offcpu *oc);

/* Classification of one blocked interval (exposed for unit tests). */
enum prof_metric prof_offcpu_classify(uint64_t prev_state, bool kernel_stack_in_io);
/* Is this kernel function a block-layer / filesystem I/O wait? */
bool prof_offcpu_is_io_function(const char *name);

#endif
