/*
 * disasm.c - the disassembler backend of `prof annotate`: capstone.
 *
 * Why capstone and not binutils' libopcodes: capstone has a small, stable
 * C API (cs_open/cs_disasm/cs_close) that returns each instruction as
 * mnemonic + operand strings, is maintained and packaged by Debian
 * (libcapstone-dev), and is BSD-licensed.  libopcodes has no stable API
 * (its init_disassemble_info signature changed in binutils 2.39), prints
 * through a fprintf callback, and ties prof to the installed binutils
 * version.  Built without capstone (no HAVE_CAPSTONE), annotate prints
 * per-line costs and the sampled addresses without instruction text.
 */
#include "prof/annotate.h"
#include <elf.h>
#include <errno.h>
#include <stdio.h>

#ifdef HAVE_CAPSTONE
#include <capstone.h>

const char *prof_disasm_backend(void)
{
	static char name[32];
	int major = 0, minor = 0;

	cs_version(&major, &minor);
	snprintf(name, sizeof(name), "capstone %d.%d", major, minor);
	return name;
}

int prof_disasm(unsigned e_machine, const uint8_t *code, size_t len, uint64_t vaddr,
		struct prof_insn_vec *out)
{
	csh handle;
	cs_insn *insn;
	cs_err err;

	if (e_machine == EM_X86_64)
		err = cs_open(CS_ARCH_X86, CS_MODE_64, &handle);
	else if (e_machine == EM_AARCH64)
		err = cs_open(CS_ARCH_ARM64, CS_MODE_ARM, &handle);
	else if (e_machine == EM_386)
		err = cs_open(CS_ARCH_X86, CS_MODE_32, &handle);
	else
		return -ENOTSUP;
	if (err != CS_ERR_OK)
		return -ENOTSUP;
	/* SKIPDATA: a byte that decodes to nothing (padding, data in text)
	 * becomes a ".byte" line instead of ending the listing there. */
	cs_option(handle, CS_OPT_SKIPDATA, CS_OPT_ON);
	size_t n = cs_disasm(handle, code, len, vaddr, 0, &insn);
	for (size_t i = 0; i < n; i++) {
		struct prof_insn in = { .addr = insn[i].address, .size = insn[i].size };
		snprintf(in.text, sizeof(in.text), "%s%s%s", insn[i].mnemonic,
			 insn[i].op_str[0] ? " " : "", insn[i].op_str);
		VEC_PUSH(out, in);
	}
	if (n)
		cs_free(insn, n);
	cs_close(&handle);
	return n || !len ? 0 : -EINVAL;
}

#else

const char *prof_disasm_backend(void)
{
	return NULL;
}

int prof_disasm(unsigned e_machine, const uint8_t *code, size_t len, uint64_t vaddr,
		struct prof_insn_vec *out)
{
	return -ENOTSUP;
}

#endif
