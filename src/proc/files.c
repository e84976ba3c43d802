/*
 * files.c - /proc files kept open between readings (see
 * include/prof/proc.h, struct prof_proc_files).  The resource sampler
 * reads the same few files of every recorded task ten times a second:
 * opening one walks its path (the pid's dentries, revalidated each time)
 * and costs more than reading it.  An open /proc/PID/... file is read
 * again from offset 0 with one pread, which makes the kernel render the
 * text anew: 6.3 us against 2.2 for a thread's stat, 7.9 against 3.4 for
 * its status (kernel-notes/offcpu.md, "Per-thread totals at exit").  A
 * file stays bound to its task: once the task is reaped a read fails
 * with ESRCH, even if its id is reused, so a reused pid is never read
 * through an old file.
 *
 * The files kept open are at most a quarter of the open-files limit as it
 * is when one is added (the recorder raises it for its perf events), and
 * at most 4096; beyond that a file is opened and closed per reading.  A
 * file not read for a while is closed, so that the tasks that exited do
 * not hold descriptors.
 */
#include "prof/proc.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* Files unread this long are closed (a process is read at least every
 * P x 2 ms for P processes, its threads every N x 2 ms for N threads). */
#define IDLE_NS 30000000000ULL
#define MAX_OPEN 4096

struct open_file {
	uint64_t key;
	int fd;
	uint64_t used_ns;
};

struct prof_proc_files {
	VEC(struct open_file) open;
	struct u64map index;	/* key -> index in open + 1 */
	uint64_t last_sweep_ns;
};

/* The files kept open; any other name is opened per reading. */
static const char *const NAMES[] = { "stat", "status", "io", "children" };

static int name_index(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(NAMES); i++)
		if (!strcmp(NAMES[i], name))
			return (int)i;
	return -1;
}

struct prof_proc_files *prof_proc_files_new(void)
{
	return xcalloc(1, sizeof(struct prof_proc_files));
}

static bool room_for_one(const struct prof_proc_files *pf)
{
	struct rlimit rl;

	return pf->open.n < MAX_OPEN && getrlimit(RLIMIT_NOFILE, &rl) == 0 && pf->open.n < rl.rlim_cur / 4;
}

static void forget(struct prof_proc_files *pf, size_t i)
{
	struct open_file *last = &pf->open.v[pf->open.n - 1];

	close(pf->open.v[i].fd);
	u64map_del(&pf->index, pf->open.v[i].key);
	if (last != &pf->open.v[i]) {
		pf->open.v[i] = *last;
		u64map_put(&pf->index, last->key, i + 1);
	}
	pf->open.n--;
}

void prof_proc_files_free(struct prof_proc_files *pf)
{
	if (!pf)
		return;
	while (pf->open.n)
		forget(pf, pf->open.n - 1);
	VEC_FREE(&pf->open);
	u64map_free(&pf->index);
	free(pf);
}

/* Closes the files of tasks not read for IDLE_NS (looked at once a second). */
static void sweep(struct prof_proc_files *pf, uint64_t now)
{
	if (now - pf->last_sweep_ns < 1000000000ULL)
		return;
	pf->last_sweep_ns = now;
	for (size_t i = pf->open.n; i-- > 0;)
		if (now - pf->open.v[i].used_ns > IDLE_NS)
			forget(pf, i);
}

/*
 * The whole text of the open file fd from offset 0, malloc'ed and
 * NUL-terminated, or NULL with errno.  stat, status and io are one record
 * each: a read shorter than the buffer is the whole text.  A children list
 * is several, and the kernel may stop a read at a record that does not fit
 * its page, so it is read on to the end.
 */
static char *read_from_start(int fd, bool one_record, size_t *lenp)
{
	size_t cap = 4096, len = 0;
	char *buf = xmalloc(cap);

	for (;;) {
		ssize_t n = pread(fd, buf + len, cap - len - 1, (off_t)len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;
			free(buf);
			errno = e;
			return NULL;
		}
		len += (size_t)n;
		if (n == 0 || (one_record && len < cap - 1))
			break;
		if (one_record)
			len = 0;	/* cut off: read it all again into a bigger buffer */
		if (cap - len - 1 < 1024 || one_record) {
			cap *= 2;
			buf = xrealloc(buf, cap);
		}
	}
	buf[len] = 0;
	if (lenp)
		*lenp = len;
	return buf;
}

static void path_of(char *path, size_t size, pid_t pid, pid_t tid, const char *name)
{
	if (tid)
		snprintf(path, size, "/proc/%d/task/%d/%s", (int)pid, (int)tid, name);
	else
		snprintf(path, size, "/proc/%d/%s", (int)pid, name);
}

char *prof_proc_files_read(struct prof_proc_files *pf, pid_t pid, pid_t tid, const char *name, size_t *lenp)
{
	int which = pf ? name_index(name) : -1;
	uint64_t key = (uint64_t)(uint32_t)pid << 32 | (uint64_t)(uint32_t)tid << 3 | (uint64_t)(which < 0 ? 0 : which);
	uint64_t now, slot;
	char path[96], *text;
	int fd;

	path_of(path, sizeof(path), pid, tid, name);
	if (which < 0)
		return read_file(path, lenp);
	now = now_ns();
	sweep(pf, now);
	if (u64map_get(&pf->index, key, &slot)) {
		struct open_file *f = &pf->open.v[slot - 1];
		f->used_ns = now;
		if ((text = read_from_start(f->fd, which != 3, lenp)))
			return text;
		forget(pf, slot - 1);	/* the task is gone (ESRCH): a new one may have its id */
	}
	if (!room_for_one(pf))
		return read_file(path, lenp);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return NULL;
	if (!(text = read_from_start(fd, which != 3, lenp))) {
		int e = errno;
		close(fd);
		errno = e;
		return NULL;
	}
	VEC_PUSH(&pf->open, ((struct open_file){ key, fd, now }));
	u64map_put(&pf->index, key, pf->open.n);
	return text;
}

size_t prof_proc_files_open(const struct prof_proc_files *pf)
{
	return pf ? pf->open.n : 0;
}
