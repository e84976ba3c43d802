/*
 * kstacks.c - the kernel stacks that the in-kernel off-CPU accountant
 * takes of D-state switch-outs and kept samples (src/perf/bpf/switches.c),
 * made into the profile's call-tree nodes for the off-CPU recorder
 * (include/prof/offcpu.h, prof_kstacks_*): what tells an I/O wait from
 * the other D waits, and the path into the wait under the thread's own
 * user frames.  Also a thread's kernel stack as /proc shows it, for one
 * already off the CPU when the recording began.
 *
 * Design notes / invariants:
 *  - The stack is taken at the sched_switch tracepoint by a BPF program,
 *    so its innermost frames are the program's and the tracepoint's own;
 *    it is cut to start at __schedule, where a perf sample of the
 *    tracepoint starts too.  A stack without __schedule (another kernel's
 *    naming) is kept whole.
 *  - The same few addresses come at every D switch-out (the paths into
 *    waits are few), so each is named once (kallsyms) and its frame kept.
 */
#include "prof/offcpu.h"
#include "prof/replay.h"

#include <stdio.h>
#include <string.h>

struct prof_kstacks {
	struct prof_profile *p;
	struct prof_symbolizer *sym;
	struct u64map frame_of;		/* address -> frame + 1 */
};

struct prof_kstacks *prof_kstacks_new(struct prof_profile *p)
{
	struct prof_kstacks *ks = xcalloc(1, sizeof(*ks));

	ks->p = p;
	ks->sym = prof_symbolizer_new(p);
	return ks;
}

void prof_kstacks_free(struct prof_kstacks *ks)
{
	if (!ks)
		return;
	prof_symbolizer_free(ks->sym);
	u64map_free(&ks->frame_of);
	free(ks);
}

static uint32_t frame_at(struct prof_kstacks *ks, uint64_t pc)
{
	uint64_t v;
	uint32_t frame;

	if (u64map_get(&ks->frame_of, pc, &v))
		return (uint32_t)v - 1;
	prof_symbolize_kernel(ks->sym, pc, &frame, 1);
	u64map_put(&ks->frame_of, pc, (uint64_t)frame + 1);
	return frame;
}

static bool is_schedule(const struct prof_kstacks *ks, uint32_t frame)
{
	return !strcmp(prof_str(ks->p, ks->p->frames.v[frame].func), "__schedule");
}

uint32_t prof_kstacks_node(struct prof_kstacks *ks, const uint64_t *ips, size_t n)
{
	uint32_t frames[PROF_MAX_FRAMES];
	size_t k = 0, from = 0;

	for (size_t i = 0; i < n && k < PROF_MAX_FRAMES; i++)
		frames[k++] = frame_at(ks, ips[i]);
	while (from < k && !is_schedule(ks, frames[from]))
		from++;
	if (from == k)
		from = 0;
	return prof_node_from_stack(ks->p, frames + from, k - from);
}

uint64_t prof_kstacks_schedule_caller(struct prof_kstacks *ks, const uint64_t *ips, size_t n)
{
	for (size_t i = 0; i + 1 < n; i++)
		if (is_schedule(ks, frame_at(ks, ips[i])))
			return ips[i + 1];
	return 0;
}

bool prof_kstacks_in_schedule(struct prof_kstacks *ks, uint64_t pc)
{
	return !strcmp(prof_str(ks->p, ks->p->frames.v[frame_at(ks, pc)].func), "schedule");
}

/* A kernel frame named by /proc (no address: /proc hides them). */
static uint32_t proc_kernel_frame(struct prof_kstacks *ks, const char *name)
{
	struct prof_profile *p = ks->p;
	struct prof_frame f = { .func = prof_intern(p, name), .file = prof_intern(p, ""),
				.module = prof_module_intern(p, "[kernel.kallsyms]", "", PROF_MOD_KERNEL),
				.kind = PROF_FRAME_KERNEL };

	return prof_frame_intern(p, &f);
}

size_t prof_kstacks_of_proc(struct prof_kstacks *ks, pid_t tid, uint32_t *frames, size_t max)
{
	char path[64], *text, *line, *save = NULL;
	size_t n = 0;

	snprintf(path, sizeof(path), "/proc/%d/stack", (int)tid);
	if (!(text = read_file(path, NULL))) {
		snprintf(path, sizeof(path), "/proc/%d/wchan", (int)tid);
		text = read_file(path, NULL);
	}
	for (line = text ? strtok_r(text, "\n", &save) : NULL; line && n < max; line = strtok_r(NULL, "\n", &save)) {
		char *name = strstr(line, "] ") ? strstr(line, "] ") + 2 : line;
		name[strcspn(name, "+ ")] = 0;
		if (*name && strcmp(name, "0"))
			frames[n++] = proc_kernel_frame(ks, name);
	}
	free(text);
	return n;
}
