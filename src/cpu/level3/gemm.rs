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

/// m*n*k below which GEMM runs on one thread.
pub static GEMM_PAR_MIN: Lazy<usize> = Lazy::new(|| crate::config::threshold("HYBLAS_GEMM_PAR_MIN", 48 * 48 * 48));

/// Packed column-major copy of `a` (conjugated when `conj`).
unsafe fn packed_copy<T: Scalar>(a: MatRef<T>, conj: bool) -> Vec<T> {
    let mut buf = Vec::with_capacity(a.rows * a.cols);
    for j in 0..a.cols {
        for i in 0..a.rows {
            buf.push(a.get(i, j).conj_if(conj));
        }
    }
    buf
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

/// C (m x n) := alpha * conj?(A) (m x k) * conj?(B) (k x n) + beta*C.
///
/// Reference semantics: beta == 0 overwrites C without reading it; alpha == 0 or k == 0 reads
/// neither A nor B.
///
/// # Safety
/// Views valid and consistent (a.rows == c.rows, b.cols == c.cols, a.cols == b.rows); C must
/// not overlap A or B.
pub unsafe fn gemm<T: Scalar>(alpha: T, a: MatRef<T>, conj_a: bool, b: MatRef<T>, conj_b: bool, beta: T, c: MatMut<T>) {
    let (m, n, k) = (c.rows, c.cols, a.cols);
    debug_assert!(a.rows == m && b.rows == k && b.cols == n);
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 || alpha.is_zero() {
        return scale(beta, c);
    }
    let work = m.saturating_mul(n).saturating_mul(k);
    let t = if work < *GEMM_PAR_MIN { 1 } else { threads::nthreads() };

    // Conjugated complex operands: pack once so the product takes the fast kernels.
    let conj_a = conj_a && T::IS_COMPLEX;
    let conj_b = conj_b && T::IS_COMPLEX;
    let abuf;
    let a = if conj_a {
        abuf = packed_copy(a, true);
        MatRef::col_major(abuf.as_ptr(), m, k, m)
    } else {
        a
    };
    let bbuf;
    let b = if conj_b {
        bbuf = packed_copy(b, true);
        MatRef::col_major(bbuf.as_ptr(), k, n, k)
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
