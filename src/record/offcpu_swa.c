/*
 * offcpu_swa.c - the off-CPU recorder's side of the in-kernel accountant
 * (src/perf/switchacct.c): its per-thread totals, read every
 * OFFCPU_SCAN_NS and charged through the estimator; the intervals it
 * hands over one by one, each charged with its own sample (the stack
 * sample it made, unwound and named by the replay engine as a perf
 * sample would be, and a D wait's kernel stack grafted under it); the
 * threads' last intervals at the end.
 *
 * Design notes / invariants:
 *  - A record waits (held) until the rings' samples have passed its
 *    t_in, and a sample until they have passed its time: the perf rings
 *    run behind the accountant's ring, and the replay engine must have
 *    replayed their records up to a sample (its process's mappings, an
 *    exec) before it unwinds it.  Its Python frames are read at once.
 *  - A switch-out's records come in order in one ring: the interval it
 *    closes, its D kernel stack, its sample; the interval it opens comes
 *    with the next switch-out.
 */
#include "offcpu-priv.h"
#include "prof/proc.h"
#include <stdlib.h>
#include <string.h>

/* --- the in-kernel accountant's totals and records ------------------------------------ */

/* The kernel's totals run ahead of the rings: a thread's identity is
 * looked up when its time is charged, after its FORK and exec records
 * have been replayed, not now (a lookup before them made an identity of
 * its own, left empty). */
static void thread_later(struct est *e, const struct prof_bpf_swa_thread *t)
{
	e->thread = PROF_NONE;
	e->pid = t->pid;
	e->tid = t->tid;
}

/* What the kernel's totals of thread t add since they were last taken:
 * to the class's exact time of its window, which its samples share. */
static void take_totals(struct prof_offcpu *oc, const struct prof_bpf_swa_thread *t)
{
	struct est *e = prof_offcpu_est(oc, t->tid);

	if (e->k_born != t->born) {	/* a new thread with the tid */
		e->k_born = t->born;
		memset(e->k_ns, 0, sizeof(e->k_ns));
		memset(e->k_n, 0, sizeof(e->k_n));
	}
	for (int c = 0; c < 2; c++) {
		uint64_t d = t->ns[c] > e->k_ns[c] ? t->ns[c] - e->k_ns[c] : 0;
		uint64_t dn = t->n[c] > e->k_n[c] ? t->n[c] - e->k_n[c] : 0;
		e->k_ns[c] = MAX(e->k_ns[c], t->ns[c]);
		e->k_n[c] = MAX(e->k_n[c], t->n[c]);
		if (!d)
			continue;
		if (!e->start[c])
			e->start[c] = MAX(oc->scanned, t->born);
		e->exact[c] += d;
		thread_later(e, t);
		oc->stats.estimated += dn;
	}
}

/* The samples of tid's switch-out at t_out, which waited for its record:
 * every one at or before it is taken (a filtered one gets the rule that
 * kept it, from the record), and the best of those after the switch-out
 * of the thread's last interval handed over is the interval's (D beats
 * stale beats random).  The accountant stamps a switch-out after its
 * filtered sample, and the D sample is made at the tracepoint, before
 * both (kernel-notes/offcpu-accountant.md).  Not after the interval's
 * t_in: that is derived (t_out less the CPU time run since), and a D
 * sample's stamp comes before its stack copy, up to ~10 us earlier. */
struct taken {
	bool user, kern;
	struct prof_switch_sample u;	/* the best sample with a user stack */
	struct kstack k;		/* a D switch-out's kernel stack */
};

static void take_samples(struct prof_offcpu *oc, uint32_t tid, uint64_t t_out, uint32_t flags,
			 struct taken *t)
{
	struct est *e = prof_offcpu_est(oc, tid);
	size_t k = 0;

	for (size_t i = 0; i < e->waiting.n; i++) {
		struct waiting_sample *w = &e->waiting.v[i];
		if (w->s.time > t_out) {
			e->waiting.v[k++] = *w;
			continue;
		}
		if (w->filtered) {
			w->s.tag = flags & PROF_SWA_STALE ? K_STALE : K_RANDOM;
			oc->stats.by_rule[w->s.tag]++;
		}
		if (w->s.time <= e->k_last_out)
			continue;
		if (!t->user || w->s.tag > t->u.tag) {
			t->u = w->s;
			t->user = true;
		}
	}
	e->waiting.n = k;
	e->k_last_out = t_out;
}

/* The kernel stack of tid's D switch-out at t_out: the newest one taken before
 * it (records wait for their samples, so may come after later stacks). */
static void take_kstack(struct est *e, uint64_t t_out, struct taken *t)
{
	size_t k = 0;

	for (size_t i = 0; i < e->kstacks.n; i++) {
		const struct kstack *ks = &e->kstacks.v[i];
		if (ks->t > t_out)
			e->kstacks.v[k++] = *ks;
		else if (!t->kern || ks->t > t->k.t) {
			t->k = *ks;
			t->kern = true;
		}
	}
	e->kstacks.n = k;
}

/* A D switch-out's kernel stack, named now (the record is the ring's), kept until charged. */
static void hold_kstack(struct prof_offcpu *oc, const struct prof_bpf_swa_thread *r)
{
	struct est *e = prof_offcpu_est(oc, r->tid);
	struct kstack ks = { .t = r->t_out };

	ks.node = prof_kstacks_node(oc->kstacks, r->kstack, r->nkstack);
	ks.metric = (uint8_t)prof_offcpu_with_io(PROF_M_UNINT_NS, prof_offcpu_kernel_stack_in_io(oc->p, ks.node));
	if (e->kstacks.n >= KSTACKS_KEPT)	/* the records were lost */
		memmove(e->kstacks.v, e->kstacks.v + 1, --e->kstacks.n * sizeof(ks));
	VEC_PUSH(&e->kstacks, ks);
	oc->stats.d_kernel++;
}

/* A D interval's stack from its two samples: the kernel frames of its D
 * switch-out (the path into the wait) under the user frames of its
 * filtered sample, whose own kernel part is the switch alone. */
static uint32_t graft(struct prof_offcpu *oc, uint32_t user, uint32_t kern)
{
	const struct prof_profile *p = oc->p;
	uint32_t frames[2 * PROF_MAX_FRAMES];
	size_t n = 0;

	for (; kern && n < PROF_MAX_FRAMES; kern = p->nodes.v[kern].parent)
		frames[n++] = p->nodes.v[kern].frame;
	while (user && p->frames.v[p->nodes.v[user].frame].kind == PROF_FRAME_KERNEL)
		user = p->nodes.v[user].parent;
	for (; user && n < ARRAY_SIZE(frames); user = p->nodes.v[user].parent)
		frames[n++] = p->nodes.v[user].frame;
	return prof_node_from_stack(oc->p, frames, n);
}

/* An interval handed over whole, charged with its own sample (no pairing
 * needed: the record says which switch-out it is), or through the
 * estimator without one (a sample the ring lost). */
static void charge_handed(struct prof_offcpu *oc, const struct prof_bpf_swa_thread *r, uint32_t thread)
{
	struct prof_switch_interval iv = { 0, r->t_out, r->t_in, r->tid, r->pid, thread, !(r->flags & PROF_SWA_SLEEP) };
	enum prof_metric m = iv.preempt ? PROF_M_PREEMPT_NS : r->flags & PROF_SWA_D ? PROF_M_UNINT_NS : PROF_M_SLEEP_NS;
	struct taken t = { 0 };

	take_samples(oc, r->tid, r->t_out, r->flags, &t);
	if (r->flags & PROF_SWA_KSTACK)
		take_kstack(prof_offcpu_est(oc, r->tid), r->t_out, &t);
	if (t.kern) {	/* D state: classed by its kernel stack, estimated by class */
		m = (enum prof_metric)t.k.metric;
		if (t.user)
			t.u.node = graft(oc, t.u.node, t.k.node);
	} else if (t.user && t.u.metric == PROF_METRIC_COUNT)
		return;
	else if (t.user)
		m = (enum prof_metric)t.u.metric;
	if (r->flags & PROF_SWA_IO)	/* the kernel's own verdict, stack or not */
		m = PROF_M_IOWAIT_NS;
	oc->stats.d_io_flag += (r->flags & (PROF_SWA_IO | PROF_SWA_KSTACK)) == PROF_SWA_IO && !t.user;
	prof_offcpu_charge(oc, &iv, t.user ? &t.u : NULL, m);
}

/* A record of the accountant: an interval handed over, or an exit. */
static void on_record(void *arg, const struct prof_bpf_swa_thread *r)
{
	struct prof_offcpu *oc = arg;
	uint32_t thread;

	if (r->exit) {
		take_totals(oc, r);
		prof_offcpu_est_exit(oc, r->tid);
		return;
	}
	thread = prof_replay_thread(oc->rp, (pid_t)r->pid, (pid_t)r->tid);
	if (r->flags & PROF_SWA_AT_START) {
		struct prof_switch_interval iv = { 0, r->t_out, r->t_in, r->tid, r->pid, thread, false,
						   PROF_SWITCH_FROM_START };
		prof_offcpu_charge(oc, &iv, NULL, PROF_M_SLEEP_NS);
		return;
	}
	charge_handed(oc, r, thread);
}

/* The accountant keeps to the recording's processes, but for a family
 * that outgrew its map of targets (src/perf/bpf/targets.h): the replay
 * engine knows them. */
static bool recorded(const struct prof_offcpu *oc, const struct prof_bpf_swa_thread *t)
{
	return prof_replay_wanted(oc->rp, (pid_t)t->pid);
}

/* A kept switch-out's sample, held with the records until the rings'
 * samples have passed its time, so that the replay engine has replayed
 * what came before it (a new mapping, an exec): a copy of the ring's
 * record, gone once the drain returns, and the PROF_RECORD_PYSTACK record
 * of its Python frames, read at the drain, while the thread most likely
 * still waits where it blocked.  buf: the kernel frames, the stack or
 * chain, the Python record. */
struct held_sample {
	struct prof_bpf_swa_sample smp;
	size_t py_size;
	uint64_t buf[];
};

/* Bytes of buf after the kernel frames that the stack or chain takes
 * (rounded up to 8: the Python record after it is read as u64s). */
static size_t held_data_bytes(const struct prof_bpf_swa_sample *smp)
{
	return (smp->stack_size + 8 * (size_t)smp->nchain + 7) & ~(size_t)7;
}

/* The Python frames of a kept switch-out must be read before the thread
 * runs again.  Where the frame reader's program cannot read them at the
 * switch-out (no then[0]: see prof_offcpu_python), a process seen to run
 * CPython has its kept switch-outs wake the recorder, rather than leave
 * the sample to the next drain (up to 100 ms on an idle loop, where a
 * thread's waits may last a few ms). */
static void python_wakes(struct prof_offcpu *oc, const struct prof_bpf_swa_thread *r)
{
	struct est *e = prof_offcpu_est(oc, r->tid);

	if (oc->py_at_switch)
		return;
	if (!e->py_wakes && prof_bpf_swa_wake_for(oc->swa, (pid_t)r->pid) == 0)
		e->py_wakes = true;
}

static struct prof_bpf_swa_thread held_copy(struct prof_offcpu *oc, const struct prof_bpf_swa_thread *r)
{
	const struct prof_bpf_swa_sample *in = r->sample;
	uint64_t regs[PERF_REG_X86_64_MAX], chain[1 + 1024], py[256];	/* py: PROF_PY_MAX_FRAMES u64s and a head */
	size_t ks = 8 * (size_t)in->nkstack, data = held_data_bytes(in);
	struct prof_bpf_swa_thread t = *r;
	struct prof_perf_sample s;
	struct held_sample *h;
	size_t npy = 0;
	uint8_t *p;

	if (oc->py) {
		prof_bpf_swa_perf_sample(r, &oc->st.attr, regs, chain, ARRAY_SIZE(chain), &s);
		npy = prof_python_sample_record(oc->py, &s, true, py, sizeof(py));
	}
	h = xmalloc(sizeof(*h) + ks + data + npy);
	h->smp = *in;
	h->py_size = npy;
	p = (uint8_t *)h->buf;
	memcpy(p, in->kstack, ks);
	h->smp.kstack = (const uint64_t *)p;
	p += ks;
	if (in->stack) {
		memcpy(p, in->stack, in->stack_size);
		h->smp.stack = p;
	} else if (in->chain) {
		memcpy(p, in->chain, 8 * (size_t)in->nchain);
		h->smp.chain = (const uint64_t *)p;
	}
	memcpy(p + data, py, npy);
	t.sample = &h->smp;
	if (npy)
		python_wakes(oc, r);
	return t;
}

/* Whether the stack of sample h, unwound to node, can be named for
 * repeats: the unwind read a stack copy, every word it read is logged and
 * none was past the copy's end (a longer copy could unwind further), and
 * the stack is the native one alone (a CPython thread's Python frames are
 * not on its C stack). */
static const struct prof_unwind_reads *nameable(struct prof_offcpu *oc, const struct held_sample *h,
						 uint32_t pid, uint32_t node)
{
	const struct prof_unwind_result *u = prof_replay_unwound(oc->rp);
	const struct prof_unwind_reads *reads = u ? &u->reads : NULL;

	if (node == PROF_NONE || !h->smp.user || !h->smp.stack || h->py_size || !reads || reads->overflow ||
	    reads->past_end || !prof_bpf_swa_repeats(oc->swa))
		return NULL;
	return !oc->py || prof_python_is_native(oc->py, (pid_t)pid) ? reads : NULL;
}

/* Names the stack of the thread's sample for the accountant's repeats. */
static void learn_shape(struct prof_offcpu *oc, const struct prof_bpf_swa_thread *r, const struct held_sample *h,
			uint32_t node)
{
	const struct prof_unwind_reads *reads = nameable(oc, h, r->pid, node);
	uint8_t cls = h->smp.cls;
	struct est *e;

	if (!reads || cls > 2)
		return;
	if (!++oc->shape_seq)
		oc->shape_seq = 1;
	if (prof_bpf_swa_learn(oc->swa, r->tid, &h->smp, reads->off, reads->n, reads->bp_used, oc->shape_seq) < 0)
		return;
	e = prof_offcpu_est(oc, r->tid);
	e->shapes[cls][e->shapes_next[cls]].seq = oc->shape_seq;
	e->shapes[cls][e->shapes_next[cls]].node = node;
	e->shapes_next[cls] = (uint8_t)((e->shapes_next[cls] + 1) % SHAPES_KEPT);
}

/* Tells the accountant where the thread's stack ends, once an unwind of
 * its sample reached the outermost frame within the copy: its later kept
 * switch-outs copy only that far.  An unwind that ran past the end of a
 * copy so cut takes the end back (a thread that changes stacks: a Go
 * runtime's, a signal stack); the next full copy learns it again. */
static void learn_base(struct prof_offcpu *oc, const struct prof_bpf_swa_thread *r, const struct held_sample *h)
{
	const struct prof_unwind_result *u = prof_replay_unwound(oc->rp);
	struct est *e = prof_offcpu_est(oc, r->tid);
	uint64_t top = 0;

	if (!u || !h->smp.user || !h->smp.stack || !e->k_born)
		return;
	oc->stats.to_base += h->smp.to_base;
	if (u->reads.past_end) {
		oc->stats.to_base_short += h->smp.to_base;
		if (!h->smp.to_base)
			return;
	} else if (u->complete && u->reads.top) {
		top = h->smp.uregs[PERF_REG_X86_SP] + u->reads.top;
	} else {
		return;
	}
	if (top == e->base && e->k_born == e->base_born)
		return;
	if (prof_bpf_swa_set_base(oc->swa, r->tid, e->k_born, top) == 0) {
		e->base = top;
		e->base_born = e->k_born;
	}
}

/* A repeat: the kept switch-out waits for its interval's record with the
 * stack its shape named, or, that name gone, with none (its interval is
 * charged by the estimator, as one whose sample the ring lost). */
static void replay_repeat(struct prof_offcpu *oc, const struct prof_bpf_swa_thread *r)
{
	struct est *e = prof_offcpu_est(oc, r->tid);

	for (int i = 0; r->cls <= 2 && i < SHAPES_KEPT; i++) {
		if (e->shapes[r->cls][i].seq != r->seq || !r->seq)
			continue;
		struct waiting_sample w = { { r->t_out, prof_replay_thread(oc->rp, (pid_t)r->pid, (pid_t)r->tid),
					      e->shapes[r->cls][i].node, K_RANDOM, PROF_M_SLEEP_NS }, true };
		VEC_PUSH(&e->waiting, w);
		oc->stats.repeats++;
		oc->stats.full_stacks++;
		return;
	}
	oc->stats.repeats_unnamed++;
}

/* A held sample, unwound and named by the replay engine as a perf sample
 * of the switch-out would be, under the kernel frame that called
 * __schedule (on_sample takes it as the filtered ring's), and named for
 * repeats; then freed.  The first such frame of a thread that blocked,
 * in schedule(), is given to the accountant (switches.c). */
static void replay_sample(struct prof_offcpu *oc, const struct prof_bpf_swa_thread *r)
{
	struct held_sample *h = (struct held_sample *)r->sample;
	uint64_t regs[PERF_REG_X86_64_MAX], chain[1 + 1024];
	uint64_t leaf = h->smp.nkstack == 1 ? h->smp.kstack[0]	/* given, not unwound */
			: prof_kstacks_schedule_caller(oc->kstacks, h->smp.kstack, h->smp.nkstack);
	size_t data = held_data_bytes(&h->smp);
	struct prof_perf_sample s;

	if (h->smp.cls && leaf && !oc->leaf_given && prof_kstacks_in_schedule(oc->kstacks, leaf)) {
		(void)prof_bpf_swa_set_voluntary_leaf(oc->swa, leaf);	/* tried once */
		oc->leaf_given = true;
	}

	prof_bpf_swa_perf_sample(r, &oc->st.attr, regs, chain, ARRAY_SIZE(chain), &s);
	if (h->py_size)
		prof_replay_record(oc->rp, &oc->st.attr, &oc->st,
				   (const struct perf_event_header *)((const uint8_t *)h->buf +
								      8 * (size_t)h->smp.nkstack + data));
	if (leaf) {
		s.ip = leaf;
		s.kernel = true;
	}
	uint32_t node = prof_replay_sample(oc->rp, &oc->st.attr, &oc->st, &s);
	if (!prof_replay_before_exec(oc->rp)) {	/* the thread's next stacks are the new image's */
		learn_shape(oc, r, h, node);
		learn_base(oc, r, h);
	}
	free(h);
}

static void hold(void *arg, const struct prof_bpf_swa_thread *r)
{
	struct prof_offcpu *oc = arg;

	if (!recorded(oc, r))
		return;
	if (r->sample)
		VEC_PUSH(&oc->held, held_copy(oc, r));
	else if (r->kstack)
		hold_kstack(oc, r);
	else
		VEC_PUSH(&oc->held, *r);
}

/* The records and samples that the rings' samples have passed (an
 * interval's end, a sample's time), in the order they came: up to the
 * horizon, or every one (final). */
static void handle_held(struct prof_offcpu *oc, bool final)
{
	size_t k = 0;

	for (size_t i = 0; i < oc->held.n; i++) {
		const struct prof_bpf_swa_thread *r = &oc->held.v[i];
		if (!final && (r->sample || r->repeat ? r->t_out : r->t_in) > oc->horizon)
			oc->held.v[k++] = *r;
		else if (r->sample)
			replay_sample(oc, r);
		else if (r->repeat)
			replay_repeat(oc, r);
		else
			on_record(oc, r);
	}
	oc->held.n = k;
}

void prof_offcpu_free_held(struct prof_offcpu *oc)
{
	for (size_t i = 0; i < oc->held.n; i++)
		if (oc->held.v[i].sample)
			free((void *)oc->held.v[i].sample);
	VEC_FREE(&oc->held);
}

static void take_entry(void *arg, const struct prof_bpf_swa_thread *t)
{
	if (recorded(arg, t))
		take_totals(arg, t);
}

/* A thread's last interval at the end: from its last switch-out, off
 * the CPU for the wall time since less the CPU time it has run since (by
 * /proc; 0 for a thread gone).  Handed over like the kernel would have,
 * or added to its class's total. */
static void close_entry(void *arg, const struct prof_bpf_swa_thread *t)
{
	struct prof_offcpu *oc = arg;
	struct prof_bpf_swa_thread r = *t;
	uint64_t cpu, ran;

	if (!recorded(oc, t))
		return;
	take_totals(oc, t);
	if (!(t->flags & PROF_SWA_OPEN) || oc->end <= t->t_out || !(cpu = prof_proc_cpu_ns((pid_t)t->tid)))
		return;
	ran = cpu > t->sum ? cpu - t->sum : 0;
	if (oc->end - t->t_out <= ran)
		return;
	r.t_in = oc->end - ran;
	if (t->flags & (PROF_SWA_SAMPLED | PROF_SWA_D | PROF_SWA_AT_START)) {
		on_record(oc, &r);
		return;
	}
	struct est *e = prof_offcpu_est(oc, t->tid);
	int c = t->flags & PROF_SWA_SLEEP ? C_SLEEP : C_PREEMPT;
	if (!e->start[c])
		e->start[c] = t->t_out;
	e->exact[c] += r.t_in - t->t_out;
	thread_later(e, t);
	oc->stats.estimated++;
}

/* The accountant's records, and its totals every OFFCPU_SCAN_NS. */
void prof_offcpu_poll_accountant(struct prof_offcpu *oc)
{
	uint64_t now = now_ns();

	prof_bpf_swa_drain(oc->swa, hold, oc);
	handle_held(oc, false);
	(void)prof_bpf_swa_flush(oc->swa);
	if (now - oc->scanned < OFFCPU_SCAN_NS)
		return;
	prof_bpf_swa_scan(oc->swa, take_entry, oc);
	oc->scanned = now;
	oc->newest = MAX(oc->newest, now);
}

/* The end: every record, the final totals, and the intervals still open. */
void prof_offcpu_finish_accountant(struct prof_offcpu *oc)
{
	struct prof_bpf_swa_counts n;

	prof_bpf_swa_drain(oc->swa, hold, oc);
	handle_held(oc, true);
	prof_bpf_swa_scan(oc->swa, close_entry, oc);
	prof_bpf_swa_counts(oc->swa, &n);
	oc->stats.switches_lost += n.untracked + n.lost;
	oc->stats.full_lost += n.unsent;
	oc->stats.d_kernel_missing += n.no_kstack;
	oc->stats.stale_budget = n.stale_budget;
	oc->stats.stale_refused = n.stale_refused;
	oc->stats.spent_ns = n.own.spent_ns;
	oc->stats.spent_runs = n.own.runs;
	oc->stats.own_taken = n.own.taken;
	oc->stats.own_tested = n.own.tested;
}

