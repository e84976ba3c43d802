/*
 * bpf.c - loads the BPF frame reader (src/python/bpf/frames.c, embedded
 * as build/gen/pyframes.bpf.o) and hands its records to the reader: the
 * frame chain of a CPython thread as it was at the sample, read in the
 * sampled thread's context, so the recorder need neither hurry nor check
 * whether the chain moved (docs/python.md).
 *
 * Design notes / invariants:
 *  - Records come from one ring buffer for every CPU and are matched to
 *    samples by tid and time: the program stamps them with the clock
 *    perf's samples use, after the sample's own time was taken (the
 *    event's overflow, the switch-out), and before the thread can have
 *    another sample.  So a sample's record is the first of its thread and
 *    kind at or after its time (all of 12,000 matches in a 4-s attach to
 *    a 51-thread program were after; 0.9% of them had a second record of
 *    the thread within 200 us, which the nearest in time would not have
 *    told apart).
 *    Records not taken yet wait in `waiting`, in no order; a record
 *    older than a second is dropped (its sample was lost or never came),
 *    ten for a switch-out's.
 *  - Two kinds: a CPU sample's (the program on the sampling events) and
 *    a kept switch-out's (the off-CPU accountant's switch program goes
 *    on to pyframes_switch), taken apart: the pump takes the first as it
 *    moves the samples, the recorder's drain the second, later.
 *  - Called under the reader's rlock only: no lock of its own.
 *  - Without libbpf (HAVE_LIBBPF unset) prof_pybpf_open fails and the
 *    reader reads every chain itself.
 */
#include "python-priv.h"
#include "prof/perf.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The records are stamped after their sample's time and before the
 * thread's next sample (see the notes above): the first at or after. */
size_t prof_python_match(const struct prof_py_stamp *w, size_t n, uint32_t tid, uint32_t kind, uint64_t time,
			 uint64_t window)
{
	size_t best = n;

	for (size_t i = 0; i < n; i++)
		if (w[i].tid == tid && w[i].kind == kind && w[i].time >= time && w[i].time - time <= window &&
		    (best == n || w[i].time < w[best].time))
			best = i;
	return best;
}

#ifdef HAVE_LIBBPF
#include "bpf/frames.h"
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#ifndef PROF_PYBPF_OBJ
#define PROF_PYBPF_OBJ "build/gen/pyframes.bpf.o"
#endif
__asm__(".section .rodata\n"
	".balign 8\n"
	".global prof_pybpf_obj\n"
	"prof_pybpf_obj:\n"
	".incbin \"" PROF_PYBPF_OBJ "\"\n"
	".global prof_pybpf_obj_end\n"
	"prof_pybpf_obj_end:\n"
	".previous\n");
extern const char prof_pybpf_obj[], prof_pybpf_obj_end[];

/* A record this long after its sample's time belongs to another sample. */
#define MATCH_NS 200000
#define KEEP_NS 1000000000ULL
/* A switch-out's record waits for the recorder's drain, which may lag
 * the pump that takes the CPU samples' by more than KEEP_NS (a stall
 * loading debug info): it is dropped by age only this much later. */
#define KEEP_SWITCH_NS (10 * KEEP_NS)

struct prof_pybpf {
	struct bpf_object *obj;
	struct bpf_link *fork_link;	/* prof_pybpf_only */
	int prog_fd, switch_fd, threads_fd;
	struct ring_buffer *ring;
	VEC(struct prof_py_stamp) stamps;	/* the waiting records' keys, index-aligned */
	VEC(struct pybpf_rec *) waiting;
	uint64_t newest;		/* time of the newest record seen */
};

static int on_record(void *ctx, void *data, size_t size)
{
	struct prof_pybpf *b = ctx;
	const struct pybpf_rec *r = data;

	if (size < PYBPF_REC_SIZE(0) || r->n > PYBPF_MAX_FRAMES || size < PYBPF_REC_SIZE(r->n))
		return 0;
	struct pybpf_rec *c = xmalloc(PYBPF_REC_SIZE(r->n));
	memcpy(c, r, PYBPF_REC_SIZE(r->n));
	VEC_PUSH(&b->waiting, c);
	VEC_PUSH(&b->stamps, ((struct prof_py_stamp){ r->time, r->tid, r->kind }));
	b->newest = MAX(b->newest, r->time);
	return 0;
}

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return 0;
}

int prof_pybpf_open(struct prof_pybpf **out)
{
	struct prof_pybpf *b = xcalloc(1, sizeof(*b));
	struct bpf_program *prog;
	int ret;

	*out = NULL;
	if (!getenv("PROF_PYBPF_VERBOSE")) libbpf_set_print(quiet);
	b->obj = bpf_object__open_mem(prof_pybpf_obj, (size_t)(prof_pybpf_obj_end - prof_pybpf_obj), NULL);
	if (!b->obj || libbpf_get_error(b->obj)) {
		ret = -EINVAL;
		b->obj = NULL;
		goto fail;
	}
	if ((ret = prof_bpf_own_share(b->obj)) < 0 || (ret = bpf_object__load(b->obj)) < 0)
		goto fail;
	prog = bpf_object__find_program_by_name(b->obj, "pyframes");
	b->prog_fd = prog ? bpf_program__fd(prog) : -ENOENT;
	prog = bpf_object__find_program_by_name(b->obj, "pyframes_switch");
	b->switch_fd = prog ? bpf_program__fd(prog) : -ENOENT;
	b->threads_fd = bpf_object__find_map_fd_by_name(b->obj, "threads");
	int ring_fd = bpf_object__find_map_fd_by_name(b->obj, "frames");
	if (b->prog_fd < 0 || b->switch_fd < 0 || b->threads_fd < 0 || ring_fd < 0) {
		ret = -ENOENT;
		goto fail;
	}
	if (!(b->ring = ring_buffer__new(ring_fd, on_record, b, NULL))) {
		ret = -errno ? -errno : -ENOMEM;
		goto fail;
	}
	spawn_keep_mappings("anon_inode:bpf-map");
	*out = b;
	return 0;
fail:
	prof_pybpf_free(b);
	return ret < 0 ? ret : -EINVAL;
}

void prof_pybpf_free(struct prof_pybpf *b)
{
	if (!b)
		return;
	ring_buffer__free(b->ring);
	if (b->fork_link)
		bpf_link__destroy(b->fork_link);
	bpf_object__close(b->obj);
	for (size_t i = 0; i < b->waiting.n; i++)
		free(b->waiting.v[i]);
	VEC_FREE(&b->waiting);
	VEC_FREE(&b->stamps);
	free(b);
}

int prof_pybpf_prog_fd(const struct prof_pybpf *b)
{
	return b->prog_fd;
}

int prof_pybpf_switch_prog_fd(const struct prof_pybpf *b)
{
	return b->switch_fd;
}

int prof_pybpf_only(struct prof_pybpf *b, const pid_t *pids, size_t n)
{
	return prof_bpf_targets_restrict(b->obj, &b->fork_link, pids, n);
}

void prof_pybpf_add_thread(struct prof_pybpf *b, pid_t pid, pid_t tid, uint64_t tstate,
			   const struct prof_py_layout *l)
{
	uint32_t key = (uint32_t)tid;
	struct pybpf_thread t = {
		.pid = (uint32_t)pid,
		.tstate = tstate,
		.l = {
			.tstate_frame = l->version >= 0x030d || l->frame_objects ? l->tstate_current_frame
										   : l->tstate_cframe,
			.tstate_native_tid = l->tstate_native_tid,
			.cframe_current_frame = l->cframe_current_frame,
			.frame_code = l->frame_code, .frame_previous = l->frame_previous,
			.frame_instr = l->frame_instr, .frame_is_entry = l->frame_is_entry,
			.frame_owner = l->frame_owner,
			.code_filename = l->code_filename,
			.code_qualname = (uint8_t)(l->code_qualname - l->code_filename),
			.pthread_tid = l->pthread_tid,
			.cframe = l->version < 0x030d && !l->frame_objects,
			.named = l->code_qualname >= l->code_filename &&
				 l->code_qualname - l->code_filename <= PYBPF_KEY_READ - 8,
		},
	};

	(void)bpf_map_update_elem(b->threads_fd, &key, &t, BPF_ANY);	/* full: read by the reader */
}

void prof_pybpf_del_thread(struct prof_pybpf *b, pid_t tid)
{
	uint32_t key = (uint32_t)tid;

	(void)bpf_map_delete_elem(b->threads_fd, &key);
}

/* Drops every record over a second old (ten for a switch-out's): its
 * sample was lost or never came. */
static void prune_old(struct prof_pybpf *b)
{
	size_t j = 0;

	for (size_t i = 0; i < b->waiting.n; i++) {
		uint64_t keep = b->stamps.v[i].kind == PYBPF_REC_SWITCH ? KEEP_SWITCH_NS : KEEP_NS;
		if (b->stamps.v[i].time + keep < b->newest) {
			free(b->waiting.v[i]);
			continue;
		}
		b->stamps.v[j] = b->stamps.v[i];
		b->waiting.v[j++] = b->waiting.v[i];
	}
	b->waiting.n = b->stamps.n = j;
}

/*
 * The record of tid's sample at `time` (of the kind), taken out of the
 * waiting ones (prof_python_match).  Only that record goes, not the
 * tid's older ones: the pump moves each CPU's ring in turn, so a thread
 * that moved between CPUs has its samples come out of time order, and an
 * older record may still have its sample to come (dropping those left 2%
 * of a 51-thread program's samples without Python frames).
 */
int prof_pybpf_take(struct prof_pybpf *b, pid_t tid, uint64_t time, bool switched, struct pyraw *out,
		    size_t max)
{
	uint32_t kind = switched ? PYBPF_REC_SWITCH : PYBPF_REC_SAMPLE;
	size_t at;
	struct pybpf_rec *r;
	int n;

	(void)ring_buffer__consume(b->ring);
	prune_old(b);
	at = prof_python_match(b->stamps.v, b->stamps.n, (uint32_t)tid, kind, time, MATCH_NS);
	if (at == b->stamps.n)
		return -ENOENT;
	r = b->waiting.v[at];
	n = (int)MIN((size_t)r->n, max);
	for (int i = 0; i < n; i++)
		out[i] = (struct pyraw){
			.code = r->f[i].code, .instr = r->f[i].instr,
			.filename = r->f[i].filename, .qualname = r->f[i].qualname,
			.owner = r->f[i].owner, .is_entry = r->f[i].is_entry,
			.named = r->f[i].named,
		};
	free(r);
	b->waiting.v[at] = b->waiting.v[--b->waiting.n];
	b->stamps.v[at] = b->stamps.v[--b->stamps.n];
	return n;
}

#else	/* no libbpf: the reader reads every chain itself */

int prof_pybpf_open(struct prof_pybpf **out)
{
	*out = NULL;
	return -ENOSYS;
}

void prof_pybpf_free(struct prof_pybpf *b) {}
int prof_pybpf_prog_fd(const struct prof_pybpf *b) { return -1; }
int prof_pybpf_switch_prog_fd(const struct prof_pybpf *b) { return -1; }
int prof_pybpf_only(struct prof_pybpf *b, const pid_t *pids, size_t n) { return -ENOTSUP; }
void prof_pybpf_add_thread(struct prof_pybpf *b, pid_t pid, pid_t tid, uint64_t tstate,
			   const struct prof_py_layout *l) {}
void prof_pybpf_del_thread(struct prof_pybpf *b, pid_t tid) {}
int prof_pybpf_take(struct prof_pybpf *b, pid_t tid, uint64_t time, bool switched, struct pyraw *out,
		    size_t max)
{
	return -ENOENT;
}

#endif
