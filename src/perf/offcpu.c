/*
 * offcpu.c - off-CPU time with stacks during `prof record` (see
 * include/prof/offcpu.h): the sched:sched_switch tracepoint, sampled with
 * period 1 on every profiled thread (inherit=1, one event per CPU, like the
 * CPU event), gives the switch-out stack and prev_state; the same events
 * carry attr.context_switch=1, so the thread's next switch-in arrives as a
 * PERF_RECORD_SWITCH.  The interval between the two is charged to the
 * switch-out stack.
 *
 * Design notes / invariants:
 *  - The events live in their own prof_perf (own rings), because their
 *    samples carry PERF_SAMPLE_RAW and the CPU event's do not: one ring
 *    per sample layout, no PERF_SAMPLE_IDENTIFIER needed.  The driver
 *    feeds these rings to the replay engine after the CPU event's, tagged
 *    with &oc->pf; this file is a consumer of the engine: it sees the
 *    switch-out samples already resolved into (thread, node), against the
 *    address spaces the CPU event's MMAP2/COMM/FORK/EXIT built, and puts
 *    the charged intervals into a sink (the prof.data writer).
 *  - pending maps tid -> index + 1 into pend; a thread has at most one
 *    open switch-out.  A switch-in without an open switch-out (recording
 *    started while it was blocked) charges nothing; a switch-out never
 *    followed by a switch-in (thread exited, recording ended) charges
 *    nothing: only measured intervals are reported.
 *  - The offset and size of prev_state come from the tracepoint's format
 *    file, never hard-coded.
 *  - io keeps the I/O-wait intervals (pid, start, end) until the timeline
 *    sampler has used them for its I/O-wait% (prof_offcpu_io_prune).
 */
#include "prof/offcpu.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* prev_state bits as the tracepoint reports them (TASK_REPORT). */
#define TS_INTERRUPTIBLE 0x1
#define TS_UNINTERRUPTIBLE 0x2
#define TS_DEAD_MASK (0x10 | 0x20)	/* X, Z: the thread is exiting */
#define TS_REPORT_MASK 0xff		/* above: TASK_REPORT_MAX = preempted */

struct pend {
	uint64_t t_out;
	uint32_t thread, node, pid;
	uint8_t metric;		/* enum prof_metric of the interval */
	bool open;
};

struct io_interval {
	uint64_t start, end;
	uint32_t pid;
};

struct prof_offcpu {
	struct prof_perf pf;
	struct prof_perf_event_desc desc;
	uint32_t state_off, state_size;	/* of prev_state in the raw data */
	const struct prof_profile *p;	/* reads the kernel frames of a stack */
	struct prof_replay_sink sink;	/* where charged intervals go */
	VEC(struct pend) pend;
	struct u64map pending;
	VEC(struct io_interval) io;
	uint64_t lost;
};

/* "field:long prev_state;\toffset:32;\tsize:8;" -> 32, 8. */
static int parse_prev_state(const char *format, uint32_t *off, uint32_t *size)
{
	const char *l = strstr(format, " prev_state;");
	unsigned o, s;

	if (!l || !(l = strstr(l, "offset:")) || sscanf(l, "offset:%u;%*[ \t]size:%u;", &o, &s) != 2 ||
	    (s != 4 && s != 8))
		return -EINVAL;
	*off = o;
	*size = s;
	return 0;
}

/* Tracepoint id and prev_state layout; 0 or -errno with why filled. */
static int read_tracepoint(struct prof_offcpu *oc, char *why, size_t len)
{
	const char *root = prof_tracefs_root(NULL);
	char path[128];
	char *id, *fmt;
	int ret;

	if (!root && errno == EACCES) {
		snprintf(why, len, "tracefs is readable by root only (/sys/kernel/tracing is mode 0700), and raw sched_switch data needs root or CAP_PERFMON; run prof record as root");
		return -EACCES;
	}
	if (!root) {
		snprintf(why, len, "tracefs is not mounted and mounting it needs root (mount it: 'mount -t tracefs nodev /sys/kernel/tracing')");
		return -ENOENT;
	}
	snprintf(path, sizeof(path), "%s/events/sched/sched_switch/id", root);
	if (!(id = read_file(path, NULL))) {
		snprintf(why, len, "no sched:sched_switch tracepoint in %s", root);
		return -ENOENT;
	}
	snprintf(path, sizeof(path), "%s/events/sched/sched_switch/format", root);
	fmt = read_file(path, NULL);
	uint64_t v = strtoull(id, NULL, 10);
	ret = fmt && v ? parse_prev_state(fmt, &oc->state_off, &oc->state_size) : -EINVAL;
	free(id);
	free(fmt);
	if (ret < 0) {
		snprintf(why, len, "cannot parse %s (no prev_state field)", path);
		return ret;
	}
	oc->desc.config = v;
	return 0;
}

static void setup_attr(struct prof_offcpu *oc)
{
	struct perf_event_attr *a = &oc->pf.attr;

	a->freq = 0;
	a->sample_period = 1;		/* every switch-out */
	a->sample_type |= PERF_SAMPLE_RAW;
	a->exclude_kernel = 0;		/* the tracepoint fires in the kernel */
	a->mmap = a->mmap2 = a->comm = a->comm_exec = a->task = 0;	/* the CPU event has them */
	a->context_switch = 1;		/* PERF_RECORD_SWITCH: the switch-in */
	/* -g none: still the kernel chain, which tells I/O wait from other
	 * uninterruptible sleeps (no user frames then). */
	a->sample_type |= PERF_SAMPLE_CALLCHAIN;
	if (oc->pf.cfg.callgraph == PROF_CG_NONE)
		a->exclude_callchain_user = 1;
}

/* Can we open the event here (paranoid, CAP_PERFMON)?  On ourselves. */
static int probe(struct prof_offcpu *oc, char *why, size_t len)
{
	struct perf_event_attr a = oc->pf.attr;
	int fd;

	a.inherit = 0;
	a.enable_on_exec = 0;
	fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		snprintf(why, len, "cannot sample sched:sched_switch with raw data: %s (kernel.perf_event_paranoid=%d; raw tracepoint data needs root or CAP_PERFMON, or paranoid -1)",
			 strerror(e), prof_perf_paranoid());
		return -e;
	}
	close(fd);
	return 0;
}

struct prof_offcpu *prof_offcpu_new(const struct prof_perf *main, char *why, size_t len)
{
	struct prof_offcpu *oc = xcalloc(1, sizeof(*oc));
	struct prof_perf_config cfg = main->cfg;

	oc->desc = (struct prof_perf_event_desc){ "sched:sched_switch", PERF_TYPE_TRACEPOINT, 0, false };
	if (read_tracepoint(oc, why, len) < 0)
		goto fail;
	cfg.event = &oc->desc;
	cfg.freq = 1;
	cfg.ring_pages = MAX(64u, main->cfg.ring_pages / 4);
	if (prof_perf_init(&oc->pf, &cfg) < 0) {
		snprintf(why, len, "bad off-CPU event configuration");
		goto fail;
	}
	setup_attr(oc);
	if (probe(oc, why, len) < 0) {
		prof_perf_close(&oc->pf);
		goto fail;
	}
	return oc;
fail:
	free(oc);
	return NULL;
}

int prof_offcpu_open_task(struct prof_offcpu *oc, pid_t tid)
{
	return prof_perf_open_task(&oc->pf, tid);
}

void prof_offcpu_enable(struct prof_offcpu *oc) { prof_perf_enable(&oc->pf); }
void prof_offcpu_disable(struct prof_offcpu *oc) { prof_perf_disable(&oc->pf); }

void prof_offcpu_free(struct prof_offcpu *oc)
{
	if (!oc)
		return;
	if (oc->pf.rings)
		prof_perf_close(&oc->pf);
	VEC_FREE(&oc->pend);
	u64map_free(&oc->pending);
	VEC_FREE(&oc->io);
	free(oc);
}

uint64_t prof_offcpu_iowait_between(const struct prof_offcpu *oc, uint32_t pid,
				    uint64_t from, uint64_t to)
{
	uint64_t sum = 0;

	for (size_t i = 0; oc && i < oc->io.n; i++) {
		const struct io_interval *v = &oc->io.v[i];
		uint64_t a = MAX(v->start, from), b = MIN(v->end, to);
		if (v->pid == pid && b > a)
			sum += b - a;
	}
	return sum;
}

void prof_offcpu_io_prune(struct prof_offcpu *oc, uint64_t t)
{
	size_t k = 0;

	for (size_t i = 0; oc && i < oc->io.n; i++)
		if (oc->io.v[i].end >= t)
			oc->io.v[k++] = oc->io.v[i];
	if (oc)
		oc->io.n = k;
}

uint64_t prof_offcpu_lost(const struct prof_offcpu *oc)
{
	return oc ? oc->lost : 0;
}

/* --- classification ------------------------------------------------------- */

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

/* Does the kernel part of the stack (innermost frames) wait on I/O? */
static bool kernel_stack_in_io(const struct prof_profile *p, uint32_t node)
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

/* --- pairing ---------------------------------------------------------------- */

static uint64_t prev_state_of(const struct prof_offcpu *oc, const struct prof_perf_sample *s)
{
	uint64_t v = 0;

	if (!s->raw || (uint64_t)oc->state_off + oc->state_size > s->raw_size)
		return 0;
	if (oc->state_size == 8)
		memcpy(&v, s->raw + oc->state_off, 8);
	else {
		uint32_t v32;
		memcpy(&v32, s->raw + oc->state_off, 4);
		v = v32;
	}
	return v;
}

static struct pend *pend_of(struct prof_offcpu *oc, uint32_t tid, bool create)
{
	uint64_t v;

	if (u64map_get(&oc->pending, tid, &v))
		return &oc->pend.v[v - 1];
	if (!create)
		return NULL;
	VEC_PUSH(&oc->pend, ((struct pend){ 0 }));
	u64map_put(&oc->pending, tid, oc->pend.n);
	return &oc->pend.v[oc->pend.n - 1];
}

static void on_switch_out(void *arg, const struct prof_replay_sample *rs)
{
	struct prof_offcpu *oc = arg;
	const struct prof_perf_sample *s = rs->s;

	if (rs->event != &oc->pf)
		return;
	enum prof_metric m = prof_offcpu_classify(prev_state_of(oc, s),
						  kernel_stack_in_io(oc->p, rs->node));
	struct pend *pe = pend_of(oc, s->tid, true);
	*pe = (struct pend){ .t_out = s->time, .thread = rs->thread, .node = rs->node,
			     .pid = s->pid, .metric = (uint8_t)m, .open = m != PROF_METRIC_COUNT };
}

static void on_switch(void *arg, const void *event, const struct prof_perf_sample_id *id, bool out)
{
	struct prof_offcpu *oc = arg;
	struct pend *pe;

	if (event != &oc->pf || out || !(pe = pend_of(oc, id->tid, false)) || !pe->open)
		return;
	pe->open = false;
	if (id->time <= pe->t_out)
		return;
	uint64_t ns = id->time - pe->t_out;
	oc->sink.add(oc->sink.arg, pe->t_out, pe->thread, pe->node, PROF_M_OFFCPU_NS, ns, 0);
	oc->sink.add(oc->sink.arg, pe->t_out, pe->thread, pe->node, (enum prof_metric)pe->metric, ns, 0);
	if (pe->metric == PROF_M_IOWAIT_NS)
		VEC_PUSH(&oc->io, ((struct io_interval){ pe->t_out, id->time, pe->pid }));
}

static void on_lost(void *arg, const void *event, uint32_t type, uint64_t time, uint64_t n)
{
	struct prof_offcpu *oc = arg;

	if (event == &oc->pf)
		oc->lost += n;
}

static const struct prof_replay_ops offcpu_ops = {
	.sample = on_switch_out,
	.context_switch = on_switch,
	.lost = on_lost,
};

void prof_offcpu_attach(struct prof_offcpu *oc, struct prof_replay *rp,
			const struct prof_profile *p, const struct prof_replay_sink *sink)
{
	oc->p = p;
	oc->sink = *sink;
	prof_replay_add_consumer(rp, &offcpu_ops, oc);
}

struct prof_perf *prof_offcpu_perf(struct prof_offcpu *oc)
{
	return &oc->pf;
}
