/*
 * targets.c - the plain CPU-sample program (BPF_PROG_TYPE_PERF_EVENT),
 * set on the CPU-sampling events of a recording when no other program
 * runs on them (without the Python frame reader): it drops, before the
 * kernel copies its stack, a sample of a process that is not a target
 * (targets.h: a recording attached per CPU), and one that fell due while
 * prof's off-CPU switch program ran (owntime.h).  Built with clang
 * -target bpf into build/gen/targets.bpf.o and embedded in prof
 * (src/perf/bpftargets.c).
 */
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

#include "targets.h"
#include "owntime.h"

SEC("perf_event")
int targets_filter(struct bpf_perf_event_data *ctx)
{
	return targets_keep((__u32)(bpf_get_current_pid_tgid() >> 32)) && !own_sample(ctx);
}

char LICENSE[] SEC("license") = "GPL";
