/*
 * outfile.c - creating report/output files safely: the data goes to a
 * fresh temporary file beside the target (mkostemp, so never through a
 * planted symlink) and is renamed into place only when complete.  rename()
 * replaces a symlink at the target path rather than writing through it, so
 * a link pointing at someone's file cannot make prof overwrite that file,
 * and a reader never sees a half-written report.
 */
#include "prof/util.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

FILE *outfile_open(const char *path, char **tmp_path)
{
	char *tmp = xasprintf("%s.tmp.XXXXXX", path);
	int fd = mkostemp(tmp, O_CLOEXEC);

	if (fd < 0) {
		int e = errno;
		free(tmp);
		errno = e;
		return NULL;
	}
	/* mkostemp makes 0600; reports are ordinary files. */
	mode_t mask = umask(0);
	umask(mask);
	fchmod(fd, 0666 & ~mask);
	FILE *f = fdopen(fd, "w");
	if (!f) {
		int e = errno;
		close(fd);
		unlink(tmp);
		free(tmp);
		errno = e;
		return NULL;
	}
	*tmp_path = tmp;
	return f;
}

int outfile_close(FILE *f, char *tmp_path, const char *path, bool keep)
{
	int ret = 0;

	if (fflush(f) != 0 || ferror(f))
		ret = -(errno ? errno : EIO);
	if (fclose(f) != 0 && !ret)
		ret = -(errno ? errno : EIO);
	if (!ret && keep && rename(tmp_path, path) != 0)
		ret = -errno;
	if (ret || !keep)
		unlink(tmp_path);
	free(tmp_path);
	return ret;
}
