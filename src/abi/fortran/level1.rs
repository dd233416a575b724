//! Fortran Level 1 BLAS.

use crate::cpu::level1 as eng;
use crate::plan;
use crate::types::{FInt, Scalar, VecMut, VecRef};

/// `?axpy`: y := alpha*x + y.
///
/// # Safety
/// Pointers as in reference BLAS.
pub unsafe fn axpy<T: Scalar, I: FInt>(
    n: *const I,
    alpha: *const T,
    x: *const T,
    incx: *const I,
    y: *mut T,
    incy: *const I,
) {
    let (n, incx, incy) = (I::read(n), I::read(incx), I::read(incy));
    if n <= 0 {
        return;
    }
    let alpha = *alpha;
    if alpha.is_zero() {
        return;
    }
    let n = n as usize;
    let x = VecRef::from_blas(x, n, incx);
    let y = VecMut::from_blas(y, n, incy);
    plan::run::<T, _>("axpy", || format!("n={n} incx={incx} incy={incy}"), || eng::axpy(alpha, x, y));
}

macro_rules! level1_exports {
    ($I:ty, $sfx:literal) => {
        $crate::export!(concat!("saxpy", $sfx), fn(n: *const $I, alpha: *const f32, x: *const f32, incx: *const $I, y: *mut f32, incy: *const $I) => axpy::<f32, $I>(n, alpha, x, incx, y, incy));
        $crate::export!(concat!("daxpy", $sfx), fn(n: *const $I, alpha: *const f64, x: *const f64, incx: *const $I, y: *mut f64, incy: *const $I) => axpy::<f64, $I>(n, alpha, x, incx, y, incy));
        $crate::export!(concat!("caxpy", $sfx), fn(n: *const $I, alpha: *const C32, x: *const C32, incx: *const $I, y: *mut C32, incy: *const $I) => axpy::<C32, $I>(n, alpha, x, incx, y, incy));
        $crate::export!(concat!("zaxpy", $sfx), fn(n: *const $I, alpha: *const C64, x: *const C64, incx: *const $I, y: *mut C64, incy: *const $I) => axpy::<C64, $I>(n, alpha, x, incx, y, incy));
    };
}

mod exports {
    use super::*;
    use crate::types::{C32, C64};
    level1_exports!(i32, "_");
    level1_exports!(i64, "_64_");
}
