/*
 * replay.h - the one replay engine of perf records (src/replay/replay.c),
 * perf's `struct tool` seam: live recording (src/record/session.c drains
 * the kernel rings) and perf.data import (src/perfdata/import.c hands out
 * the file's rounds) feed it the same records, and it alone gives them
 * their meaning: per-process address spaces (FORK copies, COMM-exec
 * clears, MMAP/MMAP2 fill), thread identities (an exec starts a new one),
 * and for every SAMPLE the kernel + user frames (callchain or DWARF
 * unwind of the stack copy), symbolized into a trie node.
 *
 * What happens with a resolved sample, a LOST count or a context switch
 * is up to the consumers registered on the engine: the prof.data writer
 * (record), the profile's aggregates (perf.data import), off-CPU pairing
 * (src/record/offcpu.c), resource tracking (src/record/timeline.c).  Data
 * flows one way: drivers -> engine -> consumers -> a sink; no consumer
 * calls back into a driver.
 */
#ifndef PROF_REPLAY_H
#define PROF_REPLAY_H

#include "prof/model.h"
#include "prof/perf.h"
#include "prof/unwind.h"

struct prof_replay;

struct prof_replay_config {
	struct prof_profile *p;		/* frames, nodes and threads go here */
	enum prof_unwinder_kind unwinder;	/* for samples with a stack copy */
	/*
	 * Records of running processes (prof record): a pid first seen gets
	 * its maps and thread names from /proc, prof's own records are
	 * dropped, and a process's address space is freed at the end of the
	 * batch in which its last known thread exited.  Otherwise (a file)
	 * nothing is read from /proc and spaces live until the end.
	 */
	bool live;
	/* The kernel release the records come from (NULL: this one); kernel
	 * frames are symbolized with this machine's kallsyms, so a
	 * different one is warned about once. */
	const char *kernel_release;
	/* The build-id the recording names for a mapped file ("" or NULL if
	 * none; perf.data keeps them in its header): a mapping is never
	 * symbolized with a file whose build-id differs.  May be NULL. */
	const char *(*build_id_of)(void *arg, const char *path);
	void *build_id_arg;
	/* Live only: where PROF_RECORD_PYSTACK records (include/prof/python.h)
	 * name their code objects; their frames are spliced into the native
	 * stacks of the samples they precede.  NULL: no Python frames. */
	struct prof_python *python;
};

/* How the Python frames of the samples went (prof_replay_python_stats). */
struct prof_pysplice_stats {
	uint64_t samples;	/* samples of CPython threads with their Python frames read */
	uint64_t merged;	/* ... spliced into the native stack */
	uint64_t mismatched;	/* ... whose chain no longer matched the native stack */
	uint64_t unread;	/* ... whose frames could not be read */
};

/* A sample turned into frames: what consumers see. */
struct prof_replay_sample {
	const struct prof_perf_sample *s;
	const void *event;		/* the driver's tag for the sample's event */
	uint32_t thread, node;		/* profile thread and trie node */
	bool complete;			/* the stack reached its outermost frame */
	const uint64_t *upcs;		/* the unwound user pcs (DWARF), innermost first */
	size_t n_upcs;
	const struct perf_event_attr *attr;
};

/* A context switch record, its thread resolved. */
struct prof_replay_switch {
	const struct prof_perf_sample_id *id;
	uint32_t thread;		/* profile thread (switch-outs only, else PROF_NONE) */
	bool out;			/* the switch-out half */
	bool preempt;			/* out while runnable (PERF_RECORD_MISC_SWITCH_OUT_PREEMPT) */
};

/* Consumer callbacks; any may be NULL.  event is the tag the driver gave
 * with the record (which event / ring it came from). */
struct prof_replay_ops {
	void (*sample)(void *arg, const struct prof_replay_sample *rs);
	void (*mmap)(void *arg, const struct prof_perf_mmap2 *m);
	/* FORK (exit false) and EXIT records, after the engine applied them. */
	void (*task)(void *arg, const struct prof_perf_task *t, bool exit);
	/* LOST (kernel ring full) or LOST_SAMPLES; type is the record type. */
	void (*lost)(void *arg, const void *event, uint32_t type, uint64_t time, uint64_t n);
	/* PERF_RECORD_SWITCH / SWITCH_CPU_WIDE. */
	void (*context_switch)(void *arg, const void *event, const struct prof_replay_switch *sw);
	/* End of a batch (a drain pass, a perf.data round), while the
	 * address spaces of processes that exited in it still exist. */
	void (*batch_end)(void *arg);
};

/* Where consumers put weighted samples (the prof.data writer's or the
 * profile's aggregates); the signature of prof_writer_sample. */
struct prof_replay_sink {
	void (*add)(void *arg, uint64_t time, uint32_t thread, uint32_t node,
		    enum prof_metric metric, uint64_t value, unsigned flags);
	void *arg;
};

struct prof_replay *prof_replay_new(const struct prof_replay_config *cfg);
void prof_replay_free(struct prof_replay *rp);
/* Consumers are called in the order they were added. */
void prof_replay_add_consumer(struct prof_replay *rp, const struct prof_replay_ops *ops, void *arg);

/* A launched child, before its exec: an empty address space and a name. */
void prof_replay_add_child(struct prof_replay *rp, pid_t pid, const char *comm);
/* An attached process: thread names and current maps from /proc.
 * 0, or -ESRCH when it is gone. */
int prof_replay_add_process(struct prof_replay *rp, pid_t pid);
/* From now on only the records of the processes keep, and of the
 * processes they fork (from the FORK records, or /proc's parent links for
 * one seen before its FORK), are replayed; the rest are dropped as prof's
 * own are.  skip: processes running now that are not kept though their
 * parent is (descendants without --children).  For live events per CPU
 * that serve a recording of some processes (src/record/target.c). */
void prof_replay_only(struct prof_replay *rp, const pid_t *keep, size_t nkeep, const pid_t *skip,
		      size_t nskip);
/* Are process pid's records replayed (always, without prof_replay_only)?
 * For what reaches a consumer by another way than the records (the
 * off-CPU accountant's totals). */
bool prof_replay_wanted(struct prof_replay *rp, pid_t pid);

enum {
	PROF_REPLAY_USED = 0,
	PROF_REPLAY_UNUSED = 1,	/* a record kind the engine has no use for */
};
/*
 * Feeds one record of the event tagged `event` whose layout attr gives.
 * Returns PROF_REPLAY_USED (also for prof's own, dropped, records),
 * PROF_REPLAY_UNUSED, or -EINVAL when a sample does not decode.
 */
int prof_replay_record(struct prof_replay *rp, const struct perf_event_attr *attr,
		       const void *event, const struct perf_event_header *h);
/* A sample already decoded, laid out as attr says (one the recorder made
 * from another source than a perf ring: the off-CPU accountant's).  Its
 * stack's trie node, PROF_NONE for a sample of a process not recorded. */
uint32_t prof_replay_sample(struct prof_replay *rp, const struct perf_event_attr *attr, const void *event,
			    const struct prof_perf_sample *s);
/* The last sample's DWARF unwind, with the stack words it read (see
 * prof_unwind_reads), or NULL when it unwound no stack copy. */
const struct prof_unwind_result *prof_replay_unwound(const struct prof_replay *rp);
/* Whether the last sample was of an image its process has since left by
 * exec (timed before an exec replayed ahead of it): what its stack shows
 * holds for that image only. */
bool prof_replay_before_exec(const struct prof_replay *rp);
/* One live event's rings fed to the engine by prof_perf_drain_merged:
 * prof_replay_source_fn with a struct prof_replay_source as its ctx. */
struct prof_replay_source {
	struct prof_replay *rp;
	struct prof_perf *pf;
};
int prof_replay_source_fn(void *ctx, const struct perf_event_header *h);
/* The profile thread of tid in process pid (live: named from /proc
 * when new), for a consumer that charges a thread no record named. */
uint32_t prof_replay_thread(struct prof_replay *rp, pid_t pid, pid_t tid);
/* Ends a batch: consumers' batch_end, then exited processes are freed. */
void prof_replay_batch_end(struct prof_replay *rp);

/* The most address spaces alive at the end of a batch, and how many were
 * freed (exit, exec replaced, or found gone: live only). */
void prof_replay_space_stats(const struct prof_replay *rp, size_t *peak_live, size_t *freed);
/* The Python splice's counts (all 0 without cfg.python). */
void prof_replay_python_stats(const struct prof_replay *rp, struct prof_pysplice_stats *st);
/* Processes seen (for the summary line). */
size_t prof_replay_processes(const struct prof_replay *rp);
/* p->samples, samples_truncated, start_ns and end_ns for one sample. */
void prof_replay_count_sample(struct prof_profile *p, uint64_t time, bool complete);

/*
 * The symbolizer (src/replay/symbolize.c) interns frames into the profile
 * it was created for and caches by (elf, address), so each unique address
 * is resolved once no matter how many samples hit it.
 */
struct prof_symbolizer;
struct prof_symbolizer *prof_symbolizer_new(struct prof_profile *p);
void prof_symbolizer_free(struct prof_symbolizer *s);
/*
 * Resolves a user address into frames, innermost first: inlined callees
 * come before the function they were inlined into.  is_return_addr: pc is a
 * return address (every frame but the leaf), so pc-1 is looked up.
 * Returns the number of frame ids written to out (>= 1 when max >= 1):
 * unresolvable addresses become "[unknown]"/"[anon]"/"module+0xoff" frames.
 */
size_t prof_symbolize_user(struct prof_symbolizer *s, struct prof_addrspace *as,
			   uint64_t pc, bool is_return_addr, uint32_t *out, size_t max);
/* prof_sym_prewarm (prof/symbol.h), before sampling starts. */
void prof_symbolizer_prewarm(struct prof_symbolizer *s);
/* Kernel address via /proc/kallsyms (loaded once); 1 frame. */
size_t prof_symbolize_kernel(struct prof_symbolizer *s, uint64_t pc, uint32_t *out, size_t max);

#endif
