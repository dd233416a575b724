//! Accurate DGEMM by the Ozaki scheme (issue 49), on the CPU: C := alpha*op(A)*op(B) + beta*C
//! correctly rounded, every element the double nearest to the exact value (so faithfully
//! rounded too), whatever the cancellation in the sums.
//!
//! 1. op(A)'s rows and op(B)'s columns are split into integer slices (`cpu::ozaki::split`, the
//!    exact splitting: every slice until nothing is left).
//! 2. The p x q slice products run as one batched GEMM (`plan::batch`): each is exact in FP64.
//! 3. Each element's p*q scaled products, alpha, and beta*c are summed exactly and rounded once
//!    (`cpu::ozaki::Exact`), the columns of C spread over the pool's threads.
//!
//! Rows of op(A) and columns of op(B) holding an Inf or NaN, and elements of C that are Inf or NaN
//! where beta != 0, take IEEE arithmetic: their elements are the plain dot product in order (what
//! the reference DGEMM computes), so Inf and NaN come out where a DGEMM puts them. A non-finite
//! alpha or beta runs the whole call as plain DGEMM.
//!
//! This is the first, exact form: every slice product is computed and kept (p*q products of
//! m x n). Fewer products for a faithful result, sparse slices, the per-call choice of batched
//! or looped products and the GPU path are the next steps (docs/ozaki.md).

use crate::cpu::level3::packed::SendPtr;
use crate::cpu::ozaki::{slice_bits, split, Exact, Layout};
use crate::cpu::threads;
use crate::trace;
use crate::types::Trans;

/// What one call did, for its trace line and for tests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// Slices of op(A) and of op(B) (the most any row or column needed).
    pub slices_a: usize,
    pub slices_b: usize,
    /// Slice products computed (as one batched call).
    pub products: usize,
    /// Elements computed with IEEE arithmetic (an Inf or NaN in their row, column, or C).
    pub ieee: usize,
}

/// C := alpha*op(A)*op(B) + beta*C, correctly rounded (column-major; arguments checked by the
/// caller as for DGEMM).
///
/// # Safety
/// A, B, C valid for the shapes and leading dimensions given, C not overlapping A or B.
#[allow(clippy::too_many_arguments)]
pub unsafe fn dgemm(
    ta: Trans,
    tb: Trans,
    m: usize,
    n: usize,
    k: usize,
    alpha: f64,
    a: *const f64,
    lda: usize,
    b: *const f64,
    ldb: usize,
    beta: f64,
    c: *mut f64,
    ldc: usize,
) -> Report {
    let start = std::time::Instant::now();
    let mut report = Report::default();
    if m == 0 || n == 0 {
        return report;
    }
    let cij = |i: usize, j: usize| c.add(i + j * ldc);
    if !alpha.is_finite() || !beta.is_finite() {
        // IEEE throughout: the plain product.
        crate::cpu::level3::gemm::gemm_with(
            1,
            alpha,
            crate::types::MatRef::op(a, ta, m, k, lda).0,
            false,
            crate::types::MatRef::op(b, tb, k, n, ldb).0,
            false,
            beta,
            crate::types::MatMut::col_major(c, m, n, ldc),
        );
        report.ieee = m * n;
        return report;
    }
    if k == 0 || alpha == 0.0 {
        // beta*C, one rounding each (beta == 0: zeros, C not read).
        for j in 0..n {
            for i in 0..m {
                *cij(i, j) = if beta == 0.0 { 0.0 } else { beta * *cij(i, j) };
            }
        }
        return report;
    }
    // (The operands as the pool's threads read them: shared, read-only.)
    let (ap, bp) = (SendPtr(a as *mut f64), SendPtr(b as *mut f64));
    let op_a = |i: usize, l: usize| {
        let a = ap.get();
        if ta == Trans::No {
            *a.add(i + l * lda)
        } else {
            *a.add(l + i * lda)
        }
    };
    let op_b = |l: usize, j: usize| {
        let b = bp.get();
        if tb == Trans::No {
            *b.add(l + j * ldb)
        } else {
            *b.add(j + l * ldb)
        }
    };
    let bits = slice_bits(k);
    let (sa, _) = split(op_a, m, k, bits, Layout { vec_stride: 1, elem_stride: m }, None);
    let (sb, _) = split(|j, l| op_b(l, j), n, k, bits, Layout { vec_stride: k, elem_stride: 1 }, None);
    let (p, q) = (sa.count, sb.count);
    report.slices_a = p;
    report.slices_b = q;
    report.products = p * q;
    // The slice products, P[s*q + t] = A_s B_t (m x n), as one batched call.
    let mut prod = vec![0.0f64; p * q * m * n];
    if p * q > 0 {
        let pa: Vec<*const f64> = (0..p * q).map(|st| sa.slice(st / q).as_ptr()).collect();
        let pb: Vec<*const f64> = (0..p * q).map(|st| sb.slice(st % q).as_ptr()).collect();
        let pc: Vec<*mut f64> = (0..p * q).map(|st| prod.as_mut_ptr().add(st * m * n)).collect();
        let call = super::batch::Product {
            ta: Trans::No,
            tb: Trans::No,
            m,
            n,
            k,
            alpha: 1.0,
            a: pa[0],
            lda: m,
            b: pb[0],
            ldb: k,
            beta: 0.0,
            c: pc[0],
            ldc: m,
        };
        let ops = super::batch::Ops::Arrays { a: pa.as_ptr(), b: pb.as_ptr(), c: pc.as_ptr() };
        super::batch::gemm_batch("dgemm_accurate", &[super::batch::Group { call, ops, count: p * q }]);
    }
    // Each element's exact sum, rounded once; columns of C over the pool's threads.
    let ieee = std::sync::atomic::AtomicUsize::new(0);
    let cs = SendPtr(c);
    let prod = &prod;
    let threads = threads::nthreads();
    let parts = n.min(threads * 4).max(1);
    threads::for_each_part(threads, parts, |part| {
        let mut acc = Exact::new();
        let c = cs.get();
        for j in (part * n / parts)..((part + 1) * n / parts) {
            for i in 0..m {
                let cp = c.add(i + j * ldc);
                let old = if beta == 0.0 { 0.0 } else { *cp };
                if sa.nonfinite[i] || sb.nonfinite[j] || !old.is_finite() {
                    // IEEE: the plain dot product in order, as the reference DGEMM.
                    let mut dot = 0.0f64;
                    for l in 0..k {
                        dot += op_a(i, l) * op_b(l, j);
                    }
                    *cp = if beta == 0.0 { alpha * dot } else { alpha * dot + beta * old };
                    ieee.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    continue;
                }
                acc.clear();
                for s in 0..p {
                    let ea = sa.exp(s, i);
                    for t in 0..q {
                        let v = prod[(s * q + t) * m * n + i + j * m];
                        if v != 0.0 {
                            acc.add(v < 0.0, v.abs() as u64 as u128, ea + sb.exp(t, j));
                        }
                    }
                }
                acc.mul_f64(alpha);
                if beta != 0.0 {
                    acc.add_product(beta, old);
                }
                *cp = acc.round();
            }
        }
    });
    report.ieee = ieee.into_inner();
    if trace::enabled() {
        let shape = format!(
            "ta={ta:?} tb={tb:?} m={m} n={n} k={k} accurate (nearest): slices A={p} B={q}, products={} (dense, batched), ieee elements={}",
            p * q,
            report.ieee
        );
        trace::line("dgemm", &shape, "cpu", threads, start.elapsed().as_secs_f64());
    }
    report
}
