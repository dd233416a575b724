//! Level 1 reductions: dot products, asum, nrm2, i?amax.
//!
//! Unit-stride loops run vector kernels (`vector.rs`) with several independent accumulators
//! and fold the lanes pairwise at the end; strided loops, which cannot vectorise anyway, run
//! in the reference's order and round exactly as it does.

use super::vector::{hmax, hmin, hsum, hsum_parity, Lanes, Vector, WidenF32};
use super::{as_reals, par_reduce, threads_for};
use super::{cast, peel};
use super::{one, pow2, zero};
use crate::types::{Real, Scalar, VecRef};
use num_traits::Float;
use std::mem::size_of;

// ---------------------------------------------------------------------------------------
// dot

/// Real dot product of `m` unit-stride reals.
#[inline(always)]
unsafe fn dot_k<V: Vector>(x: *const V::R, y: *const V::R, m: usize) -> V::R {
    let w = V::W;
    let mut tail = zero::<V::R>();
    let mut i = 0;
    while i < peel(x, m) {
        tail += *x.add(i) * *y.add(i);
        i += 1;
    }
    let (mut a0, mut a1, mut a2, mut a3) = (V::zero(), V::zero(), V::zero(), V::zero());
    while i + 4 * w <= m {
        a0 = a0.add(V::load(x.add(i)).mul(V::load(y.add(i))));
        a1 = a1.add(V::load(x.add(i + w)).mul(V::load(y.add(i + w))));
        a2 = a2.add(V::load(x.add(i + 2 * w)).mul(V::load(y.add(i + 2 * w))));
        a3 = a3.add(V::load(x.add(i + 3 * w)).mul(V::load(y.add(i + 3 * w))));
        i += 4 * w;
    }
    while i + w <= m {
        a0 = a0.add(V::load(x.add(i)).mul(V::load(y.add(i))));
        i += w;
    }
    while i < m {
        tail += *x.add(i) * *y.add(i);
        i += 1;
    }
    hsum(a0.add(a1).add(a2.add(a3))) + tail
}

/// The four real sums a complex dot product is made of, over `m` interleaved reals (m even):
/// [sum xr*yr, sum xi*yi, sum xr*yi, sum xi*yr]. Lane pairs of `a` collect x*y, those of `b`
/// x times y with its (re, im) pairs swapped.
#[inline(always)]
unsafe fn cdot_k<V: Vector>(x: *const V::R, y: *const V::R, m: usize) -> [V::R; 4] {
    let w = V::W;
    let (mut a0, mut a1, mut b0, mut b1) = (V::zero(), V::zero(), V::zero(), V::zero());
    let mut i = 0;
    while i + 2 * w <= m {
        let (x0, y0) = (V::load(x.add(i)), V::load(y.add(i)));
        let (x1, y1) = (V::load(x.add(i + w)), V::load(y.add(i + w)));
        a0 = a0.add(x0.mul(y0));
        b0 = b0.add(x0.mul(y0.swap_pairs()));
        a1 = a1.add(x1.mul(y1));
        b1 = b1.add(x1.mul(y1.swap_pairs()));
        i += 2 * w;
    }
    let mut t = [zero::<V::R>(); 4];
    while i < m {
        let (xr, xi, yr, yi) = (*x.add(i), *x.add(i + 1), *y.add(i), *y.add(i + 1));
        t[0] += xr * yr;
        t[1] += xi * yi;
        t[2] += xr * yi;
        t[3] += xi * yr;
        i += 2;
    }
    let (ae, ao) = hsum_parity(a0.add(a1));
    let (be, bo) = hsum_parity(b0.add(b1));
    [ae + t[0], ao + t[1], be + t[2], bo + t[3]]
}

simd_fn!(dot_simd => dot_k(x: *const R, y: *const R, m: usize) -> R);
simd_fn!(cdot_simd => cdot_k(x: *const R, y: *const R, m: usize) -> [R; 4]);

/// Dot-product sums of `m` unit-stride reals (see [`cdot_k`] for the complex layout; a real
/// product only fills the first sum).
unsafe fn dot_parts<R: Real>(complex: bool, x: *const R, y: *const R, m: usize) -> [R; 4] {
    if complex {
        as_concrete!(R, F => cdot_simd::<F>(x as *const F, y as *const F, m))
    } else {
        let z = zero::<R>();
        let d: R = as_concrete!(R, F => dot_simd::<F>(x as *const F, y as *const F, m));
        [d, z, z, z]
    }
}

#[inline]
fn add4<R: Real>(a: [R; 4], b: [R; 4]) -> [R; 4] {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3]]
}

/// sum conj?(x_i) * y_i (`?dot`, `?dotu`, and `?dotc` with `conj`).
///
/// # Safety
/// `x` and `y` are valid views of the same length.
pub unsafe fn dot<T: Scalar>(conj: bool, x: VecRef<T>, y: VecRef<T>) -> T {
    let n = x.n;
    if x.inc != 1 || y.inc != 1 {
        let mut acc = T::zero();
        for i in 0..n {
            acc += x.get(i).conj_if(conj) * y.get(i);
        }
        return acc;
    }
    let part = |s: usize, len: usize| {
        let (xr, m) = as_reals(x.sub(s, len).ptr, len);
        let (yr, _) = as_reals(y.sub(s, len).ptr, len);
        dot_parts::<T::Real>(T::IS_COMPLEX, xr, yr, m)
    };
    let t = threads_for::<T>(n);
    let p = if t <= 1 { part(0, n) } else { par_reduce(n, t, part, add4) };
    if !T::IS_COMPLEX {
        T::from_real(p[0])
    } else if conj {
        T::from_parts(p[0] + p[1], p[2] - p[3])
    } else {
        T::from_parts(p[0] - p[1], p[2] + p[3])
    }
}

/// sum x*y in double over `n` unit-stride floats.
#[inline(always)]
unsafe fn dsdot_k<V: WidenF32>(x: *const f32, y: *const f32, n: usize) -> f64 {
    let w = V::W;
    let (mut a0, mut a1) = (V::zero(), V::zero());
    let mut i = 0;
    while i + 2 * w <= n {
        a0 = a0.add(V::load_f32(x.add(i)).mul(V::load_f32(y.add(i))));
        a1 = a1.add(V::load_f32(x.add(i + w)).mul(V::load_f32(y.add(i + w))));
        i += 2 * w;
    }
    let mut tail = 0.0;
    while i < n {
        tail += *x.add(i) as f64 * *y.add(i) as f64;
        i += 1;
    }
    hsum(a0.add(a1)) + tail
}

unsafe fn dsdot_unit(x: *const f32, y: *const f32, n: usize) -> f64 {
    #[cfg(target_arch = "x86_64")]
    {
        #[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
        unsafe fn v512(x: *const f32, y: *const f32, n: usize) -> f64 {
            dsdot_k::<<f64 as Lanes>::V512>(x, y, n)
        }
        #[target_feature(enable = "avx2,fma")]
        unsafe fn v256(x: *const f32, y: *const f32, n: usize) -> f64 {
            dsdot_k::<<f64 as Lanes>::V256>(x, y, n)
        }
        match *crate::cpu::simd::LEVEL {
            crate::cpu::simd::Level::Avx512 => return v512(x, y, n),
            crate::cpu::simd::Level::Avx2 => return v256(x, y, n),
            crate::cpu::simd::Level::Baseline => {}
        }
    }
    dsdot_k::<<f64 as Lanes>::Plain>(x, y, n)
}

/// init + sum x_i*y_i for single-precision vectors, accumulated in double (`dsdot`, and
/// `sdsdot` with its `sb` as `init`). Products of two floats are exact in double.
///
/// # Safety
/// `x` and `y` are valid views of the same length.
pub unsafe fn dot_f32_in_f64(init: f64, x: VecRef<f32>, y: VecRef<f32>) -> f64 {
    let n = x.n;
    if x.inc != 1 || y.inc != 1 {
        let mut acc = init;
        for i in 0..n {
            acc += x.get(i) as f64 * y.get(i) as f64;
        }
        return acc;
    }
    let part = |s: usize, len: usize| dsdot_unit(x.sub(s, len).ptr, y.sub(s, len).ptr, len);
    let t = threads_for::<f32>(n);
    let sum = if t <= 1 { part(0, n) } else { par_reduce(n, t, part, |a, b| a + b) };
    init + sum
}

// ---------------------------------------------------------------------------------------
// asum

/// sum |x| over `m` unit-stride reals.
#[inline(always)]
unsafe fn asum_k<V: Vector>(x: *const V::R, m: usize) -> V::R {
    let w = V::W;
    let mut tail = zero::<V::R>();
    let mut i = 0;
    while i < peel(x, m) {
        tail += (*x.add(i)).abs();
        i += 1;
    }
    let (mut a0, mut a1, mut a2, mut a3) = (V::zero(), V::zero(), V::zero(), V::zero());
    while i + 4 * w <= m {
        a0 = a0.add(V::load(x.add(i)).abs());
        a1 = a1.add(V::load(x.add(i + w)).abs());
        a2 = a2.add(V::load(x.add(i + 2 * w)).abs());
        a3 = a3.add(V::load(x.add(i + 3 * w)).abs());
        i += 4 * w;
    }
    while i + w <= m {
        a0 = a0.add(V::load(x.add(i)).abs());
        i += w;
    }
    while i < m {
        tail += (*x.add(i)).abs();
        i += 1;
    }
    hsum(a0.add(a1).add(a2.add(a3))) + tail
}

simd_fn!(asum_simd => asum_k(x: *const R, m: usize) -> R);

unsafe fn asum_unit<R: Real>(x: *const R, m: usize) -> R {
    as_concrete!(R, F => asum_simd::<F>(x as *const F, m))
}

/// sum |re(x_i)| + |im(x_i)| (`?asum`, `scasum`, `dzasum`).
///
/// # Safety
/// `x` is a valid view.
pub unsafe fn asum<T: Scalar>(x: VecRef<T>) -> T::Real {
    let n = x.n;
    if x.inc != 1 {
        let mut acc = zero::<T::Real>();
        for i in 0..n {
            let v = x.get(i);
            acc = if !T::IS_COMPLEX {
                acc + v.re().abs()
            } else if size_of::<T::Real>() == 8 {
                // dzasum adds dcabs1(x) ...
                acc + v.abs1()
            } else {
                // ... scasum adds |re| and then |im|.
                acc + v.re().abs() + v.im().abs()
            };
        }
        return acc;
    }
    let part = |s: usize, len: usize| {
        let (xr, m) = as_reals(x.sub(s, len).ptr, len);
        asum_unit::<T::Real>(xr, m)
    };
    let t = threads_for::<T>(n);
    if t <= 1 {
        part(0, n)
    } else {
        par_reduce(n, t, part, |a, b| a + b)
    }
}

// ---------------------------------------------------------------------------------------
// nrm2

/// Blue's thresholds and scale factors of the reference `?nrm2` (Anderson 2017): values above
/// `tbig` are summed scaled by `sbig`, values below `tsml` scaled by `ssml`, the rest as they
/// are.
#[derive(Clone, Copy)]
struct Blue<R> {
    tsml: R,
    tbig: R,
    ssml: R,
    sbig: R,
}

#[inline]
fn blue<R: Real>() -> Blue<R> {
    // From the Fortran model numbers (minexponent, maxexponent, digits):
    //   tsml = 2^ceil((minexp-1)/2), tbig = 2^floor((maxexp-digits+1)/2),
    //   ssml = 2^-floor((minexp-digits)/2), sbig = 2^-ceil((maxexp+digits-1)/2).
    // single (-125, 128, 24): 2^-63, 2^52, 2^75, 2^-76;
    // double (-1021, 1024, 53): 2^-511, 2^486, 2^537, 2^-538.
    let (tsml, tbig, ssml, sbig) = if size_of::<R>() == 4 { (-63, 52, 75, -76) } else { (-511, 486, 537, -538) };
    Blue { tsml: pow2(tsml), tbig: pow2(tbig), ssml: pow2(ssml), sbig: pow2(sbig) }
}

/// The three sums of squares: of big values scaled down, of mid-range values, of small values
/// scaled up.
#[derive(Clone, Copy, Default, Debug)]
struct Ssq<R> {
    big: R,
    med: R,
    small: R,
}

impl<R: Real> Ssq<R> {
    /// Add one value, as the reference loop does. (The reference stops adding small values
    /// once a big one is seen; the small sum is then never used, so adding them is the same.)
    #[inline(always)]
    fn add(&mut self, v: R, k: &Blue<R>) {
        let ax = v.abs();
        if ax > k.tbig {
            let s = ax * k.sbig;
            self.big += s * s;
        } else if ax < k.tsml {
            let s = ax * k.ssml;
            self.small += s * s;
        } else {
            // NaN lands here too, and then poisons the result as in the reference.
            self.med += ax * ax;
        }
    }

    #[inline]
    fn plus(self, o: Self) -> Self {
        Ssq { big: self.big + o.big, med: self.med + o.med, small: self.small + o.small }
    }

    /// The norm from the three sums, combined exactly as the reference does.
    fn finish(self, k: &Blue<R>) -> R {
        let Ssq { mut big, mut med, mut small } = self;
        let used = |a: R| a > zero() || a.is_nan();
        let (scl, sumsq) = if big > zero() {
            if used(med) {
                big += (med * k.sbig) * k.sbig;
            }
            (one::<R>() / k.sbig, big)
        } else if small > zero() {
            if used(med) {
                med = med.sqrt();
                small = small.sqrt() / k.ssml;
                let (ymin, ymax) = if small > med { (med, small) } else { (small, med) };
                let q = ymin / ymax;
                (one(), ymax * ymax * (one::<R>() + q * q))
            } else {
                (one::<R>() / k.ssml, small)
            }
        } else {
            (one(), med)
        };
        scl * sumsq.sqrt()
    }
}

/// The three sums over `m` unit-stride reals, by blocks of `BLOCK` values: a block whose
/// nonzero magnitudes all lie in [tsml, tbig] (the common case) only needs plain sums of
/// squares; any other block is summed again value by value with the reference's
/// classification. NaN passes the range test (comparisons with it are false) and lands in
/// the mid-range sum, as in the reference.
#[inline(always)]
unsafe fn ssq_k<V: Vector>(x: *const V::R, m: usize, k: Blue<V::R>) -> Ssq<V::R> {
    const BLOCK: usize = 1024;
    let w = V::W;
    let (mut med0, mut med1) = (V::zero(), V::zero());
    let mut slow = Ssq::default();
    let full = m - m % (2 * w);
    let mut i = 0;
    while i < full {
        let end = (i + BLOCK).min(full);
        let (mut s0, mut s1) = (V::zero(), V::zero());
        let (mut hi, mut lo) = (V::zero(), V::splat(V::R::infinity()));
        let mut j = i;
        while j < end {
            let (v0, v1) = (V::load(x.add(j)).abs(), V::load(x.add(j + w)).abs());
            s0 = s0.add(v0.mul(v0));
            s1 = s1.add(v1.mul(v1));
            hi = hi.max_keep(v0).max_keep(v1);
            // Zeros add nothing to any sum, so they do not make a block "small".
            lo = lo.min_keep(v0.zero_to_inf()).min_keep(v1.zero_to_inf());
            j += 2 * w;
        }
        if hmax(hi) <= k.tbig && hmin(lo) >= k.tsml {
            med0 = med0.add(s0);
            med1 = med1.add(s1);
        } else {
            for q in i..end {
                slow.add(*x.add(q), &k);
            }
        }
        i = end;
    }
    while i < m {
        slow.add(*x.add(i), &k);
        i += 1;
    }
    Ssq { big: slow.big, med: hsum(med0.add(med1)) + slow.med, small: slow.small }
}

simd_fn!(ssq_simd => ssq_k(x: *const R, m: usize, k: Blue<R>) -> Ssq<R>);

unsafe fn ssq_unit<R: Real>(x: *const R, m: usize, k: Blue<R>) -> Ssq<R> {
    as_concrete!(R, F => ssq_simd::<F>(x as *const F, m, cast::<Blue<R>, Blue<F>>(k)))
}

/// Euclidean norm with the reference 3.10+ algorithm (`?nrm2`, `scnrm2`, `dznrm2`): no
/// overflow or underflow in intermediate sums, Inf for an infinite entry, NaN for a NaN one.
///
/// # Safety
/// `x` is a valid view (any increment, 0 included).
pub unsafe fn nrm2<T: Scalar>(x: VecRef<T>) -> T::Real {
    let k = blue::<T::Real>();
    let n = x.n;
    if x.inc != 1 {
        let mut acc = Ssq::default();
        for i in 0..n {
            let v = x.get(i);
            acc.add(v.re(), &k);
            if T::IS_COMPLEX {
                acc.add(v.im(), &k);
            }
        }
        return acc.finish(&k);
    }
    let part = |s: usize, len: usize| {
        let (xr, m) = as_reals(x.sub(s, len).ptr, len);
        ssq_unit::<T::Real>(xr, m, k)
    };
    let t = threads_for::<T>(n);
    let acc = if t <= 1 { part(0, n) } else { par_reduce(n, t, part, Ssq::plus) };
    acc.finish(&k)
}

// ---------------------------------------------------------------------------------------
// i?amax

/// Largest |x| (real) or |re|+|im| (complex, `m` interleaved reals) of `m` unit-stride reals,
/// NaN ignored; -1 if every value is NaN. For complex data each lane pair holds the element's
/// |re|+|im| twice (summed in either order, which rounds the same).
#[inline(always)]
unsafe fn amax_k<V: Vector>(x: *const V::R, m: usize, complex: bool) -> V::R {
    let w = V::W;
    let none = -one::<V::R>();
    let (mut m0, mut m1) = (V::splat(none), V::splat(none));
    let abs1 = |v: V| {
        let a = v.abs();
        if complex {
            a.add(a.swap_pairs())
        } else {
            a
        }
    };
    let mut i = 0;
    while i + 2 * w <= m {
        m0 = m0.max_keep(abs1(V::load(x.add(i))));
        m1 = m1.max_keep(abs1(V::load(x.add(i + w))));
        i += 2 * w;
    }
    let mut best = hmax(m0.max_keep(m1));
    let step = if complex { 2 } else { 1 };
    while i < m {
        let v = if complex { (*x.add(i)).abs() + (*x.add(i + 1)).abs() } else { (*x.add(i)).abs() };
        best = if v > best { v } else { best };
        i += step;
    }
    best
}

simd_fn!(amax_simd => amax_k(x: *const R, m: usize, complex: bool) -> R);

/// (largest value, first index holding it) over `len` unit-stride elements, by blocks: a
/// block is searched for the index only when its maximum beats the best so far. Index
/// `usize::MAX` when every element is NaN.
unsafe fn iamax_unit<T: Scalar>(x: *const T, len: usize) -> (T::Real, usize) {
    const BLOCK: usize = 1024;
    let (mut best, mut idx) = (-one::<T::Real>(), usize::MAX);
    let mut s = 0;
    while s < len {
        let l = BLOCK.min(len - s);
        let (xr, lr) = as_reals(x.add(s), l);
        let m: T::Real = as_concrete!(T::Real, F => amax_simd::<F>(xr as *const F, lr, T::IS_COMPLEX));
        if m > best {
            best = m;
            idx = (s..s + l).find(|&i| (*x.add(i)).abs1() == m).unwrap_or(s);
        }
        s += l;
    }
    (best, idx)
}

/// 0-based index of the first element of largest |re|+|im| (`i?amax` minus one). As in the
/// reference, the running maximum starts at element 0 and only a strictly larger value
/// replaces it, so a NaN at element 0 gives 0 and NaN elsewhere is never chosen.
///
/// # Safety
/// `x` is a valid view with `n >= 1`.
pub unsafe fn iamax<T: Scalar>(x: VecRef<T>) -> usize {
    let n = x.n;
    if n == 0 {
        return 0;
    }
    let first = x.get(0).abs1();
    if first.is_nan() {
        return 0;
    }
    if x.inc != 1 {
        let (mut best, mut idx) = (first, 0);
        for i in 1..n {
            let v = x.get(i).abs1();
            if v > best {
                best = v;
                idx = i;
            }
        }
        return idx;
    }
    let part = |s: usize, len: usize| {
        let (best, i) = iamax_unit::<T>(x.sub(s, len).ptr, len);
        (best, if i == usize::MAX { i } else { s + i })
    };
    let t = threads_for::<T>(n);
    // Part 0 holds element 0, which is not NaN, so the result is always a real index.
    let (_, idx) = if t <= 1 { part(0, n) } else { par_reduce(n, t, part, |a, b| if b.0 > a.0 { b } else { a }) };
    idx
}
