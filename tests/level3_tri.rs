//! TRMM and TRSM through the exported symbols (Fortran LP64/ILP64, CBLAS LP64/ILP64,
//! column- and row-major) against a naive reference computed in complex double.
//!
//! Every call gets: A's storage filled with NaN outside the referenced triangle, on a unit
//! diagonal and in the lda padding (none of it may reach B); B's lda padding poisoned and
//! checked untouched; A checked unchanged byte for byte.

mod common;

use common::{poison, to_c64, Rng};
use hyblas::abi::fortran::level3_tri::check_trxm;
use hyblas::types::{Diag, Scalar, Side, Trans, Uplo, C32, C64};
use std::os::raw::{c_char, c_int};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Routine {
    Trmm,
    Trsm,
}

/// Which exported entry point a case goes through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Entry {
    Fortran,
    Fortran64,
    Cblas { row_major: bool },
    Cblas64 { row_major: bool },
}

/// The exported symbols of one precision.
trait Api: Scalar {
    #[allow(clippy::too_many_arguments)]
    unsafe fn fortran(
        r: Routine,
        ilp64: bool,
        opts: [u8; 4],
        m: i64,
        n: i64,
        alpha: Self,
        a: *const Self,
        lda: i64,
        b: *mut Self,
        ldb: i64,
    );
    #[allow(clippy::too_many_arguments)]
    unsafe fn cblas(
        r: Routine,
        ilp64: bool,
        layout: c_int,
        opts: [c_int; 4],
        m: i64,
        n: i64,
        alpha: Self,
        a: *const Self,
        lda: i64,
        b: *mut Self,
        ldb: i64,
    );
}

macro_rules! api {
    ($t:ty, $trmm:ident, $trsm:ident, $trmm64:ident, $trsm64:ident, $ctrmm:ident, $ctrsm:ident, $ctrmm64:ident,
     $ctrsm64:ident, $alpha:ty, $pass:ident) => {
        extern "C" {
            fn $trmm(s: *const c_char, u: *const c_char, t: *const c_char, d: *const c_char, m: *const i32,
                n: *const i32, alpha: *const $t, a: *const $t, lda: *const i32, b: *mut $t, ldb: *const i32);
            fn $trsm(s: *const c_char, u: *const c_char, t: *const c_char, d: *const c_char, m: *const i32,
                n: *const i32, alpha: *const $t, a: *const $t, lda: *const i32, b: *mut $t, ldb: *const i32);
            fn $trmm64(s: *const c_char, u: *const c_char, t: *const c_char, d: *const c_char, m: *const i64,
                n: *const i64, alpha: *const $t, a: *const $t, lda: *const i64, b: *mut $t, ldb: *const i64);
            fn $trsm64(s: *const c_char, u: *const c_char, t: *const c_char, d: *const c_char, m: *const i64,
                n: *const i64, alpha: *const $t, a: *const $t, lda: *const i64, b: *mut $t, ldb: *const i64);
            fn $ctrmm(l: c_int, s: c_int, u: c_int, t: c_int, d: c_int, m: c_int, n: c_int, alpha: $alpha,
                a: *const $t, lda: c_int, b: *mut $t, ldb: c_int);
            fn $ctrsm(l: c_int, s: c_int, u: c_int, t: c_int, d: c_int, m: c_int, n: c_int, alpha: $alpha,
                a: *const $t, lda: c_int, b: *mut $t, ldb: c_int);
            fn $ctrmm64(l: c_int, s: c_int, u: c_int, t: c_int, d: c_int, m: i64, n: i64, alpha: $alpha,
                a: *const $t, lda: i64, b: *mut $t, ldb: i64);
            fn $ctrsm64(l: c_int, s: c_int, u: c_int, t: c_int, d: c_int, m: i64, n: i64, alpha: $alpha,
                a: *const $t, lda: i64, b: *mut $t, ldb: i64);
        }
        impl Api for $t {
            unsafe fn fortran(r: Routine, ilp64: bool, o: [u8; 4], m: i64, n: i64, alpha: Self, a: *const Self,
                lda: i64, b: *mut Self, ldb: i64) {
                let o = o.map(|c| c as c_char);
                let (s, u, t, d) = (&o[0], &o[1], &o[2], &o[3]);
                match (r, ilp64) {
                    (Routine::Trmm, false) => $trmm(s, u, t, d, &(m as i32), &(n as i32), &alpha, a, &(lda as i32), b, &(ldb as i32)),
                    (Routine::Trsm, false) => $trsm(s, u, t, d, &(m as i32), &(n as i32), &alpha, a, &(lda as i32), b, &(ldb as i32)),
                    (Routine::Trmm, true) => $trmm64(s, u, t, d, &m, &n, &alpha, a, &lda, b, &ldb),
                    (Routine::Trsm, true) => $trsm64(s, u, t, d, &m, &n, &alpha, a, &lda, b, &ldb),
                }
            }
            unsafe fn cblas(r: Routine, ilp64: bool, l: c_int, o: [c_int; 4], m: i64, n: i64, alpha: Self,
                a: *const Self, lda: i64, b: *mut Self, ldb: i64) {
                let alpha = api!(@$pass alpha);
                match (r, ilp64) {
                    (Routine::Trmm, false) => $ctrmm(l, o[0], o[1], o[2], o[3], m as c_int, n as c_int, alpha, a, lda as c_int, b, ldb as c_int),
                    (Routine::Trsm, false) => $ctrsm(l, o[0], o[1], o[2], o[3], m as c_int, n as c_int, alpha, a, lda as c_int, b, ldb as c_int),
                    (Routine::Trmm, true) => $ctrmm64(l, o[0], o[1], o[2], o[3], m, n, alpha, a, lda, b, ldb),
                    (Routine::Trsm, true) => $ctrsm64(l, o[0], o[1], o[2], o[3], m, n, alpha, a, lda, b, ldb),
                }
            }
        }
    };
    (@val $a:ident) => { $a };
    (@ptr $a:ident) => { &$a as *const _ };
}

api!(f32, strmm_, strsm_, strmm_64_, strsm_64_, cblas_strmm, cblas_strsm, cblas_strmm64_, cblas_strsm64_, f32, val);
api!(f64, dtrmm_, dtrsm_, dtrmm_64_, dtrsm_64_, cblas_dtrmm, cblas_dtrsm, cblas_dtrmm64_, cblas_dtrsm64_, f64, val);
api!(
    C32,
    ctrmm_,
    ctrsm_,
    ctrmm_64_,
    ctrsm_64_,
    cblas_ctrmm,
    cblas_ctrsm,
    cblas_ctrmm64_,
    cblas_ctrsm64_,
    *const C32,
    ptr
);
api!(
    C64,
    ztrmm_,
    ztrsm_,
    ztrmm_64_,
    ztrsm_64_,
    cblas_ztrmm,
    cblas_ztrsm,
    cblas_ztrmm64_,
    cblas_ztrsm64_,
    *const C64,
    ptr
);

fn from_c64<T: Scalar>(v: C64) -> T {
    T::from_parts(<T::Real as Scalar>::from_f64(v.re), <T::Real as Scalar>::from_f64(v.im))
}

fn nan<T: Scalar>() -> T {
    from_c64(C64::new(f64::NAN, f64::NAN))
}

/// One call's options.
#[derive(Clone, Copy, Debug)]
struct Case {
    r: Routine,
    side: Side,
    uplo: Uplo,
    trans: Trans,
    diag: Diag,
    m: usize,
    n: usize,
}

const SIDES: [Side; 2] = [Side::Left, Side::Right];
const UPLOS: [Uplo; 2] = [Uplo::Upper, Uplo::Lower];
const TRANSES: [Trans; 3] = [Trans::No, Trans::Trans, Trans::ConjTrans];
const DIAGS: [Diag; 2] = [Diag::NonUnit, Diag::Unit];

/// Every side/uplo/trans/diag combination.
fn all_options() -> Vec<(Side, Uplo, Trans, Diag)> {
    let mut v = Vec::new();
    for &s in &SIDES {
        for &u in &UPLOS {
            for &t in &TRANSES {
                for &d in &DIAGS {
                    v.push((s, u, t, d));
                }
            }
        }
    }
    v
}

fn fortran_chars(c: &Case) -> [u8; 4] {
    // Mixed case: LSAME semantics.
    [
        if c.side == Side::Left { b'L' } else { b'r' },
        if c.uplo == Uplo::Upper { b'u' } else { b'L' },
        match c.trans {
            Trans::No => b'N',
            Trans::Trans => b't',
            Trans::ConjTrans => b'C',
        },
        if c.diag == Diag::Unit { b'U' } else { b'n' },
    ]
}

fn cblas_enums(c: &Case) -> [c_int; 4] {
    [
        if c.side == Side::Left { 141 } else { 142 },
        if c.uplo == Uplo::Upper { 121 } else { 122 },
        match c.trans {
            Trans::No => 111,
            Trans::Trans => 112,
            Trans::ConjTrans => 113,
        },
        if c.diag == Diag::NonUnit { 131 } else { 132 },
    ]
}

/// The reference: logical A (k x k, only the referenced triangle is looked at), logical B
/// (m x n, column-major, dense). Sums run over the triangle only, so NaN spreads exactly as
/// far as the arithmetic reaches.
fn reference(c: &Case, alpha: C64, a: &dyn Fn(usize, usize) -> C64, b: &[C64]) -> Vec<C64> {
    let (m, n) = (c.m, c.n);
    let k = if c.side == Side::Left { m } else { n };
    let unit = c.diag == Diag::Unit;
    // op(A) as a dense k x k with a flag for "inside the triangle".
    let mut op = vec![C64::new(0.0, 0.0); k * k];
    let mut inside = vec![false; k * k];
    for j in 0..k {
        for i in 0..k {
            let tri = if c.uplo == Uplo::Upper { i <= j } else { i >= j };
            if !tri {
                continue;
            }
            let v = if i == j && unit { C64::new(1.0, 0.0) } else { a(i, j) };
            let (r, s, v) = match c.trans {
                Trans::No => (i, j, v),
                Trans::Trans => (j, i, v),
                Trans::ConjTrans => (j, i, v.conj()),
            };
            op[r + s * k] = v;
            inside[r + s * k] = true;
        }
    }
    let op_lower = (c.uplo == Uplo::Lower) == (c.trans == Trans::No);
    let at = |i: usize, j: usize| op[i + j * k];
    let mut x: Vec<C64> = b.iter().map(|&v| alpha * v).collect();
    match (c.r, c.side) {
        (Routine::Trmm, Side::Left) => {
            let mut out = vec![C64::new(0.0, 0.0); m * n];
            for j in 0..n {
                for i in 0..m {
                    let mut s = C64::new(0.0, 0.0);
                    for l in 0..m {
                        if inside[i + l * k] {
                            s += at(i, l) * x[l + j * m];
                        }
                    }
                    out[i + j * m] = s;
                }
            }
            out
        }
        (Routine::Trmm, Side::Right) => {
            let mut out = vec![C64::new(0.0, 0.0); m * n];
            for j in 0..n {
                for i in 0..m {
                    let mut s = C64::new(0.0, 0.0);
                    for l in 0..n {
                        if inside[l + j * k] {
                            s += x[i + l * m] * at(l, j);
                        }
                    }
                    out[i + j * m] = s;
                }
            }
            out
        }
        (Routine::Trsm, Side::Left) => {
            for j in 0..n {
                let order: Vec<usize> = if op_lower { (0..m).collect() } else { (0..m).rev().collect() };
                for &i in &order {
                    let mut s = x[i + j * m];
                    for l in 0..m {
                        if l != i && inside[i + l * k] {
                            s -= at(i, l) * x[l + j * m];
                        }
                    }
                    x[i + j * m] = s / at(i, i);
                }
            }
            x
        }
        (Routine::Trsm, Side::Right) => {
            // X op(A) = alpha B, column j of X after the columns it depends on.
            for i in 0..m {
                let order: Vec<usize> = if op_lower { (0..n).rev().collect() } else { (0..n).collect() };
                for &j in &order {
                    let mut s = x[i + j * m];
                    for l in 0..n {
                        if l != j && inside[l + j * k] {
                            s -= x[i + l * m] * at(l, j);
                        }
                    }
                    x[i + j * m] = s / at(j, j);
                }
            }
            x
        }
    }
}

/// Run one case through `entry` and check it. `nan_at`: put a NaN into B at that logical
/// position. Returns nothing; panics with a description on a mismatch.
fn check<T: Api>(entry: Entry, c: Case, alpha: T, rng: &mut Rng, nan_at: Option<(usize, usize)>) {
    let (m, n) = (c.m, c.n);
    let k = if c.side == Side::Left { m } else { n };
    let row_major = matches!(entry, Entry::Cblas { row_major: true } | Entry::Cblas64 { row_major: true });
    // Storage shapes: padding beyond the logical rows (columns for row-major).
    let lda = k + 2;
    let (ldb, bcols) = if row_major { (n + 3, m) } else { (m + 3, n) };
    let aidx = |i: usize, j: usize| if row_major { i * lda + j } else { i + j * lda };
    let bidx = |i: usize, j: usize| if row_major { i * ldb + j } else { i + j * ldb };

    let mut a = vec![nan::<T>(); lda * k.max(1)];
    let scale = 1.0 / (k.max(1) as f64);
    for j in 0..k {
        for i in 0..k {
            let tri = if c.uplo == Uplo::Upper { i <= j } else { i >= j };
            if !tri || (i == j && c.diag == Diag::Unit) {
                continue;
            }
            let v: T = if i == j {
                // |diagonal| in [1, 2]: well conditioned.
                let z = C64::new(1.0 + 0.5 * (rng.unit() + 1.0), if T::IS_COMPLEX { 0.5 * rng.unit() } else { 0.0 });
                from_c64(if rng.unit() < 0.0 { -z } else { z })
            } else {
                from_c64(to_c64(rng.scalar::<T>()) * scale)
            };
            a[aidx(i, j)] = v;
        }
    }
    let a0 = a.clone();
    let mut b = vec![poison::<T>(); ldb * bcols.max(1)];
    let mut blog = vec![C64::new(0.0, 0.0); m * n];
    for j in 0..n {
        for i in 0..m {
            let mut v: T = rng.scalar();
            if nan_at == Some((i, j)) {
                v = nan();
            }
            b[bidx(i, j)] = v;
            blog[i + j * m] = to_c64(v);
        }
    }
    let b0 = b.clone();
    let want = if alpha.is_zero() {
        vec![C64::new(0.0, 0.0); m * n]
    } else {
        reference(&c, to_c64(alpha), &|i, j| to_c64(a[aidx(i, j)]), &blog)
    };

    // SAFETY: buffers sized for the shapes passed.
    unsafe {
        match entry {
            Entry::Fortran | Entry::Fortran64 => T::fortran(
                c.r,
                entry == Entry::Fortran64,
                fortran_chars(&c),
                m as i64,
                n as i64,
                alpha,
                a.as_ptr(),
                lda as i64,
                b.as_mut_ptr(),
                ldb as i64,
            ),
            Entry::Cblas { row_major } | Entry::Cblas64 { row_major } => T::cblas(
                c.r,
                matches!(entry, Entry::Cblas64 { .. }),
                if row_major { 101 } else { 102 },
                cblas_enums(&c),
                m as i64,
                n as i64,
                alpha,
                a.as_ptr(),
                lda as i64,
                b.as_mut_ptr(),
                ldb as i64,
            ),
        }
    }

    let what = format!("{}{:?} {entry:?} {c:?} alpha={alpha:?}", T::PREFIX, c.r);
    assert!(bytes(&a) == bytes(&a0), "{what}: A was written");
    let mut got = Vec::with_capacity(m * n);
    let mut want_t = Vec::with_capacity(m * n);
    for j in 0..n {
        for i in 0..m {
            got.push(b[bidx(i, j)]);
            want_t.push(from_c64::<T>(want[i + j * m]));
        }
    }
    // Padding of B untouched.
    for (idx, (&x, &y)) in b.iter().zip(&b0).enumerate() {
        let logical = if row_major { idx % ldb < n && idx / ldb < m } else { idx % ldb < m && idx / ldb < n };
        if !logical {
            assert!(x == y, "{what}: B padding at {idx} written");
        }
    }
    common::assert_close(&got, &want_t, k + 1, &what);
}

fn bytes<T>(v: &[T]) -> &[u8] {
    // SAFETY: plain-old-data scalars.
    unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, std::mem::size_of_val(v)) }
}

fn alphas<T: Scalar>() -> [T; 3] {
    [T::zero(), T::one(), from_c64(C64::new(0.7, if T::IS_COMPLEX { -0.4 } else { 0.0 }))]
}

/// Every option combination, alpha in {0, 1, other}, small sizes (0, 1, odd, tile edges).
fn small_grid<T: Api>(entry: Entry, seed: u64) {
    let mut rng = Rng::new(seed);
    let sizes = [0usize, 1, 2, 3, 5, 8, 9, 17];
    for r in [Routine::Trmm, Routine::Trsm] {
        for (side, uplo, trans, diag) in all_options() {
            for &m in &sizes {
                for &n in &sizes {
                    for alpha in alphas::<T>() {
                        check::<T>(entry, Case { r, side, uplo, trans, diag, m, n }, alpha, &mut rng, None);
                    }
                }
            }
        }
    }
}

/// Sizes around the base-case order (64), the SIMD tiles (4, 8, 16), the column groups and
/// the row-kernel widths, recursion depth 2.
fn block_edges<T: Api>(entry: Entry, seed: u64) {
    let mut rng = Rng::new(seed);
    let shapes = [(16, 17), (17, 16), (63, 65), (65, 63), (64, 33), (129, 9), (9, 129), (127, 70), (70, 131)];
    let other = alphas::<T>()[2];
    for r in [Routine::Trmm, Routine::Trsm] {
        for (side, uplo, trans, diag) in all_options() {
            for &(m, n) in &shapes {
                check::<T>(entry, Case { r, side, uplo, trans, diag, m, n }, other, &mut rng, None);
            }
        }
    }
}

#[test]
fn small_grid_all_precisions() {
    small_grid::<f32>(Entry::Fortran, 1);
    small_grid::<f64>(Entry::Fortran, 2);
    small_grid::<C32>(Entry::Fortran, 3);
    small_grid::<C64>(Entry::Fortran, 4);
}

#[test]
fn block_edges_real() {
    block_edges::<f32>(Entry::Fortran, 5);
    block_edges::<f64>(Entry::Fortran, 6);
}

#[test]
fn block_edges_complex() {
    block_edges::<C32>(Entry::Fortran, 7);
    block_edges::<C64>(Entry::Fortran, 8);
}

#[test]
fn ilp64_entries() {
    small_grid::<f64>(Entry::Fortran64, 9);
    small_grid::<C32>(Entry::Fortran64, 10);
    block_edges::<f32>(Entry::Fortran64, 11);
    block_edges::<C64>(Entry::Fortran64, 12);
}

#[test]
fn cblas_column_and_row_major() {
    for row_major in [false, true] {
        small_grid::<f32>(Entry::Cblas { row_major }, 13);
        small_grid::<C64>(Entry::Cblas { row_major }, 14);
        small_grid::<f64>(Entry::Cblas64 { row_major }, 15);
        small_grid::<C32>(Entry::Cblas64 { row_major }, 16);
        block_edges::<f64>(Entry::Cblas { row_major }, 17);
        block_edges::<C32>(Entry::Cblas64 { row_major }, 18);
    }
}

/// Big enough for the right-hand sides to be split across threads and for GEMM to run the
/// off-diagonal blocks; one and two threads.
#[test]
fn threaded_sizes() {
    let mut rng = Rng::new(19);
    let opts = [
        (Side::Left, Uplo::Upper, Trans::No, Diag::NonUnit),
        (Side::Left, Uplo::Lower, Trans::Trans, Diag::Unit),
        (Side::Right, Uplo::Upper, Trans::No, Diag::NonUnit),
        (Side::Right, Uplo::Lower, Trans::ConjTrans, Diag::NonUnit),
    ];
    for threads in [1, 2] {
        hyblas::abi::native::hyblas_set_num_threads(threads);
        for r in [Routine::Trmm, Routine::Trsm] {
            for &(side, uplo, trans, diag) in &opts {
                let c = Case { r, side, uplo, trans, diag, m: 200, n: 230 };
                check::<f64>(Entry::Fortran, c, 0.9, &mut rng, None);
                check::<C32>(Entry::Fortran, c, C32::new(0.5, 0.25), &mut rng, None);
            }
        }
    }
}

/// Every option past the one-thread recursion's depth 2, one and two threads: triangles of
/// order above `HYBLAS_TRI_SPLIT` (512) take 2x2 steps with GEMMs on all threads, then right-hand
/// sides split across threads (n >= 32); 421 rows: the split alone, and the narrow case.
#[test]
fn threaded_steps_all_options() {
    let mut rng = Rng::new(20);
    for threads in [1, 2] {
        hyblas::abi::native::hyblas_set_num_threads(threads);
        for r in [Routine::Trmm, Routine::Trsm] {
            for (side, uplo, trans, diag) in all_options() {
                for (m, n) in [(421, 19), (19, 421), (600, 40), (40, 600)] {
                    let c = Case { r, side, uplo, trans, diag, m, n };
                    check::<f64>(Entry::Fortran, c, 0.9, &mut rng, None);
                    check::<C64>(Entry::Fortran, c, C64::new(0.5, -0.25), &mut rng, None);
                }
            }
        }
    }
}

/// alpha == 0: B becomes exactly zero (NaN in B cleared) and A is not read at all.
#[test]
fn alpha_zero_reads_nothing() {
    fn run<T: Api>() {
        for (side, uplo, trans, diag) in all_options() {
            for r in [Routine::Trmm, Routine::Trsm] {
                let (m, n) = (7, 5);
                let k = if side == Side::Left { m } else { n };
                let a = vec![nan::<T>(); k * k];
                let mut b = vec![nan::<T>(); m * n];
                let c = Case { r, side, uplo, trans, diag, m, n };
                // SAFETY: buffers sized for the shapes.
                unsafe {
                    T::fortran(
                        r,
                        false,
                        fortran_chars(&c),
                        m as i64,
                        n as i64,
                        T::zero(),
                        a.as_ptr(),
                        k as i64,
                        b.as_mut_ptr(),
                        m as i64,
                    )
                };
                assert!(b.iter().all(|v| *v == T::zero()), "{c:?}: B not zeroed");
            }
        }
    }
    run::<f32>();
    run::<f64>();
    run::<C32>();
    run::<C64>();
}

/// A NaN in B spreads exactly where the arithmetic takes it (the reference sums over the
/// triangle only); zero padding in the kernels' tiles must not spread it further.
#[test]
fn nan_in_b_spreads_like_the_reference() {
    let mut rng = Rng::new(20);
    for r in [Routine::Trmm, Routine::Trsm] {
        for (side, uplo, trans, diag) in all_options() {
            for &(m, n, at) in &[(9, 6, (4, 2)), (70, 20, (33, 7)), (20, 70, (5, 40))] {
                let c = Case { r, side, uplo, trans, diag, m, n };
                check::<f64>(Entry::Fortran, c, 1.0, &mut rng, Some(at));
                check::<C64>(Entry::Fortran, c, C64::new(1.0, 0.0), &mut rng, Some(at));
                check::<f32>(Entry::Cblas { row_major: true }, c, 1.0, &mut rng, Some(at));
            }
        }
    }
}

/// Invalid arguments: the reference INFO (checked through the shared check function) and
/// nothing written by either entry point.
#[test]
fn error_exits_write_nothing() {
    let (l, u, t, d) = (Some(Side::Left), Some(Uplo::Upper), Some(Trans::No), Some(Diag::NonUnit));
    let r = Some(Side::Right);
    assert_eq!(check_trxm(None, None, None, None, -1, -1, 0, 0).unwrap_err(), 1);
    assert_eq!(check_trxm(l, None, None, None, -1, -1, 0, 0).unwrap_err(), 2);
    assert_eq!(check_trxm(l, u, None, None, -1, -1, 0, 0).unwrap_err(), 3);
    assert_eq!(check_trxm(l, u, t, None, -1, -1, 0, 0).unwrap_err(), 4);
    assert_eq!(check_trxm(l, u, t, d, -1, -1, 0, 0).unwrap_err(), 5);
    assert_eq!(check_trxm(l, u, t, d, 0, -1, 0, 0).unwrap_err(), 6);
    assert_eq!(check_trxm(l, u, t, d, 0, 0, 0, 1).unwrap_err(), 9);
    assert_eq!(check_trxm(l, u, t, d, 3, 5, 2, 3).unwrap_err(), 9);
    assert!(check_trxm(l, u, t, d, 3, 5, 3, 3).is_ok());
    assert_eq!(check_trxm(r, u, t, d, 3, 5, 3, 3).unwrap_err(), 9);
    assert_eq!(check_trxm(r, u, t, d, 3, 5, 5, 2).unwrap_err(), 11);
    assert!(check_trxm(r, u, t, d, 3, 5, 5, 3).is_ok());
    assert!(check_trxm(r, u, t, d, 0, 0, 1, 1).is_ok());

    // Through the exported symbols: bad option characters, negative sizes, short leading
    // dimensions; B must come back untouched.
    let (m, n) = (4usize, 3usize);
    let a = [1.0f64; 16];
    let bad_fortran: [([u8; 4], i64, i64, i64, i64); 7] = [
        (*b"XUNN", 4, 3, 4, 4),
        (*b"LXNN", 4, 3, 4, 4),
        (*b"LUXN", 4, 3, 4, 4),
        (*b"LUNX", 4, 3, 4, 4),
        (*b"LUNN", -1, 3, 4, 4),
        (*b"LUNN", 4, 3, 3, 4),
        (*b"RUNN", 4, 3, 4, 3),
    ];
    for r in [Routine::Trmm, Routine::Trsm] {
        for &(o, mm, nn, lda, ldb) in &bad_fortran {
            for ilp64 in [false, true] {
                let mut b = vec![poison::<f64>(); m * n + 4];
                // SAFETY: buffers are large enough for the (rejected) shapes.
                unsafe { f64::fortran(r, ilp64, o, mm, nn, 2.0, a.as_ptr(), lda, b.as_mut_ptr(), ldb) };
                assert!(b.iter().all(|&v| v == poison::<f64>()), "{r:?} {:?}: B written", o);
            }
        }
        let bad_cblas: [(c_int, [c_int; 4], i64, i64, i64, i64); 7] = [
            (100, [141, 121, 111, 131], 4, 3, 4, 4),
            (102, [140, 121, 111, 131], 4, 3, 4, 4),
            (102, [141, 120, 111, 131], 4, 3, 4, 4),
            (102, [141, 121, 110, 131], 4, 3, 4, 4),
            (102, [141, 121, 111, 130], 4, 3, 4, 4),
            (101, [141, 121, 111, 131], 4, 3, 4, 2),
            (101, [141, 121, 111, 131], 4, -3, 4, 4),
        ];
        for &(layout, o, mm, nn, lda, ldb) in &bad_cblas {
            for ilp64 in [false, true] {
                let mut b = vec![poison::<C64>(); m * n + 4];
                let az = [C64::new(1.0, 0.0); 16];
                // SAFETY: as above.
                unsafe {
                    C64::cblas(r, ilp64, layout, o, mm, nn, C64::new(2.0, 0.0), az.as_ptr(), lda, b.as_mut_ptr(), ldb)
                };
                assert!(b.iter().all(|&v| v == poison::<C64>()), "{r:?} cblas {layout} {o:?}: B written");
            }
        }
    }
}

/// TRSM undoes TRMM on a large problem (a consistency check at sizes the naive reference
/// would make slow): B -> A*B -> A^-1 (A*B) == B.
#[test]
fn trsm_inverts_trmm_large() {
    let mut rng = Rng::new(21);
    let (m, n) = (300usize, 257usize);
    for (side, uplo, trans, diag) in all_options() {
        let k = if side == Side::Left { m } else { n };
        let mut a = vec![0.0f64; k * k];
        for j in 0..k {
            for i in 0..k {
                a[i + j * k] = if i == j { 1.5 + 0.5 * rng.unit().abs() } else { rng.unit() / k as f64 };
            }
        }
        let b0: Vec<f64> = rng.vec(m * n);
        let mut b = b0.clone();
        let c = Case { r: Routine::Trmm, side, uplo, trans, diag, m, n };
        let o = fortran_chars(&c);
        // SAFETY: buffers sized for the shapes.
        unsafe {
            f64::fortran(
                Routine::Trmm,
                false,
                o,
                m as i64,
                n as i64,
                2.0,
                a.as_ptr(),
                k as i64,
                b.as_mut_ptr(),
                m as i64,
            );
            f64::fortran(
                Routine::Trsm,
                true,
                o,
                m as i64,
                n as i64,
                0.5,
                a.as_ptr(),
                k as i64,
                b.as_mut_ptr(),
                m as i64,
            );
        }
        common::assert_close(&b, &b0, 64, &format!("trsm(trmm(B)) {c:?}"));
    }
}

/// M == 0 or N == 0: a quick return that reads none of alpha, A and B (all null here).
#[test]
fn empty_reads_nothing() {
    let null_c = std::ptr::null::<C64>();
    let null_m = std::ptr::null_mut::<C64>();
    for (m, n) in [(0i64, 5i64), (5, 0), (0, 0)] {
        let c = Case {
            r: Routine::Trsm,
            side: Side::Left,
            uplo: Uplo::Upper,
            trans: Trans::No,
            diag: Diag::NonUnit,
            m: 0,
            n: 0,
        };
        let o = fortran_chars(&c);
        let ld = m.max(1);
        for r in [Routine::Trmm, Routine::Trsm] {
            let oc = o.map(|ch| ch as c_char);
            // SAFETY: nothing may be dereferenced but the option characters and integers.
            unsafe {
                match r {
                    Routine::Trmm => ztrmm_(
                        &oc[0],
                        &oc[1],
                        &oc[2],
                        &oc[3],
                        &(m as i32),
                        &(n as i32),
                        null_c,
                        null_c,
                        &(ld as i32),
                        null_m,
                        &(ld as i32),
                    ),
                    Routine::Trsm => {
                        ztrsm_64_(&oc[0], &oc[1], &oc[2], &oc[3], &m, &n, null_c, null_c, &ld, null_m, &ld)
                    }
                }
                let (ldr, ldc) = (n.max(1), m.max(1));
                match r {
                    Routine::Trmm => cblas_ztrmm(
                        101,
                        141,
                        121,
                        111,
                        131,
                        m as c_int,
                        n as c_int,
                        null_c,
                        null_c,
                        ldc as c_int,
                        null_m,
                        ldr as c_int,
                    ),
                    Routine::Trsm => {
                        cblas_ztrsm64_(102, 142, 122, 113, 132, m, n, null_c, null_c, n.max(1), null_m, ldc)
                    }
                }
            }
        }
    }
}
