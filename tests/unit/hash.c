/*
 * hash.c - unit tests for the u64map (src/util/hash.c): any u64 is a key,
 * including 0 and the reserved empty-slot value U64MAP_EMPTY (kept beside
 * the table), entries survive growth, and u64map_next visits each entry
 * exactly once; u64map_del removes one key and no other, however the
 * probe chains run.  The map is checked against a plain array of expected
 * (key, value) pairs, so a lost, duplicated or stale entry fails.
 */
#include "tap.h"
#include "prof/util.h"
#include <stdlib.h>

#define NKEYS 5000
#define BUMP (10 * NKEYS)	/* added to one value through its slot */

/* Keys of every shape the callers use: small ints, pointers-ish, packed
 * (parent << 32 | frame) pairs, hash values, and the two special ones. */
static uint64_t key_at(size_t i)
{
	if (i == 0)
		return 0;
	if (i == 1)
		return U64MAP_EMPTY;
	if (i == 2)
		return UINT64_MAX;
	if (i % 3 == 0)
		return i;
	if (i % 3 == 1)
		return ((uint64_t)i << 32) | (i * 7);
	return hash64(i);
}

static void test_special_keys(void)
{
	struct u64map m = { 0 };
	uint64_t v = 123;
	bool created;

	ok(!u64map_get(&m, 0, &v) && v == 123, "empty map: key 0 absent, val untouched");
	ok(!u64map_get(&m, U64MAP_EMPTY, NULL), "empty map: sentinel key absent");
	*u64map_slot(&m, U64MAP_EMPTY, &created) = 42;
	ok(created, "sentinel key: created");
	ok(u64map_get(&m, U64MAP_EMPTY, &v) && v == 42, "sentinel key: value kept");
	ok(!u64map_get(&m, 0, NULL), "sentinel key does not make key 0 present");
	u64map_put(&m, 0, 7);
	ok(u64map_get(&m, 0, &v) && v == 7, "key 0: value kept");
	u64map_slot(&m, U64MAP_EMPTY, &created);
	ok(!created, "sentinel key: found again, not re-created");
	is_u64(m.n, 2, "n counts the side entry");
	u64map_free(&m);
	ok(!u64map_get(&m, U64MAP_EMPTY, NULL) && m.n == 0, "free forgets the side entry");
}

static void test_growth(struct u64map *m)
{
	for (size_t i = 0; i < NKEYS; i++)
		u64map_put(m, key_at(i), i + 1);
	is_u64(m->n, NKEYS, "n after inserting distinct keys");
	size_t bad = 0;
	for (size_t i = 0; i < NKEYS; i++) {
		uint64_t v = 0;
		if (!u64map_get(m, key_at(i), &v) || v != i + 1)
			bad++;
	}
	is_u64(bad, 0, "every key maps to its value after growth");
	ok(!u64map_get(m, 1, NULL) && !u64map_get(m, hash64(NKEYS + 1), NULL),
	   "absent keys stay absent");
	bool created = true;
	*u64map_slot(m, key_at(1234), &created) += BUMP;
	ok(!created, "slot of an existing key is found, not created");
	is_u64(m->n, NKEYS, "n unchanged by finding");
}

static void test_iteration(struct u64map *m)
{
	char *seen = calloc(NKEYS, 1);
	size_t it = 0, visits = 0, bad = 0;
	uint64_t k, v;

	while (u64map_next(m, &it, &k, &v)) {
		visits++;
		size_t i = (size_t)(v > BUMP ? v - BUMP : v) - 1;
		if (i >= NKEYS || key_at(i) != k || seen[i]++)
			bad++;
	}
	is_u64(visits, NKEYS, "iteration visits n entries (side entry included)");
	is_u64(bad, 0, "each visited entry is a distinct inserted (key, value)");
	ok(!u64map_next(m, &it, &k, &v), "a finished iterator stays finished");
	free(seen);

	struct u64map empty = { 0 };
	it = 0;
	ok(!u64map_next(&empty, &it, &k, &v), "an empty map has nothing to visit");
}

/* Deletes every other key (both special ones among them), then checks
 * that exactly the rest is found, that deleted keys can come back, and
 * that deleting an absent key changes nothing. */
static void test_delete(struct u64map *m)
{
	size_t bad = 0, gone = 0;

	for (size_t i = 0; i < NKEYS; i += 2)
		gone += u64map_del(m, key_at(i));
	gone += u64map_del(m, key_at(1));	/* U64MAP_EMPTY */
	is_u64(gone, NKEYS / 2 + 1, "every present key is deleted once");
	ok(!u64map_del(m, key_at(0)) && !u64map_del(m, hash64(NKEYS + 1)), "absent keys: nothing deleted");
	is_u64(m->n, NKEYS - NKEYS / 2 - 1, "n counts what is left");
	for (size_t i = 0; i < NKEYS; i++) {
		bool want = i % 2 && i != 1;
		if (u64map_get(m, key_at(i), NULL) != want)
			bad++;
	}
	is_u64(bad, 0, "exactly the kept keys are found after deletion");
	for (size_t i = 0; i < NKEYS; i += 2)
		u64map_put(m, key_at(i), i + 1);
	u64map_put(m, key_at(1), 2);
	is_u64(m->n, NKEYS, "deleted keys come back");
	bad = 0;
	for (size_t i = 0; i < NKEYS; i++) {
		uint64_t v = 0;
		if (!u64map_get(m, key_at(i), &v) || (v != i + 1 && v != i + 1 + BUMP))
			bad++;
	}
	is_u64(bad, 0, "every key maps to its value again");
}

int main(void)
{
	struct u64map m = { 0 };

	test_special_keys();
	test_growth(&m);
	test_iteration(&m);
	test_delete(&m);
	u64map_free(&m);
	done_testing();
}
