/*
 * btf.c - where a field of a kernel struct lives in the running kernel
 * (see include/prof/perf.h, prof_btf_members): read from the kernel's own
 * type information, /sys/kernel/btf/vmlinux, so that a hand-assembled BPF
 * program can read a task_struct field without a compiler, libbpf or a
 * hard-coded offset that changes with every kernel build.
 *
 * Design notes / invariants:
 *  - The file is the raw BTF blob (uapi linux/btf.h): a header, the types
 *    (id 1 onwards, each a struct btf_type and a kind-dependent tail),
 *    and the strings.  One pass indexes the types by id; a member path
 *    ("se.sched_delayed") then walks struct members through typedefs and
 *    qualifiers.  Only whole-byte members are answered: a bitfield is
 *    -EINVAL (its byte offset alone would not say which bits).
 *  - Anything malformed is -EINVAL, never a read past the blob.
 *  - The blob (5.5 MB on Debian's 6.x kernels) is mapped where the kernel
 *    allows it (Linux 6.16 and later), else read whole into one buffer of
 *    the file's size.  sysfs hands it out 4 KiB a read; read through a
 *    growing buffer it was a third of a short `prof record`'s CPU here
 *    (docs/measurements/2026-12-05-record-startup.md).
 */
#include "prof/perf.h"
#include <errno.h>
#include <fcntl.h>
#include <linux/btf.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define VMLINUX_BTF "/sys/kernel/btf/vmlinux"

struct blob {
	const uint8_t *types, *strs;
	uint32_t types_len, strs_len;
	VEC(uint32_t) at;	/* id - 1 -> offset of its btf_type in types */
};

/* The size of a type's tail after struct btf_type, by kind; -1 unknown. */
static long tail_size(const struct btf_type *t)
{
	uint32_t vlen = BTF_INFO_VLEN(t->info);

	switch (BTF_INFO_KIND(t->info)) {
	case BTF_KIND_INT: case BTF_KIND_VAR: case BTF_KIND_DECL_TAG: return 4;
	case BTF_KIND_ARRAY: return (long)sizeof(struct btf_array);
	case BTF_KIND_STRUCT: case BTF_KIND_UNION: return (long)vlen * (long)sizeof(struct btf_member);
	case BTF_KIND_ENUM: return (long)vlen * (long)sizeof(struct btf_enum);
	case BTF_KIND_FUNC_PROTO: return (long)vlen * (long)sizeof(struct btf_param);
	case BTF_KIND_DATASEC: return (long)vlen * (long)sizeof(struct btf_var_secinfo);
	case BTF_KIND_ENUM64: return (long)vlen * 12;
	case BTF_KIND_PTR: case BTF_KIND_FWD: case BTF_KIND_TYPEDEF: case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST: case BTF_KIND_RESTRICT: case BTF_KIND_FUNC: case BTF_KIND_FLOAT:
	case BTF_KIND_TYPE_TAG: return 0;
	}
	return -1;
}

static int index_types(struct blob *b)
{
	uint32_t off = 0;

	while (off + sizeof(struct btf_type) <= b->types_len) {
		const struct btf_type *t = (const void *)(b->types + off);
		long tail = tail_size(t);
		if (tail < 0)
			return -EINVAL;
		VEC_PUSH(&b->at, off);
		off += (uint32_t)(sizeof(*t) + (size_t)tail);
	}
	return off == b->types_len ? 0 : -EINVAL;
}

static const struct btf_type *type_of(const struct blob *b, uint32_t id)
{
	if (!id || id > b->at.n || b->at.v[id - 1] + sizeof(struct btf_type) > b->types_len)
		return NULL;
	return (const void *)(b->types + b->at.v[id - 1]);
}

static const char *name_of(const struct blob *b, uint32_t off)
{
	return off < b->strs_len && memchr(b->strs + off, 0, b->strs_len - off) ? (const char *)b->strs + off : "";
}

/* Through typedefs and qualifiers to the type itself. */
static const struct btf_type *resolve(const struct blob *b, uint32_t id)
{
	const struct btf_type *t = type_of(b, id);

	for (int hops = 0; t && hops < 32; hops++) {
		uint32_t k = BTF_INFO_KIND(t->info);
		if (k != BTF_KIND_TYPEDEF && k != BTF_KIND_VOLATILE && k != BTF_KIND_CONST &&
		    k != BTF_KIND_RESTRICT && k != BTF_KIND_TYPE_TAG)
			return t;
		t = type_of(b, t->type);
	}
	return NULL;
}

static bool is_struct(const struct btf_type *t)
{
	return t && (BTF_INFO_KIND(t->info) == BTF_KIND_STRUCT || BTF_INFO_KIND(t->info) == BTF_KIND_UNION);
}

/* The member `name` of struct t: its bit offset, type id and, for a
 * bitfield, its width (else 0).  A member of an anonymous struct or union
 * inside t is t's, as in C (hw_perf_event's hrtimer); depth bounds the
 * search in a blob that nests them in a loop. */
static int member(const struct blob *b, const struct btf_type *t, const char *name, uint32_t len,
		  uint32_t *bits, uint32_t *type, uint32_t *width, int depth)
{
	const struct btf_member *m = (const void *)(t + 1);
	bool kflag = BTF_INFO_KFLAG(t->info);

	for (uint32_t i = 0; i < BTF_INFO_VLEN(t->info); i++) {
		const char *n = name_of(b, m[i].name_off);
		uint32_t at = kflag ? BTF_MEMBER_BIT_OFFSET(m[i].offset) : m[i].offset;
		const struct btf_type *inner;
		if (!*n && depth < 8 && is_struct(inner = resolve(b, m[i].type)) &&
		    member(b, inner, name, len, bits, type, width, depth + 1) == 0) {
			*bits += at;
			return 0;
		}
		if (strlen(n) != len || memcmp(n, name, len))
			continue;
		*width = kflag ? BTF_MEMBER_BITFIELD_SIZE(m[i].offset) : 0;
		*bits = at;
		*type = m[i].type;
		return 0;
	}
	return -ENOENT;
}

/* struct `type`: the first with members, not a forward declaration. */
static const struct btf_type *find_struct(const struct blob *b, const char *type)
{
	for (uint32_t id = 1; id <= b->at.n; id++) {
		const struct btf_type *t = type_of(b, id);
		if (BTF_INFO_KIND(t->info) == BTF_KIND_STRUCT && BTF_INFO_VLEN(t->info) &&
		    !strcmp(name_of(b, t->name_off), type))
			return t;
	}
	return NULL;
}

static int walk(const struct blob *b, const char *type, const char *path, struct prof_btf_field *f)
{
	const struct btf_type *t = find_struct(b, type);
	uint32_t bits = 0, id = 0, width = 0;

	if (!t)
		return -ENOENT;
	for (const char *p = path; *p;) {
		uint32_t len = (uint32_t)strcspn(p, "."), mbits;
		int ret;
		if (!is_struct(t))
			return -ENOENT;
		if (width || (ret = member(b, t, p, len, &mbits, &id, &width, 0)) < 0)
			return width ? -EINVAL : ret;	/* no member inside a bitfield */
		bits += mbits;
		t = resolve(b, id);
		p += len + (p[len] == '.');
	}
	if (width) {	/* a bitfield within one byte: that byte, and where in it */
		if (bits % 8 + width > 8)
			return -EINVAL;
		*f = (struct prof_btf_field){ bits / 8, 1, (uint8_t)(bits % 8), (uint8_t)width, true };
		return 0;
	}
	if (!t || bits % 8)
		return -EINVAL;
	switch (BTF_INFO_KIND(t->info)) {
	case BTF_KIND_INT: case BTF_KIND_ENUM: case BTF_KIND_ENUM64: case BTF_KIND_STRUCT:
	case BTF_KIND_UNION: case BTF_KIND_FLOAT:
		f->size = t->size;
		break;
	case BTF_KIND_PTR:
		f->size = 8;
		break;
	default:
		return -EINVAL;
	}
	f->off = bits / 8;
	f->found = true;
	return 0;
}

/* Reads fd's len bytes into one buffer; NULL if it holds fewer. */
static uint8_t *read_whole(int fd, size_t len)
{
	uint8_t *buf = xmalloc(len ? len : 1);
	size_t got = 0;

	while (got < len) {
		ssize_t r = read(fd, buf + got, len - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	if (got == len)
		return buf;
	free(buf);
	return NULL;
}

/* The kernel's BTF blob, mapped (*mapped) or read; NULL if unreadable.
 * A file that gives no size is read to its end. */
static uint8_t *load_vmlinux(size_t *len, bool *mapped)
{
	int fd = open(VMLINUX_BTF, O_RDONLY | O_CLOEXEC);
	struct stat st;
	uint8_t *raw = NULL;

	*mapped = false;
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) == 0 && st.st_size > 0) {
		*len = (size_t)st.st_size;
		void *m = mmap(NULL, *len, PROT_READ, MAP_PRIVATE, fd, 0);
		*mapped = m != MAP_FAILED;
		raw = *mapped ? m : read_whole(fd, *len);
	}
	close(fd);
	return raw ? raw : (uint8_t *)read_file(VMLINUX_BTF, len);
}

/* The running kernel's BTF, mapped or read, and its types indexed; raw
 * NULL when it cannot be read.  Once per question asked, not per field:
 * indexing it is ~2 ms here. */
struct loaded {
	uint8_t *raw;
	size_t len;
	bool mapped;
	struct blob b;
};

static int blob_open(struct loaded *l)
{
	const struct btf_header *h;

	*l = (struct loaded){ 0 };
	if (!(l->raw = load_vmlinux(&l->len, &l->mapped)))
		return -ENOENT;
	h = (const void *)l->raw;
	if (l->len < sizeof(*h) || h->magic != BTF_MAGIC || h->hdr_len > l->len ||
	    (uint64_t)h->hdr_len + h->type_off + h->type_len > l->len ||
	    (uint64_t)h->hdr_len + h->str_off + h->str_len > l->len)
		return -EINVAL;
	l->b.types = l->raw + h->hdr_len + h->type_off;
	l->b.types_len = h->type_len;
	l->b.strs = l->raw + h->hdr_len + h->str_off;
	l->b.strs_len = h->str_len;
	return index_types(&l->b);
}

static void blob_close(struct loaded *l)
{
	VEC_FREE(&l->b.at);
	if (l->mapped)
		munmap(l->raw, l->len);
	else
		free(l->raw);
}

int prof_btf_fields(const struct prof_btf_query *q, size_t n, struct prof_btf_field *out)
{
	struct loaded l;
	int ret = blob_open(&l);

	for (size_t i = 0; i < n; i++)
		if (ret < 0 || walk(&l.b, q[i].type, q[i].path, &out[i]) < 0)
			out[i] = (struct prof_btf_field){ 0 };
	blob_close(&l);
	return ret;
}

int prof_btf_members(const char *type, const char *const *paths, size_t n, struct prof_btf_field *out)
{
	struct prof_btf_query *q = xcalloc(n ? n : 1, sizeof(*q));
	int ret;

	for (size_t i = 0; i < n; i++)
		q[i] = (struct prof_btf_query){ type, paths[i] };
	ret = prof_btf_fields(q, n, out);
	free(q);
	return ret;
}
