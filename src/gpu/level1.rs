//! Level 1 on the GPU: host sides of `kernels/level1.cu`.
//!
//! Each routine is one generic body over the four precisions: quick returns decided on the
//! host where the scalars are host values, the block shape from the tuner, then the launch.
//!
//! - Elementwise routines (AXPY, SCAL, COPY, SWAP) run one 16-byte unit per thread on
//!   contiguous 16-byte-aligned vectors (the `_v` kernels), else one element per thread.
//! - Reductions (DOT, NRM2, ASUM, I?AMAX) cut the vector into chunks whose length depends on
//!   n only ([`chunk_len`]); one warp reduces one chunk in a fixed pattern, a second kernel
//!   combines the chunk partials (through the stream workspace) in a fixed tree. The block
//!   shape (warps per block) only says which warps share a block, so results are bitwise the
//!   same for every shape, and the same on the aligned and the strided paths
//!   (`kernels/level1.cu` has the details).

use super::driver::{check, sys};
use super::kernels::{Args, Family, Launch};
use super::timing::Timer;
use super::tune::{self, KernelSpec, TuneCase};
use super::{cdiv, elem, DVec, DeviceBuffer, Exec, GpuError, In, Out, Result, Runtime};
use crate::types::Scalar;
use std::any::TypeId;
use std::sync::Arc;

/// Block widths of the elementwise kernels (1-D blocks).
const ELEM_TX: &[u32] = &[64, 96, 128, 192, 256, 384, 512, 768, 1024];

/// Elementwise kernels: 1-D blocks, one 16-byte unit (or one element) per thread. AXPY's spec
/// (its recipe key is `?axpy`); the others below differ in name only.
pub static ELEMWISE: KernelSpec = KernelSpec { name: "axpy", tx: ELEM_TX, ty: &[1], smem: tune::no_smem };
pub static SCAL: KernelSpec = KernelSpec { name: "scal", tx: ELEM_TX, ty: &[1], smem: tune::no_smem };
pub static COPY: KernelSpec = KernelSpec { name: "copy", tx: ELEM_TX, ty: &[1], smem: tune::no_smem };
pub static SWAP: KernelSpec = KernelSpec { name: "swap", tx: ELEM_TX, ty: &[1], smem: tune::no_smem };

/// Warps per block of the reduction kernels (blocks are 32 x Ty: one warp per chunk).
const WARPS: &[u32] = &[1, 2, 4, 8, 16, 32];

/// Chunk kernels of the reductions. Recipe keys `sdot` (also `?dotu`/`?dotc`), `snrm2`,
/// `sasum` and `samax` (i?amax).
pub static DOT: KernelSpec = KernelSpec { name: "dot", tx: &[32], ty: WARPS, smem: tune::no_smem };
pub static NRM2: KernelSpec = KernelSpec { name: "nrm2", tx: &[32], ty: WARPS, smem: tune::no_smem };
pub static ASUM: KernelSpec = KernelSpec { name: "asum", tx: &[32], ty: WARPS, smem: tune::no_smem };
pub static AMAX: KernelSpec = KernelSpec { name: "amax", tx: &[32], ty: WARPS, smem: tune::no_smem };

/// The single-block kernel that combines the chunk partials (any shape gives the same bits).
pub static FIN: KernelSpec = KernelSpec { name: "l1_fin", tx: &[128, 256, 512, 1024], ty: &[1], smem: tune::no_smem };

/// Elements per thread on the contiguous path (one 16-byte access).
fn per_thread<T>() -> u64 {
    16 / std::mem::size_of::<T>() as u64
}

/// Contiguous and 16-byte aligned: the `_v` kernels apply.
fn vectorizable<T>(v: &[DVec]) -> bool {
    v.iter().all(|d| d.inc == 1 && d.ptr % 16 == 0) && std::mem::size_of::<T>() <= 16
}

/// The two-vector tail of the elementwise kernels' parameters: `x, y` for the `_v` variant,
/// `x, incx, y, incy` for the strided one.
fn push_xy(args: &mut Args, vec: bool, x: DVec, y: DVec) {
    args.arg(x.ptr);
    if vec {
        args.arg(y.ptr);
    } else {
        args.arg(x.inc).arg(y.ptr).arg(y.inc);
    }
}

/// Launch the elementwise kernel `P<kernel>` over n elements (`vec`: the `_v` variant, one
/// 16-byte unit per thread) with `args` already pushed.
fn launch_elementwise<T: Scalar>(
    ex: &Exec,
    spec: &'static KernelSpec,
    kernel: &'static str,
    n: i64,
    vec: bool,
    args: &mut Args,
) -> Result<()> {
    let units = if vec { (n as u64).div_ceil(per_thread::<T>()) } else { n as u64 };
    let f = ex.function_sfx::<T>(Family::Level1, kernel, if vec { "_v" } else { "" })?;
    let (tx, _) = tune::choose(ex.rt, &f, spec, T::PREFIX, elem::<T>(), tune::size_class(units), |tx, _| {
        units.div_ceil(tx as u64)
    });
    let l = Launch { grid: (units.div_ceil(tx as u64) as u32, 1, 1), block: (tx, 1, 1), smem: 0 };
    f.launch(l, ex.stream, args)
}

/// y := alpha*x + y.
pub fn axpy<T: Scalar>(ex: &Exec, n: i64, alpha: In<T>, x: DVec, y: DVec) -> Result<()> {
    if n <= 0 || alpha.host().is_some_and(|a| a == T::zero()) {
        return Ok(());
    }
    if y.inc == 0 && n > 1 {
        // Every element would update y[0]: a sequential sum the elementwise kernel cannot do.
        return Err(super::GpuError::Unsupported("axpy with incy = 0"));
    }
    let (a, ap) = alpha.parts();
    let vec = vectorizable::<T>(&[x, y]);
    let mut args = Args::new();
    args.arg(n).arg(a).arg(ap);
    push_xy(&mut args, vec, x, y);
    launch_elementwise::<T>(ex, &ELEMWISE, "axpy", n, vec, &mut args)
}

/// x := alpha*x. `A` is `T` or, for `csscal`/`zdscal`, `T::Real`. Nothing happens for n <= 0,
/// incx <= 0 or alpha == 1 (the reference's quick returns; a device alpha of 1 is checked in
/// the kernel). Products are formed as the reference forms them (no FMA), so the results
/// match the CPU engine bit for bit; alpha == 0 multiplies (NaN stays NaN).
pub fn scal<T: Scalar, A: Scalar>(ex: &Exec, n: i64, alpha: In<A>, x: DVec) -> Result<()> {
    let real_alpha = TypeId::of::<A>() != TypeId::of::<T>();
    if real_alpha && TypeId::of::<A>() != TypeId::of::<T::Real>() {
        return Err(GpuError::Unsupported("scal: alpha must be of the vector's type or its real type"));
    }
    if n <= 0 || x.inc <= 0 || alpha.host().is_some_and(|a| a == A::one()) {
        return Ok(());
    }
    let (a, ap) = alpha.parts();
    let vec = vectorizable::<T>(&[x]);
    // csscal / zdscal: kernels `csscal`, `zdscal` (T's prefix, then alpha's).
    let base = match (real_alpha, A::PREFIX) {
        (false, _) => "scal",
        (true, 's') => "sscal",
        (true, _) => "dscal",
    };
    let mut args = Args::new();
    args.arg(n).arg(a).arg(ap).arg(x.ptr);
    if !vec {
        args.arg(x.inc);
    }
    launch_elementwise::<T>(ex, &SCAL, base, n, vec, &mut args)
}

/// y := x. Any increments; with incy == 0 only the last element is copied (what the
/// reference's loop leaves in y(1)).
pub fn copy<T: Scalar>(ex: &Exec, n: i64, x: DVec, y: DVec) -> Result<()> {
    if n <= 0 {
        return Ok(());
    }
    let (n, x) = if y.inc == 0 {
        // Logical element n-1 of x: at the far end for inc >= 0, at the address given else.
        let last = if x.inc >= 0 { (n - 1) * x.inc } else { 0 };
        (1, DVec { ptr: x.ptr.wrapping_add(last as u64 * elem::<T>() as u64), inc: 1 })
    } else {
        (n, x)
    };
    let vec = vectorizable::<T>(&[x, y]);
    let mut args = Args::new();
    args.arg(n);
    push_xy(&mut args, vec, x, y);
    launch_elementwise::<T>(ex, &COPY, "copy", n, vec, &mut args)
}

/// x <-> y. A zero increment (the reference's sequential loop then shifts values through the
/// one element) is left to the caller's fallback.
pub fn swap<T: Scalar>(ex: &Exec, n: i64, x: DVec, y: DVec) -> Result<()> {
    if n <= 0 {
        return Ok(());
    }
    if x.inc == 0 || y.inc == 0 {
        return Err(GpuError::Unsupported("swap with a zero increment"));
    }
    let vec = vectorizable::<T>(&[x, y]);
    let mut args = Args::new();
    args.arg(n);
    push_xy(&mut args, vec, x, y);
    launch_elementwise::<T>(ex, &SWAP, "swap", n, vec, &mut args)
}

// ---- Reductions ----

/// Most chunks a reduction is cut into: bounds the partials the second kernel combines (at
/// most 8 per slot of its 1024, read in one burst), and still gives a full H100/H200 of
/// warps at large n. `HYBLAS_L1_MAX_CHUNKS` overrides it (it fixes the summation order).
pub static MAX_CHUNKS: once_cell::sync::Lazy<i64> =
    once_cell::sync::Lazy::new(|| crate::config::threshold("HYBLAS_L1_MAX_CHUNKS", 8192).max(1) as i64);

/// Bytes reserved per chunk partial in the workspace (the largest is three doubles, the
/// d/z NRM2 sums of squares).
const PART_BYTES: usize = 32;

/// Chunk length (elements) of a reduction over n elements of T: a multiple of 32 lanes x 8
/// units x V elements (V = 16 / size of T), at least that, and with at most [`MAX_CHUNKS`]
/// chunks. A function of n and T only, so the summation order is too.
pub fn chunk_len<T>(n: i64) -> i64 {
    let q = 32 * 8 * per_thread::<T>() as i64;
    q.max(cdiv(cdiv(n.max(1), *MAX_CHUNKS), q) * q)
}

/// Where a scalar result goes, and its size in bytes.
#[derive(Clone, Copy)]
enum Dest {
    Dev(u64, usize),
    Host(*mut u8, usize),
}

fn dest<R>(out: Out<R>) -> Dest {
    match out {
        Out::Host(p) => Dest::Host(p as *mut u8, std::mem::size_of::<R>()),
        Out::Dev(a) => Dest::Dev(a, std::mem::size_of::<R>()),
    }
}

/// The destination of an index and whether it is 64-bit.
fn index_dest(out: IndexOut) -> (Dest, bool) {
    match out {
        IndexOut::Host32(p) => (Dest::Host(p as *mut u8, 4), false),
        IndexOut::Host64(p) => (Dest::Host(p as *mut u8, 8), true),
        IndexOut::Dev32(a) => (Dest::Dev(a, 4), false),
        IndexOut::Dev64(a) => (Dest::Dev(a, 8), true),
    }
}

/// A zero result (0, 0.0 or (0, 0): all bits zero) without a kernel: host memory at once,
/// device memory by an asynchronous memset on the stream.
fn write_zero(ex: &Exec, d: Dest) -> Result<()> {
    match d {
        Dest::Host(p, bytes) => {
            // SAFETY: the caller's result pointer, valid for a result of this type.
            unsafe { std::ptr::write_bytes(p, 0, bytes) };
            Ok(())
        }
        Dest::Dev(a, bytes) => check(unsafe { sys::cuMemsetD8Async(a, 0, bytes, ex.stream) }, "cuMemsetD8Async"),
    }
}

/// Warps per block of a reduction launched with shape (tx, ty): blocks are 32 x warps.
fn warps(tx: u32, ty: u32) -> u32 {
    ((tx * ty) / 32).max(1)
}

/// Run the reduction `P<name>_part[_v]` (+ `P<name>_fin` when there is more than one chunk)
/// over n >= 1 elements of x (and y), the result to `d`. Host results wait for the stream.
#[allow(clippy::too_many_arguments)]
fn reduce<T: Scalar>(
    ex: &Exec,
    spec: &'static KernelSpec,
    name: &'static str,
    n: i64,
    x: DVec,
    y: Option<DVec>,
    d: Dest,
    out64: bool,
) -> Result<()> {
    let yv = y.unwrap_or(x);
    let vec = if y.is_some() { vectorizable::<T>(&[x, yv]) } else { vectorizable::<T>(&[x]) };
    let l = chunk_len::<T>(n);
    let chunks = cdiv(n, l);
    let part_fn = ex.function_sfx::<T>(Family::Level1, name, if vec { "_part_v" } else { "_part" })?;
    let (tx, ty) =
        tune::choose(ex.rt, &part_fn, spec, T::PREFIX, elem::<T>(), tune::size_class(chunks as u64), |tx, ty| {
            (chunks as u64).div_ceil(warps(tx, ty) as u64)
        });
    // Never more threads than the kernel can launch with (a forced shape may ask for more;
    // the shape does not change the result).
    let w = warps(tx, ty).min(part_fn.max_threads / 32).max(1);

    // The workspace and the pinned buffer stay ours until the result is read (host results)
    // or the kernels are enqueued (later users of the stream run after them).
    let scratch = ex.rt.scratch(ex.stream);
    let mut s = scratch.lock();
    let (out, host) = match d {
        Dest::Dev(a, _) => (a, std::ptr::null_mut()),
        Dest::Host(..) => {
            // Pinned memory is mapped into the device's address space (unified addressing):
            // the kernel writes the result there directly.
            let (hp, dp) = s.pinned(16)?;
            (dp, hp)
        }
    };
    let part = if chunks > 1 { s.workspace(chunks as usize * PART_BYTES)? } else { 0 };
    let mut args = Args::new();
    args.arg(n).arg(l).arg(x.ptr).arg(x.inc).arg(yv.ptr).arg(yv.inc).arg(part).arg(out).arg(out64 as i32);
    let grid = (chunks as u64).div_ceil(w as u64) as u32;
    part_fn.launch(Launch { grid: (grid, 1, 1), block: (32, w, 1), smem: 0 }, ex.stream, &mut args)?;
    if chunks > 1 {
        let fin = ex.function_sfx::<T>(Family::Level1, name, "_fin")?;
        let (ftx, fty) = tune::choose(ex.rt, &fin, &FIN, T::PREFIX, elem::<T>(), 0, |_, _| 1);
        // Whole warps (the kernel's shuffles need them), as many as the kernel can launch.
        let threads = 32 * warps(ftx, fty).min(fin.max_threads / 32).max(1);
        let mut args = Args::new();
        args.arg(chunks).arg(part).arg(out).arg(out64 as i32);
        let l = Launch { grid: (1, 1, 1), block: (threads, 1, 1), smem: 0 };
        fin.launch_dependent(l, ex.stream, &mut args, ex.rt.props.cc)?;
    }
    if let Dest::Host(p, bytes) = d {
        ex.rt.sync(ex.stream)?;
        // SAFETY: the pinned buffer holds the result (16 bytes reserved); p is the caller's.
        unsafe { std::ptr::copy_nonoverlapping(host, p, bytes) };
    }
    Ok(())
}

/// Result index of `i?amax` (1-based, 0 when n <= 0 or inc <= 0), as cuBLAS returns it:
/// 32-bit (`cublasIsamax_v2`) or 64-bit (`_v2_64`), in host or device memory.
#[derive(Clone, Copy, Debug)]
pub enum IndexOut {
    Host32(*mut i32),
    Host64(*mut i64),
    Dev32(u64),
    Dev64(u64),
}

/// sum x_i * y_i (conj: sum conj(x_i) * y_i); 0 for n <= 0. Any increments. Host results
/// wait for the stream; device results do not.
pub fn dot<T: Scalar>(ex: &Exec, n: i64, x: DVec, y: DVec, conj: bool, out: Out<T>) -> Result<()> {
    let d = dest(out);
    if n <= 0 {
        return write_zero(ex, d);
    }
    let name = if !T::IS_COMPLEX {
        "dot"
    } else if conj {
        "dotc"
    } else {
        "dotu"
    };
    reduce::<T>(ex, &DOT, name, n, x, Some(y), d, false)
}

/// Euclidean norm, without overflow or harmful underflow (single precision sums squares in
/// double; double uses Blue's scaled sums as the reference does); 0 for n <= 0 or incx <= 0
/// (as cuBLAS and pre-3.10 reference BLAS).
pub fn nrm2<T: Scalar>(ex: &Exec, n: i64, x: DVec, out: Out<T::Real>) -> Result<()> {
    let d = dest(out);
    if n <= 0 || x.inc <= 0 {
        return write_zero(ex, d);
    }
    reduce::<T>(ex, &NRM2, "nrm2", n, x, None, d, false)
}

/// sum |re x_i| + |im x_i|; 0 for n <= 0 or incx <= 0.
pub fn asum<T: Scalar>(ex: &Exec, n: i64, x: DVec, out: Out<T::Real>) -> Result<()> {
    let d = dest(out);
    if n <= 0 || x.inc <= 0 {
        return write_zero(ex, d);
    }
    reduce::<T>(ex, &ASUM, "asum", n, x, None, d, false)
}

/// First index (1-based) of the largest |re| + |im|; 0 for n <= 0 or incx <= 0. NaN as the
/// CPU engine treats it: a NaN at element 1 gives 1, NaN elsewhere is never chosen.
pub fn iamax<T: Scalar>(ex: &Exec, n: i64, x: DVec, out: IndexOut) -> Result<()> {
    let (d, out64) = index_dest(out);
    if n <= 0 || x.inc <= 0 {
        return write_zero(ex, d);
    }
    reduce::<T>(ex, &AMAX, "amax", n, x, None, d, out64)
}

// ---- Offline tuning ----

/// Vectors the tuning cases share: 2^26 elements of the widest type (1 GiB each), filled with
/// 1.0f bit patterns (normal, mid-range values in every precision).
struct TuneBufs {
    x: DeviceBuffer,
    y: DeviceBuffer,
    out: DeviceBuffer,
}

const TUNE_N: i64 = 1 << 26;

/// The cases `hyblas tune` measures for this family: every kernel x precision at n = 2^26,
/// contiguous and aligned (the `_v` kernels), keys `saxpy`, `zscal`, `cdot`, `dnrm2`, ...
pub fn tune_cases(rt: &'static Runtime) -> Result<Vec<TuneCase>> {
    let bytes = TUNE_N as usize * 16;
    let bufs =
        Arc::new(TuneBufs { x: DeviceBuffer::new(bytes)?, y: DeviceBuffer::new(bytes)?, out: DeviceBuffer::new(16)? });
    for b in [&bufs.x, &bufs.y] {
        check(unsafe { sys::cuMemsetD32_v2(b.ptr, 0x3f80_0000, bytes / 4) }, "cuMemsetD32")?;
    }
    let mut v = Vec::new();
    cases_for::<f32>(rt, &bufs, &mut v)?;
    cases_for::<f64>(rt, &bufs, &mut v)?;
    cases_for::<crate::types::C32>(rt, &bufs, &mut v)?;
    cases_for::<crate::types::C64>(rt, &bufs, &mut v)?;
    Ok(v)
}

fn cases_for<T: Scalar>(rt: &'static Runtime, b: &Arc<TuneBufs>, v: &mut Vec<TuneCase>) -> Result<()> {
    let n = TUNE_N;
    let dot_part = if T::IS_COMPLEX { "dotc_part_v" } else { "dot_part_v" };
    v.push(case::<T>(rt, b, &ELEMWISE, "axpy_v", move |ex, x, y, _| axpy::<T>(ex, n, In::Host(T::one()), x, y))?);
    // alpha = -1: not a quick return, and x stays bounded over the repetitions.
    v.push(case::<T>(rt, b, &SCAL, "scal_v", move |ex, x, _, _| scal::<T, T>(ex, n, In::Host(-T::one()), x))?);
    v.push(case::<T>(rt, b, &COPY, "copy_v", move |ex, x, y, _| copy::<T>(ex, n, x, y))?);
    v.push(case::<T>(rt, b, &SWAP, "swap_v", move |ex, x, y, _| swap::<T>(ex, n, x, y))?);
    v.push(case::<T>(rt, b, &DOT, dot_part, move |ex, x, y, o| dot::<T>(ex, n, x, y, true, Out::Dev(o)))?);
    v.push(case::<T>(rt, b, &NRM2, "nrm2_part_v", move |ex, x, _, o| nrm2::<T>(ex, n, x, Out::Dev(o)))?);
    v.push(case::<T>(rt, b, &ASUM, "asum_part_v", move |ex, x, _, o| asum::<T>(ex, n, x, Out::Dev(o)))?);
    v.push(case::<T>(rt, b, &AMAX, "amax_part_v", move |ex, x, _, o| iamax::<T>(ex, n, x, IndexOut::Dev64(o)))?);
    Ok(())
}

/// One tuning case: `call(ex, x, y, out)` timed under the shape the tuner forces; results go
/// to device memory so no host wait enters the timing.
fn case<T: Scalar>(
    rt: &'static Runtime,
    bufs: &Arc<TuneBufs>,
    spec: &'static KernelSpec,
    kernel: &'static str,
    call: impl Fn(&Exec, DVec, DVec, u64) -> Result<()> + 'static,
) -> Result<TuneCase> {
    let ex = Exec::own(rt);
    let timer = Timer::new(ex.stream)?;
    let func = ex.function::<T>(Family::Level1, kernel)?;
    let b = bufs.clone();
    Ok(TuneCase {
        key: format!("{}{}", T::PREFIX, spec.name),
        spec,
        func,
        elem: elem::<T>(),
        run: Box::new(move || {
            let ex = Exec::own(rt);
            let (x, y) = (DVec { ptr: b.x.ptr, inc: 1 }, DVec { ptr: b.y.ptr, inc: 1 });
            timer.median(2, 10, &mut || call(&ex, x, y, b.out.ptr))
        }),
    })
}
