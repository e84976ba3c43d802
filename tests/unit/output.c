/*
 * output.c - unit tests for the report renderers on a small hand-built
 * profile with known answers: flat self/total (recursion counted once),
 * tree shape, folded lines with _[i]/_[k], filters, sort, percent-limit,
 * metrics, and escaping of hostile symbol names.  The profile goes through
 * the prof.data writer and reader first, so this is also a round trip.
 *
 *   output.t --write FILE   writes the fixture for tests/t2000-report-*.sh
 */
#include "tap.h"
#include "prof/data.h"
#include "prof/output.h"
#include <errno.h>
#include <unistd.h>

#define EVIL_IMG "<img src=x onerror=alert(1)>"
#define EVIL_QUOTE "q\"uo\\te\nnl"

static uint32_t frame(struct prof_profile *p, const char *name, uint32_t mod, int kind,
		      int inlined, unsigned line)
{
	struct prof_frame f = {
		.func = prof_intern(p, name), .file = prof_intern(p, "/src/app.c"),
		.line = line, .module = mod, .addr = 0x1000 + line, .kind = (uint8_t)kind,
		.inlined = (uint8_t)inlined,
	};
	return prof_frame_intern(p, &f);
}

static void add_stack(struct prof_profile *p, struct prof_writer *w, uint32_t thread,
		      const uint32_t *frames, size_t n, enum prof_metric m, uint64_t count,
		      uint64_t value)
{
	uint32_t node = prof_node_from_stack(p, frames, n);

	for (uint64_t i = 0; i < count; i++) {
		prof_writer_sample(w, 1000000 * (p->samples + 1), thread, node, m, value, 0);
		if (m == PROF_M_SAMPLES)
			p->samples++;
	}
}

/*
 * cpu: app;main;work 60, app;main;work;helper_[i] 20,
 *      worker;main;rec;rec;rec 10 (pid 1 tid 2), other;main;work;kfn_[k] 10 (pid 2)
 * off-cpu: app;main;work 1 ms (io-wait), app;main;EVIL_IMG;EVIL_QUOTE 3 ms (sleep)
 */
static int write_fixture(const char *path)
{
	struct prof_profile p;
	struct prof_writer *w;
	int ret;

	unlink(path);
	if ((ret = prof_writer_open(&w, path)))
		return ret;
	prof_profile_init(&p);
	uint32_t app = prof_module_intern(&p, "/opt/bin/app", "abc", 0);
	uint32_t kern = prof_module_intern(&p, "[kernel.kallsyms]", "", PROF_MOD_KERNEL);
	uint32_t fmain = frame(&p, "main", app, PROF_FRAME_USER, 0, 5);
	uint32_t fwork = frame(&p, "work", app, PROF_FRAME_USER, 0, 10);
	uint32_t fwork2 = frame(&p, "work", app, PROF_FRAME_USER, 0, 11);
	uint32_t fhelp = frame(&p, "helper", app, PROF_FRAME_USER, 1, 20);
	uint32_t frec = frame(&p, "rec", app, PROF_FRAME_USER, 0, 30);
	uint32_t fk = frame(&p, "kfn", kern, PROF_FRAME_KERNEL, 0, 0);
	uint32_t fimg = frame(&p, EVIL_IMG, app, PROF_FRAME_USER, 0, 40);
	uint32_t fq = frame(&p, EVIL_QUOTE, app, PROF_FRAME_USER, 0, 41);
	uint32_t ta = prof_thread_intern(&p, 1, 1, "app");
	uint32_t tb = prof_thread_intern(&p, 1, 2, "worker");
	uint32_t tc = prof_thread_intern(&p, 2, 2, "other");
	prof_meta_set(&p, "event", "cpu-clock");
	prof_meta_set(&p, "frequency", "999");
	prof_meta_set(&p, "command", "./app --x");
	p.period_ns = 1000000;
	p.start_ns = 1000000;

	uint32_t s1[] = { fwork, fmain }, s1b[] = { fwork2, fmain };
	uint32_t s2[] = { fhelp, fwork, fmain }, s3[] = { frec, frec, frec, fmain };
	uint32_t s4[] = { fk, fwork, fmain }, s5[] = { fq, fimg, fmain };
	add_stack(&p, w, ta, s1, 2, PROF_M_SAMPLES, 50, 1);
	add_stack(&p, w, ta, s1b, 2, PROF_M_SAMPLES, 10, 1);	/* other line, same function */
	add_stack(&p, w, ta, s2, 3, PROF_M_SAMPLES, 20, 1);
	prof_writer_flush(w, &p);
	add_stack(&p, w, tb, s3, 4, PROF_M_SAMPLES, 10, 1);
	add_stack(&p, w, tc, s4, 3, PROF_M_SAMPLES, 10, 1);
	add_stack(&p, w, ta, s1, 2, PROF_M_OFFCPU_NS, 1, 1000000);
	add_stack(&p, w, ta, s1, 2, PROF_M_IOWAIT_NS, 1, 1000000);
	add_stack(&p, w, ta, s5, 3, PROF_M_OFFCPU_NS, 1, 3000000);
	add_stack(&p, w, ta, s5, 3, PROF_M_SLEEP_NS, 1, 3000000);
	p.end_ns = 101000000;
	ret = prof_writer_close(w, &p);
	prof_profile_free(&p);
	return ret;
}

static char *render(const struct prof_profile *p, const struct prof_view *v,
		    int (*fn)(FILE *, const struct prof_profile *, const struct prof_view *))
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (fn(f, p, v))
		ok(0, "renderer failed");
	fclose(f);
	return buf;
}

static void check_contains(const char *hay, const char *needle, const char *what)
{
	if (!ok(strstr(hay, needle) != NULL, "%s", what))
		printf("#   missing '%s' in:\n%s", needle, hay);
}

static const struct prof_fn_row *row(const struct prof_profile *p,
				     const struct prof_fn_table *t, const char *name)
{
	for (size_t i = 0; i < t->rows.n; i++)
		if (!strcmp(prof_str(p, t->rows.v[i].func), name))
			return &t->rows.v[i];
	return NULL;
}

static void test_fn_table(const struct prof_profile *p)
{
	struct prof_view v;
	struct prof_fn_table t;

	prof_view_init(&v);
	prof_output_fn_table_build(p, &v, &t);
	is_u64(t.grand_total, 100, "grand total = cpu samples");
	is_u64(t.rows.n, 5, "five functions with cpu samples");
	is_str(prof_str(p, t.rows.v[0].func), "work", "work first by self");
	is_u64(t.rows.v[0].self, 60, "work self merges its two lines");
	is_u64(t.rows.v[0].total, 90, "work total");
	is_u64(row(p, &t, "rec")->total, 10, "recursion counted once in total");
	is_u64(row(p, &t, "rec")->self, 10, "rec self");
	is_u64(row(p, &t, "main")->total, 100, "main total");
	is_str(prof_str(p, t.rows.v[t.rows.n - 1].func), "main", "main last by self");
	prof_output_fn_table_free(&t);

	v.sort = PROF_SORT_TOTAL;
	prof_output_fn_table_build(p, &v, &t);
	is_str(prof_str(p, t.rows.v[0].func), "main", "--sort total puts main first");
	prof_output_fn_table_free(&t);

	/* ids: up to two per list, 0 ends it (no fixture thread has id 0) */
	struct { uint32_t pid[2], tid[2]; const char *comm, *dso; uint64_t want; const char *what; } f[] = {
		{ { 2 }, { 0 }, NULL, NULL, 10, "--pid 2" },
		{ { 0 }, { 2 }, NULL, NULL, 20, "--tid 2 (two processes)" },
		{ { 0 }, { 0 }, "worker", NULL, 10, "--comm worker" },
		{ { 0 }, { 0 }, NULL, "[kernel.kallsyms]", 10, "--dso kernel" },
		{ { 0 }, { 0 }, NULL, "app", 90, "--dso app (basename)" },
		{ { 0 }, { 0 }, NULL, "/opt/bin/app", 90, "--dso /opt/bin/app (path)" },
		{ { 1 }, { 1 }, "app", "app", 80, "combined filters" },
		{ { 1, 2 }, { 0 }, NULL, NULL, 100, "--pid 1,2 (a list)" },
		{ { 0 }, { 0 }, "worker,app", NULL, 90, "--comm worker,app (a list)" },
		{ { 0 }, { 0 }, "work", NULL, 0, "--comm work: a list item is a whole name" },
		{ { 0 }, { 0 }, NULL, "app,[kernel.kallsyms]", 100, "--dso app,[kernel.kallsyms]" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(f); i++) {
		prof_view_init(&v);
		for (size_t k = 0; k < 2 && f[i].pid[k]; k++)
			v.pids[v.npids++] = f[i].pid[k];
		for (size_t k = 0; k < 2 && f[i].tid[k]; k++)
			v.tids[v.ntids++] = f[i].tid[k];
		v.comm = f[i].comm;
		v.dso = f[i].dso;
		prof_output_fn_table_build(p, &v, &t);
		is_u64(t.grand_total, f[i].want, "filter %s", f[i].what);
		prof_output_fn_table_free(&t);
	}

	/* perf's --percentage: absolute divides by the whole recording */
	prof_view_init(&v);
	v.comm = "worker";
	is_u64(prof_view_percent_base(p, &v, 10), 100, "--percentage absolute: of all 100 samples");
	v.percent_relative = true;
	is_u64(prof_view_percent_base(p, &v, 10), 10, "--percentage relative: of the 10 kept");

	prof_view_init(&v);
	v.metric = PROF_VIEW_OFFCPU;
	prof_output_fn_table_build(p, &v, &t);
	is_u64(t.grand_total, 4000000, "off-cpu ns");
	prof_output_fn_table_free(&t);
	v.metric = PROF_VIEW_WALL;
	prof_output_fn_table_build(p, &v, &t);
	is_u64(t.grand_total, 100 * 1000000 + 4000000, "wall = derived cpu ns + off-cpu ns");
	prof_output_fn_table_free(&t);
}

static void test_text(const struct prof_profile *p)
{
	struct prof_view v;

	prof_view_init(&v);
	v.title = "fixture.data";
	char *s = render(p, &v, prof_output_text_flat);
	check_contains(s, "# prof report: fixture.data\n", "flat header");
	check_contains(s, "# samples: 100, lost: 0, duration: 0.10 s, fully unwound: 100.0%\n",
		       "samples line");
	check_contains(s, "  Self%   Total%   Samples  Function", "column header");
	check_contains(s, " 60.00%   90.00%        60  work                             app\n",
		       "work row");
	check_contains(s, " 10.00%   10.00%        10  kfn                              [kernel.kallsyms]\n",
		       "kfn row");
	ok(strstr(s, "  work ") < strstr(s, "  helper ") && strstr(s, "  helper ") < strstr(s, "  main "),
	   "flat rows in self order");
	free(s);

	v.percent_limit = 15;
	s = render(p, &v, prof_output_text_flat);
	ok(strstr(s, "  helper ") && !strstr(s, "  kfn ") && !strstr(s, "  main "),
	   "--percent-limit 15 hides rows under 15%% self");
	free(s);

	prof_view_init(&v);
	s = render(p, &v, prof_output_text_tree);
	check_contains(s, "100.00%    0.00%       100  main  [app]\n"
		       " 90.00%   60.00%        90    work  [app]\n"
		       " 20.00%   20.00%        20      helper  [app]\n"
		       " 10.00%   10.00%        10      kfn  [kernel.kallsyms]\n",
		       "tree: main > work > helper, kfn");
	check_contains(s, " 10.00%    0.00%        10    rec  [app]\n"
		       " 10.00%    0.00%        10      rec  [app]\n"
		       " 10.00%   10.00%        10        rec  [app]\n", "tree: recursion nests");
	free(s);
	v.percent_limit = 50;
	s = render(p, &v, prof_output_text_tree);
	ok(strstr(s, "    work ") && !strstr(s, "helper") && !strstr(s, "rec"),
	   "tree percent-limit prunes subtrees");
	free(s);
}

static void test_folded(const struct prof_profile *p)
{
	struct prof_view v;

	prof_view_init(&v);
	char *s = render(p, &v, prof_output_folded);
	is_str(s, "app;main;work 60\n"
		  "app;main;work;helper_[i] 20\n"
		  "other;main;work;kfn_[k] 10\n"
		  "worker;main;rec;rec;rec 10\n", "folded cpu lines, sorted, lines merged");
	free(s);
	v.metric = PROF_VIEW_OFFCPU;
	s = render(p, &v, prof_output_folded);
	is_str(s, "app;main;" EVIL_IMG ";q\"uo\\te:nl 3000\napp;main;work 1000\n",
	       "folded off-cpu in microseconds, newline in a name replaced");
	free(s);
	v.metric = PROF_VIEW_IOWAIT;
	s = render(p, &v, prof_output_folded);
	is_str(s, "app;main;work 1000\n", "io-wait");
	free(s);
}

static void test_escape(const struct prof_profile *p)
{
	struct strbuf sb = STRBUF_INIT;
	struct prof_view v;

	json_escape(&sb, EVIL_QUOTE);
	is_str(sb.buf, "\"q\\\"uo\\\\te\\nnl\"", "json_escape quotes, backslashes, newlines");
	sb_reset(&sb);
	json_escape(&sb, EVIL_IMG);
	is_str(sb.buf, "\"\\u003cimg src=x onerror=alert(1)\\u003e\"", "json_escape <>");
	sb_reset(&sb);
	json_escape(&sb, "a\x01\xff\xc3\xa9");
	is_str(sb.buf, "\"a\\u0001\\ufffd\xc3\xa9\"", "control and invalid UTF-8");
	sb_reset(&sb);
	xml_escape(&sb, EVIL_IMG "&'\"");
	is_str(sb.buf, "&lt;img src=x onerror=alert(1)&gt;&amp;&#39;&quot;", "xml_escape");
	sb_release(&sb);

	prof_view_init(&v);
	v.metric = PROF_VIEW_SLEEP;
	char *s = render(p, &v, prof_output_json);
	ok(!strstr(s, "<img"), "no raw <img in json");
	check_contains(s, "\"name\": \"q\\\"uo\\\\te\\nnl\"", "escaped name in json");
	check_contains(s, "\"unit\": \"us\"", "time unit");
	check_contains(s, "\"self\": 3000, \"total\": 3000", "sleep us");
	free(s);
}

int main(int argc, char **argv)
{
	char path[] = "/tmp/prof-output-test.XXXXXX";
	struct prof_profile p;
	struct prof_read_info info;

	if (argc == 3 && !strcmp(argv[1], "--write"))
		return write_fixture(argv[2]) ? 1 : 0;
	int fd = mkstemp(path);
	close(fd);
	is_u64(write_fixture(path), 0, "fixture written");
	prof_profile_init(&p);
	is_u64(prof_data_read(path, &p, &info), 0, "fixture read");
	unlink(path);
	test_fn_table(&p);
	test_text(&p);
	test_folded(&p);
	test_escape(&p);
	prof_profile_free(&p);
	return done_testing();
}
