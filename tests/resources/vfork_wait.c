/*
 * vfork_wait.c - waits in D state that is not I/O wait: ROUNDS times,
 * starts a child with clone(CLONE_VM | CLONE_VFORK) that sleeps MS
 * milliseconds and exits, so the parent waits for it in
 * wait_for_vfork_done (TASK_KILLABLE: D state as the load average counts
 * it, with no I/O and no in_iowait).  Prints "waited_ns N", the parent's
 * time in clone by CLOCK_MONOTONIC: the truth that prof's off-CPU time
 * outside I/O wait is checked against.
 * usage: vfork_wait [MS] [ROUNDS]
 */
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char child_stack[1 << 16];

static unsigned long long now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

static int child(void *arg)
{
	usleep((useconds_t)(*(int *)arg * 1000));
	return 0;
}

/* The wait: its user stack ends at clone (glibc marks the outermost frame
 * there), the kernel's goes through kernel_clone. */
static unsigned long long wait_vfork_child(int ms)
{
	unsigned long long t0 = now();
	pid_t pid = clone(child, child_stack + sizeof(child_stack), CLONE_VM | CLONE_VFORK | SIGCHLD, &ms);

	if (pid < 0) {
		perror("clone");
		exit(1);
	}
	t0 = now() - t0;
	waitpid(pid, NULL, 0);
	return t0;
}

int main(int argc, char **argv)
{
	int ms = argc > 1 ? atoi(argv[1]) : 50, rounds = argc > 2 ? atoi(argv[2]) : 10;
	unsigned long long waited = 0;

	if (ms <= 0 || rounds <= 0) {
		fprintf(stderr, "usage: vfork_wait [MS] [ROUNDS]\n");
		return 2;
	}
	for (int i = 0; i < rounds; i++)
		waited += wait_vfork_child(ms);
	printf("waited_ns %llu\n", waited);
	return 0;
}
