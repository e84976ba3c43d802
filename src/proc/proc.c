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

/* The numeric entries of a /proc directory, sorted. */
static int numeric_entries(const char *path, pid_t **ids, size_t *n)
{
	DIR *d;
	struct dirent *e;
	VEC(pid_t) v = { 0 };

	if (!(d = opendir(path)))
		return -errno;
	while ((e = readdir(d))) {
		int id = atoi(e->d_name);
		if (id > 0)
			VEC_PUSH(&v, (pid_t)id);
	}
	closedir(d);
	if (v.n)
		qsort(v.v, v.n, sizeof(*v.v), cmp_pid);
	*ids = v.v;
	*n = v.n;
	return v.n ? 0 : -ENOENT;
}

int prof_proc_tids(pid_t pid, pid_t **tids, size_t *n)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	return numeric_entries(path, tids, n);
}

int prof_proc_pids(pid_t **pids, size_t *n)
{
	return numeric_entries("/proc", pids, n);
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
