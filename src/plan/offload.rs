//! Host Level-3 offload planning (seed 002): for a `?gemm_` / `cblas_?gemm` call on host
//! memory, is the CPU engine or the GPU (`gpu::offload`: tiles pipelined through pinned
//! staging, the real cuBLAS per tile) predicted faster?
//!
//! The model, in seconds, for C (m x n) := alpha*op(A) (m x k)*op(B) (k x n) + beta*C:
//! - CPU: flops / (CPU rate per thread of the precision x threads in use).
//! - GPU: a three-stage pipeline (host->device, compute, device->host) over tiles of C:
//!   `latency + max(in/h2d + tile + last_out/d2h, first_in/h2d + compute + last_out/d2h,
//!   first_in/h2d + tile + out/d2h)`, where `in` counts A and B (when read and on the host) and
//!   C when beta != 0, `first_in` the first tile's panels, `compute` = flops / GPU rate + a
//!   per-tile overhead, `tile` one tile's compute. Whichever stage is the longest bounds the
//!   call; the others add only their start-up and drain.
//!
//! Rates come from `hyblas tune` ([`calibrate`]: pageable<->device through the pipeline's own
//! staging, per-call latency, cuBLAS ?GEMM at n = 4096, the CPU engine at n = 1536), stored as
//! `offload <key> <value>` lines in the device's recipe file, else from built-in conservative
//! defaults (Hopper-class figures on sm_90, an SM-count guess elsewhere; see [`Rates::builtin`]).
//!
//! The decision ([`decide_gemm`]) costs a few nanoseconds when it says CPU for a small call: a
//! thread-local read, the flop count against `HYBLAS_OFFLOAD_MIN_FLOPS` (default 2*256^3), no
//! driver call and no runtime creation. Above it, the runtime (created once, then a cached
//! pointer) and the model's arithmetic.
//!
//! `HYBLAS_DEVICE=cpu|gpu|auto` (default auto) forces the side for the whole process;
//! [`force`] / [`with_side`] force it for the calling thread (tests, benchmarks), and win over
//! the environment. With `HYBLAS_TRACE` on, every call past the flop threshold writes one line
//! with the decision, both predicted times, and the measured time.
//!
//! Phase 2 (co-execution) adds a split: the GPU takes a share of C's columns and the CPU the
//! rest; [`Rates::gpu_secs`] already prices any column share and [`Rates::cpu_secs`] any
//! thread count, so the split's predicted time is the larger of the two at each share.

use crate::config::{self, DeviceChoice};
use crate::gpu::{self, runtime::DeviceProps, Runtime};
use crate::types::Scalar;
use once_cell::sync::Lazy;
use parking_lot::RwLock;
use std::cell::Cell;
use std::collections::HashMap;
use std::ffi::c_void;
use std::fmt;
use std::sync::Arc;

/// Where a call runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Cpu,
    Gpu,
}

impl Side {
    pub fn name(self) -> &'static str {
        match self {
            Side::Cpu => "cpu",
            Side::Gpu => "gpu",
        }
    }
}

thread_local! {
    static FORCED: Cell<Option<Side>> = const { Cell::new(None) };
    static LAST: std::cell::RefCell<Option<Outcome>> = const { std::cell::RefCell::new(None) };
}

/// Force this thread's host Level-3 calls to `side` (None: back to `HYBLAS_DEVICE` / the
/// model). Returns the previous setting. Wins over `HYBLAS_DEVICE`, which is read once.
pub fn force(side: Option<Side>) -> Option<Side> {
    FORCED.with(|c| c.replace(side))
}

/// Run `f` with this thread forced to `side`, restoring the previous setting after.
pub fn with_side<R>(side: Option<Side>, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<Side>);
    impl Drop for Restore {
        fn drop(&mut self) {
            FORCED.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(force(side));
    f()
}

/// The side forced for this call, and by what.
#[inline]
fn forced() -> Option<(Side, &'static str)> {
    if let Some(s) = FORCED.with(|c| c.get()) {
        return Some((s, "forced"));
    }
    match config::get().device {
        DeviceChoice::Cpu => Some((Side::Cpu, "HYBLAS_DEVICE=cpu")),
        DeviceChoice::Gpu => Some((Side::Gpu, "HYBLAS_DEVICE=gpu")),
        DeviceChoice::Auto => None,
    }
}

/// Set after a driver error on the offload path (a broken context stays broken): later calls
/// stay on the CPU without trying the GPU again.
static DISABLED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

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
    /// Where the planner sent it.
    pub planned: Side,
    /// Where it ran (Cpu after a GPU failure).
    pub ran: Side,
    /// The GPU's error, when it fell back.
    pub fallback: Option<String>,
    pub stats: Option<gpu::offload::OffloadStats>,
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

// ---- Rates ----

/// The model's inputs on one machine. Flop rates count real flops (a complex multiply-add is 8).
#[derive(Clone, Debug, PartialEq)]
pub struct Rates {
    /// Pageable host memory to the device and back through the staging pipeline, bytes/s.
    pub h2d: f64,
    pub d2h: f64,
    /// Fixed cost of one offloaded call (pipeline set-up, thread hand-off, final waits), s.
    pub latency: f64,
    /// Overhead of one tile's GEMM launch on top of its flops, s.
    pub tile: f64,
    /// cuBLAS ?GEMM rates, flop/s, indexed s, d, c, z.
    pub gpu: [f64; 4],
    /// CPU engine rates per thread, flop/s, indexed s, d, c, z.
    pub cpu_per_thread: [f64; 4],
    /// Where the figures came from ("built-in sm90", "tuned <file>").
    pub source: String,
}

pub(crate) fn prec_index(p: char) -> usize {
    match p {
        's' => 0,
        'd' => 1,
        'c' => 2,
        _ => 3,
    }
}

const PRECS: [char; 4] = ['s', 'd', 'c', 'z'];

impl Rates {
    /// Conservative defaults before `hyblas tune` has run. Hopper (sm_90) hosts: 40 GB/s each
    /// way through staging (PCIe 5 x16 moves ~55 GB/s pinned; the host copy costs some), cuBLAS
    /// 50 TFLOP/s in every precision (H200 DGEMM reaches 61.6 at n = 4096, anchors.md).
    /// Elsewhere: PCIe 4 (20 GB/s), and per-SM rates of an A100 for sm_80, a tenth of them for
    /// double on other GPUs (consumer parts run FP64 at 1/64). CPU: 32 GFLOP/s per thread in
    /// double with AVX-512, 16 without; single precision twice that.
    pub fn builtin(p: &DeviceProps) -> Rates {
        let sms = p.sm_count as f64;
        let (bus, f64_sm, f32_sm, label) = match p.cc {
            (9, _) | (10, _) => (40e9, 0.38e12, 0.38e12, format!("built-in sm{}{}", p.cc.0, p.cc.1)),
            (8, 0) => (20e9, 0.17e12, 0.17e12, "built-in sm80 guess".to_string()),
            _ => (20e9, 0.01e12, 0.15e12, format!("built-in guess for sm{}{}", p.cc.0, p.cc.1)),
        };
        Rates {
            h2d: bus,
            d2h: bus,
            latency: 60e-6,
            tile: 10e-6,
            gpu: [f32_sm * sms, f64_sm * sms, f32_sm * sms, f64_sm * sms],
            cpu_per_thread: cpu_builtin(),
            source: label,
        }
    }

    /// `offload <key> <value>` lines of a recipe file over these figures (`label` names them in
    /// the trace). Other lines, and values that are not positive numbers, are skipped.
    pub fn with_lines(mut self, text: &str, label: &str) -> Rates {
        let mut cpu_total: [Option<f64>; 4] = [None; 4];
        let mut cpu_threads = None;
        let mut any = false;
        for line in text.lines() {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() != 3 || f[0] != "offload" {
                continue;
            }
            let Ok(v) = f[2].parse::<f64>() else { continue };
            if !(v.is_finite() && v > 0.0) {
                continue;
            }
            let prec = |prefix: &str| {
                f[1].strip_prefix(prefix).and_then(|p| p.chars().next()).filter(|c| PRECS.contains(c)).map(prec_index)
            };
            match f[1] {
                "h2d_gbs" => self.h2d = v * 1e9,
                "d2h_gbs" => self.d2h = v * 1e9,
                "latency_us" => self.latency = v * 1e-6,
                "tile_us" => self.tile = v * 1e-6,
                "cpu_threads" => cpu_threads = Some(v),
                _ => match (prec("gpu_gflops_"), prec("cpu_gflops_")) {
                    (Some(i), _) => self.gpu[i] = v * 1e9,
                    (_, Some(i)) => cpu_total[i] = Some(v * 1e9),
                    _ => continue,
                },
            }
            any = true;
        }
        let threads = cpu_threads.unwrap_or(1.0).max(1.0);
        for (i, t) in cpu_total.iter().enumerate() {
            if let Some(t) = t {
                self.cpu_per_thread[i] = t / threads;
            }
        }
        if any {
            self.source = label.to_string();
        }
        self
    }

    /// The rates for `rt`'s device: its recipe file's `offload` lines over the built-in ones
    /// (read once per device; [`reload`] forgets them).
    pub fn for_device(rt: &Runtime) -> Arc<Rates> {
        let key = rt.props.ordinal;
        if let Some(r) = RATES.read().get(&key) {
            return r.clone();
        }
        let path = gpu::tune::recipe_path(&rt.props);
        let base = Rates::builtin(&rt.props);
        let r = match std::fs::read_to_string(&path) {
            Ok(text) => base.with_lines(&text, &format!("tuned {}", path.display())),
            Err(_) => base,
        };
        let r = Arc::new(r);
        RATES.write().insert(key, r.clone());
        r
    }

    /// Predicted CPU engine seconds for `p` on `threads` threads.
    pub fn cpu_secs(&self, p: &Problem, threads: usize) -> f64 {
        p.flops() / (self.cpu_per_thread[prec_index(p.prec)] * threads.max(1) as f64)
    }

    /// Predicted seconds of the GPU pipeline for the first `share` (0..=1) of C's columns, and
    /// which stage bounds it.
    pub fn gpu_secs(&self, p: &Problem, share: f64) -> (f64, &'static str) {
        let n = ((p.n as f64 * share).ceil() as usize).min(p.n);
        if n == 0 || p.m == 0 {
            return (0.0, "empty");
        }
        let q = Problem { n, ..*p };
        let (mt, nt) = gpu::offload::tile_for(q.m, q.n, q.k);
        let tiles = (q.m.div_ceil(mt) * q.n.div_ceil(nt)) as f64;
        let e = q.elem as f64;
        let reads = q.k > 0;
        let (ha, hb, hc) = (q.host[0] && reads, q.host[1] && reads, q.host[2]);
        let cin = hc && q.c_in;
        let (m, n, k, mt, nt) = (q.m as f64, q.n as f64, q.k as f64, mt as f64, nt as f64);
        let bytes = |a: f64, b: f64, c: f64, cout: bool| {
            let mut s = 0.0;
            if ha {
                s += a;
            }
            if hb {
                s += b;
            }
            if cout {
                s += c;
            }
            s * e
        };
        let input = bytes(m * k, k * n, m * n, cin);
        let first_in = bytes(mt * k, k * nt, mt * nt, cin);
        let out = if hc { m * n * e } else { 0.0 };
        let last_out = if hc { mt * nt * e } else { 0.0 };
        let rate = self.gpu[prec_index(q.prec)];
        let compute = q.flops() / rate + tiles * self.tile;
        let one = q.flops() / tiles / rate + self.tile;
        let (h2d, d2h) = (input / self.h2d, out / self.d2h);
        let (fin, lout) = (first_in / self.h2d, last_out / self.d2h);
        let stages = [(h2d + one + lout, "h2d"), (fin + compute + lout, "compute"), (fin + one + d2h, "d2h")];
        let (t, what) = stages.iter().fold((0.0, ""), |acc, &(t, w)| if t > acc.0 { (t, w) } else { acc });
        (self.latency + t, what)
    }

    /// Both predictions for `p` with `threads` CPU threads.
    pub fn predict(&self, p: &Problem, threads: usize) -> Prediction {
        let (gpu, bound) = self.gpu_secs(p, 1.0);
        Prediction { cpu_us: self.cpu_secs(p, threads) * 1e6, gpu_us: gpu * 1e6, bound, threads }
    }
}

/// Per-thread CPU rates by instruction set (see [`Rates::builtin`]).
fn cpu_builtin() -> [f64; 4] {
    #[cfg(target_arch = "x86_64")]
    let d = if std::arch::is_x86_feature_detected!("avx512f") { 32e9 } else { 16e9 };
    #[cfg(not(target_arch = "x86_64"))]
    let d = 16e9;
    [2.0 * d, d, 2.0 * d, d]
}

static RATES: Lazy<RwLock<HashMap<i32, Arc<Rates>>>> = Lazy::new(|| RwLock::new(HashMap::new()));

/// Forget loaded rates (after `hyblas tune` wrote new ones).
pub fn reload() {
    RATES.write().clear();
}

// ---- The problem and the decision ----

/// One GEMM as the model sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Problem {
    pub prec: char,
    pub elem: usize,
    pub complex: bool,
    pub m: usize,
    pub n: usize,
    /// 0 when A and B are not read (alpha == 0).
    pub k: usize,
    /// A, B, C in host memory (to be copied).
    pub host: [bool; 3],
    /// C read (beta != 0).
    pub c_in: bool,
}

impl Problem {
    pub fn gemm<T: Scalar>(m: usize, n: usize, k: usize, alpha_zero: bool, beta_zero: bool) -> Problem {
        Problem {
            prec: T::PREFIX,
            elem: std::mem::size_of::<T>(),
            complex: T::IS_COMPLEX,
            m,
            n,
            k: if alpha_zero { 0 } else { k },
            host: [true; 3],
            c_in: !beta_zero,
        }
    }
    /// Real flops (8 per complex multiply-add).
    pub fn flops(&self) -> f64 {
        let f = 2.0 * self.m as f64 * self.n as f64 * self.k as f64;
        if self.complex {
            4.0 * f
        } else {
            f
        }
    }
}

/// The two predicted times (microseconds) behind a decision.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Prediction {
    pub cpu_us: f64,
    pub gpu_us: f64,
    /// The GPU pipeline's longest stage: "h2d", "compute" or "d2h".
    pub bound: &'static str,
    pub threads: usize,
}

/// Why a call went where it went.
#[derive(Clone, Debug, PartialEq)]
pub enum Reason {
    /// [`force`] or `HYBLAS_DEVICE`.
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
        write!(f, "side={}", self.side.name())?;
        match &self.reason {
            Reason::Forced(by) => write!(f, " ({by})")?,
            Reason::Model => write!(f, " (model)")?,
            Reason::DeviceOperand => write!(f, " (A or B in device memory)")?,
            Reason::NoGpu(e) => write!(f, " (GPU wanted, none usable: {e})")?,
        }
        if let Some(p) = &self.pred {
            write!(
                f,
                " predicted cpu={:.1}us ({} threads) gpu={:.1}us ({}-bound)",
                p.cpu_us, p.threads, p.gpu_us, p.bound
            )?;
        }
        if let Some(r) = &self.rates {
            write!(f, " rates={r}")?;
        }
        Ok(())
    }
}

/// The planner's answer.
pub enum Plan {
    /// The CPU engine. None: decided on the fast path (small or forced), nothing to trace.
    Cpu(Option<Decision>),
    /// The GPU of `rt` through `gpu::offload`.
    Gpu(&'static Runtime, Decision),
}

/// `HYBLAS_OFFLOAD_MIN_FLOPS`: below it, the CPU without asking the model (default 2*256^3:
/// ~20 us on a 16-core CPU, less than one offloaded call's fixed cost).
pub const MIN_FLOPS_KEY: &str = "HYBLAS_OFFLOAD_MIN_FLOPS";
pub const MIN_FLOPS_DEFAULT: f64 = 2.0 * 256.0 * 256.0 * 256.0;
static MIN_FLOPS: Lazy<f64> =
    Lazy::new(|| config::value(MIN_FLOPS_KEY).and_then(|v| v.trim().parse::<f64>().ok()).unwrap_or(MIN_FLOPS_DEFAULT));

/// Where a host-memory GEMM runs. `a`, `b`, `c` are the caller's pointers (C on the host: the
/// device-C case was taken by `plan::on_gpu` before). Costs a thread-local read and a
/// multiply when the answer is the CPU for a small call; never touches the driver then.
#[inline]
pub fn decide_gemm<T: Scalar>(
    m: usize,
    n: usize,
    k: usize,
    alpha_zero: bool,
    beta_zero: bool,
    a: *const c_void,
    b: *const c_void,
) -> Plan {
    let forced = forced();
    if let Some((Side::Cpu, _)) = forced {
        return Plan::Cpu(None);
    }
    let p = Problem::gemm::<T>(m, n, k, alpha_zero, beta_zero);
    if forced.is_none() && p.flops() < *MIN_FLOPS {
        return Plan::Cpu(None);
    }
    decide_slow(p, forced, a, b)
}

#[cold]
fn decide_slow(mut p: Problem, forced: Option<(Side, &'static str)>, a: *const c_void, b: *const c_void) -> Plan {
    if DISABLED.load(std::sync::atomic::Ordering::Relaxed) {
        let why = Reason::NoGpu("offload disabled after a device error".into());
        return Plan::Cpu(forced.map(|_| Decision { side: Side::Cpu, reason: why, pred: None, rates: None }));
    }
    let rt = match Runtime::current() {
        Ok(rt) => rt,
        Err(e) => {
            // Auto without a GPU is the ordinary CPU case; only a forced GPU is worth a line.
            let d = forced.map(|_| Decision {
                side: Side::Cpu,
                reason: Reason::NoGpu(e.to_string()),
                pred: None,
                rates: None,
            });
            return Plan::Cpu(d);
        }
    };
    if p.k > 0 {
        p.host = [!gpu::runtime::is_device_pointer(a), !gpu::runtime::is_device_pointer(b), true];
    }
    let rates = Rates::for_device(rt);
    let pred = rates.predict(&p, crate::cpu::threads::nthreads());
    let src = Some(rates.source.clone());
    if let Some((side, by)) = forced {
        return Plan::Gpu(rt, Decision { side, reason: Reason::Forced(by), pred: Some(pred), rates: src });
    }
    if !p.host[0] || !p.host[1] {
        return Plan::Gpu(
            rt,
            Decision { side: Side::Gpu, reason: Reason::DeviceOperand, pred: Some(pred), rates: src },
        );
    }
    let side = if pred.gpu_us < pred.cpu_us { Side::Gpu } else { Side::Cpu };
    let d = Decision { side, reason: Reason::Model, pred: Some(pred), rates: src };
    match side {
        Side::Gpu => Plan::Gpu(rt, d),
        Side::Cpu => Plan::Cpu(Some(d)),
    }
}

// ---- Calibration (`hyblas tune`) ----

/// Measure the model's rates on this machine and return them as `offload <key> <value>` lines
/// for the recipe file (the recipe parser skips them), followed by comment lines comparing the
/// model with measured end-to-end calls (DGEMM n = 2048 and 4096 on host memory, CPU and GPU).
///
/// Takes a few seconds: staging transfers of 256 MiB each way, cuBLAS ?GEMM at n = 4096 (and
/// DGEMM at 256 for the per-tile overhead), a tiny offloaded call for the latency, the CPU
/// engine's ?GEMM at n = 1536.
pub fn calibrate(rt: &'static Runtime) -> gpu::Result<Vec<String>> {
    use crate::gpu::{timing::Timer, DMat, DeviceBuffer, Exec};
    use crate::types::{Trans, C32, C64};
    rt.bind()?;
    let mut lines = Vec::new();

    // Transfers through the pipeline (pageable memory, as callers pass it) and the bus alone.
    let t = gpu::offload::measure_transfers(rt, 256 << 20)?;
    lines.push(format!("offload h2d_gbs {:.2}", t.h2d / 1e9));
    lines.push(format!("offload d2h_gbs {:.2}", t.d2h / 1e9));
    lines.push(format!(
        "# offload pinned h2d {:.2} GB/s, d2h {:.2} GB/s (the bus alone)",
        t.h2d_pinned / 1e9,
        t.d2h_pinned / 1e9
    ));

    // cuBLAS rates at n = 4096 on device buffers, and DGEMM at 256 for the per-call overhead.
    let n = 4096usize;
    let bytes = n * n * 16;
    let bufs = [DeviceBuffer::new(bytes)?, DeviceBuffer::new(bytes)?, DeviceBuffer::new(bytes)?];
    for buf in &bufs {
        // 2^-7 in every 32-bit word: finite in every precision.
        gpu::driver::check(
            unsafe { gpu::driver::sys::cuMemsetD32_v2(buf.ptr, 0x3c00_0000, buf.bytes / 4) },
            "cuMemsetD32",
        )?;
    }
    let ex = Exec::own(rt);
    let timer = Timer::new(ex.stream)?;
    fn vendor<T: Scalar>(ex: &Exec, t: &Timer, bufs: &[DeviceBuffer; 3], n: usize) -> gpu::Result<f64> {
        let mat = |b: &DeviceBuffer| DMat { ptr: b.ptr, ld: n as i64 };
        let (one, half) = (T::one(), T::from_f64(0.5));
        let n = n as i64;
        t.median(1, 5, &mut || {
            crate::abi::cublas::vendor_gemm::<T>(
                ex,
                Trans::No,
                Trans::No,
                n,
                n,
                n,
                one,
                mat(&bufs[0]),
                mat(&bufs[1]),
                half,
                mat(&bufs[2]),
            )
        })
    }
    let flops = |n: usize, complex: bool| 2.0 * (n as f64).powi(3) * if complex { 4.0 } else { 1.0 };
    let gpu_t = [
        vendor::<f32>(&ex, &timer, &bufs, n)?,
        vendor::<f64>(&ex, &timer, &bufs, n)?,
        vendor::<C32>(&ex, &timer, &bufs, n)?,
        vendor::<C64>(&ex, &timer, &bufs, n)?,
    ];
    let mut gpu_rates = [0.0; 4];
    for (i, p) in PRECS.iter().enumerate() {
        gpu_rates[i] = flops(n, i >= 2) / gpu_t[i];
        lines.push(format!("offload gpu_gflops_{p} {:.1}", gpu_rates[i] / 1e9));
    }
    let t256 = vendor::<f64>(&ex, &timer, &bufs, 256)?;
    let tile = (t256 - flops(256, false) / gpu_rates[1]).max(2e-6);
    lines.push(format!("offload tile_us {:.2}", tile * 1e6));
    drop(bufs);

    // The fixed cost of one offloaded call: a 64^3 DGEMM on host memory.
    let latency = {
        let s = 64usize;
        let (a, b, mut c) = (vec![0.5f64; s * s], vec![0.25f64; s * s], vec![1.0f64; s * s]);
        let mut v = Vec::new();
        for _ in 0..7 {
            let t0 = std::time::Instant::now();
            unsafe {
                gpu::offload::gemm::<f64>(
                    rt,
                    Trans::No,
                    Trans::No,
                    s,
                    s,
                    s,
                    1.0,
                    a.as_ptr(),
                    s,
                    b.as_ptr(),
                    s,
                    0.5,
                    c.as_mut_ptr(),
                    s,
                )
            }
            .map_err(|f| f.error)?;
            v.push(t0.elapsed().as_secs_f64());
        }
        v.sort_by(f64::total_cmp);
        v[3]
    };
    lines.push(format!("offload latency_us {:.1}", latency * 1e6));

    // The CPU engine at n = 1536 on the threads a call uses now.
    let threads = crate::cpu::threads::nthreads();
    fn cpu<T: Scalar>(n: usize) -> f64 {
        use crate::types::{MatMut, MatRef};
        let a: Vec<T> = (0..n * n).map(|i| T::from_f64(((i * 7919) % 1000) as f64 / 1000.0 - 0.5)).collect();
        let b = a.clone();
        let mut c = vec![T::zero(); n * n];
        let mut best = f64::INFINITY;
        for _ in 0..3 {
            let t0 = std::time::Instant::now();
            unsafe {
                crate::cpu::level3::gemm(
                    T::one(),
                    MatRef::col_major(a.as_ptr(), n, n, n),
                    false,
                    MatRef::col_major(b.as_ptr(), n, n, n),
                    false,
                    T::from_f64(0.5),
                    MatMut::col_major(c.as_mut_ptr(), n, n, n),
                )
            };
            best = best.min(t0.elapsed().as_secs_f64());
        }
        best
    }
    let cn = 1536;
    let cpu_t = [cpu::<f32>(cn), cpu::<f64>(cn), cpu::<C32>(cn), cpu::<C64>(cn)];
    lines.push(format!("offload cpu_threads {threads}"));
    for (i, p) in PRECS.iter().enumerate() {
        lines.push(format!("offload cpu_gflops_{p} {:.1}", flops(cn, i >= 2) / cpu_t[i] / 1e9));
    }

    // The model against measured end-to-end DGEMM (C = A*B + 0.5*C on host memory).
    let rates = Rates::builtin(&rt.props).with_lines(&lines.join("\n"), "tuned");
    for n in [2048usize, 4096] {
        let (a, b) = (vec![0.5f64; n * n], vec![0.25f64; n * n]);
        let mut c = vec![1.0f64; n * n];
        let mut g = Vec::new();
        for _ in 0..3 {
            let t0 = std::time::Instant::now();
            unsafe {
                gpu::offload::gemm::<f64>(
                    rt,
                    Trans::No,
                    Trans::No,
                    n,
                    n,
                    n,
                    1.0,
                    a.as_ptr(),
                    n,
                    b.as_ptr(),
                    n,
                    0.5,
                    c.as_mut_ptr(),
                    n,
                )
            }
            .map_err(|f| f.error)?;
            g.push(t0.elapsed().as_secs_f64());
        }
        g.sort_by(f64::total_cmp);
        let cpu_meas = cpu::<f64>(n);
        let p = rates.predict(&Problem::gemm::<f64>(n, n, n, false, false), threads);
        lines.push(format!(
            "# offload check dgemm n={n}: gpu predicted {:.2} ms ({}-bound), measured {:.2} ms; cpu predicted {:.2} ms, measured {:.2} ms",
            p.gpu_us / 1e3,
            p.bound,
            g[1] * 1e3,
            p.cpu_us / 1e3,
            cpu_meas * 1e3
        ));
    }
    // Where the model now sends square calls.
    for (i, &pc) in PRECS.iter().enumerate() {
        let x = (6..=15).map(|l| 1usize << l).flat_map(|s| [s, s + s / 2]).find(|&s| {
            let p = Problem {
                prec: pc,
                elem: [4, 8, 8, 16][i],
                complex: i >= 2,
                m: s,
                n: s,
                k: s,
                host: [true; 3],
                c_in: true,
            };
            let pr = rates.predict(&p, threads);
            pr.gpu_us < pr.cpu_us
        });
        lines.push(match x {
            Some(s) => format!("# offload crossover {pc}gemm (beta != 0): GPU from n = {s}"),
            None => format!("# offload crossover {pc}gemm: the CPU up to n = 49152"),
        });
    }
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h200() -> DeviceProps {
        DeviceProps {
            ordinal: 0,
            name: "NVIDIA H200".into(),
            cc: (9, 0),
            sm_count: 132,
            warp_size: 32,
            max_threads_per_block: 1024,
            max_threads_per_sm: 2048,
            max_blocks_per_sm: 32,
            regs_per_sm: 65536,
            regs_per_block: 65536,
            smem_per_sm: 233472,
            smem_per_block_optin: 232448,
            reserved_smem_per_block: 1024,
            l2_bytes: 50 << 20,
            total_mem: 141 << 30,
            driver_version: 13000,
        }
    }

    /// The H200 host of anchors.md: ~50 GB/s staged, DGEMM 60 TF, a 16-core CPU at ~1 TF.
    fn tuned() -> Rates {
        Rates::builtin(&h200()).with_lines(
            "saxpy 0.5 0.1 64 1.0\noffload h2d_gbs 50\noffload d2h_gbs 50\noffload latency_us 40\noffload tile_us 8\n\
             offload gpu_gflops_d 60000\noffload gpu_gflops_s 50000\noffload gpu_gflops_z 60000\noffload gpu_gflops_c 50000\n\
             offload cpu_threads 16\noffload cpu_gflops_d 1000\noffload cpu_gflops_s 2000\noffload cpu_gflops_z 1000\n\
             offload cpu_gflops_c 2000\noffload junk\noffload h2d_gbs -3\n",
            "tuned test",
        )
    }

    #[test]
    fn lines_override_the_builtin_figures() {
        let r = tuned();
        assert_eq!(r.h2d, 50e9);
        assert!((r.latency - 40e-6).abs() < 1e-12);
        assert_eq!(r.gpu[1], 60e12);
        assert!((r.cpu_per_thread[1] - 1e12 / 16.0).abs() < 1.0);
        assert_eq!(r.source, "tuned test");
        // No offload lines: the built-in figures and label stay.
        let b = Rates::builtin(&h200()).with_lines("saxpy 0.5 0.1 64 1.0\nsplitk bw 4e12\n", "tuned");
        assert_eq!(b, Rates::builtin(&h200()));
        assert!(b.source.starts_with("built-in"));
    }

    #[test]
    fn the_model_prices_the_pipeline() {
        let r = tuned();
        // n = 16384 double, beta != 0: 6 GiB in at 50 GB/s (~129 ms) against 147 ms of DGEMM: the
        // compute stage bounds it, plus the first tile's panels and the last tile's copy.
        let p = Problem::gemm::<f64>(16384, 16384, 16384, false, false);
        let (t, bound) = r.gpu_secs(&p, 1.0);
        assert_eq!(bound, "compute");
        let compute = p.flops() / 60e12;
        assert!(t > compute && t < compute * 1.15, "{t} vs {compute}");
        // beta == 0 moves less: never slower.
        let p0 = Problem::gemm::<f64>(16384, 16384, 16384, false, true);
        assert!(r.gpu_secs(&p0, 1.0).0 <= t);
        // n = 4096: transfer-bound, 3 x 128 MiB in at 50 GB/s.
        let p = Problem::gemm::<f64>(4096, 4096, 4096, false, false);
        let (t, bound) = r.gpu_secs(&p, 1.0);
        assert_eq!(bound, "h2d");
        let h2d = 3.0 * 4096.0 * 4096.0 * 8.0 / 50e9;
        assert!(t > h2d && t < h2d * 1.2, "{t} vs {h2d}");
        // A and B in device memory: only C moves, a third of the traffic.
        let pd = Problem { host: [false, false, true], ..p };
        assert!(r.gpu_secs(&pd, 1.0).0 < 0.5 * t);
        // Half the columns cost about half.
        let (half, _) = r.gpu_secs(&Problem::gemm::<f64>(8192, 8192, 8192, false, false), 0.5);
        let (full, _) = r.gpu_secs(&Problem::gemm::<f64>(8192, 8192, 8192, false, false), 1.0);
        // (A still crosses whole: more than half the time, less than all of it.)
        assert!(half < full && half > 0.5 * full, "{half} {full}");
        assert_eq!(r.gpu_secs(&p, 0.0).0, 0.0);
    }

    #[test]
    fn the_model_picks_the_cpu_for_small_and_the_gpu_for_large() {
        let r = tuned();
        for prec in ['s', 'd', 'c', 'z'] {
            let (elem, complex) = match prec {
                's' => (4, false),
                'd' => (8, false),
                'c' => (8, true),
                _ => (16, true),
            };
            let at = |s: usize| {
                let p = Problem { prec, elem, complex, m: s, n: s, k: s, host: [true; 3], c_in: true };
                r.predict(&p, 16)
            };
            let small = at(128);
            assert!(small.cpu_us < small.gpu_us, "{prec} 128: {small:?}");
            let big = at(8192);
            assert!(big.gpu_us < big.cpu_us, "{prec} 8192: {big:?}");
            // One crossover: once the GPU wins it keeps winning.
            let mut gpu = false;
            for s in (64..=16384).step_by(64) {
                let p = at(s);
                if gpu {
                    assert!(p.gpu_us < p.cpu_us * 1.02, "{prec} {s}: {p:?}");
                }
                gpu |= p.gpu_us < p.cpu_us;
            }
        }
        // Skinny products move more than they compute: k = 16 stays on the CPU.
        let p = Problem::gemm::<f64>(8192, 8192, 16, false, false);
        let pr = r.predict(&p, 16);
        assert!(pr.cpu_us < pr.gpu_us, "{pr:?}");
    }

    #[test]
    fn small_calls_decide_cpu_without_the_driver() {
        let x = [0.0f64; 4];
        let p = x.as_ptr() as *const c_void;
        assert!(matches!(decide_gemm::<f64>(100, 100, 100, false, false, p, p), Plan::Cpu(None)));
        // Forced CPU: even huge calls.
        with_side(Some(Side::Cpu), || {
            assert!(matches!(decide_gemm::<f64>(1 << 20, 1 << 20, 1 << 20, false, false, p, p), Plan::Cpu(None)));
        });
        assert_eq!(force(None), None);
        // The fast path costs nanoseconds: a generous bound that still catches a driver call or
        // an allocation.
        let reps = 200_000;
        let t0 = std::time::Instant::now();
        for i in 0..reps {
            let s = 64 + (i & 63);
            let plan = decide_gemm::<f64>(std::hint::black_box(s), s, s, false, false, p, p);
            assert!(matches!(plan, Plan::Cpu(None)));
        }
        let per = t0.elapsed().as_secs_f64() / reps as f64;
        let bound = if cfg!(debug_assertions) { 2e-6 } else { 0.25e-6 };
        assert!(per < bound, "decide_gemm fast path took {:.0} ns", per * 1e9);
    }

    #[test]
    fn without_a_gpu_a_forced_gpu_falls_back_visibly() {
        if Runtime::get(0).is_ok() {
            return; // a machine with a GPU: covered by tests/gpu_offload.rs
        }
        let x = [0.0f64; 4];
        let p = x.as_ptr() as *const c_void;
        with_side(Some(Side::Gpu), || match decide_gemm::<f64>(8, 8, 8, false, false, p, p) {
            Plan::Cpu(Some(d)) => assert!(matches!(d.reason, Reason::NoGpu(_)), "{d}"),
            _ => panic!("no GPU here, yet not the CPU with a reason"),
        });
        // Auto above the threshold without a GPU: the CPU, nothing to say.
        assert!(matches!(decide_gemm::<f64>(4096, 4096, 4096, false, false, p, p), Plan::Cpu(None)));
    }

    #[test]
    fn decisions_print_their_inputs() {
        let d = Decision {
            side: Side::Gpu,
            reason: Reason::Model,
            pred: Some(Prediction { cpu_us: 1000.0, gpu_us: 500.0, bound: "h2d", threads: 16 }),
            rates: Some("tuned x".into()),
        };
        assert_eq!(
            d.to_string(),
            "side=gpu (model) predicted cpu=1000.0us (16 threads) gpu=500.0us (h2d-bound) rates=tuned x"
        );
    }
}

// ---- Level 3 beyond GEMM (phase 2: `gpu::offload::l3`) ----
//
// SYMM/HEMM, SYRK/HERK, SYR2K/HER2K, TRMM and TRSM are priced as the GEMM that has their flops
// and moves their bytes, so the GEMM pipeline model (and whatever the calibration measures for
// it) prices them too. Appended here as its own section: the model's internals above are not
// touched.

/// The shape of a host Level-3 call other than GEMM, for the cost model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level3 {
    /// C (m x n) := alpha*A*B + beta*C (`left`) or alpha*B*A + beta*C; A symmetric/Hermitian of
    /// order m (left) or n.
    Symm { left: bool, m: usize, n: usize },
    /// The triangle of C (n x n) := alpha*op(A)*op(A)^T + beta*C, op(A) n x k (also HERK).
    Syrk { n: usize, k: usize },
    /// The triangle of C (n x n) := alpha*op(A)*op(B)^T + alpha*op(B)*op(A)^T + beta*C.
    Syr2k { n: usize, k: usize },
    /// B (m x n) := alpha*op(A)*B (`left`) or alpha*B*op(A); A triangular.
    Trmm { left: bool, m: usize, n: usize },
    /// B (m x n) := alpha*op(A)^-1*B (`left`) or alpha*B*op(A)^-1.
    Trsm { left: bool, m: usize, n: usize },
}

impl Problem {
    /// The GEMM the model prices for a Level-3 call (GEMM slots: A m x k, B k x n, C m x n; real
    /// flops 2mnk, x4 for complex):
    /// - SYRK n, k: m = n, n' = n/2 (the triangle), k; A = op(A) once (n*k), no B, C = the
    ///   triangle (n*n/2) in (beta != 0) and out. Flops n*n*k.
    /// - SYR2K: as SYRK with k' = 2k (A and B both cross: 2*n*k), flops 2*n*n*k.
    /// - SYMM left m x n: m, n, k = m (A counted whole: the stored triangle plus the diagonal
    ///   blocks cross, about m*m/2; counting m*m errs towards the CPU), flops 2*m*m*n. Right:
    ///   the transpose (m' = n, n' = m, k = n).
    /// - TRMM/TRSM left m x n: m, n, k = m/2 (A's triangle m*m/2), no B slot, C = B in and out;
    ///   flops m*m*n. Right: the transpose.
    ///
    /// alpha == 0 reads neither A nor B (k = 0; TRMM/TRSM then do not read B either), beta == 0
    /// does not read C.
    pub fn level3<T: Scalar>(r: Level3, alpha_zero: bool, beta_zero: bool) -> Problem {
        let half = |x: usize| x.div_ceil(2);
        // (m, n, k, B slot on the host, C read)
        let (m, n, k, b_slot, c_in) = match r {
            Level3::Syrk { n, k } => (n, half(n), k, false, !beta_zero),
            Level3::Syr2k { n, k } => (n, half(n), 2 * k, false, !beta_zero),
            Level3::Symm { left: true, m, n } => (m, n, m, true, !beta_zero),
            Level3::Symm { left: false, m, n } => (n, m, n, true, !beta_zero),
            Level3::Trmm { left: true, m, n } | Level3::Trsm { left: true, m, n } => {
                (m, n, half(m), false, !alpha_zero)
            }
            Level3::Trmm { left: false, m, n } | Level3::Trsm { left: false, m, n } => {
                (n, m, half(n), false, !alpha_zero)
            }
        };
        let base = Problem::gemm::<T>(m, n, k, alpha_zero, !c_in);
        Problem { host: [true, b_slot, true], ..base }
    }
}

/// Where a host-memory Level-3 call other than GEMM runs (SYMM/HEMM, SYRK/HERK, SYR2K/HER2K,
/// TRMM, TRSM; `p` from [`Problem::level3`]). `operands` are the caller's pointers the call
/// reads or writes: one in device memory sends the call to the GPU (only it can read them),
/// like [`decide_gemm`]'s device operands. As cheap as [`decide_gemm`] when the answer is the
/// CPU for a small call: the forced side, then the flop count, no driver call.
#[inline]
pub fn decide_level3(p: Problem, operands: &[*const c_void]) -> Plan {
    let forced = forced();
    if let Some((Side::Cpu, _)) = forced {
        return Plan::Cpu(None);
    }
    if forced.is_none() && p.flops() < *MIN_FLOPS {
        return Plan::Cpu(None);
    }
    decide_level3_slow(p, forced, operands)
}

#[cold]
fn decide_level3_slow(p: Problem, forced: Option<(Side, &'static str)>, operands: &[*const c_void]) -> Plan {
    if DISABLED.load(std::sync::atomic::Ordering::Relaxed) {
        let why = Reason::NoGpu("offload disabled after a device error".into());
        return Plan::Cpu(forced.map(|_| Decision { side: Side::Cpu, reason: why, pred: None, rates: None }));
    }
    let rt = match Runtime::current() {
        Ok(rt) => rt,
        Err(e) => {
            let d = forced.map(|_| Decision {
                side: Side::Cpu,
                reason: Reason::NoGpu(e.to_string()),
                pred: None,
                rates: None,
            });
            return Plan::Cpu(d);
        }
    };
    let on_device = operands.iter().any(|&x| gpu::runtime::is_device_pointer(x));
    let rates = Rates::for_device(rt);
    let pred = rates.predict(&p, crate::cpu::threads::nthreads());
    let src = Some(rates.source.clone());
    if let Some((side, by)) = forced {
        return Plan::Gpu(rt, Decision { side, reason: Reason::Forced(by), pred: Some(pred), rates: src });
    }
    if on_device {
        return Plan::Gpu(
            rt,
            Decision { side: Side::Gpu, reason: Reason::DeviceOperand, pred: Some(pred), rates: src },
        );
    }
    let side = if pred.gpu_us < pred.cpu_us { Side::Gpu } else { Side::Cpu };
    let d = Decision { side, reason: Reason::Model, pred: Some(pred), rates: src };
    match side {
        Side::Gpu => Plan::Gpu(rt, d),
        Side::Cpu => Plan::Cpu(Some(d)),
    }
}

#[cfg(test)]
mod level3_tests {
    use super::*;

    #[test]
    fn level3_problems_have_their_flops_and_bytes() {
        let flops = |r: Level3| Problem::level3::<f64>(r, false, false).flops();
        let n = 1000.0f64;
        assert_eq!(flops(Level3::Syrk { n: 1000, k: 1000 }), n * n * n);
        assert_eq!(flops(Level3::Syr2k { n: 1000, k: 1000 }), 2.0 * n * n * n);
        assert_eq!(flops(Level3::Symm { left: true, m: 1000, n: 1000 }), 2.0 * n * n * n);
        assert_eq!(flops(Level3::Trsm { left: false, m: 1000, n: 1000 }), n * n * n);
        assert_eq!(flops(Level3::Trmm { left: true, m: 1000, n: 500 }), n * n * 500.0);
        assert_eq!(flops(Level3::Trmm { left: false, m: 500, n: 1000 }), n * n * 500.0);
        // Complex: four real multiply-adds per complex one.
        let z = Problem::level3::<crate::types::C64>(Level3::Syrk { n: 1000, k: 1000 }, false, false);
        assert_eq!(z.flops(), 4.0 * n * n * n);
        // alpha == 0: nothing to compute (the fast path keeps such calls on the CPU).
        assert_eq!(Problem::level3::<f64>(Level3::Trsm { left: true, m: 9000, n: 9000 }, true, true).flops(), 0.0);
        // SYRK moves A and the triangle of C, never a B.
        let p = Problem::level3::<f64>(Level3::Syrk { n: 1000, k: 300 }, false, true);
        assert_eq!((p.m * p.k, p.host[1], p.c_in, p.m * p.n), (300_000, false, false, 500_000));
        // TRSM reads and writes B (the C slot), whatever beta means elsewhere.
        let p = Problem::level3::<f64>(Level3::Trsm { left: true, m: 1000, n: 300 }, false, true);
        assert!(p.c_in && !p.host[1]);
    }

    #[test]
    fn level3_small_calls_stay_on_the_cpu_without_the_driver() {
        let x = [0.0f64; 4];
        let ptr = x.as_ptr() as *const c_void;
        let p = Problem::level3::<f64>(Level3::Trsm { left: true, m: 200, n: 200 }, false, false);
        assert!(matches!(decide_level3(p, &[ptr, ptr]), Plan::Cpu(None)));
        with_side(Some(Side::Cpu), || {
            let big = Problem::level3::<f64>(Level3::Syrk { n: 1 << 16, k: 1 << 16 }, false, false);
            assert!(matches!(decide_level3(big, &[ptr, ptr]), Plan::Cpu(None)));
        });
        let reps = 200_000;
        let t0 = std::time::Instant::now();
        for i in 0..reps {
            let s = 64 + (i & 63);
            let p = Problem::level3::<f64>(Level3::Syrk { n: std::hint::black_box(s), k: s }, false, false);
            assert!(matches!(decide_level3(p, &[ptr, ptr]), Plan::Cpu(None)));
        }
        let per = t0.elapsed().as_secs_f64() / reps as f64;
        let bound = if cfg!(debug_assertions) { 2e-6 } else { 0.25e-6 };
        assert!(per < bound, "decide_level3 fast path took {:.0} ns", per * 1e9);
    }

    #[test]
    fn level3_large_calls_go_to_a_hopper_gpu() {
        // The H200 host of the GEMM tests: n = 8192 DTRSM, DSYRK and DSYMM are worth offloading,
        // n = 384 is not.
        let r = Rates::builtin(&DeviceProps {
            ordinal: 0,
            name: "NVIDIA H200".into(),
            cc: (9, 0),
            sm_count: 132,
            warp_size: 32,
            max_threads_per_block: 1024,
            max_threads_per_sm: 2048,
            max_blocks_per_sm: 32,
            regs_per_sm: 65536,
            regs_per_block: 65536,
            smem_per_sm: 233472,
            smem_per_block_optin: 232448,
            reserved_smem_per_block: 1024,
            l2_bytes: 50 << 20,
            total_mem: 141 << 30,
            driver_version: 13000,
        })
        .with_lines("offload h2d_gbs 50\noffload d2h_gbs 50\noffload cpu_threads 16\noffload cpu_gflops_d 1000\n", "t");
        for r3 in [
            Level3::Syrk { n: 8192, k: 8192 },
            Level3::Trsm { left: true, m: 8192, n: 8192 },
            Level3::Trsm { left: false, m: 8192, n: 8192 },
            Level3::Symm { left: true, m: 8192, n: 8192 },
        ] {
            let p = r.predict(&Problem::level3::<f64>(r3, false, false), 16);
            assert!(p.gpu_us < p.cpu_us, "{r3:?}: {p:?}");
            let small = match r3 {
                Level3::Syrk { .. } => Level3::Syrk { n: 384, k: 384 },
                Level3::Trsm { left, .. } => Level3::Trsm { left, m: 384, n: 384 },
                _ => Level3::Symm { left: true, m: 384, n: 384 },
            };
            let p = r.predict(&Problem::level3::<f64>(small, false, false), 16);
            assert!(p.cpu_us < p.gpu_us, "{small:?}: {p:?}");
        }
    }
}
