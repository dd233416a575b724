//! Issue 5: host-memory GEMM offloaded to the GPU (phase 1) and co-executed by the CPU and the
//! GPU (phase 2) through the Fortran and CBLAS symbols (LP64 and ILP64). Every case makes fresh
//! random data, runs the call once with the CPU engine forced (`plan::offload::force(Some(Cpu))`)
//! and once with the GPU forced, a GPU share forced (`with_share`) or co-execution forced
//! (`with_split`), and compares; rows of C outside the referenced part (ldc > m) hold a poison
//! value that must survive. Small tiles and copy pieces ([`Knobs`]) make small problems span many
//! tiles, pieces and device blocks. Each case also checks where the call really ran
//! (`plan::offload::last()`), and the fallback cases (failures injected with `Knobs::fail_after`
//! and `Knobs::fail_gemm_after`) that the CPU finished a failed offload. SKIPPED without a GPU.

mod common;
#[path = "common/fortran_gemm.rs"]
mod fortran_gemm;

use common::{gpu_or_skip, Rng};
use fortran_gemm::{Gemm, Sym};
use hyblas::hybrid::offload::{with_knobs, Knobs};
use hyblas::plan::offload::{self as off, Side};
use hyblas::types::{Real, Scalar, C32, C64};
use std::ffi::c_char;

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
    fn zgemm_64_(
        ta: *const c_char,
        tb: *const c_char,
        m: *const i64,
        n: *const i64,
        k: *const i64,
        al: *const C64,
        a: *const C64,
        lda: *const i64,
        b: *const C64,
        ldb: *const i64,
        be: *const C64,
        c: *mut C64,
        ldc: *const i64,
    );
    fn cblas_dgemm(
        lay: i32,
        ta: i32,
        tb: i32,
        m: i32,
        n: i32,
        k: i32,
        al: f64,
        a: *const f64,
        lda: i32,
        b: *const f64,
        ldb: i32,
        be: f64,
        c: *mut f64,
        ldc: i32,
    );
    fn cblas_sgemm64_(
        lay: i32,
        ta: i32,
        tb: i32,
        m: i64,
        n: i64,
        k: i64,
        al: f32,
        a: *const f32,
        lda: i64,
        b: *const f32,
        ldb: i64,
        be: f32,
        c: *mut f32,
        ldc: i64,
    );
    fn cblas_zgemm(
        lay: i32,
        ta: i32,
        tb: i32,
        m: i32,
        n: i32,
        k: i32,
        al: *const C64,
        a: *const C64,
        lda: i32,
        b: *const C64,
        ldb: i32,
        be: *const C64,
        c: *mut C64,
        ldc: i32,
    );
}

const TRANS: [u8; 3] = [b'N', b'T', b'C'];

fn poison<T: Scalar>() -> T {
    common::poison()
}

/// One GEMM problem on host memory: column-major operands with `pad` extra rows each.
struct Case<T> {
    ta: u8,
    tb: u8,
    m: usize,
    n: usize,
    k: usize,
    alpha: T,
    beta: T,
    a: Vec<T>,
    lda: usize,
    b: Vec<T>,
    ldb: usize,
    c: Vec<T>,
    ldc: usize,
}

impl<T: Scalar> Case<T> {
    #[allow(clippy::too_many_arguments)]
    fn new(rng: &mut Rng, ta: u8, tb: u8, m: usize, n: usize, k: usize, alpha: T, beta: T, pad: usize) -> Self {
        let (ar, ac) = if ta == b'N' { (m, k) } else { (k, m) };
        let (br, bc) = if tb == b'N' { (k, n) } else { (n, k) };
        let (lda, ldb, ldc) = (ar.max(1) + pad, br.max(1) + pad, m.max(1) + pad);
        let a = rng.vec(lda * ac.max(1));
        let b = rng.vec(ldb * bc.max(1));
        let mut c: Vec<T> = rng.vec(ldc * n.max(1));
        for j in 0..n {
            for i in m..ldc {
                c[i + j * ldc] = poison();
            }
            if beta.is_zero() {
                // beta == 0 must not read C: NaN there stays out of the result.
                for i in 0..m {
                    c[i + j * ldc] = T::from_f64(f64::NAN);
                }
            }
        }
        Case { ta, tb, m, n, k, alpha, beta, a, lda, b, ldb, c, ldc }
    }

    /// C after the call through `f` (the LP64 Fortran symbol) with `side` forced.
    fn run(&self, side: Side, f: Gemm<T, i32>) -> Vec<T> {
        let mut c = self.c.clone();
        let (m, n, k) = (self.m as i32, self.n as i32, self.k as i32);
        let (lda, ldb, ldc) = (self.lda as i32, self.ldb as i32, self.ldc as i32);
        off::clear_last();
        off::with_side(Some(side), || unsafe {
            f(
                &(self.ta as c_char),
                &(self.tb as c_char),
                &m,
                &n,
                &k,
                &self.alpha,
                self.a.as_ptr(),
                &lda,
                self.b.as_ptr(),
                &ldb,
                &self.beta,
                c.as_mut_ptr(),
                &ldc,
            )
        });
        c
    }

    fn check(&self, got: &[T], want: &[T], what: &str) {
        let scale = want.iter().map(|w| Real::to_f64(w.abs1())).filter(|v| v.is_finite()).fold(1.0, f64::max);
        let tol = common::tol::<T>(self.k) * scale * 4.0;
        for j in 0..self.n {
            for i in 0..self.ldc {
                let idx = i + j * self.ldc;
                let (g, w) = (got[idx], want[idx]);
                if i >= self.m {
                    assert!(g == poison::<T>(), "{what}: ({i},{j}) outside C was written: {g:?}");
                    continue;
                }
                let e = Real::to_f64((g - w).abs1());
                assert!(e <= tol, "{what}: ({i},{j}) got {g:?} want {w:?} (tol {tol:e})");
            }
        }
    }

    fn label(&self) -> String {
        format!(
            "{}gemm {}{} m={} n={} k={} lda={} ldb={} ldc={} alpha={:?} beta={:?}",
            T::PREFIX,
            self.ta as char,
            self.tb as char,
            self.m,
            self.n,
            self.k,
            self.lda,
            self.ldb,
            self.ldc,
            self.alpha,
            self.beta
        )
    }
}

/// A case with random alpha and beta.
#[allow(clippy::too_many_arguments)]
fn rcase<T: Scalar>(rng: &mut Rng, ta: u8, tb: u8, m: usize, n: usize, k: usize, pad: usize) -> Case<T> {
    let (alpha, beta) = (rng.scalar::<T>(), rng.scalar::<T>());
    Case::new(rng, ta, tb, m, n, k, alpha, beta, pad)
}

/// GPU against CPU for one case under `knobs`; the GPU run must have stayed on the GPU.
fn compare<T: Sym>(case: &Case<T>, knobs: Knobs) {
    let what = format!("{} {knobs:?}", case.label());
    let want = case.run(Side::Cpu, T::GEMM);
    // Forced onto the CPU: nothing recorded, or (past the flop threshold, the runtime up) a
    // call the planner priced and timed on the CPU.
    let cpu_only = off::last().is_none_or(|o| (o.planned, o.ran) == (Side::Cpu, Side::Cpu));
    assert!(cpu_only, "{what}: the CPU run went through the offload path: {:?}", off::last());
    let got = with_knobs(knobs, || case.run(Side::Gpu, T::GEMM));
    let o = off::last().unwrap_or_else(|| panic!("{what}: no offload outcome recorded"));
    assert_eq!((o.planned, o.ran), (Side::Gpu, Side::Gpu), "{what}: {o:?}");
    assert!(o.fallback.is_none(), "{what}: fell back: {o:?}");
    if let (Some((mt, nt)), Some(s)) = (knobs.tile, &o.stats) {
        let tiles = case.m.div_ceil(mt.min(case.m)) * case.n.div_ceil(nt.min(case.n));
        assert_eq!(s.tiles, tiles, "{what}: {s}");
    }
    case.check(&got, &want, &what);
}

fn every_transpose<T: Sym>(seed: u64) {
    let mut rng = Rng::new(seed);
    let small = Knobs { tile: Some((64, 48)), piece_bytes: Some(4096), ..Default::default() };
    for ta in TRANS {
        for tb in TRANS {
            let (alpha, beta) = (rng.scalar::<T>(), rng.scalar::<T>());
            compare(&Case::new(&mut rng, ta, tb, 157, 131, 97, alpha, beta, 5), small);
            // One tile, default pieces.
            compare(&Case::new(&mut rng, ta, tb, 33, 17, 61, alpha, T::zero(), 2), Knobs::default());
        }
    }
}

#[test]
fn every_precision_and_transpose() {
    let Some(_rt) = gpu_or_skip("every_precision_and_transpose") else { return };
    every_transpose::<f32>(1);
    every_transpose::<f64>(2);
    every_transpose::<C32>(3);
    every_transpose::<C64>(4);
}

#[test]
fn tiles_pieces_and_device_blocks() {
    let Some(_rt) = gpu_or_skip("tiles_pieces_and_device_blocks") else { return };
    let mut rng = Rng::new(11);
    let (m, n, k) = (301, 257, 129);
    for (ta, tb) in [(b'N', b'N'), (b'T', b'C'), (b'C', b'T')] {
        // Pieces smaller than a column of A (parts of columns), tiles not dividing m or n.
        let pieces = Knobs { tile: Some((96, 80)), piece_bytes: Some(200 * 8), ..Default::default() };
        compare(&rcase::<f64>(&mut rng, ta, tb, m, n, k, 3), pieces);
        compare(&rcase::<C64>(&mut rng, ta, tb, m, n, k, 3), pieces);
        // A device budget of a few tiles: the problem runs in row and column blocks.
        for budget in [400_000usize, 1_000_000] {
            let blocks = Knobs { tile: Some((64, 64)), device_budget: Some(budget), ..Default::default() };
            compare(&rcase::<f64>(&mut rng, ta, tb, m, n, k, 1), blocks);
            let alpha = rng.scalar::<f32>();
            compare(&Case::new(&mut rng, ta, tb, m, n, k, alpha, 0.0, 1), blocks);
        }
    }
    // Sizes 1 and a single row or column.
    for (m, n, k) in [(1, 1, 1), (1, 300, 70), (300, 1, 70), (7, 9, 1)] {
        let knobs = Knobs { tile: Some((64, 64)), ..Default::default() };
        compare(&rcase::<f64>(&mut rng, b'N', b'T', m, n, k, 2), knobs);
    }
}

#[test]
fn special_alpha_and_beta() {
    let Some(_rt) = gpu_or_skip("special_alpha_and_beta") else { return };
    let mut rng = Rng::new(21);
    let knobs = Knobs { tile: Some((64, 48)), piece_bytes: Some(4096), ..Default::default() };
    let (m, n, k) = (131, 97, 75);
    for (alpha, beta) in [(0.0, 0.0), (0.0, 0.5), (0.0, 1.5), (1.0, 0.0), (1.0, 1.0), (-0.5, 0.0), (2.0, -1.0)] {
        let c = Case::new(&mut rng, b'T', b'N', m, n, k, alpha, beta, 4);
        compare(&c, knobs);
        let (za, zb) = (C64::new(alpha, 0.0), C64::new(beta, 0.0));
        compare(&Case::new(&mut rng, b'C', b'N', m, n, k, za, zb, 4), knobs);
    }
    // k == 0: C := beta*C.
    compare(&Case::new(&mut rng, b'N', b'N', m, n, 0, 1.0f64, 0.75, 2), knobs);
    compare(&Case::new(&mut rng, b'N', b'N', m, n, 0, 1.0f64, 0.0, 2), knobs);
}

#[test]
fn default_tiles_at_a_middle_size() {
    let Some(_rt) = gpu_or_skip("default_tiles_at_a_middle_size") else { return };
    let mut rng = Rng::new(31);
    // 2500: default tiles of 512 (5 x 5), default pieces.
    compare(&Case::new(&mut rng, b'N', b'N', 2500, 2500, 700, 1.0f64, 0.5, 7), Knobs::default());
    compare(&Case::new(&mut rng, b'T', b'N', 2500, 1700, 500, 0.5f32, 0.0, 0), Knobs::default());
}

#[test]
fn cblas_and_ilp64_symbols() {
    let Some(_rt) = gpu_or_skip("cblas_and_ilp64_symbols") else { return };
    let mut rng = Rng::new(41);
    let (m, n, k) = (211usize, 190usize, 97usize);
    let knobs = Knobs { tile: Some((64, 64)), piece_bytes: Some(8192), ..Default::default() };
    // Fortran ILP64: the same problem as through the LP64 symbol.
    let c = Case::new(&mut rng, b'T', b'C', m, n, k, 0.5f64, 0.25, 3);
    let want = c.run(Side::Cpu, f64::GEMM);
    let mut got = c.c.clone();
    let (m64, n64, k64) = (m as i64, n as i64, k as i64);
    let (lda, ldb, ldc) = (c.lda as i64, c.ldb as i64, c.ldc as i64);
    with_knobs(knobs, || {
        off::with_side(Some(Side::Gpu), || unsafe {
            dgemm_64_(
                &(b'T' as c_char),
                &(b'C' as c_char),
                &m64,
                &n64,
                &k64,
                &c.alpha,
                c.a.as_ptr(),
                &lda,
                c.b.as_ptr(),
                &ldb,
                &c.beta,
                got.as_mut_ptr(),
                &ldc,
            )
        })
    });
    assert_eq!(off::last().map(|o| o.ran), Some(Side::Gpu));
    c.check(&got, &want, "dgemm_64_");
    let z = Case::new(&mut rng, b'C', b'N', m, n, k, C64::new(0.5, -1.0), C64::new(0.0, 1.0), 3);
    let want = z.run(Side::Cpu, C64::GEMM);
    let mut got = z.c.clone();
    let (lda, ldb, ldc) = (z.lda as i64, z.ldb as i64, z.ldc as i64);
    with_knobs(knobs, || {
        off::with_side(Some(Side::Gpu), || unsafe {
            zgemm_64_(
                &(b'C' as c_char),
                &(b'N' as c_char),
                &m64,
                &n64,
                &k64,
                &z.alpha,
                z.a.as_ptr(),
                &lda,
                z.b.as_ptr(),
                &ldb,
                &z.beta,
                got.as_mut_ptr(),
                &ldc,
            )
        })
    });
    assert_eq!(off::last().map(|o| o.ran), Some(Side::Gpu));
    z.check(&got, &want, "zgemm_64_");

    // CBLAS column-major and row-major (row-major: the transposed problem).
    const COL: i32 = 102;
    const ROW: i32 = 101;
    const NT: i32 = 111;
    const TT: i32 = 112;
    const CT: i32 = 113;
    for lay in [COL, ROW] {
        // Row-major A (m x k, ta = N) has leading dimension >= k; B (k x n, tb = T) stored n x k: >= k.
        let (lda, ldb, ldc) = if lay == COL { (m + 2, n + 2, m + 2) } else { (k + 2, k + 2, n + 2) };
        let a: Vec<f64> = rng.vec(lda * m.max(k));
        let b: Vec<f64> = rng.vec(ldb * n.max(k));
        let c0: Vec<f64> = rng.vec(ldc * m.max(n));
        let call = |side: Side| {
            let mut c = c0.clone();
            off::clear_last();
            with_knobs(knobs, || {
                off::with_side(Some(side), || unsafe {
                    cblas_dgemm(
                        lay,
                        NT,
                        TT,
                        m as i32,
                        n as i32,
                        k as i32,
                        0.75,
                        a.as_ptr(),
                        lda as i32,
                        b.as_ptr(),
                        ldb as i32,
                        -0.5,
                        c.as_mut_ptr(),
                        ldc as i32,
                    )
                })
            });
            c
        };
        let want = call(Side::Cpu);
        let got = call(Side::Gpu);
        assert_eq!(off::last().map(|o| o.ran), Some(Side::Gpu), "cblas_dgemm layout {lay}");
        common::assert_close(&got, &want, k, &format!("cblas_dgemm layout {lay}"));
        // cblas_sgemm64_ and cblas_zgemm row-major, transposes T and C.
        let sa: Vec<f32> = rng.vec(lda * m.max(k));
        let sb: Vec<f32> = rng.vec(ldb * n.max(k));
        let sc0: Vec<f32> = rng.vec(ldc * m.max(n));
        let scall = |side: Side| {
            let mut c = sc0.clone();
            with_knobs(knobs, || {
                off::with_side(Some(side), || unsafe {
                    cblas_sgemm64_(
                        lay,
                        NT,
                        TT,
                        m as i64,
                        n as i64,
                        k as i64,
                        1.25,
                        sa.as_ptr(),
                        lda as i64,
                        sb.as_ptr(),
                        ldb as i64,
                        0.0,
                        c.as_mut_ptr(),
                        ldc as i64,
                    )
                })
            });
            c
        };
        common::assert_close(&scall(Side::Gpu), &scall(Side::Cpu), k, &format!("cblas_sgemm64_ layout {lay}"));
        // Square problem for the complex transposed-transposed call: both operands k x k sized.
        let s = 150usize;
        let ld = s + 3;
        let za: Vec<C64> = rng.vec(ld * s);
        let zb: Vec<C64> = rng.vec(ld * s);
        let zc0: Vec<C64> = rng.vec(ld * s);
        let (al, be) = (C64::new(1.0, 0.5), C64::new(-0.25, 0.0));
        let zcall = |side: Side| {
            let mut c = zc0.clone();
            with_knobs(knobs, || {
                off::with_side(Some(side), || unsafe {
                    cblas_zgemm(
                        lay,
                        CT,
                        TT,
                        s as i32,
                        s as i32,
                        s as i32,
                        &al,
                        za.as_ptr(),
                        ld as i32,
                        zb.as_ptr(),
                        ld as i32,
                        &be,
                        c.as_mut_ptr(),
                        ld as i32,
                    )
                })
            });
            c
        };
        common::assert_close(&zcall(Side::Gpu), &zcall(Side::Cpu), s, &format!("cblas_zgemm layout {lay}"));
    }
}

#[test]
fn failures_fall_back_to_the_cpu() {
    let Some(_rt) = gpu_or_skip("failures_fall_back_to_the_cpu") else { return };
    let mut rng = Rng::new(51);
    // Not even one tile fits the device budget: nothing is written, the CPU computes it all.
    let c = Case::new(&mut rng, b'N', b'T', 200, 150, 80, 0.5f64, 0.5, 2);
    let want = c.run(Side::Cpu, f64::GEMM);
    let got = with_knobs(Knobs { device_budget: Some(1024), ..Default::default() }, || c.run(Side::Gpu, f64::GEMM));
    let o = off::last().expect("outcome");
    assert_eq!((o.planned, o.ran), (Side::Gpu, Side::Cpu), "{o:?}");
    assert!(o.fallback.is_some());
    c.check(&got, &want, "fallback before any copy");
    // A failure after some pieces of C were written back (beta != 0: a piece updated twice
    // would show): the CPU finishes exactly the rest.
    for fail in [0usize, 1, 3, 7, 20] {
        for beta in [0.5, 0.0] {
            let knobs =
                Knobs { tile: Some((64, 48)), piece_bytes: Some(2048), fail_after: Some(fail), ..Default::default() };
            let c = Case::new(&mut rng, b'T', b'N', 200, 150, 80, -0.75f64, beta, 2);
            let want = c.run(Side::Cpu, f64::GEMM);
            let got = with_knobs(knobs, || c.run(Side::Gpu, f64::GEMM));
            let o = off::last().expect("outcome");
            assert_eq!(o.ran, Side::Cpu, "fail_after {fail}: {o:?}");
            c.check(&got, &want, &format!("fallback after {fail} pieces, beta {beta}"));
            let z = Case::new(&mut rng, b'C', b'T', 120, 130, 40, C64::new(0.5, 1.0), C64::new(beta, -beta), 2);
            let want = z.run(Side::Cpu, C64::GEMM);
            let got = with_knobs(knobs, || z.run(Side::Gpu, C64::GEMM));
            z.check(&got, &want, &format!("zgemm fallback after {fail} pieces, beta {beta}"));
        }
    }
}

#[test]
fn concurrent_host_threads() {
    let Some(_rt) = gpu_or_skip("concurrent_host_threads") else { return };
    std::thread::scope(|s| {
        for t in 0..6u64 {
            s.spawn(move || {
                let mut rng = Rng::new(60 + t);
                let knobs = Knobs { tile: Some((128, 96)), piece_bytes: Some(16384), ..Default::default() };
                for _ in 0..3 {
                    compare(&rcase::<f64>(&mut rng, b'N', b'T', 333, 277, 150, 3), knobs);
                    compare(&rcase::<C32>(&mut rng, b'C', b'N', 201, 199, 90, 1), knobs);
                }
            });
        }
    });
}

#[test]
fn the_planner_decides_by_size() {
    let Some(rt) = gpu_or_skip("the_planner_decides_by_size") else { return };
    let mut rng = Rng::new(71);
    // Small: the CPU on the fast path (no outcome recorded), whatever the device.
    let c = Case::new(&mut rng, b'N', b'N', 64, 64, 64, 1.0f64, 0.5, 0);
    off::clear_last();
    let mut out = c.c.clone();
    let (m, lda) = (64i32, 64i32);
    off::with_side(None, || unsafe {
        f64::GEMM(
            &(b'N' as c_char),
            &(b'N' as c_char),
            &m,
            &m,
            &m,
            &c.alpha,
            c.a.as_ptr(),
            &lda,
            c.b.as_ptr(),
            &lda,
            &c.beta,
            out.as_mut_ptr(),
            &lda,
        )
    });
    if std::env::var("HYBLAS_DEVICE").is_err() {
        assert!(off::last().is_none(), "a 64^3 DGEMM asked the model: {:?}", off::last());
    }
    // Large on a Hopper-class GPU: the model sends DGEMM n = 4096 to the GPU (tens of ms on
    // the CPU, a few ms through PCIe 5).
    if rt.props.cc.0 >= 9 && std::env::var("HYBLAS_DEVICE").is_err() {
        let n = 4096usize;
        let a: Vec<f64> = rng.vec(n * n);
        let b: Vec<f64> = rng.vec(n * n);
        let mut cc: Vec<f64> = rng.vec(n * n);
        let ni = n as i32;
        off::clear_last();
        off::with_side(None, || unsafe {
            f64::GEMM(
                &(b'N' as c_char),
                &(b'N' as c_char),
                &ni,
                &ni,
                &ni,
                &1.0,
                a.as_ptr(),
                &ni,
                b.as_ptr(),
                &ni,
                &0.5,
                cc.as_mut_ptr(),
                &ni,
            )
        });
        let o = off::last().expect("a 4096^3 DGEMM must consult the model");
        assert_eq!((o.planned, o.ran), (Side::Gpu, Side::Gpu), "{o:?}");
    }
}

/// The planner times the calls it priced, forced ones included once the GPU runtime exists,
/// and learns from them (`plan::offload::Learned`): after a run of forced CPU and GPU calls of one
/// size, its factors there are their measured time over the calibrated model's, and the next
/// call's prediction (its outcome's `pred_us`) includes them.
#[test]
fn the_planner_learns_from_the_calls_it_times() {
    use hyblas::plan::offload::{Learned, Problem, Rates, MAX_RATIO};
    let Some(rt) = gpu_or_skip("the_planner_learns_from_the_calls_it_times") else { return };
    if !hyblas::plan::offload::learning() {
        eprintln!("the_planner_learns_from_the_calls_it_times: HYBLAS_OFFLOAD_LEARN=0, nothing to check");
        return;
    }
    let mut rng = Rng::new(83);
    let n = 600usize;
    let c = Case::new(&mut rng, b'N', b'N', n, n, n, 1.0f64, 0.5, 0);
    let want = c.run(Side::Cpu, f64::GEMM);
    let p = Problem::gemm::<f64>(n, n, n, false, false);
    let threads = hyblas::cpu::threads::nthreads();
    let model = Rates::for_device(rt).calibrated().predict(&p, threads);
    for side in [Side::Cpu, Side::Gpu] {
        let calibrated = if side == Side::Cpu { model.cpu_us } else { model.gpu_us };
        let mut ratios = Vec::new();
        for i in 0..20 {
            let got = c.run(side, f64::GEMM);
            let o = off::last().expect("a forced 600^3 DGEMM is priced and timed once the runtime exists");
            let st = o.stats.as_ref().expect("stats");
            assert_eq!((o.ran, st.mode), (side, side.name()), "{o:?}");
            assert!(st.pred_us > 0.0 && st.secs > 0.0, "{st:?}");
            ratios.push(st.secs * 1e6 / calibrated);
            if i == 0 {
                c.check(&got, &want, &format!("learning, forced {}", side.name()));
            }
        }
        ratios.sort_by(f64::total_cmp);
        let med = ratios[ratios.len() / 2];
        let (fc, fg) = Learned::global().factors(&p);
        let f = if side == Side::Cpu { fc } else { fg };
        eprintln!("learnt on the {}: x{f:.3} (the calls' median ratio {med:.3})", side.name());
        if !(1.0 / MAX_RATIO..=MAX_RATIO).contains(&med) {
            // Calls this far from the model are not learnt from (one H200 run: forced GPU calls
            // here at 66x the model, in no other run): the factor must not have followed them.
            eprintln!("WARNING: the {} calls ran {med:.1}x the calibrated model", side.name());
            assert!((1.0 / MAX_RATIO..=MAX_RATIO).contains(&f), "{} factor {f} followed wild calls", side.name());
            continue;
        }
        assert!((f.ln() - med.ln()).abs() < 0.25, "{} factor {f} against the calls' median {med}", side.name());
        // The next call is priced with it (the planner's cached choice repriced with it).
        c.run(side, f64::GEMM);
        let st = off::last().and_then(|o| o.stats).expect("stats");
        assert!(
            (st.pred_us / (calibrated * f) - 1.0).abs() < 0.01,
            "{}: predicted {} us, calibrated {calibrated} us x {f}",
            side.name(),
            st.pred_us
        );
    }
}

/// An operand of more than 2^31 bytes (A: 2.2 GB, B: 1.1 GB): 64-bit offsets in the host
/// copies and on the device. C is small, so the CPU reference stays quick.
#[test]
fn huge_operands() {
    let Some(_rt) = gpu_or_skip("huge_operands") else { return };
    let (m, n, k) = (257usize, 131usize, (1usize << 20) + 3);
    let mut rng = Rng::new(81);
    // Fill fast: a short random pattern repeated with a varying offset.
    let pattern: Vec<f64> = rng.vec(4099);
    let a: Vec<f64> = (0..m * k).map(|i| pattern[i % 4099] + (i % 7) as f64 * 0.125).collect();
    let b: Vec<f64> = (0..n * k).map(|i| pattern[(i * 3) % 4099] - (i % 5) as f64 * 0.25).collect();
    assert!(a.len() * 8 > 1 << 31);
    let c0: Vec<f64> = rng.vec(m * n);
    let (mi, ni, ki) = (m as i32, n as i32, k as i32);
    let call = |side: Side| {
        let mut c = c0.clone();
        // A stored m x k (N), B stored n x k (T): both cut into pieces of many short columns.
        off::with_side(Some(side), || unsafe {
            f64::GEMM(
                &(b'N' as c_char),
                &(b'T' as c_char),
                &mi,
                &ni,
                &ki,
                &1.0,
                a.as_ptr(),
                &mi,
                b.as_ptr(),
                &ni,
                &0.5,
                c.as_mut_ptr(),
                &mi,
            )
        });
        c
    };
    let want = call(Side::Cpu);
    let got = call(Side::Gpu);
    let o = off::last().expect("outcome");
    assert_eq!(o.ran, Side::Gpu, "{o:?}");
    common::assert_close(&got, &want, k, "huge dgemm");
}

// ---- Co-execution (phase 2) ----

/// Where a case runs: a fixed GPU share, or co-execution from the model's share.
#[derive(Clone, Copy, Debug)]
enum Split {
    Share(f64),
    Dynamic,
}

impl<T: Scalar> Case<T> {
    /// C after the call through the LP64 Fortran symbol, co-executed as `how`.
    fn run_split(&self, how: Split, f: Gemm<T, i32>) -> Vec<T> {
        let mut c = self.c.clone();
        let (m, n, k) = (self.m as i32, self.n as i32, self.k as i32);
        let (lda, ldb, ldc) = (self.lda as i32, self.ldb as i32, self.ldc as i32);
        off::clear_last();
        let call = || unsafe {
            f(
                &(self.ta as c_char),
                &(self.tb as c_char),
                &m,
                &n,
                &k,
                &self.alpha,
                self.a.as_ptr(),
                &lda,
                self.b.as_ptr(),
                &ldb,
                &self.beta,
                c.as_mut_ptr(),
                &ldc,
            )
        };
        match how {
            Split::Share(x) => off::with_share(Some(x), call),
            Split::Dynamic => off::with_split(call),
        }
        c
    }
}

/// Co-executed against the CPU engine for one case under `knobs`; checks where it ran and, when
/// nothing failed, that the GPU computed exactly its forced share. Returns the outcome.
fn compare_split<T: Sym>(case: &Case<T>, how: Split, knobs: Knobs) -> off::Outcome {
    let what = format!("{} {how:?} {knobs:?}", case.label());
    let want = case.run(Side::Cpu, T::GEMM);
    let got = with_knobs(knobs, || case.run_split(how, T::GEMM));
    let o = off::last().unwrap_or_else(|| panic!("{what}: no outcome recorded"));
    let st = o.stats.clone().unwrap_or_else(|| panic!("{what}: no statistics: {o:?}"));
    let injected = knobs.fail_after.is_some() || knobs.fail_gemm_after.is_some();
    let fixed = match how {
        Split::Share(x) => Some(off::split_cols(x, case.n)),
        Split::Dynamic => None,
    };
    match fixed {
        Some(0) => assert_eq!((o.ran, st.mode), (Side::Cpu, "cpu"), "{what}: {o:?}"),
        Some(ng) if ng == case.n => {
            assert_eq!(st.mode, "gpu", "{what}: {o:?}");
            if !injected {
                assert_eq!((o.ran, st.gpu_share), (Side::Gpu, 1.0), "{what}: {o:?}");
            }
        }
        Some(ng) => {
            assert_eq!(st.mode, "split-fixed", "{what}: {o:?}");
            if injected {
                assert!(
                    o.fallback.is_some() && st.gpu_error.is_some(),
                    "{what}: the injected failure went unnoticed: {o:?}"
                );
            } else {
                assert_eq!(st.gpu_error, None, "{what}: {st}");
                assert_eq!((st.gpu_cols, st.cpu_cols), (ng, case.n - ng), "{what}: {st}");
                let share = ng as f64 / case.n as f64;
                assert!((st.gpu_share - share).abs() < 1e-12, "{what}: {st}");
            }
        }
        // One column: nothing to split, the GPU alone.
        None if case.n < 2 => assert_eq!(st.mode, "gpu", "{what}: {o:?}"),
        None => {
            assert_eq!(st.mode, "split", "{what}: {o:?}");
            if !injected {
                assert_eq!(st.gpu_error, None, "{what}: {st}");
                assert_eq!(st.gpu_cols + st.cpu_cols, case.n, "{what}: every column taken once: {st}");
            }
        }
    }
    assert!(st.secs > 0.0 && st.pred_us >= 0.0, "{what}: {st}");
    case.check(&got, &want, &what);
    o
}

fn split_every_transpose<T: Sym>(seed: u64, all: bool) {
    let mut rng = Rng::new(seed);
    // Tiles much smaller than C: each side takes many tiles; 157 x 131 divides by neither.
    let small = Knobs { tile: Some((48, 32)), piece_bytes: Some(4096), ..Default::default() };
    let pairs: Vec<(u8, u8)> = if all {
        TRANS.iter().flat_map(|&a| TRANS.iter().map(move |&b| (a, b))).collect()
    } else {
        vec![(b'N', b'N'), (b'T', b'C'), (b'C', b'T'), (b'N', b'C')]
    };
    for (ta, tb) in pairs {
        for how in [Split::Share(0.0), Split::Share(0.3), Split::Share(0.77), Split::Share(1.0), Split::Dynamic] {
            let (alpha, beta) = (rng.scalar::<T>(), rng.scalar::<T>());
            compare_split(&Case::new(&mut rng, ta, tb, 157, 131, 97, alpha, beta, 5), how, small);
        }
        // beta == 0 (NaN in C), default tiles and pieces.
        let alpha = rng.scalar::<T>();
        compare_split(
            &Case::new(&mut rng, ta, tb, 203, 170, 61, alpha, T::zero(), 2),
            Split::Share(0.5),
            Knobs::default(),
        );
    }
}

#[test]
fn split_every_precision_transpose_and_share() {
    let Some(_rt) = gpu_or_skip("split_every_precision_transpose_and_share") else { return };
    split_every_transpose::<f64>(101, true);
    split_every_transpose::<f32>(102, false);
    split_every_transpose::<C32>(103, false);
    split_every_transpose::<C64>(104, true);
}

/// A co-execution with feeders of its own pins its two sides to CPUs of their own
/// (`HYBLAS_OFFLOAD_PIN`) and gives every thread its CPUs back after: the caller, the
/// engine's pool.
#[test]
fn a_split_gives_its_pinned_cpus_back() {
    let Some(_rt) = gpu_or_skip("a_split_gives_its_pinned_cpus_back") else { return };
    let all = hyblas::cpu::threads::allowed_cpus().len();
    let mask = || {
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
        unsafe { libc::CPU_COUNT(&set) as usize }
    };
    let mut rng = Rng::new(140);
    for how in [Split::Share(0.5), Split::Dynamic] {
        let o = compare_split(&rcase::<f64>(&mut rng, b'N', b'N', 700, 650, 300, 3), how, Knobs::default());
        let st = o.stats.unwrap();
        println!("{how:?}: {} feeders, {} CPU threads", st.feeders, st.cpu_threads);
        assert_eq!(mask(), all, "{how:?}: the caller's CPUs back");
        let pool: Vec<usize> = hyblas::cpu::threads::install(2, || rayon::broadcast(|_| mask()));
        assert!(pool.iter().all(|&c| c == all), "{how:?}: the engine's pool's CPUs back: {pool:?}");
    }
}

/// A co-executed call teaches the learnt table nothing: each side shared the machine with the
/// other, and the table's factors are for whole calls (`plan::offload`).
#[test]
fn co_executed_calls_teach_nothing() {
    let Some(_rt) = gpu_or_skip("co_executed_calls_teach_nothing") else { return };
    // A precision and size no other test here co-executes (the table is the process's).
    let (m, n, k) = (1800, 1700, 1900);
    let mut rng = Rng::new(150);
    let case = Case::new(&mut rng, b'N', b'N', m, n, k, C32::new(0.5, 0.25), C32::new(-1.0, 0.5), 2);
    let p = off::Problem::gemm::<C32>(m, n, k, false, false);
    // compare_split's CPU reference call teaches the CPU's factor first; then the split itself.
    compare_split(&case, Split::Share(0.5), Knobs::default());
    let before = (off::Learned::global().factors(&p), off::Learned::global().calls());
    let o = compare_split(&case, Split::Share(0.5), Knobs::default());
    let st = o.stats.unwrap();
    assert!(st.gpu_cols > 0 && st.gpu_cols < n, "{st}");
    // The second compare_split's CPU reference call is one more whole call; the split none.
    let after = (off::Learned::global().factors(&p), off::Learned::global().calls());
    assert!(after.1 <= before.1 + 1, "{before:?} -> {after:?}");
    assert_eq!(after.0 .1, before.0 .1, "the GPU factor moved after a split");
}

#[test]
fn split_shapes_and_special_scalars() {
    let Some(_rt) = gpu_or_skip("split_shapes_and_special_scalars") else { return };
    let mut rng = Rng::new(111);
    let knobs = Knobs { tile: Some((64, 40)), piece_bytes: Some(8192), ..Default::default() };
    // Tall, wide, a single column and row, shares that leave one column to a side.
    for (m, n, k) in [(600, 90, 50), (70, 500, 200), (300, 1, 40), (1, 300, 40), (7, 9, 1)] {
        for how in [Split::Share(0.5), Split::Share(1.0 / n as f64), Split::Share(1.0 - 1.0 / n as f64), Split::Dynamic]
        {
            compare_split(&rcase::<f64>(&mut rng, b'N', b'T', m, n, k, 3), how, knobs);
        }
    }
    // alpha == 0 (A and B not read), beta 0 / 1 / other, k == 0.
    for (alpha, beta) in [(0.0, 0.0), (0.0, 0.5), (1.0, 0.0), (1.0, 1.0), (-0.5, 2.0)] {
        for how in [Split::Share(0.4), Split::Dynamic] {
            compare_split(&Case::new(&mut rng, b'T', b'N', 131, 97, 75, alpha, beta, 4), how, knobs);
            let (za, zb) = (C64::new(alpha, 0.25), C64::new(beta, -0.5));
            compare_split(&Case::new(&mut rng, b'C', b'N', 131, 97, 75, za, zb, 4), how, knobs);
        }
    }
    compare_split(&Case::new(&mut rng, b'N', b'N', 131, 97, 0, 1.0f64, 0.75, 2), Split::Share(0.6), knobs);
    // A middle size with the default tiles: the dynamic balance from the model's share.
    compare_split(&Case::new(&mut rng, b'N', b'N', 2100, 2300, 900, 1.0f64, 0.5, 3), Split::Dynamic, Knobs::default());
    compare_split(
        &Case::new(&mut rng, b'T', b'N', 1500, 1700, 500, 0.5f32, 0.0, 0),
        Split::Share(0.7),
        Knobs::default(),
    );
}

/// A GPU failure part way through a co-executed call (a GEMM that fails, or a copy back that
/// fails after some pieces were written): the CPU engine finishes the GPU's part, C is right,
/// and no element is updated twice (beta != 0 would show it).
#[test]
fn split_gpu_failure_mid_call() {
    let Some(_rt) = gpu_or_skip("split_gpu_failure_mid_call") else { return };
    let mut rng = Rng::new(121);
    for how in [Split::Share(0.6), Split::Share(0.95), Split::Dynamic] {
        for fail in [0usize, 1, 5, 17] {
            let gemm = Knobs {
                tile: Some((40, 32)),
                piece_bytes: Some(2048),
                fail_gemm_after: Some(fail),
                ..Default::default()
            };
            let piece =
                Knobs { tile: Some((40, 32)), piece_bytes: Some(2048), fail_after: Some(fail), ..Default::default() };
            for knobs in [gemm, piece] {
                let o = compare_split(&Case::new(&mut rng, b'T', b'N', 200, 190, 80, -0.75f64, 0.5, 2), how, knobs);
                let st = o.stats.unwrap();
                // (Fixed shares give the GPU enough tiles and pieces to reach every failure point.)
                assert!(matches!(how, Split::Dynamic) || st.fallback_elems > 0, "{how:?} {knobs:?}: {st}");
                // 120 x 300 in 40 x 32 tiles: 18 of them at a share of 0.6, past every failure point.
                let z = Case::new(&mut rng, b'C', b'T', 120, 300, 40, C64::new(0.5, 1.0), C64::new(0.25, -0.5), 2);
                compare_split(&z, how, knobs);
            }
        }
    }
    // Not even the GPU's setup fits (a device budget of 1 KB): the CPU computes all of C.
    let c = Case::new(&mut rng, b'N', b'N', 150, 160, 70, 1.0f64, 0.5, 1);
    let o = compare_split(
        &c,
        Split::Share(0.5),
        Knobs { device_budget: Some(1024), fail_after: Some(usize::MAX), ..Default::default() },
    );
    assert_eq!(o.stats.unwrap().gpu_share, 0.0);
}

/// Many host threads co-executing, offloading and running on the CPU at once.
#[test]
fn split_concurrent_host_threads() {
    let Some(_rt) = gpu_or_skip("split_concurrent_host_threads") else { return };
    std::thread::scope(|s| {
        for t in 0..8u64 {
            s.spawn(move || {
                let mut rng = Rng::new(130 + t);
                let knobs = Knobs { tile: Some((96, 64)), piece_bytes: Some(16384), ..Default::default() };
                for i in 0..3 {
                    let how = [Split::Share(0.5), Split::Dynamic, Split::Share(0.2)][(i + t as usize) % 3];
                    compare_split(&rcase::<f64>(&mut rng, b'N', b'T', 333, 277, 150, 3), how, knobs);
                    compare_split(&rcase::<C32>(&mut rng, b'C', b'N', 201, 199, 90, 1), how, knobs);
                    compare(&rcase::<f32>(&mut rng, b'T', b'T', 180, 150, 60, 2), knobs);
                }
            });
        }
    });
}
