/*
 * fuzz_elf.c - libFuzzer target for prof's ELF/DWARF handling of corrupt
 * binaries: the input is written to a private temp file, opened with
 * prof_elf_get (libelf headers, PT_LOADs, build-id), mapped into a fake
 * address space, and then a few addresses (entry point, every PT_LOAD
 * start and middle) go through the symbolizer (.symtab/.dynsym, DWARF
 * subprograms, inline chains, file:line, debuglink/build-id lookup) and
 * the libdw unwinder (.eh_frame / .debug_frame CFI) with a small stack
 * made from the input's own bytes.  Seeds: tests/fuzz/corpus/elf/ (a tiny
 * program with DWARF, the same stripped, its split .debug file, a shared
 * library).
 *
 * Design notes: prof_elf_get caches by (dev, inode, mtime), so the temp
 * file is unlinked and the cache freed after every input; otherwise a
 * rewritten file with an unchanged mtime would hit the stale cache entry.
 */
#include "prof/replay.h"
#include "prof/symbol.h"
#include "prof/unwind.h"
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char tmp_path[64];

static int write_input(const uint8_t *data, size_t size)
{
	int fd;

	snprintf(tmp_path, sizeof(tmp_path), "/tmp/fuzz_elf.%d.XXXXXX", (int)getpid());
	fd = mkstemp(tmp_path);
	if (fd < 0)
		return -1;
	if (write_all(fd, data, size) < 0) {
		close(fd);
		unlink(tmp_path);
		return -1;
	}
	close(fd);
	return 0;
}

/* Where the fake process maps the file, and the pcs worth resolving. */
#define MAP_BASE 0x555555554000ULL
#define MAP_LEN  (1ULL << 24)

static size_t pick_pcs(const uint8_t *data, size_t size, uint64_t *pcs, size_t max)
{
	size_t n = 0;
	Elf64_Ehdr eh;

	if (size < sizeof(eh))
		return 0;
	memcpy(&eh, data, sizeof(eh));
	if (eh.e_entry < MAP_LEN)
		pcs[n++] = MAP_BASE + eh.e_entry;
	for (size_t i = 0; i < eh.e_phnum && n + 2 <= max; i++) {
		Elf64_Phdr ph;
		uint64_t off = eh.e_phoff + i * (uint64_t)sizeof(ph);

		if (off > size || size - off < sizeof(ph))
			break;
		memcpy(&ph, data + off, sizeof(ph));
		if (ph.p_type != PT_LOAD || ph.p_vaddr >= MAP_LEN)
			continue;
		pcs[n++] = MAP_BASE + ph.p_vaddr;
		pcs[n++] = MAP_BASE + ph.p_vaddr + (ph.p_memsz % MAP_LEN) / 2;
	}
	return n;
}

static void unwind_from(struct prof_addrspace *as, uint64_t pc, const uint8_t *data, size_t size)
{
	struct prof_unwinder *u = prof_unwinder_new(PROF_UNWIND_LIBDW);
	struct prof_user_regs regs = { { 0 } };
	uint8_t stack[256];
	struct prof_ustack us = { stack, sizeof(stack) };
	uint64_t out[16];
	struct prof_unwind_result res;

	if (!u)
		return;
	/* The "stack" is the input's tail: return addresses land wherever. */
	memset(stack, 0, sizeof(stack));
	memcpy(stack, data + size - (size < sizeof(stack) ? size : sizeof(stack)),
	       size < sizeof(stack) ? size : sizeof(stack));
	regs.r[PERF_REG_X86_IP] = pc;
	regs.r[PERF_REG_X86_SP] = 0x7ffffff00000ULL;
	regs.r[PERF_REG_X86_BP] = 0x7ffffff00000ULL + 64;
	prof_unwind(u, as, 4242, &regs, &us, out, 16, &res);
	prof_unwinder_free(u);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int quiet;
	struct prof_profile p;
	struct prof_symbolizer *sym;
	struct prof_addrspace *as;
	struct prof_elf *e;
	uint64_t pcs[12];
	size_t npcs;

	if (!quiet) {
		prof_quiet = 1;
		quiet = 1;
	}
	if (write_input(data, size) < 0)
		return 0;
	e = prof_elf_get(tmp_path);
	if (e) {
		uint8_t buf[64];
		volatile size_t sink = strlen(prof_elf_build_id(e));

		sink += (size_t)prof_elf_bias(e, MAP_BASE, 0, PROT_READ | PROT_EXEC);
		if (prof_elf_read_vaddr(e, 0, buf, sizeof(buf)) == 0)
			sink += buf[0];
		(void)sink;
	}

	prof_profile_init(&p);
	sym = prof_symbolizer_new(&p);
	as = prof_addrspace_new(4242);
	prof_addrspace_map(as, MAP_BASE, MAP_LEN, 0, tmp_path, PROT_READ | PROT_EXEC);
	npcs = pick_pcs(data, size, pcs, sizeof(pcs) / sizeof(pcs[0]));
	for (size_t i = 0; i < npcs; i++) {
		uint32_t frames[64];

		prof_symbolize_user(sym, as, pcs[i], false, frames, 64);
		prof_symbolize_user(sym, as, pcs[i] + 1, true, frames, 64);
	}
	if (npcs)
		unwind_from(as, pcs[0], data, size);
	prof_addrspace_free(as);
	prof_symbolizer_free(sym);
	prof_profile_free(&p);
	unlink(tmp_path);
	prof_elf_cache_free();
	return 0;
}
