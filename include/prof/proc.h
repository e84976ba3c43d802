/*
 * proc.h - small /proc readers the recorder needs: does a pid exist, the
 * thread ids of a process, a task's comm.
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
/* /proc/PID/task/TID/comm without the newline into buf; 0 or -errno. */
int prof_proc_comm(pid_t pid, pid_t tid, char *buf, size_t len);
/* The process (thread group) of thread tid, or -1 when there is none. */
pid_t prof_proc_tgid(pid_t tid);

#endif
