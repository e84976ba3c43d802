# node-tools.sh - the npm packages some tests check prof's output with
# (speedscope's schema + ajv, playwright-core), installed on first use
# into build/node from tests/node/package.json.  Source after test-lib.sh:
#   . "$TOP/tests/lib/node-tools.sh"
#   require_node_tools              skip the whole script if unavailable
#   node_tools_ready || test_skip "title" "$NODE_TOOLS_WHY"
#   q FILE EXPR                     a python expression over a driver's JSON
#                                   output (d) must be true
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
