/*
 * disasm.c - the disassembler backend of `prof annotate`: capstone.
 *
 * Why capstone and not binutils' libopcodes: capstone has a small, stable
 * C API (cs_open/cs_disasm/cs_close) that returns each instruction as
 * mnemonic + operand strings, is maintained and packaged by Debian
 * (libcapstone-dev), and is BSD-licensed.  libopcodes has no stable API
 * (its init_disassemble_info signature changed in binutils 2.39), prints
 * through a fprintf callback, and ties prof to the installed binutils
 * version.  Built without capstone (no HAVE_CAPSTONE: -ENOTSUP), or
 * where its library cannot be loaded (-ELIBACC), annotate prints per-line
 * costs and the sampled addresses without instruction text, and says why.
 *
 * Why capstone is opened here, at the first disassembly, and not linked:
 * its 77,000 relative relocations were 95% of those the dynamic
 * loader made at the start of every prof command (LD_DEBUG=statistics),
 * a few milliseconds each time, for a library only annotate uses.  The
 * soname is the one of the header built against (libcapstone.so.4 for
 * capstone 4.x, .5 for 5.x), so the types below are the library's.
 */
#include "prof/annotate.h"
#include <elf.h>
#include <errno.h>
#include <stdio.h>

#ifdef HAVE_CAPSTONE
#include <capstone.h>
#include <dlfcn.h>
#include <pthread.h>

#define CS_STR(x) #x
#define CS_SONAME_OF(major) "libcapstone.so." CS_STR(major)

static struct {
	__typeof__(&cs_version) version;
	__typeof__(&cs_open) open;
	__typeof__(&cs_option) option;
	__typeof__(&cs_disasm) disasm;
	__typeof__(&cs_free) free;
	__typeof__(&cs_close) close;
} cs;
static int cs_ready;
static pthread_once_t cs_once = PTHREAD_ONCE_INIT;

static void load_capstone(void)
{
	void *lib = dlopen(CS_SONAME_OF(CS_API_MAJOR), RTLD_NOW | RTLD_LOCAL);

	if (!lib)
		return;
	cs.version = (__typeof__(cs.version))dlsym(lib, "cs_version");
	cs.open = (__typeof__(cs.open))dlsym(lib, "cs_open");
	cs.option = (__typeof__(cs.option))dlsym(lib, "cs_option");
	cs.disasm = (__typeof__(cs.disasm))dlsym(lib, "cs_disasm");
	cs.free = (__typeof__(cs.free))dlsym(lib, "cs_free");
	cs.close = (__typeof__(cs.close))dlsym(lib, "cs_close");
	cs_ready = cs.version && cs.open && cs.option && cs.disasm && cs.free && cs.close;
}

/* Whether capstone's library is loaded (loading it the first time). */
static int capstone_loaded(void)
{
	pthread_once(&cs_once, load_capstone);
	return cs_ready;
}

const char *prof_disasm_backend(void)
{
	static char name[32];
	int major = 0, minor = 0;

	if (!capstone_loaded())
		return NULL;
	cs.version(&major, &minor);
	snprintf(name, sizeof(name), "capstone %d.%d", major, minor);
	return name;
}

int prof_disasm(unsigned e_machine, const uint8_t *code, size_t len, uint64_t vaddr,
		struct prof_insn_vec *out)
{
	csh handle;
	cs_insn *insn;
	cs_err err;

	if (!capstone_loaded())
		return -ELIBACC;
	if (e_machine == EM_X86_64)
		err = cs.open(CS_ARCH_X86, CS_MODE_64, &handle);
	else if (e_machine == EM_AARCH64)
		err = cs.open(CS_ARCH_ARM64, CS_MODE_ARM, &handle);
	else if (e_machine == EM_386)
		err = cs.open(CS_ARCH_X86, CS_MODE_32, &handle);
	else
		return -ENOTSUP;
	if (err != CS_ERR_OK)
		return -ENOTSUP;
	/* SKIPDATA: a byte that decodes to nothing (padding, data in text)
	 * becomes a ".byte" line instead of ending the listing there. */
	cs.option(handle, CS_OPT_SKIPDATA, CS_OPT_ON);
	size_t n = cs.disasm(handle, code, len, vaddr, 0, &insn);
	for (size_t i = 0; i < n; i++) {
		struct prof_insn in = { .addr = insn[i].address, .size = insn[i].size };
		snprintf(in.text, sizeof(in.text), "%s%s%s", insn[i].mnemonic,
			 insn[i].op_str[0] ? " " : "", insn[i].op_str);
		VEC_PUSH(out, in);
	}
	if (n)
		cs.free(insn, n);
	cs.close(&handle);
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
