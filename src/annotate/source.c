/*
 * source.c - reading source files named inside a data file, only where
 * the user allows (the policy is described in include/prof/annotate.h).
 * Everything here assumes the recorded path is hostile: it may name
 * /etc/shadow, a FIFO, /dev/zero, a symlink out of the source root, or
 * climb with "..".
 */
#include "prof/annotate.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SOURCE_MAX_BYTES (8u << 20)

void prof_source_policy_free(struct prof_source_policy *sp)
{
	for (size_t i = 0; i < sp->build_paths.n; i++)
		free(sp->build_paths.v[i]);
	VEC_FREE(&sp->build_paths);
}

static bool allowed_build_path(const struct prof_source_policy *sp, const char *path)
{
	for (size_t i = 0; i < sp->build_paths.n; i++)
		if (!strcmp(sp->build_paths.v[i], path))
			return true;
	return false;
}

void prof_source_allow_disassembly(struct prof_source_policy *sp,
				   const struct prof_disassembly *d)
{
	for (size_t i = 0; i < d->lines.n; i++) {
		const char *file = d->lines.v[i].file;
		if (file && !allowed_build_path(sp, file))
			VEC_PUSH(&sp->build_paths, xstrdup(file));
	}
}

static bool has_dotdot(const char *path)
{
	for (const char *c = path; (c = strstr(c, "..")); c += 2)
		if ((c == path || c[-1] == '/') && (c[2] == '/' || c[2] == '\0'))
			return true;
	return false;
}

/* Reads a regular file without following a symlink in its last component. */
static char *read_regular(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > SOURCE_MAX_BYTES) {
		close(fd);
		errno = EPERM;
		return NULL;
	}
	char *buf = xmalloc((size_t)st.st_size + 1);
	size_t got = 0;
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	buf[got] = '\0';
	*len = got;
	return buf;
}

/* root/<trailing components of recorded>, the longest suffix that exists
 * and whose real path stays inside the root's real path. */
static char *find_under_root(const char *root, const char *recorded)
{
	char real_root[PATH_MAX], real[PATH_MAX];

	if (!realpath(root, real_root))
		return NULL;
	size_t rl = strlen(real_root);
	for (const char *suffix = recorded; suffix; suffix = strchr(suffix + 1, '/')) {
		const char *rel = suffix + strspn(suffix, "/");
		if (!*rel)
			break;
		char *cand = xasprintf("%s/%s", real_root, rel);
		bool inside = realpath(cand, real) && !strncmp(real, real_root, rl) &&
			      (real[rl] == '/' || (rl == 1 && real_root[0] == '/'));
		free(cand);
		if (inside)
			return xstrdup(real);
	}
	return NULL;
}

char *prof_source_read(const struct prof_source_policy *sp, const char *recorded, size_t *len)
{
	if (!recorded || !*recorded || has_dotdot(recorded)) {
		errno = EPERM;
		return NULL;
	}
	if (recorded[0] == '/' && allowed_build_path(sp, recorded))
		return read_regular(recorded, len);
	for (size_t i = 0; i < sp->nroots; i++) {
		char *path = find_under_root(sp->roots[i], recorded);
		if (path) {
			char *text = read_regular(path, len);
			free(path);
			if (text)
				return text;
		}
	}
	errno = EPERM;
	return NULL;
}
