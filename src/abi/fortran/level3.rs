//! Fortran Level 3 BLAS: GEMM, SYMM/HEMM, SYRK/HERK, SYR2K/HER2K (TRMM/TRSM live in
//! `level3_tri.rs`).
//!
//! Each routine has a `check_*` function (argument checks in reference order, shared with
//! CBLAS, which calls it on the column-major problem a row-major call maps to) and a `*_run`
//! function taking validated arguments: quick returns, views, and the call into the engine.
//!
//! GEMM whose operands are all device memory (a CUDA program passing `cudaMalloc` pointers to
//! `dgemm_` or `cblas_sgemm`) runs on the GPU ([`device_gemm`]): split-k where the planner's
//! model says so, else the real cuBLAS GEMM. GEMM on host memory goes to the GPU when the
//! offload planner predicts it faster (`crate::plan::gemm::host_gemm`); so do SYMM/HEMM, SYRK/HERK, SYR2K/HER2K
//! here and TRMM/TRSM in `level3_tri.rs` ([`offload_level3`], `crate::hybrid::offload::l3`). CBLAS reaches
//! all of these through the same `*_run` functions.

use crate::abi::fortran::util::report;
use crate::cpu::level3 as eng;
use crate::hybrid::offload::l3;
use crate::plan;
use crate::plan::gemm::{offload_level3, Level3Run};
use crate::types::{chars, FInt, MatMut, MatRef, Scalar, Side, Trans, Uplo};
use std::os::raw::c_char;

#[inline]
fn max1(v: isize) -> isize {
    v.max(1)
}

/// Reference `?GEMM` checks: 1 TRANSA, 2 TRANSB, 3 M, 4 N, 5 K, 8 LDA, 10 LDB, 13 LDC.
#[allow(clippy::too_many_arguments)]
pub fn check_gemm(
    ta: Option<Trans>,
    tb: Option<Trans>,
    m: isize,
    n: isize,
    k: isize,
    lda: isize,
    ldb: isize,
    ldc: isize,
) -> Result<(Trans, Trans), isize> {
    let ta = ta.ok_or(1isize)?;
    let tb = tb.ok_or(2isize)?;
    let nrowa = if ta == Trans::No { m } else { k };
    let nrowb = if tb == Trans::No { k } else { n };
    if m < 0 {
        Err(3)
    } else if n < 0 {
        Err(4)
    } else if k < 0 {
        Err(5)
    } else if lda < max1(nrowa) {
        Err(8)
    } else if ldb < max1(nrowb) {
        Err(10)
    } else if ldc < max1(m) {
        Err(13)
    } else {
        Ok((ta, tb))
    }
}

/// `?GEMM` after validation: C := alpha*op(A)*op(B) + beta*C.
///
/// # Safety
/// Arguments validated by [`check_gemm`]; pointers as in reference BLAS.
#[allow(clippy::too_many_arguments)]
pub unsafe fn gemm_run<T: Scalar>(
    ta: Trans,
    tb: Trans,
    m: isize,
    n: isize,
    k: isize,
    alpha: T,
    a: *const T,
    lda: isize,
    b: *const T,
    ldb: isize,
    beta: T,
    c: *mut T,
    ldc: isize,
) {
    if m == 0 || n == 0 || ((alpha.is_zero() || k == 0) && beta.is_one()) {
        return;
    }
    plan::gemm::gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

/// `?gemm_` (Fortran).
///
/// # Safety
/// Pointers as in reference BLAS.
#[allow(clippy::too_many_arguments)]
pub unsafe fn gemm<T: Scalar, I: FInt>(
    ta: *const c_char,
    tb: *const c_char,
    m: *const I,
    n: *const I,
    k: *const I,
    alpha: *const T,
    a: *const T,
    lda: *const I,
    b: *const T,
    ldb: *const I,
    beta: *const T,
    c: *mut T,
    ldc: *const I,
) {
    let (m, n, k) = (I::read(m), I::read(n), I::read(k));
    let (lda, ldb, ldc) = (I::read(lda), I::read(ldb), I::read(ldc));
    match check_gemm(chars::trans(ta), chars::trans(tb), m, n, k, lda, ldb, ldc) {
        Err(info) => report::<I>(&format!("{}gemm", T::PREFIX), info),
        Ok((ta, tb)) => gemm_run(ta, tb, m, n, k, *alpha, a, lda, b, ldb, *beta, c, ldc),
    }
}

/// Reference `?SYMM`/`?HEMM` checks: 1 SIDE, 2 UPLO, 3 M, 4 N, 7 LDA, 9 LDB, 12 LDC.
pub fn check_symm(
    side: Option<Side>,
    uplo: Option<Uplo>,
    m: isize,
    n: isize,
    lda: isize,
    ldb: isize,
    ldc: isize,
) -> Result<(Side, Uplo), isize> {
    let side = side.ok_or(1isize)?;
    let uplo = uplo.ok_or(2isize)?;
    let nrowa = if side == Side::Left { m } else { n };
    if m < 0 {
        Err(3)
    } else if n < 0 {
        Err(4)
    } else if lda < max1(nrowa) {
        Err(7)
    } else if ldb < max1(m) {
        Err(9)
    } else if ldc < max1(m) {
        Err(12)
    } else {
        Ok((side, uplo))
    }
}

/// `?SYMM` (`herm == false`) or `?HEMM` after validation.
///
/// # Safety
/// Arguments validated by [`check_symm`]; pointers as in reference BLAS.
#[allow(clippy::too_many_arguments)]
pub unsafe fn symm_run<T: Scalar>(
    herm: bool,
    side: Side,
    uplo: Uplo,
    m: isize,
    n: isize,
    alpha: T,
    a: *const T,
    lda: isize,
    b: *const T,
    ldb: isize,
    beta: T,
    c: *mut T,
    ldc: isize,
) {
    if m == 0 || n == 0 || (alpha.is_zero() && beta.is_one()) {
        return;
    }
    let (m, n) = (m as usize, n as usize);
    let shape = || format!("side={side:?} uplo={uplo:?} m={m} n={n} lda={lda} ldb={ldb} ldc={ldc}");
    let (la, lb, lc) = (lda as usize, ldb as usize, ldc as usize);
    let call = l3::Call::symm(herm, side, uplo, m, n, alpha, a, la, b, lb, beta, c, lc);
    let Level3Run::Cpu(_watch) = offload_level3(&call, &shape, &|left| l3::finish_rank(&call, left)) else {
        return;
    };
    let na = if side == Side::Left { m } else { n };
    let av = MatRef::col_major(a, na, na, lda as usize);
    let bv = MatRef::col_major(b, m, n, ldb as usize);
    let cv = MatMut::col_major(c, m, n, ldc as usize);
    plan::run::<T, _>(if herm { "hemm" } else { "symm" }, shape, || {
        eng::sym::symm(side, uplo, herm, alpha, av, bv, beta, cv)
    });
}

/// `?symm_` / `?hemm_` (Fortran).
///
/// # Safety
/// Pointers as in reference BLAS.
#[allow(clippy::too_many_arguments)]
pub unsafe fn symm<T: Scalar, I: FInt>(
    herm: bool,
    side: *const c_char,
    uplo: *const c_char,
    m: *const I,
    n: *const I,
    alpha: *const T,
    a: *const T,
    lda: *const I,
    b: *const T,
    ldb: *const I,
    beta: *const T,
    c: *mut T,
    ldc: *const I,
) {
    let (m, n) = (I::read(m), I::read(n));
    let (lda, ldb, ldc) = (I::read(lda), I::read(ldb), I::read(ldc));
    match check_symm(chars::side(side), chars::uplo(uplo), m, n, lda, ldb, ldc) {
        Err(info) => report::<I>(&format!("{}{}", T::PREFIX, if herm { "hemm" } else { "symm" }), info),
        Ok((side, uplo)) => symm_run(herm, side, uplo, m, n, *alpha, a, lda, b, ldb, *beta, c, ldc),
    }
}

/// Which TRANS values a rank-k routine accepts: real SYRK/SYR2K take N, T and C (C meaning T);
/// complex SYRK/SYR2K only N and T; HERK/HER2K only N and C.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RankKind {
    Sym,
    Herm,
}

fn rank_trans<T: Scalar>(kind: RankKind, t: Option<Trans>) -> Option<Trans> {
    match (kind, t?) {
        (_, Trans::No) => Some(Trans::No),
        (RankKind::Sym, Trans::Trans) => Some(Trans::Trans),
        (RankKind::Sym, Trans::ConjTrans) if !T::IS_COMPLEX => Some(Trans::Trans),
        (RankKind::Herm, Trans::ConjTrans) => Some(Trans::ConjTrans),
        _ => None,
    }
}

/// Reference `?SYRK`/`?HERK` (`ldb == None`) and `?SYR2K`/`?HER2K` checks: 1 UPLO, 2 TRANS,
/// 3 N, 4 K, 7 LDA, then 9 LDB and 12 LDC for the rank-2k routines, 10 LDC for rank-k.
#[allow(clippy::too_many_arguments)]
pub fn check_rank<T: Scalar>(
    kind: RankKind,
    uplo: Option<Uplo>,
    trans: Option<Trans>,
    n: isize,
    k: isize,
    lda: isize,
    ldb: Option<isize>,
    ldc: isize,
) -> Result<(Uplo, Trans), isize> {
    let uplo = uplo.ok_or(1isize)?;
    let trans = rank_trans::<T>(kind, trans).ok_or(2isize)?;
    let nrowa = if trans == Trans::No { n } else { k };
    if n < 0 {
        Err(3)
    } else if k < 0 {
        Err(4)
    } else if lda < max1(nrowa) {
        Err(7)
    } else if ldb.is_some_and(|ldb| ldb < max1(nrowa)) {
        Err(9)
    } else if ldc < max1(n) {
        Err(if ldb.is_some() { 12 } else { 10 })
    } else {
        Ok((uplo, trans))
    }
}

/// `?SYRK`/`?HERK` after validation (`herm`: alpha and beta are real, C's diagonal is real).
///
/// # Safety
/// Arguments validated by [`check_rank`]; pointers as in reference BLAS.
#[allow(clippy::too_many_arguments)]
pub unsafe fn syrk_run<T: Scalar>(
    kind: RankKind,
    uplo: Uplo,
    trans: Trans,
    n: isize,
    k: isize,
    alpha: T,
    a: *const T,
    lda: isize,
    beta: T,
    c: *mut T,
    ldc: isize,
) {
    if n == 0 || ((alpha.is_zero() || k == 0) && beta.is_one()) {
        return;
    }
    let (n, k) = (n as usize, k as usize);
    let herm = kind == RankKind::Herm;
    let shape = || format!("uplo={uplo:?} trans={trans:?} n={n} k={k} lda={lda} ldc={ldc}");
    let call = l3::Call::syrk(herm, uplo, trans, n, k, alpha, a, lda as usize, beta, c, ldc as usize);
    let Level3Run::Cpu(_watch) = offload_level3(&call, &shape, &|left| l3::finish_rank(&call, left)) else {
        return;
    };
    let (xv, conj) = MatRef::op(a, trans, n, k, lda as usize);
    let cv = MatMut::col_major(c, n, n, ldc as usize);
    plan::run::<T, _>(if herm { "herk" } else { "syrk" }, shape, || {
        eng::sym::syrk(uplo, herm, alpha, xv, conj, beta, cv)
    });
}

/// `?syrk_` / `?herk_` (Fortran). `R` is the type of alpha and beta (real for HERK).
///
/// # Safety
/// Pointers as in reference BLAS.
#[allow(clippy::too_many_arguments)]
pub unsafe fn syrk<T: Scalar, R: Copy + Into<T>, I: FInt>(
    kind: RankKind,
    uplo: *const c_char,
    trans: *const c_char,
    n: *const I,
    k: *const I,
    alpha: *const R,
    a: *const T,
    lda: *const I,
    beta: *const R,
    c: *mut T,
    ldc: *const I,
) {
    let (n, k, lda, ldc) = (I::read(n), I::read(k), I::read(lda), I::read(ldc));
    match check_rank::<T>(kind, chars::uplo(uplo), chars::trans(trans), n, k, lda, None, ldc) {
        Err(info) => {
            report::<I>(&format!("{}{}", T::PREFIX, if kind == RankKind::Herm { "herk" } else { "syrk" }), info)
        }
        Ok((uplo, trans)) => syrk_run(kind, uplo, trans, n, k, (*alpha).into(), a, lda, (*beta).into(), c, ldc),
    }
}

/// `?SYR2K`/`?HER2K` after validation (`herm`: beta is real, C's diagonal is real).
///
/// # Safety
/// Arguments validated by [`check_rank`]; pointers as in reference BLAS.
#[allow(clippy::too_many_arguments)]
pub unsafe fn syr2k_run<T: Scalar>(
    kind: RankKind,
    uplo: Uplo,
    trans: Trans,
    n: isize,
    k: isize,
    alpha: T,
    a: *const T,
    lda: isize,
    b: *const T,
    ldb: isize,
    beta: T,
    c: *mut T,
    ldc: isize,
) {
    if n == 0 || ((alpha.is_zero() || k == 0) && beta.is_one()) {
        return;
    }
    let (n, k) = (n as usize, k as usize);
    let herm = kind == RankKind::Herm;
    let shape = || format!("uplo={uplo:?} trans={trans:?} n={n} k={k} lda={lda} ldb={ldb} ldc={ldc}");
    let (la, lb, lc) = (lda as usize, ldb as usize, ldc as usize);
    let call = l3::Call::syr2k(herm, uplo, trans, n, k, alpha, a, la, b, lb, beta, c, lc);
    let Level3Run::Cpu(_watch) = offload_level3(&call, &shape, &|left| l3::finish_rank(&call, left)) else {
        return;
    };
    let (xv, conj) = MatRef::op(a, trans, n, k, lda as usize);
    let (yv, _) = MatRef::op(b, trans, n, k, ldb as usize);
    let cv = MatMut::col_major(c, n, n, ldc as usize);
    plan::run::<T, _>(if herm { "her2k" } else { "syr2k" }, shape, || {
        eng::sym::syr2k(uplo, herm, alpha, xv, yv, conj, beta, cv)
    });
}

/// `?syr2k_` / `?her2k_` (Fortran). `R` is the type of beta (real for HER2K).
///
/// # Safety
/// Pointers as in reference BLAS.
#[allow(clippy::too_many_arguments)]
pub unsafe fn syr2k<T: Scalar, R: Copy + Into<T>, I: FInt>(
    kind: RankKind,
    uplo: *const c_char,
    trans: *const c_char,
    n: *const I,
    k: *const I,
    alpha: *const T,
    a: *const T,
    lda: *const I,
    b: *const T,
    ldb: *const I,
    beta: *const R,
    c: *mut T,
    ldc: *const I,
) {
    let (n, k) = (I::read(n), I::read(k));
    let (lda, ldb, ldc) = (I::read(lda), I::read(ldb), I::read(ldc));
    match check_rank::<T>(kind, chars::uplo(uplo), chars::trans(trans), n, k, lda, Some(ldb), ldc) {
        Err(info) => {
            report::<I>(&format!("{}{}", T::PREFIX, if kind == RankKind::Herm { "her2k" } else { "syr2k" }), info)
        }
        Ok((uplo, trans)) => syr2k_run(kind, uplo, trans, n, k, *alpha, a, lda, b, ldb, (*beta).into(), c, ldc),
    }
}

macro_rules! level3_exports {
    ($I:ty, $sfx:literal) => {
        $crate::export!(concat!("sgemm", $sfx), fn(ta: *const c_char, tb: *const c_char, m: *const $I, n: *const $I, k: *const $I, alpha: *const f32, a: *const f32, lda: *const $I, b: *const f32, ldb: *const $I, beta: *const f32, c: *mut f32, ldc: *const $I) => gemm::<f32, $I>(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc));
        $crate::export!(concat!("dgemm", $sfx), fn(ta: *const c_char, tb: *const c_char, m: *const $I, n: *const $I, k: *const $I, alpha: *const f64, a: *const f64, lda: *const $I, b: *const f64, ldb: *const $I, beta: *const f64, c: *mut f64, ldc: *const $I) => gemm::<f64, $I>(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc));
        $crate::export!(concat!("cgemm", $sfx), fn(ta: *const c_char, tb: *const c_char, m: *const $I, n: *const $I, k: *const $I, alpha: *const C32, a: *const C32, lda: *const $I, b: *const C32, ldb: *const $I, beta: *const C32, c: *mut C32, ldc: *const $I) => gemm::<C32, $I>(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc));
        $crate::export!(concat!("zgemm", $sfx), fn(ta: *const c_char, tb: *const c_char, m: *const $I, n: *const $I, k: *const $I, alpha: *const C64, a: *const C64, lda: *const $I, b: *const C64, ldb: *const $I, beta: *const C64, c: *mut C64, ldc: *const $I) => gemm::<C64, $I>(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc));

        $crate::export!(concat!("ssymm", $sfx), fn(side: *const c_char, uplo: *const c_char, m: *const $I, n: *const $I, alpha: *const f32, a: *const f32, lda: *const $I, b: *const f32, ldb: *const $I, beta: *const f32, c: *mut f32, ldc: *const $I) => symm::<f32, $I>(false, side, uplo, m, n, alpha, a, lda, b, ldb, beta, c, ldc));
        $crate::export!(concat!("dsymm", $sfx), fn(side: *const c_char, uplo: *const c_char, m: *const $I, n: *const $I, alpha: *const f64, a: *const f64, lda: *const $I, b: *const f64, ldb: *const $I, beta: *const f64, c: *mut f64, ldc: *const $I) => symm::<f64, $I>(false, side, uplo, m, n, alpha, a, lda, b, ldb, beta, c, ldc));
        $crate::export!(concat!("csymm", $sfx), fn(side: *const c_char, uplo: *const c_char, m: *const $I, n: *const $I, alpha: *const C32, a: *const C32, lda: *const $I, b: *const C32, ldb: *const $I, beta: *const C32, c: *mut C32, ldc: *const $I) => symm::<C32, $I>(false, side, uplo, m, n, alpha, a, lda, b, ldb, beta, c, ldc));
        $crate::export!(concat!("zsymm", $sfx), fn(side: *const c_char, uplo: *const c_char, m: *const $I, n: *const $I, alpha: *const C64, a: *const C64, lda: *const $I, b: *const C64, ldb: *const $I, beta: *const C64, c: *mut C64, ldc: *const $I) => symm::<C64, $I>(false, side, uplo, m, n, alpha, a, lda, b, ldb, beta, c, ldc));
        $crate::export!(concat!("chemm", $sfx), fn(side: *const c_char, uplo: *const c_char, m: *const $I, n: *const $I, alpha: *const C32, a: *const C32, lda: *const $I, b: *const C32, ldb: *const $I, beta: *const C32, c: *mut C32, ldc: *const $I) => symm::<C32, $I>(true, side, uplo, m, n, alpha, a, lda, b, ldb, beta, c, ldc));
        $crate::export!(concat!("zhemm", $sfx), fn(side: *const c_char, uplo: *const c_char, m: *const $I, n: *const $I, alpha: *const C64, a: *const C64, lda: *const $I, b: *const C64, ldb: *const $I, beta: *const C64, c: *mut C64, ldc: *const $I) => symm::<C64, $I>(true, side, uplo, m, n, alpha, a, lda, b, ldb, beta, c, ldc));

        $crate::export!(concat!("ssyrk", $sfx), fn(uplo: *const c_char, trans: *const c_char, n: *const $I, k: *const $I, alpha: *const f32, a: *const f32, lda: *const $I, beta: *const f32, c: *mut f32, ldc: *const $I) => syrk::<f32, f32, $I>(RankKind::Sym, uplo, trans, n, k, alpha, a, lda, beta, c, ldc));
        $crate::export!(concat!("dsyrk", $sfx), fn(uplo: *const c_char, trans: *const c_char, n: *const $I, k: *const $I, alpha: *const f64, a: *const f64, lda: *const $I, beta: *const f64, c: *mut f64, ldc: *const $I) => syrk::<f64, f64, $I>(RankKind::Sym, uplo, trans, n, k, alpha, a, lda, beta, c, ldc));
        $crate::export!(concat!("csyrk", $sfx), fn(uplo: *const c_char, trans: *const c_char, n: *const $I, k: *const $I, alpha: *const C32, a: *const C32, lda: *const $I, beta: *const C32, c: *mut C32, ldc: *const $I) => syrk::<C32, C32, $I>(RankKind::Sym, uplo, trans, n, k, alpha, a, lda, beta, c, ldc));
        $crate::export!(concat!("zsyrk", $sfx), fn(uplo: *const c_char, trans: *const c_char, n: *const $I, k: *const $I, alpha: *const C64, a: *const C64, lda: *const $I, beta: *const C64, c: *mut C64, ldc: *const $I) => syrk::<C64, C64, $I>(RankKind::Sym, uplo, trans, n, k, alpha, a, lda, beta, c, ldc));
        $crate::export!(concat!("cherk", $sfx), fn(uplo: *const c_char, trans: *const c_char, n: *const $I, k: *const $I, alpha: *const f32, a: *const C32, lda: *const $I, beta: *const f32, c: *mut C32, ldc: *const $I) => syrk::<C32, f32, $I>(RankKind::Herm, uplo, trans, n, k, alpha, a, lda, beta, c, ldc));
        $crate::export!(concat!("zherk", $sfx), fn(uplo: *const c_char, trans: *const c_char, n: *const $I, k: *const $I, alpha: *const f64, a: *const C64, lda: *const $I, beta: *const f64, c: *mut C64, ldc: *const $I) => syrk::<C64, f64, $I>(RankKind::Herm, uplo, trans, n, k, alpha, a, lda, beta, c, ldc));

        $crate::export!(concat!("ssyr2k", $sfx), fn(uplo: *const c_char, trans: *const c_char, n: *const $I, k: *const $I, alpha: *const f32, a: *const f32, lda: *const $I, b: *const f32, ldb: *const $I, beta: *const f32, c: *mut f32, ldc: *const $I) => syr2k::<f32, f32, $I>(RankKind::Sym, uplo, trans, n, k, alpha, a, lda, b, ldb, beta, c, ldc));
        $crate::export!(concat!("dsyr2k", $sfx), fn(uplo: *const c_char, trans: *const c_char, n: *const $I, k: *const $I, alpha: *const f64, a: *const f64, lda: *const $I, b: *const f64, ldb: *const $I, beta: *const f64, c: *mut f64, ldc: *const $I) => syr2k::<f64, f64, $I>(RankKind::Sym, uplo, trans, n, k, alpha, a, lda, b, ldb, beta, c, ldc));
        $crate::export!(concat!("csyr2k", $sfx), fn(uplo: *const c_char, trans: *const c_char, n: *const $I, k: *const $I, alpha: *const C32, a: *const C32, lda: *const $I, b: *const C32, ldb: *const $I, beta: *const C32, c: *mut C32, ldc: *const $I) => syr2k::<C32, C32, $I>(RankKind::Sym, uplo, trans, n, k, alpha, a, lda, b, ldb, beta, c, ldc));
        $crate::export!(concat!("zsyr2k", $sfx), fn(uplo: *const c_char, trans: *const c_char, n: *const $I, k: *const $I, alpha: *const C64, a: *const C64, lda: *const $I, b: *const C64, ldb: *const $I, beta: *const C64, c: *mut C64, ldc: *const $I) => syr2k::<C64, C64, $I>(RankKind::Sym, uplo, trans, n, k, alpha, a, lda, b, ldb, beta, c, ldc));
        $crate::export!(concat!("cher2k", $sfx), fn(uplo: *const c_char, trans: *const c_char, n: *const $I, k: *const $I, alpha: *const C32, a: *const C32, lda: *const $I, b: *const C32, ldb: *const $I, beta: *const f32, c: *mut C32, ldc: *const $I) => syr2k::<C32, f32, $I>(RankKind::Herm, uplo, trans, n, k, alpha, a, lda, b, ldb, beta, c, ldc));
        $crate::export!(concat!("zher2k", $sfx), fn(uplo: *const c_char, trans: *const c_char, n: *const $I, k: *const $I, alpha: *const C64, a: *const C64, lda: *const $I, b: *const C64, ldb: *const $I, beta: *const f64, c: *mut C64, ldc: *const $I) => syr2k::<C64, f64, $I>(RankKind::Herm, uplo, trans, n, k, alpha, a, lda, b, ldb, beta, c, ldc));
    };
}

mod exports {
    use super::*;
    use crate::types::{C32, C64};
    level3_exports!(i32, "_");
    level3_exports!(i64, "_64_");
}
