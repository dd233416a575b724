//! The cuBLAS entry layer: a program that loads `libhyblas.so` in front of `libcublas.so`
//! (LD_PRELOAD, or link order) reaches hyblas's GPU kernels through cuBLAS's own API.
//!
//! Exported (unversioned, `_v2` with `int` sizes and `_v2_64` with `int64_t` sizes): axpy,
//! scal (+ csscal, zdscal), copy, swap, dot (dotu, dotc), nrm2, asum, amax (`i?amax`; the
//! `_64` form returns an `int64_t` index), gemv, ger (geru, gerc), trmv, in s/d/c/z; plus thin
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
//! hyblas never uses atomics, so its results do not depend on the handle's atomics mode (it is
//! read for the trace only); the math mode does not concern Level 1/2.

// Device addresses and handles arrive as raw pointers that are validated by cuBLAS's rules and
// then only passed on, which this lint cannot tell.
#![allow(clippy::not_unsafe_ptr_arg_deref)]

use crate::abi::boundary::guard;
use crate::gpu::driver::{driver_present, sys};
use crate::gpu::level1::IndexOut;
use crate::gpu::vendor::Sym;
use crate::gpu::{self, DMat, DVec, Exec, GpuError, In, Out, Runtime};
use crate::plan::gpu::{self as policy, Decision, Outcome, Route};
use crate::types::{Diag, Scalar, Trans, Uplo, C32, C64};
use std::ffi::{c_int, c_void};

/// `cublasStatus_t`.
pub type Status = c_int;
pub const CUBLAS_STATUS_SUCCESS: Status = 0;
pub const CUBLAS_STATUS_NOT_INITIALIZED: Status = 1;
pub const CUBLAS_STATUS_ALLOC_FAILED: Status = 3;
pub const CUBLAS_STATUS_INVALID_VALUE: Status = 7;
pub const CUBLAS_STATUS_ARCH_MISMATCH: Status = 8;
pub const CUBLAS_STATUS_MAPPING_ERROR: Status = 11;
pub const CUBLAS_STATUS_EXECUTION_FAILED: Status = 13;
pub const CUBLAS_STATUS_INTERNAL_ERROR: Status = 14;
pub const CUBLAS_STATUS_NOT_SUPPORTED: Status = 15;
pub const CUBLAS_STATUS_LICENSE_ERROR: Status = 16;

/// `cublasOperation_t`, `cublasFillMode_t`, `cublasDiagType_t`, `cublasPointerMode_t`,
/// `cublasAtomicsMode_t` values.
pub const CUBLAS_OP_N: c_int = 0;
pub const CUBLAS_OP_T: c_int = 1;
pub const CUBLAS_OP_C: c_int = 2;
pub const CUBLAS_FILL_MODE_LOWER: c_int = 0;
pub const CUBLAS_FILL_MODE_UPPER: c_int = 1;
pub const CUBLAS_DIAG_NON_UNIT: c_int = 0;
pub const CUBLAS_DIAG_UNIT: c_int = 1;
pub const CUBLAS_POINTER_MODE_HOST: c_int = 0;
pub const CUBLAS_POINTER_MODE_DEVICE: c_int = 1;
pub const CUBLAS_ATOMICS_NOT_ALLOWED: c_int = 0;
pub const CUBLAS_ATOMICS_ALLOWED: c_int = 1;

/// `cublasHandle_t` (the real cuBLAS's, never dereferenced here).
pub type Handle = *mut c_void;
/// `cudaStream_t` (the same object as the driver's `CUstream`).
pub type Stream = *mut c_void;

/// The real functions' types, generic over the element `T` and the size type `I`.
type AxpyFn<T, I> = unsafe extern "C" fn(Handle, I, *const T, *const T, I, *mut T, I) -> Status;
type ScalFn<T, A, I> = unsafe extern "C" fn(Handle, I, *const A, *mut T, I) -> Status;
type CopyFn<T, I> = unsafe extern "C" fn(Handle, I, *const T, I, *mut T, I) -> Status;
type SwapFn<T, I> = unsafe extern "C" fn(Handle, I, *mut T, I, *mut T, I) -> Status;
type DotFn<T, I> = unsafe extern "C" fn(Handle, I, *const T, I, *const T, I, *mut T) -> Status;
type ReduceFn<T, R, I> = unsafe extern "C" fn(Handle, I, *const T, I, *mut R) -> Status;
type GemvFn<T, I> =
    unsafe extern "C" fn(Handle, c_int, I, I, *const T, *const T, I, *const T, I, *const T, *mut T, I) -> Status;
type GerFn<T, I> = unsafe extern "C" fn(Handle, I, I, *const T, *const T, I, *const T, I, *mut T, I) -> Status;
type TrmvFn<T, I> = unsafe extern "C" fn(Handle, c_int, c_int, c_int, I, *const T, I, *mut T, I) -> Status;

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

/// One checked call: route it, then run hyblas's kernel on the handle's stream or forward.
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
    let d = policy::decide(degenerate, model);
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
    let result = runtime().and_then(|rt| hyblas(&Exec { rt, stream: ctx.stream as sys::CUstream }, &ctx));
    match result {
        Ok(()) => {
            policy::trace(sym.name, shape, &d, Outcome::Done);
            CUBLAS_STATUS_SUCCESS
        }
        Err(e) => {
            let s = vendor();
            policy::trace(sym.name, shape, &d, Outcome::Declined(&e));
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

thin!("cublasCreate_v2", fn(handle: *mut Handle));
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
