//! GPU GEMV (N, T, C) and GER (u, c) against the CPU engine (the exported Fortran symbols), for
//! s, d, c, z. Runs on a machine with a GPU; elsewhere every test prints SKIPPED.
//!
//! Every call runs on fresh random data: A's rows outside the m x n block and the gaps of
//! strided vectors hold NaN (read-only operands: a stray read shows in the result) or a
//! poison value (outputs: checked bit for bit unchanged). Shapes include 0, 1, odd, tall and
//! wide (8192 x 3, 3 x 8192), lda > m, negative increments, unaligned operands (the
//! element-wise kernels), alpha/beta in {0, 1, random}, NaN in y with beta = 0, host and
//! device scalars, one case over 2^31 bytes, and bitwise determinism across block shapes.

mod common;

use common::*;
use hyblas::gpu::gemv::{gemv, ger};
use hyblas::gpu::{tune, DMat, DVec, Exec, In, Runtime};
use hyblas::types::{Scalar, Trans, C32, C64};

type I = i32;

macro_rules! decl_gemv {
    ($T:ty, $name:ident) => {
        extern "C" {
            fn $name(
                t: *const u8,
                m: *const I,
                n: *const I,
                al: *const $T,
                a: *const $T,
                lda: *const I,
                x: *const $T,
                incx: *const I,
                be: *const $T,
                y: *mut $T,
                incy: *const I,
            );
        }
    };
}
macro_rules! decl_ger {
    ($T:ty, $name:ident) => {
        extern "C" {
            fn $name(
                m: *const I,
                n: *const I,
                al: *const $T,
                x: *const $T,
                incx: *const I,
                y: *const $T,
                incy: *const I,
                a: *mut $T,
                lda: *const I,
            );
        }
    };
}
decl_gemv!(f32, sgemv_);
decl_gemv!(f64, dgemv_);
decl_gemv!(C32, cgemv_);
decl_gemv!(C64, zgemv_);
decl_ger!(f32, sger_);
decl_ger!(f64, dger_);
decl_ger!(C32, cgeru_);
decl_ger!(C32, cgerc_);
decl_ger!(C64, zgeru_);
decl_ger!(C64, zgerc_);

/// The CPU engine's GEMV and GER for one precision.
trait Cpu: Scalar {
    #[allow(clippy::too_many_arguments)]
    unsafe fn gemv_ref(
        t: u8,
        m: I,
        n: I,
        al: Self,
        a: *const Self,
        lda: I,
        x: *const Self,
        incx: I,
        be: Self,
        y: *mut Self,
        incy: I,
    );
    #[allow(clippy::too_many_arguments)]
    unsafe fn ger_ref(
        conj: bool,
        m: I,
        n: I,
        al: Self,
        x: *const Self,
        incx: I,
        y: *const Self,
        incy: I,
        a: *mut Self,
        lda: I,
    );
}

macro_rules! cpu_impl {
    ($T:ty, $gemv:ident, $geru:ident, $gerc:ident) => {
        impl Cpu for $T {
            unsafe fn gemv_ref(
                t: u8,
                m: I,
                n: I,
                al: Self,
                a: *const Self,
                lda: I,
                x: *const Self,
                incx: I,
                be: Self,
                y: *mut Self,
                incy: I,
            ) {
                $gemv(&t, &m, &n, &al, a, &lda, x, &incx, &be, y, &incy)
            }
            unsafe fn ger_ref(
                conj: bool,
                m: I,
                n: I,
                al: Self,
                x: *const Self,
                incx: I,
                y: *const Self,
                incy: I,
                a: *mut Self,
                lda: I,
            ) {
                if conj {
                    $gerc(&m, &n, &al, x, &incx, y, &incy, a, &lda)
                } else {
                    $geru(&m, &n, &al, x, &incx, y, &incy, a, &lda)
                }
            }
        }
    };
}
cpu_impl!(f32, sgemv_, sger_, sger_);
cpu_impl!(f64, dgemv_, dger_, dger_);
cpu_impl!(C32, cgemv_, cgeru_, cgerc_);
cpu_impl!(C64, zgemv_, zgeru_, zgerc_);

// ---------------------------------------------------------------------------------------
// Data helpers.

/// Position of logical element i of a BLAS vector of n elements with increment inc.
fn pos(i: usize, n: usize, inc: i64) -> usize {
    if inc >= 0 {
        i * inc as usize
    } else {
        (n - 1 - i) * inc.unsigned_abs() as usize
    }
}

/// `off` leading gap elements, then a strided vector of n elements; gaps hold `gap`.
fn strided<T: Scalar>(
    rng: &mut Rng,
    n: usize,
    inc: i64,
    off: usize,
    gap: T,
    mut fill: impl FnMut(&mut Rng) -> T,
) -> Vec<T> {
    let len = off + if n == 0 { 1 } else { 1 + (n - 1) * inc.unsigned_abs() as usize };
    let mut v = vec![gap; len];
    for i in 0..n {
        v[off + pos(i, n, inc)] = fill(rng);
    }
    v
}

fn gather<T: Copy>(v: &[T], n: usize, inc: i64, off: usize) -> Vec<T> {
    (0..n).map(|i| v[off + pos(i, n, inc)]).collect()
}

/// `off` leading elements, then an lda x n column-major matrix: random (or NaN when `nan_in`)
/// inside the m x n block, `outside` elsewhere.
fn matrix<T: Scalar>(rng: &mut Rng, m: usize, n: usize, lda: usize, off: usize, outside: T, nan_in: bool) -> Vec<T> {
    let mut v = vec![outside; (off + lda * n).max(1)];
    for j in 0..n {
        for i in 0..m {
            v[off + i + j * lda] = if nan_in { nan() } else { rng.scalar() };
        }
    }
    v
}

/// Logical elements close to the reference, every other element bit for bit as before.
fn check_vec<T: Scalar>(got: &[T], want: &[T], before: &[T], n: usize, inc: i64, k: usize, what: &str) {
    assert_close(&gather(got, n, inc, 0), &gather(want, n, inc, 0), k, what);
    let mut logical = vec![false; got.len()];
    for i in 0..n {
        logical[pos(i, n, inc)] = true;
    }
    for p in (0..got.len()).filter(|&p| !logical[p]) {
        assert!(same_bits(&got[p..p + 1], &before[p..p + 1]), "{what}: gap element {p} was written");
    }
}

// ---------------------------------------------------------------------------------------
// GEMV.

#[derive(Clone, Copy, Debug)]
struct GemvCase {
    trans: Trans,
    m: usize,
    n: usize,
    lda: usize,
    incx: i64,
    incy: i64,
    /// 0: zero, 1: one, 2: random.
    alpha: u8,
    beta: u8,
    dev: bool,
    /// Elements A and x start past the buffer start (1: not 16-byte aligned).
    off: usize,
}

fn run_gemv<T: Cpu>(rt: &'static Runtime, rng: &mut Rng, c: GemvCase) {
    let (lenx, leny) = if c.trans == Trans::No { (c.n, c.m) } else { (c.m, c.n) };
    let alpha: T = scalar_of(c.alpha, rng);
    let beta: T = scalar_of(c.beta, rng);
    // alpha == 0: A and x are all NaN, and must not be read.
    let skip_ax = alpha == T::zero();
    let a = matrix::<T>(rng, c.m, c.n, c.lda, c.off, nan(), skip_ax);
    let x = strided(rng, lenx, c.incx, c.off, nan::<T>(), |r| if skip_ax { nan() } else { r.scalar() });
    let y = strided(rng, leny, c.incy, 0, poison::<T>(), |r| if beta == T::zero() { nan() } else { r.scalar() });
    let mut want = y.clone();
    unsafe {
        T::gemv_ref(
            tchar(c.trans),
            c.m as I,
            c.n as I,
            alpha,
            a.as_ptr().add(c.off),
            c.lda as I,
            x.as_ptr().add(c.off),
            c.incx as I,
            beta,
            want.as_mut_ptr(),
            c.incy as I,
        );
    }
    let (da, dx, dy) = (Dev::new(&a, c.off), Dev::new(&x, c.off), Dev::new(&y, 0));
    let s = scalars(alpha, beta, c.dev);
    let ex = Exec::own(rt);
    let what = format!("{}gemv {c:?}", T::PREFIX);
    gemv::<T>(
        &ex,
        c.trans,
        c.m as i64,
        c.n as i64,
        s.alpha,
        DMat { ptr: da.ptr::<T>(), ld: c.lda as i64 },
        DVec { ptr: dx.ptr::<T>(), inc: c.incx },
        s.beta,
        DVec { ptr: dy.ptr::<T>(), inc: c.incy },
    )
    .unwrap_or_else(|e| panic!("{what}: {e}"));
    rt.sync(ex.stream).unwrap();
    let got: Vec<T> = dy.buf.to_vec().unwrap();
    check_vec(&got, &want, &y, leny, c.incy, lenx + 2, &what);
}

const TRANS: [Trans; 3] = [Trans::No, Trans::Trans, Trans::ConjTrans];
const INCS: [(i64, i64); 5] = [(1, 1), (2, -1), (-3, 2), (1, -1), (-1, -2)];

fn gemv_shapes<T: Cpu>(rt: &'static Runtime, seed: u64) {
    let shapes: &[(usize, usize)] = &[
        (0, 5),
        (5, 0),
        (0, 0),
        (1, 1),
        (1, 7),
        (7, 1),
        (3, 8192),
        (8192, 3),
        (17, 33),
        (100, 65),
        (257, 129),
        (1000, 1000),
        (2049, 517),
        (4097, 300),
        (130, 5000),
        (1023, 2100),
    ];
    let mut rng = Rng::new(seed);
    let mut k = 0usize;
    for trans in TRANS {
        for &(m, n) in shapes {
            k += 1;
            let (incx, incy) = INCS[k % INCS.len()];
            let lda = m.max(1) + [0, 1, 7][k % 3];
            // Mostly generic scalars; the special values get their own test.
            let (alpha, beta) = [(2, 2), (2, 0), (1, 2), (2, 1)][k % 4];
            let c = GemvCase { trans, m, n, lda, incx, incy, alpha, beta, dev: k % 2 == 1, off: (k / 2) % 2 };
            run_gemv::<T>(rt, &mut rng, c);
        }
    }
}

#[test]
fn gemv_matches_cpu_over_shapes() {
    let Some(rt) = gpu_or_skip("gemv_matches_cpu_over_shapes") else { return };
    gemv_shapes::<f32>(rt, 1);
    gemv_shapes::<f64>(rt, 2);
    gemv_shapes::<C32>(rt, 3);
    gemv_shapes::<C64>(rt, 4);
}

fn gemv_scalars<T: Cpu>(rt: &'static Runtime, seed: u64) {
    let mut rng = Rng::new(seed);
    // One shape that writes y in one pass (one segment / one panel), one with partials, and
    // one whose GEMV-N runs in the whole-rows kernel (m >= 132 blocks of 8 16-byte units on
    // an H100/H200).
    for &(m, n) in &[(37, 53), (700, 1500), (4300, 70)] {
        for trans in TRANS {
            for alpha in 0..3u8 {
                for beta in 0..3u8 {
                    for dev in [false, true] {
                        let lda = m + 3;
                        let c = GemvCase { trans, m, n, lda, incx: 1, incy: -2, alpha, beta, dev, off: 0 };
                        run_gemv::<T>(rt, &mut rng, c);
                    }
                }
            }
        }
    }
}

#[test]
fn gemv_scalar_special_values_and_pointer_modes() {
    let Some(rt) = gpu_or_skip("gemv_scalar_special_values_and_pointer_modes") else { return };
    gemv_scalars::<f32>(rt, 11);
    gemv_scalars::<f64>(rt, 12);
    gemv_scalars::<C32>(rt, 13);
    gemv_scalars::<C64>(rt, 14);
}

#[test]
fn gemv_square_8192_all_trans() {
    let Some(rt) = gpu_or_skip("gemv_square_8192_all_trans") else { return };
    let mut rng = Rng::new(21);
    for trans in TRANS {
        let c =
            GemvCase { trans, m: 8192, n: 8192, lda: 8192, incx: 1, incy: 1, alpha: 2, beta: 2, dev: false, off: 0 };
        run_gemv::<f32>(rt, &mut rng, c);
        run_gemv::<C64>(rt, &mut rng, GemvCase { m: 4099, n: 4093, lda: 4100, ..c });
    }
}

// ---------------------------------------------------------------------------------------
// GER.

#[derive(Clone, Copy, Debug)]
struct GerCase {
    m: usize,
    n: usize,
    lda: usize,
    incx: i64,
    incy: i64,
    alpha: u8,
    dev: bool,
    off: usize,
    conj: bool,
}

fn run_ger<T: Cpu>(rt: &'static Runtime, rng: &mut Rng, c: GerCase) {
    let alpha: T = scalar_of(c.alpha, rng);
    let skip_xy = alpha == T::zero();
    let a = matrix::<T>(rng, c.m, c.n, c.lda, c.off, poison(), false);
    let x = strided(rng, c.m, c.incx, 0, nan::<T>(), |r| if skip_xy { nan() } else { r.scalar() });
    let y = strided(rng, c.n, c.incy, 0, nan::<T>(), |r| if skip_xy { nan() } else { r.scalar() });
    let mut want = a.clone();
    unsafe {
        T::ger_ref(
            c.conj,
            c.m as I,
            c.n as I,
            alpha,
            x.as_ptr(),
            c.incx as I,
            y.as_ptr(),
            c.incy as I,
            want.as_mut_ptr().add(c.off),
            c.lda as I,
        );
    }
    let (da, dx, dy) = (Dev::new(&a, c.off), Dev::new(&x, 0), Dev::new(&y, 0));
    let s = scalars(alpha, T::zero(), c.dev);
    let ex = Exec::own(rt);
    let what = format!("{}ger {c:?}", T::PREFIX);
    ger::<T>(
        &ex,
        c.m as i64,
        c.n as i64,
        s.alpha,
        DVec { ptr: dx.ptr::<T>(), inc: c.incx },
        DVec { ptr: dy.ptr::<T>(), inc: c.incy },
        DMat { ptr: da.ptr::<T>(), ld: c.lda as i64 },
        c.conj,
    )
    .unwrap_or_else(|e| panic!("{what}: {e}"));
    rt.sync(ex.stream).unwrap();
    let got: Vec<T> = da.buf.to_vec().unwrap();
    check_ger(&got, &want, &a, &c, &what);
}

/// The m x n block close to the reference, everything else (rows m..lda, the offset) as before.
fn check_ger<T: Scalar>(got: &[T], want: &[T], before: &[T], c: &GerCase, what: &str) {
    let inside = |p: usize| p >= c.off && (p - c.off) % c.lda < c.m && (p - c.off) / c.lda < c.n;
    let (gi, wi): (Vec<T>, Vec<T>) = (0..got.len()).filter(|&p| inside(p)).map(|p| (got[p], want[p])).unzip();
    assert_close(&gi, &wi, 2, what);
    for p in (0..got.len()).filter(|&p| !inside(p)) {
        assert!(same_bits(&got[p..p + 1], &before[p..p + 1]), "{what}: element {p} outside the block was written");
    }
}

fn ger_shapes<T: Cpu>(rt: &'static Runtime, seed: u64) {
    let shapes: &[(usize, usize)] = &[
        (0, 5),
        (5, 0),
        (1, 1),
        (1, 9),
        (9, 1),
        (3, 8192),
        (8192, 3),
        (17, 33),
        (100, 65),
        (257, 129),
        (1000, 1000),
        (2049, 517),
    ];
    let mut rng = Rng::new(seed);
    let mut k = 0usize;
    for conj in [false, true] {
        for &(m, n) in shapes {
            for alpha in 0..3u8 {
                k += 1;
                let (incx, incy) = INCS[k % INCS.len()];
                let lda = m.max(1) + [0, 1, 7][k % 3];
                let c = GerCase { m, n, lda, incx, incy, alpha, dev: k % 2 == 1, off: (k / 2) % 2, conj };
                run_ger::<T>(rt, &mut rng, c);
            }
        }
    }
}

#[test]
fn ger_matches_cpu_over_shapes() {
    let Some(rt) = gpu_or_skip("ger_matches_cpu_over_shapes") else { return };
    ger_shapes::<f32>(rt, 31);
    ger_shapes::<f64>(rt, 32);
    ger_shapes::<C32>(rt, 33);
    ger_shapes::<C64>(rt, 34);
}

/// The reference skips a column where y_j == 0, so an infinite x_i does not reach A(i, j)
/// there (no Inf*0 = NaN); in the other columns row i turns infinite.
#[test]
fn ger_skips_columns_where_y_is_zero() {
    let Some(rt) = gpu_or_skip("ger_skips_columns_where_y_is_zero") else { return };
    fn one<T: Cpu>(rt: &'static Runtime) {
        let (m, n, lda, inf_row) = (37usize, 11usize, 40usize, 5usize);
        let zero_cols = [3usize, 7];
        let mut rng = Rng::new(41);
        let a = matrix::<T>(&mut rng, m, n, lda, 0, poison(), false);
        let mut x: Vec<T> = rng.vec(m);
        let mut y: Vec<T> = rng.vec(n);
        x[inf_row] = T::from_f64(f64::INFINITY);
        for j in zero_cols {
            y[j] = T::zero();
        }
        let alpha: T = rng.scalar();
        let mut want = a.clone();
        unsafe { T::ger_ref(false, m as I, n as I, alpha, x.as_ptr(), 1, y.as_ptr(), 1, want.as_mut_ptr(), lda as I) };
        let (da, dx, dy) = (Dev::new(&a, 0), Dev::new(&x, 0), Dev::new(&y, 0));
        let ex = Exec::own(rt);
        let (xv, yv) = (DVec { ptr: dx.ptr::<T>(), inc: 1 }, DVec { ptr: dy.ptr::<T>(), inc: 1 });
        ger::<T>(&ex, m as i64, n as i64, In::Host(alpha), xv, yv, DMat { ptr: da.ptr::<T>(), ld: lda as i64 }, false)
            .unwrap();
        rt.sync(ex.stream).unwrap();
        let got: Vec<T> = da.buf.to_vec().unwrap();
        let what = format!("{}ger zero-y columns", T::PREFIX);
        // Finite rows against the CPU engine; outside the block untouched.
        let finite = |p: usize| p % lda < m && p / lda < n && p % lda != inf_row;
        let (gf, wf): (Vec<T>, Vec<T>) = (0..got.len()).filter(|&p| finite(p)).map(|p| (got[p], want[p])).unzip();
        assert_close(&gf, &wf, 2, &what);
        for p in (0..got.len()).filter(|&p| p % lda >= m) {
            assert!(same_bits(&got[p..p + 1], &a[p..p + 1]), "{what}: element {p} outside the block was written");
        }
        for j in 0..n {
            let p = inf_row + j * lda;
            if zero_cols.contains(&j) {
                assert!(same_bits(&got[p..p + 1], &a[p..p + 1]), "{what}: column {j} (y_j = 0) was touched");
            } else {
                let g = to_c64(got[p]);
                assert!(!(g.re.is_finite() && g.im.is_finite()), "{what}: A({inf_row}, {j}) = {g} should be infinite");
            }
        }
    }
    one::<f32>(rt);
    one::<f64>(rt);
    one::<C32>(rt);
    one::<C64>(rt);
}

// ---------------------------------------------------------------------------------------
// Over 2^31 bytes.

#[test]
fn huge_matrix_over_2_pow_31_bytes() {
    let Some(rt) = gpu_or_skip("huge_matrix_over_2_pow_31_bytes") else { return };
    // 32776 x 16411 floats = 2.15e9 bytes (16-byte aligned columns).
    let (m, n, lda) = (32771usize, 16411usize, 32776usize);
    let mut rng = Rng::new(51);
    let a = matrix::<f32>(&mut rng, m, n, lda, 0, f32::NAN, false);
    assert!(a.len() * 4 > 1 << 31);
    let da = Dev::new(&a, 0);
    let ex = Exec::own(rt);
    let alpha: f32 = rng.scalar();
    let beta: f32 = rng.scalar();
    for trans in [Trans::No, Trans::Trans] {
        let (lenx, leny) = if trans == Trans::No { (n, m) } else { (m, n) };
        let x: Vec<f32> = rng.vec(lenx);
        let y = strided(&mut rng, leny, -1, 0, poison::<f32>(), |r| r.scalar());
        let mut want = y.clone();
        unsafe {
            f32::gemv_ref(
                tchar(trans),
                m as I,
                n as I,
                alpha,
                a.as_ptr(),
                lda as I,
                x.as_ptr(),
                1,
                beta,
                want.as_mut_ptr(),
                -1,
            )
        };
        let (dx, dy) = (Dev::new(&x, 0), Dev::new(&y, 0));
        let am = DMat { ptr: da.ptr::<f32>(), ld: lda as i64 };
        let (xv, yv) = (DVec { ptr: dx.ptr::<f32>(), inc: 1 }, DVec { ptr: dy.ptr::<f32>(), inc: -1 });
        gemv::<f32>(&ex, trans, m as i64, n as i64, In::Host(alpha), am, xv, In::Host(beta), yv).unwrap();
        rt.sync(ex.stream).unwrap();
        let got: Vec<f32> = dy.buf.to_vec().unwrap();
        check_vec(&got, &want, &y, leny, -1, lenx + 2, &format!("huge sgemv {trans:?}"));
    }
    let x: Vec<f32> = rng.vec(m);
    let y: Vec<f32> = rng.vec(n);
    let mut want = a.clone();
    unsafe { f32::ger_ref(false, m as I, n as I, alpha, x.as_ptr(), 1, y.as_ptr(), 1, want.as_mut_ptr(), lda as I) };
    let (dx, dy) = (Dev::new(&x, 0), Dev::new(&y, 0));
    let (xv, yv) = (DVec { ptr: dx.ptr::<f32>(), inc: 1 }, DVec { ptr: dy.ptr::<f32>(), inc: 1 });
    ger::<f32>(&ex, m as i64, n as i64, In::Host(alpha), xv, yv, DMat { ptr: da.ptr::<f32>(), ld: lda as i64 }, false)
        .unwrap();
    rt.sync(ex.stream).unwrap();
    let got: Vec<f32> = da.buf.to_vec().unwrap();
    let c = GerCase { m, n, lda, incx: 1, incy: 1, alpha: 2, dev: false, off: 0, conj: false };
    check_ger(&got, &want, &a, &c, "huge sger");
}

// ---------------------------------------------------------------------------------------
// Determinism: the same call under different block shapes, and on aligned and unaligned
// copies of the same data (16-byte and element-wise kernels), gives identical bits.

/// Shapes forced with `tune::with_shape` (each kernel brings them to its nearest allowed one).
const SHAPES: [(u32, u32); 4] = [(32, 1), (64, 4), (256, 2), (128, 16)];

/// Run `call` on the given data under every forced shape, the tuner's own choice, and on an
/// unaligned copy; all results must be bitwise equal.
fn gemv_bits<T: Cpu>(rt: &'static Runtime, trans: Trans, m: usize, n: usize, seed: u64) {
    let mut rng = Rng::new(seed);
    let lda = m.div_ceil(4) * 4; // whole 16-byte units for every precision
    let (lenx, leny) = if trans == Trans::No { (n, m) } else { (m, n) };
    let a = matrix::<T>(&mut rng, m, n, lda, 0, nan(), false);
    let x: Vec<T> = rng.vec(lenx);
    let y: Vec<T> = rng.vec(leny);
    let (alpha, beta): (T, T) = (rng.scalar(), rng.scalar());
    let ex = Exec::own(rt);
    let run = |off: usize| -> Vec<T> {
        let mut a1 = vec![nan::<T>(); off];
        a1.extend_from_slice(&a);
        let mut x1 = vec![nan::<T>(); off];
        x1.extend_from_slice(&x);
        let (da, dx, dy) = (Dev::new(&a1, off), Dev::new(&x1, off), Dev::new(&y, 0));
        let am = DMat { ptr: da.ptr::<T>(), ld: lda as i64 };
        let (xv, yv) = (DVec { ptr: dx.ptr::<T>(), inc: 1 }, DVec { ptr: dy.ptr::<T>(), inc: 1 });
        gemv::<T>(&ex, trans, m as i64, n as i64, In::Host(alpha), am, xv, In::Host(beta), yv).unwrap();
        rt.sync(ex.stream).unwrap();
        dy.buf.to_vec().unwrap()
    };
    let first = run(0);
    let what = format!("{}gemv {trans:?} {m}x{n}", T::PREFIX);
    for (tx, ty) in SHAPES {
        let r = tune::with_shape(tx, ty, || run(0));
        assert!(same_bits(&r, &first), "{what}: shape ({tx}, {ty}) changed the bits");
    }
    assert!(same_bits(&run(1), &first), "{what}: the element-wise kernel changed the bits");
    let mut want = y.clone();
    unsafe {
        T::gemv_ref(
            tchar(trans),
            m as I,
            n as I,
            alpha,
            a.as_ptr(),
            lda as I,
            x.as_ptr(),
            1,
            beta,
            want.as_mut_ptr(),
            1,
        )
    };
    assert_close(&first, &want, lenx + 2, &what);
}

fn ger_bits<T: Cpu>(rt: &'static Runtime, m: usize, n: usize, seed: u64) {
    let mut rng = Rng::new(seed);
    let lda = m.div_ceil(4) * 4;
    let a = matrix::<T>(&mut rng, m, n, lda, 0, poison(), false);
    let x: Vec<T> = rng.vec(m);
    let y: Vec<T> = rng.vec(n);
    let alpha: T = rng.scalar();
    let ex = Exec::own(rt);
    let run = |off: usize| -> Vec<T> {
        let mut a1 = vec![poison::<T>(); off];
        a1.extend_from_slice(&a);
        let (da, dx, dy) = (Dev::new(&a1, off), Dev::new(&x, 0), Dev::new(&y, 0));
        let (xv, yv) = (DVec { ptr: dx.ptr::<T>(), inc: 1 }, DVec { ptr: dy.ptr::<T>(), inc: 1 });
        ger::<T>(&ex, m as i64, n as i64, In::Host(alpha), xv, yv, DMat { ptr: da.ptr::<T>(), ld: lda as i64 }, true)
            .unwrap();
        rt.sync(ex.stream).unwrap();
        let v: Vec<T> = da.buf.to_vec().unwrap();
        v[off..].to_vec()
    };
    let first = run(0);
    for (tx, ty) in SHAPES {
        let r = tune::with_shape(tx, ty, || run(0));
        assert!(same_bits(&r, &first), "{}ger {m}x{n}: shape ({tx}, {ty}) changed the bits", T::PREFIX);
    }
    assert!(same_bits(&run(1), &first), "{}ger {m}x{n}: the element-wise kernel changed the bits", T::PREFIX);
}

#[test]
fn deterministic_across_shapes() {
    let Some(rt) = gpu_or_skip("deterministic_across_shapes") else { return };
    // Two problem shapes per kernel, both with partials (several segments / panels).
    for (k, &(m, n)) in [(1000usize, 3000usize), (4099, 517)].iter().enumerate() {
        for trans in TRANS {
            gemv_bits::<f32>(rt, trans, m, n, 60 + k as u64);
            gemv_bits::<C64>(rt, trans, m, n, 62 + k as u64);
        }
        gemv_bits::<f64>(rt, Trans::Trans, m, n, 64 + k as u64);
        gemv_bits::<C32>(rt, Trans::No, m, n, 66 + k as u64);
        ger_bits::<f32>(rt, m, n, 70 + k as u64);
        ger_bits::<C64>(rt, m, n, 72 + k as u64);
    }
    // One pass with no partials (one segment / one panel) as well.
    gemv_bits::<f32>(rt, Trans::Trans, 300, 9000, 80);
    gemv_bits::<f32>(rt, Trans::No, 9000, 40, 81);
    // Complex double's 16-lane one-pass kernel (m past its 8-lane wave on an H100/H200).
    gemv_bits::<C64>(rt, Trans::No, 5000, 300, 82);
}
