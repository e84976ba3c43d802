/*
 * report-perf-only.c - the perf report flags prof does not have, each
 * with perf's meaning, the reason and what to use instead
 * (perf-only-priv.h).
 */
#include "perf-only-priv.h"
#include "prof/util.h"

static const struct perf_only perf_only[] = {
	{ 'v', "verbose", OPT_FLAG, "more messages",
	  "prof report has no debug output; --header prints every field of the recording" },
	{ 'C', "cpu", OPT_VALUE, "only samples taken on these CPUs",
	  "a prof recording does not keep each sample's CPU; record only those CPUs with 'prof record -C LIST'" },
	{ 0, "socket-filter", OPT_VALUE, "only samples of one processor socket",
	  "a prof recording does not keep each sample's CPU; record only those CPUs with 'prof record -C LIST'" },
	{ 0, "time", OPT_VALUE, "only samples in these time windows",
	  "prof report reads the whole recording; bound it when recording (-d SECONDS, or a command after '--')" },
	{ 'F', "fields", OPT_VALUE, "the output columns",
	  "prof's columns are fixed; --sort KEYS picks the key columns, --format=json has every field" },
	{ 'S', "symbols", OPT_VALUE, "only these symbols",
	  "prof report has no symbol filter; 'prof annotate FUNCTION' shows one function, --sort sym lists them" },
	{ 0, "symbol-filter", OPT_VALUE, "only symbols that contain a string",
	  "prof report has no symbol filter; 'prof annotate FUNCTION' shows one function, --sort sym lists them" },
	{ 'T', "threads", OPT_FLAG, "per-thread event counts",
	  "use --sort comm,pid,tid: one row per thread" },
	{ 'U', "hide-unresolved", OPT_FLAG, "hide samples without a symbol",
	  "prof shows them as [unknown]; --percent-limit hides small rows" },
	{ 'p', "parent", OPT_VALUE, "sort by a parent matching a regex",
	  "prof has no parent key; -g caller shows the call tree" },
	{ 'x', "exclude-other", OPT_FLAG, "only samples with a --parent match",
	  "prof has no parent key; -g caller shows the call tree" },
	{ 'D', "dump-raw-trace", OPT_FLAG, "the raw records",
	  "prof keeps no raw records; 'perf script' dumps a perf.data" },
	{ 't', "field-separator", OPT_VALUE, "columns split by a character",
	  "use --format=json or --format=folded for machine-readable output" },
	{ 'w', "column-widths", OPT_VALUE, "fixed column widths", "prof sizes its columns itself" },
	{ 'k', "vmlinux", OPT_VALUE, "a vmlinux for kernel symbols",
	  "prof names kernel functions from /proc/kallsyms" },
	{ 0, "kallsyms", OPT_VALUE, "a kallsyms file for kernel symbols",
	  "prof names kernel functions from /proc/kallsyms" },
	{ 0, "symfs", OPT_VALUE, "a root directory for the recorded binaries",
	  "prof reads the binaries at their recorded paths and their debug files by build-id; --source-root DIR finds sources" },
	{ 'M', "disassembler-style", OPT_VALUE, "objdump's syntax for annotation",
	  "'prof annotate' disassembles with its own disassembler" },
	{ 0, "tui", OPT_FLAG, "the interactive browser",
	  "prof report prints text; --open writes the html report, 'prof top' is the live view" },
	{ 0, "gtk", OPT_FLAG, "the GTK browser",
	  "prof report prints text; --open writes the html report, 'prof top' is the live view" },
	{ 'b', "branch-stack", OPT_FLAG, "branch records instead of samples",
	  "branch stacks need LBR hardware; prof unwinds with DWARF" },
	{ 0, "branch-history", OPT_FLAG, "branch records in the call graph",
	  "branch stacks need LBR hardware; prof unwinds with DWARF" },
	{ 0, "mem-mode", OPT_FLAG, "data addresses", "prof samples code addresses, not data addresses" },
	{ 0, "itrace", OPT_OPTIONAL, "decode hardware traces", "prof samples; it decodes no Intel PT or CoreSight traces" },
	{ 0, "stats", OPT_FLAG, "the record type counts", "--header prints the recording's counts" },
	{ 0, "tasks", OPT_FLAG, "the task list", "use --sort pid,tid,comm: the tasks that have samples" },
	{ 0, "mmaps", OPT_FLAG, "the task list with maps", "use --sort pid,dso: the modules each process ran in" },
	{ 0, "no-demangle", OPT_FLAG, "raw symbol names", "prof always demangles (C++, Rust, and Go names)" },
	{ 0, "ignore-callees", OPT_VALUE, "hide the callees of matching functions",
	  "prof has no callee filter; --max-stack N keeps the innermost N frames" },
};

const struct perf_only_table report_perf_only = { perf_only, ARRAY_SIZE(perf_only) };
