//! Timing check, not a correctness test: DGEMV N and T against OpenBLAS (dlopen'ed) at a few
//! sizes with 1 and 2 threads. Run with
//! `cargo test --release --test level2_bench -- --ignored --nocapture`
//! (`L2_BENCH_SIZES=512,2048` picks sizes, `L2_BENCH_ROUTINES=dgemv,dsymv,dtrsv,dger` routines).

use std::ffi::{c_char, c_int, c_void};
use std::time::Instant;

extern "C" {
    fn dgemv_(
        t: *const c_char,
        m: *const i32,
        n: *const i32,
        al: *const f64,
        a: *const f64,
        lda: *const i32,
        x: *const f64,
        incx: *const i32,
        be: *const f64,
        y: *mut f64,
        incy: *const i32,
    );
}

type Gemv = unsafe extern "C" fn(
    *const c_char,
    *const i32,
    *const i32,
    *const f64,
    *const f64,
    *const i32,
    *const f64,
    *const i32,
    *const f64,
    *mut f64,
    *const i32,
);
type Symv = unsafe extern "C" fn(
    *const c_char,
    *const i32,
    *const f64,
    *const f64,
    *const i32,
    *const f64,
    *const i32,
    *const f64,
    *mut f64,
    *const i32,
);
type Trsv = unsafe extern "C" fn(
    *const c_char,
    *const c_char,
    *const c_char,
    *const i32,
    *const f64,
    *const i32,
    *mut f64,
    *const i32,
);
type Ger = unsafe extern "C" fn(
    *const i32,
    *const i32,
    *const f64,
    *const f64,
    *const i32,
    *const f64,
    *const i32,
    *mut f64,
    *const i32,
);

struct OpenBlas {
    handle: *mut c_void,
    set_threads: unsafe extern "C" fn(c_int),
}

impl OpenBlas {
    fn load() -> Option<Self> {
        let path = c"/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0";
        // SAFETY: dlopen/dlsym with valid C strings; RTLD_LOCAL keeps its symbols from
        // interposing ours.
        unsafe {
            let handle = libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL);
            if handle.is_null() {
                return None;
            }
            let st = libc::dlsym(handle, c"openblas_set_num_threads".as_ptr());
            if st.is_null() {
                return None;
            }
            Some(OpenBlas { handle, set_threads: std::mem::transmute::<*mut c_void, unsafe extern "C" fn(c_int)>(st) })
        }
    }
    fn sym(&self, name: &std::ffi::CStr) -> *mut c_void {
        // SAFETY: valid handle and C string.
        unsafe { libc::dlsym(self.handle, name.as_ptr()) }
    }
}

/// Seconds per call of `ours` and `theirs`: batches of at least ~20 ms, alternating between
/// the two so that both see the same machine load; the best batch of each counts.
fn time2(mut ours: impl FnMut(), mut theirs: impl FnMut()) -> (f64, f64) {
    // `L2_BENCH_ONLY=ours|theirs` times one side only (the other reads NaN): OpenBLAS's idle
    // threads spin for a long while after each call and would take a core from the other
    // library's threads when the two alternate.
    let only = std::env::var("L2_BENCH_ONLY").unwrap_or_default();
    if only == "ours" || only == "theirs" {
        let f: &mut dyn FnMut() = if only == "ours" { &mut ours } else { &mut theirs };
        f();
        let start = Instant::now();
        let mut reps = 0u64;
        while start.elapsed().as_secs_f64() < 0.02 {
            f();
            reps += 1;
        }
        let mut best = f64::INFINITY;
        for _ in 0..7 {
            let s = Instant::now();
            for _ in 0..reps {
                f();
            }
            best = best.min(s.elapsed().as_secs_f64() / reps as f64);
        }
        return if only == "ours" { (best, f64::NAN) } else { (f64::NAN, best) };
    }
    ours();
    theirs();
    let start = Instant::now();
    let mut reps = 0u64;
    while start.elapsed().as_secs_f64() < 0.02 {
        ours();
        reps += 1;
    }
    let (mut a, mut b) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..7 {
        let s = Instant::now();
        for _ in 0..reps {
            ours();
        }
        a = a.min(s.elapsed().as_secs_f64() / reps as f64);
        let s = Instant::now();
        for _ in 0..reps {
            theirs();
        }
        b = b.min(s.elapsed().as_secs_f64() / reps as f64);
    }
    (a, b)
}

#[test]
#[ignore]
fn bench_level2_vs_openblas() {
    let Some(ob) = OpenBlas::load() else {
        eprintln!("OpenBLAS not found; skipping");
        return;
    };
    let sizes: Vec<usize> = std::env::var("L2_BENCH_SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|v| v.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![64, 256, 512, 1024, 2048, 4096]);
    let routines = std::env::var("L2_BENCH_ROUTINES").unwrap_or_else(|_| "dgemv".into());
    // SAFETY: symbols of the reference signatures.
    let ob_gemv: Gemv = unsafe { std::mem::transmute::<*mut c_void, Gemv>(ob.sym(c"dgemv_")) };
    let ob_symv: Symv = unsafe { std::mem::transmute::<*mut c_void, Symv>(ob.sym(c"dsymv_")) };
    let ob_trsv: Trsv = unsafe { std::mem::transmute::<*mut c_void, Trsv>(ob.sym(c"dtrsv_")) };
    let ob_ger: Ger = unsafe { std::mem::transmute::<*mut c_void, Ger>(ob.sym(c"dger_")) };
    extern "C" {
        fn dsymv_(
            u: *const c_char,
            n: *const i32,
            al: *const f64,
            a: *const f64,
            lda: *const i32,
            x: *const f64,
            incx: *const i32,
            be: *const f64,
            y: *mut f64,
            incy: *const i32,
        );
        fn dtrsv_(
            u: *const c_char,
            t: *const c_char,
            d: *const c_char,
            n: *const i32,
            a: *const f64,
            lda: *const i32,
            x: *mut f64,
            incx: *const i32,
        );
        fn dger_(
            m: *const i32,
            n: *const i32,
            al: *const f64,
            x: *const f64,
            incx: *const i32,
            y: *const f64,
            incy: *const i32,
            a: *mut f64,
            lda: *const i32,
        );
    }
    println!("{:<6} {:>2} {:>5} {:>3} {:>10} {:>10} {:>6}", "op", "tr", "n", "thr", "hyblas GF", "openblas", "ratio");
    for threads in [1, 2] {
        // SAFETY: plain setters.
        unsafe {
            hyblas::cpu::threads::set_nthreads(threads as usize);
            (ob.set_threads)(threads);
        }
        for &n in &sizes {
            let ni = n as i32;
            let a: Vec<f64> = (0..n * n).map(|i| ((i * 7919) % 1000) as f64 / 1000.0 - 0.5).collect();
            let x: Vec<f64> = (0..n).map(|i| (i % 13) as f64 / 13.0).collect();
            let mut y = vec![0.0f64; n];
            let (one, beta, inc) = (1.0f64, 0.5f64, 1i32);
            let flops = 2.0 * (n * n) as f64;
            let report = |op: &str, tr: &str, flops: f64, ours: f64, theirs: f64| {
                println!(
                    "{op:<6} {tr:>2} {n:>5} {threads:>3} {:>10.2} {:>10.2} {:>6.2}",
                    flops / ours * 1e-9,
                    flops / theirs * 1e-9,
                    theirs / ours
                );
            };
            if routines.contains("dgemv") {
                for tr in [c"N", c"T"] {
                    let yp = y.as_mut_ptr();
                    // SAFETY: valid n x n problem.
                    let (ours, theirs) = time2(
                        || unsafe {
                            dgemv_(tr.as_ptr(), &ni, &ni, &one, a.as_ptr(), &ni, x.as_ptr(), &inc, &beta, yp, &inc)
                        },
                        || unsafe {
                            ob_gemv(tr.as_ptr(), &ni, &ni, &one, a.as_ptr(), &ni, x.as_ptr(), &inc, &beta, yp, &inc)
                        },
                    );
                    report("dgemv", tr.to_str().unwrap_or("?"), flops, ours, theirs);
                }
            }
            if routines.contains("sgemv") || routines.contains("zgemv") {
                other_gemv(&ob, n, threads, &routines);
            }
            if routines.contains("dsymv") {
                let u = c"U";
                let yp = y.as_mut_ptr();
                // SAFETY: valid n x n problem.
                let (ours, theirs) = time2(
                    || unsafe { dsymv_(u.as_ptr(), &ni, &one, a.as_ptr(), &ni, x.as_ptr(), &inc, &beta, yp, &inc) },
                    || unsafe { ob_symv(u.as_ptr(), &ni, &one, a.as_ptr(), &ni, x.as_ptr(), &inc, &beta, yp, &inc) },
                );
                report("dsymv", "U", flops, ours, theirs);
            }
            if routines.contains("dtrsv") {
                // A well-conditioned triangle: unit diagonal, small off-diagonal entries.
                let t: Vec<f64> = a.iter().map(|v| v / n as f64).collect();
                for (tr, ul) in [(c"N", c"U"), (c"T", c"U"), (c"N", c"L"), (c"T", c"L")] {
                    let mut xx = x.clone();
                    let xp = xx.as_mut_ptr();
                    // SAFETY: valid n x n problem.
                    let (ours, theirs) = time2(
                        || unsafe { dtrsv_(ul.as_ptr(), tr.as_ptr(), c"U".as_ptr(), &ni, t.as_ptr(), &ni, xp, &inc) },
                        || unsafe { ob_trsv(ul.as_ptr(), tr.as_ptr(), c"U".as_ptr(), &ni, t.as_ptr(), &ni, xp, &inc) },
                    );
                    let name = format!("{}{}", ul.to_str().unwrap_or("?"), tr.to_str().unwrap_or("?"));
                    report("dtrsv", &name, flops / 2.0, ours, theirs);
                }
            }
            if routines.contains("dger") {
                let mut aa = a.clone();
                let ap = aa.as_mut_ptr();
                let tiny = 1e-12;
                // SAFETY: valid n x n problem.
                let (ours, theirs) = time2(
                    || unsafe { dger_(&ni, &ni, &tiny, x.as_ptr(), &inc, x.as_ptr(), &inc, ap, &ni) },
                    || unsafe { ob_ger(&ni, &ni, &tiny, x.as_ptr(), &inc, x.as_ptr(), &inc, ap, &ni) },
                );
                report("dger", "", flops, ours, theirs);
            }
        }
    }
}

/// Overhead of one parallel region of the engine's pool (for choosing thresholds).
#[test]
#[ignore]
fn bench_pool_overhead() {
    hyblas::cpu::threads::set_nthreads(2);
    let (t, e) = time2(
        || {
            hyblas::cpu::threads::for_each_part(2, 2, |p| {
                std::hint::black_box(p);
            })
        },
        || {
            hyblas::cpu::threads::for_each_part_inline(2, 2, |p| {
                std::hint::black_box(p);
            })
        },
    );
    println!("empty 2-part region: for_each_part {:.2} us, for_each_part_inline {:.2} us", t * 1e6, e * 1e6);
}

/// Parallel-region overhead of rayon's install versus running part 0 on the caller.
#[test]
#[ignore]
fn bench_region_styles() {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().expect("pool");
    let (a, b) = time2(
        || {
            pool.install(|| {
                use rayon::prelude::*;
                (0..2usize).into_par_iter().for_each(|p| {
                    std::hint::black_box(p);
                })
            })
        },
        || {
            pool.in_place_scope(|s| {
                s.spawn(|_| {
                    std::hint::black_box(1);
                });
                std::hint::black_box(0);
            })
        },
    );
    println!("install+par_iter: {:.2} us, in_place_scope: {:.2} us", a * 1e6, b * 1e6);
}

/// SGEMV and ZGEMV, same shapes as the DGEMV runs (GF counts real flops: 8n^2 for complex).
fn other_gemv(ob: &OpenBlas, n: usize, threads: c_int, routines: &str) {
    use hyblas::types::C64;
    type G<T> = unsafe extern "C" fn(
        *const c_char,
        *const i32,
        *const i32,
        *const T,
        *const T,
        *const i32,
        *const T,
        *const i32,
        *const T,
        *mut T,
        *const i32,
    );
    extern "C" {
        fn sgemv_(
            t: *const c_char,
            m: *const i32,
            n: *const i32,
            al: *const f32,
            a: *const f32,
            lda: *const i32,
            x: *const f32,
            incx: *const i32,
            be: *const f32,
            y: *mut f32,
            incy: *const i32,
        );
        fn zgemv_(
            t: *const c_char,
            m: *const i32,
            n: *const i32,
            al: *const C64,
            a: *const C64,
            lda: *const i32,
            x: *const C64,
            incx: *const i32,
            be: *const C64,
            y: *mut C64,
            incy: *const i32,
        );
    }
    let ni = n as i32;
    let inc = 1i32;
    if routines.contains("sgemv") {
        // SAFETY: symbol of the reference signature.
        let theirs_f: G<f32> = unsafe { std::mem::transmute::<*mut c_void, G<f32>>(ob.sym(c"sgemv_")) };
        let a: Vec<f32> = (0..n * n).map(|i| ((i * 7919) % 1000) as f32 / 1000.0 - 0.5).collect();
        let x: Vec<f32> = (0..n).map(|i| (i % 13) as f32 / 13.0).collect();
        let mut y = vec![0.0f32; n];
        let yp = y.as_mut_ptr();
        let (one, beta) = (1.0f32, 0.5f32);
        for tr in [c"N", c"T"] {
            // SAFETY: valid n x n problem.
            let (ours, theirs) = time2(
                || unsafe { sgemv_(tr.as_ptr(), &ni, &ni, &one, a.as_ptr(), &ni, x.as_ptr(), &inc, &beta, yp, &inc) },
                || unsafe { theirs_f(tr.as_ptr(), &ni, &ni, &one, a.as_ptr(), &ni, x.as_ptr(), &inc, &beta, yp, &inc) },
            );
            let f = 2.0 * (n * n) as f64;
            println!(
                "sgemv  {:>2} {n:>5} {threads:>3} {:>10.2} {:>10.2} {:>6.2}",
                tr.to_str().unwrap_or("?"),
                f / ours * 1e-9,
                f / theirs * 1e-9,
                theirs / ours
            );
        }
    }
    if routines.contains("zgemv") {
        // SAFETY: symbol of the reference signature.
        let theirs_f: G<C64> = unsafe { std::mem::transmute::<*mut c_void, G<C64>>(ob.sym(c"zgemv_")) };
        let a: Vec<C64> = (0..n * n).map(|i| C64::new(((i * 7919) % 1000) as f64 / 1000.0 - 0.5, 0.25)).collect();
        let x: Vec<C64> = (0..n).map(|i| C64::new((i % 13) as f64 / 13.0, -0.5)).collect();
        let mut y = vec![C64::new(0.0, 0.0); n];
        let yp = y.as_mut_ptr();
        let (one, beta) = (C64::new(1.0, 0.0), C64::new(0.5, 0.0));
        for tr in [c"N", c"T", c"C"] {
            // SAFETY: valid n x n problem.
            let (ours, theirs) = time2(
                || unsafe { zgemv_(tr.as_ptr(), &ni, &ni, &one, a.as_ptr(), &ni, x.as_ptr(), &inc, &beta, yp, &inc) },
                || unsafe { theirs_f(tr.as_ptr(), &ni, &ni, &one, a.as_ptr(), &ni, x.as_ptr(), &inc, &beta, yp, &inc) },
            );
            let f = 8.0 * (n * n) as f64;
            println!(
                "zgemv  {:>2} {n:>5} {threads:>3} {:>10.2} {:>10.2} {:>6.2}",
                tr.to_str().unwrap_or("?"),
                f / ours * 1e-9,
                f / theirs * 1e-9,
                theirs / ours
            );
        }
    }
}

/// Does a two-part region with ~200 us of work per part run in parallel?
#[test]
#[ignore]
fn bench_region_parallel() {
    fn spin(us: u64) {
        let t = Instant::now();
        while t.elapsed().as_micros() < us as u128 {
            std::hint::spin_loop();
        }
    }
    hyblas::cpu::threads::set_nthreads(2);
    for _ in 0..3 {
        let t = Instant::now();
        for _ in 0..100 {
            hyblas::cpu::threads::for_each_part(2, 2, |_| spin(200));
        }
        println!("2 parts x 200us on 2 threads: {:.1} us per region", t.elapsed().as_secs_f64() * 1e4);
    }
}

/// DGEMV alone, 1 vs 2 threads (`L2_BENCH_SIZES`, trans from `L2_BENCH_TRANS`).
#[test]
#[ignore]
fn bench_dgemv_scaling() {
    let sizes: Vec<usize> = std::env::var("L2_BENCH_SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|v| v.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![1024, 2048]);
    let tr = if std::env::var("L2_BENCH_TRANS").as_deref() == Ok("N") { c"N" } else { c"T" };
    for &n in &sizes {
        let ni = n as i32;
        let a: Vec<f64> = (0..n * n).map(|i| ((i * 7919) % 1000) as f64 / 1000.0 - 0.5).collect();
        let x: Vec<f64> = (0..n).map(|i| (i % 13) as f64 / 13.0).collect();
        let mut y = vec![0.0f64; n];
        let yp = y.as_mut_ptr();
        let (one, beta, inc) = (1.0f64, 0.5f64, 1i32);
        let call = |t: usize| {
            hyblas::cpu::threads::set_nthreads(t);
            // SAFETY: valid n x n problem.
            unsafe { dgemv_(tr.as_ptr(), &ni, &ni, &one, a.as_ptr(), &ni, x.as_ptr(), &inc, &beta, yp, &inc) }
        };
        let (t1, t2) = time2(|| call(1), || call(2));
        println!(
            "dgemv {} n={n}: 1 thread {:.1} us, 2 threads {:.1} us",
            tr.to_str().unwrap_or("?"),
            t1 * 1e6,
            t2 * 1e6
        );
    }
}

/// Cost of asking for the thread count (as every threaded call does).
#[test]
#[ignore]
fn bench_nthreads_cost() {
    let (a, b) = time2(
        || {
            std::hint::black_box(hyblas::cpu::threads::nthreads());
        },
        || {
            std::hint::black_box(std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1));
        },
    );
    println!("nthreads(): {:.3} us, available_parallelism(): {:.3} us", a * 1e6, b * 1e6);
}
