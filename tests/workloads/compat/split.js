// split.js - the Node kind of the compatibility matrix (tests/t1200): the
// known 60:30:10 split in three JIT-compiled functions, named to prof and
// perf by node's --perf-basic-prof map (/tmp/perf-PID.map).
// Truth (self): alpha 60%, beta 30%, gamma 10%.  Usage: node split.js [SECONDS=2]
'use strict';
let sink = 0;
function alpha(n) { let x = 0xa | 0; for (let i = 0; i < n; i++) x = (Math.imul(x, 1103515245) + 12345) | 0; return x; }
function beta(n) { let x = 0xb | 0; for (let i = 0; i < n; i++) x = (Math.imul(x, 1103515245) + 12345) | 0; return x; }
function gamma(n) { let x = 0xc | 0; for (let i = 0; i < n; i++) x = (Math.imul(x, 1103515245) + 12345) | 0; return x; }
const secs = parseFloat(process.argv[2] || '2');
const end = Date.now() + secs * 1000;
while (Date.now() < end) {
  sink ^= alpha(600000);
  sink ^= beta(300000);
  sink ^= gamma(100000);
}
console.log('split.js', sink & 1);
