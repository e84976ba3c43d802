#!/bin/bash
# t4000-stat-basic.sh - prof stat's interface: --help, usage errors, the
# command's output and exit status, -r/--warmup run counts, JSON shape
# (every metric has min/median/mean/p95/p99/max/stddev and a runs array of
# length N), -o.  No timing assertions.
. "$(dirname "$0")/lib/test-lib.sh"
SB="$TOP/tests/stat/bin"
[ -x "$SB/sleeper" ] || skip_all "tests/stat/bin not built (run make check)"

# jsonq FILE PYTHON-EXPR: evaluate EXPR with d = the parsed JSON; fail if falsy.
jsonq() {
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); r=eval(sys.argv[2]); print(r); sys.exit(0 if r else 1)' "$1" "$2"
}

test_expect_success '--help prints usage and the exit codes' '
	"$PROF" stat --help >out &&
	check_contains out "usage: prof stat" &&
	check_contains out "exit status: 0 no significant regression, 1 regression"
'
test_expect_failure_exit 'no command is a usage error' 2 '"$PROF" stat -r 3'
test_expect_failure_exit 'bad -r is a usage error' 2 '"$PROF" stat -r zero -- true'
test_expect_failure_exit 'unknown option is a usage error' 2 '"$PROF" stat --bogus -- true'
test_expect_failure_exit 'unknown -e event is a usage error' 2 '"$PROF" stat -e nosuch -- true'
test_expect_success 'usage errors are one line' '
	! "$PROF" stat -r 0 -- true 2>err && test $(wc -l <err) = 1 && check_contains err "invalid value .0. for -r"
'
test_expect_success 'JSON stays valid for a command line that is not UTF-8' '
	"$PROF" stat --format=json -o out.json -- true "$(printf "\\377\\042x")" &&
	python3 -m json.tool out.json >/dev/null
'
test_expect_failure_exit 'a missing command is an input error' 2 '"$PROF" stat -- ./does-not-exist'
test_expect_success 'missing command says so' '
	! "$PROF" stat -- ./does-not-exist 2>err && check_contains err "cannot run .*No such file"
'
test_expect_failure_exit 'a failing command makes prof stat fail (3)' 3 '"$PROF" stat -r 3 -- false'
test_expect_success 'failure is reported with the status' '
	! "$PROF" stat -r 3 -- sh -c "exit 7" 2>err && check_contains err "run 1: .* failed (exit 7)"
'
test_expect_success '--ignore-failure measures failing runs' '
	"$PROF" stat -r 3 --ignore-failure --format=json -o s.json -- false &&
	jsonq s.json "d[\"failed_runs\"] == 3 and len(d[\"metrics\"][\"wall_s\"][\"runs\"]) == 3" &&
	jsonq s.json "d[\"last_failure\"] == \"exit 1\""
'
test_expect_success '--ignore-failure: the title says how the runs failed (exit status or signal)' '
	"$PROF" stat -r 2 --ignore-failure -- sh -c "exit 3" 2>err &&
	check_contains err "prof stat: 2 runs of .*, 2 failed (the last: exit 3)$" &&
	"$PROF" stat --ignore-failure -- sh -c "kill -SEGV \$\$" 2>err &&
	check_contains err "prof stat: 1 run of .*, 1 failed (killed by SIGSEGV)$"
'
test_expect_success 'a run killed by a signal: one error line naming the signal' '
	{ "$PROF" stat -- sh -c "kill -SEGV \$\$" 2>err; test $? = 3; } &&
	one_error err "run 1: .sh. failed (killed by SIGSEGV); use --ignore-failure"
'
test_expect_success 'stdout and stderr of the command pass through, once per run' '
	"$PROF" stat -r 3 -- sh -c "echo out; echo err >&2" >out 2>err &&
	test "$(grep -c ^out$ out)" = 3 && test "$(grep -c ^err$ err)" = 3 &&
	check_contains err "prof stat: 3 runs of"
'
test_expect_success 'JSON: all metrics and statistics, N runs, warm-up excluded' '
	"$PROF" stat -r 4 --warmup 2 --format=json -o s.json -- "$SB/sleeper" 0.01 &&
	jsonq s.json "d[\"runs\"] == 4 and d[\"warmup\"] == 2" &&
	for m in wall_s cpu_user_s cpu_sys_s off_cpu_s rss_peak_bytes ctx_switches_voluntary \
		 ctx_switches_involuntary page_faults_minor page_faults_major; do
		jsonq s.json "all(k in d[\"metrics\"][\"$m\"] for k in (\"min\",\"median\",\"mean\",\"p95\",\"p99\",\"max\",\"stddev\",\"cv\",\"outliers\"))" &&
		jsonq s.json "len(d[\"metrics\"][\"$m\"][\"runs\"]) == 4" || return 1
	done
'
test_expect_success 'JSON statistics agree with Python statistics on the runs' '
	jsonq s.json "all(abs(m[\"median\"] - __import__(\"statistics\").median(m[\"runs\"])) <= 1e-9 * max(1, abs(m[\"median\"])) and m[\"min\"] <= m[\"median\"] <= m[\"max\"] and m[\"p95\"] is None and m[\"p99\"] is None for m in d[\"metrics\"].values() if m[\"available\"])" &&
	jsonq s.json "all(abs(m[\"stddev\"] - __import__(\"statistics\").stdev(m[\"runs\"])) <= 1e-6 * max(1, m[\"stddev\"]) for m in d[\"metrics\"].values() if m[\"available\"])"
'
test_expect_success 'io_wait_s is either measured or explicitly unavailable' '
	if [ "$(cat /proc/sys/kernel/task_delayacct)" = 1 ]; then
		jsonq s.json "d[\"delayacct\"] and d[\"metrics\"][\"io_wait_s\"][\"available\"]"
	else
		# without delay accounting: from sched_switch samples, or unavailable saying why
		jsonq s.json "not d[\"delayacct\"] and (d[\"metrics\"][\"io_wait_s\"][\"available\"] and d[\"metrics\"][\"io_wait_s\"][\"source\"].startswith(\"sched_switch\") or not d[\"metrics\"][\"io_wait_s\"][\"available\"] and \"task_delayacct\" in d[\"metrics\"][\"io_wait_s\"][\"reason\"])"
	fi
'
# 40x: beside a second test suite and two CPU burners (load about 8) the
# 0.05-s runs took 0.08-0.46 s, and a 0.5-s first run was not flagged.
test_expect_success 'a 40x slower first run is flagged as the wall_s outlier' '
	rm -f first.done &&
	"$PROF" stat -r 10 --format=json -o o.json -- sh -c "if [ -e first.done ]; then \"$SB/sleeper\" 0.05; else : >first.done; \"$SB/sleeper\" 2; fi" &&
	jsonq o.json "0 in d[\"metrics\"][\"wall_s\"][\"outliers\"]" &&
	rm -f first.done &&
	"$PROF" stat -r 10 -- sh -c "if [ -e first.done ]; then \"$SB/sleeper\" 0.05; else : >first.done; \"$SB/sleeper\" 2; fi" 2>err &&
	check_contains err "^wall_s .*outlier run 1\( \|$\)"
'
test_expect_success 'what the run count supports: no p95/p99 or outlier flags from 3 runs, p95 from 20' '
	rm -f first.done &&
	"$PROF" stat -r 3 -- sh -c "if [ -e first.done ]; then \"$SB/sleeper\" 0.05; else : >first.done; \"$SB/sleeper\" 0.5; fi" 2>err &&
	check_contains err "^ 3 runs: p95 needs 20 or more (-r N), p99 100, outlier flags 10$" &&
	check_not_contains err "outlier run" &&
	awk "/^wall_s / { exit !(\$5 == \"-\" && \$6 == \"-\") }" err &&
	"$PROF" stat -r 20 --format=json -o p.json -- true &&
	jsonq p.json "all(m[\"p95\"] is not None and m[\"p99\"] is None for m in d[\"metrics\"].values() if m[\"available\"])"
'
# the title as a shell needs it: the argument with a space in quotes
TITLE_WANT=" prof stat: 1 run of sh -c 'true \"a b\"'"
test_expect_success 'the title quotes arguments as a shell would; bytes and ns with units' '
	"$PROF" stat -e task-clock -- sh -c "true \"a b\"" 2>err &&
	grep -qxF "$TITLE_WANT" err &&
	check_contains err "^rss_peak_bytes  *[0-9.]* [KMG]iB " &&
	check_contains err "^task-clock  *[0-9.]* ms "
'
test_expect_success 'text report goes to -o FILE, not stderr' '
	"$PROF" stat -r 2 -o report.txt -- true 2>err &&
	check_contains report.txt "^wall_s" && check_not_contains err "^wall_s"
'
test_done
