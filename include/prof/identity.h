/*
 * identity.h - which function of one build is which function of another.
 * Base and head are different builds: cargo names bench binaries
 * deps/NAME-<hash>, CI checks out into different directories, and
 * callgrind files name objects by the runner's paths.  Every command that
 * joins two profiles (prof diff, prof crosscheck, prof callgrind diff,
 * prof report --diff) keys functions through this one module, never by a
 * file name.
 *
 * An identity is:
 *  - the name: demangled (prof_ident_demangle, the one place a demangler
 *    plugs in), without compiler noise: Rust's "::h<16 hex>" hash,
 *    LLVM's ".llvm.<n>"; Rust legacy escapes ($LT$, ..) decoded; a Rust
 *    closure as legacy symbols name it, "{{closure}}", also where v0 or
 *    DWARF numbers it "{closure#N}" (a callgrind file has only the
 *    legacy name: the closures of one function are one identity);
 *  - the clone suffix (".constprop.0", ".isra.0", ".part.0", ".cold",
 *    C++'s " [clone .cold]") kept apart from the name: two builds where only
 *    one has the clone are joined by prof_idset_merge_clones();
 *  - the module role: "" for the program (every file-backed module that is
 *    not a shared object: the main executable, whatever its path), the
 *    soname for shared objects (libc.so.6, from the file name: libfoo.so.1.2
 *    is libfoo.so.1), "[kernel]" and the like as they are;
 *  - the source file relative to the common source root of the clashing
 *    functions, only when one input holds two different functions of the
 *    same name in one module (static functions in two files).
 *
 * Design notes / invariants:
 *  - Ids are dense and stable; equal identities get equal ids in every
 *    input added to one struct prof_idset.
 *  - Overrides (--map-module OLD=NEW, --map-function OLD=NEW) are applied
 *    before the identity is computed, to every input alike.
 *  - Nothing here prints; functions return 0 / -EINVAL or ids.
 */
#ifndef PROF_IDENTITY_H
#define PROF_IDENTITY_H

#include "prof/model.h"
#include "prof/util.h"

/* --- names ---------------------------------------------------------------- */
/* Normalizes raw into name (no hash, no clone suffix) and clone (the
 * suffix, "" if none).  Both buffers are reset first. */
void prof_ident_normalize(const char *raw, struct strbuf *name, struct strbuf *clone);

/* --- modules -------------------------------------------------------------- */
/* True for a shared object's file name: "libc.so.6", "x.so", "ld-linux-x86-64.so.2". */
bool prof_ident_is_shared_object(const char *path);
/* The role of a module: "" for the program, the soname of a shared object,
 * the path itself for pseudo modules ("[kernel]", "[vdso]", "???"). */
void prof_ident_module_role(const char *path, struct strbuf *out);

/* --- the set of identities ------------------------------------------------ */
struct prof_ident {
	uint32_t name, clone, module, file;	/* strs ids: the key */
	uint32_t shown_name;			/* strs id: name + clone ("walk.constprop.0") */
	uint32_t shown_module;			/* strs id: the module as first seen (display) */
};

struct prof_ident_map {
	char *from, *to;
};
typedef VEC(struct prof_ident_map) prof_ident_maps;

struct prof_idset {
	struct strtab strs;
	struct strtab keys;		/* "name\x1fclone\x1fmodule\x1ffile" -> id + 1 */
	VEC(struct prof_ident) ids;
	prof_ident_maps map_modules, map_functions;
};

void prof_idset_init(struct prof_idset *s);
void prof_idset_free(struct prof_idset *s);
/* Adds an override "OLD=NEW": 0, or -EINVAL when spec has no '=' or an
 * empty side. */
int prof_idset_map_module(struct prof_idset *s, const char *spec);
int prof_idset_map_function(struct prof_idset *s, const char *spec);

static inline const char *prof_ident_str(const struct prof_idset *s, uint32_t id)
{
	return strtab_get(&s->strs, id);
}
/* Display name: name plus clone suffix ("walk.constprop.0"). */
static inline const char *prof_ident_name(const struct prof_idset *s, uint32_t id)
{
	return strtab_get(&s->strs, s->ids.v[id].shown_name);
}
static inline const char *prof_ident_module(const struct prof_idset *s, uint32_t id)
{
	return strtab_get(&s->strs, s->ids.v[id].shown_module);
}
static inline const char *prof_ident_file(const struct prof_idset *s, uint32_t id)
{
	return strtab_get(&s->strs, s->ids.v[id].file);
}

/* One function as an input sees it. */
struct prof_ident_rec {
	const char *name;	/* as stored: demangled or mangled, hash or not */
	const char *module;	/* path of its module ("" if none) */
	const char *file;	/* a source file of its code ("" if unknown) */
	uint64_t token;		/* equal for the same function, different for two
				 * functions (entry address, home file); 0: unknown */
};
/*
 * Resolves the functions of ONE input (one recording, one callgrind part):
 * ids[i] is the identity of recs[i].  Names that clash inside the input
 * (same name and module role, different tokens, different source files)
 * are told apart by their file relative to the clashing files' common root.
 */
void prof_idset_add_input(struct prof_idset *s, const struct prof_ident_rec *recs, size_t n,
			  uint32_t *ids);
/* The identity of every frame of a profile (frames with no module get
 * module ""; the token is the module and the entry address).  Returns a
 * malloc'ed array of p->frames.n ids. */
uint32_t *prof_idset_add_profile(struct prof_idset *s, const struct prof_profile *p);

/*
 * Joins clones that only one side has: present[id] has bit 0 when the base
 * side has id, bit 1 when the head side has it.  When a (name, module,
 * file) has exactly one base-only and one head-only identity differing only
 * in the clone suffix (base "walk.constprop.0", head "walk"), canon[head
 * one] = the base one.  Every other canon[id] = id.  canon holds s->ids.n.
 */
void prof_idset_merge_clones(const struct prof_idset *s, const uint8_t *present, uint32_t *canon);
/* The id of name (and of module, a path or role, when not NULL), both
 * normalized like any input; PROF_NONE when absent or, without module,
 * in several modules. */
uint32_t prof_idset_find(const struct prof_idset *s, const char *name, const char *module);

#endif
