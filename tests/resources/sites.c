/*
 * sites.c - one thread that blocks at three known sites in the cycle
 * A B A C, each site's nap a different length, and measures its own
 * truth: the time spent inside each site's blocking call (CLOCK_MONOTONIC
 * around it).  The three sites call the same blocking function at the
 * same stack depth with same-sized frames, so only the return addresses
 * on the stack tell them apart; a kilobyte frame below them keeps the
 * thread's root out of a small stack copy.  The off-CPU stacks' shares
 * of the three sites must match the measured ones.  For a check of
 * sampled stacks it also gives each site's sum of squared call times and
 * the longest call (what the sampling error depends on).
 * Given a directory (a disk with a set latency, tests/lib/slowdisk.sh),
 * each site writes a byte to its own file there and waits in fdatasync
 * instead of a nap: D-state waits, I/O wait and journal commits, whose
 * stacks are sampled like the others.
 * Prints "site_a_ns N", "site_b_ns N", "site_c_ns N", then
 * "site_X_sq_us2 F" (X = a b c) and "max_call_us F".
 * usage: sites [ROUNDS [DIR]]
 */
#include <fcntl.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static unsigned long long spent[3];
static int sync_fd[3] = { -1, -1, -1 };	/* the sites' files, with a DIR */
static double spent_sq[3], longest;	/* us^2, us */

static unsigned long long now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

__attribute__((noinline)) static void block(int site, long us)
{
	struct timespec nap = { 0, us * 1000 };
	unsigned long long t0 = now();

	if (sync_fd[site] < 0)
		nanosleep(&nap, NULL);
	else if (write(sync_fd[site], "x", 1) != 1 || fdatasync(sync_fd[site]) < 0) {
		perror("sites: write");
		exit(1);
	}
	unsigned long long d = now() - t0;
	spent[site] += d;
	spent_sq[site] += (d / 1e3) * (d / 1e3);
	if (d / 1e3 > longest)
		longest = d / 1e3;
}

/* The asm keeps each call a real call (no tail call): its return address
 * is what names the site. */
__attribute__((noinline)) static void site_a(void) { block(0, 100); __asm__ volatile(""); }
__attribute__((noinline)) static void site_b(void) { block(1, 300); __asm__ volatile(""); }
__attribute__((noinline)) static void site_c(void) { block(2, 200); __asm__ volatile(""); }

__attribute__((noinline)) static void cycle(int rounds)
{
	volatile char pad[1024];

	memset((char *)pad, 1, sizeof(pad));
	for (int i = 0; i < rounds; i++) {
		site_a();
		site_b();
		site_a();
		site_c();
	}
	__asm__ volatile("" : : "r"(pad) : "memory");
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 1000;

	for (int i = 0; argc > 2 && i < 3; i++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/site_%c.bin", argv[2], 'a' + i);
		if ((sync_fd[i] = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644)) < 0) {
			perror(path);
			return 1;
		}
	}
	cycle(rounds);
	printf("site_a_ns %llu\nsite_b_ns %llu\nsite_c_ns %llu\n", spent[0], spent[1], spent[2]);
	printf("site_a_sq_us2 %.0f\nsite_b_sq_us2 %.0f\nsite_c_sq_us2 %.0f\nmax_call_us %.1f\n", spent_sq[0],
	       spent_sq[1], spent_sq[2], longest);
	return 0;
}
