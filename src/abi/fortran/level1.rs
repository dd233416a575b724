//! Fortran Level 1 BLAS.
//!
//! The generic functions here take their scalars and integers by value and are shared with
//! the CBLAS wrappers (Level 1 has no layout and no argument errors, so both ABIs are the same
//! call). They apply the reference's quick returns and increment rules, build the views, and
//! run the call through the planner.

use crate::abi::cublas::host_vendor as vendor;
use crate::cpu::level1 as eng;
use crate::gpu::{level1 as gpu, DVec, In, Out};
use crate::plan;
use crate::types::{FInt, Scalar, VecMut, VecRef};
use num_complex::Complex;
use std::ffi::c_void;

/// Read a by-reference Fortran integer.
#[inline(always)]
unsafe fn rd<I: FInt>(p: *const I) -> isize {
    I::read(p)
}

/// Run `f` (hyblas's kernel for a call on device memory), waiting for its kernel where `wait`:
/// a zero increment, which the real cuBLAS (the path taken while a kernel compiles) does not
/// define, where the reference's sequential loop (and hyblas's kernels) do.
fn waiting_if<R>(wait: bool, f: impl FnOnce() -> R) -> R {
    if wait {
        crate::gpu::loader::routed(true, f)
    } else {
        f()
    }
}

/// Prefix of a routine with a real result over possibly complex data: sasum, dasum, scasum,
/// dzasum (and the nrm2 names).
fn real_result_prefix<T: Scalar>() -> &'static str {
    match T::PREFIX {
        's' => "s",
        'd' => "d",
        'c' => "sc",
        _ => "dz",
    }
}

/// Prefix of a routine with a real scalar over possibly complex data: csscal, zdscal, csrot,
/// zdrot.
fn real_scalar_prefix<T: Scalar>() -> &'static str {
    match T::PREFIX {
        's' => "s",
        'd' => "d",
        'c' => "cs",
        _ => "zd",
    }
}

/// `?axpy`: y := alpha*x + y.
///
/// # Safety
/// Pointers as in reference BLAS.
pub unsafe fn axpy<T: Scalar>(n: isize, alpha: T, x: *const T, incx: isize, y: *mut T, incy: isize) {
    if n <= 0 || alpha.is_zero() {
        return;
    }
    let shape = || format!("n={n} incx={incx} incy={incy}");
    let ops = [x as *const c_void, y as *const c_void];
    let (xd, yd) = (DVec::of(x, incx), DVec::of(y, incy));
    let zero_inc = incx == 0 || incy == 0;
    let dev = |ex: &_| waiting_if(zero_inc, || gpu::axpy::<T>(ex, n as i64, In::Host(alpha), xd, yd));
    let vnd = |ex: &_| vendor::axpy::<T>(ex, n as i64, alpha, xd, yd);
    if plan::on_gpu(T::PREFIX, "axpy", shape, &ops, dev, vnd).is_some() {
        return;
    }
    let n = n as usize;
    let x = VecRef::from_blas(x, n, incx);
    let y = VecMut::from_blas(y, n, incy);
    plan::run::<T, _>("axpy", || format!("n={n} incx={incx} incy={incy}"), || eng::axpy(alpha, x, y));
}

/// `?copy`: y := x.
///
/// # Safety
/// Pointers as in reference BLAS.
pub unsafe fn copy<T: Scalar>(n: isize, x: *const T, incx: isize, y: *mut T, incy: isize) {
    if n <= 0 {
        return;
    }
    let shape = || format!("n={n} incx={incx} incy={incy}");
    let ops = [x as *const c_void, y as *const c_void];
    let (xd, yd) = (DVec::of(x, incx), DVec::of(y, incy));
    let zero_inc = incx == 0 || incy == 0;
    let dev = |ex: &_| waiting_if(zero_inc, || gpu::copy::<T>(ex, n as i64, xd, yd));
    let vnd = |ex: &_| vendor::copy::<T>(ex, n as i64, xd, yd);
    if plan::on_gpu(T::PREFIX, "copy", shape, &ops, dev, vnd).is_some() {
        return;
    }
    let n = n as usize;
    let x = VecRef::from_blas(x, n, incx);
    let y = VecMut::from_blas(y, n, incy);
    plan::run::<T, _>("copy", || format!("n={n} incx={incx} incy={incy}"), || eng::copy(x, y));
}

/// `?swap`: x <-> y.
///
/// # Safety
/// Pointers as in reference BLAS.
pub unsafe fn swap<T: Scalar>(n: isize, x: *mut T, incx: isize, y: *mut T, incy: isize) {
    if n <= 0 {
        return;
    }
    let shape = || format!("n={n} incx={incx} incy={incy}");
    let ops = [x as *const c_void, y as *const c_void];
    let (xd, yd) = (DVec::of(x, incx), DVec::of(y, incy));
    let zero_inc = incx == 0 || incy == 0;
    let dev = |ex: &_| waiting_if(zero_inc, || gpu::swap::<T>(ex, n as i64, xd, yd));
    let vnd = |ex: &_| vendor::swap::<T>(ex, n as i64, xd, yd);
    if plan::on_gpu(T::PREFIX, "swap", shape, &ops, dev, vnd).is_some() {
        return;
    }
    let n = n as usize;
    let x = VecMut::from_blas(x, n, incx);
    let y = VecMut::from_blas(y, n, incy);
    plan::run::<T, _>("swap", || format!("n={n} incx={incx} incy={incy}"), || eng::swap(x, y));
}

/// `?scal`: x := alpha*x. Nothing happens for incx <= 0 or alpha == 1 (the reference's quick
/// returns: a complex alpha of 1 leaves Inf entries as they are instead of making NaN parts).
///
/// # Safety
/// Pointers as in reference BLAS.
pub unsafe fn scal<T: Scalar>(n: isize, alpha: T, x: *mut T, incx: isize) {
    if n <= 0 || incx <= 0 || alpha.is_one() {
        return;
    }
    let shape = || format!("n={n} incx={incx}");
    let dev = |ex: &_| gpu::scal::<T, T>(ex, n as i64, In::Host(alpha), DVec::of(x, incx));
    let vnd = |ex: &_| vendor::scal::<T>(ex, n as i64, alpha, DVec::of(x, incx));
    if plan::on_gpu(T::PREFIX, "scal", shape, &[x as *const c_void], dev, vnd).is_some() {
        return;
    }
    let n = n as usize;
    let x = VecMut::from_blas(x, n, incx);
    plan::run::<T, _>("scal", || format!("n={n} incx={incx}"), || eng::scal(alpha, x));
}

/// `csscal`, `zdscal` (and `?scal` for real T): x := alpha*x with a real alpha.
///
/// # Safety
/// Pointers as in reference BLAS.
pub unsafe fn scal_real<T: Scalar>(n: isize, alpha: T::Real, x: *mut T, incx: isize) {
    if n <= 0 || incx <= 0 || alpha == <T::Real as Scalar>::one() {
        return;
    }
    let shape = || format!("n={n} incx={incx}");
    let dev = |ex: &_| gpu::scal::<T, T::Real>(ex, n as i64, In::Host(alpha), DVec::of(x, incx));
    let vnd = |ex: &_| vendor::scal_real::<T>(ex, n as i64, alpha, DVec::of(x, incx));
    if plan::on_gpu(real_scalar_prefix::<T>(), "scal", shape, &[x as *const c_void], dev, vnd).is_some() {
        return;
    }
    let n = n as usize;
    let x = VecMut::from_blas(x, n, incx);
    plan::run_named(real_scalar_prefix::<T>(), "scal", || format!("n={n} incx={incx}"), || eng::scal_real(alpha, x));
}

/// `?rot`, `csrot`, `zdrot`: apply the plane rotation (c, s) to (x, y).
///
/// # Safety
/// Pointers as in reference BLAS.
pub unsafe fn rot<T: Scalar>(n: isize, x: *mut T, incx: isize, y: *mut T, incy: isize, c: T::Real, s: T::Real) {
    if n <= 0 {
        return;
    }
    let n = n as usize;
    let x = VecMut::from_blas(x, n, incx);
    let y = VecMut::from_blas(y, n, incy);
    plan::run_named(
        real_scalar_prefix::<T>(),
        "rot",
        || format!("n={n} incx={incx} incy={incy}"),
        || eng::rot(c, s, x, y),
    );
}

/// `?rotm`: apply the modified Givens transformation described by `param` (5 reals).
///
/// # Safety
/// Pointers as in reference BLAS.
pub unsafe fn rotm<R: crate::types::Real>(n: isize, x: *mut R, incx: isize, y: *mut R, incy: isize, param: *const R) {
    if n <= 0 {
        return;
    }
    let flag = *param;
    if flag == <R as Scalar>::from_f64(-2.0) {
        return;
    }
    let param = [flag, *param.add(1), *param.add(2), *param.add(3), *param.add(4)];
    let n = n as usize;
    let x = VecMut::from_blas(x, n, incx);
    let y = VecMut::from_blas(y, n, incy);
    plan::run::<R, _>("rotm", || format!("n={n} incx={incx} incy={incy} flag={flag:?}"), || eng::rotm(param, x, y));
}

/// `srotg`, `drotg`: construct a Givens rotation; a := r, b := z.
///
/// # Safety
/// All four pointers valid.
pub unsafe fn rotg<R: crate::types::Real>(a: *mut R, b: *mut R, c: *mut R, s: *mut R) {
    let (cv, sv) = plan::run::<R, _>("rotg", String::new, || eng::rotg(&mut *a, &mut *b));
    *c = cv;
    *s = sv;
}

/// `crotg`, `zrotg`: construct a complex Givens rotation; a := r.
///
/// # Safety
/// All four pointers valid.
pub unsafe fn rotg_complex<R: crate::types::Real>(
    a: *mut Complex<R>,
    b: *const Complex<R>,
    c: *mut R,
    s: *mut Complex<R>,
) where
    Complex<R>: Scalar,
{
    let b = *b;
    let (cv, sv) = plan::run::<Complex<R>, _>("rotg", String::new, || eng::rotg_complex(&mut *a, b));
    *c = cv;
    *s = sv;
}

/// `?rotmg`: construct a modified Givens transformation; writes d1, d2, x1 and the slots of
/// `param` the reference writes (the others keep their values).
///
/// # Safety
/// All pointers valid; `param` has 5 elements.
pub unsafe fn rotmg<R: crate::types::Real>(d1: *mut R, d2: *mut R, x1: *mut R, y1: R, param: *mut R) {
    let r = plan::run::<R, _>("rotmg", String::new, || eng::rotmg(*d1, *d2, *x1, y1));
    *d1 = r.d1;
    *d2 = r.d2;
    *x1 = r.x1;
    for (i, v) in r.param.iter().enumerate() {
        if let Some(v) = v {
            *param.add(i) = *v;
        }
    }
}

/// `?dot`, `?dotu`, `?dotc` (conjugating x).
///
/// # Safety
/// Pointers as in reference BLAS.
pub unsafe fn dot<T: Scalar>(n: isize, x: *const T, incx: isize, y: *const T, incy: isize, conj: bool) -> T {
    if n <= 0 {
        return T::zero();
    }
    let name = if !T::IS_COMPLEX {
        "dot"
    } else if conj {
        "dotc"
    } else {
        "dotu"
    };
    let shape = || format!("n={n} incx={incx} incy={incy}");
    let ops = [x as *const c_void, y as *const c_void];
    let (xd, yd) = (DVec::of(x, incx), DVec::of(y, incy));
    let dev = |ex: &_| {
        let mut r = T::zero();
        waiting_if(incx == 0 || incy == 0, || gpu::dot::<T>(ex, n as i64, xd, yd, conj, Out::Host(&mut r))).map(|_| r)
    };
    let vnd = |ex: &_| vendor::dot::<T>(ex, n as i64, xd, yd, conj);
    if let Some(r) = plan::on_gpu(T::PREFIX, name, shape, &ops, dev, vnd) {
        return r;
    }
    let n = n as usize;
    let x = VecRef::from_blas(x, n, incx);
    let y = VecRef::from_blas(y, n, incy);
    plan::run::<T, _>(name, || format!("n={n} incx={incx} incy={incy}"), || eng::dot(conj, x, y))
}

/// `dsdot`: single-precision vectors, double accumulation and result.
///
/// # Safety
/// Pointers as in reference BLAS.
pub unsafe fn dsdot(n: isize, x: *const f32, incx: isize, y: *const f32, incy: isize) -> f64 {
    if n <= 0 {
        return 0.0;
    }
    let n = n as usize;
    let x = VecRef::from_blas(x, n, incx);
    let y = VecRef::from_blas(y, n, incy);
    plan::run_named("ds", "dot", || format!("n={n} incx={incx} incy={incy}"), || eng::dot_f32_in_f64(0.0, x, y))
}

/// `sdsdot`: sb + x.y accumulated in double, rounded to single at the end.
///
/// # Safety
/// Pointers as in reference BLAS.
pub unsafe fn sdsdot(n: isize, sb: f32, x: *const f32, incx: isize, y: *const f32, incy: isize) -> f32 {
    if n <= 0 {
        return sb;
    }
    let n = n as usize;
    let x = VecRef::from_blas(x, n, incx);
    let y = VecRef::from_blas(y, n, incy);
    plan::run_named(
        "sds",
        "dot",
        || format!("n={n} incx={incx} incy={incy}"),
        || eng::dot_f32_in_f64(sb as f64, x, y) as f32,
    )
}

/// `?nrm2`, `scnrm2`, `dznrm2`. As in the reference (3.10+), any increment is accepted: a
/// negative one walks the vector backwards, zero counts x(1) n times.
///
/// # Safety
/// Pointers as in reference BLAS.
pub unsafe fn nrm2<T: Scalar>(n: isize, x: *const T, incx: isize) -> T::Real {
    if n <= 0 {
        return <T::Real as Scalar>::zero();
    }
    if incx > 0 {
        let shape = || format!("n={n} incx={incx}");
        let dev = |ex: &_| {
            let mut r = <T::Real as Scalar>::zero();
            gpu::nrm2::<T>(ex, n as i64, DVec::of(x, incx), Out::Host(&mut r)).map(|_| r)
        };
        let vnd = |ex: &_| vendor::nrm2::<T>(ex, n as i64, DVec::of(x, incx));
        if let Some(r) = plan::on_gpu(real_result_prefix::<T>(), "nrm2", shape, &[x as *const c_void], dev, vnd) {
            return r;
        }
    }
    let n = n as usize;
    let x = VecRef::from_blas(x, n, incx);
    plan::run_named(real_result_prefix::<T>(), "nrm2", || format!("n={n} incx={incx}"), || eng::nrm2(x))
}

/// `?asum`, `scasum`, `dzasum` (0 for incx <= 0).
///
/// # Safety
/// Pointers as in reference BLAS.
pub unsafe fn asum<T: Scalar>(n: isize, x: *const T, incx: isize) -> T::Real {
    if n <= 0 || incx <= 0 {
        return <T::Real as Scalar>::zero();
    }
    let shape = || format!("n={n} incx={incx}");
    let dev = |ex: &_| {
        let mut r = <T::Real as Scalar>::zero();
        gpu::asum::<T>(ex, n as i64, DVec::of(x, incx), Out::Host(&mut r)).map(|_| r)
    };
    let vnd = |ex: &_| vendor::asum::<T>(ex, n as i64, DVec::of(x, incx));
    if let Some(r) = plan::on_gpu(real_result_prefix::<T>(), "asum", shape, &[x as *const c_void], dev, vnd) {
        return r;
    }
    let n = n as usize;
    let x = VecRef::from_blas(x, n, incx);
    plan::run_named(real_result_prefix::<T>(), "asum", || format!("n={n} incx={incx}"), || eng::asum(x))
}

/// `i?amax`: 1-based index of the first element of largest |re|+|im|; 0 for n < 1 or
/// incx <= 0.
///
/// # Safety
/// Pointers as in reference BLAS.
pub unsafe fn iamax<T: Scalar>(n: isize, x: *const T, incx: isize) -> isize {
    if n < 1 || incx <= 0 {
        return 0;
    }
    if n == 1 {
        return 1;
    }
    let prefix = match T::PREFIX {
        's' => "is",
        'd' => "id",
        'c' => "ic",
        _ => "iz",
    };
    let shape = || format!("n={n} incx={incx}");
    let dev = |ex: &_| {
        let mut r = 0i64;
        gpu::iamax::<T>(ex, n as i64, DVec::of(x, incx), gpu::IndexOut::Host64(&mut r)).map(|_| r as isize)
    };
    let vnd = |ex: &_| vendor::iamax::<T>(ex, n as i64, DVec::of(x, incx)).map(|r| r as isize);
    if let Some(r) = plan::on_gpu(prefix, "amax", shape, &[x as *const c_void], dev, vnd) {
        return r;
    }
    let n = n as usize;
    let x = VecRef::from_blas(x, n, incx);
    plan::run_named(prefix, "amax", || format!("n={n} incx={incx}"), || eng::iamax(x) as isize + 1)
}

/// `scabs1`, `dcabs1`: |re(z)| + |im(z)|.
#[inline]
pub fn cabs1<T: Scalar>(z: T) -> T::Real {
    z.abs1()
}

macro_rules! level1_exports {
    ($I:ty, $sfx:literal) => {
        $crate::export!(concat!("saxpy", $sfx), fn(n: *const $I, alpha: *const f32, x: *const f32, incx: *const $I, y: *mut f32, incy: *const $I) => axpy(rd(n), *alpha, x, rd(incx), y, rd(incy)));
        $crate::export!(concat!("daxpy", $sfx), fn(n: *const $I, alpha: *const f64, x: *const f64, incx: *const $I, y: *mut f64, incy: *const $I) => axpy(rd(n), *alpha, x, rd(incx), y, rd(incy)));
        $crate::export!(concat!("caxpy", $sfx), fn(n: *const $I, alpha: *const C32, x: *const C32, incx: *const $I, y: *mut C32, incy: *const $I) => axpy(rd(n), *alpha, x, rd(incx), y, rd(incy)));
        $crate::export!(concat!("zaxpy", $sfx), fn(n: *const $I, alpha: *const C64, x: *const C64, incx: *const $I, y: *mut C64, incy: *const $I) => axpy(rd(n), *alpha, x, rd(incx), y, rd(incy)));

        $crate::export!(concat!("scopy", $sfx), fn(n: *const $I, x: *const f32, incx: *const $I, y: *mut f32, incy: *const $I) => copy(rd(n), x, rd(incx), y, rd(incy)));
        $crate::export!(concat!("dcopy", $sfx), fn(n: *const $I, x: *const f64, incx: *const $I, y: *mut f64, incy: *const $I) => copy(rd(n), x, rd(incx), y, rd(incy)));
        $crate::export!(concat!("ccopy", $sfx), fn(n: *const $I, x: *const C32, incx: *const $I, y: *mut C32, incy: *const $I) => copy(rd(n), x, rd(incx), y, rd(incy)));
        $crate::export!(concat!("zcopy", $sfx), fn(n: *const $I, x: *const C64, incx: *const $I, y: *mut C64, incy: *const $I) => copy(rd(n), x, rd(incx), y, rd(incy)));

        $crate::export!(concat!("sswap", $sfx), fn(n: *const $I, x: *mut f32, incx: *const $I, y: *mut f32, incy: *const $I) => swap(rd(n), x, rd(incx), y, rd(incy)));
        $crate::export!(concat!("dswap", $sfx), fn(n: *const $I, x: *mut f64, incx: *const $I, y: *mut f64, incy: *const $I) => swap(rd(n), x, rd(incx), y, rd(incy)));
        $crate::export!(concat!("cswap", $sfx), fn(n: *const $I, x: *mut C32, incx: *const $I, y: *mut C32, incy: *const $I) => swap(rd(n), x, rd(incx), y, rd(incy)));
        $crate::export!(concat!("zswap", $sfx), fn(n: *const $I, x: *mut C64, incx: *const $I, y: *mut C64, incy: *const $I) => swap(rd(n), x, rd(incx), y, rd(incy)));

        $crate::export!(concat!("sscal", $sfx), fn(n: *const $I, alpha: *const f32, x: *mut f32, incx: *const $I) => scal(rd(n), *alpha, x, rd(incx)));
        $crate::export!(concat!("dscal", $sfx), fn(n: *const $I, alpha: *const f64, x: *mut f64, incx: *const $I) => scal(rd(n), *alpha, x, rd(incx)));
        $crate::export!(concat!("cscal", $sfx), fn(n: *const $I, alpha: *const C32, x: *mut C32, incx: *const $I) => scal(rd(n), *alpha, x, rd(incx)));
        $crate::export!(concat!("zscal", $sfx), fn(n: *const $I, alpha: *const C64, x: *mut C64, incx: *const $I) => scal(rd(n), *alpha, x, rd(incx)));
        $crate::export!(concat!("csscal", $sfx), fn(n: *const $I, alpha: *const f32, x: *mut C32, incx: *const $I) => scal_real(rd(n), *alpha, x, rd(incx)));
        $crate::export!(concat!("zdscal", $sfx), fn(n: *const $I, alpha: *const f64, x: *mut C64, incx: *const $I) => scal_real(rd(n), *alpha, x, rd(incx)));

        $crate::export!(concat!("srot", $sfx), fn(n: *const $I, x: *mut f32, incx: *const $I, y: *mut f32, incy: *const $I, c: *const f32, s: *const f32) => rot(rd(n), x, rd(incx), y, rd(incy), *c, *s));
        $crate::export!(concat!("drot", $sfx), fn(n: *const $I, x: *mut f64, incx: *const $I, y: *mut f64, incy: *const $I, c: *const f64, s: *const f64) => rot(rd(n), x, rd(incx), y, rd(incy), *c, *s));
        $crate::export!(concat!("csrot", $sfx), fn(n: *const $I, x: *mut C32, incx: *const $I, y: *mut C32, incy: *const $I, c: *const f32, s: *const f32) => rot(rd(n), x, rd(incx), y, rd(incy), *c, *s));
        $crate::export!(concat!("zdrot", $sfx), fn(n: *const $I, x: *mut C64, incx: *const $I, y: *mut C64, incy: *const $I, c: *const f64, s: *const f64) => rot(rd(n), x, rd(incx), y, rd(incy), *c, *s));

        $crate::export!(concat!("srotm", $sfx), fn(n: *const $I, x: *mut f32, incx: *const $I, y: *mut f32, incy: *const $I, param: *const f32) => rotm(rd(n), x, rd(incx), y, rd(incy), param));
        $crate::export!(concat!("drotm", $sfx), fn(n: *const $I, x: *mut f64, incx: *const $I, y: *mut f64, incy: *const $I, param: *const f64) => rotm(rd(n), x, rd(incx), y, rd(incy), param));

        $crate::export!(concat!("srotg", $sfx), fn(a: *mut f32, b: *mut f32, c: *mut f32, s: *mut f32) => rotg(a, b, c, s));
        $crate::export!(concat!("drotg", $sfx), fn(a: *mut f64, b: *mut f64, c: *mut f64, s: *mut f64) => rotg(a, b, c, s));
        $crate::export!(concat!("crotg", $sfx), fn(a: *mut C32, b: *const C32, c: *mut f32, s: *mut C32) => rotg_complex(a, b, c, s));
        $crate::export!(concat!("zrotg", $sfx), fn(a: *mut C64, b: *const C64, c: *mut f64, s: *mut C64) => rotg_complex(a, b, c, s));

        $crate::export!(concat!("srotmg", $sfx), fn(d1: *mut f32, d2: *mut f32, x1: *mut f32, y1: *const f32, param: *mut f32) => rotmg(d1, d2, x1, *y1, param));
        $crate::export!(concat!("drotmg", $sfx), fn(d1: *mut f64, d2: *mut f64, x1: *mut f64, y1: *const f64, param: *mut f64) => rotmg(d1, d2, x1, *y1, param));

        $crate::export!(concat!("sdot", $sfx), fn(n: *const $I, x: *const f32, incx: *const $I, y: *const f32, incy: *const $I) -> f32 => dot(rd(n), x, rd(incx), y, rd(incy), false));
        $crate::export!(concat!("ddot", $sfx), fn(n: *const $I, x: *const f64, incx: *const $I, y: *const f64, incy: *const $I) -> f64 => dot(rd(n), x, rd(incx), y, rd(incy), false));
        $crate::export!(concat!("cdotu", $sfx), fn(n: *const $I, x: *const C32, incx: *const $I, y: *const C32, incy: *const $I) -> C32 => dot(rd(n), x, rd(incx), y, rd(incy), false));
        $crate::export!(concat!("zdotu", $sfx), fn(n: *const $I, x: *const C64, incx: *const $I, y: *const C64, incy: *const $I) -> C64 => dot(rd(n), x, rd(incx), y, rd(incy), false));
        $crate::export!(concat!("cdotc", $sfx), fn(n: *const $I, x: *const C32, incx: *const $I, y: *const C32, incy: *const $I) -> C32 => dot(rd(n), x, rd(incx), y, rd(incy), true));
        $crate::export!(concat!("zdotc", $sfx), fn(n: *const $I, x: *const C64, incx: *const $I, y: *const C64, incy: *const $I) -> C64 => dot(rd(n), x, rd(incx), y, rd(incy), true));
        $crate::export!(concat!("dsdot", $sfx), fn(n: *const $I, x: *const f32, incx: *const $I, y: *const f32, incy: *const $I) -> f64 => dsdot(rd(n), x, rd(incx), y, rd(incy)));
        $crate::export!(concat!("sdsdot", $sfx), fn(n: *const $I, sb: *const f32, x: *const f32, incx: *const $I, y: *const f32, incy: *const $I) -> f32 => sdsdot(rd(n), *sb, x, rd(incx), y, rd(incy)));

        $crate::export!(concat!("snrm2", $sfx), fn(n: *const $I, x: *const f32, incx: *const $I) -> f32 => nrm2(rd(n), x, rd(incx)));
        $crate::export!(concat!("dnrm2", $sfx), fn(n: *const $I, x: *const f64, incx: *const $I) -> f64 => nrm2(rd(n), x, rd(incx)));
        $crate::export!(concat!("scnrm2", $sfx), fn(n: *const $I, x: *const C32, incx: *const $I) -> f32 => nrm2(rd(n), x, rd(incx)));
        $crate::export!(concat!("dznrm2", $sfx), fn(n: *const $I, x: *const C64, incx: *const $I) -> f64 => nrm2(rd(n), x, rd(incx)));

        $crate::export!(concat!("sasum", $sfx), fn(n: *const $I, x: *const f32, incx: *const $I) -> f32 => asum(rd(n), x, rd(incx)));
        $crate::export!(concat!("dasum", $sfx), fn(n: *const $I, x: *const f64, incx: *const $I) -> f64 => asum(rd(n), x, rd(incx)));
        $crate::export!(concat!("scasum", $sfx), fn(n: *const $I, x: *const C32, incx: *const $I) -> f32 => asum(rd(n), x, rd(incx)));
        $crate::export!(concat!("dzasum", $sfx), fn(n: *const $I, x: *const C64, incx: *const $I) -> f64 => asum(rd(n), x, rd(incx)));

        $crate::export!(concat!("isamax", $sfx), fn(n: *const $I, x: *const f32, incx: *const $I) -> $I => <$I>::from_isize(iamax(rd(n), x, rd(incx))));
        $crate::export!(concat!("idamax", $sfx), fn(n: *const $I, x: *const f64, incx: *const $I) -> $I => <$I>::from_isize(iamax(rd(n), x, rd(incx))));
        $crate::export!(concat!("icamax", $sfx), fn(n: *const $I, x: *const C32, incx: *const $I) -> $I => <$I>::from_isize(iamax(rd(n), x, rd(incx))));
        $crate::export!(concat!("izamax", $sfx), fn(n: *const $I, x: *const C64, incx: *const $I) -> $I => <$I>::from_isize(iamax(rd(n), x, rd(incx))));

        $crate::export!(concat!("scabs1", $sfx), fn(z: *const C32) -> f32 => cabs1(*z));
        $crate::export!(concat!("dcabs1", $sfx), fn(z: *const C64) -> f64 => cabs1(*z));
    };
}

mod exports {
    use super::*;
    use crate::types::{C32, C64};
    level1_exports!(i32, "_");
    level1_exports!(i64, "_64_");
}
