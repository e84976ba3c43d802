/*
 * load.c - what every reading command accepts as input: a prof.data file,
 * or a perf.data file (PERFILE2 magic) through the importer, or "-" for
 * either on stdin (a pipe from `prof record -o -` or `perf record -o -`).
 * Warns about cut files and dangling samples; returns 0 or -errno after
 * one error line.
 */
#include "prof/data.h"
#include "prof/perfdata.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int load_perf_data(const char *path, struct prof_profile *p)
{
	struct perfdata_info pi;
	int ret = perfdata_read(path, p, &pi);	/* error() already printed */

	if (ret < 0)
		return ret;
	if (pi.truncated)
		warning("%s is truncated (perf record was interrupted); showing the %llu samples "
			"before the cut", path, (unsigned long long)p->samples);
	return 0;
}

/* stdin is copied to a temporary file, then read like any recording: the
 * reader of prof.data seeks, and the format is known only from its magic. */
static int load_stdin(struct prof_profile *p, prof_data_progress_fn *progress, void *arg)
{
	char path[] = "/tmp/prof-stdin.XXXXXX";
	int fd = mkstemp(path), ret = 0;
	char buf[65536];
	ssize_t n;

	if (fd < 0)
		return error("cannot create a temporary file: %s", strerror(errno)), -errno;
	while (!ret && ((n = read(0, buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR)))
		if (n > 0)
			ret = write_all(fd, buf, (size_t)n);
	if (n < 0 || ret < 0) {
		error("cannot copy stdin: %s", strerror(n < 0 ? errno : -ret));
		ret = -EIO;
	}
	close(fd);
	if (!ret)
		ret = perfdata_load_any(path, p, progress, arg);
	unlink(path);
	return ret;
}

int perfdata_load_any(const char *input, struct prof_profile *p,
		      prof_data_progress_fn *progress, void *arg)
{
	struct prof_read_info info;
	int fd;

	if (!strcmp(input, "-"))
		return load_stdin(p, progress, arg);
	if (perfdata_probe(input) == 1)
		return load_perf_data(input, p);
	fd = open(input, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		error("cannot open '%s': %s (record one with 'prof record -- CMD')", input,
		      strerror(e));
		return -e;
	}
	close(fd);
	int ret = prof_data_read_progress(input, p, &info, progress, arg);
	if (ret < 0)
		return ret;
	if (info.truncated || !info.complete)
		warning("%s is truncated (recording was interrupted); showing the %llu samples "
			"before the cut", input, (unsigned long long)p->samples);
	if (info.dropped)
		warning("%llu samples refer to stacks or threads missing from %s; ignored",
			(unsigned long long)info.dropped, input);
	return 0;
}

/* A report written over a recording (`prof report -o prof.data`, perf's
 * -i typed as -o) would destroy it: refused, whatever the format. */
int perfdata_refuse_over_recording(const char *out_path)
{
	char magic[8];
	ssize_t n;
	int fd;

	if (!out_path || !strcmp(out_path, "-") || !strncmp(out_path, "/dev/", 5))
		return 0;
	if ((fd = open(out_path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)) < 0)
		return 0;	/* absent, or out_open will say why */
	n = read(fd, magic, sizeof(magic));
	close(fd);
	if (n == (ssize_t)sizeof(magic) &&
	    (prof_data_has_magic(magic, sizeof(magic)) || perfdata_is_perf_data(magic, sizeof(magic))))
		return error("'%s' is a recording: refusing to overwrite it with a report (choose another -o)",
			     out_path), -EEXIST;
	return 0;
}
