//! A crew of threads that spin, rather than sleep, between short jobs while some caller keeps
//! them hot: the host GEMM offload's packing of pieces into pinned chunks (`hybrid::offload`).
//!
//! Why not the engine's rayon pool: a piece of 1-4 MB is packed in 50-120 us, and between two
//! pieces the pool's threads fall asleep, so each piece pays for waking them (futex calls,
//! virtual-CPU kicks on the GPU hosts' virtual machines). On the H200 host the timeline of a
//! GPU-only DGEMM n = 1024 (`HYBLAS_OFFLOAD_TIMELINE=1`) showed every 2 MB piece packed by 8
//! threads in 110-130 us (17-19 GB/s), where the pool's 16 threads pack 40 GB/s in 16 MB
//! pieces, and the chunk ring never waiting: the pipeline was bound by packing.
//!
//! How: [`Hot`] guards keep the crew awake (each worker spins while one is alive, and for
//! [`GRACE`] after, so back-to-back calls do not put it to sleep); [`Crew::run`] publishes a
//! job in a free slot, works on it itself too, and returns when every part has run. Several
//! callers may run jobs at once (one slot each); with no free slot, or no crew, `run` says so
//! and the caller uses another way. On by default (`HYBLAS_OFFLOAD_CREW=0` turns it off): on
//! the H200 host in session 35 it ran GPU-only offloads 1.07-1.33x faster across d/s/z GEMM,
//! DSYRK and DTRSM at n = 512 and 2048, and with 8 pieces a call 1.01-1.72x
//! (`bench/results/nvidia-h200-sm90-offload-pipeline-diag.txt`). Idle, the workers sleep: they
//! spin only while a copy is under way and for [`GRACE`] after.

use once_cell::sync::Lazy;
use parking_lot::{Condvar, Mutex};
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering::*};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a worker keeps spinning after the last [`Hot`] guard went.
pub const GRACE: Duration = Duration::from_micros(300);

/// Jobs that may run at once (the GPU pipeline's two packers, a few calling threads).
const SLOTS: usize = 4;

const FREE: u8 = 0;
const CLOSED: u8 = 1;
const OPEN: u8 = 2;

/// One job's place: its function and its part counters.
struct Slot {
    state: AtomicU8,
    job: UnsafeCell<Option<*const (dyn Fn(usize) + Sync)>>,
    parts: AtomicUsize,
    next: AtomicUsize,
    done: AtomicUsize,
    /// Workers looking at this slot now (the submitter reuses it only at zero).
    refs: AtomicUsize,
    panicked: AtomicBool,
}

// SAFETY: `job` is written only by the submitter that owns the slot (state CLOSED, no worker
// inside: refs == 0) and read by workers only while the slot is OPEN.
unsafe impl Sync for Slot {}
unsafe impl Send for Slot {}

impl Slot {
    fn new() -> Slot {
        Slot {
            state: AtomicU8::new(FREE),
            job: UnsafeCell::new(None),
            parts: AtomicUsize::new(0),
            next: AtomicUsize::new(0),
            done: AtomicUsize::new(0),
            refs: AtomicUsize::new(0),
            panicked: AtomicBool::new(false),
        }
    }

    /// Claim and run parts until none is left. True when it ran any.
    fn work(&self) -> bool {
        let parts = self.parts.load(Acquire);
        let mut any = false;
        loop {
            let p = self.next.fetch_add(1, AcqRel);
            if p >= parts {
                return any;
            }
            any = true;
            // SAFETY: the slot is OPEN (checked by the caller after taking a reference, or
            // owned by the submitter), so `job` is set and its closure alive.
            let f = unsafe { (*self.job.get()).expect("an open slot has a job") };
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| unsafe { (*f)(p) }));
            if r.is_err() {
                self.panicked.store(true, Release);
            }
            self.done.fetch_add(1, Release);
        }
    }
}

struct Shared {
    slots: [Slot; SLOTS],
    /// Live [`Hot`] guards.
    hot: AtomicUsize,
    sleep: Mutex<()>,
    wake: Condvar,
}

/// The crew: threads spinning on the slots while kept hot.
pub struct Crew {
    shared: Arc<Shared>,
}

/// Keeps a crew's workers spinning while alive (an offloaded call's span).
pub struct Hot<'a>(&'a Crew);

impl Drop for Hot<'_> {
    fn drop(&mut self) {
        self.0.shared.hot.fetch_sub(1, SeqCst);
    }
}

impl Crew {
    /// A crew of `workers` threads named `name-<i>` (fewer where the system will not start
    /// them; None where it starts none).
    pub fn new(workers: usize, name: &str) -> Option<Crew> {
        let shared = Arc::new(Shared {
            slots: std::array::from_fn(|_| Slot::new()),
            hot: AtomicUsize::new(0),
            sleep: Mutex::new(()),
            wake: Condvar::new(),
        });
        let mut started = false;
        for i in 0..workers {
            let sh = shared.clone();
            started |= std::thread::Builder::new().name(format!("{name}-{i}")).spawn(move || worker(&sh)).is_ok();
        }
        started.then_some(Crew { shared })
    }

    /// Keep the workers spinning until the guard is dropped.
    pub fn hot(&self) -> Hot<'_> {
        if self.shared.hot.fetch_add(1, SeqCst) == 0 {
            let _g = self.shared.sleep.lock();
            self.shared.wake.notify_all();
        }
        Hot(self)
    }

    /// Call `f(part)` for `part in 0..parts` on the caller and the workers; returns when all
    /// have run. False (nothing run) when every slot is taken: the caller runs the parts
    /// another way. A part that panics panics here, after all parts ended. Without a [`Hot`]
    /// guard alive the workers may be asleep, and the caller runs the parts alone.
    pub fn run(&self, parts: usize, f: &(dyn Fn(usize) + Sync)) -> bool {
        if parts == 0 {
            return true;
        }
        let Some(slot) =
            self.shared.slots.iter().find(|s| s.state.compare_exchange(FREE, CLOSED, AcqRel, Relaxed).is_ok())
        else {
            return false;
        };
        // SAFETY: the slot is ours (CLOSED, refs == 0 since it was last freed); the lifetime
        // of `f` is erased, but no worker touches it after this call returns (below).
        unsafe {
            let f: *const (dyn Fn(usize) + Sync + '_) = f;
            *slot.job.get() = Some(std::mem::transmute::<
                *const (dyn Fn(usize) + Sync + '_),
                *const (dyn Fn(usize) + Sync + 'static),
            >(f));
        }
        slot.parts.store(parts, Relaxed);
        slot.next.store(0, Relaxed);
        slot.done.store(0, Relaxed);
        slot.panicked.store(false, Relaxed);
        slot.state.store(OPEN, SeqCst);
        slot.work();
        while slot.done.load(Acquire) < parts {
            std::hint::spin_loop();
        }
        // No worker may still hold the job: close the slot, then wait for those inside.
        slot.state.store(CLOSED, SeqCst);
        while slot.refs.load(SeqCst) != 0 {
            std::hint::spin_loop();
        }
        // SAFETY: as above; no worker is inside.
        unsafe { *slot.job.get() = None };
        let panicked = slot.panicked.load(Acquire);
        slot.state.store(FREE, Release);
        if panicked {
            panic!("a part of a crew job panicked");
        }
        true
    }
}

fn worker(sh: &Shared) {
    let mut last_hot = Instant::now();
    loop {
        if sh.hot.load(Relaxed) > 0 {
            last_hot = Instant::now();
        } else if last_hot.elapsed() > GRACE {
            let mut g = sh.sleep.lock();
            while sh.hot.load(SeqCst) == 0 {
                sh.wake.wait(&mut g);
            }
            last_hot = Instant::now();
        }
        let mut any = false;
        for slot in &sh.slots {
            if slot.state.load(Relaxed) != OPEN {
                continue;
            }
            slot.refs.fetch_add(1, SeqCst);
            if slot.state.load(SeqCst) == OPEN {
                any |= slot.work();
            }
            slot.refs.fetch_sub(1, SeqCst);
        }
        if !any {
            std::hint::spin_loop();
        }
    }
}

/// The offload's copies are packed by [`offload_crew`] unless `HYBLAS_OFFLOAD_CREW=0`.
pub fn crew_enabled() -> bool {
    static ON: Lazy<bool> = Lazy::new(|| crate::config::value("HYBLAS_OFFLOAD_CREW").is_none_or(|v| v.trim() != "0"));
    *ON
}

/// The offload's crew: a worker for every CPU of the engine but two (the calling thread and the
/// download thread have those), started on first use where [`crew_enabled`].
pub fn offload_crew() -> Option<&'static Crew> {
    static CREW: Lazy<Option<Crew>> = Lazy::new(|| {
        let n = super::threads::nthreads().saturating_sub(2).max(1);
        crew_enabled().then(|| Crew::new(n, "hyblas-crew")).flatten()
    });
    CREW.as_ref()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU32;

    /// Every part runs exactly once, with several callers at once, hot or not, and a caller
    /// finds no slot only when all are taken.
    #[test]
    fn every_part_runs_once_from_many_callers() {
        let crew = Crew::new(2, "test-crew").expect("threads");
        for hot in [false, true] {
            let _h = hot.then(|| crew.hot());
            std::thread::scope(|s| {
                for caller in 0..3 {
                    let crew = &crew;
                    s.spawn(move || {
                        for round in 0..50 {
                            let parts = 1 + (caller * 7 + round) % 13;
                            let runs: Vec<AtomicU32> = (0..parts).map(|_| AtomicU32::new(0)).collect();
                            let ran = crew.run(parts, &|p| {
                                runs[p].fetch_add(1, SeqCst);
                            });
                            assert!(ran, "3 callers, {SLOTS} slots");
                            assert!(runs.iter().all(|r| r.load(SeqCst) == 1), "caller {caller} round {round}");
                        }
                    });
                }
            });
        }
    }

    #[test]
    fn a_panicking_part_reaches_the_caller_after_all_ran() {
        let crew = Crew::new(1, "test-crew").expect("threads");
        let _h = crew.hot();
        let runs = AtomicU32::new(0);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            crew.run(8, &|p| {
                runs.fetch_add(1, SeqCst);
                assert!(p != 3, "part 3");
            })
        }));
        assert!(r.is_err());
        assert_eq!(runs.load(SeqCst), 8);
        // The slot is free again.
        assert!(crew.run(2, &|_| {}));
    }
}
