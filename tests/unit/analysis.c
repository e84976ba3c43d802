/*
 * analysis.c - unit tests for src/analysis/: the t quantile, the per-function
 * comparison (CI, Mann-Whitney p, one-run honesty), verdicts, per-run costs
 * from a model profile (self, inclusive once per stack, inlined frames
 * folded into their caller), whole-side comparison with BH q-values and
 * normalization, the callgrind side (inclusive Ir, recursion rows) and the
 * crosscheck verdicts.
 */
#include "tap.h"
#include "prof/analysis.h"
#include <math.h>
#include <string.h>

static int near(double got, double want, double tol, const char *name)
{
	int r = ok(fabs(got - want) <= tol, "%s", name);
	if (!r)
		printf("#   got %g, want %g +- %g\n", got, want, tol);
	return r;
}

static void test_t_quantile(void)
{
	near(an_t_quantile(0.975, 1), 12.706, 0.01, "t(0.975, 1)");
	near(an_t_quantile(0.975, 2), 4.303, 0.01, "t(0.975, 2)");
	near(an_t_quantile(0.975, 4), 2.776, 0.01, "t(0.975, 4)");
	near(an_t_quantile(0.975, 10), 2.228, 0.005, "t(0.975, 10)");
	near(an_t_quantile(0.975, 1e9), 1.960, 0.001, "t(0.975, inf) is normal");
	near(an_t_quantile(0.025, 8), -2.306, 0.01, "lower tail is symmetric");
}

static void test_compare_values(void)
{
	struct an_opts o;
	struct an_result r = { 0 };
	const double a[] = { 1.00, 1.01, 0.99, 0.995, 1.02 };
	const double b[] = { 1.30, 1.31, 1.29, 1.32, 1.33 };
	const double c[] = { 1.01, 0.99, 1.00, 1.02, 1.00 };

	an_opts_init(&o);
	ok(an_compare_values(a, 0, b, 5, 100, 130, &o, &r) < 0, "no base runs: -EINVAL");
	an_compare_values(a, 5, b, 5, 1000, 1300, &o, &r);
	near(r.change, 6.55 / 5.015 - 1, 1e-9, "clear +30%: change of means");
	ok(r.lo > 0.25 && r.hi < 0.36, "clear +30%%: CI [%.3f, %.3f] is tight and excludes 0", r.lo, r.hi);
	near(r.p, 2.0 / 252, 1e-6, "complete separation of 5+5: exact Mann-Whitney p = 2/252");
	ok(!strcmp(r.p_method, "mann-whitney") && !r.noise_assumed, "rank test with 5+5 runs");
	r.tested = true;
	r.q = r.p;
	an_decide(&r, &o);
	is_str(an_verdict_name(r.verdict), "regression", "q < alpha, CI > 0, >= min effect: regression");

	memset(&r, 0, sizeof(r));
	an_compare_values(a, 5, c, 5, 1000, 1000, &o, &r);
	ok(r.lo < 0 && r.hi > 0 && r.p > 0.3, "A/A: CI [%.3f, %.3f] holds 0, p %.2f", r.lo, r.hi, r.p);
	r.tested = true;
	r.q = r.p;
	an_decide(&r, &o);
	is_str(an_verdict_name(r.verdict), "no-change", "A/A within +-3%%: no-change");

	/* one run per side: run-to-run noise is assumed, not pretended away */
	memset(&r, 0, sizeof(r));
	const double one_a[] = { 1.00 }, one_b[] = { 1.08 };
	an_compare_values(one_a, 1, one_b, 1, 100000, 108000, &o, &r);
	ok(r.noise_assumed && r.lo < 0 && r.hi > 0.15,
	   "1+1 runs, +8%% with 100k samples: CI [%.3f, %.3f] widened by the assumed CV", r.lo, r.hi);
	ok(strstr(r.p_method, "assumed") != NULL, "p method says the noise is assumed");
	r.tested = true;
	r.q = r.p;
	an_decide(&r, &o);
	is_str(an_verdict_name(r.verdict), "inconclusive", "1+1 runs, +8%%: inconclusive");
	ok(r.runs_needed >= 2, "runs needed given (%llu)", (unsigned long long)r.runs_needed);

	/* noisy 3+3: inconclusive with more runs needed than given */
	memset(&r, 0, sizeof(r));
	const double na[] = { 1.0, 1.2, 0.9 }, nb[] = { 1.1, 1.3, 1.0 };
	an_compare_values(na, 3, nb, 3, 1000, 1000, &o, &r);
	r.tested = true;
	r.q = r.p;
	an_decide(&r, &o);
	ok(r.verdict == AN_INCONCLUSIVE && r.runs_needed > 3,
	   "noisy 3+3: inconclusive, %llu runs/side needed", (unsigned long long)r.runs_needed);

	/* a function that only exists in head */
	memset(&r, 0, sizeof(r));
	const double z[] = { 0, 0, 0 }, nz[] = { 0.5, 0.5, 0.6 };
	an_compare_values(z, 3, nz, 3, 0, 50, &o, &r);
	ok(isfinite(r.change) && r.change > 10, "new function: finite, large change (%.0f)", r.change);
}

/* One run: hot (with an inlined helper) and steady under main; fib recursion. */
static void make_run(struct prof_profile *p, unsigned hot, unsigned steady)
{
	struct prof_frame f = { 0 };
	uint32_t mod, th, fr_main, fr_hot, fr_inl, fr_steady, fr_fib;

	prof_profile_init(p);
	p->period_ns = 1000000;
	mod = prof_module_intern(p, "/build/a/app", "", 0);
	th = prof_thread_intern(p, 1, 1, "app");
	f.module = mod;
	f.func = prof_intern(p, "main");
	fr_main = prof_frame_intern(p, &f);
	f.func = prof_intern(p, "hot");
	fr_hot = prof_frame_intern(p, &f);
	f.func = prof_intern(p, "helper");
	f.inlined = 1;
	fr_inl = prof_frame_intern(p, &f);
	f.inlined = 0;
	f.func = prof_intern(p, "steady");
	fr_steady = prof_frame_intern(p, &f);
	f.func = prof_intern(p, "fib");
	fr_fib = prof_frame_intern(p, &f);

	uint32_t s1[] = { fr_inl, fr_hot, fr_main };
	uint32_t s2[] = { fr_hot, fr_main };
	uint32_t s3[] = { fr_steady, fr_main };
	uint32_t s4[] = { fr_fib, fr_fib, fr_fib, fr_main };
	prof_add(p, th, prof_node_from_stack(p, s1, 3), PROF_M_SAMPLES, hot / 2);
	prof_add(p, th, prof_node_from_stack(p, s2, 2), PROF_M_SAMPLES, hot - hot / 2);
	prof_add(p, th, prof_node_from_stack(p, s3, 2), PROF_M_SAMPLES, steady);
	prof_add(p, th, prof_node_from_stack(p, s4, 4), PROF_M_SAMPLES, 10);
	for (size_t i = 0; i < p->aggs.n; i++)
		p->aggs.v[i].value[PROF_M_CPU_NS] = p->aggs.v[i].value[PROF_M_SAMPLES] * p->period_ns;
}

/* make_run(hot, steady) added to side as one more run. */
static void add_run(struct an_fnset *fs, struct an_side *side, const struct an_load_opts *lo,
		    unsigned hot, unsigned steady)
{
	struct prof_profile p;

	make_run(&p, hot, steady);
	an_side_add_profile(fs, side, &p, lo);
	prof_profile_free(&p);
}

static double cost_of(const struct an_fnset *fs, const struct an_run *r, const char *name, bool incl)
{
	uint32_t id = an_fn_find(fs, name, NULL);
	if (id == PROF_NONE || id >= r->fn.n)
		return -1;
	return incl ? r->fn.v[id].incl : r->fn.v[id].self;
}

static void test_side(void)
{
	struct an_fnset fs;
	struct an_side s = { 0 }, folded = { 0 };
	struct an_load_opts lo = { PROF_VIEW_CPU, false }, lf = { PROF_VIEW_CPU, true };
	struct prof_profile p;

	an_fnset_init(&fs);
	make_run(&p, 400, 200);
	ok(an_side_add_profile(&fs, &s, &p, &lo) == 0, "profile loads as a run");
	ok(an_side_add_profile(&fs, &folded, &p, &lf) == 0, "profile loads folded");
	prof_profile_free(&p);
	const struct an_run *r = &s.runs.v[0], *rf = &folded.runs.v[0];
	near(r->total, 0.610, 1e-9, "run total = samples x period");
	near(cost_of(&fs, r, "hot", false), 0.200, 1e-9, "hot self without folding");
	near(cost_of(&fs, r, "helper", false), 0.200, 1e-9, "inlined helper is its own function");
	near(cost_of(&fs, rf, "hot", false), 0.400, 1e-9, "folded: inlined samples go to hot");
	near(cost_of(&fs, rf, "helper", true), 0, 1e-9, "folded: helper gets nothing");
	near(cost_of(&fs, r, "main", true), 0.610, 1e-9, "main inclusive");
	near(cost_of(&fs, r, "fib", true), 0.010, 1e-9, "recursion counted once inclusive");
	near(r->fn.v[an_fn_find(&fs, "hot", "/other/dir/app")].incl, 0.400, 1e-9,
	     "functions are keyed by module basename");
	an_side_free(&s);
	an_side_free(&folded);
	an_fnset_free(&fs);
}

static void test_sides(void)
{
	struct an_fnset fs;
	struct an_side base = { 0 }, head = { 0 };
	struct an_load_opts lo = { PROF_VIEW_CPU, false };
	struct an_opts o;
	an_results res = { 0 };
	const unsigned hb[] = { 400, 404, 398, 401, 399 }, hh[] = { 560, 557, 563, 561, 558 };
	const unsigned st[] = { 200, 202, 199, 201, 200 }, st2[] = { 201, 199, 200, 202, 200 };

	an_fnset_init(&fs);
	for (int i = 0; i < 5; i++) {
		add_run(&fs, &base, &lo, hb[i], st[i]);
		add_run(&fs, &head, &lo, hh[i], st2[i]);
	}
	an_opts_init(&o);
	o.min_samples = 5;
	ok(an_compare_sides(&fs, &base, &head, &o, &res) == 0, "sides compare");
	ok(res.n > 0 && !strcmp(an_fn_name(&fs, res.v[0].fn), "hot") &&
	   res.v[0].verdict == AN_REGRESSION, "first row: hot, regression");
	for (size_t i = 0; i < res.n; i++) {
		if (!strcmp(an_fn_name(&fs, res.v[i].fn), "steady"))
			ok(res.v[i].verdict != AN_REGRESSION && res.v[i].q >= res.v[i].p,
			   "steady: %s, q %.3f >= p %.3f", an_verdict_name(res.v[i].verdict),
			   res.v[i].q, res.v[i].p);
		if (!strcmp(an_fn_name(&fs, res.v[i].fn), "fib"))
			ok(res.v[i].tested, "fib (10 samples) tested with --min-samples 5");
	}
	VEC_FREE(&res);

	o.normalize = AN_NORM_TOTAL;
	o.min_samples = 20;
	an_compare_sides(&fs, &base, &head, &o, &res);
	for (size_t i = 0; i < res.n; i++)
		if (!strcmp(an_fn_name(&fs, res.v[i].fn), "steady"))
			ok(res.v[i].verdict == AN_IMPROVEMENT,
			   "normalized by total: steady's share shrinks (improvement, %.1f%%)",
			   res.v[i].change * 100);
	VEC_FREE(&res);
	o.normalize = AN_NORM_FUNCTION;
	o.norm_fn = PROF_NONE;
	ok(an_compare_sides(&fs, &base, &head, &o, &res) < 0, "normalizing by a missing function fails");
	VEC_FREE(&res);
	an_side_free(&base);
	an_side_free(&head);
	an_fnset_free(&fs);
}

static const char *cg_text(unsigned hot_ir)
{
	static char buf[512];
	snprintf(buf, sizeof(buf),
		 "events: Ir D1mr\nob=/x/app\nfl=a.c\nfn=main\n1 10\ncfn=hot\ncalls=1 0\n1 %u 5\n"
		 "cfn=steady\ncalls=1 0\n1 500\ncfn=fib\ncalls=1 0\n1 60\n"
		 "fn=hot\n1 %u 5\nfn=steady\n1 500\nfn=fib\n1 5\ncfn=fib'2\ncalls=1 0\n1 55\n"
		 "fn=fib'2\n1 55\n", hot_ir, hot_ir);
	return buf;
}

static void test_crosscheck(void)
{
	struct an_fnset fs;
	struct an_cg_side cg = { 0 };
	struct cg_profile pb, ph;
	const char *t;

	prof_quiet = 1;
	an_fnset_init(&fs);
	cg_profile_init(&pb, 0);
	cg_profile_init(&ph, 0);
	t = cg_text(1000);
	ok(cg_parse_buffer(&pb, t, strlen(t), "base") == 0, "base callgrind parses");
	t = cg_text(1400);
	ok(cg_parse_buffer(&ph, t, strlen(t), "head") == 0, "head callgrind parses");
	ok(an_cg_add(&fs, &cg, &pb, NULL, false) == 0 && an_cg_add(&fs, &cg, &ph, NULL, true) == 0,
	   "both sides add");
	ok(an_cg_add(&fs, &cg, &pb, "nope", false) < 0, "unknown benchmark fails");
	uint32_t hot = an_fn_find(&fs, "hot", NULL), fib = an_fn_find(&fs, "fib", NULL);
	uint32_t main_fn = an_fn_find(&fs, "main", NULL);
	ok(hot != PROF_NONE && cg.fn.v[hot].base[0] == 1000 && cg.fn.v[hot].head[0] == 1400,
	   "hot inclusive Ir 1000 -> 1400");
	ok(fib != PROF_NONE && cg.fn.v[fib].base[0] == 60, "fib inclusive counts fib'2 once (60)");
	ok(an_fn_find(&fs, "fib'2", NULL) == PROF_NONE, "recursion rows are not functions");
	ok(main_fn != PROF_NONE && cg.fn.v[main_fn].base[0] == 1570, "main inclusive 1570");

	/* time side: hot +40% (confirmed), and again with flat time (artifact) */
	struct an_side base = { 0 }, head = { 0 }, flat = { 0 };
	struct an_load_opts lf = { PROF_VIEW_CPU, true };
	const unsigned hb[] = { 400, 404, 398, 401, 399 }, hh[] = { 560, 557, 563, 561, 558 };
	for (int i = 0; i < 5; i++) {
		add_run(&fs, &base, &lf, hb[i], 200);
		add_run(&fs, &head, &lf, hh[i], 200);
		add_run(&fs, &flat, &lf, hb[4 - i], 201);
	}
	struct an_opts o;
	an_xrows x = { 0 };
	an_opts_init(&o);
	ok(an_crosscheck(&fs, &cg, &base, &head, &o, 0.02, &x) == 0, "crosscheck runs");
	for (size_t i = 0; i < x.n; i++) {
		const char *n = an_fn_name(&fs, x.v[i].fn);
		if (!strcmp(n, "hot"))
			is_str(an_verdict_name(x.v[i].verdict), "confirmed", "hot +40%% Ir, +40%% time");
		if (!strcmp(n, "steady"))
			ok(x.v[i].verdict == AN_NO_CHANGE || x.v[i].verdict == AN_INCONCLUSIVE,
			   "steady: %s", an_verdict_name(x.v[i].verdict));
	}
	VEC_FREE(&x);
	an_crosscheck(&fs, &cg, &base, &flat, &o, 0.02, &x);
	for (size_t i = 0; i < x.n; i++)
		if (!strcmp(an_fn_name(&fs, x.v[i].fn), "hot"))
			is_str(an_verdict_name(x.v[i].verdict), "instructions-only",
			       "hot +40%% Ir, flat time");
	VEC_FREE(&x);
	an_side_free(&base);
	an_side_free(&head);
	an_side_free(&flat);
	an_cg_free(&cg);
	cg_profile_free(&pb);
	cg_profile_free(&ph);
	an_fnset_free(&fs);
}

static void test_time_only(void)
{
	struct an_fnset fs;
	struct an_cg_side cg = { 0 };
	struct cg_profile pb, ph;
	const char *tb = "events: Ir D1mr\nob=/x/app\nfl=a.c\nfn=main\n1 10\ncfn=hot\ncalls=1 0\n1 1000 5\n"
			 "fn=hot\n1 1000 5\nfn=steady\n1 500\n";
	const char *th = "events: Ir D1mr\nob=/x/app\nfl=a.c\nfn=main\n1 10\ncfn=hot\ncalls=1 0\n1 1000 900\n"
			 "fn=hot\n1 1000 900\nfn=steady\n1 500\n";

	an_fnset_init(&fs);
	cg_profile_init(&pb, 0);
	cg_profile_init(&ph, 0);
	cg_parse_buffer(&pb, tb, strlen(tb), "base");
	cg_parse_buffer(&ph, th, strlen(th), "head");
	an_cg_add(&fs, &cg, &pb, NULL, false);
	an_cg_add(&fs, &cg, &ph, NULL, true);
	struct an_side base = { 0 }, head = { 0 };
	struct an_load_opts lf = { PROF_VIEW_CPU, true };
	const unsigned hb[] = { 400, 404, 398, 401, 399 }, hh[] = { 560, 557, 563, 561, 558 };
	for (int i = 0; i < 5; i++) {
		add_run(&fs, &base, &lf, hb[i], 200);
		add_run(&fs, &head, &lf, hh[i], 200);
	}
	struct an_opts o;
	an_xrows x = { 0 };
	an_opts_init(&o);
	an_crosscheck(&fs, &cg, &base, &head, &o, 0.02, &x);
	for (size_t i = 0; i < x.n; i++)
		if (!strcmp(an_fn_name(&fs, x.v[i].fn), "hot")) {
			is_str(an_verdict_name(x.v[i].verdict), "time-only", "Ir flat, time +40%%");
			ok(strstr(x.v[i].moved, "D1mr +") != NULL, "notes name D1mr (%s)", x.v[i].moved);
		}
	VEC_FREE(&x);
	an_side_free(&base);
	an_side_free(&head);
	an_cg_free(&cg);
	cg_profile_free(&pb);
	cg_profile_free(&ph);
	an_fnset_free(&fs);
}

/* The callgrind join counts what a comparison would test: "rare", 2% of
 * the benchmark's Ir (~12 samples a run were production's mix the same) and
 * in no recording, is left out at --min-samples 20 and counted under the
 * 0.1% rule, which is also the fallback when no function is heavy enough. */
static void test_join_callgrind(void)
{
	const char *t = "events: Ir\nob=/x/app\nfl=a.c\nfn=main\n1 10\ncfn=hot\ncalls=1 0\n1 1000\n"
			"cfn=rare\ncalls=1 0\n1 20\nfn=hot\n1 1000\nfn=rare\n1 20\n";
	struct an_fnset fs;
	struct an_cg_side cg = { 0 };
	struct cg_profile pb;
	struct an_side base = { 0 }, head = { 0 };
	struct an_load_opts lf = { PROF_VIEW_CPU, true };
	struct an_join j;

	an_fnset_init(&fs);
	cg_profile_init(&pb, 0);
	ok(cg_parse_buffer(&pb, t, strlen(t), "base") == 0 && an_cg_add(&fs, &cg, &pb, NULL, false) == 0 &&
	   an_cg_add(&fs, &cg, &pb, NULL, true) == 0, "callgrind with a rare function loads");
	for (int i = 0; i < 5; i++) {
		add_run(&fs, &base, &lf, 400, 200);
		add_run(&fs, &head, &lf, 400, 200);
	}
	an_join_callgrind(&fs, &cg, &base, &head, 20, &j);
	ok(j.total == 2 && j.matched == 2 && strstr(j.what, "--min-samples"),
	   "--min-samples 20: hot and main counted, rare not (%zu of %zu)", j.matched, j.total);
	an_join_free(&j);
	an_join_callgrind(&fs, &cg, &base, &head, 0, &j);
	ok(j.total == 3 && j.matched == 2 && j.unmatched.n == 1 &&
	   !strcmp(an_fn_name(&fs, j.unmatched.v[0]), "rare"), "0.1%% rule: rare unmatched");
	an_join_free(&j);
	an_join_callgrind(&fs, &cg, &base, &head, 1e9, &j);
	ok(j.total == 3 && j.matched == 2 && strstr(j.what, "0.1% of Ir"),
	   "none heavy enough: the 0.1%% rule decides");
	an_join_free(&j);
	an_side_free(&base);
	an_side_free(&head);
	an_cg_free(&cg);
	cg_profile_free(&pb);
	an_fnset_free(&fs);
}

/* A real valgrind-codspeed file: one part per benchmark. */
static void test_codspeed_fixture(void)
{
	struct an_fnset fs;
	struct an_cg_side cg = { 0 };
	struct cg_profile p;

	an_fnset_init(&fs);
	cg_profile_init(&p, 0);
	if (cg_load_file(&p, "tests/data/callgrind/harness-codspeed.callgrind") < 0) {
		ok(0, "codspeed fixture loads");
		return;
	}
	ok(an_cg_add(&fs, &cg, &p, "harness.c::bench_fib", false) == 0, "benchmark part selected");
	uint32_t fib = an_fn_find(&fs, "fib", NULL), run = an_fn_find(&fs, "run", NULL);
	ok(fib != PROF_NONE && cg.fn.v[fib].base[0] == 579899, "fib inclusive Ir as annotate says");
	ok(run != PROF_NONE && cg.fn.v[run].base[0] == 579911, "run inclusive Ir");
	ok(an_fn_find(&fs, "count_words.constprop.0", NULL) == PROF_NONE,
	   "other benchmarks' functions are not in this part");
	an_cg_free(&cg);
	cg_profile_free(&p);
	an_fnset_free(&fs);
}

int main(void)
{
	test_t_quantile();
	test_compare_values();
	test_side();
	test_sides();
	test_crosscheck();
	test_time_only();
	test_join_callgrind();
	test_codspeed_fixture();
	return done_testing();
}
