/*
 * annotate.h - one function's costs per source line and per instruction
 * (`prof annotate`, and the HTML report's source view), plus the two
 * things that needs from outside the profile: source text, read only
 * where the user allows, and a disassembler.
 *
 * What is counted: a sample belongs to function F's code when its leaf's
 * physical (non-inlined) frame is F: F's own self samples plus those of
 * functions inlined into F, which show under their own source lines.  So
 * the per-line self costs and the per-instruction costs both add up to
 * that number (in_code); self_fn is F's self as the function table counts
 * it (leaf frame named F, inlined copies included).  Total per line counts
 * each sample once per line of F's frames on its stack.
 */
#ifndef PROF_ANNOTATE_H
#define PROF_ANNOTATE_H

#include "prof/model.h"

struct prof_annotate_line {
	uint32_t file, line;		/* string id, line number (0: unknown) */
	uint32_t inlined_func;		/* string id of the inlined function, 0 if F's own */
	uint64_t self, total;
};

struct prof_annotate_insn {
	uint64_t pc;			/* file vaddr */
	uint64_t self;
	uint32_t file, line;		/* from the sample's frame */
};

struct prof_annotation {
	uint32_t func;			/* string id */
	uint32_t module;		/* module id */
	uint64_t entry;			/* file vaddr of F's entry (frame addr) */
	uint64_t self_fn, in_code, total, grand_total;
	uint64_t no_pc;			/* in_code samples without an instruction address */
	VEC(struct prof_annotate_line) lines;	/* sorted by file, line */
	VEC(struct prof_annotate_insn) insns;	/* sorted by pc */
};

/*
 * Costs of the function named func under the view (metric and filters).
 * When several modules have a function of that name, the one with the most
 * samples in its code wins.  0, or -ENOENT when no sample is in func.
 */
int prof_annotate_build(const struct prof_profile *p, const struct prof_view *v,
			const char *func, struct prof_annotation *a);
void prof_annotation_free(struct prof_annotation *a);

/* --- source files (src/annotate/source.c) ---------------------------------
 * A prof.data file can come from anyone, and the paths inside it are its
 * author's choice: a report must never embed /etc/shadow because a frame
 * says so.  A source file is read only when
 *  - the module's binary, at its recorded path with the recorded build-id,
 *    names the file in its own line table (prof_annotate_disassemble
 *    verifies the binary; prof_source_allow_disassembly adds the paths), or
 *  - it lies under a root the user named (--source-root DIR): the recorded
 *    path's trailing components are looked up below the root, and the
 *    file's real path (symlinks resolved) must stay inside the root.
 * Paths with a ".." component are refused; only regular files up to
 * 8 MiB are read, opened with O_NOFOLLOW.
 */
struct prof_disassembly;
struct prof_source_policy {
	const char *const *roots;	/* --source-root DIRs */
	size_t nroots;
	VEC(char *) build_paths;	/* paths the verified binaries' line tables name */
};
void prof_source_policy_free(struct prof_source_policy *sp);
void prof_source_allow_disassembly(struct prof_source_policy *sp,
				   const struct prof_disassembly *d);
/* The text of a recorded source path if the policy allows it: malloc'd,
 * NUL-terminated; NULL with errno set (EPERM: not allowed). */
char *prof_source_read(const struct prof_source_policy *sp, const char *recorded, size_t *len);

/* --- disassembly (src/annotate/disasm.c, capstone when built with it) ----- */
struct prof_insn {
	uint64_t addr;
	uint32_t size;
	char text[192];		/* "mov rax, qword ptr [rbx + 8]" */
};
struct prof_insn_vec { struct prof_insn *v; size_t n, cap; };
/* The backend's name ("capstone 4.0"), or NULL when built without one. */
const char *prof_disasm_backend(void);
/* Disassembles code (len bytes at file vaddr) for ELF machine e_machine
 * into out (appended).  0, -ENOTSUP (no backend / machine), -EINVAL. */
int prof_disasm(unsigned e_machine, const uint8_t *code, size_t len, uint64_t vaddr,
		struct prof_insn_vec *out);

/*
 * The function's machine code from its module's binary, verified by
 * build-id (the same check as the source policy): the ELF symbol's range
 * around a->entry, disassembled, each instruction with its line.  0 or
 * -errno (-ESTALE: build-id mismatch, -ENOTSUP: no disassembler).
 */
struct prof_disasm_line {
	struct prof_insn insn;
	char *file;			/* line table's, malloc'd; NULL if unknown */
	uint32_t line;
};
struct prof_disassembly {
	char *binary;			/* the file read */
	VEC(struct prof_disasm_line) lines;
};
int prof_annotate_disassemble(const struct prof_profile *p, const struct prof_annotation *a,
			      struct prof_disassembly *d);
void prof_disassembly_free(struct prof_disassembly *d);

/* --- text output (src/annotate/print.c) ----------------------------------- */
struct prof_annotate_opts {
	struct prof_source_policy *sources;	/* gains the verified binary's paths */
	bool no_source, no_asm;
};
int prof_annotate_print(FILE *f, const struct prof_profile *p, const struct prof_view *v,
			const struct prof_annotation *a, const struct prof_annotate_opts *o);

#endif
