//! Split-k GEMM for small outputs (seed 000): host side of `kernels/gemm_splitk.cu`.
//!
//! C := alpha*op(A)*op(B) + beta*C where m*n is small and k long: the k dimension is cut into
//! chunks, each team of threads computes a partial m x n product, and the partials are reduced
//! either in a fixed order through the stream workspace (deterministic, the default) or with
//! atomics (when the caller allows it).
//!
//! - Kernel configuration ([`Config`]) from (m, n, precision) alone: the direct kernel for
//!   m, n <= 4 (one warp per chunk, no shared memory), else a shared-memory tile kernel with
//!   16x16, 32x32 or 64x64 output tiles (several tiles cover larger outputs) chosen by a fixed
//!   cost rule. Every one of the 9 op(A) x op(B) combinations maps onto 4 layouts (conjugation
//!   is a run-time flag).
//! - Deterministic chunks ([`det_chunks`]): the chunk length L is a multiple of 128 from (m, n,
//!   k, configuration) only, so the summation order, and the bits, are the same on every run,
//!   block shape and GPU (no SM count enters it). The kernel comments give the order.
//! - Atomic chunks ([`atomic_chunks`]): the seed's eq. 7 with the compiled kernel's registers and
//!   shared memory ([`occupancy::active_blocks`]): exactly one wave of teams.
//! - [`predict`]: the planner's model, split-k time against the vendor GEMM's, with constants
//!   from `hyblas tune` ([`calibrate`], stored as `splitk <key> <value>` lines in the recipe file)
//!   or built in for Hopper.

use super::driver::{check, sys};
use super::kernels::{Args, Function, Launch};
use super::occupancy;
use super::runtime::DeviceProps;
use super::timing::Timer;
use super::tune::{self, KernelSpec, TuneCase};
use super::{cdiv, elem, DMat, DeviceBuffer, Exec, GpuError, In, Result, Runtime};
use crate::types::{Scalar, Trans};
use once_cell::sync::{Lazy, OnceCell};
use parking_lot::Mutex;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// How the k-chunk partials are combined.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reduction {
    /// Partials to the workspace, reduced in a fixed order: bitwise reproducible.
    Deterministic,
    /// Partials added into C with atomics (cuBLAS atomics mode allowed, or
    /// `HYBLAS_DETERMINISTIC=0`).
    Atomic,
}

/// The planner's view of one GEMM call on the GPU: split-k or the vendor GEMM, with the
/// predicted times (microseconds) behind the choice.
#[derive(Clone, Debug)]
pub struct Prediction {
    pub splitk: bool,
    pub splitk_us: f64,
    pub vendor_us: f64,
    /// One line for the trace: which model (tuned or built-in) and its inputs.
    pub why: String,
}

// ---- Configurations and chunk rules (must match kernels/gemm_splitk.cu) ----

/// Pipeline stages of the tile kernels (`SK_NS`).
const NSTAGE: i64 = 3;
/// Most rows of op(A) / columns of op(B) the direct kernel takes (`SK_DMAX`).
const DIRECT_MAX: i64 = 4;
/// Largest m and n split-k takes; larger outputs are the vendor GEMM's (Unsupported).
pub const MAX_MN: i64 = 256;
/// Chunk lengths on the deterministic path are multiples of this (every KT divides it).
const L_QUANTUM: i64 = 128;

/// The kernel configurations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Config {
    /// m, n <= 4: a warp per chunk straight from global memory (`gemm_sk_direct`).
    Direct,
    /// 16x16 tiles, 64 threads (2x2 outputs each) per team (`gemm_sk16`).
    T16,
    /// 32x32 tiles, 64 threads (4x4 each) (`gemm_sk32`).
    T32,
    /// 64x64 tiles, 256 threads (4x4 each) (`gemm_sk64`).
    T64,
    /// Double and complex double on FP64 tensor cores (sm_80+): a warp holds an 8x8, 16x16 or
    /// 32x32 output tile, its mma fragments loaded straight from global memory; a block of
    /// `FRAG_WARPS` warps per k-chunk, the chunks added inside the same kernel (`gemm_skm8` etc.).
    /// M1 and M4 fold k into the fragment for outputs up to 1x1 and 4x4: 8 and 2 k-segments
    /// share the 8 fragment rows, so every lane loads data (`gemm_skm1`, `gemm_skm4`).
    M1,
    M4,
    M8,
    M16,
    M32,
    /// Single and complex single on CUDA cores, the same plan as the tensor-core kernels: a
    /// warp holds a 2x2 .. 16x16 output tile (16x16 tiles beyond), each lane group of it a 2x2
    /// or 4x4 subtile whose operands it loads straight from global memory with 16-byte loads,
    /// several lanes per group taking different k; a block of `FRAG_WARPS` warps per k-chunk and
    /// the chunks added in the same kernel (`gemm_skf2` .. `gemm_skf16`).
    F2,
    F4,
    F8,
    F16,
}

impl Config {
    pub const ALL: [Config; 13] = [
        Config::Direct,
        Config::T16,
        Config::T32,
        Config::T64,
        Config::M1,
        Config::M4,
        Config::M8,
        Config::M16,
        Config::M32,
        Config::F2,
        Config::F4,
        Config::F8,
        Config::F16,
    ];

    /// A fragment (tensor-core) configuration.
    pub fn is_mma(self) -> bool {
        matches!(self, Config::M1 | Config::M4 | Config::M8 | Config::M16 | Config::M32)
    }
    /// An FFMA fragment configuration (single, complex single).
    pub fn is_ffma(self) -> bool {
        matches!(self, Config::F2 | Config::F4 | Config::F8 | Config::F16)
    }
    /// A fragment kernel of either kind: fixed blocks of `FRAG_WARPS` warps, one kernel that
    /// also adds the chunks (`gemm_frag`).
    pub fn is_frag(self) -> bool {
        self.is_mma() || self.is_ffma()
    }
    /// Lane subtile edge of an FFMA configuration (`SKF_ENTRY` in the kernel file).
    fn ffma_sub(self) -> i64 {
        if self == Config::F2 {
            2
        } else {
            4
        }
    }
    /// k-segments folded into a fragment (1 without a fold).
    fn fold(self) -> i64 {
        match self {
            Config::M1 => 8,
            Config::M4 => 2,
            _ => 1,
        }
    }
    /// Whether the kernel exists for precision `T` (fragment kernels: double, and complex
    /// double up to 16x16).
    pub fn has<T: Scalar>(self) -> bool {
        match self {
            Config::M1 | Config::M4 | Config::M8 | Config::M16 => matches!(T::PREFIX, 'd' | 'z'),
            Config::M32 => T::PREFIX == 'd',
            Config::F2 | Config::F4 | Config::F8 | Config::F16 => matches!(T::PREFIX, 's' | 'c'),
            _ => true,
        }
    }

    /// Output tile edge (the direct kernel covers up to 4 x 4).
    pub fn tile(self) -> i64 {
        match self {
            Config::Direct => DIRECT_MAX,
            Config::T16 => 16,
            Config::T32 => 32,
            Config::T64 => 64,
            Config::M1 => 1,
            Config::M4 => 4,
            Config::M8 => 8,
            Config::M16 => 16,
            Config::M32 => 32,
            Config::F2 => 2,
            Config::F4 => 4,
            Config::F8 => 8,
            Config::F16 => 16,
        }
    }
    /// Threads of one team (blockDim.x).
    pub fn team_threads(self) -> u32 {
        match self {
            Config::T16 | Config::T32 => 64,
            Config::T64 => 256,
            _ => 32,
        }
    }
    /// Bytes of one pipeline stage (both operands): `SK16_SB` etc.
    fn stage_bytes(self) -> i64 {
        match self {
            Config::T16 | Config::T32 => 8192,
            Config::T64 => 16384,
            _ => 0,
        }
    }
    /// k values per step: KT of a tile kernel, one warp's 32 units in the direct kernel.
    pub fn kt(self, es: i64) -> i64 {
        match self {
            Config::Direct => 32 * (16 / es),
            // One superstep (4 * 16 bytes of k per fold segment) for each of the block's warps.
            Config::M1 | Config::M4 | Config::M8 | Config::M16 | Config::M32 => {
                4 * (16 / es) * self.fold() * FRAG_WARPS
            }
            // One step of each warp: KL = 32 / (lane groups) lanes of 16 bytes of k each.
            Config::F2 | Config::F4 | Config::F8 | Config::F16 => {
                let groups = (self.tile() / self.ffma_sub()).pow(2);
                FRAG_WARPS * (32 / groups) * (16 / es)
            }
            _ => self.stage_bytes() / (2 * self.tile() * es),
        }
    }
    /// Dynamic shared memory of one team (bytes): `SK_NS * STAGE * sizeof(T)` in the kernel,
    /// each operand's stage the larger of its two layouts.
    pub fn team_smem(self, es: i64) -> u32 {
        if self == Config::Direct || self.is_frag() {
            return 0;
        }
        let (r, kt, v) = (self.tile(), self.kt(es), 16 / es);
        let stage = (r * (kt + v)).max(kt * (r + v));
        (NSTAGE * 2 * stage * es) as u32
    }
    fn kernel(self) -> &'static str {
        match self {
            Config::Direct => "gemm_sk_direct",
            Config::T16 => "gemm_sk16",
            Config::T32 => "gemm_sk32",
            Config::T64 => "gemm_sk64",
            Config::M1 => "gemm_skm1",
            Config::M4 => "gemm_skm4",
            Config::M8 => "gemm_skm8",
            Config::M16 => "gemm_skm16",
            Config::M32 => "gemm_skm32",
            Config::F2 => "gemm_skf2",
            Config::F4 => "gemm_skf4",
            Config::F8 => "gemm_skf8",
            Config::F16 => "gemm_skf16",
        }
    }
    fn spec(self) -> &'static KernelSpec {
        match self {
            Config::Direct => &SK_DIRECT,
            Config::T16 => &SK16,
            Config::T32 => &SK32,
            Config::T64 => &SK64,
            _ => &SKM,
        }
    }
    /// Tiles along m and n.
    pub fn tiles(self, m: i64, n: i64) -> (i64, i64) {
        (cdiv(m, self.tile()), cdiv(n, self.tile()))
    }
}

/// FP64 tensor cores for the double 32x32 and 64x64 tiles: sm_80 and later, unless
/// `HYBLAS_SPLITK_DMMA=0` (which changes the summation order of those shapes).
static DMMA: Lazy<bool> = Lazy::new(|| crate::config::threshold("HYBLAS_SPLITK_DMMA", 1) != 0);

/// Whether `cfg` runs on FP64 tensor cores for precision `T` on this device.
pub fn uses_dmma<T: Scalar>(p: &DeviceProps, cfg: Config) -> bool {
    kernel_name::<T>(p, cfg).ends_with('m')
}

/// The kernel (without precision and layout) that runs `cfg` for `T` on this device: also the
/// name of the compile unit's configuration (`kernels::Unit::splitk`).
fn kernel_name<T: Scalar>(p: &DeviceProps, cfg: Config) -> &'static str {
    kernel_name_on::<T>(p.cc, cfg)
}

fn kernel_name_on<T: Scalar>(cc: (i32, i32), cfg: Config) -> &'static str {
    let dmma = T::PREFIX == 'd' && matches!(cfg, Config::T32 | Config::T64) && cc.0 >= 8 && *DMMA;
    match (cfg, dmma) {
        (Config::T32, true) => "gemm_sk32m",
        (Config::T64, true) => "gemm_sk64m",
        _ => cfg.kernel(),
    }
}

/// The configurations (kernel names, [`kernel_name`]) that split-k calls of `T` reach on a
/// device of compute capability `cc` under this process's settings (`HYBLAS_SPLITK_MMA`,
/// `HYBLAS_SPLITK_DMMA`): the units `hyblas compile` compiles ahead. Every output shape split-k
/// takes is asked (the choice is a function of m and n alone).
pub fn reachable_variants<T: Scalar>(cc: (i32, i32)) -> Vec<&'static str> {
    let frag = frag_on::<T>(cc);
    let mut v: Vec<&'static str> = Vec::new();
    for m in 1..=MAX_MN {
        for n in 1..=MAX_MN {
            let name = kernel_name_on::<T>(cc, config_on::<T>(m, n, frag));
            if !v.contains(&name) {
                v.push(name);
            }
        }
    }
    v
}

fn smem16(_: u32, ty: u32, es: u32) -> u32 {
    ty * Config::T16.team_smem(es as i64)
}
fn smem32(_: u32, ty: u32, es: u32) -> u32 {
    ty * Config::T32.team_smem(es as i64)
}
fn smem64(_: u32, ty: u32, es: u32) -> u32 {
    ty * Config::T64.team_smem(es as i64)
}

/// Block shapes: Tx is the team (fixed per configuration), Ty the teams per block (each with
/// its own shared memory and named barrier, so Ty never changes a result). Recipe keys
/// `dgemm_sk16` etc.
pub static SK_DIRECT: KernelSpec =
    KernelSpec { name: "gemm_sk_direct", tx: &[32], ty: &[1, 2, 4, 8, 16], smem: tune::no_smem };
pub static SK16: KernelSpec = KernelSpec { name: "gemm_sk16", tx: &[64], ty: &[1, 2, 4, 8], smem: smem16 };
pub static SK32: KernelSpec = KernelSpec { name: "gemm_sk32", tx: &[64], ty: &[1, 2, 4, 8], smem: smem32 };
pub static SK64: KernelSpec = KernelSpec { name: "gemm_sk64", tx: &[256], ty: &[1, 2, 4], smem: smem64 };
/// The fragment kernels: a fixed block of `FRAG_WARPS` warps (the warp count is part of the
/// summation order, so nothing is tuned).
pub static SKM: KernelSpec = KernelSpec { name: "gemm_skm", tx: &[32], ty: &[FRAG_WARPS as u32], smem: tune::no_smem };
/// Warps per block of the fragment kernels (`SKM_WARPS`).
const FRAG_WARPS: i64 = 8;
/// Most partials one lane of the fragment kernels' cross-block reduction adds (`SKM_BATCH`: its
/// loads in flight). Part of the summation order: a word group gets the power of two of lanes
/// >= G / RED_LOADS, at most [`RED_LANES`].
const RED_LOADS: i64 = 8;
/// Most lanes per word group of the cross-block reduction (`SK_RED_LANES`; a group's lanes are
/// added by a fixed tree, through shared memory across warps and by shuffles within one).
const RED_LANES: i64 = 64;
/// Most blocks that share the cross-block reduction of one tile (`HYBLAS_SPLITK_REDUCERS`,
/// default 64; the kernel asks for one per pass of 256 lane-groups, and never more than half of
/// the blocks the device holds at once). It does not change the summation order, only how many
/// blocks (those of the last chunks) take part: 1 makes a single block add everything.
static REDUCERS: Lazy<i64> = Lazy::new(|| crate::config::threshold("HYBLAS_SPLITK_REDUCERS", 64).max(1) as i64);
thread_local! {
    static REDUCERS_FORCED: std::cell::Cell<Option<i64>> = const { std::cell::Cell::new(None) };
}

/// Run `f` with this thread's split-k calls using at most `r` reducer blocks per tile (the tests
/// that check that the count does not change the bits).
pub fn with_reducers<R>(r: i64, f: impl FnOnce() -> R) -> R {
    let old = REDUCERS_FORCED.with(|c| c.replace(Some(r.max(1))));
    let out = f();
    REDUCERS_FORCED.with(|c| c.set(old));
    out
}

/// The cross-block reduction of G partials of `words` words (`sk_cross`): (lq, passes), Q = 2^lq
/// lanes per word group and the passes of 256 threads that cover the groups; a pass is one
/// reducer block's share.
fn cross_plan(g: i64, words: i64, word_bytes: i64) -> (i64, i64) {
    // Words per load: the most that fit 16 bytes and divide `words` (`sk_vw`).
    let mut vw = 16 / word_bytes;
    while vw > 1 && words % vw != 0 {
        vw /= 2;
    }
    let q = (cdiv(g.max(1), RED_LOADS) as u64).next_power_of_two().min(RED_LANES as u64) as i64;
    let lq = q.trailing_zeros() as i64;
    let per_pass = 32 * FRAG_WARPS / q;
    (lq, cdiv(words / vw, per_pass))
}

/// The kernel's `cross` argument: lq | nred << 8, with nred reducer blocks: one per pass, at most
/// [`REDUCERS`] (or the [`with_reducers`] override), G, and half of `resident` (blocks the
/// device holds at once) so that blocks still streaming always find room beside the waiting
/// ones. (Waiting reducers poll without sleeping: a sleep of 64 or 256 ns between polls was no
/// better on an H200, session 11.)
fn cross_arg(g: i64, words: i64, word_bytes: i64, resident: i64) -> i32 {
    let (lq, passes) = cross_plan(g, words, word_bytes);
    let cap = REDUCERS_FORCED.with(|c| c.get()).unwrap_or(*REDUCERS);
    let nred = passes.min(cap).min(g).min(resident / 2).max(1);
    (lq | nred << 8) as i32
}
/// The reduction: Tx outputs per block, 32 partial sums each (Ty = 32 is part of the order).
pub static SK_REDUCE: KernelSpec =
    KernelSpec { name: "gemm_sk_reduce", tx: &[8, 16, 32], ty: &[32], smem: tune::no_smem };
/// C := beta*C: one thread per element.
pub static SK_SCALE: KernelSpec =
    KernelSpec { name: "gemm_sk_scale", tx: &[64, 128, 256, 512], ty: &[1], smem: tune::no_smem };

fn round_up(a: i64, q: i64) -> i64 {
    cdiv(a, q) * q
}

/// The configuration for an m x n output of `T` (m, n >= 1): a function of (m, n, precision)
/// only, so that the summation order does not depend on the device. The direct kernel for
/// m, n <= 4; else the tile size with the least modelled time (bytes at 4 TB/s against FMAs at
/// Hopper's effective CUDA-core rate, counting re-read rows and the FMAs of partial tiles).
pub fn config<T: Scalar>(m: i64, n: i64) -> Config {
    config_on::<T>(m, n, *MMA)
}

/// The fragment kernels (`HYBLAS_SPLITK_MMA`, default 1): tensor-core ones for double and
/// complex double (they need sm_80, so on older devices [`gemm`] takes the tile kernels), FFMA
/// ones for single and complex single. 0 brings back the shared-memory tile kernels everywhere.
static MMA: Lazy<bool> = Lazy::new(|| crate::config::threshold("HYBLAS_SPLITK_MMA", 1) != 0);

/// Whether [`gemm`] runs the fragment kernels for `T` on a device of compute capability `cc`.
pub fn frag_on<T: Scalar>(cc: (i32, i32)) -> bool {
    *MMA && (matches!(T::PREFIX, 's' | 'c') || cc.0 >= 8)
}

/// [`config`] with the fragment kernels allowed or not: for double the smallest warp tile
/// (8, 16, 32) covering max(m, n), 32x32 tiles beyond; complex double 8x8 or 16x16 tiles;
/// single and complex single 2x2 .. 16x16 tiles.
pub fn config_on<T: Scalar>(m: i64, n: i64, mma: bool) -> Config {
    if mma {
        // The smallest fragment tile this precision has that covers max(m, n), else its largest
        // (several of them then cover the output): `Config::ALL` lists each family by edge.
        let e = m.max(n);
        let ladder = Config::ALL.into_iter().filter(|c| c.is_frag() && c.has::<T>());
        if let Some(c) = ladder.reduce(|best, c| if best.tile() >= e { best } else { c }) {
            return c;
        }
    }
    if m <= DIRECT_MAX && n <= DIRECT_MAX {
        return Config::Direct;
    }
    let es = elem::<T>() as f64;
    // Real FMAs per second a tile kernel gets (about half of Hopper's CUDA-core peak).
    let fma_rate = if std::mem::size_of::<T::Real>() == 8 { 8e12 } else { 16e12 };
    let cost = |c: Config| {
        let (tm, tn) = c.tiles(m, n);
        let bytes = es * (tn * m + tm * n) as f64;
        let fmas = (tm * tn * c.tile() * c.tile()) as f64 * if T::IS_COMPLEX { 4.0 } else { 1.0 };
        let (mem, fma) = (bytes / 4e12, fmas / fma_rate);
        // The bound, plus a quarter of the other side (it never overlaps perfectly).
        mem.max(fma) + 0.25 * mem.min(fma)
    };
    let mut best = Config::T16;
    for c in [Config::T32, Config::T64] {
        // Strictly better by 2%: ties go to the smaller tile (more teams, shorter tail).
        if cost(c) < 0.98 * cost(best) {
            best = c;
        }
    }
    best
}

/// Most chunks per tile on the deterministic path (`HYBLAS_SPLITK_CHUNKS`, default 1024, for
/// the 16x16 and 32x32 tiles; twice that for the direct kernel, half for 64x64). About one
/// wave of teams on an H100/H200. Changing it changes the summation order.
static MAX_CHUNKS: Lazy<i64> = Lazy::new(|| crate::config::threshold("HYBLAS_SPLITK_CHUNKS", 1024).max(1) as i64);
/// Least k per chunk relative to the output: L >= `HYBLAS_SPLITK_PART_RATIO` * m*n/(m+n)
/// (default 32), so the partials written and read again stay about 2*(1/32) of the input read.
static PART_RATIO: Lazy<i64> = Lazy::new(|| crate::config::threshold("HYBLAS_SPLITK_PART_RATIO", 32).max(1) as i64);

/// Deterministic chunking (L, G): G chunks of L (the last shorter). A function of (m, n, k,
/// precision, configuration) and the settings above only, never of the device.
pub fn det_chunks<T: Scalar>(cfg: Config, m: i64, n: i64, k: i64) -> (i64, i64) {
    if cfg.is_frag() {
        // One wave: the 32x32 tensor-core tile fits one block per SM (MINB = 1 in the kernel
        // file), the others two; a second, partial wave would cost more than the chunks save.
        let max_blocks = if cfg == Config::M32 { (*MMA_CHUNKS / 2).max(1) } else { *MMA_CHUNKS };
        return mma_chunks(cfg, elem::<T>() as i64, m, n, k, max_blocks);
    }
    det_chunks_with(cfg, m, n, k, *MAX_CHUNKS, *PART_RATIO)
}

/// Most blocks (over all tiles) of a fragment kernel on the deterministic path
/// (`HYBLAS_SPLITK_MMA_CHUNKS`, default 264: one wave of 2 blocks per SM on the 132 SMs of an
/// H100 SXM or H200; half of it for the 32x32 tensor-core tile, which fits one block per SM).
/// A constant, not the device's SM count, so the bits are the same on every GPU of one
/// architecture. It was 256, which left 8 SMs with one block (4 idle for the 32x32 tile): on
/// an H200 (session 10, same run) 264 took ZGEMM 32x32 T,N k = 262144 from 113.0 to 96.0 us
/// (atomic 94.1), CGEMM 32x32 T,N 2^21 from 941 to 817 (atomic 814) and DGEMM 32x32 T,N
/// k = 10^6+3 from 194.8 to 179.8 (atomic 177.2); 384 and 512 were slower everywhere. Over the
/// 446 points of m, n <= 32 and k >= 2^16 it was as fast in geometric mean (0.999) and had
/// fewer points over 5% slower than the atomic path (62 against 69); calls of ~10 us with
/// k = 100003 and 8x8 or 16x16 outputs lost 6-18% (with the reduction of session 10, in
/// levels of groups). Changing it changes the summation order.
static MMA_CHUNKS: Lazy<i64> = Lazy::new(|| crate::config::threshold("HYBLAS_SPLITK_MMA_CHUNKS", 264).max(1) as i64);

/// Least steps per block of a fragment kernel on the deterministic path
/// (`HYBLAS_SPLITK_MIN_STEPS`, default 1). It was 4 while the cross-block reduction cost a
/// level per 16 blocks, then 2 (session 11: CGEMM 4x4 k = 65536 8.5 -> 7.4 us, SGEMM 4x4
/// k = 100003 11.7 -> 8.8, DGEMM 16x64 k = 4096 10.1 -> 8.5 against 4). Since the reducers
/// wait on the partial words themselves (session 12, H200, same run), 1 against 2: CGEMM 4x4
/// k = 12345 7.2 -> 5.9 us, SGEMM 4x4 k = 12345 7.1 -> 6.2, k = 100003 7.8 -> 6.4, and the
/// other 28 points of the A/B list within 1%. Changing it changes the summation order.
static MIN_STEPS: Lazy<i64> = Lazy::new(|| crate::config::threshold("HYBLAS_SPLITK_MIN_STEPS", 1).max(1) as i64);

/// Fragment kernels: L a multiple of the block's step (`kt`: one superstep per warp), at
/// least [`MIN_STEPS`] steps, and at most `max_blocks` blocks over all tiles (one chunk per
/// tile where the tiles alone fill them). It used to allow 16 chunks per tile whatever the
/// tile count, which made 2 to 4 waves of 128 x 128 outputs (16 to 64 tiles) where the atomic
/// path runs one: on an H200 (session 11) DGEMM 128x128 k = 4096 took 22.5 us against the
/// atomic path's 15.4.
fn mma_chunks(cfg: Config, es: i64, m: i64, n: i64, k: i64, max_blocks: i64) -> (i64, i64) {
    let (tm, tn) = cfg.tiles(m, n);
    let q = cfg.kt(es);
    let cap = (max_blocks / (tm * tn)).max(1);
    let l = (*MIN_STEPS * q).max(round_up(cdiv(k.max(1), cap), q));
    (l, cdiv(k.max(1), l))
}

fn det_chunks_with(cfg: Config, m: i64, n: i64, k: i64, max_chunks: i64, ratio: i64) -> (i64, i64) {
    let (tm, tn) = cfg.tiles(m, n);
    let cap = match cfg {
        Config::Direct => 2 * max_chunks,
        Config::T16 | Config::T32 => max_chunks,
        Config::T64 => (max_chunks / 2).max(1),
        // Not used: the fragment kernels chunk with `mma_chunks`.
        _ => max_chunks,
    };
    let cap = (cap / (tm * tn)).max(32);
    let lmin = round_up((ratio * m * n / (m + n)).max(L_QUANTUM), L_QUANTUM);
    let l = lmin.max(round_up(cdiv(k.max(1), cap), L_QUANTUM));
    (l, cdiv(k.max(1), l))
}

/// Atomic chunking (L, p): p chunks per tile so that p x tiles teams make one wave of
/// `wave_teams` (eq. 7: SMs x resident teams per SM), each at least one step long.
pub fn atomic_chunks(cfg: Config, es: i64, m: i64, n: i64, k: i64, wave_teams: u64) -> (i64, i64) {
    let (tm, tn) = cfg.tiles(m, n);
    let kq = cfg.kt(es);
    let p = ((wave_teams as i64) / (tm * tn)).max(1).min(cdiv(k.max(1), kq));
    let l = round_up(cdiv(k.max(1), p), kq);
    (l, cdiv(k.max(1), l))
}

// ---- Launch helpers ----

const MODE_PART: i32 = 0;
const MODE_STORE: i32 = 1;
const MODE_ATOMIC: i32 = 2;

/// The kernels' `mode`: atomic adds into C, C written by the one chunk, or partials reduced
/// across the chunks.
fn launch_mode(atomic: bool, chunks: i64) -> i32 {
    if atomic {
        MODE_ATOMIC
    } else if chunks == 1 {
        MODE_STORE
    } else {
        MODE_PART
    }
}

/// The kernels' `vec`: bit 0 A, bit 1 B takes the 16-byte loads (base and leading dimension
/// aligned).
fn vec_bits<T: Scalar>(a: DMat, b: DMat) -> i32 {
    a.aligned16::<T>() as i32 | (b.aligned16::<T>() as i32) << 1
}

/// Layout suffix: op(A) N -> 'n' (k-strided), T/C -> 't'; op(B) N -> 'n' (k-contiguous), T/C -> 't'.
fn layout(transa: Trans, transb: Trans) -> &'static str {
    match (transa == Trans::No, transb == Trans::No) {
        (true, true) => "_nn",
        (true, false) => "_nt",
        (false, true) => "_tn",
        (false, false) => "_tt",
    }
}

/// How the fragment kernels read the operands: a single contiguous row of op(A) (op(A) = N,
/// m = 1, lda = 1) as k-contiguous, and so a single column of op(B) (op(B) = T/C, n = 1,
/// ldb = 1): 16-byte loads where the strided layout would give each lane one element. The
/// row stride of a single k-contiguous row is never used, so it is 0 and its alignment does not
/// matter. (Before, SGEMM N,N 1x1 with ldb = k = 10^6+3 counted as unaligned: the planner
/// priced it with the unaligned factors and sent it to cuBLAS, 10.4 us on an H200 against
/// split-k's 6.3, session 12.)
fn k_contiguous(
    mut transa: Trans,
    mut transb: Trans,
    m: i64,
    n: i64,
    mut a: DMat,
    mut b: DMat,
) -> (Trans, Trans, DMat, DMat) {
    // (Conjugation is taken from the caller's op before this.)
    if m == 1 && transa == Trans::No && a.ld == 1 {
        transa = Trans::Trans;
    }
    if m == 1 && transa != Trans::No {
        a.ld = 0;
    }
    if n == 1 && transb != Trans::No && b.ld == 1 {
        transb = Trans::No;
    }
    if n == 1 && transb == Trans::No {
        b.ld = 0;
    }
    (transa, transb, a, b)
}

/// Whether the split-k kernels read both operands with 16-byte loads (both aligned, as the
/// fragment kernels read them: [`k_contiguous`]); else they read element by element, which the
/// planner prices with the measured unaligned factors.
pub fn vector_loads<T>(transa: Trans, transb: Trans, m: i64, n: i64, a: DMat, b: DMat) -> bool {
    let (_, _, a, b) = k_contiguous(transa, transb, m, n, a, b);
    a.aligned16::<T>() && b.aligned16::<T>()
}

fn class3(m: i64, n: i64, k: i64) -> u64 {
    tune::size_class(m as u64) ^ tune::size_class(n as u64).rotate_left(21) ^ tune::size_class(k as u64).rotate_left(42)
}

/// The shape a kernel gets: Tx is fixed by the spec (a forced shape brings only its Ty), Ty the
/// nearest allowed value that the function can run, lowered until the block fits on an SM.
fn fit(p: &DeviceProps, spec: &KernelSpec, f: &Function, es: u32, (_, ty): (u32, u32)) -> (u32, u32) {
    let tx = spec.tx[0];
    let mut ty = nearest(spec.ty, ty);
    while ty > spec.ty[0]
        && (tx * ty > f.max_threads.min(p.max_threads_per_block)
            || occupancy::active_blocks(p, f, tx * ty, (spec.smem)(tx, ty, es)) == 0)
    {
        ty = *spec.ty.iter().filter(|&&c| c < ty).max().unwrap();
    }
    (tx, ty)
}

/// Functions whose dynamic shared memory limit was raised (blocks of teams can pass 48 KB).
static RAISED: Lazy<Mutex<HashSet<usize>>> = Lazy::new(|| Mutex::new(HashSet::new()));

fn allow_smem(p: &DeviceProps, f: &Function) -> Result<()> {
    let key = f.raw.0 as usize;
    if RAISED.lock().contains(&key) {
        return Ok(());
    }
    let max = p.smem_per_block_optin.saturating_sub(f.static_smem) as i32;
    check(
        unsafe {
            sys::cuFuncSetAttribute(
                f.raw.0,
                sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                max,
            )
        },
        "cuFuncSetAttribute",
    )?;
    RAISED.lock().insert(key);
    Ok(())
}

/// The value of `list` nearest to `v`.
fn nearest(list: &[u32], v: u32) -> u32 {
    *list.iter().min_by_key(|&&c| (c as i64 - v as i64).abs()).unwrap()
}

/// C := beta*C over the m x n block (beta == 0 assigns zero), with the kernel of the unit of
/// configuration `variant` (every split-k unit has it; a call uses one unit).
fn scale<T: Scalar>(ex: &Exec, variant: &'static str, m: i64, n: i64, beta: In<T>, c: DMat) -> Result<()> {
    let f = ex.splitk_function::<T>(variant, "gemm_sk_scale", "")?;
    let mn = (m * n) as u64;
    let shape = tune::choose(ex.rt, &f, &SK_SCALE, T::PREFIX, elem::<T>(), tune::size_class(mn), |tx, _| {
        mn.div_ceil(tx as u64)
    });
    let tx = nearest(SK_SCALE.tx, shape.0).min(f.max_threads / 32 * 32).max(32);
    let (be, bep) = beta.parts();
    let mut args = Args::new();
    args.arg(m).arg(n).arg(be).arg(bep).arg(c.ptr).arg(c.ld);
    f.launch(Launch { grid: (mn.div_ceil(tx as u64) as u32, 1, 1), block: (tx, 1, 1), smem: 0 }, ex.stream, &mut args)
}

/// C := alpha*op(A)*op(B) + beta*C on `ex`'s stream; op(A) is m x k, op(B) is k x n.
///
/// Unsupported: m or n above [`MAX_MN`] (the vendor GEMM's ground), negative sizes, leading
/// dimensions below the reference's minimum, operands not aligned to their element (complex
/// double: 16 bytes).
#[allow(clippy::too_many_arguments)]
pub fn gemm<T: Scalar>(
    ex: &Exec,
    transa: Trans,
    transb: Trans,
    m: i64,
    n: i64,
    k: i64,
    alpha: In<T>,
    a: DMat,
    b: DMat,
    beta: In<T>,
    c: DMat,
    reduction: Reduction,
) -> Result<()> {
    if m < 0 || n < 0 || k < 0 {
        return Err(GpuError::Unsupported("split-k gemm: negative size"));
    }
    if m == 0 || n == 0 {
        return Ok(());
    }
    if !super::gemm_lds_ok(transa, transb, m, n, k, a.ld, b.ld, c.ld) {
        return Err(GpuError::Unsupported("split-k gemm: leading dimension below the minimum"));
    }
    if m > MAX_MN || n > MAX_MN {
        return Err(GpuError::Unsupported("split-k gemm: output larger than 256 x 256"));
    }
    // The kernels read and write whole elements (complex double as one 16-byte access, as
    // cuDoubleComplex is aligned).
    let align = (elem::<T>() as u64).min(16);
    if !(a.ptr | b.ptr | c.ptr).is_multiple_of(align) {
        return Err(GpuError::Unsupported("split-k gemm: operand not aligned to its element"));
    }
    let p = &ex.rt.props;
    let es = elem::<T>() as i64;
    let cfg = config_on::<T>(m, n, frag_on::<T>(p.cc));
    // The compile unit this call takes all its kernels from.
    let variant = kernel_name::<T>(p, cfg);
    // The reference's quick returns, decided where the scalars are host values.
    let alpha_zero = alpha.host().is_some_and(|v| v == T::zero());
    let beta_one = beta.host().is_some_and(|v| v == T::one());
    if alpha_zero || k == 0 {
        return if beta_one { Ok(()) } else { scale(ex, variant, m, n, beta, c) };
    }
    if cfg.is_frag() {
        return gemm_frag::<T>(ex, cfg, transa, transb, m, n, k, alpha, a, b, beta, c, reduction, beta_one);
    }
    let spec = cfg.spec();
    // Looked up before anything is launched: a unit not ready yet (NotReady) leaves C untouched.
    let f = ex.splitk_function::<T>(variant, variant, layout(transa, transb))?;
    let (tm, tn) = cfg.tiles(m, n);
    let tiles = (tm * tn) as u64;
    let team_smem = cfg.team_smem(es);
    let resident =
        |ty: u32| occupancy::active_blocks(p, &f, cfg.team_threads() * ty, team_smem * ty) as u64 * p.sm_count as u64;
    let atomic = reduction == Reduction::Atomic;
    let (l, chunks, shape) = if atomic {
        // One wave: the grid occupancy is the same for every shape; the recipe decides.
        let shape = tune::choose(ex.rt, &f, spec, T::PREFIX, elem::<T>(), class3(m, n, k) ^ 1, |_, _| 1);
        let shape = fit(p, spec, &f, elem::<T>(), shape);
        // Teams in one wave: the direct kernel's team is the whole block (its warps share a
        // chunk), a tile kernel's team is one of the block's Ty.
        let wave = if cfg == Config::Direct { resident(shape.1) } else { resident(shape.1) * shape.1 as u64 };
        let (l, chunks) = atomic_chunks(cfg, es, m, n, k, wave.max(1));
        (l, chunks, shape)
    } else {
        let (l, chunks) = det_chunks::<T>(cfg, m, n, k);
        let shape = tune::choose(ex.rt, &f, spec, T::PREFIX, elem::<T>(), class3(m, n, k), |_, ty| {
            (chunks as u64).div_ceil(ty as u64) * tiles
        });
        (l, chunks, fit(p, spec, &f, elem::<T>(), shape))
    };
    let (tx, ty) = shape;
    let grid_x = if atomic && cfg == Config::Direct { chunks as u64 } else { (chunks as u64).div_ceil(ty as u64) };
    if grid_x > i32::MAX as u64 || tiles > 65535 {
        return Err(GpuError::Unsupported("split-k gemm: grid too large"));
    }
    let smem = if cfg == Config::Direct { 0 } else { team_smem * ty };
    if smem > 48 * 1024 {
        allow_smem(p, &f)?;
    }
    let mode = launch_mode(atomic, chunks);
    let vec = vec_bits::<T>(a, b);
    let (al, alp) = alpha.parts();
    let (be, bep) = beta.parts();
    let cja = (transa == Trans::ConjTrans) as i32;
    let cjb = (transb == Trans::ConjTrans) as i32;

    // Hold the workspace from the first kernel to the last that reads it.
    let scratch = ex.rt.scratch(ex.stream);
    let mut sc = scratch.lock();
    let part = if mode == MODE_PART { sc.workspace(chunks as usize * (m * n) as usize * es as usize)? } else { 0 };
    if atomic && !beta_one {
        scale(ex, variant, m, n, beta, c)?;
    }
    let mut args = Args::new();
    args.arg(m).arg(n).arg(k).arg(al).arg(alp).arg(be).arg(bep).arg(a.ptr).arg(a.ld).arg(b.ptr).arg(b.ld);
    args.arg(c.ptr).arg(c.ld).arg(cja).arg(cjb).arg(vec).arg(l).arg(chunks).arg(mode).arg(part).arg(tm);
    args.arg(team_smem as i32);
    let launch = Launch { grid: (grid_x as u32, tiles as u32, 1), block: (tx, ty, 1), smem };
    f.launch(launch, ex.stream, &mut args)?;
    if mode == MODE_PART {
        let r = ex.splitk_function::<T>(variant, "gemm_sk_reduce", "")?;
        let mn = (m * n) as u64;
        let shape = tune::choose(ex.rt, &r, &SK_REDUCE, T::PREFIX, elem::<T>(), tune::size_class(mn), |tx, _| {
            mn.div_ceil(tx as u64)
        });
        // Ty = 32 is part of the summation order; Tx (outputs per block) is free.
        let rx = nearest(SK_REDUCE.tx, shape.0);
        let mut args = Args::new();
        args.arg(m).arg(n).arg(chunks).arg(al).arg(alp).arg(be).arg(bep).arg(part).arg(c.ptr).arg(c.ld);
        let l = Launch { grid: (mn.div_ceil(rx as u64) as u32, 1, 1), block: (rx, 32, 1), smem: 0 };
        r.launch(l, ex.stream, &mut args)?;
    }
    Ok(())
}

/// [`gemm`] on the fragment kernels (double and complex double, sm_80+): one kernel, whose last
/// block per tile writes C (no reduction kernel); the atomic path scales C by beta first.
#[allow(clippy::too_many_arguments)]
fn gemm_frag<T: Scalar>(
    ex: &Exec,
    cfg: Config,
    transa: Trans,
    transb: Trans,
    m: i64,
    n: i64,
    k: i64,
    alpha: In<T>,
    a: DMat,
    b: DMat,
    beta: In<T>,
    c: DMat,
    reduction: Reduction,
    beta_one: bool,
) -> Result<()> {
    let ((al, alp), (be, bep)) = (alpha.parts(), beta.parts());
    let p = &ex.rt.props;
    let es = elem::<T>() as i64;
    let (cja, cjb) = ((transa == Trans::ConjTrans) as i32, (transb == Trans::ConjTrans) as i32);
    let (transa, transb, a, b) = k_contiguous(transa, transb, m, n, a, b);
    // Looked up before anything is launched (NotReady leaves C untouched).
    let f = ex.splitk_function::<T>(cfg.kernel(), cfg.kernel(), layout(transa, transb))?;
    let (tm, tn) = cfg.tiles(m, n);
    let tiles = tm * tn;
    let atomic = reduction == Reduction::Atomic;
    // Blocks the device holds at once (eq. 7 with the compiled kernel's registers).
    let wave = occupancy::active_blocks(p, &f, (32 * FRAG_WARPS) as u32, 0) as u64 * p.sm_count as u64;
    let (l, chunks) = if atomic {
        // One wave of blocks.
        atomic_chunks(cfg, es, m, n, k, wave.max(1))
    } else {
        det_chunks::<T>(cfg, m, n, k)
    };
    if chunks > 65535 || tiles > i32::MAX as i64 {
        return Err(GpuError::Unsupported("split-k gemm: grid too large"));
    }
    let mode = launch_mode(atomic, chunks);
    let vec = vec_bits::<T>(a, b);
    let scratch = ex.rt.scratch(ex.stream);
    let mut sc = scratch.lock();
    let mut part = 0;
    // A slot holds one block's sum of its edge x edge output tile, in words of 8 bytes (tensor
    // cores) or 4 (FFMA).
    let slot_bytes = cfg.tile() * cfg.tile() * es;
    let word = if cfg.is_mma() { 8 } else { 4 };
    let cross = cross_arg(chunks, slot_bytes / word, word, wave as i64);
    if mode == MODE_PART {
        part = sc.slots((tiles * chunks * slot_bytes) as usize)?;
    }
    if atomic && !beta_one {
        scale(ex, cfg.kernel(), m, n, beta, c)?;
    }
    let mut args = Args::new();
    args.arg(m).arg(n).arg(k).arg(al).arg(alp).arg(be).arg(bep).arg(a.ptr).arg(a.ld).arg(b.ptr).arg(b.ld);
    args.arg(c.ptr).arg(c.ld).arg(cja).arg(cjb).arg(vec).arg(l).arg(chunks).arg(mode).arg(part).arg(tm);
    args.arg(0i32).arg(cross);
    // Grid (tiles, chunks): a chunk's tiles start together and share A's and B's rows in L2.
    let launch = Launch { grid: (tiles as u32, chunks as u32, 1), block: (32, FRAG_WARPS as u32, 1), smem: 0 };
    f.launch(launch, ex.stream, &mut args)
}

// ---- The planner's model ----

/// Constants of the split-k and vendor models for one device.
#[derive(Clone, Debug)]
pub struct Model {
    /// Read bandwidth split-k reaches at large k (bytes/s).
    pub bw: f64,
    /// Fixed time of a call (us): launches, pipeline fill and drain, the reduction.
    pub t0_us: f64,
    /// Real FMAs per second of the tile kernels in single and double precision (CUDA cores),
    /// and of the double 32x32 / 64x64 tiles on FP64 tensor cores (sm_80+).
    pub fma_s: f64,
    pub fma_d: f64,
    pub fma_dt: f64,
    /// Whether the double 32x32 / 64x64 tiles use the tensor cores on this device.
    pub dmma: bool,
    /// Vendor DGEMM times (us) for m = n = 16, 32, 64 (rows) and k = 2^16, 2^18, 2^20, 2^22.
    pub vendor: [[f64; 4]; 3],
    /// Where the split-k and the vendor constants came from ("tuned", "built-in sm90", ...).
    pub source: String,
    pub vendor_source: String,
    /// The measured table (`hyblas tune`, `splitkx` lines): (precision, layout, m edge, n edge,
    /// log2 k) -> (split-k us, cuBLAS us), both sides timed in one process on this device.
    /// Where it has the call's precision, layout and shape, it decides; the model above is the
    /// fallback.
    pub table: HashMap<TableKey, (f64, f64)>,
    pub table_source: String,
    /// Unaligned operands (`splitku` lines): (precision, layout, edge of [`UNALIGNED_EDGES`]) ->
    /// (log2 k, split-k factor, cuBLAS factor) by increasing log2 k: each side's time with odd
    /// k and both operands one element off 16 bytes over its aligned time at k = 2^lk. Where
    /// missing, [`UNALIGNED_DEFAULT`].
    pub unaligned: HashMap<(char, u8, i64), Vec<UnalignedPoint>>,
}

/// Unaligned factors before `hyblas tune` has measured them: split-k's element-wise loads cost
/// up to 1.4x on an H200 (single precision; the others less), cuBLAS's about nothing.
pub const UNALIGNED_DEFAULT: (f64, f64) = (1.4, 1.0);
/// The square outputs the unaligned factors are measured at; an output dimension takes the
/// smallest edge covering it (the largest beyond).
pub const UNALIGNED_EDGES: [i64; 6] = [1, 4, 8, 16, 32, 64];
/// ... at k = 2^lk for these lk, one k per factor: both sides' penalties change with k. On an
/// H200 (session 12's sweep) split-k's element-wise loads cost 1.31x at SGEMM N,N 32x32
/// k = 10^6+3 but 1.04x at k = 100003, and cuBLAS's odd-k kernels took 1.13-1.47x where one
/// factor measured at k = 2^20 said 1.05: the planner sent such calls to cuBLAS at 38.7 us
/// against split-k's 24.1.
pub const UNALIGNED_LK: [i64; 6] = [12, 14, 16, 18, 20, 22];

/// (log2 k, split-k factor, cuBLAS factor) of an unaligned call (`splitku` lines).
pub type UnalignedPoint = (i64, f64, f64);

/// (precision, layout, m edge, n edge, log2 k).
pub type TableKey = (char, u8, i64, i64, i64);

/// Edges of the measured table: square outputs m = n = edge at every log2 k in [`TABLE_LK`],
/// and the rectangles of [`TABLE_RECT_EDGES`] (every ordered pair of two different ones) at
/// every other log2 k. A call takes the smallest edges covering its m and n. (128 is a rectangle
/// edge since session 13: without it an 8 x 128 output took the 128 x 128 row, where cuBLAS
/// always wins, and went to cuBLAS at 14.8 us where split-k took 7.4, SGEMM N,N k = 4096 on an
/// H200.)
pub const TABLE_EDGES: [i64; 9] = [1, 2, 4, 8, 16, 32, 64, 128, 256];
pub const TABLE_LK: [i64; 11] = [12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22];
pub const TABLE_RECT_EDGES: [i64; 7] = [1, 4, 8, 16, 64, 128, 256];

/// The table's shapes and the log2 k each is measured at.
pub fn table_shapes() -> Vec<(i64, i64, Vec<i64>)> {
    let mut v: Vec<(i64, i64, Vec<i64>)> = TABLE_EDGES.iter().map(|&e| (e, e, TABLE_LK.to_vec())).collect();
    let coarse: Vec<i64> = TABLE_LK.iter().copied().filter(|lk| lk % 2 == 0).collect();
    for &a in &TABLE_RECT_EDGES {
        for &b in &TABLE_RECT_EDGES {
            if a != b {
                v.push((a, b, coarse.clone()));
            }
        }
    }
    v
}
/// Split-k takes a call only where the table says it is at least this much faster than cuBLAS
/// at the measured k on both sides of the call's k (the margin keeps the exported
/// `cublas?gemm` within 3% of cuBLAS where the table's neighbours disagree).
const TABLE_MARGIN: f64 = 0.97;
/// ... and at least this much (`HYBLAS_SPLITK_MARGIN_128`, percent, default 70) where an output
/// edge is over 64 (the table's 128 and 256 rows): split-k turns compute-bound there, its time
/// swings with what ran before it, and the tune's lead was not kept (DGEMM T,N 128x128
/// k = 2^12 on an H200, session 13: tuned 14.5 us against cuBLAS's 18.3, then 20.4 against
/// 17.1 in the benchmark; with 0.8 the tuned 0.79 still took it, at 1.27x cuBLAS). No sweep
/// since session 11 found split-k ahead of cuBLAS at 128 x 128.
static MARGIN_128: Lazy<f64> = Lazy::new(|| crate::config::threshold("HYBLAS_SPLITK_MARGIN_128", 70) as f64 / 100.0);
/// ... and by at least this many microseconds: two cuBLAS handles on one stream differ by up to
/// 1 us on 10 us calls, so a smaller lead there is noise (0.5 us let DGEMM 16x64 k=4096 take
/// split-k at a measured 9.9 vs 10.5 us that the benchmark then timed at 11.0 vs 10.8 us).
const TABLE_LEAD_US: f64 = 1.0;

/// Layout index of the table: op(A) N/T(C) x op(B) N/T(C) as nn 0, nt 1, tn 2, tt 3.
fn layout_index(transa: Trans, transb: Trans) -> u8 {
    ((transa != Trans::No) as u8) << 1 | (transb != Trans::No) as u8
}
const LAYOUT_NAMES: [&str; 4] = ["nn", "nt", "tn", "tt"];

/// The smallest table edge covering x.
fn table_edge(x: i64) -> Option<i64> {
    TABLE_EDGES.iter().copied().find(|&e| e >= x)
}

/// cuBLAS 13.1 DGEMM (N, N) on an H200 from native code (`shared/docs/anchors.md`).
const HOPPER_VENDOR: [[f64; 4]; 3] =
    [[18.6, 42.2, 91.7, 288.5], [22.0, 54.8, 140.9, 483.4], [30.4, 76.8, 272.8, 1037.0]];
const VENDOR_S: [f64; 3] = [16.0, 32.0, 64.0];

impl Model {
    /// Built-in constants: Hopper's measured (cuBLAS) and targeted (split-k) figures, scaled by
    /// the SM count elsewhere as a crude guess until `hyblas tune` has run.
    pub fn builtin(p: &DeviceProps) -> Model {
        let hopper = p.cc.0 == 9;
        let f = if hopper { 1.0 } else { p.sm_count as f64 / 132.0 };
        Model {
            bw: 4.0e12 * f,
            t0_us: 3.0,
            fma_s: 16e12 * f,
            fma_d: 8e12 * f,
            fma_dt: 16e12 * f,
            dmma: p.cc.0 >= 8 && *DMMA,
            vendor: if hopper { HOPPER_VENDOR } else { HOPPER_VENDOR.map(|r| r.map(|t| t / f)) },
            source: if hopper { "built-in sm90".into() } else { format!("built-in, sm90 scaled by {f:.2}") },
            vendor_source: if hopper { "built-in sm90 table".into() } else { "sm90 table scaled".into() },
            table: HashMap::new(),
            table_source: String::new(),
            unaligned: HashMap::new(),
        }
    }

    /// `splitk <key> <value>` lines of a recipe file over these constants; `label` names their
    /// source in the trace ("tuned", "shipped sm90").
    pub fn with_lines(mut self, text: &str, label: &str) -> Model {
        let mut tuned = false;
        let mut vendor_tuned = false;
        let mut table = HashMap::new();
        let mut unaligned = HashMap::new();
        for line in text.lines() {
            let f: Vec<&str> = line.split_whitespace().collect();
            // splitku <precision> <layout> <edge> <log2 k> <split-k factor> <cuBLAS factor>
            // (files of session 12 and before: no log2 k, measured at 2^20)
            if (f.len() == 6 || f.len() == 7) && f[0] == "splitku" {
                let p = f[1].chars().next().filter(|c| "sdcz".contains(*c) && f[1].len() == 1);
                let l = LAYOUT_NAMES.iter().position(|&x| x == f[2]);
                let nums: Vec<f64> = f[3..].iter().filter_map(|x| x.parse::<f64>().ok()).collect();
                let point = match nums[..] {
                    [e, hy, cu] => Some((e, 20.0, hy, cu)),
                    [e, lk, hy, cu] => Some((e, lk, hy, cu)),
                    _ => None,
                };
                if let (Some(p), Some(l), Some((e, lk, hy, cu))) = (p, l, point) {
                    if hy > 0.0 && cu > 0.0 && hy.is_finite() && cu.is_finite() {
                        let v = unaligned.entry((p, l as u8, e as i64)).or_insert_with(Vec::new);
                        v.retain(|q: &UnalignedPoint| q.0 != lk as i64);
                        v.push((lk as i64, hy, cu));
                        v.sort_by_key(|q| q.0);
                    }
                }
                continue;
            }
            // splitkx <precision> <layout> <m edge> [<n edge>] <log2 k> <split-k us> <cuBLAS us>
            // (one edge: a square output)
            if (f.len() == 7 || f.len() == 8) && f[0] == "splitkx" {
                let p = f[1].chars().next().filter(|c| "sdcz".contains(*c) && f[1].len() == 1);
                let l = LAYOUT_NAMES.iter().position(|&x| x == f[2]);
                let nums: Vec<f64> = f[3..].iter().filter_map(|x| x.parse::<f64>().ok()).collect();
                let shape = match nums[..] {
                    [e, lk, hy, cu] => Some((e, e, lk, hy, cu)),
                    [em, en, lk, hy, cu] => Some((em, en, lk, hy, cu)),
                    _ => None,
                };
                if let (Some(p), Some(l), Some((em, en, lk, hy, cu))) = (p, l, shape) {
                    if hy > 0.0 && cu > 0.0 && hy.is_finite() && cu.is_finite() {
                        table.insert((p, l as u8, em as i64, en as i64, lk as i64), (hy, cu));
                    }
                }
                continue;
            }
            if f.len() != 3 || f[0] != "splitk" {
                continue;
            }
            let Ok(v) = f[2].parse::<f64>() else { continue };
            if !(v.is_finite() && v > 0.0) {
                continue;
            }
            match f[1] {
                "bw" => self.bw = v,
                "t0_us" => self.t0_us = v,
                "fma_s" => self.fma_s = v,
                "fma_d" => self.fma_d = v,
                "fma_dt" => self.fma_dt = v,
                key => {
                    // vendor.d.<s>.<log2 k>
                    let parts: Vec<&str> = key.split('.').collect();
                    if let ["vendor", "d", s, lk] = parts[..] {
                        let row = VENDOR_S.iter().position(|&x| s.parse::<f64>().ok() == Some(x));
                        let col = lk.parse::<usize>().ok().filter(|c| (16..=22).contains(c) && c % 2 == 0);
                        if let (Some(r), Some(c)) = (row, col) {
                            self.vendor[r][(c - 16) / 2] = v;
                            vendor_tuned = true;
                        }
                    }
                    continue;
                }
            }
            tuned = true;
        }
        if tuned {
            self.source = label.into();
        }
        if vendor_tuned {
            self.vendor_source = format!("{label} cuBLAS table");
        }
        if !table.is_empty() {
            // A file with a table replaces the whole table (a re-tune measures every point).
            self.table = table;
            self.table_source = label.into();
        }
        if !unaligned.is_empty() {
            self.unaligned = unaligned;
        }
        self
    }

    /// The measured table's verdict for this call, if it covers the precision, layout and
    /// edge: (split-k?, split-k us, cuBLAS us, words for the trace). The times are log-log
    /// interpolated in k between the measured points (held constant per byte past the ends);
    /// split-k needs the margin at both neighbouring points. `vector`: the operands take the
    /// 16-byte loads (the table's case); else both sides' times are scaled by the unaligned
    /// factors.
    #[allow(clippy::too_many_arguments)]
    pub fn table_verdict<T: Scalar>(
        &self,
        transa: Trans,
        transb: Trans,
        m: i64,
        n: i64,
        k: i64,
        vector: bool,
    ) -> Option<(bool, f64, f64, String)> {
        let l = layout_index(transa, transb);
        let points = |em: i64, en: i64| -> Vec<(i64, (f64, f64))> {
            TABLE_LK.iter().filter_map(|&lk| self.table.get(&(T::PREFIX, l, em, en, lk)).map(|&v| (lk, v))).collect()
        };
        // The call's own edges where measured, else the square covering both.
        let (em, en) = (table_edge(m)?, table_edge(n)?);
        let mut pts = points(em, en);
        let (mut em, mut en) = (em, en);
        if pts.is_empty() && em != en {
            (em, en) = (em.max(en), em.max(en));
            pts = points(em, en);
        }
        if pts.is_empty() {
            return None;
        }
        let x = (k.max(1) as f64).log2();
        let (lo, hi) = bracket(&pts, |p| p.0, x);
        let interp = |a: f64, b: f64| -> f64 {
            if lo.0 == hi.0 {
                // Past the ends: time scales with k from the nearest point (at least a
                // quarter of it: the fixed costs stay).
                a * (x - lo.0 as f64).exp2().max(0.25)
            } else {
                log_mix(a, b, (x - lo.0 as f64) / (hi.0 - lo.0) as f64)
            }
        };
        let (fh, fc) = if vector { (1.0, 1.0) } else { self.unaligned_factors(T::PREFIX, l, m, n, k) };
        let hy = interp(lo.1 .0, hi.1 .0) * fh;
        let cu = interp(lo.1 .1, hi.1 .1) * fc;
        let margin = if m.max(n) > 64 { TABLE_MARGIN.min(*MARGIN_128) } else { TABLE_MARGIN };
        let ok = |v: (f64, f64)| v.0 * fh <= (margin * v.1 * fc).min(v.1 * fc - TABLE_LEAD_US);
        let take = ok(lo.1) && ok(hi.1);
        let unal = if vector { String::new() } else { format!(", unaligned x{fh:.2} / x{fc:.2}") };
        let why = format!(
            "split-k {hy:.1}us vs cuBLAS {cu:.1}us, measured at {em}x{en} {} k=2^{}..2^{}{unal} ({} table; split-k needs <= {margin:.2}x and {TABLE_LEAD_US}us less at both)",
            LAYOUT_NAMES[l as usize],
            lo.0,
            hi.0,
            self.table_source,
        );
        Some((take, hy, cu, why))
    }

    /// (split-k, cuBLAS) time factors of unaligned operands for an m x n output at this k: each
    /// edge's factors log-linearly interpolated in log2 k (the end points' past the ends), and of
    /// the two edges the larger split-k factor and the smaller cuBLAS one. A rectangle's factors
    /// are measured on squares, whose cuBLAS kernels can differ (DGEMM N,N k = 12345 on an H200:
    /// x1.59 at 64x64, x1.10 at 64x16), so the pair errs towards cuBLAS.
    fn unaligned_factors(&self, p: char, layout: u8, m: i64, n: i64, k: i64) -> (f64, f64) {
        let x = (k.max(1) as f64).log2();
        let at = |dim: i64| -> (f64, f64) {
            let last = UNALIGNED_EDGES[UNALIGNED_EDGES.len() - 1];
            let e = UNALIGNED_EDGES.iter().copied().find(|&e| e >= dim).unwrap_or(last);
            let Some(v) = self.unaligned.get(&(p, layout, e)).filter(|v| !v.is_empty()) else {
                return UNALIGNED_DEFAULT;
            };
            let (lo, hi) = bracket(v, |q| q.0, x);
            if lo.0 == hi.0 {
                return (lo.1, lo.2);
            }
            let w = (x - lo.0 as f64) / (hi.0 - lo.0) as f64;
            (log_mix(lo.1, hi.1, w), log_mix(lo.2, hi.2, w))
        };
        let (a, b) = (at(m), at(n));
        (a.0.max(b.0), a.1.min(b.1))
    }

    /// Predicted split-k time (us) of one deterministic call, and a few words on what bounds it.
    pub fn splitk_us<T: Scalar>(&self, m: i64, n: i64, k: i64) -> (f64, &'static str) {
        let cfg = config::<T>(m, n);
        let es = elem::<T>() as f64;
        let (tm, tn) = cfg.tiles(m, n);
        let bytes = es * k as f64 * (tn * m + tm * n) as f64;
        let cplx = if T::IS_COMPLEX { 4.0 } else { 1.0 };
        let fmas = k as f64 * (tm * tn * cfg.tile() * cfg.tile()) as f64 * cplx;
        let rate = match (T::PREFIX, cfg) {
            (_, c) if c.is_mma() => self.fma_dt,
            ('d', Config::T32 | Config::T64) if self.dmma => self.fma_dt,
            ('d' | 'z', _) => self.fma_d,
            _ => self.fma_s,
        };
        let (_, g) = det_chunks::<T>(cfg, m, n, k);
        // Partials written and read back (through L2), and the reduction's launch (the
        // fragment kernels reduce in the same kernel: only the tail of the last block).
        let tail = if cfg.is_frag() { 0.5 } else { 1.0 };
        let red = if g > 1 { 2.0 * (g * m * n) as f64 * es / (2.0 * self.bw) * 1e6 + tail } else { 0.0 };
        let mem = bytes / self.bw * 1e6;
        let fma = fmas / rate * 1e6;
        let what = if fma > mem { "FMA-bound" } else { "memory-bound" };
        (self.t0_us + mem.max(fma) + red, what)
    }

    /// Predicted vendor time (us): the DGEMM table, looked up at the same bytes (m = n = s with
    /// (m+n)/2 = s, k scaled to equal bytes), log-log interpolated, with the streaming rate past
    /// its ends and a floor from its FMA rate (cuBLAS's small-output GEMM reaches about 40 TFLOP/s
    /// double, 50 single on Hopper).
    pub fn vendor_us<T: Scalar>(&self, m: i64, n: i64, k: i64) -> f64 {
        let es = elem::<T>() as f64;
        let bytes = (m + n) as f64 * k as f64 * es;
        let s = ((m + n) as f64 / 2.0).clamp(VENDOR_S[0], VENDOR_S[2]);
        // Time of row r at the k that reads `bytes`.
        let row_time = |r: usize| -> f64 {
            let t = &self.vendor[r];
            let lk = (bytes / (2.0 * VENDOR_S[r] * 8.0)).max(1.0).log2();
            let ks = [16.0, 18.0, 20.0, 22.0];
            if lk >= 22.0 {
                // The last step's rate continues.
                let rate = (t[3] - t[2]) / (3.0 * 2f64.powi(20) * 2.0 * VENDOR_S[r] * 8.0);
                return t[3] + (bytes - 2f64.powi(22) * 2.0 * VENDOR_S[r] * 8.0) * rate.max(0.0);
            }
            if lk <= 16.0 {
                // Shrinks with the data, down to a floor of a third of the k = 2^16 time.
                let slope = (t[1] / t[0]).ln() / 2.0;
                return (t[0] * ((lk - 16.0) * slope).exp()).max(t[0] / 3.0);
            }
            let i = ((lk - 16.0) / 2.0).floor().min(2.0) as usize;
            let w = (lk - ks[i]) / 2.0;
            (t[i].ln() * (1.0 - w) + t[i + 1].ln() * w).exp()
        };
        let r = if s <= VENDOR_S[1] { 0 } else { 1 };
        let w = (s.log2() - VENDOR_S[r].log2()).clamp(0.0, 1.0);
        let t = (row_time(r).ln() * (1.0 - w) + row_time(r + 1).ln() * w).exp();
        let flop_rate = if std::mem::size_of::<T::Real>() == 8 { 40e12 } else { 50e12 };
        let flops = 2.0 * (m * n) as f64 * k as f64 * if T::IS_COMPLEX { 4.0 } else { 1.0 };
        t.max(flops / flop_rate * 1e6 + 8.0)
    }
}

/// The measured points around x (a log2 k) in `pts` (not empty, by increasing log2 k): the last
/// one at or below x and the next; one point twice past either end or exactly at a measured k.
fn bracket<P: Copy>(pts: &[P], lk: impl Fn(&P) -> i64, x: f64) -> (P, P) {
    match pts.iter().rposition(|p| lk(p) as f64 <= x) {
        None => (pts[0], pts[0]),
        Some(i) if i + 1 == pts.len() || lk(&pts[i]) as f64 == x => (pts[i], pts[i]),
        Some(i) => (pts[i], pts[i + 1]),
    }
}

/// a^(1-w) b^w: log-linear interpolation at w in [0, 1] between a and b.
fn log_mix(a: f64, b: f64, w: f64) -> f64 {
    (a.ln() * (1.0 - w) + b.ln() * w).exp()
}

static MODELS: [OnceCell<Arc<Model>>; 64] = [const { OnceCell::new() }; 64];

/// The shipped Hopper recipes (`kernels/recipes/sm90.txt`, a `hyblas tune` file from an H200):
/// their `splitk` lines, where present, are the built-in Hopper model.
const SHIPPED_SM90: &str = include_str!("../../kernels/recipes/sm90.txt");

/// The model of `rt`'s device: the built-in constants, then the shipped sm90 file's `splitk`
/// lines on sm_90, then this device's tuned recipe file's (`hyblas tune`).
pub fn model(rt: &Runtime) -> Arc<Model> {
    let slot = (rt.props.ordinal.max(0) as usize).min(MODELS.len() - 1);
    MODELS[slot].get_or_init(|| Arc::new(model_for(&rt.props))).clone()
}

fn model_for(p: &DeviceProps) -> Model {
    let mut m = Model::builtin(p);
    if p.cc == (9, 0) {
        m = m.with_lines(SHIPPED_SM90, "shipped sm90");
    }
    let tuned = std::fs::read_to_string(tune::recipe_path(p)).unwrap_or_default();
    m.with_lines(&tuned, "tuned")
}

/// Predicted split-k and vendor times for this call on `rt`'s device; `vector`: the operands
/// take the 16-byte loads ([`vector_loads`]).
pub fn predict<T: Scalar>(
    rt: &Runtime,
    transa: Trans,
    transb: Trans,
    m: i64,
    n: i64,
    k: i64,
    vector: bool,
) -> Prediction {
    predict_with::<T>(&model(rt), transa, transb, m, n, k, vector)
}

/// [`predict`] with a given model.
pub fn predict_with<T: Scalar>(
    model: &Model,
    transa: Trans,
    transb: Trans,
    m: i64,
    n: i64,
    k: i64,
    vector: bool,
) -> Prediction {
    if m <= 0 || n <= 0 || k <= 0 || m > MAX_MN || n > MAX_MN {
        return Prediction {
            splitk: false,
            splitk_us: f64::INFINITY,
            vendor_us: 0.0,
            why: format!("m={m} n={n} k={k}: outside split-k (1 <= m, n <= {MAX_MN}, k >= 1)"),
        };
    }
    if let Some((take, s, v, why)) = model.table_verdict::<T>(transa, transb, m, n, k, vector) {
        return Prediction { splitk: take, splitk_us: s, vendor_us: v, why };
    }
    let (s, bound) = model.splitk_us::<T>(m, n, k);
    let v = model.vendor_us::<T>(m, n, k);
    let cfg = config::<T>(m, n);
    Prediction {
        splitk: s < v,
        splitk_us: s,
        vendor_us: v,
        why: format!(
            "split-k {s:.1}us ({:?}, {bound}, {} {:.2}TB/s) vs cuBLAS {v:.1}us ({})",
            cfg,
            model.source,
            model.bw / 1e12,
            model.vendor_source
        ),
    }
}

// ---- Offline tuning and calibration ----

/// Operands the tuning cases share: A and B of 256 MiB each (1.0f words), C of 64 KiB.
struct TuneBufs {
    a: DeviceBuffer,
    b: DeviceBuffer,
    c: DeviceBuffer,
}

const TUNE_BYTES: usize = 256 << 20;

fn tune_bufs() -> Result<Arc<TuneBufs>> {
    let bufs = TuneBufs {
        a: DeviceBuffer::new(TUNE_BYTES)?,
        b: DeviceBuffer::new(TUNE_BYTES)?,
        c: DeviceBuffer::new(64 * 64 * 16)?,
    };
    for buf in [&bufs.a, &bufs.b, &bufs.c] {
        check(unsafe { sys::cuMemsetD32_v2(buf.ptr, 0x3f80_0000, buf.bytes / 4) }, "cuMemsetD32")?;
    }
    Ok(Arc::new(bufs))
}

/// k for an m = n = s Gram product (T, N) reading `bytes` of A and B together.
fn tune_k(s: i64, es: i64, bytes: usize) -> i64 {
    bytes as i64 / (2 * s * es)
}

/// The cases `hyblas tune` measures: each configuration x precision on a Gram product (op(A) =
/// T, op(B) = N, deterministic) reading 256 MiB, keys `sgemm_sk_direct`, `dgemm_sk16`, ...
pub fn tune_cases(rt: &'static Runtime) -> Result<Vec<TuneCase>> {
    let bufs = tune_bufs()?;
    let mut v = Vec::new();
    cases_for::<f32>(rt, &bufs, &mut v)?;
    cases_for::<f64>(rt, &bufs, &mut v)?;
    cases_for::<crate::types::C32>(rt, &bufs, &mut v)?;
    cases_for::<crate::types::C64>(rt, &bufs, &mut v)?;
    Ok(v)
}

fn cases_for<T: Scalar>(rt: &'static Runtime, bufs: &Arc<TuneBufs>, out: &mut Vec<TuneCase>) -> Result<()> {
    let es = elem::<T>() as i64;
    // The configurations `gemm` runs for this precision on this device.
    let frag = frag_on::<T>(rt.props.cc);
    for cfg in Config::ALL.into_iter().filter(|c| c.has::<T>() && c.is_frag() == frag) {
        let s = cfg.tile();
        let k = tune_k(s, es, TUNE_BYTES);
        let ex = Exec::own(rt);
        let timer = Timer::new(ex.stream)?;
        let name = kernel_name::<T>(&rt.props, cfg);
        let func = ex.splitk_function::<T>(name, name, "_tn")?;
        let b = bufs.clone();
        out.push(TuneCase {
            // The fragment kernels share one (fixed) block shape: keyed by kernel.
            key: format!("{}{}", T::PREFIX, if cfg.is_frag() { cfg.kernel() } else { cfg.spec().name }),
            spec: cfg.spec(),
            func,
            elem: elem::<T>(),
            run: Box::new(move || {
                let ex = Exec::own(rt);
                let (am, bm, cm) =
                    (DMat { ptr: b.a.ptr, ld: k }, DMat { ptr: b.b.ptr, ld: k }, DMat { ptr: b.c.ptr, ld: s });
                let (one, zero) = (In::Host(T::one()), In::Host(T::zero()));
                timer.median(2, 10, &mut || {
                    gemm::<T>(&ex, Trans::Trans, Trans::No, s, s, k, one, am, bm, zero, cm, Reduction::Deterministic)
                })
            }),
        });
    }
    Ok(())
}

/// Measure the model's constants on this device: split-k's bandwidth and fixed time (DGEMM
/// 16x16 Gram products at k = 2^22 and 2^12), its FMA rates (64x64 s and d, 32x32 z), and, where the real cuBLAS
/// is reachable, the vendor DGEMM table (N, N; m = n = 16, 32, 64; k = 2^16 .. 2^22). Returns
/// `splitk <key> <value>` lines for the recipe file (the recipe parser skips them) and, as
/// comments, the crossovers they imply.
pub fn calibrate(rt: &'static Runtime) -> Result<Vec<String>> {
    // Operands for every point: 64 x 2^22 doubles (2 GiB) each, less on small devices.
    let bytes = (2usize << 30).min(rt.props.total_mem as usize / 8);
    // C takes the largest table edge (MAX_MN x MAX_MN complex doubles).
    let c_bytes = (MAX_MN * MAX_MN * 16) as usize;
    let (a, b, c) = (DeviceBuffer::new(bytes)?, DeviceBuffer::new(bytes)?, DeviceBuffer::new(c_bytes)?);
    for buf in [&a, &b, &c] {
        check(unsafe { sys::cuMemsetD32_v2(buf.ptr, 0x3f80_0000, buf.bytes / 4) }, "cuMemsetD32")?;
    }
    let ex = Exec::own(rt);
    let timer = Timer::new(ex.stream)?;
    // Median seconds of the Gram product (T, N) of s columns of length k, in precision T.
    fn gram<T: Scalar>(ex: &Exec, t: &Timer, a: u64, b: u64, c: u64, s: i64, k: i64) -> Result<f64> {
        let (am, bm, cm) = (DMat { ptr: a, ld: k }, DMat { ptr: b, ld: k }, DMat { ptr: c, ld: s });
        let (one, zero) = (In::Host(T::one()), In::Host(T::zero()));
        t.median(2, 10, &mut || {
            gemm::<T>(ex, Trans::Trans, Trans::No, s, s, k, one, am, bm, zero, cm, Reduction::Deterministic)
        })
    }
    let fits = |s: i64, k: i64, es: i64| (s * k * es) as usize <= bytes;
    let (kb, ks) = (1i64 << 22, 1i64 << 12);
    if !fits(64, 1 << 19, 4) || !fits(16, kb, 8) {
        return Err(GpuError::Unsupported("split-k calibration: device memory too small"));
    }
    let t_big = gram::<f64>(&ex, &timer, a.ptr, b.ptr, c.ptr, 16, kb)?;
    let t_small = gram::<f64>(&ex, &timer, a.ptr, b.ptr, c.ptr, 16, ks)?;
    let read = |s: i64, k: i64, es: i64| (2 * s * k * es) as f64;
    // time = t0 + bytes / bw at both sizes.
    let bw = (read(16, kb, 8) - read(16, ks, 8)) / (t_big - t_small).max(1e-9);
    let t0 = (t_small - read(16, ks, 8) / bw).max(0.5e-6);
    // FMA rates where the FMAs bound: 64x64 tiles (double: tensor cores on sm_80+), and complex
    // double 32x32 for the CUDA cores' double rate (4 real FMAs per complex one).
    let rate = |fmas: f64, t: f64| fmas / (t - t0).max(1e-9);
    let t_dt = gram::<f64>(&ex, &timer, a.ptr, b.ptr, c.ptr, 64, 1 << 18)?;
    let t_s = gram::<f32>(&ex, &timer, a.ptr, b.ptr, c.ptr, 64, 1 << 19)?;
    let t_z = gram::<crate::types::C64>(&ex, &timer, a.ptr, b.ptr, c.ptr, 32, 1 << 16)?;
    let mut lines = vec![
        format!("splitk bw {bw:.4e}"),
        format!("splitk t0_us {:.3}", t0 * 1e6),
        format!("splitk fma_dt {:.4e}", rate(64.0 * 64.0 * (1u64 << 18) as f64, t_dt)),
        format!("splitk fma_s {:.4e}", rate(64.0 * 64.0 * (1u64 << 19) as f64, t_s)),
        format!("splitk fma_d {:.4e}", rate(4.0 * 32.0 * 32.0 * (1u64 << 16) as f64, t_z)),
    ];

    // The vendor DGEMM (N, N) at the table's points, in the same process and stream.
    let dgemm = unsafe { super::vendor::get::<GemmFn<f64>>("cublasDgemm_v2") };
    if let (Some(h), Some(dgemm)) = (VendorHandle::on(ex.stream), dgemm) {
        let (one, zero) = (1.0f64, 0.0f64);
        for s in VENDOR_S.map(|s| s as i32) {
            for lk in [16, 18, 20, 22] {
                let k = 1i32 << lk;
                if !fits(s as i64, k as i64, 8) {
                    continue;
                }
                let (ap, bp, cp) = (a.ptr as *const f64, b.ptr as *const f64, c.ptr as *mut f64);
                let t = timer.median(2, 10, &mut || match unsafe {
                    dgemm(h.0, 0, 0, s, s, k, &one, ap, s, bp, k, &zero, cp, s)
                } {
                    0 => Ok(()),
                    st => Err(GpuError::Other(format!("cublasDgemm_v2 status {st}"))),
                });
                match t {
                    Ok(t) => lines.push(format!("splitk vendor.d.{s}.{lk} {:.3}", t * 1e6)),
                    Err(e) => lines.push(format!("# splitk vendor.d.{s}.{lk}: {e}")),
                }
            }
        }
    }
    lines.extend(measure_table(&ex, &timer, a.ptr, b.ptr, c.ptr, bytes)?);
    // The crossovers the model now implies, for the reader of the file.
    let m = Model::builtin(&rt.props).with_lines(&lines.join("\n"), "tuned");
    for s in [16i64, 32, 64] {
        let x = (10..=24).map(|lk| 1i64 << lk).find(|&k| m.splitk_us::<f64>(s, s, k).0 < m.vendor_us::<f64>(s, s, k));
        lines.push(match x {
            Some(k) => format!("# splitk crossover d m=n={s}: split-k from k = 2^{}", k.trailing_zeros()),
            None => format!("# splitk crossover d m=n={s}: the vendor GEMM up to k = 2^24"),
        });
    }
    Ok(lines)
}

/// `cublas?gemm_v2` (every precision has this signature, complex scalars by pointer).
type GemmFn<T> = unsafe extern "C" fn(
    *mut std::ffi::c_void,
    i32,
    i32,
    i32,
    i32,
    i32,
    *const T,
    *const T,
    i32,
    *const T,
    i32,
    *const T,
    *mut T,
    i32,
) -> i32;

/// The measured table: split-k (deterministic) against the real cuBLAS GEMM, same stream and
/// operands, at m = n in [`TABLE_EDGES`], k = 2^[`TABLE_LK`], the four layouts, every
/// precision; `splitkx` lines. Points whose operands do not fit `bytes` are skipped. Without a
/// reachable cuBLAS there is no table (the model decides).
/// Table points faster than this on both sides, and near a tie, are measured three times (see
/// `table_for`).
const SHORT_CALL_S: f64 = 50e-6;

fn measure_table(ex: &Exec, timer: &Timer, a: u64, b: u64, c: u64, bytes: usize) -> Result<Vec<String>> {
    let Some(h) = VendorHandle::on(ex.stream) else {
        return Ok(vec![
            "# splitkx: no cuBLAS handle (not reachable or cublasCreate_v2 failed), no measured table".into()
        ]);
    };
    let h = h.0;
    let mut lines = vec!["# splitkx precision layout m_edge [n_edge] log2k split-k_us cuBLAS_us".to_string()];
    table_for::<f32>(ex, timer, h, "cublasSgemm_v2", a, b, c, bytes, &mut lines)?;
    table_for::<f64>(ex, timer, h, "cublasDgemm_v2", a, b, c, bytes, &mut lines)?;
    table_for::<crate::types::C32>(ex, timer, h, "cublasCgemm_v2", a, b, c, bytes, &mut lines)?;
    table_for::<crate::types::C64>(ex, timer, h, "cublasZgemm_v2", a, b, c, bytes, &mut lines)?;
    Ok(lines)
}

/// A real cuBLAS handle on one stream for the calibration's vendor timings, destroyed on drop.
struct VendorHandle(*mut std::ffi::c_void);

impl VendorHandle {
    /// None where cuBLAS cannot be reached or the handle cannot be made.
    fn on(stream: sys::CUstream) -> Option<VendorHandle> {
        type Create = unsafe extern "C" fn(*mut *mut std::ffi::c_void) -> i32;
        type SetStream = unsafe extern "C" fn(*mut std::ffi::c_void, sys::CUstream) -> i32;
        let create = unsafe { super::vendor::get::<Create>("cublasCreate_v2")? };
        let set_stream = unsafe { super::vendor::get::<SetStream>("cublasSetStream_v2")? };
        let mut h = VendorHandle(std::ptr::null_mut());
        if unsafe { create(&mut h.0) } != 0 {
            return None;
        }
        (unsafe { set_stream(h.0, stream) } == 0).then_some(h)
    }
}

impl Drop for VendorHandle {
    fn drop(&mut self) {
        type Destroy = unsafe extern "C" fn(*mut std::ffi::c_void) -> i32;
        if !self.0.is_null() {
            if let Some(destroy) = unsafe { super::vendor::get::<Destroy>("cublasDestroy_v2") } {
                unsafe { destroy(self.0) };
            }
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn table_for<T: Scalar>(
    ex: &Exec,
    timer: &Timer,
    h: *mut std::ffi::c_void,
    name: &'static str,
    a: u64,
    b: u64,
    c: u64,
    bytes: usize,
    lines: &mut Vec<String>,
) -> Result<()> {
    let Some(vgemm) = (unsafe { super::vendor::get::<GemmFn<T>>(name) }) else {
        lines.push(format!("# splitkx: {name} not found"));
        return Ok(());
    };
    // Host scalars, 16-byte aligned (cuBLAS reads complex scalars with 16-byte loads).
    #[repr(C, align(16))]
    struct Al<T>(T);
    let (one, zero) = (Al(T::one()), Al(T::zero()));
    let es = elem::<T>() as i64;
    // Split-k and cuBLAS times (seconds) of (T, layout) calls of one output shape, a call per
    // (k, offset) case, the operands `off` elements past A and B: every side's batches
    // alternating (drift falls on all alike).
    let timed = |ta: Trans, tb: Trans, em: i64, en: i64, cases: &[(i64, u64)]| -> Result<Vec<(f64, f64)>> {
        let (t, u) = ((ta != Trans::No) as i32, (tb != Trans::No) as i32);
        let (al, be) = (In::Host(T::one()), In::Host(T::zero()));
        let mut fs: Vec<Box<dyn FnMut() -> Result<()> + '_>> = Vec::new();
        for &(k, off) in cases {
            let lda = if ta == Trans::No { em } else { k };
            let ldb = if tb == Trans::No { k } else { en };
            let (pa, pb) = (a + off * es as u64, b + off * es as u64);
            let (am, bm, cm) = (DMat { ptr: pa, ld: lda }, DMat { ptr: pb, ld: ldb }, DMat { ptr: c, ld: em });
            fs.push(Box::new(move || gemm::<T>(ex, ta, tb, em, en, k, al, am, bm, be, cm, Reduction::Deterministic)));
            let (one, zero) = (&one.0, &zero.0);
            fs.push(Box::new(move || {
                let (mi, ni, ki) = (em as i32, en as i32, k as i32);
                let (ap, bp, cp) = (pa as *const T, pb as *const T, c as *mut T);
                match unsafe { vgemm(h, t, u, mi, ni, ki, one, ap, lda as i32, bp, ldb as i32, zero, cp, mi) } {
                    0 => Ok(()),
                    st => Err(GpuError::Other(format!("{name} status {st}"))),
                }
            }));
        }
        let mut measure = || {
            let mut refs: Vec<&mut dyn FnMut() -> Result<()>> = fs.iter_mut().map(|f| &mut **f as _).collect();
            timer.median_batched_each(7, 300e-6, &mut refs)
        };
        let mut times = measure()?;
        // Short calls where split-k is ahead or near a tie: the least of three medians per side.
        // cuBLAS's median at 10-15 us came out up to 60% above the benchmark's in some tunes on
        // an H200 (split-k's never), and the planner then took split-k where cuBLAS was faster;
        // the least is the stable one. Only where it can make split-k the verdict: a tune in
        // session 12 measured cuBLAS DGEMM N,N 128x128 k = 2^12 at 20.4 us against split-k's
        // 13.8 (ratio 0.67, outside the old 0.7..1.4 window), and the entry then ran split-k at
        // 1.29x cuBLAS's 13 us.
        let short = times.iter().all(|&t| t < SHORT_CALL_S);
        if short && times.chunks(2).any(|p| p[0] / p[1] < 1.4) {
            for _ in 0..2 {
                for (t, again) in times.iter_mut().zip(measure()?) {
                    *t = t.min(again);
                }
            }
        }
        Ok(times.chunks(2).map(|p| (p[0], p[1])).collect())
    };
    let ops = [Trans::No, Trans::Trans];
    for (li, &(ta, tb)) in [(ops[0], ops[0]), (ops[0], ops[1]), (ops[1], ops[0]), (ops[1], ops[1])].iter().enumerate() {
        let layout = LAYOUT_NAMES[li];
        for (em, en, lks) in table_shapes() {
            for lk in lks {
                let k = 1i64 << lk;
                if (em.max(en) * k * es) as usize > bytes {
                    continue;
                }
                let (hy, cu) = timed(ta, tb, em, en, &[(k, 0)])?[0];
                let shape = if em == en { format!("{em}") } else { format!("{em} {en}") };
                lines.push(format!("splitkx {} {layout} {shape} {lk} {:.3} {:.3}", T::PREFIX, hy * 1e6, cu * 1e6));
            }
        }
        // Unaligned operands against aligned ones in the same batches: k one past 2^lk (odd
        // leading dimensions where they hold k) and both operands one element past 16 bytes, the
        // usual ways a caller's operands end up off 16 bytes. Not where split-k still takes its
        // 16-byte loads (complex double: every element is 16 bytes).
        for e in UNALIGNED_EDGES {
            for lk in UNALIGNED_LK {
                let (k, ku) = (1i64 << lk, (1i64 << lk) + 1);
                let (lda, ldb) = (if ta == Trans::No { e } else { ku }, if tb == Trans::No { ku } else { e });
                let (am, bm) = (DMat { ptr: a + es as u64, ld: lda }, DMat { ptr: b + es as u64, ld: ldb });
                if ((e * ku + 1) * es) as usize > bytes || vector_loads::<T>(ta, tb, e, e, am, bm) {
                    continue;
                }
                let v = timed(ta, tb, e, e, &[(k, 0), (ku, 1)])?;
                let ((hy, cu), (hu, cuu)) = (v[0], v[1]);
                lines.push(format!("splitku {} {layout} {e} {lk} {:.3} {:.3}", T::PREFIX, hu / hy, cuu / cu));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{C32, C64};

    #[test]
    fn kernel_geometry_matches_the_source() {
        // KT = stage bytes / ((TM + TN) * sizeof(T)), a multiple of V dividing 128.
        for es in [4i64, 8, 16] {
            for cfg in [Config::T16, Config::T32, Config::T64] {
                let kt = cfg.kt(es);
                assert!(kt % (16 / es) == 0 && L_QUANTUM % kt == 0, "{cfg:?} es={es}: kt={kt}");
            }
        }
        assert_eq!(Config::T16.kt(8), 32);
        assert_eq!(Config::T64.kt(16), 8);
        // T16 double: 3 stages x 2 x max(16*34, 32*18) x 8 = 27648 bytes.
        assert_eq!(Config::T16.team_smem(8), 27648);
        assert_eq!(Config::Direct.team_smem(8), 0);
    }

    #[test]
    fn host_constants_match_the_kernel_defines() {
        // The kernel file keeps its own copies (NVRTC compiles it alone); a drift would change
        // the chunk rules, the summation order, or make reducers mistake the slots' fill for data.
        let src = crate::gpu::kernels::Family::Gemm.source();
        let define = |name: &str| -> i64 {
            let line = src.lines().find(|l| l.split_whitespace().nth(1) == Some(name) && l.starts_with("#define"));
            let v = line.and_then(|l| l.split_whitespace().nth(2)).unwrap_or_else(|| panic!("no #define {name}"));
            let v = v.trim_end_matches('u');
            match v.strip_prefix("0x") {
                Some(h) => i64::from_str_radix(h, 16).unwrap(),
                None => v.parse().unwrap(),
            }
        };
        assert_eq!(define("SK_NS"), NSTAGE);
        assert_eq!(define("SK_DMAX"), DIRECT_MAX);
        assert_eq!(define("SKM_WARPS"), FRAG_WARPS);
        assert_eq!(define("SKM_BATCH"), RED_LOADS);
        assert_eq!(define("SK_RED_LANES"), RED_LANES);
        assert_eq!(define("SK_EMPTY"), crate::gpu::runtime::SLOT_EMPTY as i64);
    }

    #[test]
    fn configurations_follow_the_shape() {
        // Without the fragment kernels (HYBLAS_SPLITK_MMA=0 or before sm_80).
        assert_eq!(config_on::<f64>(4, 4, false), Config::Direct);
        assert_eq!(config_on::<f64>(1, 1, false), Config::Direct);
        assert_eq!(config_on::<f64>(5, 1, false), Config::T16);
        assert_eq!(config_on::<f64>(16, 16, false), Config::T16);
        assert_eq!(config_on::<f64>(2, 128, false), Config::T16);
        assert_eq!(config_on::<f64>(32, 32, false), Config::T32);
        assert_eq!(config_on::<f64>(64, 64, false), Config::T64);
        assert_eq!(config_on::<C64>(64, 64, false), Config::T64);
        assert_eq!(config_on::<f32>(17, 17, false), Config::T32);
        // With them: tensor cores for double and complex double, FFMA for the single ones.
        assert_eq!(config_on::<f32>(17, 17, true), Config::F16);
        assert_eq!(config_on::<f32>(1, 2, true), Config::F2);
        assert_eq!(config_on::<C32>(3, 1, true), Config::F4);
        assert_eq!(config_on::<C32>(8, 5, true), Config::F8);
        assert_eq!(config_on::<f32>(16, 9, true), Config::F16);
        assert_eq!(config_on::<C32>(200, 3, true), Config::F16);
        assert_eq!(config_on::<f64>(1, 1, true), Config::M1);
        assert_eq!(config_on::<f64>(4, 2, true), Config::M4);
        assert_eq!(config_on::<C64>(1, 5, true), Config::M8);
        assert_eq!(config_on::<f64>(16, 9, true), Config::M16);
        assert_eq!(config_on::<f64>(17, 3, true), Config::M32);
        assert_eq!(config_on::<f64>(200, 3, true), Config::M32);
        assert_eq!(config_on::<C64>(32, 32, true), Config::M16);
        assert_eq!(config_on::<C32>(4, 4, false), Config::Direct);
        assert!(Config::ALL.iter().filter(|c| !c.is_ffma()).all(|c| c.has::<f64>()));
        assert!(Config::ALL.iter().filter(|c| !c.is_mma()).all(|c| c.has::<f32>()));
        assert!(!Config::M8.has::<f32>() && !Config::M32.has::<C64>() && Config::M16.has::<C64>());
    }

    #[test]
    fn fragment_chunks_cover_k_and_ignore_the_device() {
        for cfg in Config::ALL.into_iter().filter(|c| c.is_frag()) {
            for es in if cfg.is_mma() { [8i64, 16] } else { [4, 8] } {
                for &(m, n) in &[(1, 1), (8, 8), (16, 16), (17, 3), (64, 64), (256, 7)] {
                    for &k in &[1i64, 5, 255, 256, 1000, 65537, (1 << 20) + 3, 1 << 28] {
                        let (l, g) = mma_chunks(cfg, es, m, n, k, 512);
                        let q = cfg.kt(es);
                        assert!(l % q == 0 && l >= *MIN_STEPS * q, "{cfg:?} {m}x{n} k={k}: L={l}");
                        assert!((g - 1) * l < k && g * l >= k.max(1), "{cfg:?} {m}x{n} k={k}: {g} x {l}");
                        let (tm, tn) = cfg.tiles(m, n);
                        assert!(g <= (512 / (tm * tn)).max(1) || l == *MIN_STEPS * q, "{cfg:?} {m}x{n} k={k}: {g}");
                    }
                }
            }
        }
        // The anchor: 16x16 double, k = 2^20: 256 blocks of 4096 (512 with a cap of 512).
        assert_eq!(mma_chunks(Config::M16, 8, 16, 16, 1 << 20, 256), (4096, 256));
        assert_eq!(mma_chunks(Config::M16, 8, 16, 16, 1 << 20, 512), (2048, 512));
        assert_eq!(Config::M1.kt(8), 512);
        // FFMA steps: 8 warps x (32 / lane groups) lanes x 16 bytes of k.
        assert_eq!(Config::F2.kt(4), 1024);
        assert_eq!(Config::F8.kt(4), 8 * 8 * 4);
        assert_eq!(Config::F16.kt(4), 8 * 2 * 4);
        assert_eq!(Config::F16.kt(8), 8 * 2 * 2);
        // Cross-block reduction: lanes per word group (G / 8 rounded up to a power of two, at
        // most 64) and passes of 256 threads over the groups (16-byte loads).
        assert_eq!(cross_plan(264, 1, 8), (6, 1)); // 1x1 double: one word, 64 lanes
        assert_eq!(cross_plan(256, 64, 8), (5, 4)); // 8x8 double: 32 pairs x 32 lanes
        assert_eq!(cross_plan(264, 64, 8), (6, 8));
        assert_eq!(cross_plan(131, 1024, 8), (5, 64)); // 32x32 double: 512 pairs x 32 lanes
        assert_eq!(cross_plan(261, 256, 4), (6, 16)); // 16x16 float: 64 quads x 64 lanes
        assert_eq!(cross_plan(16, 4, 4), (1, 1));
        assert_eq!(cross_plan(17, 6, 4), (2, 1)); // 3 pairs of floats x 4 lanes
        assert_eq!(cross_plan(5000, 8, 8), (6, 1));
        // Reducers: one per pass, capped by G and half the resident blocks; lq in the low byte.
        assert_eq!(cross_arg(264, 64, 8, 264), 6 | 8 << 8);
        assert_eq!(cross_arg(131, 1024, 8, 132), 5 | 64 << 8);
        assert_eq!(cross_arg(131, 1024, 8, 40), 5 | 20 << 8);
        assert_eq!(cross_arg(2, 1024, 8, 264), 2 << 8);
        assert_eq!(with_reducers(1, || cross_arg(131, 1024, 8, 132)), 5 | 1 << 8);
    }

    #[test]
    fn deterministic_chunks_cover_k_and_ignore_the_device() {
        for cfg in Config::ALL.into_iter().filter(|c| !c.is_frag()) {
            for &(m, n) in &[(1, 1), (4, 4), (16, 16), (17, 3), (64, 64), (128, 128), (256, 7)] {
                for &k in &[1i64, 5, 127, 128, 129, 1000, 65537, (1 << 20) + 3, 1 << 28] {
                    let (l, g) = det_chunks_with(cfg, m, n, k, 1024, 32);
                    assert!(l % L_QUANTUM == 0 && l >= L_QUANTUM, "{cfg:?} {m}x{n} k={k}: L={l}");
                    assert!((g - 1) * l < k && g * l >= k, "{cfg:?} {m}x{n} k={k}: {g} x {l}");
                }
            }
        }
        // The anchor case: 16x16 double, k = 2^20: 1024 chunks of 1024.
        assert_eq!(det_chunks_with(Config::T16, 16, 16, 1 << 20, 1024, 32), (1024, 1024));
        // Small k: one chunk (C stored by the team, no reduction).
        assert_eq!(det_chunks_with(Config::T16, 16, 16, 100, 1024, 32).1, 1);
    }

    #[test]
    fn atomic_chunks_make_one_wave() {
        let (l, p) = atomic_chunks(Config::T16, 8, 16, 16, 1 << 20, 1056);
        assert!(p <= 1056 && p * l >= 1 << 20 && (p - 1) * l < 1 << 20 && l % 32 == 0);
        let (l, p) = atomic_chunks(Config::T64, 8, 128, 128, 1000, 528);
        assert!(p <= 132 && p * l >= 1000 && l % 16 == 0);
        let (_, p) = atomic_chunks(Config::Direct, 4, 1, 1, 1, 500);
        assert_eq!(p, 1);
    }

    fn h200() -> DeviceProps {
        DeviceProps::h200()
    }

    #[test]
    fn vendor_model_reproduces_its_table() {
        let m = Model::builtin(&h200());
        for (r, &s) in VENDOR_S.iter().enumerate() {
            for (c, lk) in [16, 18, 20, 22].into_iter().enumerate() {
                let t = m.vendor_us::<f64>(s as i64, s as i64, 1 << lk);
                assert!((t / HOPPER_VENDOR[r][c] - 1.0).abs() < 1e-9, "s={s} k=2^{lk}: {t}");
            }
        }
        // Between and beyond the points: monotone in k.
        let mut last = 0.0;
        for lk in 10..26 {
            let t = m.vendor_us::<f64>(24, 24, 1 << lk);
            assert!(t >= last, "k=2^{lk}: {t} < {last}");
            last = t;
        }
    }

    #[test]
    fn prediction_prefers_splitk_on_the_anchor_and_cublas_on_big_outputs() {
        let m = Model::builtin(&h200());
        let p = predict_with::<f64>(&m, Trans::No, Trans::No, 16, 16, 1 << 20, true);
        assert!(p.splitk && p.splitk_us < 75.0 && (p.vendor_us - 91.7).abs() < 0.1, "{p:?}");
        assert!(p.why.contains("built-in"), "{}", p.why);
        let p = predict_with::<f64>(&m, Trans::No, Trans::No, 128, 128, 1 << 20, true);
        assert!(!p.splitk, "{p:?}");
        let p = predict_with::<C32>(&m, Trans::No, Trans::No, 300, 2, 1 << 20, true);
        assert!(!p.splitk && p.splitk_us.is_infinite());
    }

    #[test]
    fn measured_table_decides_with_a_margin() {
        let text = "splitkx d nn 16 16 10.0 20.0\nsplitkx d nn 16 18 30.5 31.0\nsplitkx d nn 16 20 70.0 90.0\n\
                    splitkx d tn 16 20 95.0 90.0\nsplitkx q nn 16 20 1 2\nsplitkx d nn 16 22 -1 2\n";
        let m = Model::builtin(&h200()).with_lines(text, "tuned");
        assert_eq!(m.table.len(), 4);
        // At a measured point: 10 <= 0.97 * 20.
        let (take, hy, cu, why) = m.table_verdict::<f64>(Trans::No, Trans::No, 16, 16, 1 << 16, true).unwrap();
        assert!(take && (hy - 10.0).abs() < 1e-9 && (cu - 20.0).abs() < 1e-9, "{why}");
        assert!(why.contains("tuned table"), "{why}");
        // Between 2^16 and 2^18: 2^18 is within the margin (30.5 > 0.97 * 31): cuBLAS.
        let (take, hy, cu, _) = m.table_verdict::<f64>(Trans::No, Trans::No, 16, 16, 1 << 17, true).unwrap();
        assert!(!take && hy > 10.0 && hy < 30.5 && cu > 20.0 && cu < 31.0);
        // Edge 9..16 uses the 16 row; past 2^20 the last point, scaled with k.
        let none = (false, 0.0, 0.0, String::new());
        let (take, hy, _, _) =
            m.table_verdict::<f64>(Trans::No, Trans::ConjTrans, 9, 16, 1 << 21, true).unwrap_or(none);
        assert!(!take && hy == 0.0, "no nt row: the model decides");
        let (take, hy, _, _) = m.table_verdict::<f64>(Trans::No, Trans::No, 9, 16, 1 << 21, true).unwrap();
        assert!(take && (hy - 140.0).abs() < 1e-6);
        let (take, ..) = m.table_verdict::<f64>(Trans::ConjTrans, Trans::No, 16, 16, 1 << 20, true).unwrap();
        assert!(!take);
        // Other precisions and edges: no verdict.
        assert!(m.table_verdict::<f32>(Trans::No, Trans::No, 16, 16, 1 << 20, true).is_none());
        assert!(m.table_verdict::<f64>(Trans::No, Trans::No, 17, 16, 1 << 20, true).is_none());
        assert!(m.table_verdict::<f64>(Trans::No, Trans::No, 16, 17, 1 << 20, true).is_none());
        assert!(m.table_verdict::<f64>(Trans::No, Trans::No, 300, 16, 1 << 20, true).is_none());
        // A rectangle's own row where measured (edges 16 x 64 for 9..16 x 33..64), else the square
        // covering both.
        let rect = format!("{text}splitkx d nn 16 64 20 50.0 40.0\nsplitkx d nn 64 20 30.0 60.0\n");
        let m2 = Model::builtin(&h200()).with_lines(&rect, "tuned");
        let (take, hy, _, why) = m2.table_verdict::<f64>(Trans::No, Trans::No, 10, 40, 1 << 20, true).unwrap();
        assert!(!take && (hy - 50.0).abs() < 1e-9 && why.contains("16x64"), "{why}");
        let (take, hy, _, why) = m2.table_verdict::<f64>(Trans::No, Trans::No, 40, 10, 1 << 20, true).unwrap();
        assert!(take && (hy - 30.0).abs() < 1e-9 && why.contains("64x64"), "{why}");
        // Unaligned operands: both sides scaled by the measured factors (or the default): 70 us
        // at 2^20 becomes 91 (x1.3) against cuBLAS's 90, so cuBLAS. (A line without log2 k, as
        // tunes of session 12 and before wrote them, is a factor at 2^20.)
        let un = Model::builtin(&h200()).with_lines(&format!("{text}splitku d nn 16 1.3 1.0\n"), "tuned");
        assert_eq!(un.unaligned.len(), 1);
        let (take, hy, _, why) = un.table_verdict::<f64>(Trans::No, Trans::No, 16, 16, 1 << 20, false).unwrap();
        assert!(!take && (hy - 91.0).abs() < 1e-9 && why.contains("unaligned"), "{why}");
        let (take, ..) = un.table_verdict::<f64>(Trans::No, Trans::No, 16, 16, 1 << 20, true).unwrap();
        assert!(take);
        let (_, hy, ..) = m.table_verdict::<f64>(Trans::No, Trans::No, 16, 16, 1 << 20, false).unwrap();
        assert!((hy - 70.0 * UNALIGNED_DEFAULT.0).abs() < 1e-9);
        // Factors per log2 k, interpolated between them and held past the ends; cuBLAS's counts
        // too: at 2^18 split-k's 30.5 x1.05 = 32.0 against cuBLAS's 31 x1.2 = 37.2 takes split-k,
        // where the aligned call does not.
        let lines = "splitku d nn 16 18 1.05 1.2\nsplitku d nn 16 20 1.3 1.0\nsplitku d nn 16 20 1.4 1.0\n\
                     splitku d nn 4 18 1.0 2.0\nsplitku d nn 4 20 1.0 2.0\n";
        let un = Model::builtin(&h200()).with_lines(&format!("{text}{lines}"), "tuned");
        assert_eq!(un.unaligned[&('d', 0, 16)], vec![(18, 1.05, 1.2), (20, 1.4, 1.0)], "the later line wins");
        let (take, hy, cu, why) = un.table_verdict::<f64>(Trans::No, Trans::No, 16, 16, 1 << 18, false).unwrap();
        assert!(take && (hy - 30.5 * 1.05).abs() < 1e-9 && (cu - 31.0 * 1.2).abs() < 1e-9, "{why}");
        assert!(!un.table_verdict::<f64>(Trans::No, Trans::No, 16, 16, 1 << 18, true).unwrap().0);
        let (fh, fc) = un.unaligned_factors('d', 0, 16, 16, 1 << 19);
        assert!((fh - (1.05f64 * 1.4).sqrt()).abs() < 1e-12 && (fc - 1.2f64.sqrt()).abs() < 1e-12);
        assert_eq!(un.unaligned_factors('d', 0, 9, 16, 1 << 12), (1.05, 1.2));
        assert_eq!(un.unaligned_factors('d', 0, 16, 16, 1 << 24), (1.4, 1.0));
        // A rectangle: the larger split-k factor and the smaller cuBLAS one of its two edges
        // (4 -> the 4 row, 16 -> the 16 row; 2 -> 4; 64 has no row: the default).
        assert_eq!(un.unaligned_factors('d', 0, 3, 16, 1 << 18), (1.05, 1.2));
        assert_eq!(un.unaligned_factors('d', 0, 2, 4, 1 << 18), (1.0, 2.0));
        assert_eq!(un.unaligned_factors('d', 0, 2, 64, 1 << 18), (UNALIGNED_DEFAULT.0, 1.0));
        assert_eq!(un.unaligned_factors('s', 0, 2, 4, 1 << 18), UNALIGNED_DEFAULT);
        // Outputs with an edge over 64 need the larger margin: 0.9x cuBLAS takes 64x64 and
        // 8x64, not 8x128 or 128x128; 0.6x takes 8x128.
        let big = "splitkx d nn 64 16 45.0 50.0\nsplitkx d nn 128 16 45.0 50.0\nsplitkx d nn 8 64 16 45.0 50.0\n\
                   splitkx d nn 8 128 16 45.0 50.0\nsplitkx d nn 8 128 18 40.0 50.0\nsplitkx d nn 8 128 20 30.0 50.0\n";
        let mb = Model::builtin(&h200()).with_lines(big, "tuned");
        let take = |m: i64, n: i64, k: i64| mb.table_verdict::<f64>(Trans::No, Trans::No, m, n, k, true).unwrap().0;
        assert!(take(64, 64, 1 << 16) && take(8, 64, 1 << 16));
        assert!(!take(128, 128, 1 << 16), "128x128");
        assert!(!take(8, 128, 1 << 16), "8x128");
        assert!(!take(100, 8, 1 << 16), "100x8");
        assert!(take(8, 128, 1 << 20), "0.6x");
        assert!(!take(8, 128, 1 << 18), "0.8x is not enough");
        let (.., why) = mb.table_verdict::<f64>(Trans::No, Trans::No, 8, 128, 1 << 16, true).unwrap();
        assert!(why.contains("<= 0.70x"), "{why}");
        // The shipped table keeps DGEMM T,N 128x128 k = 2^12 (tuned 0.79x) with cuBLAS.
        let shipped = Model::builtin(&h200()).with_lines(SHIPPED_SM90, "shipped sm90");
        let v = shipped.table_verdict::<f64>(Trans::Trans, Trans::No, 128, 128, 1 << 12, true).unwrap();
        assert!(!v.0 && v.1 < 0.8 * v.2, "{}", v.3);
        // predict follows the table.
        let p = predict_with::<f64>(&m, Trans::No, Trans::No, 16, 16, 1 << 20, true);
        assert!(p.splitk && (p.splitk_us - 70.0).abs() < 1e-9, "{p:?}");
        // The recipe parser ignores the table lines.
        assert!(tune::parse(text).is_empty());
    }

    #[test]
    fn tuned_lines_override_the_builtins() {
        let text =
            "saxpy 0.5 0.1 64 1.0\nsplitk bw 4.1e12\nsplitk t0_us 4.5\nsplitk vendor.d.16.20 95.5\nsplitk junk\n";
        let m = Model::builtin(&h200()).with_lines(text, "tuned");
        assert_eq!(m.bw, 4.1e12);
        assert_eq!(m.t0_us, 4.5);
        assert_eq!(m.vendor[0][2], 95.5);
        assert_eq!(m.source, "tuned");
        assert_eq!(m.vendor_source, "tuned cuBLAS table");
        // The recipe parser ignores the splitk lines.
        assert_eq!(tune::parse(text).len(), 1);
    }
}
