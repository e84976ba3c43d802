/*
 * cmd.h - the subcommands.  Each cmd_<name>() lives in src/cmd/<name>.c,
 * parses its own options, wires the subsystems together and prints.  Only
 * here may a function print-and-exit.  Exit codes: 0 success, 1 "found
 * something" where a command documents it (diff: regression), 2 usage or
 * input error, 128+ internal failure; `prof record -- cmd` exits with cmd's
 * status.
 */
#ifndef PROF_CMD_H
#define PROF_CMD_H

#define PROF_VERSION "0.1.0"
#define EXIT_USAGE 2
#define EXIT_REGRESSION 1	/* diff, crosscheck, stat --baseline: a regression passed the thresholds */

int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
/* `prof annotate` (src/cmd/annotate.c); callgrind.c has a static cmd_annotate */
int cmd_annotate_function(int argc, char **argv);
int cmd_callgrind(int argc, char **argv);
int cmd_stat(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_crosscheck(int argc, char **argv);
int cmd_top(int argc, char **argv);

/* True when argv[1] is -h or --help (each command prints its own usage). */
int wants_help(int argc, char **argv);

#endif
