/*
 * record-perf-only.c - the perf record flags prof does not have, each
 * with the reason and what to use instead (perf-only-priv.h).
 */
#include "perf-only-priv.h"
#include "prof/util.h"

static const struct perf_only perf_only[] = {
	{ 'b', "branch-any", OPT_FLAG, "sample taken branches", "branch stacks need LBR hardware; prof unwinds with DWARF" },
	{ 'j', "branch-filter", OPT_VALUE, "sample branches of these kinds", "branch stacks need LBR hardware; prof unwinds with DWARF" },
	{ 'R', "raw-samples", OPT_FLAG, "keep the raw tracepoint data", "prof decodes samples while recording and keeps no raw records" },
	{ 0, "data", OPT_FLAG, "sample data addresses", "prof samples code addresses, not data addresses (prof's -d is --duration)" },
	{ 0, "phys-data", OPT_FLAG, "sample physical data addresses", "prof samples code addresses, not data addresses" },
	{ 'P', "period", OPT_FLAG, "store each sample's period", "prof stores each sample's weight; use -c for a fixed period" },
	{ 'n', "no-samples", OPT_FLAG, "count without samples", "prof records samples; use 'prof stat' for counts" },
	{ 's', "stat", OPT_FLAG, "per-thread counts", "use 'prof stat' for per-run counts" },
	{ 'u', "uid", OPT_VALUE, "only one user's processes", "record a command, -p PID or -t TID" },
	{ 'G', "cgroup", OPT_VALUE, "only one cgroup's processes", "record a command, -p PID or -t TID" },
	{ 'W', "weight", OPT_FLAG, "sample weights (memory latency)", "prof has no weighted samples" },
	{ 'I', "intr-regs", OPT_OPTIONAL, "sample the registers at the interrupt", "prof copies user registers for unwinding only" },
	{ 0, "user-regs", OPT_VALUE, "sample these user registers", "prof copies user registers for unwinding only" },
	{ 'k', "clockid", OPT_VALUE, "timestamps from another clock", "prof always uses CLOCK_MONOTONIC" },
	{ 'z', "compression-level", OPT_OPTIONAL, "compress the perf.data with zstd", "prof.data is compact already (no stack bytes stored)" },
	{ 0, "aio", OPT_OPTIONAL, "write with asynchronous I/O", "prof writes from its own thread" },
	{ 0, "switch-output", OPT_OPTIONAL, "start a new file by size, time or signal", "prof writes one file; use -d to bound a recording" },
	{ 0, "overwrite", OPT_FLAG, "a ring that overwrites its oldest records", "prof has no flight-recorder mode" },
	{ 'S', "snapshot", OPT_OPTIONAL, "write the ring's contents on a signal", "prof has no flight-recorder mode" },
	{ 'D', "delay", OPT_VALUE, "start sampling after a delay", "start prof record -p PID later instead" },
	{ 'r', "realtime", OPT_VALUE, "run at SCHED_FIFO priority", "prof runs at normal priority" },
	{ 'X', "threads", OPT_OPTIONAL, "read the rings from several threads", "prof reads the rings from one thread" },
	{ 0, "all-kernel", OPT_FLAG, "only kernel samples", "prof records user and kernel stacks together" },
	{ 0, "all-user", OPT_FLAG, "only user samples", "prof records user and kernel stacks together" },
	{ 0, "kcore", OPT_FLAG, "copy /proc/kcore for kernel code", "prof symbolizes the kernel from /proc/kallsyms" },
	{ 0, "namespaces", OPT_FLAG, "record namespace events", "prof does not record namespace events" },
};

const struct perf_only_table record_perf_only = { perf_only, ARRAY_SIZE(perf_only) };
