/*
 * html.c - one self-contained HTML report (no network loads): the run's
 * summary (samples, lost, unwind completeness, per-process numbers), an
 * optional timeline (CPU/RSS/I/O wait, when a prof_timeline is given), a
 * flame graph with click-to-zoom and regex search, a sortable top-functions
 * table (self and total, from prof_fn_table_build) and a callers/callees
 * "sandwich" of the selected function.
 *
 * Design notes / invariants:
 *  - Static parts (summary, tables, timeline) are HTML written here with
 *    every name through xml_escape.  The flame graph and sandwich are drawn
 *    by the embedded script from one JSON blob in a
 *    <script type="application/json"> element, made safe with
 *    json_script_safe() so a symbol containing "</script>" stays text; the
 *    script only ever puts names into textContent / title, never innerHTML.
 *  - Flame tree JSON: nodes in preorder, each [parent, name, module, file,
 *    line, kind, inlined, value, self] with string-table indexes, so the
 *    page is small and the script rebuilds children from parents.
 *  - URL hooks for tests and links: `report.html?s=REGEX` or
 *    `#search=REGEX` runs a search on load; `#fn=NAME` selects a function;
 *    `?sort=COLUMN` sorts the functions table (descending) as a header click does.
 */
#include "output-priv.h"
#include "prof/render.h"
#include <string.h>

#define HTML_MAX_FN_ROWS 500

static const char html_style[] =
	"body{font-family:system-ui,Verdana,sans-serif;margin:16px;color:#222;background:#fafafa}\n"
	"h1{font-size:20px;margin:0 0 8px}h2{font-size:16px;margin:22px 0 6px;border-bottom:1px solid #ccc}\n"
	"table{border-collapse:collapse;font-size:13px}td,th{padding:2px 8px;text-align:left}\n"
	"th{background:#e8e8e8;cursor:pointer;user-select:none}td.n,th.n{text-align:right}\n"
	"#fns tr:hover,#callers tr:hover,#callees tr:hover{background:#ffe9a8;cursor:pointer}\n"
	"#fns tr.sel{background:#ffd75e}\n"
	"#flame{position:relative;width:100%;overflow:hidden;background:linear-gradient(#eee,#eeeeb0);"
	"border:1px solid #ccc}\n"
	"#flame div{position:absolute;height:17px;font-size:11px;line-height:17px;overflow:hidden;"
	"white-space:nowrap;text-overflow:ellipsis;box-sizing:border-box;border:1px solid #fafafa;"
	"border-radius:2px;padding-left:2px;cursor:pointer}\n"
	"#flame div:hover{border-color:#000}#flame div.m{background:#e600e6!important}\n"
	"#flame div.anc{opacity:.55}#flame div.inl{border-style:dashed;border-color:#333}\n"
	".ctl{margin:4px 0}.ctl input{width:260px}#matched{margin-left:12px;font-weight:bold}\n"
	"#details{font-size:12px;min-height:16px;color:#333;margin-top:4px}\n"
	".sw{display:flex;gap:24px}.sw>div{flex:1}.muted{color:#777}\n"
	".tl svg{background:#fff;border:1px solid #ccc;display:block;margin-bottom:6px}\n";

static const char html_script[] =
	"var D=JSON.parse(document.getElementById('prof-data').textContent),S=D.strings,N=D.nodes,K=[],zoomId=0,re=null;\n"
	"N.forEach(function(n,i){K.push([]);if(i)K[n[0]].push(i);});\n"
	"function nm(i){return i?S[N[i][1]]:'all';}\n"
	"function key(i){return S[N[i][1]]+'\\t'+S[N[i][2]];}\n"
	"function fmt(v){return D.unit=='samples'?v+' samples':(v/1e6).toFixed(3)+' ms';}\n"
	"function pct(v){return (N[0][7]?100*v/N[0][7]:0).toFixed(2)+'%';}\n"
	"function hue(s){var h=0;for(var i=0;i<s.length;i++)h=(h*31+s.charCodeAt(i))>>>0;return h;}\n"
	"function colour(i){var n=N[i],h=hue(S[n[1]]),v=(h%100)/100;\n"
	" if(n[6])return 'rgb('+(50+60*v|0)+','+(165+55*v|0)+','+(165+55*v|0)+')';\n"
	" if(n[5]==1)return 'rgb('+(190+65*v|0)+','+(90+65*v|0)+',0)';\n"
	" if(n[5]==2)return 'rgb(40,'+(200+55*v|0)+',40)';\n"
	" if(n[5]>=3)return 'rgb(180,180,190)';\n"
	" return 'rgb('+(205+50*v|0)+','+(230*((h>>8)%100)/100|0)+','+(55*((h>>16)%100)/100|0)+')';}\n"
	"function tip(i){var n=N[i],t=nm(i);if(n[6])t+=' [inlined]';if(n[5]==1)t+=' [kernel]';\n"
	" if(S[n[2]])t+=' ('+S[n[2]]+')';if(S[n[3]])t+='  '+S[n[3]]+':'+n[4];return t+'  '+fmt(n[7])+' ('+pct(n[7])+')';}\n"
	"function depthOf(i){var d=0;while(i){i=N[i][0];d++;}return d;}\n"
	"function render(){var box=document.getElementById('flame');box.textContent='';\n"
	" var W=box.clientWidth||1100,z=zoomId,zd=depthOf(z),sc=W/N[z][7],H=18,items=[],maxd=0;\n"
	" for(var a=N[z][0],ad=zd-1;z&&a!==undefined&&ad>=0;a=a?N[a][0]:undefined,ad--){items.push([a,0,W,ad,1]);if(!a)break;}\n"
	" (function walk(i,x,d){var w=N[i][7]*sc;if(w<0.5)return;items.push([i,x,w,d,0]);if(d>maxd)maxd=d;\n"
	"  K[i].forEach(function(c){walk(c,x,d+1);x+=N[c][7]*sc;});})(z,0,zd);\n"
	" if(zd>maxd)maxd=zd;box.style.height=((maxd+1)*H+2)+'px';\n"
	" items.forEach(function(it){var i=it[0],e=document.createElement('div');\n"
	"  e.style.left=it[1]+'px';e.style.width=Math.max(it[2],1)+'px';\n"
	"  e.style.top=(D.inverted?it[3]*H:(maxd-it[3])*H)+'px';e.style.background=colour(i);\n"
	"  e.textContent=it[2]>28?nm(i):'';e.title=tip(i);e.setAttribute('data-n',nm(i));\n"
	"  e.className=(it[4]?'anc ':'')+(N[i][6]?'inl ':'')+(re&&i&&re.test(nm(i))?'m':'');\n"
	"  e.onclick=function(){zoomId=i;render();if(i)sandwich(key(i));};\n"
	"  e.onmouseover=function(){document.getElementById('details').textContent=tip(i);};\n"
	"  box.appendChild(e);});}\n"
	"function search(t){try{re=t?new RegExp(t):null;}catch(err){document.getElementById('matched').textContent='bad regex';return;}\n"
	" var m=0;(function walk(i){if(i&&re&&re.test(nm(i))){m+=N[i][7];return;}K[i].forEach(walk);})(0);\n"
	" document.getElementById('matched').textContent=re?(N[0][7]?100*m/N[0][7]:0).toFixed(1)+'% matched':'';\n"
	" document.getElementById('q').value=t||'';render();}\n"
	"function fill(id,rows,tot){var tb=document.getElementById(id);tb.textContent='';\n"
	" rows.sort(function(a,b){return b[1]-a[1];}).forEach(function(r){var tr=document.createElement('tr');\n"
	"  [r[0].split('\\t')[0],fmt(r[1]),(tot?100*r[1]/tot:0).toFixed(1)+'%'].forEach(function(c,j){\n"
	"   var td=document.createElement('td');td.textContent=c;if(j)td.className='n';tr.appendChild(td);});\n"
	"  if(r[0]!='(root)')tr.onclick=function(){sandwich(r[0]);};tb.appendChild(tr);});}\n"
	"function sandwich(k){var callers={},callees={},tot=0;\n"
	" (function walk(i,inside){var me=i&&key(i)==k,outer=me&&!inside;\n"
	"  if(outer){tot+=N[i][7];var pk=N[i][0]?key(N[i][0]):'(root)';callers[pk]=(callers[pk]||0)+N[i][7];\n"
	"   K[i].forEach(function(c){callees[key(c)]=(callees[key(c)]||0)+N[c][7];});}\n"
	"  K[i].forEach(function(c){walk(c,inside||me);});})(0,false);\n"
	" var name=k.split('\\t')[0];document.getElementById('sw-name').textContent=name+'  -  total '+fmt(tot)+' ('+pct(tot)+')';\n"
	" fill('callers',Object.keys(callers).map(function(x){return [x,callers[x]];}),tot);\n"
	" fill('callees',Object.keys(callees).map(function(x){return [x,callees[x]];}),tot);\n"
	" var rows=document.querySelectorAll('#fns tbody tr');rows.forEach(function(r){\n"
	"  r.className=(r.getAttribute('data-k')==k)?'sel':'';});}\n"
	"function sortBy(col,num){var tb=document.querySelector('#fns tbody'),rows=[].slice.call(tb.rows);\n"
	" var th=document.querySelectorAll('#fns th')[col],desc=th.getAttribute('data-dir')!='desc';\n"
	" th.setAttribute('data-dir',desc?'desc':'asc');\n"
	" rows.sort(function(a,b){var x=a.cells[col].getAttribute('data-v'),y=b.cells[col].getAttribute('data-v');\n"
	"  var c=num?(+x)-(+y):x.localeCompare(y);return desc?-c:c;});rows.forEach(function(r){tb.appendChild(r);});}\n"
	"document.querySelectorAll('#fns tbody tr').forEach(function(r){r.onclick=function(){sandwich(r.getAttribute('data-k'));};});\n"
	"document.getElementById('q').onkeyup=function(ev){if(ev.key=='Enter')search(this.value);};\n"
	"window.onresize=render;render();\n"
	"(function(){var q=new URLSearchParams(location.search),s=q.get('s'),h=location.hash,c=q.get('sort');\n"
	" if(c!==null)sortBy(+c,+c>=2);\n"
	" if(!s&&h.indexOf('#search=')==0)s=decodeURIComponent(h.slice(8));if(s)search(s);\n"
	" if(h.indexOf('#fn=')==0){var f=decodeURIComponent(h.slice(4));for(var i=1;i<N.length;i++)if(nm(i)==f){sandwich(key(i));break;}}\n"
	" else{var r=document.querySelector('#fns tbody tr');if(r)sandwich(r.getAttribute('data-k'));}})();\n";

/* --- flame tree as JSON --------------------------------------------------- */

struct json_strings { struct strtab tab; };

static uint32_t js_id(struct json_strings *js, const char *s)
{
	return strtab_intern(&js->tab, s);
}

static void tree_json_node(struct strbuf *sb, struct json_strings *js, const struct flame_tree *t,
			   uint32_t id, uint32_t parent_out, uint32_t *next_out, bool first)
{
	const struct flame_node *n = &t->nodes.v[id];
	uint32_t me = (*next_out)++;

	sb_addf(sb, "%s[%u,%u,%u,%u,%u,%u,%u,%llu,%llu]", first ? "" : ",\n", parent_out,
		js_id(js, n->name), js_id(js, n->module), js_id(js, n->file), n->line,
		n->kind, n->inlined, (unsigned long long)n->value[FLAME_HEAD],
		(unsigned long long)n->self[FLAME_HEAD]);
	for (uint32_t k = 0; k < n->n_children; k++)
		tree_json_node(sb, js, t, t->child_ids.v[n->first_child + k], me, next_out, false);
}

static void data_json(struct strbuf *sb, const struct prof_profile *p, const struct prof_view *v)
{
	struct flame_tree t;
	struct json_strings js;
	struct strbuf nodes = STRBUF_INIT;
	uint32_t next = 0;

	flame_tree_init(&t);
	flame_tree_add_profile(&t, p, v, FLAME_HEAD);
	flame_tree_finish(&t);
	strtab_init(&js.tab);
	tree_json_node(&nodes, &js, &t, 0, 0, &next, true);
	sb_addf(sb, "{\"unit\":\"%s\",\"inverted\":%s,\"strings\":[",
		v->metric == PROF_VIEW_CPU ? "samples" : "ns", v->inverted ? "true" : "false");
	for (size_t i = 0; i < js.tab.strs.n; i++) {
		if (i)
			sb_addch(sb, ',');
		json_str(sb, js.tab.strs.v[i]);
	}
	sb_adds(sb, "],\n\"nodes\":[");
	sb_add(sb, nodes.buf ? nodes.buf : "", nodes.len);
	sb_adds(sb, "]}");
	sb_release(&nodes);
	strtab_free(&js.tab);
	flame_tree_free(&t);
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

struct proc_sum { uint32_t pid, comm, threads; uint64_t weight; };

static void per_process(struct strbuf *sb, const struct prof_profile *p, const struct prof_view *v)
{
	VEC(struct proc_sum) procs = { 0 };
	struct strbuf w = STRBUF_INIT;

	for (uint32_t t = 0; t < p->threads.n; t++) {
		const struct prof_thread *th = &p->threads.v[t];
		size_t k = 0;
		while (k < procs.n && procs.v[k].pid != th->pid)
			k++;
		if (k == procs.n)
			VEC_PUSH(&procs, ((struct proc_sum){ th->pid, th->comm, 0, 0 }));
		procs.v[k].threads++;
		if (th->pid == th->tid)	/* the main thread names the process */
			procs.v[k].comm = th->comm;
	}
	for (size_t i = 0; i < p->aggs.n; i++) {
		const struct prof_agg *a = &p->aggs.v[i];
		if (a->thread >= p->threads.n)
			continue;
		for (size_t k = 0; k < procs.n; k++)
			if (procs.v[k].pid == p->threads.v[a->thread].pid)
				procs.v[k].weight += prof_view_weight(p, v, a);
	}
	sb_adds(sb, "<table id=\"procs\"><thead><tr><th class=\"n\">PID</th><th>Command</th>"
		"<th class=\"n\">Threads</th><th class=\"n\">Weight</th>");
	if (p->resources.n)
		html_resource_heads(sb);
	sb_adds(sb, "</tr></thead><tbody>\n");
	for (size_t k = 0; k < procs.n; k++) {
		sb_reset(&w);
		render_weight(&w, v, procs.v[k].weight);
		sb_addf(sb, "<tr><td class=\"n\">%u</td><td>", procs.v[k].pid);
		xml_escape(sb, prof_str(p, procs.v[k].comm));
		sb_addf(sb, "</td><td class=\"n\">%u</td><td class=\"n\">%s</td>",
			procs.v[k].threads, sb_str(&w));
		if (p->resources.n)
			html_resource_cells(sb, p, procs.v[k].pid);
		sb_adds(sb, "</tr>\n");
	}
	sb_adds(sb, "</tbody></table>\n");
	sb_release(&w);
	VEC_FREE(&procs);
}

static void summary(struct strbuf *sb, const struct prof_profile *p, const struct prof_view *v)
{
	struct strbuf val = STRBUF_INIT;

	sb_adds(sb, "<h2>Summary</h2>\n<table id=\"summary\">\n");
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
	sb_adds(sb, "</table>\n<h2>Processes</h2>\n");
	per_process(sb, p, v);
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

static void fn_table(struct strbuf *sb, const struct prof_profile *p, const struct prof_view *v)
{
	struct prof_fn_table t = { 0 };
	struct strbuf w = STRBUF_INIT;

	prof_fn_table_build(p, v, &t);
	sb_adds(sb, "<h2>Top functions</h2>\n<table id=\"fns\"><thead><tr>"
		"<th onclick=\"sortBy(0,0)\">Function</th><th onclick=\"sortBy(1,0)\">Module</th>"
		"<th class=\"n\" onclick=\"sortBy(2,1)\">Self</th><th class=\"n\" onclick=\"sortBy(3,1)\">Self%</th>"
		"<th class=\"n\" onclick=\"sortBy(4,1)\">Total</th><th class=\"n\" onclick=\"sortBy(5,1)\">Total%</th>"
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
		sb_addf(sb, "<td class=\"n\" data-v=\"%llu\">%s</td><td class=\"n\" data-v=\"%llu\">%.2f%%</td></tr>\n",
			(unsigned long long)r->total, sb_str(&w), (unsigned long long)r->total, 100.0 * r->total / gt);
	}
	sb_adds(sb, "</tbody></table>\n");
	if (t.rows.n > HTML_MAX_FN_ROWS)
		sb_addf(sb, "<p class=\"muted\">%zu more functions not shown.</p>\n", t.rows.n - HTML_MAX_FN_ROWS);
	sb_release(&w);
	prof_fn_table_free(&t);
}

int prof_render_html_ex(FILE *f, const struct prof_profile *p, const struct prof_view *v,
			const struct prof_timeline *tl)
{
	struct strbuf sb = STRBUF_INIT, data = STRBUF_INIT;
	const char *title = v->title ? v->title : "prof report";

	sb_adds(&sb, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
		"<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
		"script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\">\n<title>");
	xml_escape(&sb, title);
	sb_adds(&sb, "</title>\n<style>\n");
	sb_adds(&sb, html_style);
	sb_adds(&sb, "</style></head><body>\n<h1>");
	xml_escape(&sb, title);
	sb_adds(&sb, "</h1>\n");
	summary(&sb, p, v);
	timeline(&sb, tl);
	sb_adds(&sb, "<h2>Flame graph</h2>\n<div class=\"ctl\">Search (regex): <input id=\"q\" "
		"placeholder=\"e.g. ^spin|malloc\"> <button onclick=\"search(document.getElementById('q').value)\">"
		"Search</button> <button onclick=\"search('')\">Clear</button> "
		"<button onclick=\"zoomId=0;render()\">Reset zoom</button><span id=\"matched\"></span></div>\n"
		"<div id=\"flame\"></div><div id=\"details\"></div>\n");
	fn_table(&sb, p, v);
	sb_adds(&sb, "<h2>Callers / callees of <span id=\"sw-name\" class=\"muted\">(click a function)</span></h2>\n"
		"<div class=\"sw\"><div><b>Callers</b><table><tbody id=\"callers\"></tbody></table></div>"
		"<div><b>Callees</b><table><tbody id=\"callees\"></tbody></table></div></div>\n");
	data_json(&data, p, v);
	sb_adds(&sb, "<script type=\"application/json\" id=\"prof-data\">");
	json_script_safe(&sb, sb_str(&data));
	sb_adds(&sb, "</script>\n<script>\n");
	sb_adds(&sb, html_script);
	sb_adds(&sb, "</script>\n</body></html>\n");
	int rc = render_flush(f, &sb);

	sb_release(&sb);
	sb_release(&data);
	return rc;
}

int prof_render_html(FILE *f, const struct prof_profile *p, const struct prof_view *v)
{
	struct prof_timeline tl;
	int ret;

	prof_timeline_from_profile(p, &tl);
	ret = prof_render_html_ex(f, p, v, &tl);
	prof_timeline_free(&tl);
	return ret;
}
