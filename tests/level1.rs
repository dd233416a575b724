//! Level 1 BLAS through the exported C symbols: every routine, precision and ABI (Fortran
//! LP64 `daxpy_` and ILP64 `daxpy_64_`, CBLAS `cblas_daxpy` and `cblas_daxpy64_`) against
//! naive references written here.
//!
//! Element-wise routines (axpy, copy, swap, scal, rot, rotm) must match the reference
//! expression bit for bit; reductions are checked to rounding tolerance on unit stride and bit
//! for bit on strided vectors (which run in the reference's order). Where the system's
//! reference BLAS (`/usr/lib/x86_64-linux-gnu/blas/libblas.so.3`) exists, `vs_reference_*`
//! tests also compare with it bit for bit.
//!
//! `timing_vs_openblas` (ignored) prints speed ratios against OpenBLAS:
//! `cargo test --release --test level1 -- --ignored --nocapture timing`.

mod common;

use common::{poison, to_c64, tol, Cd, Cf, Rng};
use hyblas::types::{Real, Scalar};
use num_traits::Float;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Abi {
    Lp64,
    Ilp64,
    Cblas,
    Cblas64,
}
const ABIS: [Abi; 4] = [Abi::Lp64, Abi::Ilp64, Abi::Cblas, Abi::Cblas64];

impl Abi {
    fn is_cblas(self) -> bool {
        matches!(self, Abi::Cblas | Abi::Cblas64)
    }
}

/// The Level 1 routines every precision has, called through one ABI.
#[allow(clippy::too_many_arguments)]
trait L1: Scalar {
    unsafe fn axpy(abi: Abi, n: isize, a: Self, x: *const Self, incx: isize, y: *mut Self, incy: isize);
    unsafe fn copy(abi: Abi, n: isize, x: *const Self, incx: isize, y: *mut Self, incy: isize);
    unsafe fn swap(abi: Abi, n: isize, x: *mut Self, incx: isize, y: *mut Self, incy: isize);
    unsafe fn scal(abi: Abi, n: isize, a: Self, x: *mut Self, incx: isize);
    /// `?scal` for real types, `csscal`/`zdscal` for complex ones.
    unsafe fn scal_real(abi: Abi, n: isize, a: Self::Real, x: *mut Self, incx: isize);
    /// `?rot`, `csrot`, `zdrot`.
    unsafe fn rot(
        abi: Abi,
        n: isize,
        x: *mut Self,
        incx: isize,
        y: *mut Self,
        incy: isize,
        c: Self::Real,
        s: Self::Real,
    );
    /// `?dot`, or `?dotc`/`?dotu` (CBLAS: `_sub`) for complex types.
    unsafe fn dot(abi: Abi, n: isize, x: *const Self, incx: isize, y: *const Self, incy: isize, conj: bool) -> Self;
    unsafe fn nrm2(abi: Abi, n: isize, x: *const Self, incx: isize) -> Self::Real;
    unsafe fn asum(abi: Abi, n: isize, x: *const Self, incx: isize) -> Self::Real;
    /// As the ABI returns it: 1-based (Fortran) or 0-based (CBLAS).
    unsafe fn iamax(abi: Abi, n: isize, x: *const Self, incx: isize) -> isize;
}

const SIZES: [usize; 25] =
    [0, 1, 2, 3, 4, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 127, 128, 129, 255, 256, 257, 1000, 2049];

/// Memory index of logical element `i` of an `n`-vector with increment `inc`, as reference
/// BLAS lays it out (a negative increment starts from the far end).
fn pos(n: usize, inc: isize, i: usize) -> usize {
    if inc >= 0 {
        i * inc as usize
    } else {
        (n - 1 - i) * inc.unsigned_abs()
    }
}

fn buf_len(n: usize, inc: isize) -> usize {
    if n == 0 {
        1
    } else {
        1 + (n - 1) * inc.unsigned_abs()
    }
}

/// Storage of a strided vector: random elements, poison in the gaps.
fn strided<T: Scalar>(rng: &mut Rng, n: usize, inc: isize) -> Vec<T> {
    let mut b = vec![poison::<T>(); buf_len(n, inc)];
    for i in 0..n {
        b[pos(n, inc, i)] = rng.scalar();
    }
    b
}

/// Logical elements of a strided vector.
fn elems<T: Scalar>(b: &[T], n: usize, inc: isize) -> Vec<T> {
    (0..n).map(|i| b[pos(n, inc, i)]).collect()
}

/// Same bits (any NaN equals any NaN).
fn same<T: Scalar>(a: T, b: T) -> bool {
    let (a, b) = (to_c64(a), to_c64(b));
    let eq = |x: f64, y: f64| x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan());
    eq(a.re, b.re) && eq(a.im, b.im)
}

fn assert_same<T: Scalar>(got: &[T], want: &[T], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        assert!(same(g, w), "{what}: index {i}: got {g:?}, want {w:?}");
    }
}

/// A real of any precision as f64.
fn r64<R: Real>(v: R) -> f64 {
    Real::to_f64(v)
}

fn real<T: Scalar>(v: f64) -> T::Real {
    <T::Real as Scalar>::from_f64(v)
}

fn cplx<T: Scalar>(re: f64, im: f64) -> T {
    T::from_parts(real::<T>(re), real::<T>(im))
}

/// Scalars to try as alpha: 0, 1 and two others (complex ones for complex types).
fn alphas<T: Scalar>() -> Vec<T> {
    vec![T::zero(), T::one(), cplx(-0.75, 0.5), cplx(2.0, -1.25)]
}

fn run_all(f: impl Fn(&mut Rng, Abi)) {
    let mut rng = Rng::new(0x5eed);
    for abi in ABIS {
        f(&mut rng, abi);
    }
}

macro_rules! for_each_type {
    ($f:ident) => {
        $f::<f32>();
        $f::<f64>();
        $f::<Cf>();
        $f::<Cd>();
    };
}

// ---------------------------------------------------------------------------------------
// Element-wise routines: bit-exact against the reference expression.

fn check_axpy<T: L1>() {
    let incs = [(1, 1), (2, 1), (1, -2), (-1, -1), (-3, 2), (0, 1), (2, 0)];
    run_all(|rng, abi| {
        for n in SIZES {
            for (incx, incy) in incs {
                for alpha in alphas::<T>() {
                    let x = strided::<T>(rng, n, incx);
                    let mut y = strided::<T>(rng, n, incy);
                    let mut want = y.clone();
                    if !alpha.is_zero() {
                        for i in 0..n {
                            want[pos(n, incy, i)] += alpha * x[pos(n, incx, i)];
                        }
                    }
                    unsafe { T::axpy(abi, n as isize, alpha, x.as_ptr(), incx, y.as_mut_ptr(), incy) };
                    assert_same(&y, &want, &format!("{abi:?} {}axpy n={n} incx={incx} incy={incy}", T::PREFIX));
                }
            }
        }
        // n <= 0 and alpha == 0 touch nothing, not even a NaN-poisoned x.
        let x = [cplx::<T>(f64::NAN, f64::NAN); 4];
        let mut y = vec![cplx::<T>(1.0, 2.0); 4];
        unsafe { T::axpy(abi, 4, T::zero(), x.as_ptr(), 1, y.as_mut_ptr(), 1) };
        unsafe { T::axpy(abi, -1, T::one(), x.as_ptr(), 1, y.as_mut_ptr(), 1) };
        assert_same(&y, &[cplx::<T>(1.0, 2.0); 4], "axpy quick returns");
    });
}

#[test]
fn axpy() {
    for_each_type!(check_axpy);
}

fn check_copy_swap<T: L1>() {
    let incs = [(1, 1), (2, 1), (1, -2), (-1, -1), (-3, 2), (0, 1), (1, 0)];
    run_all(|rng, abi| {
        for n in SIZES {
            for (incx, incy) in incs {
                let what = format!("{abi:?} {}copy n={n} incx={incx} incy={incy}", T::PREFIX);
                let x = strided::<T>(rng, n, incx);
                let mut y = strided::<T>(rng, n, incy);
                let mut want = y.clone();
                for i in 0..n {
                    want[pos(n, incy, i)] = x[pos(n, incx, i)];
                }
                unsafe { T::copy(abi, n as isize, x.as_ptr(), incx, y.as_mut_ptr(), incy) };
                assert_same(&y, &want, &what);

                if incx == 0 || incy == 0 {
                    continue;
                }
                let what = format!("{abi:?} {}swap n={n} incx={incx} incy={incy}", T::PREFIX);
                let mut x = strided::<T>(rng, n, incx);
                let mut y = strided::<T>(rng, n, incy);
                let (mut wx, mut wy) = (x.clone(), y.clone());
                for i in 0..n {
                    std::mem::swap(&mut wx[pos(n, incx, i)], &mut wy[pos(n, incy, i)]);
                }
                unsafe { T::swap(abi, n as isize, x.as_mut_ptr(), incx, y.as_mut_ptr(), incy) };
                assert_same(&x, &wx, &what);
                assert_same(&y, &wy, &what);
            }
        }
    });
}

#[test]
fn copy_swap() {
    for_each_type!(check_copy_swap);
}

fn check_scal<T: L1>() {
    run_all(|rng, abi| {
        for n in SIZES {
            for incx in [1, 2, 3] {
                let what = format!("{abi:?} {}scal n={n} incx={incx}", T::PREFIX);
                for alpha in alphas::<T>().into_iter().chain([cplx::<T>(0.0, 1.0)]) {
                    let mut x = strided::<T>(rng, n, incx);
                    let mut want = x.clone();
                    for i in 0..n {
                        let p = pos(n, incx, i);
                        want[p] = alpha * want[p];
                    }
                    unsafe { T::scal(abi, n as isize, alpha, x.as_mut_ptr(), incx) };
                    assert_same(&x, &want, &what);
                }
                for alpha in [0.0, 1.0, -0.75, 3.0] {
                    let alpha = real::<T>(alpha);
                    let mut x = strided::<T>(rng, n, incx);
                    let mut want = x.clone();
                    for i in 0..n {
                        let p = pos(n, incx, i);
                        want[p] = want[p].mul_real(alpha);
                    }
                    unsafe { T::scal_real(abi, n as isize, alpha, x.as_mut_ptr(), incx) };
                    assert_same(&x, &want, &format!("{what} (real alpha)"));
                }
            }
        }
        // incx <= 0 and n <= 0: nothing happens.
        for (n, incx) in [(3, 0), (3, -1), (0, 1), (-2, 1)] {
            let mut x = vec![cplx::<T>(1.5, -2.5); 4];
            unsafe { T::scal(abi, n, cplx(2.0, 1.0), x.as_mut_ptr(), incx) };
            unsafe { T::scal_real(abi, n, real::<T>(2.0), x.as_mut_ptr(), incx) };
            assert_same(&x, &[cplx::<T>(1.5, -2.5); 4], "scal quick returns");
        }
        // alpha = 0 multiplies (a NaN stays NaN, as in the reference) ...
        let mut x = vec![cplx::<T>(f64::NAN, 1.0), cplx::<T>(f64::INFINITY, 1.0)];
        unsafe { T::scal(abi, 2, T::zero(), x.as_mut_ptr(), 1) };
        assert!(to_c64(x[0]).re.is_nan() && to_c64(x[1]).re.is_nan(), "0*NaN and 0*Inf stay NaN: {x:?}");
        // ... and alpha = 1 returns at once, so a complex Inf keeps its zero part.
        let mut x = vec![cplx::<T>(f64::INFINITY, 0.0)];
        unsafe { T::scal(abi, 1, T::one(), x.as_mut_ptr(), 1) };
        assert_same(&x, &[cplx::<T>(f64::INFINITY, 0.0)], "scal by 1");
        // csscal/zdscal scale the parts on their own: 2*(Inf, 0) = (Inf, 0), not (Inf, NaN).
        let mut x = vec![cplx::<T>(f64::INFINITY, 0.0)];
        unsafe { T::scal_real(abi, 1, real::<T>(2.0), x.as_mut_ptr(), 1) };
        assert_same(&x, &[cplx::<T>(f64::INFINITY, 0.0)], "real scal of Inf");
    });
}

#[test]
fn scal() {
    for_each_type!(check_scal);
}

fn check_rot<T: L1>() {
    let incs = [(1, 1), (2, 1), (1, -2), (-1, -1), (-3, 2)];
    let cs = [(0.6, 0.8), (1.0, 0.0), (0.0, 1.0), (-0.28, 0.96), (0.5, -2.0)];
    run_all(|rng, abi| {
        for n in SIZES {
            for (incx, incy) in incs {
                for (c, s) in cs {
                    let (c, s) = (real::<T>(c), real::<T>(s));
                    let mut x = strided::<T>(rng, n, incx);
                    let mut y = strided::<T>(rng, n, incy);
                    let (mut wx, mut wy) = (x.clone(), y.clone());
                    for i in 0..n {
                        let (px, py) = (pos(n, incx, i), pos(n, incy, i));
                        let (xi, yi) = (wx[px], wy[py]);
                        // Complex vectors: c and s as the complex numbers (c, 0) and (s, 0).
                        let (c, s) = (T::from_real(c), T::from_real(s));
                        wx[px] = c * xi + s * yi;
                        wy[py] = c * yi - s * xi;
                    }
                    unsafe { T::rot(abi, n as isize, x.as_mut_ptr(), incx, y.as_mut_ptr(), incy, c, s) };
                    let what = format!("{abi:?} {}rot n={n} incx={incx} incy={incy}", T::PREFIX);
                    assert_same(&x, &wx, &what);
                    assert_same(&y, &wy, &what);
                }
            }
        }
    });
}

#[test]
fn rot() {
    for_each_type!(check_rot);
}

// ---------------------------------------------------------------------------------------
// Reductions.

/// Naive dot product in double (complex) arithmetic.
fn dot_naive<T: Scalar>(x: &[T], y: &[T], conj: bool) -> Cd {
    x.iter().zip(y).fold(Cd::new(0.0, 0.0), |acc, (&a, &b)| {
        let a = if conj { to_c64(a).conj() } else { to_c64(a) };
        acc + a * to_c64(b)
    })
}

fn check_dot<T: L1>() {
    let incs = [(1, 1), (2, 1), (1, -2), (-1, -1), (-3, 2), (0, 1)];
    run_all(|rng, abi| {
        for n in SIZES {
            for (incx, incy) in incs {
                for conj in [false, true] {
                    let x = strided::<T>(rng, n, incx);
                    let y = strided::<T>(rng, n, incy);
                    let (xe, ye) = (elems(&x, n, incx), elems(&y, n, incy));
                    let got = unsafe { T::dot(abi, n as isize, x.as_ptr(), incx, y.as_ptr(), incy, conj) };
                    let what = format!("{abi:?} {}dot{} n={n} incx={incx} incy={incy}", T::PREFIX, conj as u8);
                    if incx == 1 && incy == 1 {
                        let want = dot_naive(&xe, &ye, conj && T::IS_COMPLEX);
                        let scale: f64 = xe.iter().zip(&ye).map(|(&a, &b)| to_c64(a).norm() * to_c64(b).norm()).sum();
                        let err = (to_c64(got) - want).norm();
                        assert!(err <= tol::<T>(n) * scale.max(1.0), "{what}: got {got:?}, want {want}");
                    } else {
                        // Strided products are summed in order, exactly as the reference does.
                        let mut want = T::zero();
                        for i in 0..n {
                            want += xe[i].conj_if(conj) * ye[i];
                        }
                        assert!(same(got, want), "{what}: got {got:?}, want {want:?}");
                    }
                }
            }
        }
        let x = [cplx::<T>(1.0, 2.0); 2];
        for n in [0, -3] {
            let got = unsafe { T::dot(abi, n, x.as_ptr(), 1, x.as_ptr(), 1, true) };
            assert!(same(got, T::zero()), "dot with n={n}");
        }
    });
}

#[test]
fn dot() {
    for_each_type!(check_dot);
}

/// Complex dot products come back by value from the Fortran symbols (gfortran's COMPLEX
/// function convention) and through the pointer from CBLAS `_sub`: check exact small cases.
#[test]
fn complex_dot_return_values() {
    let x = [Cf::new(1.0, 2.0), Cf::new(3.0, -1.0)];
    let y = [Cf::new(-2.0, 0.5), Cf::new(0.25, 4.0)];
    // dotu = (1+2i)(-2+0.5i) + (3-i)(0.25+4i) = (-3-3.5i) + (4.75+11.75i) = 1.75 + 8.25i
    // dotc = (1-2i)(-2+0.5i) + (3+i)(0.25+4i) = (-1+4.5i) + (-3.25+12.25i) = -4.25 + 16.75i
    let (u, c) = (Cf::new(1.75, 8.25), Cf::new(-4.25, 16.75));
    let xd: Vec<Cd> = x.iter().map(|v| Cd::new(v.re as f64, v.im as f64)).collect();
    let yd: Vec<Cd> = y.iter().map(|v| Cd::new(v.re as f64, v.im as f64)).collect();
    for abi in ABIS {
        unsafe {
            assert_eq!(Cf::dot(abi, 2, x.as_ptr(), 1, y.as_ptr(), 1, false), u, "{abi:?} cdotu");
            assert_eq!(Cf::dot(abi, 2, x.as_ptr(), 1, y.as_ptr(), 1, true), c, "{abi:?} cdotc");
            assert_eq!(Cd::dot(abi, 2, xd.as_ptr(), 1, yd.as_ptr(), 1, false), Cd::new(1.75, 8.25), "{abi:?} zdotu");
            assert_eq!(Cd::dot(abi, 2, xd.as_ptr(), 1, yd.as_ptr(), 1, true), Cd::new(-4.25, 16.75), "{abi:?} zdotc");
        }
    }
}

fn check_asum<T: L1>() {
    run_all(|rng, abi| {
        for n in SIZES {
            for incx in [1, 2, 3] {
                let x = strided::<T>(rng, n, incx);
                let got = unsafe { T::asum(abi, n as isize, x.as_ptr(), incx) };
                let want: f64 = elems(&x, n, incx).iter().map(|&v| to_c64(v).re.abs() + to_c64(v).im.abs()).sum();
                let got = r64(got);
                assert!(
                    (got - want).abs() <= tol::<T>(2 * n) * want.max(1.0),
                    "{abi:?} {}asum n={n} incx={incx}: got {got}, want {want}",
                    T::PREFIX
                );
            }
        }
        let x = [cplx::<T>(1.0, -2.0); 3];
        for (n, incx) in [(3, 0), (3, -1), (0, 1), (-1, 1)] {
            let got = unsafe { T::asum(abi, n, x.as_ptr(), incx) };
            assert_eq!(r64(got), 0.0, "asum n={n} incx={incx}");
        }
    });
}

#[test]
fn asum() {
    for_each_type!(check_asum);
}

/// Naive 2-norm in double with scaling (exact enough for single, close for double).
fn nrm2_naive<T: Scalar>(x: &[T]) -> f64 {
    let parts: Vec<f64> = x.iter().flat_map(|&v| [to_c64(v).re.abs(), to_c64(v).im.abs()]).collect();
    if parts.iter().any(|p| p.is_nan()) {
        return f64::NAN;
    }
    let scale = parts.iter().cloned().fold(0.0, f64::max);
    if scale == 0.0 || scale.is_infinite() {
        return scale;
    }
    scale * parts.iter().map(|p| (p / scale) * (p / scale)).sum::<f64>().sqrt()
}

fn check_nrm2<T: L1>() {
    run_all(|rng, abi| {
        for n in SIZES {
            for incx in [1, 2, -1, -3] {
                let x = strided::<T>(rng, n, incx);
                let got = r64(unsafe { T::nrm2(abi, n as isize, x.as_ptr(), incx) });
                let want = nrm2_naive(&elems(&x, n, incx));
                assert!(
                    (got - want).abs() <= tol::<T>(n) * want.max(f64::MIN_POSITIVE),
                    "{abi:?} {}nrm2 n={n} incx={incx}: got {got}, want {want}",
                    T::PREFIX
                );
            }
        }
        // incx = 0 counts x(1) n times; n <= 0 gives 0.
        let x = [cplx::<T>(3.0, 4.0)];
        let got = r64(unsafe { T::nrm2(abi, 9, x.as_ptr(), 0) });
        let want = 3.0 * to_c64(x[0]).norm();
        assert!((got - want).abs() <= 1e-6 * want, "{abi:?} nrm2 incx=0: {got} vs {want}");
        assert_eq!(r64(unsafe { T::nrm2(abi, 0, x.as_ptr(), 1) }), 0.0);
        assert_eq!(r64(unsafe { T::nrm2(abi, -1, x.as_ptr(), 1) }), 0.0);
    });
}

#[test]
fn nrm2() {
    for_each_type!(check_nrm2);
}

/// nrm2 at the edges of the range, with Inf and NaN, and the reference tester's scaled-value
/// combinations (DB1NRM2 of 3.10+: one value v0 and n-1 random values scaled by v1, for v0,
/// v1 among 0, tiny, small, ulp, 1, 1/ulp, big, huge, Inf, NaN and the small-accumulator
/// threshold).
fn check_nrm2_special<T: L1>() {
    let single = std::mem::size_of::<T::Real>() == 4;
    let (huge, tiny) = if single { (1e30, 1e-30) } else { (1e300, 1e-300) };
    let (inf, nan) = (f64::INFINITY, f64::NAN);
    let rt = |v: &[f64]| -> f64 {
        let x: Vec<T> = v.iter().map(|&r| cplx::<T>(r, 0.0)).collect();
        r64(unsafe { T::nrm2(Abi::Lp64, x.len() as isize, x.as_ptr(), 1) })
    };
    let close = |got: f64, want: f64, what: &str| {
        assert!((got - want).abs() <= 1e-5 * want, "{}nrm2 {what}: got {got:e}, want {want:e}", T::PREFIX);
    };
    close(rt(&[huge, huge]), huge * 2f64.sqrt(), "huge");
    close(rt(&[tiny, tiny, tiny, tiny]), tiny * 2.0, "tiny");
    close(rt(&[huge, 1.0, tiny]), huge, "huge+one+tiny");
    close(rt(&[tiny, 3.0 * tiny, 1e-3]), 1e-3, "tiny+mid");
    close(rt(&[3.0 * tiny, 4.0 * tiny]), 5.0 * tiny, "3-4-5 tiny");
    close(rt(&[3.0 * huge / 8.0, 4.0 * huge / 8.0]), 5.0 * huge / 8.0, "3-4-5 huge");
    let sub = if single { 1e-40 } else { 1e-310 };
    close(rt(&[sub, sub]), sub * 2f64.sqrt(), "subnormal");
    assert_eq!(rt(&[0.0, -0.0]), 0.0);
    assert_eq!(rt(&[1.0, inf, 2.0]), inf);
    assert_eq!(rt(&[-inf]), inf);
    assert_eq!(rt(&[inf, tiny]), inf);
    for v in [[1.0, nan, 2.0], [inf, nan, 1.0], [nan, inf, 1.0], [nan, huge, 1.0], [tiny, nan, tiny], [huge, 1.0, nan]]
    {
        assert!(rt(&v).is_nan(), "{}nrm2 of {v:?} must be NaN", T::PREFIX);
    }
    // Long vectors take the vectorised path; put the special value at every kind of offset.
    for n in [40, 333, 5000] {
        for at in [0, 1, 17, n / 2, n - 1] {
            for (val, want_inf) in [(inf, true), (nan, false)] {
                let mut v = vec![0.5; n];
                v[at] = val;
                let got = rt(&v);
                assert!(if want_inf { got == inf } else { got.is_nan() }, "n={n} at={at} val={val}: {got}");
            }
            let mut v = vec![tiny; n];
            v[at] = huge;
            close(rt(&v), huge, "huge among tiny");
        }
    }

    // The reference tester's combinations.
    let ulp = r64(<T::Real as Float>::epsilon());
    let safmin = r64(<T::Real as Float>::min_positive_value());
    let safmax = 1.0 / safmin;
    let (smlnum, bignum) = (safmin / ulp, safmax * ulp);
    let values = [
        0.0,
        2.0 * safmin,
        smlnum,
        ulp,
        1.0,
        1.0 / ulp,
        bignum,
        safmax,
        inf,
        nan,
        safmin.sqrt(),
        safmin.sqrt() * (1.0 - ulp),
    ];
    let mut rng = Rng::new(77);
    for abi in ABIS {
        for n in [1usize, 2, 3, 5, 20, 70] {
            for incx in [1isize, 2, -1, 0] {
                let work: Vec<f64> = (0..n).map(|_| r64(real::<T>(rng.unit()))).collect();
                for &v0 in &values {
                    let v0 = if v0.abs() > 1.0 { v0 * 0.5 } else { v0 };
                    for &v1 in &values {
                        let v1 = if v1.abs() > 1.0 { v1 * 0.5 / (n as f64).sqrt() } else { v1 };
                        let z: Vec<f64> = (0..n).map(|i| if i == 0 { v0 } else { v1 * work[i] }).collect();
                        let zt: Vec<T> = z.iter().map(|&r| cplx::<T>(r, 0.0)).collect();
                        let mut x = vec![poison::<T>(); buf_len(n, incx)];
                        for i in 0..n {
                            x[pos(n, incx, i)] = zt[i];
                        }
                        let got = r64(unsafe { T::nrm2(abi, n as isize, x.as_ptr(), incx) });
                        // The exact norm of the stored values (the tester's formula, without
                        // the rounding of v1*work to T in its expectation).
                        let want = if incx == 0 { (n as f64).sqrt() * to_c64(x[0]).re.abs() } else { nrm2_naive(&zt) };
                        // Against the double-precision expectation rounded to T.
                        let want = r64(real::<T>(want));
                        let ratio = if got.is_nan() || want.is_nan() {
                            if got.is_nan() != want.is_nan() {
                                f64::INFINITY
                            } else {
                                0.0
                            }
                        } else if got == want {
                            0.0
                        } else if want == 0.0 {
                            got / ulp
                        } else {
                            ((got - want).abs() / want) / (n as f64 * ulp)
                        };
                        assert!(
                            ratio < 10.0,
                            "{abi:?} {}nrm2 n={n} incx={incx} v0={v0:e} v1={v1:e}: got {got:e} want {want:e}",
                            T::PREFIX
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn nrm2_special_values() {
    for_each_type!(check_nrm2_special);
}

/// Reference i?amax: the running maximum starts at element 1 and is replaced only by a strictly
/// larger |re|+|im|.
fn iamax_naive<T: Scalar>(x: &[T]) -> isize {
    if x.is_empty() {
        return 0;
    }
    let (mut best, mut idx) = (x[0].abs1(), 1);
    for (i, v) in x.iter().enumerate().skip(1) {
        if v.abs1() > best {
            best = v.abs1();
            idx = i as isize + 1;
        }
    }
    idx
}

fn check_iamax<T: L1>() {
    let expect = |abi: Abi, want: isize| if abi.is_cblas() { (want - 1).max(0) } else { want };
    run_all(|rng, abi| {
        for n in SIZES.into_iter().chain([1023, 1024, 1025, 3000]) {
            for incx in [1, 2, 3] {
                // Small integers, so ties are common and the first one must win.
                for kind in 0..3 {
                    let mut x = strided::<T>(rng, n, incx);
                    for i in 0..n {
                        let (a, b) = ((rng.unit() * 4.0).round(), (rng.unit() * 4.0).round());
                        let p = pos(n, incx, i);
                        x[p] = match kind {
                            0 => cplx(a, b),
                            1 => x[p],
                            _ => cplx(if i == n / 2 { f64::NAN } else { a }, b),
                        };
                    }
                    let want = iamax_naive(&elems(&x, n, incx));
                    let got = unsafe { T::iamax(abi, n as isize, x.as_ptr(), incx) };
                    assert_eq!(got, expect(abi, want), "{abi:?} i{}amax n={n} incx={incx} kind={kind}", T::PREFIX);
                }
            }
        }
        let x = [cplx::<T>(1.0, 1.0); 3];
        for (n, incx) in [(3, 0), (3, -1), (0, 1), (-1, 1)] {
            assert_eq!(unsafe { T::iamax(abi, n, x.as_ptr(), incx) }, 0, "i?amax n={n} incx={incx}");
        }
        // NaN first: the reference's running maximum is NaN and nothing beats it.
        let mut x = [cplx::<T>(5.0, 0.0); 300];
        x[0] = cplx(f64::NAN, 0.0);
        assert_eq!(unsafe { T::iamax(abi, 300, x.as_ptr(), 1) }, expect(abi, 1), "NaN first");
        // NaN later is never chosen; Inf is the largest.
        x[0] = cplx(1.0, 0.0);
        x[100] = cplx(f64::NAN, 0.0);
        x[200] = cplx(f64::INFINITY, 0.0);
        assert_eq!(unsafe { T::iamax(abi, 300, x.as_ptr(), 1) }, expect(abi, 201), "Inf after NaN");
        if T::IS_COMPLEX {
            // |re|+|im|, not the modulus: (3,4) has 7 > 6.5.
            let x = [cplx::<T>(0.0, 6.5), cplx::<T>(3.0, -4.0), cplx::<T>(-6.9, 0.0)];
            assert_eq!(unsafe { T::iamax(abi, 3, x.as_ptr(), 1) }, expect(abi, 2), "abs1 ordering");
        }
    });
}

#[test]
fn iamax() {
    for_each_type!(check_iamax);
}

// ---------------------------------------------------------------------------------------
// Long vectors: the threaded paths, and the same result on every call.

fn check_long<T: L1>() {
    let n = 300_001usize;
    let mut rng = Rng::new(3);
    let abi = Abi::Lp64;
    let x: Vec<T> = rng.vec(n);
    let y0: Vec<T> = rng.vec(n);
    let alpha = cplx::<T>(0.3, -0.2);
    let what = |r: &str| format!("{}{r} n={n}", T::PREFIX);

    let mut y = y0.clone();
    let want: Vec<T> = y0.iter().zip(&x).map(|(&b, &a)| b + alpha * a).collect();
    unsafe { T::axpy(abi, n as isize, alpha, x.as_ptr(), 1, y.as_mut_ptr(), 1) };
    assert_same(&y, &want, &what("axpy"));

    let mut y = y0.clone();
    let want: Vec<T> = y0.iter().map(|&b| alpha * b).collect();
    unsafe { T::scal(abi, n as isize, alpha, y.as_mut_ptr(), 1) };
    assert_same(&y, &want, &what("scal"));

    let (c, s) = (real::<T>(0.6), real::<T>(0.8));
    let (mut xr, mut yr) = (x.clone(), y0.clone());
    unsafe { T::rot(abi, n as isize, xr.as_mut_ptr(), 1, yr.as_mut_ptr(), 1, c, s) };
    let (cc, sc) = (T::from_real(c), T::from_real(s));
    for i in (0..n).step_by(997) {
        assert!(same(xr[i], cc * x[i] + sc * y0[i]), "{}", what("rot x"));
        assert!(same(yr[i], cc * y0[i] - sc * x[i]), "{}", what("rot y"));
    }

    let mut y = y0.clone();
    unsafe { T::copy(abi, n as isize, x.as_ptr(), 1, y.as_mut_ptr(), 1) };
    assert_same(&y, &x, &what("copy"));
    let (mut a, mut b) = (x.clone(), y0.clone());
    unsafe { T::swap(abi, n as isize, a.as_mut_ptr(), 1, b.as_mut_ptr(), 1) };
    assert_same(&a, &y0, &what("swap"));
    assert_same(&b, &x, &what("swap"));

    for conj in [false, true] {
        let got = unsafe { T::dot(abi, n as isize, x.as_ptr(), 1, y0.as_ptr(), 1, conj) };
        let again = unsafe { T::dot(abi, n as isize, x.as_ptr(), 1, y0.as_ptr(), 1, conj) };
        assert!(same(got, again), "{}: not deterministic", what("dot"));
        let want = dot_naive(&x, &y0, conj && T::IS_COMPLEX);
        assert!((to_c64(got) - want).norm() <= tol::<T>(n) * n as f64, "{}: {got:?} vs {want}", what("dot"));
    }

    let got = r64(unsafe { T::nrm2(abi, n as isize, x.as_ptr(), 1) });
    let want = nrm2_naive(&x);
    assert!((got - want).abs() <= tol::<T>(n) * want, "{}: {got} vs {want}", what("nrm2"));
    let got = r64(unsafe { T::asum(abi, n as isize, x.as_ptr(), 1) });
    let want: f64 = x.iter().map(|&v| to_c64(v).re.abs() + to_c64(v).im.abs()).sum();
    assert!((got - want).abs() <= tol::<T>(n) * want, "{}: {got} vs {want}", what("asum"));

    // The maximum late in the vector (in the second thread's part), a tie after it, a NaN
    // before it.
    let mut v = x.clone();
    v[n - 1000] = cplx(9.0, 0.0);
    v[n - 10] = cplx(-9.0, 0.0);
    v[n / 3] = cplx(f64::NAN, 0.0);
    assert_eq!(unsafe { T::iamax(abi, n as isize, v.as_ptr(), 1) }, (n - 1000 + 1) as isize, "{}", what("iamax"));
    v[7] = if T::IS_COMPLEX { cplx(0.0, 9.0) } else { cplx(-9.0, 0.0) };
    assert_eq!(unsafe { T::iamax(abi, n as isize, v.as_ptr(), 1) }, 8, "{}", what("iamax tie"));
}

#[test]
fn long_vectors() {
    for_each_type!(check_long);
}

// ---------------------------------------------------------------------------------------
// Real-only routines: rotm, rotg, rotmg, and the mixed-precision dots.

/// srotm/drotm, srotg/drotg, srotmg/drotmg through one ABI (rotg and rotmg have no integer
/// arguments; the CBLAS rotmg takes y1 by value).
trait RealL1: L1 + Real + std::fmt::Display + std::fmt::LowerExp {
    unsafe fn rotm(abi: Abi, n: isize, x: *mut Self, incx: isize, y: *mut Self, incy: isize, p: *const Self);
    unsafe fn rotg(abi: Abi, a: &mut Self, b: &mut Self) -> (Self, Self);
    unsafe fn rotmg(abi: Abi, d1: &mut Self, d2: &mut Self, x1: &mut Self, y1: Self, p: &mut [Self; 5]);
}

macro_rules! impl_real_l1 {
    ($T:ty, $rotm:ident, $rotm64:ident, $crotm:ident, $crotm64:ident, $rotg:ident, $rotg64:ident, $crotg:ident,
     $crotg64:ident, $rotmg:ident, $rotmg64:ident, $crotmg:ident, $crotmg64:ident) => {
        impl RealL1 for $T {
            unsafe fn rotm(abi: Abi, n: isize, x: *mut Self, incx: isize, y: *mut Self, incy: isize, p: *const Self) {
                match abi {
                    Abi::Lp64 => $rotm(&(n as i32), x, &(incx as i32), y, &(incy as i32), p),
                    Abi::Ilp64 => $rotm64(&(n as i64), x, &(incx as i64), y, &(incy as i64), p),
                    Abi::Cblas => $crotm(n as i32, x, incx as i32, y, incy as i32, p),
                    Abi::Cblas64 => $crotm64(n as i64, x, incx as i64, y, incy as i64, p),
                }
            }
            unsafe fn rotg(abi: Abi, a: &mut Self, b: &mut Self) -> (Self, Self) {
                let (mut c, mut s) = (0.0, 0.0);
                match abi {
                    Abi::Lp64 => $rotg(a, b, &mut c, &mut s),
                    Abi::Ilp64 => $rotg64(a, b, &mut c, &mut s),
                    Abi::Cblas => $crotg(a, b, &mut c, &mut s),
                    Abi::Cblas64 => $crotg64(a, b, &mut c, &mut s),
                }
                (c, s)
            }
            unsafe fn rotmg(abi: Abi, d1: &mut Self, d2: &mut Self, x1: &mut Self, y1: Self, p: &mut [Self; 5]) {
                let p = p.as_mut_ptr();
                match abi {
                    Abi::Lp64 => $rotmg(d1, d2, x1, &y1, p),
                    Abi::Ilp64 => $rotmg64(d1, d2, x1, &y1, p),
                    Abi::Cblas => $crotmg(d1, d2, x1, y1, p),
                    Abi::Cblas64 => $crotmg64(d1, d2, x1, y1, p),
                }
            }
        }
    };
}
impl_real_l1!(
    f32,
    srotm_,
    srotm_64_,
    cblas_srotm,
    cblas_srotm64_,
    srotg_,
    srotg_64_,
    cblas_srotg,
    cblas_srotg64_,
    srotmg_,
    srotmg_64_,
    cblas_srotmg,
    cblas_srotmg64_
);
impl_real_l1!(
    f64,
    drotm_,
    drotm_64_,
    cblas_drotm,
    cblas_drotm64_,
    drotg_,
    drotg_64_,
    cblas_drotg,
    cblas_drotg64_,
    drotmg_,
    drotmg_64_,
    cblas_drotmg,
    cblas_drotmg64_
);

fn check_rotm<T: RealL1>() {
    let incs = [(1, 1), (2, 1), (1, -2), (-1, -1), (-3, 2)];
    let params = [
        [-2.0, 9.0, 9.0, 9.0, 9.0],
        [-1.0, 0.5, -1.5, 2.0, 0.25],
        [0.0, 9.0, -0.75, 1.25, 9.0],
        [1.0, 0.5, 9.0, 9.0, -2.0],
        [-0.5, 1.0, 2.0, 3.0, 4.0],
        [2.0, 3.0, 9.0, 9.0, 0.5],
    ];
    run_all(|rng, abi| {
        for n in SIZES {
            for (incx, incy) in incs {
                for p in params {
                    let p: [T; 5] = p.map(|v| real::<T>(v));
                    let mut x = strided::<T>(rng, n, incx);
                    let mut y = strided::<T>(rng, n, incy);
                    let (mut wx, mut wy) = (x.clone(), y.clone());
                    let flag = r64(p[0]);
                    if flag != -2.0 {
                        for i in 0..n {
                            let (px, py) = (pos(n, incx, i), pos(n, incy, i));
                            let (w, z) = (wx[px], wy[py]);
                            let (a, b) = if flag < 0.0 {
                                (w * p[1] + z * p[3], w * p[2] + z * p[4])
                            } else if flag == 0.0 {
                                (w + z * p[3], w * p[2] + z)
                            } else {
                                (w * p[1] + z, -w + p[4] * z)
                            };
                            wx[px] = a;
                            wy[py] = b;
                        }
                    }
                    unsafe { T::rotm(abi, n as isize, x.as_mut_ptr(), incx, y.as_mut_ptr(), incy, p.as_ptr()) };
                    let what = format!("{abi:?} {}rotm n={n} incx={incx} incy={incy} flag={flag}", T::PREFIX);
                    assert_same(&x, &wx, &what);
                    assert_same(&y, &wy, &what);
                }
            }
        }
    });
}

#[test]
fn rotm() {
    check_rotm::<f32>();
    check_rotm::<f64>();
}

/// The reference tester's rotg cases (inputs a, b; results r, z, c, s), plus the exact special
/// cases of the 3.10 algorithm.
fn check_rotg<T: RealL1>() {
    let cases: [(f64, f64, f64, f64, f64, f64); 8] = [
        (0.3, 0.4, 0.5, 1.0 / 0.6, 0.6, 0.8),
        (0.4, 0.3, 0.5, 0.6, 0.8, 0.6),
        (-0.3, 0.4, 0.5, -1.0 / 0.6, -0.6, 0.8),
        (-0.4, 0.3, -0.5, -0.6, 0.8, -0.6),
        (-0.3, -0.4, -0.5, 1.0 / 0.6, 0.6, 0.8),
        (0.0, 0.0, 0.0, 0.0, 1.0, 0.0),
        (0.0, 1.0, 1.0, 1.0, 0.0, 1.0),
        (1.0, 0.0, 1.0, 0.0, 1.0, 0.0),
    ];
    let eps = r64(<T as Float>::epsilon());
    for abi in ABIS {
        for (a0, b0, r, z, c, s) in cases {
            let (mut a, mut b) = (real::<T>(a0), real::<T>(b0));
            let (gc, gs) = unsafe { T::rotg(abi, &mut a, &mut b) };
            for (got, want, name) in [(a, r, "r"), (b, z, "z"), (gc, c, "c"), (gs, s, "s")] {
                assert!(
                    (r64(got) - want).abs() <= 4.0 * eps * want.abs().max(1.0),
                    "{abi:?} {}rotg({a0}, {b0}) {name}: got {got}, want {want}",
                    T::PREFIX
                );
            }
        }
        // Extreme magnitudes: no overflow or underflow in r, and c^2 + s^2 = 1.
        for (a0, b0) in [(1e30, 3e30), (3e-30, -4e-30), (1e-30, 1e30), (-5e30, 1e-30)] {
            let (mut a, mut b) = (real::<T>(a0), real::<T>(b0));
            let (c, s) = unsafe { T::rotg(abi, &mut a, &mut b) };
            let (c, s, r) = (r64(c), r64(s), r64(a));
            let (a0, b0) = (r64(real::<T>(a0)), r64(real::<T>(b0)));
            assert!((c * c + s * s - 1.0).abs() <= 8.0 * eps, "{abi:?} rotg({a0:e}, {b0:e}): c={c} s={s}");
            assert!((c * a0 + s * b0 - r).abs() <= 8.0 * eps * r.abs(), "{abi:?} rotg({a0:e}, {b0:e}): r={r:e}");
            assert!((-s * a0 + c * b0).abs() <= 8.0 * eps * r.abs(), "{abi:?} rotg({a0:e}, {b0:e}): not zeroed");
        }
    }
}

#[test]
fn rotg() {
    check_rotg::<f32>();
    check_rotg::<f64>();
}

/// The reference tester's rotmg cases (d1, d2, x1, y1 -> d1, d2, x1, param), and the defining
/// property for inputs that need several rescaling passes: H (x1, y1) = (x1', 0) and
/// d1' x1'^2 = d1 x1^2 + d2 y1^2.
fn check_rotmg<T: RealL1>() {
    let d12 = 4096.0f64;
    #[rustfmt::skip]
    let inputs: [[f64; 4]; 9] = [
        [0.1, 0.3, 1.2, 0.2], [0.7, 0.2, 0.6, 4.2], [0.0, 0.0, 0.0, 0.0], [4.0, -1.0, 2.0, 4.0],
        [6e-10, 2e-2, 1e5, 10.0], [4e10, 2e-2, 1e-5, 10.0], [2e-10, 4e-2, 1e5, 10.0], [2e10, 4e-2, 1e-5, 10.0],
        [4e-9, 2e-9, 2.0, 1.0],
    ];
    #[rustfmt::skip]
    let mut want: [[f64; 9]; 9] = [
        [0.0, 0.0, 1.3, 0.2, 0.0, 0.0, 0.0, 0.5, 0.0],
        [0.0, 0.0, 4.5, 4.2, 1.0, 0.5, 0.0, 0.0, 0.0],
        [0.0, 0.0, 0.0, 0.0, -2.0, 0.0, 0.0, 0.0, 0.0],
        [0.0, 0.0, 0.0, 4.0, -1.0, 0.0, 0.0, 0.0, 0.0],
        [0.0, 15e-3, 0.0, 10.0, -1.0, 0.0, -1e-4, 0.0, 1.0],
        [0.0, 0.0, 6144e-5, 10.0, -1.0, 4096.0, -1e6, 0.0, 1.0],
        [0.0, 0.0, 15.0, 10.0, -1.0, 5e-5, 0.0, 1.0, 0.0],
        [0.0, 0.0, 15.0, 10.0, -1.0, 5e5, -4096.0, 1.0, 4096e-6],
        [0.0, 0.0, 7.0, 4.0, 0.0, 0.0, -0.5, -0.25, 0.0],
    ];
    want[0][0] = 12.0 / 130.0;
    want[0][1] = 36.0 / 130.0;
    want[0][6] = -1.0 / 6.0;
    want[1][0] = 14.0 / 75.0;
    want[1][1] = 49.0 / 75.0;
    want[1][8] = 1.0 / 7.0;
    want[4][0] = 45e-11 * (d12 * d12);
    want[4][2] = 4e5 / (3.0 * d12);
    want[4][5] = 1.0 / d12;
    want[4][7] = 1e4 / (3.0 * d12);
    want[5][0] = 4e10 / (1.5 * d12 * d12);
    want[5][1] = 2e-2 / 1.5;
    want[5][7] = 5e-7 * d12;
    want[6][0] = 4.0 / 150.0;
    want[6][1] = (2e-10 / 1.5) * (d12 * d12);
    want[6][6] = -want[4][5];
    want[6][8] = 1e4 / d12;
    want[7][0] = want[6][0];
    want[7][1] = 2e10 / (1.5 * d12 * d12);
    want[8] = [
        5.965_232_355_555_556e-2,
        2.982_616_177_777_778e-2,
        5.493_164_062_5e-4,
        1.0,
        -1.0,
        2.441_406_25e-4,
        -1.220_703_125e-4,
        6.103_515_625e-5,
        2.441_406_25e-4,
    ];
    // The tester's tolerance: |got - want| * sfac <= |want| * eps with sfac = 2^-10.
    let eps = r64(<T as Float>::epsilon());
    for abi in ABIS {
        for (inp, want) in inputs.iter().zip(&want) {
            let mut v: [T; 9] = [real::<T>(0.0); 9];
            for i in 0..4 {
                v[i] = real::<T>(inp[i]);
            }
            let (mut d1, mut d2, mut x1, y1) = (v[0], v[1], v[2], v[3]);
            let mut p = [real::<T>(0.0); 5];
            unsafe { T::rotmg(abi, &mut d1, &mut d2, &mut x1, y1, &mut p) };
            let got = [d1, d2, x1, y1, p[0], p[1], p[2], p[3], p[4]];
            for i in 0..9 {
                let (g, w) = (r64(got[i]), want[i]);
                assert!(
                    ((g - w) * 9.765625e-4).abs() <= w.abs() * eps,
                    "{abi:?} {}rotmg{inp:?} slot {i}: got {g:e}, want {w:e}",
                    T::PREFIX
                );
            }
        }
        // Several rescaling passes on d1 and on d2.
        for inp in [[1e-20, 1e-21, 1.0, 1.0], [1e-20, 3e-20, 1.0, 1.0], [1e20, 1e19, 1.0, 0.5], [5e-9, 7e12, 2.0, 1e-3]]
        {
            let single = std::mem::size_of::<T>() == 4;
            let [d1_0, d2_0, x1_0, y1_0] = inp.map(|v| real::<T>(v));
            let (mut d1, mut d2, mut x1) = (d1_0, d2_0, x1_0);
            let mut p = [real::<T>(7.0); 5];
            unsafe { T::rotmg(abi, &mut d1, &mut d2, &mut x1, y1_0, &mut p) };
            let flag = r64(p[0]);
            let (h11, h21, h12, h22) = if flag < 0.0 {
                (p[1], p[2], p[3], p[4])
            } else if flag == 0.0 {
                (real::<T>(1.0), p[2], p[3], real::<T>(1.0))
            } else {
                (p[1], real::<T>(-1.0), real::<T>(1.0), p[4])
            };
            let f = |v: T| r64(v);
            let (a, b) = (f(h11) * f(x1_0), f(h12) * f(y1_0));
            let (c, d) = (f(h21) * f(x1_0), f(h22) * f(y1_0));
            let t = if single { 1e-5 } else { 1e-12 };
            let x1n = f(x1);
            assert!(
                (a + b - x1n).abs() <= t * (a.abs() + b.abs()),
                "{abi:?} rotmg{inp:?}: H x = {}, x1' = {x1n:e}",
                a + b
            );
            assert!(
                (c + d).abs() <= t * (c.abs() + d.abs()),
                "{abi:?} rotmg{inp:?}: second component {} not zero",
                c + d
            );
            let before = f(d1_0) * f(x1_0).powi(2) + f(d2_0) * f(y1_0).powi(2);
            let after = f(d1) * f(x1).powi(2);
            assert!((before - after).abs() <= t * before.abs(), "{abi:?} rotmg{inp:?}: {before:e} vs {after:e}");
        }
    }
}

#[test]
fn rotmg() {
    check_rotmg::<f32>();
    check_rotmg::<f64>();
}

/// Complex rotg, scabs1/dcabs1 through every ABI.
trait ComplexL1: L1 {
    unsafe fn rotg(abi: Abi, a: &mut Self, b: Self) -> (Self::Real, Self);
    unsafe fn cabs1(abi: Abi, z: Self) -> Self::Real;
}

macro_rules! impl_complex_l1 {
    ($T:ty, $R:ty, $rotg:ident, $rotg64:ident, $crotg:ident, $crotg64:ident, $abs:ident, $abs64:ident, $cabs:ident, $cabs64:ident) => {
        impl ComplexL1 for $T {
            unsafe fn rotg(abi: Abi, a: &mut Self, b: Self) -> ($R, Self) {
                let (mut c, mut s) = (0.0, Self::default());
                match abi {
                    Abi::Lp64 => $rotg(a, &b, &mut c, &mut s),
                    Abi::Ilp64 => $rotg64(a, &b, &mut c, &mut s),
                    Abi::Cblas => $crotg(a, &b, &mut c, &mut s),
                    Abi::Cblas64 => $crotg64(a, &b, &mut c, &mut s),
                }
                (c, s)
            }
            unsafe fn cabs1(abi: Abi, z: Self) -> $R {
                match abi {
                    Abi::Lp64 => $abs(&z),
                    Abi::Ilp64 => $abs64(&z),
                    Abi::Cblas => $cabs(&z),
                    Abi::Cblas64 => $cabs64(&z),
                }
            }
        }
    };
}
impl_complex_l1!(
    Cf,
    f32,
    crotg_,
    crotg_64_,
    cblas_crotg,
    cblas_crotg64_,
    scabs1_,
    scabs1_64_,
    cblas_scabs1,
    cblas_scabs164_
);
impl_complex_l1!(
    Cd,
    f64,
    zrotg_,
    zrotg_64_,
    cblas_zrotg,
    cblas_zrotg64_,
    dcabs1_,
    dcabs1_64_,
    cblas_dcabs1,
    cblas_dcabs164_
);

fn check_complex_rotg<T: ComplexL1>() {
    let eps = r64(<T::Real as Float>::epsilon());
    let single = std::mem::size_of::<T::Real>() == 4;
    let (big, small) = if single { (1e30, 1e-30) } else { (1e300, 1e-300) };
    let mut rng = Rng::new(11);
    for abi in ABIS {
        assert_eq!(r64(unsafe { T::cabs1(abi, cplx(-3.0, 4.5)) }), 7.5, "{abi:?} cabs1");
        // b = 0: c = 1, s = 0, r = a.
        let mut a = cplx::<T>(1.5, -2.0);
        let (c, s) = unsafe { T::rotg(abi, &mut a, T::zero()) };
        assert!(r64(c) == 1.0 && same(s, T::zero()) && same(a, cplx(1.5, -2.0)), "{abi:?} rotg(a, 0)");
        // a = 0: c = 0, s = conj(b)/|b|, r = |b|.
        let mut a = T::zero();
        let (c, s) = unsafe { T::rotg(abi, &mut a, cplx(3.0, 4.0)) };
        assert_eq!(r64(c), 0.0, "{abi:?} rotg(0, b) c");
        assert!((to_c64(s) - Cd::new(0.6, -0.8)).norm() <= 4.0 * eps, "{abi:?} rotg(0, b) s = {s:?}");
        assert!((to_c64(a) - Cd::new(5.0, 0.0)).norm() <= 8.0 * eps, "{abi:?} rotg(0, b) r = {a:?}");
        // General inputs, including ones that need scaling.
        let scales = [1.0, big, small];
        for _ in 0..200 {
            let sa = scales[(rng.next_u64() % 3) as usize];
            let sb = scales[(rng.next_u64() % 3) as usize];
            let (f, g) = (cplx::<T>(rng.unit() * sa, rng.unit() * sa), cplx::<T>(rng.unit() * sb, rng.unit() * sb));
            let mut a = f;
            let (c, s) = unsafe { T::rotg(abi, &mut a, g) };
            let (c, s, r, f, g) = (r64(c), to_c64(s), to_c64(a), to_c64(f), to_c64(g));
            assert!((0.0..=1.0).contains(&c), "{abi:?} rotg c = {c}");
            assert!((c * c + s.norm_sqr() - 1.0).abs() <= 16.0 * eps, "{abi:?} rotg({f}, {g}): c={c} s={s}");
            let m = f.norm().max(g.norm());
            assert!((f * c + s * g - r).norm() <= 16.0 * eps * m, "{abi:?} rotg({f}, {g}): r={r}");
            assert!((-(s.conj()) * f + g * c).norm() <= 16.0 * eps * m, "{abi:?} rotg({f}, {g}): not zeroed");
        }
    }
}

#[test]
fn complex_rotg_and_cabs1() {
    check_complex_rotg::<Cf>();
    check_complex_rotg::<Cd>();
}

#[test]
fn dsdot_sdsdot() {
    let mut rng = Rng::new(5);
    let incs = [(1, 1), (2, -1), (-3, 2), (0, 1)];
    for n in SIZES {
        for (incx, incy) in incs {
            let x = strided::<f32>(&mut rng, n, incx);
            let y = strided::<f32>(&mut rng, n, incy);
            let (xe, ye) = (elems(&x, n, incx), elems(&y, n, incy));
            let exact: f64 = xe.iter().zip(&ye).map(|(&a, &b)| a as f64 * b as f64).sum();
            let sb = 0.375f32;
            let (ni, ix, iy) = (n as i32, incx as i32, incy as i32);
            let (nl, lx, ly) = (n as i64, incx as i64, incy as i64);
            let (xp, yp) = (x.as_ptr(), y.as_ptr());
            let ds = unsafe {
                [
                    dsdot_(&ni, xp, &ix, yp, &iy),
                    dsdot_64_(&nl, xp, &lx, yp, &ly),
                    cblas_dsdot(ni, xp, ix, yp, iy),
                    cblas_dsdot64_(nl, xp, lx, yp, ly),
                ]
            };
            let sds = unsafe {
                [
                    sdsdot_(&ni, &sb, xp, &ix, yp, &iy),
                    sdsdot_64_(&nl, &sb, xp, &lx, yp, &ly),
                    cblas_sdsdot(ni, sb, xp, ix, yp, iy),
                    cblas_sdsdot64_(nl, sb, xp, lx, yp, ly),
                ]
            };
            for (abi, (d, s)) in ABIS.iter().zip(ds.iter().zip(&sds)) {
                // Double accumulation: far tighter than a single-precision sum could be.
                assert!((d - exact).abs() <= 1e-13 * (n as f64 + 1.0), "{abi:?} dsdot n={n}: {d} vs {exact}");
                let want = (sb as f64 + exact) as f32;
                assert!(
                    (s - want).abs() <= f32::EPSILON * want.abs(),
                    "{abi:?} sdsdot n={n} incx={incx}: {s} vs {want}"
                );
            }
        }
    }
    // n <= 0: dsdot is 0, sdsdot is sb.
    let x = [1.0f32; 2];
    unsafe {
        assert_eq!(dsdot_(&0, x.as_ptr(), &1, x.as_ptr(), &1), 0.0);
        assert_eq!(sdsdot_(&-1, &2.5, x.as_ptr(), &1, x.as_ptr(), &1), 2.5);
        assert_eq!(cblas_sdsdot(0, 2.5, x.as_ptr(), 1, x.as_ptr(), 1), 2.5);
    }
}

// ---------------------------------------------------------------------------------------
// Bit for bit against the system's reference BLAS, where installed (Debian's libblas3 is
// reference BLAS 3.11). The library is opened with RTLD_LOCAL, so its symbols never replace
// ours.

const REFERENCE_BLAS: &str = "/usr/lib/x86_64-linux-gnu/blas/libblas.so.3";

struct Lib(*mut std::ffi::c_void);

impl Lib {
    fn open(path: &str) -> Option<Lib> {
        let c = std::ffi::CString::new(path).ok()?;
        let h = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if h.is_null() {
            eprintln!("note: {path} not loadable; skipping the comparison with it");
            None
        } else {
            Some(Lib(h))
        }
    }

    /// The symbol `name` as a function pointer of type `F`.
    unsafe fn sym<F: Copy>(&self, name: &str) -> F {
        assert_eq!(std::mem::size_of::<F>(), std::mem::size_of::<*mut std::ffi::c_void>());
        let c = std::ffi::CString::new(name).expect("symbol name");
        let p = libc::dlsym(self.0, c.as_ptr());
        assert!(!p.is_null(), "{name} missing from the library");
        std::mem::transmute_copy(&p)
    }
}

/// Values at the edges of the range of `T::Real` (as f64), for the scalar routines.
fn edge_values<T: Scalar>() -> Vec<f64> {
    let min = r64(<T::Real as Float>::min_positive_value());
    let max = r64(<T::Real as Float>::max_value());
    let eps = r64(<T::Real as Float>::epsilon());
    let mut v = vec![
        0.0,
        1.0,
        0.5,
        3.0,
        7.25,
        1e-3,
        1e3,
        min,
        min / 64.0,
        min.sqrt(),
        (min / eps).sqrt(),
        (min / eps).sqrt() * 1.5,
        max.sqrt(),
        (max * eps).sqrt(),
        (max / 2.0).sqrt(),
        max / 4.0,
        max,
        f64::INFINITY,
        f64::NAN,
    ];
    let neg: Vec<f64> = v.iter().map(|x| -x).collect();
    v.extend(neg);
    v
}

/// A random value with its exponent spread over the whole range of `T::Real`.
fn wide<T: Scalar>(rng: &mut Rng) -> f64 {
    let single = std::mem::size_of::<T::Real>() == 4;
    let (lo, hi) = if single { (-150, 128) } else { (-1075, 1024) };
    let e = lo + (rng.next_u64() % (hi - lo) as u64) as i32;
    let v = rng.unit() * 2f64.powi(e.clamp(-1074, 1023));
    r64(real::<T>(v))
}

fn check_rotg_vs_reference<T: RealL1>(lib: &Lib) {
    type F<T> = unsafe extern "C" fn(*mut T, *mut T, *mut T, *mut T);
    let f: F<T> = unsafe { lib.sym(&format!("{}rotg_", T::PREFIX)) };
    let vals = edge_values::<T>();
    let mut rng = Rng::new(21);
    let mut pairs: Vec<(f64, f64)> = vals.iter().flat_map(|&a| vals.iter().map(move |&b| (a, b))).collect();
    pairs.extend((0..20000).map(|_| (wide::<T>(&mut rng), wide::<T>(&mut rng))));
    for (a0, b0) in pairs {
        let (mut a, mut b) = (real::<T>(a0), real::<T>(b0));
        let (c, s) = unsafe { T::rotg(Abi::Lp64, &mut a, &mut b) };
        let (mut ra, mut rb, mut rc, mut rs) = (real::<T>(a0), real::<T>(b0), real::<T>(0.0), real::<T>(0.0));
        unsafe { f(&mut ra, &mut rb, &mut rc, &mut rs) };
        assert!(
            same(a, ra) && same(b, rb) && same(c, rc) && same(s, rs),
            "{}rotg({a0:e}, {b0:e}): got r={a:e} z={b:e} c={c:e} s={s:e}, reference r={ra:e} z={rb:e} c={rc:e} s={rs:e}",
            T::PREFIX
        );
    }
}

fn check_crotg_vs_reference<T: ComplexL1>(lib: &Lib) {
    type F<T, R> = unsafe extern "C" fn(*mut T, *const T, *mut R, *mut T);
    let f: F<T, T::Real> = unsafe { lib.sym(&format!("{}rotg_", T::PREFIX)) };
    let vals = edge_values::<T>();
    let mut rng = Rng::new(22);
    let pick = |rng: &mut Rng| -> f64 {
        match rng.next_u64() % 4 {
            0 => 0.0,
            1 => vals[(rng.next_u64() % vals.len() as u64) as usize],
            _ => wide::<T>(rng),
        }
    };
    for _ in 0..60000 {
        let f0 = cplx::<T>(pick(&mut rng), pick(&mut rng));
        let g0 = cplx::<T>(pick(&mut rng), pick(&mut rng));
        let mut a = f0;
        let (c, s) = unsafe { T::rotg(Abi::Lp64, &mut a, g0) };
        let (mut ra, mut rc, mut rs) = (f0, real::<T>(0.0), T::zero());
        unsafe { f(&mut ra, &g0, &mut rc, &mut rs) };
        assert!(
            same(a, ra) && same(c, rc) && same(s, rs),
            "{}rotg({f0:?}, {g0:?}): got r={a:?} c={c:?} s={s:?}, reference r={ra:?} c={rc:?} s={rs:?}",
            T::PREFIX
        );
    }
}

/// Rescaling passes rotmg makes for (d1, d2, x1, y1), predicted with the reference's own
/// arithmetic: 3.11 and the current reference differ only when there is more than one.
fn rotmg_passes<R: Real>(d1: R, d2: R, x1: R, y1: R) -> usize {
    let (z, o) = (real::<R>(0.0), real::<R>(1.0));
    let (gam, gamsq, rgamsq) = if std::mem::size_of::<R>() == 4 {
        (real::<R>(4096.0), real::<R>(1.67772e7f32 as f64), real::<R>(5.96046e-8f32 as f64))
    } else {
        (real::<R>(4096.0), real::<R>(16777216.0), real::<R>(5.9604645e-8))
    };
    let (p2, p1) = (d2 * y1, d1 * x1);
    if d1 < z || p2 == z {
        return 0;
    }
    let (q2, q1) = (p2 * y1, p1 * x1);
    let (e1, e2) = if q1.abs() > q2.abs() {
        let u = o - (p2 / p1) * (-y1 / x1);
        if u <= z || u.is_nan() {
            return 0;
        }
        (d1 / u, d2 / u)
    } else if q2 < z {
        return 0;
    } else {
        let u = o + (p1 / p2) * (x1 / y1);
        (d2 / u, d1 / u)
    };
    let count = |mut d: R| {
        let mut k = 0;
        while d != z && d.is_finite() && (d.abs() <= rgamsq || d.abs() >= gamsq) && k < 100 {
            d = if d.abs() <= rgamsq { d * (gam * gam) } else { d / (gam * gam) };
            k += 1;
        }
        k
    };
    count(e1) + count(e2)
}

fn check_rotmg_vs_reference<T: RealL1>(lib: &Lib) {
    type F<T> = unsafe extern "C" fn(*mut T, *mut T, *mut T, *const T, *mut T);
    let f: F<T> = unsafe { lib.sym(&format!("{}rotmg_", T::PREFIX)) };
    let mut rng = Rng::new(23);
    let mut compared = 0;
    for _ in 0..40000 {
        let mut v = || -> T {
            let e = (rng.next_u64() % 80) as i32 - 40;
            let s = if rng.next_u64().is_multiple_of(8) { -1.0 } else { 1.0 };
            match rng.next_u64() % 16 {
                0 => real::<T>(0.0),
                _ => real::<T>(s * (1.0 + rng.unit().abs()) * 2f64.powi(e)),
            }
        };
        let (d1, d2, x1, y1) = (v(), v(), v(), v());
        if rotmg_passes(d1, d2, x1, y1) > 1 {
            continue;
        }
        compared += 1;
        let (mut a1, mut a2, mut ax) = (d1, d2, x1);
        let mut p = [real::<T>(7.0); 5];
        unsafe { T::rotmg(Abi::Lp64, &mut a1, &mut a2, &mut ax, y1, &mut p) };
        let (mut b1, mut b2, mut bx) = (d1, d2, x1);
        let mut q = [real::<T>(7.0); 5];
        unsafe { f(&mut b1, &mut b2, &mut bx, &y1, q.as_mut_ptr()) };
        assert!(
            same(a1, b1) && same(a2, b2) && same(ax, bx) && (0..5).all(|i| same(p[i], q[i])),
            "{}rotmg({d1:e}, {d2:e}, {x1:e}, {y1:e}): got {a1:e} {a2:e} {ax:e} {p:?}, reference {b1:e} {b2:e} {bx:e} {q:?}",
            T::PREFIX
        );
    }
    assert!(compared > 30000, "too few rotmg cases compared: {compared}");
}

/// Random vector data with special values mixed in.
fn spiky<T: Scalar>(rng: &mut Rng, len: usize) -> Vec<T> {
    (0..len)
        .map(|_| {
            let mut part = || match rng.next_u64() % 24 {
                0 => f64::NAN,
                1 => f64::INFINITY,
                2 => -f64::INFINITY,
                3 => -0.0,
                4 => 0.0,
                5 => wide::<T>(rng),
                _ => rng.unit(),
            };
            cplx::<T>(part(), part())
        })
        .collect()
}

fn check_elementwise_vs_reference<T: L1>(lib: &Lib) {
    type Axpy<T> = unsafe extern "C" fn(*const i32, *const T, *const T, *const i32, *mut T, *const i32);
    type Copy<T> = unsafe extern "C" fn(*const i32, *const T, *const i32, *mut T, *const i32);
    type Swap<T> = unsafe extern "C" fn(*const i32, *mut T, *const i32, *mut T, *const i32);
    type Scal<T, A> = unsafe extern "C" fn(*const i32, *const A, *mut T, *const i32);
    type Rot<T, R> = unsafe extern "C" fn(*const i32, *mut T, *const i32, *mut T, *const i32, *const R, *const R);
    let p = T::PREFIX;
    let (axpy, copy, swap): (Axpy<T>, Copy<T>, Swap<T>) =
        unsafe { (lib.sym(&format!("{p}axpy_")), lib.sym(&format!("{p}copy_")), lib.sym(&format!("{p}swap_"))) };
    let scal: Scal<T, T> = unsafe { lib.sym(&format!("{p}scal_")) };
    let (sr, rn) = match p {
        's' => ("sscal_", "srot_"),
        'd' => ("dscal_", "drot_"),
        'c' => ("csscal_", "csrot_"),
        _ => ("zdscal_", "zdrot_"),
    };
    let scal_real: Scal<T, T::Real> = unsafe { lib.sym(sr) };
    let rot: Rot<T, T::Real> = unsafe { lib.sym(rn) };
    let mut rng = Rng::new(24);
    for (n, incx, incy) in [(67usize, 1isize, 1isize), (67, 2, -3), (5, -1, 1), (300, 1, 1)] {
        let (lx, ly) = (buf_len(n, incx), buf_len(n, incy));
        let (ni, ix, iy) = (n as i32, incx as i32, incy as i32);
        let what = |r: &str| format!("{p}{r} n={n} incx={incx} incy={incy}");
        for _ in 0..20 {
            let x: Vec<T> = spiky(&mut rng, lx);
            let y: Vec<T> = spiky(&mut rng, ly);
            let alpha = spiky::<T>(&mut rng, 1)[0];
            let (c, s) = (real::<T>(rng.unit()), real::<T>(rng.unit()));
            let ar = real::<T>(rng.unit() * 3.0);
            unsafe {
                let (mut a, mut b) = (y.clone(), y.clone());
                T::axpy(Abi::Lp64, n as isize, alpha, x.as_ptr(), incx, a.as_mut_ptr(), incy);
                axpy(&ni, &alpha, x.as_ptr(), &ix, b.as_mut_ptr(), &iy);
                assert_same(&a, &b, &what("axpy"));

                let (mut a, mut b) = (y.clone(), y.clone());
                T::copy(Abi::Lp64, n as isize, x.as_ptr(), incx, a.as_mut_ptr(), incy);
                copy(&ni, x.as_ptr(), &ix, b.as_mut_ptr(), &iy);
                assert_same(&a, &b, &what("copy"));

                let (mut a, mut b, mut a2, mut b2) = (x.clone(), y.clone(), x.clone(), y.clone());
                T::swap(Abi::Lp64, n as isize, a.as_mut_ptr(), incx, b.as_mut_ptr(), incy);
                swap(&ni, a2.as_mut_ptr(), &ix, b2.as_mut_ptr(), &iy);
                assert_same(&a, &a2, &what("swap"));
                assert_same(&b, &b2, &what("swap"));

                let incs = incx.abs();
                let is = incs as i32;
                for alpha in [alpha, T::zero(), T::one(), cplx(0.0, 1.0)] {
                    let (mut a, mut b) = (x.clone(), x.clone());
                    T::scal(Abi::Lp64, n as isize, alpha, a.as_mut_ptr(), incs);
                    scal(&ni, &alpha, b.as_mut_ptr(), &is);
                    assert_same(&a, &b, &what("scal"));
                }
                for ar in [ar, real::<T>(0.0), real::<T>(1.0)] {
                    let (mut a, mut b) = (x.clone(), x.clone());
                    T::scal_real(Abi::Lp64, n as isize, ar, a.as_mut_ptr(), incs);
                    scal_real(&ni, &ar, b.as_mut_ptr(), &is);
                    assert_same(&a, &b, &what("scal (real alpha)"));
                }

                let (mut a, mut b, mut a2, mut b2) = (x.clone(), y.clone(), x.clone(), y.clone());
                T::rot(Abi::Lp64, n as isize, a.as_mut_ptr(), incx, b.as_mut_ptr(), incy, c, s);
                rot(&ni, a2.as_mut_ptr(), &ix, b2.as_mut_ptr(), &iy, &c, &s);
                assert_same(&a, &a2, &what("rot"));
                assert_same(&b, &b2, &what("rot"));
            }
        }
    }
}

fn check_rotm_vs_reference<T: RealL1>(lib: &Lib) {
    type Rotm<T> = unsafe extern "C" fn(*const i32, *mut T, *const i32, *mut T, *const i32, *const T);
    let f: Rotm<T> = unsafe { lib.sym(&format!("{}rotm_", T::PREFIX)) };
    let mut rng = Rng::new(25);
    for (n, incx, incy) in [(67usize, 1isize, 1isize), (67, 2, -3), (67, -1, -1), (40, 3, 3)] {
        for flag in [-2.0, -1.0, 0.0, 1.0, -0.5, 3.0] {
            let x: Vec<T> = spiky(&mut rng, buf_len(n, incx));
            let y: Vec<T> = spiky(&mut rng, buf_len(n, incy));
            let mut p: Vec<T> = spiky(&mut rng, 5);
            p[0] = real::<T>(flag);
            let (mut a, mut b, mut a2, mut b2) = (x.clone(), y.clone(), x.clone(), y.clone());
            unsafe {
                T::rotm(Abi::Lp64, n as isize, a.as_mut_ptr(), incx, b.as_mut_ptr(), incy, p.as_ptr());
                f(&(n as i32), a2.as_mut_ptr(), &(incx as i32), b2.as_mut_ptr(), &(incy as i32), p.as_ptr());
            }
            let what = format!("{}rotm n={n} incx={incx} incy={incy} flag={flag}", T::PREFIX);
            assert_same(&a, &a2, &what);
            assert_same(&b, &b2, &what);
        }
    }
}

fn check_reductions_vs_reference<T: L1>(lib: &Lib) {
    type Dot<T> = unsafe extern "C" fn(*const i32, *const T, *const i32, *const T, *const i32) -> T;
    type Norm<T, R> = unsafe extern "C" fn(*const i32, *const T, *const i32) -> R;
    type Amax<T> = unsafe extern "C" fn(*const i32, *const T, *const i32) -> i32;
    let p = T::PREFIX;
    let rp = match p {
        's' => "s",
        'd' => "d",
        'c' => "sc",
        _ => "dz",
    };
    let (dotu, dotc): (Dot<T>, Dot<T>) = unsafe {
        if T::IS_COMPLEX {
            (lib.sym(&format!("{p}dotu_")), lib.sym(&format!("{p}dotc_")))
        } else {
            (lib.sym(&format!("{p}dot_")), lib.sym(&format!("{p}dot_")))
        }
    };
    let nrm2: Norm<T, T::Real> = unsafe { lib.sym(&format!("{rp}nrm2_")) };
    let asum: Norm<T, T::Real> = unsafe { lib.sym(&format!("{rp}asum_")) };
    let amax: Amax<T> = unsafe { lib.sym(&format!("i{p}amax_")) };
    let mut rng = Rng::new(26);
    // Strided calls, and unit-stride ones too short for the vectorised loop, run in the
    // reference's order: results must be identical.
    for (n, incx, incy) in [(67usize, 2isize, -1isize), (67, -3, 2), (67, 0, 1), (3, 1, 1), (2, 1, 1), (1, 1, 1)] {
        let what = |r: &str| format!("{p}{r} n={n} incx={incx} incy={incy}");
        let (ni, ix, iy) = (n as i32, incx as i32, incy as i32);
        for round in 0..40 {
            let (x, y): (Vec<T>, Vec<T>) = if round % 2 == 0 {
                (spiky(&mut rng, buf_len(n, incx)), spiky(&mut rng, buf_len(n, incy)))
            } else {
                let mut w = || {
                    (0..buf_len(n, incx).max(buf_len(n, incy)))
                        .map(|_| cplx(wide::<T>(&mut rng), wide::<T>(&mut rng)))
                        .collect::<Vec<T>>()
                };
                (w(), w())
            };
            unsafe {
                for conj in [false, true] {
                    let got = T::dot(Abi::Lp64, n as isize, x.as_ptr(), incx, y.as_ptr(), incy, conj);
                    let f = if conj { dotc } else { dotu };
                    let want = f(&ni, x.as_ptr(), &ix, y.as_ptr(), &iy);
                    if incx != 1 || incy != 1 {
                        assert!(same(got, want), "{}: {got:?} vs {want:?}", what("dot"));
                    }
                }
                let got = T::nrm2(Abi::Lp64, n as isize, x.as_ptr(), incx);
                let want = nrm2(&ni, x.as_ptr(), &ix);
                assert!(same(got, want), "{}: {got:?} vs {want:?}", what("nrm2"));
                if incx > 0 {
                    let got = T::asum(Abi::Lp64, n as isize, x.as_ptr(), incx);
                    let want = asum(&ni, x.as_ptr(), &ix);
                    if incx != 1 {
                        assert!(same(got, want), "{}: {got:?} vs {want:?}", what("asum"));
                    }
                }
                let got = T::iamax(Abi::Lp64, n as isize, x.as_ptr(), incx);
                let want = amax(&ni, x.as_ptr(), &ix) as isize;
                assert_eq!(got, want, "{}", what("amax"));
            }
        }
    }
    // i?amax on long unit-stride vectors with ties, NaN and Inf.
    for n in [100usize, 1500, 5000] {
        for _ in 0..20 {
            let mut x: Vec<T> = (0..n).map(|_| cplx((rng.unit() * 8.0).round(), (rng.unit() * 8.0).round())).collect();
            for _ in 0..3 {
                let i = (rng.next_u64() % n as u64) as usize;
                x[i] = spiky::<T>(&mut rng, 1)[0];
            }
            let got = unsafe { T::iamax(Abi::Lp64, n as isize, x.as_ptr(), 1) };
            let want = unsafe { amax(&(n as i32), x.as_ptr(), &1) } as isize;
            assert_eq!(got, want, "i{p}amax n={n}");
        }
    }
}

fn check_mixed_vs_reference(lib: &Lib) {
    type Dsdot = unsafe extern "C" fn(*const i32, *const f32, *const i32, *const f32, *const i32) -> f64;
    type Sdsdot = unsafe extern "C" fn(*const i32, *const f32, *const f32, *const i32, *const f32, *const i32) -> f32;
    type Cabs1<T, R> = unsafe extern "C" fn(*const T) -> R;
    let (ds, sds): (Dsdot, Sdsdot) = unsafe { (lib.sym("dsdot_"), lib.sym("sdsdot_")) };
    let (sc, dc): (Cabs1<Cf, f32>, Cabs1<Cd, f64>) = unsafe { (lib.sym("scabs1_"), lib.sym("dcabs1_")) };
    let mut rng = Rng::new(27);
    for (n, incx, incy) in [(67usize, 2isize, -1isize), (67, -3, 2), (8, 1, 1)] {
        for _ in 0..20 {
            let x: Vec<f32> = spiky(&mut rng, buf_len(n, incx));
            let y: Vec<f32> = spiky(&mut rng, buf_len(n, incy));
            let sb = rng.unit() as f32;
            let (ni, ix, iy, nl, lx, ly) = (n as i32, incx as i32, incy as i32, n as i64, incx as i64, incy as i64);
            unsafe {
                let (a, b) =
                    (dsdot_64_(&nl, x.as_ptr(), &lx, y.as_ptr(), &ly), ds(&ni, x.as_ptr(), &ix, y.as_ptr(), &iy));
                assert!(same(a, b), "dsdot n={n} incx={incx}: {a} vs {b}");
                let (a, b) = (
                    sdsdot_64_(&nl, &sb, x.as_ptr(), &lx, y.as_ptr(), &ly),
                    sds(&ni, &sb, x.as_ptr(), &ix, y.as_ptr(), &iy),
                );
                assert!(same(a, b), "sdsdot n={n} incx={incx}: {a} vs {b}");
            }
        }
    }
    for _ in 0..1000 {
        let z: Cf = spiky(&mut rng, 1)[0];
        let w: Cd = spiky(&mut rng, 1)[0];
        unsafe {
            assert!(same(scabs1_(&z), sc(&z)), "scabs1({z:?})");
            assert!(same(dcabs1_(&w), dc(&w)), "dcabs1({w:?})");
        }
    }
}

#[test]
fn vs_reference_rotg() {
    let Some(lib) = Lib::open(REFERENCE_BLAS) else { return };
    check_rotg_vs_reference::<f32>(&lib);
    check_rotg_vs_reference::<f64>(&lib);
    check_crotg_vs_reference::<Cf>(&lib);
    check_crotg_vs_reference::<Cd>(&lib);
}

#[test]
fn vs_reference_rotmg() {
    let Some(lib) = Lib::open(REFERENCE_BLAS) else { return };
    check_rotmg_vs_reference::<f32>(&lib);
    check_rotmg_vs_reference::<f64>(&lib);
}

#[test]
fn vs_reference_elementwise() {
    let Some(lib) = Lib::open(REFERENCE_BLAS) else { return };
    check_elementwise_vs_reference::<f32>(&lib);
    check_elementwise_vs_reference::<f64>(&lib);
    check_elementwise_vs_reference::<Cf>(&lib);
    check_elementwise_vs_reference::<Cd>(&lib);
    check_rotm_vs_reference::<f32>(&lib);
    check_rotm_vs_reference::<f64>(&lib);
}

#[test]
fn vs_reference_reductions() {
    let Some(lib) = Lib::open(REFERENCE_BLAS) else { return };
    check_reductions_vs_reference::<f32>(&lib);
    check_reductions_vs_reference::<f64>(&lib);
    check_reductions_vs_reference::<Cf>(&lib);
    check_reductions_vs_reference::<Cd>(&lib);
    check_mixed_vs_reference(&lib);
}

// ---------------------------------------------------------------------------------------
// Speed against OpenBLAS (not a test: run on demand, see the file's header).

const OPENBLAS: &str = "/usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3";

/// Best-of-`reps` seconds per call of `f`, after a warm-up call.
fn best_time(reps: usize, f: &mut dyn FnMut()) -> f64 {
    f();
    (0..reps)
        .map(|_| {
            let t = std::time::Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

#[test]
#[ignore]
fn timing_vs_openblas() {
    type Axpy = unsafe extern "C" fn(*const i32, *const f64, *const f64, *const i32, *mut f64, *const i32);
    type Dot = unsafe extern "C" fn(*const i32, *const f64, *const i32, *const f64, *const i32) -> f64;
    type Nrm2 = unsafe extern "C" fn(*const i32, *const f64, *const i32) -> f64;
    type Scal = unsafe extern "C" fn(*const i32, *const f64, *mut f64, *const i32);
    type SetThreads = unsafe extern "C" fn(i32);
    // L1_OPENBLAS overrides where OpenBLAS's libblas.so.3 is.
    let path = std::env::var("L1_OPENBLAS").unwrap_or_else(|_| OPENBLAS.to_string());
    let Some(lib) = Lib::open(&path) else { return };
    let (oaxpy, odot, onrm2, oscal): (Axpy, Dot, Nrm2, Scal) =
        unsafe { (lib.sym("daxpy_"), lib.sym("ddot_"), lib.sym("dnrm2_"), lib.sym("dscal_")) };
    let oset: SetThreads = unsafe { lib.sym("openblas_set_num_threads") };
    let mut rng = Rng::new(1);
    // L1_TIMING_WHO=hyblas|openblas times one library only (a library's spinning threads
    // then cannot slow the other); L1_TIMING_LOGS lists the sizes as powers of two.
    let who = std::env::var("L1_TIMING_WHO").unwrap_or_default();
    let (time_h, time_o) = (who != "openblas", who != "hyblas");
    let logs: Vec<u32> = std::env::var("L1_TIMING_LOGS")
        .ok()
        .map(|v| v.split(',').filter_map(|t| t.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![16, 20, 22]);
    println!("{:>8} {:>3} {:>7} {:>11} {:>11} {:>6}", "n", "thr", "routine", "hyblas us", "openblas us", "ratio");
    for log in logs {
        let n = 1usize << log;
        // L1_TIMING_OFFSET=k starts both vectors k doubles past a 64-byte boundary (default:
        // wherever the allocator puts them).
        let off: Option<usize> = std::env::var("L1_TIMING_OFFSET").ok().and_then(|v| v.parse().ok());
        let place = |v: Vec<f64>| -> (Vec<f64>, usize) {
            match off {
                None => (v, 0),
                Some(k) => {
                    let mut b = vec![0.0; n + 16];
                    let a = (b.as_ptr() as usize / 8) % 8;
                    let start = (8 - a) % 8 + k;
                    b[start..start + n].copy_from_slice(&v);
                    (b, start)
                }
            }
        };
        let (xb, xs) = place(rng.vec(n));
        let (mut yb, ys) = place(rng.vec(n));
        let x = &xb[xs..xs + n];
        let y = &mut yb[ys..ys + n];
        let ni = n as i32;
        let reps = if log >= 22 { 20 } else { 200 };
        for threads in [1, 2] {
            hyblas::abi::native::hyblas_set_num_threads(threads);
            unsafe { oset(threads) };
            let a = 1e-9;
            let s = 1.0 + 1e-12;
            let rows: [(&str, f64, f64); 4] = unsafe {
                let (xp, yp) = (x.as_ptr(), y.as_mut_ptr());
                let t = |on: bool, f: &mut dyn FnMut()| if on { best_time(reps, f) } else { f64::NAN };
                [
                    (
                        "daxpy",
                        t(time_h, &mut || daxpy_(&ni, &a, xp, &1, yp, &1)),
                        t(time_o, &mut || oaxpy(&ni, &a, xp, &1, yp, &1)),
                    ),
                    (
                        "ddot",
                        t(time_h, &mut || {
                            std::hint::black_box(ddot_(&ni, xp, &1, yp, &1));
                        }),
                        t(time_o, &mut || {
                            std::hint::black_box(odot(&ni, xp, &1, yp, &1));
                        }),
                    ),
                    (
                        "dnrm2",
                        t(time_h, &mut || {
                            std::hint::black_box(dnrm2_(&ni, xp, &1));
                        }),
                        t(time_o, &mut || {
                            std::hint::black_box(onrm2(&ni, xp, &1));
                        }),
                    ),
                    ("dscal", t(time_h, &mut || dscal_(&ni, &s, yp, &1)), t(time_o, &mut || oscal(&ni, &s, yp, &1))),
                ]
            };
            for (name, h, o) in rows {
                // ratio > 1: hyblas is faster.
                println!("{n:>8} {threads:>3} {name:>7} {:>11.1} {:>11.1} {:>6.2}", h * 1e6, o * 1e6, o / h);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Generated: the L1 implementations (one arm per ABI) and the declarations of every entry point.

impl L1 for f32 {
    unsafe fn axpy(abi: Abi, n: isize, a: Self, x: *const Self, incx: isize, y: *mut Self, incy: isize) {
        match abi {
            Abi::Lp64 => saxpy_(&(n as i32), &a, x, &(incx as i32), y, &(incy as i32)),
            Abi::Ilp64 => saxpy_64_(&(n as i64), &a, x, &(incx as i64), y, &(incy as i64)),
            Abi::Cblas => cblas_saxpy(n as i32, a, x, incx as i32, y, incy as i32),
            Abi::Cblas64 => cblas_saxpy64_(n as i64, a, x, incx as i64, y, incy as i64),
        }
    }
    unsafe fn copy(abi: Abi, n: isize, x: *const Self, incx: isize, y: *mut Self, incy: isize) {
        match abi {
            Abi::Lp64 => scopy_(&(n as i32), x, &(incx as i32), y, &(incy as i32)),
            Abi::Ilp64 => scopy_64_(&(n as i64), x, &(incx as i64), y, &(incy as i64)),
            Abi::Cblas => cblas_scopy(n as i32, x, incx as i32, y, incy as i32),
            Abi::Cblas64 => cblas_scopy64_(n as i64, x, incx as i64, y, incy as i64),
        }
    }
    unsafe fn swap(abi: Abi, n: isize, x: *mut Self, incx: isize, y: *mut Self, incy: isize) {
        match abi {
            Abi::Lp64 => sswap_(&(n as i32), x, &(incx as i32), y, &(incy as i32)),
            Abi::Ilp64 => sswap_64_(&(n as i64), x, &(incx as i64), y, &(incy as i64)),
            Abi::Cblas => cblas_sswap(n as i32, x, incx as i32, y, incy as i32),
            Abi::Cblas64 => cblas_sswap64_(n as i64, x, incx as i64, y, incy as i64),
        }
    }
    unsafe fn scal(abi: Abi, n: isize, a: Self, x: *mut Self, incx: isize) {
        match abi {
            Abi::Lp64 => sscal_(&(n as i32), &a, x, &(incx as i32)),
            Abi::Ilp64 => sscal_64_(&(n as i64), &a, x, &(incx as i64)),
            Abi::Cblas => cblas_sscal(n as i32, a, x, incx as i32),
            Abi::Cblas64 => cblas_sscal64_(n as i64, a, x, incx as i64),
        }
    }
    unsafe fn scal_real(abi: Abi, n: isize, a: f32, x: *mut Self, incx: isize) {
        match abi {
            Abi::Lp64 => sscal_(&(n as i32), &a, x, &(incx as i32)),
            Abi::Ilp64 => sscal_64_(&(n as i64), &a, x, &(incx as i64)),
            Abi::Cblas => cblas_sscal(n as i32, a, x, incx as i32),
            Abi::Cblas64 => cblas_sscal64_(n as i64, a, x, incx as i64),
        }
    }
    unsafe fn rot(abi: Abi, n: isize, x: *mut Self, incx: isize, y: *mut Self, incy: isize, c: f32, s: f32) {
        match abi {
            Abi::Lp64 => srot_(&(n as i32), x, &(incx as i32), y, &(incy as i32), &c, &s),
            Abi::Ilp64 => srot_64_(&(n as i64), x, &(incx as i64), y, &(incy as i64), &c, &s),
            Abi::Cblas => cblas_srot(n as i32, x, incx as i32, y, incy as i32, c, s),
            Abi::Cblas64 => cblas_srot64_(n as i64, x, incx as i64, y, incy as i64, c, s),
        }
    }
    unsafe fn dot(abi: Abi, n: isize, x: *const Self, incx: isize, y: *const Self, incy: isize, _conj: bool) -> Self {
        match abi {
            Abi::Lp64 => sdot_(&(n as i32), x, &(incx as i32), y, &(incy as i32)),
            Abi::Ilp64 => sdot_64_(&(n as i64), x, &(incx as i64), y, &(incy as i64)),
            Abi::Cblas => cblas_sdot(n as i32, x, incx as i32, y, incy as i32),
            Abi::Cblas64 => cblas_sdot64_(n as i64, x, incx as i64, y, incy as i64),
        }
    }
    unsafe fn nrm2(abi: Abi, n: isize, x: *const Self, incx: isize) -> f32 {
        match abi {
            Abi::Lp64 => snrm2_(&(n as i32), x, &(incx as i32)),
            Abi::Ilp64 => snrm2_64_(&(n as i64), x, &(incx as i64)),
            Abi::Cblas => cblas_snrm2(n as i32, x, incx as i32),
            Abi::Cblas64 => cblas_snrm264_(n as i64, x, incx as i64),
        }
    }
    unsafe fn asum(abi: Abi, n: isize, x: *const Self, incx: isize) -> f32 {
        match abi {
            Abi::Lp64 => sasum_(&(n as i32), x, &(incx as i32)),
            Abi::Ilp64 => sasum_64_(&(n as i64), x, &(incx as i64)),
            Abi::Cblas => cblas_sasum(n as i32, x, incx as i32),
            Abi::Cblas64 => cblas_sasum64_(n as i64, x, incx as i64),
        }
    }
    unsafe fn iamax(abi: Abi, n: isize, x: *const Self, incx: isize) -> isize {
        match abi {
            Abi::Lp64 => isamax_(&(n as i32), x, &(incx as i32)) as isize,
            Abi::Ilp64 => isamax_64_(&(n as i64), x, &(incx as i64)) as isize,
            Abi::Cblas => cblas_isamax(n as i32, x, incx as i32) as isize,
            Abi::Cblas64 => cblas_isamax64_(n as i64, x, incx as i64) as isize,
        }
    }
}

impl L1 for f64 {
    unsafe fn axpy(abi: Abi, n: isize, a: Self, x: *const Self, incx: isize, y: *mut Self, incy: isize) {
        match abi {
            Abi::Lp64 => daxpy_(&(n as i32), &a, x, &(incx as i32), y, &(incy as i32)),
            Abi::Ilp64 => daxpy_64_(&(n as i64), &a, x, &(incx as i64), y, &(incy as i64)),
            Abi::Cblas => cblas_daxpy(n as i32, a, x, incx as i32, y, incy as i32),
            Abi::Cblas64 => cblas_daxpy64_(n as i64, a, x, incx as i64, y, incy as i64),
        }
    }
    unsafe fn copy(abi: Abi, n: isize, x: *const Self, incx: isize, y: *mut Self, incy: isize) {
        match abi {
            Abi::Lp64 => dcopy_(&(n as i32), x, &(incx as i32), y, &(incy as i32)),
            Abi::Ilp64 => dcopy_64_(&(n as i64), x, &(incx as i64), y, &(incy as i64)),
            Abi::Cblas => cblas_dcopy(n as i32, x, incx as i32, y, incy as i32),
            Abi::Cblas64 => cblas_dcopy64_(n as i64, x, incx as i64, y, incy as i64),
        }
    }
    unsafe fn swap(abi: Abi, n: isize, x: *mut Self, incx: isize, y: *mut Self, incy: isize) {
        match abi {
            Abi::Lp64 => dswap_(&(n as i32), x, &(incx as i32), y, &(incy as i32)),
            Abi::Ilp64 => dswap_64_(&(n as i64), x, &(incx as i64), y, &(incy as i64)),
            Abi::Cblas => cblas_dswap(n as i32, x, incx as i32, y, incy as i32),
            Abi::Cblas64 => cblas_dswap64_(n as i64, x, incx as i64, y, incy as i64),
        }
    }
    unsafe fn scal(abi: Abi, n: isize, a: Self, x: *mut Self, incx: isize) {
        match abi {
            Abi::Lp64 => dscal_(&(n as i32), &a, x, &(incx as i32)),
            Abi::Ilp64 => dscal_64_(&(n as i64), &a, x, &(incx as i64)),
            Abi::Cblas => cblas_dscal(n as i32, a, x, incx as i32),
            Abi::Cblas64 => cblas_dscal64_(n as i64, a, x, incx as i64),
        }
    }
    unsafe fn scal_real(abi: Abi, n: isize, a: f64, x: *mut Self, incx: isize) {
        match abi {
            Abi::Lp64 => dscal_(&(n as i32), &a, x, &(incx as i32)),
            Abi::Ilp64 => dscal_64_(&(n as i64), &a, x, &(incx as i64)),
            Abi::Cblas => cblas_dscal(n as i32, a, x, incx as i32),
            Abi::Cblas64 => cblas_dscal64_(n as i64, a, x, incx as i64),
        }
    }
    unsafe fn rot(abi: Abi, n: isize, x: *mut Self, incx: isize, y: *mut Self, incy: isize, c: f64, s: f64) {
        match abi {
            Abi::Lp64 => drot_(&(n as i32), x, &(incx as i32), y, &(incy as i32), &c, &s),
            Abi::Ilp64 => drot_64_(&(n as i64), x, &(incx as i64), y, &(incy as i64), &c, &s),
            Abi::Cblas => cblas_drot(n as i32, x, incx as i32, y, incy as i32, c, s),
            Abi::Cblas64 => cblas_drot64_(n as i64, x, incx as i64, y, incy as i64, c, s),
        }
    }
    unsafe fn dot(abi: Abi, n: isize, x: *const Self, incx: isize, y: *const Self, incy: isize, _conj: bool) -> Self {
        match abi {
            Abi::Lp64 => ddot_(&(n as i32), x, &(incx as i32), y, &(incy as i32)),
            Abi::Ilp64 => ddot_64_(&(n as i64), x, &(incx as i64), y, &(incy as i64)),
            Abi::Cblas => cblas_ddot(n as i32, x, incx as i32, y, incy as i32),
            Abi::Cblas64 => cblas_ddot64_(n as i64, x, incx as i64, y, incy as i64),
        }
    }
    unsafe fn nrm2(abi: Abi, n: isize, x: *const Self, incx: isize) -> f64 {
        match abi {
            Abi::Lp64 => dnrm2_(&(n as i32), x, &(incx as i32)),
            Abi::Ilp64 => dnrm2_64_(&(n as i64), x, &(incx as i64)),
            Abi::Cblas => cblas_dnrm2(n as i32, x, incx as i32),
            Abi::Cblas64 => cblas_dnrm264_(n as i64, x, incx as i64),
        }
    }
    unsafe fn asum(abi: Abi, n: isize, x: *const Self, incx: isize) -> f64 {
        match abi {
            Abi::Lp64 => dasum_(&(n as i32), x, &(incx as i32)),
            Abi::Ilp64 => dasum_64_(&(n as i64), x, &(incx as i64)),
            Abi::Cblas => cblas_dasum(n as i32, x, incx as i32),
            Abi::Cblas64 => cblas_dasum64_(n as i64, x, incx as i64),
        }
    }
    unsafe fn iamax(abi: Abi, n: isize, x: *const Self, incx: isize) -> isize {
        match abi {
            Abi::Lp64 => idamax_(&(n as i32), x, &(incx as i32)) as isize,
            Abi::Ilp64 => idamax_64_(&(n as i64), x, &(incx as i64)) as isize,
            Abi::Cblas => cblas_idamax(n as i32, x, incx as i32) as isize,
            Abi::Cblas64 => cblas_idamax64_(n as i64, x, incx as i64) as isize,
        }
    }
}

impl L1 for Cf {
    unsafe fn axpy(abi: Abi, n: isize, a: Self, x: *const Self, incx: isize, y: *mut Self, incy: isize) {
        match abi {
            Abi::Lp64 => caxpy_(&(n as i32), &a, x, &(incx as i32), y, &(incy as i32)),
            Abi::Ilp64 => caxpy_64_(&(n as i64), &a, x, &(incx as i64), y, &(incy as i64)),
            Abi::Cblas => cblas_caxpy(n as i32, &a, x, incx as i32, y, incy as i32),
            Abi::Cblas64 => cblas_caxpy64_(n as i64, &a, x, incx as i64, y, incy as i64),
        }
    }
    unsafe fn copy(abi: Abi, n: isize, x: *const Self, incx: isize, y: *mut Self, incy: isize) {
        match abi {
            Abi::Lp64 => ccopy_(&(n as i32), x, &(incx as i32), y, &(incy as i32)),
            Abi::Ilp64 => ccopy_64_(&(n as i64), x, &(incx as i64), y, &(incy as i64)),
            Abi::Cblas => cblas_ccopy(n as i32, x, incx as i32, y, incy as i32),
            Abi::Cblas64 => cblas_ccopy64_(n as i64, x, incx as i64, y, incy as i64),
        }
    }
    unsafe fn swap(abi: Abi, n: isize, x: *mut Self, incx: isize, y: *mut Self, incy: isize) {
        match abi {
            Abi::Lp64 => cswap_(&(n as i32), x, &(incx as i32), y, &(incy as i32)),
            Abi::Ilp64 => cswap_64_(&(n as i64), x, &(incx as i64), y, &(incy as i64)),
            Abi::Cblas => cblas_cswap(n as i32, x, incx as i32, y, incy as i32),
            Abi::Cblas64 => cblas_cswap64_(n as i64, x, incx as i64, y, incy as i64),
        }
    }
    unsafe fn scal(abi: Abi, n: isize, a: Self, x: *mut Self, incx: isize) {
        match abi {
            Abi::Lp64 => cscal_(&(n as i32), &a, x, &(incx as i32)),
            Abi::Ilp64 => cscal_64_(&(n as i64), &a, x, &(incx as i64)),
            Abi::Cblas => cblas_cscal(n as i32, &a, x, incx as i32),
            Abi::Cblas64 => cblas_cscal64_(n as i64, &a, x, incx as i64),
        }
    }
    unsafe fn scal_real(abi: Abi, n: isize, a: f32, x: *mut Self, incx: isize) {
        match abi {
            Abi::Lp64 => csscal_(&(n as i32), &a, x, &(incx as i32)),
            Abi::Ilp64 => csscal_64_(&(n as i64), &a, x, &(incx as i64)),
            Abi::Cblas => cblas_csscal(n as i32, a, x, incx as i32),
            Abi::Cblas64 => cblas_csscal64_(n as i64, a, x, incx as i64),
        }
    }
    unsafe fn rot(abi: Abi, n: isize, x: *mut Self, incx: isize, y: *mut Self, incy: isize, c: f32, s: f32) {
        match abi {
            Abi::Lp64 => csrot_(&(n as i32), x, &(incx as i32), y, &(incy as i32), &c, &s),
            Abi::Ilp64 => csrot_64_(&(n as i64), x, &(incx as i64), y, &(incy as i64), &c, &s),
            Abi::Cblas => cblas_csrot(n as i32, x, incx as i32, y, incy as i32, c, s),
            Abi::Cblas64 => cblas_csrot64_(n as i64, x, incx as i64, y, incy as i64, c, s),
        }
    }
    unsafe fn dot(abi: Abi, n: isize, x: *const Self, incx: isize, y: *const Self, incy: isize, conj: bool) -> Self {
        match abi {
            Abi::Lp64 => {
                if conj {
                    cdotc_(&(n as i32), x, &(incx as i32), y, &(incy as i32))
                } else {
                    cdotu_(&(n as i32), x, &(incx as i32), y, &(incy as i32))
                }
            }
            Abi::Ilp64 => {
                if conj {
                    cdotc_64_(&(n as i64), x, &(incx as i64), y, &(incy as i64))
                } else {
                    cdotu_64_(&(n as i64), x, &(incx as i64), y, &(incy as i64))
                }
            }
            Abi::Cblas => {
                let mut r = Self::default();
                if conj {
                    cblas_cdotc_sub(n as i32, x, incx as i32, y, incy as i32, &mut r)
                } else {
                    cblas_cdotu_sub(n as i32, x, incx as i32, y, incy as i32, &mut r)
                };
                r
            }
            Abi::Cblas64 => {
                let mut r = Self::default();
                if conj {
                    cblas_cdotc_sub64_(n as i64, x, incx as i64, y, incy as i64, &mut r)
                } else {
                    cblas_cdotu_sub64_(n as i64, x, incx as i64, y, incy as i64, &mut r)
                };
                r
            }
        }
    }
    unsafe fn nrm2(abi: Abi, n: isize, x: *const Self, incx: isize) -> f32 {
        match abi {
            Abi::Lp64 => scnrm2_(&(n as i32), x, &(incx as i32)),
            Abi::Ilp64 => scnrm2_64_(&(n as i64), x, &(incx as i64)),
            Abi::Cblas => cblas_scnrm2(n as i32, x, incx as i32),
            Abi::Cblas64 => cblas_scnrm264_(n as i64, x, incx as i64),
        }
    }
    unsafe fn asum(abi: Abi, n: isize, x: *const Self, incx: isize) -> f32 {
        match abi {
            Abi::Lp64 => scasum_(&(n as i32), x, &(incx as i32)),
            Abi::Ilp64 => scasum_64_(&(n as i64), x, &(incx as i64)),
            Abi::Cblas => cblas_scasum(n as i32, x, incx as i32),
            Abi::Cblas64 => cblas_scasum64_(n as i64, x, incx as i64),
        }
    }
    unsafe fn iamax(abi: Abi, n: isize, x: *const Self, incx: isize) -> isize {
        match abi {
            Abi::Lp64 => icamax_(&(n as i32), x, &(incx as i32)) as isize,
            Abi::Ilp64 => icamax_64_(&(n as i64), x, &(incx as i64)) as isize,
            Abi::Cblas => cblas_icamax(n as i32, x, incx as i32) as isize,
            Abi::Cblas64 => cblas_icamax64_(n as i64, x, incx as i64) as isize,
        }
    }
}

impl L1 for Cd {
    unsafe fn axpy(abi: Abi, n: isize, a: Self, x: *const Self, incx: isize, y: *mut Self, incy: isize) {
        match abi {
            Abi::Lp64 => zaxpy_(&(n as i32), &a, x, &(incx as i32), y, &(incy as i32)),
            Abi::Ilp64 => zaxpy_64_(&(n as i64), &a, x, &(incx as i64), y, &(incy as i64)),
            Abi::Cblas => cblas_zaxpy(n as i32, &a, x, incx as i32, y, incy as i32),
            Abi::Cblas64 => cblas_zaxpy64_(n as i64, &a, x, incx as i64, y, incy as i64),
        }
    }
    unsafe fn copy(abi: Abi, n: isize, x: *const Self, incx: isize, y: *mut Self, incy: isize) {
        match abi {
            Abi::Lp64 => zcopy_(&(n as i32), x, &(incx as i32), y, &(incy as i32)),
            Abi::Ilp64 => zcopy_64_(&(n as i64), x, &(incx as i64), y, &(incy as i64)),
            Abi::Cblas => cblas_zcopy(n as i32, x, incx as i32, y, incy as i32),
            Abi::Cblas64 => cblas_zcopy64_(n as i64, x, incx as i64, y, incy as i64),
        }
    }
    unsafe fn swap(abi: Abi, n: isize, x: *mut Self, incx: isize, y: *mut Self, incy: isize) {
        match abi {
            Abi::Lp64 => zswap_(&(n as i32), x, &(incx as i32), y, &(incy as i32)),
            Abi::Ilp64 => zswap_64_(&(n as i64), x, &(incx as i64), y, &(incy as i64)),
            Abi::Cblas => cblas_zswap(n as i32, x, incx as i32, y, incy as i32),
            Abi::Cblas64 => cblas_zswap64_(n as i64, x, incx as i64, y, incy as i64),
        }
    }
    unsafe fn scal(abi: Abi, n: isize, a: Self, x: *mut Self, incx: isize) {
        match abi {
            Abi::Lp64 => zscal_(&(n as i32), &a, x, &(incx as i32)),
            Abi::Ilp64 => zscal_64_(&(n as i64), &a, x, &(incx as i64)),
            Abi::Cblas => cblas_zscal(n as i32, &a, x, incx as i32),
            Abi::Cblas64 => cblas_zscal64_(n as i64, &a, x, incx as i64),
        }
    }
    unsafe fn scal_real(abi: Abi, n: isize, a: f64, x: *mut Self, incx: isize) {
        match abi {
            Abi::Lp64 => zdscal_(&(n as i32), &a, x, &(incx as i32)),
            Abi::Ilp64 => zdscal_64_(&(n as i64), &a, x, &(incx as i64)),
            Abi::Cblas => cblas_zdscal(n as i32, a, x, incx as i32),
            Abi::Cblas64 => cblas_zdscal64_(n as i64, a, x, incx as i64),
        }
    }
    unsafe fn rot(abi: Abi, n: isize, x: *mut Self, incx: isize, y: *mut Self, incy: isize, c: f64, s: f64) {
        match abi {
            Abi::Lp64 => zdrot_(&(n as i32), x, &(incx as i32), y, &(incy as i32), &c, &s),
            Abi::Ilp64 => zdrot_64_(&(n as i64), x, &(incx as i64), y, &(incy as i64), &c, &s),
            Abi::Cblas => cblas_zdrot(n as i32, x, incx as i32, y, incy as i32, c, s),
            Abi::Cblas64 => cblas_zdrot64_(n as i64, x, incx as i64, y, incy as i64, c, s),
        }
    }
    unsafe fn dot(abi: Abi, n: isize, x: *const Self, incx: isize, y: *const Self, incy: isize, conj: bool) -> Self {
        match abi {
            Abi::Lp64 => {
                if conj {
                    zdotc_(&(n as i32), x, &(incx as i32), y, &(incy as i32))
                } else {
                    zdotu_(&(n as i32), x, &(incx as i32), y, &(incy as i32))
                }
            }
            Abi::Ilp64 => {
                if conj {
                    zdotc_64_(&(n as i64), x, &(incx as i64), y, &(incy as i64))
                } else {
                    zdotu_64_(&(n as i64), x, &(incx as i64), y, &(incy as i64))
                }
            }
            Abi::Cblas => {
                let mut r = Self::default();
                if conj {
                    cblas_zdotc_sub(n as i32, x, incx as i32, y, incy as i32, &mut r)
                } else {
                    cblas_zdotu_sub(n as i32, x, incx as i32, y, incy as i32, &mut r)
                };
                r
            }
            Abi::Cblas64 => {
                let mut r = Self::default();
                if conj {
                    cblas_zdotc_sub64_(n as i64, x, incx as i64, y, incy as i64, &mut r)
                } else {
                    cblas_zdotu_sub64_(n as i64, x, incx as i64, y, incy as i64, &mut r)
                };
                r
            }
        }
    }
    unsafe fn nrm2(abi: Abi, n: isize, x: *const Self, incx: isize) -> f64 {
        match abi {
            Abi::Lp64 => dznrm2_(&(n as i32), x, &(incx as i32)),
            Abi::Ilp64 => dznrm2_64_(&(n as i64), x, &(incx as i64)),
            Abi::Cblas => cblas_dznrm2(n as i32, x, incx as i32),
            Abi::Cblas64 => cblas_dznrm264_(n as i64, x, incx as i64),
        }
    }
    unsafe fn asum(abi: Abi, n: isize, x: *const Self, incx: isize) -> f64 {
        match abi {
            Abi::Lp64 => dzasum_(&(n as i32), x, &(incx as i32)),
            Abi::Ilp64 => dzasum_64_(&(n as i64), x, &(incx as i64)),
            Abi::Cblas => cblas_dzasum(n as i32, x, incx as i32),
            Abi::Cblas64 => cblas_dzasum64_(n as i64, x, incx as i64),
        }
    }
    unsafe fn iamax(abi: Abi, n: isize, x: *const Self, incx: isize) -> isize {
        match abi {
            Abi::Lp64 => izamax_(&(n as i32), x, &(incx as i32)) as isize,
            Abi::Ilp64 => izamax_64_(&(n as i64), x, &(incx as i64)) as isize,
            Abi::Cblas => cblas_izamax(n as i32, x, incx as i32) as isize,
            Abi::Cblas64 => cblas_izamax64_(n as i64, x, incx as i64) as isize,
        }
    }
}

// Generated list of every Level 1 entry point (Fortran LP64/ILP64, CBLAS LP64/ILP64).
extern "C" {
    fn saxpy_(n: *const i32, a: *const f32, x: *const f32, incx: *const i32, y: *mut f32, incy: *const i32);
    fn scopy_(n: *const i32, x: *const f32, incx: *const i32, y: *mut f32, incy: *const i32);
    fn sswap_(n: *const i32, x: *mut f32, incx: *const i32, y: *mut f32, incy: *const i32);
    fn sscal_(n: *const i32, a: *const f32, x: *mut f32, incx: *const i32);
    fn srot_(n: *const i32, x: *mut f32, incx: *const i32, y: *mut f32, incy: *const i32, c: *const f32, s: *const f32);
    fn sasum_(n: *const i32, x: *const f32, incx: *const i32) -> f32;
    fn snrm2_(n: *const i32, x: *const f32, incx: *const i32) -> f32;
    fn isamax_(n: *const i32, x: *const f32, incx: *const i32) -> i32;
    fn sdot_(n: *const i32, x: *const f32, incx: *const i32, y: *const f32, incy: *const i32) -> f32;
    fn srotm_(n: *const i32, x: *mut f32, incx: *const i32, y: *mut f32, incy: *const i32, p: *const f32);
    fn srotg_(a: *mut f32, b: *mut f32, c: *mut f32, s: *mut f32);
    fn srotmg_(d1: *mut f32, d2: *mut f32, x1: *mut f32, y1: *const f32, p: *mut f32);
    fn daxpy_(n: *const i32, a: *const f64, x: *const f64, incx: *const i32, y: *mut f64, incy: *const i32);
    fn dcopy_(n: *const i32, x: *const f64, incx: *const i32, y: *mut f64, incy: *const i32);
    fn dswap_(n: *const i32, x: *mut f64, incx: *const i32, y: *mut f64, incy: *const i32);
    fn dscal_(n: *const i32, a: *const f64, x: *mut f64, incx: *const i32);
    fn drot_(n: *const i32, x: *mut f64, incx: *const i32, y: *mut f64, incy: *const i32, c: *const f64, s: *const f64);
    fn dasum_(n: *const i32, x: *const f64, incx: *const i32) -> f64;
    fn dnrm2_(n: *const i32, x: *const f64, incx: *const i32) -> f64;
    fn idamax_(n: *const i32, x: *const f64, incx: *const i32) -> i32;
    fn ddot_(n: *const i32, x: *const f64, incx: *const i32, y: *const f64, incy: *const i32) -> f64;
    fn drotm_(n: *const i32, x: *mut f64, incx: *const i32, y: *mut f64, incy: *const i32, p: *const f64);
    fn drotg_(a: *mut f64, b: *mut f64, c: *mut f64, s: *mut f64);
    fn drotmg_(d1: *mut f64, d2: *mut f64, x1: *mut f64, y1: *const f64, p: *mut f64);
    fn caxpy_(n: *const i32, a: *const Cf, x: *const Cf, incx: *const i32, y: *mut Cf, incy: *const i32);
    fn ccopy_(n: *const i32, x: *const Cf, incx: *const i32, y: *mut Cf, incy: *const i32);
    fn cswap_(n: *const i32, x: *mut Cf, incx: *const i32, y: *mut Cf, incy: *const i32);
    fn cscal_(n: *const i32, a: *const Cf, x: *mut Cf, incx: *const i32);
    fn csrot_(n: *const i32, x: *mut Cf, incx: *const i32, y: *mut Cf, incy: *const i32, c: *const f32, s: *const f32);
    fn scasum_(n: *const i32, x: *const Cf, incx: *const i32) -> f32;
    fn scnrm2_(n: *const i32, x: *const Cf, incx: *const i32) -> f32;
    fn icamax_(n: *const i32, x: *const Cf, incx: *const i32) -> i32;
    fn cdotu_(n: *const i32, x: *const Cf, incx: *const i32, y: *const Cf, incy: *const i32) -> Cf;
    fn cdotc_(n: *const i32, x: *const Cf, incx: *const i32, y: *const Cf, incy: *const i32) -> Cf;
    fn csscal_(n: *const i32, a: *const f32, x: *mut Cf, incx: *const i32);
    fn crotg_(a: *mut Cf, b: *const Cf, c: *mut f32, s: *mut Cf);
    fn scabs1_(z: *const Cf) -> f32;
    fn zaxpy_(n: *const i32, a: *const Cd, x: *const Cd, incx: *const i32, y: *mut Cd, incy: *const i32);
    fn zcopy_(n: *const i32, x: *const Cd, incx: *const i32, y: *mut Cd, incy: *const i32);
    fn zswap_(n: *const i32, x: *mut Cd, incx: *const i32, y: *mut Cd, incy: *const i32);
    fn zscal_(n: *const i32, a: *const Cd, x: *mut Cd, incx: *const i32);
    fn zdrot_(n: *const i32, x: *mut Cd, incx: *const i32, y: *mut Cd, incy: *const i32, c: *const f64, s: *const f64);
    fn dzasum_(n: *const i32, x: *const Cd, incx: *const i32) -> f64;
    fn dznrm2_(n: *const i32, x: *const Cd, incx: *const i32) -> f64;
    fn izamax_(n: *const i32, x: *const Cd, incx: *const i32) -> i32;
    fn zdotu_(n: *const i32, x: *const Cd, incx: *const i32, y: *const Cd, incy: *const i32) -> Cd;
    fn zdotc_(n: *const i32, x: *const Cd, incx: *const i32, y: *const Cd, incy: *const i32) -> Cd;
    fn zdscal_(n: *const i32, a: *const f64, x: *mut Cd, incx: *const i32);
    fn zrotg_(a: *mut Cd, b: *const Cd, c: *mut f64, s: *mut Cd);
    fn dcabs1_(z: *const Cd) -> f64;
    fn dsdot_(n: *const i32, x: *const f32, incx: *const i32, y: *const f32, incy: *const i32) -> f64;
    fn sdsdot_(n: *const i32, sb: *const f32, x: *const f32, incx: *const i32, y: *const f32, incy: *const i32) -> f32;
    fn saxpy_64_(n: *const i64, a: *const f32, x: *const f32, incx: *const i64, y: *mut f32, incy: *const i64);
    fn scopy_64_(n: *const i64, x: *const f32, incx: *const i64, y: *mut f32, incy: *const i64);
    fn sswap_64_(n: *const i64, x: *mut f32, incx: *const i64, y: *mut f32, incy: *const i64);
    fn sscal_64_(n: *const i64, a: *const f32, x: *mut f32, incx: *const i64);
    fn srot_64_(
        n: *const i64,
        x: *mut f32,
        incx: *const i64,
        y: *mut f32,
        incy: *const i64,
        c: *const f32,
        s: *const f32,
    );
    fn sasum_64_(n: *const i64, x: *const f32, incx: *const i64) -> f32;
    fn snrm2_64_(n: *const i64, x: *const f32, incx: *const i64) -> f32;
    fn isamax_64_(n: *const i64, x: *const f32, incx: *const i64) -> i64;
    fn sdot_64_(n: *const i64, x: *const f32, incx: *const i64, y: *const f32, incy: *const i64) -> f32;
    fn srotm_64_(n: *const i64, x: *mut f32, incx: *const i64, y: *mut f32, incy: *const i64, p: *const f32);
    fn srotg_64_(a: *mut f32, b: *mut f32, c: *mut f32, s: *mut f32);
    fn srotmg_64_(d1: *mut f32, d2: *mut f32, x1: *mut f32, y1: *const f32, p: *mut f32);
    fn daxpy_64_(n: *const i64, a: *const f64, x: *const f64, incx: *const i64, y: *mut f64, incy: *const i64);
    fn dcopy_64_(n: *const i64, x: *const f64, incx: *const i64, y: *mut f64, incy: *const i64);
    fn dswap_64_(n: *const i64, x: *mut f64, incx: *const i64, y: *mut f64, incy: *const i64);
    fn dscal_64_(n: *const i64, a: *const f64, x: *mut f64, incx: *const i64);
    fn drot_64_(
        n: *const i64,
        x: *mut f64,
        incx: *const i64,
        y: *mut f64,
        incy: *const i64,
        c: *const f64,
        s: *const f64,
    );
    fn dasum_64_(n: *const i64, x: *const f64, incx: *const i64) -> f64;
    fn dnrm2_64_(n: *const i64, x: *const f64, incx: *const i64) -> f64;
    fn idamax_64_(n: *const i64, x: *const f64, incx: *const i64) -> i64;
    fn ddot_64_(n: *const i64, x: *const f64, incx: *const i64, y: *const f64, incy: *const i64) -> f64;
    fn drotm_64_(n: *const i64, x: *mut f64, incx: *const i64, y: *mut f64, incy: *const i64, p: *const f64);
    fn drotg_64_(a: *mut f64, b: *mut f64, c: *mut f64, s: *mut f64);
    fn drotmg_64_(d1: *mut f64, d2: *mut f64, x1: *mut f64, y1: *const f64, p: *mut f64);
    fn caxpy_64_(n: *const i64, a: *const Cf, x: *const Cf, incx: *const i64, y: *mut Cf, incy: *const i64);
    fn ccopy_64_(n: *const i64, x: *const Cf, incx: *const i64, y: *mut Cf, incy: *const i64);
    fn cswap_64_(n: *const i64, x: *mut Cf, incx: *const i64, y: *mut Cf, incy: *const i64);
    fn cscal_64_(n: *const i64, a: *const Cf, x: *mut Cf, incx: *const i64);
    fn csrot_64_(
        n: *const i64,
        x: *mut Cf,
        incx: *const i64,
        y: *mut Cf,
        incy: *const i64,
        c: *const f32,
        s: *const f32,
    );
    fn scasum_64_(n: *const i64, x: *const Cf, incx: *const i64) -> f32;
    fn scnrm2_64_(n: *const i64, x: *const Cf, incx: *const i64) -> f32;
    fn icamax_64_(n: *const i64, x: *const Cf, incx: *const i64) -> i64;
    fn cdotu_64_(n: *const i64, x: *const Cf, incx: *const i64, y: *const Cf, incy: *const i64) -> Cf;
    fn cdotc_64_(n: *const i64, x: *const Cf, incx: *const i64, y: *const Cf, incy: *const i64) -> Cf;
    fn csscal_64_(n: *const i64, a: *const f32, x: *mut Cf, incx: *const i64);
    fn crotg_64_(a: *mut Cf, b: *const Cf, c: *mut f32, s: *mut Cf);
    fn scabs1_64_(z: *const Cf) -> f32;
    fn zaxpy_64_(n: *const i64, a: *const Cd, x: *const Cd, incx: *const i64, y: *mut Cd, incy: *const i64);
    fn zcopy_64_(n: *const i64, x: *const Cd, incx: *const i64, y: *mut Cd, incy: *const i64);
    fn zswap_64_(n: *const i64, x: *mut Cd, incx: *const i64, y: *mut Cd, incy: *const i64);
    fn zscal_64_(n: *const i64, a: *const Cd, x: *mut Cd, incx: *const i64);
    fn zdrot_64_(
        n: *const i64,
        x: *mut Cd,
        incx: *const i64,
        y: *mut Cd,
        incy: *const i64,
        c: *const f64,
        s: *const f64,
    );
    fn dzasum_64_(n: *const i64, x: *const Cd, incx: *const i64) -> f64;
    fn dznrm2_64_(n: *const i64, x: *const Cd, incx: *const i64) -> f64;
    fn izamax_64_(n: *const i64, x: *const Cd, incx: *const i64) -> i64;
    fn zdotu_64_(n: *const i64, x: *const Cd, incx: *const i64, y: *const Cd, incy: *const i64) -> Cd;
    fn zdotc_64_(n: *const i64, x: *const Cd, incx: *const i64, y: *const Cd, incy: *const i64) -> Cd;
    fn zdscal_64_(n: *const i64, a: *const f64, x: *mut Cd, incx: *const i64);
    fn zrotg_64_(a: *mut Cd, b: *const Cd, c: *mut f64, s: *mut Cd);
    fn dcabs1_64_(z: *const Cd) -> f64;
    fn dsdot_64_(n: *const i64, x: *const f32, incx: *const i64, y: *const f32, incy: *const i64) -> f64;
    fn sdsdot_64_(
        n: *const i64,
        sb: *const f32,
        x: *const f32,
        incx: *const i64,
        y: *const f32,
        incy: *const i64,
    ) -> f32;
    fn cblas_saxpy(n: i32, a: f32, x: *const f32, incx: i32, y: *mut f32, incy: i32);
    fn cblas_scopy(n: i32, x: *const f32, incx: i32, y: *mut f32, incy: i32);
    fn cblas_sswap(n: i32, x: *mut f32, incx: i32, y: *mut f32, incy: i32);
    fn cblas_sscal(n: i32, a: f32, x: *mut f32, incx: i32);
    fn cblas_srot(n: i32, x: *mut f32, incx: i32, y: *mut f32, incy: i32, c: f32, s: f32);
    fn cblas_sasum(n: i32, x: *const f32, incx: i32) -> f32;
    fn cblas_snrm2(n: i32, x: *const f32, incx: i32) -> f32;
    fn cblas_isamax(n: i32, x: *const f32, incx: i32) -> usize;
    fn cblas_sdot(n: i32, x: *const f32, incx: i32, y: *const f32, incy: i32) -> f32;
    fn cblas_srotm(n: i32, x: *mut f32, incx: i32, y: *mut f32, incy: i32, p: *const f32);
    fn cblas_srotg(a: *mut f32, b: *mut f32, c: *mut f32, s: *mut f32);
    fn cblas_srotmg(d1: *mut f32, d2: *mut f32, x1: *mut f32, y1: f32, p: *mut f32);
    fn cblas_daxpy(n: i32, a: f64, x: *const f64, incx: i32, y: *mut f64, incy: i32);
    fn cblas_dcopy(n: i32, x: *const f64, incx: i32, y: *mut f64, incy: i32);
    fn cblas_dswap(n: i32, x: *mut f64, incx: i32, y: *mut f64, incy: i32);
    fn cblas_dscal(n: i32, a: f64, x: *mut f64, incx: i32);
    fn cblas_drot(n: i32, x: *mut f64, incx: i32, y: *mut f64, incy: i32, c: f64, s: f64);
    fn cblas_dasum(n: i32, x: *const f64, incx: i32) -> f64;
    fn cblas_dnrm2(n: i32, x: *const f64, incx: i32) -> f64;
    fn cblas_idamax(n: i32, x: *const f64, incx: i32) -> usize;
    fn cblas_ddot(n: i32, x: *const f64, incx: i32, y: *const f64, incy: i32) -> f64;
    fn cblas_drotm(n: i32, x: *mut f64, incx: i32, y: *mut f64, incy: i32, p: *const f64);
    fn cblas_drotg(a: *mut f64, b: *mut f64, c: *mut f64, s: *mut f64);
    fn cblas_drotmg(d1: *mut f64, d2: *mut f64, x1: *mut f64, y1: f64, p: *mut f64);
    fn cblas_caxpy(n: i32, a: *const Cf, x: *const Cf, incx: i32, y: *mut Cf, incy: i32);
    fn cblas_ccopy(n: i32, x: *const Cf, incx: i32, y: *mut Cf, incy: i32);
    fn cblas_cswap(n: i32, x: *mut Cf, incx: i32, y: *mut Cf, incy: i32);
    fn cblas_cscal(n: i32, a: *const Cf, x: *mut Cf, incx: i32);
    fn cblas_csrot(n: i32, x: *mut Cf, incx: i32, y: *mut Cf, incy: i32, c: f32, s: f32);
    fn cblas_scasum(n: i32, x: *const Cf, incx: i32) -> f32;
    fn cblas_scnrm2(n: i32, x: *const Cf, incx: i32) -> f32;
    fn cblas_icamax(n: i32, x: *const Cf, incx: i32) -> usize;
    fn cblas_cdotu_sub(n: i32, x: *const Cf, incx: i32, y: *const Cf, incy: i32, r: *mut Cf);
    fn cblas_cdotc_sub(n: i32, x: *const Cf, incx: i32, y: *const Cf, incy: i32, r: *mut Cf);
    fn cblas_csscal(n: i32, a: f32, x: *mut Cf, incx: i32);
    fn cblas_crotg(a: *mut Cf, b: *const Cf, c: *mut f32, s: *mut Cf);
    fn cblas_scabs1(z: *const Cf) -> f32;
    fn cblas_zaxpy(n: i32, a: *const Cd, x: *const Cd, incx: i32, y: *mut Cd, incy: i32);
    fn cblas_zcopy(n: i32, x: *const Cd, incx: i32, y: *mut Cd, incy: i32);
    fn cblas_zswap(n: i32, x: *mut Cd, incx: i32, y: *mut Cd, incy: i32);
    fn cblas_zscal(n: i32, a: *const Cd, x: *mut Cd, incx: i32);
    fn cblas_zdrot(n: i32, x: *mut Cd, incx: i32, y: *mut Cd, incy: i32, c: f64, s: f64);
    fn cblas_dzasum(n: i32, x: *const Cd, incx: i32) -> f64;
    fn cblas_dznrm2(n: i32, x: *const Cd, incx: i32) -> f64;
    fn cblas_izamax(n: i32, x: *const Cd, incx: i32) -> usize;
    fn cblas_zdotu_sub(n: i32, x: *const Cd, incx: i32, y: *const Cd, incy: i32, r: *mut Cd);
    fn cblas_zdotc_sub(n: i32, x: *const Cd, incx: i32, y: *const Cd, incy: i32, r: *mut Cd);
    fn cblas_zdscal(n: i32, a: f64, x: *mut Cd, incx: i32);
    fn cblas_zrotg(a: *mut Cd, b: *const Cd, c: *mut f64, s: *mut Cd);
    fn cblas_dcabs1(z: *const Cd) -> f64;
    fn cblas_dsdot(n: i32, x: *const f32, incx: i32, y: *const f32, incy: i32) -> f64;
    fn cblas_sdsdot(n: i32, sb: f32, x: *const f32, incx: i32, y: *const f32, incy: i32) -> f32;
    fn cblas_saxpy64_(n: i64, a: f32, x: *const f32, incx: i64, y: *mut f32, incy: i64);
    fn cblas_scopy64_(n: i64, x: *const f32, incx: i64, y: *mut f32, incy: i64);
    fn cblas_sswap64_(n: i64, x: *mut f32, incx: i64, y: *mut f32, incy: i64);
    fn cblas_sscal64_(n: i64, a: f32, x: *mut f32, incx: i64);
    fn cblas_srot64_(n: i64, x: *mut f32, incx: i64, y: *mut f32, incy: i64, c: f32, s: f32);
    fn cblas_sasum64_(n: i64, x: *const f32, incx: i64) -> f32;
    fn cblas_snrm264_(n: i64, x: *const f32, incx: i64) -> f32;
    fn cblas_isamax64_(n: i64, x: *const f32, incx: i64) -> usize;
    fn cblas_sdot64_(n: i64, x: *const f32, incx: i64, y: *const f32, incy: i64) -> f32;
    fn cblas_srotm64_(n: i64, x: *mut f32, incx: i64, y: *mut f32, incy: i64, p: *const f32);
    fn cblas_srotg64_(a: *mut f32, b: *mut f32, c: *mut f32, s: *mut f32);
    fn cblas_srotmg64_(d1: *mut f32, d2: *mut f32, x1: *mut f32, y1: f32, p: *mut f32);
    fn cblas_daxpy64_(n: i64, a: f64, x: *const f64, incx: i64, y: *mut f64, incy: i64);
    fn cblas_dcopy64_(n: i64, x: *const f64, incx: i64, y: *mut f64, incy: i64);
    fn cblas_dswap64_(n: i64, x: *mut f64, incx: i64, y: *mut f64, incy: i64);
    fn cblas_dscal64_(n: i64, a: f64, x: *mut f64, incx: i64);
    fn cblas_drot64_(n: i64, x: *mut f64, incx: i64, y: *mut f64, incy: i64, c: f64, s: f64);
    fn cblas_dasum64_(n: i64, x: *const f64, incx: i64) -> f64;
    fn cblas_dnrm264_(n: i64, x: *const f64, incx: i64) -> f64;
    fn cblas_idamax64_(n: i64, x: *const f64, incx: i64) -> usize;
    fn cblas_ddot64_(n: i64, x: *const f64, incx: i64, y: *const f64, incy: i64) -> f64;
    fn cblas_drotm64_(n: i64, x: *mut f64, incx: i64, y: *mut f64, incy: i64, p: *const f64);
    fn cblas_drotg64_(a: *mut f64, b: *mut f64, c: *mut f64, s: *mut f64);
    fn cblas_drotmg64_(d1: *mut f64, d2: *mut f64, x1: *mut f64, y1: f64, p: *mut f64);
    fn cblas_caxpy64_(n: i64, a: *const Cf, x: *const Cf, incx: i64, y: *mut Cf, incy: i64);
    fn cblas_ccopy64_(n: i64, x: *const Cf, incx: i64, y: *mut Cf, incy: i64);
    fn cblas_cswap64_(n: i64, x: *mut Cf, incx: i64, y: *mut Cf, incy: i64);
    fn cblas_cscal64_(n: i64, a: *const Cf, x: *mut Cf, incx: i64);
    fn cblas_csrot64_(n: i64, x: *mut Cf, incx: i64, y: *mut Cf, incy: i64, c: f32, s: f32);
    fn cblas_scasum64_(n: i64, x: *const Cf, incx: i64) -> f32;
    fn cblas_scnrm264_(n: i64, x: *const Cf, incx: i64) -> f32;
    fn cblas_icamax64_(n: i64, x: *const Cf, incx: i64) -> usize;
    fn cblas_cdotu_sub64_(n: i64, x: *const Cf, incx: i64, y: *const Cf, incy: i64, r: *mut Cf);
    fn cblas_cdotc_sub64_(n: i64, x: *const Cf, incx: i64, y: *const Cf, incy: i64, r: *mut Cf);
    fn cblas_csscal64_(n: i64, a: f32, x: *mut Cf, incx: i64);
    fn cblas_crotg64_(a: *mut Cf, b: *const Cf, c: *mut f32, s: *mut Cf);
    fn cblas_scabs164_(z: *const Cf) -> f32;
    fn cblas_zaxpy64_(n: i64, a: *const Cd, x: *const Cd, incx: i64, y: *mut Cd, incy: i64);
    fn cblas_zcopy64_(n: i64, x: *const Cd, incx: i64, y: *mut Cd, incy: i64);
    fn cblas_zswap64_(n: i64, x: *mut Cd, incx: i64, y: *mut Cd, incy: i64);
    fn cblas_zscal64_(n: i64, a: *const Cd, x: *mut Cd, incx: i64);
    fn cblas_zdrot64_(n: i64, x: *mut Cd, incx: i64, y: *mut Cd, incy: i64, c: f64, s: f64);
    fn cblas_dzasum64_(n: i64, x: *const Cd, incx: i64) -> f64;
    fn cblas_dznrm264_(n: i64, x: *const Cd, incx: i64) -> f64;
    fn cblas_izamax64_(n: i64, x: *const Cd, incx: i64) -> usize;
    fn cblas_zdotu_sub64_(n: i64, x: *const Cd, incx: i64, y: *const Cd, incy: i64, r: *mut Cd);
    fn cblas_zdotc_sub64_(n: i64, x: *const Cd, incx: i64, y: *const Cd, incy: i64, r: *mut Cd);
    fn cblas_zdscal64_(n: i64, a: f64, x: *mut Cd, incx: i64);
    fn cblas_zrotg64_(a: *mut Cd, b: *const Cd, c: *mut f64, s: *mut Cd);
    fn cblas_dcabs164_(z: *const Cd) -> f64;
    fn cblas_dsdot64_(n: i64, x: *const f32, incx: i64, y: *const f32, incy: i64) -> f64;
    fn cblas_sdsdot64_(n: i64, sb: f32, x: *const f32, incx: i64, y: *const f32, incy: i64) -> f32;
}

#[test]
#[ignore]
fn timing_dispatch() {
    // Cost of an empty two-part dispatch through the pool.
    hyblas::abi::native::hyblas_set_num_threads(2);
    let t = best_time(2000, &mut || {
        hyblas::cpu::threads::for_each_part(2, 2, |p| {
            std::hint::black_box(p);
        })
    });
    println!("empty for_each_part(2, 2): {:.2} us", t * 1e6);
    let mut v = vec![0.0f64; 1 << 16];
    let t = best_time(2000, &mut || {
        hyblas::cpu::threads::for_each_part(2, 2, |p| {
            std::hint::black_box(p);
        });
        v[0] += 1.0;
    });
    println!("again: {:.2} us", t * 1e6);
    let mut times: Vec<f64> = (0..2000)
        .map(|_| {
            let s = std::time::Instant::now();
            hyblas::cpu::threads::for_each_part(2, 2, |p| {
                std::hint::black_box(p);
            });
            s.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    times.sort_by(|a, b| a.total_cmp(b));
    println!("median {:.2} us, p90 {:.2} us", times[1000], times[1800]);
    let mut times: Vec<f64> = (0..2000)
        .map(|_| {
            let s = std::time::Instant::now();
            hyblas::cpu::threads::for_each_part_inline(2, 2, |p| {
                std::hint::black_box(p);
            });
            s.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    times.sort_by(|a, b| a.total_cmp(b));
    println!("inline: best {:.2} median {:.2} us, p90 {:.2} us", times[0], times[1000], times[1800]);
}
