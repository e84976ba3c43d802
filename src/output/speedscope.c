/*
 * speedscope.c - export a profile in speedscope's file format
 * (https://www.speedscope.app/file-format-schema.json): shared.frames[]
 * with name/file/line, and one "sampled" profile per thread whose samples
 * are frame-index arrays, outermost first, with one weight each.
 *
 * Design notes: frames are emitted in first-use order (a frame id ->
 * index table), only frames that some emitted sample uses.
 *  - When the profile kept its samples with their times (p->timed, see
 *    model.h), each thread's profile lists every sample in time order, so
 *    speedscope's Time Order view shows the recording as it ran.  Weights
 *    are nanoseconds: the sample's period for --metric=cpu (the
 *    PROF_M_CPU_NS companion of each sample), the blocked time for the
 *    off-CPU metrics, both for wall.  A profile without periods (not a
 *    clock event) weighs each CPU sample 1 with unit "none".
 *  - Without times (callgrind input), each (thread, stack) aggregate
 *    becomes one weighted sample.
 */
#include "prof/output.h"
#include "output-priv.h"
#include <string.h>

struct speedscope_state {
	const struct prof_profile *p;
	uint32_t *frame_index;		/* frame id -> index in shared.frames, or PROF_NONE */
	VEC(uint32_t) frames;		/* index -> frame id */
	struct u32vec stack;
};

static uint32_t shared_frame(struct speedscope_state *s, uint32_t frame)
{
	if (s->frame_index[frame] == PROF_NONE) {
		s->frame_index[frame] = (uint32_t)s->frames.n;
		VEC_PUSH(&s->frames, frame);
	}
	return s->frame_index[frame];
}

static void frame_json(struct strbuf *sb, const struct prof_profile *p, const struct prof_frame *f)
{
	struct strbuf name = STRBUF_INIT;

	sb_adds(&name, prof_str(p, f->func));
	if (f->inlined)
		sb_adds(&name, " [inlined]");
	else if (f->kind == PROF_FRAME_KERNEL)
		sb_adds(&name, " [kernel]");
	sb_adds(sb, "{\"name\":");
	render_json_str(sb, sb_str(&name));
	if (*prof_str(p, f->file)) {
		sb_adds(sb, ",\"file\":");
		render_json_str(sb, prof_str(p, f->file));
	} else if (*prof_frame_module_path(p, f)) {
		sb_adds(sb, ",\"file\":");	/* better than nothing in the UI */
		render_json_str(sb, prof_frame_module_path(p, f));
	}
	if (f->line)
		sb_addf(sb, ",\"line\":%u", f->line);
	sb_addch(sb, '}');
	sb_release(&name);
}

static void append_stack(struct strbuf *samples, struct speedscope_state *s, uint32_t node,
			 bool first)
{
	const struct prof_profile *p = s->p;

	prof_node_frames_outer_first(p, node, &s->stack);
	sb_adds(samples, first ? "[" : ",[");
	for (size_t k = 0, out = 0; k < s->stack.n; k++) {
		if (s->stack.v[k] >= p->frames.n)
			continue;
		sb_addf(samples, out++ ? ",%u" : "%u", shared_frame(s, s->stack.v[k]));
	}
	sb_addch(samples, ']');
}

static void profile_header(struct strbuf *sb, const struct prof_profile *p, uint32_t thread,
			   const char *unit, uint64_t end, bool first)
{
	const struct prof_thread *t = &p->threads.v[thread];
	char *name = xasprintf("%s (pid %u, tid %u)", prof_str(p, t->comm), t->pid, t->tid);

	sb_adds(sb, first ? "\n  {" : ",\n  {");
	sb_adds(sb, "\"type\":\"sampled\",\"name\":");
	render_json_str(sb, name);
	sb_addf(sb, ",\"unit\":\"%s\",\"startValue\":0,\"endValue\":%llu,", unit,
		(unsigned long long)end);
	free(name);
}

/* Time-ordered profiles, one per thread, from p->timed (already sorted). */
static size_t timed_profiles(struct strbuf *sb, struct speedscope_state *s,
			     const struct prof_view *v)
{
	const struct prof_profile *p = s->p;
	bool cpu_ns = render_timed_has_cpu_ns(p);
	size_t nprof = 0;

	const char *unit = v->metric == PROF_VIEW_CPU && !cpu_ns && !p->period_ns ? "none"
											: "nanoseconds";

	size_t *start, *order;
	render_timed_by_thread(p, &start, &order);

	struct strbuf samples = STRBUF_INIT, weights = STRBUF_INIT;
	for (uint32_t t = 0; t < p->threads.n; t++) {
		uint64_t total = 0;
		size_t n = 0;
		sb_reset(&samples);
		sb_reset(&weights);
		for (size_t k = start[t]; k < start[t + 1]; k++) {
			const struct prof_timed_sample *e = &p->timed.v[order[k]];
			uint64_t w = render_timed_weight(p, v, e, cpu_ns);
			if (!w)
				continue;
			append_stack(&samples, s, e->node, n == 0);
			sb_addf(&weights, n ? ",%llu" : "%llu", (unsigned long long)w);
			total += w;
			n++;
		}
		if (!n)
			continue;
		profile_header(sb, p, t, unit, total, nprof++ == 0);
		sb_addf(sb, "\"samples\":[%s],\"weights\":[%s]}", sb_str(&samples),
			sb_str(&weights));
	}
	sb_release(&samples);
	sb_release(&weights);
	free(start);
	free(order);
	return nprof;
}

/* Appends one thread's profile; returns false (and appends nothing) if empty. */
static bool thread_profile(struct strbuf *sb, struct speedscope_state *s,
			   const struct prof_view *v, uint32_t thread, bool first)
{
	const struct prof_profile *p = s->p;
	struct strbuf samples = STRBUF_INIT, weights = STRBUF_INIT;
	uint64_t total = 0;
	size_t n = 0;

	for (size_t i = 0; i < p->aggs.n; i++) {
		const struct prof_agg *a = &p->aggs.v[i];
		uint64_t w;
		if (a->thread != thread || !(w = prof_view_weight(p, v, a)))
			continue;
		append_stack(&samples, s, a->node, n == 0);
		sb_addf(&weights, n ? ",%llu" : "%llu", (unsigned long long)w);
		total += w;
		n++;
	}
	if (n) {
		profile_header(sb, p, thread, v->metric == PROF_VIEW_CPU ? "none" : "nanoseconds",
			       total, first);
		sb_addf(sb, "\"samples\":[%s],\"weights\":[%s]}", sb_str(&samples), sb_str(&weights));
	}
	sb_release(&samples);
	sb_release(&weights);
	return n > 0;
}

int prof_output_speedscope(FILE *f, const struct prof_profile *p, const struct prof_view *v)
{
	struct speedscope_state s = { .p = p };
	struct strbuf profiles = STRBUF_INIT, out = STRBUF_INIT;
	size_t nprof = 0;

	s.frame_index = xmalloc((p->frames.n + 1) * sizeof(*s.frame_index));
	memset(s.frame_index, 0xff, (p->frames.n + 1) * sizeof(*s.frame_index));
	if (p->timed.n)
		nprof = timed_profiles(&profiles, &s, v);
	else
		for (uint32_t t = 0; t < p->threads.n; t++)
			nprof += thread_profile(&profiles, &s, v, t, nprof == 0);

	sb_adds(&out, "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n");
	sb_adds(&out, "\"exporter\":\"prof\",\"name\":");
	const char *cmd = prof_meta_get(p, "command");
	render_json_str(&out, v->title ? v->title : cmd ? cmd : "prof");
	sb_adds(&out, ",\"activeProfileIndex\":0,\n\"shared\":{\"frames\":[");
	for (size_t i = 0; i < s.frames.n; i++) {
		sb_adds(&out, i ? ",\n  " : "\n  ");
		frame_json(&out, p, &p->frames.v[s.frames.v[i]]);
	}
	sb_adds(&out, "]},\n\"profiles\":[");
	sb_add(&out, profiles.buf ? profiles.buf : "", profiles.len);
	sb_adds(&out, "]}\n");
	int rc = render_flush(f, &out);

	sb_release(&profiles);
	sb_release(&out);
	free(s.frame_index);
	VEC_FREE(&s.frames);
	VEC_FREE(&s.stack);
	return rc;
}
