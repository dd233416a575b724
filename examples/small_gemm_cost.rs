//! Where a tiny GEMM's time goes: the CPU engine called directly (one thread) against the
//! exported `cblas_dgemm` (checks, the planner, the engine), n x n x n, per call.
//!   cargo run --release --example small_gemm_cost
use hyblas::cpu::level3::gemm::gemm_with;
use hyblas::types::{MatMut, MatRef, Trans};
use std::time::Instant;

extern "C" {
    fn cblas_dgemm(
        l: i32,
        ta: i32,
        tb: i32,
        m: i32,
        n: i32,
        k: i32,
        al: f64,
        a: *const f64,
        lda: i32,
        b: *const f64,
        ldb: i32,
        be: f64,
        c: *mut f64,
        ldc: i32,
    );
    fn cblas_dgemm_batch_strided(
        l: i32,
        ta: i32,
        tb: i32,
        m: i32,
        n: i32,
        k: i32,
        al: f64,
        a: *const f64,
        lda: i32,
        sa: i32,
        b: *const f64,
        ldb: i32,
        sb: i32,
        be: f64,
        c: *mut f64,
        ldc: i32,
        sc: i32,
        count: i32,
    );
}

fn main() {
    // Sizes from the command line (`-- 4` for a profile of one), else 4, 8, 16, 32.
    let mut sizes: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    if sizes.is_empty() {
        sizes = vec![4, 8, 16, 32];
    }
    for n in sizes {
        let a = vec![0.5f64; n * n];
        let b = vec![0.25f64; n * n];
        let mut c = vec![0.0f64; n * n];
        // BATCH_ONLY=1: time the batch alone (for a profile of it).
        let reps = if std::env::var_os("BATCH_ONLY").is_some() { 0 } else { 2_000_000 / n };
        let t = Instant::now();
        for _ in 0..reps {
            unsafe {
                let (av, ca) = MatRef::op(a.as_ptr(), Trans::No, n, n, n);
                let (bv, cb) = MatRef::op(b.as_ptr(), Trans::No, n, n, n);
                let cv = MatMut::col_major(c.as_mut_ptr(), n, n, n);
                gemm_with(1, 1.0, av, ca, bv, cb, 0.0, cv);
            }
        }
        let engine = t.elapsed().as_secs_f64() / reps as f64;
        let t = Instant::now();
        for _ in 0..reps {
            let ni = n as i32;
            unsafe {
                cblas_dgemm(102, 111, 111, ni, ni, ni, 1.0, a.as_ptr(), ni, b.as_ptr(), ni, 0.0, c.as_mut_ptr(), ni)
            };
        }
        let whole = t.elapsed().as_secs_f64() / reps as f64;
        // The same products as one strided batch of 10^4 (fresh operands each).
        let count: usize = std::env::var("COUNT").ok().and_then(|v| v.parse().ok()).unwrap_or(10_000);
        let (ab, bb) = (vec![0.5f64; n * n * count], vec![0.25f64; n * n * count]);
        let mut cb = vec![0.0f64; n * n * count];
        let (ni, s) = (n as i32, (n * n) as i32);
        let rounds = (2_000_000 / n / count).max(5);
        // LOOP_ONLY=1: the batch's first (untimed) round only, then the loop (for a profile of it).
        let loop_only = std::env::var_os("LOOP_ONLY").is_some();
        let mut t = Instant::now();
        for r in 0..=if loop_only { 0 } else { rounds } {
            if r == 1 {
                // The first round touched C's fresh pages: not timed.
                t = Instant::now();
            }
            unsafe {
                cblas_dgemm_batch_strided(
                    102,
                    111,
                    111,
                    ni,
                    ni,
                    ni,
                    1.0,
                    ab.as_ptr(),
                    ni,
                    s,
                    bb.as_ptr(),
                    ni,
                    s,
                    0.0,
                    cb.as_mut_ptr(),
                    ni,
                    s,
                    count as i32,
                )
            };
        }
        let batch = t.elapsed().as_secs_f64() / (rounds * count) as f64;
        // The same fresh products as a loop of single calls.
        let t = Instant::now();
        for _ in 0..if std::env::var_os("BATCH_ONLY").is_some() { 0 } else { rounds } {
            for p in 0..count {
                let o = p * n * n;
                unsafe {
                    cblas_dgemm(
                        102,
                        111,
                        111,
                        ni,
                        ni,
                        ni,
                        1.0,
                        ab[o..].as_ptr(),
                        ni,
                        bb[o..].as_ptr(),
                        ni,
                        0.0,
                        cb[o..].as_mut_ptr(),
                        ni,
                    )
                };
            }
        }
        let lp = t.elapsed().as_secs_f64() / (rounds * count) as f64;
        println!(
            "n={n}: engine {:.0} ns, cblas_dgemm {:.0} ns, in a strided batch {:.0} ns per product, a loop of cblas_dgemm on them {:.0} ns",
            engine * 1e9,
            whole * 1e9,
            batch * 1e9,
            lp * 1e9
        );
    }
}
