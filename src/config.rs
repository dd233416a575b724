//! Configuration, read once: environment variables, else the same keys in the optional file
//! named by `HYBLAS_CONFIG` (lines `KEY=value`, `#` comments), else defaults.

use once_cell::sync::Lazy;
use std::collections::HashMap;

/// Run `f` with this thread's setting `key` at `value`, and the setting it had back after
/// (a panic in `f` too): the `with_*` overrides of tests, benchmarks and co-execution.
pub fn with_local<T: Copy + 'static, R>(
    key: &'static std::thread::LocalKey<std::cell::Cell<T>>,
    value: T,
    f: impl FnOnce() -> R,
) -> R {
    struct Back<T: Copy + 'static>(&'static std::thread::LocalKey<std::cell::Cell<T>>, T);
    impl<T: Copy + 'static> Drop for Back<T> {
        fn drop(&mut self) {
            self.0.with(|c| c.set(self.1));
        }
    }
    let _back = Back(key, key.with(|c| c.replace(value)));
    f()
}

/// Where the planner may run work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceChoice {
    Auto,
    Cpu,
    Gpu,
}

/// Where trace lines go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TraceTarget {
    Stderr,
    File(String),
}

#[derive(Clone, Debug)]
pub struct Config {
    /// Threads of the CPU engine: `HYBLAS_NUM_THREADS`, else `OPENBLAS_NUM_THREADS`, else
    /// `OMP_NUM_THREADS`, else the number of cores the process may run on.
    pub num_threads: usize,
    /// `HYBLAS_TRACE=stderr|<path>`: one line per call.
    pub trace: Option<TraceTarget>,
    /// `HYBLAS_DEVICE=auto|cpu|gpu`.
    pub device: DeviceChoice,
    /// Where the threads came from, for `hyblas info`.
    pub num_threads_source: &'static str,
}

fn file_values() -> HashMap<String, String> {
    let mut map = HashMap::new();
    if let Ok(path) = std::env::var("HYBLAS_CONFIG") {
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                for line in text.lines() {
                    let line = line.trim();
                    if line.is_empty() || line.starts_with('#') {
                        continue;
                    }
                    if let Some((k, v)) = line.split_once('=') {
                        map.insert(k.trim().to_string(), v.trim().to_string());
                    }
                }
            }
            Err(e) => eprintln!("hyblas: cannot read HYBLAS_CONFIG={path}: {e}; using defaults"),
        }
    }
    map
}

/// Value of a key: environment first, then the config file.
pub fn value(key: &str) -> Option<String> {
    static FILE: Lazy<HashMap<String, String>> = Lazy::new(file_values);
    std::env::var(key).ok().filter(|v| !v.is_empty()).or_else(|| FILE.get(key).cloned())
}

/// A switch that is on unless its key is set to `0`, `off`, `false` or `no`.
pub fn enabled(key: &str) -> bool {
    value(key).is_none_or(|v| !matches!(v.trim(), "0" | "off" | "false" | "no"))
}

/// A setting read as a number (surrounding blanks ignored); None where unset or not a number.
pub fn float(key: &str) -> Option<f64> {
    value(key).and_then(|v| v.trim().parse::<f64>().ok())
}

/// A numeric threshold with a default and an env/config override (`HYBLAS_<NAME>`).
pub fn threshold(key: &str, default: usize) -> usize {
    value(key).and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn cores() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
}

fn load() -> Config {
    let mut num_threads = cores();
    let mut num_threads_source = "cores";
    for key in ["HYBLAS_NUM_THREADS", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"] {
        if let Some(n) = value(key).and_then(|v| v.split(',').next()?.trim().parse::<usize>().ok()) {
            if n > 0 {
                num_threads = n;
                num_threads_source = key;
                break;
            }
        }
    }
    let trace = value("HYBLAS_TRACE").and_then(|v| match v.as_str() {
        "" | "0" | "off" => None,
        "stderr" | "1" => Some(TraceTarget::Stderr),
        path => Some(TraceTarget::File(path.to_string())),
    });
    let device = match value("HYBLAS_DEVICE").as_deref().map(str::to_ascii_lowercase).as_deref() {
        Some("cpu") => DeviceChoice::Cpu,
        Some("gpu") => DeviceChoice::Gpu,
        _ => DeviceChoice::Auto,
    };
    Config { num_threads, trace, device, num_threads_source }
}

/// The process-wide configuration (read on first use).
pub fn get() -> &'static Config {
    static CONFIG: Lazy<Config> = Lazy::new(load);
    &CONFIG
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    thread_local! {
        static SETTING: Cell<u32> = const { Cell::new(1) };
    }

    /// The setting holds inside (nested ones too) and comes back after, a panic included.
    #[test]
    fn with_local_sets_and_gives_back() {
        let got = with_local(&SETTING, 2, || {
            let inner = with_local(&SETTING, 3, || SETTING.with(|c| c.get()));
            (inner, SETTING.with(|c| c.get()))
        });
        assert_eq!(got, (3, 2));
        assert_eq!(SETTING.with(|c| c.get()), 1);
        let r = std::panic::catch_unwind(|| with_local(&SETTING, 4, || panic!("in f")));
        assert!(r.is_err());
        assert_eq!(SETTING.with(|c| c.get()), 1);
    }
}
