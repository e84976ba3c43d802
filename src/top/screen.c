/*
 * screen.c - the state of the `prof top` screen, the keys that change it,
 * and its rendering into text lines (see include/prof/top.h).  Nothing
 * here touches a terminal: tty.c paints what this produces, and --stdio
 * prints it, so both are tested with synthetic tables.
 *
 * Design notes / invariants:
 *  - A terminal frame is exactly `height` lines of at most `width`
 *    columns.  Lines are built freely, then cut to the width by
 *    put_clipped(), which counts a UTF-8 sequence as one column, never
 *    splits one, and replaces control characters and broken UTF-8 with
 *    '?' (function names come from the profiled binaries: an escape
 *    sequence in a symbol must not reach the terminal).
 *  - When the terminal is too short, lines go in this order: the process
 *    line, the key help, the column header; the summary line and the
 *    filter prompt stay while there is one line.
 *  - The selection is a row index clamped to the table; scroll keeps it
 *    visible.  Both survive refreshes, so a row under the cursor can move
 *    when the weights change, as in top(1).
 */
#include "prof/top.h"
#include <stdio.h>
#include <string.h>

void prof_top_ui_init(struct prof_top_ui *ui)
{
	memset(ui, 0, sizeof(*ui));
	ui->sort = PROF_TOP_BY_SELF;
}

void prof_top_ui_free(struct prof_top_ui *ui)
{
	if (ui->filter_text[0])
		regfree(&ui->filter);
	ui->filter_text[0] = 0;
}

void prof_top_table_for(const struct prof_top_view *v, struct prof_top_ui *ui,
			struct prof_top_table *t)
{
	if (ui->depth) {
		prof_top_callers(v, ui->callers[ui->depth - 1].func, ui->callers[ui->depth - 1].module, t);
	} else {
		prof_top_functions(v, ui->sort, ui->filter_text[0] ? &ui->filter : NULL, t);
	}
	if (ui->selected >= t->rows.n)
		ui->selected = t->rows.n ? t->rows.n - 1 : 0;
}

/* --- keys ----------------------------------------------------------------------- */

static void set_message(struct prof_top_ui *ui, const char *msg)
{
	snprintf(ui->message, sizeof(ui->message), "%s", msg);
}

/* Applies the prompt's text as the filter ("" clears it). */
static void apply_filter(struct prof_top_ui *ui)
{
	regex_t re;
	int err;

	ui->editing = false;
	if (!ui->input[0]) {
		prof_top_ui_free(ui);
		return;
	}
	if ((err = regcomp(&re, ui->input, REG_EXTENDED | REG_NOSUB)) != 0) {
		char why[80];
		regerror(err, &re, why, sizeof(why));
		snprintf(ui->message, sizeof(ui->message), "bad regex '%.40s': %.60s", ui->input, why);
		return;
	}
	prof_top_ui_free(ui);
	ui->filter = re;
	snprintf(ui->filter_text, sizeof(ui->filter_text), "%s", ui->input);
	ui->selected = ui->scroll = 0;
}

static enum prof_top_action prompt_key(struct prof_top_ui *ui, int key)
{
	size_t n = strlen(ui->input);

	if (key == PROF_TOP_KEY_ENTER || key == '\n') {
		apply_filter(ui);
	} else if (key == PROF_TOP_KEY_ESC) {
		ui->editing = false;
	} else if (key == PROF_TOP_KEY_BACKSPACE || key == '\b') {
		if (n)
			ui->input[n - 1] = 0;
	} else if (key >= 0x20 && key < 0x7f && n + 1 < sizeof(ui->input)) {
		ui->input[n] = (char)key;
		ui->input[n + 1] = 0;
	}
	return PROF_TOP_REDRAW;
}

static void move_selection(struct prof_top_ui *ui, long delta, size_t nrows)
{
	long s = (long)ui->selected + delta;

	if (s >= (long)nrows)
		s = (long)nrows - 1;
	ui->selected = s < 0 ? 0 : (size_t)s;
}

static void enter_callers(struct prof_top_ui *ui, const struct prof_top_table *t)
{
	if (ui->selected >= t->rows.n || ui->depth == ARRAY_SIZE(ui->callers))
		return;
	const struct prof_top_row *r = &t->rows.v[ui->selected];
	if (r->module == PROF_NONE && r->func == 0)
		return;	/* "[no caller]" has no callers */
	ui->callers[ui->depth].func = r->func;
	ui->callers[ui->depth].module = r->module;
	ui->depth++;
	ui->selected = ui->scroll = 0;
}

enum prof_top_action prof_top_key(struct prof_top_ui *ui, int key, const struct prof_top_table *t,
				  size_t visible_rows)
{
	size_t page = visible_rows ? visible_rows : 1;

	ui->message[0] = 0;
	if (ui->editing)
		return prompt_key(ui, key);
	switch (key) {
	case 'q': case 'Q': return PROF_TOP_QUIT;
	case 'p': ui->paused = !ui->paused; break;
	case 's': ui->sort = PROF_TOP_BY_SELF; break;
	case 't': ui->sort = PROF_TOP_BY_TOTAL; break;
	case '/':
		ui->editing = true;
		snprintf(ui->input, sizeof(ui->input), "%s", ui->filter_text);
		break;
	case PROF_TOP_KEY_UP: case 'k': move_selection(ui, -1, t->rows.n); break;
	case PROF_TOP_KEY_DOWN: case 'j': move_selection(ui, 1, t->rows.n); break;
	case PROF_TOP_KEY_PGUP: move_selection(ui, -(long)page, t->rows.n); break;
	case PROF_TOP_KEY_PGDN: case ' ': move_selection(ui, (long)page, t->rows.n); break;
	case PROF_TOP_KEY_ENTER: case '\n': enter_callers(ui, t); break;
	case PROF_TOP_KEY_ESC: case PROF_TOP_KEY_LEFT: case PROF_TOP_KEY_BACKSPACE: case 'h':
		if (ui->depth) {
			ui->depth--;
			ui->selected = ui->scroll = 0;
		} else if (ui->filter_text[0] && key == PROF_TOP_KEY_ESC) {
			prof_top_ui_free(ui);	/* Esc in the main view drops the filter */
		}
		break;
	case '?':
		set_message(ui, "q quit  p pause  s/t sort  / filter  Enter callers  Esc back");
		break;
	default: return PROF_TOP_NONE;
	}
	return PROF_TOP_REDRAW;
}

/* --- rendering ------------------------------------------------------------------------ */

/* Bytes of the UTF-8 sequence starting at s (1..4), 0 when it is broken. */
static size_t utf8_len(const unsigned char *s)
{
	size_t n = *s < 0x80 ? 1 : (*s & 0xe0) == 0xc0 ? 2 : (*s & 0xf0) == 0xe0 ? 3 : (*s & 0xf8) == 0xf0 ? 4 : 0;

	if (n < 2 || *s < 0xc2)
		return n == 1 ? 1 : 0;
	for (size_t i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

/*
 * Appends s cut to at most cols columns (UTF-8 sequences whole, control
 * bytes and broken sequences as '?'); pads with spaces to cols when pad.
 * Returns the columns written.
 */
static int put_clipped(struct strbuf *out, const char *s, int cols, bool pad)
{
	const unsigned char *p = (const unsigned char *)s;
	int used = 0;

	while (*p && used < cols) {
		size_t n = utf8_len(p);
		if (!n || *p < 0x20 || *p == 0x7f) {
			sb_addch(out, '?');
			p += n ? n : 1;
		} else {
			sb_add(out, p, n);
			p += n;
		}
		used++;
	}
	while (pad && used < cols) {
		sb_addch(out, ' ');
		used++;
	}
	return used;
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static const char *basename_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

static const char *module_name(const struct prof_profile *p, uint32_t module)
{
	return module == PROF_NONE || module >= p->modules.n ? "?" : basename_of(prof_str(p, p->modules.v[module].path));
}

static const char *row_name(const struct prof_profile *p, const struct prof_top_row *r)
{
	if (r->module == PROF_NONE && r->func == 0)
		return "[no caller]";
	return r->func ? prof_str(p, r->func) : "[unknown]";
}

struct lines {				/* the frame being built */
	VEC(char *) v;
	int selected;			/* index in v, -1 */
};

static void add_line(struct lines *l, struct strbuf *sb)
{
	VEC_PUSH(&l->v, xstrdup(sb_str(sb)));
	sb_reset(sb);
}

static void summary_line(const struct prof_top_table *t, const struct prof_top_status *st,
			 const struct prof_top_ui *ui, struct strbuf *sb)
{
	if (st->offcpu)
		sb_addf(sb, "prof top: %s  off-CPU %.1fs in %.1fs  lost %llu", st->target ? st->target : "",
			(double)t->weight / 1e9, (double)st->span_ns / 1e9, (unsigned long long)st->lost);
	else
		sb_addf(sb, "prof top: %s  samples %llu in %.1fs  lost %llu", st->target ? st->target : "",
			(unsigned long long)t->samples, (double)st->span_ns / 1e9, (unsigned long long)st->lost);
	if (st->iowait_pct >= 0)
		sb_addf(sb, "  iowait %.1f%%", st->iowait_pct);
	sb_addf(sb, "  sort %s", ui->sort == PROF_TOP_BY_SELF ? "self" : "total");
	if (ui->filter_text[0])
		sb_addf(sb, "  filter /%s/", ui->filter_text);
	if (ui->paused)
		sb_adds(sb, "  [PAUSED]");
}

/* "cpu: make(12) 97.0%  cc1(40) 12.5% ..." from samples x period over the
 * span; off-CPU, thread-seconds off the CPU per second (over 100% for
 * several threads). */
static void procs_line(const struct prof_profile *p, const struct prof_top_table *t,
		       const struct prof_top_status *st, struct strbuf *sb, size_t max)
{
	sb_adds(sb, st->offcpu ? "off-cpu:" : "cpu:");
	if (!t->procs.n)
		sb_adds(sb, " (no samples)");
	for (size_t i = 0; i < t->procs.n && i < max; i++) {
		const struct prof_top_proc *pr = &t->procs.v[i];
		double cpu = st->span_ns && st->period_ns ? pct(pr->weight * st->period_ns, st->span_ns)
							  : pct(pr->weight, t->weight);
		sb_addf(sb, "  %s(%u) %.1f%%", pr->comm ? prof_str(p, pr->comm) : "?", pr->pid, cpu);
	}
}

static void column_header(const struct prof_top_table *t, struct strbuf *sb)
{
	if (t->callers)
		sb_adds(sb, " share  total%  caller  module");
	else
		sb_adds(sb, " self%  total%  function  module");
}

static void row_line(const struct prof_profile *p, const struct prof_top_table *t,
		     const struct prof_top_row *r, int width, struct strbuf *sb)
{
	int modw = width >= 70 ? 22 : width >= 45 ? 14 : 0;
	int funcw = width - 16 - (modw ? modw + 1 : 0);
	uint64_t base = t->callers ? t->of.total : t->weight;

	sb_addf(sb, "%6.2f  %6.2f  ", pct(t->callers ? r->total : r->self, base), pct(r->total, t->weight));
	if (funcw < 4 || width <= 0) {	/* stdio (width <= 0) or tiny: no columns; cut later */
		sb_addf(sb, "%s  %s", row_name(p, r), module_name(p, r->module));
		return;
	}
	put_clipped(sb, row_name(p, r), funcw, modw > 0);
	if (modw) {
		sb_addch(sb, ' ');
		put_clipped(sb, module_name(p, r->module), modw, false);
	}
}

static void footer_line(const struct prof_top_ui *ui, const struct prof_top_table *t, struct strbuf *sb)
{
	if (ui->editing)
		sb_addf(sb, "filter (regex, Enter applies, Esc cancels): /%s", ui->input);
	else if (ui->message[0])
		sb_adds(sb, ui->message);
	else if (t->callers)
		sb_adds(sb, "Enter: callers of the caller  Esc: back  q: quit");
	else
		sb_adds(sb, "q quit  p pause  s/t sort  / filter  Enter callers");
}

/* Which lines a terminal of this height shows besides the rows. */
struct layout {
	bool summary, procs, title, header, footer;
	size_t rows;
};

static struct layout layout_for(const struct prof_top_ui *ui, bool callers, int height)
{
	struct layout y = { 0 };

	y.footer = height >= 3 || ui->editing;	/* the prompt outlives everything else */
	y.summary = height >= 2 || !ui->editing;
	y.header = height >= 4;
	y.procs = height >= 6;
	y.title = callers && height >= 7;
	int fixed = y.summary + y.procs + y.title + y.header + y.footer;
	y.rows = height > fixed ? (size_t)(height - fixed) : 0;
	return y;
}

size_t prof_top_visible_rows(const struct prof_top_ui *ui, const struct prof_top_table *t, int height)
{
	return layout_for(ui, t->callers, height).rows;
}

static void callers_title(const struct prof_profile *p, const struct prof_top_table *t, struct strbuf *sb)
{
	sb_addf(sb, "callers of %s (%s): %.2f%% total, %.2f%% self", row_name(p, &t->of),
		module_name(p, t->of.module), pct(t->of.total, t->weight), pct(t->of.self, t->weight));
}

/* Keeps the selection on screen: scroll so that selected is within rows. */
static void scroll_to_selection(struct prof_top_ui *ui, size_t rows)
{
	if (!rows)
		return;
	if (ui->selected < ui->scroll)
		ui->scroll = ui->selected;
	if (ui->selected >= ui->scroll + rows)
		ui->scroll = ui->selected - rows + 1;
}

/* Builds the frame's lines for a terminal of width x height. */
static void build_terminal(const struct prof_profile *p, const struct prof_top_table *t,
			   const struct prof_top_status *st, struct prof_top_ui *ui, int width,
			   int height, struct lines *l)
{
	struct strbuf sb = STRBUF_INIT;
	struct layout y = layout_for(ui, t->callers, height);
	size_t rows = y.rows;

	if (y.summary) {
		summary_line(t, st, ui, &sb);
		add_line(l, &sb);
	}
	if (y.procs) {
		procs_line(p, t, st, &sb, 8);
		add_line(l, &sb);
	}
	if (y.title) {
		callers_title(p, t, &sb);
		add_line(l, &sb);
	}
	if (y.header) {
		column_header(t, &sb);
		add_line(l, &sb);
	}
	scroll_to_selection(ui, rows);
	for (size_t i = 0; i < rows; i++) {
		size_t r = ui->scroll + i;
		if (r < t->rows.n) {
			row_line(p, t, &t->rows.v[r], width, &sb);
			if (r == ui->selected)
				l->selected = (int)l->v.n;
		} else if (i == 0 && !t->rows.n) {
			sb_adds(&sb, ui->filter_text[0] ? "  (no function matches the filter)" : "  (no samples yet)");
		}
		add_line(l, &sb);
	}
	if (y.footer) {
		footer_line(ui, t, &sb);
		add_line(l, &sb);
	}
	sb_release(&sb);
}

static void build_stdio(const struct prof_profile *p, const struct prof_top_table *t,
			const struct prof_top_status *st, struct prof_top_ui *ui, size_t max_rows,
			struct lines *l)
{
	struct strbuf sb = STRBUF_INIT;

	summary_line(t, st, ui, &sb);
	add_line(l, &sb);
	procs_line(p, t, st, &sb, 8);
	add_line(l, &sb);
	column_header(t, &sb);
	add_line(l, &sb);
	for (size_t i = 0; i < t->rows.n && i < max_rows; i++) {
		row_line(p, t, &t->rows.v[i], 0, &sb);
		add_line(l, &sb);
	}
	sb_release(&sb);
}

int prof_top_render(const struct prof_profile *p, const struct prof_top_table *t,
		    const struct prof_top_status *st, struct prof_top_ui *ui, int width, int height,
		    size_t max_rows, struct strbuf *out)
{
	struct lines l = { .selected = -1 };

	if (height > 0)
		build_terminal(p, t, st, ui, width, height, &l);
	else
		build_stdio(p, t, st, ui, max_rows, &l);
	size_t n = height > 0 ? (size_t)height : l.v.n;

	for (size_t i = 0; i < n; i++) {	/* exactly height lines on a terminal */
		if (i)
			sb_addch(out, '\n');
		if (i < l.v.n)
			put_clipped(out, l.v.v[i], height > 0 ? width : 1 << 20, false);
	}
	for (size_t i = 0; i < l.v.n; i++)
		free(l.v.v[i]);
	if (l.selected >= (int)n)
		l.selected = -1;
	VEC_FREE(&l.v);
	return l.selected;
}
