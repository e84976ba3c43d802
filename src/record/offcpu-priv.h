/*
 * offcpu-priv.h - what the off-CPU recorder's two files share: offcpu.c
 * (the events, the pairing of switch records with samples, the
 * estimator and the window) and offcpu_swa.c (the in-kernel
 * accountant's totals and records): the tuning constants, the per-thread
 * estimator state and struct prof_offcpu.  Not for other modules: their
 * interface is include/prof/offcpu.h.
 */
#ifndef PROF_RECORD_OFFCPU_PRIV_H
#define PROF_RECORD_OFFCPU_PRIV_H

#include "prof/offcpu.h"
#include "prof/python.h"
#include "prof/switchpair.h"

/* 32-byte records, two per switch: 1 MiB per CPU holds 16k switches,
 * 160 ms at 100k switches/s on one CPU, time for a starved pump thread to
 * run (it is woken at a quarter).  256 KiB lost 0.2% of the records with
 * four pingpong pairs (100k switches/s) on a loaded 2-vCPU machine. */
#define OFFCPU_SWITCH_RING_PAGES 256

/* The user stack copied per switch sample.  Blocking stacks are shallow
 * next to CPU ones: PostgreSQL backends under pgbench, 8 KiB unwind
 * 99.9% of switch-out stacks to their outermost frame (docs/resources.md),
 * and the kernel reserves the full copy in the ring, so a smaller copy
 * fits four times more samples than the 32 KiB of the CPU event. */
#define OFFCPU_STACK_SIZE 8192

/* A thread's switch-out is kept by the stale rule this long after the
 * last: at most 50 samples a second per thread. */
#define OFFCPU_STALE_NS 20000000ULL

/* The accountant's stale rule keeps such a switch-out always where its
 * thread had no switch-out for as long (a thread that switches at most 50
 * times a second has a stack for each wait, as under the filter's rule),
 * and else out of a budget of OFFCPU_STALE_PER_CPU a second per CPU,
 * saved up for a second at most: what a thread that switches often is
 * left with besides its random samples.  Each is a sample made inside
 * the switch, 8-11 us here and ~4 more with a Python chain read
 * (docs/offcpu.md). */
#define OFFCPU_STALE_PER_CPU 250

/* A thread's intervals are shared among its samples per window: at
 * least this long, and longer (up to the max) while the window's weighted
 * total has an estimated squared coefficient of variation above the
 * bound, i.e. while a few heavy samples make it up.  The ratio's bias is
 * of that order: a long wait sampled once a second, 75% of a thread's
 * time, came out 31 points low over 1-s windows (tests/unit/offcpu.c). */
#define OFFCPU_WINDOW_NS 1000000000ULL
#define OFFCPU_WINDOW_MAX_NS 10000000000ULL
#define OFFCPU_WINDOW_CV2 0.01

/* The D ring's filter: switch-outs in TASK_UNINTERRUPTIBLE. */
#define D_FILTER "prev_state & 2"

/* Switch-outs remembered per thread, for a filtered sample that comes
 * after its switch record (the rings' merge is by time, but a record
 * timed before a ring's mark can still be on its way into the ring). */
#define OUTS_KEPT 4
#define OUT_PREEMPT (1ULL << 63)

/* A thread's D kernel stacks kept for intervals not yet charged (they come
 * at once, the records wait for their samples): as many as it blocks in D
 * in a drain (an interval charged drops older ones, whose records were lost). */
#define KSTACKS_KEPT 4096

/* The stacks a thread named for the accountant's repeats, kept per class:
 * a repeat comes after the samples that named newer ones (the program
 * checks against the shape it has while the recorder learns the next). */
#define SHAPES_KEPT 16

/* How often the in-kernel accountant's totals are read: often enough
 * that a window (OFFCPU_WINDOW_NS) sees several reads, rarely enough that
 * reading a big host's thread map costs little. */
#define OFFCPU_SCAN_NS 200000000ULL
/* How often the windows are looked at for one that has run its course:
 * each look weighs every open window's samples, and batches may end
 * thousands of times a second (a CPython process's kept stacks wake the
 * recorder); a window then closes up to this much after its time. */
#define OFFCPU_SETTLE_NS 20000000ULL

/* The estimator's classes of off-CPU time, each shared among its own
 * sampled intervals: preempted, asleep, and the two kinds of D state
 * (told apart, with the in-kernel accountant, by the kernel's in_iowait
 * or each other D interval's own kernel stack: exact per thread). */
enum { C_PREEMPT, C_SLEEP, C_UNINT, C_IOWAIT, NCLASSES };

/* What kept a switch-out's sample, lowest rank first (the tag of its
 * prof_switch_sample). */
enum kind { K_RANDOM, K_STALE, K_D, K_OWN };

/* With the in-kernel accountant, a switch-out sample waits in its
 * thread's est for the record of its interval. */
struct waiting_sample {
	struct prof_switch_sample s;
	bool filtered;			/* from the filtered ring: its rule comes with the record */
};

/* A D switch-out's kernel stack from the accountant, waiting for its
 * interval's record. */
struct kstack {
	uint64_t t;			/* taken just before the switch-out's t_out */
	uint32_t node;
	uint8_t metric;			/* I/O wait or other D, by its frames */
};

/* One off-CPU interval: where a D-state class's shares are laid (lay_shares). */
struct span {
	uint64_t t_out, ns;
};

/* One thread: its window, and the samples of its last switch-out. */
struct est {
	struct prof_offcpu_stale stale;	/* the filter's stale rule, replayed */
	bool pend_valid;
	struct prof_switch_sample pend;	/* a filtered sample waiting for its switch record */
	uint64_t outs[OUTS_KEPT];	/* the newest switch-outs' times, | 1 << 63: preempted */
	uint32_t nouts;			/* pushed so far (mod OUTS_KEPT: the next slot) */
	uint64_t start[NCLASSES];	/* t_out of the window's first interval, by class; 0 none */
	uint64_t exact[NCLASSES];	/* every interval's ns, by class */
	uint32_t thread;		/* of the newest interval; PROF_NONE: look up pid, tid */
	uint32_t pid, tid;		/* of the kernel's totals, looked up when charged */
	VEC(struct prof_offcpu_part) s[NCLASSES];	/* the sampled intervals, by class */
	VEC(struct span) d[NCLASSES];	/* every D interval of the window (D classes only) */
	uint64_t last_out;		/* the newest switch-out record */
	uint64_t fed;			/* time of the newest sample fed to the pairing */
	uint8_t fed_kind;
	uint64_t k_born, k_ns[2], k_n[2];	/* the kernel's totals taken so far */
	uint64_t k_last_out;		/* the switch-out of its last interval handed over */
	VEC(struct waiting_sample) waiting;
	VEC(struct kstack) kstacks;	/* its D switch-outs' kernel stacks, not yet charged */
	struct { uint32_t seq, node; } shapes[3][SHAPES_KEPT];	/* named stacks, by the rule's class */
	uint8_t shapes_next[3];
	uint64_t base, base_born;	/* its stack's end as given to the accountant (0: none) */
	bool py_wakes;			/* its process is in the switch program's wake map */
};

struct io_interval {
	uint64_t start, end;
	uint32_t pid;
};

struct prof_offcpu {
	enum prof_offcpu_mode mode;
	uint32_t period;		/* sampled: 1 in this many switch-outs at random */
	struct prof_perf pf;		/* sched_switch, every switch-out (all, state) */
	struct prof_perf st;		/* sampled: the filtered ring (BPF), else the tracepoint 1 in period;
					 * with the accountant not opened: its samples' layout and tag */
	struct prof_perf dd;		/* sampled: sched_switch in D state */
	struct prof_perf sw;		/* dummy event, context_switch=1: the time */
	int prog;			/* the filter of st; -1 none */
	bool classed;			/* its stale rule is per class, not per thread */
	struct prof_perf_event_desc desc;
	uint32_t state_off, state_size;	/* of prev_state in the raw data */
	struct prof_profile *p;		/* reads the kernel frames; gets [stack lost] */
	struct prof_replay_sink sink;	/* where charged intervals go */
	struct prof_switchpair *sp;
	uint32_t lost_node, unsampled_node;
	struct u64map est_by_tid;	/* tid -> struct est * (sampled mode) */
	uint64_t newest;		/* the newest interval end seen */
	VEC(struct io_interval) io;
	struct prof_offcpu_stats stats;
	struct prof_replay *rp;		/* the threads of at-start intervals */
	VEC(pid_t) opened;		/* tids opened before the window began */
	struct u64map at_start;		/* tid -> node << 8 | metric, as /proc showed it at the start */
	uint32_t at_start_frame;
	uint64_t end;			/* the window's end (disable), 0 before */
	struct prof_bpf_swa *swa;	/* the in-kernel accountant, or NULL: the time ring */
	bool per_cpu;			/* events per CPU: the accountant's targets are set apart */
	struct prof_python *py;		/* reads its samples' Python frames, or NULL */
	bool py_at_switch;		/* the switch program reads their frames (then[0]) */
	uint64_t horizon;		/* the newest sample seen: records up to it are handled */
	uint64_t scanned;		/* when its totals were last read */
	uint64_t settled;		/* when the windows were last looked at */
	uint64_t window_max;		/* OFFCPU_WINDOW_MAX_NS; a live view's: OFFCPU_WINDOW_NS */
	VEC(struct prof_bpf_swa_thread) held;	/* its records and samples newer than the horizon */
	struct prof_kstacks *kstacks;	/* names the kernel stacks of its D switch-outs */
	uint32_t shape_seq;		/* the last stack named for repeats */
	bool leaf_given;		/* the accountant has the kernel frame of a blocked thread */
};

static inline enum prof_metric prof_offcpu_with_io(enum prof_metric m, bool io)
{
	return m == PROF_M_UNINT_NS && io ? PROF_M_IOWAIT_NS : m;
}


/* offcpu.c */
struct est *prof_offcpu_est(struct prof_offcpu *oc, uint32_t tid);
void prof_offcpu_est_exit(struct prof_offcpu *oc, uint32_t tid);
/* Charges interval iv (the switchpair's callback): to sample s's stack,
 * or through the estimator; metric m. */
void prof_offcpu_charge(void *arg, const struct prof_switch_interval *iv, const struct prof_switch_sample *s,
			enum prof_metric m);

/* offcpu_swa.c: the accountant's records (and its totals every
 * OFFCPU_SCAN_NS), and at the end every record, the final totals and the
 * intervals still open. */
void prof_offcpu_poll_accountant(struct prof_offcpu *oc);
void prof_offcpu_finish_accountant(struct prof_offcpu *oc);
/* Frees the records and samples still held (a recording cut short). */
void prof_offcpu_free_held(struct prof_offcpu *oc);

#endif
