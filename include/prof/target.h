/*
 * target.h - what a live recording samples (src/record/target.c): running
 * processes (-p: every thread, their maps and names from /proc before the
 * events are enabled) or the whole machine (-a, -C: one event per CPU for
 * every task, and every running process synthesized from /proc as perf
 * does, so samples of processes that started before prof resolve too).
 * Shared by the recording session (src/record/session.c) and `prof top`.
 */
#ifndef PROF_TARGET_H
#define PROF_TARGET_H

#include "prof/offcpu.h"
#include "prof/perf.h"
#include "prof/python.h"
#include "prof/replay.h"
#include "prof/restrack.h"

/* The processes a recording attaches to (-p), and how. */
struct prof_target_spec {
	const pid_t *pids;
	size_t n;
	const pid_t *tids;	/* -t: only these threads of them (ntids > 0) */
	size_t ntids;
	bool children;		/* their descendants too, running and new */
	bool per_thread;	/* events per thread even where per CPU is allowed */
	struct prof_python *py;	/* the frame reader whose program is on the CPU events, or NULL */
};

/* Opens pf's (and oc's when not NULL) events for the target processes
 * and registers them with rp, and with rt (when not NULL) as processes
 * whose figures start now.  Where the machine may be recorded (root,
 * CAP_PERFMON) and no threads are chosen: events per CPU, whose records
 * of other processes rp and oc drop; else an event per CPU on every
 * thread.  1 (per CPU), 0 (per thread), or -errno after one line. */
int prof_target_attach(struct prof_perf *pf, struct prof_replay *rp, const struct prof_target_spec *t,
		       struct prof_offcpu *oc, struct prof_restrack *rt);
/* Opens pf's events (and oc's, when not NULL) on the cpus (every CPU
 * when cpus is NULL) for every task, then registers every process in
 * /proc with rp.  0, or -errno after one line (the permission it takes,
 * and why). */
int prof_target_system_wide(struct prof_perf *pf, struct prof_replay *rp, const int *cpus,
			    size_t n, struct prof_offcpu *oc);
/* True while one of the pids runs (or exists under another user). */
bool prof_target_any_alive(const pid_t *pids, size_t n);

#endif
