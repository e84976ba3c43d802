/*
 * formats.c - the report formats by name: what `prof report --format`
 * accepts, which renderer draws each (one recording or a base/head
 * pair), which file a binary or page format goes to when stdout is a
 * terminal, and which formats need every sample's time.  Commands choose
 * a format here instead of keeping their own tables.
 */
#include "prof/output.h"
#include <errno.h>
#include <string.h>

typedef int render_fn(FILE *, const struct prof_profile *, const struct prof_view *);
typedef int render_diff_fn(FILE *, const struct prof_profile *, const struct prof_profile *,
			   const struct prof_view *);

static const struct format_desc {
	const char *name;
	render_fn *render;		/* NULL: text, flat or tree */
	render_diff_fn *render_diff;	/* NULL: no differential form */
	const char *terminal_file;	/* written there when stdout is a terminal */
	bool timed;			/* draws samples in time order */
} formats[] = {
	[PROF_FMT_TEXT] = { "text", NULL, prof_output_text_diff, NULL, false },
	[PROF_FMT_FOLDED] = { "folded", prof_output_folded, prof_output_folded_diff, NULL, false },
	[PROF_FMT_JSON] = { "json", prof_output_json, NULL, NULL, false },
	[PROF_FMT_FLAMEGRAPH] = { "flamegraph", prof_output_flamegraph, prof_output_flamegraph_diff,
				  "flamegraph.svg", false },
	[PROF_FMT_HTML] = { "html", prof_output_html, prof_output_html_diff, "prof.html", true },
	[PROF_FMT_SPEEDSCOPE] = { "speedscope", prof_output_speedscope, NULL, NULL, true },
	[PROF_FMT_PPROF] = { "pprof", prof_output_pprof, NULL, "prof.pb.gz", false },
	[PROF_FMT_CALLGRIND] = { "callgrind", prof_output_callgrind, NULL, NULL, false },
	[PROF_FMT_FIREFOX] = { "firefox", prof_output_firefox, NULL, NULL, true },
};

int prof_format_parse(const char *name, enum prof_format *out)
{
	for (size_t i = 0; i < ARRAY_SIZE(formats); i++)
		if (!strcmp(name, formats[i].name)) {
			*out = (enum prof_format)i;
			return 0;
		}
	return -EINVAL;
}

const char *prof_format_name(enum prof_format fmt)
{
	return formats[fmt].name;
}

const char *prof_format_terminal_file(enum prof_format fmt)
{
	return formats[fmt].terminal_file;
}

bool prof_format_timed(enum prof_format fmt)
{
	return formats[fmt].timed;
}

bool prof_format_has_diff(enum prof_format fmt)
{
	return formats[fmt].render_diff != NULL;
}

int prof_format_render(FILE *f, enum prof_format fmt, bool tree, const struct prof_profile *p,
		       const struct prof_view *v)
{
	if (fmt != PROF_FMT_TEXT)
		return formats[fmt].render(f, p, v);
	if (v->sort_keys)
		return prof_output_text_keys(f, p, v);
	return tree ? prof_output_text_tree(f, p, v) : prof_output_text_flat(f, p, v);
}

int prof_format_render_diff(FILE *f, enum prof_format fmt, const struct prof_profile *base,
			    const struct prof_profile *head, const struct prof_view *v)
{
	if (!formats[fmt].render_diff)
		return -EINVAL;
	return formats[fmt].render_diff(f, base, head, v);
}
