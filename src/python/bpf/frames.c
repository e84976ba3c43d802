/*
 * frames.c - the BPF program (BPF_PROG_TYPE_PERF_EVENT) that reads a
 * CPython thread's frame chain at the sample itself, in the sampled
 * thread's own context, attached to every CPU-sampling perf event of a
 * recording (src/python/bpf.c loads it).  Built with clang -target bpf
 * into build/gen/pyframes.bpf.o and embedded in prof.
 *
 * The recorder tells it which threads run CPython (map `threads`: tid ->
 * pid, thread state address and the version's offsets); for a sample of
 * such a thread it walks tstate -> current frame -> previous ... and puts
 * each frame's code object and instruction pointer, with the frame's
 * owner and entry bytes, into the ring buffer `frames`, stamped with the
 * sample's clock (bpf_ktime_get_ns: CLOCK_MONOTONIC, perf's use_clockid);
 * a record is as long as its chain.  A second program does the same for
 * the kept switch-outs of the off-CPU accountant (pyframes_switch).
 * Nothing is decoded here: the recorder names code objects later, as it
 * does for frames it reads itself; so that it can tell whether a code
 * object is still the one of the sample (a module's code is freed once
 * it has run, and its memory reused), the program also copies each code
 * object's co_filename and co_qualname pointers.  The program keeps every
 * sample (returns 1) but those of processes that are not targets of a
 * recording attached per CPU (targets.h: 0, dropped before the kernel
 * copies the stack) and those that fell due while prof's switch program
 * ran (owntime.h).  A read that faults (a page not present) ends the
 * chain; the recorder sees a short chain and its check keeps the stack
 * native.
 */
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

#include "frames.h"
#include "../../perf/bpf/targets.h"
#include "../../perf/bpf/owntime.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PYBPF_MAX_THREADS);
	__uint(map_flags, BPF_F_NO_PREALLOC);	/* written by the recorder, a few entries */
	__type(key, __u32);
	__type(value, struct pybpf_thread);
} threads SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, PYBPF_RING_BYTES);
} frames SEC(".maps");

#define FRAME_COPY 128			/* a power of two >= PYBPF_FRAME_READ */

struct scratch {			/* per CPU: a frame, a code key, the record being built */
	__u8 frame[FRAME_COPY];
	__u8 key[PYBPF_KEY_READ];
	struct pybpf_rec rec;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct scratch);
} scratch SEC(".maps");

/* Fields of the frame copy at offsets from the map: masked, so that the
 * verifier sees every access inside the scratch value (the copy is
 * followed by the record; the offsets are all below PYBPF_FRAME_READ). */
static __always_inline __u64 at64(const __u8 *b, __u16 off)
{
	return *(const __u64 *)(b + (off & (FRAME_COPY - 1)));
}

static __always_inline __u8 at8(const __u8 *b, __u16 off)
{
	return b[off & (FRAME_COPY - 1)];
}

/* The walk's state, for walk_frame. */
struct walk {
	const struct pybpf_thread *t;
	struct scratch *sc;
	__u64 frame;			/* the next frame's address; 0: the chain ended */
	__u64 last_code;
	__u32 n;			/* frames read */
};

/* Frame i of the chain into the record, a frame a call of bpf_loop: the
 * verifier checks the callback once, where a bounded loop had it walk
 * all PYBPF_MAX_FRAMES turns at every load, 46,000 instructions for each
 * of the two programs, 27 ms of every recording's start
 * (kernel-notes/offcpu-accountant.md).  1 ends the walk. */
static long walk_frame(__u32 i, void *arg)
{
	struct walk *w = arg;
	const struct pybpf_thread *t = w->t;
	struct pybpf_rec *r = &w->sc->rec;
	__u8 *b = w->sc->frame;
	struct pybpf_frame *f;
	__u64 k = i;

	asm volatile("" : "+r"(k));	/* the verifier needs the bound test on the register used */
	if (k >= PYBPF_MAX_FRAMES || !w->frame || bpf_probe_read_user(b, PYBPF_FRAME_READ, (void *)w->frame))
		return 1;
	f = &r->f[k];
	f->code = at64(b, t->l.frame_code);
	f->instr = at64(b, t->l.frame_instr);
	f->owner = at8(b, t->l.frame_owner);
	f->is_entry = t->l.frame_is_entry ? at8(b, t->l.frame_is_entry) : 0;
	if (k && f->code == w->last_code) {	/* a recursion: the names just read */
		f->named = f[-1].named;
		f->filename = f[-1].filename;
		f->qualname = f[-1].qualname;
	} else {
		f->named = t->l.named && f->code &&
			   !bpf_probe_read_user(w->sc->key, PYBPF_KEY_READ, (void *)(f->code + t->l.code_filename));
		if (f->named) {
			f->filename = *(const __u64 *)w->sc->key;
			f->qualname = *(const __u64 *)(w->sc->key + (t->l.code_qualname & 31));
		}
	}
	w->last_code = f->code;
	w->frame = at64(b, t->l.frame_previous);
	w->n = k + 1;
	return 0;
}

/* Reads the chain of CPython thread tid of process pid into a record of
 * the ring (kind: PYBPF_REC_*); 0 when tid is no thread the recorder
 * named. */
static __always_inline int read_chain(__u32 tid, __u32 pid, __u32 kind)
{
	struct pybpf_thread *t = bpf_map_lookup_elem(&threads, &tid);
	__u64 frame = 0, tid64 = 0;
	__u32 zero = 0, n;
	struct scratch *sc;
	struct pybpf_rec *r;

	if (!t || t->pid != pid)
		return 0;
	/* a map entry outlives its thread: the tid must still be the state's */
	if (bpf_probe_read_user(&tid64, 8, (void *)(t->tstate + t->l.tstate_native_tid)))
		return 0;
	if (t->l.pthread_tid) {	/* 3.8-3.10: the pthread_t's */
		__u32 tid32 = 0;
		if (bpf_probe_read_user(&tid32, 4, (void *)(tid64 + t->l.pthread_tid)))
			return 0;
		tid64 = tid32;
	}
	if (tid64 != tid)
		return 0;
	if (t->l.cframe) {
		__u64 cf = 0;
		if (bpf_probe_read_user(&cf, 8, (void *)(t->tstate + t->l.tstate_frame)) ||
		    bpf_probe_read_user(&frame, 8, (void *)(cf + t->l.cframe_current_frame)))
			return 0;
	} else if (bpf_probe_read_user(&frame, 8, (void *)(t->tstate + t->l.tstate_frame))) {
		return 0;
	}
	if (!(sc = bpf_map_lookup_elem(&scratch, &zero)))
		return 0;
	r = &sc->rec;
	r->time = bpf_ktime_get_ns();
	r->pid = t->pid;
	r->tid = tid;
	r->head = frame;
	r->kind = kind;
	struct walk w = { .t = t, .sc = sc, .frame = frame };
	bpf_loop(PYBPF_MAX_FRAMES, walk_frame, &w, 0);
	n = w.n;
	if (n > PYBPF_MAX_FRAMES)	/* for the verifier: the record's length */
		n = PYBPF_MAX_FRAMES;
	r->n = n;
	/* no wake-up: the recorder takes records when their samples come
	 * (prof_pybpf_take), and a wake-up is an interrupt in the target */
	bpf_ringbuf_output(&frames, r, PYBPF_REC_SIZE(n), BPF_RB_NO_WAKEUP);
	return 0;
}

SEC("perf_event")
int pyframes(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();

	if (!targets_keep((__u32)(id >> 32)) || own_sample(ctx))
		return 0;
	read_chain((__u32)id, (__u32)(id >> 32), PYBPF_REC_SAMPLE);
	return 1;
}

/* The off-CPU accountant's switch program (src/perf/bpf/switches.c)
 * calls this one (a tail call) after it sent a kept switch-out of a
 * CPython process: the chain the thread blocked in, read before it runs
 * again, as a CPU sample's is read at the sample. */
SEC("raw_tracepoint/sched_switch")
int pyframes_switch(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();

	read_chain((__u32)id, (__u32)(id >> 32), PYBPF_REC_SWITCH);
	own_end(own_here());	/* the switch program's window goes on to here */
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
