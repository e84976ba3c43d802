/*
 * bpftargets.c - the target processes of a recording attached per CPU,
 * in the BPF programs that run on its events (see include/prof/perf.h,
 * prof_bpf_targets_*): fills the target map of an object built with
 * src/perf/bpf/targets.h and attaches its fork program, and loads the
 * plain target filter (src/perf/bpf/targets.c, embedded as
 * build/gen/targets.bpf.o) for CPU-sampling events with no other program.
 *
 * Why in the kernel: per CPU, the events sample every process on the
 * machine; a sample dropped by the program costs a map lookup, one the
 * recorder drops cost the sampled process the stack copy and the recorder
 * the reading (docs/offcpu.md, "Attached: events per CPU").
 */
#include "prof/perf.h"
#include "bpf/targets.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#ifdef HAVE_LIBBPF
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#ifndef PROF_TARGETS_OBJ
#define PROF_TARGETS_OBJ "build/gen/targets.bpf.o"
#endif
__asm__(".section .rodata\n"
	".balign 8\n"
	".global prof_targets_obj\n"
	"prof_targets_obj:\n"
	".incbin \"" PROF_TARGETS_OBJ "\"\n"
	".global prof_targets_obj_end\n"
	"prof_targets_obj_end:\n"
	".previous\n");
extern const char prof_targets_obj[], prof_targets_obj_end[];

struct prof_bpf_targets {
	struct bpf_object *obj;
	struct bpf_link *fork_link;
	int prog_fd;
};

int prof_bpf_targets_restrict(struct bpf_object *obj, struct bpf_link **fork_link, const pid_t *pids,
			      size_t n)
{
	struct prof_bpf_task_layout task;
	struct targets_conf conf = { .only = 1 };
	struct bpf_program *prog = bpf_object__find_program_by_name(obj, "targets_fork");
	int map = bpf_object__find_map_fd_by_name(obj, "targets");
	int conf_map = bpf_object__find_map_fd_by_name(obj, "targets_conf");
	uint32_t zero = 0, one = 1;

	if (!prof_bpf_task_layout(&task) || !task.tgid.found || task.tgid.size != 4 || task.tgid.width ||
	    !prog || map < 0 || conf_map < 0)
		return -ENOTSUP;
	conf.off_tgid = task.tgid.off;
	for (size_t i = 0; i < n; i++) {
		uint32_t key = (uint32_t)pids[i];
		if (bpf_map_update_elem(map, &key, &one, BPF_ANY) < 0)
			return -errno;
	}
	*fork_link = bpf_program__attach_raw_tracepoint(prog, "sched_process_fork");
	if (!*fork_link || libbpf_get_error(*fork_link)) {
		*fork_link = NULL;
		return -ENOTSUP;
	}
	return bpf_map_update_elem(conf_map, &zero, &conf, BPF_ANY) < 0 ? -errno : 0;
}

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return 0;
}

struct prof_bpf_targets *prof_bpf_targets_open(const pid_t *pids, size_t n)
{
	struct prof_bpf_targets *t = xcalloc(1, sizeof(*t));
	struct bpf_program *prog;

	if (!getenv("PROF_BPF_VERBOSE"))
		libbpf_set_print(quiet);
	t->obj = bpf_object__open_mem(prof_targets_obj, (size_t)(prof_targets_obj_end - prof_targets_obj), NULL);
	if (!t->obj || libbpf_get_error(t->obj)) {
		t->obj = NULL;
		goto fail;
	}
	if (prof_bpf_own_share(t->obj) < 0 || bpf_object__load(t->obj) < 0 ||
	    !(prog = bpf_object__find_program_by_name(t->obj, "targets_filter")) ||
	    (t->prog_fd = bpf_program__fd(prog)) < 0 || (n && prof_bpf_targets_only(t, pids, n) < 0))
		goto fail;
	return t;
fail:
	prof_bpf_targets_free(t);
	return NULL;
}

int prof_bpf_targets_only(struct prof_bpf_targets *t, const pid_t *pids, size_t n)
{
	return t->fork_link ? -EBUSY : prof_bpf_targets_restrict(t->obj, &t->fork_link, pids, n);
}

int prof_bpf_targets_prog(const struct prof_bpf_targets *t)
{
	return t->prog_fd;
}

void prof_bpf_targets_free(struct prof_bpf_targets *t)
{
	if (!t)
		return;
	if (t->fork_link)
		bpf_link__destroy(t->fork_link);
	bpf_object__close(t->obj);
	free(t);
}

#else

int prof_bpf_targets_restrict(struct bpf_object *obj, struct bpf_link **fork_link, const pid_t *pids,
			      size_t n)
{
	return -ENOTSUP;
}
struct prof_bpf_targets *prof_bpf_targets_open(const pid_t *pids, size_t n) { return NULL; }
int prof_bpf_targets_only(struct prof_bpf_targets *t, const pid_t *pids, size_t n) { return -ENOTSUP; }
int prof_bpf_targets_prog(const struct prof_bpf_targets *t) { return -1; }
void prof_bpf_targets_free(struct prof_bpf_targets *t) {}

#endif
