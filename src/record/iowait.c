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
 *    src/perf/offcpu.c's (prof_offcpu_new with a "-g none" configuration:
 *    kernel callchain only, no user stacks); this file only reads their
 *    rings and adds up intervals, without a profile or a recorder.
 *  - A reader thread drains the rings while the command runs (every
 *    50 ms, or when a ring reaches its watermark), so memory stays flat
 *    however long the command runs; what the kernel still drops is
 *    counted in lost, and the sum is then a lower bound.
 *  - Kernel addresses are named through the symbolizer (kallsyms) into a
 *    scratch profile; io_pc caches each address's verdict (1 I/O, 2 not).
 *  - The switch-outs (samples, one ring) and switch-ins (switch records,
 *    their own ring) are paired per thread by time (switched_in); an
 *    interval with no switch-in (the thread exited) is not counted: only
 *    measured time is.
 */
#include "prof/offcpu.h"
#include "prof/resource.h"
#include "prof/symbol.h"
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* A switch-out's sample, waiting for the thread's next switch-in. */
struct switch_out {
	uint64_t time;
	uint32_t tid;
	bool io;
};

struct res_iowait {
	struct prof_perf main;		/* configuration only: never opened */
	struct prof_offcpu *oc;
	struct prof_profile scratch;	/* kernel frame names */
	struct prof_symbolizer *sym;
	struct u64map io_pc;
	VEC(struct switch_out) outs;	/* classified switch-outs not yet paired */
	uint64_t io_ns, lost;
	pthread_t reader;
	bool reading;
	int stop;			/* atomic: the reader thread ends */
};

/* --- the intervals --------------------------------------------------------------- */

/* Is this kernel address in an I/O wait function (offcpu.c's list)? */
static bool io_address(struct res_iowait *iw, uint64_t pc)
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

static bool kernel_chain_in_io(struct res_iowait *iw, const struct prof_perf_sample *s)
{
	for (uint64_t i = 0; i < s->nr_callchain; i++) {
		uint64_t pc = prof_perf_callchain(s, i);
		if (pc < (uint64_t)PERF_CONTEXT_MAX && io_address(iw, pc))
			return true;
	}
	return false;
}

static void switched_out(struct res_iowait *iw, const struct prof_perf_sample *s)
{
	enum prof_metric m = prof_offcpu_classify(prof_offcpu_prev_state(iw->oc, s),
						  kernel_chain_in_io(iw, s));

	VEC_PUSH(&iw->outs, ((struct switch_out){ s->time, s->tid, m == PROF_M_IOWAIT_NS }));
}

/*
 * The samples and the switch records come from two rings drained one
 * after the other, so a drain may hold many switch-outs of a thread
 * before its switch-ins: a switch-in at t pairs with the thread's latest
 * switch-out before t, and older ones of the thread are done with.  A
 * switch-out whose sample arrives after its switch-in was read is not
 * charged (its time is unknown here).
 */
static void switched_in(struct res_iowait *iw, uint32_t tid, uint64_t t)
{
	const struct switch_out *last = NULL;
	size_t k = 0;

	for (size_t i = 0; i < iw->outs.n; i++) {
		const struct switch_out *o = &iw->outs.v[i];
		if (o->tid == tid && o->time < t) {
			if (!last || o->time > last->time)
				last = o;
		}
	}
	if (last && last->io)
		iw->io_ns += t - last->time;
	for (size_t i = 0; i < iw->outs.n; i++)
		if (iw->outs.v[i].tid != tid || iw->outs.v[i].time >= t)
			iw->outs.v[k++] = iw->outs.v[i];
	iw->outs.n = k;
}

static int on_record(void *ctx, const struct perf_event_header *h)
{
	struct res_iowait *iw = ctx;
	struct prof_perf_sample s;
	struct prof_perf_sample_id id;

	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		if (prof_perf_parse_sample(&prof_offcpu_perf(iw->oc)->attr, h, &s) == 0)
			switched_out(iw, &s);
		break;
	case PERF_RECORD_SWITCH:
		if (!(h->misc & PERF_RECORD_MISC_SWITCH_OUT) && prof_perf_parse_id(&prof_offcpu_switch_perf(iw->oc)->attr, h, &id) == 0)
			switched_in(iw, id.tid, id.time);
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
static void drain_both(struct res_iowait *iw)
{
	prof_perf_drain(prof_offcpu_perf(iw->oc), on_record, iw);
	prof_perf_drain(prof_offcpu_switch_perf(iw->oc), on_record, iw);
}

static void *reader_main(void *arg)
{
	struct res_iowait *iw = arg;
	while (!__atomic_load_n(&iw->stop, __ATOMIC_ACQUIRE)) {
		prof_perf_poll(prof_offcpu_perf(iw->oc), 50);
		drain_both(iw);
	}
	return NULL;
}

/* --- lifetime ------------------------------------------------------------------------- */

static void iowait_free(struct res_iowait *iw)
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
	VEC_FREE(&iw->outs);
	prof_perf_close(&iw->main);
	free(iw);
}

/* The off-CPU events as `prof record -g none` sets them up, not opened. */
static struct res_iowait *iowait_new(char *why, size_t len)
{
	struct res_iowait *iw = xcalloc(1, sizeof(*iw));
	struct prof_perf_config cfg = {
		.event = prof_perf_event_find("cpu-clock"), .freq = 1, .callgraph = PROF_CG_NONE,
		.ring_pages = 1024, .enable_on_exec = true,
	};

	if (prof_perf_init(&iw->main, &cfg) < 0) {
		snprintf(why, len, "bad event configuration");
		free(iw);
		return NULL;
	}
	if (!(iw->oc = prof_offcpu_new(&iw->main, why, len))) {
		prof_perf_close(&iw->main);
		free(iw);
		return NULL;
	}
	prof_profile_init(&iw->scratch);
	return iw;
}

int res_iowait_probe(char *why, size_t len)
{
	struct res_iowait *iw = iowait_new(why, len);

	if (!iw)
		return -ENOTSUP;
	iowait_free(iw);
	return 0;
}

struct res_iowait *res_iowait_start(pid_t pid, char *why, size_t len)
{
	struct res_iowait *iw = iowait_new(why, len);
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

uint64_t res_iowait_finish(struct res_iowait *iw, uint64_t *lost)
{
	uint64_t ns;

	__atomic_store_n(&iw->stop, 1, __ATOMIC_RELEASE);
	pthread_join(iw->reader, NULL);
	iw->reading = false;
	prof_offcpu_disable(iw->oc);
	drain_both(iw);
	ns = iw->io_ns;
	*lost = iw->lost;
	iowait_free(iw);
	return ns;
}
