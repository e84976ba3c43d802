/*
 * cfi-cache-priv.h - per-pc unwind rules cached from libdw's CFI: the libdw
 * backend's fast path (see cfi-cache.c).
 */
#ifndef PROF_UNWIND_CFI_CACHE_H
#define PROF_UNWIND_CFI_CACHE_H

#include "unwind-priv.h"
#include <elfutils/libdwfl.h>

struct cfi_rule {
	uint8_t kind;		/* complex (use libdw), simple, outermost */
	uint8_t cfa_reg;	/* DWARF 7 = rsp or 6 = rbp */
	bool rbp_saved;		/* caller's rbp at CFA + rbp_off, else unchanged */
	uint8_t leaf_kind;	/* of a Go stack end: its CFI's kind, for the sampled frame */
	int32_t cfa_off, ra_off, rbp_off;
};

/* Rules by lookup pc (pc - 1 for return addresses): runtime pcs in an
 * address space's cache, file vaddrs in a binary's. */
struct cfi_cache {
	struct u64map index;	/* lookup pc -> rules index */
	VEC(struct cfi_rule) rules;
};

void prof_unwind_cfi_cache_reset(struct cfi_cache *cc);
void prof_unwind_cfi_cache_free(struct cfi_cache *cc);
/* Unwinds with cached rules (cc: the address space's cache); false
 * (nothing written) when some frame needs libdw's general unwinder. */
bool prof_unwind_cfi_fast(struct cfi_cache *cc, const struct unwind_ctx *c,
			  uint64_t *pcs, size_t max, struct prof_unwind_result *res);

#endif
