/*
 * prof.c - main(): dispatches `prof <command>` through the commands[]
 * table (git.c style).  Adding a command = one file in src/cmd/ and one row
 * here.
 */
#include "prof/cmd.h"
#include "prof/util.h"
#include "help-prof.h"
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
	{ "annotate", cmd_annotate, "one function's costs per source line and per instruction" },
	{ "stat", cmd_stat, "run a command N times: CPU, RSS, I/O wait statistics" },
	{ "diff", cmd_diff, "compare recordings: per-function change with confidence and a verdict" },
	{ "callgrind", cmd_callgrind, "annotate, run and compare callgrind profiles" },
	{ "crosscheck", cmd_crosscheck, "join callgrind instruction counts with sampled time: real, artifact or noise" },
};

static void usage(FILE *f)
{
	fputs(help_prof, f);
}

static const struct command *find_command(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (!strcmp(name, commands[i].name))
			return &commands[i];
	return NULL;
}

static int run(const struct command *c, int argc, char **argv)
{
	prof_cmd_name = c->name;
	return c->fn(argc, argv);
}

/* `prof help CMD` is `prof CMD --help`. */
static int help(int argc, char **argv)
{
	const struct command *c = argc > 2 ? find_command(argv[2]) : NULL;

	if (argc <= 2) {
		usage(stdout);
		return 0;
	}
	if (!c) {
		fprintf(stderr, "prof: '%s' is not a prof command (see 'prof --help')\n", argv[2]);
		return EXIT_USAGE;
	}
	return run(c, 2, (char *[]){ argv[2], "--help", NULL });
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "help"))
		return help(argc, argv);
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("prof %s\n", PROF_VERSION);
		return 0;
	}
	const struct command *c = find_command(argv[1]);
	if (c)
		return run(c, argc - 1, argv + 1);
	fprintf(stderr, "prof: '%s' is not a prof command (see 'prof --help')\n", argv[1]);
	return EXIT_USAGE;
}
