/*
 * sample.c - which attr a perf.data record belongs to, and decoding it
 * with that attr through the one record decoder (src/perf/decode.c).
 *
 * The attr is found from the record's sample id: for samples at the front
 * (PERF_SAMPLE_IDENTIFIER, else after IP/TID/TIME/ADDR), for other
 * records at the end of the sample_id_all trailer.  As in perf, the
 * positions come from the first attr: perf refuses to record events whose
 * positions differ.  Every read is bounds-checked (fuzzed input).
 */
#include "prof/perfdata.h"
#include "prof/perf.h"
#include <errno.h>
#include <string.h>

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

static const struct perfdata_attr *attr_of(const struct perfdata_file *f, uint64_t id, bool have_id)
{
	int idx = have_id ? perfdata_attr_of_id(f, id) : (f->attrs.n == 1 ? 0 : -1);

	return idx < 0 ? NULL : &f->attrs.v[idx];
}

const struct perfdata_attr *perfdata_sample_attr(const struct perfdata_file *f,
					   const struct perfdata_record *rec)
{
	int pos = f->attrs.n ? sample_id_pos(f->attrs.v[0].attr.sample_type) : -1;
	size_t body = rec->size - sizeof(struct perf_event_header);
	uint64_t id = 0;

	if (pos >= 0) {
		if (body < 8 * (size_t)(pos + 1))
			return NULL;
		id = perfdata_u64(rec->data + sizeof(struct perf_event_header), (size_t)pos);
	}
	return attr_of(f, id, pos >= 0);
}

const struct perfdata_attr *perfdata_record_attr(const struct perfdata_file *f,
					   const struct perfdata_record *rec)
{
	size_t body = rec->size - sizeof(struct perf_event_header);
	const struct perfdata_attr *a;
	uint64_t id = 0;

	if (rec->type == PERF_RECORD_SAMPLE)
		return perfdata_sample_attr(f, rec);
	if (!f->attrs.n || !f->attrs.v[0].attr.sample_id_all)
		return NULL;
	int pos = trailer_id_pos(f->attrs.v[0].attr.sample_type);
	if (pos > 0) {
		if (body < 8 * (size_t)pos)
			return NULL;
		id = perfdata_u64(rec->data + rec->size - 8 * pos, 0);
	}
	a = attr_of(f, id, pos > 0);
	return a && a->attr.sample_id_all ? a : NULL;
}

bool perfdata_sample_time(const struct perfdata_file *f, const struct perfdata_record *rec, uint64_t *time)
{
	const struct perfdata_attr *a = perfdata_sample_attr(f, rec);

	return a && prof_perf_sample_time(&a->attr, (const void *)rec->data, time);
}

int perfdata_decode_sample(const struct perfdata_file *f, const struct perfdata_record *rec,
			   struct prof_perf_sample *s, const struct perfdata_attr **attr)
{
	const struct perfdata_attr *a = perfdata_sample_attr(f, rec);

	if (attr)
		*attr = a;
	if (!a)
		return -EINVAL;
	return prof_perf_parse_sample(&a->attr, (const void *)rec->data, s);
}

const struct perfdata_attr *perfdata_decode_sample_id(const struct perfdata_file *f,
						const struct perfdata_record *rec,
						struct prof_perf_sample_id *sid)
{
	const struct perfdata_attr *a = perfdata_record_attr(f, rec);

	memset(sid, 0, sizeof(*sid));
	if (a && prof_perf_parse_id(&a->attr, (const void *)rec->data, sid) < 0)
		return NULL;
	return a;
}
