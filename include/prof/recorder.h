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
/* Drains every ring into the profile and the writer's buffer. */
void prof_recorder_drain(struct prof_recorder *r);
/* Writes what is buffered; 0 or -errno (error already printed). */
int prof_recorder_flush(struct prof_recorder *r);
/* Processes seen (for the summary line). */
size_t prof_recorder_processes(const struct prof_recorder *r);

#endif
