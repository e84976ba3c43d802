/*
 * profgen.h - synthetic profiles for the data and output unit tests
 * (header-only).  gen_recording() plays a recorder: it grows a model
 * sample by sample (new frames, stacks and threads appear over time, a
 * thread renames itself, a meta value changes) and feeds a prof_writer
 * with periodic flushes, so the file exercises incremental definitions.
 * Deterministic (fixed-seed xorshift), no timing, no kernel.
 */
#ifndef PROF_TEST_PROFGEN_H
#define PROF_TEST_PROFGEN_H
#include "prof/data.h"
#include <stdio.h>

#define GEN_PERIOD_NS 1001001ULL

static uint64_t gen_rng = 88172645463325252ULL;
static inline uint64_t gen_rand(void)
{
	gen_rng ^= gen_rng << 13;
	gen_rng ^= gen_rng >> 7;
	gen_rng ^= gen_rng << 17;
	return gen_rng;
}

/* Frame for function number i: a handful of kernel, inlined and libc ones. */
static inline uint32_t gen_frame(struct prof_profile *p, unsigned i, uint32_t mods[3])
{
	char name[64];
	struct prof_frame f = { 0 };

	if (i % 17 == 0) {
		snprintf(name, sizeof(name), "k_func%u", i);
		f.kind = PROF_FRAME_KERNEL;
		f.module = mods[2];
	} else {
		snprintf(name, sizeof(name), "%s%u", i % 5 == 0 ? "libc_fn" : "fn", i);
		f.module = i % 5 == 0 ? mods[1] : mods[0];
		f.file = prof_intern(p, "/src/app.c");
		f.line = 10 + i;
		f.inlined = i % 7 == 0;
	}
	f.func = prof_intern(p, name);
	f.addr = 0x1000 + i * 0x40;
	return prof_frame_intern(p, &f);
}

/*
 * Records nsamples CPU samples (each with its PROF_M_CPU_NS companion when
 * with_cpu_ns) to path, flushing every flush_every samples.  p receives
 * the live model exactly as a recorder would keep it.  0 or -errno.
 */
static inline int gen_recording(const char *path, struct prof_profile *p, size_t nsamples,
				size_t flush_every, bool with_cpu_ns)
{
	struct prof_writer *w;
	uint32_t mods[3], frames[16];
	uint64_t t = 1000000000ULL;
	int ret = prof_writer_open(&w, path);

	if (ret)
		return ret;
	if ((ret = prof_writer_commit(w)) < 0) {	/* as the recorder does once started */
		prof_writer_abort(w);
		return ret;
	}
	mods[0] = prof_module_intern(p, "/usr/bin/app", "0123abcd", 0);
	mods[1] = prof_module_intern(p, "/lib/x86_64-linux-gnu/libc.so.6", "", 0);
	mods[2] = prof_module_intern(p, "[kernel.kallsyms]", "", PROF_MOD_KERNEL);
	prof_meta_set(p, "event", "cpu-clock");
	prof_meta_set(p, "frequency", "999");
	prof_meta_set(p, "callgraph", "dwarf");
	prof_meta_set(p, "unwinder", "libdw");
	prof_meta_set(p, "command", "./app --x");
	p->period_ns = GEN_PERIOD_NS;
	p->start_ns = t;
	for (size_t i = 0; i < nsamples && !ret; i++) {
		unsigned tid = 100 + (unsigned)(gen_rand() % 4);
		uint32_t th = prof_thread_intern(p, 100, tid, NULL);
		if (!p->threads.v[th].comm)	/* named once; renamed below */
			prof_thread_intern(p, 100, tid, tid == 100 ? "app" : "worker");
		if (i == nsamples / 2) {
			prof_thread_intern(p, 100, 101, "renamed");
			prof_meta_set(p, "frequency", "1000");
		}
		/* Stack number k of a pool that grows over time, skewed to low
		 * k as real hot paths are; stacks share the prefix main->run. */
		uint64_t r = gen_rand() % 1000, pool = 10 + MIN(i / 4, 2000);
		uint64_t k = (r * r / 1000) * pool / 1000, st = k * 2654435761u + 1;
		size_t depth = 3 + k % 10;
		frames[depth - 1] = gen_frame(p, 1, mods);
		frames[depth - 2] = gen_frame(p, 2, mods);
		for (size_t d = 0; d + 2 < depth; d++) {
			st = st * 6364136223846793005ULL + 1442695040888963407ULL;
			frames[d] = gen_frame(p, 3 + (unsigned)((st >> 33) % 300), mods);
		}
		uint32_t node = prof_node_from_stack(p, frames, depth);
		unsigned flags = gen_rand() % 50 == 0 ? PROF_SAMPLE_TRUNCATED : 0;
		t += 900000 + gen_rand() % 200000;
		prof_add(p, th, node, PROF_M_SAMPLES, 1);
		ret = prof_writer_sample(w, t, th, node, PROF_M_SAMPLES, 1, flags);
		if (with_cpu_ns && !ret) {
			prof_add(p, th, node, PROF_M_CPU_NS, GEN_PERIOD_NS);
			ret = prof_writer_sample(w, t, th, node, PROF_M_CPU_NS, GEN_PERIOD_NS, flags);
		}
		if (i % 10 == 3 && !ret) {	/* an off-CPU interval */
			uint64_t ns = 5000 + gen_rand() % 1000000;
			prof_add(p, th, node, PROF_M_OFFCPU_NS, ns);
			prof_add(p, th, node, PROF_M_SLEEP_NS, ns);
			ret = prof_writer_sample(w, t, th, node, PROF_M_OFFCPU_NS, ns, 0);
			if (!ret)
				ret = prof_writer_sample(w, t, th, node, PROF_M_SLEEP_NS, ns, 0);
		}
		p->samples++;
		p->samples_truncated += flags != 0;
		p->end_ns = t;
		if (!ret && (i + 1) % flush_every == 0)
			ret = prof_writer_flush(w, p);
	}
	if (ret) {
		prof_writer_abort(w);
		return ret;
	}
	return prof_writer_close(w, p);
}

#endif
