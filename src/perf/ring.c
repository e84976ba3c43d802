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
 *  - prof_perf_drain merges the per-CPU rings by timestamp; each ring has
 *    its own scratch area because one wrapped record per ring may be
 *    pending at a time.
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
