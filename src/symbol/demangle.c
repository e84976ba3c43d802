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
 *  - Rust's legacy scheme names every closure of f "f::{{closure}}": only
 *    the dropped hash told them apart, so two closures would share a row.
 *    DWARF's DW_AT_name of the closure says which it is ("{closure#1}",
 *    v0's spelling), and prof_sym_rust_closure_name puts that in.
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

char *prof_sym_demangle(const char *name)
{
	if (!name || !looks_mangled(name))
		return NULL;
#ifdef HAVE_LIBIBERTY
	return cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
#else
	return NULL;
#endif
}

char *prof_sym_rust_closure_name(const char *demangled, const char *dwarf_name)
{
	static const char legacy[] = "{{closure}}", v0[] = "{closure#";
	size_t n = demangled ? strlen(demangled) : 0, k = sizeof(legacy) - 1;

	if (n < k || strcmp(demangled + n - k, legacy) || !dwarf_name ||
	    strncmp(dwarf_name, v0, sizeof(v0) - 1))
		return NULL;
	const char *end = strchr(dwarf_name, '}');	/* "<()>" generic args stay out */
	size_t keep = n - k, add = (size_t)(end - dwarf_name) + 1;
	char *out = malloc(keep + add + 1);

	if (!out)
		return NULL;
	memcpy(out, demangled, keep);
	memcpy(out + keep, dwarf_name, add);
	out[keep + add] = '\0';
	return out;
}
