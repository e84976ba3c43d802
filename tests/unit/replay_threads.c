/*
 * replay_threads.c - unit test of the replay engine's thread identities
 * (src/replay/replay.c) when a thread is named before its records are
 * replayed.  The off-CPU accountant reads per-thread totals the kernel
 * keeps, which run ahead of the rings, and asks for the identity of a
 * thread whose FORK the engine has not replayed yet; a COMM may come
 * before the FORK too.  Such a thread must keep one identity, while a
 * tid reused after an EXIT and an exec still start new ones.  The
 * records are synthetic, fed in the order under test, with a file's
 * rules (no /proc).
 */
#include "prof/replay.h"
#include "tap.h"
#include <string.h>

#define PID 100
#define WORKER 101

static const struct perf_event_attr attr = {
	.type = PERF_TYPE_SOFTWARE, .size = sizeof(attr), .config = PERF_COUNT_SW_CPU_CLOCK,
	.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD,
	.sample_id_all = 1,
};

struct rec {
	struct perf_event_header h;
	uint64_t w[8];
};

struct run {
	struct prof_profile p;
	struct prof_replay *rp;
	uint32_t last;		/* the thread of the last sample */
};

static void on_sample(void *arg, const struct prof_replay_sample *rs)
{
	((struct run *)arg)->last = rs->thread;
}

static const struct prof_replay_ops ops = { .sample = on_sample };

static void start(struct run *r)
{
	struct prof_replay_config cfg = { .p = &r->p };

	memset(r, 0, sizeof(*r));
	prof_profile_init(&r->p);
	r->rp = prof_replay_new(&cfg);
	prof_replay_add_consumer(r->rp, &ops, r);
	prof_replay_add_child(r->rp, PID, "main");
}

static void end(struct run *r)
{
	prof_replay_free(r->rp);
	prof_profile_free(&r->p);
}

static void feed(struct run *r, struct rec *e, uint16_t type, uint16_t misc, size_t words)
{
	e->h = (struct perf_event_header){ type, misc, (uint16_t)(sizeof(e->h) + 8 * words) };
	prof_replay_record(r->rp, &attr, NULL, &e->h);
}

/* FORK or EXIT of tid in pid, made by the process's main thread */
static void task(struct run *r, uint16_t type, uint32_t pid, uint32_t tid, uint64_t time)
{
	struct rec e = { .w = { (uint64_t)PID << 32 | pid, (uint64_t)PID << 32 | tid, time,
				(uint64_t)tid << 32 | pid, time } };

	feed(r, &e, type, 0, 5);
}

static void comm(struct run *r, uint32_t tid, const char *name, bool exec, uint64_t time)
{
	struct rec e = { .w = { (uint64_t)tid << 32 | PID, 0, 0, (uint64_t)tid << 32 | PID, time } };

	strncpy((char *)&e.w[1], name, 15);
	feed(r, &e, PERF_RECORD_COMM, exec ? PERF_RECORD_MISC_COMM_EXEC : 0, 5);
}

/* A user-mode sample of tid; returns its thread. */
static uint32_t sample(struct run *r, uint32_t pid, uint32_t tid, uint64_t time)
{
	struct rec e = { .w = { 0x401000, (uint64_t)tid << 32 | pid, time, 1000000 } };

	r->last = PROF_NONE;
	feed(r, &e, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, 4);
	return r->last;
}

/* How many identities tid has, in any process. */
static size_t identities(const struct run *r, uint32_t tid)
{
	size_t n = 0;

	for (size_t i = 0; i < r->p.threads.n; i++)
		n += r->p.threads.v[i].tid == tid;
	return n;
}

static const char *name_of(const struct run *r, uint32_t th)
{
	return th < r->p.threads.n ? prof_str(&r->p, r->p.threads.v[th].comm) : "(none)";
}

/* The accountant's order: the worker's identity is asked for before its
 * FORK is replayed; its samples after the FORK are the same thread. */
static void test_looked_up_before_fork(void)
{
	struct run r;
	uint32_t early, later;

	start(&r);
	sample(&r, PID, PID, 1000);
	early = prof_replay_thread(r.rp, PID, WORKER);
	task(&r, PERF_RECORD_FORK, PID, WORKER, 2000);
	later = sample(&r, PID, WORKER, 3000);
	is_u64(identities(&r, WORKER), 1, "looked up before its FORK: one identity");
	is_u64(later, early, "looked up before its FORK: the samples go to it");
	is_u64(r.p.task_events.n ? r.p.task_events.v[r.p.task_events.n - 1].thread : PROF_NONE, early,
	       "looked up before its FORK: the fork marker is on it");
	end(&r);
}

/* A COMM replayed before the FORK: the name the thread gave itself
 * stays, not its creator's. */
static void test_comm_before_fork(void)
{
	struct run r;

	start(&r);
	comm(&r, WORKER, "wl-worker", false, 1500);
	task(&r, PERF_RECORD_FORK, PID, WORKER, 2000);
	is_str(name_of(&r, sample(&r, PID, WORKER, 3000)), "wl-worker",
	       "COMM before its FORK: the thread keeps its own name");
	is_u64(identities(&r, WORKER), 1, "COMM before its FORK: one identity");
	end(&r);
}

/* A tid reused after its thread exited is another thread, also when the
 * new thread is looked up before its FORK from another process. */
static void test_reused_tid(void)
{
	struct run r;
	uint32_t old, reused, elsewhere;

	start(&r);
	task(&r, PERF_RECORD_FORK, PID, WORKER, 1000);
	old = sample(&r, PID, WORKER, 2000);
	task(&r, PERF_RECORD_EXIT, PID, WORKER, 3000);
	task(&r, PERF_RECORD_FORK, PID, WORKER, 4000);
	reused = sample(&r, PID, WORKER, 5000);
	ok(reused != old && identities(&r, WORKER) == 2, "reused tid after EXIT: a new identity");
	task(&r, PERF_RECORD_EXIT, PID, WORKER, 6000);
	elsewhere = prof_replay_thread(r.rp, PID + 1, WORKER);
	task(&r, PERF_RECORD_FORK, PID + 1, WORKER, 7000);
	is_u64(sample(&r, PID + 1, WORKER, 8000), elsewhere,
	       "reused by another process, looked up before its FORK: that lookup's identity");
	is_u64(identities(&r, WORKER), 3, "reused tid: one identity per thread");
	end(&r);
}

/* An exec starts a new identity, also of a thread looked up before its
 * FORK. */
static void test_exec(void)
{
	struct run r;
	uint32_t before;

	start(&r);
	before = prof_replay_thread(r.rp, PID, WORKER);
	task(&r, PERF_RECORD_FORK, PID, WORKER, 1000);
	comm(&r, WORKER, "newimg", true, 2000);
	ok(sample(&r, PID, WORKER, 3000) != before && identities(&r, WORKER) == 2,
	   "exec: a new identity");
	end(&r);
}

int main(void)
{
	test_looked_up_before_fork();
	test_comm_before_fork();
	test_reused_tid();
	test_exec();
	return done_testing();
}
