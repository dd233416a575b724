//! Split-k GEMM for small outputs (seed 000): host side of `kernels/gemm_splitk.cu`.
//!
//! C := alpha*op(A)*op(B) + beta*C where m*n is small and k long: the k dimension is cut into
//! chunks, each block computes a partial m x n product, and the partials are reduced either
//! in a fixed order through the stream workspace (deterministic, the default) or with atomics
//! (when the caller allows it).

use super::{DMat, Exec, GpuError, In, Result, Runtime};
use crate::types::{Scalar, Trans};

/// How the k-chunk partials are combined.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reduction {
    /// Partials to the workspace, reduced in a fixed order: bitwise reproducible.
    Deterministic,
    /// Partials added into C with atomics (cuBLAS atomics mode allowed, or
    /// `HYBLAS_DETERMINISTIC=0`).
    Atomic,
}

/// The planner's view of one GEMM call on the GPU: split-k or the vendor GEMM, with the
/// predicted times (microseconds) behind the choice.
#[derive(Clone, Debug)]
pub struct Prediction {
    pub splitk: bool,
    pub splitk_us: f64,
    pub vendor_us: f64,
    /// One line for the trace: which model (tuned or built-in) and its inputs.
    pub why: String,
}

/// C := alpha*op(A)*op(B) + beta*C on `ex`'s stream; op(A) is m x k, op(B) is k x n.
#[allow(clippy::too_many_arguments)]
pub fn gemm<T: Scalar>(
    _ex: &Exec,
    _transa: Trans,
    _transb: Trans,
    _m: i64,
    _n: i64,
    _k: i64,
    _alpha: In<T>,
    _a: DMat,
    _b: DMat,
    _beta: In<T>,
    _c: DMat,
    _reduction: Reduction,
) -> Result<()> {
    Err(GpuError::Unsupported("split-k GEMM is not built yet"))
}

/// Predicted split-k and vendor times for this call on `rt`'s device.
pub fn predict<T: Scalar>(_rt: &Runtime, _transa: Trans, _transb: Trans, m: i64, n: i64, k: i64) -> Prediction {
    Prediction {
        splitk: false,
        splitk_us: f64::INFINITY,
        vendor_us: 0.0,
        why: format!("m={m} n={n} k={k}: split-k not built yet"),
    }
}
