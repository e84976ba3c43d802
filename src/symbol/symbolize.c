/*
 * symbolize.c - the symbolizer: turns user addresses (via the address
 * space's mappings and the prof_elf lookup) and kernel addresses (via
 * /proc/kallsyms) into frames interned in one profile.
 *
 * Design notes / invariants:
 *  - Results for file-backed code are cached by (prof_elf, file vaddr,
 *    is_return_addr adjusted address): the DWARF work for an address is done
 *    once per symbolizer, every later sample is a hash lookup.
 *  - A frame's addr is the file vaddr of the containing function's entry
 *    (or the address itself when no symbol is known), so samples at
 *    different pcs of one line share a frame while line still tells lines
 *    apart.  Only the innermost frame of a sample's leaf also keeps its
 *    pc (per-instruction costs for `prof annotate`); the cache keys on
 *    leaf-ness too, so callers' frames stay shared.
 *  - JIT maps are loaded the first time an anonymous address of that pid
 *    is seen, and reloaded when a lookup misses and the file has grown
 *    (JITs append as they compile).
 *  - kallsyms is process-wide and loaded once, at the first kernel address
 *    (or the recorder's prewarm): from the cache file of this boot when it
 *    is valid, else from /proc/kallsyms, which then refreshes the cache
 *    (ksyms.c); the cache is an optimization and never an error.
 */
#include "symbol-priv.h"
#include "ksyms-priv.h"
#include "tables-priv.h"
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_INLINE 32

struct cache_entry {
	const struct prof_elf *elf;
	uint64_t vaddr;
	uint32_t first, n;	/* range in ids */
	bool leaf;		/* resolved as a sample's leaf: frames carry pc */
};

struct prof_symbolizer {
	struct prof_profile *p;
	struct u64map index;		/* hash(elf, vaddr) + k -> entries index */
	VEC(struct cache_entry) entries;
	VEC(uint32_t) ids;
	struct u64map modules;		/* prof_elf pointer -> module id */
	struct u64map jit;		/* pid -> struct jit_map * */
	uint32_t kernel_module;
};

/* A JIT's map as the process wrote it: the path is fixed at the first
 * lookup (a container's map is reached through /proc/PID/root). */
struct jit_map {
	struct sym_table table;
	char *path;
};

static struct ksym_table kallsyms;
static int kallsyms_state;		/* 0 unloaded, 1 ok, -1 unusable */

struct prof_symbolizer *prof_symbolizer_new(struct prof_profile *p)
{
	struct prof_symbolizer *s = xcalloc(1, sizeof(*s));

	s->p = p;
	s->kernel_module = PROF_NONE;
	return s;
}

void prof_symbolizer_free(struct prof_symbolizer *s)
{
	if (!s)
		return;
	size_t it = 0;
	uint64_t pid, ptr;
	while (u64map_next(&s->jit, &it, &pid, &ptr)) {
		struct jit_map *j = (struct jit_map *)(uintptr_t)ptr;
		sym_table_free(&j->table);
		free(j->path);
		free(j);
	}
	u64map_free(&s->jit);
	u64map_free(&s->index);
	u64map_free(&s->modules);
	free(s->entries.v);
	free(s->ids.v);
	free(s);
}

static uint32_t simple_frame(struct prof_symbolizer *s, const char *func, uint32_t module,
			     uint64_t addr, enum prof_frame_kind kind)
{
	struct prof_frame f = { .func = prof_intern(s->p, func), .module = module,
				.addr = addr, .kind = (uint8_t)kind };
	return prof_frame_intern(s->p, &f);
}

/* The module of a mapping: named by the mapped path (a deleted file is
 * opened via /proc/PID/map_files, but keeps its real name). */
static uint32_t elf_module(struct prof_symbolizer *s, const struct prof_mapping *m)
{
	struct prof_elf *e = m->elf;
	uint32_t map_flags = m->flags, flags = 0;

	if (map_flags & PROF_MAP_VDSO)
		flags |= PROF_MOD_VDSO;
	if (map_flags & PROF_MAP_DELETED)
		flags |= PROF_MOD_DELETED;
	uint64_t *slot;
	bool created;
	slot = u64map_slot(&s->modules, (uintptr_t)e ^ ((uint64_t)flags << 56), &created);
	if (created) {
		if (!prof_elf_has_symbols(e))
			flags |= PROF_MOD_NO_SYMBOLS;
		const char *path = (map_flags & PROF_MAP_VDSO) || !*m->path ? e->path : m->path;
		*slot = prof_module_intern(s->p, path, e->build_id, flags);
	}
	return (uint32_t)*slot;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

/* Resolves a file vaddr of e into frame ids appended to s->ids. */
static void resolve_elf(struct prof_symbolizer *s, struct prof_elf *e, uint32_t module,
			uint64_t vaddr, bool leaf)
{
	struct elf_frame chain[MAX_INLINE];
	size_t n = prof_elf_lookup(e, vaddr, chain, MAX_INLINE);

	if (n == 0) {	/* no symbol: named after its function's start if known */
		uint64_t start = vaddr;
		prof_elf_function_start(e, vaddr, &start);
		char *name = xasprintf("%s+0x%" PRIx64, base_name(e->path), start);
		VEC_PUSH(&s->ids, simple_frame(s, name, module, start, PROF_FRAME_USER));
		free(name);
		return;
	}
	uint64_t entry = chain[n - 1].entry ? chain[n - 1].entry : vaddr;
	for (size_t i = 0; i < n; i++) {
		char *fallback = NULL;
		const char *func = chain[i].func;
		if (!func)
			func = fallback = xasprintf("%s+0x%" PRIx64, base_name(e->path), vaddr);
		struct prof_frame f = {
			.func = prof_intern(s->p, func),
			.file = prof_intern(s->p, chain[i].file ? chain[i].file : ""),
			.line = chain[i].line,
			.module = module,
			.addr = entry,
			.kind = PROF_FRAME_USER,
			.inlined = chain[i].inlined,
			.pc = leaf && i == 0 ? vaddr : 0,
		};
		free(fallback);
		free(chain[i].file);
		free(chain[i].func_owned);
		VEC_PUSH(&s->ids, prof_frame_intern(s->p, &f));
	}
}

static size_t copy_ids(struct prof_symbolizer *s, const struct cache_entry *c, uint32_t *out,
		       size_t max)
{
	size_t n = MIN((size_t)c->n, max);
	memcpy(out, s->ids.v + c->first, n * sizeof(*out));
	return n;
}

static size_t symbolize_elf(struct prof_symbolizer *s, const struct prof_mapping *m,
			    uint64_t addr, bool leaf, uint32_t *out, size_t max)
{
	uint64_t vaddr = addr - m->bias;
	uint64_t key = hash64((uintptr_t)m->elf ^ hash64(vaddr) ^ leaf), k, idx;

	for (k = 0; u64map_get(&s->index, key + k, &idx); k++) {
		const struct cache_entry *c = &s->entries.v[idx];
		if (c->elf == m->elf && c->vaddr == vaddr && c->leaf == leaf)
			return copy_ids(s, c, out, max);
	}
	struct cache_entry c = { m->elf, vaddr, (uint32_t)s->ids.n, 0, leaf };
	resolve_elf(s, m->elf, elf_module(s, m), vaddr, leaf);
	c.n = (uint32_t)(s->ids.n - c.first);
	u64map_put(&s->index, key + k, s->entries.n);
	VEC_PUSH(&s->entries, c);
	return copy_ids(s, &c, out, max);
}

static struct jit_map *jit_map(struct prof_symbolizer *s, struct prof_addrspace *as)
{
	bool created;
	uint64_t *slot = u64map_slot(&s->jit, (uint64_t)(as ? as->pid : 0), &created);

	if (created) {
		struct jit_map *j = xcalloc(1, sizeof(*j));
		j->path = prof_addrspace_perf_map_path(as);
		sym_table_load_perf_map(&j->table, j->path);	/* missing file: empty table */
		*slot = (uintptr_t)j;
	}
	return (struct jit_map *)(uintptr_t)*slot;
}

/* JITs append to their map as they compile: reload when it has grown. */
static bool jit_reload_if_grown(struct jit_map *j)
{
	struct stat st;

	if (stat(j->path, &st) < 0 || st.st_size == j->table.file_size)
		return false;
	sym_table_load_perf_map(&j->table, j->path);
	return true;
}

/* The JIT map's name for the module: /tmp/perf-PID.map as perf shows it. */
static uint32_t jit_module(struct prof_symbolizer *s, pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)pid);
	return prof_module_intern(s->p, path, "", PROF_MOD_JIT);
}

/* JIT symbol from the process's perf map, else "[anon]" (or "[unknown]" outside any mapping). */
static uint32_t jit_or_anon_frame(struct prof_symbolizer *s, struct prof_addrspace *as, uint64_t addr,
				  bool mapped)
{
	struct jit_map *j = jit_map(s, as);
	const struct sym_entry *e = sym_table_find(&j->table, addr);

	if (!e && jit_reload_if_grown(j))
		e = sym_table_find(&j->table, addr);

	if (!e)
		return mapped ? simple_frame(s, "[anon]", PROF_NONE, 0, PROF_FRAME_ANON)
			      : simple_frame(s, "[unknown]", PROF_NONE, 0, PROF_FRAME_UNKNOWN);
	return simple_frame(s, e->name, jit_module(s, as ? as->pid : 0), e->start, PROF_FRAME_JIT);
}

size_t prof_symbolize_user(struct prof_symbolizer *s, struct prof_addrspace *as,
			   uint64_t pc, bool is_return_addr, uint32_t *out, size_t max)
{
	if (max == 0)
		return 0;
	/* A return address points after the call; pc-1 is inside it. */
	uint64_t addr = is_return_addr && pc ? pc - 1 : pc;
	const struct prof_mapping *m = as ? prof_addrspace_find(as, addr) : NULL;

	if (!m && prof_addrspace_refresh(as, addr))
		m = prof_addrspace_find(as, addr);

	if (m && m->elf)
		return symbolize_elf(s, m, addr, !is_return_addr, out, max);
	if (!m || (m->flags & PROF_MAP_ANON)) {
		out[0] = jit_or_anon_frame(s, as, addr, m != NULL);
		return 1;
	}
	/* a file we could not open or parse */
	uint64_t off = addr - m->start + m->pgoff;
	uint32_t mod = prof_module_intern(s->p, m->path, "", PROF_MOD_NO_SYMBOLS |
					  (m->flags & PROF_MAP_DELETED ? PROF_MOD_DELETED : 0));
	char *name = xasprintf("%s+0x%" PRIx64, base_name(m->path), off);
	out[0] = simple_frame(s, name, mod, off, PROF_FRAME_USER);
	free(name);
	return 1;
}

static const char *kallsyms_problem;	/* why kallsyms_state is -1 */

/* /proc/kallsyms, and the cache refreshed when the system did not change
 * while it was read (a module loaded meanwhile would key a stale table). */
static int kallsyms_load_text(const char *cache, const struct ksym_key *key, bool *all_zero)
{
	struct ksym_key after;
	int ret = ksym_load_text(&kallsyms, "/proc/kallsyms", all_zero);

	if (ret < 0 || *all_zero || !kallsyms.n || !cache)
		return ret;
	if (ksym_key_current(&after) == 0 && !memcmp(&after, key, sizeof(after)))
		ksym_cache_store(&kallsyms, cache, key);	/* unwritable: no cache */
	return 0;
}

static void kallsyms_load(void)
{
	bool all_zero = false;
	struct ksym_key key;

	if (kallsyms_state)
		return;
	kallsyms_state = -1;
	char *cache = ksym_cache_path();
	if (cache && ksym_key_current(&key) < 0) {
		free(cache);
		cache = NULL;
	}
	int ret = cache ? ksym_cache_load(&kallsyms, cache, &key) : -ENOENT;
	if (ret == 0) {
		kallsyms_state = 1;
	} else if ((ret = kallsyms_load_text(cache, &key, &all_zero)) < 0) {
		kallsyms_problem = strerror(-ret);
	} else if (all_zero || !kallsyms.n) {
		kallsyms_problem = "hidden";
		ksym_free(&kallsyms);
	} else {
		kallsyms_state = 1;
	}
	free(cache);
}

/* Said once, at the first kernel address that needed kallsyms. */
static void kallsyms_warn(void)
{
	static bool warned;

	if (warned || kallsyms_state > 0)
		return;
	warned = true;
	if (!strcmp(kallsyms_problem, "hidden"))
		warning("/proc/kallsyms addresses are hidden (kernel.kptr_restrict); kernel frames show as [kernel]");
	else
		warning("cannot read /proc/kallsyms: %s; kernel frames show as [kernel]", kallsyms_problem);
}

/* libc and the dynamic loader are in nearly every target, and prof_elf is
 * shared by file: opening our own copies (debug info, symbol index) now
 * spares the recorder that stall at the target's first libc sample. */
static void prewarm_own_libc(void)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[4096];

	while (f && fgets(line, sizeof(line), f)) {
		char *path = strchr(line, '/');
		char *perms = strchr(line, ' ');
		if (!path || !perms || perms[3] != 'x' ||
		    (!strstr(path, "/libc.so") && !strstr(path, "/ld-linux")))
			continue;
		path[strcspn(path, "\n")] = '\0';
		struct prof_elf *e = prof_elf_get(path);
		if (e && prof_elf_has_symbols(e) && e->mod && !e->symidx)
			e->symidx = elf_symidx_build(e->mod);
	}
	if (f)
		fclose(f);
}

void prof_symbolizer_prewarm(struct prof_symbolizer *s)
{
	kallsyms_load();
	prewarm_own_libc();
}

size_t prof_symbolize_kernel(struct prof_symbolizer *s, uint64_t pc, uint32_t *out, size_t max)
{
	if (max == 0)
		return 0;
	kallsyms_load();
	kallsyms_warn();
	if (s->kernel_module == PROF_NONE)
		s->kernel_module = prof_module_intern(s->p, "[kernel.kallsyms]", "", PROF_MOD_KERNEL);
	uint64_t start = 0;
	const char *name = kallsyms_state > 0 ? ksym_find(&kallsyms, pc, &start) : NULL;
	out[0] = simple_frame(s, name ? name : "[kernel]", s->kernel_module, start,
			      PROF_FRAME_KERNEL);
	return 1;
}
