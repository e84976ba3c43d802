/*
 * targets.h - the processes a per-CPU recording serves (prof record -p as
 * root: events per CPU, src/record/target.c), for the BPF programs that
 * run on those events: the map of target processes, and the program on
 * sched_process_fork that adds a target's child in the parent's context,
 * before the child first runs, as an inherited event would follow it.
 * Included by each BPF object whose program filters by it (the off-CPU
 * accountant, the Python frame reader, the plain filter targets.c), each
 * with its own copy, filled by src/perf/bpftargets.c; C side, only the
 * configuration struct is shared.
 */
#ifndef PROF_BPF_TARGETS_H
#define PROF_BPF_TARGETS_H

#include <linux/types.h>

/* Room for the targets and every process they start during a recording;
 * when it is full, every process is kept (overflow) and the recorder
 * drops the others' records itself.  Preallocated (libbpf's default for
 * a hash map), so its size is paid at every recording's start. */
#define TARGETS_MAX 4096

struct targets_conf {		/* targets_conf[0] */
	__u32 only;		/* 0: every process is a target */
	__u32 off_tgid;		/* task_struct.tgid */
	__u32 overflow;		/* a child did not fit: every process is kept */
};

#ifdef __bpf__
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TARGETS_MAX);
	__type(key, __u32);
	__type(value, __u32);
} targets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct targets_conf);
} targets_conf SEC(".maps");

/* Is process tgid recorded? */
static __always_inline int targets_keep(__u32 tgid)
{
	__u32 zero = 0;
	const struct targets_conf *c = bpf_map_lookup_elem(&targets_conf, &zero);

	return !c || !c->only || c->overflow || bpf_map_lookup_elem(&targets, &tgid) != 0;
}

/* A process forks (args: parent, child; in the parent's context): a
 * target's child becomes one.  Attached only when there are targets. */
SEC("raw_tracepoint/sched_process_fork")
int targets_fork(struct bpf_raw_tracepoint_args *ctx)
{
	__u32 zero = 0, one = 1, parent = (__u32)(bpf_get_current_pid_tgid() >> 32), child = 0;
	struct targets_conf *c = bpf_map_lookup_elem(&targets_conf, &zero);

	if (!c || !c->only || !bpf_map_lookup_elem(&targets, &parent))
		return 0;
	bpf_probe_read_kernel(&child, 4, (const char *)ctx->args[1] + c->off_tgid);
	if (child && child != parent && bpf_map_update_elem(&targets, &child, &one, BPF_ANY))
		c->overflow = 1;
	return 0;
}
#endif

#endif
