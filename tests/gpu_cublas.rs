//! The cuBLAS entry layer (`abi::cublas`): hyblas's exports of cuBLAS's API (declared extern
//! here, so they resolve to hyblas's) against the real cuBLAS functions (`gpu::vendor::get`)
//! on the same fresh random data, with a user stream set on a real handle, in both pointer
//! modes and under every routing mode (auto, hyblas, vendor); bad arguments must give the
//! real cuBLAS's status and leave outputs untouched.
//!
//! Needs a GPU and a real cuBLAS (libcublas.so.13 or .12 on the loader path); without them the
//! GPU tests print SKIPPED. The policy and the no-cuBLAS behaviour are checked everywhere.

mod common;
use common::*;
#[path = "common/cublas.rs"]
mod harness;
use harness::*;
use hyblas::abi::cublas::{self as cb, Handle, Status};
use hyblas::gpu::driver::sys;
use hyblas::gpu::{tune, vendor, DeviceBuffer};
use hyblas::plan::gpu::{self as policy, with_mode, Mode, Route};
use hyblas::types::{Scalar, Trans, C32, C64};
use std::ffi::c_int;

type AxpyF<T, I> = unsafe extern "C" fn(Handle, I, *const T, *const T, I, *mut T, I) -> Status;
type ScalF<T, A, I> = unsafe extern "C" fn(Handle, I, *const A, *mut T, I) -> Status;
type CopyF<T, I> = unsafe extern "C" fn(Handle, I, *const T, I, *mut T, I) -> Status;
type SwapF<T, I> = unsafe extern "C" fn(Handle, I, *mut T, I, *mut T, I) -> Status;
type DotF<T, I> = unsafe extern "C" fn(Handle, I, *const T, I, *const T, I, *mut T) -> Status;
type RedF<T, R, I> = unsafe extern "C" fn(Handle, I, *const T, I, *mut R) -> Status;
type GemvF<T, I> =
    unsafe extern "C" fn(Handle, c_int, I, I, *const T, *const T, I, *const T, I, *const T, *mut T, I) -> Status;
type GerF<T, I> = unsafe extern "C" fn(Handle, I, I, *const T, *const T, I, *const T, I, *mut T, I) -> Status;
type TrmvF<T, I> = unsafe extern "C" fn(Handle, c_int, c_int, c_int, I, *const T, I, *mut T, I) -> Status;

extern "C" {
    fn cublasCreate_v2(handle: *mut Handle) -> Status;
    fn cublasGetVersion_v2(handle: Handle, version: *mut c_int) -> Status;
    fn cublasSetAtomicsMode(handle: Handle, mode: c_int) -> Status;
    fn cublasGetAtomicsMode(handle: Handle, mode: *mut c_int) -> Status;
    fn cublasSetMathMode(handle: Handle, mode: c_int) -> Status;
    fn cublasGetMathMode(handle: Handle, mode: *mut c_int) -> Status;
}

/// hyblas's exports of one size type (`_v2` or `_v2_64`), grouped by routine as s, d, c, z
/// pairs with the real functions.
macro_rules! entry_points {
    ($m:ident, $I:ty, $sfx:literal) => {
        #[allow(dead_code, clippy::type_complexity)]
        mod $m {
            use super::*;

            macro_rules! p {
                ($f:ident, $name:literal) => {
                    P { ours: $f as _, real: real(concat!($name, $sfx)), name: concat!($name, $sfx) }
                };
            }

            #[rustfmt::skip]
            extern "C" {
                #[link_name = concat!("cublasSaxpy", $sfx)] fn saxpy(h: Handle, n: $I, a: *const f32, x: *const f32, incx: $I, y: *mut f32, incy: $I) -> Status;
                #[link_name = concat!("cublasDaxpy", $sfx)] fn daxpy(h: Handle, n: $I, a: *const f64, x: *const f64, incx: $I, y: *mut f64, incy: $I) -> Status;
                #[link_name = concat!("cublasCaxpy", $sfx)] fn caxpy(h: Handle, n: $I, a: *const C32, x: *const C32, incx: $I, y: *mut C32, incy: $I) -> Status;
                #[link_name = concat!("cublasZaxpy", $sfx)] fn zaxpy(h: Handle, n: $I, a: *const C64, x: *const C64, incx: $I, y: *mut C64, incy: $I) -> Status;
                #[link_name = concat!("cublasSscal", $sfx)] fn sscal(h: Handle, n: $I, a: *const f32, x: *mut f32, incx: $I) -> Status;
                #[link_name = concat!("cublasDscal", $sfx)] fn dscal(h: Handle, n: $I, a: *const f64, x: *mut f64, incx: $I) -> Status;
                #[link_name = concat!("cublasCscal", $sfx)] fn cscal(h: Handle, n: $I, a: *const C32, x: *mut C32, incx: $I) -> Status;
                #[link_name = concat!("cublasZscal", $sfx)] fn zscal(h: Handle, n: $I, a: *const C64, x: *mut C64, incx: $I) -> Status;
                #[link_name = concat!("cublasCsscal", $sfx)] fn csscal(h: Handle, n: $I, a: *const f32, x: *mut C32, incx: $I) -> Status;
                #[link_name = concat!("cublasZdscal", $sfx)] fn zdscal(h: Handle, n: $I, a: *const f64, x: *mut C64, incx: $I) -> Status;
                #[link_name = concat!("cublasScopy", $sfx)] fn scopy(h: Handle, n: $I, x: *const f32, incx: $I, y: *mut f32, incy: $I) -> Status;
                #[link_name = concat!("cublasDcopy", $sfx)] fn dcopy(h: Handle, n: $I, x: *const f64, incx: $I, y: *mut f64, incy: $I) -> Status;
                #[link_name = concat!("cublasCcopy", $sfx)] fn ccopy(h: Handle, n: $I, x: *const C32, incx: $I, y: *mut C32, incy: $I) -> Status;
                #[link_name = concat!("cublasZcopy", $sfx)] fn zcopy(h: Handle, n: $I, x: *const C64, incx: $I, y: *mut C64, incy: $I) -> Status;
                #[link_name = concat!("cublasSswap", $sfx)] fn sswap(h: Handle, n: $I, x: *mut f32, incx: $I, y: *mut f32, incy: $I) -> Status;
                #[link_name = concat!("cublasDswap", $sfx)] fn dswap(h: Handle, n: $I, x: *mut f64, incx: $I, y: *mut f64, incy: $I) -> Status;
                #[link_name = concat!("cublasCswap", $sfx)] fn cswap(h: Handle, n: $I, x: *mut C32, incx: $I, y: *mut C32, incy: $I) -> Status;
                #[link_name = concat!("cublasZswap", $sfx)] fn zswap(h: Handle, n: $I, x: *mut C64, incx: $I, y: *mut C64, incy: $I) -> Status;
                #[link_name = concat!("cublasSdot", $sfx)] fn sdot(h: Handle, n: $I, x: *const f32, incx: $I, y: *const f32, incy: $I, r: *mut f32) -> Status;
                #[link_name = concat!("cublasDdot", $sfx)] fn ddot(h: Handle, n: $I, x: *const f64, incx: $I, y: *const f64, incy: $I, r: *mut f64) -> Status;
                #[link_name = concat!("cublasCdotu", $sfx)] fn cdotu(h: Handle, n: $I, x: *const C32, incx: $I, y: *const C32, incy: $I, r: *mut C32) -> Status;
                #[link_name = concat!("cublasCdotc", $sfx)] fn cdotc(h: Handle, n: $I, x: *const C32, incx: $I, y: *const C32, incy: $I, r: *mut C32) -> Status;
                #[link_name = concat!("cublasZdotu", $sfx)] fn zdotu(h: Handle, n: $I, x: *const C64, incx: $I, y: *const C64, incy: $I, r: *mut C64) -> Status;
                #[link_name = concat!("cublasZdotc", $sfx)] fn zdotc(h: Handle, n: $I, x: *const C64, incx: $I, y: *const C64, incy: $I, r: *mut C64) -> Status;
                #[link_name = concat!("cublasSnrm2", $sfx)] fn snrm2(h: Handle, n: $I, x: *const f32, incx: $I, r: *mut f32) -> Status;
                #[link_name = concat!("cublasDnrm2", $sfx)] fn dnrm2(h: Handle, n: $I, x: *const f64, incx: $I, r: *mut f64) -> Status;
                #[link_name = concat!("cublasScnrm2", $sfx)] fn scnrm2(h: Handle, n: $I, x: *const C32, incx: $I, r: *mut f32) -> Status;
                #[link_name = concat!("cublasDznrm2", $sfx)] fn dznrm2(h: Handle, n: $I, x: *const C64, incx: $I, r: *mut f64) -> Status;
                #[link_name = concat!("cublasSasum", $sfx)] fn sasum(h: Handle, n: $I, x: *const f32, incx: $I, r: *mut f32) -> Status;
                #[link_name = concat!("cublasDasum", $sfx)] fn dasum(h: Handle, n: $I, x: *const f64, incx: $I, r: *mut f64) -> Status;
                #[link_name = concat!("cublasScasum", $sfx)] fn scasum(h: Handle, n: $I, x: *const C32, incx: $I, r: *mut f32) -> Status;
                #[link_name = concat!("cublasDzasum", $sfx)] fn dzasum(h: Handle, n: $I, x: *const C64, incx: $I, r: *mut f64) -> Status;
                #[link_name = concat!("cublasIsamax", $sfx)] fn isamax(h: Handle, n: $I, x: *const f32, incx: $I, r: *mut $I) -> Status;
                #[link_name = concat!("cublasIdamax", $sfx)] fn idamax(h: Handle, n: $I, x: *const f64, incx: $I, r: *mut $I) -> Status;
                #[link_name = concat!("cublasIcamax", $sfx)] fn icamax(h: Handle, n: $I, x: *const C32, incx: $I, r: *mut $I) -> Status;
                #[link_name = concat!("cublasIzamax", $sfx)] fn izamax(h: Handle, n: $I, x: *const C64, incx: $I, r: *mut $I) -> Status;
                #[link_name = concat!("cublasSgemv", $sfx)] fn sgemv(h: Handle, t: c_int, m: $I, n: $I, al: *const f32, a: *const f32, lda: $I, x: *const f32, incx: $I, be: *const f32, y: *mut f32, incy: $I) -> Status;
                #[link_name = concat!("cublasDgemv", $sfx)] fn dgemv(h: Handle, t: c_int, m: $I, n: $I, al: *const f64, a: *const f64, lda: $I, x: *const f64, incx: $I, be: *const f64, y: *mut f64, incy: $I) -> Status;
                #[link_name = concat!("cublasCgemv", $sfx)] fn cgemv(h: Handle, t: c_int, m: $I, n: $I, al: *const C32, a: *const C32, lda: $I, x: *const C32, incx: $I, be: *const C32, y: *mut C32, incy: $I) -> Status;
                #[link_name = concat!("cublasZgemv", $sfx)] fn zgemv(h: Handle, t: c_int, m: $I, n: $I, al: *const C64, a: *const C64, lda: $I, x: *const C64, incx: $I, be: *const C64, y: *mut C64, incy: $I) -> Status;
                #[link_name = concat!("cublasSger", $sfx)] fn sger(h: Handle, m: $I, n: $I, al: *const f32, x: *const f32, incx: $I, y: *const f32, incy: $I, a: *mut f32, lda: $I) -> Status;
                #[link_name = concat!("cublasDger", $sfx)] fn dger(h: Handle, m: $I, n: $I, al: *const f64, x: *const f64, incx: $I, y: *const f64, incy: $I, a: *mut f64, lda: $I) -> Status;
                #[link_name = concat!("cublasCgeru", $sfx)] fn cgeru(h: Handle, m: $I, n: $I, al: *const C32, x: *const C32, incx: $I, y: *const C32, incy: $I, a: *mut C32, lda: $I) -> Status;
                #[link_name = concat!("cublasCgerc", $sfx)] fn cgerc(h: Handle, m: $I, n: $I, al: *const C32, x: *const C32, incx: $I, y: *const C32, incy: $I, a: *mut C32, lda: $I) -> Status;
                #[link_name = concat!("cublasZgeru", $sfx)] fn zgeru(h: Handle, m: $I, n: $I, al: *const C64, x: *const C64, incx: $I, y: *const C64, incy: $I, a: *mut C64, lda: $I) -> Status;
                #[link_name = concat!("cublasZgerc", $sfx)] fn zgerc(h: Handle, m: $I, n: $I, al: *const C64, x: *const C64, incx: $I, y: *const C64, incy: $I, a: *mut C64, lda: $I) -> Status;
                #[link_name = concat!("cublasStrmv", $sfx)] fn strmv(h: Handle, u: c_int, t: c_int, d: c_int, n: $I, a: *const f32, lda: $I, x: *mut f32, incx: $I) -> Status;
                #[link_name = concat!("cublasDtrmv", $sfx)] fn dtrmv(h: Handle, u: c_int, t: c_int, d: c_int, n: $I, a: *const f64, lda: $I, x: *mut f64, incx: $I) -> Status;
                #[link_name = concat!("cublasCtrmv", $sfx)] fn ctrmv(h: Handle, u: c_int, t: c_int, d: c_int, n: $I, a: *const C32, lda: $I, x: *mut C32, incx: $I) -> Status;
                #[link_name = concat!("cublasZtrmv", $sfx)] fn ztrmv(h: Handle, u: c_int, t: c_int, d: c_int, n: $I, a: *const C64, lda: $I, x: *mut C64, incx: $I) -> Status;
            }

            pub fn axpy() -> (P<AxpyF<f32, $I>>, P<AxpyF<f64, $I>>, P<AxpyF<C32, $I>>, P<AxpyF<C64, $I>>) {
                (p!(saxpy, "cublasSaxpy"), p!(daxpy, "cublasDaxpy"), p!(caxpy, "cublasCaxpy"), p!(zaxpy, "cublasZaxpy"))
            }
            pub fn scal() -> (P<ScalF<f32, f32, $I>>, P<ScalF<f64, f64, $I>>, P<ScalF<C32, C32, $I>>, P<ScalF<C64, C64, $I>>) {
                (p!(sscal, "cublasSscal"), p!(dscal, "cublasDscal"), p!(cscal, "cublasCscal"), p!(zscal, "cublasZscal"))
            }
            pub fn scal_real() -> (P<ScalF<C32, f32, $I>>, P<ScalF<C64, f64, $I>>) {
                (p!(csscal, "cublasCsscal"), p!(zdscal, "cublasZdscal"))
            }
            pub fn copy() -> (P<CopyF<f32, $I>>, P<CopyF<f64, $I>>, P<CopyF<C32, $I>>, P<CopyF<C64, $I>>) {
                (p!(scopy, "cublasScopy"), p!(dcopy, "cublasDcopy"), p!(ccopy, "cublasCcopy"), p!(zcopy, "cublasZcopy"))
            }
            pub fn swap() -> (P<SwapF<f32, $I>>, P<SwapF<f64, $I>>, P<SwapF<C32, $I>>, P<SwapF<C64, $I>>) {
                (p!(sswap, "cublasSswap"), p!(dswap, "cublasDswap"), p!(cswap, "cublasCswap"), p!(zswap, "cublasZswap"))
            }
            /// s, d, cu, cc, zu, zc
            pub fn dot() -> (P<DotF<f32, $I>>, P<DotF<f64, $I>>, P<DotF<C32, $I>>, P<DotF<C32, $I>>, P<DotF<C64, $I>>, P<DotF<C64, $I>>) {
                (p!(sdot, "cublasSdot"), p!(ddot, "cublasDdot"), p!(cdotu, "cublasCdotu"), p!(cdotc, "cublasCdotc"), p!(zdotu, "cublasZdotu"), p!(zdotc, "cublasZdotc"))
            }
            pub fn nrm2() -> (P<RedF<f32, f32, $I>>, P<RedF<f64, f64, $I>>, P<RedF<C32, f32, $I>>, P<RedF<C64, f64, $I>>) {
                (p!(snrm2, "cublasSnrm2"), p!(dnrm2, "cublasDnrm2"), p!(scnrm2, "cublasScnrm2"), p!(dznrm2, "cublasDznrm2"))
            }
            pub fn asum() -> (P<RedF<f32, f32, $I>>, P<RedF<f64, f64, $I>>, P<RedF<C32, f32, $I>>, P<RedF<C64, f64, $I>>) {
                (p!(sasum, "cublasSasum"), p!(dasum, "cublasDasum"), p!(scasum, "cublasScasum"), p!(dzasum, "cublasDzasum"))
            }
            pub fn amax() -> (P<RedF<f32, $I, $I>>, P<RedF<f64, $I, $I>>, P<RedF<C32, $I, $I>>, P<RedF<C64, $I, $I>>) {
                (p!(isamax, "cublasIsamax"), p!(idamax, "cublasIdamax"), p!(icamax, "cublasIcamax"), p!(izamax, "cublasIzamax"))
            }
            pub fn gemv() -> (P<GemvF<f32, $I>>, P<GemvF<f64, $I>>, P<GemvF<C32, $I>>, P<GemvF<C64, $I>>) {
                (p!(sgemv, "cublasSgemv"), p!(dgemv, "cublasDgemv"), p!(cgemv, "cublasCgemv"), p!(zgemv, "cublasZgemv"))
            }
            /// s, d, cu, cc, zu, zc
            pub fn ger() -> (P<GerF<f32, $I>>, P<GerF<f64, $I>>, P<GerF<C32, $I>>, P<GerF<C32, $I>>, P<GerF<C64, $I>>, P<GerF<C64, $I>>) {
                (p!(sger, "cublasSger"), p!(dger, "cublasDger"), p!(cgeru, "cublasCgeru"), p!(cgerc, "cublasCgerc"), p!(zgeru, "cublasZgeru"), p!(zgerc, "cublasZgerc"))
            }
            pub fn trmv() -> (P<TrmvF<f32, $I>>, P<TrmvF<f64, $I>>, P<TrmvF<C32, $I>>, P<TrmvF<C64, $I>>) {
                (p!(strmv, "cublasStrmv"), p!(dtrmv, "cublasDtrmv"), p!(ctrmv, "cublasCtrmv"), p!(ztrmv, "cublasZtrmv"))
            }
            /// hyblas's own gemv export (no real function needed), for the tests that run
            /// without cuBLAS.
            pub fn sgemv_ours() -> GemvF<f32, $I> {
                sgemv
            }
            pub fn saxpy_ours() -> AxpyF<f32, $I> {
                saxpy
            }
        }
    };
}
entry_points!(v2, i32, "_v2");
entry_points!(v2_64, i64, "_v2_64");

// ---------------------------------------------------------------------------------------
// The session: a real handle with a user stream, and data helpers.

/// A scalar result in the pointer mode of the call, poisoned before.
struct Res<T: Copy + Default> {
    v: Box<A16<T>>,
    d: Option<DeviceBuffer>,
}
impl<T: Copy + Default> Res<T> {
    fn new(poison: T, device: bool) -> Self {
        Res { v: Box::new(A16(poison)), d: device.then(|| up(&[poison])) }
    }
    fn ptr(&mut self) -> *mut T {
        match &self.d {
            Some(b) => b.ptr as *mut T,
            None => &mut self.v.0,
        }
    }
    fn get(&self) -> T {
        self.d.as_ref().map_or(self.v.0, |b| down::<T>(b)[0])
    }
}

/// Elements a BLAS vector of n elements with increment inc spans.
fn span(n: i64, inc: i64) -> usize {
    if n <= 0 {
        1
    } else {
        (1 + (n - 1) * inc.abs()) as usize
    }
}

/// Which positions of a span are elements of the vector.
fn touched(len: usize, n: i64, inc: i64) -> Vec<bool> {
    let mut t = vec![false; len];
    for i in 0..n.max(0) {
        t[(i * inc.abs()) as usize] = true;
    }
    t
}

/// Compare a strided output: elements within tolerance (`k` terms; None: bit for bit), the
/// gaps between them exactly as they were.
fn check_vec<T: Scalar>(got: &[T], want: &[T], orig: &[T], n: i64, inc: i64, k: Option<usize>, what: &str) {
    let t = touched(orig.len(), n, inc);
    for (i, &on) in t.iter().enumerate() {
        if !on {
            assert_eq!(bits(got[i]), bits(orig[i]), "{what}: gap element {i} was written");
        } else if k.is_none() {
            assert_eq!(bits(got[i]), bits(want[i]), "{what}: element {i}: got {:?}, want {:?}", got[i], want[i]);
        }
    }
    if let Some(k) = k {
        let pick = |v: &[T]| v.iter().zip(&t).filter(|(_, &on)| on).map(|(&x, _)| x).collect::<Vec<T>>();
        assert_close(&pick(got), &pick(want), k, what);
    }
}

/// Routing modes cycled over the cases, so every mode meets every kind of case.
const MODES: [Mode; 3] = [Mode::Hyblas, Mode::Vendor, Mode::Auto];

fn scalars<T: Scalar>(rng: &mut Rng) -> [T; 3] {
    [T::zero(), T::one(), rng.scalar()]
}

// ---------------------------------------------------------------------------------------
// Level 1

const L1_SIZES: [i64; 5] = [1, 3, 17, 1000, (1 << 16) + 5];
const L1_SIZES_64: [i64; 2] = [17, (1 << 16) + 5];
const INCS2: [(i64, i64); 5] = [(1, 1), (2, 3), (-1, 1), (1, -2), (-3, -2)];
const INCS1: [i64; 3] = [1, 2, 5];

fn check_axpy<T: Scalar, I: TI>(s: &Session, p: P<AxpyF<T, I>>, sizes: &[i64], seed: u64) {
    let mut rng = Rng::new(seed);
    let mut case = 0;
    for &n in sizes {
        for &(ix, iy) in &INCS2 {
            for alpha in scalars::<T>(&mut rng) {
                for device in [false, true] {
                    let mode = MODES[case % 3];
                    case += 1;
                    s.pointer_mode(device);
                    let x = rng.vec::<T>(span(n, ix));
                    let y = rng.vec::<T>(span(n, iy));
                    let (xd, y1, y2, a) = (up(&x), up(&y), up(&y), Arg::new(alpha, device));
                    s.fence();
                    let st = with_mode(mode, || unsafe {
                        (p.ours)(s.h, I::of(n), a.ptr(), dp(&xd), I::of(ix), dp(&y1), I::of(iy))
                    });
                    let sr = unsafe { (p.real)(s.h, I::of(n), a.ptr(), dp(&xd), I::of(ix), dp(&y2), I::of(iy)) };
                    s.sync();
                    let what = format!("{} n={n} incx={ix} incy={iy} alpha={alpha:?} device={device} {mode:?}", p.name);
                    assert_eq!((st, sr), (OK, OK), "{what}: status");
                    check_vec(&down::<T>(&y1), &down::<T>(&y2), &y, n, iy, Some(2), &what);
                }
            }
        }
    }
}

fn check_scal<T: Scalar, A: Scalar, I: TI>(s: &Session, p: P<ScalF<T, A, I>>, sizes: &[i64], seed: u64) {
    let mut rng = Rng::new(seed);
    let mut case = 0;
    for &n in sizes {
        for &ix in &INCS1 {
            for alpha in scalars::<A>(&mut rng) {
                for device in [false, true] {
                    let mode = MODES[case % 3];
                    case += 1;
                    s.pointer_mode(device);
                    let x = rng.vec::<T>(span(n, ix));
                    let (x1, x2, a) = (up(&x), up(&x), Arg::new(alpha, device));
                    s.fence();
                    let st = with_mode(mode, || unsafe { (p.ours)(s.h, I::of(n), a.ptr(), dp(&x1), I::of(ix)) });
                    let sr = unsafe { (p.real)(s.h, I::of(n), a.ptr(), dp(&x2), I::of(ix)) };
                    s.sync();
                    let what = format!("{} n={n} incx={ix} alpha={alpha:?} device={device} {mode:?}", p.name);
                    assert_eq!((st, sr), (OK, OK), "{what}: status");
                    check_vec(&down::<T>(&x1), &down::<T>(&x2), &x, n, ix, Some(1), &what);
                }
            }
        }
    }
}

fn check_copy_swap<T: Scalar, I: TI>(
    s: &Session,
    copy: P<CopyF<T, I>>,
    swap: P<SwapF<T, I>>,
    sizes: &[i64],
    seed: u64,
) {
    let mut rng = Rng::new(seed);
    let mut case = 0;
    for &n in sizes {
        for &(ix, iy) in &INCS2 {
            let mode = MODES[case % 3];
            case += 1;
            let x = rng.vec::<T>(span(n, ix));
            let y = rng.vec::<T>(span(n, iy));
            let (xd, y1, y2) = (up(&x), up(&y), up(&y));
            s.fence();
            let st = with_mode(mode, || unsafe { (copy.ours)(s.h, I::of(n), dp(&xd), I::of(ix), dp(&y1), I::of(iy)) });
            let sr = unsafe { (copy.real)(s.h, I::of(n), dp(&xd), I::of(ix), dp(&y2), I::of(iy)) };
            s.sync();
            let what = format!("{} n={n} incx={ix} incy={iy} {mode:?}", copy.name);
            assert_eq!((st, sr), (OK, OK), "{what}: status");
            check_vec(&down::<T>(&y1), &down::<T>(&y2), &y, n, iy, None, &what);

            let (x1, x2, y1, y2) = (up(&x), up(&x), up(&y), up(&y));
            s.fence();
            let st = with_mode(mode, || unsafe { (swap.ours)(s.h, I::of(n), dp(&x1), I::of(ix), dp(&y1), I::of(iy)) });
            let sr = unsafe { (swap.real)(s.h, I::of(n), dp(&x2), I::of(ix), dp(&y2), I::of(iy)) };
            s.sync();
            let what = format!("{} n={n} incx={ix} incy={iy} {mode:?}", swap.name);
            assert_eq!((st, sr), (OK, OK), "{what}: status");
            check_vec(&down::<T>(&x1), &down::<T>(&x2), &x, n, ix, None, &what);
            check_vec(&down::<T>(&y1), &down::<T>(&y2), &y, n, iy, None, &what);
        }
    }
}

fn check_dot<T: Scalar, I: TI>(s: &Session, p: P<DotF<T, I>>, sizes: &[i64], seed: u64) {
    let mut rng = Rng::new(seed);
    let mut case = 0;
    for &n in sizes {
        for &(ix, iy) in &INCS2 {
            for device in [false, true] {
                let mode = MODES[case % 3];
                case += 1;
                s.pointer_mode(device);
                let x = rng.vec::<T>(span(n, ix));
                let y = rng.vec::<T>(span(n, iy));
                let (xd, yd) = (up(&x), up(&y));
                let (mut r1, mut r2) = (Res::new(poison::<T>(), device), Res::new(poison::<T>(), device));
                s.fence();
                let st = with_mode(mode, || unsafe {
                    (p.ours)(s.h, I::of(n), dp(&xd), I::of(ix), dp(&yd), I::of(iy), r1.ptr())
                });
                let sr = unsafe { (p.real)(s.h, I::of(n), dp(&xd), I::of(ix), dp(&yd), I::of(iy), r2.ptr()) };
                s.sync();
                let what = format!("{} n={n} incx={ix} incy={iy} device={device} {mode:?}", p.name);
                assert_eq!((st, sr), (OK, OK), "{what}: status");
                assert_close(&[r1.get()], &[r2.get()], n as usize, &what);
                // Inputs are read only.
                assert_eq!(
                    down::<T>(&xd).iter().map(|&v| bits(v)).collect::<Vec<_>>(),
                    x.iter().map(|&v| bits(v)).collect::<Vec<_>>()
                );
            }
        }
    }
}

/// nrm2 and asum (real results) and amax (index results), one-vector reductions.
fn check_reduce<T: Scalar, R: Scalar, I: TI>(
    s: &Session,
    nrm2: P<RedF<T, R, I>>,
    asum: P<RedF<T, R, I>>,
    amax: P<RedF<T, I, I>>,
    sizes: &[i64],
    seed: u64,
) {
    let mut rng = Rng::new(seed);
    let mut case = 0;
    for &n in sizes {
        for &ix in &INCS1 {
            for device in [false, true] {
                let mode = MODES[case % 3];
                case += 1;
                s.pointer_mode(device);
                let x = rng.vec::<T>(span(n, ix));
                let xd = up(&x);
                for p in [nrm2, asum] {
                    let (mut r1, mut r2) = (Res::new(poison::<R>(), device), Res::new(poison::<R>(), device));
                    s.fence();
                    let st = with_mode(mode, || unsafe { (p.ours)(s.h, I::of(n), dp(&xd), I::of(ix), r1.ptr()) });
                    let sr = unsafe { (p.real)(s.h, I::of(n), dp(&xd), I::of(ix), r2.ptr()) };
                    s.sync();
                    let what = format!("{} n={n} incx={ix} device={device} {mode:?}", p.name);
                    assert_eq!((st, sr), (OK, OK), "{what}: status");
                    assert_close(&[r1.get()], &[r2.get()], n as usize, &what);
                }
                let (mut r1, mut r2) = (Res::new(I::of(-77), device), Res::new(I::of(-77), device));
                s.fence();
                let st = with_mode(mode, || unsafe { (amax.ours)(s.h, I::of(n), dp(&xd), I::of(ix), r1.ptr()) });
                let sr = unsafe { (amax.real)(s.h, I::of(n), dp(&xd), I::of(ix), r2.ptr()) };
                s.sync();
                let what = format!("{} n={n} incx={ix} device={device} {mode:?}", amax.name);
                assert_eq!((st, sr), (OK, OK), "{what}: status");
                assert_eq!(r1.get(), r2.get(), "{what}: index");
            }
        }
    }
}

macro_rules! run_level1 {
    ($s:expr, $m:ident, $sizes:expr) => {{
        let s = $s;
        let sizes: &[i64] = $sizes;
        let (a, b, c, d) = $m::axpy();
        check_axpy(s, a, sizes, 1);
        check_axpy(s, b, sizes, 2);
        check_axpy(s, c, sizes, 3);
        check_axpy(s, d, sizes, 4);
        let (a, b, c, d) = $m::scal();
        check_scal(s, a, sizes, 5);
        check_scal(s, b, sizes, 6);
        check_scal(s, c, sizes, 7);
        check_scal(s, d, sizes, 8);
        let (a, b) = $m::scal_real();
        check_scal(s, a, sizes, 9);
        check_scal(s, b, sizes, 10);
        let (c1, c2, c3, c4) = $m::copy();
        let (w1, w2, w3, w4) = $m::swap();
        check_copy_swap(s, c1, w1, sizes, 11);
        check_copy_swap(s, c2, w2, sizes, 12);
        check_copy_swap(s, c3, w3, sizes, 13);
        check_copy_swap(s, c4, w4, sizes, 14);
        let (a, b, c, d, e, f) = $m::dot();
        check_dot(s, a, sizes, 15);
        check_dot(s, b, sizes, 16);
        check_dot(s, c, sizes, 17);
        check_dot(s, d, sizes, 18);
        check_dot(s, e, sizes, 19);
        check_dot(s, f, sizes, 20);
        let (n1, n2, n3, n4) = $m::nrm2();
        let (a1, a2, a3, a4) = $m::asum();
        let (i1, i2, i3, i4) = $m::amax();
        check_reduce(s, n1, a1, i1, sizes, 21);
        check_reduce(s, n2, a2, i2, sizes, 22);
        check_reduce(s, n3, a3, i3, sizes, 23);
        check_reduce(s, n4, a4, i4, sizes, 24);
    }};
}

#[test]
fn cublas_level1_matches_the_real_cublas() {
    let Some(s) = session("cublas_level1_matches_the_real_cublas") else { return };
    run_level1!(&s, v2, &L1_SIZES);
}

#[test]
fn cublas_level1_64bit_entry_points() {
    let Some(s) = session("cublas_level1_64bit_entry_points") else { return };
    run_level1!(&s, v2_64, &L1_SIZES_64);
}

// ---------------------------------------------------------------------------------------
// Level 2

const L2_SIZES: [(i64, i64); 6] = [(1, 1), (3, 7), (33, 17), (17, 33), (300, 129), (1030, 1029)];
const L2_SIZES_64: [(i64, i64); 2] = [(33, 17), (1030, 1029)];
const L2_INCS: [(i64, i64); 3] = [(1, 1), (-2, 3), (3, -1)];
const TRMV_SIZES: [i64; 6] = [1, 2, 5, 64, 333, 1100];
const TRMV_SIZES_64: [i64; 2] = [5, 333];

fn check_gemv<T: Scalar, I: TI>(s: &Session, p: P<GemvF<T, I>>, sizes: &[(i64, i64)], seed: u64) {
    let mut rng = Rng::new(seed);
    let mut case = 0;
    for &(m, n) in sizes {
        for pad in [0, 3] {
            let lda = m + pad;
            let a = rng.vec::<T>((lda * n) as usize);
            let ad = up(&a);
            for trans in [cb::CUBLAS_OP_N, cb::CUBLAS_OP_T, cb::CUBLAS_OP_C] {
                let (xl, yl) = if trans == cb::CUBLAS_OP_N { (n, m) } else { (m, n) };
                for &(ix, iy) in &L2_INCS {
                    for ab in 0..4 {
                        for device in [false, true] {
                            let mode = MODES[case % 3];
                            case += 1;
                            s.pointer_mode(device);
                            let (alpha, beta) = match ab {
                                0 => (rng.scalar::<T>(), rng.scalar::<T>()),
                                1 => (T::zero(), rng.scalar()),
                                2 => (rng.scalar(), T::zero()),
                                _ => (T::one(), T::one()),
                            };
                            let x = rng.vec::<T>(span(xl, ix));
                            let mut y = rng.vec::<T>(span(yl, iy));
                            if beta == T::zero() {
                                // beta = 0 assigns: NaN in y must not survive.
                                for (v, on) in y.iter_mut().zip(touched(span(yl, iy), yl, iy)) {
                                    if on {
                                        *v = T::from_f64(f64::NAN);
                                    }
                                }
                            }
                            let (xd, y1, y2) = (up(&x), up(&y), up(&y));
                            let (al, be) = (Arg::new(alpha, device), Arg::new(beta, device));
                            s.fence();
                            let st = with_mode(mode, || unsafe {
                                (p.ours)(
                                    s.h,
                                    trans,
                                    I::of(m),
                                    I::of(n),
                                    al.ptr(),
                                    dp(&ad),
                                    I::of(lda),
                                    dp(&xd),
                                    I::of(ix),
                                    be.ptr(),
                                    dp(&y1),
                                    I::of(iy),
                                )
                            });
                            let sr = unsafe {
                                (p.real)(
                                    s.h,
                                    trans,
                                    I::of(m),
                                    I::of(n),
                                    al.ptr(),
                                    dp(&ad),
                                    I::of(lda),
                                    dp(&xd),
                                    I::of(ix),
                                    be.ptr(),
                                    dp(&y2),
                                    I::of(iy),
                                )
                            };
                            s.sync();
                            let what = format!(
                                "{} trans={trans} m={m} n={n} lda={lda} incx={ix} incy={iy} alpha={alpha:?} beta={beta:?} device={device} {mode:?}",
                                p.name
                            );
                            assert_eq!((st, sr), (OK, OK), "{what}: status");
                            check_vec(&down::<T>(&y1), &down::<T>(&y2), &y, yl, iy, Some(xl as usize + 2), &what);
                        }
                    }
                }
            }
        }
    }
}

fn check_ger<T: Scalar, I: TI>(s: &Session, p: P<GerF<T, I>>, sizes: &[(i64, i64)], seed: u64) {
    let mut rng = Rng::new(seed);
    let mut case = 0;
    for &(m, n) in sizes {
        for pad in [0, 2] {
            let lda = m + pad;
            for &(ix, iy) in &L2_INCS {
                for alpha in scalars::<T>(&mut rng) {
                    for device in [false, true] {
                        let mode = MODES[case % 3];
                        case += 1;
                        s.pointer_mode(device);
                        let x = rng.vec::<T>(span(m, ix));
                        let y = rng.vec::<T>(span(n, iy));
                        let a = rng.vec::<T>((lda * n) as usize);
                        let (xd, yd, a1, a2, al) = (up(&x), up(&y), up(&a), up(&a), Arg::new(alpha, device));
                        s.fence();
                        let st = with_mode(mode, || unsafe {
                            (p.ours)(
                                s.h,
                                I::of(m),
                                I::of(n),
                                al.ptr(),
                                dp(&xd),
                                I::of(ix),
                                dp(&yd),
                                I::of(iy),
                                dp(&a1),
                                I::of(lda),
                            )
                        });
                        let sr = unsafe {
                            (p.real)(
                                s.h,
                                I::of(m),
                                I::of(n),
                                al.ptr(),
                                dp(&xd),
                                I::of(ix),
                                dp(&yd),
                                I::of(iy),
                                dp(&a2),
                                I::of(lda),
                            )
                        };
                        s.sync();
                        let what = format!(
                            "{} m={m} n={n} lda={lda} incx={ix} incy={iy} alpha={alpha:?} device={device} {mode:?}",
                            p.name
                        );
                        assert_eq!((st, sr), (OK, OK), "{what}: status");
                        check_mat(&down::<T>(&a1), &down::<T>(&a2), &a, m, n, lda, 2, &what);
                    }
                }
            }
        }
    }
}

/// A triangular matrix whose unreferenced part (other triangle, unit diagonal, padding) is
/// NaN: reading it would show in the result.
fn triangle<T: Scalar>(rng: &mut Rng, n: i64, lda: i64, upper: bool, unit: bool) -> Vec<T> {
    let mut a = rng.vec::<T>((lda * n) as usize);
    for j in 0..n {
        for i in 0..lda {
            let outside = i >= n || (upper && i > j) || (!upper && i < j) || (unit && i == j);
            if outside {
                a[(i + j * lda) as usize] = T::from_f64(f64::NAN);
            }
        }
    }
    a
}

fn check_trmv<T: Scalar, I: TI>(s: &Session, p: P<TrmvF<T, I>>, sizes: &[i64], seed: u64) {
    let mut rng = Rng::new(seed);
    let mut case = 0;
    s.pointer_mode(false);
    for &n in sizes {
        for uplo in [cb::CUBLAS_FILL_MODE_LOWER, cb::CUBLAS_FILL_MODE_UPPER] {
            for diag in [cb::CUBLAS_DIAG_NON_UNIT, cb::CUBLAS_DIAG_UNIT] {
                let lda = n + 1;
                let a =
                    triangle::<T>(&mut rng, n, lda, uplo == cb::CUBLAS_FILL_MODE_UPPER, diag == cb::CUBLAS_DIAG_UNIT);
                let ad = up(&a);
                for trans in [cb::CUBLAS_OP_N, cb::CUBLAS_OP_T, cb::CUBLAS_OP_C] {
                    for ix in [1, -2] {
                        let mode = MODES[case % 3];
                        case += 1;
                        let x = rng.vec::<T>(span(n, ix));
                        let (x1, x2) = (up(&x), up(&x));
                        s.fence();
                        let st = with_mode(mode, || unsafe {
                            (p.ours)(s.h, uplo, trans, diag, I::of(n), dp(&ad), I::of(lda), dp(&x1), I::of(ix))
                        });
                        let sr = unsafe {
                            (p.real)(s.h, uplo, trans, diag, I::of(n), dp(&ad), I::of(lda), dp(&x2), I::of(ix))
                        };
                        s.sync();
                        let what = format!("{} uplo={uplo} trans={trans} diag={diag} n={n} incx={ix} {mode:?}", p.name);
                        assert_eq!((st, sr), (OK, OK), "{what}: status");
                        check_vec(&down::<T>(&x1), &down::<T>(&x2), &x, n, ix, Some(n as usize + 2), &what);
                    }
                }
            }
        }
    }
}

macro_rules! run_level2 {
    ($s:expr, $m:ident, $sizes:expr, $trmv_sizes:expr) => {{
        let s = $s;
        let sizes: &[(i64, i64)] = $sizes;
        let (a, b, c, d) = $m::gemv();
        check_gemv(s, a, sizes, 31);
        check_gemv(s, b, sizes, 32);
        check_gemv(s, c, sizes, 33);
        check_gemv(s, d, sizes, 34);
        let (a, b, c, d, e, f) = $m::ger();
        check_ger(s, a, sizes, 35);
        check_ger(s, b, sizes, 36);
        check_ger(s, c, sizes, 37);
        check_ger(s, d, sizes, 38);
        check_ger(s, e, sizes, 39);
        check_ger(s, f, sizes, 40);
        let (a, b, c, d) = $m::trmv();
        check_trmv(s, a, $trmv_sizes, 41);
        check_trmv(s, b, $trmv_sizes, 42);
        check_trmv(s, c, $trmv_sizes, 43);
        check_trmv(s, d, $trmv_sizes, 44);
    }};
}

#[test]
fn cublas_level2_matches_the_real_cublas() {
    let Some(s) = session("cublas_level2_matches_the_real_cublas") else { return };
    run_level2!(&s, v2, &L2_SIZES, &TRMV_SIZES);
}

#[test]
fn cublas_level2_64bit_entry_points() {
    let Some(s) = session("cublas_level2_64bit_entry_points") else { return };
    run_level2!(&s, v2_64, &L2_SIZES_64, &TRMV_SIZES_64);
}

// ---------------------------------------------------------------------------------------
// Bad arguments and degenerate calls: the real cuBLAS's status, outputs untouched.

/// After a bad or degenerate call: hyblas's output is the real cuBLAS's, bit for bit (such
/// calls are forwarded, so the status and any output are exactly cuBLAS's; cuBLAS 13.1 was
/// seen to write y for an out-of-range trans, so "untouched" is not asserted here).
fn untouched_or_same<T: Scalar>(_status: Status, ours: &[T], real: &[T], orig: &[T], what: &str) {
    check_vec(ours, real, orig, orig.len() as i64, 1, None, &format!("{what} (hyblas vs cuBLAS)"));
}

/// gemv cases: (trans, m, n, lda, incx, incy); invalid ones and degenerate valid ones.
const GEMV_BAD: [(c_int, i64, i64, i64, i64, i64); 13] = [
    (3, 5, 4, 5, 1, 1),
    (-1, 5, 4, 5, 1, 1),
    (7, 5, 4, 5, 1, 1),
    (0, -1, 4, 5, 1, 1),
    (1, 5, -1, 5, 1, 1),
    (0, 5, 4, 4, 1, 1),
    (1, 5, 4, 4, 1, 1),
    (0, 0, 4, 0, 1, 1),
    (0, 5, 4, 5, 0, 1),
    (2, 5, 4, 5, 1, 0),
    (0, 0, 4, 1, 1, 1),
    (0, 5, 0, 5, 1, 1),
    (1, 5, 0, 5, 1, 1),
];

fn bad_gemv<T: Scalar, I: TI>(s: &Session, p: P<GemvF<T, I>>) {
    let mut rng = Rng::new(51);
    for device in [false, true] {
        s.pointer_mode(device);
        for (c, &(trans, m, n, lda, ix, iy)) in GEMV_BAD.iter().enumerate() {
            let mode = MODES[c % 3];
            let a = rng.vec::<T>(64);
            let x = rng.vec::<T>(16);
            let y = vec![poison::<T>(); 16];
            let (ad, xd, y1, y2) = (up(&a), up(&x), up(&y), up(&y));
            let (al, be) = (Arg::new(rng.scalar::<T>(), device), Arg::new(rng.scalar::<T>(), device));
            s.fence();
            for h in [s.h, std::ptr::null_mut()] {
                let st = with_mode(mode, || unsafe {
                    (p.ours)(
                        h,
                        trans,
                        I::of(m),
                        I::of(n),
                        al.ptr(),
                        dp(&ad),
                        I::of(lda),
                        dp(&xd),
                        I::of(ix),
                        be.ptr(),
                        dp(&y1),
                        I::of(iy),
                    )
                });
                let sr = unsafe {
                    (p.real)(
                        h,
                        trans,
                        I::of(m),
                        I::of(n),
                        al.ptr(),
                        dp(&ad),
                        I::of(lda),
                        dp(&xd),
                        I::of(ix),
                        be.ptr(),
                        dp(&y2),
                        I::of(iy),
                    )
                };
                s.sync();
                let what = format!(
                    "{} trans={trans} m={m} n={n} lda={lda} incx={ix} incy={iy} handle={h:?} device={device}",
                    p.name
                );
                assert_eq!(st, sr, "{what}: status (hyblas {st}, cuBLAS {sr})");
                if iy == 0 && m > 0 && n > 0 {
                    // cuBLAS 13 may run incy = 0 (documented as invalid; even with a null handle,
                    // whatever status it returns): every output lands on y[0] in an order that
                    // changes from run to run (two runs of the real cuBLAS differ in the last
                    // bits), so only the other elements are compared.
                    let (ours, real) = (down::<T>(&y1), down::<T>(&y2));
                    for i in 1..y.len() {
                        assert_eq!(bits(ours[i]), bits(real[i]), "{what}: element {i} (hyblas vs cuBLAS)");
                    }
                    continue;
                }
                untouched_or_same(st, &down::<T>(&y1), &down::<T>(&y2), &y, &what);
            }
        }
    }
}

/// ger cases: (m, n, incx, incy, lda).
const GER_BAD: [(i64, i64, i64, i64, i64); 8] = [
    (-1, 4, 1, 1, 5),
    (5, -1, 1, 1, 5),
    (5, 4, 0, 1, 5),
    (5, 4, 1, 0, 5),
    (5, 4, 1, 1, 4),
    (0, 4, 1, 1, 0),
    (0, 4, 1, 1, 1),
    (5, 0, 1, 1, 5),
];

fn bad_ger<T: Scalar, I: TI>(s: &Session, p: P<GerF<T, I>>) {
    let mut rng = Rng::new(52);
    for device in [false, true] {
        s.pointer_mode(device);
        for (c, &(m, n, ix, iy, lda)) in GER_BAD.iter().enumerate() {
            let mode = MODES[c % 3];
            let (x, y, a) = (rng.vec::<T>(16), rng.vec::<T>(16), vec![poison::<T>(); 64]);
            let (xd, yd, a1, a2, al) = (up(&x), up(&y), up(&a), up(&a), Arg::new(rng.scalar::<T>(), device));
            s.fence();
            for h in [s.h, std::ptr::null_mut()] {
                let st = with_mode(mode, || unsafe {
                    (p.ours)(
                        h,
                        I::of(m),
                        I::of(n),
                        al.ptr(),
                        dp(&xd),
                        I::of(ix),
                        dp(&yd),
                        I::of(iy),
                        dp(&a1),
                        I::of(lda),
                    )
                });
                let sr = unsafe {
                    (p.real)(
                        h,
                        I::of(m),
                        I::of(n),
                        al.ptr(),
                        dp(&xd),
                        I::of(ix),
                        dp(&yd),
                        I::of(iy),
                        dp(&a2),
                        I::of(lda),
                    )
                };
                s.sync();
                let what = format!("{} m={m} n={n} incx={ix} incy={iy} lda={lda} handle={h:?} device={device}", p.name);
                assert_eq!(st, sr, "{what}: status (hyblas {st}, cuBLAS {sr})");
                untouched_or_same(st, &down::<T>(&a1), &down::<T>(&a2), &a, &what);
            }
        }
    }
}

/// trmv cases: (uplo, trans, diag, n, lda, incx).
const TRMV_BAD: [(c_int, c_int, c_int, i64, i64, i64); 9] = [
    (2, 0, 0, 4, 4, 1),
    (-1, 0, 0, 4, 4, 1),
    (0, 3, 0, 4, 4, 1),
    (1, 0, 2, 4, 4, 1),
    (0, 0, 0, -1, 4, 1),
    (1, 1, 1, 4, 3, 1),
    (0, 2, 0, 4, 4, 0),
    (0, 0, 0, 0, 0, 1),
    (0, 0, 0, 0, 1, 1),
];

fn bad_trmv<T: Scalar, I: TI>(s: &Session, p: P<TrmvF<T, I>>) {
    let mut rng = Rng::new(53);
    s.pointer_mode(false);
    for (c, &(uplo, trans, diag, n, lda, ix)) in TRMV_BAD.iter().enumerate() {
        let mode = MODES[c % 3];
        let a = rng.vec::<T>(64);
        let x = vec![poison::<T>(); 16];
        let (ad, x1, x2) = (up(&a), up(&x), up(&x));
        s.fence();
        for h in [s.h, std::ptr::null_mut()] {
            let st = with_mode(mode, || unsafe {
                (p.ours)(h, uplo, trans, diag, I::of(n), dp(&ad), I::of(lda), dp(&x1), I::of(ix))
            });
            let sr = unsafe { (p.real)(h, uplo, trans, diag, I::of(n), dp(&ad), I::of(lda), dp(&x2), I::of(ix)) };
            s.sync();
            let what =
                format!("{} uplo={uplo} trans={trans} diag={diag} n={n} lda={lda} incx={ix} handle={h:?}", p.name);
            assert_eq!(st, sr, "{what}: status (hyblas {st}, cuBLAS {sr})");
            untouched_or_same(st, &down::<T>(&x1), &down::<T>(&x2), &x, &what);
        }
    }
}

/// Degenerate Level 1 calls (left to cuBLAS): same status, outputs and results bit for bit.
fn degenerate_level1<T: Scalar, I: TI>(
    s: &Session,
    axpy: P<AxpyF<T, I>>,
    scal: P<ScalF<T, T, I>>,
    dot: P<DotF<T, I>>,
    nrm2: P<RedF<T, T::Real, I>>,
    amax: P<RedF<T, I, I>>,
) {
    let mut rng = Rng::new(54);
    let x = rng.vec::<T>(16);
    let y = rng.vec::<T>(16);
    for device in [false, true] {
        s.pointer_mode(device);
        let al = Arg::new(rng.scalar::<T>(), device);
        // Two vectors: n <= 0 or a zero increment.
        for (c, &(n, ix, iy)) in [(0i64, 1i64, 1i64), (-3, 1, 1), (5, 0, 1), (5, 1, 0), (5, 0, 0)].iter().enumerate() {
            let mode = MODES[c % 3];
            let (xd, y1, y2) = (up(&x), up(&y), up(&y));
            s.fence();
            for h in [s.h, std::ptr::null_mut()] {
                let what = format!("n={n} incx={ix} incy={iy} handle={h:?} device={device} {mode:?}");
                let st = with_mode(mode, || unsafe {
                    (axpy.ours)(h, I::of(n), al.ptr(), dp(&xd), I::of(ix), dp(&y1), I::of(iy))
                });
                let sr = unsafe { (axpy.real)(h, I::of(n), al.ptr(), dp(&xd), I::of(ix), dp(&y2), I::of(iy)) };
                s.sync();
                assert_eq!(st, sr, "{} {what}: status", axpy.name);
                untouched_or_same(st, &down::<T>(&y1), &down::<T>(&y2), &y, &format!("{} {what}", axpy.name));

                let (mut r1, mut r2) = (Res::new(poison::<T>(), device), Res::new(poison::<T>(), device));
                let st = with_mode(mode, || unsafe {
                    (dot.ours)(h, I::of(n), dp(&xd), I::of(ix), dp(&xd), I::of(iy), r1.ptr())
                });
                let sr = unsafe { (dot.real)(h, I::of(n), dp(&xd), I::of(ix), dp(&xd), I::of(iy), r2.ptr()) };
                s.sync();
                assert_eq!(st, sr, "{} {what}: status", dot.name);
                assert_eq!(bits(r1.get()), bits(r2.get()), "{} {what}: result", dot.name);
            }
        }
        // One vector: n <= 0 or incx <= 0.
        for (c, &(n, ix)) in [(0i64, 1i64), (-3, 1), (5, 0), (5, -1), (5, -2)].iter().enumerate() {
            let mode = MODES[c % 3];
            let (xd, x1, x2) = (up(&x), up(&x), up(&x));
            s.fence();
            for h in [s.h, std::ptr::null_mut()] {
                let what = format!("n={n} incx={ix} handle={h:?} device={device} {mode:?}");
                let st = with_mode(mode, || unsafe { (scal.ours)(h, I::of(n), al.ptr(), dp(&x1), I::of(ix)) });
                let sr = unsafe { (scal.real)(h, I::of(n), al.ptr(), dp(&x2), I::of(ix)) };
                s.sync();
                assert_eq!(st, sr, "{} {what}: status", scal.name);
                untouched_or_same(st, &down::<T>(&x1), &down::<T>(&x2), &x, &format!("{} {what}", scal.name));

                let (mut r1, mut r2) = (Res::new(poison::<T::Real>(), device), Res::new(poison::<T::Real>(), device));
                let st = with_mode(mode, || unsafe { (nrm2.ours)(h, I::of(n), dp(&xd), I::of(ix), r1.ptr()) });
                let sr = unsafe { (nrm2.real)(h, I::of(n), dp(&xd), I::of(ix), r2.ptr()) };
                s.sync();
                assert_eq!(st, sr, "{} {what}: status", nrm2.name);
                assert_eq!(bits(r1.get()), bits(r2.get()), "{} {what}: result", nrm2.name);

                let (mut r1, mut r2) = (Res::new(I::of(-77), device), Res::new(I::of(-77), device));
                let st = with_mode(mode, || unsafe { (amax.ours)(h, I::of(n), dp(&xd), I::of(ix), r1.ptr()) });
                let sr = unsafe { (amax.real)(h, I::of(n), dp(&xd), I::of(ix), r2.ptr()) };
                s.sync();
                assert_eq!(st, sr, "{} {what}: status", amax.name);
                assert_eq!(r1.get(), r2.get(), "{} {what}: result", amax.name);
            }
        }
    }
}

#[test]
fn cublas_bad_arguments_give_the_real_status() {
    let Some(s) = session("cublas_bad_arguments_give_the_real_status") else { return };
    let (a, b, c, d) = v2::gemv();
    bad_gemv(&s, a);
    bad_gemv(&s, b);
    bad_gemv(&s, c);
    bad_gemv(&s, d);
    let (a, _, _, _) = v2_64::gemv();
    bad_gemv(&s, a);
    let (a, b, c, d, e, f) = v2::ger();
    bad_ger(&s, a);
    bad_ger(&s, b);
    bad_ger(&s, c);
    bad_ger(&s, d);
    bad_ger(&s, e);
    bad_ger(&s, f);
    let (_, _, _, _, _, f) = v2_64::ger();
    bad_ger(&s, f);
    let (a, b, c, d) = v2::trmv();
    bad_trmv(&s, a);
    bad_trmv(&s, b);
    bad_trmv(&s, c);
    bad_trmv(&s, d);
    let (_, b, _, _) = v2_64::trmv();
    bad_trmv(&s, b);
    let (ax, sc, dt, nr, am) = (v2::axpy(), v2::scal(), v2::dot(), v2::nrm2(), v2::amax());
    degenerate_level1(&s, ax.0, sc.0, dt.0, nr.0, am.0);
    degenerate_level1(&s, ax.3, sc.3, dt.5, nr.3, am.3);
    let (ax, sc, dt, nr, am) = (v2_64::axpy(), v2_64::scal(), v2_64::dot(), v2_64::nrm2(), v2_64::amax());
    degenerate_level1(&s, ax.1, sc.1, dt.1, nr.1, am.1);
    degenerate_level1(&s, ax.2, sc.2, dt.3, nr.2, am.2);
}

// ---------------------------------------------------------------------------------------
// Handle functions, determinism, a huge case.

#[test]
fn cublas_handle_functions_forward_to_the_real_cublas() {
    let Some(s) = session("cublas_handle_functions_forward_to_the_real_cublas") else { return };
    type GetInt = unsafe extern "C" fn(Handle, *mut c_int) -> Status;
    let (mut ours, mut theirs) = (0, 0);
    assert_eq!(unsafe { cublasGetVersion_v2(s.h, &mut ours) }, OK);
    assert_eq!(unsafe { real::<GetInt>("cublasGetVersion_v2")(s.h, &mut theirs) }, OK);
    assert_eq!(ours, theirs);
    assert!(ours > 0);
    for mode in [cb::CUBLAS_ATOMICS_ALLOWED, cb::CUBLAS_ATOMICS_NOT_ALLOWED] {
        assert_eq!(unsafe { cublasSetAtomicsMode(s.h, mode) }, OK);
        let (mut a, mut b) = (-1, -1);
        assert_eq!(unsafe { cublasGetAtomicsMode(s.h, &mut a) }, OK);
        assert_eq!(unsafe { real::<GetInt>("cublasGetAtomicsMode")(s.h, &mut b) }, OK);
        assert_eq!((a, b), (mode, mode));
    }
    let mut math = -1;
    assert_eq!(unsafe { cublasGetMathMode(s.h, &mut math) }, OK);
    assert_eq!(unsafe { cublasSetMathMode(s.h, math) }, OK);
    // Atomics allowed does not change hyblas's (atomic-free) results.
    assert_eq!(unsafe { cublasSetAtomicsMode(s.h, cb::CUBLAS_ATOMICS_ALLOWED) }, OK);
    check_dot(&s, v2::dot().0, &[70_001], 61);
    assert_eq!(unsafe { cublasSetAtomicsMode(s.h, cb::CUBLAS_ATOMICS_NOT_ALLOWED) }, OK);
}

/// Held shut by `hold_stream` until set (a host function on the user stream waits for it).
static GATE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(true);

unsafe extern "C" fn hold_stream(_: *mut std::ffi::c_void) {
    while !GATE.load(std::sync::atomic::Ordering::Acquire) {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

/// hyblas enqueues on the handle's stream and does not wait for it: with the user stream held
/// by a host function, the calls return and nothing has changed yet (a kernel on any other
/// stream would already have run); released, the results match the real cuBLAS.
#[test]
fn cublas_calls_run_on_the_handles_stream() {
    use std::sync::atomic::Ordering;
    // Alone: another test's context-wide synchronization would wait for the held stream.
    let Some((_alone, s)) = session_alone("cublas_calls_run_on_the_handles_stream") else { return };
    let mut rng = Rng::new(91);
    let (n, m) = (1i64 << 20, 1500i64);
    let x = rng.vec::<f32>(n as usize);
    let y = rng.vec::<f32>(n as usize);
    let a = rng.vec::<f32>((m * m) as usize);
    let (xd, y1, y2, ad, v1, v2) = (up(&x), up(&y), up(&y), up(&a), up(&y[..m as usize]), up(&y[..m as usize]));
    s.pointer_mode(false);
    // Warm up (kernel compilation, workspaces) so the held calls only enqueue.
    let (saxpy, sgemv, strmv) = (v2::axpy().0, v2::gemv().0, v2::trmv().0);
    let (al, be) = (0.5f32, -1.0f32);
    s.fence();
    let calls = |ya: &DeviceBuffer, va: &DeviceBuffer, ours: bool| unsafe {
        let (fa, fg, ft) =
            if ours { (saxpy.ours, sgemv.ours, strmv.ours) } else { (saxpy.real, sgemv.real, strmv.real) };
        let mm = m as i32;
        [
            fa(s.h, n as i32, &al, dp(&xd), 1, dp(ya), 1),
            fg(s.h, cb::CUBLAS_OP_T, mm, mm, &al, dp(&ad), mm, dp(&xd), 1, &be, dp(va), 1),
            ft(s.h, cb::CUBLAS_FILL_MODE_UPPER, cb::CUBLAS_OP_N, cb::CUBLAS_DIAG_NON_UNIT, mm, dp(&ad), mm, dp(va), 1),
        ]
    };
    let (w1, w2) = (up(&y), up(&y[..m as usize]));
    s.fence();
    assert_eq!(with_mode(Mode::Hyblas, || calls(&w1, &w2, true)), [OK; 3]);
    s.sync();

    GATE.store(false, Ordering::Release);
    // A watchdog opens the gate if a call waits for the stream (it would never return).
    let watchdog = std::thread::spawn(|| {
        std::thread::sleep(std::time::Duration::from_secs(20));
        !GATE.swap(true, Ordering::AcqRel)
    });
    let st = unsafe { sys::cuLaunchHostFunc(s.stream, Some(hold_stream), std::ptr::null_mut()) };
    assert_eq!(st, sys::CUresult::CUDA_SUCCESS);
    let statuses = with_mode(Mode::Hyblas, || calls(&y1, &v1, true));
    let early_y = down::<f32>(&y1);
    let early_v = down::<f32>(&v1);
    let opened_by_watchdog = GATE.swap(true, Ordering::AcqRel);
    s.sync();
    assert!(!opened_by_watchdog, "a call waited for the held stream (it synchronizes instead of enqueueing)");
    assert_eq!(statuses, [OK; 3]);
    assert_eq!(
        early_y.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        y.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        "saxpy ran before the held stream was released: not on the handle's stream"
    );
    assert_eq!(
        early_v.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        y[..m as usize].iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        "sgemv/strmv ran before the held stream was released: not on the handle's stream"
    );
    assert_eq!(calls(&y2, &v2, false), [OK; 3]);
    s.sync();
    assert_close(&down::<f32>(&y1), &down::<f32>(&y2), 2, "saxpy after the release");
    assert_close(&down::<f32>(&v1), &down::<f32>(&v2), 2 * m as usize, "sgemv + strmv after the release");
    drop(watchdog);
}

/// The same call under two block shapes gives the same bits (hyblas's fixed reduction order).
#[test]
fn cublas_results_do_not_depend_on_the_block_shape() {
    let Some(s) = session("cublas_results_do_not_depend_on_the_block_shape") else { return };
    let mut rng = Rng::new(71);
    let n = 1_000_003i64;
    let x = rng.vec::<f32>(n as usize);
    let y = rng.vec::<f32>(n as usize);
    let (xd, yd) = (up(&x), up(&y));
    let (m, k) = (2001i64, 1499i64);
    let a = rng.vec::<f32>((m * k) as usize);
    let ad = up(&a);
    let v = rng.vec::<f32>(m as usize);
    let vd = up(&v);
    s.fence();
    let sdot = v2::dot().0;
    let sgemv = v2::gemv().0;
    let snrm2 = v2::nrm2().0;
    let run = |tx: u32| {
        tune::with_shape(tx, 1, || {
            with_mode(Mode::Hyblas, || {
                s.pointer_mode(false);
                let mut d = 0f32;
                assert_eq!(unsafe { (sdot.ours)(s.h, n as i32, dp(&xd), 1, dp(&yd), 1, &mut d) }, OK);
                let mut nr = 0f32;
                assert_eq!(unsafe { (snrm2.ours)(s.h, n as i32, dp(&xd), 1, &mut nr) }, OK);
                let out = up(&vec![0f32; k as usize]);
                s.fence();
                let (al, be) = (0.75f32, 0f32);
                let st = unsafe {
                    (sgemv.ours)(
                        s.h,
                        cb::CUBLAS_OP_T,
                        m as i32,
                        k as i32,
                        &al,
                        dp(&ad),
                        m as i32,
                        dp(&vd),
                        1,
                        &be,
                        dp(&out),
                        1,
                    )
                };
                assert_eq!(st, OK);
                s.sync();
                (d.to_bits(), nr.to_bits(), down::<f32>(&out).iter().map(|v| v.to_bits()).collect::<Vec<_>>())
            })
        })
    };
    assert_eq!(run(64), run(512), "sdot / snrm2 / sgemv_t bits differ between block shapes 64 and 512");
}

/// One case past 2^31 bytes per vector through the 64-bit entry points.
#[test]
fn cublas_huge_vectors_through_the_64bit_entry_points() {
    let Some(s) = session("cublas_huge_vectors_through_the_64bit_entry_points") else { return };
    let n: i64 = (1 << 29) + 7;
    let bytes = n as u64 * 4;
    if s.rt.props.total_mem < 4 * bytes + (1 << 30) {
        println!(
            "SKIPPED cublas_huge_vectors_through_the_64bit_entry_points: {} bytes of device memory",
            s.rt.props.total_mem
        );
        return;
    }
    // Fresh random blocks, tiled (generating 2^29 numbers one by one would dominate the test).
    let mut rng = Rng::new(81);
    let tile = |rng: &mut Rng| {
        let block = rng.vec::<f32>(1 << 20);
        (0..n as usize).map(|i| block[(i * 7 + i / (1 << 20)) % (1 << 20)]).collect::<Vec<f32>>()
    };
    let x = tile(&mut rng);
    let y = tile(&mut rng);
    let (xd, y1, y2) = (up(&x), up(&y), up(&y));
    s.fence();
    s.pointer_mode(false);
    let (saxpy, sdot) = (v2_64::axpy().0, v2_64::dot().0);
    let alpha = 0.625f32;
    let st = with_mode(Mode::Hyblas, || unsafe { (saxpy.ours)(s.h, n, &alpha, dp(&xd), 1, dp(&y1), 1) });
    let sr = unsafe { (saxpy.real)(s.h, n, &alpha, dp(&xd), 1, dp(&y2), 1) };
    s.sync();
    assert_eq!((st, sr), (OK, OK));
    let (g, w) = (down::<f32>(&y1), down::<f32>(&y2));
    for i in 0..n as usize {
        let t = 4.0 * f32::EPSILON * (alpha * x[i]).abs().max(y[i].abs()).max(f32::MIN_POSITIVE);
        assert!((g[i] - w[i]).abs() <= t, "saxpy_64 element {i}: got {}, want {}", g[i], w[i]);
    }
    drop((g, w, y1, y2));
    let (mut d1, mut d2) = (0f32, 0f32);
    let st = with_mode(Mode::Hyblas, || unsafe { (sdot.ours)(s.h, n, dp(&xd), 1, dp(&xd), 1, &mut d1) });
    let sr = unsafe { (sdot.real)(s.h, n, dp(&xd), 1, dp(&xd), 1, &mut d2) };
    assert_eq!((st, sr), (OK, OK));
    assert!((d1 - d2).abs() <= 1e-3 * d2.abs(), "sdot_64 over 2^29+7: got {d1}, want {d2}");
}

// ---------------------------------------------------------------------------------------
// Without a GPU: the policy, panics, null handles, no cuBLAS.

#[test]
fn cublas_policy_defaults_and_modes() {
    with_mode(Mode::Auto, || {
        // Every calibrated entry: cuBLAS below the first flip point, then alternating.
        use hyblas::plan::gpu::gpu_calibrated::TABLE;
        let mut checked = 0;
        for &(short, op, flips) in TABLE {
            let mut cs = short.chars();
            let first = cs.next().unwrap().to_ascii_uppercase();
            let sym: &'static str = Box::leak(format!("cublas{first}{}_v2", cs.as_str()).into_boxed_str());
            let route = |side: i64| {
                if short.ends_with("gemv") {
                    let t = match op {
                        b'N' => Trans::No,
                        b'T' => Trans::Trans,
                        _ => Trans::ConjTrans,
                    };
                    policy::gemv(sym, t, side, side).route
                } else if short.contains("ger") {
                    policy::ger(sym, side, side).route
                } else if short.ends_with("trmv") {
                    policy::trmv(sym, side).route
                } else {
                    policy::level1(sym, "", side).route
                }
            };
            let first_side = flips.first().map_or(1 << 20, |&f| f as i64 - 1);
            assert_eq!(route(first_side.max(1)), Route::Vendor, "{short} below its first flip point");
            for (i, &f) in flips.iter().enumerate() {
                let want = if i % 2 == 0 { Route::Hyblas } else { Route::Vendor };
                assert_eq!(route(f as i64), want, "{short} at flip point {f}");
                checked += 1;
            }
        }
        assert!(checked > 20, "the calibrated table has entries");
        let d = policy::decide(None, || policy::gemv("cublasDgemv_v2", Trans::No, 8, 8));
        assert_eq!(d.route, Route::Vendor);
        assert!(d.reason.to_string().contains("calibrated"), "{}", d.reason);
        let d = policy::decide(Some("n <= 0"), || panic!("the model is not asked for degenerate calls"));
        assert_eq!(d.route, Route::Vendor);
        assert!(d.reason.to_string().contains("n <= 0"));
    });
    with_mode(Mode::Hyblas, || {
        assert_eq!(policy::mode(), Mode::Hyblas);
        let d = policy::decide(None, || panic!("a forced mode does not ask the model"));
        assert_eq!(d.route, Route::Hyblas);
        assert_eq!(d.reason.to_string(), "HYBLAS_CUBLAS=hyblas");
        // Degenerate calls go to cuBLAS whatever the mode.
        assert_eq!(policy::decide(Some("zero increment"), || unreachable!()).route, Route::Vendor);
        with_mode(Mode::Vendor, || assert_eq!(policy::decide(None, || unreachable!()).route, Route::Vendor));
        assert_eq!(policy::mode(), Mode::Hyblas, "nested with_mode restores");
        let _ = std::panic::catch_unwind(|| with_mode(Mode::Vendor, || panic!("inside")));
        assert_eq!(policy::mode(), Mode::Hyblas, "with_mode restores after a panic");
    });
    assert_eq!(Mode::parse("HyBLAS"), Some(Mode::Hyblas));
    assert_eq!(Mode::parse("cublas"), Some(Mode::Vendor));
    assert_eq!(Mode::parse(""), Some(Mode::Auto));
    assert_eq!(Mode::parse("gpu"), None);
    assert_eq!(policy::short_name("cublasSgemv_v2_64"), "sgemv");
    assert_eq!(policy::short_name("cublasIzamax_v2"), "izamax");
    assert_eq!(policy::short_name("cublasZdscal_v2"), "zdscal");
}

/// Null handles and bad arguments never reach hyblas's kernels: with a real cuBLAS the call is
/// its (null handles are safe to pass it, no GPU needed); without one, the documented status.
#[test]
fn cublas_null_handles_bad_arguments_and_no_cublas() {
    // A panic inside an export becomes INTERNAL_ERROR, never an unwind into C.
    assert_eq!(cb::guarded("test", || panic!("boom")), cb::CUBLAS_STATUS_INTERNAL_ERROR);
    let fake = 0x10 as Handle;
    let (al, be) = (1f32, 0f32);
    let (a, x, mut y) = ([0f32; 4], [0f32; 2], [7f32; 2]);
    // Raw pointer: the calls below must never write through it (checked at the end).
    let yp = y.as_mut_ptr();
    let sgemv = |f: GemvF<f32, i32>, h: Handle, trans: c_int, m: i32, n: i32, lda: i32, incx: i32| unsafe {
        f(h, trans, m, n, &al, a.as_ptr(), lda, x.as_ptr(), incx, &be, yp, 1)
    };
    let ours = v2::sgemv_ours();
    // (trans, m, n, lda, incx): bad values of each argument, degenerate and ordinary calls.
    let cases = [
        (0, 2, 2, 2, 1),
        (9, 2, 2, 2, 1),
        (-1, 2, 2, 2, 1),
        (0, -1, 2, 2, 1),
        (1, 2, -1, 2, 1),
        (0, 2, 2, 1, 1),
        (2, 2, 2, 2, 0),
        (0, 0, 2, 1, 1),
        (0, 2, 0, 2, 1),
    ];
    if vendor::present() {
        let real_sgemv = real::<GemvF<f32, i32>>("cublasSgemv_v2");
        for (trans, m, n, lda, incx) in cases {
            for mode in MODES {
                let st = with_mode(mode, || sgemv(ours, std::ptr::null_mut(), trans, m, n, lda, incx));
                let sr = sgemv(real_sgemv, std::ptr::null_mut(), trans, m, n, lda, incx);
                assert_eq!(st, sr, "null handle, trans={trans} m={m} n={n} lda={lda} incx={incx} {mode:?}");
            }
        }
        let (saxpy, real_saxpy) = (v2::saxpy_ours(), real::<AxpyF<f32, i32>>("cublasSaxpy_v2"));
        for n in [-1, 0, 2] {
            let st = unsafe { saxpy(std::ptr::null_mut(), n, &al, x.as_ptr(), 1, yp, 1) };
            let sr = unsafe { real_saxpy(std::ptr::null_mut(), n, &al, x.as_ptr(), 1, yp, 1) };
            assert_eq!(st, sr, "saxpy, null handle, n={n}");
        }
        let (mut v1, mut v2) = (-1, -1);
        let st = unsafe { cublasGetVersion_v2(std::ptr::null_mut(), &mut v1) };
        let sr = unsafe {
            real::<unsafe extern "C" fn(Handle, *mut c_int) -> Status>("cublasGetVersion_v2")(
                std::ptr::null_mut(),
                &mut v2,
            )
        };
        assert_eq!((st, v1), (sr, v2), "cublasGetVersion_v2 with a null handle");
        assert_eq!(y, [7.0, 7.0], "nothing written");
        return;
    }
    // No cuBLAS: the documented statuses (a fake handle is never dereferenced), and nothing
    // to forward a valid call to.
    for (trans, m, n, lda, incx) in cases {
        let st = sgemv(ours, std::ptr::null_mut(), trans, m, n, lda, incx);
        assert_eq!(st, cb::CUBLAS_STATUS_NOT_INITIALIZED, "null handle, trans={trans} m={m} n={n}");
        let bad = !(0..=2).contains(&trans) || m < 0 || n < 0 || lda < m.max(1) || incx == 0;
        let want = if bad { cb::CUBLAS_STATUS_INVALID_VALUE } else { cb::CUBLAS_STATUS_NOT_INITIALIZED };
        for mode in MODES {
            let st = with_mode(mode, || sgemv(ours, fake, trans, m, n, lda, incx));
            assert_eq!(st, want, "trans={trans} m={m} n={n} lda={lda} incx={incx} {mode:?}");
        }
    }
    let st = unsafe { v2_64::sgemv_ours()(fake, 0, 2, 2, &al, a.as_ptr(), 1, x.as_ptr(), 1, &be, yp, 1) };
    assert_eq!(st, cb::CUBLAS_STATUS_INVALID_VALUE, "sgemv_v2_64 lda < m");
    let mut h: Handle = std::ptr::null_mut();
    assert_eq!(unsafe { cublasCreate_v2(&mut h) }, cb::CUBLAS_STATUS_NOT_INITIALIZED);
    let mut v = 0;
    assert_eq!(unsafe { cublasGetVersion_v2(fake, &mut v) }, cb::CUBLAS_STATUS_NOT_INITIALIZED);
    for mode in MODES {
        let st = with_mode(mode, || unsafe { v2::saxpy_ours()(fake, 2, &al, x.as_ptr(), 1, yp, 1) });
        assert_eq!(st, cb::CUBLAS_STATUS_NOT_INITIALIZED, "{mode:?}");
    }
    assert_eq!(y, [7.0, 7.0], "nothing written");
}

const CHILD: &str = "HYBLAS_CUBLAS_TEST_CHILD";

/// `HYBLAS_CUBLAS=hyblas|vendor` and the threshold keys, read from the environment by a child
/// process (the configuration is read once per process); the trace names the route.
#[test]
fn cublas_environment_forces_a_side() {
    if std::env::var_os(CHILD).is_some() {
        return;
    }
    for (mode, want) in [("hyblas", "route=hyblas"), ("vendor", "route=vendor (HYBLAS_CUBLAS=vendor)")] {
        let trace = std::env::temp_dir().join(format!("hyblas-cublas-{}-{mode}.log", std::process::id()));
        let _ = std::fs::remove_file(&trace);
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "cublas_environment_child", "--nocapture", "--test-threads=1"])
            .env(CHILD, mode)
            .env("HYBLAS_CUBLAS", mode)
            .env("HYBLAS_TRACE", &trace)
            .env("HYBLAS_CUBLAS_SDOT_MIN", "7")
            .env("HYBLAS_CUBLAS_GEMV_MIN", "10")
            .env("HYBLAS_CUBLAS_SGEMV_T_MIN", "20")
            .output()
            .expect("run the child");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "child {mode} failed:\n{stdout}\n{stderr}");
        assert!(stdout.contains(&format!("CHILD OK {mode}")), "the child test did not run:\n{stdout}\n{stderr}");
        if stdout.contains("CALLS MADE") {
            let text = std::fs::read_to_string(&trace).expect("trace written");
            let lines: Vec<&str> = text.lines().filter(|l| l.contains("cublasSaxpy_v2")).collect();
            assert!(!lines.is_empty(), "no trace line for cublasSaxpy_v2:\n{text}");
            for l in lines {
                assert!(l.contains(want), "HYBLAS_CUBLAS={mode}: {l}");
            }
        }
        let _ = std::fs::remove_file(&trace);
    }
}

#[test]
fn cublas_environment_child() {
    let Ok(mode) = std::env::var(CHILD) else { return };
    assert_eq!(policy::mode(), Mode::parse(&mode).unwrap());
    // The most specific key wins; others keep their family's threshold.
    assert_eq!(policy::level1("cublasSdot_v2", "dot", 7).route, Route::Hyblas);
    assert_eq!(policy::level1("cublasSdot_v2", "dot", 6).route, Route::Vendor);
    assert_eq!(policy::level1("cublasDdot_v2", "dot", 7).route, Route::Vendor);
    assert!(policy::level1("cublasSdot_v2", "dot", 7).reason.to_string().contains("HYBLAS_CUBLAS_SDOT_MIN"));
    assert_eq!(policy::gemv("cublasDgemv_v2", Trans::No, 10, 10).route, Route::Hyblas);
    assert_eq!(policy::gemv("cublasSgemv_v2", Trans::No, 10, 10).route, Route::Hyblas);
    assert_eq!(policy::gemv("cublasSgemv_v2", Trans::Trans, 19, 19).route, Route::Vendor);
    assert_eq!(policy::gemv("cublasSgemv_v2", Trans::Trans, 20, 20).route, Route::Hyblas);
    let (al, x) = (0.5f32, [1f32, 2.0, 3.0]);
    if !vendor::present() {
        // A fake handle is safe here: with no cuBLAS the call is refused before any use.
        let mut y = [1f32; 3];
        let st = unsafe { v2::saxpy_ours()(0x10 as Handle, 3, &al, x.as_ptr(), 1, y.as_mut_ptr(), 1) };
        assert_eq!(st, cb::CUBLAS_STATUS_NOT_INITIALIZED);
        println!("CALLS MADE");
    } else if let Some(s) = session("cublas_environment_child") {
        s.pointer_mode(false);
        let (xd, y1, y2) = (up(&x), up(&[1f32; 3]), up(&[1f32; 3]));
        s.fence();
        let saxpy = v2::axpy().0;
        let st = unsafe { (saxpy.ours)(s.h, 3, &al, dp(&xd), 1, dp(&y1), 1) };
        let sr = unsafe { (saxpy.real)(s.h, 3, &al, dp(&xd), 1, dp(&y2), 1) };
        s.sync();
        assert_eq!((st, sr), (OK, OK));
        assert_eq!(down::<f32>(&y1), down::<f32>(&y2));
        println!("CALLS MADE");
    }
    println!("CHILD OK {mode}");
}
