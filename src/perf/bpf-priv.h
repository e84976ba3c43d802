/*
 * bpf-priv.h - a tiny BPF assembler shared by prof's hand-written
 * programs (src/perf/bpf_filter.c: context-switch sample filters;
 * src/perf/bpf_heap.c: the sampled allocator probes of `record --heap
 * -p`).  Instructions go into a fixed array, forward jumps name labels
 * that are fixed up when the program is loaded; maps are created and
 * programs loaded with the bpf syscall directly, so building prof needs
 * neither a BPF compiler nor libbpf, only the uapi header.
 */
#ifndef PROF_BPF_PRIV_H
#define PROF_BPF_PRIV_H

#include <linux/bpf.h>
#include <stdbool.h>
#include <stdint.h>

#define PBPF_MAX_INSNS 128
#define PBPF_MAX_LABELS 8

struct pbpf_prog {
	struct bpf_insn v[PBPF_MAX_INSNS];
	int n;
	int label[PBPF_MAX_LABELS];	/* index of the instruction, -1 unset */
	int jump_to[PBPF_MAX_INSNS];	/* label of a jump, -1 none */
	bool overflow;			/* more than PBPF_MAX_INSNS: load refuses */
};

/* An empty program, every label unset. */
void pbpf_asm_init(struct pbpf_prog *p);
void pbpf_emit(struct pbpf_prog *p, uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm);
/* if (dst op imm) goto label */
void pbpf_jump(struct pbpf_prog *p, uint8_t op, uint8_t dst, int32_t imm, int label);
/* if (dst op src) goto label */
void pbpf_jump_reg(struct pbpf_prog *p, uint8_t op, uint8_t dst, uint8_t src, int label);
/* The next instruction is label. */
void pbpf_label(struct pbpf_prog *p, int label);
void pbpf_call(struct pbpf_prog *p, int32_t helper);
/* dst = a map (the fd becomes the map when loaded) */
void pbpf_load_map(struct pbpf_prog *p, uint8_t dst, int map_fd);
/* dst = v, a 64-bit constant */
void pbpf_load_imm64(struct pbpf_prog *p, uint8_t dst, uint64_t v);
void pbpf_exit_with(struct pbpf_prog *p, int32_t v);
/* A map; its fd or -errno. */
int pbpf_map_new(uint32_t type, uint32_t key_size, uint32_t value_size, uint32_t max_entries,
		uint32_t flags);
/* map[key] = value from user space; 0 or -errno. */
int pbpf_map_set(int map, const void *key, const void *value);
/* Loads p as a program of type; its fd or -errno. */
int pbpf_prog_load(struct pbpf_prog *p, uint32_t type);

#endif
