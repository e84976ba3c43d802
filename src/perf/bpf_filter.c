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
#include <errno.h>
#include <linux/bpf.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Threads remembered by a STALE program; least recently kept go first. */
#define STALE_MAP_ENTRIES 65536

#define MAX_INSNS 48
#define MAX_LABELS 4

/* An instruction list with forward jumps to labels, fixed up at the end. */
struct prog {
	struct bpf_insn v[MAX_INSNS];
	int n;
	int label[MAX_LABELS];		/* index of the instruction, -1 unset */
	int jump_to[MAX_INSNS];		/* label of a jump, -1 none */
};

static void emit(struct prog *p, uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm)
{
	p->jump_to[p->n] = -1;
	p->v[p->n++] = (struct bpf_insn){ .code = code, .dst_reg = dst, .src_reg = src, .off = off, .imm = imm };
}

/* if (dst op imm) goto label */
static void jump(struct prog *p, uint8_t op, uint8_t dst, int32_t imm, int label)
{
	emit(p, BPF_JMP | op | BPF_K, dst, 0, 0, imm);
	p->jump_to[p->n - 1] = label;
}

static void call(struct prog *p, int32_t helper)
{
	emit(p, BPF_JMP | BPF_CALL, 0, 0, 0, helper);
}

static void load_map(struct prog *p, uint8_t dst, int map_fd)
{
	emit(p, BPF_LD | BPF_DW | BPF_IMM, dst, BPF_PSEUDO_MAP_FD, 0, map_fd);
	emit(p, 0, 0, 0, 0, 0);
}

static void exit_with(struct prog *p, int32_t v)
{
	emit(p, BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, v);
	emit(p, BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
}

static void fix_jumps(struct prog *p)
{
	for (int i = 0; i < p->n; i++)
		if (p->jump_to[i] >= 0)
			p->v[i].off = (int16_t)(p->label[p->jump_to[i]] - i - 1);
}

enum { L_DROP, L_KEEP, L_STORE };

/* r6 = tid; drops the idle task and prof's own threads. */
static void skip_idle_and_self(struct prog *p, uint32_t self)
{
	call(p, BPF_FUNC_get_current_pid_tgid);
	emit(p, BPF_ALU | BPF_MOV | BPF_X, BPF_REG_6, BPF_REG_0, 0, 0);	/* w6 = low 32 bits */
	jump(p, BPF_JEQ, BPF_REG_6, 0, L_DROP);
	emit(p, BPF_ALU64 | BPF_RSH | BPF_K, BPF_REG_0, 0, 0, 32);
	jump(p, BPF_JEQ, BPF_REG_0, (int32_t)self, L_DROP);
}

static void random_body(struct prog *p, uint32_t n)
{
	call(p, BPF_FUNC_get_prandom_u32);
	emit(p, BPF_ALU | BPF_MOD | BPF_K, BPF_REG_0, 0, 0, (int32_t)n);
	jump(p, BPF_JNE, BPF_REG_0, 0, L_DROP);
	jump(p, BPF_JA, 0, 0, L_KEEP);
}

/* map[tid]: the time of the thread's last kept switch. */
static void stale_body(struct prog *p, int map_fd, uint32_t tau)
{
	emit(p, BPF_STX | BPF_MEM | BPF_W, BPF_REG_10, BPF_REG_6, -4, 0);	/* key */
	call(p, BPF_FUNC_ktime_get_ns);
	emit(p, BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_7, BPF_REG_0, 0, 0);
	load_map(p, BPF_REG_1, map_fd);
	emit(p, BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_10, 0, 0);
	emit(p, BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, -4);
	call(p, BPF_FUNC_map_lookup_elem);
	jump(p, BPF_JEQ, BPF_REG_0, 0, L_STORE);	/* a new thread: keep */
	emit(p, BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_1, BPF_REG_0, 0, 0);
	emit(p, BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_7, 0, 0);
	emit(p, BPF_ALU64 | BPF_SUB | BPF_X, BPF_REG_2, BPF_REG_1, 0, 0);
	jump(p, BPF_JLT, BPF_REG_2, (int32_t)tau, L_DROP);
	p->label[L_STORE] = p->n;
	emit(p, BPF_STX | BPF_MEM | BPF_DW, BPF_REG_10, BPF_REG_7, -16, 0);
	load_map(p, BPF_REG_1, map_fd);
	emit(p, BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_10, 0, 0);
	emit(p, BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, -4);
	emit(p, BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_3, BPF_REG_10, 0, 0);
	emit(p, BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_3, 0, 0, -16);
	emit(p, BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_4, 0, 0, BPF_ANY);
	call(p, BPF_FUNC_map_update_elem);
	jump(p, BPF_JA, 0, 0, L_KEEP);
}

static long sys_bpf(int cmd, union bpf_attr *a)
{
	return syscall(SYS_bpf, cmd, a, sizeof(*a));
}

static int create_map(void)
{
	union bpf_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_LRU_HASH;
	a.key_size = 4;
	a.value_size = 8;
	a.max_entries = STALE_MAP_ENTRIES;
	fd = (int)sys_bpf(BPF_MAP_CREATE, &a);
	return fd < 0 ? -errno : fd;
}

static int load(struct prog *p)
{
	union bpf_attr a;
	int fd;

	fix_jumps(p);
	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_PERF_EVENT;
	a.insns = (uintptr_t)p->v;
	a.insn_cnt = (uint32_t)p->n;
	a.license = (uintptr_t)"GPL";
	fd = (int)sys_bpf(BPF_PROG_LOAD, &a);
	return fd < 0 ? -errno : fd;
}

int prof_bpf_switch_filter(enum prof_bpf_rule rule, uint32_t self, uint64_t arg)
{
	struct prog p = { .n = 0 };
	int map = -1, fd;

	memset(p.label, -1, sizeof(p.label));
	if (rule == PROF_BPF_STALE && (map = create_map()) < 0)
		return map;
	skip_idle_and_self(&p, self);
	if (rule == PROF_BPF_RANDOM)
		random_body(&p, (uint32_t)arg);
	else
		stale_body(&p, map, (uint32_t)MIN(arg, (uint64_t)INT32_MAX));
	p.label[L_DROP] = p.n;
	exit_with(&p, 0);
	p.label[L_KEEP] = p.n;
	exit_with(&p, 1);
	fd = load(&p);
	if (map >= 0)
		close(map);	/* the program holds it */
	return fd;
}
