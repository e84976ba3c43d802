# fault-lib.sh - shared set-up of the fault-injection tests (t8*-*.sh):
# builds tests/fault/churn.c and its dlopen library into $TRASH, and small
# helpers to read `prof report --format=json` without hand-parsing JSON.
# Source it after tests/lib/test-lib.sh.

FAULT="$TOP/tests/fault"
CHURN="$TRASH/churn"
CHURN_LIB="$TRASH/libchurn_dl.so"

build_churn() {
	${CC:-cc} -O1 -g -fno-omit-frame-pointer -pthread -o "$CHURN" "$FAULT/churn.c" -ldl &&
	${CC:-cc} -O1 -g -fPIC -shared -o "$CHURN_LIB" "$FAULT/churn_dl.c"
}
build_churn || skip_all "cannot build tests/fault/churn.c (no C compiler?)"

# json_field FILE EXPR: print a python expression over the report j.
json_field() {
	python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

# The pid of the (first) child of a process, waiting up to ~5 s for it.
child_of() {
	local i c
	for i in $(seq 50); do
		c=$(pgrep -P "$1" | head -n 1)
		[ -n "$c" ] && { echo "$c"; return 0; }
		sleep 0.1
	done
	return 1
}

# Wait until FILE has at least BYTES bytes (a flush happened), up to ~10 s.
wait_size() {
	local i
	for i in $(seq 100); do
		[ "$(stat -c %s "$1" 2>/dev/null || echo 0)" -ge "$2" ] && return 0
		sleep 0.1
	done
	return 1
}

# Wait (up to ~20 s) until FILE has grown twice after it first appeared:
# prof flushes about once a second, so two growths mean at least one full
# flush of samples (robust on a loaded machine, unlike a fixed sleep).
wait_flushes() {
	local i size last=0 growths=0
	for i in $(seq 200); do
		size=$(stat -c %s "$1" 2>/dev/null || echo 0)
		if [ "$last" -gt 0 ] && [ "$size" -gt "$last" ]; then
			growths=$((growths + 1))
			[ $growths -ge 2 ] && return 0
		fi
		last=$size
		sleep 0.1
	done
	return 1
}
