/*
 * resource.h - per-process resource accounting for one run of a command:
 * wall, user and system CPU, peak RSS, I/O wait (delay accounting), off-CPU
 * time, context switches, page faults, /proc/PID/io bytes, and optional
 * perf_event_open counters (counting mode, inherit=1, enabled at exec).
 * Used by `prof stat`; reusable by `prof record` to annotate a profile.
 *
 * How one run is measured (res_run): fork; the child waits on a pipe until
 * the parent has attached the counters, then execs.  The parent waits with
 * waitid(WEXITED|WNOWAIT) so the zombie's /proc/PID/stat (field 42,
 * delayacct_blkio_ticks) and /proc/PID/io can still be read, then reaps it
 * with wait4() for the rusage.  What each number includes:
 *  - user/sys/faults/context switches: rusage of the child plus its waited-for
 *    descendants (wait4 semantics).
 *  - rss_peak_bytes: ru_maxrss of wait4 = the largest peak RSS of the child
 *    or of any single waited-for descendant (a maximum, never a sum).
 *  - io_wait_s: block-I/O delay of the direct child's main thread, from
 *    taskstats netlink (ns; needs CAP_NET_ADMIN) or else /proc/PID/stat
 *    field 42 (clock ticks).  Both are per task: block I/O waits of other
 *    threads and of grandchildren are NOT included.  runq_wait_s (time
 *    runnable but not running) comes only from taskstats.  Only meaningful
 *    when
 *    /proc/sys/kernel/task_delayacct is 1; see kernel-notes/delayacct.md.
 *    Where it is 0, io_wait_s comes from sched:sched_switch samples as in
 *    `prof record` (prof_iowait_*, offcpu.h; needs root or CAP_PERFMON): the
 *    time every thread of the command and of its descendants spent
 *    switched out in D state with an I/O wait function on the kernel
 *    stack.  io_wait_source says which one a run used.
 *  - off_cpu_s = wall - user - sys, floored at 0: time the command was not
 *    on a CPU.  Exact for a single-threaded command; with several threads
 *    or children running in parallel CPU time can exceed wall and this
 *    underestimates (it is then a lower bound, often 0).
 */
#ifndef PROF_RESOURCE_H
#define PROF_RESOURCE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "prof/perf.h"

/* --- perf counters ----------------------------------------------------------- */
#define RES_MAX_COUNTERS 16
/* Event names come from the one table in src/perf/event.c
 * (prof_perf_event_find / prof_perf_event_names). */
/* Keeps in counters[0..*n) the events res_counter_probe accepts, warning
 * once for each dropped or user-only one.  0, or -EINVAL after an error
 * line when events were asked for and none is countable. */
int res_counters_keep_countable(const struct prof_perf_event_desc **counters, unsigned *n);

/* --- one run ------------------------------------------------------------------- */
struct res_usage {
	double wall_s, user_s, sys_s, off_cpu_s, io_wait_s;
	uint64_t rss_peak_bytes;
	uint64_t vol_cs, invol_cs, minflt, majflt;
	uint64_t read_bytes, write_bytes;	/* /proc/PID/io storage bytes */
	double runq_wait_s;			/* runnable, waiting for a CPU */
	double io_wait_resolution_s;		/* 1e-9 (taskstats) or 1/CLK_TCK */
	bool have_io_wait;			/* an I/O-wait source worked for the run */
	const char *io_wait_source;		/* static: "delayacct (taskstats)", ... */
	uint64_t io_wait_lost;			/* sched_switch samples dropped: a lower bound */
	bool have_runq_wait;			/* ... and taskstats answered */
	bool have_proc_io;
	uint64_t counters[RES_MAX_COUNTERS];	/* same order as the specs */
	int wait_status;			/* as from waitpid() */
};

struct res_run_opts {
	char **argv;				/* NULL-terminated command */
	const struct prof_perf_event_desc *const *counters;
	unsigned n_counters;
	int stdout_fd, stderr_fd;		/* -1: inherit */
};

/*
 * Run argv once and fill *out.  Returns 0 (even when the command itself
 * failed: see out->wait_status), -errno when it could not be run at all
 * (fork/exec failure: exec failure is reported as -ENOENT etc. after the
 * child exits 127).
 */
int res_run(const struct res_run_opts *opts, struct res_usage *out);

/* 1 on, 0 off, -errno when /proc/sys/kernel/task_delayacct is unreadable. */
int res_delayacct_enabled(void);

/*
 * From JSON written by `prof stat --format=json`, the per-run values of one
 * metric (malloc'd into *vals).  -ENOENT: metric absent or unavailable in
 * that file; -EINVAL: not a prof stat JSON file.
 */
int res_baseline_runs(const char *json, const char *metric, double **vals, size_t *n);
/* A baseline file, read whole and checked to be prof stat JSON (malloc'd),
 * or NULL after an error line. */
char *res_baseline_load(const char *path);

/* Human-readable wait status: "exit 3", "killed by SIGKILL". */
const char *res_status_str(int wait_status, char *buf, size_t len);

#endif
