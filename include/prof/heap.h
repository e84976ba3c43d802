/*
 * heap.h - heap profiling during `prof record --heap` (src/record/heap.c):
 * uprobe perf events on allocation and free entry points, whose samples
 * (user registers for the arguments, the user stack for the allocation's
 * stack) become the heap metrics of the profile (model.h: PROF_M_ALLOCS
 * and the rest), weighted by the inverse of their sampling probability.
 *
 * Two ways in:
 *  - launch: prof preloads its sampler (src/record/preload/libprofheap.c,
 *    embedded in ./prof and written to a private directory at record
 *    time), which samples by bytes in-process and calls two probe
 *    functions; only sampled allocations and their frees reach the kernel.
 *  - attach (-p): no restart, no preload: uprobes on the entry (and the
 *    return, for the pointer) of the allocator the process uses (glibc,
 *    jemalloc, tcmalloc: whichever mapped file defines malloc).  Every
 *    call traps; BPF programs on the probes (src/perf/bpf_heap.c) keep
 *    the sampled allocations, by bytes, and their frees, before the
 *    kernel copies a stack.  At rate 1, or without BPF (no CAP_BPF, an
 *    old kernel), every call is a sample: exact (weight 1), and costly.
 */
#ifndef PROF_HEAP_H
#define PROF_HEAP_H

#include "prof/perf.h"
#include "prof/replay.h"

struct prof_heap;

/* Events set up like main's callgraph, none opened yet.  rate: mean bytes
 * between samples (launch), 1 = every allocation; seed 0: random. */
struct prof_heap *prof_heap_new(const struct prof_perf *main, uint64_t rate, uint64_t seed);
/*
 * Launch: checks that the command (argv0, as execvp finds it) can take
 * LD_PRELOAD, writes the sampler library into a private directory and
 * points the probes at it.  0, or -errno with why filled (one line).
 */
int prof_heap_prepare_launch(struct prof_heap *h, const char *argv0, char *why, size_t len);
/* Launch: sets LD_PRELOAD and PROF_HEAP_RATE in prof's environment for the
 * fork that follows; prof_heap_env_restore() puts them back. */
void prof_heap_env_apply(struct prof_heap *h);
void prof_heap_env_restore(struct prof_heap *h);
/*
 * Attach: finds the allocator pid uses (a mapped file defining malloc)
 * and points the probes at its entry points.  0, or -errno with why.
 */
int prof_heap_prepare_attach(struct prof_heap *h, pid_t pid, char *why, size_t len);
/* Opens the probes for tid (inherit=1), like prof_perf_open_task. */
int prof_heap_open_task(struct prof_heap *h, pid_t tid);
void prof_heap_enable(struct prof_heap *h);
void prof_heap_disable(struct prof_heap *h);
/* Registers the consumer: sampled allocations (resolved by the engine)
 * and frees become heap samples in sink; p gets the rate in its meta. */
void prof_heap_attach(struct prof_heap *h, struct prof_replay *rp, struct prof_profile *p,
		      const struct prof_replay_sink *sink);
/* The heap's rings as drain sources (at most PROF_HEAP_SOURCES). */
#define PROF_HEAP_SOURCES 3
size_t prof_heap_sources(struct prof_heap *h, struct prof_perf_source *out);
/* Its perf events (for the ring pump), i < PROF_HEAP_SOURCES; NULL for
 * one it does not use. */
struct prof_perf *prof_heap_perf(struct prof_heap *h, int i);

/* After the last drain: the lost-sample count goes into the meta data. */
void prof_heap_finish(struct prof_heap *h);

struct prof_heap_stats {
	uint64_t allocs, frees;		/* samples taken */
	uint64_t lost;			/* samples the kernel dropped */
	uint64_t unmatched;		/* attach: returns without their entry */
	uint64_t memptr_unseen;		/* attach: posix_memalign blocks whose pointer was
					 * stored outside the return's stack copy (not recorded) */
	uint64_t rate;
	bool attached;			/* uprobes on the allocator */
	bool sampled;			/* attached, sampled by BPF (else exact) */
	const char *exact_why;		/* attached: why exact though a rate was asked, or NULL */
	uint64_t waits, wait_ns;	/* launch: the program's pauses for the recorder */
	uint64_t gave_up;		/* launch: waits given up, pacing turned off (record/preload/flow.h) */
};
void prof_heap_stats(const struct prof_heap *h, struct prof_heap_stats *st);
/* Closes the events and removes the private directory. */
void prof_heap_free(struct prof_heap *h);

#endif
