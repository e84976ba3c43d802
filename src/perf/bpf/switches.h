/*
 * switches.h - what the in-kernel off-CPU accountant (switches.c, the BPF
 * program on the sched_switch raw tracepoint) and the recorder
 * (src/perf/switchacct.c) share: the configuration, the per-thread map
 * entry, and the ring buffer's records.  Fixed-size types only: both
 * sides are compiled apart (clang -target bpf, cc).
 */
#ifndef PROF_SWA_SWITCHES_H
#define PROF_SWA_SWITCHES_H

#include <linux/types.h>

#define SWA_MAX_THREADS 65536
/* The records' ring: the samples it carries (up to 8 KiB of stack each,
 * ~2,000 a second on a busy host) may fill only half of it, so that the
 * intervals always find room; the recorder drains it every batch (at
 * most 100 ms apart).  Sized at load, SWA_RING_PER_CPU a CPU (the rate
 * of switch-outs grows with the CPUs), a power of two within
 * SWA_RING_MIN..SWA_RING_MAX.  No bigger, because its pages are
 * written inside the switch: on the busy host of docs/offcpu.md a kept
 * sample cost a few microseconds more in a 16-MiB ring, whose pages had
 * gone cold by the time the program came round to them again, than in
 * a smaller one; no smaller, because a program's threads all keep their
 * first switch-outs at once, with full copies (100 threads napping lost
 * 443 of them in a 2-MiB ring, none in 8 MiB:
 * kernel-notes/offcpu-accountant.md). */
#define SWA_RING_PER_CPU (4u << 20)
#define SWA_RING_MIN (8u << 20)
#define SWA_RING_MAX (16u << 20)
/* The wake map's room, and its ring's (a page: a wake pending is enough) */
#define SWA_WAKE_PROCESSES 4096
#define SWA_WAKES_BYTES 4096u

/* flags of an entry (its last switch-out) and of a record */
#define SWA_SLEEP 1u		/* class: 0 preempted (runnable), 1 not */
#define SWA_OPEN 2u		/* t_out and sum hold a switch-out */
#define SWA_D 4u		/* switched out in TASK_UNINTERRUPTIBLE (not TASK_NOLOAD) */
#define SWA_SAMPLED 8u		/* its stack sample was kept */
#define SWA_AT_START 16u	/* seeded by the recorder: t_out is the recording's start */
#define SWA_STALE 32u		/* kept by the stale rule (else at random) */
#define SWA_IO 64u		/* D state that the kernel counts as I/O wait (in_iowait) */
#define SWA_KSTACK 128u		/* D state whose kernel stack was sent (SWA_REC_DSTACK) */

/* record kinds */
#define SWA_REC_INTERVAL 1	/* an interval the recorder charges itself: t_out, t_in, flags */
#define SWA_REC_EXIT 2		/* the thread's last switch-out (at t_in): its final totals */
#define SWA_REC_DSTACK 3	/* a D switch-out's kernel stack, sent after the interval it closes */
#define SWA_REC_SAMPLE 4	/* a kept switch-out's stack sample, sent after its D stack */
#define SWA_REC_REPEAT 5	/* a kept switch-out whose stack is its shape's (struct swa_repeat) */

/* Kernel frames kept of a D switch-out: the deepest paths into a wait
 * (a file system's fsync under a page fault) are under 50 here. */
#define SWA_DSTACK_MAX 64

/* What a kept switch-out's sample carries of the user side (conf.user). */
#define SWA_USER_REGS 0		/* the registers only */
#define SWA_USER_STACK 1	/* and a copy of the stack (DWARF unwinding) */
#define SWA_USER_CHAIN 2	/* and the frame-pointer chain */

struct swa_conf {			/* conf[0] */
	__u32 self_tgid;		/* prof itself: never accounted */
	__u32 period;			/* 1 in period switch-outs kept at random */
	__u64 stale_ns;			/* a thread's first in its class after this long is kept, */
	__u64 quiet_ns;			/* always if the thread had no switch-out for this long, */
	__u64 every_ns, burst_ns;	/* else out of a CPU's budget: one every every_ns, burst_ns
					 * of them saved at most (0: no budget) */
	__u32 off_sum_exec, off_on_rq, off_delayed;	/* in task_struct */
	__u32 has_delayed;		/* se.sched_delayed exists (Linux >= 6.12) */
	__u32 off_flags;
	__u32 has_iowait, off_iowait, iowait_bit;	/* the byte and bit of in_iowait */
	__u32 user, stack_bytes;	/* SWA_USER_*; the most stack copied */
	__u32 repeats;			/* check kept switch-outs against their shapes */
	__u32 at_exec;			/* a process that becomes a target at its exec (a
					 * launched command; 0: none) */
	__u64 voluntary_leaf;		/* the kernel frame of a switch-out not preempted in the
					 * kernel (schedule's call of __schedule), once the recorder
					 * has seen it; 0: each sample's kernel frames are taken */
};

/* threads[tid]: its last switch-out, and the totals of the intervals not
 * handed over one by one, per class; the recorder reads the totals and
 * takes differences, the program never resets them. */
struct swa_thread {
	__u64 t_out;			/* when it last left the CPU */
	__u64 sum;			/* its se.sum_exec_runtime then */
	__u64 ns[2], n[2];
	__u64 stale[3];			/* the last switch-out kept by the stale rule: preempted, asleep, D */
	__u64 born;			/* when the entry was made: tells a reused tid */
	__u32 pid, flags;
};

/* budget[0], per CPU: the stale rule's time saved up (what the budget
 * allows is one keep every every_ns). */
struct swa_budget {
	__u64 credit, last;
};

struct swa_rec {
	__u32 kind, tid, pid, flags;
	__u64 t_out, t_in;		/* SWA_REC_INTERVAL; t_in: the time of an EXIT */
	__u64 ns[2], n[2], born;	/* the totals (an EXIT's are final) */
};

/* A D switch-out's kernel stack (sched_switch, innermost first): that of
 * each D wait the kernel does not count as I/O wait, so the recorder can
 * tell the I/O paths it does not count (a journal commit) from the other
 * D waits, and that of each sampled one. */
struct swa_dstack {
	__u32 kind, tid, pid, nr;	/* nr: frames in ips */
	__u64 t;			/* the switch-out's t_out */
	__u64 ips[SWA_DSTACK_MAX];
};

/* A kept switch-out's stack sample, as a perf sample of the switch-out
 * would carry it: the thread's user registers (x86-64 struct pt_regs, in
 * its order) with its stack copy or frame-pointer chain, and the
 * innermost kernel frames, enough to pass the tracepoint's own and
 * __schedule to the function that called it. */
#define SWA_REGS 21
#define SWA_REG_BP 4
#define SWA_REG_ORIG_AX 15
#define SWA_REG_IP 16
#define SWA_REG_SP 19
#define SWA_STACK_MAX 8192
#define SWA_KFRAMES 8
#define SWA_SAMPLE_USER 1u	/* regs hold the user registers (not a kernel thread) */
#define SWA_SAMPLE_CLASS_SHIFT 1	/* flags >> this: the rule's class, 0 preempted, 1 asleep, 2 D */
#define SWA_SAMPLE_TO_BASE 8u	/* the stack was copied to the thread's learned end (bases) */

struct swa_sample {
	__u32 kind, tid, pid, flags;
	__u64 t;			/* the switch-out's t_out */
	__u32 nk, size;			/* frames in k; bytes in data */
	__u64 k[SWA_KFRAMES];
	__u64 regs[SWA_REGS];
	__u8 data[SWA_STACK_MAX];	/* the stack from regs' sp up, or the chain's u64s */
};

/*
 * shapes[tid << 2 | class]: what the recorder's unwind of the thread's
 * last full sample in a class read (include/prof/unwind.h's
 * prof_unwind_reads): the registers the unwind starts from, and the
 * stack words it read, by offset from sp, hashed with swa_mix.  A later
 * kept switch-out of the class with the same registers and the same
 * words there unwinds to the same stack: the program sends a repeat
 * naming the shape's seq instead of the sample (no stack copy into the
 * ring, no kernel frames, no unwind).  Registers other than ip, sp, bp
 * (where the unwind used it) and orig_ax (the system call, which names
 * the kernel's side) are not compared: on x86-64 the CFA rules of
 * compiled code are on sp or bp, and any other register that an unwind
 * restores is read from the stack words.
 */
#define SWA_SHAPE_SLOTS 64
#define SWA_SHAPE_SEED 0x2545f4914f6cdd1dULL

struct swa_shape {
	__u64 ip, sp, bp, orig_ax;
	__u64 hash;			/* of the words at off[0..n), in order */
	__u32 seq, n;			/* the recorder's name of the stack; words */
	__u32 want;			/* bytes of stack to copy to read them all */
	__u32 bp_used;			/* bp is compared: the unwind used the sampled one */
	__u16 off[SWA_SHAPE_SLOTS];
};

/*
 * bases[tid]: where the thread's stack ends, as far as an unwind reads
 * it: sp plus the bytes the recorder's last complete unwind of one of
 * its samples read (the outermost frame is the same in every sample of
 * a thread).  A kept switch-out copies from its sp to there (and
 * SWA_BASE_SLACK more), not stack_bytes, and reserves the smallest ring
 * record that holds it: a record's size, not its copy, is most of what
 * a kept switch-out cost inside the switch on the VM of docs/offcpu.md.
 * born is the thread entry's: a later thread given the tid has none.
 */
#define SWA_BASE_SLACK 64
#define SWA_SMALL_STACK 2048	/* the records' stack sizes below SWA_STACK_MAX */
#define SWA_MEDIUM_STACK 4096

struct swa_base {
	__u64 top, born;
};

struct swa_repeat {
	__u32 kind, tid, pid, flags;	/* flags: the class */
	__u64 t;			/* the switch-out's t_out */
	__u32 seq, pad;
};

/* One step of the shape's hash (both sides compute it). */
static inline __u64 swa_mix(__u64 h, __u64 w)
{
	h = (h ^ w) * 0x9e3779b97f4a7c15ULL;
	return h ^ (h >> 29);
}

#endif
