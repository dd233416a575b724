//! Accurate DGEMM on device memory (issue 49, `gpu::ozaki`, `plan::accurate::device_dgemm`):
//! the int8 Chinese-remainder scheme on the GPU against the host's accurate path on copies of
//! the same fresh random data. `nearest` is correctly rounded on both, so the results must be
//! the same bits; `faithful` must be within one ulp of the correctly rounded result (the host's
//! `nearest`, itself checked against big-integer oracles in tests/ozaki.rs). Outputs are
//! poisoned (NaN, beta = 0) before each run. Reached directly, through `cblas_dgemm` on device
//! pointers in accurate mode, and through the interposed `cublasDgemm_v2` in both pointer modes.
//!
//! Needs a GPU and a real cuBLAS; without them each test prints SKIPPED.

mod common;
#[path = "common/cublas.rs"]
mod harness;
use common::{cblas_dgemm, cblas_zgemm, lognormal, seed_pair, Rng};
use harness::*;
use hyblas::abi::cublas::{self as cb, Handle, Status};
use hyblas::gpu::{DMat, DeviceBuffer, Exec};
use hyblas::plan::accurate::{self as acc, Mode, Report, Rounding};
use hyblas::types::Trans;
use std::ffi::c_int;

extern "C" {
    #[link_name = "cublasDgemm_v2"]
    fn x_dgemm(
        h: Handle,
        ta: c_int,
        tb: c_int,
        m: c_int,
        n: c_int,
        k: c_int,
        al: *const f64,
        a: *const f64,
        lda: c_int,
        b: *const f64,
        ldb: c_int,
        be: *const f64,
        c: *mut f64,
        ldc: c_int,
    ) -> Status;
    #[link_name = "cublasGemmEx"]
    fn x_gemm_ex(
        h: Handle,
        ta: c_int,
        tb: c_int,
        m: c_int,
        n: c_int,
        k: c_int,
        al: *const std::ffi::c_void,
        a: *const std::ffi::c_void,
        at: c_int,
        lda: c_int,
        b: *const std::ffi::c_void,
        bt: c_int,
        ldb: c_int,
        be: *const std::ffi::c_void,
        c: *mut std::ffi::c_void,
        ct: c_int,
        ldc: c_int,
        compute: c_int,
        algo: c_int,
    ) -> Status;
}

/// One call's operands (column-major, leading dimensions with padding).
struct Case {
    ta: Trans,
    tb: Trans,
    m: usize,
    n: usize,
    k: usize,
    alpha: f64,
    a: Vec<f64>,
    lda: usize,
    b: Vec<f64>,
    ldb: usize,
    beta: f64,
    c: Vec<f64>,
    ldc: usize,
}

impl Case {
    /// Operands from `gen` (called with each stored array's length), C poisoned with NaN where
    /// beta == 0.
    #[allow(clippy::too_many_arguments)]
    fn new(
        (ta, tb): (Trans, Trans),
        (m, n, k): (usize, usize, usize),
        alpha: f64,
        beta: f64,
        gen: &mut dyn FnMut(usize) -> Vec<f64>,
    ) -> Case {
        let (ra, ca) = if ta == Trans::No { (m, k) } else { (k, m) };
        let (rb, cb) = if tb == Trans::No { (k, n) } else { (n, k) };
        let (lda, ldb, ldc) = (ra + 3, rb + 1, m + 2);
        let a = gen(lda * ca);
        let b = gen(ldb * cb);
        let c = if beta == 0.0 { vec![f64::NAN; ldc * n] } else { gen(ldc * n) };
        Case { ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc }
    }

    /// The host's accurate result.
    fn host(&self, r: Rounding) -> Vec<f64> {
        let mut c = self.c.clone();
        unsafe {
            acc::dgemm(
                r,
                self.ta,
                self.tb,
                self.m,
                self.n,
                self.k,
                self.alpha,
                self.a.as_ptr(),
                self.lda,
                self.b.as_ptr(),
                self.ldb,
                self.beta,
                c.as_mut_ptr(),
                self.ldc,
            );
        }
        c
    }

    fn upload(&self) -> [DeviceBuffer; 3] {
        [up(&self.a), up(&self.b), up(&self.c)]
    }

    /// The device's accurate result (`plan::accurate::device_dgemm` on hyblas's own stream).
    fn device(&self, rt: &'static hyblas::gpu::Runtime, r: Rounding) -> (Vec<f64>, Report) {
        let [a, b, c] = self.upload();
        let ex = Exec::own(rt);
        let dm = |d: &DeviceBuffer, ld: usize| DMat { ptr: d.ptr, ld: ld as i64 };
        let rep = acc::device_dgemm(
            &ex,
            r,
            self.ta,
            self.tb,
            (self.m, self.n, self.k),
            self.alpha,
            dm(&a, self.lda),
            dm(&b, self.ldb),
            self.beta,
            dm(&c, self.ldc),
        )
        .expect("device_dgemm");
        rt.sync(ex.stream).expect("sync");
        (down(&c), rep)
    }
}

/// `got` against the host's correctly rounded `want`: the same bits (`nearest`), or within one
/// ulp (`faithful`); Inf and NaN the same bits either way (both computed by the same code).
fn check(got: &[f64], want: &[f64], r: Rounding, what: &str) {
    assert_eq!(got.len(), want.len());
    let mut off = 0;
    for (x, (&g, &w)) in got.iter().zip(want).enumerate() {
        if g.to_bits() == w.to_bits() {
            continue;
        }
        let near = r == Rounding::Faithful
            && g.is_finite()
            && w.is_finite()
            && (g == w || g == f64::from_bits(w.to_bits() + 1) || g == f64::from_bits(w.to_bits().wrapping_sub(1)));
        assert!(
            near || (g == 0.0 && w == 0.0),
            "{what}: element {x}: device {g:e} ({:#x}), host {w:e} ({:#x})",
            g.to_bits(),
            w.to_bits()
        );
        off += 1;
    }
    if r == Rounding::Nearest {
        assert_eq!(off, 0, "{what}");
    }
}

const TRANS: [(Trans, Trans); 4] =
    [(Trans::No, Trans::No), (Trans::Trans, Trans::No), (Trans::No, Trans::Trans), (Trans::Trans, Trans::Trans)];
const ROUNDINGS: [Rounding; 2] = [Rounding::Nearest, Rounding::Faithful];

/// phi = 0.5, 2, 8 inputs under every transpose, alpha 1 and -0.75, beta 0 (C poisoned) and
/// 0.5, two shapes: the device's results are the host's, bit for bit (nearest).
#[test]
fn device_accurate_dgemm_matches_the_host() {
    let Some(rt) = gpu_with_cublas("device_accurate_dgemm_matches_the_host") else { return };
    let mut rng = Rng::new(4901);
    for &(m, n, k) in &[(67, 45, 130), (260, 190, 700)] {
        for (x, &phi) in [0.5, 2.0, 8.0].iter().enumerate() {
            for (t, &tr) in TRANS.iter().enumerate() {
                let (alpha, beta) = if (x + t) % 2 == 0 { (1.0, 0.0) } else { (-0.75, 0.5) };
                let case = Case::new(tr, (m, n, k), alpha, beta, &mut |len| lognormal(&mut rng, len, phi));
                for r in ROUNDINGS {
                    let want = case.host(r);
                    let (got, rep) = case.device(rt, r);
                    let what = format!("{m}x{n}x{k} phi={phi} {tr:?} alpha={alpha} beta={beta} {r:?} ({rep:?})");
                    assert!(rep.gpu && rep.moduli > 0, "{what}: did not run on the GPU");
                    check(&got, &want.clone(), r, &what);
                    // Against the host's nearest too (faithful: within one ulp of it).
                    if r == Rounding::Faithful {
                        check(&got, &case.host(Rounding::Nearest), r, &what);
                    }
                    eprintln!("{what}: ok");
                }
            }
        }
    }
}

/// Rows with exponent spreads of 2^0..2^±300 at 2^0 and 2^±600, and the seed's A*inv(A) (the
/// cancellation plain DGEMM loses): the device's nearest is the host's.
#[test]
fn device_accurate_dgemm_on_wide_spreads_and_the_seed() {
    let Some(rt) = gpu_with_cublas("device_accurate_dgemm_on_wide_spreads_and_the_seed") else { return };
    let mut rng = Rng::new(4902);
    for center in [0i32, 600, -600] {
        let mut gen = |len: usize| -> Vec<f64> {
            (0..len)
                .map(|_| {
                    let e = center + ((rng.next_u64() % 601) as i32 - 300);
                    rng.unit() * 2f64.powi(e / 2) * 2f64.powi(e - e / 2)
                })
                .collect()
        };
        let case = Case::new((Trans::No, Trans::Trans), (40, 33, 90), 1.0, 0.0, &mut gen);
        for r in ROUNDINGS {
            let (got, rep) = case.device(rt, r);
            check(&got, &case.host(r), r, &format!("spread at 2^{center} {r:?} ({rep:?})"));
        }
    }
    // The seed's matrices: A = I with 10% of its entries U(0, 1), B = inv(A).
    let n = 150;
    let (a, inv) = seed_pair(&mut rng, n);
    let case = Case::new((Trans::No, Trans::No), (n, n, n), 1.0, 0.0, &mut |len| vec![f64::NAN; len]);
    let case = Case { a, lda: n, b: inv, ldb: n, ..case };
    for r in ROUNDINGS {
        let (got, rep) = case.device(rt, r);
        check(&got, &case.host(r), r, &format!("seed n={n} {r:?} ({rep:?})"));
        eprintln!("seed n={n} {r:?}: {rep:?}");
    }
}

/// Inf and NaN in a row of A, a column of B and an element of C (beta != 0): the same bits as
/// the host (both take the plain dot product in order there); small integer inputs are exact
/// (no entry rounded, so nothing is refused); an inner dimension past the int32 sums' reach
/// runs on the host's path and still gives its bits.
#[test]
fn device_accurate_dgemm_edge_cases() {
    let Some(rt) = gpu_with_cublas("device_accurate_dgemm_edge_cases") else { return };
    let mut rng = Rng::new(4903);
    let mut case = Case::new((Trans::No, Trans::No), (30, 20, 50), 1.5, 1.0, &mut |len| lognormal(&mut rng, len, 1.0));
    case.a[3 + 7 * case.lda] = f64::INFINITY;
    case.b[9 + 5 * case.ldb] = f64::NAN;
    case.c[11 + 2 * case.ldc] = f64::NEG_INFINITY;
    for r in ROUNDINGS {
        let (got, rep) = case.device(rt, r);
        assert!(rep.ieee >= 20 + 30, "{rep:?}");
        check(&got, &case.host(r), r, &format!("inf/nan {r:?} ({rep:?})"));
    }
    let mut ints = Rng::new(4904);
    let case = Case::new((Trans::Trans, Trans::No), (50, 40, 300), 1.0, 0.0, &mut |len| {
        (0..len).map(|_| ((ints.next_u64() % 2001) as f64 - 1000.0) * 0.25).collect()
    });
    let (got, rep) = case.device(rt, Rounding::Nearest);
    assert_eq!(rep.exact, 0, "integer inputs: nothing to refuse ({rep:?})");
    check(&got, &case.host(Rounding::Nearest), Rounding::Nearest, "integers");
    let big_k = hyblas::gpu::ozaki::MAX_K + 100;
    let case = Case::new((Trans::Trans, Trans::No), (3, 2, big_k), 1.0, 0.0, &mut |len| lognormal(&mut rng, len, 0.5));
    let (got, rep) = case.device(rt, Rounding::Nearest);
    assert!(!rep.gpu, "k = {big_k} runs on the host's path");
    check(&got, &case.host(Rounding::Nearest), Rounding::Nearest, "k past MAX_K");
}

/// The ABI: `cblas_dgemm` on device pointers in accurate mode, and hyblas's `cublasDgemm_v2`
/// on a real handle (host and device pointer modes) in accurate mode, give the host's bits.
#[test]
fn device_accurate_dgemm_through_cblas_and_cublas() {
    let Some(s) = session("device_accurate_dgemm_through_cblas_and_cublas") else { return };
    let mut rng = Rng::new(4905);
    let case =
        Case::new((Trans::No, Trans::Trans), (70, 50, 160), -1.25, 0.0, &mut |len| lognormal(&mut rng, len, 2.0));
    let want = case.host(Rounding::Nearest);
    let code = |t: Trans| if t == Trans::No { 111 } else { 112 };
    // cblas_dgemm.
    let [a, b, c] = case.upload();
    acc::with_mode(Mode::Accurate(Rounding::Nearest), || unsafe {
        cblas_dgemm(
            102,
            code(case.ta),
            code(case.tb),
            case.m as c_int,
            case.n as c_int,
            case.k as c_int,
            case.alpha,
            dp(&a),
            case.lda as c_int,
            dp(&b),
            case.ldb as c_int,
            case.beta,
            dp(&c),
            case.ldc as c_int,
        )
    });
    let rep = acc::last_report();
    assert!(rep.gpu, "cblas_dgemm on device memory ran on the GPU: {rep:?}");
    check(&down(&c), &want, Rounding::Nearest, "cblas_dgemm");
    // cublasDgemm_v2, both pointer modes.
    let op = |t: Trans| if t == Trans::No { cb::CUBLAS_OP_N } else { cb::CUBLAS_OP_T };
    for device in [false, true] {
        s.pointer_mode(device);
        let [a, b, c] = case.upload();
        let (al, be) = (Arg::new(case.alpha, device), Arg::new(case.beta, device));
        let st = acc::with_mode(Mode::Accurate(Rounding::Nearest), || unsafe {
            x_dgemm(
                s.h,
                op(case.ta),
                op(case.tb),
                case.m as c_int,
                case.n as c_int,
                case.k as c_int,
                al.ptr(),
                dp(&a),
                case.lda as c_int,
                dp(&b),
                case.ldb as c_int,
                be.ptr(),
                dp(&c),
                case.ldc as c_int,
            )
        });
        assert_eq!(st, cb::CUBLAS_STATUS_SUCCESS);
        s.sync();
        let rep = acc::last_report();
        assert!(rep.gpu, "cublasDgemm_v2 in accurate mode ran on the GPU: {rep:?}");
        check(&down(&c), &want, Rounding::Nearest, &format!("cublasDgemm_v2 device pointers={device}"));
    }
    s.pointer_mode(false);
    // cublasGemmEx with A, B, C in CUDA_R_64F and CUBLAS_COMPUTE_64F.
    let [a, b, c] = case.upload();
    let (al, be) = (Arg::new(case.alpha, false), Arg::new(case.beta, false));
    let st = acc::with_mode(Mode::Accurate(Rounding::Nearest), || unsafe {
        x_gemm_ex(
            s.h,
            op(case.ta),
            op(case.tb),
            case.m as c_int,
            case.n as c_int,
            case.k as c_int,
            al.ptr() as *const _,
            dp::<f64>(&a) as *const _,
            hyblas::gpu::vendor::CUDA_R_64F,
            case.lda as c_int,
            dp::<f64>(&b) as *const _,
            hyblas::gpu::vendor::CUDA_R_64F,
            case.ldb as c_int,
            be.ptr() as *const _,
            dp::<f64>(&c) as *mut _,
            hyblas::gpu::vendor::CUDA_R_64F,
            case.ldc as c_int,
            hyblas::gpu::vendor::CUBLAS_COMPUTE_64F,
            hyblas::gpu::vendor::CUBLAS_GEMM_DEFAULT,
        )
    });
    assert_eq!(st, cb::CUBLAS_STATUS_SUCCESS);
    s.sync();
    assert!(acc::last_report().gpu, "cublasGemmEx R_64F in accurate mode ran on the GPU");
    check(&down(&c), &want, Rounding::Nearest, "cublasGemmEx R_64F");
}

/// `cblas_dgemm` on host memory in accurate mode, large enough for the GPU
/// (`HYBLAS_OZAKI_GPU_MIN_FLOPS`): copied to the device and back, the host's bits, C's padding
/// rows untouched.
#[test]
fn host_accurate_dgemm_runs_on_the_gpu() {
    let Some(_rt) = gpu_with_cublas("host_accurate_dgemm_runs_on_the_gpu") else { return };
    let mut rng = Rng::new(4906);
    for beta in [0.0, -0.5] {
        let case =
            Case::new((Trans::Trans, Trans::No), (300, 280, 260), 0.75, beta, &mut |len| lognormal(&mut rng, len, 1.0));
        let want = case.host(Rounding::Nearest);
        let mut c = case.c.clone();
        acc::with_mode(Mode::Accurate(Rounding::Nearest), || unsafe {
            cblas_dgemm(
                102,
                112,
                111,
                case.m as c_int,
                case.n as c_int,
                case.k as c_int,
                case.alpha,
                case.a.as_ptr(),
                case.lda as c_int,
                case.b.as_ptr(),
                case.ldb as c_int,
                case.beta,
                c.as_mut_ptr(),
                case.ldc as c_int,
            )
        });
        let rep = acc::last_report();
        assert!(rep.gpu, "host cblas_dgemm in accurate mode ran on the GPU: {rep:?}");
        // (The padding rows: NaN or the generated values, the same bits as the host's copy.)
        check(&c, &want, Rounding::Nearest, &format!("host memory on the GPU, beta={beta}"));
    }
}

/// ZGEMM in accurate mode on device memory, through `cblas_zgemm` on device pointers: with real
/// alpha and beta the GPU's scheme on the expanded real view (report `gpu`), with a complex
/// alpha the host's path on copies; both the host's `plan::accurate::zgemm` bits (nearest),
/// every transpose including conjugates, C poisoned where beta = 0.
#[test]
fn device_accurate_zgemm_matches_the_host() {
    let Some(_s) = session("device_accurate_zgemm_matches_the_host") else { return };
    let mut rng = Rng::new(4911);
    let (m, n, k) = (37usize, 29usize, 150usize);
    let code = |t: Trans| match t {
        Trans::No => 111,
        Trans::Trans => 112,
        Trans::ConjTrans => 113,
    };
    let cases = [
        (Trans::No, Trans::No, [1.0, 0.0], [0.0, 0.0], 2.0, true),
        (Trans::ConjTrans, Trans::Trans, [-0.75, 0.0], [0.5, 0.0], 0.5, true),
        (Trans::Trans, Trans::ConjTrans, [1.0, 0.0], [1.0, 0.0], 8.0, true),
        (Trans::No, Trans::ConjTrans, [0.3, -0.7], [-0.5, 0.25], 2.0, false),
    ];
    for (ta, tb, alpha, beta, phi, on_gpu) in cases {
        let (ra, ca) = if ta == Trans::No { (m, k) } else { (k, m) };
        let (rb, cb) = if tb == Trans::No { (k, n) } else { (n, k) };
        let (lda, ldb, ldc) = (ra + 3, rb + 1, m + 2);
        let a = lognormal(&mut rng, 2 * lda * ca, phi);
        let b = lognormal(&mut rng, 2 * ldb * cb, phi);
        let c0 = if beta == [0.0, 0.0] { vec![f64::NAN; 2 * ldc * n] } else { lognormal(&mut rng, 2 * ldc * n, 1.0) };
        let mut want = c0.clone();
        unsafe {
            acc::zgemm(
                Rounding::Nearest,
                ta,
                tb,
                m,
                n,
                k,
                alpha,
                a.as_ptr(),
                lda,
                b.as_ptr(),
                ldb,
                beta,
                want.as_mut_ptr(),
                ldc,
            );
        }
        let (da, db, dc) = (up(&a), up(&b), up(&c0));
        acc::with_mode(Mode::Accurate(Rounding::Nearest), || unsafe {
            cblas_zgemm(
                102,
                code(ta),
                code(tb),
                m as c_int,
                n as c_int,
                k as c_int,
                alpha.as_ptr().cast(),
                dp(&da),
                lda as c_int,
                dp(&db),
                ldb as c_int,
                beta.as_ptr().cast(),
                dp(&dc),
                ldc as c_int,
            )
        });
        let rep = acc::last_report();
        let what = format!("zgemm {ta:?} {tb:?} alpha={alpha:?} beta={beta:?} phi={phi}");
        assert_eq!(rep.gpu, on_gpu, "{what}: {rep:?}");
        check(&down(&dc), &want, Rounding::Nearest, &what);
    }
}
