//! CBLAS Level 2.
//!
//! Each wrapper makes the reference C wrapper's own checks (layout -> 1, then its enum
//! arguments at their CBLAS positions), maps a row-major call onto the column-major problem
//! the reference passes to Fortran (swapped dimensions, flipped `uplo`, `N <-> T`, swapped
//! vectors for GER and HER2/HPR2), then runs the Fortran-order checks on that problem and
//! reports a failure as Fortran INFO + 1. Where the reference conjugates vectors into
//! temporaries (row-major ConjTrans GEMV/GBMV/TRMV..., HEMV/HBMV/HPMV, GERC, HER/HPR,
//! HER2/HPR2), the engine gets a conjugation flag instead.

use super::{diag, layout, report, trans, uplo, Layout};
use crate::abi::fortran::level2::{
    check_gbmv, check_gemv, check_ger, check_sbmv, check_spmv, check_spr, check_spr2, check_symv, check_syr,
    check_syr2, check_tbmv, check_tpmv, check_trmv, op, run_gbmv, run_gemv, run_ger, run_symv, run_syr, run_tri,
    RankStorage, Storage,
};
use crate::types::{FInt, Scalar, Trans, Uplo};
use std::os::raw::c_int;

fn cname<T: Scalar>(base: &str) -> String {
    format!("cblas_{}{}", T::PREFIX, base)
}

/// op of the column-major A^T that a row-major A is: N -> T, T -> N, C -> conj without
/// transpose.
fn row_op(t: Trans) -> (bool, bool) {
    match t {
        Trans::No => (true, false),
        Trans::Trans => (false, false),
        Trans::ConjTrans => (false, true),
    }
}

/// Layout (position 1) and the mapped uplo, for the symmetric/Hermitian/triangular forms.
fn layout_uplo<T: Scalar>(base: &str, lay: c_int, ul: c_int) -> Option<(bool, Uplo)> {
    let Some(lay) = layout(lay) else {
        report(&cname::<T>(base), 1);
        return None;
    };
    let Some(u) = uplo(ul) else {
        report(&cname::<T>(base), 2);
        return None;
    };
    let row = lay == Layout::RowMajor;
    Some((row, if row { u.flip() } else { u }))
}

/// `cblas_?gemv`.
///
/// # Safety
/// Pointers as in reference CBLAS.
#[allow(clippy::too_many_arguments)]
pub unsafe fn gemv<T: Scalar, I: FInt>(
    lay: c_int,
    tr: c_int,
    m: I,
    n: I,
    alpha: T,
    a: *const T,
    lda: I,
    x: *const T,
    incx: I,
    beta: T,
    y: *mut T,
    incy: I,
) {
    let Some(lay) = layout(lay) else { return report(&cname::<T>("gemv"), 1) };
    let Some(t) = trans(tr) else { return report(&cname::<T>("gemv"), 2) };
    let (m, n, lda, incx, incy) = (m.to_isize(), n.to_isize(), lda.to_isize(), incx.to_isize(), incy.to_isize());
    let (fm, fnn, o) = match lay {
        Layout::ColMajor => (m, n, op(t)),
        Layout::RowMajor => (n, m, row_op(t)),
    };
    match check_gemv(Some(t), fm, fnn, lda, incx, incy) {
        Err(info) => report(&cname::<T>("gemv"), info + 1),
        Ok(_) => run_gemv(o, fm, fnn, alpha, a, lda, x, incx, beta, y, incy),
    }
}

/// `cblas_?gbmv`.
///
/// # Safety
/// Pointers as in reference CBLAS.
#[allow(clippy::too_many_arguments)]
pub unsafe fn gbmv<T: Scalar, I: FInt>(
    lay: c_int,
    tr: c_int,
    m: I,
    n: I,
    kl: I,
    ku: I,
    alpha: T,
    a: *const T,
    lda: I,
    x: *const T,
    incx: I,
    beta: T,
    y: *mut T,
    incy: I,
) {
    let Some(lay) = layout(lay) else { return report(&cname::<T>("gbmv"), 1) };
    let Some(t) = trans(tr) else { return report(&cname::<T>("gbmv"), 2) };
    let (m, n, kl, ku) = (m.to_isize(), n.to_isize(), kl.to_isize(), ku.to_isize());
    let (lda, incx, incy) = (lda.to_isize(), incx.to_isize(), incy.to_isize());
    let (fm, fnn, fkl, fku, o) = match lay {
        Layout::ColMajor => (m, n, kl, ku, op(t)),
        Layout::RowMajor => (n, m, ku, kl, row_op(t)),
    };
    match check_gbmv(Some(t), fm, fnn, fkl, fku, lda, incx, incy) {
        Err(info) => report(&cname::<T>("gbmv"), info + 1),
        Ok(_) => run_gbmv(o, fm, fnn, fkl, fku, alpha, a, lda, x, incx, beta, y, incy),
    }
}

/// `cblas_?symv` / `cblas_?hemv` (`herm`).
///
/// # Safety
/// Pointers as in reference CBLAS.
#[allow(clippy::too_many_arguments)]
pub unsafe fn symv<T: Scalar, I: FInt>(
    base: &'static str,
    herm: bool,
    lay: c_int,
    ul: c_int,
    n: I,
    alpha: T,
    a: *const T,
    lda: I,
    x: *const T,
    incx: I,
    beta: T,
    y: *mut T,
    incy: I,
) {
    let Some((row, u)) = layout_uplo::<T>(base, lay, ul) else { return };
    let (n, lda, incx, incy) = (n.to_isize(), lda.to_isize(), incx.to_isize(), incy.to_isize());
    match check_symv(Some(u), n, lda, incx, incy) {
        Err(info) => report(&cname::<T>(base), info + 1),
        Ok(_) => run_symv(base, herm, herm && row, u, n, alpha, Storage::Full { a, lda }, x, incx, beta, y, incy),
    }
}

/// `cblas_?sbmv` / `cblas_?hbmv` (`herm`).
///
/// # Safety
/// Pointers as in reference CBLAS.
#[allow(clippy::too_many_arguments)]
pub unsafe fn sbmv<T: Scalar, I: FInt>(
    base: &'static str,
    herm: bool,
    lay: c_int,
    ul: c_int,
    n: I,
    k: I,
    alpha: T,
    a: *const T,
    lda: I,
    x: *const T,
    incx: I,
    beta: T,
    y: *mut T,
    incy: I,
) {
    let Some((row, u)) = layout_uplo::<T>(base, lay, ul) else { return };
    let (n, k, lda, incx, incy) = (n.to_isize(), k.to_isize(), lda.to_isize(), incx.to_isize(), incy.to_isize());
    match check_sbmv(Some(u), n, k, lda, incx, incy) {
        Err(info) => report(&cname::<T>(base), info + 1),
        Ok(_) => run_symv(base, herm, herm && row, u, n, alpha, Storage::Band { a, k, lda }, x, incx, beta, y, incy),
    }
}

/// `cblas_?spmv` / `cblas_?hpmv` (`herm`).
///
/// # Safety
/// Pointers as in reference CBLAS.
#[allow(clippy::too_many_arguments)]
pub unsafe fn spmv<T: Scalar, I: FInt>(
    base: &'static str,
    herm: bool,
    lay: c_int,
    ul: c_int,
    n: I,
    alpha: T,
    ap: *const T,
    x: *const T,
    incx: I,
    beta: T,
    y: *mut T,
    incy: I,
) {
    let Some((row, u)) = layout_uplo::<T>(base, lay, ul) else { return };
    let (n, incx, incy) = (n.to_isize(), incx.to_isize(), incy.to_isize());
    match check_spmv(Some(u), n, incx, incy) {
        Err(info) => report(&cname::<T>(base), info + 1),
        Ok(_) => run_symv(base, herm, herm && row, u, n, alpha, Storage::Packed { ap }, x, incx, beta, y, incy),
    }
}

/// Layout, uplo, trans, diag of the triangular forms (positions 1-4), mapped.
fn tri_opts<T: Scalar>(
    base: &str,
    lay: c_int,
    ul: c_int,
    tr: c_int,
    dg: c_int,
) -> Option<(Uplo, Trans, (bool, bool), crate::types::Diag)> {
    let (row, u) = layout_uplo::<T>(base, lay, ul)?;
    let Some(t) = trans(tr) else {
        report(&cname::<T>(base), 3);
        return None;
    };
    let Some(d) = diag(dg) else {
        report(&cname::<T>(base), 4);
        return None;
    };
    Some((u, t, if row { row_op(t) } else { op(t) }, d))
}

/// `cblas_?trmv` / `cblas_?trsv` (`solve`).
///
/// # Safety
/// Pointers as in reference CBLAS.
#[allow(clippy::too_many_arguments)]
pub unsafe fn trmv<T: Scalar, I: FInt>(
    base: &'static str,
    solve: bool,
    lay: c_int,
    ul: c_int,
    tr: c_int,
    dg: c_int,
    n: I,
    a: *const T,
    lda: I,
    x: *mut T,
    incx: I,
) {
    let Some((u, t, o, d)) = tri_opts::<T>(base, lay, ul, tr, dg) else { return };
    let (n, lda, incx) = (n.to_isize(), lda.to_isize(), incx.to_isize());
    match check_trmv(Some(u), Some(t), Some(d), n, lda, incx) {
        Err(info) => report(&cname::<T>(base), info + 1),
        Ok(_) => run_tri(base, solve, u, o, d, n, Storage::Full { a, lda }, x, incx),
    }
}

/// `cblas_?tbmv` / `cblas_?tbsv` (`solve`).
///
/// # Safety
/// Pointers as in reference CBLAS.
#[allow(clippy::too_many_arguments)]
pub unsafe fn tbmv<T: Scalar, I: FInt>(
    base: &'static str,
    solve: bool,
    lay: c_int,
    ul: c_int,
    tr: c_int,
    dg: c_int,
    n: I,
    k: I,
    a: *const T,
    lda: I,
    x: *mut T,
    incx: I,
) {
    let Some((u, t, o, d)) = tri_opts::<T>(base, lay, ul, tr, dg) else { return };
    let (n, k, lda, incx) = (n.to_isize(), k.to_isize(), lda.to_isize(), incx.to_isize());
    match check_tbmv(Some(u), Some(t), Some(d), n, k, lda, incx) {
        Err(info) => report(&cname::<T>(base), info + 1),
        Ok(_) => run_tri(base, solve, u, o, d, n, Storage::Band { a, k, lda }, x, incx),
    }
}

/// `cblas_?tpmv` / `cblas_?tpsv` (`solve`).
///
/// # Safety
/// Pointers as in reference CBLAS.
#[allow(clippy::too_many_arguments)]
pub unsafe fn tpmv<T: Scalar, I: FInt>(
    base: &'static str,
    solve: bool,
    lay: c_int,
    ul: c_int,
    tr: c_int,
    dg: c_int,
    n: I,
    ap: *const T,
    x: *mut T,
    incx: I,
) {
    let Some((u, t, o, d)) = tri_opts::<T>(base, lay, ul, tr, dg) else { return };
    let (n, incx) = (n.to_isize(), incx.to_isize());
    match check_tpmv(Some(u), Some(t), Some(d), n, incx) {
        Err(info) => report(&cname::<T>(base), info + 1),
        Ok(_) => run_tri(base, solve, u, o, d, n, Storage::Packed { ap }, x, incx),
    }
}

/// `cblas_?ger` / `cblas_?geru` / `cblas_?gerc` (`conj_y`). Row-major: the reference calls
/// GERU on (N, M, y, x), with y conjugated for GERC.
///
/// # Safety
/// Pointers as in reference CBLAS.
#[allow(clippy::too_many_arguments)]
pub unsafe fn ger<T: Scalar, I: FInt>(
    base: &'static str,
    conj_y: bool,
    lay: c_int,
    m: I,
    n: I,
    alpha: T,
    x: *const T,
    incx: I,
    y: *const T,
    incy: I,
    a: *mut T,
    lda: I,
) {
    let Some(lay) = layout(lay) else { return report(&cname::<T>(base), 1) };
    let (m, n, incx, incy, lda) = (m.to_isize(), n.to_isize(), incx.to_isize(), incy.to_isize(), lda.to_isize());
    let r = match lay {
        Layout::ColMajor => check_ger(m, n, incx, incy, lda).map(|_| (m, n, x, incx, false, y, incy, conj_y)),
        Layout::RowMajor => check_ger(n, m, incy, incx, lda).map(|_| (n, m, y, incy, conj_y, x, incx, false)),
    };
    match r {
        Err(info) => report(&cname::<T>(base), info + 1),
        Ok((fm, fnn, u, incu, cu, v, incv, cv)) => run_ger(base, fm, fnn, alpha, u, incu, cu, v, incv, cv, a, lda),
    }
}

/// `cblas_?syr` / `cblas_?her` (`herm`, alpha real).
///
/// # Safety
/// Pointers as in reference CBLAS.
#[allow(clippy::too_many_arguments)]
pub unsafe fn syr<T: Scalar, I: FInt>(
    base: &'static str,
    herm: bool,
    lay: c_int,
    ul: c_int,
    n: I,
    alpha: T,
    x: *const T,
    incx: I,
    a: *mut T,
    lda: I,
) {
    let Some((row, u)) = layout_uplo::<T>(base, lay, ul) else { return };
    let (n, incx, lda) = (n.to_isize(), incx.to_isize(), lda.to_isize());
    match check_syr(Some(u), n, incx, lda) {
        Err(info) => report(&cname::<T>(base), info + 1),
        Ok(_) => run_syr(base, herm, u, n, alpha, x, incx, None, herm && row, RankStorage::Full { a, lda }),
    }
}

/// `cblas_?spr` / `cblas_?hpr` (`herm`, alpha real).
///
/// # Safety
/// Pointers as in reference CBLAS.
#[allow(clippy::too_many_arguments)]
pub unsafe fn spr<T: Scalar, I: FInt>(
    base: &'static str,
    herm: bool,
    lay: c_int,
    ul: c_int,
    n: I,
    alpha: T,
    x: *const T,
    incx: I,
    ap: *mut T,
) {
    let Some((row, u)) = layout_uplo::<T>(base, lay, ul) else { return };
    let (n, incx) = (n.to_isize(), incx.to_isize());
    match check_spr(Some(u), n, incx) {
        Err(info) => report(&cname::<T>(base), info + 1),
        Ok(_) => run_syr(base, herm, u, n, alpha, x, incx, None, herm && row, RankStorage::Packed { ap }),
    }
}

/// The vectors of a row-major rank-2 call as the reference passes them to Fortran: HER2/HPR2
/// swap x and y (and conjugate both); SYR2/SPR2 keep them.
#[allow(clippy::type_complexity)]
fn rank2_vectors<T>(
    herm: bool,
    row: bool,
    x: *const T,
    incx: isize,
    y: *const T,
    incy: isize,
) -> (*const T, isize, *const T, isize, bool) {
    if herm && row {
        (y, incy, x, incx, true)
    } else {
        (x, incx, y, incy, false)
    }
}

/// `cblas_?syr2` / `cblas_?her2` (`herm`).
///
/// # Safety
/// Pointers as in reference CBLAS.
#[allow(clippy::too_many_arguments)]
pub unsafe fn syr2<T: Scalar, I: FInt>(
    base: &'static str,
    herm: bool,
    lay: c_int,
    ul: c_int,
    n: I,
    alpha: T,
    x: *const T,
    incx: I,
    y: *const T,
    incy: I,
    a: *mut T,
    lda: I,
) {
    let Some((row, u)) = layout_uplo::<T>(base, lay, ul) else { return };
    let (n, lda) = (n.to_isize(), lda.to_isize());
    let (u1, inc1, u2, inc2, cj) = rank2_vectors(herm, row, x, incx.to_isize(), y, incy.to_isize());
    match check_syr2(Some(u), n, inc1, inc2, lda) {
        Err(info) => report(&cname::<T>(base), info + 1),
        Ok(_) => run_syr(base, herm, u, n, alpha, u1, inc1, Some((u2, inc2)), cj, RankStorage::Full { a, lda }),
    }
}

/// `cblas_?spr2` / `cblas_?hpr2` (`herm`).
///
/// # Safety
/// Pointers as in reference CBLAS.
#[allow(clippy::too_many_arguments)]
pub unsafe fn spr2<T: Scalar, I: FInt>(
    base: &'static str,
    herm: bool,
    lay: c_int,
    ul: c_int,
    n: I,
    alpha: T,
    x: *const T,
    incx: I,
    y: *const T,
    incy: I,
    ap: *mut T,
) {
    let Some((row, u)) = layout_uplo::<T>(base, lay, ul) else { return };
    let n = n.to_isize();
    let (u1, inc1, u2, inc2, cj) = rank2_vectors(herm, row, x, incx.to_isize(), y, incy.to_isize());
    match check_spr2(Some(u), n, inc1, inc2) {
        Err(info) => report(&cname::<T>(base), info + 1),
        Ok(_) => run_syr(base, herm, u, n, alpha, u1, inc1, Some((u2, inc2)), cj, RankStorage::Packed { ap }),
    }
}

/// A CBLAS scalar argument: real scalars come by value, complex ones by pointer.
trait Arg<T> {
    /// # Safety
    /// A pointer argument must be readable.
    unsafe fn val(self) -> T;
}
macro_rules! arg_by_value {
    ($($t:ty),*) => {$(
        impl Arg<$t> for $t {
            #[inline(always)]
            unsafe fn val(self) -> $t {
                self
            }
        }
    )*};
}
arg_by_value!(f32, f64);
impl<T: Copy> Arg<T> for *const T {
    #[inline(always)]
    unsafe fn val(self) -> T {
        *self
    }
}

/// Routines every precision has. `$S`: how the precision passes scalars.
macro_rules! cb_all {
    ($I:ty, $sfx:literal, $T:ty, $S:ty, $p:literal) => {
        $crate::export!(concat!("cblas_", $p, "gemv", $sfx), fn(layout: c_int, trans: c_int, m: $I, n: $I, alpha: $S, a: *const $T, lda: $I, x: *const $T, incx: $I, beta: $S, y: *mut $T, incy: $I)
            => gemv::<$T, $I>(layout, trans, m, n, alpha.val(), a, lda, x, incx, beta.val(), y, incy));
        $crate::export!(concat!("cblas_", $p, "gbmv", $sfx), fn(layout: c_int, trans: c_int, m: $I, n: $I, kl: $I, ku: $I, alpha: $S, a: *const $T, lda: $I, x: *const $T, incx: $I, beta: $S, y: *mut $T, incy: $I)
            => gbmv::<$T, $I>(layout, trans, m, n, kl, ku, alpha.val(), a, lda, x, incx, beta.val(), y, incy));
        $crate::export!(concat!("cblas_", $p, "trmv", $sfx), fn(layout: c_int, uplo: c_int, trans: c_int, diag: c_int, n: $I, a: *const $T, lda: $I, x: *mut $T, incx: $I)
            => trmv::<$T, $I>("trmv", false, layout, uplo, trans, diag, n, a, lda, x, incx));
        $crate::export!(concat!("cblas_", $p, "trsv", $sfx), fn(layout: c_int, uplo: c_int, trans: c_int, diag: c_int, n: $I, a: *const $T, lda: $I, x: *mut $T, incx: $I)
            => trmv::<$T, $I>("trsv", true, layout, uplo, trans, diag, n, a, lda, x, incx));
        $crate::export!(concat!("cblas_", $p, "tbmv", $sfx), fn(layout: c_int, uplo: c_int, trans: c_int, diag: c_int, n: $I, k: $I, a: *const $T, lda: $I, x: *mut $T, incx: $I)
            => tbmv::<$T, $I>("tbmv", false, layout, uplo, trans, diag, n, k, a, lda, x, incx));
        $crate::export!(concat!("cblas_", $p, "tbsv", $sfx), fn(layout: c_int, uplo: c_int, trans: c_int, diag: c_int, n: $I, k: $I, a: *const $T, lda: $I, x: *mut $T, incx: $I)
            => tbmv::<$T, $I>("tbsv", true, layout, uplo, trans, diag, n, k, a, lda, x, incx));
        $crate::export!(concat!("cblas_", $p, "tpmv", $sfx), fn(layout: c_int, uplo: c_int, trans: c_int, diag: c_int, n: $I, ap: *const $T, x: *mut $T, incx: $I)
            => tpmv::<$T, $I>("tpmv", false, layout, uplo, trans, diag, n, ap, x, incx));
        $crate::export!(concat!("cblas_", $p, "tpsv", $sfx), fn(layout: c_int, uplo: c_int, trans: c_int, diag: c_int, n: $I, ap: *const $T, x: *mut $T, incx: $I)
            => tpmv::<$T, $I>("tpsv", true, layout, uplo, trans, diag, n, ap, x, incx));
    };
}

/// Real-only routines.
macro_rules! cb_real {
    ($I:ty, $sfx:literal, $T:ty, $p:literal) => {
        $crate::export!(concat!("cblas_", $p, "symv", $sfx), fn(layout: c_int, uplo: c_int, n: $I, alpha: $T, a: *const $T, lda: $I, x: *const $T, incx: $I, beta: $T, y: *mut $T, incy: $I)
            => symv::<$T, $I>("symv", false, layout, uplo, n, alpha, a, lda, x, incx, beta, y, incy));
        $crate::export!(concat!("cblas_", $p, "sbmv", $sfx), fn(layout: c_int, uplo: c_int, n: $I, k: $I, alpha: $T, a: *const $T, lda: $I, x: *const $T, incx: $I, beta: $T, y: *mut $T, incy: $I)
            => sbmv::<$T, $I>("sbmv", false, layout, uplo, n, k, alpha, a, lda, x, incx, beta, y, incy));
        $crate::export!(concat!("cblas_", $p, "spmv", $sfx), fn(layout: c_int, uplo: c_int, n: $I, alpha: $T, ap: *const $T, x: *const $T, incx: $I, beta: $T, y: *mut $T, incy: $I)
            => spmv::<$T, $I>("spmv", false, layout, uplo, n, alpha, ap, x, incx, beta, y, incy));
        $crate::export!(concat!("cblas_", $p, "ger", $sfx), fn(layout: c_int, m: $I, n: $I, alpha: $T, x: *const $T, incx: $I, y: *const $T, incy: $I, a: *mut $T, lda: $I)
            => ger::<$T, $I>("ger", false, layout, m, n, alpha, x, incx, y, incy, a, lda));
        $crate::export!(concat!("cblas_", $p, "syr", $sfx), fn(layout: c_int, uplo: c_int, n: $I, alpha: $T, x: *const $T, incx: $I, a: *mut $T, lda: $I)
            => syr::<$T, $I>("syr", false, layout, uplo, n, alpha, x, incx, a, lda));
        $crate::export!(concat!("cblas_", $p, "spr", $sfx), fn(layout: c_int, uplo: c_int, n: $I, alpha: $T, x: *const $T, incx: $I, ap: *mut $T)
            => spr::<$T, $I>("spr", false, layout, uplo, n, alpha, x, incx, ap));
        $crate::export!(concat!("cblas_", $p, "syr2", $sfx), fn(layout: c_int, uplo: c_int, n: $I, alpha: $T, x: *const $T, incx: $I, y: *const $T, incy: $I, a: *mut $T, lda: $I)
            => syr2::<$T, $I>("syr2", false, layout, uplo, n, alpha, x, incx, y, incy, a, lda));
        $crate::export!(concat!("cblas_", $p, "spr2", $sfx), fn(layout: c_int, uplo: c_int, n: $I, alpha: $T, x: *const $T, incx: $I, y: *const $T, incy: $I, ap: *mut $T)
            => spr2::<$T, $I>("spr2", false, layout, uplo, n, alpha, x, incx, y, incy, ap));
    };
}

/// Complex-only routines. `$R`: the real type (HER/HPR take a real alpha by value).
macro_rules! cb_complex {
    ($I:ty, $sfx:literal, $T:ty, $R:ty, $p:literal) => {
        $crate::export!(concat!("cblas_", $p, "hemv", $sfx), fn(layout: c_int, uplo: c_int, n: $I, alpha: *const $T, a: *const $T, lda: $I, x: *const $T, incx: $I, beta: *const $T, y: *mut $T, incy: $I)
            => symv::<$T, $I>("hemv", true, layout, uplo, n, *alpha, a, lda, x, incx, *beta, y, incy));
        $crate::export!(concat!("cblas_", $p, "hbmv", $sfx), fn(layout: c_int, uplo: c_int, n: $I, k: $I, alpha: *const $T, a: *const $T, lda: $I, x: *const $T, incx: $I, beta: *const $T, y: *mut $T, incy: $I)
            => sbmv::<$T, $I>("hbmv", true, layout, uplo, n, k, *alpha, a, lda, x, incx, *beta, y, incy));
        $crate::export!(concat!("cblas_", $p, "hpmv", $sfx), fn(layout: c_int, uplo: c_int, n: $I, alpha: *const $T, ap: *const $T, x: *const $T, incx: $I, beta: *const $T, y: *mut $T, incy: $I)
            => spmv::<$T, $I>("hpmv", true, layout, uplo, n, *alpha, ap, x, incx, *beta, y, incy));
        $crate::export!(concat!("cblas_", $p, "geru", $sfx), fn(layout: c_int, m: $I, n: $I, alpha: *const $T, x: *const $T, incx: $I, y: *const $T, incy: $I, a: *mut $T, lda: $I)
            => ger::<$T, $I>("geru", false, layout, m, n, *alpha, x, incx, y, incy, a, lda));
        $crate::export!(concat!("cblas_", $p, "gerc", $sfx), fn(layout: c_int, m: $I, n: $I, alpha: *const $T, x: *const $T, incx: $I, y: *const $T, incy: $I, a: *mut $T, lda: $I)
            => ger::<$T, $I>("gerc", true, layout, m, n, *alpha, x, incx, y, incy, a, lda));
        $crate::export!(concat!("cblas_", $p, "her", $sfx), fn(layout: c_int, uplo: c_int, n: $I, alpha: $R, x: *const $T, incx: $I, a: *mut $T, lda: $I)
            => syr::<$T, $I>("her", true, layout, uplo, n, <$T>::from_real(alpha), x, incx, a, lda));
        $crate::export!(concat!("cblas_", $p, "hpr", $sfx), fn(layout: c_int, uplo: c_int, n: $I, alpha: $R, x: *const $T, incx: $I, ap: *mut $T)
            => spr::<$T, $I>("hpr", true, layout, uplo, n, <$T>::from_real(alpha), x, incx, ap));
        $crate::export!(concat!("cblas_", $p, "her2", $sfx), fn(layout: c_int, uplo: c_int, n: $I, alpha: *const $T, x: *const $T, incx: $I, y: *const $T, incy: $I, a: *mut $T, lda: $I)
            => syr2::<$T, $I>("her2", true, layout, uplo, n, *alpha, x, incx, y, incy, a, lda));
        $crate::export!(concat!("cblas_", $p, "hpr2", $sfx), fn(layout: c_int, uplo: c_int, n: $I, alpha: *const $T, x: *const $T, incx: $I, y: *const $T, incy: $I, ap: *mut $T)
            => spr2::<$T, $I>("hpr2", true, layout, uplo, n, *alpha, x, incx, y, incy, ap));
    };
}

macro_rules! level2_exports {
    ($I:ty, $sfx:literal) => {
        cb_all!($I, $sfx, f32, f32, "s");
        cb_all!($I, $sfx, f64, f64, "d");
        cb_all!($I, $sfx, C32, *const C32, "c");
        cb_all!($I, $sfx, C64, *const C64, "z");
        cb_real!($I, $sfx, f32, "s");
        cb_real!($I, $sfx, f64, "d");
        cb_complex!($I, $sfx, C32, f32, "c");
        cb_complex!($I, $sfx, C64, f64, "z");
    };
}

mod exports {
    use super::*;
    use crate::types::{C32, C64};
    level2_exports!(c_int, "");
    level2_exports!(i64, "64_");
}
