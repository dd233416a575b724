//! The `hyblas` command: `info` (what the library sees and would do on this machine) and
//! `demo` (a real workload through the exported C ABI, traced and checked).
//!
//! This binary links the hyblas rlib, so the `extern "C"` declarations below resolve to the
//! very symbols the shared library exports: the demo goes through the same argument checks,
//! planner and engine as any C or Fortran caller.

#[path = "hyblas/demo.rs"]
mod demo;

use demo::demo;
use hyblas::config::{self, DeviceChoice, TraceTarget};
use hyblas::cpu::{simd, threads};
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
  tune strassen measure only the Strassen-Winograd model's numbers (cuBLAS SGEMM/DGEMM rates
                at the sub-product sizes, the addition pass's bandwidth) and replace the
                `strassen` lines of the recipe file
  compile [--arch sm_XY[,sm_XY...]] [--all] [--if-gpu] [UNIT|FAMILY ...]
                compile GPU kernel units with NVRTC into the kernel cache ahead of time, a
                line per unit: by default every unit calls can reach on the present GPU (or on
                each architecture named: no GPU needed; a shared HYBLAS_CACHE_DIR serves a
                cluster), --all every unit, else the units (level1_d, splitk_d_skm16) or
                families (level1 gemv trmv splitk strassen) named. Without it a program's first call
                of a kind runs on cuBLAS while its unit compiles in the background.
                --if-gpu: compile for the present GPU, or say why not and succeed (install).
                HYBLAS_KERNEL_DEFINES and HYBLAS_CACHE_DIR apply as at run time
  demo [--quick]
                run DGEMM (n=2048), ZGEMM (n=1024, via CBLAS), DGEMV (n=4096), DAXPY and DDOT
                through the C ABI with tracing on, and with a GPU STRMV (n=8192) on device
                memory through the Fortran ABI; check every result, print a table
                (--quick: sizes divided by 4). The same calls also run on the BLAS a
                program gets without hyblas (libblas.so.3 as the loader finds it, or
                HYBLAS_DEMO_PEER=path; none skips it) and the device step on the real
                cuBLAS: the table shows both rates and the ratio. Exits non-zero if a
                check of hyblas's results fails.
  help, --help  this text
  --version     the version

environment (also accepted as KEY=value lines in the file named by HYBLAS_CONFIG):
  HYBLAS_NUM_THREADS   threads of the CPU engine (else OPENBLAS_NUM_THREADS, OMP_NUM_THREADS, cores)
  HYBLAS_TRACE         stderr or a file path: one line per BLAS call (engine, threads, time)
  HYBLAS_DEVICE        auto | cpu | gpu | split
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
        Some("tune") if args.get(1).map(String::as_str) == Some("strassen") => tune_strassen_cmd(),
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
    replace_lines(path, "offload", &lines)?;
    hyblas::plan::offload::reload();
    println!("offload rates written to {} in {:.1} s", path.display(), start.elapsed().as_secs_f64());
    Ok(())
}

/// Print `lines` and put them in the recipe file at `path` in place of its earlier `<prefix> `
/// and `# <prefix>` lines, keeping every other line.
fn replace_lines(path: &std::path::Path, prefix: &str, lines: &[String]) -> Result<(), String> {
    for l in lines {
        println!("  {l}");
    }
    let old = std::fs::read_to_string(path).unwrap_or_default();
    let (p, c) = (format!("{prefix} "), format!("# {prefix}"));
    let mut text: String =
        old.lines().filter(|l| !(l.starts_with(&p) || l.starts_with(&c))).map(|l| format!("{l}\n")).collect();
    for l in lines {
        text += l;
        text.push('\n');
    }
    path.parent()
        .map(std::fs::create_dir_all)
        .unwrap_or(Ok(()))
        .and_then(|_| std::fs::write(path, text))
        .map_err(|e| format!("writing {}: {e}", path.display()))
}

/// `hyblas tune strassen`: the Strassen model's numbers alone (cuBLAS's GEMM rates at the
/// sub-product sizes and the addition bandwidth; `gpu::strassen::calibrate`).
fn tune_strassen_cmd() -> ExitCode {
    let rt = match hyblas::gpu::Runtime::get(0).and_then(|rt| rt.bind().map(|_| rt)) {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("hyblas tune strassen: {e}");
            return ExitCode::from(1);
        }
    };
    let start = Instant::now();
    println!(
        "Strassen model: cuBLAS SGEMM and DGEMM at n = {:?}, the addition pass ...",
        hyblas::gpu::strassen::TUNE_SIZES
    );
    let path = hyblas::gpu::tune::recipe_path(&rt.props);
    let done = hyblas::gpu::strassen::calibrate(rt)
        .map_err(|e| e.to_string())
        .and_then(|lines| replace_lines(&path, "strassen", &lines));
    match done {
        Ok(()) => {
            hyblas::gpu::strassen::reload(rt);
            println!("Strassen numbers written to {} in {:.1} s", path.display(), start.elapsed().as_secs_f64());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("hyblas tune strassen: {e}");
            ExitCode::from(1)
        }
    }
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
