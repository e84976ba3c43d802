/*
 * record.c - `prof record`: sample a command (launch) or running processes
 * (attach, -p/-t) with perf events and write prof.data.  This file hands
 * the options (record-options.c) to a recording session (src/record/session.c: the
 * targets, the loop, the flushes) and prints the summary.  prof exits with
 * the command's status (128+signal when killed).
 */
#include "prof/cmd.h"
#include "prof/data.h"
#include "prof/options.h"
#include "prof/perf.h"
#include "prof/session.h"
#include "record-priv.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

/* --- wiring and printing ------------------------------------------------------------ */

/* "1 thread of 1 process", "3 threads of 2 processes". */
static const char *threads_of(char *buf, size_t len, size_t threads, size_t processes)
{
	snprintf(buf, len, "%zu thread%s of %zu process%s", threads, threads == 1 ? "" : "s",
		 processes, processes == 1 ? "" : "es");
	return buf;
}

/* What the file holds, counted as it is: the threads (and their
 * processes) that have CPU samples, those that have off-CPU time. */
static void print_summary(const struct prof_session_info *in, const char *output)
{
	double full = in->samples ? 100.0 * (double)(in->samples - in->truncated) / (double)in->samples
				  : 100.0;
	char cpu[96], off[128] = "";

	threads_of(cpu, sizeof(cpu), in->sampled_threads, in->sampled_processes);
	if (in->offcpu_recorded) {
		char t[96];
		snprintf(off, sizeof(off), ", off-CPU time in %s",
			 threads_of(t, sizeof(t), in->offcpu_threads, in->offcpu_processes));
	}
	info("%llu sample%s (%llu lost, %.1f%% fully unwound) in %s%s; %llu KiB written to %s",
	     (unsigned long long)in->samples, in->samples == 1 ? "" : "s", (unsigned long long)in->lost, full, cpu, off,
	     (unsigned long long)((in->bytes_written + 1023) / 1024), output);
	if (in->heap)
		info("heap: %llu allocations sampled (%s), %llu of them freed, %llu samples lost",
		     (unsigned long long)in->heap_allocs,
		     !in->heap_attached ? "about one per rate bytes"
		     : in->heap_sampled ? "about one per rate bytes, by BPF on uprobes on the allocator"
		     : "every call, by uprobes on the allocator",
		     (unsigned long long)in->heap_frees, (unsigned long long)in->heap_lost);
	if (in->heap && in->heap_waits)
		info("heap: the program paused %llu times, %.1f ms in all, for the recorder to read its samples",
		     (unsigned long long)in->heap_waits, in->heap_wait_ns / 1e6);
	if (in->heap && in->heap_gave_up)
		warning("heap: the program stopped waiting for the recorder (it was gone, or had stopped reading) and went on unpaced: samples may have been lost");
	if (in->heap && in->heap_memptr_unseen)
		warning("heap: %llu %sposix_memalign blocks not recorded: the pointer went to memory outside the caller's stack (a global, a heap object), which the return probe does not copy",
			(unsigned long long)in->heap_memptr_unseen, in->heap_sampled ? "sampled " : "");
}

static void print_self_cost(const struct prof_session_info *in)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) == 0)
		fprintf(stderr, "prof record: own cpu: %.3f s user, %.3f s sys, max rss %ld KiB\n",
			(double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6,
			(double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6, ru.ru_maxrss);
	fprintf(stderr, "prof record: off-CPU: %llu full stacks sampled (%llu random, %llu stale (%llu paid by the budget, %llu refused), %llu D; %llu lost; %llu repeats, %llu unnamed; %llu copied to the stack's end, %llu of them short), %llu kernel stacks of D states (%llu missing; %llu I/O waits without), for %llu estimated intervals; %.3f s without a sample\n",
		(unsigned long long)in->offcpu.full_stacks, (unsigned long long)in->offcpu.by_rule[0],
		(unsigned long long)in->offcpu.by_rule[1], (unsigned long long)in->offcpu.stale_budget,
		(unsigned long long)in->offcpu.stale_refused, (unsigned long long)in->offcpu.by_rule[2],
		(unsigned long long)in->offcpu.full_lost, (unsigned long long)in->offcpu.repeats,
		(unsigned long long)in->offcpu.repeats_unnamed, (unsigned long long)in->offcpu.to_base,
		(unsigned long long)in->offcpu.to_base_short, (unsigned long long)in->offcpu.d_kernel,
		(unsigned long long)in->offcpu.d_kernel_missing, (unsigned long long)in->offcpu.d_io_flag,
		(unsigned long long)in->offcpu.estimated, (double)in->offcpu.unsampled_ns / 1e9);
	fprintf(stderr, "prof record: address spaces: %zu processes seen, at most %zu alive at once, %zu freed\n",
		in->processes, in->spaces_peak, in->spaces_freed);
}

/* Said once setup succeeded (a failing attach gets its one error line alone). */
static void warn_setup(const struct prof_session_info *in)
{
	if (in->offcpu_why)
		warning("no off-CPU stacks in this recording: %s", in->offcpu_why);
	if (in->heap_why)
		warning("no heap profile in this recording: %s; recording CPU samples", in->heap_why);
	if (in->heap_exact_why)
		warning("--heap -p records every allocator call with its stack, exactly and slowly, not a sample: %s",
			in->heap_exact_why);
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
		.npids = o->pids.n, .tids = o->tids.v, .ntids = o->tids.n,
		.system_wide = o->system_wide, .cpus = o->cpus, .ncpus = o->ncpus,
		.argv = o->argv, .no_resources = o->no_resources, .no_python = o->no_python,
		.offcpu_period = o->offcpu_period, .children = o->children,
		.per_thread = o->per_thread,
		.heap = o->heap, .heap_rate = o->heap_rate, .heap_seed = o->heap_seed,
		.version = PROF_VERSION,
	};
	struct prof_session *s;
	const struct prof_session_info *in;
	int ret, status;

	if (prof_session_open(&s, &so) < 0)
		return EXIT_USAGE;
	in = prof_session_info(s);
	warn_setup(in);
	/* the allocator probes are opened on the threads of the -p process */
	if (o->heap && !in->heap_why && o->children)
		warning("--heap records the allocations of process %d, not those of its children already running (their CPU samples are recorded)",
			(int)o->pids.v[0]);
	if ((ret = prof_session_start(s)) < 0) {
		prof_session_free(s);
		return ret == -ENOENT ? 127 : 126;
	}
	prof_session_run(s);
	status = in->launched ? in->exit_status : 0;
	if (!in->write_failed)
		print_summary(in, record_to_stdout(o) ? "stdout" : o->output);
	else if (!status)
		status = 1;	/* the command succeeded, the recording did not */
	if (in->offcpu.stacks_lost)
		warning("%llu off-CPU stacks lost (ring full): their time is charged to [stack lost]",
			(unsigned long long)in->offcpu.stacks_lost);
	if (in->offcpu.full_lost)
		warning("%llu sampled off-CPU stacks lost (ring full): the others' weights stand for their time",
			(unsigned long long)in->offcpu.full_lost);
	if (in->offcpu.switches_lost)
		warning("%llu context-switch records lost: off-CPU times are too low",
			(unsigned long long)in->offcpu.switches_lost);
	if (getenv("PROF_RECORD_STATS"))	/* benchmarks: prof's own cost */
		print_self_cost(in);
	prof_session_free(s);
	return status;
}

int cmd_record(int argc, char **argv)
{
	struct record_opts o;
	int status = cmd_record_parse_options(&o, argc, argv);

	if (status == OPT_HELP) {	/* help records nothing and touches no file */
		cmd_record_usage(stdout);
		status = 0;
	} else if (status) {
		status = EXIT_USAGE;
	} else {
		if (o.verbose)
			cmd_record_say_config(&o);
		status = record(&o);
	}
	VEC_FREE(&o.pids);
	free(o.cpus);
	VEC_FREE(&o.tids);
	return status;
}
