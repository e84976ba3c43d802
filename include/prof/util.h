/*
 * util.h - small building blocks every subsystem uses: checked allocation,
 * growable vectors, a string buffer, a u64->u64 hash map, a string intern
 * table, LEB128 varints and the one-line error/warning reporters.
 *
 * Conventions (see docs/hacking.md, "Code conventions"): functions below src/cmd/
 * return 0 or a negative errno (or NULL) and never exit; they may call
 * error()/warning() to say *what* failed.  Allocation failure is the one
 * exception: x*alloc() abort with a message, as git does, because every
 * caller would otherwise need an unreachable error path.
 */
#ifndef PROF_UTIL_H
#define PROF_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <stdarg.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>

#define PROF_VERSION "0.1.0"
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define PROF_NONE UINT32_MAX
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define PRINTF_LIKE(f, a) __attribute__((format(printf, f, a)))

/* --- messages: "prof: error: ..." on stderr, one line ------------------- */
extern const char *prof_cmd_name;	/* set by main(): "record", "report"... */
/* error() returns -EINVAL, so `return error(...)` keeps the 0/-errno
 * convention for bad input; other failures return their own -errno. */
int error(const char *fmt, ...) PRINTF_LIKE(1, 2);
void warning(const char *fmt, ...) PRINTF_LIKE(1, 2);
void info(const char *fmt, ...) PRINTF_LIKE(1, 2);	/* plain "prof: ..." */
extern int prof_quiet;				/* suppress warning()/info() */

/* --- allocation ---------------------------------------------------------- */
void *xmalloc(size_t n);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) PRINTF_LIKE(1, 2);

/* --- vectors: VEC(int) v = {0}; VEC_PUSH(&v, 3); free(v.v); --------------- */
#define VEC(T) struct { T *v; size_t n, cap; }
#define VEC_GROW(vec, want)                                                  \
	do {                                                                 \
		if ((want) > (vec)->cap) {                                   \
			size_t c_ = (vec)->cap ? (vec)->cap * 2 : 16;        \
			while (c_ < (want)) c_ *= 2;                         \
			(vec)->v = xrealloc((vec)->v, c_ * sizeof(*(vec)->v)); \
			(vec)->cap = c_;                                     \
		}                                                            \
	} while (0)
#define VEC_PUSH(vec, item)                                                  \
	do {                                                                 \
		VEC_GROW(vec, (vec)->n + 1);                                 \
		(vec)->v[(vec)->n++] = (item);                               \
	} while (0)
#define VEC_FREE(vec) do { free((vec)->v); (vec)->v = NULL; (vec)->n = (vec)->cap = 0; } while (0)

/* --- strbuf: always NUL-terminated ---------------------------------------- */
struct strbuf { char *buf; size_t len, cap; };
#define STRBUF_INIT { NULL, 0, 0 }
void sb_grow(struct strbuf *sb, size_t extra);
void sb_add(struct strbuf *sb, const void *data, size_t len);
void sb_adds(struct strbuf *sb, const char *s);
void sb_addch(struct strbuf *sb, char c);
void sb_addf(struct strbuf *sb, const char *fmt, ...) PRINTF_LIKE(2, 3);
void sb_vaddf(struct strbuf *sb, const char *fmt, va_list ap);
void sb_reset(struct strbuf *sb);
void sb_release(struct strbuf *sb);
const char *sb_str(struct strbuf *sb);	/* "" for an empty buffer */

/* --- u64 -> u64 hash map (open addressing, any key allowed) ---------------- */
/* A slot holds key and value side by side (one cache line per probe); a
 * slot whose key is U64MAP_EMPTY is free, and that one key value itself is
 * kept beside the table (has_empty_key, empty_val).  n counts all entries. */
#define U64MAP_EMPTY 0x9e3779b97f4a7c15ULL
struct u64map_entry { uint64_t key, val; };
struct u64map {
	struct u64map_entry *slots;
	size_t n, cap;
	bool has_empty_key;
	uint64_t empty_val;
};
bool u64map_get(const struct u64map *m, uint64_t key, uint64_t *val);
void u64map_put(struct u64map *m, uint64_t key, uint64_t val);
uint64_t *u64map_slot(struct u64map *m, uint64_t key, bool *created); /* insert-or-find */
/* Removes key; false when it was absent. */
bool u64map_del(struct u64map *m, uint64_t key);
void u64map_free(struct u64map *m);
/* Visits every entry once, in no particular order; no inserts meanwhile:
 *   size_t it = 0; uint64_t k, v; while (u64map_next(m, &it, &k, &v)) ... */
bool u64map_next(const struct u64map *m, size_t *it, uint64_t *key, uint64_t *val);
uint64_t hash64(uint64_t x);
uint64_t hash_bytes(const void *p, size_t n);

/* --- string intern table: equal strings get equal ids; id 0 is "" --------- */
struct strtab { VEC(char *) strs; struct u64map index; };
void strtab_init(struct strtab *t);
uint32_t strtab_intern(struct strtab *t, const char *s);
uint32_t strtab_intern_n(struct strtab *t, const char *s, size_t n);
static inline const char *strtab_get(const struct strtab *t, uint32_t id)
{
	return id < t->strs.n ? t->strs.v[id] : "";
}
void strtab_free(struct strtab *t);

/* --- varints (unsigned LEB128) and zig-zag for signed deltas ------------- */
size_t varint_put(uint8_t *out, uint64_t v);		/* out needs 10 bytes */
/* Returns bytes consumed, 0 if the input ends early or is over-long. */
size_t varint_get(const uint8_t *p, size_t avail, uint64_t *v);
static inline uint64_t zigzag(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
static inline int64_t unzigzag(uint64_t v) { return (int64_t)(v >> 1) ^ -(int64_t)(v & 1); }

/* --- misc ----------------------------------------------------------------- */
uint64_t now_ns(void);				/* CLOCK_MONOTONIC */
int parse_u64(const char *s, uint64_t *out);	/* 0 or -EINVAL; accepts k/m/g */
/* A CPU list as perf and taskset take it ("0,2-3"): distinct CPUs in the
 * order given, *cpus malloc'ed.  0 or -EINVAL (empty, bad or above 4095). */
int parse_cpu_list(const char *s, int **cpus, size_t *n);
bool stderr_is_tty(void);
/* Write all of buf, retrying on EINTR/short writes: 0 or -errno. */
int write_all(int fd, const void *buf, size_t len);
/* Read a whole file (small /proc files, sources): NUL-terminated, NULL+errno on failure. */
char *read_file(const char *path, size_t *len);
/*
 * Files written for the user (src/util/outfile.c): under a temporary name
 * beside the path, renamed over it only once complete, so a failed or
 * interrupted write leaves the old file whole.  A symlink at the path is
 * refused (ELOOP); /dev/ paths and existing non-regular files are
 * written in place.
 *
 * out_open: path NULL or "-" is stdout.  0, or -errno after an error
 * line.  out_commit closes (flushes stdout) and renames into place: 0, or
 * -EIO after an error line naming the path.  out_discard drops what was
 * written and leaves the path as it was.
 */
struct out_file {
	FILE *f;
	char *path, *tmp;	/* tmp: NULL when written in place */
};
int out_open(struct out_file *o, const char *path);
int out_commit(struct out_file *o);
void out_discard(struct out_file *o);
/* Where a new file at path goes: OUT_BESIDE (a temporary file renamed
 * over it), OUT_IN_PLACE (a device or FIFO), or -ELOOP/-EISDIR/-errno. */
enum { OUT_BESIDE = 1, OUT_IN_PLACE = 2 };
int out_place(const char *path);
/* Creates "DIR/.NAME.XXXXXX" for path "DIR/NAME" (O_EXCL, mode 0666 less
 * the umask): its fd with *tmp set (free it), or -errno. */
int temp_beside(const char *path, char **tmp);
/* Ends a file written through fd to tmp (a mkstemp name next to path):
 * closes fd, then renames tmp over path if ret is 0 so that readers never
 * see half a file, else removes tmp.  Returns ret or the first -errno. */
int finish_temp_file(int fd, const char *tmp, const char *path, int ret);
/* pthread_create for prof's helper threads (ring pump, resource sampler):
 * the thread blocks every signal, so Ctrl-C, SIGTERM and SIGCHLD always
 * reach the main thread and interrupt its poll.  0 or an errno value. */
int thread_start_nosignals(pthread_t *t, void *(*fn)(void *), void *arg);

/* --- progress on stderr, on a terminal only (progress.c) ---------------- */
struct progress {
	const char *what;
	uint64_t start_ns, last_ns;
	bool enabled, shown, count;	/* count: "run 3 of 10", else a percentage */
};
void progress_start(struct progress *p, const char *what, bool count);
void progress_update(struct progress *p, uint64_t done, uint64_t total);
void progress_done(struct progress *p);	/* erases the line */

/* --- the launcher (spawn.c): a child held before exec ------------------- */
struct spawn {
	pid_t pid;
	int go_fd;		/* a byte here lets the child exec */
	int err_fd;		/* errno of a failed exec, EOF on success */
};
/* Forks a child that waits before execvp(argv); stdout_fd/stderr_fd (-1:
 * inherit) become its 1 and 2.  0 or -errno. */
int spawn_held(struct spawn *s, char **argv, int stdout_fd, int stderr_fd);
/* Lets it exec: 0, or -errno of a failed exec (the child then exits
 * 127/126 and must still be reaped). */
int spawn_release(struct spawn *s);
/* Gives up before exec: the child exits 127 unrun and is reaped. */
void spawn_abort(struct spawn *s);
/* A wait status as a shell exit status: the code, or 128 + signal. */
int spawn_exit_status(int wait_status);
/* Keeps this process's mappings of file `name` (as /proc/self/maps names
 * it) out of the children it forks (MADV_DONTFORK): a held child's pages
 * count in the command's peak RSS until its exec, and the kernel's ring
 * buffers (BPF's, mapped page by page) would be copied into it. */
void spawn_keep_mappings(const char *name);

/* Escaping of untrusted names for every output format (src/util/escape.c;
 * never emit a raw symbol name).
 * json_escape appends a complete "quoted" JSON string (<, >, & as \u00XX,
 * invalid UTF-8 as \ufffd); xml_escape appends text safe inside XML/HTML
 * elements and attribute values (no quotes added). */
void json_escape(struct strbuf *sb, const char *s);
/* A JSON number with 10 significant digits; null for inf and nan. */
void json_number(struct strbuf *sb, double v);
void xml_escape(struct strbuf *sb, const char *s);
/* Appends s with bytes that would break a line-based format replaced. */
void add_printable(struct strbuf *sb, const char *s, const char *also_bad, char repl);

#endif
