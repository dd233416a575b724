//! The executors that drive both engines for host-memory calls (seed 002): a host GEMM or
//! other Level-3 call computed on the GPU (`offload.rs`: tiles of C pipelined through pinned
//! staging on three streams of their own, the real cuBLAS per tile; `offload_l3.rs`: SYMM,
//! SYRK, SYR2K, TRMM, TRSM on the same pipeline; `offload_batch.rs`: a batch of small products
//! packed through the same pipeline for one batched call) and co-execution (`offload::coexec`: the GPU
//! and the CPU engine on one queue of C's columns). The planner (`plan`) decides which runs
//! and hands them its numbers; they decide nothing themselves.

pub mod offload;
pub mod offload_batch;
