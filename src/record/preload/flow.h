/*
 * flow.h - the page that paces a launched program's sampled allocations to
 * the recorder's reading (`prof record --heap`, launch mode).  Shared by
 * libprofheap.c (in the program) and heap.c (in the recorder) through a
 * file both map, named by PROF_HEAP_FLOW.
 *
 * The kernel ring of a probe's events holds a bounded number of records;
 * a program that allocates fast beside a recorder that does not run (a
 * loaded machine) fills it, and the kernel drops the rest.  heaptrack
 * never drops: its program blocks on a full pipe.  Here the program counts
 * its probe calls (issued), the recorder's ring pump publishes how many of
 * them it has moved out of the kernel (settled), and a program thread
 * that is more than budget calls ahead waits.
 *
 * Design notes / invariants:
 *  - settled is not a count of records: before a pass over every CPU's
 *    ring the pump reads issued, and after a pass that emptied them all it
 *    stores that value.  A probe writes its record before issued grows, so
 *    every call counted was then read or lost; a call whose record the
 *    kernel never wrote (throttled, events not yet enabled) cannot hold
 *    the program back.
 *  - Index 0 is the allocation probe (stack records), 1 the free probe
 *    (register records): each has its own ring, pump and budget.
 *  - budget 0: no pacing (not yet set, or the recorder stopped reading).
 *  - A waiting thread gives up, and turns pacing off for good, when the
 *    recorder's process is gone, or when its pumps have not moved for
 *    FLOW_IDLE_NS (a bug, or a recorder stopped by a signal): the program
 *    goes on and its records are lost, as they would be unpaced.  A
 *    recorder that is merely starved of CPU is waited for.
 *  - The recorder compares issued with the records it read: the calls
 *    whose record the kernel dropped without a LOST record (a full ring
 *    after which nothing more was written) are counted lost too.
 */
#ifndef PROF_HEAP_FLOW_H
#define PROF_HEAP_FLOW_H

#include <stdint.h>

#define PROF_HEAP_FLOW_ENV "PROF_HEAP_FLOW"
#define FLOW_IDLE_NS 10000000000ULL

struct prof_heap_flow {
	uint64_t budget[2];		/* recorder: calls a thread may be ahead */
	int32_t recorder;		/* recorder: its pid */
	uint64_t settled[2] __attribute__((aligned(64)));	/* recorder's pumps */
	uint64_t issued[2] __attribute__((aligned(64)));	/* program: probe calls */
	uint64_t waits, wait_ns, gave_up;	/* program: how often and how long it waited */
};

#endif
