/*
 * restrack.h - resource tracking during `prof record`
 * (src/record/timeline.c): per-process and per-thread CPU user/sys time,
 * context switches, page faults, peak RSS and /proc/PID/io bytes, stored
 * in the profile as struct prof_resources, and a per-process timeline
 * (RSS, CPU%, I/O-wait%) sampled at least every 100 ms.  The I/O-wait%
 * comes from the intervals the off-CPU consumer (src/record/offcpu.c)
 * charged; both are consumers of the replay engine (prof/replay.h).
 *
 * Limits: /proc values have clock-tick
 * resolution (10 ms) for CPU time.  A thread that exits between two
 * samples keeps the values of its last sample, unless its /proc entry is
 * still readable when its PERF_RECORD_EXIT is processed (rarely: threads
 * are reaped at once).  The peak RSS is VmHWM, the kernel's own high-water
 * mark, so a spike between two samples is not missed while the process
 * lives; for a launched command that starts no other process wait4()'s
 * ru_maxrss is also taken at exit, so its peak is exact even when the
 * spike was in its last 100 ms (with children, ru_maxrss may be a
 * child's peak, so it is not used).  A process that lives less than one
 * interval (100 ms) may have no reading at all.  For an attached process
 * every figure covers the recording window only (deltas from the first
 * reading), except /proc/PID/io, which the kernel also credits with the
 * I/O of children the process reaped in the window.
 */
#ifndef PROF_RESTRACK_H
#define PROF_RESTRACK_H

#include "prof/offcpu.h"
#include <sys/resource.h>

#define PROF_RESTRACK_INTERVAL_NS 100000000ULL	/* 100 ms */

struct prof_restrack;

/* oc may be NULL (no off-CPU data: I/O-wait% stays 0). */
struct prof_restrack *prof_restrack_new(struct prof_profile *p, struct prof_offcpu *oc);
/* Registers as a consumer of the replay engine: fork/exit records, and
 * at the end of each batch the move of the sampler's readings (with the
 * off-CPU I/O-wait of the batch) into the profile. */
void prof_restrack_attach(struct prof_restrack *rt, struct prof_replay *rp);
/* Track one more process born in the recording (the launched command). */
void prof_restrack_add_pid(struct prof_restrack *rt, uint32_t pid);
/*
 * Track a process that ran before the recording (an attach target, or a
 * descendant attached with it): its figures become deltas from its
 * readings at prof_restrack_start.  The children it has now are not
 * tracked unless they are added too.
 */
void prof_restrack_add_attached(struct prof_restrack *rt, uint32_t pid);
/* Takes the attached processes' baselines (the window starts now) and
 * starts the sampler thread "prof-resources" (every
 * PROF_RESTRACK_INTERVAL_NS). */
void prof_restrack_start(struct prof_restrack *rt);
/* Samples every live process and all its threads now, and moves
 * everything into the profile. */
void prof_restrack_sample(struct prof_restrack *rt);
/* The launched command has exited but is not reaped yet (waitid WNOWAIT):
 * take its final values; ru (may be NULL) comes from wait4 afterwards. */
void prof_restrack_final(struct prof_restrack *rt, uint32_t pid);
void prof_restrack_rusage(struct prof_restrack *rt, uint32_t pid, const struct rusage *ru);
void prof_restrack_free(struct prof_restrack *rt);

#endif
