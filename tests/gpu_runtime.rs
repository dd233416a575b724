//! The GPU runtime on a real device: device properties, the occupancy model against the
//! driver's own calculator, the kernel cache, AXPY against the CPU engine, and fork safety.
//! Each test prints a SKIPPED line and returns where there is no GPU.

mod common;

use common::{gpu_or_skip, Rng};
use hyblas::gpu::driver::{check, sys};
use hyblas::gpu::kernels::{Family, Unit};
use hyblas::gpu::{level1, occupancy, tune, DVec, DeviceBuffer, Exec, In};
use hyblas::types::{Real, Scalar, C32, C64};

#[test]
fn device_properties_are_read() {
    let Some(rt) = gpu_or_skip("device_properties_are_read") else { return };
    let p = &rt.props;
    println!("{p:?}");
    assert!(p.sm_count > 0 && p.warp_size == 32 && p.max_threads_per_sm >= 1024);
    assert!(p.regs_per_sm >= 32768 && p.smem_per_sm >= 48 * 1024 && p.cc.0 >= 7);
}

/// Our occupancy model must agree with cuOccupancyMaxActiveBlocksPerMultiprocessor for every
/// kernel we have and a range of block sizes and shared-memory amounts.
#[test]
fn occupancy_matches_the_driver() {
    let Some(rt) = gpu_or_skip("occupancy_matches_the_driver") else { return };
    let mut checked = 0;
    for name in ["saxpy", "daxpy_v", "zaxpy"] {
        let unit = Unit::of(Family::Level1, name.chars().next().unwrap());
        let f = rt.function(unit, name).expect("kernel");
        for threads in [32u32, 64, 96, 128, 192, 256, 384, 512, 640, 768, 1024] {
            for smem in [0u32, 1000, 8 << 10, 40 << 10] {
                let mut want = 0i32;
                check(
                    unsafe {
                        sys::cuOccupancyMaxActiveBlocksPerMultiprocessor(
                            &mut want,
                            f.raw.0,
                            threads as i32,
                            smem as usize,
                        )
                    },
                    "cuOccupancyMaxActiveBlocksPerMultiprocessor",
                )
                .unwrap();
                let got = occupancy::active_blocks(&rt.props, &f, threads, smem);
                assert_eq!(got, want as u32, "{name}: {threads} threads, {smem} B smem, regs {}", f.regs);
                checked += 1;
            }
        }
    }
    println!("occupancy model agreed with the driver on {checked} cases");
}

/// The online choice is cached and stable, and respects forced shapes.
#[test]
fn online_choice_is_cached_and_forced_shapes_win() {
    let Some(rt) = gpu_or_skip("online_choice_is_cached_and_forced_shapes_win") else { return };
    let f = rt.function(Unit::of(Family::Level1, 's'), "saxpy_v").unwrap();
    let blocks = |tx: u32, _| (1u64 << 24).div_ceil(tx as u64);
    let a = tune::choose(rt, &f, &level1::ELEMWISE, 's', 4, tune::size_class(1 << 24), blocks);
    let t = std::time::Instant::now();
    let mut b = a;
    for _ in 0..100_000 {
        b = tune::choose(rt, &f, &level1::ELEMWISE, 's', 4, tune::size_class(1 << 24), blocks);
    }
    let per_call = t.elapsed().as_secs_f64() / 100_000.0;
    assert_eq!(a, b);
    println!("choice {a:?}, cached lookup {:.0} ns", per_call * 1e9);
    let forced = tune::with_shape(96, 1, || tune::choose(rt, &f, &level1::ELEMWISE, 's', 4, 7, blocks));
    assert_eq!(forced, (96, 1));
}

fn axpy_case<T: Scalar>(rt: &'static hyblas::gpu::Runtime, rng: &mut Rng, n: usize, incx: i64, incy: i64, off: usize) {
    let lx = off + 1 + (n.max(1) - 1) * incx.unsigned_abs() as usize;
    let ly = off + 1 + (n.max(1) - 1) * incy.unsigned_abs() as usize;
    let x: Vec<T> = rng.vec(lx);
    let y: Vec<T> = rng.vec(ly);
    let alpha: T = rng.scalar();
    // CPU reference through the exported Fortran symbol's engine.
    let mut want = y.clone();
    unsafe {
        hyblas::abi::fortran::level1::axpy(
            n as isize,
            alpha,
            x[off..].as_ptr(),
            incx as isize,
            want[off..].as_mut_ptr(),
            incy as isize,
        )
    };
    let dx = DeviceBuffer::from_slice(&x).unwrap();
    let dy = DeviceBuffer::from_slice(&y).unwrap();
    let ex = Exec::own(rt);
    let esz = std::mem::size_of::<T>() as u64;
    for dev_alpha in [false, true] {
        dy.write(&y).unwrap();
        let da = DeviceBuffer::from_slice(&[alpha]).unwrap();
        let a = if dev_alpha { In::Dev(da.ptr) } else { In::Host(alpha) };
        level1::axpy::<T>(
            &ex,
            n as i64,
            a,
            DVec { ptr: dx.ptr + off as u64 * esz, inc: incx },
            DVec { ptr: dy.ptr + off as u64 * esz, inc: incy },
        )
        .unwrap();
        rt.sync(ex.stream).unwrap();
        let got: Vec<T> = dy.to_vec().unwrap();
        for i in 0..ly {
            let (g, w) = (got[i], want[i]);
            let err = Real::to_f64((g - w).abs1());
            assert!(
                err <= 1e-5 * (1.0 + Real::to_f64(w.abs1())),
                "{}axpy n={n} incx={incx} incy={incy} off={off} dev_alpha={dev_alpha}: y[{i}] = {g:?}, want {w:?}",
                T::PREFIX
            );
        }
    }
}

fn axpy_all<T: Scalar>(rt: &'static hyblas::gpu::Runtime) {
    let mut rng = Rng::new(0xA1 + T::PREFIX as u64);
    for n in [0usize, 1, 2, 3, 31, 257, 1000, 65_537, 1 << 20] {
        for (incx, incy) in [(1, 1), (2, 3), (-1, 1), (-2, -3)] {
            for off in [0usize, 1] {
                axpy_case::<T>(rt, &mut rng, n, incx, incy, off);
            }
        }
    }
}

#[test]
fn axpy_matches_the_cpu_engine() {
    let Some(rt) = gpu_or_skip("axpy_matches_the_cpu_engine") else { return };
    axpy_all::<f32>(rt);
    axpy_all::<f64>(rt);
    axpy_all::<C32>(rt);
    axpy_all::<C64>(rt);
}

/// A forked child of a process that used the GPU must not touch the parent's context: it
/// sees the GPU as unavailable (and the CPU engine answers).
#[test]
fn forked_child_does_not_use_the_gpu() {
    let Some(_rt) = gpu_or_skip("forked_child_does_not_use_the_gpu") else { return };
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        let ok = hyblas::gpu::Runtime::get(0).is_err() && !hyblas::gpu::runtime::is_device_pointer(8 as _);
        unsafe { libc::_exit(if ok { 0 } else { 1 }) };
    }
    let mut status = 0;
    unsafe { libc::waitpid(pid, &mut status, 0) };
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, "child status {status}");
}
