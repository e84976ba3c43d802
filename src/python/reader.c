/*
 * reader.c - reads the Python frames of a running CPython thread from
 * outside (include/prof/python.h), with process_vm_readv, never stopping
 * the process: the interpreter is found once per process, thread states
 * once per thread, code objects once per object; a sample then costs one
 * read of the thread state, one for the frames (a window of memory below
 * the innermost, where its callers lie: one more for each frame outside
 * it) and one for the whole chain's code objects (checked, not re-read),
 * which for a switched-out thread also reads its stack again to check
 * that it did not run since.
 *
 * Design notes / invariants:
 *  - procs maps pid -> index + 1 into proc[]; a proc is pending (queued
 *    for the detector thread), not CPython (looked at once, until
 *    forgotten) or has a layout and _PyRuntime's address.
 *  - Code objects are rarely freed, but an address can be reused by a new
 *    one: the cache keys on the address and checks (firstlineno, filename,
 *    qualname pointers) at every sample, in one batched read for the
 *    chain; a different value reads the object again under a new id.
 *  - The code table (ids -> struct prof_pycode) is shared with the thread
 *    that names frames: appended under a mutex, entries never move or
 *    change, freed with the reader.  Everything else is under rlock: the
 *    pumps of two events (CPU samples, switch-outs) read at once.
 */
#include "python-priv.h"
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#define MAX_STR 1024		/* characters of a name or file kept */
#define MAX_LINETABLE (1u << 20)
#define MAX_THREADS 100000	/* a thread list longer than this is corrupt */
#define CODE_KEY_LEN 96		/* covers firstlineno..linetable in every layout */
#define RAW_MAX (4 * PROF_PY_MAX_FRAMES)	/* frames walked, shims (3.12+) included */
#define FRAME_WINDOW 2048	/* bytes read at once for the frames of a chain */
/* How long after the last new code object the samples are wanted soon. */
#define HURRY_NS 1000000000ull

struct code_key {		/* what the cache checks before trusting an id */
	uint64_t addr;
	uint8_t bytes[CODE_KEY_LEN];
};

struct proc {
	pid_t pid;
	bool pending;			/* not looked at yet (detector_main) */
	bool mapped;			/* pending, and a python file was mapped since */
	bool python;
	struct prof_py_layout l;
	uint64_t runtime;		/* address of _PyRuntime */
	uint64_t code_type;		/* address of PyCode_Type, 0 if unknown */
	struct u64map tstates;		/* tid -> PyThreadState address */
	struct u64map codes;		/* code address -> index into keys */
	VEC(struct code_key) keys;
	VEC(uint32_t) key_ids;		/* [keys index] -> code id */
};

struct frame_window {		/* memory read for a chain's frames (frame_at) */
	uint64_t lo, len;
	uint8_t b[FRAME_WINDOW];
};

struct elf_syms {
	uint64_t runtime, version;	/* file vaddrs, 0 if absent */
	uint64_t code_type;		/* PyCode_Type's, 0 if absent */
	uint64_t first_load;		/* vaddr of the first PT_LOAD, page aligned */
};

struct elf_seen {			/* one interpreter file, looked up once */
	dev_t dev;
	ino_t ino;
	struct timespec mtime;
	int ret;			/* elf_lookup's */
	struct elf_syms es;
};

struct prof_python {
	struct u64map procs;		/* pid -> index + 1 */
	VEC(struct elf_seen) elves;	/* every python-named file looked at */
	VEC(pid_t) pending;		/* procs to look at, oldest first */
	size_t pending_at;		/* the next one */
	pthread_t detector;		/* looks at them (detector_main) */
	pthread_cond_t wake;		/* pending grew, or stop */
	bool detector_on, stop;
	VEC(struct proc *) proc;
	pthread_mutex_t rlock;		/* everything but codes: two pumps read */
	pthread_mutex_t lock;		/* codes */
	VEC(struct prof_pycode *) codes;
	size_t found;
	uint16_t last_version;
	struct pyraw chain[PROF_PY_MAX_FRAMES];	/* the Python frames of raw[] */
	struct prof_pybpf *bpf;		/* reads chains at the sample; NULL: none */
	uint64_t at_sample, after;	/* chains read by the program, by the recorder */
	uint64_t blocked;		/* chains of switched-out threads (the recorder's) */
	uint64_t at_switch;		/* chains of kept switch-outs, read by the program then */
	bool switch_frames;		/* the accountant's switch program goes on to read them */
	struct pyraw raw[RAW_MAX];	/* one chain as read */
	VEC(uint8_t) stack_now;		/* a blocked thread's C stack, read again */
	uint64_t hurry_until;		/* prof_python_hurry */
};

struct prof_python *prof_python_new(void)
{
	struct prof_python *py = xcalloc(1, sizeof(*py));

	pthread_mutex_init(&py->lock, NULL);
	pthread_mutex_init(&py->rlock, NULL);
	pthread_cond_init(&py->wake, NULL);
	if (!getenv("PROF_PYTHON_NO_BPF"))
		(void)prof_pybpf_open(&py->bpf);
	return py;
}

int prof_python_bpf_prog(const struct prof_python *py)
{
	return py->bpf ? prof_pybpf_prog_fd(py->bpf) : -1;
}

int prof_python_switch_prog(const struct prof_python *py)
{
	return py->bpf ? prof_pybpf_switch_prog_fd(py->bpf) : -1;
}

static void pycode_free(struct prof_pycode *c)
{
	free(c->qualname);
	free(c->filename);
	free(c->linetable);
	free(c);
}

/* New code objects: a module's body, exec'd or eval'd code is freed once
 * it has run, and its memory reused, often before a pump that looks at
 * the rings every 50 ms comes to its samples (the chain is then dropped
 * as stale): a run of pytest lost 13% of its Python stacks that way, 1-2%
 * with the pump looking every millisecond (docs/python.md). */
static void hurry(struct prof_python *py)
{
	__atomic_store_n(&py->hurry_until, now_ns() + HURRY_NS, __ATOMIC_RELAXED);
}

const uint64_t *prof_python_hurry(const struct prof_python *py)
{
	return &py->hurry_until;
}

void prof_python_launched(struct prof_python *py)
{
	hurry(py);
}

void prof_python_frames_at_switch(struct prof_python *py)
{
	pthread_mutex_lock(&py->rlock);
	py->switch_frames = true;
	pthread_mutex_unlock(&py->rlock);
}

int prof_python_only(struct prof_python *py, const pid_t *pids, size_t n)
{
	return py->bpf ? prof_pybpf_only(py->bpf, pids, n) : -ENOTSUP;
}

static void proc_free(struct proc *p)
{
	if (!p)
		return;
	u64map_free(&p->tstates);
	u64map_free(&p->codes);
	VEC_FREE(&p->keys);
	VEC_FREE(&p->key_ids);
	free(p);
}

void prof_python_free(struct prof_python *py)
{
	if (!py)
		return;
	if (py->detector_on) {
		pthread_mutex_lock(&py->rlock);
		py->stop = true;
		pthread_cond_signal(&py->wake);
		pthread_mutex_unlock(&py->rlock);
		pthread_join(py->detector, NULL);
	}
	pthread_cond_destroy(&py->wake);
	prof_pybpf_free(py->bpf);
	for (size_t i = 0; i < py->proc.n; i++)
		proc_free(py->proc.v[i]);
	VEC_FREE(&py->proc);
	VEC_FREE(&py->elves);
	VEC_FREE(&py->stack_now);
	VEC_FREE(&py->pending);
	u64map_free(&py->procs);
	for (size_t i = 0; i < py->codes.n; i++)
		pycode_free(py->codes.v[i]);
	VEC_FREE(&py->codes);
	pthread_mutex_destroy(&py->lock);
	pthread_mutex_destroy(&py->rlock);
	free(py);
}

static int rd(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec l = { buf, len }, r = { (void *)(uintptr_t)addr, len };

	if (!addr)
		return -EFAULT;
	return process_vm_readv(pid, &l, 1, &r, 1, 0) == (ssize_t)len ? 0 : -EFAULT;
}

static uint64_t u64_at(const uint8_t *b, size_t off)
{
	uint64_t v;

	memcpy(&v, b + off, 8);
	return v;
}

/* --- finding the interpreter --------------------------------------------------------- */


static void scan_symtab(Elf *elf, Elf_Scn *scn, GElf_Shdr *sh, struct elf_syms *out)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t n = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;

	for (size_t i = 0; d && i < n; i++) {
		GElf_Sym s;
		const char *name;
		if (!gelf_getsym(d, (int)i, &s) || !s.st_value ||
		    !(name = elf_strptr(elf, sh->sh_link, s.st_name)))
			continue;
		if (!strcmp(name, "_PyRuntime"))
			out->runtime = s.st_value;
		else if (!strcmp(name, "Py_Version"))
			out->version = s.st_value;
		else if (!strcmp(name, "PyCode_Type"))
			out->code_type = s.st_value;
	}
}

/* _PyRuntime, Py_Version and PyCode_Type in the ELF file at path; 0 when
 * it has the first. */
static int elf_lookup(const char *path, struct elf_syms *out)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *elf;
	Elf_Scn *scn = NULL;
	size_t nph;

	memset(out, 0, sizeof(*out));
	if (fd < 0)
		return -errno;
	elf_version(EV_CURRENT);
	if (!(elf = elf_begin(fd, ELF_C_READ_MMAP, NULL))) {
		close(fd);
		return -EINVAL;
	}
	if (elf_getphdrnum(elf, &nph) == 0)
		for (size_t i = 0; i < nph; i++) {
			GElf_Phdr ph;
			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD) {
				out->first_load = ph.p_vaddr & ~(uint64_t)0xfff;
				break;
			}
		}
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && (sh.sh_type == SHT_DYNSYM || sh.sh_type == SHT_SYMTAB))
			scan_symtab(elf, scn, &sh, out);
	}
	elf_end(elf);
	close(fd);
	return out->runtime ? 0 : -ENOENT;
}

/* elf_lookup once per file (device, inode, mtime): on a busy machine
 * python processes come and go by the dozen a second (-a), and reading
 * libpython's symbol table took milliseconds of the pump's time each. */
static int elf_lookup_cached(struct prof_python *py, const char *path, struct elf_syms *out)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return -errno;
	for (size_t i = 0; i < py->elves.n; i++) {
		struct elf_seen *e = &py->elves.v[i];
		if (e->dev == st.st_dev && e->ino == st.st_ino && e->mtime.tv_sec == st.st_mtim.tv_sec &&
		    e->mtime.tv_nsec == st.st_mtim.tv_nsec) {
			*out = e->es;
			return e->ret;
		}
	}
	struct elf_seen e = { .dev = st.st_dev, .ino = st.st_ino, .mtime = st.st_mtim };
	e.ret = elf_lookup(path, &e.es);
	VEC_PUSH(&py->elves, e);
	*out = e.es;
	return e.ret;
}

/* "python3.11", "libpython3.11.so.1.0": the version its name says, or 0. */
static uint16_t version_from_name(const char *path)
{
	const char *base = strrchr(path, '/'), *s;
	unsigned minor;

	base = base ? base + 1 : path;
	if (!(s = strstr(base, "python3.")) || sscanf(s + 8, "%u", &minor) != 1 || minor > 99)
		return 0;
	return (uint16_t)(0x0300 | minor);
}

static bool maybe_python(const char *path)
{
	const char *base = strrchr(path, '/');

	return base && strstr(base, "python") != NULL;
}

/* What detect() found for a process. */
struct found {
	bool python;
	struct prof_py_layout l;
	uint64_t runtime;
	uint64_t code_type;
};

/* Looks for the interpreter in the files pid maps whose name says python.
 * The detector thread only (it alone uses py->elves); takes no lock. */
static void detect(struct prof_python *py, pid_t pid, struct found *out)
{
	char mpath[64], line[4096], seen[PATH_MAX] = "";
	FILE *f;

	memset(out, 0, sizeof(*out));
	snprintf(mpath, sizeof(mpath), "/proc/%d/maps", (int)pid);
	if (!(f = fopen(mpath, "re")))
		return;
	while (!out->python && fgets(line, sizeof(line), f)) {
		unsigned long long start, end, pgoff;
		char perms[8], path[PATH_MAX], fpath[PATH_MAX + 32];
		struct elf_syms es = { 0 };
		if (!strstr(line, "python"))
			continue;	/* most lines of most processes: no parsing */
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095[^\n]", &start, &end, perms, &pgoff,
			   path) != 5 || pgoff != 0 || path[0] != '/' || !maybe_python(path) ||
		    !strcmp(path, seen))
			continue;
		snprintf(seen, sizeof(seen), "%s", path);
		snprintf(fpath, sizeof(fpath), "/proc/%d/root%s", (int)pid, path);
		if (elf_lookup_cached(py, fpath, &es) < 0)
			continue;
		uint64_t bias = start - es.first_load;
		uint16_t version = 0;
		uint32_t hex;
		if (es.version && rd(pid, bias + es.version, &hex, 4) == 0)
			version = (uint16_t)(hex >> 16);
		if (!version)
			version = version_from_name(path);
		out->runtime = bias + es.runtime;
		out->code_type = es.code_type ? bias + es.code_type : 0;
		if (version >= 0x030d) {
			uint64_t w[80];
			if (rd(pid, out->runtime, w, sizeof(w)) < 0 ||
			    prof_py_layout_from_debug(w, ARRAY_SIZE(w), &out->l) < 0)
				continue;
		} else {
			const struct prof_py_layout *l = prof_py_layout_of(version);
			if (!l)
				continue;
			out->l = *l;
		}
		out->python = true;
	}
	fclose(f);
}

static void scan_threads(struct proc *p, struct prof_pybpf *bpf);

/* What detect found becomes pid's proc, if it still waits for it (rlock
 * held); a CPython one's threads are named to the BPF reader. */
static void settle(struct prof_python *py, pid_t pid, const struct found *fd)
{
	uint64_t i;

	if (!u64map_get(&py->procs, (uint64_t)pid, &i) || !i || !py->proc.v[i - 1]->pending)
		return;
	struct proc *p = py->proc.v[i - 1];
	if (!fd->python && p->mapped) {	/* maybe looked at before that */
		p->mapped = false;
		VEC_PUSH(&py->pending, pid);
		return;
	}
	p->pending = false;
	p->python = fd->python;
	p->l = fd->l;
	p->runtime = fd->runtime;
	p->code_type = fd->code_type;
	if (fd->python) {
		hurry(py);	/* a new interpreter: its imports may be to come */
		py->found++;
		py->last_version = fd->l.version;
		if (py->bpf)	/* the program reads from the next sample on */
			scan_threads(p, py->bpf);
	}
}

/* The detector thread: looks at the processes first seen by the readers,
 * oldest first, away from them: reading a big process's maps took up to
 * 41 ms, and the samples queued behind it would all come too late. */
static void *detector_main(void *arg)
{
	struct prof_python *py = arg;
	struct found fd;

	pthread_mutex_lock(&py->rlock);
	for (;;) {
		while (!py->stop && py->pending_at == py->pending.n)
			pthread_cond_wait(&py->wake, &py->rlock);
		if (py->stop)
			break;
		pid_t pid = py->pending.v[py->pending_at++];
		if (py->pending_at == py->pending.n)
			py->pending.n = py->pending_at = 0;
		pthread_mutex_unlock(&py->rlock);
		detect(py, pid, &fd);
		pthread_mutex_lock(&py->rlock);
		settle(py, pid, &fd);
	}
	pthread_mutex_unlock(&py->rlock);
	return NULL;
}

/* pid's proc, and whether it is new (rlock held): a new one reads as not
 * CPython until it was looked at. */
static struct proc *proc_add(struct prof_python *py, pid_t pid, bool *created)
{
	uint64_t *slot = u64map_slot(&py->procs, (uint64_t)pid, created);

	if (!*created && *slot)
		return py->proc.v[*slot - 1];
	struct proc *p = xcalloc(1, sizeof(*p));
	p->pid = pid;
	p->pending = true;
	VEC_PUSH(&py->proc, p);
	*slot = py->proc.n;
	*created = true;
	return p;
}

/* The proc of pid (rlock held); a new one is queued for the detector
 * thread. */
static struct proc *proc_of(struct prof_python *py, pid_t pid)
{
	bool created;
	struct proc *p = proc_add(py, pid, &created);

	if (!created)
		return p;
	VEC_PUSH(&py->pending, pid);
	if (!py->detector_on)
		py->detector_on = thread_start_nosignals(&py->detector, detector_main, py) == 0;
	pthread_cond_signal(&py->wake);
	return p;
}

/* On the caller's thread, so that no thread of prof's starts before the
 * recording does: an attach's targets, looked at before its events are
 * enabled, have their threads named to the BPF reader from the first
 * switch-out on, not from the first sample the pump drains. */
void prof_python_look_at(struct prof_python *py, const pid_t *pids, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		struct found fd;
		bool created;

		pthread_mutex_lock(&py->rlock);
		(void)proc_add(py, pids[k], &created);
		pthread_mutex_unlock(&py->rlock);
		if (!created)
			continue;
		detect(py, pids[k], &fd);
		pthread_mutex_lock(&py->rlock);
		settle(py, pids[k], &fd);
		pthread_mutex_unlock(&py->rlock);
	}
}

void prof_python_forget(struct prof_python *py, pid_t pid)
{
	uint64_t i;

	pthread_mutex_lock(&py->rlock);
	if (u64map_get(&py->procs, (uint64_t)pid, &i) && i) {
		size_t it = 0;
		uint64_t tid, ts;
		while (py->bpf && py->proc.v[i - 1] && u64map_next(&py->proc.v[i - 1]->tstates, &it, &tid, &ts))
			prof_pybpf_del_thread(py->bpf, (pid_t)tid);
		proc_free(py->proc.v[i - 1]);
		py->proc.v[i - 1] = NULL;
		u64map_del(&py->procs, (uint64_t)pid);
	}
	pthread_mutex_unlock(&py->rlock);
}

void prof_python_mapped(struct prof_python *py, pid_t pid, const char *path)
{
	struct proc *p = NULL;
	bool again = false;
	uint64_t i;

	if (!maybe_python(path))
		return;
	pthread_mutex_lock(&py->rlock);
	if (u64map_get(&py->procs, (uint64_t)pid, &i) && i)
		p = py->proc.v[i - 1];
	if (p && p->pending)
		p->mapped = true;	/* the detector may be reading its maps already */
	else if (p)
		again = !p->python;
	pthread_mutex_unlock(&py->rlock);
	if (again)
		prof_python_forget(py, pid);
}

bool prof_python_is_native(struct prof_python *py, pid_t pid)
{
	bool native;

	pthread_mutex_lock(&py->rlock);
	struct proc *p = proc_of(py, pid);
	native = !p->pending && !p->python;
	pthread_mutex_unlock(&py->rlock);
	return native;
}

void prof_python_read_counts(struct prof_python *py, uint64_t *at_sample, uint64_t *after,
			     uint64_t *blocked, uint64_t *at_switch)
{
	pthread_mutex_lock(&py->rlock);
	*at_sample = py->at_sample;
	*after = py->after;
	*blocked = py->blocked;
	*at_switch = py->at_switch;
	pthread_mutex_unlock(&py->rlock);
}

size_t prof_python_found(struct prof_python *py, uint16_t *last_version)
{
	size_t n;

	pthread_mutex_lock(&py->rlock);
	if (last_version)
		*last_version = py->last_version;
	n = py->found;
	pthread_mutex_unlock(&py->rlock);
	return n;
}

/* --- thread states ---------------------------------------------------------------------- */

static size_t tstate_len(const struct prof_py_layout *l)
{
	uint16_t m = MAX(MAX(l->tstate_next, l->tstate_cframe),
			 MAX(l->tstate_current_frame, l->tstate_native_tid));
	return (size_t)m + 8;
}

/* The kernel tid of a thread state read into buf (3.8-3.10: through the
 * pthread_t it holds); 0 when it cannot be read. */
static uint64_t tstate_tid(struct proc *p, const uint8_t *buf)
{
	uint64_t v = u64_at(buf, p->l.tstate_native_tid);
	uint32_t tid = 0;

	if (!p->l.pthread_tid)
		return v;
	return rd(p->pid, v + p->l.pthread_tid, &tid, 4) == 0 ? tid : 0;
}

/* Walks every interpreter's thread list and caches tid -> thread state,
 * telling the BPF program (bpf may be NULL) about every thread. */
static void scan_threads(struct proc *p, struct prof_pybpf *bpf)
{
	const struct prof_py_layout *l = &p->l;
	uint64_t interp, ts;
	uint8_t buf[512];
	size_t len = tstate_len(l), seen = 0;

	if (len > sizeof(buf) || rd(p->pid, p->runtime + l->runtime_interp_head, &interp, 8) < 0)
		return;
	u64map_free(&p->tstates);
	memset(&p->tstates, 0, sizeof(p->tstates));
	for (int ni = 0; interp && ni < 64; ni++) {
		if (rd(p->pid, interp + l->interp_threads_head, &ts, 8) < 0)
			return;
		while (ts && seen++ < MAX_THREADS && rd(p->pid, ts, buf, len) == 0) {
			uint64_t tid = tstate_tid(p, buf);
			u64map_put(&p->tstates, tid, ts);
			if (bpf && tid)
				prof_pybpf_add_thread(bpf, p->pid, (pid_t)tid, ts, l);
			ts = u64_at(buf, l->tstate_next);
		}
		if (rd(p->pid, interp, &interp, 8) < 0)	/* PyInterpreterState.next is first */
			return;
	}
}

/* The thread state of tid read into buf (tstate_len bytes), its address
 * in *addr; 0 / -ESRCH. */
static int read_tstate(struct proc *p, struct prof_pybpf *bpf, pid_t tid, uint8_t *buf, uint64_t *addr)
{
	size_t len = tstate_len(&p->l);
	uint64_t ts;

	for (int pass = 0; pass < 2; pass++) {
		if (u64map_get(&p->tstates, (uint64_t)tid, &ts) && rd(p->pid, ts, buf, len) == 0 &&
		    tstate_tid(p, buf) == (uint64_t)tid) {
			*addr = ts;
			return 0;
		}
		if (pass == 0)
			scan_threads(p, bpf);
	}
	return -ESRCH;
}

/* --- code objects --------------------------------------------------------------------- */

/* A str object as UTF-8 (malloc'd), "?" when it cannot be read. */
static char *read_str(struct proc *p, uint64_t addr)
{
	const struct prof_py_layout *l = &p->l;
	uint8_t hdr[128], *raw = NULL;
	struct strbuf sb = { 0 };

	if ((size_t)l->compact_size + 8 > sizeof(hdr) || rd(p->pid, addr, hdr, l->compact_size) < 0)
		return xstrdup("?");
	uint64_t len = MIN(u64_at(hdr, l->unicode_length), (uint64_t)MAX_STR);
	uint32_t state;
	memcpy(&state, hdr + l->unicode_state, 4);
	unsigned kind = (state >> 2) & 7, compact = (state >> 5) & 1, ascii = (state >> 6) & 1;
	if (!compact || (kind != 1 && kind != 2 && kind != 4))
		return xstrdup("?");
	raw = xmalloc(len * kind + 1);
	if (rd(p->pid, addr + (ascii ? l->ascii_size : l->compact_size), raw, len * kind) < 0) {
		free(raw);
		return xstrdup("?");
	}
	for (uint64_t i = 0; i < len; i++) {
		uint32_t c = kind == 1 ? raw[i] : kind == 2 ? ((uint16_t *)raw)[i] : ((uint32_t *)raw)[i];
		if (c > 0x10ffff || (c >= 0xd800 && c < 0xe000)) {	/* not a str: memory reused */
			free(raw);
			sb_release(&sb);
			return xstrdup("?");
		}
		if (c < 0x80) {
			sb_addch(&sb, (char)c);
		} else if (c < 0x800) {
			sb_addch(&sb, (char)(0xc0 | (c >> 6)));
			sb_addch(&sb, (char)(0x80 | (c & 63)));
		} else if (c < 0x10000) {
			sb_addch(&sb, (char)(0xe0 | (c >> 12)));
			sb_addch(&sb, (char)(0x80 | ((c >> 6) & 63)));
			sb_addch(&sb, (char)(0x80 | (c & 63)));
		} else {
			sb_addch(&sb, (char)(0xf0 | (c >> 18)));
			sb_addch(&sb, (char)(0x80 | ((c >> 12) & 63)));
			sb_addch(&sb, (char)(0x80 | ((c >> 6) & 63)));
			sb_addch(&sb, (char)(0x80 | (c & 63)));
		}
	}
	free(raw);
	if (!sb.len) {
		sb_release(&sb);
		return xstrdup("?");
	}
	return sb.buf;
}

/* Whether the code object at addr is still the one whose key (len bytes
 * from co_firstlineno) was read: the same key, a live object's reference
 * count, and PyCode_Type for its type where the interpreter's symbols gave
 * it.  Asked after its names were read: alive then, it held them while
 * they were.  A code object freed since the sample (a module's body once
 * imported) keeps the name pointers the sample saw until its memory is
 * written again, or past the header of a smaller object made there, while
 * the strings they point to are freed and reused already: read, they
 * named a module's body "?" or after another str ("deprecated
 * (saferepr.py:1)", pytest's start).  Freeing writes the allocator's list
 * pointer where the count was (pymalloc: a pointer or NULL; glibc's
 * tcache: a mangled pointer, above 2^32 on x86-64); a live count is at
 * least 1 and at most 2^32 (3.12's immortal objects). */
static bool code_still(const struct proc *p, uint64_t addr, const uint8_t *key, size_t len)
{
	uint16_t base = p->l.code_firstlineno;
	uint8_t now[256];
	uint64_t refcnt;

	if (base < 16 || base + len > sizeof(now) || rd(p->pid, addr, now, base + len) < 0)
		return false;
	refcnt = u64_at(now, 0);
	return refcnt >= 1 && refcnt <= (1ull << 32) && (!p->code_type || u64_at(now, 8) == p->code_type) &&
	       !memcmp(now + base, key, len);
}

/* A code object read in full, appended to the table; its id, or
 * UINT32_MAX when it was no longer the one whose key (len bytes) was
 * read. */
static uint32_t add_code(struct prof_python *py, struct proc *p, uint64_t addr, const uint8_t *key, size_t len)
{
	const struct prof_py_layout *l = &p->l;
	uint16_t base = l->code_firstlineno;
	struct prof_pycode *c = xcalloc(1, sizeof(*c));
	uint64_t lt = u64_at(key, l->code_linetable - base), n = 0;

	memcpy(&c->firstlineno, key, 4);
	c->lines = l->lines;
	c->filename = read_str(p, u64_at(key, l->code_filename - base));
	c->qualname = read_str(p, u64_at(key, l->code_qualname - base));
	if (rd(p->pid, lt + l->bytes_size, &n, 8) == 0 && n && n <= MAX_LINETABLE) {
		c->linetable = xmalloc(n);
		if (rd(p->pid, lt + l->bytes_sval, c->linetable, n) == 0) {
			c->linetable_len = n;
		} else {
			free(c->linetable);
			c->linetable = NULL;
		}
	}
	if (!code_still(p, addr, key, len)) {
		pycode_free(c);
		return UINT32_MAX;
	}
	pthread_mutex_lock(&py->lock);
	VEC_PUSH(&py->codes, c);
	uint32_t id = (uint32_t)py->codes.n - 1;
	pthread_mutex_unlock(&py->lock);
	return id;
}

const struct prof_pycode *prof_python_code(struct prof_python *py, uint32_t id)
{
	const struct prof_pycode *c = NULL;

	pthread_mutex_lock(&py->lock);
	if (id < py->codes.n)
		c = py->codes.v[id];
	pthread_mutex_unlock(&py->lock);
	return c;
}

/* Whether a code key (bytes from co_firstlineno) holds the name pointers
 * the BPF program saw in the code object at the sample. */
static bool key_named(const struct prof_py_layout *l, const uint8_t *key, const struct pyraw *r)
{
	uint16_t base = l->code_firstlineno;

	return u64_at(key, l->code_filename - base) == r->filename &&
	       u64_at(key, l->code_qualname - base) == r->qualname;
}

/* The code keys of a chain to read: iovecs from [1] on, [0] left for a
 * read that shares the call (blocked_code_ids); need[j] is the frame of
 * the key read into keys[j]. */
struct key_reads {
	struct iovec lv[PROF_PY_MAX_FRAMES + 1], rv[PROF_PY_MAX_FRAMES + 1];
	size_t need[PROF_PY_MAX_FRAMES], m, len;
};

static __thread uint8_t keys[PROF_PY_MAX_FRAMES][CODE_KEY_LEN];

/* The ids of the n code objects of py->chain that need no read (known,
 * and the sample saw their names unchanged) into out; the others into
 * kr.  Reads nothing and changes no cache, so that the caller can still
 * drop the chain after the read. */
static int keys_to_read(struct prof_python *py, struct proc *p, struct prof_pyframe *out, size_t n,
			struct key_reads *kr)
{
	uint16_t base = p->l.code_firstlineno;
	uint64_t k;

	kr->m = 0;
	kr->len = (size_t)p->l.code_linetable + 8 - base;
	if (kr->len > CODE_KEY_LEN)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		const struct pyraw *r = &py->chain[i];
		if (r->named && u64map_get(&p->codes, r->code, &k) && key_named(&p->l, p->keys.v[k].bytes, r)) {
			out[i].code = p->key_ids.v[k];
			continue;
		}
		kr->lv[kr->m + 1] = (struct iovec){ keys[kr->m], kr->len };
		kr->rv[kr->m + 1] = (struct iovec){ (void *)(uintptr_t)(r->code + base), kr->len };
		kr->need[kr->m++] = i;
	}
	return 0;
}

/* The ids of the keys in kr, got bytes of them read (-EFAULT unless all):
 * a known key unchanged keeps its id, another is read in full under a
 * new one.  -ESTALE when a code object is no longer the one the sample
 * saw. */
static int keys_take(struct prof_python *py, struct proc *p, struct prof_pyframe *out,
		     const struct key_reads *kr, ssize_t got)
{
	uint64_t k;

	if (got != (ssize_t)(kr->len * kr->m))
		return -EFAULT;
	for (size_t j = 0; j < kr->m; j++) {
		const struct pyraw *r = &py->chain[kr->need[j]];
		bool created;
		if (r->named && !key_named(&p->l, keys[j], r)) {
			hurry(py);
			return -ESTALE;	/* freed since the sample, its memory reused */
		}
		if (u64map_get(&p->codes, r->code, &k) && !memcmp(p->keys.v[k].bytes, keys[j], kr->len)) {
			out[kr->need[j]].code = p->key_ids.v[k];
			continue;
		}
		struct code_key ck = { .addr = r->code };
		hurry(py);
		memcpy(ck.bytes, keys[j], kr->len);
		uint32_t id = add_code(py, p, r->code, keys[j], kr->len);
		if (id == UINT32_MAX)
			return -ESTALE;
		uint64_t *slot = u64map_slot(&p->codes, r->code, &created);
		if (created) {
			VEC_PUSH(&p->keys, ck);
			VEC_PUSH(&p->key_ids, id);
			*slot = p->keys.n - 1;
		} else {
			p->keys.v[*slot] = ck;
			p->key_ids.v[*slot] = id;
		}
		out[kr->need[j]].code = id;
	}
	return 0;
}

/* Ids of the n code objects of one chain (py->chain): known ones whose
 * names the sample saw unchanged as they are; one batched read of the
 * others' keys, and a full read of those not seen (or changed) since.
 * -ESTALE when a code object is no longer the one the sample saw. */
static int code_ids(struct prof_python *py, struct proc *p, struct prof_pyframe *out, size_t n)
{
	struct key_reads kr;
	ssize_t got = 0;
	int ret;

	if ((ret = keys_to_read(py, p, out, n, &kr)) < 0)
		return ret;
	if (kr.m)
		got = process_vm_readv(p->pid, kr.lv + 1, kr.m, kr.rv + 1, kr.m, 0);
	return keys_take(py, p, out, &kr, got);
}

/* --- the chain ---------------------------------------------------------------------------- */

/*
 * The chain's head now; -ESTALE when the sample's stack copy shows another
 * head in the innermost activation's _PyCFrame (3.11, 3.12), or shows that
 * the activation the thread runs now did not exist at the sample (its
 * _PyCFrame lies below the sample's sp).  A _PyCFrame outside the copy
 * (the thread state's root one, a stack deeper than the copy) is not
 * checked.  A blocked thread's head is read from that copy when it is
 * there.
 */
static int current_frame(struct proc *p, const uint8_t *ts, const struct prof_pysample *smp,
			 uint64_t *head)
{
	const uint64_t near = 1u << 20;
	uint64_t cf, f = 0;

	*head = 0;
	if (p->l.version >= 0x030d || p->l.frame_objects) {
		*head = u64_at(ts, p->l.tstate_current_frame);
		return 0;
	}
	cf = u64_at(ts, p->l.tstate_cframe) + p->l.cframe_current_frame;
	if (smp && smp->blocked && smp->len >= 8 && cf >= smp->sp && cf - smp->sp <= smp->len - 8) {
		/* on the stack the sample copied, which a blocked thread leaves
		 * as it was (checked after the chain: still_blocked) */
		*head = u64_at(smp->stack, cf - smp->sp);
		return 0;
	}
	if (rd(p->pid, cf, &f, 8) < 0)
		return -EFAULT;
	*head = f;
	if (!smp || !smp->len)
		return 0;
	if (cf < smp->sp && cf + near > smp->sp)
		return -ESTALE;
	if (cf >= smp->sp && cf + 8 <= smp->sp + smp->len && u64_at(smp->stack, cf - smp->sp) != f)
		return -ESTALE;
	return 0;
}

/* The frame at addr (size bytes), from the window of memory read last
 * when it lies in it, else from a new window: the bytes below the frame
 * down to FRAME_WINDOW before its end, but not below its own page (the
 * one below may be unmapped), read at once.  A caller's frame (3.11+)
 * lies just below its callee on the thread's data stack, so a chain of a
 * few frames is one read instead of one a frame. */
static const uint8_t *frame_at(struct proc *p, struct frame_window *w, uint64_t addr, size_t size)
{
	uint64_t end = addr + size, lo = addr & ~(uint64_t)4095;

	/* no sum that can wrap: a frame read from a thread that ran on can
	 * hold any pointer (the chain is checked only after) */
	if (addr >= w->lo && addr - w->lo <= w->len && size <= w->len - (addr - w->lo))
		return w->b + (addr - w->lo);
	if (end > FRAME_WINDOW && end - FRAME_WINDOW > lo)
		lo = end - FRAME_WINDOW;
	if (end < addr || rd(p->pid, lo, w->b, end - lo) < 0)
		return NULL;
	w->lo = lo;
	w->len = end - lo;
	return w->b + (addr - lo);
}

/* The raw chain of tid read now, from the recorder (up to RAW_MAX frames
 * into py->raw): the count or a negative errno as prof_python_read's. */
static int chain_now(struct prof_python *py, struct proc *p, pid_t tid, const struct prof_pysample *smp)
{
	const struct prof_py_layout *l = &p->l;
	uint8_t ts[512];
	const uint8_t *fr;
	struct frame_window w = { .len = 0 };
	uint64_t frame, addr;
	int n = 0, ret;

	if (l->frame_size > FRAME_WINDOW)
		return -EINVAL;
	if (smp && smp->late && !py->bpf)
		return -ESTALE;
	if ((ret = read_tstate(p, py->bpf, tid, ts, &addr)) < 0)
		return ret;
	if (py->bpf)	/* the program reads this thread's next samples */
		prof_pybpf_add_thread(py->bpf, p->pid, tid, addr, l);
	if (smp && smp->late)	/* -EAGAIN: the program reads its next CPU samples */
		return py->bpf && !smp->blocked ? -EAGAIN : -ESTALE;
	if ((ret = current_frame(p, ts, smp, &frame)) < 0)
		return ret;
	for (; frame && n < RAW_MAX; n++) {
		if (!(fr = frame_at(p, &w, frame, l->frame_size)))
			return -EFAULT;
		py->raw[n] = (struct pyraw){
			.code = u64_at(fr, l->frame_code), .instr = u64_at(fr, l->frame_instr),
			.owner = fr[l->frame_owner], .is_entry = l->frame_is_entry ? fr[l->frame_is_entry] : 0,
		};
		frame = u64_at(fr, l->frame_previous);
	}
	return n;
}

/* The Python frames of a raw chain (up to max into out, their raw frames
 * into py->chain): shim frames (3.12+) mark the entry of the
 * frame before them. */
static size_t frames_of(struct prof_python *py, const struct prof_py_layout *l, size_t nraw,
			struct prof_pyframe *out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < nraw && n < max; i++) {
		const struct pyraw *r = &py->raw[i];
		if (l->owner_cstack != 0xff && r->owner == l->owner_cstack) {
			if (n)
				out[n - 1].entry = true;
			continue;
		}
		int64_t units = l->frame_objects ? (int32_t)(uint32_t)r->instr	/* f_lasti, -1 before the first */
			: r->instr ? ((int64_t)r->instr - (int64_t)(r->code + l->code_adaptive)) / 2 : 0;
		py->chain[n] = *r;
		out[n] = (struct prof_pyframe){
			.lasti = units > 0 ? (uint32_t)MIN(units, (int64_t)UINT32_MAX) : 0,
			.entry = l->frame_objects || (l->frame_is_entry && r->is_entry),
		};
		n++;
	}
	return n;
}

/* The iovecs that read a blocked thread's C stack again, from the
 * sample's stack pointer up (into py->stack_now); false when the sample
 * copied none, which cannot be checked. */
static bool stack_iov(struct prof_python *py, const struct prof_pysample *smp, struct iovec *lv,
		      struct iovec *rv)
{
	if (!smp->len || !smp->stack || !smp->sp)
		return false;
	VEC_GROW(&py->stack_now, smp->len);
	*lv = (struct iovec){ py->stack_now.v, smp->len };
	*rv = (struct iovec){ (void *)(uintptr_t)smp->sp, smp->len };
	return true;
}

/*
 * Whether a switched-out thread has not run since its sample, after its
 * chain was read (got bytes read from stack_iov's iovec first): its C
 * stack, from the sample's stack pointer up, is still what the sample
 * copied.  A thread that ran again returned from the call it blocked in
 * and overwrote that memory with other frames (the interpreter's spilled
 * registers hold the Python frame and its next instruction), so a chain
 * read from a thread that moved on does not pass, however late the read;
 * a stack the sample did not copy cannot be checked and does not pass
 * either.
 */
static bool still_blocked(struct prof_python *py, const struct prof_pysample *smp, ssize_t got)
{
	return got >= (ssize_t)smp->len && memcmp(py->stack_now.v, smp->stack, smp->len) == 0;
}

/*
 * code_ids for the chain of a switched-out thread, read now: -ESTALE
 * unless still_blocked.  The stack and the code keys are one
 * process_vm_readv, the stack's iovec first: the kernel reads iovecs in
 * order, so the stack is still read after the chain and before the keys,
 * and a partial read that ends in the keys is told apart by its length.
 */
static int blocked_code_ids(struct prof_python *py, struct proc *p, const struct prof_pysample *smp,
			    struct prof_pyframe *out, size_t n)
{
	struct key_reads kr;
	int ret = keys_to_read(py, p, out, n, &kr);	/* kr.m is 0 on error */
	ssize_t got;

	if (!stack_iov(py, smp, &kr.lv[0], &kr.rv[0]))
		return -ESTALE;
	got = process_vm_readv(p->pid, kr.lv, kr.m + 1, kr.rv, kr.m + 1, 0);
	if (!still_blocked(py, smp, got))
		return -ESTALE;
	py->blocked++;
	return ret < 0 ? ret : keys_take(py, p, out, &kr, got - (ssize_t)smp->len);
}

/*
 * The Python frames tid of pid was executing at its sample at `time`: as
 * the BPF program read them then, or else read now.  The count written to
 * out (up to max), -ENOENT when pid runs no CPython this reader knows (or
 * was not looked at yet: a thread of the reader looks at each new
 * process, away from the sample path), -ESRCH when tid has no thread
 * state (yet), -EFAULT when the memory changed under the reader, -ESTALE
 * when smp (may be NULL) shows the thread ran other Python code at the
 * sample or came too late, -EAGAIN when the BPF program did not know the
 * thread yet and the sample came too late to read it now.
 */
static int read_locked(struct prof_python *py, pid_t pid, pid_t tid, uint64_t time,
		       const struct prof_pysample *smp, struct prof_pyframe *out, size_t max)
{
	struct proc *p = proc_of(py, pid);
	bool blocked = smp && smp->blocked, taken = false;
	int n = -ENOENT, ret;

	if (!p->python)
		return -ENOENT;	/* also while pending */
	if (py->bpf && (!blocked || py->switch_frames) &&
	    (n = prof_pybpf_take(py->bpf, tid, time, blocked, py->raw, RAW_MAX)) >= 0) {
		taken = true;
		if (blocked)
			py->at_switch++;
		else
			py->at_sample++;
	} else if ((n = chain_now(py, p, tid, smp)) < 0) {
		return n;
	} else if (!blocked) {
		py->after++;
	}
	size_t nf = frames_of(py, &p->l, (size_t)n, out, MIN(max, (size_t)PROF_PY_MAX_FRAMES));
	if (blocked && !taken)
		ret = blocked_code_ids(py, p, smp, out, nf);
	else
		ret = code_ids(py, p, out, nf);
	return ret < 0 ? ret : (int)nf;
}

static int prof_python_read(struct prof_python *py, pid_t pid, pid_t tid, uint64_t time,
			    const struct prof_pysample *smp, struct prof_pyframe *out, size_t max)
{
	int ret;

	pthread_mutex_lock(&py->rlock);
	ret = read_locked(py, pid, tid, time, smp, out, max);
	pthread_mutex_unlock(&py->rlock);
	return ret;
}

/* --- the record ------------------------------------------------------------------------------ */

/* header | s32 status | u32 n | n x { u32 code, u32 lasti | entry << 31 } |
 * u32 pid, u32 tid | u64 time | u32 cpu, u32 res */
#define REC_FIXED (sizeof(struct perf_event_header) + 8 + 24)

size_t prof_python_record(struct prof_python *py, uint32_t pid, uint32_t tid, uint64_t time,
			  const struct prof_pysample *smp, void *out, size_t max)
{
	struct prof_pyframe f[PROF_PY_MAX_FRAMES];
	int n = prof_python_read(py, (pid_t)pid, (pid_t)tid, time, smp, f, PROF_PY_MAX_FRAMES);
	uint8_t *b = out;
	struct perf_event_header h = { .type = PROF_RECORD_PYSTACK };
	int32_t status = n < 0 ? n : 0;
	uint32_t count = n < 0 ? 0 : (uint32_t)n, zero = 0;

	if (n == -ENOENT || REC_FIXED + 8 * (size_t)count > max)
		return 0;
	h.size = (uint16_t)(REC_FIXED + 8 * count);
	memcpy(b, &h, sizeof(h));
	memcpy(b + 8, &status, 4);
	memcpy(b + 12, &count, 4);
	for (uint32_t i = 0; i < count; i++) {
		uint32_t w = MIN(f[i].lasti, 0x7fffffffu) | (f[i].entry ? 1u << 31 : 0);
		memcpy(b + 16 + 8 * i, &f[i].code, 4);
		memcpy(b + 20 + 8 * i, &w, 4);
	}
	uint8_t *t = b + 16 + 8 * count;
	memcpy(t, &pid, 4);
	memcpy(t + 4, &tid, 4);
	memcpy(t + 8, &time, 8);
	memcpy(t + 16, &zero, 4);
	memcpy(t + 20, &zero, 4);
	return h.size;
}

int prof_python_record_parse(const struct perf_event_header *h, uint32_t *pid, uint32_t *tid,
			     uint64_t *time, struct prof_pyframe *out)
{
	const uint8_t *b = (const uint8_t *)h;
	int32_t status;
	uint32_t count;

	if (h->type != PROF_RECORD_PYSTACK || h->size < REC_FIXED)
		return -EINVAL;
	memcpy(&status, b + 8, 4);
	memcpy(&count, b + 12, 4);
	if (count > PROF_PY_MAX_FRAMES || h->size != REC_FIXED + 8 * count)
		return -EINVAL;
	const uint8_t *t = b + 16 + 8 * count;
	memcpy(pid, t, 4);
	memcpy(tid, t + 4, 4);
	memcpy(time, t + 8, 8);
	if (status < 0)
		return status;
	for (uint32_t i = 0; i < count; i++) {
		uint32_t w;
		memcpy(&out[i].code, b + 16 + 8 * i, 4);
		memcpy(&w, b + 20 + 8 * i, 4);
		out[i].lasti = w & 0x7fffffff;
		out[i].entry = (w >> 31) != 0;
	}
	return (int)count;
}
