/*
 * recorder.h - turns the decoded perf records of a recording into the
 * profile model while recording: per-process address spaces (fork, exec,
 * mmap, exit), threads and their names, and for every sample the unwound,
 * symbolized stack handed to the prof.data writer.  Unwinding happens
 * here, live, so no stack bytes ever reach the disk.
 */
#ifndef PROF_RECORDER_H
#define PROF_RECORDER_H

#include "prof/data.h"
#include "prof/perf.h"
#include "prof/unwind.h"

struct prof_recorder;

struct prof_recorder *prof_recorder_new(struct prof_profile *p, struct prof_writer *w,
					struct prof_perf *pf, enum prof_unwinder_kind unwinder);
void prof_recorder_free(struct prof_recorder *r);
/* A launched child, before exec: an empty address space and its name. */
void prof_recorder_add_child(struct prof_recorder *r, pid_t pid, const char *comm);
/* An attached process: its threads' names and its current mappings from
 * /proc.  0, or -ESRCH when it is gone. */
int prof_recorder_add_process(struct prof_recorder *r, pid_t pid);
/* Drains the rings into the profile and the writer's buffer; true when
 * the pass budget stopped it with records left (call again). */
bool prof_recorder_drain(struct prof_recorder *r);
/* Writes what is buffered; 0 or -errno (error already printed). */
int prof_recorder_flush(struct prof_recorder *r);
/*
 * The unwound, symbolized stack of a decoded sample (of any of the
 * recording's events with the same callgraph setup: the off-CPU
 * tracepoint uses it too) as a trie node; *thread is its model thread.
 */
uint32_t prof_recorder_resolve(struct prof_recorder *r, const struct prof_perf_sample *s,
			       uint32_t *thread, bool *complete);
struct prof_writer *prof_recorder_writer(const struct prof_recorder *r);
struct prof_profile *prof_recorder_profile(const struct prof_recorder *r);
/*
 * Resource-side hooks (src/perf/offcpu.c, src/resource/timeline.c):
 * after_drain runs at the end of every drain pass, while the address
 * spaces of exited processes still exist; on_task sees every
 * PERF_RECORD_FORK and PERF_RECORD_EXIT.  Either may be NULL.
 */
void prof_recorder_set_hooks(struct prof_recorder *r,
			     void (*after_drain)(void *arg, struct prof_recorder *r),
			     void (*on_task)(void *arg, const struct perf_event_header *h),
			     void *arg);
/* A consumer of every resolved sample besides the writer (prof top).
 * The writer may be NULL: then samples only go to this consumer. */
void prof_recorder_set_consumer(struct prof_recorder *r,
				void (*fn)(void *arg, uint64_t time, uint32_t thread, uint32_t node,
					   bool complete),
				void *arg);
/* Makes each drain pass stop after about ns (0: drain everything).  The
 * spaces of exited processes are freed at the end of a pass, so short
 * passes also bound the memory of a long backlog. */
void prof_recorder_set_pass_budget(struct prof_recorder *r, uint64_t ns);
/* The most address spaces alive at the end of a drain pass, and how many
 * were freed (process exit, exec replaced, or found gone). */
void prof_recorder_space_stats(const struct prof_recorder *r, size_t *peak_live, size_t *freed);
/* Processes seen (for the summary line). */
size_t prof_recorder_processes(const struct prof_recorder *r);

#endif
