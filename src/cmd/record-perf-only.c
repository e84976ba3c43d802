/*
 * record-perf-only.c - the perf record flags prof does not have, each
 * with the reason and what to use instead (perf-only-priv.h).
 */
#include "perf-only-priv.h"
#include "prof/util.h"

static const struct perf_only perf_only[] = {
	{ 'b', "branch-any", OPT_FLAG, NULL, "branch stacks need LBR hardware; prof unwinds with DWARF" },
	{ 'j', "branch-filter", OPT_VALUE, NULL, "branch stacks need LBR hardware; prof unwinds with DWARF" },
	{ 'R', "raw-samples", OPT_FLAG, NULL, "prof decodes samples while recording and keeps no raw records" },
	{ 0, "data", OPT_FLAG, NULL, "prof samples code addresses, not data addresses (prof's -d is --duration)" },
	{ 0, "phys-data", OPT_FLAG, NULL, "prof samples code addresses, not data addresses" },
	{ 'P', "period", OPT_FLAG, NULL, "prof stores each sample's weight; use -c for a fixed period" },
	{ 'n', "no-samples", OPT_FLAG, NULL, "prof records samples; use 'prof stat' for counts" },
	{ 's', "stat", OPT_FLAG, NULL, "use 'prof stat' for per-run counts" },
	{ 'u', "uid", OPT_VALUE, NULL, "record a command, -p PID or -t TID" },
	{ 'G', "cgroup", OPT_VALUE, NULL, "record a command, -p PID or -t TID" },
	{ 'W', "weight", OPT_FLAG, NULL, "prof has no weighted samples" },
	{ 'I', "intr-regs", OPT_OPTIONAL, NULL, "prof copies user registers for unwinding only" },
	{ 0, "user-regs", OPT_VALUE, NULL, "prof copies user registers for unwinding only" },
	{ 'k', "clockid", OPT_VALUE, NULL, "prof always uses CLOCK_MONOTONIC" },
	{ 'z', "compression-level", OPT_OPTIONAL, NULL, "prof.data is compact already (no stack bytes stored)" },
	{ 0, "aio", OPT_OPTIONAL, NULL, "prof writes from its own thread" },
	{ 0, "switch-output", OPT_OPTIONAL, NULL, "prof writes one file; use -d to bound a recording" },
	{ 0, "overwrite", OPT_FLAG, NULL, "prof has no flight-recorder mode" },
	{ 'S', "snapshot", OPT_OPTIONAL, NULL, "prof has no flight-recorder mode" },
	{ 'D', "delay", OPT_VALUE, NULL, "start prof record -p PID later instead" },
	{ 'r', "realtime", OPT_VALUE, NULL, "prof runs at normal priority" },
	{ 'X', "threads", OPT_OPTIONAL, NULL, "prof reads the rings from one thread" },
	{ 0, "all-kernel", OPT_FLAG, NULL, "prof records user and kernel stacks together" },
	{ 0, "all-user", OPT_FLAG, NULL, "prof records user and kernel stacks together" },
	{ 0, "kcore", OPT_FLAG, NULL, "prof symbolizes the kernel from /proc/kallsyms" },
	{ 0, "namespaces", OPT_FLAG, NULL, "prof does not record namespace events" },
};

const struct perf_only_table record_perf_only = { perf_only, ARRAY_SIZE(perf_only) };
