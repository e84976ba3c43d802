/*
 * alloc.c - `alloc MIB`: maps MIB mebibytes of anonymous memory and writes
 * one byte per page so all of it becomes resident.  Known truth for prof
 * stat: rss_peak_bytes ~ MIB MiB plus the small baseline of a C program.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 64, len = mib << 20;
	long page = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("alloc: mmap");
		return 1;
	}
	for (size_t off = 0; off < len; off += (size_t)page)
		p[off] = 1;
	return p[len - (size_t)page] == 1 ? 0 : 2;
}
