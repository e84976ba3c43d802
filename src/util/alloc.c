/*
 * alloc.c - checked allocation and the one-line message helpers.
 * Out-of-memory aborts with a message (the only place prof dies below
 * src/cmd/): a profiler that cannot allocate a few bytes cannot recover
 * meaningfully, and checking every call would hide the real error paths.
 */
#include "prof/util.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *prof_cmd_name;
int prof_quiet;

static void vreport(const char *kind, const char *fmt, va_list ap)
{
	char line[4096];

	vsnprintf(line, sizeof(line), fmt, ap);
	/* Messages quote paths and names from data files: one line, and no
	 * control character (terminal escape) reaches the terminal. */
	for (char *c = line; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	if (prof_cmd_name)
		fprintf(stderr, "prof %s: %s%s\n", prof_cmd_name, kind, line);
	else
		fprintf(stderr, "prof: %s%s\n", kind, line);
}

int error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("error: ", fmt, ap);
	va_end(ap);
	return -EINVAL;
}

void warning(const char *fmt, ...)
{
	va_list ap;

	if (prof_quiet)
		return;
	va_start(ap, fmt);
	vreport("warning: ", fmt, ap);
	va_end(ap);
}

void info(const char *fmt, ...)
{
	va_list ap;

	if (prof_quiet)
		return;
	va_start(ap, fmt);
	vreport("", fmt, ap);
	va_end(ap);
}

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("fatal: ", fmt, ap);
	va_end(ap);
	exit(128);
}

static void *checked(void *p, size_t n)
{
	if (!p && n)
		die("out of memory allocating %zu bytes", n);
	return p;
}

void *xmalloc(size_t n) { return checked(malloc(n ? n : 1), n); }
void *xcalloc(size_t nmemb, size_t size) { return checked(calloc(nmemb ? nmemb : 1, size ? size : 1), nmemb * size); }
void *xrealloc(void *p, size_t n) { return checked(realloc(p, n ? n : 1), n); }
char *xstrdup(const char *s) { return checked(strdup(s), strlen(s) + 1); }
char *xstrndup(const char *s, size_t n) { return checked(strndup(s, n), n + 1); }

char *xasprintf(const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	sb_vaddf(&sb, fmt, ap);
	va_end(ap);
	return sb.buf ? sb.buf : xstrdup("");
}
