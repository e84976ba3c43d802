/*
 * report-priv.h - what `prof report`'s two files share: the options
 * (parsed in report-options.c, with perf report's flags and their
 * meaning) and the command that loads and renders with them (report.c).
 */
#ifndef PROF_REPORT_PRIV_H
#define PROF_REPORT_PRIV_H

#include "prof/model.h"
#include "prof/output.h"
#include "prof/util.h"

struct report_opts {
	VEC(const char *) source_roots;
	const char *input, *output;
	const char *diff_base, *diff_head;
	enum prof_format format;
	bool tree, have_limit, open, have_metric;
	/* heap snapshots (seconds from the recording's start; < 0: not set):
	 * --at, --since (the snapshot diff) and --min-age (the leak view) */
	double at, since, min_age;
	int color;			/* 0 auto, 1 always, 2 never */
	struct prof_view view;
};

/* argv into o (o->view initialised by the caller): 0, OPT_HELP or -EINVAL
 * after one usage line. */
int cmd_report_parse_args(int argc, char **argv, struct report_opts *o);

#endif
