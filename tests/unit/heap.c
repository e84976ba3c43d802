/*
 * heap.c - unit tests of the heap metrics: heap samples survive the
 * prof.data round trip in their own record type, live-bytes is allocated
 * minus freed per stack, peak-bytes is what was live when the estimated
 * heap was largest, and the standard errors are the Horvitz-Thompson
 * ones (a block sampled with certainty adds no error).  The blocks live
 * at the end come back with their allocation times (the leak view), and
 * a snapshot is the heap as at a moment.
 */
#include "prof/data.h"
#include "prof/model.h"
#include "tap.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void alloc(struct prof_writer *w, uint64_t t, uint32_t th, uint32_t node, uint64_t c, uint64_t b)
{
	prof_writer_sample(w, t, th, node, PROF_M_ALLOCS, c, 0);
	prof_writer_sample(w, t, th, node, PROF_M_ALLOC_BYTES, b, 0);
}

static void release(struct prof_writer *w, uint64_t t, uint32_t th, uint32_t node, uint64_t c, uint64_t b)
{
	prof_writer_sample(w, t, th, node, PROF_M_FREES, c, 0);
	prof_writer_sample(w, t, th, node, PROF_M_FREE_BYTES, b, 0);
}

static uint64_t weight(const struct prof_profile *p, enum prof_view_metric m, uint32_t node)
{
	struct prof_view v;
	uint64_t sum = 0;

	prof_view_init(&v);
	v.metric = m;
	for (size_t i = 0; i < p->aggs.n; i++)
		if (p->aggs.v[i].node == node)
			sum += prof_view_weight(p, &v, &p->aggs.v[i]);
	return sum;
}

int main(void)
{
	char dir[] = "/tmp/prof-heap-test.XXXXXX";
	struct prof_profile p, q;
	struct prof_writer *w;
	struct prof_read_info info;

	if (!mkdtemp(dir))
		return 1;
	char *path = xasprintf("%s/h.data", dir);
	prof_profile_init(&p);
	uint32_t th = prof_thread_intern(&p, 10, 10, "t");
	struct prof_frame f = { .func = prof_intern(&p, "leaky"), .module = PROF_NONE };
	uint32_t fl = prof_frame_intern(&p, &f);
	f.func = prof_intern(&p, "peaky");
	uint32_t fp = prof_frame_intern(&p, &f);
	uint32_t leak = prof_node_from_stack(&p, &fl, 1), peak = prof_node_from_stack(&p, &fp, 1);
	prof_meta_set(&p, "heap_rate", "1024");
	prof_meta_set(&p, "heap_live_blocks", "2");

	is_u64(prof_writer_open(&w, path), 0, "writer opens");
	prof_writer_sample(w, 1, th, leak, PROF_M_SAMPLES, 1, 0);	/* a CPU sample among them */
	alloc(w, 10, th, leak, 4, 400);		/* p = 1/4: variance 400^2 * 3/4 */
	alloc(w, 20, th, peak, 1, 5000);	/* certain: no variance */
	alloc(w, 30, th, peak, 1, 3000);
	release(w, 40, th, peak, 1, 5000);
	release(w, 50, th, peak, 1, 3000);
	alloc(w, 60, th, peak, 2, 100);
	is_u64(prof_writer_sample(w, 70, th, peak, PROF_M_PEAK_BYTES, 1, 0), (uint64_t)-EINVAL,
	       "peak-bytes is derived, never written");
	/* the end: the two blocks still live, at their allocation times */
	prof_writer_sample(w, 10, th, leak, PROF_M_ALLOCS, 4, PROF_SAMPLE_LIVE_AT_END);
	prof_writer_sample(w, 10, th, leak, PROF_M_ALLOC_BYTES, 400, PROF_SAMPLE_LIVE_AT_END);
	prof_writer_sample(w, 60, th, peak, PROF_M_ALLOCS, 2, PROF_SAMPLE_LIVE_AT_END);
	prof_writer_sample(w, 60, th, peak, PROF_M_ALLOC_BYTES, 100, PROF_SAMPLE_LIVE_AT_END);
	prof_writer_sample(w, 100, th, peak, PROF_M_SAMPLES, 1, 0);	/* the end of the recording */
	is_u64(prof_writer_close(w, &p), 0, "writer closes");

	prof_profile_init(&q);
	is_u64(prof_data_read(path, &q, &info), 0, "reads back");
	const struct prof_profile_heap_summary *h = prof_profile_heap_summary(&q);
	ok(h->present && h->rate == 1024, "heap present, rate from the meta data");
	is_u64(h->samples, 4, "4 sampled allocations");
	is_u64(h->frees, 2, "2 frees");
	is_u64(prof_total(&q, PROF_M_SAMPLES), 2, "the CPU samples are still there");
	is_u64(weight(&q, PROF_VIEW_ALLOCS, leak), 4, "allocs of leaky");
	is_u64(weight(&q, PROF_VIEW_ALLOC_BYTES, peak), 8100, "alloc-bytes of peaky");
	is_u64(weight(&q, PROF_VIEW_LIVE_BYTES, leak), 400, "leaky's block is live at the end");
	is_u64(weight(&q, PROF_VIEW_LIVE_BYTES, peak), 100, "peaky: only the last block is live");
	is_u64(weight(&q, PROF_VIEW_PEAK_BYTES, peak), 8000, "peaky at the peak: both big blocks");
	is_u64(weight(&q, PROF_VIEW_PEAK_BYTES, leak), 400, "leaky at the peak");
	ok(h->peak_bytes == 8400 && h->peak_ns == 30, "peak 8400 bytes at t=30 (got %.0f at %llu)",
	   h->peak_bytes, (unsigned long long)h->peak_ns);
	ok(fabs(h->peak_bytes_err - sqrt(400.0 * 400 * 0.75)) < 1e-6, "peak error: only the sampled block");
	ok(fabs(h->live_bytes_err - sqrt(400.0 * 400 * 0.75 + 100.0 * 100 * 0.5)) < 1e-6,
	   "live error: the two sampled blocks still live");
	ok(fabs(h->allocs_err - sqrt(4.0 * 4 * 0.75 + 2.0 * 2 * 0.5)) < 1e-6, "allocs error");

	is_u64(q.heap_live.n, 4, "the live blocks come back apart from the weights");
	is_u64(prof_total(&q, PROF_M_ALLOCS), 8, "and add no allocation");
	is_u64(prof_profile_heap_leaks(&q, 50), 0, "leak view, 50 ns old and more");
	is_u64(weight(&q, PROF_VIEW_LIVE_BYTES, leak), 400, "leaky's block is 90 ns old");
	is_u64(weight(&q, PROF_VIEW_LIVE_BYTES, peak), 0, "peaky's is 40 ns old");
	is_u64(weight(&q, PROF_VIEW_ALLOCS, leak), 4, "allocs: the old blocks' count");
	ok(strstr(q.heap.scope, "at least") != NULL, "the header says what is shown");
	prof_profile_free(&q);

	prof_profile_init(&q);
	is_u64(prof_data_read(path, &q, &info), 0, "reads back again");
	prof_profile_heap_until(&q, 35);
	is_u64(weight(&q, PROF_VIEW_LIVE_BYTES, peak), 8000, "at t=35: both big blocks live");
	is_u64(weight(&q, PROF_VIEW_LIVE_BYTES, leak), 400, "at t=35: leaky's block");
	is_u64(prof_profile_heap_leaks(&q, 0), (uint64_t)-ENODATA, "after a snapshot, which blocks live is unknown");

	prof_profile_free(&p);
	prof_profile_free(&q);
	unlink(path);
	rmdir(dir);
	free(path);
	return done_testing();
}
