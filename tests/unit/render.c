/*
 * render.c - unit tests for the picture and interop renderers (output.h):
 * the flame tree merges siblings by name, the SVG/HTML/JSON outputs escape
 * hostile symbol names, the diff flame graph colours and shows vanished
 * stacks, speedscope/pprof/callgrind carry the profile's totals.
 *
 * With RENDER_OUT_DIR set, it also writes every format of its test profile
 * there (flame.svg, icicle.svg, diff.svg, report.html, speedscope.json,
 * profile.pb.gz, callgrind.out), for tests/t5000-render-*.sh to check
 * with real tools (callgrind_annotate, protoc, python3, chromium).
 */
#include "tap.h"
#include "prof/callgrind.h"
#include "prof/output.h"
#include "../../src/output/output-priv.h"
#include <stdlib.h>
#include <string.h>

#define EVIL "<img src=x onerror=alert(1)>"
#define EVIL2 "</script><script>alert(2)</script>"
#define QUOTEY "quote\"back\\slash"

struct fixture { uint32_t mod, kmod, main, work, work2, helper, spin, ksys, evil, evil2, quotey, gone; };

static uint32_t frame(struct prof_profile *p, const char *fn, const char *file, uint32_t line,
		      uint32_t mod, uint64_t addr, int kind, int inlined)
{
	struct prof_frame f = {
		.func = prof_intern(p, fn), .file = prof_intern(p, file), .line = line,
		.module = mod, .addr = addr, .kind = (uint8_t)kind, .inlined = (uint8_t)inlined,
	};
	return prof_frame_intern(p, &f);
}

static void add(struct prof_profile *p, uint32_t thread, uint64_t n, size_t depth, ...)
{
	uint32_t st[16];
	va_list ap;

	va_start(ap, depth);
	for (size_t i = 0; i < depth; i++)
		st[i] = va_arg(ap, uint32_t);
	va_end(ap);
	uint32_t node = prof_node_from_stack(p, st, depth);
	prof_add(p, thread, node, PROF_M_SAMPLES, n);
	prof_add(p, thread, node, PROF_M_CPU_NS, n * 1000000);
	p->samples += n;
}

/* 20 samples: spin 8, helper(inlined into work) 3, work (two lines) 2,
 * kernel under EVIL 2, EVIL2 2, QUOTEY 1, and a "gone_fn" 2 in base only. */
static void build(struct prof_profile *p, struct fixture *x, bool head)
{
	prof_profile_init(p);
	x->mod = prof_module_intern(p, "/usr/bin/app", "00112233445566778899aabbccddeeff00112233", 0);
	x->kmod = prof_module_intern(p, "[kernel.kallsyms]", "", PROF_MOD_KERNEL);
	x->main = frame(p, "main", "/src/app.c", 10, x->mod, 0x1100, PROF_FRAME_USER, 0);
	x->work = frame(p, "work", "/src/app.c", 20, x->mod, 0x1200, PROF_FRAME_USER, 0);
	x->work2 = frame(p, "work", "/src/app.c", 21, x->mod, 0x1208, PROF_FRAME_USER, 0);
	x->helper = frame(p, "helper", "/src/app.h", 5, x->mod, 0x1200, PROF_FRAME_USER, 1);
	x->spin = frame(p, "spin", "/src/app.c", 30, x->mod, 0x1300, PROF_FRAME_USER, 0);
	x->ksys = frame(p, "do_syscall_64", "", 0, x->kmod, 0xffff1000, PROF_FRAME_KERNEL, 0);
	x->evil = frame(p, EVIL, "/src/evil.c", 1, x->mod, 0x1400, PROF_FRAME_USER, 0);
	x->evil2 = frame(p, EVIL2, "", 0, x->mod, 0x1500, PROF_FRAME_USER, 0);
	x->quotey = frame(p, QUOTEY, "", 0, x->mod, 0x1600, PROF_FRAME_USER, 0);
	x->gone = frame(p, "gone_fn", "/src/old.c", 7, x->mod, 0x1700, PROF_FRAME_USER, 0);
	uint32_t t1 = prof_thread_intern(p, 100, 100, "app");
	uint32_t t2 = prof_thread_intern(p, 100, 101, "worker");

	add(p, t1, head ? 8 : 4, 3, x->spin, x->work, x->main);
	add(p, t1, 3, 3, x->helper, x->work, x->main);
	add(p, t2, 1, 2, x->work, x->main);
	add(p, t2, 1, 2, x->work2, x->main);
	add(p, t1, 2, 3, x->ksys, x->evil, x->main);
	add(p, t2, 2, 2, x->evil2, x->main);
	add(p, t2, 1, 2, x->quotey, x->main);
	if (!head)
		add(p, t1, 2, 3, x->gone, x->work, x->main);
	p->samples_truncated = 1;
	p->period_ns = 1000000;
	p->start_ns = 1000;
	p->end_ns = 1000 + 2000000000ULL;
	prof_meta_set(p, "command", "./app --x");
	prof_meta_set(p, "event", "cpu-clock");
	prof_meta_set(p, "start_time", "2026-01-02T03:04:05Z");
}

typedef int (*render_fn)(FILE *, const struct prof_profile *, const struct prof_view *);

static char *render(render_fn fn, const struct prof_profile *p, const struct prof_view *v, size_t *len)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	int rc = fn(f, p, v);

	fclose(f);
	ok(rc == 0, "renderer returns 0");
	if (len)
		*len = n;
	return buf;
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *s = hay; (s = strstr(s, needle)); s += strlen(needle))
		n++;
	return n;
}

static void no_injection(const char *out, const char *what)
{
	ok(!strstr(out, "<img"), "%s: no raw <img", what);
	ok(!strstr(out, "<script>alert"), "%s: no raw injected <script>", what);
}

static void test_flame_tree(const struct prof_profile *p)
{
	struct flame_tree t;
	struct prof_view v;

	prof_view_init(&v);
	render_flame_tree_init(&t);
	render_flame_tree_add_profile(&t, p, &v, FLAME_HEAD);
	render_flame_tree_finish(&t);
	is_u64(t.nodes.v[0].value[FLAME_HEAD], 18, "root carries every sample");
	is_u64(t.nodes.v[0].n_children, 1, "one outermost frame (main)");
	const struct flame_node *m = &t.nodes.v[t.child_ids.v[t.nodes.v[0].first_child]];
	is_str(m->name, "main", "root child is main");
	/* main's children: EVIL, EVIL2, QUOTEY, work (the two work lines merged). */
	is_u64(m->n_children, 4, "work@20 and work@21 merge by name");
	const struct flame_node *first = &t.nodes.v[t.child_ids.v[m->first_child]];
	is_str(first->name, EVIL2, "siblings sorted by name");
	is_u64(t.max_depth, 3, "max depth");
	render_flame_tree_free(&t);
}

static void test_flamegraph(const struct prof_profile *p)
{
	struct prof_view v;
	char *svg;

	prof_view_init(&v);
	svg = render(prof_output_flamegraph, p, &v, NULL);
	ok(strstr(svg, "<svg") && strstr(svg, "</svg>"), "svg document");
	ok(strstr(svg, "&lt;img src=x onerror=alert(1)&gt;") != NULL, "hostile name kept as text");
	no_injection(svg, "svg");
	/* all, main, 4 children of main, spin, helper, do_syscall_64 = 9 frames */
	is_u64(count(svg, "<g class=\"f\""), 9, "one <g> per merged frame");
	ok(strstr(svg, "Reset Zoom") && strstr(svg, "Search") && strstr(svg, "% matched"),
	   "zoom/search controls and script");
	ok(strstr(svg, "stroke-dasharray") != NULL, "inlined frame drawn dashed");
	ok(strstr(svg, "[kernel]") && strstr(svg, "[inlined]"), "kernel/inlined marked in details");
	ok(strstr(svg, "/src/app.c:30") != NULL, "file:line in hover details");
	ok(strstr(svg, "8 samples (44.44%)") != NULL, "samples and percent in details");
	ok(strstr(svg, ">Flame Graph<") != NULL, "flame title");
	free(svg);
	v.inverted = true;
	svg = render(prof_output_flamegraph, p, &v, NULL);
	ok(strstr(svg, ">Icicle Graph<") != NULL, "inverted: icicle title");
	/* icicle: root frame at the top row */
	ok(strstr(svg, "y=\"64.0\" width=\"1180.00\"") != NULL, "inverted: root at the top");
	free(svg);
	v.inverted = false;
	v.tids[v.ntids++] = 101;
	svg = render(prof_output_flamegraph, p, &v, NULL);
	ok(strstr(svg, ">spin<") == NULL && strstr(svg, "5 samples (100.00%)"), "view filter applies (tid 101)");
	free(svg);
}

static void test_diff(const struct prof_profile *base, const struct prof_profile *head)
{
	struct prof_view v;
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	prof_view_init(&v);
	ok(prof_output_flamegraph_diff(f, base, head, &v) == 0, "diff renders");
	fclose(f);
	ok(strstr(buf, "Disappeared") != NULL, "vanished stacks get their own section");
	ok(strstr(buf, "gone_fn") != NULL && strstr(buf, "in base, gone in head"), "gone_fn shown as gone");
	ok(strstr(buf, "data-a=\"1\"") != NULL, "gone section is its own zoom area");
	const char *spin = strstr(buf, "data-n=\"spin\"");
	const char *fill = spin ? strstr(spin, "fill=\"rgb(255,") : NULL;
	ok(spin && fill && fill - spin < 400, "spin grew: red");
	const char *helper = strstr(buf, "data-n=\"helper\"");
	const char *blue = helper ? strstr(helper, ",255)") : NULL;
	ok(helper && blue && blue - helper < 400, "helper's share shrank: blue");
	no_injection(buf, "diff svg");
	free(buf);
}

static void test_html(const struct prof_profile *p)
{
	struct prof_view v;
	char *html;

	prof_view_init(&v);
	html = render(prof_output_html, p, &v, NULL);
	no_injection(html, "html");
	ok(strstr(html, "\\u003c/script\\u003e") != NULL, "</script> in JSON data escaped");
	ok(!strstr(html, "src=\"http") && !strstr(html, "href=\"http"), "no network loads");
	ok(strstr(html, "Top functions") && strstr(html, "id=\"fns\""), "functions table");
	ok(strstr(html, "Callers") && strstr(html, "Callees"), "sandwich view");
	ok(strstr(html, "94.4% (1 of 18 stacks truncated)") != NULL, "unwind completeness");
	ok(strstr(html, "id=\"procs\"") && strstr(html, ">100<"), "per-process table");
	ok(!strstr(html, "id=\"timeline\""), "no timeline section without data");
	free(html);

	struct prof_timeline tl = { 0 };
	struct prof_timeline_series s = { .name = "RSS <b>", .unit = "bytes" };
	VEC_PUSH(&s.points, ((struct prof_timeline_point){ 0, 100 }));
	VEC_PUSH(&s.points, ((struct prof_timeline_point){ 1000000000, 300 }));
	VEC_PUSH(&tl.series, s);
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	ok(prof_output_html_ex(f, p, &v, &tl) == 0, "html with timeline renders");
	fclose(f);
	ok(strstr(buf, "id=\"timeline\"") && strstr(buf, "<polyline"), "timeline section when data exists");
	ok(strstr(buf, "RSS &lt;b&gt;") != NULL, "series name escaped");
	free(buf);
	VEC_FREE(&s.points);
	VEC_FREE(&tl.series);
}

/* Sum of one emit_column() of htmlapp.c over `rows` rows whose default is 1:
 * base64 VLQ, either (row delta, value) pairs or {"dense": every value}. */
static uint64_t vlq_column_sum(const char *col, size_t rows)
{
	static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	bool dense = !strncmp(col, "{\"dense\":\"", 10);
	const char *c = col + (dense ? 10 : 1);
	uint64_t sum = dense ? 0 : rows, v = 0, mul = 1, k = 0;

	for (; *c && *c != '"'; c++) {
		uint64_t d = (uint64_t)(strchr(b64, *c) - b64);
		if (d >= 32) {
			v += (d - 32) * mul;
			mul *= 32;
			continue;
		}
		v += d * mul;
		if (dense)
			sum += v;
		else if (k++ % 2)	/* a value: replaces the row's default 1 */
			sum += v - 1;
		v = 0;
		mul = 1;
	}
	return sum;
}

/*
 * A machine-wide recording in miniature: 300 threads in 150 processes and
 * 60,000 samples each on a stack of its own, beside 1,000 on one hot stack.
 * The HTML application keeps 200 tracks and one "other threads", folds the
 * rare stacks into "(trimmed)" under their kept callers, lists 100
 * processes and one line for the rest, and keeps every sample.
 */
static void test_html_caps(void)
{
	struct prof_profile p;
	struct prof_view v;
	uint32_t fa[250], fb[250], mod, main_f, hot;
	char name[32];

	prof_profile_init(&p);
	p.keep_timed = true;
	p.period_ns = 1000000;
	mod = prof_module_intern(&p, "/usr/bin/churn", "", 0);
	main_f = frame(&p, "main", "", 0, mod, 0x100, PROF_FRAME_USER, 0);
	hot = frame(&p, "hot", "", 0, mod, 0x200, PROF_FRAME_USER, 0);
	for (int i = 0; i < 250; i++) {
		snprintf(name, sizeof(name), "a%d", i);
		fa[i] = frame(&p, name, "", 0, mod, 0x1000 + (uint64_t)i, PROF_FRAME_USER, 0);
		snprintf(name, sizeof(name), "b%d", i);
		fb[i] = frame(&p, name, "", 0, mod, 0x2000 + (uint64_t)i, PROF_FRAME_USER, 0);
	}
	for (uint32_t t = 0; t < 300; t++) {
		uint32_t th = prof_thread_intern(&p, 1000 + t / 2, 1000 + t, "churn");
		for (uint32_t k = 0; k < 200; k++) {
			uint32_t i = t * 200 + k, st[3] = { fb[i % 250], fa[i / 250], main_f };
			uint32_t node = prof_node_from_stack(&p, st, 3);
			prof_add_timed(&p, (uint64_t)k * 10000000 + t, th, node, PROF_M_SAMPLES, 1);
		}
		if (t < 10) {
			uint32_t st[2] = { hot, main_f }, node = prof_node_from_stack(&p, st, 2);
			for (uint32_t k = 0; k < 100; k++)
				prof_add_timed(&p, (uint64_t)k * 20000000 + t, th, node, PROF_M_SAMPLES, 1);
		}
	}
	p.samples = 61000;
	prof_timed_sort(&p);
	prof_view_init(&v);
	char *html = render(prof_output_html, &p, &v, NULL);
	const char *trim = strstr(html, "\"trim_samples\":"), *rows = strstr(html, "\"rows\":{\"count\":");
	const char *col = strstr(html, ",\"n\":"), *stacks = strstr(html, "\"stacks\":\"");
	size_t nrows = rows ? strtoul(rows + strlen("\"rows\":{\"count\":"), NULL, 10) : 0;
	ok(strstr(html, "100 other threads (50 processes)") != NULL, "threads past 200 fold into one");
	ok(strstr(html, "\"(trimmed)\"") != NULL, "rare stacks fold into (trimmed)");
	trim = trim ? trim + strlen("\"trim_samples\":") : "0";
	ok(atof(trim) > 0.9 && atof(trim) < 1, "the trimmed share is stated: %.4f", atof(trim));
	ok(nrows > 0 && nrows <= 150000, "rows within the budget (%zu)", nrows);
	ok(stacks && strchr(stacks + 10, '"') - stacks < 4000,
	   "stacks: 60,010 become the kept ones and one (trimmed) under each a<N>");
	ok(col && vlq_column_sum(col + strlen(",\"n\":"), nrows) == 61000, "every sample is in the rows");
	ok(strstr(html, "50 more processes") != NULL, "process table: 100 rows and the rest");
	ok(strstr(html, "\"hot\"") != NULL && strstr(html, "\"a7\"") != NULL, "kept frames named");
	free(html);
	prof_profile_free(&p);
}

static void test_speedscope(const struct prof_profile *p)
{
	struct prof_view v;
	char *js;

	prof_view_init(&v);
	js = render(prof_output_speedscope, p, &v, NULL);
	ok(strstr(js, "\"$schema\":\"https://www.speedscope.app/file-format-schema.json\"") != NULL, "schema");
	is_u64(count(js, "\"type\":\"sampled\""), 2, "one sampled profile per thread");
	ok(strstr(js, "quote\\\"back\\\\slash") != NULL, "JSON string escaped");
	ok(strstr(js, "\"endValue\":13") && strstr(js, "\"endValue\":5"), "endValue = thread totals");
	free(js);
}

/* The library's own decompressor (the one callgrind input goes through). */
static char *gunzip(const char *in, size_t len, size_t *outlen)
{
	char *out = NULL;

	return cg_decompress(in, len, 64 << 20, &out, outlen) == 1 ? out : NULL;
}

static void test_pprof(const struct prof_profile *p)
{
	struct prof_view v;
	size_t len, plen;
	char *gz, *pb;

	prof_view_init(&v);
	gz = render(prof_output_pprof, p, &v, &len);
	ok(len > 2 && (unsigned char)gz[0] == 0x1f && (unsigned char)gz[1] == 0x8b, "gzip magic");
	pb = gunzip(gz, len, &plen);
	ok(pb != NULL, "gunzips");
	if (pb) {
		ok(memmem(pb, plen, "\x32\x00", 2) != NULL, "string_table has \"\" (field 6, len 0)");
		ok(memmem(pb, plen, "\x32\x07samples", 9) && memmem(pb, plen, "\x32\x0bnanoseconds", 13),
		   "sample type strings");
		ok(memmem(pb, plen, "00112233445566778899aabbccddeeff00112233", 40) != NULL, "build id");
		ok(memmem(pb, plen, EVIL, strlen(EVIL)) != NULL, "names stored verbatim (binary format)");
		/* time_nanos (field 9) = 2026-01-02T03:04:05Z = 1767323045 s */
		uint8_t want[11] = { 9 << 3 };
		size_t n = varint_put(want + 1, 1767323045ULL * 1000000000ULL);
		ok(memmem(pb, plen, want, n + 1) != NULL, "time_nanos from start_time");
	}
	free(pb);
	free(gz);
}

static void test_pb(void)
{
	struct strbuf sb = STRBUF_INIT;
	uint64_t v[] = { 1, 300 };

	render_pb_uint(&sb, 1, 150);
	ok(sb.len == 3 && !memcmp(sb.buf, "\x08\x96\x01", 3), "varint field (protobuf docs' 150)");
	sb_reset(&sb);
	render_pb_packed(&sb, 4, v, 2);
	ok(sb.len == 5 && !memcmp(sb.buf, "\x22\x03\x01\xac\x02", 5), "packed repeated");
	sb_reset(&sb);
	render_pb_uint(&sb, 1, 0);
	is_u64(sb.len, 0, "zero is not encoded");
	sb_release(&sb);
}

static void test_callgrind(const struct prof_profile *p)
{
	struct prof_view v;
	char *cg;

	prof_view_init(&v);
	cg = render(prof_output_callgrind, p, &v, NULL);
	ok(strstr(cg, "events: Samples\n") && strstr(cg, "totals: 18\n"), "header and totals");
	ok(strstr(cg, "fn=(") && strstr(cg, "cfn=(") && strstr(cg, "calls="), "self and call records");
	ok(strstr(cg, "ob=(1) /usr/bin/app") != NULL, "module as ob=");
	free(cg);
}

static void write_file(const char *dir, const char *name, render_fn fn,
		       const struct prof_profile *p, const struct prof_view *v)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	ok(f && fn(f, p, v) == 0 && fclose(f) == 0, "wrote %s", name);
}

static void write_outputs(const char *dir, const struct prof_profile *base, const struct prof_profile *head)
{
	struct prof_view v;
	char path[4096];

	prof_view_init(&v);
	write_file(dir, "flame.svg", prof_output_flamegraph, head, &v);
	write_file(dir, "report.html", prof_output_html, head, &v);
	write_file(dir, "speedscope.json", prof_output_speedscope, head, &v);
	write_file(dir, "profile.pb.gz", prof_output_pprof, head, &v);
	write_file(dir, "callgrind.out", prof_output_callgrind, head, &v);
	write_file(dir, "firefox.json", prof_output_firefox, head, &v);
	snprintf(path, sizeof(path), "%s/diff.svg", dir);
	FILE *f = fopen(path, "w");
	ok(f && prof_output_flamegraph_diff(f, base, head, &v) == 0 && fclose(f) == 0, "wrote diff.svg");
	v.inverted = true;
	write_file(dir, "icicle.svg", prof_output_flamegraph, head, &v);
	v.inverted = false;

	/* The timeline hook, with two made-up but deterministic series. */
	struct prof_timeline tl = { 0 };
	struct prof_timeline_series cpu = { .name = "CPU", .unit = "%" };
	struct prof_timeline_series rss = { .name = "RSS", .unit = "bytes" };
	for (uint64_t i = 0; i < 50; i++) {
		VEC_PUSH(&cpu.points, ((struct prof_timeline_point){ i * 40000000, (double)(i * 37 % 100) }));
		VEC_PUSH(&rss.points, ((struct prof_timeline_point){ i * 40000000, (double)(1 << 20) * (i + 1) }));
	}
	VEC_PUSH(&tl.series, cpu);
	VEC_PUSH(&tl.series, rss);
	snprintf(path, sizeof(path), "%s/timeline.html", dir);
	f = fopen(path, "w");
	ok(f && prof_output_html_ex(f, head, &v, &tl) == 0 && fclose(f) == 0, "wrote timeline.html");
	VEC_FREE(&cpu.points);
	VEC_FREE(&rss.points);
	VEC_FREE(&tl.series);
}

/* No samples at all (or all filtered out): every renderer still succeeds. */
static void test_empty(void)
{
	struct prof_profile p;
	struct prof_view v;
	render_fn fns[] = { prof_output_flamegraph, prof_output_html, prof_output_speedscope,
			    prof_output_pprof, prof_output_callgrind, prof_output_firefox };
	const char *names[] = { "flamegraph", "html", "speedscope", "pprof", "callgrind",
				"firefox" };

	prof_profile_init(&p);
	prof_view_init(&v);
	for (size_t i = 0; i < ARRAY_SIZE(fns); i++) {
		size_t len;
		char *out = render(fns[i], &p, &v, &len);
		ok(len > 0, "empty profile: %s output not empty", names[i]);
		if (i == 0)
			ok(strstr(out, "no samples match this view") != NULL, "empty flame graph says so");
		if (i == 2)
			ok(strstr(out, "\"profiles\":[]") != NULL, "empty speedscope has no profiles");
		if (i == 5)
			ok(strstr(out, "\"threads\":[]") != NULL, "empty firefox profile has no threads");
		free(out);
	}
	prof_profile_free(&p);
}

/* Random stacks (recursion, inlined and kernel frames): the invariants
 * that must hold for any profile, not just the hand-made one. */
static void test_random(void)
{
	struct prof_profile p;
	struct prof_view v;
	struct flame_tree t;
	uint64_t rng = 0x9e3779b97f4a7c15ULL, total = 0;
	uint32_t mod, kmod, fr[40], st[30];

	prof_profile_init(&p);
	prof_view_init(&v);
	mod = prof_module_intern(&p, "/bin/rand", "", 0);
	kmod = prof_module_intern(&p, "[kernel.kallsyms]", "", PROF_MOD_KERNEL);
	for (uint32_t i = 0; i < 40; i++) {
		char name[16];
		snprintf(name, sizeof(name), "f%u", i % 25);	/* same names, other lines */
		fr[i] = frame(&p, name, "/r.c", i, i < 5 ? kmod : mod, i * 16,
			      i < 5 ? PROF_FRAME_KERNEL : PROF_FRAME_USER, i % 7 == 3);
	}
	uint32_t th[3] = { prof_thread_intern(&p, 1, 1, "a"), prof_thread_intern(&p, 1, 2, "b"),
			   prof_thread_intern(&p, 2, 2, "c") };
	for (int s = 0; s < 3000; s++) {
		rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
		size_t depth = 1 + rng % 30;
		for (size_t k = 0; k < depth; k++)
			st[k] = fr[(rng >> (k % 50)) % 40];
		uint64_t w = 1 + (rng >> 40) % 5;
		prof_add(&p, th[rng % 3], prof_node_from_stack(&p, st, depth), PROF_M_SAMPLES, w);
		total += w;
	}
	render_flame_tree_init(&t);
	render_flame_tree_add_profile(&t, &p, &v, FLAME_HEAD);
	render_flame_tree_finish(&t);
	is_u64(t.nodes.v[0].value[FLAME_HEAD], total, "random: flame root = total");
	bool sums = true;
	for (size_t i = 0; i < t.nodes.n; i++) {
		const struct flame_node *n = &t.nodes.v[i];
		uint64_t c = n->self[FLAME_HEAD];
		for (uint32_t k = 0; k < n->n_children; k++)
			c += t.nodes.v[t.child_ids.v[n->first_child + k]].value[FLAME_HEAD];
		sums &= c == n->value[FLAME_HEAD];
	}
	ok(sums, "random: every node = self + children");
	render_flame_tree_free(&t);

	char *cg = render(prof_output_callgrind, &p, &v, NULL), want[64];
	snprintf(want, sizeof(want), "totals: %llu\n", (unsigned long long)total);
	ok(strstr(cg, want) != NULL, "random: callgrind totals = total");
	bool bounded = true;
	for (const char *c = cg; (c = strstr(c, "calls=")); c++) {
		const char *cost = strchr(strchr(c, '\n') + 1, ' ');
		bounded &= strtoull(cost + 1, NULL, 10) <= total;
	}
	ok(bounded, "random: no call edge costs more than the total (recursion counted once)");
	free(cg);
	char *js = render(prof_output_speedscope, &p, &v, NULL);
	uint64_t ends = 0;
	for (const char *c = js; (c = strstr(c, "\"endValue\":")); c++)
		ends += strtoull(c + 11, NULL, 10);
	is_u64(ends, total, "random: speedscope endValues sum to total");
	free(js);
	free(render(prof_output_html, &p, &v, NULL));
	free(render(prof_output_pprof, &p, &v, NULL));
	free(render(prof_output_flamegraph, &p, &v, NULL));
	if (getenv("RENDER_OUT_DIR"))	/* t5201 checks it: no times, inlined frames */
		write_file(getenv("RENDER_OUT_DIR"), "firefox-random.json", prof_output_firefox,
			   &p, &v);
	prof_profile_free(&p);
}

int main(void)
{
	struct prof_profile head, base;
	struct fixture xh, xb;

	build(&head, &xh, true);
	build(&base, &xb, false);
	test_flame_tree(&head);
	test_flamegraph(&head);
	test_diff(&base, &head);
	test_html(&head);
	test_html_caps();
	test_speedscope(&head);
	test_pb();
	test_pprof(&head);
	test_callgrind(&head);
	test_empty();
	test_random();
	if (getenv("RENDER_OUT_DIR"))
		write_outputs(getenv("RENDER_OUT_DIR"), &base, &head);
	prof_profile_free(&head);
	prof_profile_free(&base);
	return done_testing();
}
