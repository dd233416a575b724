//! The CPU engine: generic bodies over `Scalar`, working on raw strided views that the ABI
//! layer has validated. It never declines a call.
//!
//! - `threads.rs`: the pool (sized once, fork-safe) and the parallel-for used by Level 1/2.
//! - `crew.rs`: threads that spin between short jobs (the host offload's packing of pieces).
//! - `simd.rs`: run-time dispatch of hot loops to AVX-512 / AVX2+FMA builds of the same body.
//! - `level1.rs`, `level2.rs`, `level3/`: the routines.
//! - `ozaki.rs`: the accurate GEMM's error-free splitting into integer slices (shared with the GPU).
//! - `sparse.rs`: sparse (CSR) x dense products, for the accurate GEMM's mostly-zero slices.

pub mod crew;
pub mod level1;
pub mod level2;
pub mod level3;
pub mod ozaki;
pub mod simd;
pub mod sparse;
pub mod threads;
