/*
 * pysplice-priv.h - the replay engine's splice of Python frames into
 * native stacks (pysplice.c): private to src/replay/.
 */
#ifndef PROF_PYSPLICE_PRIV_H
#define PROF_PYSPLICE_PRIV_H

#include "prof/model.h"
#include "prof/python.h"
#include "prof/replay.h"
#include "prof/unwind.h"
#include <errno.h>

struct prof_pysplice;
struct prof_pysplice *prof_pysplice_new(struct prof_profile *p, struct prof_python *py);
void prof_pysplice_free(struct prof_pysplice *ps);
/* A PROF_RECORD_PYSTACK record: the frames for the next sample of its tid. */
void prof_pysplice_record(struct prof_pysplice *ps, const struct perf_event_header *h);
/* Splices the pending Python frames into the sample's frames (innermost
 * first, n of them, room for max) when they belong to (tid, time); the new
 * count.  complete: the native stack reaches the thread's root. */
size_t prof_pysplice_apply(struct prof_pysplice *ps, uint32_t tid, uint64_t time,
			   uint32_t *frames, size_t n, size_t max, bool complete);
void prof_pysplice_stats(const struct prof_pysplice *ps, struct prof_pysplice_stats *st);

#endif
