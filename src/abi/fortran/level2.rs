//! Fortran Level 2 BLAS.
//!
//! Per routine: a `check_*` function with the reference argument checks in reference order
//! (also used by CBLAS on the column-major problem a call maps to), a `run_*` function that
//! takes the reference quick returns, builds the views and hands the call to the planner
//! (also used by CBLAS), and the generic Fortran wrapper.

use crate::abi::cublas::host_vendor as vendor;
use crate::abi::fortran::util::report;
use crate::cpu::level2 as eng;
use crate::gpu::{self, DMat, DVec, In};
use crate::plan;
use crate::types::{chars, Diag, FInt, MatMut, MatRef, Scalar, Trans, Uplo, VecMut, VecRef};
use std::ffi::c_void;
use std::os::raw::c_char;

/// `op(A)` as the engine takes it: (transposed, conjugated).
pub(crate) fn op(t: Trans) -> (bool, bool) {
    match t {
        Trans::No => (false, false),
        Trans::Trans => (true, false),
        Trans::ConjTrans => (true, true),
    }
}

fn name<T: Scalar>(base: &str) -> String {
    format!("{}{}", T::PREFIX, base)
}

macro_rules! bad {
    ($cond:expr, $info:expr) => {
        if $cond {
            return Err($info);
        }
    };
}

// ---------------------------------------------------------------------------------------
// Argument checks, in reference order. Enum arguments come first in every Level 2 routine.

pub(crate) fn check_gemv(
    trans: Option<Trans>,
    m: isize,
    n: isize,
    lda: isize,
    incx: isize,
    incy: isize,
) -> Result<Trans, isize> {
    let Some(t) = trans else { return Err(1) };
    bad!(m < 0, 2);
    bad!(n < 0, 3);
    bad!(lda < m.max(1), 6);
    bad!(incx == 0, 8);
    bad!(incy == 0, 11);
    Ok(t)
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn check_gbmv(
    trans: Option<Trans>,
    m: isize,
    n: isize,
    kl: isize,
    ku: isize,
    lda: isize,
    incx: isize,
    incy: isize,
) -> Result<Trans, isize> {
    let Some(t) = trans else { return Err(1) };
    bad!(m < 0, 2);
    bad!(n < 0, 3);
    bad!(kl < 0, 4);
    bad!(ku < 0, 5);
    bad!(lda < kl + ku + 1, 8);
    bad!(incx == 0, 10);
    bad!(incy == 0, 13);
    Ok(t)
}

/// SYMV / HEMV.
pub(crate) fn check_symv(uplo: Option<Uplo>, n: isize, lda: isize, incx: isize, incy: isize) -> Result<Uplo, isize> {
    let Some(u) = uplo else { return Err(1) };
    bad!(n < 0, 2);
    bad!(lda < n.max(1), 5);
    bad!(incx == 0, 7);
    bad!(incy == 0, 10);
    Ok(u)
}

/// SBMV / HBMV.
pub(crate) fn check_sbmv(
    uplo: Option<Uplo>,
    n: isize,
    k: isize,
    lda: isize,
    incx: isize,
    incy: isize,
) -> Result<Uplo, isize> {
    let Some(u) = uplo else { return Err(1) };
    bad!(n < 0, 2);
    bad!(k < 0, 3);
    bad!(lda < k + 1, 6);
    bad!(incx == 0, 8);
    bad!(incy == 0, 11);
    Ok(u)
}

/// SPMV / HPMV.
pub(crate) fn check_spmv(uplo: Option<Uplo>, n: isize, incx: isize, incy: isize) -> Result<Uplo, isize> {
    let Some(u) = uplo else { return Err(1) };
    bad!(n < 0, 2);
    bad!(incx == 0, 6);
    bad!(incy == 0, 9);
    Ok(u)
}

type TriOpts = (Uplo, Trans, Diag);

fn check_tri_opts(uplo: Option<Uplo>, trans: Option<Trans>, diag: Option<Diag>) -> Result<TriOpts, isize> {
    let Some(u) = uplo else { return Err(1) };
    let Some(t) = trans else { return Err(2) };
    let Some(d) = diag else { return Err(3) };
    Ok((u, t, d))
}

/// TRMV / TRSV.
pub(crate) fn check_trmv(
    uplo: Option<Uplo>,
    trans: Option<Trans>,
    diag: Option<Diag>,
    n: isize,
    lda: isize,
    incx: isize,
) -> Result<TriOpts, isize> {
    let o = check_tri_opts(uplo, trans, diag)?;
    bad!(n < 0, 4);
    bad!(lda < n.max(1), 6);
    bad!(incx == 0, 8);
    Ok(o)
}

/// TBMV / TBSV.
#[allow(clippy::too_many_arguments)]
pub(crate) fn check_tbmv(
    uplo: Option<Uplo>,
    trans: Option<Trans>,
    diag: Option<Diag>,
    n: isize,
    k: isize,
    lda: isize,
    incx: isize,
) -> Result<TriOpts, isize> {
    let o = check_tri_opts(uplo, trans, diag)?;
    bad!(n < 0, 4);
    bad!(k < 0, 5);
    bad!(lda < k + 1, 7);
    bad!(incx == 0, 9);
    Ok(o)
}

/// TPMV / TPSV.
pub(crate) fn check_tpmv(
    uplo: Option<Uplo>,
    trans: Option<Trans>,
    diag: Option<Diag>,
    n: isize,
    incx: isize,
) -> Result<TriOpts, isize> {
    let o = check_tri_opts(uplo, trans, diag)?;
    bad!(n < 0, 4);
    bad!(incx == 0, 7);
    Ok(o)
}

/// GER / GERU / GERC.
pub(crate) fn check_ger(m: isize, n: isize, incx: isize, incy: isize, lda: isize) -> Result<(), isize> {
    bad!(m < 0, 1);
    bad!(n < 0, 2);
    bad!(incx == 0, 5);
    bad!(incy == 0, 7);
    bad!(lda < m.max(1), 9);
    Ok(())
}

/// SYR / HER.
pub(crate) fn check_syr(uplo: Option<Uplo>, n: isize, incx: isize, lda: isize) -> Result<Uplo, isize> {
    let Some(u) = uplo else { return Err(1) };
    bad!(n < 0, 2);
    bad!(incx == 0, 5);
    bad!(lda < n.max(1), 7);
    Ok(u)
}

/// SPR / HPR.
pub(crate) fn check_spr(uplo: Option<Uplo>, n: isize, incx: isize) -> Result<Uplo, isize> {
    let Some(u) = uplo else { return Err(1) };
    bad!(n < 0, 2);
    bad!(incx == 0, 5);
    Ok(u)
}

/// SYR2 / HER2.
pub(crate) fn check_syr2(uplo: Option<Uplo>, n: isize, incx: isize, incy: isize, lda: isize) -> Result<Uplo, isize> {
    let Some(u) = uplo else { return Err(1) };
    bad!(n < 0, 2);
    bad!(incx == 0, 5);
    bad!(incy == 0, 7);
    bad!(lda < n.max(1), 9);
    Ok(u)
}

/// SPR2 / HPR2.
pub(crate) fn check_spr2(uplo: Option<Uplo>, n: isize, incx: isize, incy: isize) -> Result<Uplo, isize> {
    let Some(u) = uplo else { return Err(1) };
    bad!(n < 0, 2);
    bad!(incx == 0, 5);
    bad!(incy == 0, 7);
    Ok(u)
}

// ---------------------------------------------------------------------------------------
// Validated calls: quick returns, views, planner. Sizes are checked (non-negative).

/// The operation the GPU kernels take for a `(trans, conj)` pair; conj without trans (a
/// row-major CBLAS call) is not one of them and stays on the CPU.
fn gpu_trans(trans: bool, conj: bool) -> Trans {
    match (trans, conj) {
        (false, _) => Trans::No,
        (true, false) => Trans::Trans,
        (true, true) => Trans::ConjTrans,
    }
}

/// # Safety
/// Arguments validated by [`check_gemv`]; pointers as in reference BLAS.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn run_gemv<T: Scalar>(
    (trans, conj): (bool, bool),
    m: isize,
    n: isize,
    alpha: T,
    a: *const T,
    lda: isize,
    x: *const T,
    incx: isize,
    beta: T,
    y: *mut T,
    incy: isize,
) {
    if m == 0 || n == 0 || (alpha.is_zero() && beta.is_one()) {
        return;
    }
    let shape = || format!("trans={trans} conj={conj} m={m} n={n} lda={lda} incx={incx} incy={incy}");
    let ops = [a as *const c_void, x as *const c_void, y as *const c_void];
    let t = gpu_trans(trans, conj);
    let dev = |ex: &_| {
        let (al, be) = (In::Host(alpha), In::Host(beta));
        gpu::gemv::gemv::<T>(ex, t, m as i64, n as i64, al, DMat::of(a, lda), DVec::of(x, incx), be, DVec::of(y, incy))
    };
    let vnd = |ex: &_| {
        let (ad, xd, yd) = (DMat::of(a, lda), DVec::of(x, incx), DVec::of(y, incy));
        vendor::gemv::<T>(ex, t, m as i64, n as i64, alpha, ad, xd, beta, yd)
    };
    // Row-major CBLAS calls conjugate without transposing (trans=false, conj=true): CPU only.
    if (trans || !conj) && plan::on_gpu(T::PREFIX, "gemv", shape, &ops, dev, vnd).is_some() {
        return;
    }
    let (m, n) = (m as usize, n as usize);
    let (lx, ly) = if trans { (m, n) } else { (n, m) };
    let av = MatRef::col_major(a, m, n, lda as usize);
    let (xv, yv) = (VecRef::from_blas(x, lx, incx), VecMut::from_blas(y, ly, incy));
    plan::run::<T, _>(
        "gemv",
        || format!("trans={trans} conj={conj} m={m} n={n} lda={lda} incx={incx} incy={incy}"),
        || eng::gemv(trans, conj, alpha, av, xv, beta, yv),
    );
}

/// # Safety
/// Arguments validated by [`check_gbmv`]; pointers as in reference BLAS.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn run_gbmv<T: Scalar>(
    (trans, conj): (bool, bool),
    m: isize,
    n: isize,
    kl: isize,
    ku: isize,
    alpha: T,
    a: *const T,
    lda: isize,
    x: *const T,
    incx: isize,
    beta: T,
    y: *mut T,
    incy: isize,
) {
    if m == 0 || n == 0 || (alpha.is_zero() && beta.is_one()) {
        return;
    }
    let (m, n, kl, ku) = (m as usize, n as usize, kl as usize, ku as usize);
    let (lx, ly) = if trans { (m, n) } else { (n, m) };
    let (xv, yv) = (VecRef::from_blas(x, lx, incx), VecMut::from_blas(y, ly, incy));
    plan::run::<T, _>(
        "gbmv",
        || format!("trans={trans} conj={conj} m={m} n={n} kl={kl} ku={ku} lda={lda} incx={incx} incy={incy}"),
        || eng::gbmv(trans, conj, m, n, kl, ku, alpha, a, lda as usize, xv, beta, yv),
    );
}

/// Where a symmetric/Hermitian/triangular operand lives.
#[derive(Clone, Copy)]
pub(crate) enum Storage<T> {
    Full { a: *const T, lda: isize },
    Packed { ap: *const T },
    Band { a: *const T, k: isize, lda: isize },
}

/// SYMV/HEMV/SPMV/HPMV/SBMV/HBMV. `conj`: use conj(A) (row-major Hermitian calls).
///
/// # Safety
/// Arguments validated by the matching check; pointers as in reference BLAS.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn run_symv<T: Scalar>(
    base: &'static str,
    herm: bool,
    conj: bool,
    uplo: Uplo,
    n: isize,
    alpha: T,
    a: Storage<T>,
    x: *const T,
    incx: isize,
    beta: T,
    y: *mut T,
    incy: isize,
) {
    if n == 0 || (alpha.is_zero() && beta.is_one()) {
        return;
    }
    let n = n as usize;
    let upper = uplo == Uplo::Upper;
    let (xv, yv) = (VecRef::from_blas(x, n, incx), VecMut::from_blas(y, n, incy));
    let shape = || format!("uplo={uplo:?} conj={conj} n={n} incx={incx} incy={incy}");
    match a {
        Storage::Full { a, lda } => plan::run::<T, _>(base, shape, || {
            eng::symv(upper, herm, conj, alpha, MatRef::col_major(a, n, n, lda as usize), xv, beta, yv)
        }),
        Storage::Packed { ap } => {
            plan::run::<T, _>(base, shape, || eng::spmv(upper, herm, conj, n, alpha, ap, xv, beta, yv))
        }
        Storage::Band { a, k, lda } => plan::run::<T, _>(base, shape, || {
            eng::sbmv(upper, herm, conj, n, k as usize, alpha, a, lda as usize, xv, beta, yv)
        }),
    }
}

/// TRMV/TRSV/TPMV/TPSV/TBMV/TBSV.
///
/// # Safety
/// Arguments validated by the matching check; pointers as in reference BLAS.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn run_tri<T: Scalar>(
    base: &'static str,
    solve: bool,
    uplo: Uplo,
    (trans, conj): (bool, bool),
    diag: Diag,
    n: isize,
    a: Storage<T>,
    x: *mut T,
    incx: isize,
) {
    if n == 0 {
        return;
    }
    if let (Storage::Full { a, lda }, false, false) = (a, solve, conj && !trans) {
        let shape = || format!("uplo={uplo:?} trans={trans} conj={conj} diag={diag:?} n={n} incx={incx}");
        let t = gpu_trans(trans, conj);
        let ops = [a as *const c_void, x as *const c_void];
        let (ad, xd) = (DMat::of(a, lda), DVec::of(x, incx));
        let dev = |ex: &_| gpu::trmv::trmv::<T>(ex, uplo, t, diag, n as i64, ad, xd);
        let vnd = |ex: &_| vendor::trmv::<T>(ex, uplo, t, diag, n as i64, ad, xd);
        if plan::on_gpu(T::PREFIX, base, shape, &ops, dev, vnd).is_some() {
            return;
        }
    }
    let n = n as usize;
    let (upper, unit) = (uplo == Uplo::Upper, diag == Diag::Unit);
    let xv = VecMut::from_blas(x, n, incx);
    let shape = || format!("uplo={uplo:?} trans={trans} conj={conj} diag={diag:?} n={n} incx={incx}");
    plan::run::<T, _>(base, shape, || match (a, solve) {
        (Storage::Full { a, lda }, false) => {
            eng::trmv(upper, trans, conj, unit, MatRef::col_major(a, n, n, lda as usize), xv)
        }
        (Storage::Full { a, lda }, true) => {
            eng::trsv(upper, trans, conj, unit, MatRef::col_major(a, n, n, lda as usize), xv)
        }
        (Storage::Packed { ap }, false) => eng::tpmv(upper, trans, conj, unit, n, ap, xv),
        (Storage::Packed { ap }, true) => eng::tpsv(upper, trans, conj, unit, n, ap, xv),
        (Storage::Band { a, k, lda }, false) => eng::tbmv(upper, trans, conj, unit, n, k as usize, a, lda as usize, xv),
        (Storage::Band { a, k, lda }, true) => eng::tbsv(upper, trans, conj, unit, n, k as usize, a, lda as usize, xv),
    });
}

/// GER/GERU/GERC: A := alpha*op(x)*op(y)^T + A.
///
/// # Safety
/// Arguments validated by [`check_ger`]; pointers as in reference BLAS.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn run_ger<T: Scalar>(
    base: &'static str,
    m: isize,
    n: isize,
    alpha: T,
    x: *const T,
    incx: isize,
    conj_x: bool,
    y: *const T,
    incy: isize,
    conj_y: bool,
    a: *mut T,
    lda: isize,
) {
    if m == 0 || n == 0 || alpha.is_zero() {
        return;
    }
    if !conj_x {
        let shape = || format!("m={m} n={n} incx={incx} incy={incy} lda={lda} conj_x={conj_x} conj_y={conj_y}");
        let ops = [a as *const c_void, x as *const c_void, y as *const c_void];
        let (xd, yd, ad) = (DVec::of(x, incx), DVec::of(y, incy), DMat::of(a, lda));
        let dev = |ex: &_| gpu::gemv::ger::<T>(ex, m as i64, n as i64, In::Host(alpha), xd, yd, ad, conj_y);
        let vnd = |ex: &_| vendor::ger::<T>(ex, m as i64, n as i64, alpha, xd, yd, ad, conj_y);
        if plan::on_gpu(T::PREFIX, base, shape, &ops, dev, vnd).is_some() {
            return;
        }
    }
    let (m, n) = (m as usize, n as usize);
    let (xv, yv) = (VecRef::from_blas(x, m, incx), VecRef::from_blas(y, n, incy));
    let av = MatMut::col_major(a, m, n, lda as usize);
    plan::run::<T, _>(
        base,
        || format!("m={m} n={n} incx={incx} incy={incy} lda={lda} conj_x={conj_x} conj_y={conj_y}"),
        || eng::ger(alpha, xv, conj_x, yv, conj_y, av),
    );
}

/// Where the triangle a rank update writes lives.
#[derive(Clone, Copy)]
pub(crate) enum RankStorage<T> {
    Full { a: *mut T, lda: isize },
    Packed { ap: *mut T },
}

/// SYR/HER/SPR/HPR (`y == None`) and SYR2/HER2/SPR2/HPR2. `conj`: the vectors are used
/// conjugated (row-major Hermitian calls).
///
/// # Safety
/// Arguments validated by the matching check; pointers as in reference BLAS.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn run_syr<T: Scalar>(
    base: &'static str,
    herm: bool,
    uplo: Uplo,
    n: isize,
    alpha: T,
    x: *const T,
    incx: isize,
    y: Option<(*const T, isize)>,
    conj: bool,
    a: RankStorage<T>,
) {
    if n == 0 || alpha.is_zero() {
        return;
    }
    let n = n as usize;
    let upper = uplo == Uplo::Upper;
    let xv = VecRef::from_blas(x, n, incx);
    let yv = y.map(|(y, incy)| VecRef::from_blas(y, n, incy));
    let shape = || format!("uplo={uplo:?} n={n} incx={incx} conj={conj}");
    plan::run::<T, _>(base, shape, || match (a, yv) {
        (RankStorage::Full { a, lda }, None) => {
            eng::syr(upper, herm, alpha, xv, conj, MatMut::col_major(a, n, n, lda as usize))
        }
        (RankStorage::Full { a, lda }, Some(yv)) => {
            eng::syr2(upper, herm, alpha, xv, yv, conj, MatMut::col_major(a, n, n, lda as usize))
        }
        (RankStorage::Packed { ap }, None) => eng::spr(upper, herm, n, alpha, xv, conj, ap),
        (RankStorage::Packed { ap }, Some(yv)) => eng::spr2(upper, herm, n, alpha, xv, yv, conj, ap),
    });
}

// ---------------------------------------------------------------------------------------
// Fortran wrappers.

/// `?gemv`.
///
/// # Safety
/// Pointers as in reference BLAS.
#[allow(clippy::too_many_arguments)]
pub unsafe fn gemv<T: Scalar, I: FInt>(
    trans: *const c_char,
    m: *const I,
    n: *const I,
    alpha: *const T,
    a: *const T,
    lda: *const I,
    x: *const T,
    incx: *const I,
    beta: *const T,
    y: *mut T,
    incy: *const I,
) {
    let (m, n, lda, incx, incy) = (I::read(m), I::read(n), I::read(lda), I::read(incx), I::read(incy));
    match check_gemv(chars::trans(trans), m, n, lda, incx, incy) {
        Err(info) => report::<I>(&name::<T>("gemv"), info),
        Ok(t) => run_gemv(op(t), m, n, *alpha, a, lda, x, incx, *beta, y, incy),
    }
}

/// `?gbmv`.
///
/// # Safety
/// Pointers as in reference BLAS.
#[allow(clippy::too_many_arguments)]
pub unsafe fn gbmv<T: Scalar, I: FInt>(
    trans: *const c_char,
    m: *const I,
    n: *const I,
    kl: *const I,
    ku: *const I,
    alpha: *const T,
    a: *const T,
    lda: *const I,
    x: *const T,
    incx: *const I,
    beta: *const T,
    y: *mut T,
    incy: *const I,
) {
    let (m, n, kl, ku) = (I::read(m), I::read(n), I::read(kl), I::read(ku));
    let (lda, incx, incy) = (I::read(lda), I::read(incx), I::read(incy));
    match check_gbmv(chars::trans(trans), m, n, kl, ku, lda, incx, incy) {
        Err(info) => report::<I>(&name::<T>("gbmv"), info),
        Ok(t) => run_gbmv(op(t), m, n, kl, ku, *alpha, a, lda, x, incx, *beta, y, incy),
    }
}

/// `?symv` / `?hemv` (`herm`).
///
/// # Safety
/// Pointers as in reference BLAS.
#[allow(clippy::too_many_arguments)]
pub unsafe fn symv<T: Scalar, I: FInt>(
    base: &'static str,
    herm: bool,
    uplo: *const c_char,
    n: *const I,
    alpha: *const T,
    a: *const T,
    lda: *const I,
    x: *const T,
    incx: *const I,
    beta: *const T,
    y: *mut T,
    incy: *const I,
) {
    let (n, lda, incx, incy) = (I::read(n), I::read(lda), I::read(incx), I::read(incy));
    match check_symv(chars::uplo(uplo), n, lda, incx, incy) {
        Err(info) => report::<I>(&name::<T>(base), info),
        Ok(u) => run_symv(base, herm, false, u, n, *alpha, Storage::Full { a, lda }, x, incx, *beta, y, incy),
    }
}

/// `?sbmv` / `?hbmv` (`herm`).
///
/// # Safety
/// Pointers as in reference BLAS.
#[allow(clippy::too_many_arguments)]
pub unsafe fn sbmv<T: Scalar, I: FInt>(
    base: &'static str,
    herm: bool,
    uplo: *const c_char,
    n: *const I,
    k: *const I,
    alpha: *const T,
    a: *const T,
    lda: *const I,
    x: *const T,
    incx: *const I,
    beta: *const T,
    y: *mut T,
    incy: *const I,
) {
    let (n, k, lda, incx, incy) = (I::read(n), I::read(k), I::read(lda), I::read(incx), I::read(incy));
    match check_sbmv(chars::uplo(uplo), n, k, lda, incx, incy) {
        Err(info) => report::<I>(&name::<T>(base), info),
        Ok(u) => run_symv(base, herm, false, u, n, *alpha, Storage::Band { a, k, lda }, x, incx, *beta, y, incy),
    }
}

/// `?spmv` / `?hpmv` (`herm`).
///
/// # Safety
/// Pointers as in reference BLAS.
#[allow(clippy::too_many_arguments)]
pub unsafe fn spmv<T: Scalar, I: FInt>(
    base: &'static str,
    herm: bool,
    uplo: *const c_char,
    n: *const I,
    alpha: *const T,
    ap: *const T,
    x: *const T,
    incx: *const I,
    beta: *const T,
    y: *mut T,
    incy: *const I,
) {
    let (n, incx, incy) = (I::read(n), I::read(incx), I::read(incy));
    match check_spmv(chars::uplo(uplo), n, incx, incy) {
        Err(info) => report::<I>(&name::<T>(base), info),
        Ok(u) => run_symv(base, herm, false, u, n, *alpha, Storage::Packed { ap }, x, incx, *beta, y, incy),
    }
}

/// `?trmv` / `?trsv` (`solve`).
///
/// # Safety
/// Pointers as in reference BLAS.
#[allow(clippy::too_many_arguments)]
pub unsafe fn trmv<T: Scalar, I: FInt>(
    base: &'static str,
    solve: bool,
    uplo: *const c_char,
    trans: *const c_char,
    diag: *const c_char,
    n: *const I,
    a: *const T,
    lda: *const I,
    x: *mut T,
    incx: *const I,
) {
    let (n, lda, incx) = (I::read(n), I::read(lda), I::read(incx));
    match check_trmv(chars::uplo(uplo), chars::trans(trans), chars::diag(diag), n, lda, incx) {
        Err(info) => report::<I>(&name::<T>(base), info),
        Ok((u, t, d)) => run_tri(base, solve, u, op(t), d, n, Storage::Full { a, lda }, x, incx),
    }
}

/// `?tbmv` / `?tbsv` (`solve`).
///
/// # Safety
/// Pointers as in reference BLAS.
#[allow(clippy::too_many_arguments)]
pub unsafe fn tbmv<T: Scalar, I: FInt>(
    base: &'static str,
    solve: bool,
    uplo: *const c_char,
    trans: *const c_char,
    diag: *const c_char,
    n: *const I,
    k: *const I,
    a: *const T,
    lda: *const I,
    x: *mut T,
    incx: *const I,
) {
    let (n, k, lda, incx) = (I::read(n), I::read(k), I::read(lda), I::read(incx));
    match check_tbmv(chars::uplo(uplo), chars::trans(trans), chars::diag(diag), n, k, lda, incx) {
        Err(info) => report::<I>(&name::<T>(base), info),
        Ok((u, t, d)) => run_tri(base, solve, u, op(t), d, n, Storage::Band { a, k, lda }, x, incx),
    }
}

/// `?tpmv` / `?tpsv` (`solve`).
///
/// # Safety
/// Pointers as in reference BLAS.
#[allow(clippy::too_many_arguments)]
pub unsafe fn tpmv<T: Scalar, I: FInt>(
    base: &'static str,
    solve: bool,
    uplo: *const c_char,
    trans: *const c_char,
    diag: *const c_char,
    n: *const I,
    ap: *const T,
    x: *mut T,
    incx: *const I,
) {
    let (n, incx) = (I::read(n), I::read(incx));
    match check_tpmv(chars::uplo(uplo), chars::trans(trans), chars::diag(diag), n, incx) {
        Err(info) => report::<I>(&name::<T>(base), info),
        Ok((u, t, d)) => run_tri(base, solve, u, op(t), d, n, Storage::Packed { ap }, x, incx),
    }
}

/// `?ger` / `?geru` / `?gerc` (`conj_y`).
///
/// # Safety
/// Pointers as in reference BLAS.
#[allow(clippy::too_many_arguments)]
pub unsafe fn ger<T: Scalar, I: FInt>(
    base: &'static str,
    conj_y: bool,
    m: *const I,
    n: *const I,
    alpha: *const T,
    x: *const T,
    incx: *const I,
    y: *const T,
    incy: *const I,
    a: *mut T,
    lda: *const I,
) {
    let (m, n, incx, incy, lda) = (I::read(m), I::read(n), I::read(incx), I::read(incy), I::read(lda));
    match check_ger(m, n, incx, incy, lda) {
        Err(info) => report::<I>(&name::<T>(base), info),
        Ok(()) => run_ger(base, m, n, *alpha, x, incx, false, y, incy, conj_y, a, lda),
    }
}

/// `?syr` / `?her` (`herm`; alpha is real for `her`, passed here as a scalar).
///
/// # Safety
/// Pointers as in reference BLAS.
#[allow(clippy::too_many_arguments)]
pub unsafe fn syr<T: Scalar, I: FInt>(
    base: &'static str,
    herm: bool,
    uplo: *const c_char,
    n: *const I,
    alpha: T,
    x: *const T,
    incx: *const I,
    a: *mut T,
    lda: *const I,
) {
    let (n, incx, lda) = (I::read(n), I::read(incx), I::read(lda));
    match check_syr(chars::uplo(uplo), n, incx, lda) {
        Err(info) => report::<I>(&name::<T>(base), info),
        Ok(u) => run_syr(base, herm, u, n, alpha, x, incx, None, false, RankStorage::Full { a, lda }),
    }
}

/// `?spr` / `?hpr` (`herm`).
///
/// # Safety
/// Pointers as in reference BLAS.
#[allow(clippy::too_many_arguments)]
pub unsafe fn spr<T: Scalar, I: FInt>(
    base: &'static str,
    herm: bool,
    uplo: *const c_char,
    n: *const I,
    alpha: T,
    x: *const T,
    incx: *const I,
    ap: *mut T,
) {
    let (n, incx) = (I::read(n), I::read(incx));
    match check_spr(chars::uplo(uplo), n, incx) {
        Err(info) => report::<I>(&name::<T>(base), info),
        Ok(u) => run_syr(base, herm, u, n, alpha, x, incx, None, false, RankStorage::Packed { ap }),
    }
}

/// `?syr2` / `?her2` (`herm`).
///
/// # Safety
/// Pointers as in reference BLAS.
#[allow(clippy::too_many_arguments)]
pub unsafe fn syr2<T: Scalar, I: FInt>(
    base: &'static str,
    herm: bool,
    uplo: *const c_char,
    n: *const I,
    alpha: *const T,
    x: *const T,
    incx: *const I,
    y: *const T,
    incy: *const I,
    a: *mut T,
    lda: *const I,
) {
    let (n, incx, incy, lda) = (I::read(n), I::read(incx), I::read(incy), I::read(lda));
    match check_syr2(chars::uplo(uplo), n, incx, incy, lda) {
        Err(info) => report::<I>(&name::<T>(base), info),
        Ok(u) => run_syr(base, herm, u, n, *alpha, x, incx, Some((y, incy)), false, RankStorage::Full { a, lda }),
    }
}

/// `?spr2` / `?hpr2` (`herm`).
///
/// # Safety
/// Pointers as in reference BLAS.
#[allow(clippy::too_many_arguments)]
pub unsafe fn spr2<T: Scalar, I: FInt>(
    base: &'static str,
    herm: bool,
    uplo: *const c_char,
    n: *const I,
    alpha: *const T,
    x: *const T,
    incx: *const I,
    y: *const T,
    incy: *const I,
    ap: *mut T,
) {
    let (n, incx, incy) = (I::read(n), I::read(incx), I::read(incy));
    match check_spr2(chars::uplo(uplo), n, incx, incy) {
        Err(info) => report::<I>(&name::<T>(base), info),
        Ok(u) => run_syr(base, herm, u, n, *alpha, x, incx, Some((y, incy)), false, RankStorage::Packed { ap }),
    }
}

// ---------------------------------------------------------------------------------------
// Exported symbols. `$I`/`$sfx`: integer width; `$T`/`$R`/`$p`: element type, its real
// type and the name prefix.

/// Routines every precision has.
macro_rules! l2_all {
    ($I:ty, $sfx:literal, $T:ty, $p:literal) => {
        $crate::export!(concat!($p, "gemv", $sfx), fn(trans: *const c_char, m: *const $I, n: *const $I, alpha: *const $T, a: *const $T, lda: *const $I, x: *const $T, incx: *const $I, beta: *const $T, y: *mut $T, incy: *const $I)
            => gemv::<$T, $I>(trans, m, n, alpha, a, lda, x, incx, beta, y, incy));
        $crate::export!(concat!($p, "gbmv", $sfx), fn(trans: *const c_char, m: *const $I, n: *const $I, kl: *const $I, ku: *const $I, alpha: *const $T, a: *const $T, lda: *const $I, x: *const $T, incx: *const $I, beta: *const $T, y: *mut $T, incy: *const $I)
            => gbmv::<$T, $I>(trans, m, n, kl, ku, alpha, a, lda, x, incx, beta, y, incy));
        $crate::export!(concat!($p, "trmv", $sfx), fn(uplo: *const c_char, trans: *const c_char, diag: *const c_char, n: *const $I, a: *const $T, lda: *const $I, x: *mut $T, incx: *const $I)
            => trmv::<$T, $I>("trmv", false, uplo, trans, diag, n, a, lda, x, incx));
        $crate::export!(concat!($p, "trsv", $sfx), fn(uplo: *const c_char, trans: *const c_char, diag: *const c_char, n: *const $I, a: *const $T, lda: *const $I, x: *mut $T, incx: *const $I)
            => trmv::<$T, $I>("trsv", true, uplo, trans, diag, n, a, lda, x, incx));
        $crate::export!(concat!($p, "tbmv", $sfx), fn(uplo: *const c_char, trans: *const c_char, diag: *const c_char, n: *const $I, k: *const $I, a: *const $T, lda: *const $I, x: *mut $T, incx: *const $I)
            => tbmv::<$T, $I>("tbmv", false, uplo, trans, diag, n, k, a, lda, x, incx));
        $crate::export!(concat!($p, "tbsv", $sfx), fn(uplo: *const c_char, trans: *const c_char, diag: *const c_char, n: *const $I, k: *const $I, a: *const $T, lda: *const $I, x: *mut $T, incx: *const $I)
            => tbmv::<$T, $I>("tbsv", true, uplo, trans, diag, n, k, a, lda, x, incx));
        $crate::export!(concat!($p, "tpmv", $sfx), fn(uplo: *const c_char, trans: *const c_char, diag: *const c_char, n: *const $I, ap: *const $T, x: *mut $T, incx: *const $I)
            => tpmv::<$T, $I>("tpmv", false, uplo, trans, diag, n, ap, x, incx));
        $crate::export!(concat!($p, "tpsv", $sfx), fn(uplo: *const c_char, trans: *const c_char, diag: *const c_char, n: *const $I, ap: *const $T, x: *mut $T, incx: *const $I)
            => tpmv::<$T, $I>("tpsv", true, uplo, trans, diag, n, ap, x, incx));
    };
}

/// Real-only routines (symmetric forms and GER).
macro_rules! l2_real {
    ($I:ty, $sfx:literal, $T:ty, $p:literal) => {
        $crate::export!(concat!($p, "symv", $sfx), fn(uplo: *const c_char, n: *const $I, alpha: *const $T, a: *const $T, lda: *const $I, x: *const $T, incx: *const $I, beta: *const $T, y: *mut $T, incy: *const $I)
            => symv::<$T, $I>("symv", false, uplo, n, alpha, a, lda, x, incx, beta, y, incy));
        $crate::export!(concat!($p, "sbmv", $sfx), fn(uplo: *const c_char, n: *const $I, k: *const $I, alpha: *const $T, a: *const $T, lda: *const $I, x: *const $T, incx: *const $I, beta: *const $T, y: *mut $T, incy: *const $I)
            => sbmv::<$T, $I>("sbmv", false, uplo, n, k, alpha, a, lda, x, incx, beta, y, incy));
        $crate::export!(concat!($p, "spmv", $sfx), fn(uplo: *const c_char, n: *const $I, alpha: *const $T, ap: *const $T, x: *const $T, incx: *const $I, beta: *const $T, y: *mut $T, incy: *const $I)
            => spmv::<$T, $I>("spmv", false, uplo, n, alpha, ap, x, incx, beta, y, incy));
        $crate::export!(concat!($p, "ger", $sfx), fn(m: *const $I, n: *const $I, alpha: *const $T, x: *const $T, incx: *const $I, y: *const $T, incy: *const $I, a: *mut $T, lda: *const $I)
            => ger::<$T, $I>("ger", false, m, n, alpha, x, incx, y, incy, a, lda));
        $crate::export!(concat!($p, "syr", $sfx), fn(uplo: *const c_char, n: *const $I, alpha: *const $T, x: *const $T, incx: *const $I, a: *mut $T, lda: *const $I)
            => syr::<$T, $I>("syr", false, uplo, n, *alpha, x, incx, a, lda));
        $crate::export!(concat!($p, "spr", $sfx), fn(uplo: *const c_char, n: *const $I, alpha: *const $T, x: *const $T, incx: *const $I, ap: *mut $T)
            => spr::<$T, $I>("spr", false, uplo, n, *alpha, x, incx, ap));
        $crate::export!(concat!($p, "syr2", $sfx), fn(uplo: *const c_char, n: *const $I, alpha: *const $T, x: *const $T, incx: *const $I, y: *const $T, incy: *const $I, a: *mut $T, lda: *const $I)
            => syr2::<$T, $I>("syr2", false, uplo, n, alpha, x, incx, y, incy, a, lda));
        $crate::export!(concat!($p, "spr2", $sfx), fn(uplo: *const c_char, n: *const $I, alpha: *const $T, x: *const $T, incx: *const $I, y: *const $T, incy: *const $I, ap: *mut $T)
            => spr2::<$T, $I>("spr2", false, uplo, n, alpha, x, incx, y, incy, ap));
    };
}

/// Complex-only routines (Hermitian forms, GERU/GERC).
macro_rules! l2_complex {
    ($I:ty, $sfx:literal, $T:ty, $R:ty, $p:literal) => {
        $crate::export!(concat!($p, "hemv", $sfx), fn(uplo: *const c_char, n: *const $I, alpha: *const $T, a: *const $T, lda: *const $I, x: *const $T, incx: *const $I, beta: *const $T, y: *mut $T, incy: *const $I)
            => symv::<$T, $I>("hemv", true, uplo, n, alpha, a, lda, x, incx, beta, y, incy));
        $crate::export!(concat!($p, "hbmv", $sfx), fn(uplo: *const c_char, n: *const $I, k: *const $I, alpha: *const $T, a: *const $T, lda: *const $I, x: *const $T, incx: *const $I, beta: *const $T, y: *mut $T, incy: *const $I)
            => sbmv::<$T, $I>("hbmv", true, uplo, n, k, alpha, a, lda, x, incx, beta, y, incy));
        $crate::export!(concat!($p, "hpmv", $sfx), fn(uplo: *const c_char, n: *const $I, alpha: *const $T, ap: *const $T, x: *const $T, incx: *const $I, beta: *const $T, y: *mut $T, incy: *const $I)
            => spmv::<$T, $I>("hpmv", true, uplo, n, alpha, ap, x, incx, beta, y, incy));
        $crate::export!(concat!($p, "geru", $sfx), fn(m: *const $I, n: *const $I, alpha: *const $T, x: *const $T, incx: *const $I, y: *const $T, incy: *const $I, a: *mut $T, lda: *const $I)
            => ger::<$T, $I>("geru", false, m, n, alpha, x, incx, y, incy, a, lda));
        $crate::export!(concat!($p, "gerc", $sfx), fn(m: *const $I, n: *const $I, alpha: *const $T, x: *const $T, incx: *const $I, y: *const $T, incy: *const $I, a: *mut $T, lda: *const $I)
            => ger::<$T, $I>("gerc", true, m, n, alpha, x, incx, y, incy, a, lda));
        $crate::export!(concat!($p, "her", $sfx), fn(uplo: *const c_char, n: *const $I, alpha: *const $R, x: *const $T, incx: *const $I, a: *mut $T, lda: *const $I)
            => syr::<$T, $I>("her", true, uplo, n, <$T>::from_real(*alpha), x, incx, a, lda));
        $crate::export!(concat!($p, "hpr", $sfx), fn(uplo: *const c_char, n: *const $I, alpha: *const $R, x: *const $T, incx: *const $I, ap: *mut $T)
            => spr::<$T, $I>("hpr", true, uplo, n, <$T>::from_real(*alpha), x, incx, ap));
        $crate::export!(concat!($p, "her2", $sfx), fn(uplo: *const c_char, n: *const $I, alpha: *const $T, x: *const $T, incx: *const $I, y: *const $T, incy: *const $I, a: *mut $T, lda: *const $I)
            => syr2::<$T, $I>("her2", true, uplo, n, alpha, x, incx, y, incy, a, lda));
        $crate::export!(concat!($p, "hpr2", $sfx), fn(uplo: *const c_char, n: *const $I, alpha: *const $T, x: *const $T, incx: *const $I, y: *const $T, incy: *const $I, ap: *mut $T)
            => spr2::<$T, $I>("hpr2", true, uplo, n, alpha, x, incx, y, incy, ap));
    };
}

macro_rules! level2_exports {
    ($I:ty, $sfx:literal) => {
        l2_all!($I, $sfx, f32, "s");
        l2_all!($I, $sfx, f64, "d");
        l2_all!($I, $sfx, C32, "c");
        l2_all!($I, $sfx, C64, "z");
        l2_real!($I, $sfx, f32, "s");
        l2_real!($I, $sfx, f64, "d");
        l2_complex!($I, $sfx, C32, f32, "c");
        l2_complex!($I, $sfx, C64, f64, "z");
    };
}

mod exports {
    use super::*;
    use crate::types::{C32, C64};
    level2_exports!(i32, "_");
    level2_exports!(i64, "_64_");
}
