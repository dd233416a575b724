//! GEMV (N, T, C) and GER (u, c) on the GPU: host sides of `kernels/gemv.cu`.

use super::{DMat, DVec, Exec, In, Result};
use crate::types::{Scalar, Trans};

/// y := alpha*op(A)*x + beta*y, A m x n column-major; op = N, T or C.
#[allow(clippy::too_many_arguments)]
pub fn gemv<T: Scalar>(
    _ex: &Exec,
    _trans: Trans,
    _m: i64,
    _n: i64,
    _alpha: In<T>,
    _a: DMat,
    _x: DVec,
    _beta: In<T>,
    _y: DVec,
) -> Result<()> {
    Err(super::GpuError::Unsupported("gemv"))
}

/// A := alpha*x*y^T + A (conj: alpha*x*y^H + A), A m x n column-major.
#[allow(clippy::too_many_arguments)]
pub fn ger<T: Scalar>(
    _ex: &Exec,
    _m: i64,
    _n: i64,
    _alpha: In<T>,
    _x: DVec,
    _y: DVec,
    _a: DMat,
    _conj: bool,
) -> Result<()> {
    Err(super::GpuError::Unsupported("ger"))
}

/// The cases `hyblas tune` measures for this family.
pub fn tune_cases(_rt: &'static super::Runtime) -> Result<Vec<super::tune::TuneCase>> {
    Ok(Vec::new())
}
