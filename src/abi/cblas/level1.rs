//! CBLAS Level 1. Vectors have no layout and Level 1 reports no errors, so each entry point
//! is the Fortran routine with its arguments by value (shared functions in
//! `abi::fortran::level1`). Complex scalars come by pointer (`const void *alpha`), complex
//! dot products are returned through a pointer (`cblas_?dot?_sub`), and `cblas_i?amax`
//! returns a 0-based `CBLAS_INDEX` (`size_t`).

use crate::abi::fortran::level1 as f;
use crate::types::FInt;

/// 0-based CBLAS index from the 1-based Fortran one (0 stays 0, as in the reference wrapper).
#[inline]
fn cblas_index(i: isize) -> usize {
    if i > 0 {
        (i - 1) as usize
    } else {
        0
    }
}

macro_rules! level1_exports {
    ($I:ty, $sfx:literal) => {
        $crate::export!(concat!("cblas_saxpy", $sfx), fn(n: $I, alpha: f32, x: *const f32, incx: $I, y: *mut f32, incy: $I) => f::axpy(n.to_isize(), alpha, x, incx.to_isize(), y, incy.to_isize()));
        $crate::export!(concat!("cblas_daxpy", $sfx), fn(n: $I, alpha: f64, x: *const f64, incx: $I, y: *mut f64, incy: $I) => f::axpy(n.to_isize(), alpha, x, incx.to_isize(), y, incy.to_isize()));
        $crate::export!(concat!("cblas_caxpy", $sfx), fn(n: $I, alpha: *const C32, x: *const C32, incx: $I, y: *mut C32, incy: $I) => f::axpy(n.to_isize(), *alpha, x, incx.to_isize(), y, incy.to_isize()));
        $crate::export!(concat!("cblas_zaxpy", $sfx), fn(n: $I, alpha: *const C64, x: *const C64, incx: $I, y: *mut C64, incy: $I) => f::axpy(n.to_isize(), *alpha, x, incx.to_isize(), y, incy.to_isize()));

        $crate::export!(concat!("cblas_scopy", $sfx), fn(n: $I, x: *const f32, incx: $I, y: *mut f32, incy: $I) => f::copy(n.to_isize(), x, incx.to_isize(), y, incy.to_isize()));
        $crate::export!(concat!("cblas_dcopy", $sfx), fn(n: $I, x: *const f64, incx: $I, y: *mut f64, incy: $I) => f::copy(n.to_isize(), x, incx.to_isize(), y, incy.to_isize()));
        $crate::export!(concat!("cblas_ccopy", $sfx), fn(n: $I, x: *const C32, incx: $I, y: *mut C32, incy: $I) => f::copy(n.to_isize(), x, incx.to_isize(), y, incy.to_isize()));
        $crate::export!(concat!("cblas_zcopy", $sfx), fn(n: $I, x: *const C64, incx: $I, y: *mut C64, incy: $I) => f::copy(n.to_isize(), x, incx.to_isize(), y, incy.to_isize()));

        $crate::export!(concat!("cblas_sswap", $sfx), fn(n: $I, x: *mut f32, incx: $I, y: *mut f32, incy: $I) => f::swap(n.to_isize(), x, incx.to_isize(), y, incy.to_isize()));
        $crate::export!(concat!("cblas_dswap", $sfx), fn(n: $I, x: *mut f64, incx: $I, y: *mut f64, incy: $I) => f::swap(n.to_isize(), x, incx.to_isize(), y, incy.to_isize()));
        $crate::export!(concat!("cblas_cswap", $sfx), fn(n: $I, x: *mut C32, incx: $I, y: *mut C32, incy: $I) => f::swap(n.to_isize(), x, incx.to_isize(), y, incy.to_isize()));
        $crate::export!(concat!("cblas_zswap", $sfx), fn(n: $I, x: *mut C64, incx: $I, y: *mut C64, incy: $I) => f::swap(n.to_isize(), x, incx.to_isize(), y, incy.to_isize()));

        $crate::export!(concat!("cblas_sscal", $sfx), fn(n: $I, alpha: f32, x: *mut f32, incx: $I) => f::scal(n.to_isize(), alpha, x, incx.to_isize()));
        $crate::export!(concat!("cblas_dscal", $sfx), fn(n: $I, alpha: f64, x: *mut f64, incx: $I) => f::scal(n.to_isize(), alpha, x, incx.to_isize()));
        $crate::export!(concat!("cblas_cscal", $sfx), fn(n: $I, alpha: *const C32, x: *mut C32, incx: $I) => f::scal(n.to_isize(), *alpha, x, incx.to_isize()));
        $crate::export!(concat!("cblas_zscal", $sfx), fn(n: $I, alpha: *const C64, x: *mut C64, incx: $I) => f::scal(n.to_isize(), *alpha, x, incx.to_isize()));
        $crate::export!(concat!("cblas_csscal", $sfx), fn(n: $I, alpha: f32, x: *mut C32, incx: $I) => f::scal_real(n.to_isize(), alpha, x, incx.to_isize()));
        $crate::export!(concat!("cblas_zdscal", $sfx), fn(n: $I, alpha: f64, x: *mut C64, incx: $I) => f::scal_real(n.to_isize(), alpha, x, incx.to_isize()));

        $crate::export!(concat!("cblas_srot", $sfx), fn(n: $I, x: *mut f32, incx: $I, y: *mut f32, incy: $I, c: f32, s: f32) => f::rot(n.to_isize(), x, incx.to_isize(), y, incy.to_isize(), c, s));
        $crate::export!(concat!("cblas_drot", $sfx), fn(n: $I, x: *mut f64, incx: $I, y: *mut f64, incy: $I, c: f64, s: f64) => f::rot(n.to_isize(), x, incx.to_isize(), y, incy.to_isize(), c, s));
        $crate::export!(concat!("cblas_csrot", $sfx), fn(n: $I, x: *mut C32, incx: $I, y: *mut C32, incy: $I, c: f32, s: f32) => f::rot(n.to_isize(), x, incx.to_isize(), y, incy.to_isize(), c, s));
        $crate::export!(concat!("cblas_zdrot", $sfx), fn(n: $I, x: *mut C64, incx: $I, y: *mut C64, incy: $I, c: f64, s: f64) => f::rot(n.to_isize(), x, incx.to_isize(), y, incy.to_isize(), c, s));

        $crate::export!(concat!("cblas_srotm", $sfx), fn(n: $I, x: *mut f32, incx: $I, y: *mut f32, incy: $I, p: *const f32) => f::rotm(n.to_isize(), x, incx.to_isize(), y, incy.to_isize(), p));
        $crate::export!(concat!("cblas_drotm", $sfx), fn(n: $I, x: *mut f64, incx: $I, y: *mut f64, incy: $I, p: *const f64) => f::rotm(n.to_isize(), x, incx.to_isize(), y, incy.to_isize(), p));

        $crate::export!(concat!("cblas_srotg", $sfx), fn(a: *mut f32, b: *mut f32, c: *mut f32, s: *mut f32) => f::rotg(a, b, c, s));
        $crate::export!(concat!("cblas_drotg", $sfx), fn(a: *mut f64, b: *mut f64, c: *mut f64, s: *mut f64) => f::rotg(a, b, c, s));
        $crate::export!(concat!("cblas_crotg", $sfx), fn(a: *mut C32, b: *const C32, c: *mut f32, s: *mut C32) => f::rotg_complex(a, b, c, s));
        $crate::export!(concat!("cblas_zrotg", $sfx), fn(a: *mut C64, b: *const C64, c: *mut f64, s: *mut C64) => f::rotg_complex(a, b, c, s));

        $crate::export!(concat!("cblas_srotmg", $sfx), fn(d1: *mut f32, d2: *mut f32, b1: *mut f32, b2: f32, p: *mut f32) => f::rotmg(d1, d2, b1, b2, p));
        $crate::export!(concat!("cblas_drotmg", $sfx), fn(d1: *mut f64, d2: *mut f64, b1: *mut f64, b2: f64, p: *mut f64) => f::rotmg(d1, d2, b1, b2, p));

        $crate::export!(concat!("cblas_sdot", $sfx), fn(n: $I, x: *const f32, incx: $I, y: *const f32, incy: $I) -> f32 => f::dot(n.to_isize(), x, incx.to_isize(), y, incy.to_isize(), false));
        $crate::export!(concat!("cblas_ddot", $sfx), fn(n: $I, x: *const f64, incx: $I, y: *const f64, incy: $I) -> f64 => f::dot(n.to_isize(), x, incx.to_isize(), y, incy.to_isize(), false));
        $crate::export!(concat!("cblas_cdotu_sub", $sfx), fn(n: $I, x: *const C32, incx: $I, y: *const C32, incy: $I, dotu: *mut C32) => *dotu = f::dot(n.to_isize(), x, incx.to_isize(), y, incy.to_isize(), false));
        $crate::export!(concat!("cblas_zdotu_sub", $sfx), fn(n: $I, x: *const C64, incx: $I, y: *const C64, incy: $I, dotu: *mut C64) => *dotu = f::dot(n.to_isize(), x, incx.to_isize(), y, incy.to_isize(), false));
        $crate::export!(concat!("cblas_cdotc_sub", $sfx), fn(n: $I, x: *const C32, incx: $I, y: *const C32, incy: $I, dotc: *mut C32) => *dotc = f::dot(n.to_isize(), x, incx.to_isize(), y, incy.to_isize(), true));
        $crate::export!(concat!("cblas_zdotc_sub", $sfx), fn(n: $I, x: *const C64, incx: $I, y: *const C64, incy: $I, dotc: *mut C64) => *dotc = f::dot(n.to_isize(), x, incx.to_isize(), y, incy.to_isize(), true));
        $crate::export!(concat!("cblas_dsdot", $sfx), fn(n: $I, x: *const f32, incx: $I, y: *const f32, incy: $I) -> f64 => f::dsdot(n.to_isize(), x, incx.to_isize(), y, incy.to_isize()));
        $crate::export!(concat!("cblas_sdsdot", $sfx), fn(n: $I, alpha: f32, x: *const f32, incx: $I, y: *const f32, incy: $I) -> f32 => f::sdsdot(n.to_isize(), alpha, x, incx.to_isize(), y, incy.to_isize()));

        $crate::export!(concat!("cblas_snrm2", $sfx), fn(n: $I, x: *const f32, incx: $I) -> f32 => f::nrm2(n.to_isize(), x, incx.to_isize()));
        $crate::export!(concat!("cblas_dnrm2", $sfx), fn(n: $I, x: *const f64, incx: $I) -> f64 => f::nrm2(n.to_isize(), x, incx.to_isize()));
        $crate::export!(concat!("cblas_scnrm2", $sfx), fn(n: $I, x: *const C32, incx: $I) -> f32 => f::nrm2(n.to_isize(), x, incx.to_isize()));
        $crate::export!(concat!("cblas_dznrm2", $sfx), fn(n: $I, x: *const C64, incx: $I) -> f64 => f::nrm2(n.to_isize(), x, incx.to_isize()));

        $crate::export!(concat!("cblas_sasum", $sfx), fn(n: $I, x: *const f32, incx: $I) -> f32 => f::asum(n.to_isize(), x, incx.to_isize()));
        $crate::export!(concat!("cblas_dasum", $sfx), fn(n: $I, x: *const f64, incx: $I) -> f64 => f::asum(n.to_isize(), x, incx.to_isize()));
        $crate::export!(concat!("cblas_scasum", $sfx), fn(n: $I, x: *const C32, incx: $I) -> f32 => f::asum(n.to_isize(), x, incx.to_isize()));
        $crate::export!(concat!("cblas_dzasum", $sfx), fn(n: $I, x: *const C64, incx: $I) -> f64 => f::asum(n.to_isize(), x, incx.to_isize()));

        $crate::export!(concat!("cblas_isamax", $sfx), fn(n: $I, x: *const f32, incx: $I) -> usize => cblas_index(f::iamax(n.to_isize(), x, incx.to_isize())));
        $crate::export!(concat!("cblas_idamax", $sfx), fn(n: $I, x: *const f64, incx: $I) -> usize => cblas_index(f::iamax(n.to_isize(), x, incx.to_isize())));
        $crate::export!(concat!("cblas_icamax", $sfx), fn(n: $I, x: *const C32, incx: $I) -> usize => cblas_index(f::iamax(n.to_isize(), x, incx.to_isize())));
        $crate::export!(concat!("cblas_izamax", $sfx), fn(n: $I, x: *const C64, incx: $I) -> usize => cblas_index(f::iamax(n.to_isize(), x, incx.to_isize())));

        $crate::export!(concat!("cblas_scabs1", $sfx), fn(z: *const C32) -> f32 => f::cabs1(*z));
        $crate::export!(concat!("cblas_dcabs1", $sfx), fn(z: *const C64) -> f64 => f::cabs1(*z));
    };
}

mod exports {
    use super::*;
    use crate::types::{C32, C64};
    level1_exports!(std::os::raw::c_int, "");
    level1_exports!(i64, "64_");
}
