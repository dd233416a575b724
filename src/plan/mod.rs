//! The planner: decides, per call, which engine runs it, and records the decision.
//!
//! With no GPU runtime yet, every plan is the CPU engine; the GPU issues add candidates here.
//! `run` is the single place an ABI call passes through on its way to an engine, so tracing
//! (and later the GPU decision) lives in one spot.

pub mod accurate;
pub mod batch;
pub mod gemm;
pub mod gpu;
pub mod host;
pub mod offload;
pub mod problem;

use crate::trace;
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
/// The call does not wait for a kernel to compile: `gpu` runs under `gpu::loader::routed`, and
/// where its kernel's unit is not loaded yet it answers `GpuError::NotReady` before launching
/// anything; `vendor` (the real cuBLAS on a handle of hyblas's own, bound to the same stream,
/// `abi::cublas::host_vendor`) then answers the call on that stream. `gpu` waits for its
/// kernel instead under `HYBLAS_COMPILE=wait`, with the route forced to hyblas
/// (`HYBLAS_CUBLAS=hyblas` or `plan::gpu::with_mode`, as GEMM on device operands does), where
/// no real cuBLAS can be found, and where it asks to itself (cases the vendor cannot answer
/// exactly, such as a zero increment).
///
/// The trace line (engine `gpu`) ends in the route taken: `route=vendor (kernel compiling:
/// unit level1_d)` (the `NotReady` that sent it there), or `route=hyblas` (with
/// `(HYBLAS_CUBLAS=hyblas)` when forced) where `gpu` ran, unless the shape names its route
/// itself (GEMM's, which routes inside `gpu`).
///
/// A mix of host and device operands, or a failure (of `gpu`, or of `vendor` where it ran),
/// cannot be answered by the CPU engine (it cannot read device memory): it is reported on
/// stderr and the outputs are left as they were.
pub fn on_gpu<R: Default>(
    prefix: impl std::fmt::Display,
    base: &'static str,
    shape: impl FnOnce() -> String,
    operands: &[*const std::ffi::c_void],
    gpu: impl FnOnce(&crate::gpu::Exec<'static>) -> crate::gpu::Result<R>,
    vendor: impl FnOnce(&crate::gpu::Exec<'static>) -> crate::gpu::Result<R>,
) -> Option<R> {
    use crate::gpu::runtime::is_device_pointer;
    use crate::gpu::GpuError;
    let first = *operands.first()?;
    if !is_device_pointer(first) {
        return None;
    }
    let forced = crate::plan::gpu::mode() == crate::plan::gpu::Mode::Hyblas;
    // The route taken, for the trace line: Some(None) hyblas's, Some(Some(NotReady)) the vendor's.
    let mut taken: Option<Option<GpuError>> = None;
    let run = || -> crate::gpu::Result<R> {
        if !operands.iter().all(|&p| is_device_pointer(p)) {
            return Err(GpuError::Unsupported("a mix of host and device operands"));
        }
        let rt = crate::gpu::Runtime::current()?;
        let ex = crate::gpu::Exec::own(rt);
        // Wait for the kernel where the route is forced, where every call does
        // (`HYBLAS_COMPILE=wait`: what `waiting` answers inside `routed(false, ..)`; no cuBLAS
        // is looked up then) or where there is no real cuBLAS to answer meanwhile.
        use crate::gpu::loader::{routed, wait_always};
        let wait = forced || wait_always() || !crate::gpu::vendor::present();
        let r = match routed(wait, || gpu(&ex)) {
            Err(e @ GpuError::NotReady { .. }) => {
                // Nothing was launched: the real cuBLAS answers on the same stream.
                taken = Some(Some(e));
                vendor(&ex)?
            }
            r => {
                taken = Some(None);
                r?
            }
        };
        rt.sync(ex.stream)?;
        Ok(r)
    };
    let start = std::time::Instant::now();
    let r = run();
    if trace::enabled() {
        let mut shape = shape();
        match &taken {
            Some(Some(e)) => shape.push_str(&format!(" route=vendor ({e})")),
            Some(None) if !shape.contains("route=") => {
                shape.push_str(if forced { " route=hyblas (HYBLAS_CUBLAS=hyblas)" } else { " route=hyblas" })
            }
            _ => {}
        }
        trace::line(&format!("{prefix}{base}"), &shape, Engine::Gpu.name(), 0, start.elapsed().as_secs_f64());
    }
    Some(r.unwrap_or_else(|e| {
        if e.wrote_outputs() {
            eprintln!("hyblas: {prefix}{base} on device memory failed, outputs incomplete: {e}");
        } else {
            eprintln!("hyblas: {prefix}{base} on device memory failed, outputs untouched: {e}");
        }
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
