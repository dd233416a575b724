//! The harness the cuBLAS entry-layer tests share (`tests/gpu_cublas.rs`,
//! `tests/gpu_gemm_entry.rs`): pairs of hyblas's export and the real function, a real handle
//! on a user stream, device buffers, scalars in either pointer mode, bitwise and tolerance
//! comparisons. Included with `#[path = "common/cublas.rs"] mod harness;`.
#![allow(dead_code)]

use crate::common::*;
pub use hyblas::abi::cublas::A16;
use hyblas::abi::cublas::{self as cb, Handle, Status, Stream};
use hyblas::gpu::driver::sys;
use hyblas::gpu::{vendor, DeviceBuffer, Runtime};
use hyblas::types::Scalar;
use std::ffi::c_int;

pub const OK: Status = cb::CUBLAS_STATUS_SUCCESS;

/// hyblas's export and the real function of one name.
#[derive(Clone, Copy)]
pub struct P<F> {
    pub ours: F,
    pub real: F,
    pub name: &'static str,
}

pub fn real<F: Copy>(name: &'static str) -> F {
    unsafe { vendor::get::<F>(name) }.unwrap_or_else(|| panic!("the real {name} was not found"))
}

/// The size type of an entry point, as the tests build it.
pub trait TI: Copy + Default + std::fmt::Debug + PartialEq + 'static {
    fn of(v: i64) -> Self;
}
impl TI for i32 {
    fn of(v: i64) -> Self {
        v as i32
    }
}
impl TI for i64 {
    fn of(v: i64) -> Self {
        v
    }
}

extern "C" {
    fn cublasCreate_v2(handle: *mut Handle) -> Status;
    fn cublasDestroy_v2(handle: Handle) -> Status;
    fn cublasSetStream_v2(handle: Handle, stream: Stream) -> Status;
    fn cublasGetStream_v2(handle: Handle, stream: *mut Stream) -> Status;
    fn cublasSetPointerMode_v2(handle: Handle, mode: c_int) -> Status;
    fn cublasGetPointerMode_v2(handle: Handle, mode: *mut c_int) -> Status;
    fn cublasSetAtomicsMode(handle: Handle, mode: c_int) -> Status;
}

/// The tests of one binary run in parallel threads, and `up` and `fence` synchronize the whole
/// context: while a test holds its stream shut (gpu_cublas's held-stream test) they would wait
/// for it, and so would that test's watchdog. Every session holds this lock shared; that test
/// takes it alone ([`session_alone`]).
static ALONE: parking_lot::RwLock<()> = parking_lot::const_rwlock(());

/// A real cuBLAS handle (created through hyblas's forward) with a non-blocking user stream.
pub struct Session {
    pub rt: &'static Runtime,
    pub h: Handle,
    pub stream: sys::CUstream,
    _shared: Option<parking_lot::RwLockReadGuard<'static, ()>>,
}

impl Session {
    pub fn new(rt: &'static Runtime) -> Session {
        let shared = ALONE.read();
        let mut s = Session::unguarded(rt);
        s._shared = Some(shared);
        s
    }
    fn unguarded(rt: &'static Runtime) -> Session {
        let mut h: Handle = std::ptr::null_mut();
        assert_eq!(unsafe { cublasCreate_v2(&mut h) }, OK, "cublasCreate_v2");
        let mut stream = std::ptr::null_mut();
        let flags = sys::CUstream_flags::CU_STREAM_NON_BLOCKING as u32;
        assert_eq!(unsafe { sys::cuStreamCreate(&mut stream, flags) }, sys::CUresult::CUDA_SUCCESS);
        assert_eq!(unsafe { cublasSetStream_v2(h, stream as Stream) }, OK);
        let mut got: Stream = std::ptr::null_mut();
        assert_eq!(unsafe { cublasGetStream_v2(h, &mut got) }, OK);
        assert_eq!(got, stream as Stream, "the handle keeps the user stream");
        Session { rt, h, stream, _shared: None }
    }
    pub fn pointer_mode(&self, device: bool) {
        let want = if device { cb::CUBLAS_POINTER_MODE_DEVICE } else { cb::CUBLAS_POINTER_MODE_HOST };
        assert_eq!(unsafe { cublasSetPointerMode_v2(self.h, want) }, OK);
        let mut got = -1;
        assert_eq!(unsafe { cublasGetPointerMode_v2(self.h, &mut got) }, OK);
        assert_eq!(got, want);
    }
    pub fn atomics(&self, allowed: bool) {
        let mode = if allowed { cb::CUBLAS_ATOMICS_ALLOWED } else { cb::CUBLAS_ATOMICS_NOT_ALLOWED };
        assert_eq!(unsafe { cublasSetAtomicsMode(self.h, mode) }, OK);
    }
    /// Everything before (uploads through the legacy stream) is complete.
    pub fn fence(&self) {
        assert_eq!(unsafe { sys::cuCtxSynchronize() }, sys::CUresult::CUDA_SUCCESS);
    }
    pub fn sync(&self) {
        self.rt.sync(self.stream).expect("stream sync");
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        unsafe {
            cublasDestroy_v2(self.h);
            sys::cuStreamDestroy_v2(self.stream);
        }
    }
}

/// The GPU with a real cuBLAS present, or None after a SKIPPED line.
pub fn gpu_with_cublas(test: &str) -> Option<&'static Runtime> {
    let rt = gpu_or_skip(test)?;
    if !vendor::present() {
        eprintln!("SKIPPED {test}: no real cuBLAS found ({:?} not loadable)", vendor::LIBS);
        println!("SKIPPED {test}: no real cuBLAS found ({:?} not loadable)", vendor::LIBS);
        return None;
    }
    Some(rt)
}

/// The GPU and a real cuBLAS, or None after a SKIPPED line.
pub fn session(test: &str) -> Option<Session> {
    gpu_with_cublas(test).map(Session::new)
}

/// [`session`] for a test that must run with no other session alive in the process (the guard
/// lasts as long as the test keeps it).
pub fn session_alone(test: &str) -> Option<(parking_lot::RwLockWriteGuard<'static, ()>, Session)> {
    let rt = gpu_with_cublas(test)?;
    let alone = ALONE.write();
    Some((alone, Session::unguarded(rt)))
}

/// A device copy of `v`, complete before any later work on any stream (a pageable upload can
/// return before its DMA lands, and the user stream does not wait for the legacy stream).
pub fn up<T: Copy>(v: &[T]) -> DeviceBuffer {
    let b = DeviceBuffer::from_slice(v).expect("upload");
    assert_eq!(unsafe { sys::cuCtxSynchronize() }, sys::CUresult::CUDA_SUCCESS);
    b
}
pub fn down<T: Copy + Default>(b: &DeviceBuffer) -> Vec<T> {
    b.to_vec().expect("download")
}
pub fn dp<T>(b: &DeviceBuffer) -> *mut T {
    b.ptr as *mut T
}

/// A scalar argument in the pointer mode of the call.
pub struct Arg<T: Copy> {
    v: Box<A16<T>>,
    d: Option<DeviceBuffer>,
}
impl<T: Copy> Arg<T> {
    pub fn new(v: T, device: bool) -> Self {
        Arg { v: Box::new(A16(v)), d: device.then(|| up(&[v])) }
    }
    pub fn ptr(&self) -> *const T {
        self.d.as_ref().map_or(&self.v.0 as *const T, |b| b.ptr as *const T)
    }
}

pub fn bits<T: Scalar>(v: T) -> (u64, u64) {
    let c = to_c64(v);
    (c.re.to_bits(), c.im.to_bits())
}

/// Compare a column-major m x n output with leading dimension ld: rows < m within tolerance
/// (`k` terms), the padding rows exactly as they were.
#[allow(clippy::too_many_arguments)]
pub fn check_mat<T: Scalar>(got: &[T], want: &[T], orig: &[T], m: i64, n: i64, ld: i64, k: usize, what: &str) {
    let (mut g, mut w) = (Vec::new(), Vec::new());
    for j in 0..n {
        for i in 0..ld {
            let p = (i + j * ld) as usize;
            if i < m {
                g.push(got[p]);
                w.push(want[p]);
            } else {
                assert_eq!(bits(got[p]), bits(orig[p]), "{what}: padding ({i}, {j}) was written");
            }
        }
    }
    assert_close(&g, &w, k, what);
}
