/*
 * switches.c - the in-kernel off-CPU accountant: the BPF programs that
 * prof attaches to the sched_switch raw tracepoint, to exec and to thread
 * exit.
 * At every switch-out of a recorded thread, in its own context, the
 * switch program does three jobs in one run:
 *  - it times the thread's last off-CPU interval, which ended when the
 *    thread came back: wall time since its previous switch-out minus the
 *    CPU time it has run since (se.sum_exec_runtime), so no hook at the
 *    switch-in is needed; and adds it to the thread's totals by class
 *    (preempted or not), or hands it over whole;
 *  - it chooses whether this switch-out gets a stack sample: a thread's
 *    first in its class (preempted, asleep, in D state) after stale_ns
 *    ("stale", weight 1; where the thread switches often, only as the
 *    CPU's budget allows), else 1 in n at random (weight n); the
 *    kernel's in_iowait flag tells a D wait's I/O wait, and the kernel
 *    stack is taken for the sampled D waits and those not so flagged;
 *  - it makes a kept switch-out's sample itself: the user registers, the
 *    stack copy (or frame-pointer chain) and the innermost kernel frames,
 *    into the ring buffer, where the recorder unwinds it like a perf
 *    sample; or a repeat of a stack the recorder unwound before
 *    (switches.h's shapes).  The copy goes as far as the thread's stack
 *    end where the recorder learned it (switches.h's bases), in a record
 *    no larger than it needs: on the VM of docs/offcpu.md the record's
 *    size cost more than the copy.
 *  - The kernel frame a sample needs is the caller of __schedule.  For a
 *    switch-out the tracepoint does not call preempted (a thread that
 *    blocked, or one preempted on its way back to user mode) that is
 *    always schedule() on a kernel without PREEMPT_RT: once the recorder
 *    has seen that frame it gives it in conf, and the program stops
 *    unwinding for them, which was 4 us a blocked thread's sample and
 *    13-15 us a preempted one's on the busy host of docs/offcpu.md.  Only
 *    preemptions inside the kernel (__cond_resched, preempt_schedule_irq)
 *    are unwound.
 * Built with clang -target bpf into build/gen/switches.bpf.o and embedded
 * in prof (src/perf/switchacct.c loads it; src/perf/bpf_filter.c is the
 * hand-assembled filter of the context-switches event used without
 * libbpf).
 *
 * Handed over whole, through the ring buffer (the recorder needs each
 * one's own stack and times): an interval whose switch-out was sampled,
 * one in D state, and the first one of a thread the recorder seeded as
 * off the CPU at the start.  A thread's last switch-out (TASK_DEAD) sends
 * its final totals and frees its entry.  A switch-out's records follow
 * the interval it closes: its D kernel stack, then its sample.
 *
 * Design notes / invariants:
 *  - Why a raw tracepoint, not a program on a context-switches perf
 *    event: the perf event's own path (a software event's sample set up
 *    and its overflow handled at every switch-out, kept or not) cost a
 *    switch-bound pair 0.5 us a switch here, more than the program, and
 *    on a busy host that is the scheduler time that profiles showed as
 *    the server's own finish_task_switch (docs/offcpu.md).  The sample
 *    made here is only paid for the kept switch-outs.
 *  - The class is the kernel's task_is_runnable() (on_rq and not a
 *    delayed dequeue), which also sets PERF_RECORD_SWITCH's preempt flag.
 *    D state is the tracepoint's own: not preempted, prev_state
 *    TASK_UNINTERRUPTIBLE without TASK_NOLOAD or TASK_FROZEN, what the
 *    scheduler counts in the load (sched_contributes_to_load); a signal
 *    that stopped the block has already set prev_state to running.
 *  - The tracepoint runs in __schedule after the thread's CPU time was
 *    brought up to date (update_curr at pick_next_task) and before the
 *    switch: the sum read is the one the interval needs.
 *  - Off-CPU time so measured is the program's own clock (wall minus
 *    thread CPU time), as the kernel hands CPU time over when it picks
 *    the next thread.  A kept sample is stamped with its t_out.
 *  - Each run's window (its first clock read to its last, on this CPU)
 *    goes to owntime.h's map: the CPU samples that fall due in it, with
 *    interrupts off, are prof's, and their programs drop them.
 *  - task_struct offsets come from the recorder (the kernel's BTF), in
 *    conf[0]: no CO-RE relocations.  Time is bpf_ktime_get_ns
 *    (CLOCK_MONOTONIC), the clock of prof's perf samples.
 *  - The user stack is copied up to the next KiB boundary, then a KiB at
 *    a time: a KiB never straddles a page, so the copy ends where the
 *    stack's mapping (or its present pages) ends, as the kernel's own
 *    copy for a perf sample does.
 *  - An exiting thread (PF_EXITING, set before its exit hook runs) is
 *    left alone: its switch-outs after the exit hook would make an entry
 *    that nothing frees, and a later thread given the same tid would
 *    inherit it.
 *  - A thread's entry is written by its own switch-outs and exec only
 *    (one at a time) and read by the recorder, which takes differences
 *    of totals that only grow: no lock.
 *  - The raw tracepoint runs for every thread of the machine: a
 *    recording of some processes (a command, -p) names them in targets.h,
 *    whose fork program adds a target's child in the kernel, so no
 *    child's first interval escapes while the recorder learns of it.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "switches.h"
#include "targets.h"
#include "owntime.h"

#define PF_EXITING 0x4

struct task_struct;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct swa_conf);
} conf SEC(".maps");

/* Preallocated: entries are made inside the switch, where an allocation
 * is safe only with the BPF allocator of Linux 6.1 and later. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SWA_MAX_THREADS);
	__type(key, __u32);
	__type(value, struct swa_thread);
} threads SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, SWA_RING_MIN);	/* the recorder sizes it (switches.h) */
} events SEC(".maps");

/* The stack shapes the recorder learned (switches.h); allocated as the
 * recorder writes them, deleted at the thread's exit. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SWA_MAX_THREADS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct swa_shape);
} shapes SEC(".maps");

/* The threads' stack ends the recorder learned (switches.h); deleted at
 * the thread's exit. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SWA_MAX_THREADS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct swa_base);
} bases SEC(".maps");

/* The CPython processes (tgid -> 1), whose kept switch-outs need their
 * Python frames read before the thread runs again, where the recorder
 * gave no program in then[0] to read them: by the recorder, woken for
 * it.  A wake is a tid in wakes, a ring of its own: the events ring is
 * never woken for, so its readiness would say only that records wait,
 * which on a busy host is always. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SWA_WAKE_PROCESSES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, __u32);
} wake SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, SWA_WAKES_BYTES);
} wakes SEC(".maps");

/* then[0]: a program every kept switch-out goes on to (a tail call, in
 * the thread's context still): the Python frame reader's, which reads the
 * chain the thread blocked in (src/python/bpf/frames.c) when the thread
 * is one its reader named, and else returns (a map lookup).  Not gated
 * by wake: the reader names a process's threads as soon as it finds the
 * interpreter, where the recorder adds to wake only once it has drained
 * a kept switch-out with Python frames, 0.2-0.4 s into an attach (the
 * switch-outs before then read too late, and were left native). */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} then SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct swa_budget);
} budget SEC(".maps");

/* Per-CPU room to build a D kernel stack in (the BPF stack is 512 bytes). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct swa_dstack);
} dstack SEC(".maps");

/* counts[0]: threads not accounted (map full); [1]: records lost (ring
 * full); [2]: D switch-outs without their kernel stack; [3]: samples not
 * sent, the ring being half full; [4]: stale keeps the budget paid for;
 * [5]: switch-outs due a stale keep that the budget refused.  The
 * program's own time in the recorded threads' switch-outs is owntime.h's. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 6);
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

/* Whether this CPU's budget of stale keeps has one left (and spends it).
 * Per CPU, so no atomics: the program runs with preemption off. */
static __always_inline int stale_budget(const struct swa_conf *c, __u64 now)
{
	__u32 zero = 0;
	struct swa_budget *b;

	if (!c->every_ns || !(b = bpf_map_lookup_elem(&budget, &zero)))
		return 1;
	b->credit += now - b->last;
	b->last = now;
	if (b->credit > c->burst_ns)
		b->credit = c->burst_ns;
	if (b->credit < c->every_ns) {
		count(5);
		return 0;
	}
	b->credit -= c->every_ns;
	count(4);
	return 1;
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
 * not kept.  Stale: the thread's first in its class, and its first
 * stale_ns after the last so kept.  That one is kept always where the
 * thread's last switch-out is quiet_ns old (quiet: a thread that
 * switches rarely has a stack for each wait), else only as the CPU's
 * budget allows: a kept switch-out costs a stack copy inside the switch,
 * and a thread that switches often is known by its random samples as
 * well (a 51-thread CPython program kept nine stale samples in ten
 * without the budget, most of the switch program's time:
 * docs/offcpu.md).  A thread the budget refused stays due.  Whichever
 * way it goes, the verdict rests on the past only, as the estimator's
 * weights need. */
static __always_inline int decide(const struct swa_conf *c, struct swa_thread *t, __u32 rc, __u64 now,
				  int quiet)
{
	if (rc > 2)
		return 0;	/* for the verifier */
	if (!t->stale[rc] || (now - t->stale[rc] >= c->stale_ns && (quiet || stale_budget(c, now)))) {
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

#define PF_KTHREAD 0x00200000
#define TASK_UNINTERRUPTIBLE 0x2
#define TASK_NOLOAD 0x400
#define TASK_FROZEN 0x8000

/* A D switch-out: the kernel's I/O-wait verdict (in_iowait, set by
 * io_schedule), the sampling verdict, and the kernel stack where the
 * recorder needs it: to tell a D wait that the kernel does not count as
 * I/O wait from an I/O path that it does not count either (a journal
 * commit), and for a sampled one's stack.  An unwind costs 5-9 us inside
 * the switch; a busy database's D waits are almost all in io_schedule. */
static __always_inline int d_switch_out(void *ctx, const struct swa_conf *c, __u32 tid, __u32 pid,
					struct swa_thread *t, const void *task, __u64 now, int quiet)
{
	__u32 zero = 0;
	struct swa_dstack *d;
	int verdict = decide(c, t, 2, now, quiet);
	int io = c->has_iowait && (task_read(task, c->off_iowait, 1) >> (c->iowait_bit & 7) & 1);
	long n;

	if (io)
		t->flags |= SWA_IO;
	if (io && !verdict)
		return 0;
	if (!(d = bpf_map_lookup_elem(&dstack, &zero)))
		return verdict;
	n = bpf_get_stack(ctx, d->ips, sizeof(d->ips), 0);
	if (n <= 0) {
		count(2);
		return verdict;
	}
	d->kind = SWA_REC_DSTACK;
	d->tid = tid;
	d->pid = pid;
	d->nr = (__u32)n / sizeof(d->ips[0]);
	d->t = now;
	if (bpf_ringbuf_output(&events, d, sizeof(*d) - sizeof(d->ips) + (__u64)n, BPF_RB_NO_WAKEUP))
		count(1);
	else
		t->flags |= SWA_KSTACK;
	return verdict;
}

/* Copies the user stack from sp into s->data, which holds cap bytes,
 * until want bytes are copied, to the KiB boundary at or after them (cap
 * allowing); the bytes copied. */
static __always_inline __u32 copy_stack(struct swa_sample *s, __u32 cap, __u64 sp, __u64 want)
{
	__u64 got = 1024 - (sp & 1023);

	if (want > cap)
		want = cap;
	if (got > want)
		got = want;
	if (!got || got > 1024 || bpf_probe_read_user(s->data, got, (const void *)sp))
		return 0;
	for (int i = 0; i < SWA_STACK_MAX / 1024; i++) {
		if (got >= want)
			break;
		asm volatile("" : "+r"(got));	/* the verifier needs the room test on the register used */
		if (got > cap - 1024 || bpf_probe_read_user(s->data + got, 1024, (const void *)(sp + got)))
			break;
		got += 1024;
	}
	return (__u32)got;
}

/* Hashing the shape's words, a word a call of bpf_loop: the verifier
 * checks the callback once, where an unrolled or bounded loop had it
 * walk every path of the 64 words (100 times the instructions). */
struct shape_hash {
	const struct swa_sample *s;
	const struct swa_shape *sh;
	__u32 got;			/* bytes of stack copied */
	int bad;			/* a word beyond them */
	__u64 h;
};

/* One word, of a sample with cap bytes of stack room (a constant: one
 * callback per record size, each checked against its own). */
static __always_inline long hash_word_in(__u32 i, struct shape_hash *x, __u32 cap)
{
	__u32 off;

	if (i >= SWA_SHAPE_SLOTS)
		return 1;
	off = x->sh->off[i];
	if (off > cap - 8 || off + 8 > x->got) {
		x->bad = 1;
		return 1;
	}
	x->h = swa_mix(x->h, *(const __u64 *)(x->s->data + off));
	return 0;
}

static long hash_word_small(__u32 i, void *arg)
{
	return hash_word_in(i, arg, SWA_SMALL_STACK);
}

static long hash_word_medium(__u32 i, void *arg)
{
	return hash_word_in(i, arg, SWA_MEDIUM_STACK);
}

static long hash_word(__u32 i, void *arg)
{
	return hash_word_in(i, arg, SWA_STACK_MAX);
}

/* Whether the sample's registers are the shape's (checked before its
 * words are copied). */
static __always_inline int same_regs(const struct swa_sample *s, const struct swa_shape *sh)
{
	return s->regs[SWA_REG_IP] == sh->ip && s->regs[SWA_REG_SP] == sh->sp &&
	       (!sh->bp_used || s->regs[SWA_REG_BP] == sh->bp) && s->regs[SWA_REG_ORIG_AX] == sh->orig_ax &&
	       sh->n <= SWA_SHAPE_SLOTS;
}

/* Whether the shape's words, in the got bytes of stack copied, are its. */
static __always_inline int same_words(const struct swa_sample *s, __u32 cap, const struct swa_shape *sh, __u32 got)
{
	struct shape_hash x = { .s = s, .sh = sh, .got = got, .h = SWA_SHAPE_SEED };

	if (cap == SWA_SMALL_STACK)
		bpf_loop(sh->n, hash_word_small, &x, 0);
	else if (cap == SWA_MEDIUM_STACK)
		bpf_loop(sh->n, hash_word_medium, &x, 0);
	else
		bpf_loop(sh->n, hash_word, &x, 0);
	return !x.bad && x.h == sh->hash;
}

/* The user stack of sample s (cap bytes of room, want of them wanted): a
 * repeat of the class's shape (1: s is to be discarded), else the copy.
 * The copy starts again at sp when the shape did not match: going on from
 * where the check's copy stopped had the verifier walk every pair of the
 * two copies' lengths, 41,740 instructions at each load against 10,245
 * (kernel-notes/offcpu-accountant.md), for a KiB or two copied twice. */
static __always_inline int user_stack(struct swa_sample *s, __u32 cap, __u32 want, const struct swa_conf *c,
				      __u32 tid, __u32 rc)
{
	__u32 key = tid << 2 | rc;
	const struct swa_shape *sh = c->repeats ? bpf_map_lookup_elem(&shapes, &key) : 0;

	if (sh && same_regs(s, sh) && same_words(s, cap, sh, copy_stack(s, cap, s->regs[SWA_REG_SP], sh->want))) {
		struct swa_repeat r = { .kind = SWA_REC_REPEAT, .tid = tid, .pid = s->pid, .flags = rc,
					.t = s->t, .seq = sh->seq };
		if (bpf_ringbuf_output(&events, &r, sizeof(r), BPF_RB_NO_WAKEUP))
			count(1);
		return 1;
	}
	s->size = copy_stack(s, cap, s->regs[SWA_REG_SP], want);
	return 0;
}

/* The stack room a kept switch-out's record needs (uregs: the thread's
 * user registers, NULL for a kernel thread): none for registers alone;
 * the most for a frame-pointer chain (bpf_get_stack fills that); for a
 * stack copy, to the thread's stack end where the recorder learned it
 * (see bases), rounded up to the KiB boundary where copy_stack stops,
 * else stack_bytes. */
static __always_inline __u32 room_wanted(const struct swa_conf *c, __u32 tid, __u64 born, const void *uregs)
{
	const struct swa_base *b;
	__u64 sp = 0, end;

	if (c->user == SWA_USER_CHAIN)
		return SWA_STACK_MAX;
	if (c->user != SWA_USER_STACK || !uregs)
		return 0;
	b = bpf_map_lookup_elem(&bases, &tid);
	if (!b || b->born != born || bpf_probe_read_kernel(&sp, 8, (const char *)uregs + SWA_REG_SP * 8))
		return c->stack_bytes;
	end = (b->top + SWA_BASE_SLACK + 1023) & ~1023ULL;
	return b->top > sp && end - sp < c->stack_bytes ? (__u32)(end - sp) : c->stack_bytes;
}

/* The kept switch-out's sample in the ring record s, whose stack room is
 * cap bytes (a constant: the function is made once per record size), of
 * which want are wanted; or a repeat of its thread's shape in its rule's
 * class rc.  1: a sample was sent (the Python reader is then called for
 * it). */
static __always_inline int fill_sample(void *ctx, const struct swa_conf *c, struct swa_sample *s, __u32 cap,
				       __u32 want, __u32 tid, __u32 pid, const void *uregs, __u32 rc, __u64 now)
{
	long n;

	s->kind = SWA_REC_SAMPLE;
	s->tid = tid;
	s->pid = pid;
	s->t = now;
	s->flags = rc << SWA_SAMPLE_CLASS_SHIFT;
	s->size = 0;
	if (uregs && !bpf_probe_read_kernel(s->regs, sizeof(s->regs), uregs)) {
		s->flags |= SWA_SAMPLE_USER;
		if (c->user == SWA_USER_STACK && want < c->stack_bytes)
			s->flags |= SWA_SAMPLE_TO_BASE;	/* a copy cut at the learned end */
		if (c->user == SWA_USER_STACK && user_stack(s, cap, want, c, tid, rc)) {
			bpf_ringbuf_discard(s, BPF_RB_NO_WAKEUP);
			return 0;
		}
		if (c->user == SWA_USER_CHAIN && cap == SWA_STACK_MAX &&
		    (n = bpf_get_stack(ctx, s->data, SWA_STACK_MAX, BPF_F_USER_STACK)) > 0)
			s->size = (__u32)n;
	}
	if (!((const struct bpf_raw_tracepoint_args *)ctx)->args[0] && c->voluntary_leaf) {
		/* not preempted in the kernel: __schedule was called by schedule(), no unwind */
		s->k[0] = c->voluntary_leaf;
		s->nk = 1;
	} else {
		n = bpf_get_stack(ctx, s->k, sizeof(s->k), 0);
		s->nk = n > 0 ? (__u32)n / sizeof(s->k[0]) : 0;
	}
	bpf_ringbuf_submit(s, BPF_RB_NO_WAKEUP);
	return 1;
}

/* The kept switch-out's sample, made in the ring itself (one copy of the
 * stack, as a perf sample's), in the smallest of three record sizes that
 * holds the stack it wants (the recorder reads size bytes of data). */
static __always_inline int send_sample(void *ctx, const struct swa_conf *c, __u32 tid, __u32 pid,
				       const struct swa_thread *t, __u32 task_flags, __u32 rc, __u64 now)
{
	const void *uregs = task_flags & PF_KTHREAD ? 0 : (const void *)bpf_task_pt_regs(bpf_get_current_task_btf());
	__u32 want = room_wanted(c, tid, t->born, uregs);
	struct swa_sample *s;

	if (bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) > bpf_ringbuf_query(&events, BPF_RB_RING_SIZE) / 2) {
		count(3);
		return 0;
	}
	if (want <= SWA_SMALL_STACK) {
		s = bpf_ringbuf_reserve(&events, offsetof(struct swa_sample, data) + SWA_SMALL_STACK, 0);
		if (s)
			return fill_sample(ctx, c, s, SWA_SMALL_STACK, want, tid, pid, uregs, rc, now);
	} else if (want <= SWA_MEDIUM_STACK) {
		s = bpf_ringbuf_reserve(&events, offsetof(struct swa_sample, data) + SWA_MEDIUM_STACK, 0);
		if (s)
			return fill_sample(ctx, c, s, SWA_MEDIUM_STACK, want, tid, pid, uregs, rc, now);
	} else {
		s = bpf_ringbuf_reserve(&events, sizeof(*s), 0);
		if (s)
			return fill_sample(ctx, c, s, SWA_STACK_MAX, want, tid, pid, uregs, rc, now);
	}
	count(1);
	return 0;
}

/* sched_switch (args: preempt, prev, next, prev_state; in prev's
 * context): a recorded thread leaves the CPU. */
SEC("raw_tracepoint/sched_switch")
int swa_switch(struct bpf_raw_tracepoint_args *ctx)
{
	__u32 zero = 0, state = (__u32)ctx->args[3], cls = 0, rc, task_flags;
	const struct swa_conf *c = bpf_map_lookup_elem(&conf, &zero);
	__u64 pt = bpf_get_current_pid_tgid(), now, sum;
	__u32 tid = (__u32)pt, tgid = (__u32)(pt >> 32);
	const void *task = (const void *)ctx->args[1];
	struct swa_thread *t;
	struct own_cpu *o;
	int verdict, quiet, sent;

	if (!c || !tid || tgid == c->self_tgid || !targets_keep(tgid))
		return 0;
	o = own_begin(now = bpf_ktime_get_ns());
	task_flags = (__u32)task_read(task, c->off_flags, 4);
	if (task_flags & PF_EXITING)
		return 0;	/* its exit hook settles it: an entry made now would outlive it */
	sum = task_read(task, c->off_sum_exec, 8);
	if (!(t = entry_of(tid, tgid, now)))
		return 0;
	close_interval(tid, t, now, sum);
	quiet = now - t->t_out >= c->quiet_ns;
	if (!task_read(task, c->off_on_rq, 4) || (c->has_delayed && task_read(task, c->off_delayed, 1)))
		cls = 1;
	t->t_out = now;
	t->sum = sum;
	t->flags = SWA_OPEN | cls;
	if (!ctx->args[0] && (state & TASK_UNINTERRUPTIBLE) && !(state & (TASK_NOLOAD | TASK_FROZEN))) {
		t->flags |= SWA_D;
		rc = 2;
		verdict = d_switch_out(ctx, c, tid, tgid, t, task, now, quiet);
	} else {
		rc = cls;
		verdict = decide(c, t, cls, now, quiet);
	}
	sent = keep_as(t, verdict) && send_sample(ctx, c, tid, tgid, t, task_flags, rc, now);
	if (sent) {
		own_end(o);	/* the program called next goes on with the window */
		bpf_tail_call(ctx, &then, 0);	/* returns only when then[0] is empty */
		/* default flags: a wake only when the recorder has read the last one */
		if (bpf_map_lookup_elem(&wake, &tgid))
			bpf_ringbuf_output(&wakes, &tid, sizeof(tid), 0);
	}
	own_end(o);
	return 0;
}

/* What the recorder learned of the thread's stack in its image: where it
 * ends, and its shapes (the thread exits, or execs another image). */
static __always_inline void forget_image(__u32 tid)
{
	bpf_map_delete_elem(&bases, &tid);
	for (__u32 rc = 0; rc < 3; rc++) {
		__u32 key = tid << 2 | rc;
		bpf_map_delete_elem(&shapes, &key);
	}
}

/* The thread exits (sched_process_exit, in its own context): its perf
 * events go before its last switch-out, so its last interval is closed
 * here, and its final totals sent. */
SEC("raw_tracepoint/sched_process_exit")
int swa_exit(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 pt = bpf_get_current_pid_tgid();
	__u32 zero = 0, tid = (__u32)pt;
	const struct swa_conf *c = bpf_map_lookup_elem(&conf, &zero);
	struct swa_thread *t = bpf_map_lookup_elem(&threads, &tid);
	__u64 now = bpf_ktime_get_ns();

	if (tid == (__u32)(pt >> 32))
		bpf_map_delete_elem(&wake, &tid);
	if (!c || !t)
		return 0;
	close_interval(tid, t, now, task_read((const void *)bpf_get_current_task(), c->off_sum_exec, 8));
	t->flags = 0;
	emit(SWA_REC_EXIT, tid, t, 0, now, 0);
	bpf_map_delete_elem(&threads, &tid);
	forget_image(tid);
	return 0;
}

/* A thread execs (sched_process_exec, in its own context, the new image
 * loaded).  A launched command becomes a target here, as its perf events
 * start at its exec (enable_on_exec): before it, the process is prof's
 * own, waiting to be let run, and a stack of that wait replayed in the
 * new image's space is garbage.  A recorded thread starts afresh in the
 * stale rule, so that its first wait in the new image has a stack of its
 * own instead of carrying the old image's, and forgets its stack's end
 * and shapes, which were the old image's. */
SEC("raw_tracepoint/sched_process_exec")
int swa_exec(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 pt = bpf_get_current_pid_tgid();
	__u32 zero = 0, one = 1, tid = (__u32)pt, tgid = (__u32)(pt >> 32);
	const struct swa_conf *c = bpf_map_lookup_elem(&conf, &zero);
	struct swa_thread *t;

	if (c && c->at_exec == tgid)
		bpf_map_update_elem(&targets, &tgid, &one, BPF_ANY);
	if (!(t = bpf_map_lookup_elem(&threads, &tid)))
		return 0;
	t->stale[0] = t->stale[1] = t->stale[2] = 0;
	forget_image(tid);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
