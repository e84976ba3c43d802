/*
 * record-perf-only.c - the perf record flags prof does not have, each
 * with the reason and what to use instead.  They are known by name, so a
 * perf user who types one learns what to do instead of reading "unknown
 * option"; their kinds (flag, value, optional value) mirror perf's so
 * that a flag's value is never mistaken for the command.
 */
#include "prof/util.h"
#include "record-priv.h"
#include <stddef.h>

static const struct { char s; const char *l; enum opt_kind kind; const char *why; } perf_only[] = {
	{ 'b', "branch-any", OPT_FLAG, "branch stacks need LBR hardware; prof unwinds with DWARF" },
	{ 'j', "branch-filter", OPT_VALUE, "branch stacks need LBR hardware; prof unwinds with DWARF" },
	{ 'R', "raw-samples", OPT_FLAG, "prof decodes samples while recording and keeps no raw records" },
	{ 0, "data", OPT_FLAG, "prof samples code addresses, not data addresses (prof's -d is --duration)" },
	{ 0, "phys-data", OPT_FLAG, "prof samples code addresses, not data addresses" },
	{ 'P', "period", OPT_FLAG, "prof stores each sample's weight; use -c for a fixed period" },
	{ 'n', "no-samples", OPT_FLAG, "prof records samples; use 'prof stat' for counts" },
	{ 's', "stat", OPT_FLAG, "use 'prof stat' for per-run counts" },
	{ 'u', "uid", OPT_VALUE, "record a command, -p PID or -t TID" },
	{ 'G', "cgroup", OPT_VALUE, "record a command, -p PID or -t TID" },
	{ 'W', "weight", OPT_FLAG, "prof has no weighted samples" },
	{ 'I', "intr-regs", OPT_OPTIONAL, "prof copies user registers for unwinding only" },
	{ 0, "user-regs", OPT_VALUE, "prof copies user registers for unwinding only" },
	{ 'k', "clockid", OPT_VALUE, "prof always uses CLOCK_MONOTONIC" },
	{ 'z', "compression-level", OPT_OPTIONAL, "prof.data is compact already (no stack bytes stored)" },
	{ 0, "aio", OPT_OPTIONAL, "prof writes from its own thread" },
	{ 0, "switch-output", OPT_OPTIONAL, "prof writes one file; use -d to bound a recording" },
	{ 0, "overwrite", OPT_FLAG, "prof has no flight-recorder mode" },
	{ 'S', "snapshot", OPT_OPTIONAL, "prof has no flight-recorder mode" },
	{ 'D', "delay", OPT_VALUE, "start prof record -p PID later instead" },
	{ 'r', "realtime", OPT_VALUE, "prof runs at normal priority" },
	{ 'X', "threads", OPT_OPTIONAL, "prof reads the rings from one thread" },
	{ 0, "all-kernel", OPT_FLAG, "prof records user and kernel stacks together" },
	{ 0, "all-user", OPT_FLAG, "prof records user and kernel stacks together" },
	{ 0, "kcore", OPT_FLAG, "prof symbolizes the kernel from /proc/kallsyms" },
	{ 0, "namespaces", OPT_FLAG, "prof does not record namespace events" },
};

#define PERF_ONLY_N ARRAY_SIZE(perf_only)
_Static_assert(PERF_ONLY_N <= RECORD_PERF_ONLY_MAX, "raise RECORD_PERF_ONLY_MAX");

size_t record_perf_only_append(struct opt *table, size_t n, size_t cap, int first_id)
{
	for (size_t i = 0; i < PERF_ONLY_N && n < cap; i++, n++)
		table[n] = (struct opt){ first_id + (int)i, perf_only[i].s, perf_only[i].l,
					 perf_only[i].kind };
	return n;
}

const char *record_perf_only_why(int i)
{
	return i >= 0 && (size_t)i < PERF_ONLY_N ? perf_only[i].why : NULL;
}
