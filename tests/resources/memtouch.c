/*
 * memtouch.c - allocates MB MiB, writes every page (so all of it is
 * resident), holds it HOLD_MS ms, frees it and exits.  Prints the bytes
 * touched: prof's peak RSS must be within 10% of that plus the baseline.
 * usage: memtouch [MB] [HOLD_MS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

__attribute__((noinline)) static char *touch_memory(size_t bytes)
{
	char *p = malloc(bytes);

	if (p)
		for (size_t i = 0; i < bytes; i += 4096)
			p[i] = (char)i;
	return p;
}

int main(int argc, char **argv)
{
	size_t mb = argc > 1 ? (size_t)atoi(argv[1]) : 200;
	int hold = argc > 2 ? atoi(argv[2]) : 300;
	struct timespec ts = { hold / 1000, (hold % 1000) * 1000000L };
	char *p = touch_memory(mb << 20);

	if (!p)
		return 1;
	nanosleep(&ts, NULL);
	printf("touched_bytes %zu\n", mb << 20);
	free(p);
	return 0;
}
