/*
 * fuzz_nspath.c - libFuzzer target for the container path rules
 * (src/symbol/nspath.c): the NSpid line of /proc/PID/status, the
 * /proc/PID/root path of a mapped file, the JIT map's path and a deleted
 * mapping's name.  Mapping paths also come from recordings made
 * elsewhere, so any bytes may reach them.  The input is a status text, a
 * NUL, and a mapping path.  Checked: a root path is the prefix plus the
 * path and never has a "." or ".." component; a cut " (deleted)" was
 * really there.  Seeds: tests/fuzz/corpus/nspath/.
 */
#include "../../src/symbol/nspath-priv.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define PID 4242

static void check_root_path(const char *path)
{
	char prefix[32];
	char *root = prof_sym_ns_root_path(PID, path);
	size_t pl = (size_t)snprintf(prefix, sizeof(prefix), "/proc/%d/root", PID);

	if (!root)
		return;
	if (path[0] != '/' || strncmp(root, prefix, pl) || strcmp(root + pl, path) ||
	    strstr(root, "/../") || strstr(root, "/./"))
		abort();
	size_t n = strlen(root);
	if ((n >= 3 && !strcmp(root + n - 3, "/..")) || (n >= 2 && !strcmp(root + n - 2, "/.")))
		abort();
	free(root);
}

static void check_deleted(const char *path)
{
	char *copy = strdup(path);
	size_t n = strlen(path);

	if (!copy)
		return;
	if (prof_sym_map_path_cut_deleted(copy)) {
		if (strlen(copy) + 10 != n || strcmp(path + n - 10, " (deleted)") || strncmp(copy, path, n - 10))
			abort();
	} else if (strcmp(copy, path)) {
		abort();
	}
	free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, 0, size);
	size_t status_len = nul ? (size_t)(nul - data) : size;
	size_t path_len = nul ? size - status_len - 1 : 0;
	char *path = malloc(path_len + 1);

	if (!path)
		return 0;
	memcpy(path, nul ? nul + 1 : data, path_len);
	path[path_len] = '\0';
	pid_t nspid = prof_sym_status_nspid((const char *)data, status_len);
	if (nspid < 0 || (nspid > 0 && !memmem(data, status_len, "NSpid:", 6)))
		abort();
	free(prof_sym_ns_perf_map_path(PID, nspid, nspid & 1));
	check_root_path(path);
	check_deleted(path);
	free(path);
	return 0;
}
