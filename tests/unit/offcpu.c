/*
 * offcpu.c - unit tests for the resource side of `prof record`: the
 * classification of a blocked interval from prev_state and the kernel
 * stack, the list of I/O-wait kernel functions, the /proc parsers the
 * sampler uses, and the prof.data round trip of RESOURCES and TIMELINE
 * records (a later RESOURCES record replaces the earlier one).  And the
 * sampled mode's estimator on synthetic intervals against their exact
 * answer: the stale rule's replay, the weighted shares, their mean over
 * many runs (unbiased), and a test that a wrong weighting fails.
 */
#include "tap.h"
#include "prof/data.h"
#include "prof/offcpu.h"
#include "prof/resource.h"
#include "prof/proc.h"
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

static void test_classify(void)
{
	is_u64(prof_offcpu_classify(0x0, false), PROF_M_PREEMPT_NS, "R: preempted");
	is_u64(prof_offcpu_classify(0x100, false), PROF_M_PREEMPT_NS, "R+ (TASK_REPORT_MAX): preempted");
	is_u64(prof_offcpu_classify(0x1, true), PROF_M_SLEEP_NS, "S: sleep, even over an I/O stack");
	is_u64(prof_offcpu_classify(0x2, true), PROF_M_IOWAIT_NS, "D in io_schedule: I/O wait");
	is_u64(prof_offcpu_classify(0x2, false), PROF_M_UNINT_NS, "D elsewhere: other uninterruptible");
	is_u64(prof_offcpu_classify(0x80, false), PROF_M_SLEEP_NS, "I (idle): sleep");
	is_u64(prof_offcpu_classify(0x10, false), PROF_METRIC_COUNT, "X: exiting, not charged");
	is_u64(prof_offcpu_classify(0x20, false), PROF_METRIC_COUNT, "Z: exiting, not charged");
}

static void test_io_functions(void)
{
	const char *io[] = { "io_schedule", "io_schedule_timeout", "folio_wait_bit_common",
			     "wait_on_page_bit", "bit_wait_io", "blk_mq_get_tag",
			     "jbd2_log_wait_commit", "ext4_sync_file", "submit_bio_wait" };
	const char *not_io[] = { "schedule", "__schedule", "futex_wait", "do_nanosleep",
				 "ext4_buffered_write_iter", "pipe_read", "" };

	for (size_t i = 0; i < ARRAY_SIZE(io); i++)
		ok(prof_offcpu_is_io_function(io[i]), "%s is an I/O wait", io[i]);
	for (size_t i = 0; i < ARRAY_SIZE(not_io); i++)
		ok(!prof_offcpu_is_io_function(not_io[i]), "'%s' is not", not_io[i]);
}

static void test_proc_parsers(void)
{
	const char *stat = "42 (a b) c) S 1 42 42 0 -1 4194304 123 0 7 0 55 66 0 0 20 0 1 0 "
			   "100 2000000 512 18446744073709551615";
	const char *status = "Name:\tx\nVmHWM:\t  204800 kB\nVmRSS:\t    1024 kB\n"
			     "voluntary_ctxt_switches:\t17\nnonvoluntary_ctxt_switches:\t3\n";
	uint64_t v = 0;

	ok(prof_proc_parse_stat_field(stat, 10, &v) == 0 && v == 123, "stat: minflt (comm with ') ')");
	ok(prof_proc_parse_stat_field(stat, 12, &v) == 0 && v == 7, "stat: majflt");
	ok(prof_proc_parse_stat_field(stat, 14, &v) == 0 && v == 55, "stat: utime");
	ok(prof_proc_parse_stat_field(stat, 15, &v) == 0 && v == 66, "stat: stime");
	ok(prof_proc_parse_stat_field(stat, 24, &v) == 0 && v == 512, "stat: rss pages");
	ok(prof_proc_parse_stat_field(stat, 99, &v) < 0, "stat: missing field is -EINVAL");
	ok(prof_proc_parse_keyed(status, "\nVmHWM:", &v) == 0 && v == 204800, "status: VmHWM kB");
	ok(prof_proc_parse_keyed(status, "\nvoluntary_ctxt_switches:", &v) == 0 && v == 17,
	   "status: voluntary switches (not matched inside nonvoluntary)");
	ok(prof_proc_parse_keyed(status, "\nVmSwap:", &v) < 0, "status: missing key is -EINVAL");
}

static void test_roundtrip(void)
{
	char path[] = "/tmp/prof-offcpu-test.XXXXXX";
	struct prof_profile p, q;
	struct prof_writer *w;
	struct prof_read_info info;
	int fd = mkstemp(path);

	close(fd);
	unlink(path);
	prof_profile_init(&p);
	prof_profile_init(&q);
	ok(prof_writer_open(&w, path) == 0, "writer opens");
	struct prof_resources r = { .pid = 10, .tid = 0, .user_ns = 1, .sys_ns = 2, .vol_cs = 3,
				    .invol_cs = 4, .minflt = 5, .majflt = 6, .rss_peak_bytes = 7 << 20,
				    .io_read_bytes = 8, .io_write_bytes = 9 };
	prof_resources_set(&p, &r);
	VEC_PUSH(&p.timeline, ((struct prof_timeline_sample){ 1000, 10, 4096, 5000, 250 }));
	prof_writer_flush(w, &p);
	r.user_ns = 100;	/* changed: must be re-emitted and win */
	prof_resources_set(&p, &r);
	r.tid = 11;
	prof_resources_set(&p, &r);
	VEC_PUSH(&p.timeline, ((struct prof_timeline_sample){ 2000, 10, 8192, 10000, 0 }));
	ok(prof_writer_close(w, &p) == 0, "writer closes");
	ok(prof_data_read(path, &q, &info) == 0 && info.complete, "reads back");
	is_u64(q.resources.n, 2, "two (pid, tid) entries");
	const struct prof_resources *g = prof_resources_get(&q, 10, 0);
	ok(g && g->user_ns == 100 && g->rss_peak_bytes == (7u << 20) && g->io_write_bytes == 9,
	   "the later RESOURCES record replaced the earlier");
	is_u64(q.timeline.n, 2, "two timeline points");
	ok(q.timeline.n == 2 && q.timeline.v[0].cpu_pct_x100 == 5000 &&
	   q.timeline.v[0].io_wait_pct_x100 == 250 && q.timeline.v[1].rss_bytes == 8192,
	   "timeline fields survive");
	unlink(path);
	prof_profile_free(&p);
	prof_profile_free(&q);
}


/* --- the estimator on synthetic intervals -------------------------------------- */

#define EST_SITES 4
#define EST_TAU 20000000ULL	/* the recorder's OFFCPU_STALE_NS */
#define EST_PERIOD 61

static uint64_t rng_state = 0x2545f4914f6cdd1dULL;

static uint64_t rng(void)	/* xorshift64* */
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

static double uniform(void)
{
	return ((double)(rng() >> 11) + 0.5) / 9007199254740992.0;
}

static uint64_t exp_ns(double mean)
{
	return (uint64_t)(-mean * log(uniform())) + 1;
}

struct est_run {
	double err[EST_SITES];		/* estimated share - exact share (points), sleep class */
	double ht_err[EST_SITES];	/* sum of weight x ns at the site - its exact ns (points) */
	double naive_err[EST_SITES];	/* the same with every kept sample weighing 1 */
	double cv2, rel;			/* prof_offcpu_cv2 of the sleep class; its weighted total / exact */
	bool replay_ok, totals_ok;
	size_t kept;
};

/* Points of the sleep class's exact time. */
static double points(double v, uint64_t total)
{
	return 100.0 * v / (double)total;
}

/*
 * One thread for `seconds` of intervals (one window): a switch-out every ~50 us of CPU, into
 * sites A B A C (naps of 100/300/100/200 us, exponential), and with
 * `long_site` every 16th into D (8 ms) instead: the interval after a long
 * one is likelier to be the first 20 ms past the last stale keep, so the
 * stale rule over-samples what follows D.  1 switch-out in 5 is a
 * preemption (class 0, 1 ms).  The kernel side (the filter's rules) is
 * simulated here independently; the weights come from
 * prof_offcpu_stale_replay, the shares from prof_offcpu_share, as the
 * recorder does per thread, window and class.
 */
static void est_one_run(struct est_run *r, bool long_site, unsigned seconds)
{
	static const double mean_ns[EST_SITES] = { 100e3, 300e3, 200e3, 8e6 };
	static const int pattern[] = { 0, 1, 0, 2 };
	struct prof_offcpu_stale replay = { { 0 }, 0 };
	uint64_t k_last[2] = { 0 }, exact[2] = { 0 }, site_exact[EST_SITES] = { 0 }, t = 1000000;
	double ht[EST_SITES] = { 0 };
	bool k_seen[2] = { false, false };
	VEC(struct prof_offcpu_part) parts[2] = { { 0 }, { 0 } }, naive = { 0 };

	r->replay_ok = true;
	r->kept = 0;
	for (unsigned i = 0; t < 1000000 + seconds * 1000000000ULL; i++) {
		t += exp_ns(50e3);	/* on the CPU */
		int cls = rng() % 5 == 0 ? 0 : 1;
		int site = cls == 0 ? EST_SITES : long_site && i % 16 == 15 ? 3 : pattern[i % 4];
		uint64_t ns = cls == 0 ? exp_ns(1e6) : exp_ns(mean_ns[site]);
		/* the filter: stale per class, else 1 in EST_PERIOD */
		bool stale = !k_seen[cls] || t - k_last[cls] >= EST_TAU;
		bool kept = stale || rng() % EST_PERIOD == 0;
		if (stale) {
			k_seen[cls] = true;
			k_last[cls] = t;
		}
		exact[cls] += ns;
		if (cls)
			site_exact[site] += ns;
		if (!kept) {
			t += ns;
			continue;
		}
		bool replayed = prof_offcpu_stale_replay(&replay, t, cls, EST_TAU);
		r->replay_ok &= replayed == stale;
		struct prof_offcpu_part x = { .t_out = t, .ns = ns, .node = (uint32_t)site,
					      .weight = replayed ? 1 : EST_PERIOD };
		VEC_PUSH(&parts[cls], x);
		if (cls) {
			ht[site] += (double)x.weight * (double)ns;
			x.weight = 1;
			VEC_PUSH(&naive, x);
		}
		r->kept++;
		t += ns;
	}
	r->cv2 = prof_offcpu_cv2(parts[1].v, parts[1].n);
	r->rel = (ht[0] + ht[1] + ht[2] + ht[3]) / (double)exact[1];
	r->totals_ok = true;
	for (int c = 0; c < 2; c++) {
		uint64_t sum = 0;
		prof_offcpu_share(exact[c], parts[c].v, parts[c].n);
		for (size_t i = 0; i < parts[c].n; i++)
			sum += parts[c].v[i].share;
		r->totals_ok &= sum == exact[c];
	}
	for (int k = 0; k < EST_SITES; k++) {
		double got = 0, got_naive = 0, kept_ns = 0;
		for (size_t i = 0; i < parts[1].n; i++)
			got += parts[1].v[i].node == (uint32_t)k ? (double)parts[1].v[i].share : 0;
		for (size_t i = 0; i < naive.n; i++) {
			got_naive += naive.v[i].node == (uint32_t)k ? (double)naive.v[i].ns : 0;
			kept_ns += (double)naive.v[i].ns;
		}
		r->err[k] = points(got - (double)site_exact[k], exact[1]);
		r->ht_err[k] = points(ht[k] - (double)site_exact[k], exact[1]);
		/* every kept sample weighing 1: each site's kept ns scaled to the total */
		r->naive_err[k] = points(got_naive * (double)exact[1] / kept_ns - (double)site_exact[k], exact[1]);
	}
	VEC_FREE(&parts[0]);
	VEC_FREE(&parts[1]);
	VEC_FREE(&naive);
}

/* Mean and standard error of the mean of RUNS values. */
struct est_moments {
	double sum, sq;
};

static void est_moments_add(struct est_moments *m, double v)
{
	m->sum += v;
	m->sq += v * v;
}

static double est_mean(const struct est_moments *m, int runs)
{
	return m->sum / runs;
}

static double est_se(const struct est_moments *m, int runs)
{
	double mean = m->sum / runs;
	return sqrt((m->sq / runs - mean * mean) / (runs - 1));
}

/*
 * The skewed workload over 10-s windows, which the recorder's window
 * becomes while prof_offcpu_cv2 is above its bound (0.01; here ~0.3 after
 * 1 s): the long site's share is then within 5 points of exact on
 * average (measured -2.4, standard error 0.6: 4.4 standard errors from
 * the bound, a false-failure chance of ~5e-6), and prof_offcpu_cv2
 * averages within a factor of 2 of the weighted total's relative variance
 * across the runs (both estimate the same; each is off by ~10% at 300
 * runs, so a factor of 2 is ~7 standard errors away).
 */
static void test_long_window(void)
{
	enum { RUNS = 300 };
	struct est_moments d = { 0 }, cv2 = { 0 }, rel = { 0 };

	for (int i = 0; i < RUNS; i++) {
		struct est_run r;
		est_one_run(&r, true, 10);
		est_moments_add(&d, r.err[3]);
		est_moments_add(&cv2, r.cv2);
		est_moments_add(&rel, r.rel);
	}
	double var = est_se(&rel, RUNS) * est_se(&rel, RUNS) * RUNS;
	ok(fabs(est_mean(&d, RUNS)) <= 5, "with D, 10-s windows: D's share %+.2f points off on average (standard error %.2f)",
	   est_mean(&d, RUNS), est_se(&d, RUNS));
	ok(est_mean(&cv2, RUNS) >= var / 2 && est_mean(&cv2, RUNS) <= var * 2,
	   "prof_offcpu_cv2 %.4f on average, the weighted totals' relative variance %.4f", est_mean(&cv2, RUNS), var);
}

/*
 * RUNS runs of each workload: every replayed decision is the filter's,
 * every class total exact.  A mean over the runs is judged within 4.5 of
 * its standard errors (from the runs' own spread) of 0: an unbiased
 * estimate fails that with chance 6.8e-6 (normal tails of a mean of 300),
 * 5.4e-5 for the eight checks; the seed is fixed, so this run is one draw
 * of that chance, the same every time.
 *  - Without the long site: the shares themselves (the ratio estimator,
 *    ~100 samples a run: its O(1/n) bias is far below the margin).
 *  - With it: the weighted totals per site (Horvitz-Thompson: unbiased
 *    whatever the workload, the stale rule's choices included), and the
 *    same with every kept sample weighing 1 must fail (the test can see
 *    a wrong weighting).  The shares' own mean error is printed: with ~1
 *    random sample of the long site a window, the ratio to the exact
 *    total is biased (docs/offcpu.md).
 */
static void test_estimator(void)
{
	enum { RUNS = 300 };
	struct est_moments share[EST_SITES] = { { 0 } }, ht[EST_SITES] = { { 0 } }, naive[EST_SITES] = { { 0 } },
			   skew[EST_SITES] = { { 0 } };
	bool replay_ok = true, totals_ok = true, naive_biased = false;
	size_t kept = 0;

	for (int i = 0; i < 2 * RUNS; i++) {
		struct est_run r;
		bool long_site = i >= RUNS;
		est_one_run(&r, long_site, 1);
		replay_ok &= r.replay_ok;
		totals_ok &= r.totals_ok;
		kept += r.kept;
		for (int k = 0; k < EST_SITES; k++) {
			est_moments_add(long_site ? &skew[k] : &share[k], r.err[k]);
			if (long_site) {
				est_moments_add(&ht[k], r.ht_err[k]);
				est_moments_add(&naive[k], r.naive_err[k]);
			}
		}
	}
	ok(replay_ok, "the replayed stale rule is the filter's, at every kept sample");
	ok(totals_ok, "each class's shares sum to its exact time");
	printf("# %.0f kept samples a run\n", (double)kept / (2 * RUNS));
	for (int k = 0; k < 3; k++)
		ok(fabs(est_mean(&share[k], RUNS)) <= 4.5 * est_se(&share[k], RUNS),
		   "A B A C, site %d: mean error of its share %+.3f points, standard error %.3f (one run's %.2f)", k,
		   est_mean(&share[k], RUNS), est_se(&share[k], RUNS), est_se(&share[k], RUNS) * sqrt(RUNS));
	for (int k = 0; k < EST_SITES; k++) {
		ok(fabs(est_mean(&ht[k], RUNS)) <= 4.5 * est_se(&ht[k], RUNS),
		   "with D, site %d: mean error of its weighted total %+.3f points, standard error %.3f", k,
		   est_mean(&ht[k], RUNS), est_se(&ht[k], RUNS));
		naive_biased |= fabs(est_mean(&naive[k], RUNS)) > 4.5 * est_se(&naive[k], RUNS);
		printf("# with D, site %d: mean error of its share %+.2f points (standard error %.2f)\n", k,
		       est_mean(&skew[k], RUNS), est_se(&skew[k], RUNS));
	}
	ok(naive_biased, "weighing every kept sample 1 is biased: the test would see it");
	test_long_window();
}

int main(void)
{
	test_classify();
	test_io_functions();
	test_proc_parsers();
	test_roundtrip();
	test_estimator();
	return done_testing();
}
