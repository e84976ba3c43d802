/*
 * data.c - unit tests for the prof.data writer and reader: exact round
 * trip of a recorder-like profile, crash safety (the file cut at every
 * byte reads back a consistent prefix), corrupt and future input, the
 * writer's file handling (FILE.old, symlinks, write errors).
 *
 * Extra modes (not run by make check):
 *   data.t --generate FILE N [--no-cpu-ns]
 *                              write an N-sample recording (each with a
 *                              PROF_M_CPU_NS companion unless --no-cpu-ns;
 *                              10% with off-CPU intervals), print bytes and
 *                              read/aggregate time per sample
 *   data.t --write-seeds DIR   write the fuzz seed corpus
 */
#include "tap.h"
#include "profgen.h"
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmpdir[] = "/tmp/prof-data-test.XXXXXX";

static char *tmp(const char *name)
{
	return xasprintf("%s/%s", tmpdir, name);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* One line per aggregate, independent of ids: thread;stack=values. */
static void canon(const struct prof_profile *p, struct strbuf *out, bool derive_cpu)
{
	VEC(char *) lines = { 0 };

	for (size_t i = 0; i < p->aggs.n; i++) {
		const struct prof_agg *a = &p->aggs.v[i];
		const struct prof_thread *t = &p->threads.v[a->thread];
		struct strbuf sb = STRBUF_INIT;
		sb_addf(&sb, "%u/%u/%s", t->pid, t->tid, prof_str(p, t->comm));
		for (uint32_t n = a->node; n; n = p->nodes.v[n].parent) {
			const struct prof_frame *f = &p->frames.v[p->nodes.v[n].frame];
			const struct prof_module *m = &p->modules.v[f->module];
			sb_addf(&sb, ";%s@%s:%s:%u:%llx:%d%d:%s:%u", prof_str(p, f->func),
				prof_str(p, m->path), prof_str(p, f->file), f->line,
				(unsigned long long)f->addr, f->kind, f->inlined,
				prof_str(p, m->build_id), m->flags);
		}
		for (int m = 0; m < PROF_METRIC_COUNT; m++) {
			uint64_t v = a->value[m];
			if (m == PROF_M_CPU_NS && derive_cpu)
				v = a->value[PROF_M_SAMPLES] * p->period_ns;
			sb_addf(&sb, " %llu", (unsigned long long)v);
		}
		VEC_PUSH(&lines, sb.buf);
	}
	qsort(lines.v, lines.n, sizeof(char *), cmp_str);
	for (size_t i = 0; i < lines.n; i++) {
		sb_adds(out, lines.v[i]);
		sb_addch(out, '\n');
		free(lines.v[i]);
	}
	VEC_FREE(&lines);
}

static void test_round_trip(bool with_cpu_ns)
{
	struct prof_profile p, q;
	struct prof_read_info info;
	char *path = tmp(with_cpu_ns ? "rt-cpu.data" : "rt.data");
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;

	prof_profile_init(&p);
	prof_profile_init(&q);
	is_u64(gen_recording(path, &p, 5000, 700, with_cpu_ns), 0, "write 5000 samples");
	is_u64(prof_data_read(path, &q, &info), 0, "read back");
	ok(info.complete && !info.truncated, "complete, not truncated");
	is_u64(info.dropped, 0, "nothing dropped");
	canon(&p, &a, !with_cpu_ns);
	canon(&q, &b, false);
	ok(a.len > 1000 && !strcmp(a.buf, b.buf), "every aggregate identical (%s CPU_NS)",
	   with_cpu_ns ? "stored" : "derived");
	is_u64(q.samples, p.samples, "samples");
	is_u64(q.samples_truncated, p.samples_truncated, "samples_truncated");
	is_u64(q.period_ns, GEN_PERIOD_NS, "period_ns");
	is_u64(q.start_ns, p.start_ns, "start_ns");
	is_u64(q.end_ns, p.end_ns, "end_ns");
	is_u64(prof_total(&q, PROF_M_CPU_NS), p.samples * GEN_PERIOD_NS,
	       "CPU_NS counted once");
	is_str(prof_meta_get(&q, "frequency"), "1000", "changed meta re-emitted");
	is_str(prof_str(&q, q.threads.v[prof_thread_intern(&q, 100, 101, NULL)].comm),
	       "renamed", "changed comm re-emitted");
	is_u64(q.threads.n, p.threads.n, "threads");
	prof_profile_free(&p);
	prof_profile_free(&q);
	sb_release(&a);
	sb_release(&b);
	free(path);
}

static uint8_t *slurp(const char *path, size_t *len)
{
	return (uint8_t *)read_file(path, len);
}

static void quiet_stderr(bool on)
{
	static int saved = -1;

	fflush(stderr);
	if (on) {
		saved = dup(2);
		int fd = open("/dev/null", O_WRONLY);
		dup2(fd, 2);
		close(fd);
	} else if (saved >= 0) {
		dup2(saved, 2);
		close(saved);
	}
}

static void test_every_cut(void)
{
	struct prof_profile p;
	char *path = tmp("cut.data");
	size_t len, bad = 0, nonmono = 0, jumps = 0, header_ok = 0, boundaries = 0, empty = 0;
	uint64_t prev = 0;

	prof_profile_init(&p);
	gen_recording(path, &p, 1500, 100, true);
	uint64_t full = p.samples;
	prof_profile_free(&p);
	uint8_t *buf = slurp(path, &len);

	quiet_stderr(true);
	for (size_t cut = 0; cut <= len; cut++) {
		struct prof_profile q;
		struct prof_read_info info;
		prof_profile_init(&q);
		int ret = prof_data_read_mem(buf, cut, &q, &info);
		if (cut < 9) {
			bad += ret != -EINVAL;
		} else if (ret == -ENODATA && prev == 0) {
			empty++;	/* cut before the first flush wrote a sample */
		} else if (ret) {
			bad++;
		} else {
			header_ok++;
			uint64_t got = prof_total(&q, PROF_M_SAMPLES);
			uint64_t cpu = prof_total(&q, PROF_M_CPU_NS);
			/* One more byte completes at most one sample (each
			 * takes two or more): a jump means samples before
			 * the cut were held back.  A cut between a sample
			 * and its CPU_NS companion lacks that one period. */
			nonmono += got < prev || got > prev + 1 || got > full ||
				   q.samples < got ||
				   (cpu != got * GEN_PERIOD_NS && cpu != (got - 1) * GEN_PERIOD_NS);
			jumps += got > prev + 1;
			prev = got;
			boundaries += !info.truncated;
			bad += info.complete != (cut == len);
			bad += info.dropped != 0;
		}
		prof_profile_free(&q);
	}
	quiet_stderr(false);
	is_u64(bad, 0, "every cut of a %zu-byte file: header cuts rejected, others load", len);
	ok(empty > 0 && empty < len / 4,
	   "cuts before the first sample are refused as holding nothing (%zu)", empty);
	is_u64(nonmono, 0, "samples read grow with the cut, one at most per byte, and stay consistent");
	is_u64(jumps, 0, "no cut holds back a whole record's samples");
	is_u64(prev, full, "the whole file has every sample");
	ok(boundaries > 100 && boundaries < header_ok, "some cuts fall on record boundaries (%zu)",
	   boundaries);
	free(buf);
	free(path);
}

static void test_corrupt_and_future(void)
{
	struct prof_profile p;
	struct prof_read_info info;
	char *path = tmp("c.data");
	size_t len;

	prof_profile_init(&p);
	gen_recording(path, &p, 300, 50, true);
	prof_profile_free(&p);
	uint8_t *buf = slurp(path, &len);
	uint8_t *mod = xmalloc(len + 64);

	quiet_stderr(true);
	prof_profile_init(&p);
	is_u64(prof_data_read_mem((const uint8_t *)"GIF89a..........", 16, &p, &info),
	       (uint64_t)-EINVAL, "not a prof.data file");
	prof_profile_free(&p);

	memcpy(mod, buf, len);
	mod[8] = 2;
	prof_profile_init(&p);
	is_u64(prof_data_read_mem(mod, len, &p, &info), (uint64_t)-EINVAL, "future version");
	prof_profile_free(&p);

	/* An unknown record type right after the header is skipped. */
	memcpy(mod, buf, 9);
	memcpy(mod + 9, "\x7f\x05hello", 7);
	memcpy(mod + 16, buf + 9, len - 9);
	prof_profile_init(&p);
	is_u64(prof_data_read_mem(mod, len + 7, &p, &info), 0, "unknown record skipped");
	ok(info.complete && p.samples == 300, "and the rest is read (%llu samples)",
	   (unsigned long long)p.samples);
	prof_profile_free(&p);

	/* A node whose parent is itself (delta 0) is corrupt. */
	static const uint8_t bad_node[] = "PROFDATA\x01\x01\x01x\x02\x02\x01\x00\x00"
		"\x03\x07\x01\x00\x00\x01\x00\x00\x00\x04\x02\x00\x00";
	prof_profile_init(&p);
	is_u64(prof_data_read_mem(bad_node, sizeof(bad_node) - 1, &p, &info),
	       (uint64_t)-EINVAL, "self-parented node rejected");
	prof_profile_free(&p);
	static const uint8_t bad_len[] = "PROFDATA\x01\x01\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01";
	prof_profile_init(&p);
	is_u64(prof_data_read_mem(bad_len, sizeof(bad_len) - 1, &p, &info),
	       (uint64_t)-EINVAL, "over-long length varint rejected");
	prof_profile_free(&p);

	/* Random byte flips: any result but a crash (ASan runs catch more). */
	size_t loaded = 0;
	for (int i = 0; i < 3000; i++) {
		memcpy(mod, buf, len);
		for (int k = 0; k < 1 + i % 4; k++)
			mod[9 + gen_rand() % (len - 9)] = (uint8_t)gen_rand();
		prof_profile_init(&p);
		loaded += prof_data_read_mem(mod, len, &p, &info) == 0;
		prof_profile_free(&p);
	}
	quiet_stderr(false);
	ok(loaded > 0, "3000 mutated files read without a crash (%zu loaded)", loaded);
	free(mod);
	free(buf);
	free(path);
}

/* A finished recording of nothing loads ("0 samples"); an unfinished
 * file that holds nothing is refused with -ENODATA. */
static void test_empty_files(void)
{
	struct prof_profile p, q;
	struct prof_writer *w;
	struct prof_read_info info;
	char *path = tmp("empty.data");

	prof_profile_init(&p);
	prof_meta_set(&p, "event", "cpu-clock");
	is_u64(prof_writer_open(&w, path), 0, "open");
	is_u64(prof_writer_commit(w), 0, "commit: the recording started");
	is_u64(prof_writer_flush(w, &p), 0, "flush definitions, no sample");
	prof_writer_abort(w);		/* as if the recorder were killed */
	prof_profile_init(&q);
	quiet_stderr(true);
	int ret = prof_data_read(path, &q, &info);
	quiet_stderr(false);
	is_u64(ret, (uint64_t)-ENODATA, "unfinished, no sample: -ENODATA");
	prof_profile_free(&q);

	unlink(path);
	is_u64(prof_writer_open(&w, path), 0, "open again");
	is_u64(prof_writer_close(w, &p), 0, "close with no sample");
	prof_profile_init(&q);
	is_u64(prof_data_read(path, &q, &info), 0, "finished, no sample: loads");
	ok(info.complete && q.samples == 0 && q.aggs.n == 0, "complete, 0 samples");
	prof_profile_free(&q);
	prof_profile_free(&p);
	free(path);
}

static void test_writer_files(void)
{
	struct prof_profile p;
	struct prof_writer *w;
	char *path = tmp("w.data"), *old = tmp("w.data.old"), *target = tmp("target");
	struct stat st;

	prof_profile_init(&p);
	write_all(open(path, O_WRONLY | O_CREAT, 0644), "previous", 8);
	is_u64(prof_writer_open(&w, path), 0, "open over an existing file");
	is_u64(prof_writer_close(w, &p), 0, "close an empty recording");
	ok(stat(old, &st) == 0 && st.st_size == 8, "existing file kept as FILE.old");

	int fd = open(target, O_WRONLY | O_CREAT, 0644);
	write_all(fd, "precious", 8);
	close(fd);
	unlink(path);
	unlink(old);
	ok(symlink(target, path) == 0, "symlink planted at the output path");
	is_u64(prof_writer_open(&w, path), 0, "open over a symlink");
	prof_writer_close(w, &p);
	size_t len;
	char *t = read_file(target, &len);
	ok(t && !strcmp(t, "precious"), "symlink target untouched");
	free(t);
	ok(lstat(path, &st) == 0 && S_ISREG(st.st_mode), "output is a regular file");
	ok(lstat(old, &st) == 0 && S_ISLNK(st.st_mode), "the symlink itself moved to .old");

	/* A recording that never started leaves the files as they were. */
	unlink(old);
	is_u64(prof_writer_open(&w, path), 0, "open over a recording");
	is_u64(prof_writer_flush(w, &p), 0, "write before the start");
	ok(lstat(old, &st) < 0 && lstat(path, &st) == 0 && S_ISREG(st.st_mode),
	   "before the commit: no .old, the old file in place");
	prof_writer_abort(w);
	ok(lstat(old, &st) < 0 && lstat(path, &st) == 0, "aborted before the start: nothing moved");
	char *dirbuf = xstrdup(path);
	DIR *dir = opendir(dirname(dirbuf));
	struct dirent *de;
	int temps = 0;
	while (dir && (de = readdir(dir)))
		temps += !strncmp(de->d_name, ".w.data.", 8);
	if (dir)
		closedir(dir);
	free(dirbuf);
	is_u64((uint64_t)temps, 0, "no temporary file left behind");

	/* A write error (here EFBIG from RLIMIT_FSIZE, like ENOSPC) is returned. */
	struct rlimit rl, small = { 16384, 0 };
	getrlimit(RLIMIT_FSIZE, &rl);
	small.rlim_max = rl.rlim_max;
	signal(SIGXFSZ, SIG_IGN);
	char *big = tmp("big.data");
	setrlimit(RLIMIT_FSIZE, &small);
	prof_profile_free(&p);
	prof_profile_init(&p);
	int ret = gen_recording(big, &p, 3000, 100, true);
	setrlimit(RLIMIT_FSIZE, &rl);
	is_u64(ret, (uint64_t)-EFBIG, "write error reported as a negative errno");
	struct prof_profile q;
	struct prof_read_info info;
	prof_profile_init(&q);
	is_u64(prof_data_read(big, &q, &info), 0, "what was written before the error reads back");
	ok(!info.complete && q.samples > 0 && q.samples < 3000, "partial: %llu samples",
	   (unsigned long long)q.samples);
	prof_profile_free(&q);
	prof_profile_free(&p);
	free(big);
	free(path);
	free(old);
	free(target);
}

static void test_size(void)
{
	struct prof_profile p;
	char *path = tmp("size.data");
	struct stat st;

	prof_profile_init(&p);
	gen_recording(path, &p, 20000, 1000, true);
	stat(path, &st);
	double per = (double)st.st_size / 20000;
	ok(per < 16, "%.2f bytes per sample (SAMPLES + CPU_NS, definitions included)", per);
	prof_profile_free(&p);
	free(path);
}

static void count_progress(void *arg, uint64_t done, uint64_t total)
{
	uint64_t *calls = arg;

	calls[0]++;
	calls[1] = done <= total ? total : 0;
}

/* A file written in two flushes is reported against its size while read. */
static void test_progress(void)
{
	struct prof_profile p, q;
	struct prof_writer *w;
	struct prof_read_info info;
	char *path = tmp("progress.data");
	uint64_t calls[2] = { 0, 0 };
	struct stat st;

	prof_profile_init(&p);
	prof_profile_init(&q);
	struct prof_frame f = { .func = prof_intern(&p, "caller"), .module = PROF_NONE };
	prof_frame_intern(&p, &f);
	prof_writer_open(&w, path);
	prof_writer_flush(w, &p);
	f.func = prof_intern(&p, "callee");
	prof_frame_intern(&p, &f);
	is_u64(prof_writer_close(w, &p), 0, "written in two flushes");
	is_u64(prof_data_read_progress(path, &q, &info, count_progress, calls), 0, "read back");
	ok(q.frames.n == 2 && !strcmp(prof_str(&q, q.frames.v[1].func), "callee"),
	   "frames of both flushes, each written once");
	stat(path, &st);
	ok(calls[0] >= 1 && calls[1] == (uint64_t)st.st_size, "progress reported against the file size");
	prof_profile_free(&p);
	prof_profile_free(&q);
	free(path);
}

static int generate(const char *path, size_t n, bool with_cpu_ns)
{
	struct prof_profile p, q;
	struct prof_read_info info;
	struct stat st;

	prof_profile_init(&p);
	if (gen_recording(path, &p, n, 10000, with_cpu_ns))
		return 1;
	stat(path, &st);
	prof_profile_init(&q);
	uint64_t t0 = now_ns();
	int ret = prof_data_read(path, &q, &info);
	uint64_t t1 = now_ns();
	printf("%s: %zu samples, %lld bytes, %.2f bytes/sample; read+aggregate %.3f us/sample\n",
	       path, n, (long long)st.st_size, (double)st.st_size / (double)n,
	       (double)(t1 - t0) / 1e3 / (double)n);
	prof_profile_free(&p);
	prof_profile_free(&q);
	return ret ? 1 : 0;
}

static int write_seeds(const char *dir)
{
	static const size_t sizes[] = { 0, 1, 20, 200 };
	struct prof_profile p;

	for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
		char *path = xasprintf("%s/seed-%zu.data", dir, sizes[i]);
		prof_profile_init(&p);
		unlink(path);
		if (gen_recording(path, &p, sizes[i], 7, i % 2))
			return 1;
		prof_profile_free(&p);
		free(path);
	}
	/* Lost records and renamed threads. */
	char *path = xasprintf("%s/seed-lost.data", dir);
	struct prof_writer *w;
	unlink(path);
	prof_profile_init(&p);
	if (prof_writer_open(&w, path))
		return 1;
	struct prof_frame f = { .func = prof_intern(&p, "a"), .module = PROF_NONE };
	prof_frame_intern(&p, &f);
	prof_thread_intern(&p, 1, 1, "x");
	prof_writer_lost(w, 5, 2);
	prof_writer_flush(w, &p);
	prof_thread_intern(&p, 1, 1, "y");
	int ret = prof_writer_close(w, &p);
	prof_profile_free(&p);
	free(path);
	return ret ? 1 : 0;
}

int main(int argc, char **argv)
{
	if ((argc == 4 || argc == 5) && !strcmp(argv[1], "--generate"))
		return generate(argv[2], strtoull(argv[3], NULL, 0),
				argc == 4 || strcmp(argv[4], "--no-cpu-ns"));
	if (argc == 3 && !strcmp(argv[1], "--write-seeds"))
		return write_seeds(argv[2]);
	if (!mkdtemp(tmpdir))
		return 1;
	test_round_trip(true);
	test_round_trip(false);
	test_every_cut();
	test_empty_files();
	test_corrupt_and_future();
	test_writer_files();
	test_size();
	test_progress();
	char *cmd = xasprintf("rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		ok(0, "cleanup");
	free(cmd);
	return done_testing();
}
