//! TRSM/TRMM timing against OpenBLAS (loaded with dlopen, so both live in one process).
//!
//! `cargo run --release --example bench_tri -- [N | MxN ..] [--threads 1,2] [--reps R] [--prec d|s|c|z]
//! [--cases sLUNN,mRLTU,..]` (defaults: 512 1024 2048, threads 1 and 2, precision d, the
//! cases below; a case is s(olve)/m(ultiply) then side, uplo, trans, diag). Prints GFLOP/s of both (complex
//! flops counted as four real ones) and the ratio hyblas/OpenBLAS (> 1: hyblas faster). Each
//! timing is the best of several runs, alternating the two libraries to share out machine
//! noise.

use std::ffi::CString;
use std::os::raw::{c_char, c_int, c_void};
use std::time::Instant;

/// `?trsm_` / `?trmm_` with the element type erased.
type Tr = unsafe extern "C" fn(
    *const c_char,
    *const c_char,
    *const c_char,
    *const c_char,
    *const c_int,
    *const c_int,
    *const c_void,
    *const c_void,
    *const c_int,
    *mut c_void,
    *const c_int,
);

macro_rules! hy {
    ($($name:ident),*) => {
        extern "C" {
            $(fn $name(
                side: *const c_char,
                uplo: *const c_char,
                transa: *const c_char,
                diag: *const c_char,
                m: *const c_int,
                n: *const c_int,
                alpha: *const c_void,
                a: *const c_void,
                lda: *const c_int,
                b: *mut c_void,
                ldb: *const c_int,
            );)*
        }
    };
}
hy!(strsm_, strmm_, dtrsm_, dtrmm_, ctrsm_, ctrmm_, ztrsm_, ztrmm_);

/// The OpenBLAS to compare with; `HYBLAS_BENCH_OPENBLAS` overrides the path.
const OPENBLAS: &str = "/usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3";

unsafe fn sym(h: *mut c_void, name: &str) -> *mut c_void {
    let c = CString::new(name).expect("symbol name");
    let p = libc::dlsym(h, c.as_ptr());
    assert!(!p.is_null(), "{name} not found in OpenBLAS");
    p
}

/// Element storage of one precision: f32 or f64 components, 1 (real) or 2 (complex) each.
trait Comp: Copy + Default {
    fn from(v: f64) -> Self;
}
impl Comp for f32 {
    fn from(v: f64) -> Self {
        v as f32
    }
}
impl Comp for f64 {
    fn from(v: f64) -> Self {
        v
    }
}

struct Lib {
    trsm: Tr,
    trmm: Tr,
}

#[allow(clippy::too_many_arguments)]
fn bench<E: Comp>(
    comps: usize,
    ob: &Lib,
    hy: &Lib,
    ob_set: unsafe extern "C" fn(c_int),
    sizes: &[(usize, usize)],
    threads: &[usize],
    reps: usize,
    prec: char,
    cases: &[String],
) {
    println!("{:>3} {:>11} {:14} {:>9} {:>9} {:>6}", "th", "m x n", "case", "OB GF/s", "hy GF/s", "ratio");
    for &th in threads {
        // SAFETY: thread-count setters of both libraries.
        unsafe { ob_set(th as c_int) };
        hyblas::abi::native::hyblas_set_num_threads(th as c_int);
        for &(m, n) in sizes {
            let big = m.max(n);
            let reps = if reps > 0 {
                reps
            } else if big <= 512 {
                12
            } else if big <= 1024 {
                5
            } else {
                3
            };
            // A well-conditioned triangle: small entries, dominant diagonal.
            let mut a: Vec<E> =
                (0..big * big * comps).map(|i| E::from(((i * 7919 + 13) % 1000) as f64 / 1000.0 - 0.5)).collect();
            for j in 0..big {
                a[(j * big + j) * comps] = E::from(2.0 + (j % 7) as f64);
            }
            let b0: Vec<E> =
                (0..m * n * comps).map(|i| E::from(((i * 104729 + 7) % 997) as f64 / 997.0 - 0.5)).collect();
            let mut b = b0.clone();
            let (mi, ni, lda) = (m as c_int, n as c_int, big as c_int);
            let mut alpha = vec![E::default(); comps];
            alpha[0] = E::from(1.0);
            for case in cases {
                // "sLUNN" / "mRLTU": s(olve) or m(ultiply), then side, uplo, trans, diag.
                let o: Vec<String> = case.chars().map(|c| c.to_string()).collect();
                let (solve, side, uplo, trans, diag) = (o[0] == "s", &o[1], &o[2], &o[3], &o[4]);
                let name = if solve { "trsm" } else { "trmm" };
                let k = if side.as_str() == "L" { m } else { n };
                let flops = (k * k) as f64 * (m * n / k) as f64 * if comps == 2 { 4.0 } else { 1.0 };
                let s = CString::new(side.as_str()).expect("opt");
                let u = CString::new(uplo.as_str()).expect("opt");
                let t = CString::new(trans.as_str()).expect("opt");
                let d = CString::new(diag.as_str()).expect("opt");
                let fs = if solve { [ob.trsm, hy.trsm] } else { [ob.trmm, hy.trmm] };
                let mut best = [f64::MAX; 2];
                for _ in 0..reps {
                    for (k, f) in fs.into_iter().enumerate() {
                        b.copy_from_slice(&b0);
                        let t0 = Instant::now();
                        // SAFETY: dimensions match the buffers.
                        unsafe {
                            f(
                                s.as_ptr(),
                                u.as_ptr(),
                                t.as_ptr(),
                                d.as_ptr(),
                                &mi,
                                &ni,
                                alpha.as_ptr() as *const c_void,
                                a.as_ptr() as *const c_void,
                                &lda,
                                b.as_mut_ptr() as *mut c_void,
                                &mi,
                            )
                        };
                        best[k] = best[k].min(t0.elapsed().as_secs_f64());
                    }
                }
                let label = format!("{prec}{name} {side}{uplo}{trans}{diag}");
                println!(
                    "{th:>3} {:>11} {label:14} {:>9.1} {:>9.1} {:>6.2}",
                    format!("{m}x{n}"),
                    flops / best[0] * 1e-9,
                    flops / best[1] * 1e-9,
                    best[0] / best[1]
                );
            }
        }
    }
}

fn main() {
    let mut sizes = Vec::new();
    let mut threads = vec![1, 2];
    let mut reps = 0;
    let mut prec = 'd';
    let mut cases: Vec<String> = ["sLUNN", "sLLNN", "sRUNN", "sLLTN", "mLUNN", "mLLNN", "mRUNN", "mLLTN"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--threads" => {
                threads = args.next().unwrap_or_default().split(',').filter_map(|s| s.parse().ok()).collect()
            }
            "--reps" => reps = args.next().and_then(|s| s.parse().ok()).unwrap_or(0),
            "--prec" => prec = args.next().and_then(|s| s.chars().next()).unwrap_or('d'),
            "--cases" => {
                cases = args.next().unwrap_or_default().split(',').filter(|c| c.len() == 5).map(String::from).collect()
            }
            s => {
                // "N" (square) or "MxN"
                let mut it = s.split('x').filter_map(|v| v.parse::<usize>().ok());
                if let Some(m) = it.next() {
                    sizes.push((m, it.next().unwrap_or(m)));
                }
            }
        }
    }
    if sizes.is_empty() {
        sizes = vec![(512, 512), (1024, 1024), (2048, 2048)];
    }
    let path = std::env::var("HYBLAS_BENCH_OPENBLAS").unwrap_or_else(|_| OPENBLAS.to_string());
    let path = CString::new(path).expect("path");
    // SAFETY: plain dlopen/dlsym of a BLAS with the reference interface.
    unsafe {
        let h = libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL);
        assert!(!h.is_null(), "cannot load {path:?}");
        let ob_set =
            std::mem::transmute::<*mut c_void, unsafe extern "C" fn(c_int)>(sym(h, "openblas_set_num_threads"));
        let ob = |p: char| Lib {
            trsm: std::mem::transmute::<*mut c_void, Tr>(sym(h, &format!("{p}trsm_"))),
            trmm: std::mem::transmute::<*mut c_void, Tr>(sym(h, &format!("{p}trmm_"))),
        };
        let (hy, comps): (Lib, usize) = match prec {
            's' => (Lib { trsm: strsm_, trmm: strmm_ }, 1),
            'c' => (Lib { trsm: ctrsm_, trmm: ctrmm_ }, 2),
            'z' => (Lib { trsm: ztrsm_, trmm: ztrmm_ }, 2),
            _ => (Lib { trsm: dtrsm_, trmm: dtrmm_ }, 1),
        };
        let prec = if "scz".contains(prec) { prec } else { 'd' };
        if prec == 's' || prec == 'c' {
            bench::<f32>(comps, &ob(prec), &hy, ob_set, &sizes, &threads, reps, prec, &cases);
        } else {
            bench::<f64>(comps, &ob(prec), &hy, ob_set, &sizes, &threads, reps, prec, &cases);
        }
    }
}
