/*
 * report.c - `prof report`: loads a recording (prof.data or perf.data, or
 * two with --diff) and writes it in the chosen format (src/output/
 * formats.c) to stdout, -o FILE, or the format's file on a terminal.
 * The options are parsed in report-options.c; the loading progress and
 * the choice of destination and colour live here.
 */
#include "prof/cmd.h"
#include "prof/data.h"
#include "prof/perfdata.h"
#include "prof/options.h"
#include "prof/output.h"
#include "report-priv.h"
#include "help-prof-report.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void show_progress(void *arg, uint64_t done, uint64_t total)
{
	progress_update(arg, done, total);
}

/* prof.data or perf.data (perfdata/load.c), with the loading progress line. */
static int load(const char *input, struct prof_profile *p)
{
	struct progress pr;
	int ret;

	progress_start(&pr, "loading", false);
	ret = perfdata_load_any(input, p, show_progress, &pr);
	progress_done(&pr);
	return ret;
}

/* Where the report goes: -o, the format's default file on a terminal, or stdout. */
static const char *output_path(const struct report_opts *o)
{
	if (o->output)
		return strcmp(o->output, "-") ? o->output : NULL;
	if (prof_format_terminal_file(o->format) && isatty(1))
		return prof_format_terminal_file(o->format);
	return NULL;
}

static int write_report(const struct report_opts *o, const struct prof_profile *p,
			const struct prof_profile *head)
{
	const char *path = output_path(o);
	struct out_file out;
	int ret;

	if ((ret = perfdata_refuse_over_recording(path)) < 0 || (ret = out_open(&out, path)) < 0)
		return ret;
	ret = head ? prof_format_render_diff(out.f, o->format, p, head, &o->view)
		   : prof_format_render(out.f, o->format, o->tree, p, &o->view);
	if (ret < 0) {
		out_discard(&out);	/* the file at -o stays as it was */
		return error("cannot write '%s': %s", path ? path : "stdout", strerror(-ret));
	}
	if (out_commit(&out) < 0)
		return -EIO;
	if (path && !o->output)
		info("wrote %s", path);
	return 0;
}


/* --open: the HTML report in a fresh temporary file, its path on stdout. */
static int open_report(struct report_opts *o, const struct prof_profile *p)
{
	char dir[] = "/tmp/prof-report.XXXXXX";

	if (!mkdtemp(dir))
		return error("cannot create a temporary directory: %s", strerror(errno));
	char *path = xasprintf("%s/report.html", dir);
	o->output = path;
	int ret = write_report(o, p, NULL);
	if (!ret)
		printf("%s\n", path);
	free(path);
	return ret;
}

/* Seconds to ns, rounded: a time given to the ns (the HTML viewer's
 * equivalent flags) selects the same samples as the viewer did. */
static uint64_t seconds_ns(double s)
{
	return (uint64_t)llround(s * 1e9);
}

/* --at T / --min-age S: the heap of p as at T s, or the leak view;
 * t: seconds from the start (< 0: the end). */
static int heap_view(const struct report_opts *o, struct prof_profile *p, double t)
{
	int ret;

	if (!p->heap.present)
		return error("'%s' has no heap samples (record with --heap)", o->input);
	if (o->min_age >= 0) {
		ret = prof_profile_heap_leaks(p, seconds_ns(o->min_age));
		if (ret == -ENODATA)
			return error("'%s' does not say which blocks were live at its end (the recording was cut short)",
				     o->input);
		return ret;
	}
	if (t >= 0)
		prof_profile_heap_until(p, p->start_ns + seconds_ns(t));
	return 0;
}

/* --since A [--at B]: the snapshot diff, live at B minus live at A, as
 * `prof diff` shows two recordings. */
static int snapshot_diff(const struct report_opts *o, struct prof_profile *p)
{
	struct prof_profile head;
	int ret;

	prof_profile_init(&head);
	head.keep_timed = p->keep_timed;
	ret = load(o->input, p);
	if (!ret)
		ret = load(o->input, &head);
	if (!ret)
		ret = heap_view(o, p, o->since);
	if (!ret)
		ret = heap_view(o, &head, o->at);
	if (!ret)
		ret = write_report(o, p, &head);
	prof_profile_free(&head);
	return ret;
}

static int validate(const struct report_opts *o)
{
	if (o->diff_base && !prof_format_has_diff(o->format))
		return error("--diff makes text, folded, flamegraph or html output, not %s",
			     prof_format_name(o->format));
	if (o->diff_base && o->open)
		return error("--open shows one recording; use --diff with --format=flamegraph -o FILE");
	if (o->since >= 0 && (!prof_format_has_diff(o->format) || o->open))
		return error("--since makes a diff: text, folded, flamegraph or html output with -o, not %s%s",
			     prof_format_name(o->format), o->open ? " with --open" : "");
	return 0;
}

int cmd_report(int argc, char **argv)
{
	struct report_opts o = { .at = -1, .since = -1, .min_age = -1 };
	struct prof_profile p;
	int ret;

	prof_view_init(&o.view);
	ret = cmd_report_parse_args(argc, argv, &o);
	if (ret == OPT_HELP) {
		fputs(help_prof_report, stdout);
		VEC_FREE(&o.source_roots);
		return 0;
	}
	if (ret < 0 || validate(&o) < 0) {
		VEC_FREE(&o.source_roots);
		return EXIT_USAGE;
	}
	o.view.title = o.diff_head ? o.diff_head : o.input;
	o.view.color = color_wanted(o.color, !output_path(&o) && isatty(1));
	prof_profile_init(&p);
	/* time-ordered outputs need every sample with its time */
	p.keep_timed = prof_format_timed(o.format);
	if (o.diff_base) {
		struct prof_profile head;
		prof_profile_init(&head);
		ret = load(o.diff_base, &p);
		if (!ret)
			ret = load(o.diff_head, &head);
		if (!ret)
			ret = write_report(&o, &p, &head);
		prof_profile_free(&head);
	} else if (o.since >= 0) {
		ret = snapshot_diff(&o, &p);
	} else {
		ret = load(o.input, &p);
		if (!ret && (o.at >= 0 || o.min_age >= 0))
			ret = heap_view(&o, &p, o.at);
		if (!ret)
			ret = o.open ? open_report(&o, &p) : write_report(&o, &p, NULL);
	}
	prof_profile_free(&p);
	VEC_FREE(&o.source_roots);
	return ret ? EXIT_USAGE : 0;
}
