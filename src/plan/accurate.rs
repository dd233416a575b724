//! Accurate DGEMM by the Ozaki scheme (issue 49): C := alpha*op(A)*op(B) + beta*C
//! with every element faithfully rounded (within one ulp of the exact value: one of the two
//! doubles around it) or, with [`Rounding::Nearest`], correctly rounded, whatever the
//! cancellation in the sums. Each element's guarantee is checked, never assumed: an element
//! the fast path cannot certify is computed exactly.
//!
//! 1. op(A)'s rows and op(B)'s columns are cut into ladders of integer slices
//!    (`cpu::ozaki::ladder`): slice s of a vector sits s * (bits + 1) bits below its top, so the
//!    products A_s B_t of one level s + t share a scale.
//! 2. Level by level (l = 0, 1, ...), the products with s + t = l are computed exactly in FP64
//!    (bits chosen so that a level's sum stays below 2^53) and added into a fixed-point integer
//!    per element (`i128`).
//! 3. After each level the planner estimates, on a sample of the elements, how many of them
//!    certification would refuse if the rest started at each later level (from the estimate so
//!    far and the slices' norms), and stops at the level L where the predicted cost (the GEMMs
//!    still to run, plus the expected refusals times the cost of computing one exactly) is least.
//! 4. The rest of the product, sum_{s<=L} A_s R^B_{L-s} + R^A_L B (R the remainders), runs as
//!    ordinary FP64 GEMMs: it is 2^-(L+1)(bits+1) smaller than A*B, so its rounding error
//!    (at most gamma_N times its absolute terms, bounded by the slices' norms) is tiny.
//! 5. Per element, `cpu::ozaki::certify` rounds alpha*(levels + rest) + beta*c and proves the
//!    result faithful (or nearest) from the bounds, or refuses; a refused element is computed
//!    exactly (a big-integer dot product, `cpu::ozaki::Exact`) and rounded once.
//!
//! The products of a level (and the rest's) run joined (one GEMM over the stacked slices; the
//! measured choice), or as one batched GEMM (`plan::batch`, separate outputs summed after) or
//! looped (a GEMM per product) where `HYBLAS_OZAKI_FORM` says; slices that are mostly zeros run
//! as sparse products (`cpu::sparse`, `HYBLAS_OZAKI_SPARSE_DENSITY`; A's, or B's where the
//! partner slice of A is dense).
//!
//! On device memory ([`device_dgemm`]) the GPU runs another form of the scheme (`gpu::ozaki`:
//! integers of `beta` bits per entry, their product exact modulo small moduli by int8 GEMMs, the
//! Chinese remainder theorem, the same certificate); this module picks beta (`choose_bits`)
//! and computes the refused elements on the host with the CPU path's exact code (`element`).
//!
//! Rows of op(A) and columns of op(B) holding an Inf or NaN, and elements of C that are Inf or NaN
//! where beta != 0, take IEEE arithmetic: their elements are the plain dot product in order (what
//! the reference DGEMM computes), so Inf and NaN come out where a DGEMM puts them. A non-finite
//! alpha or beta runs the whole call as plain DGEMM.

use crate::config;
use crate::cpu::level3::packed::SendPtr;
use crate::cpu::ozaki::{
    certify_sum, gamma, ladder, scale, slice_bits, ulp_min, Exact, Ladder, Layout, Stack, Term, Work, U,
};
use crate::cpu::sparse::Csr;
use crate::cpu::threads;
use crate::trace;
use crate::types::{MatMut, MatRef, Trans};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// The guarantee asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rounding {
    /// Every element one of the two doubles around the exact value.
    Faithful,
    /// Every element the double nearest to the exact value (ties to even).
    Nearest,
}

/// `HYBLAS_DGEMM_MODE`: how `dgemm_` / `cblas_dgemm` compute.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Plain FP64 DGEMM (the default).
    Native,
    /// The Ozaki scheme: `Accurate(Nearest)` (`accurate` or `nearest`: correctly rounded, so
    /// the same bits on any thread count or device) or `Accurate(Faithful)` (`faithful`).
    Accurate(Rounding),
}

impl Mode {
    /// `native`, `accurate` (= `nearest`), `nearest`, `faithful`; case-insensitive.
    pub fn parse(s: &str) -> Option<Mode> {
        match s.trim().to_ascii_lowercase().as_str() {
            "" | "native" | "off" | "0" => Some(Mode::Native),
            "accurate" | "nearest" | "on" | "1" => Some(Mode::Accurate(Rounding::Nearest)),
            "faithful" | "2" => Some(Mode::Accurate(Rounding::Faithful)),
            _ => None,
        }
    }
    /// The native API's code: 0 native, 1 accurate (nearest), 2 faithful.
    pub fn from_code(c: i32) -> Option<Mode> {
        match c {
            0 => Some(Mode::Native),
            1 => Some(Mode::Accurate(Rounding::Nearest)),
            2 => Some(Mode::Accurate(Rounding::Faithful)),
            _ => None,
        }
    }
    pub fn code(self) -> i32 {
        match self {
            Mode::Native => 0,
            Mode::Accurate(Rounding::Nearest) => 1,
            Mode::Accurate(Rounding::Faithful) => 2,
        }
    }
}

static ENV_MODE: once_cell::sync::Lazy<Mode> = once_cell::sync::Lazy::new(|| {
    let v = config::value("HYBLAS_DGEMM_MODE").unwrap_or_default();
    Mode::parse(&v).unwrap_or_else(|| {
        eprintln!("hyblas: HYBLAS_DGEMM_MODE={v} is not native, accurate, nearest or faithful; using native");
        Mode::Native
    })
});

thread_local! {
    static MODE_LOCAL: std::cell::Cell<Option<Mode>> = const { std::cell::Cell::new(None) };
}

/// The DGEMM mode in force on this thread: its own ([`with_mode`], [`set_thread_mode`]), else
/// `HYBLAS_DGEMM_MODE` (read once).
pub fn mode() -> Mode {
    MODE_LOCAL.with(|c| c.get()).unwrap_or(*ENV_MODE)
}

/// Run `f` with this thread's DGEMMs in mode `m` (the native API's `hyblas_dgemm_ex`, tests).
pub fn with_mode<R>(m: Mode, f: impl FnOnce() -> R) -> R {
    config::with_local(&MODE_LOCAL, Some(m), f)
}

/// Set this thread's DGEMM mode (None: back to `HYBLAS_DGEMM_MODE`) for its next calls;
/// returns the one before (`hyblas_set_dgemm_mode`).
pub fn set_thread_mode(m: Option<Mode>) -> Option<Mode> {
    MODE_LOCAL.with(|c| c.replace(m))
}

/// How the products of a level (and of the rest) run on the CPU.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Form {
    /// One GEMM over the stacked slices (inner dimension p k).
    #[default]
    Joined,
    /// The p products as one batched call (`plan::batch`) into separate outputs, summed after.
    Batched,
    /// One GEMM call per product, each adding into the output (the seed's looped form).
    Looped,
}

/// This thread's overrides of the planner's choices for its accurate calls (benchmarks compare
/// the choices in one run with them): None leaves a choice to the settings and the planner.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Tuning {
    /// The products' form.
    pub form: Option<Form>,
    /// The largest density of a slice multiplied as a sparse product (0: none).
    pub sparse_density: Option<f64>,
    /// Whose slices may run sparse (default both).
    pub sparse_side: Option<Side>,
}

/// The operands whose mostly-zero slices run as sparse products: A's (`Left`), B's (`Right`)
/// or both (a product with both sparse takes A's).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Side {
    Left,
    Right,
    #[default]
    Both,
}

thread_local! {
    static TUNING_LOCAL: std::cell::Cell<Option<Tuning>> = const { std::cell::Cell::new(None) };
}

/// Run `f` with this thread's accurate calls tuned by `t` (`ozakibench --forms`).
pub fn with_tuning<R>(t: Tuning, f: impl FnOnce() -> R) -> R {
    config::with_local(&TUNING_LOCAL, Some(t), f)
}

fn tuning() -> Tuning {
    TUNING_LOCAL.with(|c| c.get()).unwrap_or_default()
}

/// What one call did, for its trace line and for tests (ZGEMM: element counts are of parts,
/// real and imaginary).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// Bits of a slice entry.
    pub bits: u32,
    /// Levels computed exactly (0..=L, so L + 1 slices of each operand were multiplied).
    pub levels: usize,
    /// GEMMs of the call's size run: the exact levels' products and the rest's.
    pub products: usize,
    /// How the products ran (CPU).
    pub form: Form,
    /// Products run as sparse products (a mostly-zero slice of A, or of B with A's dense).
    pub sparse: usize,
    /// Elements certified by the fast path.
    pub certified: usize,
    /// Elements computed exactly because the fast path could not certify them.
    pub exact: usize,
    /// Elements computed with IEEE arithmetic (an Inf or NaN in their row, column, or C).
    pub ieee: usize,
    /// Whether the call ran on the GPU (the int8 Chinese-remainder scheme, `gpu::ozaki`).
    pub gpu: bool,
    /// GPU only: the moduli (int8 GEMMs) of the Chinese-remainder scheme.
    pub moduli: usize,
}

thread_local! {
    static LAST: std::cell::Cell<Report> = const { std::cell::Cell::new(Report {
        bits: 0, levels: 0, products: 0, form: Form::Joined, sparse: 0, certified: 0, exact: 0, ieee: 0, gpu: false, moduli: 0,
    }) };
}

/// The report of this thread's last accurate DGEMM (benchmarks and tests read how it ran).
pub fn last_report() -> Report {
    LAST.with(|r| r.get())
}

fn set_last(r: Report) {
    LAST.with(|x| x.set(r));
}

/// Most levels an element's `i128` holds: after level l it needs 53 + l (bits + 1) + 1 bits.
fn max_levels(bits: u32) -> usize {
    (((126 - 54) / (bits + 1)) as usize).min(3)
}

/// Time spent per phase, for the trace line.
struct Phases {
    last: std::time::Instant,
    list: Vec<(&'static str, f64)>,
}

impl Phases {
    fn new(start: std::time::Instant) -> Phases {
        Phases { last: start, list: Vec::new() }
    }
    fn mark(&mut self, what: &'static str) {
        let now = std::time::Instant::now();
        self.list.push((what, (now - self.last).as_secs_f64()));
        self.last = now;
    }
}

/// Elements the planner's prediction looks at (spread over C).
const SAMPLES: usize = 4096;

/// The accurate DGEMM's settings (docs/configuration.md, "Accurate DGEMM"), read once.
struct Settings {
    /// `HYBLAS_OZAKI_FORM`: Some(form) forced, None joined.
    form: Option<Form>,
    /// `HYBLAS_OZAKI_SPARSE_DENSITY` (0.2).
    sparse_density: f64,
    /// `HYBLAS_OZAKI_SPARSE_MIN_FLOPS` (2^23 per thread).
    sparse_min_flops: f64,
    /// `HYBLAS_OZAKI_FALLBACK_COST` (450 element-GEMMs).
    fallback_cost: f64,
    /// `HYBLAS_OZAKI_INT8_TOPS` (1200).
    int8_tops: f64,
    /// `HYBLAS_OZAKI_EXACT_NS` (24).
    exact_ns: f64,
    /// `HYBLAS_OZAKI_HOST_FIXED_MS` (3), in seconds.
    host_fixed: f64,
    /// `HYBLAS_OZAKI_GPU_MIN_FLOPS` (2·256³).
    gpu_min_flops: f64,
}

static SETTINGS: once_cell::sync::Lazy<Settings> = once_cell::sync::Lazy::new(|| Settings {
    form: match config::value("HYBLAS_OZAKI_FORM").as_deref().map(str::trim) {
        Some("joined") => Some(Form::Joined),
        Some("batched") => Some(Form::Batched),
        Some("looped") => Some(Form::Looped),
        _ => None,
    },
    // Sparse x dense beat one dense product up to 15-20% density at n = 256 and 30% from 512
    // on this project's VM (`cargo run --release --example sparse_crossover`, docs/ozaki.md).
    sparse_density: config::float("HYBLAS_OZAKI_SPARSE_DENSITY").unwrap_or(0.2),
    sparse_min_flops: config::float("HYBLAS_OZAKI_SPARSE_MIN_FLOPS").unwrap_or((1u64 << 23) as f64),
    fallback_cost: config::float("HYBLAS_OZAKI_FALLBACK_COST").unwrap_or(450.0),
    int8_tops: config::float("HYBLAS_OZAKI_INT8_TOPS").unwrap_or(1200.0),
    exact_ns: config::float("HYBLAS_OZAKI_EXACT_NS").unwrap_or(24.0),
    host_fixed: config::float("HYBLAS_OZAKI_HOST_FIXED_MS").unwrap_or(3.0) * 1e-3,
    gpu_min_flops: config::float("HYBLAS_OZAKI_GPU_MIN_FLOPS").unwrap_or(2.0 * 256f64.powi(3)),
});

/// How a level's products run: the thread's [`Tuning`], else `HYBLAS_OZAKI_FORM`, else joined.
/// Measured (`ozakibench --forms`, docs/ozaki.md): the three forms within the run-to-run noise
/// of each other at n = 32..1024 on this project's VM and on a 16-core Xeon; joined was never
/// more than 9% behind the best form where batched, the earlier choice for small products,
/// was up to 21% behind, so the size rule went.
fn form() -> Form {
    tuning().form.or(SETTINGS.form).unwrap_or(Form::Joined)
}

/// The largest density of a slice that runs as a sparse product in an m x n x k call: the
/// thread's [`Tuning`], else `HYBLAS_OZAKI_SPARSE_DENSITY` where each thread's share of one
/// product has at least `HYBLAS_OZAKI_SPARSE_MIN_FLOPS` (2^23) flops, else none. Why the size
/// rule (`ozakibench --forms`, seed's matrices, sparse against dense slices): on the H200
/// host's 16-core Xeon, from 20% faster to 26% slower at n <= 256 (a dense product that small
/// splits 16 ways well, the sparse one does not), 3-5% faster at 512 and 33-35% at 1024; on
/// this project's 2-core VM, 10-14% faster at n = 96-128, 24-63% from 192. The rule takes
/// sparse slices from n = 512 on the Xeon and n = 256 on the VM.
fn sparse_density(m: usize, n: usize, k: usize, threads: usize) -> f64 {
    let per_thread = 2.0 * m as f64 * n as f64 * k as f64 / threads.max(1) as f64;
    match tuning().sparse_density {
        Some(d) => d,
        None if per_thread >= SETTINGS.sparse_min_flops => SETTINGS.sparse_density,
        None => 0.0,
    }
}

/// The products of one level (or of the rest), out := sum_p A_p B_p (see [`dense_products`]),
/// with the products whose A_p is mostly zeros (`sparse[p]`, its nonzeros) run as sparse x
/// dense, and of the others those whose B_p is (`sparse_b[p]`, B_p's columns as rows) as dense
/// x sparse (`cpu::sparse`). Exact levels stay exact (any order sums them exactly); the rest's
/// bound holds for any order of its sums. Returns how many ran sparse.
#[allow(clippy::too_many_arguments)]
unsafe fn products(
    a: &[*const f64],
    b: &[*const f64],
    (m, n, k): (usize, usize, usize),
    lda: usize,
    ldb: usize,
    out: &mut [f64],
    form: Form,
    (sparse, sparse_b): (&[Option<&Csr>], &[Option<&Csr>]),
) -> usize {
    let right = |p: usize| sparse_b.get(p).copied().flatten();
    let dense: Vec<usize> = (0..a.len()).filter(|&p| sparse[p].is_none() && right(p).is_none()).collect();
    if dense.is_empty() {
        out[..m * n].fill(0.0);
    } else {
        let (pa, pb): (Vec<_>, Vec<_>) = dense.iter().map(|&p| (a[p], b[p])).unzip();
        // Joined needs the products' operands side by side: consecutive ones.
        let consecutive = dense.windows(2).all(|w| w[1] == w[0] + 1);
        let form = if form == Form::Joined && !consecutive { Form::Looped } else { form };
        dense_products(&pa, &pb, (m, n, k), lda, ldb, out, form);
    }
    for (p, s) in sparse.iter().enumerate() {
        if let Some(s) = s {
            crate::cpu::sparse::spmm_add(s, b[p], ldb, n, out.as_mut_ptr(), m);
        } else if let Some(st) = right(p) {
            crate::cpu::sparse::dense_spmm_add(a[p], lda, m, st, out.as_mut_ptr(), m);
        }
    }
    a.len() - dense.len()
}

/// The products of one level (or of the rest): out := sum_p A_p B_p with A_p = `a[p]` (m x k,
/// ld `lda`) and B_p = `b[p]` (k x n, ld `ldb`), out m x n (ld m). The operands are placed so
/// that the A_p side by side and the B_p stacked are themselves matrices (`Stack`): `Joined`
/// runs them as one GEMM of inner dimension p k; `Batched`, the p products as one batched call
/// into separate outputs, summed after; `Looped`, one GEMM per product adding into `out`.
#[allow(clippy::too_many_arguments)]
unsafe fn dense_products(
    a: &[*const f64],
    b: &[*const f64],
    (m, n, k): (usize, usize, usize),
    lda: usize,
    ldb: usize,
    out: &mut [f64],
    form: Form,
) {
    let mn = m * n;
    let count = a.len();
    if form == Form::Looped {
        for p in 0..count {
            crate::cpu::level3::gemm::gemm(
                1.0,
                MatRef::col_major(a[p], m, k, lda),
                false,
                MatRef::col_major(b[p], k, n, ldb),
                false,
                if p == 0 { 0.0 } else { 1.0 },
                MatMut::col_major(out.as_mut_ptr(), m, n, m),
            );
        }
        return;
    }
    if form == Form::Joined || count == 1 {
        crate::cpu::level3::gemm::gemm(
            1.0,
            MatRef::col_major(a[0], m, count * k, lda),
            false,
            MatRef::col_major(b[0], count * k, n, ldb),
            false,
            0.0,
            MatMut::col_major(out.as_mut_ptr(), m, n, m),
        );
        return;
    }
    let mut parts = Work::take(count * mn);
    let pc: Vec<*mut f64> = (0..count).map(|p| parts.as_mut_ptr().add(p * mn)).collect();
    let call = super::batch::Product {
        ta: Trans::No,
        tb: Trans::No,
        m,
        n,
        k,
        alpha: 1.0,
        a: a[0],
        lda,
        b: b[0],
        ldb,
        beta: 0.0,
        c: pc[0],
        ldc: m,
    };
    let ops = super::batch::Ops::Arrays { a: a.as_ptr(), b: b.as_ptr(), c: pc.as_ptr() };
    // Native, whatever the caller's mode: the batch's larger products go through the GEMM
    // planner, which in accurate mode would send them back here (each level's products must be
    // plain FP64 products; in accurate mode this recursed until the stack overflowed).
    with_mode(Mode::Native, || super::batch::gemm_batch("dgemm_accurate", &[super::batch::Group { call, ops, count }]));
    out[..mn].copy_from_slice(&parts[..mn]);
    for p in 1..count {
        for (o, x) in out[..mn].iter_mut().zip(&parts[p * mn..(p + 1) * mn]) {
            *o += x;
        }
    }
}

/// An upper bound on |sum_{s+t>L} A_s B_t| for element (i, j) in units of 2^(g0A_i + g0B_j):
/// sum_{s<=L} |A_s| |R^B_{L-s}| + |R^A_L| |B| <= sum_s norm(A_s) rest(B, L-s) + rest(A, L) total(B).
fn rest_bound(la: &Ladder, lb: &Ladder, l: usize, i: usize, j: usize) -> f64 {
    let mut m = la.rest(l, i) * lb.total[j];
    for s in 0..=l {
        m += la.norm(s, i) * lb.rest(l - s, j);
    }
    m * (1.0 + 1e-12)
}

/// Slack for what the scaled vectors may have lost (entries 2^1000 below their vector's
/// largest) and for underflow in the rest's GEMMs, in the element's units: far below any
/// result the fast path certifies, and counted all the same where it can occur
/// (`Ladder::deep`; elsewhere 0, which also keeps subnormal arithmetic out of the loop).
fn slack(la: &Ladder, lb: &Ladder, terms: usize, i: usize, j: usize) -> f64 {
    if !(la.deep[i] || lb.deep[j]) {
        return 0.0;
    }
    const TINY: f64 = f64::from_bits(1 << 4); // 2^-1070 (16 times the smallest subnormal)
    (terms as f64 + la.total[i] + lb.total[j] + 1.0) * TINY
}

/// One element the fast path does not certify, from its row of op(A) and column of op(B):
/// `ieee` (an Inf or NaN in them or in C): the plain dot product in order, then alpha and beta
/// as the reference DGEMM applies them; else exactly (a big-integer dot product, alpha and
/// beta*c added exactly), rounded once to the nearest double. Both engines' fallback.
fn element(ieee: bool, row: &[f64], col: &[f64], alpha: f64, beta: f64, old: f64, acc: &mut Exact) -> f64 {
    if ieee {
        let mut dot = 0.0f64;
        for (x, y) in row.iter().zip(col) {
            dot += x * y;
        }
        return if beta == 0.0 { alpha * dot } else { alpha * dot + beta * old };
    }
    acc.set_dot(row.len(), |t| (row[t], col[t]));
    acc.mul_f64(alpha);
    if beta != 0.0 {
        acc.add_product(beta, old);
    }
    acc.round()
}

/// The scalars of a call on C's real view. `Real`: DGEMM's alpha and beta, one row of the view
/// per element. `Complex`: ZGEMM's alpha and beta ([re, im]); the view's rows come in pairs
/// (an element's Re and Im, as complex numbers lie in memory), and so do op(A)'s real rows
/// ([Re a, -Im a] and [Im a, Re a] over an inner dimension 2k, against columns [Re b; Im b]):
/// their products are X0 = Re(a b) and X1 = Im(a b), and
/// Re z = ar X0 - ai X1 + br c0 - bi c1, Im z = ai X0 + ar X1 + bi c0 + br c1.
#[derive(Clone, Copy, Debug)]
enum Scalars {
    Real(f64, f64),
    Complex([f64; 2], [f64; 2]),
}

impl Scalars {
    /// Rows of the view computed together.
    fn group(self) -> usize {
        match self {
            Scalars::Real(..) => 1,
            Scalars::Complex(..) => 2,
        }
    }
    /// Row q of a group: the coefficients of the group's products and of its old values of C.
    fn coefs(self, q: usize) -> ([f64; 2], [f64; 2]) {
        match self {
            Scalars::Real(a, b) => ([a, 0.0], [b, 0.0]),
            Scalars::Complex([ar, ai], [br, bi]) if q == 0 => ([ar, -ai], [br, -bi]),
            Scalars::Complex([ar, ai], [br, bi]) => ([ai, ar], [bi, br]),
        }
    }
    /// beta == 0: C is not read (NaN there does not spread).
    fn beta_zero(self) -> bool {
        match self {
            Scalars::Real(_, b) => b == 0.0,
            Scalars::Complex(_, b) => b == [0.0, 0.0],
        }
    }
    /// A bound on |alpha| over the group's rows' products.
    fn alpha_abs(self) -> f64 {
        match self {
            Scalars::Real(a, _) => a.abs(),
            Scalars::Complex([ar, ai], _) => ar.abs() + ai.abs(),
        }
    }
}

/// Row q of a group the fast path does not certify: [`element`] for `Real`; for `Complex`,
/// from the group's two rows and the column (see [`Scalars`]): `ieee`, complex arithmetic in
/// order (the dot product, then alpha times it plus beta times c); else exactly, each product's
/// big-integer sum times its coefficient, added together with beta*c, rounded once.
#[allow(clippy::too_many_arguments)]
fn element_of(
    ieee: bool,
    rows: [&[f64]; 2],
    col: &[f64],
    sc: Scalars,
    q: usize,
    old: [f64; 2],
    acc: &mut [Exact; 2],
) -> f64 {
    let (cx, cb) = sc.coefs(q);
    if let Scalars::Real(alpha, beta) = sc {
        return element(ieee, rows[0], col, alpha, beta, old[0], &mut acc[0]);
    }
    let keep_c = !sc.beta_zero();
    if ieee {
        let k = col.len() / 2;
        let (mut re, mut im) = (0.0f64, 0.0f64);
        for l in 0..k {
            let (ar, ai, br, bi) = (rows[0][l], rows[1][l], col[l], col[k + l]);
            re += ar * br - ai * bi;
            im += ar * bi + ai * br;
        }
        let z = cx[0] * re + cx[1] * im;
        return if keep_c { z + (cb[0] * old[0] + cb[1] * old[1]) } else { z };
    }
    let [a0, a1] = acc;
    a0.set_dot(col.len(), |t| (rows[0][t], col[t]));
    a0.mul_f64(cx[0]);
    a1.set_dot(col.len(), |t| (rows[1][t], col[t]));
    a1.mul_f64(cx[1]);
    a0.add_sum(a1);
    if keep_c {
        a0.add_product(cb[0], old[0]);
        a0.add_product(cb[1], old[1]);
    }
    a0.round()
}

/// C := alpha*op(A)*op(B) + beta*C, every element faithfully (or, `Nearest`, correctly) rounded
/// (column-major; arguments checked by the caller as for DGEMM).
///
/// # Safety
/// A, B, C valid for the shapes and leading dimensions given, C not overlapping A or B.
#[allow(clippy::too_many_arguments)]
pub unsafe fn dgemm(
    rounding: Rounding,
    ta: Trans,
    tb: Trans,
    m: usize,
    n: usize,
    k: usize,
    alpha: f64,
    a: *const f64,
    lda: usize,
    b: *const f64,
    ldb: usize,
    beta: f64,
    c: *mut f64,
    ldc: usize,
) -> Report {
    let mut report = Report::default();
    if m == 0 || n == 0 {
        return report;
    }
    if !alpha.is_finite() || !beta.is_finite() {
        // IEEE throughout: the plain product.
        crate::cpu::level3::gemm::gemm(
            alpha,
            MatRef::op(a, ta, m, k, lda).0,
            false,
            MatRef::op(b, tb, k, n, ldb).0,
            false,
            beta,
            MatMut::col_major(c, m, n, ldc),
        );
        report.ieee = m * n;
        return report;
    }
    if k == 0 || alpha == 0.0 {
        // beta*C, one rounding each (beta == 0: zeros, C not read).
        for j in 0..n {
            for i in 0..m {
                let p = c.add(i + j * ldc);
                *p = if beta == 0.0 { 0.0 } else { beta * *p };
            }
        }
        return report;
    }
    // (The operands as the pool's threads read them: shared, read-only.)
    let (ap, bp) = (SendPtr(a as *mut f64), SendPtr(b as *mut f64));
    let op_a = move |i: usize, l: usize| {
        let a = ap.get();
        if ta == Trans::No {
            *a.add(i + l * lda)
        } else {
            *a.add(l + i * lda)
        }
    };
    let op_b = move |l: usize, j: usize| {
        let b = bp.get();
        if tb == Trans::No {
            *b.add(l + j * ldb)
        } else {
            *b.add(j + l * ldb)
        }
    };
    let desc = || format!("ta={ta:?} tb={tb:?} m={m} n={n} k={k}");
    run(rounding, ("dgemm", &desc), (m, n, k), op_a, op_b, Scalars::Real(alpha, beta), (c, ldc))
}

/// ZGEMM's C := alpha*op(A)*op(B) + beta*C with the real and imaginary part of every element
/// faithfully (or, `Nearest`, correctly) rounded: the exact value of each part is a sum of real
/// products (four real products of the call's size, as native ZGEMM's flops), run as one real
/// accurate product of C's real view (2m x n) with an inner dimension 2k (see [`Scalars`]); a
/// complex alpha and beta enter the certificate exactly. `a`, `b`, `c` point at interleaved
/// (re, im) pairs; `alpha`, `beta` are [re, im]; leading dimensions in complex elements;
/// `Trans::ConjTrans` conjugates.
///
/// # Safety
/// As [`dgemm`].
#[allow(clippy::too_many_arguments)]
pub unsafe fn zgemm(
    rounding: Rounding,
    ta: Trans,
    tb: Trans,
    m: usize,
    n: usize,
    k: usize,
    alpha: [f64; 2],
    a: *const f64,
    lda: usize,
    b: *const f64,
    ldb: usize,
    beta: [f64; 2],
    c: *mut f64,
    ldc: usize,
) -> Report {
    use crate::types::C64;
    let mut report = Report::default();
    if m == 0 || n == 0 {
        return report;
    }
    let sc = Scalars::Complex(alpha, beta);
    if !alpha.iter().chain(&beta).all(|x| x.is_finite()) {
        // IEEE throughout: the plain product.
        let z = |x: [f64; 2]| C64::new(x[0], x[1]);
        let (a, b, c) = (a as *const C64, b as *const C64, c as *mut C64);
        let (av, ca) = MatRef::op(a, ta, m, k, lda);
        let (bv, cb) = MatRef::op(b, tb, k, n, ldb);
        crate::cpu::level3::gemm::gemm(z(alpha), av, ca, bv, cb, z(beta), MatMut::col_major(c, m, n, ldc));
        report.ieee = m * n;
        return report;
    }
    if k == 0 || alpha == [0.0, 0.0] {
        // beta*C, each part rounded once (beta == 0: zeros, C not read).
        let mut acc = Exact::new();
        for j in 0..n {
            for i in 0..m {
                let p = c.add(2 * (i + j * ldc));
                let old = [*p, *p.add(1)];
                for q in 0..2 {
                    let (_, cb) = sc.coefs(q);
                    acc.clear();
                    if !sc.beta_zero() {
                        acc.add_product(cb[0], old[0]);
                        acc.add_product(cb[1], old[1]);
                    }
                    *p.add(q) = acc.round();
                }
            }
        }
        return report;
    }
    let (ap, bp) = (SendPtr(a as *mut f64), SendPtr(b as *mut f64));
    // op(A)(i, l) and op(B)(l, j) as (re, im).
    let za = move |i: usize, l: usize| {
        let p = ap.get().add(2 * if ta == Trans::No { i + l * lda } else { l + i * lda });
        (*p, if ta == Trans::ConjTrans { -*p.add(1) } else { *p.add(1) })
    };
    let zb = move |l: usize, j: usize| {
        let p = bp.get().add(2 * if tb == Trans::No { l + j * ldb } else { j + l * ldb });
        (*p, if tb == Trans::ConjTrans { -*p.add(1) } else { *p.add(1) })
    };
    // The real view: row 2i = [Re a_i, -Im a_i], row 2i + 1 = [Im a_i, Re a_i]; column j = [Re b_j; Im b_j].
    let op_a = move |r: usize, l: usize| {
        let (i, q) = (r / 2, r % 2);
        if l < k {
            let (re, im) = za(i, l);
            if q == 0 {
                re
            } else {
                im
            }
        } else {
            let (re, im) = za(i, l - k);
            if q == 0 {
                -im
            } else {
                re
            }
        }
    };
    let op_b = move |l: usize, j: usize| if l < k { zb(l, j).0 } else { zb(l - k, j).1 };
    let desc = || format!("ta={ta:?} tb={tb:?} m={m} n={n} k={k}");
    run(rounding, ("zgemm", &desc), (2 * m, n, 2 * k), op_a, op_b, sc, (c, 2 * ldc))
}

/// The accurate product on C's real view (m x n, leading dimension ldc): op(A)'s rows and
/// op(B)'s columns read through `op_a(i, l)` and `op_b(l, j)`; past the degenerate cases
/// (finite scalars, alpha != 0, k > 0), which the callers handle.
#[allow(clippy::too_many_arguments)]
unsafe fn run(
    rounding: Rounding,
    (name, desc): (&str, &dyn Fn() -> String),
    (m, n, k): (usize, usize, usize),
    op_a: impl Fn(usize, usize) -> f64 + Sync + Send + Copy,
    op_b: impl Fn(usize, usize) -> f64 + Sync + Send + Copy,
    sc: Scalars,
    (c, ldc): (*mut f64, usize),
) -> Report {
    let start = std::time::Instant::now();
    let mut report = Report::default();
    let col_b = move |j: usize, l: usize| op_b(l, j);
    // Bits such that the up to 4 products of a level sum exactly in FP64.
    let bits = slice_bits(4 * k);
    let lmax = max_levels(bits);
    let mut phases = Phases::new(start);
    // Two slices stored at first (levels 0 and 1 are what most inputs need); more on demand.
    let mut la = ladder(&op_a, m, k, bits, (lmax + 1, 2), Stack::Rows);
    let mut lb = ladder(&col_b, n, k, bits, (lmax + 1, 2), Stack::Columns);
    phases.mark("cut");
    let form = form();
    let (lda, ldb) = (la.ld(), lb.ld());
    // Slices whose density is at most this run as sparse products (their nonzeros found once
    // per slice, on first use): A's as sparse x dense, B's as dense x sparse.
    let max_density = sparse_density(m, n, k, threads::nthreads());
    let side = tuning().sparse_side.unwrap_or_default();
    let (mut csr, mut csr_b): (Vec<Option<Csr>>, Vec<Option<Csr>>) = (Vec::new(), Vec::new());
    // The nonzeros of the column-major rows x cols slice at ptr (ld), built by `build`, where
    // that side may run sparse and the slice is sparse enough.
    let sparse_slice = |ok: bool, ptr: *const f64, (rows, cols, ld): (usize, usize, usize), build: &dyn Fn() -> Csr| {
        let few =
            || crate::cpu::sparse::count_nonzeros(ptr, rows, cols, ld) as f64 <= max_density * (rows * cols) as f64;
        (ok && max_density > 0.0 && few()).then(build)
    };
    let sparse_of = |la: &Ladder, s: usize| -> Option<Csr> {
        let ptr = la.slice_ptr(s);
        sparse_slice(side != Side::Right, ptr, (m, k, lda), &|| Csr::from_col_major(ptr, m, k, lda))
    };
    // B's slice t is k x n (column j at slice_ptr(t) + j ldb); its columns become the rows.
    let sparse_of_b = |lb: &Ladder, t: usize| -> Option<Csr> {
        let ptr = lb.slice_ptr(t);
        sparse_slice(side != Side::Left, ptr, (k, n, ldb), &|| Csr::from_rows(ptr, n, k, ldb))
    };
    report.bits = bits;
    report.form = form;
    let mn = m * n;
    let nearest = rounding == Rounding::Nearest;
    let cs = SendPtr(c);
    let beta_zero = sc.beta_zero();
    let (g, alpha_abs) = (sc.group(), sc.alpha_abs());
    // C's values of the group at rows i0.. and column j (0 where beta == 0: C not read).
    let olds_at = |i0: usize, j: usize| {
        let mut o = [0.0f64; 2];
        if !beta_zero {
            for (q, x) in o.iter_mut().enumerate().take(g) {
                *x = *cs.get().add(i0 + q + j * ldc);
            }
        }
        o
    };
    let step = bits as i32 + 1;
    let threads = threads::nthreads();
    let parts = n.min(threads * 4).max(1);
    let cols = |part: usize| (part * n / parts)..((part + 1) * n / parts);
    // Whether an element of the group at rows i0.. and column j takes IEEE arithmetic.
    let nonfinite = |la: &Ladder, lb: &Ladder, i0: usize, j: usize, olds: &[f64; 2]| {
        lb.nonfinite[j] || (0..g).any(|q| la.nonfinite[i0 + q] || !olds[q].is_finite())
    };

    // The exact levels, one output each (units of the element's top unit 2^(g0A_i + g0B_j);
    // level l's values are integers times 2^(-l (bits + 1)), below 2^53 of those).
    let mut levels: Vec<Work> = Vec::new();
    let fallback_cost = SETTINGS.fallback_cost;
    let mut l = 0usize;
    loop {
        la.store(&op_a, l + 1);
        lb.store(&col_b, l + 1);
        let pa: Vec<*const f64> = (0..=l).map(|s| la.slice_ptr(s)).collect();
        let pb: Vec<*const f64> = (0..=l).map(|s| lb.slice_ptr(l - s)).collect();
        let mut out = Work::take(mn);
        for s in csr.len()..=l {
            csr.push(sparse_of(&la, s));
            csr_b.push(sparse_of_b(&lb, s));
        }
        let sp: Vec<Option<&Csr>> = csr[..=l].iter().map(Option::as_ref).collect();
        // Product s pairs A_s with B_(l-s).
        let sp_b: Vec<Option<&Csr>> = (0..=l).map(|s| csr_b[l - s].as_ref()).collect();
        report.sparse += products(&pa, &pb, (m, n, k), lda, ldb, &mut out, form, (&sp, &sp_b));
        levels.push(out);
        phases.mark("level");
        report.products += l + 1;
        if l == lmax {
            break;
        }
        // On a sample of the elements (the choice needs only shares; the certification below is
        // per element): fails[L - l], the expected number certification refuses when the rest
        // starts at level L, from a lower bound on |C_ij| given by the levels so far; unknown,
        // those the levels so far cannot bound away from 0.
        let mut fails = vec![0.0f64; lmax - l + 1];
        let mut unknown = 0.0f64;
        let samples = mn.min(SAMPLES);
        for t in 0..samples {
            // Columns evenly, rows scattered by a multiplicative hash (an even stride through
            // a column-major C would alias onto a few rows).
            let j = t * n / samples;
            let i = ((t as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 33) as usize % m;
            let (i0, q) = (i - i % g, i % g);
            let olds = olds_at(i0, j);
            if nonfinite(&la, &lb, i0, j, &olds) {
                continue;
            }
            let e = la.g0[i0] + lb.g0[j];
            let (cx, cb) = sc.coefs(q);
            let mut est = 0.0;
            let mut omega = 0.0;
            for p in 0..g {
                let at = i0 + p + j * m;
                let so_far: f64 = levels.iter().map(|lev| lev[at]).sum();
                est += cx[p] * scale(so_far, e) + cb[p] * olds[p];
                omega += cx[p].abs() * scale(rest_bound(&la, &lb, l, i0 + p, j), e);
            }
            let low = est.abs() - omega - 4.0 * U * est.abs();
            if !(low > 0.0 && low.is_finite()) {
                unknown += 1.0;
                continue;
            }
            let gap = ulp_min(low);
            for (x, f) in fails.iter_mut().enumerate() {
                let d = gamma((l + x + 2) * k) * rest_bound(&la, &lb, l + x, i, j);
                let r = alpha_abs * scale(d, e) / gap;
                // The rounding error |e| of the computed value is about uniform in [0, gap/2]:
                // nearest fails where |e| > gap/2 - d, faithful where |e| > gap - d.
                *f += if nearest { (2.0 * r).min(1.0) } else { (2.0 * r - 1.0).clamp(0.0, 1.0) };
            }
        }
        let per = mn as f64 / samples as f64;
        let unknown = unknown * per;
        // Cost of stopping at L (in element-GEMMs: one GEMM of the call's size is m*n): the
        // exact levels l+1..=L, the rest's L+2 products, and the elements expected to fail.
        let cost = |big_l: usize| {
            let gemms: usize = (l + 1..=big_l).map(|x| x + 1).sum::<usize>() + big_l + 2;
            gemms as f64 * mn as f64 + fallback_cost * (fails[big_l - l] * per + unknown)
        };
        let best = (l..=lmax).min_by(|&x, &y| cost(x).total_cmp(&cost(y))).unwrap_or(l);
        // Go on while a later level is predicted cheaper, or while elements the levels so far
        // cannot size would cost more to compute exactly than the next level.
        if best == l && unknown * fallback_cost <= (l + 2) as f64 * mn as f64 {
            break;
        }
        l += 1;
    }
    report.levels = l;

    // The rest: sum_{s<=L} A_s R^B_{L-s} + R^A_L B, in ordinary FP64 GEMMs (units of 2^g0):
    // [A_0 .. A_L R^A_L] times [R^B_L; ..; R^B_0; B] (R^A_L put in slice L + 1's place).
    let stacked = (l + 2) * k;
    let mut rest_b = Work::take(stacked * n);
    let mut outs: Vec<(Option<usize>, usize)> = (0..=l).map(|x| (Some(l - x), x * k)).collect();
    outs.push((None, (l + 1) * k));
    lb.remainders(&col_b, &mut rest_b, Layout { vec_stride: stacked, elem_stride: 1 }, &outs);
    la.rest_into_slot(&op_a, l);
    let (la, lb) = (&la, &lb);
    let pa: Vec<*const f64> = (0..=l + 1).map(|s| la.slice_ptr(s)).collect();
    let pb: Vec<*const f64> = (0..=l + 1).map(|x| rest_b[x * k..].as_ptr()).collect();
    let mut rest = Work::take(mn);
    // Slot L + 1 now holds R^A_L (its nonzeros found afresh).
    let rest_a = sparse_of(la, l + 1);
    let mut sp: Vec<Option<&Csr>> = csr[..=l].iter().map(Option::as_ref).collect();
    sp.push(rest_a.as_ref());
    phases.mark("rest cut");
    // (B's side of the rest is its remainders and B itself, seldom mostly zero.)
    report.sparse += products(&pa, &pb, (m, n, k), lda, stacked, &mut rest, form, (&sp, &[]));
    phases.mark("rest");
    report.products += l + 2;
    drop(rest_b);
    let terms = (l + 2) * k;
    let gm = gamma(terms);
    // Level l' as an integer in units of 2^(-l' (bits + 1)), shifted to units of 2^(-L (bits+1)).
    let ups: Vec<(f64, u32)> = (0..=l).map(|x| (2f64.powi(x as i32 * step), ((l - x) as i32 * step) as u32)).collect();

    // Each element certified, or computed exactly; columns of C over the pool's threads.
    let (ieee, exact) = (AtomicUsize::new(0), AtomicUsize::new(0));
    let (levels, rest) = (&levels, &rest);
    // Row i's product at column j as a certificate's term (coefficient `coef`).
    let term = |i: usize, j: usize, coef: f64| {
        let at = i + j * m;
        let mut s = 0i128;
        for (lev, &(up, shift)) in levels.iter().zip(&ups) {
            s += ((lev[at] * up) as i64 as i128) << shift;
        }
        let t_err = gm * rest_bound(la, lb, l, i, j) + slack(la, lb, terms, i, j);
        Term { s, t: rest[at], t_err, coef }
    };
    threads::for_each_part(threads, parts, |part| {
        let mut acc = [Exact::new(), Exact::new()];
        let (mut rows, mut col) = ([Vec::new(), Vec::new()], Vec::new());
        // The group's rows and the column gathered once (op(A)'s row is strided in memory; the
        // exact dot product reads it twice).
        let gather = |rows: &mut [Vec<f64>; 2], col: &mut Vec<f64>, i0: usize, j: usize| {
            for (q, row) in rows.iter_mut().enumerate().take(g) {
                row.clear();
                row.extend((0..k).map(|t| op_a(i0 + q, t)));
            }
            col.clear();
            col.extend((0..k).map(|t| op_b(t, j)));
        };
        let c = cs.get();
        let (mut n_ieee, mut n_exact) = (0, 0);
        for j in cols(part) {
            for i0 in (0..m).step_by(g) {
                let olds = olds_at(i0, j);
                let mut out = [0.0f64; 2];
                if nonfinite(la, lb, i0, j, &olds) {
                    gather(&mut rows, &mut col, i0, j);
                    for (q, o) in out.iter_mut().enumerate().take(g) {
                        *o = element_of(true, [&rows[0], &rows[1]], &col, sc, q, olds, &mut acc);
                    }
                    n_ieee += g;
                } else {
                    let e = la.g0[i0] + lb.g0[j];
                    let unit = e - l as i32 * step;
                    let mut gathered = false;
                    for (q, o) in out.iter_mut().enumerate().take(g) {
                        let (cx, cb) = sc.coefs(q);
                        let sure = match sc {
                            Scalars::Real(..) => {
                                certify_sum([term(i0, j, cx[0])], unit, e, [(cb[0], olds[0])], nearest)
                            }
                            // The pair's rows share their scale (the same entries' magnitudes);
                            // were it otherwise, the exact path.
                            Scalars::Complex(..) if la.g0[i0 + 1] == la.g0[i0] => certify_sum(
                                [term(i0, j, cx[0]), term(i0 + 1, j, cx[1])],
                                unit,
                                e,
                                [(cb[0], olds[0]), (cb[1], olds[1])],
                                nearest,
                            ),
                            Scalars::Complex(..) => None,
                        };
                        *o = match sure {
                            Some(r) => r,
                            None => {
                                n_exact += 1;
                                if !gathered {
                                    gather(&mut rows, &mut col, i0, j);
                                    gathered = true;
                                }
                                element_of(false, [&rows[0], &rows[1]], &col, sc, q, olds, &mut acc)
                            }
                        };
                    }
                }
                for (q, &o) in out.iter().enumerate().take(g) {
                    *c.add(i0 + q + j * ldc) = o;
                }
            }
        }
        ieee.fetch_add(n_ieee, Relaxed);
        exact.fetch_add(n_exact, Relaxed);
    });
    phases.mark("certify");
    report.ieee = ieee.into_inner();
    report.exact = exact.into_inner();
    report.certified = mn - report.ieee - report.exact;
    if trace::enabled() {
        let shape = format!(
            "{} accurate ({}): bits={bits} levels=0..{l} products={} ({}, {} sparse) certified={} exact={} ieee={} ms: {}",
            desc(),
            if nearest { "nearest" } else { "faithful" },
            report.products,
            format!("{form:?}").to_lowercase(),
            report.sparse,
            report.certified,
            report.exact,
            report.ieee,
            phases.list.iter().map(|(w, t)| format!("{w} {:.2}", t * 1e3)).collect::<Vec<_>>().join(", ")
        );
        trace::line(name, &shape, "cpu", threads, start.elapsed().as_secs_f64());
    }
    set_last(report);
    report
}

// ---- On device memory: the int8 Chinese-remainder scheme (`gpu::ozaki`) ----

/// Time of one int8 GEMM of the call's size on the device (the planner's unit of cost): the
/// measured cuBLAS int8 rate on an H200 (1575-1663 TOPS at n = 4096-8192, anchors) with the
/// overheads per modulus (residues, reconstruction) folded in; `HYBLAS_OZAKI_INT8_TOPS`
/// (default 1200) sets it.
fn modulus_seconds(m: usize, n: usize, k: usize) -> f64 {
    2.0 * m as f64 * n as f64 * k.div_ceil(16) as f64 * 16.0 / (SETTINGS.int8_tops * 1e12) + 20e-6
}

/// Host time of one listed element: the exact dot product (about 24 ns per term on one core
/// of this project's VM, `HYBLAS_OZAKI_EXACT_NS`) over the host's threads, and its row and
/// column brought over (16 k bytes at about 10 GB/s).
fn exact_seconds(k: usize) -> f64 {
    k as f64 * SETTINGS.exact_ns * 1e-9 / threads::nthreads().max(1) as f64 + 16.0 * k as f64 / 10e9
}

/// The bits per entry for the device scheme: the least predicted cost over beta of its moduli
/// (one int8 GEMM each) and of the elements expected to be refused (each computed exactly on
/// the host), from the sample's plain FP64 values. An element's bound is about
/// |alpha| 2^(E_i + F_j - beta) (nu_i + mu_j) / 2 (the rounding of the entries to beta bits);
/// refused with probability 2 d / gap (`nearest`) or 2 d / gap - 1 (faithful), as on the CPU.
/// Samples whose size the FP64 value cannot bound away from 0 (cancellation) are taken 2^64
/// below that value's error bound.
fn choose_bits(
    call: (usize, usize, usize),
    alpha: f64,
    nearest: bool,
    sa: &crate::gpu::ozaki::Scan,
    sb: &crate::gpu::ozaki::Scan,
    smp: &crate::gpu::ozaki::Sample,
) -> u32 {
    use crate::gpu::ozaki::{crt_for, max_beta, product_bound, top_norm};
    let (m, n, k) = call;
    let top = max_beta(k);
    let g = gamma(k);
    // Per sample: its refusal ratio d / gap at beta = 0 (d halves with each bit).
    let mut ratios: Vec<f64> = Vec::with_capacity(smp.z.len());
    for ((&i, &j), &z) in smp.i.iter().zip(&smp.j).zip(&smp.z) {
        if sa.bad[i] || sb.bad[j] || !z.is_finite() {
            continue;
        }
        let e = sa.e[i] + sb.e[j];
        let err = g * alpha.abs() * scale(sa.nu[i].min(sb.nu[j]), e);
        let low = z.abs() - err - 4.0 * U * z.abs();
        let size = if low > 0.0 { low } else { err * scale(1.0, -64) };
        let gap = ulp_min(size.max(f64::MIN_POSITIVE));
        // (In log2, so that huge and tiny ratios neither overflow nor vanish.)
        ratios.push((alpha.abs() * 0.5 * (sa.nu[i] + sb.nu[j])).log2() + e as f64 - gap.log2());
    }
    let per = (m * n) as f64 / smp.z.len().max(1) as f64;
    let (t_mod, t_exact) = (modulus_seconds(m, n, k), exact_seconds(k));
    // The host round trip's fixed part, measured at 5-11 ms for 63 elements at n = 8192 on an
    // H200 host (`HYBLAS_OZAKI_HOST_FIXED_MS`).
    let t_fixed = SETTINGS.host_fixed;
    // Sorted, with prefix sums of 2^(ratio - top ratio), each beta's expected refusals take two
    // binary searches: sum_s min(1, 2 r_s) = #{r_s >= 1/2} + 2^(1 - beta) sum_{r_s < 1/2} 2^lr_s.
    ratios.sort_by(f64::total_cmp);
    let hi = ratios.last().copied().unwrap_or(0.0);
    let mut prefix = vec![0.0f64];
    for &lr in &ratios {
        prefix.push(prefix.last().unwrap() + (lr - hi).exp2());
    }
    let count = ratios.len() as f64;
    let below = |x: f64| ratios.partition_point(|&lr| lr < x);
    let tops = top_norm(sa).min(top_norm(sb));
    let cost = |beta: u32| -> f64 {
        let Some(crt) = crt_for(beta, product_bound(tops, beta, k)) else { return f64::INFINITY };
        let b = beta as f64;
        let scale_b = (hi - b + 1.0).exp2(); // 2 * 2^(hi - beta)
        let (i1, i0) = (below(b - 1.0), below(b));
        let near = (count - i1 as f64) + scale_b * prefix[i1];
        let fails = if nearest {
            near
        } else {
            // Faithful refuses only where d > gap / 2 (2 r - 1 where r in [1/2, 1), all where
            // r >= 1), which a sample of 4096 rarely lands on: a twentieth of the nearest
            // estimate stands in for that tail (with a flat density of |C| near 0 the ratio of
            // the two is 0.69 / (1 + ln(1 / 2r))).
            let partial = scale_b * (prefix[i0] - prefix[i1]) - (i0 - i1) as f64;
            (count - i0 as f64) + partial + 0.05 * near
        };
        // Any refusal also costs the host round trip's fixed part (gathers, copies, syncs).
        let expected = fails * per;
        crt.n as f64 * t_mod + expected * t_exact + (1.0 - (-expected).exp()) * t_fixed
    };
    (20..=top).min_by(|&x, &y| cost(x).total_cmp(&cost(y))).unwrap_or(top)
}

/// C := alpha*op(A)*op(B) + beta*C on device memory, every element faithful (`Nearest`:
/// correctly rounded, the same bits as [`dgemm`] on the host): the int8 Chinese-remainder
/// scheme on the device (`gpu::ozaki`), the elements it cannot certify computed exactly on the
/// host. Degenerate calls (alpha or beta not finite, alpha == 0, k == 0) run as plain DGEMM on
/// the real cuBLAS, as on the host. An inner dimension past `gpu::ozaki::MAX_K` is refused
/// (Unsupported, C untouched).
#[allow(clippy::too_many_arguments)]
pub fn device_dgemm(
    ex: &crate::gpu::Exec,
    rounding: Rounding,
    ta: Trans,
    tb: Trans,
    (m, n, k): (usize, usize, usize),
    alpha: f64,
    a: crate::gpu::DMat,
    b: crate::gpu::DMat,
    beta: f64,
    c: crate::gpu::DMat,
) -> crate::gpu::Result<Report> {
    use crate::gpu::ozaki::{self as oz, Item};
    let start = std::time::Instant::now();
    let mut report = Report { gpu: true, ..Report::default() };
    if m == 0 || n == 0 {
        return Ok(report);
    }
    let (mi, ni, ki) = (m as i64, n as i64, k as i64);
    if !alpha.is_finite() || !beta.is_finite() {
        crate::gpu::vendor_calls::vendor_gemm::<f64>(ex, ta, tb, mi, ni, ki, alpha, a, b, beta, c)?;
        report.ieee = m * n;
        set_last(report);
        return Ok(report);
    }
    if k == 0 || alpha == 0.0 {
        // beta*C, one rounding each (beta == 0: zeros, C not read); A and B not read.
        crate::gpu::vendor_calls::vendor_gemm::<f64>(ex, ta, tb, mi, ni, 0, alpha, a, b, beta, c)?;
        set_last(report);
        return Ok(report);
    }
    if k > oz::MAX_K {
        // Past the int32 sums' reach: the host's accurate path on copies of the operands.
        return on_host_copies(ex, (ta, tb), (m, n, k), 1, (a, b, c), |(a, la), (b, lb), (c, lc)| {
            // SAFETY: the copies hold every element the shapes and leading dimensions address.
            unsafe { dgemm(rounding, ta, tb, m, n, k, alpha, a, la, b, lb, beta, c, lc) }
        });
    }
    let nearest = rounding == Rounding::Nearest;
    let call = oz::Call { ta, tb, m, n, k, alpha, a, b, beta, c };
    let choose = |sa: &oz::Scan, sb: &oz::Scan, smp: &oz::Sample| choose_bits((m, n, k), alpha, nearest, sa, sb, smp);
    let exact = AtomicUsize::new(0);
    let host = |sa: &oz::Scan, sb: &oz::Scan, items: &[Item]| -> Vec<f64> {
        let mut out = vec![0.0f64; items.len()];
        let threads = threads::nthreads();
        let parts = items.len().min(threads * 4).max(1);
        let op = SendPtr(out.as_mut_ptr());
        threads::for_each_part(threads, parts, |part| {
            let mut acc = Exact::new();
            let range = (part * items.len() / parts)..((part + 1) * items.len() / parts);
            let mut n_exact = 0;
            for x in range {
                let it = &items[x];
                let ieee = sa.bad[it.i] || sb.bad[it.j] || !it.old.is_finite();
                n_exact += usize::from(!ieee);
                // SAFETY: each part writes its own range of `out`.
                unsafe { *op.get().add(x) = element(ieee, it.row, it.col, alpha, beta, it.old, &mut acc) };
            }
            exact.fetch_add(n_exact, Relaxed);
        });
        out
    };
    let stats = oz::dgemm(ex, call, nearest, choose, host)?;
    report.exact = exact.into_inner();
    report.ieee = stats.listed - report.exact;
    report.certified = m * n - stats.listed;
    report.bits = stats.beta;
    report.moduli = stats.moduli;
    report.products = stats.moduli;
    set_last(report);
    if trace::enabled() {
        let [p0, p1, p2] = stats.phases;
        let shape = format!(
            "ta={ta:?} tb={tb:?} m={m} n={n} k={k} accurate ({}) on the GPU: int8 CRT bits={} moduli={} blocks={} certified={} exact={} ieee={} ms: scan {:.2}, moduli {:.2}, host {:.2}{}",
            if nearest { "nearest" } else { "faithful" },
            stats.beta,
            stats.moduli,
            stats.blocks,
            report.certified,
            report.exact,
            report.ieee,
            p0 * 1e3,
            p1 * 1e3,
            p2 * 1e3,
            if stats.steps.is_empty() {
                String::new()
            } else {
                let s: Vec<String> = stats.steps.iter().map(|(w, t)| format!("{w} {:.2}", t * 1e3)).collect();
                format!(" (profile: {})", s.join(", "))
            }
        );
        trace::line("dgemm", &shape, "gpu", 0, start.elapsed().as_secs_f64());
    }
    Ok(report)
}

/// An accurate call on device memory run by the host's path on copies: A, B and C downloaded
/// (`parts` doubles per element: 1 real, 2 complex), `f` run on them (pointers and leading
/// dimensions in elements), C uploaded. C is untouched unless the upload runs.
fn on_host_copies(
    ex: &crate::gpu::Exec,
    (ta, tb): (Trans, Trans),
    (m, n, k): (usize, usize, usize),
    parts: usize,
    (a, b, c): (crate::gpu::DMat, crate::gpu::DMat, crate::gpu::DMat),
    f: impl FnOnce((*const f64, usize), (*const f64, usize), (*mut f64, usize)) -> Report,
) -> crate::gpu::Result<Report> {
    use crate::gpu::ozaki as oz;
    let len = |rows: usize, cols: usize, ld: i64| parts * (ld as usize * (cols - 1) + rows);
    let (ra, ca) = if ta == Trans::No { (m, k) } else { (k, m) };
    let (rb, cb) = if tb == Trans::No { (k, n) } else { (n, k) };
    // A and B are read only when k > 0 (else their pointers may be anything).
    let (ha, hb) = if k == 0 {
        (Vec::new(), Vec::new())
    } else {
        (oz::download(ex, a.ptr, len(ra, ca, a.ld))?, oz::download(ex, b.ptr, len(rb, cb, b.ld))?)
    };
    let mut hc = oz::download(ex, c.ptr, len(m, n, c.ld))?;
    let (la, lb, lc) = (a.ld as usize, b.ld as usize, c.ld as usize);
    let mut r = f((ha.as_ptr(), la), (hb.as_ptr(), lb), (hc.as_mut_ptr(), lc));
    oz::upload(ex, c.ptr, &hc)?;
    r.gpu = false;
    set_last(r);
    Ok(r)
}

/// ZGEMM in accurate mode on device memory. With real alpha and beta (LAPACK's calls), the GPU's
/// scheme on the real view of [`zgemm`] ([`Scalars`]): op(A) and op(B) expanded on the device
/// (`gpu::ozaki::zexpand`: 2m x 2k and 2k x n real matrices, twice A's memory) and multiplied by
/// [`device_dgemm`] into C's real view (2m x n, ld 2 ldc): four real products' worth of int8
/// GEMMs, the same certificate, the same bits as the host for `Nearest`. Otherwise (a complex
/// alpha or beta, non-finite scalars, alpha = 0, k = 0 or 2k past `gpu::ozaki::MAX_K`):
/// [`zgemm`] on the host on copies (C untouched unless the result is uploaded). `alpha`, `beta`
/// as [re, im]; leading dimensions in complex elements.
#[allow(clippy::too_many_arguments)]
pub fn device_zgemm(
    ex: &crate::gpu::Exec,
    rounding: Rounding,
    ta: Trans,
    tb: Trans,
    (m, n, k): (usize, usize, usize),
    alpha: [f64; 2],
    a: crate::gpu::DMat,
    b: crate::gpu::DMat,
    beta: [f64; 2],
    c: crate::gpu::DMat,
) -> crate::gpu::Result<Report> {
    if m == 0 || n == 0 {
        return Ok(Report::default());
    }
    let real = alpha[1] == 0.0 && beta[1] == 0.0 && alpha[0] != 0.0;
    let finite = alpha.iter().chain(&beta).all(|x| x.is_finite());
    if real && finite && k > 0 && 2 * k <= crate::gpu::ozaki::MAX_K {
        let (xa, xb) = crate::gpu::ozaki::zexpand(ex, (ta, tb), (m, n, k), a, b)?;
        let dm = |d: &crate::gpu::DeviceBuffer, ld: usize| crate::gpu::DMat { ptr: d.ptr, ld: ld as i64 };
        let cv = crate::gpu::DMat { ptr: c.ptr, ld: 2 * c.ld };
        let (no, dims) = (Trans::No, (2 * m, n, 2 * k));
        let rep = device_dgemm(ex, rounding, no, no, dims, alpha[0], dm(&xa, 2 * m), dm(&xb, 2 * k), beta[0], cv);
        // The expanded operands are freed only once the stream is done with them.
        let synced = ex.rt.sync(ex.stream);
        let rep = rep?;
        synced?;
        return Ok(rep);
    }
    on_host_copies(ex, (ta, tb), (m, n, k), 2, (a, b, c), |(a, la), (b, lb), (c, lc)| {
        // SAFETY: the copies hold every element the shapes and leading dimensions address.
        unsafe { zgemm(rounding, ta, tb, m, n, k, alpha, a, la, b, lb, beta, c, lc) }
    })
}

/// Whether a host-memory accurate DGEMM of this size should run on the GPU: one is usable (not
/// forced off by `HYBLAS_DEVICE=cpu`, no device error so far, a real cuBLAS), and the call has
/// at least `HYBLAS_OZAKI_GPU_MIN_FLOPS` (2·256³) flops. Copies included, the GPU's scheme is far
/// cheaper than the CPU path: 76.7 against 379 ms at n = 2048 on an H200 host's 16 cores, 269
/// against 3130 ms at 4096 (docs/ozaki.md).
pub fn host_call_on_gpu(m: usize, n: usize, k: usize) -> Option<&'static crate::gpu::Runtime> {
    use super::offload::{self as off, Force, Side};
    let flops = 2.0 * m as f64 * n as f64 * k as f64;
    if flops < SETTINGS.gpu_min_flops || k > crate::gpu::ozaki::MAX_K {
        return None;
    }
    if matches!(off::forced_gemm(), Some(Force::Side(Side::Cpu, _))) || off::disabled() {
        return None;
    }
    let rt = crate::gpu::Runtime::current().ok()?;
    crate::gpu::vendor::present().then_some(rt)
}

/// [`dgemm`] on host memory run by the GPU's scheme: A, B and C copied to the device, the
/// result copied back into C's m x n elements (its other rows untouched). Any failure before
/// the copy back leaves C untouched (the caller then runs the CPU path).
///
/// # Safety
/// As [`dgemm`].
#[allow(clippy::too_many_arguments)]
pub unsafe fn dgemm_on_gpu(
    rt: &'static crate::gpu::Runtime,
    rounding: Rounding,
    ta: Trans,
    tb: Trans,
    (m, n, k): (usize, usize, usize),
    alpha: f64,
    (a, lda): (*const f64, usize),
    (b, ldb): (*const f64, usize),
    beta: f64,
    (c, ldc): (*mut f64, usize),
) -> crate::gpu::Result<Report> {
    use crate::gpu::{DMat, DeviceBuffer, Exec};
    rt.bind()?;
    let span = |rows: usize, cols: usize, ld: usize| ld * (cols - 1) + rows;
    let (ra, ca) = if ta == Trans::No { (m, k) } else { (k, m) };
    let (rb, cb) = if tb == Trans::No { (k, n) } else { (n, k) };
    let da = DeviceBuffer::from_slice(std::slice::from_raw_parts(a, span(ra, ca, lda)))?;
    let db = DeviceBuffer::from_slice(std::slice::from_raw_parts(b, span(rb, cb, ldb)))?;
    // C packed to m x n (its padding rows stay on the host, untouched).
    let mut packed = vec![0.0f64; m * n];
    if beta != 0.0 {
        for j in 0..n {
            packed[j * m..(j + 1) * m].copy_from_slice(std::slice::from_raw_parts(c.add(j * ldc), m));
        }
    }
    let dc = DeviceBuffer::from_slice(&packed)?;
    let ex = Exec::own(rt);
    let dm = |d: &DeviceBuffer, ld: usize| DMat { ptr: d.ptr, ld: ld as i64 };
    let rep = device_dgemm(&ex, rounding, ta, tb, (m, n, k), alpha, dm(&da, lda), dm(&db, ldb), beta, dm(&dc, m))?;
    rt.sync(ex.stream)?;
    let out: Vec<f64> = dc.to_vec()?;
    for j in 0..n {
        std::slice::from_raw_parts_mut(c.add(j * ldc), m).copy_from_slice(&out[j * m..(j + 1) * m]);
    }
    Ok(rep)
}
