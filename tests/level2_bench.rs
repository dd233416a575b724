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
    let (t, _) = time2(
        || {
            hyblas::cpu::threads::for_each_part(2, 2, |p| {
                std::hint::black_box(p);
            })
        },
        || {},
    );
    println!("for_each_part(2 threads, empty): {:.2} us", t * 1e6);
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
