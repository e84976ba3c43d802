/*
 * switchpair.c - pairs switch-outs with switch-ins, and each interval
 * with its switch-out sample (see include/prof/switchpair.h).  The one
 * pairing in prof: recording and `prof stat` feed it.
 *
 * Design notes:
 *  - Per tid: the open interval, the switch-in before it, and two FIFOs
 *    (closed intervals, samples) that wait for each other, because the
 *    records come from different rings and either may run ahead.
 *  - The sched_switch sample of a switch is taken in the same __schedule()
 *    call, just before its PERF_RECORD_SWITCH out (kernel-notes/offcpu.md):
 *    a sample belongs to the first interval of its thread that starts at
 *    or after it; a sample older than the switch-in before that interval
 *    belongs to no interval we saw; an interval that starts before the
 *    oldest waiting sample lost its own.
 *  - A switch-in without a switch-out seen charges nothing (the records
 *    of a thread born in the window start so), unless the caller said
 *    the thread existed at the window's start (prof_switchpair_begin):
 *    then it was off the CPU from that start.  A switch-out never
 *    followed by a switch-in charges nothing if the thread exited or the
 *    switch-in was lost; if the window ended first, finish() with the
 *    end charges it up to the end.  An attached thread asleep for the
 *    whole window has no record at all: it is charged start to end.
 *  - Nothing depends on the CPU: a thread that migrates is one tid.
 *  - EXIT settles a tid and frees it, so memory follows the live threads;
 *    its last switch-out comes after EXIT, so the tid waits in `exited`
 *    (at most EXITED_WAIT_NS of switch records) lest it come back.  An
 *    exiting thread can still be preempted after EXIT (a preempted
 *    switch-out, then a switch-in): those records are passed over too,
 *    and only its last switch-out (not preempted: it is dead) ends the
 *    wait; a switch-in that follows no such preemption is a new thread
 *    with the tid.
 */
#include "prof/switchpair.h"

/* How long an exited tid waits for its last switch-out. */
#define EXITED_WAIT_NS 1000000000ULL

/* In an `exited` value (the EXIT time): preempted since, a switch-in due. */
#define EXITED_PREEMPTED (1ULL << 63)

struct thr {
	struct prof_switch_interval open;
	bool is_open;
	bool at_start;		/* begun, no switch record yet: open holds the window's start */
	uint64_t last_in;
	VEC(struct prof_switch_interval) ivs;
	size_t iv_head;
	VEC(struct prof_switch_sample) samples;
	size_t s_head;
	uint8_t vol_metric;	/* of the last sampled voluntary switch */
};

struct prof_switchpair {
	prof_switch_charge_fn charge;
	void *arg;
	struct u64map by_tid;	/* tid -> struct thr * */
	struct u64map exited;	/* tid -> EXIT time */
	uint64_t last_time, switches;
};

struct prof_switchpair *prof_switchpair_new(prof_switch_charge_fn charge, void *arg)
{
	struct prof_switchpair *sp = xcalloc(1, sizeof(*sp));

	sp->charge = charge;
	sp->arg = arg;
	return sp;
}

static void thr_free(struct thr *t)
{
	VEC_FREE(&t->ivs);
	VEC_FREE(&t->samples);
	free(t);
}

void prof_switchpair_free(struct prof_switchpair *sp)
{
	size_t it = 0;
	uint64_t tid, t;

	if (!sp)
		return;
	while (u64map_next(&sp->by_tid, &it, &tid, &t))
		thr_free((struct thr *)(uintptr_t)t);
	u64map_free(&sp->by_tid);
	u64map_free(&sp->exited);
	free(sp);
}

uint64_t prof_switchpair_switches(const struct prof_switchpair *sp)
{
	return sp->switches;
}

static struct thr *thr_of(struct prof_switchpair *sp, uint32_t tid)
{
	bool created;
	uint64_t *slot = u64map_slot(&sp->by_tid, tid, &created);

	if (created) {
		struct thr *t = xcalloc(1, sizeof(*t));
		t->vol_metric = PROF_M_SLEEP_NS;
		*slot = (uintptr_t)t;
	}
	return (struct thr *)(uintptr_t)*slot;
}

/* A sample's state; remembered for the guess of a lost one. */
static enum prof_metric settle(struct thr *t, const struct prof_switch_sample *s)
{
	enum prof_metric m = (enum prof_metric)s->metric;

	if (m != PROF_M_PREEMPT_NS && m != PROF_METRIC_COUNT)
		t->vol_metric = (uint8_t)m;
	return m;
}

/* Pairs t's closed intervals with its samples, oldest first (see the
 * notes above); final: what waits for a sample now never gets one. */
static void match(struct prof_switchpair *sp, struct thr *t, bool final)
{
	while (t->iv_head < t->ivs.n) {
		const struct prof_switch_interval *iv = &t->ivs.v[t->iv_head];
		const struct prof_switch_sample *s = t->s_head < t->samples.n ? &t->samples.v[t->s_head] : NULL;

		if (s && s->time < iv->t_on) {	/* its interval was charged as lost, or unseen */
			t->s_head++;
			continue;
		}
		if (!s && !final)
			break;
		if (s && s->time <= iv->t_out) {
			enum prof_metric m = settle(t, s);
			if (m != PROF_METRIC_COUNT)	/* not an exiting thread */
				sp->charge(sp->arg, iv, s, m);
			t->s_head++;
		} else {
			sp->charge(sp->arg, iv, NULL,
				   iv->preempt ? PROF_M_PREEMPT_NS : (enum prof_metric)t->vol_metric);
		}
		t->iv_head++;
	}
	if (t->iv_head == t->ivs.n)
		t->ivs.n = t->iv_head = 0;
	if (t->s_head == t->samples.n)
		t->samples.n = t->s_head = 0;
}

void prof_switchpair_sample(struct prof_switchpair *sp, uint32_t tid, const struct prof_switch_sample *s)
{
	struct thr *t;

	if (u64map_get(&sp->exited, tid, NULL))
		return;	/* the last switch-out of an exited thread */
	t = thr_of(sp, tid);
	VEC_PUSH(&t->samples, *s);
	match(sp, t, false);
}

bool prof_switchpair_restack(struct prof_switchpair *sp, uint32_t tid, uint64_t slack,
			     const struct prof_switch_sample *better)
{
	uint64_t v;
	struct thr *t;
	struct prof_switch_sample *s;

	if (!u64map_get(&sp->by_tid, tid, &v))
		return false;
	t = (struct thr *)(uintptr_t)v;
	if (t->s_head == t->samples.n)
		return false;
	s = &t->samples.v[t->samples.n - 1];
	if (s->time + slack < better->time || better->time + slack < s->time)
		return false;
	*s = (struct prof_switch_sample){ s->time, better->thread, better->node, better->tag, better->metric };
	return true;
}

void prof_switchpair_begin(struct prof_switchpair *sp, uint32_t tid, uint32_t pid, uint32_t thread,
			   uint64_t start)
{
	struct thr *t = thr_of(sp, tid);

	if (t->is_open || t->last_in)
		return;	/* records of it came already */
	t->at_start = true;
	t->open = (struct prof_switch_interval){ 0, start, 0, tid, pid, thread, false, PROF_SWITCH_FROM_START };
}

/* t was off the CPU from the window's start until `until`: no switch-out
 * of it was seen, so there is no sample; its oldest interval, charged
 * before any other of it. */
static void charge_from_start(struct prof_switchpair *sp, struct thr *t, uint64_t until)
{
	struct prof_switch_interval iv = t->open;

	t->at_start = false;
	iv.t_in = MAX(until, iv.t_out);
	sp->charge(sp->arg, &iv, NULL, (enum prof_metric)t->vol_metric);
}

/* The window ended at `end` with t off the CPU: its open interval ends
 * there (it pairs with its switch-out's sample as any other). */
static void close_at_end(struct prof_switchpair *sp, struct thr *t, uint64_t end)
{
	if (t->at_start) {
		t->open.edge |= PROF_SWITCH_TO_END;
		charge_from_start(sp, t, end);
		return;
	}
	if (!t->is_open)
		return;
	t->is_open = false;
	t->open.t_in = MAX(end, t->open.t_out);
	t->open.edge |= PROF_SWITCH_TO_END;
	VEC_PUSH(&t->ivs, t->open);
}

void prof_switchpair_out(struct prof_switchpair *sp, uint32_t tid, uint32_t pid, uint32_t thread,
			 uint64_t time, bool preempt)
{
	struct thr *t;

	uint64_t ex;

	if (u64map_get(&sp->exited, tid, &ex)) {
		if (preempt)	/* preempted on its way out: it comes back */
			u64map_put(&sp->exited, tid, ex | EXITED_PREEMPTED);
		else
			u64map_del(&sp->exited, tid);	/* the exited thread's last switch-out */
		return;
	}
	t = thr_of(sp, tid);
	sp->switches++;
	sp->last_time = MAX(sp->last_time, time);
	t->at_start = false;	/* it was running when the window began */
	if (t->is_open)	/* its switch-in was lost: it came after the last switch-out */
		t->last_in = MAX(t->last_in, t->open.t_out + 1);
	t->open = (struct prof_switch_interval){ t->last_in, time, 0, tid, pid, thread, preempt };
	t->is_open = true;
}

void prof_switchpair_in(struct prof_switchpair *sp, uint32_t tid, uint64_t time)
{
	struct thr *t;

	uint64_t ex;

	if (u64map_get(&sp->exited, tid, &ex)) {
		if (ex & EXITED_PREEMPTED) {
			u64map_put(&sp->exited, tid, ex & ~EXITED_PREEMPTED);
			return;	/* the exiting thread back on the CPU */
		}
		u64map_del(&sp->exited, tid);	/* a reused tid: a new thread */
	}
	t = thr_of(sp, tid);
	sp->switches++;
	sp->last_time = MAX(sp->last_time, time);
	t->last_in = time;
	if (t->at_start)
		charge_from_start(sp, t, time);
	if (!t->is_open || time <= t->open.t_out)
		return;	/* born in the window, or off the CPU at its unknown start */
	t->is_open = false;
	t->open.t_in = time;
	VEC_PUSH(&t->ivs, t->open);
	match(sp, t, false);
}

void prof_switchpair_exit(struct prof_switchpair *sp, uint32_t tid, uint64_t time)
{
	uint64_t t;

	if (!u64map_get(&sp->by_tid, tid, &t))
		return;
	match(sp, (struct thr *)(uintptr_t)t, true);
	thr_free((struct thr *)(uintptr_t)t);
	u64map_del(&sp->by_tid, tid);
	u64map_put(&sp->exited, tid, time);
}

void prof_switchpair_prune(struct prof_switchpair *sp)
{
	VEC(uint64_t) old = { 0 };
	size_t it = 0;
	uint64_t tid, t;

	while (u64map_next(&sp->exited, &it, &tid, &t))
		if ((t & ~EXITED_PREEMPTED) + EXITED_WAIT_NS < sp->last_time)
			VEC_PUSH(&old, tid);
	for (size_t i = 0; i < old.n; i++)
		u64map_del(&sp->exited, old.v[i]);
	VEC_FREE(&old);
}

void prof_switchpair_finish(struct prof_switchpair *sp, uint64_t end)
{
	size_t it = 0;
	uint64_t tid, t;

	while (sp && u64map_next(&sp->by_tid, &it, &tid, &t)) {
		if (end)
			close_at_end(sp, (struct thr *)(uintptr_t)t, end);
		match(sp, (struct thr *)(uintptr_t)t, true);
	}
}
