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

char prof_proc_state(pid_t tid)
{
	char path[64], *text, *p, c = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)tid);
	if ((text = read_file(path, NULL)) && (p = strrchr(text, ')')) && p[1] == ' ')
		c = p[2];
	free(text);
	return c;
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

typedef VEC(pid_t) pid_vec;

/* Appends the pids listed in a children file ("12 34 ") to v. */
static void add_children_list(const char *text, pid_vec *v)
{
	for (const char *p = text; p && *p;) {
		char *end;
		long child = strtol(p, &end, 10);
		if (end == p)
			break;
		if (child > 0)
			VEC_PUSH(v, (pid_t)child);
		p = end;
	}
}

pid_t prof_proc_ppid(pid_t pid)
{
	char path[64], *s, *p;
	int ppid = -1;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!(s = read_file(path, NULL)))
		return -1;
	if ((p = strrchr(s, ')')) && sscanf(p + 1, " %*c %d", &ppid) != 1)
		ppid = -1;
	free(s);
	return (pid_t)ppid;
}

/* Children by their parent field: every /proc/N whose ppid is pid. */
static int children_by_walk(pid_t pid, pid_vec *v)
{
	DIR *d = opendir("/proc");
	struct dirent *e;

	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		int n = atoi(e->d_name);
		if (n > 0 && n != pid && prof_proc_ppid(n) == pid)
			VEC_PUSH(v, (pid_t)n);
	}
	closedir(d);
	return 0;
}

/* Appends the children of pid's thread tid to v; first: the first thread
 * read, whose missing file says the kernel has none (a walk instead). */
static int task_children(struct prof_proc_files *pf, pid_t pid, pid_t tid, bool first, pid_vec *v)
{
	char *text;
	int ret = 0;

	if ((text = prof_proc_files_read(pf, pid, tid, "children", NULL)))
		add_children_list(text, v);
	else if (errno == ENOENT && first && prof_proc_exists(pid))
		ret = children_by_walk(pid, v);	/* no CONFIG_PROC_CHILDREN */
	free(text);
	return ret;
}

int prof_proc_children(struct prof_proc_files *pf, pid_t pid, pid_t **kids, size_t *n)
{
	pid_vec v = { 0 };
	pid_t *tids;
	size_t nt;
	int ret = prof_proc_tids(pid, &tids, &nt);

	if (ret < 0)
		return ret;
	for (size_t i = 0; i < nt && !ret; i++)
		ret = task_children(pf, pid, tids[i], i == 0, &v);
	free(tids);
	*kids = v.v;
	*n = v.n;
	return ret < 0 ? ret : 0;
}

int prof_proc_leader_children(struct prof_proc_files *pf, pid_t pid, pid_t **kids, size_t *n)
{
	pid_vec v = { 0 };
	int ret = task_children(pf, pid, pid, true, &v);

	*kids = v.v;
	*n = v.n;
	return ret;
}

int prof_proc_descendants(pid_t pid, pid_t **pids, size_t *n)
{
	pid_vec v = { 0 };
	pid_t *kids;
	size_t nk;
	int ret = prof_proc_children(NULL, pid, &kids, &nk);

	if (ret < 0)
		return ret;
	/* Breadth first: v grows while it is walked. */
	for (size_t i = 0;; i++) {
		for (size_t k = 0; k < nk; k++)
			VEC_PUSH(&v, kids[k]);
		free(kids);
		kids = NULL;
		nk = 0;
		if (i >= v.n)
			break;
		prof_proc_children(NULL, v.v[i], &kids, &nk);	/* gone meanwhile: no children */
	}
	*pids = v.v;
	*n = v.n;
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

uint64_t prof_proc_cpu_ns(pid_t tid)
{
	char path[64], *text;
	uint64_t ns = 0;

	snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)tid);
	if (tid <= 0 || !(text = read_file(path, NULL)))
		return 0;
	ns = strtoull(text, NULL, 10);
	free(text);
	return ns;
}
