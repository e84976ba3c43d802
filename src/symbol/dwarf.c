/*
 * dwarf.c - per-binary address lookup: an offline Dwfl per prof_elf (libdw
 * finds separate debug files by build-id under /usr/lib/debug/.build-id and
 * by .gnu_debuglink), ELF .symtab/.dynsym names, DWARF inline chains and
 * file:line.  The same session is the unwinder's: its .debug_frame CFI
 * (prof_elf_debug_cfi) and its debug-file lookup (prof_elf_find_debuginfo,
 * used by the unwinder's own Dwfl), so a binary's DWARF is found one way
 * and opened once.
 *
 * Names: the ELF symbol for the real function (C names as perf shows
 * them, "@VERSION" dropped), C++ and Rust names demangled (demangle.c),
 * DWARF names otherwise.
 *
 * Inline chain: scopes.c finds the function containing the address from a
 * per-CU sorted table and walks down its inlined scopes; when that finds
 * nothing, the innermost DWARF scope is found with dwarf_getscopes and
 * dwarf_getscopes_die walks its concrete parents.
 * Every DW_TAG_inlined_subroutine is one frame; the chain ends at the
 * DW_TAG_subprogram.  The innermost frame's line is the line table's line
 * for the address; each outer frame's line is the DW_AT_call_file/
 * DW_AT_call_line of the inlined scope just inside it (the call site).
 */
#include "symbol-priv.h"
#include "ksyms-priv.h"
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <dwarf.h>
#include <string.h>
#include <unistd.h>

/* The inflated copy of the module's debug file when one was made by an
 * earlier run (debugcache.c), else libdw's own search (build-id,
 * debuglink), whose result is then copied for the next run.  The copy is
 * looked up first because libdw keeps the Elf handle of the file its
 * build-id search opened, whatever fd this callback returns. */
int prof_elf_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			    Dwarf_Addr base, const char *file_name, const char *debuglink,
			    GElf_Word crc, char **debuginfo_file_name)
{
	const unsigned char *id;
	GElf_Addr id_vaddr;
	int len = dwfl_module_build_id(mod, &id, &id_vaddr);
	int fd = len > 0 ? prof_sym_debug_cache_find(id, len, debuginfo_file_name) : -1;

	if (fd >= 0)
		return fd;
	fd = dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name, debuglink,
					  crc, debuginfo_file_name);
	if (fd >= 0 && len > 0)
		prof_sym_debug_cache_add(fd, id, len);
	return fd;
}

static char *debuginfo_path;
static const Dwfl_Callbacks offline_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = prof_elf_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

static bool elf_has_symtab(Elf *elf)
{
	for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB)
			return true;
	}
	return false;
}

static bool elf_open_dwfl(struct prof_elf *e)
{
	if (e->dwfl_tried)
		return e->mod != NULL;
	e->dwfl_tried = true;
	e->dwfl = dwfl_begin(&offline_callbacks);
	if (!e->dwfl)
		return false;
	dwfl_report_begin(e->dwfl);
	/* hand libdw a dup of our descriptor: the path may be gone by now
	 * (deleted file, map_files of an exited process); libdw closes it */
	int fd = e->fd >= 0 ? fcntl(e->fd, F_DUPFD_CLOEXEC, 0) : -1;
	e->mod = dwfl_report_offline(e->dwfl, e->path, e->open_path, fd);
	dwfl_report_end(e->dwfl, NULL, NULL);
	if (!e->mod)
		return false;
	Dwarf_Addr bias = 0;
	if (!dwfl_module_getelf(e->mod, &bias)) {
		e->mod = NULL;
		return false;
	}
	e->mod_bias = bias;
	/* .dynsym alone does not count: it names exports, not the code. */
	Dwarf_Addr dbias;
	e->has_symbols = dwfl_module_getdwarf(e->mod, &dbias) || elf_has_symtab(e->elf);
	return true;
}

struct Dwarf_CFI_s *prof_elf_debug_cfi(struct prof_elf *e, int64_t *vaddr_to_cfi)
{
	Dwarf_Addr cfi_bias = 0;
	Dwarf_CFI *cfi = elf_open_dwfl(e) ? dwfl_module_dwarf_cfi(e->mod, &cfi_bias) : NULL;

	/* Dwfl address = vaddr + mod_bias = CFI address + cfi_bias */
	*vaddr_to_cfi = (int64_t)(e->mod_bias - cfi_bias);
	return cfi;
}

bool prof_elf_has_symbols(struct prof_elf *e)
{
	return elf_open_dwfl(e) && (e->has_symbols || prof_elf_is_go(e));
}

/* file made absolute against the CU's compilation directory (malloc'd). */
static char *abs_source(const char *file, const char *comp_dir)
{
	if (!file)
		return NULL;
	/* A relative comp_dir (distro -fdebug-prefix-map builds) cannot make
	 * anything absolute, and libdw has already prefixed it. */
	if (file[0] == '/' || !comp_dir || comp_dir[0] != '/')
		return xstrdup(file);
	while (file[0] == '.' && file[1] == '/')
		file += 2;
	size_t n = strlen(comp_dir);
	return xasprintf("%s%s%s", comp_dir, n && comp_dir[n - 1] == '/' ? "" : "/", file);
}

/* The source file named by a DW_AT_call_file index in die's CU (malloc'd). */
static char *call_file(Dwarf_Die *die)
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
	Dwarf_Attribute dir;
	return abs_source(dwarf_filesrc(files, idx, NULL, NULL),
			  dwarf_formstring(dwarf_attr(&cu, DW_AT_comp_dir, &dir)));
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

#define MAX_CHAIN 64

/* The CU of Dwfl address a: libdw's (from .debug_aranges), else from the
 * CUs' own ranges (clang and Go write no .debug_aranges). */
static Dwarf_Die *addr_cu(struct prof_elf *e, Dwarf_Addr a, Dwarf_Addr *cubias, Dwarf_Die *mem)
{
	Dwarf_Die *cu = dwfl_module_addrdie(e->mod, a, cubias);

	return cu ? cu : prof_elf_cu_at(e, a, cubias, mem);
}

/* The line table's source file (malloc'd, absolute) and line at a. */
static char *addr_line(struct prof_elf *e, Dwarf_Die *cu, Dwarf_Addr a, Dwarf_Addr cubias, int *lineno)
{
	Dwfl_Line *line = dwfl_module_getsrc(e->mod, a);

	*lineno = 0;
	if (line) {
		const char *file = dwfl_lineinfo(line, NULL, lineno, NULL, NULL, NULL);
		return abs_source(file, dwfl_line_comp_dir(line));
	}
	Dwarf_Line *l = cu ? dwarf_getsrc_die(cu, a - cubias) : NULL;
	if (!l || dwarf_lineno(l, lineno) != 0)
		return NULL;
	Dwarf_Attribute dir;
	return abs_source(dwarf_linesrc(l, NULL, NULL), dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &dir)));
}

/* Fills the inline chain from DWARF scopes; returns entries written. */
static size_t dwarf_chain(struct prof_elf *e, Dwarf_Die *cu, Dwarf_Addr a, Dwarf_Addr cubias,
			  struct elf_frame *out, size_t max)
{
	Dwarf_Die *scopes = NULL, *chain = NULL, fast[MAX_CHAIN];
	size_t n = 0;

	if (!cu)
		return 0;
	/* per-CU function table first (scopes.c); dwarf_getscopes if it fails */
	int nc = prof_elf_scope_chain(e, cu, a - cubias, fast, MAX_CHAIN);
	if (nc > 0) {
		chain = fast;
	} else {
		int ns = dwarf_getscopes(cu, a - cubias, &scopes);
		nc = ns > 0 ? dwarf_getscopes_die(&scopes[0], &chain) : -1;
	}
	Dwarf_Die *prev_inl = NULL;
	for (int i = 0; i < nc && n < max; i++) {
		int tag = dwarf_tag(&chain[i]);
		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram)
			continue;
		struct elf_frame *f = &out[n++];
		Dwarf_Attribute attr;
		const char *linkage = dwarf_formstring(
			dwarf_attr_integrate(&chain[i], DW_AT_linkage_name, &attr));
		f->func_owned = prof_sym_demangle(linkage);
		char *closure = prof_sym_rust_closure_name(f->func_owned, die_name(&chain[i]));
		if (closure) {	/* two closures of one function stay two rows */
			free(f->func_owned);
			f->func_owned = closure;
		}
		f->func = f->func_owned ? f->func_owned : die_name(&chain[i]);
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
	if (chain != fast)
		free(chain);
	return n;
}

/* The symbol of the function around vaddr and its start (file vaddrs); *synthetic
 * is set for names made up by synthetic.c: a PLT stub's "NAME@plt" (no real
 * symbol lives in a PLT), else the ELF symbol, else "_start" at e_entry
 * when no symbol starts there (stripped executables: the nearest export
 * below the entry point would claim it). */
static const char *function_symbol(struct prof_elf *e, uint64_t vaddr, uint64_t *start, bool *synthetic)
{
	if (!elf_open_dwfl(e))
		return NULL;
	const char *name = prof_elf_plt_name(e, vaddr, start);

	*synthetic = name != NULL;
	if (name)
		return name;
	if (!e->symidx)
		e->symidx = prof_elf_symidx_build(e->mod);
	uint64_t a = 0;
	name = prof_elf_symidx_find(e->symidx, vaddr + e->mod_bias, &a);
	if (name)
		*start = a - e->mod_bias;
	uint64_t entry;
	if (prof_elf_is_entry_point(e, vaddr, &entry) && (!name || *start != entry)) {
		*synthetic = true;
		*start = entry;
		return "_start";
	}
	return name;
}

const char *prof_elf_symbol_name(struct prof_elf *e, uint64_t vaddr)
{
	uint64_t start, end;
	bool synthetic;
	const char *name = function_symbol(e, vaddr, &start, &synthetic);

	return name ? name : prof_elf_go_func(e, vaddr, &start, &end);
}

static void chain_free(struct elf_frame *chain, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(chain[i].file);
		free(chain[i].func_owned);
		chain[i] = (struct elf_frame){ 0 };
	}
}

/* Where libdw has no line, Go's own tables (golang.c) give the whole
 * chain: it replaces the n frames of out.  Returns its length, 0 (out
 * untouched) when vaddr is in no Go function. */
static size_t go_chain_instead(struct prof_elf *e, uint64_t vaddr, struct elf_frame *out, size_t n,
			       size_t max)
{
	struct elf_frame go[MAX_CHAIN];
	size_t ng = prof_elf_go_chain(e, vaddr, go, MIN(max, MAX_CHAIN));

	if (ng) {
		chain_free(out, n);
		memcpy(out, go, ng * sizeof(*go));
	}
	return ng;
}

size_t prof_elf_lookup(struct prof_elf *e, uint64_t vaddr, struct elf_frame *out, size_t max)
{
	if (max == 0 || !elf_open_dwfl(e))
		return 0;
	Dwarf_Addr a = vaddr + e->mod_bias, cubias = 0;
	Dwarf_Die cu_mem, *cu = addr_cu(e, a, &cubias, &cu_mem);
	memset(out, 0, max * sizeof(*out));
	size_t n = dwarf_chain(e, cu, a, cubias, out, max);

	/* Innermost line from the line table, else Go's tables. */
	int lineno = 0;
	char *abs_file = addr_line(e, cu, a, cubias, &lineno);
	size_t ngo = abs_file ? 0 : go_chain_instead(e, vaddr, out, n, max);
	if (ngo)
		n = ngo;

	/* The outermost (real) function: prefer the ELF symbol (full C name,
	 * matches perf), but DWARF's name over a mangled C++ symbol. */
	uint64_t symstart = 0;
	bool synthetic;
	const char *symname = function_symbol(e, vaddr, &symstart, &synthetic);
	if (n == 0) {
		if (!symname && !abs_file) {
			free(abs_file);
			return 0;
		}
		n = 1;
		out[0].inlined = false;
	}
	struct elf_frame *outer = &out[n - 1];
	if (synthetic && !outer->func_owned) {
		outer->func = symname;	/* owned by the prof_elf */
	} else if (symname && !outer->func_owned) {
		/* "__libc_start_main@@GLIBC_2.34": the version is not part of the name */
		char *plain = xstrndup(symname, strcspn(symname, "@"));
		char *dem = prof_sym_demangle(plain);
		if (dem || !outer->func ||
		    (strncmp(plain, "_Z", 2) && strncmp(plain, "_R", 2))) {
			outer->func_owned = dem ? dem : plain;
			outer->func = outer->func_owned;
			if (dem)
				free(plain);
		} else {
			free(plain);	/* mangled and no demangler: DWARF's name reads better */
		}
	}
	if (symname)
		outer->entry = symstart;
	if (!ngo) {
		free(out[0].file);
		out[0].file = abs_file;
		out[0].line = (uint32_t)(lineno > 0 ? lineno : 0);
	}
	return n;
}

int prof_elf_function_range(struct prof_elf *e, uint64_t vaddr, uint64_t *start, uint64_t *size)
{
	GElf_Sym sym;
	GElf_Off off;

	if (!elf_open_dwfl(e))
		return -ENOENT;
	const char *name = dwfl_module_addrinfo(e->mod, vaddr + e->mod_bias, &off, &sym,
						NULL, NULL, NULL);
	uint64_t end;
	if ((!name || !sym.st_size) && prof_elf_go_func(e, vaddr, start, &end)) {
		*size = end - *start;	/* a Go binary without .symtab */
		return 0;
	}
	if (!name || !sym.st_size)
		return -ENOENT;
	*start = vaddr - off;
	*size = sym.st_size;
	return 0;
}

int prof_elf_source_line(struct prof_elf *e, uint64_t vaddr, char **file, uint32_t *line)
{
	struct elf_frame chain[8];
	size_t n = prof_elf_lookup(e, vaddr, chain, ARRAY_SIZE(chain));

	*file = NULL;
	*line = 0;
	for (size_t i = 0; i < n; i++) {
		if (i == 0) {
			*file = chain[0].file;
			*line = chain[0].line;
		} else {
			free(chain[i].file);
		}
		free(chain[i].func_owned);
	}
	return *file ? 0 : -ENOENT;
}
