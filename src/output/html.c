/*
 * html.c - one self-contained HTML report (no network loads): the run's
 * summary (samples, lost, unwind completeness, per-process numbers), an
 * optional timeline (CPU/RSS/I/O wait, when a prof_timeline is given), a
 * flame graph with click-to-zoom and regex search, a sortable top-functions
 * table (self and total, from prof_output_fn_table_build) and a callers/callees
 * "sandwich" of the selected function.
 *
 * Design notes / invariants:
 *  - Static parts (summary, tables, timeline) are HTML written here with
 *    every name through xml_escape.  The flame graph and sandwich are drawn
 *    by the embedded script from one JSON blob in a
 *    <script type="application/json"> element, made safe with
 *    render_json_script_safe() so a symbol containing "</script>" stays text; the
 *    script only ever puts names into textContent / title, never innerHTML.
 *  - Flame tree JSON: nodes in preorder, each [parent, name, module, file,
 *    line, kind, flags (1 inlined, 2 Python), value, self] with string-table indexes, so the
 *    page is small and the script rebuilds children from parents.
 *  - The application layer (tracks, range selection, metric switch, call
 *    tree, stack chart, source view; html_app.js, data from htmlapp.c)
 *    recomputes the flame graph, table and sandwich for a selection; the
 *    page as written shows the whole recording.
 *  - URL hooks for tests and links: `report.html?s=REGEX` or
 *    `#search=REGEX` runs a search on load; `#fn=NAME` selects a function;
 *    `?sort=COLUMN` sorts the functions table (descending) as a header click does.
 */
#include "output-priv.h"
#include "prof/output.h"
#include <string.h>

#define HTML_MAX_FN_ROWS 500
/* Process table rows: the busiest, then one line for the rest (an hour of
 * `record -a` has 32,000 processes: 3.1 MB of table, 6 s to parse). */
#define HTML_MAX_PROC_ROWS 100
/* Rows shown before the "more" button: the first screen holds the busiest
 * processes and the flame graph. */
#define HTML_PROC_ROWS_SHOWN 10
/* More processes than this: the machine-wide page (the flame graph first). */
#define HTML_MANY_PROCS 8

/* The viewer's files, embedded at build time. */
OUTPUT_EMBED(html_report_css, "html_report.css");
OUTPUT_EMBED(html_report_js, "html_report.js");
OUTPUT_EMBED(html_app_js, "html_app.js");
/* The application's panels around the flame graph (html_app.js fills them). */
OUTPUT_EMBED(html_tracks_html, "html_tracks.html");
OUTPUT_EMBED(html_calltree_html, "html_calltree.html");

/* --- flame tree as JSON --------------------------------------------------- */

struct json_strings { struct strtab tab; };

static uint32_t js_id(struct json_strings *js, const char *s)
{
	return strtab_intern(&js->tab, s);
}

/* A node: [parent, name, module, file, line, kind, flags, value, self]
 * (flags: 1 inlined, 2 a Python function), and in a diff the base value
 * as a tenth element. */
static void tree_json_node(struct strbuf *sb, struct json_strings *js, const struct flame_tree *t,
			   uint32_t id, uint32_t parent_out, uint32_t *next_out, bool first, bool diff)
{
	const struct flame_node *n = &t->nodes.v[id];
	uint32_t me = (*next_out)++;

	sb_addf(sb, "%s[%u,%u,%u,%u,%u,%u,%u,%llu,%llu", first ? "" : ",\n", parent_out,
		js_id(js, n->name), js_id(js, n->module), js_id(js, n->file), n->line,
		n->kind, (n->inlined ? 1u : 0u) | (n->python ? 2u : 0u), (unsigned long long)n->value[FLAME_HEAD],
		(unsigned long long)n->self[FLAME_HEAD]);
	if (diff)
		sb_addf(sb, ",%llu", (unsigned long long)n->value[FLAME_BASE]);
	sb_addch(sb, ']');
	for (uint32_t k = 0; k < n->n_children; k++)
		tree_json_node(sb, js, t, t->child_ids.v[n->first_child + k], me, next_out, false, diff);
}

/* Largest change of share of any node, for the diff colour scale. */
static double max_share_delta(const struct flame_tree *t)
{
	double head = (double)t->nodes.v[0].value[FLAME_HEAD], base = (double)t->nodes.v[0].value[FLAME_BASE];
	double m = 1e-9;

	for (size_t i = 1; i < t->nodes.n; i++) {
		const struct flame_node *n = &t->nodes.v[i];
		double d = (head ? n->value[FLAME_HEAD] / head : 0) - (base ? n->value[FLAME_BASE] / base : 0);
		m = d > m ? d : -d > m ? -d : m;
	}
	return m;
}

/*
 * With sample times the application (html_app.js) builds the flame graph
 * from its own rows, so the tree here is only the root ("app": true) and
 * the page carries the stacks once.
 */
static void data_json(struct strbuf *sb, const struct prof_profile *p, const struct prof_view *v,
		      const struct prof_profile *base)
{
	struct flame_tree t;
	struct json_strings js;
	struct strbuf nodes = STRBUF_INIT;
	uint32_t next = 0;

	if (base)
		render_flame_tree_init_identity(&t);
	else
		render_flame_tree_init(&t);
	if (!p->timed.n || base)
		render_flame_tree_add_profile(&t, p, v, FLAME_HEAD);
	if (base)
		render_flame_tree_add_base(&t, base, v);
	render_flame_tree_finish(&t);
	strtab_init(&js.tab);
	tree_json_node(&nodes, &js, &t, 0, 0, &next, true, base != NULL);
	if (base)
		sb_addf(sb, "{\"diff\":true,\"base_total\":%llu,\"max_delta\":%.9f,",
			(unsigned long long)t.nodes.v[0].value[FLAME_BASE], max_share_delta(&t));
	else
		sb_addch(sb, '{');
	sb_addf(sb, "\"unit\":\"%s\",\"inverted\":%s,\"app\":%s,\"strings\":",
		v->metric == PROF_VIEW_CPU ? "samples" : prof_view_metric_is_heap(v->metric)
			? prof_view_metric_unit(v->metric) : "ns", v->inverted ? "true" : "false",
		p->timed.n && !base ? "true" : "false");
	render_json_strtab(sb, &js.tab);
	sb_adds(sb, ",\n\"nodes\":[");
	sb_add(sb, nodes.buf ? nodes.buf : "", nodes.len);
	sb_adds(sb, "]}");
	sb_release(&nodes);
	strtab_free(&js.tab);
	render_flame_tree_free(&t);
}

/* --- static sections ------------------------------------------------------- */

static void row(struct strbuf *sb, const char *key, const char *value)
{
	sb_adds(sb, "<tr><th>");
	xml_escape(sb, key);
	sb_adds(sb, "</th><td>");
	xml_escape(sb, value);
	sb_adds(sb, "</td></tr>\n");
}

static void meta_row(struct strbuf *sb, const struct prof_profile *p, const char *label, const char *key)
{
	const char *v = prof_meta_get(p, key);

	if (v && *v)
		row(sb, label, v);
}

/* One row of the process table. */
static void process_row(struct strbuf *sb, const struct prof_profile *p, const struct prof_view *v,
			const struct proc_info *pi, uint64_t weight)
{
	struct strbuf w = STRBUF_INIT;

	render_weight(&w, v, weight);
	sb_addf(sb, "<tr><td class=\"n\">%u</td><td>", pi->pid);
	xml_escape(sb, pi->comm);
	sb_addf(sb, "</td><td class=\"n\">%zu</td><td class=\"n\">%s</td>", pi->tasks, sb_str(&w));
	if (p->resources.n)
		render_html_resource_cells(sb, p, pi);
	sb_adds(sb, "</tr>\n");
	sb_release(&w);
}

/*
 * The processes of render_view_process_pids(), busiest first, named by their
 * main thread: the first HTML_PROC_ROWS_SHOWN rows, the others behind a
 * button, and over HTML_MAX_PROC_ROWS one line for the rest.  The heading
 * counts the same processes and threads the rows do.
 */
static void per_process(struct strbuf *sb, const struct prof_profile *p, const struct prof_view *v)
{
	struct strbuf w = STRBUF_INIT;
	struct proc_table pt;
	size_t np, tasks = 0;
	uint32_t *pids = render_view_process_pids(p, v, &np);
	uint64_t *weight = xcalloc(np + 1, sizeof(*weight));
	struct u64map row = { 0 };	/* pid -> its row */

	render_proc_table_build(&pt, p);
	for (size_t k = 0; k < np; k++) {
		u64map_put(&row, pids[k], k);
		tasks += render_proc_table_get(&pt, pids[k])->tasks;
	}
	for (size_t i = 0; i < p->aggs.n; i++) {
		const struct prof_agg *a = &p->aggs.v[i];
		uint64_t k;
		if (a->thread < p->threads.n && u64map_get(&row, p->threads.v[a->thread].pid, &k))
			weight[k] += prof_view_weight(p, v, a);
	}
	sb_addf(sb, "<h2 id=\"procs-title\">Processes: %zu, %zu thread%s, busiest first</h2>\n", np, tasks,
		tasks == 1 ? "" : "s");
	sb_adds(sb, "<table id=\"procs\"><thead><tr><th class=\"n\">PID</th><th>Command</th>"
		"<th class=\"n\">Threads</th><th class=\"n\">Weight</th>");
	if (p->resources.n)
		render_html_resource_heads(sb);
	sb_adds(sb, "</tr></thead><tbody>\n");
	size_t *order = render_order_heaviest_first(weight, np), shown = MIN(np, HTML_MAX_PROC_ROWS);
	uint64_t rest = 0;
	for (size_t i = 0; i < np; i++) {
		if (i >= shown) {
			rest += weight[order[i]];
			continue;
		}
		if (i == HTML_PROC_ROWS_SHOWN)
			sb_adds(sb, "</tbody><tbody id=\"procs-more\" hidden>\n");
		process_row(sb, p, v, render_proc_table_get(&pt, pids[order[i]]), weight[order[i]]);
	}
	if (np > shown) {
		render_weight(&w, v, rest);
		sb_addf(sb, "<tr><td></td><td>%zu more processes (all of them: prof report "
			"--format=json)</td><td></td><td class=\"n\">%s</td></tr>\n", np - shown, sb_str(&w));
	}
	sb_adds(sb, "</tbody>");
	if (shown > HTML_PROC_ROWS_SHOWN)
		sb_addf(sb, "<tbody><tr><td></td><td colspan=\"3\"><button id=\"procs-toggle\" "
			"data-more=\"%zu more\">%zu more</button></td></tr></tbody>",
			shown - HTML_PROC_ROWS_SHOWN, shown - HTML_PROC_ROWS_SHOWN);
	sb_adds(sb, "</table>\n");
	free(order);
	sb_release(&w);
	u64map_free(&row);
	render_proc_table_free(&pt);
	free(weight);
	free(pids);
}

static void summary(struct strbuf *sb, const struct prof_profile *p, const struct prof_view *v)
{
	struct strbuf val = STRBUF_INIT;

	sb_adds(sb, "<table id=\"summary\">\n");
	meta_row(sb, p, "Command", "command");
	meta_row(sb, p, "Event", "event");
	meta_row(sb, p, "Frequency (Hz)", "frequency");
	meta_row(sb, p, "Call graph", "callgraph");
	meta_row(sb, p, "Unwinder", "unwinder");
	meta_row(sb, p, "Host", "hostname");
	meta_row(sb, p, "Kernel", "kernel");
	meta_row(sb, p, "Started", "start_time");
	sb_addf(&val, "%llu", (unsigned long long)p->samples);
	row(sb, "Samples", sb_str(&val));
	sb_reset(&val);
	sb_addf(&val, "%llu", (unsigned long long)p->lost);
	row(sb, "Lost", sb_str(&val));
	sb_reset(&val);
	if (p->samples)
		sb_addf(&val, "%.1f%% (%llu of %llu stacks truncated)",
			100.0 * (1.0 - (double)p->samples_truncated / (double)p->samples),
			(unsigned long long)p->samples_truncated, (unsigned long long)p->samples);
	else
		sb_adds(&val, "n/a (no samples)");
	row(sb, "Unwind completeness", sb_str(&val));
	if (p->end_ns > p->start_ns) {
		sb_reset(&val);
		sb_addf(&val, "%.2f s", (p->end_ns - p->start_ns) / 1e9);
		row(sb, "Duration", sb_str(&val));
	}
	sb_reset(&val);
	sb_adds(&val, prof_view_metric_name(v->metric));
	row(sb, "Metric", sb_str(&val));
	if (p->heap.scope[0])	/* report --min-age, --at */
		row(sb, "Heap", p->heap.scope);
	sb_adds(sb, "</table>\n");
	sb_release(&val);
}

static void timeline_series(struct strbuf *sb, const struct prof_timeline_series *s)
{
	const double W = 1100, H = 80;
	double vmax = 0;
	uint64_t t0 = s->points.v[0].t_ns, t1 = s->points.v[s->points.n - 1].t_ns;

	for (size_t i = 0; i < s->points.n; i++)
		if (s->points.v[i].value > vmax)
			vmax = s->points.v[i].value;
	sb_adds(sb, "<div class=\"tl\"><b>");
	xml_escape(sb, s->name ? s->name : "");
	sb_addf(sb, "</b> <span class=\"muted\">max %.3g ", vmax);
	xml_escape(sb, s->unit ? s->unit : "");
	sb_addf(sb, ", %.2f s</span>\n<svg width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\">"
		"<polyline fill=\"none\" stroke=\"#c33\" stroke-width=\"1.5\" points=\"",
		(t1 - t0) / 1e9, W, H, W, H);
	for (size_t i = 0; i < s->points.n; i++) {
		double x = t1 > t0 ? W * (double)(s->points.v[i].t_ns - t0) / (double)(t1 - t0) : 0;
		double y = vmax > 0 ? H - 2 - (H - 4) * s->points.v[i].value / vmax : H - 2;
		sb_addf(sb, "%.1f,%.1f ", x, y);
	}
	sb_adds(sb, "\"/></svg></div>\n");
}

static void timeline(struct strbuf *sb, const struct prof_timeline *tl)
{
	bool any = false;

	for (size_t i = 0; tl && i < tl->series.n; i++)
		any |= tl->series.v[i].points.n > 0;
	if (!any)
		return;		/* nothing recorded: no section at all */
	sb_adds(sb, "<h2>Timeline</h2>\n<div id=\"timeline\">\n");
	for (size_t i = 0; i < tl->series.n; i++)
		if (tl->series.v[i].points.n)
			timeline_series(sb, &tl->series.v[i]);
	sb_adds(sb, "</div>\n");
}

static void fn_key_attr(struct strbuf *sb, const char *name, const char *module)
{
	struct strbuf k = STRBUF_INIT;

	/* Same key the script builds: name TAB module path. */
	sb_adds(&k, name);
	sb_adds(&k, "\t");
	sb_adds(&k, module);
	xml_escape(sb, sb_str(&k));
	sb_release(&k);
}

/*
 * The function table.  With the application (app_fills) only its header:
 * html_app.js fills the rows for the selection at load, and 500 rows
 * written here too were a third of a 1M-sample page's bytes.
 */
static void fn_table(struct strbuf *sb, const struct prof_profile *p, const struct prof_view *v,
		     bool app_fills)
{
	struct prof_fn_table t = { 0 };
	struct strbuf w = STRBUF_INIT;

	if (!app_fills)
		prof_output_fn_table_build(p, v, &t);
	sb_adds(sb, "<h2>Top functions</h2>\n<table id=\"fns\"><thead><tr>"
		"<th>Function</th><th>Module</th>"
		"<th class=\"n\">Self</th><th class=\"n\">Self%</th>"
		"<th class=\"n\">Total</th><th class=\"n\">Total%</th>"
		"<th>Location</th>"
		"</tr></thead><tbody>\n");
	for (size_t i = 0; i < t.rows.n && i < HTML_MAX_FN_ROWS; i++) {
		const struct prof_fn_row *r = &t.rows.v[i];
		const char *name = prof_str(p, r->func);
		const char *mod = r->module < p->modules.n ? prof_str(p, p->modules.v[r->module].path) : "";
		const char *base = strrchr(mod, '/') ? strrchr(mod, '/') + 1 : mod;
		double gt = t.grand_total ? (double)t.grand_total : 1;
		sb_adds(sb, "<tr data-k=\"");
		fn_key_attr(sb, name, mod);
		sb_adds(sb, "\"><td data-v=\"");
		xml_escape(sb, name);
		sb_adds(sb, "\">");
		xml_escape(sb, name);
		sb_adds(sb, "</td><td data-v=\"");
		xml_escape(sb, base);
		sb_adds(sb, "\" title=\"");
		xml_escape(sb, mod);
		sb_adds(sb, "\">");
		xml_escape(sb, base);
		sb_reset(&w);
		render_weight(&w, v, r->self);
		sb_addf(sb, "</td><td class=\"n\" data-v=\"%llu\">%s</td><td class=\"n\" data-v=\"%llu\">%.2f%%</td>",
			(unsigned long long)r->self, sb_str(&w), (unsigned long long)r->self, 100.0 * r->self / gt);
		sb_reset(&w);
		render_weight(&w, v, r->total);
		sb_addf(sb, "<td class=\"n\" data-v=\"%llu\">%s</td><td class=\"n\" data-v=\"%llu\">%.2f%%</td>",
			(unsigned long long)r->total, sb_str(&w), (unsigned long long)r->total, 100.0 * r->total / gt);
		sb_reset(&w);
		if (*prof_str(p, r->file))
			sb_addf(&w, "%s:%u", prof_str(p, r->file), r->line);
		sb_adds(sb, "<td data-v=\"");
		xml_escape(sb, sb_str(&w));
		sb_adds(sb, "\">");
		xml_escape(sb, sb_str(&w));
		sb_adds(sb, "</td></tr>\n");
	}
	sb_adds(sb, "</tbody></table>\n");
	if (t.rows.n > HTML_MAX_FN_ROWS)
		sb_addf(sb, "<p class=\"muted\">%zu more functions not shown.</p>\n", t.rows.n - HTML_MAX_FN_ROWS);
	sb_release(&w);
	prof_output_fn_table_free(&t);
}

/* --- diff: functions whose share of the total moved most ------------------ */

struct mover { const char *name, *module; double base, head; };
struct mover_vec { struct mover *v; size_t n, cap; };

static int by_move(const void *x, const void *y)
{
	const struct mover *a = x, *b = y;
	double da = a->head - a->base, db = b->head - b->base;

	da = da < 0 ? -da : da;
	db = db < 0 ? -db : db;
	return (da < db) - (da > db);
}

static void add_shares(struct mover_vec *m, struct u64map *ix, const struct prof_profile *p,
		       const struct prof_view *v, bool head)
{
	struct prof_fn_table t = { 0 };

	prof_output_fn_table_build(p, v, &t);
	for (size_t i = 0; i < t.rows.n; i++) {
		const struct prof_fn_row *r = &t.rows.v[i];
		const char *name = prof_str(p, r->func);
		const char *mod = r->module < p->modules.n ? prof_module_basename(p, r->module) : "";
		uint64_t key = hash64(hash_bytes(name, strlen(name)) ^ hash_bytes(mod, strlen(mod)) * 31);
		bool created;
		uint64_t *slot = u64map_slot(ix, key, &created);
		if (created) {	/* distinct names with one hash: counted apart is fine */
			*slot = m->n;
			VEC_PUSH(m, ((struct mover){ name, mod, 0, 0 }));
		}
		double share = percent(r->self, t.grand_total);
		if (head)
			m->v[*slot].head += share;
		else
			m->v[*slot].base += share;
	}
	prof_output_fn_table_free(&t);
}

static void movers(struct strbuf *sb, const struct prof_profile *base, const struct prof_profile *head,
		   const struct prof_view *v)
{
	struct mover_vec m = { 0 };
	struct u64map ix = { 0 };

	add_shares(&m, &ix, base, v, false);
	add_shares(&m, &ix, head, v, true);
	qsort(m.v, m.n, sizeof(*m.v), by_move);
	sb_adds(sb, "<h2>Movers</h2>\n<p class=\"muted\">Self share of the total in each recording; "
		"red grew, blue shrank.</p>\n<table id=\"movers\"><thead><tr><th>Function</th><th>Module</th>"
		"<th class=\"n\">Base self%</th><th class=\"n\">Head self%</th><th class=\"n\">Change</th>"
		"</tr></thead><tbody>\n");
	for (size_t i = 0; i < m.n && i < 50; i++) {
		double d = m.v[i].head - m.v[i].base;
		sb_addf(sb, "<tr style=\"color:%s\"><td>", d > 0 ? "#c00" : d < 0 ? "#00c" : "#444");
		xml_escape(sb, m.v[i].name);
		sb_adds(sb, "</td><td>");
		xml_escape(sb, m.v[i].module);
		sb_addf(sb, "</td><td class=\"n\">%.2f%%</td><td class=\"n\">%.2f%%</td>"
			"<td class=\"n\">%+.2f</td></tr>\n", m.v[i].base, m.v[i].head, d);
	}
	sb_adds(sb, "</tbody></table>\n");
	VEC_FREE(&m);
	u64map_free(&ix);
}

/* The flame graph, its controls and the callers/callees beside it. */
static void flame_section(struct strbuf *sb)
{
	sb_adds(sb, "<h2>Flame graph</h2>\n<div class=\"ctl\">Search (regex): <input id=\"q\" "
		"placeholder=\"e.g. ^spin|malloc\"> <button id=\"qgo\">Search</button> "
		"<button id=\"qclear\">Clear</button> <button id=\"unzoom\">Reset zoom</button>"
		"<span class=\"app\"> <button id=\"icicle\">Flame / icicle</button> "
		"<label><input type=\"checkbox\" id=\"rec\"> collapse recursion</label> "
		"<button id=\"focusbtn\">Focus on selected function</button> <button id=\"unfocus\">Unfocus</button> "
		"<span id=\"focusinfo\" class=\"muted\"></span></span><span id=\"matched\"></span></div>\n"
		"<div class=\"fg\"><div class=\"fgmain\"><div id=\"flamewrap\"><div id=\"flame\"></div></div>"
		"<div id=\"details\"></div></div>\n");
	sb_adds(sb, "<div class=\"fgside\"><h3>Callers / callees of <span id=\"sw-name\" class=\"muted\">"
		"(click a function)</span></h3>"
		"<b>Callers</b><table><tbody id=\"callers\"></tbody></table>"
		"<b>Callees</b><table><tbody id=\"callees\"></tbody></table></div></div>\n");
}

/* A recording of the whole machine (-a, -C) or of many processes: its
 * page opens with the busiest processes and the flame graph. */
static bool machine_wide(const struct prof_profile *p)
{
	const char *cmd = prof_meta_get(p, "command");
	size_t procs = 0;
	struct u64map seen = { 0 };

	if (cmd && !strncmp(cmd, "-a", 2))
		return true;
	for (size_t i = 0; i < p->threads.n && procs <= HTML_MANY_PROCS; i++) {
		bool created;
		u64map_slot(&seen, p->threads.v[i].pid, &created);
		procs += created;
	}
	u64map_free(&seen);
	return procs > HTML_MANY_PROCS;
}

/*
 * The page.  With a base profile it is the diff view: the flame graph of
 * head coloured by the change of each frame's share (red grew, blue
 * shrank), the movers table, and no time tracks (two recordings have no
 * common time axis).
 */
static int html_page(FILE *f, const struct prof_profile *p, const struct prof_view *v,
		     const struct prof_timeline *tl, const struct prof_profile *base)
{
	struct strbuf sb = STRBUF_INIT, data = STRBUF_INIT;
	const char *title = v->title ? v->title : "prof report";

	sb_adds(&sb, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
		"<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
		"script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\">\n<title>");
	xml_escape(&sb, title);
	sb_adds(&sb, "</title>\n<style>\n");
	sb_adds(&sb, html_report_css);
	sb_adds(&sb, "</style></head><body>\n<h1>");
	xml_escape(&sb, title);
	sb_adds(&sb, "</h1>\n");
	if (machine_wide(p) && !base) {	/* the hottest work first */
		per_process(&sb, p, v);
		flame_section(&sb);
		sb_adds(&sb, html_tracks_html);
		sb_adds(&sb, "<h2>Summary</h2>\n");
		summary(&sb, p, v);
		timeline(&sb, tl);
	} else {
		sb_adds(&sb, "<h2>Summary</h2>\n");
		summary(&sb, p, v);
		per_process(&sb, p, v);
		timeline(&sb, tl);
		if (base)
			movers(&sb, base, p, v);
		else
			sb_adds(&sb, html_tracks_html);
		flame_section(&sb);
	}
	if (!base)
		sb_adds(&sb, html_calltree_html);
	fn_table(&sb, p, v, p->timed.n && !base);
	if (!base)
		sb_adds(&sb, "<h2>Source: <span id=\"src-name\" class=\"muted\"></span></h2>"
			"<div id=\"source\"></div>\n");
	data_json(&data, p, v, base);
	sb_adds(&sb, "<script type=\"application/json\" id=\"prof-data\">");
	render_json_script_safe(&sb, sb_str(&data));
	if (!base) {
		sb_adds(&sb, "</script>\n<script type=\"application/json\" id=\"prof-app\">");
		sb_reset(&data);
		render_html_app_data(&data, p, v);
		render_json_script_safe(&sb, sb_str(&data));
	}
	sb_adds(&sb, "</script>\n<script>\n");
	sb_adds(&sb, html_report_js);
	if (!base) {
		sb_adds(&sb, "</script>\n<script>\n");
		sb_adds(&sb, html_app_js);
	}
	sb_adds(&sb, "</script>\n</body></html>\n");
	int rc = render_flush(f, &sb);

	sb_release(&sb);
	sb_release(&data);
	return rc;
}

int prof_output_html_ex(FILE *f, const struct prof_profile *p, const struct prof_view *v,
			const struct prof_timeline *tl)
{
	return html_page(f, p, v, tl, NULL);
}

int prof_output_html_diff(FILE *f, const struct prof_profile *base, const struct prof_profile *head,
			  const struct prof_view *v)
{
	return html_page(f, head, v, NULL, base);
}

int prof_output_html(FILE *f, const struct prof_profile *p, const struct prof_view *v)
{
	struct prof_timeline tl;
	int ret;

	prof_output_timeline_from_profile(p, &tl);
	ret = prof_output_html_ex(f, p, v, &tl);
	prof_output_timeline_free(&tl);
	return ret;
}
