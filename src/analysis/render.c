/*
 * render.c - prints the results of `prof diff` (text table, JSON schema
 * "prof-diff/1") and `prof crosscheck` (a markdown table to paste into a
 * pull request, JSON schema "prof-crosscheck/1").  Changes are printed in
 * percent; non-finite numbers become null in JSON and "-" in text.
 */
#include "prof/analysis.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

static void json_key_str(struct strbuf *sb, const char *key, const char *val)
{
	sb_addf(sb, "\"%s\":", key);
	json_escape(sb, val);
}

static void json_key_num(struct strbuf *sb, const char *key, double v)
{
	sb_addf(sb, "\"%s\":", key);
	json_number(sb, v);
}

static void json_ci(struct strbuf *sb, const char *key, double lo, double hi)
{
	sb_addf(sb, "\"%s\":[", key);
	json_number(sb, lo * 100);
	sb_addch(sb, ',');
	json_number(sb, hi * 100);
	sb_addch(sb, ']');
}

static int flush_sb(FILE *f, struct strbuf *sb)
{
	fputs(sb_str(sb), f);
	sb_release(sb);
	return ferror(f) ? -1 : 0;
}

/* "helper [util/b.c]": the name, and the file when it tells two apart. */
static const char *fn_label(const struct an_fnset *fs, uint32_t fn, char *buf, size_t size)
{
	const char *file = an_fn_file(fs, fn);

	snprintf(buf, size, *file ? "%s [%s]" : "%s%s", an_fn_name(fs, fn), file);
	return buf;
}

static void join_text(FILE *f, const struct an_fnset *fs, const struct an_report_info *info,
		      const char *prefix)
{
	char label[512];

	for (size_t k = 0; k < ARRAY_SIZE(info->joins); k++) {
		const struct an_join *j = info->joins[k];
		if (!j)
			continue;
		fprintf(f, "%sjoin: %zu of %zu %s (%.0f%%)", prefix, j->matched, j->total, j->what,
			100 * an_join_rate(j));
		if (an_join_rate(j) < AN_JOIN_WARN) {
			fputs(" -- WARNING, unmatched:", f);
			for (size_t i = 0; i < j->unmatched.n && i < 8; i++)
				fprintf(f, "%s %s", i ? "," : "",
					fn_label(fs, j->unmatched.v[i], label, sizeof(label)));
		}
		fputc('\n', f);
	}
}

static void join_json(struct strbuf *sb, const struct an_fnset *fs, const struct an_report_info *info)
{
	char label[512];
	bool first = true;

	sb_adds(sb, "\"join\":[");
	for (size_t k = 0; k < ARRAY_SIZE(info->joins); k++) {
		const struct an_join *j = info->joins[k];
		if (!j)
			continue;
		sb_adds(sb, first ? "{" : ",{");
		first = false;
		json_key_str(sb, "what", j->what);
		sb_addf(sb, ",\"matched\":%zu,\"total\":%zu,", j->matched, j->total);
		json_key_num(sb, "matched_pct", 100 * an_join_rate(j));
		sb_adds(sb, ",\"unmatched\":[");
		for (size_t i = 0; i < j->unmatched.n; i++) {
			sb_adds(sb, i ? "," : "");
			json_escape(sb, fn_label(fs, j->unmatched.v[i], label, sizeof(label)));
		}
		sb_adds(sb, "]}");
	}
	sb_adds(sb, "],");
}

static const char *noise_note(const struct an_report_info *info, const struct an_opts *o,
			      char *buf, size_t size)
{
	if (info->na < 2 || info->nb < 2)
		snprintf(buf, size, "run-to-run noise unknown (1 run on a side): intervals assume "
			 "a %.0f%% run-to-run CV; record 5+ runs per side", o->assumed_cv * 100);
	else
		snprintf(buf, size, "run-to-run noise estimated from %zu+%zu runs%s",
			 info->na, info->nb, info->na < 3 || info->nb < 3 ?
			 " (floored at the Poisson sampling noise)" : "");
	return buf;
}

static void fmt_pct(char *buf, size_t size, double v)
{
	if (isfinite(v))
		snprintf(buf, size, "%+.1f%%", v * 100);
	else
		snprintf(buf, size, "-");
}

static void fmt_ci(char *buf, size_t size, double lo, double hi)
{
	char a[32], b[32];
	fmt_pct(a, sizeof(a), lo);
	fmt_pct(b, sizeof(b), hi);
	snprintf(buf, size, "[%s, %s]", a, b);
}

/* Cost in display units: ms for seconds, raw otherwise. */
static double disp(const struct an_report_info *info, double v)
{
	return !strcmp(info->unit, "s") ? v * 1e3 : v;
}

static const char *disp_unit(const struct an_report_info *info, const struct an_opts *o)
{
	if (o->normalize != AN_NORM_NONE)
		return "share";
	return !strcmp(info->unit, "s") ? "ms" : info->unit;
}

int an_diff_text(FILE *f, const struct an_fnset *fs, const an_results *r,
		 const struct an_opts *o, const struct an_report_info *info)
{
	char note[200], ch[32], ci[80], rn[48], label[512];
	size_t hidden = 0;

	fprintf(f, "# prof diff: %zu base run%s, %zu head run%s, metric %s, %s cost per run, "
		"alpha %g, min effect %g%%\n", info->na, info->na == 1 ? "" : "s", info->nb,
		info->nb == 1 ? "" : "s", info->metric, o->inclusive ? "inclusive" : "self",
		o->alpha, o->min_effect * 100);
	fprintf(f, "# %s\n", noise_note(info, o, note, sizeof(note)));
	join_text(f, fs, info, "# ");
	fprintf(f, "%-13s %8s  %-18s %7s %7s %11s %11s  %s\n", "Verdict", "Change",
		"95% CI", "p", "q", "Base", "Head", "Function (module)");
	for (size_t i = 0; i < r->n; i++) {
		const struct an_result *x = &r->v[i];
		if (!x->tested || (x->verdict == AN_NO_CHANGE && !info->all)) {
			hidden++;
			continue;
		}
		fmt_pct(ch, sizeof(ch), x->change);
		fmt_ci(ci, sizeof(ci), x->lo, x->hi);
		rn[0] = '\0';
		if (x->verdict == AN_INCONCLUSIVE && x->runs_needed)
			snprintf(rn, sizeof(rn), "  ~%llu runs/side",
				 (unsigned long long)x->runs_needed);
		fprintf(f, "%-13s %8s  %-18s %7.3g %7.3g %11.4g %11.4g  %s (%s)%s\n",
			an_verdict_name(x->verdict), ch, ci, x->p, x->q, disp(info, x->base),
			disp(info, x->head), fn_label(fs, x->fn, label, sizeof(label)),
			an_fn_module(fs, x->fn), rn);
	}
	fprintf(f, "# costs in %s per run; %zu rows hidden (no-change, or under %g samples per "
		"run: --all shows them)\n", disp_unit(info, o), hidden, o->min_samples);
	return ferror(f) ? -1 : 0;
}

static void json_header(struct strbuf *sb, const char *schema, const struct an_fnset *fs,
			const struct an_opts *o, const struct an_report_info *info)
{
	char note[200];

	sb_addf(sb, "{\"schema\":\"%s\",", schema);
	json_key_str(sb, "metric", info->metric);
	sb_addf(sb, ",\"cost\":\"%s\",", o->inclusive ? "inclusive" : "self");
	json_key_str(sb, "unit", o->normalize != AN_NORM_NONE ? "share" : info->unit);
	sb_addf(sb, ",\"base_runs\":%zu,\"head_runs\":%zu,", info->na, info->nb);
	json_key_num(sb, "alpha", o->alpha);
	sb_addch(sb, ',');
	json_key_num(sb, "min_effect_pct", o->min_effect * 100);
	sb_addch(sb, ',');
	json_key_str(sb, "noise", noise_note(info, o, note, sizeof(note)));
	sb_addch(sb, ',');
	join_json(sb, fs, info);
}

/* "function", "module" and, when it tells two functions apart, "file". */
static void json_fn(struct strbuf *sb, const struct an_fnset *fs, uint32_t fn)
{
	json_key_str(sb, "function", an_fn_name(fs, fn));
	sb_addch(sb, ',');
	json_key_str(sb, "module", an_fn_module(fs, fn));
	if (*an_fn_file(fs, fn)) {
		sb_addch(sb, ',');
		json_key_str(sb, "file", an_fn_file(fs, fn));
	}
}

static void json_stats(struct strbuf *sb, const struct an_result *x)
{
	json_key_num(sb, "change_pct", x->change * 100);
	sb_addch(sb, ',');
	json_ci(sb, "ci_pct", x->lo, x->hi);
	sb_addch(sb, ',');
	json_key_num(sb, "p_value", x->p);
	sb_addch(sb, ',');
	json_key_num(sb, "q_value", x->q);
	sb_addch(sb, ',');
	json_key_str(sb, "p_method", x->p_method ? x->p_method : "none");
}

int an_diff_json(FILE *f, const struct an_fnset *fs, const an_results *r,
		 const struct an_opts *o, const struct an_report_info *info)
{
	struct strbuf sb = STRBUF_INIT;
	size_t regressions = 0;

	for (size_t i = 0; i < r->n; i++)
		regressions += r->v[i].verdict == AN_REGRESSION;
	json_header(&sb, "prof-diff/1", fs, o, info);
	sb_addf(&sb, "\"regressions\":%zu,\"functions\":[", regressions);
	for (size_t i = 0; i < r->n; i++) {
		const struct an_result *x = &r->v[i];
		sb_adds(&sb, i ? ",\n{" : "\n{");
		json_fn(&sb, fs, x->fn);
		sb_addch(&sb, ',');
		json_key_num(&sb, "base", x->base);
		sb_addch(&sb, ',');
		json_key_num(&sb, "head", x->head);
		sb_addch(&sb, ',');
		json_stats(&sb, x);
		sb_addch(&sb, ',');
		json_key_str(&sb, "verdict", an_verdict_name(x->verdict));
		sb_addf(&sb, ",\"runs_needed\":%llu,\"tested\":%s,",
			(unsigned long long)x->runs_needed, x->tested ? "true" : "false");
		json_key_num(&sb, "base_samples", x->base_n);
		sb_addch(&sb, ',');
		json_key_num(&sb, "head_samples", x->head_n);
		sb_addch(&sb, '}');
	}
	sb_adds(&sb, "\n]}\n");
	return flush_sb(f, &sb);
}

static void md_escape(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '|' || *s == '\\' || *s == '`')
			fputc('\\', f);
		fputc(*s == '\n' ? ' ' : *s, f);
	}
}

int an_crosscheck_text(FILE *f, const struct an_fnset *fs, const an_xrows *x,
		       const struct an_opts *o, const struct an_report_info *info)
{
	char note[200], ch[32], ci[80], irch[32], label[512];
	size_t hidden = 0;

	fprintf(f, "**prof crosscheck**: callgrind Ir vs sampled %s time (inclusive), %zu base / "
		"%zu head runs, alpha %g, min effect %g%%; %s.\n\n", info->metric, info->na,
		info->nb, o->alpha, o->min_effect * 100, noise_note(info, o, note, sizeof(note)));
	join_text(f, fs, info, "");
	fputc('\n', f);
	fprintf(f, "| Function | Ir base | Ir head | Ir change | Time base (ms) | Time head (ms) "
		"| Time change | 95%% CI | q | Verdict | Notes |\n");
	fprintf(f, "|---|---:|---:|---:|---:|---:|---:|---|---:|---|---|\n");
	for (size_t i = 0; i < x->n; i++) {
		const struct an_xrow *r = &x->v[i];
		if (!r->time.tested || (r->verdict == AN_NO_CHANGE && !info->all)) {
			hidden++;
			continue;
		}
		fputs("| `", f);
		md_escape(f, fn_label(fs, r->fn, label, sizeof(label)));
		fputs("` ", f);
		md_escape(f, an_fn_module(fs, r->fn));
		fmt_pct(ch, sizeof(ch), r->time.change);
		fmt_ci(ci, sizeof(ci), r->time.lo, r->time.hi);
		if (r->has_ir) {
			fmt_pct(irch, sizeof(irch), r->ir_change);
			fprintf(f, " | %.0f | %.0f | %s", r->ir_base, r->ir_head, irch);
		} else {
			fputs(" | - | - | -", f);
		}
		fprintf(f, " | %.4g | %.4g | %s | %s | %.3g | **%s** | ", disp(info, r->time.base),
			disp(info, r->time.head), ch, ci, r->time.q, an_verdict_name(r->verdict));
		if (r->moved[0])
			md_escape(f, r->moved);
		if (r->verdict == AN_INCONCLUSIVE && r->time.runs_needed)
			fprintf(f, "~%llu runs/side needed", (unsigned long long)r->time.runs_needed);
		fputs(" |\n", f);
	}
	fprintf(f, "\n%zu rows hidden (no-change, or under %g samples per run: --all shows them).\n",
		hidden, o->min_samples);
	return ferror(f) ? -1 : 0;
}

static void json_xrow(struct strbuf *sb, const struct an_fnset *fs, const struct an_xrow *r)
{
	json_fn(sb, fs, r->fn);
	sb_adds(sb, ",\"ir\":");
	if (r->has_ir) {
		sb_adds(sb, "{");
		json_key_num(sb, "base", r->ir_base);
		sb_addch(sb, ',');
		json_key_num(sb, "head", r->ir_head);
		sb_addch(sb, ',');
		json_key_num(sb, "change_pct", r->ir_change * 100);
		sb_adds(sb, "}");
	} else {
		sb_adds(sb, "null");
	}
	sb_adds(sb, ",\"time\":{");
	json_key_num(sb, "base_s", r->time.base);
	sb_addch(sb, ',');
	json_key_num(sb, "head_s", r->time.head);
	sb_addch(sb, ',');
	json_stats(sb, &r->time);
	sb_adds(sb, "},");
	json_key_str(sb, "verdict", an_verdict_name(r->verdict));
	sb_addf(sb, ",\"runs_needed\":%llu,\"tested\":%s,",
		(unsigned long long)r->time.runs_needed, r->time.tested ? "true" : "false");
	json_key_str(sb, "moved", r->moved);
}

static void json_xrows(struct strbuf *sb, const struct an_fnset *fs, const an_xrows *x)
{
	sb_adds(sb, "\"functions\":[");
	for (size_t i = 0; i < x->n; i++) {
		sb_adds(sb, i ? ",\n{" : "\n{");
		json_xrow(sb, fs, &x->v[i]);
		sb_addch(sb, '}');
	}
	sb_adds(sb, "\n]");
}

int an_crosscheck_json(FILE *f, const struct an_fnset *fs, const an_xrows *x,
		       const struct an_opts *o, const struct an_report_info *info)
{
	struct strbuf sb = STRBUF_INIT;

	json_header(&sb, "prof-crosscheck/1", fs, o, info);
	json_xrows(&sb, fs, x);
	if (info->parts) {	/* the same, benchmark by benchmark */
		sb_adds(&sb, ",\"benchmarks\":[");
		for (size_t i = 0; i < info->parts->n; i++) {
			sb_adds(&sb, i ? ",\n{" : "\n{");
			json_key_str(&sb, "benchmark", info->parts->v[i].benchmark);
			sb_addch(&sb, ',');
			json_xrows(&sb, fs, &info->parts->v[i].rows);
			sb_addch(&sb, '}');
		}
		sb_adds(&sb, "]");
	}
	sb_adds(&sb, "}\n");
	return flush_sb(f, &sb);
}
