/*
 * ksyms.c - unit tests of the kallsyms table and its cache file
 * (src/symbol/ksyms.c): parsing kallsyms text (types kept, aliases, module
 * suffixes, unsorted input, malformed lines, hidden addresses), lookups,
 * the cache round trip, keys that do not match (other boot, other
 * modules), and hostile cache files: every truncation and a corrupted byte
 * at every offset must be either rejected or still give in-bounds answers;
 * specific lies (name offset past the pool, unsorted starts, no final NUL,
 * huge counts) must be rejected.  Writing never follows a planted symlink
 * and an unwritable place is an error code, not a crash.
 */
#include "tap.h"
#include "../../src/symbol/ksyms-priv.h"
#include "prof/util.h"
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64];

static char *tmp_path(const char *name)
{
	return xasprintf("%s/%s", dir, name);
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
}

static const char sample_text[] =
	"ffffffff81000000 T _stext\n"
	"ffffffff81000100 t early_fn\n"
	"ffffffff81000100 T early_alias\n"	/* alias: the later line wins */
	"ffffffff81000200 D some_data\n"		/* not text: dropped */
	"ffffffff81000300 W weak_fn\n"
	"garbage line\n"
	"ffffffffc0001000 t mod_fn\t[e1000]\n"
	"ffffffff81000280 t out_of_order\n"
	"ffffffff81000400 T\n";			/* no name */

static const struct ksym_key key_a = { "11111111-2222-3333-4444-555555555555", 42 };

static const char *find(const struct ksym_table *t, uint64_t addr, uint64_t *start)
{
	*start = 0;
	return prof_ksym_find(t, addr, start);
}

static void check_sample_lookups(const struct ksym_table *t, const char *what)
{
	uint64_t start;

	is_u64(t->n, 6, "%s: six text symbols", what);
	is_str(find(t, 0xffffffff81000010, &start), "_stext", "%s: first symbol", what);
	is_str(find(t, 0xffffffff81000150, &start), "early_alias", "%s: alias, later line wins", what);
	is_u64(start, 0xffffffff81000100, "%s: start of the alias", what);
	is_str(find(t, 0xffffffff81000210, &start), "early_alias", "%s: data symbols do not end text",
	       what);
	is_str(find(t, 0xffffffff81000290, &start), "out_of_order", "%s: unsorted input sorted", what);
	is_str(find(t, 0xffffffff81000301, &start), "weak_fn", "%s: W kept", what);
	is_str(find(t, 0xffffffffc0001010, &start), "mod_fn", "%s: module suffix cut", what);
	ok(find(t, 0xffffffffc0002000, &start) == NULL, "%s: past the last symbol's 4 KiB", what);
	ok(find(t, 0x1000, &start) == NULL, "%s: below the first symbol", what);
}

static void test_text(void)
{
	struct ksym_table t;
	bool all_zero;
	char *path = tmp_path("kallsyms.txt");

	write_text(path, sample_text);
	is_u64(prof_ksym_load_text(&t, path, &all_zero), 0, "text parsed");
	ok(!all_zero, "real addresses seen");
	check_sample_lookups(&t, "text");
	prof_ksym_free(&t);

	write_text(path, "0000000000000000 T a\n0000000000000000 t b\n");
	prof_ksym_load_text(&t, path, &all_zero);
	ok(all_zero, "kptr_restrict zeros detected");
	prof_ksym_free(&t);
	ok(prof_ksym_load_text(&t, "/nonexistent/kallsyms", &all_zero) == -ENOENT, "missing file: -ENOENT");
	free(path);
}

/* A valid cache of sample_text for key_a at path; its bytes in *img. */
static void make_cache(const char *path, uint8_t **img, size_t *len)
{
	struct ksym_table t;
	bool all_zero;
	char *txt = tmp_path("kallsyms.txt");

	write_text(txt, sample_text);
	prof_ksym_load_text(&t, txt, &all_zero);
	prof_ksym_cache_store(&t, path, &key_a);
	prof_ksym_free(&t);
	*img = (uint8_t *)read_file(path, len);
	free(txt);
}

static void test_round_trip(void)
{
	struct ksym_table t;
	struct stat st;
	char *path = tmp_path("sub/dir/kallsyms");
	uint8_t *img;
	size_t len;

	make_cache(path, &img, &len);
	ok(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600, "cache written, mode 0600, dirs made");
	is_u64(prof_ksym_cache_load(&t, path, &key_a), 0, "cache loads for its key");
	ok(t.mapped, "cache is mapped");
	check_sample_lookups(&t, "cache");
	prof_ksym_free(&t);

	struct ksym_key other = key_a;
	other.boot_id[0] = '9';
	ok(prof_ksym_cache_load(&t, path, &other) < 0, "another boot's cache is ignored");
	other = key_a;
	other.modules_hash++;
	ok(prof_ksym_cache_load(&t, path, &other) < 0, "cache from other modules is ignored");
	ok(prof_ksym_cache_load(&t, "/nonexistent/x", &key_a) < 0, "missing cache: error");
	free(img);
	free(path);
}

static void write_bytes(const char *path, const uint8_t *b, size_t n)
{
	FILE *f = fopen(path, "w");
	fwrite(b, 1, n, f);
	fclose(f);
}

/* Loads and, if accepted, looks up every address near every start:
 * ASan (make check-sanitize) sees any read out of bounds. */
static bool load_and_probe(const char *path)
{
	struct ksym_table t;
	uint64_t start;

	if (prof_ksym_cache_load(&t, path, &key_a) < 0)
		return false;
	for (size_t i = 0; i < t.n; i++) {
		const char *s = prof_ksym_find(&t, t.start[i] + 1, &start);
		if (s && strlen(s) >= t.strs_len)
			abort();
	}
	prof_ksym_free(&t);
	return true;
}

static void test_hostile(void)
{
	char *path = tmp_path("kallsyms.cache"), *bad = tmp_path("bad");
	uint8_t *img;
	size_t len;
	int accepted = 0;

	make_cache(path, &img, &len);
	for (size_t n = 0; n < len; n++) {
		write_bytes(bad, img, n);
		accepted += load_and_probe(bad);
	}
	is_u64(accepted, 0, "every truncation rejected");
	uint8_t *copy = xmalloc(len + 1);
	for (size_t i = 0; i < len; i++) {
		memcpy(copy, img, len);
		copy[i] ^= 0xa5;
		write_bytes(bad, copy, len);
		load_and_probe(bad);
	}
	ok(1, "a corrupted byte at every offset: no crash");
	memcpy(copy, img, len);
	copy[len] = 0;
	write_bytes(bad, copy, len + 1);
	ok(!load_and_probe(bad), "a byte too many: rejected");

	size_t n = 6, names = 72 + 8 * n, strs = (names + 4 * n + 7) & ~7ul;
	memcpy(copy, img, len);
	memset(copy + names, 0xff, 4);
	write_bytes(bad, copy, len);
	ok(!load_and_probe(bad), "name offset past the pool: rejected");
	memcpy(copy, img, len);
	memcpy(copy + 72, copy + 80, 8);	/* start[0] = start[1] is fine, then */
	memset(copy + 80, 0, 8);		/* start[1] = 0 breaks the order */
	write_bytes(bad, copy, len);
	ok(!load_and_probe(bad), "unsorted starts: rejected");
	memcpy(copy, img, len);
	copy[len - 1] = 'x';
	write_bytes(bad, copy, len);
	ok(!load_and_probe(bad), "pool without a final NUL: rejected");
	memcpy(copy, img, len);
	memset(copy + 56, 0xff, 8);	/* n */
	write_bytes(bad, copy, len);
	ok(!load_and_probe(bad), "huge count: rejected");
	ok(strs < len, "layout as assumed above");
	free(copy);
	free(img);
	free(bad);
	free(path);
}

static void test_unsafe_places(void)
{
	struct ksym_table t;
	bool all_zero;
	char *txt = tmp_path("kallsyms.txt"), *victim = tmp_path("victim");
	char *link = tmp_path("link"), *blocked = tmp_path("victim/kallsyms");
	size_t len;

	write_text(txt, sample_text);
	write_text(victim, "precious\n");
	ok(symlink(victim, link) == 0, "symlink planted at the cache path");
	ok(prof_ksym_cache_load(&t, link, &key_a) == -ELOOP, "symlink not read");
	prof_ksym_load_text(&t, txt, &all_zero);
	is_u64(prof_ksym_cache_store(&t, link, &key_a), 0, "store replaces the symlink");
	char *s = read_file(victim, &len);
	is_str(s, "precious\n", "symlink target untouched");
	free(s);
	ok(prof_ksym_cache_store(&t, blocked, &key_a) < 0, "parent is a file: an error, no crash");
	prof_ksym_free(&t);
	free(txt);
	free(victim);
	free(link);
	free(blocked);
}

static void test_current(void)
{
	struct ksym_key a, b;

	if (access("/proc/sys/kernel/random/boot_id", R_OK)) {
		ok(1, "# SKIP no boot_id");
		return;
	}
	is_u64(prof_ksym_key_current(&a), 0, "current key read");
	is_u64(strlen(a.boot_id), 36, "boot_id is a uuid");
	prof_ksym_key_current(&b);
	ok(!memcmp(&a, &b, sizeof(a)), "current key is stable");
	setenv("XDG_CACHE_HOME", "/x", 1);
	char *p = prof_ksym_cache_path();
	is_str(p, "/x/prof/kallsyms", "XDG_CACHE_HOME used");
	free(p);
	setenv("XDG_CACHE_HOME", "relative", 1);
	setenv("HOME", "/h", 1);
	p = prof_ksym_cache_path();
	is_str(p, "/h/.cache/prof/kallsyms", "relative XDG_CACHE_HOME ignored, HOME used");
	free(p);
}

int main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/ksyms-test.XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	test_text();
	test_round_trip();
	test_hostile();
	test_unsafe_places();
	test_current();
	char *cmd = xasprintf("rm -rf '%s'", dir);
	if (system(cmd))
		ok(0, "cleanup");
	free(cmd);
	return done_testing();
}
