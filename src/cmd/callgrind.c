/*
 * callgrind.c - `prof callgrind annotate|run|diff`: option parsing and
 * wiring for the callgrind subsystem (src/callgrind/).  Exit codes: 0 ok,
 * 2 usage or bad input; run exits with the profiled command's status.
 */
#include "prof/callgrind.h"
#include "prof/cmd.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_main[] =
	"usage: prof callgrind annotate FILE... [--part N | --benchmark URI] [--inclusive]\n"
	"                 [--tree=caller|callee|both] [--auto] [--threshold=PCT] [--show=EVENTS]\n"
	"                 [--format=text|json] [--compat]\n"
	"   or: prof callgrind run [-l LABEL] [--codspeed] -- CMD [ARGS]\n"
	"   or: prof callgrind diff BASE HEAD [--benchmark URI] [--event Ir] [--format=text|json]\n"
	"\n"
	"annotate  flat per-function table of a callgrind profile, part by part\n"
	"          (rows equal callgrind_annotate's); FILE may be gzip or zstd\n"
	"          compressed, or several per-dump files (callgrind.out.1 ...)\n"
	"          --compat: count calls=0 lines (calls running at dump time) as\n"
	"          self cost, exactly as callgrind_annotate 3.19 does\n"
	"run       run CMD under valgrind's callgrind (CodSpeed's flags with\n"
	"          --codspeed); writes profiles/LABEL.callgrind{,.flat.txt,.tree.txt}\n"
	"diff      compare two profiles per benchmark (part) and function\n";

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "prof callgrind: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, " (see 'prof callgrind --help')\n");
	return EXIT_USAGE;
}

/* "--name=value" or "--name value": returns the value or NULL. */
static const char *opt_value(int argc, char **argv, int *i, const char *name)
{
	size_t n = strlen(name);

	if (!strncmp(argv[*i], name, n)) {
		if (argv[*i][n] == '=')
			return argv[*i] + n + 1;
		if (!argv[*i][n] && *i + 1 < argc)
			return argv[++*i];
	}
	return NULL;
}

static int load_all(struct cg_profile *p, char **files, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (cg_load_file(p, files[i]) < 0)
			return -1;
	return 0;
}

static int cmd_annotate(int argc, char **argv)
{
	struct cg_annotate_opts o = { .threshold = 99 };
	VEC(char *) files = { 0 };
	const char *bench = NULL, *format = "text", *v;
	int part_no = 0, rc = 0;
	bool compat = false;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if ((v = opt_value(argc, argv, &i, "--part"))) {
			part_no = atoi(v);
			if (part_no <= 0)
				return usage_error("--part wants a part number >= 1, not '%s'", v);
		} else if ((v = opt_value(argc, argv, &i, "--benchmark")))
			bench = v;
		else if (!strcmp(a, "--compat"))
			compat = true;
		else if (!strcmp(a, "--inclusive") || !strcmp(a, "--inclusive=yes"))
			o.inclusive = true;
		else if ((v = opt_value(argc, argv, &i, "--tree"))) {
			if (!strcmp(v, "caller")) o.tree = CG_TREE_CALLER;
			else if (!strcmp(v, "callee") || !strcmp(v, "calling")) o.tree = CG_TREE_CALLEE;
			else if (!strcmp(v, "both")) o.tree = CG_TREE_BOTH;
			else if (!strcmp(v, "none")) o.tree = CG_TREE_NONE;
			else return usage_error("--tree wants caller, callee or both, not '%s'", v);
		} else if (!strcmp(a, "--auto") || !strcmp(a, "--auto=yes"))
			o.auto_source = true;
		else if ((v = opt_value(argc, argv, &i, "--threshold"))) {
			char *end;
			o.threshold = strtod(v, &end);
			if (end == v || (*end && strcmp(end, "%")) || o.threshold < 0 || o.threshold > 100)
				return usage_error("--threshold wants a percentage 0..100, not '%s'", v);
		} else if ((v = opt_value(argc, argv, &i, "--show")))
			o.show = v;
		else if ((v = opt_value(argc, argv, &i, "--format"))) {
			if (strcmp(v, "text") && strcmp(v, "json"))
				return usage_error("--format wants text or json, not '%s'", v);
			format = v;
		} else if (a[0] == '-' && a[1])
			return usage_error("unknown option '%s'", a);
		else
			VEC_PUSH(&files, argv[i]);
	}
	if (!files.n)
		return usage_error("annotate needs a callgrind FILE%s", "");
	o.json = !strcmp(format, "json");

	struct cg_profile p;
	cg_profile_init(&p, (o.auto_source ? CG_KEEP_LINES : 0) | (compat ? CG_ANNOTATE_COMPAT : 0));
	if (load_all(&p, files.v, files.n) < 0) {
		rc = EXIT_USAGE;
		goto out;
	}
	VEC(struct cg_part *) sel = { 0 };
	for (size_t i = 0; i < p.parts.n; i++) {
		struct cg_part *part = p.parts.v[i];
		if (part_no && part->number != (uint32_t)part_no)
			continue;
		if (bench && strcmp(strtab_get(&p.strs, part->trigger), bench))
			continue;
		VEC_PUSH(&sel, part);
	}
	if (!sel.n) {
		if (bench)
			error("no part for benchmark '%s' (the Part: lines of 'prof callgrind annotate FILE' list them)", bench);
		else if (part_no)
			error("no part %d (the Part: lines of 'prof callgrind annotate FILE' list them)", part_no);
		else
			error("no parts in the profile");
		rc = EXIT_USAGE;
		VEC_FREE(&sel);
		goto out;
	}
	/* Validate --show against every selected part first: one clean error. */
	for (size_t i = 0; i < sel.n; i++) {
		int *ev;
		size_t nev;
		if (cg_show_events(&p, sel.v[i], o.show, &ev, &nev) < 0) {
			rc = EXIT_USAGE;
			VEC_FREE(&sel);
			goto out;
		}
		free(ev);
	}
	if (o.json) {
		cg_annotate_json(stdout, &p, sel.v, sel.n, &o);
	} else {
		for (size_t i = 0; i < sel.n; i++) {
			if (cg_part_empty(sel.v[i]) && sel.n > 1 && !part_no && !bench) {
				printf("%sPart %u%s%s: empty (no costs)\n\n", i ? "" : "",
				       sel.v[i]->number, sel.v[i]->trigger ? " - " : "",
				       strtab_get(&p.strs, sel.v[i]->trigger));
				continue;
			}
			if (cg_part_empty(sel.v[i]))
				warning("part %u has no costs", sel.v[i]->number);
			cg_annotate_text(stdout, &p, sel.v[i], &o);
		}
	}
	VEC_FREE(&sel);
out:
	VEC_FREE(&files);
	cg_profile_free(&p);
	return rc;
}

static int callgrind_cmd_diff(int argc, char **argv)
{
	struct cg_diff_opts o = { 0 };
	const char *files[2] = { NULL, NULL }, *v;
	size_t nfiles = 0;

	for (int i = 1; i < argc; i++) {
		if ((v = opt_value(argc, argv, &i, "--benchmark")))
			o.benchmark = v;
		else if ((v = opt_value(argc, argv, &i, "--event")))
			o.event = v;
		else if ((v = opt_value(argc, argv, &i, "--format"))) {
			if (strcmp(v, "text") && strcmp(v, "json"))
				return usage_error("--format wants text or json, not '%s'", v);
			o.json = !strcmp(v, "json");
		} else if (argv[i][0] == '-' && argv[i][1])
			return usage_error("unknown option '%s'", argv[i]);
		else if (nfiles < 2)
			files[nfiles++] = argv[i];
		else
			return usage_error("diff takes two files, BASE and HEAD; extra '%s'", argv[i]);
	}
	if (nfiles != 2)
		return usage_error("diff needs BASE and HEAD callgrind files%s", "");

	struct cg_profile base, head;
	int rc = EXIT_USAGE;
	cg_profile_init(&base, 0);
	cg_profile_init(&head, 0);
	if (cg_load_file(&base, files[0]) == 0 && cg_load_file(&head, files[1]) == 0)
		rc = cg_diff(stdout, &base, &head, &o) < 0 ? EXIT_USAGE : 0;
	cg_profile_free(&base);
	cg_profile_free(&head);
	return rc;
}

static int cmd_run(int argc, char **argv)
{
	struct cg_run_opts o = { .label = "callgrind" };
	int i;
	const char *v;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			i++;
			break;
		}
		if ((v = opt_value(argc, argv, &i, "-l")) || (v = opt_value(argc, argv, &i, "--label"))) {
			if (!*v || strchr(v, '/'))
				return usage_error("a label is a plain name, not '%s'", v);
			o.label = v;
		} else if (!strcmp(argv[i], "--codspeed"))
			o.codspeed = true;
		else if (argv[i][0] == '-')
			return usage_error("unknown option '%s'", argv[i]);
		else
			break;
	}
	if (i >= argc)
		return usage_error("run needs a command: prof callgrind run -- CMD [ARGS]%s", "");
	o.argv = argv + i;
	int rc = cg_run(&o);
	return rc < 0 ? EXIT_USAGE : rc;
}

int cmd_callgrind(int argc, char **argv)
{
	if (argc < 2) {
		fputs(usage_main, stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help") ||
	    wants_help(argc, argv)) {
		fputs(usage_main, stdout);
		return 0;
	}
	if (!strcmp(argv[1], "annotate"))
		return cmd_annotate(argc - 1, argv + 1);
	if (!strcmp(argv[1], "diff"))
		return callgrind_cmd_diff(argc - 1, argv + 1);
	if (!strcmp(argv[1], "run"))
		return cmd_run(argc - 1, argv + 1);
	return usage_error("'%s' is not a callgrind subcommand (annotate, run, diff)", argv[1]);
}
