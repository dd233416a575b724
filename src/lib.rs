//! hyblas: a drop-in BLAS. One shared library exporting the Fortran BLAS and CBLAS ABIs (LP64
//! and ILP64) over a fast CPU engine; see README.md for the map of the crate.
//!
//! Layers, outside in: `abi` (C symbols, argument checks, xerbla) -> `plan` (which engine,
//! trace) -> `cpu` (the engine). `types` and `config` are shared by all.

pub mod abi;
pub mod config;
pub mod cpu;
pub mod gpu;
pub mod hybrid;
pub mod plan;
pub mod trace;
pub mod types;
