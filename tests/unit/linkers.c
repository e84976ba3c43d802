/*
 * linkers.c - load bias and symbol names on binaries from every common
 * linker: a tiny program is linked by GNU ld, gold, lld and mold, as PIE
 * and non-PIE, started, and asked (through a pipe) for the address of its
 * own function `probe_target` and its load bias from dl_iterate_phdr.
 * prof then reads the child's /proc/PID/maps: the mapping's bias must
 * equal the loader's, and the address must symbolize to `probe_target`.
 * lld and mold pack the r-x segment into the read-only segment's file
 * page, which is where a bias chosen by file offset alone goes wrong.
 * The non-PIE builds are stripped: their entry point must still be named
 * `_start` (from e_entry) and their `puts` stub `puts@plt` (non-PIE code
 * takes an external function's address as its PLT stub).
 * The probe also maps the page of its executable that holds probe_target a
 * second time, elsewhere, as V8 remaps node's embedded builtins: that
 * copy's bias must follow its own address (not be taken as 0 for a
 * non-PIE file), and an address in it names the same function.
 * A linker that is not installed is a SKIP with its name.
 */
#include "tap.h"
#include "prof/replay.h"
#include "prof/symbol.h"
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static const char probe_src[] =
	"#define _GNU_SOURCE\n"
	"#include <fcntl.h>\n#include <link.h>\n#include <stdio.h>\n#include <sys/mman.h>\n"
	"#include <unistd.h>\n"
	"__attribute__((noinline)) int probe_target(int x) { return x * 3 + 1; }\n"
	"static const ElfW(Phdr) *ph; static int phn;\n"
	"static int first(struct dl_phdr_info *i, size_t n, void *a)\n"
	"{ *(unsigned long *)a = i->dlpi_addr; ph = i->dlpi_phdr; phn = i->dlpi_phnum; return 1; }\n"
	"static unsigned long copy_of(unsigned long fn, unsigned long bias)\n"
	"{ unsigned long v = fn - bias, pg = (unsigned long)sysconf(_SC_PAGESIZE);\n"
	"  for (int k = 0; k < phn; k++) {\n"
	"    if (ph[k].p_type != PT_LOAD || v < ph[k].p_vaddr || v >= ph[k].p_vaddr + ph[k].p_filesz) continue;\n"
	"    unsigned long off = ph[k].p_offset + (v - ph[k].p_vaddr), base = off & ~(pg - 1);\n"
	"    char *m = mmap(0, 2 * pg, PROT_READ | PROT_EXEC, MAP_PRIVATE, open(\"/proc/self/exe\", O_RDONLY), (off_t)base);\n"
	"    return m == MAP_FAILED ? 0 : (unsigned long)m + (off - base); }\n"
	"  return 0; }\n"
	"extern char _start[];\n"
	"int main(void) { unsigned long bias = 0; dl_iterate_phdr(first, &bias);\n"
	"  printf(\"%lx %lx %lx %lx %lx\\n\", (unsigned long)&probe_target, bias,\n"
	"         (unsigned long)_start, (unsigned long)&puts,\n"
	"         copy_of((unsigned long)&probe_target, bias)); fflush(stdout);\n"
	"  char c; return (int)read(0, &c, 1) + probe_target(0); }\n";

static struct prof_profile prof;
static struct prof_symbolizer *sym;

static int write_source(const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(probe_src, f);
	return fclose(f);
}

struct probe {
	uint64_t target, bias, start, puts;	/* what the child printed */
	uint64_t copy;		/* probe_target in the second mapping */
};

/* Starts bin with pipes; reads its five hex numbers.  0 on success. */
static int start_probe(const char *bin, pid_t *pid, int *stdin_w, struct probe *pr)
{
	int in[2], out[2];

	if (pipe(in) < 0 || pipe(out) < 0)
		return -1;
	*pid = fork();
	if (*pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execl(bin, bin, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	*stdin_w = in[1];
	FILE *f = fdopen(out[0], "r");
	int got = f ? fscanf(f, "%" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64,
			     &pr->target, &pr->bias, &pr->start, &pr->puts, &pr->copy) : 0;
	if (f)
		fclose(f);
	return got == 5 && pr->copy ? 0 : -1;
}

/* The outermost frame's name at a live address of as. */
static const char *name_at(struct prof_addrspace *as, uint64_t addr)
{
	uint32_t ids[4];
	size_t n = prof_symbolize_user(sym, as, addr, false, ids, 4);

	return n ? prof_str(&prof, prof.frames.v[ids[n - 1]].func) : "";
}

#define CHECKS_PER_LINKER 5

/* The copy's bias puts probe_target at the same file vaddr as the
 * loader's mapping does; the name (a symbol, or the stripped binary's
 * eh_frame grouping) is the same at both addresses. */
static void check_second_mapping(struct prof_addrspace *as, const struct probe *pr, const char *ld,
				 const char *kind)
{
	const struct prof_mapping *m = prof_addrspace_find(as, pr->copy);
	uint64_t want = pr->copy - (pr->target - pr->bias);
	char name[256];

	if (!ok(m && m->elf && m->bias == want, "%s %s: a second mapping of the text has its own bias",
		ld, kind))
		printf("#   got %#" PRIx64 ", want %#" PRIx64 "\n", m ? m->bias : 0, want);
	snprintf(name, sizeof(name), "%s", name_at(as, pr->target));
	is_str(name_at(as, pr->copy), name, "%s %s: the second mapping names the same function", ld, kind);
}

static void check_probe(struct prof_addrspace *as, const struct probe *pr, const char *ld, bool pie)
{
	const char *kind = pie ? "PIE" : "stripped non-PIE";
	const struct prof_mapping *m = prof_addrspace_find(as, pr->target);

	if (!ok(m && m->elf && m->bias == pr->bias, "%s %s: bias of the text mapping is the loader's",
		ld, kind))
		printf("#   got %#" PRIx64 ", want %#" PRIx64 "\n", m ? m->bias : 0, pr->bias);
	is_str(name_at(as, pr->start), "_start", "%s %s: the entry point is _start", ld, kind);
	if (pie)
		is_str(name_at(as, pr->target), "probe_target", "%s %s: the function's address is named", ld, kind);
	else
		is_str(name_at(as, pr->puts), "puts@plt", "%s %s: the PLT stub is puts@plt", ld, kind);
	check_second_mapping(as, pr, ld, kind);
}

static void check_linker(const char *ld, bool pie)
{
	char bin[128], cmd[512];

	snprintf(bin, sizeof(bin), "/tmp/prof-linkers-%d-%s-%s", (int)getpid(), ld, pie ? "pie" : "nopie");
	snprintf(cmd, sizeof(cmd), "cc -O1 -g %s -fuse-ld=%s -o %s /tmp/prof-linkers-%d.c 2>/dev/null%s",
		 pie ? "-fPIE -pie" : "-fno-PIE -no-pie", ld, bin, (int)getpid(),
		 pie ? "" : " && strip ");
	if (!pie)
		snprintf(cmd + strlen(cmd), sizeof(cmd) - strlen(cmd), "%s", bin);
	if (system(cmd) != 0) {
		for (int i = 0; i < CHECKS_PER_LINKER; i++)
			ok(1, "# SKIP cannot link with -fuse-ld=%s (not installed)", ld);
		return;
	}
	pid_t pid = -1;
	int w = -1;
	struct probe pr = { 0 };
	if (start_probe(bin, &pid, &w, &pr) < 0) {
		for (int i = 0; i < CHECKS_PER_LINKER; i++)
			ok(0, "%s: the probe did not report its addresses", ld);
	} else {
		struct prof_addrspace *as = prof_addrspace_new(pid);
		prof_addrspace_load_proc(as);
		check_probe(as, &pr, ld, pie);
		prof_addrspace_free(as);
	}
	if (w >= 0)
		close(w);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	unlink(bin);
}

int main(void)
{
	static const char *const lds[] = { "bfd", "gold", "lld", "mold" };
	char src[64];

	snprintf(src, sizeof(src), "/tmp/prof-linkers-%d.c", (int)getpid());
	if (write_source(src) < 0)
		return printf("1..0 # SKIP cannot write %s\n", src), 0;
	signal(SIGPIPE, SIG_IGN);
	prof_profile_init(&prof);
	sym = prof_symbolizer_new(&prof);
	for (size_t i = 0; i < sizeof(lds) / sizeof(lds[0]); i++) {
		check_linker(lds[i], true);
		check_linker(lds[i], false);
	}
	unlink(src);
	prof_symbolizer_free(sym);
	prof_profile_free(&prof);
	prof_elf_cache_free();
	return done_testing();
}
