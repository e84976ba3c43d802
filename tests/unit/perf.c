/*
 * perf.c - unit test of the kernel side of `prof record` (src/perf): opens
 * real per-CPU cpu-clock events on a spinning child, drains the rings and
 * checks that samples carry user regs and a stack copy, that an executable
 * mmap shows up as MMAP2 and that FORK/EXIT/COMM decode.  Skips when the
 * kernel refuses perf events.  Also checks the parsers reject short records.
 * The same run again through the ring pump (pump.c) with a consumer that
 * sleeps 100 ms per drain and a ring that holds ~30 ms of samples: the
 * pump must keep (nearly) everything and hand out shrunk DWARF samples.
 * And where a uprobe goes past a function's first instructions (the entry
 * code of glibc's, jemalloc's and tcmalloc's allocators, written to a file)
 * and where it must stay; and the keep probability of the heap's BPF
 * sampling rule against its integer definition.
 * And the BTF reader (btf.c) on the running kernel's task_struct, when
 * the kernel has BTF.
 */
#include "prof/perf.h"
#include "tap.h"
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct counts {
	uint64_t samples, with_stack, with_regs, mmap2_exec, comm, fork, exit_, lost, bad;
	uint64_t stack_field_over;	/* samples whose stack copy exceeds dyn_size rounded up */
	char comm_name[32];
};

static int on_record(void *ctx, const struct perf_event_header *h)
{
	struct counts *c = ctx;
	extern struct prof_perf *test_pf;
	struct prof_perf_sample s;
	struct prof_perf_mmap2 m;
	struct prof_perf_comm cm;
	struct prof_perf_task t;

	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		if (prof_perf_parse_sample(&test_pf->attr, h, &s) < 0) {
			c->bad++;
			break;
		}
		c->samples++;
		c->with_regs += s.regs_abi != 0;
		c->with_stack += s.stack_size > 0;
		if (s.stack) {
			uint64_t field;
			memcpy(&field, s.stack - 8, 8);
			c->stack_field_over += field != ((s.stack_size + 7) & ~7ULL);
		}
		break;
	case PERF_RECORD_MMAP2:
		if (prof_perf_parse_mmap2(h, &m) < 0)
			c->bad++;
		else if (m.prot & PROT_EXEC)
			c->mmap2_exec++;
		break;
	case PERF_RECORD_COMM:
		if (prof_perf_parse_comm(h, &cm) < 0)
			c->bad++;
		else {
			c->comm++;
			snprintf(c->comm_name, sizeof(c->comm_name), "%s", cm.comm);
		}
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		if (prof_perf_parse_task(h, &t) < 0)
			c->bad++;
		else if (h->type == PERF_RECORD_FORK)
			c->fork++;
		else
			c->exit_++;
		break;
	default:
		c->lost += prof_perf_lost_count(h);
	}
	return 0;
}

struct prof_perf *test_pf;

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void child_body(int rfd)
{
	char b;
	volatile uint64_t x = 0;
	uint64_t end;

	if (read(rfd, &b, 1) != 1)
		_exit(1);
	prctl(PR_SET_NAME, "perfunit-spin");
	int fd = open("/proc/self/exe", O_RDONLY);
	if (fd >= 0)
		mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	if (fork() == 0)
		_exit(0);
	wait(NULL);
	/* 300 ms of CPU time, not wall time: the machine may be loaded. */
	end = cpu_ns() + 300000000ULL;
	while (cpu_ns() < end)
		x++;
	_exit(0);
}

static void test_live(bool pump)
{
	struct prof_perf pf;
	struct prof_perf_config cfg = {
		.event = prof_perf_event_find("cpu-clock"), .freq = 999,
		.callgraph = PROF_CG_DWARF, .stack_size = 8192, .ring_pages = 64,
	};
	struct timespec nap = { 0, 100 * 1000000L };
	struct counts c = { 0 };
	int p[2], status;
	pid_t pid;

	ok(prof_perf_init(&pf, &cfg) == 0, "init");
	test_pf = &pf;
	if (pipe(p) < 0)
		return;
	pid = fork();
	if (pid == 0) {
		close(p[1]);
		child_body(p[0]);
	}
	close(p[0]);
	prof_quiet = 1;
	if (prof_perf_open_task(&pf, pid) < 0) {
		printf("ok %d # SKIP perf events refused here\n", ++tap_n);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		prof_perf_close(&pf);
		return;
	}
	ok(prof_perf_enable(&pf) == 0, "enable");
	if (pump)
		ok(prof_perf_pump_start(&pf, 0) == 0, "pump thread started");
	if (write(p[1], "g", 1) != 1)
		return;
	while (waitpid(pid, &status, WNOHANG) == 0) {
		prof_perf_poll(&pf, 50);
		prof_perf_drain(&pf, on_record, &c);
		if (pump)	/* a slow consumer: the 256 KiB ring holds ~30 ms */
			nanosleep(&nap, NULL);
	}
	prof_perf_disable(&pf);
	prof_perf_drain(&pf, on_record, &c);
	ok(c.samples >= 50, "got %" PRIu64 " samples in 300 ms of CPU at 999 Hz", c.samples);
	if (pump) {
		ok(c.lost * 10 <= c.samples, "pump: %" PRIu64 " lost of %" PRIu64 " with a consumer asleep 100 ms per drain",
		   c.lost, c.samples);
		is_u64(c.stack_field_over, 0, "pump: every DWARF sample shrunk to its filled stack bytes");
	}
	is_u64(c.with_regs, c.samples, "every sample has user regs");
	ok(c.with_stack * 10 >= c.samples * 9, "%" PRIu64 " of %" PRIu64 " samples carry a stack copy", c.with_stack, c.samples);
	ok(c.mmap2_exec >= 1, "executable mmap seen as MMAP2");
	ok(c.comm >= 1, "COMM seen");
	is_str(c.comm_name, "perfunit-spin", "comm decoded");
	ok(c.fork >= 1 && c.exit_ >= 1, "FORK (%" PRIu64 ") and EXIT (%" PRIu64 ") seen", c.fork, c.exit_);
	is_u64(c.bad, 0, "no record failed to parse");
	prof_perf_close(&pf);
}

static void test_short_records(void)
{
	uint64_t buf[8] = { 0 };
	struct perf_event_header *h = (void *)buf;
	struct prof_perf_comm cm;
	struct prof_perf_mmap2 m;
	struct prof_perf_sample s;
	struct prof_perf pf;
	struct prof_perf_config cfg = {
		.event = prof_perf_event_find("cpu-clock"), .freq = 99,
		.callgraph = PROF_CG_DWARF, .stack_size = 8192, .ring_pages = 8,
	};

	prof_perf_init(&pf, &cfg);
	h->type = PERF_RECORD_COMM;
	h->size = 16;
	ok(prof_perf_parse_comm(h, &cm) < 0, "short COMM rejected");
	h->type = PERF_RECORD_MMAP2;
	ok(prof_perf_parse_mmap2(h, &m) < 0, "short MMAP2 rejected");
	h->type = PERF_RECORD_SAMPLE;
	h->size = 40;
	ok(prof_perf_parse_sample(&pf.attr, h, &s) < 0, "short SAMPLE rejected");
	prof_perf_close(&pf);
	cfg.stack_size = 70000;
	ok(prof_perf_init(&pf, &cfg) == -EINVAL, "stack size over the u16 record limit rejected");
	ok(prof_perf_event_find("cycles") && !prof_perf_event_find("bogus"), "event table");
}

/* The offset prof_uprobe_fast_offset picks in code (n bytes). */
static uint64_t fast_offset(const uint8_t *code, size_t n)
{
	char path[] = "/tmp/prof-unit-uprobe.XXXXXX";
	int fd = mkstemp(path);
	uint64_t off = (uint64_t)-1;

	if (fd >= 0 && write(fd, "pad!", 4) == 4 && write(fd, code, n) == (ssize_t)n)
		off = prof_uprobe_fast_offset(path, 4) - 4;
	if (fd >= 0)
		close(fd);
	unlink(path);
	return off;
}

static void test_uprobe_offsets(void)
{
	static const uint8_t glibc_free[] = { 0x48, 0x85, 0xff, 0x0f, 0x84, 0xbf, 0, 0, 0, 0x55 };
	static const uint8_t glibc_malloc[] = { 0x41, 0x54, 0x55, 0x53 };
	static const uint8_t jemalloc_malloc[] = { 0x48, 0x81, 0xff, 0, 0x10, 0, 0, 0x0f, 0x87, 1, 2, 3, 4 };
	static const uint8_t tcmalloc_free[] = { 0x48, 0x8b, 0x05, 1, 2, 3, 4, 0x48, 0x85, 0xc0, 0x0f, 0x84, 1, 2, 3, 4 };
	static const uint8_t glibc_valloc[] = { 0x80, 0x3d, 1, 2, 3, 4, 0, 0x53 };
	static const uint8_t jemalloc_free[] = {	/* to its jne, 48 bytes in */
		0x48, 0x89, 0xf8, 0x48, 0x8b, 0x15, 0x0e, 0x53, 0x0a, 0x00, 0x48, 0x89, 0xf9,
		0x48, 0xc1, 0xe8, 0x1a, 0x48, 0x81, 0xe1, 0x00, 0x00, 0x00, 0xc0, 0x25, 0xf0,
		0x00, 0x00, 0x00, 0x64, 0x48, 0x03, 0x04, 0x25, 0x00, 0x00, 0x00, 0x00, 0x48,
		0x01, 0xd0, 0x48, 0x3b, 0x88, 0xb0, 0x01, 0x00, 0x00, 0x0f, 0x85, 0x8a, 0, 0, 0 };
	static const uint8_t cet_entry[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x41, 0x55 };	/* endbr64; push %r13 */
	static const uint8_t stores[] = { 0x48, 0x89, 0x07, 0x75, 0x02 };	/* mov %rax,(%rdi); jne */
	static const uint8_t lea_rsp[] = { 0x48, 0x8d, 0x64, 0x24, 0x08, 0x53 };	/* lea 8(%rsp),%rsp */
	static const uint8_t writes_rdi[] = { 0x48, 0x89, 0xc7, 0x75, 0x02 };	/* mov %rax,%rdi; jne */
	static const uint8_t writes_rbx[] = { 0x48, 0x89, 0xfb, 0x53 };	/* mov %rdi,%rbx; push */
	static const uint8_t moves_rsp[] = { 0x48, 0x83, 0xec, 0x10, 0x53 };	/* sub $16,%rsp; push */
	static const uint8_t loads_rsi[] = { 0x48, 0x8b, 0x35, 1, 2, 3, 4, 0x53 };	/* mov x(%rip),%rsi */

	is_u64(fast_offset(glibc_free, sizeof(glibc_free)), 3, "glibc free: past test %%rdi,%%rdi to je");
	is_u64(fast_offset(glibc_malloc, sizeof(glibc_malloc)), 0, "glibc malloc: push is emulated at the entry");
	is_u64(fast_offset(jemalloc_malloc, sizeof(jemalloc_malloc)), 7, "jemalloc malloc: past cmp $0x1000,%%rdi to ja");
	is_u64(fast_offset(tcmalloc_free, sizeof(tcmalloc_free)), 10, "tcmalloc free: past a load into rax and a test");
	is_u64(fast_offset(glibc_valloc, sizeof(glibc_valloc)), 7, "glibc valloc: past cmpb $0,x(%%rip)");
	is_u64(fast_offset(jemalloc_free, sizeof(jemalloc_free)), 48,
	       "jemalloc free: past 9 loads, ALU ops and shifts into scratch registers to jne");
	is_u64(fast_offset(cet_entry, sizeof(cet_entry)), 4, "a CET build's endbr64 is skipped");
	is_u64(fast_offset(stores, sizeof(stores)), 0, "a store to memory stays at the entry");
	is_u64(fast_offset(lea_rsp, sizeof(lea_rsp)), 0, "a lea into rsp stays");
	is_u64(fast_offset(writes_rdi, sizeof(writes_rdi)), 0, "an instruction writing rdi stays at the entry");
	is_u64(fast_offset(writes_rbx, sizeof(writes_rbx)), 0, "one writing rbx stays");
	is_u64(fast_offset(moves_rsp, sizeof(moves_rsp)), 0, "one moving rsp stays");
	is_u64(fast_offset(loads_rsi, sizeof(loads_rsi)), 0, "a load into rsi stays");
	is_u64(fast_offset(glibc_free, 2), 0, "a cut instruction stays");
	is_u64(prof_uprobe_fast_offset("/nonexistent/prof", 123), 123, "an unreadable file stays");
}

/* prof_bpf_heap_keep_prob against its definition: the share of u in
 * [0, 2^32) with u * rate < size << 32. */
static void test_heap_keep_prob(void)
{
	ok(prof_bpf_heap_keep_prob(64, 128) == 0.5, "64 B at rate 128: 1/2 exactly");
	ok(prof_bpf_heap_keep_prob(128, 128) == 1 && prof_bpf_heap_keep_prob(1 << 20, 524288) == 1,
	   "a block of the rate or more: always");
	ok(prof_bpf_heap_keep_prob(1, 3) == 1431655766.0 / 4294967296.0, "1 B at rate 3: ceil(2^32/3) of 2^32");
	ok(prof_bpf_heap_keep_prob(5, 1) == 1, "rate 1: every allocation");
}

/* Members the off-CPU filter reads, and ones that must not be found. */
static void test_btf(void)
{
	static const char *const paths[] = { "on_rq", "se", "se.sched_delayed", "pid", "no_such_member",
					     "se.no_such_member", "pid.not_a_struct" };
	struct prof_btf_field f[ARRAY_SIZE(paths)], g;

	if (access("/sys/kernel/btf/vmlinux", R_OK) != 0) {
		ok(prof_btf_members("task_struct", paths, 1, &g) < 0 && !g.found, "no BTF: nothing found");
		return;
	}
	ok(prof_btf_members("task_struct", paths, ARRAY_SIZE(paths), f) == 0, "BTF read");
	ok(f[0].found && f[0].size == 4, "task_struct.on_rq: an int");
	ok(f[3].found && f[3].size == 4 && f[3].off > f[0].off, "task_struct.pid: an int, further on");
	ok(f[1].found && f[1].size > 64, "task_struct.se: a struct");
	ok(!f[2].found || (f[2].size == 1 && f[2].off > f[1].off && f[2].off < f[1].off + f[1].size),
	   "se.sched_delayed, where present: a byte inside se");
	ok(!f[4].found && !f[5].found && !f[6].found, "absent members, and a path through an int, are not found");
	ok(prof_btf_members("no_such_struct_x", paths, 1, &g) == 0 && !g.found, "an absent struct");

	/* hw_perf_event keeps a cpu-clock event's hrtimer in an anonymous
	 * struct inside an anonymous union: found as C finds it */
	static const char *const ev[] = { "hw", "hw.hrtimer", "hw.hrtimer.node.expires", "hw.no_such_member" };
	struct prof_btf_field h[ARRAY_SIZE(ev)];
	ok(prof_btf_members("perf_event", ev, ARRAY_SIZE(ev), h) == 0, "BTF read for perf_event");
	ok(h[0].found && h[1].found && h[1].off >= h[0].off && h[1].off + h[1].size <= h[0].off + h[0].size,
	   "perf_event.hw.hrtimer: through the anonymous members, inside hw");
	ok(h[2].found && h[2].size == 8 && h[2].off >= h[1].off && h[2].off + 8 <= h[1].off + h[1].size,
	   "hw.hrtimer.node.expires: 8 bytes inside the hrtimer");
	ok(!h[3].found, "a name in no anonymous member is not found");
}

/* An accountant's sample as the replay engine takes a perf sample: the
 * registers packed in sample_regs_user's bit order (as the kernel writes
 * them), the stack as copied, a user chain behind PERF_CONTEXT_USER; a
 * kernel thread's has none of them. */
static void test_swa_perf_sample(void)
{
	struct perf_event_attr a = { .sample_regs_user = PROF_PERF_REGS_USER_MASK };
	uint8_t stack[64] = { 7 };
	uint64_t ips[3] = { 0x401000, 0x401100, 0x401200 }, regs[PERF_REG_X86_64_MAX], chain[8], r[PERF_REG_X86_64_MAX];
	struct prof_bpf_swa_sample smp = { .user = true, .stack = stack, .stack_size = sizeof(stack) };
	struct prof_bpf_swa_thread t = { .tid = 12, .pid = 10, .t_out = 5000, .sample = &smp };
	struct prof_perf_sample s;

	for (int i = 0; i < PERF_REG_X86_64_MAX; i++)
		smp.uregs[i] = 100 + (uint64_t)i;
	prof_bpf_swa_perf_sample(&t, &a, regs, chain, ARRAY_SIZE(chain), &s);
	ok(s.pid == 10 && s.tid == 12 && s.time == 5000 && !s.kernel && s.ip == 100 + PERF_REG_X86_IP,
	   "who, when, and the user ip");
	ok(prof_perf_sample_regs(&s, r, ARRAY_SIZE(r)) == 17 && r[PERF_REG_X86_SP] == 100 + PERF_REG_X86_SP &&
		   r[PERF_REG_X86_R15] == 100 + PERF_REG_X86_R15 && r[PERF_REG_X86_AX] == 100 + PERF_REG_X86_AX,
	   "registers by perf number through the mask");
	ok(s.stack == stack && s.stack_size == sizeof(stack) && !s.nr_callchain, "the stack copy, no chain");
	smp.stack = NULL;
	smp.stack_size = 0;
	smp.chain = ips;
	smp.nchain = 3;
	prof_bpf_swa_perf_sample(&t, &a, regs, chain, 3, &s);
	ok(s.nr_callchain == 3 && prof_perf_callchain(&s, 0) == PERF_CONTEXT_USER &&
		   prof_perf_callchain(&s, 2) == 0x401100,
	   "a user chain behind PERF_CONTEXT_USER, cut to the room");
	smp.user = false;
	prof_bpf_swa_perf_sample(&t, &a, regs, chain, ARRAY_SIZE(chain), &s);
	ok(!s.regs_abi && !s.regs && !s.stack && !s.nr_callchain, "a kernel thread: no user side");
}

int main(void)
{
	test_swa_perf_sample();
	test_uprobe_offsets();
	test_heap_keep_prob();
	test_short_records();
	test_btf();
	test_live(false);
	test_live(true);
	return done_testing();
}
