/*
 * flamegraph.c - one self-contained interactive flame graph SVG, following
 * flamegraph.pl's conventions: the x axis is weight (not time), siblings
 * merged by name and sorted alphabetically, hover shows details, click
 * zooms, "Reset Zoom", regex "Search" with "NN.N% matched", an icicle
 * layout when view->inverted.  Frames are coloured by kind (user: warm
 * "hot" palette, kernel: orange, inlined: aqua, JIT: green, unknown/anon:
 * grey) or, with the "Colour" toggle, by module.  Also the differential
 * flame graph (difffolded.pl convention).
 *
 * Design notes: the whole picture is laid out here in C (so the SVG reads
 * without JS); the embedded script only re-lays out on zoom and recolours
 * on search.  A search term can be given in the URL, `file.svg?s=REGEX`
 * or `file.svg#search=REGEX`, and a zoom as `?z=NAME` (first frame of that
 * name), which is how the tests drive it.  Every
 * name goes through xml_escape (the script reads names back through the
 * DOM, which unescapes, and only ever assigns them to textContent).
 */
#include "prof/output.h"
#include "output-priv.h"
#include <string.h>

#define FG_WIDTH 1200
#define FG_XPAD 10
#define FG_FRAME_H 16
#define FG_TOP 64		/* title, subtitle, controls */
#define FG_BOTTOM 34		/* details line */
#define FG_MIN_PX 0.1		/* narrower frames are not drawn (flamegraph.pl minwidth) */
#define FG_CHAR_PX 7.1		/* 12px Verdana, average glyph */

enum fg_colouring { FG_COLOUR_KIND, FG_COLOUR_DIFF, FG_COLOUR_GONE };

struct fg_area {
	const struct flame_tree *t;
	const struct prof_view *v;
	int slot;			/* which weight shapes the frames */
	enum fg_colouring colouring;
	int id;				/* data-a: zoom stays within one area */
	double y0, height;		/* area box, px */
	double scale;			/* px per weight unit */
	double head_total, base_total;	/* diff: for the per-frame shares */
	double max_delta;
};

/* The SVG's style and script, embedded at build time. */
OUTPUT_EMBED(flamegraph_css, "flamegraph.css");
OUTPUT_EMBED(flamegraph_js, "flamegraph.js");

static uint32_t name_hash(const char *s)
{
	return (uint32_t)hash_bytes(s, strlen(s));
}

/* flamegraph.pl-like palettes, varied per name so neighbours differ. */
static void kind_colour(struct strbuf *sb, const struct flame_node *n)
{
	uint32_t h = name_hash(n->name);
	double v1 = (h & 0xff) / 255.0, v2 = ((h >> 8) & 0xff) / 255.0, v3 = ((h >> 16) & 0xff) / 255.0;

	if (n->inlined)
		sb_addf(sb, "rgb(%d,%d,%d)", (int)(50 + 60 * v1), (int)(165 + 55 * v1), (int)(165 + 55 * v1));
	else if (n->kind == PROF_FRAME_KERNEL)
		sb_addf(sb, "rgb(%d,%d,0)", (int)(190 + 65 * v1), (int)(90 + 65 * v1));
	else if (n->kind == PROF_FRAME_JIT)
		sb_addf(sb, "rgb(%d,%d,%d)", (int)(50 * v1), (int)(200 + 55 * v2), (int)(50 * v3));
	else if (n->python)	/* blue, as Python's own colours */
		sb_addf(sb, "rgb(%d,%d,%d)", (int)(60 + 50 * v1), (int)(120 + 60 * v2), (int)(200 + 55 * v3));
	else if (n->kind == PROF_FRAME_ANON || n->kind == PROF_FRAME_UNKNOWN || !strcmp(n->name, "[unknown]"))
		sb_addf(sb, "rgb(%d,%d,%d)", (int)(160 + 40 * v1), (int)(160 + 40 * v1), (int)(170 + 40 * v1));
	else
		sb_addf(sb, "rgb(%d,%d,%d)", (int)(205 + 50 * v3), (int)(230 * v1), (int)(55 * v2));
}

static double node_delta(const struct fg_area *a, const struct flame_node *n)
{
	double head = a->head_total ? n->value[FLAME_HEAD] / a->head_total : 0;
	double base = a->base_total ? n->value[FLAME_BASE] / a->base_total : 0;

	return head - base;
}

/* Red = grew, blue = shrank, white = same; intensity relative to the largest change. */
static void diff_colour(struct strbuf *sb, const struct fg_area *a, const struct flame_node *n)
{
	double d = node_delta(a, n), i = a->max_delta > 0 ? d / a->max_delta : 0;
	int c = (int)(230 * (1 - (i < 0 ? -i : i)));

	if (i > 0)
		sb_addf(sb, "rgb(255,%d,%d)", c, c);
	else if (i < 0)
		sb_addf(sb, "rgb(%d,%d,255)", c, c);
	else
		sb_adds(sb, "rgb(235,235,235)");
}

static void frame_fill(struct strbuf *sb, const struct fg_area *a, const struct flame_node *n)
{
	if (a->colouring == FG_COLOUR_DIFF)
		diff_colour(sb, a, n);
	else if (a->colouring == FG_COLOUR_GONE)
		sb_addf(sb, "rgb(%d,%d,%d)", 170 + (int)(name_hash(n->name) % 40),
			170 + (int)(name_hash(n->name) % 40), 170 + (int)(name_hash(n->name) % 40));
	else
		kind_colour(sb, n);
}

static void frame_title(struct strbuf *sb, const struct fg_area *a, const struct flame_node *n,
			uint32_t id)
{
	struct strbuf t = STRBUF_INIT;
	double total = (double)a->t->nodes.v[0].value[a->slot];

	sb_adds(&t, id ? n->name : "all");
	if (n->inlined)
		sb_adds(&t, " [inlined]");
	if (n->kind == PROF_FRAME_KERNEL)
		sb_adds(&t, " [kernel]");
	if (n->python)
		sb_adds(&t, " [python]");
	if (*n->module)
		sb_addf(&t, " (%s)", n->module);
	if (*n->file)
		sb_addf(&t, "\n%s:%u", n->file, n->line);
	sb_addch(&t, '\n');
	if (a->colouring == FG_COLOUR_DIFF) {
		render_weight(&t, a->v, n->value[FLAME_BASE]);
		sb_adds(&t, " -> ");
		render_weight(&t, a->v, n->value[FLAME_HEAD]);
		sb_addf(&t, " (%+.2f%% of total)", 100 * node_delta(a, n));
	} else {
		render_weight(&t, a->v, n->value[a->slot]);
		sb_addf(&t, " (%.2f%%)", total ? 100.0 * n->value[a->slot] / total : 0);
		if (a->colouring == FG_COLOUR_GONE)
			sb_adds(&t, " in base, gone in head");
	}
	xml_escape(sb, sb_str(&t));
	sb_release(&t);
}

static void frame_label(struct strbuf *sb, const char *name, double w)
{
	int fit = (int)((w - 6) / FG_CHAR_PX);
	size_t len = strlen(name);
	struct strbuf t = STRBUF_INIT;

	if (fit < 3)
		return;
	if (len <= (size_t)fit) {
		xml_escape(sb, name);
		return;
	}
	/* Cut on a UTF-8 boundary so the SVG stays valid XML. */
	size_t cut = (size_t)fit - 2;
	while (cut > 0 && ((unsigned char)name[cut] & 0xc0) == 0x80)
		cut--;
	sb_add(&t, name, cut);
	sb_adds(&t, "..");
	xml_escape(sb, sb_str(&t));
	sb_release(&t);
}

static void emit_frame(struct strbuf *sb, const struct fg_area *a, uint32_t id, double x, double w)
{
	const struct flame_node *n = &a->t->nodes.v[id];
	uint32_t depth = n->depth;
	double y = a->v->inverted ? a->y0 + depth * FG_FRAME_H
				  : a->y0 + a->height - (depth + 1) * FG_FRAME_H;

	sb_addf(sb, "<g class=\"f\" data-a=\"%d\" data-d=\"%u\" data-n=\"", a->id, depth);
	xml_escape(sb, id ? n->name : "all");
	sb_adds(sb, "\"");
	if (*n->module)
		sb_addf(sb, " data-mh=\"%u\"", name_hash(n->module) % 360);
	sb_adds(sb, "><title>");
	frame_title(sb, a, n, id);
	sb_addf(sb, "</title><rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" rx=\"2\" ry=\"2\" fill=\"",
		x, y, w, FG_FRAME_H - 1);
	frame_fill(sb, a, n);
	if (n->inlined)	/* dashed outline: inlined frames stay recognisable in any colouring */
		sb_adds(sb, "\" stroke=\"#333\" stroke-dasharray=\"3,2\" stroke-width=\"0.6");
	sb_addf(sb, "\"/><text x=\"%.2f\" y=\"%.1f\">", x + 3, y + FG_FRAME_H - 4.5);
	frame_label(sb, id ? n->name : "all", w);
	sb_adds(sb, "</text></g>\n");
}

static void emit_subtree(struct strbuf *sb, const struct fg_area *a, uint32_t id, double x)
{
	const struct flame_node *n = &a->t->nodes.v[id];
	double w = n->value[a->slot] * a->scale;

	if (w < FG_MIN_PX)
		return;
	emit_frame(sb, a, id, x, w);
	for (uint32_t k = 0; k < n->n_children; k++) {
		uint32_t c = a->t->child_ids.v[n->first_child + k];
		emit_subtree(sb, a, c, x);
		x += a->t->nodes.v[c].value[a->slot] * a->scale;
	}
}

static void area_init(struct fg_area *a, const struct flame_tree *t, const struct prof_view *v,
		      int slot, enum fg_colouring colouring, int id, double y0)
{
	uint64_t total = t->nodes.v[0].value[slot];
	uint32_t depth = 0;

	for (size_t i = 0; i < t->nodes.n; i++)
		if (t->nodes.v[i].value[slot] && t->nodes.v[i].depth > depth)
			depth = t->nodes.v[i].depth;
	*a = (struct fg_area){
		.t = t, .v = v, .slot = slot, .colouring = colouring, .id = id, .y0 = y0,
		.height = (depth + 1) * FG_FRAME_H,
		.scale = total ? (double)(FG_WIDTH - 2 * FG_XPAD) / total : 0,
	};
}

static void svg_begin(struct strbuf *sb, double height, const char *title, const char *subtitle,
		      bool colour_toggle)
{
	sb_addf(sb, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%d\" height=\"%.0f\" "
		"viewBox=\"0 0 %d %.0f\" xmlns=\"http://www.w3.org/2000/svg\">\n",
		FG_WIDTH, height, FG_WIDTH, height);
	sb_adds(sb, "<!-- generated by prof; flame graph layout after Brendan Gregg's flamegraph.pl -->\n"
		"<defs><linearGradient id=\"bg\" y1=\"0\" y2=\"1\" x1=\"0\" x2=\"0\">"
		"<stop stop-color=\"#eeeeee\" offset=\"5%\"/><stop stop-color=\"#eeeeb0\" offset=\"95%\"/>"
		"</linearGradient></defs>\n<style type=\"text/css\">\n");
	sb_adds(sb, flamegraph_css);
	sb_adds(sb, "</style>\n<script type=\"text/ecmascript\"><![CDATA[\n");
	sb_adds(sb, flamegraph_js);
	sb_addf(sb, "]]></script>\n<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%.0f\" fill=\"url(#bg)\"/>\n",
		FG_WIDTH, height);
	sb_addf(sb, "<text id=\"title\" x=\"%d\" y=\"24\">", FG_WIDTH / 2);
	xml_escape(sb, title);
	sb_addf(sb, "</text>\n<text id=\"subtitle\" x=\"%d\" y=\"42\">", FG_WIDTH / 2);
	xml_escape(sb, subtitle);
	sb_adds(sb, "</text>\n");
	sb_addf(sb, "<text id=\"unzoom\" class=\"ctl\" x=\"%d\" y=\"58\">Reset Zoom</text>\n"
		"<text id=\"clear\" class=\"ctl\" x=\"%d\" y=\"58\">Clear</text>\n"
		"<text id=\"search\" class=\"ctl\" x=\"%d\" y=\"58\">Search</text>\n",
		FG_XPAD, FG_WIDTH - FG_XPAD - 110, FG_WIDTH - FG_XPAD - 50);
	if (colour_toggle)	/* a diff is coloured by change, not by kind/module */
		sb_addf(sb, "<text id=\"colour\" class=\"ctl\" x=\"%d\" y=\"58\">Colour: kind</text>\n", FG_XPAD + 110);
}

static void svg_end(struct strbuf *sb, double height)
{
	sb_addf(sb, "<text id=\"details\" x=\"%d\" y=\"%.0f\"> </text>\n"
		"<text id=\"matched\" x=\"%d\" y=\"%.0f\" text-anchor=\"end\"> </text>\n</svg>\n",
		FG_XPAD, height - 12, FG_WIDTH - FG_XPAD, height - 12);
}

static void subtitle_of(struct strbuf *sb, const struct prof_profile *p, const struct prof_view *v,
			uint64_t total)
{
	const char *cmd = prof_meta_get(p, "command"), *ev = prof_meta_get(p, "event");

	if (cmd && *cmd)
		sb_addf(sb, "%s  -  ", cmd);
	if (ev && *ev)
		sb_addf(sb, "%s, ", ev);
	sb_addf(sb, "metric %s, total ", prof_view_metric_name(v->metric));
	render_weight(sb, v, total);
}

int prof_output_flamegraph(FILE *f, const struct prof_profile *p, const struct prof_view *v)
{
	struct flame_tree t;
	struct fg_area a;
	struct strbuf sb = STRBUF_INIT, sub = STRBUF_INIT;

	render_flame_tree_init(&t);
	render_flame_tree_add_profile(&t, p, v, FLAME_HEAD);
	render_flame_tree_finish(&t);
	area_init(&a, &t, v, FLAME_HEAD, FG_COLOUR_KIND, 0, FG_TOP);
	double height = FG_TOP + a.height + FG_BOTTOM;

	subtitle_of(&sub, p, v, t.nodes.v[0].value[FLAME_HEAD]);
	svg_begin(&sb, height, v->title ? v->title : v->inverted ? "Icicle Graph" : "Flame Graph",
		  sb_str(&sub), true);
	if (t.nodes.v[0].value[FLAME_HEAD])
		emit_subtree(&sb, &a, 0, FG_XPAD);
	else
		sb_addf(&sb, "<text x=\"%d\" y=\"%d\">no samples match this view</text>\n", FG_XPAD, FG_TOP + 12);
	svg_end(&sb, height);
	int rc = render_flush(f, &sb);

	sb_release(&sb);
	sb_release(&sub);
	render_flame_tree_free(&t);
	return rc;
}

static void diff_max_delta(struct fg_area *a)
{
	for (size_t i = 1; i < a->t->nodes.n; i++) {
		double d = node_delta(a, &a->t->nodes.v[i]);
		if (d < 0)
			d = -d;
		if (d > a->max_delta)
			a->max_delta = d;
	}
}

int prof_output_flamegraph_diff(FILE *f, const struct prof_profile *base,
				const struct prof_profile *head, const struct prof_view *v)
{
	struct flame_tree t;
	struct fg_area a, gone;
	struct strbuf sb = STRBUF_INIT, sub = STRBUF_INIT;

	render_flame_tree_init_identity(&t);
	render_flame_tree_add_profile(&t, head, v, FLAME_HEAD);	/* head first: gone needs it */
	render_flame_tree_add_base(&t, base, v);
	render_flame_tree_finish(&t);
	area_init(&a, &t, v, FLAME_HEAD, FG_COLOUR_DIFF, 0, FG_TOP);
	a.head_total = (double)t.nodes.v[0].value[FLAME_HEAD];
	a.base_total = (double)t.nodes.v[0].value[FLAME_BASE];
	diff_max_delta(&a);
	bool has_gone = t.nodes.v[0].value[FLAME_GONE] > 0;
	double gone_y = FG_TOP + a.height + 40;
	area_init(&gone, &t, v, FLAME_GONE, FG_COLOUR_GONE, 1, gone_y);
	double height = FG_TOP + a.height + FG_BOTTOM + (has_gone ? 40 + gone.height : 0);

	sb_adds(&sub, "base ");
	render_weight(&sub, v, t.nodes.v[0].value[FLAME_BASE]);
	sb_adds(&sub, ", head ");
	render_weight(&sub, v, t.nodes.v[0].value[FLAME_HEAD]);
	sb_adds(&sub, "; shaped by head, red = grew, blue = shrank (share of total)");
	svg_begin(&sb, height, v->title ? v->title : "Differential Flame Graph", sb_str(&sub), false);
	if (a.head_total)
		emit_subtree(&sb, &a, 0, FG_XPAD);
	if (has_gone) {
		sb_addf(&sb, "<text id=\"gone-title\" x=\"%d\" y=\"%.0f\">Disappeared: stacks only in base "
			"(grey, sized by their base weight, ", FG_XPAD, gone_y - 10);
		render_weight(&sb, v, t.nodes.v[0].value[FLAME_GONE]);
		sb_adds(&sb, ")</text>\n");
		emit_subtree(&sb, &gone, 0, FG_XPAD);
	}
	svg_end(&sb, height);
	int rc = render_flush(f, &sb);

	sb_release(&sb);
	sb_release(&sub);
	render_flame_tree_free(&t);
	return rc;
}
