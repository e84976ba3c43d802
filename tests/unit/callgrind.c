/*
 * callgrind.c - unit tests for the callgrind parser on small hand-written
 * inputs, one format feature each: name compression in its three ID
 * spaces (also first defined on cfn=), subpositions (+N, -N, *, hex),
 * calls= inclusive costs, jump=/jcnd= position lines, omitted trailing
 * zeros, fi=/fe= rows, cfni= markers, recursion names, multiple parts,
 * unknown lines, codspeed events (Ct, sysCount...), gzip input, bad input,
 * and the conversion to the shared model.
 */
#include "tap.h"
#include "prof/callgrind.h"
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

static struct cg_profile prof;

/* Expected error lines of bad-input cases stay out of the test's stderr. */
static int saved_stderr = -1;
static void mute(void)
{
	fflush(stderr);
	saved_stderr = dup(2);
	int fd = open("/dev/null", O_WRONLY);
	dup2(fd, 2);
	close(fd);
	prof_quiet = 1;
}
static void unmute(void)
{
	fflush(stderr);
	dup2(saved_stderr, 2);
	close(saved_stderr);
	prof_quiet = 0;
}

static int parse(const char *text, unsigned flags)
{
	cg_profile_free(&prof);
	cg_profile_init(&prof, flags);
	mute();
	int rc = cg_parse_buffer(&prof, text, strlen(text), "test");
	unmute();
	return rc;
}

static const struct cg_fn *row(const struct cg_part *part, const char *file, const char *name)
{
	for (size_t i = 0; i < part->fns.n; i++)
		if (!strcmp(strtab_get(&prof.strs, part->fns.v[i].file), file) &&
		    !strcmp(strtab_get(&prof.strs, part->fns.v[i].name), name))
			return &part->fns.v[i];
	return NULL;
}

static uint64_t self(int part, const char *file, const char *name, int ev)
{
	const struct cg_part *p = prof.parts.v[part];
	const struct cg_fn *f = row(p, file, name);
	return f ? cg_cost(p, f->self)[ev] : (uint64_t)-1;
}

static uint64_t incl(int part, const char *file, const char *name, int ev)
{
	const struct cg_part *p = prof.parts.v[part];
	const struct cg_fn *f = row(p, file, name);
	return f ? cg_cost(p, f->incl)[ev] : (uint64_t)-1;
}

static void test_compression_and_positions(void)
{
	const char *t =
		"# callgrind format\nversion: 1\ncreator: test\npositions: instr line\n"
		"events: Ir Dr\n"
		"ob=(1) /bin/a\nfl=(1) a.c\nfn=(1) main\n"
		"0x1000 10 5 1\n"
		"+4 +2 3\n"		/* 0x1004, line 12, Dr omitted = 0 */
		"-2 * 2 2\n"		/* 0x1002, line 12 */
		"cfi=(2) b.c\ncfn=(2) work\n"	/* ids first defined on cfi=/cfn= */
		"calls=3 0x2000 20\n"
		"* * 100 7\n"
		"jump=2 +10 30\n* *\n"
		"jcnd=1/2 +12 31\n* *\n"
		"fl=(2)\nfn=(2)\n"
		"0x2000 20 90 6\n"
		"cob=(1)\ncfn=(1)\n"		/* compressed ref back to main */
		"calls=1 0x1000 10\n* * 10 1\n"
		"totals: 110 9\n";

	ok(parse(t, 0) == 0, "compressed instr+line profile parses");
	is_u64(prof.parts.n, 1, "one part");
	is_u64(self(0, "a.c", "main", 0), 10, "self Ir sums cost lines, not the call");
	is_u64(self(0, "a.c", "main", 1), 3, "omitted trailing cost is zero");
	is_u64(self(0, "b.c", "work", 0), 90, "cfn-defined id resolved on fn=(2)");
	is_u64(incl(0, "a.c", "main", 0), 110, "inclusive = self + call cost");
	const struct cg_part *p = prof.parts.v[0];
	is_u64(p->calls.n, 2, "two call edges");
	is_u64(p->calls.v[0].calls, 3, "call count");
	is_u64(cg_cost(p, p->totals)[1], 9, "totals: line read");
}

static void test_line_positions_and_lines(void)
{
	const char *t =
		"events: Ir\nfl=x.c\nfn=f\n10 1\n+2 2\n-1 4\n* 8\n";

	ok(parse(t, CG_KEEP_LINES) == 0, "line-only positions parse");
	const struct cg_part *p = prof.parts.v[0];
	uint64_t l11 = 0, l12 = 0;
	for (size_t i = 0; i < p->lines.n; i++) {
		if (p->lines.v[i].line == 11) l11 = cg_cost(p, p->lines.v[i].cost)[0];
		if (p->lines.v[i].line == 12) l12 = cg_cost(p, p->lines.v[i].cost)[0];
	}
	is_u64(l12, 2, "+2 is line 12");
	is_u64(l11, 12, "-1 then * stay on line 11");
	ok(p->totals_calculated, "no totals: line: totals calculated");
	is_u64(cg_cost(p, p->totals)[0], 15, "calculated total");
}

static void test_inline_and_recursion(void)
{
	const char *t =
		"events: Ir Ct\nob=o\nfl=main.c\nfn=count\n5 10 3\n"
		"fi=hdr.h\ncfni=is_sep\n7 20 4\nfe=main.c\ncfni=???\n6 1\n"
		"fn=fib\n1 1\ncfn=fib'2\ncalls=2 1\n* 50\n"
		"fn=fib'2\n1 40\ncfn=fib'2\ncalls=10 1\n* 30\n";

	ok(parse(t, 0) == 0, "fi/fe/cfni profile parses");
	is_u64(self(0, "main.c", "count", 0), 11, "fe= returns to the function's row");
	is_u64(self(0, "hdr.h", "count", 0), 20, "fi= code is its own row, keyed by the inlined file");
	is_u64(self(0, "hdr.h", "count", 1), 4, "second event (Ct) kept");
	const struct cg_fn *f = row(prof.parts.v[0], "hdr.h", "count");
	ok(f && !strcmp(strtab_get(&prof.strs, f->home_file), "main.c"), "inlined row remembers its function's file");
	const struct cg_part *p0 = prof.parts.v[0];
	is_u64(p0->inl.n, 1, "cfni= marks one inlined function");
	is_str(strtab_get(&prof.strs, p0->inl.n ? p0->inl.v[0].name : 0), "is_sep", "cfni= name");
	is_u64(p0->inl.n ? cg_cost(p0, p0->inl.v[0].cost)[0] : 0, 20, "cfni=??? ends the inlined cost");
	is_u64(incl(0, "main.c", "fib'2", 0), 40, "self-recursive calls are not added to inclusive");
	is_u64(incl(0, "main.c", "fib", 0), 51, "recursion entry: self + call");
}

static void test_parts(void)
{
	const char *t =
		"version: 1\ncreator: callgrind-3.24.0.codspeed\ncmd: ./h\npart: 1\n"
		"desc: Trigger: Client Request: Metadata: h\npositions: line\n"
		"events: Ir sysCount sysTime sysCpuTime\nsummary: 0\ntotals: 0\n"
		"part: 2\ndesc: Trigger: Client Request: h.c::bench_a\npositions: line\n"
		"events: Ir sysCount sysTime sysCpuTime\nsummary: 0\n"
		"ob=h\nfl=h.c\nfn=a\n3 7 0 0 1\ntotals: 7 0 0 1\n"
		"part: 3\ndesc: Trigger: Program termination\ntotals: 0\n";

	ok(parse(t, 0) == 0, "combined multi-part file parses");
	is_u64(prof.parts.n, 3, "three parts");
	ok(cg_part_empty(prof.parts.v[0]), "metadata part is empty");
	is_str(strtab_get(&prof.strs, prof.parts.v[1]->trigger), "h.c::bench_a", "trigger is the URI");
	is_u64(prof.parts.v[1]->number, 2, "part number");
	ok(cg_find_part(&prof, 0, "h.c::bench_a") == prof.parts.v[1], "find by benchmark URI");
	is_u64(cg_nev(prof.parts.v[2]), 4, "later part inherits events");
	is_u64(self(1, "h.c", "a", 3), 1, "sysCpuTime column");
}

static void test_instr_only_and_summary(void)
{
	const char *t = "positions: instr\nevents: Ir Dr\nsummary: 9 1\nfn=a\n0x10 5\n+3 2 1\n-1\n* 2\n";

	ok(parse(t, CG_KEEP_LINES) == 0, "instr-only positions parse");
	is_u64(self(0, "", "a", 0), 9, "hex and relative addresses");
	const struct cg_part *p = prof.parts.v[0];
	ok(p->positions == CG_POS_INSTR, "positions: instr");
	is_u64(cg_cost(p, p->totals)[0], 9, "summary: used when there is no totals:");
	ok(!p->totals_calculated, "summary is not a calculated total");
}

static void test_calls_zero(void)
{
	const char *t = "events: Ir\nfl=a.c\nfn=main\ncfn=g\ncalls=0 5\n3 100\n4 1\n";

	ok(parse(t, 0) == 0, "calls=0 parses");
	is_u64(self(0, "a.c", "main", 0), 1, "calls=0 cost is a call cost by default");
	parse(t, CG_ANNOTATE_COMPAT);
	is_u64(self(0, "a.c", "main", 0), 101, "callgrind_annotate compat counts it as self");
}

static void test_bad_input(void)
{
	ok(parse("", 0) < 0, "empty input is an error");
	ok(parse("\x7f" "ELF garbage\n\x01\x02", 0) < 0, "garbage is an error");
	ok(parse("events: Ir\nfn=a\n1 5\nbogus line here\nfrobnicate=3\n2 5\n", 0) == 0,
	   "unknown lines are skipped, not fatal");
	is_u64(self(0, "", "a", 0), 10, "costs around unknown lines kept");
	ok(parse("events: Ir\nfn=(7)\n1 5\nfn=(99)\n1 1\ncalls=x\n+\n1 2 3 4\nfl=\n", 0) == 0,
	   "undefined ids, bad calls=, bad positions survive");
	ok(parse("events: Ir\nfn=a\n1 5\n12", 0) == 0, "truncated last line survives");
	char huge[64];
	snprintf(huge, sizeof(huge), "events: Ir\nfn=a\n1 99999999999999999999999\n");
	ok(parse(huge, 0) == 0, "overlong number survives");
}

static void test_gzip(void)
{
	const char *t = "events: Ir\nfl=z.c\nfn=zf\n1 42\n";
	uLongf clen = compressBound(strlen(t)) + 32;
	unsigned char *c = malloc(clen);
	z_stream zs = { 0 };

	deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);	/* gzip */
	zs.next_in = (Bytef *)t;
	zs.avail_in = (uInt)strlen(t);
	zs.next_out = c;
	zs.avail_out = (uInt)clen;
	deflate(&zs, Z_FINISH);
	size_t n = zs.total_out;
	deflateEnd(&zs);
	cg_profile_free(&prof);
	cg_profile_init(&prof, 0);
	mute();
	int rc = cg_parse_buffer(&prof, (char *)c, n, "gz");
	unmute();
	ok(rc == 0, "gzip input parses");
	is_u64(self(0, "z.c", "zf", 0), 42, "gzip content");
	cg_profile_free(&prof);
	cg_profile_init(&prof, 0);
	mute();
	rc = cg_parse_buffer(&prof, (char *)c, n / 2, "gz");
	unmute();
	ok(rc < 0, "truncated gzip is an error");
	free(c);
}

int main(void)
{
	cg_profile_init(&prof, 0);
	test_compression_and_positions();
	test_line_positions_and_lines();
	test_inline_and_recursion();
	test_parts();
	test_instr_only_and_summary();
	test_calls_zero();
	test_bad_input();
	test_gzip();
	cg_profile_free(&prof);
	return done_testing();
}
