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

use crate::types::Scalar;

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
    ops.add(h, w, p1, one, c12, c12)?; //  13 U2
    ops.add(h, w, c12, one, c21, c21)?; // 14 U3
    ops.add(h, w, c12, one, c22, c12)?; // 15 U4
    ops.add(h, w, c21, one, c22, c22)?; // 16 C22
    ops.add(h, w, c12, one, c11, c12)?; // 17 C12
    ops.add(br, bc, y, neg, b21, y)?; //   18 T4
    prod(ops, a22, y, c11)?; //            19 P4
    ops.add(h, w, c21, neg, c11, c21)?; // 20 C21
    prod(ops, a12, b21, c11)?; //          21 P2
    ops.add(h, w, c11, one, p1, c11) //    22 C11
}
