//! Level 3 GEMM, SYMM/HEMM, SYRK/HERK, SYR2K/HER2K through the exported C symbols: every
//! precision and ABI (Fortran LP64 `dgemm_` and ILP64 `dgemm_64_`, CBLAS `cblas_dgemm` and
//! `cblas_dgemm64_` in both layouts) against naive references written here.
//!
//! The references work on logical matrices in either storage order, so CBLAS row-major calls
//! are checked against the definition, not against the column-major mapping hyblas uses.
//! Every output element is poisoned (NaN where beta == 0) and the padding of C (ldc > rows)
//! must come back bit for bit, as must the triangle of C a rank-k update does not reference.

mod common;

use common::{poison, to_c64, tol, Rng};
use hyblas::types::{Scalar, C32, C64};
use std::os::raw::{c_char, c_int};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Abi {
    Lp64,
    Ilp64,
    Cblas,
    Cblas64,
}

impl Abi {
    fn is_cblas(self) -> bool {
        matches!(self, Abi::Cblas | Abi::Cblas64)
    }
}

/// Storage of one matrix: column-major (Fortran, CBLAS ColMajor) or row-major.
#[derive(Clone, Copy, Debug)]
struct L {
    row: bool,
    ld: usize,
}
impl L {
    fn at(self, i: usize, j: usize) -> usize {
        if self.row {
            i * self.ld + j
        } else {
            i + j * self.ld
        }
    }
    /// Elements a rows x cols matrix occupies (at least 1 so pointers are valid).
    fn len(self, rows: usize, cols: usize) -> usize {
        let outer = if self.row { rows } else { cols };
        outer.max(1) * self.ld
    }
}

const ROW: c_int = 101;
const COL: c_int = 102;

fn cb_trans(t: u8) -> c_int {
    match t {
        b'N' => 111,
        b'T' => 112,
        b'C' => 113,
        _ => -1,
    }
}
fn cb_uplo(u: u8) -> c_int {
    if u == b'U' {
        121
    } else {
        122
    }
}
fn cb_side(s: u8) -> c_int {
    if s == b'L' {
        141
    } else {
        142
    }
}

/// The routines under test, through one ABI. Complex-only routines (HEMM, HERK, HER2K) are
/// selected by `herm`; HERK's alpha/beta and HER2K's beta are passed as `re()`.
trait L3: Scalar {
    #[allow(clippy::too_many_arguments)]
    unsafe fn gemm(
        abi: Abi,
        lay: c_int,
        ta: u8,
        tb: u8,
        m: usize,
        n: usize,
        k: usize,
        alpha: Self,
        a: *const Self,
        lda: usize,
        b: *const Self,
        ldb: usize,
        beta: Self,
        c: *mut Self,
        ldc: usize,
    );
    #[allow(clippy::too_many_arguments)]
    unsafe fn symm(
        abi: Abi,
        lay: c_int,
        herm: bool,
        side: u8,
        uplo: u8,
        m: usize,
        n: usize,
        alpha: Self,
        a: *const Self,
        lda: usize,
        b: *const Self,
        ldb: usize,
        beta: Self,
        c: *mut Self,
        ldc: usize,
    );
    #[allow(clippy::too_many_arguments)]
    unsafe fn syrk(
        abi: Abi,
        lay: c_int,
        herm: bool,
        uplo: u8,
        tr: u8,
        n: usize,
        k: usize,
        alpha: Self,
        a: *const Self,
        lda: usize,
        beta: Self,
        c: *mut Self,
        ldc: usize,
    );
    #[allow(clippy::too_many_arguments)]
    unsafe fn syr2k(
        abi: Abi,
        lay: c_int,
        herm: bool,
        uplo: u8,
        tr: u8,
        n: usize,
        k: usize,
        alpha: Self,
        a: *const Self,
        lda: usize,
        b: *const Self,
        ldb: usize,
        beta: Self,
        c: *mut Self,
        ldc: usize,
    );
}

macro_rules! decl {
    ($T:ty, $R:ty, $I:ty, $C:ty, $gemm:ident, $symm:ident, $syrk:ident, $syr2k:ident, $cgemm:ident, $csymm:ident, $csyrk:ident, $csyr2k:ident) => {
        extern "C" {
            fn $gemm(
                ta: *const c_char,
                tb: *const c_char,
                m: *const $I,
                n: *const $I,
                k: *const $I,
                alpha: *const $T,
                a: *const $T,
                lda: *const $I,
                b: *const $T,
                ldb: *const $I,
                beta: *const $T,
                c: *mut $T,
                ldc: *const $I,
            );
            fn $symm(
                side: *const c_char,
                uplo: *const c_char,
                m: *const $I,
                n: *const $I,
                alpha: *const $T,
                a: *const $T,
                lda: *const $I,
                b: *const $T,
                ldb: *const $I,
                beta: *const $T,
                c: *mut $T,
                ldc: *const $I,
            );
            fn $syrk(
                uplo: *const c_char,
                tr: *const c_char,
                n: *const $I,
                k: *const $I,
                alpha: *const $R,
                a: *const $T,
                lda: *const $I,
                beta: *const $R,
                c: *mut $T,
                ldc: *const $I,
            );
            fn $syr2k(
                uplo: *const c_char,
                tr: *const c_char,
                n: *const $I,
                k: *const $I,
                alpha: *const $T,
                a: *const $T,
                lda: *const $I,
                b: *const $T,
                ldb: *const $I,
                beta: *const $R,
                c: *mut $T,
                ldc: *const $I,
            );
            fn $cgemm(
                lay: c_int,
                ta: c_int,
                tb: c_int,
                m: $C,
                n: $C,
                k: $C,
                alpha: *const $T,
                a: *const $T,
                lda: $C,
                b: *const $T,
                ldb: $C,
                beta: *const $T,
                c: *mut $T,
                ldc: $C,
            );
            fn $csymm(
                lay: c_int,
                side: c_int,
                uplo: c_int,
                m: $C,
                n: $C,
                alpha: *const $T,
                a: *const $T,
                lda: $C,
                b: *const $T,
                ldb: $C,
                beta: *const $T,
                c: *mut $T,
                ldc: $C,
            );
            fn $csyrk(
                lay: c_int,
                uplo: c_int,
                tr: c_int,
                n: $C,
                k: $C,
                alpha: *const $R,
                a: *const $T,
                lda: $C,
                beta: *const $R,
                c: *mut $T,
                ldc: $C,
            );
            fn $csyr2k(
                lay: c_int,
                uplo: c_int,
                tr: c_int,
                n: $C,
                k: $C,
                alpha: *const $T,
                a: *const $T,
                lda: $C,
                b: *const $T,
                ldb: $C,
                beta: *const $R,
                c: *mut $T,
                ldc: $C,
            );
        }
    };
}

// Real routines: the CBLAS wrappers take real scalars by value.
macro_rules! decl_real {
    ($T:ty, $I:ty, $C:ty, $gemm:ident, $symm:ident, $syrk:ident, $syr2k:ident, $cgemm:ident, $csymm:ident, $csyrk:ident, $csyr2k:ident) => {
        extern "C" {
            fn $gemm(
                ta: *const c_char,
                tb: *const c_char,
                m: *const $I,
                n: *const $I,
                k: *const $I,
                alpha: *const $T,
                a: *const $T,
                lda: *const $I,
                b: *const $T,
                ldb: *const $I,
                beta: *const $T,
                c: *mut $T,
                ldc: *const $I,
            );
            fn $symm(
                side: *const c_char,
                uplo: *const c_char,
                m: *const $I,
                n: *const $I,
                alpha: *const $T,
                a: *const $T,
                lda: *const $I,
                b: *const $T,
                ldb: *const $I,
                beta: *const $T,
                c: *mut $T,
                ldc: *const $I,
            );
            fn $syrk(
                uplo: *const c_char,
                tr: *const c_char,
                n: *const $I,
                k: *const $I,
                alpha: *const $T,
                a: *const $T,
                lda: *const $I,
                beta: *const $T,
                c: *mut $T,
                ldc: *const $I,
            );
            fn $syr2k(
                uplo: *const c_char,
                tr: *const c_char,
                n: *const $I,
                k: *const $I,
                alpha: *const $T,
                a: *const $T,
                lda: *const $I,
                b: *const $T,
                ldb: *const $I,
                beta: *const $T,
                c: *mut $T,
                ldc: *const $I,
            );
            fn $cgemm(
                lay: c_int,
                ta: c_int,
                tb: c_int,
                m: $C,
                n: $C,
                k: $C,
                alpha: $T,
                a: *const $T,
                lda: $C,
                b: *const $T,
                ldb: $C,
                beta: $T,
                c: *mut $T,
                ldc: $C,
            );
            fn $csymm(
                lay: c_int,
                side: c_int,
                uplo: c_int,
                m: $C,
                n: $C,
                alpha: $T,
                a: *const $T,
                lda: $C,
                b: *const $T,
                ldb: $C,
                beta: $T,
                c: *mut $T,
                ldc: $C,
            );
            fn $csyrk(
                lay: c_int,
                uplo: c_int,
                tr: c_int,
                n: $C,
                k: $C,
                alpha: $T,
                a: *const $T,
                lda: $C,
                beta: $T,
                c: *mut $T,
                ldc: $C,
            );
            fn $csyr2k(
                lay: c_int,
                uplo: c_int,
                tr: c_int,
                n: $C,
                k: $C,
                alpha: $T,
                a: *const $T,
                lda: $C,
                b: *const $T,
                ldb: $C,
                beta: $T,
                c: *mut $T,
                ldc: $C,
            );
        }
    };
}

decl_real!(f32, i32, c_int, sgemm_, ssymm_, ssyrk_, ssyr2k_, cblas_sgemm, cblas_ssymm, cblas_ssyrk, cblas_ssyr2k);
decl_real!(
    f32,
    i64,
    i64,
    sgemm_64_,
    ssymm_64_,
    ssyrk_64_,
    ssyr2k_64_,
    cblas_sgemm64_,
    cblas_ssymm64_,
    cblas_ssyrk64_,
    cblas_ssyr2k64_
);
decl_real!(f64, i32, c_int, dgemm_, dsymm_, dsyrk_, dsyr2k_, cblas_dgemm, cblas_dsymm, cblas_dsyrk, cblas_dsyr2k);
decl_real!(
    f64,
    i64,
    i64,
    dgemm_64_,
    dsymm_64_,
    dsyrk_64_,
    dsyr2k_64_,
    cblas_dgemm64_,
    cblas_dsymm64_,
    cblas_dsyrk64_,
    cblas_dsyr2k64_
);
decl!(C32, C32, i32, c_int, cgemm_, csymm_, csyrk_, csyr2k_, cblas_cgemm, cblas_csymm, cblas_csyrk, cblas_csyr2k);
decl!(
    C32,
    C32,
    i64,
    i64,
    cgemm_64_,
    csymm_64_,
    csyrk_64_,
    csyr2k_64_,
    cblas_cgemm64_,
    cblas_csymm64_,
    cblas_csyrk64_,
    cblas_csyr2k64_
);
decl!(C64, C64, i32, c_int, zgemm_, zsymm_, zsyrk_, zsyr2k_, cblas_zgemm, cblas_zsymm, cblas_zsyrk, cblas_zsyr2k);
decl!(
    C64,
    C64,
    i64,
    i64,
    zgemm_64_,
    zsymm_64_,
    zsyrk_64_,
    zsyr2k_64_,
    cblas_zgemm64_,
    cblas_zsymm64_,
    cblas_zsyrk64_,
    cblas_zsyr2k64_
);
// HEMM has SYMM's signature; HERK/HER2K take real scalars.
extern "C" {
    fn chemm_(
        side: *const c_char,
        uplo: *const c_char,
        m: *const i32,
        n: *const i32,
        alpha: *const C32,
        a: *const C32,
        lda: *const i32,
        b: *const C32,
        ldb: *const i32,
        beta: *const C32,
        c: *mut C32,
        ldc: *const i32,
    );
    fn chemm_64_(
        side: *const c_char,
        uplo: *const c_char,
        m: *const i64,
        n: *const i64,
        alpha: *const C32,
        a: *const C32,
        lda: *const i64,
        b: *const C32,
        ldb: *const i64,
        beta: *const C32,
        c: *mut C32,
        ldc: *const i64,
    );
    fn zhemm_(
        side: *const c_char,
        uplo: *const c_char,
        m: *const i32,
        n: *const i32,
        alpha: *const C64,
        a: *const C64,
        lda: *const i32,
        b: *const C64,
        ldb: *const i32,
        beta: *const C64,
        c: *mut C64,
        ldc: *const i32,
    );
    fn zhemm_64_(
        side: *const c_char,
        uplo: *const c_char,
        m: *const i64,
        n: *const i64,
        alpha: *const C64,
        a: *const C64,
        lda: *const i64,
        b: *const C64,
        ldb: *const i64,
        beta: *const C64,
        c: *mut C64,
        ldc: *const i64,
    );
    fn cblas_chemm(
        lay: c_int,
        side: c_int,
        uplo: c_int,
        m: c_int,
        n: c_int,
        alpha: *const C32,
        a: *const C32,
        lda: c_int,
        b: *const C32,
        ldb: c_int,
        beta: *const C32,
        c: *mut C32,
        ldc: c_int,
    );
    fn cblas_chemm64_(
        lay: c_int,
        side: c_int,
        uplo: c_int,
        m: i64,
        n: i64,
        alpha: *const C32,
        a: *const C32,
        lda: i64,
        b: *const C32,
        ldb: i64,
        beta: *const C32,
        c: *mut C32,
        ldc: i64,
    );
    fn cblas_zhemm(
        lay: c_int,
        side: c_int,
        uplo: c_int,
        m: c_int,
        n: c_int,
        alpha: *const C64,
        a: *const C64,
        lda: c_int,
        b: *const C64,
        ldb: c_int,
        beta: *const C64,
        c: *mut C64,
        ldc: c_int,
    );
    fn cblas_zhemm64_(
        lay: c_int,
        side: c_int,
        uplo: c_int,
        m: i64,
        n: i64,
        alpha: *const C64,
        a: *const C64,
        lda: i64,
        b: *const C64,
        ldb: i64,
        beta: *const C64,
        c: *mut C64,
        ldc: i64,
    );

    fn cherk_(
        uplo: *const c_char,
        tr: *const c_char,
        n: *const i32,
        k: *const i32,
        alpha: *const f32,
        a: *const C32,
        lda: *const i32,
        beta: *const f32,
        c: *mut C32,
        ldc: *const i32,
    );
    fn cherk_64_(
        uplo: *const c_char,
        tr: *const c_char,
        n: *const i64,
        k: *const i64,
        alpha: *const f32,
        a: *const C32,
        lda: *const i64,
        beta: *const f32,
        c: *mut C32,
        ldc: *const i64,
    );
    fn zherk_(
        uplo: *const c_char,
        tr: *const c_char,
        n: *const i32,
        k: *const i32,
        alpha: *const f64,
        a: *const C64,
        lda: *const i32,
        beta: *const f64,
        c: *mut C64,
        ldc: *const i32,
    );
    fn zherk_64_(
        uplo: *const c_char,
        tr: *const c_char,
        n: *const i64,
        k: *const i64,
        alpha: *const f64,
        a: *const C64,
        lda: *const i64,
        beta: *const f64,
        c: *mut C64,
        ldc: *const i64,
    );
    fn cblas_cherk(
        lay: c_int,
        uplo: c_int,
        tr: c_int,
        n: c_int,
        k: c_int,
        alpha: f32,
        a: *const C32,
        lda: c_int,
        beta: f32,
        c: *mut C32,
        ldc: c_int,
    );
    fn cblas_cherk64_(
        lay: c_int,
        uplo: c_int,
        tr: c_int,
        n: i64,
        k: i64,
        alpha: f32,
        a: *const C32,
        lda: i64,
        beta: f32,
        c: *mut C32,
        ldc: i64,
    );
    fn cblas_zherk(
        lay: c_int,
        uplo: c_int,
        tr: c_int,
        n: c_int,
        k: c_int,
        alpha: f64,
        a: *const C64,
        lda: c_int,
        beta: f64,
        c: *mut C64,
        ldc: c_int,
    );
    fn cblas_zherk64_(
        lay: c_int,
        uplo: c_int,
        tr: c_int,
        n: i64,
        k: i64,
        alpha: f64,
        a: *const C64,
        lda: i64,
        beta: f64,
        c: *mut C64,
        ldc: i64,
    );

    fn cher2k_(
        uplo: *const c_char,
        tr: *const c_char,
        n: *const i32,
        k: *const i32,
        alpha: *const C32,
        a: *const C32,
        lda: *const i32,
        b: *const C32,
        ldb: *const i32,
        beta: *const f32,
        c: *mut C32,
        ldc: *const i32,
    );
    fn cher2k_64_(
        uplo: *const c_char,
        tr: *const c_char,
        n: *const i64,
        k: *const i64,
        alpha: *const C32,
        a: *const C32,
        lda: *const i64,
        b: *const C32,
        ldb: *const i64,
        beta: *const f32,
        c: *mut C32,
        ldc: *const i64,
    );
    fn zher2k_(
        uplo: *const c_char,
        tr: *const c_char,
        n: *const i32,
        k: *const i32,
        alpha: *const C64,
        a: *const C64,
        lda: *const i32,
        b: *const C64,
        ldb: *const i32,
        beta: *const f64,
        c: *mut C64,
        ldc: *const i32,
    );
    fn zher2k_64_(
        uplo: *const c_char,
        tr: *const c_char,
        n: *const i64,
        k: *const i64,
        alpha: *const C64,
        a: *const C64,
        lda: *const i64,
        b: *const C64,
        ldb: *const i64,
        beta: *const f64,
        c: *mut C64,
        ldc: *const i64,
    );
    fn cblas_cher2k(
        lay: c_int,
        uplo: c_int,
        tr: c_int,
        n: c_int,
        k: c_int,
        alpha: *const C32,
        a: *const C32,
        lda: c_int,
        b: *const C32,
        ldb: c_int,
        beta: f32,
        c: *mut C32,
        ldc: c_int,
    );
    fn cblas_cher2k64_(
        lay: c_int,
        uplo: c_int,
        tr: c_int,
        n: i64,
        k: i64,
        alpha: *const C32,
        a: *const C32,
        lda: i64,
        b: *const C32,
        ldb: i64,
        beta: f32,
        c: *mut C32,
        ldc: i64,
    );
    fn cblas_zher2k(
        lay: c_int,
        uplo: c_int,
        tr: c_int,
        n: c_int,
        k: c_int,
        alpha: *const C64,
        a: *const C64,
        lda: c_int,
        b: *const C64,
        ldb: c_int,
        beta: f64,
        c: *mut C64,
        ldc: c_int,
    );
    fn cblas_zher2k64_(
        lay: c_int,
        uplo: c_int,
        tr: c_int,
        n: i64,
        k: i64,
        alpha: *const C64,
        a: *const C64,
        lda: i64,
        b: *const C64,
        ldb: i64,
        beta: f64,
        c: *mut C64,
        ldc: i64,
    );
}

/// Fortran integer arguments of one width.
macro_rules! fi {
    ($I:ty; $($v:expr),*) => { ($(&($v as $I)),*) };
}

macro_rules! impl_real {
    ($T:ty, $gemm:ident, $symm:ident, $syrk:ident, $syr2k:ident, $cgemm:ident, $csymm:ident, $csyrk:ident, $csyr2k:ident,
     $gemm64:ident, $symm64:ident, $syrk64:ident, $syr2k64:ident, $cgemm64:ident, $csymm64:ident, $csyrk64:ident, $csyr2k64:ident) => {
        impl L3 for $T {
            unsafe fn gemm(abi: Abi, lay: c_int, ta: u8, tb: u8, m: usize, n: usize, k: usize, alpha: Self, a: *const Self, lda: usize, b: *const Self, ldb: usize, beta: Self, c: *mut Self, ldc: usize) {
                let (ta_c, tb_c) = (ta as c_char, tb as c_char);
                match abi {
                    Abi::Lp64 => { let (m, n, k, lda, ldb, ldc) = fi!(i32; m, n, k, lda, ldb, ldc); $gemm(&ta_c, &tb_c, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc) }
                    Abi::Ilp64 => { let (m, n, k, lda, ldb, ldc) = fi!(i64; m, n, k, lda, ldb, ldc); $gemm64(&ta_c, &tb_c, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc) }
                    Abi::Cblas => $cgemm(lay, cb_trans(ta), cb_trans(tb), m as _, n as _, k as _, alpha, a, lda as _, b, ldb as _, beta, c, ldc as _),
                    Abi::Cblas64 => $cgemm64(lay, cb_trans(ta), cb_trans(tb), m as _, n as _, k as _, alpha, a, lda as _, b, ldb as _, beta, c, ldc as _),
                }
            }
            unsafe fn symm(abi: Abi, lay: c_int, herm: bool, side: u8, uplo: u8, m: usize, n: usize, alpha: Self, a: *const Self, lda: usize, b: *const Self, ldb: usize, beta: Self, c: *mut Self, ldc: usize) {
                assert!(!herm);
                let (s_c, u_c) = (side as c_char, uplo as c_char);
                match abi {
                    Abi::Lp64 => { let (m, n, lda, ldb, ldc) = fi!(i32; m, n, lda, ldb, ldc); $symm(&s_c, &u_c, m, n, &alpha, a, lda, b, ldb, &beta, c, ldc) }
                    Abi::Ilp64 => { let (m, n, lda, ldb, ldc) = fi!(i64; m, n, lda, ldb, ldc); $symm64(&s_c, &u_c, m, n, &alpha, a, lda, b, ldb, &beta, c, ldc) }
                    Abi::Cblas => $csymm(lay, cb_side(side), cb_uplo(uplo), m as _, n as _, alpha, a, lda as _, b, ldb as _, beta, c, ldc as _),
                    Abi::Cblas64 => $csymm64(lay, cb_side(side), cb_uplo(uplo), m as _, n as _, alpha, a, lda as _, b, ldb as _, beta, c, ldc as _),
                }
            }
            unsafe fn syrk(abi: Abi, lay: c_int, herm: bool, uplo: u8, tr: u8, n: usize, k: usize, alpha: Self, a: *const Self, lda: usize, beta: Self, c: *mut Self, ldc: usize) {
                assert!(!herm);
                let (u_c, t_c) = (uplo as c_char, tr as c_char);
                match abi {
                    Abi::Lp64 => { let (n, k, lda, ldc) = fi!(i32; n, k, lda, ldc); $syrk(&u_c, &t_c, n, k, &alpha, a, lda, &beta, c, ldc) }
                    Abi::Ilp64 => { let (n, k, lda, ldc) = fi!(i64; n, k, lda, ldc); $syrk64(&u_c, &t_c, n, k, &alpha, a, lda, &beta, c, ldc) }
                    Abi::Cblas => $csyrk(lay, cb_uplo(uplo), cb_trans(tr), n as _, k as _, alpha, a, lda as _, beta, c, ldc as _),
                    Abi::Cblas64 => $csyrk64(lay, cb_uplo(uplo), cb_trans(tr), n as _, k as _, alpha, a, lda as _, beta, c, ldc as _),
                }
            }
            unsafe fn syr2k(abi: Abi, lay: c_int, herm: bool, uplo: u8, tr: u8, n: usize, k: usize, alpha: Self, a: *const Self, lda: usize, b: *const Self, ldb: usize, beta: Self, c: *mut Self, ldc: usize) {
                assert!(!herm);
                let (u_c, t_c) = (uplo as c_char, tr as c_char);
                match abi {
                    Abi::Lp64 => { let (n, k, lda, ldb, ldc) = fi!(i32; n, k, lda, ldb, ldc); $syr2k(&u_c, &t_c, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc) }
                    Abi::Ilp64 => { let (n, k, lda, ldb, ldc) = fi!(i64; n, k, lda, ldb, ldc); $syr2k64(&u_c, &t_c, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc) }
                    Abi::Cblas => $csyr2k(lay, cb_uplo(uplo), cb_trans(tr), n as _, k as _, alpha, a, lda as _, b, ldb as _, beta, c, ldc as _),
                    Abi::Cblas64 => $csyr2k64(lay, cb_uplo(uplo), cb_trans(tr), n as _, k as _, alpha, a, lda as _, b, ldb as _, beta, c, ldc as _),
                }
            }
        }
    };
}

impl_real!(
    f32,
    sgemm_,
    ssymm_,
    ssyrk_,
    ssyr2k_,
    cblas_sgemm,
    cblas_ssymm,
    cblas_ssyrk,
    cblas_ssyr2k,
    sgemm_64_,
    ssymm_64_,
    ssyrk_64_,
    ssyr2k_64_,
    cblas_sgemm64_,
    cblas_ssymm64_,
    cblas_ssyrk64_,
    cblas_ssyr2k64_
);
impl_real!(
    f64,
    dgemm_,
    dsymm_,
    dsyrk_,
    dsyr2k_,
    cblas_dgemm,
    cblas_dsymm,
    cblas_dsyrk,
    cblas_dsyr2k,
    dgemm_64_,
    dsymm_64_,
    dsyrk_64_,
    dsyr2k_64_,
    cblas_dgemm64_,
    cblas_dsymm64_,
    cblas_dsyrk64_,
    cblas_dsyr2k64_
);

macro_rules! impl_complex {
    ($T:ty, $R:ty, $gemm:ident, $symm:ident, $syrk:ident, $syr2k:ident, $cgemm:ident, $csymm:ident, $csyrk:ident, $csyr2k:ident,
     $gemm64:ident, $symm64:ident, $syrk64:ident, $syr2k64:ident, $cgemm64:ident, $csymm64:ident, $csyrk64:ident, $csyr2k64:ident,
     $hemm:ident, $herk:ident, $her2k:ident, $chemm:ident, $cherk:ident, $cher2k:ident,
     $hemm64:ident, $herk64:ident, $her2k64:ident, $chemm64:ident, $cherk64:ident, $cher2k64:ident) => {
        impl L3 for $T {
            unsafe fn gemm(abi: Abi, lay: c_int, ta: u8, tb: u8, m: usize, n: usize, k: usize, alpha: Self, a: *const Self, lda: usize, b: *const Self, ldb: usize, beta: Self, c: *mut Self, ldc: usize) {
                let (ta_c, tb_c) = (ta as c_char, tb as c_char);
                match abi {
                    Abi::Lp64 => { let (m, n, k, lda, ldb, ldc) = fi!(i32; m, n, k, lda, ldb, ldc); $gemm(&ta_c, &tb_c, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc) }
                    Abi::Ilp64 => { let (m, n, k, lda, ldb, ldc) = fi!(i64; m, n, k, lda, ldb, ldc); $gemm64(&ta_c, &tb_c, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc) }
                    Abi::Cblas => $cgemm(lay, cb_trans(ta), cb_trans(tb), m as _, n as _, k as _, &alpha, a, lda as _, b, ldb as _, &beta, c, ldc as _),
                    Abi::Cblas64 => $cgemm64(lay, cb_trans(ta), cb_trans(tb), m as _, n as _, k as _, &alpha, a, lda as _, b, ldb as _, &beta, c, ldc as _),
                }
            }
            unsafe fn symm(abi: Abi, lay: c_int, herm: bool, side: u8, uplo: u8, m: usize, n: usize, alpha: Self, a: *const Self, lda: usize, b: *const Self, ldb: usize, beta: Self, c: *mut Self, ldc: usize) {
                let (s_c, u_c) = (side as c_char, uplo as c_char);
                match (abi, herm) {
                    (Abi::Lp64, false) => { let (m, n, lda, ldb, ldc) = fi!(i32; m, n, lda, ldb, ldc); $symm(&s_c, &u_c, m, n, &alpha, a, lda, b, ldb, &beta, c, ldc) }
                    (Abi::Lp64, true) => { let (m, n, lda, ldb, ldc) = fi!(i32; m, n, lda, ldb, ldc); $hemm(&s_c, &u_c, m, n, &alpha, a, lda, b, ldb, &beta, c, ldc) }
                    (Abi::Ilp64, false) => { let (m, n, lda, ldb, ldc) = fi!(i64; m, n, lda, ldb, ldc); $symm64(&s_c, &u_c, m, n, &alpha, a, lda, b, ldb, &beta, c, ldc) }
                    (Abi::Ilp64, true) => { let (m, n, lda, ldb, ldc) = fi!(i64; m, n, lda, ldb, ldc); $hemm64(&s_c, &u_c, m, n, &alpha, a, lda, b, ldb, &beta, c, ldc) }
                    (Abi::Cblas, false) => $csymm(lay, cb_side(side), cb_uplo(uplo), m as _, n as _, &alpha, a, lda as _, b, ldb as _, &beta, c, ldc as _),
                    (Abi::Cblas, true) => $chemm(lay, cb_side(side), cb_uplo(uplo), m as _, n as _, &alpha, a, lda as _, b, ldb as _, &beta, c, ldc as _),
                    (Abi::Cblas64, false) => $csymm64(lay, cb_side(side), cb_uplo(uplo), m as _, n as _, &alpha, a, lda as _, b, ldb as _, &beta, c, ldc as _),
                    (Abi::Cblas64, true) => $chemm64(lay, cb_side(side), cb_uplo(uplo), m as _, n as _, &alpha, a, lda as _, b, ldb as _, &beta, c, ldc as _),
                }
            }
            unsafe fn syrk(abi: Abi, lay: c_int, herm: bool, uplo: u8, tr: u8, n: usize, k: usize, alpha: Self, a: *const Self, lda: usize, beta: Self, c: *mut Self, ldc: usize) {
                let (u_c, t_c) = (uplo as c_char, tr as c_char);
                let (ar, br): ($R, $R) = (alpha.re, beta.re);
                match (abi, herm) {
                    (Abi::Lp64, false) => { let (n, k, lda, ldc) = fi!(i32; n, k, lda, ldc); $syrk(&u_c, &t_c, n, k, &alpha, a, lda, &beta, c, ldc) }
                    (Abi::Lp64, true) => { let (n, k, lda, ldc) = fi!(i32; n, k, lda, ldc); $herk(&u_c, &t_c, n, k, &ar, a, lda, &br, c, ldc) }
                    (Abi::Ilp64, false) => { let (n, k, lda, ldc) = fi!(i64; n, k, lda, ldc); $syrk64(&u_c, &t_c, n, k, &alpha, a, lda, &beta, c, ldc) }
                    (Abi::Ilp64, true) => { let (n, k, lda, ldc) = fi!(i64; n, k, lda, ldc); $herk64(&u_c, &t_c, n, k, &ar, a, lda, &br, c, ldc) }
                    (Abi::Cblas, false) => $csyrk(lay, cb_uplo(uplo), cb_trans(tr), n as _, k as _, &alpha, a, lda as _, &beta, c, ldc as _),
                    (Abi::Cblas, true) => $cherk(lay, cb_uplo(uplo), cb_trans(tr), n as _, k as _, ar, a, lda as _, br, c, ldc as _),
                    (Abi::Cblas64, false) => $csyrk64(lay, cb_uplo(uplo), cb_trans(tr), n as _, k as _, &alpha, a, lda as _, &beta, c, ldc as _),
                    (Abi::Cblas64, true) => $cherk64(lay, cb_uplo(uplo), cb_trans(tr), n as _, k as _, ar, a, lda as _, br, c, ldc as _),
                }
            }
            unsafe fn syr2k(abi: Abi, lay: c_int, herm: bool, uplo: u8, tr: u8, n: usize, k: usize, alpha: Self, a: *const Self, lda: usize, b: *const Self, ldb: usize, beta: Self, c: *mut Self, ldc: usize) {
                let (u_c, t_c) = (uplo as c_char, tr as c_char);
                let br: $R = beta.re;
                match (abi, herm) {
                    (Abi::Lp64, false) => { let (n, k, lda, ldb, ldc) = fi!(i32; n, k, lda, ldb, ldc); $syr2k(&u_c, &t_c, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc) }
                    (Abi::Lp64, true) => { let (n, k, lda, ldb, ldc) = fi!(i32; n, k, lda, ldb, ldc); $her2k(&u_c, &t_c, n, k, &alpha, a, lda, b, ldb, &br, c, ldc) }
                    (Abi::Ilp64, false) => { let (n, k, lda, ldb, ldc) = fi!(i64; n, k, lda, ldb, ldc); $syr2k64(&u_c, &t_c, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc) }
                    (Abi::Ilp64, true) => { let (n, k, lda, ldb, ldc) = fi!(i64; n, k, lda, ldb, ldc); $her2k64(&u_c, &t_c, n, k, &alpha, a, lda, b, ldb, &br, c, ldc) }
                    (Abi::Cblas, false) => $csyr2k(lay, cb_uplo(uplo), cb_trans(tr), n as _, k as _, &alpha, a, lda as _, b, ldb as _, &beta, c, ldc as _),
                    (Abi::Cblas, true) => $cher2k(lay, cb_uplo(uplo), cb_trans(tr), n as _, k as _, &alpha, a, lda as _, b, ldb as _, br, c, ldc as _),
                    (Abi::Cblas64, false) => $csyr2k64(lay, cb_uplo(uplo), cb_trans(tr), n as _, k as _, &alpha, a, lda as _, b, ldb as _, &beta, c, ldc as _),
                    (Abi::Cblas64, true) => $cher2k64(lay, cb_uplo(uplo), cb_trans(tr), n as _, k as _, &alpha, a, lda as _, b, ldb as _, br, c, ldc as _),
                }
            }
        }
    };
}

impl_complex!(
    C32,
    f32,
    cgemm_,
    csymm_,
    csyrk_,
    csyr2k_,
    cblas_cgemm,
    cblas_csymm,
    cblas_csyrk,
    cblas_csyr2k,
    cgemm_64_,
    csymm_64_,
    csyrk_64_,
    csyr2k_64_,
    cblas_cgemm64_,
    cblas_csymm64_,
    cblas_csyrk64_,
    cblas_csyr2k64_,
    chemm_,
    cherk_,
    cher2k_,
    cblas_chemm,
    cblas_cherk,
    cblas_cher2k,
    chemm_64_,
    cherk_64_,
    cher2k_64_,
    cblas_chemm64_,
    cblas_cherk64_,
    cblas_cher2k64_
);
impl_complex!(
    C64,
    f64,
    zgemm_,
    zsymm_,
    zsyrk_,
    zsyr2k_,
    cblas_zgemm,
    cblas_zsymm,
    cblas_zsyrk,
    cblas_zsyr2k,
    zgemm_64_,
    zsymm_64_,
    zsyrk_64_,
    zsyr2k_64_,
    cblas_zgemm64_,
    cblas_zsymm64_,
    cblas_zsyrk64_,
    cblas_zsyr2k64_,
    zhemm_,
    zherk_,
    zher2k_,
    cblas_zhemm,
    cblas_zherk,
    cblas_zher2k,
    zhemm_64_,
    zherk_64_,
    zher2k_64_,
    cblas_zhemm64_,
    cblas_zherk64_,
    cblas_zher2k64_
);

// ---------------------------------------------------------------------------------------------
// Naive references on logical matrices. Each returns the mask of C elements it writes.

fn nan<T: Scalar>() -> T {
    T::from_f64(f64::NAN)
}

/// op(X)(i, l) of a stored matrix.
fn op_at<T: Scalar>(x: &[T], lx: L, t: u8, i: usize, l: usize) -> T {
    match t {
        b'N' => x[lx.at(i, l)],
        b'T' => x[lx.at(l, i)],
        _ => x[lx.at(l, i)].conj(),
    }
}

#[allow(clippy::too_many_arguments)]
fn gemm_ref<T: Scalar>(
    ta: u8,
    tb: u8,
    m: usize,
    n: usize,
    k: usize,
    alpha: T,
    a: &[T],
    la: L,
    b: &[T],
    lb: L,
    beta: T,
    c: &mut [T],
    lc: L,
) -> Vec<bool> {
    let mut mask = vec![false; c.len()];
    if m == 0 || n == 0 || ((alpha.is_zero() || k == 0) && beta.is_one()) {
        return mask;
    }
    for j in 0..n {
        for i in 0..m {
            let mut s = T::zero();
            if !alpha.is_zero() {
                for l in 0..k {
                    s += op_at(a, la, ta, i, l) * op_at(b, lb, tb, l, j);
                }
            }
            let p = lc.at(i, j);
            let old = if beta.is_zero() { T::zero() } else { beta * c[p] };
            c[p] = if alpha.is_zero() { old } else { alpha * s + old };
            mask[p] = true;
        }
    }
    mask
}

fn in_tri(uplo: u8, i: usize, j: usize) -> bool {
    if uplo == b'U' {
        i <= j
    } else {
        i >= j
    }
}

/// Element (i, j) of the full symmetric/Hermitian matrix whose `uplo` triangle is stored.
fn sym_at<T: Scalar>(a: &[T], la: L, uplo: u8, herm: bool, i: usize, j: usize) -> T {
    if i == j && herm {
        T::from_real(a[la.at(i, i)].re())
    } else if in_tri(uplo, i, j) {
        a[la.at(i, j)]
    } else {
        a[la.at(j, i)].conj_if(herm)
    }
}

#[allow(clippy::too_many_arguments)]
fn symm_ref<T: Scalar>(
    herm: bool,
    side: u8,
    uplo: u8,
    m: usize,
    n: usize,
    alpha: T,
    a: &[T],
    la: L,
    b: &[T],
    lb: L,
    beta: T,
    c: &mut [T],
    lc: L,
) -> Vec<bool> {
    let mut mask = vec![false; c.len()];
    if m == 0 || n == 0 || (alpha.is_zero() && beta.is_one()) {
        return mask;
    }
    for j in 0..n {
        for i in 0..m {
            let mut s = T::zero();
            if !alpha.is_zero() {
                if side == b'L' {
                    for l in 0..m {
                        s += sym_at(a, la, uplo, herm, i, l) * b[lb.at(l, j)];
                    }
                } else {
                    for l in 0..n {
                        s += b[lb.at(i, l)] * sym_at(a, la, uplo, herm, l, j);
                    }
                }
            }
            let p = lc.at(i, j);
            let old = if beta.is_zero() { T::zero() } else { beta * c[p] };
            c[p] = if alpha.is_zero() { old } else { alpha * s + old };
            mask[p] = true;
        }
    }
    mask
}

/// SYRK/HERK (`b == None`) and SYR2K/HER2K on the `uplo` triangle.
#[allow(clippy::too_many_arguments)]
fn rank_ref<T: Scalar>(
    herm: bool,
    uplo: u8,
    tr: u8,
    n: usize,
    k: usize,
    alpha: T,
    a: &[T],
    la: L,
    b: Option<(&[T], L)>,
    beta: T,
    c: &mut [T],
    lc: L,
) -> Vec<bool> {
    let mut mask = vec![false; c.len()];
    if n == 0 || ((alpha.is_zero() || k == 0) && beta.is_one()) {
        return mask;
    }
    // X(i, l) = op(A)(i, l) with op = N or T (conjugation handled below).
    let x = |i: usize, l: usize| if tr == b'N' { a[la.at(i, l)] } else { a[la.at(l, i)] };
    let y = |i: usize, l: usize| {
        let (b, lb) = b.expect("rank-2k operand");
        if tr == b'N' {
            b[lb.at(i, l)]
        } else {
            b[lb.at(l, i)]
        }
    };
    for j in 0..n {
        for i in 0..n {
            if !in_tri(uplo, i, j) {
                continue;
            }
            let mut s = T::zero();
            if !alpha.is_zero() {
                for l in 0..k {
                    s += match (b.is_some(), herm, tr == b'N') {
                        (false, false, _) => alpha * x(i, l) * x(j, l),
                        (false, true, true) => alpha * x(i, l) * x(j, l).conj(),
                        (false, true, false) => alpha * x(i, l).conj() * x(j, l),
                        (true, false, _) => alpha * (x(i, l) * y(j, l) + y(i, l) * x(j, l)),
                        (true, true, true) => {
                            alpha * x(i, l) * y(j, l).conj() + alpha.conj() * y(i, l) * x(j, l).conj()
                        }
                        (true, true, false) => {
                            alpha * x(i, l).conj() * y(j, l) + alpha.conj() * y(i, l).conj() * x(j, l)
                        }
                    };
                }
            }
            let p = lc.at(i, j);
            c[p] = if herm && i == j {
                let old = if beta.is_zero() { 0.0 } else { to_c64(beta).re * to_c64(c[p]).re };
                T::from_f64(to_c64(s).re + old)
            } else {
                let old = if beta.is_zero() { T::zero() } else { beta * c[p] };
                s + old
            };
            mask[p] = true;
        }
    }
    mask
}

/// Compare C after a call with the reference result: written elements to tolerance, all
/// others bit for bit.
fn check<T: Scalar>(got: &[T], want: &[T], mask: &[bool], k: usize, what: &str) {
    let scale = want
        .iter()
        .zip(mask)
        .filter(|(_, &m)| m)
        .map(|(&w, _)| to_c64(w).norm())
        .filter(|v| v.is_finite())
        .fold(1.0f64, f64::max);
    let t = tol::<T>(k) * scale;
    for (i, ((&g, &w), &m)) in got.iter().zip(want).zip(mask).enumerate() {
        let (gc, wc) = (to_c64(g), to_c64(w));
        if !m {
            let same = (gc.re.to_bits() == wc.re.to_bits() && gc.im.to_bits() == wc.im.to_bits()) || g == w;
            assert!(same, "{what}: element {i} outside the written region changed: {gc} (was {wc})");
            continue;
        }
        let nan_ok = (gc.re.is_nan() || gc.im.is_nan()) && (wc.re.is_nan() || wc.im.is_nan());
        if nan_ok {
            continue;
        }
        assert!((gc - wc).norm() <= t, "{what}: element {i}: got {gc}, want {wc} (tol {t:e})");
    }
}

/// A matrix of `rows x cols` in storage `l`, random inside and poison in the padding.
fn matrix<T: Scalar>(rng: &mut Rng, rows: usize, cols: usize, l: L) -> Vec<T> {
    let mut v = vec![poison::<T>(); l.len(rows, cols)];
    for i in 0..rows {
        for j in 0..cols {
            v[l.at(i, j)] = rng.scalar();
        }
    }
    v
}

fn scalars<T: Scalar>() -> Vec<T> {
    vec![T::zero(), T::one(), T::from_parts(<T::Real as Scalar>::from_f64(0.7), <T::Real as Scalar>::from_f64(-0.4))]
}

/// Layouts to exercise for an ABI: Fortran is column-major only.
fn layouts(abi: Abi) -> &'static [c_int] {
    if abi.is_cblas() {
        &[COL, ROW]
    } else {
        &[COL]
    }
}

/// Storage of an operand with `rows x cols` logical shape in a layout, with `pad` spare
/// elements on the leading dimension.
fn store(lay: c_int, rows: usize, cols: usize, pad: usize) -> L {
    if lay == ROW {
        L { row: true, ld: cols.max(1) + pad }
    } else {
        L { row: false, ld: rows.max(1) + pad }
    }
}

const ABIS: [Abi; 4] = [Abi::Lp64, Abi::Ilp64, Abi::Cblas, Abi::Cblas64];

// ---------------------------------------------------------------------------------------------
// GEMM

fn run_gemm<T: L3>(seed: u64, shapes: &[(usize, usize, usize)], abis: &[Abi]) {
    let mut rng = Rng::new(seed);
    let trans: &[u8] = b"NTC";
    for &abi in abis {
        for &lay in layouts(abi) {
            for &(m, n, k) in shapes {
                for &ta in trans {
                    for &tb in trans {
                        for alpha in scalars::<T>() {
                            for beta in scalars::<T>() {
                                let (ar, ac) = if ta == b'N' { (m, k) } else { (k, m) };
                                let (br, bc) = if tb == b'N' { (k, n) } else { (n, k) };
                                let la = store(lay, ar, ac, 1);
                                let lb = store(lay, br, bc, 2);
                                let lc = store(lay, m, n, 3);
                                let a: Vec<T> = matrix(&mut rng, ar, ac, la);
                                let b: Vec<T> = matrix(&mut rng, br, bc, lb);
                                let mut c: Vec<T> = matrix(&mut rng, m, n, lc);
                                if beta.is_zero() {
                                    // beta == 0 must overwrite NaN.
                                    for j in 0..n {
                                        for i in 0..m {
                                            c[lc.at(i, j)] = nan();
                                        }
                                    }
                                }
                                // alpha == 0 must not read A or B.
                                let (a, b) =
                                    if alpha.is_zero() { (vec![nan(); a.len()], vec![nan(); b.len()]) } else { (a, b) };
                                let mut want = c.clone();
                                let mask = gemm_ref(ta, tb, m, n, k, alpha, &a, la, &b, lb, beta, &mut want, lc);
                                unsafe {
                                    T::gemm(
                                        abi,
                                        lay,
                                        ta,
                                        tb,
                                        m,
                                        n,
                                        k,
                                        alpha,
                                        a.as_ptr(),
                                        la.ld,
                                        b.as_ptr(),
                                        lb.ld,
                                        beta,
                                        c.as_mut_ptr(),
                                        lc.ld,
                                    )
                                };
                                let what = format!(
                                    "{}gemm {abi:?} lay={lay} {} {} m={m} n={n} k={k} alpha={alpha:?} beta={beta:?}",
                                    T::PREFIX,
                                    ta as char,
                                    tb as char
                                );
                                check(&c, &want, &mask, k, &what);
                            }
                        }
                    }
                }
            }
        }
    }
}

const GEMM_SHAPES: [(usize, usize, usize); 9] =
    [(0, 3, 2), (3, 0, 2), (4, 3, 0), (1, 1, 1), (2, 3, 5), (7, 5, 3), (17, 9, 13), (33, 31, 16), (5, 65, 7)];

#[test]
fn gemm_grid() {
    run_gemm::<f32>(1, &GEMM_SHAPES, &ABIS);
    run_gemm::<f64>(2, &GEMM_SHAPES, &ABIS);
    run_gemm::<C32>(3, &GEMM_SHAPES, &ABIS);
    run_gemm::<C64>(4, &GEMM_SHAPES, &ABIS);
}

/// Sizes past the thread threshold and kernel block edges (one ABI each, both layouts).
#[test]
fn gemm_large() {
    let shapes = [(127, 129, 65), (128, 64, 300), (200, 130, 96)];
    run_gemm::<f64>(5, &shapes, &[Abi::Cblas]);
    run_gemm::<C64>(6, &shapes[..2], &[Abi::Cblas64]);
    run_gemm::<f32>(7, &[(200, 180, 130)], &[Abi::Lp64]);
    run_gemm::<C32>(8, &shapes[..1], &[Abi::Ilp64]);
}

/// NaN and Inf in A propagate into C as in the reference (alpha != 0).
#[test]
fn gemm_nan_propagates() {
    let (m, n, k) = (6, 5, 4);
    let l = L { row: false, ld: 6 };
    let mut a = [1.0f64; 24];
    a[l.at(2, 1)] = f64::NAN;
    a[l.at(4, 3)] = f64::INFINITY;
    let b = [1.0f64; 20];
    let mut c = vec![0.5f64; 30];
    unsafe {
        f64::gemm(Abi::Lp64, COL, b'N', b'N', m, n, k, 1.0, a.as_ptr(), 6, b.as_ptr(), 4, 1.0, c.as_mut_ptr(), 6)
    };
    for j in 0..n {
        assert!(c[l.at(2, j)].is_nan());
        assert_eq!(c[l.at(4, j)], f64::INFINITY);
        assert_eq!(c[l.at(0, j)], 4.5);
    }
}

// ---------------------------------------------------------------------------------------------
// SYMM / HEMM

fn run_symm<T: L3>(seed: u64, herm: bool, shapes: &[(usize, usize)], abis: &[Abi]) {
    let mut rng = Rng::new(seed);
    for &abi in abis {
        for &lay in layouts(abi) {
            for &(m, n) in shapes {
                for &side in b"LR" {
                    for &uplo in b"UL" {
                        for alpha in scalars::<T>() {
                            for beta in scalars::<T>() {
                                let na = if side == b'L' { m } else { n };
                                let la = store(lay, na, na, 2);
                                let lb = store(lay, m, n, 1);
                                let lc = store(lay, m, n, 3);
                                let mut a: Vec<T> = matrix(&mut rng, na, na, la);
                                // The unreferenced triangle must not be read.
                                for j in 0..na {
                                    for i in 0..na {
                                        if !in_tri(uplo, i, j) {
                                            a[la.at(i, j)] = nan();
                                        }
                                    }
                                }
                                let b: Vec<T> = matrix(&mut rng, m, n, lb);
                                let mut c: Vec<T> = matrix(&mut rng, m, n, lc);
                                if beta.is_zero() {
                                    for j in 0..n {
                                        for i in 0..m {
                                            c[lc.at(i, j)] = nan();
                                        }
                                    }
                                }
                                let (a, b) =
                                    if alpha.is_zero() { (vec![nan(); a.len()], vec![nan(); b.len()]) } else { (a, b) };
                                let mut want = c.clone();
                                let mask = symm_ref(herm, side, uplo, m, n, alpha, &a, la, &b, lb, beta, &mut want, lc);
                                unsafe {
                                    T::symm(
                                        abi,
                                        lay,
                                        herm,
                                        side,
                                        uplo,
                                        m,
                                        n,
                                        alpha,
                                        a.as_ptr(),
                                        la.ld,
                                        b.as_ptr(),
                                        lb.ld,
                                        beta,
                                        c.as_mut_ptr(),
                                        lc.ld,
                                    )
                                };
                                let what = format!(
                                    "{}{} {abi:?} lay={lay} side={} uplo={} m={m} n={n} alpha={alpha:?} beta={beta:?}",
                                    T::PREFIX,
                                    if herm { "hemm" } else { "symm" },
                                    side as char,
                                    uplo as char
                                );
                                check(&c, &want, &mask, m.max(n), &what);
                            }
                        }
                    }
                }
            }
        }
    }
}

const SYMM_SHAPES: [(usize, usize); 7] = [(0, 3), (3, 0), (1, 1), (2, 5), (7, 3), (17, 16), (33, 9)];

#[test]
fn symm_grid() {
    run_symm::<f32>(11, false, &SYMM_SHAPES, &ABIS);
    run_symm::<f64>(12, false, &SYMM_SHAPES, &ABIS);
    run_symm::<C32>(13, false, &SYMM_SHAPES, &ABIS);
    run_symm::<C64>(14, false, &SYMM_SHAPES, &ABIS);
    run_symm::<C32>(15, true, &SYMM_SHAPES, &ABIS);
    run_symm::<C64>(16, true, &SYMM_SHAPES, &ABIS);
}

#[test]
fn symm_large() {
    let shapes = [(129, 70), (65, 130)];
    run_symm::<f64>(17, false, &shapes, &[Abi::Cblas]);
    run_symm::<C64>(18, true, &shapes, &[Abi::Cblas64]);
    run_symm::<C32>(19, true, &shapes[..1], &[Abi::Lp64]);
}

// ---------------------------------------------------------------------------------------------
// SYRK / HERK / SYR2K / HER2K

fn rank_trans<T: Scalar>(herm: bool) -> &'static [u8] {
    match (herm, T::IS_COMPLEX) {
        (true, _) => b"NC",
        (false, true) => b"NT",
        (false, false) => b"NTC",
    }
}

fn run_rank<T: L3>(seed: u64, herm: bool, two: bool, shapes: &[(usize, usize)], abis: &[Abi]) {
    run_rank_with(seed, herm, two, shapes, abis, &scalars::<T>(), &scalars::<T>());
}

/// [`run_rank`] over given alpha and beta values.
fn run_rank_with<T: L3>(
    seed: u64,
    herm: bool,
    two: bool,
    shapes: &[(usize, usize)],
    abis: &[Abi],
    alphas: &[T],
    betas: &[T],
) {
    let mut rng = Rng::new(seed);
    // HERK's alpha and beta and HER2K's beta are real.
    let real_part = |v: T| T::from_real(v.re());
    for &abi in abis {
        for &lay in layouts(abi) {
            for &(n, k) in shapes {
                for &uplo in b"UL" {
                    for &tr in rank_trans::<T>(herm) {
                        for &alpha in alphas {
                            for &beta in betas {
                                let alpha = if herm && !two { real_part(alpha) } else { alpha };
                                let beta = if herm { real_part(beta) } else { beta };
                                let (ar, ac) = if tr == b'N' { (n, k) } else { (k, n) };
                                let la = store(lay, ar, ac, 1);
                                let lb = store(lay, ar, ac, 2);
                                let lc = store(lay, n, n, 3);
                                let a: Vec<T> = matrix(&mut rng, ar, ac, la);
                                let b: Vec<T> = matrix(&mut rng, ar, ac, lb);
                                let mut c: Vec<T> = matrix(&mut rng, n, n, lc);
                                if beta.is_zero() {
                                    for j in 0..n {
                                        for i in 0..n {
                                            if in_tri(uplo, i, j) {
                                                c[lc.at(i, j)] = nan();
                                            }
                                        }
                                    }
                                }
                                let (a, b) =
                                    if alpha.is_zero() { (vec![nan(); a.len()], vec![nan(); b.len()]) } else { (a, b) };
                                let mut want = c.clone();
                                let bo = if two { Some((&b[..], lb)) } else { None };
                                let mask = rank_ref(herm, uplo, tr, n, k, alpha, &a, la, bo, beta, &mut want, lc);
                                unsafe {
                                    if two {
                                        T::syr2k(
                                            abi,
                                            lay,
                                            herm,
                                            uplo,
                                            tr,
                                            n,
                                            k,
                                            alpha,
                                            a.as_ptr(),
                                            la.ld,
                                            b.as_ptr(),
                                            lb.ld,
                                            beta,
                                            c.as_mut_ptr(),
                                            lc.ld,
                                        )
                                    } else {
                                        T::syrk(
                                            abi,
                                            lay,
                                            herm,
                                            uplo,
                                            tr,
                                            n,
                                            k,
                                            alpha,
                                            a.as_ptr(),
                                            la.ld,
                                            beta,
                                            c.as_mut_ptr(),
                                            lc.ld,
                                        )
                                    }
                                };
                                let name = match (herm, two) {
                                    (false, false) => "syrk",
                                    (true, false) => "herk",
                                    (false, true) => "syr2k",
                                    (true, true) => "her2k",
                                };
                                let what = format!("{}{name} {abi:?} lay={lay} uplo={} tr={} n={n} k={k} alpha={alpha:?} beta={beta:?}", T::PREFIX, uplo as char, tr as char);
                                check(&c, &want, &mask, 2 * k, &what);
                                if herm && !mask.is_empty() && mask.iter().any(|&m| m) {
                                    for i in 0..n {
                                        assert_eq!(to_c64(c[lc.at(i, i)]).im, 0.0, "{what}: diagonal {i} not real");
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

const RANK_SHAPES: [(usize, usize); 8] = [(0, 3), (3, 0), (1, 1), (2, 5), (7, 3), (16, 1), (17, 9), (33, 20)];

#[test]
fn syrk_grid() {
    run_rank::<f32>(21, false, false, &RANK_SHAPES, &ABIS);
    run_rank::<f64>(22, false, false, &RANK_SHAPES, &ABIS);
    run_rank::<C32>(23, false, false, &RANK_SHAPES, &ABIS);
    run_rank::<C64>(24, false, false, &RANK_SHAPES, &ABIS);
}

#[test]
fn herk_grid() {
    run_rank::<C32>(25, true, false, &RANK_SHAPES, &ABIS);
    run_rank::<C64>(26, true, false, &RANK_SHAPES, &ABIS);
}

#[test]
fn syr2k_grid() {
    run_rank::<f32>(27, false, true, &RANK_SHAPES, &ABIS);
    run_rank::<f64>(28, false, true, &RANK_SHAPES, &ABIS);
    run_rank::<C32>(29, false, true, &RANK_SHAPES, &ABIS);
    run_rank::<C64>(30, false, true, &RANK_SHAPES, &ABIS);
}

#[test]
fn her2k_grid() {
    run_rank::<C32>(31, true, true, &RANK_SHAPES, &ABIS);
    run_rank::<C64>(32, true, true, &RANK_SHAPES, &ABIS);
}

/// Orders around the diagonal block size (128) and deeper recursion.
#[test]
fn rank_large() {
    let shapes = [(127, 5), (128, 3), (129, 7), (300, 2)];
    run_rank::<f64>(33, false, false, &shapes, &[Abi::Cblas]);
    run_rank::<C64>(34, true, false, &shapes[2..], &[Abi::Cblas64]);
    run_rank::<f32>(35, false, true, &shapes[..3], &[Abi::Lp64]);
    run_rank::<C32>(36, true, true, &shapes[2..], &[Abi::Ilp64]);
}

/// Products big enough that the diagonal blocks run in parallel, one per thread.
#[test]
fn rank_parallel_blocks() {
    let s = |v: f64| vec![v];
    run_rank_with::<f64>(37, false, false, &[(300, 520)], &[Abi::Lp64], &s(0.7), &[0.0, 1.3]);
    let z = C64::new(0.7, -0.4);
    run_rank_with::<C64>(38, true, false, &[(300, 230)], &[Abi::Cblas], &[z], &[C64::zero(), z]);
    run_rank_with::<C64>(39, true, true, &[(260, 140)], &[Abi::Ilp64], &[z], &[z]);
}

/// The reference quirk: HERK/HER2K with beta == 1 and alpha == 0 (or k == 0) return at once,
/// leaving a non-real diagonal as it was; with alpha != 0 the diagonal is made real.
#[test]
fn herk_beta_one_diagonal() {
    let n = 3;
    let a = [C64::new(0.5, 0.25); 9];
    let mut c = vec![C64::new(1.0, 2.0); 9];
    unsafe {
        C64::syrk(
            Abi::Lp64,
            COL,
            true,
            b'U',
            b'N',
            n,
            n,
            C64::new(0.0, 0.0),
            a.as_ptr(),
            3,
            C64::one(),
            c.as_mut_ptr(),
            3,
        )
    };
    assert!(c.iter().all(|&v| v == C64::new(1.0, 2.0)), "alpha == 0, beta == 1 must not touch C");
    unsafe {
        C64::syr2k(
            Abi::Lp64,
            COL,
            true,
            b'L',
            b'N',
            n,
            0,
            C64::new(2.0, 1.0),
            a.as_ptr(),
            3,
            a.as_ptr(),
            3,
            C64::one(),
            c.as_mut_ptr(),
            3,
        )
    };
    assert!(c.iter().all(|&v| v == C64::new(1.0, 2.0)), "k == 0, beta == 1 must not touch C");
    unsafe {
        C64::syrk(Abi::Lp64, COL, true, b'U', b'N', n, 1, C64::one(), a.as_ptr(), 3, C64::one(), c.as_mut_ptr(), 3)
    };
    for i in 0..n {
        assert_eq!(c[i + 3 * i].im, 0.0);
        assert!((c[i + 3 * i].re - (1.0 + 0.3125)).abs() < 1e-15);
    }
    // Lower triangle below the diagonal untouched.
    assert_eq!(c[1], C64::new(1.0, 2.0));
}

// ---------------------------------------------------------------------------------------------
// Errors: reference INFO order, nothing written.

#[test]
fn check_order() {
    use hyblas::abi::fortran::level3::{check_gemm, check_rank, check_symm, RankKind};
    use hyblas::types::{Side, Trans, Uplo};
    let n = Some(Trans::No);
    let t = Some(Trans::Trans);
    assert_eq!(check_gemm(None, None, -1, -1, -1, 0, 0, 0), Err(1));
    assert_eq!(check_gemm(n, None, -1, -1, -1, 0, 0, 0), Err(2));
    assert_eq!(check_gemm(n, n, -1, -1, -1, 0, 0, 0), Err(3));
    assert_eq!(check_gemm(n, n, 0, -1, -1, 0, 0, 0), Err(4));
    assert_eq!(check_gemm(n, n, 0, 0, -1, 0, 0, 0), Err(5));
    assert_eq!(check_gemm(n, n, 2, 0, 0, 1, 1, 2), Err(8));
    assert_eq!(check_gemm(t, n, 2, 0, 3, 2, 1, 2), Err(8));
    assert_eq!(check_gemm(n, n, 2, 0, 3, 2, 2, 2), Err(10));
    assert_eq!(check_gemm(n, t, 2, 3, 0, 2, 2, 2), Err(10));
    assert_eq!(check_gemm(n, n, 2, 0, 0, 2, 1, 1), Err(13));
    assert!(check_gemm(n, t, 2, 3, 0, 2, 3, 2).is_ok());

    let l = Some(Side::Left);
    let r = Some(Side::Right);
    let u = Some(Uplo::Upper);
    assert_eq!(check_symm(None, None, -1, -1, 0, 0, 0), Err(1));
    assert_eq!(check_symm(l, None, -1, -1, 0, 0, 0), Err(2));
    assert_eq!(check_symm(l, u, -1, -1, 0, 0, 0), Err(3));
    assert_eq!(check_symm(l, u, 0, -1, 0, 0, 0), Err(4));
    assert_eq!(check_symm(l, u, 2, 0, 1, 2, 2), Err(7));
    assert_eq!(check_symm(r, u, 2, 3, 2, 2, 2), Err(7));
    assert_eq!(check_symm(r, u, 2, 3, 3, 1, 2), Err(9));
    assert_eq!(check_symm(r, u, 2, 3, 3, 2, 1), Err(12));

    let c = Some(Trans::ConjTrans);
    assert_eq!(check_rank::<f64>(RankKind::Sym, None, None, -1, -1, 0, None, 0), Err(1));
    assert_eq!(check_rank::<f64>(RankKind::Sym, u, None, -1, -1, 0, None, 0), Err(2));
    assert!(check_rank::<f64>(RankKind::Sym, u, c, 0, 0, 1, None, 1).is_ok());
    assert_eq!(check_rank::<C64>(RankKind::Sym, u, c, 0, 0, 1, None, 1), Err(2));
    assert_eq!(check_rank::<C64>(RankKind::Herm, u, t, 0, 0, 1, None, 1), Err(2));
    assert_eq!(check_rank::<C64>(RankKind::Herm, u, c, -1, 0, 1, None, 1), Err(3));
    assert_eq!(check_rank::<C64>(RankKind::Herm, u, c, 0, -1, 1, None, 1), Err(4));
    assert_eq!(check_rank::<C64>(RankKind::Herm, u, n, 2, 0, 1, None, 2), Err(7));
    assert_eq!(check_rank::<C64>(RankKind::Herm, u, c, 2, 3, 2, None, 2), Err(7));
    assert_eq!(check_rank::<C64>(RankKind::Herm, u, n, 2, 0, 2, None, 1), Err(10));
    assert_eq!(check_rank::<f32>(RankKind::Sym, u, n, 2, 0, 2, Some(1), 2), Err(9));
    assert_eq!(check_rank::<f32>(RankKind::Sym, u, n, 2, 0, 2, Some(2), 1), Err(12));
}

#[test]
fn errors_write_nothing() {
    // Each call has one bad argument; C must come back untouched.
    let a = [1.0f64; 16];
    let mut c = vec![poison::<f64>(); 16];
    let orig = c.clone();
    unsafe {
        for abi in ABIS {
            f64::gemm(abi, COL, b'N', b'N', 4, 4, 4, 1.0, a.as_ptr(), 3, a.as_ptr(), 4, 0.0, c.as_mut_ptr(), 4);
            f64::gemm(abi, COL, b'X', b'N', 4, 4, 4, 1.0, a.as_ptr(), 4, a.as_ptr(), 4, 0.0, c.as_mut_ptr(), 4);
            f64::gemm(abi, ROW, b'N', b'N', 4, 4, 4, 1.0, a.as_ptr(), 4, a.as_ptr(), 4, 0.0, c.as_mut_ptr(), 3);
            f64::symm(abi, COL, false, b'L', b'U', 4, 4, 1.0, a.as_ptr(), 4, a.as_ptr(), 4, 0.0, c.as_mut_ptr(), 3);
            f64::syrk(abi, COL, false, b'U', b'N', 4, 4, 1.0, a.as_ptr(), 3, 0.0, c.as_mut_ptr(), 4);
            f64::syr2k(abi, ROW, false, b'L', b'T', 4, 4, 1.0, a.as_ptr(), 4, a.as_ptr(), 3, 0.0, c.as_mut_ptr(), 4);
            assert_eq!(c, orig, "{abi:?}");
        }
        // Layout and enum values CBLAS rejects itself.
        cblas_dgemm(7, 111, 111, 4, 4, 4, 1.0, a.as_ptr(), 4, a.as_ptr(), 4, 0.0, c.as_mut_ptr(), 4);
        cblas_dsyrk(COL, 5, 111, 4, 4, 1.0, a.as_ptr(), 4, 0.0, c.as_mut_ptr(), 4);
        cblas_dsymm(ROW, 141, 9, 4, 4, 1.0, a.as_ptr(), 4, a.as_ptr(), 4, 0.0, c.as_mut_ptr(), 4);
    }
    assert_eq!(c.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), orig.iter().map(|v| v.to_bits()).collect::<Vec<_>>());
    // Complex SYRK rejects 'C'; HERK rejects 'T'.
    let az = vec![C64::one(); 16];
    let mut cz = vec![poison::<C64>(); 16];
    let origz = cz.clone();
    unsafe {
        C64::syrk(Abi::Lp64, COL, false, b'U', b'C', 4, 4, C64::one(), az.as_ptr(), 4, C64::zero(), cz.as_mut_ptr(), 4);
        C64::syrk(Abi::Ilp64, COL, true, b'U', b'T', 4, 4, C64::one(), az.as_ptr(), 4, C64::zero(), cz.as_mut_ptr(), 4);
        C64::syr2k(
            Abi::Cblas,
            COL,
            true,
            b'L',
            b'T',
            4,
            4,
            C64::one(),
            az.as_ptr(),
            4,
            az.as_ptr(),
            4,
            C64::zero(),
            cz.as_mut_ptr(),
            4,
        );
        C64::syr2k(
            Abi::Lp64,
            COL,
            false,
            b'L',
            b'C',
            4,
            4,
            C64::one(),
            az.as_ptr(),
            4,
            az.as_ptr(),
            4,
            C64::zero(),
            cz.as_mut_ptr(),
            4,
        );
    }
    assert_eq!(cz, origz);
}

/// Reference CBLAS 3.11 quirk: row-major complex SYRK/SYR2K take ConjTrans as Trans, and
/// row-major HERK/HER2K take Trans as ConjTrans (the wrapper maps both to 'N').
#[test]
fn cblas_row_major_trans_aliases() {
    let mut rng = Rng::new(40);
    let (n, k) = (6, 4);
    let a: Vec<C64> = rng.vec(k * n);
    let b: Vec<C64> = rng.vec(k * n);
    let c0: Vec<C64> = rng.vec(n * n);
    let alpha = C64::new(0.7, -0.2);
    let beta = C64::new(0.3, 0.0);
    for (herm, two, alias, canon) in
        [(false, false, b'C', b'T'), (false, true, b'C', b'T'), (true, false, b'T', b'C'), (true, true, b'T', b'C')]
    {
        let run = |tr: u8| {
            let mut c = c0.clone();
            unsafe {
                if two {
                    C64::syr2k(
                        Abi::Cblas,
                        ROW,
                        herm,
                        b'U',
                        tr,
                        n,
                        k,
                        alpha,
                        a.as_ptr(),
                        n,
                        b.as_ptr(),
                        n,
                        beta,
                        c.as_mut_ptr(),
                        n,
                    )
                } else {
                    let alpha = if herm { C64::new(alpha.re, 0.0) } else { alpha };
                    C64::syrk(Abi::Cblas, ROW, herm, b'U', tr, n, k, alpha, a.as_ptr(), n, beta, c.as_mut_ptr(), n)
                }
            }
            c
        };
        assert_eq!(run(alias), run(canon), "herm={herm} two={two}");
        assert_ne!(run(canon), c0, "herm={herm} two={two}: the call must have run");
    }
}
