/*
 * synthetic.c - names for code that has no symbol of its own, as perf
 * gives them: PLT stubs as "NAME@plt" and the entry point as "_start".
 * A stripped binary keeps .dynsym (exports) and its section headers, so
 *  - each stub of .plt, .plt.sec and .plt.got is one indirect jump
 *    (`ff 25 disp32`, jmp *GOT(%rip)) through a GOT slot, and the dynamic
 *    relocation of that slot (.rela.plt JUMP_SLOT, .rela.dyn GLOB_DAT)
 *    names the function: decoding the jump, not counting entries, works
 *    for every linker's PLT layout (GNU ld, gold, lld, mold, with or
 *    without IBT's .plt.sec);
 *  - e_entry is where _start begins; it ends where the next function in
 *    .eh_frame_hdr begins (or after a small fixed size without one).
 *
 * Design notes / invariants:
 *  - Built once per prof_elf on the first lookup, from libelf's section
 *    data (bounds-checked: the file is untrusted, fuzz_elf reaches here).
 *  - Addresses are file vaddrs.  Stubs are kept sorted by start; names are
 *    owned by the table and freed with the prof_elf.
 */
#include "symbol-priv.h"
#include <stdlib.h>
#include <string.h>

#define START_FALLBACK_SIZE 64	/* glibc's x86-64 _start is 38 bytes */

struct plt_stub {
	uint64_t start, size;
	char *name;
};

struct got_name {
	uint64_t slot;
	const char *name;	/* in libelf's string table */
};

typedef VEC(struct got_name) got_vec;

struct elf_synth {
	VEC(struct plt_stub) stubs;	/* sorted by start */
	uint64_t entry;			/* e_entry, 0 if none */
};

static int got_cmp(const void *a, const void *b)
{
	const struct got_name *x = a, *y = b;
	return x->slot < y->slot ? -1 : x->slot > y->slot;
}

/* The symbol names of one SHT_RELA section's JUMP_SLOT / GLOB_DAT slots. */
static void collect_relocs(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, got_vec *out)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	Elf_Scn *symscn = elf_getscn(elf, sh->sh_link);
	Elf_Data *syms = symscn ? elf_getdata(symscn, NULL) : NULL;
	GElf_Shdr symsh;

	if (!data || !syms || !gelf_getshdr(symscn, &symsh) || !sh->sh_entsize)
		return;
	size_t n = data->d_size / sh->sh_entsize;
	for (size_t i = 0; i < n; i++) {
		GElf_Rela r;
		GElf_Sym sym;
		if (!gelf_getrela(data, (int)i, &r))
			break;
		unsigned type = GELF_R_TYPE(r.r_info);
		if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT)
			continue;
		if (!gelf_getsym(syms, (int)GELF_R_SYM(r.r_info), &sym))
			continue;
		const char *name = elf_strptr(elf, symsh.sh_link, sym.st_name);
		if (name && *name) {
			struct got_name g = { r.r_offset, name };
			VEC_PUSH(out, g);
		}
	}
}

static const char *got_lookup(const struct got_name *v, size_t n, uint64_t slot)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid].slot < slot)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && v[lo].slot == slot ? v[lo].name : NULL;
}

/* The GOT slot an entry jumps through: the first `ff 25 disp32` in it. */
static bool stub_slot(const uint8_t *p, size_t len, uint64_t vaddr, uint64_t *slot)
{
	for (size_t i = 0; i + 6 <= len; i++) {
		if (p[i] != 0xff || p[i + 1] != 0x25)
			continue;
		int32_t disp;
		memcpy(&disp, p + i + 2, 4);
		*slot = vaddr + i + 6 + (uint64_t)(int64_t)disp;
		return true;
	}
	return false;
}

static void add_plt_section(struct elf_synth *s, Elf_Scn *scn, const GElf_Shdr *sh,
			    const struct got_name *got, size_t ngot)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t step = sh->sh_entsize >= 8 && sh->sh_entsize <= 64 ? sh->sh_entsize : 16;

	if (!data || !data->d_buf || sh->sh_type != SHT_PROGBITS)
		return;
	for (size_t off = 0; off + step <= data->d_size; off += step) {
		uint64_t slot;
		const char *name;
		if (!stub_slot((const uint8_t *)data->d_buf + off, step, sh->sh_addr + off, &slot) ||
		    !(name = got_lookup(got, ngot, slot)))
			continue;	/* PLT0, or a slot no relocation names */
		struct plt_stub st = { sh->sh_addr + off, step, NULL };
		st.name = xasprintf("%.*s@plt", (int)strcspn(name, "@"), name);
		VEC_PUSH(&s->stubs, st);
	}
}

static int stub_cmp(const void *a, const void *b)
{
	const struct plt_stub *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

static struct elf_synth *synth_build(Elf *elf)
{
	struct elf_synth *s = xcalloc(1, sizeof(*s));
	got_vec got = { 0 };
	GElf_Ehdr eh;
	size_t shstrndx;

	if (!elf || !gelf_getehdr(elf, &eh) || elf_getshdrstrndx(elf, &shstrndx) != 0)
		return s;
	s->entry = eh.e_machine == EM_X86_64 ? eh.e_entry : 0;
	if (eh.e_machine != EM_X86_64)
		return s;	/* the stub decoding is x86-64's */
	for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_RELA)
			collect_relocs(elf, scn, &sh, &got);
	}
	if (got.n)
		qsort(got.v, got.n, sizeof(*got.v), got_cmp);
	for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn && got.n; scn = elf_nextscn(elf, scn)) {
		GElf_Shdr sh;
		const char *name = gelf_getshdr(scn, &sh) ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;
		if (name && (!strcmp(name, ".plt") || !strcmp(name, ".plt.sec") || !strcmp(name, ".plt.got")))
			add_plt_section(s, scn, &sh, got.v, got.n);
	}
	free(got.v);
	if (s->stubs.n)
		qsort(s->stubs.v, s->stubs.n, sizeof(*s->stubs.v), stub_cmp);
	return s;
}

void prof_elf_synth_free(struct elf_synth *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->stubs.n; i++)
		free(s->stubs.v[i].name);
	free(s->stubs.v);
	free(s);
}

const char *prof_elf_plt_name(struct prof_elf *e, uint64_t vaddr, uint64_t *start)
{
	if (!e->synth)
		e->synth = synth_build(e->elf);
	const struct elf_synth *s = e->synth;
	size_t lo = COUNT_AT_OR_BELOW(s->stubs.v, s->stubs.n, start, vaddr);
	if (lo == 0 || vaddr - s->stubs.v[lo - 1].start >= s->stubs.v[lo - 1].size)
		return NULL;
	*start = s->stubs.v[lo - 1].start;
	return s->stubs.v[lo - 1].name;
}

bool prof_elf_is_entry_point(struct prof_elf *e, uint64_t vaddr, uint64_t *entry_out)
{
	uint64_t fn;

	if (!e->synth)
		e->synth = synth_build(e->elf);
	uint64_t entry = *entry_out = e->synth->entry;
	if (!entry || vaddr < entry || e->type == ET_REL)
		return false;
	if (prof_elf_function_start(e, vaddr, &fn) && fn >= entry)
		return fn == entry;
	return vaddr - entry < START_FALLBACK_SIZE;
}
