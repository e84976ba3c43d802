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
#include <sys/mman.h>
#include <unistd.h>

/* Frames read later than this after the sample are not trusted: the
 * thread may have left the sampled function and be running another one
 * from the same place, which no check can tell (docs/python.md). */
#define MAX_LAG_NS 2000000

/* prof's own pid, taken once: getpid() is a system call in glibc, and the
 * hook runs for every sample the pump moves. */
static uint32_t self_pid;

size_t prof_python_sample_record(struct prof_python *py, const struct prof_perf_sample *s, bool blocked,
				 void *out, size_t max)
{
	struct prof_user_regs regs;
	struct prof_pysample smp = { .blocked = blocked };

	if (!s->pid || s->pid == self_pid)
		return 0;
	/* a blocked thread's chain is checked against its stack instead */
	smp.late = !blocked && now_ns() > s->time + MAX_LAG_NS;
	/* the sample's own view of the C stack, to check the chain against */
	if (s->stack && s->regs_abi && prof_perf_sample_regs(s, regs.r, ARRAY_SIZE(regs.r)) > PERF_REG_X86_SP) {
		smp.sp = regs.r[PERF_REG_X86_SP];
		smp.stack = s->stack;
		smp.len = s->stack_size;
	}
	return prof_python_record(py, s->pid, s->tid, s->time, &smp, out, max);
}

/* PROF_RECORD_PYSTACK records before CPython samples: the hook's work
 * for both kinds of event.  blocked: a switch-out sample, which the BPF
 * program (on the CPU event) never saw. */
static size_t pump_hook(struct prof_python *py, const struct prof_perf *pf, const struct perf_event_header *h,
			void *out, size_t max, bool blocked)
{
	struct prof_perf_sample s;
	struct prof_perf_task t;
	struct prof_perf_mmap2 m;

	if (h->type == PERF_RECORD_SAMPLE)
		return prof_perf_parse_sample(&pf->attr, h, &s) < 0 ? 0
			: prof_python_sample_record(py, &s, blocked, out, max);
	if ((h->type == PERF_RECORD_MMAP2 || h->type == PERF_RECORD_MMAP) && prof_perf_parse_mmap2(h, &m) == 0 &&
	    (m.prot & PROT_EXEC))
		prof_python_mapped(py, (pid_t)m.pid, m.filename);
	else if (h->type == PERF_RECORD_EXIT && prof_perf_parse_task(h, &t) == 0 && t.pid == t.tid)
		prof_python_forget(py, (pid_t)t.pid);
	else if (h->type == PERF_RECORD_COMM && (h->misc & PERF_RECORD_MISC_COMM_EXEC))
		prof_python_forget(py, (pid_t)((const uint32_t *)(h + 1))[0]);
	return 0;
}

/* The ring pump's hooks (struct prof_perf's hook, arg a struct
 * prof_python): CPU samples, and off-CPU (switch-out) samples. */
static size_t prof_python_pump_hook(void *arg, const struct prof_perf *pf, const struct perf_event_header *h,
				    void *out, size_t max)
{
	return pump_hook(arg, pf, h, out, max, false);
}

static size_t prof_python_pump_hook_blocked(void *arg, const struct prof_perf *pf,
					    const struct perf_event_header *h, void *out, size_t max)
{
	return pump_hook(arg, pf, h, out, max, true);
}

struct prof_python *prof_python_hook_set(struct prof_perf *pf, struct prof_python *py, bool hurry)
{
	pf->hook = prof_python_pump_hook;
	pf->hook_arg = py;
	self_pid = (uint32_t)getpid();
	if ((pf->bpf_prog = prof_python_bpf_prog(py)) > 0)
		pf->hook_lazy = true;	/* the frames were read at the sample */
	if (hurry)	/* but not named yet */
		pf->hook_hurry = prof_python_hurry(py);
	return py;
}

/* A switched-out thread's chain holds still until it runs again: read
 * after the switch-out, it is the one the thread blocked in if the
 * thread's C stack is still as the sample copied it (reader.c,
 * still_blocked), however late the read.  No BPF program: the event has
 * its own filter, and a perf event takes one program. */
void prof_python_hook_set_offcpu(struct prof_perf *pf, struct prof_python *py)
{
	pf->hook = prof_python_pump_hook_blocked;
	pf->hook_arg = py;
	self_pid = (uint32_t)getpid();
}
