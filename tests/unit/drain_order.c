/*
 * drain_order.c - unit test of the merged drain (src/perf/ring.c) with the
 * replay engine, on real kernel rings: a child execs this binary again,
 * which sleeps 1 ms a few hundred times.  Two events follow it as prof
 * record's do: a cpu-clock event, whose ring alone carries the COMM-exec
 * and MMAP2 records of the new image, and a context-switches event
 * sampled at every switch with a user callchain (as the off-CPU stack
 * ring: no side-band records of its own).  Once the child is gone, both
 * events' rings are drained into a replay engine:
 *  - one after the other, switch samples first (what `prof record` did
 *    when the off-CPU ring lagged behind the CPU ring): every sample is
 *    replayed before the mappings exist and lands outside any mapping;
 *  - merged in time order: the samples resolve into the mapped files.
 * The first run shows that the check can tell the two apart; the second
 * is the check.  Skips when the kernel refuses perf events.
 */
#include "prof/perf.h"
#include "prof/replay.h"
#include "tap.h"
#include <inttypes.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SLEEPS 300

struct run {
	struct prof_profile p;
	struct prof_replay *rp;
	struct prof_perf cpu, sw;	/* the side-band event, the switch samples */
	uint64_t samples, mapped;	/* switch samples; with a file-backed user leaf */
};

struct source {
	struct run *r;
	struct prof_perf *pf;
};

/* The re-exec'd child: blocks SLEEPS times, a context switch each. */
static int sleeper_main(void)
{
	struct timespec ms = { 0, 1000000L };

	for (int i = 0; i < SLEEPS; i++)
		nanosleep(&ms, NULL);
	return 0;
}

/* Is the innermost user frame of node in a file-backed mapping? */
static bool user_leaf_mapped(const struct prof_profile *p, uint32_t node)
{
	for (; node && node < p->nodes.n; node = p->nodes.v[node].parent) {
		const struct prof_frame *f = &p->frames.v[p->nodes.v[node].frame];
		if (f->kind != PROF_FRAME_KERNEL)
			return f->kind == PROF_FRAME_USER;
	}
	return false;
}

static void on_sample(void *arg, const struct prof_replay_sample *rs)
{
	struct run *r = arg;

	if (rs->event != &r->sw)
		return;
	r->samples++;
	r->mapped += user_leaf_mapped(&r->p, rs->node);
}

static const struct prof_replay_ops counter_ops = { .sample = on_sample };

static int feed(void *ctx, const struct perf_event_header *h)
{
	const struct source *src = ctx;

	prof_replay_record(src->r->rp, &src->pf->attr, src->pf, h);
	return 0;
}

static int init_events(struct run *r)
{
	struct prof_perf_config cfg = {
		.event = prof_perf_event_find("cpu-clock"), .freq = 999,
		.callgraph = PROF_CG_FP, .ring_pages = 64, .enable_on_exec = true,
	};

	if (prof_perf_init(&r->cpu, &cfg) < 0)
		return -1;
	cfg.event = prof_perf_event_find("context-switches");
	cfg.period = 1;
	if (prof_perf_init(&r->sw, &cfg) < 0)
		return -1;
	/* the CPU event has them (src/record/offcpu.c does the same) */
	r->sw.attr.mmap = r->sw.attr.mmap2 = r->sw.attr.comm = r->sw.attr.comm_exec = 0;
	r->sw.attr.task = r->sw.attr.build_id = 0;
	return 0;
}

/* Runs the child under both events; false when perf events are refused. */
static bool record_child(struct run *r, const char *self)
{
	int p[2], status;
	char b;
	pid_t pid;

	if (pipe(p) < 0 || (pid = fork()) < 0)
		return false;
	if (pid == 0) {
		close(p[1]);
		if (read(p[0], &b, 1) != 1)
			_exit(1);
		execl(self, self, "--sleeper", (char *)NULL);
		_exit(127);
	}
	close(p[0]);
	prof_quiet = 1;
	bool opened = prof_perf_open_task(&r->cpu, pid) == 0 && prof_perf_open_task(&r->sw, pid) == 0;
	if (opened) {
		prof_replay_add_child(r->rp, pid, "drain_order");
		if (write(p[1], "g", 1) != 1)
			opened = false;
	}
	close(p[1]);
	if (!opened)
		kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return opened && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static bool run_start(struct run *r, const char *self)
{
	struct prof_replay_config cfg = { .p = &r->p };	/* a file's rules: no /proc */

	memset(r, 0, sizeof(*r));
	prof_profile_init(&r->p);
	r->rp = prof_replay_new(&cfg);
	prof_replay_add_consumer(r->rp, &counter_ops, r);
	return init_events(r) == 0 && record_child(r, self);
}

static void run_end(struct run *r)
{
	prof_replay_free(r->rp);
	prof_perf_close(&r->cpu);
	prof_perf_close(&r->sw);
	prof_profile_free(&r->p);
}

/* run_start, and the two events' sources; false (a skip) when refused. */
static bool start_or_skip(struct run *r, const char *self, struct source *sw, struct source *cpu)
{
	if (!run_start(r, self)) {
		printf("ok %d # SKIP perf events refused here\n", ++tap_n);
		run_end(r);
		return false;
	}
	*sw = (struct source){ r, &r->sw };
	*cpu = (struct source){ r, &r->cpu };
	return true;
}

static void test_one_after_the_other(const char *self)
{
	struct run r;
	struct source sw, cpu;

	if (!start_or_skip(&r, self, &sw, &cpu))
		return;
	prof_perf_drain(&r.sw, feed, &sw);
	prof_perf_drain(&r.cpu, feed, &cpu);
	prof_replay_batch_end(r.rp);
	ok(r.samples >= SLEEPS / 2, "one after the other: %" PRIu64 " switch samples of %d sleeps",
	   r.samples, SLEEPS);
	is_u64(r.mapped, 0, "one after the other: no switch sample finds its mapping");
	run_end(&r);
}

static void test_merged(const char *self)
{
	struct run r;
	struct source sw, cpu;

	if (!start_or_skip(&r, self, &sw, &cpu))
		return;
	/* the switch samples' event first, as prof record lists them last */
	struct prof_perf_source srcs[] = { { &r.sw, feed, &sw }, { &r.cpu, feed, &cpu } };
	ok(prof_perf_drain_merged(srcs, 2, 0) == 0, "merged drain: every record handed out");
	prof_replay_batch_end(r.rp);
	ok(r.samples >= SLEEPS / 2, "merged: %" PRIu64 " switch samples of %d sleeps", r.samples, SLEEPS);
	/* a few switches inside execve, before the new image's MMAP2, have
	 * nothing to resolve against whatever the order */
	ok(r.mapped * 100 >= r.samples * 95, "merged: %" PRIu64 " of %" PRIu64 " switch samples resolve in a mapped file",
	   r.mapped, r.samples);
	run_end(&r);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--sleeper"))
		return sleeper_main();
	test_one_after_the_other("/proc/self/exe");
	test_merged("/proc/self/exe");
	return done_testing();
}
