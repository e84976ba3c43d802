/*
 * fuzz_demangle.c - libFuzzer target for prof_sym_demangle: symbol names come
 * from the profiled binaries (and perf.data files), so any bytes may reach
 * the demangler.  The input, cut at its first NUL, is one name; every
 * third input is prefixed with a mangling prefix ("_Z", "_ZN", "_R") so the
 * fuzzer spends its time inside libiberty's parsers, not in the prefix
 * check.  Seeds: tests/fuzz/corpus/demangle/ (C++, Rust legacy and v0).
 */
#include "prof/symbol.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const prefixes[] = { "", "_Z", "_ZN", "_R" };
	const char *prefix = prefixes[size % 4 == 3 && size ? data[0] % 4 : 0];
	size_t plen = strlen(prefix);
	char *name = malloc(plen + size + 1);

	if (!name)
		return 0;
	memcpy(name, prefix, plen);
	memcpy(name + plen, data, size);
	name[plen + size] = '\0';
	char *out = prof_sym_demangle(name);
	if (out && strlen(out) == (size_t)-1)	/* touch every byte of the result */
		abort();
	free(out);
	free(name);
	return 0;
}
