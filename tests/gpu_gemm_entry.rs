//! Issue 4, the GEMM entry points: hyblas's exports `cublas?gemm_v2` (+ `_v2_64`),
//! `cublasGemmEx` (+ `_64`) and `cublas?gemmStridedBatched` (+ `_64`) against the real cuBLAS
//! functions (`gpu::vendor::get`) on the same fresh random data, with a user stream on a real
//! handle, in both pointer modes and under every routing mode (hyblas = split-k, vendor, auto);
//! bad arguments give the real cuBLAS's status; the Fortran/CBLAS `?gemm` on device memory
//! against the CPU engine on host copies; the GEMM routing policy and its environment keys.
//!
//! Needs a GPU and a real cuBLAS (libcublas.so.13 or .12 on the loader path); without them the
//! GPU tests print SKIPPED. The policy and the no-cuBLAS behaviour are checked everywhere.
//! While split-k is not built (it returns Unsupported), forced-hyblas calls fall back to cuBLAS
//! and these tests still hold: they check results, statuses and streams, not the route.

mod common;
// Its LP64 `dgemm_` and `zgemm_`; the rest of it serves the offload test.
#[allow(dead_code)]
#[path = "common/fortran_gemm.rs"]
mod fortran_gemm;
use common::*;
use fortran_gemm::{dgemm_, zgemm_};
#[path = "common/cublas.rs"]
mod harness;
use harness::*;
use hyblas::abi::cublas::{self as cb, Handle, Status};
use hyblas::gpu::driver::sys;
use hyblas::gpu::splitk::Reduction;
use hyblas::gpu::vendor::{GemmBatchedFn as PtrsF, GemmExFn as GemmExF, GemmFn as GemmF, GemmStridedFn as StridedF};
use hyblas::gpu::{vendor, DeviceBuffer};
use hyblas::plan::gemm as gemm_plan;
use hyblas::plan::gpu::{self as policy, with_mode, Mode, Reason, Route};
use hyblas::types::{Scalar, Trans, C32, C64};
use std::ffi::{c_char, c_int, c_void};

const N: c_int = cb::CUBLAS_OP_N;
const T: c_int = cb::CUBLAS_OP_T;
const C: c_int = cb::CUBLAS_OP_C;
const OPS: [c_int; 3] = [N, T, C];

macro_rules! entry_points {
    ($m:ident, $I:ty, $v2:literal, $plain:literal) => {
        #[allow(dead_code, clippy::type_complexity)]
        mod $m {
            use super::*;

            macro_rules! p {
                ($f:ident, $name:literal, $s:expr) => {
                    P { ours: $f as _, real: real(concat!($name, $s)), name: concat!($name, $s) }
                };
            }

            #[rustfmt::skip]
            extern "C" {
                #[link_name = concat!("cublasSgemm", $v2)] fn x_sgemm(h: Handle, ta: c_int, tb: c_int, m: $I, n: $I, k: $I, al: *const f32, a: *const f32, lda: $I, b: *const f32, ldb: $I, be: *const f32, c: *mut f32, ldc: $I) -> Status;
                #[link_name = concat!("cublasDgemm", $v2)] fn x_dgemm(h: Handle, ta: c_int, tb: c_int, m: $I, n: $I, k: $I, al: *const f64, a: *const f64, lda: $I, b: *const f64, ldb: $I, be: *const f64, c: *mut f64, ldc: $I) -> Status;
                #[link_name = concat!("cublasCgemm", $v2)] fn x_cgemm(h: Handle, ta: c_int, tb: c_int, m: $I, n: $I, k: $I, al: *const C32, a: *const C32, lda: $I, b: *const C32, ldb: $I, be: *const C32, c: *mut C32, ldc: $I) -> Status;
                #[link_name = concat!("cublasZgemm", $v2)] fn x_zgemm(h: Handle, ta: c_int, tb: c_int, m: $I, n: $I, k: $I, al: *const C64, a: *const C64, lda: $I, b: *const C64, ldb: $I, be: *const C64, c: *mut C64, ldc: $I) -> Status;
                #[link_name = concat!("cublasGemmEx", $plain)] fn x_gemm_ex(h: Handle, ta: c_int, tb: c_int, m: $I, n: $I, k: $I, al: *const c_void, a: *const c_void, at: c_int, lda: $I, b: *const c_void, bt: c_int, ldb: $I, be: *const c_void, c: *mut c_void, ct: c_int, ldc: $I, compute: c_int, algo: c_int) -> Status;
                #[link_name = concat!("cublasSgemmStridedBatched", $plain)] fn x_ssb(h: Handle, ta: c_int, tb: c_int, m: $I, n: $I, k: $I, al: *const f32, a: *const f32, lda: $I, sa: i64, b: *const f32, ldb: $I, sb: i64, be: *const f32, c: *mut f32, ldc: $I, sc: i64, batch: $I) -> Status;
                #[link_name = concat!("cublasDgemmStridedBatched", $plain)] fn x_dsb(h: Handle, ta: c_int, tb: c_int, m: $I, n: $I, k: $I, al: *const f64, a: *const f64, lda: $I, sa: i64, b: *const f64, ldb: $I, sb: i64, be: *const f64, c: *mut f64, ldc: $I, sc: i64, batch: $I) -> Status;
                #[link_name = concat!("cublasCgemmStridedBatched", $plain)] fn x_csb(h: Handle, ta: c_int, tb: c_int, m: $I, n: $I, k: $I, al: *const C32, a: *const C32, lda: $I, sa: i64, b: *const C32, ldb: $I, sb: i64, be: *const C32, c: *mut C32, ldc: $I, sc: i64, batch: $I) -> Status;
                #[link_name = concat!("cublasZgemmStridedBatched", $plain)] fn x_zsb(h: Handle, ta: c_int, tb: c_int, m: $I, n: $I, k: $I, al: *const C64, a: *const C64, lda: $I, sa: i64, b: *const C64, ldb: $I, sb: i64, be: *const C64, c: *mut C64, ldc: $I, sc: i64, batch: $I) -> Status;
                #[link_name = concat!("cublasSgemmBatched", $plain)] fn x_sgb(h: Handle, ta: c_int, tb: c_int, m: $I, n: $I, k: $I, al: *const f32, a: *const *const f32, lda: $I, b: *const *const f32, ldb: $I, be: *const f32, c: *const *mut f32, ldc: $I, batch: $I) -> Status;
                #[link_name = concat!("cublasDgemmBatched", $plain)] fn x_dgb(h: Handle, ta: c_int, tb: c_int, m: $I, n: $I, k: $I, al: *const f64, a: *const *const f64, lda: $I, b: *const *const f64, ldb: $I, be: *const f64, c: *const *mut f64, ldc: $I, batch: $I) -> Status;
                #[link_name = concat!("cublasCgemmBatched", $plain)] fn x_cgb(h: Handle, ta: c_int, tb: c_int, m: $I, n: $I, k: $I, al: *const C32, a: *const *const C32, lda: $I, b: *const *const C32, ldb: $I, be: *const C32, c: *const *mut C32, ldc: $I, batch: $I) -> Status;
                #[link_name = concat!("cublasZgemmBatched", $plain)] fn x_zgb(h: Handle, ta: c_int, tb: c_int, m: $I, n: $I, k: $I, al: *const C64, a: *const *const C64, lda: $I, b: *const *const C64, ldb: $I, be: *const C64, c: *const *mut C64, ldc: $I, batch: $I) -> Status;
            }

            pub fn gemm() -> (P<GemmF<f32, $I>>, P<GemmF<f64, $I>>, P<GemmF<C32, $I>>, P<GemmF<C64, $I>>) {
                (p!(x_sgemm, "cublasSgemm", $v2), p!(x_dgemm, "cublasDgemm", $v2), p!(x_cgemm, "cublasCgemm", $v2), p!(x_zgemm, "cublasZgemm", $v2))
            }
            pub fn gemm_ex() -> P<GemmExF<$I>> {
                p!(x_gemm_ex, "cublasGemmEx", $plain)
            }
            pub fn strided() -> (P<StridedF<f32, $I>>, P<StridedF<f64, $I>>, P<StridedF<C32, $I>>, P<StridedF<C64, $I>>) {
                (p!(x_ssb, "cublasSgemmStridedBatched", $plain), p!(x_dsb, "cublasDgemmStridedBatched", $plain), p!(x_csb, "cublasCgemmStridedBatched", $plain), p!(x_zsb, "cublasZgemmStridedBatched", $plain))
            }
            pub fn pointers() -> (P<PtrsF<f32, $I>>, P<PtrsF<f64, $I>>, P<PtrsF<C32, $I>>, P<PtrsF<C64, $I>>) {
                (p!(x_sgb, "cublasSgemmBatched", $plain), p!(x_dgb, "cublasDgemmBatched", $plain), p!(x_cgb, "cublasCgemmBatched", $plain), p!(x_zgb, "cublasZgemmBatched", $plain))
            }
            /// hyblas's own exports (no real function needed), for the tests without cuBLAS.
            pub fn sgemm_ours() -> GemmF<f32, $I> {
                x_sgemm
            }
            pub fn gemm_ex_ours() -> GemmExF<$I> {
                x_gemm_ex
            }
            pub fn ssb_ours() -> StridedF<f32, $I> {
                x_ssb
            }
        }
    };
}
entry_points!(v2, i32, "_v2", "");
entry_points!(v2_64, i64, "_v2_64", "_64");

// Host ABI (the CPU engine on host memory, the GPU on device memory).
extern "C" {
    fn dgemm_64_(
        ta: *const c_char,
        tb: *const c_char,
        m: *const i64,
        n: *const i64,
        k: *const i64,
        al: *const f64,
        a: *const f64,
        lda: *const i64,
        b: *const f64,
        ldb: *const i64,
        be: *const f64,
        c: *mut f64,
        ldc: *const i64,
    );
    fn cblas_sgemm(
        layout: c_int,
        ta: c_int,
        tb: c_int,
        m: c_int,
        n: c_int,
        k: c_int,
        al: f32,
        a: *const f32,
        lda: c_int,
        b: *const f32,
        ldb: c_int,
        be: f32,
        c: *mut f32,
        ldc: c_int,
    );
    fn cblas_cgemm(
        layout: c_int,
        ta: c_int,
        tb: c_int,
        m: c_int,
        n: c_int,
        k: c_int,
        al: *const C32,
        a: *const C32,
        lda: c_int,
        b: *const C32,
        ldb: c_int,
        be: *const C32,
        c: *mut C32,
        ldc: c_int,
    );
}

// ---------------------------------------------------------------------------------------
// The session: a real handle with a user stream, and data helpers.

fn same_bits<E: Scalar>(a: &[E], b: &[E], what: &str) {
    assert_eq!(a.len(), b.len(), "{what}: length");
    for (i, (&x, &y)) in a.iter().zip(b).enumerate() {
        assert_eq!(bits(x), bits(y), "{what}: element {i}: {x:?} vs {y:?}");
    }
}

/// Routing modes cycled over the cases, so every mode meets every kind of case.
const MODES: [Mode; 3] = [Mode::Hyblas, Mode::Vendor, Mode::Auto];

/// (rows, cols) of an operand stored for op(X) of shape rows_op x cols_op.
fn stored(op: c_int, rows_op: i64, cols_op: i64) -> (i64, i64) {
    if op == N {
        (rows_op, cols_op)
    } else {
        (cols_op, rows_op)
    }
}

/// C for a call: random, the padding rows poisoned, NaN inside when beta = 0 (it must be
/// overwritten, never scaled).
fn c_init<E: Scalar>(rng: &mut Rng, m: i64, n: i64, ldc: i64, beta_zero: bool) -> Vec<E> {
    let mut c = rng.vec::<E>((ldc * n) as usize);
    for j in 0..n {
        for i in 0..ldc {
            let v = &mut c[(i + j * ldc) as usize];
            if i >= m {
                *v = poison::<E>();
            } else if beta_zero {
                *v = E::from_f64(f64::NAN);
            }
        }
    }
    c
}

fn alpha_beta<E: Scalar>(rng: &mut Rng, which: usize) -> (E, E) {
    match which % 4 {
        0 => (rng.scalar(), rng.scalar()),
        1 => (E::zero(), rng.scalar()),
        2 => (rng.scalar(), E::zero()),
        _ => (E::one(), E::one()),
    }
}

// ---------------------------------------------------------------------------------------
// cublas?gemm_v2 / _v2_64

/// Small outputs with long and odd k, tile/chunk edges, and one larger output (the model
/// routes it to cuBLAS; forced, split-k must still be right).
const SHAPES: [(i64, i64, i64); 9] = [
    (1, 1, 1),
    (1, 1, 4099),
    (3, 5, 7),
    (16, 16, 70_001),
    (17, 9, 12_345),
    (32, 32, 65_539),
    (64, 40, 3001),
    (2, 130, 1025),
    (150, 120, 90),
];
const SHAPES_64: [(i64, i64, i64); 3] = [(16, 16, 70_001), (5, 33, 999), (150, 120, 90)];

fn check_gemm<E: Scalar, I: TI>(s: &Session, p: P<GemmF<E, I>>, shapes: &[(i64, i64, i64)], seed: u64) {
    let mut rng = Rng::new(seed);
    let mut case = 0usize;
    for &(m, n, k) in shapes {
        for ta in OPS {
            for tb in OPS {
                for device in [false, true] {
                    let mode = MODES[case % 3];
                    let pad = (case % 2) as i64 * 3;
                    let (alpha, beta) = alpha_beta::<E>(&mut rng, case / 2);
                    case += 1;
                    s.pointer_mode(device);
                    let (ra, ca) = stored(ta, m, k);
                    let (rb, cbn) = stored(tb, k, n);
                    let (lda, ldb, ldc) = (ra + pad, rb + pad, m + 2);
                    let a = rng.vec::<E>((lda * ca) as usize);
                    let b = rng.vec::<E>((ldb * cbn) as usize);
                    let c = c_init::<E>(&mut rng, m, n, ldc, beta == E::zero());
                    let (ad, bd, c1, c2) = (up(&a), up(&b), up(&c), up(&c));
                    let (al, be) = (Arg::new(alpha, device), Arg::new(beta, device));
                    s.fence();
                    let call = |f: GemmF<E, I>, cd: &DeviceBuffer| unsafe {
                        f(
                            s.h,
                            ta,
                            tb,
                            I::of(m),
                            I::of(n),
                            I::of(k),
                            al.ptr(),
                            dp(&ad),
                            I::of(lda),
                            dp(&bd),
                            I::of(ldb),
                            be.ptr(),
                            dp(cd),
                            I::of(ldc),
                        )
                    };
                    let st = with_mode(mode, || call(p.ours, &c1));
                    let sr = call(p.real, &c2);
                    s.sync();
                    let what = format!(
                        "{} ta={ta} tb={tb} m={m} n={n} k={k} lda={lda} ldb={ldb} ldc={ldc} alpha={alpha:?} beta={beta:?} device={device} {mode:?}",
                        p.name
                    );
                    assert_eq!((st, sr), (OK, OK), "{what}: status");
                    check_mat(&down::<E>(&c1), &down::<E>(&c2), &c, m, n, ldc, k as usize + 2, &what);
                }
            }
        }
    }
}

#[test]
fn gemm_exports_match_the_real_cublas() {
    let Some(s) = session("gemm_exports_match_the_real_cublas") else { return };
    let (a, b, c, d) = v2::gemm();
    check_gemm(&s, a, &SHAPES, 1);
    check_gemm(&s, b, &SHAPES, 2);
    check_gemm(&s, c, &SHAPES, 3);
    check_gemm(&s, d, &SHAPES, 4);
}

#[test]
fn gemm_64bit_entry_points() {
    let Some(s) = session("gemm_64bit_entry_points") else { return };
    let (a, b, c, d) = v2_64::gemm();
    check_gemm(&s, a, &SHAPES_64, 5);
    check_gemm(&s, b, &SHAPES_64, 6);
    check_gemm(&s, c, &SHAPES_64, 7);
    check_gemm(&s, d, &SHAPES_64, 8);
}

/// Split-k allowed to use atomics (the handle's mode) still matches cuBLAS.
#[test]
fn gemm_with_atomics_allowed() {
    let Some(s) = session("gemm_with_atomics_allowed") else { return };
    s.atomics(true);
    let (a, b, _, d) = v2::gemm();
    check_gemm(&s, a, &SHAPES[..6], 9);
    check_gemm(&s, b, &SHAPES[..6], 10);
    check_gemm(&s, d, &SHAPES[3..5], 11);
    s.atomics(false);
}

// ---------------------------------------------------------------------------------------
// cublasGemmEx

/// A covered type combination: ours against the real cublasGemmEx, both pointer modes,
/// every routing mode.
fn check_gemm_ex<E: Scalar, I: TI>(s: &Session, p: P<GemmExF<I>>, dtype: c_int, compute: c_int, seed: u64) {
    let mut rng = Rng::new(seed);
    let mut case = 0usize;
    for &(m, n, k) in &[(16i64, 16i64, 20_001i64), (5, 3, 1000), (70, 9, 333)] {
        for (ta, tb) in [(N, N), (T, N), (C, T), (N, C)] {
            for device in [false, true] {
                let mode = MODES[case % 3];
                let (alpha, beta) = alpha_beta::<E>(&mut rng, case);
                case += 1;
                s.pointer_mode(device);
                let (ra, ca) = stored(ta, m, k);
                let (rb, cbn) = stored(tb, k, n);
                let (lda, ldb, ldc) = (ra + 1, rb, m + 3);
                let a = rng.vec::<E>((lda * ca) as usize);
                let b = rng.vec::<E>((ldb * cbn) as usize);
                let c = c_init::<E>(&mut rng, m, n, ldc, beta == E::zero());
                let (ad, bd, c1, c2) = (up(&a), up(&b), up(&c), up(&c));
                let (al, be) = (Arg::new(alpha, device), Arg::new(beta, device));
                s.fence();
                let call = |f: GemmExF<I>, cd: &DeviceBuffer| unsafe {
                    f(
                        s.h,
                        ta,
                        tb,
                        I::of(m),
                        I::of(n),
                        I::of(k),
                        al.ptr() as *const c_void,
                        dp::<c_void>(&ad),
                        dtype,
                        I::of(lda),
                        dp::<c_void>(&bd),
                        dtype,
                        I::of(ldb),
                        be.ptr() as *const c_void,
                        dp::<c_void>(cd),
                        dtype,
                        I::of(ldc),
                        compute,
                        cb::CUBLAS_GEMM_DEFAULT,
                    )
                };
                let st = with_mode(mode, || call(p.ours, &c1));
                let sr = call(p.real, &c2);
                s.sync();
                let what = format!(
                    "{} type={dtype} compute={compute} ta={ta} tb={tb} m={m} n={n} k={k} device={device} {mode:?}",
                    p.name
                );
                assert_eq!((st, sr), (OK, OK), "{what}: status");
                check_mat(&down::<E>(&c1), &down::<E>(&c2), &c, m, n, ldc, k as usize + 2, &what);
            }
        }
    }
}

/// A combination hyblas does not run: forwarded even when hyblas is forced, so the status and
/// every bit of C are the real cuBLAS's (same handle, stream and algorithm).
#[allow(clippy::too_many_arguments)]
fn forwarded_gemm_ex<I: TI>(
    s: &Session,
    p: P<GemmExF<I>>,
    types: (c_int, c_int, c_int),
    esz: (usize, usize, usize),
    compute: c_int,
    algo: c_int,
    seed: u64,
) {
    let mut rng = Rng::new(seed);
    let (m, n, k) = (16i64, 8i64, 4097i64);
    // Valid values of each element size: exact halves, floats, doubles.
    let bytes = |count: i64, es: usize, rng: &mut Rng| -> Vec<u8> {
        const HALVES: [u16; 6] = [0x3C00, 0xBC00, 0x3800, 0xB800, 0x3400, 0x0000];
        (0..count)
            .flat_map(|_| match es {
                2 => HALVES[(rng.next_u64() % 6) as usize].to_ne_bytes().to_vec(),
                4 => (rng.unit() as f32).to_ne_bytes().to_vec(),
                _ => rng.unit().to_ne_bytes().to_vec(),
            })
            .collect()
    };
    let a = bytes(m * k, esz.0, &mut rng);
    let b = bytes(k * n, esz.1, &mut rng);
    let c = bytes(m * n, esz.2, &mut rng);
    s.pointer_mode(false);
    let (ad, bd, c1, c2) = (up(&a), up(&b), up(&c), up(&c));
    // Scalars: 1 as f64 bits when the compute type is 64-bit, else as f32 (two slots).
    let one64 = A16([1.0f64, 0.0]);
    let one32 = A16([1.0f32, 0.0, 0.0, 0.0]);
    let wide = matches!(compute, cb::CUBLAS_COMPUTE_64F | cb::CUBLAS_COMPUTE_64F_PEDANTIC);
    let al: *const c_void = if wide { one64.0.as_ptr() as *const c_void } else { one32.0.as_ptr() as *const c_void };
    s.fence();
    let call = |f: GemmExF<I>, cd: &DeviceBuffer| unsafe {
        f(
            s.h,
            N,
            N,
            I::of(m),
            I::of(n),
            I::of(k),
            al,
            dp::<c_void>(&ad),
            types.0,
            I::of(m),
            dp::<c_void>(&bd),
            types.1,
            I::of(k),
            al,
            dp::<c_void>(cd),
            types.2,
            I::of(m),
            compute,
            algo,
        )
    };
    let st = with_mode(Mode::Hyblas, || call(p.ours, &c1));
    let sr = call(p.real, &c2);
    s.sync();
    let what = format!("{} types={types:?} compute={compute} algo={algo}", p.name);
    assert_eq!(st, sr, "{what}: status (hyblas {st}, cuBLAS {sr})");
    assert_eq!(down::<u8>(&c1), down::<u8>(&c2), "{what}: C differs from the real cuBLAS's (not forwarded?)");
}

fn gemm_ex_cases<I: TI>(s: &Session, pe: P<GemmExF<I>>, seed: u64) {
    check_gemm_ex::<f32, _>(s, pe, cb::CUDA_R_32F, cb::CUBLAS_COMPUTE_32F, seed);
    check_gemm_ex::<f64, _>(s, pe, cb::CUDA_R_64F, cb::CUBLAS_COMPUTE_64F, seed + 1);
    check_gemm_ex::<C32, _>(s, pe, cb::CUDA_C_32F, cb::CUBLAS_COMPUTE_32F, seed + 2);
    check_gemm_ex::<C64, _>(s, pe, cb::CUDA_C_64F, cb::CUBLAS_COMPUTE_64F, seed + 3);
    check_gemm_ex::<f32, _>(s, pe, cb::CUDA_R_32F, cb::CUBLAS_COMPUTE_32F_PEDANTIC, seed + 4);
    check_gemm_ex::<f64, _>(s, pe, cb::CUDA_R_64F, cb::CUBLAS_COMPUTE_64F_PEDANTIC, seed + 5);
    const TF32: c_int = 77; // CUBLAS_COMPUTE_32F_FAST_TF32
    const R16F: c_int = 2; // CUDA_R_16F
    let (r32, r64, dflt) = (cb::CUDA_R_32F, cb::CUDA_R_64F, cb::CUBLAS_GEMM_DEFAULT);
    // TF32 compute: cuBLAS may round the inputs; hyblas must not answer it.
    forwarded_gemm_ex(s, pe, (r32, r32, r32), (4, 4, 4), TF32, dflt, seed + 6);
    // Half inputs with float output and compute: not a combination hyblas runs.
    forwarded_gemm_ex(s, pe, (R16F, R16F, r32), (2, 2, 4), cb::CUBLAS_COMPUTE_32F, dflt, seed + 7);
    // A mismatched compute type and mixed types: cuBLAS's own status.
    forwarded_gemm_ex(s, pe, (r32, r32, r32), (4, 4, 4), cb::CUBLAS_COMPUTE_64F, dflt, seed + 8);
    forwarded_gemm_ex(s, pe, (r64, r32, r64), (8, 4, 8), cb::CUBLAS_COMPUTE_64F, dflt, seed + 9);
    // An algo value outside cublasGemmAlgo_t.
    forwarded_gemm_ex(s, pe, (r64, r64, r64), (8, 8, 8), cb::CUBLAS_COMPUTE_64F, 55, seed + 10);
}

#[test]
fn gemm_ex_covered_types_and_forwarded_ones() {
    let Some(s) = session("gemm_ex_covered_types_and_forwarded_ones") else { return };
    gemm_ex_cases(&s, v2::gemm_ex(), 20);
    gemm_ex_cases(&s, v2_64::gemm_ex(), 40);
}

// ---------------------------------------------------------------------------------------
// cublas?gemmStridedBatched and cublas?gemmBatched: hyblas's small-product kernel where the
// planner says (small m, n, k) or where forced, checked against the real cuBLAS within rounding;
// forwarded bit for bit where the planner says cuBLAS (k above HYBLAS_GPU_BATCH_MAX_K); the
// real status for a bad batch count.

/// The products' operands: each product's A, B, C at the given strides, and device arrays of
/// their addresses (for the pointer form).
struct BatchData {
    a: DeviceBuffer,
    b: DeviceBuffer,
    c: [DeviceBuffer; 2],
    arrays: [[DeviceBuffer; 3]; 2],
}

fn batch_data<E: Scalar>(rng: &mut Rng, strides: [i64; 3], batch: i64) -> BatchData {
    let [sa, sb, sc] = strides;
    let a = up(&rng.vec::<E>((sa * batch) as usize));
    let b = up(&rng.vec::<E>((sb * batch) as usize));
    let c0 = rng.vec::<E>((sc * batch) as usize);
    let c = [up(&c0), up(&c0)];
    let es = std::mem::size_of::<E>() as u64;
    // Product p's operands in slot batch-1-p: the pointer form reads through the arrays.
    let arr = |base: u64, s: i64| up(&(0..batch).rev().map(|q| base + (q * s) as u64 * es).collect::<Vec<u64>>());
    let arrays = [0, 1].map(|i| [arr(a.ptr, sa), arr(b.ptr, sb), arr(c[i].ptr, sc)]);
    BatchData { a, b, c, arrays }
}

/// One call's outcome on both sides (`d.c[0]` hyblas's, `d.c[1]` the real cuBLAS's): the same
/// status, and C within rounding where hyblas's kernel ran (`kernel`), else bit for bit; then
/// both sides start the next call from the same C.
fn batch_outcome<E: Scalar>(
    s: &Session,
    d: &BatchData,
    (st, sr): (Status, Status),
    kernel: bool,
    k: usize,
    what: &str,
) {
    assert_eq!(st, sr, "{what}: status");
    let (got, want) = (down::<E>(&d.c[0]), down::<E>(&d.c[1]));
    if kernel {
        assert_close(&got, &want, k, what);
    } else {
        same_bits(&got, &want, what);
    }
    d.c[0].write(&want).unwrap();
    s.fence();
}

/// (m, n, k, batch) and whether the planner runs it on hyblas's kernel by default.
const BATCH_CASES: [(i64, i64, i64, i64, bool); 3] =
    [(7, 5, 3001, 3, false), (7, 5, 9, 40, true), (16, 3, 16, 17, true)];

fn check_strided<E: Scalar, I: TI>(s: &Session, p: P<StridedF<E, I>>, seed: u64) {
    let mut rng = Rng::new(seed);
    for (m, n, k, batch, own) in BATCH_CASES {
        let (lda, ldb, ldc) = (k + 1, k, m + 2);
        let (sa, sb, sc) = (lda * m + 5, ldb * n + 3, ldc * n + 1);
        for device in [false, true] {
            s.pointer_mode(device);
            let d = batch_data::<E>(&mut rng, [sa, sb, sc], batch);
            let (al, be) = (Arg::new(rng.scalar::<E>(), device), Arg::new(rng.scalar::<E>(), device));
            s.fence();
            for (nb, forced) in [(batch, false), (batch, true), (-1, true)] {
                let call = |f: StridedF<E, I>, cd: &DeviceBuffer| unsafe {
                    let (h, m, n, k) = (s.h, I::of(m), I::of(n), I::of(k));
                    let (a, b, c) = (dp(&d.a), dp(&d.b), dp(cd));
                    f(
                        h,
                        T,
                        N,
                        m,
                        n,
                        k,
                        al.ptr(),
                        a,
                        I::of(lda),
                        sa,
                        b,
                        I::of(ldb),
                        sb,
                        be.ptr(),
                        c,
                        I::of(ldc),
                        sc,
                        I::of(nb),
                    )
                };
                let st = if forced { with_mode(Mode::Hyblas, || call(p.ours, &d.c[0])) } else { call(p.ours, &d.c[0]) };
                let sr = call(p.real, &d.c[1]);
                s.sync();
                let what = format!("{} m={m} n={n} k={k} batch={nb} device={device} forced={forced}", p.name);
                batch_outcome::<E>(s, &d, (st, sr), own || forced, k as usize, &what);
            }
        }
    }
}

fn check_pointers<E: Scalar, I: TI>(s: &Session, p: P<PtrsF<E, I>>, seed: u64) {
    let mut rng = Rng::new(seed);
    for (m, n, k, batch, own) in BATCH_CASES {
        let (lda, ldb, ldc) = (m + 1, n + 3, m);
        let (sa, sb, sc) = (lda * k + 2, ldb * k, ldc * n);
        for device in [false, true] {
            s.pointer_mode(device);
            let d = batch_data::<E>(&mut rng, [sa, sb, sc], batch);
            let (al, be) = (Arg::new(rng.scalar::<E>(), device), Arg::new(rng.scalar::<E>(), device));
            s.fence();
            for (nb, forced) in [(batch, false), (batch, true), (-1, true)] {
                let call = |f: PtrsF<E, I>, i: usize| unsafe {
                    let (h, m, n, k) = (s.h, I::of(m), I::of(n), I::of(k));
                    let [a, b, c] = &d.arrays[i];
                    let (a, b, c) = (a.ptr as *const *const E, b.ptr as *const *const E, c.ptr as *const *mut E);
                    f(h, N, C, m, n, k, al.ptr(), a, I::of(lda), b, I::of(ldb), be.ptr(), c, I::of(ldc), I::of(nb))
                };
                let st = if forced { with_mode(Mode::Hyblas, || call(p.ours, 0)) } else { call(p.ours, 0) };
                let sr = call(p.real, 1);
                s.sync();
                let what = format!("{} m={m} n={n} k={k} batch={nb} device={device} forced={forced}", p.name);
                batch_outcome::<E>(s, &d, (st, sr), own || forced, k as usize, &what);
            }
        }
    }
}

#[test]
fn gemm_strided_batched_small_on_hyblas_else_forwarded() {
    let Some(s) = session("gemm_strided_batched_small_on_hyblas_else_forwarded") else { return };
    let (a, b, c, d) = v2::strided();
    check_strided(&s, a, 71);
    check_strided(&s, b, 72);
    check_strided(&s, c, 73);
    check_strided(&s, d, 74);
    let (a, _, _, d) = v2_64::strided();
    check_strided(&s, a, 75);
    check_strided(&s, d, 76);
}

#[test]
fn gemm_batched_pointers_small_on_hyblas_else_forwarded() {
    let Some(s) = session("gemm_batched_pointers_small_on_hyblas_else_forwarded") else { return };
    let (a, b, c, d) = v2::pointers();
    check_pointers(&s, a, 81);
    check_pointers(&s, b, 82);
    check_pointers(&s, c, 83);
    check_pointers(&s, d, 84);
    let (_, b, c, _) = v2_64::pointers();
    check_pointers(&s, b, 85);
    check_pointers(&s, c, 86);
}

// ---------------------------------------------------------------------------------------
// Bad and degenerate arguments: the real status, and the real cuBLAS's output.

/// (transa, transb, m, n, k, lda, ldb, ldc).
type BadCase<I> = (c_int, c_int, I, I, I, I, I, I);

/// GEMM_BAD: each documented INVALID_VALUE rule, then
/// degenerate valid calls (empty output, k = 0).
const GEMM_BAD: [BadCase<i64>; 16] = [
    (3, N, 4, 3, 5, 4, 5, 4),
    (N, -1, 4, 3, 5, 4, 5, 4),
    (7, 7, 4, 3, 5, 4, 5, 4),
    (N, N, -1, 3, 5, 4, 5, 4),
    (N, N, 4, -1, 5, 4, 5, 4),
    (N, N, 4, 3, -1, 4, 5, 4),
    (N, N, 4, 3, 5, 3, 5, 4),
    (T, N, 4, 3, 5, 4, 5, 4),
    (N, N, 4, 3, 5, 4, 4, 4),
    (N, T, 4, 3, 5, 4, 2, 4),
    (N, N, 4, 3, 5, 4, 5, 3),
    (N, N, 0, 3, 5, 1, 5, 1),
    (N, N, 4, 0, 5, 4, 5, 4),
    (N, N, 4, 3, 0, 4, 1, 4),
    (T, C, 4, 3, 0, 1, 3, 4),
    (N, N, 0, 0, 0, 1, 1, 1),
];

fn bad_gemm<E: Scalar, I: TI>(s: &Session, p: P<GemmF<E, I>>) {
    let mut rng = Rng::new(81);
    for device in [false, true] {
        s.pointer_mode(device);
        for (i, &(ta, tb, m, n, k, lda, ldb, ldc)) in GEMM_BAD.iter().enumerate() {
            let mode = MODES[i % 3];
            let (a, b) = (rng.vec::<E>(64), rng.vec::<E>(64));
            let c = rng.vec::<E>(64);
            let (ad, bd, c1, c2) = (up(&a), up(&b), up(&c), up(&c));
            let (al, be) = (Arg::new(rng.scalar::<E>(), device), Arg::new(rng.scalar::<E>(), device));
            s.fence();
            for h in [s.h, std::ptr::null_mut()] {
                let call = |f: GemmF<E, I>, cd: &DeviceBuffer| unsafe {
                    f(
                        h,
                        ta,
                        tb,
                        I::of(m),
                        I::of(n),
                        I::of(k),
                        al.ptr(),
                        dp(&ad),
                        I::of(lda),
                        dp(&bd),
                        I::of(ldb),
                        be.ptr(),
                        dp(cd),
                        I::of(ldc),
                    )
                };
                let st = with_mode(mode, || call(p.ours, &c1));
                let sr = call(p.real, &c2);
                s.sync();
                let what = format!(
                    "{} ta={ta} tb={tb} m={m} n={n} k={k} lda={lda} ldb={ldb} ldc={ldc} handle={h:?} device={device} {mode:?}",
                    p.name
                );
                assert_eq!(st, sr, "{what}: status (hyblas {st}, cuBLAS {sr})");
                same_bits(&down::<E>(&c1), &down::<E>(&c2), &format!("{what} (hyblas vs cuBLAS)"));
            }
        }
        // A null alpha or beta in host mode (documented INVALID_VALUE).
        if !device {
            let (ad, bd, c1, c2) =
                (up(&rng.vec::<E>(64)), up(&rng.vec::<E>(64)), up(&[E::one(); 16]), up(&[E::one(); 16]));
            let be = Arg::new(E::one(), false);
            s.fence();
            let call = |f: GemmF<E, I>, cd: &DeviceBuffer| unsafe {
                f(
                    s.h,
                    N,
                    N,
                    I::of(4),
                    I::of(4),
                    I::of(4),
                    std::ptr::null(),
                    dp(&ad),
                    I::of(4),
                    dp(&bd),
                    I::of(4),
                    be.ptr(),
                    dp(cd),
                    I::of(4),
                )
            };
            let st = with_mode(Mode::Hyblas, || call(p.ours, &c1));
            let sr = call(p.real, &c2);
            s.sync();
            assert_eq!(st, sr, "{} null alpha: status", p.name);
            same_bits(&down::<E>(&c1), &down::<E>(&c2), &format!("{} null alpha", p.name));
        }
    }
}

#[test]
fn gemm_bad_arguments_give_the_real_status() {
    let Some(s) = session("gemm_bad_arguments_give_the_real_status") else { return };
    let (a, b, c, d) = v2::gemm();
    bad_gemm(&s, a);
    bad_gemm(&s, b);
    bad_gemm(&s, c);
    bad_gemm(&s, d);
    let (_, b, _, d) = v2_64::gemm();
    bad_gemm(&s, b);
    bad_gemm(&s, d);
}

// ---------------------------------------------------------------------------------------
// Determinism, streams, a huge case.

/// Deterministic split-k (atomics not allowed): the same bits over ten runs, for a long k not
/// a multiple of anything.
#[test]
fn gemm_deterministic_results_repeat_bit_for_bit() {
    let Some(s) = session("gemm_deterministic_results_repeat_bit_for_bit") else { return };
    s.atomics(false);
    s.pointer_mode(false);
    let mut rng = Rng::new(91);
    let (m, n, k) = (16i64, 16i64, (1i64 << 20) + 5);
    let a = rng.vec::<f64>((k * m) as usize);
    let b = rng.vec::<f64>((k * n) as usize);
    let (ad, bd) = (up(&a), up(&b));
    let dgemm = v2::gemm().1;
    let sgemm = v2::gemm().0;
    let af: Vec<f32> = a.iter().map(|&v| v as f32).collect();
    let bf: Vec<f32> = b.iter().map(|&v| v as f32).collect();
    let (afd, bfd) = (up(&af), up(&bf));
    let run = || {
        with_mode(Mode::Hyblas, || {
            let (c, cf) = (up(&vec![0f64; (m * n) as usize]), up(&vec![0f32; (m * n) as usize]));
            s.fence();
            let (al, be) = (A16(1.25f64), A16(0f64));
            let (alf, bef) = (A16(1.25f32), A16(0f32));
            let st = unsafe {
                (dgemm.ours)(
                    s.h,
                    T,
                    N,
                    m as i32,
                    n as i32,
                    k as i32,
                    &al.0,
                    dp(&ad),
                    k as i32,
                    dp(&bd),
                    k as i32,
                    &be.0,
                    dp(&c),
                    m as i32,
                )
            };
            let sf = unsafe {
                (sgemm.ours)(
                    s.h,
                    T,
                    N,
                    m as i32,
                    n as i32,
                    k as i32,
                    &alf.0,
                    dp(&afd),
                    k as i32,
                    dp(&bfd),
                    k as i32,
                    &bef.0,
                    dp(&cf),
                    m as i32,
                )
            };
            assert_eq!((st, sf), (OK, OK));
            s.sync();
            let d: Vec<u64> = down::<f64>(&c).iter().map(|v| v.to_bits()).collect();
            let f: Vec<u32> = down::<f32>(&cf).iter().map(|v| v.to_bits()).collect();
            (d, f)
        })
    };
    let first = run();
    for i in 1..10 {
        assert_eq!(run(), first, "run {i}: dgemm/sgemm T,N 16x16, k = 2^20+5 bits differ from run 0");
    }
}

/// Held shut by `hold_stream` until set (a host function on the user stream waits for it).
static GATE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(true);

unsafe extern "C" fn hold_stream(_: *mut std::ffi::c_void) {
    while !GATE.load(std::sync::atomic::Ordering::Acquire) {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

/// The GEMM export enqueues on the handle's stream and does not wait: with the user stream held
/// by a host function the call returns and C has not changed; released, C matches cuBLAS.
#[test]
fn gemm_runs_on_the_handles_stream() {
    use std::sync::atomic::Ordering;
    let Some(s) = session("gemm_runs_on_the_handles_stream") else { return };
    s.pointer_mode(false);
    s.atomics(false);
    let mut rng = Rng::new(92);
    let (m, n, k) = (16i32, 16i32, 1i32 << 20);
    let a = rng.vec::<f64>(m as usize * k as usize);
    let b = rng.vec::<f64>(k as usize * n as usize);
    let c = rng.vec::<f64>((m * n) as usize);
    let (ad, bd) = (up(&a), up(&b));
    let dgemm = v2::gemm().1;
    let (al, be) = (A16(0.5f64), A16(-1.0f64));
    let call = |f: GemmF<f64, i32>, cd: &DeviceBuffer| unsafe {
        f(s.h, N, N, m, n, k, &al.0, dp(&ad), m, dp(&bd), k, &be.0, dp(cd), m)
    };
    // Warm up (kernel compilation, workspace) so the held call only enqueues.
    let w = up(&c);
    assert_eq!(with_mode(Mode::Hyblas, || call(dgemm.ours, &w)), OK);
    s.sync();
    let (c1, c2) = (up(&c), up(&c));
    GATE.store(false, Ordering::Release);
    let watchdog = std::thread::spawn(|| {
        std::thread::sleep(std::time::Duration::from_secs(20));
        !GATE.swap(true, Ordering::AcqRel)
    });
    let st = unsafe { sys::cuLaunchHostFunc(s.stream, Some(hold_stream), std::ptr::null_mut()) };
    assert_eq!(st, sys::CUresult::CUDA_SUCCESS);
    let status = with_mode(Mode::Hyblas, || call(dgemm.ours, &c1));
    let early = down::<f64>(&c1);
    let opened_by_watchdog = GATE.swap(true, Ordering::AcqRel);
    s.sync();
    assert!(!opened_by_watchdog, "the GEMM call waited for the held stream (it synchronizes instead of enqueueing)");
    assert_eq!(status, OK);
    same_bits(&early, &c, "C changed before the held stream was released: not on the handle's stream");
    assert_eq!(call(dgemm.real, &c2), OK);
    s.sync();
    assert_close(&down::<f64>(&c1), &down::<f64>(&c2), k as usize, "dgemm after the release");
    drop(watchdog);
}

/// A and B past 2^31 bytes each through the 64-bit entry point (T,N: the Gram-matrix layout).
#[test]
fn gemm_huge_operands_through_the_64bit_entry_point() {
    let Some(s) = session("gemm_huge_operands_through_the_64bit_entry_point") else { return };
    let (m, n, k) = (8i64, 8i64, (1i64 << 25) + 7);
    let bytes = (m * k * 8) as u64;
    if s.rt.props.total_mem < 2 * bytes + (4 << 30) {
        println!(
            "SKIPPED gemm_huge_operands_through_the_64bit_entry_point: {} bytes of device memory",
            s.rt.props.total_mem
        );
        return;
    }
    // Fresh random blocks, tiled (2^28 numbers one by one would dominate the test).
    let mut rng = Rng::new(93);
    let mut tile = |count: usize| {
        let block = rng.vec::<f64>(1 << 20);
        (0..count).map(|i| block[(i * 7 + i / (1 << 20)) % (1 << 20)]).collect::<Vec<f64>>()
    };
    let (ad, bd) = (up(&tile((m * k) as usize)), up(&tile((k * n) as usize)));
    let c = vec![f64::NAN; (m * n) as usize];
    let (c1, c2) = (up(&c), up(&c));
    s.pointer_mode(false);
    let dgemm = v2_64::gemm().1;
    let (al, be) = (A16(1.0f64), A16(0.0f64));
    let call = |f: GemmF<f64, i64>, cd: &DeviceBuffer| unsafe {
        f(s.h, T, N, m, n, k, &al.0, dp(&ad), k, dp(&bd), k, &be.0, dp(cd), m)
    };
    let st = with_mode(Mode::Hyblas, || call(dgemm.ours, &c1));
    let sr = call(dgemm.real, &c2);
    s.sync();
    assert_eq!((st, sr), (OK, OK));
    assert_close(&down::<f64>(&c1), &down::<f64>(&c2), 1 << 12, "dgemm_v2_64 T,N 8x8, k = 2^25+7");
}

// ---------------------------------------------------------------------------------------
// Fortran / CBLAS ?gemm on device memory against the CPU engine on host copies.

fn ch(op: c_int) -> *const c_char {
    match op {
        N => c"N".as_ptr(),
        T => c"T".as_ptr(),
        _ => c"C".as_ptr(),
    }
}

#[test]
fn host_abi_gemm_on_device_memory() {
    let Some(rt) = gpu_with_cublas("host_abi_gemm_on_device_memory") else { return };
    let _ = rt;
    let mut rng = Rng::new(101);
    let mut case = 0usize;
    for &(m, n, k) in &[(16i32, 16i32, 70_001i32), (5, 3, 1001), (33, 17, 4099), (120, 100, 64)] {
        for (ta, tb) in [(N, N), (T, N), (N, T), (C, C)] {
            let mode = MODES[case % 3];
            case += 1;
            // dgemm_ (C read as T for real data).
            let (ra, ca) = stored(ta, m as i64, k as i64);
            let (rb, cbn) = stored(tb, k as i64, n as i64);
            let (lda, ldb, ldc) = (ra as i32 + 2, rb as i32, m + 3);
            let a = rng.vec::<f64>(lda as usize * ca as usize);
            let b = rng.vec::<f64>(ldb as usize * cbn as usize);
            let (alpha, beta) = (rng.scalar::<f64>(), if case.is_multiple_of(2) { 0.0 } else { rng.scalar() });
            let c = c_init::<f64>(&mut rng, m as i64, n as i64, ldc as i64, beta == 0.0);
            let mut want = c.clone();
            unsafe {
                dgemm_(
                    ch(ta),
                    ch(tb),
                    &m,
                    &n,
                    &k,
                    &alpha,
                    a.as_ptr(),
                    &lda,
                    b.as_ptr(),
                    &ldb,
                    &beta,
                    want.as_mut_ptr(),
                    &ldc,
                )
            };
            let (ad, bd, cd) = (up(&a), up(&b), up(&c));
            with_mode(mode, || unsafe {
                dgemm_(ch(ta), ch(tb), &m, &n, &k, &alpha, dp(&ad), &lda, dp(&bd), &ldb, &beta, dp(&cd), &ldc)
            });
            let what = format!("dgemm_ ta={ta} tb={tb} m={m} n={n} k={k} {mode:?}");
            check_mat(&down::<f64>(&cd), &want, &c, m as i64, n as i64, ldc as i64, k as usize + 2, &what);

            // The ILP64 twin.
            let (m6, n6, k6, lda6, ldb6, ldc6) = (m as i64, n as i64, k as i64, lda as i64, ldb as i64, ldc as i64);
            let cd = up(&c);
            with_mode(mode, || unsafe {
                dgemm_64_(ch(ta), ch(tb), &m6, &n6, &k6, &alpha, dp(&ad), &lda6, dp(&bd), &ldb6, &beta, dp(&cd), &ldc6)
            });
            check_mat(
                &down::<f64>(&cd),
                &want,
                &c,
                m as i64,
                n as i64,
                ldc as i64,
                k as usize + 2,
                &format!("{what} (dgemm_64_)"),
            );

            // zgemm_ with the same shape (conjugation matters here).
            let za = rng.vec::<C64>(lda as usize * ca as usize);
            let zb = rng.vec::<C64>(ldb as usize * cbn as usize);
            let (zal, zbe) = (rng.scalar::<C64>(), rng.scalar::<C64>());
            let zc = c_init::<C64>(&mut rng, m as i64, n as i64, ldc as i64, false);
            let mut zwant = zc.clone();
            unsafe {
                zgemm_(
                    ch(ta),
                    ch(tb),
                    &m,
                    &n,
                    &k,
                    &zal,
                    za.as_ptr(),
                    &lda,
                    zb.as_ptr(),
                    &ldb,
                    &zbe,
                    zwant.as_mut_ptr(),
                    &ldc,
                )
            };
            let (zad, zbd, zcd) = (up(&za), up(&zb), up(&zc));
            with_mode(mode, || unsafe {
                zgemm_(ch(ta), ch(tb), &m, &n, &k, &zal, dp(&zad), &lda, dp(&zbd), &ldb, &zbe, dp(&zcd), &ldc)
            });
            check_mat(
                &down::<C64>(&zcd),
                &zwant,
                &zc,
                m as i64,
                n as i64,
                ldc as i64,
                k as usize + 2,
                &format!("zgemm_ ta={ta} tb={tb} m={m} n={n} k={k} {mode:?}"),
            );
        }
    }
}

/// CBLAS row-major and column-major on device memory (row-major swaps A and B on the way to
/// the column-major problem), sgemm and cgemm, against the same call on host copies.
#[test]
fn host_abi_cblas_gemm_on_device_memory() {
    let Some(_rt) = gpu_with_cublas("host_abi_cblas_gemm_on_device_memory") else { return };
    const ROW: c_int = 101;
    const COL: c_int = 102;
    let code = |op: c_int| 111 + op; // CblasNoTrans 111, CblasTrans 112, CblasConjTrans 113
    let mut rng = Rng::new(102);
    let mut case = 0usize;
    for &(m, n, k) in &[(8i32, 12i32, 50_001i32), (31, 2, 777)] {
        for layout in [ROW, COL] {
            for (ta, tb) in [(N, N), (T, N), (C, T)] {
                let mode = MODES[case % 3];
                case += 1;
                // op(A) is m x k, op(B) k x n, C m x n in the given layout.
                let (ra, ca) = stored(ta, m as i64, k as i64);
                let (rb, cbn) = stored(tb, k as i64, n as i64);
                let (a_len, lda) = if layout == COL { (ra * ca, ra) } else { (ra * ca, ca) };
                let (b_len, ldb) = if layout == COL { (rb * cbn, rb) } else { (rb * cbn, cbn) };
                let ldc = if layout == COL { m as i64 } else { n as i64 };
                let a = rng.vec::<f32>(a_len as usize);
                let b = rng.vec::<f32>(b_len as usize);
                let c = rng.vec::<f32>((m * n) as usize);
                let (al, be) = (rng.scalar::<f32>(), rng.scalar::<f32>());
                let mut want = c.clone();
                let (lda, ldb, ldc) = (lda as i32, ldb as i32, ldc as i32);
                unsafe {
                    cblas_sgemm(
                        layout,
                        code(ta),
                        code(tb),
                        m,
                        n,
                        k,
                        al,
                        a.as_ptr(),
                        lda,
                        b.as_ptr(),
                        ldb,
                        be,
                        want.as_mut_ptr(),
                        ldc,
                    )
                };
                let (ad, bd, cd) = (up(&a), up(&b), up(&c));
                with_mode(mode, || unsafe {
                    cblas_sgemm(layout, code(ta), code(tb), m, n, k, al, dp(&ad), lda, dp(&bd), ldb, be, dp(&cd), ldc)
                });
                let what = format!("cblas_sgemm layout={layout} ta={ta} tb={tb} m={m} n={n} k={k} {mode:?}");
                assert_close(&down::<f32>(&cd), &want, k as usize + 2, &what);

                let za = rng.vec::<C32>(a_len as usize);
                let zb = rng.vec::<C32>(b_len as usize);
                let zc = rng.vec::<C32>((m * n) as usize);
                let (zal, zbe) = (rng.scalar::<C32>(), rng.scalar::<C32>());
                let mut zwant = zc.clone();
                unsafe {
                    cblas_cgemm(
                        layout,
                        code(ta),
                        code(tb),
                        m,
                        n,
                        k,
                        &zal,
                        za.as_ptr(),
                        lda,
                        zb.as_ptr(),
                        ldb,
                        &zbe,
                        zwant.as_mut_ptr(),
                        ldc,
                    )
                };
                let (zad, zbd, zcd) = (up(&za), up(&zb), up(&zc));
                with_mode(mode, || unsafe {
                    cblas_cgemm(
                        layout,
                        code(ta),
                        code(tb),
                        m,
                        n,
                        k,
                        &zal,
                        dp(&zad),
                        lda,
                        dp(&zbd),
                        ldb,
                        &zbe,
                        dp(&zcd),
                        ldc,
                    )
                });
                assert_close(&down::<C32>(&zcd), &zwant, k as usize + 2, &what.replace("sgemm", "cgemm"));
            }
        }
    }
}

/// Mixed host and device operands cannot be answered (the CPU cannot read device memory): C
/// is left as it was. alpha = 0 reads neither A nor B: only C needs to be device memory.
#[test]
fn host_abi_gemm_mixed_operands_and_alpha_zero() {
    let Some(_rt) = gpu_with_cublas("host_abi_gemm_mixed_operands_and_alpha_zero") else { return };
    let mut rng = Rng::new(103);
    let (m, n, k) = (4i32, 3i32, 100i32);
    let a = rng.vec::<f64>((m * k) as usize);
    let b = rng.vec::<f64>((k * n) as usize);
    let c = rng.vec::<f64>((m * n) as usize);
    let (al, be) = (0.5f64, 2.0f64);
    // C and B on the device, A on the host: refused, C untouched.
    let (bd, cd) = (up(&b), up(&c));
    unsafe { dgemm_(ch(N), ch(N), &m, &n, &k, &al, a.as_ptr(), &m, dp(&bd), &k, &be, dp(&cd), &m) };
    same_bits(&down::<f64>(&cd), &c, "dgemm_ with host A and device B, C: C was written");
    // alpha = 0 with null A and B: C := beta*C on the GPU.
    let zero = 0.0f64;
    for mode in MODES {
        let cd = up(&c);
        with_mode(mode, || unsafe {
            dgemm_(ch(T), ch(N), &m, &n, &k, &zero, std::ptr::null(), &k, std::ptr::null(), &k, &be, dp(&cd), &m)
        });
        let want: Vec<f64> = c.iter().map(|v| v * be).collect();
        assert_close(&down::<f64>(&cd), &want, 1, &format!("dgemm_ alpha = 0 on device C, {mode:?}"));
    }
}

// ---------------------------------------------------------------------------------------
// Without a GPU: the policy, null handles, no cuBLAS.

#[test]
fn gemm_policy_modes_and_reasons() {
    // Degenerate calls go to cuBLAS whatever the mode, without asking the model.
    for mode in MODES {
        with_mode(mode, || {
            let d = gemm_plan::decide_device(Some("k = 0"), || panic!("the model is not asked for degenerate calls"));
            assert_eq!(d.route, Route::Vendor);
            assert!(d.reason.to_string().contains("k = 0"), "{}", d.reason);
        });
    }
    with_mode(Mode::Hyblas, || {
        let d = gemm_plan::decide_device(None, || panic!("a forced mode does not ask the model"));
        assert_eq!(d.route, Route::Hyblas);
        assert_eq!(d.reason.to_string(), "HYBLAS_CUBLAS=hyblas");
    });
    with_mode(Mode::Vendor, || {
        assert_eq!(gemm_plan::decide_device(None, || unreachable!()).route, Route::Vendor);
    });
    with_mode(Mode::Auto, || {
        let d = gemm_plan::decide_device(None, gemm_plan::gemm_no_runtime);
        assert_eq!(d.route, Route::Vendor);
        assert_eq!(d.reason, Reason::NoRuntime);
    });
    let p = Reason::Predicted { splitk_us: 61.5, vendor_us: 91.7 };
    assert_eq!(p.to_string(), "predicted split-k 61.5 us < cuBLAS 91.7 us");
    let g = Reason::GemmMaxMn { mn: 1 << 20, max: 1 << 16 };
    assert_eq!(g.to_string(), "m*n=1048576 > HYBLAS_CUBLAS_GEMM_MAX_MN=65536");
    assert_eq!(Reason::ForcedGemm(Mode::Vendor).to_string(), "HYBLAS_CUBLAS_GEMM=vendor");
    assert_eq!(gemm_plan::GEMM_MAX_MN_DEFAULT, 1 << 16);
    // Reductions follow the caller's atomics mode (HYBLAS_DETERMINISTIC unset here; the
    // environment test sets it in a child).
    if std::env::var_os("HYBLAS_DETERMINISTIC").is_none() && std::env::var_os("HYBLAS_CONFIG").is_none() {
        assert_eq!(gemm_plan::reduction(false), Reduction::Deterministic);
        assert_eq!(gemm_plan::reduction(true), Reduction::Atomic);
    }
}

/// The model on the device: m*n above the cap goes to cuBLAS without asking; below it the
/// prediction decides, and a repeated shape gets the same (cached) decision.
#[test]
fn gemm_model_on_the_device() {
    let Some(rt) = gpu_or_skip("gemm_model_on_the_device") else { return };
    let (d, _) = gemm_plan::splitk_model::<f64>(rt, Trans::No, Trans::No, 1024, 1024, 1024, true);
    assert_eq!(d.route, Route::Vendor);
    assert!(matches!(d.reason, Reason::GemmMaxMn { .. }), "{}", d.reason);
    let (d1, _) = gemm_plan::splitk_model::<f64>(rt, Trans::Trans, Trans::No, 16, 16, 1 << 20, true);
    let (d2, _) = gemm_plan::splitk_model::<f64>(rt, Trans::Trans, Trans::No, 16, 16, 1 << 20, true);
    assert_eq!(d1, d2);
    let p = hyblas::gpu::splitk::predict::<f64>(rt, Trans::Trans, Trans::No, 16, 16, 1 << 20, true);
    println!("dgemm T,N 16x16 k=2^20: {} -> {:?} ({})", d1.reason, d1.route, p.why);
    assert_eq!(d1.route == Route::Hyblas, p.splitk, "the route is the prediction's verdict");
    assert_eq!(d1.reason, Reason::Predicted { splitk_us: p.splitk_us, vendor_us: p.vendor_us });
}

/// Null handles and bad arguments never reach hyblas: with a real cuBLAS the call is its (null
/// handles are safe to pass it, no GPU needed); without one, the documented status.
#[test]
fn gemm_null_handles_bad_arguments_and_no_cublas() {
    let fake = 0x10 as Handle;
    let (al, be) = (1f32, 0f32);
    let (a, b, mut c) = ([0f32; 16], [0f32; 16], [7f32; 16]);
    let cp = c.as_mut_ptr();
    // (ta, tb, m, n, k, lda, ldb, ldc)
    let cases: [BadCase<i32>; 8] = [
        (N, N, 2, 2, 2, 2, 2, 2),
        (9, N, 2, 2, 2, 2, 2, 2),
        (N, N, -1, 2, 2, 2, 2, 2),
        (N, N, 2, 2, -3, 2, 2, 2),
        (T, N, 2, 2, 3, 2, 3, 2),
        (N, N, 2, 2, 2, 2, 2, 1),
        (N, N, 0, 2, 2, 1, 2, 1),
        (N, N, 2, 2, 0, 2, 1, 2),
    ];
    let sgemm = |f: GemmF<f32, i32>, h: Handle, x: BadCase<i32>| unsafe {
        f(h, x.0, x.1, x.2, x.3, x.4, &al, a.as_ptr(), x.5, b.as_ptr(), x.6, &be, cp, x.7)
    };
    let ours = v2::sgemm_ours();
    if vendor::present() {
        let real_sgemm = real::<GemmF<f32, i32>>("cublasSgemm_v2");
        for x in cases {
            for mode in MODES {
                let st = with_mode(mode, || sgemm(ours, std::ptr::null_mut(), x));
                let sr = sgemm(real_sgemm, std::ptr::null_mut(), x);
                assert_eq!(st, sr, "null handle, {x:?} {mode:?}");
            }
        }
        assert_eq!(c, [7.0; 16], "nothing written");
        return;
    }
    for x in cases {
        let st = sgemm(ours, std::ptr::null_mut(), x);
        assert_eq!(st, cb::CUBLAS_STATUS_NOT_INITIALIZED, "null handle, {x:?}");
        let (ta, tb, m, n, k, lda, ldb, ldc) = x;
        let rows_a = if ta == N { m } else { k };
        let rows_b = if tb == N { k } else { n };
        let bad = !(0..=2).contains(&ta)
            || !(0..=2).contains(&tb)
            || m < 0
            || n < 0
            || k < 0
            || lda < rows_a.max(1)
            || ldb < rows_b.max(1)
            || ldc < m.max(1);
        let want = if bad { cb::CUBLAS_STATUS_INVALID_VALUE } else { cb::CUBLAS_STATUS_NOT_INITIALIZED };
        for mode in MODES {
            let st = with_mode(mode, || sgemm(ours, fake, x));
            assert_eq!(st, want, "{x:?} {mode:?}");
        }
    }
    // GemmEx and strided batched: the same rules, nothing to forward to.
    let st = unsafe {
        v2::gemm_ex_ours()(
            fake,
            N,
            N,
            2,
            2,
            2,
            &al as *const f32 as *const c_void,
            a.as_ptr() as *const c_void,
            cb::CUDA_R_32F,
            1,
            b.as_ptr() as *const c_void,
            cb::CUDA_R_32F,
            2,
            &be as *const f32 as *const c_void,
            cp as *mut c_void,
            cb::CUDA_R_32F,
            2,
            cb::CUBLAS_COMPUTE_32F,
            cb::CUBLAS_GEMM_DEFAULT,
        )
    };
    assert_eq!(st, cb::CUBLAS_STATUS_INVALID_VALUE, "cublasGemmEx lda < m");
    let st =
        unsafe { v2_64::ssb_ours()(fake, N, N, 2, 2, 2, &al, a.as_ptr(), 2, 4, b.as_ptr(), 2, 4, &be, cp, 2, 4, -1) };
    assert_eq!(st, cb::CUBLAS_STATUS_INVALID_VALUE, "cublasSgemmStridedBatched_64 batch < 0");
    let st =
        unsafe { v2_64::ssb_ours()(fake, N, N, 2, 2, 2, &al, a.as_ptr(), 2, 4, b.as_ptr(), 2, 4, &be, cp, 2, 4, 1) };
    assert_eq!(st, cb::CUBLAS_STATUS_NOT_INITIALIZED, "cublasSgemmStridedBatched_64 with no cuBLAS");
    assert_eq!(c, [7.0; 16], "nothing written");
}

// ---------------------------------------------------------------------------------------
// The environment keys, read once per process: checked in child processes.

const CHILD: &str = "HYBLAS_GEMM_ENTRY_TEST_CHILD";

#[test]
fn gemm_environment_keys() {
    if std::env::var_os(CHILD).is_some() {
        return;
    }
    let configs: [(&str, &[(&str, &str)]); 3] = [
        (
            "gemm-vendor",
            &[
                ("HYBLAS_CUBLAS", "hyblas"),
                ("HYBLAS_CUBLAS_GEMM", "vendor"),
                ("HYBLAS_DETERMINISTIC", "0"),
                ("HYBLAS_CUBLAS_GEMM_MAX_MN", "100"),
            ],
        ),
        ("deterministic", &[("HYBLAS_CUBLAS", "vendor"), ("HYBLAS_DETERMINISTIC", "1")]),
        ("defaults", &[]),
    ];
    for (name, env) in configs {
        let trace = std::env::temp_dir().join(format!("hyblas-gemm-{}-{name}.log", std::process::id()));
        let _ = std::fs::remove_file(&trace);
        let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
        cmd.args(["--exact", "gemm_environment_child", "--nocapture", "--test-threads=1"])
            .env(CHILD, name)
            .env("HYBLAS_TRACE", &trace)
            .env_remove("HYBLAS_CONFIG");
        for k in ["HYBLAS_CUBLAS", "HYBLAS_CUBLAS_GEMM", "HYBLAS_DETERMINISTIC", "HYBLAS_CUBLAS_GEMM_MAX_MN"] {
            cmd.env_remove(k);
        }
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.output().expect("run the child");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "child {name} failed:\n{stdout}\n{stderr}");
        assert!(stdout.contains(&format!("CHILD OK {name}")), "the child test did not run:\n{stdout}\n{stderr}");
        if stdout.contains("CALLS MADE") {
            let text = std::fs::read_to_string(&trace).expect("trace written");
            let lines: Vec<&str> = text.lines().filter(|l| l.contains("cublasDgemm_v2 ")).collect();
            assert!(!lines.is_empty(), "no trace line for cublasDgemm_v2:\n{text}");
            let want = match name {
                "gemm-vendor" => "route=vendor (HYBLAS_CUBLAS_GEMM=vendor)",
                "deterministic" => "route=vendor (HYBLAS_CUBLAS=vendor)",
                _ => "route=",
            };
            for l in lines {
                assert!(l.contains(want), "{name}: {l}");
            }
            if name == "gemm-vendor" {
                assert!(text.contains("dgemm") && text.contains("engine=gpu"), "no GPU trace line for dgemm_:\n{text}");
            }
        }
        let _ = std::fs::remove_file(&trace);
    }
}

#[test]
fn gemm_environment_child() {
    let Ok(name) = std::env::var(CHILD) else { return };
    match name.as_str() {
        "gemm-vendor" => {
            // HYBLAS_CUBLAS_GEMM wins over HYBLAS_CUBLAS for GEMM only; with_mode over both.
            let d = gemm_plan::decide_device(None, || unreachable!());
            assert_eq!((d.route, d.reason.to_string()), (Route::Vendor, "HYBLAS_CUBLAS_GEMM=vendor".to_string()));
            assert_eq!(policy::decide(None, || unreachable!()).route, Route::Hyblas);
            assert_eq!(
                with_mode(Mode::Hyblas, || gemm_plan::decide_device(None, || unreachable!())).route,
                Route::Hyblas
            );
            assert_eq!(gemm_plan::reduction(false), Reduction::Atomic, "HYBLAS_DETERMINISTIC=0 allows atomics");
        }
        "deterministic" => {
            let d = gemm_plan::decide_device(None, || unreachable!());
            assert_eq!((d.route, d.reason.to_string()), (Route::Vendor, "HYBLAS_CUBLAS=vendor".to_string()));
            assert_eq!(
                gemm_plan::reduction(true),
                Reduction::Deterministic,
                "HYBLAS_DETERMINISTIC=1 wins over the handle"
            );
        }
        _ => {
            assert_eq!(gemm_plan::reduction(false), Reduction::Deterministic);
            assert_eq!(gemm_plan::reduction(true), Reduction::Atomic);
        }
    }
    if let Some(rt) = gpu_or_skip("gemm_environment_child") {
        if name == "gemm-vendor" {
            let (d, _) = gemm_plan::splitk_model::<f64>(rt, Trans::No, Trans::No, 16, 16, 1 << 20, true);
            assert_eq!(d.reason, Reason::GemmMaxMn { mn: 256, max: 100 });
            let (d, _) = gemm_plan::splitk_model::<f64>(rt, Trans::No, Trans::No, 8, 8, 1 << 20, true);
            assert!(matches!(d.reason, Reason::Predicted { .. }), "{}", d.reason);
        }
    }
    if let Some(s) = session("gemm_environment_child") {
        s.pointer_mode(false);
        let (m, k) = (4i32, 1000i32);
        let (a, b) = (up(&vec![0.5f64; (m * k) as usize]), up(&vec![0.25f64; (m * k) as usize]));
        let (c1, c2) = (up(&[0f64; 16]), up(&[0f64; 16]));
        s.fence();
        let dgemm = v2::gemm().1;
        let (al, be) = (A16(1.0f64), A16(0.0f64));
        let call = |f: GemmF<f64, i32>, cd: &DeviceBuffer| unsafe {
            f(s.h, N, N, m, m, k, &al.0, dp(&a), m, dp(&b), k, &be.0, dp(cd), m)
        };
        assert_eq!((call(dgemm.ours, &c1), call(dgemm.real, &c2)), (OK, OK));
        s.sync();
        assert_eq!(down::<f64>(&c1), down::<f64>(&c2));
        if name == "gemm-vendor" {
            // dgemm_ on device memory follows HYBLAS_CUBLAS_GEMM too (its trace line says so).
            let c = up(&[0f64; 16]);
            let (al, be) = (1.0f64, 0.0f64);
            unsafe { dgemm_(ch(N), ch(N), &m, &m, &k, &al, dp(&a), &m, dp(&b), &k, &be, dp(&c), &m) };
            assert!(down::<f64>(&c).iter().all(|&v| v == 125.0), "dgemm_ on device memory: {:?}", down::<f64>(&c));
        }
        println!("CALLS MADE");
    }
    println!("CHILD OK {name}");
}
