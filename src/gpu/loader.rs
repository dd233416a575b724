//! Getting a compile unit's module without ever making a call wait for the compiler.
//!
//! The first call that needs a unit (`kernels::Unit`) queues it and, when it came through a
//! router (the cuBLAS layer, host-ABI calls on device memory: [`routed`]), gets
//! [`GpuError::NotReady`] at once and takes the path that is ready (the real cuBLAS). One
//! background thread per process takes the queue in order: the cubin from the cache (found
//! without loading NVRTC), else a compile in the helper process (`nvrtc::compile_in_helper`,
//! lowest CPU priority), then the module load. Later calls find the module ready. So at most
//! one compile runs per process at a time, and a unit is compiled once however many threads
//! ask for it.
//!
//! Callers that asked for hyblas's kernel itself wait for it: engine calls made directly (tests,
//! benchmarks, `hyblas tune`), calls with the route forced (`HYBLAS_CUBLAS=hyblas`), and every
//! call under `HYBLAS_COMPILE=wait`.
//!
//! Where the helper cannot be started (no executable place for it), the thread compiles in this
//! process; process exit then waits for a compile in flight, since exiting under a running
//! NVRTC compile crashes the process.

use super::driver::{GpuError, Result};
use super::kernels::{Module, Unit};
use super::nvrtc::{self, HelperError};
use super::runtime::Runtime;
use once_cell::sync::Lazy;
use parking_lot::{Condvar, Mutex};
use std::cell::Cell;
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Instant;

/// Where a unit stands in this process.
enum Slot {
    /// Queued or being built; the word names the step (`compiling`, `loading`).
    Pending(&'static str),
    Ready(Arc<Module>),
    /// The build failed (a compile error, a driver error): calls keep taking the other path.
    Failed(GpuError),
}

/// One runtime's units: what is loaded, what is on its way.
#[derive(Default)]
pub struct Modules {
    slots: Mutex<HashMap<Unit, Slot>>,
    changed: Condvar,
}

impl Modules {
    /// The module of `unit` on `rt`: at once if it is loaded; else queued for the background
    /// thread, and then `NotReady` (`wait` false) or the module once built (`wait` true).
    pub fn get(&self, rt: &Runtime, unit: Unit, wait: bool) -> Result<Arc<Module>> {
        let mut slots = self.slots.lock();
        loop {
            match slots.get(&unit) {
                Some(Slot::Ready(m)) => return Ok(m.clone()),
                // Nothing of the unit can run: the caller takes the other path, as while it
                // compiled (the error is in the trace line of every such call).
                Some(Slot::Failed(e)) => {
                    return Err(GpuError::NotReady { unit: unit.name(), state: format!("unavailable ({e})") })
                }
                Some(Slot::Pending(state)) => {
                    if !wait {
                        return Err(GpuError::NotReady { unit: unit.name(), state: state.to_string() });
                    }
                    self.changed.wait(&mut slots);
                }
                None => {
                    slots.insert(unit, Slot::Pending("compiling"));
                    if let Err(e) = enqueue(rt.props.ordinal, unit) {
                        slots.insert(unit, Slot::Failed(e));
                    }
                }
            }
        }
    }

    /// Whether `unit` is loaded (no side effect).
    pub fn is_ready(&self, unit: Unit) -> bool {
        matches!(self.slots.lock().get(&unit), Some(Slot::Ready(_)))
    }

    fn set(&self, unit: Unit, slot: Slot) {
        self.slots.lock().insert(unit, slot);
        self.changed.notify_all();
    }
}

// ---- Who waits ----

/// `HYBLAS_COMPILE`: `background` (default) or `wait` (every call waits for its kernel, as
/// before the background compiler; for benchmarks that time hyblas's kernels from the first
/// call).
static WAIT_ALWAYS: Lazy<bool> = Lazy::new(|| match crate::config::value("HYBLAS_COMPILE").as_deref().map(str::trim) {
    None | Some("") | Some("background") => false,
    Some("wait") => true,
    Some(other) => {
        eprintln!("hyblas: HYBLAS_COMPILE={other} is not background or wait; using background");
        false
    }
});

thread_local! {
    static NO_WAIT: Cell<bool> = const { Cell::new(false) };
}

/// Whether a kernel lookup on this thread waits for its unit.
pub fn waiting() -> bool {
    *WAIT_ALWAYS || !NO_WAIT.with(|c| c.get())
}

/// Whether every call waits for its kernel (`HYBLAS_COMPILE=wait`).
pub fn wait_always() -> bool {
    *WAIT_ALWAYS
}

/// Run `f`, a routed call's hyblas side: its kernel lookups answer `NotReady` rather than wait
/// for a unit on its way, unless `wait_for_kernel` (the route was forced to hyblas) or
/// `HYBLAS_COMPILE=wait`.
pub fn routed<R>(wait_for_kernel: bool, f: impl FnOnce() -> R) -> R {
    crate::config::with_local(&NO_WAIT, !wait_for_kernel, f)
}

// ---- The background thread ----

struct Queue {
    /// (device, unit, when it was asked for).
    jobs: Mutex<VecDeque<(i32, Unit, Instant)>>,
    ready: Condvar,
}

/// `HYBLAS_COMPILE_DELAY_MS`: a compile starts this long after its unit was first asked for
/// (default 200). The call that asked, and the program's other first calls right after it, are
/// loading cuBLAS's own kernels then; a compile helper started beside them (a process reading
/// the 110 MB libnvrtc) made PyTorch's first float64 product 1.26x plain cuBLAS's on an H200
/// (C program: within the noise). Cache reads are not delayed.
static COMPILE_DELAY: Lazy<std::time::Duration> =
    Lazy::new(|| std::time::Duration::from_millis(crate::config::threshold("HYBLAS_COMPILE_DELAY_MS", 200) as u64));

static QUEUE: Lazy<Queue> = Lazy::new(|| Queue { jobs: Mutex::new(VecDeque::new()), ready: Condvar::new() });

/// Whether the thread was started (and whether that worked).
static WORKER: once_cell::sync::OnceCell<std::result::Result<(), String>> = once_cell::sync::OnceCell::new();

fn enqueue(ordinal: i32, unit: Unit) -> Result<()> {
    let started = WORKER.get_or_init(|| {
        std::thread::Builder::new().name("hyblas-compile".into()).spawn(worker).map(|_| ()).map_err(|e| e.to_string())
    });
    if let Err(e) = started {
        return Err(GpuError::Unavailable(format!("cannot start the kernel compile thread: {e}")));
    }
    QUEUE.jobs.lock().push_back((ordinal, unit, Instant::now()));
    QUEUE.ready.notify_one();
    Ok(())
}

fn worker() {
    // SAFETY: lowers this thread's own priority (Linux applies it per thread); it matters only
    // for the in-process fallback compile and the cache read.
    unsafe {
        libc::setpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t, 19);
    }
    loop {
        let (ordinal, unit, asked) = {
            let mut jobs = QUEUE.jobs.lock();
            loop {
                if let Some(j) = jobs.pop_front() {
                    break j;
                }
                QUEUE.ready.wait(&mut jobs);
            }
        };
        // The runtime exists: the job was queued through it.
        let Ok(rt) = Runtime::get(ordinal) else { continue };
        let slot = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| build(rt, unit, asked))) {
            Ok(Ok(m)) => Slot::Ready(Arc::new(m)),
            Ok(Err(e)) => Slot::Failed(e),
            Err(_) => Slot::Failed(GpuError::Other(format!("building {unit} panicked"))),
        };
        rt.modules.set(unit, slot);
    }
}

/// The cubin of `unit` for `rt`'s device, from the cache or compiled, loaded as a module.
fn build(rt: &Runtime, unit: Unit, asked: Instant) -> Result<Module> {
    let (name, source, arch) = (unit.name(), unit.source(), rt.props.arch());
    // Cached by any NVRTC, newest first: a cubin the driver refuses (a newer NVRTC's than this
    // driver takes) is passed over and the unit compiled again.
    let cached = nvrtc::find_cached(&nvrtc::entry(&name, &source, &arch));
    if !cached.is_empty() {
        rt.modules.set(unit, Slot::Pending("loading"));
        rt.bind()?;
        for path in cached {
            if let Some(module) = nvrtc::read_cached(&path).and_then(|image| Module::from_cubin(&image).ok()) {
                return Ok(module);
            }
        }
        rt.modules.set(unit, Slot::Pending("compiling"));
    }
    std::thread::sleep(COMPILE_DELAY.saturating_sub(asked.elapsed()));
    let image = match nvrtc::compile_in_helper(&name, &source, &arch, &nvrtc::kernels_dir()) {
        Ok((image, _path)) => image,
        Err(HelperError::Failed(e)) => return Err(e),
        Err(HelperError::Unavailable(_)) => {
            let _in_flight = exit_waits_for_this();
            nvrtc::cubin(&name, &source, &arch)?.cubin
        }
    };
    rt.bind()?;
    Module::from_cubin(&image)
}

/// Held while NVRTC runs in this process: process exit waits for it (an exit handler takes it).
static IN_PROCESS_COMPILE: Mutex<()> = Mutex::new(());

fn exit_waits_for_this() -> parking_lot::MutexGuard<'static, ()> {
    static REGISTERED: std::sync::Once = std::sync::Once::new();
    extern "C" fn wait_for_compile() {
        drop(IN_PROCESS_COMPILE.lock());
    }
    REGISTERED.call_once(|| {
        // SAFETY: registers a handler that only takes (and drops) a lock.
        unsafe {
            libc::atexit(wait_for_compile);
        }
    });
    IN_PROCESS_COMPILE.lock()
}
