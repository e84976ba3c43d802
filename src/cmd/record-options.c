/*
 * record-options.c - `prof record`'s command line, with perf record's
 * flags and perf's meaning for them: -g takes no argument (the default
 * call graph), --call-graph MODE[,SIZE], -c/--count PERIOD, -F max,
 * -t/--tid, --no-inherit, -o - (stdout), -v, -a/-C (system-wide).  perf
 * flags prof does not implement are refused with the reason
 * (record-perf-only.c).
 */
#include "prof/data.h"
#include "prof/options.h"
#include "prof/proc.h"
#include "prof/util.h"
#include "perf-only-priv.h"
#include "record-priv.h"
#include "help-prof-record.h"
#include <errno.h>
#include <string.h>

void cmd_record_usage(FILE *f)
{
	fputs(help_prof_record, f);
}

/* One id of a -p or -t list into its VEC(pid_t). */
static int add_id(void *vec, uint64_t id, const char *flag)
{
	VEC(pid_t) *list = vec;

	(void)flag;
	VEC_PUSH(list, (pid_t)id);
	return 0;
}

static int parse_stack_size(struct record_opts *o, const char *flag, const char *arg)
{
	uint64_t v;

	if (opt_u64(flag, arg, 8, UINT32_MAX, &v) < 0)
		return -EINVAL;
	if (v > PROF_STACK_SIZE_MAX)
		return usage_error("stack size %s is too big: a sample record's size is a u16, so at most %d bytes of stack fit",
				   arg, PROF_STACK_SIZE_MAX);
	o->perf.stack_size = (uint32_t)((v + 7) & ~7ULL);
	return 0;
}

/* perf's --call-graph MODE[,SIZE]: dwarf,16384; fp; none; lbr refused. */
static int parse_call_graph(struct record_opts *o, const char *flag, const char *arg)
{
	const char *comma = strchr(arg, ',');
	char mode[16];

	snprintf(mode, sizeof(mode), "%.*s", (int)(comma ? comma - arg : (long)strlen(arg)), arg);
	if (!strcmp(mode, "lbr"))
		return usage_error("%s lbr needs Intel's Last Branch Record hardware, which prof does not read; use dwarf (the default) or fp",
				   flag);
	if (prof_callgraph_parse(mode, &o->perf.callgraph) < 0)
		return usage_error("unknown %s mode '%s' (want dwarf, fp or none)", flag, mode);
	if (!comma)
		return 0;
	if (o->perf.callgraph != PROF_CG_DWARF)
		return usage_error("%s %s takes no size (only dwarf copies stack bytes)", flag, mode);
	return parse_stack_size(o, flag, comma + 1);
}

/* -F HZ or -F max (the kernel's current limit, as perf does). */
static int parse_freq(struct record_opts *o, const char *flag, const char *arg)
{
	if (!strcmp(arg, "max")) {
		char *s = read_file("/proc/sys/kernel/perf_event_max_sample_rate", NULL);
		uint64_t v = s ? strtoull(s, NULL, 10) : 0;

		free(s);
		o->perf.freq = v ? MIN(v, 100000) : 4000;
		o->perf.period = 0;
		return 0;
	}
	o->perf.period = 0;
	return opt_u64(flag, arg, 1, 100000, &o->perf.freq);
}

enum { O_OUTPUT = 1, O_FREQ, O_COUNT, O_EVENT, O_G, O_CALLGRAPH, O_STACK, O_UNWINDER, O_PAGES,
       O_PID, O_TID, O_NO_INHERIT, O_DURATION, O_QUIET, O_VERBOSE, O_NO_RESOURCES, O_ALL_CPUS,
       O_CPU, O_CHILDREN, O_PER_THREAD, O_HEAP, O_HEAP_RATE, O_NO_PYTHON, O_OFFCPU_STACKS, O_NOOP, O_PERF_ONLY };

static struct opt options[O_PERF_ONLY + RECORD_PERF_ONLY_MAX + 1] = {
	{ O_OUTPUT, 'o', "output", OPT_VALUE }, { O_FREQ, 'F', "freq", OPT_VALUE },
	{ O_COUNT, 'c', "count", OPT_VALUE }, { O_EVENT, 'e', "event", OPT_VALUE },
	{ O_G, 'g', NULL, OPT_FLAG }, { O_CALLGRAPH, 0, "call-graph", OPT_VALUE },
	{ O_STACK, 0, "stack-size", OPT_VALUE }, { O_UNWINDER, 0, "unwinder", OPT_VALUE },
	{ O_PAGES, 'm', "mmap-pages", OPT_VALUE }, { O_PID, 'p', "pid", OPT_VALUE },
	{ O_TID, 't', "tid", OPT_VALUE }, { O_NO_INHERIT, 'i', "no-inherit", OPT_FLAG },
	{ O_DURATION, 'd', "duration", OPT_VALUE }, { O_QUIET, 'q', "quiet", OPT_FLAG },
	{ O_VERBOSE, 'v', "verbose", OPT_FLAG }, { O_NO_RESOURCES, 0, "no-resources", OPT_FLAG },
	{ O_ALL_CPUS, 'a', "all-cpus", OPT_FLAG }, { O_CPU, 'C', "cpu", OPT_VALUE },
	{ O_CHILDREN, 0, "children", OPT_FLAG }, { O_PER_THREAD, 0, "per-thread", OPT_FLAG },
	{ O_HEAP, 0, "heap", OPT_FLAG }, { O_HEAP_RATE, 0, "heap-rate", OPT_VALUE },
	{ O_NO_PYTHON, 0, "no-python", OPT_FLAG },
	{ O_OFFCPU_STACKS, 0, "offcpu-stacks", OPT_VALUE },
	/* perf's no-ops here: timestamps, CPU ids and build-ids are always recorded */
	{ O_NOOP, 'T', "timestamp", OPT_FLAG }, { O_NOOP, 0, "sample-cpu", OPT_FLAG },
	{ O_NOOP, 'N', "no-buildid-cache", OPT_FLAG },
};

/* sampled, sampled:N (1 in N switch-outs' stacks) or all. */
static int parse_offcpu_stacks(struct record_opts *o, const char *arg, const char *flag)
{
	uint64_t n;

	if (!strcmp(arg, "sampled") || !strcmp(arg, "all")) {
		o->offcpu_period = !strcmp(arg, "all");
		return 0;
	}
	if (strncmp(arg, "sampled:", 8))
		return usage_error("unknown %s '%s' (want sampled, sampled:N or all)", flag, arg);
	if (opt_u64(flag, arg + 8, 2, 1000000, &n) < 0)
		return -1;
	o->offcpu_period = (uint32_t)n;
	return 0;
}

static int apply_option(void *ctx, int id, const char *arg, const char *flag)
{
	struct record_opts *o = ctx;
	uint64_t v;

	switch (id) {
	case O_OUTPUT: o->output = arg; return 0;
	case O_FREQ: return parse_freq(o, flag, arg);
	case O_COUNT: return opt_u64(flag, arg, 1, UINT64_MAX >> 1, &o->perf.period);
	case O_EVENT:
		if (!(o->perf.event = prof_perf_event_find(arg)))
			return usage_error("unknown event '%s' for %s (known: %s)", arg, flag,
					   prof_perf_event_names());
		return 0;
	case O_G: o->perf.callgraph = PROF_CG_DWARF; return 0;
	case O_CALLGRAPH: return parse_call_graph(o, flag, arg);
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
	case O_PID: return opt_id_list(flag, arg, 1, 0x7fffffff, add_id, &o->pids);
	case O_TID: return opt_id_list(flag, arg, 1, 0x7fffffff, add_id, &o->tids);
	case O_NO_INHERIT: o->perf.no_inherit = true; return 0;
	case O_DURATION: return opt_double(flag, arg, 1e-3, 1e9, &o->duration);
	case O_QUIET: prof_quiet = 1; return 0;
	case O_VERBOSE: o->verbose = true; return 0;
	case O_NO_RESOURCES: o->no_resources = true; return 0;
	case O_NO_PYTHON: o->no_python = true; return 0;
	case O_NOOP: return 0;
	case O_ALL_CPUS: o->system_wide = true; return 0;
	case O_CPU:
		o->system_wide = true;
		free(o->cpus);
		o->cpus = NULL;
		if (parse_cpu_list(arg, &o->cpus, &o->ncpus) < 0)
			return usage_error("bad CPU list '%s' for %s", arg, flag);
		return 0;
	case O_CHILDREN: o->children = true; return 0;
	case O_PER_THREAD: o->per_thread = true; return 0;
	case O_HEAP: o->heap = true; return 0;
	case O_HEAP_RATE:
		o->heap = true;
		return opt_u64(flag, arg, 1, 1ULL << 40, &o->heap_rate);
	case O_OFFCPU_STACKS:
		return parse_offcpu_stacks(o, arg, flag);
	}
	return cmd_perf_only_refuse(&record_perf_only, id - O_PERF_ONLY, flag);
}

static void set_defaults(struct record_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->output = PROF_DATA_DEFAULT;
	o->unwinder = PROF_UNWIND_LIBDW;
	o->unwinder_name = "libdw";
	o->perf = (struct prof_perf_config){ .event = prof_perf_event_find("cpu-clock"), .freq = 999,
		.callgraph = PROF_CG_DWARF, .stack_size = PROF_STACK_SIZE_DEFAULT,
		.ring_pages = prof_perf_default_ring_pages(), .ring_shrink_ok = true };
	o->heap_rate = 512 * 1024;
	const char *seed = getenv("PROF_HEAP_SEED");
	o->heap_seed = seed ? strtoull(seed, NULL, 10) : 0;
}

/* -t: the process of each thread joins the targets, once. */
static int add_thread_processes(struct record_opts *o)
{
	for (size_t i = 0; i < o->tids.n; i++) {
		pid_t pid = prof_proc_tgid(o->tids.v[i]);
		bool seen = false;

		if (pid <= 0)
			return usage_error("no thread with tid %d", (int)o->tids.v[i]);
		for (size_t k = 0; k < o->pids.n; k++)
			seen |= o->pids.v[k] == pid;
		if (!seen)
			VEC_PUSH(&o->pids, pid);
	}
	return 0;
}

int cmd_record_parse_options(struct record_opts *o, int argc, char **argv)
{
	int rest, ret;

	set_defaults(o);
	ret = opt_parse(cmd_perf_only_append(&record_perf_only, options, ARRAY_SIZE(options) - 1, O_PERF_ONLY),
			argc, argv, OPT_STOP_AT_ARG, apply_option, o, &rest);
	if (ret)
		return ret;
	if (rest < argc)
		o->argv = argv + rest;
	if (!o->argv && !o->pids.n && !o->tids.n && !o->system_wide)
		return usage_error("nothing to record: give a command after '--', -p PID, -t TID or -a");
	/* as in perf, a command after -a, -p or -t bounds the recording */
	if ((o->pids.n || o->tids.n) && o->system_wide)
		return usage_error("give either -p PID / -t TID or -a/-C, not both (-d SECONDS or a command after '--' bounds the recording)");
	if (o->pids.n && o->tids.n)
		return usage_error("give either -p PID or -t TID, not both");
	if (o->children && !o->pids.n)
		return usage_error("--children goes with -p PID (a launched command's children are always followed)");
	if (o->per_thread && !o->pids.n)
		return usage_error("--per-thread goes with -p PID");
	o->perf.enable_on_exec = o->argv && !o->pids.n && !o->tids.n && !o->system_wide;
	return add_thread_processes(o);
}

void cmd_record_say_config(const struct record_opts *o)
{
	char rate[64], stack[48] = "";

	if (o->perf.callgraph == PROF_CG_DWARF)
		snprintf(stack, sizeof(stack), " with %u stack bytes", o->perf.stack_size);
	if (o->perf.period)
		snprintf(rate, sizeof(rate), "every %llu events", (unsigned long long)o->perf.period);
	else
		snprintf(rate, sizeof(rate), "%llu Hz", (unsigned long long)o->perf.freq);
	info("event %s, %s, call graph %s%s, unwinder %s, %u ring pages per CPU, %s, output %s",
	     o->perf.event->name, rate, prof_callgraph_name(o->perf.callgraph), stack,
	     o->unwinder_name, o->perf.ring_pages,
	     o->perf.no_inherit ? "no inherit" : "children followed",
	     record_to_stdout(o) ? "stdout" : o->output);
}
