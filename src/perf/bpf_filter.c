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
 *  - Every program drops the idle task and prof's own threads (tgid), so
 *    prof's waits never fill the rings with its own stacks.
 *  - PROF_BPF_RANDOM keeps a switch with probability 1/n (the kernel's
 *    per-CPU pseudo-random numbers), independent of everything before it;
 *    PROF_BPF_STALE keeps a thread's switch when its previous kept one (by
 *    this program) is at least tau ns old, first switch included.  Which
 *    one a sample came from is which event it came from; the estimator
 *    built on that is in src/record/offcpu.c, the kernel facts in
 *    kernel-notes/offcpu-bpf-filter.md.
 */
#include "prof/perf.h"
#include "bpf-priv.h"
#include <errno.h>
#include <unistd.h>

/* Threads remembered by a STALE program; least recently kept go first. */
#define STALE_MAP_ENTRIES 65536

enum { L_DROP, L_KEEP, L_STORE };

/* r6 = tid; drops the idle task and prof's own threads. */
static void skip_idle_and_self(struct pbpf_prog *p, uint32_t self)
{
	pbpf_call(p, BPF_FUNC_get_current_pid_tgid);
	pbpf_emit(p, BPF_ALU | BPF_MOV | BPF_X, BPF_REG_6, BPF_REG_0, 0, 0);	/* w6 = low 32 bits */
	pbpf_jump(p, BPF_JEQ, BPF_REG_6, 0, L_DROP);
	pbpf_emit(p, BPF_ALU64 | BPF_RSH | BPF_K, BPF_REG_0, 0, 0, 32);
	pbpf_jump(p, BPF_JEQ, BPF_REG_0, (int32_t)self, L_DROP);
}

static void random_body(struct pbpf_prog *p, uint32_t n)
{
	pbpf_call(p, BPF_FUNC_get_prandom_u32);
	pbpf_emit(p, BPF_ALU | BPF_MOD | BPF_K, BPF_REG_0, 0, 0, (int32_t)n);
	pbpf_jump(p, BPF_JNE, BPF_REG_0, 0, L_DROP);
	pbpf_jump(p, BPF_JA, 0, 0, L_KEEP);
}

/* map[tid]: the time of the thread's last kept switch. */
static void stale_body(struct pbpf_prog *p, int map_fd, uint32_t tau)
{
	pbpf_emit(p, BPF_STX | BPF_MEM | BPF_W, BPF_REG_10, BPF_REG_6, -4, 0);	/* key */
	pbpf_call(p, BPF_FUNC_ktime_get_ns);
	pbpf_emit(p, BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_7, BPF_REG_0, 0, 0);
	pbpf_load_map(p, BPF_REG_1, map_fd);
	pbpf_emit(p, BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_10, 0, 0);
	pbpf_emit(p, BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, -4);
	pbpf_call(p, BPF_FUNC_map_lookup_elem);
	pbpf_jump(p, BPF_JEQ, BPF_REG_0, 0, L_STORE);	/* a new thread: keep */
	pbpf_emit(p, BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_1, BPF_REG_0, 0, 0);
	pbpf_emit(p, BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_7, 0, 0);
	pbpf_emit(p, BPF_ALU64 | BPF_SUB | BPF_X, BPF_REG_2, BPF_REG_1, 0, 0);
	pbpf_jump(p, BPF_JLT, BPF_REG_2, (int32_t)tau, L_DROP);
	pbpf_label(p, L_STORE);
	pbpf_emit(p, BPF_STX | BPF_MEM | BPF_DW, BPF_REG_10, BPF_REG_7, -16, 0);
	pbpf_load_map(p, BPF_REG_1, map_fd);
	pbpf_emit(p, BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_10, 0, 0);
	pbpf_emit(p, BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, -4);
	pbpf_emit(p, BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_3, BPF_REG_10, 0, 0);
	pbpf_emit(p, BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_3, 0, 0, -16);
	pbpf_emit(p, BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_4, 0, 0, BPF_ANY);
	pbpf_call(p, BPF_FUNC_map_update_elem);
	pbpf_jump(p, BPF_JA, 0, 0, L_KEEP);
}

int prof_bpf_switch_filter(enum prof_bpf_rule rule, uint32_t self, uint64_t arg)
{
	struct pbpf_prog p;
	int map = -1, fd;

	pbpf_asm_init(&p);
	if (rule == PROF_BPF_STALE &&
	    (map = pbpf_map_new(BPF_MAP_TYPE_LRU_HASH, 4, 8, STALE_MAP_ENTRIES, 0)) < 0)
		return map;
	skip_idle_and_self(&p, self);
	if (rule == PROF_BPF_RANDOM)
		random_body(&p, (uint32_t)arg);
	else
		stale_body(&p, map, (uint32_t)MIN(arg, (uint64_t)INT32_MAX));
	pbpf_label(&p, L_DROP);
	pbpf_exit_with(&p, 0);
	pbpf_label(&p, L_KEEP);
	pbpf_exit_with(&p, 1);
	fd = pbpf_prog_load(&p, BPF_PROG_TYPE_PERF_EVENT);
	if (map >= 0)
		close(map);	/* the program holds it */
	return fd;
}
