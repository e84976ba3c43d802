# node-tools.sh - the npm packages some tests check prof's output with
# (speedscope's schema + ajv, playwright-core), installed on first use
# into build/node from tests/node/package.json.  Source after test-lib.sh:
#   . "$TOP/tests/lib/node-tools.sh"
#   require_node_tools              skip the whole script if unavailable
#   node_tools_ready || test_skip "title" "$NODE_TOOLS_WHY"
#   q FILE EXPR                     a python expression over a driver's JSON
#                                   output (d) must be true
#   drive_start, drive MODE REPORT [ARGS...] >OUT.json, drive_stop
#                                   tests/node/html-app-drive.js's modes,
#                                   all in one Chromium started once
# A test that cannot get them says why it did not run; it never passes empty.
NODE_TOOLS="$TOP/build/node"
NODE_TOOLS_WHY=""

node_tools_ready() {
	if ! command -v node >/dev/null 2>&1; then
		NODE_TOOLS_WHY="node is not installed"
		return 1
	fi
	if [ ! -f "$NODE_TOOLS/node_modules/.package-lock.json" ] ||
	   ! cmp -s "$TOP/tests/node/package.json" "$NODE_TOOLS/package.json"; then
		if ! command -v npm >/dev/null 2>&1; then
			NODE_TOOLS_WHY="npm is not installed"
			return 1
		fi
		mkdir -p "$NODE_TOOLS" && cp "$TOP/tests/node/package.json" "$NODE_TOOLS/" &&
		(cd "$NODE_TOOLS" && npm install --no-audit --no-fund >npm.log 2>&1) || {
			NODE_TOOLS_WHY="npm install in $NODE_TOOLS failed (see npm.log there)"
			return 1
		}
	fi
	export NODE_PATH="$NODE_TOOLS/node_modules"
}

require_node_tools() {
	node_tools_ready || skip_all "$NODE_TOOLS_WHY"
}

# q FILE EXPR: a python expression over the driver's JSON (d), must be true
q() {
	python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
ok = bool($2)
if not ok: print('false:', sys.argv[2])
sys.exit(0 if ok else 1)" "$1" "$2"
}

# One Chromium for every drive of a test: html-app-drive.js serve, started
# by drive_start after require_node_tools, reads requests from a FIFO and
# answers on another (a coproc's descriptors would not reach the
# subshells the test cases run in).  It ends at drive_stop, or when the
# test's shell exits and the request FIFO closes.
drive_start() {
	local req="$TRASH/.drive.req" ans="$TRASH/.drive.ans"
	rm -f "$req" "$ans" && mkfifo "$req" "$ans" || return 1
	node "$TOP/tests/node/html-app-drive.js" serve <"$req" >"$ans" &
	DRIVE_PID=$!
	exec {DRIVE_REQ}>"$req" {DRIVE_ANS}<"$ans"
}

# Closes the browser and waits for it, so that no Chromium outlives the
# test.
drive_stop() {
	exec {DRIVE_REQ}>&- {DRIVE_ANS}<&-
	wait "$DRIVE_PID"
}

# drive MODE REPORT [ARGS...]: as `node html-app-drive.js MODE REPORT
# ARGS...` (its JSON on stdout), in the browser drive_start started.
drive() {
	local out status
	out=$(mktemp "$TRASH/.drive.XXXXXX") || return 1
	{ printf '%s\t' "$PWD" "$out" "$@"; printf '\n'; } >&"$DRIVE_REQ"
	IFS= read -r status <&"$DRIVE_ANS" || status="error: html-app-drive.js serve is gone"
	[ "$status" = ok ] && cat "$out"
	rm -f "$out"
	[ "$status" = ok ] || { echo "html-app-drive: $status" >&2; return 1; }
}
