/*
 * record-priv.h - what `prof record`'s files share: the options (parsed
 * in record-options.c, with perf record's flags and their meaning; the
 * perf flags prof refuses are in record-perf-only.c) and the command that
 * uses them (record.c).
 */
#ifndef PROF_RECORD_PRIV_H
#define PROF_RECORD_PRIV_H

#include "prof/options.h"
#include "prof/perf.h"
#include "prof/unwind.h"
#include <stdio.h>
#include <sys/types.h>

struct record_opts {
	const char *output;	/* "-": stream to stdout */
	struct prof_perf_config perf;
	enum prof_unwinder_kind unwinder;
	const char *unwinder_name;
	double duration;	/* seconds, 0 = until the command ends / Ctrl-C */
	VEC(pid_t) pids;	/* -p, and the processes of -t threads */
	VEC(pid_t) tids;	/* -t: only these threads */
	bool system_wide;	/* -a, or -C */
	int *cpus;		/* -C LIST, NULL: every CPU */
	size_t ncpus;
	bool children;		/* --children: -p also takes the running descendants */
	bool per_thread;	/* --per-thread: -p with events per thread, not per CPU */
	char **argv;		/* command, NULL in attach mode */
	bool no_resources;	/* --no-resources: no off-CPU events, no /proc sampling */
	bool no_python;		/* --no-python: CPython stacks stay native */
	uint32_t offcpu_period;	/* --offcpu-stacks: 0 default, 1 all, N sampled:N */
	bool verbose;		/* -v: say the sampling configuration */
	bool heap;		/* --heap: sampled allocations too */
	uint64_t heap_rate;	/* --heap-rate BYTES (default 512 KiB) */
	uint64_t heap_seed;	/* PROF_HEAP_SEED: fixed sampling (tests) */
};

/* Defaults, then argv.  0, OPT_HELP or -EINVAL after one error line. */
int cmd_record_parse_options(struct record_opts *o, int argc, char **argv);
void cmd_record_usage(FILE *f);
/* -v: the configuration, one line on stderr. */
void cmd_record_say_config(const struct record_opts *o);
/* True for -o - (the recording goes to stdout). */
static inline bool record_to_stdout(const struct record_opts *o)
{
	return o->output[0] == '-' && !o->output[1];
}

/* Room kept in the option table for the perf-only flags. */
#define RECORD_PERF_ONLY_MAX 40

#endif
