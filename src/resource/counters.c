/*
 * counters.c - the perf_event_open counters `prof stat -e` can attach to a
 * command: a probe that asks this kernel
 * whether an event can be counted at all (and the filter that keeps the
 * countable ones of a -e list, saying why others go), and the open/read used by
 * res_run().  Counting mode only (no sampling, no mmap): one u64 per event.
 */
#include "prof/resource.h"
#include "prof/util.h"
#include "resource-priv.h"
#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int open_event(const struct prof_perf_event_desc *spec, pid_t pid, bool on_exec,
		      bool user_only)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = spec->type;
	attr.config = spec->config;
	attr.inherit = 1;
	attr.exclude_hv = 1;
	attr.exclude_kernel = user_only;
	attr.disabled = on_exec;
	attr.enable_on_exec = on_exec;
	return (int)syscall(SYS_perf_event_open, &attr, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

/*
 * Kernel-side counting needs perf_event_paranoid <= 1 or CAP_PERFMON; when
 * refused with EACCES, fall back to user-only counts rather than nothing.
 */
static int open_with_fallback(const struct prof_perf_event_desc *spec, pid_t pid, bool on_exec,
			      bool *user_only)
{
	int fd = open_event(spec, pid, on_exec, false);

	*user_only = false;
	if (fd < 0 && (errno == EACCES || errno == EPERM)) {
		fd = open_event(spec, pid, on_exec, true);
		*user_only = fd >= 0;
	}
	return fd < 0 ? -errno : fd;
}

int res_counter_open(const struct prof_perf_event_desc *spec, pid_t pid, bool on_exec)
{
	bool user_only;

	return open_with_fallback(spec, pid, on_exec, &user_only);
}

/*
 * Can this event be counted on our own children here?  0 or -errno
 * (-ENOENT/-EOPNOTSUPP: no such PMU event on this machine, -EACCES: policy).
 * *user_only is set when only user-space counts are allowed
 * (perf_event_paranoid >= 2 without CAP_PERFMON): kernel time is then missing.
 */
static int res_counter_probe(const struct prof_perf_event_desc *spec, bool *user_only)
{
	int fd = open_with_fallback(spec, 0, false, user_only);

	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

int res_counter_read(int fd, uint64_t *value)
{
	ssize_t n = read(fd, value, sizeof(*value));

	if (n != (ssize_t)sizeof(*value))
		return n < 0 ? -errno : -EIO;
	return 0;
}

/* Events this kernel refuses (no PMU here: cycles, instructions...) are
 * dropped with one warning each; an error only if none is left. */
int res_counters_keep_countable(const struct prof_perf_event_desc **counters, unsigned *n)
{
	unsigned kept = 0, asked = *n;

	for (unsigned i = 0; i < asked; i++) {
		bool user_only;
		int r = res_counter_probe(counters[i], &user_only);

		if (r == 0) {
			if (user_only)
				warning("event '%s' excludes the kernel (perf_event_paranoid >= 2): "
					"kernel-side counts are missing; run as root or lower "
					"kernel.perf_event_paranoid", counters[i]->name);
			counters[kept++] = counters[i];
			continue;
		}
		warning("event '%s' cannot be counted here (%s%s); continuing without it",
			counters[i]->name, strerror(-r),
			(r == -ENOENT || r == -EOPNOTSUPP) ? ": no such PMU event on this machine" : "");
	}
	*n = kept;
	if (asked && !kept)
		return error("none of the -e events can be counted on this machine"), -EINVAL;
	return 0;
}
