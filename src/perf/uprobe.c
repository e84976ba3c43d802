/*
 * uprobe.c - uprobes defined in tracefs (uprobe_events), for `prof record
 * --heap`: a probe at a file offset becomes a tracepoint whose id a
 * PERF_TYPE_TRACEPOINT event samples.
 *
 * Why not the uprobe PMU (perf_event_open with the path in attr.config1):
 * the kernel copies that path from user memory again whenever it creates
 * an inherited copy of the event, in the context of the task that forks.
 * There the pointer is prof's, not the task's: every fork and every
 * pthread_create of the profiled program failed with EFAULT (redis-server:
 * "Can't initialize Background Jobs"; strace: "fork: Bad address").  A
 * tracefs uprobe is named by an id, which copies fine.
 *
 * Definitions outlive prof if it is killed; prof_uprobe_define replaces a
 * definition of the same name, and names carry prof's pid.
 */
#include "prof/perf.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int append_line(const char *root, const char *line)
{
	char path[256];
	int fd, ret = 0;

	snprintf(path, sizeof(path), "%s/uprobe_events", root);
	if ((fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC)) < 0)
		return -errno;
	if (write(fd, line, strlen(line)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

int prof_uprobe_define(const char *group, const char *name, const char *file, uint64_t offset,
		       bool ret, uint64_t *id)
{
	const char *root = prof_tracefs_root(NULL);
	char *line, *idpath, *s;
	int err;

	if (!root)
		return -(errno ? errno : ENOENT);
	prof_uprobe_remove(group, name);	/* a stale one of a killed prof */
	line = xasprintf("%c:%s/%s %s:0x%llx\n", ret ? 'r' : 'p', group, name, file,
			 (unsigned long long)offset);
	err = append_line(root, line);
	free(line);
	if (err < 0)
		return err;
	idpath = xasprintf("%s/events/%s/%s/id", root, group, name);
	s = read_file(idpath, NULL);
	free(idpath);
	if (!s)
		return -ENOENT;
	*id = strtoull(s, NULL, 10);
	free(s);
	return *id ? 0 : -EINVAL;
}

int prof_uprobe_remove(const char *group, const char *name)
{
	const char *root = prof_tracefs_root(NULL);
	char *line;
	int err;

	if (!root)
		return -ENOENT;
	line = xasprintf("-:%s/%s\n", group, name);
	err = append_line(root, line);
	free(line);
	return err;
}
