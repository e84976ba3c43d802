/*
 * python.h - CPython's own frames, read from outside a running interpreter
 * (src/python/): which Python functions a thread of a CPython process is
 * executing, read with process_vm_readv while it runs, never stopping it.
 *
 * The reader finds an interpreter by the `_PyRuntime` symbol of its
 * executable or libpython, its version by `Py_Version` (3.11+) or the file
 * name, and the structure offsets from `_Py_DebugOffsets` (3.13+, at the
 * start of _PyRuntime) or from a per-version table (python-layout.c).  A
 * thread's chain is _PyRuntime -> interpreters.head -> threads (matched by
 * native_thread_id, the kernel tid) -> current frame -> previous ...
 *
 * Every interpreter frame carries an "entry" mark on the last Python frame
 * that one native _PyEval_EvalFrameDefault activation runs: the replay
 * engine uses it to splice the Python frames into the native stack
 * (src/replay/pysplice.c).
 *
 * Threads: any function may be called from any thread (the ring pumps of
 * two events read at once; the replay engine names code objects); the
 * reader and the code table are locked, and code table entries never move.
 */
#ifndef PROF_PYTHON_H
#define PROF_PYTHON_H

#include "prof/util.h"
#include <linux/perf_event.h>
#include <sys/types.h>

#define PROF_PY_MAX_FRAMES 128	/* deeper chains are cut (outermost frames lost) */

/* The structure offsets the reader needs, for one CPython version. */
struct prof_py_layout {
	uint16_t version;		/* 0x030b for 3.11 */
	uint16_t runtime_interp_head;	/* _PyRuntime.interpreters.head */
	uint16_t interp_threads_head;	/* PyInterpreterState.threads.head */
	uint16_t tstate_next;		/* PyThreadState.next */
	uint16_t tstate_cframe;		/* PyThreadState.cframe (3.11, 3.12) */
	uint16_t tstate_current_frame;	/* PyThreadState.current_frame (3.13+), .frame (3.8-3.10) */
	uint16_t tstate_native_tid;	/* PyThreadState.native_thread_id; 3.8-3.10: thread_id */
	uint16_t pthread_tid;		/* 3.8-3.10: the tid in glibc's struct pthread at thread_id */
	uint16_t cframe_current_frame;	/* _PyCFrame.current_frame */
	uint16_t frame_code;		/* _PyInterpreterFrame.f_code / f_executable */
	uint16_t frame_previous;	/* 3.8-3.10: PyFrameObject.f_back */
	uint16_t frame_instr;		/* prev_instr (3.11, 3.12) / instr_ptr (3.13) / f_lasti (int) */
	uint16_t frame_is_entry;	/* 3.11 only (0: none) */
	uint16_t frame_owner;
	uint16_t frame_size;		/* bytes to read per frame */
	uint16_t code_firstlineno, code_filename, code_qualname, code_linetable;	/* 3.8-3.10: co_name, co_lnotab / co_linetable */
	uint16_t code_adaptive;		/* co_code_adaptive: the code units */
	uint16_t unicode_length, unicode_state;
	uint16_t ascii_size;		/* sizeof(PyASCIIObject): compact ASCII data */
	uint16_t compact_size;		/* sizeof(PyCompactUnicodeObject) */
	uint16_t bytes_size, bytes_sval;	/* PyBytesObject ob_size, ob_sval */
	uint8_t owner_cstack;		/* FRAME_OWNED_BY_CSTACK (3.12+), 0xff: none */
	bool instr_is_prev;		/* the pointer is to the last executed unit */
	bool frame_objects;		/* 3.8-3.10: PyFrameObjects, each its own activation */
	uint8_t lines;			/* PROF_PY_LINES_* */
};

enum {	/* how a code object maps instructions to lines */
	PROF_PY_LINES_LOCATIONS,	/* 3.11+: Objects/locations.md, code units */
	PROF_PY_LINES_LNOTAB,		/* 3.8, 3.9: co_lnotab, f_lasti in bytes */
	PROF_PY_LINES_LINETABLE,	/* 3.10: co_linetable, f_lasti in code units */
};

/* The table entry of a version (0x030b...), or NULL when it has none. */
const struct prof_py_layout *prof_py_layout_of(uint16_t version);
/* A 3.13+ layout from the _Py_DebugOffsets words at the start of
 * _PyRuntime (n u64s); 0 or -EINVAL when the cookie or sizes are off. */
int prof_py_layout_from_debug(const uint64_t *words, size_t n, struct prof_py_layout *out);

/* Line of the code unit lasti in a 3.11+ location table (Objects/
 * locations.md), starting at firstlineno; -1 when the table has none. */
int prof_py_line(const uint8_t *table, size_t len, int firstlineno, uint32_t lasti);
/* The same for 3.8 and 3.9's co_lnotab (lasti: the byte offset) and 3.10's
 * co_linetable (Objects/lnotab_notes.txt; lasti: the code unit). */
int prof_py_line_lnotab(const uint8_t *table, size_t len, int firstlineno, uint32_t lasti);
int prof_py_line_310(const uint8_t *table, size_t len, int firstlineno, uint32_t lasti);

/* One code object as read from the interpreter. */
struct prof_pycode {
	char *qualname, *filename;	/* UTF-8, never NULL; 3.8-3.10: the name */
	int firstlineno;
	uint8_t *linetable;
	size_t linetable_len;
	uint8_t lines;			/* PROF_PY_LINES_*: the table's format */
};
/* The line of code unit / offset lasti of c (the format's), -1: none. */
int prof_pycode_line(const struct prof_pycode *c, uint32_t lasti);

/* One Python frame of a thread, innermost first. */
struct prof_pyframe {
	uint32_t code;			/* id for prof_python_code() */
	uint32_t lasti;			/* code unit being executed */
	bool entry;			/* the outermost frame of its eval activation */
};

/*
 * What the sample itself saw of the thread's C stack (a DWARF sample's
 * stack copy, from the user sp up).  3.11 and 3.12 keep each eval
 * activation's _PyCFrame on the C stack: the copy holds the innermost
 * activation's current_frame as it was at the sample, which the chain
 * read later must still start at.
 */
struct prof_pysample {
	uint64_t sp;
	const uint8_t *stack;
	size_t len;
	bool late;		/* seen too long after the sample: not read (-ESTALE) */
	bool blocked;		/* a switch-out sample: read now (no BPF chain) */
};

/* A Python frame record of the BPF reader waiting for its sample (src/python/bpf.c):
 * its thread, kind (0: a CPU sample's, 1: a switch-out's) and time. */
struct prof_py_stamp {
	uint64_t time;
	uint32_t tid, kind;
};
/* Which of the n waiting records w a sample of thread tid at `time` (of
 * that kind) takes: the first at or after its time, up to window ns
 * after it; n when none. */
size_t prof_python_match(const struct prof_py_stamp *w, size_t n, uint32_t tid, uint32_t kind, uint64_t time,
			 uint64_t window);

struct prof_python;
/* A reader; with the BPF frame reader loaded if it can be (root or
 * CAP_BPF + CAP_PERFMON, a build with libbpf) and PROF_PYTHON_NO_BPF is
 * not set in the environment. */
struct prof_python *prof_python_new(void);
/* The BPF program to set on the CPU-sampling events (PERF_EVENT_IOC_SET_BPF)
 * so that they read the frame chains at the sample; -1 when not loaded. */
int prof_python_bpf_prog(const struct prof_python *py);
/* The program that reads a thread's chain at its switch-out (for the
 * off-CPU accountant's switch program to go on to, a tail call); -1 when
 * not loaded.  Once it is installed, prof_python_frames_at_switch: the
 * reader then takes a kept switch-out's chain from the program, and
 * reads it itself only when the program had none. */
int prof_python_switch_prog(const struct prof_python *py);
void prof_python_frames_at_switch(struct prof_python *py);
/* Until when (CLOCK_MONOTONIC ns) the reader wants its samples soon even
 * though the program read their chains: while new code objects appear
 * (imports, exec), which may be freed before a lazy read names them. */
const uint64_t *prof_python_hurry(const struct prof_python *py);
/* A command was launched: if it is an interpreter, its imports come now. */
void prof_python_launched(struct prof_python *py);
/* That program also drops the samples of processes other than pids and
 * what they fork (a recording attached per CPU, prof_bpf_targets_restrict).
 * 0, or -errno (-ENOTSUP: no program). */
int prof_python_only(struct prof_python *py, const pid_t *pids, size_t n);
void prof_python_free(struct prof_python *py);
/* Looks at pids now, on the caller's thread (an attach's targets, before
 * its events are enabled), rather than at their first sample. */
void prof_python_look_at(struct prof_python *py, const pid_t *pids, size_t n);
/* Forgets pid (exec, exit): it is looked at again at its next sample. */
void prof_python_forget(struct prof_python *py, pid_t pid);
/* pid mapped path executable: a process looked at while its loader was
 * still mapping libpython (a sample early in its life) and found native
 * is looked at again. */
void prof_python_mapped(struct prof_python *py, pid_t pid, const char *path);
/* Whether pid was looked at and runs no CPython (false while it waits
 * to be looked at, and after prof_python_forget). */
bool prof_python_is_native(struct prof_python *py, pid_t pid);
/* A code object read earlier; NULL for an unknown id.  Any thread. */
const struct prof_pycode *prof_python_code(struct prof_python *py, uint32_t id);
/* Interpreters found so far, and the version of the last (0x030b...). */
size_t prof_python_found(struct prof_python *py, uint16_t *last_version);
/* Chains read so far by the BPF program at the sample, by the recorder
 * after it, by the recorder from threads still blocked, and by the
 * program at a kept switch-out. */
void prof_python_read_counts(struct prof_python *py, uint64_t *at_sample, uint64_t *after,
			     uint64_t *blocked, uint64_t *at_switch);

/*
 * The record the recorder queues just before a sample of a CPython thread
 * (never written to a file): its Python frames at the time the recorder
 * saw the sample, a status (0 or -errno) and perf's sample_id trailer
 * {pid, tid}{time}{cpu, res} so it merges in time order with the rings.
 */
#define PROF_RECORD_PYSTACK 0x7f10
size_t prof_python_record(struct prof_python *py, uint32_t pid, uint32_t tid, uint64_t time,
			  const struct prof_pysample *smp, void *out, size_t max);
/* The frames of such a record (at most PROF_PY_MAX_FRAMES); the count or
 * the record's negative status, -EINVAL for a malformed one. */
int prof_python_record_parse(const struct perf_event_header *h, uint32_t *pid, uint32_t *tid,
			     uint64_t *time, struct prof_pyframe *out);

struct prof_perf;
struct prof_perf_sample;
/* The PROF_RECORD_PYSTACK record of sample s into out (its size, 0 for
 * none): what the hooks below queue; blocked: a switch-out's sample,
 * whose chain is checked against its stack copy.  For samples that come
 * another way than a perf ring (the off-CPU accountant's). */
size_t prof_python_sample_record(struct prof_python *py, const struct prof_perf_sample *s, bool blocked,
				 void *out, size_t max);
/* Installs the ring pump's hook (PROF_RECORD_PYSTACK records before
 * CPython samples) with py on pf (before its pump starts); returns py.
 * hurry: the pump hastens while the reader asks (prof_python_hurry).
 * Not for a machine-wide recording: there the short-lived interpreters
 * of a busy machine would keep it hastening, and naming their young code
 * cost the recorder 0.3-0.5 s of CPU in 5 s (docs/python.md). */
struct prof_python *prof_python_hook_set(struct prof_perf *pf, struct prof_python *py, bool hurry);
/* The same on an off-CPU event whose samples carry a user stack: the
 * frames a thread blocked in, read by the recorder. */
void prof_python_hook_set_offcpu(struct prof_perf *pf, struct prof_python *py);

#endif
