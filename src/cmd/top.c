/*
 * top.c - `prof top`: a live view of the hottest functions of running
 * processes (-p) or of the whole machine (-a), with DWARF stacks.  This
 * file parses options; src/top/ is the view, the screen and the loop.
 */
#include "prof/cmd.h"
#include "prof/perf.h"
#include "prof/top.h"
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
	fprintf(f,
		"usage: prof top [options] -p PID[,PID...]\n"
		"   or: prof top [options] -a [-C CPUS]\n"
		"\n"
		"Shows the functions running processes spend their CPU in, refreshed every\n"
		"second: self %% (the function itself), total %% (with its callees), over the\n"
		"last 5 seconds (or one --delay when longer).  Keys: q quit, p pause, s/t sort\n"
		"by self/total, / filter by regex, Up/Down select, Enter callers, Esc back.\n"
		"\n"
		"  -p, --pid PID[,PID...]  processes to watch (every thread)\n"
		"  -a, --all-cpus          every process on the machine (root or perf_event_paranoid <= 0)\n"
		"  -C, --cpu LIST          only these CPUs, e.g. 0,2-3 (implies -a)\n"
		"  -F, --freq HZ           samples per second per CPU (default 999)\n"
		"  -d, --duration SECONDS  stop after this long\n"
		"      --delay SECONDS     between refreshes (default 1)\n"
		"      --stdio             print one table per refresh (the default when stdout is not a terminal)\n"
		"  -n, --rows N            rows per --stdio table (default 25)\n"
		"  -h, --help              this help\n");
}

static int bad(const char *what, const char *arg)
{
	error("%s '%s' (see 'prof top --help')", what, arg);
	return -EINVAL;
}

static int parse_seconds(const char *arg, double *out)
{
	char *end;

	*out = strtod(arg, &end);
	return *end || !(*out > 0) || *out > 86400 ? bad("bad number of seconds", arg) : 0;
}

static int parse_pids(const char *arg, pid_t **pids, size_t *n)
{
	const char *bad_item;

	return parse_pid_list(arg, pids, n, &bad_item) < 0 ? bad("bad pid list", arg) : 0;
}

static int parse_option(struct prof_top_opts *o, struct prof_perf_config *pc, int c, const char *arg)
{
	uint64_t v;

	switch (c) {
	case 'p': return parse_pids(arg, (pid_t **)&o->pids, &o->npids);
	case 'a': o->system_wide = true; return 0;
	case 'C':
		o->system_wide = true;
		return parse_cpu_list(arg, (int **)&o->cpus, &o->ncpus) < 0 ? bad("bad CPU list", arg) : 0;
	case 'F':
		if (parse_u64(arg, &v) < 0 || !v || v > 100000)
			return bad("bad sampling frequency (1..100000 Hz)", arg);
		pc->freq = v;
		return 0;
	case 'd': return parse_seconds(arg, &o->duration);
	case 'D': return parse_seconds(arg, &o->delay);
	case 'S': o->stdio = true; return 0;
	case 'n':
		if (parse_u64(arg, &v) < 0 || !v || v > 100000)
			return bad("bad row count", arg);
		o->max_rows = (size_t)v;
		return 0;
	default: return -EINVAL;
	}
}

static int parse_options(struct prof_top_opts *o, struct prof_perf_config *pc, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "all-cpus", no_argument, NULL, 'a' },
		{ "cpu", required_argument, NULL, 'C' },
		{ "freq", required_argument, NULL, 'F' },
		{ "duration", required_argument, NULL, 'd' },
		{ "delay", required_argument, NULL, 'D' },
		{ "stdio", no_argument, NULL, 'S' },
		{ "rows", required_argument, NULL, 'n' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "p:aC:F:d:n:", longopts, NULL)) != -1) {
		if (c == '?' || c == ':')
			return bad(c == ':' ? "option needs a value:" : "unknown option",
				   optopt ? (char[]){ '-', (char)optopt, 0 } : argv[optind - 1]);
		if (parse_option(o, pc, c, optarg) < 0)
			return -EINVAL;
	}
	if (optind < argc)
		return bad("unexpected argument", argv[optind]);
	if (!o->npids == !o->system_wide) {
		error("give -p PID or -a (see 'prof top --help')");
		return -EINVAL;
	}
	return 0;
}

int cmd_top(int argc, char **argv)
{
	struct prof_perf_config pc = { .event = prof_perf_event_find("cpu-clock"), .freq = 999,
		.callgraph = PROF_CG_DWARF, .stack_size = PROF_STACK_SIZE_DEFAULT,
		.ring_pages = prof_perf_default_ring_pages(), .ring_shrink_ok = true };
	struct prof_top_opts o = { .perf = &pc, .delay = 1.0, .max_rows = 25 };
	int ret;

	if (wants_help(argc, argv)) {
		usage(stdout);
		return 0;
	}
	ret = parse_options(&o, &pc, argc, argv);
	if (!ret)
		ret = prof_top_run(&o);
	free((void *)o.pids);
	free((void *)o.cpus);
	return ret < 0 ? EXIT_USAGE : 0;
}
