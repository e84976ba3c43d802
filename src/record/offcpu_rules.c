/*
 * offcpu_rules.c - the rules of off-CPU recording that need no events
 * (include/prof/offcpu.h): which state an interval was in, from the
 * switch-out's prev_state and its kernel stack; how the sampled mode
 * shares a class's exact time among its sampled intervals (weight x ns,
 * Horvitz-Thompson, docs/offcpu.md) and when a window has sampled enough;
 * and the BPF filter's stale rule replayed.  Kept apart from offcpu.c,
 * which opens the events and runs them, so that they are unit-tested
 * alone (tests/unit/offcpu.c).
 *
 *  - The estimator, per thread, class (preempted, sleep, I/O wait, other D state) and window (of
 *    its intervals: at least OFFCPU_WINDOW_NS, and up to
 *    OFFCPU_WINDOW_MAX_NS until the weighted total's estimated relative
 *    variance is OFFCPU_WINDOW_CV2 or less): the class's exact time
 *    is shared among its sampled intervals in proportion to weight x ns,
 *    the weight being 1/p of the rule that kept it (stale: 1, random:
 *    period).  Weighted by 1/p the sampled ns are an unbiased estimate of
 *    each stack's ns (Horvitz-Thompson: p is fixed before the interval
 *    is, by the thread's past only), and the ratio keeps the class total
 *    exact.  Its error is that of a ratio estimate over the window's
 *    random samples (docs/offcpu.md), whose bias is of the order of that
 *    relative variance: hence windows that last until it is small.  A class with time and no sample in
 *    the window waits for the next window; at the thread's end it goes
 *    to "[stack not sampled]".
 */
#include "prof/offcpu.h"
#include <math.h>
#include <string.h>

/* prev_state bits as the tracepoint reports them (TASK_REPORT). */
#define TS_UNINTERRUPTIBLE 0x2
#define TS_DEAD_MASK (0x10 | 0x20)	/* X, Z: the thread is exiting */
#define TS_REPORT_MASK 0xff		/* above: TASK_REPORT_MAX = preempted */

bool prof_offcpu_is_io_function(const char *f)
{
	static const char *const prefixes[] = {
		"io_schedule", "folio_wait_bit", "folio_wait_writeback", "wait_on_page_bit",
		"__folio_lock", "__lock_page", "bit_wait_io", "__wait_on_buffer", "blk_",
		"jbd2_", "submit_bio_wait", "filemap_fdatawait", "file_write_and_wait",
		"do_fsync", "vfs_fsync", "__x64_sys_fdatasync", "__x64_sys_fsync",
		"xfs_", "btrfs_", "nfs_",
	};

	for (size_t i = 0; i < ARRAY_SIZE(prefixes); i++)
		if (!strncmp(f, prefixes[i], strlen(prefixes[i])))
			return true;
	return !strncmp(f, "ext4_", 5) && strstr(f, "sync");
}

/* Does the kernel part of the stack (innermost frames) wait on I/O? */
bool prof_offcpu_kernel_stack_in_io(const struct prof_profile *p, uint32_t node)
{
	for (; node && node < p->nodes.n; node = p->nodes.v[node].parent) {
		const struct prof_frame *f = &p->frames.v[p->nodes.v[node].frame];
		if (f->kind != PROF_FRAME_KERNEL)
			break;
		if (prof_offcpu_is_io_function(prof_str(p, f->func)))
			return true;
	}
	return false;
}

/* PROF_METRIC_COUNT: not an interval to charge (the thread is exiting). */
enum prof_metric prof_offcpu_classify(uint64_t prev_state, bool kernel_stack_in_io)
{
	uint64_t st = prev_state & TS_REPORT_MASK;

	if (st == 0)	/* TASK_RUNNING, or TASK_REPORT_MAX (the "+" of R+) */
		return PROF_M_PREEMPT_NS;
	if (st & TS_DEAD_MASK)
		return PROF_METRIC_COUNT;
	if (st & TS_UNINTERRUPTIBLE)
		return kernel_stack_in_io ? PROF_M_IOWAIT_NS : PROF_M_UNINT_NS;
	return PROF_M_SLEEP_NS;	/* S, I (idle), T/t (stopped), P (parked) */
}

void prof_offcpu_share(uint64_t exact, struct prof_offcpu_part *parts, size_t n)
{
	double ht = 0, acc = 0;
	uint64_t done = 0;

	for (size_t i = 0; i < n; i++)
		ht += (double)parts[i].weight * (double)parts[i].ns;
	for (size_t i = 0; i < n; i++) {
		if (ht > 0)
			acc += (double)exact * ((double)parts[i].weight * (double)parts[i].ns / ht);
		else	/* every sampled interval 0 ns long: shared evenly */
			acc += (double)exact / (double)n;
		parts[i].share = (uint64_t)llround(acc) - done;
		done += parts[i].share;
	}
}

double prof_offcpu_cv2(const struct prof_offcpu_part *parts, size_t n)
{
	double ht = 0, var = 0;

	for (size_t i = 0; i < n; i++) {
		double w = parts[i].weight, y = (double)parts[i].ns;
		ht += w * y;
		var += (w * w - w) * y * y;	/* (1 - p) / p^2 y^2, p = 1 / w */
	}
	return ht > 0 ? var / (ht * ht) : INFINITY;
}

bool prof_offcpu_stale_replay(struct prof_offcpu_stale *st, uint64_t t, int cls, uint64_t tau)
{
	if ((st->seen & 1u << cls) && t - st->last[cls] < tau)
		return false;
	st->seen |= (uint8_t)(1u << cls);
	st->last[cls] = t;
	return true;
}
