/*
 * python.c - the CPython layouts of src/python/layout.c against mirrors of
 * each version's structure definitions, the _Py_DebugOffsets decoding, and
 * the line decoders against tables CPython 3.8, 3.10 and 3.11 wrote, and
 * which BPF frame record a sample takes (prof_python_match).
 *
 * The mirrors below list the fields of each structure in the order the
 * version's header declares them, up to the last field the reader uses
 * (types reduced to their x86-64 size and alignment); the compiler then
 * lays them out as CPython's compiler does, and offsetof() must give the
 * table's numbers.  A field added or moved in a header shows up here as a
 * changed mirror, not as a silently wrong read.
 */
#include "prof/python.h"
#include "tap.h"
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

typedef void *P;	/* any pointer */

/* --- 3.11 -------------------------------------------------------------------------------- */
/* Include/internal/pycore_runtime.h: struct pyruntimestate, up to interpreters.head */
struct rt311 { int _initialized, preinitializing, preinitialized, core_initialized, initialized;
	       P _finalizing; struct { P mutex; P head; P main; long long next_id; } interpreters; };
/* Include/internal/pycore_interp.h: struct _is, up to threads.head */
struct is311 { P next; struct { unsigned long long next_unique_id; P head; } threads; };
/* Include/cpython/pystate.h: struct _ts, up to native_thread_id */
struct ts311 { P prev, next, interp; int _initialized, _static, recursion_remaining, recursion_limit,
	       recursion_headroom, tracing, tracing_what; P cframe, c_profilefunc, c_tracefunc,
	       c_profileobj, c_traceobj, curexc_type, curexc_value, curexc_traceback, exc_info, dict;
	       int gilstate_counter; P async_exc; unsigned long thread_id, native_thread_id; };
/* Include/cpython/pystate.h: _PyCFrame */
struct cf311 { unsigned char use_tracing; P current_frame; P previous; };
/* Include/internal/pycore_frame.h: _PyInterpreterFrame */
struct fr311 { P f_func, f_globals, f_builtins, f_locals, f_code, frame_obj, previous, prev_instr;
	       int stacktop; _Bool is_entry; char owner; P localsplus[1]; };
/* Include/cpython/code.h: _PyCode_DEF (PyObject_VAR_HEAD = 24 bytes) */
struct co311 { P ob_refcnt, ob_type; long ob_size; P co_consts, co_names, co_exceptiontable;
	       int co_flags; short co_warmup, _co_linearray_entry_size; int co_argcount,
	       co_posonlyargcount, co_kwonlyargcount, co_stacksize, co_firstlineno, co_nlocalsplus,
	       co_nlocals, co_nplaincellvars, co_ncellvars, co_nfreevars; P co_localsplusnames,
	       co_localspluskinds, co_filename, co_name, co_qualname, co_linetable, co_weakreflist,
	       _co_code, _co_linearray; int _co_firsttraceable; P co_extra; char co_code_adaptive[1]; };
/* Include/cpython/unicodeobject.h: PyASCIIObject (with wstr) and PyCompactUnicodeObject */
struct as311 { P ob_refcnt, ob_type; long length, hash; unsigned state; P wstr; };
struct cu311 { struct as311 base; long utf8_length; P utf8; long wstr_length; };
/* Include/cpython/bytesobject.h: PyBytesObject */
struct by311 { P ob_refcnt, ob_type; long ob_size, ob_shash; char ob_sval[1]; };

/* --- 3.12 -------------------------------------------------------------------------------- */
/* pycore_runtime.h: same prefix as 3.11 (_Py_atomic_address _finalizing) */
typedef struct rt311 rt312;
/* pycore_interp.h: struct _is, up to threads.head */
struct is312 { P next; long long id, id_refcount; int requires_idref; P id_mutex; int _initialized,
	       finalizing; unsigned long long monitoring_version, last_restart_version;
	       struct { unsigned long long next_unique_id; P head; } threads; };
/* cpython/pystate.h: struct _ts (_status is a 32-bit bitfield struct) */
struct ts312 { P prev, next, interp; unsigned _status; int py_recursion_remaining,
	       py_recursion_limit, c_recursion_remaining, recursion_headroom, tracing, what_event;
	       P cframe, c_profilefunc, c_tracefunc, c_profileobj, c_traceobj, current_exception,
	       exc_info, dict; int gilstate_counter; P async_exc; unsigned long thread_id,
	       native_thread_id; };
/* cpython/pystate.h: _PyCFrame (use_tracing is gone) */
struct cf312 { P current_frame; P previous; };
/* pycore_frame.h: _PyInterpreterFrame */
struct fr312 { P f_code, previous, f_funcobj, f_globals, f_builtins, f_locals, frame_obj, prev_instr;
	       int stacktop; unsigned short return_offset; char owner; P localsplus[1]; };
/* cpython/code.h */
struct co312 { P ob_refcnt, ob_type; long ob_size; P co_consts, co_names, co_exceptiontable;
	       int co_flags, co_argcount, co_posonlyargcount, co_kwonlyargcount, co_stacksize,
	       co_firstlineno, co_nlocalsplus, co_framesize, co_nlocals, co_ncellvars, co_nfreevars;
	       unsigned co_version; P co_localsplusnames, co_localspluskinds, co_filename, co_name,
	       co_qualname, co_linetable, co_weakreflist, _co_cached;
	       unsigned long long _co_instrumentation_version; P _co_monitoring;
	       int _co_firsttraceable; P co_extra; char co_code_adaptive[1]; };
/* cpython/unicodeobject.h: no wstr any more */
struct as312 { P ob_refcnt, ob_type; long length, hash; unsigned state; };
struct cu312 { struct as312 base; long utf8_length; P utf8; };

/* --- 3.8, 3.9, 3.10 -------------------------------------------------------------------- */
/* Field lists as `ptype struct _ts` (...) prints them from the DWARF of
 * pyenv's 3.8.18, 3.9.18 and 3.10.13, i.e. their headers as compiled. */
/* Include/internal/pycore_runtime.h: struct pyruntimestate, up to
 * interpreters.head (3.8: PyThreadState *finalizing; 3.9, 3.10:
 * _Py_atomic_address _finalizing, a pointer as well) */
struct rt38 { int preinitializing, preinitialized, core_initialized, initialized; P finalizing;
	      struct { P mutex; P head; P main; long long next_id; } interpreters; };
/* Include/internal/pycore_interp.h: struct _is, up to tstate_head */
struct is38 { P next; P tstate_head; };
/* _PyErr_StackItem (cpython/pystate.h): exc_type, exc_value, exc_traceback, previous_item */
struct esi38 { P exc_type, exc_value, exc_traceback, previous_item; };
/* Include/cpython/pystate.h: struct _ts, up to thread_id (3.8, 3.9) */
struct ts38 { P prev, next, interp, frame; int recursion_depth; char overflowed, recursion_critical;
	      int stackcheck_counter, tracing, use_tracing; P c_profilefunc, c_tracefunc, c_profileobj,
	      c_traceobj, curexc_type, curexc_value, curexc_traceback; struct esi38 exc_state;
	      P exc_info, dict; int gilstate_counter; P async_exc; unsigned long thread_id; };
/* 3.10: recursion_headroom and cframe in place of overflowed..use_tracing */
struct ts310 { P prev, next, interp, frame; int recursion_depth, recursion_headroom, stackcheck_counter,
	       tracing; P cframe, c_profilefunc, c_tracefunc, c_profileobj, c_traceobj, curexc_type,
	       curexc_value, curexc_traceback; struct esi38 exc_state; P exc_info, dict;
	       int gilstate_counter; P async_exc; unsigned long thread_id; };
/* cpython/frameobject.h: struct _frame (PyVarObject ob_base first) */
struct fr38 { P ob_refcnt, ob_type; long ob_size; P f_back, f_code, f_builtins, f_globals, f_locals,
	      f_valuestack, f_stacktop, f_trace; char f_trace_lines, f_trace_opcodes; P f_gen;
	      int f_lasti, f_lineno, f_iblock; char f_executing; };
struct fr310 { P ob_refcnt, ob_type; long ob_size; P f_back, f_code, f_builtins, f_globals, f_locals,
	       f_valuestack, f_trace; int f_stackdepth; char f_trace_lines, f_trace_opcodes; P f_gen;
	       int f_lasti, f_lineno, f_iblock; };
/* Include/cpython/code.h: PyCodeObject up to co_lnotab (3.10: co_linetable) */
struct co38 { P ob_refcnt, ob_type; int co_argcount, co_posonlyargcount, co_kwonlyargcount, co_nlocals,
	      co_stacksize, co_flags, co_firstlineno; P co_code, co_consts, co_names, co_varnames,
	      co_freevars, co_cellvars, co_cell2arg, co_filename, co_name, co_lnotab; };
/* glibc 2.36 (nptl/descr.h) puts struct pthread's tid after its list_t
 * list and header: not mirrored; layout.c's 720 is what gdb's ptype/o
 * of libc6-dbg says, and t1174 reads real threads through it. */

#define IS(ver, field, want) is_u64((ver)->field, (want), "%x %s", (ver)->version, #field)

static void layout_311(void)
{
	const struct prof_py_layout *l = prof_py_layout_of(0x030b);

	if (!ok(l != NULL, "3.11 has a layout"))
		return;
	IS(l, runtime_interp_head, offsetof(struct rt311, interpreters.head));
	IS(l, interp_threads_head, offsetof(struct is311, threads.head));
	IS(l, tstate_next, offsetof(struct ts311, next));
	IS(l, tstate_cframe, offsetof(struct ts311, cframe));
	IS(l, tstate_native_tid, offsetof(struct ts311, native_thread_id));
	IS(l, cframe_current_frame, offsetof(struct cf311, current_frame));
	IS(l, frame_code, offsetof(struct fr311, f_code));
	IS(l, frame_previous, offsetof(struct fr311, previous));
	IS(l, frame_instr, offsetof(struct fr311, prev_instr));
	IS(l, frame_is_entry, offsetof(struct fr311, is_entry));
	IS(l, frame_owner, offsetof(struct fr311, owner));
	IS(l, frame_size, offsetof(struct fr311, localsplus));
	IS(l, code_firstlineno, offsetof(struct co311, co_firstlineno));
	IS(l, code_filename, offsetof(struct co311, co_filename));
	IS(l, code_qualname, offsetof(struct co311, co_qualname));
	IS(l, code_linetable, offsetof(struct co311, co_linetable));
	IS(l, code_adaptive, offsetof(struct co311, co_code_adaptive));
	IS(l, unicode_length, offsetof(struct as311, length));
	IS(l, unicode_state, offsetof(struct as311, state));
	IS(l, ascii_size, sizeof(struct as311));
	IS(l, compact_size, sizeof(struct cu311));
	IS(l, bytes_size, offsetof(struct by311, ob_size));
	IS(l, bytes_sval, offsetof(struct by311, ob_sval));
	ok(l->instr_is_prev && l->owner_cstack == 0xff, "3.11: prev_instr, is_entry marks entries");
}

static void layout_312(void)
{
	const struct prof_py_layout *l = prof_py_layout_of(0x030c);

	if (!ok(l != NULL, "3.12 has a layout"))
		return;
	IS(l, runtime_interp_head, offsetof(rt312, interpreters.head));
	IS(l, interp_threads_head, offsetof(struct is312, threads.head));
	IS(l, tstate_next, offsetof(struct ts312, next));
	IS(l, tstate_cframe, offsetof(struct ts312, cframe));
	IS(l, tstate_native_tid, offsetof(struct ts312, native_thread_id));
	IS(l, cframe_current_frame, offsetof(struct cf312, current_frame));
	IS(l, frame_code, offsetof(struct fr312, f_code));
	IS(l, frame_previous, offsetof(struct fr312, previous));
	IS(l, frame_instr, offsetof(struct fr312, prev_instr));
	IS(l, frame_is_entry, 0);
	IS(l, frame_owner, offsetof(struct fr312, owner));
	IS(l, frame_size, offsetof(struct fr312, localsplus));
	IS(l, code_firstlineno, offsetof(struct co312, co_firstlineno));
	IS(l, code_filename, offsetof(struct co312, co_filename));
	IS(l, code_qualname, offsetof(struct co312, co_qualname));
	IS(l, code_linetable, offsetof(struct co312, co_linetable));
	IS(l, code_adaptive, offsetof(struct co312, co_code_adaptive));
	IS(l, unicode_length, offsetof(struct as312, length));
	IS(l, unicode_state, offsetof(struct as312, state));
	IS(l, ascii_size, sizeof(struct as312));
	IS(l, compact_size, sizeof(struct cu312));
	IS(l, bytes_size, offsetof(struct by311, ob_size));
	IS(l, bytes_sval, offsetof(struct by311, ob_sval));
	/* pycore_frame.h: enum _frameowner { THREAD, GENERATOR, FRAME_OBJECT, CSTACK } */
	ok(l->instr_is_prev && l->owner_cstack == 3, "3.12: prev_instr, FRAME_OWNED_BY_CSTACK = 3");
}

static void layout_frame_objects(uint16_t version, size_t tstate_frame, size_t thread_id,
				 size_t f_lasti, size_t frame_end, uint8_t lines)
{
	const struct prof_py_layout *l = prof_py_layout_of(version);

	if (!ok(l != NULL, "%x has a layout", version))
		return;
	IS(l, runtime_interp_head, offsetof(struct rt38, interpreters.head));
	IS(l, interp_threads_head, offsetof(struct is38, tstate_head));
	IS(l, tstate_next, offsetof(struct ts38, next));
	IS(l, tstate_current_frame, tstate_frame);
	IS(l, tstate_native_tid, thread_id);
	IS(l, frame_code, offsetof(struct fr38, f_code));
	IS(l, frame_previous, offsetof(struct fr38, f_back));
	IS(l, frame_instr, f_lasti);
	ok(l->frame_size >= f_lasti + 8 && l->frame_size <= frame_end + 8,
	   "%x: a frame read covers f_lasti (%u bytes)", version, l->frame_size);
	IS(l, code_firstlineno, offsetof(struct co38, co_firstlineno));
	IS(l, code_filename, offsetof(struct co38, co_filename));
	IS(l, code_qualname, offsetof(struct co38, co_name));
	IS(l, code_linetable, offsetof(struct co38, co_lnotab));
	IS(l, unicode_length, offsetof(struct as311, length));	/* PyASCIIObject as 3.11's */
	IS(l, unicode_state, offsetof(struct as311, state));
	IS(l, ascii_size, sizeof(struct as311));
	IS(l, compact_size, sizeof(struct cu311));
	IS(l, bytes_size, offsetof(struct by311, ob_size));
	IS(l, bytes_sval, offsetof(struct by311, ob_sval));
	IS(l, lines, lines);
	ok(l->frame_objects && l->owner_cstack == 0xff && !l->frame_is_entry && l->pthread_tid == 720,
	   "%x: PyFrameObjects, every one an activation, tid through glibc's pthread", version);
}

static void layout_38_310(void)
{
	layout_frame_objects(0x0308, offsetof(struct ts38, frame), offsetof(struct ts38, thread_id),
			     offsetof(struct fr38, f_lasti), sizeof(struct fr38), PROF_PY_LINES_LNOTAB);
	layout_frame_objects(0x0309, offsetof(struct ts38, frame), offsetof(struct ts38, thread_id),
			     offsetof(struct fr38, f_lasti), sizeof(struct fr38), PROF_PY_LINES_LNOTAB);
	layout_frame_objects(0x030a, offsetof(struct ts310, frame), offsetof(struct ts310, thread_id),
			     offsetof(struct fr310, f_lasti), sizeof(struct fr310), PROF_PY_LINES_LINETABLE);
	ok(prof_py_layout_of(0x0307) == NULL, "3.7 has no table row");
}

/*
 * 3.13's _Py_DebugOffsets (pycore_runtime.h): every sub-structure starts
 * with its size.  The words below are what 3.13 writes for x86-64 (the
 * values of its offsetof() initializers); the decoder must take the
 * offsets from the words, whatever they are.
 */
static void debug_offsets_313(void)
{
	uint64_t w[73] = { 0 };
	struct prof_py_layout l;

	memcpy(w, "xdebugpy", 8);
	w[1] = 0x030d00f0;	/* 3.13.0 final */
	w[5] = 40;		/* runtime_state.interpreters_head */
	w[9] = 7344;		/* interpreter_state.threads_head */
	w[21] = 8;		/* thread_state.next */
	w[23] = 72;		/* thread_state.current_frame */
	w[25] = 152;		/* thread_state.native_thread_id */
	w[29] = 8, w[30] = 0, w[31] = 56, w[32] = 72, w[33] = 70;	/* interpreter_frame */
	w[35] = 112, w[37] = 128, w[38] = 136, w[39] = 68, w[43] = 200;	/* code_object */
	w[65] = 16, w[66] = 32;	/* bytes_object */
	w[68] = 32, w[69] = 16, w[70] = 40;	/* unicode_object */
	ok(prof_py_layout_from_debug(w, 73, &l) == 0, "3.13 debug offsets decode");
	IS(&l, version, 0x030d);
	IS(&l, interp_threads_head, 7344);
	IS(&l, tstate_current_frame, 72);
	IS(&l, tstate_native_tid, 152);
	IS(&l, frame_instr, 56);
	IS(&l, frame_owner, 70);
	IS(&l, frame_size, 72);
	IS(&l, code_adaptive, 200);
	IS(&l, compact_size, 56);
	ok(!l.instr_is_prev && l.owner_cstack == 3, "3.13: instr_ptr, CSTACK owner");
	w[2] = 1;
	ok(prof_py_layout_from_debug(w, 73, &l) < 0, "a free-threaded build is refused");
	w[2] = 0;
	w[0] ^= 1;
	ok(prof_py_layout_from_debug(w, 73, &l) < 0, "a wrong cookie is refused");
}

/*
 * The location table CPython 3.11.7 wrote for
 *     1 def f(n):
 *     2     s = 0
 *     3     for i in range(n):
 *     4         if i % 3:
 *     5             s += i
 *     6         else:
 *     7             s -= 1
 *     8     return s
 * and its code.co_lines() ranges in code units (start, end, line).
 */
static const uint8_t lt311[] = {
	128, 0, 216, 8, 9, 128, 65, 221, 13, 18, 144, 49, 137, 88, 140, 88, 240, 0, 4, 5, 19, 240,
	0, 4, 5, 19, 136, 1, 216, 11, 12, 136, 113, 137, 53, 240, 0, 3, 9, 19, 216, 12, 13, 144, 17,
	137, 70, 136, 65, 136, 65, 224, 12, 13, 144, 17, 137, 70, 136, 65, 136, 65, 216, 11, 12,
	128, 72,
};
static const int lines311[][3] = {
	{0, 1, 1}, {1, 2, 2}, {2, 3, 2}, {3, 9, 3}, {9, 10, 3}, {10, 12, 3}, {12, 17, 3}, {17, 18, 3},
	{18, 19, 3}, {19, 20, 3}, {20, 21, 4}, {21, 22, 4}, {22, 24, 4}, {24, 25, 4}, {25, 26, 5},
	{26, 27, 5}, {27, 29, 5}, {29, 30, 5}, {30, 31, 5}, {31, 32, 7}, {32, 33, 7}, {33, 35, 7},
	{35, 36, 7}, {36, 37, 7}, {37, 38, 8}, {38, 39, 8},
};

static void line_table(void)
{
	int bad = 0;

	for (size_t i = 0; i < ARRAY_SIZE(lines311); i++)
		for (int u = lines311[i][0]; u < lines311[i][1]; u++)
			if (prof_py_line(lt311, sizeof(lt311), 1, (uint32_t)u) != lines311[i][2]) {
				printf("# unit %d: line %d, want %d\n", u,
				     prof_py_line(lt311, sizeof(lt311), 1, (uint32_t)u), lines311[i][2]);
				bad++;
			}
	ok(bad == 0, "every code unit of f gets co_lines()'s line");
	ok(prof_py_line(lt311, sizeof(lt311), 1, 39) == -1, "past the table: no line");
	ok(prof_py_line(lt311, sizeof(lt311), 101, 20) == 104, "lines count from firstlineno");
	/* code 15: no location; long form (14) with a negative line delta */
	static const uint8_t nolo[] = { 0xf8 | 1, 0xf0 | 0, 3, 0, 0, 0 };
	ok(prof_py_line(nolo, sizeof(nolo), 10, 0) == -1 && prof_py_line(nolo, sizeof(nolo), 10, 1) == -1,
	   "a no-location entry has no line");
	ok(prof_py_line(nolo, sizeof(nolo), 10, 2) == 9, "a long entry moves the line by -1");
	static const uint8_t junk[] = { 0x05, 0x80 };
	ok(prof_py_line(junk, sizeof(junk), 1, 0) == -1, "a corrupt table gives no line");
}

static void record_roundtrip(void)
{
	uint8_t buf[64];
	struct perf_event_header h = { .type = PROF_RECORD_PYSTACK, .size = 8 };
	uint32_t pid, tid;
	uint64_t t;
	struct prof_pyframe f[PROF_PY_MAX_FRAMES];

	memcpy(buf, &h, sizeof(h));
	ok(prof_python_record_parse((struct perf_event_header *)buf, &pid, &tid, &t, f) == -EINVAL,
	   "a short record is refused");
}

/*
 * The same f under 3.8.18 (co_lnotab; dis.findlinestarts: byte offset,
 * line) and 3.10.13 (co_linetable; co_lines(): byte start, end, line),
 * both 48 bytes of code.
 */
static const uint8_t lnotab38[] = { 0, 1, 4, 1, 12, 1, 8, 1, 10, 2, 10, 1 };
static const int starts38[][2] = { { 0, 2 }, { 4, 3 }, { 16, 4 }, { 24, 5 }, { 34, 7 }, { 44, 8 } };
static const uint8_t lt310[] = { 4, 1, 12, 1, 8, 1, 10, 1, 10, 2, 4, 1 };
static const int lines310[][3] = { { 0, 4, 2 }, { 4, 16, 3 }, { 16, 24, 4 }, { 24, 34, 5 },
				    { 34, 44, 7 }, { 44, 48, 8 } };

static void line_tables_38_310(void)
{
	int bad = 0;

	for (size_t i = 0; i < ARRAY_SIZE(starts38); i++) {
		int end = i + 1 < ARRAY_SIZE(starts38) ? starts38[i + 1][0] : 48;
		for (int b = starts38[i][0]; b < end; b += 2)	/* 3.8: f_lasti in bytes */
			bad += prof_py_line_lnotab(lnotab38, sizeof(lnotab38), 1, (uint32_t)b) != starts38[i][1];
	}
	ok(bad == 0, "3.8: every instruction of f gets findlinestarts()'s line");
	bad = 0;
	for (size_t i = 0; i < ARRAY_SIZE(lines310); i++)
		for (int b = lines310[i][0]; b < lines310[i][1]; b += 2)	/* 3.10: f_lasti in units */
			bad += prof_py_line_310(lt310, sizeof(lt310), 1, (uint32_t)b / 2) != lines310[i][2];
	ok(bad == 0, "3.10: every instruction of f gets co_lines()'s line");
	ok(prof_py_line_310(lt310, sizeof(lt310), 1, 24) == -1, "3.10: past the table: no line");
	static const uint8_t none310[] = { 2, 0x80, 2, 1 };	/* -128: no line */
	ok(prof_py_line_310(none310, sizeof(none310), 5, 0) == -1 &&
	   prof_py_line_310(none310, sizeof(none310), 5, 1) == 6, "3.10: a -128 entry has no line");
	struct prof_pycode c = { .linetable = (uint8_t *)lt310, .linetable_len = sizeof(lt310),
				 .firstlineno = 1, .lines = PROF_PY_LINES_LINETABLE };
	ok(prof_pycode_line(&c, 12) == 5, "prof_pycode_line follows the code's format");
}

/* The BPF reader's records against their samples: each record is stamped
 * after its own sample's time and before the thread's next sample; the
 * pump may bring a thread's samples out of time order (one CPU's ring,
 * then another's). */
static void record_match(void)
{
	enum { US = 1000 };
	/* tid 7's samples at 1000, 1130, 1140 (on two CPUs as it moved) and
	 * 3000 us, records 5-12 us after; another thread's and a switch-out's
	 * record at the same times */
	struct prof_py_stamp w[] = {
		{ 3000 * US + 9 * US, 7, 0 }, { 1000 * US + 5 * US, 7, 0 }, { 1140 * US + 12 * US, 7, 0 },
		{ 1000 * US + 1 * US, 8, 0 }, { 1000 * US + 2 * US, 7, 1 }, { 1130 * US + 5 * US, 7, 0 },
	};
	size_t n = ARRAY_SIZE(w);

	ok(prof_python_match(w, n, 7, 0, 3000 * US, 200 * US) == 0, "the latest sample first: its own record");
	ok(prof_python_match(w, n, 7, 0, 1000 * US, 200 * US) == 1,
	   "an older sample after it: its own record, still there");
	ok(prof_python_match(w, n, 7, 0, 1140 * US, 200 * US) == 2,
	   "a sample 10 us after the last: its own record 12 us after it, not that one's 5 us before it");
	ok(prof_python_match(w, n, 7, 1, 1000 * US, 200 * US) == 4, "a switch-out takes a switch-out's record");
	ok(prof_python_match(w, n, 9, 0, 1000 * US, 200 * US) == n, "another thread's: none");
	ok(prof_python_match(w, n, 7, 0, 2000 * US, 200 * US) == n, "a sample whose record was lost: none within 200 us");
	/* its own record lost, the thread's next one 150 us later is taken:
	 * the window bounds that to samples closer than the window */
	ok(prof_python_match(w + 2, 1, 7, 0, 1000 * US, 200 * US) == 0 &&
	   prof_python_match(w + 2, 1, 7, 0, 1000 * US, 100 * US) == 1,
	   "own record gone: the next within the window, none beyond it");
}

int main(void)
{
	record_match();
	layout_311();
	layout_312();
	layout_38_310();
	line_tables_38_310();
	debug_offsets_313();
	line_table();
	record_roundtrip();
	return done_testing();
}
