/*
 * symidx.c - a sorted index of one module's ELF symbols, so that finding
 * the function containing an address is a binary search.  libdw's
 * dwfl_module_addrinfo scans the whole symbol table on every call (about
 * two million instructions per lookup in libc), which made symbolizing
 * a perf.data file with many distinct addresses slow.
 *
 * Design notes / invariants:
 *  - Built once per prof_elf, on the first lookup, from
 *    dwfl_module_getsym_info; addresses are Dwfl addresses (file vaddr +
 *    mod_bias), as dwfl_module_addrinfo takes them.
 *  - Names point into libelf's string tables: valid as long as the
 *    prof_elf's Dwfl lives (the index is freed with it).
 *  - Which symbol wins follows dwfl_module_addrinfo: a sized symbol that
 *    contains the address, the nearest one below it; at one address a
 *    global beats a weak beats a local symbol, and between equals the
 *    first in the symbol table wins (aliases: __libc_malloc before
 *    malloc, as libdw and so far prof named them); a sizeless symbol (assembly
 *    labels) only covers the gap up to the next symbol, within its section.  Section, file and
 *    TLS symbols, undefined ones and absolute ones (version names such as
 *    "GLIBCXX_3.4.10" in .dynsym, value 0) never match.
 */
#include "symbol-priv.h"
#include <stdlib.h>

struct sym_slot {
	uint64_t start, size;
	const char *name;
	int rank;		/* higher wins at the same start */
	int index;		/* symbol table index: lower wins a tie */
	uint64_t label_end;	/* sizeless: end of its section (0: unknown) */
};

struct elf_symidx {
	struct sym_slot *v;
	size_t n;
};

static int slot_cmp(const void *a, const void *b)
{
	const struct sym_slot *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->rank != y->rank)	/* best last: a backward scan meets it first */
		return x->rank - y->rank;
	return y->index - x->index;
}

static int sym_rank(const GElf_Sym *sym)
{
	int bind = GELF_ST_BIND(sym->st_info);

	return (sym->st_size ? 4 : 0) + (bind == STB_GLOBAL ? 2 : bind == STB_WEAK ? 1 : 0);
}

/* A label covers at most the rest of its section: the Dwfl address where
 * section shndx of elf ends, 0 if unknown. */
static uint64_t section_end(Elf *elf, GElf_Word shndx, Dwarf_Addr bias, uint64_t addr)
{
	GElf_Shdr sh;
	Elf_Scn *scn = elf ? elf_getscn(elf, shndx) : NULL;

	if (!scn || !gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC))
		return 0;
	uint64_t end = sh.sh_addr + sh.sh_size + bias;
	return end > addr ? end : 0;
}

struct elf_symidx *prof_elf_symidx_build(Dwfl_Module *mod)
{
	struct elf_symidx *x = xcalloc(1, sizeof(*x));
	int nsyms = dwfl_module_getsymtab(mod);

	if (nsyms > 0)
		x->v = xcalloc((size_t)nsyms, sizeof(*x->v));
	for (int i = 1; i < nsyms; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		Elf *elf = NULL;
		Dwarf_Addr bias = 0;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &addr, &shndx, &elf, &bias);
		int type = GELF_ST_TYPE(sym.st_info);
		if (!name || !*name || shndx == SHN_UNDEF || shndx == SHN_ABS || type == STT_SECTION ||
		    type == STT_FILE || type == STT_TLS)
			continue;
		x->v[x->n++] = (struct sym_slot){ addr, sym.st_size, name, sym_rank(&sym), i,
						  sym.st_size ? 0 : section_end(elf, shndx, bias, addr) };
	}
	if (x->n)	/* qsort(NULL, 0) is undefined behaviour (found by fuzz_elf) */
		qsort(x->v, x->n, sizeof(*x->v), slot_cmp);
	return x;
}

void prof_elf_symidx_free(struct elf_symidx *x)
{
	if (!x)
		return;
	free(x->v);
	free(x);
}

/* Last slot with start <= addr, or n when there is none. */
static size_t last_at_or_below(const struct elf_symidx *x, uint64_t addr)
{
	size_t lo = 0, hi = x->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (x->v[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? lo - 1 : x->n;
}

/* Nested or aliased sized symbols sit a few slots below at most. */
#define SCAN_BACK 64

const char *prof_elf_symidx_find(const struct elf_symidx *x, uint64_t addr, uint64_t *start)
{
	size_t i = last_at_or_below(x, addr);
	const struct sym_slot *sizeless = NULL;

	if (i == x->n)
		return NULL;
	for (size_t k = 0; k < SCAN_BACK && k <= i; k++) {
		const struct sym_slot *s = &x->v[i - k];
		if (s->size && addr - s->start < s->size) {
			*start = s->start;
			return s->name;
		}
		/* a label covers addr only if no symbol starts between them */
		if (!s->size && !sizeless && s->start == x->v[i].start)
			sizeless = s;
	}
	if (!sizeless || (sizeless->label_end && addr >= sizeless->label_end))
		return NULL;
	*start = sizeless->start;
	return sizeless->name;
}
