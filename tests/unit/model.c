/*
 * model.c - unit tests for the profile model and util tables: interning is
 * deduplicating and stable, the stack trie shares prefixes, aggregation sums.
 */
#include "tap.h"
#include "prof/model.h"
#include <stdlib.h>

static void test_strtab(void)
{
	struct strtab t;
	char buf[32];

	strtab_init(&t);
	is_u64(strtab_intern(&t, ""), 0, "empty string is id 0");
	uint32_t a = strtab_intern(&t, "main"), b = strtab_intern(&t, "main");
	is_u64(a, b, "same string, same id");
	for (int i = 0; i < 5000; i++) {
		snprintf(buf, sizeof(buf), "f%d", i);
		strtab_intern(&t, buf);
	}
	is_str(strtab_get(&t, strtab_intern(&t, "f4999")), "f4999", "lookup after growth");
	is_u64(t.strs.n, 5002, "5000 distinct + '' + main");
	strtab_free(&t);
}

static void test_trie_and_aggs(void)
{
	struct prof_profile p;

	prof_profile_init(&p);
	uint32_t mod = prof_module_intern(&p, "/bin/x", "abcd", 0);
	is_u64(prof_module_intern(&p, "/bin/x", "abcd", 0), mod, "module dedup");
	struct prof_frame f = { .func = prof_intern(&p, "main"), .module = mod };
	uint32_t fmain = prof_frame_intern(&p, &f);
	f.func = prof_intern(&p, "work");
	uint32_t fwork = prof_frame_intern(&p, &f);
	f.inlined = 1;
	uint32_t fwork_inl = prof_frame_intern(&p, &f);
	ok(fwork != fwork_inl, "inlined flag distinguishes frames");
	is_u64(prof_frame_intern(&p, &f), fwork_inl, "frame dedup");

	uint32_t s1[] = { fwork, fmain }, s2[] = { fwork_inl, fmain };
	uint32_t n1 = prof_node_from_stack(&p, s1, 2), n2 = prof_node_from_stack(&p, s2, 2);
	is_u64(p.nodes.v[n1].parent, p.nodes.v[n2].parent, "shared prefix shares the node");
	is_u64(prof_node_depth(&p, n1), 2, "depth");
	is_u64(prof_node_from_stack(&p, s1, 2), n1, "same stack same leaf");

	uint32_t t = prof_thread_intern(&p, 10, 11, "worker");
	prof_add(&p, t, n1, PROF_M_SAMPLES, 3);
	prof_add(&p, t, n1, PROF_M_SAMPLES, 2);
	prof_add(&p, t, n2, PROF_M_IOWAIT_NS, 1000);
	is_u64(p.aggs.n, 2, "two (thread, node) aggregates");
	is_u64(prof_total(&p, PROF_M_SAMPLES), 5, "samples summed");
	is_str(prof_str(&p, p.threads.v[prof_thread_intern(&p, 10, 11, NULL)].comm), "worker",
	       "NULL comm keeps the old one");
	uint32_t t2 = prof_thread_add(&p, 10, 11, "split");
	ok(t2 != t, "exec gives the same tid a new identity");
	is_u64(prof_thread_intern(&p, 10, 11, NULL), t2, "later lookups find the new identity");
	is_str(prof_str(&p, p.threads.v[t].comm), "worker", "the old identity keeps its comm");
	prof_meta_set(&p, "event", "cpu-clock");
	prof_meta_set(&p, "event", "task-clock");
	is_str(prof_meta_get(&p, "event"), "task-clock", "meta overwrite");
	ok(prof_meta_get(&p, "nope") == NULL, "missing meta is NULL");
	prof_profile_free(&p);
}

static void test_varint(void)
{
	uint8_t buf[10];
	uint64_t v, vals[] = { 0, 1, 127, 128, 300, UINT64_MAX };

	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		size_t n = varint_put(buf, vals[i]);
		ok(varint_get(buf, n, &v) == n && v == vals[i], "varint round trip %zu", i);
		ok(varint_get(buf, n - 1, &v) == 0 || n == 1, "short input rejected %zu", i);
	}
	is_u64(unzigzag(zigzag(-5)), (uint64_t)-5, "zigzag");
}

int main(void)
{
	test_strtab();
	test_trie_and_aggs();
	test_varint();
	return done_testing();
}
