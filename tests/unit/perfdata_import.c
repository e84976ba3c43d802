/*
 * perfdata_import.c - tests of perfdata_read() (src/perfdata/import.c) and,
 * with arguments, the driver the t5100 shell tests use until `prof report`
 * reads perf.data itself:
 *
 *   perfdata_import.t                    TAP tests on the real seeds
 *   perfdata_import.t --flat FILE        flat self table of a perf.data
 *   perfdata_import.t --time FILE        parse+unwind+aggregate timing
 *   perfdata_import.t --folded FILE      comm;outer;...;inner COUNT lines
 *
 * The flat table keys each sample on its innermost NON-inlined frame,
 * because that is what `perf report --sort sym` shows (perf attributes an
 * inlined callee's samples to the function it was inlined into):
 *   # samples N lost L truncated T
 *   SELF_PCT SELF_SAMPLES FUNCTION MODULE_BASENAME
 */
#include "prof/perfdata.h"
#include "tap.h"
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define SEEDS "tests/fuzz/corpus/perfdata/"

struct row {
	uint32_t func, module;
	uint64_t self;
};

static uint32_t self_frame(const struct prof_profile *p, uint32_t node)
{
	uint32_t first = PROF_NONE;

	for (; node != 0 && node < p->nodes.n; node = p->nodes.v[node].parent) {
		uint32_t fr = p->nodes.v[node].frame;
		if (first == PROF_NONE)
			first = fr;
		if (fr < p->frames.n && !p->frames.v[fr].inlined)
			return fr;
	}
	return first;
}

static int cmp_row(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	return x->self != y->self ? (x->self < y->self ? 1 : -1) : (x->func > y->func) - (x->func < y->func);
}

static size_t flat_table(const struct prof_profile *p, struct row **out)
{
	struct u64map index = { 0 };
	VEC(struct row) rows = { 0 };

	for (size_t i = 0; i < p->aggs.n; i++) {
		uint32_t fr = self_frame(p, p->aggs.v[i].node);
		if (fr == PROF_NONE || fr >= p->frames.n)
			continue;
		const struct prof_frame *f = &p->frames.v[fr];
		uint64_t key = ((uint64_t)f->func << 32) | f->module;
		bool created;
		uint64_t *slot = u64map_slot(&index, key, &created);
		if (created) {
			*slot = rows.n;
			VEC_PUSH(&rows, ((struct row){ f->func, f->module, 0 }));
		}
		rows.v[*slot].self += p->aggs.v[i].value[PROF_M_SAMPLES];
	}
	if (rows.n)
		qsort(rows.v, rows.n, sizeof(*rows.v), cmp_row);
	u64map_free(&index);
	*out = rows.v;
	return rows.n;
}

static const char *module_base(const struct prof_profile *p, uint32_t mod)
{
	if (mod >= p->modules.n)
		return "[unknown]";
	const char *path = prof_str(p, p->modules.v[mod].path);
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

static int print_flat(const char *path)
{
	struct prof_profile p;
	struct perfdata_info info;
	struct row *rows;

	prof_profile_init(&p);
	if (perfdata_read(path, &p, &info)) {
		prof_profile_free(&p);
		return 2;
	}
	size_t n = flat_table(&p, &rows);
	uint64_t total = prof_total(&p, PROF_M_SAMPLES);
	printf("# samples %" PRIu64 " lost %" PRIu64 " truncated %" PRIu64
	       " event %s callgraph %s%s\n",
	       p.samples, p.lost, p.samples_truncated, prof_meta_get(&p, "event"),
	       prof_meta_get(&p, "callgraph"), info.truncated ? " file-cut" : "");
	for (size_t i = 0; i < n; i++)
		printf("%6.2f %8" PRIu64 " %s %s\n", total ? 100.0 * rows[i].self / total : 0.0,
		       rows[i].self, prof_str(&p, rows[i].func), module_base(&p, rows[i].module));
	free(rows);
	prof_profile_free(&p);
	return 0;
}

static void fold_node(const struct prof_profile *p, uint32_t node, struct strbuf *sb)
{
	if (node == 0 || node >= p->nodes.n)
		return;
	fold_node(p, p->nodes.v[node].parent, sb);
	uint32_t fr = p->nodes.v[node].frame;
	sb_addch(sb, ';');
	sb_adds(sb, fr < p->frames.n ? prof_str(p, p->frames.v[fr].func) : "?");
}

static int print_folded(const char *path)
{
	struct prof_profile p;
	struct strbuf sb = STRBUF_INIT;

	prof_profile_init(&p);
	if (perfdata_read(path, &p, NULL)) {
		prof_profile_free(&p);
		return 2;
	}
	for (size_t i = 0; i < p.aggs.n; i++) {
		const struct prof_agg *a = &p.aggs.v[i];
		sb_reset(&sb);
		sb_adds(&sb, prof_str(&p, p.threads.v[a->thread].comm));
		fold_node(&p, a->node, &sb);
		printf("%s %" PRIu64 "\n", sb_str(&sb), a->value[PROF_M_SAMPLES]);
	}
	sb_release(&sb);
	prof_profile_free(&p);
	return 0;
}

/* CPU time of this process: the VM's wall clock includes other tenants. */
static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The parser alone: container, sort, and decoding every sample. */
static void time_parse(const char *path)
{
	int fd = open(path, O_RDONLY);
	struct stat st;
	struct perfdata_file f;

	if (fd < 0 || fstat(fd, &st) < 0)
		return;
	void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return;
	uint64_t c0 = cpu_ns(), t0 = now_ns(), n = 0;
	if (perfdata_open(&f, map, (size_t)st.st_size) == 0) {
		for (size_t i = 0; i < f.records.n; i++) {
			struct prof_perf_sample s;
			n += f.records.v[i].type == PERF_RECORD_SAMPLE &&
			     !perfdata_decode_sample(&f, &f.records.v[i], &s, NULL);
		}
		perfdata_close(&f);
	}
	uint64_t c1 = cpu_ns(), t1 = now_ns();
	printf("parse only: samples %" PRIu64 " cpu_ms %.1f wall_ms %.1f per_sample_us %.2f (cpu)\n",
	       n, (c1 - c0) / 1e6, (t1 - t0) / 1e6, n ? (c1 - c0) / 1e3 / n : 0.0);
	munmap(map, (size_t)st.st_size);
}

static int time_import(const char *path)
{
	struct prof_profile p;
	struct perfdata_info info;

	time_parse(path);
	prof_profile_init(&p);
	uint64_t c0 = cpu_ns();
	uint64_t t0 = now_ns();
	int ret = perfdata_read(path, &p, &info);
	uint64_t t1 = now_ns(), c1 = cpu_ns();
	if (ret) {
		prof_profile_free(&p);
		return 2;
	}
	printf("import (parse+unwind+symbolize+aggregate): samples %" PRIu64 " records %" PRIu64
	       " cpu_ms %.1f wall_ms %.1f per_sample_us %.2f (cpu) complete %.1f%%\n",
	       info.samples, info.records, (c1 - c0) / 1e6, (t1 - t0) / 1e6,
	       info.samples ? (c1 - c0) / 1e3 / info.samples : 0.0,
	       info.samples ? 100.0 * info.unwound_complete / info.samples : 0.0);
	prof_profile_free(&p);
	return 0;
}

/* ---- TAP tests on the seeds ------------------------------------------------ */

static void test_seed(const char *name, uint64_t want, const char *callgraph)
{
	char path[256];
	struct prof_profile p;
	struct perfdata_info info;

	snprintf(path, sizeof(path), SEEDS "%s", name);
	prof_profile_init(&p);
	if (ok(perfdata_read(path, &p, &info) == 0, "%s: imports", name)) {
		is_u64(p.samples, want, "%s: p->samples as perf script counts", name);
		is_u64(prof_total(&p, PROF_M_SAMPLES), want, "%s: sample weights add up", name);
		ok(prof_total(&p, PROF_M_CPU_NS) >= want * 900000ULL,
		   "%s: cpu_ns carries the periods (~1 ms each at 999 Hz)", name);
		is_str(prof_meta_get(&p, "event"), "cpu-clock", "%s: event meta", name);
		is_str(prof_meta_get(&p, "callgraph"), callgraph, "%s: callgraph meta", name);
		is_u64(p.period_ns, 1001001, "%s: period_ns from -F 999", name);
		ok(p.end_ns >= p.start_ns && p.start_ns > 0, "%s: start/end times", name);
		ok(p.threads.n >= 1 && !strcmp(prof_str(&p, p.threads.v[0].comm), "fp"),
		   "%s: thread named by COMM", name);
		ok(prof_meta_get(&p, "kernel") && prof_meta_get(&p, "hostname"),
		   "%s: kernel and hostname meta", name);
	}
	prof_profile_free(&p);
}

/* ---- a synthetic file: the records perf does not produce on demand ---------- */

struct fbuf { uint8_t b[4096]; size_t n; };

static void put(struct fbuf *f, const void *p, size_t n)
{
	memcpy(f->b + f->n, p, n);
	f->n += n;
}

static void put64(struct fbuf *f, uint64_t v) { put(f, &v, 8); }

static void put_hdr(struct fbuf *f, uint32_t type, uint16_t misc, uint16_t size)
{
	struct perf_event_header h = { type, misc, size };
	put(f, &h, sizeof(h));
}

/* sample_id trailer for IDENTIFIER|TID|TIME: tid, time, identifier */
static void put_sid(struct fbuf *f, uint64_t time)
{
	put64(f, (7ULL << 32) | 7);
	put64(f, time);
	put64(f, 42);
}

/* The header, one task-clock attr (id 42) and its ids; returns data_off. */
static size_t synth_begin(struct fbuf *f)
{
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE, .size = sizeof(a),
				     .config = PERF_COUNT_SW_TASK_CLOCK, .sample_period = 250000,
				     .sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP |
						    PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
						    PERF_SAMPLE_PERIOD,
				     .sample_id_all = 1 };
	uint64_t hdr[13] = { 0 };
	size_t attrs_off = sizeof(hdr), ids_off = attrs_off + sizeof(a) + 16;
	size_t data_off = ids_off + 8;

	memcpy(&hdr[0], "PERFILE2", 8);
	hdr[1] = sizeof(hdr);
	hdr[2] = sizeof(a) + 16;
	hdr[3] = attrs_off;
	hdr[4] = sizeof(a) + 16;
	hdr[5] = data_off;
	put(f, hdr, sizeof(hdr));
	put(f, &a, sizeof(a));
	put64(f, ids_off);
	put64(f, 8);
	put64(f, 42);		/* the attr's one id */
	return data_off;
}

static void synth_end(struct fbuf *f, size_t data_off)
{
	uint64_t data_size = f->n - data_off;
	memcpy(f->b + 6 * 8, &data_size, 8);
}

/* A kernel-mode task-clock sample without callchain. */
static void put_sample(struct fbuf *f, uint64_t ip, uint64_t time)
{
	put_hdr(f, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL, 8 + 5 * 8);
	put64(f, 42);
	put64(f, ip);
	put64(f, (7ULL << 32) | 7);
	put64(f, time);
	put64(f, 250000);
}

static void test_synthetic(void)
{
	struct fbuf f = { .n = 0 };
	size_t data_off = synth_begin(&f);

	/* records deliberately out of time order: the parser sorts them */
	for (int i = 0; i < 3; i++)
		put_sample(&f, 0xffffffff81000000ULL + i, 3000 - i);
	put_hdr(&f, PERF_RECORD_COMM, 0, 8 + 8 + 8 + 24);
	put64(&f, (7ULL << 32) | 7);
	put(&f, "worker\0\0", 8);
	put_sid(&f, 100);
	put_hdr(&f, PERF_RECORD_LOST, 0, 8 + 16 + 24);
	put64(&f, 42);
	put64(&f, 5);
	put_sid(&f, 200);
	put_hdr(&f, PERF_RECORD_LOST_SAMPLES, 0, 8 + 8 + 24);
	put64(&f, 4);
	put_sid(&f, 300);
	synth_end(&f, data_off);

	struct prof_profile p;
	struct perfdata_info info;
	prof_profile_init(&p);
	ok(perfdata_read_mem(f.b, f.n, &p, &info) == 0, "synthetic: imports");
	is_u64(p.samples, 3, "synthetic: 3 samples");
	is_u64(p.lost, 5, "synthetic: LOST and LOST_SAMPLES overlap: the larger count");
	is_u64(prof_total(&p, PROF_M_CPU_NS), 750000, "synthetic: task-clock periods as cpu_ns");
	is_u64(p.period_ns, 250000, "synthetic: period_ns from sample_period");
	is_str(prof_meta_get(&p, "event"), "task-clock", "synthetic: event name from the attr");
	ok(p.threads.n == 1 && !strcmp(prof_str(&p, p.threads.v[0].comm), "worker"),
	   "synthetic: COMM sorted before the samples names the thread");
	ok(p.frames.n >= 1 && p.frames.v[0].kind == PROF_FRAME_KERNEL,
	   "synthetic: kernel-mode ip gives a kernel frame");
	is_u64(p.start_ns, 2998, "synthetic: start_ns is the earliest sample");
	is_u64(p.end_ns, 3000, "synthetic: end_ns is the latest sample");
	prof_profile_free(&p);
}

static void put_comm(struct fbuf *f, const char name[8], bool exec, uint64_t time)
{
	put_hdr(f, PERF_RECORD_COMM, exec ? PERF_RECORD_MISC_COMM_EXEC : 0, 8 + 8 + 8 + 24);
	put64(f, (7ULL << 32) | 7);
	put(f, name, 8);
	put_sid(f, time);
}

/*
 * The replay engine's thread identities: an exec starts a new identity of
 * the same tid (samples before it keep the old name), a plain COMM
 * renames in place.  The same engine serves prof record.
 */
static void test_exec_identity(void)
{
	struct fbuf f = { .n = 0 };
	size_t data_off = synth_begin(&f);
	struct prof_profile p;

	put_comm(&f, "worker\0\0", false, 100);
	put_sample(&f, 0xffffffff81000000ULL, 1000);
	put_comm(&f, "newimg\0\0", true, 2000);
	put_sample(&f, 0xffffffff81000001ULL, 3000);
	put_comm(&f, "renamed\0", false, 4000);
	put_sample(&f, 0xffffffff81000002ULL, 5000);
	synth_end(&f, data_off);

	prof_profile_init(&p);
	ok(perfdata_read_mem(f.b, f.n, &p, NULL) == 0 && p.samples == 3, "exec: imports 3 samples");
	ok(p.threads.n == 2 && p.threads.v[0].tid == 7 && p.threads.v[1].tid == 7,
	   "exec: two identities of tid 7 (got %zu)", p.threads.n);
	ok(p.threads.n == 2 && !strcmp(prof_str(&p, p.threads.v[0].comm), "worker") &&
	   !strcmp(prof_str(&p, p.threads.v[1].comm), "renamed"),
	   "exec: the old one keeps its name, the new one is renamed in place");
	prof_profile_free(&p);
}

/*
 * Streaming follows perf's rounds: at each FINISHED_ROUND what is not
 * newer than the newest time of the previous round is handed out, in time
 * order; a record that arrives after its time was passed comes late, as
 * in perf (the 150 below), instead of the whole file being sorted.
 */
static void test_rounds(void)
{
	struct fbuf f = { .n = 0 };
	size_t data_off = synth_begin(&f);
	struct perfdata_file pf;
	uint64_t want[2][5] = { { 100, 200, 200, 300, 300 }, { 150, 400 } };
	size_t want_n[2] = { 5, 2 }, batch = 0;
	bool same = true;

	put_hdr(&f, PERF_RECORD_COMM, 0, 8 + 8 + 8 + 24);
	put64(&f, (7ULL << 32) | 7);
	put(&f, "worker\0\0", 8);
	put_sid(&f, 100);
	put_sample(&f, 0xffffffff81000000ULL, 300);
	put_hdr(&f, 68, 0, 8);	/* FINISHED_ROUND: flushes nothing (limit 0) */
	put_sample(&f, 0xffffffff81000001ULL, 200);
	put_hdr(&f, 68, 0, 8);	/* flushes <= 300: everything so far */
	put_sample(&f, 0xffffffff81000002ULL, 400);
	put_sample(&f, 0xffffffff81000003ULL, 150);
	synth_end(&f, data_off);

	if (!ok(perfdata_open_stream(&pf, f.b, f.n, false) == 0, "rounds: opens for streaming"))
		return;
	ok(pf.streaming && pf.records.n == 0, "rounds: nothing scanned at open");
	while (perfdata_next_records(&pf)) {
		if (batch < 2 && pf.records.n == want_n[batch])
			for (size_t i = 0; i < pf.records.n; i++)
				same &= pf.records.v[i].time == want[batch][i];
		else
			same = false;
		batch++;
	}
	is_u64(batch, 2, "rounds: two batches (the first round flushes nothing)");
	ok(same, "rounds: batches in time order; the late record comes after the flushed ones");
	perfdata_close(&pf);

	struct prof_profile p;
	prof_profile_init(&p);
	ok(perfdata_read_mem(f.b, f.n, &p, NULL) == 0 && p.samples == 4 && p.threads.n == 1,
	   "rounds: the importer streams all 4 samples, thread named");
	prof_profile_free(&p);
}

static void test_errors(void)
{
	struct prof_profile p;

	prof_profile_init(&p);
	is_u64((uint64_t)-perfdata_read("/nonexistent/perf.data", &p, NULL), ENOENT,
	       "missing file: -ENOENT");
	is_u64((uint64_t)-perfdata_read("tests/unit/tap.h", &p, NULL), EINVAL,
	       "not a perf.data: -EINVAL");
	is_u64((uint64_t)-perfdata_read("tests", &p, NULL), EISDIR, "directory: -EISDIR");
	prof_profile_free(&p);
	is_u64(perfdata_probe(SEEDS "fp.data"), 1, "probe: a perf.data");
	is_u64(perfdata_probe("tests/unit/tap.h"), 0, "probe: not a perf.data");
	is_u64((uint64_t)-perfdata_probe("/nonexistent"), ENOENT, "probe: missing file");
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--flat"))
		return print_flat(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "--folded"))
		return print_folded(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "--time"))
		return time_import(argv[2]);
	if (argc != 1) {
		fprintf(stderr, "usage: %s [--flat|--folded|--time PERF.DATA]\n", argv[0]);
		return 2;
	}
	test_seed("fp.data", 11, "fp");
	test_seed("dwarf.data", 7, "dwarf");
	test_seed("pipe.data", 7, "fp");
#ifdef HAVE_ZSTD
	test_seed("zstd.data", 7, "fp");
#endif
	{
		struct prof_profile p;
		struct perfdata_info info;
		prof_profile_init(&p);
		ok(perfdata_read(SEEDS "two-events.data", &p, &info) == 0, "two-events: imports");
		is_u64(p.samples, 8, "two-events: the first event's 8 samples");
		is_u64(info.other_samples, 8, "two-events: task-clock's 8 counted as others");
		prof_profile_free(&p);
	}
	test_synthetic();
	test_exec_identity();
	test_rounds();
	test_errors();
	return done_testing();
}
