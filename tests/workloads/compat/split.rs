// split.rs - the Rust kind of the compatibility matrix (tests/t1200): the
// known 60:30:10 split of split.c in a trait impl on a generic type, a
// module function and a closure, built with rustc's default linker
// (rust-lld), the system linker and v0 mangling.
// Truth (self): <rsplit::Weighted<u64> as rsplit::Scorer>::score 60%,
// rsplit::work::beta 30%, rsplit::main::{closure#N} 10% (legacy mangling
// says rsplit::main::{{closure}}; prof takes N from DWARF).  Usage: rsplit [CPU-SECONDS=2]
// The process's CPU time, as ../wl.h's wl_cpu_now: the run is a budget of
// CPU time, so a loaded machine stretches it instead of starving it of
// samples.  clock_gettime from the C library every Rust program links.
#[repr(C)]
struct Timespec {
    tv_sec: i64,
    tv_nsec: i64,
}
extern "C" {
    fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
}
fn cpu_now() -> f64 {
    let mut ts = Timespec { tv_sec: 0, tv_nsec: 0 };
    unsafe { clock_gettime(2 /* CLOCK_PROCESS_CPUTIME_ID */, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}

trait Scorer {
    fn score(&self, n: u64) -> u64;
}
struct Weighted<T>(T);

// A plain xorshift loop, as a macro: no function (and so no inlined
// frame) of its own, the hot code belongs to each caller.
macro_rules! burn {
    ($n:expr, $seed:expr) => {{
        let (n, mut x, mut i) = ($n, $seed | 1u64, 0u64);
        while i < n {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            i += 1;
        }
        x
    }};
}

impl Scorer for Weighted<u64> {
    #[inline(never)]
    fn score(&self, n: u64) -> u64 {
        burn!(n, self.0)
    }
}

mod work {
    #[inline(never)]
    pub fn beta(n: u64) -> u64 {
        burn!(n, 0xb)
    }
}

fn main() {
    let secs: f64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(2.0);
    let end = cpu_now() + secs;
    let w = Weighted(0xau64);
    // called through &dyn Fn: the closure keeps its own code and name
    let gamma: &dyn Fn(u64) -> u64 = &|n: u64| burn!(n, 0xc);
    let mut acc = 0u64;
    // rounds of varying length (as wl_round_permille in ../wl.h): a
    // fixed-length round can alias with the sampling clock
    let mut state = 0x9e3779b97f4a7c15u64;
    while cpu_now() < end {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let unit = 300 * (500 + (state >> 33) % 1000);
        acc ^= std::hint::black_box(&w).score(std::hint::black_box(6 * unit));
        acc ^= work::beta(std::hint::black_box(3 * unit));
        acc ^= std::hint::black_box(gamma)(std::hint::black_box(unit));
    }
    println!("rsplit {}", acc & 1);
}
