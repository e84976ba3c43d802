/*
 * recorder.c - the live consumer of perf records during `prof record`
 * (see include/prof/recorder.h): keeps one address space per process,
 * names threads, and unwinds + symbolizes every sample into a trie node
 * that goes to the prof.data writer.
 *
 * Design notes / invariants:
 *  - spaces maps pid -> struct prof_addrspace *.  A space is created on
 *    FORK (copy of the parent's), at attach (from /proc/PID/maps) or at
 *    first sight of a pid (also from /proc); cleared on COMM with
 *    MISC_COMM_EXEC; filled by executable MMAP2 records.
 *  - live maps pid -> number of threads not yet EXITed.  When it drops to
 *    0 the space is queued in `dead` and freed after the drain pass, since
 *    a sample of the exiting process may still be merged in behind it.
 *  - threads maps tid -> profile thread index + 1; COMM updates it.
 *  - The per-sample path uses only fixed buffers in the recorder: no
 *    allocation (beyond first-seen frames/nodes in the model) and no
 *    syscalls, except reading /proc/TID/comm once per new thread.
 *  - Samples of prof itself are dropped (attach to a process tree that
 *    contains prof must not profile the profiler).
 *  - A lost EXIT record (ring full: common system-wide on a busy machine)
 *    would keep a space forever, so about once a second the spaces of
 *    pids that no longer exist are swept.  Memory follows the live
 *    processes, not every process the recording saw.
 *  - A drain pass stops after pass_budget_ns (when set) so that a loop
 *    that cannot keep up still sees its deadline and its keys; what is
 *    left waits in the pump's queues or the rings for the next pass.
 */
#include "prof/recorder.h"
#include "prof/proc.h"
#include "prof/symbol.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <malloc.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#define MAX_OUT_FRAMES (PROF_MAX_FRAMES * 4)

struct prof_recorder {
	struct prof_profile *p;
	struct prof_writer *w;
	struct prof_perf *pf;
	struct prof_symbolizer *sym;
	struct prof_unwinder *unw;	/* NULL unless -g dwarf */
	struct u64map spaces, live, threads, seen_pids;
	VEC(struct prof_addrspace *) dead;
	pid_t self;
	uint64_t pcs[PROF_MAX_FRAMES];
	uint32_t frames[MAX_OUT_FRAMES];
	struct prof_user_regs regs;
	uint64_t pass_budget_ns, pass_end, next_sweep;
	size_t spaces_peak, spaces_freed;	/* for prof_recorder_space_stats */
	unsigned pass_records;
	/* The live consumer of resolved samples (prof top); NULL if unused. */
	void (*on_resolved)(void *arg, uint64_t time, uint32_t thread, uint32_t node, bool complete);
	void *resolved_arg;
	/* Hooks of the resource side (offcpu.c, timeline.c); NULL if unused. */
	void (*after_drain)(void *arg, struct prof_recorder *r);
	void (*on_task)(void *arg, const struct perf_event_header *h);
	void *hook_arg;
};

void prof_recorder_set_hooks(struct prof_recorder *r,
			     void (*after_drain)(void *arg, struct prof_recorder *r),
			     void (*on_task)(void *arg, const struct perf_event_header *h),
			     void *arg)
{
	r->after_drain = after_drain;
	r->on_task = on_task;
	r->hook_arg = arg;
}

void prof_recorder_set_consumer(struct prof_recorder *r,
				void (*fn)(void *arg, uint64_t time, uint32_t thread, uint32_t node,
					   bool complete),
				void *arg)
{
	r->on_resolved = fn;
	r->resolved_arg = arg;
}

void prof_recorder_set_pass_budget(struct prof_recorder *r, uint64_t ns)
{
	r->pass_budget_ns = ns;
}

struct prof_writer *prof_recorder_writer(const struct prof_recorder *r)
{
	return r->w;
}

struct prof_profile *prof_recorder_profile(const struct prof_recorder *r)
{
	return r->p;
}

struct prof_recorder *prof_recorder_new(struct prof_profile *p, struct prof_writer *w,
					struct prof_perf *pf, enum prof_unwinder_kind unwinder)
{
	struct prof_recorder *r = xcalloc(1, sizeof(*r));

	r->p = p;
	r->w = w;
	r->pf = pf;
	r->sym = prof_symbolizer_new(p);
	prof_symbolizer_prewarm(r->sym);	/* before sampling: see symbol.h */
	if (pf->cfg.callgraph == PROF_CG_DWARF)
		r->unw = prof_unwinder_new(unwinder);
	r->self = getpid();
	return r;
}

static void free_dead(struct prof_recorder *r)
{
	for (size_t i = 0; i < r->dead.n; i++)
		prof_addrspace_free(r->dead.v[i]);
	r->spaces_freed += r->dead.n;
	r->dead.n = 0;
}

/* Counts the spaces alive now and keeps the peak (a churn test's proof
 * that memory follows live processes). */
static void count_spaces(struct prof_recorder *r)
{
	size_t it = 0, live = 0;
	uint64_t pid, ptr;

	while (u64map_next(&r->spaces, &it, &pid, &ptr))
		live += ptr != 0;
	r->spaces_peak = MAX(r->spaces_peak, live);
}

void prof_recorder_space_stats(const struct prof_recorder *r, size_t *peak_live, size_t *freed)
{
	*peak_live = r->spaces_peak;
	*freed = r->spaces_freed;
}

void prof_recorder_free(struct prof_recorder *r)
{
	if (!r)
		return;
	free_dead(r);
	size_t it = 0;
	uint64_t pid, ptr;
	while (u64map_next(&r->spaces, &it, &pid, &ptr))
		prof_addrspace_free((struct prof_addrspace *)(uintptr_t)ptr);
	u64map_free(&r->spaces);
	u64map_free(&r->live);
	u64map_free(&r->threads);
	u64map_free(&r->seen_pids);
	VEC_FREE(&r->dead);
	if (r->unw)
		prof_unwinder_free(r->unw);
	prof_symbolizer_free(r->sym);
	free(r);
}

size_t prof_recorder_processes(const struct prof_recorder *r)
{
	return r->seen_pids.n;
}

/* --- processes and threads ------------------------------------------------ */

static struct prof_addrspace *space_get(struct prof_recorder *r, pid_t pid)
{
	uint64_t v;

	return u64map_get(&r->spaces, (uint64_t)pid, &v) ? (struct prof_addrspace *)(uintptr_t)v : NULL;
}

static void space_set(struct prof_recorder *r, pid_t pid, struct prof_addrspace *as)
{
	struct prof_addrspace *old = space_get(r, pid);

	if (old && old != as)
		VEC_PUSH(&r->dead, old);
	u64map_put(&r->spaces, (uint64_t)pid, (uint64_t)(uintptr_t)as);
	u64map_put(&r->seen_pids, (uint64_t)pid, 1);
}

/* The space of pid, created from /proc when first seen. */
static struct prof_addrspace *space_of(struct prof_recorder *r, pid_t pid)
{
	struct prof_addrspace *as = space_get(r, pid);

	if (!as) {
		as = prof_addrspace_new(pid);
		prof_addrspace_load_proc(as);	/* best effort: may be gone */
		space_set(r, pid, as);
	}
	return as;
}

static uint32_t thread_set(struct prof_recorder *r, pid_t pid, pid_t tid, const char *comm)
{
	uint32_t t = prof_thread_intern(r->p, (uint32_t)pid, (uint32_t)tid, comm);

	u64map_put(&r->threads, (uint64_t)tid, (uint64_t)t + 1);
	return t;
}

static uint32_t thread_of(struct prof_recorder *r, pid_t pid, pid_t tid)
{
	uint64_t v;
	char comm[64] = "";

	if (u64map_get(&r->threads, (uint64_t)tid, &v))
		return (uint32_t)(v - 1);
	prof_proc_comm(pid, tid, comm, sizeof(comm));
	return thread_set(r, pid, tid, comm);
}

static void live_add(struct prof_recorder *r, pid_t pid, int64_t delta)
{
	bool created;
	uint64_t *n = u64map_slot(&r->live, (uint64_t)pid, &created);

	if (created)
		*n = 0;
	*n = (uint64_t)((int64_t)*n + delta);
	if ((int64_t)*n <= 0) {
		struct prof_addrspace *as = space_get(r, pid);
		*n = 0;
		if (as) {
			VEC_PUSH(&r->dead, as);
			u64map_put(&r->spaces, (uint64_t)pid, 0);
		}
	}
}

void prof_recorder_add_child(struct prof_recorder *r, pid_t pid, const char *comm)
{
	space_set(r, pid, prof_addrspace_new(pid));
	live_add(r, pid, 1);
	thread_set(r, pid, pid, comm);
}

int prof_recorder_add_process(struct prof_recorder *r, pid_t pid)
{
	pid_t *tids;
	size_t n;
	char comm[64];
	struct prof_addrspace *as;

	if (prof_proc_tids(pid, &tids, &n) < 0)
		return -ESRCH;
	for (size_t i = 0; i < n; i++)
		if (prof_proc_comm(pid, tids[i], comm, sizeof(comm)) == 0)
			thread_set(r, pid, tids[i], comm);
	free(tids);
	as = prof_addrspace_new(pid);
	if (prof_addrspace_load_proc(as) < 0) {
		prof_addrspace_free(as);
		return -ESRCH;
	}
	space_set(r, pid, as);
	live_add(r, pid, (int64_t)n);
	return 0;
}

/* --- side-band records ------------------------------------------------------ */

static void on_comm(struct prof_recorder *r, const struct perf_event_header *h)
{
	struct prof_perf_comm c;

	if (prof_perf_parse_comm(h, &c) < 0 || (pid_t)c.pid == r->self)
		return;
	if (c.exec) {
		struct prof_addrspace *as = space_get(r, (pid_t)c.pid);
		if (as)
			prof_addrspace_clear(as);
		else
			space_set(r, (pid_t)c.pid, prof_addrspace_new((pid_t)c.pid));
		/* a new image: a new thread identity, so earlier samples keep the old comm */
		uint32_t t = prof_thread_add(r->p, c.pid, c.tid, c.comm);
		u64map_put(&r->threads, (uint64_t)c.tid, (uint64_t)t + 1);
		return;
	}
	thread_set(r, (pid_t)c.pid, (pid_t)c.tid, c.comm);
}

static void on_mmap2(struct prof_recorder *r, const struct perf_event_header *h)
{
	struct prof_perf_mmap2 m;

	if (prof_perf_parse_mmap2(h, &m) < 0 || !(m.prot & PROT_EXEC) || (pid_t)m.pid == r->self)
		return;
	prof_addrspace_map_build_id(space_of(r, (pid_t)m.pid), m.addr, m.len, m.pgoff, m.filename,
				    m.prot, m.build_id);
}

static void on_fork(struct prof_recorder *r, const struct perf_event_header *h)
{
	struct prof_perf_task t;

	if (prof_perf_parse_task(h, &t) < 0)
		return;
	if (t.pid != t.ppid) {	/* new process: a copy of the parent's maps */
		struct prof_addrspace *parent = space_get(r, (pid_t)t.ppid);
		space_set(r, (pid_t)t.pid, parent ? prof_addrspace_fork(parent, (pid_t)t.pid)
						  : prof_addrspace_new((pid_t)t.pid));
	}
	live_add(r, (pid_t)t.pid, 1);
	/* The new thread starts with its creator's name. */
	uint64_t v;
	if (u64map_get(&r->threads, t.ptid, &v))
		thread_set(r, (pid_t)t.pid, (pid_t)t.tid,
			   prof_str(r->p, r->p->threads.v[v - 1].comm));
}

static void on_exit_record(struct prof_recorder *r, const struct perf_event_header *h)
{
	struct prof_perf_task t;

	if (prof_perf_parse_task(h, &t) == 0)
		live_add(r, (pid_t)t.pid, -1);
}

/* --- samples ------------------------------------------------------------------ */

static bool is_context_marker(uint64_t v) { return v >= (uint64_t)PERF_CONTEXT_MAX; }

/* Appends the kernel part of the callchain (and, for -g fp, the user part
 * into pcs).  Returns the number of frames written to out. */
static size_t kernel_frames(struct prof_recorder *r, const struct prof_perf_sample *s,
			    uint32_t *out, size_t max, size_t *n_user_pcs)
{
	uint64_t ctx = PERF_CONTEXT_KERNEL;
	size_t n = 0;

	*n_user_pcs = 0;
	for (uint64_t i = 0; i < s->nr_callchain; i++) {
		uint64_t pc = s->callchain[i];
		if (is_context_marker(pc)) {
			ctx = pc;
			continue;
		}
		if (ctx == PERF_CONTEXT_KERNEL && n < max)
			n += prof_symbolize_kernel(r->sym, pc, out + n, max - n);
		else if (ctx == PERF_CONTEXT_USER && *n_user_pcs < PROF_MAX_FRAMES)
			r->pcs[(*n_user_pcs)++] = pc;
	}
	return n;
}

static void fill_regs(struct prof_recorder *r, const struct prof_perf_sample *s)
{
	uint64_t mask = r->pf->attr.sample_regs_user;
	size_t k = 0;

	for (int bit = 0; bit < PERF_REG_X86_64_MAX; bit++)
		if (mask & (1ULL << bit))
			r->regs.r[bit] = s->regs[k++];
}

/* User pcs for -g dwarf: unwinds the stack copy.  Returns the count. */
static size_t dwarf_pcs(struct prof_recorder *r, const struct prof_perf_sample *s,
			struct prof_addrspace *as, bool *complete)
{
	struct prof_ustack st = { s->stack, s->stack_size };
	struct prof_unwind_result res = { 0 };

	if (!s->regs_abi || !s->regs) {
		*complete = true;	/* a kernel thread: no user stack */
		return 0;
	}
	fill_regs(r, s);
	prof_unwind(r->unw, as, (pid_t)s->tid, &r->regs, &st, r->pcs, PROF_MAX_FRAMES, &res);
	*complete = res.complete;
	return res.n;
}

uint32_t prof_recorder_resolve(struct prof_recorder *r, const struct prof_perf_sample *sp,
			       uint32_t *thread, bool *complete)
{
	struct prof_perf_sample s = *sp;
	struct prof_addrspace *as;
	size_t nk, nu = 0, n;

	*complete = true;
	*thread = thread_of(r, (pid_t)s.pid, (pid_t)s.tid);
	as = space_of(r, (pid_t)s.pid);
	nk = kernel_frames(r, &s, r->frames, MAX_OUT_FRAMES, &nu);
	switch (r->pf->cfg.callgraph) {
	case PROF_CG_DWARF:
		nu = dwarf_pcs(r, &s, as, complete);
		break;
	case PROF_CG_FP:
		*complete = s.nr_callchain < 127;	/* kernel.perf_event_max_stack */
		break;
	case PROF_CG_NONE:
		nu = 0;
		if (s.kernel && !nk)	/* the off-CPU event keeps its kernel chain */
			nk = prof_symbolize_kernel(r->sym, s.ip, r->frames, MAX_OUT_FRAMES);
		else
			r->pcs[nu++] = s.ip;
		break;
	}
	if (!nk && !nu)
		r->pcs[nu++] = s.ip;	/* never an empty stack */
	n = nk;
	for (size_t i = 0; i < nu && n < MAX_OUT_FRAMES; i++)
		n += prof_symbolize_user(r->sym, as, r->pcs[i], i > 0, r->frames + n, MAX_OUT_FRAMES - n);
	return prof_node_from_stack(r->p, r->frames, n);
}

static void on_sample(struct prof_recorder *r, const struct perf_event_header *h)
{
	struct prof_perf_sample s;
	bool complete;
	unsigned flags;
	uint32_t thread, node;

	if (prof_perf_parse_sample(r->pf, h, &s) < 0 || (pid_t)s.pid == r->self)
		return;
	node = prof_recorder_resolve(r, &s, &thread, &complete);
	flags = (complete ? 0 : PROF_SAMPLE_TRUNCATED) | (s.kernel ? PROF_SAMPLE_KERNEL : 0);
	/* CPU time is not stored per sample: the reader derives PROF_M_CPU_NS
	 * as samples x period_ns (meta + summary), which keeps files small. */
	if (r->w)
		prof_writer_sample(r->w, s.time, thread, node, PROF_M_SAMPLES, 1, flags);
	if (r->on_resolved)
		r->on_resolved(r->resolved_arg, s.time, thread, node, complete);
	r->p->samples++;
	r->p->samples_truncated += !complete;
	if (!r->p->start_ns || s.time < r->p->start_ns)
		r->p->start_ns = s.time;
	if (s.time > r->p->end_ns)
		r->p->end_ns = s.time;
}

static int on_record(void *ctx, const struct perf_event_header *h)
{
	struct prof_recorder *r = ctx;
	uint64_t lost;

	switch (h->type) {
	case PERF_RECORD_SAMPLE: on_sample(r, h); break;
	case PERF_RECORD_MMAP2: on_mmap2(r, h); break;
	case PERF_RECORD_COMM: on_comm(r, h); break;
	case PERF_RECORD_FORK:
		on_fork(r, h);
		if (r->on_task)
			r->on_task(r->hook_arg, h);
		break;
	case PERF_RECORD_EXIT:
		on_exit_record(r, h);
		if (r->on_task)
			r->on_task(r->hook_arg, h);
		break;
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES:
		lost = prof_perf_lost_count(h);
		if (lost) {
			struct prof_perf_sample_id id = { 0 };
			prof_perf_parse_id(h, &id);
			r->p->lost += lost;
			if (r->w)
				prof_writer_lost(r->w, id.time, lost);
		}
		break;
	}
	/* the pass budget, looked at every 64 records */
	return r->pass_end && !(++r->pass_records & 63) && now_ns() >= r->pass_end;
}

/* Frees the spaces of processes that are gone without an EXIT record. */
static void sweep_vanished(struct prof_recorder *r)
{
	size_t it = 0, first = r->dead.n;
	uint64_t pid, ptr;

	while (u64map_next(&r->spaces, &it, &pid, &ptr))
		if (ptr && kill((pid_t)pid, 0) < 0 && errno == ESRCH)
			VEC_PUSH(&r->dead, (struct prof_addrspace *)(uintptr_t)ptr);
	for (size_t i = first; i < r->dead.n; i++)	/* no inserts while iterating */
		u64map_put(&r->spaces, (uint64_t)r->dead.v[i]->pid, 0);
}

bool prof_recorder_drain(struct prof_recorder *r)
{
	uint64_t now = now_ns();
	bool more;

	r->pass_end = r->pass_budget_ns ? now + r->pass_budget_ns : 0;
	more = prof_perf_drain(r->pf, on_record, r) != 0;
	if (r->after_drain)	/* before free_dead: off-CPU stacks need the spaces */
		r->after_drain(r->hook_arg, r);
	count_spaces(r);
	if (now >= r->next_sweep) {
		size_t before = r->spaces_freed;
		sweep_vanished(r);
		free_dead(r);
		/* libdw's per-process state is many small blocks: give freed
		 * pages back, so RSS shows what live processes hold */
		if (r->spaces_freed != before)
			malloc_trim(0);
		r->next_sweep = now + 1000000000ULL;
	}
	free_dead(r);
	return more;
}

int prof_recorder_flush(struct prof_recorder *r)
{
	return prof_writer_flush(r->w, r->p);
}
