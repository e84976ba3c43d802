/*
 * offsets.c - prints, for each function NAME of an ELF file, how far past
 * its entry prof puts the function's heap probe
 * (prof_uprobe_fast_offset): "NAME +BYTES".  Used by
 * scripts/check-uprobe-offsets.sh, which checks every such offset against
 * objdump.  Links build/libprof.a.
 *
 *   offsets FILE NAME...
 */
#include "prof/perf.h"
#include "prof/symbol.h"
#include <stdio.h>

int main(int argc, char **argv)
{
	for (int i = 2; i < argc; i++) {
		uint64_t off;
		if (prof_elf_symbol_offset(argv[1], argv[i], &off) < 0)
			continue;
		printf("%s +%llu\n", argv[i], (unsigned long long)(prof_uprobe_fast_offset(argv[1], off) - off));
	}
	return 0;
}
