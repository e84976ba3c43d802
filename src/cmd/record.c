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

struct record_opts {
	const char *output;
	struct prof_perf_config perf;
	enum prof_unwinder_kind unwinder;
	const char *unwinder_name;
	double duration;	/* seconds, 0 = until the command ends / Ctrl-C */
	VEC(pid_t) pids;
	char **argv;		/* command, NULL in attach mode */
	bool no_resources;	/* --no-resources: no off-CPU events, no /proc sampling */
};

static volatile sig_atomic_t stop_requested;
static volatile pid_t forward_to;

static void on_stop_signal(int sig)
{
	if (forward_to > 0)
		kill(forward_to, sig);
	else
		stop_requested = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: prof record [options] -- CMD [ARGS...]\n"
		"   or: prof record [options] -p PID[,PID...] [-d SECONDS]\n"
		"\n"
		"Samples a command (or running processes) and writes prof.data; unwinding\n"
		"happens while recording, so no stack bytes are stored.\n"
		"\n"
		"  -o, --output FILE       output file (default prof.data; an existing one becomes FILE.old)\n"
		"  -F, --freq HZ           samples per second per thread (default 999)\n"
		"  -e, --event EVENT       %s (default cpu-clock)\n"
		"  -g, --call-graph MODE   dwarf (default), fp (kernel walks frame pointers), none\n"
		"      --stack-size BYTES  user stack bytes copied per sample for dwarf (default %d, max %d)\n"
		"      --unwinder NAME     libdw (default) or libunwind\n"
		"  -m, --mmap-pages PAGES  ring buffer pages per CPU, a power of two (default here %u = %u KiB)\n"
		"  -p, --pid PID[,PID...]  attach to running processes (they keep running)\n"
		"  -d, --duration SECONDS  stop after this long\n"
		"      --no-resources      no off-CPU stacks (sched_switch), no CPU/RSS/I/O timeline\n"
		"  -q, --quiet             no warnings and no summary line\n"
		"  -h, --help              this help\n",
		prof_perf_event_names(), PROF_STACK_SIZE_DEFAULT, PROF_STACK_SIZE_MAX,
		prof_perf_default_ring_pages(),
		(unsigned)(prof_perf_default_ring_pages() * prof_perf_page_size() / 1024));
}

static int parse_pids(struct record_opts *o, const char *flag, const char *arg)
{
	char *copy = xstrdup(arg), *save = NULL;
	int ret = 0;

	for (char *t = strtok_r(copy, ",", &save); t && !ret; t = strtok_r(NULL, ",", &save)) {
		uint64_t v;
		if (!(ret = opt_u64(flag, t, 1, 0x7fffffff, &v)))
			VEC_PUSH(&o->pids, (pid_t)v);
	}
	if (!o->pids.n && !ret)
		ret = usage_error("no pid in '%s' for %s", arg, flag);
	free(copy);
	return ret;
}

static int parse_stack_size(struct record_opts *o, const char *flag, const char *arg)
{
	uint64_t v;

	if (opt_u64(flag, arg, 8, UINT32_MAX, &v) < 0)
		return -EINVAL;
	if (v > PROF_STACK_SIZE_MAX)
		return error("stack size %s is too big: a sample record's size is a u16, so at most %d bytes of stack fit; use --stack-size %d or less",
			     arg, PROF_STACK_SIZE_MAX, PROF_STACK_SIZE_MAX);
	o->perf.stack_size = (uint32_t)((v + 7) & ~7ULL);
	return 0;
}

enum { O_OUTPUT = 1, O_FREQ, O_EVENT, O_CALLGRAPH, O_STACK, O_UNWINDER, O_PAGES, O_PID,
       O_DURATION, O_QUIET, O_NO_RESOURCES };

static const struct opt options[] = {
	{ O_OUTPUT, 'o', "output", OPT_VALUE }, { O_FREQ, 'F', "freq", OPT_VALUE },
	{ O_EVENT, 'e', "event", OPT_VALUE }, { O_CALLGRAPH, 'g', "call-graph", OPT_VALUE },
	{ O_STACK, 0, "stack-size", OPT_VALUE }, { O_UNWINDER, 0, "unwinder", OPT_VALUE },
	{ O_PAGES, 'm', "mmap-pages", OPT_VALUE }, { O_PID, 'p', "pid", OPT_VALUE },
	{ O_DURATION, 'd', "duration", OPT_VALUE }, { O_QUIET, 'q', "quiet", OPT_FLAG },
	{ O_NO_RESOURCES, 0, "no-resources", OPT_FLAG },
	{ 0 },
};

static int apply_option(void *ctx, int id, const char *arg, const char *flag)
{
	struct record_opts *o = ctx;
	uint64_t v;

	switch (id) {
	case O_OUTPUT: o->output = arg; return 0;
	case O_FREQ: return opt_u64(flag, arg, 1, 100000, &o->perf.freq);
	case O_EVENT:
		if (!(o->perf.event = prof_perf_event_find(arg)))
			return usage_error("unknown event '%s' for %s (known: %s)", arg, flag,
					   prof_perf_event_names());
		return 0;
	case O_CALLGRAPH:
		if (prof_callgraph_parse(arg, &o->perf.callgraph) < 0)
			return usage_error("unknown %s mode '%s' (want dwarf, fp or none)", flag, arg);
		return 0;
	case O_STACK: return parse_stack_size(o, flag, arg);
	case O_UNWINDER:
		o->unwinder_name = arg;
		if (prof_unwinder_parse(arg, &o->unwinder) < 0 || o->unwinder == PROF_UNWIND_FP ||
		    o->unwinder == PROF_UNWIND_NONE)
			return usage_error("unknown %s '%s' (want libdw or libunwind)", flag, arg);
		return 0;
	case O_PAGES:
		if (opt_u64(flag, arg, 1, 1u << 20, &v) < 0)
			return -EINVAL;
		if (v & (v - 1))
			return usage_error("%s wants a power of two, not '%s'", flag, arg);
		o->perf.ring_pages = (uint32_t)v;
		o->perf.ring_shrink_ok = false;
		return 0;
	case O_PID: return parse_pids(o, flag, arg);
	case O_DURATION: return opt_double(flag, arg, 1e-3, 1e9, &o->duration);
	case O_QUIET: prof_quiet = 1; return 0;
	case O_NO_RESOURCES: o->no_resources = true; return 0;
	}
	return -EINVAL;
}

/* Returns 0, OPT_HELP or -EINVAL. */
static int parse_options(struct record_opts *o, int argc, char **argv)
{
	int rest, ret = opt_parse(options, argc, argv, OPT_STOP_AT_ARG, apply_option, o, &rest);

	if (ret)
		return ret;
	if (rest < argc)
		o->argv = argv + rest;
	if (!o->argv && !o->pids.n)
		return error("nothing to record: give a command after '--' or -p PID (see 'prof record --help')");
	if (o->argv && o->pids.n)
		return error("give either a command or -p PID, not both");
	return 0;
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
	sb_addf(&sb, "%llu", (unsigned long long)o->perf.freq);
	prof_meta_set(p, "frequency", sb_str(&sb));
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

static int attach_all(struct prof_perf *pf, struct prof_recorder *r, const struct record_opts *o,
		      struct prof_offcpu *oc, struct prof_restrack *rt)
{
	raise_fd_limit();
	for (size_t i = 0; i < o->pids.n; i++) {
		pid_t pid = o->pids.v[i], *tids;
		size_t n;

		if (!prof_proc_exists(pid) || prof_proc_tids(pid, &tids, &n) < 0) {
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
	     (unsigned long long)((s->bytes_written + 1023) / 1024), s->o->output);
}

/* Removes a prof.data we created, never a device such as -o /dev/null. */
static void unlink_if_regular(const char *path)
{
	struct stat st;

	if (lstat(path, &st) == 0 && S_ISREG(st.st_mode))
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
		s->p.period_ns = 1000000000ULL / o->perf.freq;
	set_meta(&s->p, o);
	if ((ret = prof_writer_open(&s->w, o->output)) < 0)
		return ret;
	s->r = prof_recorder_new(&s->p, s->w, &s->pf, o->unwinder);
	if (!o->no_resources)
		setup_resources(s);
	if (!o->argv)
		return attach_all(&s->pf, s->r, o, s->oc, s->rt);
	if ((ret = spawn_held(&s->l, o->argv, -1, -1)) < 0)
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
	if (stat(s->o->output, &st) == 0)
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
}

int cmd_record(int argc, char **argv)
{
	struct record_opts o = { .output = PROF_DATA_DEFAULT, .unwinder = PROF_UNWIND_LIBDW,
				 .unwinder_name = "libdw" };
	struct session s = { .o = &o };
	int ret, status = 0;

	o.perf = (struct prof_perf_config){ .event = prof_perf_event_find("cpu-clock"), .freq = 999,
		.callgraph = PROF_CG_DWARF, .stack_size = PROF_STACK_SIZE_DEFAULT,
		.ring_pages = prof_perf_default_ring_pages(), .ring_shrink_ok = true };
	ret = parse_options(&o, argc, argv);
	if (ret == OPT_HELP)
		usage(stdout);
	if (ret)
		return ret == OPT_HELP ? 0 : EXIT_USAGE;
	o.perf.enable_on_exec = o.argv != NULL;
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
