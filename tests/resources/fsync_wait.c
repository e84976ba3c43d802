/*
 * fsync_wait.c - blocks in fdatasync for a measurable time: writes
 * CHUNK_MB MiB to FILE and fdatasyncs it, ROUNDS times, timing only the
 * fdatasync calls with CLOCK_MONOTONIC.  Prints "blocked_ns N": the truth
 * that prof's I/O-wait figure is checked against.
 * usage: fsync_wait FILE [CHUNK_MB] [ROUNDS]
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static unsigned long long now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

/* The blocking function the io-wait stacks must name. */
__attribute__((noinline)) static unsigned long long block_in_fdatasync(int fd)
{
	unsigned long long t0 = now();

	if (fdatasync(fd) < 0)
		perror("fdatasync");
	return now() - t0;
}

int main(int argc, char **argv)
{
	int mb = argc > 2 ? atoi(argv[2]) : 16, rounds = argc > 3 ? atoi(argv[3]) : 4;
	static char buf[1 << 20];
	unsigned long long blocked = 0;
	int fd;

	if (argc < 2 || mb <= 0 || rounds <= 0) {
		fprintf(stderr, "usage: fsync_wait FILE [CHUNK_MB] [ROUNDS]\n");
		return 2;
	}
	if ((fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644)) < 0) {
		perror(argv[1]);
		return 1;
	}
	for (int r = 0; r < rounds; r++) {
		memset(buf, 'a' + r, sizeof(buf));
		for (int i = 0; i < mb; i++)
			if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf)) {
				perror("write");
				return 1;
			}
		blocked += block_in_fdatasync(fd);
	}
	close(fd);
	printf("blocked_ns %llu\n", blocked);
	return 0;
}
