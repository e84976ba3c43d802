/*
 * print.c - `prof annotate` text output: a header with the function's
 * totals, then per source file the function's lines with self/total
 * costs and the source text (when the policy allows reading it), then
 * the disassembly with samples per instruction, a line header wherever
 * the line table's file:line changes (inlined code shows under its own
 * lines, as the binary's line table says).
 */
#include "prof/annotate.h"
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define CONTEXT_LINES 2

struct source_text {
	char *buf;
	VEC(const char *) lines;	/* lines.v[i] = line i + 1, NUL-terminated */
	int err;			/* errno when unreadable */
};

static void source_load(struct source_text *s, const struct prof_source_policy *sp,
			const char *path)
{
	size_t len;

	memset(s, 0, sizeof(*s));
	s->buf = sp ? prof_source_read(sp, path, &len) : NULL;
	if (!s->buf) {
		s->err = sp ? errno : EPERM;
		return;
	}
	for (char *c = s->buf; *c;) {
		VEC_PUSH(&s->lines, c);
		char *nl = strchr(c, '\n');
		if (!nl)
			break;
		*nl = '\0';
		c = nl + 1;
	}
}

static void source_free(struct source_text *s)
{
	free(s->buf);
	VEC_FREE(&s->lines);
}

static const char *source_line(const struct source_text *s, uint32_t line)
{
	return line && line <= s->lines.n ? s->lines.v[line - 1] : NULL;
}

static const char *unit_of(const struct prof_view *v)
{
	return v->metric == PROF_VIEW_CPU ? "samples" : "ns";
}

static void print_header(FILE *f, const struct prof_profile *p, const struct prof_view *v,
			 const struct prof_annotation *a)
{
	const struct prof_module *m = a->module < p->modules.n ? &p->modules.v[a->module] : NULL;
	double pct = a->grand_total ? 100.0 * (double)a->self_fn / (double)a->grand_total : 0;

	fprintf(f, "# prof annotate: %s in %s", prof_str(p, a->func),
		m ? prof_str(p, m->path) : "?");
	if (m && *prof_str(p, m->build_id))
		fprintf(f, " (build-id %s)", prof_str(p, m->build_id));
	fprintf(f, "\n# metric: %s (%s)\n", prof_view_metric_name(v->metric), unit_of(v));
	fprintf(f, "# self: %" PRIu64 " of %" PRIu64 " (%.2f%%); in its code, inlined callees "
		"included: %" PRIu64 "; total: %" PRIu64 "\n",
		a->self_fn, a->grand_total, pct, a->in_code, a->total);
}

/* Lines [lo, hi] of one file: costs from a->lines[from..to), text if readable. */
static void print_file(FILE *f, const struct prof_profile *p, const struct prof_annotation *a,
		       size_t from, size_t to, const struct prof_annotate_opts *o,
		       const struct prof_disassembly *d)
{
	const char *path = prof_str(p, a->lines.v[from].file);
	struct source_text src;
	uint32_t lo = UINT32_MAX, hi = 0;

	source_load(&src, o->no_source ? NULL : o->sources, path);
	for (size_t i = from; i < to; i++)
		if (a->lines.v[i].line) {
			lo = a->lines.v[i].line < lo ? a->lines.v[i].line : lo;
			hi = a->lines.v[i].line > hi ? a->lines.v[i].line : hi;
		}
	for (size_t i = 0; d && i < d->lines.n; i++)	/* the whole function, cold lines too */
		if (d->lines.v[i].line && d->lines.v[i].file && !strcmp(d->lines.v[i].file, path)) {
			lo = d->lines.v[i].line < lo ? d->lines.v[i].line : lo;
			hi = d->lines.v[i].line > hi ? d->lines.v[i].line : hi;
		}
	fprintf(f, "#\n# source: %s", *path ? path : "(unknown file)");
	if (!src.buf && *path && !o->no_source)
		fprintf(f, " (text not shown: %s)", src.err == EPERM ?
			"not allowed; see --source-root" : strerror(src.err));
	fprintf(f, "\n%10s %10s %6s  %s\n", "Self", "Total", "Line", "Source");
	lo = lo > CONTEXT_LINES ? lo - CONTEXT_LINES : 1;
	hi += CONTEXT_LINES;
	size_t k = from;
	for (uint32_t line = src.buf ? lo : 0; k < to || (src.buf && line <= hi); line++) {
		const struct prof_annotate_line *l = k < to && a->lines.v[k].line == line ?
						     &a->lines.v[k++] : NULL;
		const char *text = source_line(&src, line);
		if (!l && !text)
			continue;
		if (!l && !src.buf)
			continue;
		fprintf(f, "%10" PRIu64 " %10" PRIu64 " %6u  %s", l ? l->self : 0, l ? l->total : 0,
			line, text ? text : "");
		if (l && l->inlined_func)
			fprintf(f, "    [inlined %s]", prof_str(p, l->inlined_func));
		fputc('\n', f);
		if (!src.buf && k < to)
			line = a->lines.v[k].line - 1;	/* jump to the next costed line */
	}
	source_free(&src);
}

static uint64_t insn_self(const struct prof_annotation *a, uint64_t pc, size_t *hint)
{
	while (*hint < a->insns.n && a->insns.v[*hint].pc < pc)
		(*hint)++;
	return *hint < a->insns.n && a->insns.v[*hint].pc == pc ? a->insns.v[*hint].self : 0;
}

static void print_disassembly(FILE *f, const struct prof_annotation *a,
			      const struct prof_disassembly *d)
{
	const char *last_file = NULL;
	uint32_t last_line = UINT32_MAX;
	uint64_t shown = 0;
	size_t hint = 0;

	fprintf(f, "#\n# disassembly: %s (%s)\n%10s  %-16s %s\n", d->binary, prof_disasm_backend(),
		"Self", "Address", "Instruction");
	for (size_t i = 0; i < d->lines.n; i++) {
		const struct prof_disasm_line *l = &d->lines.v[i];
		if (l->line != last_line || (l->file && (!last_file || strcmp(l->file, last_file)))) {
			const char *base = l->file ? strrchr(l->file, '/') : NULL;
			fprintf(f, "%10s  %s:%u\n", "", base ? base + 1 : l->file ? l->file : "?",
				l->line);
			last_file = l->file;
			last_line = l->line;
		}
		uint64_t self = insn_self(a, l->insn.addr, &hint);
		shown += self;
		fprintf(f, "%10" PRIu64 "  %-16" PRIx64 " %s\n", self, l->insn.addr, l->insn.text);
	}
	uint64_t sampled = 0;
	for (size_t i = 0; i < a->insns.n; i++)
		sampled += a->insns.v[i].self;
	if (shown != sampled)
		fprintf(f, "# %" PRIu64 " sampled outside the symbol's range\n", sampled - shown);
}

/* Without a usable binary: the sampled addresses and their lines. */
static void print_addresses(FILE *f, const struct prof_profile *p, const struct prof_annotation *a,
			    int why)
{
	fprintf(f, "#\n# instructions: no disassembly (%s)\n%10s  %-16s %s\n",
		why == -ESTALE ? "the binary is not the recorded build" :
		why == -ENOTSUP ? "built without a disassembler" :
		why == -ELIBACC ? "capstone, the disassembler, could not be loaded" : strerror(-why),
		"Self", "Address", "Line");
	for (size_t i = 0; i < a->insns.n; i++) {
		const char *file = prof_str(p, a->insns.v[i].file), *base = strrchr(file, '/');
		fprintf(f, "%10" PRIu64 "  %-16" PRIx64 " %s:%u\n", a->insns.v[i].self,
			a->insns.v[i].pc, base ? base + 1 : file, a->insns.v[i].line);
	}
}

int prof_annotate_print(FILE *f, const struct prof_profile *p, const struct prof_view *v,
			const struct prof_annotation *a, const struct prof_annotate_opts *o)
{
	struct prof_disassembly d;
	int err = prof_annotate_disassemble(p, a, &d);

	/* the verified binary's line table says which source files are its own */
	if (!err && o->sources)
		prof_source_allow_disassembly(o->sources, &d);
	print_header(f, p, v, a);
	for (size_t from = 0; from < a->lines.n;) {
		size_t to = from;
		while (to < a->lines.n && a->lines.v[to].file == a->lines.v[from].file)
			to++;
		print_file(f, p, a, from, to, o, err ? NULL : &d);
		from = to;
	}
	if (o->no_asm)
		;
	else if (err)
		print_addresses(f, p, a, err);
	else
		print_disassembly(f, a, &d);
	prof_disassembly_free(&d);
	if (a->no_pc)
		fprintf(f, "# %" PRIu64 " without an instruction address (recorded by an older prof)\n",
			a->no_pc);
	return ferror(f) ? -EIO : 0;
}
