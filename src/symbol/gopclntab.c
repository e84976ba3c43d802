/*
 * gopclntab.c - a reader of Go's .gopclntab: the function table, the
 * pc-value tables that give file and line for every pc, and the inline
 * trees, which Go's runtime reads for its own tracebacks.  Every Go binary
 * has it, also when DWARF is stripped (`-ldflags=-s -w`), so it names Go
 * functions and their lines where libdw cannot (golang.c decides when).
 *
 * The layout (Go's runtime/symtab.go and debug/gosym are the reference):
 *  - pcHeader: magic, two zero bytes, the pc quantum, the pointer size,
 *    then pointer-sized words: nfunc, nfiles, [textStart: 1.18+], and the
 *    offsets of funcnametab, cutab, filetab, pctab and the function table
 *    (pclntable), all relative to the header.
 *  - the function table: nfunc+1 (entry, funcoff) pairs sorted by entry,
 *    the last entry the end of the text.  1.18+: uint32 offsets from
 *    textStart; 1.16: pointer-sized addresses.  funcoff locates the
 *    function's _func record inside pclntable.
 *  - _func: entry, nameoff (into funcnametab), args, deferreturn, and the
 *    pctab offsets of pcsp, pcfile, pcln; npcdata, cuOffset, [startLine:
 *    1.20+], funcID, flag (1.17+; a pad byte in 1.16), a pad byte and
 *    nfuncdata; then npcdata uint32
 *    pctab offsets (table 2 is the inline tree index) and nfuncdata
 *    funcdata entries (entry 3 is the inline tree): uint32 offsets from
 *    go:func.* in 1.18+, pointer-aligned absolute addresses in 1.16.
 *  - a pc-value table is a run of (value delta, pc delta) varint pairs
 *    from the function's entry, the value delta zig-zag coded, the pc
 *    delta in quanta; a zero value delta after the first pair ends it.
 *    The value before the first pair is -1.
 *  - file numbers from pcfile index the function's CU in cutab, whose
 *    uint32 is an offset of a NUL-terminated name in filetab.
 *  - an inline tree entry names the inlined function and parentPc, an
 *    offset from the function's entry of an instruction whose position is
 *    the call site: the caller's file:line and inline index are those at
 *    parentPc.  1.16-1.19: 20 bytes {parent, funcID, pad, file, line,
 *    nameoff, parentPc}; 1.20+: 16 bytes {funcID, pad[3], nameoff,
 *    parentPc, startLine}.
 *
 * Design notes / invariants:
 *  - The table is untrusted input: every offset, count and string is
 *    checked against the section (or the read callback's answer) before
 *    use, arithmetic is done in 64 bits, and every loop is bounded by the
 *    bytes it consumes or by the caller's frame limit.  A bad entry gives
 *    "unknown" for that pc, never a read outside the table.
 *  - Strings handed out point into the table: they live as long as it.
 *  - Nothing is precomputed beyond the header: the symbolizer caches its
 *    answers per pc, so a lookup decodes one function's tables on demand.
 */
#include "gopclntab-priv.h"
#include "prof/util.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>

#define MAGIC_12 0xfffffffbu
#define MAGIC_116 0xfffffffau
#define MAGIC_118 0xfffffff0u
#define MAGIC_120 0xfffffff1u

#define PCDATA_INLTREE_INDEX 2
#define FUNCDATA_INLTREE 3
#define MAX_INLTREE_INDEX (1u << 20)	/* the runtime's own bound on the array */

struct span {			/* a sub-table: [off, off + size) of the section */
	uint64_t off, size;
};

struct go_pclntab {
	struct go_pcln_image img;
	enum go_pcln_version version;
	uint32_t quantum, ptrsize;
	uint64_t nfunc;
	uint64_t text_start;
	struct span funcnames, cutab, filetab, pctab, pcln;
	uint32_t functab_field;	/* bytes per functab field: 4 (1.18+) or ptrsize */
	uint32_t func_fixed;	/* bytes of _func before its pcdata array */
};

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t rd64(const uint8_t *p)
{
	return rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

/* A uint32 or pointer-sized (little-endian) value at off of the section;
 * false when it does not lie inside. */
static bool word_at(const struct go_pclntab *t, uint64_t off, uint32_t size, uint64_t *v)
{
	if (off > t->img.tab_size || size > t->img.tab_size - off)
		return false;
	*v = size == 8 ? rd64(t->img.tab + off) : rd32(t->img.tab + off);
	return true;
}

/* The same inside a sub-table. */
static bool span_word(const struct go_pclntab *t, const struct span *s, uint64_t off,
		      uint32_t size, uint64_t *v)
{
	return off <= s->size && s->size - off >= size && word_at(t, s->off + off, size, v);
}

static bool span_u32(const struct go_pclntab *t, const struct span *s, uint64_t off, uint32_t *v)
{
	uint64_t w;

	if (!span_word(t, s, off, 4, &w))
		return false;
	*v = (uint32_t)w;
	return true;
}

/* The NUL-terminated string at off of a sub-table; NULL when unterminated. */
static const char *span_str(const struct go_pclntab *t, const struct span *s, uint64_t off)
{
	if (off >= s->size)
		return NULL;
	const char *p = (const char *)t->img.tab + s->off + off;
	return memchr(p, '\0', s->size - off) ? p : NULL;
}

const char *prof_sym_gopclntab_describe(const uint8_t *tab, size_t size, char *buf, size_t len)
{
	uint32_t magic = size >= 4 ? rd32(tab) : 0;
	const char *what = magic == MAGIC_12 ? "Go 1.2-1.15" : magic == MAGIC_116 ? "Go 1.16-1.17" :
			   magic == MAGIC_118 ? "Go 1.18-1.19" : magic == MAGIC_120 ? "Go 1.20 or later" :
			   "an unknown Go version";
	snprintf(buf, len, "%s (magic 0x%08x)", what, magic);
	return buf;
}

static int header_version(const uint8_t *tab, size_t size, enum go_pcln_version *v)
{
	if (size < 8 || tab[4] != 0 || tab[5] != 0 || (tab[6] != 1 && tab[6] != 2 && tab[6] != 4) ||
	    (tab[7] != 4 && tab[7] != 8))
		return -ENOEXEC;
	switch (rd32(tab)) {
	case MAGIC_116: *v = GO_PCLN_116; return 0;
	case MAGIC_118: *v = GO_PCLN_118; return 0;
	case MAGIC_120: *v = GO_PCLN_120; return 0;
	default: return -EPROTONOSUPPORT;	/* Go 1.2-1.15 or a layout yet to come */
	}
}

/* Sub-table i of the header's offsets, from its offset to the next one's
 * (the tables follow each other in this order); the last ends the section. */
static bool header_span(const struct go_pclntab *t, const uint64_t *offs, size_t i, size_t n,
			struct span *s)
{
	uint64_t end = i + 1 < n ? offs[i + 1] : t->img.tab_size;

	if (offs[i] > t->img.tab_size || end > t->img.tab_size || end < offs[i])
		return false;
	s->off = offs[i];
	s->size = end - offs[i];
	return true;
}

static int parse_header(struct go_pclntab *t)
{
	uint32_t ps = t->ptrsize;
	bool has_text = t->version >= GO_PCLN_118;
	uint64_t words[8], offs[5], text;
	size_t nwords = has_text ? 8 : 7;

	for (size_t i = 0; i < nwords; i++)
		if (!word_at(t, 8 + i * ps, ps, &words[i]))
			return -ENOEXEC;
	t->nfunc = words[0];
	text = has_text ? words[2] : 0;
	memcpy(offs, words + (has_text ? 3 : 2), sizeof(offs));
	/* funcnametab, cutab, filetab, pctab, pclntable */
	if (!header_span(t, offs, 0, 5, &t->funcnames) || !header_span(t, offs, 1, 5, &t->cutab) ||
	    !header_span(t, offs, 2, 5, &t->filetab) || !header_span(t, offs, 3, 5, &t->pctab) ||
	    !header_span(t, offs, 4, 5, &t->pcln))
		return -ENOEXEC;
	t->functab_field = has_text ? 4 : ps;
	/* the function table must fit: nfunc + 1 pairs */
	if (t->nfunc == 0 || t->nfunc >= t->img.tab_size ||
	    (t->nfunc + 1) * 2 * t->functab_field > t->pcln.size)
		return -ENOEXEC;
	t->text_start = text ? text : t->img.text_start;
	t->func_fixed = t->version == GO_PCLN_120 ? 44 : t->version == GO_PCLN_118 ? 40 : ps + 36;
	return 0;
}

int prof_sym_gopclntab_open(const struct go_pcln_image *img, struct go_pclntab **out)
{
	struct go_pclntab *t;
	enum go_pcln_version v;
	int ret = header_version(img->tab, img->tab_size, &v);

	*out = NULL;
	if (ret < 0)
		return ret;
	t = xcalloc(1, sizeof(*t));
	t->img = *img;
	t->version = v;
	t->quantum = img->tab[6];
	t->ptrsize = img->tab[7];
	ret = parse_header(t);
	if (ret < 0) {
		free(t);
		return ret;
	}
	*out = t;
	return 0;
}

void prof_sym_gopclntab_free(struct go_pclntab *t)
{
	free(t);
}

enum go_pcln_version prof_sym_gopclntab_version(const struct go_pclntab *t) { return t->version; }
size_t prof_sym_gopclntab_nfunc(const struct go_pclntab *t) { return (size_t)t->nfunc; }
uint64_t prof_sym_gopclntab_text_start(const struct go_pclntab *t) { return t->text_start; }

/* Field k (0: entry, 1: funcoff) of function table row i. */
static bool functab_field(const struct go_pclntab *t, uint64_t i, int k, uint64_t *v)
{
	uint64_t off = (2 * i + (uint64_t)k) * t->functab_field;

	if (off > t->pcln.size || t->pcln.size - off < t->functab_field)
		return false;
	return word_at(t, t->pcln.off + off, t->functab_field, v);
}

static bool entry_of(const struct go_pclntab *t, uint64_t i, uint64_t *pc)
{
	uint64_t v;

	if (!functab_field(t, i, 0, &v))
		return false;
	*pc = t->version >= GO_PCLN_118 ? t->text_start + v : v;	/* 1.16: addresses */
	return true;
}

bool prof_sym_gopclntab_func_at(const struct go_pclntab *t, size_t i, uint64_t *entry, uint64_t *end)
{
	return i < t->nfunc && entry_of(t, i, entry) && entry_of(t, i + 1, end) && *entry < *end;
}

/* One function's _func record: where it lies in pclntable. */
struct func {
	uint64_t off;		/* of the _func record, in pclntable */
	uint64_t entry, end;
	uint32_t nameoff, pcsp, pcfile, pcln, npcdata, cu;
	uint8_t flags;		/* GO_FUNCFLAG_*; 1.16 has a pad byte there: 0 */
	uint8_t nfuncdata;
};

static bool func_u32(const struct go_pclntab *t, const struct func *f, uint64_t at, uint32_t *v)
{
	return span_u32(t, &t->pcln, f->off + at, v);
}

/* Decodes the _func of table row i; false on any bad field. */
static bool func_load(const struct go_pclntab *t, uint64_t i, struct func *f)
{
	uint64_t funcoff;
	uint32_t fields[6];	/* nameoff, args, deferreturn, pcsp, pcfile, pcln, */
	uint32_t tail;		/* funcID, flag, pad, nfuncdata */
	uint32_t base = t->version >= GO_PCLN_118 ? 4 : t->ptrsize;	/* entry's size */

	if (!prof_sym_gopclntab_func_at(t, i, &f->entry, &f->end) || !functab_field(t, i, 1, &funcoff))
		return false;
	f->off = funcoff;
	for (uint32_t k = 0; k < 6; k++)
		if (!func_u32(t, f, base + 4 * k, &fields[k]))
			return false;
	if (!func_u32(t, f, base + 24, &f->npcdata) || !func_u32(t, f, base + 28, &f->cu) ||
	    !func_u32(t, f, t->func_fixed - 4, &tail))
		return false;
	f->nameoff = fields[0];
	f->pcsp = fields[3];
	f->pcfile = fields[4];
	f->pcln = fields[5];
	/* the fixed part ends in funcID, flag, a pad byte and nfuncdata */
	f->flags = (uint8_t)(tail >> 8);
	f->nfuncdata = (uint8_t)(tail >> 24);
	return true;
}

/* The function table row whose [entry, next entry) holds pc; false if none.
 * A binary search: a hostile table that is not sorted gives a wrong row,
 * which the final range check turns into "none". */
static bool find_row(const struct go_pclntab *t, uint64_t pc, uint64_t *row)
{
	uint64_t lo = 0, hi = t->nfunc, e;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (!entry_of(t, mid, &e))
			return false;
		if (e <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	uint64_t entry, end;
	if (lo == 0 || !prof_sym_gopclntab_func_at(t, lo - 1, &entry, &end) || pc < entry || pc >= end)
		return false;
	*row = lo - 1;
	return true;
}

static const char *func_name(const struct go_pclntab *t, uint32_t nameoff)
{
	return span_str(t, &t->funcnames, nameoff);
}

const char *prof_sym_gopclntab_func(const struct go_pclntab *t, uint64_t pc, uint64_t *entry, uint64_t *end)
{
	uint64_t row;
	struct func f;

	if (!find_row(t, pc, &row) || !func_load(t, row, &f))
		return NULL;
	*entry = f.entry;
	*end = f.end;
	return func_name(t, f.nameoff);
}

const char *prof_sym_gopclntab_func_flags(const struct go_pclntab *t, uint64_t pc, uint8_t *flags)
{
	uint64_t row;
	struct func f;

	if (!find_row(t, pc, &row) || !func_load(t, row, &f))
		return NULL;
	*flags = f.flags;
	return func_name(t, f.nameoff);
}

/* A Go varint (7 bits a byte, little-endian groups) as uint32; false when
 * the table ends inside it. */
static bool read_uvarint(const struct go_pclntab *t, uint64_t *pos, uint64_t end, uint32_t *v)
{
	uint32_t x = 0;

	for (uint32_t shift = 0; *pos < end; shift += 7) {
		uint8_t b = t->img.tab[(*pos)++];
		if (shift < 32)
			x |= (uint32_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = x;
			return true;
		}
	}
	return false;
}

/* The value of the pc-value table at pctab offset off for pc of f; -1 when
 * the table has none (offset 0, pc past its end, or a cut table). */
static int32_t pcvalue(const struct go_pclntab *t, const struct func *f, uint32_t off, uint64_t pc)
{
	uint64_t pos = t->pctab.off + off, end = t->pctab.off + t->pctab.size;
	uint64_t at = f->entry;
	int32_t val = -1;

	if (off == 0 || off >= t->pctab.size)
		return -1;
	for (;;) {
		uint32_t uv, pcdelta;
		if (pos >= end || (t->img.tab[pos] == 0 && at != f->entry))
			return -1;	/* end of table before pc */
		if (!read_uvarint(t, &pos, end, &uv) || !read_uvarint(t, &pos, end, &pcdelta))
			return -1;
		/* zig-zag; wraps as Go's int32 does (no signed overflow here) */
		val = (int32_t)((uint32_t)val + (-(uv & 1) ^ (uv >> 1)));
		at += (uint64_t)pcdelta * t->quantum;
		if (pc < at)
			return val;
	}
}

bool prof_sym_gopclntab_sp_delta(const struct go_pclntab *t, uint64_t pc, uint32_t *delta)
{
	uint64_t row;
	struct func f;
	int32_t v;

	if (!find_row(t, pc, &row) || !func_load(t, row, &f) || (v = pcvalue(t, &f, f.pcsp, pc)) < 0)
		return false;
	*delta = (uint32_t)v;
	return true;
}

/* file:line of pc in f. */
static void file_line(const struct go_pclntab *t, const struct func *f, uint64_t pc,
		      const char **file, uint32_t *line)
{
	int32_t fileno = pcvalue(t, f, f->pcfile, pc);
	int32_t ln = pcvalue(t, f, f->pcln, pc);
	uint32_t name_off;

	*file = "";
	*line = ln > 0 ? (uint32_t)ln : 0;
	if (fileno < 0 || !span_u32(t, &t->cutab, ((uint64_t)f->cu + (uint32_t)fileno) * 4, &name_off))
		return;
	const char *s = span_str(t, &t->filetab, name_off);
	if (s)
		*file = s;
}

/* Where f's inline tree is (a file vaddr); false when it has none. */
static bool inline_tree(const struct go_pclntab *t, const struct func *f, uint64_t *tree)
{
	uint64_t at = (uint64_t)t->func_fixed + 4ull * f->npcdata;

	if (f->nfuncdata <= FUNCDATA_INLTREE || f->npcdata <= PCDATA_INLTREE_INDEX || !t->img.read)
		return false;
	if (t->version == GO_PCLN_116) {
		/* absolute addresses, 8-aligned in the image on 64-bit */
		uint64_t v, pos = t->pcln.off + f->off + at;
		if (t->ptrsize == 8 && (pos & 4))
			at += 4;
		at += (uint64_t)FUNCDATA_INLTREE * t->ptrsize;
		if (!span_word(t, &t->pcln, f->off + at, t->ptrsize, &v))
			return false;
		*tree = v;
		return v != 0;
	}
	uint32_t off;
	if (!t->img.gofunc || !func_u32(t, f, at + 4ull * FUNCDATA_INLTREE, &off) || off == UINT32_MAX)
		return false;
	*tree = t->img.gofunc + off;
	return true;
}

/* Inline tree entry ix: the inlined function's name offset and parentPc. */
static bool inline_entry(const struct go_pclntab *t, uint64_t tree, int32_t ix, uint32_t *nameoff,
			 uint32_t *parent_pc)
{
	uint8_t e[20];
	bool v120 = t->version == GO_PCLN_120;
	size_t size = v120 ? 16 : 20;

	if (ix < 0 || (uint32_t)ix >= MAX_INLTREE_INDEX ||
	    t->img.read(t->img.ctx, tree + (uint64_t)ix * size, e, size) < 0)
		return false;
	*nameoff = rd32(e + (v120 ? 4 : 12));
	*parent_pc = rd32(e + (v120 ? 8 : 16));
	return true;
}

size_t prof_sym_gopclntab_frames(const struct go_pclntab *t, uint64_t pc, struct go_frame *out, size_t max)
{
	uint64_t row, tree = 0;
	struct func f;
	size_t n = 0;

	if (max == 0 || !find_row(t, pc, &row) || !func_load(t, row, &f))
		return 0;
	const char *outer = func_name(t, f.nameoff);
	if (!outer)
		return 0;
	uint32_t inl_index = 0;
	bool has_tree = inline_tree(t, &f, &tree) &&
			func_u32(t, &f, t->func_fixed + 4ull * PCDATA_INLTREE_INDEX, &inl_index);
	/* Each inlined call at pc, then its caller at parentPc, until the
	 * real function; max - 1 keeps room for it. */
	while (has_tree && n + 1 < max) {
		uint32_t nameoff, parent_pc;
		int32_t ix = pcvalue(t, &f, inl_index, pc);
		const char *name;
		if (ix < 0 || !inline_entry(t, tree, ix, &nameoff, &parent_pc) ||
		    !(name = func_name(t, nameoff)) || parent_pc >= f.end - f.entry)
			break;
		out[n].func = name;
		out[n].inlined = true;
		file_line(t, &f, pc, &out[n].file, &out[n].line);
		n++;
		pc = f.entry + parent_pc;
	}
	out[n].func = outer;
	out[n].inlined = false;
	file_line(t, &f, pc, &out[n].file, &out[n].line);
	return n + 1;
}
