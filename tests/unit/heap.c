/*
 * heap.c - unit tests of the heap metrics: heap samples survive the
 * prof.data round trip in their own record type, live-bytes is allocated
 * minus freed per stack, peak-bytes is what was live when the estimated
 * heap was largest, and the standard errors are the Horvitz-Thompson
 * ones (a block sampled with certainty adds no error).
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
	is_u64(prof_writer_close(w, &p), 0, "writer closes");

	prof_profile_init(&q);
	is_u64(prof_data_read(path, &q, &info), 0, "reads back");
	const struct prof_heap_summary *h = prof_heap_summary(&q);
	ok(h->present && h->rate == 1024, "heap present, rate from the meta data");
	is_u64(h->samples, 4, "4 sampled allocations");
	is_u64(h->frees, 2, "2 frees");
	is_u64(prof_total(&q, PROF_M_SAMPLES), 1, "the CPU sample is still there");
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

	prof_profile_free(&p);
	prof_profile_free(&q);
	unlink(path);
	rmdir(dir);
	free(path);
	return done_testing();
}
