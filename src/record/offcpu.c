/*
 * offcpu.c - off-CPU time with stacks during `prof record` (see
 * include/prof/offcpu.h).  Events per profiled thread or CPU, each with
 * its own rings:
 *  - the time ring: a dummy software event with attr.context_switch=1,
 *    whose only records are PERF_RECORD_SWITCH (32 bytes): the thread's
 *    switch-out (flagged preempted or not) and its next switch-in bound
 *    every off-CPU interval;
 *  - sampled mode (the default): full stack samples (kernel callchain,
 *    user registers, OFFCPU_STACK_SIZE bytes of user stack) of only some
 *    switch-outs, chosen in the kernel before the sample is made:
 *     - the filtered ring: the context-switches software event with a BPF
 *       filter (src/perf/bpf_filter.c) of two rules: "stale" keeps a
 *       thread's switch-out when its last one kept by this rule in the
 *       same class (preempted or not) is OFFCPU_STALE_NS old (its first
 *       included), so that threads that switch rarely (idle workers: most
 *       of a host's off-CPU time) have their own stacks, in both classes;
 *       else "random" keeps it with probability 1/period.  Which rule
 *       kept a sample is replayed here (replay_stale);
 *     - the D ring: sched:sched_switch with a tracepoint filter on
 *       prev_state, every switch-out in D state: an uninterruptible wait
 *       is where the kernel stack says what the wait is (I/O or not), and
 *       such waits are few next to sleeps, so each has its own stack.
 *       With the accountant (below) no D ring: I/O wait by in_iowait, or
 *       by the kernel stack its program takes of each other D wait (a
 *       journal commit) and of each sampled one; user stacks by its rules.
 *    Without BPF (a kernel before 6.10, whose overflow programs cannot
 *    drop samples, or no CAP_BPF) the random ring is sched:sched_switch
 *    with sample_period = period, and there is no stale rule.
 *  - in sampled mode, where a BPF program in C can be loaded (libbpf,
 *    BTF), no event at all: the in-kernel accountant
 *    (src/perf/switchacct.c, on the sched_switch raw tracepoint) applies
 *    the same rules, makes the kept switch-outs' samples itself, and
 *    times every interval (wall time since the thread's previous
 *    switch-out less the CPU time run since), keeping per-thread totals
 *    by class, read every OFFCPU_SCAN_NS; the intervals needed one by
 *    one (a kept sample's, a D interval, the first of a thread off the
 *    CPU at the start) come whole from its ring buffer, with the rule
 *    that kept the sample, and its samples from the same ring
 *    (offcpu_swa.c).  A switch then costs the program's one run, not an
 *    event's sample path and two records written inside the switch and
 *    paired here (docs/offcpu.md).  Its st is never opened: it gives
 *    those samples their layout and tag.
 *  - --offcpu-stacks=all (and prof stat's state mode): sched:sched_switch
 *    on every switch-out with its own full stack (all) or kernel chain
 *    (state): exact, what the sampled mode is checked against.
 *
 * Design notes / invariants:
 *  - Time is never sampled: the pairing (src/record/switchpair.c) charges
 *    every interval's ns; only its stack is estimated.  The state is exact
 *    too: preempted from the switch record, D from the D ring, else
 *    voluntary sleep; a D interval has its own stack (I/O wait is exact).
 *  - The estimator (per thread, class and window): offcpu_rules.c.
 *  - The samples of one switch-out arrive in time order before its switch
 *    record (the rings are merged by time); D beats stale beats random.
 *    A filtered sample waits for its switch record, whose preempt flag is
 *    the class the filter keyed its stale rule by (task_is_runnable() in
 *    both), and is fed to the pairing then, with the rule replayed.
 *  - The offset and size of prev_state come from the tracepoint's format
 *    file, never hard-coded.
 *  - The window: a thread opened by prof_offcpu_open_task (attach) or
 *    named by prof_offcpu_present (-a) before prof_offcpu_enable existed
 *    when the recording began.  One off the CPU then is charged from
 *    that start (to its first switch-in, or the end if it never ran) to
 *    the stack /proc showed at the start (its kernel frames, or the wait
 *    channel without root), under "[off-CPU when recording began]": no
 *    switch-out of it was sampled.  A thread still off the CPU at the
 *    end is charged up to it, like any interval (its own stack, or
 *    through the estimator).
 *  - io keeps the I/O-wait intervals (pid, start, end) until the timeline
 *    sampler has used them for its I/O-wait% (prof_offcpu_io_prune).
 */
#include "prof/proc.h"
#include "prof/switchpair.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "offcpu-priv.h"

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

/* Can the kernel drop a sample from an overflow program (Linux 6.10)? */
static bool bpf_filters_samples(void)
{
	struct utsname u;
	int major = 0, minor = 0;

	return uname(&u) == 0 && sscanf(u.release, "%d.%d", &major, &minor) == 2 &&
	       (major > 6 || (major == 6 && minor >= 10));
}

/* A user-stack sample of the context-switches event at every switch-out,
 * which the BPF program `prog` filters (with the accountant, prog -1: the
 * layout of its samples, never opened); no raw data (no tracepoint), and
 * no kernel callchain: the kernel makes the callchain of every switch-out
 * before the program runs (perf_prepare_sample), an unwind of the kernel
 * stack inside the switch that costs a ping-pong pair 40% of its round
 * trips here, dropped sample or not (docs/offcpu.md).  With -g fp the
 * chain is the user one alone. */
static int setup_filtered_event(struct prof_perf *pf, const struct prof_perf_config *main, int prog)
{
	static const struct prof_perf_event_desc cs = { "context-switches", PERF_TYPE_SOFTWARE,
							PERF_COUNT_SW_CONTEXT_SWITCHES, false };
	struct prof_perf_config cfg = *main;

	cfg.event = &cs;
	cfg.freq = 1;
	cfg.stack_size = MIN(cfg.stack_size, OFFCPU_STACK_SIZE);
	cfg.ring_pages = stack_ring_pages(&cfg, main->ring_pages);
	if (prof_perf_init(pf, &cfg) < 0)
		return -EINVAL;
	setup_attr(pf, 1, cfg.callgraph == PROF_CG_FP);
	pf->attr.exclude_callchain_kernel = 1;
	pf->attr.sample_type &= ~(uint64_t)PERF_SAMPLE_RAW;
	pf->open_bpf = prog + 1;
	return 0;
}

/* Can we open the tracepoint here (paranoid, CAP_PERFMON)?  On ourselves. */
static int probe(struct prof_offcpu *oc, char *why, size_t len)
{
	struct perf_event_attr a = oc->pf.rings ? oc->pf.attr : oc->dd.attr;
	int fd;

	if (!oc->pf.rings && !oc->dd.rings)
		return 0;	/* the accountant's events: no tracepoint */
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

/* The rings of the mode, the time ring first. */
static size_t perfs_of(struct prof_offcpu *oc, struct prof_perf **out)
{
	struct prof_perf *all[] = { &oc->sw, &oc->pf, oc->swa ? NULL : &oc->st, &oc->dd };
	size_t n = 0;

	for (size_t i = 0; i < ARRAY_SIZE(all); i++)
		if (all[i] && all[i]->rings)
			out[n++] = all[i];
	return n;
}

static void close_events(struct prof_offcpu *oc)
{
	struct prof_perf *pfs[PROF_OFFCPU_MAX_PERFS + 1];
	size_t n = perfs_of(oc, pfs);

	for (size_t i = 0; i < n; i++)
		prof_perf_close(pfs[i]);
	if (oc->prog >= 0)
		close(oc->prog);
	oc->prog = -1;
	prof_bpf_swa_free(oc->swa);
	oc->swa = NULL;
}

/* The sampled mode's events: the filtered ring where the kernel can
 * filter with BPF, else the tracepoint 1 in `period`; the D ring. */
static int setup_sampled(struct prof_offcpu *oc, const struct prof_perf_config *cfg)
{
	struct prof_bpf_task_layout task;

	char why[256];

	if (bpf_filters_samples()) {
		oc->classed = prof_bpf_task_layout(&task);
		if (oc->classed && !getenv("PROF_OFFCPU_SWITCH_RECORDS"))
			oc->swa = prof_bpf_swa_open(&task, (uint32_t)getpid(), oc->period, OFFCPU_STALE_NS,
						    OFFCPU_STALE_PER_CPU,
						    cfg->callgraph == PROF_CG_DWARF ? PROF_SWA_USER_STACK
						    : cfg->callgraph == PROF_CG_FP ? PROF_SWA_USER_CHAIN
										 : PROF_SWA_USER_REGS,
						    MIN(cfg->stack_size, OFFCPU_STACK_SIZE), why, sizeof(why));
		if (!oc->swa)
			oc->prog = prof_bpf_switch_filter((uint32_t)getpid(), oc->period, OFFCPU_STALE_NS,
							  oc->classed ? &task : NULL);
	}
	if (oc->swa || oc->prog >= 0) {
		if (setup_filtered_event(&oc->st, cfg, oc->prog) < 0)
			return -EINVAL;
	} else if (setup_stack_event(oc, &oc->st, cfg, oc->period) < 0)
		return -EINVAL;
	/* With the accountant, D-state switch-outs get user stacks by its
	 * rules like the others, and kernel stacks from its program. */
	if (oc->swa)
		return 0;
	if (setup_stack_event(oc, &oc->dd, cfg, 1) < 0)
		return -EINVAL;
	oc->dd.open_filter = D_FILTER;
	return 0;
}

/* The events of the mode; 0 or -EINVAL. */
static int setup_events(struct prof_offcpu *oc, const struct prof_perf *main)
{
	struct prof_perf_config cfg = main->cfg;

	switch (oc->mode) {
	case PROF_OFFCPU_SAMPLED:
		return setup_sampled(oc, &cfg);
	case PROF_OFFCPU_STATE:
		cfg.callgraph = PROF_CG_NONE;
		/* fall through */
	case PROF_OFFCPU_ALL:
		return setup_stack_event(oc, &oc->pf, &cfg, 1);
	}
	return -EINVAL;
}

struct prof_offcpu *prof_offcpu_new(const struct prof_perf *main, enum prof_offcpu_mode mode,
				    uint32_t period, char *why, size_t len)
{
	struct prof_offcpu *oc = xcalloc(1, sizeof(*oc));

	/* period 1 is every switch-out's own stack */
	if (mode == PROF_OFFCPU_SAMPLED && period <= 1)
		mode = PROF_OFFCPU_ALL;
	oc->mode = mode;
	oc->period = period;
	oc->window_max = OFFCPU_WINDOW_MAX_NS;
	oc->prog = -1;
	oc->desc = (struct prof_perf_event_desc){ "sched:sched_switch", PERF_TYPE_TRACEPOINT, 0, false };
	if (read_tracepoint(oc, why, len) < 0)
		goto fail;
	if (setup_events(oc, main) < 0) {
		snprintf(why, len, "bad off-CPU event configuration");
		close_events(oc);
		goto fail;
	}
	if (probe(oc, why, len) < 0 || (!oc->swa && setup_switch_event(oc, &main->cfg) < 0)) {
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

int prof_offcpu_only(struct prof_offcpu *oc, const pid_t *pids, size_t n)
{
	return oc->swa ? prof_bpf_swa_only(oc->swa, pids, n) : -ENOTSUP;
}

void prof_offcpu_present(struct prof_offcpu *oc, pid_t tid)
{
	VEC_PUSH(&oc->opened, tid);
}

int prof_offcpu_open_cpu(struct prof_offcpu *oc, int cpu)
{
	oc->per_cpu = true;
	return open_each(oc, prof_perf_open_cpu, cpu);
}

/* prev_pid is the tid going off the CPU: a filter on it keeps the stack
 * copies of prof's own waits (a pump thread blocks after every drain)
 * from filling the ring that the machine's stacks need.  The BPF filters
 * leave them out by themselves.  An event filtered when it was opened (the
 * D ring) keeps that filter: a tracepoint event takes one filter, a second
 * is EEXIST (kernel-notes/offcpu.md); prof's few uninterruptible waits in
 * it are dropped by the replay with the rest of its own switches. */
int prof_offcpu_exclude_self(struct prof_offcpu *oc)
{
	struct prof_perf *tps[] = { &oc->pf, oc->prog < 0 && !oc->swa ? &oc->st : NULL };
	struct strbuf f = STRBUF_INIT;
	pid_t *tids;
	size_t n;
	int ret;

	if ((ret = prof_proc_tids(getpid(), &tids, &n)) < 0)
		return ret;
	sb_adds(&f, "prev_pid != 0");
	for (size_t i = 0; i < n; i++)
		sb_addf(&f, " && prev_pid != %d", (int)tids[i]);
	for (size_t i = 0; i < ARRAY_SIZE(tps) && ret >= 0; i++) {
		if (tps[i] && tps[i]->rings)
			ret = prof_perf_set_filter(tps[i], sb_str(&f));
	}
	free(tids);
	sb_release(&f);
	return ret;
}

static void begin_window(struct prof_offcpu *oc);

/* The accountant starts, for the processes of the threads opened
 * (threads attached one by one) unless events are per CPU, or for the
 * launched command from its exec on. */
void prof_offcpu_arm(struct prof_offcpu *oc, pid_t launched)
{
	pid_t *pids = xcalloc(oc->opened.n + 1, sizeof(*pids));
	size_t n = 0;

	int ret = 0;

	for (size_t i = 0; oc->swa && !oc->per_cpu && !launched && i < oc->opened.n; i++)
		if ((pids[n] = prof_proc_tgid(oc->opened.v[i])) > 0)
			n++;
	if (oc->swa && ((launched && (ret = prof_bpf_swa_at_exec(oc->swa, launched)) < 0) ||
			(n && (ret = prof_bpf_swa_only(oc->swa, pids, n)) < 0) ||
			(ret = prof_bpf_swa_start(oc->swa)) < 0))
		warning("off-CPU time is not recorded: the in-kernel accountant cannot start (%s)", strerror(-ret));
	free(pids);
}

/* The time ring is on before the stacks and off after them: every stack
 * sample has its switch records. */
void prof_offcpu_enable(struct prof_offcpu *oc)
{
	begin_window(oc);
	struct prof_perf *pfs[PROF_OFFCPU_MAX_PERFS];
	size_t n = prof_offcpu_perfs(oc, pfs);

	for (size_t i = 0; i < n; i++)
		prof_perf_enable(pfs[i]);
	prof_offcpu_arm(oc, 0);
}

void prof_offcpu_disable(struct prof_offcpu *oc)
{
	struct prof_perf *pfs[PROF_OFFCPU_MAX_PERFS];
	size_t n = prof_offcpu_perfs(oc, pfs);

	if (oc->swa)
		prof_bpf_swa_stop(oc->swa);
	for (size_t i = n; i-- > 0;)
		prof_perf_disable(pfs[i]);
	oc->end = now_ns();
}

static void est_free(struct est *e)
{
	for (int c = 0; c < NCLASSES; c++) {
		VEC_FREE(&e->s[c]);
		VEC_FREE(&e->d[c]);
	}
	VEC_FREE(&e->waiting);
	VEC_FREE(&e->kstacks);
	free(e);
}

static void est_free_all(struct prof_offcpu *oc)
{
	size_t it = 0;
	uint64_t tid, v;

	while (u64map_next(&oc->est_by_tid, &it, &tid, &v)) {
		est_free((struct est *)(uintptr_t)v);
	}
	u64map_free(&oc->est_by_tid);
}

void prof_offcpu_free(struct prof_offcpu *oc)
{
	if (!oc)
		return;
	close_events(oc);
	prof_switchpair_free(oc->sp);
	est_free_all(oc);
	VEC_FREE(&oc->io);
	prof_offcpu_free_held(oc);
	VEC_FREE(&oc->opened);
	u64map_free(&oc->at_start);
	prof_kstacks_free(oc->kstacks);
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
	return perfs_of(oc, out);
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

static void add_ns(struct prof_offcpu *oc, uint64_t t, uint32_t thread, uint32_t node,
		   enum prof_metric m, uint64_t ns)
{
	oc->sink.add(oc->sink.arg, t, thread, node, PROF_M_OFFCPU_NS, ns, 0);
	oc->sink.add(oc->sink.arg, t, thread, node, m, ns, 0);
}

/* I/O wait intervals are kept one by one for the time tracks, charged
 * with their own stack or through the estimator. */
static void note_io(struct prof_offcpu *oc, const struct prof_switch_interval *iv, enum prof_metric m)
{
	if (m == PROF_M_IOWAIT_NS)
		VEC_PUSH(&oc->io, ((struct io_interval){ iv->t_out, iv->t_in, iv->pid }));
}

static void add(struct prof_offcpu *oc, const struct prof_switch_interval *iv, uint32_t thread,
		uint32_t node, enum prof_metric m)
{
	add_ns(oc, iv->t_out, thread, node, m, iv->t_in - iv->t_out);
	note_io(oc, iv, m);
}

/* --- the sampled mode's estimator ------------------------------------------------ */

struct est *prof_offcpu_est(struct prof_offcpu *oc, uint32_t tid)
{
	bool created;
	uint64_t *slot = u64map_slot(&oc->est_by_tid, tid, &created);

	if (created)
		*slot = (uintptr_t)xcalloc(1, sizeof(struct est));
	return (struct est *)(uintptr_t)*slot;
}

/* A D state's verdict from its kernel frames. */
/* --- the window's edges -------------------------------------------------------------- */

/* What tid waited in when the window began, as /proc shows it: a stack
 * under "[off-CPU when recording began]" and the state's metric. */
static void note_at_start(struct prof_offcpu *oc, pid_t tid)
{
	uint32_t frames[PROF_MAX_FRAMES + 1], node;
	char st = prof_proc_state(tid);
	size_t n = prof_kstacks_of_proc(oc->kstacks, tid, frames, PROF_MAX_FRAMES);
	enum prof_metric m;

	frames[n++] = marker_frame(oc, &oc->at_start_frame, "[off-CPU when recording began]");
	node = prof_node_from_stack(oc->p, frames, n);
	m = st == 'R' ? PROF_M_PREEMPT_NS : st == 'D' ? prof_offcpu_with_io(PROF_M_UNINT_NS, prof_offcpu_kernel_stack_in_io(oc->p, node))
							: PROF_M_SLEEP_NS;
	u64map_put(&oc->at_start, (uint64_t)tid, (uint64_t)node << 8 | (uint64_t)m);
}

/* tid (of pid) existed when the window began: the accountant is told,
 * unless the thread is gone by now.  An entry of a thread that exited
 * before it was made would never be freed (its exit already ran), and a
 * later thread given the same tid would inherit it, charged from the
 * start; one that exits after is freed by the accountant's exit hook. */
static void seed(struct prof_offcpu *oc, pid_t tid, pid_t pid, uint64_t start)
{
	uint64_t cpu = prof_proc_cpu_ns(tid);

	if (!cpu || prof_bpf_swa_seed(oc->swa, tid, pid, start, cpu) < 0)
		return;
	if (prof_proc_tgid(tid) != pid)
		prof_bpf_swa_forget(oc->swa, tid);
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
	for (size_t i = 0; oc->sp && i < oc->opened.n; i++) {
		if (!ids[2 * i])
			continue;
		if (oc->swa)
			seed(oc, oc->opened.v[i], (pid_t)ids[2 * i], start);
		else
			prof_switchpair_begin(oc->sp, (uint32_t)oc->opened.v[i], ids[2 * i], ids[2 * i + 1], start);
	}
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

static uint32_t unsampled_node(struct prof_offcpu *oc)
{
	uint32_t f = 0;

	if (!oc->unsampled_node)
		oc->unsampled_node = prof_node_child(oc->p, 0, marker_frame(oc, &f, "[stack not sampled]"));
	return oc->unsampled_node;
}

static enum prof_metric class_metric(int cls)
{
	static const enum prof_metric m[NCLASSES] = { PROF_M_PREEMPT_NS, PROF_M_SLEEP_NS, PROF_M_UNINT_NS,
						       PROF_M_IOWAIT_NS };
	return m[cls];
}

/* The class of an interval not preempted, from its metric. */
static int class_of(enum prof_metric m)
{
	return m == PROF_M_IOWAIT_NS ? C_IOWAIT : m == PROF_M_UNINT_NS ? C_UNINT : C_SLEEP;
}

/* One interval of a thread in the sampled mode, of metric m; s: its own
 * random or stale sample, or NULL. */
static void est_add(struct prof_offcpu *oc, const struct prof_switch_interval *iv,
		    const struct prof_switch_sample *s, enum prof_metric m)
{
	struct est *e = prof_offcpu_est(oc, iv->tid);
	int cls = iv->preempt ? C_PREEMPT : class_of(m);
	uint64_t ns = iv->t_in - iv->t_out;

	if (!e->start[cls])
		e->start[cls] = iv->t_out;
	e->thread = iv->thread;
	e->exact[cls] += ns;
	if (cls == C_UNINT || cls == C_IOWAIT)
		VEC_PUSH(&e->d[cls], ((struct span){ iv->t_out, ns }));
	oc->stats.estimated++;
	if (!s)
		return;
	uint32_t w = s->tag == K_RANDOM ? oc->period : 1;
	VEC_PUSH(&e->s[cls], ((struct prof_offcpu_part){ .t_out = iv->t_out, .ns = ns, .thread = s->thread,
							 .node = s->node, .weight = w }));
}

/* Charges ns of class c to node from the window's D intervals onwards
 * from *at (index, ns used of it), so that each piece lies within an
 * interval: a D interval is a span of the time tracks (I/O wait, a
 * marker), and a share charged whole at its sample's switch-out would
 * outrun it.  Classes without intervals kept are charged at t. */
static void charge_share(struct prof_offcpu *oc, struct est *e, int c, uint64_t t, uint32_t thread,
			 uint32_t node, uint64_t ns, size_t at[2])
{
	enum prof_metric m = class_metric(c);

	while (ns && at[0] < e->d[c].n) {
		const struct span *sp = &e->d[c].v[at[0]];
		uint64_t take = sp->ns - at[1] < ns ? sp->ns - at[1] : ns;
		add_ns(oc, sp->t_out + at[1], thread, node, m, take);
		ns -= take;
		at[1] += take;
		if (at[1] == sp->ns) {
			at[0]++;
			at[1] = 0;
		}
	}
	if (ns)
		add_ns(oc, t, thread, node, m, ns);
}

/* Shares class c's exact time among its samples (weight x ns); a class
 * with no sample waits, or (final) goes to [stack not sampled]. */
static void est_flush(struct prof_offcpu *oc, struct est *e, int c, bool final)
{
	size_t at[2] = { 0, 0 };

	if (!e->exact[c] || (!e->s[c].n && !final))
		return;	/* nothing, or a class that waits for a sample */
	if (!e->s[c].n) {
		oc->stats.unsampled_ns += e->exact[c];
		if (e->thread == PROF_NONE)
			e->thread = prof_replay_thread(oc->rp, (pid_t)e->pid, (pid_t)e->tid);
		charge_share(oc, e, c, e->start[c], e->thread, unsampled_node(oc), e->exact[c], at);
	}
	prof_offcpu_share(e->exact[c], e->s[c].v, e->s[c].n);
	for (size_t i = 0; i < e->s[c].n; i++) {
		const struct prof_offcpu_part *x = &e->s[c].v[i];
		if (x->share)
			charge_share(oc, e, c, x->t_out, x->thread, x->node, x->share, at);
	}
	e->exact[c] = 0;
	e->s[c].n = 0;
	e->d[c].n = 0;
	e->start[c] = 0;
}

/* Has class c's window run its course (see OFFCPU_WINDOW_NS)? */
static bool est_window_done(const struct prof_offcpu *oc, const struct est *e, int c)
{
	uint64_t age = oc->newest > e->start[c] ? oc->newest - e->start[c] : 0;

	if (!e->start[c] || age < OFFCPU_WINDOW_NS)
		return false;
	return age >= oc->window_max || prof_offcpu_cv2(e->s[c].v, e->s[c].n) <= OFFCPU_WINDOW_CV2;
}

/* The windows that have run their course (all: every one, final). */
static void est_settle(struct prof_offcpu *oc, bool all)
{
	size_t it = 0;
	uint64_t tid, v;

	while (u64map_next(&oc->est_by_tid, &it, &tid, &v)) {
		struct est *e = (struct est *)(uintptr_t)v;
		for (int c = 0; c < NCLASSES; c++)
			if (all ? e->start[c] != 0 : est_window_done(oc, e, c))
				est_flush(oc, e, c, all);
	}
}

/* A thread exited: its last window closes, its state goes. */
void prof_offcpu_est_exit(struct prof_offcpu *oc, uint32_t tid)
{
	uint64_t v;

	if (!u64map_get(&oc->est_by_tid, tid, &v))
		return;
	struct est *e = (struct est *)(uintptr_t)v;

	for (int c = 0; c < NCLASSES; c++)
		est_flush(oc, e, c, true);
	est_free(e);
	u64map_del(&oc->est_by_tid, tid);
}

/* Is an interval still open at the end that of a thread gone since (its
 * tid no longer its process's, or a zombie)?  Then that switch-out was its
 * last, whose EXIT the pairing did not see first (a record that came
 * late into its ring): a dead thread is not off the CPU until the end. */
static bool gone_at_end(const struct prof_switch_interval *iv)
{
	char st;

	if (!(iv->edge & PROF_SWITCH_TO_END))
		return false;
	st = prof_proc_state((pid_t)iv->tid);
	return prof_proc_tgid((pid_t)iv->tid) != (pid_t)iv->pid || st == 'Z' || st == 'X';
}

/* The pairing's verdict on one interval: charged now with its own stack
 * (a D interval, every interval with --offcpu-stacks=all), or through the
 * estimator. */
void prof_offcpu_charge(void *arg, const struct prof_switch_interval *iv, const struct prof_switch_sample *s,
			enum prof_metric m)
{
	struct prof_offcpu *oc = arg;

	if (gone_at_end(iv))
		return;
	oc->newest = MAX(oc->newest, iv->t_in);
	if (iv->edge & PROF_SWITCH_FROM_START)
		charge_from_start(oc, iv);
	else if (s && (s->tag == K_D || s->tag == K_OWN))
		add(oc, iv, s->thread, s->node, m);
	else if (oc->mode == PROF_OFFCPU_SAMPLED) {
		est_add(oc, iv, s, m);
		note_io(oc, iv, m);
	}
	else {
		oc->stats.stacks_lost++;
		add(oc, iv, iv->thread, lost_node(oc), m);
	}
}

/* --- the replay consumer ------------------------------------------------------------ */

/* A sampled-mode sample to the pairing: a second sample of the same
 * switch-out (no switch record of the thread between them) replaces the
 * first if its kind ranks higher. */
static void feed(struct prof_offcpu *oc, uint32_t tid, const struct prof_switch_sample *out, enum kind k)
{
	struct est *e = prof_offcpu_est(oc, tid);

	if (e->fed && e->fed > e->last_out) {
		if (k > e->fed_kind && prof_switchpair_restack(oc->sp, tid, out->time - e->fed, out)) {
			e->fed = out->time;
			e->fed_kind = (uint8_t)k;
		}
		return;
	}
	e->fed = out->time;
	e->fed_kind = (uint8_t)k;
	prof_switchpair_sample(oc->sp, tid, out);
}

/* The filter's choice for the pending filtered sample, as it made it
 * (src/perf/bpf_filter.c): stale if the last stale one of the thread and
 * class is OFFCPU_STALE_NS old or there is none, else random; then the
 * sample goes to the pairing. */
static void replay_stale(struct prof_offcpu *oc, uint32_t tid, struct est *e, bool preempt)
{
	int cls = oc->classed && !preempt ? 1 : 0;

	e->pend.tag = prof_offcpu_stale_replay(&e->stale, e->pend.time, cls, OFFCPU_STALE_NS) ? K_STALE : K_RANDOM;
	oc->stats.by_rule[e->pend.tag]++;
	e->pend_valid = false;
	feed(oc, tid, &e->pend, (enum kind)e->pend.tag);
}

/* Was the switch-out of a sample at time t, already seen, preempted?  The
 * first remembered at or after t (the oldest remembered if more passed). */
static bool seen_out_preempted(const struct est *e, uint64_t t)
{
	uint64_t best = UINT64_MAX;
	bool pre = false;

	for (unsigned i = 0; i < MIN(e->nouts, OUTS_KEPT); i++) {
		uint64_t vt = e->outs[i] & ~OUT_PREEMPT;
		if (vt >= t && vt < best) {
			best = vt;
			pre = e->outs[i] & OUT_PREEMPT;
		}
	}
	return pre;
}

/* A sample of the filtered ring: it waits for its switch record, whose
 * preempt flag is the class the filter used; or, if that record came
 * first, it is replayed now. */
static void on_filtered(struct prof_offcpu *oc, uint32_t tid, const struct prof_switch_sample *out)
{
	struct est *e = prof_offcpu_est(oc, tid);

	if (e->pend_valid)	/* the previous one's switch record was lost */
		replay_stale(oc, tid, e, false);
	e->pend = *out;
	e->pend_valid = true;
	if (e->nouts && out->time <= e->last_out)
		replay_stale(oc, tid, e, seen_out_preempted(e, out->time));
}

static void on_sample(void *arg, const struct prof_replay_sample *rs)
{
	struct prof_offcpu *oc = arg;
	const struct prof_perf_sample *s = rs->s;
	struct prof_switch_sample out = { s->time, rs->thread, rs->node, K_OWN, 0 };
	uint64_t state;

	if (!oc->swa || rs->event != &oc->st)	/* the accountant's own run ahead of the rings */
		oc->horizon = MAX(oc->horizon, s->time);
	if (!s->pid)
		return;	/* the idle task (-a) */
	if (rs->event == &oc->st) {
		out.tag = K_RANDOM;
		out.metric = PROF_M_SLEEP_NS;	/* the estimator classes by the switch record */
		oc->stats.full_stacks++;
		if (oc->swa) {
			VEC_PUSH(&prof_offcpu_est(oc, s->tid)->waiting, ((struct waiting_sample){ out, true }));
			return;
		}
		if (oc->prog >= 0) {
			on_filtered(oc, s->tid, &out);
			return;
		}
		oc->stats.by_rule[K_RANDOM]++;
		feed(oc, s->tid, &out, K_RANDOM);
		return;
	}
	if (rs->event != &oc->pf && rs->event != &oc->dd)
		return;
	state = prev_state_of(oc, s);
	out.metric = (uint8_t)prof_offcpu_classify(state, prof_offcpu_kernel_stack_in_io(oc->p, rs->node));
	if (rs->event == &oc->dd) {
		out.tag = K_D;
		oc->stats.full_stacks++;
		oc->stats.by_rule[K_D]++;
		feed(oc, s->tid, &out, K_D);
	} else
		prof_switchpair_sample(oc->sp, s->tid, &out);
}

/* The switch records of the time ring. */
static void on_switch(void *arg, const void *event, const struct prof_replay_switch *sw)
{
	struct prof_offcpu *oc = arg;
	const struct prof_perf_sample_id *id = sw->id;

	if (event != &oc->sw || !id->pid)
		return;	/* the idle task's switches (-a) are no one's off-CPU time */
	if (sw->out) {
		if (oc->mode == PROF_OFFCPU_SAMPLED) {
			struct est *e = prof_offcpu_est(oc, id->tid);
			if (e->pend_valid && e->pend.time <= id->time)
				replay_stale(oc, id->tid, e, sw->preempt);
			e->outs[e->nouts++ % OUTS_KEPT] = id->time | (sw->preempt ? OUT_PREEMPT : 0);
			e->last_out = id->time;
		}
		prof_switchpair_out(oc->sp, id->tid, id->pid, sw->thread, id->time, sw->preempt);
	} else
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

	oc->horizon = MAX(oc->horizon, tk->time);	/* the records before it are replayed */
	if (!exit || oc->swa)
		return;	/* the accountant's exit record comes after the thread's last interval */
	prof_switchpair_exit(oc->sp, tk->tid, tk->time);
	prof_offcpu_est_exit(oc, tk->tid);
}

static void on_batch_end(void *arg)
{
	struct prof_offcpu *oc = arg;

	if (oc->swa)
		prof_offcpu_poll_accountant(oc);
	prof_switchpair_prune(oc->sp);
	uint64_t now = now_ns();

	if (now - oc->settled >= OFFCPU_SETTLE_NS) {
		est_settle(oc, false);
		oc->settled = now;
	}
}

void prof_offcpu_finish(struct prof_offcpu *oc)
{
	if (!oc)
		return;
	if (oc->swa)
		prof_offcpu_finish_accountant(oc);
	prof_switchpair_finish(oc->sp, oc->end);
	est_settle(oc, true);
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
	oc->sp = prof_switchpair_new(prof_offcpu_charge, oc);
	oc->kstacks = prof_kstacks_new(p);
	prof_replay_add_consumer(rp, &offcpu_ops, oc);
}

void prof_offcpu_live(struct prof_offcpu *oc)
{
	oc->window_max = OFFCPU_WINDOW_NS;
}

struct prof_perf *prof_offcpu_perf(struct prof_offcpu *oc)
{
	return &oc->pf;
}

void prof_offcpu_rings_passed(struct prof_offcpu *oc, uint64_t t)
{
	if (oc)
		oc->horizon = MAX(oc->horizon, t);
}

void prof_offcpu_pump_with(struct prof_offcpu *oc, struct prof_perf *pf)
{
	if (!oc || !oc->swa)
		return;
	pf->pump_also = prof_bpf_swa_pull;
	pf->pump_also_arg = oc->swa;
}

void prof_offcpu_python(struct prof_offcpu *oc, struct prof_python *py, struct prof_perf *waits)
{
	oc->py = py;
	if (!py || !oc->swa)
		return;
	if (prof_bpf_swa_then(oc->swa, prof_python_switch_prog(py)) == 0) {
		prof_python_frames_at_switch(py);
		oc->py_at_switch = true;
	}
	else if (prof_bpf_swa_wake_fd(oc->swa) >= 0)
		waits->also_fd = 1 + prof_bpf_swa_wake_fd(oc->swa);
}

enum prof_offcpu_mode prof_offcpu_mode(const struct prof_offcpu *oc)
{
	return oc->mode;
}

uint32_t prof_offcpu_period(const struct prof_offcpu *oc)
{
	return oc->mode == PROF_OFFCPU_SAMPLED ? oc->period : 1;
}

uint32_t prof_offcpu_stale_per_cpu(const struct prof_offcpu *oc)
{
	return oc->swa ? OFFCPU_STALE_PER_CPU : 0;
}

bool prof_offcpu_in_kernel(const struct prof_offcpu *oc)
{
	return oc->swa != NULL;
}

void prof_offcpu_own_samples(const struct prof_offcpu *oc, struct prof_perf *cpu)
{
	if (!oc || !oc->swa || !cpu->cfg.event->is_clock || prof_bpf_own_restart(true) < 0 ||
	    cpu->bpf_prog > 0)
		return;	/* the Python reader's program makes the same test */
	if ((cpu->targets = prof_bpf_targets_open(NULL, 0)))
		cpu->bpf_prog = prof_bpf_targets_prog(cpu->targets);
}

bool prof_offcpu_filtered(const struct prof_offcpu *oc)
{
	return oc->prog >= 0 || oc->swa;
}

bool prof_offcpu_stale_by_class(const struct prof_offcpu *oc)
{
	return (oc->prog >= 0 || oc->swa) && oc->classed;
}
