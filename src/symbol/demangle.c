/*
 * demangle.c - the display name of a mangled symbol: C++ (Itanium `_Z...`),
 * Rust legacy (`_ZN...17h<16 hex>E` with `$LT$`/`$u20$` escapes) and Rust v0
 * (`_R...`), all through Debian's libiberty `cplus_demangle`, the demangler
 * binutils and perf use.  Found once by the Makefile (HAVE_LIBIBERTY);
 * without it names stay as the binary spells them.
 *
 * Design notes:
 *  - DMGL_AUTO, not DMGL_RUST: with the Rust style alone libiberty gives up
 *    on C++ names; the auto style tries Rust first (legacy Rust names are
 *    valid C++ names too) and then the Itanium ABI.
 *  - libiberty already leaves out a legacy Rust name's `::h<16 hex>` hash
 *    (as perf and samply show it).  A name demangled elsewhere (DWARF's
 *    DW_AT_name of a Rust function never has it) is left alone.
 *  - Only names that look mangled are handed over: libiberty reads plain C
 *    names such as "f" as mangled type names in some styles.
 */
#include "prof/symbol.h"
#include <stdlib.h>
#include <string.h>
#ifdef HAVE_LIBIBERTY
#include <libiberty/demangle.h>
#endif

/* Mangled-name prefixes: Itanium C++ (and Rust legacy), Rust v0. */
static bool looks_mangled(const char *name)
{
	return !strncmp(name, "_Z", 2) || !strncmp(name, "__Z", 3) || !strncmp(name, "_R", 2);
}

char *prof_demangle(const char *name)
{
	if (!name || !looks_mangled(name))
		return NULL;
#ifdef HAVE_LIBIBERTY
	return cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
#else
	return NULL;
#endif
}
