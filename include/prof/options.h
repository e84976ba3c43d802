/*
 * options.h - the one command-line option parser every prof command uses,
 * and the checked number parsers that go with it.
 *
 * A command describes its options in a table of struct opt and gives a
 * callback that applies one option.  The parser does the POSIX/GNU part the
 * same way for every command: short options bundle (-nq), a short option's
 * value may be attached (-o out, -oout), a long option's value may follow
 * '=' or come as the next argument, "--" ends the options, -h/--help is
 * reported to the caller (which prints its own help text).  Every error
 * names the option as the user typed it ("unknown option '-q'", not the
 * argument the short option was bundled in) and ends with a pointer to the
 * command's --help.  Nothing here prints help, exits, or knows the list of
 * commands: the parser returns 0, OPT_HELP or -EINVAL.
 */
#ifndef PROF_OPTIONS_H
#define PROF_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>

enum opt_kind {
	OPT_FLAG,		/* no value */
	OPT_VALUE,		/* a value, attached or the next argument */
	OPT_OPTIONAL,		/* a value only when attached: --color, --color=never, -g */
};

struct opt {
	int id;			/* handed to the callback; an id of 0 ends the table */
	char short_name;	/* 0: none */
	const char *long_name;	/* NULL: none */
	enum opt_kind kind;
};

/* id given to the callback for a plain (non-option) argument. */
#define OPT_ARG (-1)
/* Returned by opt_parse() when -h or --help was given. */
#define OPT_HELP 1

/* Flags for opt_parse(). */
#define OPT_STOP_AT_ARG 1u	/* the first plain argument ends the options (a command follows) */

/*
 * Applies one option: id from the table (or OPT_ARG), value (NULL for a
 * flag or an absent optional value), flag as typed ("-o", "--output") for
 * error messages.  Returns 0 or -EINVAL after one error line.
 */
typedef int (*opt_apply_fn)(void *ctx, int id, const char *value, const char *flag);

/*
 * Parses argv[1..argc-1].  *rest (may be NULL) receives the index of the
 * first argument not consumed: argc, or with OPT_STOP_AT_ARG the first
 * plain argument (after a "--").  Without OPT_STOP_AT_ARG plain arguments go
 * to apply with OPT_ARG.  Returns 0, OPT_HELP or -EINVAL.
 */
int opt_parse(const struct opt *table, int argc, char **argv, unsigned flags,
	      opt_apply_fn apply, void *ctx, int *rest);

/*
 * One error line for a bad command line, with the pointer to --help of the
 * running command; returns -EINVAL.
 */
int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Checked numbers for option values: the whole string must be a number
 * within [lo, hi] (u64 accepts the k/m/g suffixes of parse_u64).  On a bad
 * value: "invalid value 'x' for FLAG (want ...)" and -EINVAL.
 */
int opt_u64(const char *flag, const char *value, uint64_t lo, uint64_t hi, uint64_t *out);
int opt_double(const char *flag, const char *value, double lo, double hi, double *out);
/*
 * A comma-separated list of ids (-p 1,2,3; --tid): each id is checked as
 * opt_u64 checks it and handed to add(ctx, id, flag), which stores it and
 * returns 0 (or -EINVAL after its own error line, such as "too many").  A
 * list without an id (",") is refused.  The one parser of every pid and
 * tid list, so that record, top and report take the same lists.
 */
typedef int (*opt_id_fn)(void *ctx, uint64_t id, const char *flag);
int opt_id_list(const char *flag, const char *value, uint64_t lo, uint64_t hi,
		opt_id_fn add, void *ctx);
/* The same for a percentage 0..hi given as "5" or "5%"; *out is a fraction (0.05). */
int opt_percent(const char *flag, const char *value, double hi, double *out);
/* value is one of the NULL-terminated names: its index, else -EINVAL after
 * "unknown FLAG 'x' (want a, b or c)". */
int opt_choice(const char *flag, const char *value, const char *const *names);
/* --color[=auto|always|never] (value NULL: --color alone, always):
 * *when is 0 auto, 1 always, 2 never.  color_wanted decides: always,
 * never, or auto = stdout is a terminal and NO_COLOR (no-color.org) unset. */
int opt_color(const char *flag, const char *value, int *when);
bool color_wanted(int when, bool to_terminal);
/* --format text|json, the choice of stat, diff, crosscheck and callgrind. */
int opt_text_or_json(const char *flag, const char *value, bool *json);

#endif
