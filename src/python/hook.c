/*
 * hook.c - the ring pump's hook that reads Python frames (prof_perf's
 * hook, include/prof/perf.h): on the pump's thread, as soon as a sample
 * leaves the kernel ring, a sample of a CPython thread gets a record of
 * that thread's Python frames, queued before it; an exec or the exit of
 * a process makes the reader look at it again.  `prof record` and `prof
 * top` install it.
 */
#include "prof/python.h"
#include "prof/perf.h"
#include "prof/unwind.h"
#include <unistd.h>

/* Frames read later than this after the sample are not trusted: the
 * thread may have left the sampled function and be running another one
 * from the same place, which no check can tell (docs/python.md). */
#define MAX_LAG_NS 2000000

/* The ring pump's hook (struct prof_perf's hook, arg a struct
 * prof_python): PROF_RECORD_PYSTACK records before CPython samples. */
static size_t prof_python_pump_hook(void *arg, const struct prof_perf *pf, const struct perf_event_header *h,
			     void *out, size_t max)
{
	struct prof_python *py = arg;
	struct prof_perf_sample s;
	struct prof_perf_task t;
	struct prof_user_regs regs;
	struct prof_pysample smp = { 0 };

	if (h->type == PERF_RECORD_SAMPLE) {
		if (prof_perf_parse_sample(&pf->attr, h, &s) < 0 || !s.pid || s.pid == (uint32_t)getpid())
			return 0;
		if (now_ns() > s.time + MAX_LAG_NS)
			smp.late = true;
		/* the sample's own view of the C stack, to check the chain against */
		if (s.stack && s.regs_abi &&
		    prof_perf_sample_regs(&s, regs.r, ARRAY_SIZE(regs.r)) > PERF_REG_X86_SP)
			smp = (struct prof_pysample){ regs.r[PERF_REG_X86_SP], s.stack, s.stack_size, smp.late };
		return prof_python_record(py, s.pid, s.tid, s.time, &smp, out, max);
	}
	if (h->type == PERF_RECORD_EXIT && prof_perf_parse_task(h, &t) == 0 && t.pid == t.tid)
		prof_python_forget(py, (pid_t)t.pid);
	else if (h->type == PERF_RECORD_COMM && (h->misc & PERF_RECORD_MISC_COMM_EXEC))
		prof_python_forget(py, (pid_t)((const uint32_t *)(h + 1))[0]);
	return 0;
}

struct prof_python *prof_python_hook_set(struct prof_perf *pf, struct prof_python *py)
{
	pf->hook = prof_python_pump_hook;
	pf->hook_arg = py;
	if ((pf->bpf_prog = prof_python_bpf_prog(py)) > 0)
		pf->hook_lazy = true;	/* the frames were read at the sample */
	return py;
}
