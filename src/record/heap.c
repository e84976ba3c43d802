/*
 * heap.c - heap profiling during `prof record --heap` (see
 * include/prof/heap.h): the uprobe perf events, the launch-mode sampler
 * library, and the consumer that turns probe samples into heap samples.
 *
 * Each probe is a uprobe defined in tracefs (src/perf/uprobe.c says why
 * not the uprobe PMU: its inherited events broke fork), sampled as a
 * tracepoint.  Two sets of events, each with its own rings:
 *  - stk: probes whose stack is wanted (a sampled allocation; attach: the
 *    entry of malloc, calloc, realloc, posix_memalign, aligned_alloc,
 *    memalign, valloc, pvalloc), with the user regs and stack copy of the
 *    CPU event, fed to the replay engine, which unwinds and names them
 *    like CPU samples; and posix_memalign's return (below), read here;
 *  - reg: probes that only need a register (a free's pointer; attach: the
 *    return value of an allocation), small records read here directly.
 * Every event's sample id (the parent's for inherited events) says which
 * probe fired.  The merged drain hands both out in time order, so a free
 * comes after the allocation it frees.
 *
 * Design notes / invariants:
 *  - Weights: an allocation of s bytes sampled with probability p (launch:
 *    1 - exp(-s/rate); attach: about min(1, s/rate), the BPF programs'
 *    rule, src/perf/bpf_heap.c; attach at rate 1 or without BPF: 1)
 *    counts 1/p allocations and s/p bytes,
 *    rounded stochastically (unbiased; it adds at most 1/4 to a variance
 *    of (1-p)/p^2).  Its free repeats the same two weights on the same
 *    stack, so allocated minus freed is the live estimate.
 *  - blocks maps (pid, pointer) to the sampled block until its free; what
 *    is left at the end is live (for a program that exited: leaked), and
 *    is written once more when the recording ends, at its allocation's
 *    time (PROF_SAMPLE_LIVE_AT_END): how old each leak is.
 *  - posix_memalign (attach) returns its block through memptr, rdi at
 *    the entry, which the return no longer has: the entry's memptr waits
 *    with the entry, and the return's sample copies the user stack as the
 *    function returns (the kernel reads it then, like the registers).
 *    The caller's `void *p; posix_memalign(&p, ...)` puts memptr in its
 *    own frame, just above the return's stack pointer: *memptr is read
 *    from that copy.  A memptr outside it (a field of a heap object, a
 *    global) leaves the block unrecorded, counted (memptr_unseen) and
 *    said; no register is trusted to still hold the pointer.  Sampled,
 *    the BPF return program reads *memptr itself (bpf_probe_read_user,
 *    wherever it is) and hands the pointer over through a third set of
 *    events, `out` (BPF_OUTPUT, one per CPU), instead of the return's
 *    sample; the stack copy is its fallback.  Exact (--heap-rate 1), the
 *    same two programs, at rate 1, filter posix_memalign's probes alone
 *    (memptr_bpf) when BPF is there; without BPF the stack copy it is.
 *  - The sampler's own frames (the interposed malloc and the probe) are
 *    cut off the stack: an allocation is charged to the code that called
 *    the allocator.  In attach mode the probed entry point is the leaf and
 *    is cut the same way.
 */
#include "prof/heap.h"
#include "preload/flow.h"
#include "prof/proc.h"
#include "prof/symbol.h"
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef PROF_HEAP_SO
#define PROF_HEAP_SO "build/gen/libprofheap.so"
#endif

/* The sampler library, built by the Makefile and embedded whole. */
__asm__(".section .rodata\n"
	".global prof_heap_lib\n"
	"prof_heap_lib:\n"
	".incbin \"" PROF_HEAP_SO "\"\n"
	".global prof_heap_lib_end\n"
	"prof_heap_lib_end:\n"
	".previous\n");
extern const char prof_heap_lib[], prof_heap_lib_end[];

/* The user stack copied per allocation sample (at most; -g dwarf,N may
 * ask less).  The kernel reserves the whole copy in the ring for every
 * sample, and allocations come in bursts (a loop that fills a table):
 * with the CPU event's 32 KiB, a 16 MiB ring held ~500 samples, and a
 * loaded machine lost 900 of 12,000 samples of the planted workload at
 * --heap-rate 128 before the reader thread ran.  16 KiB still unwinds
 * ~150 frames of a typical allocation stack. */
#define HEAP_STACK_SIZE 16384

enum role {
	R_SAMPLED,		/* launch: prof_heap_alloc(ptr, size, kind) */
	R_SAMPLED_FREE,		/* launch: prof_heap_free(ptr) */
	R_ENTRY_SIZE_DI,	/* attach: malloc, valloc, pvalloc (size in rdi) */
	R_ENTRY_CALLOC,		/* attach: calloc (rdi * rsi) */
	R_ENTRY_SIZE_SI,	/* attach: aligned_alloc, memalign (size in rsi) */
	R_ENTRY_REALLOC,	/* attach: realloc (frees rdi, size in rsi) */
	R_ENTRY_MEMPTR,		/* attach: posix_memalign (memptr rdi, size in rdx) */
	R_RETURN,		/* attach: an allocation's return (rax) */
	R_RETURN_MEMPTR,	/* attach: posix_memalign's return (eax, *memptr) */
	R_FREE,			/* attach: free (rdi) */
};

struct probe {
	const char *func;
	enum role role;
	bool ret;		/* a return probe */
	bool stack;		/* in stk (else reg) */
	bool optional;		/* not every allocator has it */
};

static const struct probe launch_probes[] = {
	{ "prof_heap_alloc", R_SAMPLED, false, true, false },
	{ "prof_heap_free", R_SAMPLED_FREE, false, false, false },
};

static const struct probe attach_probes[] = {
	{ "malloc", R_ENTRY_SIZE_DI, false, true, false },
	{ "malloc", R_RETURN, true, false, false },
	{ "free", R_FREE, false, false, false },
	{ "calloc", R_ENTRY_CALLOC, false, true, true },
	{ "calloc", R_RETURN, true, false, true },
	{ "realloc", R_ENTRY_REALLOC, false, true, true },
	{ "realloc", R_RETURN, true, false, true },
	{ "aligned_alloc", R_ENTRY_SIZE_SI, false, true, true },
	{ "aligned_alloc", R_RETURN, true, false, true },
	{ "memalign", R_ENTRY_SIZE_SI, false, true, true },
	{ "memalign", R_RETURN, true, false, true },
	{ "valloc", R_ENTRY_SIZE_DI, false, true, true },
	{ "valloc", R_RETURN, true, false, true },
	{ "pvalloc", R_ENTRY_SIZE_DI, false, true, true },
	{ "pvalloc", R_RETURN, true, false, true },
	{ "posix_memalign", R_ENTRY_MEMPTR, false, true, true },
	{ "posix_memalign", R_RETURN_MEMPTR, true, true, true },
};

struct point {			/* one probe placed in a file */
	enum role role;
	bool ret, stack;
	bool bpf_set;			/* sampled attach: its program is set */
	uint64_t offset;
	uint64_t id;			/* its tracepoint */
	char name[48];			/* in UPROBE_GROUP */
};

#define UPROBE_GROUP "prof_heap"

struct block {			/* a sampled allocation not yet freed */
	uint32_t thread, node;
	uint64_t count_w, bytes_w;
	uint64_t time;			/* of the allocation */
};

struct pending {		/* attach: an entry waiting for its return */
	uint64_t time, size;
	uint32_t thread, node;
	bool valid;
	uint64_t sp;			/* the entry's stack pointer */
	uint64_t memptr;		/* posix_memalign: where the block goes (else 0) */
};

/* A pending entry older than this was abandoned (its return lost). */
#define NESTED_NS 1000000000ULL

struct prof_heap {
	struct prof_perf stk, reg;
	struct prof_perf out;			/* sampled attach: posix_memalign's blocks from BPF */
	struct prof_perf_config cfg;		/* the CPU event's, for out */
	struct prof_perf_event_desc desc, out_desc;
	uint64_t rate, seed, rng;
	pid_t self;			/* prof: getpid() is a system call per sample */
	bool attached;
	bool cpu_wide;			/* launch: the events are open, one per CPU */
	bool sampled;			/* attach: BPF programs keep sampled calls only */
	bool memptr_bpf;		/* exact attach: BPF programs on posix_memalign only */
	bool memptr_stk;		/* posix_memalign's return is among stk's probes */
	struct prof_bpf_heap bpf;
	char exact_why[160];		/* attach: why every call is taken ("" if asked) */
	char dir[64];			/* launch: the private directory ("" if none) */
	char path[4096];		/* the probed file */
	struct prof_heap_flow *flow;	/* launch: the pacing page (NULL: unpaced) */
	char *flow_path;
	uint64_t issued;		/* launch: the probe calls made while recording */
	uint64_t seen;			/* launch: their records read */
	VEC(struct point) points;
	struct u64map roles;		/* sample id -> role + 1 */
	char *old_preload, *old_rate;	/* launch: env before prof_heap_env_apply */
	bool had_preload, had_rate;

	struct prof_replay *rp;
	struct prof_profile *p;
	struct prof_replay_sink sink;
	uint32_t cut_module_path;	/* string id of the path whose frames are cut */
	VEC(struct block) blk;
	VEC(uint32_t) free_blk;		/* reusable blk slots */
	struct u64map blocks;		/* (pid, ptr) key -> blk index */
	struct u64map pending;		/* tid -> struct pending index + 1 */
	VEC(struct pending) pend;
	uint64_t allocs, frees, lost, unmatched;
	uint64_t memptr_unseen;		/* posix_memalign blocks stored off the copied stack */
};

static void set_mode_meta(struct prof_heap *h);

static int setup_perf(struct prof_heap *h, struct prof_perf *pf, const struct prof_perf_config *main,
		      bool stack)
{
	struct prof_perf_config cfg = *main;
	struct perf_event_attr *a;

	cfg.event = &h->desc;
	cfg.freq = 1;
	if (!stack) {
		cfg.callgraph = PROF_CG_NONE;
		cfg.ring_pages = MAX(64u, main->ring_pages / 8);
	} else {	/* room for ~2000 samples per CPU (root's default -m) */
		cfg.stack_size = MIN(cfg.stack_size, HEAP_STACK_SIZE);
		cfg.ring_pages = main->ring_pages * 2;
	}
	if (prof_perf_init(pf, &cfg) < 0)
		return -EINVAL;
	a = &pf->attr;
	a->freq = 0;
	a->sample_period = 1;
	a->mmap = a->mmap2 = a->comm = a->comm_exec = a->task = a->build_id = 0;	/* the CPU event has them */
	a->sample_type |= PERF_SAMPLE_ID | PERF_SAMPLE_REGS_USER;
	a->sample_type &= ~(uint64_t)PERF_SAMPLE_CALLCHAIN;	/* a uprobe fires in user mode */
	a->sample_regs_user = PROF_PERF_REGS_USER_MASK;
	pf->nr_regs = (uint64_t)__builtin_popcountll(a->sample_regs_user);
	a->wakeup_watermark = MIN(a->wakeup_watermark, 64u * 1024);
	return 0;
}

struct prof_heap *prof_heap_new(const struct prof_perf *main, uint64_t rate, uint64_t seed)
{
	struct prof_heap *h = xcalloc(1, sizeof(*h));

	h->desc = (struct prof_perf_event_desc){ "uprobe", PERF_TYPE_TRACEPOINT, 0, false };
	h->out_desc = (struct prof_perf_event_desc){ "bpf-output", PERF_TYPE_SOFTWARE,
						      PERF_COUNT_SW_BPF_OUTPUT, false };
	h->cfg = main->cfg;
	h->rate = rate ? rate : 1;
	h->seed = seed;
	h->self = getpid();
	h->rng = seed ? seed : (uint64_t)now_ns() ^ (uint64_t)h->self << 32;
	h->rng |= 1;
	for (int i = 0; i < PROF_BPF_HEAP_PROBES; i++)
		h->bpf.prog[i] = -1;
	h->bpf.out = -1;
	if (setup_perf(h, &h->stk, &main->cfg, true) < 0 ||
	    setup_perf(h, &h->reg, &main->cfg, false) < 0) {
		prof_heap_free(h);
		return NULL;
	}
	return h;
}

/* Whether a probe of the same kind is at off already: a second one would
 * fire too, each call costing two traps and taken twice. */
static bool placed(const struct prof_heap *h, uint64_t off, bool ret)
{
	for (size_t i = 0; i < h->points.n; i++)
		if (h->points.v[i].offset == off && h->points.v[i].ret == ret)
			return true;
	return false;
}

/* Places the probes of table in file; optional ones may be missing. */
static int place(struct prof_heap *h, const char *file, const struct probe *table, size_t n,
		 char *why, size_t len)
{
	snprintf(h->path, sizeof(h->path), "%s", file);
	if (!h->points.n)
		prof_uprobe_remove_stale(UPROBE_GROUP);
	for (size_t i = 0; i < n; i++) {
		uint64_t off;
		int ret = prof_elf_symbol_offset(file, table[i].func, &off);
		if (ret < 0 && table[i].optional)
			continue;
		if (ret < 0) {
			snprintf(why, len, "no function %s in %s (%s)", table[i].func, file, strerror(-ret));
			return ret;
		}
		if (h->attached)	/* its entry and return at one emulated instruction */
			off = prof_uprobe_fast_offset(file, off);
		if (placed(h, off, table[i].ret))	/* an alias: glibc 2.36's aligned_alloc is memalign */
			continue;
		struct point pt = { table[i].role, table[i].ret, table[i].stack, false, off, 0, "" };
		snprintf(pt.name, sizeof(pt.name), "p%d_%zu", (int)getpid(), h->points.n);
		if ((ret = prof_uprobe_define(UPROBE_GROUP, pt.name, file, off, pt.ret, &pt.id)) < 0) {
			snprintf(why, len, "cannot define a uprobe in tracefs (%s/uprobe_events): %s%s",
				 prof_tracefs_root(NULL) ? prof_tracefs_root(NULL) : "no tracefs",
				 strerror(-ret), ret == -EACCES || ret == -EPERM ? "; it takes root" : "");
			return ret;
		}
		VEC_PUSH(&h->points, pt);
		h->memptr_stk |= pt.role == R_RETURN_MEMPTR && pt.stack;
	}
	return 0;
}

/* Once no event uses them.  The kernel may still be letting an event go
 * (-EBUSY): the background remover (release_events) asks again, for up to
 * 10 s, since a definition left behind stays until the next --heap. */
static void remove_uprobes(const struct prof_heap *h, bool patient)
{
	for (size_t i = 0; i < h->points.n; i++)
		for (int tries = patient ? 200 : 1;
		     prof_uprobe_remove(UPROBE_GROUP, h->points.v[i].name) == -EBUSY && --tries > 0;)
			usleep(50000);
}

/* --- launch ----------------------------------------------------------------------- */

/* The file execvp would run for argv0, or NULL. */
static char *find_command(const char *argv0)
{
	const char *path = getenv("PATH");

	if (strchr(argv0, '/'))
		return access(argv0, X_OK) == 0 ? xstrdup(argv0) : NULL;
	for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
		const char *end = strchrnul(p, ':');
		char *cand = xasprintf("%.*s/%s", (int)(end - p), p, argv0);
		if (access(cand, X_OK) == 0)
			return cand;
		free(cand);
		p = *end ? end + 1 : end;
	}
	return NULL;
}

/* A #! script runs its interpreter, which is what LD_PRELOAD reaches. */
static bool is_script(const char *file)
{
	char m[2] = "";
	int fd = open(file, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	bool yes = read(fd, m, 2) == 2 && m[0] == '#' && m[1] == '!';
	close(fd);
	return yes;
}

static int write_library(struct prof_heap *h, char *why, size_t len)
{
	const char *tmp = getenv("TMPDIR");
	char *lib;
	int fd, ret = 0;

	snprintf(h->dir, sizeof(h->dir), "%s/prof-heap.XXXXXX",
		 tmp && *tmp && strlen(tmp) < 40 ? tmp : "/tmp");
	if (!mkdtemp(h->dir)) {
		ret = -errno;
		snprintf(why, len, "cannot create a directory for the sampler library (%s): %s", h->dir,
			 strerror(errno));
		h->dir[0] = '\0';
		return ret;
	}
	chmod(h->dir, 0755);	/* a command that changes user can still map it */
	lib = xasprintf("%s/libprofheap.so", h->dir);
	fd = open(lib, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0 || write_all(fd, prof_heap_lib, (size_t)(prof_heap_lib_end - prof_heap_lib)) < 0)
		ret = -(errno ? errno : EIO);
	if (fd >= 0 && close(fd) < 0 && !ret)
		ret = -errno;
	if (ret < 0)
		snprintf(why, len, "cannot write the sampler library %s: %s", lib, strerror(-ret));
	else
		ret = place(h, lib, launch_probes, ARRAY_SIZE(launch_probes), why, len);
	free(lib);
	return ret;
}

/* The page that paces the program to the pumps (preload/flow.h); without
 * it (no room in the directory) the program runs unpaced. */
static void open_flow(struct prof_heap *h)
{
	char *path = xasprintf("%s/flow", h->dir);
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	void *p = MAP_FAILED;

	if (fd >= 0 && ftruncate(fd, sizeof(struct prof_heap_flow)) == 0)
		p = mmap(NULL, sizeof(struct prof_heap_flow), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (fd >= 0)
		close(fd);
	if (p == MAP_FAILED) {
		unlink(path);
		free(path);
		return;
	}
	h->flow = p;
	h->flow_path = path;
	h->flow->recorder = getpid();
	h->stk.pace_issued = &h->flow->issued[0];
	h->stk.pace_settled = &h->flow->settled[0];
	h->reg.pace_issued = &h->flow->issued[1];
	h->reg.pace_settled = &h->flow->settled[1];
}

/* How many calls of each probe the program may make ahead of the pumps:
 * half an allocation ring of full stack copies (the kernel reserves the
 * whole copy), a free ring of records under 256 bytes. */
static void set_budgets(struct prof_heap *h, bool on)
{
	uint64_t page = prof_perf_page_size();
	uint64_t stk_ring = (uint64_t)h->stk.cfg.ring_pages * page, reg_ring = (uint64_t)h->reg.cfg.ring_pages * page;
	uint64_t stk_record = h->stk.cfg.stack_size + 8 * h->stk.nr_regs + 256;

	__atomic_store_n(&h->flow->budget[0], on ? MAX(1, stk_ring / stk_record / 2) : 0, __ATOMIC_RELAXED);
	__atomic_store_n(&h->flow->budget[1], on ? MAX(1, reg_ring / 256) : 0, __ATOMIC_RELAXED);
}

int prof_heap_prepare_launch(struct prof_heap *h, const char *argv0, char *why, size_t len)
{
	char *file = find_command(argv0);
	int dyn;

	if (file && !is_script(file) && (dyn = prof_elf_is_dynamic(file)) == 0) {
		snprintf(why, len, "'%s' is statically linked: its malloc cannot be interposed (LD_PRELOAD) and it has no shared allocator to probe",
			 argv0);
		free(file);
		return -ENOEXEC;
	}
	free(file);	/* not found: the exec error comes later, as without --heap */
	int ret = write_library(h, why, len);
	if (ret >= 0)
		open_flow(h);
	return ret;
}

void prof_heap_env_apply(struct prof_heap *h)
{
	const char *pre = getenv("LD_PRELOAD"), *rate = getenv("PROF_HEAP_RATE");
	char buf[32];

	h->had_preload = pre != NULL;
	h->old_preload = pre ? xstrdup(pre) : NULL;
	h->had_rate = rate != NULL;
	h->old_rate = rate ? xstrdup(rate) : NULL;
	/* first, so that its malloc is the one the program calls and the
	 * program's own preloaded allocator (jemalloc...) is the next one */
	char *v = pre && *pre ? xasprintf("%s:%s", h->path, pre) : xstrdup(h->path);
	setenv("LD_PRELOAD", v, 1);
	free(v);
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)h->rate);
	setenv("PROF_HEAP_RATE", buf, 1);
	if (h->seed) {
		snprintf(buf, sizeof(buf), "%llu", (unsigned long long)h->seed);
		setenv("PROF_HEAP_SEED", buf, 1);
	}
	if (h->flow_path)
		setenv(PROF_HEAP_FLOW_ENV, h->flow_path, 1);
}

void prof_heap_env_restore(struct prof_heap *h)
{
	if (h->had_preload)
		setenv("LD_PRELOAD", h->old_preload, 1);
	else
		unsetenv("LD_PRELOAD");
	if (h->had_rate)
		setenv("PROF_HEAP_RATE", h->old_rate, 1);
	else
		unsetenv("PROF_HEAP_RATE");
	unsetenv("PROF_HEAP_SEED");
	unsetenv(PROF_HEAP_FLOW_ENV);
	free(h->old_preload);
	free(h->old_rate);
	h->old_preload = h->old_rate = NULL;
}

/* --- attach ------------------------------------------------------------------------ */

/* The mapped file of pid that defines malloc: a preloaded or linked
 * allocator (jemalloc, tcmalloc) before libc, libc last. */
static char *find_allocator(pid_t pid)
{
	char maps[64], line[4352], *best = NULL;
	FILE *f;
	int best_rank = 0;

	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
	if (!(f = fopen(maps, "re")))
		return NULL;
	while (fgets(line, sizeof(line), f)) {
		char *file = strchr(line, '/');
		uint64_t off;
		if (!file || (!strstr(line, " r-xp ") && !strstr(line, " r-xs ")))
			continue;
		file[strcspn(file, "\n")] = '\0';
		if (best && !strcmp(best, file))
			continue;
		if (prof_elf_symbol_offset(file, "malloc", &off) < 0 ||
		    prof_elf_symbol_offset(file, "free", &off) < 0)
			continue;
		int rank = strstr(file, "/libc.so") || strstr(file, "/libc-") ? 1 : 2;
		if (rank > best_rank) {
			free(best);
			best = xstrdup(file);
			best_rank = rank;
		}
	}
	fclose(f);
	return best;
}

static void close_output(struct prof_heap *h)
{
	if (h->out.rings)
		prof_perf_close(&h->out);
	memset(&h->out, 0, sizeof(h->out));
}

/* Every call from now on, exactly; why: what stopped the sampled attach. */
static void take_every_call(struct prof_heap *h, const char *what, int err)
{
	prof_bpf_heap_close(&h->bpf);
	close_output(h);
	h->sampled = false;
	h->rate = 1;
	snprintf(h->exact_why, sizeof(h->exact_why), "%s (%s)%s", what, strerror(err),
		 err == EPERM || err == EACCES ? ": it takes CAP_BPF and CAP_PERFMON" : "");
	set_mode_meta(h);
}

/* The sampled attach: BPF programs that drop the unsampled calls' samples
 * before the kernel makes them; without them, every call exactly. */
static void load_bpf(struct prof_heap *h)
{
	uint64_t rate = MIN(h->rate, (uint64_t)UINT32_MAX);
	int ret = prof_bpf_heap_load(&h->bpf, rate, h->stk.ncpus);

	if (ret < 0) {
		take_every_call(h, "cannot load its BPF programs", -ret);
		return;
	}
	h->rate = rate;
	h->sampled = true;
}

/* Sampled attach: the BPF_OUTPUT events of posix_memalign's blocks, one
 * per CPU (a program writes to its own CPU's).  Without them the blocks
 * come from the return's stack copy only. */
static void open_output(struct prof_heap *h)
{
	struct prof_perf_config cfg = h->cfg;
	struct perf_event_attr *a = &h->out.attr;
	int ret = 0, opened = 0;

	cfg.event = &h->out_desc;
	cfg.freq = 1;
	cfg.callgraph = PROF_CG_NONE;
	cfg.ring_pages = MAX(64u, h->cfg.ring_pages / 8);	/* like reg's: a burst of 56-byte records */
	if (prof_perf_init(&h->out, &cfg) < 0)
		return;
	a->freq = 0;
	a->sample_period = 1;
	/* ip, tid, time first and cpu in sample_id: the layout the drain reads times from */
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
			 PERF_SAMPLE_RAW;
	a->mmap = a->mmap2 = a->comm = a->comm_exec = a->task = a->build_id = 0;
	a->wakeup_watermark = MIN(a->wakeup_watermark, 64u * 1024);
	for (int cpu = 0; cpu < h->out.ncpus && ret >= 0; cpu++) {
		if ((ret = prof_perf_open_cpu(&h->out, cpu)) == -ENODEV) {
			ret = 0;	/* offline: nothing runs there */
			continue;
		}
		if (ret >= 0)
			ret = prof_bpf_heap_set_output(&h->bpf, cpu, h->out.fds.v[h->out.fds.n - 1]);
		opened += ret >= 0;
	}
	if (ret < 0 || !opened) {
		warning("heap: cannot open the events that carry posix_memalign's blocks from BPF (%s): blocks whose pointer goes off the caller's stack are not recorded",
			strerror(ret < 0 ? -ret : ENODEV));
		close_output(h);
	}
}

int prof_heap_prepare_attach(struct prof_heap *h, pid_t pid, char *why, size_t len)
{
	char *file = find_allocator(pid);
	int ret;

	if (!file) {
		snprintf(why, len, "process %d maps no file that defines malloc and free (statically linked, or an allocator without symbols): nothing to probe",
			 (int)pid);
		return -ENOENT;
	}
	h->attached = true;
	if (h->rate > 1)
		load_bpf(h);
	else if (prof_bpf_heap_load(&h->bpf, 1, h->stk.ncpus) == 0)
		h->memptr_bpf = true;	/* else posix_memalign's blocks come from stack copies */
	if (h->sampled || h->memptr_bpf)
		open_output(h);
	if (h->memptr_bpf && !h->out.rings) {
		prof_bpf_heap_close(&h->bpf);
		h->memptr_bpf = false;
	}
	ret = place(h, file, attach_probes, ARRAY_SIZE(attach_probes), why, len);
	free(file);
	return ret;
}

/* --- events -------------------------------------------------------------------------- */

static enum prof_bpf_heap_probe bpf_kind(enum role r)
{
	switch (r) {
	case R_ENTRY_SIZE_DI:
		return PROF_BPF_HEAP_SIZE_DI;
	case R_ENTRY_CALLOC:
		return PROF_BPF_HEAP_CALLOC;
	case R_ENTRY_SIZE_SI:
		return PROF_BPF_HEAP_SIZE_SI;
	case R_ENTRY_REALLOC:
		return PROF_BPF_HEAP_REALLOC;
	case R_ENTRY_MEMPTR:
		return PROF_BPF_HEAP_MEMPTR;
	case R_RETURN:
		return PROF_BPF_HEAP_RETURN;
	case R_RETURN_MEMPTR:
		return PROF_BPF_HEAP_RETURN_MEMPTR;
	default:
		return PROF_BPF_HEAP_FREE;
	}
}

/*
 * Sampled attach: the probe's program, set on its first event (a tracefs
 * uprobe's programs belong to the probe: one filters all its events).  A
 * kernel that refuses the first one (too old for programs on uprobe
 * events) gets every call instead; a later refusal is an error.
 */
static int set_bpf(struct prof_heap *h, struct point *pt, int fd)
{
	bool first = true, memptr = pt->role == R_ENTRY_MEMPTR || pt->role == R_RETURN_MEMPTR;

	if (!(h->sampled || (h->memptr_bpf && memptr)) || pt->bpf_set)
		return 0;
	if (ioctl(fd, PERF_EVENT_IOC_SET_BPF, h->bpf.prog[bpf_kind(pt->role)]) == 0) {
		pt->bpf_set = true;
		return 0;
	}
	if (!h->sampled) {	/* exact: the return's stack copy instead */
		warning("heap: cannot set the BPF programs of posix_memalign's probes (%s): blocks whose pointer goes off the caller's stack are not recorded",
			strerror(errno));
		prof_bpf_heap_close(&h->bpf);
		close_output(h);
		h->memptr_bpf = false;
		return 0;
	}
	for (size_t i = 0; i < h->points.n; i++)
		first &= !h->points.v[i].bpf_set;
	if (!first)
		return error("cannot set the heap probes' BPF program: %s", strerror(errno)), -errno;
	take_every_call(h, "the kernel does not take BPF programs on uprobe events", errno);
	return 0;
}

static int open_point(struct prof_heap *h, struct point *pt, pid_t tid)
{
	struct prof_perf *pf = pt->stack ? &h->stk : &h->reg;
	size_t before = pf->fds.n;
	int ret = 0;

	pf->attr.config = pt->id;
	if (tid >= 0)
		ret = prof_perf_open_task(pf, tid);
	else	/* launch: one event per CPU, for every task (above) */
		for (int cpu = 0, n = 0; cpu < pf->ncpus; cpu++) {
			if ((ret = prof_perf_open_cpu(pf, cpu)) == -ENODEV)
				ret = 0;	/* offline: nothing runs there */
			else if (ret < 0)
				break;
			else if (++n == 1)
				before = pf->fds.n - 1;
		}
	if (ret < 0)
		return ret;
	if (pf->fds.n > before && (ret = set_bpf(h, pt, pf->fds.v[before])) < 0)
		return ret;
	for (size_t i = before; i < pf->fds.n; i++) {
		uint64_t id;
		if (ioctl(pf->fds.v[i], PERF_EVENT_IOC_ID, &id) == 0)
			u64map_put(&h->roles, id, (uint64_t)pt->role + 1);
	}
	return 0;
}

/*
 * Launched, the probes' events are per CPU for every task, not on the
 * command's tasks: only the programs prof starts map the sampler from its
 * private directory, so only they can hit the probes.  An event on a task
 * is switched out and in with it: on a 2-vCPU VM the two probes' events
 * added 0.5 us to each round trip of a pipe ping-pong between a recorded
 * process and an unrecorded one on one CPU (11.3 -> 11.8 us, medians of
 * 5), about 1% of redis-server's CPU under redis-benchmark (0.27 blocking
 * waits a request, 12.5 us of CPU a request).  A CPU's events stay on.
 */
int prof_heap_open_task(struct prof_heap *h, pid_t tid)
{
	if (!h->attached) {
		if (h->cpu_wide)
			return 0;
		h->cpu_wide = true;
		tid = -1;
	}
	for (size_t i = 0; i < h->points.n; i++) {
		int ret = open_point(h, &h->points.v[i], tid);
		if (ret < 0)
			return ret;
	}
	/* on now: enable_on_exec means nothing to a CPU's event, and nothing
	 * maps the sampler before the command's exec */
	if (tid < 0)
		prof_heap_enable(h);
	return 0;
}

void prof_heap_enable(struct prof_heap *h)
{
	prof_perf_enable(&h->stk);
	prof_perf_enable(&h->reg);
	if (h->out.rings)
		prof_perf_enable(&h->out);
	if (h->flow)
		set_budgets(h, true);
}

void prof_heap_disable(struct prof_heap *h)
{
	if (h->flow) {	/* the pumps stop: nothing waits for them */
		set_budgets(h, false);
		h->issued = __atomic_load_n(&h->flow->issued[0], __ATOMIC_ACQUIRE) +
			    __atomic_load_n(&h->flow->issued[1], __ATOMIC_ACQUIRE);
	}
	prof_perf_disable(&h->stk);
	prof_perf_disable(&h->reg);
	if (h->out.rings)
		prof_perf_disable(&h->out);
}

struct prof_perf *prof_heap_perf(struct prof_heap *h, int i)
{
	return i == 0 ? &h->stk : i == 1 ? &h->reg : h->out.rings ? &h->out : NULL;
}

/* --- the consumer ---------------------------------------------------------------------- */

static uint64_t rng_next(struct prof_heap *h)
{
	h->rng ^= h->rng >> 12;
	h->rng ^= h->rng << 25;
	h->rng ^= h->rng >> 27;
	return h->rng * 0x2545f4914f6cdd1dULL;
}

/* x rounded up or down at random, unbiased. */
static uint64_t round_random(struct prof_heap *h, double x)
{
	double f = floor(x);
	double u = (double)(rng_next(h) >> 11) / 9007199254740992.0;

	return (uint64_t)f + (u < x - f);
}

static uint64_t block_key(uint32_t pid, uint64_t ptr)
{
	return (ptr & 0xffffffffffffULL) | (uint64_t)(pid & 0xffff) << 48;
}

/* The caller of the allocator: up past the sampler's (or the probed
 * allocator's leaf) frames. */
static uint32_t cut_node(const struct prof_heap *h, uint32_t node)
{
	const struct prof_profile *p = h->p;
	bool first = true;

	while (node && node < p->nodes.n) {
		uint32_t f = p->nodes.v[node].frame, m = f < p->frames.n ? p->frames.v[f].module : PROF_NONE;
		if (m >= p->modules.n || p->modules.v[m].path != h->cut_module_path)
			break;
		if (h->attached && !first && !p->frames.v[f].inlined)
			break;	/* attach: only the probed entry point itself */
		node = p->nodes.v[node].parent;
		first = false;
	}
	return node;
}

static void add_block(struct prof_heap *h, uint64_t time, uint32_t pid, uint64_t ptr, uint64_t size,
		      uint32_t thread, uint32_t node)
{
	double prob = h->sampled ? prof_bpf_heap_keep_prob(size, h->rate)
		    : h->rate <= 1 ? 1.0 : -expm1(-(double)size / (double)h->rate);
	struct block b = { thread, node, 1, size, time };
	uint64_t key = block_key(pid, ptr), old;

	if (!ptr || prob <= 0)
		return;
	if (prob < 1) {
		b.count_w = round_random(h, 1 / prob);
		b.bytes_w = round_random(h, (double)size / prob);
	}
	if (u64map_get(&h->blocks, key, &old))	/* its free was lost: forget it */
		VEC_PUSH(&h->free_blk, (uint32_t)old);
	uint32_t slot;
	if (h->free_blk.n)
		slot = h->free_blk.v[--h->free_blk.n];
	else {
		slot = (uint32_t)h->blk.n;
		VEC_PUSH(&h->blk, b);
	}
	h->blk.v[slot] = b;
	u64map_put(&h->blocks, key, slot);
	h->sink.add(h->sink.arg, time, thread, node, PROF_M_ALLOCS, b.count_w, 0);
	h->sink.add(h->sink.arg, time, thread, node, PROF_M_ALLOC_BYTES, b.bytes_w, 0);
	h->allocs++;
}

static void free_block(struct prof_heap *h, uint64_t time, uint32_t pid, uint64_t ptr)
{
	uint64_t key = block_key(pid, ptr), slot;

	if (!ptr || !u64map_get(&h->blocks, key, &slot))
		return;
	const struct block *b = &h->blk.v[slot];
	h->sink.add(h->sink.arg, time, b->thread, b->node, PROF_M_FREES, b->count_w, 0);
	h->sink.add(h->sink.arg, time, b->thread, b->node, PROF_M_FREE_BYTES, b->bytes_w, 0);
	u64map_del(&h->blocks, key);
	VEC_PUSH(&h->free_blk, (uint32_t)slot);
	h->frees++;
}

static enum role role_of(const struct prof_heap *h, const struct prof_perf_sample *s)
{
	uint64_t r;

	return u64map_get(&h->roles, s->id, &r) ? (enum role)(r - 1) : (enum role)-1;
}

static struct pending *pending_of(struct prof_heap *h, uint32_t tid)
{
	uint64_t i;

	if (!u64map_get(&h->pending, tid, &i)) {
		VEC_PUSH(&h->pend, ((struct pending){ 0 }));
		i = h->pend.n;
		u64map_put(&h->pending, tid, i);
	}
	return &h->pend.v[i - 1];
}

/*
 * Exact attach: an allocator entry inside one still waiting for its
 * return (glibc's realloc(NULL, n) jumps to malloc) is the same
 * allocation, charged to the outer call's stack: the inner one's return
 * address is already the outer's return probe trampoline, which no
 * unwinder passes ([unknown]).  Its return comes first and takes the
 * outer entry; the outer's return finds none.  Sampled, the BPF
 * programs drop nested calls themselves (bpf_heap.c), and a realloc
 * kept only for its free leaves an entry that no return takes.
 */
static bool nested(struct prof_heap *h, uint32_t tid, uint64_t sp, uint64_t time)
{
	uint64_t i;

	if (h->sampled || !u64map_get(&h->pending, tid, &i))
		return false;
	const struct pending *pe = &h->pend.v[i - 1];
	return pe->valid && sp <= pe->sp && time - pe->time < NESTED_NS;
}

/* A stack sample, resolved by the engine. */
static void on_sample(void *arg, const struct prof_replay_sample *rs)
{
	struct prof_heap *h = arg;
	const struct prof_perf_sample *s = rs->s;
	uint64_t r[PERF_REG_X86_64_MAX] = { 0 };
	uint32_t node;

	if (rs->event != &h->stk)
		return;
	prof_perf_sample_regs(s, r, PERF_REG_X86_64_MAX);
	node = cut_node(h, rs->node);
	switch (role_of(h, s)) {
	case R_SAMPLED:
		add_block(h, s->time, s->pid, r[PERF_REG_X86_DI], r[PERF_REG_X86_SI], rs->thread, node);
		return;
	case R_ENTRY_REALLOC:
		if (nested(h, s->tid, r[PERF_REG_X86_SP], s->time))
			return;
		free_block(h, s->time, s->pid, r[PERF_REG_X86_DI]);
		*pending_of(h, s->tid) = (struct pending){ s->time, r[PERF_REG_X86_SI], rs->thread, node, true,
							   r[PERF_REG_X86_SP] };
		return;
	case R_ENTRY_SIZE_DI:
	case R_ENTRY_CALLOC:
	case R_ENTRY_SIZE_SI:
	case R_ENTRY_MEMPTR: {
		enum role role = role_of(h, s);
		uint64_t size = role == R_ENTRY_SIZE_SI ? r[PERF_REG_X86_SI]
			      : role == R_ENTRY_MEMPTR ? r[PERF_REG_X86_DX] : r[PERF_REG_X86_DI];
		if (role == R_ENTRY_CALLOC)
			size *= r[PERF_REG_X86_SI];
		if (nested(h, s->tid, r[PERF_REG_X86_SP], s->time))
			return;
		*pending_of(h, s->tid) = (struct pending){ s->time, size, rs->thread, node, true,
							   r[PERF_REG_X86_SP],
							   role == R_ENTRY_MEMPTR ? r[PERF_REG_X86_DI] : 0 };
		return;
	}
	default:
		return;
	}
}

/* A register-only sample (frees, returns), straight from the ring. */
static int on_reg_record(void *ctx, const struct perf_event_header *hdr)
{
	struct prof_heap *h = ctx;
	struct prof_perf_sample s;
	uint64_t r[PERF_REG_X86_64_MAX] = { 0 };

	if (hdr->type == PERF_RECORD_LOST || hdr->type == PERF_RECORD_LOST_SAMPLES) {
		h->lost += prof_perf_lost_count(hdr);
		return 0;
	}
	if (hdr->type != PERF_RECORD_SAMPLE || prof_perf_parse_sample(&h->reg.attr, hdr, &s) < 0 ||
	    (pid_t)s.pid == h->self)
		return 0;
	h->seen++;
	prof_perf_sample_regs(&s, r, PERF_REG_X86_64_MAX);
	switch (role_of(h, &s)) {
	case R_SAMPLED_FREE:
	case R_FREE:
		free_block(h, s.time, s.pid, r[PERF_REG_X86_DI]);
		return 0;
	case R_RETURN: {
		struct pending *pe = pending_of(h, s.tid);
		if (pe->valid && pe->memptr)
			return 0;	/* an allocator call inside posix_memalign: its return has the block */
		if (!pe->valid) {
			h->unmatched++;
			return 0;
		}
		pe->valid = false;
		add_block(h, s.time, s.pid, r[PERF_REG_X86_AX], pe->size, pe->thread, pe->node);
		return 0;
	}
	default:
		return 0;
	}
}

static void on_lost(void *arg, const void *event, uint32_t type, uint64_t time, uint64_t n)
{
	struct prof_heap *h = arg;

	if (event == &h->stk)
		h->lost += n;
}

static const struct prof_replay_ops heap_ops = {
	.sample = on_sample,
	.lost = on_lost,
};

/* The posix_memalign entry that tid's return completes, taken; NULL
 * (counted) when there is none. */
static struct pending *take_memptr_entry(struct prof_heap *h, uint32_t tid)
{
	struct pending *pe = pending_of(h, tid);

	if (!pe->valid || !pe->memptr) {
		h->unmatched++;
		return NULL;
	}
	pe->valid = false;
	return pe;
}

/* posix_memalign's return: eax 0, and the block at memptr, read from the
 * stack the sample copied as the function returned. */
static void memptr_return(struct prof_heap *h, const struct prof_perf_sample *s)
{
	uint64_t r[PERF_REG_X86_64_MAX] = { 0 }, ptr;
	const struct pending *pe = take_memptr_entry(h, s->tid);

	if (!pe)
		return;
	prof_perf_sample_regs(s, r, PERF_REG_X86_64_MAX);
	uint64_t sp = r[PERF_REG_X86_SP], at = pe->memptr - sp;
	if ((uint32_t)r[PERF_REG_X86_AX])
		return;	/* failed: nothing allocated */
	if (pe->memptr < sp || at > s->stack_size || s->stack_size - at < sizeof(ptr)) {
		h->memptr_unseen++;
		return;
	}
	memcpy(&ptr, s->stack + at, sizeof(ptr));
	add_block(h, s->time, s->pid, ptr, pe->size, pe->thread, pe->node);
}

/* posix_memalign's block from the BPF return program (sampled attach). */
static int on_out_record(void *ctx, const struct perf_event_header *hdr)
{
	struct prof_heap *h = ctx;
	struct prof_perf_sample s;
	uint64_t ptr;

	if (hdr->type == PERF_RECORD_LOST || hdr->type == PERF_RECORD_LOST_SAMPLES) {
		h->lost += prof_perf_lost_count(hdr);
		return 0;
	}
	if (hdr->type != PERF_RECORD_SAMPLE || prof_perf_parse_sample(&h->out.attr, hdr, &s) < 0 ||
	    s.raw_size < sizeof(ptr))
		return 0;
	const struct pending *pe = take_memptr_entry(h, s.tid);
	if (!pe)
		return 0;
	memcpy(&ptr, s.raw, sizeof(ptr));
	add_block(h, s.time, s.pid, ptr, pe->size, pe->thread, pe->node);
	return 0;
}

static int feed_stk(void *ctx, const struct perf_event_header *hdr)
{
	struct prof_heap *h = ctx;
	struct prof_perf_sample s;

	if (hdr->type == PERF_RECORD_SAMPLE)
		h->seen++;
	/* no stack to unwind for a return: read here, in the same time order
	 * (parsed twice otherwise, so only where that probe is placed) */
	if (h->memptr_stk && hdr->type == PERF_RECORD_SAMPLE && prof_perf_parse_sample(&h->stk.attr, hdr, &s) == 0 &&
	    role_of(h, &s) == R_RETURN_MEMPTR) {
		if ((pid_t)s.pid != h->self)
			memptr_return(h, &s);
		return 0;
	}
	prof_replay_record(h->rp, &h->stk.attr, &h->stk, hdr);
	return 0;
}

size_t prof_heap_sources(struct prof_heap *h, struct prof_perf_source *out)
{
	out[0] = (struct prof_perf_source){ &h->stk, feed_stk, h };
	out[1] = (struct prof_perf_source){ &h->reg, on_reg_record, h };
	if (!h->out.rings)
		return 2;
	out[2] = (struct prof_perf_source){ &h->out, on_out_record, h };
	return 3;
}

/* The rate and the way in, in p's meta data (again when the sampled
 * attach falls back to every call). */
static void set_mode_meta(struct prof_heap *h)
{
	char buf[32], *mode;

	if (!h->p)
		return;
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)h->rate);
	prof_meta_set(h->p, "heap_rate", buf);
	if (!h->attached)
		mode = xstrdup("preloaded sampler");
	else if (h->sampled)
		mode = xstrdup("uprobes on the allocator, sampled by BPF");
	else if (h->exact_why[0])
		mode = xasprintf("uprobes on the allocator, every call: %s", h->exact_why);
	else
		mode = xstrdup("uprobes on the allocator");
	prof_meta_set(h->p, "heap_mode", mode);
	free(mode);
}

void prof_heap_attach(struct prof_heap *h, struct prof_replay *rp, struct prof_profile *p,
		      const struct prof_replay_sink *sink)
{
	h->rp = rp;
	h->p = p;
	h->sink = *sink;
	h->cut_module_path = prof_intern(p, h->path);
	set_mode_meta(h);
	prof_meta_set(p, "heap_allocator", h->path);
	prof_replay_add_consumer(rp, &heap_ops, h);
}

void prof_heap_finish(struct prof_heap *h)
{
	char buf[32];
	size_t it = 0, n = 0;
	uint64_t key, slot;

	/* records the kernel dropped without saying so (preload/flow.h) */
	if (h->flow && h->issued > h->seen + h->lost)
		h->lost = h->issued - h->seen;

	while (u64map_next(&h->blocks, &it, &key, &slot)) {
		n++;
		const struct block *b = &h->blk.v[slot];
		h->sink.add(h->sink.arg, b->time, b->thread, b->node, PROF_M_ALLOCS, b->count_w,
			    PROF_SAMPLE_LIVE_AT_END);
		h->sink.add(h->sink.arg, b->time, b->thread, b->node, PROF_M_ALLOC_BYTES, b->bytes_w,
			    PROF_SAMPLE_LIVE_AT_END);
	}

	/* a file cut inside the list has fewer: the leak view refuses it */
	snprintf(buf, sizeof(buf), "%zu", n);
	prof_meta_set(h->p, "heap_live_blocks", buf);
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)h->lost);
	prof_meta_set(h->p, "heap_lost", buf);
	if (h->memptr_unseen) {
		snprintf(buf, sizeof(buf), "%llu", (unsigned long long)h->memptr_unseen);
		prof_meta_set(h->p, "heap_memptr_unseen", buf);
	}
}

void prof_heap_stats(const struct prof_heap *h, struct prof_heap_stats *st)
{
	*st = (struct prof_heap_stats){ h->allocs, h->frees, h->lost, h->unmatched, h->memptr_unseen,
					 h->rate, h->attached, h->sampled,
					 h->exact_why[0] ? h->exact_why : NULL };
	if (h->flow) {
		st->waits = __atomic_load_n(&h->flow->waits, __ATOMIC_RELAXED);
		st->wait_ns = __atomic_load_n(&h->flow->wait_ns, __ATOMIC_RELAXED);
		st->gave_up = __atomic_load_n(&h->flow->gave_up, __ATOMIC_RELAXED);
	}
}

/*
 * Releasing a uprobe event (its last reference) unregisters its probe, and
 * the kernel does that one event at a time, each waiting for an RCU grace
 * period: 55-90 ms per event on the loaded 2-vCPU VM, so the four events
 * of a launch held `prof record` 0.3 s after its command ended (closed
 * from four threads the waits did not overlap).  The rings are unmapped
 * here (the fds still hold the events, so that is quick), and a
 * grandchild that inherited the fds drops the last references, after prof
 * closed its own copies: prof returns at once and the kernel's cleanup
 * finishes in the background.  The events are disabled already.
 */
static void release_events(struct prof_heap *h)
{
	struct prof_perf *pfs[2] = { &h->stk, &h->reg };
	VEC(int) fds = { 0 };
	pid_t pid = -1;

	for (int i = 0; i < 2; i++) {
		struct prof_perf *pf = pfs[i];
		if (!pf->rings)
			continue;
		prof_perf_pump_free(pf);
		for (int c = 0; c < pf->ncpus; c++)
			if (pf->rings[c].meta) {
				munmap(pf->rings[c].meta, pf->rings[c].map_len);
				pf->rings[c].meta = NULL;
			}
		for (size_t k = 0; k < pf->fds.n; k++)
			VEC_PUSH(&fds, pf->fds.v[k]);
		pf->fds.n = 0;
	}
	int go[2] = { -1, -1 };
	char c;

	if (fds.n && pipe2(go, O_CLOEXEC) == 0 && (pid = fork()) == 0) {
		close(go[1]);
		if (fork() == 0) {	/* reparented: nobody waits for it */
			while (read(go[0], &c, 1) < 0 && errno == EINTR)
				;	/* EOF: prof closed its copies */
			for (size_t k = 0; k < fds.n; k++)
				close(fds.v[k]);
			remove_uprobes(h, true);
		}
		_exit(0);
	} else if (go[0] >= 0 && pid > 0) {
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	for (size_t k = 0; k < fds.n; k++)	/* quick while the grandchild holds them */
		close(fds.v[k]);
	if (go[0] >= 0 && pid > 0) {
		close(go[0]);
		close(go[1]);	/* lets the grandchild go on */
	} else {
		if (go[0] >= 0) {
			close(go[0]);
			close(go[1]);
		}
		remove_uprobes(h, false);
	}
	VEC_FREE(&fds);
}

void prof_heap_free(struct prof_heap *h)
{
	if (!h)
		return;
	release_events(h);
	prof_bpf_heap_close(&h->bpf);
	if (h->stk.rings)
		prof_perf_close(&h->stk);
	if (h->reg.rings)
		prof_perf_close(&h->reg);
	if (h->out.rings)
		prof_perf_close(&h->out);
	if (h->flow) {
		munmap(h->flow, sizeof(*h->flow));
		unlink(h->flow_path);
		free(h->flow_path);
	}
	if (h->dir[0]) {	/* mapped copies stay valid: the file is only unlinked */
		unlink(h->path);
		rmdir(h->dir);
	}
	VEC_FREE(&h->points);
	VEC_FREE(&h->blk);
	VEC_FREE(&h->free_blk);
	VEC_FREE(&h->pend);
	u64map_free(&h->roles);
	u64map_free(&h->blocks);
	u64map_free(&h->pending);
	free(h->old_preload);
	free(h->old_rate);
	free(h);
}
