//! The accurate DGEMM's first form (every slice product, exact sum) against native DGEMM on one
//! machine: n x n x n, entries (U - 0.5) * exp(phi * N(0, 1)), best of three each.
//!   cargo run --release --example ozaki_cost -- 256 1024      (phi: PHI=0.5 by default)
use hyblas::types::Trans;
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
    let phi: f64 = std::env::var("PHI").ok().and_then(|v| v.parse().ok()).unwrap_or(0.5);
    let rounding = match std::env::var("ROUNDING").as_deref() {
        Ok("nearest") => hyblas::plan::accurate::Rounding::Nearest,
        _ => hyblas::plan::accurate::Rounding::Faithful,
    };
    let mut sizes: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    if sizes.is_empty() {
        sizes = vec![256, 512, 1024];
    }
    let mut state = 0x2545f4914f6cdd1du64;
    let mut unit = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    for n in sizes {
        let mut gen = || {
            let (u1, u2) = (unit().max(1e-300), unit());
            let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
            (unit() - 0.5) * (phi * z).exp()
        };
        let a: Vec<f64> = (0..n * n).map(|_| gen()).collect();
        let b: Vec<f64> = (0..n * n).map(|_| gen()).collect();
        let mut c = vec![0.0f64; n * n];
        let ni = n as i32;
        let best = |f: &mut dyn FnMut()| {
            (0..3)
                .map(|_| {
                    let t = Instant::now();
                    f();
                    t.elapsed().as_secs_f64()
                })
                .fold(f64::MAX, f64::min)
        };
        let native = best(&mut || unsafe {
            cblas_dgemm(102, 111, 111, ni, ni, ni, 1.0, a.as_ptr(), ni, b.as_ptr(), ni, 0.0, c.as_mut_ptr(), ni)
        });
        let mut rep = Default::default();
        let accurate = best(&mut || unsafe {
            rep = hyblas::plan::accurate::dgemm(
                rounding,
                Trans::No,
                Trans::No,
                n,
                n,
                n,
                1.0,
                a.as_ptr(),
                n,
                b.as_ptr(),
                n,
                0.0,
                c.as_mut_ptr(),
                n,
            );
        });
        println!(
            "n={n} phi={phi} {rounding:?}: native {:.2} ms, accurate {:.2} ms ({:.1}x; {rep:?})",
            native * 1e3,
            accurate * 1e3,
            accurate / native,
        );
    }
}
