/*
 * unwind_perf.c - the unwinders on real kernel samples: the test samples
 * itself with perf_event_open (cpu-clock, user regs + 32 KiB user stack,
 * exactly what prof record asks for) while spinning in a chain of
 * noinline functions without frame pointers, then unwinds every sample
 * with libdw and libunwind.  Every sample taken inside spin_leaf must
 * unwind completely through spin_mid, spin_top and main, and the two
 * backends must agree pc for pc.  Samples inside the vdso (clock_gettime
 * in a loop) must unwind through the vdso's CFI as well.  Skips when the kernel refuses the event.
 */
#include "tap.h"
#include "prof/replay.h"
#include "prof/unwind.h"
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define NOINL __attribute__((noinline, noclone))
#define DATA_PAGES 64
#define STACK_SIZE 32768

static volatile uint64_t sink;

NOINL void spin_leaf(uint64_t n)
{
	uint64_t x = sink;
	for (uint64_t i = 0; i < n; i++)
		x = x * 6364136223846793005ULL + i;
	sink = x;
}

NOINL void spin_mid(uint64_t n)
{
	spin_leaf(n);
	sink++;
}

/* clock_gettime in a loop: samples land in the vdso */
NOINL void spin_vdso(int n)
{
	struct timespec ts;
	for (int i = 0; i < n; i++)
		clock_gettime(CLOCK_MONOTONIC, &ts);
	sink += (uint64_t)ts.tv_nsec;
}

NOINL void spin_top(uint64_t deadline_ns)
{
	while (now_ns() < deadline_ns) {
		spin_mid(20000);
		spin_vdso(300);
	}
	sink++;
}

struct sample {
	struct prof_user_regs regs;
	uint8_t *stack;
	uint64_t stack_size;
};

static VEC(struct sample) samples;

/* Copies len bytes at ring offset off, handling the wrap-around. */
static void ring_copy(const uint8_t *data, uint64_t size, uint64_t off, void *dst, size_t len)
{
	for (size_t i = 0; i < len; i++)
		((uint8_t *)dst)[i] = data[(off + i) % size];
}

static void parse_sample(const uint8_t *rec, size_t len)
{
	const uint8_t *p = rec + sizeof(struct perf_event_header), *end = rec + len;
	struct sample s = { 0 };
	uint64_t abi, size;

	p += 8 + 8;	/* ip, pid/tid */
	memcpy(&abi, p, 8);
	p += 8;
	if (abi) {	/* regs in ascending bit order of the mask */
		for (int bit = 0; bit < 64; bit++)
			if (PROF_PERF_REGS_USER_MASK & (1ULL << bit)) {
				memcpy(&s.regs.r[bit], p, 8);
				p += 8;
			}
	}
	memcpy(&size, p, 8);
	p += 8;
	if (!abi || !size || p + size + 8 > end)
		return;
	uint64_t dyn;
	memcpy(&dyn, p + size, 8);
	s.stack_size = MIN(dyn, size);
	s.stack = xmalloc(s.stack_size ? s.stack_size : 1);
	memcpy(s.stack, p, s.stack_size);
	VEC_PUSH(&samples, s);
}

static void drain(struct perf_event_mmap_page *meta, const uint8_t *data, uint64_t size)
{
	static uint8_t rec[65536 + 64];
	uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE), tail = meta->data_tail;

	while (tail < head) {
		struct perf_event_header h;
		ring_copy(data, size, tail, &h, sizeof(h));
		if (h.size < sizeof(h))
			break;
		ring_copy(data, size, tail, rec, h.size);
		if (h.type == PERF_RECORD_SAMPLE)
			parse_sample(rec, h.size);
		tail += h.size;
	}
	__atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
}

static int record_self(void)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = 1000000,	/* 1 ms */
		.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_REGS_USER |
			       PERF_SAMPLE_STACK_USER,
		.sample_regs_user = PROF_PERF_REGS_USER_MASK,
		.sample_stack_user = STACK_SIZE,
		.exclude_kernel = 1,
		.exclude_hv = 1,
		.disabled = 1,
	};
	int fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
	if (fd < 0)
		return -errno;
	size_t page = (size_t)sysconf(_SC_PAGESIZE), len = page * (1 + DATA_PAGES);
	void *ring = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (ring == MAP_FAILED) {
		close(fd);
		return -errno;
	}
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	/* 30 ms slices until 150 samples (cpu-clock counts CPU time, which a
	 * loaded machine hands out slowly), 3 s at most */
	for (int i = 0; i < 100 && samples.n < 150; i++) {
		spin_top(now_ns() + 30000000);
		drain(ring, (const uint8_t *)ring + page, page * DATA_PAGES);
	}
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	drain(ring, (const uint8_t *)ring + page, page * DATA_PAGES);
	munmap(ring, len);
	close(fd);
	return 0;
}

static const char *name_of(struct prof_profile *p, struct prof_symbolizer *s,
			   struct prof_addrspace *as, uint64_t pc, bool ret)
{
	uint32_t ids[16];
	size_t n = prof_symbolize_user(s, as, pc, ret, ids, 16);
	return prof_str(p, p->frames.v[ids[n - 1]].func);
}

int main(void)
{
	int rc = record_self();
	if (rc < 0) {
		printf("1..0 # SKIP perf_event_open refused: %s\n", strerror(-rc));
		return 0;
	}
	struct prof_profile prof;
	prof_profile_init(&prof);
	struct prof_symbolizer *sym = prof_symbolizer_new(&prof);
	struct prof_addrspace *as = prof_addrspace_new(getpid());
	prof_addrspace_load_proc(as);
	struct prof_unwinder *dw = prof_unwinder_new(PROF_UNWIND_LIBDW);
	struct prof_unwinder *lu = prof_unwinder_new(PROF_UNWIND_LIBUNWIND);
	setenv("PROF_UNWIND_NO_FAST_PATH", "1", 1);
	struct prof_unwinder *slow = prof_unwinder_new(PROF_UNWIND_LIBDW);
	unsetenv("PROF_UNWIND_NO_FAST_PATH");
	static uint64_t a[PROF_MAX_FRAMES], b[PROF_MAX_FRAMES], c[PROF_MAX_FRAMES];
	size_t in_leaf = 0, good = 0, agree = 0, complete = 0, in_vdso = 0, vdso_good = 0;

	ok(samples.n >= 20, "%zu samples while spinning", samples.n);
	for (size_t i = 0; i < samples.n; i++) {
		struct sample *s = &samples.v[i];
		struct prof_ustack st = { s->stack, s->stack_size };
		struct prof_unwind_result ra, rb, rg;
		prof_unwind(dw, as, getpid(), &s->regs, &st, a, PROF_MAX_FRAMES, &ra);
		prof_unwind(lu, as, getpid(), &s->regs, &st, b, PROF_MAX_FRAMES, &rb);
		prof_unwind(slow, as, getpid(), &s->regs, &st, c, PROF_MAX_FRAMES, &rg);
		complete += ra.complete;
		agree += ra.n == rb.n && !memcmp(a, b, ra.n * sizeof(a[0])) && ra.complete == rb.complete &&
			 ra.n == rg.n && !memcmp(a, c, ra.n * sizeof(a[0])) && ra.complete == rg.complete;
		const struct prof_mapping *m = prof_addrspace_find(as, a[0]);
		if (m && (m->flags & PROF_MAP_VDSO)) {
			in_vdso++;
			size_t before = vdso_good;
			for (size_t j = 1; ra.complete && j < ra.n; j++)
				if (!strcmp(name_of(&prof, sym, as, a[j], true), "main")) {
					vdso_good++;
					break;
				}
			if (before == vdso_good) {
				printf("# vdso sample %zu: %zu frames, %s:", i, ra.n, ra.stop ? ra.stop : "complete");
				for (size_t j = 0; j < ra.n && j < 8; j++)
					printf(" %s@%" PRIx64, name_of(&prof, sym, as, a[j], j > 0), a[j]);
				printf("\n");
			}
		}
		if (strcmp(name_of(&prof, sym, as, a[0], false), "spin_leaf"))
			continue;
		in_leaf++;
		bool chain = ra.complete && ra.n >= 5 &&
			     !strcmp(name_of(&prof, sym, as, a[1], true), "spin_mid") &&
			     !strcmp(name_of(&prof, sym, as, a[2], true), "spin_top");
		for (size_t j = 3; chain && j < ra.n; j++)
			if (!strcmp(name_of(&prof, sym, as, a[j], true), "main"))
				break;
			else if (j == ra.n - 1)
				chain = false;
		good += chain;
		if (!chain && in_leaf - good <= 3)
			printf("# sample %zu: %zu frames, %s\n", i, ra.n, ra.stop ? ra.stop : "complete");
	}
	printf("# %zu samples, %zu in spin_leaf, %zu of those fully unwound to main; %zu complete overall\n",
	       samples.n, in_leaf, good, complete);
	ok(in_leaf >= samples.n / 4, "many samples are in spin_leaf (%zu)", in_leaf);
	printf("# %zu samples in the vdso, %zu unwound completely to main\n", in_vdso, vdso_good);
	is_u64(vdso_good, in_vdso, "samples in the vdso unwind through it to main");
	is_u64(good, in_leaf, "every spin_leaf sample unwinds spin_leaf <- spin_mid <- spin_top <- ... main");
	is_u64(agree, samples.n, "libdw (fast and general path) and libunwind agree on every sample");

	for (size_t i = 0; i < samples.n; i++)
		free(samples.v[i].stack);
	VEC_FREE(&samples);
	prof_unwinder_free(dw);
	prof_unwinder_free(lu);
	prof_unwinder_free(slow);
	prof_addrspace_free(as);
	prof_symbolizer_free(sym);
	prof_profile_free(&prof);
	prof_elf_cache_free();
	return done_testing();
}
