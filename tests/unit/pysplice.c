/*
 * pysplice.c - unit test of the replay engine's splice of Python frames
 * into native stacks (src/replay/pysplice.c) on the stacks the count
 * check has to judge: a native stack cut short (an off-CPU sample's
 * 8-KiB copy of a deep stack), with fewer interpreter loops than the
 * chain has activations, and the same stack when its chain came back
 * changed (-ESTALE: a code object freed before it was named).  The chain
 * records are synthetic (prof_python_record's layout); no process is
 * read, so the frames are named "[python code]".
 */
#include "../../src/replay/pysplice-priv.h"
#include "tap.h"
#include <stdlib.h>
#include <string.h>

#define TID 7
#define TIME 1000

/* A PROF_RECORD_PYSTACK record: status, then n frames, each code id and
 * lasti with the entry bit (prof_python_record). */
static size_t pystack(uint8_t *b, int32_t status, const bool *entry, uint32_t n)
{
	struct perf_event_header h = { .type = PROF_RECORD_PYSTACK, .size = (uint16_t)(40 + 8 * n) };
	uint32_t pid = TID, tid = TID, zero = 0;
	uint64_t time = TIME;

	memset(b, 0, h.size);
	memcpy(b, &h, sizeof(h));
	memcpy(b + 8, &status, 4);
	memcpy(b + 12, &n, 4);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t code = i, w = entry[i] ? 1u << 31 : 0;
		memcpy(b + 16 + 8 * i, &code, 4);
		memcpy(b + 20 + 8 * i, &w, 4);
	}
	memcpy(b + 16 + 8 * n, &pid, 4);
	memcpy(b + 20 + 8 * n, &tid, 4);
	memcpy(b + 24 + 8 * n, &time, 8);
	memcpy(b + 32 + 8 * n, &zero, 4);
	return h.size;
}

static uint32_t frame(struct prof_profile *p, const char *name)
{
	struct prof_frame f = { .func = prof_intern(p, name), .module = PROF_NONE, .kind = PROF_FRAME_USER };

	return prof_frame_intern(p, &f);
}

/* A native stack, innermost first: `deep` interpreter loops, each under
 * two C frames, cut short (no thread root under it). */
static size_t native(struct prof_profile *p, uint32_t *frames, size_t deep)
{
	size_t n = 0;

	frames[n++] = frame(p, "clock_nanosleep");
	for (size_t k = 0; k < deep; k++) {
		frames[n++] = frame(p, "_PyEval_EvalFrameDefault");
		frames[n++] = frame(p, "list_sort_impl");
		frames[n++] = frame(p, "builtin_sorted");
	}
	return n;
}

static size_t count_named(struct prof_profile *p, const uint32_t *frames, size_t n, const char *name)
{
	size_t c = 0;

	for (size_t i = 0; i < n; i++)
		c += !strcmp(prof_str(p, p->frames.v[frames[i]].func), name);
	return c;
}

int main(void)
{
	static uint32_t frames[4 * PROF_MAX_FRAMES];
	static uint8_t rec[65536];
	bool entry[80];
	struct prof_profile p;
	struct prof_pysplice_stats st;

	setenv("PROF_PYTHON_NO_BPF", "1", 1);	/* a reader that knows no code */
	struct prof_python *py = prof_python_new();
	prof_profile_init(&p);
	struct prof_pysplice *ps = prof_pysplice_new(&p, py);
	for (size_t i = 0; i < 80; i++)
		entry[i] = i % 2 == 1;	/* 40 activations of two frames each */

	/* cut short: 10 loops in the native stack, 40 activations in the chain */
	pystack(rec, 0, entry, 80);
	prof_pysplice_record(ps, (const struct perf_event_header *)rec);
	size_t n = native(&p, frames, 10);
	size_t got = prof_pysplice_apply(ps, TID, TIME, frames, n, ARRAY_SIZE(frames), false);
	is_u64(count_named(&p, frames, got, "[python code]"), 20, "cut short: the 10 innermost activations get their 20 Python frames");
	is_u64(count_named(&p, frames, got, "_PyEval_EvalFrameDefault"), 0, "cut short: no interpreter loop is left");
	is_u64(count_named(&p, frames, got, "list_sort_impl"), 10, "cut short: the C between them stays");

	/* the same stack complete (at a thread root): the counts must agree */
	pystack(rec, 0, entry, 80);
	prof_pysplice_record(ps, (const struct perf_event_header *)rec);
	n = native(&p, frames, 10);
	got = prof_pysplice_apply(ps, TID, TIME, frames, n, ARRAY_SIZE(frames), true);
	is_u64(count_named(&p, frames, got, "[python: stack changed]"), 1, "complete with fewer loops than activations: marked");
	is_u64(count_named(&p, frames, got, "_PyEval_EvalFrameDefault"), 10, "complete: the native frames stay");

	/* a changed chain (-ESTALE) under a deep stack cut short: marked, and
	 * no frame is read from the chain it does not have */
	pystack(rec, -ESTALE, entry, 0);
	prof_pysplice_record(ps, (const struct perf_event_header *)rec);
	n = native(&p, frames, 60);
	got = prof_pysplice_apply(ps, TID, TIME, frames, n, ARRAY_SIZE(frames), false);
	is_u64(got, n + 1, "changed, cut short, %zu frames: the native stack and a mark", n);
	is_u64(count_named(&p, frames, got, "[python: stack changed]"), 1, "changed: marked once");
	is_u64(count_named(&p, frames, got, "[python code]"), 0, "changed: no Python frame added");

	prof_pysplice_stats(ps, &st);
	is_u64(st.merged, 1, "one merged");
	is_u64(st.mismatched, 2, "two mismatched");
	prof_pysplice_free(ps);
	prof_python_free(py);
	prof_profile_free(&p);
	return done_testing();
}
