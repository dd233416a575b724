//! Triangular products and solves: TRMV/TRSV and TPMV/TPSV (one blocked body over full or
//! packed storage), TBMV/TBSV (band storage).
//!
//! Blocked by `NB` columns: the triangle inside a diagonal block is done by the plain
//! column loops, everything off the diagonal by the GEMV kernels (`N`: fused axpys into the
//! block's rows, `T`: multi-column dots), in the order that leaves unprocessed parts of x
//! untouched until they are read.

use super::kernels::{axpy_cols, dot_cols, gemv_n_block, gemv_t_block, mac};
use super::{div, kdispatch, with_flag, Staged, Stor};
use crate::types::{MatRef, Scalar, VecMut};

/// Diagonal block size.
const NB: usize = 64;

/// x := op(A)*x, A n x n triangular (`upper` or lower, `unit` diagonal or not); op(A) is A,
/// conj(A), A^T or A^H for (trans, conj) as in `gemv`.
///
/// # Safety
/// `a` is a valid n x n view; `x` has n elements and does not overlap `a`.
pub unsafe fn trmv<T: Scalar>(upper: bool, trans: bool, conj: bool, unit: bool, a: MatRef<T>, x: VecMut<T>) {
    if a.rs != 1 && a.cs == 1 {
        // A = B^T for the column-major view B, whose stored triangle is the other one.
        return trmv(!upper, !trans, conj, unit, a.t(), x);
    }
    debug_assert_eq!(a.rs, 1, "trmv: matrix needs a unit stride");
    tr(Stor::full(a.ptr, a.cs as usize), a.rows, upper, trans, conj, unit, false, x);
}

/// Solve op(A)*x = b for x (b given in x); arguments as in [`trmv`]. No test for
/// singularity, as in reference BLAS.
///
/// # Safety
/// As for [`trmv`].
pub unsafe fn trsv<T: Scalar>(upper: bool, trans: bool, conj: bool, unit: bool, a: MatRef<T>, x: VecMut<T>) {
    if a.rs != 1 && a.cs == 1 {
        return trsv(!upper, !trans, conj, unit, a.t(), x);
    }
    debug_assert_eq!(a.rs, 1, "trsv: matrix needs a unit stride");
    tr(Stor::full(a.ptr, a.cs as usize), a.rows, upper, trans, conj, unit, true, x);
}

/// [`trmv`] with A in packed storage (`ap`, n(n+1)/2 elements).
///
/// # Safety
/// `ap` holds the packed triangle; `x` has n elements.
pub unsafe fn tpmv<T: Scalar>(upper: bool, trans: bool, conj: bool, unit: bool, n: usize, ap: *const T, x: VecMut<T>) {
    tr(Stor::packed(ap, n, upper), n, upper, trans, conj, unit, false, x);
}

/// [`trsv`] with A in packed storage (`ap`, n(n+1)/2 elements).
///
/// # Safety
/// `ap` holds the packed triangle; `x` has n elements.
pub unsafe fn tpsv<T: Scalar>(upper: bool, trans: bool, conj: bool, unit: bool, n: usize, ap: *const T, x: VecMut<T>) {
    tr(Stor::packed(ap, n, upper), n, upper, trans, conj, unit, true, x);
}

#[allow(clippy::too_many_arguments)]
unsafe fn tr<T: Scalar>(
    s: Stor<T>,
    n: usize,
    upper: bool,
    trans: bool,
    conj: bool,
    unit: bool,
    solve: bool,
    x: VecMut<T>,
) {
    if n == 0 {
        return;
    }
    let conj = conj && T::IS_COMPLEX;
    let mut xw = Staged::new(x);
    let xp = xw.ptr();
    with_flag!(conj, CJ => {
        if solve {
            kdispatch!(tr_sv::<T, CJ>(s, n, upper, trans, unit, xp))
        } else {
            kdispatch!(tr_mv::<T, CJ>(s, n, upper, trans, unit, xp))
        }
    });
    xw.finish();
}

/// Blocks [ib, ie) top-down.
#[inline(always)]
fn blocks_down(n: usize) -> impl Iterator<Item = (usize, usize)> {
    (0..n).step_by(NB).map(move |ib| (ib, (ib + NB).min(n)))
}

/// Blocks [ib, ie) bottom-up.
#[inline(always)]
fn blocks_up(n: usize) -> impl Iterator<Item = (usize, usize)> {
    let nblk = n.div_ceil(NB);
    (0..nblk).rev().map(move |b| (b * NB, ((b + 1) * NB).min(n)))
}

#[inline(always)]
unsafe fn tr_mv<T: Scalar, const CJ: bool, const LV: u8>(
    s: Stor<T>,
    n: usize,
    upper: bool,
    trans: bool,
    unit: bool,
    x: *mut T,
) {
    let op = |i: usize, j: usize| (*s.at(i, j)).conj_if(CJ);
    let one = T::one();
    match (upper, trans) {
        // x := U x: a block's rows need x below it, so go top-down.
        (true, false) => {
            for (ib, ie) in blocks_down(n) {
                for j in ib..ie {
                    let t = *x.add(j);
                    if !t.is_zero() {
                        for i in ib..j {
                            *x.add(i) = mac::<T, LV>(*x.add(i), op(i, j), t);
                        }
                        if !unit {
                            *x.add(j) = t * op(j, j);
                        }
                    }
                }
                if ie < n {
                    gemv_n_block::<T, CJ, LV>(ie - ib, n - ie, |k| s.at(ib, ie + k), x.add(ie), x.add(ib));
                }
            }
        }
        // x := L x: bottom-up.
        (false, false) => {
            for (ib, ie) in blocks_up(n) {
                for j in (ib..ie).rev() {
                    let t = *x.add(j);
                    if !t.is_zero() {
                        for i in j + 1..ie {
                            *x.add(i) = mac::<T, LV>(*x.add(i), op(i, j), t);
                        }
                        if !unit {
                            *x.add(j) = t * op(j, j);
                        }
                    }
                }
                if ib > 0 {
                    gemv_n_block::<T, CJ, LV>(ie - ib, ib, |k| s.at(ib, k), x, x.add(ib));
                }
            }
        }
        // x := U^T x: a block needs x above it, so go bottom-up.
        (true, true) => {
            for (ib, ie) in blocks_up(n) {
                for j in (ib..ie).rev() {
                    let mut t = *x.add(j);
                    if !unit {
                        t = t * op(j, j);
                    }
                    for i in ib..j {
                        t = mac::<T, LV>(t, op(i, j), *x.add(i));
                    }
                    *x.add(j) = t;
                }
                if ib > 0 {
                    gemv_t_block::<T, CJ, LV>(ib, ie - ib, |k| s.at(0, ib + k), x, one, x.add(ib), 1);
                }
            }
        }
        // x := L^T x: top-down.
        (false, true) => {
            for (ib, ie) in blocks_down(n) {
                for j in ib..ie {
                    let mut t = *x.add(j);
                    if !unit {
                        t = t * op(j, j);
                    }
                    for i in j + 1..ie {
                        t = mac::<T, LV>(t, op(i, j), *x.add(i));
                    }
                    *x.add(j) = t;
                }
                if ie < n {
                    gemv_t_block::<T, CJ, LV>(n - ie, ie - ib, |k| s.at(ie, ib + k), x.add(ie), one, x.add(ib), 1);
                }
            }
        }
    }
}

#[inline(always)]
unsafe fn tr_sv<T: Scalar, const CJ: bool, const LV: u8>(
    s: Stor<T>,
    n: usize,
    upper: bool,
    trans: bool,
    unit: bool,
    x: *mut T,
) {
    let op = |i: usize, j: usize| (*s.at(i, j)).conj_if(CJ);
    let neg_one = -T::one();
    // For the N cases: the solved part of x, negated, as the GEMV kernel's input vector.
    let mut nx = if trans { Vec::new() } else { vec![T::zero(); n] };
    let nxp = nx.as_mut_ptr();
    match (upper, trans) {
        // U x = b: bottom-up.
        (true, false) => {
            for (ib, ie) in blocks_up(n) {
                if ie < n {
                    gemv_n_block::<T, CJ, LV>(ie - ib, n - ie, |k| s.at(ib, ie + k), nxp.add(ie), x.add(ib));
                }
                for j in (ib..ie).rev() {
                    if !(*x.add(j)).is_zero() {
                        if !unit {
                            *x.add(j) = div(*x.add(j), op(j, j));
                        }
                        let t = -*x.add(j);
                        for i in ib..j {
                            *x.add(i) = mac::<T, LV>(*x.add(i), op(i, j), t);
                        }
                    }
                }
                for i in ib..ie {
                    *nxp.add(i) = -*x.add(i);
                }
            }
        }
        // L x = b: top-down.
        (false, false) => {
            for (ib, ie) in blocks_down(n) {
                if ib > 0 {
                    gemv_n_block::<T, CJ, LV>(ie - ib, ib, |k| s.at(ib, k), nxp, x.add(ib));
                }
                for j in ib..ie {
                    if !(*x.add(j)).is_zero() {
                        if !unit {
                            *x.add(j) = div(*x.add(j), op(j, j));
                        }
                        let t = -*x.add(j);
                        for i in j + 1..ie {
                            *x.add(i) = mac::<T, LV>(*x.add(i), op(i, j), t);
                        }
                    }
                }
                for i in ib..ie {
                    *nxp.add(i) = -*x.add(i);
                }
            }
        }
        // U^T x = b: top-down.
        (true, true) => {
            for (ib, ie) in blocks_down(n) {
                if ib > 0 {
                    gemv_t_block::<T, CJ, LV>(ib, ie - ib, |k| s.at(0, ib + k), x, neg_one, x.add(ib), 1);
                }
                for j in ib..ie {
                    let mut t = *x.add(j);
                    for i in ib..j {
                        t = mac::<T, LV>(t, op(i, j), -*x.add(i));
                    }
                    if !unit {
                        t = div(t, op(j, j));
                    }
                    *x.add(j) = t;
                }
            }
        }
        // L^T x = b: bottom-up.
        (false, true) => {
            for (ib, ie) in blocks_up(n) {
                if ie < n {
                    gemv_t_block::<T, CJ, LV>(n - ie, ie - ib, |k| s.at(ie, ib + k), x.add(ie), neg_one, x.add(ib), 1);
                }
                for j in (ib..ie).rev() {
                    let mut t = *x.add(j);
                    for i in j + 1..ie {
                        t = mac::<T, LV>(t, op(i, j), -*x.add(i));
                    }
                    if !unit {
                        t = div(t, op(j, j));
                    }
                    *x.add(j) = t;
                }
            }
        }
    }
    drop(nx);
}

/// x := op(A)*x, A triangular band with `k` off-diagonals in band storage (upper:
/// `A(i,j)` at `a[k + i - j + j*lda]`, lower: `a[i - j + j*lda]`); flags as in [`trmv`].
///
/// # Safety
/// `a` holds the band with `lda >= k+1`; `x` has n elements.
#[allow(clippy::too_many_arguments)]
pub unsafe fn tbmv<T: Scalar>(
    upper: bool,
    trans: bool,
    conj: bool,
    unit: bool,
    n: usize,
    k: usize,
    a: *const T,
    lda: usize,
    x: VecMut<T>,
) {
    tb(upper, trans, conj, unit, false, n, k, a, lda, x);
}

/// Solve op(A)*x = b for a triangular band A; arguments as in [`tbmv`].
///
/// # Safety
/// As for [`tbmv`].
#[allow(clippy::too_many_arguments)]
pub unsafe fn tbsv<T: Scalar>(
    upper: bool,
    trans: bool,
    conj: bool,
    unit: bool,
    n: usize,
    k: usize,
    a: *const T,
    lda: usize,
    x: VecMut<T>,
) {
    tb(upper, trans, conj, unit, true, n, k, a, lda, x);
}

#[allow(clippy::too_many_arguments)]
unsafe fn tb<T: Scalar>(
    upper: bool,
    trans: bool,
    conj: bool,
    unit: bool,
    solve: bool,
    n: usize,
    k: usize,
    a: *const T,
    lda: usize,
    x: VecMut<T>,
) {
    if n == 0 {
        return;
    }
    let conj = conj && T::IS_COMPLEX;
    let mut xw = Staged::new(x);
    let xp = xw.ptr();
    with_flag!(conj, CJ => kdispatch!(tb_body::<T, CJ>(upper, trans, unit, solve, n, k, a, lda, xp)));
    xw.finish();
}

/// Column by column, each column's band part through the axpy/dot kernels.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn tb_body<T: Scalar, const CJ: bool, const LV: u8>(
    upper: bool,
    trans: bool,
    unit: bool,
    solve: bool,
    n: usize,
    k: usize,
    a: *const T,
    lda: usize,
    x: *mut T,
) {
    // Off-diagonal part of column j: first row, its address, and length.
    let seg = |j: usize| -> (usize, *const T, usize) {
        if upper {
            let i0 = j.saturating_sub(k);
            (i0, a.add(j * lda + k + i0 - j), j - i0)
        } else {
            (j + 1, a.add(j * lda + 1), (n - 1).min(j + k) - j)
        }
    };
    let diag = |j: usize| (*a.add(j * lda + if upper { k } else { 0 })).conj_if(CJ);
    // Columns in the order that reads only not-yet-updated (mv) or already-solved (sv) x.
    let forward = upper == (trans == solve);
    let order = |i: usize| if forward { i } else { n - 1 - i };
    for step in 0..n {
        let j = order(step);
        let (i0, p, len) = seg(j);
        match (trans, solve) {
            (false, false) => {
                let t = *x.add(j);
                if !t.is_zero() {
                    axpy_cols::<T, CJ, 1, LV>(&[p], &[t], x.add(i0), len);
                    if !unit {
                        *x.add(j) = t * diag(j);
                    }
                }
            }
            (false, true) => {
                if !(*x.add(j)).is_zero() {
                    if !unit {
                        *x.add(j) = div(*x.add(j), diag(j));
                    }
                    axpy_cols::<T, CJ, 1, LV>(&[p], &[-*x.add(j)], x.add(i0), len);
                }
            }
            (true, false) => {
                let mut t = *x.add(j);
                if !unit {
                    t = t * diag(j);
                }
                *x.add(j) = t + dot_cols::<T, CJ, 1, LV>(&[p], x.add(i0), len)[0];
            }
            (true, true) => {
                let mut t = *x.add(j) - dot_cols::<T, CJ, 1, LV>(&[p], x.add(i0), len)[0];
                if !unit {
                    t = div(t, diag(j));
                }
                *x.add(j) = t;
            }
        }
    }
}
