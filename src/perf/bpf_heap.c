/*
 * bpf_heap.c - the sampled allocator probes of `prof record --heap -p`
 * (see include/prof/perf.h, prof_bpf_heap_*): BPF_PROG_TYPE_KPROBE
 * programs set with PERF_EVENT_IOC_SET_BPF on the tracefs uprobes that
 * src/record/heap.c places on the allocator of a running process.  A
 * uprobe's program runs before the kernel makes the perf sample (the 16
 * KiB stack copy, the ring record); returning 0 drops it.  So an unsampled
 * allocation costs the trap and a few dozen instructions, not a sample.
 *
 * The rule, per probe (pt_regs of the user task as the context):
 *  - allocation entry (malloc, calloc, realloc, posix_memalign, ...): the
 *    outermost allocator call of a thread draws u from
 *    bpf_get_prandom_u32 and is sampled when u * rate < size << 32, that
 *    is with probability prof_bpf_heap_keep_prob(size, rate) = about
 *    min(1, size / rate): Bernoulli by bytes, stateless, unbiased with
 *    weight 1 / p.  It notes (stack pointer | sampled, time, memptr) for its
 *    thread in `inflight`; it is kept (the sample made) only if sampled.
 *    realloc is kept too when its old block is a sampled one (its free).
 *  - an allocator call inside a noted one (glibc's realloc(NULL, n) jumps
 *    to malloc; realloc of an mmapped chunk calls malloc) is the same
 *    allocation: dropped, so that it has one chance, not two.  "Inside" is
 *    a stack pointer at or below the noted one, noted less than a second
 *    ago (a call abandoned by longjmp does not silence its thread).
 *  - return: kept only for the return of the noted call (its stack
 *    pointer + 8, the return address popped) when it was sampled; the
 *    returned pointer goes into `blocks`.
 *  - posix_memalign returns its block through memptr (rdi at the entry,
 *    noted with the call): at its return, when eax is 0, the program
 *    reads *memptr with bpf_probe_read_user, the value the caller will
 *    see, puts it into `blocks` and hands it to the recorder through
 *    `out` (bpf_perf_event_output to the CPU's BPF_OUTPUT event: the
 *    sample's registers no longer hold it), dropping the uprobe's own
 *    sample.  Unreadable, or with no room in `out`, the uprobe's sample
 *    is kept: the recorder then reads *memptr from its stack copy.
 *  - free: kept only when its pointer is in `blocks` (and taken out).
 * Blocks are keyed like src/record/heap.c's (48 bits of pointer, 16 of
 * the process id), so a forked child's frees do not match its parent's.
 *
 * Design notes / invariants:
 *  - One program per probe, set on one event of the probe: a tracefs
 *    uprobe's programs belong to the probe (its trace_event_call), so it
 *    filters every perf event on it; the probes are prof's own
 *    (prof_heap/p<pid>_<n>), nobody else's events are filtered.
 *  - rate < 2^32, so that u * rate and size << 32 (size < rate) fit.
 *    Rate 1 keeps every call: the exact attach sets only posix_memalign's
 *    two programs, for its blocks.
 *  - x86-64 only (the pt_regs offsets), like the rest of the heap probes.
 */
#include "prof/perf.h"
#include "bpf-priv.h"
#include <errno.h>
#include <stddef.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <asm/ptrace.h>
#endif

/* Threads with an allocator call noted; the least recently used go. */
#define INFLIGHT_ENTRIES 16384
/* Sampled blocks not yet freed: at the default 512 KiB rate, 512 GiB of
 * live heap (entries are allocated as needed). */
#define BLOCK_ENTRIES (1u << 20)
/* A noted call older than this is abandoned, not a caller. */
#define STALE_NS 1000000000

enum { L_DROP, L_KEEP, L_FRESH, L_SAMPLED, L_STORE, L_DECIDE };

/* Stack slots. */
#define S_TID -8	/* u32 key of inflight */
#define S_BLOCK -16	/* u64 key of blocks */
#define S_NOTE -40	/* inflight value: sp | sampled, time, memptr (0: rax) */
#define S_ONE -48	/* blocks value */
#define S_PTR -56	/* posix_memalign's block */
#define NOTE_SIZE 24
#define NOTE_MEMPTR 16

#if defined(__x86_64__)
#define REG(r) ((int16_t)offsetof(struct pt_regs, r))

static void ldx(struct pbpf_prog *p, uint8_t dst, uint8_t src, int16_t off)
{
	pbpf_emit(p, BPF_LDX | BPF_MEM | BPF_DW, dst, src, off, 0);
}

static void stx(struct pbpf_prog *p, uint8_t dst, int16_t off, uint8_t src)
{
	pbpf_emit(p, BPF_STX | BPF_MEM | BPF_DW, dst, src, off, 0);
}

static void alu_k(struct pbpf_prog *p, uint8_t op, uint8_t dst, int32_t imm)
{
	pbpf_emit(p, BPF_ALU64 | op | BPF_K, dst, 0, 0, imm);
}

static void alu_x(struct pbpf_prog *p, uint8_t op, uint8_t dst, uint8_t src)
{
	pbpf_emit(p, BPF_ALU64 | op | BPF_X, dst, src, 0, 0);
}

/* r2 = r10 + off */
static void stack_ptr(struct pbpf_prog *p, uint8_t dst, int16_t off)
{
	alu_x(p, BPF_MOV, dst, BPF_REG_10);
	alu_k(p, BPF_ADD, dst, off);
}

/* r6 = ctx, r7 = pid_tgid, the tid stored as inflight's key */
static void prologue(struct pbpf_prog *p)
{
	alu_x(p, BPF_MOV, BPF_REG_6, BPF_REG_1);
	pbpf_call(p, BPF_FUNC_get_current_pid_tgid);
	alu_x(p, BPF_MOV, BPF_REG_7, BPF_REG_0);
	pbpf_emit(p, BPF_STX | BPF_MEM | BPF_W, BPF_REG_10, BPF_REG_7, S_TID, 0);
}

/* r1 = key of the block at pointer r1: 48 bits of it, 16 of the tgid */
static void block_key(struct pbpf_prog *p)
{
	alu_x(p, BPF_MOV, BPF_REG_2, BPF_REG_7);
	alu_k(p, BPF_RSH, BPF_REG_2, 32);
	alu_k(p, BPF_LSH, BPF_REG_2, 48);
	alu_k(p, BPF_LSH, BPF_REG_1, 16);
	alu_k(p, BPF_RSH, BPF_REG_1, 16);
	alu_x(p, BPF_OR, BPF_REG_1, BPF_REG_2);
	stx(p, BPF_REG_10, S_BLOCK, BPF_REG_1);
}

/* r0 = map_delete_elem(blocks, r1's key): 0 if it was a sampled block */
static void take_block(struct pbpf_prog *p, int blocks)
{
	block_key(p);
	pbpf_load_map(p, BPF_REG_1, blocks);
	stack_ptr(p, BPF_REG_2, S_BLOCK);
	pbpf_call(p, BPF_FUNC_map_delete_elem);
}

static void lookup_inflight(struct pbpf_prog *p, int inflight)
{
	pbpf_load_map(p, BPF_REG_1, inflight);
	stack_ptr(p, BPF_REG_2, S_TID);
	pbpf_call(p, BPF_FUNC_map_lookup_elem);
}

static void epilogue(struct pbpf_prog *p)
{
	pbpf_label(p, L_DROP);
	pbpf_exit_with(p, 0);
	pbpf_label(p, L_KEEP);
	pbpf_exit_with(p, 1);
}

/* Drops a call inside a noted one (r9 = this call's sp). */
static void skip_nested(struct pbpf_prog *p, int inflight)
{
	lookup_inflight(p, inflight);
	pbpf_jump(p, BPF_JEQ, BPF_REG_0, 0, L_FRESH);
	alu_x(p, BPF_MOV, BPF_REG_8, BPF_REG_0);
	ldx(p, BPF_REG_1, BPF_REG_8, 0);
	alu_k(p, BPF_AND, BPF_REG_1, -2);
	pbpf_jump_reg(p, BPF_JLT, BPF_REG_1, BPF_REG_9, L_FRESH);	/* done, or deeper: abandoned */
	pbpf_call(p, BPF_FUNC_ktime_get_ns);
	ldx(p, BPF_REG_1, BPF_REG_8, 8);
	alu_x(p, BPF_SUB, BPF_REG_0, BPF_REG_1);
	pbpf_jump(p, BPF_JGT, BPF_REG_0, STALE_NS, L_FRESH);
	pbpf_jump(p, BPF_JA, 0, 0, L_DROP);
}

/* r2 = the requested size */
static void load_size(struct pbpf_prog *p, enum prof_bpf_heap_probe kind)
{
	switch (kind) {
	case PROF_BPF_HEAP_SIZE_DI:
		ldx(p, BPF_REG_2, BPF_REG_6, REG(rdi));
		break;
	case PROF_BPF_HEAP_CALLOC:
		ldx(p, BPF_REG_2, BPF_REG_6, REG(rdi));
		ldx(p, BPF_REG_3, BPF_REG_6, REG(rsi));
		alu_x(p, BPF_MUL, BPF_REG_2, BPF_REG_3);
		break;
	case PROF_BPF_HEAP_MEMPTR:
		ldx(p, BPF_REG_2, BPF_REG_6, REG(rdx));
		break;
	default:	/* aligned_alloc, memalign, realloc */
		ldx(p, BPF_REG_2, BPF_REG_6, REG(rsi));
		break;
	}
}

static int entry_prog(enum prof_bpf_heap_probe kind, uint64_t rate, int inflight, int blocks)
{
	struct pbpf_prog p;

	pbpf_asm_init(&p);
	prologue(&p);
	ldx(&p, BPF_REG_9, BPF_REG_6, REG(rsp));
	skip_nested(&p, inflight);
	pbpf_label(&p, L_FRESH);
	if (rate > 1) {	/* rate 1: every call, malloc(0) too (no dead code: the verifier refuses it) */
		load_size(&p, kind);
		pbpf_load_imm64(&p, BPF_REG_8, rate);
		pbpf_jump_reg(&p, BPF_JGE, BPF_REG_2, BPF_REG_8, L_SAMPLED);
		alu_k(&p, BPF_LSH, BPF_REG_2, 32);
		alu_x(&p, BPF_MOV, BPF_REG_8, BPF_REG_2);
		pbpf_call(&p, BPF_FUNC_get_prandom_u32);
		pbpf_load_imm64(&p, BPF_REG_1, rate);
		alu_x(&p, BPF_MUL, BPF_REG_0, BPF_REG_1);
		pbpf_jump_reg(&p, BPF_JGE, BPF_REG_0, BPF_REG_8, L_STORE);
	}
	pbpf_label(&p, L_SAMPLED);
	alu_k(&p, BPF_OR, BPF_REG_9, 1);
	pbpf_label(&p, L_STORE);
	stx(&p, BPF_REG_10, S_NOTE, BPF_REG_9);
	pbpf_call(&p, BPF_FUNC_ktime_get_ns);
	stx(&p, BPF_REG_10, S_NOTE + 8, BPF_REG_0);
	if (kind == PROF_BPF_HEAP_MEMPTR) {
		ldx(&p, BPF_REG_1, BPF_REG_6, REG(rdi));
		stx(&p, BPF_REG_10, S_NOTE + NOTE_MEMPTR, BPF_REG_1);
	} else {
		pbpf_emit(&p, BPF_ST | BPF_MEM | BPF_DW, BPF_REG_10, 0, S_NOTE + NOTE_MEMPTR, 0);
	}
	pbpf_load_map(&p, BPF_REG_1, inflight);
	stack_ptr(&p, BPF_REG_2, S_TID);
	stack_ptr(&p, BPF_REG_3, S_NOTE);
	alu_k(&p, BPF_MOV, BPF_REG_4, BPF_ANY);
	pbpf_call(&p, BPF_FUNC_map_update_elem);
	if (kind == PROF_BPF_HEAP_REALLOC) {	/* the old block: a free */
		ldx(&p, BPF_REG_1, BPF_REG_6, REG(rdi));
		pbpf_jump(&p, BPF_JEQ, BPF_REG_1, 0, L_DECIDE);
		take_block(&p, blocks);
		pbpf_jump(&p, BPF_JEQ, BPF_REG_0, 0, L_KEEP);
	}
	pbpf_label(&p, L_DECIDE);
	alu_k(&p, BPF_AND, BPF_REG_9, 1);
	pbpf_jump(&p, BPF_JEQ, BPF_REG_9, 0, L_DROP);
	pbpf_jump(&p, BPF_JA, 0, 0, L_KEEP);
	epilogue(&p);
	return pbpf_prog_load(&p, BPF_PROG_TYPE_KPROBE);
}

/* memptr: posix_memalign's return (int 0 on success, the block in
 * *memptr), else a pointer in rax. */
static int return_prog(bool memptr, int inflight, int blocks, int out)
{
	struct pbpf_prog p;

	pbpf_asm_init(&p);
	prologue(&p);
	lookup_inflight(&p, inflight);
	pbpf_jump(&p, BPF_JEQ, BPF_REG_0, 0, L_DROP);
	ldx(&p, BPF_REG_8, BPF_REG_0, 0);
	ldx(&p, BPF_REG_9, BPF_REG_0, NOTE_MEMPTR);
	ldx(&p, BPF_REG_2, BPF_REG_6, REG(rsp));
	alu_k(&p, BPF_ADD, BPF_REG_2, -8);
	alu_x(&p, BPF_MOV, BPF_REG_3, BPF_REG_8);
	alu_k(&p, BPF_AND, BPF_REG_3, -2);
	pbpf_jump_reg(&p, BPF_JNE, BPF_REG_3, BPF_REG_2, L_DROP);	/* not the noted call's return */
	pbpf_emit(&p, BPF_ST | BPF_MEM | BPF_DW, BPF_REG_0, 0, 0, 0);	/* done */
	alu_k(&p, BPF_AND, BPF_REG_8, 1);
	pbpf_jump(&p, BPF_JEQ, BPF_REG_8, 0, L_DROP);
	ldx(&p, BPF_REG_1, BPF_REG_6, REG(rax));
	if (memptr) {	/* failed (an error number) or unreadable: the recorder clears its entry */
		pbpf_emit(&p, BPF_ALU | BPF_MOV | BPF_X, BPF_REG_1, BPF_REG_1, 0, 0);	/* eax */
		pbpf_jump(&p, BPF_JNE, BPF_REG_1, 0, L_KEEP);
		stack_ptr(&p, BPF_REG_1, S_PTR);
		alu_k(&p, BPF_MOV, BPF_REG_2, 8);
		alu_x(&p, BPF_MOV, BPF_REG_3, BPF_REG_9);
		pbpf_call(&p, BPF_FUNC_probe_read_user);
		pbpf_jump(&p, BPF_JNE, BPF_REG_0, 0, L_KEEP);
		ldx(&p, BPF_REG_1, BPF_REG_10, S_PTR);
	}
	pbpf_jump(&p, BPF_JEQ, BPF_REG_1, 0, L_KEEP);	/* failed: the recorder clears its entry */
	block_key(&p);
	pbpf_emit(&p, BPF_ST | BPF_MEM | BPF_DW, BPF_REG_10, 0, S_ONE, 1);
	pbpf_load_map(&p, BPF_REG_1, blocks);
	stack_ptr(&p, BPF_REG_2, S_BLOCK);
	stack_ptr(&p, BPF_REG_3, S_ONE);
	alu_k(&p, BPF_MOV, BPF_REG_4, BPF_ANY);
	pbpf_call(&p, BPF_FUNC_map_update_elem);	/* full: its free will be missed */
	if (memptr) {
		alu_x(&p, BPF_MOV, BPF_REG_1, BPF_REG_6);
		pbpf_load_map(&p, BPF_REG_2, out);
		pbpf_emit(&p, BPF_ALU | BPF_MOV | BPF_K, BPF_REG_3, 0, 0, -1);	/* BPF_F_CURRENT_CPU */
		stack_ptr(&p, BPF_REG_4, S_PTR);
		alu_k(&p, BPF_MOV, BPF_REG_5, 8);
		pbpf_call(&p, BPF_FUNC_perf_event_output);
		pbpf_jump(&p, BPF_JEQ, BPF_REG_0, 0, L_DROP);
	}
	pbpf_jump(&p, BPF_JA, 0, 0, L_KEEP);
	epilogue(&p);
	return pbpf_prog_load(&p, BPF_PROG_TYPE_KPROBE);
}

static int free_prog(int blocks)
{
	struct pbpf_prog p;

	pbpf_asm_init(&p);
	prologue(&p);
	ldx(&p, BPF_REG_1, BPF_REG_6, REG(rdi));
	pbpf_jump(&p, BPF_JEQ, BPF_REG_1, 0, L_DROP);
	take_block(&p, blocks);
	pbpf_jump(&p, BPF_JNE, BPF_REG_0, 0, L_DROP);
	pbpf_jump(&p, BPF_JA, 0, 0, L_KEEP);
	epilogue(&p);
	return pbpf_prog_load(&p, BPF_PROG_TYPE_KPROBE);
}

int prof_bpf_heap_load(struct prof_bpf_heap *b, uint64_t rate, int ncpus)
{
	int inflight, blocks, ret = 0;

	for (int i = 0; i < PROF_BPF_HEAP_PROBES; i++)
		b->prog[i] = -1;
	b->out = -1;
	if (!rate || rate >= 1ULL << 32 || ncpus < 1)
		return -EINVAL;
	if ((b->out = pbpf_map_new(BPF_MAP_TYPE_PERF_EVENT_ARRAY, 4, 4, (uint32_t)ncpus, 0)) < 0) {
		ret = b->out;
		b->out = -1;
		return ret;
	}
	if ((inflight = pbpf_map_new(BPF_MAP_TYPE_LRU_HASH, 4, NOTE_SIZE, INFLIGHT_ENTRIES, 0)) < 0) {
		prof_bpf_heap_close(b);
		return inflight;
	}
	if ((blocks = pbpf_map_new(BPF_MAP_TYPE_HASH, 8, 8, BLOCK_ENTRIES, BPF_F_NO_PREALLOC)) < 0) {
		close(inflight);
		prof_bpf_heap_close(b);
		return blocks;
	}
	for (int i = 0; i < PROF_BPF_HEAP_PROBES && ret >= 0; i++) {
		if (i == PROF_BPF_HEAP_RETURN || i == PROF_BPF_HEAP_RETURN_MEMPTR)
			ret = return_prog(i == PROF_BPF_HEAP_RETURN_MEMPTR, inflight, blocks, b->out);
		else if (i == PROF_BPF_HEAP_FREE)
			ret = free_prog(blocks);
		else
			ret = entry_prog((enum prof_bpf_heap_probe)i, rate, inflight, blocks);
		b->prog[i] = ret;
	}
	close(inflight);	/* the programs hold them */
	close(blocks);
	if (ret < 0)
		prof_bpf_heap_close(b);
	return ret < 0 ? ret : 0;
}

int prof_bpf_heap_set_output(struct prof_bpf_heap *b, int cpu, int fd)
{
	uint32_t key = (uint32_t)cpu, value = (uint32_t)fd;

	return b->out < 0 ? -EBADF : pbpf_map_set(b->out, &key, &value);
}
#else
int prof_bpf_heap_load(struct prof_bpf_heap *b, uint64_t rate, int ncpus)
{
	for (int i = 0; i < PROF_BPF_HEAP_PROBES; i++)
		b->prog[i] = -1;
	b->out = -1;
	(void)rate;
	(void)ncpus;
	return -EOPNOTSUPP;
}

int prof_bpf_heap_set_output(struct prof_bpf_heap *b, int cpu, int fd)
{
	(void)b;
	(void)cpu;
	(void)fd;
	return -EOPNOTSUPP;
}
#endif

void prof_bpf_heap_close(struct prof_bpf_heap *b)
{
	for (int i = 0; i < PROF_BPF_HEAP_PROBES; i++) {
		if (b->prog[i] >= 0)
			close(b->prog[i]);
		b->prog[i] = -1;
	}
	if (b->out >= 0)
		close(b->out);
	b->out = -1;
}

double prof_bpf_heap_keep_prob(uint64_t size, uint64_t rate)
{
	if (rate <= 1 || size >= rate)
		return 1.0;
	/* the u in [0, 2^32) with u * rate < size * 2^32 */
	unsigned __int128 n = (((unsigned __int128)size << 32) + rate - 1) / rate;

	return (double)n / 4294967296.0;
}
