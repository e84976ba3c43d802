/*
 * exec_after.c - waits MS milliseconds in one nanosleep inside
 * wait_before_exec(), then execs the rest of its arguments: the wait's
 * off-CPU stack belongs to this image, and the new program's waits to
 * the new one, however close together the recorder gets them.
 * usage: exec_after MS COMMAND [ARG...]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

__attribute__((noinline)) static void wait_before_exec(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
	__asm__ volatile("" ::: "memory");	/* not a tail call: keeps this frame */
}

int main(int argc, char **argv)
{
	if (argc < 3 || atoi(argv[1]) < 1) {
		fprintf(stderr, "usage: exec_after MS COMMAND [ARG...]\n");
		return 2;
	}
	wait_before_exec(atoi(argv[1]));
	execvp(argv[2], argv + 2);
	perror(argv[2]);
	return 127;
}
