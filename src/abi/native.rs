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
