/*
 * symoffset.c - where a named function starts in its file: the file
 * offset a uprobe needs (perf_event_open's uprobe PMU takes a path and an
 * offset, no tracefs), for `prof record --heap`'s probes on an allocator's
 * entry points and on its own preloaded sampler.  Also whether a file is
 * dynamically linked (has PT_INTERP), which is what LD_PRELOAD needs.
 */
#include "symbol-priv.h"
#include <errno.h>
#include <string.h>

/* vaddr -> file offset through the PT_LOAD that holds it; false if none. */
static bool vaddr_to_offset(const struct prof_elf *e, uint64_t vaddr, uint64_t *off)
{
	for (size_t i = 0; i < e->loads.n; i++) {
		const struct elf_load *l = &e->loads.v[i];
		if (vaddr >= l->vaddr && vaddr < l->vaddr + l->filesz) {
			*off = vaddr - l->vaddr + l->offset;
			return true;
		}
	}
	return false;
}

/* A defined function named name in the symbol table of section type. */
static bool find_in(Elf *elf, Elf64_Word type, const char *name, uint64_t *value)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type || !sh.sh_entsize ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *n;
			if (!gelf_getsym(d, (int)i, &s) || s.st_shndx == SHN_UNDEF ||
			    GELF_ST_TYPE(s.st_info) != STT_FUNC)	/* an IFUNC is its resolver */
				continue;
			if ((n = elf_strptr(elf, sh.sh_link, s.st_name)) && !strcmp(n, name) && s.st_value) {
				*value = s.st_value;
				return true;
			}
		}
	}
	return false;
}

int prof_elf_symbol_offset(const char *path, const char *name, uint64_t *offset)
{
	struct prof_elf *e = prof_elf_get(path);
	uint64_t vaddr;

	if (!e)
		return -errno;
	if (!find_in(e->elf, SHT_DYNSYM, name, &vaddr) && !find_in(e->elf, SHT_SYMTAB, name, &vaddr))
		return -ENOENT;
	return vaddr_to_offset(e, vaddr, offset) ? 0 : -ENOENT;
}

int prof_elf_is_dynamic(const char *path)
{
	struct prof_elf *e = prof_elf_get(path);
	size_t phnum;

	if (!e)
		return -errno;
	if (elf_getphdrnum(e->elf, &phnum))
		return -ENOEXEC;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(e->elf, (int)i, &ph) && ph.p_type == PT_INTERP)
			return 1;
	}
	return 0;
}
