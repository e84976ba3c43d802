/*
 * hash.c - a u64->u64 open-addressing hash map and a string intern table.
 * These carry the hot dedup paths (stack trie children, address caches,
 * symbol names), so they avoid per-entry allocation: three flat arrays,
 * linear probing, load factor kept under 1/2.
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

static size_t probe(const struct u64map *m, uint64_t key)
{
	size_t mask = m->cap - 1, i = hash64(key) & mask;

	while (m->used[i] && m->keys[i] != key)
		i = (i + 1) & mask;
	return i;
}

static void rehash(struct u64map *m, size_t cap)
{
	struct u64map old = *m;

	m->keys = xcalloc(cap, sizeof(*m->keys));
	m->vals = xcalloc(cap, sizeof(*m->vals));
	m->used = xcalloc(cap, 1);
	m->cap = cap;
	m->n = 0;
	for (size_t i = 0; i < old.cap; i++) {
		if (!old.used[i])
			continue;
		size_t j = probe(m, old.keys[i]);
		m->used[j] = 1;
		m->keys[j] = old.keys[i];
		m->vals[j] = old.vals[i];
		m->n++;
	}
	free(old.keys);
	free(old.vals);
	free(old.used);
}

bool u64map_get(const struct u64map *m, uint64_t key, uint64_t *val)
{
	if (!m->cap)
		return false;
	size_t i = probe(m, key);
	if (!m->used[i])
		return false;
	if (val)
		*val = m->vals[i];
	return true;
}

uint64_t *u64map_slot(struct u64map *m, uint64_t key, bool *created)
{
	if ((m->n + 1) * 2 > m->cap)
		rehash(m, m->cap ? m->cap * 2 : 64);
	size_t i = probe(m, key);
	if (created)
		*created = !m->used[i];
	if (!m->used[i]) {
		m->used[i] = 1;
		m->keys[i] = key;
		m->vals[i] = 0;
		m->n++;
	}
	return &m->vals[i];
}

void u64map_put(struct u64map *m, uint64_t key, uint64_t val)
{
	*u64map_slot(m, key, NULL) = val;
}

void u64map_free(struct u64map *m)
{
	free(m->keys);
	free(m->vals);
	free(m->used);
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
