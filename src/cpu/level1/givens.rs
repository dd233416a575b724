//! Constructing rotations: `?rotg` (Givens) and `?rotmg` (modified Givens), scalar code that
//! follows the reference's arithmetic step by step so results match it bit for bit.

use super::{one, pow2, zero};
use crate::types::{Real, Scalar};
use num_complex::Complex;
use std::mem::size_of;

/// The reference rotg scaling bounds: safmin = 2^max(minexp-1, 1-maxexp) (the smallest
/// normal number) and safmax = 2^max(1-minexp, maxexp-1).
#[inline]
fn safe_bounds<R: Real>() -> (R, R) {
    if size_of::<R>() == 4 {
        (pow2(-126), pow2(127))
    } else {
        (pow2(-1022), pow2(1023))
    }
}

#[inline(always)]
fn max3<R: Real>(a: R, b: R, c: R) -> R {
    fmax(fmax(a, b), c)
}

/// Fortran MAX of two non-NaN values (callers never pass NaN where it would matter).
#[inline(always)]
fn fmax<R: Real>(a: R, b: R) -> R {
    if b > a {
        b
    } else {
        a
    }
}

#[inline(always)]
fn fmin<R: Real>(a: R, b: R) -> R {
    if b < a {
        b
    } else {
        a
    }
}

/// Real Givens rotation (`srotg`, `drotg`, reference 3.10+): given (a, b) returns (c, s) with
/// [c s; -s c] [a; b] = [r; 0], overwriting a with r and b with z (s if |a| > |b|, else 1/c,
/// or 1 when c = 0), from which c and s can be recovered.
pub fn rotg<R: Real>(a: &mut R, b: &mut R) -> (R, R) {
    let (safmin, safmax) = safe_bounds::<R>();
    let (anorm, bnorm) = (a.abs(), b.abs());
    if bnorm == zero() {
        *b = zero();
        (one(), zero())
    } else if anorm == zero() {
        *a = *b;
        *b = one();
        (zero(), one())
    } else {
        let scl = fmin(safmax, max3(safmin, anorm, bnorm));
        let sigma = if anorm > bnorm { one::<R>().copysign(*a) } else { one::<R>().copysign(*b) };
        let (as_, bs) = (*a / scl, *b / scl);
        let r = sigma * (scl * (as_ * as_ + bs * bs).sqrt());
        let c = *a / r;
        let s = *b / r;
        let z = if anorm > bnorm {
            s
        } else if c != zero() {
            one::<R>() / c
        } else {
            one()
        };
        *a = r;
        *b = z;
        (c, s)
    }
}

#[inline(always)]
fn abssq<R: Real>(t: Complex<R>) -> R {
    t.re * t.re + t.im * t.im
}

/// `t / u` for a real `u` as the reference (gfortran, signed zeros honoured) evaluates it: `u`
/// becomes (u, +0) and the quotient is a complex division with Smith's range reduction, whose
/// |re| >= |im| branch gives these expressions. Equal to (t.re/u, t.im/u) except for the sign
/// of zero parts and for Inf/NaN inputs.
#[inline(always)]
fn div_real<R: Real>(t: Complex<R>, u: R) -> Complex<R> {
    let z = zero::<R>();
    let ratio = z / u;
    let div = z * ratio + u;
    Complex::new((t.im * ratio + t.re) / div, (t.im - t.re * ratio) / div)
}

/// `t * u` for a real `u`: the full complex product with (u, +0), as the reference forms it.
#[inline(always)]
fn mul_real<R: Real>(t: Complex<R>, u: R) -> Complex<R> {
    t * Complex::new(u, zero())
}

/// Complex Givens rotation (`crotg`, `zrotg`, reference 3.11): given (a, b) returns real c
/// and complex s with [c s; -conj(s) c] [a; b] = [r; 0], overwriting a with r.
///
/// Unscaled arithmetic when the larger parts of both inputs lie in (sqrt(safmin),
/// sqrt(safmax/4)), otherwise the inputs are scaled by u (a tiny a next to a big b by its own
/// v). c comes from sqrt(f2/h2) when that ratio is representable, else from f2/sqrt(f2*h2).
pub fn rotg_complex<R: Real>(a: &mut Complex<R>, b: Complex<R>) -> (R, Complex<R>) {
    let (safmin, safmax) = safe_bounds::<R>();
    let rtmin = safmin.sqrt();
    let two = one::<R>() + one::<R>();
    let czero = Complex::new(zero::<R>(), zero::<R>());
    let (f, g) = (*a, b);

    if g == czero {
        return (one(), czero);
    }
    if f == czero {
        let (r, s) = if g.re == zero() {
            let r = g.im.abs();
            (r, div_real(g.conj(), r))
        } else if g.im == zero() {
            let r = g.re.abs();
            (r, div_real(g.conj(), r))
        } else {
            let g1 = fmax(g.re.abs(), g.im.abs());
            let rtmax = (safmax / two).sqrt();
            if g1 > rtmin && g1 < rtmax {
                let d = abssq(g).sqrt();
                (d, div_real(g.conj(), d))
            } else {
                let u = fmin(safmax, fmax(safmin, g1));
                let gs = div_real(g, u);
                let d = abssq(gs).sqrt();
                (d * u, div_real(gs.conj(), d))
            }
        };
        *a = Complex::new(r, zero());
        return (zero(), s);
    }

    // c, r and s from f, g (possibly scaled) and their squared magnitudes f2, h2 = f2 + g2.
    let solve = |f: Complex<R>, g: Complex<R>, f2: R, h2: R, rtmax: R| {
        if f2 >= h2 * safmin {
            // safmin <= f2/h2 <= 1: c from the ratio.
            let c = (f2 / h2).sqrt();
            let r = div_real(f, c);
            let s = if f2 > rtmin && h2 < rtmax * two {
                g.conj() * div_real(f, (f2 * h2).sqrt())
            } else {
                g.conj() * div_real(r, h2)
            };
            (c, r, s)
        } else {
            // f2/h2 may be subnormal: go through sqrt(f2*h2), which is safe here.
            let d = (f2 * h2).sqrt();
            let c = f2 / d;
            let r = if c >= safmin { div_real(f, c) } else { mul_real(f, h2 / d) };
            (c, r, g.conj() * div_real(f, d))
        }
    };

    let f1 = fmax(f.re.abs(), f.im.abs());
    let g1 = fmax(g.re.abs(), g.im.abs());
    let rtmax = (safmax / (two + two)).sqrt();
    let (c, r, s) = if f1 > rtmin && f1 < rtmax && g1 > rtmin && g1 < rtmax {
        let f2 = abssq(f);
        let h2 = f2 + abssq(g);
        solve(f, g, f2, h2, rtmax)
    } else {
        let u = fmin(safmax, max3(safmin, f1, g1));
        let gs = div_real(g, u);
        let g2 = abssq(gs);
        let (w, fs, f2, h2);
        if f1 / u < rtmin {
            // f is tiny next to g: scale it on its own.
            let v = fmin(safmax, fmax(safmin, f1));
            w = v / u;
            fs = div_real(f, v);
            f2 = abssq(fs);
            h2 = f2 * (w * w) + g2;
        } else {
            w = one();
            fs = div_real(f, u);
            f2 = abssq(fs);
            h2 = f2 + g2;
        }
        let (c, r, s) = solve(fs, gs, f2, h2, rtmax);
        (c * w, mul_real(r, u), s)
    };
    *a = r;
    (c, s)
}

/// Result of [`rotmg`]: the new d1, d2, x1 and the `param` slots the reference writes (flag
/// always; h11/h21/h12/h22 as the flag's form requires, `None` for slots left untouched).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rotmg<R> {
    pub d1: R,
    pub d2: R,
    pub x1: R,
    pub param: [Option<R>; 5],
}

/// The reference's rescaling constants: gam = 4096, and its bounds gam^2 and 1/gam^2 as the
/// reference spells them (decimal literals, so not exactly powers of two in every precision).
#[inline]
fn rotmg_consts<R: Real>() -> (R, R, R) {
    if size_of::<R>() == 4 {
        (
            <R as Scalar>::from_f64(4096.0),
            <R as Scalar>::from_f64(1.67772e7f32 as f64),
            <R as Scalar>::from_f64(5.96046e-8f32 as f64),
        )
    } else {
        (<R as Scalar>::from_f64(4096.0), <R as Scalar>::from_f64(16777216.0), <R as Scalar>::from_f64(5.9604645e-8))
    }
}

/// Modified Givens rotation (`srotmg`, `drotmg`): the H that zeroes the second component of
/// (sqrt(d1)*x1, sqrt(d2)*y1), with d1, d2 rescaled by gam^2 into [1/gam^2, gam^2] and H
/// rescaled to match.
///
/// Two deliberate departures from the reference 3.11 text, both in the rescaling loops: the
/// implied unit entries of H are filled in only when leaving the flag = 0 or flag = 1 form
/// (as later reference releases do; 3.11 re-set them on every pass, overwriting entries
/// already rescaled when more than one pass was needed), and an infinite d1 or d2 ends the
/// loop instead of dividing by gam^2 forever.
pub fn rotmg<R: Real>(d1: R, d2: R, x1: R, y1: R) -> Rotmg<R> {
    let (gam, gamsq, rgamsq) = rotmg_consts::<R>();
    let (z, o) = (zero::<R>(), one::<R>());
    // "Zero H, d and x1": the answer for d1 < 0 and for the cases with no usable rotation.
    let zeroed = Rotmg { d1: z, d2: z, x1: z, param: [Some(-o), Some(z), Some(z), Some(z), Some(z)] };
    if d1 < z {
        return zeroed;
    }
    let p2 = d2 * y1;
    if p2 == z {
        return Rotmg { d1, d2, x1, param: [Some(-(o + o)), None, None, None, None] };
    }
    let (mut d1, mut d2, mut x1) = (d1, d2, x1);
    let (mut h11, mut h12, mut h21, mut h22) = (z, z, z, z);
    let mut flag;
    let p1 = d1 * x1;
    let q2 = p2 * y1;
    let q1 = p1 * x1;
    if q1.abs() > q2.abs() {
        h21 = -y1 / x1;
        h12 = p2 / p1;
        let u = o - h12 * h21;
        if u <= z || u.is_nan() {
            // Only reachable through rounding (see the reference's note, DOI
            // 10.1145/355841.355847).
            return zeroed;
        }
        flag = z;
        d1 = d1 / u;
        d2 = d2 / u;
        x1 *= u;
    } else if q2 < z {
        return zeroed;
    } else {
        flag = o;
        h11 = p1 / p2;
        h22 = x1 / y1;
        let u = o + h11 * h22;
        let t = d2 / u;
        d2 = d1 / u;
        d1 = t;
        x1 = y1 * u;
    }

    // Rescaling needs the full form: make the implied entries of the compact forms explicit.
    let mut to_full = |flag: &mut R| {
        if *flag == z {
            h11 = o;
            h22 = o;
            *flag = -o;
        } else if *flag == o {
            h21 = -o;
            h12 = o;
            *flag = -o;
        }
    };
    let gam2 = gam * gam;
    let (mut s1, mut s2) = (0i32, 0i32);
    if d1 != z {
        while d1.is_finite() && (d1 <= rgamsq || d1 >= gamsq) {
            to_full(&mut flag);
            if d1 <= rgamsq {
                d1 *= gam2;
                x1 = x1 / gam;
                s1 -= 1;
            } else {
                d1 = d1 / gam2;
                x1 *= gam;
                s1 += 1;
            }
        }
    }
    if d2 != z {
        while d2.is_finite() && (d2.abs() <= rgamsq || d2.abs() >= gamsq) {
            to_full(&mut flag);
            if d2.abs() <= rgamsq {
                d2 *= gam2;
                s2 -= 1;
            } else {
                d2 = d2 / gam2;
                s2 += 1;
            }
        }
    }
    // Row 1 of H follows d1's passes, row 2 d2's, one multiplication or division by gam per
    // pass, in the same order as the reference applies them.
    let step = |h: R, passes: i32| {
        let mut h = h;
        for _ in 0..passes.unsigned_abs() {
            h = if passes < 0 { h / gam } else { h * gam };
        }
        h
    };
    h11 = step(h11, s1);
    h12 = step(h12, s1);
    h21 = step(h21, s2);
    h22 = step(h22, s2);

    let param = if flag < z {
        [Some(flag), Some(h11), Some(h21), Some(h12), Some(h22)]
    } else if flag == z {
        [Some(flag), None, Some(h21), Some(h12), None]
    } else {
        [Some(flag), Some(h11), None, None, Some(h22)]
    };
    Rotmg { d1, d2, x1, param }
}
