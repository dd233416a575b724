//! SYMM/HEMM and the rank-k updates SYRK/HERK/SYR2K/HER2K, all on top of [`gemm`].
//!
//! SYMM/HEMM are one pass of the own blocked product whose A (or B, side Right) is packed
//! straight from the referenced triangle (`packed::Operand::symmetric`). Where the machine has
//! no own kernels, the triangle is expanded into a full temporary (O(n^2) copies next to
//! O(n^2 m) flops) for one GEMM call.
//!
//! The rank-k routines update one triangle of C. On AVX-512 machines that is one pass of the
//! own blocked product restricted to the triangle (`packed::gemm` with `tri`): half a GEMM's
//! flops, on all threads. Elsewhere, by recursive halving on block boundaries:
//! C = [C11 .; C21 C22] becomes two half-size triangles plus the full rectangle C21, which
//! goes straight through GEMM into C. What is left are diagonal blocks of order nb (n/8
//! within [16, `HYBLAS_SYRK_NB`]); each is formed by a small GEMM into a temporary and only its
//! triangle is merged into C, so nothing outside the referenced triangle is read or written
//! and all but a fraction nb/n of the flops run as large GEMMs. On several threads the
//! triangle is first cut into column panels of equal area, one per thread, each updated with
//! one-thread GEMMs.

use super::gemm::{gemm, gemm_with, packed_copy, scale, threads_for_gemm};
use super::packed::Operand;
use crate::cpu::threads;
use crate::types::{MatMut, MatRef, Scalar, Side, Uplo};
use once_cell::sync::Lazy;

/// Largest order of a diagonal block of SYRK/HERK/SYR2K/HER2K formed in a temporary instead
/// of being split further.
pub static SYRK_NB: Lazy<usize> = Lazy::new(|| crate::config::threshold("HYBLAS_SYRK_NB", 128).max(8));

/// Elements of A above which the SYMM/HEMM triangle expansion is split across threads.
pub static SYMM_PAR_MIN: Lazy<usize> = Lazy::new(|| crate::config::threshold("HYBLAS_SYMM_PAR_MIN", 1 << 16));

/// Tile order of the triangle expansion (both tiles of a mirrored pair stay in cache).
const TILE: usize = 32;

/// Write the full symmetric (Hermitian when `herm`) matrix whose `uplo` triangle is stored in
/// `a` into the column-major buffer `full` (leading dimension n). Hermitian diagonals are
/// taken as real.
unsafe fn expand<T: Scalar>(a: MatRef<T>, uplo: Uplo, herm: bool, full: MatMut<T>) {
    let n = a.rows;
    let tiles = n.div_ceil(TILE);
    let t = threads::threads_for(n * n, *SYMM_PAR_MIN);
    threads::for_each_part(t, t, |part| {
        // Tile columns are dealt round-robin so each thread gets a similar share.
        for tj in (part..tiles).step_by(t) {
            let j0 = tj * TILE;
            let j1 = (j0 + TILE).min(n);
            for ti in 0..tiles {
                let i0 = ti * TILE;
                let i1 = (i0 + TILE).min(n);
                let stored_tile = match uplo {
                    Uplo::Lower => ti > tj,
                    Uplo::Upper => ti < tj,
                };
                if ti == tj {
                    // Diagonal tile: element by element.
                    for j in j0..j1 {
                        for i in i0..i1 {
                            let stored = match uplo {
                                Uplo::Lower => i >= j,
                                Uplo::Upper => i <= j,
                            };
                            *full.at(i, j) = if i == j && herm {
                                T::from_real(a.get(i, i).re())
                            } else if stored {
                                a.get(i, j)
                            } else {
                                a.get(j, i).conj_if(herm)
                            };
                        }
                    }
                } else if stored_tile {
                    for j in j0..j1 {
                        for i in i0..i1 {
                            *full.at(i, j) = a.get(i, j);
                        }
                    }
                } else {
                    for j in j0..j1 {
                        for i in i0..i1 {
                            *full.at(i, j) = a.get(j, i).conj_if(herm);
                        }
                    }
                }
            }
        }
    });
}

/// C := alpha*A*B + beta*C (`side == Left`) or alpha*B*A + beta*C, with A symmetric
/// (Hermitian when `herm`) and only its `uplo` triangle referenced.
///
/// # Safety
/// `a` is na x na (na = c.rows for Left, c.cols for Right), `b` and `c` are m x n; all valid;
/// C does not overlap A or B.
#[allow(clippy::too_many_arguments)]
pub unsafe fn symm<T: Scalar>(
    side: Side,
    uplo: Uplo,
    herm: bool,
    alpha: T,
    a: MatRef<T>,
    b: MatRef<T>,
    beta: T,
    c: MatMut<T>,
) {
    if c.rows == 0 || c.cols == 0 {
        return;
    }
    if alpha.is_zero() {
        return scale(beta, c);
    }
    let na = a.rows;
    if super::packed::available::<T>() {
        let (s, x) = (Operand::symmetric(a, uplo, herm), Operand::plain(b, false));
        let (p, q) = if side == Side::Left { (s, x) } else { (x, s) };
        let t = threads_for_gemm::<T>(c.rows, c.cols, na);
        if super::packed::gemm_ops(t, alpha, p, q, beta, c, None) {
            return;
        }
    }
    let mut buf: Vec<T> = Vec::with_capacity(na * na);
    let full = MatMut::col_major(buf.as_mut_ptr(), na, na, na);
    expand(a, uplo, herm, full);
    buf.set_len(na * na);
    let fa = full.as_ref();
    match side {
        Side::Left => gemm(alpha, fa, false, b, false, beta, c),
        Side::Right => gemm(alpha, b, false, fa, false, beta, c),
    }
}

/// One term alpha * P * Q^T of a rank-k update (P and Q are n x k, no conjugation).
#[derive(Clone, Copy)]
struct Term<T> {
    alpha: T,
    p: MatRef<T>,
    q: MatRef<T>,
}

impl<T> Term<T> {
    /// Rows `r0..r0+len` of P and Q.
    unsafe fn rows(&self, r0: usize, len: usize) -> (MatRef<T>, MatRef<T>) {
        (self.p.sub(r0, 0, len, self.p.cols), self.q.sub(r0, 0, len, self.q.cols))
    }
}

/// Lower triangle of C := beta*C (beta == 0 writes zeros), Hermitian diagonal made real.
unsafe fn scale_lower<T: Scalar>(herm: bool, beta: T, c: MatMut<T>) {
    for j in 0..c.cols {
        for i in j..c.rows {
            let p = c.at(i, j);
            *p = if beta.is_zero() {
                T::zero()
            } else if herm && i == j {
                T::from_real(beta.re() * p.re())
            } else {
                beta * *p
            };
        }
    }
}

/// Lower triangle of C := T + beta*C for a block product T (column-major, leading dimension
/// `ldt`); on a Hermitian diagonal only real parts count and the result is real.
unsafe fn merge_lower<T: Scalar>(herm: bool, t: &[T], ldt: usize, beta: T, c: MatMut<T>) {
    let bz = beta.is_zero();
    for j in 0..c.cols {
        for i in j..c.rows {
            let v = t[i + j * ldt];
            let p = c.at(i, j);
            *p = if herm && i == j {
                T::from_real(if bz { v.re() } else { v.re() + beta.re() * p.re() })
            } else if bz {
                v
            } else {
                v + beta * *p
            };
        }
    }
}

/// Off-diagonal part of the lower triangle of C := sum(alpha_i P_i Q_i^T) + beta*C for rows
/// and columns `r0..r0+n`, by recursive halving: each C21 rectangle is one GEMM per term
/// straight into C. The diagonal blocks left over (order <= nb) are appended to `diag`.
#[allow(clippy::too_many_arguments)]
unsafe fn off_diagonal<T: Scalar>(
    t: usize,
    terms: &[Term<T>],
    beta: T,
    c: MatMut<T>,
    r0: usize,
    n: usize,
    nb: usize,
    diag: &mut Vec<(usize, usize)>,
) {
    if n <= nb {
        diag.push((r0, n));
        return;
    }
    // Split on a block boundary near the middle, so the diagonal blocks come out of order nb
    // (the last one smaller) and the GEMM rectangles stay kernel-aligned.
    let n1 = (n.div_ceil(nb).div_ceil(2) * nb).min(n - 1);
    let n2 = n - n1;
    off_diagonal(t, terms, beta, c, r0, n1, nb, diag);
    let c21 = c.sub(r0 + n1, r0, n2, n1);
    for (i, term) in terms.iter().enumerate() {
        let p2 = term.rows(r0 + n1, n2).0;
        let q1 = term.rows(r0, n1).1;
        let t = if t > 1 { threads_for_gemm::<T>(n2, n1, p2.cols) } else { 1 };
        gemm_with(t, term.alpha, p2, false, q1.t(), false, if i == 0 { beta } else { T::one() }, c21);
    }
    off_diagonal(t, terms, beta, c, r0 + n1, n2, nb, diag);
}

/// Diagonal block `r0..r0+n` of the lower triangle: the full n x n product into a temporary
/// on `t` threads, then only its triangle merged into C.
unsafe fn diagonal_block<T: Scalar>(
    t: usize,
    herm: bool,
    terms: &[Term<T>],
    beta: T,
    c: MatMut<T>,
    r0: usize,
    n: usize,
) {
    let mut tmp = vec![T::zero(); n * n];
    let tv = MatMut::col_major(tmp.as_mut_ptr(), n, n, n);
    for (i, term) in terms.iter().enumerate() {
        let (p, q) = term.rows(r0, n);
        gemm_with(t, term.alpha, p, false, q.t(), false, if i == 0 { T::zero() } else { T::one() }, tv);
    }
    merge_lower(herm, &tmp, n, beta, c.sub(r0, r0, n, n));
}

/// Order of the diagonal blocks for an n x n update: the full square each block computes is
/// wasted work in proportion nb/n, small blocks run GEMM less efficiently; n/8 within
/// [16, HYBLAS_SYRK_NB] balances the two (the gemm crate stays efficient down to small
/// blocks, so even n = 64 gains from halving the wasted square).
fn block_order(n: usize) -> usize {
    let max = *SYRK_NB;
    (n / 8).div_ceil(16).saturating_mul(16).clamp(16.min(max), max)
}

/// Lower triangle of C := sum(alpha_i P_i Q_i^T) + beta*C for rows and columns
/// `r0..r0+n`, on the caller's thread only.
unsafe fn lower_serial<T: Scalar>(herm: bool, terms: &[Term<T>], beta: T, c: MatMut<T>, r0: usize, n: usize) {
    let mut diag = Vec::new();
    off_diagonal(1, terms, beta, c, r0, n, block_order(n), &mut diag);
    for (d0, len) in diag {
        diagonal_block(1, herm, terms, beta, c, d0, len);
    }
}

/// Column boundaries that cut the lower triangle of an n x n matrix into `parts` pieces of
/// equal area: the first j columns hold n*j - j^2/2 elements, so boundary i sits at
/// n*(1 - sqrt(1 - i/parts)), rounded to a multiple of 8.
fn equal_area_columns(n: usize, parts: usize) -> Vec<usize> {
    let mut b: Vec<usize> = (0..=parts)
        .map(|i| {
            let x = n as f64 * (1.0 - (1.0 - i as f64 / parts as f64).sqrt());
            ((x / 8.0).round() as usize * 8).min(n)
        })
        .collect();
    b[parts] = n;
    b
}

/// The `uplo` triangle of C := sum(alpha_i P_i Q_i^T) + beta*C.
///
/// On several threads the triangle is cut into a few column panels per thread, of equal area;
/// the threads claim panels until none is left and update each (its diagonal triangle and the
/// rectangle below it) with one-thread GEMMs, so every product runs at full single-core speed
/// with no synchronisation until the end, and a slow core takes fewer panels.
unsafe fn rank_update<T: Scalar>(uplo: Uplo, herm: bool, mut terms: Vec<Term<T>>, beta: T, c: MatMut<T>) {
    // The upper triangle of C is the lower triangle of C^T = sum(alpha_i Q_i P_i^T).
    let c = match uplo {
        Uplo::Lower => c,
        Uplo::Upper => {
            for t in terms.iter_mut() {
                std::mem::swap(&mut t.p, &mut t.q);
            }
            c.t()
        }
    };
    let n = c.rows;
    let k = terms[0].p.cols;
    let t = threads::nthreads();
    // Half the n x n x k product: the work of the triangle.
    let parallel = t > 1 && n >= 64 * t && threads_for_gemm::<T>(n, n / 2, k) > 1;
    if parallel {
        // A few parts per thread (at least 32 columns each: n >= 64 t leaves at least 2 t),
        // claimed as threads come free.
        let parts = threads::balanced_parts(t).min(n / 32);
        let bounds = equal_area_columns(n, parts);
        let terms = &terms;
        threads::for_each_part(t, parts, |part| {
            let (j0, j1) = (bounds[part], bounds[part + 1]);
            if j1 <= j0 {
                return;
            }
            lower_serial(herm, terms, beta, c, j0, j1 - j0);
            if j1 < n {
                let rect = c.sub(j1, j0, n - j1, j1 - j0);
                for (i, term) in terms.iter().enumerate() {
                    let p = term.rows(j1, n - j1).0;
                    let q = term.rows(j0, j1 - j0).1;
                    gemm_with(1, term.alpha, p, false, q.t(), false, if i == 0 { beta } else { T::one() }, rect);
                }
            }
        });
        return;
    }
    // One thread, or a product too small to split: GEMMs get whatever threads they merit.
    let mut diag = Vec::new();
    off_diagonal(t, &terms, beta, c, 0, n, block_order(n), &mut diag);
    for &(r0, len) in &diag {
        let t_block = if t > 1 { threads_for_gemm::<T>(len, len, k) } else { 1 };
        diagonal_block(t_block, herm, &terms, beta, c, r0, len);
    }
}

/// One term alpha * op(P) * op(Q)^T of a rank-k update on the own kernels, with the
/// conjugations applied while packing.
struct PackedTerm<T> {
    alpha: T,
    p: MatRef<T>,
    conj_p: bool,
    q: MatRef<T>,
    conj_q: bool,
}

/// The `uplo` triangle of C := sum of the terms + beta*C on the own kernels, which skip the
/// tiles outside the triangle (half the product's flops, at the kernels' full speed and on
/// all threads); false where this machine has none (nothing touched). A Hermitian update's
/// diagonal is made real, as the reference does.
unsafe fn rank_update_packed<T: Scalar>(
    uplo: Uplo,
    herm: bool,
    terms: &[PackedTerm<T>],
    beta: T,
    c: MatMut<T>,
) -> bool {
    if !super::packed::available::<T>() {
        return false;
    }
    let (n, k) = (c.rows, terms[0].p.cols);
    let t = threads_for_gemm::<T>(n, n / 2, k);
    for (i, term) in terms.iter().enumerate() {
        let beta_i = if i == 0 { beta } else { T::one() };
        super::packed::gemm(t, term.alpha, term.p, term.conj_p, term.q.t(), term.conj_q, beta_i, c, Some(uplo));
    }
    if herm && T::IS_COMPLEX {
        for j in 0..n {
            let d = c.at(j, j);
            *d = T::from_real(d.re());
        }
    }
    true
}

/// SYRK/HERK: the `uplo` triangle of C := alpha*X*X^T + beta*C (symmetric) or
/// alpha*X'*X'^H + beta*C (`herm`, X' = conj(X) when `conj`; alpha and beta real, the diagonal
/// of C is made real). X is n x k (op(A) already applied by the view).
///
/// # Safety
/// `x` is n x k, `c` is n x n, both valid; C does not overlap X.
pub unsafe fn syrk<T: Scalar>(uplo: Uplo, herm: bool, alpha: T, x: MatRef<T>, conj: bool, beta: T, c: MatMut<T>) {
    let cl = if uplo == Uplo::Lower { c } else { c.t() };
    if c.rows == 0 {
        return;
    }
    if alpha.is_zero() || x.cols == 0 {
        return scale_lower(herm, beta, cl);
    }
    // X' X'^H = X' conj(X')^T with X' = conj?(X).
    let herm_c = herm && T::IS_COMPLEX;
    let term = PackedTerm { alpha, p: x, conj_p: herm_c && conj, q: x, conj_q: herm_c && !conj };
    if rank_update_packed(uplo, herm, &[term], beta, c) {
        return;
    }
    if !herm || !T::IS_COMPLEX {
        return rank_update(uplo, herm, vec![Term { alpha, p: x, q: x }], beta, c);
    }
    // X' X'^H = X' conj(X')^T: one of the two operands is the conjugated copy.
    let (_buf, xc) = packed_copy(x, true);
    let (p, q) = if conj { (xc, x) } else { (x, xc) };
    rank_update(uplo, herm, vec![Term { alpha, p, q }], beta, c)
}

/// SYR2K/HER2K: the `uplo` triangle of C := alpha*X*Y^T + alpha*Y*X^T + beta*C (symmetric) or
/// alpha*X'*Y'^H + conj(alpha)*Y'*X'^H + beta*C (`herm`, X' = conj(X), Y' = conj(Y) when `conj`;
/// beta real, the diagonal of C is made real). X and Y are n x k.
///
/// # Safety
/// `x`, `y` are n x k, `c` is n x n, all valid; C does not overlap X or Y.
#[allow(clippy::too_many_arguments)]
pub unsafe fn syr2k<T: Scalar>(
    uplo: Uplo,
    herm: bool,
    alpha: T,
    x: MatRef<T>,
    y: MatRef<T>,
    conj: bool,
    beta: T,
    c: MatMut<T>,
) {
    let cl = if uplo == Uplo::Lower { c } else { c.t() };
    if c.rows == 0 {
        return;
    }
    if alpha.is_zero() || x.cols == 0 {
        return scale_lower(herm, beta, cl);
    }
    // alpha X' Y'^H + conj(alpha) Y' X'^H with X' = conj?(X), Y' = conj?(Y) (Hermitian), or
    // alpha (X Y^T + Y X^T).
    let hc = herm && T::IS_COMPLEX;
    let terms = [
        PackedTerm { alpha, p: x, conj_p: hc && conj, q: y, conj_q: hc && !conj },
        PackedTerm {
            alpha: if hc { alpha.conj() } else { alpha },
            p: y,
            conj_p: hc && conj,
            q: x,
            conj_q: hc && !conj,
        },
    ];
    if rank_update_packed(uplo, herm, &terms, beta, c) {
        return;
    }
    if !herm || !T::IS_COMPLEX {
        let terms = vec![Term { alpha, p: x, q: y }, Term { alpha, p: y, q: x }];
        return rank_update(uplo, herm, terms, beta, c);
    }
    let (_xb, xc) = packed_copy(x, true);
    let (_yb, yc) = packed_copy(y, true);
    // (X', conj(X')) and (Y', conj(Y')).
    let ((xp, xpc), (yp, ypc)) = if conj { ((xc, x), (yc, y)) } else { ((x, xc), (y, yc)) };
    let terms = vec![Term { alpha, p: xp, q: ypc }, Term { alpha: alpha.conj(), p: yp, q: xpc }];
    rank_update(uplo, herm, terms, beta, c)
}
