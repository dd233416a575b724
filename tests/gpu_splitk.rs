//! GPU split-k GEMM (`gpu::splitk`) against the CPU engine (the exported Fortran `?gemm_`), for
//! s, d, c, z and all 9 op(A) x op(B) combinations. Runs on a machine with a GPU; elsewhere
//! every test prints SKIPPED.
//!
//! Every call runs on fresh random data. A and B hold NaN outside their referenced blocks (and
//! everywhere when alpha == 0: they must not be read); C holds a poison value outside its m x n
//! block (checked bit for bit unchanged) and NaN inside when beta == 0 (it must be overwritten).
//! Shapes sit around the tile edges (1..4 direct, 16, 32, 64 tiles) and the chunk edges (k = 1,
//! 5, 1000, 65537, 2^20 + 3); leading dimensions above the minimum; operands one element off
//! 16-byte alignment (the element-wise copies); alpha and beta in {0, 1, random}; host and device
//! scalars; both reductions. The deterministic path is checked bit for bit over 10 runs, across
//! forced block shapes, host/device scalars and aligned/unaligned copies of the same data. One
//! case reads more than 2^31 bytes.
//!
//! Single-precision results are compared with a double-precision reference (the CPU engine on
//! widened data); the tolerance is the rounding bound of the split-k summation: chunk length
//! plus the reduction's depth, times eps, times sum |a||b| (computed on the host).

mod common;

use common::*;
use hyblas::gpu::splitk::{self, gemm, Reduction};
use hyblas::gpu::{tune, DMat, DeviceBuffer, Exec, In, Runtime};
use hyblas::types::{Scalar, Trans, C32, C64};

type I = i32;

macro_rules! decl_gemm {
    ($T:ty, $name:ident) => {
        extern "C" {
            fn $name(
                ta: *const u8,
                tb: *const u8,
                m: *const I,
                n: *const I,
                k: *const I,
                al: *const $T,
                a: *const $T,
                lda: *const I,
                b: *const $T,
                ldb: *const I,
                be: *const $T,
                c: *mut $T,
                ldc: *const I,
            );
        }
    };
}
decl_gemm!(f32, sgemm_);
decl_gemm!(f64, dgemm_);
decl_gemm!(C32, cgemm_);
decl_gemm!(C64, zgemm_);

/// A precision with its CPU reference: `Wide` is the type the reference is computed in (double
/// for single precision).
trait Cpu: Scalar {
    type Wide: Cpu;
    fn widen(self) -> Self::Wide;
    #[allow(clippy::too_many_arguments)]
    unsafe fn gemm_ref(
        ta: u8,
        tb: u8,
        m: I,
        n: I,
        k: I,
        al: Self,
        a: *const Self,
        lda: I,
        b: *const Self,
        ldb: I,
        be: Self,
        c: *mut Self,
        ldc: I,
    );
}

macro_rules! cpu_impl {
    ($T:ty, $W:ty, $f:ident, $widen:expr) => {
        impl Cpu for $T {
            type Wide = $W;
            fn widen(self) -> $W {
                ($widen)(self)
            }
            unsafe fn gemm_ref(
                ta: u8,
                tb: u8,
                m: I,
                n: I,
                k: I,
                al: Self,
                a: *const Self,
                lda: I,
                b: *const Self,
                ldb: I,
                be: Self,
                c: *mut Self,
                ldc: I,
            ) {
                $f(&ta, &tb, &m, &n, &k, &al, a, &lda, b, &ldb, &be, c, &ldc)
            }
        }
    };
}
cpu_impl!(f32, f64, sgemm_, |x: f32| x as f64);
cpu_impl!(f64, f64, dgemm_, |x: f64| x);
cpu_impl!(C32, C64, cgemm_, |x: C32| C64::new(x.re as f64, x.im as f64));
cpu_impl!(C64, C64, zgemm_, |x: C64| x);

// ---------------------------------------------------------------------------------------
// Data helpers.

fn abs1<T: Scalar>(v: T) -> f64 {
    let c = to_c64(v);
    c.re.abs() + c.im.abs()
}

/// `off` leading elements, then an ld x cols column-major matrix: random (or NaN when `nan_in`)
/// inside the rows x cols block, `outside` elsewhere.
fn matrix<T: Scalar>(
    rng: &mut Rng,
    rows: usize,
    cols: usize,
    ld: usize,
    off: usize,
    outside: T,
    nan_in: bool,
) -> Vec<T> {
    let mut v = vec![outside; (off + ld * cols).max(1)];
    for j in 0..cols {
        for i in 0..rows {
            v[off + i + j * ld] = if nan_in { nan() } else { rng.scalar() };
        }
    }
    v
}

const TRANS: [Trans; 3] = [Trans::No, Trans::Trans, Trans::ConjTrans];

/// op(X)(i, p) of a column-major matrix with leading dimension ld (offset off), as an f64 abs1.
fn op_abs<T: Scalar>(x: &[T], t: Trans, off: usize, ld: usize, i: usize, p: usize) -> f64 {
    abs1(if t == Trans::No { x[off + i + p * ld] } else { x[off + p + i * ld] })
}

// ---------------------------------------------------------------------------------------
// One call against the CPU engine.

#[derive(Clone, Copy, Debug)]
struct Case {
    ta: Trans,
    tb: Trans,
    m: usize,
    n: usize,
    k: usize,
    /// lda, ldb, ldc above their minimum by these.
    pad: (usize, usize, usize),
    /// A and B start this many elements into their buffers (1: not 16-byte aligned).
    off: usize,
    /// 0: zero, 1: one, 2: random.
    alpha: u8,
    beta: u8,
    dev: bool,
    red: Reduction,
}

struct Operands<T> {
    a: Vec<T>,
    b: Vec<T>,
    c: Vec<T>,
    lda: usize,
    ldb: usize,
    ldc: usize,
    alpha: T,
    beta: T,
}

fn operands<T: Cpu>(rng: &mut Rng, c: &Case) -> Operands<T> {
    let (ra, ca) = if c.ta == Trans::No { (c.m, c.k) } else { (c.k, c.m) };
    let (rb, cb) = if c.tb == Trans::No { (c.k, c.n) } else { (c.n, c.k) };
    let (lda, ldb, ldc) = (ra.max(1) + c.pad.0, rb.max(1) + c.pad.1, c.m.max(1) + c.pad.2);
    let alpha: T = scalar_of(c.alpha, rng);
    let beta: T = scalar_of(c.beta, rng);
    // alpha == 0: A and B are all NaN, and must not be read.
    let skip = alpha == T::zero();
    Operands {
        a: matrix(rng, ra, ca, lda, c.off, nan(), skip),
        b: matrix(rng, rb, cb, ldb, c.off, nan(), skip),
        c: matrix(rng, c.m, c.n, ldc, 0, poison(), beta == T::zero()),
        lda,
        ldb,
        ldc,
        alpha,
        beta,
    }
}

/// Run the split-k GEMM on the device copies of `o` and return C.
fn run_gpu<T: Cpu>(rt: &'static Runtime, c: &Case, o: &Operands<T>) -> Vec<T> {
    let (da, db, dc) = (Dev::new(&o.a, c.off), Dev::new(&o.b, c.off), Dev::new(&o.c, 0));
    let s = scalars(o.alpha, o.beta, c.dev);
    let ex = Exec::own(rt);
    let what = format!("{}gemm split-k {c:?}", T::PREFIX);
    gemm::<T>(
        &ex,
        c.ta,
        c.tb,
        c.m as i64,
        c.n as i64,
        c.k as i64,
        s.alpha,
        DMat { ptr: da.ptr::<T>(), ld: o.lda as i64 },
        DMat { ptr: db.ptr::<T>(), ld: o.ldb as i64 },
        s.beta,
        DMat { ptr: dc.ptr::<T>(), ld: o.ldc as i64 },
        c.red,
    )
    .unwrap_or_else(|e| panic!("{what}: {e}"));
    rt.sync(ex.stream).unwrap_or_else(|e| panic!("{what}: {e}"));
    dc.buf.to_vec().unwrap()
}

/// The reference C (in T::Wide) and the bound of each element's rounding error.
fn reference<T: Cpu>(c: &Case, o: &Operands<T>) -> (Vec<T::Wide>, Vec<f64>) {
    let w = |v: &[T]| -> Vec<T::Wide> { v.iter().map(|x| x.widen()).collect() };
    let (a, b) = (w(&o.a), w(&o.b));
    let mut want = w(&o.c);
    if c.m > 0 && c.n > 0 {
        unsafe {
            T::Wide::gemm_ref(
                tchar(c.ta),
                tchar(c.tb),
                c.m as I,
                c.n as I,
                c.k as I,
                o.alpha.widen(),
                a.as_ptr().add(c.off),
                o.lda as I,
                b.as_ptr().add(c.off),
                o.ldb as I,
                o.beta.widen(),
                want.as_mut_ptr(),
                o.ldc as I,
            );
        }
    }
    // sum_p |op(A)(i,p)| |op(B)(p,j)| through the CPU engine on dense abs1 copies.
    let (m, n, k) = (c.m, c.n, c.k);
    let mut s = vec![0.0f64; m * n];
    if m > 0 && n > 0 && k > 0 && o.alpha != T::zero() {
        let mut aa = vec![0.0f64; m * k];
        let mut bb = vec![0.0f64; k * n];
        for p in 0..k {
            for i in 0..m {
                aa[i + p * m] = op_abs(&o.a, c.ta, c.off, o.lda, i, p);
            }
        }
        for j in 0..n {
            for p in 0..k {
                // op(B)(p, j) is op(B^T)(j, p): the same form with the other transposition.
                let tbt = if c.tb == Trans::No { Trans::Trans } else { Trans::No };
                bb[p + j * k] = op_abs(&o.b, tbt, c.off, o.ldb, j, p);
            }
        }
        unsafe {
            f64::gemm_ref(
                b'N',
                b'N',
                m as I,
                n as I,
                k as I,
                1.0,
                aa.as_ptr(),
                m as I,
                bb.as_ptr(),
                k as I,
                0.0,
                s.as_mut_ptr(),
                m as I,
            )
        };
    }
    // Longest sequential run of the split-k sum: a chunk plus the reduction's depth (the
    // atomic path's chunks depend on the device: bound them by k).
    let lb = match c.red {
        Reduction::Deterministic => {
            let (l, g) = splitk::det_chunks::<T>(splitk::config::<T>(m as i64, n as i64), m as i64, n as i64, k as i64);
            (l as usize).min(k) + g as usize / 32 + 8
        }
        Reduction::Atomic => k + 8,
    };
    let t = tol::<T>(lb);
    let (aa, ab) = (abs1(o.alpha), abs1(o.beta));
    let mut bound = vec![0.0; m * n];
    for j in 0..n {
        for i in 0..m {
            let cw = abs1(want[i + j * o.ldc]);
            // beta == 0: C (NaN) is not read.
            let c0 = if ab == 0.0 { 0.0 } else { ab * abs1(o.c[i + j * o.ldc]) };
            bound[i + j * m] = t * (aa * s[i + j * m] + c0 + cw) + 1e-300;
        }
    }
    (want, bound)
}

/// The m x n block within the bounds, everything else in C bit for bit as before.
fn check<T: Cpu>(c: &Case, o: &Operands<T>, got: &[T], want: &[T::Wide], bound: &[f64], what: &str) {
    assert_eq!(got.len(), o.c.len(), "{what}: length");
    for p in 0..got.len() {
        let (i, j) = (p % o.ldc, p / o.ldc);
        if i < c.m && j < c.n {
            let (g, w) = (to_c64(got[p]), to_c64(want[p]));
            let err = (g - w).norm();
            assert!(
                err <= bound[i + j * c.m],
                "{what}: C({i}, {j}) = {g}, want {w} (error {err:e}, bound {:e})",
                bound[i + j * c.m]
            );
        } else {
            assert!(same_bits(&got[p..p + 1], &o.c[p..p + 1]), "{what}: C element {p} outside the block was written");
        }
    }
}

fn run_case<T: Cpu>(rt: &'static Runtime, rng: &mut Rng, c: Case) -> Vec<T> {
    let o = operands::<T>(rng, &c);
    let got = run_gpu(rt, &c, &o);
    let (want, bound) = reference(&c, &o);
    check(&c, &o, &got, &want, &bound, &format!("{}gemm split-k {c:?}", T::PREFIX));
    got
}

// ---------------------------------------------------------------------------------------
// Every precision x 9 combinations over shapes at the tile and chunk edges.

/// (m, n, k): direct (<= 4), tile edges 16/17, 32/33, 64/65, several tiles (100, 128), k at the
/// chunk edges (1 and 5: one chunk; 1000: a few; 65537: many, with a tail).
const SHAPES: [(usize, usize, usize); 18] = [
    (1, 1, 1),
    (2, 3, 5),
    (3, 7, 1000),
    (7, 2, 65537),
    (4, 4, 65537),
    (16, 16, 1000),
    (17, 16, 5),
    (16, 17, 65537),
    (1, 64, 65537),
    (32, 32, 1000),
    (33, 33, 1000),
    (5, 4, 1000),
    (64, 64, 5),
    (100, 7, 1000),
    (64, 65, 300),
    (128, 128, 1000),
    (2, 1, 65537),
    (33, 17, 20000),
];

fn combos<T: Cpu>(rt: &'static Runtime, seed: u64) {
    let mut rng = Rng::new(seed);
    let mut q = 0usize;
    for ta in TRANS {
        for tb in TRANS {
            for _ in 0..4 {
                q += 1;
                let (m, n, k) = SHAPES[(q * 5 + seed as usize) % SHAPES.len()];
                let c = Case {
                    ta,
                    tb,
                    m,
                    n,
                    k,
                    pad: ([0, 1, 3][q % 3], [0, 2, 1][q % 3], [0, 1, 5][(q / 3) % 3]),
                    off: (q / 2) % 2,
                    // Mostly generic scalars; the special values get their own test.
                    alpha: [2, 2, 1, 2][q % 4],
                    beta: [2, 0, 2, 1][(q / 4) % 4],
                    dev: q % 3 == 1,
                    red: if q % 5 == 2 { Reduction::Atomic } else { Reduction::Deterministic },
                };
                run_case::<T>(rt, &mut rng, c);
            }
        }
    }
}

#[test]
fn all_combinations_match_cpu() {
    let Some(rt) = gpu_or_skip("all_combinations_match_cpu") else { return };
    combos::<f32>(rt, 1);
    combos::<f64>(rt, 2);
    combos::<C32>(rt, 3);
    combos::<C64>(rt, 4);
}

// ---------------------------------------------------------------------------------------
// alpha, beta in {0, 1, random} x host/device scalars x both reductions, on a direct shape,
// a one-chunk tile shape (the team stores C) and a many-chunk tile shape (the reduction).

fn special<T: Cpu>(rt: &'static Runtime, seed: u64) {
    let mut rng = Rng::new(seed);
    let mut q = 0;
    for &(m, n, k, ta, tb) in &[
        (3, 2, 3000, Trans::No, Trans::ConjTrans),
        (16, 16, 100, Trans::Trans, Trans::No),
        (17, 33, 5000, Trans::ConjTrans, Trans::Trans),
    ] {
        for alpha in 0..3u8 {
            for beta in 0..3u8 {
                for dev in [false, true] {
                    for red in [Reduction::Deterministic, Reduction::Atomic] {
                        q += 1;
                        let c = Case { ta, tb, m, n, k, pad: (1, 0, 2), off: q % 2, alpha, beta, dev, red };
                        run_case::<T>(rt, &mut rng, c);
                    }
                }
            }
        }
    }
}

#[test]
fn scalar_special_values_pointer_modes_and_reductions() {
    let Some(rt) = gpu_or_skip("scalar_special_values_pointer_modes_and_reductions") else { return };
    special::<f32>(rt, 11);
    special::<f64>(rt, 12);
    special::<C32>(rt, 13);
    special::<C64>(rt, 14);
}

/// k == 0: C := beta*C without reading A or B; m == 0 or n == 0: nothing at all.
#[test]
fn degenerate_sizes() {
    let Some(rt) = gpu_or_skip("degenerate_sizes") else { return };
    fn one<T: Cpu>(rt: &'static Runtime) {
        let mut rng = Rng::new(21);
        for beta in 0..3u8 {
            for dev in [false, true] {
                for red in [Reduction::Deterministic, Reduction::Atomic] {
                    let c = Case {
                        ta: Trans::No,
                        tb: Trans::Trans,
                        m: 7,
                        n: 5,
                        k: 0,
                        pad: (0, 0, 3),
                        off: 0,
                        alpha: 2,
                        beta,
                        dev,
                        red,
                    };
                    run_case::<T>(rt, &mut rng, c);
                }
            }
        }
        // m == 0 / n == 0: C (poisoned) untouched, even with beta = 0.
        let ex = Exec::own(rt);
        let cbuf = vec![poison::<T>(); 16];
        let dc = Dev::new(&cbuf, 0);
        let a = Dev::new(&[nan::<T>(); 16], 0);
        for (m, n) in [(0, 3), (3, 0)] {
            let dm = DMat { ptr: a.ptr::<T>(), ld: 4 };
            let cm = DMat { ptr: dc.ptr::<T>(), ld: 4 };
            gemm::<T>(
                &ex,
                Trans::No,
                Trans::No,
                m,
                n,
                4,
                In::Host(T::one()),
                dm,
                dm,
                In::Host(T::zero()),
                cm,
                Reduction::Deterministic,
            )
            .unwrap();
        }
        rt.sync(ex.stream).unwrap();
        assert!(same_bits(&dc.buf.to_vec::<T>().unwrap(), &cbuf), "{}: m or n = 0 wrote C", T::PREFIX);
    }
    one::<f32>(rt);
    one::<f64>(rt);
    one::<C32>(rt);
    one::<C64>(rt);
}

/// What split-k declines: outputs over 256 x 256, leading dimensions below the minimum.
#[test]
fn unsupported_cases_are_declined() {
    let Some(rt) = gpu_or_skip("unsupported_cases_are_declined") else { return };
    let ex = Exec::own(rt);
    let buf = DeviceBuffer::new(1 << 20).unwrap();
    let d = |ld| DMat { ptr: buf.ptr, ld };
    let one = In::Host(1.0f64);
    let r = gemm::<f64>(&ex, Trans::No, Trans::No, 257, 2, 8, one, d(257), d(8), one, d(257), Reduction::Deterministic);
    assert!(matches!(r, Err(hyblas::gpu::GpuError::Unsupported(_))), "{r:?}");
    let r = gemm::<f64>(&ex, Trans::No, Trans::No, 8, 2, 8, one, d(7), d(8), one, d(8), Reduction::Deterministic);
    assert!(matches!(r, Err(hyblas::gpu::GpuError::Unsupported(_))), "{r:?}");
    let r = gemm::<f64>(&ex, Trans::Trans, Trans::No, 8, 2, 8, one, d(8), d(8), one, d(7), Reduction::Atomic);
    assert!(matches!(r, Err(hyblas::gpu::GpuError::Unsupported(_))), "{r:?}");
}

// ---------------------------------------------------------------------------------------
// Every fragment configuration (and the edges between them) x all nine op combinations.

/// (m, n): each fragment edge (1, 2, 4, 8, 16, 32), one past it (partial warp tiles), several
/// warp tiles (40 x 33: 2 x 2 tiles of 32 for double, 3 x 3 of 16 for the others), and m != n.
const EDGE_SHAPES: [(usize, usize); 10] =
    [(1, 1), (2, 2), (3, 1), (4, 4), (5, 8), (16, 9), (17, 17), (32, 32), (40, 33), (1, 24)];

fn every_config<T: Cpu>(rt: &'static Runtime, seed: u64) {
    let mut rng = Rng::new(seed);
    let mut q = 0usize;
    for &(m, n) in &EDGE_SHAPES {
        for ta in TRANS {
            for tb in TRANS {
                q += 1;
                // Many chunks with a partial last step, or a single short chunk.
                let k = [20_012, 777][q % 2];
                let (ra, rb) = (if ta == Trans::No { m } else { k }, if tb == Trans::No { k } else { n });
                let c = Case {
                    ta,
                    tb,
                    m,
                    n,
                    k,
                    // Even q: leading dimensions of 4k elements, the vector loads; odd: one
                    // element off, element-wise loads.
                    pad: if q.is_multiple_of(2) { ((4 - ra % 4) % 4, (4 - rb % 4) % 4, 1) } else { (1, 1, 0) },
                    off: q % 2,
                    alpha: 2,
                    beta: [2, 0, 1][q % 3],
                    dev: q % 4 == 3,
                    red: if q % 3 == 1 { Reduction::Atomic } else { Reduction::Deterministic },
                };
                run_case::<T>(rt, &mut rng, c);
            }
        }
    }
}

#[test]
fn every_fragment_configuration_and_layout() {
    let Some(rt) = gpu_or_skip("every_fragment_configuration_and_layout") else { return };
    every_config::<f32>(rt, 61);
    every_config::<f64>(rt, 62);
    every_config::<C32>(rt, 63);
    every_config::<C64>(rt, 64);
}

// ---------------------------------------------------------------------------------------
// The target shapes at long k.

#[test]
fn long_k_target_shapes() {
    let Some(rt) = gpu_or_skip("long_k_target_shapes") else { return };
    let mut rng = Rng::new(31);
    let k = (1 << 20) + 3;
    let base = Case {
        ta: Trans::No,
        tb: Trans::No,
        m: 16,
        n: 16,
        k,
        pad: (0, 0, 0),
        off: 0,
        alpha: 2,
        beta: 2,
        dev: false,
        red: Reduction::Deterministic,
    };
    // The anchor DGEMM (N, N) and the Gram shape (T, N), both reductions.
    for (ta, tb) in [(Trans::No, Trans::No), (Trans::Trans, Trans::No)] {
        for red in [Reduction::Deterministic, Reduction::Atomic] {
            run_case::<f64>(rt, &mut rng, Case { ta, tb, red, ..base });
        }
    }
    run_case::<f64>(rt, &mut rng, Case { m: 32, n: 32, ta: Trans::Trans, tb: Trans::No, ..base });
    run_case::<f64>(rt, &mut rng, Case { m: 64, n: 64, k: (1 << 18) + 1, ta: Trans::No, tb: Trans::Trans, ..base });
    run_case::<f64>(rt, &mut rng, Case { m: 2, n: 3, ta: Trans::Trans, tb: Trans::No, pad: (1, 0, 1), ..base });
    run_case::<f32>(rt, &mut rng, Case { m: 32, n: 32, ta: Trans::No, tb: Trans::Trans, ..base });
    run_case::<C64>(rt, &mut rng, Case { k: (1 << 18) + 5, ta: Trans::ConjTrans, tb: Trans::No, ..base });
    run_case::<C32>(rt, &mut rng, Case { m: 4, n: 4, ta: Trans::No, tb: Trans::ConjTrans, off: 1, ..base });
}

// ---------------------------------------------------------------------------------------
// Determinism.

/// Shapes forced with `tune::with_shape` (each kernel keeps its team size and takes the
/// nearest number of teams per block).
const FORCED: [(u32, u32); 3] = [(64, 1), (64, 4), (256, 2)];

fn bits<T: Cpu>(rt: &'static Runtime, ta: Trans, tb: Trans, m: usize, n: usize, k: usize, seed: u64) {
    let mut rng = Rng::new(seed);
    let c = Case {
        ta,
        tb,
        m,
        n,
        k,
        pad: (4, 4, 1), // 16-byte column starts in every precision: the aligned path
        off: 0,
        alpha: 2,
        beta: 2,
        dev: false,
        red: Reduction::Deterministic,
    };
    let o = operands::<T>(&mut rng, &c);
    let what = format!("{}gemm split-k {ta:?},{tb:?} {m}x{n}x{k}", T::PREFIX);
    let first = run_gpu(rt, &c, &o);
    let (want, bound) = reference(&c, &o);
    check(&c, &o, &first, &want, &bound, &what);
    for r in 0..9 {
        assert!(same_bits(&run_gpu(rt, &c, &o), &first), "{what}: run {} changed the bits", r + 2);
    }
    for (tx, ty) in FORCED {
        let r = tune::with_shape(tx, ty, || run_gpu(rt, &c, &o));
        assert!(same_bits(&r, &first), "{what}: shape ({tx}, {ty}) changed the bits");
    }
    assert!(same_bits(&run_gpu(rt, &Case { dev: true, ..c }, &o), &first), "{what}: device scalars changed the bits");
    // The fragment kernels' cross-block reduction shared by fewer reducer blocks: the same
    // order, the same bits.
    for r in [1, 3] {
        let got = splitk::with_reducers(r, || run_gpu(rt, &c, &o));
        assert!(same_bits(&got, &first), "{what}: at most {r} reducer blocks changed the bits");
    }
    // The same data one element off alignment: element-wise copies, same bits.
    let shift = |v: &[T]| -> Vec<T> { std::iter::once(nan()).chain(v.iter().copied()).collect() };
    let o1 = Operands { a: shift(&o.a), b: shift(&o.b), c: o.c.clone(), ..o };
    assert!(
        same_bits(&run_gpu(rt, &Case { off: 1, ..c }, &o1), &first),
        "{what}: the element-wise path changed the bits"
    );
    // The atomic path agrees within the bound.
    let at = run_gpu(rt, &Case { red: Reduction::Atomic, ..c }, &o);
    let (_, bound_at) = reference(&Case { red: Reduction::Atomic, ..c }, &o);
    check(&c, &o, &at, &want, &bound_at, &format!("{what} atomic"));
}

#[test]
fn deterministic_bitwise_over_runs_shapes_and_alignment() {
    let Some(rt) = gpu_or_skip("deterministic_bitwise_over_runs_shapes_and_alignment") else { return };
    // Direct, 16, 32 and 64 tiles, several tiles; each with many chunks and a tail.
    bits::<f64>(rt, Trans::No, Trans::No, 16, 16, (1 << 20) + 3, 41);
    bits::<f64>(rt, Trans::Trans, Trans::No, 3, 4, 100_003, 42);
    bits::<f32>(rt, Trans::No, Trans::Trans, 33, 17, 65537, 43);
    bits::<C64>(rt, Trans::ConjTrans, Trans::No, 64, 64, 65537, 44);
    bits::<C32>(rt, Trans::Trans, Trans::ConjTrans, 100, 20, 30001, 45);
    bits::<f32>(rt, Trans::ConjTrans, Trans::ConjTrans, 2, 2, 1 << 17, 46);
    // Many reducer blocks: 32x32 double (131 chunks, 64 reducers), 16x13 complex double (256
    // chunks, 32), 16x16 single (257 chunks, 16).
    bits::<f64>(rt, Trans::Trans, Trans::No, 32, 32, 100_003, 47);
    bits::<C64>(rt, Trans::No, Trans::ConjTrans, 16, 13, 1 << 18, 48);
    bits::<f32>(rt, Trans::Trans, Trans::No, 16, 16, 262_147, 49);
    // One row of op(A) and one column of op(B), k-contiguous, with an odd leading dimension
    // (k + 4): never used, so 16-byte loads, checked against the element-wise path.
    bits::<f32>(rt, Trans::No, Trans::No, 1, 1, 1_000_003, 50);
    bits::<f64>(rt, Trans::Trans, Trans::No, 1, 1, 1_000_003, 56);
}

/// A NaN with the partial slots' empty pattern as its bits (`runtime::SLOT_EMPTY`, once per
/// 32-bit word) in every part.
fn empty_pattern<T: Scalar>() -> T {
    let w = hyblas::gpu::runtime::SLOT_EMPTY as u64;
    let re: T::Real = if std::mem::size_of::<T::Real>() == 4 {
        unsafe { std::mem::transmute_copy(&f32::from_bits(w as u32)) }
    } else {
        unsafe { std::mem::transmute_copy(&f64::from_bits(w << 32 | w)) }
    };
    T::from_parts(re, re)
}

/// Operands that hold the partial slots' empty pattern (a NaN) in one row of op(A): the call
/// ends (a slot word holding that pattern would keep its reducer waiting, so the kernels write
/// the canonical NaN instead), that row of C is NaN and the others are right, and the next call
/// on the stream, on fresh data, is right too (every slot word was set back to empty).
fn empty_pattern_case<T: Cpu>(rt: &'static Runtime, ta: Trans, tb: Trans, m: usize, n: usize, k: usize, seed: u64) {
    let mut rng = Rng::new(seed);
    let c =
        Case { ta, tb, m, n, k, pad: (4, 4, 1), off: 0, alpha: 2, beta: 2, dev: false, red: Reduction::Deterministic };
    let mut o = operands::<T>(&mut rng, &c);
    // op(A)(row, p) for a row and p in the middle: A(row, p) or A(p, row).
    let (row, p) = (m / 2, k / 2);
    let at = if ta == Trans::No { row + p * o.lda } else { p + row * o.lda };
    let what = format!("{}gemm split-k {ta:?},{tb:?} {m}x{n}x{k} with the empty pattern in A", T::PREFIX);
    o.a[at] = T::zero();
    let (want, bound) = reference(&c, &o);
    o.a[at] = empty_pattern();
    let got = run_gpu(rt, &c, &o);
    for j in 0..n {
        for i in 0..m {
            let (g, w) = (to_c64(got[i + j * o.ldc]), to_c64(want[i + j * o.ldc]));
            if i == row {
                assert!(g.re.is_nan() || g.im.is_nan(), "{what}: C({i}, {j}) = {g}, want NaN");
            } else {
                let err = (g - w).norm();
                assert!(err <= bound[i + j * m], "{what}: C({i}, {j}) = {g}, want {w} (error {err:e})");
            }
        }
    }
    run_case::<T>(rt, &mut rng, c);
}

#[test]
fn empty_slot_pattern_in_operands() {
    let Some(rt) = gpu_or_skip("empty_slot_pattern_in_operands") else { return };
    empty_pattern_case::<f32>(rt, Trans::No, Trans::No, 4, 4, 100_003, 51);
    empty_pattern_case::<f64>(rt, Trans::Trans, Trans::No, 8, 8, 100_003, 52);
    empty_pattern_case::<C32>(rt, Trans::Trans, Trans::No, 16, 16, 262_147, 53);
    empty_pattern_case::<C64>(rt, Trans::No, Trans::ConjTrans, 16, 13, 1 << 18, 54);
    empty_pattern_case::<f64>(rt, Trans::No, Trans::No, 32, 32, 100_003, 55);
}

// ---------------------------------------------------------------------------------------
// Over 2^31 bytes: small integers, so every sum is exact and the result is known exactly.

fn huge_case(rt: &'static Runtime, ta: Trans, tb: Trans, m: usize, n: usize, k: usize, seed: u64) {
    let mut rng = Rng::new(seed);
    let small = |r: &mut Rng| ((r.next_u64() % 3) as i64 - 1) as f32;
    let (ra, ca) = if ta == Trans::No { (m, k) } else { (k, m) };
    let (rb, cb) = if tb == Trans::No { (k, n) } else { (n, k) };
    let a: Vec<f32> = (0..ra * ca).map(|_| small(&mut rng)).collect();
    let b: Vec<f32> = (0..rb * cb).map(|_| small(&mut rng)).collect();
    assert!(a.len() * 4 > 1 << 31, "A must pass 2^31 bytes");
    let opa = |i: usize, p: usize| if ta == Trans::No { a[i + p * ra] } else { a[p + i * ra] };
    let opb = |p: usize, j: usize| if tb == Trans::No { b[p + j * rb] } else { b[j + p * rb] };
    let mut want = vec![0i64; m * n];
    for j in 0..n {
        for i in 0..m {
            want[i + j * m] = (0..k).map(|p| (opa(i, p) * opb(p, j)) as i64).sum();
        }
    }
    let (da, db) = (Dev::new(&a, 0), Dev::new(&b, 0));
    let ex = Exec::own(rt);
    for red in [Reduction::Deterministic, Reduction::Atomic] {
        let c0 = vec![7.0f32; m * n];
        let dc = Dev::new(&c0, 0);
        gemm::<f32>(
            &ex,
            ta,
            tb,
            m as i64,
            n as i64,
            k as i64,
            In::Host(1.0),
            DMat { ptr: da.ptr::<f32>(), ld: ra as i64 },
            DMat { ptr: db.ptr::<f32>(), ld: rb as i64 },
            In::Host(-1.0),
            DMat { ptr: dc.ptr::<f32>(), ld: m as i64 },
            red,
        )
        .unwrap();
        rt.sync(ex.stream).unwrap();
        let got: Vec<f32> = dc.buf.to_vec().unwrap();
        for (q, (&g, &w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(g as f64, w as f64 - 7.0, "huge sgemm {ta:?},{tb:?} {m}x{n}x{k} {red:?}: element {q}");
        }
    }
}

#[test]
fn huge_operands_over_2_pow_31_bytes() {
    let Some(rt) = gpu_or_skip("huge_operands_over_2_pow_31_bytes") else { return };
    // The direct kernel with k-strided operands: element offsets p*ld up to 2^29 (2 GiB).
    huge_case(rt, Trans::No, Trans::Trans, 2, 2, (1 << 28) + 3, 51);
    // A tile kernel with a k-contiguous A of 5 columns of 2^27 + 5 (2.7 GB).
    huge_case(rt, Trans::Trans, Trans::No, 5, 3, (1 << 27) + 5, 52);
}

// ---------------------------------------------------------------------------------------
// Tuning cases, calibration and the model on the device.

#[test]
fn tune_cases_run() {
    let Some(rt) = gpu_or_skip("tune_cases_run") else { return };
    let mut cases = splitk::tune_cases(rt).expect("tune cases");
    let keys: Vec<String> = cases.iter().map(|c| c.key.clone()).collect();
    // The fragment kernels: FFMA for the single precisions, tensor cores for double and complex
    // double (sm_80+; else the shared-memory tile kernels).
    let mma = rt.props.cc.0 >= 8;
    for p in ['s', 'd', 'c', 'z'] {
        let names: &[&str] = match (p, mma) {
            ('s' | 'c', _) => &["gemm_skf2", "gemm_skf4", "gemm_skf8", "gemm_skf16"],
            ('d', true) => &["gemm_skm1", "gemm_skm4", "gemm_skm8", "gemm_skm16", "gemm_skm32"],
            ('z', true) => &["gemm_skm1", "gemm_skm4", "gemm_skm8", "gemm_skm16"],
            _ => &["gemm_sk_direct", "gemm_sk16", "gemm_sk32", "gemm_sk64"],
        };
        for k in names {
            assert!(keys.contains(&format!("{p}{k}")), "missing tuning case {p}{k}: {keys:?}");
        }
    }
    for c in &mut cases {
        let n = tune::candidate_count(&rt.props, c);
        assert!(n > 0, "{}: no runnable candidate shape", c.key);
        let t = (c.run)().unwrap_or_else(|e| panic!("{}: {e}", c.key));
        assert!(t > 0.0 && t < 1.0, "{}: {t} s", c.key);
        println!("{}: {:.1} us ({} candidate shapes)", c.key, t * 1e6, n);
    }
}

#[test]
fn calibration_and_prediction() {
    let Some(rt) = gpu_or_skip("calibration_and_prediction") else { return };
    let p = splitk::predict::<f64>(rt, Trans::No, Trans::No, 16, 16, 1 << 20, true);
    assert!(p.splitk_us.is_finite() && p.vendor_us > 0.0 && !p.why.is_empty(), "{p:?}");
    println!("built-in/stored model: {}", p.why);
    let lines = splitk::calibrate(rt).expect("calibrate");
    for l in &lines {
        println!("{l}");
    }
    let m = splitk::Model::builtin(&rt.props).with_lines(&lines.join("\n"), "tuned");
    assert_eq!(m.source, "tuned", "{lines:?}");
    assert!(m.bw > 1e11 && m.bw < 2e13, "bandwidth {:e}", m.bw);
    let p = splitk::predict_with::<f64>(&m, Trans::No, Trans::No, 16, 16, 1 << 20, true);
    println!("calibrated model: {}", p.why);
}
