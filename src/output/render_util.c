/*
 * render_util.c - small helpers shared by the picture/interop renderers
 * (render.h): quoted JSON strings, JSON made safe to embed in an HTML
 * <script> element, and writing a finished buffer out.
 */
#include "prof/render.h"
#include "output-priv.h"
#include <errno.h>
#include <string.h>

void json_str(struct strbuf *sb, const char *s)
{
	json_escape(sb, s ? s : "");	/* it writes the quotes too */
}

void json_strtab(struct strbuf *sb, const struct strtab *t)
{
	sb_addch(sb, '[');
	for (size_t i = 0; i < t->strs.n; i++) {
		if (i)
			sb_addch(sb, ',');
		json_str(sb, t->strs.v[i]);
	}
	sb_addch(sb, ']');
}

void json_script_safe(struct strbuf *sb, const char *json)
{
	/* '<' can only occur inside JSON strings, where \u003c means the same
	 * character; this keeps "</script>" in a symbol from closing the tag. */
	for (const char *c = json; *c; c++) {
		switch (*c) {
		case '<': sb_adds(sb, "\\u003c"); break;
		case '>': sb_adds(sb, "\\u003e"); break;
		case '&': sb_adds(sb, "\\u0026"); break;
		default: sb_addch(sb, *c);
		}
	}
}

int render_flush(FILE *f, const struct strbuf *sb)
{
	if (sb->len && fwrite(sb->buf, 1, sb->len, f) != sb->len)
		return -EIO;
	return fflush(f) ? -EIO : 0;
}

void render_weight(struct strbuf *sb, const struct prof_view *v, uint64_t w)
{
	if (v->metric == PROF_VIEW_CPU)
		sb_addf(sb, "%llu sample%s", (unsigned long long)w, w == 1 ? "" : "s");
	else	/* time metrics weigh in ns (prof_view_weight) */
		sb_addf(sb, "%.3f ms", w / 1e6);
}
