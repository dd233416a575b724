//! The GPU side of hyblas: a lazily created runtime per device (context, streams,
//! workspaces, pinned staging, kernels compiled by NVRTC and cached on disk), the occupancy
//! model and block-shape tuner of seed 004, and the memory-bound Level 1/2 kernels.
//!
//! Map:
//! - `driver.rs`: the CUDA driver API (cudarc, loaded at run time) and `GpuError`.
//! - `runtime.rs`: the global runtime, device properties, stream scratch, device buffers,
//!   device-pointer detection.
//! - `nvrtc.rs`: compile (in this process, or in the `hyblas-nvrtc` helper process) + on-disk
//!   cubin cache (`cache_file.rs` writes entries whole). `kernels.rs`: embedded sources
//!   (`kernels/`) and their compile units, modules, functions, launches. `loader.rs`: units
//!   compiled and loaded by a background thread, so no call waits for the compiler.
//! - `occupancy.rs`, `tune.rs`: seed 004 (occupancies, recipes, the online choice).
//! - `level1.rs`, `gemv.rs`, `trmv.rs`: host sides of the kernels (one generic body per
//!   routine over the four precisions).
//! - `vendor.rs`: the real cuBLAS (found by `dlsym(RTLD_NEXT)` or loaded), the fallback and peer,
//!   and the parts of its C API hyblas uses; `vendor_calls.rs`: hyblas's own calls into it.
//! - `timing.rs`: CUDA-event timing for the tuner and benchmarks.
//!
//! Every function takes an [`Exec`] (runtime + stream) and device addresses; it enqueues
//! work and returns without waiting, except where a result goes to host memory.

// CUDA handles (`CUstream`, ...) are raw pointer types that we pass to the driver and never
// dereference, which this lint cannot tell.
#![allow(clippy::not_unsafe_ptr_arg_deref)]

pub mod batched;
pub mod cache_file;
pub mod driver;
pub mod gemv;
pub mod kernels;
pub mod level1;
pub mod loader;
pub mod nvrtc;
pub mod occupancy;
pub mod ozaki;
pub mod runtime;
pub mod splitk;
pub mod strassen;
pub mod timing;
pub mod trmv;
pub mod tune;
pub mod vendor;
pub mod vendor_calls;

pub use driver::{GpuError, Result};
pub use runtime::{DeviceBuffer, Runtime};

use crate::types::{Scalar, Trans};
use driver::sys;

/// A scalar input: a host value, or a device address holding it (cuBLAS device pointer mode).
#[derive(Clone, Copy, Debug)]
pub enum In<T> {
    Host(T),
    Dev(u64),
}

impl<T: Scalar> In<T> {
    /// The (value, pointer) pair kernels take: the pointer wins when non-zero.
    pub fn parts(self) -> (T, u64) {
        match self {
            In::Host(v) => (v, 0),
            In::Dev(p) => (T::zero(), p),
        }
    }
    /// The host value, if it is one (for quick returns decided on the host).
    pub fn host(self) -> Option<T> {
        match self {
            In::Host(v) => Some(v),
            In::Dev(_) => None,
        }
    }
}

/// A scalar result: host memory (the call waits for it) or a device address (it does not).
#[derive(Clone, Copy, Debug)]
pub enum Out<T> {
    Host(*mut T),
    Dev(u64),
}

/// A strided device vector as BLAS passes it: `ptr` is the address given, and with a
/// negative `inc` the first logical element is at `ptr + (n-1)*|inc|` (the kernels' `vidx`).
#[derive(Clone, Copy, Debug)]
pub struct DVec {
    pub ptr: u64,
    pub inc: i64,
}

/// A column-major device matrix: element (i, j) at `ptr + i + j*ld` (in elements).
#[derive(Clone, Copy, Debug)]
pub struct DMat {
    pub ptr: u64,
    pub ld: i64,
}

impl DVec {
    /// From a host-ABI argument pair (a pointer into device memory and its increment).
    pub fn of<T>(p: *const T, inc: isize) -> Self {
        DVec { ptr: p as u64, inc: inc as i64 }
    }
}

impl DMat {
    /// Whether every column of `T` elements starts on 16 bytes (the base and the leading
    /// dimension in bytes are multiples of 16), so a kernel may read columns with 16-byte loads.
    pub fn aligned16<T>(&self) -> bool {
        self.ptr.is_multiple_of(16) && (self.ld as u64 * std::mem::size_of::<T>() as u64).is_multiple_of(16)
    }
    pub fn of<T>(p: *const T, ld: isize) -> Self {
        DMat { ptr: p as u64, ld: ld as i64 }
    }
}

/// Where a call runs.
#[derive(Clone, Copy)]
pub struct Exec<'a> {
    pub rt: &'a Runtime,
    pub stream: sys::CUstream,
}

impl<'a> Exec<'a> {
    /// hyblas's own stream for this thread on `rt` (host-ABI calls with device operands).
    pub fn own(rt: &'a Runtime) -> Self {
        Exec { rt, stream: rt.own_stream() }
    }
    /// The kernel `P<name>` for precision `T` in `family` (cached, see `Runtime::kernel`).
    pub fn function<T: Scalar>(&self, family: kernels::Family, name: &'static str) -> Result<kernels::Function> {
        self.rt.kernel(kernels::Unit::of(family, T::PREFIX), name, "")
    }
    /// The kernel `P<name><suffix>` (`ddot` + `_part_v`).
    pub fn function_sfx<T: Scalar>(
        &self,
        family: kernels::Family,
        name: &'static str,
        suffix: &'static str,
    ) -> Result<kernels::Function> {
        self.rt.kernel(kernels::Unit::of(family, T::PREFIX), name, suffix)
    }
    /// The split-k kernel `P<name><suffix>` of configuration `variant`'s unit (`dgemm_skm16_tn`
    /// in `splitk_d_skm16`; `dgemm_sk_scale` is in every split-k unit of its precision).
    pub fn splitk_function<T: Scalar>(
        &self,
        variant: &'static str,
        name: &'static str,
        suffix: &'static str,
    ) -> Result<kernels::Function> {
        self.rt.kernel(kernels::Unit::splitk(T::PREFIX, variant), name, suffix)
    }
}

/// a / b rounded up, for a >= 0 and b > 0 (the host sides' decompositions; `i64::div_ceil`
/// is not stable for signed integers).
pub(crate) fn cdiv(a: i64, b: i64) -> i64 {
    (a + b - 1) / b
}

/// Whether GEMM's leading dimensions reach the reference's minimums (op(A) m x k, op(B) k x n,
/// C m x n, each at least 1): the kernels' own check before anything is enqueued.
#[allow(clippy::too_many_arguments)]
pub(crate) fn gemm_lds_ok(transa: Trans, transb: Trans, m: i64, n: i64, k: i64, lda: i64, ldb: i64, ldc: i64) -> bool {
    let rows_a = if transa == Trans::No { m } else { k };
    let rows_b = if transb == Trans::No { k } else { n };
    lda >= rows_a.max(1) && ldb >= rows_b.max(1) && ldc >= m.max(1)
}

/// Element size in bytes.
pub fn elem<T>() -> u32 {
    std::mem::size_of::<T>() as u32
}

/// Whether a GPU is usable in this process (creates the runtime on first call).
pub fn available() -> bool {
    Runtime::available()
}
