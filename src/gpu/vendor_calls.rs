//! hyblas's own calls into the real cuBLAS (`vendor.rs` finds it), on handles of hyblas's own
//! bound to hyblas's streams: GEMM for the host ABI's calls on device memory and for the
//! host-offload executors' tiles (`hybrid/`), and Level 1/2 for the host ABI's calls on device
//! memory whose hyblas kernel is still compiling.

use super::driver::sys;
use super::vendor::*;
use super::{DMat, DVec, Exec, GpuError, Runtime};
use crate::gpu;
use crate::types::{Diag, Scalar, Side, Trans, Uplo};
use std::cell::RefCell;
use std::ffi::c_int;

// ---- The real cuBLAS GEMM for host-ABI calls on device memory ----

/// A host scalar aligned as CUDA's vector types (cuBLAS reads `cuDoubleComplex` host scalars
/// with aligned 16-byte loads; `Complex<f64>` is only 8-byte aligned: an unaligned alpha crashed
/// cuBLAS 13.1's Zaxpy). Whoever passes a host scalar to the real cuBLAS wraps it in this.
#[repr(C, align(16))]
#[derive(Clone, Copy, Debug)]
pub struct A16<T>(pub T);

impl<T> A16<T> {
    /// The scalar's address. (In a closure, `a.ptr()` captures the aligned whole; `&a.0`
    /// captures the field alone, at its own alignment.)
    pub fn ptr(&self) -> *const T {
        &self.0
    }
}

static OWN_CREATE: Sym = Sym::new("cublasCreate_v2");
static OWN_SET_STREAM: Sym = Sym::new("cublasSetStream_v2");
static REAL_GEMM: [Sym; 4] =
    [Sym::new("cublasSgemm_v2"), Sym::new("cublasDgemm_v2"), Sym::new("cublasCgemm_v2"), Sym::new("cublasZgemm_v2")];
static REAL_GEMM_64: [Sym; 4] = [
    Sym::new("cublasSgemm_v2_64"),
    Sym::new("cublasDgemm_v2_64"),
    Sym::new("cublasCgemm_v2_64"),
    Sym::new("cublasZgemm_v2_64"),
];

/// cuBLAS's enum codes for hyblas's argument types.
fn op_code(t: Trans) -> c_int {
    match t {
        Trans::No => CUBLAS_OP_N,
        Trans::Trans => CUBLAS_OP_T,
        Trans::ConjTrans => CUBLAS_OP_C,
    }
}

fn fill_code(u: Uplo) -> c_int {
    match u {
        Uplo::Lower => CUBLAS_FILL_MODE_LOWER,
        Uplo::Upper => CUBLAS_FILL_MODE_UPPER,
    }
}

fn diag_code(d: Diag) -> c_int {
    match d {
        Diag::NonUnit => CUBLAS_DIAG_NON_UNIT,
        Diag::Unit => CUBLAS_DIAG_UNIT,
    }
}

fn side_code(s: Side) -> c_int {
    match s {
        Side::Left => CUBLAS_SIDE_LEFT,
        Side::Right => CUBLAS_SIDE_RIGHT,
    }
}

/// One of hyblas's own cuBLAS handles: its device and the stream last set on it.
struct OwnHandle {
    ordinal: i32,
    handle: usize,
    stream: usize,
}

/// A thread's own handles; at thread exit they go to [`SPARE`] for the next thread (never
/// destroyed: a handle outlives the thread cheaply, and cuBLAS teardown at process exit is
/// best left alone).
struct ThreadHandles(Vec<OwnHandle>);

impl Drop for ThreadHandles {
    fn drop(&mut self) {
        SPARE.lock().extend(self.0.iter().map(|h| (h.ordinal, h.handle)));
    }
}

static SPARE: parking_lot::Mutex<Vec<(i32, usize)>> = parking_lot::Mutex::new(Vec::new());

thread_local! {
    static OWN: RefCell<ThreadHandles> = const { RefCell::new(ThreadHandles(Vec::new())) };
}

fn status_err(what: &'static str, s: Status) -> GpuError {
    GpuError::Other(format!("{what} returned cuBLAS status {s}"))
}

/// A handle of hyblas's own for `rt`'s device bound to `stream`: this thread's, else a spare
/// one, else a new one (`cublasCreate_v2` of the real cuBLAS; host pointer mode).
pub(crate) unsafe fn own_handle(rt: &Runtime, stream: sys::CUstream) -> gpu::Result<Handle> {
    type SetStream = unsafe extern "C" fn(Handle, Stream) -> Status;
    type Create = unsafe extern "C" fn(*mut Handle) -> Status;
    let no_cublas = || GpuError::Unavailable("no real cuBLAS found".into());
    let set_stream: SetStream = OWN_SET_STREAM.get().ok_or_else(no_cublas)?;
    let ord = rt.props.ordinal;
    let mine = OWN.try_with(|t| t.borrow().0.iter().find(|h| h.ordinal == ord).map(|h| (h.handle, h.stream)));
    if let Ok(Some((h, st))) = mine {
        if st != stream as usize {
            let r = set_stream(h as Handle, stream as Stream);
            if r != CUBLAS_STATUS_SUCCESS {
                return Err(status_err("cublasSetStream_v2", r));
            }
            let _ = OWN.try_with(|t| {
                if let Some(x) = t.borrow_mut().0.iter_mut().find(|x| x.ordinal == ord) {
                    x.stream = stream as usize;
                }
            });
        }
        return Ok(h as Handle);
    }
    let spare = {
        let mut sp = SPARE.lock();
        sp.iter().position(|x| x.0 == ord).map(|i| sp.swap_remove(i).1)
    };
    let h = match spare {
        Some(h) => h as Handle,
        None => {
            let create: Create = OWN_CREATE.get().ok_or_else(no_cublas)?;
            let mut h: Handle = std::ptr::null_mut();
            let r = create(&mut h);
            if r != CUBLAS_STATUS_SUCCESS || h.is_null() {
                return Err(status_err("cublasCreate_v2", r));
            }
            h
        }
    };
    let r = set_stream(h, stream as Stream);
    if r != CUBLAS_STATUS_SUCCESS {
        SPARE.lock().push((ord, h as usize));
        return Err(status_err("cublasSetStream_v2", r));
    }
    let kept = OWN
        .try_with(|t| t.borrow_mut().0.push(OwnHandle { ordinal: ord, handle: h as usize, stream: stream as usize }));
    if kept.is_err() {
        // This thread is ending: lend the handle for this call and return it to the spares
        // (the caller's stream is synchronised before anything else can take it).
        SPARE.lock().push((ord, h as usize));
    }
    Ok(h)
}

/// C := alpha*op(A)*op(B) + beta*C by the real cuBLAS on `ex`'s stream, through a handle of
/// hyblas's own (host pointer mode, the caller's scalars as host values): the vendor path of
/// Fortran/CBLAS `?gemm` on device memory. Enqueues and returns (the caller waits).
#[allow(clippy::too_many_arguments)]
pub(crate) fn vendor_gemm<T: Scalar>(
    ex: &Exec,
    ta: Trans,
    tb: Trans,
    m: i64,
    n: i64,
    k: i64,
    alpha: T,
    a: DMat,
    b: DMat,
    beta: T,
    c: DMat,
) -> gpu::Result<()> {
    let (al, be) = (A16(alpha), A16(beta));
    let (pa, pb, pc) = (a.ptr as *const T, b.ptr as *const T, c.ptr as *mut T);
    let i = T::INDEX;
    let fits = [m, n, k, a.ld, b.ld, c.ld].iter().all(|&v| v <= i32::MAX as i64);
    let no_cublas = || GpuError::Unavailable("no real cuBLAS GEMM found".into());
    // SAFETY: the function types are cuBLAS's GEMM prototypes; the handle is ours, bound to
    // ex's stream; pointers and sizes were validated by the caller (reference BLAS rules).
    unsafe {
        let h = own_handle(ex.rt, ex.stream)?;
        let (r, name) = if fits {
            let f: GemmFn<T, i32> = REAL_GEMM[i].get().ok_or_else(no_cublas)?;
            let (m, n, k) = (m as i32, n as i32, k as i32);
            (
                f(
                    h,
                    op_code(ta),
                    op_code(tb),
                    m,
                    n,
                    k,
                    &al.0,
                    pa,
                    a.ld as i32,
                    pb,
                    b.ld as i32,
                    &be.0,
                    pc,
                    c.ld as i32,
                ),
                REAL_GEMM[i].name,
            )
        } else {
            let f: GemmFn<T, i64> = REAL_GEMM_64[i].get().ok_or_else(no_cublas)?;
            (f(h, op_code(ta), op_code(tb), m, n, k, &al.0, pa, a.ld, pb, b.ld, &be.0, pc, c.ld), REAL_GEMM_64[i].name)
        };
        if r != CUBLAS_STATUS_SUCCESS {
            return Err(status_err(name, r));
        }
    }
    Ok(())
}

static REAL_GEMM_STRIDED: [Sym; 4] = [
    Sym::new("cublasSgemmStridedBatched"),
    Sym::new("cublasDgemmStridedBatched"),
    Sym::new("cublasCgemmStridedBatched"),
    Sym::new("cublasZgemmStridedBatched"),
];
static REAL_GEMM_STRIDED_64: [Sym; 4] = [
    Sym::new("cublasSgemmStridedBatched_64"),
    Sym::new("cublasDgemmStridedBatched_64"),
    Sym::new("cublasCgemmStridedBatched_64"),
    Sym::new("cublasZgemmStridedBatched_64"),
];

/// `batch` products C_i := alpha*op(A_i)*op(B_i) + beta*C_i, X_i at X + i*stride_x (elements),
/// as one `cublas?gemmStridedBatched` of the real cuBLAS on `ex`'s stream (hyblas's own handle,
/// host scalars): the host ABI's batches on device memory. Enqueues and returns.
#[allow(clippy::too_many_arguments)]
pub fn vendor_gemm_strided<T: Scalar>(
    ex: &Exec,
    (ta, tb): (Trans, Trans),
    (m, n, k): (i64, i64, i64),
    alpha: T,
    (a, sa): (DMat, i64),
    (b, sb): (DMat, i64),
    beta: T,
    (c, sc): (DMat, i64),
    batch: i64,
) -> gpu::Result<()> {
    let (al, be) = (A16(alpha), A16(beta));
    let (pa, pb, pc) = (a.ptr as *const T, b.ptr as *const T, c.ptr as *mut T);
    let i = T::INDEX;
    let fits = [m, n, k, a.ld, b.ld, c.ld, batch].iter().all(|&v| v <= i32::MAX as i64);
    let no_cublas = || GpuError::Unavailable("no real cuBLAS strided batched GEMM found".into());
    let (ta, tb) = (op_code(ta), op_code(tb));
    // SAFETY: the function types are cuBLAS's prototypes; the handle is ours, bound to ex's
    // stream; pointers, sizes and strides were validated by the caller.
    unsafe {
        let h = own_handle(ex.rt, ex.stream)?;
        let (r, name) = if fits {
            let f: GemmStridedFn<T, i32> = REAL_GEMM_STRIDED[i].get().ok_or_else(no_cublas)?;
            let (m, n, k, bt) = (m as i32, n as i32, k as i32, batch as i32);
            let r =
                f(h, ta, tb, m, n, k, &al.0, pa, a.ld as i32, sa, pb, b.ld as i32, sb, &be.0, pc, c.ld as i32, sc, bt);
            (r, REAL_GEMM_STRIDED[i].name)
        } else {
            let f: GemmStridedFn<T, i64> = REAL_GEMM_STRIDED_64[i].get().ok_or_else(no_cublas)?;
            (
                f(h, ta, tb, m, n, k, &al.0, pa, a.ld, sa, pb, b.ld, sb, &be.0, pc, c.ld, sc, batch),
                REAL_GEMM_STRIDED_64[i].name,
            )
        };
        if r != CUBLAS_STATUS_SUCCESS {
            return Err(status_err(name, r));
        }
    }
    Ok(())
}

static REAL_GEMM_STRIDED_EX: Sym = Sym::new("cublasGemmStridedBatchedEx");

/// `batch` int8 products C_t := A_t^T B_t with exact int32 sums (the accurate DGEMM's residue
/// products, `gpu::ozaki`): A_t k x m and B_t k x n column-major int8 (leading dimension k, a
/// multiple of 16, at A + t*sa and B + t*sb bytes), C_t m x n int32 (leading dimension ldc, at
/// C + t*sc elements), one `cublasGemmStridedBatchedEx` on `ex`'s stream (hyblas's own handle;
/// the integer tensor cores). Enqueues and returns.
pub fn vendor_gemm_i8_tn(
    ex: &Exec,
    (m, n, k): (usize, usize, usize),
    (a, sa): (u64, i64),
    (b, sb): (u64, i64),
    (c, ldc, sc): (u64, usize, i64),
    batch: usize,
) -> gpu::Result<()> {
    let fits = [m, n, k, ldc, batch].iter().all(|&v| v <= i32::MAX as usize);
    if !fits {
        return Err(GpuError::Unsupported("int8 GEMM sizes past 2^31"));
    }
    let no_cublas = || GpuError::Unavailable("no real cuBLAS GemmStridedBatchedEx found".into());
    let (one, zero) = (1i32, 0i32);
    // SAFETY: cuBLAS's prototype; the handle is ours, bound to ex's stream (host pointer mode:
    // alpha and beta are host int32 for CUBLAS_COMPUTE_32I); the caller sized the buffers.
    unsafe {
        let h = own_handle(ex.rt, ex.stream)?;
        let f: GemmStridedExFn = REAL_GEMM_STRIDED_EX.get().ok_or_else(no_cublas)?;
        let r = f(
            h,
            CUBLAS_OP_T,
            CUBLAS_OP_N,
            m as c_int,
            n as c_int,
            k as c_int,
            &one as *const i32 as *const _,
            a as *const _,
            CUDA_R_8I,
            k as c_int,
            sa,
            b as *const _,
            CUDA_R_8I,
            k as c_int,
            sb,
            &zero as *const i32 as *const _,
            c as *mut _,
            CUDA_R_32I,
            ldc as c_int,
            sc,
            batch as c_int,
            CUBLAS_COMPUTE_32I,
            CUBLAS_GEMM_DEFAULT,
        );
        if r != CUBLAS_STATUS_SUCCESS {
            return Err(status_err(REAL_GEMM_STRIDED_EX.name, r));
        }
    }
    Ok(())
}

static REAL_GEMM_BATCHED: [Sym; 4] = [
    Sym::new("cublasSgemmBatched"),
    Sym::new("cublasDgemmBatched"),
    Sym::new("cublasCgemmBatched"),
    Sym::new("cublasZgemmBatched"),
];
static REAL_GEMM_BATCHED_64: [Sym; 4] = [
    Sym::new("cublasSgemmBatched_64"),
    Sym::new("cublasDgemmBatched_64"),
    Sym::new("cublasCgemmBatched_64"),
    Sym::new("cublasZgemmBatched_64"),
];

/// `batch` products C_i := alpha*op(A_i)*op(B_i) + beta*C_i as one `cublas?gemmBatched` of the
/// real cuBLAS on `ex`'s stream (hyblas's own handle, host scalars). `arrays` are device
/// addresses of the arrays of A's, B's and C's addresses (`lds` their leading dimensions).
/// Enqueues and returns.
#[allow(clippy::too_many_arguments)]
pub fn vendor_gemm_batched<T: Scalar>(
    ex: &Exec,
    (ta, tb): (Trans, Trans),
    (m, n, k): (i64, i64, i64),
    alpha: T,
    arrays: [u64; 3],
    lds: [i64; 3],
    beta: T,
    batch: i64,
) -> gpu::Result<()> {
    let (al, be) = (A16(alpha), A16(beta));
    let [pa, pb, pc] = arrays;
    let (pa, pb, pc) = (pa as *const *const T, pb as *const *const T, pc as *const *mut T);
    let [la, lb, lc] = lds;
    let i = T::INDEX;
    let fits = [m, n, k, la, lb, lc, batch].iter().all(|&v| v <= i32::MAX as i64);
    let no_cublas = || GpuError::Unavailable("no real cuBLAS batched GEMM found".into());
    let (ta, tb) = (op_code(ta), op_code(tb));
    // SAFETY: the function types are cuBLAS's prototypes; the handle is ours, bound to ex's
    // stream; arrays, sizes and leading dimensions were validated by the caller.
    unsafe {
        let h = own_handle(ex.rt, ex.stream)?;
        let (r, name) = if fits {
            let f: GemmBatchedFn<T, i32> = REAL_GEMM_BATCHED[i].get().ok_or_else(no_cublas)?;
            let (m, n, k, bt) = (m as i32, n as i32, k as i32, batch as i32);
            (
                f(h, ta, tb, m, n, k, &al.0, pa, la as i32, pb, lb as i32, &be.0, pc, lc as i32, bt),
                REAL_GEMM_BATCHED[i].name,
            )
        } else {
            let f: GemmBatchedFn<T, i64> = REAL_GEMM_BATCHED_64[i].get().ok_or_else(no_cublas)?;
            (f(h, ta, tb, m, n, k, &al.0, pa, la, pb, lb, &be.0, pc, lc, batch), REAL_GEMM_BATCHED_64[i].name)
        };
        if r != CUBLAS_STATUS_SUCCESS {
            return Err(status_err(name, r));
        }
    }
    Ok(())
}

// ---- The real cuBLAS Level 3 beyond GEMM: the offload executors' diagonal tiles ----

/// A Level-3 routine of the real cuBLAS other than GEMM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level3 {
    Symm,
    Hemm,
    Syrk,
    Herk,
    Syr2k,
    Her2k,
    Trmm,
    Trsm,
}

macro_rules! syms4 {
    ($($n:literal),*) => { [$(Sym::new($n)),*] };
}
static SYRK: [Sym; 4] = syms4!("cublasSsyrk_v2", "cublasDsyrk_v2", "cublasCsyrk_v2", "cublasZsyrk_v2");
static SYR2K: [Sym; 4] = syms4!("cublasSsyr2k_v2", "cublasDsyr2k_v2", "cublasCsyr2k_v2", "cublasZsyr2k_v2");
static SYMM: [Sym; 4] = syms4!("cublasSsymm_v2", "cublasDsymm_v2", "cublasCsymm_v2", "cublasZsymm_v2");
static TRMM: [Sym; 4] = syms4!("cublasStrmm_v2", "cublasDtrmm_v2", "cublasCtrmm_v2", "cublasZtrmm_v2");
static TRSM: [Sym; 4] = syms4!("cublasStrsm_v2", "cublasDtrsm_v2", "cublasCtrsm_v2", "cublasZtrsm_v2");
/// Hermitian routines, complex only (indexed like the others; s/d never asked for).
static HERK: [Sym; 4] = syms4!("cublasCherk_v2", "cublasZherk_v2", "cublasCherk_v2", "cublasZherk_v2");
static HER2K: [Sym; 4] = syms4!("cublasCher2k_v2", "cublasZher2k_v2", "cublasCher2k_v2", "cublasZher2k_v2");
static HEMM: [Sym; 4] = syms4!("cublasChemm_v2", "cublasZhemm_v2", "cublasChemm_v2", "cublasZhemm_v2");

/// Routine `r`'s real entry point for precision T (`addr()` None: no such cuBLAS function).
pub fn level3_sym<T: Scalar>(r: Level3) -> &'static Sym {
    let i = T::INDEX;
    match r {
        Level3::Symm => &SYMM[i],
        Level3::Hemm => &HEMM[i],
        Level3::Syrk => &SYRK[i],
        Level3::Herk => &HERK[i],
        Level3::Syr2k => &SYR2K[i],
        Level3::Her2k => &HER2K[i],
        Level3::Trmm => &TRMM[i],
        Level3::Trsm => &TRSM[i],
    }
}

/// Call the real function `sym` (of type `F`); a status other than SUCCESS is an error.
unsafe fn call<F: Copy>(sym: &'static Sym, f: impl FnOnce(F) -> Status) -> gpu::Result<()> {
    let func: F = sym.get().ok_or_else(|| GpuError::Unavailable(format!("no real {} found", sym.name)))?;
    match f(func) {
        CUBLAS_STATUS_SUCCESS => Ok(()),
        s => Err(status_err(sym.name, s)),
    }
}

/// SYRK/HERK (`two == false`, `b` unused) or SYR2K/HER2K on `ex`'s stream, `int` sizes (the
/// executors' tiles fit). HERK's alpha and the Hermitian routines' beta are passed real.
///
/// # Safety
/// Device operands valid for the sizes (reference BLAS rules).
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn vendor_rank<T: Scalar>(
    ex: &Exec,
    two: bool,
    herm: bool,
    uplo: Uplo,
    trans: Trans,
    n: usize,
    k: usize,
    alpha: T,
    a: DMat,
    b: DMat,
    beta: T,
    c: DMat,
) -> gpu::Result<()> {
    let h = own_handle(ex.rt, ex.stream)?;
    let (u, t, i, ld) = (fill_code(uplo), op_code(trans), |v: usize| v as c_int, |d: DMat| d.ld as c_int);
    let (pa, pb, pc) = (a.ptr as *const T, b.ptr as *const T, c.ptr as *mut T);
    let s = level3_sym::<T>(match (two, herm) {
        (false, false) => Level3::Syrk,
        (false, true) => Level3::Herk,
        (true, false) => Level3::Syr2k,
        (true, true) => Level3::Her2k,
    });
    match (two, herm) {
        (false, false) => {
            let (al, be) = (A16(alpha), A16(beta));
            call(s, |f: SyrkFn<T, T>| f(h, u, t, i(n), i(k), &al.0, pa, ld(a), &be.0, pc, ld(c)))
        }
        (false, true) => {
            let (al, be) = (A16(alpha.re()), A16(beta.re()));
            call(s, |f: SyrkFn<T, T::Real>| f(h, u, t, i(n), i(k), &al.0, pa, ld(a), &be.0, pc, ld(c)))
        }
        (true, false) => {
            let (al, be) = (A16(alpha), A16(beta));
            call(s, |f: Syr2kFn<T, T>| f(h, u, t, i(n), i(k), &al.0, pa, ld(a), pb, ld(b), &be.0, pc, ld(c)))
        }
        (true, true) => {
            let (al, be) = (A16(alpha), A16(beta.re()));
            call(s, |f: Syr2kFn<T, T::Real>| f(h, u, t, i(n), i(k), &al.0, pa, ld(a), pb, ld(b), &be.0, pc, ld(c)))
        }
    }
}

/// SYMM/HEMM on `ex`'s stream, `int` sizes.
///
/// # Safety
/// As [`vendor_rank`].
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn vendor_symm<T: Scalar>(
    ex: &Exec,
    herm: bool,
    side: Side,
    uplo: Uplo,
    m: usize,
    n: usize,
    alpha: T,
    a: DMat,
    b: DMat,
    beta: T,
    c: DMat,
) -> gpu::Result<()> {
    let h = own_handle(ex.rt, ex.stream)?;
    let s = level3_sym::<T>(if herm { Level3::Hemm } else { Level3::Symm });
    let (al, be) = (A16(alpha), A16(beta));
    let (sd, u, i, ld) = (side_code(side), fill_code(uplo), |v: usize| v as c_int, |d: DMat| d.ld as c_int);
    let (pa, pb, pc) = (a.ptr as *const T, b.ptr as *const T, c.ptr as *mut T);
    call(s, |f: SymmFn<T>| f(h, sd, u, i(m), i(n), &al.0, pa, ld(a), pb, ld(b), &be.0, pc, ld(c)))
}

/// TRSM (`solve`) or TRMM in place on B, on `ex`'s stream, `int` sizes.
///
/// # Safety
/// As [`vendor_rank`].
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn vendor_tri<T: Scalar>(
    ex: &Exec,
    solve: bool,
    side: Side,
    uplo: Uplo,
    trans: Trans,
    diag: Diag,
    m: usize,
    n: usize,
    alpha: T,
    a: DMat,
    b: DMat,
) -> gpu::Result<()> {
    let h = own_handle(ex.rt, ex.stream)?;
    let s = level3_sym::<T>(if solve { Level3::Trsm } else { Level3::Trmm });
    let al = A16(alpha);
    let (sd, u, t, d) = (side_code(side), fill_code(uplo), op_code(trans), diag_code(diag));
    let (i, ld) = (|v: usize| v as c_int, |d: DMat| d.ld as c_int);
    let (pa, pb) = (a.ptr as *const T, b.ptr as *mut T);
    if solve {
        call(s, |f: TrsmFn<T>| f(h, sd, u, t, d, i(m), i(n), &al.0, pa, ld(a), pb, ld(b)))
    } else {
        // In place: cuBLAS's out-of-place TRMM with C = B.
        call(s, |f: TrmmFn<T>| f(h, sd, u, t, d, i(m), i(n), &al.0, pa, ld(a), pb, ld(b), pb, ld(b)))
    }
}

// ---- The real cuBLAS Level 1/2 for host-ABI calls on device memory ----

/// Host-ABI Level 1/2 calls on device memory (`daxpy_`, `cblas_sgemv`, ... on `cudaMalloc`
/// pointers) whose hyblas kernel is not loaded yet are answered by these (`plan::on_gpu`'s
/// vendor path): the real cuBLAS on `ex`'s stream through a handle of hyblas's own (host
/// pointer mode, scalars as aligned host values, results to the host), the `_v2` entry point
/// when every size, increment and leading dimension fits an `int`, else the `_v2_64` one. Each
/// enqueues and returns (the reductions return once their host result is written); the caller
/// waits for the stream. A non-SUCCESS status, or no real cuBLAS, is an error.
///
/// They take the same operands as hyblas's engine functions (`gpu::level1`, `gpu::gemv`,
/// `gpu::trmv`) and compute the same results, with the reference BLAS's quick returns and its
/// increment convention (a negative increment starts at the far end of the vector, as cuBLAS
/// does too). A zero increment of axpy, copy, swap or dot is refused (`Unsupported`): cuBLAS
/// does not define it, where the reference's sequential loop gives it a meaning; the host ABI
/// runs such calls on hyblas's kernels. The one-vector routines do nothing (scal) or give 0
/// (nrm2, asum, iamax) for n <= 0 or incx <= 0, as the engine's do.
///
/// Public (hidden) for the tests only.
#[doc(hidden)]
pub mod host_vendor {
    use super::*;

    /// One routine's real entry points: `[_v2, _v2_64]` x `[s, d, c, z]`.
    type Syms = [[Sym; 4]; 2];

    macro_rules! syms {
        ($name:ident: $s:literal, $d:literal, $c:literal, $z:literal) => {
            static $name: Syms = [
                [
                    Sym::new(concat!($s, "_v2")),
                    Sym::new(concat!($d, "_v2")),
                    Sym::new(concat!($c, "_v2")),
                    Sym::new(concat!($z, "_v2")),
                ],
                [
                    Sym::new(concat!($s, "_v2_64")),
                    Sym::new(concat!($d, "_v2_64")),
                    Sym::new(concat!($c, "_v2_64")),
                    Sym::new(concat!($z, "_v2_64")),
                ],
            ];
        };
    }

    syms!(AXPY: "cublasSaxpy", "cublasDaxpy", "cublasCaxpy", "cublasZaxpy");
    syms!(COPY: "cublasScopy", "cublasDcopy", "cublasCcopy", "cublasZcopy");
    syms!(SWAP: "cublasSswap", "cublasDswap", "cublasCswap", "cublasZswap");
    syms!(SCAL: "cublasSscal", "cublasDscal", "cublasCscal", "cublasZscal");
    // The real-scalar forms: csscal, zdscal (for real T, sscal and dscal).
    syms!(SCAL_REAL: "cublasSscal", "cublasDscal", "cublasCsscal", "cublasZdscal");
    syms!(DOTU: "cublasSdot", "cublasDdot", "cublasCdotu", "cublasZdotu");
    syms!(DOTC: "cublasSdot", "cublasDdot", "cublasCdotc", "cublasZdotc");
    syms!(NRM2: "cublasSnrm2", "cublasDnrm2", "cublasScnrm2", "cublasDznrm2");
    syms!(ASUM: "cublasSasum", "cublasDasum", "cublasScasum", "cublasDzasum");
    syms!(AMAX: "cublasIsamax", "cublasIdamax", "cublasIcamax", "cublasIzamax");
    syms!(GEMV: "cublasSgemv", "cublasDgemv", "cublasCgemv", "cublasZgemv");
    syms!(GERU: "cublasSger", "cublasDger", "cublasCgeru", "cublasZgeru");
    syms!(GERC: "cublasSger", "cublasDger", "cublasCgerc", "cublasZgerc");
    syms!(TRMV: "cublasStrmv", "cublasDtrmv", "cublasCtrmv", "cublasZtrmv");

    /// Whether every value fits the `int` of the `_v2` entry points.
    fn fits(v: &[i64]) -> bool {
        v.iter().all(|&v| i32::try_from(v).is_ok())
    }

    /// Call precision `$T`'s entry of `$syms`: the `_v2` one (`$I` = i32) when every value of
    /// `$sizes` fits an `int`, else the `_v2_64` one (`$I` = i64). `$c` converts an i64 to
    /// `$I` in `$call`; `$f` is the function, of type `$F<..., $I>`.
    macro_rules! sized {
        ($T:ty, $syms:expr, $sizes:expr, |$f:ident: $F:ident<$($p:ty),*>, $c:ident| $call:expr) => {{
            if fits($sizes) {
                let $c = |v: i64| v as i32;
                call(&$syms[0][<$T as Scalar>::INDEX], |$f: $F<$($p,)* i32>| $call)
            } else {
                let $c = |v: i64| v;
                call(&$syms[1][<$T as Scalar>::INDEX], |$f: $F<$($p,)* i64>| $call)
            }
        }};
    }

    fn no_zero_inc(incs: &[i64], what: &'static str) -> gpu::Result<()> {
        if incs.contains(&0) {
            Err(GpuError::Unsupported(what))
        } else {
            Ok(())
        }
    }

    /// y := alpha*x + y (nothing for n <= 0 or alpha == 0).
    pub fn axpy<T: Scalar>(ex: &Exec, n: i64, alpha: T, x: DVec, y: DVec) -> gpu::Result<()> {
        if n <= 0 || alpha.is_zero() {
            return Ok(());
        }
        no_zero_inc(&[x.inc, y.inc], "axpy with a zero increment")?;
        let al = A16(alpha);
        let (px, py) = (x.ptr as *const T, y.ptr as *mut T);
        // SAFETY: cuBLAS's axpy prototype; our handle on ex's stream; device operands as the
        // caller validated them (reference BLAS rules).
        unsafe {
            let h = own_handle(ex.rt, ex.stream)?;
            sized!(T, AXPY, &[n, x.inc, y.inc], |f: AxpyFn<T>, c| f(h, c(n), al.ptr(), px, c(x.inc), py, c(y.inc)))
        }
    }

    /// y := x (nothing for n <= 0).
    pub fn copy<T: Scalar>(ex: &Exec, n: i64, x: DVec, y: DVec) -> gpu::Result<()> {
        if n <= 0 {
            return Ok(());
        }
        no_zero_inc(&[x.inc, y.inc], "copy with a zero increment")?;
        let (px, py) = (x.ptr as *const T, y.ptr as *mut T);
        // SAFETY: as in `axpy`.
        unsafe {
            let h = own_handle(ex.rt, ex.stream)?;
            sized!(T, COPY, &[n, x.inc, y.inc], |f: CopyFn<T>, c| f(h, c(n), px, c(x.inc), py, c(y.inc)))
        }
    }

    /// x <-> y (nothing for n <= 0).
    pub fn swap<T: Scalar>(ex: &Exec, n: i64, x: DVec, y: DVec) -> gpu::Result<()> {
        if n <= 0 {
            return Ok(());
        }
        no_zero_inc(&[x.inc, y.inc], "swap with a zero increment")?;
        let (px, py) = (x.ptr as *mut T, y.ptr as *mut T);
        // SAFETY: as in `axpy`.
        unsafe {
            let h = own_handle(ex.rt, ex.stream)?;
            sized!(T, SWAP, &[n, x.inc, y.inc], |f: SwapFn<T>, c| f(h, c(n), px, c(x.inc), py, c(y.inc)))
        }
    }

    /// x := alpha*x (nothing for n <= 0, incx <= 0 or alpha == 1).
    pub fn scal<T: Scalar>(ex: &Exec, n: i64, alpha: T, x: DVec) -> gpu::Result<()> {
        scal_any::<T, T>(&SCAL, ex, n, alpha, x)
    }

    /// x := alpha*x with a real alpha: csscal, zdscal (sscal, dscal for real T).
    pub fn scal_real<T: Scalar>(ex: &Exec, n: i64, alpha: T::Real, x: DVec) -> gpu::Result<()> {
        scal_any::<T, T::Real>(&SCAL_REAL, ex, n, alpha, x)
    }

    fn scal_any<T: Scalar, A: Scalar>(syms: &'static Syms, ex: &Exec, n: i64, alpha: A, x: DVec) -> gpu::Result<()> {
        if n <= 0 || x.inc <= 0 || alpha.is_one() {
            return Ok(());
        }
        let al = A16(alpha);
        let px = x.ptr as *mut T;
        // SAFETY: as in `axpy`; `syms` holds the entry points whose alpha is an `A`.
        unsafe {
            let h = own_handle(ex.rt, ex.stream)?;
            sized!(T, syms, &[n, x.inc], |f: ScalFn<T, A>, c| f(h, c(n), al.ptr(), px, c(x.inc)))
        }
    }

    /// sum x_i*y_i (`conj`, complex T: sum conj(x_i)*y_i, the `dotc`); 0 for n <= 0.
    pub fn dot<T: Scalar>(ex: &Exec, n: i64, x: DVec, y: DVec, conj: bool) -> gpu::Result<T> {
        if n <= 0 {
            return Ok(T::zero());
        }
        no_zero_inc(&[x.inc, y.inc], "dot with a zero increment")?;
        let mut r = A16(T::zero());
        let (px, py, pr) = (x.ptr as *const T, y.ptr as *const T, &mut r.0 as *mut T);
        let syms = if conj { &DOTC } else { &DOTU };
        // SAFETY: as in `axpy`; the result is written to the host (host pointer mode).
        unsafe {
            let h = own_handle(ex.rt, ex.stream)?;
            sized!(T, syms, &[n, x.inc, y.inc], |f: DotFn<T>, c| f(h, c(n), px, c(x.inc), py, c(y.inc), pr))?;
        }
        Ok(r.0)
    }

    /// ||x||_2 (scnrm2, dznrm2 for complex T); 0 for n <= 0 or incx <= 0.
    pub fn nrm2<T: Scalar>(ex: &Exec, n: i64, x: DVec) -> gpu::Result<T::Real> {
        reduce::<T>(&NRM2, ex, n, x)
    }

    /// sum |re x_i| + |im x_i| (scasum, dzasum for complex T); 0 for n <= 0 or incx <= 0.
    pub fn asum<T: Scalar>(ex: &Exec, n: i64, x: DVec) -> gpu::Result<T::Real> {
        reduce::<T>(&ASUM, ex, n, x)
    }

    fn reduce<T: Scalar>(syms: &'static Syms, ex: &Exec, n: i64, x: DVec) -> gpu::Result<T::Real> {
        let zero = <T::Real as Scalar>::zero();
        if n <= 0 || x.inc <= 0 {
            return Ok(zero);
        }
        let mut r = A16(zero);
        let (px, pr) = (x.ptr as *const T, &mut r.0 as *mut T::Real);
        // SAFETY: as in `dot`.
        unsafe {
            let h = own_handle(ex.rt, ex.stream)?;
            sized!(T, syms, &[n, x.inc], |f: ReduceFn<T, T::Real>, c| f(h, c(n), px, c(x.inc), pr))?;
        }
        Ok(r.0)
    }

    /// The 1-based index of the first element of largest |re| + |im| (as BLAS `i?amax`); 0 for
    /// n <= 0 or incx <= 0. The `_v2_64` entry point writes an `int64_t`.
    pub fn iamax<T: Scalar>(ex: &Exec, n: i64, x: DVec) -> gpu::Result<i64> {
        if n <= 0 || x.inc <= 0 {
            return Ok(0);
        }
        let px = x.ptr as *const T;
        let i = T::INDEX;
        // SAFETY: as in `dot`.
        unsafe {
            let h = own_handle(ex.rt, ex.stream)?;
            if fits(&[n, x.inc]) {
                let mut r = A16(0i32);
                let pr = &mut r.0 as *mut i32;
                call(&AMAX[0][i], |f: ReduceFn<T, i32, i32>| f(h, n as i32, px, x.inc as i32, pr))?;
                Ok(r.0 as i64)
            } else {
                let mut r = A16(0i64);
                let pr = &mut r.0 as *mut i64;
                call(&AMAX[1][i], |f: ReduceFn<T, i64, i64>| f(h, n, px, x.inc, pr))?;
                Ok(r.0)
            }
        }
    }

    /// y := alpha*op(A)*x + beta*y, A m x n column-major, op = N, T or C (C is T for real T).
    /// Nothing for m or n <= 0, or alpha == 0 with beta == 1. alpha == 0 reads neither A nor x
    /// (reference BLAS; they may hold anything): y := beta*y is then cuBLAS's GEMM with k = 0
    /// on y as a 1 x len(y) matrix with ldc = |incy| (beta == 0 writes zeros).
    #[allow(clippy::too_many_arguments)]
    pub fn gemv<T: Scalar>(
        ex: &Exec,
        trans: Trans,
        m: i64,
        n: i64,
        alpha: T,
        a: DMat,
        x: DVec,
        beta: T,
        y: DVec,
    ) -> gpu::Result<()> {
        if m <= 0 || n <= 0 || (alpha.is_zero() && beta.is_one()) {
            return Ok(());
        }
        no_zero_inc(&[x.inc, y.inc], "gemv with a zero increment")?;
        if alpha.is_zero() {
            let leny = if trans == Trans::No { m } else { n };
            // The order of y's elements does not matter to a scaling: with a negative
            // increment they are the same elements, from the lowest address.
            let yc = DMat { ptr: y.ptr, ld: y.inc.abs() };
            let nil = DMat { ptr: y.ptr, ld: 1 };
            return vendor_gemm::<T>(ex, Trans::No, Trans::No, 1, leny, 0, alpha, nil, nil, beta, yc);
        }
        let (al, be) = (A16(alpha), A16(beta));
        let (pa, px, py) = (a.ptr as *const T, x.ptr as *const T, y.ptr as *mut T);
        let op = op_code(trans);
        // SAFETY: as in `axpy`.
        unsafe {
            let h = own_handle(ex.rt, ex.stream)?;
            sized!(T, GEMV, &[m, n, a.ld, x.inc, y.inc], |f: GemvFn<T>, c| {
                f(h, op, c(m), c(n), al.ptr(), pa, c(a.ld), px, c(x.inc), be.ptr(), py, c(y.inc))
            })
        }
    }

    /// A := alpha*x*y^T + A (`conj`, complex T: alpha*x*y^H + A, the `gerc`), A m x n
    /// column-major. Nothing for m or n <= 0 or alpha == 0.
    #[allow(clippy::too_many_arguments)]
    pub fn ger<T: Scalar>(
        ex: &Exec,
        m: i64,
        n: i64,
        alpha: T,
        x: DVec,
        y: DVec,
        a: DMat,
        conj: bool,
    ) -> gpu::Result<()> {
        if m <= 0 || n <= 0 || alpha.is_zero() {
            return Ok(());
        }
        no_zero_inc(&[x.inc, y.inc], "ger with a zero increment")?;
        let al = A16(alpha);
        let (px, py, pa) = (x.ptr as *const T, y.ptr as *const T, a.ptr as *mut T);
        let syms = if conj { &GERC } else { &GERU };
        // SAFETY: as in `axpy`.
        unsafe {
            let h = own_handle(ex.rt, ex.stream)?;
            sized!(T, syms, &[m, n, x.inc, y.inc, a.ld], |f: GerFn<T>, c| {
                f(h, c(m), c(n), al.ptr(), px, c(x.inc), py, c(y.inc), pa, c(a.ld))
            })
        }
    }

    /// x := op(A)*x, A n x n triangular (`uplo`, `diag`), column-major. Nothing for n <= 0.
    pub fn trmv<T: Scalar>(
        ex: &Exec,
        uplo: Uplo,
        trans: Trans,
        diag: Diag,
        n: i64,
        a: DMat,
        x: DVec,
    ) -> gpu::Result<()> {
        if n <= 0 {
            return Ok(());
        }
        no_zero_inc(&[x.inc], "trmv with a zero increment")?;
        let (pa, px) = (a.ptr as *const T, x.ptr as *mut T);
        let (u, t, d) = (fill_code(uplo), op_code(trans), diag_code(diag));
        // SAFETY: as in `axpy`.
        unsafe {
            let h = own_handle(ex.rt, ex.stream)?;
            sized!(T, TRMV, &[n, a.ld, x.inc], |f: TrmvFn<T>, c| f(h, u, t, d, c(n), pa, c(a.ld), px, c(x.inc)))
        }
    }
}
