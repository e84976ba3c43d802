/*
 * ksyms.c - kernel text symbols from /proc/kallsyms and their persistent
 * cache.  Reading /proc/kallsyms costs tens of milliseconds of kernel time
 * (every line is formatted by vsnprintf on each read), more than the whole
 * rest of a short `prof report -i perf.data`; the parsed table is saved as a
 * flat image and mapped by later runs of the same boot.
 *
 * Design notes / invariants:
 *  - The image is: header, u64 start[n] (ascending), u32 name[n] (offsets
 *    into strs), padding to 8, char strs[strs_len] (NUL-terminated names,
 *    the last byte NUL).  Built in memory exactly as it is stored, so
 *    storing is one write and loading is one mmap.
 *  - Equal starts (aliases) keep /proc/kallsyms line order; lookups take
 *    the last entry with start <= addr: an alias resolves to the name
 *    listed last.
 *  - A cache is valid for one boot (boot_id) and one set of loaded modules
 *    (names, sizes, load addresses of /proc/modules; refcounts are left out
 *    because they change all the time).  BPF programs and ftrace
 *    trampolines come and go without either changing: their names may be
 *    stale, kernel and module text never is.
 *  - The cache file is untrusted: its size must be exactly what the header
 *    says, starts ascending, every name offset inside strs, strs ending in
 *    NUL.  Anything else is ignored (and rebuilt by the caller).  It is
 *    written to a mkstemp file (mode 0600, O_EXCL) and renamed into place,
 *    so readers never see half a file and no planted symlink is followed.
 */
#include "ksyms-priv.h"
#include "prof/util.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define KSYM_MAGIC "PROFKSY1"
#define KSYM_LAST_SIZE 4096	/* the last symbol has no successor to end it */

struct ksym_header {
	char magic[8];
	char boot_id[40];
	uint64_t modules_hash;
	uint64_t n, strs_len;
};

struct ksym_raw {		/* one parsed line, before the image is laid out */
	uint64_t start;
	uint32_t name;		/* offset into the name pool */
	uint32_t line;		/* tie-break: keeps aliases in file order */
};

static size_t align8(size_t v)
{
	return (v + 7) & ~(size_t)7;
}

/* Where the arrays start inside an image of n entries. */
static size_t names_offset(size_t n)
{
	return sizeof(struct ksym_header) + n * sizeof(uint64_t);
}

static size_t strs_offset(size_t n)
{
	return align8(names_offset(n) + n * sizeof(uint32_t));
}

static void table_point(struct ksym_table *t, void *image, size_t len, size_t n, size_t strs_len)
{
	const uint8_t *b = image;

	t->image = image;
	t->image_len = len;
	t->n = n;
	t->strs_len = strs_len;
	t->start = (const uint64_t *)(b + sizeof(struct ksym_header));
	t->name = (const uint32_t *)(b + names_offset(n));
	t->strs = (const char *)(b + strs_offset(n));
}

/* ---- /proc/kallsyms text -------------------------------------------------- */

/* One line, "ADDR TYPE NAME[\t[module]]": hand-written, because sscanf was
 * a third of loading 120k lines.  Sets *name_len; false if malformed. */
static bool parse_line(const char *line, uint64_t *start, char *type, const char **name,
		       size_t *name_len)
{
	uint64_t v = 0;
	const char *c = line;

	for (;; c++) {
		unsigned d = (unsigned)(*c | 0x20);	/* lower-case letters */
		if (*c >= '0' && *c <= '9')
			v = v << 4 | (unsigned)(*c - '0');
		else if (d >= 'a' && d <= 'f')
			v = v << 4 | (d - 'a' + 10);
		else
			break;
	}
	if (c == line || c[0] != ' ' || !c[1] || c[1] == '\n' || c[2] != ' ')
		return false;
	*start = v;
	*type = c[1];
	*name = c + 3;
	*name_len = strcspn(*name, " \t\n");
	return *name_len > 0;
}

static bool is_text_type(char type)
{
	return type == 't' || type == 'T' || type == 'w' || type == 'W';
}

static int cmp_raw(const void *a, const void *b)
{
	const struct ksym_raw *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

static bool raw_sorted(const struct ksym_raw *r, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (r[i - 1].start > r[i].start)
			return false;
	return true;
}

/* Lays out the image from parsed entries and their name pool. */
static void build_image(struct ksym_table *t, struct ksym_raw *raw, size_t n,
			const struct strbuf *pool)
{
	/* /proc/kallsyms comes mostly sorted: skip the sort when it is */
	if (!raw_sorted(raw, n))
		qsort(raw, n, sizeof(*raw), cmp_raw);
	size_t strs_len = pool->len + 1;	/* keeps the pool's final NUL */
	size_t len = strs_offset(n) + strs_len;
	uint8_t *img = xcalloc(1, len);
	struct ksym_header *h = (struct ksym_header *)img;

	memcpy(h->magic, KSYM_MAGIC, sizeof(h->magic));
	h->n = n;
	h->strs_len = strs_len;
	table_point(t, img, len, n, strs_len);
	for (size_t i = 0; i < n; i++) {
		((uint64_t *)(uintptr_t)t->start)[i] = raw[i].start;
		((uint32_t *)(uintptr_t)t->name)[i] = raw[i].name;
	}
	memcpy((char *)(uintptr_t)t->strs, pool->buf ? pool->buf : "", strs_len);
}

int prof_ksym_load_text(struct ksym_table *t, const char *path, bool *all_zero)
{
	size_t len;
	char *text = read_file(path, &len);

	memset(t, 0, sizeof(*t));
	*all_zero = true;
	if (!text)
		return -errno;
	VEC(struct ksym_raw) raw = { 0 };
	struct strbuf pool = STRBUF_INIT;
	for (char *line = text; line < text + len;) {
		char *nl = memchr(line, '\n', (size_t)(text + len - line));
		char *next = nl ? nl + 1 : text + len;
		uint64_t start;
		char type;
		const char *name;
		size_t name_len;

		if (nl)
			*nl = '\0';	/* the parser stops at NUL: no read past the line */
		if (parse_line(line, &start, &type, &name, &name_len)) {
			*all_zero &= start == 0;
			if (is_text_type(type) && pool.len < UINT32_MAX - 4096) {
				struct ksym_raw r = { start, (uint32_t)pool.len, (uint32_t)raw.n };
				VEC_PUSH(&raw, r);
				sb_add(&pool, name, name_len);
				sb_addch(&pool, '\0');
			}
		}
		line = next;
	}
	free(text);
	build_image(t, raw.v, raw.n, &pool);
	free(raw.v);
	sb_release(&pool);
	return 0;
}

/* ---- the cache file --------------------------------------------------------- */

/* Every field of an image checked against its real length; true if usable. */
static bool image_valid(const uint8_t *img, size_t len, const struct ksym_key *key)
{
	struct ksym_header h;

	if (len < sizeof(h))
		return false;
	memcpy(&h, img, sizeof(h));
	if (memcmp(h.magic, KSYM_MAGIC, sizeof(h.magic)) ||
	    memcmp(h.boot_id, key->boot_id, sizeof(h.boot_id)) ||
	    h.modules_hash != key->modules_hash)
		return false;
	/* 12 bytes per entry at least: bounds n before any multiplication */
	if (h.n == 0 || h.n > (len - sizeof(h)) / 12 || h.strs_len == 0 ||
	    h.strs_len > len || strs_offset(h.n) + h.strs_len != len)
		return false;
	struct ksym_table t;
	table_point(&t, (void *)(uintptr_t)img, len, h.n, h.strs_len);
	if (t.strs[t.strs_len - 1] != '\0')
		return false;
	for (size_t i = 0; i < t.n; i++)
		if (t.name[i] >= t.strs_len || (i && t.start[i - 1] > t.start[i]))
			return false;
	return true;
}

int prof_ksym_cache_load(struct ksym_table *t, const char *path, const struct ksym_key *key)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

	memset(t, 0, sizeof(*t));
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) {
		close(fd);
		return -EINVAL;
	}
	size_t len = (size_t)st.st_size;
	void *img = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (img == MAP_FAILED)
		return -errno;
	if (!image_valid(img, len, key)) {
		munmap(img, len);
		return -EINVAL;
	}
	struct ksym_header h;
	memcpy(&h, img, sizeof(h));
	table_point(t, img, len, h.n, h.strs_len);
	t->mapped = true;
	return 0;
}

int prof_sym_cache_mkdirs(const char *path)
{
	char *dir = xstrdup(path);

	for (char *s = strchr(dir + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
			int e = errno;
			free(dir);
			return -e;
		}
		*s = '/';
	}
	free(dir);
	return 0;
}

int prof_ksym_cache_store(const struct ksym_table *t, const char *path, const struct ksym_key *key)
{
	if (!t->n || prof_sym_cache_mkdirs(path) < 0)
		return -EINVAL;
	char *tmp = xasprintf("%s.XXXXXX", path);
	int fd = mkstemp(tmp);	/* O_EXCL, mode 0600 */
	int ret = fd < 0 ? -errno : 0;
	struct ksym_header h;

	memcpy(&h, t->image, sizeof(h));
	memcpy(h.boot_id, key->boot_id, sizeof(h.boot_id));
	h.modules_hash = key->modules_hash;
	if (!ret)
		ret = write_all(fd, &h, sizeof(h));
	if (!ret)
		ret = write_all(fd, (const uint8_t *)t->image + sizeof(h), t->image_len - sizeof(h));
	ret = finish_temp_file(fd, tmp, path, ret);
	free(tmp);
	return ret;
}

/* ---- the running system --------------------------------------------------- */

/* Name, size and address of every module (fields 1, 2 and 6). */
static uint64_t hash_modules(const char *text)
{
	struct strbuf sb = STRBUF_INIT;

	for (const char *line = text; *line;) {
		size_t len = strcspn(line, "\n");
		char *copy = xstrndup(line, len), *save = NULL;
		int field = 0;
		for (char *w = strtok_r(copy, " ", &save); w; w = strtok_r(NULL, " ", &save))
			if (++field == 1 || field == 2 || field == 6) {
				sb_adds(&sb, w);
				sb_addch(&sb, ' ');
			}
		sb_addch(&sb, '\n');
		free(copy);
		line += len + (line[len] == '\n');
	}
	uint64_t h = hash_bytes(sb.buf ? sb.buf : "", sb.len);
	sb_release(&sb);
	return h;
}

int prof_ksym_key_current(struct ksym_key *key)
{
	char *id = read_file("/proc/sys/kernel/random/boot_id", NULL);

	memset(key, 0, sizeof(*key));
	if (!id)
		return -errno;
	size_t n = strcspn(id, "\n");
	memcpy(key->boot_id, id, MIN(n, sizeof(key->boot_id) - 1));
	free(id);
	if (n == 0)
		return -EINVAL;
	char *mods = read_file("/proc/modules", NULL);	/* absent without modules */
	key->modules_hash = hash_modules(mods ? mods : "");
	free(mods);
	return 0;
}

char *prof_sym_cache_dir(void)
{
	const char *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");

	if (xdg && xdg[0] == '/')	/* the spec says: relative ones are ignored */
		return xasprintf("%s/prof", xdg);
	if (home && home[0] == '/')
		return xasprintf("%s/.cache/prof", home);
	return NULL;
}

char *prof_ksym_cache_path(void)
{
	char *dir = prof_sym_cache_dir();
	char *path = dir ? xasprintf("%s/kallsyms", dir) : NULL;

	free(dir);
	return path;
}

/* ---- lookups ---------------------------------------------------------------- */

const char *prof_ksym_find(const struct ksym_table *t, uint64_t addr, uint64_t *start)
{
	size_t lo = 0, hi = t->n;

	while (lo < hi) {	/* last entry with start <= addr */
		size_t mid = lo + (hi - lo) / 2;
		if (t->start[mid] <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	size_t i = lo - 1;
	uint64_t size = i + 1 < t->n ? t->start[i + 1] - t->start[i] : KSYM_LAST_SIZE;
	if (addr - t->start[i] >= size)
		return NULL;
	*start = t->start[i];
	return t->strs + t->name[i];
}

void prof_ksym_free(struct ksym_table *t)
{
	if (t->mapped)
		munmap(t->image, t->image_len);
	else
		free(t->image);
	memset(t, 0, sizeof(*t));
}
