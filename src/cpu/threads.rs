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
    // Starting the threads is once-only work the first call pays (on the H200 host it took
    // 2.1x a later one): the offload planner does not learn from it.
    crate::trace::went_cold();
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
        Some(pool) => {
            ENGINE_PINS.free_for_work(pool);
            pool.install(f)
        }
        None => f(),
    }
}

/// Parts per thread the Level 3 routines cut their work into (`HYBLAS_PARTS_PER_THREAD`, default
/// 4). More parts than threads let [`for_each_part`] balance threads that run at different
/// speeds; each part is a one-thread product, so more parts also repeat more packing.
static PARTS_PER_THREAD: Lazy<usize> = Lazy::new(|| crate::config::threshold("HYBLAS_PARTS_PER_THREAD", 4).max(1));

/// How many parts `threads` threads should share (see `PARTS_PER_THREAD`).
pub fn balanced_parts(threads: usize) -> usize {
    threads.saturating_mul(*PARTS_PER_THREAD)
}

/// Call `f(part)` for `part in 0..parts` on up to `threads` threads; returns when all are done.
///
/// The calling thread runs part 0 itself while the pool takes the others, so only one
/// hand-off (a pool wake-up, overlapped with the caller's own share) separates the call from
/// parallel work. For coarse parts (Level 3 panels); Level 1/2 loops of microseconds use
/// [`for_each_part_inline`]. A panic in any part reaches the caller after all parts ended.
///
/// With more parts than threads, at most `threads` threads (the caller and `threads - 1` pool
/// jobs) claim parts in order from one counter until none is left: a thread that runs slowly
/// (a core shared with another tenant, as on the virtual machines GPU hosts often are:
/// equal panels of one DGEMM took 125 to 290 ms there) takes fewer parts instead of holding
/// up the call, and a caller that keeps cores free for other work (co-execution's feeders)
/// gets no more than it asked for.
pub fn for_each_part(threads: usize, parts: usize, f: impl Fn(usize) + Sync + Send) {
    let pool = match POOL.as_ref() {
        Some(pool) if parts > 1 && threads > 1 && !FORKED_CHILD.load(Ordering::Relaxed) => pool,
        _ => return (0..parts).for_each(f),
    };
    ENGINE_PINS.free_for_work(pool);
    let f = &f;
    if parts <= threads {
        pool.in_place_scope(|s| {
            for part in 1..parts {
                s.spawn(move |_| f(part));
            }
            f(0);
        });
        return;
    }
    let next = AtomicUsize::new(0);
    let claim = || loop {
        let p = next.fetch_add(1, Ordering::Relaxed);
        if p >= parts {
            return;
        }
        f(p);
    };
    let claim = &claim;
    pool.in_place_scope(|s| {
        for _ in 1..threads {
            s.spawn(move |_| claim());
        }
        claim();
    });
}

/// Shared by the threads of one [`for_each_part_inline`] call.
struct InlineJob {
    /// Next part to claim.
    next: AtomicUsize,
    /// Parts finished.
    done: AtomicUsize,
    parts: usize,
    /// The caller's `f`. Dereferenced only after claiming a part (`next` < `parts`), and the
    /// caller does not return before every claimed part is done, so it is alive then.
    f: *const (dyn Fn(usize) + Sync),
    caller: std::thread::Thread,
    caller_cpu: i32,
    /// A part panicked on a helper thread (re-raised on the caller: a panic must not take
    /// down a pool thread, which would abort the process).
    panicked: AtomicBool,
}

// SAFETY: `f` points to a `Sync` closure and is only used as described on the field.
unsafe impl Send for InlineJob {}
unsafe impl Sync for InlineJob {}

impl InlineJob {
    /// Claim and run parts until none is left.
    fn run_claimed(&self) {
        loop {
            let p = self.next.fetch_add(1, Ordering::Relaxed);
            if p >= self.parts {
                return;
            }
            // SAFETY: a part was claimed, so the caller is still waiting for it (see `f`).
            let f = unsafe { &*self.f };
            if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(p))).is_err() {
                self.panicked.store(true, Ordering::Release);
            }
            if self.done.fetch_add(1, Ordering::AcqRel) + 1 == self.parts {
                self.caller.unpark();
            }
        }
    }
}

/// The CPU the calling thread runs on (-1 if unknown).
fn current_cpu() -> i32 {
    #[cfg(target_os = "linux")]
    // SAFETY: no arguments; returns -1 on failure.
    unsafe {
        libc::sched_getcpu()
    }
    #[cfg(not(target_os = "linux"))]
    -1
}

/// The latest [`for_each_part_inline`] job, for helpers that are awake.
static INLINE_SLOT: parking_lot::Mutex<Option<std::sync::Arc<InlineJob>>> = parking_lot::Mutex::new(None);
/// Bumped whenever a job is put in the slot.
static INLINE_GEN: AtomicUsize = AtomicUsize::new(0);
/// Helpers spawned and not yet retired (queued, working or watching the slot).
static INLINE_ALIVE: AtomicUsize = AtomicUsize::new(0);
/// How long a helper stays awake after its last part.
const INLINE_LINGER: std::time::Duration = std::time::Duration::from_micros(100);

/// A pool job helping with inline loops: it works on `job`, then stays awake for
/// `INLINE_LINGER`, taking on any new job put in the slot, before it returns to the pool.
/// Back-to-back calls (a loop of daxpy's) then find a helper already running on another core
/// instead of waking a sleeping thread, which can take tens of microseconds, and which the
/// kernel often places on the caller's own core.
fn inline_helper(job: std::sync::Arc<InlineJob>) {
    move_off(job.caller_cpu);
    let mut seen = INLINE_GEN.load(Ordering::Acquire);
    job.run_claimed();
    drop(job);
    let mut idle_since = std::time::Instant::now();
    loop {
        let gen = INLINE_GEN.load(Ordering::Acquire);
        if gen != seen {
            seen = gen;
            let job = INLINE_SLOT.lock().clone();
            if let Some(job) = job {
                job.run_claimed();
            }
            idle_since = std::time::Instant::now();
        } else if idle_since.elapsed() > INLINE_LINGER {
            INLINE_ALIVE.fetch_sub(1, Ordering::AcqRel);
            // A job put in the slot just before we left counted on us: help with it.
            if INLINE_GEN.load(Ordering::Acquire) != seen {
                let job = INLINE_SLOT.lock().clone();
                if let Some(job) = job {
                    job.run_claimed();
                }
            }
            return;
        } else {
            std::hint::spin_loop();
        }
    }
}

/// Move the current thread off `cpu` (the caller's) if it runs there: a woken helper is often
/// placed on its waker's CPU, where it would only take turns with the caller. Excluding the
/// CPU from the thread's mask makes the kernel migrate it at once; the mask is then restored,
/// and the scheduler keeps two running threads apart from there on.
fn move_off(cpu: i32) {
    #[cfg(target_os = "linux")]
    // SAFETY: plain syscalls on this thread with a properly sized, initialised set.
    unsafe {
        let size = std::mem::size_of::<libc::cpu_set_t>();
        if cpu < 0 || libc::sched_getcpu() != cpu {
            return;
        }
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, size, &mut set) != 0 {
            return;
        }
        let saved = set;
        libc::CPU_CLR(cpu as usize, &mut set);
        if libc::CPU_COUNT(&set) > 0 && libc::sched_setaffinity(0, size, &set) == 0 {
            libc::sched_setaffinity(0, size, &saved);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = cpu;
}

/// Like [`for_each_part`], for loops of microseconds (Level 1): the calling thread works too
/// and waits awake, so a call does not pay for putting itself to sleep and waking up.
///
/// Part 0 runs on the caller; each other part is claimed by whichever thread gets to it
/// first, a helper on a pool thread or the caller once its own part is done, so nothing
/// waits for a pool thread that is slow to start: a helper that comes too late finds
/// nothing to claim. Helpers stay awake briefly after a call (see `inline_helper`). The
/// caller waits for the parts helpers took by spinning briefly, then yielding, then parking.
pub fn for_each_part_inline(threads: usize, parts: usize, f: impl Fn(usize) + Sync + Send) {
    let pool = match POOL.as_ref() {
        Some(pool) if parts > 1 && threads > 1 && !FORKED_CHILD.load(Ordering::Relaxed) => pool,
        _ => return (0..parts).for_each(f),
    };
    ENGINE_PINS.free_for_work(pool);
    let f: &(dyn Fn(usize) + Sync) = &f;
    // SAFETY: only the lifetime is erased; see `InlineJob::f`.
    let f: *const (dyn Fn(usize) + Sync + 'static) = unsafe { std::mem::transmute(f) };
    let job = std::sync::Arc::new(InlineJob {
        next: AtomicUsize::new(1),
        done: AtomicUsize::new(1),
        parts,
        f,
        caller: std::thread::current(),
        caller_cpu: current_cpu(),
        panicked: AtomicBool::new(false),
    });
    *INLINE_SLOT.lock() = Some(job.clone());
    INLINE_GEN.fetch_add(1, Ordering::AcqRel);
    // Start as many helpers as the live ones fall short of (a live one sees the new job).
    let alive = INLINE_ALIVE.load(Ordering::Acquire);
    for _ in alive..parts.min(threads) - 1 {
        INLINE_ALIVE.fetch_add(1, Ordering::AcqRel);
        let job = job.clone();
        pool.spawn(move || inline_helper(job));
    }
    // SAFETY: `f` is alive for the whole call. A panic in part 0 is held until the helpers
    // are done with `f`.
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| unsafe { (*f)(0) })).err();
    job.run_claimed();
    let start = std::time::Instant::now();
    while job.done.load(Ordering::Acquire) < parts {
        let waited = start.elapsed();
        if waited < std::time::Duration::from_micros(5) {
            std::hint::spin_loop();
        } else if waited < std::time::Duration::from_micros(100) {
            std::thread::yield_now();
        } else {
            // The last part to finish unparks us; the timeout only guards the hand-off.
            std::thread::park_timeout(std::time::Duration::from_millis(1));
        }
    }
    // Helpers must not find this job once it is over (they could claim nothing from it, but
    // holding it would keep its Arc alive needlessly).
    {
        let mut slot = INLINE_SLOT.lock();
        if slot.as_ref().is_some_and(|j| std::sync::Arc::ptr_eq(j, &job)) {
            *slot = None;
        }
    }
    if let Some(e) = caught {
        std::panic::resume_unwind(e);
    }
    if job.panicked.load(Ordering::Acquire) {
        panic!("a part of a parallel loop panicked on a pool thread");
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

/// The CPUs this process may run on, ascending (the first caller's mask, read once; empty
/// where the platform does not say).
pub fn allowed_cpus() -> &'static [usize] {
    static CPUS: Lazy<Vec<usize>> = Lazy::new(|| {
        #[cfg(target_os = "linux")]
        // SAFETY: a plain syscall on this thread with a properly sized, zeroed set.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) == 0 {
                return (0..libc::CPU_SETSIZE as usize).filter(|&c| libc::CPU_ISSET(c, &set)).collect();
            }
        }
        Vec::new()
    });
    &CPUS
}

/// A thread's CPU mask, as [`pin_current`] found it.
#[derive(Clone, Copy)]
pub struct Mask(#[cfg(target_os = "linux")] libc::cpu_set_t);

/// Restrict the calling thread to `cpus` (all of [`allowed_cpus`] when empty). Returns the
/// mask it had, for [`restore_current`]; None when the system refused (nothing changed).
pub fn pin_current(cpus: &[usize]) -> Option<Mask> {
    #[cfg(target_os = "linux")]
    // SAFETY: plain syscalls on this thread with properly sized, initialised sets.
    unsafe {
        let size = std::mem::size_of::<libc::cpu_set_t>();
        let mut saved: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, size, &mut saved) != 0 {
            return None;
        }
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in if cpus.is_empty() { allowed_cpus() } else { cpus } {
            libc::CPU_SET(c, &mut set);
        }
        (libc::CPU_COUNT(&set) > 0 && libc::sched_setaffinity(0, size, &set) == 0).then_some(Mask(saved))
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = cpus;
        None
    }
}

/// Give the calling thread back the mask [`pin_current`] returned.
pub fn restore_current(m: &Mask) {
    #[cfg(target_os = "linux")]
    // SAFETY: a plain syscall on this thread with a set read from the system.
    unsafe {
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &m.0);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = m;
}

/// Restrict every thread of `pool` to `cpus` (all of [`allowed_cpus`] when empty). Waits for
/// each thread to take the order between its jobs.
pub fn pin_pool_threads(pool: &rayon::ThreadPool, cpus: &[usize]) {
    pool.broadcast(|_| {
        pin_current(cpus);
    });
}

/// A pool held to some CPUs by co-execution, and kept there from one co-executed call to the
/// next: pinning a pool and freeing it again is a broadcast to each of its threads, and on
/// the H200 host co-execution's two pools cost a call 40-300 us that way (a DGEMM n = 1024,
/// 2 ms, up to 5%). Work of any other kind frees the pool first ([`PoolPins::free_for_work`]:
/// the engine's on entry to [`install`], [`for_each_part`] and [`for_each_part_inline`]).
pub struct PoolPins {
    held: AtomicBool,
    cpus: parking_lot::Mutex<Vec<usize>>,
}

impl Default for PoolPins {
    fn default() -> Self {
        Self::new()
    }
}

impl PoolPins {
    pub const fn new() -> PoolPins {
        PoolPins { held: AtomicBool::new(false), cpus: parking_lot::Mutex::new(Vec::new()) }
    }

    /// Hold `pool`'s threads to `cpus` (nothing to do where they are held there already).
    pub fn hold(&self, pool: &rayon::ThreadPool, cpus: &[usize]) {
        // Empty exactly while not held.
        let mut cur = self.cpus.lock();
        if *cur == cpus {
            return;
        }
        pin_pool_threads(pool, cpus);
        cur.clear();
        cur.extend_from_slice(cpus);
        self.held.store(!cpus.is_empty(), Ordering::Release);
    }

    /// Whether the pool is held to some CPUs now.
    #[inline]
    pub fn held(&self) -> bool {
        self.held.load(Ordering::Relaxed)
    }

    /// Before work on `pool`: give its threads all CPUs back where co-execution left them
    /// held, unless this is a side of a co-executed call ([`keeping_pins`]) or a thread of a
    /// pool (nested work of a call placed already). One relaxed load while nothing is held.
    #[inline]
    pub fn free_for_work(&self, pool: &rayon::ThreadPool) {
        if self.held() && !KEEPS_PINS.with(|k| k.get()) && rayon::current_thread_index().is_none() {
            self.hold(pool, &[]);
        }
    }
}

/// The engine's pool as co-execution holds it.
static ENGINE_PINS: PoolPins = PoolPins::new();

thread_local! {
    /// Set while this thread runs a side of a co-executed call ([`keeping_pins`]): its work
    /// on the pool keeps the pool where co-execution held it.
    static KEEPS_PINS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Run `f` (a side of a co-executed call) with the engine's pool left where co-execution
/// holds it ([`hold_pool`]); outside, the pool's next work frees it first.
pub fn keeping_pins<R>(f: impl FnOnce() -> R) -> R {
    crate::config::with_local(&KEEPS_PINS, true, f)
}

/// Whether this thread runs a side of a co-executed call ([`keeping_pins`]): a helper thread
/// it starts (the download thread) takes the same setting with [`keeping_pins_if`], or its
/// first work on a held pool would free the pool in the middle of the call.
pub fn keeps_pins() -> bool {
    KEEPS_PINS.with(|k| k.get())
}

/// `f` under [`keeping_pins`] where `keep` (a helper thread of a side, [`keeps_pins`]).
pub fn keeping_pins_if<R>(keep: bool, f: impl FnOnce() -> R) -> R {
    crate::config::with_local(&KEEPS_PINS, keep, f)
}

/// Hold the engine's pool to `cpus` (all CPUs back when empty), and keep it there after the
/// call ([`PoolPins`]); none in a forked child or a serial build.
pub fn hold_pool(cpus: &[usize]) {
    if let (Some(pool), false) = (POOL.as_ref(), FORKED_CHILD.load(Ordering::Relaxed)) {
        ENGINE_PINS.hold(pool, cpus);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// More parts than threads: every part runs exactly once, on at most `threads` threads at a
    /// time.
    #[test]
    fn for_each_part_claims_every_part_once_on_bounded_threads() {
        for (threads, parts) in [(2usize, 9usize), (3, 40), (2, 2), (4, 3)] {
            let runs: Vec<AtomicUsize> = (0..parts).map(|_| AtomicUsize::new(0)).collect();
            let (live, peak) = (AtomicUsize::new(0), AtomicUsize::new(0));
            for_each_part(threads, parts, |p| {
                let now = live.fetch_add(1, Ordering::SeqCst) + 1;
                peak.fetch_max(now, Ordering::SeqCst);
                std::thread::sleep(std::time::Duration::from_millis(2));
                runs[p].fetch_add(1, Ordering::SeqCst);
                live.fetch_sub(1, Ordering::SeqCst);
            });
            assert!(runs.iter().all(|r| r.load(Ordering::SeqCst) == 1), "{threads} threads, {parts} parts");
            assert!(
                peak.load(Ordering::SeqCst) <= threads.max(1),
                "{threads} threads, {parts} parts: peak {}",
                peak.load(Ordering::SeqCst)
            );
        }
    }

    /// A pool co-execution holds stays held through the work of a co-executed call's sides
    /// and of its own threads, and any other work frees it first.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_held_pool_stays_held_for_coexecution_and_is_freed_for_other_work() {
        let all = allowed_cpus();
        let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
        let widths = |pool: &rayon::ThreadPool| -> Vec<usize> {
            pool.broadcast(|_| unsafe {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set);
                libc::CPU_COUNT(&set) as usize
            })
        };
        let pins = PoolPins::new();
        pins.free_for_work(&pool);
        assert!(!pins.held() && widths(&pool).iter().all(|&w| w == all.len()));
        pins.hold(&pool, &[all[0]]);
        assert!(pins.held() && widths(&pool) == vec![1; 3]);
        // The same pins again, a side's work, the pool's own threads: still held.
        pins.hold(&pool, &[all[0]]);
        keeping_pins(|| pins.free_for_work(&pool));
        pool.install(|| pins.free_for_work(&pool));
        // A helper thread a side starts (the download thread) takes the side's setting.
        keeping_pins(|| {
            let keep = keeps_pins();
            std::thread::scope(|s| s.spawn(|| keeping_pins_if(keep, || pins.free_for_work(&pool))).join().unwrap());
        });
        assert!(pins.held() && widths(&pool) == vec![1; 3]);
        // keeping_pins ends with its call.
        assert!(!KEEPS_PINS.with(|k| k.get()));
        // Other work: every CPU back.
        pins.free_for_work(&pool);
        assert!(!pins.held() && widths(&pool).iter().all(|&w| w == all.len()));
        pins.hold(&pool, &[all[0]]);
        pins.hold(&pool, &[]);
        assert!(!pins.held() && widths(&pool).iter().all(|&w| w == all.len()));
    }

    /// A pinned thread runs only where it was pinned; its mask comes back after; a pool's
    /// threads all take the order.
    #[cfg(target_os = "linux")]
    #[test]
    fn pinning_holds_threads_to_their_cpus_and_gives_the_mask_back() {
        let all = allowed_cpus();
        assert!(!all.is_empty());
        let last = *all.last().unwrap();
        let saved = pin_current(&[last]).expect("pin");
        for _ in 0..100 {
            assert_eq!(unsafe { libc::sched_getcpu() }, last as i32);
            std::thread::yield_now();
        }
        restore_current(&saved);
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
        assert_eq!(unsafe { libc::CPU_COUNT(&set) } as usize, all.len(), "the whole mask back");
        let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
        pin_pool_threads(&pool, &[all[0]]);
        let cpus: Vec<i32> = pool.broadcast(|_| unsafe { libc::sched_getcpu() });
        assert!(cpus.iter().all(|&c| c == all[0] as i32), "{cpus:?}");
        pin_pool_threads(&pool, &[]);
    }
}
