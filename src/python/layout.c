/*
 * layout.c - what the Python frame reader must know of CPython's memory
 * per version: the structure offsets (a table for 3.11 and 3.12, from
 * _Py_DebugOffsets for 3.13 and later) and the decoding of a code object's
 * location table (Objects/locations.md, 3.11 and later) into a line.
 *
 * The table's numbers were derived from the structure definitions of each
 * version (Include/cpython/pystate.h, Include/internal/pycore_frame.h,
 * pycore_runtime.h, pycore_interp.h, cpython/code.h, cpython/unicodeobject.h,
 * cpython/bytesobject.h) for x86-64; tests/unit/python.c checks them
 * against mirrors of those definitions, and the 3.11 row was read with gdb
 * from the DWARF of a 3.11.7 libpython (`ptype/o struct _ts` ...).
 * 3.8 - 3.10 keep their frames as PyFrameObjects, a chain from
 * PyThreadState.frame through f_back, each evaluated by its own
 * _PyEval_EvalFrameDefault call; their thread states hold the pthread_t,
 * not the tid, which glibc keeps in its struct pthread (offset 720 in
 * glibc 2.36 x86-64; a tid read there must match the sample's, so another
 * libc only leaves the stacks native).  Their rows were read with gdb from
 * the DWARF of pyenv's 3.8.18, 3.9.18 and 3.10.13 (`ptype/o struct _ts`,
 * `struct _frame`, `PyCodeObject`) and tests/unit/python.c checks them
 * against mirrors of Include/cpython/pystate.h, Include/cpython/frameobject.h
 * and Include/cpython/code.h of each.
 */
#include "prof/python.h"
#include <errno.h>
#include <string.h>

#define GLIBC_PTHREAD_TID 720	/* offsetof(struct pthread, tid), glibc 2.36 x86-64 */

/* 3.8-3.10: what their rows share (f_lasti and co_linetable differ). */
#define FRAME_OBJECT_ROW                                                            \
	.runtime_interp_head = 32, .interp_threads_head = 8,                        \
	.tstate_next = 8, .tstate_current_frame = 24, .tstate_native_tid = 176,     \
	.pthread_tid = GLIBC_PTHREAD_TID,                                           \
	.frame_code = 32, .frame_previous = 24, .frame_owner = 0,                   \
	.code_firstlineno = 40, .code_filename = 104, .code_qualname = 112,         \
	.code_linetable = 120,                                                      \
	.unicode_length = 16, .unicode_state = 32, .ascii_size = 48, .compact_size = 72, \
	.bytes_size = 16, .bytes_sval = 32,                                         \
	.owner_cstack = 0xff, .frame_objects = true

static const struct prof_py_layout layouts[] = {
	{ .version = 0x0308, FRAME_OBJECT_ROW, .frame_instr = 104, .frame_size = 112,
	  .lines = PROF_PY_LINES_LNOTAB },
	{ .version = 0x0309, FRAME_OBJECT_ROW, .frame_instr = 104, .frame_size = 112,
	  .lines = PROF_PY_LINES_LNOTAB },
	{ .version = 0x030a, FRAME_OBJECT_ROW, .frame_instr = 96, .frame_size = 104,
	  .lines = PROF_PY_LINES_LINETABLE },
	{	/* 3.11 */
		.version = 0x030b,
		.runtime_interp_head = 40, .interp_threads_head = 16,
		.tstate_next = 8, .tstate_cframe = 56, .tstate_native_tid = 160,
		.cframe_current_frame = 8,
		.frame_code = 32, .frame_previous = 48, .frame_instr = 56,
		.frame_is_entry = 68, .frame_owner = 69, .frame_size = 72,
		.code_firstlineno = 72, .code_filename = 112, .code_qualname = 128,
		.code_linetable = 136, .code_adaptive = 184,
		.unicode_length = 16, .unicode_state = 32, .ascii_size = 48, .compact_size = 72,
		.bytes_size = 16, .bytes_sval = 32,
		.owner_cstack = 0xff, .instr_is_prev = true,
	},
	{	/* 3.12: f_code first, no is_entry: an entry is marked by the shim
		 * frame owned by the C stack that follows it */
		.version = 0x030c,
		.runtime_interp_head = 40, .interp_threads_head = 72,
		.tstate_next = 8, .tstate_cframe = 56, .tstate_native_tid = 144,
		.cframe_current_frame = 0,
		.frame_code = 0, .frame_previous = 8, .frame_instr = 56,
		.frame_owner = 70, .frame_size = 72,
		.code_firstlineno = 68, .code_filename = 112, .code_qualname = 128,
		.code_linetable = 136, .code_adaptive = 192,
		.unicode_length = 16, .unicode_state = 32, .ascii_size = 40, .compact_size = 56,
		.bytes_size = 16, .bytes_sval = 32,
		.owner_cstack = 3, .instr_is_prev = true,
	},
};

const struct prof_py_layout *prof_py_layout_of(uint16_t version)
{
	for (size_t i = 0; i < ARRAY_SIZE(layouts); i++)
		if (layouts[i].version == version)
			return &layouts[i];
	return NULL;
}

/*
 * _Py_DebugOffsets of 3.13 (Include/internal/pycore_runtime.h), as u64
 * words: cookie "xdebugpy", version, free_threaded, then per structure
 * its size followed by the offsets of its fields.  Indexes of the words
 * this reader uses:
 */
enum {
	DO_VERSION = 1, DO_FREE_THREADED = 2,
	DO_RT_INTERP_HEAD = 5,
	DO_IS_THREADS_HEAD = 9,
	DO_TS_NEXT = 21, DO_TS_CURRENT_FRAME = 23, DO_TS_NATIVE_TID = 25,
	DO_FR_PREVIOUS = 29, DO_FR_EXECUTABLE = 30, DO_FR_INSTR_PTR = 31,
	DO_FR_LOCALSPLUS = 32, DO_FR_OWNER = 33,
	DO_CO_FILENAME = 35, DO_CO_QUALNAME = 37, DO_CO_LINETABLE = 38,
	DO_CO_FIRSTLINENO = 39, DO_CO_ADAPTIVE = 43,
	DO_BY_OB_SIZE = 65, DO_BY_OB_SVAL = 66,
	DO_UN_STATE = 68, DO_UN_LENGTH = 69, DO_UN_ASCII_SIZE = 70,
	DO_WORDS = 71,
};

int prof_py_layout_from_debug(const uint64_t *w, size_t n, struct prof_py_layout *out)
{
	static const uint16_t used[] = {
		DO_RT_INTERP_HEAD, DO_IS_THREADS_HEAD, DO_TS_NEXT, DO_TS_CURRENT_FRAME,
		DO_TS_NATIVE_TID, DO_FR_PREVIOUS, DO_FR_EXECUTABLE, DO_FR_INSTR_PTR,
		DO_FR_LOCALSPLUS, DO_FR_OWNER, DO_CO_FILENAME, DO_CO_QUALNAME, DO_CO_LINETABLE,
		DO_CO_FIRSTLINENO, DO_CO_ADAPTIVE, DO_BY_OB_SIZE, DO_BY_OB_SVAL, DO_UN_STATE,
		DO_UN_LENGTH, DO_UN_ASCII_SIZE,
	};

	if (n < DO_WORDS || memcmp(w, "xdebugpy", 8) || w[DO_VERSION] < 0x030d0000 ||
	    w[DO_FREE_THREADED])
		return -EINVAL;
	for (size_t i = 0; i < ARRAY_SIZE(used); i++)
		if (w[used[i]] > UINT16_MAX)	/* no field of these structures is that far */
			return -EINVAL;
	*out = (struct prof_py_layout){
		.version = (uint16_t)(w[DO_VERSION] >> 16),
		.runtime_interp_head = (uint16_t)w[DO_RT_INTERP_HEAD],
		.interp_threads_head = (uint16_t)w[DO_IS_THREADS_HEAD],
		.tstate_next = (uint16_t)w[DO_TS_NEXT],
		.tstate_current_frame = (uint16_t)w[DO_TS_CURRENT_FRAME],
		.tstate_native_tid = (uint16_t)w[DO_TS_NATIVE_TID],
		.frame_code = (uint16_t)w[DO_FR_EXECUTABLE],
		.frame_previous = (uint16_t)w[DO_FR_PREVIOUS],
		.frame_instr = (uint16_t)w[DO_FR_INSTR_PTR],
		.frame_owner = (uint16_t)w[DO_FR_OWNER],
		.frame_size = (uint16_t)w[DO_FR_LOCALSPLUS],
		.code_firstlineno = (uint16_t)w[DO_CO_FIRSTLINENO],
		.code_filename = (uint16_t)w[DO_CO_FILENAME],
		.code_qualname = (uint16_t)w[DO_CO_QUALNAME],
		.code_linetable = (uint16_t)w[DO_CO_LINETABLE],
		.code_adaptive = (uint16_t)w[DO_CO_ADAPTIVE],
		.unicode_length = (uint16_t)w[DO_UN_LENGTH],
		.unicode_state = (uint16_t)w[DO_UN_STATE],
		.ascii_size = (uint16_t)w[DO_UN_ASCII_SIZE],
		/* PyCompactUnicodeObject: PyASCIIObject, utf8_length, utf8 */
		.compact_size = (uint16_t)(w[DO_UN_ASCII_SIZE] + 16),
		.bytes_size = (uint16_t)w[DO_BY_OB_SIZE],
		.bytes_sval = (uint16_t)w[DO_BY_OB_SVAL],
		.owner_cstack = 3,	/* FRAME_OWNED_BY_CSTACK, pycore_frame.h */
		.instr_is_prev = false,	/* instr_ptr: the unit being executed */
	};
	return 0;
}

/* --- location tables (Objects/locations.md) -------------------------------------- */

struct lt_cursor {
	const uint8_t *p, *end;
};

/* A varint of 6-bit chunks, least significant first, bit 6 = more. */
static uint32_t lt_varint(struct lt_cursor *c)
{
	uint32_t v = 0;
	unsigned shift = 0;

	while (c->p < c->end) {
		uint8_t b = *c->p++;
		if (shift < 32)
			v |= (uint32_t)(b & 63) << shift;
		shift += 6;
		if (!(b & 64))
			break;
	}
	return v;
}

static int32_t lt_svarint(struct lt_cursor *c)
{
	uint32_t v = lt_varint(c);

	return (v & 1) ? -(int32_t)(v >> 1) : (int32_t)(v >> 1);
}

/* Skips the rest of an entry (its bytes up to the next one's first byte,
 * which has bit 7 set). */
static void lt_skip(struct lt_cursor *c)
{
	while (c->p < c->end && !(*c->p & 0x80))
		c->p++;
}

int prof_py_line(const uint8_t *table, size_t len, int firstlineno, uint32_t lasti)
{
	struct lt_cursor c = { table, table + len };
	int line = firstlineno;
	uint64_t addr = 0;

	while (c.p < c.end) {
		uint8_t first = *c.p++;
		unsigned code = (first >> 3) & 15, units = (first & 7) + 1;
		bool none = false;
		if (!(first & 0x80))
			return -1;	/* not the start of an entry: a corrupt table */
		if (code == 15)
			none = true;
		else if (code == 14 || code == 13)
			line += lt_svarint(&c);
		else if (code >= 10)
			line += (int)code - 10;
		lt_skip(&c);
		if (lasti < addr + units)
			return none ? -1 : line;
		addr += units;
	}
	return -1;
}

int prof_py_line_lnotab(const uint8_t *table, size_t len, int firstlineno, uint32_t lasti)
{
	int line = firstlineno;
	uint64_t addr = 0;

	/* PyCode_Addr2Line of 3.8: (address increment, signed line increment) */
	for (size_t i = 0; i + 1 < len; i += 2) {
		addr += table[i];
		if (addr > lasti)
			break;
		line += (int8_t)table[i + 1];
	}
	return line;
}

int prof_py_line_310(const uint8_t *table, size_t len, int firstlineno, uint32_t lasti)
{
	uint64_t start = 0, end = 0, at = (uint64_t)lasti * 2;	/* bytes */
	int line = firstlineno, ar_line = -1;

	/* advance() of 3.10's codeobject.c: (byte delta, line delta or -128) */
	for (size_t i = 0; i + 1 < len; i += 2) {
		start = end;
		end += table[i];
		int8_t d = (int8_t)table[i + 1];
		if (d == -128) {
			ar_line = -1;
		} else {
			line += d;
			ar_line = line;
		}
		if (start <= at && at < end)
			return ar_line;
	}
	return -1;
}

int prof_pycode_line(const struct prof_pycode *c, uint32_t lasti)
{
	switch (c->lines) {
	case PROF_PY_LINES_LNOTAB:
		return prof_py_line_lnotab(c->linetable, c->linetable_len, c->firstlineno, lasti);
	case PROF_PY_LINES_LINETABLE:
		return prof_py_line_310(c->linetable, c->linetable_len, c->firstlineno, lasti);
	default:
		return prof_py_line(c->linetable, c->linetable_len, c->firstlineno, lasti);
	}
}
