//! Level 1 reductions: dot products, asum, nrm2, i?amax.
//!
//! Unit-stride loops keep `L` independent partial sums (an array LLVM keeps in vector
//! registers) and fold them pairwise at the end; strided loops, which cannot vectorise anyway,
//! run in the reference's order and round exactly as it does.

use super::{as_reals, par_reduce, threads_for};
use crate::types::{Real, Scalar, VecRef};
use num_traits::Float;
use std::mem::size_of;

#[inline(always)]
fn zero<R: Real>() -> R {
    <R as Scalar>::zero()
}

#[inline(always)]
fn one<R: Real>() -> R {
    <R as Scalar>::one()
}

/// Sum of all lanes, folded pairwise (L a power of two).
#[inline(always)]
fn sum_lanes<R: Real, const L: usize>(mut w: [R; L]) -> R {
    let mut len = L;
    while len > 1 {
        len /= 2;
        for j in 0..len {
            w[j] = w[j] + w[j + len];
        }
    }
    w[0]
}

/// Sums of the even and of the odd lanes, folded pairwise (L a power of two, >= 2).
#[inline(always)]
fn sum_lanes_parity<R: Real, const L: usize>(mut w: [R; L]) -> (R, R) {
    let mut len = L;
    while len > 2 {
        len /= 2;
        for j in 0..len {
            w[j] = w[j] + w[j + len];
        }
    }
    (w[0], w[1])
}

// ---------------------------------------------------------------------------------------
// dot

/// Real dot product of `m` unit-stride reals.
#[inline(always)]
unsafe fn dot_lanes<R: Real, const L: usize>(x: *const R, y: *const R, m: usize) -> R {
    let mut acc = [zero::<R>(); L];
    let blocks = m / L;
    for b in 0..blocks {
        let (xb, yb) = (x.add(b * L), y.add(b * L));
        for j in 0..L {
            acc[j] += *xb.add(j) * *yb.add(j);
        }
    }
    let mut tail = zero::<R>();
    for i in blocks * L..m {
        tail += *x.add(i) * *y.add(i);
    }
    sum_lanes(acc) + tail
}

/// The four real sums a complex dot product is made of, over `m` interleaved reals (m even):
/// [sum xr*yr, sum xi*yi, sum xr*yi, sum xi*yr].
#[inline(always)]
unsafe fn cdot_lanes<R: Real, const L: usize>(x: *const R, y: *const R, m: usize) -> [R; 4] {
    let mut a = [zero::<R>(); L];
    let mut b = [zero::<R>(); L];
    let blocks = m / L;
    for k in 0..blocks {
        let (xb, yb) = (x.add(k * L), y.add(k * L));
        for j in 0..L {
            let xv = *xb.add(j);
            a[j] += xv * *yb.add(j);
            b[j] += xv * *yb.add(j ^ 1);
        }
    }
    let mut t = [zero::<R>(); 4];
    let mut i = blocks * L;
    while i < m {
        let (xr, xi, yr, yi) = (*x.add(i), *x.add(i + 1), *y.add(i), *y.add(i + 1));
        t[0] += xr * yr;
        t[1] += xi * yi;
        t[2] += xr * yi;
        t[3] += xi * yr;
        i += 2;
    }
    let (ae, ao) = sum_lanes_parity(a);
    let (be, bo) = sum_lanes_parity(b);
    [ae + t[0], ao + t[1], be + t[2], bo + t[3]]
}

/// Dot-product sums of `m` unit-stride reals (see [`cdot_lanes`] for the complex layout; a
/// real product only fills the first sum).
#[inline(always)]
unsafe fn dot_parts<R: Real>(complex: bool, x: *const R, y: *const R, m: usize) -> [R; 4] {
    let z = zero::<R>();
    match (complex, size_of::<R>() == 4) {
        (false, true) => [dot_lanes::<R, 64>(x, y, m), z, z, z],
        (false, false) => [dot_lanes::<R, 32>(x, y, m), z, z, z],
        (true, true) => cdot_lanes::<R, 64>(x, y, m),
        (true, false) => cdot_lanes::<R, 32>(x, y, m),
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
        crate::dispatch!(dot_parts::<T::Real>(T::IS_COMPLEX, xr, yr, m))
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

#[inline(always)]
unsafe fn dsdot_lanes<const L: usize>(x: *const f32, y: *const f32, n: usize) -> f64 {
    let mut acc = [0.0f64; L];
    let blocks = n / L;
    for b in 0..blocks {
        let (xb, yb) = (x.add(b * L), y.add(b * L));
        for j in 0..L {
            acc[j] += *xb.add(j) as f64 * *yb.add(j) as f64;
        }
    }
    let mut tail = 0.0;
    for i in blocks * L..n {
        tail += *x.add(i) as f64 * *y.add(i) as f64;
    }
    sum_lanes(acc) + tail
}

#[inline(always)]
unsafe fn dsdot_unit(x: *const f32, y: *const f32, n: usize) -> f64 {
    dsdot_lanes::<32>(x, y, n)
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
    let part = |s: usize, len: usize| crate::dispatch!(dsdot_unit(x.sub(s, len).ptr, y.sub(s, len).ptr, len));
    let t = threads_for::<f32>(n);
    let sum = if t <= 1 { part(0, n) } else { par_reduce(n, t, part, |a, b| a + b) };
    init + sum
}

// ---------------------------------------------------------------------------------------
// asum

#[inline(always)]
unsafe fn asum_lanes<R: Real, const L: usize>(x: *const R, m: usize) -> R {
    let mut acc = [zero::<R>(); L];
    let blocks = m / L;
    for b in 0..blocks {
        let xb = x.add(b * L);
        for j in 0..L {
            acc[j] += (*xb.add(j)).abs();
        }
    }
    let mut tail = zero::<R>();
    for i in blocks * L..m {
        tail += (*x.add(i)).abs();
    }
    sum_lanes(acc) + tail
}

#[inline(always)]
unsafe fn asum_unit<R: Real>(x: *const R, m: usize) -> R {
    if size_of::<R>() == 4 {
        asum_lanes::<R, 64>(x, m)
    } else {
        asum_lanes::<R, 32>(x, m)
    }
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
        crate::dispatch!(asum_unit::<T::Real>(xr, m))
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

/// 2^e, exactly (|e| well inside the double range).
#[inline]
fn pow2<R: Real>(e: i32) -> R {
    <R as Scalar>::from_f64(f64::from_bits(((e + 1023) as u64) << 52))
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

#[inline(always)]
unsafe fn ssq_lanes<R: Real, const L: usize>(x: *const R, m: usize, k: Blue<R>) -> Ssq<R> {
    let z = zero::<R>();
    let (mut big, mut med, mut small) = ([z; L], [z; L], [z; L]);
    let blocks = m / L;
    for b in 0..blocks {
        let xb = x.add(b * L);
        for j in 0..L {
            let ax = (*xb.add(j)).abs();
            let (hi, lo) = (ax > k.tbig, ax < k.tsml);
            let (bs, ss) = (ax * k.sbig, ax * k.ssml);
            big[j] += if hi { bs * bs } else { z };
            small[j] += if lo { ss * ss } else { z };
            med[j] += if hi || lo { z } else { ax * ax };
        }
    }
    let mut tail = Ssq::default();
    for i in blocks * L..m {
        tail.add(*x.add(i), &k);
    }
    Ssq { big: sum_lanes(big), med: sum_lanes(med), small: sum_lanes(small) }.plus(tail)
}

#[inline(always)]
unsafe fn ssq_unit<R: Real>(x: *const R, m: usize, k: Blue<R>) -> Ssq<R> {
    if size_of::<R>() == 4 {
        ssq_lanes::<R, 32>(x, m, k)
    } else {
        ssq_lanes::<R, 16>(x, m, k)
    }
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
        crate::dispatch!(ssq_unit::<T::Real>(xr, m, k))
    };
    let t = threads_for::<T>(n);
    let acc = if t <= 1 { part(0, n) } else { par_reduce(n, t, part, Ssq::plus) };
    acc.finish(&k)
}

// ---------------------------------------------------------------------------------------
// i?amax

/// Largest |re|+|im| of `len` unit-stride elements, NaN ignored; -1 if every one is NaN.
#[inline(always)]
unsafe fn amax_lanes<T: Scalar, const L: usize>(x: *const T, len: usize) -> T::Real {
    let none = -one::<T::Real>();
    let mut m = [none; L];
    let blocks = len / L;
    for b in 0..blocks {
        let xb = x.add(b * L);
        for j in 0..L {
            let v = (*xb.add(j)).abs1();
            // `v > m` is false for NaN, so NaN never replaces the running maximum.
            m[j] = if v > m[j] { v } else { m[j] };
        }
    }
    let mut best = none;
    for v in m {
        best = if v > best { v } else { best };
    }
    for i in blocks * L..len {
        let v = (*x.add(i)).abs1();
        best = if v > best { v } else { best };
    }
    best
}

/// (largest value, first index holding it) over `len` unit-stride elements, by blocks: a
/// block is searched for the index only when its maximum beats the best so far. Index
/// `usize::MAX` when every element is NaN.
#[inline(always)]
unsafe fn iamax_unit<T: Scalar>(x: *const T, len: usize) -> (T::Real, usize) {
    const BLOCK: usize = 1024;
    let (mut best, mut idx) = (-one::<T::Real>(), usize::MAX);
    let mut s = 0;
    while s < len {
        let l = BLOCK.min(len - s);
        let m = amax_lanes::<T, 16>(x.add(s), l);
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
        let (best, i) = crate::dispatch!(iamax_unit::<T>(x.sub(s, len).ptr, len));
        (best, if i == usize::MAX { i } else { s + i })
    };
    let t = threads_for::<T>(n);
    // Part 0 holds element 0, which is not NaN, so the result is always a real index.
    let (_, idx) = if t <= 1 { part(0, n) } else { par_reduce(n, t, part, |a, b| if b.0 > a.0 { b } else { a }) };
    idx
}
