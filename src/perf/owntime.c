/*
 * owntime.c - the map of prof's own time inside the context switch
 * (src/perf/bpf/owntime.h), shared by the BPF objects that include it:
 * the off-CPU accountant, whose switch program writes each run's window,
 * and the programs on the CPU-sampling events (the Python frame reader's,
 * the plain one of bpftargets.c), which drop a sample that fell due in a
 * window.  See include/prof/perf.h, prof_bpf_own_*.
 *
 * Design notes / invariants:
 *  - One map for the process, made at the first object's load: the
 *    objects are loaded at different points of a recording's setup, in an
 *    order that depends on its options, and each must find the map that
 *    the others write.
 *  - The test needs where the kernel keeps a cpu-clock event's hrtimer
 *    (perf_event.hw.hrtimer.node.expires, inside anonymous unions) and that
 *    a sample program's context points to the event where owntime.h reads
 *    it; the kernel's BTF says both.  Where it does not, off_expires stays
 *    0: the windows are still timed, and no sample is dropped.  Only the
 *    clock events (cpu-clock, task-clock) have the hrtimer: for any other
 *    the same bytes are something else, and the test stays off.
 */
#include "prof/perf.h"
#include "bpf/owntime.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef HAVE_LIBBPF
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

static int own_fd = -1;

/* Where the due time of a sample's hrtimer lies in struct perf_event, or
 * 0 when the kernel's BTF does not say what owntime.h needs. */
static uint32_t expires_offset(void)
{
	static const struct prof_btf_query q[] = { { "bpf_perf_event_data_kern", "event" },
						   { "perf_event", "hw.hrtimer.node.expires" } };
	struct prof_btf_field f[ARRAY_SIZE(q)];

	if (prof_btf_fields(q, ARRAY_SIZE(q), f) < 0 || !f[0].found || f[0].off != OWN_CTX_EVENT ||
	    f[0].size != 8 || !f[1].found || f[1].size != 8)
		return 0;
	return f[1].off;
}

/* Every CPU's value: counts zeroed, and the due time's offset for the
 * sample test (0: no test). */
static int own_reset(int fd, uint32_t off)
{
	int ncpus = libbpf_num_possible_cpus();
	struct own_cpu *v;
	uint32_t zero = 0;
	int ret;

	if (ncpus <= 0)
		return -EINVAL;
	v = xcalloc((size_t)ncpus, sizeof(*v));
	for (int c = 0; c < ncpus; c++)
		v[c].off_expires = off;
	ret = bpf_map_update_elem(fd, &zero, v, BPF_ANY) < 0 ? -errno : 0;
	free(v);
	return ret;
}

static int own_map(void)
{
	if (own_fd < 0) {
		int fd = bpf_map_create(BPF_MAP_TYPE_PERCPU_ARRAY, "own", 4, sizeof(struct own_cpu), 1, NULL);
		if (fd < 0)
			return -errno;
		if (own_reset(fd, 0) < 0) {
			close(fd);
			return -EINVAL;
		}
		own_fd = fd;
	}
	return own_fd;
}

int prof_bpf_own_share(struct bpf_object *obj)
{
	struct bpf_map *m = bpf_object__find_map_by_name(obj, "own");
	int fd;

	if (!m)
		return 0;
	if ((fd = own_map()) < 0)
		return fd;
	return bpf_map__reuse_fd(m, fd);
}

int prof_bpf_own_restart(bool test)
{
	uint32_t off = test ? expires_offset() : 0;

	if (test && !off)
		return -ENOTSUP;
	return own_fd < 0 ? -ENOENT : own_reset(own_fd, off);
}

void prof_bpf_own_read(struct prof_bpf_own *out)
{
	int ncpus = libbpf_num_possible_cpus();
	struct own_cpu *v;
	uint32_t zero = 0;

	*out = (struct prof_bpf_own){ 0 };
	if (own_fd < 0 || ncpus <= 0)
		return;
	v = xcalloc((size_t)ncpus, sizeof(*v));
	if (bpf_map_lookup_elem(own_fd, &zero, v) == 0) {
		out->tested = v[0].off_expires != 0;
		for (int c = 0; c < ncpus; c++) {
			out->taken += v[c].taken;
			out->spent_ns += v[c].spent_ns;
			out->runs += v[c].runs;
		}
	}
	free(v);
}

#else

int prof_bpf_own_share(struct bpf_object *obj) { return 0; }
int prof_bpf_own_restart(bool test) { return -ENOTSUP; }
void prof_bpf_own_read(struct prof_bpf_own *out) { *out = (struct prof_bpf_own){ 0 }; }

#endif
