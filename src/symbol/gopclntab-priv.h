/*
 * gopclntab-priv.h - a reader of Go's own symbol and line tables, the
 * .gopclntab section every Go binary carries for its runtime's tracebacks
 * (gopclntab.c), and its use by the symbolizer (golang.c).  It gives names,
 * file:line and inline frames where DWARF is missing (`-ldflags=-s -w`
 * builds) or unreadable to libdw.  Shared by src/symbol, the unit test and
 * the fuzz target; nothing else needs it.
 */
#ifndef PROF_GOPCLNTAB_PRIV_H
#define PROF_GOPCLNTAB_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The table versions the reader knows, by header magic. */
enum go_pcln_version {
	GO_PCLN_116 = 116,	/* 0xfffffffa: Go 1.16, 1.17 */
	GO_PCLN_118 = 118,	/* 0xfffffff0: Go 1.18, 1.19 */
	GO_PCLN_120 = 120,	/* 0xfffffff1: Go 1.20 and later */
};

/* What the reader is given.  Every byte of it is untrusted. */
struct go_pcln_image {
	const uint8_t *tab;	/* the .gopclntab section */
	size_t tab_size;
	uint64_t tab_vaddr;	/* its address in the file's address space */
	/* Base of 1.18+ function entry offsets when the header's textStart
	 * is 0 (the .text section's address); ignored otherwise. */
	uint64_t text_start;
	/* go:func.*, the base of 1.18+ funcdata offsets (where the inline
	 * trees are); 0 when unknown: then no inline frames. */
	uint64_t gofunc;
	/* Reads len bytes at file vaddr (inline trees, 1.16 funcdata
	 * pointers); 0 or -errno.  NULL: no inline frames. */
	int (*read)(const void *ctx, uint64_t vaddr, void *buf, size_t len);
	const void *ctx;
};

/* One frame at a pc; the strings point into the image's table. */
struct go_frame {
	const char *func;
	const char *file;	/* "" when the table names none */
	uint32_t line;		/* 0 when unknown */
	bool inlined;		/* an inlined call; the last frame is the real function */
};

struct go_pclntab;

/* Checks the header and the table bounds.  0 with *out set; -ENOEXEC when
 * the bytes are no pclntab, -EPROTONOSUPPORT when they are one of a
 * version the reader does not know (Go 1.2-1.15, or a newer magic):
 * prof_sym_gopclntab_describe() says which. */
int prof_sym_gopclntab_open(const struct go_pcln_image *img, struct go_pclntab **out);
void prof_sym_gopclntab_free(struct go_pclntab *t);
/* The header's version in words, for messages: "Go 1.18-1.19 (magic
 * 0xfffffff0)", "Go 1.2-1.15 (magic 0xfffffffb)", "unknown (magic 0x...)". */
const char *prof_sym_gopclntab_describe(const uint8_t *tab, size_t size, char *buf, size_t len);
enum go_pcln_version prof_sym_gopclntab_version(const struct go_pclntab *t);
/* The address 1.18+ function entries are offsets from (the header's
 * textStart, else the image's text_start). */
uint64_t prof_sym_gopclntab_text_start(const struct go_pclntab *t);
/* The pcHeader's nfunc and its function entries: *entry, and [entry, *end)
 * for prof_sym_gopclntab_func; false when i is out of range or the entry is bad. */
size_t prof_sym_gopclntab_nfunc(const struct go_pclntab *t);
bool prof_sym_gopclntab_func_at(const struct go_pclntab *t, size_t i, uint64_t *entry, uint64_t *end);
/* The function containing pc: its name and [*entry, *end); NULL if none. */
const char *prof_sym_gopclntab_func(const struct go_pclntab *t, uint64_t pc, uint64_t *entry, uint64_t *end);
/* Go's function flags (the runtime's funcFlag), set by Go's assembler and
 * linker: TOPFRAME marks the outermost frame of a stack (runtime.goexit,
 * runtime.mstart, runtime.rt0_go, the signal trampoline); SPWRITE a
 * function that writes SP other than by its frame size, to switch stacks
 * (runtime.systemstack, mcall, morestack, asmcgocall, gogo, the vDSO
 * callers).  Go's traceback stops at either. */
#define GO_FUNCFLAG_TOPFRAME 0x1
#define GO_FUNCFLAG_SPWRITE 0x2
/* The name and *flags of the function containing pc (Go 1.17+; 1.16's
 * tables have no flags: 0); NULL if pc is in no function. */
const char *prof_sym_gopclntab_func_flags(const struct go_pclntab *t, uint64_t pc, uint8_t *flags);
/* The frames at pc, innermost first: each inlined call (its name and the
 * file:line at pc inside it), then the function it was inlined into (with
 * the call site's file:line), as Go's own tracebacks expand them.  Returns
 * how many were written (0: pc is in no function). */
size_t prof_sym_gopclntab_frames(const struct go_pclntab *t, uint64_t pc, struct go_frame *out, size_t max);
/* How far the stack pointer at pc is below its value at the function's
 * entry (Go's pcsp table): the return address is at sp + *delta.  false
 * when pc is in no function or the table has no value there. */
bool prof_sym_gopclntab_sp_delta(const struct go_pclntab *t, uint64_t pc, uint32_t *delta);

#endif
