/*
 * ring.c - reading the per-CPU perf ring buffers and decoding the records
 * in them.  Records are handed out in place (no copy) unless they wrap
 * around the end of the ring, in which case they are copied into one
 * scratch buffer; nothing here allocates or makes a syscall per record.
 *
 * Design notes / invariants:
 *  - data_head is read with acquire ordering before the records it covers;
 *    data_tail is published with release ordering after we are done with
 *    them, so the kernel never overwrites a record being decoded.
 *  - prof_perf_drain merges the per-CPU rings by timestamp; each ring has
 *    its own scratch area because one wrapped record per ring may be
 *    pending at a time.
 *  - Every record parser checks lengths against header.size: a short or
 *    inconsistent record is -EINVAL, never an out-of-bounds read.
 *  - sample_type is fixed by event.c (IP|TID|TIME|CPU|PERIOD, plus
 *    CALLCHAIN, REGS_USER, STACK_USER; the off-CPU events of offcpu.c add
 *    RAW in their own rings); the sample_id_all trailer of
 *    non-sample records is therefore {pid,tid}{time}{cpu,res} = 24 bytes.
 */
#include "prof/perf.h"
#include <errno.h>
#include <poll.h>
#include <string.h>

#define SAMPLE_ID_SIZE 24

int prof_perf_poll(struct prof_perf *pf, int timeout_ms)
{
	struct pollfd fds[256];
	nfds_t n = 0;

	if (pf->pump)
		return prof_perf_pump_wait(pf, timeout_ms);
	for (int i = 0; i < pf->ncpus && n < ARRAY_SIZE(fds); i++) {
		if (pf->rings[i].fd >= 0) {
			fds[n].fd = pf->rings[i].fd;
			fds[n].events = POLLIN;
			n++;
		}
	}
	if (poll(fds, n, timeout_ms) < 0 && errno != EINTR)
		return -errno;
	return 0;
}

/* Per-ring read position during one drain pass. */
struct ring_pos {
	uint64_t tail, head;
	const struct perf_event_header *rec;	/* next record, NULL when done */
	uint64_t time;
};

uint64_t prof_perf_record_time(const struct perf_event_header *h)
{
	uint64_t t = 0;

	if (h->type == PERF_RECORD_SAMPLE) {	/* header, ip, pid/tid, time */
		if (h->size >= 32)
			memcpy(&t, (const uint8_t *)h + 24, 8);
	} else if (h->size >= sizeof(*h) + SAMPLE_ID_SIZE) {
		memcpy(&t, (const uint8_t *)h + h->size - 16, 8);
	}
	return t;
}

const struct perf_event_header *prof_perf_ring_peek(const struct prof_perf_ring *r, uint64_t tail,
						    uint64_t head, uint8_t *scratch)
{
	uint64_t mask = r->size - 1, off = tail & mask;
	struct perf_event_header hdr;

	if (tail + sizeof(hdr) > head)
		return NULL;
	if (off + sizeof(hdr) <= r->size) {
		memcpy(&hdr, r->data + off, sizeof(hdr));
	} else {
		size_t first = (size_t)(r->size - off);
		memcpy(&hdr, r->data + off, first);
		memcpy((uint8_t *)&hdr + first, r->data, sizeof(hdr) - first);
	}
	if (hdr.size < sizeof(hdr) || tail + hdr.size > head)
		return NULL;
	if (off + hdr.size <= r->size)
		return (const void *)(r->data + off);
	size_t first = (size_t)(r->size - off);
	memcpy(scratch, r->data + off, first);
	memcpy(scratch + first, r->data, hdr.size - first);
	return (const void *)scratch;
}

/* Loads the record at pos->tail; a corrupt one resyncs at head. */
static void peek(struct prof_perf_ring *r, struct ring_pos *pos, uint8_t *scratch)
{
	pos->rec = prof_perf_ring_peek(r, pos->tail, pos->head, scratch);
	if (!pos->rec) {
		pos->tail = pos->head;
		return;
	}
	pos->time = prof_perf_record_time(pos->rec);
}

/*
 * Merges the rings by timestamp so that a FORK, EXEC or EXIT on one CPU is
 * seen before the samples that depend on it from another CPU.  Records
 * stay in place until the pass ends (tails are published last).  With a
 * pump running, the records come from its queues instead (pump.c).
 */
int prof_perf_drain(struct prof_perf *pf, prof_perf_record_fn fn, void *ctx)
{
	struct ring_pos pos[256];
	int n = MIN(pf->ncpus, (int)ARRAY_SIZE(pos)), ret = 0;

	if (pf->pump)
		return prof_perf_pump_drain(pf, fn, ctx);
	for (int i = 0; i < n; i++) {
		struct prof_perf_ring *r = &pf->rings[i];
		pos[i].rec = NULL;
		if (!r->meta)
			continue;
		pos[i].head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
		pos[i].tail = r->meta->data_tail;
		peek(r, &pos[i], pf->scratch + (size_t)i * PROF_PERF_SCRATCH);
	}
	while (!ret) {
		int best = -1;
		for (int i = 0; i < n; i++)
			if (pos[i].rec && (best < 0 || pos[i].time < pos[best].time))
				best = i;
		if (best < 0)
			break;
		ret = fn(ctx, pos[best].rec);
		pos[best].tail += pos[best].rec->size;
		peek(&pf->rings[best], &pos[best], pf->scratch + (size_t)best * PROF_PERF_SCRATCH);
	}
	for (int i = 0; i < n; i++)
		if (pf->rings[i].meta)
			__atomic_store_n(&pf->rings[i].meta->data_tail, ret ? pos[i].tail : pos[i].head,
					 __ATOMIC_RELEASE);
	return ret;
}

/* A bounds-checked cursor over one record's body. */
struct cursor {
	const uint8_t *p, *end;
};

static bool take(struct cursor *c, size_t n, const uint8_t **out)
{
	if ((size_t)(c->end - c->p) < n)
		return false;
	*out = c->p;
	c->p += n;
	return true;
}

static bool take_u64(struct cursor *c, uint64_t *v)
{
	const uint8_t *p;

	if (!take(c, 8, &p))
		return false;
	memcpy(v, p, 8);
	return true;
}

static bool take_u32x2(struct cursor *c, uint32_t *a, uint32_t *b)
{
	const uint8_t *p;

	if (!take(c, 8, &p))
		return false;
	memcpy(a, p, 4);
	memcpy(b, p + 4, 4);
	return true;
}

static struct cursor body(const struct perf_event_header *h)
{
	struct cursor c = { (const uint8_t *)(h + 1), (const uint8_t *)h + h->size };
	return c;
}

static bool parse_callchain(struct cursor *c, struct prof_perf_sample *s)
{
	const uint8_t *p;

	if (!take_u64(c, &s->nr_callchain) || s->nr_callchain > 65536 ||
	    !take(c, s->nr_callchain * 8, &p))
		return false;
	s->callchain = (const uint64_t *)p;	/* records are 8-byte aligned */
	return true;
}

/* u32 size, then size bytes; the kernel pads the pair to 8 bytes. */
static bool parse_raw(struct cursor *c, struct prof_perf_sample *s)
{
	const uint8_t *p;

	if (!take(c, 4, &p))
		return false;
	memcpy(&s->raw_size, p, 4);
	return take(c, s->raw_size, &s->raw);
}

static bool parse_user(const struct prof_perf *pf, struct cursor *c, struct prof_perf_sample *s)
{
	const uint8_t *p;
	uint64_t size;

	if (!take_u64(c, &s->regs_abi))
		return false;
	if (s->regs_abi) {
		if (!take(c, pf->nr_regs * 8, &p))
			return false;
		s->regs = (const uint64_t *)p;
	}
	if (!take_u64(c, &size))
		return false;
	if (size) {
		if (!take(c, size, &s->stack) || !take_u64(c, &s->stack_size))
			return false;
		if (s->stack_size > size)
			s->stack_size = size;
	}
	return true;
}

int prof_perf_parse_sample(const struct prof_perf *pf, const struct perf_event_header *h,
			   struct prof_perf_sample *s)
{
	struct cursor c = body(h);
	uint64_t st = pf->attr.sample_type;
	uint32_t res;

	memset(s, 0, sizeof(*s));
	s->kernel = (h->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL;
	if (!take_u64(&c, &s->ip) || !take_u32x2(&c, &s->pid, &s->tid) ||
	    !take_u64(&c, &s->time) || !take_u32x2(&c, &s->cpu, &res) ||
	    !take_u64(&c, &s->period))
		return -EINVAL;
	if ((st & PERF_SAMPLE_CALLCHAIN) && !parse_callchain(&c, s))
		return -EINVAL;
	if ((st & PERF_SAMPLE_RAW) && !parse_raw(&c, s))	/* off-CPU tracepoint */
		return -EINVAL;
	if ((st & PERF_SAMPLE_REGS_USER) && !parse_user(pf, &c, s))
		return -EINVAL;
	return 0;
}

int prof_perf_parse_id(const struct perf_event_header *h, struct prof_perf_sample_id *id)
{
	const uint8_t *t;
	uint32_t res;

	if (h->size < sizeof(*h) + SAMPLE_ID_SIZE)
		return -EINVAL;
	t = (const uint8_t *)h + h->size - SAMPLE_ID_SIZE;
	memcpy(&id->pid, t, 4);
	memcpy(&id->tid, t + 4, 4);
	memcpy(&id->time, t + 8, 8);
	memcpy(&id->cpu, t + 16, 4);
	memcpy(&res, t + 20, 4);
	return 0;
}

/* A NUL-terminated string inside the record body, before the trailer. */
static const char *take_string(struct cursor *c)
{
	const uint8_t *end = c->end - SAMPLE_ID_SIZE;
	const uint8_t *nul;

	if (c->p >= end || !(nul = memchr(c->p, 0, (size_t)(end - c->p))))
		return NULL;
	const char *s = (const char *)c->p;
	c->p = nul + 1;
	return s;
}

int prof_perf_parse_mmap2(const struct perf_event_header *h, struct prof_perf_mmap2 *m)
{
	struct cursor c = body(h);
	const uint8_t *skip;

	if (!take_u32x2(&c, &m->pid, &m->tid) || !take_u64(&c, &m->addr) ||
	    !take_u64(&c, &m->len) || !take_u64(&c, &m->pgoff) ||
	    !take(&c, 24, &skip) ||	/* maj, min, ino, ino_generation (or build id) */
	    !take_u32x2(&c, &m->prot, &m->flags) || !(m->filename = take_string(&c)))
		return -EINVAL;
	/* With attr.build_id the 24 bytes are u8 size, 3 reserved, id[20]. */
	m->build_id[0] = '\0';
	if ((h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) && skip[0] <= 20)
		for (int i = 0; i < skip[0]; i++)
			snprintf(m->build_id + 2 * i, 3, "%02x", skip[4 + i]);
	return 0;
}

int prof_perf_parse_comm(const struct perf_event_header *h, struct prof_perf_comm *cm)
{
	struct cursor c = body(h);

	if (!take_u32x2(&c, &cm->pid, &cm->tid) || !(cm->comm = take_string(&c)))
		return -EINVAL;
	cm->exec = (h->misc & PERF_RECORD_MISC_COMM_EXEC) != 0;
	return 0;
}

int prof_perf_parse_task(const struct perf_event_header *h, struct prof_perf_task *t)
{
	struct cursor c = body(h);

	if (!take_u32x2(&c, &t->pid, &t->ppid) || !take_u32x2(&c, &t->tid, &t->ptid) ||
	    !take_u64(&c, &t->time))
		return -EINVAL;
	return 0;
}

uint64_t prof_perf_lost_count(const struct perf_event_header *h)
{
	struct cursor c = body(h);
	uint64_t id, n = 0;

	if (h->type == PERF_RECORD_LOST) {
		if (!take_u64(&c, &id) || !take_u64(&c, &n))
			return 0;
	} else if (h->type == PERF_RECORD_LOST_SAMPLES) {
		if (!take_u64(&c, &n))
			return 0;
	}
	return n;
}
