/*
 * proc.h - small /proc readers the recorder needs: does a pid exist, the
 * thread ids of a process, its children and descendants, a task's comm.
 */
#ifndef PROF_PROC_H
#define PROF_PROC_H

#include "prof/util.h"
#include <sys/types.h>

/* True when /proc/PID exists (a process or thread we can see). */
bool prof_proc_exists(pid_t pid);
/* The tids in /proc/PID/task, sorted; 0 or -errno (-ENOENT: no such pid).
 * *tids is malloc'ed; free it. */
int prof_proc_tids(pid_t pid, pid_t **tids, size_t *n);
/* tid's state letter in /proc/TID/stat ('R', 'S', 'D'...), or 0. */
char prof_proc_state(pid_t tid);
/* /proc files kept open between readings, for a reader that comes back
 * to the same tasks (src/proc/files.c): at most a quarter of the
 * open-files limit. */
struct prof_proc_files;
struct prof_proc_files *prof_proc_files_new(void);
void prof_proc_files_free(struct prof_proc_files *pf);
/* The text of /proc/PID/NAME (tid 0) or /proc/PID/task/TID/NAME,
 * malloc'ed and NUL-terminated, its length in *len if len; NULL with
 * errno when it cannot be read.  stat, status, io and children files are
 * kept open in pf (which may be NULL: each is opened and closed). */
char *prof_proc_files_read(struct prof_proc_files *pf, pid_t pid, pid_t tid, const char *name, size_t *len);
/* How many files pf holds open. */
size_t prof_proc_files_open(const struct prof_proc_files *pf);

/* The children of every thread of pid (/proc/PID/task/TID/children, or a
 * walk of /proc/N/stat parents where the kernel lacks that file), in
 * order; 0 or -errno.  *kids is malloc'ed (NULL when there are none).
 * The files are read through pf (may be NULL). */
int prof_proc_children(struct prof_proc_files *pf, pid_t pid, pid_t **kids, size_t *n);
/* The children of pid's leader thread alone: all of a single-threaded
 * process's, for one file read instead of a listing and one per thread. */
int prof_proc_leader_children(struct prof_proc_files *pf, pid_t pid, pid_t **kids, size_t *n);
/* pid's descendants that run now, parents before their children (pid
 * itself not included); 0 or -errno.  *pids is malloc'ed. */
int prof_proc_descendants(pid_t pid, pid_t **pids, size_t *n);
/* Every process in /proc, sorted; 0 or -errno.  *pids is malloc'ed. */
int prof_proc_pids(pid_t **pids, size_t *n);
/* /proc/PID/task/TID/comm without the newline into buf; 0 or -errno. */
int prof_proc_comm(pid_t pid, pid_t tid, char *buf, size_t len);
/* The parent of process pid (/proc/PID/stat), or -1 when there is none. */
pid_t prof_proc_ppid(pid_t pid);
/* The process (thread group) of thread tid, or -1 when there is none. */
pid_t prof_proc_tgid(pid_t tid);
/* The CPU time thread tid has run, in ns (the first field of
 * /proc/TID/schedstat: the scheduler's se.sum_exec_runtime), or 0 when
 * there is no such thread. */
uint64_t prof_proc_cpu_ns(pid_t tid);

/* Parsers of a task's /proc texts (src/proc/parse.c). */
int prof_proc_parse_stat_blkio(const char *stat_text, uint64_t *ticks);
int prof_proc_parse_io(const char *io_text, uint64_t *read_bytes, uint64_t *write_bytes);
/* Field number `field` (1-based, as in proc(5): 14 = utime) of a
 * /proc/.../stat line; 0 or -EINVAL. */
int prof_proc_parse_stat_field(const char *stat_text, int field, uint64_t *value);
/* The number after key ("\nVmHWM:", "\nread_bytes:") in a /proc text; 0 / -EINVAL. */
int prof_proc_parse_keyed(const char *text, const char *key, uint64_t *v);

#endif
