/*
 * record.c - `prof record`: sample a command (launch) or running processes
 * (attach, -p) with perf events and write prof.data.  This file parses
 * options, hands them to a recording session (src/replay/session.c: the
 * targets, the loop, the flushes) and prints the summary.  prof exits with
 * the command's status (128+signal when killed).
 */
#include "prof/cmd.h"
#include "prof/data.h"
#include "prof/perf.h"
#include "prof/session.h"
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

struct record_opts {
	const char *output;
	struct prof_perf_config perf;
	enum prof_unwinder_kind unwinder;
	const char *unwinder_name;
	double duration;	/* seconds, 0 = until the command ends / Ctrl-C */
	VEC(pid_t) pids;
	bool system_wide;	/* -a, or -C */
	int *cpus;		/* -C LIST, NULL: every CPU */
	size_t ncpus;
	char **argv;		/* command, NULL in attach mode */
	bool no_resources;	/* --no-resources: no off-CPU events, no /proc sampling */
	bool children;		/* --children: -p also takes the running descendants */
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: prof record [options] -- CMD [ARGS...]\n"
		"   or: prof record [options] -p PID[,PID...] [-d SECONDS]\n"
		"   or: prof record [options] -a [-C CPUS] [-d SECONDS]\n"
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
		"  -a, --all-cpus          every process on the machine (root or perf_event_paranoid <= 0)\n"
		"  -C, --cpu LIST          only these CPUs, e.g. 0,2-3 (implies -a)\n"
		"  -d, --duration SECONDS  stop after this long\n"
		"      --children          with -p: also the descendants that run now (new\n"
		"                          children of attached threads are always followed)\n"
		"      --no-resources      no off-CPU stacks (sched_switch), no CPU/RSS/I/O timeline\n"
		"  -q, --quiet             no warnings and no summary line\n"
		"  -h, --help              this help\n",
		prof_perf_event_names(), PROF_STACK_SIZE_DEFAULT, PROF_STACK_SIZE_MAX,
		prof_perf_default_ring_pages(), prof_perf_default_ring_pages() * 4);
}

static int usage_error(const char *msg, const char *arg)
{
	error("%s '%s' (see 'prof record --help')", msg, arg);
	return -EINVAL;
}

static int parse_pids(struct record_opts *o, const char *arg)
{
	pid_t *pids;
	size_t n;
	const char *bad;

	if (parse_pid_list(arg, &pids, &n, &bad) < 0) {
		size_t len = strcspn(bad, ",");
		char *item = xstrndup(bad, len);
		int ret = usage_error(len ? "bad pid" : "no pid in", len ? item : arg);
		free(item);
		return ret;
	}
	for (size_t i = 0; i < n; i++)
		VEC_PUSH(&o->pids, pids[i]);
	free(pids);
	return 0;
}

static int parse_option(struct record_opts *o, int c, const char *arg)
{
	uint64_t v;
	char *end;

	switch (c) {
	case 'o': o->output = arg; return 0;
	case 'F':
		if (parse_u64(arg, &v) < 0 || !v || v > 100000)
			return usage_error("bad sampling frequency (1..100000 Hz)", arg);
		o->perf.freq = v;
		return 0;
	case 'e':
		if (!(o->perf.event = prof_perf_event_find(arg))) {
			error("unknown event '%s'; known events: %s", arg, prof_perf_event_names());
			return -EINVAL;
		}
		return 0;
	case 'g':
		return prof_callgraph_parse(arg, &o->perf.callgraph) < 0
			       ? usage_error("bad call graph mode (dwarf, fp, none)", arg) : 0;
	case 'S':
		if (parse_u64(arg, &v) < 0 || v < 8)
			return usage_error("bad stack size", arg);
		if (v > PROF_STACK_SIZE_MAX) {
			error("stack size %s is too big: a sample record's size is a u16, so at most %d bytes of stack fit; use --stack-size %d or less",
			      arg, PROF_STACK_SIZE_MAX, PROF_STACK_SIZE_MAX);
			return -EINVAL;
		}
		o->perf.stack_size = (uint32_t)((v + 7) & ~7ULL);
		return 0;
	case 'U':
		o->unwinder_name = arg;
		return prof_unwinder_parse(arg, &o->unwinder) < 0 || o->unwinder == PROF_UNWIND_FP ||
			       o->unwinder == PROF_UNWIND_NONE
			       ? usage_error("bad unwinder (libdw, libunwind)", arg) : 0;
	case 'm':
		if (parse_u64(arg, &v) < 0 || !v || (v & (v - 1)) || v > (1u << 20))
			return usage_error("ring pages must be a power of two, got", arg);
		o->perf.ring_pages = (uint32_t)v;
		o->perf.ring_shrink_ok = false;
		return 0;
	case 'p': return parse_pids(o, arg);
	case 'd':
		o->duration = strtod(arg, &end);
		if (*end || !(o->duration > 0))
			return usage_error("bad duration in seconds", arg);
		return 0;
	case 'q': prof_quiet = 1; return 0;
	case 'R': o->no_resources = true; return 0;
	case 'a': o->system_wide = true; return 0;
	case 'H': o->children = true; return 0;
	case 'C':
		o->system_wide = true;
		free(o->cpus);
		return parse_cpu_list(arg, &o->cpus, &o->ncpus) < 0 ? usage_error("bad CPU list", arg) : 0;
	default: return -EINVAL;
	}
}

static int parse_options(struct record_opts *o, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "freq", required_argument, NULL, 'F' },
		{ "event", required_argument, NULL, 'e' },
		{ "call-graph", required_argument, NULL, 'g' },
		{ "stack-size", required_argument, NULL, 'S' },
		{ "unwinder", required_argument, NULL, 'U' },
		{ "mmap-pages", required_argument, NULL, 'm' },
		{ "pid", required_argument, NULL, 'p' },
		{ "all-cpus", no_argument, NULL, 'a' },
		{ "cpu", required_argument, NULL, 'C' },
		{ "duration", required_argument, NULL, 'd' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "no-resources", no_argument, NULL, 'R' },
		{ "children", no_argument, NULL, 'H' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+o:F:e:g:m:p:d:qaC:", longopts, NULL)) != -1) {
		if (c == '?' || c == ':')
			return usage_error(optopt ? "bad or incomplete option" : "unknown option",
					   optopt ? (char[]){ '-', (char)optopt, 0 } : argv[optind - 1]);
		if (parse_option(o, c, optarg) < 0)
			return -EINVAL;
	}
	if (optind < argc)
		o->argv = argv + optind;
	if (!o->argv && !o->pids.n && !o->system_wide) {
		error("nothing to record: give a command after '--', -p PID or -a (see 'prof record --help')");
		return -EINVAL;
	}
	if ((o->argv != NULL) + (o->pids.n != 0) + o->system_wide > 1) {
		error("give one of a command, -p PID or -a/-C");
		return -EINVAL;
	}
	if (o->children && !o->pids.n) {
		error("--children goes with -p PID (a launched command's children are always followed)");
		return -EINVAL;
	}
	/* -a: a stack copy per context switch of every task on the machine
	 * is more than one recorder keeps up with (docs/system-wide.md) */
	o->no_resources |= o->system_wide;
	return 0;
}

/* --- wiring and printing ------------------------------------------------------------ */

static void print_summary(const struct prof_session_info *in, const char *output)
{
	double full = in->samples ? 100.0 * (double)(in->samples - in->truncated) / (double)in->samples
				  : 100.0;

	info("%llu samples (%llu lost, %.1f%% fully unwound), %zu processes, %zu threads, %llu KiB written to %s",
	     (unsigned long long)in->samples, (unsigned long long)in->lost, full, in->processes,
	     in->threads, (unsigned long long)((in->bytes_written + 1023) / 1024), output);
}

static void print_self_cost(const struct prof_session_info *in)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) == 0)
		fprintf(stderr, "prof record: own cpu: %.3f s user, %.3f s sys, max rss %ld KiB\n",
			(double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6,
			(double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6, ru.ru_maxrss);
	fprintf(stderr, "prof record: address spaces: %zu processes seen, at most %zu alive at once, %zu freed\n",
		in->processes, in->spaces_peak, in->spaces_freed);
}

/* Said once setup succeeded (a failing attach gets its one error line alone). */
static void warn_setup(const struct prof_session_info *in)
{
	if (in->offcpu_why)
		warning("no off-CPU stacks in this recording: %s", in->offcpu_why);
	if (in->ring_shrunk)
		warning("locked-memory limit: ring buffers reduced to %u KiB per CPU, samples may be lost; raise 'sysctl kernel.perf_event_mlock_kb' or 'ulimit -l'",
			in->ring_kib);
}

/* Records; the command's exit status (1 when it succeeded and the
 * recording did not), or 126/127 when it could not run. */
static int record(const struct record_opts *o)
{
	struct prof_session_opts so = {
		.output = o->output, .perf = o->perf, .unwinder = o->unwinder,
		.unwinder_name = o->unwinder_name, .duration = o->duration, .pids = o->pids.v,
		.npids = o->pids.n, .system_wide = o->system_wide, .cpus = o->cpus, .ncpus = o->ncpus,
		.argv = o->argv, .no_resources = o->no_resources, .children = o->children,
		.version = PROF_VERSION,
	};
	struct prof_session *s;
	const struct prof_session_info *in;
	int ret, status;

	if (prof_session_open(&s, &so) < 0)
		return EXIT_USAGE;
	in = prof_session_info(s);
	warn_setup(in);
	if ((ret = prof_session_start(s)) < 0) {
		prof_session_free(s);
		return ret == -ENOENT ? 127 : 126;
	}
	prof_session_run(s);
	status = in->launched ? in->exit_status : 0;
	if (!in->write_failed)
		print_summary(in, o->output);
	else if (!status)
		status = 1;	/* the command succeeded, the recording did not */
	if (in->offcpu_stacks_lost)
		warning("%llu off-CPU stacks lost (ring full): their time is charged to [stack lost]",
			(unsigned long long)in->offcpu_stacks_lost);
	if (in->offcpu_switches_lost)
		warning("%llu context-switch records lost: off-CPU times are too low",
			(unsigned long long)in->offcpu_switches_lost);
	if (getenv("PROF_RECORD_STATS"))	/* benchmarks: prof's own cost */
		print_self_cost(in);
	prof_session_free(s);
	return status;
}

int cmd_record(int argc, char **argv)
{
	struct record_opts o = { .output = PROF_DATA_DEFAULT, .unwinder = PROF_UNWIND_LIBDW,
				 .unwinder_name = "libdw" };
	int status;

	if (wants_help(argc, argv)) {
		usage(stdout);
		return 0;
	}
	o.perf = (struct prof_perf_config){ .event = prof_perf_event_find("cpu-clock"), .freq = 999,
		.callgraph = PROF_CG_DWARF, .stack_size = PROF_STACK_SIZE_DEFAULT,
		.ring_pages = prof_perf_default_ring_pages(), .ring_shrink_ok = true };
	if (parse_options(&o, argc, argv) < 0)
		return EXIT_USAGE;
	o.perf.enable_on_exec = o.argv != NULL;
	status = record(&o);
	VEC_FREE(&o.pids);
	free(o.cpus);
	return status;
}
