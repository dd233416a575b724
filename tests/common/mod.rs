//! Shared helpers for the integration tests: random data, a poison value, tolerances.
#![allow(dead_code)]

use hyblas::types::{Scalar, C32, C64};

/// Small deterministic generator (xorshift64*), seeded per test so failures reproduce.
pub struct Rng(u64);
impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E3779B97F4A7C15) | 1)
    }
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545F4914F6CDD1D)
    }
    /// Uniform in [-1, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    }
    pub fn scalar<T: Scalar>(&mut self) -> T {
        T::from_parts(
            <T::Real as Scalar>::from_f64(self.unit()),
            <T::Real as Scalar>::from_f64(if T::IS_COMPLEX { self.unit() } else { 0.0 }),
        )
    }
    pub fn vec<T: Scalar>(&mut self, n: usize) -> Vec<T> {
        (0..n).map(|_| self.scalar()).collect()
    }
}

/// A value no correct routine produces, written into outputs before a call.
pub fn poison<T: Scalar>() -> T {
    T::from_parts(<T::Real as Scalar>::from_f64(-7.77e5), <T::Real as Scalar>::from_f64(3.33e5))
}

/// Relative tolerance for results of `k`-term sums in precision T.
pub fn tol<T: Scalar>(k: usize) -> f64 {
    let eps = if std::mem::size_of::<T::Real>() == 4 { 1.2e-7 } else { 2.3e-16 };
    eps * 16.0 * (k.max(1) as f64 + 4.0)
}

pub fn to_c64<T: Scalar>(v: T) -> C64 {
    use hyblas::types::Real;
    C64::new(v.re().to_f64(), v.im().to_f64())
}

/// Assert |got - want| <= tol * scale elementwise, where scale = max(1, |want|_max).
pub fn assert_close<T: Scalar>(got: &[T], want: &[T], k: usize, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    let scale = want.iter().map(|&w| to_c64(w).norm()).fold(1.0f64, f64::max);
    let t = tol::<T>(k) * scale;
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let (g, w) = (to_c64(g), to_c64(w));
        let same_nan = g.re.is_nan() && w.re.is_nan() || g.im.is_nan() && w.im.is_nan();
        if same_nan {
            continue;
        }
        assert!((g - w).norm() <= t || g == w, "{what}: element {i}: got {g}, want {w} (tol {t:e})");
    }
}

pub type Cf = C32;
pub type Cd = C64;

/// The GPU runtime, or `None` after printing a visible SKIPPED line (no driver or device).
pub fn gpu_or_skip(test: &str) -> Option<&'static hyblas::gpu::Runtime> {
    match hyblas::gpu::Runtime::get(0) {
        Ok(rt) => {
            rt.bind().expect("cuCtxSetCurrent");
            Some(rt)
        }
        Err(e) => {
            // Straight to stderr, past the test harness's output capture, so the skip is seen.
            use std::io::Write;
            let _ = writeln!(std::io::stderr(), "SKIPPED {test}: {e}");
            None
        }
    }
}
