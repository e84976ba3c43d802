/*
 * decode.c - the one decoder of perf records, shared by the live ring
 * drain (src/perf/ring.c, pump.c) and the perf.data reader
 * (src/perfdata/): PERF_RECORD_SAMPLE bodies laid out by an attr's
 * sample_type, the sample_id_all trailer of other records, and the
 * side-band records (MMAP, MMAP2, COMM, FORK/EXIT, LOST, LOST_SAMPLES).
 *
 * Design notes / invariants:
 *  - Fields follow <linux/perf_event.h>'s order for PERF_RECORD_SAMPLE; we
 *    decode up to PERF_SAMPLE_STACK_USER and stop (later fields such as
 *    WEIGHT or REGS_INTR are not needed).
 *  - Records may be unaligned (perf.data, fuzzed input): every read is a
 *    memcpy, and the sample keeps byte pointers for its arrays
 *    (prof_perf_callchain() and prof_perf_sample_regs() read them).
 *  - Every read is bounds-checked against the header's size: a short or
 *    inconsistent record is -EINVAL, never an out-of-bounds read.
 *  - Nothing here allocates: the decoded structs point into the record.
 */
#include "prof/perf.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

/* A bounds-checked cursor over one record's body; bad sticks. */
struct cursor {
	const uint8_t *p, *end;
	bool bad;
};

static struct cursor body_of(const struct perf_event_header *h, uint16_t *size)
{
	struct perf_event_header hdr;

	memcpy(&hdr, h, sizeof(hdr));	/* h may be unaligned */
	*size = hdr.size < sizeof(hdr) ? (uint16_t)sizeof(hdr) : hdr.size;
	return (struct cursor){ (const uint8_t *)h + sizeof(hdr), (const uint8_t *)h + *size, false };
}

static const uint8_t *take(struct cursor *c, uint64_t n)
{
	const uint8_t *p = c->p;

	if (c->bad || (uint64_t)(c->end - c->p) < n) {
		c->bad = true;
		return NULL;
	}
	c->p += n;
	return p;
}

static uint64_t take_u64(struct cursor *c)
{
	const uint8_t *p = take(c, 8);
	uint64_t v = 0;

	if (p)
		memcpy(&v, p, 8);
	return v;
}

static void take_u32x2(struct cursor *c, uint32_t *a, uint32_t *b)
{
	const uint8_t *p = take(c, 8);

	*a = *b = 0;
	if (p) {
		memcpy(a, p, 4);
		memcpy(b, p + 4, 4);
	}
}

uint16_t prof_perf_record_misc(const struct perf_event_header *h)
{
	struct perf_event_header hdr;

	memcpy(&hdr, h, sizeof(hdr));
	return hdr.misc;
}

/* --- PERF_RECORD_SAMPLE ---------------------------------------------------------- */

/* The fields up to PERIOD: fixed places in the record's first bytes, all a
 * sort by time needs, without touching the stack copy. */
static void decode_head(const struct perf_event_attr *a, struct cursor *c, struct prof_perf_sample *s)
{
	uint64_t st = a->sample_type;

	if (st & PERF_SAMPLE_IDENTIFIER)
		s->id = take_u64(c);
	if (st & PERF_SAMPLE_IP)
		s->ip = take_u64(c);
	if (st & PERF_SAMPLE_TID)
		take_u32x2(c, &s->pid, &s->tid);
	if (st & PERF_SAMPLE_TIME)
		s->time = take_u64(c);
	if (st & PERF_SAMPLE_ADDR)
		s->addr = take_u64(c);
	if (st & PERF_SAMPLE_ID)
		s->id = take_u64(c);
	if (st & PERF_SAMPLE_STREAM_ID)
		take_u64(c);
	if (st & PERF_SAMPLE_CPU) {
		uint32_t r32;
		take_u32x2(c, &s->cpu, &r32);
	}
	if (st & PERF_SAMPLE_PERIOD)
		s->period = take_u64(c);
}

static void skip_read_values(struct cursor *c, const struct perf_event_attr *a)
{
	uint64_t rf = a->read_format;
	uint64_t per = 1 + !!(rf & PERF_FORMAT_ID) + !!(rf & PERF_FORMAT_LOST);
	uint64_t times = !!(rf & PERF_FORMAT_TOTAL_TIME_ENABLED) +
			 !!(rf & PERF_FORMAT_TOTAL_TIME_RUNNING);
	uint64_t nr = 1;

	if (rf & PERF_FORMAT_GROUP) {
		nr = take_u64(c);
		if (nr > 65536)
			c->bad = true;
	}
	take(c, 8 * (times + nr * per));
}

static void read_callchain(struct cursor *c, struct prof_perf_sample *s)
{
	s->nr_callchain = take_u64(c);
	if (s->nr_callchain > (uint64_t)(c->end - c->p) / 8)
		c->bad = true;
	else
		s->callchain = take(c, 8 * s->nr_callchain);
}

/* u32 size, then size bytes; the kernel pads the pair to 8 bytes. */
static void read_raw(struct cursor *c, struct prof_perf_sample *s)
{
	const uint8_t *p = take(c, 4);

	if (!p)
		return;
	memcpy(&s->raw_size, p, 4);
	s->raw = take(c, s->raw_size);
	take(c, ((s->raw_size + 4 + 7) & ~7ULL) - 4 - s->raw_size);
}

static void skip_branch_stack(struct cursor *c, const struct perf_event_attr *a)
{
	uint64_t nr = take_u64(c);

	if (a->branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX)
		take_u64(c);
	if (nr > (uint64_t)(c->end - c->p) / 24)
		c->bad = true;
	else
		take(c, 24 * nr);
}

static void read_user(struct cursor *c, const struct perf_event_attr *a, struct prof_perf_sample *s)
{
	if (a->sample_type & PERF_SAMPLE_REGS_USER) {
		s->regs_abi = take_u64(c);
		if (s->regs_abi) {
			s->regs_mask = a->sample_regs_user;
			s->regs = take(c, 8 * (uint64_t)__builtin_popcountll(s->regs_mask));
		}
	}
	if (a->sample_type & PERF_SAMPLE_STACK_USER) {
		uint64_t size = take_u64(c);
		if (!size)
			return;
		s->stack = take(c, size);
		s->stack_size = take_u64(c);
		if (s->stack_size > size)
			s->stack_size = size;
	}
}

static void sample_reset(const struct perf_event_header *h, struct prof_perf_sample *s)
{
	memset(s, 0, sizeof(*s));
	s->kernel = (prof_perf_record_misc(h) & PERF_RECORD_MISC_CPUMODE_MASK) ==
		    PERF_RECORD_MISC_KERNEL;
}

int prof_perf_parse_sample(const struct perf_event_attr *a, const struct perf_event_header *h,
			   struct prof_perf_sample *s)
{
	uint16_t size;
	struct cursor c = body_of(h, &size);
	uint64_t st = a->sample_type;

	sample_reset(h, s);
	decode_head(a, &c, s);
	if (st & PERF_SAMPLE_READ)
		skip_read_values(&c, a);
	if (st & PERF_SAMPLE_CALLCHAIN)
		read_callchain(&c, s);
	if (st & PERF_SAMPLE_RAW)
		read_raw(&c, s);
	if (st & PERF_SAMPLE_BRANCH_STACK)
		skip_branch_stack(&c, a);
	read_user(&c, a, s);
	return c.bad ? -EINVAL : 0;
}

bool prof_perf_sample_time(const struct perf_event_attr *a, const struct perf_event_header *h,
			   uint64_t *time)
{
	uint16_t size;
	struct cursor c = body_of(h, &size);
	struct prof_perf_sample s;

	if (!(a->sample_type & PERF_SAMPLE_TIME))
		return false;
	sample_reset(h, &s);
	decode_head(a, &c, &s);
	if (c.bad)
		return false;
	*time = s.time;
	return true;
}

size_t prof_perf_sample_regs(const struct prof_perf_sample *s, uint64_t *regs, size_t nregs)
{
	size_t k = 0;

	if (!s->regs)
		return 0;
	for (int bit = 0; bit < 64; bit++) {
		if (!(s->regs_mask & (1ULL << bit)))
			continue;
		if ((size_t)bit < nregs)
			memcpy(&regs[bit], s->regs + 8 * k, 8);
		k++;
	}
	return k;
}

/* --- the sample_id_all trailer ------------------------------------------------------ */

/* u64s in the trailer of a record of attr a. */
static size_t trailer_words(const struct perf_event_attr *a)
{
	uint64_t st = a->sample_type;

	return !!(st & PERF_SAMPLE_TID) + !!(st & PERF_SAMPLE_TIME) + !!(st & PERF_SAMPLE_ID) +
	       !!(st & PERF_SAMPLE_STREAM_ID) + !!(st & PERF_SAMPLE_CPU) +
	       !!(st & PERF_SAMPLE_IDENTIFIER);
}

int prof_perf_parse_id(const struct perf_event_attr *a, const struct perf_event_header *h,
		       struct prof_perf_sample_id *id)
{
	uint16_t size;
	struct cursor c = body_of(h, &size);
	size_t n = a->sample_id_all ? trailer_words(a) : 0;
	uint64_t st = a->sample_type;

	memset(id, 0, sizeof(*id));
	if (!n || (size_t)(c.end - c.p) < 8 * n)
		return -EINVAL;
	c.p = c.end - 8 * n;
	if (st & PERF_SAMPLE_TID)
		take_u32x2(&c, &id->pid, &id->tid);
	if (st & PERF_SAMPLE_TIME) {
		id->time = take_u64(&c);
		id->has_time = true;
	}
	if (st & PERF_SAMPLE_ID)
		id->id = take_u64(&c);
	if (st & PERF_SAMPLE_STREAM_ID)
		take_u64(&c);
	if (st & PERF_SAMPLE_CPU) {
		uint32_t res;
		take_u32x2(&c, &id->cpu, &res);
	}
	if (st & PERF_SAMPLE_IDENTIFIER)
		id->id = take_u64(&c);
	return 0;
}

/* --- side-band records -------------------------------------------------------------- */

/* A NUL-terminated string inside the record body (the kernel pads it with
 * NULs to 8 bytes, so it ends before any trailer). */
static const char *take_string(struct cursor *c)
{
	const uint8_t *nul;

	if (c->bad || c->p >= c->end || !(nul = memchr(c->p, 0, (size_t)(c->end - c->p)))) {
		c->bad = true;
		return NULL;
	}
	const char *s = (const char *)c->p;
	c->p = nul + 1;
	return s;
}

/* MMAP2: maj, min, ino, ino_generation, or with attr.build_id
 * u8 size, 3 reserved, id[20]. */
static void mmap2_ids(struct cursor *c, uint16_t misc, struct prof_perf_mmap2 *m)
{
	const uint8_t *ids = take(c, 24);

	if (ids && (misc & PERF_RECORD_MISC_MMAP_BUILD_ID) && ids[0] <= 20)
		for (int i = 0; i < ids[0]; i++)
			snprintf(m->build_id + 2 * i, 3, "%02x", ids[4 + i]);
	take_u32x2(c, &m->prot, &m->flags);
}

int prof_perf_parse_mmap2(const struct perf_event_header *h, struct prof_perf_mmap2 *m)
{
	uint16_t size, misc = prof_perf_record_misc(h);
	struct cursor c = body_of(h, &size);
	struct perf_event_header hdr;

	memcpy(&hdr, h, sizeof(hdr));
	memset(m, 0, sizeof(*m));
	take_u32x2(&c, &m->pid, &m->tid);
	m->addr = take_u64(&c);
	m->len = take_u64(&c);
	m->pgoff = take_u64(&c);
	if (hdr.type == PERF_RECORD_MMAP2)
		mmap2_ids(&c, misc, m);
	else	/* MMAP (v1) has no prot: data mappings are flagged in misc */
		m->prot = (misc & PERF_RECORD_MISC_MMAP_DATA) ? PROT_READ : PROT_READ | PROT_EXEC;
	m->filename = take_string(&c);
	return c.bad ? -EINVAL : 0;
}

int prof_perf_parse_comm(const struct perf_event_header *h, struct prof_perf_comm *cm)
{
	uint16_t size;
	struct cursor c = body_of(h, &size);

	take_u32x2(&c, &cm->pid, &cm->tid);
	cm->comm = take_string(&c);
	cm->exec = (prof_perf_record_misc(h) & PERF_RECORD_MISC_COMM_EXEC) != 0;
	return c.bad ? -EINVAL : 0;
}

int prof_perf_parse_task(const struct perf_event_header *h, struct prof_perf_task *t)
{
	uint16_t size;
	struct cursor c = body_of(h, &size);

	take_u32x2(&c, &t->pid, &t->ppid);
	take_u32x2(&c, &t->tid, &t->ptid);
	t->time = take_u64(&c);
	return c.bad ? -EINVAL : 0;
}

uint64_t prof_perf_lost_count(const struct perf_event_header *h)
{
	uint16_t size;
	struct cursor c = body_of(h, &size);
	struct perf_event_header hdr;
	uint64_t n;

	memcpy(&hdr, h, sizeof(hdr));
	if (hdr.type == PERF_RECORD_LOST)
		take_u64(&c);	/* the event id */
	else if (hdr.type != PERF_RECORD_LOST_SAMPLES)
		return 0;
	n = take_u64(&c);
	return c.bad ? 0 : n;
}
