/*
 * perf.h - the kernel side of `prof record`: perf_event_attr setup for one
 * sampling configuration, per-CPU events for a set of tasks feeding one
 * ring buffer per CPU, a poll loop helper, and decoding of the records the
 * kernel writes (SAMPLE, MMAP2, COMM, FORK, EXIT, LOST, LOST_SAMPLES).
 * It knows nothing about symbols or files: the replay engine
 * (src/replay/) consumes the decoded records.  Facts about this machine's kernel: kernel-notes/.
 */
#ifndef PROF_PERF_H
#define PROF_PERF_H

#include "prof/util.h"
#include <asm/perf_regs.h>
#include <linux/perf_event.h>
#include <sys/types.h>

enum prof_callgraph {
	PROF_CG_DWARF,		/* user regs + stack copy, unwound by us */
	PROF_CG_FP,		/* the kernel walks frame pointers */
	PROF_CG_NONE,		/* only the sampled ip */
};
int prof_callgraph_parse(const char *name, enum prof_callgraph *cg);	/* 0 / -EINVAL */
const char *prof_callgraph_name(enum prof_callgraph cg);

struct prof_perf_event_desc {
	const char *name;	/* "cpu-clock" */
	uint32_t type;		/* PERF_TYPE_SOFTWARE / PERF_TYPE_HARDWARE */
	uint64_t config;
	bool is_clock;		/* period is in nanoseconds */
};
/* NULL when the name is unknown. */
const struct prof_perf_event_desc *prof_perf_event_find(const char *name);
const char *prof_perf_event_names(void);	/* "cpu-clock, task-clock, ..." for usage */

/*
 * The tracefs root holding events/ ("/sys/kernel/tracing" or the debugfs
 * copy).  When neither is mounted, mounts tracefs at /sys/kernel/tracing
 * (needs CAP_SYS_ADMIN; tried once per process) and sets *mounted_now.
 * NULL with errno set (EACCES: mounted but root-only; EPERM: cannot mount).
 */
const char *prof_tracefs_root(bool *mounted_now);

/*
 * A uprobe at offset in file, defined in tracefs as GROUP/NAME (a return
 * probe when ret): *id is the tracepoint id for PERF_TYPE_TRACEPOINT
 * events (src/perf/uprobe.c).  0 or -errno (EACCES: not root).  Remove it
 * once no event uses it (-EBUSY before).
 */
int prof_uprobe_define(const char *group, const char *name, const char *file, uint64_t offset,
		       bool ret, uint64_t *id);
int prof_uprobe_remove(const char *group, const char *name);
/* Removes GROUP's definitions named by a prof that is gone (killed before
 * it removed them); how many. */
int prof_uprobe_remove_stale(const char *group);
/* The offset in file, at or a few instructions past the function entry
 * at offset, where a probe costs least (an instruction the kernel
 * emulates) and the arguments and stack are still as at the entry. */
uint64_t prof_uprobe_fast_offset(const char *file, uint64_t offset);

/* The user registers a DWARF-unwound sample carries (sample_regs_user):
 * what the unwinders (include/prof/unwind.h) and the heap sampler's
 * argument reads need. */
#define PROF_PERF_REGS_USER_MASK                                                      \
	((1ULL << PERF_REG_X86_AX) | (1ULL << PERF_REG_X86_BX) | (1ULL << PERF_REG_X86_CX) | \
	 (1ULL << PERF_REG_X86_DX) | (1ULL << PERF_REG_X86_SI) | (1ULL << PERF_REG_X86_DI) | \
	 (1ULL << PERF_REG_X86_BP) | (1ULL << PERF_REG_X86_SP) | (1ULL << PERF_REG_X86_IP) | \
	 (1ULL << PERF_REG_X86_R8) | (1ULL << PERF_REG_X86_R9) | (1ULL << PERF_REG_X86_R10) | \
	 (1ULL << PERF_REG_X86_R11) | (1ULL << PERF_REG_X86_R12) | (1ULL << PERF_REG_X86_R13) | \
	 (1ULL << PERF_REG_X86_R14) | (1ULL << PERF_REG_X86_R15))

#define PROF_STACK_SIZE_DEFAULT 32768
/* The kernel stores a sample's size in a u16 and rounds the stack size to 8. */
#define PROF_STACK_SIZE_MAX 65000	/* leaves room for header, regs, callchain */
#define PROF_PERF_SCRATCH 65536	/* one record is at most 64 KiB (u16 size) */
/*
 * Default data pages per CPU: a 32 MiB budget shared by the CPUs, at
 * most 16 MiB each, for root at least 2 MiB (4096 pages on this 2-CPU VM:
 * with 32 KiB stack copies that is ~500 samples, enough to ride out the
 * first DWARF load of a big library on a busy machine).  Non-root: what
 * the locked-memory limits allow, split evenly.  Power of two.
 */
uint32_t prof_perf_default_ring_pages(void);
/* The kernel's page size (sysconf), the unit of ring_pages. */
size_t prof_perf_page_size(void);

struct prof_perf_config {
	const struct prof_perf_event_desc *event;
	uint64_t freq;			/* Hz */
	uint64_t period;		/* -c: events per sample; 0: use freq */
	enum prof_callgraph callgraph;
	uint32_t stack_size;		/* dwarf: bytes of user stack per sample */
	uint32_t ring_pages;		/* data pages per CPU, power of two */
	bool enable_on_exec;		/* launch mode: start counting at exec */
	bool ring_shrink_ok;		/* halve ring_pages on a mlock refusal */
	bool no_inherit;		/* --no-inherit: children and new threads not followed */
};

struct prof_perf_ring {
	int fd;				/* the event that owns the mmap */
	struct perf_event_mmap_page *meta;
	uint8_t *data;
	uint64_t size;			/* data area bytes (power of two) */
	size_t map_len;
};

/* Design notes: rings[cpu] is created by the first event opened on that
 * CPU; later events on the same CPU (other threads in attach mode) are
 * redirected into it with PERF_EVENT_IOC_SET_OUTPUT, so the reader polls
 * exactly ncpus fds.  exclude_kernel starts at 0 and flips to 1 at the
 * first EACCES/EPERM (warned once); all later events use the flipped attr. */
struct prof_perf {
	struct prof_perf_config cfg;
	struct perf_event_attr attr;
	int ncpus;
	struct prof_perf_ring *rings;	/* [ncpus], fd -1 until first event */
	VEC(int) fds;			/* every event fd, for enable/close */
	uint8_t *scratch;		/* per CPU: one wrapped record */
	bool kernel_excluded;
	bool ring_shrunk;		/* cfg.ring_pages was lowered to fit */
	uint64_t nr_regs;		/* popcount of sample_regs_user */
	struct prof_pump *pump;		/* NULL: prof_perf_drain reads the rings itself */
	/*
	 * Called for every record the ring pump moves, on the pump's thread,
	 * as soon as it leaves the kernel ring: it may write up to max bytes
	 * of records of its own (whole records, sizes multiples of 8, with
	 * the sample_id trailer ring.c orders by) to out, queued right before
	 * the record; returns their size.  While it adds records, and unless
	 * hook_lazy, the pump looks at the rings every millisecond instead of
	 * at their watermark, so that what the hook reads is close to the
	 * sample's time.  Set before prof_perf_pump_start; NULL: none.
	 */
	size_t (*hook)(void *arg, const struct prof_perf *pf, const struct perf_event_header *h,
		       void *out, size_t max);
	void *hook_arg;
	bool hook_lazy;			/* the hook's records do not depend on haste */
	/* A lazy hook's wish for haste after all: the pump looks every
	 * millisecond while CLOCK_MONOTONIC is below *hook_hurry (read
	 * relaxed, written by the hook).  NULL: never. */
	const uint64_t *hook_hurry;
	/*
	 * Pacing a producer that can wait (record/preload/flow.h): before each
	 * pass over the rings the pump reads *pace_issued, and after a pass
	 * that emptied every ring it stores that value in *pace_settled; it
	 * looks at the rings at least every 10 ms.  Set before
	 * prof_perf_pump_start; NULL: none.
	 */
	uint64_t *pace_issued, *pace_settled;
	/*
	 * Called on the pump's thread after each of its passes (at least every
	 * 50 ms): another ring that must be emptied while the main thread is
	 * busy (the off-CPU accountant's BPF ring, prof_bpf_swa_pull).  Set
	 * before prof_perf_pump_start; NULL: none.
	 */
	void (*pump_also)(void *arg);
	void *pump_also_arg;
	int bpf_prog;			/* > 0: a BPF program set on each event as it opens */
	const char *open_filter;	/* tracepoint filter set on each event as it opens */
	int open_bpf;			/* 1 + a sample filter program set on each event as it opens; 0 none */
	struct prof_bpf_targets *targets;	/* the filter in bpf_prog, closed with the events */
	int also_fd;			/* 1 + an fd whose readiness also ends prof_perf_poll's wait; 0 none */
};

/* Fills attr from cfg; no syscalls.  0 / -EINVAL. */
int prof_perf_init(struct prof_perf *pf, const struct prof_perf_config *cfg);
/*
 * Opens one event per CPU for task tid (inherit=1).  Returns 0; -ESRCH when
 * the task is gone (silent); otherwise a negative errno after printing one
 * line that says why and how to fix it (unsupported event, permissions with
 * the paranoid level, mlock limit).
 */
int prof_perf_open_task(struct prof_perf *pf, pid_t tid);
/*
 * Opens one system-wide event (every task, pid -1) on cpu, its ring being
 * that CPU's.  0; -ENODEV (silent) for an offline CPU; otherwise a
 * negative errno after one line saying why (the permission it takes, with
 * the paranoid level; an unknown CPU).
 */
int prof_perf_open_cpu(struct prof_perf *pf, int cpu);
/* A tracepoint filter (PERF_EVENT_IOC_SET_FILTER) on every fd; 0 / -errno. */
int prof_perf_set_filter(struct prof_perf *pf, const char *filter);

/*
 * Where the members `paths` ("on_rq", "se.sched_delayed") of kernel
 * struct `type` live in the running kernel, from its BTF
 * (/sys/kernel/btf/vmlinux; src/perf/btf.c): out[i] for paths[i], found
 * false when there is no such member (a bitfield only within one byte).  0, or -errno when the
 * BTF cannot be read (then nothing is found).
 */
struct prof_btf_field {
	uint32_t off, size;
	uint8_t bit, width;	/* a bitfield: its first bit and width in the byte at off (size 1) */
	bool found;
};
int prof_btf_members(const char *type, const char *const *paths, size_t n, struct prof_btf_field *out);
/* The same for members of several structs, with one reading of the BTF. */
struct prof_btf_query {
	const char *type, *path;
};
int prof_btf_fields(const struct prof_btf_query *q, size_t n, struct prof_btf_field *out);

/*
 * The off-CPU sample filter for the context-switches software event
 * (src/perf/bpf_filter.c): a BPF program run at each switch-out, keeping
 * the sample or dropping it before the kernel makes it.  It keeps a
 * switch-out when the thread's last one kept this way ("stale") is at
 * least tau ns old (the thread's first included), per class (preempted:
 * the thread is still runnable, as PERF_RECORD_SWITCH's preempt flag says;
 * or not) when `task` gives the fields that tell, else per thread; and
 * otherwise with probability 1/n.  The idle task and the threads of
 * process `self` are always dropped.  Returns the program's fd, or -errno
 * (no BPF; a kernel older than 6.10 where the event's program cannot drop
 * samples is found when it is attached: prof_perf_open_* fail with
 * EINVAL/EOPNOTSUPP).
 */
struct prof_bpf_task_layout {
	struct prof_btf_field on_rq;		/* task_struct.on_rq */
	struct prof_btf_field sched_delayed;	/* task_struct.se.sched_delayed (6.12 and later) */
	struct prof_btf_field sum_exec;		/* task_struct.se.sum_exec_runtime */
	struct prof_btf_field to_load;		/* task_struct.sched_contributes_to_load (bitfield) */
	struct prof_btf_field nvcsw;		/* task_struct.nvcsw */
	struct prof_btf_field flags;		/* task_struct.flags (PF_*) */
	struct prof_btf_field tgid;		/* task_struct.tgid */
	struct prof_btf_field in_iowait;	/* task_struct.in_iowait (bitfield) */
};
int prof_bpf_switch_filter(uint32_t self, uint32_t n, uint64_t tau, const struct prof_bpf_task_layout *task);
/* The task layout the filter reads (from BTF); false if it cannot tell
 * the classes apart (no BTF, or no task_struct.on_rq). */
bool prof_bpf_task_layout(struct prof_bpf_task_layout *task);

/*
 * The in-kernel off-CPU accountant (src/perf/switchacct.c, its programs
 * src/perf/bpf/switches.c) on the sched_switch raw tracepoint, from
 * prof_bpf_swa_start to prof_bpf_swa_stop: the rules of
 * prof_bpf_switch_filter (the thread's first switch-out in its class
 * after tau ns, else 1 in n; the idle task and process `self` dropped)
 * choose the switch-outs whose stack sample it makes itself (the user
 * registers, a stack copy of up to stack_bytes or the frame-pointer
 * chain, the innermost kernel frames); it also times every off-CPU
 * interval of the threads it runs for (wall time since the switch-out
 * before, less the CPU time run since) and adds it to per-thread totals
 * by class (0 preempted, 1 not), read with prof_bpf_swa_scan.  Intervals
 * that must be seen one by one come as records (prof_bpf_swa_drain):
 * those whose switch-out was sampled (PROF_SWA_SAMPLED, with
 * PROF_SWA_STALE for the rule), those in D state, and the first one of a
 * thread seeded as off the CPU at the start; a thread's exit, with its
 * final totals; and after the interval record before them, a D-state
 * switch-out's kernel stack (kstack: of each one that the kernel does not
 * count as I/O wait, PROF_SWA_IO, and of each sampled one) and a kept
 * switch-out's sample (sample).  Needs libbpf at build time and BTF,
 * CAP_BPF and CAP_PERFMON at run time: prof_bpf_swa_open fails (NULL,
 * why filled) without them.
 */
enum {
	PROF_SWA_SLEEP = 1,		/* class: not runnable (else preempted) */
	PROF_SWA_OPEN = 2,		/* t_out and sum hold a switch-out */
	PROF_SWA_D = 4,			/* switched out in D state */
	PROF_SWA_SAMPLED = 8,		/* the switch-out's sample was kept */
	PROF_SWA_AT_START = 16,		/* seeded: t_out is the recording's start */
	PROF_SWA_STALE = 32,		/* kept by the stale rule (else at random) */
	PROF_SWA_IO = 64,		/* D state the kernel counts as I/O wait (in_iowait) */
	PROF_SWA_KSTACK = 128,		/* D state whose kernel stack came before it (kstack) */
};
struct prof_bpf_swa_thread {	/* a map entry, or a record */
	uint32_t tid, pid, flags;
	bool exit;			/* a record: the thread's last switch-out, at t_in */
	uint64_t t_out, t_in;		/* the interval (a map entry: its last switch-out) */
	uint64_t sum;			/* a map entry: its CPU time (ns) at t_out */
	uint64_t ns[2], n[2];		/* totals of the intervals not handed over, by class */
	uint64_t born;			/* when the kernel made the entry: tells a reused tid */
	const uint64_t *kstack;		/* a D switch-out's kernel stack, taken at t_out (the
					 * callback's to copy); NULL in other records */
	uint32_t nkstack;
	const struct prof_bpf_swa_sample *sample;	/* a kept switch-out's sample, at t_out */
	bool repeat;			/* a kept switch-out at t_out whose stack is that of
					 * the shape the recorder named seq (prof_bpf_swa_learn) */
	uint8_t cls;			/* a repeat's class: 0 preempted, 1 asleep, 2 D */
	uint32_t seq;
};
/* A kept switch-out's stack sample, as the record has it (the callback's
 * to copy). */
struct prof_bpf_swa_sample {
	bool user;			/* uregs hold the user registers (not a kernel thread) */
	uint64_t uregs[PERF_REG_X86_64_MAX];	/* by perf_regs number */
	const uint8_t *stack;		/* the stack from the user sp up (PROF_SWA_USER_STACK) */
	uint32_t stack_size;
	const uint64_t *chain;		/* the user frame-pointer chain (PROF_SWA_USER_CHAIN) */
	uint32_t nchain;
	const uint64_t *kstack;		/* the innermost kernel frames (the tracepoint's first) */
	uint32_t nkstack;
	uint64_t orig_ax;		/* the system call (-1: none) */
	uint8_t cls;			/* the class its rule kept it in: 0 preempted, 1 asleep, 2 D */
	bool to_base;			/* the stack was copied to its learned end only (prof_bpf_swa_set_base) */
};
enum { PROF_SWA_USER_REGS, PROF_SWA_USER_STACK, PROF_SWA_USER_CHAIN };
typedef void (*prof_bpf_swa_fn)(void *arg, const struct prof_bpf_swa_thread *t);
/*
 * The target processes of a recording attached per CPU, in the kernel
 * (src/perf/bpftargets.c, src/perf/bpf/targets.h): their samples and
 * switch-outs are kept, and those of processes they fork from now on (a
 * BPF program on sched_process_fork adds each child before it runs); the
 * other processes' are dropped before the kernel makes the sample.
 * prof_bpf_targets_restrict does it for a loaded BPF object that includes
 * targets.h (*fork_link: to destroy with it); prof_bpf_targets_open loads
 * the plain filter, for events with no other program.  -ENOTSUP / NULL
 * without libbpf or task_struct.tgid in the kernel's BTF.
 */
struct bpf_object;
struct bpf_link;
struct prof_bpf_targets;
int prof_bpf_targets_restrict(struct bpf_object *obj, struct bpf_link **fork_link, const pid_t *pids,
			      size_t n);
struct prof_bpf_targets *prof_bpf_targets_open(const pid_t *pids, size_t n);
/* The plain program of an open filter keeps pids (and what they fork)
 * only from now on; opened with n = 0 it kept every process. */
int prof_bpf_targets_only(struct prof_bpf_targets *t, const pid_t *pids, size_t n);
int prof_bpf_targets_prog(const struct prof_bpf_targets *t);
void prof_bpf_targets_free(struct prof_bpf_targets *t);

/*
 * prof's own time inside the context switch (src/perf/owntime.c,
 * src/perf/bpf/owntime.h): the off-CPU accountant's switch program times
 * each of its runs, with interrupts off, and the programs on the CPU
 * events drop a sample that fell due inside one (it would land in the
 * next thread's finish_task_switch).  prof_bpf_own_share gives a BPF
 * object, before its load, the one map of the process, if the object
 * has it; 0 or -errno.  prof_bpf_own_restart zeroes the counts (a new
 * accountant), and turns the sample test on where test is set (the CPU
 * events are cpu-clock or task-clock, whose hrtimer holds the due time)
 * and the kernel's BTF allows it (else -ENOTSUP, the test off).
 * prof_bpf_own_read sums the counts over the CPUs.
 */
struct prof_bpf_own {
	uint64_t taken;		/* CPU samples dropped: they fell due in a window */
	uint64_t spent_ns, runs;	/* the windows' time, and their number */
	bool tested;		/* the kernel's BTF allowed the test (else nothing is dropped) */
};
int prof_bpf_own_share(struct bpf_object *obj);
int prof_bpf_own_restart(bool test);
void prof_bpf_own_read(struct prof_bpf_own *out);

struct prof_bpf_swa;
/* user: PROF_SWA_USER_*, what a sample carries of the user side. */
struct prof_bpf_swa *prof_bpf_swa_open(const struct prof_bpf_task_layout *task, uint32_t self, uint32_t n,
				       uint64_t tau, uint32_t stale_per_cpu, int user, uint32_t stack_bytes, char *why, size_t len);
/* Attaches the programs to sched_switch (accounting starts), or detaches
 * them; 0 or -errno. */
int prof_bpf_swa_start(struct prof_bpf_swa *a);
void prof_bpf_swa_stop(struct prof_bpf_swa *a);
/* From now on only the processes pids and what they fork are accounted
 * and sampled (prof_bpf_targets_restrict): attached with events per CPU.
 * 0 or -errno. */
int prof_bpf_swa_only(struct prof_bpf_swa *a, const pid_t *pids, size_t n);
/* The same for process pid (a launched command) from its exec on, as its
 * perf events (enable_on_exec); nothing before.  0 or -errno. */
int prof_bpf_swa_at_exec(struct prof_bpf_swa *a, pid_t pid);
/* tid (of pid) is off the CPU since start, having run sum ns of CPU by
 * then: its first interval is handed over as PROF_SWA_AT_START. */
int prof_bpf_swa_seed(struct prof_bpf_swa *a, pid_t tid, pid_t pid, uint64_t start, uint64_t sum);
/* Drops tid's entry (a seeded thread found gone). */
void prof_bpf_swa_forget(struct prof_bpf_swa *a, pid_t tid);
void prof_bpf_swa_drain(struct prof_bpf_swa *a, prof_bpf_swa_fn fn, void *arg);
/* Moves the records waiting in the accountant's ring into memory, where
 * the next prof_bpf_swa_drain finds them; safe on another thread than the
 * drain's (the CPU ring's pump: struct prof_perf's pump_also).  arg: the
 * struct prof_bpf_swa. */
void prof_bpf_swa_pull(void *arg);
void prof_bpf_swa_scan(struct prof_bpf_swa *a, prof_bpf_swa_fn fn, void *arg);
struct prof_bpf_swa_counts {
	uint64_t untracked;		/* threads the map had no room for */
	uint64_t lost;			/* records the ring had no room for */
	uint64_t no_kstack;		/* D switch-outs whose kernel stack was not taken */
	uint64_t unsent;		/* samples not made, the ring being half full */
	uint64_t stale_budget;		/* not losses: stale keeps the CPUs' budget paid for, */
	uint64_t stale_refused;		/* and switch-outs due one that it refused */
	struct prof_bpf_own own;	/* its time in recorded threads' switch-outs, and the
					 * CPU samples that fell due meanwhile */
};
void prof_bpf_swa_counts(const struct prof_bpf_swa *a, struct prof_bpf_swa_counts *out);
void prof_bpf_swa_free(struct prof_bpf_swa *a);
/*
 * Repeats (src/perf/bpf/switches.h's shapes).  Once the recorder has
 * unwound tid's sample smp from its stack copy, reading the words at the
 * n offsets off from sp (and the sampled bp if bp_used), it names that
 * stack seq: a later kept switch-out of tid in smp's class, with the same
 * ip, sp, system call (and bp) and the same words there, comes as a
 * repeat of seq (no copy).  Learned shapes are written to the kernel
 * together by prof_bpf_swa_flush.
 * Whether the program checks for repeats (PROF_SWA_USER_STACK, and
 * PROF_OFFCPU_NO_REPEATS not set in the environment); 0 or -errno.
 */
bool prof_bpf_swa_repeats(const struct prof_bpf_swa *a);
/* ip is the kernel frame that called __schedule in a sample of a thread
 * that blocked (schedule()): from now on such samples carry it alone,
 * unwound no more.  -ENOTSUP on a PREEMPT_RT kernel, whose sleeping locks
 * block through schedule_rtlock. */
int prof_bpf_swa_set_voluntary_leaf(struct prof_bpf_swa *a, uint64_t ip);
int prof_bpf_swa_learn(struct prof_bpf_swa *a, uint32_t tid, const struct prof_bpf_swa_sample *smp,
		       const uint16_t *off, size_t n, bool bp_used, uint32_t seq);
/* Stack ends (switches.h's bases): tid's stack, as unwinds read it, ends
 * at top; its kept switch-outs copy up to there only, while its entry is
 * the one born then.  Written together with the shapes. */
int prof_bpf_swa_set_base(struct prof_bpf_swa *a, uint32_t tid, uint64_t born, uint64_t top);
int prof_bpf_swa_flush(struct prof_bpf_swa *a);
/*
 * Wakes.  From now on a kept switch-out of process pid (a CPython one)
 * goes on to the program of prof_bpf_swa_then (a tail call, in the
 * thread's context, before it runs again: a raw tracepoint program,
 * given the sched_switch arguments); without one, it makes the fd of
 * prof_bpf_swa_wake_fd readable (poll) until the next drain, so that
 * the recorder can read what the sample needs while the thread still
 * waits.  0 or -errno.
 */
int prof_bpf_swa_wake_for(struct prof_bpf_swa *a, pid_t pid);
int prof_bpf_swa_wake_fd(const struct prof_bpf_swa *a);
int prof_bpf_swa_then(struct prof_bpf_swa *a, int prog_fd);
struct prof_perf_sample;
/* A record's sample (t->sample) as a perf sample of attr a would have it:
 * the user ip, registers packed by a's sample_regs_user into regs
 * (PERF_REG_X86_64_MAX u64s), the stack copy, or the user chain behind
 * PERF_CONTEXT_USER in chain (chain_room u64s); no kernel part. */
void prof_bpf_swa_perf_sample(const struct prof_bpf_swa_thread *t, const struct perf_event_attr *a,
			      uint64_t *regs, uint64_t *chain, size_t chain_room, struct prof_perf_sample *s);

/*
 * The sampled allocator probes of `record --heap -p` (src/perf/bpf_heap.c):
 * one BPF_PROG_TYPE_KPROBE program per kind of tracefs uprobe, to set
 * (PERF_EVENT_IOC_SET_BPF) on one perf event of the probe.  An outermost
 * allocation of size bytes is kept with probability
 * prof_bpf_heap_keep_prob(size, rate) (about min(1, size / rate)); its
 * return is kept when the entry was, and the frees of kept blocks only.
 * prof_bpf_heap_load: 0, or -errno (no CAP_BPF and CAP_PERFMON, no BPF in
 * the kernel, rate not in [1, 2^32); rate 1 keeps every call); every prog
 * -1 then.
 */
enum prof_bpf_heap_probe {
	PROF_BPF_HEAP_SIZE_DI,		/* malloc, valloc: size in rdi */
	PROF_BPF_HEAP_SIZE_SI,		/* aligned_alloc, memalign: size in rsi */
	PROF_BPF_HEAP_CALLOC,		/* rdi * rsi */
	PROF_BPF_HEAP_REALLOC,		/* frees rdi, size in rsi */
	PROF_BPF_HEAP_MEMPTR,		/* posix_memalign: block to *rdi, size in rdx */
	PROF_BPF_HEAP_RETURN,		/* an allocation's return: rax */
	PROF_BPF_HEAP_RETURN_MEMPTR,	/* posix_memalign's return: eax 0, block in *memptr */
	PROF_BPF_HEAP_FREE,		/* free: rdi */
	PROF_BPF_HEAP_PROBES
};
struct prof_bpf_heap {
	int prog[PROF_BPF_HEAP_PROBES];
	int out;	/* BPF_MAP_TYPE_PERF_EVENT_ARRAY: a BPF_OUTPUT event per CPU */
};
int prof_bpf_heap_load(struct prof_bpf_heap *b, uint64_t rate, int ncpus);
/* The BPF_OUTPUT event (its samples with PERF_SAMPLE_RAW) that gets, from
 * programs running on cpu, the blocks posix_memalign returns: RAW is the
 * block's pointer (8 bytes) and the uprobe's sample is dropped.  Without
 * one (or when its ring is full) the sample is kept instead.  0 / -errno. */
int prof_bpf_heap_set_output(struct prof_bpf_heap *b, int cpu, int fd);
void prof_bpf_heap_close(struct prof_bpf_heap *b);
/* The chance that the programs keep an allocation of size bytes. */
double prof_bpf_heap_keep_prob(uint64_t size, uint64_t rate);
int prof_perf_enable(struct prof_perf *pf);
int prof_perf_disable(struct prof_perf *pf);
/* Waits up to timeout_ms for a ring to pass its watermark; 0 / -errno. */
int prof_perf_poll(struct prof_perf *pf, int timeout_ms);
/*
 * Calls fn for the records of every ring, merged by timestamp, up to the
 * time every ring is known to be read up to (records after it wait for
 * the next call, see ring.c).  The record points into the ring when it
 * does not wrap, else into a scratch copy; it is valid only during the
 * call.  Stops early when fn returns non-zero and returns that value.
 */
typedef int (*prof_perf_record_fn)(void *ctx, const struct perf_event_header *h);
int prof_perf_drain(struct prof_perf *pf, prof_perf_record_fn fn, void *ctx);
/* One event of a merged drain, and where its records go. */
struct prof_perf_source {
	struct prof_perf *pf;
	prof_perf_record_fn fn;
	void *ctx;
};
/*
 * prof_perf_drain over the rings of several events as one stream in time
 * order, for at most about budget_ns (0: no limit): a sample in one
 * event's ring is handed out after the MMAP, COMM, FORK and EXIT records
 * timed before it in another event's ring.  Returns 1 when it stopped
 * with records left (fn's non-zero result otherwise), so that a loop
 * that cannot keep up still sees its deadline, keys and batch ends.
 */
int prof_perf_drain_merged(const struct prof_perf_source *srcs, size_t nsrcs, uint64_t budget_ns);
/* The same, and *passed: every record timed before it has been handed
 * out (the merge's cutoff, or the last record's time when it stopped). */
int prof_perf_drain_until(const struct prof_perf_source *srcs, size_t nsrcs, uint64_t budget_ns,
			  uint64_t *passed);
void prof_perf_close(struct prof_perf *pf);	/* frees the pump too */

/*
 * The ring pump (pump.c): a thread that empties the kernel rings into
 * memory queues (at most max_bytes, shrinking DWARF samples to the stack
 * bytes the kernel filled) the moment the kernel wakes it, so a slow
 * consumer does not make the kernel drop samples.  Start it once every
 * event is open; from then on prof_perf_poll waits for the pump and
 * prof_perf_drain reads its queues.  prof_perf_disable stops the thread;
 * later drains move what is left in the rings themselves.  0 / -errno
 * (then nothing changed: the direct reader goes on).
 */
int prof_perf_pump_start(struct prof_perf *pf, size_t max_bytes);
void prof_perf_pump_stop(struct prof_perf *pf);
void prof_perf_pump_free(struct prof_perf *pf);
int prof_perf_pump_wait(struct prof_perf *pf, int timeout_ms);
/* The merged drain's access to the queues (ring.c): refill moves the
 * kernel rings into the queues once the thread stopped; mark is the
 * clock time before which every record of that CPU's ring is queued;
 * peek gives the next queued record (NULL: none), consume passes it. */
void prof_perf_pump_refill(struct prof_perf *pf);
uint64_t prof_perf_pump_mark(const struct prof_perf *pf, int cpu);
const struct perf_event_header *prof_perf_pump_peek(struct prof_perf *pf, int cpu);
void prof_perf_pump_consume(struct prof_perf *pf, int cpu, size_t size);
/* The record at tail (head: the published end), copied to scratch when it
 * wraps; NULL at the end or when the ring looks corrupt. */
const struct perf_event_header *prof_perf_ring_peek(const struct prof_perf_ring *r, uint64_t tail,
						    uint64_t head, uint8_t *scratch);

/*
 * Decoding records (src/perf/decode.c: the one decoder, used by the live
 * rings and the perf.data reader).  Records may be unaligned; a record
 * shorter than its fields claim is -EINVAL.  Decoded structs point into
 * the record and are valid as long as it is.
 */
struct prof_perf_sample {
	uint64_t ip, time, addr, id, period;
	uint32_t pid, tid, cpu;
	uint64_t nr_callchain;
	const uint8_t *callchain;	/* nr_callchain u64s: prof_perf_callchain() */
	uint32_t raw_size;		/* PERF_SAMPLE_RAW (tracepoints), else 0 */
	const uint8_t *raw;
	uint64_t regs_abi;		/* 0: no user regs (kernel thread) */
	uint64_t regs_mask;		/* the attr's sample_regs_user */
	const uint8_t *regs;		/* popcount(regs_mask) u64s, in mask bit order */
	uint64_t stack_size;		/* bytes of stack actually valid (dyn_size) */
	const uint8_t *stack;
	bool kernel;			/* PERF_RECORD_MISC_KERNEL */
};
/* A PERF_RECORD_SAMPLE laid out by a's sample_type.  0 / -EINVAL. */
int prof_perf_parse_sample(const struct perf_event_attr *a, const struct perf_event_header *h,
			   struct prof_perf_sample *s);
/* A sample's time from its first bytes only (false if it has none). */
bool prof_perf_sample_time(const struct perf_event_attr *a, const struct perf_event_header *h,
			   uint64_t *time);
static inline uint64_t prof_perf_callchain(const struct prof_perf_sample *s, uint64_t i)
{
	uint64_t v;
	__builtin_memcpy(&v, s->callchain + 8 * i, 8);
	return v;
}
/* Scatters the user regs into regs[] indexed by perf_regs number (those
 * below nregs); returns how many the sample has. */
size_t prof_perf_sample_regs(const struct prof_perf_sample *s, uint64_t *regs, size_t nregs);
/* The header's misc (h may be unaligned). */
uint16_t prof_perf_record_misc(const struct perf_event_header *h);

/* The sample_id_all trailer of a non-sample record of attr a. */
struct prof_perf_sample_id {
	uint32_t pid, tid, cpu;
	uint64_t time, id;
	bool has_time;
};
/* 0, or -EINVAL when a has no trailer or the record is too short (*id zeroed). */
int prof_perf_parse_id(const struct perf_event_attr *a, const struct perf_event_header *h,
		       struct prof_perf_sample_id *id);

/* Decoded side-band records; strings point into the record. */
struct prof_perf_mmap2 {		/* MMAP2, or MMAP (prot from misc) */
	uint32_t pid, tid, prot, flags;
	uint64_t addr, len, pgoff;
	const char *filename;
	char build_id[41];	/* hex of the mapped file's build-id (attr.build_id), or "" */
};
int prof_perf_parse_mmap2(const struct perf_event_header *h, struct prof_perf_mmap2 *m);
struct prof_perf_comm {
	uint32_t pid, tid;
	const char *comm;
	bool exec;			/* PERF_RECORD_MISC_COMM_EXEC */
};
int prof_perf_parse_comm(const struct perf_event_header *h, struct prof_perf_comm *c);
struct prof_perf_task {			/* FORK / EXIT */
	uint32_t pid, ppid, tid, ptid;
	uint64_t time;
};
int prof_perf_parse_task(const struct perf_event_header *h, struct prof_perf_task *t);
/* Samples dropped according to a LOST or LOST_SAMPLES record, else 0. */
uint64_t prof_perf_lost_count(const struct perf_event_header *h);

/* /proc/sys/kernel/perf_event_paranoid, or 99 when unreadable. */
int prof_perf_paranoid(void);
/* May this process open events for every task of a CPU (paranoid <= 0,
 * CAP_PERFMON or CAP_SYS_ADMIN)? */
bool prof_perf_may_record_cpus(void);

#endif
