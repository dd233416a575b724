//! Host Level-3 offload planning (seed 002): for a `?gemm_` / `cblas_?gemm` call (or another
//! Level-3 routine) on host memory, is the CPU engine, the GPU (`hybrid::offload`: tiles
//! pipelined through pinned staging, the real cuBLAS per tile) or both at once (co-execution,
//! GEMM only) predicted fastest? The decision itself is `plan::gemm::decide_host`; this file is
//! the model it asks, the settings that force it, and what it learns.
//!
//! The model, in seconds, for C (m x n) := alpha*op(A) (m x k)*op(B) (k x n) + beta*C:
//! - **CPU**: flops / (the CPU engine's rate per thread x threads), the rate measured at a few
//!   sizes and interpolated in the size (cbrt(m n k)).
//! - **GPU** ([`Rates::pipe_secs`]): a pipeline of host->device copies, cuBLAS per tile and
//!   device->host copies over the tiles of C. Each stage's time is bytes / rate plus a cost per
//!   copy piece; each tile's GEMM is its flops at the cuBLAS rate measured for that tile size
//!   and k, plus a per-tile overhead. The call takes the longest of four paths (all the
//!   uploads; the first tile's inputs then every GEMM; all of A then the rest of the GEMMs; the
//!   first tile then all the copies back), plus a fixed latency per call.
//! - **Split** ([`Rates::split_at`], [`Rates::best_split`]): the GPU takes the first `share` of
//!   C's columns with its copies packed by `f` feeder threads, the CPU the rest on the other
//!   threads (`f` = 0: one feeder sharing the engine's cores); each side runs at a fitted
//!   fraction of its rate alone while the other runs, and the call takes the slower side plus
//!   co-execution's own fixed cost. The best split is the share that equalises the two sides.
//! - Other Level-3 routines are priced as the GEMM of the same bytes and flops
//!   ([`Problem::level3`]) times the routine's measured factor on each side ([`Rates::op_factor`]).
//!
//! **One learnt correction** ([`Learned`]): each CPU-only or GPU-only call the planner times
//! adds its measured time over the model's prediction to a factor per routine, precision, side
//! and octave of size, which later predictions (and both sides of a split) include. `hyblas tune
//! offload`'s own timed GPU-only calls are the table's first lessons (`offload gpu_call_ms`).
//! `HYBLAS_OFFLOAD_LEARN=0`: the calibrated model alone.
//!
//! Rates come from `hyblas tune offload` ([`tune::calibrate`]), stored as `offload <key>
//! <value...>` lines in the device's recipe file; before it, built-in figures
//! ([`Rates::builtin`]).
//!
//! Controls: `HYBLAS_DEVICE=cpu|gpu|split|auto` (default auto; `split` forces co-execution from
//! the model's share) for the whole process; `HYBLAS_OFFLOAD_SHARE=x` (0..1) a fixed GPU share;
//! [`force`] / [`with_side`], [`with_share`] and [`with_split`] the same for the calling thread
//! (tests, benchmarks), winning over the environment. A split is chosen only when predicted at
//! least `HYBLAS_OFFLOAD_SPLIT_GAIN` (default 0.15) faster than the better side alone. With
//! `HYBLAS_TRACE` on, every call past the flop threshold writes a line with the decision, the
//! predicted times and the measured time.

use crate::config;
use crate::gpu::{self, runtime::DeviceProps, Runtime};
use once_cell::sync::Lazy;
use parking_lot::{Mutex, RwLock};
use std::collections::HashMap;
use std::sync::Arc;

#[path = "offload_tune.rs"]
pub mod tune;
pub use tune::calibrate;
// The settings, decisions and outcomes of host calls (`plan::host`), under the names callers use.
pub use super::host::{
    clear_last, describe, disable, disables, force, force_share, last, observe, set_last, with_share, with_side,
    with_split, CpuWatch, Decision, Outcome, Reason, SplitPlan, DYNAMIC_MIN_US,
};
pub(crate) use super::host::{disabled, forced, forced_gemm, times_forced_cpu, Force};
// The call the model prices (`plan::problem`).
pub use super::problem::{Level3, Op, Problem};

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

// ---- Rates ----

/// Host<->device rates of one way of running the pipeline, bytes/s.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Xfer {
    pub h2d: f64,
    pub d2h: f64,
}

/// cuBLAS GEMM rates on one tile by tile side (sqrt of its area) and k, flop/s: a grid,
/// interpolated bilinearly in the logarithms and clamped at its edges.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TileTable {
    pub sides: Vec<f64>,
    pub ks: Vec<f64>,
    /// `rate[i * ks.len() + j]` for `sides[i]`, `ks[j]`.
    pub rate: Vec<f64>,
}

impl TileTable {
    /// The grid of `(side, k, rate)` points; cells without a point take the nearest one's.
    fn from_points(pts: &[(f64, f64, f64)]) -> TileTable {
        let mut sides: Vec<f64> = pts.iter().map(|p| p.0).collect();
        let mut ks: Vec<f64> = pts.iter().map(|p| p.1).collect();
        for v in [&mut sides, &mut ks] {
            v.sort_by(f64::total_cmp);
            v.dedup();
        }
        let mut rate = vec![f64::NAN; sides.len() * ks.len()];
        for (i, &s) in sides.iter().enumerate() {
            for (j, &k) in ks.iter().enumerate() {
                let d = |p: &(f64, f64, f64)| (p.0 / s).ln().abs() + (p.1 / k).ln().abs();
                let near = pts.iter().min_by(|a, b| d(a).total_cmp(&d(b)));
                rate[i * ks.len() + j] = near.map_or(f64::NAN, |p| p.2);
            }
        }
        TileTable { sides, ks, rate }
    }

    fn at(&self, side: f64, k: f64) -> Option<f64> {
        if self.rate.is_empty() {
            return None;
        }
        let (i, fi) = bracket_by(self.sides.len(), |i| self.sides[i], side);
        let (j, fj) = bracket_by(self.ks.len(), |j| self.ks[j], k);
        let nk = self.ks.len();
        let v = |i: usize, j: usize| self.rate[i * nk + j];
        let i1 = (i + 1).min(self.sides.len() - 1);
        let j1 = (j + 1).min(nk - 1);
        let lo = v(i, j) + fj * (v(i, j1) - v(i, j));
        let hi = v(i1, j) + fj * (v(i1, j1) - v(i1, j));
        Some(lo + fi * (hi - lo))
    }
}

/// The interval of `len` ascending keys read by `key` that holds `x`, and the fraction across
/// it in log x (clamped to 0..1; the first or last key, fraction 0, outside them).
fn bracket_by(len: usize, key: impl Fn(usize) -> f64, x: f64) -> (usize, f64) {
    if len < 2 || x <= key(0) {
        return (0, 0.0);
    }
    let last = len - 1;
    if x >= key(last) {
        return (last, 0.0);
    }
    let i = (0..len).rposition(|i| key(i) <= x).unwrap_or(0).min(last - 1);
    let (a, b) = (key(i), key(i + 1));
    (i, ((x / a).ln() / (b / a).ln()).clamp(0.0, 1.0))
}

/// Piecewise-linear interpolation of `val` over `pts` keyed (ascending) by `key`, in log x,
/// clamped at the ends.
fn interp_by<T>(pts: &[T], x: f64, key: impl Fn(&T) -> f64, val: impl Fn(&T) -> f64) -> Option<f64> {
    if pts.is_empty() {
        return None;
    }
    let (i, f) = bracket_by(pts.len(), |i| key(&pts[i]), x);
    let j = (i + 1).min(pts.len() - 1);
    Some(val(&pts[i]) + f * (val(&pts[j]) - val(&pts[i])))
}

/// The model's inputs on one machine. Flop rates count real flops (a complex multiply-add is 8).
#[derive(Clone, Debug, PartialEq)]
pub struct Rates {
    /// Pageable host memory to the device and back through the staging pipeline, packed by
    /// the CPU engine's threads (measured alone, one direction at a time), bytes/s.
    pub h2d: f64,
    pub d2h: f64,
    /// Fixed cost of one offloaded call (pipeline set-up, thread hand-off, final waits), s.
    pub latency: f64,
    /// Overhead of one tile's GEMM in the pipeline on top of the cuBLAS call, s.
    pub tile: f64,
    /// Cost of one copy piece on a stage's critical path (wait for a chunk, pack, enqueue), s.
    pub piece: f64,
    /// Transfer rates inside a running call relative to `h2d`/`d2h` (both directions and the
    /// GEMMs at once; fitted to whole calls).
    pub bw_eff: f64,
    /// cuBLAS ?GEMM rates at n = 4096, flop/s, indexed s, d, c, z.
    pub gpu: [f64; 4],
    /// cuBLAS on one tile, per precision (empty: `gpu` with a built-in shape curve).
    pub gpu_tiles: [TileTable; 4],
    /// CPU engine rates per thread at the largest size measured, flop/s, indexed s, d, c, z.
    pub cpu_per_thread: [f64; 4],
    /// CPU engine: (n of a square product, flop/s per thread), per precision (empty:
    /// `cpu_per_thread` at every size).
    pub cpu_sizes: [Vec<(f64, f64)>; 4],
    /// (feeder threads, h2d, d2h): the pipeline's rates with that many threads packing.
    pub feed: Vec<(usize, f64, f64)>,
    /// Co-execution's own fixed cost (the CPU side's thread, the feeders), s.
    pub split_latency: f64,
    /// The CPU engine's rate while co-executing, relative to alone (fitted).
    pub cpu_coexec: f64,
    /// The GPU side's transfer rates while co-executing, relative to the feeders' alone (fitted).
    pub gpu_coexec: f64,
    /// Per routine other than GEMM: (n, CPU factor, GPU factor) points, the measured time over
    /// the time of the GEMM the model prices for it (interpolated in log n, clamped).
    pub op_factors: OpFactors,
    /// Whole GPU-only calls `hyblas tune offload` timed (`offload gpu_call_ms`): the learnt
    /// table's first lessons ([`Rates::teach_calls`]).
    pub calls: Vec<(Problem, f64)>,
    /// Where the figures came from ("built-in sm90", "tuned <file>").
    pub source: String,
    /// The learnt corrections the predictions include: the device's rates consult the
    /// process's table; rates built for tests, tuning and offline scoring none, or their own.
    pub learned: Option<Arc<Learned>>,
}

/// Per routine: (n, CPU factor, GPU factor) points.
pub type OpFactors = Vec<(Op, Vec<(f64, f64, f64)>)>;

pub(crate) use crate::types::prec_index;

const PRECS: [char; 4] = ['s', 'd', 'c', 'z'];

/// A split configuration: (feeders, CPU engine threads, the GPU side's transfer rates while
/// both run, the CPU engine's rate while both run relative to alone).
type Config = (usize, usize, Xfer, f64);

/// Feeder thread counts a split considers (0: the feeder shares the CPU engine's cores).
const FEEDER_CHOICES: [usize; 5] = [0, 1, 2, 3, 4];

/// One feeder packing on a core the CPU engine also runs on gets about this much of it.
const SHARED_FEEDER: f64 = 0.5;

/// Bytes/s one feeder thread moves through the staging pipeline, alone, before `hyblas tune
/// offload` measures it (`feed_gbs`): the H200 host's measured 5.2-6.0 GB/s with one, 10.2-11.5
/// with two, 12.4-19.4 with four (sessions 61-62). It was 12 GB/s, a guess, and priced a
/// co-executed call's GPU side at half its measured time there.
const FEED_PER_THREAD: f64 = 5.5e9;

pub use crate::hybrid::offload::split_cols;

impl Rates {
    /// Conservative defaults before `hyblas tune` has run. Hopper (sm_90) hosts: 40 GB/s each
    /// way through staging (PCIe 5 x16 moves ~55 GB/s pinned; the host copy costs some), cuBLAS
    /// 50 TFLOP/s in every precision for large tiles (H200 DGEMM reaches 61.6 at n = 4096,
    /// anchors.md), a fixed cost of 50 us per call and 60 us per copy piece (fitted to the
    /// first H200 run's GPU-only calls, n = 512..4096, s/d/z: 12% rms). Elsewhere: PCIe 4 (20
    /// GB/s), and per-SM rates of an A100 for sm_80, a tenth of them for double on other GPUs
    /// (consumer parts run FP64 at 1/64). CPU: 32 GFLOP/s per thread in double with AVX-512, 16
    /// without; single precision twice that. Co-executing: the CPU engine at 0.9 of its rate
    /// alone, the feeders at 0.66 of theirs (the H200 host's fits, weighted by time, s62).
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
            latency: 50e-6,
            tile: 5e-6,
            piece: 60e-6,
            bw_eff: 1.0,
            gpu: [f32_sm * sms, f64_sm * sms, f32_sm * sms, f64_sm * sms],
            gpu_tiles: Default::default(),
            cpu_per_thread: cpu_builtin(),
            cpu_sizes: Default::default(),
            feed: Vec::new(),
            split_latency: 150e-6,
            cpu_coexec: 0.9,
            gpu_coexec: 0.66,
            op_factors: if p.cc.0 >= 9 { h200_op_factors() } else { Vec::new() },
            calls: Vec::new(),
            source: label,
            learned: None,
        }
    }

    /// `offload <key> <value...>` lines of a recipe file over these figures (`label` names them
    /// in the trace). Other lines, and values that are not positive numbers, are skipped.
    /// Keys: `h2d_gbs`, `d2h_gbs`, `latency_us`, `tile_us`, `piece_us`, `bw_eff`,
    /// `split_latency_us`, `cpu_coexec`, `gpu_coexec`, `cpu_threads`, `gpu_gflops_<p>`,
    /// `cpu_gflops_<p>` (all threads), `cpu_size_gflops_<p> <n> <v>`,
    /// `gpu_tile_gflops_<p> <side> <k> <v>`, `feed_gbs <threads> <h2d> <d2h>`,
    /// `op_eff <routine> <n> <cpu> <gpu>`, `gpu_call_ms <p> <n> <ms>`. (Recipes of older builds
    /// also hold `split_call_ms` lines: co-executed calls, no longer read.)
    pub fn with_lines(mut self, text: &str, label: &str) -> Rates {
        let mut cpu_total: [Option<f64>; 4] = [None; 4];
        let mut cpu_sizes: [Vec<(f64, f64)>; 4] = Default::default();
        let mut tiles: [Vec<(f64, f64, f64)>; 4] = Default::default();
        let mut feed: Vec<(usize, f64, f64)> = Vec::new();
        let mut cpu_threads = None;
        let mut ops: OpFactors = Vec::new();
        let mut any = false;
        for line in text.lines() {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() < 3 || f[0] != "offload" {
                continue;
            }
            let nums = |from: usize| -> Option<Vec<f64>> {
                let v: Vec<f64> = f[from..].iter().map(|x| x.parse::<f64>()).collect::<Result<_, _>>().ok()?;
                v.iter().all(|x| x.is_finite() && *x > 0.0).then_some(v)
            };
            let prec = |s: &str| s.chars().next().filter(|c| s.len() == 1 && PRECS.contains(c));
            match (f[1], f.len()) {
                ("gpu_call_ms", 5) => {
                    if let (Some(pc), Some(v)) = (prec(f[2]), nums(3)) {
                        self.calls.push((Problem::square(pc, v[0] as usize), v[1] * 1e-3));
                        any = true;
                    }
                    continue;
                }
                ("op_eff", 6) => {
                    if let (Some(op), Some(v)) = (Op::from_name(f[2]), nums(3)) {
                        match ops.iter_mut().find(|o| o.0 == op) {
                            Some(o) => o.1.push((v[0], v[1], v[2])),
                            None => ops.push((op, vec![(v[0], v[1], v[2])])),
                        }
                        any = true;
                    }
                    continue;
                }
                _ => {}
            }
            let Some(nums) = nums(2) else { continue };
            let of = |prefix: &str| f[1].strip_prefix(prefix).and_then(prec).map(prec_index);
            let v = nums[0];
            match (f[1], nums.len()) {
                ("h2d_gbs", 1) => self.h2d = v * 1e9,
                ("d2h_gbs", 1) => self.d2h = v * 1e9,
                ("latency_us", 1) => self.latency = v * 1e-6,
                ("tile_us", 1) => self.tile = v * 1e-6,
                ("piece_us", 1) => self.piece = v * 1e-6,
                ("bw_eff", 1) => self.bw_eff = v,
                ("split_latency_us", 1) => self.split_latency = v * 1e-6,
                ("cpu_coexec", 1) => self.cpu_coexec = v,
                ("gpu_coexec", 1) => self.gpu_coexec = v,
                ("cpu_threads", 1) => cpu_threads = Some(v),
                ("feed_gbs", 3) => feed.push((v.round() as usize, nums[1] * 1e9, nums[2] * 1e9)),
                (_, 1) => match (of("gpu_gflops_"), of("cpu_gflops_")) {
                    (Some(i), _) => self.gpu[i] = v * 1e9,
                    (_, Some(i)) => cpu_total[i] = Some(v * 1e9),
                    _ => continue,
                },
                (_, 2) => match of("cpu_size_gflops_") {
                    Some(i) => cpu_sizes[i].push((v, nums[1] * 1e9)),
                    None => continue,
                },
                (_, 3) => match of("gpu_tile_gflops_") {
                    Some(i) => tiles[i].push((v, nums[1], nums[2] * 1e9)),
                    None => continue,
                },
                _ => continue,
            }
            any = true;
        }
        let threads = cpu_threads.unwrap_or(1.0).max(1.0);
        for i in 0..4 {
            if let Some(t) = cpu_total[i] {
                self.cpu_per_thread[i] = t / threads;
            }
            if !cpu_sizes[i].is_empty() {
                let mut v: Vec<(f64, f64)> = cpu_sizes[i].iter().map(|&(n, r)| (n, r / threads)).collect();
                v.sort_by(|a, b| a.0.total_cmp(&b.0));
                v.dedup_by(|a, b| a.0 == b.0);
                self.cpu_sizes[i] = v;
            }
            if !tiles[i].is_empty() {
                self.gpu_tiles[i] = TileTable::from_points(&tiles[i]);
            }
        }
        for (op, mut pts) in ops {
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            pts.dedup_by(|a, b| a.0 == b.0);
            self.op_factors.retain(|o| o.0 != op);
            self.op_factors.push((op, pts));
        }
        if !feed.is_empty() {
            feed.sort_by_key(|f| f.0);
            feed.dedup_by_key(|f| f.0);
            self.feed = feed;
        }
        if any {
            self.source = label.to_string();
        }
        self
    }

    /// The rates for `rt`'s device: its recipe file's `offload` lines over the built-in ones,
    /// read once per device ([`reload`] forgets them), consulting the process's learnt table,
    /// which the recipe's timed calls teach first ([`Rates::teach_calls`]).
    pub fn for_device(rt: &Runtime) -> Arc<Rates> {
        let key = rt.props.ordinal;
        if let Some(r) = RATES.read().get(&key) {
            return r.clone();
        }
        let mut all = RATES.write();
        if let Some(r) = all.get(&key) {
            return r.clone();
        }
        let path = gpu::tune::recipe_path(&rt.props);
        let base = Rates::builtin(&rt.props);
        let r = match std::fs::read_to_string(&path) {
            Ok(text) => base.with_lines(&text, &format!("tuned {}", path.display())),
            Err(_) => base,
        };
        r.teach_calls(Learned::global());
        let r = Arc::new(Rates { learned: Some(Learned::global().clone()), ..r });
        all.insert(key, r.clone());
        r
    }

    /// Teach `l` the timed GPU-only calls of the recipe ([`Rates::calls`]): each call's time over
    /// the model's, as the first lesson of its cell. (`hyblas tune offload` fits the pipeline's
    /// latency, per-piece cost and transfer efficiency to these calls, and the fit leaves 5-15%
    /// at single sizes on the H200 host; these lessons take it out.)
    pub fn teach_calls(&self, l: &Learned) {
        let model = self.calibrated();
        for (p, secs) in &self.calls {
            let us = model.predict(p, 1).gpu_us;
            if us > 0.0 {
                l.observe(p, Side::Gpu, secs * 1e6 / us);
            }
        }
    }

    /// These rates without what was learnt: the calibrated model alone.
    pub fn calibrated(&self) -> Rates {
        Rates { learned: None, ..self.clone() }
    }

    /// cuBLAS rate of precision `i` on a tile of side `side` (sqrt of its area) with `k` terms.
    pub fn gpu_rate(&self, i: usize, side: f64, k: f64) -> f64 {
        if let Some(r) = self.gpu_tiles[i].at(side, k).filter(|r| *r > 0.0) {
            return r;
        }
        // Built in: a tile fills the GPU as (side/1024)^2 (cuBLAS's 128^2 blocks against ~132
        // SMs), and k amortises each block's start.
        let fill = (side / 1024.0).powi(2).clamp(0.02, 1.0);
        self.gpu[i] * fill * (k / (k + 64.0))
    }

    /// CPU engine rate per thread of precision `i` for a product of size `size` (cbrt(m n k)).
    pub fn cpu_rate(&self, i: usize, size: f64) -> f64 {
        interp_by(&self.cpu_sizes[i], size, |p| p.0, |p| p.1).filter(|r| *r > 0.0).unwrap_or(self.cpu_per_thread[i])
    }

    /// Seconds of the CPU engine on `cols` of C's columns, `threads` threads at `eff` of its
    /// rate alone (its rate is the whole problem's size's).
    fn cpu_cols_secs(&self, p: &Problem, cols: usize, threads: usize, eff: f64) -> f64 {
        if cols == 0 {
            return 0.0;
        }
        let q = Problem { n: cols, ..*p };
        q.flops() / (self.cpu_rate(prec_index(p.prec), p.size()) * threads.max(1) as f64 * eff)
    }

    /// The pipeline's rates in a call that has the GPU to itself.
    pub fn alone(&self) -> Xfer {
        Xfer { h2d: self.h2d * self.bw_eff, d2h: self.d2h * self.bw_eff }
    }

    /// The pipeline's rates with `f` threads packing (measured alone, linear between the counts
    /// measured; built in: [`FEED_PER_THREAD`] each, up to the rates of the engine's pool).
    pub fn feed_xfer(&self, f: usize) -> Xfer {
        let f = f.max(1);
        if self.feed.is_empty() {
            let each = FEED_PER_THREAD * f as f64;
            return Xfer { h2d: self.h2d.min(each), d2h: self.d2h.min(each) };
        }
        let x = f as f64;
        let lin = |dir: fn(&(usize, f64, f64)) -> f64| {
            let p = &self.feed;
            match p.iter().position(|q| q.0 >= f) {
                Some(0) => dir(&p[0]) * (x / p[0].0 as f64).min(1.0),
                Some(j) => {
                    let (a, b) = (&p[j - 1], &p[j]);
                    dir(a) + (x - a.0 as f64) / (b.0 - a.0) as f64 * (dir(b) - dir(a))
                }
                None => dir(&p[p.len() - 1]),
            }
        };
        Xfer { h2d: lin(|q| q.1), d2h: lin(|q| q.2) }
    }
    /// Predicted seconds of the GPU pipeline on the first `cols` of C's columns with transfer
    /// rates `x` (the tile is the whole call's), and which path bounds it: "h2d" (all the
    /// uploads), "compute" (the GEMMs), "a-panels" (all of A before the first tile column ends,
    /// then the GEMMs) or "d2h" (the copies back). Includes the call's fixed latency.
    pub fn pipe_secs(&self, p: &Problem, cols: usize, x: Xfer) -> (f64, &'static str) {
        #[cfg(test)]
        tests::PIPE_EVALS.with(|c| c.set(c.get() + 1));
        let ng = cols.min(p.n);
        if ng == 0 || p.m == 0 {
            return (0.0, "empty");
        }
        let (mt, nt) = crate::hybrid::offload::tile_for(p.m, p.n, p.k, p.elem);
        let i = prec_index(p.prec);
        let e = p.elem as f64;
        let reads = p.k > 0;
        let (ha, hb, hc) = (p.host[0] && reads, p.host[1] && reads, p.host[2]);
        let cin = hc && p.c_in;
        let (m, k, n_all, ngf) = (p.m as f64, p.k as f64, p.n as f64, ng as f64);
        let per = if p.complex { 8.0 } else { 2.0 };
        let tile_secs = |h: usize, w: usize| {
            let side = ((h * w) as f64).sqrt();
            per * (h * w) as f64 * k / self.gpu_rate(i, side, k.max(1.0)) + self.tile
        };
        let (rf, re) = (p.m / mt, p.m % mt);
        let (cf, ce) = (ng / nt, ng % nt);
        let (mut compute, mut tiles) = (0.0, 0.0);
        for (h, hn) in [(mt, rf), (re, (re > 0) as usize)] {
            for (w, wn) in [(nt, cf), (ce, (ce > 0) as usize)] {
                if h > 0 && w > 0 && hn * wn > 0 {
                    compute += (hn * wn) as f64 * tile_secs(h, w);
                    tiles += (hn * wn) as f64;
                }
            }
        }
        let (h0, w0) = (mt.min(p.m), nt.min(ng));
        let one = tile_secs(h0, w0);
        let (h0f, w0f) = (h0 as f64, w0 as f64);
        let rows = p.m.div_ceil(mt) as f64;
        let on = |b: bool, v: f64| if b { v } else { 0.0 };
        let (a_b, b_b, c_b) = (on(ha, m * k * e), on(hb, k * ngf * e), on(cin, m * ngf * e));
        let input = a_b + b_b + c_b;
        let out = on(hc, m * ngf * e);
        // Pieces as the pipeline cuts them (from the whole call's traffic), and the regions
        // (panels, tiles) each start a new one.
        let traffic = on(ha, m * k * e) + on(hb, k * n_all * e) + on(hc, (1.0 + cin as u8 as f64) * m * n_all * e);
        let piece = crate::hybrid::offload::piece_for(traffic as usize) as f64;
        let pieces = |bytes: f64, regions: f64| if bytes > 0.0 { bytes / piece + regions } else { 0.0 };
        let regions_in = on(ha, rows) + on(hb, ng.div_ceil(nt) as f64) + on(cin, tiles);
        let h2d = input / x.h2d + pieces(input, regions_in) * self.piece;
        let d2h = out / x.d2h + pieces(out, tiles) * self.piece;
        let fin_b = on(ha, h0f * k * e) + on(hb, k * w0f * e) + on(cin, h0f * w0f * e);
        let fin = fin_b / x.h2d + pieces(fin_b, (ha as u8 + hb as u8 + cin as u8) as f64) * self.piece;
        let col_b = a_b + on(hb, k * w0f * e) + on(cin, m * w0f * e);
        let col0 = col_b / x.h2d + pieces(col_b, on(ha, rows) + on(hb, 1.0) + on(cin, rows)) * self.piece;
        let lout = if hc { h0f * w0f * e / x.d2h + self.piece } else { 0.0 };
        let rest = (compute - rows * one).max(0.0);
        let paths = [
            (h2d + one + lout, "h2d"),
            (fin + compute + lout, "compute"),
            (col0 + one + rest + lout, "a-panels"),
            (fin + one + d2h, "d2h"),
        ];
        let (t, what) = paths.iter().fold((0.0, ""), |acc, &(t, w)| if t > acc.0 { (t, w) } else { acc });
        (self.latency + t, what)
    }

    /// Predicted seconds of the GPU pipeline alone on the first `share` (0..=1) of C's
    /// columns, and which path bounds it (see [`Rates::pipe_secs`]); nothing learnt.
    pub fn gpu_secs(&self, p: &Problem, share: f64) -> (f64, &'static str) {
        self.pipe_secs(p, split_cols(share, p.n), self.alone())
    }

    /// Both whole-call predictions for `p` with `threads` CPU threads: the model times the
    /// routine's factors ([`Rates::op_factor`]) times what was learnt ([`Rates::drift`]).
    pub fn predict(&self, p: &Problem, threads: usize) -> Prediction {
        let (gpu, bound) = self.gpu_secs(p, 1.0);
        let (fc, fg) = self.op_factor(p);
        let (dc, dg) = self.drift(p);
        Prediction {
            cpu_us: self.cpu_cols_secs(p, p.n, threads, 1.0) * 1e6 * fc * dc,
            gpu_us: gpu * 1e6 * fg * dg,
            bound,
            threads,
            drift: [dc, dg],
        }
    }

    /// The (CPU, GPU) factors learnt from timed calls at `p`'s size ([`Learned`]; 1 and 1
    /// without a table or with `HYBLAS_OFFLOAD_LEARN=0`).
    pub fn drift(&self, p: &Problem) -> (f64, f64) {
        match &self.learned {
            Some(l) if learning() => l.factors(p),
            _ => (1.0, 1.0),
        }
    }

    /// The (CPU, GPU) factors of `p`'s routine on the GEMM the model prices for it (1 for GEMM
    /// and for routines without measurements). Keyed by the routine's order: the larger of
    /// the priced GEMM's m and n (SYRK n x k: m = n; TRSM left m x n: m).
    pub fn op_factor(&self, p: &Problem) -> (f64, f64) {
        let Some((_, pts)) = self.op_factors.iter().find(|o| o.0 == p.op) else { return (1.0, 1.0) };
        let size = p.m.max(p.n) as f64;
        let at = |val: fn(&(f64, f64, f64)) -> f64| interp_by(pts, size, |q| q.0, val).unwrap_or(1.0);
        (at(|q| q.1), at(|q| q.2))
    }

    /// The split configurations on `threads` threads ([`Config`]).
    fn split_configs(&self, threads: usize) -> impl Iterator<Item = Config> + '_ {
        FEEDER_CHOICES.into_iter().filter(move |&f| f == 0 || f < threads).map(move |f| {
            let g = self.gpu_coexec;
            if f == 0 {
                let x = self.feed_xfer(1);
                let shared = Xfer { h2d: x.h2d * g * SHARED_FEEDER, d2h: x.d2h * g * SHARED_FEEDER };
                let eff = self.cpu_coexec * (threads as f64 - SHARED_FEEDER).max(0.5) / threads as f64;
                (0, threads, shared, eff)
            } else {
                let x = self.feed_xfer(f);
                (f, threads - f, Xfer { h2d: x.h2d * g, d2h: x.d2h * g }, self.cpu_coexec)
            }
        })
    }

    /// The split of `ng` (1..n-1) of C's columns to the GPU in configuration `cfg`, each side
    /// times what was learnt for it ([`Rates::drift`]). Each side runs at its shared rate only
    /// while the other runs: once the CPU's columns are done the feeders have the memory system
    /// to themselves, once the GPU's are the engine has its cores back (on the H200 host at
    /// n = 8192 and shares of 0.1..0.7 the CPU side took its share of the CPU alone, not the
    /// 1.2-1.3x the shared rate gave).
    fn split_eval(&self, p: &Problem, ng: usize, cfg: Config) -> SplitPrediction {
        self.split_priced(p, ng, cfg, self.drift(p))
    }

    /// [`Rates::split_eval`] with the learnt `(CPU, GPU)` factors read once by the caller (a
    /// search prices a hundred splits of one problem; each read takes the table's lock).
    fn split_priced(&self, p: &Problem, ng: usize, (f, ct, x, eff): Config, (dc, dg): (f64, f64)) -> SplitPrediction {
        let gc = self.pipe_secs(p, ng, x).0 * dg;
        let cc = self.cpu_cols_secs(p, p.n - ng, ct, eff) * dc;
        let (c, g) = if gc > cc {
            (cc, shared_then_alone(gc, || self.pipe_secs(p, ng, self.feed_xfer(f.max(1))).0 * dg, cc))
        } else {
            (shared_then_alone(cc, || self.cpu_cols_secs(p, p.n - ng, ct, 1.0) * dc, gc), gc)
        };
        SplitPrediction {
            share: ng as f64 / p.n.max(1) as f64,
            us: (g.max(c) + self.split_latency) * 1e6,
            gpu_us: g * 1e6,
            cpu_us: c * 1e6,
            cpu_threads: ct,
            feeders: f,
            gpu_cols_per_s: ng as f64 / g.max(1e-9),
            cpu_cols_per_s: (p.n - ng) as f64 / c.max(1e-9),
        }
    }

    /// Predicted co-execution with the GPU on a fixed `share` of C's columns, in the fastest
    /// configuration for it (a share of 0 is the CPU alone on all threads, 1 the GPU alone).
    pub fn split_at(&self, p: &Problem, share: f64, threads: usize) -> SplitPrediction {
        let threads = threads.max(1);
        let ng = split_cols(share, p.n);
        if ng == 0 || ng >= p.n {
            let pr = self.predict(p, threads);
            let cols = p.n as f64;
            let (us, g, c) = if ng == 0 { (pr.cpu_us, 0.0, pr.cpu_us) } else { (pr.gpu_us, pr.gpu_us, 0.0) };
            return SplitPrediction {
                share: if ng == 0 { 0.0 } else { 1.0 },
                us,
                gpu_us: g,
                cpu_us: c,
                cpu_threads: if ng == 0 { threads } else { 0 },
                feeders: 0,
                gpu_cols_per_s: cols / (pr.gpu_us * 1e-6).max(1e-9),
                cpu_cols_per_s: cols / (pr.cpu_us * 1e-6).max(1e-9),
            };
        }
        let drift = self.drift(p);
        self.split_configs(threads)
            .map(|cfg| self.split_priced(p, ng, cfg, drift))
            .min_by(|a, b| a.us.total_cmp(&b.us))
            .unwrap()
    }

    /// The best split of `p` on `threads` threads (None when C has fewer than two columns): in
    /// each configuration, the column count where the two sides take equally long (the GPU
    /// side grows with its columns, the CPU's shrinks: a bisection), the faster of the two
    /// counts around it; then the fastest configuration. 100-150 evaluations of the model (a
    /// cached choice skips them, [`choose_cached`]).
    pub fn best_split(&self, p: &Problem, threads: usize) -> Option<SplitPrediction> {
        if p.n < 2 || p.m == 0 {
            return None;
        }
        let drift = self.drift(p);
        let in_cfg = |cfg: Config| {
            // (columns, the split there)
            let at = |ng: usize| (ng, self.split_priced(p, ng, cfg, drift));
            let gpu_longer = |s: &SplitPrediction| s.gpu_us >= s.cpu_us;
            let (mut lo, mut hi) = (at(1), at(p.n - 1));
            if gpu_longer(&lo.1) || !gpu_longer(&hi.1) {
                return if gpu_longer(&lo.1) { lo.1 } else { hi.1 };
            }
            while hi.0 - lo.0 > 1 {
                let mid = at(lo.0 + (hi.0 - lo.0) / 2);
                if gpu_longer(&mid.1) {
                    hi = mid;
                } else {
                    lo = mid;
                }
            }
            if lo.1.us <= hi.1.us {
                lo.1
            } else {
                hi.1
            }
        };
        self.split_configs(threads.max(1)).map(in_cfg).min_by(|a, b| a.us.total_cmp(&b.us))
    }

    /// The split with `ng` columns on the GPU in the configuration of `s` (repricing a
    /// remembered choice); None when that configuration does not exist on `threads`.
    fn split_like(&self, p: &Problem, s: &SplitPrediction, threads: usize) -> Option<SplitPrediction> {
        let cfg = self.split_configs(threads.max(1)).find(|c| c.0 == s.feeders && c.1 == s.cpu_threads)?;
        let ng = split_cols(s.share, p.n);
        (ng > 0 && ng < p.n).then(|| self.split_eval(p, ng, cfg))
    }

    /// Whether a split is worth searching for `p`: every operand on the host, something to
    /// compute, and the better side long enough for co-execution's fixed costs to matter
    /// little.
    fn split_worth(&self, p: &Problem, pred: &Prediction) -> bool {
        let best = pred.cpu_us.min(pred.gpu_us);
        p.host.iter().all(|&h| h)
            && p.k > 0
            && p.op == Op::Gemm
            && best > 3.0 * (self.latency + self.split_latency) * 1e6
    }

    /// The model's choice for `p` on `threads` threads: both whole-call predictions, and the
    /// best split when it is predicted at least `HYBLAS_OFFLOAD_SPLIT_GAIN` faster than the
    /// better of the two.
    pub fn choose(&self, p: &Problem, threads: usize) -> Choice {
        let pred = self.predict(p, threads);
        let split = if self.split_worth(p, &pred) { self.best_split(p, threads) } else { None };
        (pred, split.filter(|s| pays(&pred, s)))
    }

    /// The model's predicted time for what [`Rates::choose`] picks, microseconds.
    pub fn choice_us(&self, p: &Problem, threads: usize) -> f64 {
        match self.choose(p, threads) {
            (_, Some(s)) => s.us,
            (pr, None) => pr.cpu_us.min(pr.gpu_us),
        }
    }
}

/// `HYBLAS_OFFLOAD_SPLIT_GAIN` (default 0.15, 0..0.9): how much faster than the better side
/// alone a split must be predicted before the model chooses it. Co-execution's two sides
/// contend for the host's cores and memory in ways the model prices only on average, and a
/// call ends with the later of two noisy sides: a split that promises less than this has
/// measured slower than the better side alone as often as not on the H200 host.
static SPLIT_GAIN: Lazy<f64> = Lazy::new(|| {
    config::float("HYBLAS_OFFLOAD_SPLIT_GAIN").filter(|g| g.is_finite()).map_or(0.15, |g| g.clamp(0.0, 0.9))
});

/// The price (us) at or under which a split is chosen over the better side alone, priced in
/// `pred`: `HYBLAS_OFFLOAD_SPLIT_GAIN` under it.
fn split_needed(pred: &Prediction) -> f64 {
    pred.cpu_us.min(pred.gpu_us) * (1.0 - *SPLIT_GAIN)
}

/// Whether the split `s` is predicted at least `HYBLAS_OFFLOAD_SPLIT_GAIN` faster than the
/// better side alone.
fn pays(pred: &Prediction, s: &SplitPrediction) -> bool {
    s.us <= split_needed(pred)
}

/// Seconds of a side that takes `shared` at its rate beside the other side and `alone()` at its
/// own (never longer), when the other side ends at `other_end`: the part of its work done by
/// then at the shared rate, the rest at its own.
fn shared_then_alone(shared: f64, alone: impl FnOnce() -> f64, other_end: f64) -> f64 {
    if other_end >= shared {
        return shared;
    }
    other_end + (1.0 - other_end / shared) * alone().min(shared)
}

/// Hopper hosts' routine factors before `hyblas tune offload` measures them: the first full H200
/// run (16 CPU threads, DSYRK n x n and left DTRSM n x n against the GEMM the model priced for
/// them). The CPU engine's SYRK is 2.5x its GEMM-equivalent at n = 512 and half of it at
/// 16384; cuBLAS's TRSM takes 1.3..1.6x the GEMM of equal flops (its diagonal blocks run
/// serially), its SYRK about the GEMM.
fn h200_op_factors() -> OpFactors {
    vec![
        (
            Op::Syrk,
            vec![
                (512.0, 2.5, 1.3),
                (1024.0, 1.55, 1.03),
                (2048.0, 0.99, 1.2),
                (4096.0, 0.6, 1.1),
                (8192.0, 0.72, 1.1),
                (16384.0, 0.5, 0.88),
            ],
        ),
        (
            Op::Trsm,
            vec![
                (512.0, 0.76, 1.4),
                (1024.0, 1.0, 1.5),
                (2048.0, 0.6, 1.4),
                (4096.0, 0.53, 1.6),
                (8192.0, 0.57, 1.25),
                (16384.0, 0.49, 1.44),
            ],
        ),
    ]
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

/// Bumped by [`reload`]: the per-thread cache of choices keys on it.
static GENERATION: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Forget loaded rates and what was learnt against them (after `hyblas tune` wrote new ones).
pub fn reload() {
    RATES.write().clear();
    Learned::global().clear();
    GENERATION.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
}

// ---- The decision ----

/// The two predicted times (microseconds) behind a decision.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Prediction {
    pub cpu_us: f64,
    pub gpu_us: f64,
    /// The GPU pipeline's bounding path: "h2d", "compute", "a-panels" or "d2h".
    pub bound: &'static str,
    pub threads: usize,
    /// The (CPU, GPU) factors learnt from timed calls that the two times include
    /// ([`Rates::drift`]; the calibrated model's times are these times over them).
    pub drift: [f64; 2],
}

/// A predicted co-execution.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SplitPrediction {
    /// The GPU's share of C's columns.
    pub share: f64,
    /// The call, and each side (from the call's start), microseconds.
    pub us: f64,
    pub gpu_us: f64,
    pub cpu_us: f64,
    /// The CPU engine's threads, and the threads packing for the GPU (0: one feeder on the
    /// engine's cores).
    pub cpu_threads: usize,
    pub feeders: usize,
    /// Each side's columns per second (the dynamic balance starts from these).
    pub gpu_cols_per_s: f64,
    pub cpu_cols_per_s: f64,
}

/// A choice: both whole-call predictions, and the split when one is chosen.
pub type Choice = (Prediction, Option<SplitPrediction>);

/// What a shape's split search is remembered by: the shape, the threads, the rates (and their
/// generation, [`reload`]) and the pipeline's tile.
type SplitKey = (Problem, usize, usize, (usize, usize));

/// A remembered search: its key, the learnt (CPU, GPU) factors it ran under, the best split it
/// found, and its slack.
type SplitSearch = (SplitKey, [f64; 2], Option<SplitPrediction>, f64);

thread_local! {
    /// The split searches of the last few shapes of this thread: the key, the learnt (CPU, GPU)
    /// factors each was searched under, the best split it found, and its slack (see
    /// [`choose_cached`]). A program calls the same shapes again and again, and a search is
    /// 150-250 evaluations of the model (75-80 us at n = 1024..4096 on this project's VM: 4% of
    /// an offloaded DGEMM n = 1024).
    static SPLITS: std::cell::RefCell<Vec<SplitSearch>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// A remembered split that was chosen is repriced at its share, not searched again, while both
/// learnt factors it was searched under have moved by less than this (relative): a drift this
/// small moves the best share by a point or two.
pub const RESEARCH_DRIFT: f64 = 0.02;

/// [`Rates::choose`] with the split's search remembered per shape on this thread. A split the
/// search found not to pay lay some way (its slack, in ln) above the price that would choose it;
/// factors that move by at most x (ln) move that gap by at most 2x, so while they have moved by
/// under half the slack the answer stands without a search or a price (on the H200 host the
/// best split of an offloaded GEMM lies 20-40% above that price: the search runs once per shape
/// and again only after the host drifted by 10-20%).
pub(crate) fn choose_cached(rates: &Arc<Rates>, p: &Problem, threads: usize) -> Choice {
    let pred = rates.predict(p, threads);
    if !rates.split_worth(p, &pred) {
        return (pred, None);
    }
    let generation = GENERATION.load(std::sync::atomic::Ordering::Relaxed);
    let key = (
        *p,
        threads,
        Arc::as_ptr(rates) as usize ^ generation.rotate_left(48),
        crate::hybrid::offload::tile_for(p.m, p.n, p.k, p.elem),
    );
    let moved = |then: &[f64; 2]| pred.drift.iter().zip(then).map(|(a, b)| (a / b).ln().abs()).fold(0.0, f64::max);
    let hit = SPLITS.with(|c| {
        c.borrow().iter().find(|e| e.0 == key).and_then(|e| {
            let m = moved(&e.1);
            if e.3 > 0.0 && 2.0 * m < e.3 {
                Some(None)
            } else if e.3 == 0.0 && m < RESEARCH_DRIFT {
                Some(e.2)
            } else {
                None
            }
        })
    });
    let best = match hit {
        Some(prev) => prev.and_then(|s| rates.split_like(p, &s, threads)),
        None => {
            let best = rates.best_split(p, threads);
            let slack = best.map_or(f64::INFINITY, |s| (s.us / split_needed(&pred)).ln().max(0.0));
            SPLITS.with(|c| {
                let mut c = c.borrow_mut();
                c.retain(|e| e.0 != key);
                if c.len() >= 8 {
                    c.remove(0);
                }
                c.push((key, pred.drift, best, slack));
            });
            best
        }
    };
    (pred, best.filter(|s| pays(&pred, s)))
}

// ---- What the planner learns from the calls it times ----
//
// `hyblas tune offload` calibrates the model once; the host then drifts (on the lent H200
// hosts the CPU ran 15-25% faster during a benchmark than during the calibration a minute
// before it, and the GPU pipeline, whose copies the CPU packs, 10-30%), and the fitted pipeline
// leaves 5-15% at single sizes. So every CPU-only or GPU-only call the planner times adds its
// measured time over the calibrated prediction to a running factor per routine, precision,
// side and octave of size, which later predictions at that size include: a history-based
// correction on top of the parametric model, as StarPU's history models do. Co-executed calls
// teach nothing: each side shares the machine with the other, and what a side takes then is
// not what it takes alone; a split is priced with its sides' whole-call factors.

/// Environment switch (`0` / `off` / `false`: no learning, the calibrated model alone).
pub const LEARN_KEY: &str = "HYBLAS_OFFLOAD_LEARN";

/// The smallest weight of a new call in a cell: it follows a drift within about ten calls,
/// and one call's noise (10-17% on the H200 host) moves it by under 2%.
pub const RATE_FLOOR: f64 = 0.1;

/// Calls measured more than this many times faster or slower than predicted are not learnt
/// from (a first touch's page faults, another program taking the cores).
pub const MAX_RATIO: f64 = 3.0;

/// A size without calls of its own takes the factor of the nearest size with some, up to this
/// many octaves away (a factor learnt at n = 512, where fixed costs dominate, says little
/// about n = 8192).
pub const REACH_OCTAVES: i32 = 2;

static LEARNING: Lazy<bool> = Lazy::new(|| config::enabled(LEARN_KEY));

/// Whether learning is on (`HYBLAS_OFFLOAD_LEARN`).
pub fn learning() -> bool {
    *LEARNING
}

/// A cell: routine, precision, side, octave of size (round(log2 cbrt(m n k))).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Key {
    op: Op,
    prec: char,
    gpu: bool,
    octave: i32,
}

impl Key {
    fn of(p: &Problem, side: Side) -> Key {
        Key { op: p.op, prec: p.prec, gpu: side == Side::Gpu, octave: p.size().max(1.0).log2().round() as i32 }
    }
}

/// One cell: ln of its factor, and how many calls made it.
#[derive(Clone, Copy, Debug)]
struct LnCell {
    ln: f64,
    calls: u32,
}

/// The learnt factors (one table per process, [`Learned::global`]; tests and offline scoring
/// make their own).
#[derive(Debug, Default)]
pub struct Learned {
    cells: Mutex<HashMap<Key, LnCell>>,
}

/// Two tables are the same only if they are one table (the rates that carry one compare
/// equal by their figures and by which table they consult).
impl PartialEq for Learned {
    fn eq(&self, other: &Learned) -> bool {
        std::ptr::eq(self, other)
    }
}

static GLOBAL: Lazy<Arc<Learned>> = Lazy::new(|| Arc::new(Learned::default()));

impl Learned {
    /// The process's table, the one the planner's rates consult and its calls feed.
    pub fn global() -> &'static Arc<Learned> {
        &GLOBAL
    }

    /// ln of the factor for `key`: its own cell's, else the nearest populated cell's within
    /// [`REACH_OCTAVES`] (the mean of two equally near), else none.
    fn ln_at(cells: &HashMap<Key, LnCell>, key: Key) -> Option<f64> {
        if let Some(c) = cells.get(&key) {
            return Some(c.ln);
        }
        (1..=REACH_OCTAVES).find_map(|d| {
            let near: Vec<f64> = [key.octave - d, key.octave + d]
                .into_iter()
                .filter_map(|o| cells.get(&Key { octave: o, ..key }).map(|c| c.ln))
                .collect();
            (!near.is_empty()).then(|| near.iter().sum::<f64>() / near.len() as f64)
        })
    }

    /// The (CPU, GPU) factors for `p` (1 where nothing was learnt).
    pub fn factors(&self, p: &Problem) -> (f64, f64) {
        let cells = self.cells.lock();
        let at = |side| Self::ln_at(&cells, Key::of(p, side)).map_or(1.0, f64::exp);
        (at(Side::Cpu), at(Side::Gpu))
    }

    /// Learn from one call of `p` on `side` that took `ratio` times the calibrated model's
    /// prediction. A new cell starts from the factor it borrowed; the calibrated model counts
    /// as one call (the first call moves a cell half way), and a call's weight never falls
    /// under [`RATE_FLOOR`].
    pub fn observe(&self, p: &Problem, side: Side, ratio: f64) {
        if !(1.0 / MAX_RATIO..=MAX_RATIO).contains(&ratio) {
            return;
        }
        let key = Key::of(p, side);
        let mut cells = self.cells.lock();
        let start = Self::ln_at(&cells, key).unwrap_or(0.0);
        let c = cells.entry(key).or_insert(LnCell { ln: start, calls: 0 });
        c.calls += 1;
        let w = (1.0 / (c.calls as f64 + 1.0)).max(RATE_FLOOR);
        c.ln += w * (ratio.ln() - c.ln);
    }

    /// Forget everything (new rates were loaded: the factors were relative to the old ones).
    pub fn clear(&self) {
        self.cells.lock().clear();
    }

    /// Calls learnt from, over all cells.
    pub fn calls(&self) -> u64 {
        self.cells.lock().values().map(|c| c.calls as u64).sum()
    }
}

#[cfg(test)]
#[path = "offload_tests.rs"]
mod tests;
