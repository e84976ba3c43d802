// planted.rs - the Rust counterpart of planted.c's "cpu" mode, for checking
// that `prof diff` and `prof crosscheck` join two Rust builds whose symbol
// hashes differ (built with different `-C metadata`, as two cargo builds of
// different dependency graphs are).
//
//   planted-rs PCT [SCALE]   hot() does PCT% more serial ALU work than in
//                            a PCT = 0 run; steady() never changes
//
// The amount of work is FIXED for a given (PCT, SCALE), so absolute time
// per function is comparable across runs.  Used by tests/t6002-*.sh.
use std::hint::black_box;

// A serial multiply-add chain: time is proportional to iterations.
#[inline(never)]
fn hot(iters: u64) -> u64 {
    let mut x = 3u64;
    for _ in 0..iters {
        x = black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407));
    }
    x
}

#[inline(never)]
fn steady(iters: u64) -> u64 {
    let mut x = 7u64;
    for _ in 0..iters {
        x = black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407));
    }
    x
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let pct: f64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(0.0);
    let scale: f64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1.0);
    let h = hot((400e6 * scale * (100.0 + pct) / 100.0) as u64);
    let s = steady((200e6 * scale) as u64);
    println!("{}", h ^ s);
}
