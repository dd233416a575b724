//! No call waits for the kernel compiler (`gpu::loader`): in a fresh process with an empty
//! kernel cache, the first split-k-shaped DGEMM, the first SGEMV and STRMV (cuBLAS layer) and
//! the first DAXPY on device memory (Fortran ABI) are answered by the real cuBLAS while their
//! units compile in the background (trace: `route=vendor (kernel compiling ...)`), with correct
//! results; later calls run hyblas's kernels once their units are loaded. A second process on
//! the filled cache gets there again without compiling; a forced route waits for the kernel.
//!
//! Each case runs in a child process (the cache and the loaded modules are per process), on
//! fresh random data, outputs restored before every call and checked against a CPU reference
//! computed once. Times are printed, not asserted (bench/firstcall times first calls against
//! plain cuBLAS). Needs a GPU, NVRTC and a real cuBLAS; SKIPPED otherwise.

mod common;
use common::*;
#[path = "common/cublas.rs"]
mod harness;
use harness::*;
use hyblas::abi::cublas::{Handle, Status};
use std::ffi::c_int;
use std::io::{Read, Seek, SeekFrom};
use std::time::{Duration, Instant};

extern "C" {
    fn cublasDgemm_v2(
        h: Handle,
        ta: c_int,
        tb: c_int,
        m: c_int,
        n: c_int,
        k: c_int,
        al: *const f64,
        a: *const f64,
        lda: c_int,
        b: *const f64,
        ldb: c_int,
        be: *const f64,
        c: *mut f64,
        ldc: c_int,
    ) -> Status;
    fn cublasSgemv_v2(
        h: Handle,
        t: c_int,
        m: c_int,
        n: c_int,
        al: *const f32,
        a: *const f32,
        lda: c_int,
        x: *const f32,
        incx: c_int,
        be: *const f32,
        y: *mut f32,
        incy: c_int,
    ) -> Status;
    fn cublasStrmv_v2(
        h: Handle,
        uplo: c_int,
        t: c_int,
        diag: c_int,
        n: c_int,
        a: *const f32,
        lda: c_int,
        x: *mut f32,
        incx: c_int,
    ) -> Status;
    fn daxpy_(n: *const i32, alpha: *const f64, x: *const f64, incx: *const i32, y: *mut f64, incy: *const i32);
}

const CHILD: &str = "HYBLAS_LOADER_TEST_CHILD";
const DEADLINE: Duration = Duration::from_secs(120);

/// The lines a trace file gained since the last look.
struct Tail {
    file: std::fs::File,
    pos: u64,
}

impl Tail {
    fn new(path: &str) -> Tail {
        let file = std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(false).open(path).unwrap();
        let pos = file.metadata().unwrap().len();
        Tail { file, pos }
    }
    fn line_of(&mut self, symbol: &str) -> String {
        let mut text = String::new();
        self.file.seek(SeekFrom::Start(self.pos)).unwrap();
        self.pos += self.file.read_to_string(&mut text).unwrap() as u64;
        text.lines().rfind(|l| l.contains(&format!(" {symbol} "))).unwrap_or_default().to_string()
    }
}

/// One kind of call: run it (outputs restored first), check it, name its trace symbol.
struct Kind<'a> {
    name: &'static str,
    symbol: &'static str,
    call: Box<dyn FnMut() + 'a>,
    check: Box<dyn Fn() -> Result<(), String> + 'a>,
}

/// First call, then calls until one runs on hyblas: the routes seen and the times.
fn drive(kind: &mut Kind, tail: &mut Tail, sync: &dyn Fn(), forced: bool) {
    let t0 = Instant::now();
    (kind.call)();
    sync();
    let first = t0.elapsed();
    (kind.check)().unwrap_or_else(|e| panic!("{}: first call: {e}", kind.name));
    let line = tail.line_of(kind.symbol);
    println!("FIRST {} {:.2} ms: {line}", kind.name, first.as_secs_f64() * 1e3);
    if forced {
        assert!(line.contains(" route=hyblas "), "{}: a forced route waits for its kernel: {line}", kind.name);
        return;
    }
    assert!(
        line.contains("route=vendor (kernel compiling") || line.contains("route=vendor (kernel loading"),
        "{}: {line}",
        kind.name
    );
    let mut calls = 1;
    loop {
        std::thread::sleep(Duration::from_millis(20));
        (kind.call)();
        sync();
        calls += 1;
        (kind.check)().unwrap_or_else(|e| panic!("{}: call {calls}: {e}", kind.name));
        let line = tail.line_of(kind.symbol);
        if line.contains(" route=hyblas ") {
            println!("READY {} after {:.2} s, {calls} calls: {line}", kind.name, t0.elapsed().as_secs_f64());
            return;
        }
        assert!(
            line.contains("route=vendor (kernel"),
            "{}: call {calls} neither waited nor ran on hyblas: {line}",
            kind.name
        );
        assert!(t0.elapsed() < DEADLINE, "{}: its kernel was not ready after {DEADLINE:?}", kind.name);
    }
}

/// A check's verdict on relative error `e` against `tol`.
fn within(e: f64, tol: f64) -> Result<(), String> {
    if e < tol {
        Ok(())
    } else {
        Err(format!("relative error {e:e} over {tol:e}"))
    }
}

fn max_rel(got: &[f64], want: &[f64], bound: &[f64]) -> f64 {
    got.iter().zip(want).zip(bound).map(|((g, w), b)| (g - w).abs() / b.max(f64::MIN_POSITIVE)).fold(0.0, f64::max)
}

#[test]
fn loader_child() {
    let Ok(kinds) = std::env::var(CHILD) else { return };
    let Some(s) = session("loader_child") else {
        println!("CHILD SKIPPED");
        return;
    };
    s.pointer_mode(false);
    let mut tail = Tail::new(&std::env::var("HYBLAS_TRACE").expect("HYBLAS_TRACE"));
    let forced = std::env::var("HYBLAS_CUBLAS").as_deref() == Ok("hyblas");
    let mut rng = Rng::new(43);
    let sync = || s.sync();

    // DGEMM C(16x16) = 1.5 A^T B + 0.5 C, k = 2^20: split-k's shape (unit splitk_d_skm16).
    let (m, k) = (16usize, 1usize << 20);
    let (a, b, c0): (Vec<f64>, Vec<f64>, Vec<f64>) = (rng.vec(k * m), rng.vec(k * m), rng.vec(m * m));
    let (mut want_c, mut bound_c) = (vec![0.0; m * m], vec![0.0; m * m]);
    for j in 0..m {
        for i in 0..m {
            let (mut sum, mut abs) = (0.0, 0.0);
            for p in 0..k {
                sum += a[i * k + p] * b[j * k + p];
                abs += (a[i * k + p] * b[j * k + p]).abs();
            }
            want_c[i + j * m] = 1.5 * sum + 0.5 * c0[i + j * m];
            bound_c[i + j * m] = 1.5 * abs + 0.5 * c0[i + j * m].abs();
        }
    }
    let (da, db, dc) = (up(&a), up(&b), up(&c0));
    let dgemm = Kind {
        name: "dgemm",
        symbol: "cublasDgemm_v2",
        call: Box::new(|| {
            dc.write(&c0).unwrap();
            let (al, be) = (1.5f64, 0.5f64);
            let (mi, ki) = (m as c_int, k as c_int);
            let st = unsafe { cublasDgemm_v2(s.h, 1, 0, mi, mi, ki, &al, dp(&da), ki, dp(&db), ki, &be, dp(&dc), mi) };
            assert_eq!(st, OK);
        }),
        check: Box::new(|| {
            let e = max_rel(&down::<f64>(&dc), &want_c, &bound_c);
            within(e, 1e-12)
        }),
    };

    // SGEMV y = 0.75 A x - 0.5 y, 8192 x 8192 (unit gemv_s; the calibrated table routes it to
    // hyblas).
    let n = 8192usize;
    let (ga, gx, gy0): (Vec<f32>, Vec<f32>, Vec<f32>) = (rng.vec(n * n), rng.vec(n), rng.vec(n));
    let (mut want_y, mut bound_y) = (vec![0.0f64; n], vec![0.0f64; n]);
    for j in 0..n {
        for i in 0..n {
            want_y[i] += ga[i + j * n] as f64 * gx[j] as f64;
            bound_y[i] += (ga[i + j * n] as f64 * gx[j] as f64).abs();
        }
    }
    for i in 0..n {
        want_y[i] = 0.75 * want_y[i] - 0.5 * gy0[i] as f64;
        bound_y[i] = 0.75 * bound_y[i] + 0.5 * (gy0[i] as f64).abs();
    }
    let (dga, dgx, dgy) = (up(&ga), up(&gx), up(&gy0));
    let sgemv = Kind {
        name: "sgemv",
        symbol: "cublasSgemv_v2",
        call: Box::new(|| {
            dgy.write(&gy0).unwrap();
            let (al, be, ni) = (0.75f32, -0.5f32, n as c_int);
            let st = unsafe { cublasSgemv_v2(s.h, 0, ni, ni, &al, dp(&dga), ni, dp(&dgx), 1, &be, dp(&dgy), 1) };
            assert_eq!(st, OK);
        }),
        check: Box::new(|| {
            let got: Vec<f64> = down::<f32>(&dgy).iter().map(|&v| v as f64).collect();
            let e = max_rel(&got, &want_y, &bound_y);
            within(e, 2e-5)
        }),
    };

    // STRMV x := A x, upper, non-unit, n = 8192; the strict lower part is NaN (never read).
    let mut ta: Vec<f32> = rng.vec(n * n);
    for j in 0..n {
        for i in j + 1..n {
            ta[i + j * n] = f32::NAN;
        }
    }
    let tx0: Vec<f32> = rng.vec(n);
    let (mut want_x, mut bound_x) = (vec![0.0f64; n], vec![0.0f64; n]);
    for j in 0..n {
        for i in 0..=j {
            want_x[i] += ta[i + j * n] as f64 * tx0[j] as f64;
            bound_x[i] += (ta[i + j * n] as f64 * tx0[j] as f64).abs();
        }
    }
    let (dta, dtx) = (up(&ta), up(&tx0));
    let strmv = Kind {
        name: "strmv",
        symbol: "cublasStrmv_v2",
        call: Box::new(|| {
            dtx.write(&tx0).unwrap();
            let st = unsafe { cublasStrmv_v2(s.h, 1, 0, 0, n as c_int, dp(&dta), n as c_int, dp(&dtx), 1) };
            assert_eq!(st, OK);
        }),
        check: Box::new(|| {
            let got: Vec<f64> = down::<f32>(&dtx).iter().map(|&v| v as f64).collect();
            let e = max_rel(&got, &want_x, &bound_x);
            within(e, 2e-5)
        }),
    };

    // DAXPY on device memory through the Fortran ABI (hyblas's own stream; unit level1_d).
    let an = 1usize << 22;
    let (ax, ay0): (Vec<f64>, Vec<f64>) = (rng.vec(an), rng.vec(an));
    let want_a: Vec<f64> = ax.iter().zip(&ay0).map(|(x, y)| 0.25 * x + y).collect();
    let bound_a: Vec<f64> = ax.iter().zip(&ay0).map(|(x, y)| (0.25 * x).abs() + y.abs()).collect();
    let (dax, day) = (up(&ax), up(&ay0));
    let daxpy = Kind {
        name: "daxpy",
        symbol: "daxpy",
        call: Box::new(|| {
            day.write(&ay0).unwrap();
            let (ni, al, one) = (an as i32, 0.25f64, 1i32);
            unsafe { daxpy_(&ni, &al, dp(&dax), &one, dp(&day), &one) };
        }),
        check: Box::new(|| {
            let e = max_rel(&down::<f64>(&day), &want_a, &bound_a);
            within(e, 1e-15)
        }),
    };
    s.fence();
    let mut all = [dgemm, sgemv, strmv, daxpy];
    for kind in all.iter_mut().filter(|kd| kinds.split(',').any(|w| w == kd.name)) {
        drive(kind, &mut tail, &sync, forced);
    }
    println!("CHILD OK");
}

/// Run the child with `kinds` on cache `dir` (extra environment `env`); its output.
fn child(kinds: &str, dir: &std::path::Path, env: &[(&str, &str)]) -> String {
    let trace = dir.with_extension(format!("trace-{}.log", std::process::id()));
    let _ = std::fs::remove_file(&trace);
    let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
    cmd.args(["--exact", "loader_child", "--nocapture", "--test-threads=1"])
        .env(CHILD, kinds)
        .env("HYBLAS_CACHE_DIR", dir)
        .env("HYBLAS_TRACE", &trace)
        .env_remove("HYBLAS_COMPILE")
        .env_remove("HYBLAS_CUBLAS");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run the child");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "child ({kinds}) failed ({:?}):\n{text}", out.status);
    let _ = std::fs::remove_file(&trace);
    text
}

#[test]
fn first_calls_take_cublas_while_their_kernels_compile() {
    if std::env::var_os(CHILD).is_some()
        || gpu_with_cublas("first_calls_take_cublas_while_their_kernels_compile").is_none()
    {
        return;
    }
    let dir = std::env::temp_dir().join(format!("hyblas-loader-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for (what, env) in [("empty cache", &[][..]), ("filled cache", &[][..])] {
        let text = child("dgemm,sgemv,strmv,daxpy", &dir, env);
        if text.contains("CHILD SKIPPED") {
            println!("SKIPPED first_calls_take_cublas_while_their_kernels_compile: {text}");
            return;
        }
        assert!(text.contains("CHILD OK"), "{text}");
        println!("-- {what}:");
        text.lines().filter(|l| l.starts_with("FIRST") || l.starts_with("READY")).for_each(|l| println!("{l}"));
        assert_eq!(text.matches("READY ").count(), 4, "{text}");
    }
    // A forced route waits for its kernel, on a cache of its own (its first call compiles).
    let forced = dir.with_extension("forced");
    let _ = std::fs::remove_dir_all(&forced);
    let text = child("dgemm,strmv", &forced, &[("HYBLAS_CUBLAS", "hyblas")]);
    println!("-- forced:");
    text.lines().filter(|l| l.starts_with("FIRST")).for_each(|l| println!("{l}"));
    assert_eq!(text.matches("FIRST ").count(), 2, "{text}");
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&forced);
}
