/*
 * resource.c - unit tests for the pure parts of src/resource: the
 * /proc/PID/stat field-42 and /proc/PID/io parsers (comm with spaces and
 * parentheses), the baseline JSON reader, wait-status strings, the event
 * table, and one real res_run() of /bin/true (exit status, sane numbers).
 */
#include "tap.h"
#include "prof/resource.h"
#include "prof/proc.h"
#include <errno.h>
#include <stdlib.h>
#include <sys/wait.h>

static void test_stat_parse(void)
{
	/* A real 6.x /proc/PID/stat line with fields 3..52; field 42 = 17. */
	const char *line =
		"1234 (a b) c)) Z 1 1234 1234 0 -1 4194828 100 0 0 0 5 6 0 0 20 0 1 0 999 0 0 "
		"18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 1 0 0 17 0 0 0 0 0 0 0 0 0 0\n";
	uint64_t t = 0;
	int r = prof_proc_parse_stat_blkio(line, &t);

	ok(r == 0 && t == 17,
	   "field 42 found after a comm containing ') ' (got %" PRIu64 ")", t);
	ok(prof_proc_parse_stat_blkio("1 (x) S 1 2 3", &t) == -EINVAL, "short line rejected");
	ok(prof_proc_parse_stat_blkio("garbage", &t) == -EINVAL, "no ')' rejected");
}

static void test_io_parse(void)
{
	const char *io = "rchar: 10\nwchar: 20\nsyscr: 1\nsyscw: 2\nread_bytes: 4096\n"
			 "write_bytes: 8192\ncancelled_write_bytes: 0\n";
	uint64_t r = 0, w = 0;

	ok(prof_proc_parse_io(io, &r, &w) == 0 && r == 4096 && w == 8192, "read_bytes/write_bytes");
	ok(prof_proc_parse_io("rchar: 1\n", &r, &w) == -EINVAL, "missing keys rejected");
}

static void test_baseline(void)
{
	const char *json =
		"{\"tool\": \"prof stat\", \"command\": [\"x\", \"\\\"runs\\\": [9]\"],\n"
		" \"metrics\": {\n"
		"  \"wall_s\": {\"unit\": \"s\", \"available\": true, \"min\": 1, \"outliers\": [],"
		" \"runs\": [1.5, 2, 3e-1]},\n"
		"  \"io_wait_s\": {\"unit\": \"s\", \"available\": false, \"reason\": \"off\"},\n"
		"  \"task-clock\": {\"nested\": {\"runs\": [7]}, \"runs\": []}\n"
		" }}";
	double *v;
	size_t n;

	ok(res_baseline_runs(json, "wall_s", &v, &n) == 0 && n == 3 && v[0] == 1.5 && v[1] == 2 &&
		   v[2] == 0.3, "runs of wall_s");
	free(v);
	ok(res_baseline_runs(json, "io_wait_s", &v, &n) == -ENOENT, "unavailable metric: -ENOENT");
	ok(res_baseline_runs(json, "nope", &v, &n) == -ENOENT, "absent metric: -ENOENT");
	ok(res_baseline_runs(json, "task-clock", &v, &n) == 0 && n == 0,
	   "nested 'runs' ignored, depth-1 empty array read");
	free(v);
	ok(res_baseline_runs("[1,2]", "wall_s", &v, &n) == -EINVAL, "not an object: -EINVAL");
	ok(res_baseline_runs("{\"metrics\": {\"wall_s\": {\"runs\": [1, x]}}}", "wall_s", &v, &n) ==
		   -EINVAL, "bad number: -EINVAL");
}

static void test_misc(void)
{
	char buf[64];

	is_str(res_status_str(3 << 8, buf, sizeof(buf)), "exit 3", "exit status string");
	is_str(res_status_str(9, buf, sizeof(buf)), "killed by SIGKILL", "signal string");
	ok(prof_perf_event_find("task-clock") && !prof_perf_event_find("bogus"), "event lookup");
	ok(res_delayacct_enabled() == 0 || res_delayacct_enabled() == 1, "delayacct sysctl readable");
}

static void test_run_true(void)
{
	char *argv[] = { "true", NULL }, *bad[] = { "/nonexistent/prof-test", NULL };
	struct res_run_opts o = { .argv = argv, .stdout_fd = -1, .stderr_fd = -1 };
	struct res_usage u;

	int r = res_run(&o, &u);

	ok(r == 0 && WIFEXITED(u.wait_status) && WEXITSTATUS(u.wait_status) == 0,
	   "res_run(true) exits 0");
	ok(u.wall_s > 0 && u.wall_s < 60 && u.rss_peak_bytes > 100000 && u.minflt > 0,
	   "true: wall %g s, rss %" PRIu64 " B, %" PRIu64 " minor faults", u.wall_s,
	   u.rss_peak_bytes, u.minflt);
	ok(u.have_proc_io, "/proc/PID/io read from the zombie");
	o.argv = bad;
	ok(res_run(&o, &u) == -ENOENT, "exec failure comes back as -ENOENT");
}

int main(void)
{
	test_stat_parse();
	test_io_parse();
	test_baseline();
	test_misc();
	test_run_true();
	return done_testing();
}
