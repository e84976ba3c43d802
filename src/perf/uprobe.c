/*
 * uprobe.c - uprobes defined in tracefs (uprobe_events), for `prof record
 * --heap`: a probe at a file offset becomes a tracepoint whose id a
 * PERF_TYPE_TRACEPOINT event samples.
 *
 * Why not the uprobe PMU (perf_event_open with the path in attr.config1):
 * the kernel copies that path from user memory again whenever it creates
 * an inherited copy of the event, in the context of the task that forks.
 * There the pointer is prof's, not the task's: every fork and every
 * pthread_create of the profiled program failed with EFAULT (redis-server:
 * "Can't initialize Background Jobs"; strace: "fork: Bad address").  A
 * tracefs uprobe is named by an id, which copies fine.
 *
 * Definitions outlive prof if it is killed; prof_uprobe_define replaces a
 * definition of the same name, and names carry prof's pid, so that the
 * next prof removes those of a prof that is gone (prof_uprobe_remove_stale).
 */
#include "prof/perf.h"
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int append_line(const char *root, const char *line)
{
	char path[256];
	int fd, ret = 0;

	snprintf(path, sizeof(path), "%s/uprobe_events", root);
	if ((fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC)) < 0)
		return -errno;
	if (write(fd, line, strlen(line)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

int prof_uprobe_define(const char *group, const char *name, const char *file, uint64_t offset,
		       bool ret, uint64_t *id)
{
	const char *root = prof_tracefs_root(NULL);
	char *line, *idpath, *s;
	int err;

	if (!root)
		return -(errno ? errno : ENOENT);
	prof_uprobe_remove(group, name);	/* a stale one of a killed prof */
	line = xasprintf("%c:%s/%s %s:0x%llx\n", ret ? 'r' : 'p', group, name, file,
			 (unsigned long long)offset);
	err = append_line(root, line);
	free(line);
	if (err < 0)
		return err;
	idpath = xasprintf("%s/events/%s/%s/id", root, group, name);
	s = read_file(idpath, NULL);
	free(idpath);
	if (!s)
		return -ENOENT;
	*id = strtoull(s, NULL, 10);
	free(s);
	return *id ? 0 : -EINVAL;
}

int prof_uprobe_remove(const char *group, const char *name)
{
	const char *root = prof_tracefs_root(NULL);
	char *line;
	int err;

	if (!root)
		return -ENOENT;
	line = xasprintf("-:%s/%s\n", group, name);
	err = append_line(root, line);
	free(line);
	return err;
}

/* "p:GROUP/pPID_N FILE:0x..." -> PID of a prof that is gone, else 0 (a
 * running one's, another group's, another naming's). */
static pid_t stale_owner(const char *line, const char *group, char *name, size_t len)
{
	size_t g = strlen(group);
	const char *n = line + 2, *end;
	char *after;

	if ((line[0] != 'p' && line[0] != 'r') || line[1] != ':' || strncmp(n, group, g) ||
	    n[g] != '/' || n[g + 1] != 'p')
		return 0;
	long pid = strtol(n + g + 2, &after, 10);
	if (pid <= 0 || *after != '_' || !(end = strchr(n, ' ')) || (size_t)(end - n) >= len)
		return 0;
	if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
		return 0;
	snprintf(name, len, "%.*s", (int)(end - n - g - 1), n + g + 1);
	return (pid_t)pid;
}

int prof_uprobe_remove_stale(const char *group)
{
	const char *root = prof_tracefs_root(NULL);
	char *path, *list, name[128];
	int removed = 0;

	if (!root)
		return 0;
	path = xasprintf("%s/uprobe_events", root);
	list = read_file(path, NULL);
	free(path);
	for (char *line = list, *next; line && *line; line = next) {
		if ((next = strchr(line, '\n')))
			*next++ = '\0';
		else
			next = line + strlen(line);
		if (stale_owner(line, group, name, sizeof(name)) && prof_uprobe_remove(group, name) == 0)
			removed++;
	}
	free(list);
	return removed;
}

/*
 * Where to put a function's entry probe so that the kernel emulates the
 * probed instruction instead of single-stepping it.  A uprobe traps
 * (int3), then runs the original instruction: push, jmp, call and jcc are
 * emulated in the trap, any other one is copied out of line and
 * single-stepped, a second trap.  On the 2-vCPU VM (AMD EPYC, KVM) a
 * probe on glibc's malloc (first instruction push) cost its target 0.6 us
 * a call, one on free (test %rdi,%rdi, then je) 11 us: the single step
 * is nearly all of it.  So the probe moves past a few leading
 * instructions that only set flags (test, cmp, endbr64) or write a scratch
 * register (mov, ALU and shifts into rax, rcx, rdx, r8-r11; memory is
 * only read), to the first emulated one:
 * the arguments (rdi, rsi), the stack pointer (the return address is
 * still at its top) and the frame (rbp, rbx, r12-r15) are as at the
 * entry.  Only straight-line code is skipped, so every call still passes
 * the probe once.  A wrong length would put the probe inside an
 * instruction and break the program, so only a short list of encodings
 * is decoded (unit-tested on the three allocators' entry code); anything
 * else stays at the entry.  x86-64 only.
 */
#define SCRATCH_REGS (1u << 0 | 1u << 1 | 1u << 2 | 1u << 8 | 1u << 9 | 1u << 10 | 1u << 11)
#define MAX_SKIPPED 12
#define NO_WRITE 16	/* writes flags only */

/* Bytes of the ModRM operand at c (ModRM, SIB, displacement), 0 if cut. */
static size_t modrm_len(const uint8_t *c, size_t n)
{
	uint8_t mod = c[0] >> 6, rm = c[0] & 7;
	size_t len = 1;

	if (mod != 3 && rm == 4) {	/* SIB */
		if (n < 2)
			return 0;
		if (mod == 0 && (c[1] & 7) == 5)
			len += 4;	/* no base: disp32 */
		len++;
	} else if (mod == 0 && rm == 5) {
		len += 4;		/* disp32(%rip) */
	}
	len += mod == 1 ? 1 : mod == 2 ? 4 : 0;
	return len <= n ? len : 0;
}

/*
 * The length of the instruction at c if it may be skipped, 0 if not: it
 * reads registers or memory and writes only flags or one scratch
 * register (*dst), never memory.  A short list of encodings: the
 * leading instructions of glibc's, jemalloc's and tcmalloc's allocator
 * entry points; anything else ends the search.
 */
static size_t skippable(const uint8_t *c, size_t n)
{
	size_t i = 0, m;
	uint8_t rex = 0, op, mod, reg, rm, ext;
	unsigned dst, imm = 0;

	if (n >= 4 && c[0] == 0xf3 && c[1] == 0x0f && c[2] == 0x1e && c[3] == 0xfa)
		return 4;	/* endbr64: a no-op but as a branch target */
	while (i < n && (c[i] == 0x64 || c[i] == 0x65))	/* %fs, %gs */
		i++;
	if (i < n && (c[i] & 0xf0) == 0x40)
		rex = c[i++];
	if (i >= n)
		return 0;
	op = c[i++];
	switch (op) {	/* no ModRM: the accumulator with imm32, mov imm to reg */
	case 0x05: case 0x0d: case 0x25: case 0x2d: case 0x35:	/* add/or/and/sub/xor %eax */
		return i + 4 <= n ? i + 4 : 0;
	case 0x3d: case 0xa9:	/* cmp/test %eax, imm32 */
		return i + 4 <= n ? i + 4 : 0;
	case 0xb8: case 0xb9: case 0xba: case 0xbb: case 0xbc: case 0xbd: case 0xbe: case 0xbf:
		dst = (op & 7u) | (rex & 1 ? 8u : 0u);
		i += rex & 8 ? 8 : 4;
		return SCRATCH_REGS >> dst & 1 && i <= n ? i : 0;
	default:
		break;
	}
	if (op == 0x0f) {	/* movzx, movsx */
		if (i >= n || (c[i] != 0xb6 && c[i] != 0xb7 && c[i] != 0xbe && c[i] != 0xbf))
			return 0;
		op = (uint8_t)0x8b;	/* reg <- r/m, like mov */
		i++;
	}
	if (i >= n || !(m = modrm_len(c + i, n - i)))
		return 0;
	mod = c[i] >> 6;
	ext = c[i] >> 3 & 7;
	reg = (uint8_t)(ext | (rex & 4 ? 8 : 0));
	rm = (uint8_t)((c[i] & 7) | (rex & 1 ? 8 : 0));
	i += m;
	switch (op) {
	case 0x38: case 0x39: case 0x3a: case 0x3b: case 0x84: case 0x85:	/* cmp, test */
		dst = NO_WRITE;
		break;
	case 0x01: case 0x09: case 0x21: case 0x29: case 0x31: case 0x89:	/* op/mov reg -> r/m */
		dst = mod == 3 ? rm : 0xff;
		break;
	case 0x03: case 0x0b: case 0x23: case 0x2b: case 0x33: case 0x8b:	/* op/mov r/m -> reg */
		dst = reg;
		break;
	case 0x8d:		/* lea */
		dst = mod == 3 ? 0xff : reg;
		break;
	case 0x80: case 0x83: case 0x81: case 0xc1:	/* ALU/shift r/m, imm */
		imm = op == 0x81 ? 4 : 1;
		dst = op != 0xc1 && ext == 7 ? NO_WRITE : mod == 3 ? rm : 0xff;
		if (op == 0xc1 && (ext == 2 || ext == 3 || ext == 6))	/* rcl, rcr, sal alias */
			dst = 0xff;
		break;
	default:
		return 0;
	}
	i += imm;
	if (dst != NO_WRITE && (dst > 15 || !(SCRATCH_REGS >> dst & 1)))
		return 0;
	return i <= n ? i : 0;
}

/* Is the instruction at c one the kernel emulates (jcc, jmp, call, push)? */
static bool emulated(const uint8_t *c, size_t n)
{
	size_t i = n >= 1 && (c[0] == 0x41) ? 1 : 0;	/* push %r8-%r15 */

	if (i >= n)
		return false;
	if (i == 1)
		return c[1] >= 0x50 && c[1] <= 0x57;
	return (c[0] >= 0x70 && c[0] <= 0x7f) || (c[0] >= 0x50 && c[0] <= 0x57) ||
	       c[0] == 0xe8 || c[0] == 0xe9 || c[0] == 0xeb ||
	       (n >= 2 && c[0] == 0x0f && c[1] >= 0x80 && c[1] <= 0x8f);
}

uint64_t prof_uprobe_fast_offset(const char *file, uint64_t offset)
{
	uint8_t code[96];
	size_t at = 0;
	ssize_t n = -1;
	int fd = open(file, O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		n = pread(fd, code, sizeof(code), (off_t)offset);
		close(fd);
	}
#if defined(__x86_64__)
	for (int k = 0; n > 0 && k <= MAX_SKIPPED && at < (size_t)n; k++) {
		size_t len;
		if (emulated(code + at, (size_t)n - at))
			return offset + at;
		if (!(len = skippable(code + at, (size_t)n - at)))
			break;
		at += len;
	}
#endif
	return offset;
}
