#!/bin/bash
# t5230-viewer-files: the viewer's code lives in real files that a
# JavaScript parser reads.  Every script of src/output parses (node
# --check), the two the HTML report loads into one page parse together,
# no C file of src/ holds script or style text in a string (the
# renderers embed the files, OUTPUT_EMBED), and no markup holds an inline
# event handler.  A planted syntax error shows
# that the check fails.
. "$(dirname "$0")/lib/test-lib.sh"
command -v node >/dev/null || skip_all "node is not installed"

test_expect_success 'every script of src/output parses' '
	for f in "$TOP"/src/output/*.js; do
		node --check "$f" || return 1
	done
'

test_expect_success 'the HTML report page: html_report.js then html_app.js, as one script' '
	cat "$TOP/src/output/html_report.js" "$TOP/src/output/html_app.js" >page.js &&
	node --check page.js
'

test_expect_success 'planted: a script with a syntax error fails the check' '
	printf "function f(){return 1;\n" >bad.js &&
	! node --check bad.js 2>err &&
	check_contains err "SyntaxError"
'

# Script or style in a C string literal: a function expression, a CSS
# rule ("sel{prop:"), or a <style>/<script> element with its content.
code_in_c() {	# files...
	grep -nE '"[^"]*(function( +[A-Za-z_$][A-Za-z0-9_$]*)? *\([^)]*\) *\{|[a-z#.][a-z0-9_-]*\{[a-z-]+:)' "$@"
}

test_expect_success 'no C file of src/ holds script or style text' '
	! code_in_c "$TOP"/src/*/*.c "$TOP"/src/*.c
'

# An inline event handler (onclick="...") is script in markup: the
# scripts attach their handlers themselves.  In C the attribute may open
# a string of its own, after the element's name on the line above.
handler_in_markup() {	# files...
	grep -nE '(<[a-z][^>]* |")on[a-z]+=\\?"' "$@"
}

test_expect_success 'no markup of src/ (C strings, .html files) holds an inline handler' '
	! handler_in_markup "$TOP"/src/*/*.c "$TOP"/src/*.c "$TOP"/src/output/*.html
'

test_expect_success 'planted: an inline handler is found' '
	printf "sb_adds(sb, \"<button id=\\\"x\\\" onclick=\\\"go()\\\">\");\n" >h.c &&
	printf "\t\"onclick=\\\"go()\\\">x</text>\");\n" >h2.c &&
	printf "<th onclick=\"sortBy(0)\">F</th>\n" >h.html &&
	cat h.c h2.c h.html &&
	handler_in_markup h.c && handler_in_markup h2.c && handler_in_markup h.html
'

test_expect_success 'planted: a C string with a script or a rule is found' '
	printf "static const char s[] = \"function f(){}\";\n" >a.c &&
	printf "static const char s[] = \"body{margin:0}\";\n" >b.c &&
	code_in_c a.c && code_in_c b.c
'

test_done
