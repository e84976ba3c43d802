/*
 * identity.c - unit tests for function identity across builds
 * (src/model/identity.c): name normalization of real symbol forms (Rust
 * legacy mangled and demangled with their hashes, .llvm.N, GCC clones,
 * C++ [clone] suffixes), module roles, clashing statics told apart by
 * file, overrides, and the join of clones only one build has.  The Rust
 * symbols are the ones rustc 1.95 wrote into two builds of one source
 * with different -C metadata.
 */
#include "prof/identity.h"
#include "tap.h"

static void check_norm(const char *raw, const char *want_name, const char *want_clone)
{
	struct strbuf name = STRBUF_INIT, clone = STRBUF_INIT;

	prof_ident_normalize(raw, &name, &clone);
	is_str(sb_str(&name), want_name, "name of %s", raw);
	is_str(sb_str(&clone), want_clone, "clone of %s", raw);
	sb_release(&name);
	sb_release(&clone);
}

static void test_names(void)
{
	/* the same function of two builds (-C metadata=aaa / bbb) */
	check_norm("_ZN2rs3hot17h6eed20691f3c164eE", "rs::hot", "");
	check_norm("_ZN2rs3hot17h32d6ab2f9697b066E", "rs::hot", "");
	check_norm("rs::hot::h6eed20691f3c164e", "rs::hot", "");
	check_norm("core::hint::black_box::hd8895f54d9b826dc", "core::hint::black_box", "");
	/* legacy escapes, as __cxa_demangle leaves them and as libiberty decodes them */
	check_norm("_$LT$alloc..string..String$u20$as$u20$core..fmt..Display$GT$::fmt::h0123456789abcdef",
		   "<alloc::string::String as core::fmt::Display>::fmt", "");
	check_norm("_ZN60_$LT$alloc..string..String$u20$as$u20$core..fmt..Display$GT$3fmt17h0123456789abcdefE",
		   "<alloc::string::String as core::fmt::Display>::fmt", "");
	check_norm("<alloc::string::String as core::fmt::Display>::fmt",
		   "<alloc::string::String as core::fmt::Display>::fmt", "");
	/* Rust v0: std is precompiled with it */
	check_norm("_RNvNtCsjrHSEGnQ3l9_3std2rt19lang_start_internal", "std::rt::lang_start_internal", "");
	check_norm("_RNvNtCs2T2YeOPBgHV_7rsknown4work5alpha", "rsknown::work::alpha", "");
	/* closures: one key whether numbered (v0, DWARF) or not (legacy symbols,
	 * as callgrind files name them): both sides of a cross-check must join */
	check_norm("_RNCNvCs1234_3app4main0B3_", "app::main::{{closure}}", "");
	check_norm("_RNCNvCs1234_3app4mains_0B3_", "app::main::{{closure}}", "");
	check_norm("app::main::{closure#1}::{closure#0}", "app::main::{{closure}}::{{closure}}", "");
	check_norm("_ZN3app4main28_$u7b$$u7b$closure$u7d$$u7d$17h0123456789abcdefE",
		   "app::main::{{closure}}", "");
	check_norm("_RINvCs1234_3app4makeReE", "app::make::<&str>", "");	/* v0 generics, by libiberty */
	check_norm("_RNvCs1234_3app4main.llvm.42", "app::main", "");
	/* ThinLTO and GCC */
	check_norm("_ZN4core3fmt5write17h1111111111111111E.llvm.1234567890123",
		   "core::fmt::write", "");
	check_norm("parse_line.llvm.998877", "parse_line", "");
	check_norm("walk.constprop.0", "walk", ".constprop.0");
	check_norm("walk.constprop.0.isra.0", "walk", ".constprop.0.isra.0");
	check_norm("count_words.cold", "count_words", ".cold");
	check_norm("foo(int) [clone .cold]", "foo(int)", ".cold");
	check_norm("__libc_start_main@@GLIBC_2.34", "__libc_start_main", "");
	check_norm("stat@GLIBC_2.2.5", "stat", "");
	/* things that only look like it */
	check_norm("operator@", "operator@", "");
	check_norm("fib'2", "fib'2", "");
	check_norm("_ZN3foo3barEv", "foo::bar()", "");	/* C++ demangled too */
	check_norm("std::vector<int>::push_back(int const&)", "std::vector<int>::push_back(int const&)", "");
	check_norm("file.c", "file.c", "");
	check_norm("a::hnothex0000000000", "a::hnothex0000000000", "");
	check_norm("", "", "");
	/* Python frames: the def line moves with edits above it */
	check_norm("Thread.run (threading.py:971)", "Thread.run", "");
	check_norm("<module> (app.py:1)", "<module>", "");
	check_norm("f (notpython.c:3)", "f (notpython.c:3)", "");
	check_norm("g (x.py:12a)", "g (x.py:12a)", "");
}

static void check_role(const char *path, const char *want)
{
	struct strbuf sb = STRBUF_INIT;

	prof_ident_module_role(path, &sb);
	is_str(sb_str(&sb), want, "role of '%s'", path);
	sb_release(&sb);
}

static void test_modules(void)
{
	check_role("/tmp/ci/base/target/release/deps/regress-3f9a1c2b", "");
	check_role("/home/runner/work/x/bench-head", "");
	check_role("/usr/lib/x86_64-linux-gnu/libc.so.6", "libc.so.6");
	check_role("/usr/lib/x86_64-linux-gnu/libstdc++.so.6.0.30", "libstdc++.so.6");
	check_role("/opt/b/libwl.so", "libwl.so");
	check_role("/lib64/ld-linux-x86-64.so.2", "ld-linux-x86-64.so.2");
	check_role("/usr/bin/python3.11", "");
	check_role("[kernel]", "[kernel]");
	check_role("???", "???");
	check_role("", "[none]");
	check_role("/ci/base/app/models.py", "models.py");
	ok(!prof_ident_is_shared_object("/src/so.something"), "so.something is not a shared object");
}

/* Python functions of two checkouts: qualname + module file, whatever the
 * checkout's path and the def line; two __init__.py apart by their path. */
static void test_python_join(void)
{
	struct prof_idset s;
	uint32_t a[3], b[3];
	const struct prof_ident_rec base[] = {
		{ "work (models.py:10)", "/ci/base/app/models.py", "/ci/base/app/models.py", 1 << 20 },
		{ "setup (__init__.py:3)", "/ci/base/app/__init__.py", "/ci/base/app/__init__.py", 2 << 20 },
		{ "setup (__init__.py:5)", "/ci/base/app/db/__init__.py", "/ci/base/app/db/__init__.py", 3 << 20 },
	};
	const struct prof_ident_rec head[] = {
		{ "setup (__init__.py:5)", "/w/head/app/db/__init__.py", "/w/head/app/db/__init__.py", 1 << 20 },
		{ "work (models.py:14)", "/w/head/app/models.py", "/w/head/app/models.py", 2 << 20 },
		{ "setup (__init__.py:3)", "/w/head/app/__init__.py", "/w/head/app/__init__.py", 3 << 20 },
	};

	prof_idset_init(&s);
	prof_idset_add_input(&s, base, 3, a);
	prof_idset_add_input(&s, head, 3, b);
	is_u64(a[0], b[1], "work of models.py: one identity across checkouts and def lines");
	is_str(prof_ident_name(&s, a[0]), "work", "shown by its qualname");
	is_str(prof_ident_module(&s, a[0]), "models.py", "its module is the .py file");
	is_u64(a[1], b[2], "setup of app/__init__.py joins");
	is_u64(a[2], b[0], "setup of app/db/__init__.py joins");
	ok(a[1] != a[2], "the two __init__.py setups stay apart");
	prof_idset_free(&s);
}

/* Two builds of different names, a static clash and a clone only one has. */
static void test_join(void)
{
	struct prof_idset s;
	uint32_t a[5], b[5], c[2];
	const struct prof_ident_rec base[] = {
		{ "helper", "/ci/base/deps/app-3f9a", "/ci/base/src/a.c", 0x100 },
		{ "helper", "/ci/base/deps/app-3f9a", "/ci/base/src/util/b.c", 0x200 },
		{ "_ZN3app4main17h1111111111111111E", "/ci/base/deps/app-3f9a", "/ci/base/src/main.rs", 0x300 },
		{ "memcpy", "/usr/lib/x86_64-linux-gnu/libc.so.6", "", 0x50 },
		{ "walk.constprop.0", "/ci/base/deps/app-3f9a", "/ci/base/src/a.c", 0x400 },
	};
	const struct prof_ident_rec head[] = {
		{ "helper", "/w/head/app", "/w/head/src/util/b.c", 0x220 },
		{ "helper", "/w/head/app", "/w/head/src/a.c", 0x120 },
		{ "app::main::h2222222222222222", "/w/head/app", "/w/head/src/main.rs", 0x330 },
		{ "memcpy", "/lib/x86_64-linux-gnu/libc.so.6", "", 0x60 },
		{ "walk", "/w/head/app", "/w/head/src/a.c", 0x440 },
	};

	prof_idset_init(&s);
	prof_idset_add_input(&s, base, 5, a);
	prof_idset_add_input(&s, head, 5, b);
	is_u64(a[0], b[1], "static helper of a.c: same identity in both builds");
	is_u64(a[1], b[0], "static helper of util/b.c: same identity in both builds");
	ok(a[0] != a[1], "the two helpers stay apart");
	is_str(prof_ident_file(&s, a[1]), "util/b.c", "told apart by the file under the common root");
	is_u64(a[2], b[2], "Rust main: mangled and demangled, two hashes, one identity");
	is_u64(a[3], b[3], "libc by soname, not path");
	const struct prof_ident_rec alias[] = {
		{ "snprintf", "/usr/lib/x86_64-linux-gnu/libc.so.6", "", 0x70 },
		{ "__snprintf", "/lib/x86_64-linux-gnu/libc.so.6", "", 0x70 },
		{ "__helper", "/x/app", "", 0x70 },
		{ "helper2", "/x/app", "", 0x80 },
	};
	uint32_t al[4];
	prof_idset_add_input(&s, alias, 1, &al[0]);
	prof_idset_add_input(&s, alias + 1, 3, &al[1]);
	is_u64(al[0], al[1], "a library's aliases (snprintf, __snprintf) are one function");
	is_str(prof_ident_name(&s, al[0]), "snprintf", "shown as first seen");
	ok(prof_idset_find(&s, "__helper", NULL) == al[2] && al[2] != al[3],
	   "the program's own underscores stay");
	is_str(prof_ident_module(&s, a[0]), "app-3f9a", "the program is shown by its first name");
	ok(a[4] != b[4], "walk.constprop.0 and walk: two identities before the clone join");

	uint8_t present[16] = { 0 };
	uint32_t canon[16];
	for (int i = 0; i < 5; i++) {
		present[a[i]] |= 1;
		present[b[i]] |= 2;
	}
	prof_idset_merge_clones(&s, present, canon);
	is_u64(canon[b[4]], a[4], "clone only in base joins the plain head function");
	is_u64(canon[a[0]], a[0], "functions in both builds are their own canon");

	/* a clone both builds have stays apart */
	const struct prof_ident_rec both[] = {
		{ "walk", "/w/head/app", "/w/head/src/a.c", 0x440 },
		{ "walk.constprop.0", "/w/head/app", "/w/head/src/a.c", 0x480 },
	};
	prof_idset_add_input(&s, both, 2, c);
	present[c[0]] |= 1;
	present[c[1]] |= 1;
	prof_idset_merge_clones(&s, present, canon);
	is_u64(canon[b[4]], b[4], "walk in both builds: no clone join");

	/* overrides */
	struct prof_idset m;
	uint32_t x[2];
	const struct prof_ident_rec renamed[] = {
		{ "parse_v1", "/a/libold.so.1", "", 1 },
		{ "parse_v2", "/b/libnew.so.1", "", 2 },
	};
	prof_idset_init(&m);
	ok(prof_idset_map_module(&m, "libold.so.1=libnew.so.1") == 0, "map-module parses");
	ok(prof_idset_map_function(&m, "parse_v1=parse_v2") == 0, "map-function parses");
	ok(prof_idset_map_function(&m, "nonsense") < 0 && prof_idset_map_function(&m, "=x") < 0,
	   "a map without OLD=NEW is refused");
	prof_idset_add_input(&m, renamed, 1, &x[0]);
	prof_idset_add_input(&m, renamed + 1, 1, &x[1]);
	is_u64(x[0], x[1], "renamed function in a renamed library: joined by the overrides");
	prof_idset_free(&m);
	prof_idset_free(&s);
	test_python_join();
}

int main(void)
{
	test_names();
	test_modules();
	test_join();
	return done_testing();
}
