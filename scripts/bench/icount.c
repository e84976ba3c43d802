/*
 * icount.c - hot-path drivers for the instruction-count regression check
 * (icount.sh runs each under callgrind twice, with N1 and N2 operations,
 * and divides the difference in Ir by N2 - N1, so start-up and one-time
 * costs such as loading debug info cancel out).
 *
 *   icount unwind N      DWARF-unwind (libdw) one captured 12-deep sample
 *                        N times, caches warm as in a long recording
 *   icount unwind-lu N   the same with libunwind
 *   icount symbolize N   symbolize N distinct libc addresses (each one a
 *                        cache miss: ELF symbol + DWARF inline chain + line)
 *   icount symhit N      symbolize one address N times (the cache hit)
 *   icount cgline N      parse a callgrind file with N cost lines
 *   icount import N      read an N-sample prof.data file (gen.c's format)
 */
#include "capture.h"
#include "prof/callgrind.h"
#include "prof/data.h"
#include "prof/replay.h"
#include "prof/symbol.h"
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOINL __attribute__((noinline, noclone, optimize("omit-frame-pointer")))

static struct capture cap;
static volatile int sink;

NOINL static void leaf(struct capture *c)
{
	CAPTURE(c);
	__asm__ volatile("" ::: "memory");
}

NOINL static int descend(struct capture *c, int depth)
{
	int r = depth == 0 ? (leaf(c), 0) : descend(c, depth - 1);
	sink = r;
	return r + 1;
}

static int unwind_n(enum prof_unwinder_kind kind, long n)
{
	struct prof_addrspace *as = prof_addrspace_new(getpid());
	struct prof_unwinder *u = prof_unwinder_new(kind);
	struct prof_ustack st;
	static uint64_t pcs[PROF_MAX_FRAMES];
	struct prof_unwind_result res = { 0 };

	if (!u || prof_addrspace_load_proc(as) < 0)
		return 1;
	descend(&cap, 10);
	st = (struct prof_ustack){ cap.stack, cap.size };
	for (long i = 0; i < n; i++)
		prof_unwind(u, as, getpid(), &cap.regs, &st, pcs, PROF_MAX_FRAMES, &res);
	fprintf(stderr, "unwind: %zu frames, %s\n", res.n, res.complete ? "complete" : res.stop);
	prof_unwinder_free(u);
	prof_addrspace_free(as);
	return res.n < 12;
}

/* n distinct addresses spread over libc's text (qsort is in it). */
static int symbolize_n(long n, bool same)
{
	struct prof_profile p;
	struct prof_addrspace *as = prof_addrspace_new(getpid());
	uint64_t base = (uintptr_t)dlsym(RTLD_DEFAULT, "qsort"), ids = 0;
	uint32_t out[64];

	prof_profile_init(&p);
	struct prof_symbolizer *s = prof_symbolizer_new(&p);
	if (!base || prof_addrspace_load_proc(as) < 0)
		return 1;
	/* the first lookup opens libc and its debug file: outside the count */
	ids += prof_symbolize_user(s, as, base, false, out, 64);
	for (long i = 0; i < n; i++)
		ids += prof_symbolize_user(s, as, base + (same ? 0 : 1 + (uint64_t)i * 61), false, out, 64);
	fprintf(stderr, "symbolize: %llu frame ids, %zu frames\n", (unsigned long long)ids, p.frames.n);
	prof_symbolizer_free(s);
	prof_addrspace_free(as);
	prof_profile_free(&p);
	return ids == 0;
}

static int cgline_n(long n)
{
	struct strbuf b = STRBUF_INIT;
	struct cg_profile p;

	sb_addf(&b, "# callgrind format\nversion: 1\ncreator: icount\npositions: line\nevents: Ir Dr\n"
			"ob=(1) /usr/bin/app\nfl=(1) /src/app.c\n");
	for (long i = 0; i < n; i++) {
		if (i % 16 == 0)
			sb_addf(&b, "fn=(%ld) func%ld\n", i / 16 + 1, i / 16);
		if (i % 16 == 8)
			sb_addf(&b, "cfn=(%ld) callee%ld\ncalls=3 %ld\n", 100000 + i, i, 40 + i % 97);
		sb_addf(&b, "%ld %ld %ld\n", 10 + i % 97, 1000 + i, i % 13);
	}
	cg_profile_init(&p, 0);
	int ret = cg_parse_buffer(&p, b.buf, b.len, "icount.out");
	cg_profile_free(&p);
	sb_release(&b);
	return ret != 0;
}

static int import_n(const char *path)
{
	struct prof_profile p;
	struct prof_read_info info;

	prof_profile_init(&p);
	int ret = prof_data_read(path, &p, &info);
	prof_profile_free(&p);
	return ret != 0;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: icount unwind|unwind-lu|symbolize|symhit|cgline N | icount import FILE\n");
		return 2;
	}
	const char *op = argv[1];
	long n = atol(argv[2]);
	if (!strcmp(op, "unwind"))
		return unwind_n(PROF_UNWIND_LIBDW, n);
	if (!strcmp(op, "unwind-lu"))
		return unwind_n(PROF_UNWIND_LIBUNWIND, n);
	if (!strcmp(op, "symbolize"))
		return symbolize_n(n, false);
	if (!strcmp(op, "symhit"))
		return symbolize_n(n, true);
	if (!strcmp(op, "cgline"))
		return cgline_n(n);
	if (!strcmp(op, "import"))
		return import_n(argv[2]);
	fprintf(stderr, "icount: unknown operation '%s'\n", op);
	return 2;
}
