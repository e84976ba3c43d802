/*
 * nspath-priv.h - the pure text and path rules of reaching a container's
 * files (see nspath.c); addrspace.c does the file system side.
 */
#ifndef PROF_SYMBOL_NSPATH_PRIV_H
#define PROF_SYMBOL_NSPATH_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The last pid of the "NSpid:" line of /proc/PID/status text (len bytes,
 * no NUL needed): the pid inside the process's own namespace; 0 when the
 * line is missing or malformed. */
pid_t prof_sym_status_nspid(const char *status, size_t len);
/* "/proc/PID/root" + path: path as the process with that pid sees it.
 * NULL when path is not absolute or has a "." or ".." component (the
 * kernel names mappings canonically; such a path comes from a file and
 * could climb out of the root). */
char *prof_sym_ns_root_path(pid_t pid, const char *path);
/* The JIT map of pid: /tmp/perf-PID.map, or for a process in another
 * mount namespace the one its runtime wrote, named by its own pid (nspid)
 * under its root. */
char *prof_sym_ns_perf_map_path(pid_t pid, pid_t nspid, bool other_ns);
/* Cuts a mapping path's " (deleted)" suffix in place; true if it had one
 * (the file is reached through /proc/PID/map_files then). */
bool prof_sym_map_path_cut_deleted(char *path);

#endif
