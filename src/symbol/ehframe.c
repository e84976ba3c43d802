/*
 * ehframe.c - function starts from .eh_frame_hdr, for code without
 * symbols.  A stripped library (libz's static functions, a stripped
 * binary) has no name for most of its code, but every function keeps an
 * unwind entry, and .eh_frame_hdr (PT_GNU_EH_FRAME) lists their start
 * addresses sorted for binary search.  Naming a nameless address after
 * the start of its function ("libz.so.1+0xab00") makes all samples of one
 * function one row, instead of one row per sampled address.
 *
 * Design notes / invariants:
 *  - The image is untrusted (fuzz_elf): every read is bounds-checked, and
 *    only the layout GNU ld and lld write is accepted (version 1, fde_count
 *    as udata4, table as datarel|sdata4 pairs); anything else means "no
 *    table" and callers keep the per-address name.
 *  - Nothing is copied: the table is searched in place in e->image.
 */
#include "symbol-priv.h"
#include <dwarf.h>
#include <string.h>

#define EH_PE_OMIT 0xff
#define EH_PE_UDATA4 0x03
#define EH_PE_DATAREL_SDATA4 0x3b

/* Bytes of an encoded eh_frame_ptr, or 0 for a form we do not take. */
static size_t pointer_size(uint8_t enc)
{
	switch (enc & 0x0f) {
	case 0x02: case 0x0a: return 2;	/* udata2 / sdata2 */
	case 0x03: case 0x0b: return 4;	/* udata4 / sdata4 */
	case 0x00: case 0x04: case 0x0c: return 8;	/* absptr / udata8 / sdata8 */
	default: return 0;
	}
}

static const GElf_Phdr *find_eh_frame_hdr(Elf *elf, GElf_Phdr *ph)
{
	size_t n;

	if (!elf || elf_getphdrnum(elf, &n) != 0)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (gelf_getphdr(elf, (int)i, ph) && ph->p_type == PT_GNU_EH_FRAME)
			return ph;
	return NULL;
}

/* Locates the sorted table once; e->eh_count stays 0 if there is none. */
static void load_table(struct prof_elf *e)
{
	GElf_Phdr ph;
	uint32_t count;

	e->eh_tried = true;
	if (!e->image || !find_eh_frame_hdr(e->elf, &ph) || ph.p_offset > e->image_size ||
	    ph.p_filesz > e->image_size - ph.p_offset || ph.p_filesz < 4)
		return;
	const uint8_t *h = e->image + ph.p_offset;
	size_t ptr = pointer_size(h[1]), head = 4 + ptr + 4;
	if (h[0] != 1 || h[1] == EH_PE_OMIT || !ptr || h[2] != EH_PE_UDATA4 ||
	    h[3] != EH_PE_DATAREL_SDATA4 || ph.p_filesz < head)
		return;
	memcpy(&count, h + 4 + ptr, 4);
	if (count == 0 || count > (ph.p_filesz - head) / 8)
		return;
	e->eh_table = h + head;
	e->eh_count = count;
	e->eh_vaddr = ph.p_vaddr;
}

static uint64_t entry_start(const struct prof_elf *e, uint32_t i)
{
	int32_t rel;

	memcpy(&rel, e->eh_table + 8 * (size_t)i, 4);
	return e->eh_vaddr + (uint64_t)(int64_t)rel;
}

bool prof_elf_function_start(struct prof_elf *e, uint64_t vaddr, uint64_t *start)
{
	uint32_t lo = 0, hi;

	if (!e->eh_tried)
		load_table(e);
	hi = e->eh_count;
	while (lo < hi) {	/* first entry starting after vaddr */
		uint32_t mid = lo + (hi - lo) / 2;
		if (entry_start(e, mid) <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return false;
	*start = entry_start(e, lo - 1);
	return true;
}
