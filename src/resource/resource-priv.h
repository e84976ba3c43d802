/*
 * resource-priv.h - helpers shared between the files of src/resource
 * (counter open/read used by run.c); not part of the public API.
 */
#ifndef PROF_RESOURCE_INTERNAL_H
#define PROF_RESOURCE_INTERNAL_H

#include "prof/resource.h"

/* fd or -errno; pid 0 = this process; on_exec: disabled until the exec. */
int res_counter_open(const struct prof_perf_event_desc *spec, pid_t pid, bool on_exec);
int res_counter_read(int fd, uint64_t *value);

/* Delay totals (ns) of one live or zombie task via taskstats netlink: 0 or
 * -errno (-EPERM without CAP_NET_ADMIN). */
int res_taskstats_delays(pid_t pid, uint64_t *blkio_ns, uint64_t *cpu_wait_ns);

#endif
