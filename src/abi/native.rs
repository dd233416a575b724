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

/// The DGEMM mode of this thread's next `dgemm_` / `cblas_dgemm` calls on host memory: 0 native,
/// 1 accurate (the Ozaki scheme, every element correctly rounded: the same bits whatever the
/// threads), 2 faithful (every element one of the two doubles around the exact value), -2 back
/// to `HYBLAS_DGEMM_MODE` (default native). Returns the thread's setting before (-2 when it had
/// none), or -3 for any other value, with nothing changed.
#[no_mangle]
pub extern "C" fn hyblas_set_dgemm_mode(mode: c_int) -> c_int {
    use crate::plan::accurate::{set_thread_mode, Mode};
    let new = match mode {
        -2 => None,
        m => match Mode::from_code(m) {
            Some(s) => Some(s),
            None => return -3,
        },
    };
    set_thread_mode(new).map_or(-2, Mode::code)
}

/// `cblas_dgemm` with a DGEMM mode for this call only (`mode` as in [`hyblas_set_dgemm_mode`],
/// 0-2; `layout`, `transa`, `transb` as in CBLAS). Returns 0, or -3 for a bad mode (nothing
/// done) or -1 after an internal error; bad arguments are reported as `cblas_dgemm` reports them.
///
/// # Safety
/// Pointers as in reference CBLAS.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn hyblas_dgemm_ex(
    mode: c_int,
    layout: c_int,
    transa: c_int,
    transb: c_int,
    m: c_int,
    n: c_int,
    k: c_int,
    alpha: f64,
    a: *const f64,
    lda: c_int,
    b: *const f64,
    ldb: c_int,
    beta: f64,
    c: *mut f64,
    ldc: c_int,
) -> c_int {
    let Some(mode) = crate::plan::accurate::Mode::from_code(mode) else {
        return -3;
    };
    // A panic (a bug) answers -1 instead of unwinding into C.
    crate::abi::boundary::guard("hyblas_dgemm_ex", || {
        crate::plan::accurate::with_mode(mode, || {
            crate::abi::cblas::level3::gemm::<f64, i32>(
                layout, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc,
            )
        });
        Some(0)
    })
    .unwrap_or(-1)
}
