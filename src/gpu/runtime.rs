//! The global GPU runtime: one per device, created on the first call that could use it.
//!
//! It owns the device's primary context (the one the CUDA runtime and cuBLAS use, so pointers
//! and streams from a cuBLAS program are valid here), a pool of streams for hyblas's own work,
//! per-stream state (a grow-only device workspace and a small pinned staging buffer), the
//! device properties read once, and the kernel modules (`gpu::loader` gets them).
//!
//! Nothing here is touched after `fork()` in a child: CUDA contexts do not survive a fork, so
//! a child of a process that had started the runtime reports the GPU unavailable and stays on
//! the CPU engine.

use super::driver::{check, driver_present, sys, GpuError, Handle, Result};
use super::kernels::{Function, Unit};
use super::loader::{self, Modules};
use crate::config::{self, DeviceChoice};
use once_cell::sync::OnceCell;
use parking_lot::{Mutex, RwLock};
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Limits of one device, read once (`cuDeviceGetAttribute`).
#[derive(Clone, Debug)]
pub struct DeviceProps {
    pub ordinal: i32,
    pub name: String,
    /// Compute capability, e.g. (9, 0).
    pub cc: (i32, i32),
    pub sm_count: u32,
    pub warp_size: u32,
    pub max_threads_per_block: u32,
    pub max_threads_per_sm: u32,
    pub max_blocks_per_sm: u32,
    pub regs_per_sm: u32,
    pub regs_per_block: u32,
    pub smem_per_sm: u32,
    pub smem_per_block_optin: u32,
    pub reserved_smem_per_block: u32,
    pub l2_bytes: u64,
    pub total_mem: u64,
    pub driver_version: i32,
}

impl DeviceProps {
    /// An NVIDIA H200 as its driver reports it (CUDA 13): the models' and tests' Hopper when no
    /// GPU is at hand.
    pub fn h200() -> DeviceProps {
        DeviceProps {
            ordinal: 0,
            name: "NVIDIA H200".into(),
            cc: (9, 0),
            sm_count: 132,
            warp_size: 32,
            max_threads_per_block: 1024,
            max_threads_per_sm: 2048,
            max_blocks_per_sm: 32,
            regs_per_sm: 65536,
            regs_per_block: 65536,
            smem_per_sm: 233472,
            smem_per_block_optin: 232448,
            reserved_smem_per_block: 1024,
            l2_bytes: 50 << 20,
            total_mem: 141 << 30,
            driver_version: 13000,
        }
    }

    /// `sm_90` style architecture name for NVRTC.
    pub fn arch(&self) -> String {
        format!("sm_{}{}", self.cc.0, self.cc.1)
    }
    /// A name fit for file names: `nvidia-h200-sm90`.
    pub fn slug(&self) -> String {
        let mut s: String =
            self.name.to_lowercase().chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
        while s.contains("--") {
            s = s.replace("--", "-");
        }
        format!("{}-sm{}{}", s.trim_matches('-'), self.cc.0, self.cc.1)
    }
}

fn attr(dev: sys::CUdevice, a: sys::CUdevice_attribute) -> Result<i32> {
    let mut v = 0;
    // SAFETY: plain query into a local.
    check(unsafe { sys::cuDeviceGetAttribute(&mut v, a, dev) }, "cuDeviceGetAttribute")?;
    Ok(v)
}

fn read_props(ordinal: i32, dev: sys::CUdevice) -> Result<DeviceProps> {
    use sys::CUdevice_attribute as A;
    let mut name = [0 as std::ffi::c_char; 256];
    // SAFETY: the buffer is 256 bytes and its length is passed.
    check(unsafe { sys::cuDeviceGetName(name.as_mut_ptr(), 256, dev) }, "cuDeviceGetName")?;
    let name = unsafe { std::ffi::CStr::from_ptr(name.as_ptr()) }.to_string_lossy().into_owned();
    let mut total = 0usize;
    check(unsafe { sys::cuDeviceTotalMem_v2(&mut total, dev) }, "cuDeviceTotalMem")?;
    let mut driver_version = 0;
    check(unsafe { sys::cuDriverGetVersion(&mut driver_version) }, "cuDriverGetVersion")?;
    Ok(DeviceProps {
        ordinal,
        name,
        cc: (
            attr(dev, A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
            attr(dev, A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?,
        ),
        sm_count: attr(dev, A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as u32,
        warp_size: attr(dev, A::CU_DEVICE_ATTRIBUTE_WARP_SIZE)? as u32,
        max_threads_per_block: attr(dev, A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)? as u32,
        max_threads_per_sm: attr(dev, A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR)? as u32,
        max_blocks_per_sm: attr(dev, A::CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR)? as u32,
        regs_per_sm: attr(dev, A::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR)? as u32,
        regs_per_block: attr(dev, A::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK)? as u32,
        smem_per_sm: attr(dev, A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR)? as u32,
        smem_per_block_optin: attr(dev, A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)? as u32,
        reserved_smem_per_block: attr(dev, A::CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK)? as u32,
        l2_bytes: attr(dev, A::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)? as u64,
        total_mem: total as u64,
        driver_version,
    })
}

/// A device buffer that frees itself. Used for workspaces and by tests and benchmarks.
#[derive(Debug)]
pub struct DeviceBuffer {
    pub ptr: sys::CUdeviceptr,
    pub bytes: usize,
}

impl DeviceBuffer {
    /// Allocate `bytes` (at least 1) on the current context.
    pub fn new(bytes: usize) -> Result<Self> {
        let mut ptr = 0;
        check(unsafe { sys::cuMemAlloc_v2(&mut ptr, bytes.max(1)) }, "cuMemAlloc")?;
        Ok(DeviceBuffer { ptr, bytes })
    }
    /// Allocate and copy `data` in (synchronous).
    pub fn from_slice<T: Copy>(data: &[T]) -> Result<Self> {
        let b = Self::new(std::mem::size_of_val(data))?;
        if !data.is_empty() {
            check(unsafe { sys::cuMemcpyHtoD_v2(b.ptr, data.as_ptr() as *const c_void, b.bytes) }, "cuMemcpyHtoD")?;
        }
        Ok(b)
    }
    /// Copy the whole buffer out (synchronous).
    pub fn to_vec<T: Copy + Default>(&self) -> Result<Vec<T>> {
        let n = self.bytes / std::mem::size_of::<T>();
        let mut v = vec![T::default(); n];
        if n > 0 {
            check(
                unsafe { sys::cuMemcpyDtoH_v2(v.as_mut_ptr() as *mut c_void, self.ptr, self.bytes) },
                "cuMemcpyDtoH",
            )?;
        }
        Ok(v)
    }
    /// Overwrite the buffer with `data` (synchronous; `data` must fit).
    pub fn write<T: Copy>(&self, data: &[T]) -> Result<()> {
        let bytes = std::mem::size_of_val(data);
        assert!(bytes <= self.bytes);
        if bytes > 0 {
            check(unsafe { sys::cuMemcpyHtoD_v2(self.ptr, data.as_ptr() as *const c_void, bytes) }, "cuMemcpyHtoD")?;
        }
        Ok(())
    }
}

impl Drop for DeviceBuffer {
    fn drop(&mut self) {
        // SAFETY: ptr came from cuMemAlloc and is freed once. Errors at teardown are ignored.
        unsafe {
            sys::cuMemFree_v2(self.ptr);
        }
    }
}

/// Pinned host memory (page-locked), mapped into the device's address space: kernels write
/// results for the host straight into it.
struct Pinned {
    ptr: *mut u8,
    /// The same memory's device address (queried once, at allocation).
    dev: sys::CUdeviceptr,
    bytes: usize,
}
unsafe impl Send for Pinned {}

impl Drop for Pinned {
    fn drop(&mut self) {
        unsafe {
            sys::cuMemFreeHost(self.ptr as *mut c_void);
        }
    }
}

/// The empty word of the partial slots ([`StreamScratch::slots`]; `SK_EMPTY` in
/// kernels/gemm_splitk.cu): a NaN as a float, and twice over as a double, with a payload no
/// arithmetic produces (the GPU's NaN results are 0x7FFFFFFF...).
pub const SLOT_EMPTY: u32 = 0x7FF5_A5A5;

/// Per-stream scratch: the workspace partial results go through and the staging buffer
/// results come back through. Locked for the whole enqueue of one call, so two host threads
/// sharing a stream take turns; the stream orders the kernels that use it.
pub struct StreamScratch {
    workspace: Option<DeviceBuffer>,
    slots: Option<DeviceBuffer>,
    pinned: Option<Pinned>,
    stream: sys::CUstream,
}
// SAFETY: the stream handle is process-wide; the scratch is only used under its mutex.
unsafe impl Send for StreamScratch {}

impl StreamScratch {
    /// A device workspace of at least `bytes`. Grow-only: a larger request synchronises the
    /// stream (earlier kernels may still read the old buffer) and reallocates with headroom.
    pub fn workspace(&mut self, bytes: usize) -> Result<sys::CUdeviceptr> {
        if self.workspace.as_ref().is_none_or(|w| w.bytes < bytes) {
            if self.workspace.is_some() {
                check(unsafe { sys::cuStreamSynchronize(self.stream) }, "cuStreamSynchronize")?;
            }
            self.workspace = None;
            let want = bytes.max(1 << 20).next_power_of_two();
            self.workspace = Some(DeviceBuffer::new(want)?);
        }
        Ok(self.workspace.as_ref().unwrap().ptr)
    }
    /// At least `bytes` of partial slots for kernels that pass results between blocks (split-k's
    /// cross-block reduction): every 32-bit word holds [`SLOT_EMPTY`] whenever no such kernel
    /// is running. A kernel writes each word of a slot once, and the block that reads it (after
    /// waiting until it is no longer empty) sets it back to empty, so the words are filled once,
    /// when allocated. Grow-only like the workspace.
    pub fn slots(&mut self, bytes: usize) -> Result<sys::CUdeviceptr> {
        if self.slots.as_ref().is_none_or(|w| w.bytes < bytes) {
            if self.slots.is_some() {
                check(unsafe { sys::cuStreamSynchronize(self.stream) }, "cuStreamSynchronize")?;
            }
            self.slots = None;
            let buf = DeviceBuffer::new(bytes.max(1 << 16).next_power_of_two())?;
            // On this stream: the plain memset is asynchronous to the host on the legacy
            // stream, which a non-blocking stream does not wait for (a kernel could read the
            // slots before the pattern lands).
            check(
                unsafe { sys::cuMemsetD32Async(buf.ptr, SLOT_EMPTY, buf.bytes / 4, self.stream) },
                "cuMemsetD32Async",
            )?;
            self.slots = Some(buf);
        }
        Ok(self.slots.as_ref().unwrap().ptr)
    }
    /// A pinned host buffer of at least `bytes` (for results the caller reads on the host):
    /// its host address and its device address.
    pub fn pinned(&mut self, bytes: usize) -> Result<(*mut u8, sys::CUdeviceptr)> {
        if self.pinned.as_ref().is_none_or(|p| p.bytes < bytes) {
            self.pinned = None;
            let want = bytes.max(4096).next_power_of_two();
            let mut p: *mut c_void = std::ptr::null_mut();
            check(unsafe { sys::cuMemHostAlloc(&mut p, want, 0) }, "cuMemHostAlloc")?;
            // Owned (freed on drop) before the query, so a failure leaks nothing.
            let mut pinned = Pinned { ptr: p as *mut u8, dev: 0, bytes: want };
            check(unsafe { sys::cuMemHostGetDevicePointer_v2(&mut pinned.dev, p, 0) }, "cuMemHostGetDevicePointer")?;
            self.pinned = Some(pinned);
        }
        let p = self.pinned.as_ref().unwrap();
        Ok((p.ptr, p.dev))
    }
    pub fn stream(&self) -> sys::CUstream {
        self.stream
    }
}

/// The runtime of one device.
pub struct Runtime {
    pub props: DeviceProps,
    ctx: Handle<sys::CUcontext>,
    /// hyblas's own streams (blocking, so they order with the legacy default stream).
    streams: Vec<Handle<sys::CUstream>>,
    scratch: Mutex<HashMap<usize, Arc<Mutex<StreamScratch>>>>,
    /// The compile units' modules: loaded, or on their way (`gpu::loader`).
    pub modules: Modules,
    /// Functions already looked up, keyed by (unit, name, suffix): the launch path's lookup
    /// takes a read lock and allocates nothing.
    kernels: RwLock<HashMap<KernelKey, Function>>,
}

type KernelKey = (Unit, &'static str, &'static str);

/// Streams in the pool (hyblas's host-ABI calls pick one per calling thread).
const STREAMS: usize = 4;

static INIT_STARTED: AtomicBool = AtomicBool::new(false);
static FORKED_CHILD: AtomicBool = AtomicBool::new(false);
type Slot = OnceCell<std::result::Result<&'static Runtime, GpuError>>;
/// Devices a process can use (more than any node has); a fixed array, so the hot path of
/// `get` takes no lock.
const MAX_DEVICES: usize = 64;
static RUNTIMES: [Slot; MAX_DEVICES] = [const { OnceCell::new() }; MAX_DEVICES];

extern "C" fn atfork_child() {
    if INIT_STARTED.load(Ordering::SeqCst) {
        FORKED_CHILD.store(true, Ordering::SeqCst);
    }
}

impl Runtime {
    /// The runtime of device `ordinal`, created on first use. Errors (no driver, no device,
    /// `HYBLAS_DEVICE=cpu`, a forked child) are remembered: a process asks the driver once.
    pub fn get(ordinal: i32) -> Result<&'static Runtime> {
        if FORKED_CHILD.load(Ordering::Relaxed) {
            return Err(GpuError::Unavailable("forked child of a process that used the GPU".into()));
        }
        if ordinal < 0 || ordinal as usize >= MAX_DEVICES {
            return Err(GpuError::Unavailable(format!("bad device ordinal {ordinal}")));
        }
        RUNTIMES[ordinal as usize].get_or_init(|| Self::create(ordinal).map(|rt| &*Box::leak(Box::new(rt)))).clone()
    }

    /// The runtime of the device whose context is current on this thread (a cuBLAS caller's),
    /// else of device 0. Makes that device's primary context current.
    pub fn current() -> Result<&'static Runtime> {
        // Fast path: the thread's current context is device 0's primary context, already
        // bound. The driver is asked only once a runtime exists (without a driver, cudarc
        // panics on the first driver call).
        if let Some(rt) = Self::first() {
            let mut cur = std::ptr::null_mut();
            if unsafe { sys::cuCtxGetCurrent(&mut cur) } == sys::CUresult::CUDA_SUCCESS && cur == rt.ctx.0 {
                return Ok(rt);
            }
        }
        let ordinal = current_ordinal().unwrap_or(0);
        let rt = Self::get(ordinal)?;
        rt.bind()?;
        Ok(rt)
    }

    /// Device 0's runtime when `ctx` (the thread's current context, as the caller read it) is
    /// its primary context and this is not a forked child: the one-comparison fast path of
    /// [`Runtime::current`], for callers that have read the current context already.
    pub fn bound_to(ctx: sys::CUcontext) -> Option<&'static Runtime> {
        Self::first().filter(|rt| !ctx.is_null() && ctx == rt.ctx.0)
    }

    /// Device 0's runtime if it was created and this is not a forked child.
    fn first() -> Option<&'static Runtime> {
        match (FORKED_CHILD.load(Ordering::Relaxed), RUNTIMES[0].get()) {
            (false, Some(Ok(rt))) => Some(rt),
            _ => None,
        }
    }

    /// Whether device 0's runtime exists already (this process asked for the GPU before):
    /// cheap, and never creates one.
    pub fn started() -> bool {
        Self::first().is_some()
    }

    /// Whether a GPU is usable, without creating anything if it was never asked for.
    pub fn available() -> bool {
        config::get().device != DeviceChoice::Cpu && driver_present() && Self::get(0).is_ok()
    }

    fn create(ordinal: i32) -> Result<Runtime> {
        if config::get().device == DeviceChoice::Cpu {
            return Err(GpuError::Unavailable("HYBLAS_DEVICE=cpu".into()));
        }
        if !driver_present() {
            return Err(GpuError::Unavailable("no NVIDIA driver (libcuda not found)".into()));
        }
        if !INIT_STARTED.swap(true, Ordering::SeqCst) {
            // SAFETY: registers a handler that only stores to an atomic.
            unsafe {
                libc::pthread_atfork(None, None, Some(atfork_child));
            }
        }
        check(unsafe { sys::cuInit(0) }, "cuInit")
            .map_err(|e| GpuError::Unavailable(format!("driver present but cuInit failed: {e}")))?;
        let mut count = 0;
        check(unsafe { sys::cuDeviceGetCount(&mut count) }, "cuDeviceGetCount")?;
        if ordinal >= count {
            return Err(GpuError::Unavailable(format!("device {ordinal} requested, {count} present")));
        }
        let mut dev = 0;
        check(unsafe { sys::cuDeviceGet(&mut dev, ordinal) }, "cuDeviceGet")?;
        let props = read_props(ordinal, dev)?;
        let mut ctx = std::ptr::null_mut();
        check(unsafe { sys::cuDevicePrimaryCtxRetain(&mut ctx, dev) }, "cuDevicePrimaryCtxRetain")?;
        check(unsafe { sys::cuCtxSetCurrent(ctx) }, "cuCtxSetCurrent")?;
        let mut streams = Vec::with_capacity(STREAMS);
        for _ in 0..STREAMS {
            let mut s = std::ptr::null_mut();
            check(unsafe { sys::cuStreamCreate(&mut s, 0) }, "cuStreamCreate")?;
            streams.push(Handle(s));
        }
        Ok(Runtime {
            props,
            ctx: Handle(ctx),
            streams,
            scratch: Mutex::new(HashMap::new()),
            modules: Modules::default(),
            kernels: RwLock::new(HashMap::new()),
        })
    }

    /// Make this device's primary context current on the calling thread (cheap if it is).
    pub fn bind(&self) -> Result<()> {
        let mut cur = std::ptr::null_mut();
        check(unsafe { sys::cuCtxGetCurrent(&mut cur) }, "cuCtxGetCurrent")?;
        if cur != self.ctx.0 {
            check(unsafe { sys::cuCtxSetCurrent(self.ctx.0) }, "cuCtxSetCurrent")?;
        }
        Ok(())
    }

    /// One of hyblas's own streams, fixed per calling thread (so a thread's calls stay ordered).
    pub fn own_stream(&self) -> sys::CUstream {
        thread_local!(static PICK: usize = {
            static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
            NEXT.fetch_add(1, Ordering::Relaxed)
        });
        let i = PICK.with(|p| *p) % self.streams.len();
        self.streams[i].0
    }

    /// The scratch of `stream` (created on first use). Lock it for the whole enqueue.
    pub fn scratch(&self, stream: sys::CUstream) -> Arc<Mutex<StreamScratch>> {
        self.scratch
            .lock()
            .entry(stream as usize)
            .or_insert_with(|| {
                Arc::new(Mutex::new(StreamScratch { workspace: None, slots: None, pinned: None, stream }))
            })
            .clone()
    }

    /// Kernel `name` (the full name, `dgemv_n`) of compile unit `unit`. A unit not loaded yet is
    /// queued for the background thread; this waits for it or answers `NotReady`
    /// (`loader::waiting`).
    pub fn function(&self, unit: Unit, name: &str) -> Result<Function> {
        self.modules.get(self, unit, loader::waiting())?.function(name)
    }

    /// Wait until every unit of `units` is loaded (compiled in the background first where the
    /// cache does not hold it): for programs that want hyblas's kernels from their next call
    /// on (the demo, benchmarks).
    pub fn prepare(&self, units: &[Unit]) -> Result<()> {
        units.iter().try_for_each(|&u| self.modules.get(self, u, true).map(|_| ()))
    }

    /// Kernel `{prec}{name}{suffix}` of `unit` (e.g. `d` + "dot" + "_part_v" in `level1_d`),
    /// cached: the name is only put together on the first call.
    pub fn kernel(&self, unit: Unit, name: &'static str, suffix: &'static str) -> Result<Function> {
        let key = (unit, name, suffix);
        if let Some(f) = self.kernels.read().get(&key) {
            return Ok(*f);
        }
        let f = self.function(unit, &format!("{}{name}{suffix}", unit.prec))?;
        self.kernels.write().insert(key, f);
        Ok(f)
    }

    pub fn sync(&self, stream: sys::CUstream) -> Result<()> {
        check(unsafe { sys::cuStreamSynchronize(stream) }, "cuStreamSynchronize")
    }
}

/// The device of the context current on this thread, if any.
pub fn current_ordinal() -> Option<i32> {
    if !driver_present() {
        return None;
    }
    let mut ctx = std::ptr::null_mut();
    unsafe {
        if sys::cuCtxGetCurrent(&mut ctx) != sys::CUresult::CUDA_SUCCESS || ctx.is_null() {
            return None;
        }
        let mut dev = 0;
        if sys::cuCtxGetDevice(&mut dev) != sys::CUresult::CUDA_SUCCESS {
            return None;
        }
        Some(dev)
    }
}

/// Whether `p` points into device memory (or managed memory) that this process can use.
/// Host pointers, including pinned host memory, answer false; so does everything when no
/// driver is loaded or the runtime was never started. Called by the host ABI on Level 1/2
/// operands, so it must be cheap when there is no GPU: it asks the driver only after the
/// runtime exists or a context is current.
pub fn is_device_pointer(p: *const c_void) -> bool {
    if p.is_null() || FORKED_CHILD.load(Ordering::Relaxed) || !driver_present() {
        return false;
    }
    if !INIT_STARTED.load(Ordering::Relaxed) && current_ordinal().is_none() {
        return false;
    }
    let mut mem_type: u32 = 0;
    let r = unsafe {
        sys::cuPointerGetAttribute(
            &mut mem_type as *mut u32 as *mut c_void,
            sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
            p as sys::CUdeviceptr,
        )
    };
    r == sys::CUresult::CUDA_SUCCESS && mem_type == sys::CUmemorytype::CU_MEMORYTYPE_DEVICE as u32
}
