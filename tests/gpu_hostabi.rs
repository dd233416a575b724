//! Issue 3 item 8: Fortran and CBLAS Level 1/2 calls whose operands are device memory run on
//! the GPU; the same calls on host memory run on the CPU engine. Each case makes fresh random
//! data, runs it once on host copies and once on device copies, and compares.
//!
//! While a kernel's unit is still compiling, such calls are answered by the real cuBLAS
//! (`abi::cublas::host_vendor`): each of its routines is compared with the CPU engine (s, d, c,
//! z; N/T/C, upper/lower, unit/non-unit, negative increments, NaN where alpha == 0 or beta == 0
//! must not read, the `_v2_64` entry points past `int`), and a fresh process's first calls are
//! checked to take it (their trace lines) with the CPU engine's results. Needs a GPU and a real
//! cuBLAS; SKIPPED otherwise.

mod common;

use common::*;
use hyblas::gpu::DeviceBuffer;
use hyblas::types::{Real, Scalar, C64};
use std::ffi::c_char;

extern "C" {
    fn daxpy_(n: *const i32, a: *const f64, x: *const f64, incx: *const i32, y: *mut f64, incy: *const i32);
    fn ddot_(n: *const i32, x: *const f64, incx: *const i32, y: *const f64, incy: *const i32) -> f64;
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
    fn dtrmv_(
        u: *const c_char,
        t: *const c_char,
        d: *const c_char,
        n: *const i32,
        a: *const f64,
        lda: *const i32,
        x: *mut f64,
        incx: *const i32,
    );
    fn cblas_zaxpy(n: i32, a: *const C64, x: *const C64, incx: i32, y: *mut C64, incy: i32);
    fn cblas_dnrm2(n: i32, x: *const f64, incx: i32) -> f64;
}

fn close<T: Scalar>(got: &[T], want: &[T], tol: f64, what: &str) {
    assert_eq!(got.len(), want.len());
    let scale = want.iter().map(|w| Real::to_f64(w.abs1())).fold(1.0, f64::max);
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let e = Real::to_f64((*g - *w).abs1());
        assert!(e <= tol * scale, "{what}: [{i}] got {g:?} want {w:?}");
    }
}

#[test]
fn device_operands_run_on_the_gpu() {
    let Some(_rt) = gpu_or_skip("device_operands_run_on_the_gpu") else { return };
    let mut rng = Rng::new(77);
    let n = 100_003i32;
    let (one, two) = (1i32, 2i32);
    // daxpy_ with incy = 2.
    let x: Vec<f64> = rng.vec(n as usize);
    let y: Vec<f64> = rng.vec(2 * n as usize);
    let a = 0.75f64;
    let mut want = y.clone();
    unsafe { daxpy_(&n, &a, x.as_ptr(), &one, want.as_mut_ptr(), &two) };
    let (dx, dy) = (DeviceBuffer::from_slice(&x).unwrap(), DeviceBuffer::from_slice(&y).unwrap());
    unsafe { daxpy_(&n, &a, dx.ptr as *const f64, &one, dy.ptr as *mut f64, &two) };
    close(&dy.to_vec::<f64>().unwrap(), &want, 1e-15, "daxpy_ on device memory");

    // ddot_ returns its result to the host.
    let w = unsafe { ddot_(&n, x.as_ptr(), &one, y.as_ptr(), &two) };
    let dy = DeviceBuffer::from_slice(&y).unwrap();
    let g = unsafe { ddot_(&n, dx.ptr as *const f64, &one, dy.ptr as *const f64, &two) };
    assert!((g - w).abs() <= 1e-12 * w.abs().max(1.0), "ddot_ on device: {g} vs {w}");

    // cblas_dnrm2 and cblas_zaxpy.
    let w = unsafe { cblas_dnrm2(n, x.as_ptr(), 1) };
    let g = unsafe { cblas_dnrm2(n, dx.ptr as *const f64, 1) };
    assert!((g - w).abs() <= 1e-13 * w, "cblas_dnrm2 on device: {g} vs {w}");
    let zx: Vec<C64> = rng.vec(5000);
    let zy: Vec<C64> = rng.vec(5000);
    let za = C64::new(0.5, -1.25);
    let mut want = zy.clone();
    unsafe { cblas_zaxpy(5000, &za, zx.as_ptr(), -1, want.as_mut_ptr(), 1) };
    let (dzx, dzy) = (DeviceBuffer::from_slice(&zx).unwrap(), DeviceBuffer::from_slice(&zy).unwrap());
    unsafe { cblas_zaxpy(5000, &za, dzx.ptr as *const C64, -1, dzy.ptr as *mut C64, 1) };
    close(&dzy.to_vec::<C64>().unwrap(), &want, 1e-15, "cblas_zaxpy on device memory");
}

#[test]
fn device_operands_level2() {
    let Some(_rt) = gpu_or_skip("device_operands_level2") else { return };
    let mut rng = Rng::new(78);
    let (m, n, lda) = (1001i32, 777i32, 1003i32);
    let a: Vec<f32> = rng.vec((lda * n) as usize);
    let x: Vec<f32> = rng.vec(m as usize);
    let y: Vec<f32> = rng.vec(n as usize);
    let (al, be, one) = (1.5f32, -0.5f32, 1i32);
    let mut want = y.clone();
    unsafe { sgemv_(c"T".as_ptr(), &m, &n, &al, a.as_ptr(), &lda, x.as_ptr(), &one, &be, want.as_mut_ptr(), &one) };
    let (da, dx, dy) = (
        DeviceBuffer::from_slice(&a).unwrap(),
        DeviceBuffer::from_slice(&x).unwrap(),
        DeviceBuffer::from_slice(&y).unwrap(),
    );
    unsafe {
        sgemv_(
            c"T".as_ptr(),
            &m,
            &n,
            &al,
            da.ptr as *const f32,
            &lda,
            dx.ptr as *const f32,
            &one,
            &be,
            dy.ptr as *mut f32,
            &one,
        )
    };
    close(&dy.to_vec::<f32>().unwrap(), &want, 1e-4, "sgemv_ T on device memory");

    let nn = 999i32;
    let t: Vec<f64> = rng.vec((nn * nn) as usize);
    let v: Vec<f64> = rng.vec(nn as usize);
    let mut want = v.clone();
    unsafe { dtrmv_(c"L".as_ptr(), c"N".as_ptr(), c"N".as_ptr(), &nn, t.as_ptr(), &nn, want.as_mut_ptr(), &one) };
    let (dt, dv) = (DeviceBuffer::from_slice(&t).unwrap(), DeviceBuffer::from_slice(&v).unwrap());
    unsafe {
        dtrmv_(c"L".as_ptr(), c"N".as_ptr(), c"N".as_ptr(), &nn, dt.ptr as *const f64, &nn, dv.ptr as *mut f64, &one)
    };
    close(&dv.to_vec::<f64>().unwrap(), &want, 1e-13, "dtrmv_ on device memory");
}

/// Host operands stay on the CPU even after the GPU runtime exists.
#[test]
fn host_operands_stay_on_the_cpu() {
    let Some(_rt) = gpu_or_skip("host_operands_stay_on_the_cpu") else { return };
    let x = [1.0f64; 10];
    assert!(!hyblas::gpu::runtime::is_device_pointer(x.as_ptr() as *const _));
    let d = DeviceBuffer::new(80).unwrap();
    assert!(hyblas::gpu::runtime::is_device_pointer(d.ptr as *const _));
}

// ---------------------------------------------------------------------------------------
// The vendor path: while a kernel's unit is still compiling, host-ABI calls on device memory
// are answered by the real cuBLAS (`abi::cublas::host_vendor`, through `plan::on_gpu`). Each
// routine of it is checked directly against the CPU engine (the host ABI on host copies), and
// the first calls of a fresh process are checked to take it (trace lines) and to be right.

use hyblas::abi::cublas::host_vendor as hv;
use hyblas::abi::fortran::{level1 as f1, level2 as f2};
use hyblas::gpu::driver::sys;
use hyblas::gpu::kernels::{Family, Unit};
use hyblas::gpu::{DMat, DVec, Exec, Runtime};
use hyblas::types::{Diag, Trans, Uplo, C32};
use std::ffi::c_void;

/// The GPU with a real cuBLAS, or None after a SKIPPED line.
fn gpu_with_cublas(test: &str) -> Option<&'static Runtime> {
    let rt = gpu_or_skip(test)?;
    if !hyblas::gpu::vendor::present() {
        eprintln!("SKIPPED {test}: no real cuBLAS found ({:?} not loadable)", hyblas::gpu::vendor::LIBS);
        return None;
    }
    Some(rt)
}

fn span(n: usize, inc: i64) -> usize {
    if n == 0 {
        0
    } else {
        1 + (n - 1) * inc.unsigned_abs() as usize
    }
}

/// Upload, and make sure the copy is complete before work on a non-blocking stream reads it.
fn up<T: Copy>(v: &[T]) -> DeviceBuffer {
    let b = DeviceBuffer::from_slice(v).expect("upload");
    assert_eq!(unsafe { sys::cuCtxSynchronize() }, sys::CUresult::CUDA_SUCCESS);
    b
}

fn down<T: Copy + Default>(b: &DeviceBuffer, len: usize) -> Vec<T> {
    let mut v = b.to_vec::<T>().expect("download");
    v.truncate(len);
    v
}

fn dv(b: &DeviceBuffer, inc: i64) -> DVec {
    DVec { ptr: b.ptr, inc }
}

/// `v` with NaN in its first two elements of stride `inc` (where it has them): what alpha == 0
/// must not read, what beta == 0 must not read, or (scal) what the reference's product keeps.
fn with_nans<T: Scalar>(mut v: Vec<T>, inc: i64) -> Vec<T> {
    for e in v.iter_mut().step_by(inc.unsigned_abs() as usize).take(2) {
        *e = nan::<T>();
    }
    v
}

const TRANS: [Trans; 3] = [Trans::No, Trans::Trans, Trans::ConjTrans];
const L1_INCS: [(i64, i64); 4] = [(1, 1), (2, -3), (-1, 2), (-2, -1)];
const L2_INCS: [(i64, i64); 3] = [(1, 1), (-2, 3), (3, -1)];

/// Every `host_vendor` routine of precision T against the CPU engine.
fn vendor_matches_cpu<T: Scalar>(rt: &'static Runtime, seed: u64) {
    let mut rng = Rng::new(seed);
    let ex = Exec::own(rt);
    let sync = || rt.sync(ex.stream).expect("stream sync");
    let p = T::PREFIX;

    // Level 1, two vectors.
    for n in [1usize, 17, 4099] {
        for (ix, iy) in L1_INCS {
            let (lx, ly) = (span(n, ix), span(n, iy));
            let x: Vec<T> = rng.vec(lx);
            let y: Vec<T> = rng.vec(ly);
            let what = |r: &str| format!("{p}{r} n={n} incx={ix} incy={iy}");
            let (ni, ixs, iys) = (n as isize, ix as isize, iy as isize);

            let alpha: T = rng.scalar();
            let mut want = y.clone();
            unsafe { f1::axpy::<T>(ni, alpha, x.as_ptr(), ixs, want.as_mut_ptr(), iys) };
            let (dx, dy) = (up(&x), up(&y));
            hv::axpy::<T>(&ex, n as i64, alpha, dv(&dx, ix), dv(&dy, iy)).expect("axpy");
            sync();
            assert_close(&down::<T>(&dy, ly), &want, 2, &what("axpy"));

            let py = vec![poison::<T>(); ly];
            let mut want = py.clone();
            unsafe { f1::copy::<T>(ni, x.as_ptr(), ixs, want.as_mut_ptr(), iys) };
            let dy = up(&py);
            hv::copy::<T>(&ex, n as i64, dv(&dx, ix), dv(&dy, iy)).expect("copy");
            sync();
            assert!(same_bits(&down::<T>(&dy, ly), &want), "{}", what("copy"));

            let (mut wx, mut wy) = (x.clone(), y.clone());
            unsafe { f1::swap::<T>(ni, wx.as_mut_ptr(), ixs, wy.as_mut_ptr(), iys) };
            let (dx2, dy) = (up(&x), up(&y));
            hv::swap::<T>(&ex, n as i64, dv(&dx2, ix), dv(&dy, iy)).expect("swap");
            sync();
            assert!(same_bits(&down::<T>(&dx2, lx), &wx), "{} (x)", what("swap"));
            assert!(same_bits(&down::<T>(&dy, ly), &wy), "{} (y)", what("swap"));

            let dy = up(&y);
            for conj in [false, true] {
                let want = unsafe { f1::dot::<T>(ni, x.as_ptr(), ixs, y.as_ptr(), iys, conj) };
                let got = hv::dot::<T>(&ex, n as i64, dv(&dx, ix), dv(&dy, iy), conj).expect("dot");
                sync();
                assert_close(&[got], &[want], n, &what(if conj { "dotc" } else { "dotu" }));
            }
        }
    }

    // Level 1, one vector.
    for n in [1usize, 17, 4099] {
        for ix in [1i64, 3] {
            let lx = span(n, ix);
            let x: Vec<T> = rng.vec(lx);
            let what = |r: &str| format!("{p}{r} n={n} incx={ix}");
            let (ni, ixs) = (n as isize, ix as isize);
            let dx = up(&x);

            for zero in [false, true] {
                // alpha == 0 multiplies, as the reference does: NaN stays NaN.
                let (xs, alpha) =
                    if zero { (with_nans(x.clone(), ix), T::zero()) } else { (x.clone(), rng.scalar::<T>()) };
                let mut want = xs.clone();
                unsafe { f1::scal::<T>(ni, alpha, want.as_mut_ptr(), ixs) };
                let d = up(&xs);
                hv::scal::<T>(&ex, n as i64, alpha, dv(&d, ix)).expect("scal");
                sync();
                assert_close(&down::<T>(&d, lx), &want, 1, &format!("{} alpha={alpha:?}", what("scal")));

                let ar = if zero { <T::Real as Scalar>::zero() } else { rng.scalar::<T::Real>() };
                let mut want = xs.clone();
                unsafe { f1::scal_real::<T>(ni, ar, want.as_mut_ptr(), ixs) };
                let d = up(&xs);
                hv::scal_real::<T>(&ex, n as i64, ar, dv(&d, ix)).expect("scal_real");
                sync();
                assert_close(&down::<T>(&d, lx), &want, 1, &format!("{} real alpha={ar:?}", what("scal_real")));
            }

            let want = unsafe { f1::nrm2::<T>(ni, x.as_ptr(), ixs) };
            let got = hv::nrm2::<T>(&ex, n as i64, dv(&dx, ix)).expect("nrm2");
            assert_close(&[got], &[want], n, &what("nrm2"));
            let want = unsafe { f1::asum::<T>(ni, x.as_ptr(), ixs) };
            let got = hv::asum::<T>(&ex, n as i64, dv(&dx, ix)).expect("asum");
            assert_close(&[got], &[want], n, &what("asum"));
            let want = unsafe { f1::iamax::<T>(ni, x.as_ptr(), ixs) };
            let got = hv::iamax::<T>(&ex, n as i64, dv(&dx, ix)).expect("iamax");
            assert_eq!(got, want as i64, "{}", what("iamax"));
            sync();
        }
    }

    // GEMV: N, T, C; alpha == 0 must read neither A nor x (NaN there), beta == 0 not y.
    for (m, n) in [(1i64, 1i64), (37, 53), (300, 17)] {
        let lda = m + 3;
        for t in TRANS {
            for (ix, iy) in L2_INCS {
                for (ka, kb) in [(2u8, 2u8), (2, 0), (0, 2), (0, 0), (2, 1)] {
                    let (alpha, beta) = (scalar_of::<T>(ka, &mut rng), scalar_of::<T>(kb, &mut rng));
                    let (lx, ly) = if t == Trans::No { (n, m) } else { (m, n) };
                    let (sx, sy) = (span(lx as usize, ix), span(ly as usize, iy));
                    let mut a: Vec<T> = rng.vec((lda * n) as usize);
                    let mut x: Vec<T> = rng.vec(sx);
                    let mut y: Vec<T> = rng.vec(sy);
                    if ka == 0 {
                        a = with_nans(a, 1);
                        x = with_nans(x, ix);
                    }
                    if kb == 0 {
                        y = with_nans(y, iy);
                    }
                    let mut want = y.clone();
                    let tc = tchar(t) as c_char;
                    unsafe {
                        f2::gemv::<T, i64>(
                            &tc,
                            &m,
                            &n,
                            &alpha,
                            a.as_ptr(),
                            &lda,
                            x.as_ptr(),
                            &ix,
                            &beta,
                            want.as_mut_ptr(),
                            &iy,
                        )
                    };
                    let (da, dx, dy) = (up(&a), up(&x), up(&y));
                    let am = DMat { ptr: da.ptr, ld: lda };
                    hv::gemv::<T>(&ex, t, m, n, alpha, am, dv(&dx, ix), beta, dv(&dy, iy)).expect("gemv");
                    sync();
                    let what = format!("{p}gemv {t:?} m={m} n={n} incx={ix} incy={iy} alpha={alpha:?} beta={beta:?}");
                    let got = down::<T>(&dy, sy);
                    let is_nan = |v: &T| to_c64(*v).re.is_nan() || to_c64(*v).im.is_nan();
                    assert!(!got.iter().step_by(iy.unsigned_abs() as usize).any(is_nan), "{what}: NaN in y");
                    assert_close(&got, &want, lx as usize, &what);
                }
            }
        }
    }

    // GER (u and c).
    for (m, n) in [(1i64, 1i64), (37, 53), (300, 17)] {
        let lda = m + 3;
        for (ix, iy) in L2_INCS {
            for conj in [false, true] {
                let alpha: T = rng.scalar();
                let x: Vec<T> = rng.vec(span(m as usize, ix));
                let y: Vec<T> = rng.vec(span(n as usize, iy));
                let a: Vec<T> = rng.vec((lda * n) as usize);
                let mut want = a.clone();
                let base = if conj { "gerc" } else { "geru" };
                unsafe {
                    f2::ger::<T, i64>(
                        base,
                        conj,
                        &m,
                        &n,
                        &alpha,
                        x.as_ptr(),
                        &ix,
                        y.as_ptr(),
                        &iy,
                        want.as_mut_ptr(),
                        &lda,
                    )
                };
                let (dx, dy, da) = (up(&x), up(&y), up(&a));
                let am = DMat { ptr: da.ptr, ld: lda };
                hv::ger::<T>(&ex, m, n, alpha, dv(&dx, ix), dv(&dy, iy), am, conj).expect("ger");
                sync();
                let what = format!("{p}{base} m={m} n={n} incx={ix} incy={iy}");
                assert_close(&down::<T>(&da, a.len()), &want, 2, &what);
            }
        }
    }

    // TRMV: the triangle not referenced, and a unit diagonal, hold NaN.
    for n in [1i64, 5, 130] {
        let lda = n + 2;
        for uplo in [Uplo::Upper, Uplo::Lower] {
            for t in TRANS {
                for diag in [Diag::NonUnit, Diag::Unit] {
                    for ix in [1i64, -2, 3] {
                        let mut a: Vec<T> = rng.vec((lda * n) as usize);
                        for j in 0..n {
                            for i in 0..n {
                                let outside = if uplo == Uplo::Upper { i > j } else { i < j };
                                if outside || (i == j && diag == Diag::Unit) {
                                    a[(i + j * lda) as usize] = nan::<T>();
                                }
                            }
                        }
                        let sx = span(n as usize, ix);
                        let x: Vec<T> = rng.vec(sx);
                        let mut want = x.clone();
                        let uc = (if uplo == Uplo::Upper { b'U' } else { b'L' }) as c_char;
                        let dc = (if diag == Diag::Unit { b'U' } else { b'N' }) as c_char;
                        let tc = tchar(t) as c_char;
                        unsafe {
                            f2::trmv::<T, i64>(
                                "trmv",
                                false,
                                &uc,
                                &tc,
                                &dc,
                                &n,
                                a.as_ptr(),
                                &lda,
                                want.as_mut_ptr(),
                                &ix,
                            )
                        };
                        let (da, dx) = (up(&a), up(&x));
                        let am = DMat { ptr: da.ptr, ld: lda };
                        hv::trmv::<T>(&ex, uplo, t, diag, n, am, dv(&dx, ix)).expect("trmv");
                        sync();
                        let what = format!("{p}trmv {uplo:?} {t:?} {diag:?} n={n} incx={ix}");
                        assert_close(&down::<T>(&dx, sx), &want, n as usize, &what);
                    }
                }
            }
        }
    }

    // Zero increments are refused (the host ABI runs them on hyblas's kernels), outputs untouched.
    let x: Vec<T> = rng.vec(8);
    let (dx, dy) = (up(&x), up(&x));
    for (ix, iy) in [(0i64, 1i64), (1, 0)] {
        assert!(hv::axpy::<T>(&ex, 4, T::one(), dv(&dx, ix), dv(&dy, iy)).is_err());
        assert!(hv::copy::<T>(&ex, 4, dv(&dx, ix), dv(&dy, iy)).is_err());
        assert!(hv::swap::<T>(&ex, 4, dv(&dx, ix), dv(&dy, iy)).is_err());
        assert!(hv::dot::<T>(&ex, 4, dv(&dx, ix), dv(&dy, iy), false).is_err());
    }
    sync();
    assert!(same_bits(&down::<T>(&dx, 8), &x) && same_bits(&down::<T>(&dy, 8), &x), "{p}: zero increments");
}

#[test]
fn vendor_path_matches_the_cpu() {
    let Some(rt) = gpu_with_cublas("vendor_path_matches_the_cpu") else { return };
    vendor_matches_cpu::<f32>(rt, 101);
    vendor_matches_cpu::<f64>(rt, 102);
    vendor_matches_cpu::<C32>(rt, 103);
    vendor_matches_cpu::<C64>(rt, 104);
}

/// Sizes past `int`: the `_v2_64` entry points (one 8 GiB buffer; elements 0, 1, 2^31 and
/// 2^31 + 1 are set, nothing else is read). Expected values are worked out by hand.
#[test]
fn vendor_path_takes_64_bit_sizes() {
    let Some(rt) = gpu_with_cublas("vendor_path_takes_64_bit_sizes") else { return };
    const BIG: i64 = 1 << 31;
    let Ok(buf) = DeviceBuffer::new((BIG as usize + 2) * 4) else {
        eprintln!("SKIPPED vendor_path_takes_64_bit_sizes: no 8 GiB of device memory");
        return;
    };
    let put = |i: i64, v: f32| {
        let r = unsafe { sys::cuMemcpyHtoD_v2(buf.ptr + i as u64 * 4, &v as *const f32 as *const c_void, 4) };
        assert_eq!(r, sys::CUresult::CUDA_SUCCESS);
    };
    let get = |i: i64| {
        let mut v = 0f32;
        let r = unsafe { sys::cuMemcpyDtoH_v2(&mut v as *mut f32 as *mut c_void, buf.ptr + i as u64 * 4, 4) };
        assert_eq!(r, sys::CUresult::CUDA_SUCCESS);
        v
    };
    let ex = Exec::own(rt);
    let sync = || rt.sync(ex.stream).expect("stream sync");
    // x = (0.5, -2) with incx = 2^31; reversed with incx = -2^31.
    put(0, 0.5);
    put(BIG, -2.0);
    assert_eq!(unsafe { sys::cuCtxSynchronize() }, sys::CUresult::CUDA_SUCCESS);
    let (xf, xb) = (DVec { ptr: buf.ptr, inc: BIG }, DVec { ptr: buf.ptr, inc: -BIG });
    assert_eq!(hv::iamax::<f32>(&ex, 2, xf).unwrap(), 2, "isamax_v2_64 (an int64 index)");
    let nrm = hv::nrm2::<f32>(&ex, 2, xf).unwrap();
    assert!((nrm - 4.25f32.sqrt()).abs() <= 4.0 * f32::EPSILON, "snrm2_v2_64: {nrm}");
    assert_eq!(hv::asum::<f32>(&ex, 2, xf).unwrap(), 2.5, "sasum_v2_64");
    let y = up(&[3.0f32, 4.0]);
    assert_eq!(hv::dot::<f32>(&ex, 2, xf, dv(&y, 1), false).unwrap(), 0.5 * 3.0 - 2.0 * 4.0, "sdot_v2_64");
    assert_eq!(hv::dot::<f32>(&ex, 2, xb, dv(&y, 1), false).unwrap(), -2.0 * 3.0 + 0.5 * 4.0, "sdot_v2_64, -incx");
    hv::axpy::<f32>(&ex, 2, 2.0, xb, dv(&y, 1)).unwrap();
    sync();
    assert_eq!(down::<f32>(&y, 2), [3.0 - 4.0, 4.0 + 1.0], "saxpy_v2_64, -incx");
    hv::copy::<f32>(&ex, 2, xf, dv(&y, -1)).unwrap();
    sync();
    assert_eq!(down::<f32>(&y, 2), [-2.0, 0.5], "scopy_v2_64");
    hv::swap::<f32>(&ex, 2, xf, dv(&y, 1)).unwrap();
    sync();
    assert_eq!((get(0), get(BIG), down::<f32>(&y, 2)), (-2.0, 0.5, vec![0.5, -2.0]), "sswap_v2_64");
    hv::scal::<f32>(&ex, 2, 3.0, xf).unwrap();
    sync();
    assert_eq!((get(0), get(BIG)), (-6.0, 1.5), "sscal_v2_64");

    // A = [[1, 3], [2, 4]] with lda = 2^31 (columns at 0 and 2^31).
    let a = DMat { ptr: buf.ptr, ld: BIG };
    put(0, 1.0);
    put(1, 2.0);
    put(BIG, 3.0);
    put(BIG + 1, 4.0);
    assert_eq!(unsafe { sys::cuCtxSynchronize() }, sys::CUresult::CUDA_SUCCESS);
    let x = up(&[1.0f32, 10.0]);
    let y = up(&[100.0f32, 200.0]);
    hv::gemv::<f32>(&ex, Trans::No, 2, 2, 1.0, a, dv(&x, 1), 0.5, dv(&y, 1)).unwrap();
    sync();
    assert_eq!(down::<f32>(&y, 2), [50.0 + 31.0, 100.0 + 42.0], "sgemv_v2_64 N");
    hv::gemv::<f32>(&ex, Trans::Trans, 2, 2, 1.0, a, dv(&x, 1), 0.0, dv(&y, 1)).unwrap();
    sync();
    assert_eq!(down::<f32>(&y, 2), [21.0, 43.0], "sgemv_v2_64 T");
    let x = up(&[1.0f32, 10.0]);
    hv::trmv::<f32>(&ex, Uplo::Upper, Trans::No, Diag::NonUnit, 2, a, dv(&x, 1)).unwrap();
    sync();
    assert_eq!(down::<f32>(&x, 2), [31.0, 40.0], "strmv_v2_64");
    let (gx, gy) = (up(&[1.0f32, 2.0]), up(&[1.0f32, -1.0]));
    hv::ger::<f32>(&ex, 2, 2, 2.0, dv(&gx, 1), dv(&gy, 1), a, false).unwrap();
    sync();
    assert_eq!([get(0), get(1), get(BIG), get(BIG + 1)], [3.0, 6.0, 1.0, 0.0], "sger_v2_64");
}

/// Set in the child process of [`first_calls_take_the_vendor_path`].
const CHILD: &str = "HYBLAS_TEST_HOSTABI_VENDOR_CHILD";

/// A fresh process (an empty kernel cache, so every unit compiles for a while): its first
/// host-ABI calls on device memory find their units not loaded and are answered by the real
/// cuBLAS, with the trace line saying so, and results equal to the CPU engine's.
#[test]
fn first_calls_take_the_vendor_path() {
    if std::env::var_os(CHILD).is_some() {
        return;
    }
    let Some(_rt) = gpu_with_cublas("first_calls_take_the_vendor_path") else { return };
    let dir = std::env::temp_dir().join(format!("hyblas-hostabi-vendor-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let trace = dir.join("trace.log");
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "first_calls_child", "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .env("HYBLAS_TRACE", &trace)
        .env("HYBLAS_CACHE_DIR", dir.join("cache"))
        .env_remove("HYBLAS_COMPILE")
        .env_remove("HYBLAS_CONFIG")
        .output()
        .expect("run the child");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "child failed:\n{stdout}\n{stderr}");
    assert!(stdout.contains("CHILD OK"), "the child test did not run:\n{stdout}\n{stderr}");
    let text = std::fs::read_to_string(&trace).expect("trace written");
    // "EXPECT <routine> <unit>": the unit was not loaded just before the call.
    let expected: Vec<(&str, &str)> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("EXPECT "))
        .map(|l| l.split_once(' ').expect("EXPECT routine unit"))
        .collect();
    assert!(expected.len() >= 4, "too few calls found their unit not loaded:\n{stdout}");
    for (routine, unit) in expected {
        // `kernel compiling: unit level1_c` (or `loading`, the step it is at).
        let unit_end = format!(": unit {unit})");
        let found = text.lines().any(|l| {
            l.split_whitespace().nth(1) == Some(routine)
                && l.contains("engine=gpu")
                && l.split_once(" route=vendor (kernel ").is_some_and(|(_, r)| r.contains(&unit_end))
        });
        assert!(found, "no vendor trace line for {routine} ({unit}):\n{text}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Fresh device data per call, compared with the same call on host copies (the CPU engine).
fn first_calls<T: Scalar>(rt: &'static Runtime, rng: &mut Rng) {
    let p = T::PREFIX;
    let expect = |family: Family, routine: String| {
        let unit = Unit::of(family, p);
        if !rt.modules.is_ready(unit) {
            println!("EXPECT {routine} {}", unit.name());
        }
    };
    let real_pfx = match p {
        's' => "s",
        'd' => "d",
        'c' => "sc",
        _ => "dz",
    };
    let n = 1000usize;
    let (ix, iy) = (2isize, -3isize);
    let (lx, ly) = (span(n, ix as i64), span(n, iy as i64));
    let x: Vec<T> = rng.vec(lx);
    let y: Vec<T> = rng.vec(ly);
    let ni = n as isize;
    let dptr = |b: &DeviceBuffer| b.ptr as *mut T;

    let alpha: T = rng.scalar();
    let mut want = y.clone();
    unsafe { f1::axpy::<T>(ni, alpha, x.as_ptr(), ix, want.as_mut_ptr(), iy) };
    let (dx, dy) = (up(&x), up(&y));
    expect(Family::Level1, format!("{p}axpy"));
    unsafe { f1::axpy::<T>(ni, alpha, dptr(&dx), ix, dptr(&dy), iy) };
    assert_close(&down::<T>(&dy, ly), &want, 2, &format!("{p}axpy_"));

    let py = vec![poison::<T>(); ly];
    let mut want = py.clone();
    unsafe { f1::copy::<T>(ni, x.as_ptr(), ix, want.as_mut_ptr(), iy) };
    let dy = up(&py);
    expect(Family::Level1, format!("{p}copy"));
    unsafe { f1::copy::<T>(ni, dptr(&dx), ix, dptr(&dy), iy) };
    assert!(same_bits(&down::<T>(&dy, ly), &want), "{p}copy_");

    let (mut wx, mut wy) = (x.clone(), y.clone());
    unsafe { f1::swap::<T>(ni, wx.as_mut_ptr(), ix, wy.as_mut_ptr(), iy) };
    let (dx2, dy) = (up(&x), up(&y));
    expect(Family::Level1, format!("{p}swap"));
    unsafe { f1::swap::<T>(ni, dptr(&dx2), ix, dptr(&dy), iy) };
    assert!(same_bits(&down::<T>(&dx2, lx), &wx) && same_bits(&down::<T>(&dy, ly), &wy), "{p}swap_");

    let alpha: T = rng.scalar();
    let mut want = x.clone();
    unsafe { f1::scal::<T>(ni, alpha, want.as_mut_ptr(), ix) };
    let d = up(&x);
    expect(Family::Level1, format!("{p}scal"));
    unsafe { f1::scal::<T>(ni, alpha, dptr(&d), ix) };
    assert_close(&down::<T>(&d, lx), &want, 1, &format!("{p}scal_"));

    if T::IS_COMPLEX {
        let ar: T::Real = rng.scalar();
        let mut want = x.clone();
        unsafe { f1::scal_real::<T>(ni, ar, want.as_mut_ptr(), ix) };
        let d = up(&x);
        expect(Family::Level1, (if p == 'c' { "csscal" } else { "zdscal" }).to_string());
        unsafe { f1::scal_real::<T>(ni, ar, dptr(&d), ix) };
        assert_close(&down::<T>(&d, lx), &want, 1, &format!("{p} real scal_"));
    }

    let dy = up(&y);
    for conj in [false, true] {
        if conj && !T::IS_COMPLEX {
            continue;
        }
        let name = if !T::IS_COMPLEX {
            "dot"
        } else if conj {
            "dotc"
        } else {
            "dotu"
        };
        let want = unsafe { f1::dot::<T>(ni, x.as_ptr(), ix, y.as_ptr(), iy, conj) };
        expect(Family::Level1, format!("{p}{name}"));
        let got = unsafe { f1::dot::<T>(ni, dptr(&dx), ix, dptr(&dy), iy, conj) };
        assert_close(&[got], &[want], n, &format!("{p}{name}_"));
    }

    let want = unsafe { f1::nrm2::<T>(ni, x.as_ptr(), ix) };
    expect(Family::Level1, format!("{real_pfx}nrm2"));
    let got = unsafe { f1::nrm2::<T>(ni, dptr(&dx), ix) };
    assert_close(&[got], &[want], n, &format!("{real_pfx}nrm2_"));
    let want = unsafe { f1::asum::<T>(ni, x.as_ptr(), ix) };
    expect(Family::Level1, format!("{real_pfx}asum"));
    let got = unsafe { f1::asum::<T>(ni, dptr(&dx), ix) };
    assert_close(&[got], &[want], n, &format!("{real_pfx}asum_"));
    let want = unsafe { f1::iamax::<T>(ni, x.as_ptr(), ix) };
    expect(Family::Level1, format!("i{p}amax"));
    let got = unsafe { f1::iamax::<T>(ni, dptr(&dx), ix) };
    assert_eq!(got, want, "i{p}amax_");

    // GEMV (a different op per precision), GER, TRMV.
    let (m, nn, lda) = (300i64, 170i64, 303i64);
    let t = match p {
        's' => Trans::No,
        'd' => Trans::Trans,
        'c' => Trans::ConjTrans,
        _ => Trans::No,
    };
    let (lgx, lgy) = if t == Trans::No { (nn, m) } else { (m, nn) };
    let (gix, giy) = (-2i64, 1i64);
    let a: Vec<T> = rng.vec((lda * nn) as usize);
    let gx: Vec<T> = rng.vec(span(lgx as usize, gix));
    let gy: Vec<T> = rng.vec(span(lgy as usize, giy));
    let (alpha, beta): (T, T) = (rng.scalar(), rng.scalar());
    let tc = tchar(t) as c_char;
    let mut want = gy.clone();
    unsafe {
        f2::gemv::<T, i64>(&tc, &m, &nn, &alpha, a.as_ptr(), &lda, gx.as_ptr(), &gix, &beta, want.as_mut_ptr(), &giy)
    };
    let (da, dgx, dgy) = (up(&a), up(&gx), up(&gy));
    expect(Family::Gemv, format!("{p}gemv"));
    unsafe { f2::gemv::<T, i64>(&tc, &m, &nn, &alpha, dptr(&da), &lda, dptr(&dgx), &gix, &beta, dptr(&dgy), &giy) };
    assert_close(&down::<T>(&dgy, gy.len()), &want, lgx as usize, &format!("{p}gemv_ {t:?}"));

    let conj = T::IS_COMPLEX;
    let base = if !T::IS_COMPLEX { "ger" } else { "gerc" };
    let rx: Vec<T> = rng.vec(span(m as usize, 3));
    let ry: Vec<T> = rng.vec(span(nn as usize, -1));
    let mut want = a.clone();
    unsafe {
        f2::ger::<T, i64>(base, conj, &m, &nn, &alpha, rx.as_ptr(), &3, ry.as_ptr(), &-1, want.as_mut_ptr(), &lda)
    };
    let (da, drx, dry) = (up(&a), up(&rx), up(&ry));
    expect(Family::Gemv, format!("{p}{base}"));
    unsafe { f2::ger::<T, i64>(base, conj, &m, &nn, &alpha, dptr(&drx), &3, dptr(&dry), &-1, dptr(&da), &lda) };
    assert_close(&down::<T>(&da, a.len()), &want, 2, &format!("{p}{base}_"));

    let tn = 200i64;
    let ta: Vec<T> = rng.vec((tn * tn) as usize);
    let tx: Vec<T> = rng.vec(span(tn as usize, -1));
    let (uc, dc) = (b'L' as c_char, b'N' as c_char);
    let mut want = tx.clone();
    unsafe { f2::trmv::<T, i64>("trmv", false, &uc, &tc, &dc, &tn, ta.as_ptr(), &tn, want.as_mut_ptr(), &-1) };
    let (dta, dtx) = (up(&ta), up(&tx));
    expect(Family::Trmv, format!("{p}trmv"));
    unsafe { f2::trmv::<T, i64>("trmv", false, &uc, &tc, &dc, &tn, dptr(&dta), &tn, dptr(&dtx), &-1) };
    assert_close(&down::<T>(&dtx, tx.len()), &want, tn as usize, &format!("{p}trmv_ {t:?}"));
}

#[test]
fn first_calls_child() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    let rt = gpu_with_cublas("first_calls_child").expect("the parent found a GPU and cuBLAS");
    let mut rng = Rng::new(55);
    first_calls::<f32>(rt, &mut rng);
    first_calls::<f64>(rt, &mut rng);
    first_calls::<C32>(rt, &mut rng);
    first_calls::<C64>(rt, &mut rng);
    println!("CHILD OK");
}
