/*
 * elf.c - the process-wide cache of opened binaries (struct prof_elf):
 * opening with libelf, the GNU build-id, PT_LOAD headers for load-bias
 * computation, reading file bytes by virtual address (unwinders need
 * .eh_frame_hdr/.eh_frame through it), and the vdso read from prof's own
 * memory.
 *
 * Design notes / invariants:
 *  - A binary is opened once per (st_dev, st_ino, mtime): two paths to the
 *    same file (symlinks, /proc/PID/map_files) share one prof_elf, and a
 *    file replaced on disk (new inode or mtime) gets a new one.
 *  - prof_elf pointers stay valid until prof_elf_cache_free(); address
 *    spaces and unwinder caches hold them without reference counting.
 *  - Not thread-safe: the recorder symbolizes from one thread.
 */
#include "symbol-priv.h"
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static VEC(struct prof_elf *) elf_cache;
static struct u64map elf_index;	/* hash(dev, ino, mtime) + k -> elf_cache index */
static struct prof_elf *vdso_elf;

static void elf_read_build_id(struct prof_elf *e)
{
	const void *id;
	ssize_t n = dwelf_elf_gnu_build_id(e->elf, &id);

	e->build_id[0] = '\0';
	for (ssize_t i = 0; i < n && i < 64; i++)
		snprintf(e->build_id + 2 * i, 3, "%02x", ((const uint8_t *)id)[i]);
}

static int elf_read_loads(struct prof_elf *e)
{
	GElf_Ehdr eh;
	size_t phnum;

	if (!gelf_getehdr(e->elf, &eh) || elf_getphdrnum(e->elf, &phnum))
		return -ENOEXEC;
	e->type = eh.e_type;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(e->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		struct elf_load l = { ph.p_vaddr, ph.p_offset, ph.p_filesz, ph.p_memsz,
				      ph.p_align, ph.p_flags };
		VEC_PUSH(&e->loads, l);
	}
	return 0;
}

/* Wraps an already-open fd or memory image; takes ownership of fd. */
static struct prof_elf *elf_wrap(const char *path, const char *open_path, int fd,
				 void *mem, size_t memsize)
{
	struct prof_elf *e = xcalloc(1, sizeof(*e));

	elf_version(EV_CURRENT);
	e->fd = fd;
	e->elf = mem ? elf_memory(mem, memsize) : elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e->elf || elf_kind(e->elf) != ELF_K_ELF || elf_read_loads(e) < 0) {
		if (e->elf)
			elf_end(e->elf);
		free(e->loads.v);
		free(e);
		if (fd >= 0)
			close(fd);
		errno = ENOEXEC;
		return NULL;
	}
	e->image = (const uint8_t *)elf_rawfile(e->elf, &e->image_size);
	e->path = xstrdup(path);
	e->open_path = xstrdup(open_path);
	elf_read_build_id(e);
	return e;
}

static uint64_t stat_key(const struct stat *st)
{
	return hash64(st->st_dev ^ hash64(st->st_ino ^ hash64((uint64_t)st->st_mtim.tv_sec * 1000000000ULL +
							     (uint64_t)st->st_mtim.tv_nsec)));
}

struct prof_elf *prof_elf_get(const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return NULL;
	if (!S_ISREG(st.st_mode)) {
		errno = ENOEXEC;
		return NULL;
	}
	int64_t mtime = (int64_t)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
	uint64_t key = stat_key(&st), k, idx;
	for (k = 0; u64map_get(&elf_index, key + k, &idx); k++) {
		struct prof_elf *have = elf_cache.v[idx];
		if (have->dev == st.st_dev && have->ino == st.st_ino && have->mtime_ns == mtime)
			return have;
	}
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct prof_elf *e = fd < 0 ? NULL : elf_wrap(path, path, fd, NULL, 0);
	if (!e)
		return NULL;
	e->dev = st.st_dev;
	e->ino = st.st_ino;
	e->mtime_ns = mtime;
	u64map_put(&elf_index, key + k, elf_cache.n);
	VEC_PUSH(&elf_cache, e);
	return e;
}

/* The vdso's size: the section headers sit at its end. */
static size_t vdso_size(const uint8_t *base)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)base;
	size_t size = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	const Elf64_Phdr *ph = (const Elf64_Phdr *)(base + eh->e_phoff);

	for (unsigned i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD)
			size = MAX(size, ph[i].p_offset + ph[i].p_filesz);
	return size;
}

struct prof_elf *prof_elf_vdso(void)
{
	if (vdso_elf)
		return vdso_elf;
	const uint8_t *base = (const uint8_t *)getauxval(AT_SYSINFO_EHDR);
	if (!base || memcmp(base, ELFMAG, SELFMAG)) {
		errno = ENOENT;
		return NULL;
	}
	size_t size = vdso_size(base);
	void *copy = xmalloc(size);
	memcpy(copy, base, size);
	/* libdw opens modules by file name, so the copy also lives in a memfd. */
	int fd = memfd_create("prof-vdso", MFD_CLOEXEC);
	if (fd < 0 || write_all(fd, copy, size) < 0) {
		int saved = errno;
		if (fd >= 0)
			close(fd);
		free(copy);
		errno = saved;
		return NULL;
	}
	char open_path[64];
	snprintf(open_path, sizeof(open_path), "/proc/self/fd/%d", fd);
	vdso_elf = elf_wrap("[vdso]", open_path, fd, copy, size);
	if (!vdso_elf) {
		free(copy);
		return NULL;
	}
	vdso_elf->image_owned = copy;
	return vdso_elf;
}

const char *prof_elf_path(const struct prof_elf *e) { return e->path; }
const char *prof_elf_build_id(const struct prof_elf *e) { return e->build_id; }
struct Elf *prof_elf_elf(const struct prof_elf *e) { return e->elf; }
int prof_elf_fd(const struct prof_elf *e) { return e->fd; }

/* The PT_LOAD a mapping at file offset pgoff with protection prot maps:
 * its file range must hold pgoff (the kernel maps from the page holding
 * p_offset) and its PF_X must match PROT_EXEC.  lld and mold pack segments
 * so that the r-x one starts mid-page in the file page of the read-only
 * one: the file range alone would pick the read-only segment. */
static const struct elf_load *mapped_segment(const struct prof_elf *e, uint64_t pgoff, uint32_t prot)
{
	const struct elf_load *by_range = NULL;

	for (size_t i = 0; i < e->loads.n; i++) {
		const struct elf_load *l = &e->loads.v[i];
		uint64_t seg_page = l->offset & ~(uint64_t)4095;
		if (pgoff < seg_page || pgoff >= l->offset + MAX(l->filesz, 1))
			continue;
		if (!!(l->flags & PF_X) == !!(prot & PROT_EXEC))
			return l;
		if (!by_range)
			by_range = l;
	}
	return by_range;
}

uint64_t prof_elf_bias(const struct prof_elf *e, uint64_t start, uint64_t pgoff, uint32_t prot)
{
	const struct elf_load *l = mapped_segment(e, pgoff, prot);

	/* bias = start - (the vaddr file offset pgoff corresponds to); this also
	 * holds for an ET_EXEC mapped a second time elsewhere (V8's builtins) */
	if (l)
		return start - (l->vaddr + pgoff - l->offset);
	/* No segment holds pgoff: assume the classic layout (first PT_LOAD at 0). */
	return e->type == ET_EXEC ? 0 : start - pgoff;
}

int prof_elf_read_vaddr(const struct prof_elf *e, uint64_t vaddr, void *buf, size_t len)
{
	for (size_t i = 0; i < e->loads.n; i++) {
		const struct elf_load *l = &e->loads.v[i];
		if (vaddr < l->vaddr || vaddr - l->vaddr >= l->filesz || len > l->filesz - (vaddr - l->vaddr))
			continue;
		uint64_t off = l->offset + (vaddr - l->vaddr);
		if (!e->image || off > e->image_size || len > e->image_size - off)
			return -EFAULT;
		memcpy(buf, e->image + off, len);
		return 0;
	}
	return -EFAULT;
}

bool prof_elf_load_range(const struct prof_elf *e, uint64_t *lo, uint64_t *hi)
{
	if (!e->loads.n)
		return false;
	const struct elf_load *first = &e->loads.v[0];
	*lo = first->align > 1 ? first->vaddr & -first->align : first->vaddr;
	*hi = 0;
	for (size_t i = 0; i < e->loads.n; i++)
		*hi = MAX(*hi, e->loads.v[i].vaddr + e->loads.v[i].memsz);
	return true;
}

struct Elf *prof_elf_elf_ref(const struct prof_elf *e)
{
	/* libelf hands back the same read-only handle with one more
	 * reference: no second mmap, no re-read of the headers */
	return elf_begin(e->fd, ELF_C_READ_MMAP, e->elf);
}

struct Dwarf_CFI_s *prof_elf_eh_cfi(struct prof_elf *e)
{
	if (!e->cfi_eh_tried) {
		e->cfi_eh_tried = true;
		e->cfi_eh = dwarf_getcfi_elf(e->elf);
	}
	return e->cfi_eh;
}

void **prof_elf_unwind_slot(struct prof_elf *e, void (*free_fn)(void *))
{
	e->unwind_cache_free = free_fn;
	return &e->unwind_cache;
}

static void elf_free(struct prof_elf *e)
{
	if (e->unwind_cache && e->unwind_cache_free)
		e->unwind_cache_free(e->unwind_cache);
	if (e->cfi_eh)
		dwarf_cfi_end(e->cfi_eh);
	prof_elf_symidx_free(e->symidx);
	prof_elf_scopes_free(e->scopes);
	prof_elf_synth_free(e->synth);
	prof_elf_go_free(e);
	if (e->dwfl)
		dwfl_end(e->dwfl);
	elf_end(e->elf);
	if (e->fd >= 0)
		close(e->fd);
	free(e->image_owned);
	free(e->loads.v);
	free(e->path);
	free(e->open_path);
	free(e);
}

void prof_elf_cache_free(void)
{
	for (size_t i = 0; i < elf_cache.n; i++)
		elf_free(elf_cache.v[i]);
	VEC_FREE(&elf_cache);
	u64map_free(&elf_index);
	memset(&elf_index, 0, sizeof(elf_index));
	if (vdso_elf)
		elf_free(vdso_elf);
	vdso_elf = NULL;
}
