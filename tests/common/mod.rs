//! Shared helpers for the integration tests: random data, a poison value, tolerances.
#![allow(dead_code)]

use hyblas::gpu::{DeviceBuffer, In};
use hyblas::types::{Scalar, Trans, C32, C64};

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

// ---- Device-side helpers of the GPU tests (split-k, GEMV/GER) ----

pub fn nan<T: Scalar>() -> T {
    T::from_parts(<T::Real as Scalar>::from_f64(f64::NAN), <T::Real as Scalar>::from_f64(f64::NAN))
}

pub fn es<T>() -> u64 {
    std::mem::size_of::<T>() as u64
}

pub fn same_bits<T: Copy>(a: &[T], b: &[T]) -> bool {
    let bytes = |v: &[T]| unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, std::mem::size_of_val(v)) };
    bytes(a) == bytes(b)
}

pub fn scalar_of<T: Scalar>(kind: u8, rng: &mut Rng) -> T {
    match kind {
        0 => T::zero(),
        1 => T::one(),
        _ => rng.scalar(),
    }
}

pub fn tchar(t: Trans) -> u8 {
    match t {
        Trans::No => b'N',
        Trans::Trans => b'T',
        Trans::ConjTrans => b'C',
    }
}

/// Upload `v`; the operand starts `off` elements in.
pub struct Dev {
    pub buf: DeviceBuffer,
    pub off: usize,
}

impl Dev {
    pub fn new<T: Copy>(v: &[T], off: usize) -> Dev {
        Dev { buf: DeviceBuffer::from_slice(v).expect("upload"), off }
    }
    pub fn ptr<T>(&self) -> u64 {
        self.buf.ptr + self.off as u64 * es::<T>()
    }
}

/// Scalars as the call takes them, with the device copies kept alive.
pub struct Scalars<T> {
    pub alpha: In<T>,
    pub beta: In<T>,
    _keep: Vec<DeviceBuffer>,
}

pub fn scalars<T: Scalar>(alpha: T, beta: T, dev: bool) -> Scalars<T> {
    if dev {
        let (a, b) = (DeviceBuffer::from_slice(&[alpha]).unwrap(), DeviceBuffer::from_slice(&[beta]).unwrap());
        Scalars { alpha: In::Dev(a.ptr), beta: In::Dev(b.ptr), _keep: vec![a, b] }
    } else {
        Scalars { alpha: In::Host(alpha), beta: In::Host(beta), _keep: vec![] }
    }
}

// ---- Batched GEMM: C's of `count` products, m x n each with leading dimension ldc, `stride`
// elements apart in one buffer ----

/// NaN in every product's m x n elements (beta 0 must overwrite them); the padding keeps its values.
pub fn nan_products<T: Scalar>(c: &mut [T], count: usize, stride: usize, ldc: usize, m: usize, n: usize) {
    for p in 0..count {
        for j in 0..n {
            for i in 0..m {
                c[p * stride + i + j * ldc] = nan();
            }
        }
    }
}

/// Everything outside the products' m x n elements (rows past m, the gaps between products)
/// has `before`'s bits.
pub fn assert_padding_kept<T: Scalar>(
    got: &[T],
    before: &[T],
    stride: usize,
    ldc: usize,
    m: usize,
    n: usize,
    what: &str,
) {
    for (e, (g, w)) in got.iter().zip(before).enumerate() {
        let (r, inside) = (e % stride, e % stride < ldc * n);
        if !inside || r % ldc >= m {
            assert!(same_bits(&[*g], &[*w]), "{what}: padding element {e} written");
        }
    }
}

// ---- The accurate GEMM's tests (tests/ozaki.rs, accurate_api.rs, gpu_ozaki.rs) ----

extern "C" {
    /// hyblas's own CBLAS DGEMM (the test links the library).
    pub fn cblas_dgemm(
        l: std::ffi::c_int,
        ta: std::ffi::c_int,
        tb: std::ffi::c_int,
        m: std::ffi::c_int,
        n: std::ffi::c_int,
        k: std::ffi::c_int,
        al: f64,
        a: *const f64,
        lda: std::ffi::c_int,
        b: *const f64,
        ldb: std::ffi::c_int,
        be: f64,
        c: *mut f64,
        ldc: std::ffi::c_int,
    );
    /// hyblas's own CBLAS ZGEMM (the signature tests/batch.rs and tests/gpu_offload.rs declare).
    pub fn cblas_zgemm(
        l: std::ffi::c_int,
        ta: std::ffi::c_int,
        tb: std::ffi::c_int,
        m: std::ffi::c_int,
        n: std::ffi::c_int,
        k: std::ffi::c_int,
        al: *const C64,
        a: *const C64,
        lda: std::ffi::c_int,
        b: *const C64,
        ldb: std::ffi::c_int,
        be: *const C64,
        c: *mut C64,
        ldc: std::ffi::c_int,
    );
}

/// Entries (U - 0.5) * exp(phi * N(0, 1)) (the inputs; phi = 8 spans about 2^±35).
pub fn lognormal(rng: &mut Rng, len: usize, phi: f64) -> Vec<f64> {
    (0..len)
        .map(|_| {
            // Uniforms in [0, 1) (rng.unit() is in [-1, 1)).
            let mut u = || (rng.unit() + 1.0) * 0.5;
            let (u1, u2) = (u().max(1e-300), u());
            let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
            (u() - 0.5) * (phi * z).exp()
        })
        .collect()
}

/// The seed's test matrices: A = identity with 10% of its entries replaced by U(0,1), B its
/// inverse (Gauss-Jordan here), so A*B is the identity up to rounding and every off-diagonal
/// element is a cancellation.
pub fn seed_pair(rng: &mut Rng, n: usize) -> (Vec<f64>, Vec<f64>) {
    let mut a = vec![0.0; n * n];
    for i in 0..n {
        a[i + i * n] = 1.0;
    }
    for _ in 0..n * n / 10 {
        let at = (rng.next_u64() % (n * n) as u64) as usize;
        a[at] = (rng.unit() + 1.0) * 0.5;
    }
    // Gauss-Jordan with partial pivoting on [A | I].
    let mut w = a.clone();
    let mut inv = vec![0.0; n * n];
    for i in 0..n {
        inv[i + i * n] = 1.0;
    }
    for col in 0..n {
        let p = (col..n).max_by(|&x, &y| w[x + col * n].abs().total_cmp(&w[y + col * n].abs())).unwrap();
        for j in 0..n {
            w.swap(col + j * n, p + j * n);
            inv.swap(col + j * n, p + j * n);
        }
        let d = w[col + col * n];
        for j in 0..n {
            w[col + j * n] /= d;
            inv[col + j * n] /= d;
        }
        for r in 0..n {
            let f = w[r + col * n];
            if r == col || f == 0.0 {
                continue;
            }
            for j in 0..n {
                w[r + j * n] -= f * w[col + j * n];
                inv[r + j * n] -= f * inv[col + j * n];
            }
        }
    }
    (a, inv)
}
