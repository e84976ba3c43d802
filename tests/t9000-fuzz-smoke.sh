#!/bin/bash
# t9000-fuzz-smoke: run every libFuzzer target briefly over its seed corpus
# (plus new inputs for FUZZ_SECONDS, default 10).  Long runs: scripts/fuzz.sh.
. "$(dirname "$0")/lib/test-lib.sh"

secs=${FUZZ_SECONDS:-10}
found=0
for bin in "$TOP"/build/fuzz/fuzz_*; do
	[ -x "$bin" ] || continue
	found=1
	name=$(basename "$bin")
	corpus="$TOP/tests/fuzz/corpus/${name#fuzz_}"
	mkdir -p "$TRASH/$name"
	test_expect_success "$name runs ${secs}s without a crash" "
		'$bin' -max_total_time=$secs -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
			-artifact_prefix='$TRASH/$name/' '$TRASH/$name' '$corpus' 2>&1 | tail -n 12
		test \${PIPESTATUS[0]} = 0
	"
done
[ $found = 1 ] || skip_all "no fuzz targets built (make fuzz needs clang)"
test_done
