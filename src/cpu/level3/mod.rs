//! Level 3 on the CPU. GEMM runs on hyblas's own AVX-512 micro-kernels (the `gemm` crate's on
//! other machines); the other routines are blocked so that almost all of their flops go
//! through that GEMM (docs/cpu-engine.md).
//!
//! - `gemm.rs`: C := alpha*op(A)*op(B) + beta*C, the one product everything else calls.
//! - `packed.rs`: the blocked product over the own kernels (B read in place, A packed, threads
//!   claiming row blocks), also for one triangle of C (SYRK/HERK/SYR2K).
//! - `micro.rs`: the register-blocked micro-kernels, one generic body for s/d/c/z.
//! - `sym.rs`: SYMM/HEMM (A packed from its stored triangle) and SYRK/HERK/SYR2K/HER2K (the
//!   triangle product of `packed.rs`; without AVX-512, recursive halving onto GEMM).
//! - `transpose.rs`: packing panels whose rows are contiguous, in register tiles.
//! - `tri/`: TRMM/TRSM (`leaf.rs`: kernel-sized panels for triangles that fit in L2).

pub mod gemm;
pub mod micro;
pub mod packed;
pub mod sym;
mod transpose;
pub mod tri;

pub use gemm::gemm;
