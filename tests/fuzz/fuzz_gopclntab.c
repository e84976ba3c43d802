/*
 * fuzz_gopclntab.c - libFuzzer target for the .gopclntab reader
 * (src/symbol/gopclntab.c).  The input is the section followed by the
 * funcdata it points at (Go's go:func.*, where the inline trees are) and a
 * uint32 trailer: the funcdata's offset in the input.  The input is mapped
 * at BASE, so 1.16 funcdata addresses and 1.18+ offsets from go:func.* both
 * land inside it, and every read the reader asks for is served from it
 * (bounds-checked here: a read outside is refused, as the ELF glue does).
 * The header's version decides the layout; for each of the first
 * functions of its table, the entry, the middle and the last byte go
 * through the function lookup, the inline frame expansion and the stack
 * pointer delta (pcsp), and every
 * string handed back is read to its end (ASan catches a missing NUL).
 * Seeds: tests/fuzz/corpus/gopclntab/, made by mkseed_gopclntab.py from a
 * Go 1.19 binary in the three layouts 1.16, 1.18 and 1.20.
 */
#include "../../src/symbol/gopclntab-priv.h"
#include "prof/util.h"
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define BASE 0x10000
#define MAX_FUNCS 64

struct input {
	const uint8_t *data;
	size_t size;
};

static int read_input(const void *ctx, uint64_t vaddr, void *buf, size_t len)
{
	const struct input *in = ctx;

	if (vaddr < BASE || vaddr - BASE > in->size || len > in->size - (vaddr - BASE))
		return -1;
	memcpy(buf, in->data + (vaddr - BASE), len);
	return 0;
}

static volatile size_t sink;

static void touch(const char *s)
{
	if (s)
		sink += strlen(s);
}

static void lookup(const struct go_pclntab *t, uint64_t pc)
{
	struct go_frame f[8];
	uint64_t entry, end;
	size_t n = prof_sym_gopclntab_frames(t, pc, f, 8);

	for (size_t i = 0; i < n; i++) {
		touch(f[i].func);
		touch(f[i].file);
		sink += f[i].line + f[i].inlined;
	}
	touch(prof_sym_gopclntab_func(t, pc, &entry, &end));
	uint32_t delta;
	if (prof_sym_gopclntab_sp_delta(t, pc, &delta))
		sink += delta;
	uint8_t flags;
	touch(prof_sym_gopclntab_func_flags(t, pc, &flags));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = { data, size };
	struct go_pcln_image img = {
		.tab = data, .tab_size = size, .tab_vaddr = BASE, .text_start = 0x401000,
		.read = read_input, .ctx = &in,
	};
	struct go_pclntab *t;
	char what[64];

	if (size >= 4) {
		uint32_t off;
		memcpy(&off, data + size - 4, 4);
		img.gofunc = BASE + (uint64_t)off;
	}
	touch(prof_sym_gopclntab_describe(data, size, what, sizeof(what)));
	if (prof_sym_gopclntab_open(&img, &t) < 0)
		return 0;
	sink += prof_sym_gopclntab_version(t) + prof_sym_gopclntab_text_start(t);
	size_t n = MIN(prof_sym_gopclntab_nfunc(t), (size_t)MAX_FUNCS);
	for (size_t i = 0; i < n; i++) {
		uint64_t entry, end;
		if (!prof_sym_gopclntab_func_at(t, i, &entry, &end))
			continue;
		lookup(t, entry);
		lookup(t, entry + (end - entry) / 2);
		lookup(t, end - 1);
	}
	lookup(t, 0);
	lookup(t, UINT64_MAX);
	prof_sym_gopclntab_free(t);
	return 0;
}
