/*
 * fuzz_profdata.c - libFuzzer target for the prof.data reader and every
 * report renderer: any byte string must either be rejected with an error
 * or load into a profile that all formats can print, without a crash,
 * leak or undefined behaviour.  Seeds: tests/fuzz/corpus/profdata/
 * (written by `build/tests/unit/data.t --write-seeds DIR`).
 */
#include "prof/data.h"
#include "prof/output.h"
#include <stdio.h>
#include <string.h>

static FILE *sink;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * Rejected inputs print one error() line each, which would flood the log:
 * ask libFuzzer to close the target's stderr (-close_fd_mask=2).  It keeps
 * its own copy for its status lines and sanitizer reports.
 */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static char *args[64];
	static char mask[] = "-close_fd_mask=2";
	int n = 0;

	for (int i = 0; i < *argc && n < 62; i++)
		args[n++] = (*argv)[i];
	if (n > 0) {
		/* after argv[0], before the corpus dirs (flags come first) */
		memmove(args + 2, args + 1, (size_t)(n - 1) * sizeof(*args));
		args[1] = mask;
		n++;
	}
	args[n] = NULL;
	*argc = n;
	*argv = args;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct prof_profile p;
	struct prof_read_info info;
	struct prof_view v;

	if (!sink)
		sink = fopen("/dev/null", "w");
	prof_profile_init(&p);
	if (prof_data_read_mem(data, size, &p, &info) == 0) {
		prof_view_init(&v);
		v.metric = size % 5 == 0 ? PROF_VIEW_WALL : PROF_VIEW_CPU;
		v.sort = size & 1 ? PROF_SORT_TOTAL : PROF_SORT_SELF;
		prof_output_text_flat(sink, &p, &v);
		prof_output_text_tree(sink, &p, &v);
		prof_output_folded(sink, &p, &v);
		prof_output_json(sink, &p, &v);
		v.dso = "app";
		v.comm = "worker";
		prof_output_text_flat(sink, &p, &v);
	}
	prof_profile_free(&p);
	return 0;
}
