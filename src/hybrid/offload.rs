//! Host Level-3 offload (seed 002, phase 1): C := alpha*op(A)*op(B) + beta*C computed on the
//! GPU from HOST memory, for a host-ABI `?gemm_` / `cblas_?gemm` call the planner
//! (`plan::gemm`) sent here.
//!
//! How one call runs:
//! - C is cut into tiles (`tile_for`: a quarter to half of the larger side, 512..2048, or the
//!   `HYBLAS_OFFLOAD_TILE` / [`with_knobs`] override). The device holds a resident copy of the
//!   host operands of one *block* of C (normally the whole problem; a problem larger than the
//!   device's free memory is cut into row/column blocks run one after the other, A's rows kept
//!   across the column blocks of one row block). Each panel of op(A) and op(B) therefore crosses
//!   the bus once per block, never once per tile.
//! - Three streams of the call's own: host->device copies, the real cuBLAS `cublas?gemm_v2` on
//!   hyblas's own handle (one call per tile, waiting on an event after the tile's uploads), and
//!   device->host copies (each waiting on its tile's compute event). Copies go through pinned
//!   chunks (a small ring per direction): the calling thread packs the next piece of an operand
//!   into a free chunk (all CPU-engine threads, `cpu::threads::for_each_part`) while the
//!   previous pieces are in flight; a helper thread takes finished C tiles back the same way.
//!   No page of the caller's memory is pinned.
//! - beta == 0: C is not uploaded. alpha == 0 or k == 0: neither A nor B is uploaded (cuBLAS
//!   gets k = 0, C := beta*C). Operands already in device or managed memory
//!   (`runtime::is_device_pointer`) are used in place; a device C is computed in place.
//!
//! Failure: every allocation (device memory, pinned chunks, streams, the cuBLAS handle) happens
//! before the first copy, so out-of-memory and a missing cuBLAS return before anything was
//! written. A copy or GEMM that fails later stops the pipeline; the [`Failure`] then says which
//! parts of C already hold their final value (`remaining()` lists the rest), so the caller's CPU
//! fallback recomputes exactly those and no element of C is ever updated twice. Pieces of C are
//! written to the caller's memory only after their device->host copy succeeded.
//!
//! Concurrency: each call takes a pipeline (streams, chunks, events, device arena) from a pool
//! and gives it back, so host threads calling at the same time never share one. The device
//! arena is kept for the next call up to `HYBLAS_OFFLOAD_KEEP_MB` (default a quarter of the
//! device memory), so repeated calls do not pay `cuMemAlloc` each time.
//!
//! Co-execution ([`coexec`], seed 002 phase 2): C's columns form one queue; the GPU pipeline
//! (fed by the calling thread) takes column panels from the left, the CPU engine (a thread of
//! its own, on `threads - feeders` cores) from the right, until they meet. The GPU's claims are
//! a tile column at most, throttled to two in flight, and shrink to its fair part of what is
//! left as the end nears; the CPU's are guided (half its fair part of what is left) and never
//! one the GPU would finish sooner. The fair parts come from column rates first predicted by the
//! model (`plan::offload`) and then measured as the call runs, so a wrong prediction corrects
//! itself. A forced share ([`crate::plan::offload::with_share`], `HYBLAS_OFFLOAD_SHARE`) fences
//! the queue: the GPU takes exactly the first `share` of the columns, the CPU the rest. While the
//! CPU engine computes, the GPU's copies are packed by `feeders` threads of a small pool of their
//! own ([`Copier::Feed`]), never queued behind the engine's work. If the GPU fails, it stops
//! claiming, the CPU takes what is left in the queue, and the parts of the GPU's claims not yet
//! written back ([`Failure::remaining`]) are computed by the CPU engine at the end: C is complete
//! and no element is updated twice.
//!
//! Nothing here decides where a call runs: the planner (`plan::gemm::host_gemm`) calls [`gemm`]
//! or [`coexec`] with its numbers, then runs the CPU fallback of a failed offload, writes the
//! trace line (predicted and measured time) and records the thread's outcome.

use crate::config;
use crate::cpu::threads;
use crate::gpu::driver::{check, sys, GpuError, Result};
use crate::gpu::runtime::{is_device_pointer, DeviceBuffer, Runtime};
use crate::gpu::{DMat, Exec};
use crate::types::{MatMut, MatRef, Scalar, Trans};
use once_cell::sync::Lazy;
use parking_lot::Mutex;
use std::cell::Cell;
use std::collections::VecDeque;
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Instant;

// ---- Knobs ----

/// Overrides for tests and benchmarks (per thread, see [`with_knobs`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Knobs {
    /// C tile (rows, columns).
    pub tile: Option<(usize, usize)>,
    /// Bytes per copy piece (at most the chunk size).
    pub piece_bytes: Option<usize>,
    /// Pieces the call's traffic is cut into, where `piece_bytes` is not given.
    pub pieces: Option<usize>,
    /// Device memory the planner may use for one block, in bytes (forces the blocked path).
    pub device_budget: Option<usize>,
    /// Fail (as a failed device->host copy would) after this many pieces of C were written
    /// back: tests of the CPU fallback on a real GPU.
    pub fail_after: Option<usize>,
    /// Fail (as a failed cuBLAS call would) instead of launching the GEMM of the tile after
    /// this many (test-only fault injection; also `HYBLAS_OFFLOAD_FAULT=N` for demonstrations).
    pub fail_gemm_after: Option<usize>,
}

thread_local! {
    static KNOBS: Cell<Knobs> = const {
        Cell::new(Knobs {
            tile: None,
            piece_bytes: None,
            pieces: None,
            device_budget: None,
            fail_after: None,
            fail_gemm_after: None,
        })
    };
}

/// Run `f` with this thread's offloads using `k` (tests force small tiles, pieces and device
/// budgets so that a small problem spans many tiles, pieces and blocks).
pub fn with_knobs<R>(k: Knobs, f: impl FnOnce() -> R) -> R {
    crate::config::with_local(&KNOBS, k, f)
}

fn knobs() -> Knobs {
    let mut k = KNOBS.with(|c| c.get());
    if k.fail_gemm_after.is_none() {
        k.fail_gemm_after = *ENV_FAULT;
    }
    k
}

/// `HYBLAS_OFFLOAD_FAULT=N`: every offloaded call fails its GEMM after N tiles (a test and
/// demonstration knob: the CPU then finishes the call, see the trace).
static ENV_FAULT: Lazy<Option<usize>> =
    Lazy::new(|| config::value("HYBLAS_OFFLOAD_FAULT").and_then(|v| v.trim().parse::<usize>().ok()));

/// `HYBLAS_OFFLOAD_TILE=T` or `MxN`: the C tile.
static ENV_TILE: Lazy<Option<(usize, usize)>> = Lazy::new(|| {
    let v = config::value("HYBLAS_OFFLOAD_TILE")?;
    let mut it = v.split(['x', 'X', ',']).map(|s| s.trim().parse::<usize>().ok().filter(|&t| t > 0));
    let a = it.next().flatten()?;
    let b = it.next().flatten().unwrap_or(a);
    Some((a, b))
});

/// `HYBLAS_OFFLOAD_TIMELINE=1`: each offloaded call prints its pipeline's timeline to stderr
/// when it ends (`tl <us since the call began> <event> <a> <b>` lines after a `timeline` line:
/// each piece's wait for its chunk and its packing, each GEMM tile's launch, each piece written
/// back, a co-executed call's claims and CPU units). A diagnostic for one calling thread: calls
/// from several threads at once interleave their events.
static TIMELINE: Lazy<bool> = Lazy::new(|| config::value("HYBLAS_OFFLOAD_TIMELINE").is_some_and(|v| v.trim() == "1"));
static MARKS: Mutex<Vec<(Instant, &'static str, usize, usize)>> = Mutex::new(Vec::new());

/// Record `what` (with two numbers) on the timeline, where it is on.
#[inline]
pub(crate) fn mark(what: &'static str, a: usize, b: usize) {
    if *TIMELINE {
        MARKS.lock().push((Instant::now(), what, a, b));
    }
}

/// End the call's timeline, print and clear it, where it is on (`label`: the call).
pub(crate) fn dump_timeline(label: std::fmt::Arguments) {
    if !*TIMELINE {
        return;
    }
    mark("end", 0, 0);
    let marks = std::mem::take(&mut *MARKS.lock());
    let Some(t0) = marks.first().map(|m| m.0) else { return };
    let mut out = format!("timeline {label}\n");
    for (t, what, a, b) in marks {
        out += &format!("tl {:.1} {what} {a} {b}\n", (t - t0).as_secs_f64() * 1e6);
    }
    eprint!("{out}");
}

/// Pinned chunk size and count per direction (`HYBLAS_OFFLOAD_CHUNK_MB`, `HYBLAS_OFFLOAD_CHUNKS`).
pub(super) static CHUNK_BYTES: Lazy<usize> =
    Lazy::new(|| config::threshold("HYBLAS_OFFLOAD_CHUNK_MB", 16).clamp(1, 1024) << 20);
static CHUNKS: Lazy<usize> = Lazy::new(|| config::threshold("HYBLAS_OFFLOAD_CHUNKS", 4).clamp(2, 64));
/// `HYBLAS_OFFLOAD_PIECE_KB`: bytes per copy piece (default: [`piece_for`]).
static ENV_PIECE: Lazy<Option<usize>> =
    Lazy::new(|| config::value("HYBLAS_OFFLOAD_PIECE_KB")?.trim().parse::<usize>().ok().map(|kb| kb << 10));
/// `HYBLAS_OFFLOAD_PIECES`: pieces a call's traffic is cut into (default [`PIECES`]).
static ENV_PIECES: Lazy<usize> = Lazy::new(|| config::threshold("HYBLAS_OFFLOAD_PIECES", PIECES).max(1));
/// Pieces per call by default.
pub const PIECES: usize = 8;

/// The C tile of an m x n x k problem with `elem`-byte elements: the knob, else
/// `HYBLAS_OFFLOAD_TILE`, else one tile where a square of the larger side holds at most
/// [`ONE_TILE_BYTES`], else a quarter of the larger side, or half of it up to 1024 where that is
/// more, rounded down to 256, between 512 and 2048. Small enough that the first tile's panels
/// (the pipeline's start-up) are a small part of the traffic, large enough that each cuBLAS call
/// fills the GPU (2048^2 = 256 CTAs of 128^2) and that the pieces each tile of C starts (its
/// upload and its copy back; 60-70 us each in the H200 hosts' calibrations) stay few: at
/// n = 2048 a quarter (16 tiles of 512) ran GPU-only DGEMM in 5.42 ms and SGEMM in 3.89, half
/// (4 of 1024) in 3.54 and 3.07 (H200, `bench/results/nvidia-h200-sm90-offload-tile-diag.txt`),
/// as the model prices them (`plan::offload`'s test `the_default_tile_is_the_models_cheapest`).
/// At n = 1024 the quarter (512) stays for 8- and 16-byte elements (DGEMM ran as fast with one
/// tile, ZGEMM and DSYRK 23-35% slower), while SGEMM ran 9% faster with one tile than with four
/// (session 35, 8 pieces and the crew: 1.18 against 1.29 ms), as the model prices it.
/// The side rule looks at the larger side, so a co-executed call's GPU columns (at least half
/// of C wherever the GPU side's pipeline is worth running) get the tile the model priced.
pub fn tile_for(m: usize, n: usize, _k: usize, elem: usize) -> (usize, usize) {
    let (mt, nt) = knobs().tile.or(*ENV_TILE).unwrap_or_else(|| {
        let side = m.max(n);
        // Saturating: an ILP64 caller's side of 2^31 or more would wrap the product to a small
        // number, and a one-tile call of that side.
        if side.saturating_mul(side).saturating_mul(elem) <= ONE_TILE_BYTES {
            return (side, side);
        }
        let t = ((side / 4).max((side / 2).min(1024)) / 256 * 256).clamp(512, 2048);
        (t, t)
    });
    (mt.clamp(1, m.max(1)), nt.clamp(1, n.max(1)))
}

/// C squares of at most this many bytes go to the GPU as one tile ([`tile_for`]): SGEMM
/// n <= 1024, D n <= 724, Z n <= 512.
pub const ONE_TILE_BYTES: usize = 4 << 20;

/// Bytes per copy piece for a call moving `traffic` bytes.
pub(crate) fn piece_for(traffic: usize) -> usize {
    let k = knobs();
    let pieces = k.pieces.unwrap_or(*ENV_PIECES).max(1);
    let p = k.piece_bytes.or(*ENV_PIECE).unwrap_or_else(|| (traffic / pieces).clamp(1 << 20, *CHUNK_BYTES));
    p.clamp(16, *CHUNK_BYTES)
}

// ---- Results ----

/// A rectangle of C: rows `i0..i0+m`, columns `j0..j0+n`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tile {
    pub i0: usize,
    pub j0: usize,
    pub m: usize,
    pub n: usize,
}

/// What an offloaded call did (for the trace and the benchmarks).
#[derive(Clone, Debug, Default)]
pub struct OffloadStats {
    /// C tiles computed, and the tile shape.
    pub tiles: usize,
    pub tile: (usize, usize),
    /// Device-resident blocks (1 unless the problem exceeded the device memory).
    pub blocks: usize,
    pub h2d_bytes: u64,
    pub d2h_bytes: u64,
    /// Wall time of the call (the GPU pipeline alone in [`gemm`]; the whole call, fallback
    /// included, in [`coexec`] and `plan::gemm::host_gemm`).
    pub secs: f64,
    /// A, B, C used in place (device or managed memory).
    pub in_place: [bool; 3],
    /// How the call ran: "gpu", "split" (co-execution, dynamic), "split-fixed" (a forced
    /// share) or "cpu" (a model decision or a forced share of 0).
    pub mode: &'static str,
    /// Fraction of C's elements the GPU computed.
    pub gpu_share: f64,
    /// Co-execution: when each side finished its last piece of C, from the call's start.
    pub gpu_side_secs: f64,
    pub cpu_side_secs: f64,
    /// Co-execution: the CPU engine's threads and the threads packing for the GPU.
    pub cpu_threads: usize,
    pub feeders: usize,
    /// Co-execution: C's columns each side took from the queue, and the CPU's units.
    pub gpu_cols: usize,
    pub cpu_cols: usize,
    pub cpu_units: usize,
    /// The GPU's error when the CPU finished its part (co-execution).
    pub gpu_error: Option<String>,
    /// Elements of C the CPU computed after the GPU failed (its unfinished claims).
    pub fallback_elems: usize,
    /// The planner's predicted time of the call, microseconds (0: none).
    pub pred_us: f64,
}

impl OffloadStats {
    /// Whether the call was co-executed ("split" or "split-fixed").
    pub fn co_executed(&self) -> bool {
        self.mode.starts_with("split")
    }
}

impl std::fmt::Display for OffloadStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.mode == "cpu" {
            return write!(f, "mode=cpu");
        }
        if !self.mode.is_empty() {
            write!(f, "mode={} ", self.mode)?;
        }
        write!(
            f,
            "tiles={}x({}x{}) blocks={} h2d={:.1}MB d2h={:.1}MB",
            self.tiles,
            self.tile.0,
            self.tile.1,
            self.blocks,
            self.h2d_bytes as f64 / 1e6,
            self.d2h_bytes as f64 / 1e6
        )?;
        if self.co_executed() {
            write!(
                f,
                " gpu_share={:.3} gpu_cols={} cpu_cols={} cpu_units={} gpu_side={:.1}us cpu_side={:.1}us cpu_threads={} feeders={}",
                self.gpu_share,
                self.gpu_cols,
                self.cpu_cols,
                self.cpu_units,
                self.gpu_side_secs * 1e6,
                self.cpu_side_secs * 1e6,
                self.cpu_threads,
                self.feeders
            )?;
        }
        let names = ["A", "B", "C"];
        let dev: Vec<&str> = (0..3).filter(|&i| self.in_place[i]).map(|i| names[i]).collect();
        if !dev.is_empty() {
            write!(f, " in-place={}", dev.join(","))?;
        }
        if let Some(e) = &self.gpu_error {
            write!(f, " gpu_failed=\"{e}\" cpu_finished={} elements", self.fallback_elems)?;
        }
        Ok(())
    }
}

/// An offload that did not finish: the error, and which parts of C already hold their final
/// value (the caller recomputes [`Failure::remaining`] on the CPU).
#[derive(Debug)]
pub struct Failure {
    pub error: GpuError,
    tiles: Vec<Tile>,
    /// Per tile, the pieces written back to the caller's C (in piece order).
    done: Vec<usize>,
    piece_bytes: usize,
    elem: usize,
}

impl Failure {
    fn untouched(error: GpuError, m: usize, n: usize) -> Self {
        Failure { error, tiles: vec![Tile { i0: 0, j0: 0, m, n }], done: vec![0], piece_bytes: 1, elem: 1 }
    }

    /// Whether nothing of C was written.
    pub fn untouched_c(&self) -> bool {
        self.done.iter().all(|&d| d == 0)
    }

    /// The parts of C that still need computing (all of C when nothing was written).
    pub fn remaining(&self) -> Vec<Tile> {
        remaining_of(&self.tiles, &self.done, self.piece_bytes, self.elem)
    }
}

/// The parts of `tiles` not yet written back, when `done[t]` of tile `t`'s pieces (of
/// `piece_bytes`, elements of `elem` bytes) were (a missing entry: none).
fn remaining_of(tiles: &[Tile], done: &[usize], piece_bytes: usize, elem: usize) -> Vec<Tile> {
    let mut out = Vec::new();
    for (i, t) in tiles.iter().enumerate() {
        let d = done.get(i).copied().unwrap_or(0);
        if d == 0 {
            out.push(*t);
            continue;
        }
        let g = Pieces::new(t.m * elem, t.n, elem, piece_bytes);
        if d >= g.count() {
            continue;
        }
        // Pieces go down a column, then to the next column: what is left is the rest of one
        // column and the columns after it.
        let (r0, c0, _, _) = g.piece(d);
        let r0 = r0 / elem;
        if r0 > 0 {
            out.push(Tile { i0: t.i0 + r0, j0: t.j0 + c0, m: t.m - r0, n: 1 });
            if c0 + 1 < t.n {
                out.push(Tile { i0: t.i0, j0: t.j0 + c0 + 1, m: t.m, n: t.n - c0 - 1 });
            }
        } else {
            out.push(Tile { i0: t.i0, j0: t.j0 + c0, m: t.m, n: t.n - c0 });
        }
    }
    out
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let left = self.remaining();
        let tot: usize = self.tiles.iter().map(|t| t.m * t.n).sum();
        let rem: usize = left.iter().map(|t| t.m * t.n).sum();
        write!(f, "{} ({} of {} elements of C left to compute)", self.error, rem, tot)
    }
}

// ---- Pieces: how a 2-D copy is cut to fit the pinned chunks ----

/// A `width`-byte x `height` block cut into pieces of at most `piece` bytes: whole columns
/// (`hp` of them) when a column fits, else `wp` bytes of one column (a multiple of the element).
#[derive(Clone, Copy, Debug)]
struct Pieces {
    width: usize,
    height: usize,
    wp: usize,
    hp: usize,
}

impl Pieces {
    fn new(width: usize, height: usize, elem: usize, piece: usize) -> Self {
        if width <= piece {
            Pieces { width, height, wp: width.max(1), hp: (piece / width.max(1)).clamp(1, height.max(1)) }
        } else {
            Pieces { width, height, wp: (piece / elem).max(1) * elem, hp: 1 }
        }
    }
    fn per_column(&self) -> usize {
        self.width.div_ceil(self.wp)
    }
    fn count(&self) -> usize {
        if self.width == 0 || self.height == 0 {
            return 0;
        }
        self.per_column() * self.height.div_ceil(self.hp)
    }
    /// Piece `p`: (byte offset in the column, first column, bytes, columns).
    fn piece(&self, p: usize) -> (usize, usize, usize, usize) {
        let pc = self.per_column();
        let (col_group, r) = (p / pc, p % pc);
        let (x0, c0) = (r * self.wp, col_group * self.hp);
        (x0, c0, self.wp.min(self.width - x0), self.hp.min(self.height - c0))
    }
}

// ---- Host copies ----

#[derive(Clone, Copy)]
struct SendPtr(*mut u8);
// SAFETY: used only for disjoint byte ranges of buffers that outlive the parallel copy.
unsafe impl Send for SendPtr {}
unsafe impl Sync for SendPtr {}
impl SendPtr {
    // A method (not field access) so closures capture the Send wrapper, not the raw pointer.
    fn get(self) -> *mut u8 {
        self.0
    }
}

/// Least bytes per thread of a copy (`HYBLAS_OFFLOAD_COPY_PART_KB`, default 256): below twice
/// this a copy runs on the calling thread alone. (Session 34's timeline on an H200 host packed
/// a 2 MB piece in 110-130 us with 2, 4 and 8 threads alike: a lead for fewer, larger parts.)
static PAR_COPY_MIN: Lazy<usize> =
    Lazy::new(|| config::threshold("HYBLAS_OFFLOAD_COPY_PART_KB", 256).clamp(4, 1 << 20) << 10);

/// Who packs and unpacks the pinned chunks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Copier {
    /// The CPU engine's pool, all its threads (the GPU has the call to itself).
    Pool,
    /// `f` threads (the calling one and `f - 1` of a small pool of their own): co-execution,
    /// where the engine's threads compute the CPU's share of C and a copy queued behind their
    /// work would stall the GPU.
    Feed(usize),
}

/// Most threads [`Copier::Feed`] uses.
pub const MAX_FEEDERS: usize = 8;

/// Where co-execution holds the feeders' pool ([`threads::PoolPins`]).
static FEED_PINS: threads::PoolPins = threads::PoolPins::new();

static FEED_POOL: Lazy<Option<rayon::ThreadPool>> = Lazy::new(|| {
    crate::trace::went_cold();
    rayon::ThreadPoolBuilder::new()
        .num_threads(MAX_FEEDERS - 1)
        .thread_name(|i| format!("hyblas-feed-{i}"))
        .build()
        .ok()
});

/// Call `f(part)` for `part in 0..parts` with `cp`'s threads (part 0 on the caller).
pub(super) fn copy_parts(cp: Copier, parts: usize, f: &(dyn Fn(usize) + Sync)) {
    if parts <= 1 {
        return f(0);
    }
    match (cp, FEED_POOL.as_ref()) {
        (Copier::Pool, _) => {
            // The crew where it is on: the guard keeps it spinning through this copy, and
            // its grace through the short gaps to the call's next one.
            if let Some(crew) = crate::cpu::crew::offload_crew() {
                let _hot = crew.hot();
                if crew.run(parts, f) {
                    return;
                }
            }
            threads::for_each_part(parts, parts, f)
        }
        (Copier::Feed(_), Some(pool)) => {
            FEED_PINS.free_for_work(pool);
            pool.in_place_scope(|s| {
                for part in 1..parts {
                    s.spawn(move |_| f(part));
                }
                f(0);
            })
        }
        (Copier::Feed(_), None) => (0..parts).for_each(f),
    }
}

/// Copy `height` runs of `width` bytes from `src` (runs `sp` bytes apart) to `dst` (`dp` apart),
/// on `cp`'s threads.
///
/// # Safety
/// Both regions valid; they do not overlap.
pub(super) unsafe fn copy2d(
    cp: Copier,
    src: *const u8,
    sp: usize,
    dst: *mut u8,
    dp: usize,
    width: usize,
    height: usize,
) {
    let total = width * height;
    if total == 0 {
        return;
    }
    let t = match cp {
        Copier::Pool => threads::nthreads(),
        Copier::Feed(f) => f.clamp(1, MAX_FEEDERS),
    };
    let parts = (total / *PAR_COPY_MIN).clamp(1, t.max(1));
    let (s, d) = (SendPtr(src as *mut u8), SendPtr(dst));
    let run = |f: &(dyn Fn(usize) + Sync)| copy_parts(cp, parts, f);
    if width == sp && width == dp {
        // One contiguous run: split it in byte ranges.
        let step = total.div_ceil(parts);
        run(&|p| {
            let a = (p * step).min(total);
            let b = (a + step).min(total);
            std::ptr::copy_nonoverlapping(s.get().add(a), d.get().add(a), b - a);
        });
    } else if height >= parts {
        let step = height.div_ceil(parts);
        run(&|p| {
            for j in (p * step).min(height)..((p + 1) * step).min(height) {
                std::ptr::copy_nonoverlapping(s.get().add(j * sp), d.get().add(j * dp), width);
            }
        });
    } else {
        // Few tall columns: each part takes a row range of every column.
        let step = width.div_ceil(parts);
        run(&|p| {
            let a = (p * step).min(width);
            let b = (a + step).min(width);
            for j in 0..height {
                std::ptr::copy_nonoverlapping(s.get().add(j * sp + a), d.get().add(j * dp + a), b - a);
            }
        });
    }
}

/// Pitches beyond this take one 1-D copy per column (the 2-D copy's pitch limit).
const MAX_PITCH: usize = i32::MAX as usize;

/// Enqueue a 2-D copy between pinned host memory (packed, pitch `width`) and device memory
/// (pitch `dpitch`).
unsafe fn copy_async(
    to_device: bool,
    host: *mut u8,
    dev: u64,
    dpitch: usize,
    width: usize,
    height: usize,
    stream: sys::CUstream,
) -> Result<()> {
    if height == 1 || dpitch > MAX_PITCH || width == dpitch {
        if width == dpitch || height == 1 {
            let bytes = width * height;
            return if to_device {
                check(sys::cuMemcpyHtoDAsync_v2(dev, host as *const c_void, bytes, stream), "cuMemcpyHtoDAsync")
            } else {
                check(sys::cuMemcpyDtoHAsync_v2(host as *mut c_void, dev, bytes, stream), "cuMemcpyDtoHAsync")
            };
        }
        for j in 0..height {
            copy_async(to_device, host.add(j * width), dev + (j * dpitch) as u64, dpitch, width, 1, stream)?;
        }
        return Ok(());
    }
    // Every field set explicitly: the struct holds enums without a zero value, so it cannot
    // be zero-initialised.
    use sys::CUmemorytype::{CU_MEMORYTYPE_DEVICE as DEV, CU_MEMORYTYPE_HOST as HOST};
    let p = sys::CUDA_MEMCPY2D {
        srcXInBytes: 0,
        srcY: 0,
        srcMemoryType: if to_device { HOST } else { DEV },
        srcHost: if to_device { host as *const c_void } else { std::ptr::null() },
        srcDevice: if to_device { 0 } else { dev },
        srcArray: std::ptr::null_mut(),
        srcPitch: if to_device { width } else { dpitch },
        dstXInBytes: 0,
        dstY: 0,
        dstMemoryType: if to_device { DEV } else { HOST },
        dstHost: if to_device { std::ptr::null_mut() } else { host as *mut c_void },
        dstDevice: if to_device { dev } else { 0 },
        dstArray: std::ptr::null_mut(),
        dstPitch: if to_device { dpitch } else { width },
        WidthInBytes: width,
        Height: height,
    };
    check(sys::cuMemcpy2DAsync_v2(&p, stream), "cuMemcpy2DAsync")
}

// ---- The pipeline: streams, pinned chunks, events, device arena ----

pub(super) struct Chunk {
    pub(super) host: *mut u8,
    pub(super) ev: sys::CUevent,
}

pub(super) struct Pipe {
    pub(super) ordinal: i32,
    pub(super) h2d: sys::CUstream,
    pub(super) comp: sys::CUstream,
    pub(super) d2h: sys::CUstream,
    pub(super) up: Vec<Chunk>,
    pub(super) down: Vec<Chunk>,
    /// Recorded on h2d after a tile's uploads; comp waits on it at once, so one event serves
    /// every tile.
    pub(super) ready: sys::CUevent,
    /// One per tile of a block: the tile's GEMM finished (d2h waits on it, on another thread).
    pub(super) done: Vec<sys::CUevent>,
    pub(super) arena: Option<DeviceBuffer>,
    /// A stream or event failed in a way that may leave work in flight: not pooled again.
    pub(super) broken: bool,
}

// SAFETY: CUDA handles are process-wide; the pinned chunks are owned by the pipe, which one
// call uses at a time.
unsafe impl Send for Pipe {}

fn event() -> Result<sys::CUevent> {
    let mut e = std::ptr::null_mut();
    check(unsafe { sys::cuEventCreate(&mut e, sys::CUevent_flags::CU_EVENT_DISABLE_TIMING as u32) }, "cuEventCreate")?;
    Ok(e)
}

impl Pipe {
    fn new(rt: &Runtime) -> Result<Pipe> {
        crate::trace::went_cold();
        let mut p = Pipe {
            ordinal: rt.props.ordinal,
            h2d: std::ptr::null_mut(),
            comp: std::ptr::null_mut(),
            d2h: std::ptr::null_mut(),
            up: Vec::new(),
            down: Vec::new(),
            ready: std::ptr::null_mut(),
            done: Vec::new(),
            arena: None,
            broken: false,
        };
        // Blocking streams, as the runtime's own: they order with the legacy default stream a
        // CUDA caller may have used on device operands.
        for s in [&mut p.h2d, &mut p.comp, &mut p.d2h] {
            check(unsafe { sys::cuStreamCreate(s, 0) }, "cuStreamCreate")?;
        }
        p.ready = event()?;
        for dir in 0..2 {
            for _ in 0..*CHUNKS {
                let mut h: *mut c_void = std::ptr::null_mut();
                check(unsafe { sys::cuMemHostAlloc(&mut h, *CHUNK_BYTES, 0) }, "cuMemHostAlloc")?;
                let c = Chunk { host: h as *mut u8, ev: std::ptr::null_mut() };
                let list = if dir == 0 { &mut p.up } else { &mut p.down };
                list.push(c);
                list.last_mut().unwrap().ev = event()?;
            }
        }
        Ok(p)
    }

    pub(super) fn done_events(&mut self, n: usize) -> Result<()> {
        while self.done.len() < n {
            self.done.push(event()?);
        }
        Ok(())
    }

    /// Wait for everything the pipe enqueued.
    pub(super) fn sync(&mut self) -> Result<()> {
        let mut r = Ok(());
        for s in [self.h2d, self.comp, self.d2h] {
            let x = check(unsafe { sys::cuStreamSynchronize(s) }, "cuStreamSynchronize");
            if x.is_err() {
                self.broken = true;
                r = r.and(x);
            }
        }
        r
    }

    /// A device arena of at least `bytes` (grow-only, in 256 MiB steps).
    pub(super) fn arena(&mut self, bytes: usize) -> Result<u64> {
        if self.arena.as_ref().is_none_or(|a| a.bytes < bytes) {
            crate::trace::went_cold();
            self.arena = None;
            let want = bytes.div_ceil(256 << 20) * (256 << 20);
            self.arena = Some(DeviceBuffer::new(want).or_else(|_| DeviceBuffer::new(bytes))?);
        }
        Ok(self.arena.as_ref().unwrap().ptr)
    }
}

impl Drop for Pipe {
    fn drop(&mut self) {
        // SAFETY: handles created by this pipe, released once; errors at teardown ignored.
        unsafe {
            for s in [self.h2d, self.comp, self.d2h] {
                if !s.is_null() {
                    sys::cuStreamSynchronize(s);
                }
            }
            for c in self.up.iter().chain(&self.down) {
                sys::cuMemFreeHost(c.host as *mut c_void);
                if !c.ev.is_null() {
                    sys::cuEventDestroy_v2(c.ev);
                }
            }
            for &e in self.done.iter().chain([&self.ready]) {
                if !e.is_null() {
                    sys::cuEventDestroy_v2(e);
                }
            }
            for s in [self.h2d, self.comp, self.d2h] {
                if !s.is_null() {
                    sys::cuStreamDestroy_v2(s);
                }
            }
        }
    }
}

/// Idle pipelines (at most [`POOL_MAX`] kept).
static POOL: Lazy<Mutex<Vec<Pipe>>> = Lazy::new(|| Mutex::new(Vec::new()));
const POOL_MAX: usize = 4;

/// Device memory a pooled pipeline may keep (`HYBLAS_OFFLOAD_KEEP_MB`, default a quarter of
/// the device's memory).
fn keep_bytes(rt: &Runtime) -> usize {
    config::value("HYBLAS_OFFLOAD_KEEP_MB")
        .and_then(|v| v.trim().parse::<usize>().ok())
        .map(|mb| mb << 20)
        .unwrap_or(rt.props.total_mem as usize / 4)
}

pub(super) fn take_pipe(rt: &Runtime) -> Result<Pipe> {
    let pooled = {
        let mut pool = POOL.lock();
        pool.iter().position(|p| p.ordinal == rt.props.ordinal).map(|i| pool.swap_remove(i))
    };
    match pooled {
        Some(p) => Ok(p),
        None => Pipe::new(rt),
    }
}

pub(super) fn give_pipe(rt: &Runtime, mut p: Pipe) {
    if p.broken {
        return;
    }
    if p.arena.as_ref().is_some_and(|a| a.bytes > keep_bytes(rt)) {
        p.arena = None;
    }
    let mut pool = POOL.lock();
    if pool.len() < POOL_MAX {
        pool.push(p);
    }
}

/// Free the device memory idle pipelines keep (tests, and before a large device allocation).
pub fn release_idle() {
    POOL.lock().clear();
}

// ---- Uploads and downloads through the chunk rings ----

/// One 2-D region between host memory (pitch `hpitch` bytes) and device memory (pitch
/// `dpitch`): `width` bytes x `height` columns.
#[derive(Clone, Copy, Debug)]
struct Region {
    host: *mut u8,
    hpitch: usize,
    dev: u64,
    dpitch: usize,
    width: usize,
    height: usize,
}

/// The calling thread's side: packs pieces into the upload ring and enqueues their copies.
struct Uploader<'a> {
    chunks: &'a [Chunk],
    next: usize,
    stream: sys::CUstream,
    bytes: u64,
    copier: Copier,
}

impl<'a> Uploader<'a> {
    fn new(chunks: &'a [Chunk], stream: sys::CUstream, copier: Copier) -> Self {
        Uploader { chunks, next: 0, stream, bytes: 0, copier }
    }

    /// Enqueue the upload of `r`: each piece waits for its chunk's previous copy, is packed by
    /// the CPU threads, and copied asynchronously.
    unsafe fn upload(&mut self, r: Region, elem: usize, piece: usize) -> Result<()> {
        let g = Pieces::new(r.width, r.height, elem, piece);
        for p in 0..g.count() {
            let (x0, c0, w, h) = g.piece(p);
            let ch = &self.chunks[self.next];
            self.next = (self.next + 1) % self.chunks.len();
            check(sys::cuEventSynchronize(ch.ev), "cuEventSynchronize")?;
            mark("up-waited", w * h, 0);
            copy2d(self.copier, r.host.add(c0 * r.hpitch + x0), r.hpitch, ch.host, w, w, h);
            mark("up-packed", w * h, 0);
            copy_async(true, ch.host, r.dev + (c0 * r.dpitch + x0) as u64, r.dpitch, w, h, self.stream)?;
            check(sys::cuEventRecord(ch.ev, self.stream), "cuEventRecord")?;
            self.bytes += (w * h) as u64;
        }
        Ok(())
    }
}

/// The helper thread's side: copies finished tiles of C into the download ring and unpacks
/// them into the caller's memory in order.
struct Downloader<'a> {
    chunks: &'a [Chunk],
    /// (chunk, tile index, piece index, host region of the piece)
    pending: VecDeque<(usize, usize, usize, *mut u8, usize, usize, usize)>,
    head: usize,
    stream: sys::CUstream,
    bytes: u64,
    /// Pieces written back per tile (indexed like the block's tile list).
    done: Vec<usize>,
    /// Pieces written back so far, and the injected failure point ([`Knobs::fail_after`]).
    written: usize,
    fail_after: Option<usize>,
    copier: Copier,
}

impl<'a> Downloader<'a> {
    /// A downloader over the ring `chunks` on `stream`, expecting `tiles` tiles (it grows as
    /// needed), `written` pieces already counted toward `fail_after`.
    fn new(
        chunks: &'a [Chunk],
        stream: sys::CUstream,
        tiles: usize,
        written: usize,
        fail_after: Option<usize>,
        copier: Copier,
    ) -> Self {
        Downloader {
            chunks,
            pending: VecDeque::new(),
            head: 0,
            stream,
            bytes: 0,
            done: vec![0; tiles],
            written,
            fail_after,
            copier,
        }
    }

    /// Enqueue the download of tile `t` (region `r` of C), after event `ready`.
    unsafe fn tile(&mut self, t: usize, r: Region, ready: sys::CUevent, elem: usize, piece: usize) -> Result<()> {
        check(sys::cuStreamWaitEvent(self.stream, ready, 0), "cuStreamWaitEvent")?;
        if self.done.len() <= t {
            self.done.resize(t + 1, 0);
        }
        let g = Pieces::new(r.width, r.height, elem, piece);
        for p in 0..g.count() {
            if self.pending.len() == self.chunks.len() {
                self.finish_oldest()?;
            }
            let (x0, c0, w, h) = g.piece(p);
            let ci = (self.head + self.pending.len()) % self.chunks.len();
            let ch = &self.chunks[ci];
            copy_async(false, ch.host, r.dev + (c0 * r.dpitch + x0) as u64, r.dpitch, w, h, self.stream)?;
            check(sys::cuEventRecord(ch.ev, self.stream), "cuEventRecord")?;
            self.pending.push_back((ci, t, p, r.host.add(c0 * r.hpitch + x0), r.hpitch, w, h));
        }
        Ok(())
    }

    /// Wait for the oldest piece in flight and write it to the caller's memory.
    unsafe fn finish_oldest(&mut self) -> Result<bool> {
        let Some((ci, t, p, host, hpitch, w, h)) = self.pending.pop_front() else { return Ok(false) };
        if self.fail_after == Some(self.written) {
            return Err(GpuError::Other("injected failure (offload knob fail_after)".into()));
        }
        self.written += 1;
        let ch = &self.chunks[ci];
        check(sys::cuEventSynchronize(ch.ev), "cuEventSynchronize")?;
        mark("down-waited", t, p);
        copy2d(self.copier, ch.host, w, host, hpitch, w, h);
        mark("down-unpacked", t, p);
        self.head = (ci + 1) % self.chunks.len();
        debug_assert_eq!(self.done[t], p);
        self.done[t] = p + 1;
        self.bytes += (w * h) as u64;
        Ok(true)
    }
}

/// The download thread's loop, shared by GEMM and the other Level-3 routines: bind `rt`'s
/// context to the thread, then take messages from `rx` as they are sent (`on`), and whenever none waits make progress on what has been
/// enqueued (`idle`: true when it did something, false when nothing is left to do, which then
/// blocks on the next message). Stops when the sender is dropped or `abort` is set, then
/// finishes everything in flight; on an error it sets `abort` for the sending side.
fn download_loop<S, M>(
    rt: &Runtime,
    st: &mut S,
    rx: &mpsc::Receiver<M>,
    abort: &AtomicBool,
    mut idle: impl FnMut(&mut S) -> Result<bool>,
    mut on: impl FnMut(&mut S, M) -> Result<()>,
) -> Result<()> {
    let r = (|| -> Result<()> {
        rt.bind()?;
        mark("down-thread", 0, 0);
        loop {
            let msg = match rx.try_recv() {
                Ok(x) => x,
                Err(mpsc::TryRecvError::Empty) => {
                    // Nothing new: write back what has arrived, else wait.
                    if idle(st)? {
                        continue;
                    }
                    match rx.recv() {
                        Ok(x) => x,
                        Err(_) => break,
                    }
                }
                Err(mpsc::TryRecvError::Disconnected) => break,
            };
            if abort.load(Ordering::Relaxed) {
                break;
            }
            on(st, msg)?;
        }
        while idle(st)? {}
        Ok(())
    })();
    if r.is_err() {
        abort.store(true, Ordering::Relaxed);
    }
    r
}

// ---- GEMM ----

/// Where an operand's stored matrix lives on the device: element (r, c) of the caller's
/// stored matrix at `ptr + ((r - r0) + (c - c0) * ld) * elem` (a resident copy of the block
/// starting at (r0, c0), or the caller's own device memory with r0 = c0 = 0).
#[derive(Clone, Copy, Debug)]
struct DevOp {
    ptr: u64,
    ld: usize,
    r0: usize,
    c0: usize,
}

impl DevOp {
    fn at(&self, r: usize, c: usize, elem: usize) -> DMat {
        DMat { ptr: self.ptr + (((r - self.r0) + (c - self.c0) * self.ld) * elem) as u64, ld: self.ld as i64 }
    }
}

/// A host operand's stored region (rows `r0..r0+rows`, columns `c0..c0+cols` of the caller's
/// matrix at `base` with leading dimension `ld`) to device memory `dev` with leading dimension
/// `dld`.
#[allow(clippy::too_many_arguments)]
fn region(
    base: *const u8,
    ld: usize,
    r0: usize,
    c0: usize,
    rows: usize,
    cols: usize,
    dev: u64,
    dld: usize,
    elem: usize,
) -> Region {
    Region {
        host: unsafe { base.add((r0 + c0 * ld) * elem) } as *mut u8,
        hpitch: ld * elem,
        dev,
        dpitch: dld * elem,
        width: rows * elem,
        height: cols,
    }
}

const ALIGN: usize = 256;
pub(super) fn align(b: usize) -> usize {
    b.div_ceil(ALIGN) * ALIGN
}

/// The blocks C is cut into so that each block's resident copies (`need(rows, columns)`
/// bytes, see [`layout`]) fit `budget` bytes: (rows per block, columns per block), multiples of
/// the tile. Columns are halved first (A, the larger panel set in a square problem, then stays
/// resident across the column blocks of a block row), then rows.
fn plan_blocks(
    m: usize,
    n: usize,
    k: usize,
    tile: (usize, usize),
    budget: usize,
    need: impl Fn(usize, usize) -> usize,
) -> Result<(usize, usize)> {
    let (mut mi, mut nj) = (m, n);
    let halve = |x: usize, t: usize| ((x / 2).div_ceil(t) * t).max(t);
    while need(mi, nj) > budget {
        if nj > tile.1 {
            nj = halve(nj, tile.1);
        } else if mi > tile.0 {
            mi = halve(mi, tile.0);
        } else {
            return Err(GpuError::Other(format!(
                "offload: one {}x{} tile with k={k} needs {} MB of device memory, {} MB available",
                tile.0,
                tile.1,
                need(mi, nj) >> 20,
                budget >> 20
            )));
        }
    }
    Ok((mi, nj))
}

/// C := alpha*op(A)*op(B) + beta*C on the GPU of `rt` from host (or device) memory; op(A) is
/// m x k, op(B) k x n, all column-major with the given leading dimensions. Waits for the
/// result. On `Err`, [`Failure::remaining`] lists the parts of C not yet written.
///
/// # Safety
/// Pointers and leading dimensions as in reference BLAS (validated by the caller); C does not
/// overlap A or B.
#[allow(clippy::too_many_arguments)]
pub unsafe fn gemm<T: Scalar>(
    rt: &Runtime,
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
) -> std::result::Result<OffloadStats, Failure> {
    let start = Instant::now();
    mark("start", m, n);
    let tile = tile_for(m, n, k, std::mem::size_of::<T>());
    let mut stats = OffloadStats { tile, ..Default::default() };
    if m == 0 || n == 0 {
        return Ok(stats);
    }
    let untouched = |e| Failure::untouched(e, m, n);
    rt.bind().map_err(untouched)?;
    let elem = std::mem::size_of::<T>();
    let reads_ab = !alpha.is_zero() && k > 0;
    let kk = if reads_ab { k } else { 0 };
    let c_in = !beta.is_zero();
    let dev = [
        reads_ab && is_device_pointer(a as *const c_void),
        reads_ab && is_device_pointer(b as *const c_void),
        is_device_pointer(c as *const c_void),
    ];
    let host = [reads_ab && !dev[0], reads_ab && !dev[1], !dev[2]];
    stats.in_place = dev;

    let mut pipe = take_pipe(rt).map_err(untouched)?;
    let r = run::<T>(
        rt,
        &mut pipe,
        &mut stats,
        Problem { ta, tb, m, n, k: kk, alpha, a, lda, b, ldb, beta, c, ldc, host, c_in, elem },
    );
    // Nothing may still be in flight on the chunks or the arena when the pipe goes back.
    let synced = pipe.sync();
    give_pipe(rt, pipe);
    stats.secs = start.elapsed().as_secs_f64();
    dump_timeline(format_args!("gpu m={m} n={n} k={k} elem={elem} tile={tile:?} {:.1}us", stats.secs * 1e6));
    match (r, synced) {
        (Ok(()), Ok(())) => Ok(stats),
        (Err(f), _) => Err(f),
        (Ok(()), Err(e)) => Err(untouched(e)),
    }
}

/// The arguments of one offloaded GEMM (k already 0 when A and B are not read).
struct Problem<T> {
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
    /// A, B, C to be copied (host memory, and read at all).
    host: [bool; 3],
    /// C is read (beta != 0).
    c_in: bool,
    elem: usize,
}

/// A raw pointer that crosses to the download thread (the caller's C and the pinned chunks,
/// both alive until the scoped thread is joined).
struct Shared<T>(T);
// SAFETY: see above; the download thread is joined before the call returns.
unsafe impl<T> Send for Shared<T> {}
unsafe impl<T> Sync for Shared<T> {}

/// One step of a block's schedule, in the order the calling thread enqueues them.
#[derive(Clone, Copy, Debug)]
enum Step {
    /// Copy a host region to the device (through the upload ring).
    Up(Region),
    /// Tile `t` of the block: C (m x n at `c`) := alpha*op(A at `a`)*op(B at `b`) + beta*C
    /// with k terms.
    Gemm { t: usize, m: usize, n: usize, k: usize, a: DMat, b: DMat, c: DMat },
}

/// One block of C and what computing it takes.
struct Block {
    /// Its tiles' indices in [`Schedule::tiles`].
    tiles: std::ops::Range<usize>,
    steps: Vec<Step>,
    /// Per tile of the block: where its result goes back to the host (C on the host only).
    down: Vec<Region>,
}

/// Every tile of C and every copy and GEMM of one call, block by block: the GPU pipeline runs
/// it, and the unit tests run it on the CPU (`simulate`) to check the address arithmetic.
struct Schedule {
    tiles: Vec<Tile>,
    blocks: Vec<Block>,
}

/// Device bytes of a block's resident copies of A, B and C (rows x columns of C per block).
fn layout<T>(p: &Problem<T>, bm: usize, bn: usize) -> [usize; 3] {
    let e = p.elem;
    [
        if p.host[0] { align(bm * p.k * e) } else { 0 },
        if p.host[1] { align(p.k * bn * e) } else { 0 },
        if p.host[2] { align(bm * bn * e) } else { 0 },
    ]
}

/// The schedule of `p` with blocks of `bm` x `bn` and tiles of `tile`, the resident copies at
/// device address `base` (laid out as [`layout`] says).
fn schedule<T>(p: &Problem<T>, tile: (usize, usize), bm: usize, bn: usize, base: u64) -> Schedule {
    let (m, n, k, e) = (p.m, p.n, p.k, p.elem);
    let [a_bytes, b_bytes, _] = layout(p, bm, bn);
    let (dev_a, dev_b, dev_c) = (base, base + a_bytes as u64, base + (a_bytes + b_bytes) as u64);
    // A's stored rows (N) or columns (T/C) hold op(A)'s rows; B's stored columns (N) or rows
    // (T/C) hold op(B)'s columns.
    let (a_n, b_n) = (p.ta == Trans::No, p.tb == Trans::No);
    let mut tiles = Vec::new();
    let mut blocks = Vec::new();
    // The block row whose A, and the block column whose B, is resident (blocks run row by row).
    let (mut a_block, mut b_block) = (usize::MAX, usize::MAX);
    for bi0 in (0..m).step_by(bm) {
        for bj0 in (0..n).step_by(bn) {
            let (mi, nj) = (bm.min(m - bi0), bn.min(n - bj0));
            let da = if p.host[0] {
                let (r0, c0) = if a_n { (bi0, 0) } else { (0, bi0) };
                DevOp { ptr: dev_a, ld: (if a_n { mi } else { k }).max(1), r0, c0 }
            } else {
                DevOp { ptr: p.a as u64, ld: p.lda, r0: 0, c0: 0 }
            };
            let db = if p.host[1] {
                let (r0, c0) = if b_n { (0, bj0) } else { (bj0, 0) };
                DevOp { ptr: dev_b, ld: (if b_n { k } else { nj }).max(1), r0, c0 }
            } else {
                DevOp { ptr: p.b as u64, ld: p.ldb, r0: 0, c0: 0 }
            };
            let dc = if p.host[2] {
                DevOp { ptr: dev_c, ld: mi.max(1), r0: bi0, c0: bj0 }
            } else {
                DevOp { ptr: p.c as u64, ld: p.ldc, r0: 0, c0: 0 }
            };
            let mut a_up = vec![a_block == bi0; mi.div_ceil(tile.0)];
            let mut b_up = vec![b_block == bj0; nj.div_ceil(tile.1)];
            (a_block, b_block) = (bi0, bj0);
            let first = tiles.len();
            let mut steps = Vec::new();
            let mut down = Vec::new();
            for j0 in (bj0..bj0 + nj).step_by(tile.1) {
                for i0 in (bi0..bi0 + mi).step_by(tile.0) {
                    let t = Tile { i0, j0, m: tile.0.min(bi0 + mi - i0), n: tile.1.min(bj0 + nj - j0) };
                    let (ti, tj) = ((i0 - bi0) / tile.0, (j0 - bj0) / tile.1);
                    // op(A)'s rows i0.. and op(B)'s columns j0.. as stored, on the device.
                    let am = if a_n { da.at(i0, 0, e) } else { da.at(0, i0, e) };
                    let bmat = if b_n { db.at(0, j0, e) } else { db.at(j0, 0, e) };
                    let cm = dc.at(i0, j0, e);
                    if p.host[0] && !a_up[ti] {
                        let (r0, c0, rows, cols) = if a_n { (i0, 0, t.m, k) } else { (0, i0, k, t.m) };
                        steps.push(Step::Up(region(p.a as *const u8, p.lda, r0, c0, rows, cols, am.ptr, da.ld, e)));
                        a_up[ti] = true;
                    }
                    if p.host[1] && !b_up[tj] {
                        let (r0, c0, rows, cols) = if b_n { (0, j0, k, t.n) } else { (j0, 0, t.n, k) };
                        steps.push(Step::Up(region(p.b as *const u8, p.ldb, r0, c0, rows, cols, bmat.ptr, db.ld, e)));
                        b_up[tj] = true;
                    }
                    let cr = region(p.c as *const u8, p.ldc, i0, j0, t.m, t.n, cm.ptr, dc.ld, e);
                    if p.host[2] && p.c_in {
                        steps.push(Step::Up(cr));
                    }
                    let (am, bmat) = if k == 0 {
                        // A and B are not read: any address, leading dimensions cuBLAS accepts.
                        (DMat { ptr: cm.ptr, ld: t.m.max(1) as i64 }, DMat { ptr: cm.ptr, ld: t.n.max(1) as i64 })
                    } else {
                        (am, bmat)
                    };
                    steps.push(Step::Gemm { t: tiles.len() - first, m: t.m, n: t.n, k, a: am, b: bmat, c: cm });
                    if p.host[2] {
                        down.push(cr);
                    }
                    tiles.push(t);
                }
            }
            blocks.push(Block { tiles: first..tiles.len(), steps, down });
        }
    }
    Schedule { tiles, blocks }
}

unsafe fn run<T: Scalar>(
    rt: &Runtime,
    pipe: &mut Pipe,
    stats: &mut OffloadStats,
    p: Problem<T>,
) -> std::result::Result<(), Failure> {
    let (m, n, k, e) = (p.m, p.n, p.k, p.elem);
    let tile = stats.tile;
    let untouched = |err| Failure::untouched(err, m, n);

    // ---- Step 1: blocks that fit the device memory, the arena, the handle ----
    let (mut free, mut total) = (0usize, 0usize);
    check(sys::cuMemGetInfo_v2(&mut free, &mut total), "cuMemGetInfo").map_err(untouched)?;
    let have = pipe.arena.as_ref().map_or(0, |a| a.bytes);
    let budget = match knobs().device_budget {
        Some(b) => b,
        None => (((free + have) as f64 * 0.9) as usize).saturating_sub(64 << 20),
    };
    let (bm, bn) = plan_blocks(m, n, k, tile, budget, |bm, bn| layout(&p, bm, bn).iter().sum()).map_err(untouched)?;
    let base = pipe.arena(layout(&p, bm, bn).iter().sum::<usize>().max(ALIGN)).map_err(untouched)?;
    let traffic = (p.host[0] as usize * m * k + p.host[1] as usize * k * n) * e
        + p.host[2] as usize * (1 + p.c_in as usize) * m * n * e;
    let piece = piece_for(traffic);
    // The handle and the cuBLAS lookup before any copy (an empty GEMM): a missing cuBLAS
    // changes nothing.
    let ex = Exec { rt, stream: pipe.comp };
    let nil = DMat { ptr: base, ld: 1 };
    crate::gpu::vendor_calls::vendor_gemm::<T>(&ex, p.ta, p.tb, 0, 0, 0, p.alpha, nil, nil, p.beta, nil)
        .map_err(untouched)?;
    mark("set-up", piece, 0);

    let sched = schedule(&p, tile, bm, bn, base);
    let most = sched.blocks.iter().map(|b| b.tiles.len()).max().unwrap_or(0);
    pipe.done_events(most).map_err(untouched)?;
    stats.blocks = sched.blocks.len();
    stats.tiles = sched.tiles.len();
    let mut done = vec![0usize; sched.tiles.len()];
    let fail = |error: GpuError, done: &[usize]| Failure {
        error,
        tiles: sched.tiles.clone(),
        done: done.to_vec(),
        piece_bytes: piece,
        elem: e,
    };

    let kn = knobs();
    // Pieces written back by the blocks before (for the injected failure's count).
    let mut written = 0usize;
    let mut gemms = 0usize;
    for block in &sched.blocks {
        let nt = block.tiles.len();
        let abort = AtomicBool::new(false);
        let (tx, rx) = mpsc::channel::<Shared<DownMsg>>();
        let (h2d, ready) = (pipe.h2d, pipe.ready);
        let done_ev = &pipe.done[..nt];
        let pipe_ref = &*pipe;

        let (r, ubytes, (dr, dd, dbytes, dw)) = std::thread::scope(|s| {
            // ---- Step 2: the download thread (C on the host): tiles back as they finish ----
            let downloader = p.host[2].then(|| {
                let down = DownSpec { written, fail_after: kn.fail_after, copier: Copier::Pool, elem: e, piece };
                spawn_downloader(s, rt, pipe_ref, rx, &abort, nt, down)
            });

            // ---- Step 3: uploads and GEMMs in schedule order, on the calling thread ----
            let mut up = Uploader::new(&pipe_ref.up, h2d, Copier::Pool);
            let r = (|| -> Result<()> {
                for step in &block.steps {
                    if abort.load(Ordering::Relaxed) {
                        return Ok(());
                    }
                    match *step {
                        Step::Up(r) => up.upload(r, e, piece)?,
                        Step::Gemm { t, m, n, k, a, b, c } => {
                            injected_gemm_fault(kn, gemms)?;
                            gemms += 1;
                            // The tile's uploads are the last ones enqueued on h2d.
                            check(sys::cuEventRecord(ready, h2d), "cuEventRecord")?;
                            check(sys::cuStreamWaitEvent(ex.stream, ready, 0), "cuStreamWaitEvent")?;
                            mark("gemm", t, 0);
                            let (m, n, k) = (m as i64, n as i64, k as i64);
                            crate::gpu::vendor_calls::vendor_gemm::<T>(
                                &ex, p.ta, p.tb, m, n, k, p.alpha, a, b, p.beta, c,
                            )?;
                            check(sys::cuEventRecord(done_ev[t], ex.stream), "cuEventRecord")?;
                            if p.host[2] {
                                // A send fails only when the downloader stopped on an error,
                                // which the abort flag reports.
                                let _ = tx.send(Shared(DownMsg { t, r: block.down[t], ev: done_ev[t] }));
                            }
                        }
                    }
                }
                Ok(())
            })();
            if r.is_err() {
                abort.store(true, Ordering::Relaxed);
            }
            drop(tx);
            let d = match downloader {
                Some(h) => h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)),
                None => (Ok(()), vec![0; nt], 0, written),
            };
            (r, up.bytes, d)
        });
        written = dw;
        stats.h2d_bytes += ubytes;
        stats.d2h_bytes += dbytes;
        done[block.tiles.clone()].copy_from_slice(&dd[..nt]);
        // A failed GEMM or copy surfaces at this wait at the latest (the chunks and the arena
        // are reused by the next block and the next call, so nothing may still be in flight).
        let synced = pipe.sync();
        if let Err(err) = r.and(dr).and(synced) {
            return Err(fail(err, &done));
        }
    }
    Ok(())
}

/// [`Knobs::fail_gemm_after`]: an error in place of the GEMM after that many.
fn injected_gemm_fault(kn: Knobs, gemms: usize) -> Result<()> {
    if kn.fail_gemm_after == Some(gemms) {
        return Err(GpuError::Other(format!("injected failure of the GEMM of tile {gemms} (offload fault knob)")));
    }
    Ok(())
}

/// A tile for the download thread: its index, its region of C, the event after its GEMM.
struct DownMsg {
    t: usize,
    r: Region,
    ev: sys::CUevent,
}

/// The download thread's settings: pieces written back before it starts (for
/// [`Knobs::fail_after`]), who unpacks, the element size and the piece size.
#[derive(Clone, Copy)]
struct DownSpec {
    written: usize,
    fail_after: Option<usize>,
    copier: Copier,
    elem: usize,
    piece: usize,
}

/// What the download thread did: its result, pieces written back per tile, bytes, and the
/// running count of pieces written.
type DownOut = (Result<()>, Vec<usize>, u64, usize);

/// Start the download thread in scope `s`: it takes tiles as they are sent and writes back
/// what has arrived whenever nothing new waits; it stops when the sender is dropped, or on
/// `abort` (which it sets on an error of its own). `tiles`: the expected count (grows as needed).
fn spawn_downloader<'scope, 'env>(
    s: &'scope std::thread::Scope<'scope, 'env>,
    rt: &'env Runtime,
    pipe: &'env Pipe,
    rx: mpsc::Receiver<Shared<DownMsg>>,
    abort: &'env AtomicBool,
    tiles: usize,
    spec: DownSpec,
) -> std::thread::ScopedJoinHandle<'scope, DownOut> {
    let (chunks, stream) = (Shared(&pipe.down[..]), Shared(pipe.d2h));
    // A co-executed call's download thread keeps the pools where the call holds them, as the
    // GPU side does: the feeders' pool freed by its first copy (a broadcast to each thread, and
    // another to hold it again at the next call) left the feeders free to run on the engine's
    // cores for the rest of the call.
    let keep = threads::keeps_pins();
    s.spawn(move || {
        threads::keeping_pins_if(keep, move || {
            let (chunks, stream) = (chunks, stream);
            let mut d = Downloader::new(chunks.0, stream.0, tiles, spec.written, spec.fail_after, spec.copier);
            // SAFETY: the regions and events come from the sending side, which keeps the caller's
            // C, the arena and the events alive until this thread is joined.
            let r = download_loop(
                rt,
                &mut d,
                &rx,
                abort,
                |d| unsafe { d.finish_oldest() },
                |d, msg: Shared<DownMsg>| {
                    let DownMsg { t, r, ev } = msg.0;
                    unsafe { d.tile(t, r, ev, spec.elem, spec.piece) }
                },
            );
            (r, d.done, d.bytes, d.written)
        })
    })
}

// ---- Co-execution: one queue of C's columns, the GPU from the left, the CPU from the right ----

/// Narrowest unit the CPU takes in a dynamic split (narrower panels spend more of their time
/// packing A than multiplying), and the alignment of its units (the engine's register blocks).
const CPU_MIN_COLS: usize = 32;
const COL_ALIGN: usize = 16;
/// Narrowest GPU claim (a tile of fewer columns than this underuses the GPU).
const GPU_MIN_COLS: usize = 128;
/// GPU claims in flight (claimed, GEMMs not finished): enough to overlap the next claim's
/// uploads with this one's compute, few enough that the claims follow the GPU's progress.
const GPU_DEPTH: usize = 2;

fn align_up(x: usize, a: usize) -> usize {
    x.div_ceil(a) * a
}

/// C's columns as the one queue both sides of a co-executed call draw from.
pub(crate) struct Queue {
    st: Mutex<QState>,
    /// Signalled when a GPU claim finishes or the GPU stops (a waiting CPU looks again).
    gpu_moved: parking_lot::Condvar,
}

/// The CPU's next step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CpuClaim {
    /// Compute C's columns j0..j1.
    Take(usize, usize),
    /// Nothing worth taking yet (the GPU would finish any unit sooner): look again after the
    /// GPU's next progress, when its rate is better known.
    Wait,
    /// Nothing left.
    Done,
}

/// Longest a waiting CPU sleeps before it looks at the queue again.
const CPU_WAIT: std::time::Duration = std::time::Duration::from_millis(2);

#[derive(Clone, Debug)]
pub(crate) struct QState {
    /// Columns lo..hi are unclaimed (of n).
    lo: usize,
    hi: usize,
    n: usize,
    /// A forced share: the GPU claims below, the CPU above (cleared when the GPU stops).
    fence: Option<usize>,
    /// Widest GPU claim (the tile width) and the narrowest.
    gpu_unit: usize,
    gpu_min: usize,
    /// Columns per second of each side: the model's, then measured as units finish.
    gpu_rate: f64,
    cpu_rate: f64,
    /// Columns the GPU claimed whose GEMMs have not finished.
    gpu_backlog: usize,
    gpu_alive: bool,
    cpu_alive: bool,
    /// Totals claimed, and the CPU's units.
    pub gpu_cols: usize,
    pub cpu_cols: usize,
    pub cpu_units: usize,
}

impl Queue {
    pub(crate) fn new(n: usize, gpu_unit: usize, fence: Option<usize>, gpu_rate: f64, cpu_rate: f64) -> Queue {
        let ok = |r: f64| if r.is_finite() && r > 0.0 { r } else { 1.0 };
        let gpu_unit = gpu_unit.max(1);
        Queue {
            st: Mutex::new(QState {
                lo: 0,
                hi: n,
                n,
                fence: fence.map(|f| f.min(n)),
                gpu_unit,
                gpu_min: gpu_unit.min(GPU_MIN_COLS),
                gpu_rate: ok(gpu_rate),
                cpu_rate: ok(cpu_rate),
                gpu_backlog: 0,
                gpu_alive: true,
                cpu_alive: true,
                gpu_cols: 0,
                cpu_cols: 0,
                cpu_units: 0,
            }),
            gpu_moved: parking_lot::Condvar::new(),
        }
    }

    /// The GPU's next claim (columns j0..j1): a tile column at most; in a dynamic split, its
    /// fair part (by the two rates) of what is left and what it holds, less what it holds,
    /// once that is less (and [`GPU_MIN_COLS`] at least).
    pub(crate) fn claim_gpu(&self) -> Option<(usize, usize)> {
        let mut s = self.st.lock();
        let top = s.fence.unwrap_or(s.hi).min(s.hi);
        if !s.gpu_alive || s.lo >= top {
            return None;
        }
        let r = top - s.lo;
        let want = if s.fence.is_some() || !s.cpu_alive {
            r.min(s.gpu_unit)
        } else {
            // Its fair part of what is left counts what it holds already.
            let g = s.gpu_rate / (s.gpu_rate + s.cpu_rate);
            let fair = (g * (r + s.gpu_backlog) as f64).ceil() as usize;
            let fair = align_up(fair.saturating_sub(s.gpu_backlog), COL_ALIGN);
            fair.clamp(s.gpu_min.min(r), s.gpu_unit.min(r))
        };
        let j0 = s.lo;
        s.lo += want;
        s.gpu_backlog += want;
        s.gpu_cols += want;
        Some((j0, j0 + want))
    }

    /// The CPU's next claim (columns j0..j1, from the right): with a forced share all of its
    /// part at once; in a dynamic split half its fair part of what is left (guided: large
    /// units first, small ones near the end) and at most an eighth of C, the first unit a
    /// quarter and a sixteenth (so that the CPU's rate is measured early, should the model be
    /// wrong), never one the GPU would finish sooner (its backlog and all that is left, at
    /// its rate): then [`CpuClaim::Wait`] (after waiting for the GPU's next progress, at most
    /// [`CPU_WAIT`]), since the rates may prove wrong.
    pub(crate) fn claim_cpu(&self) -> CpuClaim {
        let mut s = self.st.lock();
        let bottom = s.lo.max(s.fence.unwrap_or(0));
        if !s.cpu_alive || bottom >= s.hi {
            return CpuClaim::Done;
        }
        let r = s.hi - bottom;
        let want = if s.fence.is_some() || !s.gpu_alive {
            r
        } else {
            let g = s.gpu_rate / (s.gpu_rate + s.cpu_rate);
            // The first unit is smaller: it measures the CPU's rate before much hangs on it.
            let (part, cap) = if s.cpu_units == 0 { (4.0, 16) } else { (2.0, 8) };
            let w = align_up(((1.0 - g) * r as f64 / part).ceil() as usize, COL_ALIGN);
            let w = w.min(align_up(s.n.div_ceil(cap), COL_ALIGN)).max(CPU_MIN_COLS).min(r);
            let gpu_left = (s.gpu_backlog + r) as f64 / s.gpu_rate;
            let fit = ((gpu_left * s.cpu_rate) as usize).min(r) / COL_ALIGN * COL_ALIGN;
            let w = w.min(if fit >= r { r } else { fit });
            if w == 0 || w < CPU_MIN_COLS.min(r) {
                self.gpu_moved.wait_for(&mut s, CPU_WAIT);
                return CpuClaim::Wait;
            }
            w
        };
        s.hi -= want;
        s.cpu_cols += want;
        s.cpu_units += 1;
        CpuClaim::Take(s.hi, s.hi + want)
    }

    /// The GEMMs of a GPU claim of `cols` columns finished, `secs` after the previous one's
    /// (None: no rate sample).
    pub(crate) fn gpu_done(&self, cols: usize, secs: Option<f64>) {
        let mut s = self.st.lock();
        s.gpu_backlog = s.gpu_backlog.saturating_sub(cols);
        if let Some(t) = secs.filter(|t| *t > 0.0) {
            s.gpu_rate = 0.25 * s.gpu_rate + 0.75 * cols as f64 / t;
        }
        self.gpu_moved.notify_all();
    }

    /// A CPU unit of `cols` columns took `secs`.
    pub(crate) fn cpu_done(&self, cols: usize, secs: f64) {
        let mut s = self.st.lock();
        if secs > 0.0 {
            s.cpu_rate = 0.25 * s.cpu_rate + 0.75 * cols as f64 / secs;
        }
    }

    /// The GPU claims no more (finished or failed): the CPU may take everything left.
    pub(crate) fn stop_gpu(&self) {
        let mut s = self.st.lock();
        s.gpu_alive = false;
        s.fence = None;
        s.gpu_backlog = 0;
        self.gpu_moved.notify_all();
    }

    /// The CPU claims no more: the GPU takes whole tile columns.
    pub(crate) fn cpu_exit(&self) {
        self.st.lock().cpu_alive = false;
    }

    pub(crate) fn state(&self) -> QState {
        self.st.lock().clone()
    }
}

/// The GPU side's account of a co-executed call.
pub(crate) struct GpuOut {
    /// Every tile of every claim (in claim order), and the pieces of each written back.
    tiles: Vec<Tile>,
    done: Vec<usize>,
    piece: usize,
    elem: usize,
    error: Option<GpuError>,
    h2d_bytes: u64,
    d2h_bytes: u64,
    /// From the call's start to the side's end.
    secs: f64,
}

impl GpuOut {
    fn new(elem: usize) -> GpuOut {
        GpuOut {
            tiles: Vec::new(),
            done: Vec::new(),
            piece: 1,
            elem,
            error: None,
            h2d_bytes: 0,
            d2h_bytes: 0,
            secs: 0.0,
        }
    }
    /// The parts of the GPU's claims not written back (after a failure).
    fn remaining(&self) -> Vec<Tile> {
        remaining_of(&self.tiles, &self.done, self.piece, self.elem)
    }
}

/// The CPU side: claim units from `q` and compute them with `unit(j0, j1)` until none is left.
/// Returns the seconds from `t0` to the end of its last unit (0: it took none).
fn cpu_loop(q: &Queue, t0: Instant, unit: impl Fn(usize, usize)) -> f64 {
    let mut end = 0.0;
    loop {
        match q.claim_cpu() {
            CpuClaim::Take(j0, j1) => {
                let t = Instant::now();
                mark("cpu-take", j0, j1);
                unit(j0, j1);
                mark("cpu-done", j0, j1);
                q.cpu_done(j1 - j0, t.elapsed().as_secs_f64());
                end = t0.elapsed().as_secs_f64();
            }
            CpuClaim::Wait => {}
            CpuClaim::Done => break,
        }
    }
    q.cpu_exit();
    end
}

/// Run both sides of a co-executed call: `gpu` on the calling thread (it keeps its cuBLAS
/// handle and bound context from call to call), `cpu` on a thread of its own. Returns the
/// GPU's account, the CPU's end time, and the parts left for the caller to compute: what the
/// GPU claimed but did not write back, and any columns neither side took.
fn drive(
    q: &Queue,
    m: usize,
    pins: Option<&Pins>,
    gpu: impl FnOnce(&Queue) -> GpuOut,
    cpu: impl FnOnce(&Queue) -> f64 + Send,
) -> (GpuOut, f64, Vec<Tile>) {
    /// Stops the GPU's claims however its side ends (a panic too: a CPU side waiting for the
    /// GPU's progress would wait forever).
    struct Stop<'a>(&'a Queue);
    impl Drop for Stop<'_> {
        fn drop(&mut self) {
            self.0.stop_gpu();
        }
    }
    // The pools stay where the previous co-executed call held them when these pins are the
    // same ([`threads::PoolPins`]); without pins both run free.
    let (engine, feed) = pins.map_or((&[][..], &[][..]), |p| (p.engine, p.feed));
    let (g, c) = std::thread::scope(|s| {
        let h = s.spawn(|| {
            // This thread ends with the call: its own mask needs no giving back.
            if pins.is_some() {
                threads::pin_current(engine);
            }
            threads::hold_pool(engine);
            threads::keeping_pins(|| cpu(q))
        });
        let g = {
            let _stop = Stop(q);
            let _pin = pins.map(|_| CallerPin(threads::pin_current(feed)));
            if let Some(pool) = FEED_POOL.as_ref() {
                FEED_PINS.hold(pool, feed);
            }
            threads::keeping_pins(|| gpu(q))
        };
        (g, h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
    });
    let mut left = if g.error.is_some() { g.remaining() } else { Vec::new() };
    let st = q.state();
    if st.lo < st.hi {
        left.push(Tile { i0: 0, j0: st.lo, m, n: st.hi - st.lo });
    }
    (g, c, left)
}

/// `HYBLAS_OFFLOAD_PIN`: whether co-execution pins its two sides to CPUs of their own (default
/// on; `0` leaves placement to the scheduler).
static PIN: Lazy<bool> = Lazy::new(|| config::enabled("HYBLAS_OFFLOAD_PIN"));

/// The CPUs of a co-execution's two sides: the GPU side's feeders on the last of the
/// process's CPUs, the engine's threads on the others. With as many busy threads as CPUs the
/// scheduler alone now and then put a feeder and an engine thread on one CPU for a whole call:
/// on the H200 host the GPU side of a DGEMM n = 2048 at a share of 0.5 took 7-8 ms in some
/// calls and 14-18 ms in others, a spread no model of the median can follow.
pub(crate) struct Pins {
    feed: &'static [usize],
    engine: &'static [usize],
}

impl Pins {
    /// For `feeders` feeding threads beside `cpu_threads` of the engine; None where they would
    /// share CPUs anyway (a feeder on the engine's cores, more threads than CPUs) or pinning
    /// is off.
    fn for_split(feeders: usize, cpu_threads: usize) -> Option<Pins> {
        let all = threads::allowed_cpus();
        if !*PIN || feeders == 0 || all.len() < feeders + cpu_threads.max(1) {
            return None;
        }
        let (engine, feed) = all.split_at(all.len() - feeders);
        Some(Pins { feed, engine })
    }
}

/// The calling thread held to the feeders' CPUs for the GPU side of a co-executed call; its
/// own mask back when dropped (the caller's thread is the program's).
struct CallerPin(Option<threads::Mask>);

impl Drop for CallerPin {
    fn drop(&mut self) {
        if let Some(m) = &self.0 {
            threads::restore_current(m);
        }
    }
}

/// The CPU engine on the rectangles `left` of C (the fallback's work), on all its threads.
///
/// # Safety
/// As [`gemm`]; the rectangles lie inside C.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn cpu_rects<T: Scalar>(
    ta: Trans,
    tb: Trans,
    (m, n, k): (usize, usize, usize),
    alpha: T,
    a: *const T,
    lda: usize,
    b: *const T,
    ldb: usize,
    beta: T,
    c: *mut T,
    ldc: usize,
    left: &[Tile],
) {
    let (av, ca) = MatRef::op(a, ta, m, k, lda);
    let (bv, cb) = MatRef::op(b, tb, k, n, ldb);
    let cv = MatMut::col_major(c, m, n, ldc);
    let reads = !alpha.is_zero() && k > 0;
    for t in left {
        // alpha == 0: A and B are not read (and may be anything): no offsets into them.
        let (at, bt) = if reads {
            (av.sub(t.i0, 0, t.m, k), bv.sub(0, t.j0, k, t.n))
        } else {
            (MatRef { rows: t.m, ..av }, MatRef { cols: t.n, ..bv })
        };
        crate::cpu::level3::gemm(alpha, at, ca, bt, cb, beta, cv.sub(t.i0, t.j0, t.m, t.n));
    }
}

/// A co-execution as the planner set it up (`plan::offload::SplitPlan::split`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Split {
    /// The GPU's share of C's columns: a fence when `fixed`, else where the dynamic balance
    /// starts.
    pub share: f64,
    pub fixed: bool,
    /// The CPU engine's threads, and the threads packing the GPU's copies (0: one feeder on
    /// the engine's cores).
    pub cpu_threads: usize,
    pub feeders: usize,
    /// Each side's predicted columns per second (the dynamic balance starts from these).
    pub gpu_cols_per_s: f64,
    pub cpu_cols_per_s: f64,
}

/// Columns of C the GPU takes at `share` (the fence of a fixed [`Split`]).
pub fn split_cols(share: f64, n: usize) -> usize {
    if share.is_nan() || share <= 0.0 {
        return 0;
    }
    ((share.min(1.0) * n as f64).round() as usize).min(n)
}

/// C := alpha*op(A)*op(B) + beta*C co-executed by the GPU of `rt` and the CPU engine, all
/// operands in host memory (see the module's documentation), as `plan` says. Always completes C: a GPU that fails leaves its part to the CPU, and the error is
/// returned beside the statistics.
///
/// # Safety
/// As [`gemm`]; A, B and C are host memory.
#[allow(clippy::too_many_arguments)]
pub unsafe fn coexec<T: Scalar>(
    rt: &Runtime,
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
    plan: &Split,
) -> (OffloadStats, Option<GpuError>) {
    let t0 = Instant::now();
    mark("start", m, n);
    let tile = tile_for(m, n, k, std::mem::size_of::<T>());
    let sp = plan;
    let feeders = sp.feeders.clamp(1, MAX_FEEDERS);
    let cpu_threads = sp.cpu_threads.max(1);
    let mut stats = OffloadStats {
        tile,
        blocks: 1,
        mode: if plan.fixed { "split-fixed" } else { "split" },
        cpu_threads,
        feeders: sp.feeders,
        ..Default::default()
    };
    if m == 0 || n == 0 {
        return (stats, None);
    }
    let e = std::mem::size_of::<T>();
    let reads = !alpha.is_zero() && k > 0;
    let kk = if reads { k } else { 0 };
    let p = Problem {
        ta,
        tb,
        m,
        n,
        k: kk,
        alpha,
        a,
        lda,
        b,
        ldb,
        beta,
        c,
        ldc,
        host: [reads, reads, true],
        c_in: !beta.is_zero(),
        elem: e,
    };
    let fence = plan.fixed.then(|| split_cols(sp.share, n));
    let q = Queue::new(n, tile.1, fence, sp.gpu_cols_per_s, sp.cpu_cols_per_s);
    let kn = knobs();
    let (a_s, b_s, c_s) = (Shared(a), Shared(b), Shared(c));
    let cpu = move |q: &Queue| {
        let (a, b, c) = (a_s, b_s, c_s);
        let (av, ca) = MatRef::op(a.0, ta, m, k, lda);
        let (bv, cb) = MatRef::op(b.0, tb, k, n, ldb);
        let cv = MatMut::col_major(c.0, m, n, ldc);
        // A conjugated complex A is copied once here; the engine would copy it for every unit.
        let packed = (reads && ca && T::IS_COMPLEX).then(|| crate::cpu::level3::gemm::packed_copy(av, true));
        let (av, ca) = match &packed {
            Some((_, v)) => (*v, false),
            None => (av, ca),
        };
        cpu_loop(q, t0, |j0, j1| {
            let w = j1 - j0;
            let bt = if reads { bv.sub(0, j0, k, w) } else { MatRef { cols: w, ..bv } };
            crate::cpu::level3::gemm::gemm_with(cpu_threads, alpha, av, ca, bt, cb, beta, cv.sub(0, j0, m, w));
        })
    };
    let gpu = |q: &Queue| gpu_side(rt, q, &p, tile, kn, Copier::Feed(feeders), t0);
    let pins = Pins::for_split(sp.feeders, cpu_threads);
    let (g, cpu_end, left) = drive(&q, m, pins.as_ref(), gpu, cpu);

    // The GPU's unfinished claims and anything neither side took: the CPU engine, all threads.
    let fallback: usize = left.iter().map(|t| t.m * t.n).sum();
    if !left.is_empty() {
        cpu_rects(ta, tb, (m, n, k), alpha, a, lda, b, ldb, beta, c, ldc, &left);
    }
    let st = q.state();
    let gpu_elems: usize = g.tiles.iter().map(|t| t.m * t.n).sum::<usize>()
        - if g.error.is_some() { g.remaining().iter().map(|t| t.m * t.n).sum() } else { 0 };
    stats.tiles = g.tiles.len();
    stats.h2d_bytes = g.h2d_bytes;
    stats.d2h_bytes = g.d2h_bytes;
    stats.gpu_share = gpu_elems as f64 / (m * n) as f64;
    stats.gpu_side_secs = g.secs;
    stats.cpu_side_secs = cpu_end;
    stats.gpu_cols = st.gpu_cols;
    stats.cpu_cols = st.cpu_cols;
    stats.cpu_units = st.cpu_units;
    stats.gpu_error = g.error.as_ref().map(|e| e.to_string());
    stats.fallback_elems = fallback;
    stats.secs = t0.elapsed().as_secs_f64();
    dump_timeline(format_args!(
        "split m={m} n={n} k={k} elem={e} tile={tile:?} gpu_cols={} feeders={feeders} cpu_threads={cpu_threads} {:.1}us",
        st.gpu_cols,
        stats.secs * 1e6
    ));
    (stats, g.error)
}

/// The GPU side of [`coexec`] on the calling thread: a pipeline from the pool, claims from
/// `q` until none is left or something fails (then the queue is told at once, so the CPU takes
/// what is left while this side winds down).
unsafe fn gpu_side<T: Scalar>(
    rt: &Runtime,
    q: &Queue,
    p: &Problem<T>,
    tile: (usize, usize),
    kn: Knobs,
    copier: Copier,
    t0: Instant,
) -> GpuOut {
    let mut out = GpuOut::new(p.elem);
    let r = (|| -> Result<()> {
        rt.bind()?;
        let mut pipe = take_pipe(rt)?;
        let r = gpu_claims(rt, &mut pipe, q, p, tile, kn, copier, &mut out);
        let synced = pipe.sync();
        give_pipe(rt, pipe);
        r.and(synced)
    })();
    if let Err(e) = r {
        out.error = Some(e);
    }
    q.stop_gpu();
    out.secs = t0.elapsed().as_secs_f64();
    mark("gpu-side-end", 0, 0);
    out
}

/// The GPU's claims through `pipe`: the whole problem resident in one block (co-execution does
/// not cut the device memory into blocks; a problem that does not fit is an error, and the CPU
/// computes it), each claim's tiles in column order with A's row panels uploaded on first use,
/// B's columns and C's tiles per claim, results written back by the download thread.
#[allow(clippy::too_many_arguments)]
unsafe fn gpu_claims<T: Scalar>(
    rt: &Runtime,
    pipe: &mut Pipe,
    q: &Queue,
    p: &Problem<T>,
    tile: (usize, usize),
    kn: Knobs,
    copier: Copier,
    out: &mut GpuOut,
) -> Result<()> {
    let (m, n, k, e) = (p.m, p.n, p.k, p.elem);
    let need: usize = layout(p, m, n).iter().sum();
    let (mut free, mut total) = (0usize, 0usize);
    check(sys::cuMemGetInfo_v2(&mut free, &mut total), "cuMemGetInfo")?;
    let have = pipe.arena.as_ref().map_or(0, |a| a.bytes);
    let budget = match kn.device_budget {
        Some(b) => b,
        None => (((free + have) as f64 * 0.9) as usize).saturating_sub(64 << 20),
    };
    if need > budget {
        return Err(GpuError::Other(format!(
            "co-execution: the problem needs {} MB of device memory, {} MB available",
            need >> 20,
            budget >> 20
        )));
    }
    let base = pipe.arena(need.max(ALIGN))?;
    let traffic = (p.host[0] as usize * m * k + p.host[1] as usize * k * n) * e
        + p.host[2] as usize * (1 + p.c_in as usize) * m * n * e;
    let piece = piece_for(traffic);
    out.piece = piece;
    let ex = Exec { rt, stream: pipe.comp };
    let nil = DMat { ptr: base, ld: 1 };
    crate::gpu::vendor_calls::vendor_gemm::<T>(&ex, p.ta, p.tb, 0, 0, 0, p.alpha, nil, nil, p.beta, nil)?;
    mark("set-up", piece, 0);

    let [a_bytes, b_bytes, _] = layout(p, m, n);
    let (a_n, b_n) = (p.ta == Trans::No, p.tb == Trans::No);
    let da = DevOp { ptr: base, ld: (if a_n { m } else { k }).max(1), r0: 0, c0: 0 };
    let db = DevOp { ptr: base + a_bytes as u64, ld: (if b_n { k } else { n }).max(1), r0: 0, c0: 0 };
    let dc = DevOp { ptr: base + (a_bytes + b_bytes) as u64, ld: m.max(1), r0: 0, c0: 0 };
    let (mt, nt) = tile;

    let mut done_ev = std::mem::take(&mut pipe.done);
    let abort = AtomicBool::new(false);
    let (tx, rx) = mpsc::channel::<Shared<DownMsg>>();
    let pipe_ref = &*pipe;
    let (h2d, ready) = (pipe_ref.h2d, pipe_ref.ready);
    let mut tiles: Vec<Tile> = Vec::new();
    let (r, ubytes, (dr, dd, dbytes, _)) = std::thread::scope(|s| {
        let down = DownSpec { written: 0, fail_after: kn.fail_after, copier, elem: e, piece };
        let dl = spawn_downloader(s, rt, pipe_ref, rx, &abort, 0, down);
        let mut up = Uploader::new(&pipe_ref.up, h2d, copier);
        let r = (|| -> Result<()> {
            let mut a_up = vec![false; m.div_ceil(mt)];
            let mut inflight: VecDeque<(usize, sys::CUevent)> = VecDeque::new();
            let mut last: Option<Instant> = None;
            loop {
                if abort.load(Ordering::Relaxed) {
                    // The download thread failed: it reports its error when joined.
                    return Ok(());
                }
                while inflight.len() >= GPU_DEPTH {
                    let (cols, ev) = inflight.pop_front().unwrap();
                    check(sys::cuEventSynchronize(ev), "cuEventSynchronize")?;
                    let now = Instant::now();
                    q.gpu_done(cols, last.map(|t| (now - t).as_secs_f64()));
                    last = Some(now);
                }
                let Some((j0, j1)) = q.claim_gpu() else { break };
                mark("gpu-claim", j0, j1);
                // All the claim's tiles first: a failure part way leaves the rest listed (none
                // of it written back), so the CPU computes it.
                let first = tiles.len();
                for jj in (j0..j1).step_by(nt) {
                    for i0 in (0..m).step_by(mt) {
                        tiles.push(Tile { i0, j0: jj, m: mt.min(m - i0), n: nt.min(j1 - jj) });
                    }
                }
                let mut last_ev = None;
                for t in first..tiles.len() {
                    let Tile { i0, j0: jj, m: h, n: w } = tiles[t];
                    let bm = if b_n { db.at(0, jj, e) } else { db.at(jj, 0, e) };
                    if p.host[1] && i0 == 0 {
                        // B's columns of this tile column (op(B)'s columns jj..jj+w).
                        let (r0, c0, rows, cols) = if b_n { (0, jj, k, w) } else { (jj, 0, w, k) };
                        up.upload(region(p.b as *const u8, p.ldb, r0, c0, rows, cols, bm.ptr, db.ld, e), e, piece)?;
                    }
                    let ti = i0 / mt;
                    let am = if a_n { da.at(i0, 0, e) } else { da.at(0, i0, e) };
                    if p.host[0] && !a_up[ti] {
                        let (r0, c0, rows, cols) = if a_n { (i0, 0, h, k) } else { (0, i0, k, h) };
                        up.upload(region(p.a as *const u8, p.lda, r0, c0, rows, cols, am.ptr, da.ld, e), e, piece)?;
                        a_up[ti] = true;
                    }
                    let cm = dc.at(i0, jj, e);
                    let cr = region(p.c as *const u8, p.ldc, i0, jj, h, w, cm.ptr, dc.ld, e);
                    if p.c_in {
                        up.upload(cr, e, piece)?;
                    }
                    let (am, bm) = if k == 0 {
                        // A and B are not read: any address, leading dimensions cuBLAS accepts.
                        (DMat { ptr: cm.ptr, ld: h.max(1) as i64 }, DMat { ptr: cm.ptr, ld: w.max(1) as i64 })
                    } else {
                        (am, bm)
                    };
                    injected_gemm_fault(kn, t)?;
                    if done_ev.len() <= t {
                        done_ev.push(event()?);
                    }
                    let ev = done_ev[t];
                    // The tile's uploads are the last ones enqueued on h2d.
                    check(sys::cuEventRecord(ready, h2d), "cuEventRecord")?;
                    check(sys::cuStreamWaitEvent(ex.stream, ready, 0), "cuStreamWaitEvent")?;
                    mark("gemm", t, 0);
                    let (hh, ww, kk) = (h as i64, w as i64, k as i64);
                    crate::gpu::vendor_calls::vendor_gemm::<T>(
                        &ex, p.ta, p.tb, hh, ww, kk, p.alpha, am, bm, p.beta, cm,
                    )?;
                    check(sys::cuEventRecord(ev, ex.stream), "cuEventRecord")?;
                    // A send fails only when the downloader stopped on an error (abort says so).
                    let _ = tx.send(Shared(DownMsg { t, r: cr, ev }));
                    last_ev = Some(ev);
                }
                if let Some(ev) = last_ev {
                    inflight.push_back((j1 - j0, ev));
                }
            }
            while let Some((cols, ev)) = inflight.pop_front() {
                check(sys::cuEventSynchronize(ev), "cuEventSynchronize")?;
                q.gpu_done(cols, None);
            }
            Ok(())
        })();
        if r.is_err() {
            abort.store(true, Ordering::Relaxed);
            // The CPU takes what is left now, not after this side has wound down.
            q.stop_gpu();
        }
        drop(tx);
        let d = dl.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
        (r, up.bytes, d)
    });
    pipe.done = done_ev;
    out.tiles = tiles;
    out.done = dd;
    out.h2d_bytes = ubytes;
    out.d2h_bytes = dbytes;
    r.and(dr)
}

// ---- Measurements for the cost model (`plan::offload::calibrate`) ----

/// Host<->device rates through this module's pipeline, bytes per second.
#[derive(Clone, Copy, Debug)]
pub struct Transfer {
    /// Pageable host memory to the device through the pinned chunks (what a call sees).
    pub h2d: f64,
    pub d2h: f64,
    /// Pinned chunk to device and back (the bus alone).
    pub h2d_pinned: f64,
    pub d2h_pinned: f64,
}

/// Measure [`Transfer`] with `bytes` of pageable memory (median of 3), packed and unpacked by
/// the CPU engine's threads (as a call that has the GPU to itself).
pub fn measure_transfers(rt: &Runtime, bytes: usize) -> Result<Transfer> {
    measure_transfers_with(rt, bytes, Copier::Pool)
}

/// [`measure_transfers`] with the copies packed and unpacked by `copier` (co-execution's
/// feeders: [`Copier::Feed`]).
pub fn measure_transfers_with(rt: &Runtime, bytes: usize, copier: Copier) -> Result<Transfer> {
    rt.bind()?;
    let mut pipe = take_pipe(rt)?;
    let r = (|| -> Result<Transfer> {
        let dev = DeviceBuffer::new(bytes)?;
        let mut host = vec![1u8; bytes];
        let piece = *CHUNK_BYTES;
        let time = |f: &mut dyn FnMut() -> Result<()>| -> Result<f64> {
            let mut v = Vec::new();
            for _ in 0..3 {
                let t = Instant::now();
                f()?;
                v.push(t.elapsed().as_secs_f64());
            }
            v.sort_by(f64::total_cmp);
            Ok(v[1])
        };
        let (h2d_s, comp, d2h_s) = (pipe.h2d, pipe.comp, pipe.d2h);
        let hp = host.as_mut_ptr();
        let reg = Region { host: hp, hpitch: bytes, dev: dev.ptr, dpitch: bytes, width: bytes, height: 1 };
        let up = time(&mut || unsafe {
            let mut u = Uploader::new(&pipe.up, h2d_s, copier);
            u.upload(reg, 1, piece)?;
            check(sys::cuStreamSynchronize(h2d_s), "cuStreamSynchronize")
        })?;
        let down = time(&mut || unsafe {
            let mut d = Downloader::new(&pipe.down, d2h_s, 1, 0, None, copier);
            check(sys::cuEventRecord(pipe.ready, comp), "cuEventRecord")?;
            d.tile(0, reg, pipe.ready, 1, piece)?;
            while d.finish_oldest()? {}
            Ok(())
        })?;
        // The bus alone: every chunk copied once per direction, back to back.
        let cb = *CHUNK_BYTES;
        let per = (bytes / cb).max(1);
        let raw = |to_device: bool| -> Result<f64> {
            let s = if to_device { h2d_s } else { d2h_s };
            time(&mut || unsafe {
                for i in 0..per {
                    let ch = &pipe.up[i % pipe.up.len()];
                    copy_async(to_device, ch.host, dev.ptr, cb, cb.min(bytes), 1, s)?;
                }
                check(sys::cuStreamSynchronize(s), "cuStreamSynchronize")
            })
            .map(|t| (per * cb.min(bytes)) as f64 / t)
        };
        Ok(Transfer {
            h2d: bytes as f64 / up,
            d2h: bytes as f64 / down,
            h2d_pinned: raw(true)?,
            d2h_pinned: raw(false)?,
        })
    })();
    let _ = pipe.sync();
    give_pipe(rt, pipe);
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The GPU side's GEMMs are C tiles of at most 2048 x 2048 (any k), and the Strassen model
    /// (seed 003) picks no level for them on an H200 up to k = 65536: one level at n = 2048 ran
    /// at 0.73-0.77x cuBLAS (issue 47, `bench/results/nvidia-h200-sm90-strassen.csv`). So the
    /// tiles stay on cuBLAS and the pipeline has no Strassen route. (Its one pick is SGEMM tiles
    /// at k around 131072, by 5.3% against the 5% it asks, a rate it extrapolates from square
    /// products; not built.) Should the tiles grow or the model change, this fails: then the
    /// route is worth building.
    #[test]
    fn offload_tiles_are_too_small_for_strassen() {
        let model = crate::gpu::strassen::model_for(&crate::gpu::runtime::DeviceProps::h200());
        for es in [4, 8] {
            for (m, n) in [(1024, 1024), (4096, 4096), (16384, 16384), (65536, 65536), (2048, 65536), (65536, 3000)] {
                for k in [256, 2048, 16384, 32768, 65536] {
                    let (mt, nt) = tile_for(m, n, k, es);
                    let p = model.choose(es, mt, nt, k, true);
                    assert_eq!(p.levels, 0, "es={es} {m}x{n}x{k}: tile {mt}x{nt} {p:?}");
                }
            }
        }
    }

    #[test]
    fn pieces_cover_the_block_once() {
        for &(w, h, e, piece) in &[
            (800usize, 7usize, 8usize, 4096usize),
            (800, 7, 8, 800),
            (800, 7, 8, 100),
            (24, 1, 8, 16),
            (16, 3, 16, 4096),
        ] {
            let g = Pieces::new(w, h, e, piece);
            let mut seen = vec![0u8; w * h];
            for p in 0..g.count() {
                let (x0, c0, pw, ph) = g.piece(p);
                assert!(pw * ph <= piece.max(e), "piece {p} too large");
                assert_eq!(x0 % e, 0);
                assert_eq!(pw % e, 0);
                for c in c0..c0 + ph {
                    for x in x0..x0 + pw {
                        seen[c * w + x] += 1;
                    }
                }
            }
            assert!(seen.iter().all(|&s| s == 1), "{w}x{h} piece {piece}");
        }
    }

    #[test]
    fn failure_lists_what_is_left() {
        let e = 8;
        let tiles = vec![
            Tile { i0: 0, j0: 0, m: 10, n: 4 },
            Tile { i0: 10, j0: 0, m: 5, n: 4 },
            Tile { i0: 0, j0: 4, m: 10, n: 3 },
        ];
        // 80-byte pieces: one column of the first tile (2 of 4 done), two columns of the second
        // (1 of 2 done), none of the third.
        let f = Failure {
            error: GpuError::Other("x".into()),
            tiles: tiles.clone(),
            done: vec![2, 1, 0],
            piece_bytes: 80,
            elem: e,
        };
        let left = f.remaining();
        assert_eq!(left, vec![Tile { i0: 0, j0: 2, m: 10, n: 2 }, Tile { i0: 10, j0: 2, m: 5, n: 2 }, tiles[2]]);
        // Pieces of part of a column (40 bytes = 5 rows): 3 done = column 0 and rows 5..10 of
        // column 1 left... i.e. rows 5.. of column 1, then columns 2..4.
        let f = Failure {
            error: GpuError::Other("x".into()),
            tiles: vec![tiles[0]],
            done: vec![3],
            piece_bytes: 40,
            elem: e,
        };
        assert_eq!(f.remaining(), vec![Tile { i0: 5, j0: 1, m: 5, n: 1 }, Tile { i0: 0, j0: 2, m: 10, n: 2 }]);
        assert!(!f.untouched_c());
        let f = Failure::untouched(GpuError::Other("x".into()), 7, 9);
        assert_eq!(f.remaining(), vec![Tile { i0: 0, j0: 0, m: 7, n: 9 }]);
        assert!(f.untouched_c());
    }

    #[test]
    fn blocks_fit_the_budget() {
        let e = 8;
        let need = |host: [bool; 3]| {
            move |bm: usize, bn: usize| {
                let p =
                    prob::<f64>(Trans::No, Trans::No, 1000, 1000, 1000, 1.0, std::ptr::null(), 1000, 1000, 1000, host);
                layout(&p, bm, bn).iter().sum::<usize>()
            }
        };
        // Everything fits.
        assert_eq!(plan_blocks(1000, 1000, 1000, (256, 256), 1 << 30, need([true; 3])).unwrap(), (1000, 1000));
        // 24 MB needed, 10 MB budget: columns first.
        let (bm, bn) = plan_blocks(1000, 1000, 1000, (256, 256), 10 << 20, need([true; 3])).unwrap();
        assert!(bn < 1000 && bn % 256 == 0, "{bm} {bn}");
        assert!(align(bm * 1000 * e) + align(1000 * bn * e) + align(bm * bn * e) <= 10 << 20);
        // Not even one tile.
        assert!(plan_blocks(1000, 1000, 1000, (256, 256), 1 << 20, need([true; 3])).is_err());
        // Device operands take no room.
        assert_eq!(plan_blocks(1000, 1000, 1000, (256, 256), 0, need([false; 3])).unwrap(), (1000, 1000));
    }

    #[test]
    fn tiles_default_and_forced() {
        assert_eq!(tile_for(16384, 16384, 16384, 8), (2048, 2048));
        assert_eq!(tile_for(4096, 4096, 4096, 8), (1024, 1024));
        assert_eq!(tile_for(8192, 8192, 8192, 4), (2048, 2048));
        // Half the side up to 1024 where a quarter is less.
        assert_eq!(tile_for(2048, 2048, 2048, 4), (1024, 1024));
        assert_eq!(tile_for(1536, 600, 2048, 8), (768, 600));
        assert_eq!(tile_for(3000, 3000, 10, 8), (1024, 1024));
        assert_eq!(tile_for(1000, 1000, 1000, 8), (512, 512));
        assert_eq!(tile_for(1000, 1000, 1000, 16), (512, 512));
        assert_eq!(tile_for(100, 5000, 10, 8), (100, 1024));
        // One tile where a square of the larger side fits ONE_TILE_BYTES: SGEMM n = 1024, also
        // its GPU columns when co-executed.
        assert_eq!(tile_for(1024, 1024, 1024, 4), (1024, 1024));
        assert_eq!(tile_for(1024, 700, 1024, 4), (1024, 700));
        assert_eq!(tile_for(1025, 1025, 1024, 4), (512, 512));
        assert_eq!(tile_for(724, 724, 724, 8), (724, 724));
        assert_eq!(tile_for(1 << 32, 1, 1, 16), (2048, 1));
        let t = with_knobs(Knobs { tile: Some((7, 9)), ..Default::default() }, || tile_for(100, 100, 100, 8));
        assert_eq!(t, (7, 9));
        assert_eq!(tile_for(100, 100, 100, 8), (100, 100));
    }

    /// Every byte of a 2-D region lands once where it belongs, whoever packs (the engine's
    /// pool, its crew unless `HYBLAS_OFFLOAD_CREW=0`, the feeders), in each of `copy2d`'s ways
    /// of cutting it: one contiguous run, whole columns, row ranges of few tall columns.
    #[test]
    fn copies_land_every_byte_once() {
        for cp in [Copier::Pool, Copier::Feed(3)] {
            // (width, height, source pitch, destination pitch), all over a few parts' worth.
            for &(w, h, sp, dp) in &[
                (3 << 20, 1, 3 << 20, 3 << 20),
                (4096, 700, 4096, 4096),
                (4000, 700, 4104, 4000),
                (3 << 19, 2, (3 << 19) + 24, 3 << 19),
            ] {
                let src: Vec<u8> = (0..sp * h).map(|i| (i * 7 + i / 251) as u8).collect();
                let mut dst = vec![0xA5u8; dp * h + 16];
                unsafe { copy2d(cp, src.as_ptr(), sp, dst.as_mut_ptr(), dp, w, h) };
                for c in 0..h {
                    assert!(dst[c * dp..c * dp + w] == src[c * sp..c * sp + w], "{cp:?} {w}x{h} column {c}");
                    let gap = &dst[c * dp + w..((c + 1) * dp).min(dp * h)];
                    assert!(gap.iter().all(|&b| b == 0xA5), "{cp:?} {w}x{h}: written past column {c}");
                }
                assert!(dst[dp * h..].iter().all(|&b| b == 0xA5));
            }
        }
    }

    #[test]
    fn pieces_default_and_forced() {
        let mb = 1 << 20;
        if config::value("HYBLAS_OFFLOAD_PIECES").is_none() && config::value("HYBLAS_OFFLOAD_PIECE_KB").is_none() {
            // An eighth of the traffic (DGEMM n = 1024, beta != 0: 32 MB), 1 MB .. a chunk.
            assert_eq!(piece_for(32 * mb), 4 * mb);
            assert_eq!(piece_for(4 * mb), mb);
            assert_eq!(piece_for(1 << 40), *CHUNK_BYTES);
        }
        let with = |k: Knobs, traffic| with_knobs(k, || piece_for(traffic));
        assert_eq!(with(Knobs { pieces: Some(8), ..Default::default() }, 32 * mb), 4 * mb);
        assert_eq!(with(Knobs { pieces: Some(64), ..Default::default() }, 32 * mb), mb);
        assert_eq!(with(Knobs { pieces: Some(8), piece_bytes: Some(4096), ..Default::default() }, 32 * mb), 4096);
    }

    // ---- The schedule run on the CPU ----

    use crate::types::{MatMut, MatRef, C64};

    /// A problem as `gemm` builds it (`host`: which operands are copied; the others are used
    /// in place, which on the CPU means read where they are). lda/ldb/ldc are the stored rows
    /// plus `pad`.
    #[allow(clippy::too_many_arguments)]
    fn prob<T: Scalar>(
        ta: Trans,
        tb: Trans,
        m: usize,
        n: usize,
        k: usize,
        alpha: f64,
        base: *const T,
        lda: usize,
        ldb: usize,
        ldc: usize,
        host: [bool; 3],
    ) -> Problem<T> {
        let alpha = T::from_f64(alpha);
        let reads = !alpha.is_zero() && k > 0;
        Problem {
            ta,
            tb,
            m,
            n,
            k: if reads { k } else { 0 },
            alpha,
            a: base,
            lda,
            b: base,
            ldb,
            beta: T::zero(),
            c: base as *mut T,
            ldc,
            host: [host[0] && reads, host[1] && reads, host[2]],
            c_in: false,
            elem: std::mem::size_of::<T>(),
        }
    }

    /// op(X) of a stored column-major matrix (rows x cols of op(X)).
    unsafe fn op<T>(ptr: *const T, t: Trans, rows: usize, cols: usize, ld: usize) -> (MatRef<T>, bool) {
        match t {
            Trans::No => (MatRef::col_major(ptr, rows, cols, ld), false),
            _ => (MatRef::col_major(ptr, cols, rows, ld).t(), t == Trans::ConjTrans),
        }
    }

    /// Run `s` on the CPU: device addresses are host memory, uploads and downloads plain copies
    /// cut into the pipeline's pieces, GEMMs the CPU engine. A failure is simulated after
    /// `fail_after` downloaded pieces.
    unsafe fn simulate<T: Scalar>(
        p: &Problem<T>,
        s: &Schedule,
        piece: usize,
        fail_after: Option<usize>,
    ) -> std::result::Result<(), Failure> {
        let e = p.elem;
        let mut done = vec![0usize; s.tiles.len()];
        let mut pieces = 0usize;
        for b in &s.blocks {
            for step in &b.steps {
                match *step {
                    Step::Up(r) => {
                        let g = Pieces::new(r.width, r.height, e, piece);
                        for i in 0..g.count() {
                            let (x0, c0, w, h) = g.piece(i);
                            copy2d(
                                Copier::Pool,
                                r.host.add(c0 * r.hpitch + x0),
                                r.hpitch,
                                (r.dev as *mut u8).add(c0 * r.dpitch + x0),
                                r.dpitch,
                                w,
                                h,
                            );
                        }
                    }
                    Step::Gemm { t, m, n, k, a, b: bm, c } => {
                        let (av, ca) = op(a.ptr as *const T, p.ta, m, k, a.ld as usize);
                        let (bv, cb) = op(bm.ptr as *const T, p.tb, k, n, bm.ld as usize);
                        let cv = MatMut::col_major(c.ptr as *mut T, m, n, c.ld as usize);
                        crate::cpu::level3::gemm(p.alpha, av, ca, bv, cb, p.beta, cv);
                        if p.host[2] {
                            let r = b.down[t];
                            let g = Pieces::new(r.width, r.height, e, piece);
                            for i in 0..g.count() {
                                if Some(pieces) == fail_after {
                                    return Err(Failure {
                                        error: GpuError::Other("simulated".into()),
                                        tiles: s.tiles.clone(),
                                        done,
                                        piece_bytes: piece,
                                        elem: e,
                                    });
                                }
                                let (x0, c0, w, h) = g.piece(i);
                                copy2d(
                                    Copier::Feed(2),
                                    (r.dev as *const u8).add(c0 * r.dpitch + x0),
                                    r.dpitch,
                                    r.host.add(c0 * r.hpitch + x0),
                                    r.hpitch,
                                    w,
                                    h,
                                );
                                done[b.tiles.start + t] += 1;
                                pieces += 1;
                            }
                        }
                    }
                }
            }
        }
        Ok(())
    }

    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self) -> f64 {
            self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((self.0 >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
        }
        fn vec<T: Scalar>(&mut self, len: usize) -> Vec<T> {
            (0..len)
                .map(|_| {
                    T::from_parts(
                        <T::Real as Scalar>::from_f64(self.next()),
                        <T::Real as Scalar>::from_f64(self.next()),
                    )
                })
                .collect()
        }
    }

    /// One call through the schedule on the CPU against the CPU engine on the whole problem:
    /// padding rows of C untouched, results equal within rounding, and after a simulated failure
    /// the CPU recomputing `remaining()` gives the same C (so nothing was updated twice).
    #[allow(clippy::too_many_arguments)]
    fn case<T: Scalar>(
        ta: Trans,
        tb: Trans,
        (m, n, k): (usize, usize, usize),
        (alpha, beta): (f64, f64),
        tile: (usize, usize),
        piece: usize,
        budget: usize,
        host: [bool; 3],
        fail_after: Option<usize>,
        seed: u64,
    ) {
        let mut rng = Lcg(seed);
        let tile = (tile.0.min(m.max(1)), tile.1.min(n.max(1)));
        let pad = 3;
        let (ar, ac) = if ta == Trans::No { (m, k) } else { (k, m) };
        let (br, bc) = if tb == Trans::No { (k, n) } else { (n, k) };
        let (lda, ldb, ldc) = (ar + pad, br + pad, m + pad);
        let a: Vec<T> = rng.vec(lda * ac.max(1));
        let b: Vec<T> = rng.vec(ldb * bc.max(1));
        let mut c: Vec<T> = rng.vec(ldc * n);
        let poison = T::from_f64(-7.77e5);
        for j in 0..n {
            for i in m..ldc {
                c[i + j * ldc] = poison;
            }
        }
        if beta == 0.0 {
            // beta == 0 must not read C: NaN in it stays out of the result.
            for j in 0..n {
                for i in 0..m {
                    c[i + j * ldc] = T::from_f64(f64::NAN);
                }
            }
        }
        let mut want = c.clone();
        let (alpha_t, beta_t) = (T::from_f64(alpha), T::from_f64(beta));
        unsafe {
            let (av, ca) = op(a.as_ptr(), ta, m, k, lda);
            let (bv, cb) = op(b.as_ptr(), tb, k, n, ldb);
            crate::cpu::level3::gemm(alpha_t, av, ca, bv, cb, beta_t, MatMut::col_major(want.as_mut_ptr(), m, n, ldc));
        }
        let mut p = prob::<T>(ta, tb, m, n, k, alpha, a.as_ptr(), lda, ldb, ldc, host);
        (p.a, p.b, p.c, p.beta, p.c_in) = (a.as_ptr(), b.as_ptr(), c.as_mut_ptr(), beta_t, beta != 0.0);
        let (bm, bn) = plan_blocks(m, n, p.k, tile, budget, |bm, bn| layout(&p, bm, bn).iter().sum()).unwrap();
        let bytes: usize = layout(&p, bm, bn).iter().sum();
        let mut arena = vec![0u8; bytes + ALIGN];
        let base = align(arena.as_mut_ptr() as usize) as u64;
        let s = schedule(&p, tile, bm, bn, base);
        let what = format!("{}gemm {ta:?}{tb:?} {m}x{n}x{k} a={alpha} b={beta} tile={tile:?} piece={piece} blocks={}x{} host={host:?} fail={fail_after:?}", T::PREFIX, m.div_ceil(bm), n.div_ceil(bn));
        assert_eq!(s.tiles.len(), m.div_ceil(tile.0) * n.div_ceil(tile.1), "{what}");
        let r = unsafe { simulate(&p, &s, piece, fail_after) };
        if let Err(f) = r {
            let left = f.remaining();
            // The rest on the CPU, as the ABI's fallback does.
            for t in &left {
                unsafe {
                    let (av, ca) = op(a.as_ptr(), ta, m, k, lda);
                    let (bv, cb) = op(b.as_ptr(), tb, k, n, ldb);
                    let (at, bt) = if p.k > 0 {
                        (av.sub(t.i0, 0, t.m, k), bv.sub(0, t.j0, k, t.n))
                    } else {
                        (MatRef { rows: t.m, ..av }, MatRef { cols: t.n, ..bv })
                    };
                    let cv = MatMut::col_major(c.as_mut_ptr(), m, n, ldc);
                    crate::cpu::level3::gemm(alpha_t, at, ca, bt, cb, beta_t, cv.sub(t.i0, t.j0, t.m, t.n));
                }
            }
        } else {
            assert!(
                fail_after.is_none_or(
                    |f| f >= s.tiles.iter().map(|t| Pieces::new(t.m * p.elem, t.n, p.elem, piece).count()).sum()
                ),
                "{what}: no failure"
            );
        }
        let eps = if std::mem::size_of::<T::Real>() == 4 { 1.2e-7 } else { 2.3e-16 };
        for j in 0..n {
            for i in 0..ldc {
                let (g, w) = (c[i + j * ldc], want[i + j * ldc]);
                if i >= m {
                    assert!(g == poison, "{what}: padding ({i},{j}) written");
                    continue;
                }
                let d = (g - w).abs1();
                let d: f64 = num_traits::ToPrimitive::to_f64(&d).unwrap();
                assert!(d <= eps * 32.0 * (k as f64 + 4.0), "{what}: ({i},{j}) got {g:?} want {w:?}");
            }
        }
    }

    const TS: [Trans; 3] = [Trans::No, Trans::Trans, Trans::ConjTrans];

    #[test]
    fn schedule_on_the_cpu_every_transpose() {
        let mut seed = 1;
        for ta in TS {
            for tb in TS {
                for (tile, piece) in [((8, 16), 40), ((64, 64), 1 << 20), ((16, 5), 24)] {
                    seed += 1;
                    let big = 1 << 30;
                    case::<f64>(ta, tb, (37, 29, 23), (0.75, 0.5), tile, piece, big, [true; 3], None, seed);
                    case::<C64>(ta, tb, (21, 30, 17), (1.0, 0.0), tile, piece, big, [true; 3], None, seed);
                    case::<f32>(ta, tb, (19, 33, 40), (-1.5, 1.0), tile, piece, big, [true; 3], None, seed);
                }
            }
        }
    }

    #[test]
    fn schedule_on_the_cpu_blocks_in_place_and_alpha_zero() {
        let mut seed = 100;
        for ta in TS {
            for tb in [Trans::No, Trans::Trans] {
                seed += 1;
                // Device budgets that force 2..many blocks (A resident across column blocks).
                for budget in [6000, 9000, 20000] {
                    case::<f64>(ta, tb, (37, 29, 23), (0.75, 0.5), (8, 8), 64, budget, [true; 3], None, seed);
                    case::<f64>(ta, tb, (37, 29, 23), (0.75, 0.0), (8, 8), 64, budget, [true; 3], None, seed);
                }
                // Operands "on the device": used in place.
                for host in [[false, true, true], [true, false, true], [false, false, true], [true, true, false]] {
                    case::<C64>(ta, tb, (21, 30, 17), (1.0, 0.5), (8, 16), 64, 1 << 30, host, None, seed);
                }
                // alpha == 0: C := beta*C (and beta == 0 clears NaN), A and B never read.
                case::<f64>(ta, tb, (37, 29, 23), (0.0, 0.5), (8, 8), 64, 1 << 30, [true; 3], None, seed);
                case::<f64>(ta, tb, (37, 29, 23), (0.0, 0.0), (8, 8), 64, 1 << 30, [true; 3], None, seed);
                // k == 0.
                case::<f64>(ta, tb, (37, 29, 0), (1.0, 0.5), (8, 8), 64, 1 << 30, [true; 3], None, seed);
            }
        }
    }

    #[test]
    fn schedule_on_the_cpu_failures_leave_nothing_twice() {
        let mut seed = 200;
        for fail in [0, 1, 2, 5, 13, 40, 1000] {
            for (tile, piece) in [((8, 16), 40), ((8, 8), 200), ((64, 64), 1 << 20)] {
                seed += 1;
                for beta in [0.5, 0.0] {
                    case::<f64>(
                        Trans::No,
                        Trans::Trans,
                        (37, 29, 23),
                        (0.75, beta),
                        tile,
                        piece,
                        1 << 30,
                        [true; 3],
                        Some(fail),
                        seed,
                    );
                    let budget = if tile.0 < 64 { 9000 } else { 1 << 30 };
                    case::<C64>(
                        Trans::ConjTrans,
                        Trans::No,
                        (21, 30, 17),
                        (1.0, beta),
                        tile,
                        piece,
                        budget,
                        [true; 3],
                        Some(fail),
                        seed,
                    );
                }
            }
        }
    }

    // ---- Co-execution: the queue and the driver, with the GPU side simulated ----

    /// Both sides drawing from a queue in simulated time: the GPU runs its claims one after
    /// the other at `g` columns/s with at most [`GPU_DEPTH`] in flight, the CPU its units at
    /// `c`; the queue starts from estimates `g0`, `c0`. Returns the end time, each side's
    /// columns, and checks that every column was taken exactly once.
    fn simulate_queue(
        n: usize,
        unit: usize,
        fence: Option<usize>,
        (g, c): (f64, f64),
        (g0, c0): (f64, f64),
    ) -> (f64, usize, usize) {
        let q = Queue::new(n, unit, fence, g0, c0);
        let mut taken = vec![0u8; n];
        // The feeder's clock, when the GPU is free, the claims in flight (columns, end).
        let (mut feeder, mut gpu_free, mut last_done) = (0.0f64, 0.0f64, None::<f64>);
        let mut inflight: VecDeque<(usize, f64)> = VecDeque::new();
        let (mut cpu_t, mut cpu_on, mut gpu_on) = (0.0f64, true, true);
        let (mut gc, mut cc) = (0, 0);
        while gpu_on || cpu_on {
            let feeder_next = if inflight.len() >= GPU_DEPTH { feeder.max(inflight[0].1) } else { feeder };
            if gpu_on && (!cpu_on || feeder_next <= cpu_t) {
                feeder = feeder_next;
                if inflight.len() >= GPU_DEPTH {
                    let (cols, done) = inflight.pop_front().unwrap();
                    q.gpu_done(cols, last_done.map(|t| done - t));
                    last_done = Some(done);
                    continue;
                }
                match q.claim_gpu() {
                    Some((j0, j1)) => {
                        taken[j0..j1].iter_mut().for_each(|t| *t += 1);
                        gc += j1 - j0;
                        gpu_free = gpu_free.max(feeder) + (j1 - j0) as f64 / g;
                        inflight.push_back((j1 - j0, gpu_free));
                    }
                    None => {
                        for (cols, done) in inflight.drain(..) {
                            feeder = feeder.max(done);
                            q.gpu_done(cols, None);
                        }
                        q.stop_gpu();
                        gpu_on = false;
                    }
                }
            } else {
                match q.claim_cpu() {
                    CpuClaim::Take(j0, j1) => {
                        taken[j0..j1].iter_mut().for_each(|t| *t += 1);
                        cc += j1 - j0;
                        let secs = (j1 - j0) as f64 / c;
                        cpu_t += secs;
                        q.cpu_done(j1 - j0, secs);
                    }
                    // Until the GPU's next event.
                    CpuClaim::Wait => cpu_t = cpu_t.max(feeder_next) + 1e-9,
                    CpuClaim::Done => {
                        q.cpu_exit();
                        cpu_on = false;
                    }
                }
            }
        }
        let gpu_end = gpu_free;
        let st = q.state();
        // Columns neither side took (the caller's fallback computes them).
        for t in taken.iter_mut().take(st.hi).skip(st.lo) {
            *t += 1;
        }
        assert!(taken.iter().all(|&t| t == 1), "n={n} unit={unit} fence={fence:?}: a column taken twice or never");
        (gpu_end.max(cpu_t), gc, cc)
    }

    #[test]
    fn the_queue_balances_and_corrects_wrong_estimates() {
        for &(n, unit) in &[(4096usize, 512usize), (2048, 512), (1000, 128), (16384, 2048)] {
            for &ratio in &[1.0f64, 3.0, 10.0] {
                // The GPU `ratio` times as fast as the CPU; ideal = both busy to the end.
                let (g, c) = (n as f64 / 10.0 * ratio / (1.0 + ratio), n as f64 / 10.0 / (1.0 + ratio));
                let ideal = n as f64 / (g + c);
                for &(eg, ec) in &[(1.0, 1.0), (4.0, 0.25), (0.25, 4.0)] {
                    let (t, gc, cc) = simulate_queue(n, unit, None, (g, c), (g * eg, c * ec));
                    // One GPU unit of tail at most (plus a CPU unit's worth of rounding).
                    let bound = ideal + 1.2 * unit as f64 / g + CPU_MIN_COLS as f64 / c;
                    assert!(t <= bound, "n={n} unit={unit} ratio={ratio} est=({eg},{ec}): {t:.3} > {bound:.3} (ideal {ideal:.3}; gpu {gc} cpu {cc})");
                    // And never worse than the GPU alone.
                    assert!(
                        t <= n as f64 / g * 1.02 + CPU_MIN_COLS as f64 / c,
                        "n={n} ratio={ratio}: {t} vs {}",
                        n as f64 / g
                    );
                }
            }
        }
    }

    #[test]
    fn a_fence_gives_each_side_exactly_its_part() {
        for &(n, f) in &[(1000usize, 700usize), (1000, 1), (1000, 999), (77, 40)] {
            let (_, gc, cc) = simulate_queue(n, 128, Some(f), (100.0, 30.0), (1.0, 1.0));
            assert_eq!((gc, cc), (f, n - f));
        }
        // A GPU that stops leaves its part to the CPU, which takes it whole.
        let q = Queue::new(1000, 128, Some(600), 1.0, 1.0);
        assert_eq!(q.claim_gpu(), Some((0, 128)));
        assert_eq!(q.claim_cpu(), CpuClaim::Take(600, 1000));
        assert_eq!(q.claim_cpu(), CpuClaim::Done);
        q.stop_gpu();
        assert_eq!(q.claim_gpu(), None);
        assert_eq!(q.claim_cpu(), CpuClaim::Take(128, 600));
        assert_eq!(q.claim_cpu(), CpuClaim::Done);
    }

    /// A co-executed call with the GPU side simulated on the CPU (tiles of `tile`, results
    /// written back in pieces of `piece` bytes, a failure after `fail_after` pieces), through
    /// the real driver, queue and fallback: C must equal the CPU engine's, padding untouched.
    #[allow(clippy::too_many_arguments)]
    fn coexec_case<T: Scalar>(
        ta: Trans,
        tb: Trans,
        (m, n, k): (usize, usize, usize),
        (alpha, beta): (f64, f64),
        tile: (usize, usize),
        piece: usize,
        fence: Option<usize>,
        fail_after: Option<usize>,
        seed: u64,
    ) {
        let mut rng = Lcg(seed);
        let pad = 2;
        let (ar, ac) = if ta == Trans::No { (m, k) } else { (k, m) };
        let (br, bc) = if tb == Trans::No { (k, n) } else { (n, k) };
        let (lda, ldb, ldc) = (ar + pad, br + pad, m + pad);
        let a: Vec<T> = rng.vec(lda * ac.max(1));
        let b: Vec<T> = rng.vec(ldb * bc.max(1));
        let mut c: Vec<T> = rng.vec(ldc * n);
        let poison = T::from_f64(-7.77e5);
        for j in 0..n {
            for i in m..ldc {
                c[i + j * ldc] = poison;
            }
        }
        let (al, be) = (T::from_f64(alpha), T::from_f64(beta));
        let mut want = c.clone();
        unsafe {
            cpu_rects(
                ta,
                tb,
                (m, n, k),
                al,
                a.as_ptr(),
                lda,
                b.as_ptr(),
                ldb,
                be,
                want.as_mut_ptr(),
                ldc,
                &[Tile { i0: 0, j0: 0, m, n }],
            );
        }
        let what = format!(
            "{}gemm {ta:?}{tb:?} {m}x{n}x{k} tile={tile:?} piece={piece} fence={fence:?} fail={fail_after:?}",
            T::PREFIX
        );
        let e = std::mem::size_of::<T>();
        let q = Queue::new(n, tile.1, fence, 1e9, 1e9);
        let (ap, bp, cp) = (Shared(a.as_ptr()), Shared(b.as_ptr()), Shared(c.as_mut_ptr()));
        let t0 = Instant::now();
        let gpu = |q: &Queue| {
            let (ap, bp, cp) = (&ap, &bp, &cp);
            let mut out = GpuOut::new(e);
            out.piece = piece;
            let mut written = 0usize;
            'claims: while let Some((j0, j1)) = q.claim_gpu() {
                let first = out.tiles.len();
                for jj in (j0..j1).step_by(tile.1) {
                    for i0 in (0..m).step_by(tile.0) {
                        out.tiles.push(Tile { i0, j0: jj, m: tile.0.min(m - i0), n: tile.1.min(j1 - jj) });
                    }
                }
                for t in first..out.tiles.len() {
                    let tl = out.tiles[t];
                    // The tile computed aside (the device), then written back piece by piece.
                    let mut tmp: Vec<T> = (0..tl.m * tl.n)
                        .map(|i| unsafe { *cp.0.add((tl.i0 + i % tl.m) + (tl.j0 + i / tl.m) * ldc) })
                        .collect();
                    unsafe {
                        let at = Tile { i0: 0, j0: 0, m: tl.m, n: tl.n };
                        let (av, ca) = MatRef::op(ap.0, ta, m, k, lda);
                        let (bv, cb) = MatRef::op(bp.0, tb, k, n, ldb);
                        let reads = !al.is_zero() && k > 0;
                        let (asub, bsub) = if reads {
                            (av.sub(tl.i0, 0, tl.m, k), bv.sub(0, tl.j0, k, tl.n))
                        } else {
                            (MatRef { rows: tl.m, ..av }, MatRef { cols: tl.n, ..bv })
                        };
                        let _ = at;
                        crate::cpu::level3::gemm::gemm_with(
                            1,
                            al,
                            asub,
                            ca,
                            bsub,
                            cb,
                            be,
                            MatMut::col_major(tmp.as_mut_ptr(), tl.m, tl.n, tl.m),
                        );
                    }
                    let g = Pieces::new(tl.m * e, tl.n, e, piece);
                    out.done.push(0);
                    for pc in 0..g.count() {
                        if Some(written) == fail_after {
                            out.error = Some(GpuError::Other("simulated".into()));
                            q.stop_gpu();
                            break 'claims;
                        }
                        let (x0, c0, w, h) = g.piece(pc);
                        unsafe {
                            copy2d(
                                Copier::Feed(1),
                                (tmp.as_ptr() as *const u8).add(c0 * tl.m * e + x0),
                                tl.m * e,
                                (cp.0 as *mut u8).add(((tl.i0 + (tl.j0 + c0) * ldc) * e) + x0),
                                ldc * e,
                                w,
                                h,
                            );
                        }
                        out.done[t] += 1;
                        written += 1;
                    }
                }
                q.gpu_done(j1 - j0, None);
            }
            out
        };
        let cpu = |q: &Queue| {
            let (ap, bp, cp) = (&ap, &bp, &cp);
            cpu_loop(q, t0, |j0, j1| unsafe {
                cpu_rects(
                    ta,
                    tb,
                    (m, n, k),
                    al,
                    ap.0,
                    lda,
                    bp.0,
                    ldb,
                    be,
                    cp.0,
                    ldc,
                    &[Tile { i0: 0, j0, m, n: j1 - j0 }],
                );
            })
        };
        let (g, _, left) = drive(&q, m, None, gpu, cpu);
        unsafe { cpu_rects(ta, tb, (m, n, k), al, a.as_ptr(), lda, b.as_ptr(), ldb, be, c.as_mut_ptr(), ldc, &left) };
        assert_eq!(g.error.is_some(), fail_after.is_some_and(|f| f < usize::MAX) && g.error.is_some(), "{what}");
        if let Some(f) = fence {
            let st = q.state();
            assert!(st.gpu_cols <= f && st.cpu_cols <= n - f + (f - st.gpu_cols), "{what}: {st:?}");
        }
        let eps = if std::mem::size_of::<T::Real>() == 4 { 1.2e-7 } else { 2.3e-16 };
        for j in 0..n {
            for i in 0..ldc {
                let (gv, w) = (c[i + j * ldc], want[i + j * ldc]);
                if i >= m {
                    assert!(gv == poison, "{what}: padding ({i},{j}) written");
                    continue;
                }
                let d: f64 = num_traits::ToPrimitive::to_f64(&(gv - w).abs1()).unwrap();
                assert!(d <= eps * 32.0 * (k as f64 + 4.0), "{what}: ({i},{j}) got {gv:?} want {w:?}");
            }
        }
    }

    #[test]
    fn coexec_on_the_cpu_every_transpose_share_and_failure() {
        let mut seed = 300;
        for ta in TS {
            for tb in TS {
                seed += 1;
                let dims = (53, 71, 29);
                for fence in [None, Some(0), Some(30), Some(71)] {
                    coexec_case::<f64>(ta, tb, dims, (0.75, 0.5), (16, 24), 48, fence, None, seed);
                    coexec_case::<C64>(ta, tb, dims, (1.0, 0.0), (16, 8), 64, fence, Some(3), seed);
                }
                coexec_case::<f32>(ta, tb, (40, 90, 33), (-1.5, 1.0), (8, 16), 24, None, Some(0), seed);
            }
        }
        // alpha == 0 and k == 0, failures at many points, beta both ways.
        for fail in [0usize, 1, 2, 5, 17, 1000] {
            for beta in [0.0, 0.5] {
                seed += 1;
                coexec_case::<f64>(
                    Trans::No,
                    Trans::Trans,
                    (37, 64, 23),
                    (0.75, beta),
                    (8, 16),
                    40,
                    None,
                    Some(fail),
                    seed,
                );
                coexec_case::<f64>(
                    Trans::Trans,
                    Trans::No,
                    (37, 64, 23),
                    (0.75, beta),
                    (8, 16),
                    40,
                    Some(40),
                    Some(fail),
                    seed,
                );
            }
        }
        coexec_case::<f64>(Trans::No, Trans::No, (37, 64, 23), (0.0, 0.5), (8, 16), 40, None, None, seed);
        coexec_case::<f64>(Trans::No, Trans::No, (37, 64, 0), (1.0, 0.0), (8, 16), 40, Some(20), Some(2), seed);
    }
}

// Phase 2: SYMM/HEMM, SYRK/HERK, SYR2K/HER2K, TRMM and TRSM on this module's pipeline (a child
// module, so that it reuses the pieces above without widening their visibility).
#[path = "offload_l3.rs"]
pub mod l3;
