//! The real cuBLAS: found with `dlsym(RTLD_NEXT, ...)` (hyblas preloaded or linked in front of
//! it), else by loading `libcublas.so.<major>` ourselves. The cuBLAS layer forwards to it and
//! the benchmarks time it as the peer. Here also the parts of its C API hyblas uses (statuses,
//! enum codes, handle and function types); `vendor_calls.rs` holds hyblas's own calls into it.

use once_cell::sync::Lazy;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::ffi::{c_int, c_void, CString};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Library names tried, newest first, when the symbol is not already loaded after us.
pub const LIBS: &[&str] = &["libcublas.so.13", "libcublas.so.12", "libcublas.so"];

struct LibHandle(*mut c_void);
unsafe impl Send for LibHandle {}
unsafe impl Sync for LibHandle {}

static LIB: Lazy<Option<LibHandle>> = Lazy::new(|| {
    for name in LIBS {
        let c = CString::new(*name).unwrap();
        // SAFETY: dlopen with a valid C string; RTLD_LOCAL keeps its symbols out of the global
        // scope so our own exports stay the ones other libraries resolve.
        let h = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if !h.is_null() {
            return Some(LibHandle(h));
        }
    }
    None
});

static CACHE: Lazy<Mutex<HashMap<&'static str, usize>>> = Lazy::new(|| Mutex::new(HashMap::new()));

/// Address of the real cuBLAS function `name` (e.g. `cublasSaxpy_v2`), or None where no
/// cuBLAS can be found. Never returns hyblas's own export of the same name.
pub fn lookup(name: &'static str) -> Option<*mut c_void> {
    if let Some(&p) = CACHE.lock().get(name) {
        return (p != 0).then_some(p as *mut c_void);
    }
    let c = CString::new(name).ok()?;
    let mut p = unsafe { libc::dlsym(libc::RTLD_NEXT, c.as_ptr()) };
    if p.is_null() || is_ours(p) {
        p = LIB.as_ref().map_or(std::ptr::null_mut(), |h| unsafe { libc::dlsym(h.0, c.as_ptr()) });
    }
    if !p.is_null() && is_ours(p) {
        p = std::ptr::null_mut();
    }
    CACHE.lock().insert(name, p as usize);
    (!p.is_null()).then_some(p)
}

/// Whether `p` lies in the object hyblas itself was loaded from.
fn is_ours(p: *mut c_void) -> bool {
    let mut a: libc::Dl_info = unsafe { std::mem::zeroed() };
    let mut b: libc::Dl_info = unsafe { std::mem::zeroed() };
    let here = is_ours as *const () as *const c_void;
    unsafe { libc::dladdr(p, &mut a) != 0 && libc::dladdr(here, &mut b) != 0 && a.dli_fbase == b.dli_fbase }
}

/// Typed access: `vendor::get::<unsafe extern "C" fn(...) -> i32>("cublasSaxpy_v2")`.
///
/// # Safety
/// `F` must be the function pointer type of the named symbol.
pub unsafe fn get<F: Copy>(name: &'static str) -> Option<F> {
    assert_eq!(std::mem::size_of::<F>(), std::mem::size_of::<*mut c_void>());
    lookup(name).map(|p| std::mem::transmute_copy::<*mut c_void, F>(&p))
}

/// Whether a real cuBLAS can be reached (one atomic load after the first call: host-ABI calls
/// on device memory ask it every time).
pub fn present() -> bool {
    static PRESENT: once_cell::sync::OnceCell<bool> = once_cell::sync::OnceCell::new();
    *PRESENT.get_or_init(|| lookup("cublasGetVersion_v2").is_some())
}

/// One real cuBLAS function, resolved on first use and then read with one atomic load: the
/// cuBLAS layer keeps one per exported symbol, so forwarding costs no lock or hash.
pub struct Sym {
    pub name: &'static str,
    /// 0: not resolved yet; 1: not found; else the address.
    addr: AtomicUsize,
}

const UNRESOLVED: usize = 0;
const MISSING: usize = 1;

impl Sym {
    pub const fn new(name: &'static str) -> Self {
        Sym { name, addr: AtomicUsize::new(UNRESOLVED) }
    }

    /// The address of the real function, or None where no cuBLAS can be found.
    pub fn addr(&self) -> Option<*mut c_void> {
        let mut a = self.addr.load(Ordering::Acquire);
        if a == UNRESOLVED {
            a = lookup(self.name).map_or(MISSING, |p| p as usize);
            self.addr.store(a, Ordering::Release);
        }
        (a != MISSING).then_some(a as *mut c_void)
    }

    /// Typed access, as [`get`].
    ///
    /// # Safety
    /// `F` must be the function pointer type of the named symbol.
    pub unsafe fn get<F: Copy>(&self) -> Option<F> {
        assert_eq!(std::mem::size_of::<F>(), std::mem::size_of::<*mut c_void>());
        self.addr().map(|p| std::mem::transmute_copy::<*mut c_void, F>(&p))
    }
}

// ---- The C API (cublas_api.h) ----

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
pub const CUBLAS_SIDE_LEFT: c_int = 0;
pub const CUBLAS_SIDE_RIGHT: c_int = 1;
pub const CUBLAS_FILL_MODE_LOWER: c_int = 0;
pub const CUBLAS_FILL_MODE_UPPER: c_int = 1;
pub const CUBLAS_DIAG_NON_UNIT: c_int = 0;
pub const CUBLAS_DIAG_UNIT: c_int = 1;
pub const CUBLAS_POINTER_MODE_HOST: c_int = 0;
pub const CUBLAS_POINTER_MODE_DEVICE: c_int = 1;
pub const CUBLAS_ATOMICS_NOT_ALLOWED: c_int = 0;
pub const CUBLAS_ATOMICS_ALLOWED: c_int = 1;

/// `cudaDataType_t` values hyblas runs in `cublasGemmEx`.
pub const CUDA_R_32F: c_int = 0;
pub const CUDA_R_64F: c_int = 1;
pub const CUDA_C_32F: c_int = 4;
pub const CUDA_C_64F: c_int = 5;
/// int8 and int32 (the accurate DGEMM's residue products).
pub const CUDA_R_8I: c_int = 3;
pub const CUDA_R_32I: c_int = 10;
/// `cublasComputeType_t` values hyblas runs in `cublasGemmEx` (full precision only).
pub const CUBLAS_COMPUTE_32F: c_int = 68;
pub const CUBLAS_COMPUTE_32F_PEDANTIC: c_int = 69;
/// `cublasMath_t`: CUBLAS_DEFAULT_MATH.
pub const CUBLAS_DEFAULT_MATH: c_int = 0;
pub const CUBLAS_COMPUTE_64F: c_int = 70;
pub const CUBLAS_COMPUTE_64F_PEDANTIC: c_int = 71;
/// Exact int32 accumulation of int8 products.
pub const CUBLAS_COMPUTE_32I: c_int = 72;
/// `cublasGemmAlgo_t`: DEFAULT (-1), ALGO0..23, DEFAULT_TENSOR_OP (99), ALGO0..15_TENSOR_OP.
pub const CUBLAS_GEMM_DEFAULT: c_int = -1;

/// `cublasHandle_t` (the real cuBLAS's, never dereferenced here).
pub type Handle = *mut c_void;
/// `cudaStream_t` (the same object as the driver's `CUstream`).
pub type Stream = *mut c_void;

/// The real functions' types, generic over the element `T` and the size type `I`.
pub type AxpyFn<T, I> = unsafe extern "C" fn(Handle, I, *const T, *const T, I, *mut T, I) -> Status;
pub type ScalFn<T, A, I> = unsafe extern "C" fn(Handle, I, *const A, *mut T, I) -> Status;
pub type CopyFn<T, I> = unsafe extern "C" fn(Handle, I, *const T, I, *mut T, I) -> Status;
pub type SwapFn<T, I> = unsafe extern "C" fn(Handle, I, *mut T, I, *mut T, I) -> Status;
pub type DotFn<T, I> = unsafe extern "C" fn(Handle, I, *const T, I, *const T, I, *mut T) -> Status;
pub type ReduceFn<T, R, I> = unsafe extern "C" fn(Handle, I, *const T, I, *mut R) -> Status;
pub type GemvFn<T, I> =
    unsafe extern "C" fn(Handle, c_int, I, I, *const T, *const T, I, *const T, I, *const T, *mut T, I) -> Status;
pub type GerFn<T, I> = unsafe extern "C" fn(Handle, I, I, *const T, *const T, I, *const T, I, *mut T, I) -> Status;
pub type TrmvFn<T, I> = unsafe extern "C" fn(Handle, c_int, c_int, c_int, I, *const T, I, *mut T, I) -> Status;
pub type GemmFn<T, I> = unsafe extern "C" fn(
    Handle,
    c_int,
    c_int,
    I,
    I,
    I,
    *const T,
    *const T,
    I,
    *const T,
    I,
    *const T,
    *mut T,
    I,
) -> Status;
pub type GemmExFn<I> = unsafe extern "C" fn(
    Handle,
    c_int,
    c_int,
    I,
    I,
    I,
    *const c_void,
    *const c_void,
    c_int,
    I,
    *const c_void,
    c_int,
    I,
    *const c_void,
    *mut c_void,
    c_int,
    I,
    c_int,
    c_int,
) -> Status;
/// `cublasGemmStridedBatchedEx`'s prototype (the `int` form; strides are `long long`).
pub type GemmStridedExFn = unsafe extern "C" fn(
    Handle,
    c_int,
    c_int,
    c_int,
    c_int,
    c_int,
    *const c_void,
    *const c_void,
    c_int,
    c_int,
    i64,
    *const c_void,
    c_int,
    c_int,
    i64,
    *const c_void,
    *mut c_void,
    c_int,
    c_int,
    i64,
    c_int,
    c_int,
    c_int,
) -> Status;
/// Strides are `long long` in both the `int` and the `_64` form; the batch count is `I`.
pub type GemmStridedFn<T, I> = unsafe extern "C" fn(
    Handle,
    c_int,
    c_int,
    I,
    I,
    I,
    *const T,
    *const T,
    I,
    i64,
    *const T,
    I,
    i64,
    *const T,
    *mut T,
    I,
    i64,
    I,
) -> Status;
/// `cublas?gemmBatched`: arrays (in device memory) of the products' operand addresses; the
/// batch count is `I`.
pub type GemmBatchedFn<T, I> = unsafe extern "C" fn(
    Handle,
    c_int,
    c_int,
    I,
    I,
    I,
    *const T,
    *const *const T,
    I,
    *const *const T,
    I,
    *const T,
    *const *mut T,
    I,
    I,
) -> Status;
/// Level 3 beyond GEMM (the `_v2` entry points; `S` the scalar type of alpha/beta, real for the
/// Hermitian rank updates).
pub type SyrkFn<T, S> = unsafe extern "C" fn(
    Handle,
    c_int,
    c_int,
    c_int,
    c_int,
    *const S,
    *const T,
    c_int,
    *const S,
    *mut T,
    c_int,
) -> Status;
pub type Syr2kFn<T, S> = unsafe extern "C" fn(
    Handle,
    c_int,
    c_int,
    c_int,
    c_int,
    *const T,
    *const T,
    c_int,
    *const T,
    c_int,
    *const S,
    *mut T,
    c_int,
) -> Status;
pub type SymmFn<T> = unsafe extern "C" fn(
    Handle,
    c_int,
    c_int,
    c_int,
    c_int,
    *const T,
    *const T,
    c_int,
    *const T,
    c_int,
    *const T,
    *mut T,
    c_int,
) -> Status;
pub type TrmmFn<T> = unsafe extern "C" fn(
    Handle,
    c_int,
    c_int,
    c_int,
    c_int,
    c_int,
    c_int,
    *const T,
    *const T,
    c_int,
    *const T,
    c_int,
    *mut T,
    c_int,
) -> Status;
pub type TrsmFn<T> = unsafe extern "C" fn(
    Handle,
    c_int,
    c_int,
    c_int,
    c_int,
    c_int,
    c_int,
    *const T,
    *const T,
    c_int,
    *mut T,
    c_int,
) -> Status;
