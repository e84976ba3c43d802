/*
 * perfdata_parse.c - unit tests of the perf.data container parser
 * (src/perfdata/parse.c, sample.c) on the real perf.data seeds in
 * tests/fuzz/corpus/perfdata/ (recorded here by perf 6.1 from a tiny
 * frame-pointer program; see tests/t5100-perfdata-report.sh), plus cut and
 * corrupted copies of them, which must fail cleanly or parse what is there.
 *
 * Expected sample counts are what `perf script -F event -i SEED` prints for
 * each seed.
 */
#include "prof/perfdata.h"
#include "tap.h"
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#define SEEDS "tests/fuzz/corpus/perfdata/"

struct counts {
	uint64_t samples[4];	/* per attr index */
	uint64_t comm, mmap, bad, with_callchain, with_stack;
	bool sorted;
};

static void count(const struct perfdata_file *f, struct counts *c)
{
	uint64_t last = 0;

	memset(c, 0, sizeof(*c));
	c->sorted = true;
	for (size_t i = 0; i < f->records.n; i++) {
		const struct perfdata_record *r = &f->records.v[i];
		struct prof_perf_sample s;
		const struct perfdata_attr *attr;

		if (r->time < last)
			c->sorted = false;
		last = r->time;
		if (r->type == PERF_RECORD_COMM)
			c->comm++;
		if (r->type == PERF_RECORD_MMAP || r->type == PERF_RECORD_MMAP2)
			c->mmap++;
		if (r->type != PERF_RECORD_SAMPLE)
			continue;
		if (perfdata_decode_sample(f, r, &s, &attr)) {
			c->bad++;
			continue;
		}
		size_t idx = (size_t)(attr - f->attrs.v);
		if (idx < 4)
			c->samples[idx]++;
		c->with_callchain += s.nr_callchain > 0;
		c->with_stack += s.regs_abi && s.stack_size > 0;
	}
}

static uint8_t *load(const char *name, size_t *len)
{
	char path[256];

	snprintf(path, sizeof(path), SEEDS "%s", name);
	uint8_t *buf = (uint8_t *)read_file(path, len);
	if (!buf)
		printf("# cannot read %s: %s\n", path, strerror(errno));
	return buf;
}

static void test_seed(const char *name, uint64_t want_samples, bool callchain, bool stack)
{
	size_t len;
	uint8_t *buf = load(name, &len);
	struct perfdata_file f;
	struct counts c;

	if (!ok(buf != NULL, "%s: seed readable", name))
		return;
	if (!ok(perfdata_open(&f, buf, len) == 0, "%s: parses", name)) {
		free(buf);
		return;
	}
	count(&f, &c);
	is_u64(c.samples[0], want_samples, "%s: %llu samples of the first event, as perf script",
	       name, (unsigned long long)want_samples);
	is_u64(c.bad, 0, "%s: every sample decodes", name);
	ok(c.sorted, "%s: records sorted by time", name);
	ok(c.comm >= 1 && c.mmap >= 1, "%s: has COMM and MMAP records", name);
	is_str(f.attrs.v[0].name, "cpu-clock", "%s: event name", name);
	ok(f.hostname && *f.hostname, "%s: hostname feature", name);
	ok(f.cmdline && strstr(f.cmdline, "perf record"), "%s: cmdline feature", name);
	if (callchain)
		is_u64(c.with_callchain, c.samples[0], "%s: every sample has a callchain", name);
	if (stack)
		is_u64(c.with_stack, c.samples[0], "%s: every sample has regs and a stack", name);
	perfdata_close(&f);
	free(buf);
}

/* Streaming hands out the same records in the same order as a full sort
 * of a real perf.data (perf's rounds never go back in time there). */
static void test_stream_same(const char *name)
{
	size_t len, k = 0;
	uint8_t *buf = load(name, &len);
	struct perfdata_file full, st;
	bool same = true;

	if (!buf || perfdata_open(&full, buf, len) != 0) {
		ok(0, "%s: parses", name);
		free(buf);
		return;
	}
	if (perfdata_open_stream(&st, buf, len, false) == 0) {
		while (perfdata_next_records(&st))
			for (size_t i = 0; i < st.records.n; i++, k++)
				same &= k < full.records.n && st.records.v[i].data == full.records.v[k].data;
		perfdata_close(&st);
	}
	ok(same && k == full.records.n, "%s: streamed records (%zu) = sorted records (%zu)", name, k,
	   full.records.n);
	perfdata_close(&full);
	free(buf);
}

/* Every prefix and a set of byte flips must parse or fail, never crash. */
static void test_damage(const char *name)
{
	size_t len;
	uint8_t *buf = load(name, &len);
	int parsed = 0, failed = 0;

	if (!buf)
		return;
	/* The failures each print their one error line; keep the TAP output readable. */
	int saved = dup(2), devnull = open("/dev/null", O_WRONLY);
	dup2(devnull, 2);
	for (size_t cut = 0; cut < len; cut += 1 + cut / 16) {
		uint8_t *copy = xmalloc(cut + 1);
		struct perfdata_file f;
		memcpy(copy, buf, cut);
		if (perfdata_open(&f, copy, cut) == 0) {
			struct counts c;
			count(&f, &c);
			perfdata_close(&f);
			parsed++;
		} else {
			failed++;
		}
		free(copy);
	}
	for (size_t pos = 0; pos < len; pos += 7) {
		struct perfdata_file f;
		buf[pos] ^= 0xa5;
		if (perfdata_open(&f, buf, len) == 0) {
			struct counts c;
			count(&f, &c);
			perfdata_close(&f);
		}
		buf[pos] ^= 0xa5;
	}
	dup2(saved, 2);
	close(saved);
	close(devnull);
	ok(parsed > 0 && failed > 0, "%s: cut copies parse (%d) or fail cleanly (%d)", name,
	   parsed, failed);
	free(buf);
}

static void test_not_perf_data(void)
{
	static const uint8_t junk[] = "PROFDATA and then some more bytes here";
	struct perfdata_file f;

	ok(perfdata_open(&f, junk, sizeof(junk)) == -EINVAL, "non-perf.data input is refused");
	ok(!perfdata_is_perf_data(junk, sizeof(junk)), "magic check says no");
}

int main(void)
{
	prof_quiet = 1;
	test_seed("fp.data", 11, true, false);
	test_seed("dwarf.data", 7, false, true);
	test_seed("pipe.data", 7, true, false);
#ifdef HAVE_ZSTD
	test_seed("zstd.data", 7, true, false);
#endif
	{
		size_t len;
		uint8_t *buf = load("two-events.data", &len);
		struct perfdata_file f;
		struct counts c;
		if (buf && perfdata_open(&f, buf, len) == 0) {
			count(&f, &c);
			is_u64(f.attrs.n, 2, "two-events: two attrs");
			is_u64(c.samples[0], 8, "two-events: 8 cpu-clock samples");
			is_u64(c.samples[1], 8, "two-events: 8 task-clock samples");
			is_str(f.attrs.v[1].name, "task-clock", "two-events: second name");
			perfdata_close(&f);
		} else {
			ok(0, "two-events parses");
		}
		free(buf);
	}
	test_stream_same("fp.data");
	test_stream_same("dwarf.data");
	test_stream_same("killed.data");
	test_stream_same("two-events.data");
	test_damage("fp.data");
	test_damage("pipe.data");
	test_not_perf_data();
	return done_testing();
}
