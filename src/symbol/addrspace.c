/*
 * addrspace.c - one process's executable mappings, from /proc/PID/maps or
 * PERF_RECORD_MMAP2 events, with fork copy, exec clear and lookup by
 * address.
 *
 * Design notes / invariants:
 *  - maps is sorted by start and non-overlapping; only executable
 *    mappings are kept (they are all symbolization and unwinding need), but
 *    any new mapping first cuts what it overlaps, exec or not, because the
 *    kernel replaced those pages.
 *  - generation is bumped on every change of the mapping list (not on
 *    data mmaps that touch no executable mapping), so unwinder caches that depend
 *    on the mapping list (the libdw Dwfl, libunwind's caches) know when to
 *    rebuild.
 *  - Each mapping owns its path; elf is a borrowed pointer into the
 *    process-wide prof_elf cache.
 *  - Containers: a process in another mount namespace names files that
 *    prof cannot see, or sees as different files (its own libc).  While it
 *    lives, its files are opened through /proc/PID/root/PATH (perf's
 *    nsinfo); the namespace is compared once per exec (it can change with
 *    unshare + exec), and an exited process falls back to the plain path,
 *    whose build-id is still checked against the recorded one.
 */
#include "symbol-priv.h"
#include "nspath-priv.h"
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

struct prof_addrspace *prof_addrspace_new(pid_t pid)
{
	struct prof_addrspace *as = xcalloc(1, sizeof(*as));

	as->pid = pid;
	return as;
}

static void drop_unwind_state(struct prof_addrspace *as)
{
	if (as->unwind_state && as->unwind_state_free)
		as->unwind_state_free(as->unwind_state);
	as->unwind_state = NULL;
	as->unwind_state_free = NULL;
}

static void clear_maps(struct prof_addrspace *as)
{
	as->mntns = 0;	/* re-read: the process may have entered a namespace */
	for (size_t i = 0; i < as->maps.n; i++)
		free(as->maps.v[i].path);
	as->maps.n = 0;
	as->generation++;
}

void prof_addrspace_free(struct prof_addrspace *as)
{
	if (!as)
		return;
	clear_maps(as);
	VEC_FREE(&as->maps);
	drop_unwind_state(as);
	free(as);
}

static bool path_is_anon(const char *path)
{
	return !*path || !strcmp(path, "//anon") || !strncmp(path, "[anon", 5) ||
	       (path[0] == '[' && strcmp(path, "[vdso]"));
}

/* Whether the process lives in another mount namespace than prof. */
static bool in_other_mntns(struct prof_addrspace *as)
{
	if (as->mntns == 0) {
		char fn[64], mine[64] = "", theirs[64] = "";
		snprintf(fn, sizeof(fn), "/proc/%d/ns/mnt", (int)as->pid);
		ssize_t a = readlink("/proc/self/ns/mnt", mine, sizeof(mine) - 1);
		ssize_t b = as->pid > 0 ? readlink(fn, theirs, sizeof(theirs) - 1) : -1;
		/* unknown (exited, no permission): treat as ours, and ask again */
		if (a <= 0 || b <= 0)
			return false;
		as->mntns = strcmp(mine, theirs) ? -1 : 1;
	}
	return as->mntns < 0;
}

/* The path prof opens for a file the process names path (malloc'd): the
 * same path, or /proc/PID/root/path when the process lives in another
 * mount namespace (a container) and can still be reached. */
static char *prof_addrspace_file_path(struct prof_addrspace *as, const char *path)
{
	char *root;

	if (path[0] != '/' || !in_other_mntns(as) || !(root = prof_sym_ns_root_path(as->pid, path)))
		return xstrdup(path);
	if (access(root, R_OK) == 0)
		return root;
	free(root);
	return xstrdup(path);
}

/* The pid inside its own namespace (/proc/PID/status), else pid. */
static pid_t namespace_pid(pid_t pid)
{
	char fn[64];
	size_t len;
	pid_t nspid = 0;

	snprintf(fn, sizeof(fn), "/proc/%d/status", (int)pid);
	char *status = read_file(fn, &len);
	if (status)
		nspid = prof_sym_status_nspid(status, len);
	free(status);
	return nspid > 0 ? nspid : pid;
}

char *prof_addrspace_perf_map_path(struct prof_addrspace *as)
{
	pid_t pid = as ? as->pid : 0;
	bool other = as && in_other_mntns(as);

	return prof_sym_ns_perf_map_path(pid, other ? namespace_pid(pid) : pid, other);
}

/* Only executable mappings are kept, so the segment is the r-x one. */
static uint64_t mapping_bias(const struct prof_mapping *m)
{
	return prof_elf_bias(m->elf, m->start, m->pgoff, PROT_READ | PROT_EXEC);
}

/* Fills flags and elf of a new mapping from its path. */
static void mapping_resolve(struct prof_addrspace *as, struct prof_mapping *m)
{
	if (!strcmp(m->path, "[vdso]")) {
		m->flags |= PROF_MAP_VDSO;
		m->elf = prof_elf_vdso();
	} else if (!strcmp(m->path, "[stack]")) {
		m->flags |= PROF_MAP_STACK | PROF_MAP_ANON;
	} else if (path_is_anon(m->path)) {
		m->flags |= PROF_MAP_ANON;
	} else if (prof_sym_map_path_cut_deleted(m->path)) {
		/* The file is gone, but /proc/PID/map_files still reaches its inode. */
		m->flags |= PROF_MAP_DELETED;
		char *mf = xasprintf("/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)as->pid,
				     m->start, m->end);
		m->elf = prof_elf_get(mf);
		free(mf);
	} else {
		char *open_path = prof_addrspace_file_path(as, m->path);
		m->elf = prof_elf_get(open_path);
		free(open_path);
	}
	if (m->elf)
		m->bias = mapping_bias(m);
}

/* Removes [start, end) from every mapping, splitting where needed;
 * returns whether anything was removed. */
static bool cut_range(struct prof_addrspace *as, uint64_t start, uint64_t end)
{
	bool cut = false;

	for (size_t i = 0; i < as->maps.n; i++) {
		struct prof_mapping *m = &as->maps.v[i];
		if (m->end <= start || m->start >= end)
			continue;
		cut = true;
		if (m->start < start && m->end > end) {	/* split in two */
			struct prof_mapping tail = *m;
			tail.path = xstrdup(m->path);
			tail.pgoff += end - m->start;
			tail.start = end;
			m->end = start;
			VEC_GROW(&as->maps, as->maps.n + 1);
			m = &as->maps.v[i];
			memmove(&as->maps.v[i + 2], &as->maps.v[i + 1],
				(as->maps.n - i - 1) * sizeof(*m));
			as->maps.v[i + 1] = tail;
			as->maps.n++;
			return true;
		}
		if (m->start < start) {
			m->end = start;
		} else if (m->end > end) {
			m->pgoff += end - m->start;
			m->start = end;
		} else {
			free(m->path);
			memmove(m, m + 1, (as->maps.n - i - 1) * sizeof(*m));
			as->maps.n--;
			i--;
		}
	}
	return cut;
}

static void insert_sorted(struct prof_addrspace *as, struct prof_mapping *m)
{
	size_t i = as->maps.n;

	VEC_GROW(&as->maps, as->maps.n + 1);
	while (i > 0 && as->maps.v[i - 1].start > m->start)
		i--;
	memmove(&as->maps.v[i + 1], &as->maps.v[i], (as->maps.n - i) * sizeof(*m));
	as->maps.v[i] = *m;
	as->maps.n++;
}

void prof_addrspace_map(struct prof_addrspace *as, uint64_t start, uint64_t len,
			uint64_t pgoff, const char *path, uint32_t prot)
{
	if (len == 0 || start + len < start)
		return;
	/* data mmaps (malloc arenas...) are frequent: they must not
	 * invalidate the unwinders' caches unless they replaced code */
	if (cut_range(as, start, start + len))
		as->generation++;
	if (!(prot & PROT_EXEC))
		return;
	as->generation++;
	struct prof_mapping m = { .start = start, .end = start + len, .pgoff = pgoff,
				  .path = xstrdup(path ? path : ""), .flags = PROF_MAP_EXEC };
	mapping_resolve(as, &m);
	insert_sorted(as, &m);
}

static struct prof_mapping *find_mutable(struct prof_addrspace *as, uint64_t addr)
{
	return (struct prof_mapping *)prof_addrspace_find(as, addr);
}

void prof_addrspace_map_build_id(struct prof_addrspace *as, uint64_t start, uint64_t len,
				 uint64_t pgoff, const char *path, uint32_t prot,
				 const char *build_id)
{
	prof_addrspace_map(as, start, len, pgoff, path, prot);
	struct prof_mapping *m = find_mutable(as, start);
	if (!m || !m->elf || !build_id || !*build_id || !*m->elf->build_id ||
	    !strcmp(m->elf->build_id, build_id))
		return;
	static const struct prof_elf *warned;	/* one warning per replaced file */
	const struct prof_elf *on_disk = m->elf;
	m->flags |= PROF_MAP_DELETED;
	m->elf = prof_elf_find_by_build_id(as->pid, m->start, m->end, build_id);
	if (m->elf)
		m->bias = mapping_bias(m);
	if (warned != on_disk) {
		warned = on_disk;
		bool original = m->elf && !strncmp(m->elf->path, "/proc/", 6);
		char *from = m->elf && !original ? xasprintf("symbolizing from %s", m->elf->path) : NULL;
		warning("'%s' was replaced while mapped by pid %d: the build-id changed (mapped %.16s, on disk %.16s); %s",
			m->path, (int)as->pid, build_id, on_disk->build_id,
			original ? "symbolizing from the mapped original"
			: from ? from
			: "no file has that build-id (map_files, ~/.debug, /usr/lib/debug): its frames stay addresses");
		free(from);
	}
}

int prof_addrspace_load_proc(struct prof_addrspace *as)
{
	char fn[64];
	snprintf(fn, sizeof(fn), "/proc/%d/maps", (int)as->pid);
	FILE *f = fopen(fn, "re");
	if (!f)
		return -errno;
	clear_maps(as);
	char *line = NULL;
	size_t cap = 0;
	while (getline(&line, &cap, f) > 0) {
		uint64_t start, end, pgoff;
		char perms[8];
		int pathpos = 0;
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*u %n", &start, &end,
			   perms, &pgoff, &pathpos) < 4 || pathpos == 0)
			continue;
		char *path = line + pathpos;
		path[strcspn(path, "\n")] = '\0';
		if (perms[2] == 'x')
			prof_addrspace_map(as, start, end - start, pgoff, path, PROT_EXEC | PROT_READ);
	}
	free(line);
	fclose(f);
	as->live = true;
	return 0;
}

bool prof_addrspace_refresh(struct prof_addrspace *as, uint64_t addr)
{
	if (!as || !as->live || as->refreshed_at == as->generation)
		return false;
	if (prof_addrspace_load_proc(as) < 0)
		as->live = false;	/* exited: nothing more to learn */
	as->refreshed_at = as->generation;
	return prof_addrspace_find(as, addr) != NULL;
}

struct prof_addrspace *prof_addrspace_fork(const struct prof_addrspace *parent, pid_t child)
{
	struct prof_addrspace *as = prof_addrspace_new(child);

	VEC_GROW(&as->maps, parent->maps.n);
	for (size_t i = 0; i < parent->maps.n; i++) {
		as->maps.v[i] = parent->maps.v[i];
		as->maps.v[i].path = xstrdup(parent->maps.v[i].path);
	}
	as->maps.n = parent->maps.n;
	as->generation = 1;
	as->live = parent->live;
	return as;
}

/* Consecutive lookups (the frames of one stack, a cached symbol) mostly
 * fall in the same mapping: the last hit is tried before the search.  A
 * stale index is harmless: mappings do not overlap, so the one at any
 * index that holds addr is addr's mapping.  The hint is not part of the
 * address space's value, hence the cast on a const lookup. */
const struct prof_mapping *prof_addrspace_find(const struct prof_addrspace *as, uint64_t addr)
{
	size_t lo = 0, hi = as->maps.n, last = as->last_found;

	if (last < hi && addr >= as->maps.v[last].start && addr < as->maps.v[last].end)
		return &as->maps.v[last];
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct prof_mapping *m = &as->maps.v[mid];
		if (addr < m->start)
			hi = mid;
		else if (addr >= m->end)
			lo = mid + 1;
		else
			return ((struct prof_addrspace *)as)->last_found = mid, m;
	}
	return NULL;
}
