/*
 * bpf_asm.c - the tiny BPF assembler of src/perf/bpf-priv.h: emitting
 * instructions, fixing up forward jumps, creating maps and loading
 * programs with the bpf syscall (no libbpf).
 */
#include "bpf-priv.h"
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

void pbpf_asm_init(struct pbpf_prog *p)
{
	memset(p, 0, sizeof(*p));
	memset(p->label, -1, sizeof(p->label));
}

void pbpf_emit(struct pbpf_prog *p, uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm)
{
	if (p->n >= PBPF_MAX_INSNS) {
		p->overflow = true;
		return;
	}
	p->jump_to[p->n] = -1;
	p->v[p->n++] = (struct bpf_insn){ .code = code, .dst_reg = dst, .src_reg = src, .off = off, .imm = imm };
}

void pbpf_jump(struct pbpf_prog *p, uint8_t op, uint8_t dst, int32_t imm, int label)
{
	pbpf_emit(p, BPF_JMP | op | BPF_K, dst, 0, 0, imm);
	if (!p->overflow)
		p->jump_to[p->n - 1] = label;
}

void pbpf_jump_reg(struct pbpf_prog *p, uint8_t op, uint8_t dst, uint8_t src, int label)
{
	pbpf_emit(p, BPF_JMP | op | BPF_X, dst, src, 0, 0);
	if (!p->overflow)
		p->jump_to[p->n - 1] = label;
}

void pbpf_label(struct pbpf_prog *p, int label)
{
	p->label[label] = p->n;
}

void pbpf_call(struct pbpf_prog *p, int32_t helper)
{
	pbpf_emit(p, BPF_JMP | BPF_CALL, 0, 0, 0, helper);
}

void pbpf_load_map(struct pbpf_prog *p, uint8_t dst, int map_fd)
{
	pbpf_emit(p, BPF_LD | BPF_DW | BPF_IMM, dst, BPF_PSEUDO_MAP_FD, 0, map_fd);
	pbpf_emit(p, 0, 0, 0, 0, 0);
}

void pbpf_load_imm64(struct pbpf_prog *p, uint8_t dst, uint64_t v)
{
	pbpf_emit(p, BPF_LD | BPF_DW | BPF_IMM, dst, 0, 0, (int32_t)(uint32_t)v);
	pbpf_emit(p, 0, 0, 0, 0, (int32_t)(uint32_t)(v >> 32));
}

void pbpf_exit_with(struct pbpf_prog *p, int32_t v)
{
	pbpf_emit(p, BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, v);
	pbpf_emit(p, BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
}

static long sys_bpf(int cmd, union bpf_attr *a)
{
	return syscall(SYS_bpf, cmd, a, sizeof(*a));
}

int pbpf_map_new(uint32_t type, uint32_t key_size, uint32_t value_size, uint32_t max_entries,
		uint32_t flags)
{
	union bpf_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.map_type = type;
	a.key_size = key_size;
	a.value_size = value_size;
	a.max_entries = max_entries;
	a.map_flags = flags;
	fd = (int)sys_bpf(BPF_MAP_CREATE, &a);
	return fd < 0 ? -errno : fd;
}

int pbpf_map_set(int map, const void *key, const void *value)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)map;
	a.key = (uintptr_t)key;
	a.value = (uintptr_t)value;
	a.flags = BPF_ANY;
	return sys_bpf(BPF_MAP_UPDATE_ELEM, &a) < 0 ? -errno : 0;
}

int pbpf_prog_load(struct pbpf_prog *p, uint32_t type)
{
	union bpf_attr a;
	int fd;

	if (p->overflow)
		return -E2BIG;
	for (int i = 0; i < p->n; i++) {
		if (p->jump_to[i] < 0)
			continue;
		if (p->label[p->jump_to[i]] < 0)
			return -EINVAL;
		p->v[i].off = (int16_t)(p->label[p->jump_to[i]] - i - 1);
	}
	memset(&a, 0, sizeof(a));
	a.prog_type = type;
	a.insns = (uintptr_t)p->v;
	a.insn_cnt = (uint32_t)p->n;
	a.license = (uintptr_t)"GPL";
	fd = (int)sys_bpf(BPF_PROG_LOAD, &a);
	return fd < 0 ? -errno : fd;
}
