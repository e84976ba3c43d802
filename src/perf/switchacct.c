/*
 * switchacct.c - loads the in-kernel off-CPU accountant (the BPF programs
 * src/perf/bpf/switches.c, embedded as build/gen/switches.bpf.o), which
 * runs at every switch-out on the sched_switch raw tracepoint, and reads
 * what it keeps: per-thread totals from its map, and from its ring buffer
 * the intervals it hands over one by one, the kernel stacks of D-state
 * switch-outs and the stack samples of the kept ones (see
 * include/prof/perf.h, prof_bpf_swa_*).
 *
 * Why: with PERF_RECORD_SWITCH every context switch writes two records
 * into a ring inside the switch, and the recorder reads and pairs both;
 * on a busy server that is tens of thousands of records a second, billed
 * to the server's own scheduler.  Here one program run at the switch-out
 * times the interval, and the recorder reads totals a few times a second
 * (docs/offcpu.md).
 *
 * Design notes / invariants:
 *  - The map is read in batches (BPF_MAP_LOOKUP_BATCH): one system call
 *    per SCAN_BATCH threads, not two per thread.
 *  - The ring buffer's records are not woken for (BPF_RB_NO_WAKEUP).  The
 *    CPU ring's pump thread empties it into memory after each of its
 *    passes (prof_bpf_swa_pull, at least every 50 ms), and the recorder
 *    takes them from there when it drains its perf rings: its main thread
 *    can spend 150 ms and more on one batch (the first of prof record -a
 *    on a busy host), in which the kept switch-outs of every thread that
 *    blocks for the first time would overflow a ring sized for steady
 *    state.  The ring and the copies are behind one lock, taken by the
 *    pump's pull and the recorder's drain.
 *  - A sample's registers come as the kernel's struct pt_regs (x86-64)
 *    and are handed on by perf_regs number, as a perf sample has them.
 *  - Without libbpf (HAVE_LIBBPF unset) prof_bpf_swa_open fails and the
 *    recorder keeps the switch records and the hand-assembled filter.
 */
#include "prof/perf.h"
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void prof_bpf_swa_perf_sample(const struct prof_bpf_swa_thread *t, const struct perf_event_attr *a,
			      uint64_t *regs, uint64_t *chain, size_t chain_room, struct prof_perf_sample *s)
{
	const struct prof_bpf_swa_sample *smp = t->sample;
	size_t k = 0;

	*s = (struct prof_perf_sample){ .ip = smp->uregs[PERF_REG_X86_IP], .time = t->t_out,
					.pid = t->pid, .tid = t->tid, .regs_mask = a->sample_regs_user };
	if (!smp->user)
		return;
	for (int bit = 0; bit < 64; bit++)
		if (a->sample_regs_user & (1ULL << bit))
			regs[k++] = bit < PERF_REG_X86_64_MAX ? smp->uregs[bit] : 0;
	s->regs = (const uint8_t *)regs;
	s->regs_abi = PERF_SAMPLE_REGS_ABI_64;
	s->stack = smp->stack;
	s->stack_size = smp->stack_size;
	if (smp->chain && chain_room > 1) {
		size_t n = MIN((size_t)smp->nchain, chain_room - 1);
		chain[0] = PERF_CONTEXT_USER;
		memcpy(chain + 1, smp->chain, n * sizeof(*chain));
		s->callchain = (const uint8_t *)chain;
		s->nr_callchain = n + 1;
	}
}

#ifdef HAVE_LIBBPF
#include "bpf/switches.h"
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#ifndef PROF_SWA_OBJ
#define PROF_SWA_OBJ "build/gen/switches.bpf.o"
#endif
__asm__(".section .rodata\n"
	".balign 8\n"
	".global prof_swa_obj\n"
	"prof_swa_obj:\n"
	".incbin \"" PROF_SWA_OBJ "\"\n"
	".global prof_swa_obj_end\n"
	"prof_swa_obj_end:\n"
	".previous\n");
extern const char prof_swa_obj[], prof_swa_obj_end[];

#define SCAN_BATCH 256
/* The records pulled and not yet drained: beyond this, the pull leaves
 * them in the ring, which then fills and makes the program count its
 * losses (prof_bpf_swa_counts), as the perf pump's bound does. */
#define PULLED_MAX ((size_t)256 << 20)

_Static_assert(PROF_SWA_USER_STACK == SWA_USER_STACK && PROF_SWA_USER_CHAIN == SWA_USER_CHAIN,
	       "the user modes of include/prof/perf.h are the program's");
_Static_assert(PROF_SWA_SLEEP == SWA_SLEEP && PROF_SWA_OPEN == SWA_OPEN && PROF_SWA_D == SWA_D &&
		       PROF_SWA_SAMPLED == SWA_SAMPLED && PROF_SWA_AT_START == SWA_AT_START &&
		       PROF_SWA_STALE == SWA_STALE,
	       "the flags of include/prof/perf.h are the program's");

struct prof_bpf_swa {
	struct bpf_object *obj;
	struct bpf_link *exit_link;	/* swa_exit on sched_process_exit */
	struct bpf_link *exec_link;	/* swa_exec on sched_process_exec */
	struct bpf_link *switch_link;	/* swa_switch on sched_switch, while started */
	struct bpf_link *fork_link;	/* targets_fork on sched_process_fork (prof_bpf_swa_only) */
	struct ring_buffer *ring;	/* the wakes ring */
	struct ring_buffer *events;	/* the records ring: pulled into `pulled` */
	pthread_mutex_t lock;		/* events and pulled: the pump's pull, the drain */
	/* pulled: records as they came, each its size and then its bytes in
	 * 8-byte words; draining: the drain's, taken from pulled under the
	 * lock (one type, so that the two trade places). */
	VEC(uint64_t) pulled, draining;
	int threads_fd, counts_fd, shapes_fd, bases_fd, conf_fd, wake_fd, wakes_fd, then_fd;
	struct swa_conf conf;		/* as written to conf[0] */
	VEC(uint32_t) shape_keys;	/* shapes learned, written together (prof_bpf_swa_flush) */
	VEC(struct swa_shape) shapes;
	VEC(uint32_t) base_keys;	/* stack ends learned, likewise */
	VEC(struct swa_base) bases;
	int user;			/* PROF_SWA_USER_*: what samples carry */
	prof_bpf_swa_fn fn;		/* of the drain under way */
	void *arg;
};

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return 0;
}

static void from_entry(struct prof_bpf_swa_thread *out, uint32_t tid, const struct swa_thread *t)
{
	*out = (struct prof_bpf_swa_thread){
		.tid = tid, .pid = t->pid, .flags = t->flags, .t_out = t->t_out, .sum = t->sum,
		.ns = { t->ns[0], t->ns[1] }, .n = { t->n[0], t->n[1] }, .born = t->born,
	};
}

static void on_dstack(struct prof_bpf_swa *a, const struct swa_dstack *d, size_t size)
{
	size_t room = (size - offsetof(struct swa_dstack, ips)) / sizeof(d->ips[0]);
	struct prof_bpf_swa_thread t = { .tid = d->tid, .pid = d->pid, .flags = SWA_D, .t_out = d->t,
					 .kstack = (const uint64_t *)d->ips, .nkstack = (uint32_t)MIN((size_t)d->nr, room) };

	a->fn(a->arg, &t);
}

/* struct pt_regs (x86-64), in its order, by perf_regs number. */
static const uint8_t perf_reg_of[SWA_REGS] = {
	PERF_REG_X86_R15, PERF_REG_X86_R14, PERF_REG_X86_R13, PERF_REG_X86_R12, PERF_REG_X86_BP,
	PERF_REG_X86_BX, PERF_REG_X86_R11, PERF_REG_X86_R10, PERF_REG_X86_R9, PERF_REG_X86_R8,
	PERF_REG_X86_AX, PERF_REG_X86_CX, PERF_REG_X86_DX, PERF_REG_X86_SI, PERF_REG_X86_DI,
	PERF_REG_X86_64_MAX /* orig_ax: none */, PERF_REG_X86_IP, PERF_REG_X86_CS, PERF_REG_X86_FLAGS,
	PERF_REG_X86_SP, PERF_REG_X86_SS,
};

static void on_sample(struct prof_bpf_swa *a, const struct swa_sample *r, size_t size)
{
	size_t data = size - offsetof(struct swa_sample, data);
	uint32_t n = (uint32_t)MIN((size_t)r->size, data);
	struct prof_bpf_swa_sample smp = {
		.user = (r->flags & SWA_SAMPLE_USER) != 0,
		.kstack = (const uint64_t *)r->k, .nkstack = MIN(r->nk, (uint32_t)SWA_KFRAMES),
		.orig_ax = r->regs[SWA_REG_ORIG_AX], .cls = (uint8_t)(r->flags >> SWA_SAMPLE_CLASS_SHIFT & 3),
		.to_base = (r->flags & SWA_SAMPLE_TO_BASE) != 0,
	};
	struct prof_bpf_swa_thread t = { .tid = r->tid, .pid = r->pid, .t_out = r->t, .sample = &smp };

	for (int i = 0; i < SWA_REGS; i++)
		if (perf_reg_of[i] < PERF_REG_X86_64_MAX)
			smp.uregs[perf_reg_of[i]] = r->regs[i];
	if (a->user == SWA_USER_STACK) {
		smp.stack = r->data;
		smp.stack_size = n;
	} else if (a->user == SWA_USER_CHAIN) {
		smp.chain = (const uint64_t *)r->data;
		smp.nchain = n / 8;
	}
	a->fn(a->arg, &t);
}

/* A record leaves the ring for `pulled` (under the lock). */
static int on_pull(void *ctx, void *data, size_t size)
{
	struct prof_bpf_swa *a = ctx;
	size_t words = (size + 7) / 8;

	VEC_GROW(&a->pulled, a->pulled.n + 1 + words);
	a->pulled.v[a->pulled.n] = size;
	a->pulled.v[a->pulled.n + words] = 0;	/* the tail's padding */
	memcpy(a->pulled.v + a->pulled.n + 1, data, size);
	a->pulled.n += 1 + words;
	return 0;
}

/* A wake (prof_bpf_swa_wake_for) has done its work once read. */
static int on_wake(void *ctx, void *data, size_t size)
{
	return 0;
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct prof_bpf_swa *a = ctx;
	const struct swa_rec *r = data;
	struct prof_bpf_swa_thread t;

	if (size >= offsetof(struct swa_dstack, ips) && r->kind == SWA_REC_DSTACK) {
		on_dstack(a, data, size);
		return 0;
	}
	if (size >= offsetof(struct swa_sample, data) && r->kind == SWA_REC_SAMPLE) {
		on_sample(a, data, size);
		return 0;
	}
	if (size >= sizeof(struct swa_repeat) && r->kind == SWA_REC_REPEAT) {
		const struct swa_repeat *rr = data;
		t = (struct prof_bpf_swa_thread){ .tid = rr->tid, .pid = rr->pid, .t_out = rr->t, .repeat = true,
						  .cls = (uint8_t)(rr->flags & 3), .seq = rr->seq };
		a->fn(a->arg, &t);
		return 0;
	}
	if (size < sizeof(*r))
		return 0;
	t = (struct prof_bpf_swa_thread){
		.tid = r->tid, .pid = r->pid, .flags = r->flags, .exit = r->kind == SWA_REC_EXIT,
		.t_out = r->t_out, .t_in = r->t_in,
		.ns = { r->ns[0], r->ns[1] }, .n = { r->n[0], r->n[1] }, .born = r->born,
	};
	a->fn(a->arg, &t);
	return 0;
}

/* The layout the program reads with; false if a field is missing or not
 * of the size it reads. */
static bool conf_layout(struct swa_conf *c, const struct prof_bpf_task_layout *task)
{
	if (!task->on_rq.found || task->on_rq.size != 4 || task->on_rq.width || !task->sum_exec.found ||
	    task->sum_exec.size != 8 || !task->flags.found || task->flags.size != 4 ||
	    (task->sched_delayed.found && (task->sched_delayed.size != 1 || task->sched_delayed.width)))
		return false;
	c->off_on_rq = task->on_rq.off;
	c->off_sum_exec = task->sum_exec.off;
	c->off_flags = task->flags.off;
	c->has_delayed = task->sched_delayed.found;
	c->off_delayed = task->sched_delayed.off;
	c->has_iowait = task->in_iowait.found && task->in_iowait.width == 1;
	c->off_iowait = task->in_iowait.off;
	c->iowait_bit = task->in_iowait.bit;
	return true;
}

/*
 * Room for the threads it may account at once: four times the threads
 * the machine runs now (/proc/loadavg's total), at least 8192, at most
 * SWA_MAX_THREADS.  The map is preallocated (libbpf's default for a hash
 * map), and filling 65536 entries took 40 ms of a recording's start
 * here; a thread that finds it full is counted as lost
 * (prof_bpf_swa_counts).
 */
static uint32_t threads_room(void)
{
	char *s = read_file("/proc/loadavg", NULL), *slash = s ? strchr(s, '/') : NULL;
	uint64_t now = slash ? strtoull(slash + 1, NULL, 10) : 0;

	free(s);
	return (uint32_t)MIN(MAX(4 * now, 8192), (uint64_t)SWA_MAX_THREADS);
}

/* The records ring's size (switches.h): SWA_RING_PER_CPU a possible CPU,
 * rounded up to a power of two (the kernel's rule for a BPF ring). */
static uint32_t ring_room(void)
{
	int ncpus = libbpf_num_possible_cpus();
	uint64_t want = (uint64_t)MAX(ncpus, 1) * SWA_RING_PER_CPU;
	uint32_t room = SWA_RING_MIN;

	while (room < want && room < SWA_RING_MAX)
		room *= 2;
	return room;
}

/* The object's program NAME on the raw tracepoint TP, or NULL. */
static struct bpf_link *attach_tp(struct bpf_object *obj, const char *name, const char *tp)
{
	struct bpf_program *prog = bpf_object__find_program_by_name(obj, name);
	struct bpf_link *l = prog ? bpf_program__attach_raw_tracepoint(prog, tp) : NULL;

	return l && !libbpf_get_error(l) ? l : NULL;
}

struct prof_bpf_swa *prof_bpf_swa_open(const struct prof_bpf_task_layout *task, uint32_t self, uint32_t n,
				       uint64_t tau, uint32_t stale_per_cpu, int user, uint32_t stack_bytes, char *why, size_t len)
{
	struct prof_bpf_swa *a = xcalloc(1, sizeof(*a));
	pthread_mutex_init(&a->lock, NULL);
	struct swa_conf conf = { .self_tgid = self, .period = n ? n : 1, .stale_ns = tau,
				 .quiet_ns = tau, .every_ns = stale_per_cpu ? 1000000000ULL / stale_per_cpu : 0,
				 .burst_ns = stale_per_cpu ? 1000000000ULL : 0,
				 .user = (uint32_t)user, .stack_bytes = MIN(stack_bytes, (uint32_t)SWA_STACK_MAX),
				 .repeats = user == SWA_USER_STACK && !getenv("PROF_OFFCPU_NO_REPEATS") };
	uint32_t zero = 0;
	int ret, conf_fd, ring_fd;

	if (!conf_layout(&conf, task)) {
		snprintf(why, len, "the kernel's BTF does not place task_struct's flags, on_rq and se.sum_exec_runtime");
		goto fail;
	}
	if (!getenv("PROF_BPF_VERBOSE"))
		libbpf_set_print(quiet);
	a->obj = bpf_object__open_mem(prof_swa_obj, (size_t)(prof_swa_obj_end - prof_swa_obj), NULL);
	if (!a->obj || libbpf_get_error(a->obj)) {
		a->obj = NULL;
		snprintf(why, len, "cannot open the off-CPU accountant's BPF object");
		goto fail;
	}
	struct bpf_map *threads = bpf_object__find_map_by_name(a->obj, "threads");
	if (threads)
		bpf_map__set_max_entries(threads, threads_room());
	struct bpf_map *events = bpf_object__find_map_by_name(a->obj, "events");
	if (events)
		bpf_map__set_max_entries(events, ring_room());
	if ((ret = prof_bpf_own_share(a->obj)) < 0 || (ret = prof_bpf_own_restart(false)) < 0 ||
	    (ret = bpf_object__load(a->obj)) < 0) {
		snprintf(why, len, "cannot load the off-CPU accountant: %s", strerror(-ret));
		goto fail;
	}
	a->user = user;
	a->conf = conf;
	if (!(a->exit_link = attach_tp(a->obj, "swa_exit", "sched_process_exit")) ||
	    !(a->exec_link = attach_tp(a->obj, "swa_exec", "sched_process_exec"))) {
		snprintf(why, len, "cannot attach the off-CPU accountant to sched_process_exit and _exec");
		goto fail;
	}
	conf_fd = a->conf_fd = bpf_object__find_map_fd_by_name(a->obj, "conf");
	a->threads_fd = bpf_object__find_map_fd_by_name(a->obj, "threads");
	a->counts_fd = bpf_object__find_map_fd_by_name(a->obj, "counts");
	a->shapes_fd = bpf_object__find_map_fd_by_name(a->obj, "shapes");
	a->bases_fd = bpf_object__find_map_fd_by_name(a->obj, "bases");
	a->wake_fd = bpf_object__find_map_fd_by_name(a->obj, "wake");
	a->wakes_fd = bpf_object__find_map_fd_by_name(a->obj, "wakes");
	a->then_fd = bpf_object__find_map_fd_by_name(a->obj, "then");
	ring_fd = bpf_object__find_map_fd_by_name(a->obj, "events");
	if (conf_fd < 0 || a->threads_fd < 0 || a->counts_fd < 0 || a->shapes_fd < 0 || a->bases_fd < 0 || ring_fd < 0 ||
	    a->wake_fd < 0 || a->wakes_fd < 0 || a->then_fd < 0 ||
	    !(a->events = ring_buffer__new(ring_fd, on_pull, a, NULL)) ||
	    !(a->ring = ring_buffer__new(a->wakes_fd, on_wake, a, NULL)) ||
	    bpf_map_update_elem(conf_fd, &zero, &conf, BPF_ANY) < 0) {
		snprintf(why, len, "the off-CPU accountant's maps are missing");
		goto fail;
	}
	spawn_keep_mappings("anon_inode:bpf-map");
	return a;
fail:
	prof_bpf_swa_free(a);
	return NULL;
}

int prof_bpf_swa_only(struct prof_bpf_swa *a, const pid_t *pids, size_t n)
{
	return prof_bpf_targets_restrict(a->obj, &a->fork_link, pids, n);
}

int prof_bpf_swa_at_exec(struct prof_bpf_swa *a, pid_t pid)
{
	uint32_t zero = 0;
	int ret = prof_bpf_targets_restrict(a->obj, &a->fork_link, NULL, 0);

	if (ret < 0)
		return ret;
	a->conf.at_exec = (uint32_t)pid;
	return bpf_map_update_elem(a->conf_fd, &zero, &a->conf, BPF_ANY) < 0 ? -errno : 0;
}

int prof_bpf_swa_start(struct prof_bpf_swa *a)
{
	if (!a->switch_link && !(a->switch_link = attach_tp(a->obj, "swa_switch", "sched_switch")))
		return -EINVAL;
	return 0;
}

void prof_bpf_swa_stop(struct prof_bpf_swa *a)
{
	if (a->switch_link)
		bpf_link__destroy(a->switch_link);
	a->switch_link = NULL;
}

int prof_bpf_swa_seed(struct prof_bpf_swa *a, pid_t tid, pid_t pid, uint64_t start, uint64_t sum)
{
	uint32_t key = (uint32_t)tid;
	struct swa_thread t = { .t_out = start, .sum = sum, .born = start, .pid = (uint32_t)pid,
				.flags = SWA_OPEN | SWA_SLEEP | SWA_AT_START };

	return bpf_map_update_elem(a->threads_fd, &key, &t, BPF_NOEXIST) < 0 ? -errno : 0;
}

void prof_bpf_swa_forget(struct prof_bpf_swa *a, pid_t tid)
{
	uint32_t key = (uint32_t)tid;

	(void)bpf_map_delete_elem(a->threads_fd, &key);
	(void)bpf_map_delete_elem(a->bases_fd, &key);
}

int prof_bpf_swa_wake_for(struct prof_bpf_swa *a, pid_t pid)
{
	uint32_t key = (uint32_t)pid, one = 1;

	return bpf_map_update_elem(a->wake_fd, &key, &one, BPF_ANY) < 0 ? -errno : 0;
}

int prof_bpf_swa_wake_fd(const struct prof_bpf_swa *a)
{
	return a->wakes_fd;
}

int prof_bpf_swa_then(struct prof_bpf_swa *a, int prog_fd)
{
	uint32_t zero = 0, fd = (uint32_t)prog_fd;

	if (prog_fd < 0)
		return -EINVAL;
	return bpf_map_update_elem(a->then_fd, &zero, &fd, BPF_ANY) < 0 ? -errno : 0;
}

bool prof_bpf_swa_repeats(const struct prof_bpf_swa *a)
{
	return a->conf.repeats;
}

int prof_bpf_swa_set_voluntary_leaf(struct prof_bpf_swa *a, uint64_t ip)
{
	uint32_t zero = 0;

	if (access("/sys/kernel/realtime", F_OK) == 0)
		return -ENOTSUP;
	a->conf.voluntary_leaf = ip;
	return bpf_map_update_elem(a->conf_fd, &zero, &a->conf, BPF_ANY) < 0 ? -errno : 0;
}

int prof_bpf_swa_learn(struct prof_bpf_swa *a, uint32_t tid, const struct prof_bpf_swa_sample *smp,
		       const uint16_t *off, size_t n, bool bp_used, uint32_t seq)
{
	struct swa_shape sh = { .ip = smp->uregs[PERF_REG_X86_IP], .sp = smp->uregs[PERF_REG_X86_SP],
				.bp = smp->uregs[PERF_REG_X86_BP], .orig_ax = smp->orig_ax,
				.hash = SWA_SHAPE_SEED, .seq = seq, .n = (uint32_t)n, .bp_used = bp_used };
	uint32_t key = tid << 2 | (smp->cls & 3);

	if (!a->conf.repeats || n > SWA_SHAPE_SLOTS || !smp->user || !smp->stack)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		uint64_t w;
		if (off[i] > SWA_STACK_MAX - 8 || off[i] + 8u > smp->stack_size)
			return -EINVAL;
		memcpy(&w, smp->stack + off[i], 8);
		sh.hash = swa_mix(sh.hash, w);
		sh.off[i] = off[i];
		sh.want = MAX(sh.want, off[i] + 8u);
	}
	VEC_PUSH(&a->shape_keys, key);
	VEC_PUSH(&a->shapes, sh);
	return 0;
}

int prof_bpf_swa_set_base(struct prof_bpf_swa *a, uint32_t tid, uint64_t born, uint64_t top)
{
	VEC_PUSH(&a->base_keys, tid);
	VEC_PUSH(&a->bases, ((struct swa_base){ .top = top, .born = born }));
	return 0;
}

/* One system call for a drain's shapes (and one for its stack ends): a
 * call each cost the recorder more than the repeats saved it under -p on
 * the busy host. */
int prof_bpf_swa_flush(struct prof_bpf_swa *a)
{
	uint32_t n = (uint32_t)a->shapes.n, nb = (uint32_t)a->bases.n;
	int ret = 0;

	if (n && bpf_map_update_batch(a->shapes_fd, a->shape_keys.v, a->shapes.v, &n, NULL) < 0)
		ret = -errno;
	if (nb && bpf_map_update_batch(a->bases_fd, a->base_keys.v, a->bases.v, &nb, NULL) < 0)
		ret = -errno;
	a->shape_keys.n = a->shapes.n = 0;
	a->base_keys.n = a->bases.n = 0;
	return ret;
}

void prof_bpf_swa_pull(void *arg)
{
	struct prof_bpf_swa *a = arg;

	pthread_mutex_lock(&a->lock);
	if (a->pulled.n * sizeof(uint64_t) < PULLED_MAX)
		(void)ring_buffer__consume(a->events);
	pthread_mutex_unlock(&a->lock);
}

void prof_bpf_swa_drain(struct prof_bpf_swa *a, prof_bpf_swa_fn fn, void *arg)
{
	a->fn = fn;
	a->arg = arg;
	(void)ring_buffer__consume(a->ring);
	pthread_mutex_lock(&a->lock);
	(void)ring_buffer__consume(a->events);
	__typeof__(a->pulled) taken = a->pulled;
	a->pulled = a->draining;
	a->draining = taken;
	pthread_mutex_unlock(&a->lock);
	for (size_t i = 0; i < a->draining.n; i += 1 + (a->draining.v[i] + 7) / 8)
		(void)on_record(a, a->draining.v + i + 1, a->draining.v[i]);
	a->draining.n = 0;
}

void prof_bpf_swa_scan(struct prof_bpf_swa *a, prof_bpf_swa_fn fn, void *arg)
{
	uint32_t keys[SCAN_BATCH];
	struct swa_thread vals[SCAN_BATCH];
	uint64_t token = 0;
	bool first = true, more = true;

	while (more) {
		uint32_t n = SCAN_BATCH;
		int ret = bpf_map_lookup_batch(a->threads_fd, first ? NULL : &token, &token, keys, vals, &n, NULL);
		more = ret == 0;
		if (ret < 0 && errno != ENOENT)
			break;
		first = false;
		for (uint32_t i = 0; i < n; i++) {
			struct prof_bpf_swa_thread t;
			from_entry(&t, keys[i], &vals[i]);
			fn(arg, &t);
		}
	}
}

void prof_bpf_swa_counts(const struct prof_bpf_swa *a, struct prof_bpf_swa_counts *out)
{
	int ncpus = libbpf_num_possible_cpus();
	uint64_t *sums[] = { &out->untracked, &out->lost, &out->no_kstack, &out->unsent, &out->stale_budget,
			     &out->stale_refused }, *v;

	*out = (struct prof_bpf_swa_counts){ 0 };
	if (!a || ncpus <= 0)
		return;
	v = xcalloc((size_t)ncpus, sizeof(*v));
	for (uint32_t k = 0; k < ARRAY_SIZE(sums); k++) {
		if (bpf_map_lookup_elem(a->counts_fd, &k, v) < 0)
			continue;
		for (int c = 0; c < ncpus; c++)
			*sums[k] += v[c];
	}
	free(v);
	prof_bpf_own_read(&out->own);
}

void prof_bpf_swa_free(struct prof_bpf_swa *a)
{
	if (!a)
		return;
	if (a->exit_link)
		bpf_link__destroy(a->exit_link);
	if (a->exec_link)
		bpf_link__destroy(a->exec_link);
	prof_bpf_swa_stop(a);
	if (a->fork_link)
		bpf_link__destroy(a->fork_link);
	ring_buffer__free(a->ring);
	ring_buffer__free(a->events);
	bpf_object__close(a->obj);
	VEC_FREE(&a->pulled);
	VEC_FREE(&a->draining);
	pthread_mutex_destroy(&a->lock);
	VEC_FREE(&a->shape_keys);
	VEC_FREE(&a->shapes);
	VEC_FREE(&a->base_keys);
	VEC_FREE(&a->bases);
	free(a);
}

#else

struct prof_bpf_swa *prof_bpf_swa_open(const struct prof_bpf_task_layout *task, uint32_t self, uint32_t n,
				       uint64_t tau, uint32_t stale_per_cpu, int user, uint32_t stack_bytes, char *why, size_t len)
{
	snprintf(why, len, "prof was built without libbpf");
	return NULL;
}

int prof_bpf_swa_only(struct prof_bpf_swa *a, const pid_t *pids, size_t n)
{
	return -ENOTSUP;
}
int prof_bpf_swa_at_exec(struct prof_bpf_swa *a, pid_t pid) { return -ENOTSUP; }
int prof_bpf_swa_start(struct prof_bpf_swa *a) { return -ENOTSUP; }
void prof_bpf_swa_stop(struct prof_bpf_swa *a) {}
int prof_bpf_swa_seed(struct prof_bpf_swa *a, pid_t tid, pid_t pid, uint64_t start, uint64_t sum)
{
	return -ENOTSUP;
}
void prof_bpf_swa_forget(struct prof_bpf_swa *a, pid_t tid) {}
bool prof_bpf_swa_repeats(const struct prof_bpf_swa *a) { return false; }
int prof_bpf_swa_wake_for(struct prof_bpf_swa *a, pid_t pid) { return -ENOTSUP; }
int prof_bpf_swa_wake_fd(const struct prof_bpf_swa *a) { return -1; }
int prof_bpf_swa_then(struct prof_bpf_swa *a, int prog_fd) { return -ENOTSUP; }
int prof_bpf_swa_set_voluntary_leaf(struct prof_bpf_swa *a, uint64_t ip) { return -ENOTSUP; }
int prof_bpf_swa_flush(struct prof_bpf_swa *a) { return -ENOTSUP; }
int prof_bpf_swa_set_base(struct prof_bpf_swa *a, uint32_t tid, uint64_t born, uint64_t top) { return -ENOTSUP; }
int prof_bpf_swa_learn(struct prof_bpf_swa *a, uint32_t tid, const struct prof_bpf_swa_sample *smp,
		       const uint16_t *off, size_t n, bool bp_used, uint32_t seq)
{
	return -ENOTSUP;
}
void prof_bpf_swa_drain(struct prof_bpf_swa *a, prof_bpf_swa_fn fn, void *arg) {}
void prof_bpf_swa_pull(void *arg) {}
void prof_bpf_swa_scan(struct prof_bpf_swa *a, prof_bpf_swa_fn fn, void *arg) {}
void prof_bpf_swa_counts(const struct prof_bpf_swa *a, struct prof_bpf_swa_counts *out)
{
	*out = (struct prof_bpf_swa_counts){ 0 };
}
void prof_bpf_swa_free(struct prof_bpf_swa *a) {}

#endif
