/*
 * fsync_io.c - `fsync_io FILE COUNT`: COUNT times, append 1 MiB to FILE
 * and fdatasync it, so the process blocks on block I/O.  Known truth for
 * prof stat: io_wait_s > 0 when the kernel does delay accounting.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	static char buf[1 << 20];
	int count = argc > 2 ? atoi(argv[2]) : 20;
	int fd = open(argc > 1 ? argv[1] : "fsync_io.tmp", O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0) {
		perror("fsync_io: open");
		return 1;
	}
	for (int i = 0; i < count; i++) {
		for (size_t j = 0; j < sizeof(buf); j += 64)
			buf[j] = (char)(i + j);
		if (pwrite(fd, buf, sizeof(buf), (off_t)i * (off_t)sizeof(buf)) != (ssize_t)sizeof(buf) || fdatasync(fd) != 0) {
			perror("fsync_io: write");
			return 1;
		}
	}
	close(fd);
	return 0;
}
