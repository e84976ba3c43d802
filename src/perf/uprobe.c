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
 * definition of the same name, and names carry prof's pid.
 */
#include "prof/perf.h"
#include <errno.h>
#include <fcntl.h>
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

/*
 * Where to put a function's entry probe so that the kernel emulates the
 * probed instruction instead of single-stepping it.  A uprobe traps
 * (int3), then runs the original instruction: push, jmp, call and jcc are
 * emulated in the trap, any other one is copied out of line and
 * single-stepped, a second trap.  On the 2-vCPU VM (AMD EPYC, KVM) a
 * probe on glibc's malloc (first instruction push) cost its target 0.6 us
 * a call, one on free (test %rdi,%rdi, then je) 11 us: the single step
 * is nearly all of it.  So the probe moves past a few leading
 * instructions that only set flags (test, cmp) or write a scratch
 * register (mov into rax, rcx, rdx, r8-r11), to the first emulated one:
 * the arguments (rdi, rsi), the stack pointer (the return address is
 * still at its top) and the frame (rbp, rbx, r12-r15) are as at the
 * entry.  Only straight-line code is skipped, so every call still passes
 * the probe once.  x86-64 encodings only; anything else stays at the
 * entry.
 */
#define SCRATCH_REGS (1u << 0 | 1u << 1 | 1u << 2 | 1u << 8 | 1u << 9 | 1u << 10 | 1u << 11)
#define MAX_SKIPPED 4

/* The length of a skippable instruction at c (n bytes there), or 0. */
static size_t skippable(const uint8_t *c, size_t n)
{
	size_t i = 0, rip = 0;
	uint8_t rex = 0, op, modrm, mod, reg, rm;

	if (n >= 1 && (c[0] & 0xf0) == 0x40)
		rex = c[i++];
	if (i + 2 > n)
		return 0;
	op = c[i++];
	modrm = c[i++];
	mod = modrm >> 6;
	reg = (uint8_t)((modrm >> 3 & 7) | (rex & 4 ? 8 : 0));
	rm = (uint8_t)((modrm & 7) | (rex & 1 ? 8 : 0));
	if (mod == 0 && (modrm & 7) == 5)
		rip = 4;	/* disp32(%rip) */
	else if (mod != 3)
		return 0;
	switch (op) {
	case 0x84: case 0x85: case 0x38: case 0x39: case 0x3a: case 0x3b:	/* test, cmp */
		i += rip;
		break;
	case 0x80: case 0x83:	/* cmp $imm8 */
		if ((modrm >> 3 & 7) != 7)
			return 0;
		i += rip + 1;
		break;
	case 0x81:		/* cmp $imm32 */
		if ((modrm >> 3 & 7) != 7)
			return 0;
		i += rip + 4;
		break;
	case 0x89:		/* mov reg, rm */
		if (rip || !(SCRATCH_REGS >> rm & 1))
			return 0;
		break;
	case 0x8b:		/* mov rm, reg */
		if (!(SCRATCH_REGS >> reg & 1))
			return 0;
		i += rip;
		break;
	default:
		return 0;
	}
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
	uint8_t code[64];
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
