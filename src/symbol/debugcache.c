/*
 * debugcache.c - decompressed copies of separate debug files, kept in
 * $XDG_CACHE_HOME/prof/debug/BUILDID.debug.  Distributions ship debug
 * files (Debian's libc6-dbg: 4 MB of zlib) with SHF_COMPRESSED sections,
 * and libdw 0.188 inflates every one of them when it opens the file: 36 ms
 * for libc alone, most of a short `prof report -i perf.data`.  The first
 * run writes the inflated file once; later runs hand libdw the copy, which
 * it maps as it is.
 *
 * Design notes / invariants:
 *  - The copy is named by the build-id of the module and only used when
 *    its own build-id note says the same and it has no compressed section
 *    left; anything else (truncated, foreign, half-written) is rebuilt.
 *    Its bytes are otherwise as untrusted as any ELF file: libdw parses it
 *    like the original.
 *  - Written to a mkstemp file (0600) in the cache directory, then renamed:
 *    no reader ever sees a partial copy and no planted symlink is followed.
 *  - Every failure (unwritable cache, disk full, libelf error) just means
 *    the original file is used.
 */
#include "symbol-priv.h"
#include "ksyms-priv.h"
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

static bool has_compressed_sections(Elf *elf)
{
	for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_COMPRESSED))
			return true;
	}
	return false;
}

/* dwz files name their shared part relative to the debug file's own
 * directory: a copy elsewhere would lose it, so those are left alone. */
static bool has_alt_link(Elf *elf)
{
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return true;
	for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
		GElf_Shdr sh;
		const char *name = gelf_getshdr(scn, &sh) ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;
		if (name && !strcmp(name, ".gnu_debugaltlink"))
			return true;
	}
	return false;
}

static bool build_id_is(Elf *elf, const unsigned char *id, int len)
{
	const void *have;
	ssize_t n = dwelf_elf_gnu_build_id(elf, &have);

	return n == len && !memcmp(have, id, (size_t)len);
}

/* The fd of path if it is a usable copy for build-id id, else -1. */
static int open_copy(const char *path, const unsigned char *id, int len)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return -1;
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	bool good = elf && build_id_is(elf, id, len) && !has_compressed_sections(elf);
	elf_end(elf);
	if (!good) {
		close(fd);
		return -1;
	}
	return fd;
}

static int copy_bytes(int from, int to)
{
	struct stat st;
	off_t off = 0;

	if (fstat(from, &st) < 0)
		return -errno;
	while (off < st.st_size) {
		ssize_t n = sendfile(to, from, &off, (size_t)(st.st_size - off));
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
	}
	return 0;
}

/* Inflates every SHF_COMPRESSED section of the ELF file open as fd, in place. */
static int inflate_in_place(int fd)
{
	Elf *elf = elf_begin(fd, ELF_C_RDWR, NULL);
	int ret = elf ? 0 : -EINVAL;

	for (Elf_Scn *scn = elf ? elf_nextscn(elf, NULL) : NULL; scn && !ret;
	     scn = elf_nextscn(elf, scn)) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_COMPRESSED) &&
		    elf_compress(scn, 0, 0) < 0)
			ret = -EINVAL;
	}
	if (!ret && elf_update(elf, ELF_C_WRITE) < 0)
		ret = -EINVAL;
	elf_end(elf);
	return ret;
}

/* Writes the inflated copy of fd to path atomically (fd's offset is kept). */
static int write_copy(int fd, const char *path)
{
	char *tmp = xasprintf("%s.XXXXXX", path);
	int out = mkstemp(tmp);
	int ret = out < 0 ? -errno : copy_bytes(fd, out);

	if (!ret)
		ret = inflate_in_place(out);
	ret = finish_temp_file(out, tmp, path, ret);
	free(tmp);
	return ret;
}

static char *copy_path(const unsigned char *id, int len)
{
	char *dir = prof_sym_cache_dir();

	if (!dir)
		return NULL;
	struct strbuf sb = STRBUF_INIT;
	sb_addf(&sb, "%s/debug/", dir);
	for (int i = 0; i < len; i++)
		sb_addf(&sb, "%02x", id[i]);
	sb_adds(&sb, ".debug");
	free(dir);
	return sb.buf;
}

int prof_sym_debug_cache_find(const unsigned char *id, int len, char **path)
{
	char *p = len >= 8 ? copy_path(id, len) : NULL;	/* short ids name nothing */
	int fd = p ? open_copy(p, id, len) : -1;

	if (fd >= 0)
		*path = p;
	else
		free(p);
	return fd;
}

int prof_sym_debug_cache_add(int fd, const unsigned char *id, int len)
{
	if (len < 8)
		return -EINVAL;
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	bool worth = elf && has_compressed_sections(elf) && !has_alt_link(elf) &&
		     build_id_is(elf, id, len);
	elf_end(elf);
	char *path = worth ? copy_path(id, len) : NULL;
	int ret = path ? prof_sym_cache_mkdirs(path) : -EINVAL;

	if (!ret)
		ret = write_copy(fd, path);
	free(path);
	return ret;
}
