//! CBLAS, LP64 (`cblas_name`, `int`) and ILP64 (`cblas_name64_`, `int64_t`).
//!
//! Enum arguments are taken as plain `int` (the CBLAS tests pass invalid values). Errors go to
//! `cblas_xerbla` with the numbering the reference CBLAS produces: the C wrapper's own checks
//! (layout, enum values) report their CBLAS position; everything else is checked on the
//! column-major problem a row-major call is mapped to and reported as that Fortran position
//! + 1 (the netlib CBLAS tests set `RowMajorStrg` and undo the operand swap themselves).

pub mod level1;
pub mod level2;
pub mod level3;
pub mod level3_tri;

use crate::types::{Diag, Side, Trans, Uplo};
use std::os::raw::c_int;

pub const ROW_MAJOR: c_int = 101;
pub const COL_MAJOR: c_int = 102;

/// CBLAS integer types: `c_int` for LP64, `i64` for ILP64.
pub use crate::types::FInt as CInt;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    RowMajor,
    ColMajor,
}

pub fn layout(v: c_int) -> Option<Layout> {
    match v {
        ROW_MAJOR => Some(Layout::RowMajor),
        COL_MAJOR => Some(Layout::ColMajor),
        _ => None,
    }
}
pub fn trans(v: c_int) -> Option<Trans> {
    match v {
        111 => Some(Trans::No),
        112 => Some(Trans::Trans),
        113 => Some(Trans::ConjTrans),
        _ => None,
    }
}
pub fn uplo(v: c_int) -> Option<Uplo> {
    match v {
        121 => Some(Uplo::Upper),
        122 => Some(Uplo::Lower),
        _ => None,
    }
}
pub fn diag(v: c_int) -> Option<Diag> {
    match v {
        131 => Some(Diag::NonUnit),
        132 => Some(Diag::Unit),
        _ => None,
    }
}
pub fn side(v: c_int) -> Option<Side> {
    match v {
        141 => Some(Side::Left),
        142 => Some(Side::Right),
        _ => None,
    }
}

/// Report argument `info` of `cblas_<name>`.
#[inline(never)]
#[cold]
pub fn report(name: &str, info: isize) {
    crate::abi::xerbla::cblas(name, info);
}
