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
}

fn main() {
    for n in [4usize, 8, 16, 32] {
        let a = vec![0.5f64; n * n];
        let b = vec![0.25f64; n * n];
        let mut c = vec![0.0f64; n * n];
        let reps = 200_000 / n;
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
        println!("n={n}: engine {:.0} ns, cblas_dgemm {:.0} ns per call", engine * 1e9, whole * 1e9);
    }
}
