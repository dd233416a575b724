//! GPU Level 1 (`hyblas::gpu::level1`, `kernels/level1.cu`) against the CPU engine
//! (`hyblas::cpu::level1`) on fresh random data, every routine x precision.
//!
//! Each call gets device copies of strided vectors whose gaps, and one element before (when
//! offset) and after, hold poison: outputs must match the CPU engine (elementwise SCAL, COPY,
//! SWAP bit for bit; AXPY and the reductions to rounding), inputs and guards must come back
//! unchanged. Sizes 0, 1, 2, odd, across the reductions' chunk length and the elementwise
//! blocks, 2^20 + 3; increments 1, 2, 3 and negative ones; vectors one element off 16-byte
//! alignment (so the strided kernels run: not possible for z, whose elements are 16 bytes);
//! host and device scalars and results. Plus quick returns, NaN/Inf, NRM2 over- and
//! underflow, bitwise equality of the reductions across block shapes and alignments, one case
//! over 2 GiB, and the tuning cases. Without a GPU every test prints SKIPPED and passes.

mod common;

use common::{gpu_or_skip, poison, to_c64, tol, Cd, Cf, Rng};
use hyblas::cpu::level1 as cpu;
use hyblas::gpu::driver::{check, sys};
use hyblas::gpu::level1::{self as gl1, IndexOut};
use hyblas::gpu::{tune, DVec, DeviceBuffer, Exec, GpuError, In, Out, Runtime};
use hyblas::types::{Scalar, VecMut, VecRef};
use std::marker::PhantomData;
use std::mem::size_of;

type R<T> = <T as Scalar>::Real;
type GResult = hyblas::gpu::Result<()>;

macro_rules! for_each_type {
    ($f:ident, $rt:expr) => {
        $f::<f32>($rt);
        $f::<f64>($rt);
        $f::<Cf>($rt);
        $f::<Cd>($rt);
    };
}

// ---------------------------------------------------------------------------------------
// Host storage of strided vectors (as reference BLAS lays them out) and device copies.

/// Memory index of logical element `i` of an `n`-vector with increment `inc`.
fn pos(n: usize, inc: isize, i: usize) -> usize {
    if inc >= 0 {
        i * inc as usize
    } else {
        (n - 1 - i) * inc.unsigned_abs()
    }
}

fn buf_len(n: usize, inc: isize) -> usize {
    if n == 0 {
        1
    } else {
        1 + (n - 1) * inc.unsigned_abs()
    }
}

/// Random elements at the vector's positions, poison in the gaps.
fn strided<T: Scalar>(rng: &mut Rng, n: usize, inc: isize) -> Vec<T> {
    let mut b = vec![poison::<T>(); buf_len(n, inc)];
    for i in 0..n {
        b[pos(n, inc, i)] = rng.scalar();
    }
    b
}

fn cplx<T: Scalar>(re: f64, im: f64) -> T {
    T::from_parts(<R<T> as Scalar>::from_f64(re), <R<T> as Scalar>::from_f64(im))
}

/// Same bits (any NaN equals any NaN).
fn same<T: Scalar>(a: T, b: T) -> bool {
    let (a, b) = (to_c64(a), to_c64(b));
    let eq = |x: f64, y: f64| x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan());
    eq(a.re, b.re) && eq(a.im, b.im)
}

fn assert_same<T: Scalar>(got: &[T], want: &[T], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        assert!(same(g, w), "{what}: index {i}: got {g:?}, want {w:?}");
    }
}

/// |got - want| <= tol(k) * scale (or the same bits).
fn near<T: Scalar>(got: T, want: T, k: usize, scale: f64) -> bool {
    same(got, want) || (to_c64(got) - to_c64(want)).norm() <= tol::<T>(k) * scale
}

/// Elementwise `near` with each element's own magnitude (at least 1) as the scale.
fn assert_near<T: Scalar>(got: &[T], want: &[T], k: usize, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        assert!(near(g, w, k, to_c64(w).norm().max(1.0)), "{what}: index {i}: got {g:?}, want {w:?}");
    }
}

/// A device copy of a host buffer, `off` elements into an allocation whose other elements
/// (the `off` before, one after) are poison: guards that show a write outside the vector.
struct Dv<T> {
    buf: DeviceBuffer,
    off: usize,
    len: usize,
    _t: PhantomData<T>,
}

impl<T: Scalar> Dv<T> {
    fn new(host: &[T], off: usize) -> Self {
        let mut full = vec![poison::<T>(); off];
        full.extend_from_slice(host);
        full.push(poison());
        Dv { buf: DeviceBuffer::from_slice(&full).expect("upload"), off, len: host.len(), _t: PhantomData }
    }
    fn ptr(&self) -> u64 {
        self.buf.ptr + (self.off * size_of::<T>()) as u64
    }
    fn v(&self, inc: isize) -> DVec {
        DVec { ptr: self.ptr(), inc: inc as i64 }
    }
    /// The vector's storage, after checking the guards.
    fn read(&self, what: &str) -> Vec<T> {
        let full: Vec<T> = self.buf.to_vec().expect("download");
        for (i, &g) in full[..self.off].iter().chain(&full[self.off + self.len..]).enumerate() {
            assert!(same(g, poison::<T>()), "{what}: guard {i} written: {g:?}");
        }
        full[self.off..self.off + self.len].to_vec()
    }
}

/// Offsets (elements) to try: aligned, and one element off (strided kernels; z stays aligned).
const OFFS: [usize; 2] = [0, 1];

/// Sizes: tiny, odd, around the reductions' minimum chunk length q (and a few chunks).
fn sizes<T>() -> Vec<usize> {
    let q = gl1::chunk_len::<T>(1) as usize;
    vec![0, 1, 2, 3, 5, 17, 31, 32, 33, 100, 1000, q - 1, q, q + 1, 2 * q + 5, 7 * q + 3]
}

/// Large enough for more chunks than the combining kernel has slots (1024) in every precision.
const BIG: usize = (1 << 20) + 3;

unsafe fn vr<T>(b: &[T], n: usize, inc: isize) -> VecRef<T> {
    VecRef::from_blas(b.as_ptr(), n, inc)
}
unsafe fn vm<T>(b: &mut [T], n: usize, inc: isize) -> VecMut<T> {
    VecMut::from_blas(b.as_mut_ptr(), n, inc)
}

// ---------------------------------------------------------------------------------------
// Scalars and results in both pointer modes.

#[derive(Clone, Copy, Debug, PartialEq)]
enum Mode {
    Host,
    Dev,
}
const MODES: [Mode; 2] = [Mode::Host, Mode::Dev];

/// A scalar input in `mode` (the device copy lives as long as the returned buffer).
fn scalar_in<T: Scalar>(v: T, mode: Mode) -> (In<T>, Option<DeviceBuffer>) {
    match mode {
        Mode::Host => (In::Host(v), None),
        Mode::Dev => {
            let b = DeviceBuffer::from_slice(&[v]).expect("upload scalar");
            (In::Dev(b.ptr), Some(b))
        }
    }
}

/// Run `f` with a poisoned scalar output in `mode` and return what it wrote. A host result
/// is read right after the call (the call must have waited); a device one after a sync.
fn with_out<V: Scalar>(ex: &Exec, mode: Mode, f: impl FnOnce(Out<V>) -> GResult) -> V {
    match mode {
        Mode::Host => {
            let mut v = poison::<V>();
            f(Out::Host(&mut v)).expect("call");
            v
        }
        Mode::Dev => {
            let b = DeviceBuffer::from_slice(&[poison::<V>()]).expect("upload");
            f(Out::Dev(b.ptr)).expect("call");
            ex.rt.sync(ex.stream).expect("sync");
            b.to_vec::<V>().expect("download")[0]
        }
    }
}

/// The four index outputs: host/device x 32/64-bit.
const INDEX_MODES: [&str; 4] = ["host32", "host64", "dev32", "dev64"];

/// Run `f` with a poisoned index output of kind `mode` and return what it wrote.
fn with_index(ex: &Exec, mode: &str, f: impl FnOnce(IndexOut) -> GResult) -> i64 {
    match mode {
        "host32" => {
            let mut v: i32 = -777;
            f(IndexOut::Host32(&mut v)).expect("call");
            v as i64
        }
        "host64" => {
            let mut v: i64 = -777;
            f(IndexOut::Host64(&mut v)).expect("call");
            v
        }
        "dev32" => {
            let b = DeviceBuffer::from_slice(&[-777i32, -777]).expect("upload");
            f(IndexOut::Dev32(b.ptr)).expect("call");
            ex.rt.sync(ex.stream).expect("sync");
            let v = b.to_vec::<i32>().expect("download");
            assert_eq!(v[1], -777, "dev32 index wrote past 4 bytes");
            v[0] as i64
        }
        _ => {
            let b = DeviceBuffer::from_slice(&[-777i64]).expect("upload");
            f(IndexOut::Dev64(b.ptr)).expect("call");
            ex.rt.sync(ex.stream).expect("sync");
            b.to_vec::<i64>().expect("download")[0]
        }
    }
}

// ---------------------------------------------------------------------------------------
// AXPY (fused on the GPU, so to rounding), SCAL, COPY, SWAP (bit for bit).

fn check_axpy<T: Scalar>(rt: &'static Runtime) {
    let ex = Exec::own(rt);
    let mut rng = Rng::new(0xa1);
    // incy = 0 is left out: the reference's sequential sum into one element has no parallel
    // equivalent (callers keep it on the CPU).
    let incs = [(1, 1), (2, 1), (1, -2), (-1, -1), (-3, 2), (0, 1)];
    let alphas = [T::zero(), T::one(), cplx::<T>(-0.75, 0.5)];
    for n in sizes::<T>() {
        for (incx, incy) in incs {
            for alpha in alphas {
                for off in OFFS {
                    for mode in MODES {
                        let what = format!(
                            "{}axpy n={n} incx={incx} incy={incy} alpha={alpha:?} off={off} {mode:?}",
                            T::PREFIX
                        );
                        let x = strided::<T>(&mut rng, n, incx);
                        let y = strided::<T>(&mut rng, n, incy);
                        let mut want = y.clone();
                        unsafe { cpu::axpy(alpha, vr(&x, n, incx), vm(&mut want, n, incy)) };
                        let (dx, dy) = (Dv::new(&x, off), Dv::new(&y, off));
                        let (a, _keep) = scalar_in(alpha, mode);
                        gl1::axpy::<T>(&ex, n as i64, a, dx.v(incx), dy.v(incy)).expect(&what);
                        rt.sync(ex.stream).unwrap();
                        assert_near(&dy.read(&what), &want, 2, &what);
                        assert_same(&dx.read(&what), &x, &format!("{what}: x"));
                    }
                }
            }
        }
    }
}

#[test]
fn axpy_matches_cpu() {
    let Some(rt) = gpu_or_skip("axpy_matches_cpu") else { return };
    for_each_type!(check_axpy, rt);
}

fn check_scal<T: Scalar>(rt: &'static Runtime) {
    let ex = Exec::own(rt);
    let mut rng = Rng::new(0x5ca1);
    let alphas = [T::zero(), T::one(), cplx::<T>(-0.75, 0.5), cplx::<T>(0.0, 1.0)];
    let reals: [R<T>; 3] = [0.0, 1.0, -1.25].map(<R<T> as Scalar>::from_f64);
    for n in sizes::<T>() {
        for incx in [1isize, 2, 3] {
            for off in OFFS {
                for mode in MODES {
                    let what = format!("{}scal n={n} incx={incx} off={off} {mode:?}", T::PREFIX);
                    for alpha in alphas {
                        let x = strided::<T>(&mut rng, n, incx);
                        let mut want = x.clone();
                        // alpha == 1 is a quick return (the reference's, and the CPU ABI's).
                        if !alpha.is_one() {
                            unsafe { cpu::scal(alpha, vm(&mut want, n, incx)) };
                        }
                        let dx = Dv::new(&x, off);
                        let (a, _keep) = scalar_in(alpha, mode);
                        gl1::scal::<T, T>(&ex, n as i64, a, dx.v(incx)).expect(&what);
                        rt.sync(ex.stream).unwrap();
                        assert_same(&dx.read(&what), &want, &format!("{what} alpha={alpha:?}"));
                    }
                    // csscal / zdscal (and ?scal again for real types).
                    for alpha in reals {
                        let x = strided::<T>(&mut rng, n, incx);
                        let mut want = x.clone();
                        if alpha != <R<T> as Scalar>::one() {
                            unsafe { cpu::scal_real(alpha, vm(&mut want, n, incx)) };
                        }
                        let dx = Dv::new(&x, off);
                        let (a, _keep) = scalar_in(alpha, mode);
                        gl1::scal::<T, R<T>>(&ex, n as i64, a, dx.v(incx)).expect(&what);
                        rt.sync(ex.stream).unwrap();
                        assert_same(&dx.read(&what), &want, &format!("{what} real alpha={alpha:?}"));
                    }
                }
            }
        }
    }
    // Quick returns: n <= 0, incx <= 0 touch nothing.
    for (n, incx) in [(3i64, 0isize), (3, -1), (0, 1), (-2, 1)] {
        let x = strided::<T>(&mut rng, 4, 1);
        let dx = Dv::new(&x, 0);
        for mode in MODES {
            let (a, _keep) = scalar_in(cplx::<T>(2.0, 1.0), mode);
            gl1::scal::<T, T>(&ex, n, a, dx.v(incx)).unwrap();
            let (a, _keep) = scalar_in(<R<T> as Scalar>::from_f64(2.0), mode);
            gl1::scal::<T, R<T>>(&ex, n, a, dx.v(incx)).unwrap();
        }
        rt.sync(ex.stream).unwrap();
        assert_same(&dx.read("scal quick"), &x, &format!("{}scal quick return n={n} incx={incx}", T::PREFIX));
    }
    // alpha = 0 multiplies (NaN and Inf become NaN) ...
    for mode in MODES {
        let x = [cplx::<T>(f64::NAN, 1.0), cplx::<T>(f64::INFINITY, 1.0), cplx::<T>(1.0, 1.0)];
        let dx = Dv::new(&x, 0);
        let (a, _keep) = scalar_in(T::zero(), mode);
        gl1::scal::<T, T>(&ex, 3, a, dx.v(1)).unwrap();
        rt.sync(ex.stream).unwrap();
        let got = dx.read("scal 0");
        assert!(to_c64(got[0]).re.is_nan() && to_c64(got[1]).re.is_nan(), "0*NaN, 0*Inf: {got:?}");
        assert!(to_c64(got[2]).norm() == 0.0, "0*1: {got:?}");
        // ... and alpha = 1 (host or device) returns at once: a complex Inf keeps its zero part.
        let x = [cplx::<T>(f64::INFINITY, 0.0)];
        let dx = Dv::new(&x, 0);
        let (a, _keep) = scalar_in(T::one(), mode);
        gl1::scal::<T, T>(&ex, 1, a, dx.v(1)).unwrap();
        rt.sync(ex.stream).unwrap();
        assert_same(&dx.read("scal 1"), &x, "scal by 1 leaves Inf as it is");
    }
}

#[test]
fn scal_matches_cpu() {
    let Some(rt) = gpu_or_skip("scal_matches_cpu") else { return };
    for_each_type!(check_scal, rt);
    // alpha of neither the vector's type nor its real type.
    let ex = Exec::own(rt);
    let r = gl1::scal::<f32, f64>(&ex, 4, In::Host(2.0), DVec { ptr: 0, inc: 1 });
    assert!(matches!(r, Err(GpuError::Unsupported(_))), "{r:?}");
}

fn check_copy_swap<T: Scalar>(rt: &'static Runtime) {
    let ex = Exec::own(rt);
    let mut rng = Rng::new(0xc0);
    let incs = [(1, 1), (2, 1), (1, -2), (-1, -1), (-3, 2), (0, 1), (1, 0), (-2, 0)];
    for n in sizes::<T>() {
        for (incx, incy) in incs {
            for off in OFFS {
                let what = format!("{}copy n={n} incx={incx} incy={incy} off={off}", T::PREFIX);
                let x = strided::<T>(&mut rng, n, incx);
                let y = strided::<T>(&mut rng, n, incy);
                let mut want = y.clone();
                unsafe { cpu::copy(vr(&x, n, incx), vm(&mut want, n, incy)) };
                let (dx, dy) = (Dv::new(&x, off), Dv::new(&y, off));
                gl1::copy::<T>(&ex, n as i64, dx.v(incx), dy.v(incy)).expect(&what);
                rt.sync(ex.stream).unwrap();
                assert_same(&dy.read(&what), &want, &what);
                assert_same(&dx.read(&what), &x, &format!("{what}: x"));

                let what = format!("{}swap n={n} incx={incx} incy={incy} off={off}", T::PREFIX);
                let (dx, dy) = (Dv::new(&x, off), Dv::new(&y, off));
                let r = gl1::swap::<T>(&ex, n as i64, dx.v(incx), dy.v(incy));
                if n > 0 && (incx == 0 || incy == 0) {
                    assert!(matches!(r, Err(GpuError::Unsupported(_))), "{what}: {r:?}");
                    continue;
                }
                r.expect(&what);
                let (mut wx, mut wy) = (x.clone(), y.clone());
                unsafe { cpu::swap(vm(&mut wx, n, incx), vm(&mut wy, n, incy)) };
                rt.sync(ex.stream).unwrap();
                assert_same(&dx.read(&what), &wx, &format!("{what}: x"));
                assert_same(&dy.read(&what), &wy, &format!("{what}: y"));
            }
        }
    }
}

#[test]
fn copy_swap_match_cpu() {
    let Some(rt) = gpu_or_skip("copy_swap_match_cpu") else { return };
    for_each_type!(check_copy_swap, rt);
}

// ---------------------------------------------------------------------------------------
// Reductions.

/// sum |x_i| |y_i| over the logical elements: the scale a dot product's error is bounded by.
fn dot_scale<T: Scalar>(x: &[T], incx: isize, y: &[T], incy: isize, n: usize) -> f64 {
    (0..n).map(|i| to_c64(x[pos(n, incx, i)]).norm() * to_c64(y[pos(n, incy, i)]).norm()).sum::<f64>().max(1.0)
}

/// Terms whose rounding errors a tolerance allows for: both engines sum in blocked orders.
fn terms(n: usize) -> usize {
    n.min(4096)
}

fn check_dot<T: Scalar>(rt: &'static Runtime) {
    let ex = Exec::own(rt);
    let mut rng = Rng::new(0xd07);
    let incs = [(1, 1), (2, 1), (1, -2), (-1, -1), (-3, 2), (0, 1)];
    let mut ns = sizes::<T>();
    ns.push(BIG);
    for n in ns {
        for (incx, incy) in incs {
            if n == BIG && incx == 0 {
                continue;
            }
            for conj in [false, true] {
                for off in OFFS {
                    let x = strided::<T>(&mut rng, n, incx);
                    let y = strided::<T>(&mut rng, n, incy);
                    let want = unsafe { cpu::dot(conj, vr(&x, n, incx), vr(&y, n, incy)) };
                    let scale = dot_scale(&x, incx, &y, incy, n);
                    let (dx, dy) = (Dv::new(&x, off), Dv::new(&y, off));
                    for mode in MODES {
                        let what =
                            format!("{}dot n={n} incx={incx} incy={incy} conj={conj} off={off} {mode:?}", T::PREFIX);
                        let got =
                            with_out(&ex, mode, |o| gl1::dot::<T>(&ex, n as i64, dx.v(incx), dy.v(incy), conj, o));
                        assert!(near(got, want, terms(n), scale), "{what}: got {got:?}, want {want:?}");
                        if n == 0 {
                            assert_same(&[got], &[T::zero()], &what);
                        }
                    }
                    assert_same(&dx.read("dot x"), &x, "dot leaves x");
                    assert_same(&dy.read("dot y"), &y, "dot leaves y");
                }
            }
        }
    }
    // n < 0 writes 0 too.
    for mode in MODES {
        let got =
            with_out(&ex, mode, |o| gl1::dot::<T>(&ex, -3, DVec { ptr: 0, inc: 1 }, DVec { ptr: 0, inc: 1 }, false, o));
        assert_same(&[got], &[T::zero()], "dot n < 0");
    }
}

#[test]
fn dot_matches_cpu() {
    let Some(rt) = gpu_or_skip("dot_matches_cpu") else { return };
    for_each_type!(check_dot, rt);
}

/// Relative closeness for results that do not cancel (norms, absolute sums).
fn near_rel<V: Scalar>(got: V, want: V, k: usize) -> bool {
    same(got, want) || (to_c64(got) - to_c64(want)).norm() <= tol::<V>(k) * to_c64(want).norm()
}

fn check_nrm2_asum<T: Scalar>(rt: &'static Runtime) {
    let ex = Exec::own(rt);
    let mut rng = Rng::new(0x42);
    let mut ns = sizes::<T>();
    ns.push(BIG);
    for n in ns {
        for incx in [1isize, 2, 3] {
            for off in OFFS {
                let x = strided::<T>(&mut rng, n, incx);
                let dx = Dv::new(&x, off);
                let want_n = unsafe { cpu::nrm2(vr(&x, n, incx)) };
                let want_a = unsafe { cpu::asum(vr(&x, n, incx)) };
                for mode in MODES {
                    let what = format!("{} n={n} incx={incx} off={off} {mode:?}", T::PREFIX);
                    let got = with_out(&ex, mode, |o| gl1::nrm2::<T>(&ex, n as i64, dx.v(incx), o));
                    assert!(near_rel(got, want_n, terms(n)), "nrm2 {what}: got {got:?}, want {want_n:?}");
                    let got = with_out(&ex, mode, |o| gl1::asum::<T>(&ex, n as i64, dx.v(incx), o));
                    assert!(near_rel(got, want_a, terms(n)), "asum {what}: got {got:?}, want {want_a:?}");
                }
                assert_same(&dx.read("nrm2/asum x"), &x, "nrm2/asum leave x");
            }
        }
    }
    // Quick returns write 0: n <= 0, incx <= 0.
    let x = strided::<T>(&mut rng, 8, 1);
    let dx = Dv::new(&x, 0);
    let zero = <R<T> as Scalar>::zero();
    for (n, incx) in [(0i64, 1isize), (-1, 1), (4, 0), (4, -1)] {
        for mode in MODES {
            let got = with_out(&ex, mode, |o| gl1::nrm2::<T>(&ex, n, dx.v(incx), o));
            assert_same(&[got], &[zero], &format!("nrm2 quick n={n} incx={incx} {mode:?}"));
            let got = with_out(&ex, mode, |o| gl1::asum::<T>(&ex, n, dx.v(incx), o));
            assert_same(&[got], &[zero], &format!("asum quick n={n} incx={incx} {mode:?}"));
        }
    }
    // NRM2 without overflow or underflow: values whose squares leave the precision's range,
    // alone and mixed with mid-range ones, against the CPU engine (Blue's algorithm).
    let big = if size_of::<R<T>>() == 4 { 2f64.powi(100) } else { 2f64.powi(600) };
    let q = gl1::chunk_len::<T>(1) as usize;
    for n in [1, 7, 3 * q + 11] {
        for scales in [[big, big], [1.0 / big, 1.0 / big], [big, 1.0], [1.0 / big, 1.0], [big, 1.0 / big]] {
            let x: Vec<T> = (0..n)
                .map(|i| {
                    let s = scales[i % 2];
                    cplx::<T>(rng.unit() * s, rng.unit() * s)
                })
                .collect();
            let want = unsafe { cpu::nrm2(vr(&x, n, 1)) };
            let dx = Dv::new(&x, 0);
            for mode in MODES {
                let got = with_out(&ex, mode, |o| gl1::nrm2::<T>(&ex, n as i64, dx.v(1), o));
                let w = to_c64(want).re;
                assert!(w.is_finite() && w > 0.0, "reference nrm2 {w}");
                assert!(
                    near_rel(got, want, terms(n)),
                    "{}nrm2 n={n} scales={scales:?}: got {got:?}, want {want:?}",
                    T::PREFIX
                );
            }
        }
    }
    // NaN gives NaN, Inf gives Inf, Inf and NaN give NaN.
    for (vals, expect_nan) in
        [(vec![1.0, f64::NAN, 2.0], true), (vec![1.0, f64::INFINITY], false), (vec![f64::INFINITY, f64::NAN], true)]
    {
        let x: Vec<T> = vals.iter().map(|&v| cplx::<T>(v, 0.5)).collect();
        let dx = Dv::new(&x, 0);
        for mode in MODES {
            let got = to_c64(with_out(&ex, mode, |o| gl1::nrm2::<T>(&ex, x.len() as i64, dx.v(1), o))).re;
            assert!(if expect_nan { got.is_nan() } else { got == f64::INFINITY }, "nrm2 of {vals:?}: {got}");
        }
    }
}

#[test]
fn nrm2_asum_match_cpu() {
    let Some(rt) = gpu_or_skip("nrm2_asum_match_cpu") else { return };
    for_each_type!(check_nrm2_asum, rt);
}

/// i?amax as BLAS returns it (1-based, 0 for nothing), from the CPU engine.
fn cpu_iamax<T: Scalar>(x: &[T], n: usize, inc: isize) -> i64 {
    if n == 0 || inc <= 0 {
        0
    } else {
        unsafe { cpu::iamax(vr(x, n, inc)) as i64 + 1 }
    }
}

fn check_iamax<T: Scalar>(rt: &'static Runtime) {
    let ex = Exec::own(rt);
    let mut rng = Rng::new(0x1a);
    let mut ns = sizes::<T>();
    ns.push(BIG);
    for n in ns {
        for incx in [1isize, 2, 3] {
            for off in OFFS {
                let x = strided::<T>(&mut rng, n, incx);
                let dx = Dv::new(&x, off);
                let want = cpu_iamax(&x, n, incx);
                for mode in INDEX_MODES {
                    let got = with_index(&ex, mode, |o| gl1::iamax::<T>(&ex, n as i64, dx.v(incx), o));
                    assert_eq!(got, want, "i{}amax n={n} incx={incx} off={off} {mode}", T::PREFIX);
                }
            }
        }
    }
    // Quick returns give 0.
    let x = strided::<T>(&mut rng, 4, 1);
    let dx = Dv::new(&x, 0);
    for (n, incx) in [(0i64, 1isize), (-1, 1), (4, 0), (4, -2)] {
        for mode in INDEX_MODES {
            assert_eq!(with_index(&ex, mode, |o| gl1::iamax::<T>(&ex, n, dx.v(incx), o)), 0, "quick n={n} incx={incx}");
        }
    }
    // Ties, Inf and NaN, at and around chunk edges: the CPU engine's answer every time
    // (first maximum; NaN never chosen except at element 1, which then wins).
    let q = gl1::chunk_len::<T>(1) as usize;
    let nan = f64::NAN;
    for n in [1, 2, 5, 33, q + 7, 3 * q + 1] {
        let spots = [0, 1.min(n - 1), n / 2, n.saturating_sub(1), q.min(n - 1), (q - 1).min(n - 1)];
        let cases: Vec<Vec<(usize, T)>> = vec![
            vec![(spots[2], cplx(5.0, 0.0)), (spots[3], cplx(5.0, 0.0))],
            vec![(spots[4], cplx(3.0, 3.0)), (spots[5], cplx(3.0, 3.0)), (spots[3], cplx(-6.0, 0.0))],
            vec![(0, cplx(nan, 0.0))],
            vec![(0, cplx(nan, 0.0)), (spots[2], cplx(f64::INFINITY, 0.0))],
            vec![(spots[2], cplx(nan, 1.0)), (spots[3], cplx(nan, nan))],
            vec![(spots[1], cplx(f64::INFINITY, 0.0)), (spots[3], cplx(f64::NEG_INFINITY, 0.0))],
            vec![(spots[3], cplx(2.0, nan)), (spots[2], cplx(1.5, 0.0))],
        ];
        for (ci, case) in cases.iter().enumerate() {
            let mut x = strided::<T>(&mut rng, n, 1);
            for &(i, v) in case {
                x[i] = v;
            }
            let want = cpu_iamax(&x, n, 1);
            // All NaN: element 1 is NaN, so the answer is 1.
            let all_nan: Vec<T> = vec![cplx(nan, 0.0); n];
            for (x, want) in [(&x, want), (&all_nan, 1)] {
                for off in OFFS {
                    let dx = Dv::new(x, off);
                    for mode in INDEX_MODES {
                        let got = with_index(&ex, mode, |o| gl1::iamax::<T>(&ex, n as i64, dx.v(1), o));
                        assert_eq!(got, want, "i{}amax special case {ci} n={n} off={off} {mode}", T::PREFIX);
                    }
                }
            }
        }
    }
}

#[test]
fn iamax_matches_cpu() {
    let Some(rt) = gpu_or_skip("iamax_matches_cpu") else { return };
    for_each_type!(check_iamax, rt);
}

/// Small integers: every partial sum of the reductions is exact in every precision, so the
/// results must equal exact references whatever the order (what rounding tolerances cannot
/// show at 2^20 elements in single precision: that no element is dropped or taken twice).
fn check_exact<T: Scalar>(rt: &'static Runtime) {
    let ex = Exec::own(rt);
    let mut rng = Rng::new(0xe8);
    let q = gl1::chunk_len::<T>(1) as usize;
    let int = |rng: &mut Rng| (rng.next_u64() % 5) as f64 - 2.0;
    for n in [1, 3, q + 1, 7 * q + 3, BIG] {
        for (incx, incy) in [(1isize, 1isize), (-2, 3)] {
            let mut x = strided::<T>(&mut rng, n, incx);
            let mut y = strided::<T>(&mut rng, n, incy);
            for i in 0..n {
                x[pos(n, incx, i)] = cplx(int(&mut rng), int(&mut rng));
                y[pos(n, incy, i)] = cplx(int(&mut rng), int(&mut rng));
            }
            let (xs, ys): (Vec<Cd>, Vec<Cd>) =
                (0..n).map(|i| (to_c64(x[pos(n, incx, i)]), to_c64(y[pos(n, incy, i)]))).unzip();
            let dotu: Cd = xs.iter().zip(&ys).map(|(a, b)| a * b).sum();
            let dotc: Cd = xs.iter().zip(&ys).map(|(a, b)| a.conj() * b).sum();
            let asum: f64 = xs.iter().map(|a| a.re.abs() + a.im.abs()).sum();
            let ssq: f64 = xs.iter().map(|a| a.norm_sqr()).sum();
            let incp = incx.abs();
            for off in OFFS {
                let (dx, dy) = (Dv::new(&x, off), Dv::new(&y, off));
                for mode in MODES {
                    let what = format!("{} n={n} incx={incx} incy={incy} off={off} {mode:?}", T::PREFIX);
                    for (conj, want) in [(false, dotu), (true, dotc)] {
                        let want: T = cplx(want.re, if T::IS_COMPLEX { want.im } else { 0.0 });
                        let got =
                            with_out(&ex, mode, |o| gl1::dot::<T>(&ex, n as i64, dx.v(incx), dy.v(incy), conj, o));
                        assert_same(&[got], &[want], &format!("exact dot conj={conj} {what}"));
                    }
                    let got = with_out(&ex, mode, |o| gl1::asum::<T>(&ex, n as i64, dx.v(incp), o));
                    assert_same(&[got], &[<R<T> as Scalar>::from_f64(asum)], &format!("exact asum {what}"));
                    let got = with_out(&ex, mode, |o| gl1::nrm2::<T>(&ex, n as i64, dx.v(incp), o));
                    let want = <R<T> as Scalar>::from_f64(ssq.sqrt());
                    assert!(near_rel(got, want, 0), "exact nrm2 {what}: got {got:?}, want {want:?}");
                }
            }
        }
    }
}

#[test]
fn reductions_are_exact_on_integers() {
    let Some(rt) = gpu_or_skip("reductions_are_exact_on_integers") else { return };
    for_each_type!(check_exact, rt);
}

// ---------------------------------------------------------------------------------------
// Bitwise reproducibility.

/// All reduction results of one configuration, as bits.
fn reduction_bits<T: Scalar>(ex: &Exec, n: usize, x: &Dv<T>, y: &Dv<T>, incx: isize, incy: isize) -> Vec<u64> {
    let mut bits = Vec::new();
    let mut push = |v: Cd| {
        bits.push(v.re.to_bits());
        bits.push(v.im.to_bits());
    };
    for conj in [false, true] {
        push(to_c64(with_out(ex, Mode::Host, |o| gl1::dot::<T>(ex, n as i64, x.v(incx), y.v(incy), conj, o))));
        push(to_c64(with_out(ex, Mode::Dev, |o| gl1::dot::<T>(ex, n as i64, x.v(incx), y.v(incy), conj, o))));
    }
    let incp = incx.abs();
    push(to_c64(with_out(ex, Mode::Host, |o| gl1::nrm2::<T>(ex, n as i64, x.v(incp), o))));
    push(to_c64(with_out(ex, Mode::Dev, |o| gl1::asum::<T>(ex, n as i64, x.v(incp), o))));
    bits.push(with_index(ex, "dev64", |o| gl1::iamax::<T>(ex, n as i64, x.v(incp), o)) as u64);
    bits
}

fn check_determinism<T: Scalar>(rt: &'static Runtime) {
    let ex = Exec::own(rt);
    let mut rng = Rng::new(0xde7);
    let q = gl1::chunk_len::<T>(1) as usize;
    for n in [3 * q + 5, BIG] {
        for (incx, incy) in [(1isize, 1isize), (-2, 3)] {
            let x = strided::<T>(&mut rng, n, incx);
            let y = strided::<T>(&mut rng, n, incy);
            let mut runs = Vec::new();
            for off in OFFS {
                let (dx, dy) = (Dv::new(&x, off), Dv::new(&y, off));
                for (tx, ty) in [(32, 1), (32, 4), (32, 32), (256, 1), (96, 2)] {
                    let bits = tune::with_shape(tx, ty, || reduction_bits(&ex, n, &dx, &dy, incx, incy));
                    runs.push((off, tx, ty, bits));
                }
                // The tuner's own choice, twice (run to run).
                runs.push((off, 0, 0, reduction_bits(&ex, n, &dx, &dy, incx, incy)));
                runs.push((off, 0, 1, reduction_bits(&ex, n, &dx, &dy, incx, incy)));
            }
            for r in &runs[1..] {
                assert_eq!(
                    r.3,
                    runs[0].3,
                    "{} n={n} incx={incx} incy={incy}: offset {} shape ({}, {}) differs from offset {} shape ({}, {})",
                    T::PREFIX,
                    r.0,
                    r.1,
                    r.2,
                    runs[0].0,
                    runs[0].1,
                    runs[0].2
                );
            }
        }
    }
}

#[test]
fn reductions_are_bitwise_reproducible_across_shapes_and_alignment() {
    let Some(rt) = gpu_or_skip("reductions_are_bitwise_reproducible_across_shapes_and_alignment") else { return };
    for_each_type!(check_determinism, rt);
}

// ---------------------------------------------------------------------------------------
// Streams, sizes over 2 GiB, the tuning cases.

/// The legacy default stream (a cuBLAS handle's stream 0) works too, with host results.
#[test]
fn legacy_default_stream() {
    let Some(rt) = gpu_or_skip("legacy_default_stream") else { return };
    let ex = Exec { rt, stream: std::ptr::null_mut() };
    let mut rng = Rng::new(5);
    let n = 5000;
    let x = strided::<f64>(&mut rng, n, 1);
    let y = strided::<f64>(&mut rng, n, 1);
    let (dx, dy) = (Dv::new(&x, 0), Dv::new(&y, 0));
    let want = unsafe { cpu::dot(false, vr(&x, n, 1), vr(&y, n, 1)) };
    for mode in MODES {
        let got = with_out(&ex, mode, |o| gl1::dot::<f64>(&ex, n as i64, dx.v(1), dy.v(1), false, o));
        assert!(near(got, want, n, dot_scale(&x, 1, &y, 1, n)), "{got} vs {want}");
    }
    let want = cpu_iamax(&x, n, 1);
    assert_eq!(with_index(&ex, "host32", |o| gl1::iamax::<f64>(&ex, n as i64, dx.v(1), o)), want);
}

/// One vector of 2^29 + 7 floats (2 GiB + 28 bytes): byte offsets past 2^31 on every path.
#[test]
fn huge_vector_over_2gib() {
    let Some(rt) = gpu_or_skip("huge_vector_over_2gib") else { return };
    let ex = Exec::own(rt);
    let n: usize = (1 << 29) + 7;
    let x = DeviceBuffer::new(n * 4).expect("2 GiB");
    let set = |i: usize, v: f32| {
        check(unsafe { sys::cuMemcpyHtoD_v2(x.ptr + (i * 4) as u64, &v as *const f32 as *const _, 4) }, "HtoD").unwrap()
    };
    let get = |i: usize| -> f32 {
        let mut v = 0f32;
        check(unsafe { sys::cuMemcpyDtoH_v2(&mut v as *mut f32 as *mut _, x.ptr + (i * 4) as u64, 4) }, "DtoH")
            .unwrap();
        v
    };
    check(unsafe { sys::cuMemsetD32_v2(x.ptr, 1f32.to_bits(), n) }, "memset").unwrap();
    set(n - 1, 5.0);
    set(n - 3, -7.0);
    let xv = DVec { ptr: x.ptr, inc: 1 };
    // Exact sums: n - 2 ones, 5 and -7 (the f32 results within a few ulps).
    let abs_sum = (n - 2) as f64 + 12.0;
    let sq_sum = (n - 2) as f64 + 74.0;
    let close = |got: f32, want: f64| ((got as f64 - want) / want).abs() < 1e-6;
    for mode in MODES {
        let a = with_out(&ex, mode, |o| gl1::asum::<f32>(&ex, n as i64, xv, o));
        assert!(close(a, abs_sum), "sasum {a} vs {abs_sum}");
        let r = with_out(&ex, mode, |o| gl1::nrm2::<f32>(&ex, n as i64, xv, o));
        assert!(close(r, sq_sum.sqrt()), "snrm2 {r} vs {}", sq_sum.sqrt());
        let d = with_out(&ex, mode, |o| gl1::dot::<f32>(&ex, n as i64, xv, xv, false, o));
        assert!(close(d, sq_sum), "sdot {d} vs {sq_sum}");
    }
    for mode in INDEX_MODES {
        assert_eq!(with_index(&ex, mode, |o| gl1::iamax::<f32>(&ex, n as i64, xv, o)), (n - 2) as i64, "isamax {mode}");
    }
    // Strided over the whole buffer: every other element, the last one included (n is odd).
    let m = n.div_ceil(2);
    let a = with_out(&ex, Mode::Host, |o| gl1::asum::<f32>(&ex, m as i64, DVec { ptr: x.ptr, inc: 2 }, o));
    assert!(close(a, (m - 2) as f64 + 12.0), "strided sasum {a}");
    // Negative increment: logical element 0 is the last in memory.
    let d = with_out(&ex, Mode::Host, |o| {
        gl1::dot::<f32>(&ex, m as i64, DVec { ptr: x.ptr, inc: -2 }, DVec { ptr: x.ptr, inc: 2 }, false, o)
    });
    // Pairs (x[n-1-2i], x[2i]): 5 and -7 each meet a 1 twice, everything else is 1 * 1.
    assert!(close(d, (m - 4) as f64 - 4.0), "strided negative sdot {d}");
    // Elementwise past 2 GiB: scale by 2 (vector and strided kernels), then axpy x += -0.5 x.
    gl1::scal::<f32, f32>(&ex, n as i64, In::Host(2.0), xv).unwrap();
    gl1::scal::<f32, f32>(&ex, m as i64, In::Host(3.0), DVec { ptr: x.ptr, inc: 2 }).unwrap();
    rt.sync(ex.stream).unwrap();
    assert_eq!((get(0), get(1), get(n - 1), get(n - 2), get(n - 3)), (6.0, 2.0, 30.0, 2.0, -42.0));
    gl1::axpy::<f32>(&ex, n as i64, In::Host(-0.5), xv, xv).unwrap();
    rt.sync(ex.stream).unwrap();
    assert_eq!((get(0), get(n - 1), get(n - 3)), (3.0, 15.0, -21.0));
}

/// Every tuning case (each kernel x precision at 2^26) runs once and reports a time.
#[test]
fn tune_cases_run() {
    let Some(rt) = gpu_or_skip("tune_cases_run") else { return };
    let mut cases = gl1::tune_cases(rt).expect("tune cases");
    let keys: Vec<String> = cases.iter().map(|c| c.key.clone()).collect();
    for p in ['s', 'd', 'c', 'z'] {
        for k in ["axpy", "scal", "copy", "swap", "dot", "nrm2", "asum", "amax"] {
            assert!(keys.contains(&format!("{p}{k}")), "missing tuning case {p}{k}: {keys:?}");
        }
    }
    for c in &mut cases {
        let t = (c.run)().unwrap_or_else(|e| panic!("{}: {e}", c.key));
        assert!(t > 0.0 && t < 1.0, "{}: {t} s", c.key);
    }
}
