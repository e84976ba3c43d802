/*
 * top.c - unit tests for `prof top`'s view and screen (src/top/view.c,
 * screen.c) with synthetic samples: self/total with recursion, the sliding
 * window, per-process weights, the regex filter, callers, the keys, and
 * frames that fit any terminal (20x5 included) with hostile names cleaned.
 */
#include "tap.h"
#include "prof/options.h"
#include "prof/top.h"
#include <stdlib.h>

struct fixture {
	struct prof_profile p;
	uint32_t mod, t_a, t_b;	/* threads of pid 10 ("alpha") and pid 20 ("beta") */
	uint32_t f_main, f_work, f_hot, f_rec, f_other;
};

static uint32_t frame(struct fixture *x, const char *name)
{
	struct prof_frame f = { .func = prof_intern(&x->p, name), .module = x->mod };
	return prof_frame_intern(&x->p, &f);
}

static uint32_t stack(struct fixture *x, const uint32_t *outer_first, size_t n)
{
	uint32_t node = 0;

	for (size_t i = 0; i < n; i++)
		node = prof_node_child(&x->p, node, outer_first[i]);
	return node;
}

static void setup(struct fixture *x)
{
	prof_profile_init(&x->p);
	x->mod = prof_module_intern(&x->p, "/usr/bin/app", "", 0);
	x->t_a = prof_thread_intern(&x->p, 10, 10, "alpha");
	x->t_b = prof_thread_intern(&x->p, 20, 21, "beta");
	x->f_main = frame(x, "main");
	x->f_work = frame(x, "work");
	x->f_hot = frame(x, "hot_loop");
	x->f_rec = frame(x, "recurse");
	x->f_other = frame(x, "other");
}

static const struct prof_top_row *find(const struct prof_top_table *t, const struct prof_profile *p,
				       const char *name)
{
	for (size_t i = 0; i < t->rows.n; i++)
		if (!strcmp(prof_str(p, t->rows.v[i].func), name))
			return &t->rows.v[i];
	return NULL;
}

/* main>work>hot_loop x6 (pid 10), main>recurse>recurse x3 (pid 20), main>other x1 (pid 10) */
static struct prof_top_view *feed_standard(struct fixture *x, uint64_t t0)
{
	struct prof_top_view *v = prof_top_view_new(&x->p, 5000000000ULL);
	uint32_t hot[] = { x->f_main, x->f_work, x->f_hot };
	uint32_t rec[] = { x->f_main, x->f_rec, x->f_rec };
	uint32_t oth[] = { x->f_main, x->f_other };
	uint32_t n_hot = stack(x, hot, 3), n_rec = stack(x, rec, 3), n_oth = stack(x, oth, 2);

	for (int i = 0; i < 6; i++)
		prof_top_feed(v, t0 + (uint64_t)i * 1000, x->t_a, n_hot, 1);
	for (int i = 0; i < 3; i++)
		prof_top_feed(v, t0 + 10000 + (uint64_t)i, x->t_b, n_rec, 1);
	prof_top_feed(v, t0 + 20000, x->t_a, n_oth, 1);
	return v;
}

static void test_functions(void)
{
	struct fixture x;
	struct prof_top_table t = { 0 };

	setup(&x);
	struct prof_top_view *v = feed_standard(&x, 1000);
	prof_top_functions(v, PROF_TOP_BY_SELF, NULL, &t);
	is_u64(t.weight, 10, "window weight is every sample");
	is_str(prof_str(&x.p, t.rows.v[0].func), "hot_loop", "by self, the hottest leaf first");
	is_u64(find(&t, &x.p, "hot_loop")->self, 6, "hot_loop self");
	is_u64(find(&t, &x.p, "main")->total, 10, "main total: on every stack");
	is_u64(find(&t, &x.p, "main")->self, 0, "main self: never the leaf");
	is_u64(find(&t, &x.p, "recurse")->total, 3, "recursion counted once per stack");
	is_u64(find(&t, &x.p, "recurse")->self, 3, "recurse self");
	prof_top_functions(v, PROF_TOP_BY_TOTAL, NULL, &t);
	is_str(prof_str(&x.p, t.rows.v[0].func), "main", "by total, main first");
	ok(t.procs.n == 2 && t.procs.v[0].pid == 10 && t.procs.v[0].weight == 7 &&
		   !strcmp(prof_str(&x.p, t.procs.v[0].comm), "alpha") && t.procs.v[1].weight == 3,
	   "per-process weights, heaviest first, with names");

	regex_t re;
	regcomp(&re, "^(hot|oth)", REG_EXTENDED | REG_NOSUB);
	prof_top_functions(v, PROF_TOP_BY_SELF, &re, &t);
	ok(t.rows.n == 2 && find(&t, &x.p, "hot_loop") && find(&t, &x.p, "other"), "filter keeps matching rows");
	is_u64(t.weight, 10, "the filter leaves 100%% alone");
	regfree(&re);
	prof_top_table_free(&t);
	prof_top_view_free(v);
	prof_profile_free(&x.p);
}

static void test_window(void)
{
	struct fixture x;
	struct prof_top_table t = { 0 };
	uint32_t hot[] = { 0, 0, 0 };

	setup(&x);
	hot[0] = x.f_main, hot[1] = x.f_work, hot[2] = x.f_hot;
	struct prof_top_view *v = prof_top_view_new(&x.p, 1000);
	uint32_t n = stack(&x, hot, 3);
	for (uint64_t i = 0; i < 5000; i++)	/* 5000 ns of one sample per ns */
		prof_top_feed(v, 10000 + i, x.t_a, n, 2);
	prof_top_expire(v, 10000 + 5000);
	is_u64(prof_top_samples(v), 1000, "only the last window's samples stay");
	is_u64(prof_top_weight(v), 2000, "and their weight");
	prof_top_expire(v, 1000000);
	is_u64(prof_top_weight(v), 0, "all expire");
	prof_top_functions(v, PROF_TOP_BY_SELF, NULL, &t);
	is_u64(t.rows.n + t.procs.n, 0, "an empty window has no rows and no processes");
	/* churn: many short-lived pids must not accumulate in the view */
	for (uint32_t pid = 1000; pid < 21000; pid++) {
		uint32_t th = prof_thread_intern(&x.p, pid, pid, "short");
		prof_top_feed(v, 2000000 + pid, th, n, 1);
		prof_top_expire(v, 2000000 + pid);
	}
	prof_top_functions(v, PROF_TOP_BY_SELF, NULL, &t);
	ok(t.procs.n <= 1001, "20000 pids through a 1000 ns window: %zu in the table", t.procs.n);
	prof_top_table_free(&t);
	prof_top_view_free(v);
	prof_profile_free(&x.p);
}

static void test_callers(void)
{
	struct fixture x;
	struct prof_top_table t = { 0 };

	setup(&x);
	struct prof_top_view *v = feed_standard(&x, 1000);
	prof_top_callers(v, x.p.frames.v[x.f_hot].func, x.mod, &t);
	ok(t.callers && t.rows.n == 1 && !strcmp(prof_str(&x.p, t.rows.v[0].func), "work"),
	   "hot_loop's caller is work");
	is_u64(t.of.total, 6, "the callee's total");
	prof_top_callers(v, x.p.frames.v[x.f_rec].func, x.mod, &t);
	ok(t.rows.n == 1 && !strcmp(prof_str(&x.p, t.rows.v[0].func), "recurse"),
	   "recursion: the innermost occurrence's caller");
	prof_top_callers(v, x.p.frames.v[x.f_main].func, x.mod, &t);
	ok(t.rows.n == 1 && t.rows.v[0].module == PROF_NONE && t.rows.v[0].total == 10,
	   "main has no caller: one [no caller] row");
	prof_top_table_free(&t);
	prof_top_view_free(v);
	prof_profile_free(&x.p);
}

/* Every line of a terminal frame: count and width in columns (UTF-8 aware). */
static bool frame_fits(const char *s, int width, int height, int *lines_out)
{
	int lines = 1, cols = 0;

	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '\n') {
			lines++;
			cols = 0;
			continue;
		}
		if (*p < 0x20 || *p == 0x7f)
			return false;	/* no control byte may reach the terminal */
		if ((*p & 0xc0) != 0x80 && ++cols > width)
			return false;
	}
	*lines_out = lines;
	return lines == height;
}

static void test_render(void)
{
	struct fixture x;
	struct prof_top_table t = { 0 };
	struct prof_top_ui ui;
	struct prof_top_status st = { .lost = 3, .period_ns = 1000000, .span_ns = 1000000000,
				      .iowait_pct = 1.5, .target = "pid 10" };
	struct strbuf sb = STRBUF_INIT;
	static const int sizes[][2] = { { 80, 24 }, { 20, 5 }, { 1, 1 }, { 10, 2 }, { 200, 3 }, { 33, 7 } };
	int lines = 0;

	setup(&x);
	frame(&x, "evil\033[2J\x07name");
	uint32_t evil[] = { x.f_main, frame(&x, "evil\033[2J\x07name") };
	uint32_t uni[] = { x.f_main, frame(&x, "f\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9") };
	struct prof_top_view *v = feed_standard(&x, 1000);
	prof_top_feed(v, 30000, x.t_a, stack(&x, evil, 2), 1);
	prof_top_feed(v, 30001, x.t_a, stack(&x, uni, 2), 1);
	prof_top_ui_init(&ui);
	prof_top_table_for(v, &ui, &t);
	for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
		for (int editing = 0; editing < 2; editing++) {
			ui.editing = editing;
			snprintf(ui.input, sizeof(ui.input), "hot");
			sb_reset(&sb);
			prof_top_render(&x.p, &t, &st, &ui, sizes[i][0], sizes[i][1], 0, &sb);
			bool fits = frame_fits(sb_str(&sb), sizes[i][0], sizes[i][1], &lines);
			ok(fits,
			   "%dx%d%s: exactly the terminal's lines (%d), none wider, no control bytes",
			   sizes[i][0], sizes[i][1], editing ? " with the prompt" : "", lines);
			if (editing && sizes[i][1] <= 2)
				ok(strstr(sb_str(&sb), "filter") || sizes[i][0] < 6, "%dx%d: the prompt stays visible",
				   sizes[i][0], sizes[i][1]);
		}
	}
	ui.editing = false;
	sb_reset(&sb);
	int sel = prof_top_render(&x.p, &t, &st, &ui, 80, 24, 0, &sb);
	ok(strstr(sb_str(&sb), "hot_loop") && strstr(sb_str(&sb), "alpha(10)") && strstr(sb_str(&sb), "lost 3") &&
		   strstr(sb_str(&sb), "iowait 1.5%"),
	   "80x24 shows the hot function, the process, lost and iowait");
	ok(sel == 3, "the selection is the first row's line (%d)", sel);
	ok(strstr(sb_str(&sb), "evil?[2J?name") != NULL, "escape sequences in names are neutralized");
	ok(strstr(sb_str(&sb), " 60.00 ") || strstr(sb_str(&sb), "50.00"), "percentages of the window");

	sb_reset(&sb);
	prof_top_render(&x.p, &t, &st, &ui, 0, 0, 2, &sb);
	ok(strstr(sb_str(&sb), "hot_loop") && !strstr(sb_str(&sb), "q quit"), "--stdio: table without key help");
	int n = 1;
	for (const char *c = sb_str(&sb); *c; c++)
		n += *c == '\n';
	is_u64(n, 5, "--stdio: summary, processes, header and max_rows rows");

	st.offcpu = true;	/* --off-cpu: the weights are ns */
	st.period_ns = 1;
	sb_reset(&sb);
	prof_top_render(&x.p, &t, &st, &ui, 0, 0, 2, &sb);
	ok(strstr(sb_str(&sb), "pid 10  off-CPU ") && strstr(sb_str(&sb), "\noff-cpu:  alpha(10) ") &&
		   !strstr(sb_str(&sb), "samples"),
	   "--off-cpu: off-CPU seconds in the summary, off-cpu: per process");
	prof_top_ui_free(&ui);
	sb_release(&sb);
	prof_top_table_free(&t);
	prof_top_view_free(v);
	prof_profile_free(&x.p);
}

static void press(struct prof_top_ui *ui, const struct prof_top_view *v, struct prof_top_table *t,
		  const char *keys)
{
	for (const char *k = keys; *k; k++) {
		prof_top_key(ui, *k == '\n' ? PROF_TOP_KEY_ENTER : *k == 27 ? PROF_TOP_KEY_ESC : *k, t, 10);
		prof_top_table_for(v, ui, t);
	}
}

static void test_keys(void)
{
	struct fixture x;
	struct prof_top_table t = { 0 };
	struct prof_top_ui ui;

	setup(&x);
	struct prof_top_view *v = feed_standard(&x, 1000);
	prof_top_ui_init(&ui);
	prof_top_table_for(v, &ui, &t);
	press(&ui, v, &t, "t");
	is_str(prof_str(&x.p, t.rows.v[0].func), "main", "t sorts by total");
	press(&ui, v, &t, "s");
	is_str(prof_str(&x.p, t.rows.v[0].func), "hot_loop", "s sorts by self");
	press(&ui, v, &t, "/rec\n");
	ok(t.rows.n == 1 && !strcmp(prof_str(&x.p, t.rows.v[0].func), "recurse"), "/rec Enter filters");
	press(&ui, v, &t, "/\b\b\b\b\n");
	ok(t.rows.n == 5, "an emptied prompt clears the filter (%zu rows)", t.rows.n);
	press(&ui, v, &t, "/([\n");
	ok(ui.message[0] && t.rows.n == 5, "a bad regex is said and changes nothing: %s", ui.message);
	press(&ui, v, &t, "\n");
	ok(t.callers && !strcmp(prof_str(&x.p, t.of.func), "hot_loop"), "Enter shows the selected row's callers");
	press(&ui, v, &t, "\n");
	ok(t.callers && !strcmp(prof_str(&x.p, t.of.func), "work"), "Enter again: the caller's callers");
	press(&ui, v, &t, "\033\033");
	ok(!t.callers && ui.depth == 0, "Esc goes back to the functions");
	press(&ui, v, &t, "jjjjjjjjjjjjjjjjjjjj");
	is_u64(ui.selected, t.rows.n - 1, "the selection stops at the last row");
	press(&ui, v, &t, "p");
	ok(ui.paused, "p pauses");
	ok(prof_top_key(&ui, 'q', &t, 10) == PROF_TOP_QUIT, "q quits");
	prof_top_ui_free(&ui);
	prof_top_table_free(&t);
	prof_top_view_free(v);
	prof_profile_free(&x.p);
}

struct pid_vec { pid_t *v; size_t n, cap; };

static int add_pid(void *ctx, uint64_t id, const char *flag)
{
	struct pid_vec *l = ctx;

	(void)flag;
	VEC_PUSH(l, (pid_t)id);
	return 0;
}

/* The -C and -p lists of top and record. */
static void test_lists(void)
{
	int *cpus;
	struct pid_vec pids = { 0 };
	size_t n;

	ok(parse_cpu_list("0,2-3,2", &cpus, &n) == 0 && n == 3 && cpus[0] == 0 && cpus[1] == 2 && cpus[2] == 3,
	   "CPU list 0,2-3,2 is 0 2 3");
	free(cpus);
	ok(parse_cpu_list("3-1", &cpus, &n) < 0 && parse_cpu_list("", &cpus, &n) < 0 &&
		   parse_cpu_list("1,x", &cpus, &n) < 0 && parse_cpu_list("4096", &cpus, &n) < 0,
	   "bad CPU lists are refused");
	ok(opt_id_list("-p", "12,34", 1, 0x7fffffff, add_pid, &pids) == 0 && pids.n == 2 &&
		   pids.v[1] == 34, "pid list 12,34");
	ok(opt_id_list("-p", "12,0x,5", 1, 0x7fffffff, add_pid, &pids) < 0 && pids.n == 3,
	   "a bad pid ends the list");
	ok(opt_id_list("-p", ",", 1, 0x7fffffff, add_pid, &pids) < 0 &&
		   opt_id_list("-p", "0", 1, 0x7fffffff, add_pid, &pids) < 0 && pids.n == 3,
	   "no pid, pid 0: refused");
	VEC_FREE(&pids);
}

int main(void)
{
	test_lists();
	test_functions();
	test_window();
	test_callers();
	test_render();
	test_keys();
	return done_testing();
}
