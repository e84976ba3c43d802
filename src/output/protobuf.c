/*
 * protobuf.c - the smallest protobuf *encoder* the pprof export needs:
 * varints (wire type 0), length-delimited fields (wire type 2) and packed
 * repeated varints, appended to a strbuf; plus gzip of a whole buffer via
 * zlib (deflateInit2 with windowBits 31 = gzip wrapper), because pprof
 * files are gzipped profile.proto messages.
 *
 * Nested messages are encoded bottom-up: build the sub-message in its own
 * strbuf, then render_pb_bytes() it into the parent; no length back-patching.
 */
#include "prof/output.h"
#include "output-priv.h"
#include <errno.h>
#include <string.h>
#include <zlib.h>

static void pb_varint(struct strbuf *sb, uint64_t v)
{
	uint8_t buf[10];

	sb_add(sb, buf, varint_put(buf, v));
}

static void pb_tag(struct strbuf *sb, uint32_t field, uint32_t wire_type)
{
	pb_varint(sb, ((uint64_t)field << 3) | wire_type);
}

void render_pb_uint(struct strbuf *sb, uint32_t field, uint64_t v)
{
	if (!v)
		return;		/* proto3: zero is the default, not encoded */
	pb_tag(sb, field, 0);
	pb_varint(sb, v);
}

void render_pb_bytes(struct strbuf *sb, uint32_t field, const void *data, size_t len)
{
	pb_tag(sb, field, 2);
	pb_varint(sb, len);
	sb_add(sb, data, len);
}

void render_pb_packed(struct strbuf *sb, uint32_t field, const uint64_t *v, size_t n)
{
	struct strbuf body = STRBUF_INIT;

	if (!n)
		return;
	for (size_t i = 0; i < n; i++)
		pb_varint(&body, v[i]);
	render_pb_bytes(sb, field, body.buf, body.len);
	sb_release(&body);
}

int render_gzip(const void *in, size_t len, struct strbuf *out)
{
	z_stream zs;
	memset(&zs, 0, sizeof(zs));

	if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 31, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	zs.next_in = (Bytef *)in;
	zs.avail_in = (uInt)len;
	int rc;
	do {
		sb_grow(out, 65536);
		zs.next_out = (Bytef *)out->buf + out->len;
		zs.avail_out = (uInt)(out->cap - out->len - 1);
		size_t before = zs.avail_out;
		rc = deflate(&zs, Z_FINISH);
		out->len += before - zs.avail_out;
		out->buf[out->len] = '\0';
	} while (rc == Z_OK || rc == Z_BUF_ERROR);
	deflateEnd(&zs);
	return rc == Z_STREAM_END ? 0 : -EIO;
}
