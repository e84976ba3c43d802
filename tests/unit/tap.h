/*
 * tap.h - a minimal TAP producer for C unit tests (header-only).
 * ok(cond, fmt...), is_u64(got, want, name), is_str(...), done_testing().
 * Each test binary is run by prove directly (see Makefile `check`).
 */
#ifndef PROF_TAP_H
#define PROF_TAP_H
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int tap_n, tap_failed;

static inline int ok(int cond, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", cond ? "" : "not ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!cond)
		tap_failed++;
	fflush(stdout);
	return cond;
}

#define is_u64(got, want, ...)                                                       \
	do {                                                                         \
		uint64_t g_ = (uint64_t)(got), w_ = (uint64_t)(want);                \
		if (!ok(g_ == w_, __VA_ARGS__))                                      \
			printf("#   got %" PRIu64 ", want %" PRIu64 "\n", g_, w_);   \
	} while (0)

#define is_str(got, want, ...)                                                       \
	do {                                                                         \
		const char *g_ = (got), *w_ = (want);                                \
		if (!ok(g_ && w_ && !strcmp(g_, w_), __VA_ARGS__))                   \
			printf("#   got '%s', want '%s'\n", g_ ? g_ : "(null)", w_); \
	} while (0)

static inline int done_testing(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}
#endif
