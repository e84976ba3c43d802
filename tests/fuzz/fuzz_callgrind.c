/*
 * fuzz_callgrind.c - libFuzzer target for the callgrind parser: any bytes
 * (plain text, gzip or zstd) must parse or be refused without a crash,
 * leak or sanitizer report, and the parsed parts must survive the text
 * and JSON renderers, the function identities of
 * every row (names through the demanglers of src/model/identity.c) and a
 * diff of the profile with itself.  Seeds:
 * tests/fuzz/corpus/callgrind/ (real profiles, one gzip, one zstd).
 */
#include "prof/callgrind.h"
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cg_profile p;
	static FILE *sink;

	if (!sink)
		sink = fopen("/dev/null", "w");
	prof_quiet = 1;
	cg_profile_init(&p, CG_KEEP_LINES);
	if (cg_parse_buffer(&p, (const char *)data, size, "fuzz") == 0) {
		/* the tree view is quadratic in rows x calls: only on small inputs */
		struct cg_annotate_opts o = { .threshold = 100, .tree = size < 16384 ? CG_TREE_BOTH : 0 };
		for (size_t i = 0; i < p.parts.n && i < 8; i++) {
			cg_annotate_text(sink, &p, p.parts.v[i], &o);
			struct prof_idset ids;
			prof_idset_init(&ids);
			free(cg_part_identities(&ids, &p, p.parts.v[i], i & 1));
			prof_idset_free(&ids);
		}
		cg_diff(sink, &p, &p, &(struct cg_diff_opts){ 0 });
		o.json = true;
		cg_annotate_json(sink, &p, p.parts.v, p.parts.n, &o);
	}
	cg_profile_free(&p);
	return 0;
}
