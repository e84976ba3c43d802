/*
 * fuzz_perfdata.c - libFuzzer target for the perf.data parser: container,
 * features, pipe mode, zstd records, and the sample / sample_id decoders
 * run over every record, then the importer (address spaces, callchain
 * walk, dwarf unwind of fuzzed registers and stacks, symbolization).  Seeds: tests/fuzz/corpus/perfdata/ (real files
 * from perf 6.1).
 */
#include "prof/perfdata.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int quiet;
	struct perfdata_file f;

	if (!quiet) {
		prof_quiet = 1;
		quiet = 1;
	}
	if (perfdata_open(&f, data, size))
		return 0;
	for (size_t i = 0; i < f.records.n; i++) {
		const struct perfdata_record *r = &f.records.v[i];
		struct prof_perf_sample s;
		struct prof_perf_sample_id sid;
		volatile uint64_t sink = 0;

		if (r->type == PERF_RECORD_SAMPLE && perfdata_decode_sample(&f, r, &s, NULL) == 0) {
			for (uint64_t k = 0; k < s.nr_callchain; k++)
				sink += prof_perf_callchain(&s, k);
			for (uint64_t k = 0; k < s.stack_size; k++)
				sink += s.stack[k];
		} else {
			perfdata_decode_sample_id(&f, r, &sid);
		}
		(void)sink;
	}
	perfdata_close(&f);

	struct prof_profile p;
	prof_profile_init(&p);
	perfdata_read_mem(data, size, &p, NULL);
	prof_profile_free(&p);
	return 0;
}
