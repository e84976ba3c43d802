/*
 * bpf_filter.c - sample filters for software events (see
 * include/prof/perf.h, prof_bpf_*): tiny BPF programs attached with
 * PERF_EVENT_IOC_SET_BPF to a sampling software event, run at each of its
 * overflows before the sample is made; returning 0 drops it.  Off-CPU
 * recording hangs them on the context-switches event (period 1), so that
 * the kernel makes the sample (callchain, stack copy, ring output) of only
 * the switch-outs it keeps, and a dropped one costs the program's few
 * instructions.
 *
 * Design notes / invariants:
 *  - Hand-assembled (a few dozen instructions), so building prof needs no
 *    BPF compiler and no libbpf: only the uapi header.
 *  - On a software or hardware event the program is the event's own
 *    overflow filter (Linux >= 6.10), unlike a tracepoint's program,
 *    which would filter the tracepoint for every perf user of it.
 *    Inherited events (a command's children) keep their parent's program.
 *  - The program drops the idle task and prof's own threads (tgid), so
 *    prof's waits never fill the rings with its own stacks.
 *  - One program, one event, two rules, the stale one first: a
 *    switch-out is kept when the last one of its thread and class kept by
 *    the stale rule is at least tau ns old (the first included), else
 *    with probability 1/n (the kernel's per-CPU pseudo-random numbers).
 *    One program run per switch-out and one event to overflow, where two
 *    events (one per rule) cost two of each.  The sample does not say
 *    which rule kept it: the recorder replays the stale rule over the
 *    samples it gets (src/record/offcpu.c), which is exact except within
 *    the clock jitter of the tau boundary and after lost samples.  The
 *    task_struct fields that give the class are placed by the kernel's
 *    BTF (src/perf/btf.c).  The estimator built on that is in
 *    src/record/offcpu.c, the kernel facts in
 *    kernel-notes/offcpu-bpf-filter.md.
 */
#include "prof/perf.h"
#include "bpf-priv.h"
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

/* (thread, class) pairs remembered; least recently kept go first.  An
 * entry is evicted only after 2^16 newer keeps, long after the stale
 * interval: the recorder's replay of the rule (src/record/offcpu.c)
 * cannot tell an evicted entry from an old one, and need not. */
#define STALE_MAP_ENTRIES 65536

enum { L_DROP, L_KEEP, L_STORE, L_RANDOM, L_VOL, L_KEY };

/* Stack slots (off r10). */
enum { S_ON_RQ = -8, S_DELAYED = -16, S_KEY = -24, S_NOW = -32 };

/* dst = r10 + off: a pointer to the stack */
static void stack_ptr(struct pbpf_prog *p, uint8_t dst, int16_t off)
{
	pbpf_emit(p, BPF_ALU64 | BPF_MOV | BPF_X, dst, BPF_REG_10, 0, 0);
	pbpf_emit(p, BPF_ALU64 | BPF_ADD | BPF_K, dst, 0, 0, off);
}

/* r6 = tid; drops the idle task and prof's own threads. */
static void skip_idle_and_self(struct pbpf_prog *p, uint32_t self)
{
	pbpf_call(p, BPF_FUNC_get_current_pid_tgid);
	pbpf_emit(p, BPF_ALU | BPF_MOV | BPF_X, BPF_REG_6, BPF_REG_0, 0, 0);	/* w6 = low 32 bits */
	pbpf_jump(p, BPF_JEQ, BPF_REG_6, 0, L_DROP);
	pbpf_emit(p, BPF_ALU64 | BPF_RSH | BPF_K, BPF_REG_0, 0, 0, 32);
	pbpf_jump(p, BPF_JEQ, BPF_REG_0, (int32_t)self, L_DROP);
}

/* r1 = the task's field f (zero-extended), read at r7 + f->off. */
static void read_task_field(struct pbpf_prog *p, const struct prof_btf_field *f, int16_t slot)
{
	pbpf_emit(p, BPF_ST | BPF_MEM | BPF_DW, BPF_REG_10, 0, slot, 0);
	stack_ptr(p, BPF_REG_1, slot);
	pbpf_emit(p, BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_2, 0, 0, (int32_t)f->size);
	pbpf_emit(p, BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_3, BPF_REG_7, 0, 0);
	pbpf_emit(p, BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_3, 0, 0, (int32_t)f->off);
	pbpf_call(p, BPF_FUNC_probe_read_kernel);
	pbpf_emit(p, BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_1, BPF_REG_10, slot, 0);
}

/* r8 = the class: 0 while the task is runnable (preempted: on_rq and not
 * a delayed dequeue, the kernel's task_is_runnable(), which sets
 * PERF_RECORD_SWITCH's preempt flag), 1 otherwise; always 0 without a
 * layout. */
static void task_class(struct pbpf_prog *p, const struct prof_bpf_task_layout *task)
{
	pbpf_emit(p, BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_8, 0, 0, 0);
	if (!task)
		return;
	pbpf_call(p, BPF_FUNC_get_current_task);
	pbpf_emit(p, BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_7, BPF_REG_0, 0, 0);
	read_task_field(p, &task->on_rq, S_ON_RQ);
	pbpf_jump(p, BPF_JEQ, BPF_REG_1, 0, L_VOL);
	if (task->sched_delayed.found) {
		read_task_field(p, &task->sched_delayed, S_DELAYED);
		pbpf_jump(p, BPF_JNE, BPF_REG_1, 0, L_VOL);
	}
	pbpf_jump(p, BPF_JA, 0, 0, L_KEY);
	pbpf_label(p, L_VOL);
	pbpf_emit(p, BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_8, 0, 0, 1);
	pbpf_label(p, L_KEY);
}

/* map[tid | class << 32]: the time of the last switch-out kept as stale;
 * kept (and stamped) when absent or tau old, else on to L_RANDOM. */
static void stale_body(struct pbpf_prog *p, int map_fd, uint32_t tau)
{
	pbpf_emit(p, BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_9, BPF_REG_8, 0, 0);
	pbpf_emit(p, BPF_ALU64 | BPF_LSH | BPF_K, BPF_REG_9, 0, 0, 32);
	pbpf_emit(p, BPF_ALU64 | BPF_OR | BPF_X, BPF_REG_9, BPF_REG_6, 0, 0);
	pbpf_emit(p, BPF_STX | BPF_MEM | BPF_DW, BPF_REG_10, BPF_REG_9, S_KEY, 0);
	pbpf_call(p, BPF_FUNC_ktime_get_ns);
	pbpf_emit(p, BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_7, BPF_REG_0, 0, 0);
	pbpf_load_map(p, BPF_REG_1, map_fd);
	stack_ptr(p, BPF_REG_2, S_KEY);
	pbpf_call(p, BPF_FUNC_map_lookup_elem);
	pbpf_jump(p, BPF_JEQ, BPF_REG_0, 0, L_STORE);	/* new: keep */
	pbpf_emit(p, BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_1, BPF_REG_0, 0, 0);
	pbpf_emit(p, BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_7, 0, 0);
	pbpf_emit(p, BPF_ALU64 | BPF_SUB | BPF_X, BPF_REG_2, BPF_REG_1, 0, 0);
	pbpf_jump(p, BPF_JLT, BPF_REG_2, (int32_t)tau, L_RANDOM);
	pbpf_label(p, L_STORE);
	pbpf_emit(p, BPF_STX | BPF_MEM | BPF_DW, BPF_REG_10, BPF_REG_7, S_NOW, 0);
	pbpf_load_map(p, BPF_REG_1, map_fd);
	stack_ptr(p, BPF_REG_2, S_KEY);
	stack_ptr(p, BPF_REG_3, S_NOW);
	pbpf_emit(p, BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_4, 0, 0, BPF_ANY);
	pbpf_call(p, BPF_FUNC_map_update_elem);
	pbpf_jump(p, BPF_JA, 0, 0, L_KEEP);
}

/* Keeps with probability 1/n. */
static void random_body(struct pbpf_prog *p, uint32_t n)
{
	pbpf_label(p, L_RANDOM);
	pbpf_call(p, BPF_FUNC_get_prandom_u32);
	pbpf_emit(p, BPF_ALU | BPF_MOD | BPF_K, BPF_REG_0, 0, 0, (int32_t)n);
	pbpf_jump(p, BPF_JNE, BPF_REG_0, 0, L_DROP);
	pbpf_jump(p, BPF_JA, 0, 0, L_KEEP);
}

int prof_bpf_switch_filter(uint32_t self, uint32_t n, uint64_t tau, const struct prof_bpf_task_layout *task)
{
	struct pbpf_prog p;
	int map, fd;

	pbpf_asm_init(&p);
	if ((map = pbpf_map_new(BPF_MAP_TYPE_LRU_HASH, 8, 8, STALE_MAP_ENTRIES, 0)) < 0)
		return map;
	skip_idle_and_self(&p, self);
	task_class(&p, task && task->on_rq.found && task->on_rq.size <= 8 && !task->on_rq.width &&
			       (!task->sched_delayed.found ||
				(task->sched_delayed.size <= 8 && !task->sched_delayed.width)) ? task : NULL);
	stale_body(&p, map, (uint32_t)MIN(tau, (uint64_t)INT32_MAX));
	random_body(&p, n ? n : 1);
	pbpf_label(&p, L_DROP);
	pbpf_exit_with(&p, 0);
	pbpf_label(&p, L_KEEP);
	pbpf_exit_with(&p, 1);
	fd = pbpf_prog_load(&p, BPF_PROG_TYPE_PERF_EVENT);
	close(map);	/* the program holds it */
	return fd;
}

static struct prof_bpf_task_layout layout;
static bool layout_known;

static void read_layout(void)
{
	static const char *const paths[] = { "on_rq", "se.sched_delayed", "se.sum_exec_runtime",
					     "sched_contributes_to_load", "nvcsw", "flags", "tgid", "in_iowait" };
	struct prof_btf_field f[ARRAY_SIZE(paths)];

	if (prof_btf_members("task_struct", paths, ARRAY_SIZE(paths), f) < 0 || !f[0].found)
		return;
	layout = (struct prof_bpf_task_layout){ .on_rq = f[0], .sched_delayed = f[1], .sum_exec = f[2],
						.to_load = f[3], .nvcsw = f[4], .flags = f[5], .tgid = f[6],
						.in_iowait = f[7] };
	layout_known = true;
}

/* Read once a process: the off-CPU events and the target filter both ask. */
bool prof_bpf_task_layout(struct prof_bpf_task_layout *task)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, read_layout);
	*task = layout;
	return layout_known;
}
