/*
 * nspath.c - the pure part of reaching the files of a process in another
 * mount namespace (a container): which pid its runtime used to name its
 * JIT map (the last NSpid of /proc/PID/status), the /proc/PID/root path of
 * a mapped file, and a deleted mapping's name.  The text comes from /proc
 * (or from a recording's MMAP records), so it is parsed as untrusted
 * input: tests/fuzz/fuzz_nspath.c feeds these functions any bytes.
 * addrspace.c reads the files and decides when these paths apply.
 */
#include "nspath-priv.h"
#include "prof/util.h"
#include <limits.h>
#include <string.h>

/* The pid at s (digits up to a tab or the end of the line), or 0. */
static pid_t parse_pid(const char *s, const char *end)
{
	uint64_t v = 0;

	if (s == end)
		return 0;
	for (; s < end; s++) {
		if (*s < '0' || *s > '9')
			return 0;
		v = v * 10 + (uint64_t)(*s - '0');
		if (v > INT_MAX)
			return 0;
	}
	return (pid_t)v;
}

pid_t prof_sym_status_nspid(const char *status, size_t len)
{
	static const char key[] = "NSpid:";
	const char *p = status, *end = status + len;

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		if (!eol)
			eol = end;
		if ((size_t)(eol - p) >= sizeof(key) - 1 && !memcmp(p, key, sizeof(key) - 1)) {
			/* "NSpid:\t4242\t17": one pid per namespace level, innermost last */
			const char *last = eol;
			while (last > p + sizeof(key) - 1 && last[-1] != '\t' && last[-1] != ' ')
				last--;
			return parse_pid(last, eol);
		}
		p = eol + 1;
	}
	return 0;
}

/* Does path have a "." or ".." component? */
static bool has_dot_component(const char *path)
{
	for (const char *c = path; *c; ) {
		size_t n = strcspn(c, "/");
		if ((n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return true;
		c += n;
		c += *c == '/';
	}
	return false;
}

char *prof_sym_ns_root_path(pid_t pid, const char *path)
{
	if (path[0] != '/' || has_dot_component(path))
		return NULL;
	return xasprintf("/proc/%d/root%s", (int)pid, path);
}

char *prof_sym_ns_perf_map_path(pid_t pid, pid_t nspid, bool other_ns)
{
	if (!other_ns)
		return xasprintf("/tmp/perf-%d.map", (int)pid);
	return xasprintf("/proc/%d/root/tmp/perf-%d.map", (int)pid, (int)(nspid > 0 ? nspid : pid));
}

bool prof_sym_map_path_cut_deleted(char *path)
{
	static const char deleted[] = " (deleted)";
	size_t len = strlen(path), dl = sizeof(deleted) - 1;

	if (len <= dl || strcmp(path + len - dl, deleted))
		return false;
	path[len - dl] = '\0';
	return true;
}
