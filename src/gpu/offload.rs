//! Host Level-3 offload (seed 002, phase 1): C := alpha*op(A)*op(B) + beta*C computed on the
//! GPU from HOST memory, for a host-ABI `?gemm_` / `cblas_?gemm` call the planner
//! (`plan::offload`) sent here.
//!
//! How one call runs:
//! - C is cut into tiles (`tile_for`: about a quarter of the larger side, 512..2048, or the
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
//! Phase 2 (co-execution) plugs in at the tile list: the CPU engine draws tiles of C from the
//! same queue as the GPU pipeline, and [`Failure::remaining`]'s rectangle form is the unit the
//! CPU already knows how to compute.

use super::driver::{check, sys, GpuError, Result};
use super::runtime::{is_device_pointer, DeviceBuffer, Runtime};
use super::{DMat, Exec};
use crate::config;
use crate::cpu::threads;
use crate::types::{Scalar, Trans};
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
    /// Device memory the planner may use for one block, in bytes (forces the blocked path).
    pub device_budget: Option<usize>,
    /// Fail (as a failed device->host copy would) after this many pieces of C were written
    /// back: tests of the CPU fallback on a real GPU.
    pub fail_after: Option<usize>,
}

thread_local! {
    static KNOBS: Cell<Knobs> = const { Cell::new(Knobs { tile: None, piece_bytes: None, device_budget: None, fail_after: None }) };
}

/// Run `f` with this thread's offloads using `k` (tests force small tiles, pieces and device
/// budgets so that a small problem spans many tiles, pieces and blocks).
pub fn with_knobs<R>(k: Knobs, f: impl FnOnce() -> R) -> R {
    struct Restore(Knobs);
    impl Drop for Restore {
        fn drop(&mut self) {
            KNOBS.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(KNOBS.with(|c| c.replace(k)));
    f()
}

fn knobs() -> Knobs {
    KNOBS.with(|c| c.get())
}

/// `HYBLAS_OFFLOAD_TILE=T` or `MxN`: the C tile.
static ENV_TILE: Lazy<Option<(usize, usize)>> = Lazy::new(|| {
    let v = config::value("HYBLAS_OFFLOAD_TILE")?;
    let mut it = v.split(['x', 'X', ',']).map(|s| s.trim().parse::<usize>().ok().filter(|&t| t > 0));
    let a = it.next().flatten()?;
    let b = it.next().flatten().unwrap_or(a);
    Some((a, b))
});

/// Pinned chunk size and count per direction (`HYBLAS_OFFLOAD_CHUNK_MB`, `HYBLAS_OFFLOAD_CHUNKS`).
static CHUNK_BYTES: Lazy<usize> = Lazy::new(|| config::threshold("HYBLAS_OFFLOAD_CHUNK_MB", 16).clamp(1, 1024) << 20);
static CHUNKS: Lazy<usize> = Lazy::new(|| config::threshold("HYBLAS_OFFLOAD_CHUNKS", 4).clamp(2, 64));
/// `HYBLAS_OFFLOAD_PIECE_KB`: bytes per copy piece (default: a sixteenth of the traffic,
/// 1 MiB .. one chunk).
static ENV_PIECE: Lazy<Option<usize>> =
    Lazy::new(|| config::value("HYBLAS_OFFLOAD_PIECE_KB")?.trim().parse::<usize>().ok().map(|kb| kb << 10));

/// The C tile of an m x n x k problem in precision `T`: the knob, else `HYBLAS_OFFLOAD_TILE`,
/// else a quarter of the larger side rounded to 256, between 512 and 2048. Small enough that
/// the first tile's panels (the pipeline's start-up) are a small part of the traffic, large
/// enough that each cuBLAS call fills the GPU (2048^2 = 256 CTAs of 128^2).
pub fn tile_for(m: usize, n: usize, _k: usize) -> (usize, usize) {
    let (mt, nt) = knobs().tile.or(*ENV_TILE).unwrap_or_else(|| {
        let t = (m.max(n) / 4 / 256 * 256).clamp(512, 2048);
        (t, t)
    });
    (mt.clamp(1, m.max(1)), nt.clamp(1, n.max(1)))
}

/// Bytes per copy piece for a call moving `traffic` bytes.
fn piece_for(traffic: usize) -> usize {
    let p = knobs().piece_bytes.or(*ENV_PIECE).unwrap_or_else(|| (traffic / 16).clamp(1 << 20, *CHUNK_BYTES));
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
    /// Wall time of the call.
    pub secs: f64,
    /// A, B, C used in place (device or managed memory).
    pub in_place: [bool; 3],
}

impl std::fmt::Display for OffloadStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
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
        let names = ["A", "B", "C"];
        let dev: Vec<&str> = (0..3).filter(|&i| self.in_place[i]).map(|i| names[i]).collect();
        if !dev.is_empty() {
            write!(f, " in-place={}", dev.join(","))?;
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
        let mut out = Vec::new();
        for (t, &d) in self.tiles.iter().zip(&self.done) {
            if d == 0 {
                out.push(*t);
                continue;
            }
            let g = Pieces::new(t.m * self.elem, t.n, self.elem, self.piece_bytes);
            if d >= g.count() {
                continue;
            }
            // Pieces go down a column, then to the next column: what is left is the rest of one
            // column and the columns after it.
            let (r0, c0, _, _) = g.piece(d);
            let (r0, c0) = (r0 / self.elem, c0);
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

/// Below this many bytes a copy runs on the calling thread alone.
const PAR_COPY_MIN: usize = 256 << 10;

/// Copy `height` runs of `width` bytes from `src` (runs `sp` bytes apart) to `dst` (`dp` apart),
/// on the CPU engine's threads.
///
/// # Safety
/// Both regions valid; they do not overlap.
unsafe fn copy2d(src: *const u8, sp: usize, dst: *mut u8, dp: usize, width: usize, height: usize) {
    let total = width * height;
    if total == 0 {
        return;
    }
    let t = threads::nthreads();
    let parts = (total / PAR_COPY_MIN).clamp(1, t.max(1));
    let (s, d) = (SendPtr(src as *mut u8), SendPtr(dst));
    let run = |f: &(dyn Fn(usize) + Sync)| {
        if parts == 1 {
            f(0)
        } else {
            threads::for_each_part(parts, parts, f)
        }
    };
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

struct Chunk {
    host: *mut u8,
    ev: sys::CUevent,
}

struct Pipe {
    ordinal: i32,
    h2d: sys::CUstream,
    comp: sys::CUstream,
    d2h: sys::CUstream,
    up: Vec<Chunk>,
    down: Vec<Chunk>,
    /// Recorded on h2d after a tile's uploads; comp waits on it at once, so one event serves
    /// every tile.
    ready: sys::CUevent,
    /// One per tile of a block: the tile's GEMM finished (d2h waits on it, on another thread).
    done: Vec<sys::CUevent>,
    arena: Option<DeviceBuffer>,
    /// A stream or event failed in a way that may leave work in flight: not pooled again.
    broken: bool,
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

    fn done_events(&mut self, n: usize) -> Result<()> {
        while self.done.len() < n {
            self.done.push(event()?);
        }
        Ok(())
    }

    /// Wait for everything the pipe enqueued.
    fn sync(&mut self) -> Result<()> {
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
    fn arena(&mut self, bytes: usize) -> Result<u64> {
        if self.arena.as_ref().is_none_or(|a| a.bytes < bytes) {
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

fn take_pipe(rt: &Runtime) -> Result<Pipe> {
    let pooled = {
        let mut pool = POOL.lock();
        pool.iter().position(|p| p.ordinal == rt.props.ordinal).map(|i| pool.swap_remove(i))
    };
    match pooled {
        Some(p) => Ok(p),
        None => Pipe::new(rt),
    }
}

fn give_pipe(rt: &Runtime, mut p: Pipe) {
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
}

impl Uploader<'_> {
    /// Enqueue the upload of `r`: each piece waits for its chunk's previous copy, is packed by
    /// the CPU threads, and copied asynchronously.
    unsafe fn upload(&mut self, r: Region, elem: usize, piece: usize) -> Result<()> {
        let g = Pieces::new(r.width, r.height, elem, piece);
        for p in 0..g.count() {
            let (x0, c0, w, h) = g.piece(p);
            let ch = &self.chunks[self.next];
            self.next = (self.next + 1) % self.chunks.len();
            check(sys::cuEventSynchronize(ch.ev), "cuEventSynchronize")?;
            copy2d(r.host.add(c0 * r.hpitch + x0), r.hpitch, ch.host, w, w, h);
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
}

impl Downloader<'_> {
    /// Enqueue the download of tile `t` (region `r` of C), after event `ready`.
    unsafe fn tile(&mut self, t: usize, r: Region, ready: sys::CUevent, elem: usize, piece: usize) -> Result<()> {
        check(sys::cuStreamWaitEvent(self.stream, ready, 0), "cuStreamWaitEvent")?;
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
        copy2d(ch.host, w, host, hpitch, w, h);
        self.head = (ci + 1) % self.chunks.len();
        debug_assert_eq!(self.done[t], p);
        self.done[t] = p + 1;
        self.bytes += (w * h) as u64;
        Ok(true)
    }
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
fn align(b: usize) -> usize {
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
    let tile = tile_for(m, n, k);
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
    crate::abi::cublas::vendor_gemm::<T>(&ex, p.ta, p.tb, 0, 0, 0, p.alpha, nil, nil, p.beta, nil)
        .map_err(untouched)?;

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

    let fail_after = knobs().fail_after;
    // Pieces written back by the blocks before (for the injected failure's count).
    let mut written = 0usize;
    for block in &sched.blocks {
        let nt = block.tiles.len();
        let abort = AtomicBool::new(false);
        let (tx, rx) = mpsc::channel::<usize>();
        let (h2d, d2h, ready) = (pipe.h2d, pipe.d2h, pipe.ready);
        let done_ev: Vec<Shared<sys::CUevent>> = pipe.done[..nt].iter().map(|&e| Shared(e)).collect();
        let (up_chunks, down_chunks) = (&pipe.up, &pipe.down);

        let (r, ubytes, dr, dd, dbytes, dw) = std::thread::scope(|s| {
            // ---- Step 2: the download thread (C on the host): tiles back as they finish ----
            let downloader = p.host[2].then(|| {
                let (chunks, stream, down) = (Shared(down_chunks), Shared(d2h), Shared(&block.down));
                let (done_ev, abort) = (&done_ev, &abort);
                s.spawn(move || -> (Result<()>, Vec<usize>, u64, usize) {
                    let (chunks, stream, down) = (chunks, stream, down);
                    let mut d = Downloader {
                        chunks: chunks.0,
                        pending: VecDeque::new(),
                        head: 0,
                        stream: stream.0,
                        bytes: 0,
                        done: vec![0; nt],
                        written,
                        fail_after,
                    };
                    let r = (|| -> Result<()> {
                        rt.bind()?;
                        loop {
                            let t = match rx.try_recv() {
                                Ok(t) => t,
                                Err(mpsc::TryRecvError::Empty) => {
                                    // Nothing new: write back what has arrived, else wait.
                                    if d.finish_oldest()? {
                                        continue;
                                    }
                                    match rx.recv() {
                                        Ok(t) => t,
                                        Err(_) => break,
                                    }
                                }
                                Err(mpsc::TryRecvError::Disconnected) => break,
                            };
                            if abort.load(Ordering::Relaxed) {
                                break;
                            }
                            d.tile(t, down.0[t], done_ev[t].0, e, piece)?;
                        }
                        while d.finish_oldest()? {}
                        Ok(())
                    })();
                    if r.is_err() {
                        abort.store(true, Ordering::Relaxed);
                    }
                    (r, d.done, d.bytes, d.written)
                })
            });

            // ---- Step 3: uploads and GEMMs in schedule order, on the calling thread ----
            let mut up = Uploader { chunks: up_chunks, next: 0, stream: h2d, bytes: 0 };
            let r = (|| -> Result<()> {
                for step in &block.steps {
                    if abort.load(Ordering::Relaxed) {
                        return Ok(());
                    }
                    match *step {
                        Step::Up(r) => up.upload(r, e, piece)?,
                        Step::Gemm { t, m, n, k, a, b, c } => {
                            // The tile's uploads are the last ones enqueued on h2d.
                            check(sys::cuEventRecord(ready, h2d), "cuEventRecord")?;
                            check(sys::cuStreamWaitEvent(ex.stream, ready, 0), "cuStreamWaitEvent")?;
                            let (m, n, k) = (m as i64, n as i64, k as i64);
                            crate::abi::cublas::vendor_gemm::<T>(&ex, p.ta, p.tb, m, n, k, p.alpha, a, b, p.beta, c)?;
                            check(sys::cuEventRecord(done_ev[t].0, ex.stream), "cuEventRecord")?;
                            if p.host[2] {
                                // A send fails only when the downloader stopped on an error,
                                // which the abort flag reports.
                                let _ = tx.send(t);
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
            let (dr, dd, dbytes, dw) = match downloader {
                Some(h) => h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)),
                None => (Ok(()), vec![0; nt], 0, written),
            };
            (r, up.bytes, dr, dd, dbytes, dw)
        });
        written = dw;
        stats.h2d_bytes += ubytes;
        stats.d2h_bytes += dbytes;
        done[block.tiles.clone()].copy_from_slice(&dd);
        // A failed GEMM or copy surfaces at this wait at the latest (the chunks and the arena
        // are reused by the next block and the next call, so nothing may still be in flight).
        let synced = pipe.sync();
        if let Err(err) = r.and(dr).and(synced) {
            return Err(fail(err, &done));
        }
    }
    Ok(())
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

/// Measure [`Transfer`] with `bytes` of pageable memory (median of 3).
pub fn measure_transfers(rt: &Runtime, bytes: usize) -> Result<Transfer> {
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
            let mut u = Uploader { chunks: &pipe.up, next: 0, stream: h2d_s, bytes: 0 };
            u.upload(reg, 1, piece)?;
            check(sys::cuStreamSynchronize(h2d_s), "cuStreamSynchronize")
        })?;
        let down = time(&mut || unsafe {
            let mut d = Downloader {
                chunks: &pipe.down,
                pending: VecDeque::new(),
                head: 0,
                stream: d2h_s,
                bytes: 0,
                done: vec![0],
                written: 0,
                fail_after: None,
            };
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
        assert_eq!(tile_for(16384, 16384, 16384), (2048, 2048));
        assert_eq!(tile_for(4096, 4096, 4096), (1024, 1024));
        assert_eq!(tile_for(1000, 1000, 1000), (512, 512));
        assert_eq!(tile_for(100, 5000, 10), (100, 1024));
        let t = with_knobs(Knobs { tile: Some((7, 9)), ..Default::default() }, || tile_for(100, 100, 100));
        assert_eq!(t, (7, 9));
        assert_eq!(tile_for(100, 100, 100), (100, 100));
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
}

// Phase 2: SYMM/HEMM, SYRK/HERK, SYR2K/HER2K, TRMM and TRSM on this module's pipeline (a child
// module, so that it reuses the pieces above without widening their visibility).
#[path = "offload_l3.rs"]
pub mod l3;
