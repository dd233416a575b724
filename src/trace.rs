//! `HYBLAS_TRACE=stderr|<path>`: one line per call with routine, shape, engine, threads and
//! time. The sink is opened once; writes go through a lock so lines from threads never mix.

//!
//! Also here, because every layer reports to it: the count of once-only set-up work
//! ([`went_cold`], [`Warm`]) that the planner's learning uses to skip calls that paid it.

use crate::config::{self, TraceTarget};
use once_cell::sync::Lazy;
use parking_lot::Mutex;
use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};

enum Sink {
    Off,
    Stderr,
    File(Mutex<std::fs::File>),
}

static SINK: Lazy<Sink> = Lazy::new(|| match &config::get().trace {
    None => Sink::Off,
    Some(TraceTarget::Stderr) => Sink::Stderr,
    Some(TraceTarget::File(path)) => match std::fs::OpenOptions::new().create(true).append(true).open(path) {
        Ok(f) => Sink::File(Mutex::new(f)),
        Err(e) => {
            eprintln!("hyblas: cannot open HYBLAS_TRACE={path}: {e}; tracing to stderr");
            Sink::Stderr
        }
    },
});

/// Is tracing on? (One atomic load after the first call.)
#[inline]
pub fn enabled() -> bool {
    !matches!(*SINK, Sink::Off)
}

/// Write one trace line.
pub fn line(routine: &str, shape: &str, engine: &str, threads: usize, secs: f64) {
    let text = format!("hyblas: {routine:<8} {shape} engine={engine} threads={threads} time={:.3}us\n", secs * 1e6);
    write(&text);
}

/// Write a free-form trace line (planner decisions, fallbacks).
pub fn note(text: &str) {
    if enabled() {
        write(&format!("hyblas: {text}\n"));
    }
}

fn write(text: &str) {
    match &*SINK {
        Sink::Off => {}
        Sink::Stderr => {
            let _ = std::io::stderr().lock().write_all(text.as_bytes());
        }
        Sink::File(f) => {
            let _ = f.lock().write_all(text.as_bytes());
        }
    }
}

/// Once-only set-up work a call may do on the way, counted: the CPU engine's threads started,
/// an offload pipeline's streams and pinned chunks made, its device arena grown, the feed
/// pool's threads started. A call during which the count moved paid costs later calls do not
/// (on the H200 host the process's first CPU DGEMM n = 1024 took 2.1x the next, which taught
/// the CPU's factor x1.5) and is not learnt from ([`Warm`]).
static COLD_EVENTS: AtomicUsize = AtomicUsize::new(0);

/// Count one piece of set-up work ([`COLD_EVENTS`]).
pub fn went_cold() {
    COLD_EVENTS.fetch_add(1, Ordering::Relaxed);
}

/// Whether a call did none of [`COLD_EVENTS`]' set-up work: taken when the call starts, asked
/// when it ends. (Set-up work by another thread meanwhile counts too: that call is not learnt
/// from either, which costs one observation.)
#[derive(Clone, Copy, Debug)]
pub struct Warm(usize);

impl Warm {
    pub fn start() -> Warm {
        Warm(COLD_EVENTS.load(Ordering::Relaxed))
    }
    pub fn stayed(self) -> bool {
        COLD_EVENTS.load(Ordering::Relaxed) == self.0
    }
}
