//! Fortran TRMM and TRSM.

use crate::abi::fortran::util::report;
use crate::cpu::level3::tri::{self as eng, TriScalar};
use crate::hybrid::offload::l3;
use crate::plan;
use crate::plan::gemm::{offload_level3, Level3Run};
use crate::types::{chars, Diag, FInt, MatMut, MatRef, Side, Trans, Uplo};
use std::os::raw::c_char;

/// Options of a TRMM/TRSM call once validated.
#[derive(Clone, Copy, Debug)]
pub struct TriOpts {
    pub side: Side,
    pub uplo: Uplo,
    pub trans: Trans,
    pub diag: Diag,
}

/// Reference argument checks of ?TRMM/?TRSM, in order: SIDE 1, UPLO 2, TRANSA 3, DIAG 4, M 5,
/// N 6, LDA 9 (>= max(1, m) for side Left, n for Right), LDB 11 (>= max(1, m)). `None` is an
/// option that did not parse. Shared with CBLAS, which passes the column-major problem.
#[allow(clippy::too_many_arguments)]
pub fn check_trxm(
    side: Option<Side>,
    uplo: Option<Uplo>,
    trans: Option<Trans>,
    diag: Option<Diag>,
    m: isize,
    n: isize,
    lda: isize,
    ldb: isize,
) -> Result<TriOpts, isize> {
    let side = side.ok_or(1isize)?;
    let uplo = uplo.ok_or(2isize)?;
    let trans = trans.ok_or(3isize)?;
    let diag = diag.ok_or(4isize)?;
    if m < 0 {
        return Err(5);
    }
    if n < 0 {
        return Err(6);
    }
    let nrowa = if side == Side::Left { m } else { n };
    if lda < nrowa.max(1) {
        return Err(9);
    }
    if ldb < m.max(1) {
        return Err(11);
    }
    Ok(TriOpts { side, uplo, trans, diag })
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Routine {
    Trmm,
    Trsm,
}

impl Routine {
    pub fn base(self) -> &'static str {
        match self {
            Routine::Trmm => "trmm",
            Routine::Trsm => "trsm",
        }
    }
}

/// Run a validated column-major TRMM/TRSM (m, n >= 0, leading dimensions checked).
///
/// # Safety
/// Pointers valid for the checked dimensions.
#[allow(clippy::too_many_arguments)]
pub unsafe fn run<T: TriScalar>(
    routine: Routine,
    o: TriOpts,
    m: usize,
    n: usize,
    alpha: T,
    a: *const T,
    lda: usize,
    b: *mut T,
    ldb: usize,
) {
    if m == 0 || n == 0 {
        return;
    }
    let k = if o.side == Side::Left { m } else { n };
    let a = MatRef::col_major(a, k, k, lda);
    let b = MatMut::col_major(b, m, n, ldb);
    let shape = || {
        format!(
            "side={:?} uplo={:?} trans={:?} diag={:?} m={m} n={n} lda={lda} ldb={ldb}",
            o.side, o.uplo, o.trans, o.diag
        )
    };
    let call =
        l3::Call::trxm(routine == Routine::Trsm, o.side, o.uplo, o.trans, o.diag, m, n, alpha, a.ptr, lda, b.ptr, ldb);
    let Level3Run::Cpu(_watch) = offload_level3(&call, &shape, &|left| l3::finish_tri(&call, left)) else {
        return;
    };
    plan::run::<T, _>(routine.base(), shape, || match routine {
        Routine::Trmm => eng::trmm(o.side, o.uplo, o.trans, o.diag, alpha, a, b),
        Routine::Trsm => eng::trsm(o.side, o.uplo, o.trans, o.diag, alpha, a, b),
    });
}

/// `?trmm` / `?trsm` with Fortran arguments.
///
/// # Safety
/// Pointers as in reference BLAS.
#[allow(clippy::too_many_arguments)]
pub unsafe fn trxm<T: TriScalar, I: FInt>(
    routine: Routine,
    side: *const c_char,
    uplo: *const c_char,
    transa: *const c_char,
    diag: *const c_char,
    m: *const I,
    n: *const I,
    alpha: *const T,
    a: *const T,
    lda: *const I,
    b: *mut T,
    ldb: *const I,
) {
    let (m, n, lda, ldb) = (I::read(m), I::read(n), I::read(lda), I::read(ldb));
    let checked =
        check_trxm(chars::side(side), chars::uplo(uplo), chars::trans(transa), chars::diag(diag), m, n, lda, ldb);
    let o = match checked {
        Ok(o) => o,
        Err(info) => return report::<I>(&format!("{}{}", T::PREFIX, routine.base()), info),
    };
    // Quick return before alpha is read, as the reference.
    if m == 0 || n == 0 {
        return;
    }
    run(routine, o, m as usize, n as usize, *alpha, a, lda as usize, b, ldb as usize);
}

macro_rules! tri_exports {
    ($I:ty, $sfx:literal, $($name:literal, $T:ty, $r:expr;)*) => {
        $(
            $crate::export!(concat!($name, $sfx), fn(
                side: *const c_char, uplo: *const c_char, transa: *const c_char, diag: *const c_char,
                m: *const $I, n: *const $I, alpha: *const $T, a: *const $T, lda: *const $I, b: *mut $T, ldb: *const $I
            ) => trxm::<$T, $I>($r, side, uplo, transa, diag, m, n, alpha, a, lda, b, ldb));
        )*
    };
}

macro_rules! level3_tri_exports {
    ($I:ty, $sfx:literal) => {
        tri_exports!($I, $sfx,
            "strmm", f32, Routine::Trmm;
            "dtrmm", f64, Routine::Trmm;
            "ctrmm", C32, Routine::Trmm;
            "ztrmm", C64, Routine::Trmm;
            "strsm", f32, Routine::Trsm;
            "dtrsm", f64, Routine::Trsm;
            "ctrsm", C32, Routine::Trsm;
            "ztrsm", C64, Routine::Trsm;
        );
    };
}

mod exports {
    use super::*;
    use crate::types::{C32, C64};
    level3_tri_exports!(i32, "_");
    level3_tri_exports!(i64, "_64_");
}
