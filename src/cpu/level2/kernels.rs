//! The vectorised inner loops of Level 2.
//!
//! Loops run over chunks of [`L`] elements held in local arrays: LLVM's SLP vectoriser turns
//! each chunk into whole SIMD registers (two AVX-512 vectors of f64), and the local arrays
//! give it the independent accumulators a dot product needs without reassociating a float
//! sum (which it would not do on its own). Every kernel takes the column pointers of a group
//! of `C` columns, so full, packed and banded storage share them.
//!
//! Const generics: `F` = use fused multiply-add (see `kdispatch!`); `CJ`/`CN`/`CT` = read the
//! matrix conjugated (compiled out for real types, where `conj` is the identity).

use crate::types::Scalar;
use num_traits::Float;

/// Elements per unrolled chunk.
pub const L: usize = 16;

/// acc + a*b, fused when `F`.
#[inline(always)]
pub fn mac<T: Scalar, const F: bool>(acc: T, a: T, b: T) -> T {
    if !F {
        return acc + a * b;
    }
    if T::IS_COMPLEX {
        let (ar, ai, br, bi) = (a.re(), a.im(), b.re(), b.im());
        let re = (-ai).mul_add(bi, ar.mul_add(br, acc.re()));
        let im = ai.mul_add(br, ar.mul_add(bi, acc.im()));
        T::from_parts(re, im)
    } else {
        T::from_real(a.re().mul_add(b.re(), acc.re()))
    }
}

#[inline(always)]
unsafe fn load<T: Copy>(p: *const T) -> [T; L] {
    std::ptr::read(p as *const [T; L])
}

#[inline(always)]
unsafe fn store<T: Copy>(p: *mut T, v: [T; L]) {
    std::ptr::write(p as *mut [T; L], v)
}

/// Sum of the lanes, pairwise.
#[inline(always)]
fn hsum<T: Scalar>(v: [T; L]) -> T {
    let mut w = v;
    let mut half = L / 2;
    while half > 0 {
        for l in 0..half {
            w[l] = w[l] + w[l + half];
        }
        half /= 2;
    }
    w[0]
}

/// y[0..m] += sum_k op(a_k[0..m]) * s[k]   (op = conj when `CJ`).
///
/// # Safety
/// The `C` columns and `y` hold `m` elements each; `y` overlaps none of them.
#[inline(always)]
pub unsafe fn axpy_cols<T: Scalar, const CJ: bool, const C: usize, const F: bool>(
    cols: &[*const T; C],
    s: &[T; C],
    y: *mut T,
    m: usize,
) {
    let mut i = 0;
    while i + L <= m {
        let mut acc = load(y.add(i));
        for k in 0..C {
            let a = load(cols[k].add(i));
            for l in 0..L {
                acc[l] = mac::<T, F>(acc[l], a[l].conj_if(CJ), s[k]);
            }
        }
        store(y.add(i), acc);
        i += L;
    }
    while i < m {
        let mut acc = *y.add(i);
        for k in 0..C {
            acc = mac::<T, F>(acc, (*cols[k].add(i)).conj_if(CJ), s[k]);
        }
        *y.add(i) = acc;
        i += 1;
    }
}

/// [sum_i op(a_k[i]) * x[i] for each k]   (op = conj when `CJ`).
///
/// # Safety
/// The `C` columns and `x` hold `m` elements each.
#[inline(always)]
pub unsafe fn dot_cols<T: Scalar, const CJ: bool, const C: usize, const F: bool>(
    cols: &[*const T; C],
    x: *const T,
    m: usize,
) -> [T; C] {
    let mut acc = [[T::zero(); L]; C];
    let mut i = 0;
    while i + L <= m {
        let xv = load(x.add(i));
        for k in 0..C {
            let a = load(cols[k].add(i));
            for l in 0..L {
                acc[k][l] = mac::<T, F>(acc[k][l], a[l].conj_if(CJ), xv[l]);
            }
        }
        i += L;
    }
    let mut out = [T::zero(); C];
    for k in 0..C {
        out[k] = hsum(acc[k]);
    }
    while i < m {
        let xi = *x.add(i);
        for k in 0..C {
            out[k] = mac::<T, F>(out[k], (*cols[k].add(i)).conj_if(CJ), xi);
        }
        i += 1;
    }
    out
}

/// The symmetric/Hermitian column step, one pass over the columns:
/// y[0..m] += sum_k opN(a_k) * t[k], and returns [sum_i opT(a_k[i]) * x[i] for each k].
///
/// # Safety
/// The `C` columns, `x` and `y` hold `m` elements each; `y` overlaps none of the others.
#[inline(always)]
pub unsafe fn symv_cols<T: Scalar, const CN: bool, const CT: bool, const C: usize, const F: bool>(
    cols: &[*const T; C],
    t: &[T; C],
    x: *const T,
    y: *mut T,
    m: usize,
) -> [T; C] {
    let mut acc = [[T::zero(); L]; C];
    let mut i = 0;
    while i + L <= m {
        let xv = load(x.add(i));
        let mut yv = load(y.add(i));
        for k in 0..C {
            let a = load(cols[k].add(i));
            for l in 0..L {
                yv[l] = mac::<T, F>(yv[l], a[l].conj_if(CN), t[k]);
                acc[k][l] = mac::<T, F>(acc[k][l], a[l].conj_if(CT), xv[l]);
            }
        }
        store(y.add(i), yv);
        i += L;
    }
    let mut out = [T::zero(); C];
    for k in 0..C {
        out[k] = hsum(acc[k]);
    }
    while i < m {
        let xi = *x.add(i);
        let mut yi = *y.add(i);
        for k in 0..C {
            let a = *cols[k].add(i);
            yi = mac::<T, F>(yi, a.conj_if(CN), t[k]);
            out[k] = mac::<T, F>(out[k], a.conj_if(CT), xi);
        }
        *y.add(i) = yi;
        i += 1;
    }
    out
}

/// Rows of the `y` block that stay in L1 while column groups stream past (16 KiB of `y`).
#[inline(always)]
pub fn row_block<T>() -> usize {
    (16 * 1024 / std::mem::size_of::<T>()).max(L)
}

/// y[0..m] += A[0..m, 0..n] * s, where column j of the block starts at `col(j)`.
/// `s` is the (already scaled) vector; groups of 8 columns share each pass over `y`.
///
/// # Safety
/// `col(j)` points at `m` readable elements for each `j < n`; `s` has `n` elements; `y` has
/// `m` and overlaps neither.
#[inline(always)]
pub unsafe fn gemv_n_block<T: Scalar, const CJ: bool, const F: bool>(
    m: usize,
    n: usize,
    col: impl Fn(usize) -> *const T,
    s: *const T,
    y: *mut T,
) {
    let mb = row_block::<T>();
    let mut r0 = 0;
    while r0 < m {
        let rows = mb.min(m - r0);
        let yb = y.add(r0);
        let mut j = 0;
        while j + 8 <= n {
            let cols: [*const T; 8] = std::array::from_fn(|k| col(j + k).add(r0));
            let sv: [T; 8] = std::array::from_fn(|k| *s.add(j + k));
            axpy_cols::<T, CJ, 8, F>(&cols, &sv, yb, rows);
            j += 8;
        }
        if j + 4 <= n {
            let cols: [*const T; 4] = std::array::from_fn(|k| col(j + k).add(r0));
            let sv: [T; 4] = std::array::from_fn(|k| *s.add(j + k));
            axpy_cols::<T, CJ, 4, F>(&cols, &sv, yb, rows);
            j += 4;
        }
        while j < n {
            axpy_cols::<T, CJ, 1, F>(&[col(j).add(r0)], &[*s.add(j)], yb, rows);
            j += 1;
        }
        r0 += rows;
    }
}

/// out[j*inc] += alpha * sum_i op(A[i, j]) * x[i] for j < n, over rows 0..m, where column j
/// starts at `col(j)`.
///
/// # Safety
/// `col(j)` points at `m` readable elements for each `j < n`; `x` has `m` elements; `out`
/// has `n` elements at stride `inc` and overlaps neither.
#[inline(always)]
pub unsafe fn gemv_t_block<T: Scalar, const CJ: bool, const F: bool>(
    m: usize,
    n: usize,
    col: impl Fn(usize) -> *const T,
    x: *const T,
    alpha: T,
    out: *mut T,
    inc: isize,
) {
    let mut j = 0;
    while j + 4 <= n {
        let cols: [*const T; 4] = std::array::from_fn(|k| col(j + k));
        let d = dot_cols::<T, CJ, 4, F>(&cols, x, m);
        for (k, &dk) in d.iter().enumerate() {
            let p = out.offset((j + k) as isize * inc);
            *p = mac::<T, F>(*p, alpha, dk);
        }
        j += 4;
    }
    while j < n {
        let d = dot_cols::<T, CJ, 1, F>(&[col(j)], x, m);
        let p = out.offset(j as isize * inc);
        *p = mac::<T, F>(*p, alpha, d[0]);
        j += 1;
    }
}
