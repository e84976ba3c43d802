/*
 * tracefs.c - finds the tracing filesystem that holds the tracepoint
 * descriptions (events/<group>/<name>/{id,format}), and mounts it when it
 * is missing and we are allowed to, as perf does (tools/lib/api/fs).
 *
 * A fresh machine often has neither /sys/kernel/tracing nor the debugfs
 * copy mounted; without this, off-CPU recording would be silently
 * unavailable even as root.  The mount happens at most once per process,
 * at the standard place, in prof's own mount namespace; it is not undone
 * on exit (perf leaves it mounted too, and undoing it could race another
 * tool that started using it).  Facts: kernel-notes/tracefs.md.
 */
#include "prof/perf.h"
#include <errno.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#define TRACEFS_MOUNT_POINT "/sys/kernel/tracing"

static const char *const tracefs_roots[] = {
	TRACEFS_MOUNT_POINT,
	"/sys/kernel/debug/tracing",
};

/* Does root hold tracepoint descriptions?  errno tells why not. */
static bool has_events(const char *root)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "%s/events", root);
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static const char *find_root(bool *denied)
{
	for (size_t i = 0; i < ARRAY_SIZE(tracefs_roots); i++) {
		if (has_events(tracefs_roots[i]))
			return tracefs_roots[i];
		*denied |= errno == EACCES || errno == EPERM;
	}
	return NULL;
}

const char *prof_tracefs_root(bool *mounted_now)
{
	static bool tried;
	bool denied = false;
	const char *root = find_root(&denied);

	if (mounted_now)
		*mounted_now = false;
	if (root || denied || tried)
		return root;
	tried = true;
	/* mount(2) itself checks CAP_SYS_ADMIN; EPERM is the common answer. */
	if (mount("nodev", TRACEFS_MOUNT_POINT, "tracefs", 0, NULL) < 0)
		return NULL;
	if (mounted_now)
		*mounted_now = true;
	return has_events(TRACEFS_MOUNT_POINT) ? TRACEFS_MOUNT_POINT : NULL;
}
