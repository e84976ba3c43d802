/*
 * decompress.c - transparent gzip (zlib) and zstd (libzstd, when built
 * with HAVE_ZSTD) decoding of whole callgrind files held in memory.  The
 * parser wants one contiguous buffer, and callgrind files are at most a few
 * hundred MB, so a bounded grow-and-retry output buffer is simplest.
 */
#include "prof/callgrind.h"
#include <errno.h>
#include <string.h>
#include <zlib.h>
#ifdef HAVE_ZSTD
#include <zstd.h>
#endif

static int gunzip(const char *buf, size_t len, size_t max_out, char **out, size_t *out_len)
{
	z_stream zs;
	struct strbuf sb = STRBUF_INIT;
	int rc;

	memset(&zs, 0, sizeof(zs));
	if (inflateInit2(&zs, 15 + 32) != Z_OK)	/* +32: gzip or zlib header */
		return -EINVAL;
	zs.next_in = (Bytef *)buf;
	zs.avail_in = (uInt)MIN(len, (size_t)UINT32_MAX);
	do {
		sb_grow(&sb, 65536);
		zs.next_out = (Bytef *)sb.buf + sb.len;
		zs.avail_out = (uInt)(sb.cap - sb.len - 1);
		size_t before = zs.avail_out;
		rc = inflate(&zs, Z_NO_FLUSH);
		sb.len += before - zs.avail_out;
		if (rc == Z_STREAM_END && zs.avail_in > 0) {
			/* concatenated gzip members (gzip -c a b) */
			if (inflateReset(&zs) != Z_OK)
				break;
			rc = Z_OK;
		}
		if (sb.len > max_out)
			rc = Z_MEM_ERROR;
	} while (rc == Z_OK);
	inflateEnd(&zs);
	if (rc != Z_STREAM_END) {
		sb_release(&sb);
		return -EINVAL;
	}
	sb.buf[sb.len] = 0;
	*out = sb.buf;
	*out_len = sb.len;
	return 1;
}

#ifdef HAVE_ZSTD
static int unzstd(const char *buf, size_t len, size_t max_out, char **out, size_t *out_len)
{
	ZSTD_DStream *ds = ZSTD_createDStream();
	struct strbuf sb = STRBUF_INIT;
	ZSTD_inBuffer in = { buf, len, 0 };
	size_t rc = 0;
	bool ok = true;

	if (!ds)
		return -ENOMEM;
	ZSTD_initDStream(ds);
	while (in.pos < in.size) {
		sb_grow(&sb, 65536);
		ZSTD_outBuffer ob = { sb.buf + sb.len, sb.cap - sb.len - 1, 0 };
		rc = ZSTD_decompressStream(ds, &ob, &in);
		sb.len += ob.pos;
		if (ZSTD_isError(rc) || sb.len > max_out) {
			ok = false;
			break;
		}
	}
	/* rc != 0 at the end: the last frame is incomplete */
	if (ok && rc != 0)
		ok = false;
	ZSTD_freeDStream(ds);
	if (!ok) {
		sb_release(&sb);
		return -EINVAL;
	}
	sb_grow(&sb, 1);
	sb.buf[sb.len] = 0;
	*out = sb.buf;
	*out_len = sb.len;
	return 1;
}
#endif

int cg_decompress(const char *buf, size_t len, size_t max_out, char **out, size_t *out_len)
{
	const unsigned char *u = (const unsigned char *)buf;

	if (len >= 2 && u[0] == 0x1f && u[1] == 0x8b)
		return gunzip(buf, len, max_out, out, out_len);
	if (len >= 4 && u[0] == 0x28 && u[1] == 0xb5 && u[2] == 0x2f && u[3] == 0xfd) {
#ifdef HAVE_ZSTD
		return unzstd(buf, len, max_out, out, out_len);
#else
		error("zstd input needs prof built with libzstd");
		return -ENOTSUP;
#endif
	}
	return 0;
}
