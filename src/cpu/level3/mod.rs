//! Level 3 on the CPU. GEMM runs on the `gemm` crate's micro-kernels; the other routines are
//! blocked so that almost all of their flops go through that GEMM.
//!
//! - `gemm.rs`: C := alpha*op(A)*op(B) + beta*C, the one product everything else calls.
//! - `sym.rs`: SYMM/HEMM (triangle expanded, then GEMM) and SYRK/HERK/SYR2K/HER2K (recursive
//!   halving: off-diagonal blocks straight through GEMM, diagonal blocks through a temporary).
//! - `tri.rs`: TRMM/TRSM.

pub mod gemm;
pub mod sym;
pub mod tri;

pub use gemm::gemm;
