//! The Ozaki scheme's error-free splitting (seed 001; issue 49): the one description of how an
//! operand of the accurate DGEMM is cut into slices, shared by the CPU and GPU paths.
//!
//! A vector x (a row of op(A), or a column of op(B)) of length k is written exactly as
//! x = sum_s v_s * 2^(g_s), where each slice v_s is a vector of integers of magnitude at most
//! 2^bits, stored as f64, and g_s is the slice's exponent for that vector. With bits =
//! [`slice_bits`]`(k)`, k * 2^(2 bits) <= 2^53: any dot product of two slices is an integer whose
//! partial sums all stay below 2^53, so an ordinary FP64 GEMM computes every slice product
//! exactly, in any order, blocked or threaded. The product is then
//! (A B)_ij = sum_{s,t} (A_s B_t)_ij * 2^(gA_s,i + gB_t,j), exactly.
//!
//! Beyond the seed, the slices are stored scaled: integers with a per-vector power-of-two
//! exponent, not the slices' own values. Huge or tiny inputs (2^±1000, subnormals) then
//! neither overflow nor underflow in the slice products, and the same integers suit integer
//! units (int8 slices summed in int32, as ozIMMU does) where a GPU path wants them.
//!
//! Splitting one vector: while its remainder r is not all zero, take mu = max |r_l| and the
//! exponent E with mu <= 2^E; the slice's unit is g = max(E - bits, -1074) (the smallest
//! subnormal's exponent: below it every remainder is already a whole number of units); v_l =
//! round-to-nearest-even(r_l / 2^g), r_l -= v_l 2^g. Every step is exact: r_l / 2^g is exact
//! where it is at least 1/2 in magnitude (smaller values round to 0 whatever their low bits), and
//! r_l - v_l 2^g is exact by Sterbenz's lemma (or v_l = 0). |v_l| <= 2^(E-g) <= 2^bits, and the
//! remainder is at most 2^(g-1): each slice takes about `bits` bits off the vector's range, so
//! a vector whose entries span 2^0..2^300 needs about (300 + 53) / bits slices.
//!
//! A vector holding an Inf or NaN is not split (its slices are zero, [`Slices::nonfinite`]
//! says so): the results it touches come from IEEE arithmetic, as a plain DGEMM gives them.

/// Bits of a slice entry for dot products of length `k`: the largest b with k * 2^(2b) <= 2^53.
/// k = 1024: 21 (so a double's 53 bits take 3 slices); k = 16384: 19; k = 1: 26.
pub fn slice_bits(k: usize) -> u32 {
    // ceil(log2 k): products of magnitude <= 2^(2b), k of them, below 2^53 (k <= 2^ceil).
    let lg = usize::BITS - k.max(1).saturating_sub(1).leading_zeros();
    (53 - lg.min(51)) / 2
}

/// 2^e as an f64, for e in [-1074, 1023].
#[inline]
fn pow2(e: i32) -> f64 {
    debug_assert!((-1074..=1023).contains(&e));
    if e >= -1022 {
        f64::from_bits(((e + 1023) as u64) << 52)
    } else {
        f64::from_bits(1u64 << (e + 1074))
    }
}

/// x * 2^e in steps of at most 2^±1022 (e in any i32 range the splitting produces). Exact where
/// the result is a whole number of the smallest subnormal and no step overflows: scaling down,
/// each step's result is at least the final one; scaling up, at most.
#[inline]
fn scale(mut x: f64, mut e: i32) -> f64 {
    while e > 1023 {
        x *= pow2(1023);
        e -= 1023;
    }
    while e < -1022 {
        x *= pow2(-1022);
        e += 1022;
    }
    x * pow2(e)
}

/// The exponent E of the smallest power of two at or above |x| (x finite, not 0).
#[inline]
fn ceil_exp(x: f64) -> i32 {
    let bits = x.abs().to_bits();
    let biased = (bits >> 52) as i32;
    let frac = bits & ((1u64 << 52) - 1);
    if biased == 0 {
        // Subnormal: x = frac * 2^-1074.
        let top = 63 - frac.leading_zeros() as i32; // highest set bit
        let pow = frac.is_power_of_two();
        -1074 + top + if pow { 0 } else { 1 }
    } else {
        biased - 1023 + if frac == 0 { 0 } else { 1 }
    }
}

/// Where element l of vector i lies in a slice: `i * vec_stride + l * elem_stride`. Rows of op(A)
/// in an m x k column-major slice: (1, m); columns of op(B) in a k x n one: (k, 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    pub vec_stride: usize,
    pub elem_stride: usize,
}

/// One operand's slices (see the module's notes).
#[derive(Clone, Debug)]
pub struct Slices {
    /// Bits of an entry ([`slice_bits`] of the inner dimension).
    pub bits: u32,
    /// Vectors (rows of op(A), or columns of op(B)) and their length (the inner dimension).
    pub vectors: usize,
    pub len: usize,
    pub layout: Layout,
    /// Slices: the most any vector needed (a vector that needed fewer has zeros after).
    pub count: usize,
    /// Slice s at `s * vectors * len`, element l of vector i at `layout` from there; integers.
    pub data: Vec<f64>,
    /// Slice s's exponent for vector i at `s * vectors + i` (0 where the slice is all zero).
    pub exp: Vec<i32>,
    /// Vectors that hold an Inf or NaN (not split).
    pub nonfinite: Vec<bool>,
}

impl Slices {
    /// Slice `s` (vectors x len entries, as `layout` places them).
    pub fn slice(&self, s: usize) -> &[f64] {
        let n = self.vectors * self.len;
        &self.data[s * n..(s + 1) * n]
    }
    /// Slice `s`'s exponent for vector `i`.
    pub fn exp(&self, s: usize, i: usize) -> i32 {
        self.exp[s * self.vectors + i]
    }
}

/// Split `vectors` vectors of length `len` (element l of vector i is `get(i, l)`) into slices of
/// `bits`-bit integers laid out as `layout` says, at most `max_slices` of them per vector (None:
/// until every remainder is zero, the exact splitting). With a limit, the rest of each vector is
/// dropped: [`split`] then returns, per vector, the largest magnitude left out (0 where nothing
/// was).
pub fn split(
    get: impl Fn(usize, usize) -> f64,
    vectors: usize,
    len: usize,
    bits: u32,
    layout: Layout,
    max_slices: Option<usize>,
) -> (Slices, Vec<f64>) {
    let bits = bits.clamp(1, 52) as i32;
    let mut per: Vec<(Vec<Vec<f64>>, Vec<i32>)> = Vec::with_capacity(vectors);
    let mut left = vec![0.0f64; vectors];
    let mut nonfinite = vec![false; vectors];
    let mut r = vec![0.0f64; len];
    for i in 0..vectors {
        for (l, x) in r.iter_mut().enumerate() {
            *x = get(i, l);
        }
        let mut slices: Vec<Vec<f64>> = Vec::new();
        let mut exps: Vec<i32> = Vec::new();
        if r.iter().any(|x| !x.is_finite()) {
            nonfinite[i] = true;
            per.push((slices, exps));
            continue;
        }
        loop {
            let mu = r.iter().fold(0.0f64, |m, x| m.max(x.abs()));
            if mu == 0.0 {
                break;
            }
            if max_slices.is_some_and(|cap| slices.len() >= cap) {
                left[i] = mu;
                break;
            }
            let g = (ceil_exp(mu) - bits).max(-1074);
            let mut v = vec![0.0f64; len];
            for (x, vl) in r.iter_mut().zip(v.iter_mut()) {
                let q = scale(*x, -g).round_ties_even();
                if q != 0.0 {
                    *x -= scale(q, g);
                }
                *vl = q;
            }
            slices.push(v);
            exps.push(g);
        }
        per.push((slices, exps));
    }
    let count = per.iter().map(|p| p.0.len()).max().unwrap_or(0);
    let n = vectors * len;
    let mut data = vec![0.0f64; count * n];
    let mut exp = vec![0i32; count * vectors];
    for (i, (slices, exps)) in per.iter().enumerate() {
        for (s, (v, &g)) in slices.iter().zip(exps).enumerate() {
            let base = s * n + i * layout.vec_stride;
            for (l, &x) in v.iter().enumerate() {
                data[base + l * layout.elem_stride] = x;
            }
            exp[s * vectors + i] = g;
        }
    }
    (Slices { bits: bits as u32, vectors, len, layout, count, data, exp, nonfinite }, left)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_keep_every_slice_product_below_2_to_53() {
        for k in [1usize, 2, 3, 4, 5, 1000, 1024, 1025, 4096, 16384, 1 << 20] {
            let b = slice_bits(k);
            assert!((k as f64) * 2f64.powi(2 * b as i32) <= 2f64.powi(53), "k={k} b={b}");
            assert!((k as f64) * 2f64.powi(2 * (b as i32 + 1)) > 2f64.powi(53), "k={k}: b={b} is not the largest");
        }
    }

    #[test]
    fn powers_and_exponents() {
        for e in [-1074, -1073, -1023, -1022, -1, 0, 1, 1023] {
            assert_eq!(pow2(e), 2f64.powi(e.max(-1022)) * if e < -1022 { 2f64.powi(e + 1022) } else { 1.0 });
        }
        for (x, e) in [
            (1.0, 0),
            (1.5, 1),
            (0.75, 0),
            (f64::MIN_POSITIVE, -1022),
            (5e-324, -1074),
            (1e-323, -1073),
            (f64::MAX, 1024),
        ] {
            assert_eq!(ceil_exp(x), e, "{x:e}");
        }
        assert_eq!(scale(1.0, -1074), 5e-324);
        assert_eq!(scale(5e-324, 1074), 1.0);
        assert_eq!(scale(1.0, 1023), 2f64.powi(1023));
    }
}

/// An exact sum of terms `integer * 2^e` (a signed big integer in 64-bit limbs, least first,
/// times 2^`base`), rounded once to the nearest double at the end: the accurate GEMM's
/// summation of one element of C (its slice products scaled, alpha times them, beta * c).
/// The limbs are kept between elements ([`Exact::clear`]), so a thread allocates once.
#[derive(Clone, Debug, Default)]
pub struct Exact {
    /// Magnitude, least significant limb first; `neg` its sign.
    limbs: Vec<u64>,
    neg: bool,
    /// The value is limbs * 2^base (base only ever decreases while terms are added; set by the
    /// first term, when there are no limbs yet).
    base: i32,
}

impl Exact {
    pub fn new() -> Self {
        Exact::default()
    }

    /// Back to zero, keeping the limbs' memory.
    pub fn clear(&mut self) {
        self.limbs.clear();
        self.neg = false;
        self.base = 0;
    }

    fn is_zero(&self) -> bool {
        self.limbs.iter().all(|&l| l == 0)
    }

    /// limbs <<= s bits (base -= s), in place.
    fn shift_up(&mut self, s: u32) {
        self.base -= s as i32;
        if s == 0 || self.is_zero() {
            return;
        }
        let (w, b) = ((s / 64) as usize, s % 64);
        let n = self.limbs.len();
        self.limbs.resize(n + w + 1, 0);
        for i in (0..n).rev() {
            let l = self.limbs[i];
            self.limbs[i] = 0;
            if b == 0 {
                self.limbs[i + w] = l;
            } else {
                self.limbs[i + w + 1] |= l >> (64 - b);
                self.limbs[i + w] |= l << b;
            }
        }
    }

    /// Add sign * m * 2^e (m an unsigned magnitude of up to 128 bits).
    pub fn add(&mut self, neg: bool, m: u128, e: i32) {
        if m == 0 {
            return;
        }
        if self.limbs.is_empty() {
            self.base = e;
        }
        if e < self.base {
            self.shift_up((self.base - e) as u32);
        }
        // The term: three limbs t at limb w (m << (e - base)).
        let off = (e - self.base) as u32;
        let (w, b) = ((off / 64) as usize, off % 64);
        let (lo, hi) = (m as u64, (m >> 64) as u64);
        let t = if b == 0 { [lo, hi, 0] } else { [lo << b, (hi << b) | (lo >> (64 - b)), hi >> (64 - b)] };
        if self.limbs.len() < w + 4 {
            self.limbs.resize(w + 4, 0);
        }
        if neg == self.neg || self.is_zero() {
            self.neg = neg;
            let mut carry = 0u64;
            for (i, x) in self.limbs[w..].iter_mut().enumerate() {
                let (s1, c1) = x.overflowing_add(if i < 3 { t[i] } else { 0 });
                let (s2, c2) = s1.overflowing_add(carry);
                *x = s2;
                carry = c1 as u64 + c2 as u64;
                if carry == 0 && i >= 2 {
                    break;
                }
            }
            if carry != 0 {
                self.limbs.push(carry);
            }
            return;
        }
        // Opposite signs: subtract the smaller magnitude from the larger.
        let above = self.limbs[w + 3..].iter().any(|&l| l != 0);
        let mut order = std::cmp::Ordering::Equal;
        if above {
            order = std::cmp::Ordering::Greater;
        } else {
            for i in (0..3).rev() {
                if self.limbs[w + i] != t[i] {
                    order = self.limbs[w + i].cmp(&t[i]);
                    break;
                }
            }
            if order == std::cmp::Ordering::Equal && self.limbs[..w].iter().any(|&l| l != 0) {
                order = std::cmp::Ordering::Greater;
            }
        }
        if order != std::cmp::Ordering::Less {
            // self -= t.
            let mut borrow = 0u64;
            for (i, x) in self.limbs[w..].iter_mut().enumerate() {
                let (d1, b1) = x.overflowing_sub(if i < 3 { t[i] } else { 0 });
                let (d2, b2) = d1.overflowing_sub(borrow);
                *x = d2;
                borrow = b1 as u64 + b2 as u64;
                if borrow == 0 && i >= 2 {
                    break;
                }
            }
        } else {
            // self = t - self (self < t: self has nothing above limb w + 2).
            let mut full = vec![0u64; w + 3];
            full[w..].copy_from_slice(&t);
            sub_mag(&mut full, &self.limbs[..(w + 3).min(self.limbs.len())]);
            self.limbs.clear();
            self.limbs.extend_from_slice(&full);
            self.neg = neg;
        }
    }

    /// Add the exact product x * y of two finite doubles.
    pub fn add_product(&mut self, x: f64, y: f64) {
        let (nx, mx, ex) = parts(x);
        let (ny, my, ey) = parts(y);
        self.add(nx != ny, mx as u128 * my as u128, ex + ey);
    }

    /// Multiply the sum exactly by the finite double x.
    pub fn mul_f64(&mut self, x: f64) {
        let (nx, mx, ex) = parts(x);
        if mx == 0 {
            self.clear();
            return;
        }
        let mut carry = 0u128;
        for l in self.limbs.iter_mut() {
            let p = *l as u128 * mx as u128 + carry;
            *l = p as u64;
            carry = p >> 64;
        }
        if carry != 0 {
            self.limbs.push(carry as u64);
        }
        self.neg ^= nx;
        self.base += ex;
    }

    /// The sum rounded to the nearest double (ties to even; beyond the largest double, ±Inf).
    pub fn round(&self) -> f64 {
        let top = match self.limbs.iter().rposition(|&l| l != 0) {
            Some(t) => t,
            None => return 0.0,
        };
        // Bit length of the magnitude.
        let len = top as i64 * 64 + (64 - self.limbs[top].leading_zeros() as i64);
        // Value = mag * 2^base; its leading bit has exponent base + len - 1.
        let lead = self.base as i64 + len - 1;
        // Keep bits down to exponent q: 53 significant bits, or the subnormal grid 2^-1074.
        let q = (lead - 52).max(-1074);
        let drop = q - self.base as i64; // bits below q (may be <= 0: nothing dropped)
        let limb = |w: usize| self.limbs.get(w).copied().unwrap_or(0);
        let bit = |i: i64| -> bool { (limb((i / 64) as usize) >> (i % 64)) & 1 == 1 };
        // kept = mag >> drop (at most 53 bits), read a word at a time (drop <= 0: mag has at
        // most 53 bits, all in the first limb).
        let mut kept: u64 = if drop <= 0 {
            limb(0)
        } else {
            let (w, b) = ((drop / 64) as usize, drop % 64);
            let hi = if b == 0 { 0 } else { limb(w + 1) << (64 - b) };
            (limb(w) >> b) | hi
        };
        let mut exp = q;
        if drop < 0 {
            // Exact with room to spare: mag * 2^(base - q) fits in 53 bits.
            kept <<= -drop;
        } else if drop > 0 {
            let half = bit(drop - 1);
            // Any bit below drop - 1: whole limbs, then the low part of the last one.
            let below = drop - 1;
            let (w, b) = ((below / 64) as usize, below % 64);
            let sticky = self.limbs[..w.min(self.limbs.len())].iter().any(|&l| l != 0)
                || (b > 0 && limb(w) & ((1u64 << b) - 1) != 0);
            if half && (sticky || kept & 1 == 1) {
                kept += 1;
                if kept == 1u64 << 53 {
                    kept >>= 1;
                    exp += 1;
                }
            }
        }
        // The largest double is (2^53 - 1) * 2^971.
        let v = if exp > 971 {
            f64::INFINITY
        } else {
            // kept * 2^exp, exact (kept < 2^53; exp >= -1074).
            scale(kept as f64, exp as i32)
        };
        if self.neg {
            -v
        } else {
            v
        }
    }
}

/// (sign, integer mantissa, exponent) of a finite double: |x| = m * 2^e.
#[inline]
fn parts(x: f64) -> (bool, u64, i32) {
    let bits = x.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1u64 << 52) - 1);
    let (m, e) = if biased == 0 { (frac, -1074) } else { (frac | (1u64 << 52), biased - 1075) };
    (x.is_sign_negative(), m, e)
}

/// a -= b (|a| >= |b|).
fn sub_mag(a: &mut [u64], b: &[u64]) {
    let mut borrow = 0u64;
    for (i, x) in a.iter_mut().enumerate() {
        let (d1, b1) = x.overflowing_sub(*b.get(i).unwrap_or(&0));
        let (d2, b2) = d1.overflowing_sub(borrow);
        *x = d2;
        borrow = (b1 as u64) + (b2 as u64);
        if borrow == 0 && i >= b.len() {
            break;
        }
    }
    debug_assert_eq!(borrow, 0);
}
