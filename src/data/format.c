/*
 * format.c - the prof.data on-disk format: its documentation (below) and
 * the framing helpers the writer and reader share.
 *
 * FILE LAYOUT (version 1)
 *   header:  8 bytes magic "PROFDATA", then varint version (1).
 *   records: until end of file, each
 *              u8 type | varint payload_length | payload[payload_length]
 *   All integers are unsigned LEB128 varints ("v" below) unless stated;
 *   "z" is a zig-zag encoded signed varint.  A reader skips records whose
 *   type it does not know, and ignores trailing payload bytes of records it
 *   does know (fields are only ever appended), so newer writers stay
 *   readable.  A record that runs past end of file marks the file
 *   truncated; everything before it is used, and so is every whole sample
 *   of a SAMPLES record the cut falls in (see CUT FILES below).
 *
 * IDS.  Strings, modules, frames, nodes and threads are numbered densely in
 * the order their definition records appear (exactly the model's ids, which
 * are append-only).  String 0 is "" and node 0 is the trie root; neither is
 * written.  Every reference must point to an earlier definition: a string
 * before the module/frame/thread using it, a node's parent before the node.
 * The reader rejects a definition with a forward reference as corrupt.
 *
 * RECORD TYPES
 *   1 STRING   bytes                  next string id; raw bytes, no NUL
 *   2 MODULE   v path, v build_id, v flags          (string ids, PROF_MOD_*)
 *   3 FRAME    v func, v file, v line, v module+1 (0 = none), v addr,
 *              v kind (enum prof_frame_kind), v inlined (0/1), v pc
 *              pc (appended later; a reader takes 0 when the payload ends
 *              before it) is the file vaddr of the sampled instruction,
 *              set on the innermost frame of a sample's leaf only, so
 *              `prof annotate` can count samples per instruction; other
 *              frames keep pc 0 and stay shared between call sites
 *   4 NODE     v (id - parent), v frame   next node id; parent < id, so the
 *              trie can never contain a cycle
 *   5 THREAD   v id, v pid, v tid, v comm   id == count defines a new thread;
 *              id < count re-emits it with a changed comm
 *   6 META     v key, v value         string ids; a later META for the same
 *              key replaces the value
 *   7 SAMPLES  v base_time_ns, then samples until the payload ends.  Each:
 *                v head   bits 0-2 metric (enum prof_metric), bit 3 same
 *                         thread as previous sample, bit 4 same node, bit 5
 *                         same value as the previous sample of this metric,
 *                         bits 6+ flags (PROF_SAMPLE_*)
 *                z time delta ns from the previous sample (first: base)
 *                v thread           unless bit 3
 *                v node             unless bit 4
 *                v value            unless bit 5
 *              Delta state (previous time/thread/node, last value per
 *              metric = 1) restarts in every SAMPLES record, so each record
 *              decodes alone.  A typical CPU sample costs 4-6 bytes; the
 *              PROF_M_CPU_NS companion sample (same time/thread/node,
 *              repeated period) costs 2.
 *   8 LOST     v time_ns, v count     samples the kernel dropped
 *   9 SUMMARY  v samples, v samples_truncated, v lost, v period_ns,
 *              v start_ns, v end_ns   (struct prof_profile summary fields)
 *  10 END      same payload as SUMMARY; the recording finished cleanly
 *  11 (reserved: was EDGE, call edges of a stackless source; never written
 *              by a command, skipped like any unknown record)
 *  12 RESOURCES v pid, v tid (0 = whole process), v user_ns, v sys_ns,
 *              v vol_cs, v invol_cs, v minflt, v majflt, v rss_peak_bytes,
 *              v io_read_bytes, v io_write_bytes: struct prof_resources,
 *              running totals read from /proc by `prof record`; a later
 *              record for the same (pid, tid) replaces the earlier one
 *  13 TIMELINE v t_ns, v pid, v rss_bytes, v cpu_pct_x100,
 *              v io_wait_pct_x100: one point of a process's resource
 *              timeline (struct prof_timeline_sample); points of one pid
 *              appear in time order
 *              Readers older than these two skip them (unknown types).
 *  14 HEAP_SAMPLES  the SAMPLES encoding (own delta state) for the heap
 *              metrics of `prof record --heap`: the head's metric bits m
 *              mean enum prof_metric PROF_M_HEAP_FIRST + m (allocs,
 *              alloc_bytes, frees, free_bytes).  An allocation is its
 *              allocs sample then its alloc_bytes sample (same time,
 *              thread, node); a free repeats its allocation's weights and
 *              stack as frees, free_bytes.  A reader older than it skips
 *              it and shows the CPU profile alone.
 *              Metric bits 5 and 6 (written once, when the recording
 *              ends) are a sampled block that was never freed: its count
 *              and byte weights, at its allocation's time, thread and
 *              stack; never SAME_VALUE, and outside the delta state of
 *              values.  They repeat no weight (the block's allocation
 *              was written already): they say which allocations are
 *              still live and how old, for the leak view; META
 *              heap_live_blocks, written in the same flush before them,
 *              says how many (a cut file has fewer).  Readers
 *              before them drop them as samples of an unknown metric.
 *  15 TASK_EVENT v t_ns, v pid, v tid, v kind (0 fork, 1 exec, 2 exit),
 *              v thread + 1 (0: none): a task's start, exec or end as the
 *              kernel recorded it, with the thread identity it starts or
 *              ends (struct prof_task_event), after that THREAD record.
 *              Older readers skip it.
 *
 * WRITING ORDER.  Each flush appends the definitions added since the last
 * flush (strings, modules, frames, nodes, threads, then changed threads,
 * meta, changed RESOURCES and new TIMELINE points), then the
 * buffered SAMPLES records (at most PD_SAMPLES_CHUNK payload bytes each),
 * then a SUMMARY; close appends END.  Definitions thus always precede the
 * samples that use them.
 *
 * CUT FILES.  A file cut at any byte (SIGKILL, full disk, a partial copy)
 * reads back every sample whose bytes precede the cut: every whole record,
 * and inside a cut SAMPLES record every whole sample (samples are
 * self-delimiting varints decoded in order, and a sample cut short is at
 * most PD_SAMPLE_MAX_BYTES long, so it is told apart from corruption).
 * RESOURCES and TIMELINE records are small and read whole: each one whose
 * last byte precedes the cut is used.  What is lost is the one sample or
 * record the cut falls in, and whatever the recorder had not yet flushed.
 * The reader marks such a file truncated; without an END it is incomplete.
 */
#include "format-priv.h"
#include <string.h>

void prof_data_put_record(struct strbuf *out, unsigned type, const void *payload, size_t len)
{
	sb_addch(out, (char)type);
	pd_put(out, len);
	sb_add(out, payload, len);
}

void prof_data_put_header(struct strbuf *out)
{
	sb_add(out, PD_MAGIC, PD_MAGIC_LEN);
	pd_put(out, PD_VERSION);
}

bool prof_data_has_magic(const void *buf, size_t len)
{
	return len >= PD_MAGIC_LEN && !memcmp(buf, PD_MAGIC, PD_MAGIC_LEN);
}
