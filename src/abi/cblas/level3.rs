//! CBLAS Level 3: GEMM, SYMM/HEMM, SYRK/HERK, SYR2K/HER2K (TRMM/TRSM live in `level3_tri.rs`).
//!
//! A row-major call is the column-major problem on the transposed matrices: GEMM swaps A and
//! B (and M and N), SYMM/HEMM flip side and uplo and swap M and N, the rank-k routines flip
//! uplo and trans (HER2K also conjugates alpha). Error numbers follow reference CBLAS 3.11,
//! quirks included: a bad TransB of a row-major GEMM is reported as argument 2, a bad Uplo of
//! a row-major SYRK/HERK/SYR2K as argument 3, and a row-major complex SYRK/SYR2K takes
//! ConjTrans as Trans, HERK/HER2K Trans as ConjTrans (3.11 maps both to 'N').
//!
//! GEMM on device memory runs on the GPU through the same column-major `gemm_run` (after the
//! row-major swap of A and B), see `abi::fortran::level3::device_gemm`.

use crate::abi::cblas::{layout, report, side, trans, uplo, Layout};
use crate::abi::fortran::level3::{
    check_gemm, check_rank, check_symm, gemm_run, symm_run, syr2k_run, syrk_run, RankKind,
};
use crate::types::{FInt, Scalar, Trans};
use std::os::raw::c_int;

/// `cblas_?gemm`.
///
/// # Safety
/// Pointers as in reference CBLAS.
#[allow(clippy::too_many_arguments)]
pub unsafe fn gemm<T: Scalar, I: FInt>(
    lay: c_int,
    ta: c_int,
    tb: c_int,
    m: I,
    n: I,
    k: I,
    alpha: T,
    a: *const T,
    lda: I,
    b: *const T,
    ldb: I,
    beta: T,
    c: *mut T,
    ldc: I,
) {
    // Only formatted on the error path.
    let name = || format!("cblas_{}gemm", T::PREFIX);
    let Some(lay) = layout(lay) else { return report(&name(), 1) };
    let Some(ta) = trans(ta) else { return report(&name(), 2) };
    let Some(tb) = trans(tb) else {
        // Reference CBLAS 3.11 reports a bad TransB of a row-major call as argument 2.
        return report(&name(), if lay == Layout::RowMajor { 2 } else { 3 });
    };
    let (m, n, k) = (m.to_isize(), n.to_isize(), k.to_isize());
    let (lda, ldb, ldc) = (lda.to_isize(), ldb.to_isize(), ldc.to_isize());
    match lay {
        Layout::ColMajor => match check_gemm(Some(ta), Some(tb), m, n, k, lda, ldb, ldc) {
            Err(info) => report(&name(), info + 1),
            Ok(_) => gemm_run(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc),
        },
        // C^T = op(B)^T op(A)^T: the column-major problem with A and B swapped.
        Layout::RowMajor => match check_gemm(Some(tb), Some(ta), n, m, k, ldb, lda, ldc) {
            Err(info) => report(&name(), info + 1),
            Ok(_) => gemm_run(tb, ta, n, m, k, alpha, b, ldb, a, lda, beta, c, ldc),
        },
    }
}

/// `cblas_?symm` / `cblas_?hemm`.
///
/// # Safety
/// Pointers as in reference CBLAS.
#[allow(clippy::too_many_arguments)]
pub unsafe fn symm<T: Scalar, I: FInt>(
    herm: bool,
    lay: c_int,
    sd: c_int,
    ul: c_int,
    m: I,
    n: I,
    alpha: T,
    a: *const T,
    lda: I,
    b: *const T,
    ldb: I,
    beta: T,
    c: *mut T,
    ldc: I,
) {
    // Only formatted on the error path.
    let name = || format!("cblas_{}{}", T::PREFIX, if herm { "hemm" } else { "symm" });
    let Some(lay) = layout(lay) else { return report(&name(), 1) };
    let Some(mut sd) = side(sd) else { return report(&name(), 2) };
    let Some(mut ul) = uplo(ul) else { return report(&name(), 3) };
    let (mut m, mut n) = (m.to_isize(), n.to_isize());
    let (lda, ldb, ldc) = (lda.to_isize(), ldb.to_isize(), ldc.to_isize());
    if lay == Layout::RowMajor {
        // C^T = B^T A^T (or A^T B^T): A^T is the stored triangle read the other way round.
        sd = sd.flip();
        ul = ul.flip();
        std::mem::swap(&mut m, &mut n);
    }
    match check_symm(Some(sd), Some(ul), m, n, lda, ldb, ldc) {
        Err(info) => report(&name(), info + 1),
        Ok(_) => symm_run(herm, sd, ul, m, n, alpha, a, lda, b, ldb, beta, c, ldc),
    }
}

/// Decode Uplo and Trans of a rank-k/2k call and map a row-major call onto its column-major
/// twin, with the error numbers of reference CBLAS 3.11.
fn rank_args(
    kind: RankKind,
    two: bool,
    lay: c_int,
    ul: c_int,
    tr: c_int,
) -> Result<(Layout, crate::types::Uplo, Trans), isize> {
    let lay = layout(lay).ok_or(1isize)?;
    match lay {
        Layout::ColMajor => {
            let ul = uplo(ul).ok_or(2isize)?;
            let tr = trans(tr).ok_or(3isize)?;
            Ok((lay, ul, tr))
        }
        Layout::RowMajor => {
            // HER2K reports a bad Uplo as argument 2, the others as 3.
            let ul = uplo(ul).ok_or(if two && kind == RankKind::Herm { 2isize } else { 3 })?;
            let tr = match trans(tr).ok_or(3isize)? {
                Trans::No if kind == RankKind::Herm => Trans::ConjTrans,
                Trans::No => Trans::Trans,
                // 3.11 maps both T and C to N for every precision.
                _ => Trans::No,
            };
            Ok((lay, ul.flip(), tr))
        }
    }
}

/// `cblas_?syrk` / `cblas_?herk` (alpha and beta already widened to `T` for HERK).
///
/// # Safety
/// Pointers as in reference CBLAS.
#[allow(clippy::too_many_arguments)]
pub unsafe fn syrk<T: Scalar, I: FInt>(
    kind: RankKind,
    lay: c_int,
    ul: c_int,
    tr: c_int,
    n: I,
    k: I,
    alpha: T,
    a: *const T,
    lda: I,
    beta: T,
    c: *mut T,
    ldc: I,
) {
    // Only formatted on the error path.
    let name = || format!("cblas_{}{}", T::PREFIX, if kind == RankKind::Herm { "herk" } else { "syrk" });
    let (_, ul, tr) = match rank_args(kind, false, lay, ul, tr) {
        Ok(v) => v,
        Err(info) => return report(&name(), info),
    };
    let (n, k, lda, ldc) = (n.to_isize(), k.to_isize(), lda.to_isize(), ldc.to_isize());
    match check_rank::<T>(kind, Some(ul), Some(tr), n, k, lda, None, ldc) {
        Err(info) => report(&name(), info + 1),
        Ok((ul, tr)) => syrk_run(kind, ul, tr, n, k, alpha, a, lda, beta, c, ldc),
    }
}

/// `cblas_?syr2k` / `cblas_?her2k` (beta already widened to `T` for HER2K).
///
/// # Safety
/// Pointers as in reference CBLAS.
#[allow(clippy::too_many_arguments)]
pub unsafe fn syr2k<T: Scalar, I: FInt>(
    kind: RankKind,
    lay: c_int,
    ul: c_int,
    tr: c_int,
    n: I,
    k: I,
    alpha: T,
    a: *const T,
    lda: I,
    b: *const T,
    ldb: I,
    beta: T,
    c: *mut T,
    ldc: I,
) {
    // Only formatted on the error path.
    let name = || format!("cblas_{}{}", T::PREFIX, if kind == RankKind::Herm { "her2k" } else { "syr2k" });
    let (lay, ul, tr) = match rank_args(kind, true, lay, ul, tr) {
        Ok(v) => v,
        Err(info) => return report(&name(), info),
    };
    // Row-major HER2K: C^T = conj(C) swaps the roles of alpha and conj(alpha).
    let alpha = if kind == RankKind::Herm && lay == Layout::RowMajor { alpha.conj() } else { alpha };
    let (n, k) = (n.to_isize(), k.to_isize());
    let (lda, ldb, ldc) = (lda.to_isize(), ldb.to_isize(), ldc.to_isize());
    match check_rank::<T>(kind, Some(ul), Some(tr), n, k, lda, Some(ldb), ldc) {
        Err(info) => report(&name(), info + 1),
        Ok((ul, tr)) => syr2k_run(kind, ul, tr, n, k, alpha, a, lda, b, ldb, beta, c, ldc),
    }
}

macro_rules! level3_exports {
    ($I:ty, $sfx:literal) => {
        $crate::export!(concat!("cblas_sgemm", $sfx), fn(lay: c_int, ta: c_int, tb: c_int, m: $I, n: $I, k: $I, alpha: f32, a: *const f32, lda: $I, b: *const f32, ldb: $I, beta: f32, c: *mut f32, ldc: $I) => gemm::<f32, $I>(lay, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc));
        $crate::export!(concat!("cblas_dgemm", $sfx), fn(lay: c_int, ta: c_int, tb: c_int, m: $I, n: $I, k: $I, alpha: f64, a: *const f64, lda: $I, b: *const f64, ldb: $I, beta: f64, c: *mut f64, ldc: $I) => gemm::<f64, $I>(lay, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc));
        $crate::export!(concat!("cblas_cgemm", $sfx), fn(lay: c_int, ta: c_int, tb: c_int, m: $I, n: $I, k: $I, alpha: *const C32, a: *const C32, lda: $I, b: *const C32, ldb: $I, beta: *const C32, c: *mut C32, ldc: $I) => gemm::<C32, $I>(lay, ta, tb, m, n, k, *alpha, a, lda, b, ldb, *beta, c, ldc));
        $crate::export!(concat!("cblas_zgemm", $sfx), fn(lay: c_int, ta: c_int, tb: c_int, m: $I, n: $I, k: $I, alpha: *const C64, a: *const C64, lda: $I, b: *const C64, ldb: $I, beta: *const C64, c: *mut C64, ldc: $I) => gemm::<C64, $I>(lay, ta, tb, m, n, k, *alpha, a, lda, b, ldb, *beta, c, ldc));

        $crate::export!(concat!("cblas_ssymm", $sfx), fn(lay: c_int, sd: c_int, ul: c_int, m: $I, n: $I, alpha: f32, a: *const f32, lda: $I, b: *const f32, ldb: $I, beta: f32, c: *mut f32, ldc: $I) => symm::<f32, $I>(false, lay, sd, ul, m, n, alpha, a, lda, b, ldb, beta, c, ldc));
        $crate::export!(concat!("cblas_dsymm", $sfx), fn(lay: c_int, sd: c_int, ul: c_int, m: $I, n: $I, alpha: f64, a: *const f64, lda: $I, b: *const f64, ldb: $I, beta: f64, c: *mut f64, ldc: $I) => symm::<f64, $I>(false, lay, sd, ul, m, n, alpha, a, lda, b, ldb, beta, c, ldc));
        $crate::export!(concat!("cblas_csymm", $sfx), fn(lay: c_int, sd: c_int, ul: c_int, m: $I, n: $I, alpha: *const C32, a: *const C32, lda: $I, b: *const C32, ldb: $I, beta: *const C32, c: *mut C32, ldc: $I) => symm::<C32, $I>(false, lay, sd, ul, m, n, *alpha, a, lda, b, ldb, *beta, c, ldc));
        $crate::export!(concat!("cblas_zsymm", $sfx), fn(lay: c_int, sd: c_int, ul: c_int, m: $I, n: $I, alpha: *const C64, a: *const C64, lda: $I, b: *const C64, ldb: $I, beta: *const C64, c: *mut C64, ldc: $I) => symm::<C64, $I>(false, lay, sd, ul, m, n, *alpha, a, lda, b, ldb, *beta, c, ldc));
        $crate::export!(concat!("cblas_chemm", $sfx), fn(lay: c_int, sd: c_int, ul: c_int, m: $I, n: $I, alpha: *const C32, a: *const C32, lda: $I, b: *const C32, ldb: $I, beta: *const C32, c: *mut C32, ldc: $I) => symm::<C32, $I>(true, lay, sd, ul, m, n, *alpha, a, lda, b, ldb, *beta, c, ldc));
        $crate::export!(concat!("cblas_zhemm", $sfx), fn(lay: c_int, sd: c_int, ul: c_int, m: $I, n: $I, alpha: *const C64, a: *const C64, lda: $I, b: *const C64, ldb: $I, beta: *const C64, c: *mut C64, ldc: $I) => symm::<C64, $I>(true, lay, sd, ul, m, n, *alpha, a, lda, b, ldb, *beta, c, ldc));

        $crate::export!(concat!("cblas_ssyrk", $sfx), fn(lay: c_int, ul: c_int, tr: c_int, n: $I, k: $I, alpha: f32, a: *const f32, lda: $I, beta: f32, c: *mut f32, ldc: $I) => syrk::<f32, $I>(RankKind::Sym, lay, ul, tr, n, k, alpha, a, lda, beta, c, ldc));
        $crate::export!(concat!("cblas_dsyrk", $sfx), fn(lay: c_int, ul: c_int, tr: c_int, n: $I, k: $I, alpha: f64, a: *const f64, lda: $I, beta: f64, c: *mut f64, ldc: $I) => syrk::<f64, $I>(RankKind::Sym, lay, ul, tr, n, k, alpha, a, lda, beta, c, ldc));
        $crate::export!(concat!("cblas_csyrk", $sfx), fn(lay: c_int, ul: c_int, tr: c_int, n: $I, k: $I, alpha: *const C32, a: *const C32, lda: $I, beta: *const C32, c: *mut C32, ldc: $I) => syrk::<C32, $I>(RankKind::Sym, lay, ul, tr, n, k, *alpha, a, lda, *beta, c, ldc));
        $crate::export!(concat!("cblas_zsyrk", $sfx), fn(lay: c_int, ul: c_int, tr: c_int, n: $I, k: $I, alpha: *const C64, a: *const C64, lda: $I, beta: *const C64, c: *mut C64, ldc: $I) => syrk::<C64, $I>(RankKind::Sym, lay, ul, tr, n, k, *alpha, a, lda, *beta, c, ldc));
        $crate::export!(concat!("cblas_cherk", $sfx), fn(lay: c_int, ul: c_int, tr: c_int, n: $I, k: $I, alpha: f32, a: *const C32, lda: $I, beta: f32, c: *mut C32, ldc: $I) => syrk::<C32, $I>(RankKind::Herm, lay, ul, tr, n, k, C32::from(alpha), a, lda, C32::from(beta), c, ldc));
        $crate::export!(concat!("cblas_zherk", $sfx), fn(lay: c_int, ul: c_int, tr: c_int, n: $I, k: $I, alpha: f64, a: *const C64, lda: $I, beta: f64, c: *mut C64, ldc: $I) => syrk::<C64, $I>(RankKind::Herm, lay, ul, tr, n, k, C64::from(alpha), a, lda, C64::from(beta), c, ldc));

        $crate::export!(concat!("cblas_ssyr2k", $sfx), fn(lay: c_int, ul: c_int, tr: c_int, n: $I, k: $I, alpha: f32, a: *const f32, lda: $I, b: *const f32, ldb: $I, beta: f32, c: *mut f32, ldc: $I) => syr2k::<f32, $I>(RankKind::Sym, lay, ul, tr, n, k, alpha, a, lda, b, ldb, beta, c, ldc));
        $crate::export!(concat!("cblas_dsyr2k", $sfx), fn(lay: c_int, ul: c_int, tr: c_int, n: $I, k: $I, alpha: f64, a: *const f64, lda: $I, b: *const f64, ldb: $I, beta: f64, c: *mut f64, ldc: $I) => syr2k::<f64, $I>(RankKind::Sym, lay, ul, tr, n, k, alpha, a, lda, b, ldb, beta, c, ldc));
        $crate::export!(concat!("cblas_csyr2k", $sfx), fn(lay: c_int, ul: c_int, tr: c_int, n: $I, k: $I, alpha: *const C32, a: *const C32, lda: $I, b: *const C32, ldb: $I, beta: *const C32, c: *mut C32, ldc: $I) => syr2k::<C32, $I>(RankKind::Sym, lay, ul, tr, n, k, *alpha, a, lda, b, ldb, *beta, c, ldc));
        $crate::export!(concat!("cblas_zsyr2k", $sfx), fn(lay: c_int, ul: c_int, tr: c_int, n: $I, k: $I, alpha: *const C64, a: *const C64, lda: $I, b: *const C64, ldb: $I, beta: *const C64, c: *mut C64, ldc: $I) => syr2k::<C64, $I>(RankKind::Sym, lay, ul, tr, n, k, *alpha, a, lda, b, ldb, *beta, c, ldc));
        $crate::export!(concat!("cblas_cher2k", $sfx), fn(lay: c_int, ul: c_int, tr: c_int, n: $I, k: $I, alpha: *const C32, a: *const C32, lda: $I, b: *const C32, ldb: $I, beta: f32, c: *mut C32, ldc: $I) => syr2k::<C32, $I>(RankKind::Herm, lay, ul, tr, n, k, *alpha, a, lda, b, ldb, C32::from(beta), c, ldc));
        $crate::export!(concat!("cblas_zher2k", $sfx), fn(lay: c_int, ul: c_int, tr: c_int, n: $I, k: $I, alpha: *const C64, a: *const C64, lda: $I, b: *const C64, ldb: $I, beta: f64, c: *mut C64, ldc: $I) => syr2k::<C64, $I>(RankKind::Herm, lay, ul, tr, n, k, *alpha, a, lda, b, ldb, C64::from(beta), c, ldc));
    };
}

mod exports {
    use super::*;
    use crate::types::{C32, C64};
    level3_exports!(c_int, "");
    level3_exports!(i64, "64_");
}
