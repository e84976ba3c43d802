/*
 * parse.c - the perf.data container: file header, attrs with their sample
 * ids, feature sections (build ids, hostname, osrelease, cmdline, nrcpus,
 * event names), pipe-mode inline headers, zstd-compressed records, and the
 * record list sorted by time.  Layout reference: perf's
 * tools/perf/Documentation/perf.data-file-format.txt and
 * <linux/perf_event.h>.
 *
 * Design notes / invariants:
 *  - Every read is bounds-checked against the buffer; multi-byte fields
 *    are read with memcpy because fuzzed (and some real) offsets are not
 *    8-aligned.  Only native-endian files are accepted.
 *  - f->records point into f->buf or into f->owned (decompressed bytes);
 *    both live until perfdata_close().  Each record's size was checked to be
 *    >= sizeof(struct perf_event_header) and inside its buffer.
 *  - Records are sorted by time with file order as tie-break, which is
 *    what perf's ordered-events queue does with FINISHED_ROUND: a sample
 *    read from one CPU's buffer can precede in the file the MMAP (from
 *    another CPU's buffer) that it needs.  Records without a time inherit
 *    the previous record's.
 */
#include "prof/perfdata.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#ifdef HAVE_ZSTD
#include <zstd.h>
#endif

#define PERFDATA_MAGIC 0x32454c4946524550ULL	/* "PERFILE2" little-endian */
#define PERFDATA_MAGIC_SWAPPED 0x50455246494c4532ULL

enum {	/* perf's user-space record types (tools/lib/perf/include/perf/event.h) */
	PERFDATA_HEADER_ATTR = 64,
	PERFDATA_HEADER_EVENT_TYPE = 65,
	PERFDATA_HEADER_TRACING_DATA = 66,
	PERFDATA_HEADER_BUILD_ID = 67,
	PERFDATA_FINISHED_ROUND = 68,
	PERFDATA_AUXTRACE = 71,
	PERFDATA_EVENT_UPDATE = 78,
	PERFDATA_HEADER_FEATURE = 80,
	PERFDATA_COMPRESSED = 81,
};

enum {	/* feature bits (tools/perf/util/header.h) */
	PERFDATA_FEAT_TRACING_DATA = 1,
	PERFDATA_FEAT_BUILD_ID = 2,
	PERFDATA_FEAT_HOSTNAME = 3,
	PERFDATA_FEAT_OSRELEASE = 4,
	PERFDATA_FEAT_VERSION = 5,
	PERFDATA_FEAT_ARCH = 6,
	PERFDATA_FEAT_NRCPUS = 7,
	PERFDATA_FEAT_CMDLINE = 11,
	PERFDATA_FEAT_EVENT_DESC = 12,
	PERFDATA_FEAT_DIR_FORMAT = 24,
	PERFDATA_FEAT_COMPRESSED = 27,
	PERFDATA_FEAT_MAX = 256,
};

#define PERFDATA_BUILD_ID_SIZE_MISC (1 << 15)	/* PERF_RECORD_MISC_BUILD_ID_SIZE */
#define PERFDATA_EVENT_UPDATE_NAME 2

struct perfdata_section {
	uint64_t offset, size;
};

struct perfdata_header {		/* struct perf_file_header */
	uint64_t magic, size, attr_size;
	struct perfdata_section attrs, data, event_types;
	uint64_t features[PERFDATA_FEAT_MAX / 64];
};

struct cursor {			/* a bounds-checked reader over one section */
	const uint8_t *p;
	size_t left;
	bool bad;
};

static bool cur_take(struct cursor *c, void *out, size_t n)
{
	if (c->bad || n > c->left) {
		c->bad = true;
		memset(out, 0, n);
		return false;
	}
	memcpy(out, c->p, n);
	c->p += n;
	c->left -= n;
	return true;
}

static uint32_t cur_u32(struct cursor *c)
{
	uint32_t v;
	cur_take(c, &v, 4);
	return v;
}

static uint64_t cur_u64(struct cursor *c)
{
	uint64_t v;
	cur_take(c, &v, 8);
	return v;
}

/* struct perf_header_string: u32 len (padded), then len bytes, NUL inside. */
static char *cur_string(struct cursor *c)
{
	uint32_t len = cur_u32(c);

	if (c->bad || len > c->left) {
		c->bad = true;
		return NULL;
	}
	char *s = xstrndup((const char *)c->p, len);
	c->p += len;
	c->left -= len;
	return s;
}

static bool section_ok(size_t len, const struct perfdata_section *s)
{
	return s->offset <= len && s->size <= len - s->offset;
}

/* ---- attrs ------------------------------------------------------------------ */

static void attr_set(struct perfdata_attr *a, const uint8_t *raw, size_t size)
{
	memset(a, 0, sizeof(*a));
	memcpy(&a->attr, raw, MIN(size, sizeof(a->attr)));
	a->name = xstrdup("");
	a->nr_regs_user = __builtin_popcountll(a->attr.sample_regs_user);
	a->nr_regs_intr = __builtin_popcountll(a->attr.sample_regs_intr);
}

static void attr_add_ids(struct perfdata_file *f, size_t idx, struct cursor *ids)
{
	struct perfdata_attr *a = &f->attrs.v[idx];
	size_t n = ids->left / 8;

	a->ids = xrealloc(a->ids, (a->nr_ids + n + 1) * sizeof(*a->ids));
	for (size_t i = 0; i < n; i++) {
		uint64_t id = cur_u64(ids);
		a->ids[a->nr_ids++] = id;
		u64map_put(&f->id_to_attr, id, idx);
	}
}

/* An attr blob starts with its own size (attr.size, at offset 4). */
static int attr_blob_size(const uint8_t *p, size_t avail, uint32_t *size)
{
	uint32_t s;

	if (avail < 8)
		return -EINVAL;
	memcpy(&s, p + 4, 4);
	if (s == 0)
		s = 64;		/* PERF_ATTR_SIZE_VER0: files from old perf */
	if (s < 64 || s > avail)
		return -EINVAL;
	*size = s;
	return 0;
}

static int read_attrs(struct perfdata_file *f, const struct perfdata_header *h)
{
	if (!section_ok(f->len, &h->attrs) || h->attr_size < 64 + 16 ||
	    h->attr_size > 4096 || h->attrs.size % h->attr_size)
		return error("perf.data attr section is corrupt (attr_size %llu)",
			     (unsigned long long)h->attr_size);
	size_t n = h->attrs.size / h->attr_size;
	if (n == 0)
		return error("perf.data has no events (empty attr section)");
	for (size_t i = 0; i < n; i++) {
		const uint8_t *p = f->buf + h->attrs.offset + i * h->attr_size;
		size_t attr_bytes = h->attr_size - 16;
		struct perfdata_section ids;
		struct perfdata_attr a;

		attr_set(&a, p, attr_bytes);
		VEC_PUSH(&f->attrs, a);
		memcpy(&ids, p + attr_bytes, sizeof(ids));
		if (!section_ok(f->len, &ids) || ids.size % 8)
			return error("perf.data attr %zu has a corrupt id section", i);
		struct cursor c = { f->buf + ids.offset, ids.size, false };
		attr_add_ids(f, i, &c);
	}
	return 0;
}

/* ---- features --------------------------------------------------------------- */

static void feat_build_ids(struct perfdata_file *f, struct cursor *c)
{
	while (c->left >= sizeof(struct perf_event_header) && !c->bad) {
		struct perf_event_header eh;
		memcpy(&eh, c->p, sizeof(eh));
		if (eh.size < sizeof(eh) + 4 + 24 || eh.size > c->left)
			return;
		const uint8_t *p = c->p + sizeof(eh);
		struct perfdata_build_id b = { 0 };
		size_t idlen = 20;

		memcpy(&b.pid, p, 4);
		if (eh.misc & PERFDATA_BUILD_ID_SIZE_MISC)
			idlen = MIN(p[4 + 20], 20);
		for (size_t i = 0; i < idlen; i++)
			snprintf(b.hex + 2 * i, 3, "%02x", p[4 + i]);
		size_t name_max = eh.size - sizeof(eh) - 4 - 24;
		b.filename = xstrndup((const char *)p + 28, name_max);
		VEC_PUSH(&f->build_ids, b);
		c->p += eh.size;
		c->left -= eh.size;
	}
}

static void feat_cmdline(struct perfdata_file *f, struct cursor *c)
{
	uint32_t n = cur_u32(c);
	struct strbuf sb = STRBUF_INIT;

	for (uint32_t i = 0; i < n && !c->bad; i++) {
		char *s = cur_string(c);
		if (!s)
			break;
		if (sb.len)
			sb_addch(&sb, ' ');
		sb_adds(&sb, s);
		free(s);
	}
	free(f->cmdline);
	f->cmdline = xstrdup(sb_str(&sb));
	sb_release(&sb);
}

/* HEADER_EVENT_DESC: names for the attrs, matched by their first id. */
static void feat_event_desc(struct perfdata_file *f, struct cursor *c)
{
	uint32_t n = cur_u32(c), attr_size = cur_u32(c);

	for (uint32_t i = 0; i < n && !c->bad; i++) {
		if (attr_size > c->left) {
			c->bad = true;
			break;
		}
		c->p += attr_size;
		c->left -= attr_size;
		uint32_t nr_ids = cur_u32(c);
		char *name = cur_string(c);
		uint64_t id = nr_ids ? cur_u64(c) : 0;
		if (c->bad || !name) {
			free(name);
			break;
		}
		for (uint32_t k = 1; k < nr_ids && !c->bad; k++)
			cur_u64(c);
		uint64_t idx = i;
		if (nr_ids && !u64map_get(&f->id_to_attr, id, &idx))
			idx = i;
		if (idx < f->attrs.n) {
			free(f->attrs.v[idx].name);
			f->attrs.v[idx].name = name;
		} else {
			free(name);
		}
	}
}

static void replace_str(char **dst, char *s)
{
	if (!s)
		return;
	free(*dst);
	*dst = s;
}

static int read_feature(struct perfdata_file *f, int bit, struct cursor *c)
{
	switch (bit) {
	case PERFDATA_FEAT_BUILD_ID: feat_build_ids(f, c); break;
	case PERFDATA_FEAT_HOSTNAME: replace_str(&f->hostname, cur_string(c)); break;
	case PERFDATA_FEAT_OSRELEASE: replace_str(&f->osrelease, cur_string(c)); break;
	case PERFDATA_FEAT_VERSION: replace_str(&f->version, cur_string(c)); break;
	case PERFDATA_FEAT_ARCH: replace_str(&f->arch, cur_string(c)); break;
	case PERFDATA_FEAT_NRCPUS:
		f->nr_cpus_avail = cur_u32(c);
		f->nr_cpus_online = cur_u32(c);
		break;
	case PERFDATA_FEAT_CMDLINE: feat_cmdline(f, c); break;
	case PERFDATA_FEAT_EVENT_DESC: feat_event_desc(f, c); break;
	case PERFDATA_FEAT_DIR_FORMAT:
		return error("perf.data uses the directory format (perf record --threading); "
			     "record without --threading");
	default: break;
	}
	return 0;
}

static int read_features(struct perfdata_file *f, const struct perfdata_header *h)
{
	uint64_t off = h->data.offset + h->data.size;

	for (int bit = 0; bit < PERFDATA_FEAT_MAX; bit++) {
		if (!(h->features[bit / 64] & (1ULL << (bit % 64))))
			continue;
		struct perfdata_section s;
		if (off > f->len || f->len - off < sizeof(s))
			return 0;	/* feature index cut off: keep what we have */
		memcpy(&s, f->buf + off, sizeof(s));
		off += sizeof(s);
		if (!section_ok(f->len, &s))
			continue;
		struct cursor c = { f->buf + s.offset, s.size, false };
		int ret = read_feature(f, bit, &c);
		if (ret)
			return ret;
	}
	return 0;
}

/* ---- records ---------------------------------------------------------------- */

int perfdata_attr_of_id(const struct perfdata_file *f, uint64_t id)
{
	uint64_t idx;

	if (f->attrs.n == 1)
		return 0;
	if (u64map_get(&f->id_to_attr, id, &idx) && idx < f->attrs.n)
		return (int)idx;
	return -1;
}

/* The time of a record, for sorting; false (*t untouched) if it has none. */
static bool record_time(const struct perfdata_file *f, const struct perfdata_record *r, uint64_t *t)
{
	if (r->type == PERF_RECORD_SAMPLE)
		return perfdata_sample_time(f, r, t);
	if (r->type >= PERFDATA_HEADER_ATTR)
		return false;
	struct prof_perf_sample_id sid;
	perfdata_decode_sample_id(f, r, &sid);
	if (sid.has_time)
		*t = sid.time;
	return sid.has_time;
}

static void pipe_header_attr(struct perfdata_file *f, const uint8_t *p, size_t size)
{
	uint32_t asz;
	const uint8_t *body = p + sizeof(struct perf_event_header);
	size_t avail = size - sizeof(struct perf_event_header);

	if (attr_blob_size(body, avail, &asz))
		return;
	struct perfdata_attr a;
	attr_set(&a, body, asz);
	VEC_PUSH(&f->attrs, a);
	struct cursor c = { body + asz, (avail - asz) & ~(size_t)7, false };
	attr_add_ids(f, f->attrs.n - 1, &c);
}

static void pipe_event_update(struct perfdata_file *f, const uint8_t *p, size_t size)
{
	struct cursor c = { p + sizeof(struct perf_event_header),
			    size - sizeof(struct perf_event_header), false };
	uint64_t type = cur_u64(&c), id = cur_u64(&c);
	uint64_t idx;

	if (c.bad || type != PERFDATA_EVENT_UPDATE_NAME || !u64map_get(&f->id_to_attr, id, &idx) ||
	    idx >= f->attrs.n)
		return;
	free(f->attrs.v[idx].name);
	f->attrs.v[idx].name = xstrndup((const char *)c.p, c.left);
}

static int pipe_feature(struct perfdata_file *f, const uint8_t *p, size_t size)
{
	struct cursor c = { p + sizeof(struct perf_event_header),
			    size - sizeof(struct perf_event_header), false };
	uint64_t bit = cur_u64(&c);

	if (c.bad || bit >= PERFDATA_FEAT_MAX)
		return 0;
	return read_feature(f, (int)bit, &c);
}

struct perfdata_decomp {			/* all decompressed bytes, parsed after the scan */
	VEC(uint8_t) out;
	uint64_t last_time;	/* of the last record that had one, in file order */
#ifdef HAVE_ZSTD
	ZSTD_DStream *z;
#endif
};

/* Where scanned records go: all of them (perfdata_open) or the streaming
 * pending list, which perfdata_next_records hands out round by round. */
static void push_record(struct perfdata_file *f, struct perfdata_decomp *d, const uint8_t *rp, uint32_t size,
			uint32_t type)
{
	struct perfdata_record r = { 0, rp, size, type, f->seq++ };

	record_time(f, &r, &d->last_time);	/* none: the previous one's */
	r.time = d->last_time;
	if (r.time > f->max_time)
		f->max_time = r.time;
	if (f->streaming)
		VEC_PUSH(&f->pending, r);
	else
		VEC_PUSH(&f->records, r);
}

static int decompress(struct perfdata_file *f, struct perfdata_decomp *d, const uint8_t *p, size_t size)
{
	f->compressed = true;
#ifdef HAVE_ZSTD
	if (!d->z) {
		d->z = ZSTD_createDStream();
		if (!d->z)
			return error("cannot create a zstd decompression stream");
		ZSTD_initDStream(d->z);
	}
	ZSTD_inBuffer in = { p + sizeof(struct perf_event_header),
			     size - sizeof(struct perf_event_header), 0 };
	while (in.pos < in.size) {
		VEC_GROW(&d->out, d->out.n + 65536);
		if (d->out.n > (1ULL << 36))
			return error("perf.data decompresses to more than 64 GiB; refusing");
		ZSTD_outBuffer out = { d->out.v + d->out.n, d->out.cap - d->out.n, 0 };
		size_t ret = ZSTD_decompressStream(d->z, &out, &in);
		if (ZSTD_isError(ret))
			return error("perf.data has a corrupt compressed record: %s",
				     ZSTD_getErrorName(ret));
		d->out.n += out.pos;
	}
	return 0;
#else
	(void)d; (void)p; (void)size;
	return error("perf.data has zstd-compressed records (perf record -z) but prof was "
		     "built without libzstd; install libzstd-dev and rebuild, or record without -z");
#endif
}

/*
 * Walks one stream of records [p, p+len) from *offp.  Pipe-mode headers
 * are consumed here; everything else is pushed (push_record).  With
 * at_round, returns right after a FINISHED_ROUND (*round set).  *offp is
 * where the walk stopped.  Returns 0 or -EINVAL.
 */
static int scan_from(struct perfdata_file *f, struct perfdata_decomp *d, const uint8_t *p, size_t len,
		     size_t *offp, bool at_round, bool *round, bool *truncated)
{
	size_t off = *offp;
	int ret = 0;

	while (off < len && !ret) {
		struct perf_event_header eh;
		if (len - off < sizeof(eh)) {
			*truncated = true;
			break;
		}
		memcpy(&eh, p + off, sizeof(eh));
		if (eh.size < sizeof(eh)) {
			*truncated = true;	/* garbage: a zero-size record would loop */
			break;
		}
		if (eh.size > len - off) {
			*truncated = true;
			break;
		}
		const uint8_t *rp = p + off;
		size_t extra = 0;	/* payload following the record (not in eh.size) */

		switch (eh.type) {
		case PERFDATA_HEADER_ATTR: pipe_header_attr(f, rp, eh.size); break;
		case PERFDATA_EVENT_UPDATE: pipe_event_update(f, rp, eh.size); break;
		case PERFDATA_HEADER_FEATURE: ret = pipe_feature(f, rp, eh.size); break;
		case PERFDATA_COMPRESSED: ret = decompress(f, d, rp, eh.size); break;
		case PERFDATA_HEADER_TRACING_DATA:
			if (eh.size >= sizeof(eh) + 4) {
				uint32_t sz;
				memcpy(&sz, rp + sizeof(eh), 4);
				extra = ((size_t)sz + 7) & ~(size_t)7;
			}
			f->skipped++;
			break;
		case PERFDATA_AUXTRACE:
			if (eh.size >= sizeof(eh) + 8) {
				uint64_t sz;
				memcpy(&sz, rp + sizeof(eh), 8);
				extra = sz > len ? len : (size_t)sz;
			}
			f->skipped++;
			break;
		default:
			push_record(f, d, rp, eh.size, eh.type);
			if (eh.type == PERFDATA_FINISHED_ROUND && at_round)
				*round = true;
		}
		if (ret)
			break;
		off += eh.size;
		if (!f->streaming)	/* streamed records are still pending */
			perfdata_release_behind(f, p + off);
		if (extra > len - off) {
			*truncated = true;
			break;
		}
		off += extra;
		if (*round)
			break;
	}
	*offp = off;
	return ret;
}

static int scan_records(struct perfdata_file *f, struct perfdata_decomp *d, const uint8_t *p, size_t len,
			bool *truncated)
{
	size_t off = 0;
	bool round = false;

	return scan_from(f, d, p, len, &off, false, &round, truncated);
}

static bool record_before(const struct perfdata_record *x, const struct perfdata_record *y)
{
	return x->time != y->time ? x->time < y->time : x->seq < y->seq;
}

/* End of the sorted run of v that starts at lo. */
static size_t run_end(const struct perfdata_record *v, size_t lo, size_t n)
{
	size_t i = lo + 1;

	while (i < n && !record_before(&v[i], &v[i - 1]))
		i++;
	return i;
}

static void merge_runs(const struct perfdata_record *src, size_t lo, size_t mid, size_t hi,
		       struct perfdata_record *dst)
{
	size_t i = lo, j = mid, k = lo;

	while (i < mid && j < hi)
		dst[k++] = record_before(&src[j], &src[i]) ? src[j++] : src[i++];
	while (i < mid)
		dst[k++] = src[i++];
	while (j < hi)
		dst[k++] = src[j++];
}

/*
 * Sorts by (time, file order).  A natural merge sort: perf.data arrives as
 * sorted runs (one per CPU buffer flush), so merging neighbouring runs
 * until one is left costs O(n log runs), and an already sorted array one
 * pass with no copy; qsort was 9% of an import's instructions.  seq is
 * unique, so the order is total.
 */
static void sort_by_time(struct perfdata_record *v, size_t n)
{
	struct perfdata_record *tmp, *src = v, *dst;
	size_t runs;

	if (n < 2 || run_end(v, 0, n) == n)
		return;
	tmp = xmalloc(n * sizeof(*tmp));
	dst = tmp;
	do {
		runs = 0;
		for (size_t lo = 0; lo < n; runs++) {
			size_t mid = run_end(src, lo, n), hi = mid < n ? run_end(src, mid, n) : n;
			merge_runs(src, lo, mid, hi, dst);
			lo = hi;
		}
		struct perfdata_record *t = src;
		src = dst;
		dst = t;
	} while (runs > 1);
	if (src != v)
		memcpy(v, src, n * sizeof(*v));
	free(tmp);
}

/* Times were taken during the scan (one pass over the file, not two). */
static void sort_records(struct perfdata_file *f)
{
	sort_by_time(f->records.v, f->records.n);
}

static int read_header(struct perfdata_file *f, struct perfdata_header *h)
{
	memset(h, 0, sizeof(*h));
	if (f->len < 16)
		return error("not a perf.data file (only %zu bytes)", f->len);
	memcpy(h, f->buf, 16);
	if (h->magic == PERFDATA_MAGIC_SWAPPED)
		return error("perf.data was written on a machine of the other byte order; not supported");
	if (h->magic != PERFDATA_MAGIC)
		return error("not a perf.data file (no PERFILE2 magic)");
	if (h->size == 16) {
		f->pipe = true;
		return 0;
	}
	if (h->size < 72 || f->len < sizeof(*h))
		return error("perf.data header is cut short (%zu bytes)", f->len);
	memcpy(h, f->buf, MIN(sizeof(*h), h->size));
	if (!section_ok(f->len, &h->data)) {
		/* perf killed before finishing: data size 0 or beyond the end */
		if (h->data.offset > f->len)
			return error("perf.data data section starts beyond the end of the file");
		h->data.size = f->len - h->data.offset;
		f->truncated = true;
	}
	if (h->data.size == 0 && f->len > h->data.offset) {
		/* perf record was interrupted before writing the header back */
		h->data.size = f->len - h->data.offset;
		f->truncated = true;
		memset(h->features, 0, sizeof(h->features));
	}
	return 0;
}

/* The records of zstd-compressed blocks, gathered during the scan, are
 * scanned once the file has been walked (their bytes no longer move). */
static int scan_decompressed(struct perfdata_file *f, struct perfdata_decomp *d)
{
	bool trunc = false;
	int ret = 0;

	if (d->out.n) {
		size_t n = d->out.n;
		VEC_PUSH(&f->owned, d->out.v);
		d->out.v = NULL;
		d->out.n = d->out.cap = 0;
		ret = scan_records(f, d, f->owned.v[f->owned.n - 1], n, &trunc);
	}
	f->truncated |= trunc;
	return ret;
}

static void decomp_free(struct perfdata_decomp *d)
{
	if (!d)
		return;
#ifdef HAVE_ZSTD
	if (d->z)
		ZSTD_freeDStream(d->z);
#endif
	free(d->out.v);
	free(d);
}

static int scan_all(struct perfdata_file *f, const struct perfdata_header *h)
{
	struct perfdata_decomp *d = xcalloc(1, sizeof(*d));
	bool trunc = false;
	int ret;

	if (f->pipe)
		ret = scan_records(f, d, f->buf + 16, f->len - 16, &trunc);
	else
		ret = scan_records(f, d, f->buf + h->data.offset, h->data.size, &trunc);
	f->truncated |= trunc;
	if (!ret)
		ret = scan_decompressed(f, d);
	decomp_free(d);
	return ret;
}

/* ---- streaming: records in perf's rounds ------------------------------------ */

/*
 * Moves the pending records with time <= limit, in (time, file order)
 * order, to f->records.  This is perf's ordered-events rule: at each
 * FINISHED_ROUND, what is older than the newest time seen at the previous
 * round is final; the rest waits one more round.
 */
static void take_ready(struct perfdata_file *f, uint64_t limit)
{
	size_t n = 0;

	f->records.n = 0;
	if (!f->pending.n)	/* memcpy of NULL, 0 is undefined */
		return;
	sort_by_time(f->pending.v, f->pending.n);
	while (n < f->pending.n && f->pending.v[n].time <= limit)
		n++;
	if (!n)
		return;
	VEC_GROW(&f->records, n);
	memcpy(f->records.v, f->pending.v, n * sizeof(*f->pending.v));
	f->records.n = n;
	memmove(f->pending.v, f->pending.v + n, (f->pending.n - n) * sizeof(*f->pending.v));
	f->pending.n -= n;
}

/* Scans up to the next FINISHED_ROUND; false at the end of the data. */
static bool scan_round(struct perfdata_file *f)
{
	bool round = false, trunc = false;
	int ret = scan_from(f, f->scan, f->buf + f->data_start, f->data_len, &f->scan_off, true,
			    &round, &trunc);

	/* An error was said by error(); what was read stays usable. */
	f->truncated |= trunc || ret < 0;
	return ret == 0 && round && f->scan_off < f->data_len;
}

size_t perfdata_next_records(struct perfdata_file *f)
{
	if (!f->streaming) {	/* everything was handed out by open */
		if (f->stream_done)
			f->records.n = 0;
		f->stream_done = true;
		return f->records.n;
	}
	f->records.n = 0;
	while (!f->stream_done) {
		if (!scan_round(f)) {
			if (scan_decompressed(f, f->scan) < 0)
				f->truncated = true;
			f->stream_done = true;
			break;
		}
		take_ready(f, f->round_limit);
		f->round_limit = f->max_time;
		if (f->records.n)
			return f->records.n;
	}
	take_ready(f, UINT64_MAX);
	return f->records.n;
}

size_t perfdata_pending_low(const struct perfdata_file *f)
{
	size_t low = f->streaming && !f->stream_done ? f->data_start + f->scan_off : f->len;

	for (size_t i = 0; i < f->pending.n; i++) {
		const uint8_t *d = f->pending.v[i].data;
		if (d >= f->buf && d < f->buf + f->len)
			low = MIN(low, (size_t)(d - f->buf));
	}
	return low;
}

void perfdata_release_behind(struct perfdata_file *f, const uint8_t *upto)
{
	if (!f->release_behind || upto < f->buf || upto > f->buf + f->len ||
	    ((uintptr_t)f->buf & 4095))
		return;
	size_t end = (size_t)(upto - f->buf) / 4096 * 4096;
	if (end < f->released + (4u << 20))
		return;
	madvise((void *)(uintptr_t)(f->buf + f->released), end - f->released, MADV_DONTNEED);
	f->released = end;
}

static int open_file(struct perfdata_file *f, const uint8_t *buf, size_t len, bool map, bool stream);

int perfdata_open(struct perfdata_file *f, const uint8_t *buf, size_t len)
{
	return open_file(f, buf, len, false, false);
}

int perfdata_open_stream(struct perfdata_file *f, const uint8_t *buf, size_t len, bool map)
{
	return open_file(f, buf, len, map, true);
}

static bool has_feature(const struct perfdata_header *h, int bit)
{
	return (h->features[bit / 64] >> (bit % 64)) & 1;
}

/* Streaming needs a seekable data section whose records sit in the file
 * itself: not a pipe stream, not zstd blocks (perf record -z). */
static void start_stream(struct perfdata_file *f, const struct perfdata_header *h)
{
	f->streaming = true;
	f->scan = xcalloc(1, sizeof(*f->scan));
	f->data_start = (size_t)h->data.offset;
	f->data_len = (size_t)h->data.size;
}

static int open_file(struct perfdata_file *f, const uint8_t *buf, size_t len, bool map, bool stream)
{
	struct perfdata_header h;
	int ret;

	memset(f, 0, sizeof(*f));
	f->buf = buf;
	f->len = len;
	f->release_behind = map;
	ret = read_header(f, &h);
	if (!ret && !f->pipe)
		ret = read_attrs(f, &h);
	if (!ret && !f->pipe)
		ret = read_features(f, &h);
	if (!ret && stream && !f->pipe && !has_feature(&h, PERFDATA_FEAT_COMPRESSED))
		start_stream(f, &h);
	else if (!ret)
		ret = scan_all(f, &h);
	if (!ret && f->attrs.n == 0)
		ret = error("perf.data describes no events (pipe stream without HEADER_ATTR)");
	if (ret) {
		perfdata_close(f);
		return -EINVAL;
	}
	sort_records(f);
	return 0;
}

void perfdata_close(struct perfdata_file *f)
{
	for (size_t i = 0; i < f->attrs.n; i++) {
		free(f->attrs.v[i].name);
		free(f->attrs.v[i].ids);
	}
	VEC_FREE(&f->attrs);
	u64map_free(&f->id_to_attr);
	VEC_FREE(&f->records);
	VEC_FREE(&f->pending);
	decomp_free(f->scan);
	for (size_t i = 0; i < f->owned.n; i++)
		free(f->owned.v[i]);
	VEC_FREE(&f->owned);
	for (size_t i = 0; i < f->build_ids.n; i++)
		free(f->build_ids.v[i].filename);
	VEC_FREE(&f->build_ids);
	free(f->hostname);
	free(f->osrelease);
	free(f->arch);
	free(f->version);
	free(f->cmdline);
	memset(f, 0, sizeof(*f));
}
