/*
 * misc.c - varints, number parsing, clocks and whole-file I/O helpers that
 * do not deserve a file of their own.
 */
#include "prof/util.h"
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

size_t varint_put(uint8_t *out, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		out[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	out[n++] = (uint8_t)v;
	return n;
}

size_t varint_get(const uint8_t *p, size_t avail, uint64_t *v)
{
	uint64_t r = 0;

	for (size_t i = 0; i < avail && i < 10; i++) {
		r |= (uint64_t)(p[i] & 0x7f) << (7 * i);
		if (!(p[i] & 0x80)) {
			*v = r;
			return i + 1;
		}
	}
	return 0;
}

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno)
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K': v <<= 10; end++; break;
	case 'm': case 'M': v <<= 20; end++; break;
	case 'g': case 'G': v <<= 30; end++; break;
	}
	if (*end)
		return -EINVAL;
	*out = v;
	return 0;
}

struct int_list { int *v; size_t n, cap; };

/* Appends x unless the list has it. */
static void add_unique(struct int_list *l, int x)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i] == x)
			return;
	VEC_PUSH(l, x);
}

/* One "N" or "N-M" of a CPU list, in decimal. */
static int cpu_item(const char *t, struct int_list *l)
{
	unsigned long lo, hi;
	char *end;

	if (!isdigit((unsigned char)*t))
		return -EINVAL;
	lo = hi = strtoul(t, &end, 10);
	if (*end == '-') {
		if (!isdigit((unsigned char)end[1]))
			return -EINVAL;
		hi = strtoul(end + 1, &end, 10);
	}
	if (*end || hi < lo || hi >= 4096)
		return -EINVAL;
	for (unsigned long c = lo; c <= hi; c++)
		add_unique(l, (int)c);
	return 0;
}

int parse_cpu_list(const char *s, int **cpus, size_t *n)
{
	char *copy = xstrdup(s), *save = NULL;
	struct int_list l = { 0 };
	int ret = 0;

	for (char *t = strtok_r(copy, ",", &save); t && !ret; t = strtok_r(NULL, ",", &save))
		ret = cpu_item(t, &l);
	free(copy);
	if (!ret && !l.n)
		ret = -EINVAL;
	if (ret < 0) {
		VEC_FREE(&l);
		return ret;
	}
	*cpus = l.v;
	*n = l.n;
	return 0;
}

bool stderr_is_tty(void) { return isatty(2); }

int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

char *read_file(const char *path, size_t *lenp)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct strbuf sb = STRBUF_INIT;
	char chunk[65536];

	if (fd < 0)
		return NULL;
	for (;;) {
		ssize_t n = read(fd, chunk, sizeof(chunk));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			close(fd);
			sb_release(&sb);
			errno = e;
			return NULL;
		}
		if (n == 0)
			break;
		sb_add(&sb, chunk, (size_t)n);
	}
	close(fd);
	if (lenp)
		*lenp = sb.len;
	return sb.buf ? sb.buf : xstrdup("");
}

int thread_start_nosignals(pthread_t *t, void *(*fn)(void *), void *arg)
{
	sigset_t all, old;
	int ret;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = pthread_create(t, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return ret;
}

int finish_temp_file(int fd, const char *tmp, const char *path, int ret)
{
	if (fd >= 0 && close(fd) < 0 && !ret)
		ret = -errno;
	if (!ret && rename(tmp, path) < 0)
		ret = -errno;
	if (ret && fd >= 0)
		unlink(tmp);
	return ret;
}
