/*
 * ring.c - reading the per-CPU perf ring buffers (the records are
 * decoded by decode.c).  Records are handed out in place (no copy) unless they wrap
 * around the end of the ring, in which case they are copied into one
 * scratch buffer; nothing here allocates or makes a syscall per record.
 *
 * Design notes / invariants:
 *  - data_head is read with acquire ordering before the records it covers;
 *    data_tail is published with release ordering after we are done with
 *    them, so the kernel never overwrites a record being decoded.
 *  - prof_perf_drain_merged merges the per-CPU rings of one or more
 *    events by timestamp (a sample in one event's ring may depend on an
 *    MMAP, COMM or EXIT in another's), each ring having its own scratch
 *    area because one wrapped record per ring may be pending at a time.
 *  - The merge stops at the cutoff: the lowest mark of all rings, a mark
 *    being the clock read before the ring's data_head (pump.c keeps one
 *    per queue).  A record timed after a mark may still be on its way into
 *    that ring, so later records of the other rings wait for the next
 *    pass rather than overtake it (perf's ordered events flush up to a
 *    round's start for the same reason).  The records are CLOCK_MONOTONIC
 *    (event.c), the clock of now_ns().
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
	if (pf->also_fd && n < ARRAY_SIZE(fds))
		fds[n++] = (struct pollfd){ .fd = pf->also_fd - 1, .events = POLLIN };
	if (poll(fds, n, timeout_ms) < 0 && errno != EINTR)
		return -errno;
	return 0;
}

/* Shared by the direct reader and the pump. */
static uint64_t prof_perf_record_time(const struct perf_event_header *h)
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

/* One per-CPU ring of one event during a merged pass. */
struct cursor {
	const struct prof_perf_source *src;
	int cpu;
	uint64_t tail, head;	/* reading the kernel ring itself (no pump) */
	const struct perf_event_header *rec;	/* next record, NULL when none */
	uint64_t time;
};

/* Loads the cursor's next record; a corrupt one resyncs at head. */
static void cursor_load(struct cursor *c)
{
	struct prof_perf *pf = c->src->pf;

	if (pf->pump) {
		c->rec = prof_perf_pump_peek(pf, c->cpu);
	} else {
		c->rec = prof_perf_ring_peek(&pf->rings[c->cpu], c->tail, c->head,
					     pf->scratch + (size_t)c->cpu * PROF_PERF_SCRATCH);
		if (!c->rec)
			c->tail = c->head;
	}
	if (c->rec)
		c->time = prof_perf_record_time(c->rec);
}

static void cursor_advance(struct cursor *c)
{
	if (c->src->pf->pump)
		prof_perf_pump_consume(c->src->pf, c->cpu, c->rec->size);
	else
		c->tail += c->rec->size;
	cursor_load(c);
}

/* Opens a cursor per ring of src at cs + *n; returns the lowest mark. */
static uint64_t open_source(const struct prof_perf_source *src, struct cursor *cs, size_t *n)
{
	struct prof_perf *pf = src->pf;
	uint64_t mark = UINT64_MAX, now;

	if (pf->pump)
		prof_perf_pump_refill(pf);
	now = now_ns();	/* before any data_head: the mark of a ring read here */
	for (int cpu = 0; cpu < pf->ncpus; cpu++) {
		struct perf_event_mmap_page *meta = pf->rings[cpu].meta;
		if (!meta)	/* no event on that CPU: no records, no mark */
			continue;
		struct cursor *c = &cs[(*n)++];
		*c = (struct cursor){ .src = src, .cpu = cpu };
		if (pf->pump) {	/* the mark first: it covers the records read after it */
			uint64_t m = prof_perf_pump_mark(pf, cpu);
			mark = MIN(mark, m);
		} else {
			mark = MIN(mark, now);
			c->head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
			c->tail = meta->data_tail;
		}
		cursor_load(c);
	}
	return mark;
}

/* The cursor with the oldest record timed before cutoff, or NULL. */
static struct cursor *oldest(struct cursor *cs, size_t n, uint64_t cutoff)
{
	struct cursor *best = NULL;

	for (size_t i = 0; i < n; i++)
		if (cs[i].rec && cs[i].time < cutoff && (!best || cs[i].time < best->time))
			best = &cs[i];
	return best;
}

int prof_perf_drain_merged(const struct prof_perf_source *srcs, size_t nsrcs, uint64_t budget_ns)
{
	return prof_perf_drain_until(srcs, nsrcs, budget_ns, NULL);
}

int prof_perf_drain_until(const struct prof_perf_source *srcs, size_t nsrcs, uint64_t budget_ns,
			  uint64_t *passed)
{
	size_t total = 0, n = 0;
	uint64_t cutoff = UINT64_MAX, end = now_ns() + budget_ns;
	unsigned records = 0;
	struct cursor *cs, *c;
	int ret = 0;

	for (size_t i = 0; i < nsrcs; i++)
		total += (size_t)srcs[i].pf->ncpus;
	cs = xcalloc(total ? total : 1, sizeof(*cs));
	for (size_t i = 0; i < nsrcs; i++) {
		uint64_t mark = open_source(&srcs[i], cs, &n);	/* MIN evaluates twice */
		cutoff = MIN(cutoff, mark);
	}
	while (!ret && (c = oldest(cs, n, cutoff))) {
		if (passed)
			*passed = c->time;	/* all before it are handed out */
		ret = c->src->fn(c->src->ctx, c->rec);
		cursor_advance(c);
		/* every 64 records: has the budget run out? */
		if (!ret && budget_ns && !(++records & 63) && now_ns() >= end)
			ret = 1;
	}
	if (passed && !ret)
		*passed = cutoff;
	for (size_t i = 0; i < n; i++)	/* the records read leave the kernel rings */
		if (!cs[i].src->pf->pump)
			__atomic_store_n(&cs[i].src->pf->rings[cs[i].cpu].meta->data_tail, cs[i].tail,
					 __ATOMIC_RELEASE);
	free(cs);
	return ret;
}

int prof_perf_drain(struct prof_perf *pf, prof_perf_record_fn fn, void *ctx)
{
	struct prof_perf_source src = { pf, fn, ctx };

	return prof_perf_drain_merged(&src, 1, 0);
}

