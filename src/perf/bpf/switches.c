/*
 * switches.c - the in-kernel off-CPU accountant: the BPF program
 * (BPF_PROG_TYPE_PERF_EVENT) that prof sets on its context-switches
 * software event, run at every switch-out of the recorded threads.  It
 * does two jobs in that one run:
 *  - it times the thread's last off-CPU interval, which ended when the
 *    thread came back: wall time since its previous switch-out minus the
 *    CPU time it has run since (se.sum_exec_runtime), so no hook at the
 *    switch-in is needed; and adds it to the thread's totals by class
 *    (preempted or not), or hands it over whole;
 *  - it chooses whether this switch-out gets a stack sample (return 1)
 *    or not (0): a thread's first in its class (preempted, asleep, in D
 *    state) after OFFCPU_STALE ns ("stale", weight 1), else 1 in n at
 *    random (weight n).  D-state switch-outs are sampled so too (the
 *    verdict made by swa_d_stack below); the kernel's in_iowait flag
 *    tells I/O wait, and the kernel stack is taken for the sampled ones
 *    and for the D waits not so flagged.
 * Built with clang -target bpf into build/gen/switches.bpf.o and embedded
 * in prof (src/perf/switchacct.c loads it; src/perf/bpf_filter.c is the
 * hand-assembled filter used without libbpf).
 *
 * Handed over whole, through the ring buffer (the recorder needs each
 * one's own stack and times): an interval whose switch-out was sampled,
 * one in D state, and the first one of a thread the recorder seeded as
 * off the CPU at the start.  A thread's last switch-out (TASK_DEAD) sends
 * its final totals and frees its entry.  A D switch-out sends its kernel
 * stack, when it has one, right after the interval that the switch-out
 * closes.
 *
 * Design notes / invariants:
 *  - The class is the kernel's task_is_runnable() (on_rq and not a
 *    delayed dequeue), which also sets PERF_RECORD_SWITCH's preempt flag.
 *    D state is a voluntary switch (nvcsw went up: the task called
 *    schedule() with a sleep state) with sched_contributes_to_load, which
 *    the scheduler set from this very switch's state as it blocked the
 *    task; neither the class nor __state tells here, as a waker on
 *    another CPU may already have made the task runnable again.
 *  - The kernel stamps the sample before it runs this program, so a kept
 *    switch-out's t_out is after its sample's time; the D ring's sample
 *    (sched_switch) comes before it too.
 *  - Off-CPU time so measured is the program's own clock (wall minus
 *    thread CPU time), as the kernel hands CPU time over when it picks
 *    the next thread.
 *  - task_struct offsets come from the recorder (the kernel's BTF), in
 *    conf[0]: no CO-RE relocations.  Time is bpf_ktime_get_ns
 *    (CLOCK_MONOTONIC), the clock of prof's perf samples.
 *  - An exiting thread (PF_EXITING, set before its exit hook runs) is
 *    left alone: with per-CPU events (-a) its switch-outs after the
 *    exit hook would make an entry that nothing frees, and a later
 *    thread given the same tid would inherit it.
 *  - A thread's entry is written by its own switch-outs only (one at a
 *    time) and read by the recorder, which takes differences of totals
 *    that only grow: no lock.
 *  - A D switch-out's kernel stack is taken at the sched_switch
 *    tracepoint (a raw tracepoint program: it unwinds only when the
 *    switch-out is in D state), not by this program: a perf_event
 *    program that may call a stack helper has the kernel make its
 *    event's callchain before every run, kept or not, inside the switch
 *    (kernel-notes/offcpu-accountant.md).  The tracepoint runs just
 *    before the context-switches event on the same CPU, so it leaves the
 *    stack in a per-CPU slot that the switch-out takes.
 *  - Attached to processes with events per CPU (prof record -p), only
 *    the targets (targets.h) are accounted and sampled; a fork of one
 *    adds the child in the kernel, so no child's first interval escapes
 *    while the recorder learns of it.
 */
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

#include "switches.h"
#include "targets.h"

#define PF_EXITING 0x4

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct swa_conf);
} conf SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SWA_MAX_THREADS);
	__type(key, __u32);
	__type(value, struct swa_thread);
} threads SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, SWA_RING_BYTES);
} events SEC(".maps");

/* The kernel stack of this CPU's D switch-out under way: tid 0 when none. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct swa_dstack);
} dstack SEC(".maps");

/* counts[0]: threads not accounted (map full); [1]: records lost (ring
 * full); [2]: D switch-outs without their kernel stack */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 3);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

static __always_inline void count(__u32 i)
{
	__u64 *c = bpf_map_lookup_elem(&counts, &i);

	if (c)
		(*c)++;
}

static __always_inline __u64 task_read(const void *task, __u32 off, __u32 size)
{
	__u64 v = 0;

	if (size == 8)
		bpf_probe_read_kernel(&v, 8, (const char *)task + off);
	else if (size == 4)
		bpf_probe_read_kernel(&v, 4, (const char *)task + off);
	else if (size == 1)
		bpf_probe_read_kernel(&v, 1, (const char *)task + off);
	return v;
}

static __always_inline void emit(__u32 kind, __u32 tid, const struct swa_thread *t, __u64 t_out,
				 __u64 t_in, __u32 flags)
{
	struct swa_rec r = { .kind = kind, .tid = tid, .pid = t->pid, .flags = flags,
			     .t_out = t_out, .t_in = t_in, .born = t->born };

	r.ns[0] = t->ns[0];
	r.ns[1] = t->ns[1];
	r.n[0] = t->n[0];
	r.n[1] = t->n[1];
	if (bpf_ringbuf_output(&events, &r, sizeof(r), BPF_RB_NO_WAKEUP))
		count(1);
}

/* The thread's entry, made on its first switch-out. */
static __always_inline struct swa_thread *entry_of(__u32 tid, __u32 tgid, __u64 now)
{
	struct swa_thread *t = bpf_map_lookup_elem(&threads, &tid);

	if (t)
		return t;
	struct swa_thread z = { .born = now, .pid = tgid };
	bpf_map_update_elem(&threads, &tid, &z, BPF_NOEXIST);
	if (!(t = bpf_map_lookup_elem(&threads, &tid)))
		count(0);
	return t;
}

/* The interval that ended when the thread last came on the CPU: off the
 * CPU from t_out to now, less what it has run since. */
static __always_inline void close_interval(__u32 tid, struct swa_thread *t, __u64 now, __u64 sum)
{
	__u64 ran = sum > t->sum ? sum - t->sum : 0, wall = now - t->t_out, off;
	__u32 f = t->flags;

	if (!(f & SWA_OPEN))
		return;
	off = wall > ran ? wall - ran : 0;
	if (f & (SWA_SAMPLED | SWA_D | SWA_AT_START)) {
		emit(SWA_REC_INTERVAL, tid, t, t->t_out, t->t_out + off, f);
		return;
	}
	t->ns[f & SWA_SLEEP] += off;
	t->n[f & SWA_SLEEP]++;
}

/* Keep this switch-out's sample?  The stale rule first (per rule class:
 * preempted, asleep, D), then 1 in n at random: 2 stale, 1 random, 0
 * not kept. */
static __always_inline int decide(const struct swa_conf *c, struct swa_thread *t, __u32 rc, __u64 now)
{
	if (rc > 2)
		return 0;	/* for the verifier */
	if (!t->stale[rc] || now - t->stale[rc] >= c->stale_ns) {
		t->stale[rc] = now;
		return 2;
	}
	if (c->period > 1 && bpf_get_prandom_u32() % c->period)
		return 0;
	return 1;
}

/* The verdict, recorded in the entry's flags; 1 keeps the sample. */
static __always_inline int keep_as(struct swa_thread *t, int verdict)
{
	if (verdict)
		t->flags |= SWA_SAMPLED | (verdict == 2 ? SWA_STALE : 0);
	return verdict != 0;
}

/* The D switch-out of tid under way on this CPU, as swa_d_stack left it:
 * its I/O verdict, its sampling verdict, and its kernel stack when it
 * was taken, which goes to the ring now. */
static __always_inline int d_switch_out(const struct swa_conf *c, __u32 tid, struct swa_thread *t, __u64 now)
{
	__u32 zero = 0;
	struct swa_dstack *d = bpf_map_lookup_elem(&dstack, &zero);
	__u64 size;
	int verdict;

	if (!d || d->tid != tid) {	/* the tracepoint did not see it in D state */
		count(2);
		return keep_as(t, decide(c, t, 2, now));
	}
	verdict = d->keep;
	if (d->io)
		t->flags |= SWA_IO;
	if (!d->nr) {
		if (!d->io || verdict)
			count(2);
	} else {
		size = sizeof(*d) - sizeof(d->ips) + (d->nr & (SWA_DSTACK_MAX * 2 - 1)) * sizeof(d->ips[0]);
		if (size > sizeof(*d))
			size = sizeof(*d);
		if (bpf_ringbuf_output(&events, d, size, BPF_RB_NO_WAKEUP))
			count(1);
		else
			t->flags |= SWA_KSTACK;
	}
	d->tid = 0;
	return keep_as(t, verdict);
}

SEC("perf_event")
int swa_switch_out(struct bpf_perf_event_data *ctx)
{
	__u32 zero = 0;
	const struct swa_conf *c = bpf_map_lookup_elem(&conf, &zero);
	__u64 pt = bpf_get_current_pid_tgid(), now = bpf_ktime_get_ns(), sum, nvcsw, last_nvcsw;
	__u32 tid = (__u32)pt, tgid = (__u32)(pt >> 32), cls = 0;
	const void *task;
	struct swa_thread *t;

	if (!c || !tid || tgid == c->self_tgid || !targets_keep(tgid))
		return 0;
	task = (const void *)bpf_get_current_task();
	if (task_read(task, c->off_flags, 4) & PF_EXITING)
		return 0;	/* its exit hook settles it: an entry made now would outlive it */
	sum = task_read(task, c->off_sum_exec, 8);
	nvcsw = task_read(task, c->off_nvcsw, 8);
	if (!(t = entry_of(tid, tgid, now)))
		return 0;
	close_interval(tid, t, now, sum);
	if (!task_read(task, c->off_on_rq, 4) || (c->has_delayed && task_read(task, c->off_delayed, 1)))
		cls = 1;
	last_nvcsw = t->nvcsw;
	t->t_out = now;
	t->sum = sum;
	t->nvcsw = nvcsw;
	t->flags = SWA_OPEN | cls;
	if (nvcsw != last_nvcsw && (task_read(task, c->off_to_load, 1) >> (c->to_load_bit & 7) & 1)) {
		t->flags |= SWA_D;
		return d_switch_out(c, tid, t, now);
	}
	return keep_as(t, decide(c, t, cls, now));
}

#define TASK_UNINTERRUPTIBLE 0x2
#define TASK_NOLOAD 0x400
#define TASK_FROZEN 0x8000

/* sched_switch (args: preempt, prev, next, prev_state; in prev's
 * context): a recorded thread blocking in D state, as the scheduler
 * counts it in the load (sched_contributes_to_load).  Its sampling
 * verdict is made here, and its kernel stack taken only when the
 * recorder needs it: to tell a D wait that the kernel does not count as
 * I/O wait (in_iowait, set by io_schedule) from an I/O path that it does
 * not count either (a journal commit), and for a sampled one's stack.
 * An unwind costs 5-9 us inside the switch; a busy database's D waits
 * are almost all in io_schedule.  Its switch-out (d_switch_out) takes
 * the result.  Recorded: the thread has an entry, made by its first
 * switch-out that the switch-out program ran for; a raw tracepoint runs
 * for every thread of the machine, where a recording of some threads has
 * events of theirs only (a command, --per-thread). */
SEC("raw_tracepoint/sched_switch")
int swa_d_stack(struct bpf_raw_tracepoint_args *ctx)
{
	__u32 zero = 0, state = (__u32)ctx->args[3], tid;
	__u64 pt, now;
	const struct swa_conf *c;
	struct swa_thread *t;
	struct swa_dstack *d;
	long n = 0;

	if (ctx->args[0] || !(state & TASK_UNINTERRUPTIBLE) || (state & (TASK_NOLOAD | TASK_FROZEN)))
		return 0;
	pt = bpf_get_current_pid_tgid();
	tid = (__u32)pt;
	c = bpf_map_lookup_elem(&conf, &zero);
	if (!c || !tid || (__u32)(pt >> 32) == c->self_tgid || !targets_keep((__u32)(pt >> 32)) ||
	    !(t = bpf_map_lookup_elem(&threads, &tid)))
		return 0;
	if (!(d = bpf_map_lookup_elem(&dstack, &zero)))
		return 0;
	now = bpf_ktime_get_ns();
	d->io = c->has_iowait &&
		(task_read((const void *)bpf_get_current_task(), c->off_iowait, 1) >> (c->iowait_bit & 7) & 1);
	d->keep = (__u32)decide(c, t, 2, now);
	if (!d->io || d->keep)
		n = bpf_get_stack(ctx, d->ips, sizeof(d->ips), 0);
	d->kind = SWA_REC_DSTACK;
	d->tid = tid;
	d->pid = (__u32)(pt >> 32);
	d->nr = n > 0 ? (__u32)n / sizeof(d->ips[0]) : 0;
	d->t = now;
	return 0;
}

/* The thread exits (sched_process_exit, in its own context): its perf
 * events go before its last switch-out, so its last interval is closed
 * here, and its final totals sent. */
SEC("raw_tracepoint/sched_process_exit")
int swa_exit(struct bpf_raw_tracepoint_args *ctx)
{
	__u32 zero = 0, tid = (__u32)bpf_get_current_pid_tgid();
	const struct swa_conf *c = bpf_map_lookup_elem(&conf, &zero);
	struct swa_thread *t = bpf_map_lookup_elem(&threads, &tid);
	__u64 now = bpf_ktime_get_ns();

	if (!c || !t)
		return 0;
	close_interval(tid, t, now, task_read((const void *)bpf_get_current_task(), c->off_sum_exec, 8));
	t->flags = 0;
	emit(SWA_REC_EXIT, tid, t, 0, now, 0);
	bpf_map_delete_elem(&threads, &tid);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
