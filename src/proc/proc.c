/*
 * proc.c - /proc readers for the recorder (see include/prof/proc.h).
 * Everything here tolerates the race of a task exiting while it is read:
 * that shows up as -ENOENT/-ESRCH, never as a crash.
 */
#include "prof/proc.h"
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

bool prof_proc_exists(pid_t pid)
{
	char path[64];

	if (pid <= 0)
		return false;
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	return access(path, F_OK) == 0;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
	return (x > y) - (x < y);
}

int prof_proc_tids(pid_t pid, pid_t **tids, size_t *n)
{
	char path[64];
	DIR *d;
	struct dirent *e;
	VEC(pid_t) v = { 0 };

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if (!(d = opendir(path)))
		return -errno;
	while ((e = readdir(d))) {
		int tid = atoi(e->d_name);
		if (tid > 0)
			VEC_PUSH(&v, (pid_t)tid);
	}
	closedir(d);
	if (v.n)
		qsort(v.v, v.n, sizeof(*v.v), cmp_pid);
	*tids = v.v;
	*n = v.n;
	return v.n ? 0 : -ENOENT;
}

int prof_proc_comm(pid_t pid, pid_t tid, char *buf, size_t len)
{
	char path[80];
	char *s;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
	if (!(s = read_file(path, &n)))
		return -errno;
	while (n && (s[n - 1] == '\n'))
		n--;
	s[n] = 0;
	snprintf(buf, len, "%s", s);
	free(s);
	return 0;
}

pid_t prof_proc_tgid(pid_t tid)
{
	char path[64], *text, *line;
	pid_t tgid = -1;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	if (tid <= 0 || !(text = read_file(path, NULL)))
		return -1;
	if ((line = strstr(text, "\nTgid:")))
		tgid = (pid_t)atoi(line + 6);
	free(text);
	return tgid > 0 ? tgid : -1;
}
