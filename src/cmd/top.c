/*
 * top.c - `prof top`: a live view of the hottest functions of running
 * processes (-p) or of the whole machine (-a), with DWARF stacks.  This
 * file parses options; src/top/ is the view, the screen and the loop.
 */
#include "prof/cmd.h"
#include "prof/options.h"
#include "prof/perf.h"
#include "prof/top.h"
#include "help-prof-top.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
	fputs(help_prof_top, f);
}

enum { T_PID = 1, T_ALL_CPUS, T_CPU, T_FREQ, T_DURATION, T_DELAY, T_STDIO, T_ROWS, T_SORT,
       T_COMM, T_G, T_NO_PYTHON, T_OFF_CPU };

static const struct opt options[] = {
	{ T_PID, 'p', "pid", OPT_VALUE }, { T_ALL_CPUS, 'a', "all-cpus", OPT_FLAG },
	{ T_CPU, 'C', "cpu", OPT_VALUE }, { T_FREQ, 'F', "freq", OPT_VALUE },
	{ T_DURATION, 'd', "duration", OPT_VALUE }, { T_DELAY, 0, "delay", OPT_VALUE },
	{ T_STDIO, 0, "stdio", OPT_FLAG }, { T_ROWS, 'n', "rows", OPT_VALUE },
	{ T_SORT, 's', "sort", OPT_VALUE }, { T_COMM, 0, "comm", OPT_VALUE },
	{ T_COMM, 0, "comms", OPT_VALUE }, { T_G, 'g', NULL, OPT_FLAG },
	{ T_NO_PYTHON, 0, "no-python", OPT_FLAG }, { T_OFF_CPU, 0, "off-cpu", OPT_FLAG },
	{ 0 },
};

struct top_parse {
	struct prof_top_opts *o;
	struct prof_perf_config *pc;
};

/* One id of -p (a later -p replaces the list). */
static int add_pid(void *ctx, uint64_t id, const char *flag)
{
	struct prof_top_opts *o = ctx;
	pid_t *pids = xrealloc((void *)o->pids, (o->npids + 1) * sizeof(*pids));

	(void)flag;
	pids[o->npids++] = (pid_t)id;
	o->pids = pids;
	return 0;
}

/* self, total, or perf top's sym (its default: one row per function, by self). */
static int parse_sort(struct prof_top_opts *o, const char *flag, const char *arg)
{
	if (!strcmp(arg, "self") || !strcmp(arg, "sym") || !strcmp(arg, "overhead"))
		o->sort = PROF_TOP_BY_SELF;
	else if (!strcmp(arg, "total") || !strcmp(arg, "children"))
		o->sort = PROF_TOP_BY_TOTAL;
	else if (strchr(arg, ',') || !strcmp(arg, "comm") || !strcmp(arg, "pid") ||
		 !strcmp(arg, "tid") || !strcmp(arg, "dso") || !strcmp(arg, "srcline"))
		return usage_error("%s %s: prof top's rows are functions (perf's sym), by self or total; pick commands with --comm, or record and use 'prof report --sort %s'",
				   flag, arg, arg);
	else
		return usage_error("unknown %s '%s' (want self, total or sym)", flag, arg);
	return 0;
}

static int apply_option(void *ctx, int id, const char *arg, const char *flag)
{
	struct top_parse *tp = ctx;
	struct prof_top_opts *o = tp->o;
	uint64_t v;

	switch (id) {
	case OPT_ARG: return usage_error("unexpected argument '%s'", arg);
	case T_PID:
		free((void *)o->pids);
		o->pids = NULL;
		o->npids = 0;
		return opt_id_list(flag, arg, 1, 0x7fffffff, add_pid, o);
	case T_ALL_CPUS: o->system_wide = true; return 0;
	case T_CPU:
		o->system_wide = true;
		free((void *)o->cpus);
		o->cpus = NULL;
		if (parse_cpu_list(arg, (int **)&o->cpus, &o->ncpus) < 0)
			return usage_error("bad CPU list '%s' for %s", arg, flag);
		return 0;
	case T_FREQ:
		if (opt_u64(flag, arg, 1, 100000, &v) < 0)
			return -EINVAL;
		tp->pc->freq = v;
		return 0;
	case T_DURATION: return opt_double(flag, arg, 1e-3, 86400, &o->duration);
	case T_DELAY: return opt_double(flag, arg, 1e-3, 86400, &o->delay);
	case T_STDIO: o->stdio = true; return 0;
	case T_SORT: return parse_sort(o, flag, arg);
	case T_COMM: o->comm = arg; return 0;
	case T_G: return 0;	/* perf's -g: the stacks are always recorded (the total column) */
	case T_NO_PYTHON: o->no_python = true; return 0;
	case T_OFF_CPU: o->off_cpu = true; return 0;
	case T_ROWS:
		if (opt_u64(flag, arg, 1, 100000, &v) < 0)
			return -EINVAL;
		o->max_rows = (size_t)v;
		return 0;
	}
	return -EINVAL;
}

/* 0, OPT_HELP or -EINVAL. */
static int parse_options(struct prof_top_opts *o, struct prof_perf_config *pc, int argc, char **argv)
{
	struct top_parse tp = { o, pc };
	int ret = opt_parse(options, argc, argv, 0, apply_option, &tp, NULL);

	if (ret)
		return ret;
	if (!o->npids == !o->system_wide)
		return usage_error("give -p PID or -a");
	return 0;
}

int cmd_top(int argc, char **argv)
{
	struct prof_perf_config pc = { .event = prof_perf_event_find("cpu-clock"), .freq = 999,
		.callgraph = PROF_CG_DWARF, .stack_size = PROF_STACK_SIZE_DEFAULT,
		.ring_pages = prof_perf_default_ring_pages(), .ring_shrink_ok = true };
	struct prof_top_opts o = { .perf = &pc, .delay = 1.0, .max_rows = 25 };
	int ret;

	ret = parse_options(&o, &pc, argc, argv);
	if (ret == OPT_HELP) {
		usage(stdout);
		ret = 0;
	} else if (!ret) {
		ret = prof_top_run(&o);
	}
	free((void *)o.pids);
	free((void *)o.cpus);
	return ret < 0 ? EXIT_USAGE : 0;
}
