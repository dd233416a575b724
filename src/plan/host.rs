//! Host Level-3 calls around the offload model (`plan::offload`): the settings that force where
//! a call runs (`HYBLAS_DEVICE`, `HYBLAS_OFFLOAD_SHARE`, and per thread [`force`], [`with_side`],
//! [`with_share`], [`with_split`]), what the planner decided and why ([`Decision`], the trace
//! line), how this thread's last call ended ([`Outcome`]), and the timing of calls the CPU
//! engine ran ([`CpuWatch`]), which the model learns from ([`observe`]). `plan::offload`
//! re-exports them: callers name them `plan::offload::with_side` and so on.

use super::offload::{Learned, Prediction, Problem, Side, SplitPrediction};
use crate::config::{self, DeviceChoice};
use crate::gpu::{self, Runtime};
use once_cell::sync::Lazy;
use std::cell::Cell;
use std::fmt;

thread_local! {
    static FORCED: Cell<Option<Side>> = const { Cell::new(None) };
    static SHARE: Cell<Option<f64>> = const { Cell::new(None) };
    static SPLIT: Cell<bool> = const { Cell::new(false) };
    static LAST: std::cell::RefCell<Option<Outcome>> = const { std::cell::RefCell::new(None) };
}

/// Force this thread's host Level-3 calls to `side` (None: back to `HYBLAS_DEVICE` / the
/// model). Returns the previous setting. Wins over `HYBLAS_DEVICE`, which is read once.
pub fn force(side: Option<Side>) -> Option<Side> {
    FORCED.with(|c| c.replace(side))
}

/// Run `f` with this thread forced to `side`, restoring the previous setting after.
pub fn with_side<R>(side: Option<Side>, f: impl FnOnce() -> R) -> R {
    config::with_local(&FORCED, side, f)
}

/// Force this thread's host GEMMs to a fixed GPU share of C's columns (0..=1; 0: the CPU
/// engine alone, 1: the GPU alone; None: back to the environment / the model). Returns the
/// previous setting. Wins over `HYBLAS_OFFLOAD_SHARE` and `HYBLAS_DEVICE`; a side forced by
/// [`force`] wins over it.
pub fn force_share(share: Option<f64>) -> Option<f64> {
    SHARE.with(|c| c.replace(share_setting(share)))
}

/// A forced share as kept: clamped to 0..=1 (not finite: 0).
fn share_setting(share: Option<f64>) -> Option<f64> {
    share.map(|s| if s.is_finite() { s.clamp(0.0, 1.0) } else { 0.0 })
}

/// Run `f` with this thread's host GEMMs at a fixed GPU share (see [`force_share`]).
pub fn with_share<R>(share: Option<f64>, f: impl FnOnce() -> R) -> R {
    config::with_local(&SHARE, share_setting(share), f)
}

/// Run `f` with this thread's host GEMMs co-executed whatever the model predicts, from the
/// model's share with dynamic balancing (as `HYBLAS_DEVICE=split`).
pub fn with_split<R>(f: impl FnOnce() -> R) -> R {
    config::with_local(&SPLIT, true, f)
}

/// The side forced for this call, and by what (the other Level-3 routines' decisions).
#[inline]
pub(crate) fn forced() -> Option<(Side, &'static str)> {
    if let Some(s) = FORCED.with(|c| c.get()) {
        return Some((s, "forced"));
    }
    match config::get().device {
        DeviceChoice::Cpu => Some((Side::Cpu, "HYBLAS_DEVICE=cpu")),
        DeviceChoice::Gpu => Some((Side::Gpu, "HYBLAS_DEVICE=gpu")),
        DeviceChoice::Auto => None,
    }
}

/// `HYBLAS_OFFLOAD_SHARE=x`: a fixed GPU share for every host GEMM past the flop threshold.
static ENV_SHARE: Lazy<Option<f64>> =
    Lazy::new(|| config::float("HYBLAS_OFFLOAD_SHARE").filter(|s| s.is_finite()).map(|s| s.clamp(0.0, 1.0)));

/// `HYBLAS_DEVICE=split` (the configuration reads it as auto).
static ENV_SPLIT: Lazy<bool> =
    Lazy::new(|| config::value("HYBLAS_DEVICE").is_some_and(|v| v.trim().eq_ignore_ascii_case("split")));

/// What forces a GEMM's placement.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Force {
    Side(Side, &'static str),
    /// A fixed GPU share.
    Share(f64, &'static str),
    /// Co-execution from the model's share.
    Split(&'static str),
}

/// The thread's settings, then the environment's.
#[inline]
pub(crate) fn forced_gemm() -> Option<Force> {
    if let Some(s) = FORCED.with(|c| c.get()) {
        return Some(Force::Side(s, "forced"));
    }
    if let Some(s) = SHARE.with(|c| c.get()) {
        return Some(Force::Share(s, "forced share"));
    }
    if SPLIT.with(|c| c.get()) {
        return Some(Force::Split("forced split"));
    }
    let device = config::get().device;
    if device == DeviceChoice::Cpu {
        return Some(Force::Side(Side::Cpu, "HYBLAS_DEVICE=cpu"));
    }
    if let Some(s) = *ENV_SHARE {
        return Some(Force::Share(s, "HYBLAS_OFFLOAD_SHARE"));
    }
    if device == DeviceChoice::Gpu {
        return Some(Force::Side(Side::Gpu, "HYBLAS_DEVICE=gpu"));
    }
    if *ENV_SPLIT {
        return Some(Force::Split("HYBLAS_DEVICE=split"));
    }
    None
}

/// Set after a driver error on the offload path (a broken context stays broken): later calls
/// stay on the CPU without trying the GPU again.
static DISABLED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether [`disable`] was called.
pub(crate) fn disabled() -> bool {
    DISABLED.load(std::sync::atomic::Ordering::Relaxed)
}

/// Stop offloading in this process (the ABI layer, after a driver error that is not a lack of
/// memory).
pub fn disable() {
    DISABLED.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Whether an error like `e` should stop offloading: driver errors other than out-of-memory
/// (OOM, a missing cuBLAS, a refused size and injected test failures are per call).
pub fn disables(e: &gpu::GpuError) -> bool {
    use gpu::driver::sys::CUresult;
    matches!(e, gpu::GpuError::Driver { code, .. } if *code != CUresult::CUDA_ERROR_OUT_OF_MEMORY)
}

/// How the last planned host Level-3 call of this thread ended (tests check that a forced
/// call really ran on the GPU).
#[derive(Clone, Debug)]
pub struct Outcome {
    pub routine: String,
    /// Where the planner sent it (Gpu for a split).
    pub planned: Side,
    /// Where it ran (Cpu after a GPU failure; Gpu when the GPU computed any of C).
    pub ran: Side,
    /// The GPU's error, when it fell back.
    pub fallback: Option<String>,
    /// What the call did: for GEMM always set past the flop threshold, with the mode (cpu,
    /// gpu, split), the measured wall time (`secs`), the predicted time (`pred_us`) and the
    /// GPU's share of C.
    pub stats: Option<crate::hybrid::offload::OffloadStats>,
}

/// This thread's last [`Outcome`] (None until a call got past the flop threshold or was forced).
pub fn last() -> Option<Outcome> {
    LAST.with(|c| c.borrow().clone())
}

/// Record an outcome (the ABI layer, after the call).
pub fn set_last(o: Outcome) {
    LAST.with(|c| *c.borrow_mut() = Some(o));
}

/// Forget this thread's last outcome.
pub fn clear_last() {
    LAST.with(|c| *c.borrow_mut() = None);
}

/// A co-execution to run: the prediction it follows, and whether its share is a fixed fence
/// (forced) or the start of the dynamic balance.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SplitPlan {
    pub pred: SplitPrediction,
    pub fixed: bool,
}

impl SplitPlan {
    /// What the co-execution executor runs.
    pub fn split(&self) -> crate::hybrid::offload::Split {
        let p = &self.pred;
        crate::hybrid::offload::Split {
            share: p.share,
            fixed: self.fixed,
            cpu_threads: p.cpu_threads,
            feeders: p.feeders,
            gpu_cols_per_s: p.gpu_cols_per_s,
            cpu_cols_per_s: p.cpu_cols_per_s,
        }
    }
}

/// Why a call went where it went.
#[derive(Clone, Debug, PartialEq)]
pub enum Reason {
    /// [`force`], [`with_share`], [`with_split`] or the environment.
    Forced(&'static str),
    /// The model's prediction.
    Model,
    /// A or B is device memory: only the GPU can read it.
    DeviceOperand,
    /// The GPU was wanted but there is none (the error).
    NoGpu(String),
}

/// A decision for the trace: the side, why, and the prediction when the model ran.
#[derive(Clone, Debug)]
pub struct Decision {
    pub side: Side,
    pub reason: Reason,
    pub pred: Option<Prediction>,
    /// Where the rates came from.
    pub rates: Option<String>,
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&describe(self, None))
    }
}

/// A decision for the trace line, with the split when the call is co-executed.
pub fn describe(d: &Decision, split: Option<&SplitPlan>) -> String {
    use std::fmt::Write as _;
    let mut s = format!("side={}", if split.is_some() { "split" } else { d.side.name() });
    let _ = match &d.reason {
        Reason::Forced(by) => write!(s, " ({by})"),
        Reason::Model => write!(s, " (model)"),
        Reason::DeviceOperand => write!(s, " (A or B in device memory)"),
        Reason::NoGpu(e) => write!(s, " (GPU wanted, none usable: {e})"),
    };
    if let Some(p) = &d.pred {
        let _ = write!(
            s,
            " predicted cpu={:.1}us ({} threads) gpu={:.1}us ({}-bound)",
            p.cpu_us, p.threads, p.gpu_us, p.bound
        );
        if p.drift != [1.0, 1.0] {
            let _ = write!(s, " drift cpu=x{:.3} gpu=x{:.3}", p.drift[0], p.drift[1]);
        }
    }
    if let Some(sp) = split {
        let x = &sp.pred;
        let _ = write!(
            s,
            " split={:.1}us at gpu share {:.3}{} (gpu side {:.1}us, cpu side {:.1}us on {} threads, {} feeder{})",
            x.us,
            x.share,
            if sp.fixed { " fixed" } else { " dynamic" },
            x.gpu_us,
            x.cpu_us,
            x.cpu_threads,
            x.feeders,
            if x.feeders == 1 { "" } else { "s" }
        );
    }
    if let Some(r) = &d.rates {
        let _ = write!(s, " rates={r}");
    }
    s
}

/// `HYBLAS_OFFLOAD_DYNAMIC_MIN_US` (default 5000): a co-execution the model chose and prices
/// shorter than this runs its share as a fixed fence, as `tune` timed it; longer ones balance
/// dynamically from it. In a short call the dynamic queue's units are coarse (a GPU claim is a
/// tile column, 512 columns at n <= 2048; each CPU unit packs all of A again) and a wrong
/// share has little time to show: on the H200 host auto's dynamic split ran SGEMM n = 1024 in
/// 1.86 ms and ZGEMM n = 512 in 1.51 ms, where the fence at the same share took 1.49 and 1.26
/// ms, and the planner, learning that, fell back to the GPU alone (1.68 and 1.46 ms). A wrong
/// share is still corrected within the call where it balances, and a GPU that fails still
/// leaves its part to the CPU.
pub static DYNAMIC_MIN_US: Lazy<f64> = Lazy::new(|| {
    config::float("HYBLAS_OFFLOAD_DYNAMIC_MIN_US").filter(|x| x.is_finite() && *x >= 0.0).unwrap_or(5000.0)
});

/// Whether a call forced onto the CPU is still priced and timed, to learn from: past the flop
/// threshold, and only in a process whose GPU runtime exists already (a forced CPU never
/// starts the driver).
pub(crate) fn times_forced_cpu(p: &Problem) -> bool {
    super::offload::learning() && p.flops() >= *super::gemm::MIN_FLOPS && !disabled() && Runtime::started()
}

/// Learn from a call that ran on `side` as decided in `d` and took `secs`: its time over the
/// calibrated model's prediction (`d`'s, without the factor it included). Calls the model did
/// not price as they ran are skipped: operands in device memory, no prediction.
pub fn observe(p: &Problem, side: Side, d: &Decision, secs: f64) {
    if !super::offload::learning() || d.reason == Reason::DeviceOperand {
        return;
    }
    let Some(pr) = &d.pred else { return };
    let (us, drift) = match side {
        Side::Cpu => (pr.cpu_us, pr.drift[0]),
        Side::Gpu => (pr.gpu_us, pr.drift[1]),
    };
    if us > 0.0 && drift > 0.0 {
        Learned::global().observe(p, side, secs * 1e6 / (us / drift));
    }
}

/// A host Level-3 call the planner priced and sent to the CPU engine, timed while it lives
/// (the caller runs the engine, then drops it): on drop, the trace line with the measured
/// time, and [`observe`]. A panic unwinding through it records nothing.
pub struct CpuWatch {
    p: Problem,
    d: Decision,
    /// The call's name and shape, when tracing.
    what: Option<String>,
    start: std::time::Instant,
    warm: crate::trace::Warm,
}

impl CpuWatch {
    pub fn start(p: Problem, d: Decision, what: impl FnOnce() -> String) -> CpuWatch {
        let what = crate::trace::enabled().then(what);
        CpuWatch { p, d, what, start: std::time::Instant::now(), warm: crate::trace::Warm::start() }
    }
}

impl Drop for CpuWatch {
    fn drop(&mut self) {
        if std::thread::panicking() {
            return;
        }
        let secs = self.start.elapsed().as_secs_f64();
        if let Some(w) = &self.what {
            crate::trace::note(&format!("{w} offload: {} measured={:.1}us", self.d, secs * 1e6));
        }
        if self.warm.stayed() {
            observe(&self.p, Side::Cpu, &self.d, secs);
        }
    }
}
