//! `HYBLAS_TRACE=stderr|<path>`: one line per call with routine, shape, engine, threads and
//! time. The sink is opened once; writes go through a lock so lines from threads never mix.

use crate::config::{self, TraceTarget};
use once_cell::sync::Lazy;
use parking_lot::Mutex;
use std::io::Write;

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
