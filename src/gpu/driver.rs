//! The CUDA driver API as hyblas uses it: `cudarc`'s raw bindings (loaded at run time) plus
//! one error type, so every driver call reads `check(unsafe { sys::cuX(..) }, "cuX")?`.

pub use cudarc::driver::sys;
use std::fmt;

/// Everything that can go wrong on the GPU side. Callers on the BLAS paths treat any error as
/// "use the CPU engine"; the cuBLAS layer maps them to `cublasStatus_t`.
#[derive(Clone, Debug)]
pub enum GpuError {
    /// No driver library, no device, `HYBLAS_DEVICE=cpu`, or a forked child.
    Unavailable(String),
    /// A driver call failed.
    Driver { call: &'static str, code: sys::CUresult },
    /// NVRTC failed to compile a kernel (the log is included).
    Compile(String),
    /// A request the GPU path does not handle (the caller falls back).
    Unsupported(&'static str),
    /// The kernel's compile unit is not loaded: it is being compiled (or read from the cache)
    /// in the background (`gpu::loader`), or its build failed (`state` says which). Nothing was
    /// launched; the caller takes the path that is ready (the real cuBLAS).
    NotReady { unit: String, state: String },
    /// Anything else (I/O of the cache, a bad recipe file, ...).
    Other(String),
    /// A failure after the call had written part of its output (the accurate DGEMM's certified
    /// elements, before the refused ones came back from the host): the output is incomplete.
    Partial(Box<GpuError>),
}

impl GpuError {
    /// Whether the call may have written part of its outputs before failing.
    pub fn wrote_outputs(&self) -> bool {
        matches!(self, GpuError::Partial(_))
    }
}

impl fmt::Display for GpuError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GpuError::Unavailable(why) => write!(f, "no GPU: {why}"),
            GpuError::Driver { call, code } => write!(f, "{call} failed: {code:?} ({})", error_string(*code)),
            GpuError::Compile(log) => write!(f, "NVRTC compile failed:\n{log}"),
            GpuError::Unsupported(what) => write!(f, "not supported on the GPU path: {what}"),
            GpuError::NotReady { unit, state } => write!(f, "kernel {state}: unit {unit}"),
            GpuError::Other(s) => f.write_str(s),
            GpuError::Partial(e) => write!(f, "{e} (after part of the output was written)"),
        }
    }
}

impl std::error::Error for GpuError {}

pub type Result<T> = std::result::Result<T, GpuError>;

/// Turn a `CUresult` into a `Result`.
#[inline]
pub fn check(code: sys::CUresult, call: &'static str) -> Result<()> {
    if code == sys::CUresult::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(GpuError::Driver { call, code })
    }
}

fn error_string(code: sys::CUresult) -> String {
    let mut p: *const std::ffi::c_char = std::ptr::null();
    // SAFETY: cuGetErrorString writes a pointer to a static string or leaves it null.
    unsafe {
        if sys::cuGetErrorString(code, &mut p) == sys::CUresult::CUDA_SUCCESS && !p.is_null() {
            return std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned();
        }
    }
    "unknown".into()
}

/// Whether `libcuda` can be loaded at all (cheap after the first call).
pub fn driver_present() -> bool {
    static PRESENT: once_cell::sync::OnceCell<bool> = once_cell::sync::OnceCell::new();
    // SAFETY: only tries to dlopen the library names.
    *PRESENT.get_or_init(|| unsafe { sys::is_culib_present() })
}

/// Whether `libnvrtc` can be loaded.
pub fn nvrtc_present() -> bool {
    static PRESENT: once_cell::sync::OnceCell<bool> = once_cell::sync::OnceCell::new();
    // SAFETY: only tries to dlopen the library names.
    *PRESENT.get_or_init(|| unsafe { cudarc::nvrtc::sys::is_culib_present() })
}

/// A raw driver handle that may move between threads. CUDA handles (functions, modules,
/// streams, contexts) are process-wide and usable from any thread once the context is current.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Handle<P>(pub P);
// SAFETY: see above; the driver synchronises access to these objects itself.
unsafe impl<P> Send for Handle<P> {}
unsafe impl<P> Sync for Handle<P> {}
