/*
 * proc.c - unit tests for the /proc readers of src/proc: the children and
 * descendants of a real process tree (this test, a child, and that child's
 * own child), parents before children, and a pid that does not exist; and
 * the /proc files kept open between readings (struct prof_proc_files): the
 * same text as a fresh read, kept open, a children list longer than the
 * kernel's page, and a task reaped under an open file.
 */
#include "tap.h"
#include "prof/proc.h"
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

/* A child that forks a grandchild; both wait until killed.  The pipe
 * says when the grandchild exists (its pid is written). */
static pid_t start_family(pid_t *grandchild)
{
	int fds[2];
	pid_t child;

	if (pipe(fds) < 0)
		return -1;
	child = fork();
	if (child == 0) {
		pid_t g = fork();
		if (g == 0) {
			for (;;)
				pause();
		}
		if (write(fds[1], &g, sizeof(g)) < 0)
			_exit(1);
		for (;;)
			pause();
	}
	close(fds[1]);
	if (child < 0 || read(fds[0], grandchild, sizeof(*grandchild)) != sizeof(*grandchild))
		*grandchild = -1;
	close(fds[0]);
	return child;
}

static bool contains(const pid_t *v, size_t n, pid_t x)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == x)
			return true;
	return false;
}

static void test_family(void)
{
	pid_t g, c = start_family(&g), *v = NULL;
	size_t n = 0;
	int r;

	ok(c > 0 && g > 0, "a child and a grandchild run");
	r = prof_proc_children(NULL, getpid(), &v, &n);
	ok(r == 0 && contains(v, n, c) && !contains(v, n, g),
	   "children: the child, not the grandchild (%zu listed)", n);
	free(v);
	r = prof_proc_descendants(getpid(), &v, &n);
	ok(r == 0 && n == 2 && v[0] == c && v[1] == g, "descendants: child then grandchild (%zu listed)", n);
	free(v);
	r = prof_proc_descendants(g, &v, &n);
	ok(r == 0 && n == 0, "a leaf has no descendants");
	free(v);
	kill(g, SIGKILL);
	kill(c, SIGKILL);
	waitpid(c, NULL, 0);
}

static void test_missing(void)
{
	pid_t *v = NULL;
	size_t n = 0;

	ok(prof_proc_children(NULL, 0x7ffffff0, &v, &n) == -ENOENT, "children of a missing pid: -ENOENT");
	ok(prof_proc_descendants(0x7ffffff0, &v, &n) == -ENOENT, "descendants of a missing pid: -ENOENT");
}

/* A fresh read of /proc/PID/[task/TID/]NAME, as prof_proc_files_read's
 * fallback would. */
static char *fresh(pid_t pid, pid_t tid, const char *name)
{
	char path[96];

	if (tid)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/%s", (int)pid, (int)tid, name);
	else
		snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	return read_file(path, NULL);
}

/* A sleeping child's files: the same texts read through open files as
 * afresh (a sleeping task's stat and status do not change), four files
 * kept open, and after the child is reaped no text and no file. */
static void test_kept_open(void)
{
	struct prof_proc_files *pf = prof_proc_files_new();
	const char *names[] = { "stat", "status", "io", "children" };
	pid_t c = fork();
	bool same = true;

	if (c == 0) {
		for (;;)
			pause();
	}
	usleep(50000);	/* asleep in pause() */
	for (int round = 0; round < 3; round++)
		for (size_t i = 0; i < 4; i++) {
			char *a = prof_proc_files_read(pf, c, i == 3 ? c : 0, names[i], NULL);
			char *b = fresh(c, i == 3 ? c : 0, names[i]);
			same = same && a && b && !strcmp(a, b);
			free(a);
			free(b);
		}
	ok(same, "stat, status, io, children: the texts of a fresh read, three times");
	ok(prof_proc_files_open(pf) == 4, "four files kept open (%zu)", prof_proc_files_open(pf));
	kill(c, SIGKILL);
	waitpid(c, NULL, 0);
	char *gone = prof_proc_files_read(pf, c, 0, "stat", NULL);
	size_t left = prof_proc_files_open(pf);
	ok(!gone && left == 3, "a reaped task: no text, its file closed (%zu open)", left);
	free(gone);
	prof_proc_files_free(pf);
}

/* 1,500 children: a list longer than a page, read whole through an open
 * file, twice (the second read from the kept file). */
static void test_long_children(void)
{
	struct prof_proc_files *pf = prof_proc_files_new();
	enum { N = 1500 };
	static pid_t kids[N];
	size_t got[2] = { 0, 0 }, len = 0;
	bool all = true;

	for (int i = 0; i < N; i++)
		if ((kids[i] = fork()) == 0) {
			for (;;)
				pause();
		}
	for (int round = 0; round < 2; round++) {
		char *text = prof_proc_files_read(pf, getpid(), getpid(), "children", &len);
		for (const char *p = text; p && *p;) {
			char *end;
			(void)strtol(p, &end, 10);
			if (end == p)
				break;
			got[round]++;
			p = end;
		}
		all = all && text && len > 4096;
		free(text);
	}
	ok(all && got[0] == N && got[1] == N, "a children list longer than a page: %zu and %zu of %d", got[0], got[1], N);
	for (int i = 0; i < N; i++)
		kill(kids[i], SIGKILL);
	for (int i = 0; i < N; i++)
		waitpid(kids[i], NULL, 0);
	prof_proc_files_free(pf);
}

/* With the open-files limit at 16, at most a quarter is kept open; the
 * rest is still read. */
static void test_bounded(void)
{
	struct prof_proc_files *pf = prof_proc_files_new();
	struct rlimit old, low = { 16, 16 };
	const char *names[] = { "stat", "status", "io", "children" };
	bool read_all = true;

	getrlimit(RLIMIT_NOFILE, &old);
	low.rlim_max = old.rlim_max;
	setrlimit(RLIMIT_NOFILE, &low);
	for (size_t i = 0; i < 4; i++) {
		char *a = i < 3 ? prof_proc_files_read(pf, getpid(), 0, names[i], NULL) : xstrdup("");
		char *b = prof_proc_files_read(pf, getpid(), getpid(), names[i], NULL);
		if (!a || !b)
			fprintf(stderr, "# %s: %s\n", names[i], strerror(errno));
		read_all = read_all && a && b;
		free(a);
		free(b);
	}
	ok(read_all && prof_proc_files_open(pf) == 4, "open-files limit 16: seven files read, four kept open (%zu)",
	   prof_proc_files_open(pf));
	prof_proc_files_free(pf);
	setrlimit(RLIMIT_NOFILE, &old);
}

int main(void)
{
	test_family();
	test_missing();
	test_kept_open();
	test_long_children();
	test_bounded();
	return done_testing();
}
