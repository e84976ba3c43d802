/*
 * options.c - small helpers for subcommand option parsing shared by every
 * src/cmd/ file.  Lives in the library (not in main) so that the fuzz
 * targets, which link the command objects without prof.c, resolve it too.
 */
#include "prof/cmd.h"
#include <string.h>

int wants_help(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			return 0;
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return 1;
	}
	return 0;
}
