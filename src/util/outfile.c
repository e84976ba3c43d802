/*
 * outfile.c - the files prof writes for a user (report -o, stat -o,
 * --save-baseline, annotations, and prof.data itself through the data
 * writer) never cost the user the file that was there before.
 *
 * A new file is written under a temporary name beside its path (same
 * directory, so the final rename is atomic) and takes the path's place
 * only when it is complete: a failed or interrupted report, a usage
 * error found late, or a full disk leave the old file whole.  A symlink
 * planted at the path is refused, never followed or replaced.  Paths
 * under /dev/ and existing non-regular files (a FIFO, /dev/null) are
 * written in place: renaming /dev/null away as root would break the
 * machine.
 */
#include "prof/util.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* "dir/.name.XXXXXX" for "dir/name": hidden, so a shell glob of the
 * directory does not pick up a half-written file. */
static char *temp_template(const char *path)
{
	const char *slash = strrchr(path, '/');
	int dirlen = slash ? (int)(slash - path + 1) : 0;

	return xasprintf("%.*s.%s.XXXXXX", dirlen, path, path + dirlen);
}

int temp_beside(const char *path, char **tmp)
{
	mode_t mask = umask(0);
	int fd;

	umask(mask);
	*tmp = temp_template(path);
	fd = mkostemp(*tmp, O_CLOEXEC);	/* O_EXCL, mode 0600 */
	if (fd < 0) {
		int e = errno;
		free(*tmp);
		*tmp = NULL;
		return -e;
	}
	/* What open(path, O_CREAT, 0666) would have given. */
	if (fchmod(fd, 0666 & ~mask) < 0) {
		int e = errno;
		close(fd);
		unlink(*tmp);
		free(*tmp);
		*tmp = NULL;
		return -e;
	}
	return fd;
}

int out_place(const char *path)
{
	struct stat st;

	if (!strncmp(path, "/dev/", 5))
		return OUT_IN_PLACE;
	if (lstat(path, &st) < 0)
		return errno == ENOENT ? OUT_BESIDE : -errno;
	if (S_ISLNK(st.st_mode))
		return -ELOOP;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	return S_ISREG(st.st_mode) ? OUT_BESIDE : OUT_IN_PLACE;
}

static int open_in_place(const char *path)
{
	/* Device nodes are root's: following /dev/stdout -> /proc/self/fd/1
	 * is what the user asked for, not an attack. */
	int flags = O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC;

	if (strncmp(path, "/dev/", 5))
		flags |= O_NOFOLLOW;
	int fd = open(path, flags, 0666);

	return fd < 0 ? -errno : fd;
}

int out_open(struct out_file *o, const char *path)
{
	int fd, place;

	memset(o, 0, sizeof(*o));
	if (!path || !strcmp(path, "-")) {
		o->f = stdout;
		return 0;
	}
	o->path = xstrdup(path);
	place = out_place(path);
	if (place == OUT_BESIDE)
		fd = temp_beside(path, &o->tmp);
	else if (place == OUT_IN_PLACE)
		fd = open_in_place(path);
	else
		fd = place;
	if (fd >= 0 && !(o->f = fdopen(fd, "w")))
		fd = -errno;
	if (fd < 0) {
		error("cannot create '%s': %s", path, strerror(-fd));
		out_discard(o);
		return fd;
	}
	return 0;
}

int out_commit(struct out_file *o)
{
	bool is_stdout = o->f == stdout;
	int bad = is_stdout ? fflush(o->f) : fclose(o->f);
	int ret = 0;

	o->f = NULL;
	if (bad)
		ret = -errno;
	else if (o->tmp && rename(o->tmp, o->path) < 0)
		ret = -errno;
	else {
		free(o->tmp);	/* it names the new file now */
		o->tmp = NULL;
	}
	if (ret < 0) {
		error("cannot write '%s': %s", is_stdout ? "stdout" : o->path, strerror(-ret));
		ret = -EIO;
	}
	out_discard(o);
	return ret;
}

void out_discard(struct out_file *o)
{
	if (o->f && o->f != stdout)
		fclose(o->f);
	if (o->tmp)
		unlink(o->tmp);
	free(o->tmp);
	free(o->path);
	memset(o, 0, sizeof(*o));
}
