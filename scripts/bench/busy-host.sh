#!/bin/bash
# busy-host.sh - what recording costs two real servers on this machine:
# PostgreSQL 15 under `pgbench -c 4 -j 2` and redis-server under
# `redis-benchmark -c 20 -t get`, both on loopback, both loading the host
# for the whole run.  WINDOW-second windows (default 8) with nothing
# recording alternate with windows where one recorder runs, ROUNDS times
# (default 3):
#   prof -a         `prof record -a` with its defaults (off-CPU on)
#   prof -p         `prof record -p REDIS,POSTMASTER --children`
#   prof -a nores   `prof record -a --no-resources` (CPU samples only)
#   prof -p nores   `prof record -p REDIS,POSTMASTER --children --no-resources`
#   prof -p thread  `prof record -p REDIS,POSTMASTER --children --per-thread`
#                   (events per thread, as perf opens them for -p; prof's
#                   default as root is per CPU; CONFIGS=prof_p_thread)
#   prof -a all     `prof record -a --offcpu-stacks=all` (every switch-out's stack)
#   prof -a rec     `prof record -a` timing off-CPU with PERF_RECORD_SWITCH
#                   instead of its in-kernel accountant
#                   (PROF_OFFCPU_SWITCH_RECORDS=1; CONFIGS=prof_a_rec)
#   prof -a norep   `prof record -a` with the off-CPU accountant's repeats
#                   off (PROF_OFFCPU_NO_REPEATS=1: every kept switch-out a
#                   full sample; CONFIGS=prof_a_norep, and prof_p_norep)
#   base -a, base -p  `prof record -a` and `prof record -p ... --children`
#                   of another build, BASE_PROF=path/to/prof (the one
#                   before a change, side by side in the same rounds;
#                   CONFIGS=base_a, base_p)
#   floor           the cpu-clock timer alone at 999 Hz on every CPU, with no
#                   ring buffer (timerfloor -a: no record, no stack, no
#                   recorder): what no sampler on this VM can cost less than
#                   (CONFIGS=floor)
#   sfloor          the same timer with what a DWARF sampler's samples carry
#                   (kernel callchain, user registers, 8 KiB of user stack)
#                   written to a ring per CPU, emptied unread (timerfloor -s
#                   8192 -a): the floor of any recorder of stacks at 999 Hz,
#                   with no recorder work (CONFIGS=sfloor)
#   burn            no recorder: a process that spins the CPU this run's
#                   last `prof -a` window used (BURN_CPU seconds, default
#                   0.5, before one ran), spread over the window in 1.25-ms
#                   slices (burn.c): what that much CPU alone costs the
#                   servers; put it after prof_a in CONFIGS (CONFIGS=burn;
#                   with STEADY, spread over the longer recording: more than
#                   a recorder spends in its middle)
#   perf -a         `perf record -a --call-graph dwarf -F 999`
#   perf -p         `perf record -p` the same processes (redis, the postmaster
#                   and its children: perf has no --children), dwarf 999 Hz
#                   (CONFIGS=perf_p)
# STEADY=S (seconds; default 0): each recorder runs WINDOW + 2 S seconds and
# the servers are counted over the WINDOW seconds in its middle, leaving
# out its start (loading its BPF programs, mapping its rings, reading
# every process) and its end (naming, writing): what a long recording
# costs them while it runs.  The recorder CPU is still the whole
# recording's.
# Figures, each a median over the rounds:
#   throughput      each server's own count over the window (redis:
#                   INFO total_commands_processed; postgres: pgbench's
#                   per-second progress, --progress-timestamp), over the
#                   mean of the two unrecorded windows around it; with
#                   its distribution-free 95% interval (lib.sh's
#                   median_ci), the goal (>= 0.95) is met when both
#                   servers' intervals lie at or above it, missed when
#                   either lies below, else "not resolved".  A window's
#                   ratio varies by ~0.06-0.12 (standard deviation) on this
#                   VM: 6 rounds give an interval, ~10-20 are needed to
#                   tell 0.95 from 0.90.
#   recorder CPU    the recorder's user+sys seconds (runstat) for one window
#   finish_task_switch  the share of the servers' CPU samples whose
#                   innermost frame is finish_task_switch (prof report; the
#                   perf.data through prof's own importer)
#   [stack lost], [stack not sampled]  shares of the servers' off-CPU time
#   CPU samples lost  per prof window, on its round's line (the report's
#                   "lost"): a recorder that does not keep up shows here
#   below ... in K of N rounds  for prof -a against the burner and against
#                   perf, --no-resources against the burner and prof -p
#                   against perf -p, where both ran: the rounds where the
#                   first cost the servers more (the geometric mean of
#                   their two ratios)
# Not a test: the VM is shared, so the load average is printed with the
# figures.  Needs root, perf, PostgreSQL 15 (/usr/lib/postgresql/15/bin)
# and redis; the servers are started on private ports and stopped at exit.
. "$(dirname "$0")/lib.sh"
bench_build
WINDOW=${WINDOW:-8}
STEADY=${STEADY:-0}
REC_S=$(awk -v w="$WINDOW" -v s="$STEADY" 'BEGIN {print w + 2 * s}')
ROUNDS=${ROUNDS:-3}
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
PGPORT=${PGPORT:-54329}
RPORT=${RPORT:-63799}
B="$BENCH_TMP/busy"
CONFIGS=${CONFIGS:-prof_a prof_p nores nores_p all perf}
case " $CONFIGS " in *" base_"*)
	[ -x "${BASE_PROF:-}" ] || { echo "busy-host.sh: base_a and base_p need BASE_PROF=path/to/prof" >&2; exit 2; } ;;
esac

[ "$(id -u)" = 0 ] || { echo "busy-host.sh: needs root (perf -a, the postgres user)" >&2; exit 1; }
for t in "$PGBIN/postgres" "$PGBIN/pgbench" redis-server redis-benchmark redis-cli perf; do
	command -v "$t" >/dev/null || { echo "busy-host.sh: $t is missing" >&2; exit 1; }
done
rm -rf "$B"
mkdir -p "$B"
chmod a+x "$BENCH_TMP"	# mktemp's 0700 keeps the postgres user out of $B
chown postgres "$B"

pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	runuser -u postgres -- "$PGBIN/pg_ctl" -D "$B/pg" -m fast stop >/dev/null 2>&1
	redis-cli -p "$RPORT" shutdown nosave >/dev/null 2>&1
	wait 2>/dev/null
}
trap cleanup EXIT

start_servers() {
	runuser -u postgres -- "$PGBIN/initdb" -D "$B/pg" -A trust -U postgres >"$B/initdb.log" 2>&1 &&
	runuser -u postgres -- "$PGBIN/pg_ctl" -D "$B/pg" -l "$B/pg.log" -w start \
		-o "-p $PGPORT -k $B -c listen_addresses=127.0.0.1 -c shared_buffers=64MB" >/dev/null &&
	"$PGBIN/pgbench" -i -q -s 4 -h 127.0.0.1 -p "$PGPORT" -U postgres postgres >"$B/init.log" 2>&1 ||
		{ echo "busy-host.sh: cannot start PostgreSQL (see $B)" >&2; exit 1; }
	redis-server --port "$RPORT" --bind 127.0.0.1 --save "" --appendonly no --daemonize yes \
		--logfile "$B/redis.log" >/dev/null && sleep 0.5 &&
	redis-cli -p "$RPORT" set key:__rand_int__ x >/dev/null ||
		{ echo "busy-host.sh: cannot start redis-server" >&2; exit 1; }
	POSTMASTER=$(head -1 "$B/pg/postmaster.pid")
	REDIS=$(redis-cli -p "$RPORT" info server | sed -n 's/^process_id:\([0-9]*\).*/\1/p')
}

start_load() {
	"$PGBIN/pgbench" -c 4 -j 2 -T 100000 -P 1 --progress-timestamp -h 127.0.0.1 -p "$PGPORT" \
		-U postgres postgres >/dev/null 2>"$B/pgbench.progress" &
	pids+=($!)
	redis-benchmark -p "$RPORT" -c 20 -t get -n 2000000000 -q >/dev/null 2>&1 &
	pids+=($!)
	sleep 3	# connections made, caches warm
}

redis_count() { redis-cli -p "$RPORT" info stats | sed -n 's/^total_commands_processed:\([0-9]*\).*/\1/p'; }
now() { date +%s.%N; }

# Postgres transactions per second in [from, to] from pgbench's progress lines
# ("progress: EPOCH s, TPS tps, ..."): the seconds that end inside the window.
pg_tps() {
	awk -v a="$1" -v b="$2" '/^progress:/ {t = $2 + 0; if (t > a + 0.5 && t <= b + 0.5) {s += $4; n++}}
		END {if (n) printf "%.1f", s / n; else print 0}' "$B/pgbench.progress"
}

# The recorder of a configuration, for one window, writing $B/rec.*.
recorder() {
	case $1 in
	prof_a) "$PROF" record -q -a -d "$REC_S" -o "$B/rec.prof" ;;
	prof_p) "$PROF" record -q -p "$REDIS,$POSTMASTER" --children -d "$REC_S" -o "$B/rec.prof" ;;
	nores) "$PROF" record -q -a --no-resources -d "$REC_S" -o "$B/rec.prof" ;;
	nores_p) "$PROF" record -q -p "$REDIS,$POSTMASTER" --children --no-resources -d "$REC_S" -o "$B/rec.prof" ;;
	all) "$PROF" record -q -a --offcpu-stacks=all -d "$REC_S" -o "$B/rec.prof" ;;
	prof_p_thread) "$PROF" record -q -p "$REDIS,$POSTMASTER" --children --per-thread -d "$REC_S" -o "$B/rec.prof" ;;
	perf_p) perf record -q -p "$REDIS,$POSTMASTER,$(pgrep -d, -P "$POSTMASTER")" --call-graph dwarf -F 999 \
			-o "$B/rec.perf" -- sleep "$REC_S" ;;
	prof_a_rec) PROF_OFFCPU_SWITCH_RECORDS=1 "$PROF" record -q -a -d "$REC_S" -o "$B/rec.prof" ;;
	base_a) "$BASE_PROF" record -q -a -d "$REC_S" -o "$B/rec.prof" ;;
	base_p) "$BASE_PROF" record -q -p "$REDIS,$POSTMASTER" --children -d "$REC_S" -o "$B/rec.prof" ;;
	prof_a_norep) PROF_OFFCPU_NO_REPEATS=1 "$PROF" record -q -a -d "$REC_S" -o "$B/rec.prof" ;;
	prof_p_norep) PROF_OFFCPU_NO_REPEATS=1 "$PROF" record -q -p "$REDIS,$POSTMASTER" --children -d "$REC_S" \
			-o "$B/rec.prof" ;;
	perf) perf record -q -a --call-graph dwarf -F 999 -o "$B/rec.perf" -- sleep "$REC_S" ;;
	floor) "$FLOOR" -a 999 sleep "$REC_S" ;;
	sfloor) "$FLOOR" -s 8192 -a 999 sleep "$REC_S" ;;
	burn) "$BURN" "$REC_S" "$BURN_CPU" ;;
	esac
}

declare -A redis pg cpu fts lost unsampled
# One window: nothing, or the recorder of config $1 under runstat, the
# servers counted from its start to its end, or with STEADY over the
# WINDOW seconds in its middle.
window() {	# config|bare
	local r0 r1 t0 t1 rec=
	rm -f "$B"/rec.*
	r0=$(redis_count); t0=$(now)
	if [ "$1" = bare ]; then
		sleep "$WINDOW"
	elif [ "$STEADY" = 0 ]; then
		"$RUNSTAT" bash -c 'recorder "$0"' "$1" >/dev/null 2>"$B/rec.err" 3>"$B/rec.stat"
	else
		"$RUNSTAT" bash -c 'recorder "$0"' "$1" >/dev/null 2>"$B/rec.err" 3>"$B/rec.stat" &
		rec=$!
		sleep "$STEADY"
		r0=$(redis_count); t0=$(now)
		sleep "$WINDOW"
	fi
	r1=$(redis_count); t1=$(now)
	[ -n "$rec" ] && wait "$rec"
	W_REDIS=$(awk -v a="$r0" -v b="$r1" -v s="$t0" -v e="$t1" 'BEGIN {printf "%.0f", (b - a) / (e - s)}')
	W_PG=$(pg_tps "$t0" "$t1")
}
export -f recorder
BURN_CPU=${BURN_CPU:-0.5}
export PROF BASE_PROF FLOOR BURN BURN_CPU REC_S B REDIS POSTMASTER

# Shares from a recording: finish_task_switch in the servers' CPU samples
# (the innermost frame but the interrupt-enabling helpers it calls, where a
# paravirtualized kernel's samples land: pvm_irq_enable and its callee-save
# thunk),
# [stack lost] and [stack not sampled] in their off-CPU time.
shares() {	# file config
	local f=$1
	"$PROF" report -i "$f" --format=folded 2>/dev/null |
		awk '$1 ~ /^(postgres|redis-server)[;]/ {n = $NF; t += n; $NF = ""; k = split($0, a, ";");
			sub(/ +$/, "", a[k]); while (k > 1 && a[k] ~ /irq_enable|irqrestore|^__raw_callee_save_/) k--;
			if (a[k] ~ /^finish_task_switch/) f += n}
			END {printf "%.2f", t ? 100 * f / t : 0}'
	echo -n " "
	"$PROF" report -i "$f" --format=folded --metric=off-cpu 2>/dev/null |
		awk '$1 ~ /^(postgres|redis-server)[;]/ {t += $NF; if ($0 ~ /\[stack lost\]/) l += $NF;
			if ($0 ~ /\[stack not sampled\]/) u += $NF}
			END {printf "%.2f %.2f", t ? 100 * l / t : 0, t ? 100 * u / t : 0}'
}

start_servers
start_load
echo "# busy host: load average at start $(cut -d' ' -f1-3 /proc/loadavg); redis pid $REDIS, postmaster $POSTMASTER" >&2
for round in $(seq "$ROUNDS"); do
	window bare
	prev_r=$W_REDIS prev_p=$W_PG
	for c in $CONFIGS; do
		window "$c"
		cr=$W_REDIS cp=$W_PG
		rc=$(awk '{print $1}' "$B/rec.stat")
		cpu[$c]+="$rc "
		[ "$c" = prof_a ] && BURN_CPU=$rc
		f="$B/rec.prof"
		[ "${c%_p}" = perf ] && f="$B/rec.perf"
		s=- l=- u=- cl=-
		[ "$c" = floor ] || [ "$c" = sfloor ] || [ "$c" = burn ] || read -r s l u <<<"$(shares "$f")"
		[ "$f" = "$B/rec.prof" ] && [ -s "$f" ] && cl=$(prof_lost "$f")	# floor, sfloor and burn record nothing
		[ -n "${KEEP:-}" ] && cp "$f" "$KEEP/$c.$round.data"
		fts[$c]+="$s "
		lost[$c]+="$l "
		unsampled[$c]+="$u "
		rm -f "$B"/rec.*
		window bare
		redis[$c]+="$(awk -v x="$cr" -v a="$prev_r" -v b="$W_REDIS" 'BEGIN {print 2 * x / (a + b)}') "
		pg[$c]+="$(awk -v x="$cp" -v a="$prev_p" -v b="$W_PG" 'BEGIN {print 2 * x / (a + b)}') "
		echo "# round $round $c: redis $cr/s, postgres $cp tps (around: $prev_r..$W_REDIS, $prev_p..$W_PG); cpu $rc s; finish_task_switch $s%, stack lost $l%, not sampled $u%, CPU samples lost $cl; load $(cut -d' ' -f1 /proc/loadavg)" >&2
		prev_r=$W_REDIS prev_p=$W_PG
	done
done
lines() { echo "$1" | tr ' ' '\n' | grep .; }	# a list of figures, one a line
m() { lines "$1" | median; }
name() { case $1 in prof_a) echo "prof -a";; prof_p) echo "prof -p --children";; nores) echo "prof -a --no-resources";;
	nores_p) echo "prof -p --children --no-resources";; prof_p_thread) echo "prof -p --children --per-thread";;
	perf_p) echo "perf -p dwarf 999 Hz";;
	base_a) echo "prof -a, $BASE_PROF";; base_p) echo "prof -p --children, $BASE_PROF";;
	prof_a_norep) echo "prof -a, no repeats";; prof_p_norep) echo "prof -p --children, no repeats";;
	all) echo "prof -a --offcpu-stacks=all";; floor) echo "the 999 Hz timer alone, -a";;
	sfloor) echo "the timer and 8-KiB stack samples, no recorder, -a";;
	burn) echo "no recorder, a burner of prof -a's CPU";; prof_a_rec) echo "prof -a, switch records";; perf) echo "perf -a dwarf 999 Hz";; esac; }
ci() { lines "$1" | median_ci %.3f; }
both() {	# two at_least verdicts -> one: NO if either is, yes if both are
	case "$1 $2" in *NO*) echo NO ;; "yes yes") echo yes ;; *) echo "not resolved" ;; esac
}
for c in $CONFIGS; do
	rci=$(ci "${redis[$c]}") pci=$(ci "${pg[$c]}")
	row "busy host: $(name "$c")" "redis / postgres / unrecorded" "" \
		"$(printf '%.3f / %.3f' "$(m "${redis[$c]}")" "$(m "${pg[$c]}")")" "" \
		"$(both "$(at_least 0.95 <<<"$rci")" "$(at_least 0.95 <<<"$pci")")"
	echo "# $(name "$c"): redis $rci, postgres $pci (median [95% interval], ${ROUNDS} rounds)" >&2
done
ran() { local c; for c; do [[ " $CONFIGS " == *" $c "* ]] || return 1; done; }	# configs all run
# Rounds where config A cost the servers more than config B did in the
# same round (the geometric mean of the two servers' ratios): a sign
# test, which the drift between rounds does not blur as it does each
# config's own interval.
paired() {	# A B
	echo "# $(name "$1") below $(name "$2"), both servers' geometric mean, in $(paste -d' ' \
		<(lines "${redis[$1]}") <(lines "${pg[$1]}") <(lines "${redis[$2]}") <(lines "${pg[$2]}") |
		awk '{n++; if ($1 * $2 < $3 * $4) k++} END {printf "%d of %d rounds", k, n}')" >&2
}
for pair in "prof_a burn" "prof_a perf" "nores burn" "prof_p perf_p"; do
	ran $pair && paired $pair
done
pc=$(m "${cpu[perf]:-}")
for c in prof_a prof_p prof_a_norep prof_p_norep; do
	ran "$c" perf || continue
	row "busy host: recorder CPU" "s per ${REC_S} s, $(name "$c")" "$pc" "$(m "${cpu[$c]}")" \
		"$(ratio "$(m "${cpu[$c]}")" "$pc")" "$(verdict "$(m "${cpu[$c]}") <= 2 * $pc")"
done
ran prof_a nores perf && row "busy host: finish_task_switch" "% of servers' CPU samples, -a" "$(m "${fts[perf]}")" \
	"$(m "${fts[prof_a]}") (nores $(m "${fts[nores]}"))" "" \
	"$(verdict "$(m "${fts[prof_a]}") - $(m "${fts[nores]}") <= 2")"
ran prof_p nores_p && row "busy host: finish_task_switch" "% of servers' CPU samples, -p" "" \
	"$(m "${fts[prof_p]}") (nores $(m "${fts[nores_p]}"))" "" \
	"$(verdict "$(m "${fts[prof_p]}") - $(m "${fts[nores_p]}") <= 2")"
for c in prof_a_norep prof_p_norep; do
	n=nores; [ "$c" = prof_p_norep ] && n=nores_p
	ran "$c" "$n" && row "busy host: finish_task_switch" "% of servers' CPU samples, $(name "$c")" "" \
		"$(m "${fts[$c]}") (nores $(m "${fts[$n]}"))" "" "info"
done
for c in prof_a prof_p; do
	ran "$c" || continue
	row "busy host: [stack lost]" "% of servers' off-CPU, $(name "$c")" "" "$(m "${lost[$c]}")" "" \
		"$(verdict "$(m "${lost[$c]}") < 1")"
	row "busy host: [stack not sampled]" "% of servers' off-CPU, $(name "$c")" "" "$(m "${unsampled[$c]}")" "" "info"
done
echo "# busy host: load average at end $(cut -d' ' -f1-3 /proc/loadavg); ${ROUNDS} rounds of ${WINDOW} s windows; --offcpu-stacks=all: redis $(m "${redis[all]:-}"), postgres $(m "${pg[all]:-}"), cpu $(m "${cpu[all]:-}") s, finish_task_switch $(m "${fts[all]:-}")%" >&2
