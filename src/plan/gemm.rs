//! Every GEMM-shaped call is decided here: `?gemm_` / `cblas_?gemm` (host or device memory),
//! the interposed `cublas?gemm_v2` / `cublasGemmEx` (device memory, through `abi::cublas`), and
//! the host-memory SYMM/HEMM, SYRK/HERK, SYR2K/HER2K, TRMM, TRSM. One ordered list of
//! decisions; the first that applies wins. Each has a named setting with one default, and says
//! why in the trace line (`HYBLAS_TRACE`):
//!
//! | step | decision | setting (default) | the trace line says |
//! | --- | --- | --- | --- |
//! | 0 | DGEMM in accurate mode: the Ozaki scheme (`plan::accurate`; on device memory `device_dgemm`, the GPU's int8 form, also for `abi::cublas`) | `HYBLAS_DGEMM_MODE` (native), `hyblas_set_dgemm_mode`, `hyblas_dgemm_ex` | `accurate (nearest): bits=.. levels=.. products=..` / `.. on the GPU: int8 CRT bits=.. moduli=..` |
//! | 1 | where the operands live: all in device memory (2-6), else the host (7-11) | | `engine=gpu` / `gpu-offload` / `split-offload` / `cpu` |
//! | 2 | a degenerate call (empty output, k = 0, GemmEx types hyblas lacks): the real cuBLAS | | `k = 0: left to cuBLAS` |
//! | 3 | a route forced: hyblas's split-k or the real cuBLAS | `plan::gpu::with_mode`, `HYBLAS_CUBLAS_GEMM`, `HYBLAS_CUBLAS` (auto) | `HYBLAS_CUBLAS_GEMM=hyblas` |
//! | 4 | Strassen-Winograd (seed 003, `gpu::strassen::Model`): forced levels, or the model's pick where it predicts a gain; real data, host scalars, no TF32 | `HYBLAS_STRASSEN` (off), `with_strassen`, `hyblas_set_strassen`, `HYBLAS_STRASSEN_MIN_GAIN` (5) | `Strassen model: predicted cuBLAS .. us, 1 level .. us, 2 levels .. us` |
//! | 5 | an output too large for split-k: the real cuBLAS | `HYBLAS_CUBLAS_GEMM_MAX_MN` (65536) | `m*n=.. > HYBLAS_CUBLAS_GEMM_MAX_MN=..` |
//! | 6 | the split-k model (seed 000, `gpu::splitk::predict`): the faster of split-k and cuBLAS | | `predicted split-k .. us < cuBLAS .. us` |
//! | 7 | a side, a GPU share or co-execution forced | `plan::offload::with_side` / `with_share` / `with_split`, `HYBLAS_DEVICE` (auto), `HYBLAS_OFFLOAD_SHARE` | `side=gpu (HYBLAS_DEVICE=gpu)` |
//! | 8 | too few flops to offload: the CPU engine | `HYBLAS_OFFLOAD_MIN_FLOPS` (2*256^3) | (the CPU engine's line only) |
//! | 9 | no usable GPU (none, or offload disabled after a device error): the CPU engine | | `(GPU wanted, none usable: ..)` |
//! | 10 | A or B in device memory, C on the host: the GPU | | `(A or B in device memory)` |
//! | 11 | the offload model (seed 002, `plan::offload`): co-execution where it pays, else the faster side | `HYBLAS_OFFLOAD_SPLIT_GAIN` (0.15) | `side=.. (model) predicted cpu=.. gpu=.. [split=..]` |
//!
//! [`decide_device`] + [`splitk_model`] are steps 2-6, [`decide_host`] steps 7-11. Then the
//! call runs: [`gemm`] (the Fortran/CBLAS GEMM: steps 1-11 and the engines), [`device_gemm`],
//! [`host_gemm`], [`offload_level3`]; `abi::cublas` runs steps 2-6 through its dispatcher.

use super::gpu::{self as policy, Decision, Mode, Reason as GpuReason, Route, WordHasher};
use super::offload::{self as off, Force, Outcome, Reason, Side, SplitPlan};
use crate::config;
use crate::cpu::level3 as eng;
use crate::cpu::threads;
use crate::gpu::splitk::Reduction;
use crate::gpu::Runtime;
use crate::gpu::{self, DMat, Exec, In};
use crate::hybrid::offload::{self as hyb, coexec, cpu_rects, l3, OffloadStats, Tile};
use crate::plan;
use crate::trace;
use crate::types::{MatMut, MatRef, Scalar, Trans};
use once_cell::sync::Lazy;
use std::collections::HashMap;
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
    // HYBLAS_DGEMM_MODE=accurate: DGEMM by the Ozaki scheme (plan::accurate), on the device for
    // device memory, else on the host below.
    let accurate = match plan::accurate::mode() {
        plan::accurate::Mode::Accurate(r) if matches!(T::PREFIX, 'd' | 'z') => Some(r),
        _ => None,
    };
    // What the accurate device path did, for the trace line.
    let acc_run = std::cell::Cell::new(None::<plan::accurate::Report>);
    let dev = |ex: &Exec| {
        let (a, b, c) = (DMat::of(a, lda), DMat::of(b, ldb), DMat::of(c as *const T, ldc));
        if let Some(r) = accurate {
            let dims = (m as usize, n as usize, k as usize);
            let rep = if T::PREFIX == 'z' {
                // T is C64 here: [re, im], as it lies in memory.
                let (al, be): ([f64; 2], [f64; 2]) =
                    (std::mem::transmute_copy(&alpha), std::mem::transmute_copy(&beta));
                gpu::loader::routed(true, || plan::accurate::device_zgemm(ex, r, ta, tb, dims, al, a, b, be, c))?
            } else {
                // T is f64 here (prefix 'd'): the casts are identities. The kernels are waited
                // for (cuBLAS's native answer would break the guarantee asked for).
                let (al, be): (f64, f64) = (std::mem::transmute_copy(&alpha), std::mem::transmute_copy(&beta));
                gpu::loader::routed(true, || plan::accurate::device_dgemm(ex, r, ta, tb, dims, al, a, b, be, c))?
            };
            acc_run.set(Some(rep));
            return Ok(());
        }
        run.set(Some(device_gemm(ex, ta, tb, m as i64, n as i64, k as i64, alpha, a, b, beta, c)?));
        Ok(())
    };
    // device_gemm falls back to the real cuBLAS itself (it never answers NotReady); the same
    // fallback, for a uniform signature.
    let vnd = |ex: &Exec| {
        let (a, b, c) = (DMat::of(a, lda), DMat::of(b, ldb), DMat::of(c as *const T, ldc));
        vendor_device_gemm(ex, ta, tb, m as i64, n as i64, k as i64, alpha, a, b, beta, c)
    };
    let shape = || match acc_run.take() {
        Some(r) => format!(
            "{} accurate ({}): bits={} moduli={} certified={} exact={} ieee={}{}",
            shape(),
            if accurate == Some(plan::accurate::Rounding::Faithful) { "faithful" } else { "nearest" },
            r.bits,
            r.moduli,
            r.certified,
            r.exact,
            r.ieee,
            match (r.gpu, T::PREFIX) {
                (true, _) => "",
                (false, 'z') => " (on the host, on copies: a complex alpha or beta)",
                _ => " (on the host: k past the device's int32 sums)",
            }
        ),
        None => shape(),
    };
    if plan::on_gpu(T::PREFIX, "gemm", shape, ops, dev, vnd).is_some() {
        return;
    }
    let (m, n, k) = (m as usize, n as usize, k as usize);
    let (lda, ldb, ldc) = (lda as usize, ldb as usize, ldc as usize);
    if let (Some(rounding), 'z') = (accurate, T::PREFIX) {
        // T is C64 here: [re, im], as it lies in memory.
        let (al, be): ([f64; 2], [f64; 2]) = (std::mem::transmute_copy(&alpha), std::mem::transmute_copy(&beta));
        plan::accurate::zgemm(
            rounding,
            ta,
            tb,
            m,
            n,
            k,
            al,
            a as *const f64,
            lda,
            b as *const f64,
            ldb,
            be,
            c as *mut f64,
            ldc,
        );
        return;
    }
    if let Some(rounding) = accurate {
        // T is f64 here (prefix 'd'): the casts are identities.
        let (al, be): (f64, f64) = (std::mem::transmute_copy(&alpha), std::mem::transmute_copy(&beta));
        let (a, b, c) = (a as *const f64, b as *const f64, c as *mut f64);
        // Host memory: the GPU's scheme where one is usable and the call large enough (copies
        // included it is far cheaper than the CPU path), else the CPU's.
        if let Some(rt) = plan::accurate::host_call_on_gpu(m, n, k) {
            let dims = (m, n, k);
            match plan::accurate::dgemm_on_gpu(rt, rounding, ta, tb, dims, al, (a, lda), (b, ldb), be, (c, ldc)) {
                Ok(_) => return,
                Err(e) => {
                    if trace::enabled() {
                        trace::note(&format!("dgemm accurate on the GPU failed ({e}): on the CPU, C untouched so far"));
                    }
                }
            }
        }
        plan::accurate::dgemm(rounding, ta, tb, m, n, k, al, a, lda, b, ldb, be, c, ldc);
        return;
    }
    // The offload planner: CPU, GPU or both (true: done there, with its trace line).
    if host_gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) {
        return;
    }
    let (av, ca) = MatRef::op(a, ta, m, k, lda);
    let (bv, cb) = MatRef::op(b, tb, k, n, ldb);
    let cv = MatMut::col_major(c, m, n, ldc);
    plan::run::<T, _>("gemm", desc, || eng::gemm(alpha, av, ca, bv, cb, beta, cv));
}

/// `?gemm_` / `cblas_?gemm` with host C past the ABI's checks ([`gemm`], sizes non-zero): steps
/// 6-10 ([`decide_host`]) and their plan carried out, the CPU fallback of a failed offload, the
/// trace line (the decision, predicted and measured time) and the thread's [`Outcome`]. False: the caller runs the CPU engine (the
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
    let problem = off::Problem::gemm::<T>(m, n, k, alpha.is_zero(), beta.is_zero());
    let plan = decide_host(problem, true, &[a.cast(), b.cast()]);
    if let HostPlan::Cpu(None) = plan {
        return false;
    }
    let start = Instant::now();
    let warm = crate::trace::Warm::start();
    let name = || format!("{}gemm", T::PREFIX);
    let shape = || format!("ta={ta:?} tb={tb:?} m={m} n={n} k={k} lda={lda} ldb={ldb} ldc={ldc}");
    let whole = [Tile { i0: 0, j0: 0, m, n }];
    // What the planner learns from: whole calls on one side, against its prediction, when
    // they did no set-up work.
    let learn = |side, d: &off::Decision, secs| {
        if warm.stayed() {
            off::observe(&problem, side, d, secs)
        }
    };
    match plan {
        HostPlan::Cpu(None) => unreachable!(),
        HostPlan::Cpu(Some(d)) => {
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
        HostPlan::Gpu(rt, d) => {
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
                        // The call still completes (the CPU engine takes over): said in the trace only.
                        trace::note(&format!("{} offload: device error, later calls stay on the CPU: {f}", name()));
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
        HostPlan::Split(rt, d, sp) => {
            let (mut stats, err) = coexec::<T>(rt, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, &sp.split());
            stats.pred_us = sp.pred.us;
            stats.secs = start.elapsed().as_secs_f64();
            if let Some(e) = &err {
                if off::disables(e) {
                    trace::note(&format!("{} co-execution: device error, later calls stay on the CPU: {e}", name()));
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
/// planner (steps 7-11, [`decide_host`]) sends to the GPU runs through
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
    use crate::plan::offload::{CpuWatch, Side as Dev};
    use crate::trace;
    let base = call.kind.name();
    let name = || format!("{}{base}", T::PREFIX);
    let (rt, d) = match decide_host(off::Problem::of_call(call), false, &call.operands()) {
        HostPlan::Cpu(None) => return Level3Run::Cpu(None),
        HostPlan::Cpu(Some(d)) => {
            off::set_last(Outcome { routine: name(), planned: d.side, ran: Dev::Cpu, fallback: None, stats: None });
            return Level3Run::Cpu(Some(Box::new(CpuWatch::start(off::Problem::of_call(call), d, || {
                format!("{} {}", name(), shape())
            }))));
        }
        HostPlan::Gpu(rt, d) => (rt, d),
        HostPlan::Split(..) => unreachable!("co-execution is GEMM's"),
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
                trace::note(&format!("{} offload: device error, later calls stay on the CPU: {f}", name()));
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
    let decision = decide_device(None, || {
        if let Some(d) = strassen_step::<T>(ex.rt, m, n, k, alpha.is_zero(), beta.is_zero(), None, &mut why) {
            return d;
        }
        let vector = gpu::splitk::vector_loads::<T>(ta, tb, m, n, a, b);
        let (d, w) = splitk_model::<T>(ex.rt, ta, tb, m, n, k, vector);
        why = join_why(why.take(), w);
        d
    });
    let mut declined = None;
    if let Route::Strassen(levels) = decision.route {
        let run = || gpu::strassen::run::<T>(ex, ta, tb, m, n, k, alpha, a, b, beta, c, levels);
        match gpu::loader::routed(decision.forced_hyblas() || !gpu::vendor::present(), run) {
            Ok(()) => return Ok(DeviceGemm { decision, declined, why }),
            Err(e) => declined = Some(e),
        }
    }
    if decision.route == Route::Hyblas {
        // Host-ABI callers have no atomics mode to set: HYBLAS_DETERMINISTIC=0 allows atomics.
        let red = reduction(false);
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

// ==== The decisions ====

// ---- Device operands (steps 2-6) ----

/// `HYBLAS_CUBLAS_GEMM_MAX_MN`: the largest m*n that may run split-k, and its default (m = n =
/// 256: far past the small outputs split-k is for; the model decides below it).
pub const GEMM_MAX_MN_KEY: &str = "HYBLAS_CUBLAS_GEMM_MAX_MN";
pub const GEMM_MAX_MN_DEFAULT: u64 = 1 << 16;

static GEMM_MAX_MN: Lazy<u64> = Lazy::new(|| config::threshold(GEMM_MAX_MN_KEY, GEMM_MAX_MN_DEFAULT as usize) as u64);

/// `HYBLAS_CUBLAS_GEMM`, when set to a valid mode.
static ENV_GEMM_MODE: Lazy<Option<Mode>> = Lazy::new(|| {
    let v = config::value("HYBLAS_CUBLAS_GEMM")?;
    let m = Mode::parse(&v);
    if m.is_none() {
        eprintln!("hyblas: HYBLAS_CUBLAS_GEMM={v} is not auto, hyblas or vendor; ignored");
    }
    m
});

/// `HYBLAS_DETERMINISTIC`: `Some(true)` for 1/on/yes/true, `Some(false)` for 0/off/no/false,
/// None when unset (or anything else).
static DETERMINISTIC: Lazy<Option<bool>> = Lazy::new(|| {
    let v = config::value("HYBLAS_DETERMINISTIC")?;
    match v.trim().to_ascii_lowercase().as_str() {
        "1" | "on" | "yes" | "true" => Some(true),
        "0" | "off" | "no" | "false" => Some(false),
        _ => {
            eprintln!("hyblas: HYBLAS_DETERMINISTIC={v} is not 0 or 1; ignored");
            None
        }
    }
});

/// The split-k reduction for a call whose caller allows atomics (`atomics_allowed`: the cuBLAS
/// handle's atomics mode) or not: atomic when allowed or `HYBLAS_DETERMINISTIC=0`,
/// deterministic otherwise and whenever `HYBLAS_DETERMINISTIC=1`.
pub fn reduction(atomics_allowed: bool) -> Reduction {
    match *DETERMINISTIC {
        Some(true) => Reduction::Deterministic,
        Some(false) => Reduction::Atomic,
        None if atomics_allowed => Reduction::Atomic,
        None => Reduction::Deterministic,
    }
}

/// Steps 2-3 for a GEMM on device operands: a degenerate call goes to cuBLAS, then a mode
/// forced per thread (`plan::gpu::with_mode`), then `HYBLAS_CUBLAS_GEMM`, then `HYBLAS_CUBLAS`;
/// auto asks `model` (steps 4-6: [`strassen_step`], then [`splitk_model`], or [`gemm_no_runtime`]).
pub fn decide_device(degenerate: Option<&'static str>, model: impl FnOnce() -> Decision) -> Decision {
    if let Some(what) = degenerate {
        return Decision { route: Route::Vendor, reason: GpuReason::Degenerate(what) };
    }
    let (m, reason) = match (policy::thread_mode(), *ENV_GEMM_MODE) {
        (Some(m), _) => (m, GpuReason::Forced(m)),
        (None, Some(m)) => (m, GpuReason::ForcedGemm(m)),
        (None, None) => (policy::env_mode(), GpuReason::Forced(policy::env_mode())),
    };
    match m {
        Mode::Hyblas => Decision { route: Route::Hyblas, reason },
        Mode::Vendor => Decision { route: Route::Vendor, reason },
        Mode::Auto => model(),
    }
}

/// `HYBLAS_STRASSEN`: Strassen-Winograd (seed 003) for real GEMMs on device memory. Off by
/// default: its error bound is normwise and grows with each level (the README's error model),
/// so a user opts in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strassen {
    Off,
    /// The model decides per call (levels 0, 1 or 2).
    Auto,
    /// This many levels wherever the call can run it (1 or 2; tests and benchmarks).
    Levels(u32),
}

impl Strassen {
    /// `off`, `auto`, `0`..`4` (0 is off); case-insensitive.
    pub fn parse(s: &str) -> Option<Strassen> {
        match s.trim().to_ascii_lowercase().as_str() {
            "" | "off" | "0" | "no" => Some(Strassen::Off),
            "auto" | "on" => Some(Strassen::Auto),
            v => v.parse::<u32>().ok().filter(|l| (1..=4).contains(l)).map(Strassen::Levels),
        }
    }
    /// The native API's code: -1 auto, 0 off, 1..4 levels (`hyblas_set_strassen`).
    pub fn from_code(c: i32) -> Option<Strassen> {
        match c {
            -1 => Some(Strassen::Auto),
            0 => Some(Strassen::Off),
            1..=4 => Some(Strassen::Levels(c as u32)),
            _ => None,
        }
    }
    pub fn code(self) -> i32 {
        match self {
            Strassen::Auto => -1,
            Strassen::Off => 0,
            Strassen::Levels(l) => l as i32,
        }
    }
}

static ENV_STRASSEN: Lazy<Strassen> = Lazy::new(|| {
    let v = config::value("HYBLAS_STRASSEN").unwrap_or_default();
    Strassen::parse(&v).unwrap_or_else(|| {
        eprintln!("hyblas: HYBLAS_STRASSEN={v} is not off, auto or a level count 1-4; using off");
        Strassen::Off
    })
});

thread_local! {
    static STRASSEN_LOCAL: std::cell::Cell<Option<Strassen>> = const { std::cell::Cell::new(None) };
}

/// The Strassen setting in force on this thread: its own ([`with_strassen`],
/// [`set_thread_strassen`]), else `HYBLAS_STRASSEN` (read once).
pub fn strassen_mode() -> Strassen {
    STRASSEN_LOCAL.with(|c| c.get()).unwrap_or(*ENV_STRASSEN)
}

/// Run `f` with this thread's GEMMs under Strassen setting `s` (tests and benchmarks).
pub fn with_strassen<R>(s: Strassen, f: impl FnOnce() -> R) -> R {
    config::with_local(&STRASSEN_LOCAL, Some(s), f)
}

/// Set this thread's Strassen setting (None: back to `HYBLAS_STRASSEN`) for its next calls;
/// returns the one before (the native API's `hyblas_set_strassen`).
pub fn set_thread_strassen(s: Option<Strassen>) -> Option<Strassen> {
    STRASSEN_LOCAL.with(|c| c.replace(s))
}

/// Step 4 for a GEMM on device operands in `rt`'s device: Strassen-Winograd where the setting
/// allows it and the call can run it (a real precision, alpha != 0, no `blocked` reason such as
/// TF32 math or device scalars), at the forced level count or where the model
/// (`gpu::strassen::Model::choose`) predicts a gain. None: the steps after it decide; `why`
/// then gets the model's account when it was asked (for the trace).
#[allow(clippy::too_many_arguments)]
pub fn strassen_step<T: Scalar>(
    rt: &Runtime,
    m: i64,
    n: i64,
    k: i64,
    alpha_zero: bool,
    beta_zero: bool,
    blocked: Option<&'static str>,
    why: &mut Option<String>,
) -> Option<Decision> {
    let mode = strassen_mode();
    if mode == Strassen::Off || alpha_zero || m < 2 || n < 2 || k < 2 {
        return None;
    }
    let blocked = blocked.or(T::IS_COMPLEX.then_some("complex data"));
    if let Some(b) = blocked {
        if trace::enabled() {
            *why = Some(format!("Strassen not run: {b}"));
        }
        return None;
    }
    let (m, n, k) = (m as usize, n as usize, k as usize);
    match mode {
        Strassen::Levels(l) => Some(Decision { route: Route::Strassen(l), reason: GpuReason::StrassenForced(l) }),
        _ => {
            let p = gpu::strassen::model(rt).choose(std::mem::size_of::<T>(), m, n, k, beta_zero);
            let reason = GpuReason::Strassen { us: p.us, min_gain: *gpu::strassen::MIN_GAIN };
            if p.levels > 0 {
                return Some(Decision { route: Route::Strassen(p.levels), reason });
            }
            if trace::enabled() {
                *why = Some(format!("{reason}: declined"));
            }
            None
        }
    }
}

/// The trace's account of two model steps (Strassen's, then split-k's), either possibly absent.
pub fn join_why(first: Option<String>, then: Option<String>) -> Option<String> {
    match (first, then) {
        (Some(a), Some(b)) => Some(format!("{a}; {b}")),
        (a, b) => a.or(b),
    }
}

/// Steps 5-6 on `rt`'s device: cuBLAS when m*n > `HYBLAS_CUBLAS_GEMM_MAX_MN`, else split-k when
/// the seed-000 model (`gpu::splitk::predict`) says it is faster. Also returns the model's own
/// account of its inputs (for the trace; not formatted again here).
///
/// Programs repeat their GEMM shapes, so decisions are kept per thread (keyed by device,
/// precision, operations and sizes; at most [`GEMM_CACHE_MAX`] shapes): a repeated call costs
/// one hash lookup, not a model evaluation. The model's text is kept only when tracing is on.
/// `vector`: the operands take the split-k kernels' 16-byte loads (`splitk::vector_loads`).
#[allow(clippy::too_many_arguments)]
pub fn splitk_model<T: Scalar>(
    rt: &Runtime,
    ta: Trans,
    tb: Trans,
    m: i64,
    n: i64,
    k: i64,
    vector: bool,
) -> (Decision, Option<String>) {
    let count = |v: i64| v.max(0) as u64;
    let mn = count(m).saturating_mul(count(n));
    let max = *GEMM_MAX_MN;
    if mn > max {
        return (Decision { route: Route::Vendor, reason: GpuReason::GemmMaxMn { mn, max } }, None);
    }
    let key: GemmKey = (
        rt as *const Runtime as usize,
        T::PREFIX,
        policy::op_code(ta) << 1 | vector as u8,
        policy::op_code(tb),
        m,
        n,
        k,
    );
    let tracing = trace::enabled();
    let hit = GEMM_CACHE.try_with(|c| c.borrow().get(&key).cloned()).ok().flatten();
    if let Some((d, why)) = hit {
        return (d, if tracing { why } else { None });
    }
    let p = gpu::splitk::predict::<T>(rt, ta, tb, m, n, k, vector);
    let route = if p.splitk { Route::Hyblas } else { Route::Vendor };
    let d = Decision { route, reason: GpuReason::Predicted { splitk_us: p.splitk_us, vendor_us: p.vendor_us } };
    let why = tracing.then_some(p.why);
    let _ = GEMM_CACHE.try_with(|c| {
        let mut c = c.borrow_mut();
        if c.len() >= GEMM_CACHE_MAX {
            c.clear();
        }
        c.insert(key, (d, why.clone()));
    });
    (d, why)
}

/// Shapes whose GEMM decision a thread keeps (then the cache starts over).
pub const GEMM_CACHE_MAX: usize = 4096;

/// (runtime, precision, op(A) with the 16-byte-loads bit, op(B), m, n, k).
type GemmKey = (usize, char, u8, u8, i64, i64, i64);

type GemmCache = HashMap<GemmKey, (Decision, Option<String>), std::hash::BuildHasherDefault<WordHasher>>;

thread_local! {
    static GEMM_CACHE: std::cell::RefCell<GemmCache> = std::cell::RefCell::new(GemmCache::default());
}

/// Steps 5-6 without a runtime to ask (the model cannot run): cuBLAS.
pub fn gemm_no_runtime() -> Decision {
    Decision { route: Route::Vendor, reason: GpuReason::NoRuntime }
}

// ---- Host operands (steps 7-11) ----

/// `HYBLAS_OFFLOAD_MIN_FLOPS`: below it, the CPU without asking the model (default 2*256^3:
/// ~20 us on a 16-core CPU, less than one offloaded call's fixed cost).
pub const MIN_FLOPS_KEY: &str = "HYBLAS_OFFLOAD_MIN_FLOPS";
pub const MIN_FLOPS_DEFAULT: f64 = 2.0 * 256.0 * 256.0 * 256.0;
pub(crate) static MIN_FLOPS: Lazy<f64> = Lazy::new(|| config::float(MIN_FLOPS_KEY).unwrap_or(MIN_FLOPS_DEFAULT));

/// Where a host-memory call runs: the CPU engine, the GPU through the offload executors, or
/// both (GEMM only).
pub enum HostPlan {
    /// The CPU engine. None: decided on the fast path (small or forced), nothing to trace.
    Cpu(Option<off::Decision>),
    /// The GPU of `rt` alone (`hybrid::offload::gemm`, or `l3::run`).
    Gpu(&'static Runtime, off::Decision),
    /// Both (`hybrid::offload::coexec`).
    Split(&'static Runtime, off::Decision, SplitPlan),
}

/// Steps 7-11 for a host-memory GEMM (`gemm`: co-execution and the forced shares apply) or
/// another Level-3 routine, priced as `p` ([`off::Problem::gemm`], [`off::Problem::level3`]).
/// `operands`: the caller's pointers the call reads (for GEMM A and B; C is on the host,
/// `plan::on_gpu` took the all-device case before). Costs a few thread-local reads and a
/// multiply when the answer is the CPU for a small call; never touches the driver then.
#[inline]
pub fn decide_host(p: off::Problem, gemm: bool, operands: &[*const c_void]) -> HostPlan {
    // 7. A side, share or split forced for this thread or the process.
    let forced = if gemm { off::forced_gemm() } else { off::forced().map(|(s, by)| Force::Side(s, by)) };
    if let Some(Force::Side(Side::Cpu, _)) = forced {
        if !off::times_forced_cpu(&p) {
            return HostPlan::Cpu(None);
        }
    }
    // 8. Too small to be worth asking the model.
    if forced.is_none() && p.flops() < *MIN_FLOPS {
        return HostPlan::Cpu(None);
    }
    decide_host_model(p, gemm, forced, operands)
}

/// [`decide_host`] past the fast path: steps 9-11 (and step 7's forced plans, which need the
/// runtime and the model's prices for their trace line).
#[cold]
fn decide_host_model(mut p: off::Problem, gemm: bool, forced: Option<Force>, operands: &[*const c_void]) -> HostPlan {
    // 9. No usable GPU: the CPU (said only where something was forced; auto without a GPU is
    // the ordinary CPU case).
    let no_gpu = |why: String| {
        HostPlan::Cpu(forced.is_some().then_some(off::Decision {
            side: Side::Cpu,
            reason: Reason::NoGpu(why),
            pred: None,
            rates: None,
        }))
    };
    if off::disabled() {
        return no_gpu("offload disabled after a device error".into());
    }
    let rt = match Runtime::current() {
        Ok(rt) => rt,
        Err(e) => return no_gpu(e.to_string()),
    };
    // A GEMM with k = 0 (or alpha = 0) reads neither A nor B: they may be anything.
    let reads = !gemm || p.k > 0;
    // (At most three operands: A, B and the output.)
    let mut on_device = [false; 3];
    for (d, &x) in on_device.iter_mut().zip(operands) {
        *d = reads && gpu::runtime::is_device_pointer(x);
    }
    if gemm && reads {
        // The model prices no upload for an operand already on the device.
        p.host = [!on_device[0], !on_device[1], true];
    }
    let rates = off::Rates::for_device(rt);
    let threads = crate::cpu::threads::nthreads();
    // A forced call needs only the whole-call predictions (its trace line's); the search over
    // the shares (`off::choose_cached`, 35-40 us when it runs) is auto's.
    let (pred, split) = match forced {
        None if gemm => off::choose_cached(&rates, &p, threads),
        _ => (rates.predict(&p, threads), None),
    };
    let src = Some(rates.source.clone());
    let dec = |side: Side, reason: Reason| off::Decision { side, reason, pred: Some(pred), rates: src.clone() };
    // Co-execution needs A, B and C where the CPU can read them.
    let host = !on_device.contains(&true);
    // 7. (carried out) The forced side, share or split.
    match forced {
        Some(Force::Side(Side::Cpu, by)) => return HostPlan::Cpu(Some(dec(Side::Cpu, Reason::Forced(by)))),
        Some(Force::Side(side, by)) => return HostPlan::Gpu(rt, dec(side, Reason::Forced(by))),
        Some(Force::Share(s, by)) if host => {
            let d = |side| dec(side, Reason::Forced(by));
            return match off::split_cols(s, p.n) {
                0 => HostPlan::Cpu(Some(d(Side::Cpu))),
                c if c >= p.n => HostPlan::Gpu(rt, d(Side::Gpu)),
                _ => HostPlan::Split(rt, d(Side::Gpu), SplitPlan { pred: rates.split_at(&p, s, threads), fixed: true }),
            };
        }
        Some(Force::Split(by)) if host => {
            let sp = match rates.best_split(&p, threads) {
                Some(s) => s,
                None => return HostPlan::Gpu(rt, dec(Side::Gpu, Reason::Forced(by))),
            };
            return HostPlan::Split(rt, dec(Side::Gpu, Reason::Forced(by)), SplitPlan { pred: sp, fixed: false });
        }
        Some(Force::Share(_, by) | Force::Split(by)) => return HostPlan::Gpu(rt, dec(Side::Gpu, Reason::Forced(by))),
        None => {}
    }
    // 10. An operand in device memory: only the GPU can read it.
    if !host {
        return HostPlan::Gpu(rt, dec(Side::Gpu, Reason::DeviceOperand));
    }
    // 11. The offload model (seed 002): co-execution where it predicts a gain of
    // `HYBLAS_OFFLOAD_SPLIT_GAIN` over the better side alone (`off::choose_cached`), else the
    // side predicted faster.
    if let Some(sp) = split {
        return HostPlan::Split(rt, dec(Side::Gpu, Reason::Model), model_split(sp));
    }
    if pred.gpu_us < pred.cpu_us {
        HostPlan::Gpu(rt, dec(Side::Gpu, Reason::Model))
    } else {
        HostPlan::Cpu(Some(dec(Side::Cpu, Reason::Model)))
    }
}

/// The co-execution to run for the model's choice `sp`: a fixed fence for a short call
/// (`HYBLAS_OFFLOAD_DYNAMIC_MIN_US`), else the dynamic balance from its share.
pub(crate) fn model_split(sp: off::SplitPrediction) -> SplitPlan {
    SplitPlan { pred: sp, fixed: sp.us < *off::DYNAMIC_MIN_US }
}

#[cfg(test)]
mod strassen_setting_tests {
    use super::*;

    #[test]
    fn strassen_settings_parse_and_nest() {
        assert_eq!(Strassen::parse("OFF"), Some(Strassen::Off));
        assert_eq!(Strassen::parse("auto"), Some(Strassen::Auto));
        assert_eq!(Strassen::parse(" 2 "), Some(Strassen::Levels(2)));
        assert_eq!(Strassen::parse("0"), Some(Strassen::Off));
        assert_eq!(Strassen::parse("5"), None);
        assert_eq!(Strassen::parse("fast"), None);
        for c in -1..=4 {
            assert_eq!(Strassen::from_code(c).map(Strassen::code), Some(c));
        }
        assert_eq!(Strassen::from_code(-3), None);
        let outer = strassen_mode();
        with_strassen(Strassen::Levels(1), || {
            assert_eq!(strassen_mode(), Strassen::Levels(1));
            let before = set_thread_strassen(Some(Strassen::Auto));
            assert_eq!(before, Some(Strassen::Levels(1)));
            assert_eq!(strassen_mode(), Strassen::Auto);
        });
        assert_eq!(strassen_mode(), outer);
    }
}
