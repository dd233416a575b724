//! TRMM (B := alpha*op(A)*B or alpha*B*op(A)) and TRSM (the same with op(A)^-1), A triangular.
//!
//! Every case is first rewritten as a left-side product or solve with a lower or upper
//! triangular `T` and no transposition: for side Right, B*op(A) is the transpose of
//! op(A)^T * B^T, and views carry transposition in their strides; a conjugate without
//! transpose (Right, `C`) becomes a `conj` flag. Then the triangle is split recursively into
//! 2x2 blocks: the diagonal blocks recurse, the off-diagonal block is one GEMM, so nearly all
//! flops run in the GEMM kernels. Blocks of order `<= HYBLAS_TRI_NB` go to a base case that
//! packs the small triangle (conjugated if asked, with the reciprocal diagonal for TRSM) and
//! runs one of two kernels:
//! - column kernel (real types with AVX2/AVX-512, B's columns contiguous): tiles of one SIMD
//!   vector of rows by several columns stay in registers; rows already finished are applied
//!   GEMM-style (column of T times broadcast element of B), only the tile's own small
//!   triangle is sequential;
//! - row kernel (everything else): a slice of B's columns is copied (transposed if need be)
//!   into a buffer whose rows are contiguous, and each finished row is added into the rows
//!   it enters with the vector running across columns. For complex data the copy is cheap
//!   next to the four-fold arithmetic.
//!
//! Where hyblas's own GEMM kernels run (AVX-512) and B is stored by columns or by rows (any
//! side), triangles that fit in half of L2 skip the recursion: the leaf (`leaf.rs`) does them
//! in panels of the kernel's size, one kernel call per tile applying every finished row,
//! and the base kernels meet only the kernel-sized diagonal blocks.
//!
//! TRMM works in place: blocks, tiles and rows are visited in the order that reads every
//! element of B before it is overwritten, so no copy of B is made.
//!
//! Threads: triangles of order above `HYBLAS_TRI_SPLIT` (512; with the leaf, the leaf's
//! order, also on one thread) take 2x2 steps whose GEMMs run on all threads; smaller ones, past `HYBLAS_TRI_PAR_MIN` (m*m*n), split the right-hand
//! sides (B's columns for side Left, rows for side Right) across threads, each part an
//! independent problem. Narrow problems stay whole and take their parallelism from GEMM.
//!
//! Reference semantics: only the referenced triangle of A is read and the unit diagonal never;
//! alpha == 0 zeroes B without reading A or B. Zero padding in the packed tiles never meets a
//! value of B: the kernels mask (select), not multiply, outside the triangle, so Inf/NaN in B
//! spread only where the arithmetic really takes them.

mod leaf;

use crate::cpu::level3::gemm::gemm;
use crate::cpu::level3::packed;
/// SIMD level of the base-case kernels: the process-wide one (`HYBLAS_SIMD` caps it, which is
/// how the tests exercise every build on one machine).
use crate::cpu::simd::LEVEL as ISA;
use crate::cpu::simd::{mac, Level};
use crate::cpu::threads;
use crate::types::{Diag, MatMut, MatRef, Scalar, Side, Trans, Uplo, C32, C64};
use num_traits::Float;
use once_cell::sync::Lazy;

/// Order of the diagonal blocks handled by the base-case kernels (`HYBLAS_TRI_NB`, rounded to
/// the SIMD tile): 32 for complex double, 64 otherwise. Complex double has no column kernel;
/// its row kernel ran the base blocks at a fifth of the GEMM rate, so at NB = 64 they took 37%
/// of a 1-thread ZTRSM 512. Halving NB halves their flops: ZTRSM 512/1024 went from 45/49 to
/// 59/66 GFLOP/s, ZTRMM from 42/60 to 58/66 (best of 20, this VM, session 53); NB = 24 and 48
/// did no better, and 32 lost for the other precisions (DTRSM, STRSM, CTRSM 1024: 4-8%).
pub static TRI_NB: Lazy<Option<usize>> =
    Lazy::new(|| crate::config::value("HYBLAS_TRI_NB").and_then(|v| v.trim().parse::<usize>().ok()).map(|v| v.max(1)));

/// m*m*n (rows of the triangle squared times right-hand sides) below which a TRMM/TRSM runs
/// on one thread.
pub static TRI_PAR_MIN: Lazy<usize> = Lazy::new(|| crate::config::threshold("HYBLAS_TRI_PAR_MIN", 96 * 96 * 96));

/// Right-hand sides a thread should get at least when they are split.
const MIN_RHS_PER_THREAD: usize = 16;

/// Order of the triangles below which threads split the right-hand sides (`HYBLAS_TRI_SPLIT`);
/// above it the recursion's GEMMs run on all threads. See [`top`].
pub static TRI_SPLIT: Lazy<usize> = Lazy::new(|| crate::config::threshold("HYBLAS_TRI_SPLIT", 512));

/// The precisions TRMM/TRSM run on: each picks its kernel shapes, and f32/f64 add the
/// explicit-SIMD column kernels.
pub trait TriScalar: Scalar {
    /// Pack a diagonal block (order <= NB) for the base kernels, in the layout the kernel for
    /// right-hand sides with row stride `x_rs` reads (see [`Packed`]).
    ///
    /// # Safety
    /// As [`trsm`]; `t` a valid block.
    unsafe fn base_pack(t: &Tri<Self>, op: Op, x_rs: isize) -> Packed<Self>;
    /// Solve T X = alpha*X (`Op::Solve`) or form X := alpha*T*X in place, T the block `pk`
    /// holds (packed by [`TriScalar::base_pack`] for X's row stride).
    ///
    /// # Safety
    /// As [`trsm`]; `pk` and `x` consistent.
    unsafe fn base_run(op: Op, lower: bool, pk: &Packed<Self>, alpha: Self, x: MatMut<Self>);
    /// From the right, one whole tile's diagonal block with the tile in registers (see
    /// `leaf::right_tile`): `h` x `w` of B at `tile` (column c at `tile + c*ldt`), T's block
    /// row-major with leading dimension `w` in `p`, its diagonal in `d`; for TRSM the solved
    /// columns also go to `cols` (column c at `c*h`). False where no such kernel runs (the
    /// caller then takes the generic path).
    ///
    /// # Safety
    /// Pointers valid for those shapes.
    #[allow(clippy::too_many_arguments)]
    unsafe fn simd_right(
        _solve: bool,
        _lower: bool,
        _p: *const Self,
        _d: *const Self,
        _alpha: Self,
        _tile: *mut Self,
        _ldt: isize,
        _hw: (usize, usize),
        _cols: *mut Self,
    ) -> bool {
        false
    }
    /// Whether [`TriScalar::simd_cols`] runs on this machine.
    fn has_simd_cols() -> bool {
        false
    }
    /// The column kernels over `n` columns of X (column c at `x + c*ldx`, rows contiguous),
    /// T packed column-major with leading dimension `ld` (mb rounded up to the tile).
    ///
    /// # Safety
    /// Pointers valid for those shapes; only called when `has_simd_cols()`.
    #[allow(clippy::too_many_arguments)]
    unsafe fn simd_cols(
        _solve: bool,
        _lower: bool,
        _mb: usize,
        _ld: usize,
        _p: *const Self,
        _d: *const Self,
        _alpha: Self,
        _x: *mut Self,
        _ldx: isize,
        _n: usize,
    ) {
    }
}

macro_rules! tri_scalar {
    ($t:ty, $tl:literal, $w:literal $(, cols $simd:path, $min:expr)? $(, right $right:path)?) => {
        impl TriScalar for $t {
            unsafe fn base_pack(t: &Tri<Self>, op: Op, x_rs: isize) -> Packed<Self> {
                base_pack::<$t, $tl>(t, op, x_rs)
            }
            unsafe fn base_run(op: Op, lower: bool, pk: &Packed<Self>, alpha: Self, x: MatMut<Self>) {
                base_run::<$t, $tl, $w>(op, lower, pk, alpha, x)
            }
            $(
                fn has_simd_cols() -> bool {
                    *ISA >= $min
                }
                unsafe fn simd_cols(
                    solve: bool,
                    lower: bool,
                    mb: usize,
                    ld: usize,
                    p: *const Self,
                    d: *const Self,
                    alpha: Self,
                    x: *mut Self,
                    ldx: isize,
                    n: usize,
                ) {
                    $simd(solve, lower, mb, ld, p, d, alpha, x, ldx, n)
                }
            )?
            $(
                unsafe fn simd_right(
                    solve: bool,
                    lower: bool,
                    p: *const Self,
                    d: *const Self,
                    alpha: Self,
                    tile: *mut Self,
                    ldt: isize,
                    hw: (usize, usize),
                    cols: *mut Self,
                ) -> bool {
                    $right(solve, lower, p, d, alpha, tile, ldt, hw, cols)
                }
            )?
        }
    };
}
// TL: SIMD lanes of 512 bits (the column kernels' tile height, the row kernels' narrow
// width); W: the row kernels' main width.
#[cfg(target_arch = "x86_64")]
tri_scalar!(f32, 16, 128, cols x86::cols_f32, Level::Avx2, right x86::right_f32);
#[cfg(target_arch = "x86_64")]
tri_scalar!(f64, 8, 64, cols x86::cols_f64, Level::Avx2, right x86::right_f64);
#[cfg(not(target_arch = "x86_64"))]
tri_scalar!(f32, 16, 128);
#[cfg(not(target_arch = "x86_64"))]
tri_scalar!(f64, 8, 64);
// Complex column kernels: AVX-512 only (the row kernels elsewhere); no register path from the
// right (the generic one runs).
#[cfg(target_arch = "x86_64")]
tri_scalar!(C32, 8, 32, cols x86::cols_c32, Level::Avx512);
#[cfg(target_arch = "x86_64")]
tri_scalar!(C64, 4, 16, cols x86::cols_c64, Level::Avx512);
#[cfg(not(target_arch = "x86_64"))]
tri_scalar!(C32, 8, 32);
#[cfg(not(target_arch = "x86_64"))]
tri_scalar!(C64, 4, 16);

/// A triangular operand after normalisation: `a` is square, used without transposition
/// (strides already swapped), `lower`/upper refers to `a` as viewed, `conj` conjugates every
/// element read, `unit` means the diagonal is taken as one and never read.
#[derive(Clone, Copy, Debug)]
pub struct Tri<T> {
    a: MatRef<T>,
    lower: bool,
    conj: bool,
    unit: bool,
}

impl<T> Tri<T> {
    /// Diagonal block [s, s+len).
    unsafe fn diag(&self, s: usize, len: usize) -> Self {
        Tri { a: self.a.sub(s, s, len, len), ..*self }
    }
}

/// What is done with the triangle.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Op {
    Solve,
    Multiply,
}

/// Rewrite a TRMM/TRSM as the left-side problem on (T, X), see the module comment.
fn normalize<T>(side: Side, uplo: Uplo, trans: Trans, diag: Diag, a: MatRef<T>, b: MatMut<T>) -> (Tri<T>, MatMut<T>) {
    let lower = uplo == Uplo::Lower;
    let (a, lower, conj) = match (side, trans) {
        (Side::Left, Trans::No) => (a, lower, false),
        (Side::Left, Trans::Trans) => (a.t(), !lower, false),
        (Side::Left, Trans::ConjTrans) => (a.t(), !lower, true),
        // B*A = (A^T B^T)^T
        (Side::Right, Trans::No) => (a.t(), !lower, false),
        // B*A^T = (A B^T)^T, B*A^H = (conj(A) B^T)^T
        (Side::Right, Trans::Trans) => (a, lower, false),
        (Side::Right, Trans::ConjTrans) => (a, lower, true),
    };
    let x = if side == Side::Left { b } else { b.t() };
    (Tri { a, lower, conj, unit: diag == Diag::Unit }, x)
}

/// B := 0 (alpha == 0: reference BLAS reads neither A nor B).
unsafe fn zero<T: Scalar>(b: MatMut<T>) {
    for j in 0..b.cols {
        for i in 0..b.rows {
            *b.at(i, j) = T::zero();
        }
    }
}

/// Run the recursion on the whole of X, or on column slices of X in parallel when the problem
/// is big enough (the columns of X are independent right-hand sides).
unsafe fn drive<T: TriScalar>(t: Tri<T>, alpha: T, x: MatMut<T>, op: Op) {
    let (m, n) = (x.rows, x.cols);
    let work = m.saturating_mul(m).saturating_mul(n);
    let nt = threads::nthreads();
    // Parts are whole units of columns: 16 keep the kernels' vector chunks whole; the leaf
    // from the right (parts are B's rows) takes whole kernel-high panels.
    let unit = leaf::part_rows::<T>(m, x.rs, x.cs).unwrap_or(16);
    let units = n.div_ceil(unit);
    let parts = if nt <= 1 || work < *TRI_PAR_MIN || n < 2 * MIN_RHS_PER_THREAD {
        1
    } else {
        // A few parts per thread, claimed as threads come free (threads::for_each_part).
        threads::balanced_parts(nt).min(n / MIN_RHS_PER_THREAD).min(units)
    };
    // Part p starts at unit p*base + min(p, extra): the first `extra` parts take one unit
    // more, so threads claiming in turn end level. Equal parts rounded up to whole 24-row
    // panels cut DTRSM 512 from the right on 2 threads into 7 parts of 72 rows and one of 8:
    // one thread had 288 rows, the other 224.
    let (base, extra) = (units / parts, units % parts);
    let start = |p: usize| (unit * (p * base + p.min(extra))).min(n);
    let each = |f: &(dyn Fn(MatMut<T>) + Sync)| {
        threads::for_each_part(nt, parts, |p| {
            let (s, e) = (start(p), start(p + 1));
            // SAFETY: the parts are disjoint column ranges of X.
            f(unsafe { x.sub(0, s, m, e - s) })
        })
    };
    if m <= leaf::max_order::<T>() {
        // SAFETY: each part is a column range of X; the leaf was packed from t.
        let ran = leaf::Leaf::with(t, op, m, (x.rs, x.cs), nt, |lf| each(&|xp| unsafe { lf.run(alpha, xp) }));
        if ran.is_some() {
            return;
        }
    }
    if parts == 1 {
        return rec(t, alpha, x, op);
    }
    // SAFETY: as above.
    each(&|xp| unsafe { rec(t, alpha, xp, op) });
}

/// Split point of an order-m triangle: half of its NB-blocks, so base blocks stay whole.
fn split(m: usize, nb: usize) -> usize {
    (m.div_ceil(nb) / 2) * nb
}

/// Block order of the base case for precision T: NB rounded to whole 512-bit tiles.
fn block_order<T: Scalar>() -> usize {
    let tile = 64 / std::mem::size_of::<T>();
    let nb = (*TRI_NB).unwrap_or(if T::IS_COMPLEX && std::mem::size_of::<T>() == 16 { 32 } else { 64 });
    nb.next_multiple_of(tile)
}

/// One 2x2 step on an order-m triangle: the two diagonal blocks go to `inner`, the
/// off-diagonal block is one GEMM (on as many threads as its size asks for).
///
/// TRSM, lower: X1 = alpha T11^-1 B1, then T22 X2 = alpha B2 - T21 X1 (upper: the mirror).
/// TRMM, lower: X2 := alpha (T21 X1 + T22 X2) needs the old X1, so X2 comes first (upper: the
/// mirror).
unsafe fn step<T: TriScalar>(t: Tri<T>, alpha: T, x: MatMut<T>, op: Op, inner: &dyn Fn(Tri<T>, T, MatMut<T>)) {
    let (m, n) = (x.rows, x.cols);
    let m1 = split(m, block_order::<T>());
    let m2 = m - m1;
    let (x1, x2) = (x.sub(0, 0, m1, n), x.sub(m1, 0, m2, n));
    let (d1, d2) = (t.diag(0, m1), t.diag(m1, m2));
    // The off-diagonal block and the rows it maps from and to.
    let (off, from, to) = if t.lower { (t.a.sub(m1, 0, m2, m1), x1, x2) } else { (t.a.sub(0, m1, m1, m2), x2, x1) };
    let ((first, xf), (second, xs)) = if t.lower { ((d1, x1), (d2, x2)) } else { ((d2, x2), (d1, x1)) };
    let prod = |al: T, be: T| gemm(al, off, t.conj, from.as_ref(), false, be, to);
    match op {
        Op::Solve => {
            inner(first, alpha, xf);
            prod(-T::one(), alpha);
            inner(second, T::one(), xs);
        }
        Op::Multiply => {
            inner(second, alpha, xs);
            prod(alpha, T::one());
            inner(first, alpha, xf);
        }
    }
}

/// The recursion: base blocks of order NB, the rest in 2x2 steps.
unsafe fn rec<T: TriScalar>(t: Tri<T>, alpha: T, x: MatMut<T>, op: Op) {
    if x.rows <= block_order::<T>() {
        return T::base_run(op, t.lower, &T::base_pack(&t, op, x.rs), alpha, x);
    }
    step(t, alpha, x, op, &|t, a, x| unsafe { rec(t, a, x, op) })
}

/// The top of the recursion on several threads: 2x2 steps whose GEMMs run on all threads
/// (each block of A packed once, shared), down to triangles of order `TRI_SPLIT`, which are
/// solved with their right-hand sides split across the threads.
///
/// Why not split the right-hand sides at the top: every part then packs the whole triangle
/// again for GEMMs over only its own columns. On 2 threads (DTRSM, n = 2048, 8 parts of 256
/// columns) packing A took 14% of the time (2% on one thread); on the H200 host's 16 threads
/// (DTRSM n = 4096, parts of 64 columns) it ran at 0.74x MKL, against 1.03x with the threaded
/// top in the same session (`scripts/cpu-host-tri.sh`). A left-looking driver (block
/// rows of 192, each one threaded GEMM and one split solve) was slower again on this shared
/// VM: 22 joins of all threads per call for 2048 rows, each waiting for the slowest thread.
unsafe fn top<T: TriScalar>(t: Tri<T>, alpha: T, x: MatMut<T>, op: Op) {
    let nt = threads::nthreads();
    // The leaf takes triangles up to its own order, on any number of threads.
    let leaf = if leaf::right_side(x.rs, x.cs).is_some() { leaf::max_order::<T>() } else { 0 };
    let limit = match (leaf, nt) {
        (0, 1) => usize::MAX,
        (0, _) => (*TRI_SPLIT).max(block_order::<T>()),
        _ => leaf,
    };
    if x.rows <= limit {
        return drive(t, alpha, x, op);
    }
    step(t, alpha, x, op, &|t, a, x| unsafe { top(t, a, x, op) })
}

/// B := alpha * op(A)^-1 * B (side Left) or alpha * B * op(A)^-1 (side Right).
///
/// # Safety
/// `a` is the order-m (Left) or order-n (Right) triangle's storage, `b` the m x n right-hand
/// sides, both valid (the ABI layer checked the dimensions); `b` does not overlap `a`.
pub unsafe fn trsm<T: TriScalar>(
    side: Side,
    uplo: Uplo,
    trans: Trans,
    diag: Diag,
    alpha: T,
    a: MatRef<T>,
    b: MatMut<T>,
) {
    if b.rows == 0 || b.cols == 0 {
        return;
    }
    if alpha.is_zero() {
        return zero(b);
    }
    let (t, x) = normalize(side, uplo, trans, diag, a, b);
    top(t, alpha, x, Op::Solve);
}

/// B := alpha * op(A) * B (side Left) or alpha * B * op(A) (side Right), in place.
///
/// # Safety
/// As [`trsm`].
pub unsafe fn trmm<T: TriScalar>(
    side: Side,
    uplo: Uplo,
    trans: Trans,
    diag: Diag,
    alpha: T,
    a: MatRef<T>,
    b: MatMut<T>,
) {
    if b.rows == 0 || b.cols == 0 {
        return;
    }
    if alpha.is_zero() {
        return zero(b);
    }
    let (t, x) = normalize(side, uplo, trans, diag, a, b);
    top(t, alpha, x, Op::Multiply);
}

// ---------------------------------------------------------------------------------------
// Base case.

/// The packed diagonal block: `p` holds T's strict triangle (conjugated if asked; zeros
/// elsewhere; for TRMM's column kernels also the diagonal) as an `ld x ld` array,
/// column-major for the column kernels (element (i, k) at `k*ld + i`) and row-major for the
/// row kernels (at `i*ld + k`); `d[k]` is the diagonal (its reciprocal for TRSM, one for a
/// unit diagonal, zero in the padding).
pub struct Packed<T> {
    p: Vec<T>,
    d: Vec<T>,
    ld: usize,
    col_major: bool,
}

/// Pack the order-`mb` block `t` into an `ld x ld` array (`ld >= mb`), reading only the
/// referenced triangle.
unsafe fn pack<T: Scalar>(t: &Tri<T>, op: Op, ld: usize, col_major: bool) -> Packed<T> {
    let mb = t.a.rows;
    let mut p = vec![T::zero(); ld * ld];
    let mut d = vec![T::zero(); ld];
    for k in 0..mb {
        let (i0, i1) = if t.lower { (k + 1, mb) } else { (0, k) };
        for i in i0..i1 {
            let v = t.a.get(i, k).conj_if(t.conj);
            p[if col_major { k * ld + i } else { i * ld + k }] = v;
        }
        d[k] = if t.unit {
            T::one()
        } else {
            let v = t.a.get(k, k).conj_if(t.conj);
            match op {
                Op::Multiply => v,
                Op::Solve => recip(v),
            }
        };
        if op == Op::Multiply && col_major {
            // The SIMD product kernels take the diagonal with its column.
            p[k * ld + k] = d[k];
        }
    }
    Packed { p, d, ld, col_major }
}

/// The order-h diagonal block `t` for the leaf's triangular tile kernel
/// ([`crate::cpu::level3::micro::Micro::tri`]), written to `dst`: an `ld x ld` column-major array (`ld` = the kernel's
/// MR >= h, zero padded) holding T_ii (Multiply) or T_ii^-1 (Solve), conjugated if asked.
///
/// Why the inverse: the substitution's small triangles ran at about a third of the kernel's
/// rate and took 13-15% of a 1-thread DTRSM/ZTRSM 512 from the left for 4.7% of its flops;
/// multiplying by the inverse is a product the kernel runs whole. The inverse solves
/// T_ii X = I by the substitution's own steps (see [`invert`]).
///
/// # Safety
/// `dst` is valid for `ld * ld` writes.
unsafe fn kernel_block<T: Scalar>(t: &Tri<T>, op: Op, ld: usize, dst: *mut T) {
    let pk = pack(t, op, ld, true);
    let out = std::slice::from_raw_parts_mut(dst, ld * ld);
    if op == Op::Multiply {
        // `pack` put the diagonal in with its column for the product kernels.
        out.copy_from_slice(&pk.p);
    } else {
        crate::dispatch_level!(invert::<T>(t.lower, t.a.rows, &pk.p, &pk.d, ld, out))
    }
}

/// The inverse of the order-h triangle with strict part `p` (column-major, leading dimension
/// `ld`) and reciprocal diagonal `d`, written to `out` as an `ld x ld` column-major array,
/// zero padded.
///
/// Row by row in a row-major scratch (T X = I, eliminated in row order): each step scales one
/// row and subtracts it from the rows below (lower) or above (upper), independent vector
/// updates. Column by column, each column's substitution was one chain of dependent steps and
/// the inverses took 2% of a 1-thread DTRSM 512. At the SIMD level `LV` the updates vectorise.
#[inline(always)]
fn invert<T: Scalar, const LV: u8>(lower: bool, h: usize, p: &[T], d: &[T], ld: usize, out: &mut [T]) {
    let mut r = vec![T::zero(); h * h];
    for i in 0..h {
        r[i * h + i] = T::one();
    }
    #[inline(always)]
    fn step<T: Scalar, const LV: u8>(r: &mut [T], k: usize, lower: bool, h: usize, p: &[T], d: &[T], ld: usize) {
        // Row k of the inverse is final once scaled; its nonzeros are columns 0..=k (lower)
        // or k..h (upper).
        let cols = if lower { 0..k + 1 } else { k..h };
        let (before, rest) = r.split_at_mut(k * h);
        let (row, after) = rest.split_at_mut(h);
        for v in &mut row[cols.clone()] {
            *v *= d[k];
        }
        let (others, first) = if lower { (after, k + 1) } else { (before, 0) };
        for (q, other) in others.chunks_exact_mut(h).enumerate() {
            let a = p[k * ld + first + q];
            for (o, &v) in other[cols.clone()].iter_mut().zip(&row[cols.clone()]) {
                *o = mac::<T, LV>(*o, -a, v);
            }
        }
    }
    if lower {
        for k in 0..h {
            step::<T, LV>(&mut r, k, lower, h, p, d, ld);
        }
    } else {
        for k in (0..h).rev() {
            step::<T, LV>(&mut r, k, lower, h, p, d, ld);
        }
    }
    out.fill(T::zero());
    for i in 0..h {
        for j in 0..h {
            out[j * ld + i] = r[i * h + j];
        }
    }
}

/// 1/v; complex by Smith's algorithm (no needless overflow or underflow), as Fortran
/// compilers divide.
fn recip<T: Scalar>(v: T) -> T {
    let one = <T::Real as Scalar>::one();
    if !T::IS_COMPLEX {
        return T::from_real(one / v.re());
    }
    let (a, b) = (v.re(), v.im());
    if a.abs() >= b.abs() {
        let r = b / a;
        let den = a + b * r;
        T::from_parts(one / den, -r / den)
    } else {
        let r = a / b;
        let den = a * r + b;
        T::from_parts(r / den, -one / den)
    }
}

/// Pack the base block `t` for right-hand sides of row stride `x_rs`: column-major, rows
/// rounded up to the SIMD tile, for the column kernels (X's columns contiguous, f32/f64 with
/// SIMD); row-major otherwise.
unsafe fn base_pack<T: TriScalar, const TL: usize>(t: &Tri<T>, op: Op, x_rs: isize) -> Packed<T> {
    let mb = t.a.rows;
    if x_rs == 1 && T::has_simd_cols() {
        pack(t, op, mb.next_multiple_of(TL), true)
    } else {
        pack(t, op, mb, false)
    }
}

/// The base case: X (mb x n, mb <= NB) := alpha*T^-1*X or alpha*T*X, T packed in `pk`.
unsafe fn base_run<T: TriScalar, const TL: usize, const W: usize>(
    op: Op,
    lower: bool,
    pk: &Packed<T>,
    alpha: T,
    x: MatMut<T>,
) {
    let mb = x.rows;
    let (p, d) = (pk.p.as_ptr(), pk.d.as_ptr());
    if pk.col_major {
        debug_assert!(x.rs == 1);
        T::simd_cols(op == Op::Solve, lower, mb, pk.ld, p, d, alpha, x.ptr, x.cs, x.cols);
    } else {
        match op {
            Op::Solve => trsm_rows::<T, TL, W>(lower, mb, p, d, alpha, x),
            Op::Multiply => trmm_rows::<T, TL, W>(lower, mb, p, d, alpha, x),
        }
    }
}

/// The row kernels over all of X, one driver per kernel so that each has its own SIMD
/// builds. X is taken W columns at a time into a buffer with contiguous rows: a transposing
/// copy when X's columns are the contiguous ones, a plain one otherwise (X's rows are then
/// B's columns, often a power-of-two distance apart, and mb of them at once would fight over
/// the same cache sets). The kernels then run on chunks of W, TL, 4 and single columns.
macro_rules! row_driver {
    ($driver:ident, $each:ident, $kernel:ident) => {
        unsafe fn $driver<T: Scalar, const TL: usize, const W: usize>(
            lower: bool,
            mb: usize,
            p: *const T,
            d: *const T,
            alpha: T,
            x: MatMut<T>,
        ) {
            packed::with_rows_buf(mb * W, |bp| {
                if lower {
                    crate::dispatch_level!($each::<T, TL, W, true>(mb, p, d, alpha, x, bp))
                } else {
                    crate::dispatch_level!($each::<T, TL, W, false>(mb, p, d, alpha, x, bp))
                }
            })
        }
        #[inline(always)]
        unsafe fn $each<T: Scalar, const TL: usize, const W: usize, const LOWER: bool, const LV: u8>(
            mb: usize,
            p: *const T,
            d: *const T,
            alpha: T,
            x: MatMut<T>,
            bp: *mut T,
        ) {
            let mut j0 = 0;
            while j0 < x.cols {
                let w = W.min(x.cols - j0);
                copy_slice(x, j0, w, bp, W, true);
                let mut j = 0;
                if w == W {
                    $kernel::<T, W, LOWER, LV>(mb, p, d, alpha, bp, W);
                    j = W;
                }
                while j + TL <= w {
                    $kernel::<T, TL, LOWER, LV>(mb, p, d, alpha, bp.add(j), W);
                    j += TL;
                }
                // The leaf's slices of complex single are 4 wide (half of TL).
                while TL > 4 && j + 4 <= w {
                    $kernel::<T, 4, LOWER, LV>(mb, p, d, alpha, bp.add(j), W);
                    j += 4;
                }
                while j < w {
                    $kernel::<T, 1, LOWER, LV>(mb, p, d, alpha, bp.add(j), W);
                    j += 1;
                }
                copy_slice(x, j0, w, bp, W, false);
                j0 += w;
            }
        }
    };
}
row_driver!(trsm_rows, trsm_rows_body, trsm_row);
row_driver!(trmm_rows, trmm_rows_body, trmm_row);

/// Copy columns [j0, j0+w) of X into (`into`) or out of a buffer of rows `ldb` apart.
#[inline(always)]
unsafe fn copy_slice<T: Scalar>(x: MatMut<T>, j0: usize, w: usize, buf: *mut T, ldb: usize, into: bool) {
    if x.cs == 1 {
        // Element loops: the leaf copies rows of a few elements, where a library call each
        // cost more than the copy.
        for i in 0..x.rows {
            let (xr, br) = (x.ptr_at(i, j0), buf.add(i * ldb));
            let (from, to) = if into { (xr as *const T, br) } else { (br as *const T, xr) };
            for c in 0..w {
                *to.add(c) = *from.add(c);
            }
        }
    } else {
        // Column by column: contiguous on X's side when its columns are.
        for c in 0..w {
            for i in 0..x.rows {
                let (xe, be) = (x.ptr_at(i, j0 + c), buf.add(i * ldb + c));
                if into {
                    *be = *xe;
                } else {
                    *xe = *be;
                }
            }
        }
    }
}

/// Rows [i0, i1) of a block (rows `ldb` apart) += coef(i) * v, v one finished row's W
/// values. Complex with FMA: i*v is formed once, and each element then takes two real
/// multiply-adds by coef's two parts; the general complex multiply-add rebuilt the broadcast
/// coefficient for every element (the leaf's 24 x 4 CTRSM blocks took a third of its time).
#[inline(always)]
unsafe fn add_to_rows<T: Scalar, const W: usize, const LV: u8>(
    v: &[T; W],
    i0: usize,
    i1: usize,
    coef: impl Fn(usize) -> T,
    x: *mut T,
    ldb: usize,
) {
    if T::IS_COMPLEX && LV != 0 {
        let mut iv = [T::zero(); W];
        for (w, e) in iv.iter_mut().zip(v) {
            *w = T::from_parts(-e.im(), e.re());
        }
        for i in i0..i1 {
            let s = coef(i);
            let (a, b) = (s.re(), s.im());
            let xi = x.add(i * ldb);
            for c in 0..W {
                let (e, f, g) = (*xi.add(c), v[c], iv[c]);
                let re = g.re().mul_add(b, f.re().mul_add(a, e.re()));
                let im = g.im().mul_add(b, f.im().mul_add(a, e.im()));
                *xi.add(c) = T::from_parts(re, im);
            }
        }
    } else {
        for i in i0..i1 {
            let s = coef(i);
            let xi = x.add(i * ldb);
            for (c, &e) in v.iter().enumerate() {
                *xi.add(c) = mac::<T, LV>(*xi.add(c), s, e);
            }
        }
    }
}

/// TRSM row kernel: W contiguous columns of an order-mb block whose rows are `ldb` apart;
/// T packed row-major with leading dimension mb. Right-looking, as the reference: once row k
/// is finished it is taken out of every row after it (lower: forward) or before it (upper:
/// backward). Those updates are independent, where a row-by-row dot product waits on one
/// chain of multiply-adds (with the leaf's 4 columns of complex double, one vector, that
/// chain ran its 12 x 12 blocks at a third of the rate).
#[inline(always)]
unsafe fn trsm_row<T: Scalar, const W: usize, const LOWER: bool, const LV: u8>(
    mb: usize,
    p: *const T,
    d: *const T,
    alpha: T,
    x: *mut T,
    ldb: usize,
) {
    if !alpha.is_one() {
        for i in 0..mb {
            let xi = x.add(i * ldb);
            for c in 0..W {
                *xi.add(c) = *xi.add(c) * alpha;
            }
        }
    }
    for step in 0..mb {
        let k = if LOWER { step } else { mb - 1 - step };
        let (xk, dk) = (x.add(k * ldb), *d.add(k));
        let mut v = [T::zero(); W];
        for (c, e) in v.iter_mut().enumerate() {
            *e = *xk.add(c) * dk;
            *xk.add(c) = *e;
        }
        let (i0, i1) = if LOWER { (k + 1, mb) } else { (0, k) };
        add_to_rows::<T, W, LV>(&v, i0, i1, |i| -*p.add(i * mb + k), x, ldb);
    }
}

/// TRMM row kernel (layout as [`trsm_row`]), right-looking as the reference: row k, times
/// alpha, is added into the rows after it (lower; rows go bottom-up) or before it (upper;
/// top-down), which already hold their own diagonal term, before row k takes its own.
#[inline(always)]
unsafe fn trmm_row<T: Scalar, const W: usize, const LOWER: bool, const LV: u8>(
    mb: usize,
    p: *const T,
    d: *const T,
    alpha: T,
    x: *mut T,
    ldb: usize,
) {
    for step in 0..mb {
        let k = if LOWER { mb - 1 - step } else { step };
        let (xk, dk) = (x.add(k * ldb), *d.add(k));
        let mut v = [T::zero(); W];
        for (c, e) in v.iter_mut().enumerate() {
            *e = *xk.add(c) * alpha;
            *xk.add(c) = *e * dk;
        }
        let (i0, i1) = if LOWER { (k + 1, mb) } else { (0, k) };
        add_to_rows::<T, W, LV>(&v, i0, i1, |i| *p.add(i * mb + k), x, ldb);
    }
}

/// Explicit-SIMD column kernels for f32 and f64 (AVX-512 and AVX2+FMA) and complex (AVX-512), written with
/// intrinsics because the compiler's vectoriser does not reliably keep a tile in registers.
// AVX-512 intrinsics are stable since Rust 1.89; the `gemm` crate's `x86-v4` feature (pulp)
// already needs them, so the crate's real minimum is that.
#[cfg(target_arch = "x86_64")]
#[allow(clippy::incompatible_msrv)]
mod x86 {
    use super::{Level, ISA};
    use crate::types::Scalar;
    use std::arch::x86_64::*;

    /// One tile column of `TL` lanes, held in registers.
    pub(super) trait Lanes: Copy {
        type E: Scalar;
        type Mask: Copy;
        const TL: usize;
        unsafe fn zero() -> Self;
        unsafe fn splat(v: Self::E) -> Self;
        unsafe fn load(p: *const Self::E) -> Self;
        unsafe fn store(self, p: *mut Self::E);
        /// The first `len` lanes from memory, the rest zero (nothing past them is read).
        unsafe fn load_part(p: *const Self::E, len: usize) -> Self;
        unsafe fn store_part(self, p: *mut Self::E, len: usize);
        unsafe fn mul(self, b: Self) -> Self;
        /// self + a*b, fused.
        unsafe fn madd(self, a: Self, b: Self) -> Self;
        /// self - a*b, fused.
        unsafe fn msub(self, a: Self, b: Self) -> Self;
        /// Lanes lo..hi.
        unsafe fn lanes(lo: usize, hi: usize) -> Self::Mask;
        /// `new` in the lanes of `m`, `self` elsewhere.
        unsafe fn select(self, new: Self, m: Self::Mask) -> Self;
        /// Every lane set to lane `i`.
        unsafe fn bcast_lane(self, i: usize) -> Self;
        /// self - a*(the value at `x` in every lane); complex tiles read its two parts
        /// straight from memory into the two multiply-adds.
        #[inline(always)]
        unsafe fn msub_at(self, a: Self, x: *const Self::E) -> Self {
            self.msub(a, Self::splat(*x))
        }
        /// self + a*(the value at `x` in every lane).
        #[inline(always)]
        unsafe fn madd_at(self, a: Self, x: *const Self::E) -> Self {
            self.madd(a, Self::splat(*x))
        }
    }

    #[derive(Clone, Copy)]
    pub(super) struct Z8d(__m512d);
    #[derive(Clone, Copy)]
    pub(super) struct Z16s(__m512);
    #[derive(Clone, Copy)]
    pub(super) struct Y8d([__m256d; 2]);
    #[derive(Clone, Copy)]
    pub(super) struct Y16s([__m256; 2]);

    #[inline(always)]
    fn bits(lo: usize, hi: usize) -> u32 {
        ((1u32 << hi) - 1) & !((1u32 << lo) - 1)
    }

    impl Lanes for Z8d {
        type E = f64;
        type Mask = __mmask8;
        const TL: usize = 8;
        #[inline(always)]
        unsafe fn zero() -> Self {
            Z8d(_mm512_setzero_pd())
        }
        #[inline(always)]
        unsafe fn splat(v: f64) -> Self {
            Z8d(_mm512_set1_pd(v))
        }
        #[inline(always)]
        unsafe fn load(p: *const f64) -> Self {
            Z8d(_mm512_loadu_pd(p))
        }
        #[inline(always)]
        unsafe fn store(self, p: *mut f64) {
            _mm512_storeu_pd(p, self.0)
        }
        #[inline(always)]
        unsafe fn load_part(p: *const f64, len: usize) -> Self {
            Z8d(_mm512_maskz_loadu_pd(bits(0, len) as __mmask8, p))
        }
        #[inline(always)]
        unsafe fn store_part(self, p: *mut f64, len: usize) {
            _mm512_mask_storeu_pd(p, bits(0, len) as __mmask8, self.0)
        }
        #[inline(always)]
        unsafe fn mul(self, b: Self) -> Self {
            Z8d(_mm512_mul_pd(self.0, b.0))
        }
        #[inline(always)]
        unsafe fn madd(self, a: Self, b: Self) -> Self {
            Z8d(_mm512_fmadd_pd(a.0, b.0, self.0))
        }
        #[inline(always)]
        unsafe fn msub(self, a: Self, b: Self) -> Self {
            Z8d(_mm512_fnmadd_pd(a.0, b.0, self.0))
        }
        #[inline(always)]
        unsafe fn lanes(lo: usize, hi: usize) -> __mmask8 {
            bits(lo, hi) as __mmask8
        }
        #[inline(always)]
        unsafe fn select(self, new: Self, m: __mmask8) -> Self {
            Z8d(_mm512_mask_blend_pd(m, self.0, new.0))
        }
        #[inline(always)]
        unsafe fn bcast_lane(self, i: usize) -> Self {
            Z8d(_mm512_permutexvar_pd(_mm512_set1_epi64(i as i64), self.0))
        }
    }

    impl Lanes for Z16s {
        type E = f32;
        type Mask = __mmask16;
        const TL: usize = 16;
        #[inline(always)]
        unsafe fn zero() -> Self {
            Z16s(_mm512_setzero_ps())
        }
        #[inline(always)]
        unsafe fn splat(v: f32) -> Self {
            Z16s(_mm512_set1_ps(v))
        }
        #[inline(always)]
        unsafe fn load(p: *const f32) -> Self {
            Z16s(_mm512_loadu_ps(p))
        }
        #[inline(always)]
        unsafe fn store(self, p: *mut f32) {
            _mm512_storeu_ps(p, self.0)
        }
        #[inline(always)]
        unsafe fn load_part(p: *const f32, len: usize) -> Self {
            Z16s(_mm512_maskz_loadu_ps(bits(0, len) as __mmask16, p))
        }
        #[inline(always)]
        unsafe fn store_part(self, p: *mut f32, len: usize) {
            _mm512_mask_storeu_ps(p, bits(0, len) as __mmask16, self.0)
        }
        #[inline(always)]
        unsafe fn mul(self, b: Self) -> Self {
            Z16s(_mm512_mul_ps(self.0, b.0))
        }
        #[inline(always)]
        unsafe fn madd(self, a: Self, b: Self) -> Self {
            Z16s(_mm512_fmadd_ps(a.0, b.0, self.0))
        }
        #[inline(always)]
        unsafe fn msub(self, a: Self, b: Self) -> Self {
            Z16s(_mm512_fnmadd_ps(a.0, b.0, self.0))
        }
        #[inline(always)]
        unsafe fn lanes(lo: usize, hi: usize) -> __mmask16 {
            bits(lo, hi) as __mmask16
        }
        #[inline(always)]
        unsafe fn select(self, new: Self, m: __mmask16) -> Self {
            Z16s(_mm512_mask_blend_ps(m, self.0, new.0))
        }
        #[inline(always)]
        unsafe fn bcast_lane(self, i: usize) -> Self {
            Z16s(_mm512_permutexvar_ps(_mm512_set1_epi32(i as i32), self.0))
        }
    }

    /// AVX2 tiles are two 256-bit halves; partial loads/stores and lane reads go through a
    /// small buffer.
    macro_rules! avx2_lanes {
        ($name:ident, $e:ty, $v:ty, $tl:literal, $half:literal, $int:ty, $zero:ident, $set1:ident, $loadu:ident,
         $storeu:ident, $mul:ident, $fmadd:ident, $fnmadd:ident, $blendv:ident, $cast:ident) => {
            impl Lanes for $name {
                type E = $e;
                type Mask = [$v; 2];
                const TL: usize = $tl;
                #[inline(always)]
                unsafe fn zero() -> Self {
                    $name([$zero(), $zero()])
                }
                #[inline(always)]
                unsafe fn splat(v: $e) -> Self {
                    $name([$set1(v), $set1(v)])
                }
                #[inline(always)]
                unsafe fn load(p: *const $e) -> Self {
                    $name([$loadu(p), $loadu(p.add($half))])
                }
                #[inline(always)]
                unsafe fn store(self, p: *mut $e) {
                    $storeu(p, self.0[0]);
                    $storeu(p.add($half), self.0[1]);
                }
                #[inline(always)]
                unsafe fn load_part(p: *const $e, len: usize) -> Self {
                    let mut buf = [0.0 as $e; $tl];
                    std::ptr::copy_nonoverlapping(p, buf.as_mut_ptr(), len);
                    Self::load(buf.as_ptr())
                }
                #[inline(always)]
                unsafe fn store_part(self, p: *mut $e, len: usize) {
                    let mut buf = [0.0 as $e; $tl];
                    self.store(buf.as_mut_ptr());
                    std::ptr::copy_nonoverlapping(buf.as_ptr(), p, len);
                }
                #[inline(always)]
                unsafe fn mul(self, b: Self) -> Self {
                    $name([$mul(self.0[0], b.0[0]), $mul(self.0[1], b.0[1])])
                }
                #[inline(always)]
                unsafe fn madd(self, a: Self, b: Self) -> Self {
                    $name([$fmadd(a.0[0], b.0[0], self.0[0]), $fmadd(a.0[1], b.0[1], self.0[1])])
                }
                #[inline(always)]
                unsafe fn msub(self, a: Self, b: Self) -> Self {
                    $name([$fnmadd(a.0[0], b.0[0], self.0[0]), $fnmadd(a.0[1], b.0[1], self.0[1])])
                }
                #[inline(always)]
                unsafe fn lanes(lo: usize, hi: usize) -> [$v; 2] {
                    let mut m = [0 as $int; $tl];
                    for (i, v) in m.iter_mut().enumerate() {
                        if i >= lo && i < hi {
                            *v = !0;
                        }
                    }
                    let p = m.as_ptr() as *const $e;
                    [$cast($loadu(p)), $cast($loadu(p.add($half)))]
                }
                #[inline(always)]
                unsafe fn select(self, new: Self, m: [$v; 2]) -> Self {
                    $name([$blendv(self.0[0], new.0[0], m[0]), $blendv(self.0[1], new.0[1], m[1])])
                }
                #[inline(always)]
                unsafe fn bcast_lane(self, i: usize) -> Self {
                    let mut buf = [0.0 as $e; $tl];
                    self.store(buf.as_mut_ptr());
                    Self::splat(buf[i])
                }
            }
        };
    }
    #[inline(always)]
    unsafe fn id_pd(v: __m256d) -> __m256d {
        v
    }
    #[inline(always)]
    unsafe fn id_ps(v: __m256) -> __m256 {
        v
    }
    avx2_lanes!(
        Y8d,
        f64,
        __m256d,
        8,
        4,
        u64,
        _mm256_setzero_pd,
        _mm256_set1_pd,
        _mm256_loadu_pd,
        _mm256_storeu_pd,
        _mm256_mul_pd,
        _mm256_fmadd_pd,
        _mm256_fnmadd_pd,
        _mm256_blendv_pd,
        id_pd
    );
    avx2_lanes!(
        Y16s,
        f32,
        __m256,
        16,
        8,
        u32,
        _mm256_setzero_ps,
        _mm256_set1_ps,
        _mm256_loadu_ps,
        _mm256_storeu_ps,
        _mm256_mul_ps,
        _mm256_fmadd_ps,
        _mm256_fnmadd_ps,
        _mm256_blendv_ps,
        id_ps
    );

    /// TRSM on NC columns (column c at `x + c*ldx`), tile by tile in solve order: the rows
    /// already finished are applied as rank-1 updates (packed column of T times broadcast
    /// element of X), then the tile's own triangle one unknown at a time, masked so that rows
    /// outside the triangle are left exactly as they are.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn trsm_col<L: Lanes, const NC: usize, const LOWER: bool>(
        mb: usize,
        ld: usize,
        p: *const L::E,
        d: *const L::E,
        alpha: L::E,
        x: *mut L::E,
        ldx: isize,
    ) {
        let tl = L::TL;
        let ntiles = ld / tl;
        let va = L::splat(alpha);
        let scale = !alpha.is_one();
        for step in 0..ntiles {
            let tile = if LOWER { step } else { ntiles - 1 - step };
            let s = tile * tl;
            let len = tl.min(mb - s);
            let mut acc = [L::zero(); NC];
            for (c, a) in acc.iter_mut().enumerate() {
                let xc = x.offset(c as isize * ldx).add(s);
                *a = if len == tl { L::load(xc) } else { L::load_part(xc, len) };
                if scale {
                    *a = a.mul(va);
                }
            }
            let (j0, j1) = if LOWER { (0, s) } else { ((s + tl).min(mb), mb) };
            for j in j0..j1 {
                let col = L::load(p.add(j * ld + s));
                for (c, a) in acc.iter_mut().enumerate() {
                    *a = a.msub_at(col, x.offset(c as isize * ldx).add(j));
                }
            }
            let (pd, ds) = (p.add(s * ld + s), d.add(s));
            for kk in 0..len {
                let k = if LOWER { kk } else { len - 1 - kk };
                let col = L::load(pd.add(k * ld));
                let dk = L::splat(*ds.add(k));
                let m = if LOWER { L::lanes(k + 1, tl) } else { L::lanes(0, k) };
                for a in acc.iter_mut() {
                    let xk = a.bcast_lane(k).mul(dk);
                    *a = a.select(a.msub(col, xk), m);
                }
            }
            // Lane k still holds its unscaled value: scale all lanes by their diagonal.
            let dv = L::load(ds);
            for (c, a) in acc.iter().enumerate() {
                let xc = x.offset(c as isize * ldx).add(s);
                let v = a.mul(dv);
                if len == tl {
                    v.store(xc)
                } else {
                    v.store_part(xc, len)
                }
            }
        }
    }

    /// TRMM on NC columns; the packed columns carry the diagonal. Tiles go bottom-up for lower
    /// T, top-down for upper, so the rows a tile reads outside itself still hold old values.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn trmm_col<L: Lanes, const NC: usize, const LOWER: bool>(
        mb: usize,
        ld: usize,
        p: *const L::E,
        alpha: L::E,
        x: *mut L::E,
        ldx: isize,
    ) {
        let tl = L::TL;
        let ntiles = ld / tl;
        let va = L::splat(alpha);
        let scale = !alpha.is_one();
        for step in 0..ntiles {
            let tile = if LOWER { ntiles - 1 - step } else { step };
            let s = tile * tl;
            let len = tl.min(mb - s);
            let mut acc = [L::zero(); NC];
            let pd = p.add(s * ld + s);
            for k in 0..len {
                let col = L::load(pd.add(k * ld));
                let m = if LOWER { L::lanes(k, tl) } else { L::lanes(0, k + 1) };
                for (c, a) in acc.iter_mut().enumerate() {
                    *a = a.select(a.madd_at(col, x.offset(c as isize * ldx).add(s + k)), m);
                }
            }
            let (j0, j1) = if LOWER { (0, s) } else { ((s + tl).min(mb), mb) };
            for j in j0..j1 {
                let col = L::load(p.add(j * ld + s));
                for (c, a) in acc.iter_mut().enumerate() {
                    *a = a.madd_at(col, x.offset(c as isize * ldx).add(j));
                }
            }
            for (c, a) in acc.iter().enumerate() {
                let xc = x.offset(c as isize * ldx).add(s);
                let v = if scale { a.mul(va) } else { *a };
                if len == tl {
                    v.store(xc)
                } else {
                    v.store_part(xc, len)
                }
            }
        }
    }

    /// All `n` columns: groups of NC, then single columns.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn cols<L: Lanes, const NC: usize>(
        solve: bool,
        lower: bool,
        mb: usize,
        ld: usize,
        p: *const L::E,
        d: *const L::E,
        alpha: L::E,
        x: *mut L::E,
        ldx: isize,
        n: usize,
    ) {
        macro_rules! each {
            ($j:expr, $nc:expr, $lower:literal) => {{
                let xj = x.offset($j as isize * ldx);
                if solve {
                    trsm_col::<L, $nc, $lower>(mb, ld, p, d, alpha, xj, ldx)
                } else {
                    trmm_col::<L, $nc, $lower>(mb, ld, p, alpha, xj, ldx)
                }
            }};
        }
        let mut j = 0;
        while j + NC <= n {
            if lower {
                each!(j, NC, true)
            } else {
                each!(j, NC, false)
            }
            j += NC;
        }
        while j < n {
            if lower {
                each!(j, 1, true)
            } else {
                each!(j, 1, false)
            }
            j += 1;
        }
    }

    macro_rules! entry {
        ($name:ident, $e:ty, $z:ty, $nc:literal $(, $y:ty)?) => {
            /// Column kernels for this precision at the best available level (never called at
            /// the levels `has_simd_cols` rules out: the baseline, and AVX2 for complex types).
            #[allow(clippy::too_many_arguments)]
            pub(super) unsafe fn $name(
                solve: bool,
                lower: bool,
                mb: usize,
                ld: usize,
                p: *const $e,
                d: *const $e,
                alpha: $e,
                x: *mut $e,
                ldx: isize,
                n: usize,
            ) {
                #[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
                #[allow(clippy::too_many_arguments)]
                unsafe fn avx512(
                    solve: bool,
                    lower: bool,
                    mb: usize,
                    ld: usize,
                    p: *const $e,
                    d: *const $e,
                    alpha: $e,
                    x: *mut $e,
                    ldx: isize,
                    n: usize,
                ) {
                    cols::<$z, $nc>(solve, lower, mb, ld, p, d, alpha, x, ldx, n)
                }
                if *ISA == Level::Avx512 {
                    return avx512(solve, lower, mb, ld, p, d, alpha, x, ldx, n);
                }
                $(
                    #[target_feature(enable = "avx2,fma")]
                    #[allow(clippy::too_many_arguments)]
                    unsafe fn avx2(
                        solve: bool,
                        lower: bool,
                        mb: usize,
                        ld: usize,
                        p: *const $e,
                        d: *const $e,
                        alpha: $e,
                        x: *mut $e,
                        ldx: isize,
                        n: usize,
                    ) {
                        // Two registers per tile column: fewer columns fit in 16 registers.
                        cols::<$y, 4>(solve, lower, mb, ld, p, d, alpha, x, ldx, n)
                    }
                    if *ISA == Level::Avx2 {
                        avx2(solve, lower, mb, ld, p, d, alpha, x, ldx, n)
                    }
                )?
            }
        };
    }
    entry!(cols_f64, f64, Z8d, 8, Y8d);
    entry!(cols_f32, f32, Z16s, 8, Y16s);
    // Complex: AVX-512 only; groups of 4 columns, as the leaf's complex-double slices are 4 wide
    // (in groups of 8 every column of a slice ran alone, with nothing to overlap its chain of
    // unknowns).
    entry!(cols_c64, crate::types::C64, Z4z, 4);
    entry!(cols_c32, crate::types::C32, Z8c, 4);

    /// Complex tiles for the column kernels: TL complex values of one 512-bit register,
    /// (re, im) interleaved; products are complex (`mul`, `madd`, `msub`), lane i is the
    /// pair (2i, 2i+1). With them the TRSM/TRMM leaf's complex diagonal tiles run in place on
    /// X like the real ones; through the row kernels (a transposing copy out and back per
    /// 12 x 4 tile) they took 13% of a 1-thread ZTRSM 512 LLCN for about 2% of its flops.
    macro_rules! complex_lanes {
        ($name:ident, $e:ty, $r:ty, $v:ty, $mask:ty, $tl:literal, $setzero:ident, $loadu:ident, $storeu:ident,
         $maskz_loadu:ident, $mask_storeu:ident, $mul:ident, $fmaddsub:ident, $fmadd:ident, $fnmadd:ident,
         $set1:ident, $xor:expr, $blend:ident, $re:ident, $im:ident, $swap:expr, $splat:expr, $bcast:expr) => {
            #[derive(Clone, Copy)]
            pub(super) struct $name($v);
            impl $name {
                /// The complex product a*b, lane by lane.
                #[inline(always)]
                unsafe fn prod(a: $v, b: $v) -> $v {
                    $fmaddsub(a, $re(b), $mul($swap(a), $im(b)))
                }
                /// a's pairs swapped, the new real parts negated, (-im, re): a*b is then
                /// a*re(b) + swapn(a)*im(b), two multiply-adds.
                #[inline(always)]
                unsafe fn swapn(a: $v) -> $v {
                    $xor($swap(a))
                }
                /// s + sign*(a*(re, im)), sign = 1 or -1.
                #[inline(always)]
                unsafe fn fused(s: $v, a: $v, re: $v, im: $v, sign: bool) -> $v {
                    if sign {
                        $fmadd(Self::swapn(a), im, $fmadd(a, re, s))
                    } else {
                        $fnmadd(Self::swapn(a), im, $fnmadd(a, re, s))
                    }
                }
            }
            impl Lanes for $name {
                type E = $e;
                type Mask = $mask;
                const TL: usize = $tl;
                #[inline(always)]
                unsafe fn zero() -> Self {
                    $name($setzero())
                }
                #[inline(always)]
                unsafe fn splat(v: $e) -> Self {
                    $name($splat(v.re, v.im))
                }
                #[inline(always)]
                unsafe fn load(p: *const $e) -> Self {
                    $name($loadu(p as *const $r))
                }
                #[inline(always)]
                unsafe fn store(self, p: *mut $e) {
                    $storeu(p as *mut $r, self.0)
                }
                #[inline(always)]
                unsafe fn load_part(p: *const $e, len: usize) -> Self {
                    $name($maskz_loadu(bits(0, 2 * len) as $mask, p as *const $r))
                }
                #[inline(always)]
                unsafe fn store_part(self, p: *mut $e, len: usize) {
                    $mask_storeu(p as *mut $r, bits(0, 2 * len) as $mask, self.0)
                }
                #[inline(always)]
                unsafe fn mul(self, b: Self) -> Self {
                    $name(Self::prod(self.0, b.0))
                }
                #[inline(always)]
                unsafe fn madd(self, a: Self, b: Self) -> Self {
                    $name(Self::fused(self.0, a.0, $re(b.0), $im(b.0), true))
                }
                #[inline(always)]
                unsafe fn msub(self, a: Self, b: Self) -> Self {
                    $name(Self::fused(self.0, a.0, $re(b.0), $im(b.0), false))
                }
                #[inline(always)]
                unsafe fn madd_at(self, a: Self, x: *const $e) -> Self {
                    let x = x as *const $r;
                    $name(Self::fused(self.0, a.0, $set1(*x), $set1(*x.add(1)), true))
                }
                #[inline(always)]
                unsafe fn msub_at(self, a: Self, x: *const $e) -> Self {
                    let x = x as *const $r;
                    $name(Self::fused(self.0, a.0, $set1(*x), $set1(*x.add(1)), false))
                }
                #[inline(always)]
                unsafe fn lanes(lo: usize, hi: usize) -> $mask {
                    bits(2 * lo, 2 * hi) as $mask
                }
                #[inline(always)]
                unsafe fn select(self, new: Self, m: $mask) -> Self {
                    $name($blend(m, self.0, new.0))
                }
                #[inline(always)]
                unsafe fn bcast_lane(self, i: usize) -> Self {
                    $name($bcast(self.0, i))
                }
            }
        };
    }
    complex_lanes!(
        Z4z,
        crate::types::C64,
        f64,
        __m512d,
        __mmask8,
        4,
        _mm512_setzero_pd,
        _mm512_loadu_pd,
        _mm512_storeu_pd,
        _mm512_maskz_loadu_pd,
        _mm512_mask_storeu_pd,
        _mm512_mul_pd,
        _mm512_fmaddsub_pd,
        _mm512_fmadd_pd,
        _mm512_fnmadd_pd,
        _mm512_set1_pd,
        |v| _mm512_castsi512_pd(_mm512_xor_si512(
            _mm512_castpd_si512(v),
            _mm512_set_epi64(0, i64::MIN, 0, i64::MIN, 0, i64::MIN, 0, i64::MIN)
        )),
        _mm512_mask_blend_pd,
        _mm512_movedup_pd,
        dup_odd_pd,
        |a| _mm512_permute_pd::<0x55>(a),
        |re, im| _mm512_set_pd(im, re, im, re, im, re, im, re),
        |a, i: usize| {
            let (lo, hi) = (2 * i as i64, 2 * i as i64 + 1);
            _mm512_permutexvar_pd(_mm512_set_epi64(hi, lo, hi, lo, hi, lo, hi, lo), a)
        }
    );
    complex_lanes!(
        Z8c,
        crate::types::C32,
        f32,
        __m512,
        __mmask16,
        8,
        _mm512_setzero_ps,
        _mm512_loadu_ps,
        _mm512_storeu_ps,
        _mm512_maskz_loadu_ps,
        _mm512_mask_storeu_ps,
        _mm512_mul_ps,
        _mm512_fmaddsub_ps,
        _mm512_fmadd_ps,
        _mm512_fnmadd_ps,
        _mm512_set1_ps,
        |v| _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(v), _mm512_set1_epi64(0x8000_0000))),
        _mm512_mask_blend_ps,
        _mm512_moveldup_ps,
        _mm512_movehdup_ps,
        |a| _mm512_permute_ps::<0xb1>(a),
        |re: f32, im: f32| _mm512_castpd_ps(_mm512_set1_pd(f64::from_bits(
            ((im.to_bits() as u64) << 32) | re.to_bits() as u64
        ))),
        |a, i: usize| _mm512_permutexvar_ps(_mm512_set1_epi64((((2 * i + 1) as i64) << 32) | (2 * i) as i64), a)
    );

    /// The imaginary parts of each pair in both lanes.
    #[inline(always)]
    unsafe fn dup_odd_pd(a: __m512d) -> __m512d {
        _mm512_permute_pd::<0xff>(a)
    }

    /// From the right, a whole tile's diagonal block with the tile in registers: 8 columns of
    /// B (V vectors of rows each, column c at `tile + c*ldt`), solved or multiplied
    /// right-looking as `leaf::right_tile_body`, stored back, and for TRSM also to `cols`
    /// (column c at `c*V*TL`). Through a buffer on the stack each step waited on the stores of
    /// the step before. The steps are unrolled (and SOLVE, LOWER fixed) so that every column
    /// index is a constant and the tile never leaves the registers.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn right_regs<L: Lanes, const V: usize, const SOLVE: bool, const LOWER: bool>(
        p: *const L::E,
        d: *const L::E,
        alpha: L::E,
        tile: *mut L::E,
        ldt: isize,
        cols: *mut L::E,
    ) {
        const W: usize = 8;
        let tl = L::TL;
        let mut x = [[L::zero(); V]; W];
        for (c, xc) in x.iter_mut().enumerate() {
            for (v, xv) in xc.iter_mut().enumerate() {
                *xv = L::load(tile.offset(c as isize * ldt).add(v * tl));
            }
        }
        macro_rules! step {
            ($($step:literal)*) => {$({
                let k = if SOLVE == LOWER { $step } else { W - 1 - $step };
                let (i0, i1) = if LOWER { (k + 1, W) } else { (0, k) };
                let first = L::splat(if SOLVE { *d.add(k) } else { alpha });
                for v in 0..V {
                    x[k][v] = x[k][v].mul(first);
                }
                let xk = x[k];
                for i in i0..i1 {
                    let s = L::splat(*p.add(i * W + k));
                    for v in 0..V {
                        x[i][v] = if SOLVE { x[i][v].msub(s, xk[v]) } else { x[i][v].madd(s, xk[v]) };
                    }
                }
                if !SOLVE {
                    let dk = L::splat(*d.add(k));
                    for v in 0..V {
                        x[k][v] = x[k][v].mul(dk);
                    }
                }
            })*};
        }
        step!(0 1 2 3 4 5 6 7);
        for (c, xc) in x.iter().enumerate() {
            for (v, xv) in xc.iter().enumerate() {
                xv.store(tile.offset(c as isize * ldt).add(v * tl));
                if SOLVE {
                    xv.store(cols.add((c * V + v) * tl));
                }
            }
        }
    }

    /// `f` compiled for AVX-512 (inlined into this function's target features).
    #[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
    #[inline]
    unsafe fn at_avx512<R>(f: impl FnOnce() -> R) -> R {
        f()
    }

    macro_rules! right_entry {
        ($name:ident, $e:ty, $z:ty, $h:literal) => {
            /// [`right_regs`] for this precision's whole tiles ($h x 8) on AVX-512; false
            /// otherwise.
            #[allow(clippy::too_many_arguments)]
            pub(super) unsafe fn $name(
                solve: bool,
                lower: bool,
                p: *const $e,
                d: *const $e,
                alpha: $e,
                tile: *mut $e,
                ldt: isize,
                hw: (usize, usize),
                cols: *mut $e,
            ) -> bool {
                if *ISA != Level::Avx512 || hw != ($h, 8) {
                    return false;
                }
                const V: usize = $h / <$z as Lanes>::TL;
                at_avx512(
                    #[inline(always)]
                    || match (solve, lower) {
                        (true, true) => right_regs::<$z, V, true, true>(p, d, alpha, tile, ldt, cols),
                        (true, false) => right_regs::<$z, V, true, false>(p, d, alpha, tile, ldt, cols),
                        (false, true) => right_regs::<$z, V, false, true>(p, d, alpha, tile, ldt, cols),
                        (false, false) => right_regs::<$z, V, false, false>(p, d, alpha, tile, ldt, cols),
                    },
                );
                true
            }
        };
    }
    right_entry!(right_f64, f64, Z8d, 24);
    right_entry!(right_f32, f32, Z16s, 48);
}
