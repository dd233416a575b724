//! Where a host-memory GEMM (`?gemm_`, `cblas_?gemm`) is decided and dispatched: the offload
//! model's decision (`offload::decide_gemm`), then the CPU engine, the GPU pipeline or
//! co-execution (`hybrid::offload`), the CPU fallback of a failed offload, the trace line and
//! the thread's [`Outcome`].

use super::gpu::{self as policy, Decision, Route};
use super::offload::{self as off, GemmPlan, Outcome, Reason, Side};
use crate::cpu::level3 as eng;
use crate::cpu::threads;
use crate::gpu::{self, DMat, Exec, In};
use crate::hybrid::offload::{self as hyb, coexec, cpu_rects, l3, OffloadStats, Tile};
use crate::plan;
use crate::trace;
use crate::types::{MatMut, MatRef, Scalar, Trans};
use std::ffi::c_void;
use std::time::Instant;

/// `?gemm_` / `cblas_?gemm` past the ABI's checks and quick returns: device operands (all of
/// them) run on the GPU ([`device_gemm`]: split-k or the real cuBLAS), host operands go to
/// the offload planner ([`host_gemm`]: CPU, GPU or both), and what it leaves to the CPU engine
/// runs there.
///
/// # Safety
/// Arguments validated by the ABI (reference BLAS rules); pointers as in reference BLAS.
#[allow(clippy::too_many_arguments)]
pub unsafe fn gemm<T: Scalar>(
    ta: Trans,
    tb: Trans,
    m: isize,
    n: isize,
    k: isize,
    alpha: T,
    a: *const T,
    lda: isize,
    b: *const T,
    ldb: isize,
    beta: T,
    c: *mut T,
    ldc: isize,
) {
    // Device memory: C decides (it is always written); A and B count only when read.
    let reads_ab = !alpha.is_zero() && k != 0;
    let ops = [c as *const c_void, a as *const c_void, b as *const c_void];
    let ops = if reads_ab { &ops[..] } else { &ops[..1] };
    let desc = || format!("ta={ta:?} tb={tb:?} m={m} n={n} k={k} lda={lda} ldb={ldb} ldc={ldc}");
    let run = std::cell::Cell::new(None);
    let shape = || {
        let s = desc();
        match run.take() {
            Some(r) => format!("{s} {r}"),
            None => s,
        }
    };
    let dev = |ex: &Exec| {
        let (a, b, c) = (DMat::of(a, lda), DMat::of(b, ldb), DMat::of(c as *const T, ldc));
        run.set(Some(device_gemm(ex, ta, tb, m as i64, n as i64, k as i64, alpha, a, b, beta, c)?));
        Ok(())
    };
    // device_gemm falls back to the real cuBLAS itself (it never answers NotReady); the same
    // fallback, for a uniform signature.
    let vnd = |ex: &Exec| {
        let (a, b, c) = (DMat::of(a, lda), DMat::of(b, ldb), DMat::of(c as *const T, ldc));
        vendor_device_gemm(ex, ta, tb, m as i64, n as i64, k as i64, alpha, a, b, beta, c)
    };
    if plan::on_gpu(T::PREFIX, "gemm", shape, ops, dev, vnd).is_some() {
        return;
    }
    let (m, n, k) = (m as usize, n as usize, k as usize);
    let (lda, ldb, ldc) = (lda as usize, ldb as usize, ldc as usize);
    // The offload planner: CPU, GPU or both (true: done there, with its trace line).
    if host_gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) {
        return;
    }
    let (av, ca) = MatRef::op(a, ta, m, k, lda);
    let (bv, cb) = MatRef::op(b, tb, k, n, ldb);
    let cv = MatMut::col_major(c, m, n, ldc);
    plan::run::<T, _>("gemm", desc, || eng::gemm(alpha, av, ca, bv, cb, beta, cv));
}

/// `?gemm_` / `cblas_?gemm` with host C past the ABI's checks ([`gemm`], sizes non-zero): the planner's decision (`plan::offload::decide_gemm`) and its execution,
/// the CPU fallback of a failed offload, the trace line (the decision, predicted and measured
/// time) and the thread's `plan::offload::Outcome`. False: the caller runs the CPU engine (the
/// planner's fast path: a small call, or the CPU forced; nothing to trace). True: C is done.
///
/// # Safety
/// Pointers and leading dimensions as in reference BLAS (validated by the caller).
#[allow(clippy::too_many_arguments)]
pub unsafe fn host_gemm<T: Scalar>(
    ta: Trans,
    tb: Trans,
    m: usize,
    n: usize,
    k: usize,
    alpha: T,
    a: *const T,
    lda: usize,
    b: *const T,
    ldb: usize,
    beta: T,
    c: *mut T,
    ldc: usize,
) -> bool {
    let plan = off::decide_gemm::<T>(m, n, k, alpha.is_zero(), beta.is_zero(), a.cast(), b.cast());
    if let GemmPlan::Cpu(None) = plan {
        return false;
    }
    let start = Instant::now();
    let warm = crate::trace::Warm::start();
    let name = || format!("{}gemm", T::PREFIX);
    let shape = || format!("ta={ta:?} tb={tb:?} m={m} n={n} k={k} lda={lda} ldb={ldb} ldc={ldc}");
    let whole = [Tile { i0: 0, j0: 0, m, n }];
    // What the planner learns from: whole calls on one side, against its prediction, when
    // they did no set-up work.
    let problem = off::Problem::gemm::<T>(m, n, k, alpha.is_zero(), beta.is_zero());
    let learn = |side, d: &off::Decision, secs| {
        if warm.stayed() {
            off::observe(&problem, side, d, secs)
        }
    };
    match plan {
        GemmPlan::Cpu(None) => unreachable!(),
        GemmPlan::Cpu(Some(d)) => {
            let threads = threads::nthreads();
            super::run::<T, _>("gemm", shape, || {
                cpu_rects(ta, tb, (m, n, k), alpha, a, lda, b, ldb, beta, c, ldc, &whole)
            });
            let secs = start.elapsed().as_secs_f64();
            let pred_us = d.pred.map_or(0.0, |p| p.cpu_us);
            if trace::enabled() {
                trace::note(&format!("{} {} offload: {d} measured={:.1}us", name(), shape(), secs * 1e6));
            }
            learn(Side::Cpu, &d, secs);
            let stats = OffloadStats { mode: "cpu", secs, pred_us, cpu_threads: threads, ..Default::default() };
            off::set_last(Outcome {
                routine: name(),
                planned: d.side,
                ran: Side::Cpu,
                fallback: None,
                stats: Some(stats),
            });
        }
        GemmPlan::Gpu(rt, d) => {
            let pred_us = d.pred.map_or(0.0, |p| p.gpu_us);
            match hyb::gemm::<T>(rt, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) {
                Ok(mut stats) => {
                    stats.mode = "gpu";
                    stats.gpu_share = 1.0;
                    stats.pred_us = pred_us;
                    stats.secs = start.elapsed().as_secs_f64();
                    learn(Side::Gpu, &d, stats.secs);
                    if trace::enabled() {
                        trace::line(&name(), &shape(), "gpu-offload", 0, stats.secs);
                        trace::note(&format!(
                            "{} {} offload: {d} measured={:.1}us {stats}",
                            name(),
                            shape(),
                            stats.secs * 1e6
                        ));
                    }
                    off::set_last(Outcome {
                        routine: name(),
                        planned: Side::Gpu,
                        ran: Side::Gpu,
                        fallback: None,
                        stats: Some(stats),
                    });
                }
                Err(f) => {
                    if d.reason == Reason::DeviceOperand {
                        // The CPU engine cannot read device memory: nothing to fall back to.
                        eprintln!("hyblas: {} with device operands failed on the GPU: {f}", name());
                        off::set_last(Outcome {
                            routine: name(),
                            planned: Side::Gpu,
                            ran: Side::Gpu,
                            fallback: Some(f.to_string()),
                            stats: None,
                        });
                        return true;
                    }
                    let left = f.remaining();
                    if off::disables(&f.error) {
                        eprintln!("hyblas: {} offload: device error, later calls stay on the CPU: {f}", name());
                        off::disable();
                    }
                    if trace::enabled() {
                        trace::note(&format!("{} {} offload failed, CPU engine takes over: {f}", name(), shape()));
                    }
                    super::run::<T, _>("gemm", shape, || {
                        cpu_rects(ta, tb, (m, n, k), alpha, a, lda, b, ldb, beta, c, ldc, &left)
                    });
                    let secs = start.elapsed().as_secs_f64();
                    let elems: usize = left.iter().map(|t| t.m * t.n).sum();
                    let stats = OffloadStats {
                        mode: "gpu",
                        secs,
                        pred_us,
                        gpu_share: 1.0 - elems as f64 / (m * n) as f64,
                        gpu_error: Some(f.error.to_string()),
                        fallback_elems: elems,
                        ..Default::default()
                    };
                    if trace::enabled() {
                        trace::note(&format!(
                            "{} {} offload: {d} measured={:.1}us {stats}",
                            name(),
                            shape(),
                            secs * 1e6
                        ));
                    }
                    off::set_last(Outcome {
                        routine: name(),
                        planned: Side::Gpu,
                        ran: Side::Cpu,
                        fallback: Some(f.to_string()),
                        stats: Some(stats),
                    });
                }
            }
        }
        GemmPlan::Split(rt, d, sp) => {
            let (mut stats, err) = coexec::<T>(rt, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, &sp.split());
            stats.pred_us = sp.pred.us;
            stats.secs = start.elapsed().as_secs_f64();
            if warm.stayed() {
                off::observe_split(&off::Rates::for_device(rt), &problem, &stats);
            }
            if let Some(e) = &err {
                if off::disables(e) {
                    eprintln!("hyblas: {} co-execution: device error, later calls stay on the CPU: {e}", name());
                    off::disable();
                }
                if trace::enabled() {
                    trace::note(&format!(
                        "{} {} co-execution: the GPU failed ({e}), the CPU engine finished its part",
                        name(),
                        shape()
                    ));
                }
            }
            if trace::enabled() {
                trace::line(&name(), &shape(), "split-offload", stats.cpu_threads, stats.secs);
                trace::note(&format!(
                    "{} {} offload: {} measured={:.1}us {stats}",
                    name(),
                    shape(),
                    off::describe(&d, Some(&sp)),
                    stats.secs * 1e6
                ));
            }
            let ran = if stats.gpu_share > 0.0 { Side::Gpu } else { Side::Cpu };
            let fallback = err.map(|e| e.to_string());
            off::set_last(Outcome { routine: name(), planned: Side::Gpu, ran, fallback, stats: Some(stats) });
        }
    }
    true
}

/// What [`offload_level3`] did with a call.
pub(crate) enum Level3Run {
    /// Done: on the GPU, or (after a GPU failure that wrote part of the output) finished by
    /// the CPU engine on exactly the parts left.
    Done,
    /// The caller runs the CPU engine on the whole call, holding the watch until it is done
    /// (a call the planner priced: its trace line and what the planner learns from it, when
    /// it drops).
    Cpu(Option<Box<crate::plan::offload::CpuWatch>>),
}

/// A host SYMM/HEMM, SYRK/HERK, SYR2K/HER2K (and, from `level3_tri`, TRMM/TRSM) call that the
/// offload planner (`plan::offload::decide_level3`) sends to the GPU runs through
/// `crate::hybrid::offload::l3`. A failed offload that wrote part of the output is finished by `finish`
/// (the CPU engine on exactly the parts left), with a trace line. [`Level3Run::Cpu`]: the
/// caller runs the CPU engine on the whole call (the planner said so, cheaply for small calls;
/// or the GPU failed before writing anything: out of memory, no cuBLAS, ...).
///
/// # Safety
/// `call` built from validated, non-empty arguments.
pub(crate) unsafe fn offload_level3<T: Scalar>(
    call: &l3::Call<T>,
    shape: &dyn Fn() -> String,
    finish: &dyn Fn(&[crate::hybrid::offload::Tile]),
) -> Level3Run {
    use crate::plan::offload::{self as off, CpuWatch, Outcome, Plan, Reason, Side as Dev};
    use crate::trace;
    let base = call.kind.name();
    let name = || format!("{}{base}", T::PREFIX);
    let (rt, d) = match off::decide_level3(off::Problem::of_call(call), &call.operands()) {
        Plan::Cpu(None) => return Level3Run::Cpu(None),
        Plan::Cpu(Some(d)) => {
            off::set_last(Outcome { routine: name(), planned: d.side, ran: Dev::Cpu, fallback: None, stats: None });
            return Level3Run::Cpu(Some(Box::new(CpuWatch::start(off::Problem::of_call(call), d, || {
                format!("{} {}", name(), shape())
            }))));
        }
        Plan::Gpu(rt, d) => (rt, d),
    };
    let (start, warm) = (std::time::Instant::now(), crate::trace::Warm::start());
    match l3::run::<T>(rt, call) {
        Ok(stats) => {
            let secs = start.elapsed().as_secs_f64();
            if warm.stayed() {
                off::observe(&off::Problem::of_call(call), Dev::Gpu, &d, secs);
            }
            if trace::enabled() {
                trace::line(&name(), &shape(), "gpu-offload", 0, secs);
                trace::note(&format!("{} {} offload: {d} measured={:.1}us {stats}", name(), shape(), secs * 1e6));
            }
            let o = Outcome { routine: name(), planned: Dev::Gpu, ran: Dev::Gpu, fallback: None, stats: Some(stats) };
            off::set_last(o);
            Level3Run::Done
        }
        Err(f) => {
            // The CPU engine cannot read device memory (and a device output may be half
            // computed in place): nothing to fall back to.
            let on_device = d.reason == Reason::DeviceOperand
                || call.operands().iter().any(|&p| gpu::runtime::is_device_pointer(p));
            if on_device {
                eprintln!("hyblas: {} with device operands failed on the GPU: {f}", name());
                let fallback = Some(f.to_string());
                off::set_last(Outcome { routine: name(), planned: Dev::Gpu, ran: Dev::Gpu, fallback, stats: None });
                return Level3Run::Done;
            }
            if off::disables(&f.error) {
                eprintln!("hyblas: {} offload: device error, later calls stay on the CPU: {f}", name());
                off::disable();
            }
            if trace::enabled() {
                trace::note(&format!("{} {} offload failed, CPU engine takes over: {f}", name(), shape()));
            }
            let fallback = Some(f.to_string());
            off::set_last(Outcome { routine: name(), planned: Dev::Gpu, ran: Dev::Cpu, fallback, stats: None });
            if f.untouched_c() {
                return Level3Run::Cpu(None);
            }
            let left = f.remaining();
            plan::run::<T, _>(base, shape, || finish(&left));
            Level3Run::Done
        }
    }
}

/// How [`device_gemm`] ran a call, for the trace line (formatted only when tracing is on).
pub struct DeviceGemm {
    pub decision: Decision,
    /// Split-k was chosen but declined (the real cuBLAS ran the call).
    pub declined: Option<gpu::GpuError>,
    /// The model's account of its inputs, when it was asked and tracing is on.
    pub why: Option<String>,
}

impl std::fmt::Display for DeviceGemm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let outcome = self.declined.as_ref().map_or(policy::Outcome::Done, policy::Outcome::of_error);
        f.write_str(&outcome.describe(&self.decision))?;
        if let Some(w) = &self.why {
            write!(f, " model: {w}")?;
        }
        Ok(())
    }
}

/// GEMM on device operands, on `ex`'s stream (the caller waits): split-k when the planner
/// routes it there (the model, or `HYBLAS_CUBLAS_GEMM` / `HYBLAS_CUBLAS` / `with_mode`) and the
/// kernel takes it, else the real cuBLAS GEMM on a handle of hyblas's own. alpha = 0 reads
/// neither A nor B (reference BLAS; they may be anything): cuBLAS then gets k = 0, C := beta*C.
#[allow(clippy::too_many_arguments)]
pub fn device_gemm<T: Scalar>(
    ex: &Exec,
    ta: Trans,
    tb: Trans,
    m: i64,
    n: i64,
    k: i64,
    alpha: T,
    a: DMat,
    b: DMat,
    beta: T,
    c: DMat,
) -> gpu::Result<DeviceGemm> {
    let mut why = None;
    let decision = policy::decide_gemm(None, || {
        let vector = gpu::splitk::vector_loads::<T>(ta, tb, m, n, a, b);
        let (d, w) = policy::gemm::<T>(ex.rt, ta, tb, m, n, k, vector);
        why = w;
        d
    });
    let mut declined = None;
    if decision.route == Route::Hyblas {
        // Host-ABI callers have no atomics mode to set: HYBLAS_DETERMINISTIC=0 allows atomics.
        let red = policy::reduction(false);
        // A unit not loaded yet answers NotReady (C untouched) unless the route was forced.
        let run = || gpu::splitk::gemm::<T>(ex, ta, tb, m, n, k, In::Host(alpha), a, b, In::Host(beta), c, red);
        // Without a real cuBLAS to answer meanwhile, the call waits for its kernel.
        let wait = decision.forced_hyblas() || !gpu::vendor::present();
        match gpu::loader::routed(wait, run) {
            Ok(()) => return Ok(DeviceGemm { decision, declined, why }),
            Err(e) => declined = Some(e),
        }
    }
    vendor_device_gemm(ex, ta, tb, m, n, k, alpha, a, b, beta, c)?;
    Ok(DeviceGemm { decision, declined, why })
}

/// GEMM on device operands by the real cuBLAS: alpha = 0 reads neither A nor B (reference
/// BLAS; they may be anything), so cuBLAS then gets k = 0, C := beta*C.
#[allow(clippy::too_many_arguments)]
fn vendor_device_gemm<T: Scalar>(
    ex: &Exec,
    ta: Trans,
    tb: Trans,
    m: i64,
    n: i64,
    k: i64,
    alpha: T,
    a: DMat,
    b: DMat,
    beta: T,
    c: DMat,
) -> gpu::Result<()> {
    let k = if alpha.is_zero() { 0 } else { k };
    crate::gpu::vendor_calls::vendor_gemm::<T>(ex, ta, tb, m, n, k, alpha, a, b, beta, c)
}
