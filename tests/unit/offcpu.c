/*
 * offcpu.c - unit tests for the resource side of `prof record`: the
 * classification of a blocked interval from prev_state and the kernel
 * stack, the list of I/O-wait kernel functions, the /proc parsers the
 * sampler uses, and the prof.data round trip of RESOURCES and TIMELINE
 * records (a later RESOURCES record replaces the earlier one).
 */
#include "tap.h"
#include "prof/data.h"
#include "prof/offcpu.h"
#include "prof/resource.h"
#include "prof/proc.h"
#include <stdlib.h>
#include <unistd.h>

static void test_classify(void)
{
	is_u64(prof_offcpu_classify(0x0, false), PROF_M_PREEMPT_NS, "R: preempted");
	is_u64(prof_offcpu_classify(0x100, false), PROF_M_PREEMPT_NS, "R+ (TASK_REPORT_MAX): preempted");
	is_u64(prof_offcpu_classify(0x1, true), PROF_M_SLEEP_NS, "S: sleep, even over an I/O stack");
	is_u64(prof_offcpu_classify(0x2, true), PROF_M_IOWAIT_NS, "D in io_schedule: I/O wait");
	is_u64(prof_offcpu_classify(0x2, false), PROF_M_UNINT_NS, "D elsewhere: other uninterruptible");
	is_u64(prof_offcpu_classify(0x80, false), PROF_M_SLEEP_NS, "I (idle): sleep");
	is_u64(prof_offcpu_classify(0x10, false), PROF_METRIC_COUNT, "X: exiting, not charged");
	is_u64(prof_offcpu_classify(0x20, false), PROF_METRIC_COUNT, "Z: exiting, not charged");
}

static void test_io_functions(void)
{
	const char *io[] = { "io_schedule", "io_schedule_timeout", "folio_wait_bit_common",
			     "wait_on_page_bit", "bit_wait_io", "blk_mq_get_tag",
			     "jbd2_log_wait_commit", "ext4_sync_file", "submit_bio_wait" };
	const char *not_io[] = { "schedule", "__schedule", "futex_wait", "do_nanosleep",
				 "ext4_buffered_write_iter", "pipe_read", "" };

	for (size_t i = 0; i < ARRAY_SIZE(io); i++)
		ok(prof_offcpu_is_io_function(io[i]), "%s is an I/O wait", io[i]);
	for (size_t i = 0; i < ARRAY_SIZE(not_io); i++)
		ok(!prof_offcpu_is_io_function(not_io[i]), "'%s' is not", not_io[i]);
}

static void test_proc_parsers(void)
{
	const char *stat = "42 (a b) c) S 1 42 42 0 -1 4194304 123 0 7 0 55 66 0 0 20 0 1 0 "
			   "100 2000000 512 18446744073709551615";
	const char *status = "Name:\tx\nVmHWM:\t  204800 kB\nVmRSS:\t    1024 kB\n"
			     "voluntary_ctxt_switches:\t17\nnonvoluntary_ctxt_switches:\t3\n";
	uint64_t v = 0;

	ok(prof_proc_parse_stat_field(stat, 10, &v) == 0 && v == 123, "stat: minflt (comm with ') ')");
	ok(prof_proc_parse_stat_field(stat, 12, &v) == 0 && v == 7, "stat: majflt");
	ok(prof_proc_parse_stat_field(stat, 14, &v) == 0 && v == 55, "stat: utime");
	ok(prof_proc_parse_stat_field(stat, 15, &v) == 0 && v == 66, "stat: stime");
	ok(prof_proc_parse_stat_field(stat, 24, &v) == 0 && v == 512, "stat: rss pages");
	ok(prof_proc_parse_stat_field(stat, 99, &v) < 0, "stat: missing field is -EINVAL");
	ok(prof_proc_parse_keyed(status, "\nVmHWM:", &v) == 0 && v == 204800, "status: VmHWM kB");
	ok(prof_proc_parse_keyed(status, "\nvoluntary_ctxt_switches:", &v) == 0 && v == 17,
	   "status: voluntary switches (not matched inside nonvoluntary)");
	ok(prof_proc_parse_keyed(status, "\nVmSwap:", &v) < 0, "status: missing key is -EINVAL");
}

static void test_roundtrip(void)
{
	char path[] = "/tmp/prof-offcpu-test.XXXXXX";
	struct prof_profile p, q;
	struct prof_writer *w;
	struct prof_read_info info;
	int fd = mkstemp(path);

	close(fd);
	unlink(path);
	prof_profile_init(&p);
	prof_profile_init(&q);
	ok(prof_writer_open(&w, path) == 0, "writer opens");
	struct prof_resources r = { .pid = 10, .tid = 0, .user_ns = 1, .sys_ns = 2, .vol_cs = 3,
				    .invol_cs = 4, .minflt = 5, .majflt = 6, .rss_peak_bytes = 7 << 20,
				    .io_read_bytes = 8, .io_write_bytes = 9 };
	prof_resources_set(&p, &r);
	VEC_PUSH(&p.timeline, ((struct prof_timeline_sample){ 1000, 10, 4096, 5000, 250 }));
	prof_writer_flush(w, &p);
	r.user_ns = 100;	/* changed: must be re-emitted and win */
	prof_resources_set(&p, &r);
	r.tid = 11;
	prof_resources_set(&p, &r);
	VEC_PUSH(&p.timeline, ((struct prof_timeline_sample){ 2000, 10, 8192, 10000, 0 }));
	ok(prof_writer_close(w, &p) == 0, "writer closes");
	ok(prof_data_read(path, &q, &info) == 0 && info.complete, "reads back");
	is_u64(q.resources.n, 2, "two (pid, tid) entries");
	const struct prof_resources *g = prof_resources_get(&q, 10, 0);
	ok(g && g->user_ns == 100 && g->rss_peak_bytes == (7u << 20) && g->io_write_bytes == 9,
	   "the later RESOURCES record replaced the earlier");
	is_u64(q.timeline.n, 2, "two timeline points");
	ok(q.timeline.n == 2 && q.timeline.v[0].cpu_pct_x100 == 5000 &&
	   q.timeline.v[0].io_wait_pct_x100 == 250 && q.timeline.v[1].rss_bytes == 8192,
	   "timeline fields survive");
	unlink(path);
	prof_profile_free(&p);
	prof_profile_free(&q);
}

int main(void)
{
	test_classify();
	test_io_functions();
	test_proc_parsers();
	test_roundtrip();
	return done_testing();
}
