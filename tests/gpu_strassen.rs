//! Strassen-Winograd GEMM on the GPU (`gpu::strassen`, seed 003) against the CPU engine, on
//! fresh random data: s and d, every op(A) x op(B), odd and rectangular sizes around the
//! peeling edges, lda > m, beta 0 (C poisoned with NaN), 1 and random, levels 1 and 2 forced,
//! through the planner's device path (`plan::gemm::device_gemm`, as `?gemm_` on device memory
//! takes it), the exported `cublasDgemm_v2`/`cublasSgemm_v2` in both pointer modes and the
//! Fortran `dgemm_` on device pointers. A, B and C's padding rows are checked untouched; the
//! error is checked within the Winograd-variant bound (plus the reference's own rounding).
//! Runs on a machine with a GPU and the real cuBLAS; elsewhere every test prints SKIPPED.

mod common;
#[allow(dead_code)]
#[path = "common/fortran_gemm.rs"]
mod fortran_gemm;
#[path = "common/cublas.rs"]
mod harness;

use common::*;
use harness::*;
use hyblas::abi::cublas as cb;
use hyblas::gpu::{strassen, DMat, Exec};
use hyblas::plan::gemm::{self as gp, Strassen};
use hyblas::plan::gpu::Route;
use hyblas::types::{Real, Scalar, Trans};
use std::ffi::c_int;

#[rustfmt::skip]
extern "C" {
    fn cublasSgemm_v2(h: cb::Handle, ta: c_int, tb: c_int, m: i32, n: i32, k: i32, al: *const f32, a: *const f32, lda: i32, b: *const f32, ldb: i32, be: *const f32, c: *mut f32, ldc: i32) -> cb::Status;
    fn cublasDgemm_v2(h: cb::Handle, ta: c_int, tb: c_int, m: i32, n: i32, k: i32, al: *const f64, a: *const f64, lda: i32, b: *const f64, ldb: i32, be: *const f64, c: *mut f64, ldc: i32) -> cb::Status;
}

/// The Winograd-variant bound's factor at `levels` (Higham, ch. 23), times u ||A||_M ||B||_M.
fn bound(n: usize, levels: u32) -> f64 {
    let n = n as f64;
    let n0 = n / 2f64.powi(levels as i32);
    (n0 * n0 + 6.0 * n0) * 18f64.powi(levels as i32)
}

fn u<T: Scalar>() -> f64 {
    if std::mem::size_of::<T>() == 4 {
        f32::EPSILON as f64 / 2.0
    } else {
        f64::EPSILON / 2.0
    }
}

fn f<T: Scalar>(v: T) -> f64 {
    v.re().to_f64()
}

/// The reference C := alpha*op(A)*op(B) + beta*C in f64 on the host (a plain triple loop in
/// f64: exact enough for both precisions at these sizes, and independent of every engine).
#[allow(clippy::too_many_arguments)]
fn reference<T: Scalar>(
    ta: bool,
    tb: bool,
    m: usize,
    n: usize,
    k: usize,
    alpha: T,
    a: &[T],
    lda: usize,
    b: &[T],
    ldb: usize,
    beta: T,
    c: &[T],
    ldc: usize,
) -> Vec<f64> {
    let mut out = vec![0.0; ldc * n];
    for j in 0..n {
        for i in 0..m {
            let mut s = 0.0;
            for l in 0..k {
                let x = if ta { a[l + i * lda] } else { a[i + l * lda] };
                let y = if tb { b[j + l * ldb] } else { b[l + j * ldb] };
                s += f(x) * f(y);
            }
            let cold = if beta.is_zero() { 0.0 } else { f(beta) * f(c[i + j * ldc]) };
            out[i + j * ldc] = f(alpha) * s + cold;
        }
    }
    out
}

struct Case {
    ta: bool,
    tb: bool,
    m: usize,
    n: usize,
    k: usize,
    beta: u8,
    levels: u32,
    pad: usize,
}

/// Which path runs the product.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Path {
    Planner,
    Cublas { device_scalars: bool },
    Fortran,
}

fn run_case<T: Scalar>(ex: &Exec, s: Option<&Session>, c: &Case, path: Path, rng: &mut Rng) {
    let Case { ta, tb, m, n, k, levels, pad, .. } = *c;
    let (ar, ac) = if ta { (k, m) } else { (m, k) };
    let (br, bc) = if tb { (n, k) } else { (k, n) };
    let (lda, ldb, ldc) = (ar + pad, br + 2 * pad, m + pad + 1);
    let a: Vec<T> = rng.vec(lda * ac);
    let b: Vec<T> = rng.vec(ldb * bc);
    let alpha: T = rng.scalar();
    let beta: T = scalar_of(c.beta, rng);
    let mut c0: Vec<T> = rng.vec(ldc * n);
    for j in 0..n {
        for i in m..ldc {
            c0[i + j * ldc] = poison();
        }
        if beta.is_zero() {
            for i in 0..m {
                c0[i + j * ldc] = nan();
            }
        }
    }
    let want = reference(ta, tb, m, n, k, alpha, &a, lda, &b, ldb, beta, &c0, ldc);
    let (da, db, dc) = (up(&a), up(&b), up(&c0));
    let before = strassen::runs();
    let tr = |t: bool| if t { Trans::Trans } else { Trans::No };
    let what = format!("{} {path:?} ta={ta} tb={tb} m={m} n={n} k={k} beta={} levels={levels}", T::PREFIX, c.beta);
    gp::with_strassen(Strassen::Levels(levels), || match path {
        Path::Planner => {
            let (am, bm, cm) = (
                DMat { ptr: da.ptr, ld: lda as i64 },
                DMat { ptr: db.ptr, ld: ldb as i64 },
                DMat { ptr: dc.ptr, ld: ldc as i64 },
            );
            let r = gp::device_gemm::<T>(ex, tr(ta), tr(tb), m as i64, n as i64, k as i64, alpha, am, bm, beta, cm)
                .expect("device_gemm");
            assert_eq!(r.decision.route, Route::Strassen(levels), "{what}");
            assert!(r.declined.is_none(), "{what}: declined: {:?}", r.declined);
            ex.rt.sync(ex.stream).expect("sync");
        }
        Path::Cublas { device_scalars } => {
            let s = s.expect("a session");
            s.pointer_mode(device_scalars);
            let (al, be) = (Arg::new(alpha, device_scalars), Arg::new(beta, device_scalars));
            let op = |t: bool| if t { cb::CUBLAS_OP_T } else { cb::CUBLAS_OP_N };
            let (mi, ni, ki) = (m as i32, n as i32, k as i32);
            let (la, lb, lc) = (lda as i32, ldb as i32, ldc as i32);
            let st = unsafe {
                match T::PREFIX {
                    's' => cublasSgemm_v2(
                        s.h,
                        op(ta),
                        op(tb),
                        mi,
                        ni,
                        ki,
                        al.ptr() as *const f32,
                        dp(&da),
                        la,
                        dp(&db),
                        lb,
                        be.ptr() as *const f32,
                        dp(&dc),
                        lc,
                    ),
                    _ => cublasDgemm_v2(
                        s.h,
                        op(ta),
                        op(tb),
                        mi,
                        ni,
                        ki,
                        al.ptr() as *const f64,
                        dp(&da),
                        la,
                        dp(&db),
                        lb,
                        be.ptr() as *const f64,
                        dp(&dc),
                        lc,
                    ),
                }
            };
            assert_eq!(st, OK, "{what}");
            s.sync();
            s.pointer_mode(false);
        }
        Path::Fortran => {
            let ch = |t: bool| if t { b"T".as_ptr() } else { b"N".as_ptr() } as *const std::ffi::c_char;
            let (mi, ni, ki) = (m as i32, n as i32, k as i32);
            let (la, lb, lc) = (lda as i32, ldb as i32, ldc as i32);
            unsafe {
                fortran_gemm::dgemm_(
                    ch(ta),
                    ch(tb),
                    &mi,
                    &ni,
                    &ki,
                    &f(alpha),
                    dp(&da),
                    &la,
                    dp(&db),
                    &lb,
                    &f(beta),
                    dp(&dc),
                    &lc,
                );
            }
        }
    });
    // Device scalars keep the cuBLAS layer off Strassen (the real cuBLAS answers); every other
    // path ran it once.
    let ran = strassen::runs() - before;
    let expect = if matches!(path, Path::Cublas { device_scalars: true }) { 0 } else { 1 };
    assert_eq!(ran, expect, "{what}: Strassen runs");
    assert!(same_bits(&down::<T>(&da), &a) && same_bits(&down::<T>(&db), &b), "{what}: A or B written");
    let got: Vec<T> = down(&dc);
    let norm_a = a.iter().map(|&x| f(x).abs()).fold(0.0, f64::max);
    let norm_b = b.iter().map(|&x| f(x).abs()).fold(0.0, f64::max);
    let norm_c = c0.iter().filter(|x| !f(**x).is_nan()).map(|&x| f(x).abs()).fold(0.0, f64::max);
    let dim = m.max(n).max(k);
    // Strassen's bound on alpha*A*B, plus beta*C's and the final pass's rounding.
    let tol = u::<T>() * (bound(dim, levels) * f(alpha).abs() * norm_a * norm_b + 4.0 * (f(beta).abs() * norm_c + 1.0));
    for j in 0..n {
        for i in 0..ldc {
            let p = i + j * ldc;
            if i >= m {
                assert_eq!(bits(got[p]), bits(c0[p]), "{what}: padding ({i}, {j}) written");
                continue;
            }
            let e = (f(got[p]) - want[p]).abs();
            assert!(e <= tol, "{what}: C({i}, {j}) = {} want {} (error {e:.3e} > bound {tol:.3e})", f(got[p]), want[p]);
        }
    }
}

/// Shapes around the peeling edges: even, odd in each of m, n, k, thin, and a size whose
/// half is odd (two levels peel again below).
const SHAPES: [(usize, usize, usize); 8] =
    [(64, 64, 64), (65, 64, 64), (64, 65, 64), (64, 64, 65), (67, 33, 71), (2, 2, 2), (3, 5, 7), (130, 98, 202)];

fn sweep<T: Scalar>(test: &str) {
    let Some(rt) = gpu_with_cublas(test) else { return };
    let ex = Exec::own(rt);
    let mut rng = Rng::new(47 + T::PREFIX as u64);
    let mut cases = 0;
    for (si, &(m, n, k)) in SHAPES.iter().enumerate() {
        for (ti, (ta, tb)) in [(false, false), (false, true), (true, false), (true, true)].into_iter().enumerate() {
            for beta in [0u8, 1, 2] {
                for levels in [1, 2] {
                    // Padding on a rotating subset keeps the count down and still covers both.
                    let pad = (si + ti + beta as usize) % 3;
                    let c = Case { ta, tb, m, n, k, beta, levels, pad };
                    run_case::<T>(&ex, None, &c, Path::Planner, &mut rng);
                    cases += 1;
                }
            }
        }
    }
    println!("{test}: {cases} cases");
}

#[test]
fn strassen_s_matches_the_reference() {
    sweep::<f32>("strassen_s_matches_the_reference");
}

#[test]
fn strassen_d_matches_the_reference() {
    sweep::<f64>("strassen_d_matches_the_reference");
}

#[test]
fn strassen_through_cublas_and_fortran() {
    let Some(s) = session("strassen_through_cublas_and_fortran") else { return };
    let ex = Exec::own(s.rt);
    let mut rng = Rng::new(91);
    for &(m, n, k) in &[(96, 80, 112), (67, 33, 71)] {
        for levels in [1, 2] {
            for beta in [0u8, 2] {
                let c = Case { ta: false, tb: true, m, n, k, beta, levels, pad: 1 };
                for dev in [false, true] {
                    run_case::<f64>(&ex, Some(&s), &c, Path::Cublas { device_scalars: dev }, &mut rng);
                    run_case::<f32>(&ex, Some(&s), &c, Path::Cublas { device_scalars: dev }, &mut rng);
                }
                run_case::<f64>(&ex, None, &c, Path::Fortran, &mut rng);
            }
        }
    }
}

/// Auto asks the model: small products stay on cuBLAS (no Strassen run), and the model's
/// account reaches the trace text.
#[test]
fn strassen_auto_declines_small_products() {
    let Some(rt) = gpu_with_cublas("strassen_auto_declines_small_products") else { return };
    let ex = Exec::own(rt);
    let mut rng = Rng::new(5);
    let n = 256;
    let (a, b) = (up(&rng.vec::<f64>(n * n)), up(&rng.vec::<f64>(n * n)));
    let c = up(&vec![0.0f64; n * n]);
    let d = |p| DMat { ptr: p, ld: n as i64 };
    let before = strassen::runs();
    let r = gp::with_strassen(Strassen::Auto, || {
        gp::device_gemm::<f64>(&ex, Trans::No, Trans::No, 256, 256, 256, 1.0, d(a.ptr), d(b.ptr), 0.0, d(c.ptr))
    })
    .expect("device_gemm");
    ex.rt.sync(ex.stream).expect("sync");
    assert_ne!(r.decision.route, Route::Strassen(1));
    assert_ne!(r.decision.route, Route::Strassen(2));
    assert_eq!(strassen::runs(), before);
    let p = strassen::model(rt).choose(8, n, n, n, true);
    assert_eq!(p.levels, 0, "{p:?}");
    assert!(p.us[1] > p.us[0] / (1.0 + *strassen::MIN_GAIN), "{p:?}");
}
