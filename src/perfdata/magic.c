/*
 * magic.c - recognizing a perf.data file by its first bytes, so `prof
 * report` can pick the perf.data importer over the prof.data reader.
 */
#include "prof/perfdata.h"
#include <string.h>

bool perfdata_is_perf_data(const void *buf, size_t len)
{
	return len >= 8 && (!memcmp(buf, "PERFILE2", 8) || !memcmp(buf, "2ELIFREP", 8));
}
