/*
 * forkexec - a parent that forks a child which later execs another program.
 * Truth: the parent (comm "forkexec") burns in parent_work for the whole
 * run and waits; the child (a new pid, same comm) burns in child_work for
 * SECONDS/2, then execs "split SECONDS/2" from the same directory, so the
 * new image (comm "split") shows spin_a/spin_b/spin_c under the child pid.
 * Usage: forkexec [SECONDS=2]
 */
#include "wl.h"
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

volatile unsigned long wl_sink;

WL_NOINLINE void parent_work(unsigned long n) { WL_BURN(n, 0xa2e); }
WL_NOINLINE void child_work(unsigned long n) { WL_BURN(n, 0xc41d); }

/* <dir of /proc/self/exe>/split, so the tests need no PATH set-up. */
static int sibling_path(char *buf, size_t size, const char *name)
{
	ssize_t n = readlink("/proc/self/exe", buf, size - 1);
	char *slash;

	if (n <= 0)
		return -1;
	buf[n] = '\0';
	slash = strrchr(buf, '/');
	if (!slash || (size_t)(slash - buf) + strlen(name) + 2 > size)
		return -1;
	strcpy(slash + 1, name);
	return 0;
}

static void run_child(double secs)
{
	char path[4096], arg[32];
	double end = wl_cpu_now() + secs / 2;

	while (wl_cpu_now() < end)
		child_work(100000UL);
	if (sibling_path(path, sizeof(path), "split") < 0)
		_exit(126);
	snprintf(arg, sizeof(arg), "%.3f", secs / 2);
	execl(path, path, arg, (char *)NULL);
	perror("forkexec: exec split");
	_exit(127);
}

int main(int argc, char **argv)
{
	double secs = wl_seconds_arg(argc, argv, 1, 2.0);
	double end = wl_cpu_now() + secs;
	int status = 0;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		perror("forkexec: fork");
		return 1;
	}
	if (pid == 0)
		run_child(secs);
	printf("forkexec: parent %d, child %d\n", (int)getpid(), (int)pid);
	while (wl_cpu_now() < end)
		parent_work(100000UL);
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0) {
		fprintf(stderr, "forkexec: child failed (status 0x%x)\n", status);
		return 1;
	}
	return 0;
}
