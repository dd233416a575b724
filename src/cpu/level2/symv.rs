//! SYMV/HEMV, SPMV/HPMV (one body over full or packed storage) and SBMV/HBMV.
//!
//! Each stored column is read once and used twice: as an axpy into `y` (the stored triangle)
//! and as a dot with `x` (its mirror image), four columns at a time. Threads take column
//! ranges of equal triangle area; as every column touches rows all over `y`, each thread but
//! the first accumulates into a private `y` that is added in at the end.

use super::kernels::{mac, symv_cols};
use super::{real_part, scale_vec, triangle_split, Contig, Staged, Stor, SyncPtr};
use crate::cpu::threads;
use crate::types::{MatRef, Scalar, VecMut, VecRef};
use once_cell::sync::Lazy;

/// Stored elements (n*n/2) below which SYMV/HEMV/SPMV/HPMV stay on one thread
/// (`HYBLAS_SYMV_PAR_MIN`).
pub static SYMV_PAR_MIN: Lazy<usize> = Lazy::new(|| crate::config::threshold("HYBLAS_SYMV_PAR_MIN", 1 << 17));

/// Columns per fused group.
const G: usize = 4;

/// y := alpha*A*x + beta*y, A symmetric (`herm == false`) or Hermitian, given by the `upper`
/// or lower triangle of `a`. With `conj`, the Hermitian matrix used is conj(A) = A^T (what a
/// row-major call maps to). A Hermitian diagonal is read as real.
///
/// # Safety
/// `a` is n x n and valid; `x`, `y` have n elements; `y` overlaps neither.
#[allow(clippy::too_many_arguments)]
pub unsafe fn symv<T: Scalar>(
    upper: bool,
    herm: bool,
    conj: bool,
    alpha: T,
    a: MatRef<T>,
    x: VecRef<T>,
    beta: T,
    y: VecMut<T>,
) {
    if a.rs != 1 && a.cs == 1 {
        // The transposed view holds the same triangle as the other one, of conj(A).
        return symv(!upper, herm, !conj, alpha, a.t(), x, beta, y);
    }
    assert_eq!(a.rs, 1, "symv: matrix needs a unit stride");
    sym_mv(Stor::full(a.ptr, a.cs as usize), a.rows, upper, herm, conj, alpha, x, beta, y);
}

/// As [`symv`] with the triangle in packed storage (`ap`, n(n+1)/2 elements).
///
/// # Safety
/// `ap` holds the packed triangle; vectors as in [`symv`].
#[allow(clippy::too_many_arguments)]
pub unsafe fn spmv<T: Scalar>(
    upper: bool,
    herm: bool,
    conj: bool,
    n: usize,
    alpha: T,
    ap: *const T,
    x: VecRef<T>,
    beta: T,
    y: VecMut<T>,
) {
    sym_mv(Stor::packed(ap, n, upper), n, upper, herm, conj, alpha, x, beta, y);
}

#[allow(clippy::too_many_arguments)]
unsafe fn sym_mv<T: Scalar>(
    s: Stor<T>,
    n: usize,
    upper: bool,
    herm: bool,
    conj: bool,
    alpha: T,
    x: VecRef<T>,
    beta: T,
    y: VecMut<T>,
) {
    scale_vec(beta, y);
    if alpha.is_zero() || n == 0 {
        return;
    }
    let herm = herm && T::IS_COMPLEX;
    let xs = Contig::new(x);
    let mut yw = Staged::new(y);
    let xp = SyncPtr(xs.ptr() as *mut T);
    let run = move |c0: usize, c1: usize, y: *mut T| {
        let x = xp.get() as *const T;
        // (conjugate the axpy half, conjugate the dot half): A holds the stored triangle; the
        // mirrored half is its conjugate transpose when Hermitian.
        match (herm, conj) {
            (false, _) => crate::dispatch_level!(sym_cols::<T, false, false>(s, n, upper, herm, alpha, c0, c1, x, y)),
            (true, false) => crate::dispatch_level!(sym_cols::<T, false, true>(s, n, upper, herm, alpha, c0, c1, x, y)),
            (true, true) => crate::dispatch_level!(sym_cols::<T, true, false>(s, n, upper, herm, alpha, c0, c1, x, y)),
        }
    };
    let t = threads::threads_for(n * n / 2, *SYMV_PAR_MIN / 2).min(n / 32).max(1);
    if t <= 1 {
        run(0, n, yw.ptr());
    } else {
        let bounds = triangle_split(n, t, upper);
        let mut bufs: Vec<Vec<T>> = (1..t).map(|_| vec![T::zero(); n]).collect();
        let mut outs = vec![SyncPtr(yw.ptr())];
        outs.extend(bufs.iter_mut().map(|b| SyncPtr(b.as_mut_ptr())));
        threads::for_each_part_inline(t, t, |p| {
            if bounds[p] < bounds[p + 1] {
                run(bounds[p], bounds[p + 1], outs[p].get());
            }
        });
        let yp = yw.ptr();
        for b in &bufs {
            for (i, &v) in b.iter().enumerate() {
                *yp.add(i) += v;
            }
        }
    }
    yw.finish();
}

/// Columns [c0, c1): groups of `G`, then single columns.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn sym_cols<T: Scalar, const CN: bool, const CT: bool, const LV: u8>(
    s: Stor<T>,
    n: usize,
    upper: bool,
    herm: bool,
    alpha: T,
    c0: usize,
    c1: usize,
    x: *const T,
    y: *mut T,
) {
    let mut j = c0;
    while j + G <= c1 {
        sym_group::<T, CN, CT, G, LV>(s, n, upper, herm, alpha, j, x, y);
        j += G;
    }
    while j < c1 {
        sym_group::<T, CN, CT, 1, LV>(s, n, upper, herm, alpha, j, x, y);
        j += 1;
    }
}

/// Columns j..j+C: the rectangle off the diagonal block through the fused kernel, the
/// diagonal block element by element.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn sym_group<T: Scalar, const CN: bool, const CT: bool, const C: usize, const LV: u8>(
    s: Stor<T>,
    n: usize,
    upper: bool,
    herm: bool,
    alpha: T,
    j: usize,
    x: *const T,
    y: *mut T,
) {
    let mut t1 = [T::zero(); C];
    let mut cols = [std::ptr::null(); C];
    // Rows of the fused rectangle: above the group (upper) or below it (lower).
    let r0 = if upper { 0 } else { j + C };
    for k in 0..C {
        t1[k] = alpha * *x.add(j + k);
        if r0 < n {
            cols[k] = s.at(r0, j + k) as *const T;
        }
    }
    let mut t2 = [T::zero(); C];
    if upper {
        t2 = symv_cols::<T, CN, CT, C, LV>(&cols, &t1, x, y, j);
        for k in 0..C {
            let jj = j + k;
            for i in j..jj {
                let a = *s.at(i, jj);
                *y.add(i) = mac::<T, LV>(*y.add(i), a.conj_if(CN), t1[k]);
                t2[k] = mac::<T, LV>(t2[k], a.conj_if(CT), *x.add(i));
            }
        }
    } else {
        if r0 < n {
            t2 = symv_cols::<T, CN, CT, C, LV>(&cols, &t1, x.add(r0), y.add(r0), n - r0);
        }
        for k in 0..C {
            let jj = j + k;
            for i in jj + 1..r0 {
                let a = *s.at(i, jj);
                *y.add(i) = mac::<T, LV>(*y.add(i), a.conj_if(CN), t1[k]);
                t2[k] = mac::<T, LV>(t2[k], a.conj_if(CT), *x.add(i));
            }
        }
    }
    for k in 0..C {
        let jj = j + k;
        let d = *s.at(jj, jj);
        let d = if herm { real_part(d) } else { d };
        let yj = mac::<T, LV>(*y.add(jj), t1[k], d);
        *y.add(jj) = mac::<T, LV>(yj, alpha, t2[k]);
    }
}

/// y := alpha*A*x + beta*y, A symmetric/Hermitian band with `k` off-diagonals, the `upper`
/// (`A(i,j)` at `a[k + i - j + j*lda]`) or lower (`a[i - j + j*lda]`) half in band storage;
/// `herm`/`conj` as in [`symv`].
///
/// # Safety
/// `a` holds the band with `lda >= k+1`; `x`, `y` have n elements; `y` overlaps neither.
#[allow(clippy::too_many_arguments)]
pub unsafe fn sbmv<T: Scalar>(
    upper: bool,
    herm: bool,
    conj: bool,
    n: usize,
    k: usize,
    alpha: T,
    a: *const T,
    lda: usize,
    x: VecRef<T>,
    beta: T,
    y: VecMut<T>,
) {
    scale_vec(beta, y);
    if alpha.is_zero() || n == 0 {
        return;
    }
    let herm = herm && T::IS_COMPLEX;
    let xs = Contig::new(x);
    let mut yw = Staged::new(y);
    let (xp, yp) = (xs.ptr(), yw.ptr());
    match (herm, conj) {
        (false, _) => crate::dispatch_level!(sbmv_body::<T, false, false>(upper, herm, n, k, alpha, a, lda, xp, yp)),
        (true, false) => crate::dispatch_level!(sbmv_body::<T, false, true>(upper, herm, n, k, alpha, a, lda, xp, yp)),
        (true, true) => crate::dispatch_level!(sbmv_body::<T, true, false>(upper, herm, n, k, alpha, a, lda, xp, yp)),
    }
    yw.finish();
}

#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn sbmv_body<T: Scalar, const CN: bool, const CT: bool, const LV: u8>(
    upper: bool,
    herm: bool,
    n: usize,
    k: usize,
    alpha: T,
    a: *const T,
    lda: usize,
    x: *const T,
    y: *mut T,
) {
    for j in 0..n {
        let t1 = alpha * *x.add(j);
        let col = a.add(j * lda);
        let (d, t2) = if upper {
            let i0 = j.saturating_sub(k);
            let t2 = symv_cols::<T, CN, CT, 1, LV>(&[col.add(k + i0 - j)], &[t1], x.add(i0), y.add(i0), j - i0);
            (*col.add(k), t2[0])
        } else {
            let len = (n - 1).min(j + k) - j;
            let t2 = symv_cols::<T, CN, CT, 1, LV>(&[col.add(1)], &[t1], x.add(j + 1), y.add(j + 1), len);
            (*col, t2[0])
        };
        let d = if herm { real_part(d) } else { d };
        let yj = mac::<T, LV>(*y.add(j), t1, d);
        *y.add(j) = mac::<T, LV>(yj, alpha, t2);
    }
}
