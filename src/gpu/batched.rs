//! Batched GEMM of small products on the GPU (`kernels/gemm_batch.cu`): `batch` products of one
//! shape, m and n at most [`MAX_MN`] (any k), operands strided or given by device arrays of
//! addresses. The cuBLAS layer's `cublas?gemmBatched`/`StridedBatched` and the host ABI's
//! batches on device memory run it where the planner (`plan::batch`) says it beats cuBLAS.
//!
//! The kernel's launch shape ([`Shape`]: the R x R block of C per thread, threads per block)
//! comes from [`Shape::of`]; `gpubench batch` sweeps the others. The result does not depend on
//! the shape.

use super::driver::{GpuError, Result};
use super::kernels::{Args, Family, Launch};
use super::{elem, Exec, In};
use crate::types::{Scalar, Trans};

/// Largest m and n the kernel takes (a thread block holds at least one product).
pub const MAX_MN: i64 = 64;

/// Where the products' copies of one operand lie.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum At {
    /// Product p's at `ptr + p * stride` (elements).
    Strided { ptr: u64, stride: i64 },
    /// Product p's at the address in element p of the device array at `array`.
    Array(u64),
}

/// One operand of a batch: where its copies lie and their leading dimension.
#[derive(Clone, Copy, Debug)]
pub struct BMat {
    pub at: At,
    pub ld: i64,
}

impl BMat {
    /// The kernel's (base, stride, array) arguments.
    fn parts(&self) -> (u64, i64, u64) {
        match self.at {
            At::Strided { ptr, stride } => (ptr, stride, 0),
            At::Array(array) => (0, 0, array),
        }
    }
}

/// A launch shape: each thread computes an `r` x `r` block of its product's C (1, 2 or 4), and
/// a block has `threads` threads (a multiple of 32, at least one product's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    pub r: i64,
    pub threads: i64,
}

impl Shape {
    /// The default for m x n products (the best of `gpubench batch --shapes` on an H200): a
    /// thread per element up to 3 x 3, 2 x 2 up to 8 x 8, 4 x 4 beyond; the block of 64, 128
    /// or 256 threads that leaves the fewest idle (the smallest of equals).
    pub fn of(m: i64, n: i64) -> Shape {
        let r = match m.max(n) {
            ..=3 => 1,
            4..=8 => 2,
            _ => 4,
        };
        let tpp = Shape { r, threads: 0 }.per_product(m, n).max(1);
        let threads = [64, 128, 256].into_iter().filter(|&t| t >= tpp).min_by_key(|&t| t % tpp).unwrap_or(256);
        Shape { r, threads }
    }
    /// Threads one m x n product takes.
    pub fn per_product(&self, m: i64, n: i64) -> i64 {
        super::cdiv(m, self.r) * super::cdiv(n, self.r)
    }
}

/// Shared-memory elements one product's chunks take (kernels/gemm_batch.cu: A's rows of m | 1,
/// B's columns of kc | 1).
fn group_elems(m: i64, n: i64, kc: i64) -> i64 {
    (m | 1) * kc + (kc | 1) * n
}

/// Shared memory a block may use without opting in.
const SMEM: i64 = 48 * 1024;

/// Whether the kernel takes products of this shape (m, n within [`MAX_MN`]).
pub fn fits(m: i64, n: i64) -> bool {
    (0..=MAX_MN).contains(&m) && (0..=MAX_MN).contains(&n)
}

/// C_p := alpha*op(A_p)*op(B_p) + beta*C_p for p < `batch` on `ex`'s stream (op(A) m x k, op(B)
/// k x n), launched as `shape` (callers pass [`Shape::of`]; other shapes: tests, `gpubench batch
/// --shapes`).
///
/// Unsupported (nothing enqueued): negative sizes or batch, m or n above [`MAX_MN`], leading
/// dimensions below the reference's minimum, strided operands not aligned to their element, a
/// shape that holds no product.
#[allow(clippy::too_many_arguments)]
pub fn gemm_shaped<T: Scalar>(
    ex: &Exec,
    shape: Shape,
    transa: Trans,
    transb: Trans,
    m: i64,
    n: i64,
    k: i64,
    alpha: In<T>,
    a: BMat,
    b: BMat,
    beta: In<T>,
    c: BMat,
    batch: i64,
) -> Result<()> {
    if m < 0 || n < 0 || k < 0 || batch < 0 {
        return Err(GpuError::Unsupported("batched gemm: negative size"));
    }
    if !fits(m, n) {
        return Err(GpuError::Unsupported("batched gemm: m or n above 64"));
    }
    if !super::gemm_lds_ok(transa, transb, m, n, k, a.ld, b.ld, c.ld) {
        return Err(GpuError::Unsupported("batched gemm: leading dimension below the minimum"));
    }
    let align = (elem::<T>() as u64).min(16);
    let es = elem::<T>() as i64;
    let misaligned = |x: &BMat| match x.at {
        At::Strided { ptr, stride } => !ptr.is_multiple_of(align) || !((stride * es) as u64).is_multiple_of(align),
        At::Array(array) => !array.is_multiple_of(8),
    };
    if misaligned(&a) || misaligned(&b) || misaligned(&c) {
        return Err(GpuError::Unsupported("batched gemm: operand not aligned to its element"));
    }
    if m == 0 || n == 0 || batch == 0 {
        return Ok(());
    }
    // The reference's quick return, decided where the scalars are host values.
    let alpha_zero = alpha.host().is_some_and(|v| v == T::zero());
    if (alpha_zero || k == 0) && beta.host().is_some_and(|v| v == T::one()) {
        return Ok(());
    }
    let tpp = shape.per_product(m, n);
    if !matches!(shape.r, 1 | 2 | 4) || shape.threads % 32 != 0 || shape.threads > 1024 || tpp > shape.threads {
        return Err(GpuError::Unsupported("batched gemm: launch shape holds no product"));
    }
    let groups = shape.threads / tpp;
    // The k chunk: every group's A and B chunks within the block's shared memory.
    let budget = SMEM / (groups * es);
    let kc = ((budget - n) / (m + 1 + n)).clamp(1, 64).min(k.max(1));
    let blocks = super::cdiv(batch, groups);
    if blocks > i32::MAX as i64 {
        return Err(GpuError::Unsupported("batched gemm: grid too large"));
    }
    let name = match shape.r {
        1 => "gemm_batch_r1",
        2 => "gemm_batch_r2",
        _ => "gemm_batch_r4",
    };
    // Looked up before anything is launched: a unit not ready yet (NotReady) leaves C untouched.
    let f = ex.function::<T>(Family::Batch, name)?;
    if shape.threads as u32 > f.max_threads {
        return Err(GpuError::Unsupported("batched gemm: more threads per block than the kernel's registers allow"));
    }
    let (al, alp) = alpha.parts();
    let (be, bep) = beta.parts();
    let ((pa, sa, aa), (pb, sb, ba), (pc, sc, ca)) = (a.parts(), b.parts(), c.parts());
    let mut args = Args::new();
    args.arg(super::kernels::trans_code(transa))
        .arg(super::kernels::trans_code(transb))
        .arg(m)
        .arg(n)
        .arg(k)
        .arg(al)
        .arg(alp);
    args.arg(pa).arg(a.ld).arg(sa).arg(aa).arg(pb).arg(b.ld).arg(sb).arg(ba);
    args.arg(be).arg(bep).arg(pc).arg(c.ld).arg(sc).arg(ca).arg(batch).arg(kc as i32);
    let smem = (groups * group_elems(m, n, kc) * es) as u32;
    let launch = Launch { grid: (blocks as u32, 1, 1), block: (shape.threads as u32, 1, 1), smem };
    f.launch(launch, ex.stream, &mut args)
}
