//! The CPU engine's one thread pool.
//!
//! A rayon pool sized from the configuration. The number of threads a call may use can be
//! lowered or raised at run time (`hyblas_set_num_threads`, `openblas_set_num_threads`) up to
//! the pool's size. After `fork()` the child has no pool threads: a `pthread_atfork` handler
//! marks the child and every call there runs serially on the caller's thread.

use once_cell::sync::Lazy;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

static FORKED_CHILD: AtomicBool = AtomicBool::new(false);
static LIMIT: AtomicUsize = AtomicUsize::new(0);

extern "C" fn in_child_after_fork() {
    FORKED_CHILD.store(true, Ordering::SeqCst);
}

static POOL: Lazy<Option<rayon::ThreadPool>> = Lazy::new(|| {
    // SAFETY: registering a plain function as an atfork child handler.
    unsafe {
        libc::pthread_atfork(None, None, Some(in_child_after_fork));
    }
    let n = pool_size();
    if n <= 1 {
        return None;
    }
    rayon::ThreadPoolBuilder::new().num_threads(n).thread_name(|i| format!("hyblas-{i}")).build().ok()
});

/// Threads the pool is built with: the configured count, at least the cores (so that a later
/// `set_num_threads` up to the core count needs no rebuild).
pub fn pool_size() -> usize {
    // Asked once: available_parallelism() reads cgroup files (tens of microseconds), and
    // nthreads() runs on every call.
    static SIZE: Lazy<usize> = Lazy::new(|| {
        let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
        crate::config::get().num_threads.max(cores)
    });
    *SIZE
}

/// Threads a call may use now (1 in a forked child).
#[inline]
pub fn nthreads() -> usize {
    if FORKED_CHILD.load(Ordering::Relaxed) {
        return 1;
    }
    match LIMIT.load(Ordering::Relaxed) {
        0 => crate::config::get().num_threads.min(pool_size()),
        n => n,
    }
}

/// Set the thread count for later calls (clamped to 1..=pool size).
pub fn set_nthreads(n: usize) {
    LIMIT.store(n.clamp(1, pool_size()), Ordering::Relaxed);
}

/// Run `f` inside the pool (so rayon work it spawns uses our threads), or directly when the
/// call is serial.
pub fn install<R: Send>(threads: usize, f: impl FnOnce() -> R + Send) -> R {
    if threads <= 1 || FORKED_CHILD.load(Ordering::Relaxed) {
        return f();
    }
    match POOL.as_ref() {
        Some(pool) => pool.install(f),
        None => f(),
    }
}

/// Call `f(part)` for `part in 0..parts` on up to `threads` threads; returns when all are done.
pub fn for_each_part(threads: usize, parts: usize, f: impl Fn(usize) + Sync + Send) {
    if parts <= 1 || threads <= 1 || FORKED_CHILD.load(Ordering::Relaxed) || POOL.is_none() {
        (0..parts).for_each(f);
        return;
    }
    install(threads, || {
        use rayon::prelude::*;
        (0..parts).into_par_iter().for_each(f);
    });
}

/// Like [`for_each_part`], for short memory-bound regions (Level 1/2 calls of tens of
/// microseconds, where two sleep/wake round trips through the pool cost as much as the work):
/// the calling thread takes parts too and never sleeps. Parts are claimed through a counter;
/// `threads - 1` pool workers are asked to join, and whatever they have not claimed when the
/// caller runs out of parts the caller does itself, so a slow worker wake-up costs at most
/// the serial time. A panic in any part is re-raised on the caller once all claimed parts are
/// finished.
pub fn for_each_part_eager(threads: usize, parts: usize, f: impl Fn(usize) + Sync + Send) {
    use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
    use std::sync::Arc;
    let pool = match POOL.as_ref() {
        Some(pool) if parts > 1 && threads > 1 && !FORKED_CHILD.load(Ordering::Relaxed) => pool,
        _ => return (0..parts).for_each(f),
    };
    struct Shared {
        next: AtomicUsize,
        done: AtomicUsize,
        panicked: AtomicBool,
    }
    let shared =
        Arc::new(Shared { next: AtomicUsize::new(0), done: AtomicUsize::new(0), panicked: AtomicBool::new(false) });
    let run: &(dyn Fn(usize) + Sync) = &f;
    // SAFETY: a worker calls `run` only for a part it claimed (p < parts), and this function
    // returns only after every claimed part has finished, so `f` outlives all its uses. A job
    // that starts late finds no part left and touches only `shared`, which it co-owns.
    let run: &'static (dyn Fn(usize) + Sync) = unsafe { std::mem::transmute(run) };
    for _ in 1..threads.min(parts) {
        let sh = Arc::clone(&shared);
        pool.spawn(move || loop {
            let p = sh.next.fetch_add(1, Ordering::AcqRel);
            if p >= parts {
                break;
            }
            if catch_unwind(AssertUnwindSafe(|| run(p))).is_err() {
                sh.panicked.store(true, Ordering::Release);
            }
            sh.done.fetch_add(1, Ordering::Release);
        });
    }
    let mut caught = None;
    loop {
        let p = shared.next.fetch_add(1, Ordering::AcqRel);
        if p >= parts {
            break;
        }
        if let Err(e) = catch_unwind(AssertUnwindSafe(|| f(p))) {
            caught = Some(e);
        }
        shared.done.fetch_add(1, Ordering::Release);
    }
    // Only parts a worker is running are left: wait for them without sleeping.
    let mut spins = 0u32;
    while shared.done.load(Ordering::Acquire) < parts {
        if spins < 1 << 12 {
            std::hint::spin_loop();
            spins += 1;
        } else {
            std::thread::yield_now();
        }
    }
    if let Some(e) = caught {
        resume_unwind(e);
    }
    if shared.panicked.load(Ordering::Acquire) {
        panic!("a worker thread panicked in a parallel part");
    }
}

/// Threads worth using for `work` units when one thread should get at least `min_per_thread`.
#[inline]
pub fn threads_for(work: usize, min_per_thread: usize) -> usize {
    let t = nthreads();
    if t <= 1 || work < 2 * min_per_thread.max(1) {
        1
    } else {
        t.min(work / min_per_thread.max(1)).max(1)
    }
}
