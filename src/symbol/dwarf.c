/*
 * dwarf.c - per-binary address lookup: an offline Dwfl per prof_elf (libdw
 * finds separate debug files by build-id under /usr/lib/debug/.build-id and
 * by .gnu_debuglink), ELF .symtab/.dynsym names, DWARF inline chains and
 * file:line.
 *
 * Inline chain: the innermost DWARF scope containing the address is found
 * with dwarf_getscopes; dwarf_getscopes_die then walks its concrete parents.
 * Every DW_TAG_inlined_subroutine is one frame; the chain ends at the
 * DW_TAG_subprogram.  The innermost frame's line is the line table's line
 * for the address; each outer frame's line is the DW_AT_call_file/
 * DW_AT_call_line of the inlined scope just inside it (the call site).
 */
#include "symbol-priv.h"
#include <elfutils/libdw.h>
#include <dwarf.h>
#include <string.h>

static char *debuginfo_path;
static const Dwfl_Callbacks offline_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

static bool elf_open_dwfl(struct prof_elf *e)
{
	if (e->dwfl_tried)
		return e->mod != NULL;
	e->dwfl_tried = true;
	e->dwfl = dwfl_begin(&offline_callbacks);
	if (!e->dwfl)
		return false;
	dwfl_report_begin(e->dwfl);
	e->mod = dwfl_report_offline(e->dwfl, e->path, e->open_path, -1);
	dwfl_report_end(e->dwfl, NULL, NULL);
	if (!e->mod)
		return false;
	Dwarf_Addr bias = 0;
	if (!dwfl_module_getelf(e->mod, &bias)) {
		e->mod = NULL;
		return false;
	}
	e->mod_bias = bias;
	Dwarf_Addr dbias;
	e->has_symbols = dwfl_module_getsymtab(e->mod) > 0 || dwfl_module_getdwarf(e->mod, &dbias);
	return true;
}

bool prof_elf_has_symbols(struct prof_elf *e)
{
	return elf_open_dwfl(e) && e->has_symbols;
}

/* The source file named by a DW_AT_call_file index in die's CU. */
static const char *call_file(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	Dwarf_Word idx;
	Dwarf_Die cu;
	Dwarf_Files *files;
	size_t nfiles;

	if (dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &attr), &idx) != 0)
		return NULL;
	if (!dwarf_diecu(die, &cu, NULL, NULL) || dwarf_getsrcfiles(&cu, &files, &nfiles) != 0 ||
	    idx >= nfiles)
		return NULL;
	return dwarf_filesrc(files, idx, NULL, NULL);
}

static uint32_t call_line(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	Dwarf_Word line;

	if (dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &attr), &line) != 0)
		return 0;
	return (uint32_t)line;
}

static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute attr;

	/* _integrate follows DW_AT_abstract_origin/specification to the name */
	return dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &attr));
}

/* Fills the inline chain from DWARF scopes; returns entries written. */
static size_t dwarf_chain(struct prof_elf *e, Dwarf_Addr a, struct elf_frame *out, size_t max)
{
	Dwarf_Addr cubias;
	Dwarf_Die *cu = dwfl_module_addrdie(e->mod, a, &cubias);
	Dwarf_Die *scopes = NULL, *chain = NULL;
	size_t n = 0;

	if (!cu)
		return 0;
	int ns = dwarf_getscopes(cu, a - cubias, &scopes);
	int nc = ns > 0 ? dwarf_getscopes_die(&scopes[0], &chain) : -1;
	Dwarf_Die *prev_inl = NULL;
	for (int i = 0; i < nc && n < max; i++) {
		int tag = dwarf_tag(&chain[i]);
		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram)
			continue;
		struct elf_frame *f = &out[n++];
		f->func = die_name(&chain[i]);
		f->inlined = tag == DW_TAG_inlined_subroutine;
		if (prev_inl) {
			f->file = call_file(prev_inl);
			f->line = call_line(prev_inl);
		}
		if (!f->inlined)
			break;
		prev_inl = &chain[i];
	}
	free(scopes);
	free(chain);
	return n;
}

size_t prof_elf_lookup(struct prof_elf *e, uint64_t vaddr, struct elf_frame *out, size_t max)
{
	if (max == 0 || !elf_open_dwfl(e))
		return 0;
	Dwarf_Addr a = vaddr + e->mod_bias;
	memset(out, 0, max * sizeof(*out));
	size_t n = dwarf_chain(e, a, out, max);

	/* Innermost line from the line table. */
	Dwfl_Line *line = dwfl_module_getsrc(e->mod, a);
	int lineno = 0;
	const char *file = line ? dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL) : NULL;

	/* The outermost (real) function: prefer the ELF symbol (full C name,
	 * matches perf), but DWARF's name over a mangled C++ symbol. */
	GElf_Off off;
	GElf_Sym sym;
	const char *symname = dwfl_module_addrinfo(e->mod, a, &off, &sym, NULL, NULL, NULL);
	if (n == 0) {
		if (!symname && !file)
			return 0;
		n = 1;
		out[0].inlined = false;
	}
	struct elf_frame *outer = &out[n - 1];
	if (symname && (!outer->func || strncmp(symname, "_Z", 2)))
		outer->func = symname;
	if (symname)
		outer->entry = a - off - e->mod_bias;
	out[0].file = file;
	out[0].line = (uint32_t)(lineno > 0 ? lineno : 0);
	return n;
}
