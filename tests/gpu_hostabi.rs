//! Issue 3 item 8: Fortran and CBLAS Level 1/2 calls whose operands are device memory run on
//! the GPU; the same calls on host memory run on the CPU engine. Each case makes fresh random
//! data, runs it once on host copies and once on device copies, and compares.

mod common;

use common::{gpu_or_skip, Rng};
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
