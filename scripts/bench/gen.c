/*
 * gen.c - synthetic prof.data recordings for the scaling benchmark, and a
 * reader for the attach benchmark.  Links build/libprof.a and writes
 * through the real prof_writer, as the recorder does.
 *
 *   gen FILE N STACKS   write N CPU samples spread uniformly over STACKS
 *                       distinct 16-deep stacks (4 threads, 2000 functions)
 *   gen --start-ns FILE print the recording's first sample time
 *                       (CLOCK_MONOTONIC ns, as prof record stamps it)
 */
#include "prof/data.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 88172645463325252ULL;

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Stack number k: deterministic 16 functions out of 2000, shared root. */
static uint32_t stack_node(struct prof_profile *p, uint32_t mod, uint64_t k)
{
	uint32_t frames[16];
	uint64_t s = k * 0x9e3779b97f4a7c15ULL + 1;
	char name[32];

	for (int d = 0; d < 16; d++) {
		s = s * 6364136223846793005ULL + 1442695040888963407ULL;
		unsigned fn = d == 15 ? 0 : (unsigned)((s >> 33) % 2000);
		snprintf(name, sizeof(name), "fn%u", fn);
		struct prof_frame f = { .func = prof_intern(p, name), .module = mod,
					.file = prof_intern(p, "/src/app.c"), .line = 10 + fn,
					.addr = 0x1000 + fn * 0x40 };
		frames[d] = prof_frame_intern(p, &f);
	}
	return prof_node_from_stack(p, frames, 16);
}

static int generate(const char *path, uint64_t n, uint64_t nstacks)
{
	struct prof_profile p;
	struct prof_writer *w;
	uint64_t t = 1000000000ULL;
	int ret;

	prof_profile_init(&p);
	if ((ret = prof_writer_open(&w, path)))
		return 1;
	uint32_t mod = prof_module_intern(&p, "/usr/bin/app", "0123abcd", 0);
	prof_meta_set(&p, "event", "cpu-clock");
	prof_meta_set(&p, "frequency", "999");
	prof_meta_set(&p, "callgraph", "dwarf");
	prof_meta_set(&p, "command", "gen");
	p.period_ns = 1001001;
	p.start_ns = t;
	/* node ids of stacks seen so far, filled lazily */
	uint32_t *nodes = calloc(nstacks, sizeof(*nodes));
	for (uint64_t i = 0; i < n && !ret; i++) {
		uint64_t k = next_rand() % nstacks;
		if (!nodes[k])
			nodes[k] = stack_node(&p, mod, k);
		uint32_t th = prof_thread_intern(&p, 100, 100 + (uint32_t)(i % 4), "app");
		t += 1001001;
		prof_add(&p, th, nodes[k], PROF_M_SAMPLES, 1);
		ret = prof_writer_sample(w, t, th, nodes[k], PROF_M_SAMPLES, 1, 0);
		p.samples++;
		p.end_ns = t;
		if (!ret && (i + 1) % 10000 == 0)
			ret = prof_writer_flush(w, &p);
	}
	ret = ret ? (prof_writer_abort(w), ret) : prof_writer_close(w, &p);
	free(nodes);
	prof_profile_free(&p);
	return ret ? 1 : 0;
}

static int start_ns(const char *path)
{
	struct prof_profile p;
	struct prof_read_info info;

	prof_profile_init(&p);
	if (prof_data_read(path, &p, &info))
		return 1;
	printf("%llu\n", (unsigned long long)p.start_ns);
	prof_profile_free(&p);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--start-ns"))
		return start_ns(argv[2]);
	if (argc != 4) {
		fprintf(stderr, "usage: gen FILE N STACKS | gen --start-ns FILE\n");
		return 2;
	}
	return generate(argv[1], strtoull(argv[2], NULL, 10), strtoull(argv[3], NULL, 10) ?: 1);
}
