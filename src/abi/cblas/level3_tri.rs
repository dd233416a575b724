//! CBLAS TRMM and TRSM. A row-major call is the column-major problem on B^T: side and uplo
//! flip and M and N swap (A's storage is reused as is, its transpose being the flipped
//! triangle), exactly as reference CBLAS maps it.

use crate::abi::cblas::{self as cb, Layout};
use crate::abi::fortran::level3_tri::{check_trxm, run, Routine};
use crate::cpu::level3::tri::TriScalar;
use crate::types::FInt;
use std::os::raw::c_int;

/// `cblas_?trmm` / `cblas_?trsm`. `alpha` points to the scalar (real alphas come by value and
/// are passed on by address); it is read only once the call has passed its checks and is not
/// empty, as in the reference.
///
/// # Safety
/// Pointers as in reference CBLAS.
#[allow(clippy::too_many_arguments)]
pub unsafe fn trxm<T: TriScalar, I: FInt>(
    routine: Routine,
    layout: c_int,
    side: c_int,
    uplo: c_int,
    transa: c_int,
    diag: c_int,
    m: I,
    n: I,
    alpha: *const T,
    a: *const T,
    lda: I,
    b: *mut T,
    ldb: I,
) {
    let name = format!("cblas_{}{}", T::PREFIX, routine.base());
    // The C wrapper's own checks, in its order and with its numbering.
    let Some(layout) = cb::layout(layout) else { return cb::report(&name, 1) };
    let Some(side) = cb::side(side) else { return cb::report(&name, 2) };
    let Some(uplo) = cb::uplo(uplo) else { return cb::report(&name, 3) };
    let Some(trans) = cb::trans(transa) else { return cb::report(&name, 4) };
    let Some(diag) = cb::diag(diag) else { return cb::report(&name, 5) };
    let (m, n, lda, ldb) = (m.to_isize(), n.to_isize(), lda.to_isize(), ldb.to_isize());
    let (side, uplo, m, n) = match layout {
        Layout::ColMajor => (side, uplo, m, n),
        Layout::RowMajor => (side.flip(), uplo.flip(), n, m),
    };
    // The rest is the Fortran routine's checks on the mapped problem, numbered one higher.
    let o = match check_trxm(Some(side), Some(uplo), Some(trans), Some(diag), m, n, lda, ldb) {
        Ok(o) => o,
        Err(info) => return cb::report(&name, info + 1),
    };
    if m == 0 || n == 0 {
        return;
    }
    run(routine, o, m as usize, n as usize, *alpha, a, lda as usize, b, ldb as usize);
}

macro_rules! tri_exports {
    ($I:ty, $sfx:literal, $($name:literal, $T:ty, $AT:ty, $deref:tt, $r:expr;)*) => {
        $(
            $crate::export!(concat!($name, $sfx), fn(
                layout: c_int, side: c_int, uplo: c_int, transa: c_int, diag: c_int,
                m: $I, n: $I, alpha: $AT, a: *const $T, lda: $I, b: *mut $T, ldb: $I
            ) => trxm::<$T, $I>($r, layout, side, uplo, transa, diag, m, n, tri_exports!(@alpha $deref alpha), a, lda, b, ldb));
        )*
    };
    (@alpha val $a:ident) => { &$a };
    (@alpha ptr $a:ident) => { $a };
}

macro_rules! level3_tri_exports {
    ($I:ty, $sfx:literal) => {
        tri_exports!($I, $sfx,
            "cblas_strmm", f32, f32, val, Routine::Trmm;
            "cblas_dtrmm", f64, f64, val, Routine::Trmm;
            "cblas_ctrmm", C32, *const C32, ptr, Routine::Trmm;
            "cblas_ztrmm", C64, *const C64, ptr, Routine::Trmm;
            "cblas_strsm", f32, f32, val, Routine::Trsm;
            "cblas_dtrsm", f64, f64, val, Routine::Trsm;
            "cblas_ctrsm", C32, *const C32, ptr, Routine::Trsm;
            "cblas_ztrsm", C64, *const C64, ptr, Routine::Trsm;
        );
    };
}

mod exports {
    use super::*;
    use crate::types::{C32, C64};
    level3_tri_exports!(c_int, "");
    level3_tri_exports!(i64, "64_");
}
