#!/bin/bash
# t1300-top-tmux: `prof top -p PID` driven in a real terminal (tmux
# send-keys / capture-pane) on the "split" workload (spin_a:spin_b:spin_c
# = 6:3:1): the hot function shows up and leads by self; t, / and Enter
# (callers) change the view; a 20x5 terminal gets 5 lines of at most 20
# columns; the target exiting mid-view is shown, not fatal; q and Ctrl-C
# restore the terminal (the shell after prof sees icanon and echo again);
# --stdio into a pipe closed early ends quietly with status 0; perf top's
# --comm, -s/--sort and -g work.
. "$(dirname "$0")/lib/test-lib.sh"
require_perf_events
command -v tmux >/dev/null || skip_all "tmux is not installed"

SOCK="$TRASH/tmux.sock"
T="tmux -S $SOCK"
"$WL/split" 600 >/dev/null &
SPLIT=$!
trap '$T kill-server 2>/dev/null; kill $SPLIT $SPLIT2 2>/dev/null' EXIT
# A session that lives for the whole test: killing the last session makes
# the tmux server exit, and a new-session right after it can reach the
# exiting server and fail ("server exited unexpectedly": 6 in 100 tries
# here, 0 in 200 with this session alive).  That failed test 11 twice.
$T new-session -d -s keep "sleep 3600"

# Starts prof top in a fresh session of the given size; the pane then
# reports prof's exit status and the terminal's modes.
start_top() {	# width height args...
	local w=$1 h=$2
	shift 2
	$T kill-session -t top 2>/dev/null
	$T new-session -d -s top -x "$w" -y "$h" \
		"$PROF top $*; echo EXITED \$?; stty -a | tr ' ;' '\n\n' | grep -x -e -icanon -e icanon -e -echo -e echo | tr '\n' ' '; echo; sleep 600"
}

screen() { $T capture-pane -p -t top >screen.txt; cat screen.txt; }

# Waits (up to 40 s on a loaded machine) until the screen matches.
wait_screen() {	# pattern
	for _ in $(seq 200); do
		$T capture-pane -p -t top >screen.txt 2>/dev/null
		grep -q -- "$1" screen.txt && return 0
		sleep 0.2
	done
	echo "never saw '$1':"; cat screen.txt; return 1
}

# "self total name" of a function's row, or nothing.
row_of() { awk -v f="$1" '$3 == f { print $1, $2; exit }' screen.txt; }

start_top 120 24 -p $SPLIT
t0=$(date +%s.%N)

test_expect_success 'the hot function of the target shows up' '
	wait_screen "spin_a .*split" &&
	awk -v now="$(date +%s.%N)" -v t0="$t0" "BEGIN { printf \"%.1f\n\", now - t0 }" >visible-after.txt &&
	check_contains screen.txt "prof top: pid $SPLIT" &&
	check_contains screen.txt "split($SPLIT)"
'

say "spin_a was on screen $(cat visible-after.txt 2>/dev/null) s after prof top started"

# Sampling (tests/README.md, tests/lib/bounds.py): the table is a window of
# up to 5 s, read 2 s or more after spin_c shows: >= 400 samples even if
# split gets a fifth of a CPU.  spin_a (58.6% loaded) at 40% or less:
# `bounds.py below 400 58.6 40.01` = 5.5e-14; spin_b (30%) not above spin_c
# (10%): smaller; main's total (99%) at 95% or less: `bounds.py below 400
# 99 95.01` = 7.5e-9.
test_expect_success 'rows are sorted by self: spin_a > spin_b > spin_c' '
	wait_screen "spin_c " && sleep 2 && screen >/dev/null &&
	a=$(row_of spin_a | cut -d" " -f1) && b=$(row_of spin_b | cut -d" " -f1) &&
	c=$(row_of spin_c | cut -d" " -f1) && echo "a=$a b=$b c=$c" &&
	awk -v a="$a" -v b="$b" -v c="$c" "BEGIN { exit !(a > b && b > c && a > 40) }"
'

test_expect_success 't sorts by total: main near the top at ~100%' '
	$T send-keys -t top t && wait_screen "sort total" &&
	sleep 0.5 && screen >/dev/null &&
	total=$(row_of main | cut -d" " -f2) && echo "main total $total" &&
	awk -v t="$total" "BEGIN { exit !(t > 95) }"
'

test_expect_success '/ filters by regex' '
	$T send-keys -t top / "spin_[bc]" Enter && wait_screen "filter /spin_\[bc\]/" &&
	sleep 0.3 && screen >/dev/null &&
	check_contains screen.txt " spin_b " && check_not_contains screen.txt " spin_a " &&
	check_not_contains screen.txt " main "
'

test_expect_success 'Enter shows the callers of the selected row' '
	$T send-keys -t top s Enter && wait_screen "callers of spin_b" &&
	screen >/dev/null && check_contains screen.txt " main "
'

test_expect_success 'Esc goes back to the function table' '
	$T send-keys -t top Escape && sleep 0.5 && wait_screen "self%  total%  function" &&
	check_not_contains screen.txt "callers of"
'

test_expect_success 'a 20x5 terminal: 5 lines, none wider than 20 columns' '
	$T resize-window -t top -x 20 -y 5 && sleep 1.5 &&
	$T capture-pane -p -t top >small.txt && cat small.txt &&
	test "$(wc -l <small.txt)" -le 5 &&
	awk "length(\$0) > 20 { bad = 1 } END { exit bad }" small.txt &&
	grep -q "^prof top" small.txt
'

test_expect_success 'back to 120x30: the full screen again' '
	$T resize-window -t top -x 120 -y 30 && sleep 1.5 && wait_screen "self%  total%  function  module"
'

test_expect_success 'the target exiting mid-view is shown, prof keeps running' '
	kill $SPLIT && wait_screen "pid $SPLIT (exited)" && check_not_contains screen.txt EXITED
'

test_expect_success 'q quits with status 0 and restores the terminal' '
	$T send-keys -t top q && wait_screen "EXITED 0" && wait_screen "icanon" &&
	check_contains screen.txt "^icanon echo"
'

"$WL/split" 600 >/dev/null &
SPLIT2=$!

test_expect_success 'starting in a 20x5 terminal, then Ctrl-C: status 0, terminal restored' '
	start_top 20 5 -p $SPLIT2 && wait_screen " spin" &&
	awk "length(\$0) > 20 { bad = 1 } END { exit bad }" screen.txt &&
	$T send-keys -t top C-c && wait_screen "EXITED 0" && wait_screen "icanon" &&
	check_contains screen.txt "^icanon echo"
'

test_expect_success '--stdio into a pipe closed early: status 0, no error' '
	set -o pipefail &&
	timeout 60 "$PROF" top -p $SPLIT2 --stdio 2>stdio.err | head -n 2 >stdio.out &&
	cat stdio.out stdio.err && check_contains stdio.out "^prof top: pid $SPLIT2" &&
	test ! -s stdio.err
'

test_expect_success 'stdout closed: status 0, no error' '
	timeout 60 "$PROF" top -p $SPLIT2 -d 3 >&- 2>closed.err; st=$?; cat closed.err; test $st = 0 &&
	test ! -s closed.err
'

# perf top's habits: --comm (a comma list), -s/--sort, -g.  Each table
# covers about a second of two busy processes (~1000 samples of each at
# 999 Hz, fewer under load): hot_leaf missing from every table of 3 s
# would take recursion never running for 3 s.
test_expect_success '--comm recursion: only that command'"'"'s functions; -s total -g: sorted by total' '
	"$WL/recursion" 600 >/dev/null 2>&1 & rec=$! &&
	timeout 60 "$PROF" top -p $SPLIT2,$rec --stdio -d 3 --comm recursion >comm.out 2>comm.err
	st=$?; timeout 60 "$PROF" top -p $SPLIT2,$rec --stdio -d 2 -s total -g >total.out 2>>comm.err
	st2=$?; kill $rec; cat comm.err; test $st = 0 && test $st2 = 0 &&
	check_contains comm.out "^prof top: pid .*, comm recursion .* sort self" &&
	check_contains comm.out " hot_leaf " && check_not_contains comm.out " spin_[abc] " &&
	check_contains total.out "sort total$"
'

test_expect_success '-s with a perf key prof top has no column for: the reason, one line' '
	{ "$PROF" top -p $SPLIT2 -s comm,dso 2>err; test $? = 2; } &&
	one_error err "prof top.s rows are functions (perf.s sym)"
'

test_expect_failure_exit 'a pid that cannot exist: exit 2 with one line' 2 '
	"$PROF" top -p 2147483647 --stdio 2>bad.err; st=$?; cat bad.err; test $(wc -l <bad.err) = 1 && exit $st
'

# Now: test_done removes the trash, and with it the server's socket, so
# the EXIT trap's kill-server would no longer reach it (and its sleep
# 3600 would outlive the test, holding the suite's inherited files).
$T kill-server 2>/dev/null
test_done
