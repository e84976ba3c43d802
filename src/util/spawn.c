/*
 * spawn.c - the launcher every command that runs a program uses (record,
 * stat, callgrind run): a child held before exec, and exec failure
 * reported as an errno.
 *
 * The child blocks reading a "go" pipe, so the parent can attach perf
 * events (enable_on_exec) or counters to its pid before a single
 * instruction of the program runs.  After go, exec failure travels back
 * over a CLOEXEC pipe as an errno: EOF means the exec succeeded.  If the
 * parent gives up (spawn_abort), the child reads EOF on go and exits 127
 * without running anything.
 */
#include "prof/util.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static _Noreturn void held_child(const struct spawn *s, char **argv, int go_rd, int err_wr,
				 int stdout_fd, int stderr_fd)
{
	char b;
	int e;

	if (stdout_fd >= 0)
		dup2(stdout_fd, 1);
	if (stderr_fd >= 0)
		dup2(stderr_fd, 2);
	(void)s;
	if (read(go_rd, &b, 1) != 1)
		_exit(127);	/* the parent gave up before exec */
	execvp(argv[0], argv);
	e = errno;
	if (write(err_wr, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(e == ENOENT ? 127 : 126);
}

int spawn_held(struct spawn *s, char **argv, int stdout_fd, int stderr_fd)
{
	int go[2], er[2], e;

	if (pipe2(go, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(er, O_CLOEXEC) < 0) {
		e = -errno;
		close(go[0]);
		close(go[1]);
		return e;
	}
	fflush(NULL);	/* no buffered output written twice */
	s->pid = fork();
	if (s->pid < 0) {
		e = -errno;
		close(go[0]); close(go[1]); close(er[0]); close(er[1]);
		return e;
	}
	if (s->pid == 0) {
		/* our copy of the write end would keep the go pipe from ever reaching EOF */
		close(go[1]);
		close(er[0]);
		held_child(s, argv, go[0], er[1], stdout_fd, stderr_fd);
	}
	close(go[0]);
	close(er[1]);
	s->go_fd = go[1];
	s->err_fd = er[0];
	return 0;
}

int spawn_release(struct spawn *s)
{
	int e = 0;
	ssize_t n;

	if (write(s->go_fd, "g", 1) != 1)
		e = errno;
	close(s->go_fd);
	do
		n = read(s->err_fd, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(s->err_fd);
	s->go_fd = s->err_fd = -1;
	return n == (ssize_t)sizeof(e) && e ? -e : 0;
}

void spawn_abort(struct spawn *s)
{
	close(s->go_fd);	/* the child reads EOF and exits 127 */
	close(s->err_fd);
	s->go_fd = s->err_fd = -1;
	while (waitpid(s->pid, NULL, 0) < 0 && errno == EINTR)
		;
}

int spawn_exit_status(int wait_status)
{
	if (WIFEXITED(wait_status))
		return WEXITSTATUS(wait_status);
	if (WIFSIGNALED(wait_status))
		return 128 + WTERMSIG(wait_status);
	return 1;
}

void spawn_keep_mappings(const char *name)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];

	while (f && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		char *path = strchr(line, '/') ? strchr(line, '/') : strstr(line, "anon_inode:");
		if (!path || sscanf(line, "%lx-%lx", &lo, &hi) != 2)
			continue;
		path[strcspn(path, "\n")] = 0;
		if (!strcmp(path, name))
			(void)madvise((void *)lo, hi - lo, MADV_DONTFORK);
	}
	if (f)
		fclose(f);
}
