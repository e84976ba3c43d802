/*
 * owntime.h - prof's own time inside the context switch, taken out of the
 * CPU samples: the window of the off-CPU accountant's last run on each
 * CPU, and the test a CPU sample's program makes against it.
 *
 * Why: the accountant's switch program (switches.c, and the Python
 * reader's program it tail-calls) runs inside __schedule with interrupts
 * off.  A cpu-clock sample that falls due meanwhile is taken when they
 * come back on, in the next thread's finish_task_switch: prof's work
 * would be shown as the target's scheduler.  The sample's hrtimer still
 * holds the time it fell due when its overflow program runs (the timer is
 * moved on after), so a sample whose due time lies inside this CPU's last
 * window is prof's: the program drops it and counts it, and the recorder
 * says so in the header.  This is the attribution a sample would have had
 * with interrupts on: no estimate.
 *
 * One map, shared by every object that includes this header (the
 * recorder creates it and hands the same map to each: src/perf/owntime.c).
 * Per CPU, no atomics: a window is written with interrupts off and read
 * by an interrupt on the same CPU, never both at once.  A window whose end
 * is before its start (a run that returned early) holds no time.
 */
#ifndef PROF_BPF_OWNTIME_H
#define PROF_BPF_OWNTIME_H

#include <linux/types.h>

/* bpf_perf_event_data_kern.event: the perf event behind a sample
 * program's context, at the same place since the type was made (4.x). */
#define OWN_CTX_EVENT 16

struct own_cpu {
	__u64 start, end;	/* the accountant's last run on this CPU (CLOCK_MONOTONIC) */
	__u64 taken;		/* CPU samples that fell due inside a window: dropped */
	__u64 spent_ns, runs;	/* the windows' time in all, and how many */
	__u32 off_expires;	/* perf_event.hw.hrtimer.node.expires; 0: no test */
	__u32 pad;
};

#ifdef __bpf__
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct own_cpu);
} own SEC(".maps");

static __always_inline struct own_cpu *own_here(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&own, &zero);
}

/* A switch program starts (now: its clock read, taken first). */
static __always_inline struct own_cpu *own_begin(__u64 now)
{
	struct own_cpu *o = own_here();

	if (o) {
		o->start = now;
		o->runs++;
	}
	return o;
}

/* A switch program ends, or a program it tail-called extends its window. */
static __always_inline void own_end(struct own_cpu *o)
{
	__u64 now = bpf_ktime_get_ns();

	if (!o)
		return;
	o->spent_ns += now - (o->end > o->start ? o->end : o->start);
	o->end = now;
}

/* A CPU sample's program, first thing: 1 when the sample fell due while
 * prof's switch program ran on this CPU (counted: the caller drops it). */
static __always_inline int own_sample(void *ctx)
{
	struct own_cpu *o = own_here();
	__u64 event = 0, due = 0;

	if (!o || !o->off_expires || o->end <= o->start ||
	    bpf_probe_read_kernel(&event, 8, (const char *)ctx + OWN_CTX_EVENT) || !event ||
	    bpf_probe_read_kernel(&due, 8, (const char *)event + o->off_expires) ||
	    due < o->start || due > o->end)
		return 0;
	o->taken++;
	return 1;
}
#endif

#endif
