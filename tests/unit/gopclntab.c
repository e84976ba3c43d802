/*
 * gopclntab.c - the .gopclntab reader on a Go program built here, against
 * Go's own tools and Go's DWARF: a small program with a two-level inlined
 * call (leaf inlined into mid, mid into top) is built twice, with DWARF
 * and with `-ldflags=-s -w` (no DWARF, no .symtab: only .gopclntab).
 *  - For pcs across every function of the stripped build (main's, and a
 *    spread of the runtime's), the innermost frame's file:line and the
 *    outermost frame's name must be what `go tool addr2line` says.
 *  - At the same pcs, the chain from .gopclntab (names, inlined or not,
 *    file:line of each frame) must be the chain libdw reads from the
 *    DWARF build (the same code at the same addresses), and some pc of
 *    main.top must show both inline levels.
 *  - The section named as in PIE builds (".data.rel.ro.gopclntab") gives
 *    the same chains.
 *  - Three functions rebuilt in the 1.16, 1.18 and 1.20 layouts by the
 *    fuzz seed maker read back as the real table does.
 *  - The functions flagged TOPFRAME are the ones the linux/amd64 runtime's
 *    assembly marks so (Go's sources beside the go tool);
 *    runtime.systemstack, mcall and morestack, which write SP, are
 *    SPWRITE; prof ends stacks at all of them, and at no main.* function.
 *  - A table of another version is refused with -EPROTONOSUPPORT and
 *    named; a cut table or a bad header never reads outside the bytes
 *    (run under SANITIZE=address) and gives no garbage frames.
 * Without the go tool the whole test is a SKIP.
 */
#include "tap.h"
#include "../../src/symbol/symbol-priv.h"
#include "../../src/symbol/gopclntab-priv.h"
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static const char go_src[] =
	"package main\n"
	"\n"
	"import \"os\"\n"
	"\n"
	"func leaf(x uint64) uint64 {\n"
	"\treturn x*6364136223846793005 + 1442695040888963407\n"
	"}\n"
	"\n"
	"func mid(x uint64, n int) uint64 {\n"
	"\tfor i := 0; i < n; i++ {\n"
	"\t\tx = leaf(x)\n"
	"\t}\n"
	"\treturn x\n"
	"}\n"
	"\n"
	"//go:noinline\n"
	"func top(n int) uint64 {\n"
	"\treturn mid(uint64(n), n) + 1\n"
	"}\n"
	"\n"
	"func main() {\n"
	"\tos.Exit(int(top(len(os.Args)) & 1))\n"
	"}\n";

static char dir[64];

static int write_file(const char *name, const char *text)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (!(f = fopen(path, "w")))
		return -1;
	fputs(text, f);
	return fclose(f);
}

static int go_build(const char *out, const char *flags)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "cd %s && GOCACHE=%s/cache GOFLAGS=-mod=mod go build %s -o %s . >build.log 2>&1",
		 dir, dir, flags, out);
	return system(cmd) == 0 ? 0 : -1;
}

struct sample {
	uint64_t pc;
	char func[1024], file[1024];
	unsigned line;
};

/* The pcs to check: each main.* function's every byte, and three pcs of
 * every 7th function; nothing past max. */
static size_t pick_pcs(const struct go_pclntab *t, struct sample *s, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < prof_sym_gopclntab_nfunc(t) && n < max; i++) {
		uint64_t entry, end, e2, x;
		if (!prof_sym_gopclntab_func_at(t, i, &entry, &end))
			continue;
		const char *name = prof_sym_gopclntab_func(t, entry, &e2, &x);
		if (name && !strncmp(name, "main.", 5)) {
			for (uint64_t pc = entry; pc < end && n < max; pc++)
				s[n++].pc = pc;
		} else if (i % 7 == 0) {
			uint64_t pcs[3] = { entry, entry + (end - entry) / 2, end - 1 };
			for (int k = 0; k < 3 && n < max; k++)
				s[n++].pc = pcs[k];
		}
	}
	return n;
}

/* go tool addr2line's answer (function, file:line) for every pc. */
static int addr2line(const char *bin, struct sample *s, size_t n)
{
	char in[128], cmd[512];
	FILE *f;

	snprintf(in, sizeof(in), "%s/pcs", dir);
	if (!(f = fopen(in, "w")))
		return -1;
	for (size_t i = 0; i < n; i++)
		fprintf(f, "0x%" PRIx64 "\n", s[i].pc);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "go tool addr2line %s/%s <%s", dir, bin, in);
	if (!(f = popen(cmd, "r")))
		return -1;
	size_t got = 0;
	char line[1024];
	while (got < n && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		snprintf(s[got].func, sizeof(s[got].func), "%s", line);
		if (!fgets(line, sizeof(line), f))
			break;
		char *colon = strrchr(line, ':');
		if (colon) {	/* "?:0" or ":-1" between functions: no line */
			*colon = '\0';
			s[got].line = (unsigned)MAX(atoi(colon + 1), 0);
		}
		if (!strcmp(line, "?"))
			line[0] = '\0';
		snprintf(s[got].file, sizeof(s[got].file), "%s", line);
		got++;
	}
	return pclose(f) == 0 && got == n ? 0 : -1;
}

static void chain_free(struct elf_frame *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(c[i].file);
		free(c[i].func_owned);
	}
}

static const char *str(const char *s) { return s ? s : ""; }

/* Innermost file:line and outermost name of the stripped build's chain,
 * for every sample, against addr2line's. */
static void check_addr2line(struct prof_elf *e, struct sample *s, size_t n)
{
	size_t good = 0, bad_shown = 0;

	for (size_t i = 0; i < n; i++) {
		struct elf_frame c[16];
		size_t k = prof_elf_lookup(e, s[i].pc, c, 16);
		bool same = k && !strcmp(str(c[0].file), s[i].file) && c[0].line == s[i].line &&
			    !strcmp(str(c[k - 1].func), s[i].func);
		good += same;
		if (!same && bad_shown++ < 5)
			printf("#   0x%" PRIx64 ": %s at %s:%u; addr2line: %s at %s:%u\n", s[i].pc,
			       k ? str(c[k - 1].func) : "-", k ? str(c[0].file) : "-", k ? c[0].line : 0,
			       s[i].func, s[i].file, s[i].line);
		chain_free(c, k);
	}
	ok(n > 100 && good == n, "file:line and function of %zu pcs are go tool addr2line's (%zu agree)",
	   n, good);
}

/* Names and paths as both sides spell them: the ELF symbols of assembly
 * functions end in ".abi0" (Go's table drops it), and DWARF writes
 * "./<autogenerated>" where the table has "<autogenerated>". */
static bool same_name(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);

	if (la == lb + 5 && !strcmp(a + lb, ".abi0"))
		la = lb;
	return la == lb && !strncmp(a, b, la);
}

static bool same_file(const char *a, const char *b)
{
	return !strcmp(a + (strncmp(a, "./", 2) ? 0 : 2), b + (strncmp(b, "./", 2) ? 0 : 2));
}

/* The two builds' chains at one pc; true when every frame agrees. */
static bool same_chain(const struct elf_frame *a, size_t na, const struct elf_frame *b, size_t nb)
{
	if (na != nb)
		return false;
	for (size_t i = 0; i < na; i++)
		if (!same_name(str(a[i].func), str(b[i].func)) || !same_file(str(a[i].file), str(b[i].file)) ||
		    a[i].line != b[i].line || a[i].inlined != b[i].inlined)
			return false;
	return true;
}

static void show_chain(const char *what, const struct elf_frame *c, size_t n)
{
	printf("#   %s:", what);
	for (size_t i = 0; i < n; i++)
		printf(" %s%s %s:%u;", str(c[i].func), c[i].inlined ? " [i]" : "", str(c[i].file), c[i].line);
	printf("\n");
}

static void check_dwarf(struct prof_elf *dw, struct prof_elf *sw, const struct sample *s, size_t n)
{
	size_t compared = 0, good = 0, deepest = 0, shown = 0, inlined = 0;

	for (size_t i = 0; i < n; i++) {
		struct elf_frame a[16], b[16];
		size_t na = prof_elf_lookup(dw, s[i].pc, a, 16);
		size_t nb = prof_elf_lookup(sw, s[i].pc, b, 16);
		/* padding between functions has no line in DWARF; the compiler's
		 * type..eq.[5]T is "type..eq.[...]T" in Go's table */
		if (na && a[0].line && a[na - 1].func && strncmp(a[na - 1].func, "type..", 6)) {
			compared++;
			if (same_chain(a, na, b, nb)) {
				good++;
				inlined += nb > 1;
				if (nb == 3 && !strcmp(str(b[0].func), "main.leaf") &&
				    !strcmp(str(b[1].func), "main.mid") && !strcmp(str(b[2].func), "main.top"))
					deepest++;
			} else if (shown++ < 3) {
				printf("#   0x%" PRIx64 "\n", s[i].pc);
				show_chain("DWARF     ", a, na);
				show_chain(".gopclntab", b, nb);
			}
		}
		chain_free(a, na);
		chain_free(b, nb);
	}
	ok(compared > 300 && good == compared,
	   "inline chains at %zu pcs are DWARF's (%zu agree, %zu with inline frames)", compared, good,
	   inlined);
	ok(deepest > 0, "main.leaf inlined into main.mid inlined into main.top: %zu pcs", deepest);
}

/* The section's bytes of a binary, copied (for tables made bad on purpose). */
static uint8_t *section_copy(struct prof_elf *e, size_t *size, uint64_t *vaddr)
{
	size_t shstrndx;

	if (elf_getshdrstrndx(e->elf, &shstrndx) != 0)
		return NULL;
	for (Elf_Scn *scn = elf_nextscn(e->elf, NULL); scn; scn = elf_nextscn(e->elf, scn)) {
		GElf_Shdr sh;
		const char *name;
		if (gelf_getshdr(scn, &sh) && (name = elf_strptr(e->elf, shstrndx, sh.sh_name)) &&
		    !strcmp(name, ".gopclntab")) {
			uint8_t *copy = malloc(sh.sh_size);
			memcpy(copy, e->image + sh.sh_offset, sh.sh_size);
			*size = sh.sh_size;
			*vaddr = sh.sh_addr;
			return copy;
		}
	}
	return NULL;
}

static void check_bad_tables(struct prof_elf *e)
{
	size_t size = 0;
	uint64_t vaddr = 0;
	uint8_t *tab = section_copy(e, &size, &vaddr);
	struct go_pclntab *t;
	char what[64];

	if (!ok(tab != NULL, "the stripped build has a .gopclntab section"))
		return;
	struct go_pcln_image img = { .tab = tab, .tab_size = size, .tab_vaddr = vaddr };
	memcpy(tab, "\xfb\xff\xff\xff", 4);	/* Go 1.2-1.15 */
	is_u64(-prof_sym_gopclntab_open(&img, &t), EPROTONOSUPPORT, "a Go 1.2 table is refused");
	is_str(prof_sym_gopclntab_describe(tab, size, what, sizeof(what)), "Go 1.2-1.15 (magic 0xfffffffb)",
	       "and named");
	memcpy(tab, "\x01\x02\x03\x04", 4);
	is_u64(-prof_sym_gopclntab_open(&img, &t), EPROTONOSUPPORT, "an unknown magic is refused");
	memcpy(tab, "\xf0\xff\xff\xff", 4);
	tab[7] = 3;
	is_u64(-prof_sym_gopclntab_open(&img, &t), ENOEXEC, "a pointer size of 3 is no pclntab");
	tab[7] = 8;

	/* Cut anywhere: open fails or every lookup stays inside the bytes. */
	size_t frames = 0, garbage = 0;
	for (size_t cut = 0; cut < size; cut += size / 97 + 1) {
		uint8_t *part = malloc(cut ? cut : 1);
		memcpy(part, tab, cut);
		img.tab = part;
		img.tab_size = cut;
		if (prof_sym_gopclntab_open(&img, &t) == 0) {
			for (uint64_t pc = 0x401000; pc < 0x401000 + 0x60000; pc += 0x301) {
				struct go_frame f[8];
				size_t k = prof_sym_gopclntab_frames(t, pc, f, 8);
				frames += k;
				for (size_t j = 0; j < k; j++)
					garbage += !f[j].func || memchr(f[j].func, '\0', cut) == NULL;
			}
			prof_sym_gopclntab_free(t);
		}
		free(part);
	}
	ok(garbage == 0, "cut tables: %zu frames, every name inside the table", frames);
	free(tab);
}

/* PIE and externally linked binaries name the section
 * ".data.rel.ro.gopclntab": the stripped build so renamed (a PIE build
 * would recompile the standard library) must give the same chains. */
static void check_renamed(struct prof_elf *sw, const struct sample *s, size_t n)
{
	char cmd[512], path[128];
	size_t good = 0;

	snprintf(path, sizeof(path), "%s/renamed", dir);
	snprintf(cmd, sizeof(cmd), "objcopy --rename-section .gopclntab=.data.rel.ro.gopclntab %s/sw %s",
		 dir, path);
	if (system(cmd) != 0) {
		ok(1, "# SKIP objcopy cannot rename the section");
		return;
	}
	struct prof_elf *e = prof_elf_get(path);
	for (size_t i = 0; e && i < n; i++) {
		struct elf_frame a[16], b[16];
		size_t na = prof_elf_lookup(sw, s[i].pc, a, 16);
		size_t nb = prof_elf_lookup(e, s[i].pc, b, 16);
		good += na > 0 && same_chain(a, na, b, nb);
		chain_free(a, na);
		chain_free(b, nb);
	}
	ok(n && good == n, ".data.rel.ro.gopclntab: the same chains at %zu pcs (%zu agree)", n, good);
}

/* A seed input of fuzz_gopclntab: the table, funcdata, the trailer. */
struct seed {
	uint8_t *data;
	size_t size;
};

static int read_seed(const void *ctx, uint64_t vaddr, void *buf, size_t len)
{
	const struct seed *in = ctx;
	uint64_t base = 0x10000;	/* mkseed_gopclntab.py's BASE */

	if (vaddr < base || vaddr - base > in->size || len > in->size - (vaddr - base))
		return -1;
	memcpy(buf, in->data + (vaddr - base), len);
	return 0;
}

static bool same_frames(const struct go_frame *a, size_t na, const struct go_frame *b, size_t nb)
{
	if (na != nb)
		return false;
	for (size_t i = 0; i < na; i++)
		if (strcmp(a[i].func, b[i].func) || strcmp(a[i].file, b[i].file) || a[i].line != b[i].line ||
		    a[i].inlined != b[i].inlined)
			return false;
	return true;
}

/* One layout's seed against the real table at every pc of its functions. */
static void check_layout(const struct go_pclntab *real, const char *layout, FILE *pcs)
{
	char path[128];
	struct seed in = { 0 };
	struct go_pclntab *t = NULL;

	snprintf(path, sizeof(path), "%s/seeds/%s", dir, layout);
	in.data = (uint8_t *)read_file(path, &in.size);
	if (in.data && in.size >= 4) {
		uint32_t off;
		memcpy(&off, in.data + in.size - 4, 4);
		struct go_pcln_image img = { .tab = in.data, .tab_size = in.size, .tab_vaddr = 0x10000,
					     .gofunc = 0x10000 + (uint64_t)off, .read = read_seed, .ctx = &in };
		prof_sym_gopclntab_open(&img, &t);
	}
	size_t pcs_n = 0, good = 0, inlined = 0;
	uint64_t entry, end;
	char name[256];
	rewind(pcs);
	while (t && fscanf(pcs, "%" SCNx64 " %" SCNx64 " %255s", &entry, &end, name) == 3) {
		for (uint64_t pc = entry; pc < end; pc++) {
			struct go_frame a[8], b[8];
			size_t na = prof_sym_gopclntab_frames(real, pc, a, 8), nb = prof_sym_gopclntab_frames(t, pc, b, 8);
			pcs_n++;
			good += na > 0 && same_frames(a, na, b, nb);
			inlined += nb > 1;
		}
	}
	ok(t && pcs_n > 100 && good == pcs_n && inlined > 0,
	   "the %s layout of main.top, main.main, runtime.main: the real table's frames at %zu pcs (%zu agree, %zu inlined)",
	   layout, pcs_n, good, inlined);
	prof_sym_gopclntab_free(t);
	free(in.data);
}

/* tests/fuzz/mkseed_gopclntab.py rebuilds a few functions of the DWARF
 * build (its .symtab has go:func.*) in the 1.16, 1.18 and 1.20 layouts:
 * each must read back as the real table does. */
static void check_layouts(struct prof_elf *sw)
{
	char cmd[1024], path[128];
	char *maker = realpath("tests/fuzz/mkseed_gopclntab.py", NULL);	/* run from the top */

	if (!maker) {
		ok(1, "# SKIP not run from the source tree: no tests/fuzz/mkseed_gopclntab.py");
		return;
	}
	snprintf(cmd, sizeof(cmd), "mkdir -p %s/seeds && python3 %s %s/dw %s/seeds "
		 "main.top main.main runtime.main >%s/seeds/log 2>&1", dir, maker, dir, dir, dir);
	free(maker);
	if (system(cmd) != 0) {
		ok(0, "mkseed_gopclntab.py failed (%s/seeds/log)", dir);
		return;
	}
	snprintf(path, sizeof(path), "%s/seeds/pcs", dir);
	FILE *pcs = fopen(path, "r");
	if (!pcs || !sw->go)
		return;
	check_layout(sw->go, "go116", pcs);
	check_layout(sw->go, "go118", pcs);
	check_layout(sw->go, "go120", pcs);
	fclose(pcs);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The TEXT symbols marked TOPFRAME in the linux/amd64 runtime's assembly,
 * sorted, space-separated ("runtime.goexit runtime.mstart ..."). */
static void source_topframes(char *out, size_t len)
{
	FILE *f = popen("cd \"$(go env GOROOT)/src/runtime\" && "
			"grep -h '^TEXT runtime[^a-z0-9_]*[a-z0-9_]*(SB).*TOPFRAME' "
			"asm_amd64.s sys_linux_amd64.s rt0_linux_amd64.s | "
			"sed 's/^TEXT runtime[^a-z0-9_]*\\([a-z0-9_]*\\)(SB).*/runtime.\\1/' | LC_ALL=C sort | tr '\\n' ' '", "r");
	size_t n = f ? fread(out, 1, len - 1, f) : 0;

	out[n] = '\0';
	if (f)
		pclose(f);
}

static void check_flags(struct prof_elf *sw)
{
	const char *top[32], *spwrite[] = { "runtime.systemstack", "runtime.mcall", "runtime.morestack" };
	size_t ntop = 0, nspwrite = 0, nmain = 0, main_ends = 0;
	char want[512], got[512] = "";

	for (size_t i = 0; i < prof_sym_gopclntab_nfunc(sw->go); i++) {
		uint64_t entry, end;
		uint8_t flags;
		const char *name;
		if (!prof_sym_gopclntab_func_at(sw->go, i, &entry, &end) ||
		    !(name = prof_sym_gopclntab_func_flags(sw->go, entry, &flags)))
			continue;
		if ((flags & GO_FUNCFLAG_TOPFRAME) && ntop < ARRAY_SIZE(top))
			top[ntop++] = name;
		for (size_t k = 0; k < ARRAY_SIZE(spwrite); k++)
			if (!strcmp(name, spwrite[k]) && (flags & GO_FUNCFLAG_SPWRITE) &&
			    prof_elf_vaddr_ends_go_stack(sw, entry))
				nspwrite++;
		if (!strncmp(name, "main.", 5)) {
			nmain++;
			main_ends += prof_elf_vaddr_ends_go_stack(sw, entry);
		}
	}
	qsort(top, ntop, sizeof(top[0]), by_name);
	for (size_t i = 0; i < ntop; i++)
		snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s ", top[i]);
	source_topframes(want, sizeof(want));
	ok(*want && !strcmp(got, want), "TOPFRAME functions are the runtime's: '%s' (its sources: '%s')", got, want);
	ok(nspwrite == ARRAY_SIZE(spwrite), "systemstack, mcall and morestack are SPWRITE, stacks end there (%zu of 3)",
	   nspwrite);
	ok(nmain > 0 && main_ends == 0, "no stack ends at main's %zu functions (%zu do)", nmain, main_ends);
}

int main(void)
{
	char path[128];

	if (system("go version >/dev/null 2>&1") != 0)
		return printf("1..0 # SKIP the go tool is not installed\n"), 0;
	snprintf(dir, sizeof(dir), "/tmp/prof-gopclntab-%d", (int)getpid());
	if (mkdir(dir, 0700) < 0 || write_file("main.go", go_src) < 0 ||
	    write_file("go.mod", "module gopcln\n\ngo 1.16\n") < 0)
		return printf("1..0 # SKIP cannot write %s\n", dir), 0;
	if (go_build("dw", "") < 0 || go_build("sw", "-ldflags='-s -w'") < 0) {
		printf("1..0 # SKIP go build failed (%s/build.log)\n", dir);
		return 0;
	}
	snprintf(path, sizeof(path), "%s/sw", dir);
	struct prof_elf *sw = prof_elf_get(path);
	snprintf(path, sizeof(path), "%s/dw", dir);
	struct prof_elf *dw = prof_elf_get(path);
	ok(sw && dw && prof_elf_has_symbols(sw) && sw->go, "the -s -w build has symbols: its .gopclntab");

	static struct sample s[4096];
	size_t n = sw && sw->go ? pick_pcs(sw->go, s, ARRAY_SIZE(s)) : 0;
	if (addr2line("sw", s, n) < 0)
		ok(0, "go tool addr2line failed");
	else
		check_addr2line(sw, s, n);
	if (dw)
		check_dwarf(dw, sw, s, n);
	if (sw)
		check_renamed(sw, s, n);
	if (sw && sw->go)
		check_flags(sw);
	if (sw) {
		check_layouts(sw);
		check_bad_tables(sw);
	}

	prof_elf_cache_free();
	char cmd[160];
	snprintf(cmd, sizeof(cmd), "chmod -R u+w %s; rm -rf %s", dir, dir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", dir);
	return done_testing();
}
