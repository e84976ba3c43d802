/*
 * python-priv.h - inside src/python: the BPF frame reader (bpf.c), which
 * the reader (reader.c) uses when it could be loaded, and the raw frame
 * chain both ways of reading produce.
 */
#ifndef PROF_PYTHON_PRIV_H
#define PROF_PYTHON_PRIV_H

#include "prof/python.h"

/* One frame as read, before it is interpreted (reader.c, frames_of);
 * named: the code object's co_filename and co_qualname as they were at
 * the sample (read by the BPF program), to check it against later. */
struct pyraw {
	uint64_t code, instr;
	uint64_t filename, qualname;
	uint8_t owner, is_entry;
	bool named;
};

struct prof_pybpf;
/* Loads the program and its maps: 0, or -errno (no libbpf in this build,
 * no privilege, no BPF in the kernel); the reader reads alone then. */
int prof_pybpf_open(struct prof_pybpf **out);
void prof_pybpf_free(struct prof_pybpf *b);
/* The program's fd, for PERF_EVENT_IOC_SET_BPF; the switch-out one's, for
 * the off-CPU accountant to go on to. */
int prof_pybpf_prog_fd(const struct prof_pybpf *b);
int prof_pybpf_switch_prog_fd(const struct prof_pybpf *b);
/* The program keeps the samples of pids and their forks only. */
int prof_pybpf_only(struct prof_pybpf *b, const pid_t *pids, size_t n);
/* Tells the program that tid of pid runs CPython with this thread state. */
void prof_pybpf_add_thread(struct prof_pybpf *b, pid_t pid, pid_t tid, uint64_t tstate,
			   const struct prof_py_layout *l);
void prof_pybpf_del_thread(struct prof_pybpf *b, pid_t tid);
/* The chain the program read at tid's sample at time (up to max frames,
 * innermost first): the count, or -ENOENT when it read none for it.
 * switched: the sample is a kept switch-out's (PYBPF_REC_SWITCH). */
int prof_pybpf_take(struct prof_pybpf *b, pid_t tid, uint64_t time, bool switched, struct pyraw *out,
		    size_t max);

#endif
