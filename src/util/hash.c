/*
 * hash.c - a u64->u64 open-addressing hash map and a string intern table.
 * These carry the hot dedup paths (stack trie children, address caches,
 * symbol names), so they avoid per-entry allocation: one flat array of
 * (key, value) slots, so a probe touches one cache line, linear probing,
 * load factor kept under 1/2.  A reserved key value (U64MAP_EMPTY) marks
 * free slots; an entry with that very key is kept outside the array.
 */
#include "prof/util.h"
#include <stdlib.h>
#include <string.h>

uint64_t hash64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

uint64_t hash_bytes(const void *p, size_t n)
{
	const unsigned char *s = p;
	uint64_t h = 0xcbf29ce484222325ULL;	/* FNV-1a */

	for (size_t i = 0; i < n; i++) {
		h ^= s[i];
		h *= 0x100000001b3ULL;
	}
	return hash64(h);
}

/* The table proper never holds U64MAP_EMPTY as a key: that key lives in
 * has_empty_key/empty_val.  Returns the slot holding key, or the free slot
 * where it would go. */
static inline __attribute__((always_inline)) struct u64map_entry *
probe(const struct u64map *m, uint64_t key)
{
	size_t mask = m->cap - 1, i = hash64(key) & mask;

	while (m->slots[i].key != key && m->slots[i].key != U64MAP_EMPTY)
		i = (i + 1) & mask;
	return &m->slots[i];
}

/* Out of line and cold, as is empty_key_slot(): the hit path of
 * u64map_slot() then makes no call and saves no registers. */
static __attribute__((noinline, cold)) void rehash(struct u64map *m, size_t cap)
{
	struct u64map_entry *old = m->slots;
	size_t old_cap = m->cap;

	m->slots = xmalloc(cap * sizeof(*m->slots));
	for (size_t i = 0; i < cap; i++)
		m->slots[i].key = U64MAP_EMPTY;
	m->cap = cap;
	for (size_t i = 0; i < old_cap; i++)
		if (old[i].key != U64MAP_EMPTY)
			*probe(m, old[i].key) = old[i];
	free(old);
}

/* probe() stops at key or at a free slot, so a slot with another key than
 * U64MAP_EMPTY is the key's own: hits pay no test for the reserved key. */
bool u64map_get(const struct u64map *m, uint64_t key, uint64_t *val)
{
	const uint64_t *v = NULL;

	if (m->cap) {
		const struct u64map_entry *e = probe(m, key);
		if (e->key != U64MAP_EMPTY)
			v = &e->val;
	}
	if (!v && key == U64MAP_EMPTY && m->has_empty_key)
		v = &m->empty_val;
	if (v && val)
		*val = *v;
	return v != NULL;
}

static __attribute__((noinline, cold)) uint64_t *empty_key_slot(struct u64map *m, bool *created)
{
	if (created)
		*created = !m->has_empty_key;
	if (!m->has_empty_key) {
		m->has_empty_key = true;
		m->empty_val = 0;
		m->n++;
	}
	return &m->empty_val;
}

uint64_t *u64map_slot(struct u64map *m, uint64_t key, bool *created)
{
	if ((m->n + 1) * 2 > m->cap)
		rehash(m, m->cap ? m->cap * 2 : 64);
	struct u64map_entry *e = probe(m, key);
	bool fresh = e->key == U64MAP_EMPTY;
	if (created)
		*created = fresh;
	if (fresh) {
		if (key == U64MAP_EMPTY)
			return empty_key_slot(m, created);
		e->key = key;
		e->val = 0;
		m->n++;
	}
	return &e->val;
}

void u64map_put(struct u64map *m, uint64_t key, uint64_t val)
{
	*u64map_slot(m, key, NULL) = val;
}

/* Is home (a key's first probe) cyclically outside (hole, j]?  Then the
 * entry at j may move back into the hole without leaving its chain. */
static bool may_fill(size_t home, size_t hole, size_t j)
{
	return hole <= j ? (home <= hole || home > j) : (home <= hole && home > j);
}

/* Backward-shift deletion: no tombstones, so probe() and the load factor
 * stay what they are for maps that only grow. */
bool u64map_del(struct u64map *m, uint64_t key)
{
	if (key == U64MAP_EMPTY) {
		if (!m->has_empty_key)
			return false;
		m->has_empty_key = false;
		m->n--;
		return true;
	}
	if (!m->cap)
		return false;
	struct u64map_entry *e = probe(m, key);
	if (e->key == U64MAP_EMPTY)
		return false;
	size_t mask = m->cap - 1, hole = (size_t)(e - m->slots);
	for (size_t j = (hole + 1) & mask; m->slots[j].key != U64MAP_EMPTY; j = (j + 1) & mask)
		if (may_fill(hash64(m->slots[j].key) & mask, hole, j)) {
			m->slots[hole] = m->slots[j];
			hole = j;
		}
	m->slots[hole].key = U64MAP_EMPTY;
	m->n--;
	return true;
}

bool u64map_next(const struct u64map *m, size_t *it, uint64_t *key, uint64_t *val)
{
	while (*it < m->cap) {
		const struct u64map_entry *e = &m->slots[(*it)++];
		if (e->key != U64MAP_EMPTY) {
			*key = e->key;
			*val = e->val;
			return true;
		}
	}
	if (*it == m->cap && m->has_empty_key) {
		(*it)++;	/* the side slot comes last */
		*key = U64MAP_EMPTY;
		*val = m->empty_val;
		return true;
	}
	return false;
}

void u64map_free(struct u64map *m)
{
	free(m->slots);
	memset(m, 0, sizeof(*m));
}

/*
 * Intern table: the map is keyed by the string's hash; collisions chain
 * through a probe on (hash + k), comparing the real strings.
 */
void strtab_init(struct strtab *t)
{
	memset(t, 0, sizeof(*t));
	strtab_intern(t, "");
}

uint32_t strtab_intern_n(struct strtab *t, const char *s, size_t n)
{
	uint64_t h = hash_bytes(s, n);

	for (uint64_t k = 0;; k++) {
		bool created;
		uint64_t *slot = u64map_slot(&t->index, h + k, &created);
		if (created) {
			*slot = t->strs.n;
			VEC_PUSH(&t->strs, xstrndup(s, n));
			return (uint32_t)*slot;
		}
		const char *have = t->strs.v[*slot];
		if (strlen(have) == n && !memcmp(have, s, n))
			return (uint32_t)*slot;
	}
}

uint32_t strtab_intern(struct strtab *t, const char *s)
{
	return strtab_intern_n(t, s ? s : "", s ? strlen(s) : 0);
}

void strtab_free(struct strtab *t)
{
	for (size_t i = 0; i < t->strs.n; i++)
		free(t->strs.v[i]);
	VEC_FREE(&t->strs);
	u64map_free(&t->index);
}
