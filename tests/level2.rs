//! Level 2 BLAS through the exported symbols (Fortran LP64/ILP64, CBLAS LP64/ILP64 in both
//! layouts) against a dense reference computed here in complex double precision.
//!
//! Every call: random strided (also negative-increment) vectors with poisoned gaps, matrices
//! whose unreferenced elements (other triangle, unit diagonal, band corners, imaginary parts
//! of Hermitian diagonals) are NaN, outputs checked against the reference, inputs and gaps
//! checked bit-for-bit unchanged. Plus alpha == 0 (NaN A and x never read), beta == 0 (NaN y
//! overwritten), NaN propagation, sizes across the kernels' block edges with thresholds
//! lowered so the threaded paths run, and the argument checks (INFO values and "nothing
//! written") in a child process that can watch xerbla's messages.

mod common;

use common::{tol, Rng};
use hyblas::types::{Real, Scalar, C32, C64};
use std::ffi::c_int;
use std::sync::Once;

// ---------------------------------------------------------------------------------------
// The exported symbols.

/// Fortran declarations for one precision and integer width. The real/complex name pairs
/// (symv/hemv, ...) are declared under one Rust name; GERC is GER for real types.
macro_rules! fortran_decls {
    ($m:ident, $T:ty, $R:ty, $I:ty, $p:literal, $sfx:literal,
     $symv:literal, $sbmv:literal, $spmv:literal, $ger:literal, $gerc:literal,
     $syr:literal, $spr:literal, $syr2:literal, $spr2:literal) => {
        #[allow(dead_code, clippy::too_many_arguments)]
        mod $m {
            #[allow(unused_imports)]
            use super::*;
            type I = $I;
            type T = $T;
            extern "C" {
                #[link_name = concat!($p, "gemv", $sfx)]
                pub fn gemv(
                    t: *const u8,
                    m: *const I,
                    n: *const I,
                    al: *const T,
                    a: *const T,
                    lda: *const I,
                    x: *const T,
                    incx: *const I,
                    be: *const T,
                    y: *mut T,
                    incy: *const I,
                );
                #[link_name = concat!($p, "gbmv", $sfx)]
                pub fn gbmv(
                    t: *const u8,
                    m: *const I,
                    n: *const I,
                    kl: *const I,
                    ku: *const I,
                    al: *const T,
                    a: *const T,
                    lda: *const I,
                    x: *const T,
                    incx: *const I,
                    be: *const T,
                    y: *mut T,
                    incy: *const I,
                );
                #[link_name = concat!($p, $symv, $sfx)]
                pub fn symv(
                    u: *const u8,
                    n: *const I,
                    al: *const T,
                    a: *const T,
                    lda: *const I,
                    x: *const T,
                    incx: *const I,
                    be: *const T,
                    y: *mut T,
                    incy: *const I,
                );
                #[link_name = concat!($p, $sbmv, $sfx)]
                pub fn sbmv(
                    u: *const u8,
                    n: *const I,
                    k: *const I,
                    al: *const T,
                    a: *const T,
                    lda: *const I,
                    x: *const T,
                    incx: *const I,
                    be: *const T,
                    y: *mut T,
                    incy: *const I,
                );
                #[link_name = concat!($p, $spmv, $sfx)]
                pub fn spmv(
                    u: *const u8,
                    n: *const I,
                    al: *const T,
                    ap: *const T,
                    x: *const T,
                    incx: *const I,
                    be: *const T,
                    y: *mut T,
                    incy: *const I,
                );
                #[link_name = concat!($p, "trmv", $sfx)]
                pub fn trmv(
                    u: *const u8,
                    t: *const u8,
                    d: *const u8,
                    n: *const I,
                    a: *const T,
                    lda: *const I,
                    x: *mut T,
                    incx: *const I,
                );
                #[link_name = concat!($p, "trsv", $sfx)]
                pub fn trsv(
                    u: *const u8,
                    t: *const u8,
                    d: *const u8,
                    n: *const I,
                    a: *const T,
                    lda: *const I,
                    x: *mut T,
                    incx: *const I,
                );
                #[link_name = concat!($p, "tbmv", $sfx)]
                pub fn tbmv(
                    u: *const u8,
                    t: *const u8,
                    d: *const u8,
                    n: *const I,
                    k: *const I,
                    a: *const T,
                    lda: *const I,
                    x: *mut T,
                    incx: *const I,
                );
                #[link_name = concat!($p, "tbsv", $sfx)]
                pub fn tbsv(
                    u: *const u8,
                    t: *const u8,
                    d: *const u8,
                    n: *const I,
                    k: *const I,
                    a: *const T,
                    lda: *const I,
                    x: *mut T,
                    incx: *const I,
                );
                #[link_name = concat!($p, "tpmv", $sfx)]
                pub fn tpmv(
                    u: *const u8,
                    t: *const u8,
                    d: *const u8,
                    n: *const I,
                    ap: *const T,
                    x: *mut T,
                    incx: *const I,
                );
                #[link_name = concat!($p, "tpsv", $sfx)]
                pub fn tpsv(
                    u: *const u8,
                    t: *const u8,
                    d: *const u8,
                    n: *const I,
                    ap: *const T,
                    x: *mut T,
                    incx: *const I,
                );
                #[link_name = concat!($p, $ger, $sfx)]
                pub fn ger(
                    m: *const I,
                    n: *const I,
                    al: *const T,
                    x: *const T,
                    incx: *const I,
                    y: *const T,
                    incy: *const I,
                    a: *mut T,
                    lda: *const I,
                );
                #[link_name = concat!($p, $gerc, $sfx)]
                pub fn gerc(
                    m: *const I,
                    n: *const I,
                    al: *const T,
                    x: *const T,
                    incx: *const I,
                    y: *const T,
                    incy: *const I,
                    a: *mut T,
                    lda: *const I,
                );
                #[link_name = concat!($p, $syr, $sfx)]
                pub fn syr(
                    u: *const u8,
                    n: *const I,
                    al: *const $R,
                    x: *const T,
                    incx: *const I,
                    a: *mut T,
                    lda: *const I,
                );
                #[link_name = concat!($p, $spr, $sfx)]
                pub fn spr(u: *const u8, n: *const I, al: *const $R, x: *const T, incx: *const I, ap: *mut T);
                #[link_name = concat!($p, $syr2, $sfx)]
                pub fn syr2(
                    u: *const u8,
                    n: *const I,
                    al: *const T,
                    x: *const T,
                    incx: *const I,
                    y: *const T,
                    incy: *const I,
                    a: *mut T,
                    lda: *const I,
                );
                #[link_name = concat!($p, $spr2, $sfx)]
                pub fn spr2(
                    u: *const u8,
                    n: *const I,
                    al: *const T,
                    x: *const T,
                    incx: *const I,
                    y: *const T,
                    incy: *const I,
                    ap: *mut T,
                );
            }
        }
    };
}

/// CBLAS declarations; `$S` is how the precision passes alpha/beta (value or pointer).
macro_rules! cblas_decls {
    ($m:ident, $T:ty, $R:ty, $S:ty, $I:ty, $p:literal, $sfx:literal,
     $symv:literal, $sbmv:literal, $spmv:literal, $ger:literal, $gerc:literal,
     $syr:literal, $spr:literal, $syr2:literal, $spr2:literal) => {
        #[allow(dead_code, clippy::too_many_arguments)]
        mod $m {
            use super::*;
            type I = $I;
            type T = $T;
            type S = $S;
            type E = c_int;
            extern "C" {
                #[link_name = concat!("cblas_", $p, "gemv", $sfx)]
                pub fn gemv(
                    l: E,
                    t: E,
                    m: I,
                    n: I,
                    al: S,
                    a: *const T,
                    lda: I,
                    x: *const T,
                    incx: I,
                    be: S,
                    y: *mut T,
                    incy: I,
                );
                #[link_name = concat!("cblas_", $p, "gbmv", $sfx)]
                pub fn gbmv(
                    l: E,
                    t: E,
                    m: I,
                    n: I,
                    kl: I,
                    ku: I,
                    al: S,
                    a: *const T,
                    lda: I,
                    x: *const T,
                    incx: I,
                    be: S,
                    y: *mut T,
                    incy: I,
                );
                #[link_name = concat!("cblas_", $p, $symv, $sfx)]
                pub fn symv(
                    l: E,
                    u: E,
                    n: I,
                    al: S,
                    a: *const T,
                    lda: I,
                    x: *const T,
                    incx: I,
                    be: S,
                    y: *mut T,
                    incy: I,
                );
                #[link_name = concat!("cblas_", $p, $sbmv, $sfx)]
                pub fn sbmv(
                    l: E,
                    u: E,
                    n: I,
                    k: I,
                    al: S,
                    a: *const T,
                    lda: I,
                    x: *const T,
                    incx: I,
                    be: S,
                    y: *mut T,
                    incy: I,
                );
                #[link_name = concat!("cblas_", $p, $spmv, $sfx)]
                pub fn spmv(l: E, u: E, n: I, al: S, ap: *const T, x: *const T, incx: I, be: S, y: *mut T, incy: I);
                #[link_name = concat!("cblas_", $p, "trmv", $sfx)]
                pub fn trmv(l: E, u: E, t: E, d: E, n: I, a: *const T, lda: I, x: *mut T, incx: I);
                #[link_name = concat!("cblas_", $p, "trsv", $sfx)]
                pub fn trsv(l: E, u: E, t: E, d: E, n: I, a: *const T, lda: I, x: *mut T, incx: I);
                #[link_name = concat!("cblas_", $p, "tbmv", $sfx)]
                pub fn tbmv(l: E, u: E, t: E, d: E, n: I, k: I, a: *const T, lda: I, x: *mut T, incx: I);
                #[link_name = concat!("cblas_", $p, "tbsv", $sfx)]
                pub fn tbsv(l: E, u: E, t: E, d: E, n: I, k: I, a: *const T, lda: I, x: *mut T, incx: I);
                #[link_name = concat!("cblas_", $p, "tpmv", $sfx)]
                pub fn tpmv(l: E, u: E, t: E, d: E, n: I, ap: *const T, x: *mut T, incx: I);
                #[link_name = concat!("cblas_", $p, "tpsv", $sfx)]
                pub fn tpsv(l: E, u: E, t: E, d: E, n: I, ap: *const T, x: *mut T, incx: I);
                #[link_name = concat!("cblas_", $p, $ger, $sfx)]
                pub fn ger(l: E, m: I, n: I, al: S, x: *const T, incx: I, y: *const T, incy: I, a: *mut T, lda: I);
                #[link_name = concat!("cblas_", $p, $gerc, $sfx)]
                pub fn gerc(l: E, m: I, n: I, al: S, x: *const T, incx: I, y: *const T, incy: I, a: *mut T, lda: I);
                #[link_name = concat!("cblas_", $p, $syr, $sfx)]
                pub fn syr(l: E, u: E, n: I, al: $R, x: *const T, incx: I, a: *mut T, lda: I);
                #[link_name = concat!("cblas_", $p, $spr, $sfx)]
                pub fn spr(l: E, u: E, n: I, al: $R, x: *const T, incx: I, ap: *mut T);
                #[link_name = concat!("cblas_", $p, $syr2, $sfx)]
                pub fn syr2(l: E, u: E, n: I, al: S, x: *const T, incx: I, y: *const T, incy: I, a: *mut T, lda: I);
                #[link_name = concat!("cblas_", $p, $spr2, $sfx)]
                pub fn spr2(l: E, u: E, n: I, al: S, x: *const T, incx: I, y: *const T, incy: I, ap: *mut T);
            }
        }
    };
}

macro_rules! real_decls {
    ($T:ty, $p:literal, $f32m:ident, $f64m:ident, $c32m:ident, $c64m:ident) => {
        fortran_decls!($f32m, $T, $T, i32, $p, "_", "symv", "sbmv", "spmv", "ger", "ger", "syr", "spr", "syr2", "spr2");
        fortran_decls!(
            $f64m, $T, $T, i64, $p, "_64_", "symv", "sbmv", "spmv", "ger", "ger", "syr", "spr", "syr2", "spr2"
        );
        cblas_decls!(
            $c32m, $T, $T, $T, c_int, $p, "", "symv", "sbmv", "spmv", "ger", "ger", "syr", "spr", "syr2", "spr2"
        );
        cblas_decls!(
            $c64m, $T, $T, $T, i64, $p, "64_", "symv", "sbmv", "spmv", "ger", "ger", "syr", "spr", "syr2", "spr2"
        );
    };
}
macro_rules! complex_decls {
    ($T:ty, $R:ty, $p:literal, $f32m:ident, $f64m:ident, $c32m:ident, $c64m:ident) => {
        fortran_decls!(
            $f32m, $T, $R, i32, $p, "_", "hemv", "hbmv", "hpmv", "geru", "gerc", "her", "hpr", "her2", "hpr2"
        );
        fortran_decls!(
            $f64m, $T, $R, i64, $p, "_64_", "hemv", "hbmv", "hpmv", "geru", "gerc", "her", "hpr", "her2", "hpr2"
        );
        cblas_decls!(
            $c32m,
            $T,
            $R,
            *const $T,
            c_int,
            $p,
            "",
            "hemv",
            "hbmv",
            "hpmv",
            "geru",
            "gerc",
            "her",
            "hpr",
            "her2",
            "hpr2"
        );
        cblas_decls!(
            $c64m,
            $T,
            $R,
            *const $T,
            i64,
            $p,
            "64_",
            "hemv",
            "hbmv",
            "hpmv",
            "geru",
            "gerc",
            "her",
            "hpr",
            "her2",
            "hpr2"
        );
    };
}
real_decls!(f32, "s", s_f, s_f64, s_c, s_c64);
real_decls!(f64, "d", d_f, d_f64, d_c, d_c64);
complex_decls!(C32, f32, "c", c_f, c_f64, c_c, c_c64);
complex_decls!(C64, f64, "z", z_f, z_f64, z_c, z_c64);

// ---------------------------------------------------------------------------------------
// One call description for every routine and interface.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Rt {
    Gemv,
    Gbmv,
    Symv,
    Sbmv,
    Spmv,
    Trmv,
    Trsv,
    Tbmv,
    Tbsv,
    Tpmv,
    Tpsv,
    Ger,
    Gerc,
    Syr,
    Spr,
    Syr2,
    Spr2,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Api {
    Fortran { ilp: bool },
    Cblas { ilp: bool, row: bool },
}

const APIS: [Api; 6] = [
    Api::Fortran { ilp: false },
    Api::Fortran { ilp: true },
    Api::Cblas { ilp: false, row: false },
    Api::Cblas { ilp: false, row: true },
    Api::Cblas { ilp: true, row: false },
    Api::Cblas { ilp: true, row: true },
];

impl Api {
    fn row(self) -> bool {
        matches!(self, Api::Cblas { row: true, .. })
    }
}

/// Arguments as the caller writes them (CBLAS order/meaning for CBLAS calls). Enum options
/// as Fortran characters; for CBLAS they are mapped to the enum values (anything else to an
/// invalid value).
#[derive(Clone, Copy, Debug)]
struct Call<T> {
    layout: c_int,
    m: i64,
    n: i64,
    kl: i64,
    ku: i64,
    k: i64,
    uplo: u8,
    trans: u8,
    diag: u8,
    alpha: T,
    beta: T,
    a: *mut T,
    lda: i64,
    x: *mut T,
    incx: i64,
    y: *mut T,
    incy: i64,
}

fn e_uplo(c: u8) -> c_int {
    match c {
        b'U' => 121,
        b'L' => 122,
        _ => 7,
    }
}
fn e_trans(c: u8) -> c_int {
    match c {
        b'N' => 111,
        b'T' => 112,
        b'C' => 113,
        _ => 7,
    }
}
fn e_diag(c: u8) -> c_int {
    match c {
        b'N' => 131,
        b'U' => 132,
        _ => 7,
    }
}

trait L2: Scalar {
    /// # Safety
    /// The call's pointers are valid for the call's shape.
    unsafe fn call(api: Api, r: Rt, c: &Call<Self>);
}

macro_rules! fcall {
    ($m:ident, $I:ty, $r:expr, $c:expr) => {{
        let c = $c;
        let (m, n, kl, ku, k) = (c.m as $I, c.n as $I, c.kl as $I, c.ku as $I, c.k as $I);
        let (lda, incx, incy) = (c.lda as $I, c.incx as $I, c.incy as $I);
        let (u, t, d) = (&c.uplo as *const u8, &c.trans as *const u8, &c.diag as *const u8);
        let (al, be) = (&c.alpha as *const _, &c.beta as *const _);
        let alr = c.alpha.re();
        match $r {
            Rt::Gemv => $m::gemv(t, &m, &n, al, c.a, &lda, c.x, &incx, be, c.y, &incy),
            Rt::Gbmv => $m::gbmv(t, &m, &n, &kl, &ku, al, c.a, &lda, c.x, &incx, be, c.y, &incy),
            Rt::Symv => $m::symv(u, &n, al, c.a, &lda, c.x, &incx, be, c.y, &incy),
            Rt::Sbmv => $m::sbmv(u, &n, &k, al, c.a, &lda, c.x, &incx, be, c.y, &incy),
            Rt::Spmv => $m::spmv(u, &n, al, c.a, c.x, &incx, be, c.y, &incy),
            Rt::Trmv => $m::trmv(u, t, d, &n, c.a, &lda, c.x, &incx),
            Rt::Trsv => $m::trsv(u, t, d, &n, c.a, &lda, c.x, &incx),
            Rt::Tbmv => $m::tbmv(u, t, d, &n, &k, c.a, &lda, c.x, &incx),
            Rt::Tbsv => $m::tbsv(u, t, d, &n, &k, c.a, &lda, c.x, &incx),
            Rt::Tpmv => $m::tpmv(u, t, d, &n, c.a, c.x, &incx),
            Rt::Tpsv => $m::tpsv(u, t, d, &n, c.a, c.x, &incx),
            Rt::Ger => $m::ger(&m, &n, al, c.x, &incx, c.y, &incy, c.a, &lda),
            Rt::Gerc => $m::gerc(&m, &n, al, c.x, &incx, c.y, &incy, c.a, &lda),
            Rt::Syr => $m::syr(u, &n, &alr, c.x, &incx, c.a, &lda),
            Rt::Spr => $m::spr(u, &n, &alr, c.x, &incx, c.a),
            Rt::Syr2 => $m::syr2(u, &n, al, c.x, &incx, c.y, &incy, c.a, &lda),
            Rt::Spr2 => $m::spr2(u, &n, al, c.x, &incx, c.y, &incy, c.a),
        }
    }};
}

macro_rules! ccall {
    ($m:ident, $I:ty, $r:expr, $c:expr, $arg:expr) => {{
        let c = $c;
        let (m, n, kl, ku, k) = (c.m as $I, c.n as $I, c.kl as $I, c.ku as $I, c.k as $I);
        let (lda, incx, incy) = (c.lda as $I, c.incx as $I, c.incy as $I);
        let (u, t, d, l) = (e_uplo(c.uplo), e_trans(c.trans), e_diag(c.diag), c.layout);
        let (al, be) = ($arg(&c.alpha), $arg(&c.beta));
        let alr = c.alpha.re();
        match $r {
            Rt::Gemv => $m::gemv(l, t, m, n, al, c.a, lda, c.x, incx, be, c.y, incy),
            Rt::Gbmv => $m::gbmv(l, t, m, n, kl, ku, al, c.a, lda, c.x, incx, be, c.y, incy),
            Rt::Symv => $m::symv(l, u, n, al, c.a, lda, c.x, incx, be, c.y, incy),
            Rt::Sbmv => $m::sbmv(l, u, n, k, al, c.a, lda, c.x, incx, be, c.y, incy),
            Rt::Spmv => $m::spmv(l, u, n, al, c.a, c.x, incx, be, c.y, incy),
            Rt::Trmv => $m::trmv(l, u, t, d, n, c.a, lda, c.x, incx),
            Rt::Trsv => $m::trsv(l, u, t, d, n, c.a, lda, c.x, incx),
            Rt::Tbmv => $m::tbmv(l, u, t, d, n, k, c.a, lda, c.x, incx),
            Rt::Tbsv => $m::tbsv(l, u, t, d, n, k, c.a, lda, c.x, incx),
            Rt::Tpmv => $m::tpmv(l, u, t, d, n, c.a, c.x, incx),
            Rt::Tpsv => $m::tpsv(l, u, t, d, n, c.a, c.x, incx),
            Rt::Ger => $m::ger(l, m, n, al, c.x, incx, c.y, incy, c.a, lda),
            Rt::Gerc => $m::gerc(l, m, n, al, c.x, incx, c.y, incy, c.a, lda),
            Rt::Syr => $m::syr(l, u, n, alr, c.x, incx, c.a, lda),
            Rt::Spr => $m::spr(l, u, n, alr, c.x, incx, c.a),
            Rt::Syr2 => $m::syr2(l, u, n, al, c.x, incx, c.y, incy, c.a, lda),
            Rt::Spr2 => $m::spr2(l, u, n, al, c.x, incx, c.y, incy, c.a),
        }
    }};
}

macro_rules! impl_l2 {
    ($T:ty, $f:ident, $f64:ident, $c:ident, $c64:ident, $arg:expr) => {
        impl L2 for $T {
            unsafe fn call(api: Api, r: Rt, c: &Call<Self>) {
                match api {
                    Api::Fortran { ilp: false } => fcall!($f, i32, r, c),
                    Api::Fortran { ilp: true } => fcall!($f64, i64, r, c),
                    Api::Cblas { ilp: false, .. } => ccall!($c, c_int, r, c, $arg),
                    Api::Cblas { ilp: true, .. } => ccall!($c64, i64, r, c, $arg),
                }
            }
        }
    };
}
impl_l2!(f32, s_f, s_f64, s_c, s_c64, |v: &f32| *v);
impl_l2!(f64, d_f, d_f64, d_c, d_c64, |v: &f64| *v);
impl_l2!(C32, c_f, c_f64, c_c, c_c64, |v: &C32| v as *const C32);
impl_l2!(C64, z_f, z_f64, z_c, z_c64, |v: &C64| v as *const C64);

// ---------------------------------------------------------------------------------------
// Storage: which buffer positions hold which matrix elements.

#[derive(Clone, Copy, Debug)]
enum Kind {
    /// m x n general.
    Ge,
    /// Triangle (upper or lower) of an n x n matrix, full storage.
    Tri { upper: bool },
    /// Packed triangle.
    Packed { upper: bool },
    /// Band with kl sub- and ku super-diagonals.
    Band { kl: usize, ku: usize },
}

/// (buffer index, row, column) of every stored element of the column-major interpretation.
fn storage_map(kind: Kind, m: usize, n: usize, lda: usize) -> Vec<(usize, usize, usize)> {
    let mut v = Vec::new();
    match kind {
        Kind::Ge => {
            for j in 0..n {
                for i in 0..m {
                    v.push((i + j * lda, i, j));
                }
            }
        }
        Kind::Tri { upper } => {
            for j in 0..n {
                let rows = if upper { 0..j + 1 } else { j..n };
                for i in rows {
                    v.push((i + j * lda, i, j));
                }
            }
        }
        Kind::Packed { upper } => {
            let mut idx = 0;
            for j in 0..n {
                let rows = if upper { 0..j + 1 } else { j..n };
                for i in rows {
                    v.push((idx, i, j));
                    idx += 1;
                }
            }
        }
        Kind::Band { kl, ku } => {
            for j in 0..n {
                for i in j.saturating_sub(ku)..m.min(j + kl + 1) {
                    v.push((ku + i - j + j * lda, i, j));
                }
            }
        }
    }
    v
}

fn buf_len(kind: Kind, n: usize, lda: usize) -> usize {
    match kind {
        Kind::Packed { .. } => n * (n + 1) / 2,
        _ => lda * n.max(1),
    }
}

type Dense = Vec<Vec<C64>>;

fn c<T: Scalar>(v: T) -> C64 {
    common::to_c64(v)
}

fn from_c<T: Scalar>(v: C64) -> T {
    T::from_parts(<T::Real as Scalar>::from_f64(v.re), <T::Real as Scalar>::from_f64(v.im))
}

fn nan<T: Scalar>() -> T {
    T::from_parts(<T::Real as num_traits::Float>::nan(), <T::Real as num_traits::Float>::nan())
}

fn same_bits<T: Scalar>(a: T, b: T) -> bool {
    let (a, b) = (c(a), c(b));
    (a.re.to_bits() == b.re.to_bits() || a.re.is_nan() && b.re.is_nan())
        && (a.im.to_bits() == b.im.to_bits() || a.im.is_nan() && b.im.is_nan())
}

/// A strided vector buffer: logical element i at `start + i*inc`, gaps poisoned.
struct SVec<T> {
    buf: Vec<T>,
    n: usize,
    inc: i64,
}

impl<T: Scalar> SVec<T> {
    fn new(rng: &mut Rng, n: usize, inc: i64) -> Self {
        let len = 1 + n.saturating_sub(1) * inc.unsigned_abs() as usize;
        let mut buf = vec![common::poison::<T>(); len.max(1)];
        let mut s = SVec { buf: Vec::new(), n, inc };
        for i in 0..n {
            let p = s.pos_in(len, i);
            buf[p] = rng.scalar();
        }
        s.buf = buf;
        s
    }
    fn pos_in(&self, len: usize, i: usize) -> usize {
        if self.inc > 0 {
            i * self.inc as usize
        } else {
            len - 1 - i * self.inc.unsigned_abs() as usize
        }
    }
    fn pos(&self, i: usize) -> usize {
        self.pos_in(self.buf.len(), i)
    }
    fn get(&self, i: usize) -> T {
        self.buf[self.pos(i)]
    }
    fn set(&mut self, i: usize, v: T) {
        let p = self.pos(i);
        self.buf[p] = v;
    }
    fn logical(&self) -> Vec<C64> {
        (0..self.n).map(|i| c(self.get(i))).collect()
    }
    fn is_element(&self, p: usize) -> bool {
        (0..self.n).any(|i| self.pos(i) == p)
    }
}

/// A matrix operand: its buffer and the storage description of its column-major
/// interpretation `B`. For a row-major CBLAS call the matrix meant is `B^T`.
struct Mat<T> {
    buf: Vec<T>,
    kind: Kind,
    /// Dimensions of the column-major interpretation.
    bm: usize,
    bn: usize,
    lda: usize,
    row: bool,
}

impl<T: Scalar> Mat<T> {
    /// Random stored elements, NaN everywhere else in the buffer. `m x n` is the matrix as
    /// the caller sees it; `kind` is in the caller's terms (flipped for row-major here).
    fn new(rng: &mut Rng, kind: Kind, m: usize, n: usize, lda: usize, row: bool) -> Self {
        let (bm, bn, bkind) = if row {
            let k = match kind {
                Kind::Ge => Kind::Ge,
                Kind::Tri { upper } => Kind::Tri { upper: !upper },
                Kind::Packed { upper } => Kind::Packed { upper: !upper },
                Kind::Band { kl, ku } => Kind::Band { kl: ku, ku: kl },
            };
            (n, m, k)
        } else {
            (m, n, kind)
        };
        let mut buf = vec![nan::<T>(); buf_len(bkind, bn, lda)];
        for (p, _, _) in storage_map(bkind, bm, bn, lda) {
            buf[p] = rng.scalar();
        }
        Mat { buf, kind: bkind, bm, bn, lda, row }
    }
    /// The stored elements as the caller's dense matrix (unstored ones zero).
    fn stored(&self) -> Dense {
        let (m, n) = if self.row { (self.bn, self.bm) } else { (self.bm, self.bn) };
        let mut d = vec![vec![C64::new(0.0, 0.0); n]; m];
        for (p, i, j) in storage_map(self.kind, self.bm, self.bn, self.lda) {
            let (i, j) = if self.row { (j, i) } else { (i, j) };
            d[i][j] = c(self.buf[p]);
        }
        d
    }
    /// Caller's (i, j) -> buffer position, if stored.
    fn position(&self) -> Vec<(usize, usize, usize)> {
        storage_map(self.kind, self.bm, self.bn, self.lda)
            .into_iter()
            .map(|(p, i, j)| if self.row { (p, j, i) } else { (p, i, j) })
            .collect()
    }
}

/// The symmetric (real) / Hermitian (complex) matrix whose `upper`/lower triangle is stored.
fn complete_sym<T: Scalar>(d: &Dense, upper: bool) -> Dense {
    let n = d.len();
    let mut s = d.clone();
    for i in 0..n {
        for j in 0..n {
            let from_stored = if upper { i <= j } else { i >= j };
            s[i][j] = if from_stored {
                d[i][j]
            } else if T::IS_COMPLEX {
                d[j][i].conj()
            } else {
                d[j][i]
            };
        }
        if T::IS_COMPLEX {
            s[i][i] = C64::new(d[i][i].re, 0.0);
        }
    }
    s
}

fn op_apply(a: &Dense, trans: u8, x: &[C64]) -> Vec<C64> {
    let m = a.len();
    let n = if m > 0 { a[0].len() } else { x.len() };
    match trans {
        b'N' => (0..m).map(|i| (0..n).map(|j| a[i][j] * x[j]).sum()).collect(),
        b'T' => (0..n).map(|j| (0..m).map(|i| a[i][j] * x[i]).sum()).collect(),
        _ => (0..n).map(|j| (0..m).map(|i| a[i][j].conj() * x[i]).sum()).collect(),
    }
}

/// |got - want| <= tol * scale, scale from the magnitudes involved.
fn check_close<T: Scalar>(got: &[C64], want: &[C64], k: usize, scale: f64, what: &str) {
    let t = tol::<T>(k) * scale.max(1.0);
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).norm() <= t, "{what}: element {i}: got {g}, want {w} (tol {t:e})");
    }
}

fn apis_for(i: usize) -> Api {
    APIS[i % APIS.len()]
}

fn layout(api: Api) -> c_int {
    if api.row() {
        101
    } else {
        102
    }
}

static INIT: Once = Once::new();

/// Lower the parallel thresholds so that moderate sizes exercise the threaded paths.
fn init() {
    INIT.call_once(|| {
        for key in ["HYBLAS_GEMV_PAR_MIN", "HYBLAS_SYMV_PAR_MIN", "HYBLAS_RANK_PAR_MIN"] {
            if std::env::var_os(key).is_none() {
                std::env::set_var(key, "2000");
            }
        }
    });
}

fn scalars<T: Scalar>(rng: &mut Rng, which: usize) -> T {
    match which % 3 {
        0 => T::zero(),
        1 => T::one(),
        _ => rng.scalar(),
    }
}

const INCS: [i64; 5] = [1, -1, 2, -3, 1];

// ---------------------------------------------------------------------------------------
// y := alpha*op(A)*x + beta*y: GEMV, GBMV, SYMV/HEMV, SBMV/HBMV, SPMV/HPMV.

#[derive(Clone, Copy)]
struct MvCase {
    r: Rt,
    api: Api,
    m: usize,
    n: usize,
    kl: usize,
    ku: usize,
    trans: u8,
    uplo: u8,
    ai: usize,
    bi: usize,
    incx: i64,
    incy: i64,
    special: u8,
}

fn run_mv<T: L2>(rng: &mut Rng, cs: MvCase) {
    let MvCase { r, api, m, n, kl, ku, trans, uplo, ai, bi, incx, incy, special } = cs;
    let upper = uplo == b'U';
    let row = api.row();
    let (kind, m) = match r {
        Rt::Gemv => (Kind::Ge, m),
        Rt::Gbmv => (Kind::Band { kl, ku }, m),
        Rt::Symv => (Kind::Tri { upper }, n),
        Rt::Sbmv => (if upper { Kind::Band { kl: 0, ku: kl } } else { Kind::Band { kl, ku: 0 } }, n),
        _ => (Kind::Packed { upper }, n),
    };
    let lda = match kind {
        Kind::Band { kl, ku } => kl + ku + 1 + (ai % 2),
        // lda counts rows of the column-major interpretation.
        _ => (if row { n } else { m }).max(1) + (bi % 3),
    };
    let mut a = Mat::<T>::new(rng, kind, m, n, lda, row);
    let (lx, ly) = if r == Rt::Gemv || r == Rt::Gbmv {
        if trans == b'N' {
            (n, m)
        } else {
            (m, n)
        }
    } else {
        (n, n)
    };
    let mut x = SVec::<T>::new(rng, lx, incx);
    let mut y = SVec::<T>::new(rng, ly, incy);
    let mut alpha: T = scalars(rng, ai);
    let beta: T = scalars(rng, bi);
    let herm = T::IS_COMPLEX && !matches!(r, Rt::Gemv | Rt::Gbmv);
    // Hermitian diagonals are read as real: poison their imaginary parts.
    if herm {
        for (p, i, j) in a.position() {
            if i == j {
                let v = a.buf[p];
                a.buf[p] = T::from_parts(v.re(), <T::Real as num_traits::Float>::nan());
            }
        }
    }
    match special {
        // alpha == 0: A and x must not be read.
        1 => {
            alpha = T::zero();
            a.buf.iter_mut().for_each(|v| *v = nan());
            for i in 0..lx {
                x.set(i, nan());
            }
        }
        // NaN in A propagates to y (A's first stored element, x all nonzero).
        2 => {
            if let Some(&(p, _, _)) = a.position().first() {
                a.buf[p] = nan();
            }
        }
        // GEMV/GBMV N: a column whose x(j) is zero is skipped, NaN or not (reference BLAS).
        3 => {
            let j0 = n / 2;
            x.set(j0, T::zero());
            for (p, _, j) in a.position() {
                if j == j0 {
                    a.buf[p] = nan();
                }
            }
        }
        _ => {}
    }
    // beta == 0: y must be overwritten, NaN or not.
    if beta.is_zero() {
        for i in 0..ly {
            y.set(i, nan());
        }
    }
    let mut ad = a.stored();
    if special == 3 {
        for row in ad.iter_mut() {
            row[n / 2] = C64::new(0.0, 0.0);
        }
    }
    let dense = match r {
        Rt::Gemv | Rt::Gbmv => ad.clone(),
        _ => complete_sym::<T>(&ad, upper),
    };
    let (xs, ys) = (x.logical(), y.logical());
    let (a0, x0, y0) = (a.buf.clone(), x.buf.clone(), y.buf.clone());
    let tr = if r == Rt::Gemv || r == Rt::Gbmv { trans } else { b'N' };
    let call = Call {
        layout: layout(api),
        m: m as i64,
        n: n as i64,
        kl: kl as i64,
        ku: ku as i64,
        k: kl as i64,
        uplo,
        trans,
        diag: b'N',
        alpha,
        beta,
        a: a.buf.as_mut_ptr(),
        lda: lda as i64,
        x: x.buf.as_mut_ptr(),
        incx,
        y: y.buf.as_mut_ptr(),
        incy,
    };
    // SAFETY: buffers sized for the call.
    unsafe { T::call(api, r, &call) };
    let what = format!("{}{:?} {api:?} m={m} n={n} kl={kl} ku={ku} trans={} uplo={} alpha={alpha:?} beta={beta:?} incx={incx} incy={incy} special={special}", T::PREFIX, r, trans as char, uplo as char);
    // Inputs untouched.
    assert!(a.buf.iter().zip(&a0).all(|(&p, &q)| same_bits(p, q)), "{what}: A modified");
    assert!(x.buf.iter().zip(&x0).all(|(&p, &q)| same_bits(p, q)), "{what}: x modified");
    for (p, (&now, &before)) in y.buf.iter().zip(&y0).enumerate() {
        if !y.is_element(p) {
            assert!(same_bits(now, before), "{what}: y gap {p} modified");
        }
    }
    let got = y.logical();
    let quick = m == 0 || n == 0 || (alpha.is_zero() && beta.is_one());
    if quick {
        assert!(y.buf.iter().zip(&y0).all(|(&p, &q)| same_bits(p, q)), "{what}: quick return wrote y");
        return;
    }
    let (cb, ca) = (c(beta), c(alpha));
    if special == 1 {
        // y = beta*y, computed in T exactly as the library does.
        for (i, &old) in ys.iter().enumerate() {
            let want = if beta.is_zero() { T::zero() } else { beta * from_c::<T>(old) };
            assert!(same_bits(y.get(i), want), "{what}: alpha=0 element {i}: got {:?} want {want:?}", y.get(i));
        }
        return;
    }
    if special == 2 {
        let bad = got.iter().filter(|v| v.re.is_nan() || v.im.is_nan()).count();
        assert!(bad > 0, "{what}: NaN in A did not reach y");
        return;
    }
    let ax = op_apply(&dense, tr, &xs);
    let want: Vec<C64> = (0..ly).map(|i| if beta.is_zero() { ca * ax[i] } else { ca * ax[i] + cb * ys[i] }).collect();
    let scale = want.iter().chain(&ys).map(|v| v.norm()).fold(1.0, f64::max) * (1.0 + ca.norm());
    check_close::<T>(&got, &want, m.max(n), scale, &what);
}

fn mv_suite<T: L2>(seed: u64) {
    init();
    let mut rng = Rng::new(seed);
    let dims: &[(usize, usize)] = &[
        (0, 0),
        (0, 3),
        (3, 0),
        (1, 1),
        (2, 3),
        (3, 2),
        (5, 7),
        (7, 5),
        (16, 16),
        (17, 15),
        (31, 33),
        (64, 64),
        (65, 63),
        (70, 130),
        (130, 70),
    ];
    let mut idx = 0usize;
    for &(m, n) in dims {
        for r in [Rt::Gemv, Rt::Gbmv, Rt::Symv, Rt::Sbmv, Rt::Spmv] {
            for opt in 0..3 {
                let (trans, uplo) = ([b'N', b'T', b'C'][opt], [b'U', b'L', b'U'][opt]);
                if r != Rt::Gemv && r != Rt::Gbmv && opt == 2 {
                    continue;
                }
                let bands = [(0, 0), (1, 2), (3, 1), (40, 70)];
                let (kl, ku) = bands[idx % bands.len()];
                let case = MvCase {
                    r,
                    api: apis_for(idx),
                    m,
                    n,
                    kl,
                    ku,
                    trans,
                    uplo,
                    ai: idx / 2,
                    bi: idx / 6,
                    incx: INCS[idx % 5],
                    incy: INCS[(idx / 5) % 5],
                    special: 0,
                };
                run_mv::<T>(&mut rng, case);
                // Every layout/interface for the same shape, plus alpha == 0 and NaN checks.
                if idx.is_multiple_of(4) {
                    for api in APIS {
                        run_mv::<T>(&mut rng, MvCase { api, ..case });
                    }
                }
                if m > 0 && n > 0 && idx.is_multiple_of(3) {
                    run_mv::<T>(&mut rng, MvCase { special: 1, ..case });
                    run_mv::<T>(&mut rng, MvCase { special: 2, ai: 1, bi: 1, ..case });
                }
                if m > 0 && n > 0 && trans == b'N' && (r == Rt::Gemv || r == Rt::Gbmv) && !case.api.row() {
                    run_mv::<T>(&mut rng, MvCase { special: 3, ai: 2, bi: 2, ..case });
                }
                idx += 1;
            }
        }
    }
    // Tall GEMV past the kernel's row block, and a wide one (threads by rows/columns).
    for (m, n) in [(4300, 5), (5, 4300), (300, 301)] {
        for (i, trans) in [b'N', b'T', b'C'].into_iter().enumerate() {
            let api = APIS[i * 2 + 1];
            let case = MvCase {
                r: Rt::Gemv,
                api,
                m,
                n,
                kl: 0,
                ku: 0,
                trans,
                uplo: b'U',
                ai: 2,
                bi: 2,
                incx: 1,
                incy: -2,
                special: 0,
            };
            run_mv::<T>(&mut rng, case);
            run_mv::<T>(&mut rng, MvCase { incx: 2, incy: 1, api: APIS[i], ..case });
        }
    }
    for n in [150, 301] {
        for uplo in [b'U', b'L'] {
            for r in [Rt::Symv, Rt::Spmv] {
                for api in [APIS[0], APIS[3]] {
                    let case = MvCase {
                        r,
                        api,
                        m: n,
                        n,
                        kl: 0,
                        ku: 0,
                        trans: b'N',
                        uplo,
                        ai: 2,
                        bi: 2,
                        incx: -1,
                        incy: 1,
                        special: 0,
                    };
                    run_mv::<T>(&mut rng, case);
                }
            }
        }
    }
}

#[test]
fn mv_s() {
    mv_suite::<f32>(11);
}
#[test]
fn mv_d() {
    mv_suite::<f64>(12);
}
#[test]
fn mv_c() {
    mv_suite::<C32>(13);
}
#[test]
fn mv_z() {
    mv_suite::<C64>(14);
}

// ---------------------------------------------------------------------------------------
// Triangular: x := op(A)*x and op(A)*x = b, full, band and packed.

#[allow(clippy::too_many_arguments)]
fn run_tri<T: L2>(rng: &mut Rng, r: Rt, api: Api, n: usize, k: usize, uplo: u8, trans: u8, diag: u8, incx: i64) {
    let upper = uplo == b'U';
    let row = api.row();
    let kind = match r {
        Rt::Trmv | Rt::Trsv => Kind::Tri { upper },
        Rt::Tbmv | Rt::Tbsv => {
            if upper {
                Kind::Band { kl: 0, ku: k }
            } else {
                Kind::Band { kl: k, ku: 0 }
            }
        }
        _ => Kind::Packed { upper },
    };
    let lda = match kind {
        Kind::Band { .. } => k + 1 + (n % 2),
        _ => n.max(1) + (k % 3),
    };
    let mut a = Mat::<T>::new(rng, kind, n, n, lda, row);
    let solve = matches!(r, Rt::Trsv | Rt::Tbsv | Rt::Tpsv);
    // Well-conditioned: diagonal of size ~2, small off-diagonal entries.
    for (p, i, j) in a.position() {
        let v = a.buf[p];
        a.buf[p] = if i == j {
            if diag == b'U' {
                nan()
            } else {
                v + T::from_f64(if v.re() >= <T::Real as Scalar>::zero() { 1.5 } else { -1.5 })
            }
        } else {
            v.mul_real(<T::Real as Scalar>::from_f64(1.0 / (n as f64).sqrt().max(1.0)))
        };
    }
    let mut dense = a.stored();
    for (i, row) in dense.iter_mut().enumerate() {
        if diag == b'U' {
            row[i] = C64::new(1.0, 0.0);
        }
    }
    let mut x = SVec::<T>::new(rng, n, incx);
    let (a0, x0) = (a.buf.clone(), x.buf.clone());
    let xs = x.logical();
    let call = Call {
        layout: layout(api),
        m: n as i64,
        n: n as i64,
        kl: 0,
        ku: 0,
        k: k as i64,
        uplo,
        trans,
        diag,
        alpha: T::one(),
        beta: T::one(),
        a: a.buf.as_mut_ptr(),
        lda: lda as i64,
        x: x.buf.as_mut_ptr(),
        incx,
        y: std::ptr::null_mut(),
        incy: 1,
    };
    // SAFETY: buffers sized for the call.
    unsafe { T::call(api, r, &call) };
    let what = format!(
        "{}{:?} {api:?} n={n} k={k} uplo={} trans={} diag={} incx={incx}",
        T::PREFIX,
        r,
        uplo as char,
        trans as char,
        diag as char
    );
    assert!(a.buf.iter().zip(&a0).all(|(&p, &q)| same_bits(p, q)), "{what}: A modified");
    for (p, (&now, &before)) in x.buf.iter().zip(&x0).enumerate() {
        if !x.is_element(p) {
            assert!(same_bits(now, before), "{what}: x gap modified");
        }
    }
    let got = x.logical();
    if solve {
        // Residual: op(A)*x_got must give back b.
        let back = op_apply(&dense, trans, &got);
        let scale = got.iter().chain(&xs).map(|v| v.norm()).fold(1.0, f64::max) * 4.0;
        check_close::<T>(&back, &xs, n, scale, &what);
    } else {
        let want = op_apply(&dense, trans, &xs);
        let scale = want.iter().chain(&xs).map(|v| v.norm()).fold(1.0, f64::max) * 4.0;
        check_close::<T>(&got, &want, n, scale, &what);
    }
}

fn tri_suite<T: L2>(seed: u64) {
    init();
    let mut rng = Rng::new(seed);
    let mut idx = 0usize;
    for n in [0usize, 1, 2, 3, 7, 16, 63, 64, 65, 130] {
        for r in [Rt::Trmv, Rt::Trsv, Rt::Tbmv, Rt::Tbsv, Rt::Tpmv, Rt::Tpsv] {
            for uplo in [b'U', b'L'] {
                for trans in [b'N', b'T', b'C'] {
                    for diag in [b'N', b'U'] {
                        let ks = [0usize, 1, 3, n + 2];
                        let k = ks[idx % 4];
                        let api = if n <= 16 { APIS[idx % 6] } else { APIS[(idx / 3) % 6] };
                        run_tri::<T>(&mut rng, r, api, n, k, uplo, trans, diag, INCS[idx % 5]);
                        idx += 1;
                    }
                }
            }
        }
    }
    // Larger: several diagonal blocks with GEMV updates between them.
    for r in [Rt::Trmv, Rt::Trsv, Rt::Tpmv, Rt::Tpsv] {
        for uplo in [b'U', b'L'] {
            for trans in [b'N', b'T', b'C'] {
                idx += 1;
                run_tri::<T>(&mut rng, r, APIS[idx % 6], 300, 0, uplo, trans, b'N', INCS[idx % 5]);
            }
        }
    }
}

#[test]
fn tri_s() {
    tri_suite::<f32>(21);
}
#[test]
fn tri_d() {
    tri_suite::<f64>(22);
}
#[test]
fn tri_c() {
    tri_suite::<C32>(23);
}
#[test]
fn tri_z() {
    tri_suite::<C64>(24);
}

// ---------------------------------------------------------------------------------------
// Rank updates: GER/GERU/GERC, SYR/HER, SPR/HPR, SYR2/HER2, SPR2/HPR2.

#[allow(clippy::too_many_arguments)]
fn run_rank<T: L2>(
    rng: &mut Rng,
    r: Rt,
    api: Api,
    m: usize,
    n: usize,
    uplo: u8,
    ai: usize,
    incx: i64,
    incy: i64,
    zero_x: bool,
) {
    let upper = uplo == b'U';
    let row = api.row();
    let herm = T::IS_COMPLEX && matches!(r, Rt::Syr | Rt::Spr | Rt::Syr2 | Rt::Spr2);
    let (kind, m) = match r {
        Rt::Ger | Rt::Gerc => (Kind::Ge, m),
        Rt::Syr | Rt::Syr2 => (Kind::Tri { upper }, n),
        _ => (Kind::Packed { upper }, n),
    };
    let lda = (if row { n } else { m }).max(1) + (ai % 2);
    let mut a = Mat::<T>::new(rng, kind, m, n, lda, row);
    let mut x = SVec::<T>::new(rng, m, incx);
    let y = SVec::<T>::new(rng, n, incy);
    let mut y = y;
    let mut alpha: T = match ai % 3 {
        0 => T::zero(),
        1 => T::one(),
        _ => rng.scalar(),
    };
    if matches!(r, Rt::Syr | Rt::Spr) {
        // HER/HPR take a real alpha.
        alpha = T::from_real(alpha.re());
    }
    if herm {
        // Diagonal imaginary parts are ignored on input and zero on output.
        for (p, i, j) in a.position() {
            if i == j {
                let v = a.buf[p];
                a.buf[p] = T::from_parts(v.re(), <T::Real as num_traits::Float>::nan());
            }
        }
    }
    if zero_x {
        // Some zero entries (columns the reference skips).
        for i in (0..x.n).step_by(2) {
            x.set(i, T::zero());
        }
        if matches!(r, Rt::Syr2 | Rt::Spr2) {
            for i in (0..y.n).step_by(2) {
                y.set(i, T::zero());
            }
        }
    }
    if alpha.is_zero() {
        // alpha == 0 reads neither x nor y.
        for i in 0..x.n {
            x.set(i, nan());
        }
        for i in 0..y.n {
            y.set(i, nan());
        }
    }
    let a0 = a.buf.clone();
    let (x0, y0) = (x.buf.clone(), y.buf.clone());
    let (xs, ys) = (x.logical(), y.logical());
    let call = Call {
        layout: layout(api),
        m: m as i64,
        n: n as i64,
        kl: 0,
        ku: 0,
        k: 0,
        uplo,
        trans: b'N',
        diag: b'N',
        alpha,
        beta: T::one(),
        a: a.buf.as_mut_ptr(),
        lda: lda as i64,
        x: x.buf.as_mut_ptr(),
        incx,
        y: y.buf.as_mut_ptr(),
        incy,
    };
    // SAFETY: buffers sized for the call.
    unsafe { T::call(api, r, &call) };
    let what = format!(
        "{}{:?} {api:?} m={m} n={n} uplo={} alpha={alpha:?} incx={incx} incy={incy} zero_x={zero_x}",
        T::PREFIX,
        r,
        uplo as char
    );
    assert!(x.buf.iter().zip(&x0).all(|(&p, &q)| same_bits(p, q)), "{what}: x modified");
    assert!(y.buf.iter().zip(&y0).all(|(&p, &q)| same_bits(p, q)), "{what}: y modified");
    let quick = m == 0 || n == 0 || alpha.is_zero();
    if quick {
        assert!(a.buf.iter().zip(&a0).all(|(&p, &q)| same_bits(p, q)), "{what}: quick return wrote A");
        return;
    }
    let ca = c(alpha);
    let stored: Vec<(usize, usize, usize)> = a.position();
    let mut is_stored = vec![false; a.buf.len()];
    for &(p, _, _) in &stored {
        is_stored[p] = true;
    }
    for p in 0..a.buf.len() {
        if !is_stored[p] {
            assert!(same_bits(a.buf[p], a0[p]), "{what}: unreferenced A element {p} modified");
        }
    }
    let mut got = Vec::new();
    let mut want = Vec::new();
    for &(p, i, j) in &stored {
        let old = c(a0[p]);
        let upd = match r {
            Rt::Ger => ca * xs[i] * ys[j],
            Rt::Gerc => ca * xs[i] * if T::IS_COMPLEX { ys[j].conj() } else { ys[j] },
            Rt::Syr | Rt::Spr => {
                if herm {
                    ca * xs[i] * xs[j].conj()
                } else {
                    ca * xs[i] * xs[j]
                }
            }
            _ => {
                if herm {
                    ca * xs[i] * ys[j].conj() + ca.conj() * ys[i] * xs[j].conj()
                } else {
                    ca * (xs[i] * ys[j] + ys[i] * xs[j])
                }
            }
        };
        let g = c(a.buf[p]);
        if herm && i == j {
            assert!(g.im.to_bits() == 0, "{what}: diagonal ({i},{i}) imaginary part {}", g.im);
            want.push(C64::new(old.re + upd.re, 0.0));
        } else {
            want.push(old + upd);
        }
        got.push(g);
    }
    let scale = want.iter().map(|v| v.norm()).fold(1.0, f64::max) * 4.0;
    check_close::<T>(&got, &want, 4, scale, &what);
}

fn rank_suite<T: L2>(seed: u64) {
    init();
    let mut rng = Rng::new(seed);
    let mut idx = 0usize;
    let dims: &[(usize, usize)] =
        &[(0, 0), (0, 2), (2, 0), (1, 1), (2, 3), (5, 4), (16, 17), (33, 31), (64, 65), (130, 70), (70, 130)];
    for &(m, n) in dims {
        for r in [Rt::Ger, Rt::Gerc, Rt::Syr, Rt::Spr, Rt::Syr2, Rt::Spr2] {
            for uplo in [b'U', b'L'] {
                if matches!(r, Rt::Ger | Rt::Gerc) && uplo == b'L' {
                    continue;
                }
                let api = APIS[idx % 6];
                run_rank::<T>(&mut rng, r, api, m, n, uplo, idx / 6, INCS[idx % 5], INCS[(idx / 5) % 5], idx % 7 == 3);
                if idx.is_multiple_of(5) {
                    for api in APIS {
                        run_rank::<T>(&mut rng, r, api, m, n, uplo, 2, -1, 2, false);
                    }
                }
                idx += 1;
            }
        }
    }
    // Threaded sizes.
    for r in [Rt::Ger, Rt::Gerc, Rt::Syr, Rt::Spr, Rt::Syr2, Rt::Spr2] {
        for uplo in [b'U', b'L'] {
            idx += 1;
            run_rank::<T>(&mut rng, r, APIS[idx % 6], 301, 300, uplo, 2, 1, -2, idx.is_multiple_of(2));
        }
    }
}

#[test]
fn rank_s() {
    rank_suite::<f32>(31);
}
#[test]
fn rank_d() {
    rank_suite::<f64>(32);
}
#[test]
fn rank_c() {
    rank_suite::<C32>(33);
}
#[test]
fn rank_z() {
    rank_suite::<C64>(34);
}

// ---------------------------------------------------------------------------------------
// Argument checks. The process's xerbla (ours) prints a message; a child process runs the
// bad calls with stderr captured, and the parent checks each message. The child also checks
// that no output was written.

/// (routine, api, mutation of a valid call, expected INFO).
type ErrCase = (Rt, Api, fn(&mut Call<f64>), i64);

fn err_cases() -> Vec<ErrCase> {
    let f = Api::Fortran { ilp: false };
    let f64i = Api::Fortran { ilp: true };
    let cc = Api::Cblas { ilp: false, row: false };
    let cr = Api::Cblas { ilp: false, row: true };
    let cr64 = Api::Cblas { ilp: true, row: true };
    vec![
        // GEMV: 1 TRANS, 2 M, 3 N, 6 LDA, 8 INCX, 11 INCY.
        (Rt::Gemv, f, |c| c.trans = b'/', 1),
        (Rt::Gemv, f, |c| c.m = -1, 2),
        (Rt::Gemv, f64i, |c| c.n = -1, 3),
        (Rt::Gemv, f, |c| c.lda = 1, 6),
        (Rt::Gemv, f, |c| c.incx = 0, 8),
        (Rt::Gemv, f64i, |c| c.incy = 0, 11),
        (Rt::Gemv, cc, |c| c.layout = 0, 1),
        (Rt::Gemv, cc, |c| c.trans = b'/', 2),
        (Rt::Gemv, cc, |c| c.m = -1, 3),
        (Rt::Gemv, cc, |c| c.lda = 1, 7),
        (Rt::Gemv, cc, |c| c.incy = 0, 12),
        // Row-major: the column-major problem has M and N swapped.
        (Rt::Gemv, cr, |c| c.m = -1, 4),
        (Rt::Gemv, cr, |c| c.n = -1, 3),
        (Rt::Gemv, cr64, |c| c.lda = 1, 7),
        (Rt::Gemv, cr, |c| c.incx = 0, 9),
        // GBMV: 4 KL, 5 KU, 8 LDA, 10 INCX, 13 INCY.
        (Rt::Gbmv, f, |c| c.kl = -1, 4),
        (Rt::Gbmv, f, |c| c.ku = -1, 5),
        (Rt::Gbmv, f, |c| c.lda = 2, 8),
        (Rt::Gbmv, f64i, |c| c.incx = 0, 10),
        (Rt::Gbmv, f, |c| c.incy = 0, 13),
        (Rt::Gbmv, cr, |c| c.kl = -1, 6),
        (Rt::Gbmv, cc, |c| c.kl = -1, 5),
        // SYMV: 1 UPLO, 2 N, 5 LDA, 7 INCX, 10 INCY.
        (Rt::Symv, f, |c| c.uplo = b'/', 1),
        (Rt::Symv, f, |c| c.n = -1, 2),
        (Rt::Symv, f, |c| c.lda = 1, 5),
        (Rt::Symv, f64i, |c| c.incx = 0, 7),
        (Rt::Symv, f, |c| c.incy = 0, 10),
        (Rt::Symv, cr, |c| c.uplo = b'/', 2),
        (Rt::Symv, cr, |c| c.lda = 1, 6),
        // SBMV: 3 K, 6 LDA, 8 INCX, 11 INCY. SPMV: 6 INCX, 9 INCY.
        (Rt::Sbmv, f, |c| c.k = -1, 3),
        (Rt::Sbmv, f, |c| c.lda = 1, 6),
        (Rt::Sbmv, cc, |c| c.incy = 0, 12),
        (Rt::Spmv, f, |c| c.incx = 0, 6),
        (Rt::Spmv, f, |c| c.incy = 0, 9),
        (Rt::Spmv, cr, |c| c.n = -1, 3),
        // TRMV/TRSV: 1 UPLO, 2 TRANS, 3 DIAG, 4 N, 6 LDA, 8 INCX.
        (Rt::Trmv, f, |c| c.uplo = b'/', 1),
        (Rt::Trmv, f, |c| c.trans = b'/', 2),
        (Rt::Trmv, f, |c| c.diag = b'/', 3),
        (Rt::Trmv, f, |c| c.n = -1, 4),
        (Rt::Trsv, f, |c| c.lda = 1, 6),
        (Rt::Trsv, f64i, |c| c.incx = 0, 8),
        (Rt::Trsv, cc, |c| c.diag = b'/', 4),
        (Rt::Trsv, cr, |c| c.trans = b'/', 3),
        (Rt::Trmv, cr, |c| c.lda = 1, 7),
        // TBMV/TBSV: 5 K, 7 LDA, 9 INCX. TPMV/TPSV: 7 INCX.
        (Rt::Tbmv, f, |c| c.k = -1, 5),
        (Rt::Tbsv, f, |c| c.lda = 1, 7),
        (Rt::Tbsv, f, |c| c.incx = 0, 9),
        (Rt::Tbmv, cr, |c| c.incx = 0, 10),
        (Rt::Tpmv, f, |c| c.incx = 0, 7),
        (Rt::Tpsv, f, |c| c.n = -1, 4),
        (Rt::Tpsv, cc, |c| c.layout = 0, 1),
        // GER: 1 M, 2 N, 5 INCX, 7 INCY, 9 LDA; row-major swaps M/N and x/y.
        (Rt::Ger, f, |c| c.m = -1, 1),
        (Rt::Ger, f, |c| c.n = -1, 2),
        (Rt::Ger, f, |c| c.incx = 0, 5),
        (Rt::Ger, f64i, |c| c.incy = 0, 7),
        (Rt::Ger, f, |c| c.lda = 1, 9),
        (Rt::Gerc, cr, |c| c.m = -1, 3),
        (Rt::Gerc, cr, |c| c.incy = 0, 6),
        (Rt::Ger, cc, |c| c.incx = 0, 6),
        // SYR: 5 INCX, 7 LDA. SPR: 5 INCX. SYR2: 5, 7, 9 LDA. SPR2: 5, 7.
        (Rt::Syr, f, |c| c.uplo = b'/', 1),
        (Rt::Syr, f, |c| c.incx = 0, 5),
        (Rt::Syr, f, |c| c.lda = 1, 7),
        (Rt::Spr, f, |c| c.incx = 0, 5),
        (Rt::Syr2, f, |c| c.incy = 0, 7),
        (Rt::Syr2, f, |c| c.lda = 1, 9),
        (Rt::Spr2, f64i, |c| c.incx = 0, 5),
        (Rt::Spr2, cr, |c| c.uplo = b'/', 2),
        (Rt::Syr, cr, |c| c.lda = 1, 8),
    ]
}

fn err_base(a: &mut [f64], x: &mut [f64], y: &mut [f64]) -> Call<f64> {
    Call {
        layout: 102,
        m: 2,
        n: 2,
        kl: 1,
        ku: 1,
        k: 1,
        uplo: b'U',
        trans: b'N',
        diag: b'N',
        alpha: 1.0,
        beta: 0.5,
        a: a.as_mut_ptr(),
        lda: 3,
        x: x.as_mut_ptr(),
        incx: 1,
        y: y.as_mut_ptr(),
        incy: 1,
    }
}

fn err_name(r: Rt, api: Api) -> String {
    // Real GERC is GER.
    let base = if r == Rt::Gerc { "ger".to_string() } else { format!("{r:?}").to_lowercase() };
    match api {
        Api::Fortran { .. } => format!("D{}", base.to_uppercase()),
        Api::Cblas { .. } => format!("cblas_d{base}"),
    }
}

/// The child: runs every bad call, printing a marker before each to stderr.
#[test]
#[ignore]
fn err_child() {
    if std::env::var_os("L2_ERR_CHILD").is_none() {
        return;
    }
    for (i, (r, api, mutate, _)) in err_cases().into_iter().enumerate() {
        let mut a = vec![7.0f64; 16];
        let mut x = vec![8.0f64; 4];
        let mut y = vec![9.0f64; 4];
        let mut call = err_base(&mut a, &mut x, &mut y);
        call.layout = layout(api);
        mutate(&mut call);
        eprintln!("CASE {i}");
        // SAFETY: buffers larger than any valid interpretation of the call.
        unsafe { f64::call(api, r, &call) };
        assert!(
            a.iter().all(|&v| v == 7.0) && x.iter().all(|&v| v == 8.0) && y.iter().all(|&v| v == 9.0),
            "case {i}: {r:?} {api:?} wrote output"
        );
    }
    eprintln!("CASE END");
}

#[test]
fn errors() {
    let exe = std::env::current_exe().expect("test executable");
    let out = std::process::Command::new(exe)
        .args(["err_child", "--exact", "--ignored", "--nocapture", "--test-threads=1"])
        .env("L2_ERR_CHILD", "1")
        .output()
        .expect("child runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "child failed:\n{}\n{stderr}", String::from_utf8_lossy(&out.stdout));
    let lines: Vec<&str> = stderr.lines().collect();
    assert!(lines.contains(&"CASE END"), "child did not finish:\n{stderr}");
    for (i, (r, api, _, info)) in err_cases().into_iter().enumerate() {
        let pos = lines.iter().position(|l| *l == format!("CASE {i}")).unwrap_or_else(|| panic!("no marker {i}"));
        let msg = lines.get(pos + 1).copied().unwrap_or("");
        let name = err_name(r, api);
        let want = match api {
            Api::Fortran { .. } => format!(" ** On entry to {name} parameter number {info} had an illegal value"),
            Api::Cblas { .. } => format!("Parameter {info} to routine {name} was incorrect"),
        };
        assert_eq!(msg, want, "case {i}: {r:?} {api:?}");
    }
}

#[test]
fn real_values_are_real() {
    // Sanity of the harness itself: tolerance and conversions.
    let v: f64 = from_c(C64::new(1.5, 0.0));
    assert_eq!(v, 1.5);
    assert!(tol::<f32>(10) > tol::<f64>(10));
    let _ = <f32 as Real>::to_f64(1.0);
}
