/*
 * buildid.c - finding the right file for a mapping whose file on disk is
 * no longer the one that was mapped (an upgraded package, a rebuilt
 * binary): the recorded build-id names the file to use, and a file with
 * another build-id is never used to symbolize.  Looked up in order:
 *  1. /proc/PID/map_files/START-END while the process lives (the very
 *     inode it mapped);
 *  2. perf's build-id cache, $PERF_BUILDID_DIR or ~/.debug, as written by
 *     `perf record` and `perf buildid-cache`: .build-id/xx/REST is a
 *     symlink to the cached copy (a directory holding "elf" in perf 5+,
 *     the file itself before);
 *  3. /usr/lib/debug/.build-id/xx/REST.debug, the distribution's debug
 *     file: its symbols and DWARF name the code (no code bytes, so the
 *     unwinders find no CFI there and fall back to frame pointers);
 * Debug info for whichever file is used comes from libdw's own search
 * (build-id, .gnu_debuglink, and debuginfod when DEBUGINFOD_URLS is set).
 */
#include "symbol-priv.h"
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The cached file at dir/.build-id/xx/rest[/elf] with build-id hex, or NULL. */
static struct prof_elf *from_cache_dir(const char *dir, const char *hex)
{
	static const char *const suffixes[] = { "/elf", "" };

	if (!dir || !*dir || strlen(hex) < 3)
		return NULL;
	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		char *path = xasprintf("%s/.build-id/%.2s/%s%s", dir, hex, hex + 2, suffixes[i]);
		struct prof_elf *e = prof_elf_get(path);
		free(path);
		if (e && !strcmp(e->build_id, hex))
			return e;
	}
	return NULL;
}

static struct prof_elf *from_perf_cache(const char *hex)
{
	const char *dir = getenv("PERF_BUILDID_DIR");
	struct prof_elf *e = from_cache_dir(dir, hex);

	if (!e && getenv("HOME")) {
		char *home = xasprintf("%s/.debug", getenv("HOME"));
		e = from_cache_dir(home, hex);
		free(home);
	}
	return e;
}

static struct prof_elf *from_debug_dir(const char *hex)
{
	if (strlen(hex) < 3)
		return NULL;
	char *path = xasprintf("/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2);
	struct prof_elf *e = prof_elf_get(path);
	free(path);
	return e && !strcmp(e->build_id, hex) ? e : NULL;
}

struct prof_elf *prof_elf_find_by_build_id(pid_t pid, uint64_t start, uint64_t end, const char *hex)
{
	struct prof_elf *e = NULL;

	if (pid > 0) {
		char *mf = xasprintf("/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid, start, end);
		e = prof_elf_get(mf);
		free(mf);
		if (e && strcmp(e->build_id, hex))
			e = NULL;
	}
	if (!e)
		e = from_perf_cache(hex);
	if (!e)
		e = from_debug_dir(hex);
	return e;
}
