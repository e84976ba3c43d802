/*
 * frames.h - what the BPF frame reader (frames.c) and the recorder
 * (src/python/bpf.c) share: the map entry of a CPython thread and the
 * ring buffer's record of one sample's raw frame chain.  Fixed-size
 * types only: both sides are compiled apart (clang -target bpf, cc).
 */
#ifndef PROF_PYBPF_FRAMES_H
#define PROF_PYBPF_FRAMES_H

#include <linux/types.h>

#define PYBPF_MAX_THREADS 16384
/* The chains' ring: written at the sample, inside the perf event's
 * overflow or the switch, and emptied by the ring pump's hook within
 * milliseconds, so small: a chain is a few hundred bytes, and a big
 * ring's pages go cold between two passes of the producer (1 MiB against
 * 4: the CPU samples' program 15% faster attached to a 51-thread
 * program, docs/python.md). */
#define PYBPF_RING_BYTES (1u << 20)
#define PYBPF_MAX_FRAMES 160		/* raw frames, shims (3.12+) included */
#define PYBPF_FRAME_READ 112		/* bytes read per frame: covers every field */
#define PYBPF_KEY_READ 32		/* bytes read per code object from co_filename */

/* The offsets the program reads with (struct prof_py_layout's). */
struct pybpf_layout {
	__u16 tstate_frame;		/* cframe (3.11, 3.12) or current_frame (3.13+) */
	__u16 tstate_native_tid;		/* or the pthread_t (3.8-3.10) */
	__u16 pthread_tid;		/* != 0: the tid is at this offset of the pthread_t */
	__u16 cframe_current_frame;
	__u16 frame_code, frame_previous, frame_instr, frame_is_entry, frame_owner;
	__u16 code_filename;		/* PyCodeObject.co_filename */
	__u8 code_qualname;		/* co_qualname - co_filename, < PYBPF_KEY_READ - 8 */
	__u8 cframe;			/* tstate_frame points to a _PyCFrame */
	__u8 named;			/* read the two name pointers of each code object */
	__u8 pad[1];
};

struct pybpf_thread {			/* threads[tid] */
	__u32 pid;
	__u32 pad;
	__u64 tstate;			/* PyThreadState address */
	struct pybpf_layout l;
};

struct pybpf_frame {
	__u64 code, instr;
	__u64 filename, qualname;	/* the code object's, at the sample (named) */
	__u8 owner, is_entry, named;
	__u8 pad[5];
};

#define PYBPF_REC_SAMPLE 0		/* a CPU sample's (pyframes) */
#define PYBPF_REC_SWITCH 1		/* a kept switch-out's (pyframes_switch) */

struct pybpf_rec {			/* one sample of a CPython thread */
	__u64 time;			/* bpf_ktime_get_ns at the sample */
	__u32 pid, tid;
	__u64 head;			/* the chain's first frame */
	__u32 n;
	__u32 kind;			/* PYBPF_REC_*: whose sample it is */
	struct pybpf_frame f[PYBPF_MAX_FRAMES];
};
#define PYBPF_REC_SIZE(n) (__builtin_offsetof(struct pybpf_rec, f) + (n) * sizeof(struct pybpf_frame))

#endif
