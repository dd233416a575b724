//! TRMM (B := alpha*op(A)*B or alpha*B*op(A)) and TRSM (the same with op(A)^-1), A triangular.
//!
//! Every case is first rewritten as a left-side product or solve with a lower or upper
//! triangular `T` and no transposition: for side Right, B*op(A) is the transpose of
//! op(A)^T * B^T, and views carry transposition in their strides; a conjugate without
//! transpose (Right, `C`) becomes a `conj` flag. Then the triangle is split recursively into
//! 2x2 blocks: the diagonal blocks recurse, the off-diagonal block is one GEMM, so nearly all
//! flops run in the GEMM kernels. Blocks of order `<= HYBLAS_TRI_NB` go to a base case that
//! packs the small triangle (conjugated, with the reciprocal diagonal for TRSM) and runs a
//! register-blocked kernel directly on B:
//! - B's columns contiguous (left side, column-major B): tiles of one SIMD vector of rows by
//!   a few columns held in registers; the rows already finished are applied GEMM-style
//!   (vector of T times broadcast element of B) and only the small tile triangle is sequential.
//! - B's rows contiguous (the transposed right-side problem): vectors run across B's columns,
//!   each row of the result is a dot product of earlier rows.
//!
//! TRMM works in place: blocks and tiles are visited in the order that reads every element
//! of B before it is overwritten, so no copy of B is made.
//!
//! Threads: past `HYBLAS_TRI_PAR_MIN` (m*m*n) the right-hand sides (B's columns for side
//! Left, rows for side Right) are split across threads, each part an independent problem.
//! Narrow problems stay whole and take their parallelism from GEMM.
//!
//! Reference semantics: only the referenced triangle of A is read and the unit diagonal never;
//! alpha == 0 zeroes B without reading A or B. Zero padding in the packed tiles never meets a
//! value of B: the tile kernels select, not multiply, outside the triangle, so Inf/NaN in B
//! spread only where the arithmetic really reaches them.

use crate::cpu::level3::gemm::gemm;
use crate::cpu::simd::{Level, LEVEL};
use crate::cpu::threads;
use crate::types::{Diag, MatMut, MatRef, Scalar, Side, Trans, Uplo, C32, C64};
use num_traits::Float;
use once_cell::sync::Lazy;

/// Order of the diagonal blocks handled by the base-case kernels (rounded to the SIMD tile).
pub static TRI_NB: Lazy<usize> = Lazy::new(|| crate::config::threshold("HYBLAS_TRI_NB", 64).max(1));

/// m*m*n (rows of the triangle squared times right-hand sides) below which a TRMM/TRSM runs
/// on one thread.
pub static TRI_PAR_MIN: Lazy<usize> = Lazy::new(|| crate::config::threshold("HYBLAS_TRI_PAR_MIN", 96 * 96 * 96));

/// Right-hand sides a thread should get at least when they are split.
const MIN_RHS_PER_THREAD: usize = 16;

/// Per-precision tile shapes of the base-case kernels. Implemented for the four precisions;
/// every kernel body stays generic over `Scalar`.
pub trait TriScalar: Scalar {
    /// Solve op(T) X = alpha*B for a diagonal block (order <= NB) in place.
    ///
    /// # Safety
    /// As [`trsm`]; `t` and `x` consistent.
    unsafe fn trsm_base(t: Tri<Self>, alpha: Self, x: MatMut<Self>);
    /// X := alpha*T*X for a diagonal block in place.
    ///
    /// # Safety
    /// As [`trmm`].
    unsafe fn trmm_base(t: Tri<Self>, alpha: Self, x: MatMut<Self>);
}

macro_rules! tri_scalar {
    ($t:ty, $tl:literal, $nc:literal, $w:literal) => {
        impl TriScalar for $t {
            unsafe fn trsm_base(t: Tri<Self>, alpha: Self, x: MatMut<Self>) {
                base::<$t, $tl, $nc, $w>(Op::Solve, t, alpha, x)
            }
            unsafe fn trmm_base(t: Tri<Self>, alpha: Self, x: MatMut<Self>) {
                base::<$t, $tl, $nc, $w>(Op::Multiply, t, alpha, x)
            }
        }
    };
}
// TL: rows per tile (one 512-bit vector); NC: columns per tile; W: row-kernel width.
tri_scalar!(f32, 16, 8, 128);
tri_scalar!(f64, 8, 8, 64);
tri_scalar!(C32, 8, 4, 32);
tri_scalar!(C64, 4, 4, 16);

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

#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
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

/// Run `f` on the whole of X, or on column slices of X in parallel when the problem is big
/// enough (the columns of X are independent right-hand sides).
unsafe fn drive<T: Scalar>(t: Tri<T>, alpha: T, x: MatMut<T>, f: unsafe fn(Tri<T>, T, MatMut<T>)) {
    let (m, n) = (x.rows, x.cols);
    let work = m.saturating_mul(m).saturating_mul(n);
    let nt = threads::nthreads();
    if nt <= 1 || work < *TRI_PAR_MIN || n < 2 * MIN_RHS_PER_THREAD {
        return f(t, alpha, x);
    }
    let parts = nt.min(n / MIN_RHS_PER_THREAD);
    // Part widths rounded to 16 columns keep the kernels' vector chunks whole.
    let chunk = n.div_ceil(parts).next_multiple_of(16);
    let parts = n.div_ceil(chunk);
    threads::for_each_part(parts, parts, |p| {
        let x = x;
        let s = p * chunk;
        let len = chunk.min(n - s);
        // SAFETY: the parts are disjoint column ranges of X.
        unsafe { f(t, alpha, x.sub(0, s, m, len)) }
    });
}

/// Split point of an order-m triangle: half of its NB-blocks, so base blocks stay whole.
fn split(m: usize, nb: usize) -> usize {
    (m.div_ceil(nb) / 2) * nb
}

/// Block order of the base case for precision T: NB rounded to whole tiles.
fn block_order<T: Scalar>() -> usize {
    let tile = 64 / std::mem::size_of::<T>();
    (*TRI_NB).next_multiple_of(tile)
}

unsafe fn trsm_rec<T: TriScalar>(t: Tri<T>, alpha: T, x: MatMut<T>) {
    let nb = block_order::<T>();
    let (m, n) = (x.rows, x.cols);
    if m <= nb {
        return T::trsm_base(t, alpha, x);
    }
    let m1 = split(m, nb);
    let m2 = m - m1;
    let (x1, x2) = (x.sub(0, 0, m1, n), x.sub(m1, 0, m2, n));
    let minus = -T::one();
    if t.lower {
        // X1 = alpha*T11^-1 B1; then T22 X2 = alpha*B2 - T21 X1.
        trsm_rec(t.diag(0, m1), alpha, x1);
        gemm(minus, t.a.sub(m1, 0, m2, m1), t.conj, x1.as_ref(), false, alpha, x2);
        trsm_rec(t.diag(m1, m2), T::one(), x2);
    } else {
        trsm_rec(t.diag(m1, m2), alpha, x2);
        gemm(minus, t.a.sub(0, m1, m1, m2), t.conj, x2.as_ref(), false, alpha, x1);
        trsm_rec(t.diag(0, m1), T::one(), x1);
    }
}

unsafe fn trmm_rec<T: TriScalar>(t: Tri<T>, alpha: T, x: MatMut<T>) {
    let nb = block_order::<T>();
    let (m, n) = (x.rows, x.cols);
    if m <= nb {
        return T::trmm_base(t, alpha, x);
    }
    let m1 = split(m, nb);
    let m2 = m - m1;
    let (x1, x2) = (x.sub(0, 0, m1, n), x.sub(m1, 0, m2, n));
    if t.lower {
        // X2 := alpha*(T21 X1 + T22 X2) needs the old X1: finish X2 first.
        trmm_rec(t.diag(m1, m2), alpha, x2);
        gemm(alpha, t.a.sub(m1, 0, m2, m1), t.conj, x1.as_ref(), false, T::one(), x2);
        trmm_rec(t.diag(0, m1), alpha, x1);
    } else {
        trmm_rec(t.diag(0, m1), alpha, x1);
        gemm(alpha, t.a.sub(0, m1, m1, m2), t.conj, x2.as_ref(), false, T::one(), x1);
        trmm_rec(t.diag(m1, m2), alpha, x2);
    }
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
    drive(t, alpha, x, trsm_rec::<T>);
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
    drive(t, alpha, x, trmm_rec::<T>);
}

// ---------------------------------------------------------------------------------------
// Base case.

/// c + a*b; fused (one rounding) when `F`, which is only set where the build has FMA.
#[inline(always)]
fn madd<T: Scalar, const F: bool>(c: T, a: T, b: T) -> T {
    if !F {
        return c + a * b;
    }
    if T::IS_COMPLEX {
        let (ar, ai, br, bi) = (a.re(), a.im(), b.re(), b.im());
        let re = (-ai).mul_add(bi, ar.mul_add(br, c.re()));
        let im = ai.mul_add(br, ar.mul_add(bi, c.im()));
        T::from_parts(re, im)
    } else {
        T::from_real(a.re().mul_add(b.re(), c.re()))
    }
}

/// c - a*b (see [`madd`]).
#[inline(always)]
fn msub<T: Scalar, const F: bool>(c: T, a: T, b: T) -> T {
    madd::<T, F>(c, -a, b)
}

/// Call `$f::<generics.., F>(args)` compiled for the best SIMD level, with `F` (use fused
/// multiply-add) true where the level has FMA: without it `mul_add` would be a libm call.
macro_rules! fma_dispatch {
    ($f:ident::<$($g:tt),*>($($arg:expr),* $(,)?)) => {{
        #[cfg(target_arch = "x86_64")]
        {
            #[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
            #[inline]
            unsafe fn avx512<R>(f: impl FnOnce() -> R) -> R {
                f()
            }
            #[target_feature(enable = "avx2,fma")]
            #[inline]
            unsafe fn avx2<R>(f: impl FnOnce() -> R) -> R {
                f()
            }
            match *LEVEL {
                Level::Avx512 => avx512(|| $f::<$($g,)* true>($($arg),*)),
                Level::Avx2 => avx2(|| $f::<$($g,)* true>($($arg),*)),
                Level::Baseline => $f::<$($g,)* false>($($arg),*),
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = &*LEVEL;
            $f::<$($g,)* false>($($arg),*)
        }
    }};
}

/// The packed diagonal block: `p` holds T's strict triangle (conjugated if asked; zeros
/// elsewhere) as an `ld x ld` array, column-major for the column kernels (element (i, k) at
/// `k*ld + i`) and row-major for the row kernels (at `i*ld + k`); `d[k]` is the diagonal
/// (its reciprocal for TRSM, one for a unit diagonal, zero in the padding).
struct Packed<T> {
    p: Vec<T>,
    d: Vec<T>,
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
    }
    Packed { p, d }
}

/// 1/v (complex: conj(v)/|v|^2, scaled so that neither overflows nor underflows needlessly).
fn recip<T: Scalar>(v: T) -> T {
    if !T::IS_COMPLEX {
        return T::from_real(<T::Real as Scalar>::one() / v.re());
    }
    // Smith's algorithm, as Fortran compilers divide.
    let (a, b) = (v.re(), v.im());
    let one = <T::Real as Scalar>::one();
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

/// The base case: X (mb x n, mb <= NB) := alpha*T^-1*X or alpha*T*X.
unsafe fn base<T: Scalar, const TL: usize, const NC: usize, const W: usize>(op: Op, t: Tri<T>, alpha: T, x: MatMut<T>) {
    let mb = x.rows;
    if x.rs == 1 {
        let ld = mb.next_multiple_of(TL);
        let pk = pack(&t, op, ld, true);
        let (p, d) = (pk.p.as_ptr(), pk.d.as_ptr());
        let n = x.cols;
        let full = n - n % NC;
        let mut j = 0;
        while j < full {
            let xj = x.ptr_at(0, j);
            match op {
                Op::Solve => fma_dispatch!(trsm_col::<T, TL, NC>(t.lower, mb, ld, p, d, alpha, xj, x.cs)),
                Op::Multiply => fma_dispatch!(trmm_col::<T, TL, NC>(t.lower, mb, ld, p, d, alpha, xj, x.cs)),
            }
            j += NC;
        }
        while j < n {
            let xj = x.ptr_at(0, j);
            match op {
                Op::Solve => fma_dispatch!(trsm_col::<T, TL, 1>(t.lower, mb, ld, p, d, alpha, xj, x.cs)),
                Op::Multiply => fma_dispatch!(trmm_col::<T, TL, 1>(t.lower, mb, ld, p, d, alpha, xj, x.cs)),
            }
            j += 1;
        }
    } else if x.cs == 1 {
        let pk = pack(&t, op, mb, false);
        let (p, d) = (pk.p.as_ptr(), pk.d.as_ptr());
        fma_dispatch!(row_kernels::<T, TL, W>(op, t.lower, mb, p, d, alpha, x.ptr, x.rs, x.cols));
    } else {
        // General strides (no ABI path makes these): work on a column-major copy.
        let mut buf: Vec<T> = Vec::with_capacity(mb * x.cols);
        for j in 0..x.cols {
            for i in 0..mb {
                buf.push(x.get(i, j));
            }
        }
        base::<T, TL, NC, W>(op, t, alpha, MatMut::col_major(buf.as_mut_ptr(), mb, x.cols, mb));
        for j in 0..x.cols {
            for i in 0..mb {
                *x.at(i, j) = buf[j * mb + i];
            }
        }
    }
}

/// Row kernels over all of X's columns: chunks of W, then of TL, then single columns.
#[inline(always)]
unsafe fn row_kernels<T: Scalar, const TL: usize, const W: usize, const F: bool>(
    op: Op,
    lower: bool,
    mb: usize,
    p: *const T,
    d: *const T,
    alpha: T,
    x: *mut T,
    rs: isize,
    n: usize,
) {
    let mut j = 0;
    macro_rules! run {
        ($w:tt) => {
            while j + $w <= n {
                match op {
                    Op::Solve => trsm_row::<T, $w, F>(lower, mb, p, d, alpha, x.add(j), rs),
                    Op::Multiply => trmm_row::<T, $w, F>(lower, mb, p, d, alpha, x.add(j), rs),
                }
                j += $w;
            }
        };
    }
    run!(W);
    run!(TL);
    run!(1);
}

/// Load rows [s, s+len) of NC columns (column c at `x + c*ldx`) into a zero-padded tile.
#[inline(always)]
unsafe fn load_tile<T: Scalar, const TL: usize, const NC: usize>(
    x: *const T,
    ldx: isize,
    s: usize,
    len: usize,
    scale: T,
) -> [[T; TL]; NC] {
    let mut tile = [[T::zero(); TL]; NC];
    for (c, col) in tile.iter_mut().enumerate() {
        let xc = x.offset(c as isize * ldx).add(s);
        if len == TL {
            for (r, v) in col.iter_mut().enumerate() {
                *v = *xc.add(r) * scale;
            }
        } else {
            for (r, v) in col.iter_mut().enumerate().take(len) {
                *v = *xc.add(r) * scale;
            }
        }
    }
    tile
}

#[inline(always)]
unsafe fn store_tile<T: Scalar, const TL: usize, const NC: usize>(
    tile: &[[T; TL]; NC],
    x: *mut T,
    ldx: isize,
    s: usize,
    len: usize,
) {
    for (c, col) in tile.iter().enumerate() {
        let xc = x.offset(c as isize * ldx).add(s);
        if len == TL {
            for (r, &v) in col.iter().enumerate() {
                *xc.add(r) = v;
            }
        } else {
            for (r, &v) in col.iter().enumerate().take(len) {
                *xc.add(r) = v;
            }
        }
    }
}

/// acc[c] += sign * P[s.., j] * x[j, c] for j in j0..j1: the GEMM-like part of a tile.
#[inline(always)]
unsafe fn tile_update<T: Scalar, const TL: usize, const NC: usize, const F: bool, const SUB: bool>(
    acc: &mut [[T; TL]; NC],
    p: *const T,
    ld: usize,
    s: usize,
    x: *const T,
    ldx: isize,
    j0: usize,
    j1: usize,
) {
    for j in j0..j1 {
        let col = p.add(j * ld + s);
        let mut xj = [T::zero(); NC];
        for (c, v) in xj.iter_mut().enumerate() {
            *v = *x.offset(c as isize * ldx).add(j);
        }
        for (c, a) in acc.iter_mut().enumerate() {
            for (r, v) in a.iter_mut().enumerate() {
                *v = if SUB { msub::<T, F>(*v, *col.add(r), xj[c]) } else { madd::<T, F>(*v, *col.add(r), xj[c]) };
            }
        }
    }
}

/// TRSM column kernel: NC contiguous columns (column c at `x + c*ldx`) of an order-mb block,
/// packed column-major with leading dimension `ld` (mb rounded up to TL).
#[inline(always)]
unsafe fn trsm_col<T: Scalar, const TL: usize, const NC: usize, const F: bool>(
    lower: bool,
    mb: usize,
    ld: usize,
    p: *const T,
    d: *const T,
    alpha: T,
    x: *mut T,
    ldx: isize,
) {
    let ntiles = ld / TL;
    for step in 0..ntiles {
        let tile = if lower { step } else { ntiles - 1 - step };
        let s = tile * TL;
        let len = TL.min(mb - s);
        let mut acc = load_tile::<T, TL, NC>(x, ldx, s, len, alpha);
        // Rows solved so far: above the tile (forward) or below it (backward).
        let (j0, j1) = if lower { (0, s) } else { ((s + TL).min(mb), mb) };
        tile_update::<T, TL, NC, F, true>(&mut acc, p, ld, s, x, ldx, j0, j1);
        // The tile's own triangle, one row at a time.
        let pd = p.add(s * ld + s);
        for kk in 0..TL {
            let k = if lower { kk } else { TL - 1 - kk };
            let dk = *d.add(s + k);
            let colk = pd.add(k * ld);
            for a in acc.iter_mut() {
                let xk = a[k] * dk;
                a[k] = xk;
                for (i, v) in a.iter_mut().enumerate() {
                    let below = if lower { i > k } else { i < k };
                    if below {
                        *v = msub::<T, F>(*v, *colk.add(i), xk);
                    }
                }
            }
        }
        store_tile(&acc, x, ldx, s, len);
    }
}

/// TRMM column kernel (layout as [`trsm_col`]). Tiles go bottom-up for lower T, top-down for
/// upper, so the rows a tile reads outside itself still hold their old values.
#[inline(always)]
unsafe fn trmm_col<T: Scalar, const TL: usize, const NC: usize, const F: bool>(
    lower: bool,
    mb: usize,
    ld: usize,
    p: *const T,
    d: *const T,
    alpha: T,
    x: *mut T,
    ldx: isize,
) {
    let ntiles = ld / TL;
    for step in 0..ntiles {
        let tile = if lower { ntiles - 1 - step } else { step };
        let s = tile * TL;
        let len = TL.min(mb - s);
        let old = load_tile::<T, TL, NC>(x, ldx, s, len, T::one());
        let mut acc = [[T::zero(); TL]; NC];
        // The tile's own triangle.
        let pd = p.add(s * ld + s);
        for k in 0..TL {
            let dk = *d.add(s + k);
            let colk = pd.add(k * ld);
            for (a, o) in acc.iter_mut().zip(old.iter()) {
                let xk = o[k];
                for (i, v) in a.iter_mut().enumerate() {
                    let inside = if lower { i > k } else { i < k };
                    if inside {
                        *v = madd::<T, F>(*v, *colk.add(i), xk);
                    } else if i == k {
                        *v = madd::<T, F>(*v, dk, xk);
                    }
                }
            }
        }
        // Rows outside the tile: above it (lower) or below it (upper), not yet overwritten.
        let (j0, j1) = if lower { (0, s) } else { ((s + TL).min(mb), mb) };
        tile_update::<T, TL, NC, F, false>(&mut acc, p, ld, s, x, ldx, j0, j1);
        if !alpha.is_one() {
            for a in acc.iter_mut() {
                for v in a.iter_mut() {
                    *v *= alpha;
                }
            }
        }
        store_tile(&acc, x, ldx, s, len);
    }
}

/// TRSM row kernel: W contiguous columns of an order-mb block whose rows are `rs` apart;
/// T packed row-major with leading dimension mb.
#[inline(always)]
unsafe fn trsm_row<T: Scalar, const W: usize, const F: bool>(
    lower: bool,
    mb: usize,
    p: *const T,
    d: *const T,
    alpha: T,
    x: *mut T,
    rs: isize,
) {
    for step in 0..mb {
        let k = if lower { step } else { mb - 1 - step };
        let xk = x.offset(k as isize * rs);
        let mut acc = [T::zero(); W];
        for (c, v) in acc.iter_mut().enumerate() {
            *v = *xk.add(c) * alpha;
        }
        let (i0, i1) = if lower { (0, k) } else { (k + 1, mb) };
        let prow = p.add(k * mb);
        for i in i0..i1 {
            let tki = *prow.add(i);
            let xi = x.offset(i as isize * rs);
            for (c, v) in acc.iter_mut().enumerate() {
                *v = msub::<T, F>(*v, tki, *xi.add(c));
            }
        }
        let dk = *d.add(k);
        for (c, &v) in acc.iter().enumerate() {
            *xk.add(c) = v * dk;
        }
    }
}

/// TRMM row kernel (layout as [`trsm_row`]): rows bottom-up for lower T, top-down for upper.
#[inline(always)]
unsafe fn trmm_row<T: Scalar, const W: usize, const F: bool>(
    lower: bool,
    mb: usize,
    p: *const T,
    d: *const T,
    alpha: T,
    x: *mut T,
    rs: isize,
) {
    for step in 0..mb {
        let k = if lower { mb - 1 - step } else { step };
        let xk = x.offset(k as isize * rs);
        let dk = *d.add(k);
        let mut acc = [T::zero(); W];
        for (c, v) in acc.iter_mut().enumerate() {
            *v = dk * *xk.add(c);
        }
        let (i0, i1) = if lower { (0, k) } else { (k + 1, mb) };
        let prow = p.add(k * mb);
        for i in i0..i1 {
            let tki = *prow.add(i);
            let xi = x.offset(i as isize * rs);
            for (c, v) in acc.iter_mut().enumerate() {
                *v = madd::<T, F>(*v, tki, *xi.add(c));
            }
        }
        for (c, &v) in acc.iter().enumerate() {
            *xk.add(c) = v * alpha;
        }
    }
}
