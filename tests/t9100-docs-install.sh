#!/bin/bash
# t9100-docs-install: the man pages and the --help texts come from one
# source (docs/man/*.txt), man renders every page, `prof help CMD` is
# `prof CMD --help`, `make install PREFIX=` installs the binary, the man
# pages and the bash/zsh completion and `make uninstall` removes them all,
# and the bash completion completes commands, flags and values.
. "$(dirname "$0")/lib/test-lib.sh"
command -v man >/dev/null || skip_all "man is not installed"
MAN="$BUILD_DIR/man"
MAKE_BUILD="BUILD=${PROF_BUILD:-build}"

test_expect_success 'man -l renders every page without warnings' '
	for page in prof prof-record prof-report prof-stat prof-diff prof-crosscheck prof-callgrind prof-top prof-annotate; do
		test -s "$MAN/$page.1" || { echo "no $page.1"; return 1; }
		MANWIDTH=80 MAN_KEEP_FORMATTING= man --warnings -l "$MAN/$page.1" >out 2>err </dev/null ||
			{ cat err; return 1; }
		test ! -s err || { cat err; return 1; }
		check_contains out "^NAME" && check_contains out "^SYNOPSIS" || return 1
	done
'

test_expect_success '--help is the man source: each command prints what docs/man says' '
	for cmd in record report stat diff crosscheck callgrind top annotate; do
		python3 "$TOP/scripts/mangen.py" text "$TOP/docs/man/prof-$cmd.txt" want &&
		"$PROF" $cmd --help >got && cmp want got || return 1
	done &&
	python3 "$TOP/scripts/mangen.py" text "$TOP/docs/man/prof.txt" want &&
	"$PROF" --help >got && cmp want got
'

test_expect_success 'prof help CMD is prof CMD --help' '
	for cmd in record report stat diff crosscheck callgrind top annotate; do
		"$PROF" help $cmd >a && "$PROF" $cmd --help >b && cmp a b || return 1
	done
'
test_expect_failure_exit 'prof help of an unknown command exits 2' 2 '"$PROF" help frobnicate'

test_expect_success 'make install PREFIX= installs binary, man pages, completion; uninstall removes them' '
	prefix=$PWD/inst &&
	make -s -C "$TOP" "$MAKE_BUILD" install PREFIX="$prefix" >/dev/null &&
	"$prefix/bin/prof" --version | grep -q "^prof " &&
	for page in prof prof-record prof-report prof-stat prof-diff prof-crosscheck prof-callgrind prof-top prof-annotate; do
		man -l "$prefix/share/man/man1/$page.1" >/dev/null 2>&1 </dev/null || return 1
	done &&
	test -s "$prefix/share/bash-completion/completions/prof" &&
	test -s "$prefix/share/zsh/site-functions/_prof" &&
	make -s -C "$TOP" "$MAKE_BUILD" uninstall PREFIX="$prefix" >/dev/null &&
	test -z "$(find "$prefix" -type f)"
'

# One completion: the words after "prof", the index of the word completed.
complete_words() {
	bash -c '
		source "$1"; shift; cword=$1; shift
		COMP_WORDS=(prof "$@"); COMP_CWORD=$cword; _prof
		printf "%s\n" "${COMPREPLY[@]}"' _ "$TOP/scripts/completion/prof.bash" "$@"
}

test_expect_success 'bash completion: commands, flags, --format, --sort, -p pids, -i files' '
	export PATH="$(dirname "$PROF"):$PATH" &&
	complete_words 1 rec >out && check_contains out "^record$" &&
	complete_words 2 record --no-i >out && check_contains out "^--no-inherit$" &&
	complete_words 3 report --format fl >out && check_contains out "^flamegraph$" &&
	complete_words 3 report --sort dso,s >out && check_contains out "^dso,sym$" &&
	check_contains out "^dso,srcline$" &&
	{ sleep 30 & pid=$!; } &&
	complete_words 3 record -p $pid >out; kill $pid; check_contains out "^$pid$" &&
	touch my-recording.data && complete_words 3 report -i my-rec >out &&
	check_contains out "^my-recording.data$"
'

# --metric=<TAB>: bash splits the word at "=" (COMP_WORDBREAKS), so the
# words are --metric, "=" and the value typed so far.
test_expect_success 'bash completion: --flag=VALUE completes the value' '
	export PATH="$(dirname "$PROF"):$PATH" &&
	complete_words 3 report --metric = >out && check_contains out "^cpu$" &&
	check_contains out "^off-cpu$" &&
	complete_words 4 report --metric = of >out && test "$(cat out)" = off-cpu &&
	complete_words 4 report --format = fl >out && test "$(cat out)" = flamegraph &&
	complete_words 4 report --sort = dso,s >out && check_contains out "^dso,sym$"
'

if command -v zsh >/dev/null; then
	test_expect_success 'zsh completion parses' 'zsh -n "$TOP/scripts/completion/_prof"'
else
	test_skip 'zsh completion parses' 'zsh is not installed'
fi

test_done
