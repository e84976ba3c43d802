/*
 * demangle.c - unit tests for prof_sym_demangle: C++ (Itanium), Rust legacy
 * (hash left out, `$LT$` escapes undone), Rust v0 (generic impls,
 * numbered closures that must stay apart), and plain C names untouched.
 * The mangled names were taken from binaries built on this machine
 * (g++ 12, rustc 1.95 with and without -C symbol-mangling-version=v0).
 */
#include "tap.h"
#include "prof/symbol.h"
#include <stdlib.h>

static void check(const char *mangled, const char *want)
{
	char *got = prof_sym_demangle(mangled);

	if (want)
		is_str(got, want, "%s", mangled);
	else
		ok(got == NULL, "%s is not mangled", mangled);
	free(got);
}

int main(void)
{
#ifndef HAVE_LIBIBERTY
	return printf("1..0 # SKIP prof was built without libiberty (libiberty-dev)\n"), 0;
#endif
	check("_ZNSt6chrono3_V212system_clock3nowEv", "std::chrono::_V2::system_clock::now()");
	check("_ZN52_$LT$r..Weighted$LT$u64$GT$$u20$as$u20$r..Scorer$GT$5score17hf2590a94471d1391E",
	      "<r::Weighted<u64> as r::Scorer>::score");
	check("_ZN3std2rt10lang_start28_$u7b$$u7b$closure$u7d$$u7d$17ha86af84d9cc65291E",
	      "std::rt::lang_start::{{closure}}");
	check("_RNvXCs6GmmlP4bgsG_1rINtB2_8WeightedyENtB2_6Scorer5score",
	      "<r::Weighted<u64> as r::Scorer>::score");
	check("_RNvNtCs2T2YeOPBgHV_7rsknown4work5alpha", "rsknown::work::alpha");
	check("_RNCNvCs123_5hello4main0B3_", "hello::main::{closure#0}");
	check("_RNCNvCs123_5hello4mains_0B3_", "hello::main::{closure#1}");
	check("main", NULL);
	check("_start", NULL);
	check("spin_a", NULL);
	ok(prof_sym_demangle(NULL) == NULL, "NULL is not mangled");
	char *bad = prof_sym_demangle("_ZN3foo");
	ok(bad == NULL, "a truncated name is left alone");
	free(bad);

	/* legacy closures: DWARF's own name tells two closures of main apart */
	char *c0 = prof_sym_rust_closure_name("c::main::{{closure}}", "{closure#0}");
	char *c1 = prof_sym_rust_closure_name("c::main::{{closure}}", "{closure#1}");
	char *g = prof_sym_rust_closure_name("std::rt::lang_start::{{closure}}", "{closure#0}<()>");
	is_str(c0, "c::main::{closure#0}", "legacy closure #0 by its DWARF name");
	is_str(c1, "c::main::{closure#1}", "legacy closure #1 by its DWARF name");
	is_str(g, "std::rt::lang_start::{closure#0}", "generic arguments stay out");
	ok(!prof_sym_rust_closure_name("c::main", "main"), "not a closure: left alone");
	ok(!prof_sym_rust_closure_name("c::main::{{closure}}", "main"), "no closure index: left alone");
	ok(!prof_sym_rust_closure_name(NULL, "{closure#0}"), "no demangled name: left alone");
	free(c0);
	free(c1);
	free(g);
	return done_testing();
}
