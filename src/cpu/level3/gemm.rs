//! C := alpha*op(A)*op(B) + beta*C on the `gemm` crate.
//!
//! Views already carry the transposition (swapped strides); conjugation comes as flags. The
//! `gemm` crate's conjugating path for complex operands is several times slower than its plain
//! one, so a conjugated operand is copied once, conjugated, into a packed buffer (O(mk) work
//! next to O(mnk)) and the product runs on the fast path.

use crate::cpu::threads;
use crate::types::{MatMut, MatRef, Scalar};
use gemm::Parallelism;
use once_cell::sync::Lazy;

/// Multiply-adds (m*n*k, a complex one counting as 4) below which GEMM stays on the caller's
/// thread: under ~128^3 the pool's wake-up and the split cost more than the second core gains.
pub static GEMM_PAR_MIN: Lazy<usize> = Lazy::new(|| crate::config::threshold("HYBLAS_GEMM_PAR_MIN", 128 * 128 * 128));

/// A packed copy of `a` (conjugated when `conj`) and a view of it. The copy keeps the
/// operand's orientation (column-major for a column-oriented view, row-major for a transposed
/// one) so the source is read along its contiguous dimension.
///
/// # Safety
/// `a` is a valid view.
pub unsafe fn packed_copy<T: Scalar>(a: MatRef<T>, conj: bool) -> (Vec<T>, MatRef<T>) {
    let (rows, cols) = (a.rows, a.cols);
    let mut buf = Vec::with_capacity(rows * cols);
    let row_major = a.cs.unsigned_abs() < a.rs.unsigned_abs();
    if row_major {
        for i in 0..rows {
            let r = a.sub(i, 0, 1, cols);
            buf.extend((0..cols).map(|j| r.get(0, j).conj_if(conj)));
        }
    } else {
        for j in 0..cols {
            let c = a.sub(0, j, rows, 1);
            buf.extend((0..rows).map(|i| c.get(i, 0).conj_if(conj)));
        }
    }
    let view = if row_major {
        MatRef { ptr: buf.as_ptr(), rows, cols, rs: cols as isize, cs: 1 }
    } else {
        MatRef::col_major(buf.as_ptr(), rows, cols, rows.max(1))
    };
    // Moving the Vec out does not move its heap buffer, so `view` stays valid.
    (buf, view)
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

    let par = if t > 1 { Parallelism::Rayon(t) } else { Parallelism::None };
    threads::install(t, move || {
        // Capture the views whole (they are Send), not their raw-pointer fields.
        let (a, b, c) = (a, b, c);
        // The gemm crate computes dst := alpha*dst + beta*lhs*rhs: its alpha is our beta.
        gemm::gemm(
            m,
            n,
            k,
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
    });
}
