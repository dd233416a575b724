//! The planner: decides, per call, which engine runs it, and records the decision.
//!
//! With no GPU runtime yet, every plan is the CPU engine; the GPU issues add candidates here.
//! `run` is the single place an ABI call passes through on its way to an engine, so tracing
//! (and later the GPU decision) lives in one spot.

pub mod gpu;
pub mod trace;

use crate::types::Scalar;

/// Engines a plan may name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    Cpu,
}

impl Engine {
    pub fn name(self) -> &'static str {
        match self {
            Engine::Cpu => "cpu",
        }
    }
}

/// Run a call of routine `T::PREFIX + base` (e.g. `d` + `gemm`). `shape` formats the problem
/// for the trace line and is only evaluated when tracing is on.
#[inline]
pub fn run<T: Scalar, R>(base: &'static str, shape: impl FnOnce() -> String, cpu: impl FnOnce() -> R) -> R {
    run_named(T::PREFIX, base, shape, cpu)
}

/// As [`run`] with an explicit prefix, for mixed-precision names (`dz` + `nrm2`, `sds` + `dot`).
#[inline]
pub fn run_named<R>(
    prefix: impl std::fmt::Display,
    base: &'static str,
    shape: impl FnOnce() -> String,
    cpu: impl FnOnce() -> R,
) -> R {
    if !trace::enabled() {
        return cpu();
    }
    let threads = crate::cpu::threads::nthreads();
    let start = std::time::Instant::now();
    let r = cpu();
    let secs = start.elapsed().as_secs_f64();
    trace::line(&format!("{prefix}{base}"), &shape(), Engine::Cpu.name(), threads, secs);
    r
}
