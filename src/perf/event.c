/*
 * event.c - perf_event_open for `prof record`: the supported events, the
 * perf_event_attr for a sampling configuration, opening per-CPU events for
 * a task into one ring per CPU, and the error messages that tell the user
 * what the kernel refused and how to fix it.
 *
 * Design notes / invariants:
 *  - inherit=1 events cannot be mmapped when opened with cpu=-1 (the kernel
 *    returns EINVAL), so every task gets one event per CPU.
 *  - The first event on a CPU owns that CPU's ring; every later one is
 *    redirected into it with PERF_EVENT_IOC_SET_OUTPUT.
 *  - Kernel sampling is attempted first; the first EACCES/EPERM flips
 *    attr.exclude_kernel to 1 for all later events (warned once).
 */
#include "prof/perf.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* The one table of event names prof knows (perf's spelling), shared by
 * `prof record -e` (sampling) and `prof stat -e` (counting). */
static const struct prof_perf_event_desc events[] = {
	{ "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, true },
	{ "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, true },
	{ "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, false },
	{ "minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN, false },
	{ "major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ, false },
	{ "context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, false },
	{ "cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, false },
	{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, false },
	{ "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, false },
	{ "branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, false },
	{ "branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, false },
	{ "cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES, false },
	{ "cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, false },
};

const struct prof_perf_event_desc *prof_perf_event_find(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(events); i++)
		if (!strcmp(events[i].name, name))
			return &events[i];
	return NULL;
}

const char *prof_perf_event_names(void)
{
	static char buf[512];

	if (!buf[0])
		for (size_t i = 0; i < ARRAY_SIZE(events); i++) {
			if (i)
				strcat(buf, ", ");
			strcat(buf, events[i].name);
		}
	return buf;
}

/* Bytes a non-root user may lock in perf rings: perf_event_mlock_kb per
 * CPU plus RLIMIT_MEMLOCK (kernel-notes/ring-buffers.md). */
static uint64_t unprivileged_lock_budget(long ncpus)
{
	char *kb = read_file("/proc/sys/kernel/perf_event_mlock_kb", NULL);
	uint64_t total = (kb ? strtoull(kb, NULL, 10) : 516) * 1024 * (uint64_t)ncpus;
	struct rlimit rl;

	free(kb);
	if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0)
		total += rl.rlim_cur == RLIM_INFINITY ? (1ULL << 40) : (uint64_t)rl.rlim_cur;
	return total;
}

size_t prof_perf_page_size(void)
{
	long sz = sysconf(_SC_PAGESIZE);

	return sz > 0 ? (size_t)sz : 4096;
}

uint32_t prof_perf_default_ring_pages(void)
{
	long ncpus = sysconf(_SC_NPROCESSORS_CONF);
	uint64_t per_cpu, pages = 4096;

	if (ncpus < 1)
		ncpus = 1;
	per_cpu = (32ULL << 20) / (uint64_t)ncpus;
	if (geteuid() != 0)
		per_cpu = MIN(per_cpu, unprivileged_lock_budget(ncpus) / (uint64_t)ncpus);
	/* largest power of two that fits (non-root: with the metadata page) */
	while (pages > 16 && (pages + (geteuid() != 0)) * prof_perf_page_size() > per_cpu)
		pages /= 2;
	if (geteuid() == 0 && pages < 512)
		pages = 512;	/* root: at least 2 MiB */
	return (uint32_t)pages;
}

static const char *const cg_names[] = { "dwarf", "fp", "none" };

int prof_callgraph_parse(const char *name, enum prof_callgraph *cg)
{
	for (size_t i = 0; i < ARRAY_SIZE(cg_names); i++) {
		if (!strcmp(name, cg_names[i])) {
			*cg = (enum prof_callgraph)i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *prof_callgraph_name(enum prof_callgraph cg)
{
	return (size_t)cg < ARRAY_SIZE(cg_names) ? cg_names[cg] : "?";
}

int prof_perf_paranoid(void)
{
	char *s = read_file("/proc/sys/kernel/perf_event_paranoid", NULL);
	int v = s ? atoi(s) : 99;

	free(s);
	return v;
}

bool prof_perf_may_record_cpus(void)
{
	char *st = read_file("/proc/self/status", NULL), *cap = st ? strstr(st, "\nCapEff:") : NULL;
	uint64_t eff = cap ? strtoull(cap + 8, NULL, 16) : 0;

	free(st);
	return prof_perf_paranoid() <= 0 || (eff & (1ULL << 38 | 1ULL << 21));	/* CAP_PERFMON, CAP_SYS_ADMIN */
}

static void setup_attr(struct perf_event_attr *a, const struct prof_perf_config *cfg)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = cfg->event->type;
	a->config = cfg->event->config;
	a->freq = !cfg->period;
	if (cfg->period)
		a->sample_period = cfg->period;
	else
		a->sample_freq = cfg->freq;
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			 PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
	if (cfg->callgraph != PROF_CG_NONE)
		a->sample_type |= PERF_SAMPLE_CALLCHAIN;
	if (cfg->callgraph == PROF_CG_DWARF) {
		/* We unwind user stacks ourselves: the kernel chain only
		 * needs the kernel part. */
		a->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
		a->sample_regs_user = PROF_PERF_REGS_USER_MASK;
		a->sample_stack_user = cfg->stack_size;
		a->exclude_callchain_user = 1;
	}
	a->disabled = 1;
	a->inherit = !cfg->no_inherit;
	a->enable_on_exec = cfg->enable_on_exec;
	a->mmap = 1;	/* mmap2 changes the record format; mmap turns it on */
	a->mmap2 = 1;
	a->build_id = 1;	/* MMAP2 names the mapped file's build-id: replaced files are caught */
	a->comm = 1;
	a->comm_exec = 1;
	a->task = 1;
	a->sample_id_all = 1;
	a->exclude_hv = 1;
	a->exclude_guest = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	/* Wake the reader in batches: a quarter of the ring. */
	a->watermark = 1;
	a->wakeup_watermark = (uint32_t)MIN((uint64_t)cfg->ring_pages * prof_perf_page_size() / 4, 1u << 30);
}

int prof_perf_init(struct prof_perf *pf, const struct prof_perf_config *cfg)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);

	memset(pf, 0, sizeof(*pf));
	if (!cfg->event || !cfg->freq || !cfg->ring_pages ||
	    (cfg->ring_pages & (cfg->ring_pages - 1)) ||
	    cfg->stack_size > PROF_STACK_SIZE_MAX || (cfg->stack_size & 7))
		return -EINVAL;
	pf->cfg = *cfg;
	setup_attr(&pf->attr, cfg);
	pf->ncpus = n > 0 ? (int)n : 1;
	pf->rings = xcalloc((size_t)pf->ncpus, sizeof(*pf->rings));
	for (int i = 0; i < pf->ncpus; i++)
		pf->rings[i].fd = -1;
	pf->scratch = xmalloc((size_t)pf->ncpus * PROF_PERF_SCRATCH);
	pf->nr_regs = (uint64_t)__builtin_popcountll(pf->attr.sample_regs_user);
	return 0;
}

static int sys_perf_event_open(struct perf_event_attr *a, pid_t pid, int cpu)
{
	return (int)syscall(SYS_perf_event_open, a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* True when tid belongs to another user: sampling it needs ptrace
 * access, which no perf_event_paranoid level grants. */
static bool foreign_task(pid_t tid, uid_t *owner)
{
	char path[32];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d", (int)tid);
	if (tid <= 0 || stat(path, &st) < 0 || st.st_uid == geteuid())
		return false;
	*owner = st.st_uid;
	return true;
}

static int report_open_error(const struct prof_perf *pf, pid_t tid, int err)
{
	const char *ev = pf->cfg.event->name;
	uid_t owner;

	if ((err == EACCES || err == EPERM) && foreign_task(tid, &owner))
		return error("no permission to sample task %d: it belongs to uid %u and prof runs as uid %u; run prof as that user or root, or grant it 'setcap cap_perfmon,cap_sys_ptrace+ep prof'",
			     (int)tid, (unsigned)owner, (unsigned)geteuid()), -err;
	switch (err) {
	case ENOENT:
	case EOPNOTSUPP:
	case ENODEV:
		return error("event '%s' is not supported here (no hardware PMU in this VM?); try -e cpu-clock", ev), -err;
	case EACCES:
	case EPERM:
		return error("no permission to sample (kernel.perf_event_paranoid=%d, and without CAP_PERFMON only your own processes); run 'sysctl kernel.perf_event_paranoid=1' or grant prof CAP_PERFMON: 'setcap cap_perfmon+ep prof'",
			     prof_perf_paranoid()), -err;
	case EINVAL: {
		char *m = read_file("/proc/sys/kernel/perf_event_max_sample_rate", NULL);
		uint64_t max = m ? strtoull(m, NULL, 10) : 0;
		free(m);
		if (max && pf->cfg.freq > max)
			return error("-F %llu is above kernel.perf_event_max_sample_rate=%llu; use a lower -F",
				     (unsigned long long)pf->cfg.freq, (unsigned long long)max), -err;
		return error("perf_event_open for event '%s' failed: %s", ev, strerror(err)), -err;
	}
	case EMFILE:
		return error("too many open files for %d CPUs x threads; raise 'ulimit -n'", pf->ncpus), -err;
	default:
		return error("perf_event_open for event '%s' failed: %s", ev, strerror(err)), -err;
	}
}

/* Opens one event, falling back to user-only sampling when kernel
 * sampling is not allowed. */
static int open_one(struct prof_perf *pf, pid_t tid, int cpu)
{
	int fd = sys_perf_event_open(&pf->attr, tid, cpu);

	if (fd < 0 && errno == EINVAL && pf->attr.build_id) {	/* kernel < 5.12 */
		pf->attr.build_id = 0;
		fd = sys_perf_event_open(&pf->attr, tid, cpu);
	}
	if (fd < 0 && (errno == EACCES || errno == EPERM) && !pf->attr.exclude_kernel) {
		pf->attr.exclude_kernel = 1;
		fd = sys_perf_event_open(&pf->attr, tid, cpu);
		if (fd >= 0) {
			pf->kernel_excluded = true;
			warning("kernel.perf_event_paranoid=%d: sampling user space only (no kernel frames); 'sysctl kernel.perf_event_paranoid=1' or CAP_PERFMON allows kernel stacks",
				prof_perf_paranoid());
		}
	}
	if (fd >= 0 && ((pf->open_filter && ioctl(fd, PERF_EVENT_IOC_SET_FILTER, pf->open_filter) < 0) ||
			(pf->open_bpf && ioctl(fd, PERF_EVENT_IOC_SET_BPF, pf->open_bpf - 1) < 0))) {
		int e = errno;
		close(fd);
		return -e;
	}
	/* A program the kernel refuses costs only what it would have added:
	 * the hook reads after the sample then, and so in haste. */
	if (fd >= 0 && pf->bpf_prog > 0 && ioctl(fd, PERF_EVENT_IOC_SET_BPF, pf->bpf_prog) < 0) {
		pf->bpf_prog = -1;
		pf->hook_lazy = false;
	}
	return fd < 0 ? -errno : fd;
}

static void ring_set(struct prof_perf *pf, struct prof_perf_ring *r, int fd, void *m, size_t len)
{
	r->fd = fd;
	r->meta = m;
	r->map_len = len;
	r->data = (uint8_t *)m + (r->meta->data_offset ? r->meta->data_offset : (uint64_t)prof_perf_page_size());
	r->size = r->meta->data_size ? r->meta->data_size : (uint64_t)pf->cfg.ring_pages * prof_perf_page_size();
}

static int map_ring(struct prof_perf *pf, struct prof_perf_ring *r, int fd)
{
	size_t len = ((size_t)pf->cfg.ring_pages + 1) * prof_perf_page_size();
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	if (m == MAP_FAILED) {
		int e = errno;
		if (e == EPERM || e == ENOMEM) {
			char *kb = read_file("/proc/sys/kernel/perf_event_mlock_kb", NULL);
			int v = kb ? atoi(kb) : -1;
			free(kb);
			return error("cannot map a %u KiB ring buffer per CPU: over the locked-memory limit (perf_event_mlock_kb=%d, plus 'ulimit -l'); use a smaller -m PAGES or raise 'sysctl kernel.perf_event_mlock_kb' / 'ulimit -l'",
				     pf->cfg.ring_pages * 4, v), -e;
		}
		return error("cannot mmap the ring buffer: %s", strerror(e)), -e;
	}
	ring_set(pf, r, fd, m, len);
	return 0;
}

/* With the default size, a locked-memory refusal (non-root at
 * perf_event_mlock_kb) halves the ring down to 64 pages before failing. */
static int map_ring_shrinking(struct prof_perf *pf, struct prof_perf_ring *r, int fd)
{
	for (;;) {
		size_t len = ((size_t)pf->cfg.ring_pages + 1) * prof_perf_page_size();
		void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (m != MAP_FAILED) {	/* kept: mapping a big ring twice cost 20-130 ms */
			ring_set(pf, r, fd, m, len);
			return 0;
		}
		if (errno != EPERM || !pf->cfg.ring_shrink_ok || pf->cfg.ring_pages <= 64)
			break;
		pf->cfg.ring_pages /= 2;
		pf->attr.wakeup_watermark = (uint32_t)(pf->cfg.ring_pages * prof_perf_page_size() / 4);
		pf->ring_shrunk = true;
	}
	return map_ring(pf, r, fd);
}

static int attach_to_ring(struct prof_perf *pf, int cpu, int fd)
{
	struct prof_perf_ring *r = &pf->rings[cpu];

	if (r->fd < 0)
		return map_ring_shrinking(pf, r, fd);
	if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, r->fd) < 0)
		return error("cannot redirect an event into the CPU %d ring: %s", cpu, strerror(errno)), -errno;
	return 0;
}

int prof_perf_open_task(struct prof_perf *pf, pid_t tid)
{
	for (int cpu = 0; cpu < pf->ncpus; cpu++) {
		int fd = open_one(pf, tid, cpu);

		if (fd == -ENODEV && pf->ncpus > 1)
			continue;	/* offline CPU */
		if (fd == -ESRCH)
			return -ESRCH;
		if (fd < 0)
			return report_open_error(pf, tid, -fd);
		VEC_PUSH(&pf->fds, fd);
		int ret = attach_to_ring(pf, cpu, fd);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/*
 * System-wide: one event per listed CPU for every task (pid -1).  inherit
 * means nothing there (the kernel refuses it with pid -1 on some versions);
 * the idle task is left out: it is not what the machine is doing.
 */
static int system_wide_error(int err)
{
	if (err == EACCES || err == EPERM)
		return error("system-wide recording needs root, CAP_PERFMON (or CAP_SYS_ADMIN), or kernel.perf_event_paranoid <= 0; it is %d and prof runs as uid %u without them; run as root or 'sysctl kernel.perf_event_paranoid=0'",
			     prof_perf_paranoid(), (unsigned)geteuid()), -err;
	return -err;
}

int prof_perf_open_cpu(struct prof_perf *pf, int cpu)
{
	int fd;

	if (cpu < 0 || cpu >= pf->ncpus)
		return error("no CPU %d here (CPUs 0-%d)", cpu, pf->ncpus - 1), -EINVAL;
	pf->attr.inherit = 0;
	pf->attr.exclude_idle = 1;
	pf->attr.enable_on_exec = 0;
	/* No build-ids in a system-wide MMAP2: the kernel marks the record it
	 * shares among every event watching that mmap as holding one, and the
	 * events after ours (another profiler's) then get the mark over an
	 * inode; perf 6.1 takes the disk's major number for a build-id's
	 * length (254), overruns a 20-byte array and aborts
	 * (kernel-notes/events.md).  Files are named by path and inode. */
	pf->attr.build_id = 0;
	fd = open_one(pf, -1, cpu);
	if (fd == -EACCES || fd == -EPERM)
		return system_wide_error(-fd);
	if (fd == -ENODEV)	/* offline: the caller knows whether that matters */
		return -ENODEV;
	if (fd < 0)
		return report_open_error(pf, -1, -fd);
	VEC_PUSH(&pf->fds, fd);
	return attach_to_ring(pf, cpu, fd);
}

static int ioctl_all(struct prof_perf *pf, unsigned long req)
{
	for (size_t i = 0; i < pf->fds.n; i++)
		if (ioctl(pf->fds.v[i], req, 0) < 0 && errno != ESRCH)
			return -errno;
	return 0;
}

int prof_perf_set_filter(struct prof_perf *pf, const char *filter)
{
	for (size_t i = 0; i < pf->fds.n; i++)
		if (ioctl(pf->fds.v[i], PERF_EVENT_IOC_SET_FILTER, filter) < 0)
			return -errno;
	return 0;
}

int prof_perf_enable(struct prof_perf *pf) { return ioctl_all(pf, PERF_EVENT_IOC_ENABLE); }
int prof_perf_disable(struct prof_perf *pf)
{
	int ret = ioctl_all(pf, PERF_EVENT_IOC_DISABLE);

	prof_perf_pump_stop(pf);	/* the final drain reads the rings itself */
	return ret;
}

void prof_perf_close(struct prof_perf *pf)
{
	prof_perf_pump_free(pf);
	for (int i = 0; pf->rings && i < pf->ncpus; i++)
		if (pf->rings[i].meta)
			munmap(pf->rings[i].meta, pf->rings[i].map_len);
	for (size_t i = 0; i < pf->fds.n; i++)
		close(pf->fds.v[i]);
	VEC_FREE(&pf->fds);
	prof_bpf_targets_free(pf->targets);
	pf->targets = NULL;
	free(pf->rings);
	free(pf->scratch);
	pf->rings = NULL;
	pf->scratch = NULL;
}
