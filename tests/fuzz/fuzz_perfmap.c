/*
 * fuzz_perfmap.c - libFuzzer target for the /tmp/perf-PID.map reader
 * (prof_sym_table_parse_perf_map, src/symbol/tables.c): a JIT's map is written
 * by the profiled program, and inside a container by whatever runs there,
 * so any bytes may reach it.  The input is the map's text; after parsing,
 * the table must be sorted, every entry at least one byte long and named,
 * and a lookup of any entry's start must find an entry starting there.
 * Seeds: tests/fuzz/corpus/perfmap/ (V8 and JVM style lines, names with
 * spaces, lines that are not entries).
 */
#include "../../src/symbol/tables-priv.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sym_table t = { 0 };

	prof_sym_table_parse_perf_map(&t, (const char *)data, size);
	for (size_t i = 0; i < t.syms.n; i++) {
		const struct sym_entry *e = &t.syms.v[i], *found;
		if (i && t.syms.v[i - 1].start > e->start)
			abort();	/* not sorted */
		if (!e->size || !e->name || strlen(e->name) == (size_t)-1)
			abort();
		found = prof_sym_table_find(&t, e->start);
		if (!found || found->start != e->start)
			abort();	/* an entry its own start cannot find */
	}
	prof_sym_table_free(&t);
	return 0;
}
