/*
 * switchpair.c - unit tests of the one switch-out/switch-in pairing
 * (src/record/switchpair.c), fed synthetic records: intervals with their
 * samples, rings that run ahead of each other, a lost sample, a lost
 * switch-in, a thread that exits (and a tid reused), a thread that
 * migrates between CPUs, what is settled at the end, and the window's
 * edges (a thread off the CPU when it begins or ends).
 */
#include "tap.h"
#include "prof/switchpair.h"

struct got {
	uint64_t t_out, t_in;
	int edge;
	uint32_t node;		/* PROF_NONE: charged as lost */
	int metric;
};

static struct got charged[32];
static size_t ncharged;

static void charge(void *arg, const struct prof_switch_interval *iv, const struct prof_switch_sample *s,
		   enum prof_metric m)
{
	(void)arg;
	if (ncharged < ARRAY_SIZE(charged))
		charged[ncharged] = (struct got){ iv->t_out, iv->t_in, iv->edge, s ? s->node : PROF_NONE, (int)m };
	ncharged++;
}

static struct prof_switchpair *fresh(void)
{
	ncharged = 0;
	return prof_switchpair_new(charge, NULL);
}

static void sample(struct prof_switchpair *sp, uint32_t tid, uint64_t t, uint32_t node, enum prof_metric m)
{
	prof_switchpair_sample(sp, tid, &(struct prof_switch_sample){ t, 1, node, PROF_NONE, (uint8_t)m });
}

static bool is(size_t i, uint64_t out, uint64_t in, uint32_t node, enum prof_metric m)
{
	return i < ncharged && charged[i].t_out == out && charged[i].t_in == in && charged[i].node == node &&
	       charged[i].metric == (int)m;
}

static void test_in_order(void)
{
	struct prof_switchpair *sp = fresh();

	sample(sp, 7, 99, 5, PROF_M_SLEEP_NS);
	prof_switchpair_out(sp, 7, 7, 1, 100, false);
	prof_switchpair_in(sp, 7, 200);
	ok(ncharged == 1 && is(0, 100, 200, 5, PROF_M_SLEEP_NS), "one interval, its sample's stack and state");
	prof_switchpair_finish(sp, 0);
	is_u64(ncharged, 1, "nothing more at the end");
	prof_switchpair_free(sp);
}

/* The switch records' ring drained before the samples', and the other way. */
static void test_rings_out_of_order(void)
{
	struct prof_switchpair *sp = fresh();

	prof_switchpair_out(sp, 7, 7, 1, 100, false);
	prof_switchpair_in(sp, 7, 200);
	prof_switchpair_out(sp, 7, 7, 1, 300, false);
	prof_switchpair_in(sp, 7, 400);
	is_u64(ncharged, 0, "intervals wait for their samples");
	sample(sp, 7, 99, 5, PROF_M_SLEEP_NS);
	sample(sp, 7, 299, 6, PROF_M_IOWAIT_NS);
	ok(ncharged == 2 && is(0, 100, 200, 5, PROF_M_SLEEP_NS) && is(1, 300, 400, 6, PROF_M_IOWAIT_NS),
	   "switch records first: each interval gets its own sample, oldest first");
	prof_switchpair_free(sp);

	sp = fresh();
	sample(sp, 7, 99, 5, PROF_M_SLEEP_NS);
	sample(sp, 7, 299, 6, PROF_M_IOWAIT_NS);
	prof_switchpair_out(sp, 7, 7, 1, 100, false);
	prof_switchpair_in(sp, 7, 200);
	prof_switchpair_out(sp, 7, 7, 1, 300, false);
	prof_switchpair_in(sp, 7, 400);
	ok(ncharged == 2 && is(0, 100, 200, 5, PROF_M_SLEEP_NS) && is(1, 300, 400, 6, PROF_M_IOWAIT_NS),
	   "samples first: the same");
	prof_switchpair_free(sp);
}

static void test_lost_sample(void)
{
	struct prof_switchpair *sp = fresh();

	sample(sp, 7, 49, 4, PROF_M_IOWAIT_NS);
	prof_switchpair_out(sp, 7, 7, 1, 50, false);
	prof_switchpair_in(sp, 7, 60);
	prof_switchpair_out(sp, 7, 7, 1, 100, false);	/* its sample (99) was dropped */
	prof_switchpair_in(sp, 7, 200);
	prof_switchpair_out(sp, 7, 7, 1, 300, true);	/* preempted, sample dropped too */
	prof_switchpair_in(sp, 7, 400);
	prof_switchpair_out(sp, 7, 7, 1, 500, false);
	prof_switchpair_in(sp, 7, 600);
	sample(sp, 7, 499, 6, PROF_M_SLEEP_NS);
	ok(ncharged == 4 && is(1, 100, 200, PROF_NONE, PROF_M_IOWAIT_NS),
	   "a lost sample: the time in full, as lost, in the thread's last voluntary state");
	ok(is(2, 300, 400, PROF_NONE, PROF_M_PREEMPT_NS), "a lost preempted one: preempted");
	ok(is(3, 500, 600, 6, PROF_M_SLEEP_NS), "the next sample finds its own interval");
	prof_switchpair_free(sp);

	sp = fresh();
	prof_switchpair_out(sp, 7, 7, 1, 100, false);
	prof_switchpair_in(sp, 7, 200);
	is_u64(ncharged, 0, "an interval waits while its sample may still come");
	prof_switchpair_finish(sp, 0);
	ok(ncharged == 1 && is(0, 100, 200, PROF_NONE, PROF_M_SLEEP_NS), "at the end it is charged as lost (sleep: none known)");
	prof_switchpair_free(sp);
}

/* The switch-in after 100 was dropped: that interval's end is unknown. */
static void test_lost_switch_in(void)
{
	struct prof_switchpair *sp = fresh();

	sample(sp, 7, 99, 5, PROF_M_IOWAIT_NS);
	prof_switchpair_out(sp, 7, 7, 1, 100, false);
	sample(sp, 7, 299, 6, PROF_M_SLEEP_NS);
	prof_switchpair_out(sp, 7, 7, 1, 300, false);
	prof_switchpair_in(sp, 7, 400);
	ok(ncharged == 1 && is(0, 300, 400, 6, PROF_M_SLEEP_NS),
	   "only the measured interval is charged, with its own sample, not the older one");
	prof_switchpair_finish(sp, 0);
	is_u64(ncharged, 1, "the unmeasured one never is");
	prof_switchpair_free(sp);
}

static void test_exit(void)
{
	struct prof_switchpair *sp = fresh();

	prof_switchpair_out(sp, 7, 7, 1, 100, false);
	prof_switchpair_in(sp, 7, 200);
	sample(sp, 7, 299, 6, PROF_M_SLEEP_NS);	/* its last switch-out, exiting */
	prof_switchpair_exit(sp, 7, 250);
	ok(ncharged == 1 && is(0, 100, 200, PROF_NONE, PROF_M_SLEEP_NS),
	   "EXIT settles the thread: an interval still waiting is charged as lost");
	sample(sp, 7, 299, 6, PROF_METRIC_COUNT);
	prof_switchpair_out(sp, 7, 7, 1, 300, false);
	prof_switchpair_in(sp, 7, 400);
	is_u64(ncharged, 1, "the exited thread's last switch-out opens nothing");
	sample(sp, 7, 499, 8, PROF_M_SLEEP_NS);
	prof_switchpair_out(sp, 7, 7, 1, 500, false);
	prof_switchpair_in(sp, 7, 600);
	ok(ncharged == 2 && is(1, 500, 600, 8, PROF_M_SLEEP_NS), "a new thread with the reused tid is paired again");
	prof_switchpair_free(sp);

	sp = fresh();	/* preempted after EXIT, then its last switch-out */
	prof_switchpair_out(sp, 7, 7, 1, 100, false);
	prof_switchpair_in(sp, 7, 200);
	prof_switchpair_exit(sp, 7, 250);
	prof_switchpair_out(sp, 7, 7, 1, 260, true);
	prof_switchpair_in(sp, 7, 270);
	sample(sp, 7, 299, 6, PROF_M_SLEEP_NS);
	prof_switchpair_out(sp, 7, 7, 1, 300, false);
	prof_switchpair_finish(sp, 1000);
	ok(ncharged == 1 && is(0, 100, 200, PROF_NONE, PROF_M_SLEEP_NS),
	   "an exiting thread preempted after EXIT: neither that nor its last switch-out is charged");
	prof_switchpair_free(sp);

	sp = fresh();
	sample(sp, 9, 99, 5, PROF_METRIC_COUNT);	/* prev_state X: exiting */
	prof_switchpair_out(sp, 9, 9, 1, 100, false);
	prof_switchpair_in(sp, 9, 200);
	is_u64(ncharged, 0, "an exiting thread's interval is not charged");
	prof_switchpair_free(sp);
}

/* Out on CPU 0, in on CPU 1, out on CPU 1, in on CPU 0: per-CPU rings
 * merged in time order, the samples' rings behind. */
static void test_migrating(void)
{
	struct prof_switchpair *sp = fresh();

	prof_switchpair_out(sp, 7, 7, 1, 100, false);	/* cpu 0 */
	prof_switchpair_out(sp, 8, 7, 2, 150, false);	/* another thread, cpu 1 */
	prof_switchpair_in(sp, 7, 200);			/* cpu 1 */
	prof_switchpair_out(sp, 7, 7, 1, 300, false);	/* cpu 1 */
	prof_switchpair_in(sp, 8, 320);			/* cpu 0 */
	prof_switchpair_in(sp, 7, 400);			/* cpu 0 */
	sample(sp, 8, 149, 9, PROF_M_SLEEP_NS);
	sample(sp, 7, 99, 5, PROF_M_SLEEP_NS);
	sample(sp, 7, 299, 6, PROF_M_IOWAIT_NS);
	ok(ncharged == 3 && is(0, 150, 320, 9, PROF_M_SLEEP_NS) && is(1, 100, 200, 5, PROF_M_SLEEP_NS) &&
	   is(2, 300, 400, 6, PROF_M_IOWAIT_NS), "threads are kept apart whatever CPU their records come from");
	is_u64(prof_switchpair_switches(sp), 6, "six switch records");
	prof_switchpair_free(sp);
}

static void test_restack(void)
{
	struct prof_switchpair *sp = fresh();

	struct prof_switch_sample b11 = { 101, 1, 11, PROF_NONE, PROF_M_SLEEP_NS };
	struct prof_switch_sample b12 = { 500, 1, 12, PROF_NONE, PROF_M_SLEEP_NS };

	sample(sp, 7, 99, 5, PROF_M_SLEEP_NS);
	ok(prof_switchpair_restack(sp, 7, 10, &b11), "a better stack of the same switch replaces it");
	ok(!prof_switchpair_restack(sp, 7, 10, &b12), "not one of another switch");
	prof_switchpair_out(sp, 7, 7, 1, 100, false);
	prof_switchpair_in(sp, 7, 200);
	ok(ncharged == 1 && is(0, 100, 200, 11, PROF_M_SLEEP_NS), "the interval gets the better stack");
	b12.time = 99;
	ok(!prof_switchpair_restack(sp, 7, 10, &b12), "nothing waits any more");
	prof_switchpair_free(sp);
}

/* Attached at 1000, ended at 5000 (prof_switchpair_begin, finish). */
static void test_window_edges(void)
{
	struct prof_switchpair *sp = fresh();

	prof_switchpair_begin(sp, 7, 7, 1, 1000);	/* asleep the whole window */
	prof_switchpair_begin(sp, 8, 7, 2, 1000);	/* asleep at the start, wakes at 1500 */
	prof_switchpair_begin(sp, 9, 7, 3, 1000);	/* running at the start */
	prof_switchpair_in(sp, 8, 1500);
	ok(ncharged == 1 && is(0, 1000, 1500, PROF_NONE, PROF_M_SLEEP_NS) && charged[0].edge == PROF_SWITCH_FROM_START,
	   "blocked when the window began: charged from its start to the switch-in, with no sample");
	sample(sp, 9, 1999, 6, PROF_M_SLEEP_NS);
	prof_switchpair_out(sp, 9, 7, 3, 2000, false);
	prof_switchpair_in(sp, 9, 2500);
	ok(ncharged == 2 && is(1, 2000, 2500, 6, PROF_M_SLEEP_NS) && charged[1].edge == 0,
	   "running when it began: nothing before its first switch-out");
	sample(sp, 8, 2999, 5, PROF_M_IOWAIT_NS);
	prof_switchpair_out(sp, 8, 7, 2, 3000, false);	/* still blocked at the end */
	prof_switchpair_finish(sp, 5000);
	ok(ncharged == 4, "two more at the end");
	for (size_t i = 2; i < 4 && ncharged == 4; i++) {
		if (charged[i].t_out == 1000)
			ok(is(i, 1000, 5000, PROF_NONE, PROF_M_SLEEP_NS) &&
			   charged[i].edge == (PROF_SWITCH_FROM_START | PROF_SWITCH_TO_END),
			   "never ran: the whole window");
		else
			ok(is(i, 3000, 5000, 5, PROF_M_IOWAIT_NS) && charged[i].edge == PROF_SWITCH_TO_END,
			   "off the CPU at the end: from its switch-out to the end, with its sample");
	}
	prof_switchpair_free(sp);

	sp = fresh();
	prof_switchpair_begin(sp, 7, 7, 1, 1000);
	prof_switchpair_out(sp, 7, 7, 1, 3000, false);
	prof_switchpair_finish(sp, 0);
	is_u64(ncharged, 0, "without an end (prof stat) nothing open is charged");
	prof_switchpair_free(sp);
}

int main(void)
{
	test_in_order();
	test_rings_out_of_order();
	test_lost_sample();
	test_lost_switch_in();
	test_exit();
	test_migrating();
	test_restack();
	test_window_edges();
	return done_testing();
}
