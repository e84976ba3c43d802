/*
 * symbol-priv.h - what the src/symbol files share but nobody else needs: the
 * prof_elf structure and the per-binary address lookup that turns a file
 * virtual address into an inline chain of (function, file, line).
 */
#ifndef PROF_SYMBOL_PRIV_H
#define PROF_SYMBOL_PRIV_H

#include "prof/symbol.h"
#include <elfutils/libdwfl.h>
#include <gelf.h>

/* How many elements of the sorted array v[0..n) have member field <= key:
 * the index of the first one starting after key (a binary search). */
#define COUNT_AT_OR_BELOW(v, n, field, key)                          \
	({                                                          \
		size_t lo_ = 0, hi_ = (n);                          \
		while (lo_ < hi_) {                                 \
			size_t mid_ = lo_ + (hi_ - lo_) / 2;        \
			if ((v)[mid_].field <= (key))               \
				lo_ = mid_ + 1;                     \
			else                                        \
				hi_ = mid_;                         \
		}                                                   \
		lo_;                                                \
	})

struct elf_load {		/* one PT_LOAD program header */
	uint64_t vaddr, offset, filesz, memsz, align;
	uint32_t flags;
};

struct prof_elf {
	char *path;		/* display path ("[vdso]" for the vdso) */
	char *open_path;	/* what to open(): path or /proc/self/fd/N */
	char build_id[2 * 64 + 1];
	dev_t dev;
	ino_t ino;
	int64_t mtime_ns;
	int fd;
	Elf *elf;
	const uint8_t *image;	/* raw file bytes (mmap or vdso copy) */
	size_t image_size;
	void *image_owned;	/* vdso copy to free */
	int type;		/* ET_EXEC, ET_DYN... */
	VEC(struct elf_load) loads;

	/* offline Dwfl for symbols/DWARF, created on first lookup */
	bool dwfl_tried;
	Dwfl *dwfl;
	Dwfl_Module *mod;
	uint64_t mod_bias;	/* dwfl address = file vaddr + mod_bias */
	bool has_symbols;	/* symtab or DWARF found */
	struct elf_symidx *symidx;	/* sorted ELF symbols, built on first lookup */
	struct elf_scopes *scopes;	/* per-CU function ranges (scopes.c) */
	bool eh_tried;			/* .eh_frame_hdr looked up (ehframe.c) */
	const uint8_t *eh_table;	/* its sorted (start, fde) pairs, in image */
	uint32_t eh_count;
	uint64_t eh_vaddr;		/* the table's entries are relative to this */
	struct elf_synth *synth;	/* PLT stub names, e_entry (synthetic.c) */
	bool cfi_eh_tried;		/* .eh_frame CFI opened (elf.c) */
	Dwarf_CFI *cfi_eh;
	void *unwind_cache;		/* the unwinder's per-binary rules */
	void (*unwind_cache_free)(void *);
	bool go_tried;			/* .gopclntab looked up (golang.c) */
	struct go_pclntab *go;		/* Go's own tables, NULL if none */
	bool go_cfi_checked, go_has_cfi;	/* .debug_frame or .eh_frame beside them */
};

/* Sorted symbol index (symidx.c): the function containing a Dwfl address,
 * NULL if none; *start receives its address. */
struct elf_symidx;
struct elf_symidx *prof_elf_symidx_build(Dwfl_Module *mod);
void prof_elf_symidx_free(struct elf_symidx *x);
const char *prof_elf_symidx_find(const struct elf_symidx *x, uint64_t addr, uint64_t *start);

/* Inline chain at a Dwfl address inside cu (scopes.c): innermost
 * inlined_subroutine first, the subprogram last; 0 if not found. */
struct elf_scopes;
int prof_elf_scope_chain(struct prof_elf *e, Dwarf_Die *cu, Dwarf_Addr pc, Dwarf_Die *chain, int max);
void prof_elf_scopes_free(struct elf_scopes *s);
/* The CU holding Dwfl address a from the CUs' own pc ranges, for binaries
 * without .debug_aranges (clang, Go); *bias is its Dwfl bias.  NULL if none. */
Dwarf_Die *prof_elf_cu_at(struct prof_elf *e, Dwarf_Addr a, Dwarf_Addr *bias, Dwarf_Die *mem);

/* The symbol (or synthetic name) of the function around vaddr, without
 * DWARF: "@VERSION" may follow, C++/Rust names stay mangled.  NULL if none. */
const char *prof_elf_symbol_name(struct prof_elf *e, uint64_t vaddr);

/* The file with build-id hex for a mapping [start, end) of pid whose file
 * on disk has another build-id (buildid.c): map_files, perf's build-id
 * cache, /usr/lib/debug/.build-id; NULL if none has it. */
struct prof_elf *prof_elf_find_by_build_id(pid_t pid, uint64_t start, uint64_t end, const char *hex);

/* Names for code without symbols (synthetic.c): the "NAME@plt" stub at
 * vaddr (its start in *start), NULL if vaddr is in no PLT stub; and whether
 * vaddr lies in the function at e_entry (_start), *entry set to e_entry. */
struct elf_synth;
const char *prof_elf_plt_name(struct prof_elf *e, uint64_t vaddr, uint64_t *start);
bool prof_elf_is_entry_point(struct prof_elf *e, uint64_t vaddr, uint64_t *entry);
void prof_elf_synth_free(struct elf_synth *s);

/* Go's .gopclntab (golang.c): whether e has one this reader knows; the
 * inline chain at vaddr from it, innermost first, the function's entry in
 * the last frame's entry (0: no Go function there; files malloc'd, names
 * owned by e); the Go function around vaddr, [*start, *end), NULL if none. */
size_t prof_elf_go_chain(struct prof_elf *e, uint64_t vaddr, struct elf_frame *out, size_t max);
const char *prof_elf_go_func(struct prof_elf *e, uint64_t vaddr, uint64_t *start, uint64_t *end);
void prof_elf_go_free(struct prof_elf *e);

#endif
