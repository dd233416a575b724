//! The native `hyblas_*` C API. `build.rs` runs cbindgen over this file to produce
//! `include/hyblas.h`; keep every item here `extern "C"` with plain C types.

use std::os::raw::{c_char, c_int};

/// Library version as a NUL-terminated string, e.g. "0.1.0".
#[no_mangle]
pub extern "C" fn hyblas_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr() as *const c_char
}

/// Threads the CPU engine uses for the next calls.
#[no_mangle]
pub extern "C" fn hyblas_get_num_threads() -> c_int {
    crate::cpu::threads::nthreads() as c_int
}

/// Set the threads the CPU engine uses (clamped to 1..the pool size, which is the larger of
/// the configured count and the cores).
#[no_mangle]
pub extern "C" fn hyblas_set_num_threads(n: c_int) {
    crate::cpu::threads::set_nthreads(n.max(1) as usize);
}

/// OpenBLAS-compatible thread control, so programs and tools written for OpenBLAS
/// (threadpoolctl, numpy) can steer hyblas the same way.
#[no_mangle]
pub extern "C" fn openblas_set_num_threads(n: c_int) {
    hyblas_set_num_threads(n);
}

/// OpenBLAS-compatible: threads in use.
#[no_mangle]
pub extern "C" fn openblas_get_num_threads() -> c_int {
    hyblas_get_num_threads()
}

/// Strassen-Winograd (seed 003) for this thread's next GEMMs on device memory (real data;
/// `cublasSgemm_v2`/`cublasDgemm_v2`, `cublasGemmEx` R_32F/R_64F, and `?gemm_`/`cblas_?gemm`
/// on device pointers): -1 auto (the model picks 0, 1 or 2 levels per call), 0 off, 1 to 4
/// levels forced wherever a call can run them, -2 back to `HYBLAS_STRASSEN` (default off: its
/// error bound is normwise and grows per level). Returns the thread's setting before (-2 when it
/// had none), or -3 for any other value, with nothing changed.
#[no_mangle]
pub extern "C" fn hyblas_set_strassen(mode: c_int) -> c_int {
    use crate::plan::gemm::{set_thread_strassen, Strassen};
    let new = match mode {
        -2 => None,
        m => match Strassen::from_code(m) {
            Some(s) => Some(s),
            None => return -3,
        },
    };
    set_thread_strassen(new).map_or(-2, Strassen::code)
}
