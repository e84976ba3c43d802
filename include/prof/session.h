/*
 * session.h - one live recording (src/record/session.c), the library side
 * of `prof record`: opens the perf events for a launched command or for
 * running processes, the prof.data writer, the replay engine and its
 * consumers (the writer sink, off-CPU, resource tracking); then drains the
 * rings into the engine until the command ends, the duration passes or a
 * signal asks to stop, flushing the file about every second.
 *
 * Signals: while a launched command runs prof ignores SIGINT/SIGQUIT (the
 * terminal delivers them to the command too) and forwards SIGTERM to it;
 * when attached, SIGINT/SIGTERM stop the recording (the targets are only
 * read, never stopped or signalled).
 */
#ifndef PROF_SESSION_H
#define PROF_SESSION_H

#include "prof/offcpu.h"
#include "prof/perf.h"
#include "prof/unwind.h"

struct prof_session_opts {
	const char *output;		/* prof.data path; "-": stdout */
	struct prof_perf_config perf;
	enum prof_unwinder_kind unwinder;
	const char *unwinder_name;	/* for the file's meta data */
	double duration;		/* seconds, 0 = until the command ends / a signal */
	const pid_t *pids;		/* attach targets (npids), or */
	size_t npids;
	bool system_wide;		/* every task (-a), on cpus (ncpus; NULL: all), or */
	const int *cpus;
	size_t ncpus;
	const pid_t *tids;		/* -t: only these threads of the pids (ntids) */
	size_t ntids;
	char **argv;			/* the command to launch (NULL when attaching); with
					 * pids or system_wide it only bounds the recording,
					 * as perf's does: recorded only when -a covers it */
	bool no_resources;		/* no off-CPU events, no /proc sampling */
	uint32_t offcpu_period;		/* 1 in this many switch-outs' stacks; 0 default, 1 all */
	bool children;			/* attach: also the descendants running now */
	bool per_thread;		/* attach: events per thread, never per CPU */
	bool heap;			/* --heap: sampled allocations (heap.h) */
	uint64_t heap_rate;		/* mean bytes between heap samples, 1: all */
	uint64_t heap_seed;		/* PROF_HEAP_SEED (tests), 0: random */
	bool no_python;			/* no Python frames in CPython's stacks */
	const char *version;		/* prof's, for the file's meta data */
};

/* What the command prints about a recording. */
struct prof_session_info {
	const char *offcpu_why;		/* why there are no off-CPU stacks, or NULL */
	const char *heap_why;		/* --heap: why there is no heap profile, or NULL */
	bool heap;			/* heap samples are recorded */
	bool heap_attached;		/* by uprobes on the allocator */
	bool heap_sampled;		/* attached, sampled by BPF (else every call, exact) */
	const char *heap_exact_why;	/* attached: why every call though a rate was asked, or NULL */
	uint64_t heap_rate, heap_allocs, heap_frees, heap_lost;
	uint64_t heap_memptr_unseen;	/* see struct prof_heap_stats */
	uint64_t heap_waits, heap_wait_ns, heap_gave_up;
	bool ring_shrunk;		/* rings cut to ring_kib by the mlock limit */
	uint32_t ring_kib;
	/* after prof_session_run */
	uint64_t samples, lost, truncated, bytes_written;
	struct prof_offcpu_stats offcpu;
	size_t processes;			/* processes seen (address spaces made) */
	size_t sampled_threads, sampled_processes;	/* with CPU samples */
	size_t offcpu_threads, offcpu_processes;	/* with off-CPU time */
	bool offcpu_recorded;			/* off-CPU time was recorded */
	size_t spaces_peak, spaces_freed;	/* address spaces alive at once, freed */
	bool launched, write_failed;
	int exit_status;		/* the command's (128+signal when killed) */
};

struct prof_session;
/*
 * Sets everything up (a launched command is forked but held before its
 * exec).  0, or a negative errno with the error printed; then nothing is
 * left behind (no output file).
 */
int prof_session_open(struct prof_session **out, const struct prof_session_opts *o);
/* Lets the command exec, or enables the events of attached processes.
 * -errno of a failed exec (printed; the file is removed). */
int prof_session_start(struct prof_session *s);
/* Records until the end, then finishes the file and reaps the command. */
void prof_session_run(struct prof_session *s);
const struct prof_session_info *prof_session_info(const struct prof_session *s);
void prof_session_free(struct prof_session *s);

#endif
