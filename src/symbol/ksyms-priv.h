/*
 * ksyms-priv.h - the kernel's text symbols (/proc/kallsyms) as one flat,
 * position-independent image: sorted start addresses, name offsets and a
 * string pool.  The same bytes are the in-memory table and the persistent
 * cache file ($XDG_CACHE_HOME/prof/kallsyms), so a later run on the same
 * boot with the same modules maps the file instead of paying the kernel's
 * slow /proc/kallsyms formatting (see ksyms.c).
 */
#ifndef PROF_SYMBOL_KSYMS_H
#define PROF_SYMBOL_KSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a cache is valid for: this boot, these loaded modules. */
struct ksym_key {
	char boot_id[40];	/* /proc/sys/kernel/random/boot_id, NUL-padded */
	uint64_t modules_hash;	/* names, sizes, addresses of /proc/modules */
};

struct ksym_table {
	const uint64_t *start;	/* n ascending addresses */
	const uint32_t *name;	/* n offsets into strs */
	const char *strs;	/* strs_len bytes, the last one NUL */
	size_t n, strs_len;
	void *image;		/* the whole image: malloc'd or mmap'ed */
	size_t image_len;
	bool mapped;
};

/* Parses kallsyms text (the file at path); keeps t, T, w, W symbols.
 * Returns 0 or -errno; *all_zero tells if kptr_restrict hid addresses. */
int prof_ksym_load_text(struct ksym_table *t, const char *path, bool *all_zero);
/* Maps a cache file made for key: 0, or negative (missing, stale,
 * truncated or malformed: every field is checked, nothing is trusted). */
int prof_ksym_cache_load(struct ksym_table *t, const char *path, const struct ksym_key *key);
/* Writes t for key atomically (temp file, rename; mode 0600): 0 or -errno. */
int prof_ksym_cache_store(const struct ksym_table *t, const char *path, const struct ksym_key *key);
/* The key of the running system: 0 or -errno. */
int prof_ksym_key_current(struct ksym_key *key);
/* The cache path (prof_sym_cache_dir()/kallsyms), malloc'd; NULL if no dir. */
char *prof_ksym_cache_path(void);
/* prof's cache directory ($XDG_CACHE_HOME/prof, else ~/.cache/prof),
 * malloc'd; NULL when neither variable is set (or is relative). */
char *prof_sym_cache_dir(void);
/* mkdir -p (mode 0700: caches are private) of the directories above path. */
int prof_sym_cache_mkdirs(const char *path);
/* Inflated copies of debug files by build-id (debugcache.c): the fd of the
 * copy for id (and its path in *path, malloc'd), or -1 if there is none. */
int prof_sym_debug_cache_find(const unsigned char *id, int len, char **path);
/* Makes the copy for id from the debug file open as fd, if it has
 * compressed sections; 0 or negative (then nothing changed). */
int prof_sym_debug_cache_add(int fd, const unsigned char *id, int len);
/* The symbol containing addr (a symbol ends where the next begins), its
 * start in *start; NULL if none. */
const char *prof_ksym_find(const struct ksym_table *t, uint64_t addr, uint64_t *start);
void prof_ksym_free(struct ksym_table *t);

#endif
