/*
 * pprof.c - export a profile as pprof's profile.proto, gzipped, so `go tool
 * pprof`, pprof.me, Speedscope and Perfetto can read it.  Encoded by hand
 * with src/output/protobuf.c (no generated code).
 *
 * Design notes / invariants:
 *  - string_table[0] is "" because our local strtab's id 0 is "".
 *  - One Mapping per model module (id = module + 1), with its build_id and
 *    has_functions/filenames/line_numbers/inline_frames set: we symbolized
 *    already, so pprof must not try again.  Addresses are module-relative
 *    (file vaddr) and every mapping starts at 0: we do not keep load bases.
 *  - One Location per distinct (pc frame + the inlined frames above it):
 *    our model keeps an inlined function as its own frame, inner to the
 *    frame it was inlined into; pprof wants them as Location.line[],
 *    innermost first, the last line being the real (non-inlined) function.
 *  - One Function per (name, file).
 *  - record --heap adds Go's heap sample types (alloc_objects, alloc_space,
 *    inuse_objects, inuse_space) and peak_space; --metric picks the default.
 *  - One Sample per (thread, stack) aggregate that passes the view's
 *    filters with a weight in any sample type (not only the view's
 *    metric), with pid/tid/thread labels, and one value per sample_type.
 */
#include "prof/output.h"
#include "output-priv.h"
#include <errno.h>
#include <string.h>
#include <time.h>

/* m: a stored metric, or one of these derived ones */
enum { INUSE_OBJECTS = PROF_METRIC_COUNT + 1, INUSE_SPACE };
struct metric_type { enum prof_metric m; const char *type, *unit; bool always; };
static const struct metric_type metric_types[] = {
	{ PROF_M_SAMPLES, "samples", "count", true },
	{ PROF_M_CPU_NS, "cpu", "nanoseconds", true },
	{ PROF_M_OFFCPU_NS, "off_cpu", "nanoseconds", false },
	{ PROF_M_IOWAIT_NS, "io_wait", "nanoseconds", false },
	{ PROF_M_UNINT_NS, "uninterruptible", "nanoseconds", false },
	{ PROF_M_SLEEP_NS, "sleep", "nanoseconds", false },
	{ PROF_M_PREEMPT_NS, "preempted", "nanoseconds", false },
	/* --metric=wall: on-CPU plus off-CPU ns (present with off-CPU data) */
	{ PROF_METRIC_COUNT, "wall", "nanoseconds", false },
	/* record --heap: Go's heap profile types (go tool pprof -sample_index=...),
	 * inuse = allocated minus freed, and the bytes live at the peak */
	{ PROF_M_ALLOCS, "alloc_objects", "count", false },
	{ PROF_M_ALLOC_BYTES, "alloc_space", "bytes", false },
	{ (enum prof_metric)INUSE_OBJECTS, "inuse_objects", "count", false },
	{ (enum prof_metric)INUSE_SPACE, "inuse_space", "bytes", false },
	{ PROF_M_PEAK_BYTES, "peak_space", "bytes", false },
};

static uint64_t sub0(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

static uint64_t mt_value(const struct metric_type *t, const struct prof_agg *a)
{
	if (t->m == PROF_METRIC_COUNT)
		return a->value[PROF_M_CPU_NS] + a->value[PROF_M_OFFCPU_NS];
	if ((unsigned)t->m == INUSE_OBJECTS)
		return sub0(a->value[PROF_M_ALLOCS], a->value[PROF_M_FREES]);
	if ((unsigned)t->m == INUSE_SPACE)
		return sub0(a->value[PROF_M_ALLOC_BYTES], a->value[PROF_M_FREE_BYTES]);
	return a->value[t->m];
}

static bool mt_used(const struct metric_type *t, const struct prof_profile *p)
{
	if (t->m == PROF_METRIC_COUNT)
		return prof_total(p, PROF_M_OFFCPU_NS) > 0;
	if ((unsigned)t->m > PROF_METRIC_COUNT || t->m >= PROF_M_HEAP_FIRST)
		return p->heap.present;
	return t->always || prof_total(p, t->m) > 0;
}

struct u64vec { uint64_t *v; size_t n, cap; };

struct pprof_state {
	const struct prof_profile *p;
	struct strtab strs;
	struct u64map functions;	/* (func << 32 | file) -> function id */
	struct u64map locations;	/* hash of frame group + probe -> location id */
	VEC(uint32_t) loc_frames;	/* all groups, concatenated */
	VEC(uint32_t) loc_start;	/* loc id - 1 -> offset in loc_frames; +1 sentinel */
	struct strbuf functions_pb, locations_pb;
	uint64_t *max_addr;		/* per module */
};

static uint64_t str_id(struct pprof_state *s, const char *str)
{
	return strtab_intern(&s->strs, str);
}

static void value_type(struct pprof_state *s, struct strbuf *out, uint32_t field,
		       const char *type, const char *unit)
{
	struct strbuf vt = STRBUF_INIT;

	render_pb_uint(&vt, 1, str_id(s, type));
	render_pb_uint(&vt, 2, str_id(s, unit));
	render_pb_bytes(out, field, vt.buf ? vt.buf : "", vt.len);
	sb_release(&vt);
}

static uint64_t function_id(struct pprof_state *s, const struct prof_frame *f)
{
	bool created;
	uint64_t *slot = u64map_slot(&s->functions, ((uint64_t)f->func << 32) | f->file, &created);

	if (created) {
		struct strbuf fn = STRBUF_INIT;
		*slot = s->functions.n;	/* ids 1.. in insertion order */
		render_pb_uint(&fn, 1, *slot);
		render_pb_uint(&fn, 2, str_id(s, prof_str(s->p, f->func)));
		render_pb_uint(&fn, 3, str_id(s, prof_str(s->p, f->func)));
		render_pb_uint(&fn, 4, str_id(s, prof_str(s->p, f->file)));
		render_pb_bytes(&s->functions_pb, 5, fn.buf, fn.len);
		sb_release(&fn);
	}
	return *slot;
}

static void emit_location(struct pprof_state *s, uint64_t id, const uint32_t *group, size_t n)
{
	const struct prof_frame *outer = &s->p->frames.v[group[n - 1]];
	struct strbuf loc = STRBUF_INIT, line = STRBUF_INIT;

	render_pb_uint(&loc, 1, id);
	if (outer->module != PROF_NONE && outer->module < s->p->modules.n) {
		render_pb_uint(&loc, 2, (uint64_t)outer->module + 1);
		if (outer->addr > s->max_addr[outer->module])
			s->max_addr[outer->module] = outer->addr;
	}
	render_pb_uint(&loc, 3, outer->addr);
	for (size_t i = 0; i < n; i++) {	/* innermost first, as pprof wants */
		const struct prof_frame *f = &s->p->frames.v[group[i]];
		sb_reset(&line);
		render_pb_uint(&line, 1, function_id(s, f));
		render_pb_uint(&line, 2, f->line);
		render_pb_bytes(&loc, 4, line.buf ? line.buf : "", line.len);
	}
	render_pb_bytes(&s->locations_pb, 4, loc.buf, loc.len);
	sb_release(&loc);
	sb_release(&line);
}

static uint64_t location_id(struct pprof_state *s, const uint32_t *group, size_t n)
{
	uint64_t key = hash_bytes(group, n * sizeof(*group));

	for (uint64_t k = 0;; k++) {
		bool created;
		uint64_t *slot = u64map_slot(&s->locations, key + k, &created);
		if (created) {
			*slot = s->loc_start.n;	/* ids 1.. */
			size_t off = s->loc_frames.n;
			for (size_t i = 0; i < n; i++)
				VEC_PUSH(&s->loc_frames, group[i]);
			s->loc_start.v[s->loc_start.n - 1] = (uint32_t)off;
			VEC_PUSH(&s->loc_start, (uint32_t)s->loc_frames.n);
			emit_location(s, *slot, group, n);
			return *slot;
		}
		size_t off = s->loc_start.v[*slot - 1], len = s->loc_start.v[*slot] - off;
		if (len == n && !memcmp(s->loc_frames.v + off, group, n * sizeof(*group)))
			return *slot;
	}
}

static void label(struct pprof_state *s, struct strbuf *out, const char *key,
		  const char *str, uint64_t num)
{
	struct strbuf l = STRBUF_INIT;

	render_pb_uint(&l, 1, str_id(s, key));
	if (str)
		render_pb_uint(&l, 2, str_id(s, str));
	else
		render_pb_uint(&l, 3, num);
	render_pb_bytes(out, 3, l.buf, l.len);
	sb_release(&l);
}

static void emit_sample(struct pprof_state *s, struct strbuf *out, const struct prof_agg *a,
			const bool *used, struct u32vec *stack, struct u64vec *locs)
{
	const struct prof_profile *p = s->p;
	struct strbuf smp = STRBUF_INIT;
	uint64_t values[ARRAY_SIZE(metric_types)];
	size_t nv = 0;

	/* Innermost first: walk the trie upwards; cut after each real frame. */
	stack->n = 0;
	locs->n = 0;
	for (uint32_t node = a->node; node != 0 && node < p->nodes.n; node = p->nodes.v[node].parent) {
		uint32_t fr = p->nodes.v[node].frame;
		if (fr >= p->frames.n)
			continue;
		VEC_PUSH(stack, fr);
		if (!p->frames.v[fr].inlined) {
			VEC_PUSH(locs, location_id(s, stack->v, stack->n));
			stack->n = 0;
		}
	}
	if (stack->n)	/* truncated inside an inline chain */
		VEC_PUSH(locs, location_id(s, stack->v, stack->n));
	render_pb_packed(&smp, 1, locs->v, locs->n);
	for (size_t i = 0; i < ARRAY_SIZE(metric_types); i++)
		if (used[i])
			values[nv++] = mt_value(&metric_types[i], a);
	render_pb_packed(&smp, 2, values, nv);
	if (a->thread < p->threads.n) {
		const struct prof_thread *t = &p->threads.v[a->thread];
		label(s, &smp, "pid", NULL, t->pid);
		label(s, &smp, "tid", NULL, t->tid);
		label(s, &smp, "thread", prof_str(p, t->comm), 0);
	}
	render_pb_bytes(out, 2, smp.buf, smp.len);
	sb_release(&smp);
}

static enum prof_metric view_pprof_metric(enum prof_view_metric m)
{
	switch (m) {
	case PROF_VIEW_OFFCPU: return PROF_M_OFFCPU_NS;
	case PROF_VIEW_IOWAIT: return PROF_M_IOWAIT_NS;
	case PROF_VIEW_SLEEP: return PROF_M_SLEEP_NS;
	case PROF_VIEW_WALL: return PROF_METRIC_COUNT;	/* the "wall" type */
	case PROF_VIEW_ALLOCS: return PROF_M_ALLOCS;
	case PROF_VIEW_ALLOC_BYTES: return PROF_M_ALLOC_BYTES;
	case PROF_VIEW_LIVE_BYTES: return (enum prof_metric)INUSE_SPACE;
	case PROF_VIEW_PEAK_BYTES: return PROF_M_PEAK_BYTES;
	default: return PROF_M_SAMPLES;
	}
}

/* time_nanos wants wall-clock ns since the epoch: from the "start_time"
 * meta key (ISO-8601 UTC, seconds resolution); 0 (omitted) if absent. */
static uint64_t start_time_ns(const struct prof_profile *p)
{
	const char *iso = prof_meta_get(p, "start_time");
	struct tm tm;

	memset(&tm, 0, sizeof(tm));
	if (!iso || !strptime(iso, "%Y-%m-%dT%H:%M:%S", &tm))
		return 0;
	time_t t = timegm(&tm);
	return t > 0 ? (uint64_t)t * 1000000000ULL : 0;
}

static void emit_header(struct pprof_state *s, struct strbuf *out, bool *used,
			const struct prof_view *v)
{
	const struct prof_profile *p = s->p;
	enum prof_metric want = view_pprof_metric(v->metric);

	if (want == PROF_METRIC_COUNT && !prof_total(p, PROF_M_OFFCPU_NS))
		want = PROF_M_CPU_NS;	/* wall without off-CPU data is CPU time */
	size_t nused = 0, default_index = 0;

	for (size_t i = 0; i < ARRAY_SIZE(metric_types); i++) {
		used[i] = mt_used(&metric_types[i], p);
		if (!used[i])
			continue;
		if (metric_types[i].m == want)
			default_index = nused;
		value_type(s, out, 1, metric_types[i].type, metric_types[i].unit);
		nused++;
	}
	value_type(s, out, 11, "cpu", "nanoseconds");
	render_pb_uint(out, 12, p->period_ns);
	render_pb_uint(out, 9, start_time_ns(p));
	if (p->end_ns > p->start_ns)
		render_pb_uint(out, 10, p->end_ns - p->start_ns);
	const char *cmd = prof_meta_get(p, "command");
	if (cmd && *cmd)
		render_pb_uint(out, 13, str_id(s, cmd));
	/* default_sample_type is a string index (the type name). */
	size_t k = 0;
	for (size_t i = 0; i < ARRAY_SIZE(metric_types); i++)
		if (used[i] && k++ == default_index)
			render_pb_uint(out, 14, str_id(s, metric_types[i].type));
}

static void emit_mappings(struct pprof_state *s, struct strbuf *out)
{
	const struct prof_profile *p = s->p;

	for (size_t i = 0; i < p->modules.n; i++) {
		struct strbuf m = STRBUF_INIT;
		render_pb_uint(&m, 1, i + 1);
		render_pb_uint(&m, 3, s->max_addr[i] + 1);
		render_pb_uint(&m, 5, str_id(s, prof_str(p, p->modules.v[i].path)));
		render_pb_uint(&m, 6, str_id(s, prof_str(p, p->modules.v[i].build_id)));
		for (uint32_t f = 7; f <= 10; f++)	/* has_functions .. has_inline_frames */
			render_pb_uint(&m, f, 1);
		render_pb_bytes(out, 3, m.buf, m.len);
		sb_release(&m);
	}
}

/*
 * Every sample type is in the file, so a stack counts when it passes the
 * view's filters with a weight in ANY type: off-CPU stacks have no CPU
 * samples, and dropping them under --metric=cpu left the off_cpu and wall
 * columns short of the recording's totals.
 */
static bool agg_in_export(const struct prof_profile *p, const struct prof_view *v,
			  const struct prof_agg *a)
{
	struct prof_view any = *v;

	if (prof_view_weight(p, v, a))
		return true;
	any.metric = PROF_VIEW_WALL;
	if (prof_view_weight(p, &any, a))
		return true;
	any.metric = PROF_VIEW_ALLOCS;	/* every heap figure has its allocation */
	if (prof_view_weight(p, &any, a))
		return true;
	any.metric = PROF_VIEW_PEAK_BYTES;
	if (prof_view_weight(p, &any, a))
		return true;
	any.metric = PROF_VIEW_CPU;
	return prof_view_weight(p, &any, a) != 0;
}

int prof_output_pprof(FILE *f, const struct prof_profile *p, const struct prof_view *v)
{
	struct pprof_state s = { .p = p };
	struct strbuf out = STRBUF_INIT, gz = STRBUF_INIT;
	struct u32vec stack = { 0 };
	struct u64vec locs = { 0 };
	bool used[ARRAY_SIZE(metric_types)];
	int rc;

	strtab_init(&s.strs);
	s.max_addr = xcalloc(p->modules.n + 1, sizeof(*s.max_addr));
	VEC_PUSH(&s.loc_start, 0);
	emit_header(&s, &out, used, v);
	for (size_t i = 0; i < p->aggs.n; i++)
		if (agg_in_export(p, v, &p->aggs.v[i]))
			emit_sample(&s, &out, &p->aggs.v[i], used, &stack, &locs);
	emit_mappings(&s, &out);
	sb_add(&out, s.locations_pb.buf ? s.locations_pb.buf : "", s.locations_pb.len);
	sb_add(&out, s.functions_pb.buf ? s.functions_pb.buf : "", s.functions_pb.len);
	for (size_t i = 0; i < s.strs.strs.n; i++)
		render_pb_bytes(&out, 6, s.strs.strs.v[i], strlen(s.strs.strs.v[i]));

	rc = render_gzip(out.buf ? out.buf : "", out.len, &gz);
	if (!rc && fwrite(gz.buf, 1, gz.len, f) != gz.len)
		rc = -EIO;
	sb_release(&out);
	sb_release(&gz);
	sb_release(&s.functions_pb);
	sb_release(&s.locations_pb);
	strtab_free(&s.strs);
	u64map_free(&s.functions);
	u64map_free(&s.locations);
	VEC_FREE(&s.loc_frames);
	VEC_FREE(&s.loc_start);
	VEC_FREE(&stack);
	VEC_FREE(&locs);
	free(s.max_addr);
	return rc;
}
