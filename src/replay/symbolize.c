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
 *  - A pid's JIT map is opened the first time an anonymous address of
 *    that pid is seen (src/symbol/tables.c reloads it when it grows).
 *  - kallsyms is process-wide and loaded once (src/symbol/kallsyms.c);
 *    a kernel pc's frame is cached by the pc: searching kallsyms,
 *    hashing the name and interning the frame at every kernel frame of
 *    every sample took a tenth of the recorder's CPU on a busy host.
 *  - The lookups are src/symbol's; this file owns only what ties them to
 *    a profile: interning and the per-address cache.
 */
#include "prof/replay.h"
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
	struct u64map jit;		/* pid -> struct prof_jitmap * */
	struct u64map kernel;		/* kernel pc -> frame id */
	uint32_t kernel_module;
};

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
	while (u64map_next(&s->jit, &it, &pid, &ptr))
		prof_jitmap_free((struct prof_jitmap *)(uintptr_t)ptr);
	u64map_free(&s->jit);
	u64map_free(&s->index);
	u64map_free(&s->modules);
	u64map_free(&s->kernel);
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
		const char *path = (map_flags & PROF_MAP_VDSO) || !*m->path ? prof_elf_path(e) : m->path;
		*slot = prof_module_intern(s->p, path, prof_elf_build_id(e), flags);
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
		char *name = xasprintf("%s+0x%" PRIx64, base_name(prof_elf_path(e)), start);
		VEC_PUSH(&s->ids, simple_frame(s, name, module, start, PROF_FRAME_USER));
		free(name);
		return;
	}
	uint64_t entry = chain[n - 1].entry ? chain[n - 1].entry : vaddr;
	for (size_t i = 0; i < n; i++) {
		char *fallback = NULL;
		const char *func = chain[i].func;
		if (!func)
			func = fallback = xasprintf("%s+0x%" PRIx64, base_name(prof_elf_path(e)), vaddr);
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

static struct prof_jitmap *jit_map(struct prof_symbolizer *s, struct prof_addrspace *as)
{
	bool created;
	uint64_t *slot = u64map_slot(&s->jit, (uint64_t)(as ? as->pid : 0), &created);

	if (created)
		*slot = (uintptr_t)prof_jitmap_open(prof_addrspace_perf_map_path(as));
	return (struct prof_jitmap *)(uintptr_t)*slot;
}

/* The JIT map's name for the module: /tmp/perf-PID.map as perf shows it. */
static uint32_t jit_module(struct prof_symbolizer *s, pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)pid);
	return prof_module_intern(s->p, path, "", PROF_MOD_JIT);
}

/* A JIT frame: a JS engine's "JS:*fn /path/x.js:3:19" as function fn in
 * x.js at line 3 (prof_jit_name_parse), any other name as it is. */
static uint32_t jit_frame(struct prof_symbolizer *s, const char *name, uint32_t module, uint64_t start)
{
	struct prof_jit_name jn;
	struct prof_frame f = { .module = module, .addr = start, .kind = PROF_FRAME_JIT };

	if (!prof_jit_name_parse(name, &jn))
		return simple_frame(s, name, module, start, PROF_FRAME_JIT);
	f.func = prof_intern(s->p, jn.func);
	f.file = prof_intern(s->p, jn.file);
	f.line = jn.line;
	prof_jit_name_free(&jn);
	return prof_frame_intern(s->p, &f);
}

/* JIT symbol from the process's perf map, else "[anon]" (or "[unknown]" outside any mapping). */
static uint32_t jit_or_anon_frame(struct prof_symbolizer *s, struct prof_addrspace *as, uint64_t addr,
				  bool mapped)
{
	uint64_t start = 0;
	const char *name = prof_jitmap_find(jit_map(s, as), addr, &start);

	if (!name)
		return mapped ? simple_frame(s, "[anon]", PROF_NONE, 0, PROF_FRAME_ANON)
			      : simple_frame(s, "[unknown]", PROF_NONE, 0, PROF_FRAME_UNKNOWN);
	return jit_frame(s, name, jit_module(s, as ? as->pid : 0), start);
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

void prof_symbolizer_prewarm(struct prof_symbolizer *s)
{
	prof_sym_prewarm();
}

size_t prof_symbolize_kernel(struct prof_symbolizer *s, uint64_t pc, uint32_t *out, size_t max)
{
	if (max == 0)
		return 0;
	bool created;
	uint64_t *id = u64map_slot(&s->kernel, pc, &created);
	if (created) {
		if (s->kernel_module == PROF_NONE)
			s->kernel_module = prof_module_intern(s->p, "[kernel.kallsyms]", "", PROF_MOD_KERNEL);
		uint64_t start = 0;
		const char *name = prof_kallsyms_find(pc, &start);
		*id = simple_frame(s, name ? name : "[kernel]", s->kernel_module, start, PROF_FRAME_KERNEL);
	}
	out[0] = (uint32_t)*id;
	return 1;
}
