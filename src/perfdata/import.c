/*
 * import.c - the perf.data driver of the replay engine
 * (include/prof/replay.h): hands the records of a parsed perf.data (see
 * parse.c), round by round in time order, to the engine that keeps the
 * address spaces and threads and turns samples into trie nodes; its
 * consumers here add the samples of the imported event to the profile's
 * aggregates, sum the LOST counts and check mapped files' build-ids.
 *
 * Design notes / invariants:
 *  - Only one event is imported: the first that is not perf's "dummy"
 *    sideband event (im->main).  Samples of other events are counted in
 *    info->other_samples and, if there are any, a warning names the one kept.
 *  - A stack is "truncated" (p->samples_truncated) when the dwarf unwind
 *    stopped early, or an fp callchain filled the kernel's depth limit.
 */
#include "prof/perfdata.h"
#include "prof/replay.h"
#include "prof/symbol.h"
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct importer {
	struct prof_profile *p;
	struct perfdata_info *info;
	struct perfdata_file *f;
	const struct perfdata_attr *main;	/* the event imported */
	struct prof_replay *rp;
	bool clock_event;		/* cpu-clock / task-clock: period is ns */
	uint64_t lost_records, lost_samples;	/* LOST / LOST_SAMPLES sums */
};

/* ---- consumers of the engine ------------------------------------------------ */

static void on_sample(void *arg, const struct prof_replay_sample *rs)
{
	struct importer *im = arg;

	prof_add_timed(im->p, rs->s->time, rs->thread, rs->node, PROF_M_SAMPLES, 1);
	if (im->clock_event)
		prof_add_timed(im->p, rs->s->time, rs->thread, rs->node, PROF_M_CPU_NS, rs->s->period);
	prof_replay_count_sample(im->p, rs->s->time, rs->complete);
	im->info->samples++;
	im->info->unwound_complete += rs->complete;
}

/* The build-id perf recorded for path ("" if none): the engine never
 * symbolizes the mapping with a file that has another one. */
static const char *recorded_build_id(void *arg, const char *path)
{
	const struct importer *im = arg;

	for (size_t i = 0; i < im->f->build_ids.n; i++)
		if (!strcmp(im->f->build_ids.v[i].filename, path))
			return im->f->build_ids.v[i].hex;
	return "";
}

/*
 * perf record (6.x) ends with LOST_SAMPLES records it synthesizes from each
 * event's PERF_FORMAT_LOST count, which already includes the ring-buffer
 * drops the kernel reported as LOST records: the two overlap, so the
 * importer keeps both sums and reports the larger (see finish_lost()).
 */
static void on_lost(void *arg, const void *event, uint32_t type, uint64_t time, uint64_t n)
{
	struct importer *im = arg;

	if (type == PERF_RECORD_LOST)
		im->lost_records += n;
	else
		im->lost_samples += n;
}

static const struct prof_replay_ops import_ops = {
	.sample = on_sample,
	.lost = on_lost,
};

static void finish_lost(struct importer *im)
{
	uint64_t n = MAX(im->lost_records, im->lost_samples);

	im->p->lost += n;
	im->info->lost += n;
}

/*
 * Peak memory: pages of the mapped file that no remaining record needs are
 * given back as replay advances (a batch is sorted by time, and perf
 * writes records in roughly time-ordered rounds, so the lowest offset still
 * needed climbs steadily).  Only for our own read-only private mapping:
 * dropped pages read back from the file if touched again.  Returns, per
 * record index of the batch, the lowest file offset any record from there
 * on (this batch's or a later one's) uses.
 */
static size_t *needed_from(const struct perfdata_file *f)
{
	size_t n = f->records.n, *low = xmalloc((n + 1) * sizeof(*low));

	low[n] = perfdata_pending_low(f);
	for (size_t i = n; i-- > 0;) {
		const uint8_t *d = f->records.v[i].data;
		size_t off = d >= f->buf && d < f->buf + f->len ? (size_t)(d - f->buf) : f->len;
		low[i] = MIN(low[i + 1], off);	/* decompressed records: not in the map */
	}
	return low;
}

/* One record to the engine, with the attr that lays it out. */
static void replay_record(struct importer *im, const struct perfdata_record *r)
{
	const struct perfdata_attr *a;
	int ret;

	im->info->records++;
	if (r->type == PERF_RECORD_SAMPLE) {
		if (!(a = perfdata_sample_attr(im->f, r))) {
			im->info->bad_samples++;
			return;
		}
		if (a != im->main) {
			im->info->other_samples++;
			return;
		}
	} else if (!(a = perfdata_record_attr(im->f, r))) {
		a = im->main;	/* no trailer: only its absence matters */
	}
	ret = prof_replay_record(im->rp, &a->attr, a, (const void *)r->data);
	if (ret < 0)
		im->info->bad_samples++;
	else if (ret == PROF_REPLAY_UNUSED)
		im->info->skipped++;
}

/*
 * The import is bound by memory latency: each sample's registers and
 * stack copy are cold (8 KiB apart, visited in time order, not file
 * order).  Asking for the first 2 KiB of the record two places ahead
 * while this one is unwound cut a 30k-sample DWARF import from ~60 to
 * ~53 ms of CPU (perf stat -r 15, interleaved; distances 2-8 and
 * 1-4 KiB all gave the same).
 */
static void prefetch_record(const struct perfdata_file *f, size_t i)
{
	if (i >= f->records.n)
		return;
	const struct perfdata_record *r = &f->records.v[i];
	for (uint32_t k = 0; k < r->size && k < 2048; k += 64)
		__builtin_prefetch(r->data + k);
}

static void replay(struct importer *im)
{
	struct perfdata_file *f = im->f;

	f->released = 0;	/* a full scan at open gave its pages back: start over */
	while (perfdata_next_records(f)) {
		size_t *low = f->release_behind ? needed_from(f) : NULL;
		for (size_t i = 0; i < f->records.n; i++) {
			if (low)
				perfdata_release_behind(f, f->buf + low[i]);
			prefetch_record(f, i + 2);
			replay_record(im, &f->records.v[i]);
		}
		free(low);
		prof_replay_batch_end(im->rp);
	}
}

/* ---- meta ----------------------------------------------------------------------- */

static const char *fallback_event_name(const struct perf_event_attr *a)
{
	static const char *const sw[] = { "cpu-clock", "task-clock", "page-faults",
					  "context-switches", "cpu-migrations" };
	static const char *const hw[] = { "cycles", "instructions" };

	if (a->type == PERF_TYPE_SOFTWARE && a->config < ARRAY_SIZE(sw))
		return sw[a->config];
	if (a->type == PERF_TYPE_HARDWARE && a->config < ARRAY_SIZE(hw))
		return hw[a->config];
	return "unknown";
}

/* "cpu-clock:u" -> "cpu-clock", but "sched:sched_switch" stays whole. */
static char *event_base_name(const char *name)
{
	const char *colon = strrchr(name, ':');

	if (colon && colon[1] && strspn(colon + 1, "ukhGHpPSDIWe") == strlen(colon + 1))
		return xstrndup(name, (size_t)(colon - name));
	return xstrdup(name);
}

static void set_meta(struct importer *im)
{
	const struct perfdata_file *f = im->f;
	const struct perf_event_attr *a = &im->main->attr;
	const char *name = *im->main->name ? im->main->name : fallback_event_name(a);
	char buf[32];
	char *event = event_base_name(name);

	prof_meta_set(im->p, "event", event);
	free(event);
	if (a->freq) {
		snprintf(buf, sizeof(buf), "%llu", (unsigned long long)a->sample_freq);
		prof_meta_set(im->p, "frequency", buf);
	}
	if (im->clock_event) {
		uint64_t period = a->freq ? (a->sample_freq ? 1000000000ULL / a->sample_freq : 0)
					  : a->sample_period;
		im->p->period_ns = period;
		snprintf(buf, sizeof(buf), "%llu", (unsigned long long)period);
		prof_meta_set(im->p, "period_ns", buf);
	}
	if (f->cmdline) {
		const char *cmd = strstr(f->cmdline, " -- ");
		prof_meta_set(im->p, "command", cmd ? cmd + 4 : f->cmdline);
	}
	if (f->hostname)
		prof_meta_set(im->p, "hostname", f->hostname);
	if (f->osrelease)
		prof_meta_set(im->p, "kernel", f->osrelease);
	if (f->version)
		prof_meta_set(im->p, "perf_version", f->version);
	prof_meta_set(im->p, "callgraph",
		      (a->sample_type & PERF_SAMPLE_STACK_USER) ? "dwarf" :
		      (a->sample_type & PERF_SAMPLE_CALLCHAIN) ? "fp" : "none");
	if (a->sample_type & PERF_SAMPLE_STACK_USER) {
		prof_meta_set(im->p, "unwinder", "libdw");
		snprintf(buf, sizeof(buf), "%u", a->sample_stack_user);
		prof_meta_set(im->p, "stack_size", buf);
	}
	prof_meta_set(im->p, "source", "perf.data");
}

/* The first event that is not perf's "dummy" (sideband-only) event. */
static const struct perfdata_attr *main_attr(const struct perfdata_file *f)
{
	for (size_t i = 0; i < f->attrs.n; i++) {
		const struct perf_event_attr *a = &f->attrs.v[i].attr;
		if (!(a->type == PERF_TYPE_SOFTWARE && a->config == PERF_COUNT_SW_DUMMY))
			return &f->attrs.v[i];
	}
	return &f->attrs.v[0];
}

/* ---- entry points --------------------------------------------------------------- */

static int read_buffer(const char *name, const uint8_t *buf, size_t len,
		       struct prof_profile *p, struct perfdata_info *info, bool file_map);

int perfdata_read_mem(const uint8_t *buf, size_t len, struct prof_profile *p,
		      struct perfdata_info *info)
{
	return read_buffer("perf.data", buf, len, p, info, false);
}

/*
 * A perf.data without one sample of the imported event has nothing to
 * report: an error with the reason, never an empty table that looks like
 * a profile of an idle program.  0 or -ENODATA (error() printed).
 */
static int check_has_samples(const char *name, const struct perfdata_info *info,
			     const char *event)
{
	if (info->samples)
		return 0;
	if (info->other_samples)
		error("'%s' holds no samples of '%s', the event prof imports (%" PRIu64
		      " samples of other events)", name, event ? event : "?", info->other_samples);
	else
		error("'%s' holds no samples (%" PRIu64 " records%s; perf recorded nothing to show)",
		      name, info->records, info->truncated ? ", cut short" : "");
	return -ENODATA;
}

static int read_buffer(const char *name, const uint8_t *buf, size_t len,
		       struct prof_profile *p, struct perfdata_info *info, bool file_map)
{
	struct perfdata_info dummy;
	struct perfdata_file f;
	struct importer im = { .p = p };

	info = info ? info : &dummy;
	memset(info, 0, sizeof(*info));
	if (perfdata_open_stream(&f, buf, len, file_map))
		return -EINVAL;

	im.info = info;
	im.f = &f;
	im.main = main_attr(&f);
	const struct perf_event_attr *a = &im.main->attr;
	im.clock_event = a->type == PERF_TYPE_SOFTWARE &&
			 (a->config == PERF_COUNT_SW_CPU_CLOCK || a->config == PERF_COUNT_SW_TASK_CLOCK);
	struct prof_replay_config cfg = { .p = p, .unwinder = PROF_UNWIND_LIBDW,
					  .kernel_release = f.osrelease,
					  .build_id_of = recorded_build_id, .build_id_arg = &im };
	im.rp = prof_replay_new(&cfg);
	prof_replay_add_consumer(im.rp, &import_ops, &im);
	set_meta(&im);
	replay(&im);
	finish_lost(&im);
	prof_timed_sort(p);
	info->pipe = f.pipe;	/* known once the stream was read */
	info->compressed = f.compressed;
	info->truncated = f.truncated;
	info->nr_attrs = (uint32_t)f.attrs.n;
	info->skipped += f.skipped;
	int ret = check_has_samples(name, info, prof_meta_get(p, "event"));
	if (!ret && info->other_samples)
		warning("perf.data has %zu events; imported the first, '%s', only (%" PRIu64
			" samples of the others ignored)",
			f.attrs.n, prof_meta_get(p, "event"), info->other_samples);

	prof_replay_free(im.rp);
	perfdata_close(&f);
	return ret;
}

/* "-": a pipe-mode stream on stdin (perf record -o - | prof report -i -). */
static int read_stdin(struct prof_profile *p, struct perfdata_info *info)
{
	struct strbuf sb = STRBUF_INIT;
	char chunk[65536];
	ssize_t n;

	while ((n = read(0, chunk, sizeof(chunk))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;
			sb_release(&sb);
			error("cannot read perf.data from stdin: %s", strerror(e));
			return -e;
		}
		sb_add(&sb, chunk, (size_t)n);
	}
	int ret = read_buffer("stdin", (const uint8_t *)sb_str(&sb), sb.len, p, info, false);
	sb_release(&sb);
	return ret;
}

int perfdata_probe(const char *path)
{
	char magic[8];
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, magic, sizeof(magic));
	close(fd);
	return n == (ssize_t)sizeof(magic) && perfdata_is_perf_data(magic, sizeof(magic));
}

int perfdata_read(const char *path, struct prof_profile *p, struct perfdata_info *info)
{
	struct stat st = { 0 };

	if (!strcmp(path, "-"))
		return read_stdin(p, info);
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		int e = errno;
		error("cannot open '%s': %s", path, strerror(e));
		return -e;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		int e = S_ISDIR(st.st_mode) ? EISDIR : S_ISREG(st.st_mode) ? errno : EINVAL;
		close(fd);
		error("cannot read '%s': %s", path,
		      e == EISDIR ? "is a directory (perf.data directory format is not supported)"
				  : strerror(e));
		return -e;
	}
	if (st.st_size == 0) {
		close(fd);
		error("'%s' is empty (perf record wrote nothing)", path);
		return -EINVAL;
	}
	/* mmap, not read: perf.data files can be larger than memory */
	void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	int e = errno;
	close(fd);
	if (map == MAP_FAILED) {
		error("cannot map '%s': %s", path, strerror(e));
		return -e;
	}
	madvise(map, (size_t)st.st_size, MADV_SEQUENTIAL);
	int ret = read_buffer(path, map, (size_t)st.st_size, p, info, true);
	munmap(map, (size_t)st.st_size);
	return ret;
}
