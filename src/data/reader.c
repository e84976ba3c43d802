/*
 * reader.c - loads a prof.data file (format: see format.c) into a struct
 * prof_profile, validating every byte: ids in range, lengths inside the
 * file, well-formed varints.  Corrupt input yields -EINVAL and one error
 * line, never a crash (tests/fuzz/fuzz_profdata.c); a file cut short
 * yields everything before the cut with info->truncated set: every whole
 * record, and every whole sample of a SAMPLES record the cut falls in.
 *
 * Design notes / invariants:
 *  - The file's ids are remapped to the model's through per-table vectors
 *    (file id -> model id).  The writer's ids equal the model's, but a
 *    reader must not trust that: the model deduplicates on insert, so a
 *    crafted file with duplicate definitions would otherwise shift ids.
 *  - A definition may only reference earlier definitions (checked), so
 *    every id stored in the model is valid and the trie is acyclic.
 *  - Samples naming a thread or node that was never defined are counted in
 *    info->dropped, not fatal: samples of a future metric are skipped the
 *    same way.
 *  - Summary numbers: the last SUMMARY/END wins, but never below what the
 *    samples themselves show (a cut between samples and their SUMMARY).
 *    PROF_M_CPU_NS is derived as samples x period_ns only when the file
 *    stored no CPU_NS sample at all, so it is never counted twice.
 */
#include "format-priv.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct cursor {
	const uint8_t *p, *end;
};

struct reader {
	const char *name;
	const uint8_t *buf;
	size_t len, pos;
	struct prof_profile *p;
	struct prof_read_info *info;
	prof_data_progress_fn *progress;
	void *progress_arg;
	const char *why;		/* what was corrupt */

	VEC(uint32_t) str, mod, frame, node, thread;

	bool have_summary, saw_cpu_ns;
	uint64_t sum[6];		/* last SUMMARY/END payload */
	uint64_t counted_samples, counted_truncated, lost_events;
	uint64_t min_time, max_time;
};

/* One varint from the cursor; false if missing or malformed. */
static inline bool get(struct cursor *c, uint64_t *v)
{
	if (c->p < c->end && *c->p < 0x80) {	/* fast path: one byte */
		*v = *c->p++;
		return true;
	}
	size_t n = varint_get(c->p, (size_t)(c->end - c->p), v);
	c->p += n;
	return n != 0;
}

/* n values in a row; false if the record ends first. */
static bool get_n(struct cursor *c, uint64_t *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!get(c, &v[i]))
			return false;
	return true;
}

static bool get_id(struct cursor *c, size_t count, uint64_t *v)
{
	return get(c, v) && *v < count;
}

static int corrupt(struct reader *r, const char *why)
{
	r->why = why;
	return -EINVAL;
}

static int read_string(struct reader *r, struct cursor *c)
{
	size_t n = (size_t)(c->end - c->p);

	if (memchr(c->p, '\0', n))
		return corrupt(r, "string with a NUL byte");
	VEC_PUSH(&r->str, strtab_intern_n(&r->p->strings, (const char *)c->p, n));
	return 0;
}

static const char *str(struct reader *r, uint64_t file_id)
{
	return prof_str(r->p, r->str.v[file_id]);
}

static int read_module(struct reader *r, struct cursor *c)
{
	uint64_t path, build_id, flags;

	if (!get_id(c, r->str.n, &path) || !get_id(c, r->str.n, &build_id) ||
	    !get(c, &flags) || flags > UINT32_MAX)
		return corrupt(r, "bad module record");
	VEC_PUSH(&r->mod, prof_module_intern(r->p, str(r, path), str(r, build_id),
					     (uint32_t)flags));
	return 0;
}

static int read_frame(struct reader *r, struct cursor *c)
{
	uint64_t func, file, line, module, addr, kind, inlined;

	if (!get_id(c, r->str.n, &func) || !get_id(c, r->str.n, &file) ||
	    !get(c, &line) || line > UINT32_MAX || !get_id(c, r->mod.n + 1, &module) ||
	    !get(c, &addr) || !get(c, &kind) || kind > PROF_FRAME_UNKNOWN ||
	    !get(c, &inlined) || inlined > 1)
		return corrupt(r, "bad frame record");
	uint64_t pc = 0;	/* appended field: absent in older files */
	if (c->p < c->end && !get(c, &pc))
		return corrupt(r, "bad frame record");
	struct prof_frame f = {
		.pc = pc,
		.func = r->str.v[func],
		.file = r->str.v[file],
		.line = (uint32_t)line,
		.module = module ? r->mod.v[module - 1] : PROF_NONE,
		.addr = addr,
		.kind = (uint8_t)kind,
		.inlined = (uint8_t)inlined,
	};
	VEC_PUSH(&r->frame, prof_frame_intern(r->p, &f));
	return 0;
}

static int read_node(struct reader *r, struct cursor *c)
{
	uint64_t delta, frame;

	/* parent = id - delta with 1 <= delta <= id: parents come first. */
	if (!get(c, &delta) || delta == 0 || delta > r->node.n ||
	    !get_id(c, r->frame.n, &frame))
		return corrupt(r, "bad node record");
	uint32_t parent = r->node.v[r->node.n - delta];
	VEC_PUSH(&r->node, prof_node_child(r->p, parent, r->frame.v[frame]));
	return 0;
}

static int read_thread(struct reader *r, struct cursor *c)
{
	uint64_t id, pid, tid, comm;

	if (!get_id(c, r->thread.n + 1, &id) || !get(c, &pid) || pid > UINT32_MAX ||
	    !get(c, &tid) || tid > UINT32_MAX || !get_id(c, r->str.n, &comm))
		return corrupt(r, "bad thread record");
	if (id == r->thread.n)
		/* each id is its own thread identity (exec starts a new one) */
		VEC_PUSH(&r->thread, prof_thread_add(r->p, (uint32_t)pid, (uint32_t)tid,
						     str(r, comm)));
	else
		r->p->threads.v[r->thread.v[id]].comm = r->str.v[comm];
	return 0;
}

static int read_meta(struct reader *r, struct cursor *c)
{
	uint64_t key, value;

	if (!get_id(c, r->str.n, &key) || !get_id(c, r->str.n, &value))
		return corrupt(r, "bad meta record");
	prof_meta_set(r->p, str(r, key), str(r, value));
	return 0;
}

static int read_resources(struct reader *r, struct cursor *c)
{
	uint64_t v[11];

	if (!get_n(c, v, ARRAY_SIZE(v)))
		return corrupt(r, "bad resources record");
	if (v[0] > UINT32_MAX || v[1] > UINT32_MAX)
		return corrupt(r, "bad resources record");
	struct prof_resources res = {
		.pid = (uint32_t)v[0], .tid = (uint32_t)v[1], .user_ns = v[2], .sys_ns = v[3],
		.vol_cs = v[4], .invol_cs = v[5], .minflt = v[6], .majflt = v[7],
		.rss_peak_bytes = v[8], .io_read_bytes = v[9], .io_write_bytes = v[10],
	};
	prof_resources_set(r->p, &res);
	return 0;
}

static int read_timeline(struct reader *r, struct cursor *c)
{
	uint64_t v[5];

	if (!get_n(c, v, ARRAY_SIZE(v)))
		return corrupt(r, "bad timeline record");
	if (v[1] > UINT32_MAX || v[3] > UINT32_MAX || v[4] > UINT32_MAX)
		return corrupt(r, "bad timeline record");
	VEC_PUSH(&r->p->timeline, ((struct prof_timeline_sample){
		.t_ns = v[0], .pid = (uint32_t)v[1], .rss_bytes = v[2],
		.cpu_pct_x100 = (uint32_t)v[3], .io_wait_pct_x100 = (uint32_t)v[4] }));
	return 0;
}

static int read_task_event(struct reader *r, struct cursor *c)
{
	uint64_t v[5];

	if (!get_n(c, v, ARRAY_SIZE(v)) || v[1] > UINT32_MAX || v[2] > UINT32_MAX)
		return corrupt(r, "bad task event record");
	if (v[3] > PROF_TASK_EXIT)
		return 0;	/* a newer writer's kind */
	VEC_PUSH(&r->p->task_events, ((struct prof_task_event){
		.t_ns = v[0], .pid = (uint32_t)v[1], .tid = (uint32_t)v[2], .kind = (uint32_t)v[3],
		.thread = v[4] && v[4] - 1 < r->thread.n ? r->thread.v[v[4] - 1] : PROF_NONE }));
	return 0;
}

/* The delta state of one SAMPLES record (restarts in every record). */
struct sample_state {
	uint64_t time, thread, node;
	uint64_t last_value[PROF_METRIC_COUNT];
};

struct sample {
	uint64_t head, time, thread, node, value;
	unsigned metric;
	bool live;		/* a block live at the end (HEAP_SAMPLES bits 5, 6) */
};

/* A HEAP_SAMPLES metric code: a block live at the end (bits 5, 6: its
 * weights, outside the delta state), or past the stored metrics. */
static void heap_metric(struct sample *s, unsigned code)
{
	if (code == PD_HEAP_LIVE_COUNT || code == PD_HEAP_LIVE_BYTES) {
		s->live = true;
		s->metric = code == PD_HEAP_LIVE_COUNT ? PROF_M_ALLOCS : PROF_M_ALLOC_BYTES;
	} else if (s->metric >= PROF_M_PEAK_BYTES) {	/* not a stored metric */
		s->metric = PROF_METRIC_COUNT;
	}
}

/*
 * Decodes the next sample at c and moves the delta state on.  False if the
 * bytes end inside it or are malformed; the state is then left untouched,
 * so a cut record's samples stop cleanly at the last whole one.
 */
static bool decode_sample(struct cursor *c, struct sample_state *st, struct sample *s,
			  unsigned metric_base)
{
	uint64_t delta;

	if (!get(c, &s->head) || !get(c, &delta))
		return false;
	s->time = st->time + (uint64_t)unzigzag(delta);
	s->thread = st->thread;
	s->node = st->node;
	if (!(s->head & PD_S_SAME_THREAD) && !get(c, &s->thread))
		return false;
	if (!(s->head & PD_S_SAME_NODE) && !get(c, &s->node))
		return false;
	unsigned code = s->head & PD_S_METRIC_MASK;
	s->metric = code + metric_base;
	s->live = false;
	if (metric_base)	/* a heap record: two codes are not metrics (format.c) */
		heap_metric(s, code);
	bool delta_coded = s->metric < PROF_METRIC_COUNT && !s->live;
	s->value = delta_coded ? st->last_value[s->metric] : 1;
	if (!(s->head & PD_S_SAME_VALUE) && !get(c, &s->value))
		return false;
	st->time = s->time;
	st->thread = s->thread;
	st->node = s->node;
	if (delta_coded)
		st->last_value[s->metric] = s->value;	/* the writer's delta state moves on */
	return true;
}

/* A heap sample kept in time order beside the profile: in heap_live (a
 * block live at the end, for the leak view) or heap_log (for the peak).
 * Apart from add_sample so that its per-sample path builds no entry. */
static void push_heap(struct prof_profile *p, const struct sample *s, uint32_t thread, uint32_t node)
{
	struct prof_timed_sample e = { .t_ns = s->time, .value = s->value, .thread = thread,
				       .node = node, .metric = s->metric };

	if (s->live)
		VEC_PUSH(&p->heap_live, e);
	else
		VEC_PUSH(&p->heap_log, e);
}

static void add_sample(struct reader *r, const struct sample *s)
{
	if (s->metric >= PROF_METRIC_COUNT || s->thread >= r->thread.n || s->node >= r->node.n) {
		r->info->dropped++;
		return;
	}
	uint32_t thread = r->thread.v[s->thread], node = r->node.v[s->node];
	if (s->live) {	/* no weight: which allocations are still live (the leak view) */
		push_heap(r->p, s, thread, node);
		return;
	}
	r->min_time = MIN(r->min_time, s->time);
	r->max_time = MAX(r->max_time, s->time);
	if (s->metric == PROF_M_SAMPLES) {
		r->counted_samples += s->value;
		if ((s->head >> PD_S_FLAGS_SHIFT) & PROF_SAMPLE_TRUNCATED)
			r->counted_truncated += s->value;
	} else if (s->metric == PROF_M_CPU_NS) {
		r->saw_cpu_ns = true;
	}
	if (s->metric >= PROF_M_HEAP_FIRST)	/* few: the peak needs them in order */
		push_heap(r->p, s, thread, node);
	if (r->p->keep_timed)
		prof_add_timed(r->p, s->time, thread, node, (enum prof_metric)s->metric, s->value);
	else	/* the per-sample path of every report: no call through the wrapper */
		prof_add(r->p, thread, node, (enum prof_metric)s->metric, s->value);
}

/*
 * A SAMPLES payload.  cut: the file ends inside this record, so c->end is
 * the end of the file; every whole sample before it is used, and a
 * failure within PD_SAMPLE_MAX_BYTES of the end is the cut, not
 * corruption.  c->p is left after the last sample used.
 */
static int read_samples(struct reader *r, struct cursor *c, bool cut, unsigned metric_base)
{
	struct sample_state st = { .thread = UINT64_MAX, .node = UINT64_MAX };
	struct sample s;

	if (!get(c, &st.time))
		return cut ? 0 : corrupt(r, "bad samples record");
	for (int m = 0; m < PROF_METRIC_COUNT; m++)
		st.last_value[m] = 1;
	while (c->p < c->end) {
		const uint8_t *start = c->p;
		if (!decode_sample(c, &st, &s, metric_base)) {
			c->p = start;
			if (cut && c->end - start < PD_SAMPLE_MAX_BYTES)
				return 0;
			return corrupt(r, "bad sample");
		}
		add_sample(r, &s);
	}
	return 0;
}

static int read_lost(struct reader *r, struct cursor *c)
{
	uint64_t time, n;

	if (!get(c, &time) || !get(c, &n))
		return corrupt(r, "bad lost record");
	r->lost_events += n;
	return 0;
}

static int read_summary(struct reader *r, struct cursor *c, bool end)
{
	for (size_t i = 0; i < ARRAY_SIZE(r->sum); i++)
		if (!get(c, &r->sum[i]))
			return corrupt(r, "bad summary record");
	r->have_summary = true;
	if (end)
		r->info->complete = true;
	return 0;
}

static int read_record(struct reader *r, unsigned type, struct cursor *c)
{
	switch (type) {
	case PD_REC_STRING: return read_string(r, c);
	case PD_REC_MODULE: return read_module(r, c);
	case PD_REC_FRAME: return read_frame(r, c);
	case PD_REC_NODE: return read_node(r, c);
	case PD_REC_THREAD: return read_thread(r, c);
	case PD_REC_META: return read_meta(r, c);
	case PD_REC_SAMPLES: return read_samples(r, c, false, 0);
	case PD_REC_HEAP_SAMPLES: return read_samples(r, c, false, PROF_M_HEAP_FIRST);
	case PD_REC_LOST: return read_lost(r, c);
	case PD_REC_SUMMARY: return read_summary(r, c, false);
	case PD_REC_END: return read_summary(r, c, true);
	case PD_REC_RESOURCES: return read_resources(r, c);
	case PD_REC_TIMELINE: return read_timeline(r, c);
	case PD_REC_TASK_EVENT: return read_task_event(r, c);
	default: return 0;	/* a newer writer's record: skip it */
	}
}

static int check_header(struct reader *r)
{
	uint64_t version;
	size_t n;

	if (r->len < PD_MAGIC_LEN || memcmp(r->buf, PD_MAGIC, PD_MAGIC_LEN)) {
		if (r->len < PD_MAGIC_LEN && !memcmp(r->buf, PD_MAGIC, r->len))
			error("'%s' is cut short inside its header (0 samples recorded)", r->name);
		else
			error("'%s' is not a prof.data file (bad magic)", r->name);
		return -EINVAL;
	}
	n = varint_get(r->buf + PD_MAGIC_LEN, r->len - PD_MAGIC_LEN, &version);
	if (!n) {
		error("'%s' is cut short inside its header (0 samples recorded)", r->name);
		return -EINVAL;
	}
	if (version != PD_VERSION) {
		error("'%s' is prof.data version %llu; this prof reads version %d (upgrade prof)",
		      r->name, (unsigned long long)version, PD_VERSION);
		return -EINVAL;
	}
	r->pos = PD_MAGIC_LEN + n;
	r->info->version = (uint32_t)version;
	return 0;
}

static void report_progress(struct reader *r, size_t *next)
{
	if (r->progress && r->pos >= *next) {
		r->progress(r->progress_arg, r->pos, r->len);
		*next = r->pos + (4u << 20);
	}
}

/* The whole samples of the SAMPLES record the file ends inside, whose
 * payload starts at byte start; r->pos moves past the last one. */
static int read_cut_samples(struct reader *r, size_t start, unsigned metric_base)
{
	struct cursor c = { r->buf + start, r->buf + r->len };
	int ret = read_samples(r, &c, true, metric_base);

	if (!ret)
		r->pos = (size_t)(c.p - r->buf);
	return ret;
}

static int read_records(struct reader *r)
{
	size_t next_progress = 0;

	while (r->pos < r->len) {
		uint64_t len;
		unsigned type = r->buf[r->pos];
		size_t avail = r->len - r->pos - 1;
		size_t n = varint_get(r->buf + r->pos + 1, avail, &len);

		if (!n && avail >= 10)
			return corrupt(r, "malformed record length");
		if (!n || len > avail - n) {
			r->info->truncated = true;
			if (n && type == PD_REC_SAMPLES)
				return read_cut_samples(r, r->pos + 1 + n, 0);
			if (n && type == PD_REC_HEAP_SAMPLES)
				return read_cut_samples(r, r->pos + 1 + n, PROF_M_HEAP_FIRST);
			break;
		}
		struct cursor c = { r->buf + r->pos + 1 + n, r->buf + r->pos + 1 + n + len };
		int ret = read_record(r, type, &c);
		if (ret < 0)
			return ret;
		r->pos += 1 + n + len;
		r->info->records++;
		report_progress(r, &next_progress);
	}
	return 0;
}

static void finish(struct reader *r)
{
	struct prof_profile *p = r->p;

	if (r->have_summary) {
		p->samples = r->sum[0];
		p->samples_truncated = r->sum[1];
		p->lost = r->sum[2];
		p->period_ns = r->sum[3];
		p->start_ns = r->sum[4];
		p->end_ns = r->sum[5];
	}
	p->samples = MAX(p->samples, r->counted_samples);
	p->samples_truncated = MAX(p->samples_truncated, r->counted_truncated);
	p->lost = MAX(p->lost, r->lost_events);
	if (r->min_time <= r->max_time) {
		if (!p->start_ns || r->min_time < p->start_ns)
			p->start_ns = r->min_time;
		p->end_ns = MAX(p->end_ns, r->max_time);
	}
	if (!r->saw_cpu_ns && p->period_ns)
		for (size_t i = 0; i < p->aggs.n; i++)
			p->aggs.v[i].value[PROF_M_CPU_NS] =
				p->aggs.v[i].value[PROF_M_SAMPLES] * p->period_ns;
	prof_timed_sort(p);
	prof_profile_heap_derive(p);
}

/*
 * A file that ends before its recorder wrote anything to show (no sample,
 * resource or timeline point, and no END record) is an error:
 * reporting it as an empty profile would pass off a broken file as a
 * recording of nothing.  A finished recording that took no sample is
 * valid and shows "0 samples".
 */
static int check_has_data(struct reader *r)
{
	const struct prof_profile *p = r->p;

	if (r->info->complete || p->aggs.n || p->resources.n || p->timeline.n)
		return 0;
	error("'%s' holds no samples: it ends at byte %zu, before the recording wrote any "
	      "(interrupted as it started?)", r->name, r->pos);
	return -ENODATA;
}

static int read_buffer(const char *name, const uint8_t *buf, size_t len,
		       struct prof_profile *p, struct prof_read_info *info,
		       prof_data_progress_fn *progress, void *arg)
{
	struct prof_read_info dummy;
	struct reader r = {
		.name = name, .buf = buf, .len = len, .p = p,
		.info = info ? info : &dummy, .progress = progress, .progress_arg = arg,
		.min_time = UINT64_MAX,
	};
	int ret;

	memset(r.info, 0, sizeof(*r.info));
	VEC_PUSH(&r.str, 0);
	VEC_PUSH(&r.node, 0);
	ret = check_header(&r);
	if (!ret) {
		ret = read_records(&r);
		if (ret < 0)
			error("'%s' is corrupt at byte %zu: %s", name, r.pos, r.why);
	}
	if (!ret)
		ret = check_has_data(&r);
	if (!ret)
		finish(&r);
	r.info->bytes = r.pos;
	VEC_FREE(&r.str);
	VEC_FREE(&r.mod);
	VEC_FREE(&r.frame);
	VEC_FREE(&r.node);
	VEC_FREE(&r.thread);
	return ret;
}

int prof_data_read_mem(const uint8_t *buf, size_t len, struct prof_profile *p,
		       struct prof_read_info *info)
{
	return read_buffer("prof.data", buf, len, p, info, NULL, NULL);
}

int prof_data_read_progress(const char *path, struct prof_profile *p,
			    struct prof_read_info *info,
			    prof_data_progress_fn *progress, void *arg)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0) {
		ret = -errno;
		error("cannot open '%s': %s", path, strerror(errno));
		return ret;
	}
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
		size_t len = (size_t)st.st_size;
		void *map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
		if (map != MAP_FAILED) {
			close(fd);
			madvise(map, len, MADV_SEQUENTIAL);
			ret = read_buffer(path, map, len, p, info, progress, arg);
			munmap(map, len);
			return ret;
		}
	}
	close(fd);
	/* Not mappable (a pipe, /dev/stdin, an empty file): read it. */
	size_t len;
	char *buf = read_file(path, &len);
	if (!buf) {
		ret = -errno;
		error("cannot read '%s': %s", path, strerror(errno));
		return ret;
	}
	ret = read_buffer(path, (const uint8_t *)buf, len, p, info, progress, arg);
	free(buf);
	return ret;
}

int prof_data_read(const char *path, struct prof_profile *p, struct prof_read_info *info)
{
	return prof_data_read_progress(path, p, info, NULL, NULL);
}
