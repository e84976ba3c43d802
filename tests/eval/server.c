/*
 * server.c - a small request/response server with a planted change, for
 * the "production-like load" side of `prof crosscheck`
 * (scripts/codspeed-crosscheck.sh -s, tests/t6003-*.sh).
 *
 *   server serve PORTFILE          listen on 127.0.0.1 (any port, written to
 *                                  PORTFILE), answer requests until killed
 *   server load PORT RATE SECONDS  load generator: RATE x SECONDS requests
 *                                  (a fixed amount of work) on one
 *                                  connection at RATE per second, paced in
 *                                  10 ms ticks
 *   server bench N                 N requests in-process, one callgrind part
 *                                  "server.c::bench_requests" (CodSpeed style)
 *
 * A request is a line "GET <key>\n"; the reply a line.  Per request,
 * parse_request() reads the key, lookup() hashes it LOOKUP_ROUNDS times
 * (the hot part) and render_reply() formats the answer (steady work).
 * Build the head with -DLOOKUP_EXTRA=50 for 50% more work in lookup().
 * The load is a fixed number of requests at a fixed rate; a recording that
 * covers all of it holds a fixed amount of work, so absolute time per
 * function compares between runs.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#else
#define CALLGRIND_ZERO_STATS
#define CALLGRIND_START_INSTRUMENTATION
#define CALLGRIND_STOP_INSTRUMENTATION
#define CALLGRIND_DUMP_STATS_AT(uri) ((void)(uri))
#endif

#ifndef LOOKUP_EXTRA
#define LOOKUP_EXTRA 0			/* percent more work in lookup() */
#endif
#define LOOKUP_ROUNDS (60000 * (100 + LOOKUP_EXTRA) / 100)
#define RENDER_ROUNDS 30000
#define NOINLINE __attribute__((noinline))

static NOINLINE size_t parse_request(const char *line, char *key, size_t size)
{
	size_t n = 0;

	if (strncmp(line, "GET ", 4))
		return 0;
	for (line += 4; *line && *line != '\n' && n + 1 < size; line++)
		key[n++] = *line;
	key[n] = '\0';
	return n;
}

/* A serial hash chain: time is proportional to rounds. */
static NOINLINE uint64_t lookup(const char *key)
{
	uint64_t h = 1469598103934665603ull;

	for (unsigned r = 0; r < LOOKUP_ROUNDS; r++)
		h = (h ^ (unsigned char)key[r % 8]) * 1099511628211ull;
	return h;
}

static NOINLINE int render_reply(char *out, size_t size, const char *key, uint64_t value)
{
	uint64_t x = value;

	for (unsigned r = 0; r < RENDER_ROUNDS; r++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	return snprintf(out, size, "VALUE %s %llu\n", key, (unsigned long long)x);
}

static NOINLINE int handle_request(const char *line, char *reply, size_t size)
{
	char key[64];

	if (!parse_request(line, key, sizeof(key)))
		return snprintf(reply, size, "ERROR\n");
	return render_reply(reply, size, key, lookup(key));
}

static int serve(const char *portfile)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int ls = socket(AF_INET, SOCK_STREAM, 0);
	FILE *pf;

	if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof(a)) || listen(ls, 8) ||
	    getsockname(ls, (struct sockaddr *)&a, &len) || !(pf = fopen(portfile, "w")))
		return perror("server"), 1;
	fprintf(pf, "%d\n", ntohs(a.sin_port));
	fclose(pf);
	for (;;) {
		int c = accept(ls, NULL, NULL);
		FILE *in = c >= 0 ? fdopen(c, "r") : NULL;
		char line[128], reply[128];
		while (in && fgets(line, sizeof(line), in)) {
			int n = handle_request(line, reply, sizeof(reply));
			if (write(c, reply, (size_t)n) != n)
				break;
		}
		if (in)
			fclose(in);
	}
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int load(int port, double rate, double seconds)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int s = socket(AF_INET, SOCK_STREAM, 0);
	FILE *in;
	double start = now(), sent = 0, total = rate * seconds;
	char line[128];

	if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof(a)) || !(in = fdopen(dup(s), "r")))
		return perror("load"), 1;
	while (sent < total) {
		/* catch up to rate x elapsed, then sleep to the next 10 ms tick;
		 * a starved generator sends late, never fewer */
		for (; sent < total && sent < rate * (now() - start); sent++) {
			int n = snprintf(line, sizeof(line), "GET key%05d\n", (int)sent % 10000);
			if (write(s, line, (size_t)n) != n || !fgets(line, sizeof(line), in))
				return perror("load"), 1;
		}
		struct timespec tick = { 0, 10 * 1000 * 1000 };
		nanosleep(&tick, NULL);
	}
	printf("load: %.0f requests in %.1f s\n", sent, now() - start);
	return 0;
}

/* Inlined into main, and the request lines are made without stdio, so the
 * instrumented part holds only what the server runs too. */
static inline __attribute__((always_inline)) int bench(long n)
{
	char line[] = "GET key00000\n", reply[128];
	uint64_t sum = 0;

	CALLGRIND_ZERO_STATS;
	CALLGRIND_START_INSTRUMENTATION;
	for (long i = 0; i < n; i++) {
		for (long k = i % 10000, d = 11; d >= 7; d--, k /= 10)
			line[d] = (char)('0' + k % 10);
		sum += (uint64_t)handle_request(line, reply, sizeof(reply));
	}
	CALLGRIND_STOP_INSTRUMENTATION;
	CALLGRIND_DUMP_STATS_AT("server.c::bench_requests");
	printf("bench: %ld requests, %llu bytes\n", n, (unsigned long long)sum);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "serve"))
		return serve(argv[2]);
	if (argc == 5 && !strcmp(argv[1], "load"))
		return load(atoi(argv[2]), atof(argv[3]), atof(argv[4]));
	if (argc == 3 && !strcmp(argv[1], "bench"))
		return bench(atol(argv[2]));
	fprintf(stderr, "usage: server serve PORTFILE | load PORT RATE SECONDS | bench N\n");
	return 2;
}
