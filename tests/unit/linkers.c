/*
 * linkers.c - load bias and symbol names on binaries from every common
 * linker: a tiny program is linked by GNU ld, gold, lld and mold, as PIE
 * and non-PIE, started, and asked (through a pipe) for the address of its
 * own function `probe_target` and its load bias from dl_iterate_phdr.
 * prof then reads the child's /proc/PID/maps: the mapping's bias must
 * equal the loader's, and the address must symbolize to `probe_target`.
 * lld and mold pack the r-x segment into the read-only segment's file
 * page, which is where a bias chosen by file offset alone goes wrong.
 * A linker that is not installed is a SKIP with its name.
 */
#include "tap.h"
#include "prof/symbol.h"
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static const char probe_src[] =
	"#define _GNU_SOURCE\n"
	"#include <link.h>\n#include <stdio.h>\n#include <unistd.h>\n"
	"__attribute__((noinline)) int probe_target(int x) { return x * 3 + 1; }\n"
	"static int first(struct dl_phdr_info *i, size_t n, void *a)\n"
	"{ *(unsigned long *)a = i->dlpi_addr; return 1; }\n"
	"int main(void) { unsigned long bias = 0; dl_iterate_phdr(first, &bias);\n"
	"  printf(\"%lx %lx\\n\", (unsigned long)&probe_target, bias); fflush(stdout);\n"
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

/* Starts bin with pipes; reads its two hex numbers.  0 on success. */
static int start_probe(const char *bin, pid_t *pid, int *stdin_w, uint64_t *addr, uint64_t *bias)
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
	int got = f ? fscanf(f, "%" SCNx64 " %" SCNx64, addr, bias) : 0;
	if (f)
		fclose(f);
	return got == 2 ? 0 : -1;
}

static void check_linker(const char *ld, bool pie)
{
	char bin[128], cmd[512];
	const char *kind = pie ? "PIE" : "non-PIE";

	snprintf(bin, sizeof(bin), "/tmp/prof-linkers-%d-%s-%s", (int)getpid(), ld, pie ? "pie" : "nopie");
	snprintf(cmd, sizeof(cmd), "cc -O1 -g %s -fuse-ld=%s -o %s /tmp/prof-linkers-%d.c 2>/dev/null",
		 pie ? "-fPIE -pie" : "-fno-PIE -no-pie", ld, bin, (int)getpid());
	if (system(cmd) != 0) {
		ok(1, "# SKIP cannot link with -fuse-ld=%s (not installed)", ld);
		ok(1, "# SKIP cannot link with -fuse-ld=%s (not installed)", ld);
		return;
	}
	pid_t pid = -1;
	int w = -1;
	uint64_t addr = 0, want_bias = 0;
	if (start_probe(bin, &pid, &w, &addr, &want_bias) < 0) {
		ok(0, "%s %s: the probe did not report its addresses", ld, kind);
		ok(0, "%s %s: no symbol to check", ld, kind);
	} else {
		struct prof_addrspace *as = prof_addrspace_new(pid);
		prof_addrspace_load_proc(as);
		const struct prof_mapping *m = prof_addrspace_find(as, addr);
		if (!ok(m && m->elf && m->bias == want_bias, "%s %s: bias of the text mapping is the loader's",
			ld, kind))
			printf("#   got %#" PRIx64 ", want %#" PRIx64 "\n", m ? m->bias : 0, want_bias);
		uint32_t ids[4];
		size_t n = prof_symbolize_user(sym, as, addr, false, ids, 4);
		const char *name = n ? prof_str(&prof, prof.frames.v[ids[n - 1]].func) : "";
		is_str(name, "probe_target", "%s %s: the function's address is named", ld, kind);
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
