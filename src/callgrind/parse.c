/*
 * parse.c - the callgrind format parser ("Callgrind Format Specification"
 * of valgrind, plus what valgrind-codspeed writes).  It walks the input
 * line by line in place (no per-line allocation), interns names once, and
 * accumulates costs straight into the part's flat cost pool.
 *
 * Design notes / invariants:
 *  - struct cg_reader is the parser state for ONE file; name-compression
 *    tables live here, so "(id)" references never cross files.  They
 *    survive `part:` boundaries (valgrind may define a name in one part and
 *    reference it in the next).
 *  - Position state (last instr/line) is relative-coded: "+N", "-N", "*"
 *    are relative to the previous cost line's position; call and jump
 *    TARGET positions are relative to it too but do not update it
 *    (valgrind's fprint_pos does not).
 *  - After calls= the next cost line is the inclusive call cost: it goes to
 *    the call edge, never to self cost.  After jump=/jcnd= the next line
 *    carries only positions.
 *  - A row is created by fn=, fi=, fe= (defined) or by cfn= (callee only);
 *    its key is (file id << 32 | name id) in part->fn_index.
 *  - Warnings are capped per file so garbage input cannot flood stderr,
 *    and held until the file is judged: a file with no valid callgrind
 *    line (random bytes, a binary) or no events is one error line, not a
 *    page of warnings and an empty table.  A line is valid when it is a
 *    known header, body or cost line that parsed without a warning.
 */
#include "prof/callgrind.h"
#include <errno.h>
#include <string.h>
#include <unistd.h>

#define MAX_WARNINGS 5
#define MAX_INPUT ((size_t)8 << 30)	/* decompressed input cap */

struct cg_reader {
	struct cg_profile *p;
	const char *name;		/* file name for messages */
	size_t lineno;
	unsigned warnings;
	VEC(char *) held;		/* warnings, printed once the file is accepted */
	size_t valid_lines;
	struct u64map ids[3];		/* compression spaces: ob, fl, fn */
	struct cg_part *part;		/* current part (NULL before the first) */
	unsigned file_parts;		/* parts made from this file */
	/* header values inherited by later parts of the same file */
	uint32_t creator, cmd, pid;
	unsigned positions;
	VEC(uint32_t) events;
	/* body state */
	uint32_t ob, file, fn, home_file;	/* string ids */
	uint32_t row;				/* current row, PROF_NONE if none */
	uint32_t cob, cfile, cfn;
	bool have_cob, have_cfile;
	uint64_t pos[2];			/* last instr, last line */
	uint64_t pending_calls;
	bool in_call, in_jump;
	bool part_numbered;		/* the current part had its part: line */
	uint32_t inline_fn;		/* cfni= name in effect, 0 for none; like
					 * valgrind-codspeed's writer it persists
					 * across fn= lines until the next cfni= */
	uint32_t pending_callee;
	VEC(uint64_t) scratch;
};

enum { SPACE_OB, SPACE_FL, SPACE_FN };

static void rwarn(struct cg_reader *r, const char *fmt, const char *arg, size_t arglen)
{
	if (++r->warnings > MAX_WARNINGS)
		return;
	char msg[256];
	snprintf(msg, sizeof(msg), fmt, (int)MIN(arglen, 80), arg);
	VEC_PUSH(&r->held, xasprintf("%s:%zu: %s", r->name, r->lineno, msg));
	if (r->warnings == MAX_WARNINGS)
		VEC_PUSH(&r->held, xasprintf("%s: further warnings suppressed", r->name));
}

/* Prints the held warnings (show) or drops them; frees them either way. */
static void release_warnings(struct cg_reader *r, bool show)
{
	for (size_t i = 0; i < r->held.n; i++) {
		if (show)
			warning("%s", r->held.v[i]);
		free(r->held.v[i]);
	}
	VEC_FREE(&r->held);
}

/* --- small lexing helpers ---------------------------------------------- */

static bool starts(const char *s, const char *e, const char *lit)
{
	size_t n = strlen(lit);
	return (size_t)(e - s) >= n && !memcmp(s, lit, n);
}

static const char *skip_space(const char *s, const char *e)
{
	while (s < e && (*s == ' ' || *s == '\t'))
		s++;
	return s;
}

/* Unsigned decimal or 0x-hex; returns the end, or NULL if no digits. */
static const char *parse_num(const char *s, const char *e, uint64_t *v)
{
	uint64_t x = 0;
	const char *start;

	if (e - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		s += 2;
		start = s;
		for (; s < e; s++) {
			unsigned d;
			if (*s >= '0' && *s <= '9') d = (unsigned)(*s - '0');
			else if (*s >= 'a' && *s <= 'f') d = (unsigned)(*s - 'a' + 10);
			else if (*s >= 'A' && *s <= 'F') d = (unsigned)(*s - 'A' + 10);
			else break;
			x = (x << 4) | d;
		}
	} else {
		start = s;
		for (; s < e && *s >= '0' && *s <= '9'; s++)
			x = x * 10 + (uint64_t)(*s - '0');
	}
	if (s == start)
		return NULL;
	*v = x;
	return s;
}

/* One subposition ("N", "0xN", "+N", "-N", "*") relative to *last. */
static const char *parse_subpos(const char *s, const char *e, uint64_t last, uint64_t *out)
{
	uint64_t v;

	if (s >= e)
		return NULL;
	if (*s == '*') {
		*out = last;
		return s + 1;
	}
	if (*s == '+' || *s == '-') {
		const char *q = parse_num(s + 1, e, &v);
		if (!q)
			return NULL;
		*out = *s == '+' ? last + v : last - v;
		return q;
	}
	const char *q = parse_num(s, e, &v);
	if (q)
		*out = v;
	return q;
}

/* --- parts, rows, costs ------------------------------------------------- */

static uint32_t cost_alloc(struct cg_part *part)
{
	size_t off = part->costs.n, nev = part->events.n;

	VEC_GROW(&part->costs, off + nev + 1);	/* +1: never NULL, even with no events */
	memset(part->costs.v + off, 0, nev * sizeof(uint64_t));
	part->costs.n += nev;
	return (uint32_t)off;
}

static void add_costs(struct cg_part *part, uint32_t off, const uint64_t *c, size_t n)
{
	uint64_t *dst = part->costs.v + off;

	for (size_t i = 0; i < n; i++)
		dst[i] += c[i];
}

static void new_part(struct cg_reader *r)
{
	struct cg_part *part = xcalloc(1, sizeof(*part));

	part->number = ++r->file_parts;
	part->source = strtab_intern(&r->p->strs, r->name);
	part->creator = r->creator;
	part->cmd = r->cmd;
	part->pid = r->pid;
	part->positions = r->positions ? r->positions : CG_POS_LINE;
	for (size_t i = 0; i < r->events.n; i++)
		VEC_PUSH(&part->events, r->events.v[i]);
	part->totals = PROF_NONE;
	VEC_PUSH(&r->p->parts, part);
	r->part = part;
	r->row = PROF_NONE;
	r->pending_callee = PROF_NONE;	/* rows are per part */
	r->fn = 0;
	r->have_cob = r->have_cfile = false;
	r->in_call = r->in_jump = false;
	r->pos[0] = r->pos[1] = 0;
	r->part_numbered = false;
}

static struct cg_part *cur_part(struct cg_reader *r)
{
	if (!r->part)
		new_part(r);
	return r->part;
}

static uint32_t row_intern(struct cg_reader *r, uint32_t file, uint32_t name, uint32_t object)
{
	struct cg_part *part = r->part;
	bool created;
	uint64_t *slot = u64map_slot(&part->fn_index, (uint64_t)file << 32 | name, &created);

	if (created) {
		struct cg_fn fn = { .file = file, .name = name, .object = object,
				    .home_file = file, .self = cost_alloc(part),
				    .incl = PROF_NONE };
		*slot = part->fns.n;
		VEC_PUSH(&part->fns, fn);
	}
	return (uint32_t)*slot;
}

/* Body data needs events; a part gets them fixed at its first body line. */
static bool body_ready(struct cg_reader *r)
{
	struct cg_part *part = cur_part(r);

	if (!part->events.n) {
		rwarn(r, "cost data before an events: line; assuming 'Ir'%.*s", "", 0);
		uint32_t ir = strtab_intern(&r->p->strs, "Ir");
		VEC_PUSH(&part->events, ir);
		VEC_PUSH(&r->events, ir);
	}
	part->has_data = 1;
	return true;
}

/* --- names -------------------------------------------------------------- */

static uint32_t strip_pwd(struct cg_reader *r, const char *s, size_t n)
{
	const char *pre = r->p->strip_prefix;
	size_t pn = pre ? strlen(pre) : 0;

	if (pn && n > pn && !memcmp(s, pre, pn)) {
		s += pn;
		n -= pn;
	}
	return strtab_intern_n(&r->p->strs, s, n);
}

/* "(id) name", "(id)" or "name" in one compression space. */
static uint32_t parse_name(struct cg_reader *r, int space, const char *s, const char *e)
{
	uint64_t id;
	const char *q;

	while (e > s && e[-1] == '\r')
		e--;
	if (s < e && *s == '(' && (q = parse_num(s + 1, e, &id)) && q < e && *q == ')') {
		q = skip_space(q + 1, e);
		if (q < e) {
			uint32_t sid = space == SPACE_FL ? strip_pwd(r, q, (size_t)(e - q))
							  : strtab_intern_n(&r->p->strs, q, (size_t)(e - q));
			u64map_put(&r->ids[space], id, sid);
			return sid;
		}
		uint64_t sid;
		if (u64map_get(&r->ids[space], id, &sid))
			return (uint32_t)sid;
		rwarn(r, "name id %.*s used before it was defined", s, (size_t)(e - s));
		return strtab_intern(&r->p->strs, "???");
	}
	return space == SPACE_FL ? strip_pwd(r, s, (size_t)(e - s))
				 : strtab_intern_n(&r->p->strs, s, (size_t)(e - s));
}

/* --- header lines --------------------------------------------------------- */

static void parse_events(struct cg_reader *r, const char *s, const char *e)
{
	struct cg_part *part = cur_part(r);

	if (part->has_data) {
		rwarn(r, "events: line after cost data ignored%.*s", "", 0);
		return;
	}
	r->events.n = 0;
	part->events.n = 0;
	while ((s = skip_space(s, e)) < e) {
		const char *w = s;
		while (s < e && *s != ' ' && *s != '\t' && *s != '\r')
			s++;
		if (s == w) { s++; continue; }
		uint32_t id = strtab_intern_n(&r->p->strs, w, (size_t)(s - w));
		VEC_PUSH(&r->events, id);
		VEC_PUSH(&part->events, id);
	}
}

static void parse_positions(struct cg_reader *r, const char *s, const char *e)
{
	unsigned pos = 0;
	char buf[64];
	size_t n = MIN((size_t)(e - s), sizeof(buf) - 1);

	memcpy(buf, s, n);
	buf[n] = 0;
	if (strstr(buf, "line"))
		pos |= CG_POS_LINE;
	if (strstr(buf, "instr") || strstr(buf, "addr"))
		pos |= CG_POS_INSTR;
	if (!pos) {
		rwarn(r, "unknown positions '%.*s', assuming line", s, (size_t)(e - s));
		pos = CG_POS_LINE;
	}
	r->positions = pos;
	cur_part(r)->positions = pos;
}

/* Parses the numbers of a totals:/summary:/cost line into scratch[0..nev). */
static size_t parse_costs(struct cg_reader *r, const char *s, const char *e)
{
	size_t nev = r->part->events.n, n = 0;

	VEC_GROW(&r->scratch, nev + 1);
	memset(r->scratch.v, 0, nev * sizeof(uint64_t));
	while ((s = skip_space(s, e)) < e && *s != '\r') {
		uint64_t v;
		const char *q = parse_num(s, e, &v);
		if (!q) {
			rwarn(r, "bad cost '%.*s' ignored", s, (size_t)(e - s));
			break;
		}
		if (n < nev)
			r->scratch.v[n] = v;
		else if (n == nev)
			rwarn(r, "more costs than events: '%.*s'", s, (size_t)(e - s));
		n++;
		s = q;
	}
	return MIN(n, nev);
}

static void parse_totals(struct cg_reader *r, const char *s, const char *e, bool summary)
{
	struct cg_part *part = cur_part(r);

	if (!part->events.n)
		return;
	size_t n = parse_costs(r, s, e);
	bool zero = true;
	for (size_t i = 0; i < n; i++)
		zero &= r->scratch.v[i] == 0;
	/* totals: wins over summary: (which is 0 with --instr-atstart=no) */
	if (summary && (part->has_totals || zero))
		return;
	if (part->totals == PROF_NONE)
		part->totals = cost_alloc(part);
	memset(part->costs.v + part->totals, 0, part->events.n * sizeof(uint64_t));
	add_costs(part, part->totals, r->scratch.v, n);
	if (!summary)
		part->has_totals = 1;
}

static void parse_desc(struct cg_reader *r, const char *s, const char *e)
{
	static const char trig[] = "Trigger:";

	s = skip_space(s, e);
	while (e > s && (e[-1] == '\r' || e[-1] == ' '))
		e--;
	if (!starts(s, e, trig))
		return;
	s = skip_space(s + strlen(trig), e);
	if (starts(s, e, "Client Request:"))
		s = skip_space(s + strlen("Client Request:"), e);
	cur_part(r)->trigger = strtab_intern_n(&r->p->strs, s, (size_t)(e - s));
}

/* "part: N": a new part unless the current one is still untouched. */
static void parse_part(struct cg_reader *r, const char *s, const char *e)
{
	uint64_t n = 0;

	if (r->part && (r->part->has_data || r->part->has_totals || r->part_numbered))
		new_part(r);
	struct cg_part *part = cur_part(r);
	if (parse_num(skip_space(s, e), e, &n) && n && n < UINT32_MAX)
		part->number = (uint32_t)n;
	r->part_numbered = true;
}

/* Returns true if the line was a header line. */
static bool parse_header(struct cg_reader *r, const char *s, const char *e)
{
	const char *v;

#define HDR(lit) (starts(s, e, lit) && ((v = skip_space(s + strlen(lit), e)), 1))
	if (HDR("events:"))
		parse_events(r, v, e);
	else if (HDR("positions:"))
		parse_positions(r, v, e);
	else if (HDR("totals:"))
		parse_totals(r, v, e, false);
	else if (HDR("summary:"))
		parse_totals(r, v, e, true);
	else if (HDR("part:"))
		parse_part(r, v, e);
	else if (HDR("desc:"))
		parse_desc(r, v, e);
	else if (HDR("event:") || HDR("thread:") || HDR("version:"))
		;	/* long event names, derived events, thread ids, format version */
	else if (HDR("creator:")) {
		r->creator = strtab_intern_n(&r->p->strs, v, (size_t)(e - v));
		if (r->part) r->part->creator = r->creator;
	} else if (HDR("cmd:")) {
		r->cmd = strtab_intern_n(&r->p->strs, v, (size_t)(e - v));
		if (r->part) r->part->cmd = r->cmd;
	} else if (HDR("pid:")) {
		uint64_t pid = 0;
		parse_num(v, e, &pid);
		r->pid = (uint32_t)pid;
		if (r->part) r->part->pid = r->pid;
	} else
		return false;
#undef HDR
	return true;
}

/* --- body lines ------------------------------------------------------------- */

static const char *parse_positions_of(struct cg_reader *r, const char *s, const char *e,
				      uint64_t out[2])
{
	unsigned pos = r->part->positions;

	out[0] = r->pos[0];
	out[1] = r->pos[1];
	if (pos & CG_POS_INSTR) {
		s = parse_subpos(s, e, r->pos[0], &out[0]);
		if (!s)
			return NULL;
		if (pos & CG_POS_LINE)
			s = skip_space(s, e);
	}
	if (pos & CG_POS_LINE) {
		s = parse_subpos(s, e, r->pos[1], &out[1]);
		if (!s)
			return NULL;
	}
	return s;
}

static void line_cost(struct cg_reader *r, uint32_t file, uint64_t line, size_t n)
{
	struct cg_part *part = r->part;
	bool created;
	uint64_t key = (uint64_t)file << 32 | (uint32_t)MIN(line, UINT32_MAX);
	uint64_t *slot = u64map_slot(&part->line_index, key, &created);

	if (created) {
		struct cg_line l = { file, (uint32_t)MIN(line, UINT32_MAX), cost_alloc(part) };
		*slot = part->lines.n;
		VEC_PUSH(&part->lines, l);
	}
	add_costs(part, part->lines.v[*slot].cost, r->scratch.v, n);
}

/* Self cost that valgrind-codspeed marked (cfni=) as an inlined function's. */
static void inline_cost(struct cg_reader *r, size_t n)
{
	struct cg_part *part = r->part;
	bool created;
	uint64_t *slot = u64map_slot(&part->inl_index, (uint64_t)r->row << 32 | r->inline_fn, &created);

	if (created) {
		struct cg_inline in = { r->row, r->inline_fn, cost_alloc(part) };
		*slot = part->inl.n;
		VEC_PUSH(&part->inl, in);
	}
	add_costs(part, part->inl.v[*slot].cost, r->scratch.v, n);
}

static void call_cost(struct cg_reader *r, size_t n)
{
	struct cg_part *part = r->part;
	bool created;
	uint32_t caller = r->row, callee = r->pending_callee;

	if (caller >= part->fns.n || callee >= part->fns.n)
		return;		/* cannot happen: both are reset at part: lines */
	uint64_t *slot = u64map_slot(&part->call_index, (uint64_t)caller << 32 | callee, &created);

	if (created) {
		struct cg_call c = { caller, callee, 0, cost_alloc(part) };
		*slot = part->calls.n;
		VEC_PUSH(&part->calls, c);
	}
	struct cg_call *c = &part->calls.v[*slot];
	c->calls += r->pending_calls;
	add_costs(part, c->cost, r->scratch.v, n);
	part->fns.v[callee].calls_in += r->pending_calls;
}

static void cost_line(struct cg_reader *r, const char *s, const char *e)
{
	uint64_t pos[2];

	body_ready(r);
	const char *q = parse_positions_of(r, s, e, pos);
	if (!q || (q < e && *q != ' ' && *q != '\t' && *q != '\r')) {
		rwarn(r, "bad position in '%.*s'; line skipped", s, (size_t)(e - s));
		r->in_call = r->in_jump = false;
		return;
	}
	r->pos[0] = pos[0];
	r->pos[1] = pos[1];
	if (r->in_jump) {	/* the source position of a jump: no costs */
		r->in_jump = false;
		return;
	}
	size_t n = parse_costs(r, q, e);
	if (r->row == PROF_NONE) {
		/* costs before any fn=: callgrind_annotate files them under "???" */
		uint32_t unk = strtab_intern(&r->p->strs, "???");
		r->row = row_intern(r, r->file ? r->file : unk, unk, r->ob);
		r->part->fns.v[r->row].defined = 1;
	}
	if (r->in_call) {
		r->in_call = false;
		call_cost(r, n);
		return;
	}
	add_costs(r->part, r->part->fns.v[r->row].self, r->scratch.v, n);
	if (r->inline_fn)
		inline_cost(r, n);
	if (r->p->flags & CG_KEEP_LINES)
		line_cost(r, r->file, pos[1], n);
}

static void set_fn(struct cg_reader *r, uint32_t name)
{
	r->fn = name;
	r->home_file = r->file;
	r->row = row_intern(r, r->file, name, r->ob);
	struct cg_fn *f = &r->part->fns.v[r->row];
	f->defined = 1;
	f->object = r->ob;
	f->home_file = r->home_file;
}

/* fi=/fe=: inlined code from another file; the function stays. */
static void set_inline_file(struct cg_reader *r, uint32_t file)
{
	r->file = file;
	if (r->row == PROF_NONE)
		return;
	r->row = row_intern(r, file, r->fn, r->ob);
	struct cg_fn *f = &r->part->fns.v[r->row];
	if (!f->defined) {
		f->defined = 1;
		f->object = r->ob;
		f->home_file = r->home_file;
	}
}

static void set_callee(struct cg_reader *r, uint32_t name)
{
	uint32_t file = r->have_cfile ? r->cfile : r->file;
	uint32_t obj = r->have_cob ? r->cob : r->ob;

	r->cfn = name;
	r->pending_callee = row_intern(r, file, name, obj);
	r->have_cfile = false;
	r->have_cob = false;
}

static void parse_calls(struct cg_reader *r, const char *s, const char *e)
{
	uint64_t n;
	const char *q = parse_num(skip_space(s, e), e, &n);

	if (!q || r->pending_callee == PROF_NONE || r->row == PROF_NONE) {
		rwarn(r, "calls= without a cfn= or fn= before it: '%.*s'", s, (size_t)(e - s));
		return;
	}
	r->pending_calls = n;
	/* target position ignored: nothing needs it.  calls=0 lines are calls
	 * still running at dump time; callgrind_annotate 3.19 takes their
	 * cost line for self cost, which CG_ANNOTATE_COMPAT reproduces. */
	r->in_call = !(n == 0 && (r->p->flags & CG_ANNOTATE_COMPAT));
}

/* Returns true if the line was a body specification line. */
static bool parse_body_spec(struct cg_reader *r, const char *s, const char *e)
{
	const char *eq = memchr(s, '=', (size_t)MIN(e - s, 6));

	if (!eq)
		return false;
	const char *v = eq + 1;
	size_t klen = (size_t)(eq - s);
#define KEY(k) (klen == sizeof(k) - 1 && !memcmp(s, k, klen))
	if (KEY("fn")) {
		body_ready(r);
		set_fn(r, parse_name(r, SPACE_FN, v, e));
	} else if (KEY("fl")) {
		r->file = parse_name(r, SPACE_FL, v, e);
		r->home_file = r->file;
	} else if (KEY("fi") || KEY("fe")) {
		body_ready(r);
		set_inline_file(r, parse_name(r, SPACE_FL, v, e));
	} else if (KEY("ob")) {
		r->ob = parse_name(r, SPACE_OB, v, e);
	} else if (KEY("cob")) {
		r->cob = parse_name(r, SPACE_OB, v, e);
		r->have_cob = true;
	} else if (KEY("cfi") || KEY("cfl")) {
		r->cfile = parse_name(r, SPACE_FL, v, e);
		r->have_cfile = true;
	} else if (KEY("cfn")) {
		body_ready(r);
		set_callee(r, parse_name(r, SPACE_FN, v, e));
	} else if (KEY("calls")) {
		body_ready(r);
		parse_calls(r, v, e);
	} else if (KEY("jump") || KEY("jcnd")) {
		r->in_jump = true;	/* next line: the jump's source position */
	} else if (KEY("jfi")) {
		parse_name(r, SPACE_FL, v, e);	/* may define an id */
	} else if (KEY("jfn")) {
		parse_name(r, SPACE_FN, v, e);
	} else if (KEY("cfni")) {
		while (e > v && e[-1] == '\r')
			e--;
		r->inline_fn = (e - v == 3 && !memcmp(v, "???", 3)) ? 0
			       : strtab_intern_n(&r->p->strs, v, (size_t)(e - v));
	} else if (KEY("rec") || KEY("frfn") || KEY("ln")) {
		/* --mangle-names=no and --dump-bbs extras */
	} else
		return false;
#undef KEY
	return true;
}

/* True if the line was a cost, body or header line (blank lines,
 * comments and unknown lines are not). */
static bool parse_line(struct cg_reader *r, const char *s, const char *e)
{
	if (s == e || *s == '#')
		return false;
	char c = *s;
	if ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '*') {
		cost_line(r, s, e);
		return true;
	}
	if (parse_body_spec(r, s, e) || parse_header(r, s, e))
		return true;
	if (skip_space(s, e) == e || (e - s == 1 && *s == '\r'))
		return false;
	rwarn(r, "unknown line '%.*s' skipped", s, (size_t)(e - s));
	return false;
}

/* --- finishing a part ------------------------------------------------------- */

static void part_finish(struct cg_part *part)
{
	size_t nev = part->events.n;

	if (part->totals == PROF_NONE || !nev) {
		bool zero = true;
		if (part->totals != PROF_NONE)
			for (size_t i = 0; i < nev; i++)
				zero &= part->costs.v[part->totals + i] == 0;
		if (zero) {
			if (part->totals == PROF_NONE)
				part->totals = cost_alloc(part);
			for (size_t i = 0; i < part->fns.n; i++)
				add_costs(part, part->totals, cg_cost(part, part->fns.v[i].self), nev);
			part->totals_calculated = 1;
		}
	}
	/* inclusive = self + calls to other rows */
	for (size_t i = 0; i < part->fns.n; i++) {
		uint32_t off = cost_alloc(part);
		part->fns.v[i].incl = off;
		add_costs(part, off, cg_cost(part, part->fns.v[i].self), nev);
	}
	for (size_t i = 0; i < part->calls.n; i++) {
		struct cg_call *c = &part->calls.v[i];
		if (c->caller != c->callee)
			add_costs(part, part->fns.v[c->caller].incl, cg_cost(part, c->cost), nev);
	}
}

static void part_free(struct cg_part *part)
{
	VEC_FREE(&part->events);
	VEC_FREE(&part->costs);
	VEC_FREE(&part->fns);
	VEC_FREE(&part->calls);
	VEC_FREE(&part->lines);
	VEC_FREE(&part->inl);
	u64map_free(&part->inl_index);
	u64map_free(&part->fn_index);
	u64map_free(&part->call_index);
	u64map_free(&part->line_index);
	free(part);
}

static int parse_text(struct cg_profile *p, const char *buf, size_t len, const char *name)
{
	struct cg_reader r = { .p = p, .name = name, .row = PROF_NONE,
			       .pending_callee = PROF_NONE };
	const char *s = buf, *end = buf + len;
	size_t first = p->parts.n;
	bool any_events = false;

	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		const char *e = nl ? nl : end;
		unsigned warned = r.warnings;
		r.lineno++;
		if (parse_line(&r, s, e) && r.warnings == warned)
			r.valid_lines++;
		if (r.part && r.part->events.n)
			any_events = true;
		s = nl ? nl + 1 : end;
	}
	for (int i = 0; i < 3; i++)
		u64map_free(&r.ids[i]);
	VEC_FREE(&r.events);
	VEC_FREE(&r.scratch);
	release_warnings(&r, r.valid_lines && any_events);
	if (!r.valid_lines || !any_events) {
		for (size_t i = first; i < p->parts.n; i++)
			part_free(p->parts.v[i]);
		p->parts.n = first;
		if (!r.valid_lines)
			return error("'%s' is not a callgrind profile (none of its %zu lines is "
				     "callgrind format)", name, r.lineno);
		return error("'%s' is not a callgrind profile (no events: line)", name);
	}
	p->warnings += r.warnings;
	if (len && buf[len - 1] != '\n')
		warning("%s: last line has no newline (file truncated?)", name);
	for (size_t i = first; i < p->parts.n; i++) {
		struct cg_part *part = p->parts.v[i];
		if (part->has_data && !part->has_totals)
			warning("%s: part %u has no totals: line (file truncated?)", name, part->number);
		part_finish(part);
	}
	return 0;
}

int cg_parse_buffer(struct cg_profile *p, const char *buf, size_t len, const char *name)
{
	char *plain = NULL;
	size_t plain_len = 0;
	int rc = cg_decompress(buf, len, MAX_INPUT, &plain, &plain_len);

	if (rc < 0)
		return error("cannot decompress '%s': corrupt or truncated stream", name);
	if (rc > 0) {
		rc = parse_text(p, plain, plain_len, name);
		free(plain);
		return rc;
	}
	return parse_text(p, buf, len, name);
}

int cg_load_file(struct cg_profile *p, const char *path)
{
	size_t len;
	char *buf = read_file(path, &len);

	if (!buf) {
		int e = errno;
		error("cannot open '%s': %s", path, strerror(e));
		return -e;
	}
	int rc = cg_parse_buffer(p, buf, len, path);
	free(buf);
	return rc;
}

void cg_profile_init(struct cg_profile *p, unsigned flags)
{
	char cwd[4096];

	memset(p, 0, sizeof(*p));
	strtab_init(&p->strs);
	p->flags = flags;
	if (getcwd(cwd, sizeof(cwd)) && strcmp(cwd, "/"))
		p->strip_prefix = xasprintf("%s/", cwd);
}

void cg_profile_free(struct cg_profile *p)
{
	for (size_t i = 0; i < p->parts.n; i++)
		part_free(p->parts.v[i]);
	VEC_FREE(&p->parts);
	strtab_free(&p->strs);
	free(p->strip_prefix);
	memset(p, 0, sizeof(*p));
}

int cg_event_index(const struct cg_profile *p, const struct cg_part *part, const char *event)
{
	for (size_t i = 0; i < part->events.n; i++)
		if (!strcmp(strtab_get(&p->strs, part->events.v[i]), event))
			return (int)i;
	return -1;
}

struct cg_part *cg_find_part(const struct cg_profile *p, int number, const char *uri)
{
	for (size_t i = 0; i < p->parts.n; i++) {
		struct cg_part *part = p->parts.v[i];
		if (number > 0 && part->number == (uint32_t)number)
			return part;
		if (uri && !strcmp(strtab_get(&p->strs, part->trigger), uri))
			return part;
	}
	return NULL;
}

bool cg_part_empty(const struct cg_part *part)
{
	return part->fns.n == 0;
}
