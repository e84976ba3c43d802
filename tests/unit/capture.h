/*
 * capture.h - test helper (header-only): capture this thread's own user
 * registers and a copy of its own stack at a chosen point, in the same
 * shape perf delivers them (perf_regs numbering, stack copy from rsp), so
 * the unwinders and the symbolizer can be tested on real code with no
 * mocks.  The copy ends where the mapping holding rsp ends.
 */
#ifndef PROF_TEST_CAPTURE_H
#define PROF_TEST_CAPTURE_H

#include "prof/unwind.h"
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define CAPTURE_STACK_MAX 32768

struct capture {
	struct prof_user_regs regs;
	uint8_t stack[CAPTURE_STACK_MAX];
	uint64_t size;
	bool done;
};

/* Stores the general registers at PERF_REG_X86_* offsets, rip = this code. */
#define CAPTURE_REGS(regsp)                                                    \
	__asm__ volatile("movq %%rax, 0(%0)\n\t"                               \
			 "movq %%rbx, 8(%0)\n\t"                               \
			 "movq %%rcx, 16(%0)\n\t"                              \
			 "movq %%rdx, 24(%0)\n\t"                              \
			 "movq %%rsi, 32(%0)\n\t"                              \
			 "movq %%rdi, 40(%0)\n\t"                              \
			 "movq %%rbp, 48(%0)\n\t"                              \
			 "movq %%rsp, 56(%0)\n\t"                              \
			 "movq %%r8, 128(%0)\n\t"                              \
			 "movq %%r9, 136(%0)\n\t"                              \
			 "movq %%r10, 144(%0)\n\t"                             \
			 "movq %%r11, 152(%0)\n\t"                             \
			 "movq %%r12, 160(%0)\n\t"                             \
			 "movq %%r13, 168(%0)\n\t"                             \
			 "movq %%r14, 176(%0)\n\t"                             \
			 "movq %%r15, 184(%0)\n\t"                             \
			 "leaq 0(%%rip), %%rax\n\t"                            \
			 "movq %%rax, 64(%0)\n\t"                              \
			 : : "r"((regsp)->r) : "rax", "memory")

/* End of the mapping holding sp (the [stack] mapping normally; valgrind
 * gives the client stack another mapping). */
static __attribute__((unused)) uint64_t capture_stack_end(uint64_t sp)
{
	static uint64_t start, end;
	char line[512];

	if (sp >= start && sp < end)
		return end;
	FILE *f = fopen("/proc/self/maps", "r");
	while (f && fgets(line, sizeof(line), f)) {
		uint64_t s, e;
		if (sscanf(line, "%" SCNx64 "-%" SCNx64, &s, &e) == 2 && sp >= s && sp < e) {
			start = s;
			end = e;
		}
	}
	if (f)
		fclose(f);
	return sp >= start && sp < end ? end : sp;
}

/* Copies [rsp, min(rsp + 32K, stack end)); call right after CAPTURE_REGS.
 * Byte loop without ASan checks: the live stack holds redzones. */
static __attribute__((noinline, unused, no_sanitize_address)) void capture_stack(struct capture *c)
{
	uint64_t sp = c->regs.r[PERF_REG_X86_SP], end = capture_stack_end(sp);
	uint64_t n = end > sp ? end - sp : 0;
	const volatile uint8_t *src = (const volatile uint8_t *)(uintptr_t)sp;

	c->size = n < CAPTURE_STACK_MAX ? n : CAPTURE_STACK_MAX;
	for (uint64_t i = 0; i < c->size; i++)
		c->stack[i] = src[i];
	c->done = true;
}

#define CAPTURE(c)                                \
	do {                                      \
		CAPTURE_REGS(&(c)->regs);         \
		capture_stack(c);                 \
	} while (0)

#endif
