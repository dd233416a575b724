//! GPU routing for the cuBLAS entry layer (`abi::cublas`): for one call a program makes
//! through cuBLAS's API, is hyblas's kernel or the real cuBLAS predicted faster?
//!
//! The model is a size threshold per routine family, each with a name, a default here and an
//! environment/config override (`crate::config::threshold`):
//!
//! | key | default | hyblas when |
//! | --- | --- | --- |
//! | `HYBLAS_CUBLAS_L1_MIN` | 65536 | n >= MIN (every Level 1 routine) |
//! | `HYBLAS_CUBLAS_GEMV_MIN` | 1024 | m*n >= MIN^2 (the side of the equivalent square) |
//! | `HYBLAS_CUBLAS_GER_MIN` | 1024 | m*n >= MIN^2 |
//! | `HYBLAS_CUBLAS_TRMV_MIN` | 0 | n >= MIN (always: cuBLAS's TRMV is far slower) |
//! | `HYBLAS_CUBLAS_GEMM_MAX_MN` | 65536 | m*n <= MAX and the split-k model predicts it faster |
//!
//! More specific keys win where set: per routine across precisions for Level 1
//! (`HYBLAS_CUBLAS_DOT_MIN`), per routine and precision (`HYBLAS_CUBLAS_SDOT_MIN`,
//! `HYBLAS_CUBLAS_CGERC_MIN`, `HYBLAS_CUBLAS_ZDSCAL_MIN`) and, for GEMV, per operation
//! (`HYBLAS_CUBLAS_SGEMV_T_MIN`). The defaults are placeholders until the benchmark
//! calibrates them; each threshold is read once.
//!
//! `HYBLAS_CUBLAS=auto|hyblas|vendor` forces a side for benchmarks and tests ([`with_mode`]
//! is the same per thread). Whatever the mode, degenerate calls (empty problems, zero
//! increments, null result pointers) and invalid ones (null handle, bad arguments) go to
//! cuBLAS: their exact status and side effects are cuBLAS's own definition, and no speed is at
//! stake.
//!
//! GEMM (`cublas?gemm_v2`, `cublasGemmEx`, and Fortran/CBLAS `?gemm` on device memory) asks
//! the split-k model ([`gemm`], `gpu::splitk::predict`: predicted split-k and vendor times on
//! this device) whenever m*n <= `HYBLAS_CUBLAS_GEMM_MAX_MN`; above it, cuBLAS without asking.
//! `HYBLAS_CUBLAS_GEMM=auto|hyblas|vendor` forces GEMM's side alone (it wins over
//! `HYBLAS_CUBLAS`; [`with_mode`] wins over both). The split-k reduction ([`reduction`]) is
//! deterministic unless the caller allows atomics: the handle's atomics mode is
//! `CUBLAS_ATOMICS_ALLOWED`, or `HYBLAS_DETERMINISTIC=0`; `HYBLAS_DETERMINISTIC=1` keeps it
//! deterministic even then.
//!
//! With `HYBLAS_TRACE` on, every call writes one line: routine, shape, route and why.

use crate::config;
use crate::types::Trans;

#[path = "gpu_calibrated.rs"]
pub mod gpu_calibrated;
use once_cell::sync::Lazy;
use parking_lot::RwLock;
use std::cell::Cell;
use std::collections::HashMap;
use std::fmt;

/// Which implementation runs a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    /// hyblas's kernel (on the handle's stream); any error still falls back to cuBLAS.
    Hyblas,
    /// The real cuBLAS function.
    Vendor,
    /// GEMM by Strassen-Winograd at this many levels (seed 003, `gpu::strassen`), its products
    /// on the real cuBLAS; any error before it starts still falls back to cuBLAS.
    Strassen(u32),
}

impl Route {
    pub fn name(self) -> &'static str {
        match self {
            Route::Hyblas => "hyblas",
            Route::Vendor => "vendor",
            Route::Strassen(_) => "strassen",
        }
    }
}

/// `HYBLAS_CUBLAS`: let the model decide, or force one side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Auto,
    Hyblas,
    Vendor,
}

impl Mode {
    /// Parse a `HYBLAS_CUBLAS` value (case-insensitive; `cublas` is a synonym of `vendor`).
    pub fn parse(s: &str) -> Option<Mode> {
        match s.trim().to_ascii_lowercase().as_str() {
            "" | "auto" => Some(Mode::Auto),
            "hyblas" => Some(Mode::Hyblas),
            "vendor" | "cublas" => Some(Mode::Vendor),
            _ => None,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Mode::Auto => "auto",
            Mode::Hyblas => "hyblas",
            Mode::Vendor => "vendor",
        }
    }
}

static ENV_MODE: Lazy<Mode> = Lazy::new(|| {
    let v = config::value("HYBLAS_CUBLAS").unwrap_or_default();
    Mode::parse(&v).unwrap_or_else(|| {
        eprintln!("hyblas: HYBLAS_CUBLAS={v} is not auto, hyblas or vendor; using auto");
        Mode::Auto
    })
});

thread_local! {
    static FORCED: Cell<Option<Mode>> = const { Cell::new(None) };
}

/// The mode [`with_mode`] set on this thread, if any.
pub(super) fn thread_mode() -> Option<Mode> {
    FORCED.with(|c| c.get())
}

/// `HYBLAS_CUBLAS` (read once).
pub(super) fn env_mode() -> Mode {
    *ENV_MODE
}

/// The mode in force on this thread: [`with_mode`]'s, else `HYBLAS_CUBLAS` (read once).
pub fn mode() -> Mode {
    thread_mode().unwrap_or_else(env_mode)
}

/// Run `f` with every cuBLAS-layer call of this thread routed under mode `m` (tests and
/// benchmarks compare both sides in one process this way).
pub fn with_mode<R>(m: Mode, f: impl FnOnce() -> R) -> R {
    crate::config::with_local(&FORCED, Some(m), f)
}

/// Routine families, each with its threshold key and default.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Family {
    Level1,
    Gemv,
    Ger,
    Trmv,
}

impl Family {
    /// The family-wide key.
    pub fn key(self) -> &'static str {
        match self {
            Family::Level1 => "HYBLAS_CUBLAS_L1_MIN",
            Family::Gemv => "HYBLAS_CUBLAS_GEMV_MIN",
            Family::Ger => "HYBLAS_CUBLAS_GER_MIN",
            Family::Trmv => "HYBLAS_CUBLAS_TRMV_MIN",
        }
    }
    /// The default threshold (see the module table).
    pub fn default_min(self) -> u64 {
        match self {
            Family::Level1 => 1 << 16,
            Family::Gemv | Family::Ger => 1024,
            Family::Trmv => 0,
        }
    }
    /// Whether the threshold is the side of a square (m*n >= MIN^2) rather than a length.
    fn square(self) -> bool {
        matches!(self, Family::Gemv | Family::Ger)
    }
}

/// Why a call went where it went (printed by the trace).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Reason {
    /// A degenerate call, left to cuBLAS's own definition (the text says which).
    Degenerate(&'static str),
    /// `HYBLAS_CUBLAS` or [`with_mode`] forced the side.
    Forced(Mode),
    /// The size model: `size` against threshold `min` set by `key` (`square`: m*n vs min^2).
    Size { size: u64, min: u64, key: &'static str, square: bool },
    /// The calibrated table (`src/plan/gpu_calibrated.rs`, measured by gpubench): `side` is n,
    /// or sqrt(m*n) for Level 2; hyblas between the 1st and 2nd flip point, the 3rd and 4th...
    Calibrated { side: u64, flips: &'static [u64] },
    /// `HYBLAS_CUBLAS_GEMM` forced GEMM's side.
    ForcedGemm(Mode),
    /// GEMM: the split-k model's predicted times (microseconds) on this device.
    Predicted { splitk_us: f64, vendor_us: f64 },
    /// GEMM: m*n above `HYBLAS_CUBLAS_GEMM_MAX_MN` (cuBLAS without asking the model).
    GemmMaxMn { mn: u64, max: u64 },
    /// No GPU runtime to ask the model with: cuBLAS.
    NoRuntime,
    /// GEMM: `HYBLAS_STRASSEN` (or the thread's setting) forced Strassen at this many levels.
    StrassenForced(u32),
    /// GEMM: the Strassen model (`gpu::strassen::Model`) predicted these us at 0, 1, 2 levels
    /// and a gain of at least `min_gain` (a fraction) at the chosen one.
    Strassen { us: [f64; 3], min_gain: f64 },
    /// Batched GEMM: m*n and m*n*k against `HYBLAS_GPU_BATCH_MAX_MN` and `_MAX_MNK` (hyblas's
    /// small-product kernel within both, cuBLAS's batched GEMM beyond).
    BatchSize { mn: u64, mnk: u64, max_mn: u64, max_mnk: u64 },
    /// DGEMM in accurate mode (`HYBLAS_DGEMM_MODE`, the thread's setting): the Ozaki scheme on
    /// the device (`plan::accurate::device_dgemm`); the text names the rounding.
    Accurate(&'static str),
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Reason::Degenerate(what) => write!(f, "{what}: left to cuBLAS"),
            Reason::Forced(m) => write!(f, "HYBLAS_CUBLAS={}", m.name()),
            Reason::ForcedGemm(m) => write!(f, "HYBLAS_CUBLAS_GEMM={}", m.name()),
            Reason::Predicted { splitk_us, vendor_us } => {
                let cmp = if splitk_us < vendor_us { "<" } else { ">=" };
                write!(f, "predicted split-k {splitk_us:.1} us {cmp} cuBLAS {vendor_us:.1} us")
            }
            Reason::GemmMaxMn { mn, max } => write!(f, "m*n={mn} > {}={max}", super::gemm::GEMM_MAX_MN_KEY),
            Reason::NoRuntime => write!(f, "no hyblas GPU runtime to run the model"),
            Reason::StrassenForced(l) => write!(f, "HYBLAS_STRASSEN={l}"),
            Reason::Strassen { us, min_gain } => write!(
                f,
                "Strassen model: predicted cuBLAS {:.1} us, 1 level {:.1} us, 2 levels {:.1} us (gain >= {:.0}%)",
                us[0],
                us[1],
                us[2],
                min_gain * 100.0
            ),
            Reason::Accurate(r) => write!(f, "accurate mode ({r}): the Ozaki scheme"),
            Reason::BatchSize { mn, mnk, max_mn, max_mnk } => {
                let within = mn <= max_mn && mnk <= max_mnk;
                let cmp = if within { "within" } else { "not within" };
                let (a, b) = (super::batch::GPU_MAX_MN_KEY, super::batch::GPU_MAX_MNK_KEY);
                write!(f, "m*n={mn} m*n*k={mnk} {cmp} {a}={max_mn}, {b}={max_mnk}")
            }
            Reason::Calibrated { side, flips } => {
                write!(f, "size {side} against the calibrated {} flip points {flips:?}", gpu_calibrated::DEVICE)
            }
            Reason::Size { size, min, key, square } => {
                let big = if square { size >= min.saturating_mul(min) } else { size >= min };
                let cmp = if big { ">=" } else { "<" };
                if square {
                    write!(f, "m*n={size} {cmp} {key}^2={min}^2")
                } else {
                    write!(f, "n={size} {cmp} {key}={min}")
                }
            }
        }
    }
}

/// A routing decision.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Decision {
    pub route: Route,
    pub reason: Reason,
}

impl Decision {
    /// Whether hyblas's side was forced (`HYBLAS_CUBLAS=hyblas`, `HYBLAS_CUBLAS_GEMM=hyblas`,
    /// [`with_mode`]): such a call waits for its kernel's compile rather than taking cuBLAS
    /// meanwhile (`gpu::loader`).
    pub fn forced_hyblas(&self) -> bool {
        match self.route {
            // (Accurate mode waits for its kernels: cuBLAS's native answer would break the
            // guarantee the caller asked for.)
            Route::Hyblas => matches!(
                self.reason,
                Reason::Forced(Mode::Hyblas) | Reason::ForcedGemm(Mode::Hyblas) | Reason::Accurate(_)
            ),
            Route::Strassen(_) => matches!(self.reason, Reason::StrassenForced(_)),
            Route::Vendor => false,
        }
    }
}

/// One threshold as read: its value and the key that set it (or the family key, default).
#[derive(Clone, Copy, Debug)]
struct Threshold {
    min: u64,
    key: &'static str,
    /// The calibrated flip points, used when no key for the routine or family is set.
    flips: Option<&'static [u64]>,
}

/// Keyed by the address of the symbol's static name (no string hashing on the hot path; a
/// name with two addresses is only cached twice) and the GEMV operation.
type ThresholdKey = (usize, u8);

/// Every threshold read so far (each computed once: the keys of a specific routine leak a
/// string each, a bounded set).
static THRESHOLDS: Lazy<RwLock<HashMap<ThresholdKey, Threshold>>> = Lazy::new(|| RwLock::new(HashMap::new()));

thread_local! {
    /// In front of [`THRESHOLDS`], per thread: a lookup is a word hash with no lock or shared
    /// cache line (every cuBLAS-layer call makes one, and calls of 3 us are timed by the host's
    /// cost).
    static LOCAL_THRESHOLDS: std::cell::RefCell<HashMap<ThresholdKey, Threshold, std::hash::BuildHasherDefault<WordHasher>>> =
        std::cell::RefCell::new(HashMap::default());
}

/// The short BLAS name of a cuBLAS symbol: `cublasSgemv_v2_64` -> `sgemv`, `cublasIsamax_v2` ->
/// `isamax`, `cublasZdscal_v2` -> `zdscal`.
pub fn short_name(symbol: &str) -> String {
    let s = symbol.strip_prefix("cublas").unwrap_or(symbol);
    let s = s.strip_suffix("_64").unwrap_or(s);
    let s = s.strip_suffix("_v2").unwrap_or(s);
    s.to_ascii_lowercase()
}

/// The threshold of `symbol` in `family` (`base`: the routine across precisions, Level 1 only;
/// `op`: GEMV's operation), most specific key first, read once per (symbol, op).
fn threshold(family: Family, symbol: &'static str, base: &str, op: u8) -> Threshold {
    let key = (symbol.as_ptr() as usize, op);
    if let Some(t) = LOCAL_THRESHOLDS.try_with(|c| c.borrow().get(&key).copied()).ok().flatten() {
        return t;
    }
    let t = shared_threshold(key, family, symbol, base, op);
    let _ = LOCAL_THRESHOLDS.try_with(|c| c.borrow_mut().insert(key, t));
    t
}

/// [`threshold`]'s shared level: read once per (symbol, op) in the process.
fn shared_threshold(key: ThresholdKey, family: Family, symbol: &'static str, base: &str, op: u8) -> Threshold {
    if let Some(t) = THRESHOLDS.read().get(&key) {
        return *t;
    }
    let short = short_name(symbol).to_ascii_uppercase();
    let mut keys = Vec::with_capacity(3);
    if op != 0 {
        keys.push(format!("HYBLAS_CUBLAS_{short}_{}_MIN", op as char));
    }
    keys.push(format!("HYBLAS_CUBLAS_{short}_MIN"));
    if !base.is_empty() {
        keys.push(format!("HYBLAS_CUBLAS_{}_MIN", base.to_ascii_uppercase()));
    }
    // The specific keys are optional overrides; the family key goes through
    // `config::threshold` with its default.
    let t = keys
        .into_iter()
        .find_map(|k| config::value(&k).and_then(|v| v.trim().parse::<u64>().ok()).map(|min| (k, min)))
        // Leaked once per distinct key (a bounded set: the exported symbols).
        .map(|(k, min)| Threshold { min, key: Box::leak(k.into_boxed_str()), flips: None })
        .unwrap_or_else(|| {
            let lower = short_name(symbol);
            let flips = if config::value(family.key()).is_some() {
                None
            } else {
                gpu_calibrated::TABLE.iter().find(|(name, o, _)| *name == lower && *o == op).map(|&(_, _, f)| f)
            };
            Threshold {
                min: config::threshold(family.key(), family.default_min() as usize) as u64,
                key: family.key(),
                flips,
            }
        });
    *THRESHOLDS.write().entry(key).or_insert(t)
}

fn by_size(family: Family, symbol: &'static str, base: &str, op: u8, size: u64) -> Decision {
    let t = threshold(family, symbol, base, op);
    if let Some(flips) = t.flips {
        // The side of the equivalent square for Level 2 (the sweep was square).
        let side = if family.square() { (size as f64).sqrt() as u64 } else { size };
        let passed = flips.iter().take_while(|&&f| f <= side).count();
        return Decision {
            route: if passed % 2 == 1 { Route::Hyblas } else { Route::Vendor },
            reason: Reason::Calibrated { side, flips },
        };
    }
    let square = family.square();
    let big = if square { size >= t.min.saturating_mul(t.min) } else { size >= t.min };
    Decision {
        route: if big { Route::Hyblas } else { Route::Vendor },
        reason: Reason::Size { size, min: t.min, key: t.key, square },
    }
}

fn count(v: i64) -> u64 {
    v.max(0) as u64
}

/// Level 1 (`base`: `axpy`, `scal`, `copy`, `swap`, `dot`, `nrm2`, `asum`, `amax`): hyblas
/// when n >= `HYBLAS_CUBLAS_L1_MIN` (below, cuBLAS's launch is as fast and the data fits in L2).
pub fn level1(symbol: &'static str, base: &str, n: i64) -> Decision {
    by_size(Family::Level1, symbol, base, 0, count(n))
}

/// GEMV: hyblas when m*n >= `HYBLAS_CUBLAS_GEMV_MIN`^2.
pub fn gemv(symbol: &'static str, trans: Trans, m: i64, n: i64) -> Decision {
    let op = op_code(trans);
    by_size(Family::Gemv, symbol, "", op, count(m).saturating_mul(count(n)))
}

/// GER (u and c): hyblas when m*n >= `HYBLAS_CUBLAS_GER_MIN`^2.
pub fn ger(symbol: &'static str, m: i64, n: i64) -> Decision {
    by_size(Family::Ger, symbol, "", 0, count(m).saturating_mul(count(n)))
}

/// TRMV: hyblas when n >= `HYBLAS_CUBLAS_TRMV_MIN` (default 0: always).
pub fn trmv(symbol: &'static str, n: i64) -> Decision {
    by_size(Family::Trmv, symbol, "", 0, count(n))
}

/// The decision for one call: degenerate calls go to cuBLAS, then a forced mode, then the
/// family's size model (`model`, one of the functions above).
pub fn decide(degenerate: Option<&'static str>, model: impl FnOnce() -> Decision) -> Decision {
    if let Some(what) = degenerate {
        return Decision { route: Route::Vendor, reason: Reason::Degenerate(what) };
    }
    match mode() {
        Mode::Hyblas => Decision { route: Route::Hyblas, reason: Reason::Forced(Mode::Hyblas) },
        Mode::Vendor => Decision { route: Route::Vendor, reason: Reason::Forced(Mode::Vendor) },
        Mode::Auto => model(),
    }
}

/// A multiply-rotate hasher (FxHash's): the cache keys are a few machine words, and SipHash's
/// cost would show next to a 5 us cuBLAS call.
#[derive(Default, Clone, Copy)]
pub(super) struct WordHasher(u64);

impl std::hash::Hasher for WordHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_u32(&mut self, v: u32) {
        self.write_u64(v as u64);
    }
    fn write_u8(&mut self, v: u8) {
        self.write_u64(v as u64);
    }
    fn write_usize(&mut self, v: usize) {
        self.write_u64(v as u64);
    }
    fn write_i64(&mut self, v: i64) {
        self.write_u64(v as u64);
    }
}

/// A transpose as one byte (decision cache keys).
pub(super) fn op_code(t: Trans) -> u8 {
    match t {
        Trans::No => b'N',
        Trans::Trans => b'T',
        Trans::ConjTrans => b'C',
    }
}

/// How a routed call ended.
pub enum Outcome<'a> {
    /// It ran where it was routed.
    Done,
    /// hyblas was chosen but declined (the error); the real cuBLAS ran it.
    Declined(&'a dyn fmt::Display),
    /// hyblas was chosen but its kernel is still on its way (`GpuError::NotReady`: compiling
    /// in the background); the real cuBLAS ran it.
    NotReady(&'a dyn fmt::Display),
}

impl<'a> Outcome<'a> {
    /// The outcome of a hyblas side that failed with `e`.
    pub fn of_error(e: &'a crate::gpu::GpuError) -> Outcome<'a> {
        match e {
            crate::gpu::GpuError::NotReady { .. } => Outcome::NotReady(e),
            _ => Outcome::Declined(e),
        }
    }
    /// The route and reason part of a trace line: `route=hyblas (<reason>)`, `route=vendor
    /// (kernel compiling: unit splitk_d_skm16; planned hyblas: <reason>)`, `route=hyblas->vendor
    /// (<reason>; hyblas declined: <error>)`.
    pub fn describe(&self, d: &Decision) -> String {
        match self {
            Outcome::Done => format!("route={} ({})", d.route.name(), d.reason),
            Outcome::Declined(e) => format!("route={0}->vendor ({1}; {0} declined: {e})", d.route.name(), d.reason),
            Outcome::NotReady(e) => format!("route=vendor ({e}; planned {}: {})", d.route.name(), d.reason),
        }
    }
}

/// Write the call's trace line (when tracing is on):
/// `hyblas: cublasSgemv_v2 trans=N m=.. route=hyblas (m*n=.. >= HYBLAS_CUBLAS_GEMV_MIN^2=..)`.
pub fn trace(symbol: &str, shape: impl FnOnce() -> String, d: &Decision, outcome: Outcome) {
    if !crate::trace::enabled() {
        return;
    }
    let text = format!("{symbol} {} {}", shape(), outcome.describe(d));
    crate::trace::note(&text);
}
