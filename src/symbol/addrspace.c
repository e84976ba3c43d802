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
 */
#include "symbol-priv.h"
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

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

void prof_addrspace_clear(struct prof_addrspace *as)
{
	for (size_t i = 0; i < as->maps.n; i++)
		free(as->maps.v[i].path);
	as->maps.n = 0;
	as->generation++;
}

void prof_addrspace_free(struct prof_addrspace *as)
{
	if (!as)
		return;
	prof_addrspace_clear(as);
	VEC_FREE(&as->maps);
	drop_unwind_state(as);
	free(as);
}

static bool path_is_anon(const char *path)
{
	return !*path || !strcmp(path, "//anon") || !strncmp(path, "[anon", 5) ||
	       (path[0] == '[' && strcmp(path, "[vdso]"));
}

/* Only executable mappings are kept, so the segment is the r-x one. */
static uint64_t mapping_bias(const struct prof_mapping *m)
{
	return prof_elf_bias(m->elf, m->start, m->pgoff, PROT_READ | PROT_EXEC);
}

/* Fills flags and elf of a new mapping from its path. */
static void mapping_resolve(struct prof_addrspace *as, struct prof_mapping *m)
{
	static const char deleted[] = " (deleted)";
	size_t len = strlen(m->path), dl = sizeof(deleted) - 1;

	if (!strcmp(m->path, "[vdso]")) {
		m->flags |= PROF_MAP_VDSO;
		m->elf = prof_elf_vdso();
	} else if (!strcmp(m->path, "[stack]")) {
		m->flags |= PROF_MAP_STACK | PROF_MAP_ANON;
	} else if (path_is_anon(m->path)) {
		m->flags |= PROF_MAP_ANON;
	} else if (len > dl && !strcmp(m->path + len - dl, deleted)) {
		/* The file is gone, but /proc/PID/map_files still reaches its inode. */
		m->flags |= PROF_MAP_DELETED;
		m->path[len - dl] = '\0';
		char *mf = xasprintf("/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)as->pid,
				     m->start, m->end);
		m->elf = prof_elf_get(mf);
		free(mf);
	} else {
		m->elf = prof_elf_get(m->path);
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
	char *mf = xasprintf("/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)as->pid, m->start, m->end);
	struct prof_elf *orig = prof_elf_get(mf);
	free(mf);
	m->elf = orig && !strcmp(orig->build_id, build_id) ? orig : NULL;
	if (m->elf)
		m->bias = mapping_bias(m);
	if (warned != on_disk) {
		warned = on_disk;
		warning("'%s' was replaced while mapped by pid %d: the build-id changed (mapped %.16s, on disk %.16s); %s",
			m->path, (int)as->pid, build_id, on_disk->build_id,
			m->elf ? "symbolizing from the mapped original" : "the original is gone, its frames stay unresolved");
	}
}

int prof_addrspace_load_proc(struct prof_addrspace *as)
{
	char fn[64];
	snprintf(fn, sizeof(fn), "/proc/%d/maps", (int)as->pid);
	FILE *f = fopen(fn, "re");
	if (!f)
		return -errno;
	prof_addrspace_clear(as);
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
	return 0;
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
	return as;
}

const struct prof_mapping *prof_addrspace_find(const struct prof_addrspace *as, uint64_t addr)
{
	size_t lo = 0, hi = as->maps.n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct prof_mapping *m = &as->maps.v[mid];
		if (addr < m->start)
			hi = mid;
		else if (addr >= m->end)
			lo = mid + 1;
		else
			return m;
	}
	return NULL;
}
