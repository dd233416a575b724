//! Strassen-Winograd GEMM (seed 003): the schedule, over any memory and any GEMM.
//!
//! `C := alpha*op(A)*op(B) + beta*C` as seven half-size products and fifteen additions per
//! level instead of eight products, on whatever [`Ops`] provides: the real cuBLAS GEMM and
//! hyblas's addition kernels on device memory (the GPU engine), plain loops in the tests. This
//! file owns the arithmetic of the schedule (which block goes where, peeling odd sizes, alpha and
//! beta, the workspace); nothing here touches a device.
//!
//! **The schedule** (Winograd's form, 7 products and 15 additions; Douglas et al. 1994, Boyer et
//! al. 2009), with C's four quadrants as scratch and two temporaries, `X` (the size of an
//! op(A) quadrant) and `Y` (an op(B) quadrant):
//!
//! ```text
//!  1 X = A11 - A21         S3      12 X = A11 B11          P1
//!  2 Y = B22 - B12         T3      13 C12 = X + C12        U2 = P1 + P6
//!  3 C21 = X Y             P7      14 C21 = C12 + C21      U3 = U2 + P7
//!  4 X = A21 + A22         S1      15 C12 = C12 + C22      U4 = U2 + P5
//!  5 Y = B12 - B11         T1      16 C22 = C21 + C22      C22 = U3 + P5
//!  6 C22 = X Y             P5      17 C12 = C12 + C11      C12 = U4 + P3
//!  7 X = X - A11           S2      18 Y = Y - B21          T4 = T2 - B21
//!  8 Y = B22 - Y           T2      19 C11 = A22 Y          P4
//!  9 C12 = X Y             P6      20 C21 = C21 - C11      C21 = U3 - P4
//! 10 X = A12 - X           S4      21 C11 = A12 B21        P2
//! 11 C11 = X B22           P3      22 C11 = C11 + X        C11 = P1 + P2
//! ```
//!
//! Every product writes its block (beta 0), so a level below needs no copy of C. X holds an
//! op(A) quadrant, then P1, so it is h x max(k/2, n/2). The inputs are never written (a BLAS's A and B are read-only: the seed's schedule with
//! no temporaries overwrites them, and a floating-point "restore" by subtracting back is not
//! exact). X and Y come from the caller's workspace: [`workspace`] elements, allocated once by
//! the caller's pool, never in the call.
//!
//! **Transposes** cost nothing: quadrant (i, j) of op(A) = A^T is the transpose of A's stored
//! quadrant (j, i), and a sum of transposed blocks is the transpose of the sum of the stored
//! blocks. So every addition works on stored blocks, and the temporaries keep op(A)'s (op(B)'s)
//! orientation for the GEMMs that read them.
//!
//! **Any size**: the product runs on the even part (m, n, k rounded down to even at every
//! level) and the odd edges are added by thin GEMMs: the last column of C (n odd), the last row
//! (m odd), the last k-slice as a rank-1 update (k odd).
//!
//! **alpha, beta**: alpha goes into every product. beta == 0 writes C without reading it (NaN
//! in C is overwritten); otherwise the even part's product is computed into the workspace `W`
//! (m x n, part of [`workspace`]) and C := W + beta*C in one pass. alpha == 0 (or k == 0) reads
//! neither A nor B: C := beta*C.
//!
//! **Levels**: a product at level l is itself a Strassen-Winograd product at level l - 1 with
//! its own X and Y (beta == 0 into its target block), down to plain GEMMs at level 0.

use super::kernels::{Args, Family, Function, Launch};
use super::{DMat, Exec, GpuError};
use crate::types::{Scalar, Trans};

/// A block of a column-major matrix: the address of its (0, 0) element (device or host) and
/// its leading dimension, in elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Blk {
    pub ptr: u64,
    pub ld: usize,
}

impl Blk {
    /// The block whose (0, 0) element is this one's (i, j), for elements of `T`.
    pub fn at<T>(self, i: usize, j: usize) -> Blk {
        Blk { ptr: self.ptr + ((i + j * self.ld) * std::mem::size_of::<T>()) as u64, ld: self.ld }
    }
}

/// What the schedule runs on. Blocks never overlap unless an argument says they may.
pub trait Ops<T: Scalar> {
    type Error;
    /// `c := alpha*op(a)*op(b) + beta*c`, `op(a)` m x k, `op(b)` k x n (`ta`, `tb`: transposed;
    /// the stored blocks are k x m and n x k then). beta == 0 must not read c.
    #[allow(clippy::too_many_arguments)]
    fn gemm(
        &mut self,
        ta: bool,
        tb: bool,
        m: usize,
        n: usize,
        k: usize,
        alpha: T,
        a: Blk,
        b: Blk,
        beta: T,
        c: Blk,
    ) -> Result<(), Self::Error>;
    /// `z := x + s*y` elementwise on `rows` x `cols` blocks, `s` = 1 or -1; `z` may be `x` or
    /// `y` itself (the same block, never a partial overlap).
    fn add(&mut self, rows: usize, cols: usize, x: Blk, s: T, y: Blk, z: Blk) -> Result<(), Self::Error>;
    /// `c := w + beta*c` elementwise (`beta` != 0).
    fn axpby(&mut self, rows: usize, cols: usize, w: Blk, beta: T, c: Blk) -> Result<(), Self::Error>;
    /// `c := beta*c` elementwise (0 overwrites, NaN included).
    fn scale(&mut self, rows: usize, cols: usize, beta: T, c: Blk) -> Result<(), Self::Error>;
    /// Steps 13-17 of the schedule on h x w blocks: with P1 in `p` and P3, P6, P7, P5 in C11,
    /// C12, C21, C22 (`c` is C11; the others are at its (0, w), (h, 0), (h, w)), U2 = P1 + P6,
    /// U3 = U2 + P7, U4 = U2 + P5, then C22 = U3 + P5, C12 = U4 + P3, C21 = U3. The default
    /// runs them as five additions; a fused pass must give the same bits (the same additions in
    /// the same order).
    fn combine(&mut self, h: usize, w: usize, p: Blk, c: Blk) -> Result<(), Self::Error> {
        let (c11, c12, c21, c22) = (c, c.at::<T>(0, w), c.at::<T>(h, 0), c.at::<T>(h, w));
        let one = T::one();
        self.add(h, w, p, one, c12, c12)?; //   13 U2
        self.add(h, w, c12, one, c21, c21)?; // 14 U3
        self.add(h, w, c12, one, c22, c12)?; // 15 U4
        self.add(h, w, c21, one, c22, c22)?; // 16 C22
        self.add(h, w, c12, one, c11, c12) //   17 C12
    }
}

/// One GEMM call: `c := alpha*op(a)*op(b) + beta*c`, op(a) m x k, op(b) k x n.
#[derive(Clone, Copy, Debug)]
pub struct Gemm<T> {
    pub ta: bool,
    pub tb: bool,
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub alpha: T,
    pub a: Blk,
    pub b: Blk,
    pub beta: T,
    pub c: Blk,
}

/// Elements of workspace [`gemm`] needs for an m x n x k product at `levels` levels: the
/// temporaries of every level (X and Y, each level's half the size of the one above), and W
/// (m x n) when beta != 0.
pub fn workspace(m: usize, n: usize, k: usize, levels: u32, beta_zero: bool) -> usize {
    let w = if beta_zero || levels == 0 { 0 } else { m * n };
    w + temporaries(m, n, k, levels)
}

/// X and Y of `levels` levels below an m x n x k product (even parts, halved per level).
fn temporaries(m: usize, n: usize, k: usize, levels: u32) -> usize {
    if levels == 0 || m < 2 || n < 2 || k < 2 {
        return 0;
    }
    let (h, w, d) = (m / 2, n / 2, k / 2);
    x_len(h, w, d) + d * w + temporaries(h, w, d, levels - 1)
}

/// Elements of X for quadrants h x d (op(A)) and d x w (op(B)): an op(A) quadrant, later P1
/// (h x w).
fn x_len(h: usize, w: usize, d: usize) -> usize {
    h * d.max(w)
}

/// `g` by Strassen-Winograd at `levels` levels (0: one plain GEMM) on `ops`, with `work` (at
/// least [`workspace`] elements of `T`, not overlapping A, B or C) for its temporaries.
pub fn gemm<T: Scalar, O: Ops<T>>(ops: &mut O, g: Gemm<T>, levels: u32, work: Blk) -> Result<(), O::Error> {
    let Gemm { ta, tb, m, n, k, alpha, a, b, beta, c } = g;
    if m == 0 || n == 0 {
        return Ok(());
    }
    if alpha.is_zero() || k == 0 {
        return if beta == T::one() { Ok(()) } else { ops.scale(m, n, beta, c) };
    }
    if levels == 0 || m < 2 || n < 2 || k < 2 {
        return ops.gemm(ta, tb, m, n, k, alpha, a, b, beta, c);
    }
    let (me, ne, ke) = (m & !1, n & !1, k & !1);
    // op(A)'s (i, j) element in storage, and op(B)'s.
    let at = |i: usize, j: usize| if ta { a.at::<T>(j, i) } else { a.at::<T>(i, j) };
    let bt = |i: usize, j: usize| if tb { b.at::<T>(j, i) } else { b.at::<T>(i, j) };
    // The even part: C[..me, ..ne] := alpha*op(A)[..me, ..ke]*op(B)[..ke, ..ne] + beta*C.
    let even = Gemm { m: me, n: ne, k: ke, ..g };
    if beta.is_zero() {
        level(ops, even, levels, work)?;
    } else {
        // W := alpha*A'B', then C' := W + beta*C'.
        let w = Blk { ptr: work.ptr, ld: me };
        let rest = work.at::<T>(me * ne, 0);
        level(ops, Gemm { c: w, ..even }, levels, Blk { ptr: rest.ptr, ld: 1 })?;
        ops.axpby(me, ne, w, beta, c)?;
    }
    // The odd k-slice: C' += alpha*op(A)[..me, ke]*op(B)[ke, ..ne].
    if ke < k {
        ops.gemm(ta, tb, me, ne, 1, alpha, at(0, ke), bt(ke, 0), T::one(), c)?;
    }
    // The last column (rows ..me) and the last row (every column).
    if ne < n {
        ops.gemm(ta, tb, me, 1, k, alpha, a, bt(0, ne), beta, c.at::<T>(0, ne))?;
    }
    if me < m {
        ops.gemm(ta, tb, 1, n, k, alpha, at(me, 0), b, beta, c.at::<T>(me, 0))?;
    }
    Ok(())
}

/// One level of the schedule (the module's table) on an even m x n x k with beta == 0 (the
/// caller peeled the odd edges and handles beta); products below by [`gemm`] at `levels - 1`.
fn level<T: Scalar, O: Ops<T>>(ops: &mut O, g: Gemm<T>, levels: u32, work: Blk) -> Result<(), O::Error> {
    let Gemm { ta, tb, m, n, k, alpha, a, b, c, .. } = g;
    let (h, w, d) = (m / 2, n / 2, k / 2);
    // Quadrant (i, j) of op(A) as stored (a transposed operand's stored quadrant is (j, i)).
    let qa = |i: usize, j: usize| if ta { a.at::<T>(j * d, i * h) } else { a.at::<T>(i * h, j * d) };
    let qb = |i: usize, j: usize| if tb { b.at::<T>(j * w, i * d) } else { b.at::<T>(i * d, j * w) };
    let qc = |i: usize, j: usize| c.at::<T>(i * h, j * w);
    // Stored shapes of an op(A) and an op(B) quadrant (rows, cols), and X and Y in that shape.
    let (ar, ac) = if ta { (d, h) } else { (h, d) };
    let (br, bc) = if tb { (w, d) } else { (d, w) };
    let x = Blk { ptr: work.ptr, ld: ar };
    let y = Blk { ptr: work.at::<T>(x_len(h, w, d), 0).ptr, ld: br };
    let below = Blk { ptr: work.at::<T>(x_len(h, w, d) + br * bc, 0).ptr, ld: 1 };
    let (one, neg) = (T::one(), -T::one());
    // A half-size product into `into` (beta 0), at the level below.
    let prod = |ops: &mut O, pa: Blk, pb: Blk, into: Blk| {
        let sub = Gemm { ta, tb, m: h, n: w, k: d, alpha, a: pa, b: pb, beta: T::zero(), c: into };
        gemm(ops, sub, levels - 1, below)
    };
    let (a11, a12, a21, a22) = (qa(0, 0), qa(0, 1), qa(1, 0), qa(1, 1));
    let (b11, b12, b21, b22) = (qb(0, 0), qb(0, 1), qb(1, 0), qb(1, 1));
    let (c11, c12, c21, c22) = (qc(0, 0), qc(0, 1), qc(1, 0), qc(1, 1));
    ops.add(ar, ac, a11, neg, a21, x)?; //  1 S3
    ops.add(br, bc, b22, neg, b12, y)?; //  2 T3
    prod(ops, x, y, c21)?; //              3 P7
    ops.add(ar, ac, a21, one, a22, x)?; //  4 S1
    ops.add(br, bc, b12, neg, b11, y)?; //  5 T1
    prod(ops, x, y, c22)?; //              6 P5
    ops.add(ar, ac, x, neg, a11, x)?; //    7 S2
    ops.add(br, bc, b22, neg, y, y)?; //    8 T2
    prod(ops, x, y, c12)?; //              9 P6
    ops.add(ar, ac, a12, neg, x, x)?; //   10 S4
    prod(ops, x, b22, c11)?; //            11 P3
    let p1 = Blk { ptr: x.ptr, ld: h }; // (X holds h * max(d, w) elements)
    prod(ops, a11, b11, p1)?; //           12 P1
    ops.combine(h, w, p1, c11)?; //        13-17 U2, U3, U4, C22, C12
    ops.add(br, bc, y, neg, b21, y)?; //   18 T4
    prod(ops, a22, y, c11)?; //            19 P4
    ops.add(h, w, c21, neg, c11, c21)?; // 20 C21
    prod(ops, a12, b21, c11)?; //          21 P2
    ops.add(h, w, c11, one, p1, c11) //    22 C11
}

// ---- On the device ----

/// The schedule's operations on device memory, on `ex`'s stream: products by the real cuBLAS
/// GEMM (a handle of hyblas's own bound to the stream, host scalars; `vendor_calls`), additions
/// by kernels/strassen.cu.
pub struct Device<'a> {
    ex: &'a Exec<'a>,
    add: Function,
    scale: Function,
    combine: Function,
}

/// Threads per block of the addition kernels, and elements per thread (`STR_U`).
const ADD_THREADS: u32 = 256;
const ADD_UNROLL: usize = 4;

/// The launch of an addition pass over a rows x cols block (kernels/strassen.cu's layout).
fn add_launch(rows: usize, cols: usize) -> Launch {
    let per_block = ADD_THREADS as usize * ADD_UNROLL;
    Launch { grid: (rows.div_ceil(per_block) as u32, cols.min(65535) as u32, 1), block: (ADD_THREADS, 1, 1), smem: 0 }
}

fn trans(t: bool) -> Trans {
    if t {
        Trans::Trans
    } else {
        Trans::No
    }
}

fn dmat(b: Blk) -> DMat {
    DMat { ptr: b.ptr, ld: b.ld as i64 }
}

impl<'a> Device<'a> {
    /// The addition kernels of precision `T` (real only), looked up before anything runs: a unit
    /// still compiling answers `NotReady` here, with nothing enqueued.
    pub fn new<T: Scalar>(ex: &'a Exec<'a>) -> super::Result<Self> {
        if T::IS_COMPLEX {
            return Err(GpuError::Unsupported("Strassen-Winograd runs real GEMMs only"));
        }
        let f = |name| ex.function::<T>(Family::Strassen, name);
        Ok(Device { ex, add: f("mat_add")?, scale: f("mat_scale")?, combine: f("strassen_combine")? })
    }

    fn pass(&self, f: Function, rows: usize, cols: usize, args: &mut Args) -> super::Result<()> {
        f.launch(add_launch(rows, cols), self.ex.stream, args)
    }
}

impl<T: Scalar> Ops<T> for Device<'_> {
    type Error = GpuError;
    fn gemm(
        &mut self,
        ta: bool,
        tb: bool,
        m: usize,
        n: usize,
        k: usize,
        alpha: T,
        a: Blk,
        b: Blk,
        beta: T,
        c: Blk,
    ) -> super::Result<()> {
        let (m, n, k) = (m as i64, n as i64, k as i64);
        super::vendor_calls::vendor_gemm::<T>(
            self.ex,
            trans(ta),
            trans(tb),
            m,
            n,
            k,
            alpha,
            dmat(a),
            dmat(b),
            beta,
            dmat(c),
        )
    }
    fn add(&mut self, rows: usize, cols: usize, x: Blk, s: T, y: Blk, z: Blk) -> super::Result<()> {
        let mut a = Args::new();
        a.arg(rows as i64).arg(cols as i64).arg(x.ptr).arg(x.ld as i64).arg(s);
        a.arg(y.ptr).arg(y.ld as i64).arg(z.ptr).arg(z.ld as i64);
        self.pass(self.add, rows, cols, &mut a)
    }
    fn axpby(&mut self, rows: usize, cols: usize, w: Blk, beta: T, c: Blk) -> super::Result<()> {
        // The addition pass with s = beta: c := w + beta*c.
        Ops::<T>::add(self, rows, cols, w, beta, c, c)
    }
    fn scale(&mut self, rows: usize, cols: usize, beta: T, c: Blk) -> super::Result<()> {
        let mut a = Args::new();
        a.arg(rows as i64).arg(cols as i64).arg(beta).arg(c.ptr).arg(c.ld as i64);
        self.pass(self.scale, rows, cols, &mut a)
    }
    fn combine(&mut self, h: usize, w: usize, p: Blk, c: Blk) -> super::Result<()> {
        let q = |i: usize, j: usize| c.at::<T>(i, j).ptr;
        let mut a = Args::new();
        a.arg(h as i64).arg(w as i64).arg(p.ptr).arg(p.ld as i64);
        a.arg(q(0, 0)).arg(q(0, w)).arg(q(h, 0)).arg(q(h, w)).arg(c.ld as i64);
        self.pass(self.combine, h, w, &mut a)
    }
}

/// `C := alpha*op(A)*op(B) + beta*C` on device memory by Strassen-Winograd at `levels` levels,
/// enqueued on `ex`'s stream (the caller waits). Real precisions; a conjugate transpose is a
/// transpose. The temporaries come from the stream's workspace (`StreamScratch::workspace`,
/// grow-only: allocated by the first call that needs more, reused after). Whatever can fail
/// before the first launch does so with C untouched: complex data, the addition kernels still
/// compiling (`NotReady`), no real cuBLAS, a workspace the device cannot hold.
#[allow(clippy::too_many_arguments)]
pub fn run<T: Scalar>(
    ex: &Exec,
    ta: Trans,
    tb: Trans,
    m: i64,
    n: i64,
    k: i64,
    alpha: T,
    a: DMat,
    b: DMat,
    beta: T,
    c: DMat,
    levels: u32,
) -> super::Result<()> {
    let mut dev = Device::new::<T>(ex)?;
    if !super::vendor::present() {
        return Err(GpuError::Unavailable("no real cuBLAS for Strassen's products".into()));
    }
    let (m, n, k) = (m.max(0) as usize, n.max(0) as usize, k.max(0) as usize);
    let bytes = workspace(m, n, k, levels, beta.is_zero()) * std::mem::size_of::<T>();
    let scratch = ex.rt.scratch(ex.stream);
    let mut scratch = scratch.lock();
    let work = if bytes > 0 { scratch.workspace(bytes)? } else { 0 };
    let blk = |d: DMat| Blk { ptr: d.ptr, ld: d.ld as usize };
    let g = Gemm { ta: ta != Trans::No, tb: tb != Trans::No, m, n, k, alpha, a: blk(a), b: blk(b), beta, c: blk(c) };
    gemm(&mut dev, g, levels, Blk { ptr: work, ld: 1 })?;
    RUNS.with(|r| r.set(r.get() + 1));
    Ok(())
}

thread_local! {
    static RUNS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Calls [`run`] has enqueued on this thread (tests check a call's route by it; per thread, so
/// tests running side by side do not count each other's).
pub fn runs() -> u64 {
    RUNS.with(|r| r.get())
}

// ---- The model (seed 003, eq. 5-7) ----

/// The seed's model with this device's measured rates: a product's time is the real cuBLAS
/// GEMM's at its size (the measured table), an addition pass moves its bytes at the measured
/// addition bandwidth plus a launch, and a level costs 7 products at the level below plus its
/// 11 passes (8 operand additions, the fused combine, 2 result additions). The planner runs
/// Strassen only where this predicts a gain of [`MIN_GAIN`] over cuBLAS.
#[derive(Clone, Debug)]
pub struct Model {
    /// cuBLAS GEMM rates (flop/s) of square products, by increasing n, for s (0) and d (1).
    pub rates: [Vec<(f64, f64)>; 2],
    /// Bytes per second an addition pass moves (reads plus writes).
    pub add_bw: f64,
    /// Fixed time of one launch (a pass or a product), us.
    pub launch_us: f64,
    /// Where the numbers came from ("shipped sm90", "tuned", "built-in ...").
    pub source: String,
}

/// cuBLAS 13 on an H200, TFLOP/s of square products (`../shared/docs/anchors.md`; the shipped
/// sm90 recipe file's `strassen` lines, measured by `hyblas tune strassen`, replace them).
const H200_RATES: [&[(f64, f64)]; 2] = [
    &[(4096.0, 50.3e12), (8192.0, 50.6e12), (16384.0, 52.8e12)],
    &[(2048.0, 44.4e12), (4096.0, 51.9e12), (8192.0, 55.5e12), (16384.0, 51.6e12)],
];

impl Model {
    /// Hopper's anchors; other devices scaled by their SM count (a guess until tuned).
    pub fn builtin(p: &super::runtime::DeviceProps) -> Model {
        let f = if p.cc.0 == 9 { 1.0 } else { p.sm_count as f64 / 132.0 };
        Model {
            rates: H200_RATES.map(|r| r.iter().map(|&(n, x)| (n, x * f)).collect()),
            add_bw: 3.6e12 * f,
            launch_us: 3.0,
            source: if f == 1.0 { "built-in sm90".into() } else { format!("built-in, sm90 scaled by {f:.2}") },
        }
    }

    /// `strassen <precision> <n> <us>` (one cuBLAS product of n x n x n) and `strassen add_bw
    /// <bytes/s>` lines over these numbers; a precision with any measured line drops the
    /// built-in rates.
    pub fn with_lines(mut self, text: &str, label: &str) -> Model {
        let mut measured: [Vec<(f64, f64)>; 2] = [Vec::new(), Vec::new()];
        let mut any = false;
        for line in text.lines() {
            let f: Vec<&str> = line.split_whitespace().collect();
            match f[..] {
                ["strassen", "add_bw", v] => {
                    if let Ok(v) = v.parse::<f64>() {
                        if v > 0.0 && v.is_finite() {
                            self.add_bw = v;
                            any = true;
                        }
                    }
                }
                ["strassen", p @ ("s" | "d"), n, us] => {
                    if let (Ok(n), Ok(us)) = (n.parse::<f64>(), us.parse::<f64>()) {
                        if n >= 1.0 && us > 0.0 && us.is_finite() {
                            measured[(p == "d") as usize].push((n, 2.0 * n * n * n / (us * 1e-6)));
                        }
                    }
                }
                _ => {}
            }
        }
        for (r, m) in self.rates.iter_mut().zip(measured) {
            if !m.is_empty() {
                *r = m;
                r.sort_by(|a, b| a.0.total_cmp(&b.0));
                any = true;
            }
        }
        if any {
            self.source = label.into();
        }
        self
    }

    /// cuBLAS's rate at the size of an m x n x k product (the cube root of mnk), log-log
    /// interpolated in the table and flat past its ends.
    fn rate(&self, dbl: bool, m: f64, n: f64, k: f64) -> f64 {
        let t = &self.rates[dbl as usize];
        let s = (m * n * k).cbrt();
        match t.iter().position(|&(x, _)| x >= s) {
            Some(0) => t[0].1,
            None => t[t.len() - 1].1,
            Some(i) => {
                let ((x0, r0), (x1, r1)) = (t[i - 1], t[i]);
                let w = (s.ln() - x0.ln()) / (x1.ln() - x0.ln());
                (r0.ln() * (1.0 - w) + r1.ln() * w).exp()
            }
        }
    }

    /// Predicted us of one cuBLAS product: its flops at the table's rate, or its bytes at the
    /// addition bandwidth where it reads more than it computes (the thin fix-up products).
    pub fn gemm_us(&self, es: usize, m: usize, n: usize, k: usize) -> f64 {
        let (mf, nf, kf) = (m as f64, n as f64, k as f64);
        let flops = 2.0 * mf * nf * kf / self.rate(es == 8, mf, nf, kf);
        let bytes = (mf * kf + kf * nf + 2.0 * mf * nf) * es as f64 / self.add_bw;
        flops.max(bytes) * 1e6 + self.launch_us
    }

    /// Predicted us of [`gemm`] at `levels` levels (0: one cuBLAS product), following its
    /// structure: the even part, W's pass when beta != 0, the fix-up products of odd sizes.
    pub fn predict_us(&self, es: usize, m: usize, n: usize, k: usize, levels: u32, beta_zero: bool) -> f64 {
        if m == 0 || n == 0 || k == 0 {
            return 0.0;
        }
        if levels == 0 || m < 2 || n < 2 || k < 2 {
            return self.gemm_us(es, m, n, k);
        }
        let (me, ne, ke) = (m & !1, n & !1, k & !1);
        let (h, w, d) = (me / 2, ne / 2, ke / 2);
        let pass = |elems: usize| elems as f64 * es as f64 / self.add_bw * 1e6 + self.launch_us;
        // 8 operand additions (3 accesses each), the combine (5 reads, 3 writes), 2 result
        // additions.
        let adds = 4.0 * pass(3 * h * d) + 4.0 * pass(3 * d * w) + pass(8 * h * w) + 2.0 * pass(3 * h * w);
        let mut t = 7.0 * self.predict_us(es, h, w, d, levels - 1, true) + adds;
        if !beta_zero {
            t += pass(3 * me * ne);
        }
        if ke < k {
            t += self.gemm_us(es, me, ne, 1);
        }
        if ne < n {
            t += self.gemm_us(es, me, 1, k);
        }
        if me < m {
            t += self.gemm_us(es, 1, n, k);
        }
        t
    }
}

/// The least predicted gain over cuBLAS for auto to pick Strassen (`HYBLAS_STRASSEN_MIN_GAIN`,
/// percent; default 5: the model's error on an H200 stays under that, so a call it takes is
/// not slower than cuBLAS).
pub static MIN_GAIN: once_cell::sync::Lazy<f64> =
    once_cell::sync::Lazy::new(|| crate::config::threshold("HYBLAS_STRASSEN_MIN_GAIN", 5) as f64 / 100.0);

/// The deepest level auto considers (the seed's two; a third level's products are too small
/// to run near cuBLAS's peak on any size a device holds).
pub const MAX_LEVELS: u32 = 2;

/// The model's verdict on one call: predicted us at 0, 1, 2 levels, and auto's pick.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Prediction {
    pub us: [f64; 3],
    pub levels: u32,
}

impl Model {
    /// Auto's choice for an m x n x k product of `es`-byte reals: the level predicted fastest,
    /// where it beats cuBLAS by at least [`MIN_GAIN`]; else 0.
    pub fn choose(&self, es: usize, m: usize, n: usize, k: usize, beta_zero: bool) -> Prediction {
        let us = [0, 1, 2].map(|l| self.predict_us(es, m, n, k, l, beta_zero));
        let best = (1..=MAX_LEVELS).min_by(|&a, &b| us[a as usize].total_cmp(&us[b as usize])).unwrap_or(1);
        let levels = if us[best as usize] * (1.0 + *MIN_GAIN) <= us[0] { best } else { 0 };
        Prediction { us, levels }
    }
}

static MODELS: [once_cell::sync::OnceCell<parking_lot::RwLock<std::sync::Arc<Model>>>; 64] =
    [const { once_cell::sync::OnceCell::new() }; 64];

/// The shipped Hopper recipes (`kernels/recipes/sm90.txt`): their `strassen` lines, where
/// present, are the built-in Hopper model.
const SHIPPED_SM90: &str = include_str!("../../kernels/recipes/sm90.txt");

/// The model of a device with these properties: built in, the shipped Hopper numbers, then a
/// tuned recipe file where one exists.
pub fn model_for(p: &super::runtime::DeviceProps) -> Model {
    let mut m = Model::builtin(p);
    if p.cc == (9, 0) {
        m = m.with_lines(SHIPPED_SM90, "shipped sm90");
    }
    let tuned = std::fs::read_to_string(super::tune::recipe_path(p)).unwrap_or_default();
    m.with_lines(&tuned, "tuned")
}

fn slot(rt: &super::Runtime) -> &'static parking_lot::RwLock<std::sync::Arc<Model>> {
    let i = (rt.props.ordinal.max(0) as usize).min(MODELS.len() - 1);
    MODELS[i].get_or_init(|| parking_lot::RwLock::new(std::sync::Arc::new(model_for(&rt.props))))
}

/// The model of `rt`'s device (read once; [`reload`] after `hyblas tune strassen`).
pub fn model(rt: &super::Runtime) -> std::sync::Arc<Model> {
    slot(rt).read().clone()
}

/// Read the recipe file again (after `hyblas tune strassen` wrote it).
pub fn reload(rt: &super::Runtime) {
    *slot(rt).write() = std::sync::Arc::new(model_for(&rt.props));
}

/// Square sizes `hyblas tune strassen` times cuBLAS at: the sub-products of the sizes Strassen
/// is for (n >= 2048 at one or two levels).
/// Steps of 256 from 1024 to 8192: cuBLAS's rate moves by up to 15% between neighbouring sizes
/// there (its kernel choice: SGEMM at 2304 ran 16% under its neighbours' rate), and a coarser table
/// picked the slower level count for SGEMM at n = 8192..11264 (session 63).
pub const TUNE_SIZES: [usize; 34] = {
    let mut s = [0; 34];
    s[0] = 512;
    s[1] = 768;
    let mut i = 0;
    while i < 29 {
        s[2 + i] = 1024 + 256 * i;
        i += 1;
    }
    s[31] = 10240;
    s[32] = 12288;
    s[33] = 16384;
    s
};

/// Fill `elems` elements of `es` bytes at `dst` with `src` over and over (device copies on `ex`'s
/// stream): large operands with random values, from one small random chunk.
pub fn fill_repeat(ex: &Exec, dst: u64, elems: usize, es: usize, src: &super::DeviceBuffer) -> super::Result<()> {
    use super::driver::{check, sys};
    let len = (src.bytes / es).max(1);
    let mut at = 0;
    while at < elems {
        let take = len.min(elems - at);
        let to = dst + (at * es) as u64;
        check(unsafe { sys::cuMemcpyDtoDAsync_v2(to, src.ptr, take * es, ex.stream) }, "cuMemcpyDtoDAsync")?;
        at += take;
    }
    Ok(())
}

/// Measure the model's numbers on this device: cuBLAS SGEMM and DGEMM (N, N, random data in
/// [-1, 1)) at [`TUNE_SIZES`] and the addition pass's bandwidth (a 8192 x 8192 double addition, beside a
/// device-to-device copy of the same bytes for reference). Returns `strassen ...` lines for
/// the recipe file, and comments.
pub fn calibrate(rt: &'static super::Runtime) -> super::Result<Vec<String>> {
    use super::driver::{check, sys};
    let nmax = *TUNE_SIZES.last().unwrap();
    let bytes = nmax * nmax * 8;
    let new = || super::DeviceBuffer::new(bytes);
    let (a, b, c) = (new()?, new()?, new()?);
    let ex = Exec::own(rt);
    // Random operands of the precision timed: an H200 runs DGEMM on constant data at up to a
    // third more FLOP/s than on random data (less switching, less power; `hyblas tune
    // strassen` on all-ones data timed n = 16384 at 134.5 ms, random data 185 ms).
    let random = |ex: &Exec, es: usize| -> super::Result<()> {
        let len = (1usize << 20) + 7;
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let vals: Vec<f64> = (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
            })
            .collect();
        let src = if es == 4 {
            super::DeviceBuffer::from_slice(&vals.iter().map(|&v| v as f32).collect::<Vec<f32>>())?
        } else {
            super::DeviceBuffer::from_slice(&vals)?
        };
        for buf in [&a, &b] {
            fill_repeat(ex, buf.ptr, buf.bytes / es, es, &src)?;
        }
        ex.rt.sync(ex.stream)
    };
    let timer = super::timing::Timer::new(ex.stream)?;
    let mut lines = vec![format!("# strassen: cuBLAS products (us) and the addition bandwidth, {}", rt.props.name)];
    fn product<T: Scalar>(ex: &Exec, t: &super::timing::Timer, p: [u64; 3], n: usize) -> super::Result<f64> {
        let d = |ptr| DMat { ptr, ld: n as i64 };
        let (one, zero) = (T::one(), T::zero());
        let reps = if n >= 8192 { 3 } else { 7 };
        t.median(1, reps, &mut || {
            super::vendor_calls::vendor_gemm::<T>(
                ex,
                Trans::No,
                Trans::No,
                n as i64,
                n as i64,
                n as i64,
                one,
                d(p[0]),
                d(p[1]),
                zero,
                d(p[2]),
            )
        })
    }
    let p = [a.ptr, b.ptr, c.ptr];
    for (prec, es) in [('s', 4), ('d', 8)] {
        random(&ex, es)?;
        for n in TUNE_SIZES {
            let t = if es == 4 { product::<f32>(&ex, &timer, p, n)? } else { product::<f64>(&ex, &timer, p, n)? };
            lines.push(format!("strassen {prec} {n} {:.1}", t * 1e6));
        }
    }
    let mut dev = Device::new::<f64>(&ex)?;
    let q = 8192usize;
    let blk = |ptr| Blk { ptr, ld: q };
    let add = timer.median(2, 10, &mut || Ops::<f64>::add(&mut dev, q, q, blk(a.ptr), 1.0, blk(b.ptr), blk(c.ptr)))?;
    let copy = timer.median(2, 10, &mut || {
        check(unsafe { sys::cuMemcpyDtoDAsync_v2(c.ptr, a.ptr, q * q * 8, ex.stream) }, "cuMemcpyDtoDAsync")
    })?;
    // The fused combine on 4096 x 4096 quadrants of an 8192 x 8192 C (5 blocks read, 3 written).
    let h = q / 2;
    let combine = timer.median(2, 10, &mut || {
        Ops::<f64>::combine(&mut dev, h, h, Blk { ptr: a.ptr, ld: h }, Blk { ptr: c.ptr, ld: q })
    })?;
    let moved = 3.0 * (q * q * 8) as f64;
    let copy_bw = 2.0 * (q * q * 8) as f64 / copy;
    let combine_bw = 8.0 * (h * h * 8) as f64 / combine;
    lines.push(format!("strassen add_bw {:.4e}", moved / add));
    lines.push(format!(
        "# strassen: addition pass {:.0} GB/s, combine pass {:.0} GB/s, device copy {:.0} GB/s (read + write): {:.0}% and {:.0}% of the copy",
        moved / add / 1e9,
        combine_bw / 1e9,
        copy_bw / 1e9,
        100.0 * (moved / add) / copy_bw,
        100.0 * combine_bw / copy_bw
    ));
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h200() -> Model {
        model_for(&super::super::runtime::DeviceProps::h200())
    }

    #[test]
    fn the_shipped_h200_model_is_measured() {
        let m = h200();
        assert_eq!(m.source, "shipped sm90");
        assert_eq!(m.rates[0].len(), TUNE_SIZES.len());
        assert_eq!(m.rates[1].len(), TUNE_SIZES.len());
        assert!(m.add_bw > 3e12 && m.add_bw < 6e12, "{}", m.add_bw);
    }

    #[test]
    fn recipe_lines_replace_the_numbers() {
        let p = super::super::runtime::DeviceProps {
            cc: (8, 0),
            sm_count: 66,
            ..super::super::runtime::DeviceProps::h200()
        };
        let m = Model::builtin(&p)
            .with_lines("strassen d 1000 100\nstrassen d 2000 400\nstrassen add_bw 2e12\nother 1 2 3\n", "tuned");
        assert_eq!(m.source, "tuned");
        assert_eq!(m.add_bw, 2e12);
        // d: 2*1000^3 flops in 100 us (2e13 flop/s), 2*2000^3 in 400 us (4e13); s kept the
        // built-in (scaled) rates.
        assert_eq!(m.rates[1][0], (1000.0, 2e9 / 100e-6));
        assert_eq!(m.rates[0].len(), H200_RATES[0].len());
        // Interpolated between the two measured points, flat past them.
        let r = |n: f64| m.rate(true, n, n, n);
        assert_eq!(r(500.0), 2e13);
        assert_eq!(r(4000.0), 4e13);
        let mid = r(2f64.sqrt() * 1000.0);
        assert!((mid / (2f64.sqrt() * 2e13) - 1.0).abs() < 1e-9, "{mid}");
    }

    #[test]
    fn auto_declines_small_and_takes_large_products() {
        let m = h200();
        for es in [4, 8] {
            assert_eq!(m.choose(es, 1024, 1024, 1024, true).levels, 0);
            let big = m.choose(es, 16384, 16384, 16384, true);
            assert!(big.levels >= 1, "{big:?}");
            // The pick is the fastest level, and by at least the margin.
            assert!(big.us[big.levels as usize] * (1.0 + *MIN_GAIN) <= big.us[0], "{big:?}");
        }
        // beta != 0 costs a pass over C; odd sizes cost their fix-ups.
        assert!(m.predict_us(8, 8192, 8192, 8192, 1, false) > m.predict_us(8, 8192, 8192, 8192, 1, true));
        assert!(m.predict_us(8, 8193, 8193, 8193, 1, true) > m.predict_us(8, 8192, 8192, 8192, 1, true));
    }
}
