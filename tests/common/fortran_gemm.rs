//! hyblas's exported LP64 Fortran GEMM symbols (`sgemm_` .. `zgemm_`) by precision, for the
//! offload and GEMM-entry tests and `offloadbench` (each includes this file by path:
//! `#[path = ...] mod`).

use hyblas::types::{Scalar, C32, C64};
use std::ffi::c_char;

/// The Fortran GEMM signature with integers of type `I` (i32: LP64, i64: ILP64).
pub type Gemm<T, I> = unsafe extern "C" fn(
    *const c_char,
    *const c_char,
    *const I,
    *const I,
    *const I,
    *const T,
    *const T,
    *const I,
    *const T,
    *const I,
    *const T,
    *mut T,
    *const I,
);

extern "C" {
    pub fn sgemm_(
        ta: *const c_char,
        tb: *const c_char,
        m: *const i32,
        n: *const i32,
        k: *const i32,
        al: *const f32,
        a: *const f32,
        lda: *const i32,
        b: *const f32,
        ldb: *const i32,
        be: *const f32,
        c: *mut f32,
        ldc: *const i32,
    );
    pub fn dgemm_(
        ta: *const c_char,
        tb: *const c_char,
        m: *const i32,
        n: *const i32,
        k: *const i32,
        al: *const f64,
        a: *const f64,
        lda: *const i32,
        b: *const f64,
        ldb: *const i32,
        be: *const f64,
        c: *mut f64,
        ldc: *const i32,
    );
    pub fn cgemm_(
        ta: *const c_char,
        tb: *const c_char,
        m: *const i32,
        n: *const i32,
        k: *const i32,
        al: *const C32,
        a: *const C32,
        lda: *const i32,
        b: *const C32,
        ldb: *const i32,
        be: *const C32,
        c: *mut C32,
        ldc: *const i32,
    );
    pub fn zgemm_(
        ta: *const c_char,
        tb: *const c_char,
        m: *const i32,
        n: *const i32,
        k: *const i32,
        al: *const C64,
        a: *const C64,
        lda: *const i32,
        b: *const C64,
        ldb: *const i32,
        be: *const C64,
        c: *mut C64,
        ldc: *const i32,
    );
}

/// The LP64 Fortran GEMM of each precision.
pub trait Sym: Scalar {
    const GEMM: Gemm<Self, i32>;
}
impl Sym for f32 {
    const GEMM: Gemm<f32, i32> = sgemm_;
}
impl Sym for f64 {
    const GEMM: Gemm<f64, i32> = dgemm_;
}
impl Sym for C32 {
    const GEMM: Gemm<C32, i32> = cgemm_;
}
impl Sym for C64 {
    const GEMM: Gemm<C64, i32> = zgemm_;
}
