/*
 * record.c - `prof record`: sample a command (launch) or running processes
 * (attach, -p) with perf events and write prof.data.  This file parses
 * options, starts or finds the targets, runs the poll loop and prints the
 * summary; src/perf/ talks to the kernel and src/perf/recorder.c turns
 * records into the profile.
 *
 * Design notes:
 *  - Launch: the child blocks on a pipe until every per-CPU event exists
 *    (pid=child, inherit=1, enable_on_exec=1), then execvp()s.  An exec
 *    failure travels back as an errno over a CLOEXEC pipe: EOF means the
 *    exec succeeded.  prof ignores SIGINT/SIGQUIT (the terminal delivers
 *    them to the command too) and forwards SIGTERM; it exits with the
 *    command's status (128+signal when killed).
 *  - Attach: events are opened disabled for every tid of every pid, the
 *    processes' maps and thread names are synthesized from /proc, then all
 *    events are enabled.  SIGINT/SIGTERM or -d stop; the targets are only
 *    read, never stopped or signalled.
 *  - The writer is flushed about every second, so a SIGKILLed prof loses
 *    at most ~1 s.  A write error stops recording (events closed, the file
 *    kept readable up to the last good flush) and leaves the command alone.
 */
#include "prof/cmd.h"
#include "prof/data.h"
#include "prof/options.h"
#include "prof/perf.h"
#include "prof/proc.h"
#include "prof/recorder.h"
#include "record-priv.h"
#include "prof/restrack.h"
#include "prof/symbol.h"
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>


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

static void set_meta(struct prof_profile *p, const struct record_opts *o)
{
	struct strbuf sb = STRBUF_INIT;
	struct utsname u;
	char host[256] = "", when[64];
	time_t now = time(NULL);
	struct tm tm;

	prof_meta_set(p, "event", o->perf.event->name);
	sb_addf(&sb, "%llu", (unsigned long long)(o->perf.period ? 0 : o->perf.freq));
	prof_meta_set(p, "frequency", o->perf.period ? "" : sb_str(&sb));
	sb_reset(&sb);
	sb_addf(&sb, "%llu", (unsigned long long)p->period_ns);
	prof_meta_set(p, "period_ns", sb_str(&sb));
	sb_reset(&sb);
	if (o->argv) {
		for (char **a = o->argv; *a; a++)
			sb_addf(&sb, "%s%s", a == o->argv ? "" : " ", *a);
	} else {
		sb_adds(&sb, "-p ");
		for (size_t i = 0; i < o->pids.n; i++)
			sb_addf(&sb, "%s%d", i ? "," : "", (int)o->pids.v[i]);
	}
	prof_meta_set(p, "command", sb_str(&sb));
	gethostname(host, sizeof(host) - 1);
	prof_meta_set(p, "hostname", host);
	prof_meta_set(p, "kernel", uname(&u) == 0 ? u.release : "");
	prof_meta_set(p, "prof_version", PROF_VERSION);
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

/* --- targets ----------------------------------------------------------------------- */

/* Attach opens ncpus fds per thread: lift the soft fd limit to the hard one. */
static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* The threads to sample in process pid: -t's that belong to it, else all. */
static int target_threads(const struct record_opts *o, pid_t pid, pid_t **tids, size_t *n)
{
	if (!o->tids.n)
		return prof_proc_tids(pid, tids, n);
	*tids = xmalloc(o->tids.n * sizeof(**tids));
	*n = 0;
	for (size_t i = 0; i < o->tids.n; i++)
		if (prof_proc_tgid(o->tids.v[i]) == pid)
			(*tids)[(*n)++] = o->tids.v[i];
	return 0;
}

static int attach_all(struct prof_perf *pf, struct prof_recorder *r, const struct record_opts *o,
		      struct prof_offcpu *oc, struct prof_restrack *rt)
{
	raise_fd_limit();
	for (size_t i = 0; i < o->pids.n; i++) {
		pid_t pid = o->pids.v[i], *tids;
		size_t n;

		if (!prof_proc_exists(pid) || target_threads(o, pid, &tids, &n) < 0) {
			error("no process with pid %d", (int)pid);
			return -ESRCH;
		}
		for (size_t t = 0; t < n; t++) {
			int ret = prof_perf_open_task(pf, tids[t]);
			if (ret < 0 && ret != -ESRCH) {
				free(tids);
				return ret;
			}
			if (oc)
				prof_offcpu_open_task(oc, tids[t]);
		}
		free(tids);
		if (rt)
			prof_restrack_add_pid(rt, (uint32_t)pid);
		if (prof_recorder_add_process(r, pid) < 0) {
			error("no process with pid %d (it exited while prof attached)", (int)pid);
			return -ESRCH;
		}
	}
	return 0;
}

/* -t: the processes of the threads, each once; 0 or -ESRCH. */
static int add_thread_processes(struct record_opts *o)
{
	for (size_t i = 0; i < o->tids.n; i++) {
		pid_t pid = prof_proc_tgid(o->tids.v[i]);
		bool seen = false;

		if (pid <= 0)
			return error("no thread with tid %d", (int)o->tids.v[i]), -ESRCH;
		for (size_t k = 0; k < o->pids.n; k++)
			seen |= o->pids.v[k] == pid;
		if (!seen)
			VEC_PUSH(&o->pids, pid);
	}
	return 0;
}

static bool any_target_alive(const struct record_opts *o)
{
	for (size_t i = 0; i < o->pids.n; i++)
		if (kill(o->pids.v[i], 0) == 0 || errno == EPERM)
			return true;
	return false;
}

/* --- the loop ----------------------------------------------------------------------- */

struct session {
	struct record_opts *o;
	struct prof_profile p;
	struct prof_perf pf;
	struct prof_writer *w;
	struct prof_recorder *r;
	struct prof_offcpu *oc;		/* NULL: no tracepoint or --no-resources */
	char offcpu_why[512];		/* why oc is NULL; said once setup succeeded */
	struct prof_restrack *rt;	/* NULL with --no-resources */
	struct spawn l;
	bool launched, child_done, write_failed;
	int child_status;
	uint64_t bytes_written;
};

static void stop_recording(struct session *s)
{
	prof_perf_disable(&s->pf);
	if (s->oc)
		prof_offcpu_disable(s->oc);
	prof_recorder_drain(s->r);
	if (s->rt)	/* final values of what still runs (attach, -d) */
		prof_restrack_sample(s->rt);
}

/* The launched command exited: its final /proc values while it is a
 * zombie (waitid WNOWAIT), then the reap with wait4's rusage. */
static bool reap_child(struct session *s, int *st)
{
	siginfo_t si = { 0 };
	struct rusage ru;

	if (s->rt && waitid(P_PID, (id_t)s->l.pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
	    si.si_pid == s->l.pid)
		prof_restrack_final(s->rt, (uint32_t)s->l.pid);
	if (wait4(s->l.pid, st, WNOHANG, &ru) != s->l.pid)
		return false;
	if (s->rt)
		prof_restrack_rusage(s->rt, (uint32_t)s->l.pid, &ru);
	return true;
}

static void flush_or_fail(struct session *s)
{
	if (s->write_failed || prof_recorder_flush(s->r) == 0)
		return;
	error("cannot write '%s' (%s); recording stopped, the file is readable up to the last second, the target keeps running",
	      s->o->output, strerror(errno ? errno : EIO));
	s->write_failed = true;
	prof_perf_close(&s->pf);
	prof_writer_abort(s->w);
	s->w = NULL;
}

static void install_signals(struct session *s)
{
	struct sigaction sa = { 0 };

	sa.sa_handler = on_stop_signal;	/* no SA_RESTART: poll returns EINTR */
	forward_to = s->launched ? s->l.pid : 0;
	sigaction(SIGTERM, &sa, NULL);
	if (s->launched) {
		sa.sa_handler = SIG_IGN;
		sigaction(SIGQUIT, &sa, NULL);
		sa.sa_handler = SIG_IGN;
	}
	sigaction(SIGINT, &sa, NULL);
}

static bool session_should_stop(struct session *s, uint64_t deadline)
{
	if (s->launched && !s->child_done) {
		int st;
		if (reap_child(s, &st)) {
			s->child_done = true;
			s->child_status = st;
		}
	}
	if (s->launched && s->child_done)
		return true;
	if (stop_requested || (deadline && now_ns() >= deadline))
		return true;
	return !s->launched && !any_target_alive(s->o);
}

static void run_loop(struct session *s)
{
	uint64_t deadline = s->o->duration ? now_ns() + (uint64_t)(s->o->duration * 1e9) : 0;
	uint64_t next_flush = now_ns() + 1000000000ULL;

	while (!s->write_failed && !session_should_stop(s, deadline)) {
		prof_perf_poll(&s->pf, 100);
		prof_recorder_drain(s->r);
		if (now_ns() >= next_flush) {
			flush_or_fail(s);
			next_flush = now_ns() + 1000000000ULL;
		}
	}
	if (!s->write_failed)
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

static void print_summary(struct session *s)
{
	struct prof_profile *p = &s->p;
	double full = p->samples ? 100.0 * (double)(p->samples - p->samples_truncated) / (double)p->samples : 100.0;

	info("%llu samples (%llu lost, %.1f%% fully unwound), %zu processes, %zu threads, %llu KiB written to %s",
	     (unsigned long long)p->samples, (unsigned long long)p->lost, full,
	     prof_recorder_processes(s->r), p->threads.n,
	     (unsigned long long)((s->bytes_written + 1023) / 1024),
	     record_to_stdout(s->o) ? "stdout" : s->o->output);
}

/* Removes a prof.data we created, never a device such as -o /dev/null. */
static void unlink_if_regular(const char *path)
{
	struct stat st;

	if (strcmp(path, "-") && lstat(path, &st) == 0 && S_ISREG(st.st_mode))
		unlink(path);
}

static void print_self_cost(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) == 0)
		fprintf(stderr, "prof record: own cpu: %.3f s user, %.3f s sys, max rss %ld KiB\n",
			(double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6,
			(double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6, ru.ru_maxrss);
}

/* Off-CPU events and the /proc sampler; a missing tracepoint is said once,
 * after setup succeeded (a failing attach gets its one error line alone),
 * and the recording goes on with CPU samples (kernel-notes/offcpu.md). */
static void setup_resources(struct session *s)
{
	s->oc = prof_offcpu_new(&s->pf, s->offcpu_why, sizeof(s->offcpu_why));
	s->rt = prof_restrack_new(&s->p, s->oc);
	prof_restrack_attach(s->rt, s->r);
	prof_meta_set(&s->p, "off_cpu", s->oc ? "sched_switch" : "unavailable");
}

static int setup_session(struct session *s)
{
	struct record_opts *o = s->o;
	int ret;

	if (prof_perf_init(&s->pf, &o->perf) < 0)
		return error("bad sampling configuration"), -EINVAL;
	if (o->perf.event->is_clock)
		s->p.period_ns = o->perf.period ? o->perf.period : 1000000000ULL / o->perf.freq;
	set_meta(&s->p, o);
	if ((ret = prof_writer_open(&s->w, o->output)) < 0)
		return ret;
	s->r = prof_recorder_new(&s->p, s->w, &s->pf, o->unwinder);
	if (!o->no_resources)
		setup_resources(s);
	if (!o->argv)
		return attach_all(&s->pf, s->r, o, s->oc, s->rt);
	/* -o -: the recording owns stdout, the command's output goes to stderr */
	if ((ret = spawn_held(&s->l, o->argv, record_to_stdout(o) ? 2 : -1, -1)) < 0)
		return error("cannot start '%s': %s", o->argv[0], strerror(-ret)), ret;
	s->launched = true;
	if ((ret = prof_perf_open_task(&s->pf, s->l.pid)) < 0) {
		spawn_abort(&s->l);
		s->launched = false;
		return ret;
	}
	prof_recorder_add_child(s->r, s->l.pid, o->argv[0]);
	if (s->oc)
		prof_offcpu_open_task(s->oc, s->l.pid);
	if (s->rt)
		prof_restrack_add_pid(s->rt, (uint32_t)s->l.pid);
	return 0;
}

static void finish_file(struct session *s)
{
	struct stat st;

	if (!s->w)
		return;
	if (prof_writer_close(s->w, &s->p) < 0)
		error("cannot finish '%s': %s", s->o->output, strerror(errno ? errno : EIO));
	s->w = NULL;
	if (!record_to_stdout(s->o) && stat(s->o->output, &st) == 0)
		s->bytes_written = (uint64_t)st.st_size;
}

static void teardown(struct session *s)
{
	if (s->w)
		prof_writer_abort(s->w);
	prof_recorder_free(s->r);
	prof_restrack_free(s->rt);
	prof_offcpu_free(s->oc);
	if (s->pf.rings)
		prof_perf_close(&s->pf);
	prof_profile_free(&s->p);
	prof_elf_cache_free();
	VEC_FREE(&s->o->pids);
	VEC_FREE(&s->o->tids);
}

int cmd_record(int argc, char **argv)
{
	struct record_opts o;
	struct session s = { .o = &o };
	int ret, status = 0;

	ret = record_parse_options(&o, argc, argv);
	if (ret == OPT_HELP)
		record_usage(stdout);
	if (ret)
		return ret == OPT_HELP ? 0 : EXIT_USAGE;
	if (o.verbose)
		record_say_config(&o);
	if (o.tids.n && add_thread_processes(&o) < 0) {
		VEC_FREE(&o.pids);
		VEC_FREE(&o.tids);
		return EXIT_USAGE;
	}
	prof_profile_init(&s.p);
	if (!o.argv)	/* attach: a Ctrl-C during setup must not be lost */
		install_signals(&s);
	if (setup_session(&s) < 0) {
		bool created = s.w != NULL;
		teardown(&s);
		if (created)	/* nothing was recorded: leave no empty file */
			unlink_if_regular(o.output);
		return EXIT_USAGE;
	}
	if (!o.no_resources && !s.oc)
		warning("no off-CPU stacks in this recording: %s", s.offcpu_why);
	if (s.pf.ring_shrunk)
		warning("locked-memory limit: ring buffers reduced to %u KiB per CPU, samples may be lost; raise 'sysctl kernel.perf_event_mlock_kb' or 'ulimit -l'",
			(unsigned)(s.pf.cfg.ring_pages * prof_perf_page_size() / 1024));
	if (s.launched)
		install_signals(&s);
	if (s.launched && (ret = spawn_release(&s.l)) < 0) {
		error("cannot run '%s': %s", o.argv[0], strerror(-ret));
		waitpid(s.l.pid, NULL, 0);
		teardown(&s);
		unlink_if_regular(o.output);	/* nothing ran: no misleading empty profile */
		return ret == -ENOENT ? 127 : 126;
	}
	if (!s.launched) {
		prof_perf_enable(&s.pf);
		if (s.oc)
			prof_offcpu_enable(s.oc);
	}
	if (s.rt)
		prof_restrack_start(s.rt);
	start_pump(&s.pf);
	run_loop(&s);
	finish_file(&s);
	if (s.launched) {
		if (!s.child_done)	/* -d ended the recording: the command runs on */
			while (waitpid(s.l.pid, &s.child_status, 0) < 0 && errno == EINTR)
				;
		status = spawn_exit_status(s.child_status);
	}
	if (!s.write_failed)
		print_summary(&s);
	else if (!status)
		status = 1;	/* the command succeeded, the recording did not */
	if (prof_offcpu_lost(s.oc))
		warning("%llu off-CPU switch samples lost (ring full): off-CPU times are too low; a larger -m helps",
			(unsigned long long)prof_offcpu_lost(s.oc));
	if (getenv("PROF_RECORD_STATS"))	/* benchmarks: prof's own cost */
		print_self_cost();
	teardown(&s);
	return status;
}
