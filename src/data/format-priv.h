/*
 * format-priv.h - private declarations shared by the prof.data writer and reader
 * (src/data/ only): record type numbers, the file header, sample head bits
 * and the little byte-buffer helpers both sides use.  The format itself is
 * documented in the header comment of format.c.
 */
#ifndef PROF_DATA_FORMAT_H
#define PROF_DATA_FORMAT_H

#include "prof/data.h"

#define PD_MAGIC "PROFDATA"
#define PD_MAGIC_LEN 8
#define PD_VERSION 1

enum pd_record {
	PD_REC_STRING = 1,
	PD_REC_MODULE = 2,
	PD_REC_FRAME = 3,
	PD_REC_NODE = 4,
	PD_REC_THREAD = 5,
	PD_REC_META = 6,
	PD_REC_SAMPLES = 7,
	PD_REC_LOST = 8,
	PD_REC_SUMMARY = 9,
	PD_REC_END = 10,
	/* 11: reserved (EDGE, no longer written) */
	PD_REC_RESOURCES = 12,
	PD_REC_TIMELINE = 13,
	PD_REC_HEAP_SAMPLES = 14,
	PD_REC_TASK_EVENT = 15,
};

/* Sample head varint bits (see format.c). */
#define PD_S_METRIC_MASK 0x7u
#define PD_S_SAME_THREAD 0x8u
#define PD_S_SAME_NODE 0x10u
#define PD_S_SAME_VALUE 0x20u
#define PD_S_FLAGS_SHIFT 6
/* HEAP_SAMPLES metric bits of a block live at the end: its count and
 * byte weights (4 would be peak_bytes, which is never stored). */
#define PD_HEAP_LIVE_COUNT 5
#define PD_HEAP_LIVE_BYTES 6

/* A SAMPLES record is closed once its payload passes this many bytes, so a
 * cut file loses at most one such chunk of a flush. */
#define PD_SAMPLES_CHUNK (64 * 1024)

/* The most bytes one sample can take: five varints of at most 10 bytes
 * (head, time delta, thread, node, value).  The reader tells a cut sample
 * from a corrupt one by this. */
#define PD_SAMPLE_MAX_BYTES (5 * 10)

/* Appends one varint to a byte buffer. */
static inline void pd_put(struct strbuf *sb, uint64_t v)
{
	sb_grow(sb, 10);
	sb->len += varint_put((uint8_t *)sb->buf + sb->len, v);
}

/* Appends a whole record: type, varint payload length, payload. */
void prof_data_put_record(struct strbuf *out, unsigned type, const void *payload, size_t len);
/* Appends the file header (magic, version). */
void prof_data_put_header(struct strbuf *out);
/* Bytes of the file header. */

#endif
