/*
 * churn_dl.c - the library tests/fault/churn.c dlopens and dlcloses: its
 * dl_burn must be attributed to this library in every recording.  Built
 * twice by t8050 with different -DDL_NAME so the two copies differ in
 * build-id and in symbol names (old_lib_marker vs new_lib_marker).
 */
#include <time.h>

#ifndef DL_NAME
#define DL_NAME old_lib_marker
#endif

volatile unsigned long dl_sink;

/* The hot loop: its name tells which copy of the library was sampled. */
__attribute__((noinline)) void DL_NAME(void)
{
	for (int i = 0; i < 50000; i++)
		dl_sink += (unsigned long)i;
}

__attribute__((noinline)) void dl_burn(int ms)
{
	struct timespec ts;
	double end;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	end = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9 + ms / 1000.0;
	do {
		DL_NAME();
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	} while ((double)ts.tv_sec + (double)ts.tv_nsec / 1e9 < end);
}
