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
pub fn scale(mut x: f64, mut e: i32) -> f64 {
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

    /// The window's carries settled after every few terms (here every 1, 2 or 3, against 2^27
    /// in use) give the same sums as term-by-term `add_product`: full 106-bit products at every
    /// bit offset, both signs, sums crossing zero, zeros, one term 2^-1000 below the rest.
    #[test]
    fn window_settles_its_carries_in_any_batch() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let (mut window, mut general) = (Exact::new(), Exact::new());
        for case in 0..200 {
            let len = 1 + (next() % 40) as usize;
            let terms: Vec<(f64, f64)> = (0..len)
                .map(|t| {
                    // 53-bit mantissas, exponents over 0..70 (every offset mod 32), random signs.
                    let m = |r: u64| (((r >> 11) | (1 << 52)) as f64) * 2f64.powi(-52);
                    let (x, y) = (m(next()) * 2f64.powi((next() % 70) as i32), m(next()));
                    let x = if next() % 2 == 0 { -x } else { x };
                    match (case % 4, t % 7) {
                        (1, 3) => (0.0, y),
                        (2, 0) => (x * 2f64.powi(-1000), y),
                        _ => (x, y),
                    }
                })
                .collect();
            // Case 3: each term followed by its negative but one, so the sum crosses zero.
            let terms: Vec<(f64, f64)> = if case % 4 == 3 {
                terms.iter().enumerate().flat_map(|(t, &(x, y))| [(x, y), (if t == 0 { x } else { -x }, y)]).collect()
            } else {
                terms
            };
            general.clear();
            for &(x, y) in &terms {
                general.add_product(x, y);
            }
            for batch in [1, 2, 3, 1 << 27] {
                window.dot_in_window(terms.len(), |t| terms[t], batch);
                assert_eq!(window.round().to_bits(), general.round().to_bits(), "case {case}, batch {batch}");
            }
        }
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

    /// Set the sum to the exact dot product sum_t x_t * y_t of `len` pairs of finite doubles
    /// (`term(t)`), as [`Exact::add_product`] would, but in one fixed window: the products'
    /// exponents are found first, then each product's 106 bits are added at their offset as
    /// five signed 32-bit digits held in `i64`s, whose carries wait until the end (every
    /// 2^27 terms at most), the sign applied by a mask rather than a branch. Against 64-bit
    /// limbs with their carries added at once and a branch on the sign: 7.6 against 10.2 ns
    /// per term on this project's VM for the benchmarks' phi = 0.5 and 8 inputs, 4.8 against
    /// 4.9 for the seed's A*inv(A) (rows 90% zeros; `examples/exact_dot`, best of 4).
    /// Windows wider than 80 digits (exponents 2400 bits apart) take the general path.
    pub fn set_dot(&mut self, len: usize, term: impl Fn(usize) -> (f64, f64)) {
        // Each term adds below 2^33 to a digit: 2^27 terms keep every digit below 2^61.
        self.dot_in_window(len, term, 1 << 27);
    }

    /// [`Exact::set_dot`], the carries settled every `batch` terms.
    fn dot_in_window(&mut self, len: usize, term: impl Fn(usize) -> (f64, f64), batch: usize) {
        self.clear();
        let (mut lo, mut hi) = (i32::MAX, i32::MIN);
        for t in 0..len {
            let (x, y) = term(t);
            if x == 0.0 || y == 0.0 {
                continue;
            }
            let e = parts(x).2 + parts(y).2;
            lo = lo.min(e);
            hi = hi.max(e);
        }
        if lo > hi {
            return;
        }
        // Room: the span, 106 bits of a product, 64 bits for the sum of up to 2^64 of them,
        // a sign bit; in 32-bit digits, an even number of them (two to a limb), at least 5
        // above the highest offset.
        let digits = 2 * (((hi - lo) as usize + 106 + 64 + 1) / 64 + 1);
        const MAX: usize = 80;
        if digits > MAX {
            for t in 0..len {
                let (x, y) = term(t);
                self.add_product(x, y);
            }
            return;
        }
        const MASK: i64 = 0xffff_ffff;
        // Digits to [0, 2^32) from the bottom up, the carries into the top digit (signed).
        fn settle(d: &mut [i64]) {
            let top = d.len() - 1;
            for i in 0..top {
                let c = d[i] >> 32;
                d[i] &= MASK;
                d[i + 1] += c;
            }
        }
        let mut acc = [0i64; MAX];
        let acc = &mut acc[..digits];
        for start in (0..len).step_by(batch) {
            for t in start..len.min(start + batch) {
                let (x, y) = term(t);
                let ((nx, mx, ex), (ny, my, ey)) = (parts(x), parts(y));
                let m = mx as u128 * my as u128;
                if m == 0 {
                    continue;
                }
                let off = (ex + ey - lo) as u32;
                let (at, b) = ((off / 32) as usize, off % 32);
                // m < 2^106 in two parts, each shifted by b: the low 64 bits over three
                // digits, the high 42 over three digits from at + 2; negated by the sign mask
                // (-1 or 0) as (p ^ s) - s.
                let (l, h) = (((m as u64) as u128) << b, (m >> 64) << b);
                let digit = |v: u128, at: u32| ((v >> at) as i64) & MASK;
                let p = [digit(l, 0), digit(l, 32), digit(l, 64) + digit(h, 0), digit(h, 32), digit(h, 64)];
                let s = -((nx != ny) as i64);
                for (d, p) in acc[at..at + 5].iter_mut().zip(p) {
                    *d += (p ^ s) - s;
                }
            }
            settle(acc);
        }
        // Two digits to a limb; the top digit's sign makes the window two's complement.
        let neg = acc[digits - 1] < 0;
        let mut limbs = [0u64; MAX / 2];
        let limbs = &mut limbs[..digits / 2];
        for (w, x) in limbs.iter_mut().enumerate() {
            *x = (acc[2 * w] as u64 & MASK as u64) | ((acc[2 * w + 1] as u64) << 32);
        }
        // Two's complement back to sign and magnitude.
        if neg {
            let mut carry = 1u64;
            for x in limbs.iter_mut() {
                let (s, c) = (!*x).overflowing_add(carry);
                *x = s;
                carry = c as u64;
            }
        }
        self.limbs.extend_from_slice(limbs);
        self.neg = neg;
        self.base = lo;
    }

    /// Add the exact product x * y of two finite doubles.
    pub fn add_product(&mut self, x: f64, y: f64) {
        let (nx, mx, ex) = parts(x);
        let (ny, my, ey) = parts(y);
        self.add(nx != ny, mx as u128 * my as u128, ex + ey);
    }

    /// Add another exact sum (limb by limb: the fallback of a complex element, a few per call).
    pub fn add_sum(&mut self, other: &Exact) {
        for (t, &l) in other.limbs.iter().enumerate() {
            self.add(other.neg, l as u128, other.base + 64 * t as i32);
        }
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

/// The unit roundoff of f64, 2^-53.
pub const U: f64 = 1.0 / 9007199254740992.0;

/// An upper bound on gamma_n = n u / (1 - n u): the relative error bound of a dot product of
/// n terms summed in any order (blocked, threaded, with or without FMA), Higham's Theorem 3.5.
pub fn gamma(n: usize) -> f64 {
    let nu = n as f64 * U;
    if nu >= 0.5 {
        return f64::INFINITY;
    }
    nu / (1.0 - nu) * (1.0 + 4.0 * U)
}

/// How a ladder's slices are placed, so that the products of a level are one GEMM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stack {
    /// Rows of op(A): slice s is the m x len column-major block s (vectors adjacent), so
    /// slices 0..=l side by side are one m x (l + 1) len matrix. One spare block follows the
    /// last slice (for the remainder, see [`Ladder::rest_into_slot`]).
    Rows,
    /// Columns of op(B): each column holds its slices stacked, the last slice first, so
    /// slices l, l - 1, ..., 0 of every column are one (l + 1) len x n matrix (ld levels * len).
    Columns,
}

/// One operand cut for the fast accurate path: a fixed ladder of `levels` slices per vector
/// (a row of op(A) or a column of op(B)), stored in units of the vector's top unit 2^g0:
/// x * 2^-g0 = sum_{s < levels} slice_s + remainder_{levels-1}, where slice s holds
/// v_s * 2^(-s (bits + 1)) with integer |v_s| <= 2^bits.
///
/// Why a fixed spacing of bits + 1 (and not [`split`]'s adaptive one): slice s of A times
/// slice t of B then sits at level s + t for every element, so a level's products add up in
/// one FP64 GEMM exactly and an element's levels combine into one fixed-point integer
/// (`i128`), without any per-product exponent. The rounding to nearest makes every remainder
/// at most half a unit, which is why the next slice's integers stay within 2^bits even though
/// it is bits + 1 below.
///
/// The bounds a faithful result needs come with it: per vector, the 1-norm of each slice and of
/// the whole vector, and the largest magnitude left after slices 0..=m.
#[derive(Debug)]
pub struct Ladder {
    pub bits: u32,
    pub levels: usize,
    pub vectors: usize,
    pub len: usize,
    /// Where element l of vector i lies from a slice's start; slice s starts at `offset[s]`.
    pub layout: Layout,
    pub offset: Vec<usize>,
    /// Per vector: the top slice's unit exponent g0 (everything else is in units of 2^g0).
    pub g0: Vec<i32>,
    pub data: Work,
    /// Upper bound on the 1-norm of slice s of vector i, at `s * vectors + i`.
    pub norm: Vec<f64>,
    /// The largest magnitude left after slices 0..=m of vector i, at `m * vectors + i`.
    pub rest: Vec<f64>,
    /// Upper bound on the 1-norm of the whole vector (units of 2^g0).
    pub total: Vec<f64>,
    /// Vectors holding an Inf or NaN (not cut; the results they touch take IEEE arithmetic).
    pub nonfinite: Vec<bool>,
    /// Vectors with a non-zero entry below 2^-500 once scaled (2^500 under their largest):
    /// only these can lose bits in the scaling or underflow in a product of the rest (every
    /// other product of two entries is at least 2^-641), so only their results need the
    /// underflow slack.
    pub deep: Vec<bool>,
    /// Slices 0..stored are in `data` (the bounds cover all `levels`): [`Ladder::store`].
    pub stored: usize,
}

/// An upper bound on a sum of `n` non-negative terms computed in f64 in any order.
#[inline]
fn sum_up(s: f64, n: usize) -> f64 {
    s * (1.0 + (n as f64 + 2.0) * 2.0 * U)
}

impl Ladder {
    /// Where slice `s` starts (a matrix with leading dimension [`Ladder::ld`]); with
    /// [`Stack::Rows`], s = levels is the spare block.
    pub fn slice_ptr(&self, s: usize) -> *const f64 {
        let at =
            if s == self.levels && self.layout.vec_stride == 1 { s * self.vectors * self.len } else { self.offset[s] };
        self.data[at..].as_ptr()
    }
    /// The slices' leading dimension.
    pub fn ld(&self) -> usize {
        if self.layout.vec_stride == 1 {
            self.layout.elem_stride
        } else {
            self.layout.vec_stride
        }
    }
    pub fn norm(&self, s: usize, i: usize) -> f64 {
        self.norm[s * self.vectors + i]
    }
    pub fn rest(&self, m: usize, i: usize) -> f64 {
        self.rest[m * self.vectors + i]
    }

    /// Write what is left of every vector after slices 0..=m into `buf` from offset `base`
    /// for each `(Some(m), base)` of `outs`, and the whole scaled vector for a `(None, base)`;
    /// each laid out in `buf` as `layout` says (vectors in the same direction as the ladder's).
    /// Exact (the steps of the cut), all in one pass over the operand. `get` is the accessor the
    /// ladder was cut from.
    pub fn remainders(
        &self,
        get: &(impl Fn(usize, usize) -> f64 + Sync),
        buf: &mut [f64],
        layout: Layout,
        outs: &[(Option<usize>, usize)],
    ) {
        let span = (self.vectors - 1) * layout.vec_stride + (self.len - 1) * layout.elem_stride + 1;
        let base = buf.as_mut_ptr();
        let outs: Vec<(Option<usize>, SendPtr<f64>, Layout)> = outs
            .iter()
            .map(|&(m, at)| {
                assert!(at + span <= buf.len());
                // SAFETY: within buf (checked).
                (m, SendPtr(unsafe { base.add(at) }), layout)
            })
            .collect();
        // SAFETY: the outputs lie in the caller's buffer; distinct outputs are the caller's to
        // keep apart.
        unsafe { self.remainders_raw(self.data.as_ptr(), get, &outs) }
    }

    /// Put what is left after slices 0..=m into slot m + 1 (the next slice's place, or the
    /// spare block after the last), so that slices 0..=m and that remainder are one matrix
    /// ([`Stack::Rows`] only). Slice m + 1 is gone after.
    pub fn rest_into_slot(&mut self, get: &(impl Fn(usize, usize) -> f64 + Sync), m: usize) {
        assert_eq!(self.layout.vec_stride, 1, "rest_into_slot: Stack::Rows only");
        let n = self.vectors * self.len;
        assert!((m + 2) * n <= self.data.len());
        let base = self.data.as_mut_ptr();
        let out = [(Some(m), SendPtr(unsafe { base.add((m + 1) * n) }), self.layout)];
        // SAFETY: slot m + 1 is disjoint from slices 0..=m, which are all this reads.
        unsafe { self.remainders_raw(base, get, &out) }
    }

    /// [`Ladder::remainders`] over raw outputs; `data` is this ladder's data.
    ///
    /// # Safety
    /// Every output valid for its layout; none overlapping slices 0..=max m or each other.
    unsafe fn remainders_raw(
        &self,
        data: *const f64,
        get: &(impl Fn(usize, usize) -> f64 + Sync),
        outs: &[(Option<usize>, SendPtr<f64>, Layout)],
    ) {
        let last = outs.iter().filter_map(|o| o.0).max().map_or(0, |m| m.min(self.levels - 1) + 1);
        let factors = factors(&self.g0);
        let data = SendPtr(data as *mut f64);
        blocks(self.vectors, |i0, i1| {
            let mut r = Vec::new();
            for run in runs(self.layout, self.len, i0, i1) {
                r.resize(run.count, 0.0);
                run.load(get, &self.g0, &factors, &self.nonfinite, &mut r);
                // SAFETY: the run's positions belong to this part alone.
                unsafe {
                    for (m, o, lay) in outs {
                        if m.is_none() {
                            run.out(o.get(), *lay).copy_from_slice(&r);
                        }
                    }
                    for s in 0..last {
                        let piece =
                            std::slice::from_raw_parts(data.get().add(self.offset[s] + run.at(self.layout)), run.count);
                        for (x, p) in r.iter_mut().zip(piece) {
                            *x -= p;
                        }
                        for (m, o, lay) in outs {
                            if *m == Some(s) {
                                run.out(o.get(), *lay).copy_from_slice(&r);
                            }
                        }
                    }
                }
            }
        });
    }
}

use crate::cpu::level3::packed::SendPtr;

/// Per vector, the scaling to its units: 2^-g0 where that is a normal double, else None
/// (`scale` in steps).
fn factors(g0: &[i32]) -> Vec<Option<f64>> {
    g0.iter().map(|&g| (-1022..=1023).contains(&-g).then(|| pow2(-g))).collect()
}

/// Entries adjacent in the layout: `count` of them, vectors i0.. at element l (`across`: rows
/// of op(A), adjacent), or elements 0.. of vector i0 (columns of op(B)).
#[derive(Clone, Copy)]
struct Run {
    count: usize,
    i0: usize,
    l: usize,
    across: bool,
}

impl Run {
    /// The vector and element of the run's entry `x`.
    #[inline]
    fn pos(&self, x: usize) -> (usize, usize) {
        if self.across {
            (self.i0 + x, self.l)
        } else {
            (self.i0, x)
        }
    }
    /// Where the run starts in a matrix laid out as `lay`.
    #[inline]
    fn at(&self, lay: Layout) -> usize {
        self.i0 * lay.vec_stride + self.l * lay.elem_stride
    }
    /// The run's entries of an output laid out as `lay` (adjacent there too).
    ///
    /// # Safety
    /// `base` valid for the layout; no other thread touches this run.
    #[inline]
    unsafe fn out<'a>(&self, base: *mut f64, lay: Layout) -> &'a mut [f64] {
        std::slice::from_raw_parts_mut(base.add(self.at(lay)), self.count)
    }
    /// The run's entries scaled to their vectors' units (0 for a vector holding Inf or NaN).
    #[inline]
    fn load(
        &self,
        get: &impl Fn(usize, usize) -> f64,
        g0: &[i32],
        factors: &[Option<f64>],
        bad: &[bool],
        r: &mut [f64],
    ) {
        for (x, y) in r.iter_mut().enumerate() {
            let (i, l) = self.pos(x);
            *y = if bad[i] {
                0.0
            } else {
                match factors[i] {
                    Some(f) => get(i, l) * f,
                    None => scale(get(i, l), -g0[i]),
                }
            };
        }
    }
}

/// The runs of vectors [i0, i1): a column of the block at a time where vectors are adjacent
/// (vec_stride 1), else a vector at a time.
fn runs(layout: Layout, len: usize, i0: usize, i1: usize) -> impl Iterator<Item = Run> {
    let across = layout.vec_stride == 1;
    let count = if across { len } else { i1 - i0 };
    (0..count).map(move |x| {
        if across {
            Run { count: i1 - i0, i0, l: x, across }
        } else {
            Run { count: len, i0: i0 + x, l: 0, across }
        }
    })
}

/// Blocks of vectors [i0, i1) spread over the pool's threads.
fn blocks(vectors: usize, f: impl Fn(usize, usize) + Sync + Send) {
    let threads = crate::cpu::threads::nthreads();
    let parts = vectors.div_ceil(16).min(threads * 4).max(1);
    crate::cpu::threads::for_each_part(threads, parts, |part| f(part * vectors / parts, (part + 1) * vectors / parts));
}

/// x rounded to the nearest integer, ties to even (|x| <= 2^51; the default rounding mode does
/// the work: adding 1.5 * 2^52 leaves no fraction bits).
#[inline]
fn round_even(x: f64) -> f64 {
    const M: f64 = 6755399441055744.0;
    (x + M) - M
}

/// Sum of magnitudes and largest magnitude of `v`, in eight lanes (any order is as good for a
/// bound: [`sum_up`] covers every order).
#[inline]
fn abs_sum_max(v: &[f64]) -> (f64, f64) {
    let (mut s, mut m) = ([0.0f64; 8], [0.0f64; 8]);
    let mut chunks = v.chunks_exact(8);
    for c in &mut chunks {
        for x in 0..8 {
            s[x] += c[x].abs();
            m[x] = m[x].max(c[x].abs());
        }
    }
    for (x, y) in chunks.remainder().iter().enumerate() {
        s[x] += y.abs();
        m[x] = m[x].max(y.abs());
    }
    (s.iter().sum(), m.iter().fold(0.0, |a: f64, &b| a.max(b)))
}

/// Cut `vectors` vectors of length `len` (element l of vector i is `get(i, l)`) into a
/// [`Ladder`] of `levels` slices of `bits`-bit integers placed as `stack` says, storing the
/// first `stored` of them. Blocks of
/// vectors are spread over the pool's threads and walked in runs adjacent in memory, so the
/// cut vectorizes.
pub fn ladder(
    get: &(impl Fn(usize, usize) -> f64 + Sync),
    vectors: usize,
    len: usize,
    bits: u32,
    (levels, stored): (usize, usize),
    stack: Stack,
) -> Ladder {
    let bits = bits.clamp(1, 50);
    let levels = levels.max(1);
    let n = vectors * len;
    let (layout, offset, size) = match stack {
        Stack::Rows => {
            (Layout { vec_stride: 1, elem_stride: vectors }, (0..levels).map(|s| s * n).collect(), (levels + 1) * n)
        }
        Stack::Columns => (
            Layout { vec_stride: levels * len, elem_stride: 1 },
            (0..levels).map(|s| (levels - 1 - s) * len).collect(),
            levels * n,
        ),
    };
    let mut lad = Ladder {
        bits,
        levels,
        vectors,
        len,
        layout,
        offset,
        g0: vec![0; vectors],
        data: Work::take(size),
        norm: vec![0.0; levels * vectors],
        rest: vec![0.0; levels * vectors],
        total: vec![0.0; vectors],
        nonfinite: vec![false; vectors],
        deep: vec![false; vectors],
        stored: 0,
    };
    // Pass 1: each vector's largest and smallest non-zero magnitude, its unit, whether it holds
    // Inf or NaN.
    {
        let (g0p, nfp, deepp) =
            (SendPtr(lad.g0.as_mut_ptr()), SendPtr(lad.nonfinite.as_mut_ptr()), SendPtr(lad.deep.as_mut_ptr()));
        blocks(vectors, |i0, i1| {
            let mut mu = vec![0.0f64; i1 - i0];
            let mut least = vec![f64::INFINITY; i1 - i0];
            let mut bad = vec![false; i1 - i0];
            for run in runs(layout, len, i0, i1) {
                for x in 0..run.count {
                    let (i, l) = run.pos(x);
                    let v = get(i, l);
                    bad[i - i0] |= !v.is_finite();
                    mu[i - i0] = mu[i - i0].max(v.abs());
                    if v != 0.0 {
                        least[i - i0] = least[i - i0].min(v.abs());
                    }
                }
            }
            for v in 0..i1 - i0 {
                let g0 = if bad[v] || mu[v] == 0.0 { 0 } else { ceil_exp(mu[v]) - bits as i32 };
                // SAFETY: vector i0 + v belongs to this part.
                unsafe {
                    *g0p.get().add(i0 + v) = g0;
                    *nfp.get().add(i0 + v) = bad[v];
                    *deepp.get().add(i0 + v) = least[v].is_finite() && ceil_exp(least[v]) - g0 < -499;
                }
            }
        });
    }
    // Pass 2: the slices (the first `stored`), and every slice's norm and remainder bound.
    lad.cut(get, stored.min(levels), true);
    lad
}

impl Ladder {
    /// Make sure slices 0..upto are stored (a ladder is cut storing only the slices a call
    /// usually multiplies; the bounds cover all `levels`).
    pub fn store(&mut self, get: &(impl Fn(usize, usize) -> f64 + Sync), upto: usize) {
        if upto > self.stored {
            self.cut(get, upto.min(self.levels), false);
        }
    }

    /// The cut's second pass: slices self.stored..store written; with `bounds`, every slice's
    /// norm and remainder bound and the vectors' totals recorded too.
    fn cut(&mut self, get: &(impl Fn(usize, usize) -> f64 + Sync), store: usize, bounds: bool) {
        let (levels, vectors, len, layout, from) = (self.levels, self.vectors, self.len, self.layout, self.stored);
        let factors = factors(&self.g0);
        let (g0, bad, offset) = (&self.g0, &self.nonfinite, &self.offset);
        let (datap, normp, restp, totalp) = (
            SendPtr(self.data.as_mut_ptr()),
            SendPtr(self.norm.as_mut_ptr()),
            SendPtr(self.rest.as_mut_ptr()),
            SendPtr(self.total.as_mut_ptr()),
        );
        let step = self.bits as i32 + 1;
        let last = if bounds { levels } else { store };
        let ups: Vec<f64> = (0..levels).map(|s| pow2(s as i32 * step)).collect();
        let units: Vec<f64> = (0..levels).map(|s| pow2(-(s as i32) * step)).collect();
        blocks(vectors, |i0, i1| {
            let w = i1 - i0;
            // Per vector of the block: total, then per slice norm and rest ([s * w + v]).
            let (mut total, mut norm, mut rest) = (vec![0.0f64; w], vec![0.0f64; levels * w], vec![0.0f64; levels * w]);
            let (mut r, mut spare) = (Vec::new(), Vec::new());
            for run in runs(layout, len, i0, i1) {
                r.resize(run.count, 0.0);
                run.load(get, g0, &factors, bad, &mut r);
                if bounds {
                    if run.across {
                        for (t, x) in total.iter_mut().zip(&r) {
                            *t += x.abs();
                        }
                    } else {
                        total[run.i0 - i0] += abs_sum_max(&r).0;
                    }
                }
                for s in 0..last {
                    // Slice s's unit is 2^(-s (bits + 1)) here: r / unit is exact (a power of
                    // two, far from the exponent range's ends), its rounding q has |q| <= 2^bits
                    // (the remainder is at most half the previous unit), and r - q * unit is
                    // exact by Sterbenz's lemma (or q = 0).
                    let out: &mut [f64] = if s >= from && s < store {
                        // SAFETY: the run's positions belong to this part alone.
                        unsafe { run.out(datap.get().add(offset[s]), layout) }
                    } else {
                        spare.resize(run.count, 0.0);
                        &mut spare
                    };
                    let (up, unit) = (ups[s], units[s]);
                    for (x, o) in r.iter_mut().zip(out.iter_mut()) {
                        let piece = round_even(*x * up) * unit;
                        *x -= piece;
                        *o = piece;
                    }
                    if !bounds {
                        continue;
                    }
                    if run.across {
                        let (ns, rs) = (&mut norm[s * w..(s + 1) * w], &mut rest[s * w..(s + 1) * w]);
                        for ((nv, rv), (p, x)) in ns.iter_mut().zip(rs.iter_mut()).zip(out.iter().zip(&r)) {
                            *nv += p.abs();
                            *rv = rv.max(x.abs());
                        }
                    } else {
                        let v = s * w + run.i0 - i0;
                        norm[v] += abs_sum_max(out).0;
                        rest[v] = rest[v].max(abs_sum_max(&r).1);
                    }
                }
            }
            if !bounds {
                return;
            }
            for v in 0..w {
                let i = i0 + v;
                // SAFETY: vector i belongs to this part.
                unsafe {
                    *totalp.get().add(i) = sum_up(total[v], len);
                    for s in 0..levels {
                        *normp.get().add(s * vectors + i) = sum_up(norm[s * w + v], len);
                        *restp.get().add(s * vectors + i) = rest[s * w + v];
                    }
                }
            }
        });
        self.stored = self.stored.max(store);
    }
}

/// s as hi + lo: hi the double nearest s (an integer), lo the double nearest s - hi (so
/// |lo - (s - hi)| <= u |lo|). One hardware conversion each where s fits in 63 bits.
#[inline]
fn split_i128(s: i128) -> (f64, f64) {
    if let Ok(v) = i64::try_from(s) {
        if v.unsigned_abs() < 1 << 62 {
            let hi = v as f64;
            return (hi, (v - hi as i64) as f64);
        }
    }
    let hi = s as f64;
    (hi, (s - hi as i128) as f64)
}

/// The smaller of the gaps from the finite, non-zero double r to its two neighbours.
#[inline]
pub fn ulp_min(r: f64) -> f64 {
    let a = r.abs();
    if a == 0.0 {
        return pow2(-1074);
    }
    let up = f64::from_bits(a.to_bits() + 1) - a;
    let down = a - f64::from_bits(a.to_bits() - 1);
    up.min(down)
}

#[inline]
fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    (s, (a - (s - bb)) + (b - bb))
}

/// One element of C from the fast path, certified or refused. Its exact value is
/// z = alpha * X + beta * c with X = s * 2^unit + tail * 2^e, where s is the exact sum of the
/// computed levels (an integer), `t` the computed rest of the product, within `t_err` of the
/// true rest (both in units of 2^e). Returns the double r nearest to the computed value when
/// that is provably faithful (|z - r| below the gap to r's nearer neighbour) or, with
/// `nearest`, provably the double nearest to z (below half that gap); None where it cannot be
/// shown (the caller then computes the element exactly). Every rounding of the steps here is
/// bounded, and results near the ends of the exponent range are refused, so no input makes the
/// guarantee fail silently. (One term of [`certify_sum`].)
#[allow(clippy::too_many_arguments)]
#[inline]
pub fn certify(
    s: i128,
    unit: i32,
    t: f64,
    t_err: f64,
    e: i32,
    alpha: f64,
    beta: f64,
    c: f64,
    nearest: bool,
) -> Option<f64> {
    certify_sum([Term { s, t, t_err, coef: alpha }], unit, e, [(beta, c)], nearest)
}

/// One product of an element's sum in [`certify_sum`]: coef * (s * 2^unit + t * 2^e), the rest
/// t within t_err of the true rest (units of 2^e).
#[derive(Clone, Copy, Debug)]
pub struct Term {
    pub s: i128,
    pub t: f64,
    pub t_err: f64,
    pub coef: f64,
}

/// [`certify`] for a sum of P products and P scaled values of C:
/// z = sum_p coef_p X_p + sum_p beta_p c_p, with `old` = (beta_p, c_p). P = 1 is DGEMM's
/// alpha*X + beta*c; P = 2 is one part of a complex element, e.g. Re z = ar Xr - ai Xi +
/// br cr - bi ci (ZGEMM as real products, `plan::accurate::zgemm`).
#[inline]
pub fn certify_sum<const P: usize>(
    x: [Term; P],
    unit: i32,
    e: i32,
    old: [(f64, f64); P],
    nearest: bool,
) -> Option<f64> {
    // Results near the exponent range's ends are refused (the exact path knows about
    // subnormals and overflow): overflow shows as a term past 1e300, underflow in a step costs
    // at most 2^-1074 (the slack below), far under the gap of a result above 2^-600.
    const LOW: f64 = 1.0 / (1u128 << 100) as f64 / (1u128 << 100) as f64 / (1u128 << 100) as f64; // 2^-300

    // a * x = p + q exactly (TwoProduct; a = 1, the usual alpha, needs no FMA).
    let two_prod = |a: f64, x: f64| {
        if a == 1.0 {
            (x, 0.0)
        } else {
            let p = a * x;
            (p, a.mul_add(x, -p))
        }
    };
    // Per product: coef*levels' high part, coef*rest and beta*c exactly as pairs (large p, small
    // q); coef*lo (of the order of an ulp of the levels) rounded.
    let (mut s, mut w, mut small, mut tail, mut lo_err) = (0.0f64, 0.0f64, 0.0f64, 0.0f64, 0.0f64);
    let mut p2s = [0.0f64; P];
    for p in 0..P {
        let Term { s: levels, t, t_err, coef } = x[p];
        let (hi, lo) = split_i128(levels);
        let (x1, x2, x3) = (scale(hi, unit), scale(lo, unit), scale(t, e));
        let (p1, q1) = two_prod(coef, x1);
        let (p3, q3) = two_prod(coef, x3);
        let (p4, q4) = if old[p].0 == 0.0 { (0.0, 0.0) } else { two_prod(old[p].0, old[p].1) };
        p2s[p] = coef * x2;
        if !(p1.abs() < 1e300 && p4.abs() < 1e300 && p3.abs() < 1e300) {
            return None;
        }
        // The large terms added by TwoSum (exact), so that only small terms meet a rounding:
        // where the rest nearly cancels the levels, the error stays a share of the result's ulp.
        let (s1, e1) = if p == 0 { (p1, 0.0) } else { two_sum(s, p1) };
        let (s2, e2) = two_sum(s1, p4);
        let (s3, e3) = two_sum(s2, p3);
        s = s3;
        w += q1 + q3 + q4 + e1 + e2 + e3;
        small += q1.abs() + q3.abs() + q4.abs() + e1.abs() + e2.abs() + e3.abs();
        tail += coef.abs() * scale(t_err, e);
        lo_err += if coef == 1.0 { 1.01 } else { 2.01 } * U * p2s[p].abs();
    }
    for p2 in p2s {
        w += p2;
        small += p2.abs();
    }
    let (r, e_last) = two_sum(s, w);
    if !r.is_finite() || r.abs() < LOW * LOW {
        return None;
    }
    // |z - (r + e_last)|: the rests' errors, the roundings of lo (and of coef*lo), and of the
    // sum w of 7P - 1 small terms (one of them 0: the first TwoSum is skipped); underflow in any
    // of those steps costs at most 2^-1074 each (the slack, 2^-1020 per product, a normal
    // number: subnormal operands slow every step down).
    let terms = (7 * P - 1) as f64;
    let gamma_w = (terms - 1.0) * U / (1.0 - (terms - 1.0) * U) * (1.0 + 4.0 * U);
    let err = tail + lo_err + gamma_w * small + P as f64 * pow2(-1020);
    let total = (e_last.abs() + err) * (1.0 + 16.0 * U);
    let gap = ulp_min(r);
    let limit = if nearest { gap * 0.5 } else { gap };
    (total < limit).then_some(r)
}

/// A work buffer of the accurate GEMM, taken from a small pool and given back when dropped.
/// Why: an accurate call at n = 1024 works through about 150 MB of slices and outputs; fresh
/// allocations fault every page in again on each call (a fifth of the call's time on this
/// project's VM), so the buffers of the last calls are kept, up to `HYBLAS_OZAKI_KEEP_MB`
/// (default 512) in all. A taken buffer's contents are left from its last use: every user
/// writes all it reads.
pub struct Work(Vec<f64>);

static POOL: std::sync::Mutex<Vec<Vec<f64>>> = std::sync::Mutex::new(Vec::new());

fn keep_bytes() -> usize {
    static KEEP: once_cell::sync::Lazy<usize> =
        once_cell::sync::Lazy::new(|| crate::config::threshold("HYBLAS_OZAKI_KEEP_MB", 512) << 20);
    *KEEP
}

impl Work {
    /// A buffer of `len` doubles (contents unspecified).
    pub fn take(len: usize) -> Work {
        let found = {
            let mut pool = POOL.lock().unwrap_or_else(|e| e.into_inner());
            // The smallest kept buffer that is large enough.
            let best = (0..pool.len()).filter(|&x| pool[x].capacity() >= len).min_by_key(|&x| pool[x].capacity());
            best.map(|x| pool.swap_remove(x))
        };
        let mut v = found.unwrap_or_default();
        if v.len() >= len {
            v.truncate(len);
        } else {
            v.resize(len, 0.0);
        }
        Work(v)
    }
}

impl Drop for Work {
    fn drop(&mut self) {
        let v = std::mem::take(&mut self.0);
        if v.capacity() == 0 {
            return;
        }
        let mut pool = POOL.lock().unwrap_or_else(|e| e.into_inner());
        pool.push(v);
        // Over the cap: drop the smallest first, keeping the large ones a call reuses.
        pool.sort_by_key(|b| std::cmp::Reverse(b.capacity()));
        let mut bytes = 0usize;
        pool.retain(|b| {
            bytes += b.capacity() * 8;
            bytes <= keep_bytes()
        });
    }
}

impl std::ops::Deref for Work {
    type Target = [f64];
    fn deref(&self) -> &[f64] {
        &self.0
    }
}

impl std::ops::DerefMut for Work {
    fn deref_mut(&mut self) -> &mut [f64] {
        &mut self.0
    }
}

impl std::fmt::Debug for Work {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Work({} doubles)", self.0.len())
    }
}
