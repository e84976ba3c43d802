/*
 * offcpu.c - off-CPU time with stacks during `prof record` (see
 * include/prof/offcpu.h).  Two events per profiled thread and CPU
 * (inherit=1, like the CPU event), each with its own rings:
 *  - the time ring: a dummy software event with attr.context_switch=1,
 *    whose only records are PERF_RECORD_SWITCH (32 bytes): the thread's
 *    switch-out (flagged preempted or not) and its next switch-in bound
 *    every off-CPU interval;
 *  - the stack ring: the sched:sched_switch tracepoint sampled with
 *    period 1, whose samples (kilobytes: stack copy, kernel callchain,
 *    prev_state in the raw data) give each interval its stack and state.
 * The kernel drops the big stack samples first when the reader falls
 * behind, and counts what it drops; the small switch records ride in
 * their own ring, drained first, so the time survives.  An interval
 * whose stack sample is gone is charged in full to a "[stack lost]"
 * frame: the time is right and the loss is visible.
 *
 * Design notes / invariants:
 *  - This file is a consumer of the replay engine: it sees switch-out
 *    samples already resolved into (thread, node) and switch records with
 *    their thread, and puts charged intervals into a sink.
 *  - The two rings are drained independently, so either may run ahead:
 *    per tid, closed intervals and stack samples wait in two FIFOs until
 *    match() can pair them (see there).  At the end every interval left
 *    is charged as lost.
 *  - A switch-in without a switch-out seen (recording started while the
 *    thread was blocked) charges nothing; a switch-out never followed by
 *    a switch-in (thread exited, recording ended) charges nothing: only
 *    measured intervals are reported.
 *  - The state of a lost stack: preempted when the switch record says so;
 *    otherwise S or D cannot be told apart without the sample, so it gets
 *    the state of the thread's last sampled voluntary switch (a thread
 *    blocking in fdatasync stays I/O wait, a sleeper stays sleep), sleep
 *    when none was sampled yet.
 *  - The offset and size of prev_state come from the tracepoint's format
 *    file, never hard-coded.
 *  - io keeps the I/O-wait intervals (pid, start, end) until the timeline
 *    sampler has used them for its I/O-wait% (prof_offcpu_io_prune).
 */
#include "prof/offcpu.h"
#include "prof/proc.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* 32-byte records, two per switch: 1 MiB per CPU holds 16k switches,
 * 160 ms at 100k switches/s on one CPU, time for a starved pump thread to
 * run (it is woken at a quarter).  256 KiB lost 0.2% of the records with
 * four pingpong pairs (100k switches/s) on a loaded 2-vCPU machine. */
#define OFFCPU_SWITCH_RING_PAGES 256

/* The user stack copied per switch sample.  Blocking stacks are shallow
 * next to CPU ones: PostgreSQL backends under pgbench, 8 KiB unwind
 * 99.9% of switch-out stacks to their outermost frame (docs/resources.md),
 * and the kernel reserves the full copy in the ring, so a smaller copy
 * fits four times more samples than the 32 KiB of the CPU event. */
#define OFFCPU_STACK_SIZE 8192

/* How long an exited tid waits for its last switch-out (see on_task). */
#define EXITED_WAIT_NS 1000000000ULL

/* prev_state bits as the tracepoint reports them (TASK_REPORT). */
#define TS_INTERRUPTIBLE 0x1
#define TS_UNINTERRUPTIBLE 0x2
#define TS_DEAD_MASK (0x10 | 0x20)	/* X, Z: the thread is exiting */
#define TS_REPORT_MASK 0xff		/* above: TASK_REPORT_MAX = preempted */

/* One off-CPU interval from the switch records. */
struct interval {
	uint64_t t_on;		/* the switch-in before it (0: not seen) */
	uint64_t t_out, t_in;
	uint32_t thread, pid;	/* profile thread at the switch-out */
	bool preempt;
};

/* One switch-out stack sample, resolved and classified. */
struct stack {
	uint64_t time;
	uint32_t thread, node;
	uint8_t metric;		/* enum prof_metric, PROF_METRIC_COUNT: exiting */
};

/* Per tid: the open interval, and the two FIFOs that wait to be paired. */
struct thr {
	struct interval open;
	bool is_open;
	uint64_t last_in;
	VEC(struct interval) ivs;
	size_t iv_head;
	VEC(struct stack) stacks;
	size_t st_head;
	uint8_t vol_metric;	/* of the last sampled voluntary switch */
};

static void thr_free(struct thr *t)
{
	VEC_FREE(&t->ivs);
	VEC_FREE(&t->stacks);
	free(t);
}

struct io_interval {
	uint64_t start, end;
	uint32_t pid;
};

struct prof_offcpu {
	struct prof_perf pf;		/* sched_switch samples: the stacks */
	struct prof_perf sw;		/* dummy event, context_switch=1: the time */
	struct prof_perf_event_desc desc;
	uint32_t state_off, state_size;	/* of prev_state in the raw data */
	struct prof_profile *p;		/* reads the kernel frames; gets [stack lost] */
	struct prof_replay_sink sink;	/* where charged intervals go */
	struct u64map by_tid;		/* tid -> struct thr * */
	struct u64map exited;		/* tid -> EXIT time, until its last switch-out */
	uint64_t last_time;		/* of the newest switch record */
	uint32_t lost_node;
	VEC(struct io_interval) io;
	uint64_t lost, stacks_lost, switches, switches_lost;
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
	/* -g none: still the kernel chain, which tells I/O wait from other
	 * uninterruptible sleeps (no user frames then). */
	a->sample_type |= PERF_SAMPLE_CALLCHAIN;
	if (oc->pf.cfg.callgraph == PROF_CG_NONE)
		a->exclude_callchain_user = 1;
}

/* A quarter of the CPU event's ring (-m), but room for at least two
 * samples of the largest size. */
static uint32_t stack_ring_pages(const struct prof_perf_config *cfg, uint32_t main_pages)
{
	uint32_t pages = main_pages / 4, need = 2 * (cfg->stack_size + 4096) / 4096;

	if (pages < need)
		pages = need;
	while (pages & (pages - 1))	/* round up to a power of two */
		pages += pages & -pages;
	return pages;
}

/* The time ring: a dummy event whose only records are the 32-byte
 * PERF_RECORD_SWITCH of the profiled threads, so that the big stack
 * samples can never crowd them out. */
static int setup_switch_event(struct prof_offcpu *oc, const struct prof_perf_config *main)
{
	static const struct prof_perf_event_desc dummy = { "dummy", PERF_TYPE_SOFTWARE,
							   PERF_COUNT_SW_DUMMY, false };
	struct prof_perf_config cfg = *main;
	struct perf_event_attr *a = &oc->sw.attr;

	cfg.event = &dummy;
	cfg.freq = 1;
	cfg.callgraph = PROF_CG_NONE;
	cfg.ring_pages = OFFCPU_SWITCH_RING_PAGES;
	if (prof_perf_init(&oc->sw, &cfg) < 0)
		return -EINVAL;
	a->freq = 0;
	a->sample_period = 1;
	a->mmap = a->mmap2 = a->comm = a->comm_exec = a->task = a->build_id = 0;
	a->context_switch = 1;
	return 0;
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
	cfg.stack_size = MIN(cfg.stack_size, OFFCPU_STACK_SIZE);
	cfg.ring_pages = stack_ring_pages(&cfg, main->cfg.ring_pages);
	if (prof_perf_init(&oc->pf, &cfg) < 0) {
		snprintf(why, len, "bad off-CPU event configuration");
		goto fail;
	}
	setup_attr(oc);
	if (probe(oc, why, len) < 0) {
		prof_perf_close(&oc->pf);
		goto fail;
	}
	if (setup_switch_event(oc, &main->cfg) < 0) {
		snprintf(why, len, "bad context-switch event configuration");
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
	int ret = prof_perf_open_task(&oc->sw, tid);

	return ret < 0 ? ret : prof_perf_open_task(&oc->pf, tid);
}

int prof_offcpu_open_cpu(struct prof_offcpu *oc, int cpu)
{
	int ret = prof_perf_open_cpu(&oc->sw, cpu);

	return ret < 0 ? ret : prof_perf_open_cpu(&oc->pf, cpu);
}

/* prev_pid is the tid going off the CPU: a filter on it keeps the stack
 * copies of prof's own waits (a pump thread blocks after every drain)
 * from filling the ring that the machine's stacks need. */
int prof_offcpu_exclude_self(struct prof_offcpu *oc)
{
	struct strbuf f = STRBUF_INIT;
	pid_t *tids;
	size_t n;
	int ret;

	if ((ret = prof_proc_tids(getpid(), &tids, &n)) < 0)
		return ret;
	sb_adds(&f, "prev_pid != 0");
	for (size_t i = 0; i < n; i++)
		sb_addf(&f, " && prev_pid != %d", (int)tids[i]);
	ret = prof_perf_set_filter(&oc->pf, sb_str(&f));
	free(tids);
	sb_release(&f);
	return ret;
}

/* The time ring is on before the stacks and off after them: every stack
 * sample has its switch records. */
void prof_offcpu_enable(struct prof_offcpu *oc)
{
	prof_perf_enable(&oc->sw);
	prof_perf_enable(&oc->pf);
}

void prof_offcpu_disable(struct prof_offcpu *oc)
{
	prof_perf_disable(&oc->pf);
	prof_perf_disable(&oc->sw);
}

void prof_offcpu_free(struct prof_offcpu *oc)
{
	if (!oc)
		return;
	if (oc->pf.rings)
		prof_perf_close(&oc->pf);
	if (oc->sw.rings)
		prof_perf_close(&oc->sw);
	size_t it = 0;
	uint64_t tid, t;
	while (u64map_next(&oc->by_tid, &it, &tid, &t))
		thr_free((struct thr *)(uintptr_t)t);
	u64map_free(&oc->by_tid);
	u64map_free(&oc->exited);
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

uint64_t prof_offcpu_stacks_lost(const struct prof_offcpu *oc)
{
	return oc ? oc->stacks_lost : 0;
}

uint64_t prof_offcpu_switches_lost(const struct prof_offcpu *oc)
{
	return oc ? oc->switches_lost : 0;
}

struct prof_perf *prof_offcpu_switch_perf(struct prof_offcpu *oc)
{
	return &oc->sw;
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

/* --- matching switch intervals with stack samples ------------------------------- */

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

uint64_t prof_offcpu_prev_state(const struct prof_offcpu *oc, const struct prof_perf_sample *s)
{
	return prev_state_of(oc, s);
}

static struct thr *thr_of(struct prof_offcpu *oc, uint32_t tid)
{
	bool created;
	uint64_t *slot = u64map_slot(&oc->by_tid, tid, &created);

	if (created) {
		struct thr *t = xcalloc(1, sizeof(*t));
		t->vol_metric = PROF_M_SLEEP_NS;
		*slot = (uintptr_t)t;
	}
	return (struct thr *)(uintptr_t)*slot;
}

/* The node charged when a switch's stack sample was lost: a root frame
 * "[stack lost]", so the loss shows in every view with its time. */
static uint32_t lost_node(struct prof_offcpu *oc)
{
	if (!oc->lost_node) {
		struct prof_frame f = { .func = prof_intern(oc->p, "[stack lost]"), .file = prof_intern(oc->p, ""),
					.module = PROF_NONE, .kind = PROF_FRAME_UNKNOWN };
		oc->lost_node = prof_node_child(oc->p, 0, prof_frame_intern(oc->p, &f));
	}
	return oc->lost_node;
}

static void charge(struct prof_offcpu *oc, const struct interval *iv, uint32_t thread, uint32_t node,
		   enum prof_metric m)
{
	uint64_t ns = iv->t_in - iv->t_out;

	if (m == PROF_METRIC_COUNT)	/* the thread was exiting */
		return;
	oc->sink.add(oc->sink.arg, iv->t_out, thread, node, PROF_M_OFFCPU_NS, ns, 0);
	oc->sink.add(oc->sink.arg, iv->t_out, thread, node, m, ns, 0);
	if (m == PROF_M_IOWAIT_NS)
		VEC_PUSH(&oc->io, ((struct io_interval){ iv->t_out, iv->t_in, iv->pid }));
}

/* An interval whose stack sample the kernel dropped: the time in full, at
 * [stack lost], preempted when the switch record says so, else the state
 * of the thread's last sampled voluntary switch (see offcpu.h). */
static void charge_lost(struct prof_offcpu *oc, struct thr *t, const struct interval *iv)
{
	charge(oc, iv, iv->thread, lost_node(oc),
	       iv->preempt ? PROF_M_PREEMPT_NS : (enum prof_metric)t->vol_metric);
	oc->stacks_lost++;
}

/*
 * Pairs t's closed intervals with its stack samples, oldest first.  The
 * sched_switch sample of a switch is taken in the same __schedule() call,
 * just before its PERF_RECORD_SWITCH out: the sample belongs to the first
 * interval of the thread that starts at or after it, and a sample older
 * than the switch-in before that interval belongs to no interval we saw.
 * A sample newer than an interval's start means that interval's own
 * sample was dropped.  What
 * cannot be decided yet (the other ring lags) waits; at the end (final)
 * every interval left is charged as lost.
 */
static void match(struct prof_offcpu *oc, struct thr *t, bool final)
{
	while (t->iv_head < t->ivs.n) {
		const struct interval *iv = &t->ivs.v[t->iv_head];
		struct stack *st = t->st_head < t->stacks.n ? &t->stacks.v[t->st_head] : NULL;

		if (st && st->time < iv->t_on) {	/* its interval was charged as lost, or unseen */
			t->st_head++;
			continue;
		}
		if (!st && !final)
			break;
		if (st && st->time <= iv->t_out) {
			if (st->metric != PROF_M_PREEMPT_NS && st->metric != PROF_METRIC_COUNT)
				t->vol_metric = st->metric;
			charge(oc, iv, st->thread, st->node, (enum prof_metric)st->metric);
			t->st_head++;
		} else {
			charge_lost(oc, t, iv);
		}
		t->iv_head++;
	}
	if (t->iv_head == t->ivs.n)
		t->ivs.n = t->iv_head = 0;
	if (t->st_head == t->stacks.n)
		t->stacks.n = t->st_head = 0;
}

static void on_switch_out(void *arg, const struct prof_replay_sample *rs)
{
	struct prof_offcpu *oc = arg;
	const struct prof_perf_sample *s = rs->s;

	if (rs->event != &oc->pf || !s->pid || u64map_get(&oc->exited, s->tid, NULL))
		return;	/* the idle task (-a), or the last switch-out of an exited thread */
	enum prof_metric m = prof_offcpu_classify(prev_state_of(oc, s),
						  kernel_stack_in_io(oc->p, rs->node));
	struct thr *t = thr_of(oc, s->tid);
	VEC_PUSH(&t->stacks, ((struct stack){ s->time, rs->thread, rs->node, (uint8_t)m }));
	match(oc, t, false);
}

/* The switch records of the time ring: an out opens the thread's
 * interval, the next in closes it. */
static void on_switch(void *arg, const void *event, const struct prof_replay_switch *sw)
{
	struct prof_offcpu *oc = arg;
	const struct prof_perf_sample_id *id = sw->id;
	struct thr *t;

	if (event != &oc->sw || !id->pid)
		return;	/* the idle task's switches (-a) are no one's off-CPU time */
	if (u64map_del(&oc->exited, id->tid) && sw->out)
		return;	/* the exited thread's last switch-out; an in is a new thread */
	t = thr_of(oc, id->tid);
	oc->switches++;
	oc->last_time = MAX(oc->last_time, id->time);
	if (sw->out) {
		t->open = (struct interval){ t->last_in, id->time, 0, sw->thread, id->pid, sw->preempt };
		t->is_open = true;
		return;
	}
	t->last_in = id->time;
	if (!t->is_open || id->time <= t->open.t_out)
		return;	/* recording started while it was off the CPU */
	t->is_open = false;
	t->open.t_in = id->time;
	VEC_PUSH(&t->ivs, t->open);
	match(oc, t, false);
}

static void on_lost(void *arg, const void *event, uint32_t type, uint64_t time, uint64_t n)
{
	struct prof_offcpu *oc = arg;

	if (event == &oc->pf)
		oc->lost += n;
	else if (event == &oc->sw)
		oc->switches_lost += n;
}

/*
 * A thread's EXIT record: its intervals are settled and its state freed,
 * so that memory follows the live threads however many come and go (-a
 * under churn).  Its last switch-out comes after EXIT; the tid waits in
 * `exited` until then so that the switch-out does not bring it back.
 */
static void on_task(void *arg, const struct prof_perf_task *tk, bool exit)
{
	struct prof_offcpu *oc = arg;
	uint64_t t;

	if (!exit || !u64map_get(&oc->by_tid, tk->tid, &t))
		return;
	match(oc, (struct thr *)(uintptr_t)t, true);
	thr_free((struct thr *)(uintptr_t)t);
	u64map_del(&oc->by_tid, tk->tid);
	u64map_put(&oc->exited, tk->tid, tk->time);
}

/* Events on tasks (not -a) are gone with the task, so its last switch-out
 * never comes: a tid waits in `exited` for a second of switch records at
 * most, and the map stays as small as the threads exiting per second. */
static void prune_exited(void *arg)
{
	struct prof_offcpu *oc = arg;
	VEC(uint64_t) old = { 0 };
	size_t it = 0;
	uint64_t tid, t;

	while (u64map_next(&oc->exited, &it, &tid, &t))
		if (t + EXITED_WAIT_NS < oc->last_time)
			VEC_PUSH(&old, tid);
	for (size_t i = 0; i < old.n; i++)
		u64map_del(&oc->exited, old.v[i]);
	VEC_FREE(&old);
}

void prof_offcpu_finish(struct prof_offcpu *oc)
{
	size_t it = 0;
	uint64_t tid, t;

	while (oc && u64map_next(&oc->by_tid, &it, &tid, &t))
		match(oc, (struct thr *)(uintptr_t)t, true);
}

static const struct prof_replay_ops offcpu_ops = {
	.sample = on_switch_out,
	.task = on_task,
	.batch_end = prune_exited,
	.context_switch = on_switch,
	.lost = on_lost,
};

void prof_offcpu_attach(struct prof_offcpu *oc, struct prof_replay *rp,
			struct prof_profile *p, const struct prof_replay_sink *sink)
{
	oc->p = p;
	oc->sink = *sink;
	prof_replay_add_consumer(rp, &offcpu_ops, oc);
}

struct prof_perf *prof_offcpu_perf(struct prof_offcpu *oc)
{
	return &oc->pf;
}
