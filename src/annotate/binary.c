/*
 * binary.c - a function's machine code for `prof annotate`: the module's
 * binary at its recorded path, used only when its build-id is the
 * recorded one (a rebuilt or hostile file would annotate other code),
 * the ELF symbol's range around the function's entry, disassembled, and
 * each instruction's file:line from that binary's own line table.
 */
#include "prof/annotate.h"
#include "prof/symbol.h"
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define FUNCTION_MAX_BYTES (1u << 20)

void prof_disassembly_free(struct prof_disassembly *d)
{
	for (size_t i = 0; i < d->lines.n; i++)
		free(d->lines.v[i].file);
	VEC_FREE(&d->lines);
	free(d->binary);
	memset(d, 0, sizeof(*d));
}

/* The module's binary if it is the recorded build; NULL with *err set. */
static struct prof_elf *verified_binary(const struct prof_profile *p, uint32_t module, int *err)
{
	const struct prof_module *m = &p->modules.v[module];
	const char *path = prof_str(p, m->path), *want = prof_str(p, m->build_id);
	struct stat st;

	*err = -ESTALE;
	if (!*want || (m->flags & (PROF_MOD_KERNEL | PROF_MOD_VDSO | PROF_MOD_JIT)))
		return NULL;
	*err = -ENOENT;
	if (path[0] != '/' || stat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return NULL;
	struct prof_elf *e = prof_elf_get(path);
	if (!e)
		return NULL;
	*err = -ESTALE;
	return strcmp(prof_elf_build_id(e), want) ? NULL : e;
}

static void add_lines(struct prof_elf *e, struct prof_disassembly *d,
		      const struct prof_insn_vec *insns)
{
	for (size_t i = 0; i < insns->n; i++) {
		struct prof_disasm_line l = { .insn = insns->v[i] };
		prof_elf_source_line(e, l.insn.addr, &l.file, &l.line);
		VEC_PUSH(&d->lines, l);
	}
}

int prof_annotate_disassemble(const struct prof_profile *p, const struct prof_annotation *a,
			      struct prof_disassembly *d)
{
	struct prof_insn_vec insns = { 0 };
	uint64_t start, size, at = a->insns.n ? a->insns.v[0].pc : a->entry;
	GElf_Ehdr eh;
	int err;

	memset(d, 0, sizeof(*d));
	if (a->module >= p->modules.n)
		return -ENOENT;
	struct prof_elf *e = verified_binary(p, a->module, &err);
	if (!e)
		return err;
	if (prof_elf_function_range(e, a->entry ? a->entry : at, &start, &size) < 0)
		return -ENOENT;
	size = size > FUNCTION_MAX_BYTES ? FUNCTION_MAX_BYTES : size;
	uint8_t *code = xmalloc(size);
	if (prof_elf_read_vaddr(e, start, code, size) < 0 || !gelf_getehdr(prof_elf_elf(e), &eh)) {
		free(code);
		return -EIO;
	}
	err = prof_disasm(eh.e_machine, code, size, start, &insns);
	free(code);
	if (!err) {
		d->binary = xstrdup(prof_elf_path(e));
		add_lines(e, d, &insns);
	}
	VEC_FREE(&insns);
	return err;
}
