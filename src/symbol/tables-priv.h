/*
 * tables-priv.h - sorted symbol tables for code without an ELF file:
 * /tmp/perf-PID.map JIT maps (see tables.c).
 */
#ifndef PROF_SYMBOL_TABLES_H
#define PROF_SYMBOL_TABLES_H

#include "prof/util.h"

struct sym_entry {
	uint64_t start, size;
	char *name;
};

struct sym_table {
	VEC(struct sym_entry) syms;	/* sorted by start once loaded */
	int64_t file_size;		/* size when loaded, -1 if missing */
};

const struct sym_entry *prof_sym_table_find(const struct sym_table *t, uint64_t addr);
void prof_sym_table_free(struct sym_table *t);
/* Adds the "START SIZE name" lines (hex) of a perf map's text (len bytes,
 * no NUL needed) to t and sorts it; other lines are skipped. */
void prof_sym_table_parse_perf_map(struct sym_table *t, const char *text, size_t len);
/* t becomes the perf map at path (the file's size noted): 0 / -errno. */

#endif
