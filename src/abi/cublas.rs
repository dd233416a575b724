//! The cuBLAS entry layer: a program that loads `libhyblas.so` in front of `libcublas.so`
//! (LD_PRELOAD, or link order) reaches hyblas's GPU kernels through cuBLAS's own API.
//!
//! Exported (unversioned, `_v2` with `int` sizes and `_v2_64` with `int64_t` sizes): axpy,
//! scal (+ csscal, zdscal), copy, swap, dot (dotu, dotc), nrm2, asum, amax (`i?amax`; the
//! `_64` form returns an `int64_t` index), gemv, ger (geru, gerc), trmv, gemm, in s/d/c/z;
//! `cublasGemmEx` / `cublasGemmEx_64` (hyblas for A, B, C all `CUDA_R_32F`, `CUDA_R_64F`,
//! `CUDA_C_32F` or `CUDA_C_64F` with the matching `CUBLAS_COMPUTE_32F`/`_64F` or its
//! `_PEDANTIC` twin; every other combination, the TF32/fast compute types included, is
//! forwarded); `cublas?gemmStridedBatched` and `cublas?gemmBatched` (+ `_64`): hyblas's
//! small-product kernel for small m*n and m*n*k (`plan::batch::kernel_decision`), else forwarded; plus thin
//! forwards of the handle functions (create, destroy, stream, pointer/atomics/math mode,
//! version).
//!
//! Handles stay the real cuBLAS's: every call that hyblas runs reads the stream and the pointer
//! mode from the handle through the real getters. The flow of one call:
//! 1. arguments are checked by cuBLAS's documented rules (enums arrive as plain `int`, so bad
//!    values are seen). A null handle or invalid arguments are never run by hyblas: the call
//!    goes to the real cuBLAS, so the status (and whatever cuBLAS does or does not write) is
//!    exactly the real one, version for version. (The documentation is not exact here:
//!    cuBLAS 13's `cublasSgemv_v2` returns SUCCESS for m < 0 even with a null handle, where
//!    the documentation says INVALID_VALUE.) With no cuBLAS at all, the documented status is
//!    returned: `CUBLAS_STATUS_NOT_INITIALIZED` for a null handle,
//!    `CUBLAS_STATUS_INVALID_VALUE` for bad arguments, nothing touched;
//! 2. the routing policy (`plan::gpu`) picks hyblas or the real cuBLAS; degenerate calls (empty
//!    problems, zero increments, null scalar or result pointers) always go to cuBLAS, whose
//!    own definition of them is then exact by construction;
//! 3. hyblas runs on the handle's stream with host or device scalars as the pointer mode says;
//!    any hyblas error (no runtime, unsupported case, compile failure, ...) forwards the call
//!    to the real function, so the export is never worse than cuBLAS.
//!
//! No real cuBLAS found (nothing to forward to, and no handle can exist) ->
//! `CUBLAS_STATUS_NOT_INITIALIZED` for valid calls. A panic never crosses into C: it becomes
//! `CUBLAS_STATUS_INTERNAL_ERROR`.
//!
//! Level 1/2 never use atomics, so their results do not depend on the handle's atomics mode;
//! split-k GEMM uses its atomic reduction only where the handle allows atomics (or
//! `HYBLAS_DETERMINISTIC=0`, see `plan::gpu::reduction`), and is bitwise reproducible otherwise.
//! The math mode is not read: hyblas's GEMM computes in full precision (what
//! `CUBLAS_DEFAULT_MATH` promises; TF32 math mode permits less, never requires it).
//!
//! GEMM routing: `plan::gemm::splitk_model` asks the split-k model (`gpu::splitk::predict`) per call;
//! k = 0 (C := beta*C) and empty outputs are degenerate (cuBLAS). `gpu::vendor_calls::vendor_gemm` is
//! the real cuBLAS GEMM on a handle of hyblas's own, for Fortran/CBLAS calls on device memory.

// Device addresses and handles arrive as raw pointers that are validated by cuBLAS's rules and
// then only passed on, which this lint cannot tell.
#![allow(clippy::not_unsafe_ptr_arg_deref)]

use crate::abi::boundary::guard;
use crate::gpu::batched::{At, BMat};
use crate::gpu::driver::{driver_present, sys};
use crate::gpu::level1::IndexOut;
pub use crate::gpu::vendor::*;
pub use crate::gpu::vendor_calls::{host_vendor, A16};
use crate::gpu::{self, DMat, DVec, Exec, GpuError, In, Out, Runtime};
use crate::plan::batch as batch_plan;
use crate::plan::gemm as gemm_plan;
use crate::plan::gpu::{self as policy, Decision, Outcome, Route};
use crate::types::{Diag, Scalar, Trans, Uplo, C32, C64};
use std::cell::RefCell;
use std::ffi::{c_int, c_void};

/// The size type of an entry point: `int` (`_v2`) or `int64_t` (`_v2_64`).
pub trait Int: Copy + Into<i64> + 'static {
    /// Where `i?amax` writes its index, in host or device memory.
    fn index_out(p: *mut Self, device: bool) -> IndexOut;
}
impl Int for i32 {
    fn index_out(p: *mut i32, device: bool) -> IndexOut {
        if device {
            IndexOut::Dev32(p as u64)
        } else {
            IndexOut::Host32(p)
        }
    }
}
impl Int for i64 {
    fn index_out(p: *mut i64, device: bool) -> IndexOut {
        if device {
            IndexOut::Dev64(p as u64)
        } else {
            IndexOut::Host64(p)
        }
    }
}

/// What a call reads from its handle (through the real getters).
#[derive(Clone, Copy, Debug)]
pub struct Ctx {
    pub stream: Stream,
    /// `CUBLAS_POINTER_MODE_DEVICE`: scalars and results are device addresses.
    pub device: bool,
    /// `CUBLAS_ATOMICS_ALLOWED` (hyblas never uses atomics; for the trace).
    pub atomics: bool,
}

impl Ctx {
    /// A scalar argument as the pointer mode says.
    ///
    /// # Safety
    /// In host mode `p` must be readable (callers route null pointers to cuBLAS first).
    unsafe fn input<T: Scalar>(&self, p: *const T) -> In<T> {
        if self.device {
            In::Dev(p as u64)
        } else {
            In::Host(p.read())
        }
    }
    /// A scalar result as the pointer mode says.
    fn output<T>(&self, p: *mut T) -> Out<T> {
        if self.device {
            Out::Dev(p as u64)
        } else {
            Out::Host(p)
        }
    }
}

static GET_STREAM: Sym = Sym::new("cublasGetStream_v2");
static GET_POINTER_MODE: Sym = Sym::new("cublasGetPointerMode_v2");
static GET_ATOMICS_MODE: Sym = Sym::new("cublasGetAtomicsMode");

/// Read the handle's stream, pointer mode and atomics mode through the real cuBLAS. None
/// when there is no cuBLAS or the handle is refused (the forwarded call then reports it).
unsafe fn context(h: Handle) -> Option<Ctx> {
    type GetStream = unsafe extern "C" fn(Handle, *mut Stream) -> Status;
    type GetMode = unsafe extern "C" fn(Handle, *mut c_int) -> Status;
    let get_stream: GetStream = GET_STREAM.get()?;
    let get_pointer_mode: GetMode = GET_POINTER_MODE.get()?;
    let get_atomics_mode: GetMode = GET_ATOMICS_MODE.get()?;
    let (mut stream, mut pm, mut am) = (std::ptr::null_mut(), CUBLAS_POINTER_MODE_HOST, CUBLAS_ATOMICS_NOT_ALLOWED);
    let ok = get_stream(h, &mut stream) == CUBLAS_STATUS_SUCCESS
        && get_pointer_mode(h, &mut pm) == CUBLAS_STATUS_SUCCESS
        && get_atomics_mode(h, &mut am) == CUBLAS_STATUS_SUCCESS;
    ok.then_some(Ctx { stream, device: pm == CUBLAS_POINTER_MODE_DEVICE, atomics: am == CUBLAS_ATOMICS_ALLOWED })
}

/// hyblas's runtime for the caller's device. The caller's current context must be that
/// device's primary context (the one the CUDA runtime and cuBLAS use): a context the program
/// created itself is left current and the call declined, since hyblas's kernels live in the
/// primary context.
unsafe fn runtime() -> gpu::Result<&'static Runtime> {
    if !driver_present() {
        return Err(GpuError::Unavailable("no NVIDIA driver (libcuda not found)".into()));
    }
    let mut before = std::ptr::null_mut();
    if sys::cuCtxGetCurrent(&mut before) != sys::CUresult::CUDA_SUCCESS {
        before = std::ptr::null_mut();
    }
    // Every call after the first: one driver call (the host's cost per call is what small
    // calls are timed by).
    if let Some(rt) = Runtime::bound_to(before) {
        return Ok(rt);
    }
    let rt = Runtime::current()?;
    let mut after = std::ptr::null_mut();
    if sys::cuCtxGetCurrent(&mut after) != sys::CUresult::CUDA_SUCCESS {
        after = std::ptr::null_mut();
    }
    if !before.is_null() && before != after {
        sys::cuCtxSetCurrent(before);
        return Err(GpuError::Unsupported("the current context is not the device's primary context"));
    }
    Ok(rt)
}

/// Call the real function, or report NOT_INITIALIZED where there is none.
unsafe fn forward<F: Copy>(sym: &Sym, call: impl FnOnce(F) -> Status) -> Status {
    match sym.get::<F>() {
        Some(f) => call(f),
        None => CUBLAS_STATUS_NOT_INITIALIZED,
    }
}

/// What the argument checks found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Check {
    /// A null handle or invalid arguments: cuBLAS's own answer (the documented status when
    /// there is no cuBLAS).
    Invalid(Status, &'static str),
    /// Valid but degenerate: left to cuBLAS (the text says why).
    Degenerate(&'static str),
    /// An ordinary call: the policy decides.
    Run,
}

impl Check {
    /// A null handle, else `invalid` (the documented INVALID_VALUE rules), else `degenerate`.
    fn of(h: Handle, invalid: bool, degenerate: Option<&'static str>) -> Check {
        if h.is_null() {
            Check::Invalid(CUBLAS_STATUS_NOT_INITIALIZED, "null handle")
        } else if invalid {
            Check::Invalid(CUBLAS_STATUS_INVALID_VALUE, "invalid arguments")
        } else {
            degenerate.map_or(Check::Run, Check::Degenerate)
        }
    }
}

/// One checked call: route it (the family's size model under `policy::decide`), then run
/// hyblas's kernel on the handle's stream or forward.
#[allow(clippy::too_many_arguments)]
unsafe fn dispatch(
    sym: &'static Sym,
    h: Handle,
    check: Check,
    shape: impl FnOnce() -> String,
    model: impl FnOnce() -> Decision,
    hyblas: impl FnOnce(&Exec<'_>, &Ctx) -> gpu::Result<()>,
    vendor: impl FnOnce() -> Status,
) -> Status {
    dispatch_with(sym, h, check, shape, |d| policy::decide(d, model), hyblas, vendor)
}

/// [`dispatch`] with the whole decision given (`decide` gets the degenerate/invalid reason).
#[allow(clippy::too_many_arguments)]
unsafe fn dispatch_with(
    sym: &'static Sym,
    h: Handle,
    check: Check,
    shape: impl FnOnce() -> String,
    decide: impl FnOnce(Option<&'static str>) -> Decision,
    hyblas: impl FnOnce(&Exec<'_>, &Ctx) -> gpu::Result<()>,
    vendor: impl FnOnce() -> Status,
) -> Status {
    let degenerate = match check {
        Check::Invalid(status, what) => {
            if sym.addr().is_none() {
                return status;
            }
            Some(what)
        }
        Check::Degenerate(what) => Some(what),
        Check::Run => None,
    };
    let d = decide(degenerate);
    if d.route == Route::Vendor {
        let s = vendor();
        policy::trace(sym.name, shape, &d, Outcome::Done);
        return s;
    }
    let Some(ctx) = context(h) else {
        let s = vendor();
        policy::trace(sym.name, shape, &d, Outcome::Declined(&"cannot read the handle's stream and modes"));
        return s;
    };
    let shape = || {
        let ptr = if ctx.device { "device" } else { "host" };
        let atomics = if ctx.atomics { " atomics=allowed" } else { "" };
        format!("{} ptr={ptr}{atomics} stream={:p}", shape(), ctx.stream)
    };
    // A kernel whose unit is not loaded yet answers NotReady before anything is launched (the
    // unit is compiled in the background): the real cuBLAS answers this call. A forced route
    // waits for the kernel.
    let run = || runtime().and_then(|rt| hyblas(&Exec { rt, stream: ctx.stream as sys::CUstream }, &ctx));
    let result = gpu::loader::routed(d.forced_hyblas(), run);
    match result {
        Ok(()) => {
            policy::trace(sym.name, shape, &d, Outcome::Done);
            CUBLAS_STATUS_SUCCESS
        }
        Err(e) => {
            let s = vendor();
            policy::trace(sym.name, shape, &d, Outcome::of_error(&e));
            s
        }
    }
}

fn dv<T>(p: *const T, inc: i64) -> DVec {
    DVec { ptr: p as u64, inc }
}

fn trans_of(t: c_int) -> Option<Trans> {
    match t {
        CUBLAS_OP_N => Some(Trans::No),
        CUBLAS_OP_T => Some(Trans::Trans),
        CUBLAS_OP_C => Some(Trans::ConjTrans),
        _ => None,
    }
}

/// An enum argument for the trace: its letter, or the number when it is not a valid value.
fn enum_name(v: c_int, letters: &[char]) -> String {
    usize::try_from(v).ok().and_then(|i| letters.get(i)).map_or_else(|| v.to_string(), |c| c.to_string())
}

// ---- Level 1 ----

/// Degenerate Level 1 calls: n <= 0, a zero increment, or (`single`: routines of one vector,
/// whose reference definitions return early on it) a negative increment.
fn l1_degenerate(n: i64, incs: &[i64], single: bool) -> Option<&'static str> {
    if n <= 0 {
        Some("n <= 0")
    } else if incs.contains(&0) {
        Some("zero increment")
    } else if single && incs.iter().any(|&i| i < 0) {
        Some("negative increment")
    } else {
        None
    }
}

fn null(p: *const impl Sized, what: &'static str) -> Option<&'static str> {
    p.is_null().then_some(what)
}

/// y := alpha*x + y.
#[allow(clippy::too_many_arguments)]
unsafe fn axpy<T: Scalar, I: Int>(
    s: &'static Sym,
    h: Handle,
    n: I,
    alpha: *const T,
    x: *const T,
    incx: I,
    y: *mut T,
    incy: I,
) -> Status {
    let (nn, ix, iy) = (n.into(), incx.into(), incy.into());
    dispatch(
        s,
        h,
        Check::of(h, false, l1_degenerate(nn, &[ix, iy], false).or(null(alpha, "null alpha"))),
        || format!("n={nn} incx={ix} incy={iy}"),
        || policy::level1(s.name, "axpy", nn),
        |ex, c| gpu::level1::axpy::<T>(ex, nn, c.input(alpha), dv(x, ix), dv(y, iy)),
        || forward(s, |f: AxpyFn<T, I>| f(h, n, alpha, x, incx, y, incy)),
    )
}

/// x := alpha*x (`A` = `T`, or the real type for csscal/zdscal).
unsafe fn scal<T: Scalar, A: Scalar, I: Int>(
    s: &'static Sym,
    h: Handle,
    n: I,
    alpha: *const A,
    x: *mut T,
    incx: I,
) -> Status {
    let (nn, ix) = (n.into(), incx.into());
    dispatch(
        s,
        h,
        Check::of(h, false, l1_degenerate(nn, &[ix], true).or(null(alpha, "null alpha"))),
        || format!("n={nn} incx={ix}"),
        || policy::level1(s.name, "scal", nn),
        |ex, c| gpu::level1::scal::<T, A>(ex, nn, c.input(alpha), dv(x, ix)),
        || forward(s, |f: ScalFn<T, A, I>| f(h, n, alpha, x, incx)),
    )
}

/// y := x.
unsafe fn copy<T: Scalar, I: Int>(
    s: &'static Sym,
    h: Handle,
    n: I,
    x: *const T,
    incx: I,
    y: *mut T,
    incy: I,
) -> Status {
    let (nn, ix, iy) = (n.into(), incx.into(), incy.into());
    dispatch(
        s,
        h,
        Check::of(h, false, l1_degenerate(nn, &[ix, iy], false)),
        || format!("n={nn} incx={ix} incy={iy}"),
        || policy::level1(s.name, "copy", nn),
        |ex, _| gpu::level1::copy::<T>(ex, nn, dv(x, ix), dv(y, iy)),
        || forward(s, |f: CopyFn<T, I>| f(h, n, x, incx, y, incy)),
    )
}

/// x <-> y.
unsafe fn swap<T: Scalar, I: Int>(s: &'static Sym, h: Handle, n: I, x: *mut T, incx: I, y: *mut T, incy: I) -> Status {
    let (nn, ix, iy) = (n.into(), incx.into(), incy.into());
    dispatch(
        s,
        h,
        Check::of(h, false, l1_degenerate(nn, &[ix, iy], false)),
        || format!("n={nn} incx={ix} incy={iy}"),
        || policy::level1(s.name, "swap", nn),
        |ex, _| gpu::level1::swap::<T>(ex, nn, dv(x, ix), dv(y, iy)),
        || forward(s, |f: SwapFn<T, I>| f(h, n, x, incx, y, incy)),
    )
}

/// result := sum x_i*y_i (`conj`: sum conj(x_i)*y_i).
#[allow(clippy::too_many_arguments)]
unsafe fn dot<T: Scalar, I: Int>(
    s: &'static Sym,
    h: Handle,
    n: I,
    x: *const T,
    incx: I,
    y: *const T,
    incy: I,
    result: *mut T,
    conj: bool,
) -> Status {
    let (nn, ix, iy) = (n.into(), incx.into(), incy.into());
    dispatch(
        s,
        h,
        Check::of(h, false, null(result, "null result").or(l1_degenerate(nn, &[ix, iy], false))),
        || format!("n={nn} incx={ix} incy={iy}"),
        || policy::level1(s.name, "dot", nn),
        |ex, c| gpu::level1::dot::<T>(ex, nn, dv(x, ix), dv(y, iy), conj, c.output(result)),
        || forward(s, |f: DotFn<T, I>| f(h, n, x, incx, y, incy, result)),
    )
}

/// The three one-vector reductions with a real result.
#[derive(Clone, Copy)]
enum Reduce {
    Nrm2,
    Asum,
}

/// result := ||x||_2 or sum |re x_i| + |im x_i|.
unsafe fn reduce<T: Scalar, I: Int>(
    s: &'static Sym,
    which: Reduce,
    h: Handle,
    n: I,
    x: *const T,
    incx: I,
    result: *mut T::Real,
) -> Status {
    let (nn, ix) = (n.into(), incx.into());
    let base = match which {
        Reduce::Nrm2 => "nrm2",
        Reduce::Asum => "asum",
    };
    dispatch(
        s,
        h,
        Check::of(h, false, null(result, "null result").or(l1_degenerate(nn, &[ix], true))),
        || format!("n={nn} incx={ix}"),
        || policy::level1(s.name, base, nn),
        |ex, c| match which {
            Reduce::Nrm2 => gpu::level1::nrm2::<T>(ex, nn, dv(x, ix), c.output(result)),
            Reduce::Asum => gpu::level1::asum::<T>(ex, nn, dv(x, ix), c.output(result)),
        },
        || forward(s, |f: ReduceFn<T, T::Real, I>| f(h, n, x, incx, result)),
    )
}

/// result := the first 1-based index of the largest |re x_i| + |im x_i|.
unsafe fn amax<T: Scalar, I: Int>(s: &'static Sym, h: Handle, n: I, x: *const T, incx: I, result: *mut I) -> Status {
    let (nn, ix) = (n.into(), incx.into());
    dispatch(
        s,
        h,
        Check::of(h, false, null(result, "null result").or(l1_degenerate(nn, &[ix], true))),
        || format!("n={nn} incx={ix}"),
        || policy::level1(s.name, "amax", nn),
        |ex, c| gpu::level1::iamax::<T>(ex, nn, dv(x, ix), I::index_out(result, c.device)),
        || forward(s, |f: ReduceFn<T, I, I>| f(h, n, x, incx, result)),
    )
}

// ---- Level 2 ----

/// y := alpha*op(A)*x + beta*y.
#[allow(clippy::too_many_arguments)]
unsafe fn gemv<T: Scalar, I: Int>(
    s: &'static Sym,
    h: Handle,
    trans: c_int,
    m: I,
    n: I,
    alpha: *const T,
    a: *const T,
    lda: I,
    x: *const T,
    incx: I,
    beta: *const T,
    y: *mut T,
    incy: I,
) -> Status {
    let (mm, nn, ld, ix, iy) = (m.into(), n.into(), lda.into(), incx.into(), incy.into());
    let op = trans_of(trans);
    let invalid = op.is_none() || mm < 0 || nn < 0 || ld < mm.max(1) || ix == 0 || iy == 0;
    let degenerate =
        if mm == 0 || nn == 0 { Some("empty matrix") } else { null(alpha, "null alpha").or(null(beta, "null beta")) };
    let op = op.unwrap_or(Trans::No);
    dispatch(
        s,
        h,
        Check::of(h, invalid, degenerate),
        || format!("trans={} m={mm} n={nn} lda={ld} incx={ix} incy={iy}", enum_name(trans, &['N', 'T', 'C'])),
        || policy::gemv(s.name, op, mm, nn),
        |ex, c| {
            let a = DMat { ptr: a as u64, ld };
            gpu::gemv::gemv::<T>(ex, op, mm, nn, c.input(alpha), a, dv(x, ix), c.input(beta), dv(y, iy))
        },
        || forward(s, |f: GemvFn<T, I>| f(h, trans, m, n, alpha, a, lda, x, incx, beta, y, incy)),
    )
}

/// A := alpha*x*y^T + A (`conj`: alpha*x*y^H + A).
#[allow(clippy::too_many_arguments)]
unsafe fn ger<T: Scalar, I: Int>(
    s: &'static Sym,
    h: Handle,
    m: I,
    n: I,
    alpha: *const T,
    x: *const T,
    incx: I,
    y: *const T,
    incy: I,
    a: *mut T,
    lda: I,
    conj: bool,
) -> Status {
    let (mm, nn, ld, ix, iy) = (m.into(), n.into(), lda.into(), incx.into(), incy.into());
    let invalid = mm < 0 || nn < 0 || ix == 0 || iy == 0 || ld < mm.max(1);
    let degenerate = if mm == 0 || nn == 0 { Some("empty matrix") } else { null(alpha, "null alpha") };
    dispatch(
        s,
        h,
        Check::of(h, invalid, degenerate),
        || format!("m={mm} n={nn} incx={ix} incy={iy} lda={ld}"),
        || policy::ger(s.name, mm, nn),
        |ex, c| gpu::gemv::ger::<T>(ex, mm, nn, c.input(alpha), dv(x, ix), dv(y, iy), DMat { ptr: a as u64, ld }, conj),
        || forward(s, |f: GerFn<T, I>| f(h, m, n, alpha, x, incx, y, incy, a, lda)),
    )
}

/// x := op(A)*x, A triangular.
#[allow(clippy::too_many_arguments)]
unsafe fn trmv<T: Scalar, I: Int>(
    s: &'static Sym,
    h: Handle,
    uplo: c_int,
    trans: c_int,
    diag: c_int,
    n: I,
    a: *const T,
    lda: I,
    x: *mut T,
    incx: I,
) -> Status {
    let (nn, ld, ix) = (n.into(), lda.into(), incx.into());
    let ul = match uplo {
        CUBLAS_FILL_MODE_LOWER => Some(Uplo::Lower),
        CUBLAS_FILL_MODE_UPPER => Some(Uplo::Upper),
        _ => None,
    };
    let dg = match diag {
        CUBLAS_DIAG_NON_UNIT => Some(Diag::NonUnit),
        CUBLAS_DIAG_UNIT => Some(Diag::Unit),
        _ => None,
    };
    let op = trans_of(trans);
    let invalid = ul.is_none() || op.is_none() || dg.is_none() || nn < 0 || ld < nn.max(1) || ix == 0;
    let (ul, op, dg) = (ul.unwrap_or(Uplo::Lower), op.unwrap_or(Trans::No), dg.unwrap_or(Diag::NonUnit));
    dispatch(
        s,
        h,
        Check::of(h, invalid, (nn == 0).then_some("n = 0")),
        || {
            let (u, t, d) =
                (enum_name(uplo, &['L', 'U']), enum_name(trans, &['N', 'T', 'C']), enum_name(diag, &['N', 'U']));
            format!("uplo={u} trans={t} diag={d} n={nn} lda={ld} incx={ix}")
        },
        || policy::trmv(s.name, nn),
        |ex, _| gpu::trmv::trmv::<T>(ex, ul, op, dg, nn, DMat { ptr: a as u64, ld }, dv(x, ix)),
        || forward(s, |f: TrmvFn<T, I>| f(h, uplo, trans, diag, n, a, lda, x, incx)),
    )
}

// ---- Level 3 ----

/// The documented INVALID_VALUE rules of GEMM: transa/transb not N, T or C, a negative size,
/// lda < max(1, rows of A as stored), ldb likewise, ldc < max(1, m), a null alpha or beta.
#[allow(clippy::too_many_arguments)]
fn gemm_invalid(
    ta: Option<Trans>,
    tb: Option<Trans>,
    m: i64,
    n: i64,
    k: i64,
    lda: i64,
    ldb: i64,
    ldc: i64,
    null_scalar: bool,
) -> bool {
    let rows_a = if ta == Some(Trans::No) { m } else { k };
    let rows_b = if tb == Some(Trans::No) { k } else { n };
    ta.is_none()
        || tb.is_none()
        || m < 0
        || n < 0
        || k < 0
        || lda < rows_a.max(1)
        || ldb < rows_b.max(1)
        || ldc < m.max(1)
        || null_scalar
}

/// Degenerate GEMM calls, left to cuBLAS: an empty output, or k = 0 (C := beta*C).
fn gemm_degenerate(m: i64, n: i64, k: i64) -> Option<&'static str> {
    if m == 0 || n == 0 {
        Some("empty output")
    } else if k == 0 {
        Some("k = 0")
    } else {
        None
    }
}

#[allow(clippy::too_many_arguments)]
fn gemm_shape(transa: c_int, transb: c_int, m: i64, n: i64, k: i64, lda: i64, ldb: i64, ldc: i64) -> String {
    let t = ['N', 'T', 'C'];
    format!(
        "transa={} transb={} m={m} n={n} k={k} lda={lda} ldb={ldb} ldc={ldc}",
        enum_name(transa, &t),
        enum_name(transb, &t)
    )
}

/// C := alpha*op(A)*op(B) + beta*C: split-k where the model (or a forced mode) says so, else
/// `vendor`. `unsupported`: why hyblas cannot run it at all (GemmEx types), forwarded as a
/// degenerate call is; `ex_types`: GemmEx's A, B, C, compute types and algo, for the trace.
#[allow(clippy::too_many_arguments)]
unsafe fn gemm<T: Scalar, I: Int>(
    s: &'static Sym,
    h: Handle,
    transa: c_int,
    transb: c_int,
    m: I,
    n: I,
    k: I,
    alpha: *const T,
    a: *const T,
    lda: I,
    b: *const T,
    ldb: I,
    beta: *const T,
    c: *mut T,
    ldc: I,
    unsupported: Option<&'static str>,
    ex_types: Option<[c_int; 5]>,
    vendor: impl FnOnce() -> Status,
) -> Status {
    let (mm, nn, kk) = (m.into(), n.into(), k.into());
    let (la, lb, lc) = (lda.into(), ldb.into(), ldc.into());
    let (ta, tb) = (trans_of(transa), trans_of(transb));
    let invalid = gemm_invalid(ta, tb, mm, nn, kk, la, lb, lc, alpha.is_null() || beta.is_null());
    let degenerate = gemm_degenerate(mm, nn, kk).or(unsupported);
    let (ta, tb) = (ta.unwrap_or(Trans::No), tb.unwrap_or(Trans::No));
    // The model's own account of its inputs, for the trace line (moved, not formatted, here).
    let why: RefCell<Option<String>> = RefCell::new(None);
    // The route decided (the run below takes Strassen or split-k by it).
    let route = std::cell::Cell::new(Route::Vendor);
    // DGEMM in accurate mode (HYBLAS_DGEMM_MODE, the thread's setting): the Ozaki scheme on the
    // device, whatever the models say (`plan::accurate::device_dgemm`).
    let accurate = match crate::plan::accurate::mode() {
        crate::plan::accurate::Mode::Accurate(r) if T::PREFIX == 'd' => Some(r),
        _ => None,
    };
    dispatch_with(
        s,
        h,
        Check::of(h, invalid, degenerate),
        || {
            let mut shape = gemm_shape(transa, transb, mm, nn, kk, la, lb, lc);
            if let Some([at, bt, ct, compute, algo]) = ex_types {
                shape.push_str(&format!(" types={at},{bt},{ct} compute={compute} algo={algo}"));
            }
            if let Some(w) = why.borrow().as_deref() {
                shape.push_str(" model: ");
                shape.push_str(w);
            }
            shape
        },
        |d| {
            if let (Some(r), None) = (accurate, d) {
                let name = if r == crate::plan::accurate::Rounding::Faithful { "faithful" } else { "nearest" };
                let d = Decision { route: Route::Hyblas, reason: policy::Reason::Accurate(name) };
                route.set(d.route);
                return d;
            }
            let d = gemm_plan::decide_device(d, || match runtime() {
                Ok(rt) => {
                    let mut w = None;
                    if gemm_plan::strassen_mode() != gemm_plan::Strassen::Off {
                        let compute = ex_types.map(|t| t[3]);
                        let blocked = strassen_blocked::<T>(h, compute);
                        // Host pointer mode (else `blocked` says so): the scalars are readable.
                        let (az, bz) = match blocked {
                            None => (alpha.read().is_zero(), beta.read().is_zero()),
                            Some(_) => (false, false),
                        };
                        if let Some(d) = gemm_plan::strassen_step::<T>(rt, mm, nn, kk, az, bz, blocked, &mut w) {
                            return d;
                        }
                    }
                    let (am, bm) = (DMat { ptr: a as u64, ld: la }, DMat { ptr: b as u64, ld: lb });
                    let vector = gpu::splitk::vector_loads::<T>(ta, tb, mm, nn, am, bm);
                    let (d, sk) = gemm_plan::splitk_model::<T>(rt, ta, tb, mm, nn, kk, vector);
                    *why.borrow_mut() = gemm_plan::join_why(w, sk);
                    d
                }
                Err(_) => gemm_plan::gemm_no_runtime(),
            });
            route.set(d.route);
            d
        },
        |ex, cx| {
            let (am, bm, cm) =
                (DMat { ptr: a as u64, ld: la }, DMat { ptr: b as u64, ld: lb }, DMat { ptr: c as u64, ld: lc });
            if let Some(r) = accurate {
                // T is f64 here (prefix 'd'). Device pointer mode: the scalars are read first.
                let scalar = |p: *const T| -> gpu::Result<f64> {
                    match cx.input(p) {
                        In::Host(v) => Ok(std::mem::transmute_copy(&v)),
                        In::Dev(d) => Ok(gpu::ozaki::download(ex, d, 1)?[0]),
                    }
                };
                let (al, be) = (scalar(alpha)?, scalar(beta)?);
                let dims = (mm as usize, nn as usize, kk as usize);
                crate::plan::accurate::device_dgemm(ex, r, ta, tb, dims, al, am, bm, be, cm)?;
                return Ok(());
            }
            if let Route::Strassen(levels) = route.get() {
                let (Some(al), Some(be)) = (cx.input(alpha).host(), cx.input(beta).host()) else {
                    return Err(GpuError::Unsupported("Strassen with device scalars"));
                };
                return gpu::strassen::run::<T>(ex, ta, tb, mm, nn, kk, al, am, bm, be, cm, levels);
            }
            let red = gemm_plan::reduction(cx.atomics);
            gpu::splitk::gemm::<T>(ex, ta, tb, mm, nn, kk, cx.input(alpha), am, bm, cx.input(beta), cm, red)
        },
        vendor,
    )
}

static GET_MATH_MODE: Sym = Sym::new("cublasGetMathMode");

/// Why the handle `h` keeps a GEMM of precision `T` from Strassen (`compute`: GemmEx's compute
/// type): device pointer mode (the schedule folds alpha and beta in on the host side), or, for
/// SGEMM, a math mode that lets cuBLAS use TF32 tensor cores (cuBLAS is then far faster than
/// any FP32 Strassen; `CUBLAS_COMPUTE_32F_PEDANTIC` rules TF32 out whatever the mode).
unsafe fn strassen_blocked<T: Scalar>(h: Handle, compute: Option<c_int>) -> Option<&'static str> {
    let Some(ctx) = context(h) else {
        return Some("the handle's modes cannot be read");
    };
    if ctx.device {
        return Some("device pointer mode");
    }
    if T::PREFIX == 's' && compute != Some(CUBLAS_COMPUTE_32F_PEDANTIC) {
        type GetMath = unsafe extern "C" fn(Handle, *mut c_int) -> Status;
        let mut mode = CUBLAS_DEFAULT_MATH;
        let ok = GET_MATH_MODE.get::<GetMath>().is_some_and(|f| f(h, &mut mode) == CUBLAS_STATUS_SUCCESS);
        if !ok {
            return Some("the handle's math mode cannot be read");
        }
        // CUBLAS_TENSOR_OP_MATH (1, deprecated) and CUBLAS_TF32_TENSOR_OP_MATH (3); the high
        // bits are flags.
        if matches!(mode & 0xf, 1 | 3) {
            return Some("the handle's math mode allows TF32 (cuBLAS is faster)");
        }
    }
    None
}

/// `cublasGemmEx`: hyblas's GEMM for the four full-precision combinations (A, B, C of one
/// type, its own compute type or the pedantic twin, a valid algo value); the rest forwarded.
#[allow(clippy::too_many_arguments)]
unsafe fn gemm_ex<I: Int>(
    s: &'static Sym,
    h: Handle,
    transa: c_int,
    transb: c_int,
    m: I,
    n: I,
    k: I,
    alpha: *const c_void,
    a: *const c_void,
    atype: c_int,
    lda: I,
    b: *const c_void,
    btype: c_int,
    ldb: I,
    beta: *const c_void,
    c: *mut c_void,
    ctype: c_int,
    ldc: I,
    compute: c_int,
    algo: c_int,
) -> Status {
    let vendor = || {
        forward(s, |f: GemmExFn<I>| {
            f(h, transa, transb, m, n, k, alpha, a, atype, lda, b, btype, ldb, beta, c, ctype, ldc, compute, algo)
        })
    };
    let algo_ok = algo == CUBLAS_GEMM_DEFAULT || (0..=23).contains(&algo) || (99..=115).contains(&algo);
    let prefix = if atype != btype || btype != ctype {
        None
    } else {
        match (atype, compute) {
            (CUDA_R_32F, CUBLAS_COMPUTE_32F | CUBLAS_COMPUTE_32F_PEDANTIC) => Some('s'),
            (CUDA_R_64F, CUBLAS_COMPUTE_64F | CUBLAS_COMPUTE_64F_PEDANTIC) => Some('d'),
            (CUDA_C_32F, CUBLAS_COMPUTE_32F | CUBLAS_COMPUTE_32F_PEDANTIC) => Some('c'),
            (CUDA_C_64F, CUBLAS_COMPUTE_64F | CUBLAS_COMPUTE_64F_PEDANTIC) => Some('z'),
            _ => None,
        }
    };
    let unsupported = if !algo_ok {
        Some("algo is not a cublasGemmAlgo_t value")
    } else if prefix.is_none() {
        Some("data/compute types hyblas does not run")
    } else {
        None
    };
    macro_rules! go {
        ($T:ty) => {
            gemm::<$T, I>(
                s,
                h,
                transa,
                transb,
                m,
                n,
                k,
                alpha as *const $T,
                a as *const $T,
                lda,
                b as *const $T,
                ldb,
                beta as *const $T,
                c as *mut $T,
                ldc,
                unsupported,
                Some([atype, btype, ctype, compute, algo]),
                vendor,
            )
        };
    }
    // Unsupported combinations never reach hyblas's kernel: the element type there only
    // shapes the (forwarding) body.
    match prefix {
        Some('d') => go!(f64),
        Some('c') => go!(C32),
        Some('z') => go!(C64),
        _ => go!(f32),
    }
}

/// The operands of a batched call as hyblas's small-product kernel takes them (`gpu::batched`).
fn batch_operands(at: [(u64, i64); 3], lds: [i64; 3], strided: bool) -> [BMat; 3] {
    let one = |(ptr, stride): (u64, i64), ld| BMat {
        at: if strided { At::Strided { ptr, stride } } else { At::Array(ptr) },
        ld,
    };
    [one(at[0], lds[0]), one(at[1], lds[1]), one(at[2], lds[2])]
}

/// `cublas?gemmStridedBatched` and `cublas?gemmBatched` (`strided` false: `a`, `b`, `c` are
/// device arrays of the products' addresses, the strides unused): checked like GEMM, then
/// hyblas's small-product kernel where `plan::batch::kernel_decision` says (small m*n, m*n*k),
/// else the real cuBLAS. Degenerate for hyblas (cuBLAS's own definition): an empty batch or
/// output, k = 0, and strided outputs that overlap (products writing the same elements).
#[allow(clippy::too_many_arguments)]
unsafe fn gemm_batched<T: Scalar, I: Int>(
    s: &'static Sym,
    h: Handle,
    (transa, transb): (c_int, c_int),
    (m, n, k): (I, I, I),
    alpha: *const T,
    (a, lda, stride_a): (u64, I, i64),
    (b, ldb, stride_b): (u64, I, i64),
    beta: *const T,
    (c, ldc, stride_c): (u64, I, i64),
    batch: I,
    strided: bool,
    vendor: impl FnOnce() -> Status,
) -> Status {
    let (mm, nn, kk, bc) = (m.into(), n.into(), k.into(), batch.into());
    let (la, lb, lc) = (lda.into(), ldb.into(), ldc.into());
    let (ta, tb) = (trans_of(transa), trans_of(transb));
    let invalid = gemm_invalid(ta, tb, mm, nn, kk, la, lb, lc, alpha.is_null() || beta.is_null()) || bc < 0;
    let degenerate = if mm == 0 || nn == 0 || bc == 0 {
        Some("empty batch")
    } else if kk == 0 {
        Some("k = 0")
    } else if strided && bc > 1 && stride_c.unsigned_abs() < (lc * (nn - 1) + mm) as u64 {
        Some("outputs that overlap")
    } else {
        None
    };
    let form = if strided { "strided" } else { "pointer arrays" };
    dispatch_with(
        s,
        h,
        Check::of(h, invalid, degenerate),
        || format!("{} batch={bc} ({form})", gemm_shape(transa, transb, mm, nn, kk, la, lb, lc)),
        |d| gemm_plan::decide_device(d, || batch_plan::kernel_decision::<T>(mm, nn, kk)),
        |ex, cx| {
            let (ta, tb) = (ta.unwrap_or(Trans::No), tb.unwrap_or(Trans::No));
            let at = [(a, stride_a), (b, stride_b), (c, stride_c)];
            let [am, bm, cm] = batch_operands(at, [la, lb, lc], strided);
            let shape = gpu::batched::Shape::of(mm, nn);
            gpu::batched::gemm_shaped::<T>(
                ex,
                shape,
                ta,
                tb,
                mm,
                nn,
                kk,
                cx.input(alpha),
                am,
                bm,
                cx.input(beta),
                cm,
                bc,
            )
        },
        vendor,
    )
}

/// `cublas?gemmStridedBatched`: [`gemm_batched`] on strided operands.
#[allow(clippy::too_many_arguments)]
unsafe fn gemm_strided<T: Scalar, I: Int>(
    s: &'static Sym,
    h: Handle,
    transa: c_int,
    transb: c_int,
    m: I,
    n: I,
    k: I,
    alpha: *const T,
    a: *const T,
    lda: I,
    stride_a: i64,
    b: *const T,
    ldb: I,
    stride_b: i64,
    beta: *const T,
    c: *mut T,
    ldc: I,
    stride_c: i64,
    batch: I,
) -> Status {
    let vendor = || {
        forward(s, |f: GemmStridedFn<T, I>| {
            f(h, transa, transb, m, n, k, alpha, a, lda, stride_a, b, ldb, stride_b, beta, c, ldc, stride_c, batch)
        })
    };
    let (pa, pb, pc) = ((a as u64, lda, stride_a), (b as u64, ldb, stride_b), (c as u64, ldc, stride_c));
    gemm_batched(s, h, (transa, transb), (m, n, k), alpha, pa, pb, beta, pc, batch, true, vendor)
}

/// `cublas?gemmBatched`: [`gemm_batched`] on device arrays of the products' addresses.
#[allow(clippy::too_many_arguments)]
unsafe fn gemm_pointers<T: Scalar, I: Int>(
    s: &'static Sym,
    h: Handle,
    transa: c_int,
    transb: c_int,
    m: I,
    n: I,
    k: I,
    alpha: *const T,
    a: *const *const T,
    lda: I,
    b: *const *const T,
    ldb: I,
    beta: *const T,
    c: *const *mut T,
    ldc: I,
    batch: I,
) -> Status {
    let vendor = || {
        forward(s, |f: GemmBatchedFn<T, I>| f(h, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, batch))
    };
    let (pa, pb, pc) = ((a as u64, lda, 0), (b as u64, ldb, 0), (c as u64, ldc, 0));
    gemm_batched(s, h, (transa, transb), (m, n, k), alpha, pa, pb, beta, pc, batch, false, vendor)
}

// ---- Exports ----

/// Run an export's body; a panic becomes CUBLAS_STATUS_INTERNAL_ERROR (reported on stderr by
/// `guard`), never an unwind into C.
#[inline]
pub fn guarded(name: &str, f: impl FnOnce() -> Status) -> Status {
    guard(name, || Some(f())).unwrap_or(CUBLAS_STATUS_INTERNAL_ERROR)
}

/// Define one exported cuBLAS symbol with its own [`Sym`] (the real function of the same
/// name), bound to `$s` in the body.
macro_rules! cublas {
    ($sym:expr, fn($($a:ident : $t:ty),* $(,)?) => |$s:ident| $body:expr) => {
        const _: () = {
            static SYM: Sym = Sym::new($sym);
            #[export_name = $sym]
            #[allow(clippy::missing_safety_doc, clippy::too_many_arguments)]
            unsafe extern "C" fn f($($a: $t),*) -> Status {
                guarded($sym, || {
                    let $s: &'static Sym = &SYM;
                    #[allow(unused_unsafe)]
                    unsafe {
                        $body
                    }
                })
            }
        };
    };
}

/// A thin forward of a handle function to the real cuBLAS.
macro_rules! thin {
    ($sym:literal, fn($($a:ident : $t:ty),* $(,)?)) => {
        cublas!($sym, fn($($a: $t),*) => |s| forward(s, |f: unsafe extern "C" fn($($t),*) -> Status| f($($a),*)));
    };
}

// The real cublasCreate_v2, then hyblas's runtime and split-k model are made ready in the same
// thread (a few ms beside cuBLAS's own setup), so that a program's first routed call does not
// pay for them. No kernel is compiled or loaded here: a unit is only built once a call needs it.
cublas!("cublasCreate_v2", fn(handle: *mut Handle) => |s| {
    let st = forward(s, |f: unsafe extern "C" fn(*mut Handle) -> Status| f(handle));
    if st == CUBLAS_STATUS_SUCCESS && crate::config::get().device != crate::config::DeviceChoice::Cpu {
        if let Ok(rt) = runtime() {
            let _ = gpu::splitk::model(rt);
        }
    }
    st
});
thin!("cublasDestroy_v2", fn(handle: Handle));
thin!("cublasGetVersion_v2", fn(handle: Handle, version: *mut c_int));
thin!("cublasSetStream_v2", fn(handle: Handle, stream: Stream));
thin!("cublasGetStream_v2", fn(handle: Handle, stream: *mut Stream));
thin!("cublasSetPointerMode_v2", fn(handle: Handle, mode: c_int));
thin!("cublasGetPointerMode_v2", fn(handle: Handle, mode: *mut c_int));
thin!("cublasSetAtomicsMode", fn(handle: Handle, mode: c_int));
thin!("cublasGetAtomicsMode", fn(handle: Handle, mode: *mut c_int));
thin!("cublasSetMathMode", fn(handle: Handle, mode: c_int));
thin!("cublasGetMathMode", fn(handle: Handle, mode: *mut c_int));

#[rustfmt::skip]
macro_rules! blas_exports {
    ($I:ty, $sfx:literal) => {
        cublas!(concat!("cublasSaxpy", $sfx), fn(h: Handle, n: $I, alpha: *const f32, x: *const f32, incx: $I, y: *mut f32, incy: $I) => |s| axpy(s, h, n, alpha, x, incx, y, incy));
        cublas!(concat!("cublasDaxpy", $sfx), fn(h: Handle, n: $I, alpha: *const f64, x: *const f64, incx: $I, y: *mut f64, incy: $I) => |s| axpy(s, h, n, alpha, x, incx, y, incy));
        cublas!(concat!("cublasCaxpy", $sfx), fn(h: Handle, n: $I, alpha: *const C32, x: *const C32, incx: $I, y: *mut C32, incy: $I) => |s| axpy(s, h, n, alpha, x, incx, y, incy));
        cublas!(concat!("cublasZaxpy", $sfx), fn(h: Handle, n: $I, alpha: *const C64, x: *const C64, incx: $I, y: *mut C64, incy: $I) => |s| axpy(s, h, n, alpha, x, incx, y, incy));

        cublas!(concat!("cublasSscal", $sfx), fn(h: Handle, n: $I, alpha: *const f32, x: *mut f32, incx: $I) => |s| scal::<f32, f32, $I>(s, h, n, alpha, x, incx));
        cublas!(concat!("cublasDscal", $sfx), fn(h: Handle, n: $I, alpha: *const f64, x: *mut f64, incx: $I) => |s| scal::<f64, f64, $I>(s, h, n, alpha, x, incx));
        cublas!(concat!("cublasCscal", $sfx), fn(h: Handle, n: $I, alpha: *const C32, x: *mut C32, incx: $I) => |s| scal::<C32, C32, $I>(s, h, n, alpha, x, incx));
        cublas!(concat!("cublasZscal", $sfx), fn(h: Handle, n: $I, alpha: *const C64, x: *mut C64, incx: $I) => |s| scal::<C64, C64, $I>(s, h, n, alpha, x, incx));
        cublas!(concat!("cublasCsscal", $sfx), fn(h: Handle, n: $I, alpha: *const f32, x: *mut C32, incx: $I) => |s| scal::<C32, f32, $I>(s, h, n, alpha, x, incx));
        cublas!(concat!("cublasZdscal", $sfx), fn(h: Handle, n: $I, alpha: *const f64, x: *mut C64, incx: $I) => |s| scal::<C64, f64, $I>(s, h, n, alpha, x, incx));

        cublas!(concat!("cublasScopy", $sfx), fn(h: Handle, n: $I, x: *const f32, incx: $I, y: *mut f32, incy: $I) => |s| copy(s, h, n, x, incx, y, incy));
        cublas!(concat!("cublasDcopy", $sfx), fn(h: Handle, n: $I, x: *const f64, incx: $I, y: *mut f64, incy: $I) => |s| copy(s, h, n, x, incx, y, incy));
        cublas!(concat!("cublasCcopy", $sfx), fn(h: Handle, n: $I, x: *const C32, incx: $I, y: *mut C32, incy: $I) => |s| copy(s, h, n, x, incx, y, incy));
        cublas!(concat!("cublasZcopy", $sfx), fn(h: Handle, n: $I, x: *const C64, incx: $I, y: *mut C64, incy: $I) => |s| copy(s, h, n, x, incx, y, incy));

        cublas!(concat!("cublasSswap", $sfx), fn(h: Handle, n: $I, x: *mut f32, incx: $I, y: *mut f32, incy: $I) => |s| swap(s, h, n, x, incx, y, incy));
        cublas!(concat!("cublasDswap", $sfx), fn(h: Handle, n: $I, x: *mut f64, incx: $I, y: *mut f64, incy: $I) => |s| swap(s, h, n, x, incx, y, incy));
        cublas!(concat!("cublasCswap", $sfx), fn(h: Handle, n: $I, x: *mut C32, incx: $I, y: *mut C32, incy: $I) => |s| swap(s, h, n, x, incx, y, incy));
        cublas!(concat!("cublasZswap", $sfx), fn(h: Handle, n: $I, x: *mut C64, incx: $I, y: *mut C64, incy: $I) => |s| swap(s, h, n, x, incx, y, incy));

        cublas!(concat!("cublasSdot", $sfx), fn(h: Handle, n: $I, x: *const f32, incx: $I, y: *const f32, incy: $I, result: *mut f32) => |s| dot(s, h, n, x, incx, y, incy, result, false));
        cublas!(concat!("cublasDdot", $sfx), fn(h: Handle, n: $I, x: *const f64, incx: $I, y: *const f64, incy: $I, result: *mut f64) => |s| dot(s, h, n, x, incx, y, incy, result, false));
        cublas!(concat!("cublasCdotu", $sfx), fn(h: Handle, n: $I, x: *const C32, incx: $I, y: *const C32, incy: $I, result: *mut C32) => |s| dot(s, h, n, x, incx, y, incy, result, false));
        cublas!(concat!("cublasCdotc", $sfx), fn(h: Handle, n: $I, x: *const C32, incx: $I, y: *const C32, incy: $I, result: *mut C32) => |s| dot(s, h, n, x, incx, y, incy, result, true));
        cublas!(concat!("cublasZdotu", $sfx), fn(h: Handle, n: $I, x: *const C64, incx: $I, y: *const C64, incy: $I, result: *mut C64) => |s| dot(s, h, n, x, incx, y, incy, result, false));
        cublas!(concat!("cublasZdotc", $sfx), fn(h: Handle, n: $I, x: *const C64, incx: $I, y: *const C64, incy: $I, result: *mut C64) => |s| dot(s, h, n, x, incx, y, incy, result, true));

        cublas!(concat!("cublasSnrm2", $sfx), fn(h: Handle, n: $I, x: *const f32, incx: $I, result: *mut f32) => |s| reduce(s, Reduce::Nrm2, h, n, x, incx, result));
        cublas!(concat!("cublasDnrm2", $sfx), fn(h: Handle, n: $I, x: *const f64, incx: $I, result: *mut f64) => |s| reduce(s, Reduce::Nrm2, h, n, x, incx, result));
        cublas!(concat!("cublasScnrm2", $sfx), fn(h: Handle, n: $I, x: *const C32, incx: $I, result: *mut f32) => |s| reduce(s, Reduce::Nrm2, h, n, x, incx, result));
        cublas!(concat!("cublasDznrm2", $sfx), fn(h: Handle, n: $I, x: *const C64, incx: $I, result: *mut f64) => |s| reduce(s, Reduce::Nrm2, h, n, x, incx, result));

        cublas!(concat!("cublasSasum", $sfx), fn(h: Handle, n: $I, x: *const f32, incx: $I, result: *mut f32) => |s| reduce(s, Reduce::Asum, h, n, x, incx, result));
        cublas!(concat!("cublasDasum", $sfx), fn(h: Handle, n: $I, x: *const f64, incx: $I, result: *mut f64) => |s| reduce(s, Reduce::Asum, h, n, x, incx, result));
        cublas!(concat!("cublasScasum", $sfx), fn(h: Handle, n: $I, x: *const C32, incx: $I, result: *mut f32) => |s| reduce(s, Reduce::Asum, h, n, x, incx, result));
        cublas!(concat!("cublasDzasum", $sfx), fn(h: Handle, n: $I, x: *const C64, incx: $I, result: *mut f64) => |s| reduce(s, Reduce::Asum, h, n, x, incx, result));

        cublas!(concat!("cublasIsamax", $sfx), fn(h: Handle, n: $I, x: *const f32, incx: $I, result: *mut $I) => |s| amax(s, h, n, x, incx, result));
        cublas!(concat!("cublasIdamax", $sfx), fn(h: Handle, n: $I, x: *const f64, incx: $I, result: *mut $I) => |s| amax(s, h, n, x, incx, result));
        cublas!(concat!("cublasIcamax", $sfx), fn(h: Handle, n: $I, x: *const C32, incx: $I, result: *mut $I) => |s| amax(s, h, n, x, incx, result));
        cublas!(concat!("cublasIzamax", $sfx), fn(h: Handle, n: $I, x: *const C64, incx: $I, result: *mut $I) => |s| amax(s, h, n, x, incx, result));

        cublas!(concat!("cublasSgemv", $sfx), fn(h: Handle, trans: c_int, m: $I, n: $I, alpha: *const f32, a: *const f32, lda: $I, x: *const f32, incx: $I, beta: *const f32, y: *mut f32, incy: $I) => |s| gemv(s, h, trans, m, n, alpha, a, lda, x, incx, beta, y, incy));
        cublas!(concat!("cublasDgemv", $sfx), fn(h: Handle, trans: c_int, m: $I, n: $I, alpha: *const f64, a: *const f64, lda: $I, x: *const f64, incx: $I, beta: *const f64, y: *mut f64, incy: $I) => |s| gemv(s, h, trans, m, n, alpha, a, lda, x, incx, beta, y, incy));
        cublas!(concat!("cublasCgemv", $sfx), fn(h: Handle, trans: c_int, m: $I, n: $I, alpha: *const C32, a: *const C32, lda: $I, x: *const C32, incx: $I, beta: *const C32, y: *mut C32, incy: $I) => |s| gemv(s, h, trans, m, n, alpha, a, lda, x, incx, beta, y, incy));
        cublas!(concat!("cublasZgemv", $sfx), fn(h: Handle, trans: c_int, m: $I, n: $I, alpha: *const C64, a: *const C64, lda: $I, x: *const C64, incx: $I, beta: *const C64, y: *mut C64, incy: $I) => |s| gemv(s, h, trans, m, n, alpha, a, lda, x, incx, beta, y, incy));

        cublas!(concat!("cublasSger", $sfx), fn(h: Handle, m: $I, n: $I, alpha: *const f32, x: *const f32, incx: $I, y: *const f32, incy: $I, a: *mut f32, lda: $I) => |s| ger(s, h, m, n, alpha, x, incx, y, incy, a, lda, false));
        cublas!(concat!("cublasDger", $sfx), fn(h: Handle, m: $I, n: $I, alpha: *const f64, x: *const f64, incx: $I, y: *const f64, incy: $I, a: *mut f64, lda: $I) => |s| ger(s, h, m, n, alpha, x, incx, y, incy, a, lda, false));
        cublas!(concat!("cublasCgeru", $sfx), fn(h: Handle, m: $I, n: $I, alpha: *const C32, x: *const C32, incx: $I, y: *const C32, incy: $I, a: *mut C32, lda: $I) => |s| ger(s, h, m, n, alpha, x, incx, y, incy, a, lda, false));
        cublas!(concat!("cublasCgerc", $sfx), fn(h: Handle, m: $I, n: $I, alpha: *const C32, x: *const C32, incx: $I, y: *const C32, incy: $I, a: *mut C32, lda: $I) => |s| ger(s, h, m, n, alpha, x, incx, y, incy, a, lda, true));
        cublas!(concat!("cublasZgeru", $sfx), fn(h: Handle, m: $I, n: $I, alpha: *const C64, x: *const C64, incx: $I, y: *const C64, incy: $I, a: *mut C64, lda: $I) => |s| ger(s, h, m, n, alpha, x, incx, y, incy, a, lda, false));
        cublas!(concat!("cublasZgerc", $sfx), fn(h: Handle, m: $I, n: $I, alpha: *const C64, x: *const C64, incx: $I, y: *const C64, incy: $I, a: *mut C64, lda: $I) => |s| ger(s, h, m, n, alpha, x, incx, y, incy, a, lda, true));

        cublas!(concat!("cublasStrmv", $sfx), fn(h: Handle, uplo: c_int, trans: c_int, diag: c_int, n: $I, a: *const f32, lda: $I, x: *mut f32, incx: $I) => |s| trmv(s, h, uplo, trans, diag, n, a, lda, x, incx));
        cublas!(concat!("cublasDtrmv", $sfx), fn(h: Handle, uplo: c_int, trans: c_int, diag: c_int, n: $I, a: *const f64, lda: $I, x: *mut f64, incx: $I) => |s| trmv(s, h, uplo, trans, diag, n, a, lda, x, incx));
        cublas!(concat!("cublasCtrmv", $sfx), fn(h: Handle, uplo: c_int, trans: c_int, diag: c_int, n: $I, a: *const C32, lda: $I, x: *mut C32, incx: $I) => |s| trmv(s, h, uplo, trans, diag, n, a, lda, x, incx));
        cublas!(concat!("cublasZtrmv", $sfx), fn(h: Handle, uplo: c_int, trans: c_int, diag: c_int, n: $I, a: *const C64, lda: $I, x: *mut C64, incx: $I) => |s| trmv(s, h, uplo, trans, diag, n, a, lda, x, incx));
    };
}

blas_exports!(i32, "_v2");
blas_exports!(i64, "_v2_64");

#[rustfmt::skip]
macro_rules! gemm_exports {
    ($I:ty, $v2:literal, $plain:literal) => {
        cublas!(concat!("cublasSgemm", $v2), fn(h: Handle, ta: c_int, tb: c_int, m: $I, n: $I, k: $I, alpha: *const f32, a: *const f32, lda: $I, b: *const f32, ldb: $I, beta: *const f32, c: *mut f32, ldc: $I) => |s| gemm(s, h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, None, None, || forward(s, |f: GemmFn<f32, $I>| f(h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc))));
        cublas!(concat!("cublasDgemm", $v2), fn(h: Handle, ta: c_int, tb: c_int, m: $I, n: $I, k: $I, alpha: *const f64, a: *const f64, lda: $I, b: *const f64, ldb: $I, beta: *const f64, c: *mut f64, ldc: $I) => |s| gemm(s, h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, None, None, || forward(s, |f: GemmFn<f64, $I>| f(h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc))));
        cublas!(concat!("cublasCgemm", $v2), fn(h: Handle, ta: c_int, tb: c_int, m: $I, n: $I, k: $I, alpha: *const C32, a: *const C32, lda: $I, b: *const C32, ldb: $I, beta: *const C32, c: *mut C32, ldc: $I) => |s| gemm(s, h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, None, None, || forward(s, |f: GemmFn<C32, $I>| f(h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc))));
        cublas!(concat!("cublasZgemm", $v2), fn(h: Handle, ta: c_int, tb: c_int, m: $I, n: $I, k: $I, alpha: *const C64, a: *const C64, lda: $I, b: *const C64, ldb: $I, beta: *const C64, c: *mut C64, ldc: $I) => |s| gemm(s, h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, None, None, || forward(s, |f: GemmFn<C64, $I>| f(h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc))));

        cublas!(concat!("cublasGemmEx", $plain), fn(h: Handle, ta: c_int, tb: c_int, m: $I, n: $I, k: $I, alpha: *const c_void, a: *const c_void, atype: c_int, lda: $I, b: *const c_void, btype: c_int, ldb: $I, beta: *const c_void, c: *mut c_void, ctype: c_int, ldc: $I, compute: c_int, algo: c_int) => |s| gemm_ex(s, h, ta, tb, m, n, k, alpha, a, atype, lda, b, btype, ldb, beta, c, ctype, ldc, compute, algo));

        cublas!(concat!("cublasSgemmStridedBatched", $plain), fn(h: Handle, ta: c_int, tb: c_int, m: $I, n: $I, k: $I, alpha: *const f32, a: *const f32, lda: $I, sa: i64, b: *const f32, ldb: $I, sb: i64, beta: *const f32, c: *mut f32, ldc: $I, sc: i64, batch: $I) => |s| gemm_strided(s, h, ta, tb, m, n, k, alpha, a, lda, sa, b, ldb, sb, beta, c, ldc, sc, batch));
        cublas!(concat!("cublasDgemmStridedBatched", $plain), fn(h: Handle, ta: c_int, tb: c_int, m: $I, n: $I, k: $I, alpha: *const f64, a: *const f64, lda: $I, sa: i64, b: *const f64, ldb: $I, sb: i64, beta: *const f64, c: *mut f64, ldc: $I, sc: i64, batch: $I) => |s| gemm_strided(s, h, ta, tb, m, n, k, alpha, a, lda, sa, b, ldb, sb, beta, c, ldc, sc, batch));
        cublas!(concat!("cublasCgemmStridedBatched", $plain), fn(h: Handle, ta: c_int, tb: c_int, m: $I, n: $I, k: $I, alpha: *const C32, a: *const C32, lda: $I, sa: i64, b: *const C32, ldb: $I, sb: i64, beta: *const C32, c: *mut C32, ldc: $I, sc: i64, batch: $I) => |s| gemm_strided(s, h, ta, tb, m, n, k, alpha, a, lda, sa, b, ldb, sb, beta, c, ldc, sc, batch));
        cublas!(concat!("cublasZgemmStridedBatched", $plain), fn(h: Handle, ta: c_int, tb: c_int, m: $I, n: $I, k: $I, alpha: *const C64, a: *const C64, lda: $I, sa: i64, b: *const C64, ldb: $I, sb: i64, beta: *const C64, c: *mut C64, ldc: $I, sc: i64, batch: $I) => |s| gemm_strided(s, h, ta, tb, m, n, k, alpha, a, lda, sa, b, ldb, sb, beta, c, ldc, sc, batch));

        cublas!(concat!("cublasSgemmBatched", $plain), fn(h: Handle, ta: c_int, tb: c_int, m: $I, n: $I, k: $I, alpha: *const f32, a: *const *const f32, lda: $I, b: *const *const f32, ldb: $I, beta: *const f32, c: *const *mut f32, ldc: $I, batch: $I) => |s| gemm_pointers(s, h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, batch));
        cublas!(concat!("cublasDgemmBatched", $plain), fn(h: Handle, ta: c_int, tb: c_int, m: $I, n: $I, k: $I, alpha: *const f64, a: *const *const f64, lda: $I, b: *const *const f64, ldb: $I, beta: *const f64, c: *const *mut f64, ldc: $I, batch: $I) => |s| gemm_pointers(s, h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, batch));
        cublas!(concat!("cublasCgemmBatched", $plain), fn(h: Handle, ta: c_int, tb: c_int, m: $I, n: $I, k: $I, alpha: *const C32, a: *const *const C32, lda: $I, b: *const *const C32, ldb: $I, beta: *const C32, c: *const *mut C32, ldc: $I, batch: $I) => |s| gemm_pointers(s, h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, batch));
        cublas!(concat!("cublasZgemmBatched", $plain), fn(h: Handle, ta: c_int, tb: c_int, m: $I, n: $I, k: $I, alpha: *const C64, a: *const *const C64, lda: $I, b: *const *const C64, ldb: $I, beta: *const C64, c: *const *mut C64, ldc: $I, batch: $I) => |s| gemm_pointers(s, h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, batch));
    };
}

gemm_exports!(i32, "_v2", "");
gemm_exports!(i64, "_v2_64", "_64");
