/*
 * sample.c - decoding PERF_RECORD_SAMPLE bodies and the sample_id_all
 * trailer of other records, following the field order of
 * <linux/perf_event.h> for each attr's sample_type.
 *
 * Which attr a record belongs to is found from its sample id: for samples
 * at the front (PERF_SAMPLE_IDENTIFIER, else after IP/TID/TIME/ADDR), for
 * other records at the end of the trailer.  As in perf, the positions come
 * from the first attr: perf refuses to record events whose positions
 * differ.  Every field read is bounds-checked (fuzzed input).
 */
#include "prof/perfdata.h"
#include <errno.h>
#include <string.h>

struct rd {			/* bounds-checked reader over one record body */
	const uint8_t *p, *end;
	bool bad;
};

static uint64_t rd_u64(struct rd *r)
{
	uint64_t v = 0;

	if (r->bad || r->end - r->p < 8) {
		r->bad = true;
		return 0;
	}
	memcpy(&v, r->p, 8);
	r->p += 8;
	return v;
}

/* Skips n bytes; false (and bad) if they are not there. */
static bool rd_skip(struct rd *r, uint64_t n)
{
	if (r->bad || (uint64_t)(r->end - r->p) < n) {
		r->bad = true;
		return false;
	}
	r->p += n;
	return true;
}

static int sample_id_pos(uint64_t st)
{
	if (st & PERF_SAMPLE_IDENTIFIER)
		return 0;
	if (!(st & PERF_SAMPLE_ID))
		return -1;
	return !!(st & PERF_SAMPLE_IP) + !!(st & PERF_SAMPLE_TID) +
	       !!(st & PERF_SAMPLE_TIME) + !!(st & PERF_SAMPLE_ADDR);
}

static int trailer_id_pos(uint64_t st)	/* counted from the end, 1 = last u64 */
{
	if (st & PERF_SAMPLE_IDENTIFIER)
		return 1;
	if (!(st & PERF_SAMPLE_ID))
		return -1;
	return 1 + !!(st & PERF_SAMPLE_CPU) + !!(st & PERF_SAMPLE_STREAM_ID);
}

static const struct pd_attr *attr_of(const struct pd_file *f, uint64_t id, bool have_id)
{
	int idx = have_id ? pd_attr_of_id(f, id) : (f->attrs.n == 1 ? 0 : -1);

	return idx < 0 ? NULL : &f->attrs.v[idx];
}

static void skip_read_values(struct rd *r, const struct perf_event_attr *a)
{
	uint64_t rf = a->read_format;
	uint64_t per = 1 + !!(rf & PERF_FORMAT_ID) + !!(rf & PERF_FORMAT_LOST);
	uint64_t times = !!(rf & PERF_FORMAT_TOTAL_TIME_ENABLED) +
			 !!(rf & PERF_FORMAT_TOTAL_TIME_RUNNING);

	if (rf & PERF_FORMAT_GROUP) {
		uint64_t nr = rd_u64(r);
		if (nr > 65536)
			r->bad = true;
		else
			rd_skip(r, 8 * (times + nr * per));
	} else {
		rd_skip(r, 8 * (times + per));
	}
}

static void read_regs(struct rd *r, uint64_t mask, int nr, uint64_t *abi, uint64_t *regs)
{
	*abi = rd_u64(r);
	if (!*abi)
		return;
	for (int bit = 0; bit < 64 && nr > 0; bit++) {
		if (!(mask & (1ULL << bit)))
			continue;
		uint64_t v = rd_u64(r);
		if (regs)
			regs[bit] = v;
		nr--;
	}
}

static void read_callchain(struct rd *r, struct pd_sample *s)
{
	s->nr_callchain = rd_u64(r);
	s->callchain = r->p;
	if (s->nr_callchain > (uint64_t)(r->end - r->p) / 8)
		r->bad = true;
	else
		r->p += 8 * s->nr_callchain;
}

static void read_branch_stack(struct rd *r, const struct perf_event_attr *a)
{
	uint64_t nr = rd_u64(r);

	if (a->branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX)
		rd_u64(r);
	if (nr > (uint64_t)(r->end - r->p) / 24)
		r->bad = true;
	else
		rd_skip(r, 24 * nr);
}

static void read_user_stack(struct rd *r, struct pd_sample *s)
{
	uint64_t size = rd_u64(r);

	s->stack = r->p;
	if (!rd_skip(r, size))
		return;
	s->stack_size = size ? rd_u64(r) : 0;
	if (s->stack_size > size)
		s->stack_size = size;
}

/* The fields after PERIOD, in kernel order. */
static void read_tail(struct rd *r, const struct pd_attr *pa, struct pd_sample *s)
{
	const struct perf_event_attr *a = &pa->attr;
	uint64_t st = a->sample_type;

	if (st & PERF_SAMPLE_READ)
		skip_read_values(r, a);
	if (st & PERF_SAMPLE_CALLCHAIN)
		read_callchain(r, s);
	if (st & PERF_SAMPLE_RAW) {
		uint64_t sz = 0;
		if ((uint64_t)(r->end - r->p) >= 4)
			memcpy(&sz, r->p, 4);
		rd_skip(r, (sz + 4 + 7) & ~7ULL);
	}
	if (st & PERF_SAMPLE_BRANCH_STACK)
		read_branch_stack(r, a);
	if (st & PERF_SAMPLE_REGS_USER)
		read_regs(r, a->sample_regs_user, pa->nr_regs_user, &s->regs_abi, s->regs);
	if (st & PERF_SAMPLE_STACK_USER)
		read_user_stack(r, s);
	/* WEIGHT, DATA_SRC, TRANSACTION, REGS_INTR... are not needed: stop here. */
}

/* The fields up to PERIOD, which are at fixed places in the record's first
 * bytes: all the sort by time needs, without touching the stack copy. */
static int decode_head(const struct pd_file *f, const struct pd_record *rec, struct pd_sample *s,
		       struct rd *r)
{
	int pos = f->attrs.n ? sample_id_pos(f->attrs.v[0].attr.sample_type) : -1;
	uint64_t id = 0;

	memset(s, 0, offsetof(struct pd_sample, regs));
	s->stack = NULL;
	s->stack_size = 0;
	if (pos >= 0) {
		if ((size_t)(rec->size - sizeof(struct perf_event_header)) < 8 * (size_t)(pos + 1))
			return -EINVAL;
		id = pd_u64(r->p, (size_t)pos);
	}
	s->attr = attr_of(f, id, pos >= 0);
	if (!s->attr)
		return -EINVAL;

	uint64_t st = s->attr->attr.sample_type;
	if (st & PERF_SAMPLE_IDENTIFIER)
		s->id = rd_u64(r);
	if (st & PERF_SAMPLE_IP)
		s->ip = rd_u64(r);
	if (st & PERF_SAMPLE_TID) {
		uint64_t v = rd_u64(r);
		s->pid = (uint32_t)v;
		s->tid = (uint32_t)(v >> 32);
	}
	if (st & PERF_SAMPLE_TIME)
		s->time = rd_u64(r);
	if (st & PERF_SAMPLE_ADDR)
		s->addr = rd_u64(r);
	if (st & PERF_SAMPLE_ID)
		s->id = rd_u64(r);
	if (st & PERF_SAMPLE_STREAM_ID)
		s->stream_id = rd_u64(r);
	if (st & PERF_SAMPLE_CPU)
		s->cpu = (uint32_t)rd_u64(r);
	if (st & PERF_SAMPLE_PERIOD)
		s->period = rd_u64(r);
	return r->bad ? -EINVAL : 0;
}

bool pd_sample_time(const struct pd_file *f, const struct pd_record *rec, uint64_t *time)
{
	struct rd r = { rec->data + sizeof(struct perf_event_header), rec->data + rec->size, false };
	struct pd_sample s;

	if (decode_head(f, rec, &s, &r) || !(s.attr->attr.sample_type & PERF_SAMPLE_TIME))
		return false;
	*time = s.time;
	return true;
}

int pd_decode_sample(const struct pd_file *f, const struct pd_record *rec, struct pd_sample *s)
{
	struct rd r = { rec->data + sizeof(struct perf_event_header), rec->data + rec->size, false };

	if (decode_head(f, rec, s, &r))
		return -EINVAL;
	read_tail(&r, s->attr, s);
	return r.bad ? -EINVAL : 0;
}

void pd_decode_sample_id(const struct pd_file *f, const struct pd_record *rec,
			 struct pd_sample_id *sid)
{
	size_t body = rec->size - sizeof(struct perf_event_header);
	const uint8_t *end = rec->data + rec->size;

	memset(sid, 0, sizeof(*sid));
	if (!f->attrs.n || !f->attrs.v[0].attr.sample_id_all)
		return;
	int pos = trailer_id_pos(f->attrs.v[0].attr.sample_type);
	uint64_t id = 0;
	if (pos > 0) {
		if (body < 8 * (size_t)pos)
			return;
		id = pd_u64(end - 8 * pos, 0);
	}
	sid->attr = attr_of(f, id, pos > 0);
	if (!sid->attr || !sid->attr->attr.sample_id_all)
		return;

	uint64_t st = sid->attr->attr.sample_type;
	size_t n = !!(st & PERF_SAMPLE_TID) + !!(st & PERF_SAMPLE_TIME) + !!(st & PERF_SAMPLE_ID) +
		   !!(st & PERF_SAMPLE_STREAM_ID) + !!(st & PERF_SAMPLE_CPU) +
		   !!(st & PERF_SAMPLE_IDENTIFIER);
	if (body < 8 * n)
		return;
	struct rd r = { end - 8 * n, end, false };
	if (st & PERF_SAMPLE_TID) {
		uint64_t v = rd_u64(&r);
		sid->pid = (uint32_t)v;
		sid->tid = (uint32_t)(v >> 32);
	}
	if (st & PERF_SAMPLE_TIME) {
		sid->time = rd_u64(&r);
		sid->has_time = true;
	}
	if (st & PERF_SAMPLE_ID)
		sid->id = rd_u64(&r);
	if (st & PERF_SAMPLE_STREAM_ID)
		rd_u64(&r);
	if (st & PERF_SAMPLE_CPU)
		sid->cpu = (uint32_t)rd_u64(&r);
	if (st & PERF_SAMPLE_IDENTIFIER)
		sid->id = rd_u64(&r);
}
