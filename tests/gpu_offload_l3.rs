//! Issue 5 (phase 2): host-memory SYMM/HEMM, SYRK/HERK, SYR2K/HER2K, TRMM and TRSM offloaded to
//! the GPU (`hybrid::offload::l3`) through the Fortran (LP64, ILP64) and CBLAS (column- and
//! row-major, LP64 and ILP64) entry points. Every case makes fresh random data, runs the call
//! once with the CPU engine forced and once with the GPU forced (`plan::offload::with_side`),
//! and compares. Outside the referenced part of the output (padding rows, the other triangle of
//! C for the rank-k routines) a poison value must keep its bits; A holds NaN outside its
//! referenced triangle (and on a unit diagonal, and in the imaginary parts of HEMM's diagonal),
//! and beta == 0 puts NaN in C: none of it may reach a result. Small tiles and copy pieces
//! ([`Knobs`]) make small problems span many tiles. Each GPU case checks that the call really
//! ran on the GPU (`plan::offload::last()`); the fallback cases that the CPU finished a failed
//! offload. The generic bodies of the entry points (`abi::fortran::level3::symm::<T, I>` ...,
//! what each exported symbol calls) cover every precision; a few exported symbols are called
//! by name. SKIPPED without a GPU.

mod common;

use common::{gpu_or_skip, Rng};
use hyblas::abi::cblas::{level3 as c3, level3_tri as ct};
use hyblas::abi::fortran::level3::{self as f3, RankKind};
use hyblas::abi::fortran::level3_tri::{self as ft, Routine};
use hyblas::cpu::level3::tri::TriScalar;
use hyblas::gpu::DeviceBuffer;
use hyblas::hybrid::offload::{with_knobs, Knobs};
use hyblas::plan::offload::{self as off, Side as Dev};
use hyblas::types::{FInt, Real, Scalar, C32, C64};
use std::ffi::c_char;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Symm,
    Hemm,
    Syrk,
    Herk,
    Syr2k,
    Her2k,
    Trmm,
    Trsm,
}

impl Kind {
    fn herm(self) -> bool {
        matches!(self, Kind::Hemm | Kind::Herk | Kind::Her2k)
    }
    fn rank(self) -> bool {
        matches!(self, Kind::Syrk | Kind::Herk | Kind::Syr2k | Kind::Her2k)
    }
    fn tri(self) -> bool {
        matches!(self, Kind::Trmm | Kind::Trsm)
    }
    fn two(self) -> bool {
        matches!(self, Kind::Syr2k | Kind::Her2k)
    }
    fn rank_kind(self) -> RankKind {
        if self.herm() {
            RankKind::Herm
        } else {
            RankKind::Sym
        }
    }
    fn routine(self) -> Routine {
        if self == Kind::Trsm {
            Routine::Trsm
        } else {
            Routine::Trmm
        }
    }
}

/// A variant: the Fortran option characters of the column-major problem.
#[derive(Clone, Copy)]
struct V {
    kind: Kind,
    side: u8,
    uplo: u8,
    trans: u8,
    diag: u8,
}

impl std::fmt::Debug for V {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let o = [self.side, self.uplo, self.trans, self.diag].map(|c| c as char);
        write!(f, "{:?} {}{}{}{}", self.kind, o[0], o[1], o[2], o[3])
    }
}

/// Every variant of `kind` in precision `T`.
fn variants<T: Scalar>(kind: Kind) -> Vec<V> {
    let transes: &[u8] = match kind {
        Kind::Symm | Kind::Hemm => b"N",
        Kind::Herk | Kind::Her2k => b"NC",
        // Real SYRK/SYR2K take C as T (it is tested too); complex ones only N and T.
        Kind::Syrk | Kind::Syr2k if T::IS_COMPLEX => b"NT",
        Kind::Syrk | Kind::Syr2k => b"NTC",
        _ => b"NTC",
    };
    let sides: &[u8] = if kind.rank() { b"L" } else { b"LR" };
    let diags: &[u8] = if kind.tri() { b"NU" } else { b"N" };
    let mut out = Vec::new();
    for &side in sides {
        for &uplo in b"LU" {
            for &trans in transes {
                for &diag in diags {
                    out.push(V { kind, side, uplo, trans, diag });
                }
            }
        }
    }
    out
}

fn kinds<T: Scalar>() -> Vec<Kind> {
    let mut k = vec![Kind::Symm, Kind::Syrk, Kind::Syr2k, Kind::Trmm, Kind::Trsm];
    if T::IS_COMPLEX {
        k.extend([Kind::Hemm, Kind::Herk, Kind::Her2k]);
    }
    k
}

/// Which entry point a call goes through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Entry {
    Fortran,
    Fortran64,
    Cblas { row: bool, ilp64: bool },
}

const ENTRIES: [Entry; 5] = [
    Entry::Fortran,
    Entry::Fortran64,
    Entry::Cblas { row: false, ilp64: false },
    Entry::Cblas { row: true, ilp64: false },
    Entry::Cblas { row: true, ilp64: true },
];

fn nan<T: Scalar>() -> T {
    T::from_f64(f64::NAN)
}

fn poison<T: Scalar>() -> T {
    common::poison()
}

/// One call on host memory (the column-major problem; row-major CBLAS calls are mapped onto
/// it). The output is `c`: C, or B for TRMM/TRSM.
struct Case<T> {
    v: V,
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

impl<T: TriScalar> Case<T> {
    /// A case with `pad` extra rows on every operand. For the rank-k routines m is n.
    #[allow(clippy::too_many_arguments)]
    fn new(rng: &mut Rng, v: V, m: usize, n: usize, k: usize, alpha: T, beta: T, pad: usize) -> Self {
        let (kind, left) = (v.kind, v.side == b'L');
        let m = if kind.rank() { n } else { m };
        let k = if kind.rank() { k } else { 0 };
        let na = if left { m } else { n };
        let (ar, ac) = match (kind.rank(), v.trans) {
            (true, b'N') => (n, k),
            (true, _) => (k, n),
            _ => (na, na),
        };
        let lda = ar.max(1) + pad;
        let mut a: Vec<T> = rng.vec(lda * ac.max(1));
        if !kind.rank() {
            let inv = <T::Real as Scalar>::from_f64(1.0 / na.max(1) as f64);
            for j in 0..na {
                for i in 0..lda {
                    let inside = i < na && if v.uplo == b'L' { i >= j } else { i <= j };
                    let x = &mut a[i + j * lda];
                    if !inside {
                        *x = nan();
                    } else if kind.tri() && i == j {
                        // Well conditioned: a diagonal of 1..2 and small off-diagonal entries.
                        *x = if v.diag == b'U' { nan() } else { T::from_f64(1.5 + 0.5 * rng.unit()) };
                    } else if kind.tri() {
                        *x = x.mul_real(inv);
                    } else if kind.herm() && i == j {
                        *x = T::from_parts(x.re(), <T::Real as Scalar>::from_f64(f64::NAN));
                    }
                }
            }
        }
        let (br, bc) = if kind.two() { (ar, ac) } else { (m, n) };
        let ldb = br.max(1) + pad;
        let b: Vec<T> = if kind.tri() { Vec::new() } else { rng.vec(ldb * bc.max(1)) };
        let ldc = m.max(1) + pad;
        let mut c: Vec<T> = rng.vec(ldc * n.max(1));
        let mut case = Case { v, m, n, k, alpha, beta, a, lda, b, ldb, c: Vec::new(), ldc };
        for j in 0..n {
            for i in 0..ldc {
                if !case.refd(i, j) {
                    c[i + j * ldc] = poison();
                } else if beta.is_zero() && !kind.tri() {
                    // beta == 0 must not read C.
                    c[i + j * ldc] = nan();
                }
            }
        }
        case.c = c;
        case
    }

    /// Random alpha and beta (real where the routine takes real ones: HERK's both, HER2K's
    /// beta).
    fn random(rng: &mut Rng, v: V, (m, n, k): (usize, usize, usize), pad: usize) -> Self {
        let real = |x: T| T::from_real(x.re());
        let (mut alpha, mut beta) = (rng.scalar::<T>(), rng.scalar::<T>());
        if v.kind == Kind::Herk {
            alpha = real(alpha);
        }
        if v.kind.herm() && v.kind.rank() {
            beta = real(beta);
        }
        Case::new(rng, v, m, n, k, alpha, beta, pad)
    }

    /// Is (i, j) of the output referenced?
    fn refd(&self, i: usize, j: usize) -> bool {
        i < self.m && (!self.v.kind.rank() || if self.v.uplo == b'L' { i >= j } else { i <= j })
    }

    /// The output after the call through `entry` with `side` forced.
    fn run(&self, side: Dev, entry: Entry) -> Vec<T> {
        let mut out = self.c.clone();
        off::clear_last();
        off::with_side(Some(side), || unsafe {
            match entry {
                Entry::Fortran => self.fortran::<i32>(out.as_mut_ptr()),
                Entry::Fortran64 => self.fortran::<i64>(out.as_mut_ptr()),
                Entry::Cblas { row, ilp64: false } => self.cblas::<i32>(row, out.as_mut_ptr()),
                Entry::Cblas { row, ilp64: true } => self.cblas::<i64>(row, out.as_mut_ptr()),
            }
        });
        out
    }

    unsafe fn fortran<I: FInt>(&self, c: *mut T) {
        let v = self.v;
        let i = |x: usize| I::from_isize(x as isize);
        let ch = |x: u8| x as c_char;
        let (a, b) = (self.a.as_ptr(), self.b.as_ptr());
        let (m, n, k, lda, ldb, ldc) = (i(self.m), i(self.n), i(self.k), i(self.lda), i(self.ldb), i(self.ldc));
        let (al, be) = (&self.alpha, &self.beta);
        let (s, u, t, d) = (ch(v.side), ch(v.uplo), ch(v.trans), ch(v.diag));
        match v.kind {
            Kind::Symm | Kind::Hemm => {
                f3::symm::<T, I>(v.kind.herm(), &s, &u, &m, &n, al, a, &lda, b, &ldb, be, c, &ldc)
            }
            Kind::Syrk | Kind::Herk => {
                f3::syrk::<T, T, I>(v.kind.rank_kind(), &u, &t, &n, &k, al, a, &lda, be, c, &ldc)
            }
            Kind::Syr2k | Kind::Her2k => {
                f3::syr2k::<T, T, I>(v.kind.rank_kind(), &u, &t, &n, &k, al, a, &lda, b, &ldb, be, c, &ldc)
            }
            Kind::Trmm | Kind::Trsm => ft::trxm::<T, I>(v.kind.routine(), &s, &u, &t, &d, &m, &n, al, a, &lda, c, &ldc),
        }
    }

    /// CBLAS: column-major as is; row-major as the call the CBLAS layer maps onto this
    /// column-major problem (side and uplo flipped, m and n swapped, the rank-k routines' trans
    /// flipped).
    unsafe fn cblas<I: FInt>(&self, row: bool, c: *mut T) {
        let v = self.v;
        let i = |x: usize| I::from_isize(x as isize);
        let (a, b) = (self.a.as_ptr(), self.b.as_ptr());
        let flip = |x: u8, p: u8, q: u8| if x == p { q } else { p };
        let (side, uplo, m, n) = if row {
            (flip(v.side, b'L', b'R'), flip(v.uplo, b'L', b'U'), self.n, self.m)
        } else {
            (v.side, v.uplo, self.m, self.n)
        };
        let trans = match (row && v.kind.rank(), v.trans) {
            (true, b'N') if v.kind.herm() => b'C',
            (true, b'N') => b'T',
            (true, _) => b'N',
            (false, t) => t,
        };
        let lay = if row { 101 } else { 102 };
        let sd = if side == b'L' { 141 } else { 142 };
        let ul = if uplo == b'U' { 121 } else { 122 };
        let tr = match trans {
            b'N' => 111,
            b'T' => 112,
            _ => 113,
        };
        let dg = if v.diag == b'U' { 132 } else { 131 };
        let (k, lda, ldb, ldc) = (i(self.k), i(self.lda), i(self.ldb), i(self.ldc));
        let (al, be) = (self.alpha, self.beta);
        match v.kind {
            Kind::Symm | Kind::Hemm => {
                c3::symm::<T, I>(v.kind.herm(), lay, sd, ul, i(m), i(n), al, a, lda, b, ldb, be, c, ldc)
            }
            Kind::Syrk | Kind::Herk => {
                c3::syrk::<T, I>(v.kind.rank_kind(), lay, ul, tr, i(n), k, al, a, lda, be, c, ldc)
            }
            Kind::Syr2k | Kind::Her2k => {
                c3::syr2k::<T, I>(v.kind.rank_kind(), lay, ul, tr, i(n), k, al, a, lda, b, ldb, be, c, ldc)
            }
            Kind::Trmm | Kind::Trsm => {
                ct::trxm::<T, I>(v.kind.routine(), lay, sd, ul, tr, dg, i(m), i(n), &al, a, lda, c, ldc)
            }
        }
    }

    fn label(&self) -> String {
        format!(
            "{}{:?} m={} n={} k={} lda={} ldb={} ldc={} alpha={:?} beta={:?}",
            T::PREFIX,
            self.v,
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

    /// The referenced output within tolerance of the CPU engine's; everything else bit for bit
    /// what it was.
    fn check(&self, got: &[T], want: &[T], what: &str) {
        let scale = want.iter().map(|w| Real::to_f64(w.abs1())).filter(|v| v.is_finite()).fold(1.0, f64::max);
        let na = if self.v.side == b'L' { self.m } else { self.n };
        let tol = common::tol::<T>(self.k.max(na)) * scale * 4.0;
        let bits = |x: &T| {
            let p = x as *const T as *const u8;
            unsafe { std::slice::from_raw_parts(p, std::mem::size_of::<T>()) }.to_vec()
        };
        for j in 0..self.n {
            for i in 0..self.ldc {
                let idx = i + j * self.ldc;
                let (g, w) = (got[idx], want[idx]);
                if !self.refd(i, j) {
                    assert!(bits(&g) == bits(&self.c[idx]), "{what}: ({i},{j}) outside the output was written: {g:?}");
                    continue;
                }
                let e = Real::to_f64((g - w).abs1());
                assert!(e <= tol, "{what}: ({i},{j}) got {g:?} want {w:?} (tol {tol:e})");
            }
        }
    }
}

/// GPU against CPU through `entry` under `knobs`; the GPU run must have stayed on the GPU.
fn compare<T: TriScalar>(case: &Case<T>, knobs: Knobs, entry: Entry) {
    let what = format!("{} {entry:?} {knobs:?}", case.label());
    let want = case.run(Dev::Cpu, entry);
    // Forced onto the CPU: nothing recorded, or (past the flop threshold, the runtime up) a
    // call the planner priced and timed on the CPU.
    let cpu_only = off::last().is_none_or(|o| (o.planned, o.ran) == (Dev::Cpu, Dev::Cpu));
    assert!(cpu_only, "{what}: the CPU run went through the offload path: {:?}", off::last());
    let got = with_knobs(knobs, || case.run(Dev::Gpu, entry));
    let o = off::last().unwrap_or_else(|| panic!("{what}: no offload outcome recorded"));
    assert_eq!((o.planned, o.ran), (Dev::Gpu, Dev::Gpu), "{what}: {o:?}");
    assert!(o.fallback.is_none(), "{what}: fell back: {o:?}");
    case.check(&got, &want, &what);
}

const SMALL: Knobs = Knobs {
    tile: Some((64, 48)),
    piece_bytes: Some(16384),
    pieces: None,
    device_budget: None,
    fail_after: None,
    fail_gemm_after: None,
};

fn sweep<T: TriScalar>(seed: u64) {
    let mut rng = Rng::new(seed);
    for kind in kinds::<T>() {
        for v in variants::<T>(kind) {
            // Several tiles each way, sizes that are not multiples of them, padded operands.
            compare(&Case::<T>::random(&mut rng, v, (150, 131, 70), 3), SMALL, Entry::Fortran);
        }
    }
}

#[test]
fn every_routine_precision_and_variant() {
    let Some(_rt) = gpu_or_skip("every_routine_precision_and_variant") else { return };
    sweep::<f32>(1);
    sweep::<f64>(2);
    sweep::<C32>(3);
    sweep::<C64>(4);
}

#[test]
fn special_alpha_and_beta() {
    let Some(_rt) = gpu_or_skip("special_alpha_and_beta") else { return };
    let mut rng = Rng::new(21);
    fn each<T: TriScalar>(rng: &mut Rng) {
        for kind in kinds::<T>() {
            let vs = variants::<T>(kind);
            for v in [vs[0], vs[vs.len() - 1]] {
                for (al, be) in [(0.0, 0.0), (0.0, 0.5), (1.0, 0.0), (-0.5, 0.0), (1.0, 1.0)] {
                    if al == 0.0 && be == 1.0 {
                        continue; // a quick return
                    }
                    let c = Case::<T>::new(rng, v, 97, 83, 45, T::from_f64(al), T::from_f64(be), 2);
                    compare(&c, SMALL, Entry::Fortran);
                }
            }
        }
    }
    each::<f64>(&mut rng);
    each::<C64>(&mut rng);
    // One tile and one element.
    for kind in kinds::<f64>() {
        let v = variants::<f64>(kind)[1];
        compare(&Case::<f64>::random(&mut rng, v, (33, 17, 21), 1), Knobs::default(), Entry::Fortran);
        compare(&Case::<f64>::random(&mut rng, v, (1, 1, 1), 0), Knobs::default(), Entry::Fortran);
    }
}

#[test]
fn every_entry_point() {
    let Some(_rt) = gpu_or_skip("every_entry_point") else { return };
    let mut rng = Rng::new(31);
    fn each<T: TriScalar>(rng: &mut Rng) {
        for kind in kinds::<T>() {
            let vs = variants::<T>(kind);
            for entry in ENTRIES {
                // A different variant per entry point, all of them over the five.
                for (x, &v) in vs.iter().enumerate() {
                    if x % ENTRIES.len() == ENTRIES.iter().position(|&e| e == entry).unwrap() {
                        compare(&Case::<T>::random(rng, v, (120, 101, 50), 2), SMALL, entry);
                    }
                }
            }
        }
    }
    each::<f64>(&mut rng);
    each::<C32>(&mut rng);
    each::<f32>(&mut rng);
    each::<C64>(&mut rng);
}

extern "C" {
    fn dsyrk_(
        uplo: *const c_char,
        trans: *const c_char,
        n: *const i32,
        k: *const i32,
        alpha: *const f64,
        a: *const f64,
        lda: *const i32,
        beta: *const f64,
        c: *mut f64,
        ldc: *const i32,
    );
    fn zherk_64_(
        uplo: *const c_char,
        trans: *const c_char,
        n: *const i64,
        k: *const i64,
        alpha: *const f64,
        a: *const C64,
        lda: *const i64,
        beta: *const f64,
        c: *mut C64,
        ldc: *const i64,
    );
    fn dtrsm_(
        side: *const c_char,
        uplo: *const c_char,
        trans: *const c_char,
        diag: *const c_char,
        m: *const i32,
        n: *const i32,
        alpha: *const f64,
        a: *const f64,
        lda: *const i32,
        b: *mut f64,
        ldb: *const i32,
    );
    fn cblas_ztrmm(
        layout: i32,
        side: i32,
        uplo: i32,
        trans: i32,
        diag: i32,
        m: i32,
        n: i32,
        alpha: *const C64,
        a: *const C64,
        lda: i32,
        b: *mut C64,
        ldb: i32,
    );
    fn cblas_ssymm64_(
        layout: i32,
        side: i32,
        uplo: i32,
        m: i64,
        n: i64,
        alpha: f32,
        a: *const f32,
        lda: i64,
        b: *const f32,
        ldb: i64,
        beta: f32,
        c: *mut f32,
        ldc: i64,
    );
    fn cblas_cher2k(
        layout: i32,
        uplo: i32,
        trans: i32,
        n: i32,
        k: i32,
        alpha: *const C32,
        a: *const C32,
        lda: i32,
        b: *const C32,
        ldb: i32,
        beta: f32,
        c: *mut C32,
        ldc: i32,
    );
}

/// The exported symbols by name (the real ABI: HERK's real scalars, CBLAS scalars by value or
/// by address), each on the problem of a case of the same routine.
#[test]
fn exported_symbols() {
    let Some(_rt) = gpu_or_skip("exported_symbols") else { return };
    let mut rng = Rng::new(41);
    let ch = |x: u8| x as c_char;
    // Run `f` on a copy of the case's output with `side` forced; GPU runs must stay there.
    fn both<T: TriScalar>(c: &Case<T>, name: &str, f: &dyn Fn(*mut T)) {
        let mut want = c.c.clone();
        off::with_side(Some(Dev::Cpu), || f(want.as_mut_ptr()));
        let mut got = c.c.clone();
        off::clear_last();
        with_knobs(SMALL, || off::with_side(Some(Dev::Gpu), || f(got.as_mut_ptr())));
        let o = off::last().unwrap_or_else(|| panic!("{name}: no offload outcome"));
        assert_eq!((o.ran, o.fallback.is_none()), (Dev::Gpu, true), "{name}: {o:?}");
        c.check(&got, &want, name);
    }
    let v = V { kind: Kind::Syrk, side: b'L', uplo: b'U', trans: b'T', diag: b'N' };
    let c = Case::<f64>::random(&mut rng, v, (0, 140, 60), 2);
    let (n, k, lda, ldc) = (c.n as i32, c.k as i32, c.lda as i32, c.ldc as i32);
    both(&c, "dsyrk_", &|out| unsafe {
        dsyrk_(&ch(b'U'), &ch(b'T'), &n, &k, &c.alpha, c.a.as_ptr(), &lda, &c.beta, out, &ldc)
    });
    let v = V { kind: Kind::Herk, side: b'L', uplo: b'L', trans: b'C', diag: b'N' };
    let c = Case::<C64>::random(&mut rng, v, (0, 130, 55), 1);
    let (n, k, lda, ldc) = (c.n as i64, c.k as i64, c.lda as i64, c.ldc as i64);
    let (al, be) = (c.alpha.re, c.beta.re);
    both(&c, "zherk_64_", &|out| unsafe {
        zherk_64_(&ch(b'L'), &ch(b'C'), &n, &k, &al, c.a.as_ptr(), &lda, &be, out, &ldc)
    });
    let v = V { kind: Kind::Trsm, side: b'R', uplo: b'L', trans: b'T', diag: b'U' };
    let c = Case::<f64>::random(&mut rng, v, (125, 110, 0), 3);
    let (m, n, lda, ldb) = (c.m as i32, c.n as i32, c.lda as i32, c.ldc as i32);
    both(&c, "dtrsm_", &|out| unsafe {
        dtrsm_(&ch(b'R'), &ch(b'L'), &ch(b'T'), &ch(b'U'), &m, &n, &c.alpha, c.a.as_ptr(), &lda, out, &ldb)
    });
    // Row-major CBLAS: the column-major problem of the case, mapped back (see Case::cblas).
    let v = V { kind: Kind::Trmm, side: b'L', uplo: b'U', trans: b'C', diag: b'N' };
    let c = Case::<C64>::random(&mut rng, v, (90, 140, 0), 2);
    let (m, n, lda, ldb) = (c.m as i32, c.n as i32, c.lda as i32, c.ldc as i32);
    both(&c, "cblas_ztrmm (row-major)", &|out| unsafe {
        cblas_ztrmm(101, 142, 122, 113, 131, n, m, &c.alpha, c.a.as_ptr(), lda, out, ldb)
    });
    let v = V { kind: Kind::Symm, side: b'R', uplo: b'L', trans: b'N', diag: b'N' };
    let c = Case::<f32>::random(&mut rng, v, (111, 99, 0), 2);
    let (m, n, lda, ldb, ldc) = (c.m as i64, c.n as i64, c.lda as i64, c.ldb as i64, c.ldc as i64);
    both(&c, "cblas_ssymm64_ (row-major)", &|out| unsafe {
        cblas_ssymm64_(101, 141, 121, n, m, c.alpha, c.a.as_ptr(), lda, c.b.as_ptr(), ldb, c.beta, out, ldc)
    });
    let v = V { kind: Kind::Her2k, side: b'L', uplo: b'U', trans: b'N', diag: b'N' };
    let c = Case::<C32>::random(&mut rng, v, (0, 105, 40), 1);
    let (n, k, lda, ldb, ldc) = (c.n as i32, c.k as i32, c.lda as i32, c.ldb as i32, c.ldc as i32);
    both(&c, "cblas_cher2k", &|out| unsafe {
        cblas_cher2k(102, 121, 111, n, k, &c.alpha, c.a.as_ptr(), lda, c.b.as_ptr(), ldb, c.beta.re, out, ldc)
    });
}

#[test]
fn default_tiles_at_a_middle_size() {
    let Some(_rt) = gpu_or_skip("default_tiles_at_a_middle_size") else { return };
    let mut rng = Rng::new(51);
    // 2500: default tiles of 512 (5 x 5), default pieces.
    let v = V { kind: Kind::Syrk, side: b'L', uplo: b'L', trans: b'N', diag: b'N' };
    compare(&Case::<f64>::random(&mut rng, v, (0, 2500, 600), 3), Knobs::default(), Entry::Fortran);
    let v = V { kind: Kind::Trsm, side: b'L', uplo: b'L', trans: b'N', diag: b'N' };
    compare(&Case::<f64>::random(&mut rng, v, (2500, 1300, 0), 0), Knobs::default(), Entry::Fortran);
    let v = V { kind: Kind::Trsm, side: b'R', uplo: b'U', trans: b'N', diag: b'N' };
    compare(&Case::<f64>::random(&mut rng, v, (1200, 2100, 0), 1), Knobs::default(), Entry::Fortran);
    let v = V { kind: Kind::Hemm, side: b'R', uplo: b'U', trans: b'N', diag: b'N' };
    compare(&Case::<C64>::random(&mut rng, v, (1100, 1400, 0), 2), Knobs::default(), Entry::Fortran);
    let v = V { kind: Kind::Trmm, side: b'R', uplo: b'L', trans: b'T', diag: b'U' };
    compare(&Case::<f32>::random(&mut rng, v, (1700, 1500, 0), 0), Knobs::default(), Entry::Fortran);
}

#[test]
fn failures_fall_back_to_the_cpu() {
    let Some(_rt) = gpu_or_skip("failures_fall_back_to_the_cpu") else { return };
    let mut rng = Rng::new(61);
    // Run a case with the GPU forced under `knobs`; the CPU must have finished it.
    fn fallback<T: TriScalar>(c: &Case<T>, knobs: Knobs) {
        let what = format!("{} {knobs:?}", c.label());
        let want = c.run(Dev::Cpu, Entry::Fortran);
        let got = with_knobs(knobs, || c.run(Dev::Gpu, Entry::Fortran));
        let o = off::last().unwrap_or_else(|| panic!("{what}: no outcome"));
        assert_eq!((o.planned, o.ran), (Dev::Gpu, Dev::Cpu), "{what}: {o:?}");
        assert!(o.fallback.is_some(), "{what}: {o:?}");
        c.check(&got, &want, &what);
    }
    let tri = |kind, side, uplo, trans| V { kind, side, uplo, trans, diag: b'N' };
    let mut vs = vec![
        V { kind: Kind::Syrk, side: b'L', uplo: b'L', trans: b'N', diag: b'N' },
        V { kind: Kind::Syr2k, side: b'L', uplo: b'U', trans: b'T', diag: b'N' },
        V { kind: Kind::Symm, side: b'R', uplo: b'U', trans: b'N', diag: b'N' },
    ];
    // Both processing orders on both sides.
    for kind in [Kind::Trsm, Kind::Trmm] {
        for (side, uplo, trans) in [(b'L', b'L', b'N'), (b'L', b'L', b'T'), (b'R', b'U', b'N'), (b'R', b'U', b'C')] {
            vs.push(tri(kind, side, uplo, trans));
        }
    }
    for &v in &vs {
        // Nothing fits the device: nothing written, the CPU computes it all.
        let c = Case::<f64>::random(&mut rng, v, (140, 120, 60), 2);
        fallback(&c, Knobs { device_budget: Some(1024), ..SMALL });
        // A failure after some pieces of the output went back (beta != 0 and TRMM/TRSM: a
        // piece updated twice would show): the CPU finishes exactly the rest.
        for fail in [0usize, 1, 4, 11] {
            let knobs = Knobs { tile: Some((48, 40)), piece_bytes: Some(2048), fail_after: Some(fail), ..SMALL };
            fallback(&Case::<f64>::random(&mut rng, v, (140, 120, 60), 2), knobs);
        }
    }
    let v = V { kind: Kind::Herk, side: b'L', uplo: b'U', trans: b'N', diag: b'N' };
    for fail in [0usize, 3] {
        let knobs = Knobs { tile: Some((48, 48)), piece_bytes: Some(4096), fail_after: Some(fail), ..SMALL };
        fallback(&Case::<C64>::random(&mut rng, v, (0, 130, 50), 1), knobs);
    }
}

/// Operands in device memory are used in place: A on the device (B/C on the host), and the
/// output on the device (computed in place, nothing copied back). The GPU is forced: small calls
/// stay on the CPU's fast path without looking at the pointers, as GEMM's do.
#[test]
fn device_operands_in_place() {
    let Some(_rt) = gpu_or_skip("device_operands_in_place") else { return };
    let mut rng = Rng::new(71);
    let ch = |x: u8| x as c_char;
    for (side, uplo, trans) in [(b'L', b'U', b'N'), (b'R', b'L', b'T')] {
        let v = V { kind: Kind::Trsm, side, uplo, trans, diag: b'N' };
        let c = Case::<f64>::random(&mut rng, v, (150, 130, 0), 2);
        let want = c.run(Dev::Cpu, Entry::Fortran);
        let da = DeviceBuffer::from_slice(&c.a).expect("device A");
        let mut got = c.c.clone();
        let (m, n, lda, ldb) = (c.m as i32, c.n as i32, c.lda as i32, c.ldc as i32);
        off::clear_last();
        with_knobs(SMALL, || {
            off::with_side(Some(Dev::Gpu), || unsafe {
                let a = da.ptr as *const f64;
                let o = [side, uplo, trans, b'N'].map(ch);
                ft::trxm::<f64, i32>(
                    Routine::Trsm,
                    &o[0],
                    &o[1],
                    &o[2],
                    &o[3],
                    &m,
                    &n,
                    &c.alpha,
                    a,
                    &lda,
                    got.as_mut_ptr(),
                    &ldb,
                )
            })
        });
        let o = off::last().expect("outcome");
        let stats = o.stats.clone().expect("stats");
        assert_eq!((o.ran, stats.in_place), (Dev::Gpu, [true, false, false]), "{o:?}");
        c.check(&got, &want, "dtrsm with A on the device");
        // B on the device too: computed in place.
        let db = DeviceBuffer::from_slice(&c.c).expect("device B");
        off::clear_last();
        with_knobs(SMALL, || {
            off::with_side(Some(Dev::Gpu), || unsafe {
                let (a, b) = (da.ptr as *const f64, db.ptr as *mut f64);
                let o = [side, uplo, trans, b'N'].map(ch);
                ft::trxm::<f64, i32>(Routine::Trsm, &o[0], &o[1], &o[2], &o[3], &m, &n, &c.alpha, a, &lda, b, &ldb)
            })
        });
        let o = off::last().expect("outcome");
        assert_eq!(o.stats.as_ref().map(|s| s.in_place), Some([true, false, true]), "{o:?}");
        c.check(&db.to_vec::<f64>().expect("read B"), &want, "dtrsm with A and B on the device");
    }
    // SYRK with C on the device (beta != 0 and beta == 0; alpha == 0 too: the diagonal tiles
    // must scale their triangle only, C being computed in place), A on the host.
    for (uplo, alpha, beta) in [(b'L', -0.75, 0.5), (b'L', -0.75, 0.0), (b'L', 0.0, 0.5), (b'U', 0.0, 0.0)] {
        let v = V { kind: Kind::Syrk, side: b'L', uplo, trans: b'T', diag: b'N' };
        let c = Case::<f64>::new(&mut rng, v, 0, 140, 70, alpha, beta, 2);
        let want = c.run(Dev::Cpu, Entry::Fortran);
        let dc = DeviceBuffer::from_slice(&c.c).expect("device C");
        let (n, k, lda, ldc) = (c.n as i32, c.k as i32, c.lda as i32, c.ldc as i32);
        off::clear_last();
        with_knobs(SMALL, || {
            off::with_side(Some(Dev::Gpu), || unsafe {
                let (a, cc) = (c.a.as_ptr(), dc.ptr as *mut f64);
                f3::syrk::<f64, f64, i32>(
                    RankKind::Sym,
                    &ch(uplo),
                    &ch(b'T'),
                    &n,
                    &k,
                    &c.alpha,
                    a,
                    &lda,
                    &c.beta,
                    cc,
                    &ldc,
                )
            })
        });
        let o = off::last().expect("outcome");
        assert_eq!(o.stats.as_ref().map(|s| s.in_place), Some([false, false, true]), "{o:?}");
        c.check(
            &dc.to_vec::<f64>().expect("read C"),
            &want,
            &format!("dsyrk {} with C on the device, alpha {alpha} beta {beta}", uplo as char),
        );
    }
}

#[test]
fn the_planner_decides_by_size() {
    let Some(rt) = gpu_or_skip("the_planner_decides_by_size") else { return };
    if std::env::var("HYBLAS_DEVICE").is_ok() {
        return;
    }
    let mut rng = Rng::new(81);
    let run_auto = |c: &Case<f64>| {
        let mut out = c.c.clone();
        off::clear_last();
        off::with_side(None, || unsafe { c.fortran::<i32>(out.as_mut_ptr()) });
        off::last()
    };
    // Small: the CPU on the fast path (no outcome recorded).
    for kind in [Kind::Syrk, Kind::Trsm, Kind::Symm] {
        let v = variants::<f64>(kind)[0];
        let c = Case::<f64>::random(&mut rng, v, (96, 96, 96), 0);
        assert!(run_auto(&c).is_none(), "{:?} 96: asked the model", v);
    }
    // Large on a Hopper-class GPU: DSYRK and DTRSM at n = 4096 go to the GPU.
    if rt.props.cc.0 >= 9 {
        for kind in [Kind::Syrk, Kind::Trsm] {
            let v = variants::<f64>(kind)[0];
            let c = Case::<f64>::random(&mut rng, v, (4096, 4096, 4096), 0);
            let o = run_auto(&c).expect("a 4096 call must consult the model");
            assert_eq!((o.planned, o.ran), (Dev::Gpu, Dev::Gpu), "{v:?}: {o:?}");
        }
    }
}

#[test]
fn concurrent_host_threads() {
    let Some(_rt) = gpu_or_skip("concurrent_host_threads") else { return };
    std::thread::scope(|s| {
        for t in 0..4u64 {
            s.spawn(move || {
                let mut rng = Rng::new(90 + t);
                for _ in 0..2 {
                    let v = V { kind: Kind::Syrk, side: b'L', uplo: b'U', trans: b'N', diag: b'N' };
                    compare(&Case::<f64>::random(&mut rng, v, (0, 230, 90), 1), SMALL, Entry::Fortran);
                    let v = V { kind: Kind::Trsm, side: b'R', uplo: b'L', trans: b'C', diag: b'U' };
                    compare(&Case::<C64>::random(&mut rng, v, (170, 150, 0), 2), SMALL, Entry::Fortran);
                    let v = V { kind: Kind::Hemm, side: b'L', uplo: b'L', trans: b'N', diag: b'N' };
                    compare(&Case::<C32>::random(&mut rng, v, (140, 160, 0), 1), SMALL, Entry::Fortran);
                }
            });
        }
    });
}
