//! Triangular products and solves: TRMV/TRSV and TPMV/TPSV (one blocked body over full or
//! packed storage), TBMV/TBSV (band storage).
//!
//! Blocked by `NB` columns: the triangle inside a diagonal block goes column by column
//! through the axpy/dot kernels, everything off the diagonal through the GEMV kernels (`N`:
//! a block's columns applied to the rows outside it as fused axpys over long columns, `T`:
//! multi-column dots), in an order that reads every part of x before it changes (products)
//! or after it is solved (solves).

use super::kernels::{axpy_cols, dot_cols, gemv_n_block, gemv_t_block};
use super::{div, with_flag, Staged, Stor};
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
    assert_eq!(a.rs, 1, "trmv: matrix needs a unit stride");
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
    assert_eq!(a.rs, 1, "trsv: matrix needs a unit stride");
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
            crate::dispatch_level!(tr_sv::<T, CJ>(s, n, upper, trans, unit, xp))
        } else {
            crate::dispatch_level!(tr_mv::<T, CJ>(s, n, upper, trans, unit, xp))
        }
    });
    xw.finish();
}

/// Diagonal block `step` of an n x n matrix, counting top-down or bottom-up: [ib, ie).
#[inline(always)]
fn block(n: usize, step: usize, down: bool) -> (usize, usize) {
    let b = if down { step } else { n.div_ceil(NB) - 1 - step };
    (b * NB, ((b + 1) * NB).min(n))
}

/// The off-diagonal part of column j inside the diagonal block [ib, ie): its first row and
/// length (rows ib..j when upper, j+1..ie when lower).
#[inline(always)]
fn in_block(upper: bool, ib: usize, ie: usize, j: usize) -> (usize, usize) {
    if upper {
        (ib, j - ib)
    } else {
        (j + 1, ie - j - 1)
    }
}

/// x := op(A) x. `N`: each block's diagonal triangle, then its columns applied to the rows
/// outside it as one GEMV (x of the block still unchanged when it is used). `T`: each block
/// takes dots of its columns with the part of x outside it (still unchanged), then its own
/// triangle.
#[inline(always)]
unsafe fn tr_mv<T: Scalar, const CJ: bool, const LV: u8>(
    s: Stor<T>,
    n: usize,
    upper: bool,
    trans: bool,
    unit: bool,
    x: *mut T,
) {
    let diag = |j: usize| (*s.at(j, j)).conj_if(CJ);
    let one = T::one();
    // Order: N upper / T lower top-down; N lower / T upper bottom-up.
    let down = upper != trans;
    for step in 0..n.div_ceil(NB) {
        let (ib, ie) = block(n, step, down);
        if !trans {
            // Rows outside the block (above it when upper) get this block's columns.
            let (r0, r1) = if upper { (0, ib) } else { (ie, n) };
            if r0 < r1 {
                gemv_n_block::<T, CJ, LV>(r1 - r0, ie - ib, |k| s.at(r0, ib + k), |k| *x.add(ib + k), x.add(r0));
            }
            // The block's triangle, columns in the order that reads each x(j) unchanged.
            for step in 0..ie - ib {
                let j = if upper { ib + step } else { ie - 1 - step };
                let t = *x.add(j);
                if t.is_zero() {
                    continue;
                }
                let (i0, len) = in_block(upper, ib, ie, j);
                axpy_cols::<T, CJ, 1, LV>(&[s.at(i0, j) as *const T], &[t], x.add(i0), len);
                if !unit {
                    *x.add(j) = t * diag(j);
                }
            }
        } else {
            // The block's triangle first (it reads x inside the block only)...
            for step in 0..ie - ib {
                let j = if upper { ie - 1 - step } else { ib + step };
                let (i0, len) = in_block(upper, ib, ie, j);
                let mut t = *x.add(j);
                if !unit {
                    t *= diag(j);
                }
                let d = dot_cols::<T, CJ, 1, LV>(&[s.at(i0, j) as *const T], x.add(i0), len);
                *x.add(j) = t + d[0];
            }
            // ...then the dots with x outside it (above when upper), not yet changed.
            let (r0, r1) = if upper { (0, ib) } else { (ie, n) };
            if r0 < r1 {
                gemv_t_block::<T, CJ, LV>(r1 - r0, ie - ib, |k| s.at(r0, ib + k), x.add(r0), one, x.add(ib), 1);
            }
        }
    }
}

/// Solve op(A) x = b. `N`: solve a block's triangle, then subtract its columns times the
/// solved part from the rows still to solve (one GEMV). `T`: subtract the dots of a block's
/// columns with the solved part of x, then solve its triangle.
#[inline(always)]
unsafe fn tr_sv<T: Scalar, const CJ: bool, const LV: u8>(
    s: Stor<T>,
    n: usize,
    upper: bool,
    trans: bool,
    unit: bool,
    x: *mut T,
) {
    let diag = |j: usize| (*s.at(j, j)).conj_if(CJ);
    // Order: N lower / T upper top-down; N upper / T lower bottom-up.
    let down = upper == trans;
    for step in 0..n.div_ceil(NB) {
        let (ib, ie) = block(n, step, down);
        if !trans {
            for step in 0..ie - ib {
                let j = if upper { ie - 1 - step } else { ib + step };
                if (*x.add(j)).is_zero() {
                    continue;
                }
                if !unit {
                    *x.add(j) = div(*x.add(j), diag(j));
                }
                let (i0, len) = in_block(upper, ib, ie, j);
                axpy_cols::<T, CJ, 1, LV>(&[s.at(i0, j) as *const T], &[-*x.add(j)], x.add(i0), len);
            }
            // Rows still to solve (above the block when upper) lose this block's part.
            let (r0, r1) = if upper { (0, ib) } else { (ie, n) };
            if r0 < r1 {
                gemv_n_block::<T, CJ, LV>(r1 - r0, ie - ib, |k| s.at(r0, ib + k), |k| -*x.add(ib + k), x.add(r0));
            }
        } else {
            // Dots with the solved part of x (above the block when upper)...
            let (r0, r1) = if upper { (0, ib) } else { (ie, n) };
            if r0 < r1 {
                gemv_t_block::<T, CJ, LV>(r1 - r0, ie - ib, |k| s.at(r0, ib + k), x.add(r0), -T::one(), x.add(ib), 1);
            }
            // ...then the block's triangle.
            for step in 0..ie - ib {
                let j = if upper { ib + step } else { ie - 1 - step };
                let (i0, len) = in_block(upper, ib, ie, j);
                let d = dot_cols::<T, CJ, 1, LV>(&[s.at(i0, j) as *const T], x.add(i0), len);
                let mut t = *x.add(j) - d[0];
                if !unit {
                    t = div(t, diag(j));
                }
                *x.add(j) = t;
            }
        }
    }
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
    with_flag!(conj, CJ => crate::dispatch_level!(tb_body::<T, CJ>(upper, trans, unit, solve, n, k, a, lda, xp)));
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
                    t *= diag(j);
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
