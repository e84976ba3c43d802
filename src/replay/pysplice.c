/*
 * pysplice.c - puts the Python frames of a CPython thread into its native
 * stack (see include/prof/python.h for how they are read).  Each native
 * activation of the interpreter loop, _PyEval_EvalFrameDefault (with its
 * .cold part and what was inlined into it), gives way to the Python
 * frames it was running: those from the chain's head down to the next
 * entry frame, innermost first.  The native frames around them stay:
 * zlib's compress above the Python function that called it, a Python
 * callback above the C that called it.
 *
 * The frames are read a little after the sample (at most about a
 * millisecond, by the ring pump), so the chain may have moved on.  The
 * check: the number of activations in the native stack must equal the
 * number of entry frames in the chain (a native stack cut short, which
 * has only the innermost activations, must have fewer).  When it fails,
 * or the chain came back changed (-ESTALE), the native stack is kept as
 * it was, with a "[python: stack changed]" frame where the
 * Python frames would go, and the sample is counted as mismatched: a
 * wrong stack is never shown as right.
 *
 * A Python frame is named "qualname (file.py:firstlineno)": its def line
 * keeps two functions of one name in one file apart, and the frame's own
 * file:line says which line ran.  Its module is the .py file (flagged
 * PROF_MOD_PYTHON), so identity (qualname + module basename) holds across
 * two checkouts of a project.
 */
#include "pysplice-priv.h"
#include <string.h>

struct code_names {
	uint32_t func, file, module;
};

struct prof_pysplice {
	struct prof_profile *p;
	struct prof_python *py;
	VEC(uint8_t) is_eval;		/* per profile frame: 0 unknown, 1 no, 2 yes */
	VEC(struct code_names) names;	/* per code id + 1 (0: not yet) */
	struct u64map frames;		/* code id << 32 | line -> frame id */
	uint32_t changed_frame;		/* "[python: stack changed]", PROF_NONE until used */
	struct {			/* the last PYSTACK record */
		uint32_t tid;
		uint64_t time;
		int n;
		struct prof_pyframe f[PROF_PY_MAX_FRAMES];
		bool valid;
	} pending;
	struct prof_pysplice_stats st;
};

struct prof_pysplice *prof_pysplice_new(struct prof_profile *p, struct prof_python *py)
{
	struct prof_pysplice *ps = xcalloc(1, sizeof(*ps));

	ps->p = p;
	ps->py = py;
	ps->changed_frame = PROF_NONE;
	return ps;
}

void prof_pysplice_free(struct prof_pysplice *ps)
{
	if (!ps)
		return;
	VEC_FREE(&ps->is_eval);
	VEC_FREE(&ps->names);
	u64map_free(&ps->frames);
	free(ps);
}

void prof_pysplice_record(struct prof_pysplice *ps, const struct perf_event_header *h)
{
	uint32_t pid;

	ps->pending.n = prof_python_record_parse(h, &pid, &ps->pending.tid, &ps->pending.time,
						 ps->pending.f);
	ps->pending.valid = ps->pending.n != -EINVAL;
}

/* Whether frame id is the interpreter loop (or its cold part). */
static bool is_eval(struct prof_pysplice *ps, uint32_t id)
{
	static const char name[] = "_PyEval_EvalFrameDefault";

	while (ps->is_eval.n <= id)
		VEC_PUSH(&ps->is_eval, 0);
	if (!ps->is_eval.v[id]) {
		const char *f = prof_str(ps->p, ps->p->frames.v[id].func);
		bool yes = !strncmp(f, name, sizeof(name) - 1) &&
			   (!f[sizeof(name) - 1] || f[sizeof(name) - 1] == '.');
		ps->is_eval.v[id] = yes ? 2 : 1;
	}
	return ps->is_eval.v[id] == 2;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static const struct code_names *names_of(struct prof_pysplice *ps, uint32_t code)
{
	const struct prof_pycode *c;

	while (ps->names.n <= code)
		VEC_PUSH(&ps->names, ((struct code_names){ 0 }));
	struct code_names *n = &ps->names.v[code];
	if (n->func || !(c = prof_python_code(ps->py, code)))
		return n;
	struct strbuf sb = STRBUF_INIT;
	sb_addf(&sb, "%s (%s:%d)", c->qualname, base_name(c->filename), c->firstlineno);
	n->func = prof_intern(ps->p, sb_str(&sb));
	n->file = prof_intern(ps->p, c->filename);
	n->module = prof_module_intern(ps->p, c->filename, "", PROF_MOD_PYTHON);
	sb_release(&sb);
	return n;
}

/* The profile frame of one Python frame: code and the line that ran. */
static uint32_t python_frame(struct prof_pysplice *ps, const struct prof_pyframe *f)
{
	const struct prof_pycode *c = prof_python_code(ps->py, f->code);
	int line = c ? prof_pycode_line(c, f->lasti) : -1;
	uint64_t key = (uint64_t)f->code << 32 | (uint32_t)(line < 0 ? 0 : line);
	bool created;
	uint64_t *slot = u64map_slot(&ps->frames, key, &created);

	if (!created)
		return (uint32_t)*slot;
	const struct code_names *n = names_of(ps, f->code);
	struct prof_frame fr = {
		.func = n->func ? n->func : prof_intern(ps->p, "[python code]"),
		.file = n->file,
		.line = line < 0 ? 0 : (uint32_t)line,
		.module = n->func ? n->module : PROF_NONE,
		.kind = PROF_FRAME_USER,
	};
	*slot = prof_frame_intern(ps->p, &fr);
	return (uint32_t)*slot;
}

/* The native stack's activations: start[k] is the first frame (innermost,
 * inlined ones included) and end[k] the eval frame itself. */
static size_t find_activations(struct prof_pysplice *ps, const uint32_t *frames, size_t n,
			       size_t *start, size_t *end, size_t max)
{
	size_t k = 0;

	for (size_t i = 0; i < n && k < max; i++) {
		if (ps->p->frames.v[frames[i]].inlined || !is_eval(ps, frames[i]))
			continue;
		size_t s = i;
		while (s > 0 && ps->p->frames.v[frames[s - 1]].inlined &&
		       (k == 0 || s - 1 > end[k - 1]))
			s--;
		start[k] = s;
		end[k++] = i;
	}
	return k;
}

/* The chain's activations: Python frames [from[k], to[k]] end in an entry. */
static size_t chain_activations(const struct prof_pyframe *f, int n, size_t *from, size_t *to,
				size_t max)
{
	size_t k = 0, a = 0;

	for (int i = 0; i < n && k < max; i++)
		if (f[i].entry || i == n - 1) {
			from[k] = a;
			to[k++] = (size_t)i;
			a = (size_t)i + 1;
		}
	return k;
}

/*
 * Whether the native stack's nk activations fit the chain's pk.  A native
 * stack cut short (an off-CPU sample copies 8 KiB of a deep stack) has
 * only the innermost of them: those must all be in the chain, which goes
 * on where the native stack stops.
 */
static bool activations_fit(size_t nk, size_t pk, bool complete)
{
	return nk == pk || (!complete && nk > 0 && nk < pk);
}

size_t prof_pysplice_apply(struct prof_pysplice *ps, uint32_t tid, uint64_t time,
			   uint32_t *frames, size_t n, size_t max, bool complete)
{
	size_t ns[PROF_PY_MAX_FRAMES], ne[PROF_PY_MAX_FRAMES], pf[PROF_PY_MAX_FRAMES], pt[PROF_PY_MAX_FRAMES];
	static __thread uint32_t out[4 * PROF_MAX_FRAMES + PROF_PY_MAX_FRAMES];

	if (!ps->pending.valid || ps->pending.tid != tid || ps->pending.time != time)
		return n;
	ps->pending.valid = false;
	ps->st.samples++;
	if (ps->pending.n < 0 && ps->pending.n != -ESTALE) {
		ps->st.unread++;
		return n;
	}
	bool changed = ps->pending.n < 0;	/* -ESTALE: no chain to fit */
	size_t nk = find_activations(ps, frames, n, ns, ne, ARRAY_SIZE(ns));
	size_t pk = changed ? 0 : chain_activations(ps->pending.f, ps->pending.n, pf, pt, ARRAY_SIZE(pf));
	if (!changed && nk == 0 && pk == 0) {	/* in C with no Python on the stack (startup, exit) */
		ps->st.merged++;
		return n;
	}
	if (changed || !activations_fit(nk, pk, complete) ||
	    n + (size_t)ps->pending.n > ARRAY_SIZE(out) || n + 1 > max) {
		ps->st.mismatched++;
		if (nk == 0 || n + 1 > max)
			return n;
		if (ps->changed_frame == PROF_NONE) {
			struct prof_frame fr = { .func = prof_intern(ps->p, "[python: stack changed]"),
						 .module = PROF_NONE, .kind = PROF_FRAME_UNKNOWN };
			ps->changed_frame = prof_frame_intern(ps->p, &fr);
		}
		memmove(frames + ns[0] + 1, frames + ns[0], (n - ns[0]) * sizeof(*frames));
		frames[ns[0]] = ps->changed_frame;
		return n + 1;
	}
	size_t o = 0, i = 0;
	for (size_t k = 0; k < nk; k++) {
		while (i < ns[k])
			out[o++] = frames[i++];
		for (size_t j = pf[k]; j <= pt[k]; j++)
			out[o++] = python_frame(ps, &ps->pending.f[j]);
		i = ne[k] + 1;
	}
	while (i < n)
		out[o++] = frames[i++];
	o = MIN(o, max);
	memcpy(frames, out, o * sizeof(*frames));
	ps->st.merged++;
	return o;
}

void prof_pysplice_stats(const struct prof_pysplice *ps, struct prof_pysplice_stats *st)
{
	*st = ps->st;
}
