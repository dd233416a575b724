//! GEMV and GBMV.

use super::kernels::{axpy_cols, dot_cols, gemv_n_block, gemv_t_block, mac};
use super::{scale_vec, with_flag, Contig, Staged, SyncPtr};
use crate::cpu::threads;
use crate::types::{MatRef, Scalar, VecMut, VecRef};
use once_cell::sync::Lazy;

/// Matrix elements (m*n) below which GEMV stays on one thread (`HYBLAS_GEMV_PAR_MIN`).
pub static GEMV_PAR_MIN: Lazy<usize> = Lazy::new(|| crate::config::threshold("HYBLAS_GEMV_PAR_MIN", 1 << 15));

/// Work split: one contiguous part per thread, so that repeated calls on the same matrix
/// find each part in the same core's cache (the caller claims part 0 first; a worker that
/// is late leaves its part to the caller). Rows or columns per thread at least.
const MIN_ROWS_PER_THREAD: usize = 64;
const MIN_COLS_PER_THREAD: usize = 16;

/// y := alpha*op(A)*x + beta*y for an m x n matrix `a`; op(A) is A, conj(A), A^T or A^H for
/// (trans, conj) = (false, false), (false, true), (true, false), (true, true).
///
/// Reference semantics: beta == 0 sets y to zero without reading it; alpha == 0 reads
/// neither A nor x.
///
/// # Safety
/// Views valid; `x` has `op(A)`'s column count, `y` its row count; `y` overlaps neither.
pub unsafe fn gemv<T: Scalar>(trans: bool, conj: bool, alpha: T, a: MatRef<T>, x: VecRef<T>, beta: T, y: VecMut<T>) {
    // The kernels want unit row stride; a row-major view is the transposed column-major one.
    if a.rs != 1 && a.cs == 1 {
        return gemv(!trans, conj, alpha, a.t(), x, beta, y);
    }
    scale_vec(beta, y);
    if alpha.is_zero() || a.rows == 0 || a.cols == 0 {
        return;
    }
    let conj = conj && T::IS_COMPLEX;
    if a.rs != 1 {
        return gemv_strided(trans, conj, alpha, a, x, y);
    }
    if trans {
        gemv_t(conj, alpha, a, x, y)
    } else {
        gemv_n(conj, alpha, a, x, y)
    }
}

/// y += A * (alpha*x) through fused column axpys. Threads split the columns, each but the
/// first summing into a private y that is added in at the end (each thread then streams
/// whole columns, which scales much better than splitting the rows); matrices too narrow for
/// that split their rows.
unsafe fn gemv_n<T: Scalar>(conj: bool, alpha: T, a: MatRef<T>, x: VecRef<T>, y: VecMut<T>) {
    let (m, n) = (a.rows, a.cols);
    let mut yw = Staged::new(y);
    let ap = SyncPtr(a.ptr as *mut T);
    let lda = a.cs as usize;
    // Rows [r0, r1) of columns [c0, c1) into `out` (which holds rows r0..r1).
    let run = move |r0: usize, r1: usize, c0: usize, c1: usize, out: *mut T| {
        let ap = ap.get() as *const T;
        let col = move |j: usize| ap.add(r0 + (c0 + j) * lda);
        let s = move |j: usize| alpha * x.get(c0 + j);
        with_flag!(conj, CJ => crate::dispatch_level!(gemv_n_block::<T, CJ>(r1 - r0, c1 - c0, col, s, out)))
    };
    let t = threads::threads_for(m.saturating_mul(n), *GEMV_PAR_MIN / 2);
    if t <= 1 {
        run(0, m, 0, n, yw.ptr());
    } else if n >= MIN_COLS_PER_THREAD * t {
        let chunk = n.div_ceil(t).next_multiple_of(4);
        let mut bufs: Vec<Vec<T>> = (1..t).map(|_| vec![T::zero(); m]).collect();
        let mut outs = vec![SyncPtr(yw.ptr())];
        outs.extend(bufs.iter_mut().map(|b| SyncPtr(b.as_mut_ptr())));
        threads::for_each_part_inline(t, t, |p| {
            let (c0, c1) = ((p * chunk).min(n), ((p + 1) * chunk).min(n));
            if c0 < c1 {
                run(0, m, c0, c1, outs[p].get());
            }
        });
        let yp = yw.ptr();
        for b in &bufs {
            crate::dispatch_level!(add_into::<T>(b.as_ptr(), yp, m));
        }
    } else {
        let t = t.min(m / MIN_ROWS_PER_THREAD).max(1);
        let chunk = m.div_ceil(t).next_multiple_of(16);
        let yp = SyncPtr(yw.ptr());
        threads::for_each_part_inline(t, t, |p| {
            let (r0, r1) = ((p * chunk).min(m), ((p + 1) * chunk).min(m));
            if r0 < r1 {
                run(r0, r1, 0, n, yp.get().add(r0));
            }
        });
    }
    yw.finish();
}

/// y[0..m] += src[0..m].
#[inline(always)]
unsafe fn add_into<T: Scalar, const LV: u8>(src: *const T, y: *mut T, m: usize) {
    axpy_cols::<T, false, 1, LV>(&[src], &[T::one()], y, m);
}

/// y += alpha * A^T x: columns split across threads, each running multi-column dots.
unsafe fn gemv_t<T: Scalar>(conj: bool, alpha: T, a: MatRef<T>, x: VecRef<T>, y: VecMut<T>) {
    let (m, n) = (a.rows, a.cols);
    let xs = Contig::new(x);
    let xp = SyncPtr(xs.ptr() as *mut T);
    let ap = SyncPtr(a.ptr as *mut T);
    let lda = a.cs as usize;
    let yp = SyncPtr(y.ptr);
    let inc = y.inc;
    let run = move |c0: usize, c1: usize| {
        let (ap, xp) = (ap.get() as *const T, xp.get() as *const T);
        let out = yp.get().offset(c0 as isize * inc);
        let col = move |j: usize| ap.add((c0 + j) * lda);
        with_flag!(conj, CJ => crate::dispatch_level!(gemv_t_block::<T, CJ>(m, c1 - c0, col, xp, alpha, out, inc)))
    };
    let t = threads::threads_for(m.saturating_mul(n), *GEMV_PAR_MIN / 2).min(n / MIN_COLS_PER_THREAD).max(1);
    if t <= 1 {
        run(0, n);
    } else {
        let parts = t;
        let chunk = n.div_ceil(parts).next_multiple_of(4);
        threads::for_each_part_inline(t, parts, |p| {
            let (c0, c1) = ((p * chunk).min(n), ((p + 1) * chunk).min(n));
            if c0 < c1 {
                run(c0, c1);
            }
        });
    }
    drop(xs);
}

/// General-stride fallback (neither stride is 1; the BLAS interfaces never produce this).
unsafe fn gemv_strided<T: Scalar>(trans: bool, conj: bool, alpha: T, a: MatRef<T>, x: VecRef<T>, y: VecMut<T>) {
    for j in 0..a.cols {
        if trans {
            let mut t = T::zero();
            for i in 0..a.rows {
                t += a.get(i, j).conj_if(conj) * x.get(i);
            }
            *y.at(j) += alpha * t;
        } else {
            let t = alpha * x.get(j);
            for i in 0..a.rows {
                *y.at(i) += t * a.get(i, j).conj_if(conj);
            }
        }
    }
}

/// y := alpha*op(A)*x + beta*y for an m x n band matrix with `kl` sub- and `ku`
/// super-diagonals in band storage (`A(i,j)` at `a[ku + i - j + j*lda]`); op as in [`gemv`].
///
/// # Safety
/// `a` holds the band with leading dimension `lda >= kl+ku+1`; vectors as in [`gemv`].
#[allow(clippy::too_many_arguments)]
pub unsafe fn gbmv<T: Scalar>(
    trans: bool,
    conj: bool,
    m: usize,
    n: usize,
    kl: usize,
    ku: usize,
    alpha: T,
    a: *const T,
    lda: usize,
    x: VecRef<T>,
    beta: T,
    y: VecMut<T>,
) {
    scale_vec(beta, y);
    if alpha.is_zero() || m == 0 || n == 0 {
        return;
    }
    let conj = conj && T::IS_COMPLEX;
    let xs = Contig::new(x);
    let mut yw = Staged::new(y);
    let band = Band { a, lda, m, n, kl, ku };
    with_flag!(conj, CJ => crate::dispatch_level!(gbmv_body::<T, CJ>(trans, band, alpha, xs.ptr(), yw.ptr())));
    yw.finish();
}

#[derive(Clone, Copy)]
struct Band<T> {
    a: *const T,
    lda: usize,
    m: usize,
    n: usize,
    kl: usize,
    ku: usize,
}

impl<T> Band<T> {
    /// Rows [i0, i1) of column j inside the band, and the address of row i0.
    #[inline(always)]
    unsafe fn col(&self, j: usize) -> (usize, usize, *const T) {
        let i0 = j.saturating_sub(self.ku);
        let i1 = self.m.min(j + self.kl + 1);
        (i0, i1.max(i0), self.a.add(j * self.lda + self.ku + i0 - j))
    }
}

/// Column by column: an axpy (N) or a dot (T) over the part of the column inside the band.
#[inline(always)]
unsafe fn gbmv_body<T: Scalar, const CJ: bool, const LV: u8>(
    trans: bool,
    band: Band<T>,
    alpha: T,
    x: *const T,
    y: *mut T,
) {
    for j in 0..band.n {
        let (i0, i1, p) = band.col(j);
        if i0 >= i1 {
            continue;
        }
        if trans {
            let d = dot_cols::<T, CJ, 1, LV>(&[p], x.add(i0), i1 - i0);
            *y.add(j) = mac::<T, LV>(*y.add(j), alpha, d[0]);
        } else if !(*x.add(j)).is_zero() {
            axpy_cols::<T, CJ, 1, LV>(&[p], &[alpha * *x.add(j)], y.add(i0), i1 - i0);
        }
    }
}
