/*
 * scopes.c - the inline chain at an address without dwarf_getscopes.
 * dwarf_getscopes walks a compilation unit's DIE tree from the top for
 * every address, and dwarf_getscopes_die walks it again to find the
 * parents: in libc's large CUs that was most of symbolizing one address.
 * Here each CU's functions (DW_TAG_subprogram with their pc ranges) are
 * listed once, sorted; an address then costs a binary search plus a walk
 * down the one function's inlined_subroutine / lexical_block children.
 *
 * Design notes / invariants:
 *  - One cu_funcs per CU, keyed by the CU DIE's offset, built the first
 *    time an address falls in that CU, owned by the prof_elf (freed with
 *    it, before its Dwfl: the stored Dwarf_Die values point into it).
 *  - The chain is innermost first: the deepest inlined_subroutine
 *    containing the address, ..., the subprogram, exactly the frames
 *    dwarf_getscopes_die gives.
 *  - Addresses no listed function contains return 0, and dwarf.c falls
 *    back to dwarf_getscopes, so odd DWARF still gets libdw's own answer.
 *  - The CU of an address normally comes from libdw (.debug_aranges);
 *    clang and Go write no .debug_aranges, and libdw 0.188 then finds no
 *    CU at all, so prof_elf_cu_at lists every CU's own ranges (DW_AT_ranges
 *    as rnglistx too) once, sorted, for those binaries.
 */
#include "symbol-priv.h"
#include <elfutils/libdw.h>
#include <dwarf.h>
#include <stdlib.h>

struct fn_range {
	Dwarf_Addr low, high;
	Dwarf_Die die;
};

struct cu_funcs {
	VEC(struct fn_range) fns;	/* sorted by low */
};

struct cu_range {
	Dwarf_Addr low, high;		/* Dwfl addresses */
	Dwarf_Addr bias;
	Dwarf_Die cu;
};

struct elf_scopes {
	struct u64map by_cu;		/* CU DIE offset -> cu_funcs pointer */
	bool cus_listed;
	VEC(struct cu_range) cus;	/* sorted by low (prof_elf_cu_at) */
};

static int range_cmp(const void *a, const void *b)
{
	const struct fn_range *x = a, *y = b;
	return x->low < y->low ? -1 : x->low > y->low;
}

static void add_function(struct cu_funcs *cf, Dwarf_Die *die)
{
	Dwarf_Addr base, low, high;
	ptrdiff_t off = 0;

	while ((off = dwarf_ranges(die, off, &base, &low, &high)) > 0)
		if (high > low) {
			struct fn_range r = { low, high, *die };
			VEC_PUSH(&cf->fns, r);
		}
}

/* Functions among die's children; C++ nests them in namespaces/classes. */
static void collect_functions(struct cu_funcs *cf, Dwarf_Die *parent, int depth)
{
	Dwarf_Die child;

	if (depth > 16 || dwarf_child(parent, &child) != 0)
		return;
	do {
		switch (dwarf_tag(&child)) {
		case DW_TAG_subprogram:
			add_function(cf, &child);
			break;
		case DW_TAG_namespace:
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
			collect_functions(cf, &child, depth + 1);
			break;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
}

static struct cu_funcs *cu_functions(struct elf_scopes *s, Dwarf_Die *cu)
{
	bool created;
	uint64_t *slot = u64map_slot(&s->by_cu, dwarf_dieoffset(cu), &created);

	if (created) {
		struct cu_funcs *cf = xcalloc(1, sizeof(*cf));
		collect_functions(cf, cu, 0);
		if (cf->fns.n)	/* qsort(NULL, 0) is undefined (a CU without functions; fuzz_elf) */
			qsort(cf->fns.v, cf->fns.n, sizeof(*cf->fns.v), range_cmp);
		*slot = (uintptr_t)cf;
	}
	return (struct cu_funcs *)(uintptr_t)*slot;
}

/* The function containing pc: the nearest start below it that covers it. */
static const struct fn_range *find_function(const struct cu_funcs *cf, Dwarf_Addr pc)
{
	size_t lo = COUNT_AT_OR_BELOW(cf->fns.v, cf->fns.n, low, pc);

	for (size_t k = 0; k < 8 && k < lo; k++)	/* nested functions overlap */
		if (pc < cf->fns.v[lo - 1 - k].high)
			return &cf->fns.v[lo - 1 - k];
	return NULL;
}

static bool has_pc_attrs(Dwarf_Die *die)
{
	return dwarf_hasattr(die, DW_AT_low_pc) || dwarf_hasattr(die, DW_AT_ranges);
}

/* Appends the inlined_subroutines under die that contain pc, outermost
 * first, to out[*n]; lexical blocks are walked through, not kept. */
static void inner_scopes(Dwarf_Die *die, Dwarf_Addr pc, Dwarf_Die *out, int *n, int max)
{
	Dwarf_Die child;

	if (*n >= max || dwarf_child(die, &child) != 0)
		return;
	do {
		int tag = dwarf_tag(&child);
		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_lexical_block)
			continue;
		if (dwarf_haspc(&child, pc) > 0) {
			if (tag == DW_TAG_inlined_subroutine)
				out[(*n)++] = child;
			inner_scopes(&child, pc, out, n, max);
			return;
		}
		if (tag == DW_TAG_lexical_block && !has_pc_attrs(&child)) {
			int before = *n;	/* a block without ranges may still hold one */
			inner_scopes(&child, pc, out, n, max);
			if (*n > before)
				return;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
}

int prof_elf_scope_chain(struct prof_elf *e, Dwarf_Die *cu, Dwarf_Addr pc, Dwarf_Die *chain, int max)
{
	Dwarf_Die outer_first[64];
	int n = 0;

	if (max <= 0)
		return 0;
	if (!e->scopes)
		e->scopes = xcalloc(1, sizeof(*e->scopes));
	const struct fn_range *fn = find_function(cu_functions(e->scopes, cu), pc);
	if (!fn)
		return 0;
	outer_first[n++] = fn->die;
	Dwarf_Die sub = fn->die;
	inner_scopes(&sub, pc, outer_first, &n, MIN(max, 64));
	for (int i = 0; i < n; i++)
		chain[i] = outer_first[n - 1 - i];
	return n;
}

static int cu_range_cmp(const void *a, const void *b)
{
	const struct cu_range *x = a, *y = b;
	return x->low < y->low ? -1 : x->low > y->low;
}

/* Every CU's pc ranges (DW_AT_ranges in any form, rnglistx included). */
static void list_cus(struct elf_scopes *s, Dwfl_Module *mod)
{
	Dwarf_Die *cu = NULL;
	Dwarf_Addr bias;

	s->cus_listed = true;
	while ((cu = dwfl_module_nextcu(mod, cu, &bias)) != NULL) {
		Dwarf_Addr base, low, high;
		ptrdiff_t off = 0;
		while ((off = dwarf_ranges(cu, off, &base, &low, &high)) > 0)
			if (high > low) {
				struct cu_range r = { low + bias, high + bias, bias, *cu };
				VEC_PUSH(&s->cus, r);
			}
	}
	if (s->cus.n)
		qsort(s->cus.v, s->cus.n, sizeof(*s->cus.v), cu_range_cmp);
}

Dwarf_Die *prof_elf_cu_at(struct prof_elf *e, Dwarf_Addr a, Dwarf_Addr *bias, Dwarf_Die *mem)
{
	if (!e->scopes)
		e->scopes = xcalloc(1, sizeof(*e->scopes));
	struct elf_scopes *s = e->scopes;
	if (!s->cus_listed)
		list_cus(s, e->mod);
	size_t lo = COUNT_AT_OR_BELOW(s->cus.v, s->cus.n, low, a);
	for (size_t k = 0; k < 4 && k < lo; k++) {	/* CU ranges rarely overlap */
		const struct cu_range *r = &s->cus.v[lo - 1 - k];
		if (a < r->high) {
			*mem = r->cu;
			*bias = r->bias;
			return mem;
		}
	}
	return NULL;
}

void prof_elf_scopes_free(struct elf_scopes *s)
{
	if (!s)
		return;
	size_t it = 0;
	uint64_t cu, ptr;
	while (u64map_next(&s->by_cu, &it, &cu, &ptr)) {
		struct cu_funcs *cf = (struct cu_funcs *)(uintptr_t)ptr;
		free(cf->fns.v);
		free(cf);
	}
	u64map_free(&s->by_cu);
	free(s->cus.v);
	free(s);
}
