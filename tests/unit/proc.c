/*
 * proc.c - unit tests for the /proc readers of src/proc: the children and
 * descendants of a real process tree (this test, a child, and that child's
 * own child), parents before children, and a pid that does not exist.
 */
#include "tap.h"
#include "prof/proc.h"
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
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
	r = prof_proc_children(getpid(), &v, &n);
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

	ok(prof_proc_children(0x7ffffff0, &v, &n) == -ENOENT, "children of a missing pid: -ENOENT");
	ok(prof_proc_descendants(0x7ffffff0, &v, &n) == -ENOENT, "descendants of a missing pid: -ENOENT");
}

int main(void)
{
	test_family();
	test_missing();
	return done_testing();
}
