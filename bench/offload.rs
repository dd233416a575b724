//! offloadbench: host-memory GEMM through the exported Fortran symbols (`dgemm_`, `sgemm_`,
//! `zgemm_`, `cgemm_`) with the side forced per mode, against NVBLAS in the same run
//! (bench/README.md, "Host GEMM offload").
//!
//! Modes: `auto` (the planner's choice, `plan::offload`), `cpu` (the CPU engine), `gpu`
//! (`gpu::offload`: tiled, pipelined through pinned staging, the real cuBLAS per tile),
//! `nvblas` (`libnvblas.so` loaded with RTLD_LOCAL | RTLD_DEEPBIND, its `?gemm_` called on the
//! same host buffers; it needs a CPU BLAS, named in an `nvblas.conf` this program writes), and
//! `split` (phase 2, co-execution: not built yet, reported as skipped).
//!
//! Every point: C := A*B + beta*C on square n x n host matrices (Vec, pageable memory), one
//! warm-up call, then as many timed calls as fit `--budget-s` (at least one; a warm-up longer
//! than the budget is the only sample), median. Points whose single call would exceed
//! `--max-s` (extrapolated from the previous size) are skipped. For n <= 2048 each mode's
//! result is checked against the CPU engine's.
//!
//! Writes `<out>/<gpu>-offload.csv` (routine,n,mode,gpu_share,us,tflops,pred_us,reps,check) and
//! `<out>/<gpu>-offload.svg` (TFLOP/s against n per routine: auto, cpu, gpu, NVBLAS, and the
//! model's predictions), and prints a table with the ratios.

#[path = "../tests/common/fortran_gemm.rs"]
mod fortran_gemm;
use fortran_gemm::Sym;

use hyblas::gpu::Runtime;
use hyblas::plan::offload::{self as off, Problem, Rates, Side};
use hyblas::types::{Scalar, C32, C64};
use rayon::prelude::*;
use std::ffi::{c_char, c_void, CStr, CString};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

const HELP: &str = "\
offloadbench: host-memory ?GEMM through hyblas's exported symbols (auto, cpu, gpu) and NVBLAS

usage: offloadbench [options]
  --n LIST           sizes (default 512,1024,2048,4096,8192,16384; --quick: up to 4096)
  --routines LIST    dgemm,sgemm,zgemm (default; cgemm too; dsyrk, dtrsm: n x n, k = n, side L)
  --modes LIST       auto,cpu,gpu,nvblas (default; split: phase 2, skipped)
  --beta X           beta (default 0.5; 0 skips the upload of C)
  --nvblas PATH|off  libnvblas.so to load (default: libnvblas.so.13/12/libnvblas.so, then
                     /usr/local/cuda/lib64)
  --cpu-blas PATH    the CPU BLAS NVBLAS forwards to (NVBLAS_CPU_BLAS_LIB; default: the first
                     of Debian's OpenBLAS and the reference libblas.so.3 found)
  --nvblas-tile N    NVBLAS_TILE_DIM (default 2048)
  --nvblas-autopin on|off  NVBLAS_AUTOPIN_MEM_ENABLED (default on, NVBLAS's best)
  --budget-s S       timed calls per point fill S seconds (default 2; --quick 0.5)
  --max-s S          skip points whose one call would take longer (default 15)
  --out DIR          results directory (default bench/results)
  --quick            fewer sizes and reps
";

/// The LP64 Fortran GEMM signature (NVBLAS's and hyblas's).
type Gemm<T> = fortran_gemm::Gemm<T, i32>;

struct Opts {
    ns: Vec<usize>,
    routines: Vec<String>,
    modes: Vec<String>,
    beta: f64,
    nvblas: Option<String>,
    nvblas_off: bool,
    cpu_blas: Option<String>,
    nvblas_tile: usize,
    autopin: bool,
    budget: f64,
    max_s: f64,
    out: PathBuf,
    quick: bool,
}

fn list(s: &str) -> Vec<String> {
    s.split(',').map(|p| p.trim().to_lowercase()).filter(|p| !p.is_empty()).collect()
}

/// `<cwd>/bench/results` when run from a checkout (the GPU host runs it from the repo root).
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
        ns: Vec::new(),
        routines: vec!["dgemm".into(), "sgemm".into(), "zgemm".into()],
        modes: vec!["auto".into(), "cpu".into(), "gpu".into(), "nvblas".into()],
        beta: 0.5,
        nvblas: None,
        nvblas_off: false,
        cpu_blas: None,
        nvblas_tile: 2048,
        autopin: true,
        budget: f64::NAN,
        max_s: 15.0,
        out: default_out_dir(),
        quick: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let (key, inline) = match arg.split_once('=') {
            Some((k, v)) if k.starts_with("--") => (k.to_string(), Some(v.to_string())),
            _ => (arg.clone(), None),
        };
        let mut value = || inline.clone().or_else(|| args.next()).ok_or_else(|| format!("{key} needs a value"));
        let float = |v: String, what: &str| v.parse::<f64>().map_err(|_| format!("bad {what} `{v}`"));
        match key.as_str() {
            "-h" | "--help" => {
                print!("{HELP}");
                std::process::exit(0);
            }
            "--quick" => o.quick = true,
            "--n" => {
                o.ns = list(&value()?)
                    .iter()
                    .map(|v| match v.strip_prefix("2^") {
                        Some(e) => e.parse::<u32>().map(|e| 1usize << e).map_err(|_| format!("bad size `{v}`")),
                        None => v.parse::<usize>().map_err(|_| format!("bad size `{v}`")),
                    })
                    .collect::<Result<_, _>>()?
            }
            "--routines" => {
                o.routines =
                    list(&value()?).into_iter().map(|r| if r.len() == 1 { format!("{r}gemm") } else { r }).collect();
                if let Some(bad) = o
                    .routines
                    .iter()
                    .find(|r| !["sgemm", "dgemm", "cgemm", "zgemm", "dsyrk", "dtrsm"].contains(&r.as_str()))
                {
                    return Err(format!("unknown routine `{bad}` (sgemm, dgemm, cgemm, zgemm, dsyrk, dtrsm)"));
                }
            }
            "--modes" => {
                o.modes = list(&value()?);
                if let Some(bad) =
                    o.modes.iter().find(|m| !["auto", "cpu", "gpu", "nvblas", "split"].contains(&m.as_str()))
                {
                    return Err(format!("unknown mode `{bad}`"));
                }
            }
            "--beta" => o.beta = float(value()?, "--beta")?,
            "--nvblas" => match value()?.as_str() {
                "off" | "none" => o.nvblas_off = true,
                p => o.nvblas = Some(p.to_string()),
            },
            "--cpu-blas" => o.cpu_blas = Some(value()?),
            "--nvblas-tile" => o.nvblas_tile = value()?.parse().map_err(|_| "bad --nvblas-tile")?,
            "--nvblas-autopin" => {
                o.autopin = match value()?.as_str() {
                    "on" | "1" | "yes" => true,
                    "off" | "0" | "no" => false,
                    v => return Err(format!("--nvblas-autopin takes on or off, not `{v}`")),
                }
            }
            "--budget-s" => o.budget = float(value()?, "--budget-s")?,
            "--max-s" => o.max_s = float(value()?, "--max-s")?,
            "--out" => o.out = PathBuf::from(value()?),
            _ => return Err(format!("unknown argument `{arg}` (see --help)")),
        }
    }
    if o.ns.is_empty() {
        o.ns = if o.quick { vec![512, 1024, 2048, 4096] } else { vec![512, 1024, 2048, 4096, 8192, 16384] };
    }
    if o.budget.is_nan() {
        o.budget = if o.quick { 0.5 } else { 2.0 };
    }
    Ok(o)
}

// ---- NVBLAS ----

fn dlerror_text() -> String {
    let e = unsafe { libc::dlerror() };
    if e.is_null() {
        "unknown dlopen error".into()
    } else {
        unsafe { CStr::from_ptr(e) }.to_string_lossy().into_owned()
    }
}

struct Nvblas {
    desc: String,
    syms: [Option<*mut c_void>; 4],
}

impl Nvblas {
    fn gemm<T: Scalar>(&self) -> Option<Gemm<T>> {
        let i = "sdcz".find(T::PREFIX).unwrap();
        self.syms[i].map(|p| unsafe { std::mem::transmute_copy::<*mut c_void, Gemm<T>>(&p) })
    }
}

/// The first existing path among `cands` (bare names are left to the loader).
fn first_existing(cands: &[&str]) -> Option<String> {
    cands.iter().find(|c| !c.starts_with('/') || Path::new(c).exists()).map(|c| c.to_string())
}

fn load_nvblas(o: &Opts) -> Result<Nvblas, String> {
    let cpu = match &o.cpu_blas {
        Some(p) => p.clone(),
        None => first_existing(&[
            "/usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3",
            "/usr/lib/x86_64-linux-gnu/libopenblas.so.0",
            "/usr/lib/x86_64-linux-gnu/blas/libblas.so.3",
            "/usr/lib/x86_64-linux-gnu/libblas.so.3",
        ])
        .filter(|p| Path::new(p).exists())
        .ok_or("no CPU BLAS for NVBLAS found (--cpu-blas PATH)")?,
    };
    // The configuration NVBLAS reads when it is loaded.
    let dir = std::env::temp_dir().join(format!("hyblas-offload-nvblas-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let conf = dir.join("nvblas.conf");
    let mut text = format!(
        "NVBLAS_LOGFILE {}\nNVBLAS_CPU_BLAS_LIB {cpu}\nNVBLAS_GPU_LIST ALL0\nNVBLAS_TILE_DIM {}\n",
        dir.join("nvblas.log").display(),
        o.nvblas_tile
    );
    if o.autopin {
        text += "NVBLAS_AUTOPIN_MEM_ENABLED\n";
    }
    std::fs::write(&conf, text).map_err(|e| format!("{}: {e}", conf.display()))?;
    std::env::set_var("NVBLAS_CONFIG_FILE", &conf);
    let cands: Vec<String> = match &o.nvblas {
        Some(p) => vec![p.clone()],
        None => {
            let mut v: Vec<String> =
                ["libnvblas.so.13", "libnvblas.so.12", "libnvblas.so"].iter().map(|s| s.to_string()).collect();
            for d in ["/usr/local/cuda/lib64", "/usr/local/cuda/targets/x86_64-linux/lib"] {
                if let Ok(rd) = std::fs::read_dir(d) {
                    let mut found: Vec<String> = rd
                        .flatten()
                        .map(|e| e.path().display().to_string())
                        .filter(|p| p.contains("libnvblas.so"))
                        .collect();
                    found.sort();
                    v.extend(found);
                }
            }
            v
        }
    };
    let mut errs = Vec::new();
    for path in &cands {
        let c = CString::new(path.as_str()).unwrap();
        // Local and deep-bound: NVBLAS's own references to ?gemm_ go to its CPU BLAS, never to
        // hyblas's exports, and its symbols stay out of the global scope.
        let h = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL | libc::RTLD_DEEPBIND) };
        if h.is_null() {
            errs.push(format!("{path}: {}", dlerror_text()));
            continue;
        }
        let sym = |n: &str| {
            let c = CString::new(n).unwrap();
            let p = unsafe { libc::dlsym(h, c.as_ptr()) };
            (!p.is_null()).then_some(p)
        };
        let syms = [sym("sgemm_"), sym("dgemm_"), sym("cgemm_"), sym("zgemm_")];
        if syms[1].is_none() {
            errs.push(format!("{path}: no dgemm_"));
            continue;
        }
        let desc = format!(
            "{path} (CPU BLAS {cpu}, tile {}, autopin {})",
            o.nvblas_tile,
            if o.autopin { "on" } else { "off" }
        );
        return Ok(Nvblas { desc, syms });
    }
    Err(format!("NVBLAS not loaded: {}", errs.join("; ")))
}

// ---- Measuring ----

/// A point's result.
#[derive(Clone)]
struct Row {
    routine: String,
    n: usize,
    mode: String,
    /// Fraction of C computed on the GPU (None: unknown, NVBLAS).
    gpu_share: Option<f64>,
    us: Option<f64>,
    pred_us: Option<f64>,
    reps: usize,
    /// Largest relative difference from the CPU engine's result (n <= 2048).
    check: Option<f64>,
    note: String,
}

impl Row {
    fn tflops(&self) -> Option<f64> {
        let f = flops(&self.routine, self.n);
        self.us.map(|us| f / (us * 1e-6) / 1e12)
    }
}

fn flops(routine: &str, n: usize) -> f64 {
    if routine == "dsyrk" || routine == "dtrsm" {
        return (n as f64).powi(3);
    }
    let f = 2.0 * (n as f64).powi(3);
    if routine.starts_with('c') || routine.starts_with('z') {
        4.0 * f
    } else {
        f
    }
}

/// Median seconds of `f`: one warm-up call, then timed calls filling `budget` seconds (at
/// least one); a warm-up longer than the budget is the only sample.
fn time(f: &mut dyn FnMut(), budget: f64, max_reps: usize) -> (f64, usize) {
    let t0 = Instant::now();
    f();
    let warm = t0.elapsed().as_secs_f64();
    if warm >= budget {
        return (warm, 1);
    }
    let reps = ((budget / warm.max(1e-6)) as usize).clamp(1, max_reps);
    let mut v: Vec<f64> = (0..reps)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .collect();
    v.sort_by(f64::total_cmp);
    (v[v.len() / 2], reps)
}

fn fill<T: Scalar>(len: usize, seed: u64) -> Vec<T> {
    (0..len)
        .into_par_iter()
        .map(|i| {
            let mut x = (i as u64 ^ seed).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            x ^= x >> 29;
            x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
            x ^= x >> 32;
            let u = (x >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
            T::from_parts(
                <T::Real as Scalar>::from_f64(u),
                <T::Real as Scalar>::from_f64(if T::IS_COMPLEX { 0.5 - u } else { 0.0 }),
            )
        })
        .collect()
}

fn max_rel_diff<T: Scalar>(got: &[T], want: &[T]) -> f64 {
    use hyblas::types::Real;
    let scale = want.iter().map(|w| Real::to_f64(w.abs1())).fold(1e-300, f64::max);
    got.par_iter().zip(want.par_iter()).map(|(g, w)| Real::to_f64((*g - *w).abs1()) / scale).reduce(|| 0.0, f64::max)
}

struct Bench<'a> {
    o: &'a Opts,
    rt: Option<&'static Runtime>,
    nv: Option<&'a Nvblas>,
    rows: Vec<Row>,
}

impl Bench<'_> {
    fn routine<T: Sym>(&mut self, name: &str) {
        let o = self.o;
        let threads = hyblas::cpu::threads::nthreads();
        let rates = self.rt.map(Rates::for_device);
        // Seconds of one call per mode at the previous size, to skip what would run too long.
        let mut last: std::collections::HashMap<String, (usize, f64)> = Default::default();
        for &n in &o.ns {
            let len = n * n;
            let a: Vec<T> = fill(len, 1);
            let b: Vec<T> = fill(len, 2);
            let c0: Vec<T> = fill(len, 3);
            let (alpha, beta) = (T::one(), T::from_f64(o.beta));
            let ni = n as i32;
            let check = n <= 2048;
            let p = Problem::gemm::<T>(n, n, n, false, beta.is_zero());
            let pred = rates.as_ref().map(|r| r.predict(&p, threads));
            let mut cpu_result: Option<Vec<T>> = None;
            // The CPU first, so that the other modes' results can be checked against it.
            let mut modes = o.modes.clone();
            modes.sort_by_key(|m| (m != "cpu") as u8);
            for mode in &modes {
                let mut row = Row {
                    routine: name.into(),
                    n,
                    mode: mode.clone(),
                    gpu_share: None,
                    us: None,
                    pred_us: None,
                    reps: 0,
                    check: None,
                    note: String::new(),
                };
                let f: Option<Gemm<T>> = match mode.as_str() {
                    "nvblas" => self.nv.and_then(|nv| nv.gemm::<T>()),
                    "split" => None,
                    "gpu" if self.rt.is_none() => None,
                    _ => Some(T::GEMM),
                };
                let Some(f) = f else {
                    row.note = match mode.as_str() {
                        "split" => "phase 2 (co-execution) not built".into(),
                        "nvblas" => "NVBLAS not loaded".into(),
                        _ => "no GPU".into(),
                    };
                    self.rows.push(row);
                    continue;
                };
                if let Some(&(pn, secs)) = last.get(mode) {
                    let est = secs * (n as f64 / pn as f64).powi(3);
                    if est > o.max_s {
                        row.note = format!("skipped: ~{est:.0} s per call > --max-s");
                        self.rows.push(row);
                        continue;
                    }
                }
                let side = match mode.as_str() {
                    "cpu" => Some(Side::Cpu),
                    "gpu" => Some(Side::Gpu),
                    _ => None,
                };
                let call = |c: &mut Vec<T>| {
                    off::with_side(side, || unsafe {
                        f(
                            &(b'N' as c_char),
                            &(b'N' as c_char),
                            &ni,
                            &ni,
                            &ni,
                            &alpha,
                            a.as_ptr(),
                            &ni,
                            b.as_ptr(),
                            &ni,
                            &beta,
                            c.as_mut_ptr(),
                            &ni,
                        )
                    })
                };
                // One checked call from the same C (small sizes), then the timing.
                if check {
                    let mut c = c0.clone();
                    call(&mut c);
                    match &cpu_result {
                        Some(w) => row.check = Some(max_rel_diff(&c, w)),
                        None if mode == "cpu" => cpu_result = Some(c),
                        None => {}
                    }
                }
                let mut c = c0.clone();
                off::clear_last();
                let (secs, reps) = time(&mut || call(&mut c), o.budget, if o.quick { 5 } else { 20 });
                row.us = Some(secs * 1e6);
                row.reps = reps;
                last.insert(mode.clone(), (n, secs));
                row.gpu_share = match mode.as_str() {
                    "cpu" => Some(0.0),
                    "gpu" => Some(1.0),
                    "auto" => Some(match off::last() {
                        Some(out) if out.ran == Side::Gpu => 1.0,
                        _ => 0.0,
                    }),
                    _ => None,
                };
                if mode != "nvblas" {
                    if let Some(o) = off::last().and_then(|o| o.fallback) {
                        row.note = format!("GPU failed, CPU fell back: {o}");
                    }
                }
                row.pred_us = pred.map(|p| match mode.as_str() {
                    "cpu" => p.cpu_us,
                    "gpu" => p.gpu_us,
                    _ => p.cpu_us.min(p.gpu_us),
                });
                if mode == "nvblas" {
                    row.pred_us = None;
                }
                eprintln!(
                    "{name} n={n} {mode}: {:.3} ms ({reps} reps){}{}",
                    secs * 1e3,
                    row.check.map(|c| format!(", max rel diff vs cpu {c:.1e}")).unwrap_or_default(),
                    if row.note.is_empty() { String::new() } else { format!(" [{}]", row.note) }
                );
                self.rows.push(row);
            }
        }
    }
}

// ---- Output ----

fn csv(rows: &[Row]) -> String {
    let mut s = String::from("routine,n,mode,gpu_share,us,tflops,pred_us,reps,check,note\n");
    let opt = |v: Option<f64>, p: usize| v.map(|v| format!("{v:.p$}")).unwrap_or_default();
    for r in rows {
        let _ = writeln!(
            s,
            "{},{},{},{},{},{},{},{},{},{}",
            r.routine,
            r.n,
            r.mode,
            opt(r.gpu_share, 2),
            opt(r.us, 1),
            opt(r.tflops(), 4),
            opt(r.pred_us, 1),
            r.reps,
            r.check.map(|c| format!("{c:.2e}")).unwrap_or_default(),
            r.note.replace(',', ";")
        );
    }
    s
}

fn find<'a>(rows: &'a [Row], routine: &str, n: usize, mode: &str) -> Option<&'a Row> {
    rows.iter().find(|r| r.routine == routine && r.n == n && r.mode == mode)
}

/// The table: per routine and n, each mode's ms, and the ratios the issue's targets name.
fn table(rows: &[Row], routines: &[String], ns: &[usize]) -> String {
    let mut s = String::new();
    let ms = |r: Option<&Row>| r.and_then(|r| r.us).map(|us| format!("{:.3}", us / 1e3)).unwrap_or_else(|| "-".into());
    let us = |r: Option<&Row>| r.and_then(|r| r.us);
    for routine in routines {
        let _ = writeln!(
            s,
            "\n{routine} (ms; auto/best = auto over the better of cpu and gpu; nv/auto = NVBLAS over auto)\n{:>6} {:>10} {:>10} {:>10} {:>10} {:>9} {:>8} {:>10} {:>10}",
            "n", "auto", "cpu", "gpu", "nvblas", "auto/best", "nv/auto", "pred cpu", "pred gpu"
        );
        let mut logs = Vec::new();
        for &n in ns {
            let (a, c, g, nv) = (
                find(rows, routine, n, "auto"),
                find(rows, routine, n, "cpu"),
                find(rows, routine, n, "gpu"),
                find(rows, routine, n, "nvblas"),
            );
            let best = match (us(c), us(g)) {
                (Some(x), Some(y)) => Some(x.min(y)),
                (x, y) => x.or(y),
            };
            let ratio = |x: Option<f64>, y: Option<f64>| match (x, y) {
                (Some(x), Some(y)) if y > 0.0 => format!("{:.2}", x / y),
                _ => "-".into(),
            };
            if let (Some(x), Some(y)) = (us(nv), us(a)) {
                if n >= 1024 {
                    logs.push((x / y).ln());
                }
            }
            let pred = |r: Option<&Row>| {
                r.and_then(|r| r.pred_us).map(|p| format!("{:.3}", p / 1e3)).unwrap_or_else(|| "-".into())
            };
            let _ = writeln!(
                s,
                "{n:>6} {:>10} {:>10} {:>10} {:>10} {:>9} {:>8} {:>10} {:>10}",
                ms(a),
                ms(c),
                ms(g),
                ms(nv),
                ratio(us(a), best),
                ratio(us(nv), us(a)),
                pred(c),
                pred(g)
            );
        }
        if !logs.is_empty() {
            let gm = (logs.iter().sum::<f64>() / logs.len() as f64).exp();
            let _ = writeln!(s, "  NVBLAS / auto, geometric mean over n >= 1024: {gm:.2}x");
        }
    }
    s
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// TFLOP/s against n (log2 axis), one panel per routine: measured modes solid, the model's
/// predictions dotted.
fn svg(rows: &[Row], routines: &[String], title: &str, subtitle: &str) -> String {
    const PW: f64 = 400.0;
    const PH: f64 = 280.0;
    let series: [(&str, &str, &str, bool); 6] = [
        ("auto", "#000000", "hyblas auto", false),
        ("cpu", "#1f77b4", "hyblas cpu", false),
        ("gpu", "#2ca02c", "hyblas gpu", false),
        ("nvblas", "#d62728", "NVBLAS", false),
        ("cpu", "#1f77b4", "model cpu", true),
        ("gpu", "#2ca02c", "model gpu", true),
    ];
    let (w, h) = ((routines.len().max(1) as f64 * PW + 20.0).max(900.0), PH + 95.0);
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(s, r#"<text x="10" y="20" font-size="14" font-weight="bold">{}</text>"#, esc(title));
    let _ = writeln!(s, r##"<text x="10" y="36" fill="#555">{}</text>"##, esc(subtitle));
    // Everything below the two title lines.
    let _ = writeln!(s, r#"<g transform="translate(0 15)">"#);
    let mut lx = 10.0;
    for (_, color, label, pred) in series {
        let dash = if pred { r#" stroke-dasharray="2,3""# } else { "" };
        let _ = writeln!(
            s,
            r#"<line x1="{lx}" y1="40" x2="{}" y2="40" stroke="{color}" stroke-width="2"{dash}/><text x="{}" y="44">{label}</text>"#,
            lx + 18.0,
            lx + 22.0
        );
        lx += 34.0 + 6.5 * label.len() as f64;
    }
    for (pi, routine) in routines.iter().enumerate() {
        let ox = 10.0 + pi as f64 * PW;
        let (x0, x1, y0, y1) = (ox + 45.0, ox + PW - 15.0, 60.0 + PH - 35.0, 60.0 + 22.0);
        let rr: Vec<&Row> = rows.iter().filter(|r| &r.routine == routine).collect();
        let mut ns: Vec<usize> = rr.iter().map(|r| r.n).collect();
        ns.sort_unstable();
        ns.dedup();
        if ns.is_empty() {
            continue;
        }
        let (lo, hi) = ((ns[0] as f64).log2(), (ns[ns.len() - 1] as f64).log2());
        let xs =
            |n: usize| if hi > lo { x0 + ((n as f64).log2() - lo) / (hi - lo) * (x1 - x0) } else { (x0 + x1) / 2.0 };
        let tf = |r: &Row, pred: bool| {
            let us = if pred { r.pred_us } else { r.us };
            us.map(|us| flops(routine, r.n) / (us * 1e-6) / 1e12)
        };
        let top = rr
            .iter()
            .flat_map(|r| [tf(r, false), tf(r, true)])
            .flatten()
            .filter(|v| v.is_finite())
            .fold(0.1f64, f64::max);
        let step =
            [0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0].into_iter().find(|s| top / s <= 8.0).unwrap_or(100.0);
        let ymax = (top * 1.05 / step).ceil() * step;
        let ys = |v: f64| y0 - (v.clamp(0.0, ymax) / ymax) * (y0 - y1);
        let _ = writeln!(s, r#"<text x="{x0}" y="{}" font-weight="bold">{}</text>"#, 60.0 + 14.0, esc(routine));
        let _ = writeln!(
            s,
            r##"<rect x="{x0}" y="{y1}" width="{}" height="{}" fill="none" stroke="#888"/>"##,
            x1 - x0,
            y0 - y1
        );
        let prec = if step < 1.0 { 1 } else { 0 };
        for i in 0..=((ymax / step).round() as usize) {
            let v = i as f64 * step;
            let y = ys(v);
            let _ = writeln!(
                s,
                r##"<line x1="{x0}" y1="{y:.1}" x2="{x1}" y2="{y:.1}" stroke="#eee"/><text x="{}" y="{:.1}" text-anchor="end">{v:.prec$}</text>"##,
                x0 - 3.0,
                y + 4.0
            );
        }
        for &n in &ns {
            let x = xs(n);
            let _ = writeln!(
                s,
                r##"<line x1="{x:.1}" y1="{y0}" x2="{x:.1}" y2="{}" stroke="#888"/><text x="{x:.1}" y="{}" text-anchor="middle">{n}</text>"##,
                y0 + 4.0,
                y0 + 15.0
            );
        }
        let _ = writeln!(
            s,
            r##"<text x="{}" y="{}" text-anchor="middle" fill="#555">n (square, log scale)</text><text x="{}" y="{}" text-anchor="middle" fill="#555" transform="rotate(-90 {} {})">TFLOP/s</text>"##,
            (x0 + x1) / 2.0,
            y0 + 29.0,
            ox + 10.0,
            (y0 + y1) / 2.0,
            ox + 10.0,
            (y0 + y1) / 2.0
        );
        for (mode, color, _, pred) in series {
            let mut pts: Vec<&Row> = rr.iter().copied().filter(|r| r.mode == mode).collect();
            pts.sort_by_key(|r| r.n);
            let p: Vec<String> =
                pts.iter().filter_map(|r| tf(r, pred).map(|v| format!("{:.1},{:.1}", xs(r.n), ys(v)))).collect();
            let dash = if pred { r#" stroke-dasharray="2,3""# } else { "" };
            if p.len() > 1 {
                let _ = writeln!(
                    s,
                    r#"<polyline points="{}" fill="none" stroke="{color}" stroke-width="{}"{dash}/>"#,
                    p.join(" "),
                    if pred { 1.2 } else { 1.8 }
                );
            }
            if !pred {
                for q in &p {
                    let (x, y) = q.split_once(',').unwrap();
                    let _ = writeln!(s, r#"<circle cx="{x}" cy="{y}" r="2.2" fill="{color}"/>"#);
                }
            }
        }
    }
    s.push_str("</g>\n</svg>\n");
    s
}

fn main() -> ExitCode {
    let o = match parse_opts() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("offloadbench: {e}");
            return ExitCode::from(2);
        }
    };
    let rt = match Runtime::get(0) {
        Ok(rt) => {
            let _ = rt.bind();
            Some(rt)
        }
        Err(e) => {
            eprintln!("offloadbench: no GPU ({e}): the CPU mode only");
            None
        }
    };
    let device = rt.map(|r| r.props.slug()).unwrap_or_else(|| "cpu-only".into());
    // Without a GPU only a library named by --nvblas is loaded (a stand-in, to test the column).
    let want_nv = o.modes.iter().any(|m| m == "nvblas") && !o.nvblas_off && (rt.is_some() || o.nvblas.is_some());
    let nv = if want_nv {
        match load_nvblas(&o) {
            Ok(nv) => {
                println!("NVBLAS: {}", nv.desc);
                Some(nv)
            }
            Err(e) => {
                eprintln!("offloadbench: {e}");
                None
            }
        }
    } else {
        None
    };
    let threads = hyblas::cpu::threads::nthreads();
    println!(
        "offloadbench: {} ({}), {threads} CPU threads, beta {}, rates {}",
        rt.map(|r| r.props.name.clone()).unwrap_or_else(|| "no GPU".into()),
        device,
        o.beta,
        rt.map(|r| Rates::for_device(r).source.clone()).unwrap_or_else(|| "-".into())
    );
    let mut b = Bench { o: &o, rt, nv: nv.as_ref(), rows: Vec::new() };
    for r in &o.routines {
        match r.as_str() {
            "sgemm" => b.routine::<f32>(r),
            "dgemm" => b.routine::<f64>(r),
            "cgemm" => b.routine::<C32>(r),
            "dsyrk" | "dtrsm" => level3_routine(&mut b, r),
            _ => b.routine::<C64>(r),
        }
        // Rewritten after every routine, so an interrupted run keeps what it measured.
        let _ = std::fs::create_dir_all(&o.out);
        let _ = std::fs::write(o.out.join(format!("{device}-offload.csv")), csv(&b.rows));
    }
    print!("{}", table(&b.rows, &o.routines, &o.ns));
    let title = format!(
        "{}: host-memory GEMM, C = A*B + {}*C, hyblas on {threads} CPU threads",
        rt.map(|r| r.props.name.clone()).unwrap_or_else(|| "no GPU".into()),
        o.beta
    );
    let subtitle = format!("NVBLAS: {}", nv.as_ref().map(|n| n.desc.as_str()).unwrap_or("not loaded"));
    let csv_path = o.out.join(format!("{device}-offload.csv"));
    let svg_path = o.out.join(format!("{device}-offload.svg"));
    let written = std::fs::create_dir_all(&o.out)
        .and_then(|_| std::fs::write(&csv_path, csv(&b.rows)))
        .and_then(|_| std::fs::write(&svg_path, svg(&b.rows, &o.routines, &title, &subtitle)));
    match written {
        Ok(()) => {
            println!("wrote {} and {}", csv_path.display(), svg_path.display());
            let bad = b.rows.iter().any(|r| r.check.is_some_and(|c| c.is_nan() || c >= 1e-3));
            if bad {
                eprintln!("offloadbench: a mode's result differs from the CPU engine's (see the check column)");
                return ExitCode::from(1);
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("offloadbench: writing results: {e}");
            ExitCode::from(1)
        }
    }
}

// ---- DSYRK and DTRSM (issue 5 phase 2, `gpu::offload::l3`): `--routines dsyrk,dtrsm` ----

/// The LP64 Fortran `dsyrk_` and `dtrsm_` signatures (hyblas's and NVBLAS's).
type Dsyrk = unsafe extern "C" fn(
    *const c_char,
    *const c_char,
    *const i32,
    *const i32,
    *const f64,
    *const f64,
    *const i32,
    *const f64,
    *mut f64,
    *const i32,
);
type Dtrsm = unsafe extern "C" fn(
    *const c_char,
    *const c_char,
    *const c_char,
    *const c_char,
    *const i32,
    *const i32,
    *const f64,
    *const f64,
    *const i32,
    *mut f64,
    *const i32,
);

extern "C" {
    fn dsyrk_(
        uplo: *const c_char,
        trans: *const c_char,
        n: *const i32,
        k: *const i32,
        alpha: *const f64,
        a: *const f64,
        lda: *const i32,
        beta: *const f64,
        c: *mut f64,
        ldc: *const i32,
    );
    fn dtrsm_(
        side: *const c_char,
        uplo: *const c_char,
        transa: *const c_char,
        diag: *const c_char,
        m: *const i32,
        n: *const i32,
        alpha: *const f64,
        a: *const f64,
        lda: *const i32,
        b: *mut f64,
        ldb: *const i32,
    );
}

/// `name` (dsyrk_, dtrsm_) from the NVBLAS the GEMM loader opened: its dgemm_'s address names
/// the file (dladdr), and dlopen(RTLD_NOLOAD) hands back the loaded library.
fn nvblas_symbol(nv: &Nvblas, name: &str) -> Option<*mut c_void> {
    let p = nv.syms[1]?;
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    if unsafe { libc::dladdr(p, &mut info) } == 0 || info.dli_fname.is_null() {
        return None;
    }
    let flags = libc::RTLD_NOW | libc::RTLD_LOCAL | libc::RTLD_DEEPBIND | libc::RTLD_NOLOAD;
    let h = unsafe { libc::dlopen(info.dli_fname, flags) };
    if h.is_null() {
        return None;
    }
    let c = CString::new(name).unwrap();
    let s = unsafe { libc::dlsym(h, c.as_ptr()) };
    (!s.is_null()).then_some(s)
}

/// DSYRK (C := A*A^T + beta*C, lower, n x n, k = n) or DTRSM (B := A^-1*B, left, lower, no
/// transpose, non-unit, n x n; A diagonally dominant) on host memory through the exported
/// `dsyrk_` / `dtrsm_`, in modes auto, cpu, gpu and NVBLAS: rows `routine,n,mode,gpu_share,us`
/// (and the model's prediction, checks for n <= 2048) like the GEMM rows. DTRSM's timed calls
/// solve in place one after the other (the values shrink by at most 2 per call: no denormals).
fn level3_routine(b: &mut Bench, name: &str) {
    use hyblas::plan::offload::Level3;
    let o = b.o;
    let threads = hyblas::cpu::threads::nthreads();
    let rates = b.rt.map(Rates::for_device);
    let syrk = name == "dsyrk";
    let nv = b.nv.and_then(|nv| nvblas_symbol(nv, if syrk { "dsyrk_" } else { "dtrsm_" }));
    let mut last: std::collections::HashMap<String, (usize, f64)> = Default::default();
    let ch = |x: u8| x as c_char;
    for &n in &o.ns {
        let len = n * n;
        let mut a: Vec<f64> = fill(len, 1);
        if !syrk {
            let inv = 1.0 / n as f64;
            a.par_chunks_mut(n).enumerate().for_each(|(j, col)| {
                for (i, x) in col.iter_mut().enumerate() {
                    *x = if i == j { 1.5 + *x } else { *x * inv };
                }
            });
        }
        let c0: Vec<f64> = fill(len, 3);
        let (alpha, beta) = (1.0f64, o.beta);
        let ni = n as i32;
        let check = n <= 2048;
        let shape = if syrk { Level3::Syrk { n, k: n } } else { Level3::Trsm { left: true, m: n, n } };
        let p = Problem::level3::<f64>(shape, false, beta == 0.0);
        let pred = rates.as_ref().map(|r| r.predict(&p, threads));
        let mut cpu_result: Option<Vec<f64>> = None;
        let mut modes = o.modes.clone();
        modes.sort_by_key(|m| (m != "cpu") as u8);
        for mode in &modes {
            let mut row = Row {
                routine: name.into(),
                n,
                mode: mode.clone(),
                gpu_share: None,
                us: None,
                pred_us: None,
                reps: 0,
                check: None,
                note: String::new(),
            };
            let f: Option<*mut c_void> = match mode.as_str() {
                "nvblas" => nv,
                "split" => None,
                "gpu" if b.rt.is_none() => None,
                _ if syrk => Some(dsyrk_ as *mut c_void),
                _ => Some(dtrsm_ as *mut c_void),
            };
            let Some(f) = f else {
                row.note = match mode.as_str() {
                    "split" => "co-execution is for GEMM".into(),
                    "nvblas" => "NVBLAS not loaded".into(),
                    _ => "no GPU".into(),
                };
                b.rows.push(row);
                continue;
            };
            if let Some(&(pn, secs)) = last.get(mode) {
                let est = secs * (n as f64 / pn as f64).powi(3);
                if est > o.max_s {
                    row.note = format!("skipped: ~{est:.0} s per call > --max-s");
                    b.rows.push(row);
                    continue;
                }
            }
            let side = match mode.as_str() {
                "cpu" => Some(Side::Cpu),
                "gpu" => Some(Side::Gpu),
                _ => None,
            };
            let call = |c: &mut Vec<f64>| {
                off::with_side(side, || unsafe {
                    if syrk {
                        let f = std::mem::transmute::<*mut c_void, Dsyrk>(f);
                        f(&ch(b'L'), &ch(b'N'), &ni, &ni, &alpha, a.as_ptr(), &ni, &beta, c.as_mut_ptr(), &ni)
                    } else {
                        let f = std::mem::transmute::<*mut c_void, Dtrsm>(f);
                        f(
                            &ch(b'L'),
                            &ch(b'L'),
                            &ch(b'N'),
                            &ch(b'N'),
                            &ni,
                            &ni,
                            &alpha,
                            a.as_ptr(),
                            &ni,
                            c.as_mut_ptr(),
                            &ni,
                        )
                    }
                })
            };
            if check {
                let mut c = c0.clone();
                call(&mut c);
                if syrk {
                    // The upper triangle is not referenced: compare the lower one only.
                    for j in 0..n {
                        c[j * n..j * n + j].fill(0.0);
                    }
                }
                match &cpu_result {
                    Some(w) => row.check = Some(max_rel_diff(&c, w)),
                    None if mode == "cpu" => cpu_result = Some(c),
                    None => {}
                }
            }
            let mut c = c0.clone();
            off::clear_last();
            let (secs, reps) = time(&mut || call(&mut c), o.budget, if o.quick { 5 } else { 20 });
            row.us = Some(secs * 1e6);
            row.reps = reps;
            last.insert(mode.clone(), (n, secs));
            row.gpu_share = match mode.as_str() {
                "cpu" => Some(0.0),
                "gpu" => Some(1.0),
                "auto" => Some(match off::last() {
                    Some(out) if out.ran == Side::Gpu => 1.0,
                    _ => 0.0,
                }),
                _ => None,
            };
            if mode != "nvblas" {
                if let Some(o) = off::last().and_then(|o| o.fallback) {
                    row.note = format!("GPU failed, CPU fell back: {o}");
                }
                row.pred_us = pred.map(|p| match mode.as_str() {
                    "cpu" => p.cpu_us,
                    "gpu" => p.gpu_us,
                    _ => p.cpu_us.min(p.gpu_us),
                });
            }
            eprintln!(
                "{name} n={n} {mode}: {:.3} ms ({reps} reps){}{}",
                secs * 1e3,
                row.check.map(|c| format!(", max rel diff vs cpu {c:.1e}")).unwrap_or_default(),
                if row.note.is_empty() { String::new() } else { format!(" [{}]", row.note) }
            );
            b.rows.push(row);
        }
    }
}
