/*
 * symbol.h - modules (ELF files), per-process address spaces and turning
 * addresses into frames: ELF .symtab/.dynsym, DWARF subprogram names,
 * inline chains, file:line, separate debug files (build-id, debuglink),
 * the vdso, /tmp/perf-PID.map JIT maps and /proc/kallsyms.
 *
 * Ownership: a prof_elf is cached process-wide and shared by every address
 * space that maps it (libc is opened once, not once per process).  A
 * prof_addrspace belongs to the recorder.  Nothing here knows the profile:
 * the symbolizer that interns frames into one is the replay engine's
 * (include/prof/replay.h).
 */
#ifndef PROF_SYMBOL_H
#define PROF_SYMBOL_H

#include "prof/util.h"
#include <sys/types.h>

struct prof_elf;		/* one opened binary (Elf + Dwfl + CFI caches) */

/* Opens (or returns the cached) binary at path; NULL with errno set. */
struct prof_elf *prof_elf_get(const char *path);
/* The kernel's vdso image, read from prof's own address space. */
struct prof_elf *prof_elf_vdso(void);
const char *prof_elf_path(const struct prof_elf *e);
const char *prof_elf_build_id(const struct prof_elf *e);	/* hex or "" */
/* Load bias (runtime address - file vaddr) for a mapping of this file at
 * start with file offset pgoff and protection prot (PROT_*): the PT_LOAD is
 * chosen by file range and permissions, so packed lld/mold layouts and
 * executables mapped twice (V8) each get their own right bias. */
uint64_t prof_elf_bias(const struct prof_elf *e, uint64_t start, uint64_t pgoff, uint32_t prot);
void prof_elf_cache_free(void);	/* at exit; for leak-checked runs */
/* The file offset where function name (.dynsym, then .symtab) starts in
 * path: what a uprobe takes.  0, -ENOENT (no such function) or -errno. */
int prof_elf_symbol_offset(const char *path, const char *name, uint64_t *offset);
/* 1 when path is dynamically linked (PT_INTERP: LD_PRELOAD applies), 0 if
 * static, -errno when it cannot be read as ELF. */
int prof_elf_is_dynamic(const char *path);
/* For unwinders: the open file (the vdso's is a copy, /proc/self/fd/N),
 * the libelf handle, and file contents read by file vaddr. */
int prof_elf_fd(const struct prof_elf *e);	/* kept open; dup() it to hand it over */
struct Elf *prof_elf_elf(const struct prof_elf *e);
int prof_elf_read_vaddr(const struct prof_elf *e, uint64_t vaddr, void *buf, size_t len);
/* The file vaddrs its PT_LOADs span, as libdwfl lays a module out: from
 * the first one's vaddr rounded down to its alignment to the highest end;
 * false without PT_LOAD.  A new reference to its Elf handle (elf_end it),
 * NULL if libelf cannot share it. */
bool prof_elf_load_range(const struct prof_elf *e, uint64_t *lo, uint64_t *hi);
struct Elf *prof_elf_elf_ref(const struct prof_elf *e);
/* A binary's unwind tables, opened once per binary and shared by every
 * address space that maps it: .eh_frame from the file itself (addresses
 * are file vaddrs), and .debug_frame from the debug file the symbolizer
 * found for it, through the same DWARF session (CFI address = file vaddr
 * + *vaddr_to_cfi).  NULL when the binary has none; owned by the binary. */
struct Dwarf_CFI_s;
struct Dwarf_CFI_s *prof_elf_eh_cfi(struct prof_elf *e);
struct Dwarf_CFI_s *prof_elf_debug_cfi(struct prof_elf *e, int64_t *vaddr_to_cfi);
/* The slot where the unwinder keeps its per-binary cache; free_fn frees
 * what it holds when the binary is freed. */
void **prof_elf_unwind_slot(struct prof_elf *e, void (*free_fn)(void *));
/* libdw's find_debuginfo callback with the symbolizer's debug-file lookup
 * (the inflated copy in prof's cache, else build-id and .gnu_debuglink),
 * for a Dwfl that needs a module's DWARF itself. */
struct Dwfl_Module;
int prof_elf_find_debuginfo(struct Dwfl_Module *mod, void **userdata, const char *modname,
			    uint64_t base, const char *file_name, const char *debuglink,
			    uint32_t crc, char **debuginfo_file_name);
/* For `prof annotate`: the ELF symbol around a file vaddr ([*start, +*size)),
 * and the line table's file:line of one instruction (*file malloc'd).
 * 0 or -ENOENT. */
int prof_elf_function_range(struct prof_elf *e, uint64_t vaddr, uint64_t *start, uint64_t *size);
int prof_elf_source_line(struct prof_elf *e, uint64_t vaddr, char **file, uint32_t *line);

enum prof_mapping_flags {
	PROF_MAP_EXEC = 1 << 0,
	PROF_MAP_ANON = 1 << 1,
	PROF_MAP_VDSO = 1 << 2,
	PROF_MAP_DELETED = 1 << 3,	/* "(deleted)" or build-id mismatch */
	PROF_MAP_STACK = 1 << 4,
};

struct prof_mapping {
	uint64_t start, end, pgoff;
	uint64_t bias;			/* runtime addr - file vaddr */
	struct prof_elf *elf;		/* NULL for anon / unreadable files */
	char *path;
	uint32_t flags;
};

struct prof_addrspace {
	pid_t pid;
	VEC(struct prof_mapping) maps;	/* sorted by start, non-overlapping */
	uint64_t generation;		/* bumped on every change (unwinder caches key on it) */
	int8_t mntns;			/* 0 unknown, 1 prof's mount namespace, -1 another */
	bool live;			/* a running process (recording): /proc may be re-read */
	uint64_t refreshed_at;		/* generation after the last re-read */
	void *unwind_state;		/* owned by the unwinder backend */
	void (*unwind_state_free)(void *);
	size_t last_found;		/* prof_addrspace_find's last hit (an index, checked) */
};

struct prof_addrspace *prof_addrspace_new(pid_t pid);
void prof_addrspace_free(struct prof_addrspace *as);
/* Replace the maps with /proc/PID/maps (attach, or catching up). 0 / -errno. */
int prof_addrspace_load_proc(struct prof_addrspace *as);
/* Add one mapping (PERF_RECORD_MMAP2); overlapping older mappings are cut. */
void prof_addrspace_map(struct prof_addrspace *as, uint64_t start, uint64_t len,
			uint64_t pgoff, const char *path, uint32_t prot);
/* The same for MMAP2 events that carry the file's build-id (hex): when the
 * file on disk has another build-id it was replaced after being mapped, so
 * the mapping is flagged PROF_MAP_DELETED and not symbolized from the wrong
 * file (the original is used through /proc/PID/map_files while it lives). */
void prof_addrspace_map_build_id(struct prof_addrspace *as, uint64_t start, uint64_t len,
				 uint64_t pgoff, const char *path, uint32_t prot,
				 const char *build_id);
/* While recording, a pc in no known mapping of a space read from /proc
 * (a process found running) means a mapping made since whose record was
 * lost: re-reads /proc/PID/maps, at most once per change of the mappings,
 * for a live space only (an image started by an exec while recording has
 * all its MMAPs in the rings, and is not).  True if addr is mapped now. */
bool prof_addrspace_refresh(struct prof_addrspace *as, uint64_t addr);
/* Copy the maps of parent into a new space for child (fork). */
struct prof_addrspace *prof_addrspace_fork(const struct prof_addrspace *parent, pid_t child);
const struct prof_mapping *prof_addrspace_find(const struct prof_addrspace *as, uint64_t addr);
/* The process's JIT symbol map (malloc'd): /tmp/perf-PID.map, or
 * /proc/PID/root/tmp/perf-NSPID.map in another mount namespace, where
 * NSPID is its pid in its own pid namespace (NSpid in /proc/PID/status). */
char *prof_addrspace_perf_map_path(struct prof_addrspace *as);

/* The display name of a mangled C++ / Rust (legacy or v0) symbol, Rust's
 * "::h<hash>" left out; malloc'd, or NULL when name is not mangled (or
 * prof was built without libiberty). */
char *prof_sym_demangle(const char *name);
/* A legacy Rust closure's demangled name ("f::{{closure}}") with DWARF's
 * name of that closure put in ("f::{closure#1}"), malloc'd; NULL when
 * demangled is no such name or dwarf_name no "{closure#N}". */
char *prof_sym_rust_closure_name(const char *demangled, const char *dwarf_name);

/* Whether func is where a thread starts (_start, clone3, start_thread,
 * ret_from_fork, runtime.goexit, ...: roots.c): a stack is complete only
 * when its outermost frame is one, whatever the unwinder said. */
bool prof_sym_is_thread_root(const char *func);
/* The same for file vaddr of binary e, by ELF symbol (or Go's tables,
 * below): for unwinders. */
bool prof_elf_vaddr_is_root(struct prof_elf *e, uint64_t vaddr);
/* Whether e is a Go binary with tables prof reads (.gopclntab). */
bool prof_elf_is_go(struct prof_elf *e);
/* Whether vaddr of e is in a Go function where Go's own traceback ends a
 * stack (flagged TOPFRAME or SPWRITE in .gopclntab: goexit, mstart,
 * systemstack, mcall, morestack, ...): a thread root for prof as well. */
bool prof_elf_vaddr_ends_go_stack(struct prof_elf *e, uint64_t vaddr);
/* For unwinders, in Go code: the size of the frame at pc of as (the return
 * address is at sp + *size) from the binary's .gopclntab; false when pc is
 * not in a Go function with a table. */
bool prof_addrspace_go_frame_size(const struct prof_addrspace *as, uint64_t pc, bool is_return_addr,
				  uint32_t *size);
/* Whether pc is Go code of a binary with no CFI at all (built with
 * -ldflags=-w): unwinders then walk it with the frame sizes above. */
bool prof_addrspace_go_without_cfi(const struct prof_addrspace *as, uint64_t pc);

/* What is at a file vaddr of a binary, for the symbolizer (one entry of
 * an inline chain each). */
struct elf_frame {		/* one entry of an inline chain */
	const char *func;	/* NULL if unknown */
	char *func_owned;	/* set when func was rewritten; caller frees */
	char *file;		/* absolute source path, malloc'd; NULL if unknown */
	uint32_t line;
	uint64_t entry;		/* file vaddr of the containing function, 0 if unknown */
	bool inlined;
};

/* Inline chain for file vaddr, innermost first; returns entries written
 * (0: nothing known).  The caller frees each entry's file. */
size_t prof_elf_lookup(struct prof_elf *e, uint64_t vaddr, struct elf_frame *out, size_t max);
bool prof_elf_has_symbols(struct prof_elf *e);
/* Start (file vaddr) of the function around vaddr from .eh_frame_hdr, for
 * code without symbols; false when the binary has no usable table. */
bool prof_elf_function_start(struct prof_elf *e, uint64_t vaddr, uint64_t *start);

/* A process's JIT map (/tmp/perf-PID.map, path malloc'd and taken): read
 * at open (a missing file is an empty map) and read again when a lookup
 * misses and the file has grown, since JITs append as they compile.  find
 * returns the name of the symbol around addr (its start in *start), NULL
 * if none. */
struct prof_jitmap;
struct prof_jitmap *prof_jitmap_open(char *path);
const char *prof_jitmap_find(struct prof_jitmap *j, uint64_t addr, uint64_t *start);
void prof_jitmap_free(struct prof_jitmap *j);

/*
 * A JS engine's perf-map name split into its parts: V8 (node --perf-basic-
 * prof) writes "JS:*jsHotLoop /path/jshot.js:3:19" (JS:, LazyCompile:,
 * Function:, Script: or Eval:, then the tier: * optimized, ~ interpreted,
 * ^ + - the others, the function, possibly empty, then the script and its
 * line and column).  func is malloc'ed ("(anonymous)" for an empty name),
 * file points into name's copy in out->buf.  False, out untouched, for any
 * other name (builtins, stubs, other JITs' names stay as they are).
 */
struct prof_jit_name {
	char *buf;		/* owns func and file */
	const char *func, *file;
	uint32_t line, column;
};
bool prof_jit_name_parse(const char *name, struct prof_jit_name *out);
void prof_jit_name_free(struct prof_jit_name *n);

/* The kernel function around pc from /proc/kallsyms (loaded once, for the
 * whole process; a problem is warned about once, here), its start in
 * *start; NULL when unknown or kallsyms is unusable. */
const char *prof_kallsyms_find(uint64_t pc, uint64_t *start);
/*
 * Loads /proc/kallsyms now (quietly; problems are reported at the first
 * kernel address) and libc's debug info and symbol index.  A recorder
 * calls it before sampling starts: each takes tens of ms, long enough to
 * overflow the ring buffers if it happens at the first sample.
 */
void prof_sym_prewarm(void);

#endif
