/*
 * escape.c - escaping of untrusted names (symbols, paths, comms come from
 * the profiled program) for JSON and XML/SVG/HTML output.  Invalid UTF-8
 * becomes U+FFFD so the output always parses; nothing is ever emitted raw.
 */
#include "prof/util.h"
#include <math.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at s, 0 if invalid. */
static size_t utf8_len(const unsigned char *s)
{
	unsigned c = s[0];
	size_t n;
	uint32_t cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) { n = 2; cp = c & 0x1f; }
	else if (c >= 0xe0 && c <= 0xef) { n = 3; cp = c & 0x0f; }
	else if (c >= 0xf0 && c <= 0xf4) { n = 4; cp = c & 0x07; }
	else return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)	/* also stops at the NUL */
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;	/* overlong or surrogate */
	return n;
}

void json_escape(struct strbuf *sb, const char *str)
{
	const unsigned char *s = (const unsigned char *)(str ? str : "");

	sb_addch(sb, '"');
	while (*s) {
		unsigned c = *s;
		size_t n = utf8_len(s);
		if (!n) {
			sb_adds(sb, "\\ufffd");
			s++;
			continue;
		}
		if (n > 1) {
			/* U+2028/2029 break JavaScript parsers embedding JSON. */
			if (n == 3 && s[0] == 0xe2 && s[1] == 0x80 && (s[2] == 0xa8 || s[2] == 0xa9))
				sb_addf(sb, "\\u%04x", s[2] == 0xa8 ? 0x2028 : 0x2029);
			else
				sb_add(sb, s, n);
			s += n;
			continue;
		}
		switch (c) {
		case '"': sb_adds(sb, "\\\""); break;
		case '\\': sb_adds(sb, "\\\\"); break;
		case '\n': sb_adds(sb, "\\n"); break;
		case '\r': sb_adds(sb, "\\r"); break;
		case '\t': sb_adds(sb, "\\t"); break;
		/* <, >, & escaped too: the JSON may be embedded in HTML. */
		case '<': case '>': case '&': case 0x7f:
			sb_addf(sb, "\\u%04x", c);
			break;
		default:
			if (c < 0x20)
				sb_addf(sb, "\\u%04x", c);
			else
				sb_addch(sb, (char)c);
		}
		s++;
	}
	sb_addch(sb, '"');
}

void xml_escape(struct strbuf *sb, const char *str)
{
	const unsigned char *s = (const unsigned char *)(str ? str : "");

	while (*s) {
		size_t n = utf8_len(s);
		if (!n) {
			sb_adds(sb, "\xef\xbf\xbd");	/* U+FFFD */
			s++;
			continue;
		}
		if (n > 1) {
			sb_add(sb, s, n);
			s += n;
			continue;
		}
		switch (*s) {
		case '&': sb_adds(sb, "&amp;"); break;
		case '<': sb_adds(sb, "&lt;"); break;
		case '>': sb_adds(sb, "&gt;"); break;
		case '"': sb_adds(sb, "&quot;"); break;
		case '\'': sb_adds(sb, "&#39;"); break;
		default:
			/* XML 1.0 forbids most control characters, even escaped. */
			if ((*s < 0x20 && *s != '\t' && *s != '\n' && *s != '\r') || *s == 0x7f)
				sb_addch(sb, '?');
			else
				sb_addch(sb, (char)*s);
		}
		s++;
	}
}

void add_printable(struct strbuf *sb, const char *s, const char *also_bad, char repl)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		sb_addch(sb, c < 0x20 || c == 0x7f || strchr(also_bad, c) ? repl : (char)c);
	}
}

void json_number(struct strbuf *sb, double v)
{
	if (isfinite(v))
		sb_addf(sb, "%.10g", v);
	else
		sb_adds(sb, "null");	/* JSON has no inf or nan */
}
