//! C := alpha*op(A)*op(B) + beta*C on the `gemm` crate.
//!
//! Views already carry the transposition (swapped strides); conjugation comes as flags. The
//! `gemm` crate's conjugating path for complex operands is several times slower than its plain
//! one, so a conjugated operand is copied once, conjugated, into a packed buffer (O(mk) work
//! next to O(mnk)) and the product runs on the fast path.
//!
//! On several threads C is cut into a grid of a few parts per thread (see [`grid`]), each a
//! one-thread product, which the threads claim until none is left.

use super::packed::Operand;
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

    // hyblas's own kernels (AVX-512): packing absorbs conjugation and transposition.
    if super::packed::gemm(t, alpha, a, conj_a, b, conj_b, beta, c, None) {
        return;
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
    gemm_on_grid(t, grid(t, m, n), alpha, a, b, beta, c)
}

/// Products of one shape, each on the caller's thread, set up once (a batch's group): the own
/// kernels' one-block path (`packed::Small`) where it applies, else [`gemm_with`] on one
/// thread. Either way the bits of [`gemm_with`]`(1, ..)`.
#[derive(Clone, Copy)]
pub struct OneThread<T> {
    small: Option<super::packed::Small<T>>,
}

impl<T: Scalar> OneThread<T> {
    /// For m x n x k products whose op(B) has row stride `b_rs`, conjugated or not.
    pub fn new(m: usize, n: usize, k: usize, b_rs: isize, conj_b: bool) -> Self {
        OneThread { small: if m > 0 && n > 0 { super::packed::Small::new(m, n, k, b_rs, conj_b) } else { None } }
    }

    /// One product of the shape.
    ///
    /// # Safety
    /// As [`gemm`]; the views have the shape and B's row stride given to [`OneThread::new`].
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn gemm(&self, alpha: T, a: MatRef<T>, ca: bool, b: MatRef<T>, cb: bool, beta: T, c: MatMut<T>) {
        match &self.small {
            Some(s) if !alpha.is_zero() => s.product(alpha, a, ca, b, cb, beta, c),
            _ => gemm_with(1, alpha, a, ca, b, cb, beta, c),
        }
    }

    /// Products i < `count` of the shape that the tiny kernels do not take ([`OneThread::tiles`]
    /// said no), operands `op(i)` (A, conjugated?, B, conjugated?, C), one after the other, an
    /// operand that every one of them reads (`same`: A, B) packed once (see
    /// `packed::Small::packed`).
    ///
    /// # Safety
    /// As [`OneThread::gemm`] for every product; `same` true only where the operand repeats.
    pub unsafe fn gemm_many(
        &self,
        alpha: T,
        beta: T,
        count: usize,
        same: (bool, bool),
        op: impl Fn(usize) -> (MatRef<T>, bool, MatRef<T>, bool, MatMut<T>),
    ) {
        match &self.small {
            Some(s) if !alpha.is_zero() => s.packed(alpha, beta, count, same, |i| {
                let (a, ca, b, cb, c) = op(i);
                (Operand::plain(a, ca), Operand::plain(b, cb), c)
            }),
            _ => (0..count).for_each(|i| {
                let (a, ca, b, cb, c) = op(i);
                gemm_with(1, alpha, a, ca, b, cb, beta, c)
            }),
        }
    }

    /// The tiny kernels' walk for products of the shape (alpha != 0) with these operands'
    /// strides, where they run them (see `packed::Small::tiles`): a batch's run of products of
    /// one call then costs a kernel call each, not the set-up per product.
    pub fn tiles(
        &self,
        alpha: T,
        a: &MatRef<T>,
        ca: bool,
        b: &MatRef<T>,
        cb: bool,
        c: &MatMut<T>,
    ) -> Option<super::packed::Tiles<T>> {
        self.small.as_ref().filter(|_| !alpha.is_zero())?.tiles(a, ca, b, cb, c)
    }
}

/// Fewest rows (columns) of C in one part: a narrower part spends too much of its time
/// reading the other operand.
const MIN_PART_ROWS: usize = 32;
const MIN_PART_COLS: usize = 64;

/// The grid (row parts, column parts) a `t`-thread GEMM cuts its m x n C into: about
/// [`threads::balanced_parts`]`(t)` parts, rows first (a part of few rows takes its slice of A packed
/// and B as it lies; the 16-core GPU host's DGEMM n = 2048..8192: 660-930 GFLOP/s cut in 4t
/// row panels, 360-550 in t column panels), then columns where C is too short.
pub fn grid(t: usize, m: usize, n: usize) -> (usize, usize) {
    let want = threads::balanced_parts(t);
    let pr = want.min(m / MIN_PART_ROWS).max(1);
    let pc = want.div_ceil(pr).min(n / MIN_PART_COLS).max(1);
    // Too small to give every thread a part: one part per thread along the longer side.
    if pr * pc < t {
        return if m >= n {
            (t.min(m.div_ceil(SPLIT_ALIGN)).max(1), 1)
        } else {
            (1, t.min(n.div_ceil(SPLIT_ALIGN)).max(1))
        };
    }
    (pr, pc)
}

/// C := alpha*A*B + beta*C on `t` threads, C cut into a `pr` x `pc` grid of one-thread
/// products (boundaries on multiples of [`SPLIT_ALIGN`]), claimed column of parts by column
/// (neighbours share B's panel).
///
/// # Safety
/// As [`gemm`]; A and B are not conjugated.
#[allow(clippy::too_many_arguments)]
pub unsafe fn gemm_on_grid<T: Scalar>(
    t: usize,
    (pr, pc): (usize, usize),
    alpha: T,
    a: MatRef<T>,
    b: MatRef<T>,
    beta: T,
    c: MatMut<T>,
) {
    let (m, n, k) = (c.rows, c.cols, a.cols);
    let rstep = m.div_ceil(pr.max(1)).div_ceil(SPLIT_ALIGN) * SPLIT_ALIGN;
    let cstep = n.div_ceil(pc.max(1)).div_ceil(SPLIT_ALIGN) * SPLIT_ALIGN;
    let (pr, pc) = (m.div_ceil(rstep), n.div_ceil(cstep));
    threads::for_each_part(t, pr * pc, |p| {
        let (i0, j0) = ((p % pr) * rstep, (p / pr) * cstep);
        let (h, w) = (rstep.min(m - i0), cstep.min(n - j0));
        kernel(alpha, a.sub(i0, 0, h, k), b.sub(0, j0, k, w), beta, c.sub(i0, j0, h, w), Parallelism::None)
    });
}

/// Part boundaries of a split GEMM fall on multiples of this (a multiple of every kernel's
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_gives_every_thread_parts_and_respects_the_minimum_sides() {
        for t in [2usize, 3, 8, 16] {
            for (m, n) in [(4096, 4096), (512, 4096), (4096, 64), (100, 100), (16, 16), (1, 5000), (5000, 1)] {
                let (pr, pc) = grid(t, m, n);
                assert!(pr >= 1 && pc >= 1, "t={t} {m}x{n}");
                // Large C: a few parts per thread, none below the minimum sides.
                if m >= MIN_PART_ROWS * t * 4 {
                    assert!(pr * pc >= t * 4 && m / pr >= MIN_PART_ROWS, "t={t} {m}x{n}: {pr}x{pc}");
                }
                if pc > 1 && pr * pc >= t {
                    assert!(n / pc >= MIN_PART_COLS, "t={t} {m}x{n}: {pr}x{pc}");
                }
            }
        }
    }

    /// Every grid gives the one-thread product's bits: each element of C is one part's, summed
    /// over k in the same order.
    #[test]
    fn every_grid_gives_the_one_thread_result() {
        let (m, n, k) = (203usize, 157usize, 61usize);
        let a: Vec<f64> = (0..m * k).map(|i| ((i * 37) % 101) as f64 / 101.0 - 0.5).collect();
        let b: Vec<f64> = (0..k * n).map(|i| ((i * 53) % 97) as f64 / 97.0 - 0.5).collect();
        let c0: Vec<f64> = (0..m * n).map(|i| ((i * 11) % 89) as f64 / 89.0).collect();
        let run = |t: usize, g: (usize, usize)| {
            let mut c = c0.clone();
            unsafe {
                gemm_on_grid(
                    t,
                    g,
                    1.5,
                    MatRef::col_major(a.as_ptr(), m, k, m),
                    MatRef::col_major(b.as_ptr(), k, n, k),
                    0.25,
                    MatMut::col_major(c.as_mut_ptr(), m, n, m),
                )
            };
            c
        };
        let want = run(1, (1, 1));
        for (t, g) in [(2, (8, 1)), (2, (1, 9)), (3, (5, 4)), (4, (13, 10)), (2, grid(2, m, n)), (4, grid(4, m, n))] {
            assert_eq!(run(t, g), want, "t={t} grid {g:?}");
        }
    }
}
