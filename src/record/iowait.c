/*
 * iowait.c - I/O wait of one run of a command for `prof stat` where delay
 * accounting is off (kernel.task_delayacct=0), measured the way `prof
 * record` measures it: the sched:sched_switch tracepoint on every
 * switch-out of the command's threads and descendants, and the thread's
 * next switch-in (PERF_RECORD_SWITCH).  An interval whose switch-out left
 * in D state with an I/O wait function on the kernel stack is I/O wait.
 *
 * Design notes:
 *  - The events, their tracepoint layout and the classification are
 *    src/record/offcpu.c's (PROF_OFFCPU_STATE: kernel callchain only, no
 *    user stacks), and the pairing of switch-outs with switch-ins is
 *    src/record/switchpair.c's; this file only reads the rings and adds up
 *    the I/O-wait intervals, without a profile or a recorder.
 *  - A reader thread drains the rings while the command runs (every
 *    50 ms, or when a ring reaches its watermark), so memory stays flat
 *    however long the command runs; what the kernel still drops is
 *    counted in lost, and the sum is then a lower bound.
 *  - Kernel addresses are named through the symbolizer (kallsyms) into a
 *    scratch profile; io_pc caches each address's verdict (1 I/O, 2 not).
 *  - Only measured time is counted: an interval whose switch-out sample
 *    was lost is counted only if the thread's last sampled voluntary
 *    switch was I/O wait (the pairing's guess), and lost samples are
 *    reported.
 */
#include "prof/offcpu.h"
#include "prof/switchpair.h"
#include "prof/symbol.h"
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

struct prof_iowait {
	struct prof_perf main;		/* configuration only: never opened */
	struct prof_offcpu *oc;
	struct prof_profile scratch;	/* kernel frame names */
	struct prof_symbolizer *sym;
	struct u64map io_pc;
	struct prof_switchpair *sp;
	uint64_t io_ns, lost;
	pthread_t reader;
	bool reading;
	int stop;			/* atomic: the reader thread ends */
};

/* --- the intervals --------------------------------------------------------------- */

/* Is this kernel address in an I/O wait function (offcpu.c's list)? */
static bool io_address(struct prof_iowait *iw, uint64_t pc)
{
	uint64_t verdict;
	uint32_t frame;

	if (u64map_get(&iw->io_pc, pc, &verdict))
		return verdict == 1;
	prof_symbolize_kernel(iw->sym, pc, &frame, 1);
	const struct prof_frame *f = &iw->scratch.frames.v[frame];
	bool io = prof_offcpu_is_io_function(prof_str(&iw->scratch, f->func));
	u64map_put(&iw->io_pc, pc, io ? 1 : 2);
	return io;
}

static bool kernel_chain_in_io(struct prof_iowait *iw, const struct prof_perf_sample *s)
{
	for (uint64_t i = 0; i < s->nr_callchain; i++) {
		uint64_t pc = prof_perf_callchain(s, i);
		if (pc < (uint64_t)PERF_CONTEXT_MAX && io_address(iw, pc))
			return true;
	}
	return false;
}

static void charge(void *arg, const struct prof_switch_interval *iv, const struct prof_switch_sample *s,
		   enum prof_metric m)
{
	struct prof_iowait *iw = arg;

	if (m == PROF_M_IOWAIT_NS)
		iw->io_ns += iv->t_in - iv->t_out;
}

static void switched_out(struct prof_iowait *iw, const struct prof_perf_sample *s)
{
	enum prof_metric m = prof_offcpu_classify(prof_offcpu_prev_state(iw->oc, s),
						  kernel_chain_in_io(iw, s));

	prof_switchpair_sample(iw->sp, s->tid, &(struct prof_switch_sample){ s->time, 0, 0, PROF_NONE, (uint8_t)m });
}

static void on_switch(struct prof_iowait *iw, const struct perf_event_header *h)
{
	struct prof_perf_sample_id id;
	uint16_t misc = prof_perf_record_misc(h);

	if (prof_perf_parse_id(&prof_offcpu_switch_perf(iw->oc)->attr, h, &id) < 0)
		return;
	if (misc & PERF_RECORD_MISC_SWITCH_OUT)
		prof_switchpair_out(iw->sp, id.tid, id.pid, 0, id.time,
				    (misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT) != 0);
	else
		prof_switchpair_in(iw->sp, id.tid, id.time);
}

static int on_record(void *ctx, const struct perf_event_header *h)
{
	struct prof_iowait *iw = ctx;
	struct prof_perf_sample s;
	struct prof_perf_task tk;

	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		if (prof_perf_parse_sample(&prof_offcpu_perf(iw->oc)->attr, h, &s) == 0)
			switched_out(iw, &s);
		break;
	case PERF_RECORD_SWITCH:
		on_switch(iw, h);
		break;
	case PERF_RECORD_EXIT:
		if (prof_perf_parse_task(h, &tk) == 0)
			prof_switchpair_exit(iw->sp, tk.tid, tk.time);
		break;
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES:
		iw->lost += prof_perf_lost_count(h);
		break;
	}
	return 0;
}

/* Stacks (switch-outs) first, then the switch records: a switch-in read
 * now mostly finds its switch-out's sample already classified. */
static void drain_both(struct prof_iowait *iw)
{
	prof_perf_drain(prof_offcpu_perf(iw->oc), on_record, iw);
	prof_perf_drain(prof_offcpu_switch_perf(iw->oc), on_record, iw);
	prof_switchpair_prune(iw->sp);
}

static void *reader_main(void *arg)
{
	struct prof_iowait *iw = arg;
	while (!__atomic_load_n(&iw->stop, __ATOMIC_ACQUIRE)) {
		prof_perf_poll(prof_offcpu_perf(iw->oc), 50);
		drain_both(iw);
	}
	return NULL;
}

/* --- lifetime ------------------------------------------------------------------------- */

static void iowait_free(struct prof_iowait *iw)
{
	if (iw->reading) {
		__atomic_store_n(&iw->stop, 1, __ATOMIC_RELEASE);
		pthread_join(iw->reader, NULL);
	}
	prof_offcpu_free(iw->oc);
	if (iw->sym)
		prof_symbolizer_free(iw->sym);
	prof_profile_free(&iw->scratch);
	u64map_free(&iw->io_pc);
	prof_switchpair_free(iw->sp);
	prof_perf_close(&iw->main);
	free(iw);
}

/* The off-CPU events as `prof record -g none` sets them up, not opened. */
static struct prof_iowait *iowait_new(char *why, size_t len)
{
	struct prof_iowait *iw = xcalloc(1, sizeof(*iw));
	struct prof_perf_config cfg = {
		.event = prof_perf_event_find("cpu-clock"), .freq = 1, .callgraph = PROF_CG_NONE,
		.ring_pages = 1024, .enable_on_exec = true,
	};

	if (prof_perf_init(&iw->main, &cfg) < 0) {
		snprintf(why, len, "bad event configuration");
		free(iw);
		return NULL;
	}
	if (!(iw->oc = prof_offcpu_new(&iw->main, PROF_OFFCPU_STATE, 1, why, len))) {
		prof_perf_close(&iw->main);
		free(iw);
		return NULL;
	}
	prof_profile_init(&iw->scratch);
	iw->sp = prof_switchpair_new(charge, iw);
	return iw;
}

int prof_iowait_probe(char *why, size_t len)
{
	struct prof_iowait *iw = iowait_new(why, len);

	if (!iw)
		return -ENOTSUP;
	iowait_free(iw);
	return 0;
}

struct prof_iowait *prof_iowait_start(pid_t pid, char *why, size_t len)
{
	struct prof_iowait *iw = iowait_new(why, len);
	int ret;

	if (!iw)
		return NULL;
	if ((ret = prof_offcpu_open_task(iw->oc, pid)) < 0) {
		snprintf(why, len, "cannot sample sched:sched_switch on the command: %s", strerror(-ret));
		iowait_free(iw);
		return NULL;
	}
	iw->sym = prof_symbolizer_new(&iw->scratch);
	uint32_t frame;	/* loads kallsyms now, not on the reader thread during the run */
	prof_symbolize_kernel(iw->sym, 0, &frame, 1);
	if ((ret = thread_start_nosignals(&iw->reader, reader_main, iw)) != 0) {
		snprintf(why, len, "cannot start a reader thread: %s", strerror(ret));
		iowait_free(iw);
		return NULL;
	}
	iw->reading = true;
	return iw;
}

uint64_t prof_iowait_finish(struct prof_iowait *iw, uint64_t *lost)
{
	uint64_t ns;

	__atomic_store_n(&iw->stop, 1, __ATOMIC_RELEASE);
	pthread_join(iw->reader, NULL);
	iw->reading = false;
	prof_offcpu_disable(iw->oc);
	drain_both(iw);
	prof_switchpair_finish(iw->sp, 0);
	ns = iw->io_ns;
	*lost = iw->lost;
	iowait_free(iw);
	return ns;
}
