//! Rank-1 and rank-2 updates: GER (GERU/GERC), SYR/HER and SPR/HPR, SYR2/HER2 and
//! SPR2/HPR2. Column by column axpys (two fused for the rank-2 forms); columns are split
//! across threads, by triangle area for the symmetric forms.

use super::kernels::axpy_cols;
use super::{real_part, triangle_split, with_flag, Contig, Stor, SyncPtr};
use crate::cpu::threads;
use crate::types::{MatMut, Scalar, VecRef};
use once_cell::sync::Lazy;

/// Matrix elements updated below which GER/SYR/SYR2 (and packed/Hermitian forms) stay on
/// one thread (`HYBLAS_RANK_PAR_MIN`).
pub static RANK_PAR_MIN: Lazy<usize> = Lazy::new(|| crate::config::threshold("HYBLAS_RANK_PAR_MIN", 1 << 17));

/// A := alpha * op(x) * op(y)^T + A for an m x n `a`, where op conjugates x when `conj_x`
/// and y when `conj_y` (GERU: neither, GERC: y). Columns with y(j) == 0 are not touched, as
/// in reference BLAS.
///
/// # Safety
/// `a` is valid; `x` has m elements, `y` has n; `a` overlaps neither.
pub unsafe fn ger<T: Scalar>(alpha: T, x: VecRef<T>, conj_x: bool, y: VecRef<T>, conj_y: bool, a: MatMut<T>) {
    if a.rs != 1 && a.cs == 1 {
        return ger(alpha, y, conj_y, x, conj_x, a.t());
    }
    assert_eq!(a.rs, 1, "ger: matrix needs a unit stride");
    let (m, n) = (a.rows, a.cols);
    if m == 0 || n == 0 || alpha.is_zero() {
        return;
    }
    let conj_x = conj_x && T::IS_COMPLEX;
    let conj_y = conj_y && T::IS_COMPLEX;
    let xs = Contig::new(x);
    let xp = SyncPtr(xs.ptr() as *mut T);
    let ap = SyncPtr(a.ptr);
    let lda = a.cs as usize;
    let run = move |c0: usize, c1: usize| {
        let (xp, ap) = (xp.get() as *const T, ap.get());
        with_flag!(conj_x, CX => crate::dispatch_level!(ger_cols::<T, CX>(m, c0, c1, alpha, xp, y, conj_y, ap, lda)))
    };
    let t = threads::threads_for(m.saturating_mul(n), *RANK_PAR_MIN / 2).min(n / 8).max(1);
    if t <= 1 {
        run(0, n);
    } else {
        // One contiguous part per thread (the same core updates the same columns each call).
        let parts = t;
        let chunk = n.div_ceil(parts);
        threads::for_each_part_inline(t, parts, |p| {
            let (c0, c1) = ((p * chunk).min(n), ((p + 1) * chunk).min(n));
            if c0 < c1 {
                run(c0, c1);
            }
        });
    }
    drop(xs);
}

#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn ger_cols<T: Scalar, const CX: bool, const LV: u8>(
    m: usize,
    c0: usize,
    c1: usize,
    alpha: T,
    x: *const T,
    y: VecRef<T>,
    conj_y: bool,
    a: *mut T,
    lda: usize,
) {
    for j in c0..c1 {
        let yj = y.get(j);
        if !yj.is_zero() {
            axpy_cols::<T, CX, 1, LV>(&[x], &[alpha * yj.conj_if(conj_y)], a.add(j * lda), m);
        }
    }
}

/// Symmetric (`herm == false`) or Hermitian rank-1 update of the `upper` or lower triangle
/// of `a`: A := alpha*u*u^T + A, or alpha*u*u^H + A, with u = x or conj(x) (`conj_x`). For
/// Hermitian updates alpha must be real; the diagonal is read as real and written with a zero
/// imaginary part.
///
/// # Safety
/// `a` is a valid n x n view; `x` has n elements and does not overlap `a`.
pub unsafe fn syr<T: Scalar>(upper: bool, herm: bool, alpha: T, x: VecRef<T>, conj_x: bool, a: MatMut<T>) {
    if a.rs != 1 && a.cs == 1 {
        // The transposed view's other triangle holds conj(A) when Hermitian.
        return syr(!upper, herm, alpha, x, conj_x ^ herm, a.t());
    }
    assert_eq!(a.rs, 1, "syr: matrix needs a unit stride");
    sy_r(Stor::full(a.ptr, a.cs as usize), a.rows, upper, herm, alpha, x, None, conj_x);
}

/// [`syr`] with the triangle in packed storage (`ap`, n(n+1)/2 elements).
///
/// # Safety
/// `ap` holds the packed triangle; `x` has n elements and does not overlap it.
#[allow(clippy::too_many_arguments)]
pub unsafe fn spr<T: Scalar>(upper: bool, herm: bool, n: usize, alpha: T, x: VecRef<T>, conj_x: bool, ap: *mut T) {
    sy_r(Stor::packed(ap, n, upper), n, upper, herm, alpha, x, None, conj_x);
}

/// Symmetric or Hermitian rank-2 update: A := alpha*u*v^T + alpha*v*u^T + A, or
/// alpha*u*v^H + conj(alpha)*v*u^H + A, with (u, v) = (x, y), or their conjugates when
/// `conj`. Diagonal handling as in [`syr`].
///
/// # Safety
/// `a` is a valid n x n view; `x` and `y` have n elements and do not overlap `a`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn syr2<T: Scalar>(upper: bool, herm: bool, alpha: T, x: VecRef<T>, y: VecRef<T>, conj: bool, a: MatMut<T>) {
    if a.rs != 1 && a.cs == 1 {
        // conj(A) += alpha*conj(y)*conj(conj(x))^H + conj(alpha)*conj(x)*conj(conj(y))^H.
        return if herm {
            syr2(!upper, herm, alpha, y, x, !conj, a.t())
        } else {
            syr2(!upper, herm, alpha, x, y, conj, a.t())
        };
    }
    assert_eq!(a.rs, 1, "syr2: matrix needs a unit stride");
    sy_r(Stor::full(a.ptr, a.cs as usize), a.rows, upper, herm, alpha, x, Some(y), conj);
}

/// [`syr2`] with the triangle in packed storage (`ap`, n(n+1)/2 elements).
///
/// # Safety
/// `ap` holds the packed triangle; `x`, `y` have n elements and do not overlap it.
#[allow(clippy::too_many_arguments)]
pub unsafe fn spr2<T: Scalar>(
    upper: bool,
    herm: bool,
    n: usize,
    alpha: T,
    x: VecRef<T>,
    y: VecRef<T>,
    conj: bool,
    ap: *mut T,
) {
    sy_r(Stor::packed(ap, n, upper), n, upper, herm, alpha, x, Some(y), conj);
}

/// Rank-1 (`y == None`) or rank-2 update of a stored triangle.
#[allow(clippy::too_many_arguments)]
unsafe fn sy_r<T: Scalar>(
    s: Stor<T>,
    n: usize,
    upper: bool,
    herm: bool,
    alpha: T,
    x: VecRef<T>,
    y: Option<VecRef<T>>,
    conj: bool,
) {
    if n == 0 || alpha.is_zero() {
        return;
    }
    let herm = herm && T::IS_COMPLEX;
    let conj = conj && T::IS_COMPLEX;
    let xs = Contig::new(x);
    let ys = y.map(|y| Contig::new(y));
    let xp = SyncPtr(xs.ptr() as *mut T);
    let yp = ys.as_ref().map(|y| SyncPtr(y.ptr() as *mut T));
    let run = move |c0: usize, c1: usize| {
        let x = xp.get() as *const T;
        with_flag!(conj, CJ => match yp {
            None => crate::dispatch_level!(r1_cols::<T, CJ>(s, n, upper, herm, alpha, x, c0, c1)),
            Some(yp) => crate::dispatch_level!(r2_cols::<T, CJ>(s, n, upper, herm, alpha, x, yp.get() as *const T, c0, c1)),
        })
    };
    let t = threads::threads_for(n * n / 2, *RANK_PAR_MIN / 2).min(n / 16).max(1);
    if t <= 1 {
        run(0, n);
    } else {
        let parts = t;
        let bounds = triangle_split(n, parts, upper);
        threads::for_each_part_inline(t, parts, |p| {
            if bounds[p] < bounds[p + 1] {
                run(bounds[p], bounds[p + 1]);
            }
        });
    }
    drop((xs, ys));
}

/// Write `d + v` (Hermitian: real parts only) to the diagonal element `p`.
#[inline(always)]
unsafe fn diag_add<T: Scalar>(p: *mut T, v: T, herm: bool) {
    *p = if herm { T::from_real((*p).re() + v.re()) } else { *p + v };
}

#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn r1_cols<T: Scalar, const CJ: bool, const LV: u8>(
    s: Stor<T>,
    n: usize,
    upper: bool,
    herm: bool,
    alpha: T,
    x: *const T,
    c0: usize,
    c1: usize,
) {
    for j in c0..c1 {
        let xj = (*x.add(j)).conj_if(CJ);
        let d = s.at(j, j);
        if xj.is_zero() {
            if herm {
                *d = real_part(*d);
            }
            continue;
        }
        let t = alpha * xj.conj_if(herm);
        if upper {
            axpy_cols::<T, CJ, 1, LV>(&[x], &[t], s.at(0, j), j);
        } else if j + 1 < n {
            axpy_cols::<T, CJ, 1, LV>(&[x.add(j + 1)], &[t], s.at(j + 1, j), n - j - 1);
        }
        diag_add(d, xj * t, herm);
    }
}

#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn r2_cols<T: Scalar, const CJ: bool, const LV: u8>(
    s: Stor<T>,
    n: usize,
    upper: bool,
    herm: bool,
    alpha: T,
    x: *const T,
    y: *const T,
    c0: usize,
    c1: usize,
) {
    for j in c0..c1 {
        let xj = (*x.add(j)).conj_if(CJ);
        let yj = (*y.add(j)).conj_if(CJ);
        let d = s.at(j, j);
        if xj.is_zero() && yj.is_zero() {
            if herm {
                *d = real_part(*d);
            }
            continue;
        }
        let t1 = alpha * yj.conj_if(herm);
        let t2 = (alpha * xj).conj_if(herm);
        if upper {
            axpy_cols::<T, CJ, 2, LV>(&[x, y], &[t1, t2], s.at(0, j), j);
        } else if j + 1 < n {
            axpy_cols::<T, CJ, 2, LV>(&[x.add(j + 1), y.add(j + 1)], &[t1, t2], s.at(j + 1, j), n - j - 1);
        }
        diag_add(d, xj * t1 + yj * t2, herm);
    }
}
