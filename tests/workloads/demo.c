/*
 * demo - the realistic workload that scripts/demo.sh profiles: a small
 * multi-threaded "batch pipeline".  Each worker thread ("demo-worker-N")
 * repeatedly generates a batch of records (generate_records, snprintf),
 * sorts them (sort_records: a bottom-up merge sort calling
 * compare_records; iterative, so the call tree stays shallow, unlike
 * glibc's recursive qsort), hashes them (hash_records, FNV-1a) and
 * compresses every third batch with zlib (compress_batch -> deflate): a
 * profile anyone can read, with work in the program, libc and libz.
 * Usage: demo [SECONDS=3] [THREADS=2]
 */
#include "wl.h"
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <zlib.h>

volatile unsigned long wl_sink;

#define BATCH 20000

struct record {
	uint64_t key;
	uint32_t id;
	char name[20];
};

struct worker {
	pthread_t thread;
	int index;
	double end;
	unsigned long batches;
	uLong compressed_bytes;
};

WL_NOINLINE static void generate_records(struct record *r, size_t n, uint64_t *state)
{
	static const char *const words[] = { "alpha", "bravo", "charlie", "delta",
					     "echo", "foxtrot", "golf", "hotel" };

	for (size_t i = 0; i < n; i++) {
		*state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
		r[i].key = *state >> 40;	/* few distinct keys: ties for qsort */
		r[i].id = (uint32_t)i;
		snprintf(r[i].name, sizeof(r[i].name), "%s-%u",
			 words[(*state >> 8) & 7], (unsigned)(*state >> 50));
	}
}

WL_NOINLINE static int compare_records(const void *pa, const void *pb)
{
	const struct record *a = pa, *b = pb;

	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* Bottom-up merge sort of r[0..n) using tmp[0..n); stable, no recursion. */
WL_NOINLINE static void sort_records(struct record *r, struct record *tmp, size_t n)
{
	struct record *src = r, *dst = tmp, *swap;

	for (size_t width = 1; width < n; width *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * width) {
			size_t mid = lo + width < n ? lo + width : n;
			size_t hi = lo + 2 * width < n ? lo + 2 * width : n;
			size_t i = lo, j = mid, k = lo;

			while (i < mid && j < hi)
				dst[k++] = compare_records(&src[j], &src[i]) < 0 ? src[j++] : src[i++];
			while (i < mid)
				dst[k++] = src[i++];
			while (j < hi)
				dst[k++] = src[j++];
		}
		swap = src, src = dst, dst = swap;
	}
	if (src != r)
		memcpy(r, src, n * sizeof(*r));
}

WL_NOINLINE static uint64_t hash_records(const struct record *r, size_t n)
{
	const unsigned char *p = (const unsigned char *)r;
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < n * sizeof(*r); i++) {
		h ^= p[i];
		h *= 1099511628211ULL;
	}
	return h;
}

WL_NOINLINE static uLong compress_batch(const struct record *r, size_t n,
					Bytef *out, uLong out_size)
{
	uLongf len = out_size;

	if (compress2(out, &len, (const Bytef *)r, n * sizeof(*r), 1) != Z_OK)
		return 0;
	return len;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	char name[16];
	uint64_t state = 0x9e3779b97f4a7c15ULL * (w->index + 1);
	struct record *recs = malloc(BATCH * sizeof(*recs));
	struct record *tmp = malloc(BATCH * sizeof(*tmp));
	uLong out_size = compressBound(BATCH * sizeof(*recs));
	Bytef *out = malloc(out_size);

	snprintf(name, sizeof(name), "demo-worker-%d", w->index);
	pthread_setname_np(pthread_self(), name);
	if (!recs || !tmp || !out)
		goto done;
	while (wl_cpu_now() < w->end) {
		generate_records(recs, BATCH, &state);
		sort_records(recs, tmp, BATCH);
		wl_sink += hash_records(recs, BATCH);
		if (w->batches % 3 == 0)	/* zlib would swamp the rest */
			w->compressed_bytes += compress_batch(recs, BATCH, out, out_size);
		w->batches++;
	}
done:
	free(recs);
	free(tmp);
	free(out);
	return NULL;
}

int main(int argc, char **argv)
{
	double secs = wl_seconds_arg(argc, argv, 1, 3.0);
	int nthreads = argc > 2 ? atoi(argv[2]) : 2;
	struct worker w[16];
	unsigned long batches = 0;
	uLong bytes = 0;

	if (nthreads < 1 || nthreads > 16)
		nthreads = 2;
	for (int i = 0; i < nthreads; i++) {
		w[i] = (struct worker){ .index = i + 1, .end = wl_cpu_now() + secs };
		if (pthread_create(&w[i].thread, NULL, worker_main, &w[i])) {
			fprintf(stderr, "demo: cannot create thread\n");
			return 1;
		}
	}
	for (int i = 0; i < nthreads; i++) {
		pthread_join(w[i].thread, NULL);
		batches += w[i].batches;
		bytes += w[i].compressed_bytes;
	}
	printf("demo: %d threads sorted and hashed %lu batches of %d records, compressed a third (%lu KiB)\n",
	       nthreads, batches, BATCH, (unsigned long)(bytes / 1024));
	return 0;
}
