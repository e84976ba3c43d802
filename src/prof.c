/*
 * prof.c - main(): dispatches `prof <command>` through the commands[]
 * table (git.c style).  Adding a command = one file in src/cmd/ and one row
 * here.
 */
#include "prof/cmd.h"
#include "prof/util.h"
#include <stdio.h>
#include <string.h>

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	/* { "name", cmd_name, "one-line summary" }, in the order users need them */
	{ "record", cmd_record, "sample a command or running processes into prof.data" },
	{ "report", cmd_report, "show a recording (or perf.data): text, tree, flame graph, html, json..." },
	{ "top", cmd_top, "live view of the hottest functions of running processes or the whole machine" },
	{ "annotate", cmd_annotate_function, "one function's costs per source line and per instruction" },
	{ "stat", cmd_stat, "run a command N times: CPU, RSS, I/O wait statistics" },
	{ "diff", cmd_diff, "compare recordings: per-function change with confidence and a verdict" },
	{ "callgrind", cmd_callgrind, "annotate, run and compare callgrind profiles" },
	{ "crosscheck", cmd_crosscheck, "join callgrind instruction counts with sampled time: real, artifact or noise" },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: prof <command> [options]\n\ncommands:\n");
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\n'prof <command> --help' describes each command.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("prof %s\n", PROF_VERSION);
		return 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++) {
		if (!strcmp(argv[1], commands[i].name)) {
			prof_cmd_name = commands[i].name;
			return commands[i].fn(argc - 1, argv + 1);
		}
	}
	fprintf(stderr, "prof: '%s' is not a prof command (see 'prof --help')\n", argv[1]);
	return EXIT_USAGE;
}
