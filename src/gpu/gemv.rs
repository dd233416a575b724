//! GEMV (N, T, C) and GER (u, c) on the GPU: host sides of `kernels/gemv.cu`.
//!
//! The summation order of GEMV is fixed by (m, n, SM count) alone: GEMV-T cuts each column into
//! `S` row segments (`t_segments`); GEMV-N runs in one pass over whole rows where its blocks
//! fill one wave (`n_one_pass`), else cuts the columns into `KS` panels of 16 sub-panels
//! (`n_panels`); the kernel comments give the trees. The block shape, the grid size and the
//! alignment of the data (16-byte or element-wise kernels) only change who computes what, so
//! results are bitwise identical across them. With more than one segment or panel the
//! partials go through the stream workspace and a second kernel adds them in a fixed order.
//!
//! The GEMV kernels are persistent: the grid is at most one wave of the chosen shape, cut so
//! that every warp (T) or block (N) gets the same number of tasks; the tuner's grid occupancy
//! then measures how full that wave is.

use super::kernels::{Args, Family, Function, Launch};
use super::occupancy::occupancy;
use super::runtime::DeviceProps;
use super::tune::{self, KernelSpec, TuneCase};
use super::{cdiv, elem, DMat, DVec, DeviceBuffer, Exec, GpuError, In, Result, Runtime};
use crate::types::{Scalar, Trans};
use std::sync::Arc;

/// GEMV-N: Tx threads along rows, Ty (a power of two <= 16) sharing a column panel.
pub static GEMV_N: KernelSpec =
    KernelSpec { name: "gemv_n", tx: &[32, 64, 128, 256, 512], ty: &[1, 2, 4, 8, 16], smem: gemv_n_smem };
/// GEMV-T/C: one warp per task (Tx = 32), Ty warps per block.
pub static GEMV_T: KernelSpec =
    KernelSpec { name: "gemv_t", tx: &[32], ty: &[1, 2, 4, 8, 16, 32], smem: tune::no_smem };
/// GER: Tx threads along rows, Ty threads across columns.
pub static GER: KernelSpec =
    KernelSpec { name: "ger", tx: &[32, 64, 128, 256, 512, 1024], ty: &[1, 2, 4, 8, 16], smem: tune::no_smem };
/// The kernels that add the partials (and scale y when alpha == 0): warps of 32, Ty per block.
pub static GEMV_FIN: KernelSpec =
    KernelSpec { name: "gemv_fin", tx: &[32], ty: &[2, 4, 8, 16, 32], smem: tune::no_smem };

/// GEMV-N's shared memory: the Ty subtrees of every row (at most 16 bytes per thread).
fn gemv_n_smem(tx: u32, ty: u32, _elem: u32) -> u32 {
    if ty > 1 {
        16 * tx * ty
    } else {
        0
    }
}

/// 16-byte units of A in flight per lane in GEMV-T (`GEMV_T_UNROLL` in the kernel); segments
/// are whole multiples of 32 lanes times this many units.
const T_UNROLL: i64 = 4;
/// Warps GEMV-T wants per SM: (column, segment) tasks are cut to give at least this many.
/// `HYBLAS_GEMV_T_WARPS` overrides it (it fixes the summation order).
static T_WARPS_PER_SM: once_cell::sync::Lazy<i64> =
    once_cell::sync::Lazy::new(|| crate::config::threshold("HYBLAS_GEMV_T_WARPS", 32).max(1) as i64);
/// GEMV-T walks each task's trips from a rotated start (`stagger` in the kernel), so tasks
/// in flight read different column offsets (power-of-two lda). `HYBLAS_GEMV_T_STAGGER=0`
/// turns it off; it fixes the summation order.
static T_STAGGER: once_cell::sync::Lazy<bool> =
    once_cell::sync::Lazy::new(|| crate::config::threshold("HYBLAS_GEMV_T_STAGGER", 1) != 0);
/// Most segments per column of GEMV-T (the combining warp adds them lane-serially).
const T_MAX_SEGMENTS: i64 = 2048;
/// Columns GEMV-N's panels have at least (the partials stay a small fraction of the traffic).
const N_MIN_PANEL: i64 = 128;
/// (row unit, panel) pairs GEMV-N wants per SM (more panels: more parallelism, shorter
/// panels and more partials). `HYBLAS_GEMV_N_ITEMS` overrides it; it fixes the summation order.
static N_ITEMS_PER_SM: once_cell::sync::Lazy<i64> =
    once_cell::sync::Lazy::new(|| crate::config::threshold("HYBLAS_GEMV_N_ITEMS", 512).max(1) as i64);
/// Most panels of GEMV-N (the combining thread adds them serially).
const N_MAX_PANELS: i64 = 1024;
/// GER: columns per thread (`GER_COLS` in the kernel).
const GER_COLS: u64 = 4;

/// Elements per 16-byte unit.
fn per_unit<T>() -> i64 {
    (16 / std::mem::size_of::<T>()) as i64
}

/// GEMV-T's row segments (S, L): S segments of L rows per column. Enough (column, segment)
/// tasks for sm_count*32 warps (each keeps 32*16*T_UNROLL bytes of A in flight, so that many
/// cover the memory latency), segments of whole unrolled lane patterns. Depends on (m, n,
/// SM count) only: this is what fixes GEMV-T's summation order.
pub fn t_segments<T>(m: i64, n: i64, sm_count: u32) -> (i64, i64) {
    let m = m.max(1);
    let unit = 32 * per_unit::<T>() * T_UNROLL;
    let want = cdiv(sm_count as i64 * *T_WARPS_PER_SM, n.max(1));
    let s = want.min(T_MAX_SEGMENTS).min(cdiv(m, unit)).max(1);
    let l = cdiv(cdiv(m, s), unit) * unit;
    (cdiv(m, l).max(1), l)
}

/// GEMV-N's column panels (KS, Lq): KS panels of 16 sub-panels of Lq columns. Enough (row
/// unit, panel) pairs for two full waves of threads at Ty = 4, panels of at least
/// `N_MIN_PANEL` columns. Depends on (m, n, SM count) only: this fixes GEMV-N's order.
pub fn n_panels<T>(m: i64, n: i64, sm_count: u32) -> (i64, i64) {
    let n = n.max(1);
    let units = cdiv(m.max(1), per_unit::<T>());
    let want = cdiv(sm_count as i64 * *N_ITEMS_PER_SM, units);
    let ks = want.min(cdiv(n, N_MIN_PANEL)).clamp(1, N_MAX_PANELS);
    let lq = cdiv(cdiv(n, ks), 64) * 64 / 16;
    (cdiv(n, 16 * lq).max(1), lq)
}

/// The shape the kernel gets: the tuner's choice, or a shape forced by `tune::with_shape`
/// brought to the nearest one `spec` allows (GEMV-T needs Tx = 32, GEMV-N a power-of-two Ty)
/// and that the function can run (Ty lowered until the block fits on an SM).
fn fit(p: &DeviceProps, spec: &KernelSpec, f: &Function, es: u32, (tx, ty): (u32, u32)) -> (u32, u32) {
    let near = |v: u32, list: &[u32]| *list.iter().min_by_key(|&&c| (c as i64 - v as i64).abs()).unwrap();
    let tx = if spec.tx.contains(&tx) { tx } else { near(tx, spec.tx) };
    let mut ty = if spec.ty.contains(&ty) { ty } else { near(ty, spec.ty) };
    while tx * ty > f.max_threads.min(p.max_threads_per_block) || resident(p, f, spec, es, (tx, ty)) == 0 {
        match spec.ty.iter().filter(|&&c| c < ty).max() {
            Some(&c) => ty = c,
            None => break,
        }
    }
    (tx, ty)
}

/// Persistent grid: with `cap` workers resident, each takes ceil(tasks / cap) tasks, and the
/// fewest workers that then cover all tasks are launched. Measured against the alternatives on
/// an H200 (session 7, `scripts/gpu-ab.sh`): a full wave of min(tasks, cap) workers, every SM
/// equally loaded, was slower almost everywhere and up to 1.6x (SGEMV-N 6400: 47.6 -> 75.4 us,
/// ZGEMV-N 8192: 258 -> 337 us); sizing for 75% of cap won at SGEMV-N 8448 (77.4 -> 73.2) and
/// lost up to 12% elsewhere. Fewer concurrent column streams suit the memory system better.
fn persistent(tasks: u64, cap: u64) -> u64 {
    let per = tasks.div_ceil(cap.max(1));
    tasks.div_ceil(per.max(1))
}

/// Resident blocks of `f` on the whole device with this shape.
fn resident(p: &DeviceProps, f: &Function, spec: &KernelSpec, es: u32, (tx, ty): (u32, u32)) -> u64 {
    occupancy(p, f, tx * ty, (spec.smem)(tx, ty, es)).active_blocks_per_sm as u64 * p.sm_count as u64
}

fn class2(m: i64, n: i64) -> u64 {
    tune::size_class(m as u64) ^ tune::size_class(n as u64).rotate_left(29)
}

/// y := alpha*op(A)*x + beta*y, A m x n column-major; op = N, T or C.
#[allow(clippy::too_many_arguments)]
pub fn gemv<T: Scalar>(
    ex: &Exec,
    trans: Trans,
    m: i64,
    n: i64,
    alpha: In<T>,
    a: DMat,
    x: DVec,
    beta: In<T>,
    y: DVec,
) -> Result<()> {
    // The reference's quick returns: nothing at all when m or n is 0 (y is not even scaled),
    // nor for alpha == 0 with beta == 1.
    if m <= 0 || n <= 0 {
        return Ok(());
    }
    if a.ld < m {
        return Err(GpuError::Unsupported("gemv: lda < m"));
    }
    let alpha_zero = alpha.host().is_some_and(|v| v == T::zero());
    if alpha_zero && beta.host().is_some_and(|v| v == T::one()) {
        return Ok(());
    }
    let leny = if trans == Trans::No { m } else { n };
    if alpha_zero {
        // y := beta*y without reading A or x: the combining kernel with no partials.
        return fin(ex, "gemv_fin_n", leny, 0, alpha, beta, 0, y);
    }
    match trans {
        Trans::No => gemv_n::<T>(ex, m, n, alpha, a, x, beta, y),
        _ => gemv_t::<T>(ex, m, n, alpha, a, x, beta, y, trans == Trans::ConjTrans),
    }
}

/// Launch a combining kernel: `gemv_fin_n` (one thread per output, partials k*len + i) or
/// `gemv_fin_t` (one warp per output, partials i*parts + k).
#[allow(clippy::too_many_arguments)]
fn fin<T: Scalar>(
    ex: &Exec,
    name: &'static str,
    len: i64,
    parts: i64,
    alpha: In<T>,
    beta: In<T>,
    part: u64,
    y: DVec,
) -> Result<()> {
    let f = ex.function::<T>(Family::Gemv, name)?;
    let per_warp = if name == "gemv_fin_t" { 1 } else { 32 };
    let outputs = |ty: u32| (len as u64).div_ceil(per_warp).div_ceil(ty as u64);
    let shape =
        tune::choose(ex.rt, &f, &GEMV_FIN, T::PREFIX, elem::<T>(), tune::size_class(len as u64), |_, ty| outputs(ty));
    let (tx, ty) = fit(&ex.rt.props, &GEMV_FIN, &f, elem::<T>(), shape);
    // A few outputs per SM, each a latency-bound sum of partials.
    let ty = tune::spread_over_sms(ty, 2, ex.rt.props.sm_count, outputs);
    let blocks = outputs(ty);
    if blocks > i32::MAX as u64 {
        return Err(GpuError::Unsupported("gemv: too many outputs"));
    }
    let (al, alp) = alpha.parts();
    let (be, bep) = beta.parts();
    let mut args = Args::new();
    args.arg(len).arg(parts).arg(al).arg(alp).arg(be).arg(bep).arg(part).arg(y.ptr).arg(y.inc);
    // Programmatic dependent launch: the kernel waits for the pass before it (pdl_wait).
    let l = Launch { grid: (blocks as u32, 1, 1), block: (tx, ty, 1), smem: 0 };
    f.launch_dependent(l, ex.stream, &mut args, ex.rt.props.cc)
}

/// The arguments every GEMV kernel starts with: (m, n, alpha, alpha_p, beta, beta_p, a, lda, x,
/// incx, y, incy).
#[allow(clippy::too_many_arguments)]
fn gemv_args<T: Scalar>(m: i64, n: i64, alpha: In<T>, a: DMat, x: DVec, beta: In<T>, y: DVec) -> Args {
    let (al, alp) = alpha.parts();
    let (be, bep) = beta.parts();
    let mut args = Args::new();
    args.arg(m).arg(n).arg(al).arg(alp).arg(be).arg(bep).arg(a.ptr).arg(a.ld).arg(x.ptr).arg(x.inc);
    args.arg(y.ptr).arg(y.inc);
    args
}

/// GEMV-T/C: one warp per (column, segment) task.
#[allow(clippy::too_many_arguments)]
fn gemv_t<T: Scalar>(
    ex: &Exec,
    m: i64,
    n: i64,
    alpha: In<T>,
    a: DMat,
    x: DVec,
    beta: In<T>,
    y: DVec,
    conj: bool,
) -> Result<()> {
    let p = &ex.rt.props;
    let (s, l) = t_segments::<T>(m, n, p.sm_count);
    let vx = x.inc == 1 && x.ptr.is_multiple_of(16);
    let name = match (a.aligned16::<T>(), vx) {
        (true, true) => "gemv_t_vv",
        (true, false) => "gemv_t_vs",
        (false, true) => "gemv_t_sv",
        (false, false) => "gemv_t_ss",
    };
    let f = ex.function::<T>(Family::Gemv, name)?;
    let tasks = n as u64 * s as u64;
    let warps = |shape: (u32, u32)| persistent(tasks, resident(p, &f, &GEMV_T, elem::<T>(), shape) * shape.1 as u64);
    let shape = tune::choose(ex.rt, &f, &GEMV_T, T::PREFIX, elem::<T>(), class2(m, n), |tx, ty| {
        warps((tx, ty)).div_ceil(ty as u64)
    });
    let (tx, ty) = fit(p, &GEMV_T, &f, elem::<T>(), shape);
    let w = warps((tx, ty));
    let blocks = w.div_ceil(ty as u64);
    // Hold the scratch for the whole enqueue: the combining kernel reads what the first wrote.
    let scratch = ex.rt.scratch(ex.stream);
    let mut sc = scratch.lock();
    let part = if s > 1 { sc.workspace(tasks as usize * std::mem::size_of::<T>())? } else { 0 };
    let mut args = gemv_args(m, n, alpha, a, x, beta, y);
    args.arg(conj as i32).arg(s).arg(l).arg(w as i64).arg(part).arg(*T_STAGGER as i32);
    f.launch(Launch { grid: (blocks as u32, 1, 1), block: (tx, ty, 1), smem: 0 }, ex.stream, &mut args)?;
    if s > 1 {
        fin(ex, "gemv_fin_t", n, s, alpha, beta, part, y)?;
    }
    Ok(())
}

/// Threads of `gemv_n_rows` (`GEMV_ROWS_THREADS` in the kernel: a fixed shape, since its column
/// lanes are part of the summation order).
const ROWS_THREADS: u32 = 512;
/// Lanes per column of `gemv_n_rows` (the kernel's `LPC`): a block owns this many 16-byte units
/// of rows, and the 512 threads make 512 / LPC column lanes.
const ROWS_LPC: i64 = 8;
/// Complex double also has `gemv_n_rows16` (16 lanes per column: half the blocks, so twice the
/// rows still fit one wave). On an H200 it ran ZGEMV-N as fast as the 8-lane kernel, where s
/// and d lost 10-25% with 16 lanes (session 9, `lab/gemv_fullrow.cu`).
const ROWS_LPC_WIDE: i64 = 16;
/// GEMV-N runs in one pass (`gemv_n_rows`: whole rows per block, no partials) when its blocks
/// give every SM at least this many and fit in one wave (4 blocks of 512 threads per SM on
/// sm_90: the kernel's launch bounds hold it to 32 registers). Below, the panel kernel's
/// column split keeps the GPU busy; past one wave, a nearly empty second wave of whole-row
/// blocks costs more than the panels' combining pass (H200, session 9: DGEMV-N 8704, 544
/// blocks, 162.8 against 148.8 us; 8448, 528 blocks, 1.01x faster than the panels).
/// `HYBLAS_GEMV_N_ROWS_PER_SM` overrides the lower bound (a large value: never one pass). It
/// picks the summation order, from (m, the device's SM count and threads per SM) only.
static ROWS_PER_SM: once_cell::sync::Lazy<u64> =
    once_cell::sync::Lazy::new(|| crate::config::threshold("HYBLAS_GEMV_N_ROWS_PER_SM", 1) as u64);

/// The lanes per column GEMV-N of m rows runs with in one pass on this device (8, or 16 for
/// complex double past the 8-lane wave), or None for the panel kernel (see [`ROWS_PER_SM`]).
pub fn n_one_pass<T: Scalar>(m: i64, p: &DeviceProps) -> Option<i64> {
    let wave = p.sm_count as u64 * (p.max_threads_per_sm / ROWS_THREADS).max(1) as u64;
    let lanes: &[i64] = if T::PREFIX == 'z' { &[ROWS_LPC, ROWS_LPC_WIDE] } else { &[ROWS_LPC] };
    lanes.iter().copied().find(|&lpc| {
        let blocks = cdiv(m.max(1), lpc * per_unit::<T>()) as u64;
        blocks >= *ROWS_PER_SM * p.sm_count as u64 && blocks <= wave
    })
}

/// GEMV-N: one pass over whole rows when there are rows enough, else blocks of rows x column
/// panels and a combining pass.
#[allow(clippy::too_many_arguments)]
fn gemv_n<T: Scalar>(ex: &Exec, m: i64, n: i64, alpha: In<T>, a: DMat, x: DVec, beta: In<T>, y: DVec) -> Result<()> {
    match n_one_pass::<T>(m, &ex.rt.props) {
        Some(lpc) => gemv_n_rows::<T>(ex, lpc, m, n, alpha, a, x, beta, y),
        None => gemv_n_panels::<T>(ex, m, n, alpha, a, x, beta, y),
    }
}

/// GEMV-N in one pass with `lpc` lanes per column: block b owns rows [b*lpc*V, (b+1)*lpc*V)
/// and every column.
#[allow(clippy::too_many_arguments)]
fn gemv_n_rows<T: Scalar>(
    ex: &Exec,
    lpc: i64,
    m: i64,
    n: i64,
    alpha: In<T>,
    a: DMat,
    x: DVec,
    beta: In<T>,
    y: DVec,
) -> Result<()> {
    let name = match (lpc == ROWS_LPC_WIDE, a.aligned16::<T>()) {
        (false, true) => "gemv_n_rows_v",
        (false, false) => "gemv_n_rows",
        (true, true) => "gemv_n_rows16_v",
        (true, false) => "gemv_n_rows16",
    };
    let f = ex.function::<T>(Family::Gemv, name)?;
    // At most one wave (`n_one_pass`), so the grid fits its u32.
    let blocks = cdiv(m, lpc * per_unit::<T>());
    let mut args = gemv_args(m, n, alpha, a, x, beta, y);
    f.launch(Launch { grid: (blocks as u32, 1, 1), block: (ROWS_THREADS, 1, 1), smem: 0 }, ex.stream, &mut args)
}

/// GEMV-N: blocks of rows x column panels.
#[allow(clippy::too_many_arguments)]
fn gemv_n_panels<T: Scalar>(
    ex: &Exec,
    m: i64,
    n: i64,
    alpha: In<T>,
    a: DMat,
    x: DVec,
    beta: In<T>,
    y: DVec,
) -> Result<()> {
    let p = &ex.rt.props;
    let (ks, lq) = n_panels::<T>(m, n, p.sm_count);
    let va = a.aligned16::<T>();
    let f = ex.function::<T>(Family::Gemv, if va { "gemv_n_v" } else { "gemv_n" })?;
    let rows_per_thread = (if va { per_unit::<T>() } else { 1 }) as u64;
    let units = (m as u64).div_ceil(rows_per_thread);
    let rbs = |tx: u32| units.div_ceil(tx as u64);
    let blocks = |shape: (u32, u32)| persistent(rbs(shape.0) * ks as u64, resident(p, &f, &GEMV_N, elem::<T>(), shape));
    let shape = tune::choose(ex.rt, &f, &GEMV_N, T::PREFIX, elem::<T>(), class2(m, n), |tx, ty| blocks((tx, ty)));
    let (tx, ty) = fit(p, &GEMV_N, &f, elem::<T>(), shape);
    let scratch = ex.rt.scratch(ex.stream);
    let mut sc = scratch.lock();
    let part = if ks > 1 { sc.workspace(ks as usize * m as usize * std::mem::size_of::<T>())? } else { 0 };
    let mut args = gemv_args(m, n, alpha, a, x, beta, y);
    args.arg(ks).arg(lq).arg(rbs(tx) as i64).arg(part);
    let l =
        Launch { grid: (blocks((tx, ty)) as u32, 1, 1), block: (tx, ty, 1), smem: gemv_n_smem(tx, ty, elem::<T>()) };
    f.launch(l, ex.stream, &mut args)?;
    if ks > 1 {
        fin(ex, "gemv_fin_n", m, ks, alpha, beta, part, y)?;
    }
    Ok(())
}

/// A := alpha*x*y^T + A (conj: alpha*x*y^H + A), A m x n column-major.
#[allow(clippy::too_many_arguments)]
pub fn ger<T: Scalar>(ex: &Exec, m: i64, n: i64, alpha: In<T>, x: DVec, y: DVec, a: DMat, conj: bool) -> Result<()> {
    if m <= 0 || n <= 0 || alpha.host().is_some_and(|v| v == T::zero()) {
        return Ok(());
    }
    if a.ld < m {
        return Err(GpuError::Unsupported("ger: lda < m"));
    }
    let va = a.aligned16::<T>();
    let f = ex.function::<T>(Family::Gemv, if va { "ger_v" } else { "ger" })?;
    let rows_per_thread = (if va { per_unit::<T>() } else { 1 }) as u64;
    let units = (m as u64).div_ceil(rows_per_thread);
    let blocks = |tx: u32, ty: u32| units.div_ceil(tx as u64) * (n as u64).div_ceil(ty as u64 * GER_COLS);
    let shape = tune::choose(ex.rt, &f, &GER, T::PREFIX, elem::<T>(), class2(m, n), blocks);
    let (tx, ty) = fit(&ex.rt.props, &GER, &f, elem::<T>(), shape);
    let grid = blocks(tx, ty);
    if grid > i32::MAX as u64 {
        return Err(GpuError::Unsupported("ger: grid too large"));
    }
    let (al, alp) = alpha.parts();
    let mut args = Args::new();
    args.arg(m).arg(n).arg(al).arg(alp).arg(x.ptr).arg(x.inc).arg(y.ptr).arg(y.inc).arg(a.ptr).arg(a.ld);
    args.arg(conj as i32).arg(units.div_ceil(tx as u64) as i64);
    f.launch(Launch { grid: (grid as u32, 1, 1), block: (tx, ty, 1), smem: 0 }, ex.stream, &mut args)
}

// ---- Offline tuning ----

/// The cases `hyblas tune` measures: GEMV-N, GEMV-T and GER at m = n = 8192 for each
/// precision (keys `sgemv_n`, `sgemv_t`, `sger`, ...; GEMV-C shares GEMV-T's recipe).
pub fn tune_cases(rt: &'static Runtime) -> Result<Vec<TuneCase>> {
    let mut v = Vec::new();
    cases::<f32>(rt, &mut v)?;
    cases::<f64>(rt, &mut v)?;
    cases::<crate::types::C32>(rt, &mut v)?;
    cases::<crate::types::C64>(rt, &mut v)?;
    Ok(v)
}

fn cases<T: Scalar>(rt: &'static Runtime, out: &mut Vec<TuneCase>) -> Result<()> {
    const N: i64 = 8192;
    let es = std::mem::size_of::<T>();
    let filled = |elems: usize| -> Result<Arc<DeviceBuffer>> {
        let b = DeviceBuffer::new(elems * es)?;
        // Finite, non-zero words (1.0f): GER skips columns where y_j == 0.
        super::driver::check(
            unsafe { super::driver::sys::cuMemsetD32_v2(b.ptr, 0x3f80_0000, b.bytes / 4) },
            "cuMemsetD32",
        )?;
        Ok(Arc::new(b))
    };
    let a = filled(N as usize * N as usize)?;
    let x = filled(N as usize)?;
    let y = filled(N as usize)?;
    let kinds: [(&'static KernelSpec, &str, &'static str); 3] =
        [(&GEMV_N, "gemv_n", "gemv_n_v"), (&GEMV_T, "gemv_t", "gemv_t_vv"), (&GER, "ger", "ger_v")];
    for (spec, key, kernel) in kinds {
        let (a, x, y) = (a.clone(), x.clone(), y.clone());
        let timer = super::timing::Timer::new(Exec::own(rt).stream)?;
        let func = Exec::own(rt).function::<T>(Family::Gemv, kernel)?;
        let which = key;
        out.push(TuneCase {
            key: format!("{}{key}", T::PREFIX),
            spec,
            func,
            elem: elem::<T>(),
            run: Box::new(move || {
                let ex = Exec::own(rt);
                let am = DMat { ptr: a.ptr, ld: N };
                let (xv, yv) = (DVec { ptr: x.ptr, inc: 1 }, DVec { ptr: y.ptr, inc: 1 });
                let one = In::Host(T::one());
                timer.median(2, 10, &mut || match which {
                    // The panel kernel itself (at this size GEMV-N would run in one pass,
                    // whose shape is fixed).
                    "gemv_n" => gemv_n_panels::<T>(&ex, N, N, one, am, xv, In::Host(T::zero()), yv),
                    "gemv_t" => gemv::<T>(&ex, Trans::Trans, N, N, one, am, xv, In::Host(T::zero()), yv),
                    _ => ger::<T>(&ex, N, N, one, xv, yv, am, false),
                })
            }),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_cover_the_column_in_whole_lane_patterns() {
        for &(m, n) in &[(1, 1), (8192, 8192), (8192, 3), (3, 8192), (1 << 26, 1), (1000, 1000), (511, 4097)] {
            let (s, l) = t_segments::<f32>(m, n, 132);
            assert!((1..=T_MAX_SEGMENTS).contains(&s) && l % (32 * 4 * T_UNROLL) == 0, "{m}x{n}: {s} x {l}");
            assert!((s - 1) * l < m && s * l >= m, "{m}x{n}: {s} x {l}");
        }
        // The target case needs no second pass.
        assert_eq!(t_segments::<f32>(8192, 8192, 132).0, 1);
    }

    #[test]
    fn panels_cover_the_columns() {
        for &(m, n) in &[(1, 1), (8192, 8192), (8192, 3), (3, 8192), (1 << 26, 1), (1000, 1000), (511, 4097)] {
            let (ks, lq) = n_panels::<f64>(m, n, 132);
            assert!((1..=N_MAX_PANELS).contains(&ks) && lq % 4 == 0 && lq >= 4, "{m}x{n}: {ks} x {lq}");
            assert!((ks - 1) * 16 * lq < n && ks * 16 * lq >= n, "{m}x{n}: {ks} x {lq}");
        }
    }

    #[test]
    fn one_pass_from_a_block_of_rows_per_sm_to_one_wave() {
        use crate::types::C64;
        // H200: 132 SMs, 4 blocks of 512 threads each; blocks of 8 16-byte units of rows.
        let p = DeviceProps::h200();
        // s: 132..528 blocks of 32 rows.
        assert_eq!(n_one_pass::<f32>(4192, &p), None);
        assert_eq!(n_one_pass::<f32>(4193, &p), Some(8));
        assert_eq!(n_one_pass::<f32>(16896, &p), Some(8));
        assert_eq!(n_one_pass::<f32>(16897, &p), None);
        // d: 16 rows a block; DGEMV-N 8704 (544 blocks) takes the panels.
        assert_eq!(n_one_pass::<f64>(2096, &p), None);
        assert_eq!(n_one_pass::<f64>(2097, &p), Some(8));
        assert_eq!(n_one_pass::<f64>(8448, &p), Some(8));
        assert_eq!(n_one_pass::<f64>(8704, &p), None);
        // z: 8 rows a block up to one wave, then 16 rows a block up to its wave.
        assert_eq!(n_one_pass::<C64>(1048, &p), None);
        assert_eq!(n_one_pass::<C64>(1049, &p), Some(8));
        assert_eq!(n_one_pass::<C64>(4224, &p), Some(8));
        assert_eq!(n_one_pass::<C64>(4225, &p), Some(16));
        assert_eq!(n_one_pass::<C64>(8448, &p), Some(16));
        assert_eq!(n_one_pass::<C64>(8449, &p), None);
    }

    #[test]
    fn persistent_grids_balance() {
        assert_eq!(persistent(8192, 4224), 4096);
        assert_eq!(persistent(100, 4224), 100);
        assert_eq!(persistent(33001, 8448), 8251);
        assert_eq!(persistent(0, 10), 0);
    }
}
