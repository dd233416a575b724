//! gpubench: hyblas's GPU Level 1/2 kernels and small-output GEMM (split-k, the
//! `gemm_smallout` group in `gpubench_gemm.rs`) against the real cuBLAS, side by side in one
//! process, on the same device buffers and the same stream (bench/README.md, "GPU").
//!
//! Three columns per point: `hyblas` (the `hyblas::gpu` functions called directly), `cublas`
//! (the real cuBLAS through `hyblas::gpu::vendor`, its own handle on our stream, host pointer
//! mode) and `entry` (hyblas's exported `cublas*_v2` symbols, when a hyblas library exporting
//! them can be found: the path a cuBLAS program that preloads hyblas takes). Timing is CUDA
//! events around back-to-back batches, median over samples; the three sides alternate
//! sample by sample so drift hits them alike.

use hyblas::abi::cublas::A16;
use hyblas::gpu::driver::{check, sys, GpuError};
use hyblas::gpu::level1::{self, IndexOut};
use hyblas::gpu::timing::Timer;
use hyblas::gpu::{gemv as g2, trmv as t2, vendor, DMat, DVec, DeviceBuffer, Exec, In, Out, Runtime};
use hyblas::types::{Diag, Real, Scalar, Trans, Uplo, C32, C64};
use rayon::prelude::*;
use std::collections::HashMap;
use std::ffi::{c_int, c_void, CStr, CString};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Instant;

#[path = "gpubench_batch.rs"]
mod batch;
#[path = "gpubench_gemm.rs"]
mod gemm_smallout;
#[path = "gpubench_strassen.rs"]
mod strassen;
mod svg_axes;

const HELP: &str = "\
gpubench: hyblas GPU Level 1/2 kernels and small-output GEMM against the real cuBLAS (same
process, buffers, stream)

usage: gpubench [options]

  --quick              Level 2 n step 1024, Level 1 powers of two only, a small GEMM grid,
                       fewer repetitions
  --only LIST          groups or routines: level12 (every Level 1/2 routine), gemm_smallout
                       (split-k GEMM, m, n <= 128, k = 2^12..2^22; alias gemm), or by base name
                       or variant: gemv,ger,trmv,axpy,scal,copy,swap,dot,nrm2,asum,iamax or
                       gemv_t,trmv_lnn,dotc,... (default: everything)
  --prec LIST          precisions among s,d,c,z (default all)
  --trmv LIST          TRMV variants uplo+trans+diag (default lnn,utn; complex adds ucn)
  --out DIR            where the CSV and SVGs go (default bench/results)
  --target-ms MS       timed work per side and point (default 15, --quick 4)
  --min-reps N         (default 5, --quick 3)      --max-reps N   (default 200, --quick 40)
  --max-n N            largest Level 2 n (default 16384)
  --max-len N          largest Level 1 length (default 2^28)
  --n LIST             exact Level 2 sizes instead of the sweep (e.g. 8192,16384)
  --pad K              Level 2 leading dimension n + K instead of n (default 0): shows whether
                       a size's speed is the column stride's (same n, other strides)
  --len LIST           exact Level 1 lengths instead of the sweep (2^k allowed: 2^26,2^28)
  --warm               every call re-reads the same operands (one region), so sizes under the
                       L2's capacity run from the L2 and the curves step down at 16-64 MB
  --cold               (default) every timed call reads operands that no call touched within
                       the last 4x the L2's bytes (a rotating region of the operand pool, on
                       every side alike): DRAM speed at every size, the figure the copy
                       bandwidth is
  --results WHERE      where reductions' scalar results go in the timed calls: device (default;
                       times the kernels) or host (adds the wait a host-pointer-mode caller pays)
  --overhead           only measure the host cost of one call (us of enqueue per call, tiny
                       n, GPU kept busy): real cuBLAS, the entry forced to either side, hyblas
  --gemm-points LIST   gemm_smallout: only these points, p:ab:m:n:k (e.g. s:nn:64:64:8192,d:tn:1:1:2^20)
  --gemm-sides LIST    gemm_smallout: only these sides of hyblas,atomic,cublas,entry,cublas2
                       (e.g. hyblas alone: its calls back to back, nothing between them)
  --twin               also time the real cuBLAS through a second handle (cublas2_us): how far
                       two handles of the same library differ, beside entry/cuBLAS
                       (--gemm-twin: the same)
  --entry-lib PATH     hyblas library whose cublas*_v2 exports make the entry column
                       (default: the process's own, else libhyblas.so next to this program)
  --no-entry           leave the entry column empty
  --from-csv FILE      no GPU work: print the tables and write the SVGs from a CSV written earlier
  -h, --help           this text

Prints \"no GPU\" and exits 0 where there is no usable GPU.
";

// ---------------------------------------------------------------------------------------------
// Options

enum EntryChoice {
    Auto,
    Off,
    Lib(PathBuf),
}

struct Opts {
    quick: bool,
    only: Vec<String>,
    prec: Vec<char>,
    trmv: Vec<String>,
    out: PathBuf,
    target: f64,
    min_reps: usize,
    max_reps: usize,
    max_n: usize,
    max_len: usize,
    entry: EntryChoice,
    from_csv: Option<PathBuf>,
    sizes_n: Vec<usize>,
    sizes_len: Vec<usize>,
    overhead: bool,
    gemm_points: Vec<(char, gemm_smallout::Point)>,
    gemm_twin: bool,
    /// `--gemm-sides`: the gemm_smallout sides to run (default all of [`gemm_smallout::SIDES`]).
    gemm_sides: Option<Vec<String>>,
}

fn list(s: &str) -> Vec<String> {
    s.split(',').map(|p| p.trim().to_lowercase()).filter(|p| !p.is_empty()).collect()
}

/// `<cwd>/bench/results` when run from a checkout (the GPU host runs it from the repo root),
/// else the build tree's, else `./bench/results`.
fn default_out_dir() -> PathBuf {
    if Path::new("bench").is_dir() {
        return PathBuf::from("bench/results");
    }
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    if repo.join("bench").is_dir() {
        repo.join("bench/results")
    } else {
        PathBuf::from("bench/results")
    }
}

fn parse_opts() -> Result<Opts, String> {
    let mut o = Opts {
        quick: false,
        only: Vec::new(),
        prec: vec!['s', 'd', 'c', 'z'],
        trmv: Vec::new(),
        out: default_out_dir(),
        target: f64::NAN,
        min_reps: 0,
        max_reps: 0,
        max_n: 16384,
        max_len: 1 << 28,
        entry: EntryChoice::Auto,
        from_csv: None,
        sizes_n: Vec::new(),
        sizes_len: Vec::new(),
        overhead: false,
        gemm_points: Vec::new(),
        gemm_twin: false,
        gemm_sides: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let (key, inline) = match arg.split_once('=') {
            Some((k, v)) if k.starts_with("--") => (k.to_string(), Some(v.to_string())),
            _ => (arg.clone(), None),
        };
        let mut value = || inline.clone().or_else(|| args.next()).ok_or_else(|| format!("{key} needs a value"));
        let num = |v: String, what: &str| v.parse::<usize>().map_err(|_| format!("bad {what} `{v}`"));
        match key.as_str() {
            "-h" | "--help" => {
                print!("{HELP}");
                std::process::exit(0);
            }
            "--quick" => o.quick = true,
            "--only" => o.only = list(&value()?),
            "--prec" => {
                o.prec = list(&value()?).iter().filter_map(|p| p.chars().next()).collect();
                if o.prec.is_empty() || o.prec.iter().any(|p| !"sdcz".contains(*p)) {
                    return Err("--prec takes a list of s, d, c, z".into());
                }
            }
            "--trmv" => o.trmv = list(&value()?),
            "--out" => o.out = PathBuf::from(value()?),
            "--target-ms" => {
                o.target = value()?.parse::<f64>().map_err(|_| "bad --target-ms")? / 1e3;
            }
            "--min-reps" => o.min_reps = num(value()?, "--min-reps")?.max(1),
            "--max-reps" => o.max_reps = num(value()?, "--max-reps")?.max(1),
            "--max-n" => o.max_n = num(value()?, "--max-n")?,
            "--max-len" => o.max_len = num(value()?, "--max-len")?,
            "--entry-lib" => o.entry = EntryChoice::Lib(PathBuf::from(value()?)),
            "--no-entry" => o.entry = EntryChoice::Off,
            "--from-csv" => o.from_csv = Some(PathBuf::from(value()?)),
            "--n" => o.sizes_n = sizes(&value()?)?,
            "--pad" => {
                let k: usize = value()?.parse().map_err(|e| format!("--pad: {e}"))?;
                LDA_PAD.store(k, Ordering::Relaxed);
            }
            "--len" => o.sizes_len = sizes(&value()?)?,
            "--results" => match value()?.as_str() {
                "host" => HOST_RESULTS.store(true, Ordering::Relaxed),
                "device" => HOST_RESULTS.store(false, Ordering::Relaxed),
                v => return Err(format!("--results takes host or device, not `{v}`")),
            },
            "--overhead" => o.overhead = true,
            "--cold" => COLD.store(true, Ordering::Relaxed),
            "--warm" => COLD.store(false, Ordering::Relaxed),
            "--gemm-points" => o.gemm_points = gemm_smallout::parse_points(&value()?)?,
            "--gemm-twin" | "--twin" => o.gemm_twin = true,
            "--gemm-sides" => o.gemm_sides = Some(gemm_smallout::parse_sides(&value()?)?),
            _ => return Err(format!("unknown argument `{arg}` (see --help)")),
        }
    }
    if o.target.is_nan() {
        o.target = if o.quick { 0.004 } else { 0.015 };
    }
    if o.min_reps == 0 {
        o.min_reps = if o.quick { 3 } else { 5 };
    }
    if o.max_reps == 0 {
        o.max_reps = if o.quick { 40 } else { 200 };
    }
    o.max_reps = o.max_reps.max(o.min_reps);
    for v in &o.trmv {
        if v.len() != 3 || !"ul".contains(&v[0..1]) || !"ntc".contains(&v[1..2]) || !"nu".contains(&v[2..3]) {
            return Err(format!("bad TRMV variant `{v}` (uplo u/l, trans n/t/c, diag n/u: e.g. lnn)"));
        }
    }
    Ok(o)
}

/// A list of sizes: numbers or powers `2^k`.
fn sizes(v: &str) -> Result<Vec<usize>, String> {
    let mut out: Vec<usize> = list(v)
        .iter()
        .map(|t| match t.strip_prefix("2^") {
            Some(k) => k.parse::<u32>().ok().filter(|&k| k < 48).map(|k| 1usize << k),
            None => t.parse().ok(),
        })
        .collect::<Option<_>>()
        .ok_or_else(|| format!("bad size list `{v}`"))?;
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// Level 2 sizes (square n): 1024..=max step 256 (--quick: step 1024), or `--n`.
fn l2_sizes(o: &Opts) -> Vec<usize> {
    if !o.sizes_n.is_empty() {
        return o.sizes_n.clone();
    }
    let step = if o.quick { 1024 } else { 256 };
    (1024..=o.max_n.max(1024)).step_by(step).collect()
}

/// Level 1 lengths: 2^16..=max, powers of two plus the 1.5x points (--quick: powers only).
fn l1_sizes(o: &Opts) -> Vec<usize> {
    if !o.sizes_len.is_empty() {
        return o.sizes_len.clone();
    }
    let mut v = Vec::new();
    for k in 16..=40 {
        let p = 1usize << k;
        if p > o.max_len.max(1 << 16) {
            break;
        }
        v.push(p);
        if !o.quick && p + p / 2 <= o.max_len {
            v.push(p + p / 2);
        }
    }
    v
}

// ---------------------------------------------------------------------------------------------
// Routines

#[derive(Clone, Copy, Debug, PartialEq)]
enum Op {
    Gemv(Trans),
    Ger,
    Trmv(Uplo, Trans, Diag),
    Axpy,
    Scal,
    Copy,
    Swap,
    Dot { conj: bool },
    Nrm2,
    Asum,
    Iamax,
}

fn trans_letter(t: Trans) -> char {
    match t {
        Trans::No => 'n',
        Trans::Trans => 't',
        Trans::ConjTrans => 'c',
    }
}

/// cuBLAS enum values (cublasOperation_t, cublasFillMode_t, cublasDiagType_t).
fn trans_code(t: Trans) -> c_int {
    match t {
        Trans::No => 0,
        Trans::Trans => 1,
        Trans::ConjTrans => 2,
    }
}

impl Op {
    /// The CSV `routine` column: `gemv_n`, `ger_u`, `trmv_lnn`, `axpy`, `dot`/`dotu`/`dotc`.
    fn name(self, complex: bool) -> String {
        match self {
            Op::Gemv(t) => format!("gemv_{}", trans_letter(t)),
            Op::Ger => "ger_u".into(),
            Op::Trmv(u, t, d) => format!(
                "trmv_{}{}{}",
                if u == Uplo::Upper { 'u' } else { 'l' },
                trans_letter(t),
                if d == Diag::Unit { 'u' } else { 'n' }
            ),
            Op::Dot { conj: true } => "dotc".into(),
            Op::Dot { conj: false } => (if complex { "dotu" } else { "dot" }).into(),
            Op::Axpy => "axpy".into(),
            Op::Scal => "scal".into(),
            Op::Copy => "copy".into(),
            Op::Swap => "swap".into(),
            Op::Nrm2 => "nrm2".into(),
            Op::Asum => "asum".into(),
            Op::Iamax => "iamax".into(),
        }
    }
    fn base(self) -> &'static str {
        match self {
            Op::Gemv(_) => "gemv",
            Op::Ger => "ger",
            Op::Trmv(..) => "trmv",
            Op::Axpy => "axpy",
            Op::Scal => "scal",
            Op::Copy => "copy",
            Op::Swap => "swap",
            Op::Dot { .. } => "dot",
            Op::Nrm2 => "nrm2",
            Op::Asum => "asum",
            Op::Iamax => "iamax",
        }
    }
    fn level2(self) -> bool {
        matches!(self, Op::Gemv(_) | Op::Ger | Op::Trmv(..))
    }
    /// Elements moved per call, each matrix/vector element read or written once (y of GEMV
    /// is read and written: beta != 0).
    fn elems(self, n: usize) -> f64 {
        let n = n as f64;
        match self {
            Op::Gemv(_) => n * n + 3.0 * n,
            Op::Ger => 2.0 * n * n + 2.0 * n,
            Op::Trmv(..) => n * (n + 1.0) / 2.0 + 2.0 * n,
            Op::Axpy => 3.0 * n,
            Op::Scal | Op::Copy | Op::Dot { .. } => 2.0 * n,
            Op::Swap => 4.0 * n,
            Op::Nrm2 | Op::Asum | Op::Iamax => n,
        }
    }
    /// A scalar result comes back to the host (host pointer mode): compared across sides.
    fn reduction(self) -> bool {
        matches!(self, Op::Dot { .. } | Op::Nrm2 | Op::Asum | Op::Iamax)
    }
    /// The cuBLAS symbol for precision `p`.
    fn cublas_name(self, p: char) -> String {
        let up = p.to_ascii_uppercase();
        let real = p == 's' || p == 'd';
        // nrm2/asum of complex vectors: Scnrm2, Dznrm2, Scasum, Dzasum.
        let mixed = match p {
            'c' => "Sc",
            'z' => "Dz",
            _ => "",
        };
        match self {
            Op::Gemv(_) => format!("cublas{up}gemv_v2"),
            Op::Ger => format!("cublas{up}{}_v2", if real { "ger" } else { "geru" }),
            Op::Trmv(..) => format!("cublas{up}trmv_v2"),
            Op::Axpy => format!("cublas{up}axpy_v2"),
            Op::Scal => format!("cublas{up}scal_v2"),
            Op::Copy => format!("cublas{up}copy_v2"),
            Op::Swap => format!("cublas{up}swap_v2"),
            Op::Dot { conj } => format!(
                "cublas{up}{}_v2",
                if real {
                    "dot"
                } else if conj {
                    "dotc"
                } else {
                    "dotu"
                }
            ),
            Op::Nrm2 if real => format!("cublas{up}nrm2_v2"),
            Op::Nrm2 => format!("cublas{mixed}nrm2_v2"),
            Op::Asum if real => format!("cublas{up}asum_v2"),
            Op::Asum => format!("cublas{mixed}asum_v2"),
            Op::Iamax => format!("cublasI{p}amax_v2"),
        }
    }
}

fn family(routine: &str) -> &'static str {
    if routine.starts_with("gemv") {
        "gemv"
    } else if routine.starts_with("ger") {
        "ger"
    } else if routine.starts_with("trmv") {
        "trmv"
    } else {
        "level1"
    }
}

fn is_level1(routine: &str) -> bool {
    family(routine) == "level1"
}

/// The routines measured for one precision, in order, filtered by --only and --trmv.
fn ops_for(o: &Opts, complex: bool) -> Vec<Op> {
    let mut ops = vec![Op::Gemv(Trans::No), Op::Gemv(Trans::Trans)];
    if complex {
        ops.push(Op::Gemv(Trans::ConjTrans));
    }
    ops.push(Op::Ger);
    let trmv: Vec<String> = if o.trmv.is_empty() {
        let mut v = vec!["lnn".to_string(), "utn".to_string()];
        if complex {
            v.push("ucn".into());
        }
        v
    } else {
        o.trmv.clone()
    };
    for v in trmv {
        let b = v.as_bytes();
        let t = match b[1] {
            b'n' => Trans::No,
            b't' => Trans::Trans,
            _ if complex => Trans::ConjTrans,
            _ => continue,
        };
        let u = if b[0] == b'u' { Uplo::Upper } else { Uplo::Lower };
        let d = if b[2] == b'u' { Diag::Unit } else { Diag::NonUnit };
        ops.push(Op::Trmv(u, t, d));
    }
    ops.extend([Op::Axpy, Op::Scal, Op::Copy, Op::Swap, Op::Dot { conj: false }]);
    if complex {
        ops.push(Op::Dot { conj: true });
    }
    ops.extend([Op::Nrm2, Op::Asum, Op::Iamax]);
    ops.retain(|op| {
        o.only.is_empty()
            || o.only.iter().any(|w| {
                w == "level12" || w == op.base() || *w == op.name(complex) || (w == "dotu" && op.base() == "dot")
            })
    });
    ops
}

// ---------------------------------------------------------------------------------------------
// cuBLAS, real and hyblas's exports, through function pointers

type H = *mut c_void;
type Vp = *const c_void;
type Mp = *mut c_void;
type CreateFn = unsafe extern "C" fn(*mut H) -> c_int;
type DestroyFn = unsafe extern "C" fn(H) -> c_int;
type SetStreamFn = unsafe extern "C" fn(H, sys::CUstream) -> c_int;
type SetPtrModeFn = unsafe extern "C" fn(H, c_int) -> c_int;
type VersionFn = unsafe extern "C" fn(H, *mut c_int) -> c_int;
type GemvFn = unsafe extern "C" fn(H, c_int, c_int, c_int, Vp, Vp, c_int, Vp, c_int, Vp, Mp, c_int) -> c_int;
type GerFn = unsafe extern "C" fn(H, c_int, c_int, Vp, Vp, c_int, Vp, c_int, Mp, c_int) -> c_int;
type TrmvFn = unsafe extern "C" fn(H, c_int, c_int, c_int, c_int, Vp, c_int, Mp, c_int) -> c_int;
type AxpyFn = unsafe extern "C" fn(H, c_int, Vp, Vp, c_int, Mp, c_int) -> c_int;
type ScalFn = unsafe extern "C" fn(H, c_int, Vp, Mp, c_int) -> c_int;
type CopyFn = unsafe extern "C" fn(H, c_int, Vp, c_int, Mp, c_int) -> c_int;
type DotFn = unsafe extern "C" fn(H, c_int, Vp, c_int, Vp, c_int, Mp) -> c_int;
type RedFn = unsafe extern "C" fn(H, c_int, Vp, c_int, Mp) -> c_int;

/// The file of the shared object `p` lies in.
fn object_of(p: *const c_void) -> Option<String> {
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only reads the loader's tables.
    if p.is_null() || unsafe { libc::dladdr(p, &mut info) } == 0 || info.dli_fname.is_null() {
        return None;
    }
    Some(unsafe { CStr::from_ptr(info.dli_fname) }.to_string_lossy().into_owned())
}

fn object_base(p: *const c_void) -> Option<usize> {
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    (unsafe { libc::dladdr(p, &mut info) } != 0).then_some(info.dli_fbase as usize)
}

fn basename(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// hyblas's own code: this program (which links the hyblas rlib) or a library named *hyblas*.
fn is_hyblas(p: *const c_void) -> bool {
    let here = object_base(is_hyblas as *const () as *const c_void);
    object_base(p).is_some_and(|b| Some(b) == here) || object_of(p).is_some_and(|f| basename(&f).contains("hyblas"))
}

fn is_real_cublas(p: *const c_void) -> bool {
    !is_hyblas(p) && object_of(p).is_some_and(|f| basename(&f).contains("libcublas"))
}

fn dlerror_text() -> String {
    // SAFETY: dlerror returns NULL or a NUL-terminated string owned by libc.
    unsafe {
        let e = libc::dlerror();
        if e.is_null() {
            "unknown error".into()
        } else {
            CStr::from_ptr(e).to_string_lossy().into_owned()
        }
    }
}

fn dlopen_local(path: &str) -> Result<*mut c_void, String> {
    let c = CString::new(path).map_err(|_| "bad path".to_string())?;
    // SAFETY: RTLD_LOCAL keeps its symbols out of the global scope (and out of RTLD_NEXT
    // searches made by the hyblas code linked into this program).
    let h = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
    if h.is_null() {
        Err(format!("{path}: {}", dlerror_text()))
    } else {
        Ok(h)
    }
}

/// Where an API's symbols come from.
enum Source {
    /// `hyblas::gpu::vendor::lookup` (checked to land in a libcublas).
    Vendor,
    /// A library handle of our own (`dlsym(handle, ..)`).
    Handle(*mut c_void),
    /// `dlsym(RTLD_DEFAULT, ..)`, accepted only where it lands in hyblas.
    Default,
}

/// One side that calls through cuBLAS-style function pointers: the real cuBLAS or hyblas's
/// exported entry points.
struct Api {
    label: &'static str,
    desc: String,
    source: Source,
    handle: H,
    /// A second handle on the same stream in device pointer mode: reductions write their
    /// result to device memory through it (no host round trip in the timed calls).
    handle_dev: H,
    destroy: Option<DestroyFn>,
}

fn leak(name: &str) -> &'static str {
    static NAMES: parking_lot::Mutex<Option<HashMap<String, &'static str>>> = parking_lot::Mutex::new(None);
    let mut g = NAMES.lock();
    let map = g.get_or_insert_with(HashMap::new);
    if let Some(&s) = map.get(name) {
        return s;
    }
    let s: &'static str = Box::leak(name.to_string().into_boxed_str());
    map.insert(name.to_string(), s);
    s
}

fn lookup(source: &Source, name: &str) -> Option<*mut c_void> {
    let c = CString::new(name).ok()?;
    let p = match source {
        Source::Vendor => vendor::lookup(leak(name)).filter(|&p| is_real_cublas(p))?,
        Source::Handle(h) => unsafe { libc::dlsym(*h, c.as_ptr()) },
        Source::Default => unsafe { libc::dlsym(libc::RTLD_DEFAULT, c.as_ptr()) },
    };
    if p.is_null() {
        return None;
    }
    match source {
        Source::Default => is_hyblas(p).then_some(p),
        _ => Some(p),
    }
}

impl Api {
    /// Typed symbol `name` of this API.
    ///
    /// # Safety
    /// `F` must be the function pointer type of that symbol.
    unsafe fn get<F: Copy>(&self, name: &str) -> Option<F> {
        assert_eq!(std::mem::size_of::<F>(), std::mem::size_of::<*mut c_void>());
        lookup(&self.source, name).map(|p| std::mem::transmute_copy::<*mut c_void, F>(&p))
    }

    /// A handle from this source's cublasCreate_v2 bound to `stream`, host pointer mode.
    fn with_handle(label: &'static str, desc: String, source: Source, stream: sys::CUstream) -> Result<Api, String> {
        let mut api =
            Api { label, desc, source, handle: std::ptr::null_mut(), handle_dev: std::ptr::null_mut(), destroy: None };
        unsafe {
            let create: CreateFn = api.get("cublasCreate_v2").ok_or("no cublasCreate_v2")?;
            let set_stream: SetStreamFn = api.get("cublasSetStream_v2").ok_or("no cublasSetStream_v2")?;
            let mut h: H = std::ptr::null_mut();
            let s = create(&mut h);
            if s != 0 || h.is_null() {
                return Err(format!("cublasCreate_v2 returned {s}"));
            }
            api.handle = h;
            api.destroy = api.get("cublasDestroy_v2");
            let s = set_stream(h, stream);
            if s != 0 {
                return Err(format!("cublasSetStream_v2 returned {s}"));
            }
            if let Some(pm) = api.get::<SetPtrModeFn>("cublasSetPointerMode_v2") {
                let s = pm(h, 0);
                if s != 0 {
                    return Err(format!("cublasSetPointerMode_v2(HOST) returned {s}"));
                }
                let mut hd: H = std::ptr::null_mut();
                if create(&mut hd) == 0 && !hd.is_null() {
                    api.handle_dev = hd;
                    if set_stream(hd, stream) != 0 || pm(hd, 1) != 0 {
                        return Err("cannot set up the device-pointer-mode handle".into());
                    }
                }
            }
        }
        Ok(api)
    }
}

impl Drop for Api {
    fn drop(&mut self) {
        if let Some(d) = self.destroy {
            for h in [self.handle, self.handle_dev] {
                if !h.is_null() {
                    unsafe {
                        d(h);
                    }
                }
            }
        }
    }
}

/// The real cuBLAS: hyblas's vendor lookup when it lands in a libcublas, else our own
/// `dlopen(RTLD_LOCAL)` of the names vendor.rs tries (never hyblas's exports).
fn real_cublas(stream: sys::CUstream) -> Result<Api, String> {
    let via_vendor = vendor::lookup("cublasCreate_v2");
    let (source, path) = match via_vendor {
        Some(p) if is_real_cublas(p) => (Source::Vendor, object_of(p).unwrap_or_default()),
        _ => {
            let mut errs = Vec::new();
            let mut found = None;
            for lib in vendor::LIBS {
                match dlopen_local(lib) {
                    Ok(h) => {
                        found = Some(h);
                        break;
                    }
                    Err(e) => errs.push(e),
                }
            }
            let h = found.ok_or_else(|| format!("no cuBLAS library: {}", errs.join("; ")))?;
            let src = Source::Handle(h);
            let p = lookup(&src, "cublasCreate_v2").ok_or("the cuBLAS library has no cublasCreate_v2")?;
            if !is_real_cublas(p) {
                return Err("cublasCreate_v2 does not resolve into a libcublas".into());
            }
            (src, object_of(p).unwrap_or_default())
        }
    };
    let mut api = Api::with_handle("cublas", path, source, stream)?;
    unsafe {
        if let Some(v) = api.get::<VersionFn>("cublasGetVersion_v2") {
            let mut ver = 0;
            if v(api.handle, &mut ver) == 0 {
                api.desc = format!("{} (cublasGetVersion {ver})", api.desc);
            }
        }
    }
    Ok(api)
}

/// hyblas's exported cuBLAS entry points: the process's own (LD_PRELOAD, or this program when
/// it exports them), else `libhyblas.so` beside this program, loaded `RTLD_LOCAL` (a second
/// copy of hyblas with its own runtime, on the same primary context: exactly what a cuBLAS
/// program that preloads hyblas runs). Uses hyblas's `cublasCreate_v2` when it exports one,
/// else the real cuBLAS handle (an interposing layer takes the caller's real handle).
fn entry_api(choice: &EntryChoice, stream: sys::CUstream, real: Option<&Api>) -> Result<Api, String> {
    const PROBE: &[&str] = &["cublasSgemv_v2", "cublasSaxpy_v2", "cublasStrmv_v2", "cublasSdot_v2"];
    let (source, path) = match choice {
        EntryChoice::Off => return Err("disabled (--no-entry)".into()),
        EntryChoice::Lib(p) => {
            let h = dlopen_local(&p.to_string_lossy())?;
            (Source::Handle(h), p.display().to_string())
        }
        EntryChoice::Auto => {
            if let Some(p) = PROBE.iter().find_map(|n| lookup(&Source::Default, n)) {
                (Source::Default, object_of(p).unwrap_or_default())
            } else {
                let exe = std::env::current_exe().map_err(|e| e.to_string())?;
                let lib = exe.with_file_name("libhyblas.so");
                if !lib.exists() {
                    return Err(format!("no hyblas cuBLAS exports in this process and no {}", lib.display()));
                }
                let h = dlopen_local(&lib.to_string_lossy())?;
                (Source::Handle(h), lib.display().to_string())
            }
        }
    };
    if !PROBE.iter().any(|n| lookup(&source, n).is_some_and(|p| is_hyblas(p))) {
        return Err(format!("{path} exports no cublas*_v2 routine (the cuBLAS layer is not built in)"));
    }
    if lookup(&source, "cublasCreate_v2").is_some_and(|p| is_hyblas(p)) {
        return Api::with_handle("entry", format!("{path} (its own cublasCreate_v2)"), source, stream);
    }
    let real = real.ok_or("hyblas exports no cublasCreate_v2 and there is no real cuBLAS handle to pass")?;
    Ok(Api {
        label: "entry",
        desc: format!("{path} (real cuBLAS handle)"),
        source,
        handle: real.handle,
        handle_dev: real.handle_dev,
        destroy: None,
    })
}

// ---------------------------------------------------------------------------------------------
// Device data

/// Uniform in [-1, 1) per component, from a splitmix64 stream.
fn fill_chunk<T: Scalar>(out: &mut [T], seed: u64) {
    let mut s = seed;
    let mut next = || {
        s = s.wrapping_add(0x9E3779B97F4A7C15);
        let mut z = s;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58476D1CE4E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D049BB133111EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    };
    for v in out {
        let re = next();
        let im = if T::IS_COMPLEX { next() } else { 0.0 };
        *v = sc::<T>(re, im);
    }
}

/// Fresh random values into `count` elements at `ptr` (host-generated in parallel, uploaded
/// in chunks).
fn fill<T: Scalar>(ptr: u64, count: usize, seed: u64) -> Result<(), String> {
    const CHUNK: usize = 1 << 23;
    const PIECE: usize = 1 << 15;
    let mut host = vec![T::zero(); CHUNK.min(count)];
    let mut done = 0;
    while done < count {
        let len = CHUNK.min(count - done);
        let base = seed ^ (done as u64).wrapping_mul(0x2545F4914F6CDD1D);
        host[..len]
            .par_chunks_mut(PIECE)
            .enumerate()
            .for_each(|(i, c)| fill_chunk(c, base.wrapping_add(i as u64) << 1));
        let bytes = len * std::mem::size_of::<T>();
        let dst = ptr + (done * std::mem::size_of::<T>()) as u64;
        check(unsafe { sys::cuMemcpyHtoD_v2(dst, host.as_ptr() as *const c_void, bytes) }, "cuMemcpyHtoD")
            .map_err(|e| e.to_string())?;
        done += len;
    }
    Ok(())
}

fn sc<T: Scalar>(re: f64, im: f64) -> T {
    T::from_parts(<T::Real as Scalar>::from_f64(re), <T::Real as Scalar>::from_f64(im))
}

/// One precision's device buffers. Level 2 uses `a` (n x n, ld = n + `--pad`), `x`, `y`; Level 1 uses
/// `a` and `b` as its two vectors. TRMV overwrites x, so each call of a batch gets its own
/// copy in `slots` (restored from `xsrc` before every batch, outside the timed region):
/// x := A*x repeated would overflow within a few dozen calls.
struct Pool {
    a: DeviceBuffer,
    b: DeviceBuffer,
    x: DeviceBuffer,
    y: DeviceBuffer,
    xsrc: DeviceBuffer,
    slots: DeviceBuffer,
    /// A reduction's result in device memory.
    res: DeviceBuffer,
}

/// `--pad`: Level 2 matrices have leading dimension n + LDA_PAD.
static LDA_PAD: AtomicUsize = AtomicUsize::new(0);
fn lda_pad() -> usize {
    LDA_PAD.load(Ordering::Relaxed)
}

fn alloc_pool<T: Scalar>(ops: &[Op], l2: &[usize], l1: &[usize], nslots: usize) -> Result<Pool, String> {
    let esz = std::mem::size_of::<T>();
    let nmax = if ops.iter().any(|o| o.level2()) { l2.last().copied().unwrap_or(0) } else { 0 };
    let lmax = if ops.iter().any(|o| !o.level2()) { l1.last().copied().unwrap_or(0) } else { 0 };
    let tr = if ops.iter().any(|o| matches!(o, Op::Trmv(..))) { nslots * nmax } else { 0 };
    let counts = [((nmax + lda_pad()) * nmax).max(lmax), lmax, nmax, nmax, tr, tr];
    let need: usize = counts.iter().map(|c| c * esz).sum();
    let (mut free, mut total) = (0usize, 0usize);
    unsafe { sys::cuMemGetInfo_v2(&mut free, &mut total) };
    if need > free {
        return Err(format!(
            "needs {:.1} GiB of device memory, {:.1} GiB free (use --max-n / --max-len)",
            need as f64 / (1u64 << 30) as f64,
            free as f64 / (1u64 << 30) as f64
        ));
    }
    let e = |r: hyblas::gpu::Result<DeviceBuffer>| r.map_err(|e| e.to_string());
    let p = Pool {
        a: e(DeviceBuffer::new(counts[0] * esz))?,
        b: e(DeviceBuffer::new(counts[1] * esz))?,
        x: e(DeviceBuffer::new(counts[2] * esz))?,
        y: e(DeviceBuffer::new(counts[3] * esz))?,
        xsrc: e(DeviceBuffer::new(counts[4] * esz))?,
        slots: e(DeviceBuffer::new(counts[5] * esz))?,
        res: e(DeviceBuffer::new(64))?,
    };
    let seed = 0x5EED_0000 + T::PREFIX as u64;
    for (i, (buf, n)) in
        [(&p.a, counts[0]), (&p.b, counts[1]), (&p.x, counts[2]), (&p.y, counts[3]), (&p.xsrc, counts[4])]
            .into_iter()
            .enumerate()
    {
        fill::<T>(buf.ptr, n, seed.wrapping_mul(31).wrapping_add(i as u64 * 0x1000_0000_0000))?;
    }
    Ok(p)
}

// ---------------------------------------------------------------------------------------------
// The sides of one point

/// One call; `i` is its index in the batch (0 = the untimed call before the batch). Returns
/// the scalar result of reductions (re, im; the index for IAMAX) for the cross-check.
type Call<'a> = Box<dyn FnMut(usize) -> Result<Option<[f64; 2]>, String> + 'a>;

fn two<R: Real>(re: R, im: R) -> Option<[f64; 2]> {
    Some([re.to_f64(), im.to_f64()])
}

fn hy(r: hyblas::gpu::Result<()>) -> Result<Option<[f64; 2]>, String> {
    r.map(|_| None).map_err(|e| e.to_string())
}

/// `--results host|device`: where reductions put their scalar result in the timed calls.
/// Device (the default) times the kernels; host adds the wait and copy-back a host-pointer-mode
/// caller pays, on both sides alike.
static HOST_RESULTS: AtomicBool = AtomicBool::new(false);

/// True for a reduction side's first call (the value probe, compared across sides) and, with
/// `--results host`, for every call.
struct HostFirst(bool);
impl HostFirst {
    fn new() -> Self {
        HostFirst(true)
    }
    fn next(&mut self) -> bool {
        std::mem::replace(&mut self.0, false) || HOST_RESULTS.load(Ordering::Relaxed)
    }
}

/// Operand addresses of one point.
#[derive(Clone, Copy)]
struct Ptrs {
    a: u64,
    x: u64,
    y: u64,
    /// TRMV: slot i at slots + i*n elements.
    slots: u64,
    /// Device memory for a reduction's result (device results, see [`device_results`]).
    res: u64,
    /// The regions the rotating operands (Level 1: x and y; Level 2: A) take turns in.
    rot: Rot,
}

/// `--cold` (the default): the rotating operands of each call lie in the next of `regions`
/// regions of the pool, `stride` bytes apart, enough of them that a region comes back only
/// after 4x the L2's bytes of other regions (where the pool holds that many). `--warm`: one
/// region. Warm, a vector of 16-64 MB is partly still in the L2 from the call before, and
/// every Level 1 curve (cuBLAS's too) dips where that stops: on an H200, DDOT 2^21 ran at
/// 4045 GB/s and 2^22 at 3324 warm, 2707 and 3369 cold (session 10).
static COLD: AtomicBool = AtomicBool::new(true);
/// The device's L2 bytes (set in main).
static L2_BYTES: AtomicU64 = AtomicU64::new(50 << 20);
/// True while `measure` makes a side's value probe: reductions then read region 0, so every
/// side's probe sees the same data and the results can be compared.
static PROBING: AtomicBool = AtomicBool::new(false);

#[derive(Clone, Copy)]
struct Rot {
    stride: u64,
    regions: u64,
}

impl Rot {
    /// Regions of `bytes` (rounded up to 4 KiB) in a pool of `pool` bytes.
    fn new(bytes: u64, pool: u64) -> Rot {
        let stride = bytes.max(1).div_ceil(4096) * 4096;
        let want =
            if COLD.load(Ordering::Relaxed) { (4 * L2_BYTES.load(Ordering::Relaxed)).div_ceil(stride) } else { 1 };
        Rot { stride, regions: want.min(pool / stride).max(1) }
    }

    /// The next call's (byte offset of its region, how many turns the region had before).
    /// One counter for every call of the run: region r is taken by calls r, r + regions, ...,
    /// so an update's alternating factor (`signed`, `scal_alpha` of the turn) alternates on
    /// every element it touches and keeps the data within 2x (warm: one region, every call).
    /// `probe`: a reduction, whose value probe reads region 0.
    fn next(self, probe: bool) -> (u64, u64) {
        let g = CALLS.fetch_add(1, Ordering::Relaxed);
        if probe && PROBING.load(Ordering::Relaxed) {
            return (0, g);
        }
        ((g % self.regions) * self.stride, g / self.regions)
    }
}

impl Ptrs {
    /// The next call's operands: the rotating ones (Level 2: A; Level 1: x and y) moved to its
    /// region ([`Rot::next`]), and the region's turn (for the alternating factors).
    fn turn(self, op: Op) -> (Ptrs, u64) {
        let (o, k) = self.rot.next(op.reduction());
        let mut q = self;
        if op.level2() {
            q.a += o;
        } else {
            q.x += o;
            q.y += o;
        }
        (q, k)
    }
}

fn ptrs(op: Op, p: &Pool, n: usize, esz: usize) -> Ptrs {
    if op.level2() {
        let bytes = ((n + lda_pad()) * n * esz) as u64;
        let rot = Rot::new(bytes, p.a.bytes as u64);
        Ptrs { a: p.a.ptr, x: p.x.ptr, y: p.y.ptr, slots: p.slots.ptr, res: p.res.ptr, rot }
    } else {
        let rot = Rot::new((n * esz) as u64, p.a.bytes.min(p.b.bytes) as u64);
        Ptrs { a: 0, x: p.a.ptr, y: p.b.ptr, slots: 0, res: p.res.ptr, rot }
    }
}

/// Scalars of the calls. Updates alternate the sign of alpha (AXPY, GER) or alternate 2 and
/// 1/2 (SCAL, exact) so repeated calls keep the data bounded; GEMV's beta = 1/2 contracts.
fn gemv_ab<T: Scalar>() -> (T, T) {
    (sc(0.75, 0.25), sc(0.5, 0.125))
}
/// One counter for every call of the run ([`Rot::next`]). Warm, an element is touched by a
/// contiguous run of calls (sizes only grow within a sweep), so alternating factors keep it
/// within 2x; cold, by every `regions`-th call, whose turns alternate the same way.
static CALLS: AtomicU64 = AtomicU64::new(0);
fn signed<T: Scalar>(k: u64) -> T {
    if k.is_multiple_of(2) {
        sc(0.5, 0.25)
    } else {
        sc(-0.5, -0.25)
    }
}
fn scal_alpha<T: Scalar>(k: u64) -> T {
    if k.is_multiple_of(2) {
        sc(2.0, 0.0)
    } else {
        sc(0.5, 0.0)
    }
}

fn hyblas_call<'a, T: Scalar>(ex: Exec<'a>, op: Op, n: usize, p: Ptrs) -> Call<'a> {
    let ni = n as i64;
    let esz = std::mem::size_of::<T>() as u64;
    let v = |ptr: u64| DVec { ptr, inc: 1 };
    let ld = ni + lda_pad() as i64;
    // Each call's operands (q: moved to its region, k: the region's turn; see Ptrs::turn).
    let next = move || p.turn(op);
    let mat = move |q: Ptrs| DMat { ptr: q.a, ld };
    match op {
        Op::Gemv(t) => Box::new(move |_| {
            let (al, be) = gemv_ab::<T>();
            let (q, _) = next();
            hy(g2::gemv::<T>(&ex, t, ni, ni, In::Host(al), mat(q), v(q.x), In::Host(be), v(q.y)))
        }),
        Op::Ger => Box::new(move |_| {
            let (q, k) = next();
            hy(g2::ger::<T>(&ex, ni, ni, In::Host(signed::<T>(k)), v(q.x), v(q.y), mat(q), false))
        }),
        Op::Trmv(u, t, d) => Box::new(move |i| {
            let (q, _) = next();
            hy(t2::trmv::<T>(&ex, u, t, d, ni, mat(q), v(p.slots + i as u64 * ni as u64 * esz)))
        }),
        Op::Axpy => Box::new(move |_| {
            let (q, k) = next();
            hy(level1::axpy::<T>(&ex, ni, In::Host(signed::<T>(k)), v(q.x), v(q.y)))
        }),
        Op::Scal => Box::new(move |_| {
            let (q, k) = next();
            hy(level1::scal::<T, T>(&ex, ni, In::Host(scal_alpha::<T>(k)), v(q.x)))
        }),
        Op::Copy => Box::new(move |_| {
            let (q, _) = next();
            hy(level1::copy::<T>(&ex, ni, v(q.x), v(q.y)))
        }),
        Op::Swap => Box::new(move |_| {
            let (q, _) = next();
            hy(level1::swap::<T>(&ex, ni, v(q.x), v(q.y)))
        }),
        // Reductions: the first call (the value probe) returns its result to the host; the
        // timed ones write it to device memory unless --results host.
        Op::Dot { conj } => {
            let mut host = HostFirst::new();
            Box::new(move |_| {
                let mut r = T::zero();
                let out = if host.next() { Out::Host(&mut r as *mut T) } else { Out::Dev(p.res) };
                let (q, _) = next();
                level1::dot::<T>(&ex, ni, v(q.x), v(q.y), conj, out).map_err(|e| e.to_string())?;
                Ok(two(r.re(), r.im()))
            })
        }
        Op::Nrm2 | Op::Asum => {
            let mut host = HostFirst::new();
            Box::new(move |_| {
                let mut r = <T::Real as Scalar>::zero();
                let out = if host.next() { Out::Host(&mut r as *mut T::Real) } else { Out::Dev(p.res) };
                let (q, _) = next();
                if op == Op::Nrm2 {
                    level1::nrm2::<T>(&ex, ni, v(q.x), out)
                } else {
                    level1::asum::<T>(&ex, ni, v(q.x), out)
                }
                .map_err(|e| e.to_string())?;
                Ok(two(r, <T::Real as Scalar>::zero()))
            })
        }
        Op::Iamax => {
            let mut host = HostFirst::new();
            Box::new(move |_| {
                let mut r = 0i32;
                let out = if host.next() { IndexOut::Host32(&mut r) } else { IndexOut::Dev32(p.res) };
                let (q, _) = next();
                level1::iamax::<T>(&ex, ni, v(q.x), out).map_err(|e| e.to_string())?;
                Ok(Some([r as f64, 0.0]))
            })
        }
    }
}

fn status(s: c_int, name: &str) -> Result<Option<[f64; 2]>, String> {
    if s == 0 {
        Ok(None)
    } else {
        Err(format!("{name} returned status {s}"))
    }
}

/// The same call through a cuBLAS-style API; None where the API lacks the symbol.
fn api_call<'a, T: Scalar>(api: &'a Api, op: Op, n: usize, p: Ptrs) -> Option<Call<'a>> {
    let name = op.cublas_name(T::PREFIX);
    let (h, hd, res) = (api.handle, api.handle_dev, p.res as Mp);
    let ni = n as c_int;
    let lda = (n + lda_pad()) as c_int;
    let esz = std::mem::size_of::<T>() as u64;
    // Each call's operands and turn, as in hyblas_call.
    let next = move || {
        let (q, k) = p.turn(op);
        (q.a as Vp, q.x as Vp, q.y as Mp, k)
    };
    let sp = |v: &A16<T>| &v.0 as *const T as Vp;
    // SAFETY (all arms): the function types match the cuBLAS prototypes; the buffers hold
    // n (or n*n) elements of T; host pointer mode, scalars live on this stack frame.
    unsafe {
        Some(match op {
            Op::Gemv(t) => {
                let f: GemvFn = api.get(&name)?;
                Box::new(move |_| {
                    let (al, be) = gemv_ab::<T>();
                    let (al, be) = (A16(al), A16(be));
                    let (a, x, y, _) = next();
                    status(f(h, trans_code(t), ni, ni, sp(&al), a, lda, x, 1, sp(&be), y, 1), &name)
                })
            }
            Op::Ger => {
                let f: GerFn = api.get(&name)?;
                Box::new(move |_| {
                    let (a, x, y, k) = next();
                    let al = A16(signed::<T>(k));
                    status(f(h, ni, ni, sp(&al), x, 1, y as Vp, 1, a as Mp, lda), &name)
                })
            }
            Op::Trmv(u, t, d) => {
                let f: TrmvFn = api.get(&name)?;
                let (uc, dc) = ((u == Uplo::Upper) as c_int, (d == Diag::Unit) as c_int);
                Box::new(move |i| {
                    let (a, ..) = next();
                    let xi = (p.slots + i as u64 * ni as u64 * esz) as Mp;
                    status(f(h, uc, trans_code(t), dc, ni, a, lda, xi, 1), &name)
                })
            }
            Op::Axpy => {
                let f: AxpyFn = api.get(&name)?;
                Box::new(move |_| {
                    let (_, x, y, k) = next();
                    let al = A16(signed::<T>(k));
                    status(f(h, ni, sp(&al), x, 1, y, 1), &name)
                })
            }
            Op::Scal => {
                let f: ScalFn = api.get(&name)?;
                Box::new(move |_| {
                    let (_, x, _, k) = next();
                    let al = A16(scal_alpha::<T>(k));
                    status(f(h, ni, sp(&al), x as Mp, 1), &name)
                })
            }
            Op::Copy | Op::Swap => {
                let f: CopyFn = api.get(&name)?;
                Box::new(move |_| {
                    let (_, x, y, _) = next();
                    status(f(h, ni, x, 1, y, 1), &name)
                })
            }
            // Reductions: the value probe on the host-mode handle, the timed calls on the
            // device-mode handle (unless --results host), as hyblas_call does.
            Op::Dot { .. } => {
                let f: DotFn = api.get(&name)?;
                let mut host = HostFirst::new();
                Box::new(move |_| {
                    let mut r = T::zero();
                    let (hh, out) = if host.next() || hd.is_null() { (h, &mut r as *mut T as Mp) } else { (hd, res) };
                    let (_, x, y, _) = next();
                    status(f(hh, ni, x, 1, y as Vp, 1, out), &name)?;
                    Ok(two(r.re(), r.im()))
                })
            }
            Op::Nrm2 | Op::Asum => {
                let f: RedFn = api.get(&name)?;
                let mut host = HostFirst::new();
                Box::new(move |_| {
                    let mut r = <T::Real as Scalar>::zero();
                    let (hh, out) =
                        if host.next() || hd.is_null() { (h, &mut r as *mut T::Real as Mp) } else { (hd, res) };
                    let (_, x, ..) = next();
                    status(f(hh, ni, x, 1, out), &name)?;
                    Ok(two(r, <T::Real as Scalar>::zero()))
                })
            }
            Op::Iamax => {
                let f: RedFn = api.get(&name)?;
                let mut host = HostFirst::new();
                Box::new(move |_| {
                    let mut r: c_int = 0;
                    let (hh, out) =
                        if host.next() || hd.is_null() { (h, &mut r as *mut c_int as Mp) } else { (hd, res) };
                    let (_, x, ..) = next();
                    status(f(hh, ni, x, 1, out), &name)?;
                    Ok(Some([r as f64, 0.0]))
                })
            }
        })
    }
}

// ---------------------------------------------------------------------------------------------
// Timing

struct Cfg {
    target: f64,
    min_reps: usize,
    max_reps: usize,
}

/// Timed samples per side at most; a side's repetitions are split into this many batches.
const MAX_SAMPLES: usize = 10;

/// Calls shorter than this (seconds) are bound by the host's launch rate, where one hiccup of
/// the host moves a batch by 5-40%: they take up to SHORT_REPS_FACTOR times the repetitions,
/// in SHORT_SAMPLES batches, so the median stands on more samples.
const SHORT_CALL: f64 = 20e-6;
const SHORT_REPS_FACTOR: usize = 10;
const SHORT_SAMPLES: usize = 40;

/// Calls at least this long (seconds) hide the launch latency themselves: no untimed call
/// before their batches.
const PRECALL_BELOW: f64 = 500e-6;

/// TRMV x copies needed: the untimed call plus the largest batch (of a long or a short call).
fn slots_needed(cfg: &Cfg) -> usize {
    let long = cfg.max_reps.div_ceil(MAX_SAMPLES.min(cfg.max_reps));
    let short_reps = cfg.max_reps * SHORT_REPS_FACTOR;
    let short = short_reps.div_ceil(SHORT_SAMPLES.min(short_reps));
    long.max(short).max(2) + 1
}

/// One call of a side; a panic (a bug on that side) becomes an error: the side shows `n/a`
/// and the sweep goes on.
fn call(f: &mut Call<'_>, i: usize) -> Result<Option<[f64; 2]>, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(i))).unwrap_or_else(|p| {
        let msg = p
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        Err(format!("panicked: {msg}"))
    })
}

#[derive(Default, Clone)]
struct Meas {
    /// Median microseconds per call.
    us: Option<f64>,
    /// Every sample (microseconds per call) with the round it was taken in, for ratios of two
    /// sides paired round by round ([`paired_ratio`]).
    samples: Vec<(usize, f64)>,
    reps: usize,
    value: Option<[f64; 2]>,
    err: Option<String>,
}

/// Median seconds per call of every side: probe call, estimate, then samples alternating
/// between the sides. Each sample is a batch of `b` calls between two events, after one
/// untimed call when calls are short (the GPU is then busy while the batch is enqueued, so
/// the host's launch latency is not charged to the first call). `prep` runs before every
/// batch, outside the timed region.
fn measure(
    sides: &mut [Option<Call<'_>>],
    prep: &mut dyn FnMut() -> Result<(), String>,
    timer: &Timer,
    rt: &Runtime,
    stream: sys::CUstream,
    cfg: &Cfg,
) -> Vec<Meas> {
    let mut out = vec![Meas::default(); sides.len()];
    let mut plan = vec![(0usize, 0usize, true); sides.len()]; // (samples, batch, untimed call first)
    let mut samples: Vec<Vec<(usize, f64)>> = vec![Vec::new(); sides.len()];
    let gerr = |e: String| GpuError::Other(e);

    for (i, side) in sides.iter_mut().enumerate() {
        let Some(f) = side.as_mut() else { continue };
        let r = (|| -> Result<f64, String> {
            prep()?;
            PROBING.store(true, Ordering::Relaxed);
            let probe = call(f, 0);
            PROBING.store(false, Ordering::Relaxed);
            out[i].value = probe?;
            rt.sync(stream).map_err(|e| e.to_string())?;
            prep()?;
            call(f, 0)?;
            let t = timer
                .time(&mut || (1..=2).try_for_each(|j| call(f, j).map(|_| ()).map_err(gerr)))
                .map_err(|e| e.to_string())?;
            Ok(t / 2.0)
        })();
        match r {
            Ok(est) => {
                let (max_reps, max_samples) = if est < SHORT_CALL {
                    (cfg.max_reps * SHORT_REPS_FACTOR, SHORT_SAMPLES)
                } else {
                    (cfg.max_reps, MAX_SAMPLES)
                };
                let reps = ((cfg.target / est.max(1e-7)).round() as usize).clamp(cfg.min_reps, max_reps);
                let s = reps.min(max_samples);
                plan[i] = (s, reps.div_ceil(s), est < PRECALL_BELOW);
            }
            Err(e) => {
                out[i].err = Some(e);
                *side = None;
            }
        }
    }
    let rounds = plan.iter().map(|p| p.0).max().unwrap_or(0);
    let nsides = sides.len();
    for s in 0..rounds {
        for i in round_order(nsides, s) {
            let Some(f) = sides[i].as_mut() else { continue };
            let (ns, b, pre) = plan[i];
            if s >= ns {
                continue;
            }
            let r = (|| -> Result<f64, String> {
                prep()?;
                if pre {
                    call(f, 0)?;
                }
                timer
                    .time(&mut || (1..=b).try_for_each(|j| call(f, j).map(|_| ()).map_err(gerr)))
                    .map_err(|e| e.to_string())
            })();
            match r {
                Ok(t) => samples[i].push((s, t / b as f64)),
                Err(e) => {
                    out[i].err = Some(e);
                    sides[i] = None;
                }
            }
        }
    }
    for (i, side) in sides.iter().enumerate() {
        if side.is_some() && !samples[i].is_empty() {
            let mut v: Vec<f64> = samples[i].iter().map(|x| x.1).collect();
            out[i].us = median_of(&mut v).map(|t| t * 1e6);
            out[i].reps = v.len() * plan[i].1;
            out[i].samples = samples[i].iter().map(|&(r, t)| (r, t * 1e6)).collect();
        }
    }
    out
}

/// The order of the sides in round `s`: a Williams design (a balanced Latin square), so that
/// over its n rounds (2n for odd n) every side runs once in every position and right after every
/// other side equally often. A side's time depends on the call before it (clock state, L2
/// contents, the host's head start: a few percent on 3-5 us calls), and after a long cuBLAS
/// GEMM the next compute-bound kernel ran up to 1.8x slower on an H200 (session 13: ZGEMM
/// 128x128 T,N k = 10^6+3, split-k 15.0 ms after cuBLAS against 8.4 after split-k, either
/// reduction; 8.5 alone under Nsight Compute). Rotating one fixed order (round s starting at side
/// s % n, before session 13) still put the same side before each side in all but one position,
/// and the deterministic side, after the cuBLAS twin, came out up to 1.7x the atomic one.
fn round_order(n: usize, s: usize) -> Vec<usize> {
    if n == 0 {
        return Vec::new();
    }
    // First row 0, 1, n-1, 2, n-2, ...; row r adds r (mod n); for odd n the rows again reversed.
    let first: Vec<usize> = (0..n).map(|j| if j % 2 == 1 { j.div_ceil(2) } else { (n - j / 2) % n }).collect();
    let rows = if n % 2 == 1 { 2 * n } else { n };
    let (r, back) = (s % rows % n, s % rows >= n);
    let mut v: Vec<usize> = first.iter().map(|&x| (x + r) % n).collect();
    if back {
        v.reverse();
    }
    v
}

/// Median over the rounds both sides took part in of their time ratio in that round (a / b).
/// A round runs every side once, back to back, so a drift of the clocks slower than a round
/// (after a long compute-bound call, DGEMM 128x128 k = 4096 took 20.2 us in cuBLAS where the
/// sweep before measured 13.1) falls on both sides of a pair alike, where it can move the two
/// medians apart.
fn paired_ratio(a: &Meas, b: &Meas) -> Option<f64> {
    let mut v: Vec<f64> =
        a.samples.iter().filter_map(|&(r, x)| b.samples.iter().find(|s| s.0 == r).map(|s| x / s.1)).collect();
    median_of(&mut v)
}

// ---------------------------------------------------------------------------------------------
// Rows

#[derive(Clone, Debug)]
struct Row {
    routine: String,
    prec: char,
    n: usize,
    bytes: f64,
    hyblas_us: Option<f64>,
    cublas_us: Option<f64>,
    entry_us: Option<f64>,
    /// `--twin`: the real cuBLAS through a second handle.
    twin_us: Option<f64>,
    /// Largest relative difference of a reduction's result (hyblas, entry) from cuBLAS's.
    rel_diff: Option<f64>,
    reps: usize,
}

impl Row {
    fn gbs(&self, us: Option<f64>) -> Option<f64> {
        us.map(|t| self.bytes / (t * 1e-6) / 1e9)
    }
    fn ratio(&self) -> Option<f64> {
        Some(self.cublas_us? / self.hyblas_us?)
    }
}

const CSV_HEADER: &str =
    "routine,precision,n,hyblas_us,cublas_us,bytes,hyblas_gbs,cublas_gbs,entry_us,entry_gbs,cublas_over_hyblas,rel_diff,reps,cublas2_us";

fn opt(v: Option<f64>, prec: usize) -> String {
    v.map_or(String::new(), |v| format!("{v:.prec$}"))
}

fn csv(rows: &[Row]) -> String {
    let mut s = String::from(CSV_HEADER);
    s.push('\n');
    for r in rows {
        let _ = writeln!(
            s,
            "{},{},{},{},{},{:.0},{},{},{},{},{},{},{},{}",
            r.routine,
            r.prec,
            r.n,
            opt(r.hyblas_us, 3),
            opt(r.cublas_us, 3),
            r.bytes,
            opt(r.gbs(r.hyblas_us), 1),
            opt(r.gbs(r.cublas_us), 1),
            opt(r.entry_us, 3),
            opt(r.gbs(r.entry_us), 1),
            opt(r.ratio(), 4),
            r.rel_diff.map_or(String::new(), |d| format!("{d:.2e}")),
            r.reps,
            opt(r.twin_us, 3)
        );
    }
    s
}

fn read_csv(path: &Path) -> Result<Vec<Row>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap_or("").split(',').map(str::trim).collect();
    let col = |name: &str| head.iter().position(|h| *h == name);
    let need = |name: &str| col(name).ok_or_else(|| format!("{}: no column `{name}`", path.display()));
    let (ir, ip, inn, ih, ic) =
        (need("routine")?, need("precision")?, need("n")?, need("hyblas_us")?, need("cublas_us")?);
    let (ib, ie, id, ireps, itw) = (col("bytes"), col("entry_us"), col("rel_diff"), col("reps"), col("cublas2_us"));
    let mut rows = Vec::new();
    for (i, line) in lines.enumerate() {
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        let bad = || format!("{}:{}: malformed line", path.display(), i + 2);
        let get = |k: Option<usize>| k.and_then(|k| f.get(k)).and_then(|v| v.parse::<f64>().ok());
        let routine = f.get(ir).ok_or_else(bad)?.to_string();
        let prec = f.get(ip).and_then(|p| p.chars().next()).ok_or_else(bad)?;
        let n: usize = f.get(inn).and_then(|v| v.parse().ok()).ok_or_else(bad)?;
        let bytes = get(ib).unwrap_or_else(|| {
            let esz = match prec {
                's' => 4.0,
                'd' | 'c' => 8.0,
                _ => 16.0,
            };
            esz * elems_of(&routine, n)
        });
        rows.push(Row {
            routine,
            prec,
            n,
            bytes,
            hyblas_us: get(Some(ih)),
            cublas_us: get(Some(ic)),
            entry_us: get(ie),
            twin_us: get(itw),
            rel_diff: get(id),
            reps: get(ireps).unwrap_or(0.0) as usize,
        });
    }
    Ok(rows)
}

/// Element count of a routine named as in the CSV (for CSVs without a bytes column).
fn elems_of(routine: &str, n: usize) -> f64 {
    let op = match routine.split('_').next().unwrap_or("") {
        "gemv" => Op::Gemv(Trans::No),
        "ger" => Op::Ger,
        "trmv" => Op::Trmv(Uplo::Lower, Trans::No, Diag::NonUnit),
        "axpy" => Op::Axpy,
        "swap" => Op::Swap,
        "nrm2" => Op::Nrm2,
        "asum" => Op::Asum,
        "iamax" => Op::Iamax,
        _ => Op::Copy,
    };
    op.elems(n)
}

// ---------------------------------------------------------------------------------------------
// Tables

fn fmt_us(v: Option<f64>) -> String {
    match v {
        None => "n/a".into(),
        Some(v) if v >= 1000.0 => format!("{v:.0}"),
        Some(v) if v >= 10.0 => format!("{v:.1}"),
        Some(v) => format!("{v:.2}"),
    }
}

fn fmt_gbs(v: Option<f64>) -> String {
    v.map_or("n/a".into(), |v| format!("{v:.0}"))
}

fn prec_name(p: char) -> &'static str {
    match p {
        's' => "float",
        'd' => "double",
        'c' => "complex float",
        _ => "complex double",
    }
}

/// Copy bandwidth of an H200 (anchors.md) and the issue's 90% target.
const COPY_GBS: f64 = 4233.0;
const TARGET_GBS: f64 = 0.9 * COPY_GBS;

fn large(r: &Row) -> bool {
    if is_level1(&r.routine) {
        r.n >= 1 << 26
    } else {
        r.n >= 8192
    }
}

struct Summary {
    sizes: usize,
    ratio_min: Option<f64>,
    ratio_med: Option<f64>,
    slower: usize,
    compared: usize,
    entry_worst: Option<f64>,
    entry_overhead: Option<f64>,
    large_min_gbs: Option<f64>,
    worst_dip: Option<f64>,
}

fn median_of(v: &mut [f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    Some(v[v.len() / 2])
}

fn fmax(a: Option<f64>, b: f64) -> Option<f64> {
    Some(a.map_or(b, |a| a.max(b)))
}

fn summarize(rows: &[&Row]) -> Summary {
    let mut ratios: Vec<f64> = rows.iter().filter_map(|r| r.ratio()).collect();
    let ratio_min = ratios.iter().copied().reduce(f64::min);
    let compared = ratios.len();
    let slower = ratios.iter().filter(|&&r| r < 1.0).count();
    let mut s = Summary {
        sizes: rows.len(),
        ratio_min,
        ratio_med: median_of(&mut ratios),
        slower,
        compared,
        entry_worst: None,
        entry_overhead: None,
        large_min_gbs: None,
        worst_dip: None,
    };
    for r in rows {
        if let (Some(e), Some(c)) = (r.entry_us, r.cublas_us) {
            s.entry_worst = fmax(s.entry_worst, e / c);
        }
        if let (Some(e), Some(h)) = (r.entry_us, r.hyblas_us) {
            s.entry_overhead = fmax(s.entry_overhead, e / h);
        }
        if large(r) {
            if let Some(g) = r.gbs(r.hyblas_us) {
                s.large_min_gbs = Some(s.large_min_gbs.map_or(g, |m: f64| m.min(g)));
            }
        }
    }
    // A dip: a point below both neighbours (hyblas GB/s), by how much below the lower one.
    let g: Vec<Option<f64>> = rows.iter().map(|r| r.gbs(r.hyblas_us)).collect();
    for w in g.windows(3) {
        if let [Some(a), Some(b), Some(c)] = *w {
            let lo = a.min(c);
            if b < lo {
                s.worst_dip = fmax(s.worst_dip, 1.0 - b / lo);
            }
        }
    }
    s
}

fn fmt_ratio(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:.2}"))
}

/// Rows of `rows` grouped by (routine, precision), in first-seen order.
fn groups(rows: &[Row]) -> Vec<(String, char, Vec<&Row>)> {
    let mut out: Vec<(String, char, Vec<&Row>)> = Vec::new();
    for r in rows {
        match out.iter_mut().find(|g| g.0 == r.routine && g.1 == r.prec) {
            Some(g) => g.2.push(r),
            None => out.push((r.routine.clone(), r.prec, vec![r])),
        }
    }
    for g in &mut out {
        g.2.sort_by_key(|r| r.n);
    }
    out
}

const SHOWN_L2: &[usize] = &[1024, 2048, 4096, 8192, 12288, 16384];
const SHOWN_L1: &[usize] = &[1 << 16, 1 << 20, 1 << 22, 1 << 24, 1 << 26, 1 << 28];

fn summary_line(s: &Summary) -> String {
    format!(
        "cublas/hyblas min {} median {}; hyblas slower at {}/{} sizes; entry/cublas worst {}; entry/hyblas worst {}; \
         hyblas min GB/s at large n {}; worst dip {}",
        fmt_ratio(s.ratio_min),
        fmt_ratio(s.ratio_med),
        s.slower,
        s.compared,
        fmt_ratio(s.entry_worst),
        fmt_ratio(s.entry_overhead),
        s.large_min_gbs.map_or("-".into(), |g| format!("{g:.0} ({:.0}% of copy)", 100.0 * g / COPY_GBS)),
        s.worst_dip.map_or("-".into(), |d| format!("{:.1}%", d * 100.0)),
    )
}

fn text_tables(rows: &[Row]) -> String {
    let mut s = String::new();
    for (routine, prec, g) in groups(rows) {
        let shown = if is_level1(&routine) { SHOWN_L1 } else { SHOWN_L2 };
        let _ = writeln!(s, "\n== {prec}{routine} ({}), {} sizes ==", prec_name(prec), g.len());
        let _ = writeln!(
            s,
            "{:>10} {:>11} {:>11} {:>11} {:>11} {:>11} {:>11} {:>9} {:>9}",
            "n",
            "hyblas_us",
            "cublas_us",
            "entry_us",
            "hyblas_GB/s",
            "cublas_GB/s",
            "entry_GB/s",
            "cub/hyb",
            "rel_diff"
        );
        let mut last = None;
        for r in &g {
            // The representative sizes, plus the last one of a shortened sweep.
            if !shown.contains(&r.n) && !std::ptr::eq(*r, *g.last().unwrap()) {
                continue;
            }
            if last == Some(r.n) {
                continue;
            }
            last = Some(r.n);
            let _ = writeln!(
                s,
                "{:>10} {:>11} {:>11} {:>11} {:>11} {:>11} {:>11} {:>9} {:>9}",
                r.n,
                fmt_us(r.hyblas_us),
                fmt_us(r.cublas_us),
                fmt_us(r.entry_us),
                fmt_gbs(r.gbs(r.hyblas_us)),
                fmt_gbs(r.gbs(r.cublas_us)),
                fmt_gbs(r.gbs(r.entry_us)),
                fmt_ratio(r.ratio()),
                r.rel_diff.map_or("-".into(), |d| format!("{d:.1e}"))
            );
        }
        let _ = writeln!(s, "summary: {}", summary_line(&summarize(&g)));
    }
    s
}

/// One line per routine and precision.
fn overview(rows: &[Row]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "\n{:<12} {:>5} {:>8} {:>8} {:>8} {:>10} {:>10} {:>12} {:>8}",
        "routine", "sizes", "cub/hyb", "cub/hyb", "slower", "entry/cub", "entry/hyb", "hyb GB/s", "worst"
    );
    let _ = writeln!(
        s,
        "{:<12} {:>5} {:>8} {:>8} {:>8} {:>10} {:>10} {:>12} {:>8}",
        "", "", "min", "median", "", "worst", "worst", "large n min", "dip"
    );
    for (routine, prec, g) in groups(rows) {
        let m = summarize(&g);
        let _ = writeln!(
            s,
            "{:<12} {:>5} {:>8} {:>8} {:>8} {:>10} {:>10} {:>12} {:>8}",
            format!("{prec}{routine}"),
            m.sizes,
            fmt_ratio(m.ratio_min),
            fmt_ratio(m.ratio_med),
            format!("{}/{}", m.slower, m.compared),
            fmt_ratio(m.entry_worst),
            fmt_ratio(m.entry_overhead),
            m.large_min_gbs.map_or("-".into(), |g| format!("{g:.0}{}", if g < TARGET_GBS { "*" } else { "" })),
            m.worst_dip.map_or("-".into(), |d| format!("{:.1}%", d * 100.0)),
        );
    }
    let _ = writeln!(
        s,
        "large n = n >= 8192 (Level 2), n >= 2^26 (Level 1); * = below 90% of {COPY_GBS:.0} GB/s (H200 copy)"
    );
    s.push_str(&twin_line(rows));
    s
}

/// With `--twin`: how often the real cuBLAS through a second handle is over 3% slower than
/// through the first, beside the same count for the entry: the spread two handles of one
/// library show, the yardstick for the entry/cuBLAS ratio of calls the entry forwards.
fn twin_line(rows: &[Row]) -> String {
    let (mut n, mut twin_over, mut entry_over, mut worst) = (0, 0, 0, (0.0f64, String::new()));
    for r in rows {
        if let (Some(t), Some(c), Some(e)) = (r.twin_us, r.cublas_us, r.entry_us) {
            n += 1;
            twin_over += (t / c > 1.03) as usize;
            entry_over += (e / c > 1.03) as usize;
            if t / c > worst.0 {
                worst = (t / c, format!("{}{} {}", r.prec, r.routine, r.n));
            }
        }
    }
    if n == 0 {
        return String::new();
    }
    format!(
        "cuBLAS through a second handle (--twin) over 1.03x the first at {twin_over} of {n} points (worst {:.3}, {}); \
         the entry at {entry_over}\n",
        worst.0, worst.1
    )
}

// ---------------------------------------------------------------------------------------------
// SVG: GB/s against n, one panel per routine variant, one colour per precision,
// hyblas solid and cuBLAS dashed.

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

fn prec_color(p: char) -> &'static str {
    match p {
        's' => "#1f77b4",
        'd' => "#ff7f0e",
        'c' => "#2ca02c",
        _ => "#9467bd",
    }
}

/// Panel of a routine: real `dot` and complex `dotu` share one.
fn panel_of(routine: &str) -> String {
    if routine == "dotu" {
        "dot".into()
    } else {
        routine.to_string()
    }
}

fn size_label(n: usize) -> String {
    if n >= 1 << 20 && n.is_multiple_of(1 << 20) {
        format!("{}M", n >> 20)
    } else if n >= 1 << 10 && n.is_multiple_of(1024) {
        format!("{}K", n >> 10)
    } else {
        n.to_string()
    }
}

fn svg(rows: &[&Row], title: &str) -> String {
    const PW: f64 = 380.0;
    const PH: f64 = 260.0;
    const COLS: usize = 3;
    let mut panels: Vec<String> = Vec::new();
    for r in rows {
        let p = panel_of(&r.routine);
        if !panels.contains(&p) {
            panels.push(p);
        }
    }
    let mut precs: Vec<char> = rows.iter().map(|r| r.prec).collect();
    precs.sort_by_key(|p| "sdcz".find(*p));
    precs.dedup();
    let cols = COLS.min(panels.len()).max(1);
    let nrows = panels.len().div_ceil(cols).max(1);
    let (w, h) = (cols as f64 * PW + 20.0, nrows as f64 * PH + 75.0);
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(s, r#"<text x="10" y="20" font-size="14" font-weight="bold">{}</text>"#, esc(title));
    // Legend: precisions, then line styles, then the reference lines.
    let mut lx = 10.0;
    for p in &precs {
        let c = prec_color(*p);
        let _ = writeln!(
            s,
            r#"<line x1="{lx}" y1="40" x2="{}" y2="40" stroke="{c}" stroke-width="3"/><text x="{}" y="44">{p}</text>"#,
            lx + 18.0,
            lx + 22.0
        );
        lx += 45.0;
    }
    let _ = writeln!(
        s,
        r##"<line x1="{lx}" y1="40" x2="{}" y2="40" stroke="#333" stroke-width="2"/><text x="{}" y="44">hyblas</text><line x1="{}" y1="40" x2="{}" y2="40" stroke="#333" stroke-width="1.5" stroke-dasharray="5,3"/><text x="{}" y="44">cuBLAS</text><line x1="{}" y1="40" x2="{}" y2="40" stroke="#999" stroke-dasharray="2,3"/><text x="{}" y="44">copy {COPY_GBS:.0} GB/s, 90% target</text>"##,
        lx + 22.0,
        lx + 26.0,
        lx + 75.0,
        lx + 97.0,
        lx + 101.0,
        lx + 155.0,
        lx + 177.0,
        lx + 181.0
    );
    for (pi, panel) in panels.iter().enumerate() {
        let ox = 10.0 + (pi % cols) as f64 * PW;
        let oy = 60.0 + (pi / cols) as f64 * PH;
        let (x0, x1, y0, y1) = (ox + 48.0, ox + PW - 15.0, oy + PH - 38.0, oy + 22.0);
        let pr: Vec<&Row> = rows.iter().copied().filter(|r| &panel_of(&r.routine) == panel).collect();
        let mut ns: Vec<usize> = pr.iter().map(|r| r.n).collect();
        ns.sort_unstable();
        ns.dedup();
        let l1 = is_level1(&pr[0].routine);
        // Level 1 lengths span 2^16..2^28: log axis; Level 2 n: linear.
        let fx = |n: usize| if l1 { (n as f64).log2() } else { n as f64 };
        let (lo, hi) = (fx(ns[0]), fx(ns[ns.len() - 1]));
        let xs = move |n: usize| if hi > lo { x0 + (fx(n) - lo) / (hi - lo) * (x1 - x0) } else { (x0 + x1) / 2.0 };
        let top = pr
            .iter()
            .flat_map(|r| [r.gbs(r.hyblas_us), r.gbs(r.cublas_us)])
            .flatten()
            .filter(|v| v.is_finite())
            .fold(COPY_GBS, f64::max);
        let ys = gbs_panel(&mut s, (x0, x1, y0, y1), oy + 14.0, &esc(panel), top, &[COPY_GBS, TARGET_GBS]);
        // x ticks: every 2^2 in length (Level 1), every 4096 (Level 2).
        let ticks: Vec<usize> = if l1 {
            ns.iter().copied().filter(|n| n.is_power_of_two() && n.trailing_zeros() % 2 == 0).collect()
        } else {
            ns.iter().copied().filter(|n| *n == ns[0] || n.is_multiple_of(4096)).collect()
        };
        for n in ticks {
            let x = xs(n);
            svg_axes::x_tick(&mut s, x, y0, &size_label(n));
        }
        let xt = if l1 { "n (elements, log scale)" } else { "n (square)" };
        svg_axes::axis_titles(&mut s, ((x0 + x1) / 2.0, y0 + 29.0), (ox + 10.0, (y0 + y1) / 2.0), xt, "GB/s");
        for p in &precs {
            let c = prec_color(*p);
            let mut pts: Vec<&Row> = pr.iter().copied().filter(|r| r.prec == *p).collect();
            pts.sort_by_key(|r| r.n);
            for (hyblas, dash, width) in [(true, "", 1.8), (false, r#" stroke-dasharray="5,3""#, 1.3)] {
                // Break the line where a side has no value.
                let mut seg: Vec<String> = Vec::new();
                let flush = |seg: &mut Vec<String>, s: &mut String| {
                    if seg.len() > 1 {
                        let _ = writeln!(
                            s,
                            r#"<polyline points="{}" fill="none" stroke="{c}" stroke-width="{width}"{dash}/>"#,
                            seg.join(" ")
                        );
                    } else if seg.len() == 1 {
                        let (x, y) = seg[0].split_once(',').unwrap();
                        let _ = writeln!(s, r#"<circle cx="{x}" cy="{y}" r="2" fill="{c}"/>"#);
                    }
                    seg.clear();
                };
                for r in &pts {
                    match r.gbs(if hyblas { r.hyblas_us } else { r.cublas_us }) {
                        Some(g) => seg.push(format!("{:.1},{:.1}", xs(r.n), ys(g))),
                        None => flush(&mut seg, &mut s),
                    }
                }
                flush(&mut seg, &mut s);
            }
        }
    }
    s.push_str("</svg>\n");
    s
}

/// CSV (rewritten after every routine, so an interrupted run keeps what it measured).
fn write_csv(rows: &[Row], out: &Path, stem: &str) -> Result<(), String> {
    std::fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let p = out.join(format!("{stem}.csv"));
    std::fs::write(&p, csv(rows)).map_err(|e| format!("cannot write {}: {e}", p.display()))
}

/// One plot panel's frame: its title (SVG-escaped text) at `title_y`, the box, GB/s grid lines
/// up to `top` rounded up, and dashed reference lines at `refs`. Returns GB/s -> y.
fn gbs_panel(
    s: &mut String,
    (x0, x1, y0, y1): (f64, f64, f64, f64),
    title_y: f64,
    title: &str,
    top: f64,
    refs: &[f64],
) -> impl Fn(f64) -> f64 {
    let ymax = (top * 1.05 / 500.0).ceil() * 500.0;
    let ys = move |v: f64| y0 - (v.clamp(0.0, ymax) / ymax) * (y0 - y1);
    let _ = writeln!(s, r#"<text x="{x0}" y="{title_y}" font-weight="bold">{title}</text>"#);
    let _ = writeln!(
        s,
        r##"<rect x="{x0}" y="{y1}" width="{}" height="{}" fill="none" stroke="#888"/>"##,
        x1 - x0,
        y0 - y1
    );
    let step = if ymax > 3000.0 { 1000.0 } else { 500.0 };
    let mut v = 0.0;
    while v <= ymax + 1e-9 {
        let y = ys(v);
        let _ = writeln!(
            s,
            r##"<line x1="{x0}" y1="{y:.1}" x2="{x1}" y2="{y:.1}" stroke="#eee"/><text x="{}" y="{:.1}" text-anchor="end">{v:.0}</text>"##,
            x0 - 3.0,
            y + 4.0
        );
        v += step;
    }
    for &g in refs {
        let _ = writeln!(
            s,
            r##"<line x1="{x0}" y1="{y:.1}" x2="{x1}" y2="{y:.1}" stroke="#999" stroke-dasharray="2,3"/>"##,
            y = ys(g)
        );
    }
    ys
}

fn write_svgs(rows: &[Row], out: &Path, stem: &str, device: &str) -> Result<Vec<PathBuf>, String> {
    std::fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let mut written = Vec::new();
    for fam in ["gemv", "ger", "trmv", "level1"] {
        let fr: Vec<&Row> = rows.iter().filter(|r| family(&r.routine) == fam).collect();
        if fr.is_empty() {
            continue;
        }
        let title = format!("{device}: {fam}, GB/s against n (hyblas solid, cuBLAS dashed)");
        let p = out.join(format!("{stem}-{fam}.svg"));
        std::fs::write(&p, svg(&fr, &title)).map_err(|e| format!("cannot write {}: {e}", p.display()))?;
        written.push(p);
    }
    Ok(written)
}

// ---------------------------------------------------------------------------------------------
// Driver

struct Ctx<'a> {
    rt: &'static Runtime,
    stream: sys::CUstream,
    timer: &'a Timer,
    cublas: Option<&'a Api>,
    entry: Option<&'a Api>,
    /// `--twin`: the real cuBLAS through a second handle.
    twin: Option<&'a Api>,
    cfg: Cfg,
    l2: Vec<usize>,
    l1: Vec<usize>,
}

/// Relative difference of two reduction results (IAMAX: 0 when equal, else 1).
fn rel(a: [f64; 2], b: [f64; 2], index: bool) -> f64 {
    if index {
        return if a == b { 0.0 } else { 1.0 };
    }
    let d = ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2)).sqrt();
    let m = (b[0] * b[0] + b[1] * b[1]).sqrt();
    if m > 0.0 {
        d / m
    } else {
        d
    }
}

/// Every routine of precision T over its sweep; rows appended, CSV rewritten per routine.
/// `--overhead`: the host's cost of one call, in microseconds of enqueue, for the real cuBLAS,
/// the exported entry (routed as `HYBLAS_CUBLAS` / the calibrated table say: run this twice,
/// with `HYBLAS_CUBLAS=vendor` and `=hyblas`, to see both routes) and hyblas called directly.
/// Tiny single-precision problems, batches of calls that fit the launch queue, median of the
/// batches: the GPU never holds the host back, so the number is the call's own host cost.
fn overhead(cx: &Ctx) {
    const BATCH: usize = 400;
    const SAMPLES: usize = 15;
    let ops = [Op::Axpy, Op::Dot { conj: false }, Op::Nrm2, Op::Gemv(Trans::No), Op::Gemv(Trans::Trans)];
    let (n1, n2) = (4096usize, 256usize);
    let pool = match alloc_pool::<f32>(&ops, &[n2], &[n1], 2) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("gpubench: {e}");
            return;
        }
    };
    let ex = Exec { rt: cx.rt, stream: cx.stream };
    let mode = hyblas::plan::gpu::mode();
    println!(
        "\nhost cost per call (us of enqueue, batches of {BATCH}, median of {SAMPLES}); HYBLAS_CUBLAS={} in this process",
        std::env::var("HYBLAS_CUBLAS").unwrap_or_else(|_| mode.name().into())
    );
    println!("| routine | n | cuBLAS | entry | hyblas direct | entry - cuBLAS |");
    println!("|---|---:|---:|---:|---:|---:|");
    for op in ops {
        let n = if op.level2() { n2 } else { n1 };
        let p = ptrs(op, &pool, n, 4);
        let sides: Vec<Option<Call>> = vec![
            cx.cublas.and_then(|a| api_call::<f32>(a, op, n, p)),
            cx.entry.and_then(|a| api_call::<f32>(a, op, n, p)),
            Some(hyblas_call::<f32>(ex, op, n, p)),
        ];
        let mut us = [f64::NAN; 3];
        for (k, side) in sides.into_iter().enumerate() {
            let Some(mut f) = side else { continue };
            let r = (|| -> Result<f64, String> {
                for i in 0..50 {
                    f(i.min(1))?;
                }
                cx.rt.sync(cx.stream).map_err(|e| e.to_string())?;
                let mut v = Vec::with_capacity(SAMPLES);
                for _ in 0..SAMPLES {
                    let t = Instant::now();
                    for _ in 0..BATCH {
                        f(1)?;
                    }
                    v.push(t.elapsed().as_secs_f64() / BATCH as f64);
                    cx.rt.sync(cx.stream).map_err(|e| e.to_string())?;
                }
                Ok(median_of(&mut v).unwrap_or(f64::NAN) * 1e6)
            })();
            match r {
                Ok(t) => us[k] = t,
                Err(e) => eprintln!("gpubench: overhead {}: {e}", op.name(false)),
            }
        }
        println!("| s{} | {n} | {:.3} | {:.3} | {:.3} | {:+.3} |", op.name(false), us[0], us[1], us[2], us[1] - us[0]);
    }
}

fn run_precision<T: Scalar>(
    cx: &Ctx,
    ops: &[Op],
    rows: &mut Vec<Row>,
    save: &mut dyn FnMut(&[Row]),
    progress: &mut dyn FnMut(String),
) {
    let t0 = Instant::now();
    let pool = match alloc_pool::<T>(ops, &cx.l2, &cx.l1, slots_needed(&cx.cfg)) {
        Ok(p) => p,
        Err(e) => {
            progress(format!("{}: skipped: {e}", T::PREFIX));
            return;
        }
    };
    progress(format!("{}: random operands ready in {:.1} s", T::PREFIX, t0.elapsed().as_secs_f64()));
    let ex = Exec { rt: cx.rt, stream: cx.stream };
    let esz = std::mem::size_of::<T>();
    for &op in ops {
        let t1 = Instant::now();
        let name = op.name(T::IS_COMPLEX);
        let sizes = if op.level2() { &cx.l2 } else { &cx.l1 };
        let mut errs: Vec<String> = Vec::new();
        let mut count = 0;
        for &n in sizes {
            let p = ptrs(op, &pool, n, esz);
            let mut sides: Vec<Option<Call>> = vec![
                Some(hyblas_call::<T>(ex, op, n, p)),
                cx.cublas.and_then(|a| api_call::<T>(a, op, n, p)),
                cx.entry.and_then(|a| api_call::<T>(a, op, n, p)),
                cx.twin.and_then(|a| api_call::<T>(a, op, n, p)),
            ];
            let trmv = matches!(op, Op::Trmv(..));
            let (src, dst, bytes) = (pool.xsrc.ptr, pool.slots.ptr, slots_needed(&cx.cfg) * n * esz);
            let stream = cx.stream;
            let mut prep = move || -> Result<(), String> {
                if trmv {
                    check(unsafe { sys::cuMemcpyDtoDAsync_v2(dst, src, bytes, stream) }, "cuMemcpyDtoDAsync")
                        .map_err(|e| e.to_string())?;
                }
                Ok(())
            };
            let m = measure(&mut sides, &mut prep, cx.timer, cx.rt, cx.stream, &cx.cfg);
            for (label, mm) in ["hyblas", "cublas", "entry", "cublas2"].iter().zip(&m) {
                if let Some(e) = &mm.err {
                    let e = format!("{label}: {e}");
                    if !errs.contains(&e) {
                        errs.push(e);
                    }
                }
            }
            let rel_diff = if op.reduction() {
                let c = m[1].value;
                [m[0].value, m[2].value].iter().filter_map(|v| Some(rel((*v)?, c?, op == Op::Iamax))).reduce(f64::max)
            } else {
                None
            };
            rows.push(Row {
                routine: name.clone(),
                prec: T::PREFIX,
                n,
                bytes: op.elems(n) * esz as f64,
                hyblas_us: m[0].us,
                cublas_us: m[1].us,
                entry_us: m[2].us,
                twin_us: m[3].us,
                rel_diff,
                reps: m[0].reps.max(m[1].reps),
            });
            count += 1;
        }
        save(rows);
        let mut line = format!("{}{name}: {count} sizes in {:.1} s", T::PREFIX, t1.elapsed().as_secs_f64());
        for e in &errs {
            let first = e.lines().next().unwrap_or("");
            let _ = write!(line, "\n    n/a: {first}");
        }
        progress(line);
    }
}

fn from_csv(path: &Path, o: &Opts) -> ExitCode {
    if gemm_smallout::is_gemm_csv(path) {
        return gemm_smallout::from_csv(path, o);
    }
    let rows = match read_csv(path) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("gpubench: {e}");
            return ExitCode::from(2);
        }
    };
    print!("{}", text_tables(&rows));
    print!("{}", overview(&rows));
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "gpubench".into());
    let device = stem.trim_end_matches("-level12").to_string();
    match write_svgs(&rows, &o.out, &stem, &device) {
        Ok(ps) => {
            for p in ps {
                println!("wrote {}", p.display());
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("gpubench: {e}");
            ExitCode::from(1)
        }
    }
}

fn main() -> ExitCode {
    // A benchmark times kernels, not their compiles: every call waits for its kernel unit
    // (gpu::loader; by default a routed call takes cuBLAS while the unit compiles).
    if std::env::var_os("HYBLAS_COMPILE").is_none() {
        std::env::set_var("HYBLAS_COMPILE", "wait");
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("strassen") {
        return strassen::main(&args[1..]);
    }
    if args.first().map(String::as_str) == Some("batch") {
        return batch::main(&args[1..]);
    }
    let o = match parse_opts() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("gpubench: {e}");
            return ExitCode::from(2);
        }
    };
    if let Some(p) = &o.from_csv {
        return from_csv(p, &o);
    }
    let rt = match Runtime::get(0) {
        Ok(rt) => rt,
        Err(e) => {
            println!("no GPU ({e}): nothing to measure");
            return ExitCode::SUCCESS;
        }
    };
    if let Err(e) = rt.bind() {
        println!("no GPU (cannot bind the context: {e}): nothing to measure");
        return ExitCode::SUCCESS;
    }
    let mut stream: sys::CUstream = std::ptr::null_mut();
    if let Err(e) = check(unsafe { sys::cuStreamCreate(&mut stream, 0) }, "cuStreamCreate") {
        eprintln!("gpubench: {e}");
        return ExitCode::from(1);
    }
    let timer = match Timer::new(stream) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("gpubench: {e}");
            return ExitCode::from(1);
        }
    };
    let cublas =
        real_cublas(stream).map_err(|e| eprintln!("gpubench: no real cuBLAS, its column stays empty: {e}")).ok();
    let entry = match entry_api(&o.entry, stream, cublas.as_ref()) {
        Ok(a) => Some(a),
        Err(e) => {
            eprintln!("gpubench: entry column empty: {e}");
            None
        }
    };

    let props = &rt.props;
    L2_BYTES.store((props.l2_bytes as u64).max(1 << 20), Ordering::Relaxed);
    let slug = props.slug();
    let stem = format!("{slug}-level12");
    println!(
        "gpubench: {} ({}, {} SMs, {:.0} GiB, L2 {} MiB, driver {}), hyblas {}",
        props.name,
        props.arch(),
        props.sm_count,
        props.total_mem as f64 / (1u64 << 30) as f64,
        props.l2_bytes >> 20,
        props.driver_version,
        env!("CARGO_PKG_VERSION")
    );
    println!("cuBLAS: {}", cublas.as_ref().map_or("none".into(), |a| format!("{}: {}", a.label, a.desc)));
    println!("entry:  {}", entry.as_ref().map_or("none".into(), |a| format!("{}: {}", a.label, a.desc)));
    let cfg = Cfg { target: o.target, min_reps: o.min_reps, max_reps: o.max_reps };
    println!(
        "timing: CUDA events, batches back to back after one untimed call, median of <= {MAX_SAMPLES} samples ({SHORT_SAMPLES} below {} us); \
         ~{:.0} ms per side and point, {}..{} calls{}",
        SHORT_CALL * 1e6,
        cfg.target * 1e3,
        cfg.min_reps,
        cfg.max_reps,
        if o.quick { " (--quick)" } else { "" }
    );
    if COLD.load(Ordering::Relaxed) {
        println!(
            "operands: cold (each timed call's operands untouched for 4x the L2's bytes; --warm re-reads one set)"
        );
    } else {
        println!("operands: warm (--warm: every call re-reads one set; under ~L2 size it runs from the L2)");
    }
    let twin = if o.gemm_twin {
        real_cublas(stream).map_err(|e| eprintln!("gpubench: --twin: no second cuBLAS handle: {e}")).ok()
    } else {
        None
    };
    let cx = Ctx {
        rt,
        stream,
        timer: &timer,
        cublas: cublas.as_ref(),
        entry: entry.as_ref(),
        twin: twin.as_ref(),
        cfg,
        l2: l2_sizes(&o),
        l1: l1_sizes(&o),
    };
    if o.overhead {
        overhead(&cx);
        return ExitCode::SUCCESS;
    }
    let plans: Vec<(char, Vec<Op>)> = o.prec.iter().map(|&p| (p, ops_for(&o, p == 'c' || p == 'z'))).collect();
    let total: usize = plans.iter().map(|(_, ops)| ops.len()).sum();
    let gemm = gemm_smallout::selected(&o);
    if total == 0 && !gemm {
        eprintln!("gpubench: --only selects no routine");
        return ExitCode::from(2);
    }
    if total > 0 {
        level12(&cx, &o, &plans, total, &stem);
    }
    if gemm {
        gemm_smallout::run(&cx, &o);
    }
    drop(entry);
    drop(cublas);
    ExitCode::SUCCESS
}

/// The Level 1/2 sweep: every planned routine of every precision, tables, CSV and plots.
fn level12(cx: &Ctx, o: &Opts, plans: &[(char, Vec<Op>)], total: usize, stem: &str) {
    let t0 = Instant::now();
    let mut done = 0usize;
    let mut rows: Vec<Row> = Vec::new();
    let out = o.out.clone();
    let mut save = |rows: &[Row]| {
        if let Err(e) = write_csv(rows, &out, stem) {
            eprintln!("gpubench: {e}");
        }
    };
    for (p, ops) in plans {
        let mut progress = |line: String| {
            if !line.contains(": random operands") && !line.contains(": skipped") {
                done += 1;
            }
            let el = t0.elapsed().as_secs_f64();
            eprintln!("[{done:>3}/{total}] {:>5.0} s  {line}", el);
        };
        match p {
            's' => run_precision::<f32>(cx, ops, &mut rows, &mut save, &mut progress),
            'd' => run_precision::<f64>(cx, ops, &mut rows, &mut save, &mut progress),
            'c' => run_precision::<C32>(cx, ops, &mut rows, &mut save, &mut progress),
            _ => run_precision::<C64>(cx, ops, &mut rows, &mut save, &mut progress),
        }
    }
    print!("{}", text_tables(&rows));
    print!("{}", overview(&rows));
    println!("\n{} points in {:.0} s", rows.len(), t0.elapsed().as_secs_f64());
    println!("wrote {}", o.out.join(format!("{stem}.csv")).display());
    match write_svgs(&rows, &o.out, stem, &cx.rt.props.name) {
        Ok(ps) => ps.iter().for_each(|p| println!("wrote {}", p.display())),
        Err(e) => eprintln!("gpubench: {e}"),
    }
}
