#!/bin/bash
# flake-hunt.sh - runs the whole test suite N times, in turn in each state
# CI may meet, and prints a pass/fail table per test: anyone can repeat
# the measurement behind the suite's reliability figures
# (tests/README.md).
#
#   scripts/flake-hunt.sh N [STATE...]
#   STATES: idle load notracefs tmpfs mixed   (default: all five, in turn)
#
#   idle       make check-run on an otherwise idle machine
#   load       two CPU burners beside it (scripts/check-under-load.sh's load)
#   notracefs  tracefs unmounted, in a private mount namespace (unshare -m)
#   tmpfs      TMPDIR on a tmpfs (a private one, in a mount namespace)
#   mixed      all three at once: burners, no tracefs, TMPDIR on tmpfs
#
# Every run uses one fresh clone of the current commit under
# ${FLAKE_ROOT:-/root}/prof-flake.XXXXXX (built once, as CI's clone is),
# so uncommitted changes are not tested.  Per-run logs stay in the clone's
# flake-logs/ (with the scratch directories of failed scripts,
# runN-trash/); the table is printed at the end and saved as
# flake-logs/table.txt.  Exit status: 0 when every run passed.
# Needs root for notracefs/tmpfs/mixed (unshare -m, mount); as another
# user those states are skipped and said so.
set -u
usage() { sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
[ $# -ge 1 ] && [[ $1 =~ ^[0-9]+$ ]] && [ "$1" -ge 1 ] || usage
runs=$1
shift
states=("$@")
[ ${#states[@]} -gt 0 ] || states=(idle load notracefs tmpfs mixed)
for s in "${states[@]}"; do
	case $s in idle|load|notracefs|tmpfs|mixed) ;; *) echo "flake-hunt: unknown state '$s'" >&2; usage ;; esac
done

src=$(cd "$(dirname "$0")/.." && pwd)
clone=$(mktemp -d "${FLAKE_ROOT:-/root}/prof-flake.XXXXXX") || exit 1
git clone -q "$src" "$clone" || exit 1
logs="$clone/flake-logs"
mkdir -p "$logs"
echo "flake-hunt: $runs runs of $(git -C "$clone" log --oneline -1) in $clone"
# The build is not what is hunted: once, like CI's clone, before the runs.
make -C "$clone" deps-test >/dev/null && make -C "$clone" -j"$(nproc)" check-build >"$logs/build.log" 2>&1 ||
	{ echo "flake-hunt: build failed, see $logs/build.log" >&2; exit 1; }

# In a private mount namespace: unmount tracefs and/or put TMPDIR on a
# fresh tmpfs, then run the suite there.  $1: "notracefs", "tmpfs" or both.
in_namespace() {
	local what=$1
	shift
	unshare -m bash -c '
		mount --make-rprivate / 2>/dev/null
		case " $1 " in *" notracefs "*)
			umount /sys/kernel/tracing 2>/dev/null; umount /sys/kernel/debug/tracing 2>/dev/null
			test -d /sys/kernel/tracing/events && { echo "flake-hunt: tracefs still mounted"; exit 99; } ;;
		esac
		case " $1 " in *" tmpfs "*)
			mkdir -p /tmp/flake-tmpfs && mount -t tmpfs -o size=4g tmpfs /tmp/flake-tmpfs &&
				export TMPDIR=/tmp/flake-tmpfs || { echo "flake-hunt: cannot mount a tmpfs"; exit 99; } ;;
		esac
		shift; exec "$@"' sh "$what" "$@"
}

run_suite() {	# state
	local cmd=(make -C "$clone" check-run PROVE_FLAGS=--timer)
	local loaded=(env CHECK_TARGET=check-run "$clone/scripts/check-under-load.sh" PROVE_FLAGS=--timer)
	case $1 in
	idle) "${cmd[@]}" ;;
	load) "${loaded[@]}" ;;
	notracefs) in_namespace notracefs "${cmd[@]}" ;;
	tmpfs) in_namespace tmpfs "${cmd[@]}" ;;
	mixed) in_namespace "notracefs tmpfs" "${loaded[@]}" ;;
	esac
}

declare -a run_state run_status run_secs
for ((i = 1; i <= runs; i++)); do
	state=${states[$(((i - 1) % ${#states[@]}))]}
	if [ "$(id -u)" != 0 ] && [ "$state" != idle ] && [ "$state" != load ]; then
		echo "flake-hunt: run $i: state $state needs root (unshare -m, mount); running idle instead"
		state=idle
	fi
	t0=$(date +%s)
	run_suite "$state" >"$logs/run$i.log" 2>&1
	st=$?
	run_state[i]=$state run_status[i]=$st run_secs[i]=$(($(date +%s) - t0))
	# a failed script keeps its scratch directory: keep it past the next run
	[ -d "$clone/tests/trash" ] && mv "$clone/tests/trash" "$logs/run$i-trash"
	echo "flake-hunt: run $i ($state): exit $st, ${run_secs[i]} s, load $(cut -d' ' -f1-3 /proc/loadavg)"
done

# The table: one row per test script or unit binary, one column per run;
# "ok", or the failed test numbers prove's summary lists for that file.
python3 - "$logs" "$runs" "${run_state[@]:1}" >"$logs/table.txt" <<'PY'
import glob, os, re, sys
logs, runs, states = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
clone = os.path.dirname(logs)
tests = sorted(os.path.relpath(p, clone) for p in glob.glob(os.path.join(clone, "tests/t[0-9]*.sh")))
tests += sorted(os.path.relpath(p, clone) for p in glob.glob(os.path.join(clone, "build/tests/unit/*.t")))
cells = {t: ["?"] * runs for t in tests}
for i in range(runs):
    text = open(os.path.join(logs, "run%d.log" % (i + 1)), errors="replace").read()
    ran = set(re.findall(r"^(?:\./)?((?:tests|build/tests/unit)/\S+?) \.+", text, re.M))
    ran |= set(re.findall(r"\]\s+(?:\./)?((?:tests|build/tests/unit)/\S+?) \.+", text))
    failed = {}
    summary = text.split("Test Summary Report", 1)
    if len(summary) == 2:
        cur = None
        for line in summary[1].splitlines():
            m = re.match(r"^(?:\./)?(\S+)\s+\(Wstat", line)
            if m:
                cur = m.group(1)
                failed[cur] = "FAIL"
            m = re.match(r"^\s+Failed tests?:\s+(.*)", line)
            if m and cur:
                failed[cur] = "FAIL " + m.group(1).replace(" ", "")
    for t in tests:
        if t in failed:
            cells[t][i] = failed[t]
        elif t in ran:
            cells[t][i] = "ok"
    if "Result: PASS" not in text and not failed:
        for t in tests:
            if cells[t][i] == "?":
                cells[t][i] = "not run"
print("runs: " + ", ".join("%d=%s" % (i + 1, s) for i, s in enumerate(states)))
w = max(len(t) for t in tests)
print("%-*s  %s  %s" % (w, "test", "fails", " ".join("%6d" % (i + 1) for i in range(runs))))
for t in tests:
    nf = sum(c.startswith("FAIL") for c in cells[t])
    print("%-*s  %5d  %s" % (w, t, nf, " ".join("%6s" % ("ok" if c == "ok" else c[:6]) for c in cells[t])))
    for i, c in enumerate(cells[t]):
        if c.startswith("FAIL"):
            print("%-*s         run %d (%s): %s" % (w, "", i + 1, states[i], c))
for i in range(runs):
    text = open(os.path.join(logs, "run%d.log" % (i + 1)), errors="replace").read()
    m = re.search(r"^Files=\d+, Tests=(\d+), +(\d+) wallclock", text, re.M)
    print("run %d (%s): %s, %s tests, prove %s s" % (i + 1, states[i],
          "PASS" if "Result: PASS" in text else "FAIL", m.group(1) if m else "?", m.group(2) if m else "?"))
PY
cat "$logs/table.txt"
passed=0
for ((i = 1; i <= runs; i++)); do [ "${run_status[i]}" = 0 ] && passed=$((passed + 1)); done
echo "flake-hunt: $passed of $runs runs passed; logs and table in $logs"
[ "$passed" = "$runs" ]
