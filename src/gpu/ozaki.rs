//! Accurate DGEMM on device memory (issue 49): the Ozaki scheme in its int8 Chinese-remainder
//! form, with every element certified on the device (kernels/ozaki.cu has the arithmetic).
//!
//! Why this form on the GPU: the CPU path's FP64 slices would cost six DGEMMs of the call's size
//! on an H200 (about 106 ms at n = 8192, twice the target), while the int8 tensor cores
//! run about 27 times the FP64 rate. Slices of int8 (Ozaki scheme I) cost a number of products
//! quadratic in the bits; residues modulo N small primes (scheme II) cost N int8 GEMMs, linear
//! in the bits: about 23 for the 80 bits per side that certify nearly every element of the
//! issue's phi = 0.5 inputs.
//!
//! The call ([`dgemm`]):
//! 1. per row of op(A) and column of op(B): the exponent E of its largest entry, its 1-norm
//!    scaled by 2^-E, and whether it holds an Inf or NaN ([`scan`]);
//! 2. plain FP64 values of a sample of C's elements; the caller (`plan::accurate`) picks from
//!    them the bits `beta` each entry keeps (more bits: more moduli, fewer refused elements);
//! 3. the int8 residues of the scaled, rounded operands for each modulus; one strided batched
//!    int8 GEMM of the real cuBLAS (int32 sums, exact); per element the Chinese remainder
//!    reconstruction, the bound of the operands' rounding, and the certificate (`doz_crt`),
//!    over blocks of C's columns where the int32 outputs would not fit the memory budget;
//! 4. the elements not certified (and those with an Inf or NaN in their row, column or C) are
//!    listed; their rows, columns and C values go to the host, whose exact path (given by the
//!    caller) computes them, and they are written back.
//!
//! Whatever fails before the first write to C leaves C untouched and returns the error (the
//! caller then runs the call another way).

use super::driver::{check, sys};
use super::kernels::{trans_code, Args, Family, Function, Launch};
use super::{DMat, Exec, GpuError, Result};
use crate::types::Trans;
use once_cell::sync::Lazy;
use std::ffi::c_void;

/// 32-bit limbs of the moduli's product M in the device table (`OZ_LIMBS` in kernels/ozaki.cu).
pub const LIMBS: usize = 12;

/// Largest inner dimension: |sum of k products of int8 residues| <= k 2^14 must stay below 2^31.
pub const MAX_K: usize = (1 << 17) - 16;

/// The moduli: pairwise coprime, at most 256, greedily from the top (256, 255, 253, 251, ...;
/// 49 of them, 342 bits in all). Residues in [-128, 127] fit int8.
pub static MODULI: Lazy<Vec<u32>> = Lazy::new(|| {
    let gcd = |mut a: u32, mut b: u32| {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    };
    let mut out: Vec<u32> = Vec::new();
    for p in (2..=256u32).rev() {
        if out.iter().all(|&q| gcd(p, q) == 1) {
            out.push(p);
        }
    }
    out
});

/// The Chinese-remainder constants of the first `n` moduli.
pub struct Crt {
    /// Moduli used.
    pub n: usize,
    /// log2 M.
    pub bits: f64,
    /// The device table: p_t (n words), W_t (n x LIMBS), M (LIMBS), floor(M / 2) (LIMBS).
    pub table: Vec<u32>,
    /// M as a double (rounded).
    pub mhat: f64,
    /// (p_t, 1 / p_t) for the residue and reconstruction kernels.
    pub mods: Vec<f64>,
    /// Limbs M takes (the weights W_t < M too): the reconstruction's inner loop runs over these.
    pub limbs: usize,
}

/// Little-endian u32 limbs: v *= s.
fn mul_small(v: &mut Vec<u32>, s: u32) {
    let mut carry = 0u64;
    for x in v.iter_mut() {
        let t = *x as u64 * s as u64 + carry;
        *x = t as u32;
        carry = t >> 32;
    }
    if carry != 0 {
        v.push(carry as u32);
    }
}

/// v mod s.
fn mod_small(v: &[u32], s: u32) -> u32 {
    v.iter().rev().fold(0u64, |r, &x| ((r << 32) | x as u64) % s as u64) as u32
}

fn to_f64(v: &[u32]) -> f64 {
    v.iter().rev().fold(0.0, |r, &x| r * 4294967296.0 + x as f64)
}

impl Crt {
    fn build(n: usize) -> Crt {
        let ps = &MODULI[..n];
        let product = |skip: Option<usize>| {
            let mut v = vec![1u32];
            for (t, &p) in ps.iter().enumerate() {
                if Some(t) != skip {
                    mul_small(&mut v, p);
                }
            }
            v.resize(LIMBS, 0);
            v
        };
        let m = product(None);
        let mut table: Vec<u32> = ps.to_vec();
        for (t, &p) in ps.iter().enumerate() {
            // W_t = (M / p_t) * y_t, y_t the inverse of (M / p_t) mod p_t: W_t = 1 mod p_t and 0
            // mod the others, so sum_t r_t W_t = X mod M.
            let mut w = product(Some(t));
            let r = mod_small(&w, p);
            let y = (1..p).find(|y| (r as u64 * *y as u64) % p as u64 == 1).unwrap_or(1);
            mul_small(&mut w, y);
            w.resize(LIMBS, 0);
            table.extend_from_slice(&w);
        }
        table.extend_from_slice(&m);
        // floor(M / 2): a right shift by one bit.
        let half: Vec<u32> = (0..LIMBS).map(|l| (m[l] >> 1) | (m.get(l + 1).copied().unwrap_or(0) << 31)).collect();
        table.extend_from_slice(&half);
        let mods = ps.iter().flat_map(|&p| [p as f64, 1.0 / p as f64]).collect();
        let limbs = m.iter().rposition(|&x| x != 0).map_or(1, |t| t + 1);
        Crt { n, bits: ps.iter().map(|&p| (p as f64).log2()).sum(), table, mhat: to_f64(&m), mods, limbs }
    }
}

/// The constants for every moduli count, computed once.
static CRTS: Lazy<Vec<Crt>> = Lazy::new(|| (1..=MODULI.len()).map(Crt::build).collect());

/// The fewest moduli whose product has at least `bits` bits, if there are enough.
pub fn crt_for_bits(bits: f64) -> Option<&'static Crt> {
    CRTS.iter().find(|c| c.bits >= bits)
}

/// The most bits per entry the moduli allow at inner dimension k (the worst case of
/// [`crt_for`]'s bound, nu <= k).
pub fn max_beta(k: usize) -> u32 {
    let all = CRTS.last().map_or(0.0, |c| c.bits);
    ((all - 3.0 - (k.max(1) as f64).log2()) / 2.0).floor().max(0.0) as u32
}

/// The largest norm nu (or mu) among vectors without Inf or NaN (whose residues are zeros).
pub fn top_norm(s: &Scan) -> f64 {
    s.nu.iter().zip(&s.bad).filter(|(_, &b)| !b).map(|(&x, _)| x).fold(0.0f64, f64::max)
}

/// The bound on |P_ij| / 2^(2 beta) for every element: |P| <= 2^beta (2^beta nu_i + k/2) (the
/// entries of A' sum to at most 2^beta nu_i + k/2 in magnitude, those of B' are at most 2^beta),
/// and the same with mu_j: min(max nu, max mu) + k 2^-(beta+1) (`tops`: the min of the two
/// [`top_norm`]s).
pub fn product_bound(tops: f64, beta: u32, k: usize) -> f64 {
    tops + k as f64 * (-(beta as f64) - 1.0).exp2()
}

/// The moduli for entries of `beta` bits: M > 2 |P| for every element, P within
/// 2^(2 beta) `bound` ([`product_bound`]), with a spare bit.
pub fn crt_for(beta: u32, bound: f64) -> Option<&'static Crt> {
    crt_for_bits(2.0 * beta as f64 + 2.0 + bound.max(1e-300).log2().max(0.0))
}

/// A set of vectors in device memory: vector v's entry l at `ptr + (v * sv + l * sl) * 8`.
#[derive(Clone, Copy, Debug)]
pub struct Vecs {
    pub ptr: u64,
    pub count: usize,
    pub sv: i64,
    pub sl: i64,
}

impl Vecs {
    /// The rows of op(A) (m x k) stored in `a`.
    pub fn rows(a: DMat, t: Trans, m: usize) -> Vecs {
        let (sv, sl) = if t == Trans::No { (1, a.ld) } else { (a.ld, 1) };
        Vecs { ptr: a.ptr, count: m, sv, sl }
    }
    /// The columns of op(B) (k x n) stored in `b`.
    pub fn cols(b: DMat, t: Trans, n: usize) -> Vecs {
        let (sv, sl) = if t == Trans::No { (b.ld, 1) } else { (1, b.ld) };
        Vecs { ptr: b.ptr, count: n, sv, sl }
    }
    /// Vectors `from..from + count`.
    fn sub(self, from: usize, count: usize) -> Vecs {
        Vecs { ptr: self.ptr + (from as i64 * self.sv * 8) as u64, count, ..self }
    }
}

/// What the scans found, per vector (host copies).
#[derive(Clone, Debug, Default)]
pub struct Scan {
    /// max |x_l| < 2^e (0 for a zero vector).
    pub e: Vec<i32>,
    /// An upper bound on sum |x_l| 2^-e.
    pub nu: Vec<f64>,
    /// An Inf or NaN in the vector.
    pub bad: Vec<bool>,
}

/// The sample the caller picks the bits from: element (i[s], j[s]) of C, its plain FP64
/// value z[s] = alpha * dot + beta * c.
#[derive(Clone, Debug, Default)]
pub struct Sample {
    pub i: Vec<usize>,
    pub j: Vec<usize>,
    pub z: Vec<f64>,
}

/// One element the device could not certify, for the host: its row of op(A), its column of
/// op(B) (k entries each), and C's value before the call (0 where beta == 0).
pub struct Item<'a> {
    pub i: usize,
    pub j: usize,
    pub row: &'a [f64],
    pub col: &'a [f64],
    pub old: f64,
}

/// What the call did.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    pub beta: u32,
    pub moduli: usize,
    /// Blocks of C's columns (the int32 outputs' memory budget).
    pub blocks: usize,
    /// Elements written by the host (not certified, or IEEE).
    pub listed: usize,
    /// Seconds per phase: scan + sample, residues + GEMMs + certification, host fallback.
    pub phases: [f64; 3],
    /// `HYBLAS_OZAKI_PROFILE=1`: seconds per step, the stream waited for after each (slower;
    /// for finding where the time goes).
    pub steps: Vec<(&'static str, f64)>,
}

/// Per-step timing when profiling (`HYBLAS_OZAKI_PROFILE`): the stream is waited for at each
/// mark, so a step's time is its kernels' own.
struct Steps<'a> {
    on: bool,
    ex: &'a Exec<'a>,
    last: std::time::Instant,
    list: Vec<(&'static str, f64)>,
}

impl Steps<'_> {
    fn mark(&mut self, what: &'static str) {
        if !self.on {
            return;
        }
        let _ = self.ex.rt.sync(self.ex.stream);
        let now = std::time::Instant::now();
        let dt = (now - self.last).as_secs_f64();
        match self.list.iter_mut().find(|(w, _)| *w == what) {
            Some(x) => x.1 += dt,
            None => self.list.push((what, dt)),
        }
        self.last = now;
    }
}

/// The call's arguments (column-major, device memory).
#[derive(Clone, Copy, Debug)]
pub struct Call {
    pub ta: Trans,
    pub tb: Trans,
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub alpha: f64,
    pub a: DMat,
    pub b: DMat,
    pub beta: f64,
    pub c: DMat,
}

const THREADS: u32 = 256;

fn blocks(n: usize, per: usize) -> u32 {
    n.div_ceil(per).max(1) as u32
}

fn h2d<T: Copy>(ex: &Exec, dev: u64, data: &[T]) -> Result<()> {
    if data.is_empty() {
        return Ok(());
    }
    let bytes = std::mem::size_of_val(data);
    check(
        unsafe { sys::cuMemcpyHtoDAsync_v2(dev, data.as_ptr() as *const c_void, bytes, ex.stream) },
        "cuMemcpyHtoDAsync",
    )?;
    // Pageable memory: the copy is staged before the call returns, but wait all the same so
    // that `data` may be dropped.
    ex.rt.sync(ex.stream)
}

fn d2h<T: Copy + Default>(ex: &Exec, dev: u64, len: usize) -> Result<Vec<T>> {
    let mut v = vec![T::default(); len];
    if len > 0 {
        let bytes = len * std::mem::size_of::<T>();
        check(
            unsafe { sys::cuMemcpyDtoHAsync_v2(v.as_mut_ptr() as *mut c_void, dev, bytes, ex.stream) },
            "cuMemcpyDtoHAsync",
        )?;
    }
    ex.rt.sync(ex.stream)?;
    Ok(v)
}

/// ZGEMM's operands as the real matrices of `plan::accurate::zgemm`'s real view, in fresh
/// device buffers: op(A) (m x k complex) as the 2m x 2k matrix with rows [Re a, -Im a] and
/// [Im a, Re a] (ld 2m), op(B) (k x n) as the 2k x n matrix with columns [Re b; Im b] (ld 2k).
/// The real accurate product of the two, with real alpha and beta, on C's real view (2m x n,
/// ld 2 ldc), is the accurate ZGEMM. Enqueued on the stream (the buffers must outlive it).
pub fn zexpand(
    ex: &Exec,
    (ta, tb): (Trans, Trans),
    (m, n, k): (usize, usize, usize),
    a: DMat,
    b: DMat,
) -> Result<(super::DeviceBuffer, super::DeviceBuffer)> {
    let (fa, fb) =
        (ex.function::<f64>(Family::Ozaki, "oz_zexpand_a")?, ex.function::<f64>(Family::Ozaki, "oz_zexpand_b")?);
    ex.rt.bind()?;
    let xa = super::DeviceBuffer::new(4 * m * k * 8)?;
    let xb = super::DeviceBuffer::new(2 * k * n * 8)?;
    // Grid-stride loops: at most 2^16 blocks.
    let grid = |total: usize| Launch {
        grid: (blocks(total, THREADS as usize).min(1 << 16), 1, 1),
        block: (THREADS, 1, 1),
        smem: 0,
    };
    let mut x = Args::new();
    x.arg(m as i64).arg(k as i64).arg(a.ptr).arg(a.ld).arg(trans_code(ta)).arg(xa.ptr);
    fa.launch(grid(4 * m * k), ex.stream, &mut x)?;
    let mut x = Args::new();
    x.arg(k as i64).arg(n as i64).arg(b.ptr).arg(b.ld).arg(trans_code(tb)).arg(xb.ptr);
    fb.launch(grid(2 * k * n), ex.stream, &mut x)?;
    Ok((xa, xb))
}

/// Copy `len` doubles from device memory (waits).
pub fn download(ex: &Exec, ptr: u64, len: usize) -> Result<Vec<f64>> {
    d2h(ex, ptr, len)
}

/// Copy `data` to device memory (waits).
pub fn upload(ex: &Exec, ptr: u64, data: &[f64]) -> Result<()> {
    h2d(ex, ptr, data)
}

fn memset0(ex: &Exec, dev: u64, bytes: usize) -> Result<()> {
    check(unsafe { sys::cuMemsetD8Async(dev, 0, bytes, ex.stream) }, "cuMemsetD8Async")
}

/// The kernels, looked up before anything runs (a unit still compiling answers `NotReady`
/// here, with nothing enqueued).
struct Kernels {
    amax: Function,
    amax_c: Function,
    sum_c: Function,
    finish_max: Function,
    sum: Function,
    finish_sum: Function,
    sample: Function,
    residues: Function,
    crt: Function,
    gather: Function,
    gather_c: Function,
    scatter: Function,
}

impl Kernels {
    fn new(ex: &Exec) -> Result<Kernels> {
        let f = |name| ex.function::<f64>(Family::Ozaki, name);
        Ok(Kernels {
            amax: f("oz_amax")?,
            amax_c: f("oz_amax_c")?,
            sum_c: f("oz_sum_c")?,
            finish_max: f("oz_finish_max")?,
            sum: f("oz_sum")?,
            finish_sum: f("oz_finish_sum")?,
            sample: f("oz_sample")?,
            residues: f("oz_residues")?,
            crt: f("oz_crt")?,
            gather: f("oz_gather")?,
            gather_c: f("oz_gather_c")?,
            scatter: f("oz_scatter")?,
        })
    }
}

/// A bump allocator over one workspace: regions aligned to 256 bytes.
struct Carve {
    base: u64,
    used: usize,
}

impl Carve {
    fn take(&mut self, bytes: usize) -> u64 {
        let at = self.base + self.used as u64;
        self.used += bytes.div_ceil(256) * 256;
        at
    }
}

/// Device addresses of one vector set's per-vector results.
#[derive(Clone, Copy)]
struct VecInfo {
    e: u64,
    nu: u64,
    bad: u64,
    inexact: u64,
}

const CHUNK: usize = 256;

/// The per-vector scans of `v` into `info` (partials in `part`, chunks x count doubles). Entries
/// contiguous in memory (sl == 1) are read a warp per vector and chunk, else a thread per
/// vector (consecutive vectors then lie side by side).
fn scan_dev(ex: &Exec, kn: &Kernels, v: Vecs, k: usize, info: VecInfo, part: u64) -> Result<()> {
    let chunks = k.div_ceil(CHUNK).max(1);
    let count = v.count;
    let contiguous = v.sl == 1;
    let per_block = if contiguous { THREADS as usize / 32 } else { THREADS as usize };
    let grid2 = Launch { grid: (blocks(count, per_block), chunks as u32, 1), block: (THREADS, 1, 1), smem: 0 };
    let grid1 = Launch { grid: (blocks(count, THREADS as usize), 1, 1), block: (THREADS, 1, 1), smem: 0 };
    let (cn, kk) = (count as i64, k as i64);
    let mut a = Args::new();
    if contiguous {
        a.arg(cn).arg(kk).arg(v.ptr).arg(v.sv).arg(part);
        kn.amax_c.launch(grid2, ex.stream, &mut a)?;
    } else {
        a.arg(cn).arg(kk).arg(v.ptr).arg(v.sv).arg(v.sl).arg(part);
        kn.amax.launch(grid2, ex.stream, &mut a)?;
    }
    let mut a = Args::new();
    a.arg(cn).arg(chunks as i64).arg(part).arg(info.e).arg(info.bad);
    kn.finish_max.launch(grid1, ex.stream, &mut a)?;
    let mut a = Args::new();
    if contiguous {
        a.arg(cn).arg(kk).arg(v.ptr).arg(v.sv).arg(info.e).arg(part);
        kn.sum_c.launch(grid2, ex.stream, &mut a)?;
    } else {
        a.arg(cn).arg(kk).arg(v.ptr).arg(v.sv).arg(v.sl).arg(info.e).arg(part);
        kn.sum.launch(grid2, ex.stream, &mut a)?;
    }
    let mut a = Args::new();
    a.arg(cn).arg(chunks as i64).arg(kk).arg(part).arg(info.nu);
    kn.finish_sum.launch(grid1, ex.stream, &mut a)
}

fn download_scan(ex: &Exec, info: VecInfo, count: usize) -> Result<Scan> {
    let e: Vec<i32> = d2h(ex, info.e, count)?;
    let nu: Vec<f64> = d2h(ex, info.nu, count)?;
    let bad: Vec<i32> = d2h(ex, info.bad, count)?;
    Ok(Scan { e, nu, bad: bad.into_iter().map(|b| b != 0).collect() })
}

/// Elements of the planner's sample (spread over C: columns evenly, rows by a multiplicative
/// hash, as the CPU path's sample).
pub const SAMPLES: usize = 4096;

/// The GPU scheme's settings (docs/configuration.md), read once.
struct Settings {
    /// `HYBLAS_OZAKI_GPU_MB` (24 GiB), in bytes.
    gpu_bytes: usize,
    /// `HYBLAS_OZAKI_PROFILE`.
    profile: bool,
    /// `HYBLAS_OZAKI_GEMM_BATCHED`: one strided batched GEMM over the moduli.
    gemm_batched: bool,
}

static SETTINGS: Lazy<Settings> = Lazy::new(|| Settings {
    gpu_bytes: crate::config::threshold("HYBLAS_OZAKI_GPU_MB", 24 << 10) << 20,
    profile: crate::config::threshold("HYBLAS_OZAKI_PROFILE", 0) != 0,
    gemm_batched: crate::config::threshold("HYBLAS_OZAKI_GEMM_BATCHED", 0) != 0,
});

/// Bytes of device memory the residues and int32 outputs may take (`HYBLAS_OZAKI_GPU_MB`,
/// default 24 GiB, and at most half the free memory): C's columns are processed in blocks that
/// fit, of at least [`MIN_BLOCK`] columns.
fn budget(ex: &Exec) -> usize {
    let cap = SETTINGS.gpu_bytes;
    let (mut free, mut total) = (0usize, 0usize);
    let _ = ex.rt.bind();
    if unsafe { sys::cuMemGetInfo_v2(&mut free, &mut total) } == sys::CUresult::CUDA_SUCCESS {
        cap.min(free / 2)
    } else {
        cap
    }
}

/// The narrowest block of C's columns (see `budget`).
const MIN_BLOCK: usize = 1024;

/// Most listed elements kept in the list (beyond it, the status bytes are read instead).
const LIST_CAP: usize = 1 << 20;

/// `C := alpha*op(A)*op(B) + beta*C` on device memory, every element faithful (`nearest`:
/// correctly rounded). `choose` picks the bits per entry from the scans and the sample (at most
/// [`max_beta`]); `host` computes the listed elements (exactly, or by IEEE arithmetic where
/// their row, column or C holds an Inf or NaN) and returns their values in order. Needs
/// 1 <= k <= [`MAX_K`], alpha and beta finite, alpha != 0 (the caller handles the rest).
pub fn dgemm(
    ex: &Exec,
    call: Call,
    nearest: bool,
    choose: impl FnOnce(&Scan, &Scan, &Sample) -> u32,
    host: impl FnOnce(&Scan, &Scan, &[Item]) -> Vec<f64>,
) -> Result<Stats> {
    // Once the reconstruction has written certified elements into C, a failure leaves C
    // incomplete: the error says so (GpuError::Partial) instead of passing for "untouched".
    let wrote = std::cell::Cell::new(false);
    dgemm_into_c(ex, call, nearest, choose, host, &wrote).map_err(|e| {
        if wrote.get() {
            GpuError::Partial(Box::new(e))
        } else {
            e
        }
    })
}

fn dgemm_into_c(
    ex: &Exec,
    call: Call,
    nearest: bool,
    choose: impl FnOnce(&Scan, &Scan, &Sample) -> u32,
    host: impl FnOnce(&Scan, &Scan, &[Item]) -> Vec<f64>,
    wrote: &std::cell::Cell<bool>,
) -> Result<Stats> {
    let Call { ta, tb, m, n, k, alpha, a, b, beta, c } = call;
    if k == 0 || k > MAX_K || m == 0 || n == 0 || alpha == 0.0 || !alpha.is_finite() || !beta.is_finite() {
        return Err(GpuError::Unsupported("accurate DGEMM on the GPU: k in 1..=131056, alpha != 0, finite scalars"));
    }
    if m > u32::MAX as usize || n > u32::MAX as usize {
        return Err(GpuError::Unsupported("accurate DGEMM on the GPU: m, n below 2^32"));
    }
    if !super::vendor::present() {
        return Err(GpuError::Unavailable("no real cuBLAS for the int8 GEMMs".into()));
    }
    let kn = Kernels::new(ex)?;
    let t0 = std::time::Instant::now();
    let mut steps = Steps { on: SETTINGS.profile, ex, last: t0, list: Vec::new() };
    let mut stats = Stats::default();
    let (va, vb) = (Vecs::rows(a, ta, m), Vecs::cols(b, tb, n));
    let kpad = k.div_ceil(16) * 16;
    let samples = (m * n).min(SAMPLES);
    let chunks = k.div_ceil(CHUNK).max(1);
    let maxn = CRTS.len();

    // The small per-call buffers (vector results, partials, the sample, the tables, the list)
    // in a buffer of their own: the workspace below is sized once the moduli are known.
    let small = |x: usize| x.div_ceil(256) * 256;
    let info_bytes = |count: usize| small(count * 4) * 3 + small(count * 8);
    let bytes = info_bytes(m)
        + info_bytes(n)
        + small(chunks * m.max(n) * 8)
        + small(samples * 8) * 3
        + small(maxn * 16)
        + small(CRTS.last().map_or(0, |c| c.table.len()) * 4)
        + small(LIST_CAP * 8)
        + 256;
    // (The stream's grow-only workspace: the small region first; the large one is added once
    // the moduli are known, and if that reallocates, the scans' results are uploaded again.)
    let scratch = ex.rt.scratch(ex.stream);
    let mut scratch = scratch.lock();
    let base = scratch.workspace(bytes)?;
    let mut cv = Carve { base, used: 0 };
    let info = |cv: &mut Carve, count: usize| VecInfo {
        e: cv.take(count * 4),
        nu: cv.take(count * 8),
        bad: cv.take(count * 4),
        inexact: cv.take(count * 4),
    };
    let (ia, ib) = (info(&mut cv, m), info(&mut cv, n));
    let part = cv.take(chunks * m.max(n) * 8);
    let list = cv.take(LIST_CAP * 8);
    let count = cv.take(8);

    // 1. The scans.
    steps.mark("setup");
    scan_dev(ex, &kn, va, k, ia, part)?;
    let sa = download_scan(ex, ia, m)?;
    scan_dev(ex, &kn, vb, k, ib, part)?;
    let sb = download_scan(ex, ib, n)?;
    steps.mark("scan");

    // 2. The sample.
    let mut smp = Sample::default();
    for t in 0..samples {
        smp.j.push(t * n / samples);
        smp.i.push(((t as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 33) as usize % m);
    }
    let (dis, djs, dz) = (cv.take(samples * 8), cv.take(samples * 8), cv.take(samples * 8));
    let is: Vec<i64> = smp.i.iter().map(|&x| x as i64).collect();
    let js: Vec<i64> = smp.j.iter().map(|&x| x as i64).collect();
    h2d(ex, dis, &is)?;
    h2d(ex, djs, &js)?;
    {
        let warps = THREADS as usize / 32;
        let l = Launch { grid: (blocks(samples, warps), 1, 1), block: (THREADS, 1, 1), smem: 0 };
        let mut x = Args::new();
        x.arg(samples as i64).arg(k as i64).arg(va.ptr).arg(va.sv).arg(va.sl).arg(vb.ptr).arg(vb.sv).arg(vb.sl);
        x.arg(alpha).arg(beta).arg(c.ptr).arg(c.ld).arg(dis).arg(djs).arg(dz);
        kn.sample.launch(l, ex.stream, &mut x)?;
    }
    smp.z = d2h(ex, dz, samples)?;
    steps.mark("sample");
    let beta_bits = choose(&sa, &sb, &smp).min(max_beta(k)).max(1);
    let crt = crt_for(beta_bits, product_bound(top_norm(&sa).min(top_norm(&sb)), beta_bits, k))
        .ok_or(GpuError::Unsupported("accurate DGEMM: more bits than the moduli hold"))?;
    stats.beta = beta_bits;
    stats.moduli = crt.n;
    let nmod = crt.n;
    let (dmods, dtable) = (cv.take(maxn * 16), cv.take(crt.table.len() * 4));
    h2d(ex, dmods, &crt.mods)?;
    h2d(ex, dtable, &crt.table)?;
    stats.phases[0] = t0.elapsed().as_secs_f64();

    // 3. Residues, int8 GEMMs, reconstruction and certificates, by blocks of C's columns
    // whose int32 outputs (moduli x m x nb x 4 bytes) fit the budget.
    let per_col = nmod * (m * 4 + kpad) + m;
    // (At least MIN_BLOCK columns: narrow blocks run every GEMM at a fraction of its rate; a
    // first measurement at n = 16384 with 47 moduli and one-column blocks took 9.5x native.)
    let nb = (budget(ex).saturating_sub(nmod * m * kpad) / per_col).max(MIN_BLOCK).clamp(1, n.min(65535));
    let work = small(nmod * m * kpad) + small(nmod * nb * kpad) + small(nmod * m * nb * 4) + small(m * n);
    let small_used = cv.used;
    let new_base = scratch.workspace(small_used + work)?;
    let (mut ia, mut ib) = (ia, ib);
    let (mut dmods, mut dtable, mut list, mut count) = (dmods, dtable, list, count);
    if new_base != base {
        // Reallocated: the small region moved with its contents lost.
        let mv = |x: u64| x - base + new_base;
        for info in [&mut ia, &mut ib] {
            *info = VecInfo { e: mv(info.e), nu: mv(info.nu), bad: mv(info.bad), inexact: mv(info.inexact) };
        }
        (dmods, dtable, list, count) = (mv(dmods), mv(dtable), mv(list), mv(count));
        for (info, sc) in [(ia, &sa), (ib, &sb)] {
            h2d(ex, info.e, &sc.e)?;
            h2d(ex, info.nu, &sc.nu)?;
            h2d(ex, info.bad, &sc.bad.iter().map(|&b| b as i32).collect::<Vec<_>>())?;
        }
        h2d(ex, dmods, &crt.mods)?;
        h2d(ex, dtable, &crt.table)?;
    }
    let mut wv = Carve { base: new_base, used: small_used };
    let res_a = wv.take(nmod * m * kpad);
    let res_b = wv.take(nmod * nb * kpad);
    let cint = wv.take(nmod * m * nb * 4);
    let status = wv.take(m * n);
    memset0(ex, ia.inexact, m * 4)?;
    memset0(ex, ib.inexact, n * 4)?;
    memset0(ex, count, 8)?;
    let residues = |v: Vecs, info: VecInfo, out: u64| -> Result<()> {
        let l = Launch { grid: (blocks(kpad, 32), blocks(v.count, 32), 1), block: (32, 8, 1), smem: 0 };
        let mut x = Args::new();
        x.arg(v.count as i64).arg(k as i64).arg(kpad as i64).arg(v.ptr).arg(v.sv).arg(v.sl);
        x.arg(info.e).arg(info.bad).arg(beta_bits as i32).arg(nmod as i32).arg(dmods).arg(out);
        x.arg((v.count * kpad) as i64).arg(info.inexact);
        kn.residues.launch(l, ex.stream, &mut x)
    };
    steps.mark("tables");
    residues(va, ia, res_a)?;
    // One int8 GEMM per modulus: measured faster than one strided batched call over the moduli
    // on an H200 (n = 8192, 26 moduli: 19.5 against 24.3 ms, 25: 18.8 against 22.6 ms);
    // `HYBLAS_OZAKI_GEMM_BATCHED=1` takes the batched call.
    let looped = !SETTINGS.gemm_batched;
    steps.mark("residues");
    let mut j0 = 0;
    while j0 < n {
        let w = nb.min(n - j0);
        let off = |x: u64, bytes: usize| x + (j0 * bytes) as u64;
        let ib_blk = VecInfo { e: off(ib.e, 4), nu: off(ib.nu, 8), bad: off(ib.bad, 4), inexact: off(ib.inexact, 4) };
        residues(vb.sub(j0, w), ib_blk, res_b)?;
        steps.mark("residues");
        if looped {
            for t in 0..nmod {
                super::vendor_calls::vendor_gemm_i8_tn(
                    ex,
                    (m, w, kpad),
                    (res_a + (t * m * kpad) as u64, 0),
                    (res_b + (t * w * kpad) as u64, 0),
                    (cint + (t * m * w * 4) as u64, m, 0),
                    1,
                )?;
            }
        } else {
            super::vendor_calls::vendor_gemm_i8_tn(
                ex,
                (m, w, kpad),
                (res_a, (m * kpad) as i64),
                (res_b, (w * kpad) as i64),
                (cint, m, (m * w) as i64),
                nmod,
            )?;
        }
        steps.mark("int8 gemms");
        let l = Launch { grid: (blocks(m, THREADS as usize), w as u32, 1), block: (THREADS, 1, 1), smem: 0 };
        let mut x = Args::new();
        x.arg(m as i64).arg(w as i64).arg(j0 as i64).arg(k as i64).arg(cint).arg((m * w) as i64);
        x.arg(nmod as i32).arg(crt.limbs as i32).arg(dtable).arg(dmods).arg(crt.mhat);
        x.arg(ia.e).arg(ia.nu).arg(ia.bad).arg(ia.inexact).arg(ib.e).arg(ib.nu).arg(ib.bad).arg(ib.inexact);
        x.arg(beta_bits as i32).arg(alpha).arg(beta).arg(c.ptr).arg(c.ld).arg(nearest as i32);
        x.arg(status + (j0 * m) as u64).arg(list).arg(LIST_CAP as i64).arg(count);
        wrote.set(true);
        kn.crt.launch(l, ex.stream, &mut x)?;
        steps.mark("reconstruct");
        stats.blocks += 1;
        j0 += w;
    }
    let listed = d2h::<u64>(ex, count, 1)?[0] as usize;
    stats.phases[1] = t0.elapsed().as_secs_f64() - stats.phases[0];
    stats.listed = listed;
    if listed == 0 {
        stats.steps = steps.list;
        return Ok(stats);
    }

    // 4. The listed elements on the host.
    let entries: Vec<u64> = if listed <= LIST_CAP {
        d2h(ex, list, listed)?
    } else {
        let st: Vec<u8> = d2h(ex, status, m * n)?;
        st.iter().enumerate().filter(|(_, &s)| s != 0).map(|(x, _)| (x % m) as u64 | (((x / m) as u64) << 32)).collect()
    };
    let mut rows: Vec<usize> = entries.iter().map(|&e| (e & 0xffff_ffff) as usize).collect();
    let mut cols: Vec<usize> = entries.iter().map(|&e| (e >> 32) as usize).collect();
    rows.sort_unstable();
    rows.dedup();
    cols.sort_unstable();
    cols.dedup();
    let gather = |v: Vecs, idx: &[usize]| -> Result<Vec<f64>> {
        let di = super::DeviceBuffer::from_slice(&idx.iter().map(|&x| x as i64).collect::<Vec<_>>())?;
        let out = super::DeviceBuffer::new(idx.len() * k * 8)?;
        let l = Launch { grid: (blocks(k, THREADS as usize), idx.len() as u32, 1), block: (THREADS, 1, 1), smem: 0 };
        let mut x = Args::new();
        x.arg(idx.len() as i64).arg(k as i64).arg(v.ptr).arg(v.sv).arg(v.sl).arg(di.ptr).arg(out.ptr);
        kn.gather.launch(l, ex.stream, &mut x)?;
        d2h(ex, out.ptr, idx.len() * k)
    };
    // (Gathered in pieces of at most 65535 vectors: the grid's y dimension.)
    let gather_all = |v: Vecs, idx: &[usize]| -> Result<Vec<f64>> {
        let mut out = Vec::with_capacity(idx.len() * k);
        for piece in idx.chunks(65535) {
            out.extend(gather(v, piece)?);
        }
        Ok(out)
    };
    let row_data = gather_all(va, &rows)?;
    let col_data = gather_all(vb, &cols)?;
    let dlist = super::DeviceBuffer::from_slice(&entries)?;
    let vals_dev = super::DeviceBuffer::new(listed * 8)?;
    let olds: Vec<f64> = if beta == 0.0 {
        vec![0.0; listed]
    } else {
        let l = Launch { grid: (blocks(listed, THREADS as usize), 1, 1), block: (THREADS, 1, 1), smem: 0 };
        let mut x = Args::new();
        x.arg(listed as i64).arg(dlist.ptr).arg(c.ptr).arg(c.ld).arg(vals_dev.ptr);
        kn.gather_c.launch(l, ex.stream, &mut x)?;
        d2h(ex, vals_dev.ptr, listed)?
    };
    let items: Vec<Item> = entries
        .iter()
        .zip(&olds)
        .map(|(&e, &old)| {
            let (i, j) = ((e & 0xffff_ffff) as usize, (e >> 32) as usize);
            let (ri, ci) = (rows.binary_search(&i).unwrap_or(0), cols.binary_search(&j).unwrap_or(0));
            Item { i, j, row: &row_data[ri * k..(ri + 1) * k], col: &col_data[ci * k..(ci + 1) * k], old }
        })
        .collect();
    steps.mark("host gather");
    let vals = host(&sa, &sb, &items);
    steps.mark("host exact");
    debug_assert_eq!(vals.len(), listed);
    vals_dev.write(&vals[..listed.min(vals.len())])?;
    let l = Launch { grid: (blocks(listed, THREADS as usize), 1, 1), block: (THREADS, 1, 1), smem: 0 };
    let mut x = Args::new();
    x.arg(listed.min(vals.len()) as i64).arg(dlist.ptr).arg(vals_dev.ptr).arg(c.ptr).arg(c.ld);
    kn.scatter.launch(l, ex.stream, &mut x)?;
    ex.rt.sync(ex.stream)?;
    stats.phases[2] = t0.elapsed().as_secs_f64() - stats.phases[0] - stats.phases[1];
    steps.mark("host scatter");
    stats.steps = steps.list;
    Ok(stats)
}
