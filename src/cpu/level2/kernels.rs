//! The vectorised inner loops of Level 2.
//!
//! Three kernels, each over a group of `C` columns given by pointers (so full, packed and
//! banded storage share them): fused axpys into `y`, dots with `x`, and the symmetric step
//! that does both in one pass over the columns. The public entry points are generic over
//! `Scalar`; they hand the vectorisable prefix to a real (`r_*`) or complex (`c_*`) kernel
//! on the element type's real lanes (`simd.rs`) and finish the few remaining rows here.
//!
//! Const generics: `LV` = build level from `kdispatch!` (2 AVX-512, 1 AVX2+FMA, 0 SSE2);
//! `CJ`/`CN`/`CT` = read the matrix conjugated (no-ops for real types).
//!
//! Complex products on interleaved (re, im) lanes: with a = (ar, ai) and s = (sr, si),
//! a*s = a*(sr, sr) + swap(a*(si, -si)) and conj(a)*s = a*(sr, -sr) + swap(a*(si, si)), so
//! a group of columns accumulates two registers and swaps once per chunk; a dot keeps a*x
//! and a*swap(x) and combines their lanes at the end.

use super::simd::{with_vec, Vreg};
use crate::types::{Real, Scalar};

pub use crate::cpu::simd::mac;

#[inline(always)]
fn is_f64<T: Scalar>() -> bool {
    std::mem::size_of::<T::Real>() == 8
}

/// The real part of `v` as the concrete lane type `R` (same precision as T::Real: exact).
#[inline(always)]
fn re_as<T: Scalar, R: Real>(v: T) -> R {
    R::from_f64(v.re().to_f64())
}

#[inline(always)]
fn im_as<T: Scalar, R: Real>(v: T) -> R {
    R::from_f64(v.im().to_f64())
}

#[inline(always)]
fn from_lanes<T: Scalar, R: Real>(re: R, im: R) -> T {
    T::from_parts(<T::Real as Scalar>::from_f64(re.to_f64()), <T::Real as Scalar>::from_f64(im.to_f64()))
}

#[inline(always)]
fn cast_cols<T, R, const C: usize>(cols: &[*const T; C]) -> [*const R; C] {
    let mut out = [std::ptr::null(); C];
    for k in 0..C {
        out[k] = cols[k] as *const R;
    }
    out
}

#[inline(always)]
fn reals<T: Scalar, R: Real, const C: usize>(s: &[T; C]) -> [R; C] {
    let mut out = [<R as Scalar>::zero(); C];
    for k in 0..C {
        out[k] = re_as::<T, R>(s[k]);
    }
    out
}

#[inline(always)]
fn pairs<T: Scalar, R: Real, const C: usize>(s: &[T; C]) -> [(R, R); C] {
    let mut out = [(<R as Scalar>::zero(), <R as Scalar>::zero()); C];
    for k in 0..C {
        out[k] = (re_as::<T, R>(s[k]), im_as::<T, R>(s[k]));
    }
    out
}

#[inline(always)]
fn from_reals<T: Scalar, R: Real, const C: usize>(d: [R; C]) -> [T; C] {
    let mut out = [T::zero(); C];
    for k in 0..C {
        out[k] = from_lanes::<T, R>(d[k], <R as Scalar>::zero());
    }
    out
}

#[inline(always)]
fn from_pairs<T: Scalar, R: Real, const C: usize>(d: [(R, R); C]) -> [T; C] {
    let mut out = [T::zero(); C];
    for k in 0..C {
        out[k] = from_lanes::<T, R>(d[k].0, d[k].1);
    }
    out
}

/// Run the real or complex lane kernel for T: `$real`/`$cplx` are expressions using the
/// lane type `R` and register type `V` bound here.
macro_rules! lanes {
    ($T:ty, $LV:expr, |$R:ident, $V:ident| real => $real:expr, complex => $cplx:expr) => {
        if <$T>::IS_COMPLEX {
            if is_f64::<$T>() {
                type $R = f64;
                with_vec!($LV, f64, $V => $cplx)
            } else {
                type $R = f32;
                with_vec!($LV, f32, $V => $cplx)
            }
        } else if is_f64::<$T>() {
            type $R = f64;
            with_vec!($LV, f64, $V => $real)
        } else {
            type $R = f32;
            with_vec!($LV, f32, $V => $real)
        }
    };
}

// ---------------------------------------------------------------------------------------
// Public kernels.

/// y[0..m] += sum_k op(a_k[0..m]) * s[k]   (op = conj when `CJ`).
///
/// # Safety
/// The `C` columns and `y` hold `m` elements each; `y` overlaps none of them.
#[inline(always)]
pub unsafe fn axpy_cols<T: Scalar, const CJ: bool, const C: usize, const LV: u8>(
    cols: &[*const T; C],
    s: &[T; C],
    y: *mut T,
    m: usize,
) {
    let done = lanes!(T, LV, |R, V|
        real => r_axpy::<R, V, C>(&cast_cols(cols), &reals::<T, R, C>(s), y as *mut R, m),
        complex => c_axpy::<R, V, CJ, C>(&cast_cols(cols), &pairs::<T, R, C>(s), y as *mut R, m)
    );
    for i in done..m {
        let mut acc = *y.add(i);
        for k in 0..C {
            acc = mac::<T, LV>(acc, (*cols[k].add(i)).conj_if(CJ), s[k]);
        }
        *y.add(i) = acc;
    }
}

/// [sum_i op(a_k[i]) * x[i] for each k]   (op = conj when `CJ`).
///
/// # Safety
/// The `C` columns and `x` hold `m` elements each.
#[inline(always)]
pub unsafe fn dot_cols<T: Scalar, const CJ: bool, const C: usize, const LV: u8>(
    cols: &[*const T; C],
    x: *const T,
    m: usize,
) -> [T; C] {
    let (mut out, done): ([T; C], usize) = lanes!(T, LV, |R, V|
        real => {
            let (d, done) = r_dot::<R, V, C>(&cast_cols(cols), x as *const R, m);
            (from_reals::<T, R, C>(d), done)
        },
        complex => {
            let (d, done) = c_dot::<R, V, CJ, C>(&cast_cols(cols), x as *const R, m);
            (from_pairs::<T, R, C>(d), done)
        }
    );
    for i in done..m {
        let xi = *x.add(i);
        for k in 0..C {
            out[k] = mac::<T, LV>(out[k], (*cols[k].add(i)).conj_if(CJ), xi);
        }
    }
    out
}

/// The symmetric/Hermitian column step, one pass over the columns:
/// y[0..m] += sum_k opN(a_k) * t[k], and returns [sum_i opT(a_k[i]) * x[i] for each k].
///
/// # Safety
/// The `C` columns, `x` and `y` hold `m` elements each; `y` overlaps none of the others.
#[inline(always)]
pub unsafe fn symv_cols<T: Scalar, const CN: bool, const CT: bool, const C: usize, const LV: u8>(
    cols: &[*const T; C],
    t: &[T; C],
    x: *const T,
    y: *mut T,
    m: usize,
) -> [T; C] {
    let (mut out, done): ([T; C], usize) = lanes!(T, LV, |R, V|
        real => {
            let (d, done) = r_symv::<R, V, C>(&cast_cols(cols), &reals::<T, R, C>(t), x as *const R, y as *mut R, m);
            (from_reals::<T, R, C>(d), done)
        },
        complex => {
            let tp = pairs::<T, R, C>(t);
            let (d, done) = c_symv::<R, V, CN, CT, C>(&cast_cols(cols), &tp, x as *const R, y as *mut R, m);
            (from_pairs::<T, R, C>(d), done)
        }
    );
    for i in done..m {
        let xi = *x.add(i);
        let mut yi = *y.add(i);
        for k in 0..C {
            let a = *cols[k].add(i);
            yi = mac::<T, LV>(yi, a.conj_if(CN), t[k]);
            out[k] = mac::<T, LV>(out[k], a.conj_if(CT), xi);
        }
        *y.add(i) = yi;
    }
    out
}

/// Rows of the `y` block that stay in L1 while column groups stream past (16 KiB of `y`).
#[inline(always)]
pub fn row_block<T>() -> usize {
    (16 * 1024 / std::mem::size_of::<T>()).max(64)
}

/// Pointers to row `r0` of columns j..j+C.
#[inline(always)]
unsafe fn group<T, const C: usize>(col: &impl Fn(usize) -> *const T, j: usize, r0: usize) -> [*const T; C] {
    let mut cols = [std::ptr::null(); C];
    for (k, c) in cols.iter_mut().enumerate() {
        *c = col(j + k).add(r0);
    }
    cols
}

/// y[0..m] += sum_j A[0..m, j] * s(j), where column j of the block starts at `col(j)` and
/// `s(j)` is its (already scaled) multiplier; groups of 4 or 8 columns share each pass over
/// `y`; columns whose multiplier is zero are not read.
///
/// # Safety
/// `col(j)` points at `m` readable elements for each `j < n`; `y` has `m` elements and
/// overlaps no column.
#[inline(always)]
pub unsafe fn gemv_n_block<T: Scalar, const CJ: bool, const LV: u8>(
    m: usize,
    n: usize,
    col: impl Fn(usize) -> *const T,
    s: impl Fn(usize) -> T,
    y: *mut T,
) {
    let mb = row_block::<T>();
    let mut r0 = 0;
    while r0 < m {
        let rows = mb.min(m - r0);
        // Short columns: 8 per pass halves the passes over y (which dominate when the block
        // is in L1). Long ones: 4, fewer concurrent streams for the prefetchers.
        if rows <= 512 {
            n_pass::<T, CJ, 8, LV>(rows, n, &col, &s, r0, y.add(r0));
        } else {
            n_pass::<T, CJ, 4, LV>(rows, n, &col, &s, r0, y.add(r0));
        }
        r0 += rows;
    }
}

/// One row block of [`gemv_n_block`]: the columns with a non-zero multiplier, `G` at a time.
#[inline(always)]
unsafe fn n_pass<T: Scalar, const CJ: bool, const G: usize, const LV: u8>(
    rows: usize,
    n: usize,
    col: &impl Fn(usize) -> *const T,
    s: &impl Fn(usize) -> T,
    r0: usize,
    y: *mut T,
) {
    let mut cols = [std::ptr::null(); G];
    let mut sv = [T::zero(); G];
    let mut k = 0;
    for j in 0..n {
        let sj = s(j);
        if sj.is_zero() {
            continue;
        }
        cols[k] = col(j).add(r0);
        sv[k] = sj;
        k += 1;
        if k == G {
            axpy_cols::<T, CJ, G, LV>(&cols, &sv, y, rows);
            k = 0;
        }
    }
    let mut i = 0;
    if k >= 4 {
        let c4 = [cols[0], cols[1], cols[2], cols[3]];
        axpy_cols::<T, CJ, 4, LV>(&c4, &[sv[0], sv[1], sv[2], sv[3]], y, rows);
        i = 4;
    }
    while i < k {
        axpy_cols::<T, CJ, 1, LV>(&[cols[i]], &[sv[i]], y, rows);
        i += 1;
    }
}

/// out[j*inc] += alpha * sum_i op(A[i, j]) * x[i] for j < n, over rows 0..m, where column j
/// starts at `col(j)`.
///
/// # Safety
/// `col(j)` points at `m` readable elements for each `j < n`; `x` has `m` elements; `out`
/// has `n` elements at stride `inc` and overlaps neither.
#[inline(always)]
pub unsafe fn gemv_t_block<T: Scalar, const CJ: bool, const LV: u8>(
    m: usize,
    n: usize,
    col: impl Fn(usize) -> *const T,
    x: *const T,
    alpha: T,
    out: *mut T,
    inc: isize,
) {
    let mut j = 0;
    while j + 8 <= n {
        let cols = group::<T, 8>(&col, j, 0);
        let d = dot_cols::<T, CJ, 8, LV>(&cols, x, m);
        for (k, &dk) in d.iter().enumerate() {
            let p = out.offset((j + k) as isize * inc);
            *p = mac::<T, LV>(*p, alpha, dk);
        }
        j += 8;
    }
    while j + 4 <= n {
        let cols = group::<T, 4>(&col, j, 0);
        let d = dot_cols::<T, CJ, 4, LV>(&cols, x, m);
        for (k, &dk) in d.iter().enumerate() {
            let p = out.offset((j + k) as isize * inc);
            *p = mac::<T, LV>(*p, alpha, dk);
        }
        j += 4;
    }
    while j < n {
        let d = dot_cols::<T, CJ, 1, LV>(&[col(j)], x, m);
        let p = out.offset(j as isize * inc);
        *p = mac::<T, LV>(*p, alpha, d[0]);
        j += 1;
    }
}

// ---------------------------------------------------------------------------------------
// Lane kernels. Each returns how many elements (complex elements for `c_*`) it did; the
// caller finishes the rest.

#[inline(always)]
unsafe fn r_axpy<R: Real, V: Vreg<R>, const C: usize>(cols: &[*const R; C], s: &[R; C], y: *mut R, m: usize) -> usize {
    let n = V::N;
    let mut sv = [V::zero(); C];
    for k in 0..C {
        sv[k] = V::splat(s[k]);
    }
    let mut i = 0;
    while i + 2 * n <= m {
        let (mut y0, mut y1) = (V::load(y.add(i)), V::load(y.add(i + n)));
        for k in 0..C {
            y0 = V::load(cols[k].add(i)).fma(sv[k], y0);
            y1 = V::load(cols[k].add(i + n)).fma(sv[k], y1);
        }
        y0.store(y.add(i));
        y1.store(y.add(i + n));
        i += 2 * n;
    }
    if i + n <= m {
        let mut y0 = V::load(y.add(i));
        for k in 0..C {
            y0 = V::load(cols[k].add(i)).fma(sv[k], y0);
        }
        y0.store(y.add(i));
        i += n;
    }
    i
}

#[inline(always)]
unsafe fn r_dot<R: Real, V: Vreg<R>, const C: usize>(cols: &[*const R; C], x: *const R, m: usize) -> ([R; C], usize) {
    let n = V::N;
    let mut acc0 = [V::zero(); C];
    let mut acc1 = [V::zero(); C];
    let mut i = 0;
    while i + 2 * n <= m {
        let (x0, x1) = (V::load(x.add(i)), V::load(x.add(i + n)));
        for k in 0..C {
            acc0[k] = V::load(cols[k].add(i)).fma(x0, acc0[k]);
            acc1[k] = V::load(cols[k].add(i + n)).fma(x1, acc1[k]);
        }
        i += 2 * n;
    }
    if i + n <= m {
        let x0 = V::load(x.add(i));
        for k in 0..C {
            acc0[k] = V::load(cols[k].add(i)).fma(x0, acc0[k]);
        }
        i += n;
    }
    let mut out = [<R as Scalar>::zero(); C];
    for k in 0..C {
        out[k] = acc0[k].add(acc1[k]).hsum();
    }
    (out, i)
}

#[inline(always)]
unsafe fn r_symv<R: Real, V: Vreg<R>, const C: usize>(
    cols: &[*const R; C],
    t: &[R; C],
    x: *const R,
    y: *mut R,
    m: usize,
) -> ([R; C], usize) {
    let n = V::N;
    let mut tv = [V::zero(); C];
    for k in 0..C {
        tv[k] = V::splat(t[k]);
    }
    let mut acc0 = [V::zero(); C];
    let mut acc1 = [V::zero(); C];
    let mut i = 0;
    while i + 2 * n <= m {
        let (x0, x1) = (V::load(x.add(i)), V::load(x.add(i + n)));
        let (mut y0, mut y1) = (V::load(y.add(i)), V::load(y.add(i + n)));
        for k in 0..C {
            let (a0, a1) = (V::load(cols[k].add(i)), V::load(cols[k].add(i + n)));
            y0 = a0.fma(tv[k], y0);
            y1 = a1.fma(tv[k], y1);
            acc0[k] = a0.fma(x0, acc0[k]);
            acc1[k] = a1.fma(x1, acc1[k]);
        }
        y0.store(y.add(i));
        y1.store(y.add(i + n));
        i += 2 * n;
    }
    if i + n <= m {
        let x0 = V::load(x.add(i));
        let mut y0 = V::load(y.add(i));
        for k in 0..C {
            let a0 = V::load(cols[k].add(i));
            y0 = a0.fma(tv[k], y0);
            acc0[k] = a0.fma(x0, acc0[k]);
        }
        y0.store(y.add(i));
        i += n;
    }
    let mut out = [<R as Scalar>::zero(); C];
    for k in 0..C {
        out[k] = acc0[k].add(acc1[k]).hsum();
    }
    (out, i)
}

/// The (P, Q) multipliers of a complex scalar s for y += op(a)*s (see the module notes).
#[inline(always)]
unsafe fn cmul_pair<R: Real, V: Vreg<R>, const CJ: bool>((sr, si): (R, R)) -> (V, V) {
    if CJ {
        (V::splat2(sr, -sr), V::splat(si))
    } else {
        (V::splat(sr), V::splat2(si, -si))
    }
}

/// (re, im) of a dot from the a*x and a*swap(x) accumulators.
#[inline(always)]
unsafe fn cdot_finish<R: Real, V: Vreg<R>, const CJ: bool>(ax: V, axs: V) -> (R, R) {
    let sign = V::splat2(<R as Scalar>::one(), -<R as Scalar>::one());
    if CJ {
        (ax.hsum(), axs.mul(sign).hsum())
    } else {
        (ax.mul(sign).hsum(), axs.hsum())
    }
}

#[inline(always)]
unsafe fn c_axpy<R: Real, V: Vreg<R>, const CJ: bool, const C: usize>(
    cols: &[*const R; C],
    s: &[(R, R); C],
    y: *mut R,
    m: usize,
) -> usize {
    let n = V::N;
    let mut pq = [(V::zero(), V::zero()); C];
    for k in 0..C {
        pq[k] = cmul_pair::<R, V, CJ>(s[k]);
    }
    let mr = 2 * m;
    let mut i = 0;
    while i + 2 * n <= mr {
        let (mut y0, mut y1) = (V::load(y.add(i)), V::load(y.add(i + n)));
        let (mut z0, mut z1) = (V::zero(), V::zero());
        for k in 0..C {
            let (a0, a1) = (V::load(cols[k].add(i)), V::load(cols[k].add(i + n)));
            y0 = a0.fma(pq[k].0, y0);
            z0 = a0.fma(pq[k].1, z0);
            y1 = a1.fma(pq[k].0, y1);
            z1 = a1.fma(pq[k].1, z1);
        }
        y0.add(z0.swap_pairs()).store(y.add(i));
        y1.add(z1.swap_pairs()).store(y.add(i + n));
        i += 2 * n;
    }
    if i + n <= mr {
        let mut y0 = V::load(y.add(i));
        let mut z0 = V::zero();
        for k in 0..C {
            let a0 = V::load(cols[k].add(i));
            y0 = a0.fma(pq[k].0, y0);
            z0 = a0.fma(pq[k].1, z0);
        }
        y0.add(z0.swap_pairs()).store(y.add(i));
        i += n;
    }
    i / 2
}

#[inline(always)]
unsafe fn c_dot<R: Real, V: Vreg<R>, const CJ: bool, const C: usize>(
    cols: &[*const R; C],
    x: *const R,
    m: usize,
) -> ([(R, R); C], usize) {
    let n = V::N;
    let mut ax = [V::zero(); C];
    let mut axs = [V::zero(); C];
    let mr = 2 * m;
    let mut i = 0;
    while i + n <= mr {
        let xv = V::load(x.add(i));
        let xs = xv.swap_pairs();
        for k in 0..C {
            let a = V::load(cols[k].add(i));
            ax[k] = a.fma(xv, ax[k]);
            axs[k] = a.fma(xs, axs[k]);
        }
        i += n;
    }
    let mut out = [(<R as Scalar>::zero(), <R as Scalar>::zero()); C];
    for k in 0..C {
        out[k] = cdot_finish::<R, V, CJ>(ax[k], axs[k]);
    }
    (out, i / 2)
}

#[inline(always)]
unsafe fn c_symv<R: Real, V: Vreg<R>, const CN: bool, const CT: bool, const C: usize>(
    cols: &[*const R; C],
    t: &[(R, R); C],
    x: *const R,
    y: *mut R,
    m: usize,
) -> ([(R, R); C], usize) {
    let n = V::N;
    let mut pq = [(V::zero(), V::zero()); C];
    for k in 0..C {
        pq[k] = cmul_pair::<R, V, CN>(t[k]);
    }
    let mut ax = [V::zero(); C];
    let mut axs = [V::zero(); C];
    let mr = 2 * m;
    let mut i = 0;
    while i + n <= mr {
        let xv = V::load(x.add(i));
        let xs = xv.swap_pairs();
        let mut y0 = V::load(y.add(i));
        let mut z0 = V::zero();
        for k in 0..C {
            let a = V::load(cols[k].add(i));
            y0 = a.fma(pq[k].0, y0);
            z0 = a.fma(pq[k].1, z0);
            ax[k] = a.fma(xv, ax[k]);
            axs[k] = a.fma(xs, axs[k]);
        }
        y0.add(z0.swap_pairs()).store(y.add(i));
        i += n;
    }
    let mut out = [(<R as Scalar>::zero(), <R as Scalar>::zero()); C];
    for k in 0..C {
        out[k] = cdot_finish::<R, V, CT>(ax[k], axs[k]);
    }
    (out, i / 2)
}
