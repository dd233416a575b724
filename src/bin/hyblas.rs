//! The `hyblas` command: `info` (what the library sees and would do on this machine) and
//! `demo` (a real workload through the exported C ABI, traced and checked).
//!
//! This binary links the hyblas rlib, so the `extern "C"` declarations below resolve to the
//! very symbols the shared library exports: the demo goes through the same argument checks,
//! planner and engine as any C or Fortran caller.

use hyblas::config::{self, DeviceChoice, TraceTarget};
use hyblas::cpu::{simd, threads};
use std::ffi::{c_char, c_int, c_void};
use std::io::{Read, Seek, SeekFrom};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

const HELP: &str = "\
hyblas: a drop-in BLAS (Fortran BLAS + CBLAS, LP64 and ILP64) with a fast CPU engine

usage: hyblas <command>

commands:
  info          version, CPU and SIMD level, threads and where the count came from, the
                configuration in effect; the GPU, NVRTC, each kernel unit calls can use and
                whether the cache holds it (with its recorded compile time), the tuning
                recipes in use, whether the real cuBLAS is reachable. Compiles nothing
  tune          measure every GPU kernel over its candidate block shapes on this GPU and write
                the tuning recipes to the cache dir (seed 004 offline tuner), then the host
                GEMM offload model's rates (as `tune offload`)
  tune offload  measure only the offload model's rates (host<->device through the staging
                pipeline, cuBLAS and CPU-engine GEMM rates, per-call latency) and replace the
                `offload` lines of the recipe file
  compile [--arch sm_XY[,sm_XY...]] [--all] [--if-gpu] [UNIT|FAMILY ...]
                compile GPU kernel units with NVRTC into the kernel cache ahead of time, a
                line per unit: by default every unit calls can reach on the present GPU (or on
                each architecture named: no GPU needed; a shared HYBLAS_CACHE_DIR serves a
                cluster), --all every unit, else the units (level1_d, splitk_d_skm16) or
                families (level1 gemv trmv splitk) named. Without it a program's first call
                of a kind runs on cuBLAS while its unit compiles in the background.
                --if-gpu: compile for the present GPU, or say why not and succeed (install).
                HYBLAS_KERNEL_DEFINES and HYBLAS_CACHE_DIR apply as at run time
  demo [--quick]
                run DGEMM (n=2048), ZGEMM (n=1024, via CBLAS), DGEMV (n=4096), DAXPY and DDOT
                through the C ABI with tracing on, and with a GPU STRMV (n=8192) on device
                memory through the Fortran ABI; check every result, print a table
                (--quick: sizes divided by 4). Exits non-zero if a check fails.
  help, --help  this text
  --version     the version

environment (also accepted as KEY=value lines in the file named by HYBLAS_CONFIG):
  HYBLAS_NUM_THREADS   threads of the CPU engine (else OPENBLAS_NUM_THREADS, OMP_NUM_THREADS, cores)
  HYBLAS_TRACE         stderr or a file path: one line per BLAS call (engine, threads, time)
  HYBLAS_DEVICE        auto | cpu | gpu
  HYBLAS_CACHE_DIR     compiled kernels and tuning recipes (default $XDG_CACHE_HOME/hyblas)
  HYBLAS_COMPILE       background (default: calls never wait for a kernel compile) | wait
  HYBLAS_<NAME>        size thresholds, e.g. HYBLAS_GEMM_PAR_MIN, HYBLAS_L1_PAR_MIN
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("info") => {
            info();
            ExitCode::SUCCESS
        }
        Some("tune") if args.get(1).map(String::as_str) == Some("offload") => tune_offload_cmd(),
        Some("tune") => tune_cmd(),
        Some("compile") => compile_cmd(&args[1..]),
        Some("demo") => {
            let quick = match args.get(1).map(String::as_str) {
                None => false,
                Some("--quick") => true,
                Some(other) => {
                    eprintln!("hyblas demo: unknown option `{other}` (see hyblas --help)");
                    return ExitCode::from(2);
                }
            };
            demo(quick)
        }
        Some("help" | "--help" | "-h") | None => {
            print!("{HELP}");
            ExitCode::SUCCESS
        }
        Some("--version" | "-V" | "version") => {
            println!("hyblas {}", env!("CARGO_PKG_VERSION"));
            ExitCode::SUCCESS
        }
        Some(other) => {
            eprintln!("hyblas: unknown command `{other}` (see hyblas --help)");
            ExitCode::from(2)
        }
    }
}

// ---------------------------------------------------------------------------------------------
// compile

/// `hyblas compile [--arch sm_XY[,sm_XY...]] [--all] [UNIT|FAMILY ...]`: kernel units into the
/// cache ahead of time, one NVRTC compile per core at a time, a progress line per unit.
fn compile_cmd(args: &[String]) -> ExitCode {
    use hyblas::gpu::kernels::{self, Unit};
    use hyblas::gpu::{nvrtc, Runtime};
    let usage = |why: &str| {
        eprintln!("hyblas compile: {why}");
        eprintln!(
            "usage: hyblas compile [--arch sm_XY[,sm_XY...]] [--all] [--if-gpu] [UNIT|FAMILY ...] (see hyblas --help)"
        );
        ExitCode::from(2)
    };
    let (mut archs, mut all, mut named, mut if_gpu) = (Vec::new(), false, Vec::new(), false);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--arch" => {
                let Some(list) = it.next() else { return usage("--arch needs a value") };
                for arch in list.split(',').map(str::trim).filter(|a| !a.is_empty()) {
                    if kernels::arch_cc(arch).is_none() {
                        return usage(&format!("`{arch}` is not an architecture such as sm_90"));
                    }
                    archs.push(arch.to_string());
                }
                if archs.is_empty() {
                    return usage("--arch needs a value");
                }
            }
            "--all" => all = true,
            // For install scripts: the present GPU's units when there is a GPU and NVRTC, else
            // a line saying why nothing was compiled, and success.
            "--if-gpu" => if_gpu = true,
            name => {
                let units: Vec<Unit> = match kernels::FAMILIES.iter().find(|f| f.name() == name) {
                    Some(f) => f.units(),
                    None => match Unit::parse(name) {
                        Some(u) => vec![u],
                        None => return usage(&format!("unknown kernel unit or family `{name}`")),
                    },
                };
                named.extend(units);
            }
        }
    }
    let skip = |why: String| {
        println!(
            "hyblas compile: nothing compiled: {why} (`hyblas compile --arch sm_XY` fills a cache for another machine)"
        );
        ExitCode::SUCCESS
    };
    if archs.is_empty() {
        match Runtime::get(0) {
            Ok(rt) => archs.push(rt.props.arch()),
            Err(e) if if_gpu => return skip(e.to_string()),
            Err(e) => {
                eprintln!("hyblas compile: {e}; name the architecture with --arch sm_XY");
                return ExitCode::from(2);
            }
        }
    }
    if let Err(e) = nvrtc::version() {
        if if_gpu {
            return skip(e.to_string());
        }
        eprintln!("hyblas compile: {e}");
        return ExitCode::FAILURE;
    }
    // (arch, unit) jobs: the named units, else every unit calls can reach on that architecture
    // with this configuration (--all: every unit with code for it).
    let mut jobs = Vec::new();
    for arch in &archs {
        let cc = kernels::arch_cc(arch).unwrap();
        let units = if !named.is_empty() {
            named.clone()
        } else if all {
            Unit::all()
        } else {
            kernels::reachable_units(cc)
        };
        jobs.extend(units.into_iter().filter(|u| u.runs_on(cc)).map(|u| (arch.clone(), u)));
    }
    let total = jobs.len();
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).min(total.max(1));
    println!(
        "compiling {total} kernel units for {} on {workers} threads into {}",
        archs.join(","),
        nvrtc::cache_dir().join("kernels").display()
    );
    let start = Instant::now();
    let queue = std::sync::Mutex::new(jobs.into_iter());
    let done = std::sync::atomic::AtomicUsize::new(0);
    let failed = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let Some((arch, unit)) = queue.lock().unwrap().next() else { break };
                let r = nvrtc::cubin(&unit.name(), &unit.source(), &arch);
                let n = done.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
                let w = total.to_string().len();
                match r {
                    Ok(c) => println!(
                        "[{n:>w$}/{total}] {arch:<7} {:<20} {} {:6.1} s {:7.2} MB  {}",
                        unit.name(),
                        if c.from_cache { "cached  " } else { "compiled" },
                        c.seconds,
                        c.cubin.len() as f64 / 1e6,
                        c.path.display()
                    ),
                    Err(e) => {
                        failed.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        println!("[{n:>w$}/{total}] {arch:<7} {:<20} failed: {e}", unit.name());
                    }
                }
            });
        }
    });
    let failed = failed.into_inner();
    println!("{} of {total} units ready in {:.1} s", total - failed, start.elapsed().as_secs_f64());
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

// ---------------------------------------------------------------------------------------------
// info

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().into())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string())
}

/// The GPU section of `hyblas info`: device, NVRTC, kernel cache (compile vs cache-load
/// time), recipes, real cuBLAS.
fn gpu_info() {
    use hyblas::gpu::{nvrtc, tune, vendor, Runtime};
    let rt = match Runtime::get(0) {
        Ok(rt) => rt,
        Err(e) => {
            println!("gpu           {e}; CPU engine only");
            return;
        }
    };
    let p = &rt.props;
    println!(
        "gpu           {} ({}, {} SMs, {:.1} GiB, L2 {} MiB, driver {}.{})",
        p.name,
        p.arch(),
        p.sm_count,
        p.total_mem as f64 / (1u64 << 30) as f64,
        p.l2_bytes >> 20,
        p.driver_version / 1000,
        p.driver_version % 1000 / 10
    );
    match nvrtc::version() {
        Ok((a, b)) => println!("nvrtc         {a}.{b}"),
        Err(e) => println!("nvrtc         {e}"),
    }
    println!("cache dir     {} (HYBLAS_CACHE_DIR)", nvrtc::cache_dir().display());
    kernel_cache_info(p);
    match tune::tuned_file(p) {
        Some(f) => println!("recipes       tuned: {}", f.display()),
        None if p.cc == (9, 0) => {
            println!("recipes       shipped Hopper recipes (kernels/recipes/sm90.txt, tuned on an H200); `hyblas tune` makes this device's own");
            tune::hopper_recipes().into_iter().for_each(print_recipe);
        }
        None => println!(
            "recipes       generic recipe for every kernel (min warp occ {}, min block occ {}, >= {} threads, Ty/Tx <= {}); run `hyblas tune`",
            tune::BUILTIN.min_warp,
            tune::BUILTIN.min_block,
            tune::BUILTIN.min_threads,
            tune::BUILTIN.max_ty_per_tx
        ),
    }
    if let Some(f) = tune::tuned_file(p) {
        if let Ok(text) = std::fs::read_to_string(f) {
            tune::parse(&text).into_iter().for_each(print_recipe);
        }
    }
    println!(
        "cublas        {}",
        if vendor::present() { "real cuBLAS found (fallback and peer)" } else { "real cuBLAS not found" }
    );
    let r = hyblas::plan::offload::Rates::for_device(rt);
    let threads = hyblas::cpu::threads::nthreads();
    println!(
        "offload       host GEMM model ({}): h2d {:.1} GB/s, d2h {:.1} GB/s, latency {:.0} us; GPU s/d/c/z {:.1}/{:.1}/{:.1}/{:.1} TFLOP/s; CPU {:.2}/{:.2}/{:.2}/{:.2} TFLOP/s on {threads} threads",
        r.source,
        r.h2d / 1e9,
        r.d2h / 1e9,
        r.latency * 1e6,
        r.gpu[0] / 1e12,
        r.gpu[1] / 1e12,
        r.gpu[2] / 1e12,
        r.gpu[3] / 1e12,
        r.cpu_per_thread[0] * threads as f64 / 1e12,
        r.cpu_per_thread[1] * threads as f64 / 1e12,
        r.cpu_per_thread[2] * threads as f64 / 1e12,
        r.cpu_per_thread[3] * threads as f64 / 1e12
    );
}

/// The kernel lines of `hyblas info`: for each unit calls can reach on this device, whether the
/// cache holds it and what its compile took (recorded beside the cubin). Compiles nothing.
fn kernel_cache_info(p: &hyblas::gpu::runtime::DeviceProps) {
    use hyblas::gpu::kernels::{self, Unit};
    use hyblas::gpu::nvrtc;
    let arch = p.arch();
    let units = kernels::reachable_units(p.cc);
    let mut cached = 0;
    let mut lines = Vec::new();
    for u in &units {
        // Found as a program finds it: by any NVRTC's compile, newest first.
        let found = nvrtc::find_cached(&nvrtc::entry(&u.name(), &u.source(), &arch)).into_iter().next();
        let line = match found.as_ref().and_then(|path| std::fs::metadata(path).ok().map(|m| (path, m.len()))) {
            Some((path, bytes)) => {
                cached += 1;
                let meta = nvrtc::read_meta(path).unwrap_or_default();
                let value = |k: &str| hyblas::gpu::cache_file::meta_value(&meta, k).map(str::to_string);
                let took = value("compile_seconds")
                    .map_or("compile time not recorded".into(), |s| format!("compiled in {s} s"));
                let by = value("nvrtc").map_or(String::new(), |v| format!(" by NVRTC {v}"));
                format!("{:<20} cached     {:6.2} MB, {took}{by}", u.name(), bytes as f64 / 1e6)
            }
            None => format!("{:<20} not cached (compiled in the background when a call first needs it)", u.name()),
        };
        lines.push(line);
    }
    let others = Unit::all().into_iter().filter(|u| u.runs_on(p.cc) && !units.contains(u)).count();
    println!(
        "kernels       {arch}: {cached} of {} units cached in {} (`hyblas compile` fills it; {others} more units serve only HYBLAS_SPLITK_MMA=0, `hyblas compile --all`)",
        units.len(),
        nvrtc::cache_dir().join("kernels").display()
    );
    for l in lines {
        println!("              {l}");
    }
}

/// One recipe line of `hyblas info`.
fn print_recipe((key, r): (String, hyblas::gpu::tune::Recipe)) {
    println!(
        "              {key:<10} min warp occ {:.3}, min block occ {:.3}, >= {} threads, Ty/Tx <= {:.3}",
        r.min_warp, r.min_block, r.min_threads, r.max_ty_per_tx
    );
}

/// `hyblas tune`: measure every kernel over its candidate shapes and write the recipes.
fn tune_cmd() -> ExitCode {
    use hyblas::gpu::{gemv, level1, splitk, trmv, tune, Runtime};
    let rt = match Runtime::get(0) {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("hyblas tune: {e}");
            return ExitCode::from(1);
        }
    };
    if let Err(e) = rt.bind() {
        eprintln!("hyblas tune: {e}");
        return ExitCode::from(1);
    }
    let start = Instant::now();
    let mut cases = Vec::new();
    for family in [level1::tune_cases, gemv::tune_cases, trmv::tune_cases, splitk::tune_cases] {
        match family(rt) {
            Ok(c) => cases.extend(c),
            Err(e) => {
                eprintln!("hyblas tune: setting up: {e}");
                return ExitCode::from(1);
            }
        }
    }
    let total: usize = cases.iter().map(|c| tune::candidate_count(&rt.props, c)).sum();
    println!("tuning {} kernels, {total} block shapes, on {}", cases.len(), rt.props.name);
    let bar = indicatif::ProgressBar::new(total as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{elapsed_precise} [{bar:40}] {pos}/{len} {msg}")
            .unwrap()
            .progress_chars("=> "),
    );
    let mut results = Vec::new();
    for case in cases.iter_mut() {
        bar.set_message(case.key.clone());
        match tune::tune_case(&rt.props, case, &mut || bar.inc(1)) {
            Ok(r) => results.push(r),
            Err(e) => {
                bar.abandon();
                eprintln!("hyblas tune: {}: {e}", case.key);
                return ExitCode::from(1);
            }
        }
    }
    bar.finish_and_clear();
    drop(cases);
    println!(
        "{:<10} {:>10} {:>8} {:>9} {:>10} {:>8} {:>7}",
        "kernel", "best", "us", "warp occ", "block occ", "threads", "Ty/Tx"
    );
    for r in &results {
        println!(
            "{:<10} {:>10} {:>8.1} {:>9.3} {:>10.3} {:>8} {:>7.3}",
            r.key,
            format!("{}x{}", r.best.0, r.best.1),
            r.best_seconds * 1e6,
            r.recipe.min_warp,
            r.recipe.min_block,
            r.recipe.min_threads,
            r.recipe.max_ty_per_tx
        );
    }
    let list: Vec<(String, tune::Recipe)> = results.iter().map(|r| (r.key.clone(), r.recipe)).collect();
    let path = tune::recipe_path(&rt.props);
    let mut text = tune::format(&rt.props, &list);
    // The recipes take effect before the split-k calibration, so its table times the kernels
    // with the block shapes later calls get.
    let early = path.parent().map(std::fs::create_dir_all).unwrap_or(Ok(())).and_then(|_| std::fs::write(&path, &text));
    if let Err(e) = early {
        eprintln!("hyblas tune: writing {}: {e}", path.display());
        return ExitCode::from(1);
    }
    tune::reload();
    // The split-k GEMM model's constants (bandwidth, FMA rates, the vendor GEMM's table) go in
    // the same file as `splitk <key> <value>` and `splitkx ...` lines.
    println!("split-k calibration: split-k against cuBLAS over the measured table ...");
    match splitk::calibrate(rt) {
        Ok(lines) => {
            println!("split-k model:");
            for l in lines {
                // The table's many lines go to the file; the console gets the rest.
                if !l.starts_with("splitkx") {
                    println!("  {l}");
                }
                text += &l;
                text.push('\n');
            }
        }
        Err(e) => eprintln!("hyblas tune: split-k calibration skipped: {e}"),
    }
    let written =
        path.parent().map(std::fs::create_dir_all).unwrap_or(Ok(())).and_then(|_| std::fs::write(&path, text));
    match written {
        Ok(()) => {
            tune::reload();
            println!("recipes written to {} in {:.1} s", path.display(), start.elapsed().as_secs_f64());
            // The offload model's rates go into the same file (its parser skips other lines).
            if let Err(e) = offload_calibration(rt, &path) {
                eprintln!("hyblas tune: offload calibration skipped: {e}");
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("hyblas tune: writing {}: {e}", path.display());
            ExitCode::from(1)
        }
    }
}

/// Measure the host GEMM offload model's rates (`plan::offload::calibrate`) and put them in
/// the recipe file at `path` as `offload <key> <value>` lines, replacing earlier ones and
/// keeping every other line.
fn offload_calibration(rt: &'static hyblas::gpu::Runtime, path: &std::path::Path) -> Result<(), String> {
    let start = Instant::now();
    let lines = hyblas::plan::offload::calibrate(rt).map_err(|e| e.to_string())?;
    println!("offload model:");
    for l in &lines {
        println!("  {l}");
    }
    let old = std::fs::read_to_string(path).unwrap_or_default();
    let mut text: String = old
        .lines()
        .filter(|l| !(l.starts_with("offload ") || l.starts_with("# offload")))
        .map(|l| format!("{l}\n"))
        .collect();
    for l in &lines {
        text += l;
        text.push('\n');
    }
    path.parent()
        .map(std::fs::create_dir_all)
        .unwrap_or(Ok(()))
        .and_then(|_| std::fs::write(path, text))
        .map_err(|e| format!("writing {}: {e}", path.display()))?;
    hyblas::plan::offload::reload();
    println!("offload rates written to {} in {:.1} s", path.display(), start.elapsed().as_secs_f64());
    Ok(())
}

/// `hyblas tune offload`: the offload model's rates alone.
fn tune_offload_cmd() -> ExitCode {
    let rt = match hyblas::gpu::Runtime::get(0).and_then(|rt| rt.bind().map(|_| rt)) {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("hyblas tune offload: {e}");
            return ExitCode::from(1);
        }
    };
    match offload_calibration(rt, &hyblas::gpu::tune::recipe_path(&rt.props)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("hyblas tune offload: {e}");
            ExitCode::from(1)
        }
    }
}

/// `HYBLAS_*` keys set in the environment or the config file, with where each came from.
fn settings() -> Vec<(String, String, &'static str)> {
    let mut out: Vec<(String, String, &'static str)> = std::env::vars()
        .filter(|(k, v)| k.starts_with("HYBLAS_") && !v.is_empty())
        .map(|(k, v)| (k, v, "environment"))
        .collect();
    if let Ok(path) = std::env::var("HYBLAS_CONFIG") {
        if let Ok(text) = std::fs::read_to_string(&path) {
            for line in text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
                if let Some((k, v)) = line.split_once('=') {
                    let k = k.trim().to_string();
                    if !out.iter().any(|(key, _, _)| *key == k) {
                        out.push((k, v.trim().to_string(), "config file"));
                    }
                }
            }
        }
    }
    out.sort();
    out
}

fn info() {
    let cfg = config::get();
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let level = match *simd::LEVEL {
        simd::Level::Avx512 => "AVX-512",
        simd::Level::Avx2 => "AVX2+FMA",
        simd::Level::Baseline => "baseline x86-64",
    };
    println!("hyblas {}", env!("CARGO_PKG_VERSION"));
    println!("cpu           {} ({cores} cores available to this process)", cpu_model());
    println!("simd          {} -> {level} kernels", simd::describe());
    println!(
        "threads       {} in use (configured {}, from {})",
        threads::nthreads(),
        cfg.num_threads,
        cfg.num_threads_source
    );
    println!("pool          {} threads", threads::pool_size());
    let device = match cfg.device {
        DeviceChoice::Auto => "auto",
        DeviceChoice::Cpu => "cpu",
        DeviceChoice::Gpu => "gpu",
    };
    println!("device        {device} (HYBLAS_DEVICE)");
    let trace = match &cfg.trace {
        None => "off".to_string(),
        Some(TraceTarget::Stderr) => "stderr".to_string(),
        Some(TraceTarget::File(p)) => format!("file {p}"),
    };
    println!("trace         {trace} (HYBLAS_TRACE)");
    match std::env::var("HYBLAS_CONFIG") {
        Ok(p) if std::path::Path::new(&p).is_file() => println!("config file   {p}"),
        Ok(p) => println!("config file   {p} (not readable: defaults and environment only)"),
        Err(_) => println!("config file   none (HYBLAS_CONFIG unset)"),
    }
    println!(
        "thresholds    HYBLAS_GEMM_PAR_MIN={} (m*n*k below which GEMM is serial)",
        *hyblas::cpu::level3::gemm::GEMM_PAR_MIN
    );
    println!(
        "              HYBLAS_L1_PAR_MIN={} (Level 1 elements below which one thread is used)",
        *hyblas::cpu::level1::L1_PAR_MIN
    );
    let set = settings();
    if set.is_empty() {
        println!("settings      none set (all defaults)");
    }
    for (i, (k, v, from)) in set.iter().enumerate() {
        println!("{:<14}{k}={v} ({from})", if i == 0 { "settings" } else { "" });
    }
    gpu_info();
}

// ---------------------------------------------------------------------------------------------
// demo: the exported C ABI

#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
struct Z {
    re: f64,
    im: f64,
}

type Ch = *const c_char;
type I = *const c_int;

extern "C" {
    fn dgemm_(
        ta: Ch,
        tb: Ch,
        m: I,
        n: I,
        k: I,
        al: *const f64,
        a: *const f64,
        lda: I,
        b: *const f64,
        ldb: I,
        be: *const f64,
        c: *mut f64,
        ldc: I,
        lta: usize,
        ltb: usize,
    );
    fn dgemv_(
        t: Ch,
        m: I,
        n: I,
        al: *const f64,
        a: *const f64,
        lda: I,
        x: *const f64,
        incx: I,
        be: *const f64,
        y: *mut f64,
        incy: I,
        lt: usize,
    );
    fn zgemv_(
        t: Ch,
        m: I,
        n: I,
        al: *const Z,
        a: *const Z,
        lda: I,
        x: *const Z,
        incx: I,
        be: *const Z,
        y: *mut Z,
        incy: I,
        lt: usize,
    );
    fn daxpy_(n: I, al: *const f64, x: *const f64, incx: I, y: *mut f64, incy: I);
    fn strmv_(u: Ch, t: Ch, d: Ch, n: I, a: *const f32, lda: I, x: *mut f32, incx: I, lu: usize, lt: usize, ld: usize);
    fn ddot_(n: I, x: *const f64, incx: I, y: *const f64, incy: I) -> f64;
    fn cblas_zgemm(
        layout: c_int,
        ta: c_int,
        tb: c_int,
        m: c_int,
        n: c_int,
        k: c_int,
        al: *const c_void,
        a: *const c_void,
        lda: c_int,
        b: *const c_void,
        ldb: c_int,
        be: *const c_void,
        c: *mut c_void,
        ldc: c_int,
    );
}

const CBLAS_COL_MAJOR: c_int = 102;
const CBLAS_NO_TRANS: c_int = 111;
const CBLAS_CONJ_TRANS: c_int = 113;

/// Safe wrappers over the column-major calls the demo needs (square/contiguous operands).
fn dgemv(trans: u8, n: usize, a: &[f64], x: &[f64], y: &mut [f64]) {
    assert!(a.len() >= n * n && x.len() >= n && y.len() >= n);
    let (ni, one, zero, inc) = (n as c_int, 1.0f64, 0.0f64, 1 as c_int);
    // SAFETY: sizes asserted above; lda = n.
    unsafe {
        dgemv_(&(trans as c_char), &ni, &ni, &one, a.as_ptr(), &ni, x.as_ptr(), &inc, &zero, y.as_mut_ptr(), &inc, 1)
    }
}

fn zgemv(trans: u8, n: usize, a: &[Z], x: &[Z], y: &mut [Z]) {
    assert!(a.len() >= n * n && x.len() >= n && y.len() >= n);
    let (ni, one, zero, inc) = (n as c_int, Z { re: 1.0, im: 0.0 }, Z::default(), 1 as c_int);
    // SAFETY: sizes asserted above; lda = n.
    unsafe {
        zgemv_(&(trans as c_char), &ni, &ni, &one, a.as_ptr(), &ni, x.as_ptr(), &inc, &zero, y.as_mut_ptr(), &inc, 1)
    }
}

struct Rng(u64);
impl Rng {
    fn unit(&mut self) -> f64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    }
    fn vec(&mut self, n: usize) -> Vec<f64> {
        (0..n).map(|_| self.unit()).collect()
    }
    fn zvec(&mut self, n: usize) -> Vec<Z> {
        (0..n).map(|_| Z { re: self.unit(), im: self.unit() }).collect()
    }
}

/// Reads the trace lines the library writes while the demo runs, so they can be shown on
/// stderr and the engine/threads each call took can go into the table.
struct TraceTap {
    file: Option<(PathBuf, bool)>,
    pos: u64,
}

impl TraceTap {
    /// Must run before the first BLAS call (the library reads HYBLAS_TRACE once).
    fn start() -> TraceTap {
        match std::env::var("HYBLAS_TRACE") {
            // The user chose where traces go: leave it, and read it back only if it is a file.
            Ok(v) if !v.is_empty() => {
                let file = (!matches!(v.as_str(), "stderr" | "1" | "0" | "off")).then(|| (PathBuf::from(v), false));
                let pos = file.as_ref().and_then(|(p, _)| std::fs::metadata(p).ok()).map_or(0, |m| m.len());
                TraceTap { file, pos }
            }
            _ => {
                let path = std::env::temp_dir().join(format!("hyblas-demo-{}.trace", std::process::id()));
                let _ = std::fs::remove_file(&path);
                std::env::set_var("HYBLAS_TRACE", &path);
                TraceTap { file: Some((path, true)), pos: 0 }
            }
        }
    }

    /// New trace lines since the last call; echoed to stderr when the demo set up the trace.
    fn drain(&mut self) -> Vec<String> {
        let Some((path, ours)) = &self.file else { return Vec::new() };
        let mut text = String::new();
        if let Ok(mut f) = std::fs::File::open(path) {
            if f.seek(SeekFrom::Start(self.pos)).is_ok() && f.read_to_string(&mut text).is_ok() {
                self.pos += text.len() as u64;
            }
        }
        let lines: Vec<String> = text.lines().map(String::from).collect();
        if *ours {
            for l in &lines {
                eprintln!("  {l}");
            }
        }
        lines
    }

    /// "engine, N threads" of the call just made, from its trace line; when the lines can't be
    /// read back (tracing off, or going to stderr), what the pool says, marked as such.
    fn path(&mut self, routine: &str) -> String {
        let lines = self.drain();
        let field = |l: &str, key: &str| l.split_whitespace().find_map(|w| w.strip_prefix(key)).map(String::from);
        let traced =
            lines.iter().rev().find(|l| l.split_whitespace().nth(1) == Some(routine)).and_then(|l| {
                match field(l, "engine=")?.as_str() {
                    "gpu" => Some("gpu (device memory)".to_string()),
                    "gpu-offload" => Some("gpu (host memory, offloaded)".to_string()),
                    e => Some(format!("{e}, {} threads", field(l, "threads=")?)),
                }
            });
        traced.unwrap_or_else(|| {
            let why = match &self.file {
                Some(_) => "no trace line",
                None if config::get().trace.is_some() => "see trace",
                None => "untraced",
            };
            format!("cpu, {} threads ({why})", threads::nthreads())
        })
    }

    fn finish(self) {
        if let Some((path, true)) = self.file {
            let _ = std::fs::remove_file(path);
        }
    }
}

struct Step {
    routine: &'static str,
    shape: String,
    path: String,
    secs: f64,
    flops: f64,
    resid: f64,
    tol: f64,
}

impl Step {
    fn ok(&self) -> bool {
        self.resid <= self.tol
    }
}

/// Time `f` twice (first call warms the pool and caches); returns the second time.
fn timed(mut f: impl FnMut()) -> f64 {
    f();
    let t = Instant::now();
    f();
    t.elapsed().as_secs_f64()
}

/// max |a - b| / max bound.
fn resid(a: &[f64], b: &[f64], bound: &[f64]) -> f64 {
    let num =
        a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, |m: f64, d| if d.is_nan() { f64::NAN } else { m.max(d) });
    let den = bound.iter().fold(0.0f64, |m, v| m.max(*v));
    if num == 0.0 {
        0.0
    } else {
        num / den.max(f64::MIN_POSITIVE)
    }
}

fn abs_vec(v: &[f64]) -> Vec<f64> {
    v.iter().map(|x| x.abs()).collect()
}

/// C = A*B (DGEMM); checked as C*x against A*(B*x), relative to |A|*(|B|*|x|).
fn demo_dgemm(n: usize, rng: &mut Rng, tap: &mut TraceTap) -> Step {
    let (a, b, x) = (rng.vec(n * n), rng.vec(n * n), rng.vec(n));
    let mut c = vec![f64::NAN; n * n];
    let (ni, one, zero, no) = (n as c_int, 1.0f64, 0.0f64, b'N' as c_char);
    eprintln!("demo: dgemm {n}x{n}x{n}");
    let secs = timed(|| {
        // SAFETY: n x n column-major operands, ld = n.
        unsafe {
            dgemm_(&no, &no, &ni, &ni, &ni, &one, a.as_ptr(), &ni, b.as_ptr(), &ni, &zero, c.as_mut_ptr(), &ni, 1, 1)
        }
    });
    let path = tap.path("dgemm");
    let (mut y1, mut t, mut y2) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
    dgemv(b'N', n, &c, &x, &mut y1);
    dgemv(b'N', n, &b, &x, &mut t);
    dgemv(b'N', n, &a, &t, &mut y2);
    let (mut tb, mut bound) = (vec![0.0; n], vec![0.0; n]);
    dgemv(b'N', n, &abs_vec(&b), &abs_vec(&x), &mut tb);
    dgemv(b'N', n, &abs_vec(&a), &tb, &mut bound);
    tap.drain();
    Step {
        routine: "dgemm",
        shape: format!("{n}x{n}x{n} NN"),
        path,
        secs,
        flops: 2.0 * (n as f64).powi(3),
        resid: resid(&y1, &y2, &bound),
        tol: 4.0 * n as f64 * f64::EPSILON,
    }
}

/// C = A*B^H (CBLAS ZGEMM, column-major); checked as C*x against A*(B^H*x).
fn demo_zgemm(n: usize, rng: &mut Rng, tap: &mut TraceTap) -> Step {
    let (a, b, x) = (rng.zvec(n * n), rng.zvec(n * n), rng.zvec(n));
    let mut c = vec![Z { re: f64::NAN, im: f64::NAN }; n * n];
    let (ni, one, zero) = (n as c_int, Z { re: 1.0, im: 0.0 }, Z::default());
    eprintln!("demo: cblas_zgemm {n}x{n}x{n} NoTrans, ConjTrans");
    let secs = timed(|| {
        // SAFETY: n x n column-major operands, ld = n; complex scalars passed by pointer.
        unsafe {
            cblas_zgemm(
                CBLAS_COL_MAJOR,
                CBLAS_NO_TRANS,
                CBLAS_CONJ_TRANS,
                ni,
                ni,
                ni,
                &one as *const Z as *const c_void,
                a.as_ptr() as *const c_void,
                ni,
                b.as_ptr() as *const c_void,
                ni,
                &zero as *const Z as *const c_void,
                c.as_mut_ptr() as *mut c_void,
                ni,
            )
        }
    });
    let path = tap.path("zgemm");
    let (mut y1, mut t, mut y2) = (vec![Z::default(); n], vec![Z::default(); n], vec![Z::default(); n]);
    zgemv(b'N', n, &c, &x, &mut y1);
    zgemv(b'C', n, &b, &x, &mut t);
    zgemv(b'N', n, &a, &t, &mut y2);
    // Bound with |re| + |im| (>= the modulus): |A| * (|B|^T * |x|).
    let abs1 = |v: &[Z]| v.iter().map(|z| z.re.abs() + z.im.abs()).collect::<Vec<f64>>();
    let (mut tb, mut bound) = (vec![0.0; n], vec![0.0; n]);
    dgemv(b'T', n, &abs1(&b), &abs1(&x), &mut tb);
    dgemv(b'N', n, &abs1(&a), &tb, &mut bound);
    tap.drain();
    let flat = |v: &[Z]| v.iter().flat_map(|z| [z.re, z.im]).collect::<Vec<f64>>();
    let bound2: Vec<f64> = bound.iter().flat_map(|b| [*b, *b]).collect();
    Step {
        routine: "zgemm",
        shape: format!("{n}x{n}x{n} NC (cblas)"),
        path,
        secs,
        flops: 8.0 * (n as f64).powi(3),
        resid: resid(&flat(&y1), &flat(&y2), &bound2),
        tol: 8.0 * n as f64 * f64::EPSILON,
    }
}

/// y = A*x (DGEMV); checked against a plain loop.
fn demo_dgemv(n: usize, rng: &mut Rng, tap: &mut TraceTap) -> Step {
    let (a, x) = (rng.vec(n * n), rng.vec(n));
    let mut y = vec![f64::NAN; n];
    eprintln!("demo: dgemv {n}x{n} N");
    let secs = timed(|| dgemv(b'N', n, &a, &x, &mut y));
    let path = tap.path("dgemv");
    let (mut want, mut bound) = (vec![0.0; n], vec![0.0; n]);
    for (j, &xj) in x.iter().enumerate() {
        let col = &a[j * n..(j + 1) * n];
        for i in 0..n {
            want[i] += col[i] * xj;
            bound[i] += (col[i] * xj).abs();
        }
    }
    Step {
        routine: "dgemv",
        shape: format!("{n}x{n} N"),
        path,
        secs,
        flops: 2.0 * (n as f64).powi(2),
        resid: resid(&y, &want, &bound),
        tol: 2.0 * n as f64 * f64::EPSILON,
    }
}

/// y = alpha*x + y (DAXPY); checked element by element.
fn demo_daxpy(n: usize, rng: &mut Rng, tap: &mut TraceTap) -> Step {
    let (x, y0) = (rng.vec(n), rng.vec(n));
    let mut y = y0.clone();
    let (ni, alpha, inc) = (n as c_int, 0.75f64, 1 as c_int);
    eprintln!("demo: daxpy n={n}");
    // Each of the two calls adds alpha*x once.
    // SAFETY: vectors of n, unit strides.
    let secs = timed(|| unsafe { daxpy_(&ni, &alpha, x.as_ptr(), &inc, y.as_mut_ptr(), &inc) });
    let path = tap.path("daxpy");
    let want: Vec<f64> = y0.iter().zip(&x).map(|(y, x)| y + 2.0 * alpha * x).collect();
    let bound: Vec<f64> = y0.iter().zip(&x).map(|(y, x)| y.abs() + 2.0 * (alpha * x).abs()).collect();
    Step {
        routine: "daxpy",
        shape: format!("n={n}"),
        path,
        secs,
        flops: 2.0 * n as f64,
        resid: resid(&y, &want, &bound),
        tol: 4.0 * f64::EPSILON,
    }
}

/// x . y (DDOT); checked against a plain sum.
fn demo_ddot(n: usize, rng: &mut Rng, tap: &mut TraceTap) -> Step {
    let (x, y) = (rng.vec(n), rng.vec(n));
    let (ni, inc) = (n as c_int, 1 as c_int);
    let mut got = f64::NAN;
    eprintln!("demo: ddot n={n}");
    // SAFETY: vectors of n, unit strides.
    let secs = timed(|| got = unsafe { ddot_(&ni, x.as_ptr(), &inc, y.as_ptr(), &inc) });
    let path = tap.path("ddot");
    let want: f64 = x.iter().zip(&y).map(|(a, b)| a * b).sum();
    let bound: f64 = x.iter().zip(&y).map(|(a, b)| (a * b).abs()).sum();
    Step {
        routine: "ddot",
        shape: format!("n={n}"),
        path,
        secs,
        flops: 2.0 * n as f64,
        resid: resid(&[got], &[want], &[bound]),
        tol: 2.0 * n as f64 * f64::EPSILON,
    }
}

/// STRMV (lower, no-trans) through the Fortran ABI on *device* memory (a CUDA program's
/// `cudaMalloc` pointers): the planner sends it to the GPU. Checked against the same call on
/// host copies (the CPU engine). None without a GPU.
fn demo_gpu_strmv(n: usize, rng: &mut Rng, tap: &mut TraceTap) -> Option<Step> {
    use hyblas::gpu::DeviceBuffer;
    if !hyblas::gpu::available() {
        eprintln!("demo: no GPU, the device-memory step is skipped");
        return None;
    }
    let a: Vec<f32> = rng.vec(n * n).into_iter().map(|v| v as f32).collect();
    let x0: Vec<f32> = rng.vec(n).into_iter().map(|v| v as f32).collect();
    let (ni, inc, ch) = (n as c_int, 1 as c_int, |c: u8| c as c_char);
    let (l, no) = (ch(b'L'), ch(b'N'));
    let mut want = x0.clone();
    let abs_a: Vec<f32> = a.iter().map(|v| v.abs()).collect();
    let mut bound: Vec<f32> = x0.iter().map(|v| v.abs()).collect();
    // SAFETY: n x n column-major A, x of n, unit stride; host memory -> CPU engine.
    unsafe {
        strmv_(&l, &no, &no, &ni, a.as_ptr(), &ni, want.as_mut_ptr(), &inc, 1, 1, 1);
        strmv_(&l, &no, &no, &ni, abs_a.as_ptr(), &ni, bound.as_mut_ptr(), &inc, 1, 1, 1);
    }
    tap.drain();
    eprintln!("demo: strmv {n}x{n} on device memory");
    let (da, dx) = (DeviceBuffer::from_slice(&a).ok()?, DeviceBuffer::from_slice(&x0).ok()?);
    // SAFETY: device pointers of the sizes above; the call is synchronous.
    let call = || unsafe { strmv_(&l, &no, &no, &ni, da.ptr as *const f32, &ni, dx.ptr as *mut f32, &inc, 1, 1, 1) };
    // A first call never waits for a kernel (cuBLAS answers while the unit compiles in the
    // background); the demo times hyblas's kernel, so it waits for the unit here.
    let unit = hyblas::gpu::kernels::Unit::of(hyblas::gpu::kernels::Family::Trmv, 's');
    let t = Instant::now();
    if let Err(e) = hyblas::gpu::Runtime::get(0).and_then(|rt| rt.prepare(&[unit])) {
        eprintln!("demo: the {unit} kernels are not available ({e}); the step runs on cuBLAS");
    } else {
        eprintln!("demo: {unit} ready after {:.1} s", t.elapsed().as_secs_f64());
    }
    call(); // warm-up
    dx.write(&x0).ok()?;
    let t = Instant::now();
    call();
    let secs = t.elapsed().as_secs_f64();
    let path = tap.path("strmv");
    let got: Vec<f32> = dx.to_vec().ok()?;
    let f = |v: &[f32]| v.iter().map(|&x| x as f64).collect::<Vec<f64>>();
    Some(Step {
        routine: "strmv",
        shape: format!("{n}x{n} L,N,N device"),
        path,
        secs,
        flops: (n * n) as f64,
        resid: resid(&f(&got), &f(&want), &f(&bound)),
        tol: 2.0 * n as f64 * f32::EPSILON as f64,
    })
}

fn demo(quick: bool) -> ExitCode {
    let mut tap = TraceTap::start();
    let div = if quick { 4 } else { 1 };
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    eprintln!(
        "hyblas {} demo: {} threads, {} kernels",
        env!("CARGO_PKG_VERSION"),
        threads::nthreads(),
        simd::describe()
    );
    let mut steps = vec![
        demo_dgemm(2048 / div, &mut rng, &mut tap),
        demo_zgemm(1024 / div, &mut rng, &mut tap),
        demo_dgemv(4096 / div, &mut rng, &mut tap),
        demo_daxpy((1 << 22) / div, &mut rng, &mut tap),
        demo_ddot((1 << 22) / div, &mut rng, &mut tap),
    ];
    steps.extend(demo_gpu_strmv(8192 / div, &mut rng, &mut tap));
    tap.finish();
    println!("{:<7} {:<22} {:<26} {:>10} {:>9}  check", "routine", "shape", "path", "time", "GFLOP/s");
    for s in &steps {
        println!(
            "{:<7} {:<22} {:<26} {:>8.3}ms {:>9.2}  {} (residual {:.1e}, tolerance {:.1e})",
            s.routine,
            s.shape,
            s.path,
            s.secs * 1e3,
            s.flops / s.secs / 1e9,
            if s.ok() { "ok" } else { "FAILED" },
            s.resid,
            s.tol
        );
    }
    let failed: Vec<&str> = steps.iter().filter(|s| !s.ok()).map(|s| s.routine).collect();
    if failed.is_empty() {
        println!("all checks passed");
        ExitCode::SUCCESS
    } else {
        println!("checks FAILED: {}", failed.join(", "));
        ExitCode::FAILURE
    }
}
