/*
 * session.c - one live recording (see include/prof/session.h): the live
 * driver of the replay engine.  It opens the events, launches or finds
 * the targets, and drains the kernel rings into the engine, whose
 * consumers write the prof.data file (the writer sink below), pair
 * off-CPU switches (src/record/offcpu.c) and track resources
 * (src/record/timeline.c).
 *
 * Design notes:
 *  - Launch: the child blocks on a pipe until every per-CPU event exists
 *    (pid=child, inherit=1, enable_on_exec=1), then execvp()s.  An exec
 *    failure travels back as an errno over a CLOEXEC pipe: EOF means the
 *    exec succeeded.
 *  - Attach: events are opened disabled for every tid of every pid, the
 *    processes' maps and thread names are synthesized from /proc, then all
 *    events are enabled.
 *  - One drain pass is a batch of the engine: the rings of the CPU event
 *    and of both off-CPU events merged into one stream in time order, then
 *    prof_replay_batch_end.  Only the CPU event carries MMAP, COMM, FORK
 *    and EXIT records, and an off-CPU stack resolves against the address
 *    space they built at its time: drained one event after the other, a
 *    loaded machine replayed switch-out stacks before the MMAPs of their
 *    libraries or after their process's EXIT, and charged them to
 *    [unknown] (docs/robustness.md).
 *  - The writer is flushed about every second, so a SIGKILLed prof loses
 *    at most ~1 s.  A write error stops recording (events closed, the file
 *    kept readable up to the last good flush) and leaves the command alone.
 */
#include "prof/session.h"
#include "prof/data.h"
#include "prof/heap.h"
#include "prof/offcpu.h"
#include "prof/proc.h"
#include "prof/python.h"
#include "prof/replay.h"
#include "prof/restrack.h"
#include "prof/symbol.h"
#include "prof/target.h"
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FLUSH_INTERVAL_NS 1000000000ULL
#define DRAIN_PASS_NS 200000000ULL


struct prof_session {
	const struct prof_session_opts *o;
	struct prof_profile p;
	struct prof_perf pf;
	struct prof_writer *w;
	struct prof_replay *rp;
	struct prof_offcpu *oc;		/* NULL: no tracepoint or no_resources */
	char offcpu_why[512];		/* why oc is NULL */
	struct prof_restrack *rt;	/* NULL with no_resources */
	struct prof_heap *heap;		/* NULL without --heap or when it cannot be */
	char heap_why[512];		/* why heap is NULL */
	struct prof_python *py;		/* NULL with no_python */
	struct spawn l;		/* the launched command (util/spawn.c) */
	bool bounds_only;	/* -a/-p with a command: it bounds the recording */
	bool child_done;
	int child_status;
	VEC(uint8_t) charged;	/* per profile thread: CHARGED_CPU, CHARGED_OFFCPU */
	struct prof_session_info info;
};

/* What a thread has in the file (the summary counts them). */
#define CHARGED_CPU 1
#define CHARGED_OFFCPU 2

static volatile sig_atomic_t stop_requested;
static volatile pid_t forward_to;

static void on_stop_signal(int sig)
{
	if (forward_to > 0)
		kill(forward_to, sig);
	else
		stop_requested = 1;
}

/* --- meta data ------------------------------------------------------------------ */

/* The machine a recording ran on (the Firefox export's Profile Info):
 * the CPU's model name, the online CPUs and the memory. */
static void set_machine_meta(struct prof_profile *p)
{
	char *info = read_file("/proc/cpuinfo", NULL), *model = info ? strstr(info, "model name") : NULL;
	char num[32];
	long cpus = sysconf(_SC_NPROCESSORS_ONLN), pages = sysconf(_SC_PHYS_PAGES);
	long page = sysconf(_SC_PAGESIZE);

	if (model && (model = strchr(model, ':'))) {
		model += 1 + strspn(model + 1, " \t");
		model[strcspn(model, "\n")] = 0;
		prof_meta_set(p, "cpu_model", model);
	}
	free(info);
	if (cpus > 0) {
		snprintf(num, sizeof(num), "%ld", cpus);
		prof_meta_set(p, "cpus", num);
	}
	if (pages > 0 && page > 0) {
		snprintf(num, sizeof(num), "%llu", (unsigned long long)pages * (unsigned long long)page);
		prof_meta_set(p, "memory_bytes", num);
	}
}

static void set_meta(struct prof_profile *p, const struct prof_session_opts *o)
{
	struct strbuf sb = STRBUF_INIT;
	struct utsname u;
	char host[256] = "", when[64];
	time_t now = time(NULL);
	struct tm tm;

	prof_meta_set(p, "event", o->perf.event->name);
	sb_addf(&sb, "%llu", (unsigned long long)o->perf.freq);
	prof_meta_set(p, "frequency", o->perf.period ? "" : sb_str(&sb));	/* -c: a period */
	sb_reset(&sb);
	sb_addf(&sb, "%llu", (unsigned long long)p->period_ns);
	prof_meta_set(p, "period_ns", sb_str(&sb));
	sb_reset(&sb);
	if (o->argv && !o->system_wide && !o->npids) {
		for (char **a = o->argv; *a; a++)
			sb_addf(&sb, "%s%s", a == o->argv ? "" : " ", *a);
	} else if (o->system_wide) {
		sb_adds(&sb, "-a");
		for (size_t i = 0; i < o->ncpus; i++)
			sb_addf(&sb, "%s%d", i ? "," : " -C ", o->cpus[i]);
	} else {
		sb_adds(&sb, "-p ");
		for (size_t i = 0; i < o->npids; i++)
			sb_addf(&sb, "%s%d", i ? "," : "", (int)o->pids[i]);
		if (o->children)
			sb_adds(&sb, " --children");
	}
	if (o->argv && (o->system_wide || o->npids))	/* the command that bounded it */
		for (char **a = o->argv; *a; a++)
			sb_addf(&sb, "%s%s", a == o->argv ? " -- " : " ", *a);
	prof_meta_set(p, "command", sb_str(&sb));
	gethostname(host, sizeof(host) - 1);
	prof_meta_set(p, "hostname", host);
	prof_meta_set(p, "kernel", uname(&u) == 0 ? u.release : "");
	prof_meta_set(p, "arch", uname(&u) == 0 ? u.machine : "");
	set_machine_meta(p);
	prof_meta_set(p, "prof_version", o->version);
	prof_meta_set(p, "callgraph", prof_callgraph_name(o->perf.callgraph));
	prof_meta_set(p, "unwinder", o->perf.callgraph == PROF_CG_DWARF ? o->unwinder_name
				     : o->perf.callgraph == PROF_CG_FP ? "fp" : "none");
	sb_reset(&sb);
	sb_addf(&sb, "%u", o->perf.stack_size);
	prof_meta_set(p, "stack_size", sb_str(&sb));
	gmtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	prof_meta_set(p, "start_time", when);
	sb_release(&sb);
}

/* --- the writer sink: CPU samples and lost counts of the main event -------------- */

static void sink_add(void *arg, uint64_t time, uint32_t thread, uint32_t node,
		     enum prof_metric metric, uint64_t value, unsigned flags)
{
	prof_writer_sample(arg, time, thread, node, metric, value, flags);
}

static void mark_charged(struct prof_session *s, uint32_t thread, uint8_t what)
{
	if (thread == PROF_NONE)
		return;
	if (thread >= s->charged.n) {
		VEC_GROW(&s->charged, (size_t)thread + 1);
		memset(s->charged.v + s->charged.n, 0, thread + 1 - s->charged.n);
		s->charged.n = (size_t)thread + 1;
	}
	s->charged.v[thread] |= what;
}

/* Off-CPU intervals: to the file, and their thread counted. */
static void offcpu_sink_add(void *arg, uint64_t time, uint32_t thread, uint32_t node,
			    enum prof_metric metric, uint64_t value, unsigned flags)
{
	struct prof_session *s = arg;

	if (metric == PROF_M_OFFCPU_NS && value)
		mark_charged(s, thread, CHARGED_OFFCPU);
	if (s->w)
		prof_writer_sample(s->w, time, thread, node, metric, value, flags);
}

/* The threads (tasks: an exec's new identity is the same thread) and
 * processes with `what` in the file. */
static void count_charged(const struct prof_session *s, uint8_t what, size_t *threads, size_t *processes)
{
	struct u64map tasks = { 0 }, pids = { 0 };

	for (size_t i = 0; i < s->charged.n && i < s->p.threads.n; i++)
		if (s->charged.v[i] & what) {
			const struct prof_thread *t = &s->p.threads.v[i];
			u64map_put(&tasks, (uint64_t)t->pid << 32 | t->tid, 1);
			u64map_put(&pids, t->pid, 1);
		}
	*threads = tasks.n;
	*processes = pids.n;
	u64map_free(&tasks);
	u64map_free(&pids);
}

static void on_cpu_sample(void *arg, const struct prof_replay_sample *rs)
{
	struct prof_session *s = arg;
	unsigned flags = (rs->complete ? 0 : PROF_SAMPLE_TRUNCATED) |
			 (rs->s->kernel ? PROF_SAMPLE_KERNEL : 0);

	if (rs->event != &s->pf)
		return;
	/* CPU time is not stored per sample: the reader derives PROF_M_CPU_NS
	 * as samples x period_ns (meta + summary), which keeps files small. */
	prof_writer_sample(s->w, rs->s->time, rs->thread, rs->node, PROF_M_SAMPLES, 1, flags);
	prof_replay_count_sample(&s->p, rs->s->time, rs->complete);
	mark_charged(s, rs->thread, CHARGED_CPU);
}

static void on_cpu_lost(void *arg, const void *event, uint32_t type, uint64_t time, uint64_t n)
{
	struct prof_session *s = arg;

	if (event != &s->pf)
		return;
	s->p.lost += n;
	prof_writer_lost(s->w, time, n);
}

static const struct prof_replay_ops writer_ops = {
	.sample = on_cpu_sample,
	.lost = on_cpu_lost,
};

/* --- draining the rings -------------------------------------------------------------- */

/* The off-CPU events' rings; how many. */
static size_t offcpu_perfs(struct prof_session *s, struct prof_perf **out)
{
	return s->oc ? prof_offcpu_perfs(s->oc, out) : 0;
}

/*
 * One batch: at most ~200 ms of records, so that the deadline, the
 * flushes, Ctrl-C and the frees of exited processes' spaces (at the end
 * of a batch) keep happening however far behind the recorder is: one
 * unbounded pass over a 60 s system-wide backlog held every exited space
 * at once (1.1 GB).  True when records were left for the next pass.
 */
static bool drain(struct prof_session *s)
{
	struct prof_perf *pfs[1 + PROF_OFFCPU_MAX_PERFS] = { &s->pf };
	struct prof_replay_source ctx[1 + PROF_OFFCPU_MAX_PERFS];
	struct prof_perf_source srcs[1 + PROF_OFFCPU_MAX_PERFS + PROF_HEAP_SOURCES];
	size_t n = 1 + offcpu_perfs(s, pfs + 1);

	for (size_t i = 0; i < n; i++) {
		ctx[i] = (struct prof_replay_source){ s->rp, pfs[i] };
		srcs[i] = (struct prof_perf_source){ pfs[i], prof_replay_source_fn, &ctx[i] };
	}
	if (s->heap)
		n += prof_heap_sources(s->heap, srcs + n);
	uint64_t passed = 0;
	bool more = prof_perf_drain_until(srcs, n, DRAIN_PASS_NS, &passed) != 0;
	prof_offcpu_rings_passed(s->oc, passed);
	prof_replay_batch_end(s->rp);
	return more;
}

/* --- targets ----------------------------------------------------------------------- */

static int launch_child(struct prof_session *s)
{
	char **argv = s->o->argv;
	int ret;

	/* -o -: the recording owns stdout, the command's output goes to stderr */
	if (s->heap)
		prof_heap_env_apply(s->heap);
	ret = spawn_held(&s->l, argv, strcmp(s->o->output, "-") ? -1 : 2, -1);
	if (s->heap)
		prof_heap_env_restore(s->heap);
	if (ret < 0)
		return error("cannot start '%s': %s", argv[0], strerror(-ret)), ret;
	s->info.launched = true;
	if ((ret = prof_perf_open_task(&s->pf, s->l.pid)) < 0) {
		spawn_abort(&s->l);
		s->info.launched = false;
		return ret;
	}
	prof_replay_add_child(s->rp, s->l.pid, argv[0]);
	if (s->heap && (ret = prof_heap_open_task(s->heap, s->l.pid)) < 0) {
		spawn_abort(&s->l);
		s->info.launched = false;
		return ret;
	}
	if (s->oc)
		prof_offcpu_open_task(s->oc, s->l.pid);
	if (s->py)
		prof_python_launched(s->py);
	if (s->rt)
		prof_restrack_add_pid(s->rt, (uint32_t)s->l.pid);
	return 0;
}

/*
 * -a or -p with a command, as in perf: the command only bounds the
 * recording of the targets (it is sampled when -a covers it, never
 * attached to on its own).  Held until the targets' events are enabled.
 */
static int spawn_bounding(struct prof_session *s)
{
	char **argv = s->o->argv;
	int ret;

	if ((ret = spawn_held(&s->l, argv, strcmp(s->o->output, "-") ? -1 : 2, -1)) < 0)
		return error("cannot start '%s': %s", argv[0], strerror(-ret)), ret;
	s->info.launched = true;
	s->bounds_only = true;
	return 0;
}

/* --- Python frames ------------------------------------------------------------------ */

/* The splice's counts for the file's meta data (see docs/python.md). */
static void python_meta(struct prof_session *s)
{
	struct prof_pysplice_stats st;
	struct strbuf sb = STRBUF_INIT;
	uint16_t v;

	if (!s->py || !prof_python_found(s->py, &v))
		return;
	prof_replay_python_stats(s->rp, &st);
	sb_addf(&sb, "%u.%u", v >> 8, v & 0xff);
	prof_meta_set(&s->p, "python", sb_str(&sb));
	sb_reset(&sb);
	sb_addf(&sb, "%llu %llu %llu %llu", (unsigned long long)st.samples,
		(unsigned long long)st.merged, (unsigned long long)st.mismatched,
		(unsigned long long)st.unread);
	prof_meta_set(&s->p, "python_samples", sb_str(&sb));
	sb_reset(&sb);
	uint64_t at, after, blocked, at_switch;
	prof_python_read_counts(s->py, &at, &after, &blocked, &at_switch);
	sb_addf(&sb, "%llu %llu %llu %llu", (unsigned long long)at, (unsigned long long)after,
		(unsigned long long)blocked, (unsigned long long)at_switch);
	prof_meta_set(&s->p, "python_read", sb_str(&sb));
	sb_release(&sb);
}

/* --- the loop ----------------------------------------------------------------------- */

/* What became of the CPU samples that fell due while prof's programs ran
 * inside the switches, with interrupts off (src/perf/bpf/owntime.h). */
static void own_samples_text(const struct prof_session *s, const struct prof_offcpu_stats *st, char *v,
			     size_t len)
{
	const struct prof_perf_config *c = &s->o->perf;
	int n;

	if (!c->event->is_clock) {	/* no timer falls due: samples come with their events */
		snprintf(v, len, "no sampling timer falls due in it (the samples come with their events)");
		return;
	}
	if (c->period)	/* -c: no rate to turn the time into samples */
		n = snprintf(v, len, "the CPU samples that fell due meanwhile are prof's, not the program's");
	else
		n = snprintf(v, len, "about %.0f CPU samples at %llu Hz fell due meanwhile, prof's, not the program's",
			     (double)st->spent_ns / 1e9 * (double)c->freq, (unsigned long long)c->freq);
	if (n < 0 || (size_t)n >= len)
		return;
	if (st->own_tested && s->pf.bpf_prog > 0)	/* the kernel took the program */
		snprintf(v + n, len - (size_t)n, "; %llu were found by their due time and left out (an event per "
			 "thread takes its sample 10 us after the thread is back instead)",
			 (unsigned long long)st->own_taken);
	else
		snprintf(v + n, len - (size_t)n, "; they land under finish_task_switch (not told by their due time here)");
}

/* How many kept off-CPU stacks the accountant sent as repeats of a stack
 * the recorder had unwound (src/record/offcpu_swa.c), for the file's meta
 * data: kept, repeats, repeats whose stack was no longer known; and how
 * its stale rule's budget went: keeps paid by it, switch-outs due one
 * that it refused, the budget a second per CPU; and the time its programs
 * spent inside the switches, whose CPU samples are prof's own (those
 * found by their due time were dropped in the kernel). */
static void offcpu_meta(struct prof_session *s)
{
	const struct prof_offcpu_stats *st = s->oc ? prof_offcpu_stats(s->oc) : NULL;
	char v[768], due[320];

	if (!st || !prof_offcpu_in_kernel(s->oc))
		return;
	snprintf(v, sizeof(v), "%llu %llu %llu", (unsigned long long)st->full_stacks,
		 (unsigned long long)st->repeats, (unsigned long long)st->repeats_unnamed);
	prof_meta_set(&s->p, "off_cpu_repeats", v);
	snprintf(v, sizeof(v), "%llu %llu", (unsigned long long)st->to_base, (unsigned long long)st->to_base_short);
	prof_meta_set(&s->p, "off_cpu_stack_ends", v);
	snprintf(v, sizeof(v), "%llu %llu %u", (unsigned long long)st->stale_budget,
		 (unsigned long long)st->stale_refused, prof_offcpu_stale_per_cpu(s->oc));
	prof_meta_set(&s->p, "off_cpu_stale_budget", v);
	if (!st->spent_ns)
		return;
	own_samples_text(s, st, due, sizeof(due));
	snprintf(v, sizeof(v),
		 "prof's BPF programs ran in %llu switch-outs of the recorded threads, %.3f s in all (%.2f us each), "
		 "with interrupts off: %s (docs/offcpu.md)",
		 (unsigned long long)st->spent_runs, (double)st->spent_ns / 1e9,
		 (double)st->spent_ns / 1e3 / (double)st->spent_runs, due);
	prof_meta_set(&s->p, "off_cpu_cost", v);
}

static void stop_recording(struct prof_session *s)
{
	prof_perf_disable(&s->pf);
	if (s->oc)
		prof_offcpu_disable(s->oc);
	if (s->heap)
		prof_heap_disable(s->heap);
	while (drain(s))	/* the rest, in passes */
		;
	if (s->oc)
		prof_offcpu_finish(s->oc);
	if (s->rt)	/* final values of what still runs (attach, -d) */
		prof_restrack_sample(s->rt);
	python_meta(s);
	offcpu_meta(s);
}

/* The launched command exited: its final /proc values while it is a
 * zombie (waitid WNOWAIT), then the reap with wait4's rusage. */
static bool reap_child(struct prof_session *s, int *st)
{
	siginfo_t si = { 0 };
	struct rusage ru;

	if (s->rt && !s->bounds_only && waitid(P_PID, (id_t)s->l.pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
	    si.si_pid == s->l.pid)
		prof_restrack_final(s->rt, (uint32_t)s->l.pid);
	if (wait4(s->l.pid, st, WNOHANG, &ru) != s->l.pid)
		return false;
	if (s->rt && !s->bounds_only)
		prof_restrack_rusage(s->rt, (uint32_t)s->l.pid, &ru);
	return true;
}

static void flush_or_fail(struct prof_session *s)
{
	if (s->info.write_failed || prof_writer_flush(s->w, &s->p) == 0)
		return;
	error("cannot write '%s' (%s); recording stopped, the file is readable up to the last second, the target keeps running",
	      s->o->output, strerror(errno ? errno : EIO));
	s->info.write_failed = true;
	prof_perf_close(&s->pf);
	prof_writer_abort(s->w);
	s->w = NULL;
}

static void install_signals(struct prof_session *s)
{
	struct sigaction sa = { 0 };

	sa.sa_handler = on_stop_signal;	/* no SA_RESTART: poll returns EINTR */
	forward_to = s->info.launched ? s->l.pid : 0;
	sigaction(SIGTERM, &sa, NULL);
	if (s->info.launched) {
		sa.sa_handler = SIG_IGN;
		sigaction(SIGQUIT, &sa, NULL);
	}
	sigaction(SIGINT, &sa, NULL);
}

static bool should_stop(struct prof_session *s, uint64_t deadline)
{
	if (s->info.launched && !s->child_done) {
		int st;
		if (reap_child(s, &st)) {
			s->child_done = true;
			s->child_status = st;
		}
	}
	if (s->info.launched && s->child_done)
		return true;
	if (stop_requested || (deadline && now_ns() >= deadline))
		return true;
	return !s->info.launched && !s->o->system_wide &&
	       !prof_target_any_alive(s->o->pids, s->o->npids);
}

static void run_loop(struct prof_session *s)
{
	uint64_t deadline = s->o->duration ? now_ns() + (uint64_t)(s->o->duration * 1e9) : 0;
	uint64_t next_flush = now_ns() + FLUSH_INTERVAL_NS;

	while (!s->info.write_failed && !should_stop(s, deadline)) {
		prof_perf_poll(&s->pf, 100);
		drain(s);
		if (now_ns() >= next_flush) {
			flush_or_fail(s);
			next_flush = now_ns() + FLUSH_INTERVAL_NS;
		}
	}
	if (!s->info.write_failed)
		stop_recording(s);
}

/*
 * Every event is open: from here a thread empties the kernel rings into
 * memory as soon as they pass their watermark, so that a slow drain (the
 * first DWARF load of a big library) does not overflow them.  Up to four
 * times the kernel rings' size is queued; beyond that the kernel drops
 * and counts samples as it would without the pump.
 */
static void start_pump(struct prof_perf *pf)
{
	size_t rings = (size_t)pf->ncpus * pf->cfg.ring_pages * prof_perf_page_size();
	int ret = prof_perf_pump_start(pf, MAX((size_t)64 << 20, 4 * rings));

	if (ret < 0)
		warning("cannot start the ring reader thread (%s); reading the rings from the main loop",
			strerror(-ret));
}

/* --- setup and teardown -------------------------------------------------------------- */

/* Off-CPU events and the /proc sampler (not with -a: it follows listed
 * processes); a missing tracepoint is only noted (info.offcpu_why): the
 * recording goes on with CPU samples (kernel-notes/offcpu.md). */
static void setup_resources(struct prof_session *s)
{
	struct prof_replay_sink sink = { offcpu_sink_add, s };
	uint32_t period = s->o->offcpu_period ? s->o->offcpu_period : PROF_OFFCPU_PERIOD;
	char v[256];

	s->oc = prof_offcpu_new(&s->pf, period == 1 ? PROF_OFFCPU_ALL : PROF_OFFCPU_SAMPLED, period,
				s->offcpu_why, sizeof(s->offcpu_why));
	if (s->oc)
		prof_offcpu_attach(s->oc, s->rp, &s->p, &sink);
	else
		s->info.offcpu_why = s->offcpu_why;
	prof_meta_set(&s->p, "off_cpu", s->oc ? "sched_switch" : "unavailable");
	if (s->oc)
		prof_meta_set(&s->p, "off_cpu_stacks",
			      prof_offcpu_mode(s->oc) == PROF_OFFCPU_SAMPLED ? "sampled" : "all");
	if (s->oc && prof_offcpu_mode(s->oc) == PROF_OFFCPU_SAMPLED) {
		snprintf(v, sizeof(v), "1 in %u switch-outs at random%s",
			 prof_offcpu_period(s->oc),
			 !prof_offcpu_filtered(s->oc) ? " (tracepoint period), every D-state one" :
			 prof_offcpu_in_kernel(s->oc) ? " (BPF), a thread's first after 20 ms without, preempted, asleep or in D state (where its last switch-out is under 20 ms old, as a budget per CPU allows); the kernel stack of each D-state one not in I/O wait by the kernel's flag" :
			 prof_offcpu_stale_by_class(s->oc) ? " (BPF), a thread's first after 20 ms without, preempted or not, every D-state one" :
			 " (BPF), a thread's first after 20 ms without, every D-state one");
		prof_meta_set(&s->p, "off_cpu_stack_samples", v);
	}
	if (s->oc && prof_offcpu_in_kernel(s->oc))
		prof_meta_set(&s->p, "off_cpu_time", "timed in the kernel (BPF on sched_switch), totals read every 200 ms");
	if (s->oc)	/* prof's own work, said where the user reads the profile */
		prof_meta_set(&s->p, "off_cpu_cost",
			      prof_offcpu_in_kernel(s->oc)
				      ? "prof's BPF programs run inside the context switch: the CPU samples in __bpf_trace_sched_switch and bpf_prog_* under __schedule are theirs, not the program's (docs/offcpu.md)"
				      : "the off-CPU events run inside the context switch: part of the CPU samples in finish_task_switch is theirs, not the program's (docs/offcpu.md)");
	if (s->o->system_wide)
		return;
	s->rt = prof_restrack_new(&s->p, s->oc);
	prof_restrack_attach(s->rt, s->rp);
}

/*
 * --heap: the sampler (launch) or the allocator's probes (attach).  What
 * cannot be hooked (a static binary, no malloc to probe) is only noted
 * (info.heap_why): the CPU recording goes on.
 */
static void setup_heap(struct prof_session *s)
{
	const struct prof_session_opts *o = s->o;
	struct prof_replay_sink sink = { sink_add, s->w };
	int ret = -EINVAL;

	if (o->system_wide) {
		snprintf(s->heap_why, sizeof(s->heap_why), "--heap hooks the allocator of one program (preloaded at launch, probed with -p PID), not of every process -a sees");
		s->info.heap_why = s->heap_why;
		return;
	}
	s->heap = prof_heap_new(&s->pf, o->heap_rate, o->heap_seed);
	if (!s->heap)
		snprintf(s->heap_why, sizeof(s->heap_why), "bad heap event configuration");
	else if (!o->npids)
		ret = prof_heap_prepare_launch(s->heap, o->argv[0], s->heap_why, sizeof(s->heap_why));
	else if (o->npids > 1)
		snprintf(s->heap_why, sizeof(s->heap_why), "--heap attaches to one process at a time");
	else
		ret = prof_heap_prepare_attach(s->heap, o->pids[0], s->heap_why, sizeof(s->heap_why));
	if (ret < 0) {
		prof_heap_free(s->heap);
		s->heap = NULL;
		s->info.heap_why = s->heap_why;
		return;
	}
	prof_heap_attach(s->heap, s->rp, &s->p, &sink);
}

/* Attach: the heap probes on every thread of the process. */
static int open_heap_attached(struct prof_session *s)
{
	pid_t *tids;
	size_t n;
	int ret;

	if ((ret = prof_proc_tids(s->o->pids[0], &tids, &n)) < 0)
		return error("cannot list the threads of %d: %s", (int)s->o->pids[0], strerror(-ret)), ret;
	for (size_t i = 0; i < n && ret >= 0; i++)
		if ((ret = prof_heap_open_task(s->heap, tids[i])) == -ESRCH)
			ret = 0;
	free(tids);
	return ret;
}

static int setup(struct prof_session *s)
{
	const struct prof_session_opts *o = s->o;
	struct prof_replay_config cfg = { .p = &s->p, .unwinder = o->unwinder, .live = true };
	int ret;

	if (prof_perf_init(&s->pf, &o->perf) < 0)
		return error("bad sampling configuration"), -EINVAL;
	if (o->perf.event->is_clock)
		s->p.period_ns = o->perf.period ? o->perf.period : 1000000000ULL / o->perf.freq;
	set_meta(&s->p, o);
	if ((ret = prof_writer_open(&s->w, o->output)) < 0)
		return ret;
	if (!o->no_python)
		s->py = cfg.python = prof_python_hook_set(&s->pf, prof_python_new(), !o->system_wide);
	s->rp = prof_replay_new(&cfg);
	prof_replay_add_consumer(s->rp, &writer_ops, s);
	if (!o->no_resources)
		setup_resources(s);
	prof_offcpu_own_samples(s->oc, &s->pf);
	if (o->heap)
		setup_heap(s);
	if (o->system_wide)
		ret = prof_target_system_wide(&s->pf, s->rp, o->cpus, o->ncpus, s->oc);
	else if (o->npids) {
		struct prof_target_spec t = { o->pids, o->npids, o->tids, o->ntids, o->children,
					      o->per_thread, s->py };
		ret = prof_target_attach(&s->pf, s->rp, &t, s->oc, s->rt);
		if (ret >= 0)
			prof_meta_set(&s->p, "attach_events",
				      ret ? "per CPU (the targets' samples kept)" : "per thread");
		if (ret >= 0 && s->heap)
			ret = open_heap_attached(s);
		if (ret >= 0 && s->heap) {
			struct prof_heap_stats hs;
			prof_heap_stats(s->heap, &hs);
			s->info.heap_exact_why = hs.exact_why;
		}
	} else
		return launch_child(s);
	return ret < 0 || !o->argv ? ret : spawn_bounding(s);
}

static void finish_file(struct prof_session *s)
{
	struct stat st;

	if (!s->w)
		return;
	if (prof_writer_close(s->w, &s->p) < 0)
		error("cannot finish '%s': %s", s->o->output, strerror(errno ? errno : EIO));
	s->w = NULL;
	if (strcmp(s->o->output, "-") && stat(s->o->output, &st) == 0)
		s->info.bytes_written = (uint64_t)st.st_size;
}

void prof_session_free(struct prof_session *s)
{
	if (!s)
		return;
	if (s->w)
		prof_writer_abort(s->w);
	prof_replay_free(s->rp);
	prof_heap_free(s->heap);
	prof_restrack_free(s->rt);
	prof_perf_pump_stop(&s->pf);	/* it pulls the accountant's ring */
	prof_offcpu_free(s->oc);
	if (s->pf.rings)
		prof_perf_close(&s->pf);
	prof_python_free(s->py);	/* after the pump, whose hook reads with it */
	prof_profile_free(&s->p);
	prof_elf_cache_free();
	VEC_FREE(&s->charged);
	free(s);
}

int prof_session_open(struct prof_session **out, const struct prof_session_opts *o)
{
	struct prof_session *s = xcalloc(1, sizeof(*s));
	int ret;

	s->o = o;
	prof_profile_init(&s->p);
	if (!o->argv || o->system_wide || o->npids)	/* a Ctrl-C during setup must not be lost */
		install_signals(s);
	if ((ret = setup(s)) < 0) {
		prof_session_free(s);	/* the writer's uncommitted file goes with it */
		return ret;
	}
	s->info.ring_shrunk = s->pf.ring_shrunk;
	s->info.ring_kib = (uint32_t)(s->pf.cfg.ring_pages * (uint64_t)prof_perf_page_size() / 1024);
	*out = s;
	return 0;
}

/*
 * The recording has started: now, and not before, it replaces the file at
 * -o (which becomes .old), so that a command that cannot start leaves the
 * old file alone.  A commit that fails (error() has said why) is a write
 * failure like any other: the temporary file is removed, the run loop
 * ends at once, a launched command runs to its end unrecorded, and the
 * command exits non-zero without a summary.
 */
static void commit_file(struct prof_session *s)
{
	if (prof_writer_commit(s->w) == 0)
		return;
	s->info.write_failed = true;
	prof_writer_abort(s->w);
	s->w = NULL;
}

int prof_session_start(struct prof_session *s)
{
	int ret;

	if (s->bounds_only || !s->info.launched) {
		prof_perf_enable(&s->pf);
		if (s->oc)
			prof_offcpu_enable(s->oc);
		if (s->heap)
			prof_heap_enable(s->heap);
	}
	if (s->info.launched) {
		install_signals(s);
		if (s->oc && !s->bounds_only)
			prof_offcpu_arm(s->oc, s->l.pid);
		if ((ret = spawn_release(&s->l)) < 0) {
			error("cannot run '%s': %s", s->o->argv[0], strerror(-ret));
			waitpid(s->l.pid, NULL, 0);
			return ret;	/* nothing ran: prof.data stays as it was */
		}
	}
	commit_file(s);
	if (s->rt)
		prof_restrack_start(s->rt);
	prof_offcpu_pump_with(s->oc, &s->pf);
	start_pump(&s->pf);
	if (s->heap) {
		for (int i = 0; i < PROF_HEAP_SOURCES; i++)
			if (prof_heap_perf(s->heap, i))
				start_pump(prof_heap_perf(s->heap, i));
	}
	if (s->oc) {
		struct prof_perf *pfs[PROF_OFFCPU_MAX_PERFS];
		prof_offcpu_python(s->oc, s->py, &s->pf);
		for (size_t i = 0, n = offcpu_perfs(s, pfs); i < n; i++) {
			if (s->py && (pfs[i]->attr.sample_type & PERF_SAMPLE_STACK_USER))
				prof_python_hook_set_offcpu(pfs[i], s->py);
			start_pump(pfs[i]);
		}
		if (s->o->system_wide && (ret = prof_offcpu_exclude_self(s->oc)) < 0)
			warning("cannot filter prof's own switches out of the off-CPU stacks (%s); they are dropped later",
				strerror(-ret));
	}
	return 0;
}

void prof_session_run(struct prof_session *s)
{
	struct prof_session_info *in = &s->info;

	run_loop(s);
	if (s->heap)
		prof_heap_finish(s->heap);
	finish_file(s);
	if (in->launched) {
		if (!s->child_done)	/* -d ended the recording: the command runs on */
			while (waitpid(s->l.pid, &s->child_status, 0) < 0 && errno == EINTR)
				;
		in->exit_status = spawn_exit_status(s->child_status);
	}
	in->samples = s->p.samples;
	in->lost = s->p.lost;
	in->truncated = s->p.samples_truncated;
	in->processes = prof_replay_processes(s->rp);
	count_charged(s, CHARGED_CPU, &in->sampled_threads, &in->sampled_processes);
	count_charged(s, CHARGED_OFFCPU, &in->offcpu_threads, &in->offcpu_processes);
	in->offcpu_recorded = s->oc != NULL;
	in->offcpu = *prof_offcpu_stats(s->oc);
	prof_replay_space_stats(s->rp, &in->spaces_peak, &in->spaces_freed);
	if (s->heap) {
		struct prof_heap_stats hs;
		prof_heap_stats(s->heap, &hs);
		in->heap = true;
		in->heap_attached = hs.attached;
		in->heap_sampled = hs.sampled;
		in->heap_rate = hs.rate;
		in->heap_allocs = hs.allocs;
		in->heap_frees = hs.frees;
		in->heap_lost = hs.lost;
		in->heap_memptr_unseen = hs.memptr_unseen;
		in->heap_waits = hs.waits;
		in->heap_wait_ns = hs.wait_ns;
		in->heap_gave_up = hs.gave_up;
	}
}

const struct prof_session_info *prof_session_info(const struct prof_session *s)
{
	return &s->info;
}
