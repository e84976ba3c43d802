/*
 * sleeper.c - sleeps (S state, never I/O) for MS milliseconds in 10 ms
 * naps inside sleep_a_while(); the off-CPU sleep metric must see it, the
 * I/O-wait metric must not.  usage: sleeper [MS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

__attribute__((noinline)) static void sleep_a_while(int ms)
{
	struct timespec nap = { 0, 10 * 1000000L };

	for (int i = 0; i < ms / 10; i++)
		nanosleep(&nap, NULL);
}

int main(int argc, char **argv)
{
	int ms = argc > 1 ? atoi(argv[1]) : 500;

	sleep_a_while(ms);
	printf("slept_ms %d\n", ms);
	return 0;
}
