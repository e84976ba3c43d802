/*
 * golang.c - Go binaries' own tables as the symbolizer's fallback: the
 * .gopclntab reader (gopclntab.c) wired to a prof_elf.  dwarf.c asks it
 * for the inline chain and file:line of a pc when libdw has no line there
 * (Go built with `-ldflags=-w`, or `-s -w` which also drops .symtab, or
 * DWARF libdw cannot read), and for the function name when .symtab has
 * none.
 *
 * What the reader needs beside the section:
 *  - the section itself: ".gopclntab", or ".data.rel.ro.gopclntab" in PIE
 *    and externally linked binaries;
 *  - the .text address, for a header whose textStart is 0;
 *  - go:func.* (1.18+), the base of funcdata offsets, where the inline
 *    trees are: the symbol when .symtab has it ("go.func.*" before Go 1.20,
 *    "go:func.*" after), else the gofunc field of runtime.firstmoduledata,
 *    found as the writable word that points at the pclntab header and
 *    checked by its text field.
 *
 * Unwinders ask it for the frame size at a pc (Go's pcsp table), to walk
 * Go code that has no CFI, and where Go's own traceback ends a stack (the
 * function flags TOPFRAME and SPWRITE).
 *
 * Design notes: opened once per prof_elf at the first lookup and freed
 * with it; a table of an unknown version is said once per binary and the
 * binary then symbolizes from its ELF symbols and DWARF alone.
 */
#include "symbol-priv.h"
#include "gopclntab-priv.h"
#include <errno.h>
#include <string.h>

/* Words of runtime.moduledata before its text field: pcHeader, six
 * slices of three words, findfunctab, minpc, maxpc. */
#define MODULEDATA_TEXT 22
/* gofunc's word: text + 16 (etext, noptrdata..enoptrbss, end, gcdata,
 * gcbss, types, etypes, rodata); Go 1.20 added covctrs/ecovctrs. */
#define MODULEDATA_GOFUNC_118 (MODULEDATA_TEXT + 16)
#define MODULEDATA_GOFUNC_120 (MODULEDATA_TEXT + 18)

static int read_vaddr(const void *ctx, uint64_t vaddr, void *buf, size_t len)
{
	return prof_elf_read_vaddr(ctx, vaddr, buf, len);
}

/* The section whose name ends in suffix (file bytes in *data); false if none. */
static bool find_section(struct prof_elf *e, const char *suffix, GElf_Shdr *out, const uint8_t **data)
{
	size_t shstrndx, n = strlen(suffix);

	if (elf_getshdrstrndx(e->elf, &shstrndx) != 0)
		return false;
	for (Elf_Scn *scn = elf_nextscn(e->elf, NULL); scn; scn = elf_nextscn(e->elf, scn)) {
		GElf_Shdr sh;
		const char *name;
		size_t len;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
		    !(name = elf_strptr(e->elf, shstrndx, sh.sh_name)) || (len = strlen(name)) < n ||
		    strcmp(name + len - n, suffix))
			continue;
		if (!e->image || sh.sh_offset > e->image_size || sh.sh_size > e->image_size - sh.sh_offset)
			return false;
		*out = sh;
		if (data)
			*data = e->image + sh.sh_offset;
		return true;
	}
	return false;
}

/* go:func.* from .symtab; 0 if absent. */
static uint64_t gofunc_symbol(struct prof_elf *e)
{
	for (Elf_Scn *scn = elf_nextscn(e->elf, NULL); scn; scn = elf_nextscn(e->elf, scn)) {
		GElf_Shdr sh;
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		size_t n = d->d_size / sh.sh_entsize;
		for (size_t i = 0; i < n; i++) {
			GElf_Sym sym;
			const char *name;
			if (gelf_getsym(d, (int)i, &sym) && (name = elf_strptr(e->elf, sh.sh_link, sym.st_name)) &&
			    (!strcmp(name, "go:func.*") || !strcmp(name, "go.func.*")))
				return sym.st_value;
		}
	}
	return 0;
}

static bool read_word(struct prof_elf *e, uint64_t vaddr, uint64_t *v)
{
	return prof_elf_read_vaddr(e, vaddr, v, sizeof(*v)) == 0;
}

/* gofunc from runtime.firstmoduledata in the writable segments: the word
 * that points at the pclntab header, whose text field is the table's text
 * start and whose gofunc field lies at or after its rodata field. */
static uint64_t gofunc_moduledata(struct prof_elf *e, uint64_t tab_vaddr, uint64_t text,
				  enum go_pcln_version v)
{
	unsigned gofunc_word = v == GO_PCLN_120 ? MODULEDATA_GOFUNC_120 : MODULEDATA_GOFUNC_118;

	for (size_t i = 0; i < e->loads.n; i++) {
		const struct elf_load *l = &e->loads.v[i];
		if (!(l->flags & PF_W) || !e->image || l->offset > e->image_size)
			continue;
		uint64_t size = MIN(l->filesz, e->image_size - l->offset);
		uint64_t skew = (8 - (l->vaddr & 7)) & 7;	/* to the first aligned word */
		for (uint64_t off = skew; off + 8 <= size; off += 8) {
			uint64_t w, a = l->vaddr + off, t, rodata, gofunc, probe;
			memcpy(&w, e->image + l->offset + off, sizeof(w));
			if (w != tab_vaddr ||
			    !read_word(e, a + 8 * MODULEDATA_TEXT, &t) || t != text ||
			    !read_word(e, a + 8 * (gofunc_word - 1), &rodata) ||
			    !read_word(e, a + 8 * gofunc_word, &gofunc) || gofunc < rodata ||
			    !read_word(e, gofunc, &probe))
				continue;
			return gofunc;
		}
	}
	return 0;
}

static struct go_pclntab *go_open(struct prof_elf *e)
{
	GElf_Shdr sh, text;
	struct go_pcln_image img = { .read = read_vaddr, .ctx = e };
	struct go_pclntab *t;
	char what[64];

	if (!find_section(e, ".gopclntab", &sh, &img.tab))
		return NULL;
	img.tab_size = sh.sh_size;
	img.tab_vaddr = sh.sh_addr;
	if (find_section(e, ".text", &text, NULL))
		img.text_start = text.sh_addr;
	int ret = prof_sym_gopclntab_open(&img, &t);
	if (ret == -EPROTONOSUPPORT)
		warning("%s: its .gopclntab is of %s, which prof cannot read: no Go names or lines from it",
			e->path, prof_sym_gopclntab_describe(img.tab, img.tab_size, what, sizeof(what)));
	if (ret < 0 || prof_sym_gopclntab_version(t) == GO_PCLN_116)
		return ret < 0 ? NULL : t;	/* 1.16: funcdata are addresses */
	img.gofunc = gofunc_symbol(e);
	if (!img.gofunc)
		img.gofunc = gofunc_moduledata(e, img.tab_vaddr, prof_sym_gopclntab_text_start(t),
					       prof_sym_gopclntab_version(t));
	prof_sym_gopclntab_free(t);
	return prof_sym_gopclntab_open(&img, &t) == 0 ? t : NULL;
}

static struct go_pclntab *elf_go(struct prof_elf *e)
{
	if (!e->go_tried) {
		e->go_tried = true;
		e->go = go_open(e);
	}
	return e->go;
}

bool prof_elf_is_go(struct prof_elf *e)
{
	return elf_go(e) != NULL;
}

size_t prof_elf_go_chain(struct prof_elf *e, uint64_t vaddr, struct elf_frame *out, size_t max)
{
	struct go_pclntab *t = elf_go(e);
	struct go_frame frames[64];
	uint64_t entry, end;
	size_t n;

	if (!t || !(n = prof_sym_gopclntab_frames(t, vaddr, frames, MIN(max, ARRAY_SIZE(frames)))) ||
	    !prof_sym_gopclntab_func(t, vaddr, &entry, &end))
		return 0;
	for (size_t i = 0; i < n; i++) {
		out[i] = (struct elf_frame){
			.func = frames[i].func,
			.file = *frames[i].file ? xstrdup(frames[i].file) : NULL,
			.line = frames[i].line,
			.inlined = frames[i].inlined,
		};
	}
	out[n - 1].entry = entry;
	return n;
}

const char *prof_elf_go_func(struct prof_elf *e, uint64_t vaddr, uint64_t *start, uint64_t *end)
{
	struct go_pclntab *t = elf_go(e);

	return t ? prof_sym_gopclntab_func(t, vaddr, start, end) : NULL;
}

bool prof_addrspace_go_frame_size(const struct prof_addrspace *as, uint64_t pc, bool is_return_addr,
				  uint32_t *size)
{
	/* a return address may be the next function's first byte: pc-1 is the call */
	uint64_t addr = is_return_addr && pc ? pc - 1 : pc;
	const struct prof_mapping *m = as ? prof_addrspace_find(as, addr) : NULL;
	struct go_pclntab *t = m && m->elf ? elf_go(m->elf) : NULL;

	return t && prof_sym_gopclntab_sp_delta(t, addr - m->bias, size);
}

bool prof_addrspace_go_without_cfi(const struct prof_addrspace *as, uint64_t pc)
{
	const struct prof_mapping *m = as ? prof_addrspace_find(as, pc) : NULL;
	GElf_Shdr sh;

	if (!m || !m->elf || !elf_go(m->elf))
		return false;
	if (!m->elf->go_cfi_checked) {
		m->elf->go_cfi_checked = true;
		m->elf->go_has_cfi = find_section(m->elf, ".debug_frame", &sh, NULL) ||
				     find_section(m->elf, ".eh_frame", &sh, NULL) ||
				     find_section(m->elf, ".zdebug_frame", &sh, NULL);
	}
	return !m->elf->go_has_cfi;
}

/* Go's traceback (runtime/traceback.go) ends a stack at a TOPFRAME function
 * and, for profiling signals, at an SPWRITE one: past a stack switch the
 * frame sizes say nothing about where the caller is.  Its one exception is
 * runtime.cgocallback, which keeps its frame valid on both stacks. */
bool prof_elf_vaddr_ends_go_stack(struct prof_elf *e, uint64_t vaddr)
{
	struct go_pclntab *t = elf_go(e);
	const char *name;
	uint8_t flags;

	if (!t || !(name = prof_sym_gopclntab_func_flags(t, vaddr, &flags)))
		return false;
	if (flags & GO_FUNCFLAG_TOPFRAME)
		return true;
	return (flags & GO_FUNCFLAG_SPWRITE) && strcmp(name, "runtime.cgocallback") != 0;
}

void prof_elf_go_free(struct prof_elf *e)
{
	prof_sym_gopclntab_free(e->go);
	e->go = NULL;
}
