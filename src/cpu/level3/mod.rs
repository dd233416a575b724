//! Level 3 on the CPU. GEMM runs on the `gemm` crate's micro-kernels; the other routines are
//! blocked so that almost all of their flops go through that GEMM.

pub mod gemm;
pub mod tri;

pub use gemm::gemm;
