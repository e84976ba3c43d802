/*
 * import.c - replays a parsed perf.data (see parse.c) into a prof_profile:
 * per-process address spaces from MMAP/MMAP2/FORK/COMM-exec, thread names
 * from COMM, and for every sample of the imported event a stack built from
 * its kernel callchain plus either its user callchain (-g / fp) or an
 * unwind of its captured registers and stack (--call-graph dwarf), then
 * symbolized and interned into the trie.
 *
 * Design notes / invariants:
 *  - Only one event is imported: the first that is not perf's "dummy"
 *    sideband event (im->main).  Samples of other events are counted in
 *    info->other_samples and, if there are any, a warning names the one kept.
 *  - One prof_addrspace per pid, created on first use; FORK of a new
 *    process copies its parent's space (threads share their process's);
 *    COMM with PERF_RECORD_MISC_COMM_EXEC empties it.  MMAPs of pid -1 are
 *    the kernel's own (symbolized from /proc/kallsyms instead).
 *  - Thread names are kept in a tid -> string map and the profile's thread
 *    is interned only when a sample arrives, so threads without samples do
 *    not show up in reports.
 *  - Stacks are built innermost first: kernel frames, then user frames.
 *    Every user pc but the first is a return address.
 *  - A stack is "truncated" (p->samples_truncated) when the dwarf unwind
 *    stopped early, or an fp callchain filled the kernel's depth limit.
 */
#include "prof/perfdata.h"
#include "prof/unwind.h"
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#define PD_PID_KERNEL UINT32_MAX
#define PD_MAX_STACK_DEFAULT 127	/* sysctl kernel.perf_event_max_stack */
#define PD_FRAMES_MAX (PROF_MAX_FRAMES * 4)

struct importer {
	struct prof_profile *p;
	struct perfdata_info *info;
	struct pd_file *f;
	const struct pd_attr *main;	/* the event imported */
	struct prof_symbolizer *sym;
	struct prof_unwinder *unw;
	struct u64map space_of_pid;	/* pid -> index in spaces */
	VEC(struct prof_addrspace *) spaces;
	struct u64map comm_of_tid;	/* tid -> string id */
	bool clock_event;		/* cpu-clock / task-clock: period is ns */
	uint64_t pcs[PROF_MAX_FRAMES];
	uint32_t frames[PD_FRAMES_MAX];
	size_t nframes;
	bool warned_build_id, kernel_checked;
	uint64_t lost_records, lost_samples;	/* LOST / LOST_SAMPLES sums */
};

/* ---- processes and threads -------------------------------------------------- */

static struct prof_addrspace *space_get(struct importer *im, uint32_t pid)
{
	bool created;
	uint64_t *slot = u64map_slot(&im->space_of_pid, pid, &created);

	if (created) {
		*slot = im->spaces.n;
		VEC_PUSH(&im->spaces, prof_addrspace_new((pid_t)pid));
	}
	return im->spaces.v[*slot];
}

static void space_replace(struct importer *im, uint32_t pid, struct prof_addrspace *as)
{
	bool created;
	uint64_t *slot = u64map_slot(&im->space_of_pid, pid, &created);

	if (created) {
		*slot = im->spaces.n;
		VEC_PUSH(&im->spaces, as);
		return;
	}
	prof_addrspace_free(im->spaces.v[*slot]);
	im->spaces.v[*slot] = as;
}

static void on_fork(struct importer *im, const uint8_t *d, uint32_t size)
{
	uint32_t v[4];	/* pid, ppid, tid, ptid */

	if (size < sizeof(struct perf_event_header) + sizeof(v))
		return;
	memcpy(v, d + sizeof(struct perf_event_header), sizeof(v));
	uint64_t comm;
	if (u64map_get(&im->comm_of_tid, v[3], &comm))
		u64map_put(&im->comm_of_tid, v[2], comm);
	if (v[0] == v[1])
		return;		/* a new thread shares its process's space */
	uint64_t idx;
	struct prof_addrspace *child;
	if (u64map_get(&im->space_of_pid, v[1], &idx))
		child = prof_addrspace_fork(im->spaces.v[idx], (pid_t)v[0]);
	else
		child = prof_addrspace_new((pid_t)v[0]);
	space_replace(im, v[0], child);
}

static void on_comm(struct importer *im, const struct perf_event_header *eh, const uint8_t *d,
		    uint32_t size)
{
	uint32_t v[2];	/* pid, tid */
	size_t hdr = sizeof(*eh) + sizeof(v);

	if (size <= hdr)
		return;
	memcpy(v, d + sizeof(*eh), sizeof(v));
	char *s = xstrndup((const char *)d + hdr, size - hdr);
	uint32_t name = prof_intern(im->p, s);
	free(s);
	u64map_put(&im->comm_of_tid, v[1], name);
	if (eh->misc & PERF_RECORD_MISC_COMM_EXEC)
		prof_addrspace_clear(space_get(im, v[0]));
}

/* Warns once when a mapped binary is not the one perf saw (build-id differs). */
static void check_build_id(struct importer *im, const char *path)
{
	if (im->warned_build_id)
		return;
	for (size_t i = 0; i < im->f->build_ids.n; i++) {
		const struct pd_build_id *b = &im->f->build_ids.v[i];
		if (strcmp(b->filename, path))
			continue;
		struct prof_elf *e = prof_elf_get(path);
		const char *have = e ? prof_elf_build_id(e) : "";
		if (*have && *b->hex && strcmp(have, b->hex)) {
			warning("'%s' changed since it was recorded (build-id %s, now %s); "
				"its symbols may be wrong", path, b->hex, have);
			im->warned_build_id = true;
		}
		return;
	}
}

static void on_mmap(struct importer *im, const struct perf_event_header *eh, const uint8_t *d,
		    uint32_t size)
{
	const uint8_t *b = d + sizeof(*eh);
	uint32_t pid;
	uint64_t addr, len, pgoff;
	uint32_t prot;
	size_t name_off;

	if (eh->type == PERF_RECORD_MMAP) {
		name_off = sizeof(*eh) + 8 + 24;
		/* MMAP (v1) has no prot: data mappings are flagged in misc */
		prot = (eh->misc & PERF_RECORD_MISC_MMAP_DATA) ? PROT_READ : PROT_READ | PROT_EXEC;
	} else {
		name_off = sizeof(*eh) + 8 + 24 + 24 + 8;
		if (size >= name_off)
			memcpy(&prot, d + name_off - 8, 4);
	}
	if (size <= name_off)
		return;
	memcpy(&pid, b, 4);
	memcpy(&addr, b + 8, 8);
	memcpy(&len, b + 16, 8);
	memcpy(&pgoff, b + 24, 8);
	if (pid == PD_PID_KERNEL)
		return;
	char *path = xstrndup((const char *)d + name_off, size - name_off);
	if (prot & PROT_EXEC)
		check_build_id(im, path);
	prof_addrspace_map(space_get(im, pid), addr, len, pgoff, path, prot);
	free(path);
}

static uint32_t thread_of(struct importer *im, uint32_t pid, uint32_t tid)
{
	uint64_t comm = 0;

	u64map_get(&im->comm_of_tid, tid, &comm);
	return prof_thread_intern(im->p, pid, tid, prof_str(im->p, (uint32_t)comm));
}

/* ---- stacks ------------------------------------------------------------------- */

/* Kernel pcs are resolved with this machine's /proc/kallsyms: say so once
 * when the file was recorded on another kernel. */
static void check_kernel_release(struct importer *im)
{
	struct utsname u;

	im->kernel_checked = true;
	if (im->f->osrelease && uname(&u) == 0 && strcmp(u.release, im->f->osrelease))
		warning("perf.data was recorded on kernel %s but this is %s; kernel symbols "
			"come from this machine's /proc/kallsyms and may be wrong",
			im->f->osrelease, u.release);
}

static void push_kernel(struct importer *im, uint64_t pc)
{
	if (!im->kernel_checked)
		check_kernel_release(im);
	if (im->nframes < PD_FRAMES_MAX)
		im->nframes += prof_symbolize_kernel(im->sym, pc, im->frames + im->nframes,
						     PD_FRAMES_MAX - im->nframes);
}

static void push_user(struct importer *im, struct prof_addrspace *as, uint64_t pc, bool ret)
{
	if (im->nframes < PD_FRAMES_MAX)
		im->nframes += prof_symbolize_user(im->sym, as, pc, ret, im->frames + im->nframes,
						   PD_FRAMES_MAX - im->nframes);
}

/*
 * Walks the callchain: context markers (PERF_CONTEXT_*) switch between
 * kernel and user entries.  Returns the number of user entries taken;
 * user entries are skipped when the sample carries a stack to unwind.
 */
static size_t walk_callchain(struct importer *im, struct prof_addrspace *as,
			     const struct pd_sample *s, bool want_user)
{
	uint64_t ctx = PERF_CONTEXT_USER;
	size_t nuser = 0;

	for (uint64_t i = 0; i < s->nr_callchain; i++) {
		uint64_t pc = pd_u64(s->callchain, i);
		if (pc >= (uint64_t)PERF_CONTEXT_MAX) {
			ctx = pc;
			continue;
		}
		if (ctx == PERF_CONTEXT_KERNEL)
			push_kernel(im, pc);
		else if (ctx == PERF_CONTEXT_USER && want_user)
			push_user(im, as, pc, nuser++ > 0);
	}
	return nuser;
}

static bool unwind_dwarf(struct importer *im, struct prof_addrspace *as, const struct pd_sample *s)
{
	struct prof_user_regs regs;
	struct prof_ustack stack = { s->stack, s->stack_size };
	struct prof_unwind_result res;

	memset(&regs, 0, sizeof(regs));
	for (size_t i = 0; i < ARRAY_SIZE(regs.r); i++)
		regs.r[i] = s->regs[i];
	prof_unwind(im->unw, as, (pid_t)s->tid, &regs, &stack, im->pcs, PROF_MAX_FRAMES, &res);
	for (size_t i = 0; i < res.n; i++)
		push_user(im, as, im->pcs[i], i > 0);
	return res.complete;
}

static void on_sample(struct importer *im, const struct pd_record *r)
{
	struct pd_sample s;

	if (pd_decode_sample(im->f, r, &s)) {
		im->info->bad_samples++;
		return;
	}
	if (s.attr != im->main) {
		im->info->other_samples++;
		return;
	}
	const struct perf_event_attr *a = &s.attr->attr;
	struct prof_addrspace *as = space_get(im, s.pid);
	bool dwarf = (a->sample_type & PERF_SAMPLE_STACK_USER) && s.regs_abi;
	bool complete = true;
	struct perf_event_header eh;
	memcpy(&eh, r->data, sizeof(eh));	/* fuzzed records may be misaligned */
	uint16_t cpumode = eh.misc & PERF_RECORD_MISC_CPUMODE_MASK;

	im->nframes = 0;
	if (s.nr_callchain) {
		size_t nuser = walk_callchain(im, as, &s, !dwarf);
		uint32_t limit = a->sample_max_stack ? a->sample_max_stack : PD_MAX_STACK_DEFAULT;
		if (!dwarf && nuser + 2 >= limit)
			complete = false;
	} else if (cpumode == PERF_RECORD_MISC_KERNEL) {
		push_kernel(im, s.ip);
	} else if (!dwarf) {
		push_user(im, as, s.ip, false);
	}
	if (dwarf)
		complete = unwind_dwarf(im, as, &s);
	if (im->nframes == 0)
		push_user(im, as, s.ip, false);

	uint32_t thread = thread_of(im, s.pid, s.tid);
	uint32_t node = prof_node_from_stack(im->p, im->frames, im->nframes);
	prof_add_timed(im->p, s.time, thread, node, PROF_M_SAMPLES, 1);
	if (im->clock_event)
		prof_add_timed(im->p, s.time, thread, node, PROF_M_CPU_NS, s.period);

	struct prof_profile *p = im->p;
	p->samples++;
	im->info->samples++;
	if (complete)
		im->info->unwound_complete++;
	else
		p->samples_truncated++;
	if (a->sample_type & PERF_SAMPLE_TIME) {
		if (!p->start_ns || s.time < p->start_ns)
			p->start_ns = s.time;
		if (s.time > p->end_ns)
			p->end_ns = s.time;
	}
}

/*
 * perf record (6.x) ends with LOST_SAMPLES records it synthesizes from each
 * event's PERF_FORMAT_LOST count, which already includes the ring-buffer
 * drops the kernel reported as LOST records: the two overlap, so the
 * importer keeps both sums and reports the larger (see finish_lost()).
 */
static void on_lost(struct importer *im, const struct pd_record *r)
{
	uint64_t n = 0;
	size_t off = sizeof(struct perf_event_header) + (r->type == PERF_RECORD_LOST ? 8 : 0);

	if (r->size >= off + 8)
		n = pd_u64(r->data + off, 0);
	if (r->type == PERF_RECORD_LOST)
		im->lost_records += n;
	else
		im->lost_samples += n;
}

static void finish_lost(struct importer *im)
{
	uint64_t n = MAX(im->lost_records, im->lost_samples);

	im->p->lost += n;
	im->info->lost += n;
}

/*
 * Peak memory: pages of the mapped file that no remaining record needs are
 * given back as replay advances (a batch is sorted by time, and perf
 * writes records in roughly time-ordered rounds, so the lowest offset still
 * needed climbs steadily).  Only for our own read-only private mapping:
 * dropped pages read back from the file if touched again.  Returns, per
 * record index of the batch, the lowest file offset any record from there
 * on (this batch's or a later one's) uses.
 */
static size_t *needed_from(const struct pd_file *f)
{
	size_t n = f->records.n, *low = xmalloc((n + 1) * sizeof(*low));

	low[n] = pd_pending_low(f);
	for (size_t i = n; i-- > 0;) {
		const uint8_t *d = f->records.v[i].data;
		size_t off = d >= f->buf && d < f->buf + f->len ? (size_t)(d - f->buf) : f->len;
		low[i] = MIN(low[i + 1], off);	/* decompressed records: not in the map */
	}
	return low;
}

static void replay_record(struct importer *im, const struct pd_record *r)
{
	struct perf_event_header h;

	memcpy(&h, r->data, sizeof(h));
	im->info->records++;
	switch (r->type) {
	case PERF_RECORD_SAMPLE: on_sample(im, r); break;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2: on_mmap(im, &h, r->data, r->size); break;
	case PERF_RECORD_COMM: on_comm(im, &h, r->data, r->size); break;
	case PERF_RECORD_FORK: on_fork(im, r->data, r->size); break;
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES: on_lost(im, r); break;
	case PERF_RECORD_EXIT: break;	/* spaces stay: late samples may follow */
	default: im->info->skipped++; break;
	}
}

/*
 * The import is bound by memory latency: each sample's registers and
 * stack copy are cold (8 KiB apart, visited in time order, not file
 * order).  Asking for the first 2 KiB of the record two places ahead
 * while this one is unwound cut a 30k-sample DWARF import from ~60 to
 * ~53 ms of CPU (perf stat -r 15, interleaved; distances 2-8 and
 * 1-4 KiB all gave the same).
 */
static void prefetch_record(const struct pd_file *f, size_t i)
{
	if (i >= f->records.n)
		return;
	const struct pd_record *r = &f->records.v[i];
	for (uint32_t k = 0; k < r->size && k < 2048; k += 64)
		__builtin_prefetch(r->data + k);
}

static void replay(struct importer *im)
{
	struct pd_file *f = im->f;

	f->released = 0;	/* a full scan at open gave its pages back: start over */
	while (pd_next_records(f)) {
		size_t *low = f->release_behind ? needed_from(f) : NULL;
		for (size_t i = 0; i < f->records.n; i++) {
			if (low)
				pd_release_behind(f, f->buf + low[i]);
			prefetch_record(f, i + 2);
			replay_record(im, &f->records.v[i]);
		}
		free(low);
	}
}

/* ---- meta ----------------------------------------------------------------------- */

static const char *fallback_event_name(const struct perf_event_attr *a)
{
	static const char *const sw[] = { "cpu-clock", "task-clock", "page-faults",
					  "context-switches", "cpu-migrations" };
	static const char *const hw[] = { "cycles", "instructions" };

	if (a->type == PERF_TYPE_SOFTWARE && a->config < ARRAY_SIZE(sw))
		return sw[a->config];
	if (a->type == PERF_TYPE_HARDWARE && a->config < ARRAY_SIZE(hw))
		return hw[a->config];
	return "unknown";
}

/* "cpu-clock:u" -> "cpu-clock", but "sched:sched_switch" stays whole. */
static char *event_base_name(const char *name)
{
	const char *colon = strrchr(name, ':');

	if (colon && colon[1] && strspn(colon + 1, "ukhGHpPSDIWe") == strlen(colon + 1))
		return xstrndup(name, (size_t)(colon - name));
	return xstrdup(name);
}

static void set_meta(struct importer *im)
{
	const struct pd_file *f = im->f;
	const struct perf_event_attr *a = &im->main->attr;
	const char *name = *im->main->name ? im->main->name : fallback_event_name(a);
	char buf[32];
	char *event = event_base_name(name);

	prof_meta_set(im->p, "event", event);
	free(event);
	if (a->freq) {
		snprintf(buf, sizeof(buf), "%llu", (unsigned long long)a->sample_freq);
		prof_meta_set(im->p, "frequency", buf);
	}
	if (im->clock_event) {
		uint64_t period = a->freq ? (a->sample_freq ? 1000000000ULL / a->sample_freq : 0)
					  : a->sample_period;
		im->p->period_ns = period;
		snprintf(buf, sizeof(buf), "%llu", (unsigned long long)period);
		prof_meta_set(im->p, "period_ns", buf);
	}
	if (f->cmdline) {
		const char *cmd = strstr(f->cmdline, " -- ");
		prof_meta_set(im->p, "command", cmd ? cmd + 4 : f->cmdline);
	}
	if (f->hostname)
		prof_meta_set(im->p, "hostname", f->hostname);
	if (f->osrelease)
		prof_meta_set(im->p, "kernel", f->osrelease);
	if (f->version)
		prof_meta_set(im->p, "perf_version", f->version);
	prof_meta_set(im->p, "callgraph",
		      (a->sample_type & PERF_SAMPLE_STACK_USER) ? "dwarf" :
		      (a->sample_type & PERF_SAMPLE_CALLCHAIN) ? "fp" : "none");
	if (a->sample_type & PERF_SAMPLE_STACK_USER) {
		prof_meta_set(im->p, "unwinder", "libdw");
		snprintf(buf, sizeof(buf), "%u", a->sample_stack_user);
		prof_meta_set(im->p, "stack_size", buf);
	}
	prof_meta_set(im->p, "source", "perf.data");
}

/* The first event that is not perf's "dummy" (sideband-only) event. */
static const struct pd_attr *main_attr(const struct pd_file *f)
{
	for (size_t i = 0; i < f->attrs.n; i++) {
		const struct perf_event_attr *a = &f->attrs.v[i].attr;
		if (!(a->type == PERF_TYPE_SOFTWARE && a->config == PERF_COUNT_SW_DUMMY))
			return &f->attrs.v[i];
	}
	return &f->attrs.v[0];
}

/* ---- entry points --------------------------------------------------------------- */

static int read_buffer(const uint8_t *buf, size_t len, struct prof_profile *p,
		       struct perfdata_info *info, bool file_map);

int perfdata_read_mem(const uint8_t *buf, size_t len, struct prof_profile *p,
		      struct perfdata_info *info)
{
	return read_buffer(buf, len, p, info, false);
}

static int read_buffer(const uint8_t *buf, size_t len, struct prof_profile *p,
		       struct perfdata_info *info, bool file_map)
{
	struct perfdata_info dummy;
	struct pd_file f;
	struct importer im = { .p = p };

	info = info ? info : &dummy;
	memset(info, 0, sizeof(*info));
	if (pd_open_stream(&f, buf, len, file_map))
		return -EINVAL;

	im.info = info;
	im.f = &f;
	im.main = main_attr(&f);
	const struct perf_event_attr *a = &im.main->attr;
	im.clock_event = a->type == PERF_TYPE_SOFTWARE &&
			 (a->config == PERF_COUNT_SW_CPU_CLOCK || a->config == PERF_COUNT_SW_TASK_CLOCK);
	im.sym = prof_symbolizer_new(p);
	im.unw = prof_unwinder_new(PROF_UNWIND_LIBDW);
	set_meta(&im);
	replay(&im);
	finish_lost(&im);
	prof_timed_sort(p);
	info->pipe = f.pipe;	/* known once the stream was read */
	info->compressed = f.compressed;
	info->truncated = f.truncated;
	info->nr_attrs = (uint32_t)f.attrs.n;
	info->skipped += f.skipped;
	if (info->other_samples)
		warning("perf.data has %zu events; imported the first, '%s', only (%" PRIu64
			" samples of the others ignored)",
			f.attrs.n, prof_meta_get(p, "event"), info->other_samples);

	prof_unwinder_free(im.unw);
	prof_symbolizer_free(im.sym);
	for (size_t i = 0; i < im.spaces.n; i++)
		prof_addrspace_free(im.spaces.v[i]);
	VEC_FREE(&im.spaces);
	u64map_free(&im.space_of_pid);
	u64map_free(&im.comm_of_tid);
	pd_close(&f);
	return 0;
}

/* "-": a pipe-mode stream on stdin (perf record -o - | prof report -i -). */
static int read_stdin(struct prof_profile *p, struct perfdata_info *info)
{
	struct strbuf sb = STRBUF_INIT;
	char chunk[65536];
	ssize_t n;

	while ((n = read(0, chunk, sizeof(chunk))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;
			sb_release(&sb);
			error("cannot read perf.data from stdin: %s", strerror(e));
			return -e;
		}
		sb_add(&sb, chunk, (size_t)n);
	}
	int ret = perfdata_read_mem((const uint8_t *)sb_str(&sb), sb.len, p, info);
	sb_release(&sb);
	return ret;
}

int perfdata_probe(const char *path)
{
	char magic[8];
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, magic, sizeof(magic));
	close(fd);
	return n == (ssize_t)sizeof(magic) && perfdata_is_perf_data(magic, sizeof(magic));
}

int perfdata_read(const char *path, struct prof_profile *p, struct perfdata_info *info)
{
	struct stat st = { 0 };

	if (!strcmp(path, "-"))
		return read_stdin(p, info);
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		int e = errno;
		error("cannot open '%s': %s", path, strerror(e));
		return -e;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		int e = S_ISDIR(st.st_mode) ? EISDIR : S_ISREG(st.st_mode) ? errno : EINVAL;
		close(fd);
		error("cannot read '%s': %s", path,
		      e == EISDIR ? "is a directory (perf.data directory format is not supported)"
				  : strerror(e));
		return -e;
	}
	if (st.st_size == 0) {
		close(fd);
		error("'%s' is empty (perf record wrote nothing)", path);
		return -EINVAL;
	}
	/* mmap, not read: perf.data files can be larger than memory */
	void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	int e = errno;
	close(fd);
	if (map == MAP_FAILED) {
		error("cannot map '%s': %s", path, strerror(e));
		return -e;
	}
	madvise(map, (size_t)st.st_size, MADV_SEQUENTIAL);
	int ret = read_buffer(map, (size_t)st.st_size, p, info, true);
	munmap(map, (size_t)st.st_size);
	return ret;
}
