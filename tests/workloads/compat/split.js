// split.js - the Node kind of the compatibility matrix (tests/t1200): the
// known 60:30:10 split in three JIT-compiled functions, named to prof and
// perf by node's --perf-basic-prof map (/tmp/perf-PID.map).
// Truth (self): alpha 60%, beta 30%, gamma 10%.  Usage: node split.js [CPU-SECONDS=2]
'use strict';
let sink = 0;
function alpha(n) { let x = 0xa | 0; for (let i = 0; i < n; i++) x = (Math.imul(x, 1103515245) + 12345) | 0; return x; }
function beta(n) { let x = 0xb | 0; for (let i = 0; i < n; i++) x = (Math.imul(x, 1103515245) + 12345) | 0; return x; }
function gamma(n) { let x = 0xc | 0; for (let i = 0; i < n; i++) x = (Math.imul(x, 1103515245) + 12345) | 0; return x; }
const secs = parseFloat(process.argv[2] || '2');
// a budget of CPU time (microseconds), as ../wl.h's wl_cpu_now: a loaded
// machine stretches the run instead of starving it of samples
const cpuNow = () => { const u = process.cpuUsage(); return u.user + u.system; };
const end = cpuNow() + secs * 1e6;
// rounds of varying length (as wl_round_permille in ../wl.h): a fixed-length
// round can alias with the sampling clock.  A 31-bit LCG, fixed seed.
let state = 12345;
while (cpuNow() < end) {
  state = (Math.imul(state, 1103515245) + 12345) & 0x7fffffff;
  const unit = 100 * (500 + (state >>> 8) % 1000);
  sink ^= alpha(6 * unit);
  sink ^= beta(3 * unit);
  sink ^= gamma(unit);
}
console.log('split.js', sink & 1);
