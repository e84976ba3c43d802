#!/bin/bash
# t2003-color-progress: colour in terminal reports (--color=auto|always|
# never, NO_COLOR) and progress lines on stderr, only on a terminal; a
# terminal is simulated with script(1) from util-linux.
. "$(dirname "$0")/lib/test-lib.sh"
command -v script >/dev/null || skip_all "script (util-linux) is not installed"
GEN="$BUILD_DIR/tests/unit/output.t"
[ -x "$GEN" ] || skip_all "build/tests/unit/output.t not built (make unit)"
"$GEN" --write fx.data || skip_all "cannot write the fixture"
ESC=$(printf "\033")

# Runs a command with stdout and stderr on a pseudo-terminal; prints both.
on_tty() { script -qec "$1" /dev/null </dev/null; }

test_expect_success '--color=always colours even in a pipe (headers, hot rows, modules)' '
	"$PROF" report --color=always fx.data >out && check_contains out "$ESC\[1m" &&
	check_contains out "$ESC\[31m" && check_contains out "$ESC\[36m"
'
test_expect_success 'no colour in a pipe (auto), nor with --color=never' '
	"$PROF" report fx.data >out && check_not_contains out "$ESC" &&
	"$PROF" report --color=never --tree fx.data >out && check_not_contains out "$ESC"
'
test_expect_success 'colour on a terminal (auto), for the table, the tree and --sort keys' '
	on_tty "\"$PROF\" report fx.data" >out && check_contains out "$ESC\[31m" &&
	on_tty "\"$PROF\" report --tree fx.data" >out && check_contains out "$ESC\[1m" &&
	on_tty "\"$PROF\" report --sort sym fx.data" >out && check_contains out "$ESC\[3[12]m"
'
test_expect_success 'NO_COLOR turns auto off on a terminal; --color=never too' '
	on_tty "NO_COLOR=1 \"$PROF\" report fx.data" >out && check_not_contains out "$ESC\[[0-9;]*m" &&
	on_tty "\"$PROF\" report --color=never fx.data" >out && check_not_contains out "$ESC\[[0-9;]*m"
'
test_expect_failure_exit 'a bad --color value exits 2' 2 '"$PROF" report --color=sometimes fx.data'

test_expect_success 'stat -r N: "run k of N (ETA)" on a terminal' '
	on_tty "\"$PROF\" stat -r 3 -o /dev/null -- sleep 0.3" >out &&
	check_contains out "run 2 of 3 (ETA [0-9]* s)"
'
test_expect_success 'stat -r N: no progress in a pipe' '
	"$PROF" stat -r 3 -- sleep 0.1 2>err >/dev/null &&
	check_not_contains err "run 2 of 3" && check_not_contains err "$ESC"
'

test_done
