/*
 * symbol.c - unit tests for symbolization on real binaries: inline chains
 * with file:line from this test's own DWARF, the vdso, PIE load bias
 * (checked against dl_iterate_phdr), ET_EXEC bias, libc build-id and its
 * libc6-dbg debug file, a stripped copy giving "module+0xOFF", a stripped
 * copy with a .gnu_debuglink debug file, a deleted
 * shared object reached through map_files, kallsyms, perf-PID.map JIT
 * symbols, [anon]/[unknown], and the address-space bookkeeping (cut,
 * split, fork, clear, find).
 */
#include "tap.h"
#include "capture.h"
#include "prof/replay.h"
#include "prof/symbol.h"
#include "../../src/symbol/nspath-priv.h"
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define NOINL __attribute__((noinline, noclone))

static struct prof_profile prof;
static struct prof_symbolizer *sym;
static struct prof_addrspace *self_as;
static struct prof_user_regs inl_regs;
static int inl_line, call_line;

static inline __attribute__((always_inline)) void inlined_leaf(void)
{
	CAPTURE_REGS(&inl_regs); inl_line = __LINE__;
}

NOINL void outer_of_inline(void)
{
	call_line = __LINE__; inlined_leaf();
	__asm__ volatile("" ::: "memory");
}

static const struct prof_frame *frame(uint32_t id) { return &prof.frames.v[id]; }
static const char *fname(uint32_t id) { return prof_str(&prof, frame(id)->func); }

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && !strcmp(s + a - b, suffix);
}

static void test_inline(void)
{
	uint32_t ids[8];

	outer_of_inline();
	size_t n = prof_symbolize_user(sym, self_as, inl_regs.r[PERF_REG_X86_IP], false, ids, 8);
	is_u64(n, 2, "inlined pc gives two frames");
	if (n < 2)
		return;
	is_str(fname(ids[0]), "inlined_leaf", "innermost frame is the inlined function");
	ok(frame(ids[0])->inlined == 1, "and is marked inlined");
	is_u64(frame(ids[0])->line, inl_line, "inlined frame has its own line");
	ok(ends_with(prof_str(&prof, frame(ids[0])->file), "tests/unit/symbol.c"), "inlined frame file: %s",
	   prof_str(&prof, frame(ids[0])->file));
	is_str(fname(ids[1]), "outer_of_inline", "outer frame is the real function");
	ok(frame(ids[1])->inlined == 0, "outer frame not inlined");
	is_u64(frame(ids[1])->line, call_line, "outer frame line is the call site");
	size_t before = prof.frames.n;
	uint32_t again[8];
	size_t n2 = prof_symbolize_user(sym, self_as, inl_regs.r[PERF_REG_X86_IP], false, again, 8);
	ok(n2 == n && again[0] == ids[0] && again[1] == ids[1] && prof.frames.n == before,
	   "second lookup hits the cache, same frames");
	is_u64(prof_symbolize_user(sym, self_as, inl_regs.r[PERF_REG_X86_IP], false, again, 1), 1,
	       "max bounds the chain");
}

static int find_main_bias(struct dl_phdr_info *info, size_t size, void *arg)
{
	*(uint64_t *)arg = info->dlpi_addr;
	return 1;	/* the first object is the main program */
}

static void test_bias(void)
{
	uint64_t want = 0;
	const struct prof_mapping *m = prof_addrspace_find(self_as, (uintptr_t)&test_bias);

	dl_iterate_phdr(find_main_bias, &want);
	ok(m && m->elf, "own text mapping found with an ELF");
	if (!m || !m->elf)
		return;
	ok(want != 0, "the test is a PIE (load bias %#" PRIx64 ")", want);
	is_u64(m->bias, want, "PIE bias matches dl_iterate_phdr");
	is_u64(prof_elf_bias(m->elf, m->start, m->pgoff, PROT_READ | PROT_EXEC), want, "prof_elf_bias direct");

	/* ET_EXEC: compile a tiny non-PIE program */
	/* per process: two suites may run at once */
	char *src = xasprintf("/tmp/prof-symtest-nopie-%d.c", (int)getpid());
	char *bin = xasprintf("/tmp/prof-symtest-nopie-%d", (int)getpid());
	char *cc = xasprintf("cc -no-pie -o %s %s 2>/dev/null", bin, src);
	FILE *f = fopen(src, "w");
	if (f) {
		fputs("int main(void) { return 0; }\n", f);
		fclose(f);
	}
	if (system(cc) == 0) {
		struct prof_elf *e = prof_elf_get(bin);
		ok(e && prof_elf_bias(e, 0x401000, 0x1000, PROT_READ | PROT_EXEC) == 0, "ET_EXEC bias is 0");
	} else {
		ok(1, "# SKIP no compiler for the ET_EXEC case");
	}
	unlink(src);
	unlink(bin);
	free(src);
	free(bin);
	free(cc);
}

static void test_libc_build_id(void)
{
	/* libc's own qsort, not a sanitizer interceptor of the same name */
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	uintptr_t qsort_addr = libc ? (uintptr_t)dlsym(libc, "qsort") : 0;
	if (libc)
		dlclose(libc);	/* NOLOAD only took a reference; libc stays */
	const struct prof_mapping *m = prof_addrspace_find(self_as, qsort_addr);
	ok(m && m->elf && strstr(m->path, "libc.so"), "qsort is in libc's mapping");
	if (!m || !m->elf)
		return;
	const char *id = prof_elf_build_id(m->elf);
	ok(strlen(id) == 40, "libc build-id is 40 hex digits: %s", id);
	char *dbg = xasprintf("/usr/lib/debug/.build-id/%.2s/%s.debug", id, id + 2);
	struct stat st;
	ok(stat(dbg, &st) == 0, "libc6-dbg has %s (build-id correct)", dbg);
	free(dbg);
	uint32_t ids[8];
	size_t n = prof_symbolize_user(sym, self_as, qsort_addr, false, ids, 8);
	ok(n >= 1 && strstr(fname(ids[n - 1]), "qsort"), "qsort symbolized: %s", n ? fname(ids[n - 1]) : "");
	ok(n >= 1 && *prof_str(&prof, frame(ids[n - 1])->file), "qsort has a source file from debug info: %s",
	   n ? prof_str(&prof, frame(ids[n - 1])->file) : "");
	const struct prof_module *mod = &prof.modules.v[frame(ids[0])->module];
	is_str(prof_str(&prof, mod->build_id), id, "module carries the build-id");
	ok(!(mod->flags & PROF_MOD_NO_SYMBOLS), "libc has symbols");
}

static int find_vdso_sym(const char *name, uint64_t *addr)
{
	const uint8_t *base = (const uint8_t *)getauxval(AT_SYSINFO_EHDR);
	if (!base)
		return -1;
	const Elf64_Ehdr *eh = (const void *)base;
	const Elf64_Shdr *sh = (const void *)(base + eh->e_shoff);
	for (int i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_type != SHT_DYNSYM)
			continue;
		const Elf64_Sym *syms = (const void *)(base + sh[i].sh_offset);
		const char *strs = (const char *)base + sh[sh[i].sh_link].sh_offset;
		for (size_t j = 0; j < sh[i].sh_size / sizeof(*syms); j++)
			if (!strcmp(strs + syms[j].st_name, name)) {
				*addr = (uintptr_t)base + syms[j].st_value;	/* vdso p_vaddr is 0 */
				return 0;
			}
	}
	return -1;
}

static void test_vdso(void)
{
	uint64_t addr;
	uint32_t ids[4];

	if (find_vdso_sym("__vdso_clock_gettime", &addr) < 0) {
		ok(1, "# SKIP no vdso clock_gettime");
		return;
	}
	struct prof_elf *v = prof_elf_vdso();
	ok(v && !strcmp(prof_elf_path(v), "[vdso]"), "vdso image read from own memory");
	size_t n = prof_symbolize_user(sym, self_as, addr + 1, false, ids, 4);
	ok(n >= 1 && strstr(fname(ids[n - 1]), "clock_gettime"), "vdso address resolves: %s",
	   n ? fname(ids[n - 1]) : "");
	if (n) {
		const struct prof_module *mod = &prof.modules.v[frame(ids[0])->module];
		is_str(prof_str(&prof, mod->path), "[vdso]", "vdso module path");
		ok(mod->flags & PROF_MOD_VDSO, "vdso module flag");
	}
}

NOINL int stripped_target(int x) { return x * 3 + 1; }

static void test_stripped(void)
{
	char *copy = xasprintf("/tmp/prof-symtest-stripped-%d", (int)getpid());
	const struct prof_mapping *m = prof_addrspace_find(self_as, (uintptr_t)&stripped_target);
	char *cmd = xasprintf("objcopy --strip-all --remove-section=.gnu_debuglink %s %s 2>/dev/null",
			      m->path, copy);
	int rc = system(cmd);
	free(cmd);
	if (rc != 0) {
		ok(1, "# SKIP objcopy failed");
		free(copy);
		return;
	}
	struct prof_addrspace *as = prof_addrspace_new(4242);
	prof_addrspace_map(as, m->start, m->end - m->start, m->pgoff, copy, PROT_EXEC | PROT_READ);
	uint32_t ids[4];
	size_t n = prof_symbolize_user(sym, as, (uintptr_t)&stripped_target, false, ids, 4);
	uint64_t vaddr = (uintptr_t)&stripped_target - m->bias;
	char *want = xasprintf("%s+0x%" PRIx64, strrchr(copy, '/') + 1, vaddr);
	is_u64(n, 1, "stripped address gives one frame");
	is_str(n ? fname(ids[0]) : "", want, "stripped binary: module+0xOFF name");
	/* a pc inside the function: named after the function's start
	 * (.eh_frame_hdr), so one function is one row */
	uint32_t inner[4];
	size_t ni = prof_symbolize_user(sym, as, (uintptr_t)&stripped_target + 2, false, inner, 4);
	ok(ni == 1 && n == 1 && inner[0] == ids[0],
	   "stripped: a pc 2 bytes into the function gives the same frame (%s)", ni ? fname(inner[0]) : "");
	ok(n && (prof.modules.v[frame(ids[0])->module].flags & PROF_MOD_NO_SYMBOLS), "module flagged NO_SYMBOLS");
	free(want);
	/* an MMAP2 build-id that does not match the file on disk: replaced binary */
	prof_addrspace_map_build_id(as, m->start, m->end - m->start, m->pgoff, copy, PROT_EXEC,
				    "00112233445566778899aabbccddeeff00112233");
	const struct prof_mapping *rm = prof_addrspace_find(as, m->start);
	ok(rm && (rm->flags & PROF_MAP_DELETED) && !rm->elf, "build-id mismatch: flagged DELETED, file not used");
	n = prof_symbolize_user(sym, as, (uintptr_t)&stripped_target, false, ids, 4);
	ok(n == 1 && (prof.modules.v[frame(ids[0])->module].flags & PROF_MOD_DELETED),
	   "replaced binary gives a DELETED module frame: %s", n ? fname(ids[0]) : "");
	prof_addrspace_map_build_id(as, m->start, m->end - m->start, m->pgoff, copy, PROT_EXEC,
				    prof_elf_build_id(m->elf));
	rm = prof_addrspace_find(as, m->start);
	ok(rm && !(rm->flags & PROF_MAP_DELETED) && rm->elf, "matching build-id: normal mapping");
	prof_addrspace_free(as);
	unlink(copy);
	free(copy);
}

/* A stripped copy next to its .gnu_debuglink'ed debug file finds its names. */
static void test_debuglink(void)
{
	const struct prof_mapping *m = prof_addrspace_find(self_as, (uintptr_t)&stripped_target);
	char *dir = xasprintf("/tmp/prof-symtest-dl-%d", (int)getpid());
	char *cmd = xasprintf("mkdir -p %s && objcopy --only-keep-debug %s %s/app.debug && "
			      "objcopy --strip-all --add-gnu-debuglink=%s/app.debug %s %s/app",
			      dir, m->path, dir, dir, m->path, dir);
	int rc = system(cmd);
	free(cmd);
	if (rc != 0) {
		ok(1, "# SKIP objcopy failed");
		free(dir);
		return;
	}
	char *app = xasprintf("%s/app", dir);
	struct prof_addrspace *as = prof_addrspace_new(4243);
	prof_addrspace_map(as, m->start, m->end - m->start, m->pgoff, app, PROT_EXEC | PROT_READ);
	uint32_t ids[4];
	size_t n = prof_symbolize_user(sym, as, (uintptr_t)&stripped_target, false, ids, 4);
	is_str(n ? fname(ids[n - 1]) : "", "stripped_target", "stripped binary + .gnu_debuglink file: named");
	ok(n && frame(ids[n - 1])->line > 0, "and has a line from the debug file");
	ok(n && !(prof.modules.v[frame(ids[0])->module].flags & PROF_MOD_NO_SYMBOLS), "not flagged NO_SYMBOLS");
	prof_addrspace_free(as);
	cmd = xasprintf("rm -rf %s", dir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", dir);
	free(cmd);
	free(app);
	free(dir);
}

static void test_deleted(void)
{
	char *copy = xasprintf("/tmp/prof-symtest-libz-%d.so", (int)getpid());
	char *cp = xasprintf("cp /lib/x86_64-linux-gnu/libz.so.1 %s 2>/dev/null", copy);
	int rc = system(cp);

	free(cp);
	if (rc != 0) {
		ok(1, "# SKIP no libz to copy");
		free(copy);
		return;
	}
	void *h = dlopen(copy, RTLD_NOW | RTLD_LOCAL);
	unlink(copy);
	void *fn = h ? dlsym(h, "zlibVersion") : NULL;
	struct prof_addrspace *as = prof_addrspace_new(getpid());
	prof_addrspace_load_proc(as);
	const struct prof_mapping *m = fn ? prof_addrspace_find(as, (uintptr_t)fn) : NULL;
	ok(m && (m->flags & PROF_MAP_DELETED) && !strcmp(m->path, copy), "deleted mapping flagged, path cleaned");
	ok(m && m->elf, "deleted file opened through /proc/PID/map_files");
	uint32_t ids[4];
	size_t n = m ? prof_symbolize_user(sym, as, (uintptr_t)fn, false, ids, 4) : 0;
	ok(n >= 1 && !strcmp(fname(ids[n - 1]), "zlibVersion"), "deleted library still symbolizes");
	ok(n >= 1 && (prof.modules.v[frame(ids[0])->module].flags & PROF_MOD_DELETED), "module flagged DELETED");
	is_str(n ? prof_str(&prof, prof.modules.v[frame(ids[0])->module].path) : "", copy,
	       "deleted module keeps its original path");
	prof_addrspace_free(as);
	if (h)
		dlclose(h);
	free(copy);
}

static void test_cxx_demangle(void)
{
	void *h = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL);
	void *fn = h ? dlsym(h, "_ZNSt6chrono3_V212system_clock3nowEv") : NULL;
	if (!fn) {
		ok(1, "# SKIP no libstdc++");
		return;
	}
	struct prof_addrspace *as = prof_addrspace_new(getpid());
	prof_addrspace_load_proc(as);
	uint32_t ids[4];
	size_t n = prof_symbolize_user(sym, as, (uintptr_t)fn, false, ids, 4);
	is_str(n ? fname(ids[n - 1]) : "", "std::chrono::_V2::system_clock::now()", "C++ symbol demangled");
	prof_addrspace_free(as);
	dlclose(h);
}

static void test_kallsyms(void)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512], name[256], type;
	uint64_t addr = 0;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%" SCNx64 " %c %255s", &addr, &type, name) == 3 && type == 'T' &&
		    !strcmp(name, "schedule"))
			break;
	if (f)
		fclose(f);
	if (!addr || strcmp(name, "schedule")) {
		ok(1, "# SKIP kallsyms addresses hidden (kptr_restrict) or no schedule symbol");
		return;
	}
	uint32_t id;
	is_u64(prof_symbolize_kernel(sym, addr + 4, &id, 1), 1, "kernel address gives one frame");
	is_str(fname(id), "schedule", "kallsyms lookup");
	ok(frame(id)->kind == PROF_FRAME_KERNEL, "kernel frame kind");
	is_str(prof_str(&prof, prof.modules.v[frame(id)->module].path), "[kernel.kallsyms]", "kernel module");
}

/* The pure container path rules: the innermost NSpid even on a line
 * longer than a line buffer (32 namespace levels), no path climbing out
 * of /proc/PID/root, the " (deleted)" suffix. */
static void test_nspath(void)
{
	char status[1024] = "Name:\tnode\nNSpid:";
	char *s;

	for (int level = 0; level < 32; level++)
		snprintf(status + strlen(status), sizeof(status) - strlen(status), "\t%d", 4000000 + level);
	strcat(status, "\nNSpgid:\t1\n");
	is_u64(prof_sym_status_nspid(status, strlen(status)), 4000031, "NSpid: the innermost of 32 levels");
	is_u64(prof_sym_status_nspid("Pid:\t5\n", 7), 0, "no NSpid line: 0");
	is_u64(prof_sym_status_nspid("NSpid:\t12x\n", 11), 0, "malformed NSpid: 0");
	s = prof_sym_ns_root_path(7, "/usr/lib/libc.so.6");
	is_str(s, "/proc/7/root/usr/lib/libc.so.6", "root path of a mapped file");
	free(s);
	ok(!prof_sym_ns_root_path(7, "/app/../../etc/shadow") && !prof_sym_ns_root_path(7, "lib.so"),
	   "no root path for a path with '..' or a relative one");
	s = prof_sym_ns_perf_map_path(4242, 17, true);
	is_str(s, "/proc/4242/root/tmp/perf-17.map", "a container's JIT map: its own pid under its root");
	free(s);
	char del[] = "/tmp/jit (deleted)";
	ok(prof_sym_map_path_cut_deleted(del) && !strcmp(del, "/tmp/jit"), "(deleted) cut");
}

static void test_jit_names(void)
{
	struct prof_jit_name n;

	ok(prof_jit_name_parse("JS:*jsHotLoop /tmp/x y/jshot.js:3:19", &n) &&
	   !strcmp(n.func, "jsHotLoop") && !strcmp(n.file, "/tmp/x y/jshot.js") && n.line == 3 &&
	   n.column == 19, "V8: JS:*fn path:line:col into function, file, line");
	prof_jit_name_free(&n);
	ok(prof_jit_name_parse("LazyCompile:~get foo node:internal/util:10:2", &n) &&
	   !strcmp(n.func, "get foo") && !strcmp(n.file, "node:internal/util") && n.line == 10,
	   "a name with a space, a node: script");
	prof_jit_name_free(&n);
	ok(prof_jit_name_parse("JS:~ /a.js:1:1", &n) && !strcmp(n.func, "(anonymous)"),
	   "an empty name is (anonymous)");
	prof_jit_name_free(&n);
	ok(!prof_jit_name_parse("Builtin:ArrayPrototypePush", &n) &&
	   !prof_jit_name_parse("JS:*noposition", &n) && !prof_jit_name_parse("JS:*f /a.js:x:1", &n) &&
	   !prof_jit_name_parse("java.lang.String::hashCode", &n),
	   "other names are left as they are");
}

static void test_perf_map(void)
{
	const pid_t pid = 424242;
	char path[64];
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)pid);
	FILE *f = fopen(path, "w");
	if (!f) {
		ok(0, "cannot write %s", path);
		return;
	}
	fputs("7000000100 40 jit_alpha\n7000000200 80 LazyCompile:*beta with spaces\nnot a line\n", f);
	fclose(f);
	struct prof_addrspace *as = prof_addrspace_new(pid);
	prof_addrspace_map(as, 0x7000000000, 0x10000, 0, "//anon", PROT_EXEC | PROT_READ);
	uint32_t id;
	prof_symbolize_user(sym, as, 0x7000000110, false, &id, 1);
	is_str(fname(id), "jit_alpha", "perf map symbol");
	ok(frame(id)->kind == PROF_FRAME_JIT, "JIT frame kind");
	prof_symbolize_user(sym, as, 0x7000000251, true, &id, 1);
	is_str(fname(id), "LazyCompile:*beta with spaces", "perf map name with spaces");
	prof_symbolize_user(sym, as, 0x7000000900, false, &id, 1);
	is_str(fname(id), "[anon]", "anon exec memory without a map entry");
	prof_symbolize_user(sym, as, 0x10, false, &id, 1);
	is_str(fname(id), "[unknown]", "address outside any mapping");
	f = fopen(path, "a");
	if (f) {
		fputs("7000000900 10 jit_gamma_compiled_later\n", f);
		fclose(f);
	}
	prof_symbolize_user(sym, as, 0x7000000904, false, &id, 1);
	is_str(fname(id), "jit_gamma_compiled_later", "grown perf map is reloaded on a miss");
	prof_addrspace_free(as);
	unlink(path);
}

static void test_addrspace(void)
{
	struct prof_addrspace *as = prof_addrspace_new(1);
	uint64_t g0 = as->generation;

	prof_addrspace_map(as, 0x1000, 0x3000, 0, "//anon", PROT_EXEC);
	prof_addrspace_map(as, 0x10000, 0x1000, 0, "//anon", PROT_EXEC);
	ok(as->generation > g0, "generation bumped");
	prof_addrspace_map(as, 0x2000, 0x1000, 0, "//anon", PROT_READ);	/* punches a hole */
	is_u64(as->maps.n, 3, "non-exec overlay splits the mapping");
	ok(prof_addrspace_find(as, 0x1fff) && !prof_addrspace_find(as, 0x2000) && prof_addrspace_find(as, 0x3000),
	   "hole is unmapped, both sides remain");
	is_u64(prof_addrspace_find(as, 0x3000)->pgoff, 0x2000, "split tail pgoff advanced");
	ok(!prof_addrspace_find(as, 0x4000) && prof_addrspace_find(as, 0x10fff) && !prof_addrspace_find(as, 0x11000),
	   "end is exclusive");
	struct prof_addrspace *child = prof_addrspace_fork(as, 2);
	is_u64(child->maps.n, 3, "fork copies mappings");
	prof_addrspace_map(as, 0x0, 0x20000, 0, "//anon", PROT_EXEC);
	ok(as->maps.n == 1 && child->maps.n == 3, "the fork's copy is its own");
	prof_addrspace_map(child, 0x0, 0x20000, 0, "//anon", PROT_EXEC);
	is_u64(child->maps.n, 1, "a covering mapping replaces all");
	bool sorted = true;
	for (int i = 0; i < 50; i++)
		prof_addrspace_map(child, 0x100000 + (uint64_t)((i * 37) % 50) * 0x2000, 0x1000, 0, "", PROT_EXEC);
	for (size_t i = 1; i < child->maps.n; i++)
		sorted &= child->maps.v[i - 1].end <= child->maps.v[i].start;
	ok(sorted && child->maps.n == 51, "mappings stay sorted and disjoint");
	prof_addrspace_free(as);
	prof_addrspace_free(child);
	errno = 0;
	ok(prof_elf_get("/nonexistent/x") == NULL && errno == ENOENT, "missing file: NULL, ENOENT");
	ok(prof_elf_get("/proc/self/maps") == NULL, "non-ELF file refused");
}

int main(void)
{
	prof_profile_init(&prof);
	sym = prof_symbolizer_new(&prof);
	self_as = prof_addrspace_new(getpid());
	if (prof_addrspace_load_proc(self_as) < 0)
		return printf("1..0 # SKIP cannot read /proc/self/maps\n"), 0;
	test_inline();
	test_bias();
	test_libc_build_id();
	test_vdso();
	test_stripped();
	test_debuglink();
	test_deleted();
	test_cxx_demangle();
	test_kallsyms();
	test_perf_map();
	test_jit_names();
	test_nspath();
	test_addrspace();
	prof_addrspace_free(self_as);
	prof_symbolizer_free(sym);
	prof_profile_free(&prof);
	prof_elf_cache_free();
	return done_testing();
}
