//! The planner: decides, per call, which engine runs it, and records the decision.
//!
//! With no GPU runtime yet, every plan is the CPU engine; the GPU issues add candidates here.
//! `run` is the single place an ABI call passes through on its way to an engine, so tracing
//! (and later the GPU decision) lives in one spot.

pub mod gpu;
pub mod learned;
pub mod offload;
pub mod trace;

use crate::types::Scalar;

/// Engines a plan may name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    Cpu,
    Gpu,
}

impl Engine {
    pub fn name(self) -> &'static str {
        match self {
            Engine::Cpu => "cpu",
            Engine::Gpu => "gpu",
        }
    }
}

/// Host-ABI calls whose operands live in device memory (a CUDA program passing `cudaMalloc`
/// pointers to `daxpy_` or `cblas_sgemv`): when the first operand is device memory and so are
/// all the others, run `gpu` on hyblas's stream of that device, wait for it (a BLAS call is
/// complete when it returns), trace it, and return `Some`. Host operands give `None` and the
/// CPU engine runs the call. The check costs one driver query, and nothing on machines
/// without a driver or processes that never made a CUDA context.
///
/// A mix of host and device operands, or a GPU failure, cannot be answered by the CPU engine
/// (it cannot read device memory): it is reported on stderr and the outputs are left as they
/// were.
pub fn on_gpu<R: Default>(
    prefix: impl std::fmt::Display,
    base: &'static str,
    shape: impl FnOnce() -> String,
    operands: &[*const std::ffi::c_void],
    gpu: impl FnOnce(&crate::gpu::Exec<'static>) -> crate::gpu::Result<R>,
) -> Option<R> {
    use crate::gpu::runtime::is_device_pointer;
    let first = *operands.first()?;
    if !is_device_pointer(first) {
        return None;
    }
    let run = || -> crate::gpu::Result<R> {
        if !operands.iter().all(|&p| is_device_pointer(p)) {
            return Err(crate::gpu::GpuError::Unsupported("a mix of host and device operands"));
        }
        let rt = crate::gpu::Runtime::current()?;
        let ex = crate::gpu::Exec::own(rt);
        let r = gpu(&ex)?;
        rt.sync(ex.stream)?;
        Ok(r)
    };
    let start = std::time::Instant::now();
    let r = run();
    if trace::enabled() {
        trace::line(&format!("{prefix}{base}"), &shape(), Engine::Gpu.name(), 0, start.elapsed().as_secs_f64());
    }
    Some(r.unwrap_or_else(|e| {
        eprintln!("hyblas: {prefix}{base} on device memory failed, outputs untouched: {e}");
        R::default()
    }))
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
