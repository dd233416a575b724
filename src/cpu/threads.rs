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
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    crate::config::get().num_threads.max(cores)
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

/// As [`for_each_part`], but the calling thread runs part 0 itself while the pool takes the
/// others, so only one hand-off (a pool wake-up, overlapped with the caller's own share)
/// separates the call from parallel work. For coarse parts of equal size.
pub fn for_each_part_with_caller(threads: usize, parts: usize, f: impl Fn(usize) + Sync + Send) {
    let pool = match POOL.as_ref() {
        Some(pool) if parts > 1 && threads > 1 && !FORKED_CHILD.load(Ordering::Relaxed) => pool,
        _ => return (0..parts).for_each(f),
    };
    let f = &f;
    pool.in_place_scope(|s| {
        for part in 1..parts {
            s.spawn(move |_| f(part));
        }
        f(0);
    });
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
