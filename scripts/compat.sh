#!/bin/bash
# compat.sh - the compatibility matrix side by side with perf: every kind
# of tests/workloads/compat/kinds.sh (C per linker, clang, C++, Rust,
# Go, Node, stripped, another mount namespace) is recorded once by
# `prof record` (DWARF unwinding, libdw) and once by
# `perf record --call-graph dwarf`, and a markdown table row is printed per
# kind: the share of complete stacks (outermost frame a thread root, for
# both tools) and the self share of the kind's three hot functions.
# perf script runs with --no-inline: its addr2line child hangs on node's
# binary, and perf report's default self view does not split inlined
# functions either (so Go's inlined main.gamma reads 0 there).
#   scripts/compat.sh [SECONDS=2]     (run from the source tree, after make)
#   COMPAT_KINDS="go go-stripped" scripts/compat.sh 2    (only those rows)
# Needs perf and perf_event access; kinds whose toolchain is missing are
# listed as skipped.  docs/compat.md holds a run's table.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
PROF="$TOP/prof"
SECS=${1:-2}
MIN_COMPLETE=0
CHECK="python3 $TOP/tests/workloads/compat/check.py"
WORK=$(mktemp -d /tmp/prof-compat.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK" || exit 1
command -v perf >/dev/null || { echo "compat.sh: perf is not installed" >&2; exit 2; }

# The names of a kind's NAME=TRUTH arguments, "re:" patterns kept whole.
names_of() { for a in "$@"; do [ "$a" = --no-line ] || printf '%s\n' "${a%=*}"; done; }

# "85.0 59.1 30.2 9.8" -> "85.0 | 59.1 / 30.2 / 9.8"
row_cells() { awk '{ printf "%s | ", $1; for (i = 2; i <= NF; i++) printf "%s%s", $i, (i < NF ? " / " : ""); }'; }

# perf 6.1 aborts now and then here ("assertion failed at util/build-id.c"):
# up to three tries.
perf_record() {
	local out=$1 cmd=$2
	for _ in 1 2 3; do
		eval "perf record -q --no-buildid-cache -F 999 --call-graph dwarf -o $out -- $cmd" \
			>/dev/null 2>&1 && return 0
	done
	return 1
}

kind() {
	local name=$1
	[ -z "${COMPAT_KINDS:-}" ] || [[ " $COMPAT_KINDS " == *" $name "* ]] || return 0
	shift 2
	local cmd=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do cmd+=("$1"); shift; done
	shift
	mapfile -t names < <(names_of "$@")
	local p q
	# the commands are shell words as t1200 hands them to eval (mntns quotes its sh -c)
	if eval "'$PROF' record -q -o $name.data -- ${cmd[*]}" >/dev/null 2>&1 &&
	   "$PROF" report -i "$name.data" --format=json >"$name.json" 2>/dev/null; then
		p=$($CHECK summary "$name.json" "${names[@]}" | row_cells)
	else
		p="prof failed | -"
	fi
	if perf_record "$name.perf" "${cmd[*]}" &&
	   timeout 300 perf script --no-inline -F comm,ip,sym -i "$name.perf" >"$name.script" 2>/dev/null; then
		q=$($CHECK perf-script "$name.script" "${names[@]}" | row_cells)
	else
		q="perf failed | -"
	fi
	# columns: kind | prof complete | perf complete | prof self | perf self
	local pc=${p%% |*} ps=${p#* | } qc=${q%% |*} qs=${q#* | }
	printf '| %s | %s | %s | %s | %s | %s |\n' "$name" "$(printf '%s' "${names[*]}" | sed 's/|/\\|/g')" \
		"$pc" "$qc" "$ps" "$qs"
}

test_skip() {
	[ -z "${COMPAT_KINDS:-}" ] || [[ " $COMPAT_KINDS " == *" $1 "* ]] || return 0
	printf '| %s | skipped: %s | | | | |\n' "$1" "$2"
}

echo "| kind | hot functions (truth 60/30/10) | prof complete % | perf complete % | prof self % | perf self % |"
echo "|---|---|---|---|---|---|"
. "$TOP/tests/workloads/compat/kinds.sh"
