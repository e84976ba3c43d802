/*
 * cmd.h - the subcommands.  Each cmd_<name>() lives in src/cmd/<name>.c,
 * parses its own options, wires the subsystems together and prints.  Only
 * here may a function print-and-exit.  Exit codes: 0 success, 1 "found
 * something" where a command documents it (diff: regression), 2 usage or
 * input error, 3 the measured command failed (stat), 128+ internal
 * failure; `prof record -- cmd` exits with cmd's status.
 */
#ifndef PROF_CMD_H
#define PROF_CMD_H

#include <stdbool.h>
#include <stdio.h>

#define EXIT_USAGE 2
#define EXIT_REGRESSION 1	/* diff, crosscheck, stat --baseline: a regression passed the thresholds */
#define EXIT_CMD_FAILED 3	/* stat: a run of the command failed (without --ignore-failure) */

int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
/* `prof annotate` (src/cmd/annotate.c); `prof callgrind annotate` is
 * cmd_callgrind_annotate, inside cmd/callgrind.c */
int cmd_annotate(int argc, char **argv);
int cmd_callgrind(int argc, char **argv);
int cmd_stat(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_crosscheck(int argc, char **argv);
int cmd_top(int argc, char **argv);

/*
 * main() of `prof diff` and `prof crosscheck` (src/cmd/diff.c): options
 * through an_cli_parse(), --help, the command's own argument check, run;
 * exit 0, EXIT_REGRESSION or EXIT_USAGE.
 */
struct an_cli;
struct cmd_analysis {
	bool crosscheck;
	void (*usage)(FILE *f);
	int (*check)(struct an_cli *c);
	int (*run)(struct an_cli *c, bool *regression);
};
int cmd_analysis_main(int argc, char **argv, const struct cmd_analysis *cmd);

#endif
