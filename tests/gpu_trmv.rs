//! GPU TRMV (`hyblas::gpu::trmv::trmv`) against the CPU engine (the exported `?trmv_`
//! Fortran symbols) on fresh random data: every uplo x trans x diag and precision, sizes
//! around the kernels' panels, segments and 16-byte groups, strided and negative increments,
//! leading dimensions with padding rows. Everything the routine must not read (the other
//! triangle, the padding rows, a unit diagonal) is NaN, and the gaps of strided x are poisoned
//! and must come back unchanged. Plus a misaligned case (element loads, packed x), a case over
//! 2^31 bytes, and bitwise determinism across block shapes.
//!
//! Without a GPU every test prints SKIPPED and passes.

mod common;

use common::{assert_close, gpu_or_skip, poison, Rng};
use hyblas::gpu::{trmv::trmv, tune, DMat, DVec, DeviceBuffer, Exec, Runtime};
use hyblas::types::{Diag, Real, Scalar, Trans, Uplo, C32, C64};
use std::ffi::c_char;

extern "C" {
    fn strmv_(
        u: *const c_char,
        t: *const c_char,
        d: *const c_char,
        n: *const i32,
        a: *const f32,
        lda: *const i32,
        x: *mut f32,
        incx: *const i32,
    );
    fn dtrmv_(
        u: *const c_char,
        t: *const c_char,
        d: *const c_char,
        n: *const i32,
        a: *const f64,
        lda: *const i32,
        x: *mut f64,
        incx: *const i32,
    );
    fn ctrmv_(
        u: *const c_char,
        t: *const c_char,
        d: *const c_char,
        n: *const i32,
        a: *const C32,
        lda: *const i32,
        x: *mut C32,
        incx: *const i32,
    );
    fn ztrmv_(
        u: *const c_char,
        t: *const c_char,
        d: *const c_char,
        n: *const i32,
        a: *const C64,
        lda: *const i32,
        x: *mut C64,
        incx: *const i32,
    );
}

/// The CPU engine's TRMV for each precision.
trait Cpu: Scalar + Default {
    /// # Safety
    /// Reference BLAS pointer rules.
    #[allow(clippy::too_many_arguments)]
    unsafe fn cpu_trmv(u: u8, t: u8, d: u8, n: i32, a: *const Self, lda: i32, x: *mut Self, incx: i32);
}

macro_rules! cpu {
    ($T:ty, $f:ident) => {
        impl Cpu for $T {
            unsafe fn cpu_trmv(u: u8, t: u8, d: u8, n: i32, a: *const Self, lda: i32, x: *mut Self, incx: i32) {
                let (u, t, d) = ([u as c_char], [t as c_char], [d as c_char]);
                $f(u.as_ptr(), t.as_ptr(), d.as_ptr(), &n, a, &lda, x, &incx)
            }
        }
    };
}
cpu!(f32, strmv_);
cpu!(f64, dtrmv_);
cpu!(C32, ctrmv_);
cpu!(C64, ztrmv_);

const TRANS: [(Trans, u8); 3] = [(Trans::No, b'N'), (Trans::Trans, b'T'), (Trans::ConjTrans, b'C')];

fn nan<T: Scalar>() -> T {
    let r = <T::Real as Scalar>::from_f64(f64::NAN);
    T::from_parts(r, r)
}

/// Element i of a BLAS vector of n elements with increment inc.
fn vidx(i: usize, n: usize, inc: i64) -> usize {
    if inc >= 0 {
        i * inc as usize
    } else {
        (n - 1 - i) * inc.unsigned_abs() as usize
    }
}

/// A host buffer holding an n x n triangular matrix with leading dimension `lda`, starting
/// `off` elements in: the referenced triangle random, everything else (the other triangle,
/// the padding rows, the diagonal when `unit`) NaN.
fn tri<T: Scalar>(rng: &mut Rng, n: usize, lda: usize, off: usize, upper: bool, unit: bool) -> Vec<T> {
    let mut a = vec![nan::<T>(); off + lda * n.max(1)];
    for j in 0..n {
        let rows = if upper { 0..j + 1 } else { j..n };
        for i in rows {
            if !(unit && i == j) {
                a[off + i + j * lda] = rng.scalar();
            }
        }
    }
    a
}

/// One matrix on the device with its host copy.
struct Mat<T> {
    host: Vec<T>,
    dev: DeviceBuffer,
    n: usize,
    lda: usize,
    off: usize,
    upper: bool,
    unit: bool,
}

impl<T: Cpu> Mat<T> {
    fn new(rng: &mut Rng, n: usize, lda: usize, off: usize, upper: bool, unit: bool) -> Self {
        let host = tri::<T>(rng, n, lda, off, upper, unit);
        let dev = DeviceBuffer::from_slice(&host).expect("upload A");
        Mat { host, dev, n, lda, off, upper, unit }
    }
    fn dmat(&self) -> DMat {
        DMat { ptr: self.dev.ptr + (self.off * std::mem::size_of::<T>()) as u64, ld: self.lda as i64 }
    }
    fn uplo(&self) -> (Uplo, u8) {
        if self.upper {
            (Uplo::Upper, b'U')
        } else {
            (Uplo::Lower, b'L')
        }
    }
    fn diag(&self) -> (Diag, u8) {
        if self.unit {
            (Diag::Unit, b'U')
        } else {
            (Diag::NonUnit, b'N')
        }
    }

    /// x (random, gaps poisoned, `xoff` elements into its device buffer) := op(A) x on the
    /// GPU; returns (GPU result, CPU result, x before) as whole buffers.
    fn run(&self, rt: &Runtime, rng: &mut Rng, trans: usize, incx: i64, xoff: usize) -> (Vec<T>, Vec<T>, Vec<T>) {
        let n = self.n;
        let len = xoff + if n == 0 { 1 } else { 1 + (n - 1) * incx.unsigned_abs() as usize };
        let mut x = vec![poison::<T>(); len];
        for i in 0..n {
            x[xoff + vidx(i, n, incx)] = rng.scalar();
        }
        let dx = DeviceBuffer::from_slice(&x).expect("upload x");
        let ex = Exec::own(rt);
        let xv = DVec { ptr: dx.ptr + (xoff * std::mem::size_of::<T>()) as u64, inc: incx };
        let (t, tc) = TRANS[trans];
        trmv::<T>(&ex, self.uplo().0, t, self.diag().0, n as i64, self.dmat(), xv).expect("gpu trmv");
        rt.sync(ex.stream).expect("sync");
        let got: Vec<T> = dx.to_vec().expect("download x");
        let mut want = x.clone();
        unsafe {
            T::cpu_trmv(
                self.uplo().1,
                tc,
                self.diag().1,
                n as i32,
                self.host.as_ptr().add(self.off),
                self.lda.max(1) as i32,
                want.as_mut_ptr().add(xoff),
                incx as i32,
            )
        };
        (got, want, x)
    }

    /// Run and check: the elements to rounding, everything else bit for bit.
    fn check(&self, rt: &Runtime, rng: &mut Rng, trans: usize, incx: i64, xoff: usize) {
        let n = self.n;
        let what = format!(
            "{}trmv uplo={} trans={} diag={} n={n} lda={} off={} incx={incx} xoff={xoff}",
            T::PREFIX,
            self.uplo().1 as char,
            TRANS[trans].1 as char,
            self.diag().1 as char,
            self.lda,
            self.off
        );
        let (got, want, before) = self.run(rt, rng, trans, incx, xoff);
        let idx: Vec<usize> = (0..n).map(|i| xoff + vidx(i, n, incx)).collect();
        let g: Vec<T> = idx.iter().map(|&k| got[k]).collect();
        let w: Vec<T> = idx.iter().map(|&k| want[k]).collect();
        assert!(g.iter().all(|v| !v.re().to_f64().is_nan() && !v.im().to_f64().is_nan()), "{what}: NaN leaked");
        assert_close(&g, &w, n, &what);
        let mut is_elem = vec![false; got.len()];
        for &k in &idx {
            is_elem[k] = true;
        }
        for k in 0..got.len() {
            if !is_elem[k] {
                assert!(got[k] == before[k], "{what}: x[{k}] outside the vector was written");
            }
        }
    }
}

fn variants<T: Cpu>(rt: &Runtime, seed: u64) {
    let mut rng = Rng::new(seed);
    for &n in &[0usize, 1, 2, 17, 255, 256, 1000, 4097] {
        // Padding rows (NaN) and a leading dimension that keeps columns 16-byte aligned.
        let lda = (n + 1).div_ceil(4) * 4;
        let incs: &[i64] = if n > 2000 { &[1, -3] } else { &[1, 2, -1, -3] };
        for upper in [false, true] {
            for unit in [false, true] {
                let m = Mat::<T>::new(&mut rng, n, lda, 0, upper, unit);
                for trans in 0..3 {
                    for &inc in incs {
                        m.check(rt, &mut rng, trans, inc, 0);
                    }
                }
            }
        }
    }
}

#[test]
fn gpu_trmv_variants_s() {
    let Some(rt) = gpu_or_skip("gpu_trmv_variants_s") else { return };
    variants::<f32>(rt, 1);
}

#[test]
fn gpu_trmv_variants_d() {
    let Some(rt) = gpu_or_skip("gpu_trmv_variants_d") else { return };
    variants::<f64>(rt, 2);
}

#[test]
fn gpu_trmv_variants_c() {
    let Some(rt) = gpu_or_skip("gpu_trmv_variants_c") else { return };
    variants::<C32>(rt, 3);
}

#[test]
fn gpu_trmv_variants_z() {
    let Some(rt) = gpu_or_skip("gpu_trmv_variants_z") else { return };
    variants::<C64>(rt, 4);
}

/// A misaligned matrix (one element in, odd leading dimension: element loads instead of
/// 16-byte loads) and a misaligned unit-stride x (packed first).
fn misaligned<T: Cpu>(rt: &Runtime, seed: u64) {
    let mut rng = Rng::new(seed);
    for &n in &[3usize, 17, 255, 1000] {
        let lda = (n + 1).div_ceil(4) * 4 + 1;
        for upper in [false, true] {
            for unit in [false, true] {
                let m = Mat::<T>::new(&mut rng, n, lda, 1, upper, unit);
                for trans in 0..3 {
                    m.check(rt, &mut rng, trans, 1, 1);
                    m.check(rt, &mut rng, trans, -2, 0);
                }
            }
        }
    }
}

#[test]
fn gpu_trmv_misaligned() {
    let Some(rt) = gpu_or_skip("gpu_trmv_misaligned") else { return };
    misaligned::<f32>(rt, 11);
    misaligned::<f64>(rt, 12);
    misaligned::<C32>(rt, 13);
    misaligned::<C64>(rt, 14);
}

/// Over 2^31 bytes of matrix (the last columns lie past 2^31 bytes): 64-bit indexing in both
/// passes, lower triangle, no-trans and trans.
#[test]
fn gpu_trmv_huge() {
    let Some(rt) = gpu_or_skip("gpu_trmv_huge") else { return };
    let n = 24_000usize;
    assert!(n * n * 4 > 1 << 31);
    let mut rng = Rng::new(99);
    let m = Mat::<f32>::new(&mut rng, n, n, 0, false, false);
    for trans in 0..2 {
        m.check(rt, &mut rng, trans, 1, 0);
    }
}

/// The staggered trans kernel (`trmv_ts`: double where lda times 8 bytes is a multiple of
/// 128 KiB): segments of several groups of stripes, so columns start their walks at different
/// groups; every uplo, diag and trans against the CPU engine, and the same bits under two
/// block shapes.
#[test]
fn gpu_trmv_staggered() {
    let Some(rt) = gpu_or_skip("gpu_trmv_staggered") else { return };
    staggered::<f64>(rt, 41, 6001, 16384);
    deterministic::<f64>(rt, 43, 6001, 16384);
}

fn staggered<T: Cpu>(rt: &Runtime, seed: u64, n: usize, lda: usize) {
    assert!(hyblas::gpu::trmv::t_staggered::<T>(lda as i64), "{}trmv lda={lda} not staggered", T::PREFIX);
    let (seg, _) = hyblas::gpu::trmv::t_plan(n as i64, (16 / std::mem::size_of::<T>()) as i64, rt.props.sm_count);
    let stripes = seg / (512 / std::mem::size_of::<T>() as i64);
    println!("gpu_trmv_staggered: {}trmv n = {n}, lda = {lda}: segments of {stripes} stripes", T::PREFIX);
    let mut rng = Rng::new(seed);
    for upper in [false, true] {
        for unit in [false, true] {
            let m = Mat::<T>::new(&mut rng, n, lda, 0, upper, unit);
            for trans in 1..3 {
                m.check(rt, &mut rng, trans, 1, 0);
            }
        }
    }
}

/// The same call under two block shapes gives the same bits (the decomposition and every
/// summation order are fixed by n and the device).
fn deterministic<T: Cpu>(rt: &Runtime, seed: u64, n: usize, lda: usize) {
    let mut rng = Rng::new(seed);
    let ex = Exec::own(rt);
    for upper in [false, true] {
        for unit in [false, true] {
            let m = Mat::<T>::new(&mut rng, n, lda, 0, upper, unit);
            for (t, _) in TRANS {
                let x0: Vec<T> = rng.vec(n);
                let mut outs = Vec::new();
                for (tx, ty) in [(32u32, 4u32), (128, 2)] {
                    let dx = DeviceBuffer::from_slice(&x0).expect("upload x");
                    let xv = DVec { ptr: dx.ptr, inc: 1 };
                    tune::with_shape(tx, ty, || trmv::<T>(&ex, m.uplo().0, t, m.diag().0, n as i64, m.dmat(), xv))
                        .expect("gpu trmv");
                    rt.sync(ex.stream).expect("sync");
                    outs.push(dx.to_vec::<T>().expect("download x"));
                }
                let same = outs[0].iter().zip(&outs[1]).all(|(a, b)| {
                    a.re().to_f64().to_bits() == b.re().to_f64().to_bits()
                        && a.im().to_f64().to_bits() == b.im().to_f64().to_bits()
                });
                assert!(same, "{}trmv upper={upper} unit={unit} {t:?} n={n}: shapes differ", T::PREFIX);
            }
        }
    }
}

#[test]
fn gpu_trmv_deterministic() {
    let Some(rt) = gpu_or_skip("gpu_trmv_deterministic") else { return };
    deterministic::<f32>(rt, 21, 4097, 4101);
    deterministic::<f64>(rt, 22, 4097, 4101);
    deterministic::<C32>(rt, 23, 2049, 2053);
    deterministic::<C64>(rt, 24, 1000, 1004);
}
