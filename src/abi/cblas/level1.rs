//! CBLAS Level 1. Vectors have no layout, so these map straight onto the engine.

use crate::cpu::level1 as eng;
use crate::plan;
use crate::types::{FInt, Scalar, VecMut, VecRef};

/// `cblas_?axpy`. Complex scalars are passed by pointer (`const void *alpha`).
///
/// # Safety
/// Pointers as in reference CBLAS.
pub unsafe fn axpy<T: Scalar, I: FInt>(n: I, alpha: T, x: *const T, incx: I, y: *mut T, incy: I) {
    let (n, incx, incy) = (n.to_isize(), incx.to_isize(), incy.to_isize());
    if n <= 0 || alpha.is_zero() {
        return;
    }
    let n = n as usize;
    let x = VecRef::from_blas(x, n, incx);
    let y = VecMut::from_blas(y, n, incy);
    plan::run::<T, _>("axpy", || format!("n={n} incx={incx} incy={incy}"), || eng::axpy(alpha, x, y));
}

macro_rules! level1_exports {
    ($I:ty, $sfx:literal) => {
        $crate::export!(concat!("cblas_saxpy", $sfx), fn(n: $I, alpha: f32, x: *const f32, incx: $I, y: *mut f32, incy: $I) => axpy::<f32, $I>(n, alpha, x, incx, y, incy));
        $crate::export!(concat!("cblas_daxpy", $sfx), fn(n: $I, alpha: f64, x: *const f64, incx: $I, y: *mut f64, incy: $I) => axpy::<f64, $I>(n, alpha, x, incx, y, incy));
        $crate::export!(concat!("cblas_caxpy", $sfx), fn(n: $I, alpha: *const C32, x: *const C32, incx: $I, y: *mut C32, incy: $I) => axpy::<C32, $I>(n, *alpha, x, incx, y, incy));
        $crate::export!(concat!("cblas_zaxpy", $sfx), fn(n: $I, alpha: *const C64, x: *const C64, incx: $I, y: *mut C64, incy: $I) => axpy::<C64, $I>(n, *alpha, x, incx, y, incy));
    };
}

mod exports {
    use super::*;
    use crate::types::{C32, C64};
    level1_exports!(std::os::raw::c_int, "");
    level1_exports!(i64, "64_");
}
