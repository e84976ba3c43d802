/*
 * pump.c - the ring pump: a thread that moves records out of the kernel's
 * per-CPU perf rings into memory queues as soon as the kernel wakes it, so
 * that the recorder's main thread can take its time (a first DWARF load of
 * a big library costs ~100 ms) without the kernel dropping samples.  A
 * DWARF sample is shrunk on the way: the kernel reserves the full
 * --stack-size copy in the ring but fills only dyn_size bytes of it, and
 * only those are kept (a 32 KiB record typically becomes 4-16 KiB).
 *
 * Design notes / invariants:
 *  - One producer (the pump thread) and one consumer (the thread calling
 *    prof_perf_drain) per CPU queue.  A queue is a singly linked list of
 *    1 MiB chunks; a record never straddles two chunks.  The producer
 *    publishes bytes with a release store of chunk->used and a finished
 *    chunk with a release store of chunk->next; the consumer acquires
 *    both, and reads `used` again after seeing `next` (it is final then).
 *  - Memory is bounded: once max_bytes of chunks are queued the pump stops
 *    reading that CPU's kernel ring, which then fills and makes the kernel
 *    count LOST records: no sample is dropped silently.
 *  - Per CPU, queued records are older than those still in the kernel
 *    ring, so draining a CPU's queue before its ring keeps the order.
 *  - Each queue publishes a mark: the clock read before the data_head of
 *    the pass that filled it, so every record of its ring timed before
 *    the mark is in the queue (or was consumed).  The consumer merges
 *    several events' queues only up to the lowest mark (ring.c), so a
 *    record that another ring has yet to hand over cannot be overtaken.
 *    The mark is stored with release after the records it covers.  A pass
 *    stopped by the budget sets it too: the kernel is dropping records
 *    then anyway, and a mark held back would stall every other queue
 *    behind this one, whose memory it holds.
 *  - prof_perf_disable stops the thread; from then on the draining thread
 *    copies the kernel rings itself (no concurrency left).
 *  - After each pass the thread calls pf->pump_also, for a ring of another
 *    kind that must not wait for the main thread either (the off-CPU
 *    accountant's BPF ring: prof_bpf_swa_pull, with its own lock).
 */
#include "prof/perf.h"
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#define CHUNK_BYTES (1u << 20)
/* Freed chunks kept for reuse: a queue that grew while the consumer was
 * busy shrinks again, and a chunk freed and allocated anew comes back
 * as fresh pages that fault in (the kernel zeroing each one) on the
 * pump's next pass. */
#define SPARES_MAX 8

struct chunk {
	struct chunk *next;	/* atomic: set once the producer left the chunk */
	size_t used;		/* atomic: bytes of whole records published */
	uint8_t data[];		/* 8-byte aligned records */
};

struct queue {
	struct chunk *head;	/* consumer: oldest chunk */
	size_t rd;		/* consumer: offset of the next record in head */
	struct chunk *tail;	/* producer: chunk being filled */
	uint64_t mark;		/* atomic: records timed before it are queued */
};

struct prof_pump {
	struct prof_perf *pf;
	struct queue *q;	/* [pf->ncpus] */
	uint8_t *scratch;	/* producer: one wrapped or shrunk record */
	uint8_t *hook_out;	/* producer: the hook's records */
	bool hooked;		/* the hook added records lately: poll every ms */
	size_t queued;		/* atomic: bytes of chunks allocated */
	size_t max_bytes;
	pthread_mutex_t spare_lock;	/* chunks are taken and freed by two threads */
	struct chunk *spare[SPARES_MAX];
	int nspare;
	int wake_fd;		/* eventfd: the consumer has records to read */
	uint64_t woke_ns;	/* producer: when it last wrote wake_fd */
	int stop_fd;		/* eventfd: the thread must return */
	pthread_t thread;
	bool running;
};

static struct chunk *chunk_new(struct prof_pump *pp)
{
	struct chunk *c = NULL;

	pthread_mutex_lock(&pp->spare_lock);
	if (pp->nspare)
		c = pp->spare[--pp->nspare];
	pthread_mutex_unlock(&pp->spare_lock);
	if (!c) {
		if (__atomic_load_n(&pp->queued, __ATOMIC_RELAXED) + CHUNK_BYTES > pp->max_bytes)
			return NULL;
		c = xmalloc(sizeof(*c) + CHUNK_BYTES);
		__atomic_add_fetch(&pp->queued, CHUNK_BYTES, __ATOMIC_RELAXED);
	}
	c->next = NULL;
	c->used = 0;
	return c;
}

static void chunk_release(struct prof_pump *pp, struct chunk *c)
{
	bool kept = false;

	pthread_mutex_lock(&pp->spare_lock);
	if (pp->nspare < SPARES_MAX) {
		pp->spare[pp->nspare++] = c;
		kept = true;
	}
	pthread_mutex_unlock(&pp->spare_lock);
	if (kept)
		return;
	free(c);
	__atomic_sub_fetch(&pp->queued, CHUNK_BYTES, __ATOMIC_RELAXED);
}

/* Room for n bytes at the producer's end of q, or NULL when over budget. */
static uint8_t *queue_reserve(struct prof_pump *pp, struct queue *q, size_t n)
{
	struct chunk *c;

	if (q->tail->used + n <= CHUNK_BYTES)
		return q->tail->data + q->tail->used;
	if (!(c = chunk_new(pp)))
		return NULL;
	__atomic_store_n(&q->tail->next, c, __ATOMIC_RELEASE);
	q->tail = c;
	return c->data;
}

static void queue_commit(struct queue *q, size_t n)
{
	__atomic_store_n(&q->tail->used, q->tail->used + n, __ATOMIC_RELEASE);
}

/*
 * The record as it goes into the queue: DWARF samples keep only the
 * dyn_size bytes of the stack copy that the kernel really filled.
 * Returns the new size (a multiple of 8) written to out.
 */
static size_t shrink_record(const struct prof_perf *pf, const struct perf_event_header *h,
			    uint8_t *out)
{
	struct prof_perf_sample s;
	const uint8_t *rec = (const uint8_t *)h, *end = rec + h->size;

	if (h->type != PERF_RECORD_SAMPLE || !(pf->attr.sample_type & PERF_SAMPLE_STACK_USER) ||
	    prof_perf_parse_sample(&pf->attr, h, &s) < 0 || !s.stack)
		goto whole;
	uint64_t size, keep = (s.stack_size + 7) & ~7ULL;
	memcpy(&size, s.stack - 8, 8);
	const uint8_t *after = s.stack + size + 8;	/* past dyn_size */
	if (keep >= size || after > end)
		goto whole;
	size_t n = (size_t)(s.stack - rec) - 8;	/* up to the stack's size field */
	memcpy(out, rec, n);
	memcpy(out + n, &keep, 8);
	n += 8;
	if (keep) {
		memcpy(out + n, s.stack, s.stack_size);
		memset(out + n + s.stack_size, 0, keep - s.stack_size);
		n += keep;
		memcpy(out + n, &s.stack_size, 8);
		n += 8;
	}
	memcpy(out + n, after, (size_t)(end - after));
	n += (size_t)(end - after);
	((struct perf_event_header *)out)->size = (uint16_t)n;
	return n;
whole:
	memcpy(out, h, h->size);
	return h->size;
}


/* The hook's records for h, queued before it; false when over budget. */
static bool pump_hook(struct prof_pump *pp, struct queue *q, const struct perf_event_header *h)
{
	size_t n = pp->pf->hook(pp->pf->hook_arg, pp->pf, h, pp->hook_out, PROF_PERF_SCRATCH);
	uint8_t *dst;

	if (!n)
		return true;
	if (!(dst = queue_reserve(pp, q, n)))
		return false;
	memcpy(dst, pp->hook_out, n);
	queue_commit(q, n);
	pp->hooked = !pp->pf->hook_lazy;
	return true;
}

/*
 * Moves what fits from one kernel ring into its queue.  Returns the
 * number of records moved; clears *emptied when some are left.
 */
static size_t pump_ring(struct prof_pump *pp, int cpu, bool *emptied)
{
	struct prof_perf_ring *r = &pp->pf->rings[cpu];
	struct queue *q = &pp->q[cpu];
	uint64_t head, tail;
	size_t moved = 0;

	if (!r->meta)
		return 0;
	uint64_t mark = now_ns();	/* before data_head: what is older is below it */
	head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	tail = r->meta->data_tail;
	while (tail < head) {
		const struct perf_event_header *h = prof_perf_ring_peek(r, tail, head, pp->scratch);
		if (!h) {	/* corrupt: resync at head, as the direct reader does */
			tail = head;
			break;
		}
		if (pp->pf->hook && !pump_hook(pp, q, h))
			break;
		uint8_t *dst = queue_reserve(pp, q, h->size);
		if (!dst)
			break;	/* over budget: the kernel ring fills and counts LOST */
		queue_commit(q, shrink_record(pp->pf, h, dst));
		tail += h->size;
		moved++;
	}
	if (tail < head)
		*emptied = false;
	__atomic_store_n(&r->meta->data_tail, tail, __ATOMIC_RELEASE);
	__atomic_store_n(&q->mark, mark, __ATOMIC_RELEASE);
	return moved;
}

static size_t pump_all(struct prof_pump *pp)
{
	struct prof_perf *pf = pp->pf;
	uint64_t issued = pf->pace_issued ? __atomic_load_n(pf->pace_issued, __ATOMIC_ACQUIRE) : 0;
	bool emptied = true;
	size_t moved = 0;

	for (int i = 0; i < pf->ncpus; i++)
		moved += pump_ring(pp, i, &emptied);
	if (pf->pace_settled && emptied)
		__atomic_store_n(pf->pace_settled, issued, __ATOMIC_RELEASE);
	return moved;
}

/* Whether the hook wants haste now (hook_hurry). */
static bool hurried(const struct prof_pump *pp)
{
	const uint64_t *until = pp->pf->hook_hurry;

	return until && now_ns() < __atomic_load_n(until, __ATOMIC_RELAXED);
}

/* How long the pump may sleep: a millisecond while the hook wants haste. */
static int pump_timeout(const struct prof_pump *pp, bool hurry)
{
	if (pp->hooked || hurry)
		return 1;
	return pp->pf->pace_settled ? 10 : 50;
}

/* Whether to wake the consumer after a pass that moved records.  Haste is
 * the hook's (its reads follow the sample), not the consumer's: it keeps
 * its lazy pace then, woken by a ring's watermark or every LAZY_WAKE_NS. */
#define LAZY_WAKE_NS 50000000ull
static bool wake_consumer(struct prof_pump *pp, bool hurry_only, bool watermark)
{
	uint64_t now;

	if (!hurry_only || watermark)
		return true;
	now = now_ns();
	if (now - pp->woke_ns < LAZY_WAKE_NS)
		return false;
	pp->woke_ns = now;
	return true;
}

static void *pump_main(void *arg)
{
	struct prof_pump *pp = arg;
	struct pollfd fds[257];
	nfds_t n = 0;
	uint64_t one = 1;

	fds[n++] = (struct pollfd){ .fd = pp->stop_fd, .events = POLLIN };
	for (int i = 0; i < pp->pf->ncpus && n < ARRAY_SIZE(fds); i++)
		if (pp->pf->rings[i].fd >= 0)
			fds[n++] = (struct pollfd){ .fd = pp->pf->rings[i].fd, .events = POLLIN };
	for (;;) {
		bool hurry = hurried(pp), hurry_only = hurry && !pp->hooked, watermark = false;
		/* A timeout too: a ring below its watermark still moves on. */
		if (poll(fds, n, pump_timeout(pp, hurry)) < 0 && errno != EINTR)
			break;
		if (fds[0].revents & POLLIN)
			break;
		for (nfds_t i = 1; i < n; i++)
			watermark |= (fds[i].revents & POLLIN) != 0;
		if (pp->pf->pump_also)
			pp->pf->pump_also(pp->pf->pump_also_arg);
		if (pump_all(pp) && wake_consumer(pp, hurry_only, watermark) && write(pp->wake_fd, &one, 8) < 0)
			continue;	/* the counter is saturated: a wake is pending */
	}
	return NULL;
}

int prof_perf_pump_start(struct prof_perf *pf, size_t max_bytes)
{
	struct prof_pump *pp = xcalloc(1, sizeof(*pp));

	pp->pf = pf;
	pthread_mutex_init(&pp->spare_lock, NULL);
	pp->q = xcalloc((size_t)pf->ncpus, sizeof(*pp->q));
	pp->scratch = xmalloc(PROF_PERF_SCRATCH);
	pp->hook_out = xmalloc(PROF_PERF_SCRATCH);
	pp->max_bytes = MAX(max_bytes, (size_t)pf->ncpus * CHUNK_BYTES * 2);
	for (int i = 0; i < pf->ncpus; i++)	/* the consumer never sees a NULL head */
		pp->q[i].head = pp->q[i].tail = chunk_new(pp);
	pp->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	pp->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (pp->wake_fd < 0 || pp->stop_fd < 0 || (errno = thread_start_nosignals(&pp->thread, pump_main, pp)) != 0) {
		int e = errno;
		pf->pump = pp;
		prof_perf_pump_free(pf);
		return -e;
	}
	pp->running = true;
	pf->pump = pp;
	return 0;
}

void prof_perf_pump_stop(struct prof_perf *pf)
{
	struct prof_pump *pp = pf->pump;
	uint64_t one = 1;

	if (!pp || !pp->running)
		return;
	if (write(pp->stop_fd, &one, 8) != 8)
		pthread_cancel(pp->thread);
	pthread_join(pp->thread, NULL);
	pp->running = false;
	/* The final drains move what is left in the kernel rings, which are
	 * bounded themselves: no budget any more. */
	pp->max_bytes = SIZE_MAX;
}

void prof_perf_pump_free(struct prof_perf *pf)
{
	struct prof_pump *pp = pf->pump;

	if (!pp)
		return;
	prof_perf_pump_stop(pf);
	for (int i = 0; i < pf->ncpus; i++) {
		struct chunk *c = pp->q[i].head;
		while (c) {
			struct chunk *next = c->next;
			free(c);
			c = next;
		}
	}
	while (pp->nspare)
		free(pp->spare[--pp->nspare]);
	pthread_mutex_destroy(&pp->spare_lock);
	if (pp->wake_fd >= 0)
		close(pp->wake_fd);
	if (pp->stop_fd >= 0)
		close(pp->stop_fd);
	free(pp->scratch);
	free(pp->hook_out);
	free(pp->q);
	free(pp);
	pf->pump = NULL;
}

int prof_perf_pump_wait(struct prof_perf *pf, int timeout_ms)
{
	struct pollfd p[2] = { { .fd = pf->pump->wake_fd, .events = POLLIN },
			       { .fd = pf->also_fd - 1, .events = POLLIN } };
	uint64_t n;

	if (poll(p, pf->also_fd ? 2 : 1, timeout_ms) < 0 && errno != EINTR)
		return -errno;
	if (read(pf->pump->wake_fd, &n, 8) < 0 && errno != EAGAIN)
		return -errno;
	return 0;
}

/* The consumer's next record of queue q, or NULL when it has none yet;
 * chunks it has finished are released on the way. */
static const struct perf_event_header *queue_peek(struct prof_pump *pp, struct queue *q)
{
	for (;;) {
		struct chunk *c = q->head;
		size_t used = __atomic_load_n(&c->used, __ATOMIC_ACQUIRE);
		if (q->rd < used)
			return (const struct perf_event_header *)(c->data + q->rd);
		struct chunk *next = __atomic_load_n(&c->next, __ATOMIC_ACQUIRE);
		if (!next)
			return NULL;
		if (q->rd < __atomic_load_n(&c->used, __ATOMIC_ACQUIRE))
			continue;	/* bytes published just before next */
		q->head = next;
		q->rd = 0;
		chunk_release(pp, c);
	}
}

/* The consumer's side (ring.c merges the queues of one or more events). */
void prof_perf_pump_refill(struct prof_perf *pf)
{
	if (!pf->pump->running)	/* stopped: the consumer moves the rest itself */
		pump_all(pf->pump);
}

uint64_t prof_perf_pump_mark(const struct prof_perf *pf, int cpu)
{
	return __atomic_load_n(&pf->pump->q[cpu].mark, __ATOMIC_ACQUIRE);
}

const struct perf_event_header *prof_perf_pump_peek(struct prof_perf *pf, int cpu)
{
	return queue_peek(pf->pump, &pf->pump->q[cpu]);
}

void prof_perf_pump_consume(struct prof_perf *pf, int cpu, size_t size)
{
	pf->pump->q[cpu].rd += size;
}
