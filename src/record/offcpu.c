/*
 * offcpu.c - off-CPU time with stacks during `prof record` (see
 * include/prof/offcpu.h).  Events per profiled thread or CPU, each with
 * its own rings:
 *  - the time ring: a dummy software event with attr.context_switch=1,
 *    whose only records are PERF_RECORD_SWITCH (32 bytes): the thread's
 *    switch-out (flagged preempted or not) and its next switch-in bound
 *    every off-CPU interval;
 *  - the switch ring: the sched:sched_switch tracepoint on every
 *    switch-out, for the state (prev_state in the raw data), the kernel
 *    callchain and the user site: the user registers and a small copy of
 *    the top of the user stack (OFFCPU_SITE_COPY);
 *  - the stack ring: the same tracepoint 1 in OFFCPU_STACK_PERIOD
 *    switch-outs, with the kernel callchain and a full user stack copy;
 *  - the D ring: the same full samples of every switch-out in D state
 *    (a tracepoint filter on prev_state): an uninterruptible wait is
 *    where the kernel stack says what the wait is (I/O or not), and such
 *    waits are few next to sleeps, so each has its own stack.
 * With --offcpu-stacks=all the switch ring has the full stack of every
 * switch-out and there is no stack ring: exact, and what the sampled
 * mode is checked against.
 *
 * Design notes / invariants:
 *  - Time is never sampled: the pairing (src/record/switchpair.c) charges
 *    every interval; an interval whose switch sample the kernel dropped is
 *    charged in full to a "[stack lost]" frame.
 *  - Time and state (preempted, sleep, uninterruptible) are exact for
 *    every interval, and a D-state interval has its own full stack (so
 *    I/O wait or not is exact); another interval's stack is its site's.
 *  - Every switch-out names its site: (tid, user ip, user sp, state class
 *    R/S/D) and the return addresses that an unwind of that site found in
 *    the top OFFCPU_SITE_COPY bytes (checked word by word in each small
 *    copy, so two callers of the same blocking function at the same
 *    stack depth are two sites).  A site's stack is its last full stack
 *    sample: which switch-outs the stack ring samples decides only how
 *    soon a site is known, not how its intervals are shared, so a fixed
 *    period cannot alias with a periodic blocking pattern.  What a site
 *    cannot tell apart is carried: different kernel paths under the same
 *    user site and state (S or R) get the kernel frames of its last full
 *    sample.
 *  - An interval at a site with no full sample yet waits for one (in
 *    `pending`, at most PENDING_NS of switch time); then, or at the end,
 *    it is charged to the site's stack unwound from the small copy or
 *    read from the blocked thread (read_blocked_stack), with no kernel
 *    frames, under "[stack not sampled]" when it was cut by the copy.  The samples of one switch-out
 *    arrive in any order; the full one wins.
 *  - The offset and size of prev_state come from the tracepoint's format
 *    file, never hard-coded.
 *  - The window: a thread opened by prof_offcpu_open_task (attach) or
 *    named by prof_offcpu_present (-a) before prof_offcpu_enable existed
 *    when the recording began.  One off the CPU then is charged from
 *    that start (to its first switch-in, or the end if it never ran) to
 *    the stack /proc showed at the start (its kernel frames, or the wait
 *    channel without root), under "[off-CPU when recording began]": no
 *    switch-out of it was sampled.  A thread still off the CPU at the
 *    end is charged up to it, with the stack of its last switch-out.
 *  - io keeps the I/O-wait intervals (pid, start, end) until the timeline
 *    sampler has used them for its I/O-wait% (prof_offcpu_io_prune).
 */
#include "prof/offcpu.h"
#include "prof/proc.h"
#include "prof/switchpair.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
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

/* Bytes of user stack each switch-out copies to name its site: the
 * syscall wrapper's frame and a few callers' return addresses. */
#define OFFCPU_SITE_COPY 512

/* One switch-out in this many gets a full stack (kernel callchain and
 * OFFCPU_STACK_SIZE bytes of user stack).  Prime, so that no short
 * blocking cycle keeps a site out of the samples. */
#define OFFCPU_STACK_PERIOD 61

/* The switch ring (~800-byte records: regs, the small copy, raw data)
 * is this fraction of the CPU event's (-m): 2 MiB per CPU by default on
 * 2 CPUs, 2.6k switch-outs. */
#define OFFCPU_SITE_RING_SHARE 8

/* The D ring's filter: switch-outs in TASK_UNINTERRUPTIBLE. */
#define D_FILTER "prev_state & 2"

/* The two samples of one switch-out are this close in time. */
#define SAME_SWITCH_NS 20000

/* The site cache starts over beyond this many sites (tids come and go). */
#define MAX_SITES 262144

/* How long an interval waits for its site's first full stack. */
#define PENDING_NS 2000000000ULL

/* prev_state bits as the tracepoint reports them (TASK_REPORT). */
#define TS_INTERRUPTIBLE 0x1
#define TS_UNINTERRUPTIBLE 0x2
#define TS_DEAD_MASK (0x10 | 0x20)	/* X, Z: the thread is exiting */
#define TS_REPORT_MASK 0xff		/* above: TASK_REPORT_MAX = preempted */

/* A switch-out site seen before: a thread blocked at the same user ip
 * and sp, in the same kind of state, with the same return addresses in
 * the top of its stack copy, has the same stack (see the notes above). */
#define SITE_SIGS 3
struct site {
	uint32_t tid, node, next;	/* next: another site with the same key hash */
	uint64_t ip, sp;
	uint8_t cls;			/* state class: R, S or D */
	bool full;			/* node from a full stack sample (else: the small copy's) */
	bool io;			/* the kernel stack waits on I/O */
	uint8_t nsig;
	uint16_t sig_off[SITE_SIGS];	/* offsets from sp of return addresses... */
	uint64_t sig_val[SITE_SIGS];	/* ...and their values */
};

struct io_interval {
	uint64_t start, end;
	uint32_t pid;
};

/* An interval waiting for its site's full stack. */
struct pending {
	struct prof_switch_interval iv;
	uint32_t thread, site;
	uint8_t metric;
};

struct prof_offcpu {
	enum prof_offcpu_mode mode;
	struct prof_perf pf;		/* sched_switch, every switch-out: state and site */
	struct prof_perf st;		/* sched_switch, sampled: full stacks (sampled mode) */
	struct prof_perf dd;		/* sched_switch in D state: full stacks (sampled mode) */
	struct prof_perf sw;		/* dummy event, context_switch=1: the time */
	struct prof_perf_event_desc desc;
	uint32_t state_off, state_size;	/* of prev_state in the raw data */
	struct prof_profile *p;		/* reads the kernel frames; gets [stack lost] */
	struct prof_replay_sink sink;	/* where charged intervals go */
	struct prof_switchpair *sp;
	uint32_t lost_node, unsampled_frame;
	struct u64map site_index;	/* key hash -> index + 1 of the first site */
	VEC(struct site) sites;
	VEC(struct pending) pending;
	uint64_t newest;		/* the newest interval end seen */
	VEC(struct io_interval) io;
	struct prof_offcpu_stats stats;
	struct prof_replay *rp;		/* the threads of at-start intervals */
	VEC(pid_t) opened;		/* tids opened before the window began */
	struct u64map at_start;		/* tid -> node << 8 | metric, as /proc showed it at the start */
	uint32_t at_start_frame;
	uint64_t end;			/* the window's end (disable), 0 before */
	uint8_t stack_buf[OFFCPU_STACK_SIZE];	/* read_blocked_stack */
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

/* A sched_switch sample every `period` switch-outs, with the raw data;
 * kchain: the kernel callchain, which tells I/O wait from other
 * uninterruptible sleeps (user frames: by the stack copy, or none). */
static void setup_attr(struct prof_perf *pf, uint64_t period, bool kchain)
{
	struct perf_event_attr *a = &pf->attr;

	a->freq = 0;
	a->sample_period = period;
	a->sample_type |= PERF_SAMPLE_RAW;
	a->exclude_kernel = 0;		/* the tracepoint fires in the kernel */
	a->mmap = a->mmap2 = a->comm = a->comm_exec = a->task = a->build_id = 0;	/* the CPU event has them */
	/* PERF_SAMPLE_PERIOD with a fixed period makes every hit of a software
	 * event a sample (perf_swevent_event), whatever the period. */
	a->sample_type &= ~(uint64_t)(PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_PERIOD);
	if (kchain)
		a->sample_type |= PERF_SAMPLE_CALLCHAIN;
	if (kchain && pf->cfg.callgraph == PROF_CG_NONE)
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

/* The full-stack event: the main event's call graph, OFFCPU_STACK_SIZE
 * bytes at most, the kernel chain; every `period` switch-outs. */
static int setup_stack_event(struct prof_offcpu *oc, struct prof_perf *pf,
			     const struct prof_perf_config *main, uint64_t period)
{
	struct prof_perf_config cfg = *main;

	cfg.event = &oc->desc;
	cfg.freq = 1;
	cfg.stack_size = MIN(cfg.stack_size, OFFCPU_STACK_SIZE);
	cfg.ring_pages = stack_ring_pages(&cfg, main->ring_pages);
	if (prof_perf_init(pf, &cfg) < 0)
		return -EINVAL;
	setup_attr(pf, period, true);
	return 0;
}

/* The site event of the sampled mode: every switch-out, the user regs
 * and OFFCPU_SITE_COPY bytes of stack.  No kernel callchain: unwinding
 * the kernel stack in every switch costs the target ~2 us a switch here
 * (docs/offcpu.md), more than everything else prof does per switch. */
static int setup_site_event(struct prof_offcpu *oc, const struct prof_perf_config *main)
{
	struct prof_perf_config cfg = *main;

	cfg.event = &oc->desc;
	cfg.freq = 1;
	cfg.stack_size = OFFCPU_SITE_COPY;
	cfg.ring_pages = MAX(16u, main->ring_pages / OFFCPU_SITE_RING_SHARE);
	if (prof_perf_init(&oc->pf, &cfg) < 0)
		return -EINVAL;
	setup_attr(&oc->pf, 1, false);
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

static void close_events(struct prof_offcpu *oc)
{
	if (oc->pf.rings)
		prof_perf_close(&oc->pf);
	if (oc->st.rings)
		prof_perf_close(&oc->st);
	if (oc->dd.rings)
		prof_perf_close(&oc->dd);
	if (oc->sw.rings)
		prof_perf_close(&oc->sw);
}

/* The events of the mode; 0 or -EINVAL. */
static int setup_events(struct prof_offcpu *oc, const struct prof_perf *main)
{
	struct prof_perf_config cfg = main->cfg;

	switch (oc->mode) {
	case PROF_OFFCPU_SAMPLED:
		if (setup_site_event(oc, &cfg) < 0)
			return -EINVAL;
		if (setup_stack_event(oc, &oc->st, &cfg, OFFCPU_STACK_PERIOD) < 0 ||
		    setup_stack_event(oc, &oc->dd, &cfg, 1) < 0) {
			close_events(oc);
			return -EINVAL;
		}
		oc->dd.open_filter = D_FILTER;
		return 0;
	case PROF_OFFCPU_STATE:
		cfg.callgraph = PROF_CG_NONE;
		/* fall through */
	case PROF_OFFCPU_ALL:
		return setup_stack_event(oc, &oc->pf, &cfg, 1);
	}
	return -EINVAL;
}


struct prof_offcpu *prof_offcpu_new(const struct prof_perf *main, enum prof_offcpu_mode mode,
				    char *why, size_t len)
{
	struct prof_offcpu *oc = xcalloc(1, sizeof(*oc));

	/* Sites need a stack copy to tell them apart: with -g fp or none
	 * every switch-out's own stack is cheap, and the only one. */
	if (mode == PROF_OFFCPU_SAMPLED && main->cfg.callgraph != PROF_CG_DWARF)
		mode = PROF_OFFCPU_ALL;
	oc->mode = mode;
	oc->desc = (struct prof_perf_event_desc){ "sched:sched_switch", PERF_TYPE_TRACEPOINT, 0, false };
	if (read_tracepoint(oc, why, len) < 0)
		goto fail;
	if (setup_events(oc, main) < 0) {
		snprintf(why, len, "bad off-CPU event configuration");
		goto fail;
	}
	if (probe(oc, why, len) < 0 || setup_switch_event(oc, &main->cfg) < 0) {
		if (!*why)
			snprintf(why, len, "bad context-switch event configuration");
		close_events(oc);
		goto fail;
	}
	return oc;
fail:
	free(oc);
	return NULL;
}

/* open() on every event, the time ring first: 0 or the first -errno. */
static int open_each(struct prof_offcpu *oc, int (*open)(struct prof_perf *, int), int arg)
{
	struct prof_perf *pfs[PROF_OFFCPU_MAX_PERFS];
	size_t n = prof_offcpu_perfs(oc, pfs);
	int ret = 0;

	for (size_t i = 0; i < n && ret >= 0; i++)
		ret = open(pfs[i], arg);
	return ret;
}

int prof_offcpu_open_task(struct prof_offcpu *oc, pid_t tid)
{
	int ret = open_each(oc, prof_perf_open_task, tid);

	if (ret >= 0)
		prof_offcpu_present(oc, tid);
	return ret;
}

void prof_offcpu_present(struct prof_offcpu *oc, pid_t tid)
{
	VEC_PUSH(&oc->opened, tid);
}

int prof_offcpu_open_cpu(struct prof_offcpu *oc, int cpu)
{
	return open_each(oc, prof_perf_open_cpu, cpu);
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
	if (ret >= 0 && oc->st.rings)
		ret = prof_perf_set_filter(&oc->st, sb_str(&f));
	if (ret >= 0 && oc->dd.rings) {
		struct strbuf d = STRBUF_INIT;
		sb_addf(&d, "(%s) && %s", D_FILTER, sb_str(&f));
		ret = prof_perf_set_filter(&oc->dd, sb_str(&d));
		sb_release(&d);
	}
	free(tids);
	sb_release(&f);
	return ret;
}

static void begin_window(struct prof_offcpu *oc);

/* The time ring is on before the stacks and off after them: every stack
 * sample has its switch records. */
void prof_offcpu_enable(struct prof_offcpu *oc)
{
	begin_window(oc);
	prof_perf_enable(&oc->sw);
	prof_perf_enable(&oc->pf);
	if (oc->st.rings)
		prof_perf_enable(&oc->st);
	if (oc->dd.rings)
		prof_perf_enable(&oc->dd);
}

void prof_offcpu_disable(struct prof_offcpu *oc)
{
	if (oc->dd.rings)
		prof_perf_disable(&oc->dd);
	if (oc->st.rings)
		prof_perf_disable(&oc->st);
	prof_perf_disable(&oc->pf);
	prof_perf_disable(&oc->sw);
	oc->end = now_ns();
}

void prof_offcpu_free(struct prof_offcpu *oc)
{
	if (!oc)
		return;
	close_events(oc);
	prof_switchpair_free(oc->sp);
	u64map_free(&oc->site_index);
	VEC_FREE(&oc->sites);
	VEC_FREE(&oc->pending);
	VEC_FREE(&oc->io);
	VEC_FREE(&oc->opened);
	u64map_free(&oc->at_start);
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

const struct prof_offcpu_stats *prof_offcpu_stats(const struct prof_offcpu *oc)
{
	static const struct prof_offcpu_stats none;

	return oc ? &oc->stats : &none;
}

struct prof_perf *prof_offcpu_switch_perf(struct prof_offcpu *oc)
{
	return &oc->sw;
}

size_t prof_offcpu_perfs(struct prof_offcpu *oc, struct prof_perf **out)
{
	size_t n = 0;

	out[n++] = &oc->sw;
	out[n++] = &oc->pf;
	if (oc->st.rings)
		out[n++] = &oc->st;
	if (oc->dd.rings)
		out[n++] = &oc->dd;
	return n;
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

/* A root frame named `name`, interned once into *id. */
static uint32_t marker_frame(struct prof_offcpu *oc, uint32_t *id, const char *name)
{
	if (!*id) {
		struct prof_frame f = { .func = prof_intern(oc->p, name), .file = prof_intern(oc->p, ""),
					.module = PROF_NONE, .kind = PROF_FRAME_UNKNOWN };
		*id = prof_frame_intern(oc->p, &f) + 1;
	}
	return *id - 1;
}

/* The node charged when a switch's sample was lost: a root frame
 * "[stack lost]", so the loss shows in every view with its time. */
static uint32_t lost_node(struct prof_offcpu *oc)
{
	uint32_t f = 0;

	if (!oc->lost_node)
		oc->lost_node = prof_node_child(oc->p, 0, marker_frame(oc, &f, "[stack lost]"));
	return oc->lost_node;
}

static void add(struct prof_offcpu *oc, const struct prof_switch_interval *iv, uint32_t thread,
		uint32_t node, enum prof_metric m)
{
	uint64_t ns = iv->t_in - iv->t_out;

	oc->sink.add(oc->sink.arg, iv->t_out, thread, node, PROF_M_OFFCPU_NS, ns, 0);
	oc->sink.add(oc->sink.arg, iv->t_out, thread, node, m, ns, 0);
	if (m == PROF_M_IOWAIT_NS)
		VEC_PUSH(&oc->io, ((struct io_interval){ iv->t_out, iv->t_in, iv->pid }));
}

/* A D state's verdict from a site's (full) kernel frames. */
static enum prof_metric with_io(enum prof_metric m, bool io)
{
	return m == PROF_M_UNINT_NS && io ? PROF_M_IOWAIT_NS : m;
}

/* --- the window's edges -------------------------------------------------------------- */

/* A kernel frame named by /proc (no address: /proc hides them). */
static uint32_t proc_kernel_frame(struct prof_offcpu *oc, const char *name)
{
	struct prof_frame f = { .func = prof_intern(oc->p, name), .file = prof_intern(oc->p, ""),
				.module = prof_module_intern(oc->p, "[kernel.kallsyms]", "", PROF_MOD_KERNEL),
				.kind = PROF_FRAME_KERNEL };

	return prof_frame_intern(oc->p, &f);
}

/* Kernel frames of tid now, innermost first: /proc/TID/stack
 * ("[<0>] do_nanosleep+0x6b/0x170"), or its wait channel alone when the
 * stack is for root only; how many. */
static size_t proc_kernel_stack(struct prof_offcpu *oc, pid_t tid, uint32_t *frames, size_t max)
{
	char path[64], *text, *line, *save = NULL;
	size_t n = 0;

	snprintf(path, sizeof(path), "/proc/%d/stack", (int)tid);
	if (!(text = read_file(path, NULL))) {
		snprintf(path, sizeof(path), "/proc/%d/wchan", (int)tid);
		text = read_file(path, NULL);
	}
	for (line = text ? strtok_r(text, "\n", &save) : NULL; line && n < max; line = strtok_r(NULL, "\n", &save)) {
		char *name = strstr(line, "] ") ? strstr(line, "] ") + 2 : line;
		name[strcspn(name, "+ ")] = 0;
		if (*name && strcmp(name, "0"))
			frames[n++] = proc_kernel_frame(oc, name);
	}
	free(text);
	return n;
}

/* tid's state letter in /proc/TID/stat (after the comm's ")"), or 0. */
static char proc_state(pid_t tid)
{
	char path[64], *text, *p, c = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)tid);
	if ((text = read_file(path, NULL)) && (p = strrchr(text, ')')) && p[1] == ' ')
		c = p[2];
	free(text);
	return c;
}

/* What tid waited in when the window began, as /proc shows it: a stack
 * under "[off-CPU when recording began]" and the state's metric. */
static void note_at_start(struct prof_offcpu *oc, pid_t tid)
{
	uint32_t frames[PROF_MAX_FRAMES + 1], node;
	char st = proc_state(tid);
	size_t n = proc_kernel_stack(oc, tid, frames, PROF_MAX_FRAMES);
	enum prof_metric m;

	frames[n++] = marker_frame(oc, &oc->at_start_frame, "[off-CPU when recording began]");
	node = prof_node_from_stack(oc->p, frames, n);
	m = st == 'R' ? PROF_M_PREEMPT_NS : st == 'D' ? with_io(PROF_M_UNINT_NS, kernel_stack_in_io(oc->p, node))
							: PROF_M_SLEEP_NS;
	u64map_put(&oc->at_start, (uint64_t)tid, (uint64_t)node << 8 | (uint64_t)m);
}

/* The window begins: the threads opened so far exist.  /proc is read
 * first, the start taken after, so that it is the events' enabling (a
 * thread that ran during a long scan of a big host is not charged for
 * it). */
static void begin_window(struct prof_offcpu *oc)
{
	uint32_t *ids = xcalloc(2 * oc->opened.n + 1, sizeof(*ids));	/* pid, thread */
	uint64_t start;

	for (size_t i = 0; oc->sp && i < oc->opened.n; i++) {
		pid_t tid = oc->opened.v[i], pid = prof_proc_tgid(tid);
		if (pid <= 0)
			continue;	/* gone */
		note_at_start(oc, tid);
		ids[2 * i] = (uint32_t)pid;
		ids[2 * i + 1] = prof_replay_thread(oc->rp, pid, tid);
	}
	start = now_ns();
	for (size_t i = 0; oc->sp && i < oc->opened.n; i++)
		if (ids[2 * i])
			prof_switchpair_begin(oc->sp, (uint32_t)oc->opened.v[i], ids[2 * i], ids[2 * i + 1], start);
	free(ids);
	oc->opened.n = 0;
}

/* An interval that began before the window: no switch-out sampled it,
 * so it goes to the stack /proc showed at the start. */
static void charge_from_start(struct prof_offcpu *oc, const struct prof_switch_interval *iv)
{
	uint64_t v;

	if (!u64map_get(&oc->at_start, iv->tid, &v))
		v = (uint64_t)lost_node(oc) << 8 | PROF_M_SLEEP_NS;
	if (iv->t_in > iv->t_out)
		add(oc, iv, iv->thread, (uint32_t)(v >> 8), (enum prof_metric)(v & 0xff));
}

/* The pairing's verdict on one interval: its time in full, now, or once
 * its site has a full stack. */
static void charge(void *arg, const struct prof_switch_interval *iv, const struct prof_switch_sample *s,
		   enum prof_metric m)
{
	struct prof_offcpu *oc = arg;

	oc->newest = MAX(oc->newest, iv->t_in);
	if (iv->edge & PROF_SWITCH_FROM_START)
		charge_from_start(oc, iv);
	else if (!s) {
		oc->stats.stacks_lost++;
		add(oc, iv, iv->thread, lost_node(oc), m);
	} else if (s->tag != PROF_NONE && s->tag < oc->sites.n && oc->sites.v[s->tag].full) {
		const struct site *st = &oc->sites.v[s->tag];
		add(oc, iv, s->thread, st->node, with_io(m, st->io));
	} else if (s->tag != PROF_NONE && s->tag < oc->sites.n) {
		VEC_PUSH(&oc->pending, ((struct pending){ *iv, s->thread, s->tag, (uint8_t)m }));
	} else {
		add(oc, iv, s->thread, s->node, m);
	}
}

/* Charges the waiting intervals whose site now has a full stack, and
 * (all: the end, or the cache starting over) those that waited long
 * enough, with the small copy's stack. */
static void settle_pending(struct prof_offcpu *oc, bool all)
{
	size_t k = 0;

	for (size_t i = 0; i < oc->pending.n; i++) {
		const struct pending *pd = &oc->pending.v[i];
		const struct site *st = &oc->sites.v[pd->site];
		if (st->full)
			add(oc, &pd->iv, pd->thread, st->node, with_io((enum prof_metric)pd->metric, st->io));
		else if (all || pd->iv.t_in + PENDING_NS < oc->newest) {
			oc->stats.unsampled++;
			add(oc, &pd->iv, pd->thread, st->node, (enum prof_metric)pd->metric);
		} else
			oc->pending.v[k++] = *pd;
	}
	oc->pending.n = k;
}

/* --- sites: the sampled mode's cache of stacks ------------------------------------ */

/* R, S or D: a site's stack in one state says nothing of another. */
static uint8_t state_class(uint64_t prev_state)
{
	uint64_t st = prev_state & TS_REPORT_MASK;

	return st == 0 ? 0 : (st & TS_UNINTERRUPTIBLE) ? 2 : 1;
}

static uint64_t stack_word(const struct prof_perf_sample *s, size_t off)
{
	uint64_t v;

	memcpy(&v, s->stack + off, 8);
	return v;
}

/* The site key of a switch-out sample (no signature yet). */
static struct site site_key(const struct prof_perf_sample *s, uint64_t prev_state)
{
	uint64_t r[PERF_REG_X86_IP + 1] = { 0 };

	prof_perf_sample_regs(s, r, ARRAY_SIZE(r));
	return (struct site){ .tid = s->tid, .ip = r[PERF_REG_X86_IP], .sp = r[PERF_REG_X86_SP],
			      .cls = state_class(prev_state) };
}

static uint64_t site_hash(const struct site *k)
{
	return hash64(k->tid ^ hash64(k->ip ^ hash64(k->sp * 4 + k->cls)));
}

static bool same_key(const struct site *a, const struct site *b)
{
	return a->tid == b->tid && a->ip == b->ip && a->sp == b->sp && a->cls == b->cls;
}

/* Where the unwind's return addresses sit in the top OFFCPU_SITE_COPY
 * bytes of the stack copy, in order. */
static void site_sign(struct site *k, const struct prof_perf_sample *s, const uint64_t *upcs, size_t n)
{
	size_t reach = MIN((size_t)s->stack_size, (size_t)OFFCPU_SITE_COPY), off = 0;

	k->nsig = 0;
	for (size_t i = 1; i < n && k->nsig < SITE_SIGS; i++) {
		while (off + 8 <= reach && stack_word(s, off) != upcs[i])
			off += 8;
		if (off + 8 > reach)
			break;
		k->sig_off[k->nsig] = (uint16_t)off;
		k->sig_val[k->nsig++] = upcs[i];
		off += 8;
	}
}

static bool sig_matches(const struct site *k, const struct prof_perf_sample *s)
{
	for (uint8_t i = 0; i < k->nsig; i++)
		if ((size_t)k->sig_off[i] + 8 > s->stack_size || stack_word(s, k->sig_off[i]) != k->sig_val[i])
			return false;
	return true;
}

static bool same_sig(const struct site *a, const struct site *b)
{
	return a->nsig == b->nsig && !memcmp(a->sig_off, b->sig_off, a->nsig * sizeof(a->sig_off[0])) &&
	       !memcmp(a->sig_val, b->sig_val, a->nsig * sizeof(a->sig_val[0]));
}

/* The site whose key and signature this sample has, or NULL. */
static const struct site *site_find(struct prof_offcpu *oc, const struct site *k, const struct prof_perf_sample *s)
{
	uint64_t i;

	if (!u64map_get(&oc->site_index, site_hash(k), &i))
		return NULL;
	for (i--; i != PROF_NONE; i = oc->sites.v[i].next)
		if (same_key(&oc->sites.v[i], k) && sig_matches(&oc->sites.v[i], s))
			return &oc->sites.v[i];
	return NULL;
}

/* Adds k, or updates the site with the same key and signature; its
 * index, or PROF_NONE when the cache is full (MAX_SITES: new sites are
 * then not remembered). */
static uint32_t site_put(struct prof_offcpu *oc, const struct site *k)
{
	bool created;
	uint64_t *head;

	if (oc->sites.n >= MAX_SITES && !u64map_get(&oc->site_index, site_hash(k), NULL))
		return PROF_NONE;
	head = u64map_slot(&oc->site_index, site_hash(k), &created);
	for (uint64_t i = created ? PROF_NONE : *head - 1; i != PROF_NONE; i = oc->sites.v[i].next)
		if (same_key(&oc->sites.v[i], k) && same_sig(&oc->sites.v[i], k)) {
			uint32_t next = oc->sites.v[i].next;
			oc->sites.v[i] = *k;
			oc->sites.v[i].next = next;
			return (uint32_t)i;
		}
	VEC_PUSH(&oc->sites, *k);
	oc->sites.v[oc->sites.n - 1].next = created ? PROF_NONE : (uint32_t)(*head - 1);
	*head = oc->sites.n;
	return (uint32_t)(oc->sites.n - 1);
}

/* A stack from the small copy alone: under "[stack not sampled]" when
 * the unwind ran out of the copied bytes (a stack that stops for another
 * reason, such as a stripped binary, would stop there in a full copy
 * too). */
static uint32_t small_copy_node(struct prof_offcpu *oc, const struct prof_replay_sample *rs,
				const struct prof_replay_stack *st)
{
	uint32_t frames[PROF_MAX_FRAMES + 1];
	size_t n = 0;

	if (!st->copy_exhausted)
		return st->node;
	for (uint32_t node = st->node; node && node < oc->p->nodes.n && n < PROF_MAX_FRAMES;
	     node = oc->p->nodes.v[node].parent)
		frames[n++] = oc->p->nodes.v[node].frame;
	frames[n++] = marker_frame(oc, &oc->unsampled_frame, "[stack not sampled]");
	return prof_node_from_stack(oc->p, frames, n);
}

/*
 * A new site whose small copy did not reach the thread's root: a thread
 * blocked there keeps its stack as it was at the switch-out, so while it
 * still sleeps (or sleeps there again) its stack memory, read now, is the
 * full copy the kernel did not take.  It is used only if its unwind
 * begins with the frames the small copy gave (the same return addresses:
 * the thread is at the same call path).  Sites of long-blocked threads
 * (a server's idle workers) are where count-sampled full stacks rarely
 * land, and where most of a host's off-CPU time is.
 */
static bool read_blocked_stack(struct prof_offcpu *oc, const struct prof_replay_sample *rs,
			       struct prof_replay_stack *st)
{
	struct prof_perf_sample s = *rs->s;
	struct prof_replay_sample again = *rs;
	struct prof_replay_stack deep;
	uint64_t r[PERF_REG_X86_IP + 1] = { 0 }, small[PROF_MAX_FRAMES];
	struct iovec local = { oc->stack_buf, OFFCPU_STACK_SIZE }, remote;
	size_t k = MIN(st->n_upcs, (size_t)PROF_MAX_FRAMES);
	ssize_t n;

	if (!s.regs_abi || !k)
		return false;	/* a kernel thread, or nothing to check against */
	memcpy(small, st->upcs, k * sizeof(small[0]));
	prof_perf_sample_regs(rs->s, r, ARRAY_SIZE(r));
	remote = (struct iovec){ (void *)(uintptr_t)r[PERF_REG_X86_SP], OFFCPU_STACK_SIZE };
	n = process_vm_readv((pid_t)s.pid, &local, 1, &remote, 1, 0);
	if (n <= (ssize_t)s.stack_size)
		return false;
	s.stack = oc->stack_buf;
	s.stack_size = (uint64_t)n;
	again.s = &s;
	prof_replay_resolve(&again, &deep);
	if (deep.n_upcs < k || memcmp(deep.upcs, small, k * sizeof(small[0])))
		return false;
	oc->stats.stacks_read++;
	*st = deep;
	return true;
}

/* Sampled mode, every switch-out: its site's stack, from the cache or
 * (a new site) from its own small copy. */
static void site_switch_out(struct prof_offcpu *oc, const struct prof_replay_sample *rs,
			    uint64_t state, struct prof_switch_sample *out)
{
	struct site k = site_key(rs->s, state);
	const struct site *hit = site_find(oc, &k, rs->s);
	struct prof_replay_stack st;

	if (hit) {
		if (hit->full)
			oc->stats.site_hits++;
		else
			oc->stats.site_partial++;
		out->node = hit->node;
		out->tag = (uint32_t)(hit - oc->sites.v);
		return;
	}
	oc->stats.site_misses++;
	prof_replay_resolve(rs, &st);
	site_sign(&k, rs->s, st.upcs, st.n_upcs);	/* before a read replaces the pcs */
	k.node = small_copy_node(oc, rs, &st);
	if (st.copy_exhausted && read_blocked_stack(oc, rs, &st))
		k.node = st.node;
	out->node = k.node;
	out->tag = site_put(oc, &k);
}

/* Sampled mode, a full stack sample: its site is known from now on, and
 * its own switch-out (sampled by both events) gets it. */
static void on_full_stack(struct prof_offcpu *oc, const struct prof_replay_sample *rs)
{
	uint64_t state = prev_state_of(oc, rs->s);
	struct site k = site_key(rs->s, state);
	enum prof_metric m;

	k.full = true;
	k.node = rs->node;
	k.io = kernel_stack_in_io(oc->p, rs->node);
	site_sign(&k, rs->s, rs->upcs, rs->n_upcs);
	site_put(oc, &k);
	oc->stats.full_stacks++;
	m = prof_offcpu_classify(state, k.io);
	if (m == PROF_METRIC_COUNT)
		return;
	prof_switchpair_restack(oc->sp, rs->s->tid, rs->s->time, SAME_SWITCH_NS, rs->node, (uint8_t)m);
}

/* --- the replay consumer ------------------------------------------------------------ */

static void on_sample(void *arg, const struct prof_replay_sample *rs)
{
	struct prof_offcpu *oc = arg;
	const struct prof_perf_sample *s = rs->s;
	struct prof_switch_sample out = { s->time, rs->thread, rs->node, PROF_NONE, 0 };
	uint64_t state;

	if (!s->pid)
		return;	/* the idle task (-a) */
	if (rs->event == &oc->st || rs->event == &oc->dd) {
		on_full_stack(oc, rs);
		return;
	}
	if (rs->event != &oc->pf)
		return;
	state = prev_state_of(oc, s);
	out.metric = (uint8_t)prof_offcpu_classify(state, false);
	if (out.metric == PROF_METRIC_COUNT)
		;	/* exiting: nothing charged, no stack needed */
	else if (oc->mode == PROF_OFFCPU_SAMPLED)
		site_switch_out(oc, rs, state, &out);
	else
		out.metric = (uint8_t)prof_offcpu_classify(state, kernel_stack_in_io(oc->p, rs->node));
	prof_switchpair_sample(oc->sp, s->tid, &out);
}

/* The switch records of the time ring. */
static void on_switch(void *arg, const void *event, const struct prof_replay_switch *sw)
{
	struct prof_offcpu *oc = arg;
	const struct prof_perf_sample_id *id = sw->id;

	if (event != &oc->sw || !id->pid)
		return;	/* the idle task's switches (-a) are no one's off-CPU time */
	if (sw->out)
		prof_switchpair_out(oc->sp, id->tid, id->pid, sw->thread, id->time, sw->preempt);
	else
		prof_switchpair_in(oc->sp, id->tid, id->time);
}

static void on_lost(void *arg, const void *event, uint32_t type, uint64_t time, uint64_t n)
{
	struct prof_offcpu *oc = arg;

	if (event == &oc->pf)
		oc->stats.lost += n;
	else if (event == &oc->st || event == &oc->dd)
		oc->stats.full_lost += n;
	else if (event == &oc->sw)
		oc->stats.switches_lost += n;
}

static void on_task(void *arg, const struct prof_perf_task *tk, bool exit)
{
	struct prof_offcpu *oc = arg;

	if (exit)
		prof_switchpair_exit(oc->sp, tk->tid, tk->time);
}

static void on_batch_end(void *arg)
{
	struct prof_offcpu *oc = arg;

	prof_switchpair_prune(oc->sp);
	settle_pending(oc, false);
}

void prof_offcpu_finish(struct prof_offcpu *oc)
{
	if (!oc)
		return;
	prof_switchpair_finish(oc->sp, oc->end);
	settle_pending(oc, true);
}

static const struct prof_replay_ops offcpu_ops = {
	.sample = on_sample,
	.task = on_task,
	.batch_end = on_batch_end,
	.context_switch = on_switch,
	.lost = on_lost,
};

void prof_offcpu_attach(struct prof_offcpu *oc, struct prof_replay *rp,
			struct prof_profile *p, const struct prof_replay_sink *sink)
{
	oc->p = p;
	oc->rp = rp;
	oc->sink = *sink;
	oc->sp = prof_switchpair_new(charge, oc);
	if (oc->mode == PROF_OFFCPU_SAMPLED)
		prof_replay_lazy(rp, &oc->pf);
	prof_replay_add_consumer(rp, &offcpu_ops, oc);
}

struct prof_perf *prof_offcpu_perf(struct prof_offcpu *oc)
{
	return &oc->pf;
}

enum prof_offcpu_mode prof_offcpu_mode(const struct prof_offcpu *oc)
{
	return oc->mode;
}
