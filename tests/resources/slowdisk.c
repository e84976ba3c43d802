/*
 * slowdisk.c - a disk with a latency the test chooses, whatever the
 * machine's own disk is.  A FUSE file system with one file, "disk",
 * held in anonymous memory; every write request is held WRITE_US
 * microseconds and every fsync FSYNC_US before it is answered.  The
 * tests (tests/lib/slowdisk.sh) attach a loop device to that file and
 * put ext4 on it, so a workload's fdatasync waits in the block layer
 * (io_schedule, jbd2) exactly as on a real disk, for at least the time
 * the configuration sets: the truth of the I/O-wait tests comes from
 * here, not from the speed of the host's disk.
 *
 * One thread answers every request in turn (fuse's -s), so the delays
 * add up and never overlap: a flush waits FSYNC_US after the writes
 * before it.
 *
 * usage: slowdisk MOUNTPOINT SIZE_MB WRITE_US FSYNC_US   (runs in the
 * foreground; unmount MOUNTPOINT or kill it to stop)
 */
#define FUSE_USE_VERSION 31
#include <errno.h>
#include <fuse.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>

static const char disk_path[] = "/disk";
static char *disk;		/* MAP_NORESERVE: pages never written read as zeros */
static size_t disk_size;
static long write_us, fsync_us;

static void hold(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	while (us > 0 && nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static int sd_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	memset(st, 0, sizeof(*st));
	if (strcmp(path, "/") == 0) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
		return 0;
	}
	if (strcmp(path, disk_path) != 0)
		return -ENOENT;
	st->st_mode = S_IFREG | 0600;
	st->st_nlink = 1;
	st->st_size = (off_t)disk_size;
	return 0;
}

static int sd_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
		      struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	if (strcmp(path, "/") != 0)
		return -ENOENT;
	fill(buf, ".", NULL, 0, 0);
	fill(buf, "..", NULL, 0, 0);
	fill(buf, disk_path + 1, NULL, 0, 0);
	return 0;
}

static int sd_open(const char *path, struct fuse_file_info *fi)
{
	return strcmp(path, disk_path) == 0 ? 0 : -ENOENT;
}

/* Clamps [off, off+len) to the disk; returns the length inside it. */
static size_t inside(off_t off, size_t len)
{
	if (off < 0 || (size_t)off >= disk_size)
		return 0;
	return len < disk_size - (size_t)off ? len : disk_size - (size_t)off;
}

static int sd_read(const char *path, char *buf, size_t len, off_t off, struct fuse_file_info *fi)
{
	size_t n = inside(off, len);

	memcpy(buf, disk + off, n);
	return (int)n;
}

static int sd_write(const char *path, const char *buf, size_t len, off_t off,
		    struct fuse_file_info *fi)
{
	size_t n = inside(off, len);

	if (n == 0 && len > 0)
		return -ENOSPC;
	hold(write_us);
	memcpy(disk + off, buf, n);
	return (int)n;
}

static int sd_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	hold(fsync_us);
	return 0;
}

static const struct fuse_operations ops = {
	.getattr = sd_getattr,
	.readdir = sd_readdir,
	.open = sd_open,
	.read = sd_read,
	.write = sd_write,
	.fsync = sd_fsync,
};

int main(int argc, char **argv)
{
	if (argc != 5 || atol(argv[2]) <= 0 || atol(argv[3]) < 0 || atol(argv[4]) < 0) {
		fprintf(stderr, "usage: slowdisk MOUNTPOINT SIZE_MB WRITE_US FSYNC_US\n");
		return 2;
	}
	disk_size = (size_t)atol(argv[2]) << 20;
	write_us = atol(argv[3]);
	fsync_us = atol(argv[4]);
	disk = mmap(NULL, disk_size, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (disk == MAP_FAILED) {
		perror("slowdisk: mmap");
		return 1;
	}
	char *fargv[] = { argv[0], "-f", "-s", "-o", "fsname=slowdisk", argv[1], NULL };
	return fuse_main(6, fargv, &ops, NULL);
}
