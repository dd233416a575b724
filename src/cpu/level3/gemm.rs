//! C := alpha*op(A)*op(B) + beta*C on the `gemm` crate.
//!
//! Views already carry the transposition (swapped strides); conjugation comes as flags. The
//! `gemm` crate's conjugating path for complex operands is several times slower than its plain
//! one, so a conjugated operand is copied once, conjugated, into a packed buffer (O(mk) work
//! next to O(mnk)) and the product runs on the fast path.
//!
//! On several threads C is cut into one panel per thread (see [`gemm_with`]), each a
//! one-thread product, with the calling thread taking the first.

use crate::cpu::threads;
use crate::types::{MatMut, MatRef, Scalar};
use gemm::Parallelism;
use once_cell::sync::Lazy;

/// Work (m*n*k in double-precision multiply-add times: a complex one counts 4, a single
/// precision one half) below which GEMM stays on the caller's thread: under ~128^3 the
/// hand-off to the pool costs more than the second core gains.
pub static GEMM_PAR_MIN: Lazy<usize> = Lazy::new(|| crate::config::threshold("HYBLAS_GEMM_PAR_MIN", 128 * 128 * 128));

/// Elements above which a conjugated copy is made on all threads.
const COPY_PAR_MIN: usize = 1 << 16;

/// A packed copy of `a` (conjugated when `conj`) and a view of it. The copy keeps the
/// operand's orientation (column-major for a column-oriented view, row-major for a transposed
/// one) so the source is read along its contiguous dimension.
///
/// # Safety
/// `a` is a valid view.
pub unsafe fn packed_copy<T: Scalar>(a: MatRef<T>, conj: bool) -> (Vec<T>, MatRef<T>) {
    // Work on the column-major orientation of the copy: `src` is a (transposed if need be)
    // view whose columns are the destination's contiguous runs.
    let row_major = a.cs.unsigned_abs() < a.rs.unsigned_abs();
    let src = if row_major { a.t() } else { a };
    let (inner, outer) = (src.rows, src.cols);
    let mut buf: Vec<T> = Vec::with_capacity(inner * outer);
    let dst = MatMut::col_major(buf.as_mut_ptr(), inner, outer, inner.max(1));
    let copy = |j0: usize, j1: usize| {
        for j in j0..j1 {
            let (s, d) = (src.sub(0, j, inner, 1), dst.sub(0, j, inner, 1));
            for i in 0..inner {
                *d.at(i, 0) = s.get(i, 0).conj_if(conj);
            }
        }
    };
    let t = if inner * outer >= COPY_PAR_MIN { threads::nthreads().min(outer) } else { 1 };
    if t > 1 {
        let step = outer.div_ceil(t);
        threads::for_each_part(t, t, |p| copy((p * step).min(outer), ((p + 1) * step).min(outer)));
    } else {
        copy(0, outer);
    }
    buf.set_len(inner * outer);
    let view = MatRef::col_major(buf.as_ptr(), inner, outer, inner.max(1));
    // Moving the Vec out does not move its heap buffer, so the view stays valid.
    (buf, if row_major { view.t() } else { view })
}

/// C := beta*C for an m x n view (beta == 0 assigns zero, so NaN/Inf in C are cleared).
///
/// # Safety
/// `c` is a valid writable view.
pub unsafe fn scale<T: Scalar>(beta: T, c: MatMut<T>) {
    if beta.is_one() {
        return;
    }
    for j in 0..c.cols {
        for i in 0..c.rows {
            let p = c.at(i, j);
            *p = if beta.is_zero() { T::zero() } else { beta * *p };
        }
    }
}

/// Threads for an m x n x k product.
#[inline]
pub fn threads_for_gemm<T: Scalar>(m: usize, n: usize, k: usize) -> usize {
    let work = m.saturating_mul(n).saturating_mul(k);
    let work = if T::IS_COMPLEX { work.saturating_mul(4) } else { work };
    let work = if std::mem::size_of::<T::Real>() == 4 { work / 2 } else { work };
    if work < *GEMM_PAR_MIN {
        1
    } else {
        threads::nthreads()
    }
}

/// C (m x n) := alpha * conj?(A) (m x k) * conj?(B) (k x n) + beta*C.
///
/// Reference semantics: beta == 0 overwrites C without reading it; alpha == 0 or k == 0 reads
/// neither A nor B.
///
/// # Safety
/// Views valid and consistent (a.rows == c.rows, b.cols == c.cols, a.cols == b.rows); C must
/// not overlap A or B.
pub unsafe fn gemm<T: Scalar>(alpha: T, a: MatRef<T>, conj_a: bool, b: MatRef<T>, conj_b: bool, beta: T, c: MatMut<T>) {
    let t = threads_for_gemm::<T>(c.rows, c.cols, a.cols);
    gemm_with(t, alpha, a, conj_a, b, conj_b, beta, c)
}

/// [`gemm`] on exactly `t` threads (1: on the caller's thread).
///
/// # Safety
/// As [`gemm`].
#[allow(clippy::too_many_arguments)]
pub unsafe fn gemm_with<T: Scalar>(
    t: usize,
    alpha: T,
    a: MatRef<T>,
    conj_a: bool,
    b: MatRef<T>,
    conj_b: bool,
    beta: T,
    c: MatMut<T>,
) {
    let (m, n, k) = (c.rows, c.cols, a.cols);
    debug_assert!(a.rows == m && b.rows == k && b.cols == n);
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 || alpha.is_zero() {
        return scale(beta, c);
    }

    // Conjugated complex operands: pack once so the product takes the fast kernels.
    let abuf;
    let a = if conj_a && T::IS_COMPLEX {
        abuf = packed_copy(a, true);
        abuf.1
    } else {
        a
    };
    let bbuf;
    let b = if conj_b && T::IS_COMPLEX {
        bbuf = packed_copy(b, true);
        bbuf.1
    } else {
        b
    };

    if t <= 1 {
        return kernel(alpha, a, b, beta, c, Parallelism::None);
    }
    // One panel of C per thread, split along its longer side; each panel is a one-thread
    // product and the caller computes the first. This beats the gemm crate's own threading
    // (a fork-join per k-block, all on pool threads) most below n ~ 1000, where the pool's
    // wake-ups and barriers cost more than the duplicated packing of the shared operand.
    let split_cols = n >= m;
    let len = if split_cols { n } else { m };
    let step = len.div_ceil(t).div_ceil(SPLIT_ALIGN) * SPLIT_ALIGN;
    let parts = len.div_ceil(step);
    threads::for_each_part(t, parts, |p| {
        let (s0, l) = (p * step, step.min(len - p * step));
        if split_cols {
            kernel(alpha, a, b.sub(0, s0, k, l), beta, c.sub(0, s0, m, l), Parallelism::None)
        } else {
            kernel(alpha, a.sub(s0, 0, l, k), b, beta, c.sub(s0, 0, l, n), Parallelism::None)
        }
    });
}

/// Panel boundaries of a split GEMM fall on multiples of this (a multiple of every kernel's
/// register block).
const SPLIT_ALIGN: usize = 16;

/// One call into the `gemm` crate: C := alpha*A*B + beta*C (beta == 0: C not read).
#[inline]
unsafe fn kernel<T: Scalar>(alpha: T, a: MatRef<T>, b: MatRef<T>, beta: T, c: MatMut<T>, par: Parallelism) {
    // The gemm crate computes dst := alpha*dst + beta*lhs*rhs: its alpha is our beta.
    gemm::gemm(
        c.rows,
        c.cols,
        a.cols,
        c.ptr,
        c.cs,
        c.rs,
        !beta.is_zero(),
        a.ptr,
        a.cs,
        a.rs,
        b.ptr,
        b.cs,
        b.rs,
        beta,
        alpha,
        false,
        false,
        false,
        par,
    )
}
