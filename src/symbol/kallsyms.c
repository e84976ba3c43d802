/*
 * kallsyms.c - the kernel's symbols for the whole process: /proc/kallsyms
 * loaded once, from the cache file of this boot when it is valid (ksyms.c),
 * and said once when it cannot be read; and the prewarm a recorder runs
 * before sampling starts, so that neither kallsyms nor libc's symbol index
 * is loaded at the first sample, when the stall could overflow the rings.
 */
#include "symbol-priv.h"
#include "ksyms-priv.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>

static struct ksym_table kallsyms;
static int kallsyms_state;		/* 0 unloaded, 1 ok, -1 unusable */
static const char *kallsyms_problem;	/* why kallsyms_state is -1 */

/* /proc/kallsyms, and the cache refreshed when the system did not change
 * while it was read (a module loaded meanwhile would key a stale table). */
static int kallsyms_load_text(const char *cache, const struct ksym_key *key, bool *all_zero)
{
	struct ksym_key after;
	int ret = prof_ksym_load_text(&kallsyms, "/proc/kallsyms", all_zero);

	if (ret < 0 || *all_zero || !kallsyms.n || !cache)
		return ret;
	if (prof_ksym_key_current(&after) == 0 && !memcmp(&after, key, sizeof(after)))
		prof_ksym_cache_store(&kallsyms, cache, key);	/* unwritable: no cache */
	return 0;
}

static void kallsyms_load(void)
{
	bool all_zero = false;
	struct ksym_key key;

	if (kallsyms_state)
		return;
	kallsyms_state = -1;
	char *cache = prof_ksym_cache_path();
	if (cache && prof_ksym_key_current(&key) < 0) {
		free(cache);
		cache = NULL;
	}
	int ret = cache ? prof_ksym_cache_load(&kallsyms, cache, &key) : -ENOENT;
	if (ret == 0) {
		kallsyms_state = 1;
	} else if ((ret = kallsyms_load_text(cache, &key, &all_zero)) < 0) {
		kallsyms_problem = strerror(-ret);
	} else if (all_zero || !kallsyms.n) {
		kallsyms_problem = "hidden";
		prof_ksym_free(&kallsyms);
	} else {
		kallsyms_state = 1;
	}
	free(cache);
}

/* Said once, at the first kernel address that needed kallsyms. */
static void kallsyms_warn(void)
{
	static bool warned;

	if (warned || kallsyms_state > 0)
		return;
	warned = true;
	if (!strcmp(kallsyms_problem, "hidden"))
		warning("/proc/kallsyms addresses are hidden (kernel.kptr_restrict); kernel frames show as [kernel]");
	else
		warning("cannot read /proc/kallsyms: %s; kernel frames show as [kernel]", kallsyms_problem);
}

/* libc and the dynamic loader are in nearly every target, and prof_elf is
 * shared by file: opening our own copies (debug info, symbol index) now
 * spares the recorder that stall at the target's first libc sample. */
static void prewarm_own_libc(void)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[4096];

	while (f && fgets(line, sizeof(line), f)) {
		char *path = strchr(line, '/');
		char *perms = strchr(line, ' ');
		if (!path || !perms || perms[3] != 'x' ||
		    (!strstr(path, "/libc.so") && !strstr(path, "/ld-linux")))
			continue;
		path[strcspn(path, "\n")] = '\0';
		struct prof_elf *e = prof_elf_get(path);
		if (e && prof_elf_has_symbols(e) && e->mod && !e->symidx)
			e->symidx = prof_elf_symidx_build(e->mod);
	}
	if (f)
		fclose(f);
}

void prof_sym_prewarm(void)
{
	kallsyms_load();
	prewarm_own_libc();
}

const char *prof_kallsyms_find(uint64_t pc, uint64_t *start)
{
	kallsyms_load();
	kallsyms_warn();
	return kallsyms_state > 0 ? prof_ksym_find(&kallsyms, pc, start) : NULL;
}
