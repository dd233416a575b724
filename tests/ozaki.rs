//! The accurate GEMM's error-free splitting and exact summation (`hyblas::cpu::ozaki`, issue 49), checked
//! against exact oracles: every vector equals the sum of its scaled slices exactly (big
//! integers in units of 2^-1074), every entry is an integer within the slice's bits, the CPU
//! engine's DGEMM of two slices equals their integer product exactly, and the slice products,
//! scaled and summed in big integers, give A*B exactly. Inputs: exponent spreads of 2^0 to
//! 2^±300 within a vector, subnormals, values near the largest double, zeros, mixed signs.
mod common;

use common::{cblas_dgemm, lognormal, seed_pair, Rng};
use hyblas::cpu::ozaki::{slice_bits, split, Exact, Layout, Slices};
use hyblas::plan::accurate::Rounding;
use num_bigint::BigInt;
use std::os::raw::c_int;

/// x * 2^1074 as a big integer (exact for every finite double).
fn units(x: f64) -> BigInt {
    let bits = x.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i64;
    let frac = (bits & ((1u64 << 52) - 1)) as i64;
    let (mant, exp) = if biased == 0 { (frac, -1074) } else { (frac | (1 << 52), biased - 1075) };
    let v = BigInt::from(mant) << (exp + 1074) as usize;
    if x.is_sign_negative() {
        -v
    } else {
        v
    }
}

/// v * 2^(e + shift) for an integer-valued v (shift keeps the exponent non-negative).
fn scaled(v: f64, e: i32, shift: i32) -> BigInt {
    assert_eq!(v, v.trunc(), "slice entry {v} is not an integer");
    let b = BigInt::from(v as i64);
    let p = e + shift;
    assert!(p >= 0);
    b << p as usize
}

/// Vectors with entries (U - 0.5) * 2^(spread * (U' - 0.5) * 2) around 2^center: a spread of
/// 300 puts entries of one vector between about 2^(center-300) and 2^(center+300).
fn spread_vec(rng: &mut Rng, len: usize, center: i32, spread: i32) -> Vec<f64> {
    (0..len)
        .map(|_| {
            let e = center + ((rng.unit() - 0.5) * 2.0 * spread as f64).round() as i32;
            let m = rng.unit() - 0.5;
            m * 2f64.powi(e.clamp(-1000, 1000)) * if e > 1000 { 2f64.powi(e - 1000) } else { 1.0 }
        })
        .collect()
}

fn cases(rng: &mut Rng, len: usize) -> Vec<Vec<f64>> {
    let mut v = vec![
        spread_vec(rng, len, 0, 0),
        spread_vec(rng, len, 0, 30),
        spread_vec(rng, len, 0, 300),
        spread_vec(rng, len, 700, 300),
        spread_vec(rng, len, -700, 300),
        spread_vec(rng, len, 1020, 3),
        vec![0.0; len],
    ];
    // Subnormals with a normal or two among them; alternating huge terms.
    let mut sub: Vec<f64> = (0..len).map(|i| (i as f64 + 1.0) * 5e-324 * if i % 2 == 0 { 1.0 } else { -3.0 }).collect();
    sub[len / 2] = 1e-300;
    v.push(sub);
    v.push((0..len).map(|i| if i % 2 == 0 { 1e300 } else { -1e300 * (1.0 + f64::EPSILON) }).collect());
    v
}

/// Each vector is exactly the sum of its scaled slices; entries are integers within the bits.
fn check_exact(s: &Slices, get: &dyn Fn(usize, usize) -> f64) {
    let n = s.vectors * s.len;
    let lim = 2f64.powi(s.bits as i32);
    for i in 0..s.vectors {
        for l in 0..s.len {
            let mut sum = BigInt::from(0);
            for k in 0..s.count {
                let v = s.data[k * n + i * s.layout.vec_stride + l * s.layout.elem_stride];
                assert!(v.abs() <= lim, "slice {k} vector {i}: |{v}| > 2^{}", s.bits);
                sum += scaled(v, s.exp(k, i), 1074);
            }
            assert_eq!(sum, units(get(i, l)), "vector {i} element {l}: the slices do not add up to {:e}", get(i, l));
        }
    }
}

#[test]
fn every_vector_is_the_exact_sum_of_its_slices() {
    let mut rng = Rng::new(3);
    for len in [1usize, 7, 64, 1000] {
        let vs = cases(&mut rng, len);
        // As rows of an m x len matrix (column-major) and as columns of a len x n one.
        let m = vs.len();
        let get = |i: usize, l: usize| vs[i][l];
        let bits = slice_bits(len);
        let (rows, left) = split(get, m, len, bits, Layout { vec_stride: 1, elem_stride: m }, None);
        assert!(left.iter().all(|&x| x == 0.0));
        check_exact(&rows, &get);
        let (cols, _) = split(get, m, len, bits, Layout { vec_stride: len, elem_stride: 1 }, None);
        check_exact(&cols, &get);
        // Slices per vector: about (range + 53) / bits; the 2^±300 spreads need more than the
        // plain ones, which take ceil(53 / bits) or one more.
        let used = |i: usize| {
            (0..rows.count).filter(|&s| rows.slice(s).iter().skip(i).step_by(m).take(len).any(|&x| x != 0.0)).count()
        };
        assert!(used(0) <= (53 / bits as usize) + 2, "plain vector: {} slices of {bits} bits", used(0));
        if len >= 64 {
            assert!(used(2) > used(0), "a 2^±300 spread took no more slices than a plain vector");
        }
    }
}

#[test]
fn a_vector_with_inf_or_nan_is_marked_not_split() {
    let vs = [vec![1.0, f64::INFINITY, 2.0], vec![1.0, 2.0, 3.0], vec![f64::NAN, 0.0, 0.0]];
    let (s, _) = split(|i, l| vs[i][l], 3, 3, slice_bits(3), Layout { vec_stride: 1, elem_stride: 3 }, None);
    assert_eq!(s.nonfinite, vec![true, false, true]);
    for k in 0..s.count {
        // Vector i's elements at i, i + 3, i + 6 (rows of a 3 x 3 column-major slice).
        let zero = |i: usize| s.slice(k).iter().skip(i).step_by(3).all(|&x| x == 0.0);
        assert!(zero(0) && zero(2));
    }
    check_exact(&Slices { nonfinite: vec![false; 3], ..s.clone() }, &|i, l| if i == 1 { vs[1][l] } else { 0.0 });
}

#[test]
fn a_capped_split_reports_what_it_left_out() {
    let mut rng = Rng::new(5);
    let v = spread_vec(&mut rng, 100, 0, 300);
    let bits = slice_bits(100);
    let (s, left) = split(|_, l| v[l], 1, 100, bits, Layout { vec_stride: 100, elem_stride: 1 }, Some(2));
    assert_eq!(s.count, 2);
    let mu = v.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    assert!(left[0] > 0.0 && left[0] <= mu * 2f64.powi(1 - 2 * bits as i32), "left {:e} of max {mu:e}", left[0]);
}

/// Slice products on the CPU engine are exact (any order), and their scaled sum is A*B exactly.
#[test]
fn slice_products_are_exact_and_sum_to_the_exact_product() {
    let mut rng = Rng::new(11);
    for (m, n, k) in [(5usize, 4usize, 300usize), (9, 3, 1024), (3, 6, 17)] {
        let rows = cases(&mut rng, k);
        let a: Vec<Vec<f64>> = (0..m).map(|i| rows[i % rows.len()].clone()).collect();
        let cols = cases(&mut rng, k);
        let b: Vec<Vec<f64>> = (0..n).map(|j| cols[(j + 3) % cols.len()].clone()).collect();
        let bits = slice_bits(k);
        let (sa, _) = split(|i, l| a[i][l], m, k, bits, Layout { vec_stride: 1, elem_stride: m }, None);
        let (sb, _) = split(|j, l| b[j][l], n, k, bits, Layout { vec_stride: k, elem_stride: 1 }, None);
        // Exact product in units of 2^-2148.
        let mut want = vec![BigInt::from(0); m * n];
        for i in 0..m {
            for j in 0..n {
                for l in 0..k {
                    want[i + j * m] += units(a[i][l]) * units(b[j][l]);
                }
            }
        }
        let mut got = vec![BigInt::from(0); m * n];
        let mut c = vec![f64::NAN; m * n];
        for s in 0..sa.count {
            for t in 0..sb.count {
                let i32_ = |v: usize| v as c_int;
                // SAFETY: m x k, k x n and m x n column-major buffers.
                unsafe {
                    cblas_dgemm(
                        102,
                        111,
                        111,
                        i32_(m),
                        i32_(n),
                        i32_(k),
                        1.0,
                        sa.slice(s).as_ptr(),
                        i32_(m),
                        sb.slice(t).as_ptr(),
                        i32_(k),
                        0.0,
                        c.as_mut_ptr(),
                        i32_(m),
                    )
                };
                for i in 0..m {
                    for j in 0..n {
                        let exact: i128 =
                            (0..k).map(|l| sa.slice(s)[i + l * m] as i128 * sb.slice(t)[l + j * k] as i128).sum();
                        assert_eq!(
                            c[i + j * m] as i128,
                            exact,
                            "slice product ({s},{t}) element ({i},{j}) is not exact"
                        );
                        assert!(exact.abs() < 1i128 << 53);
                        got[i + j * m] += scaled(c[i + j * m], sa.exp(s, i) + sb.exp(t, j), 2148);
                    }
                }
            }
        }
        assert_eq!(got, want, "{m}x{n}x{k}: the slice products do not sum to A*B");
    }
}

/// Whether r is the double nearest to exact (units of 2^-shift), ties to even, ±Inf past the
/// largest double's rounding boundary: |exact - r| <= ulp(r) / 2, and at a tie r's last bit is 0.
/// Checked in big integers, independently of how `Exact::round` gets there.
fn is_nearest(r: f64, exact: &BigInt, shift: i32) -> bool {
    use num_bigint::Sign;
    let unit = |x: f64, e: i32| scaled_any(x, e + shift);
    if r.is_infinite() {
        // Past (2^1024 - 2^970): the midpoint between the largest double and 2^1024.
        let bound = (BigInt::from(1) << (1024 + shift) as usize) - (BigInt::from(1) << (970 + shift) as usize);
        let mag = if exact.sign() == Sign::Minus { -exact.clone() } else { exact.clone() };
        return mag >= bound && (exact.sign() == Sign::Minus) == (r < 0.0);
    }
    let diff = exact - unit(r, 0);
    let diff2 = if diff.sign() == Sign::Minus { -diff.clone() } else { diff.clone() } * 2;
    // ulp(r): 2^(exponent of r's last bit), at least 2^-1074.
    let bits = r.abs().to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i32;
    let ulp_e = if biased == 0 { -1074 } else { biased - 1075 };
    let mut ulp = BigInt::from(1) << (ulp_e + shift) as usize;
    // Just below a power of two the doubles are twice as dense: there the nearest is within
    // half the smaller gap.
    let below = (diff.sign() == Sign::Minus) != (r < 0.0);
    if bits & ((1u64 << 52) - 1) == 0 && biased > 1 && below && diff.sign() != Sign::NoSign {
        ulp >>= 1;
    }
    if diff2 > ulp {
        return false;
    }
    // A tie must land on an even last bit (the mantissa's lowest bit 0).
    diff2 < ulp || bits & 1 == 0
}

/// v * 2^p as a big integer for any double v with v * 2^p an integer.
fn scaled_any(v: f64, p: i32) -> BigInt {
    units(v) << (p as i64 - 1074).max(0) as usize >> (1074 - p as i64).max(0) as usize
}

#[test]
fn exact_sums_round_to_the_nearest_double() {
    let mut rng = Rng::new(17);
    // Units of 2^-2148 hold every product of two doubles exactly.
    let shift = 2148;
    let prod = |x: f64, y: f64| units(x) * units(y);
    let mut acc = Exact::new();
    for case in 0..3000 {
        acc.clear();
        let mut exact = BigInt::from(0);
        let terms = 1 + (case % 9);
        for t in 0..terms {
            let e1 = ((rng.unit() - 0.5) * if case % 3 == 0 { 2000.0 } else { 60.0 }) as i32;
            let x = (rng.unit() - 0.5) * 2f64.powi(e1.clamp(-1000, 1000));
            let y = if t % 2 == 0 {
                (rng.unit() - 0.5) * 2f64.powi(((rng.unit() - 0.5) * 40.0) as i32)
            } else {
                -x * (1.0 + f64::EPSILON * (t as f64))
            };
            acc.add_product(x, y);
            exact += prod(x, y);
            if case % 5 == 0 {
                // Cancellation: the same product back with its sign flipped.
                acc.add_product(-x, y);
                exact -= prod(x, y);
            }
        }
        let r = acc.round();
        assert!(is_nearest(r, &exact, shift), "case {case}: {r:e} is not the nearest double");
    }
    // Hand cases: a tie to even, subnormal results, overflow, exact zero, a scaled sum.
    let check = |adds: &[(f64, f64)], mul: f64, want: f64| {
        let mut a = Exact::new();
        for &(x, y) in adds {
            a.add_product(x, y);
        }
        a.mul_f64(mul);
        assert_eq!(a.round().to_bits(), want.to_bits(), "{adds:?} * {mul}: {:e} vs {want:e}", a.round());
    };
    check(&[(1.0, 1.0), (f64::EPSILON / 2.0, 1.0)], 1.0, 1.0); // 1 + 2^-53: tie, to even (1)
    check(&[(1.0, 1.0), (f64::EPSILON * 1.5, 1.0)], 1.0, 1.0 + 2.0 * f64::EPSILON); // 1 + 3*2^-53: tie up to even
    check(&[(5e-324, 0.5)], 1.0, 0.0); // half the smallest subnormal: tie to even (0)
    check(&[(5e-324, 0.75)], 1.0, 5e-324);
    check(&[(1e-300, 1e-30)], 1.0, 1e-300 * 1e-30);
    check(&[(f64::MAX, 2.0), (f64::MAX, -1.0)], 1.0, f64::MAX);
    check(&[(f64::MAX, 1.5)], 1.0, f64::INFINITY);
    check(&[(3.0, 7.0), (-3.0, 7.0)], 1.0, 0.0);
    check(&[(1e300, 1e10), (1.0, 1.0)], 1e-300, 1e10);
    check(&[(1.0, 3.0)], -0.1, -0.30000000000000004);
}

/// alpha*op(A)*op(B) + beta*C exactly, in units of 2^-3222 (a product of three doubles).
#[allow(clippy::too_many_arguments)]
fn exact_gemm(
    ta: bool,
    tb: bool,
    (m, n, k): (usize, usize, usize),
    alpha: f64,
    (a, lda): (&[f64], usize),
    (b, ldb): (&[f64], usize),
    beta: f64,
    (c, ldc): (&[f64], usize),
) -> Vec<BigInt> {
    let ga = |i: usize, l: usize| if ta { a[l + i * lda] } else { a[i + l * lda] };
    let gb = |l: usize, j: usize| if tb { b[j + l * ldb] } else { b[l + j * ldb] };
    let mut out = Vec::with_capacity(m * n);
    for j in 0..n {
        for i in 0..m {
            let mut dot = BigInt::from(0);
            for l in 0..k {
                dot += units(ga(i, l)) * units(gb(l, j));
            }
            let mut v = dot * units(alpha);
            if beta != 0.0 {
                v += (units(beta) * units(c[i + j * ldc])) << 1074usize;
            }
            out.push(v);
        }
    }
    out
}

/// The accurate DGEMM against the exact oracle: every element the nearest double.
#[allow(clippy::too_many_arguments)]
fn accurate_case(
    what: &str,
    ta: bool,
    tb: bool,
    (m, n, k): (usize, usize, usize),
    alpha: f64,
    a: &[f64],
    b: &[f64],
    beta: f64,
    c0: &[f64],
) {
    let t = |x: bool| if x { hyblas::types::Trans::Trans } else { hyblas::types::Trans::No };
    // Stored shapes with one row of padding.
    let lda = if ta { k } else { m } + 1;
    let ldb = if tb { n } else { k } + 1;
    let ldc = m + 2;
    let want = exact_gemm(ta, tb, (m, n, k), alpha, (a, lda), (b, ldb), beta, (c0, ldc));
    for rounding in [Rounding::Faithful, Rounding::Nearest] {
        let mut c = c0.to_vec();
        // SAFETY: buffers sized for the shapes and leading dimensions above.
        let rep = unsafe {
            hyblas::plan::accurate::dgemm(
                rounding,
                t(ta),
                t(tb),
                m,
                n,
                k,
                alpha,
                a.as_ptr(),
                lda,
                b.as_ptr(),
                ldb,
                beta,
                c.as_mut_ptr(),
                ldc,
            )
        };
        assert_eq!(rep.ieee, 0, "{what}");
        if std::env::var("OZAKI_SHOW").is_ok() {
            eprintln!("{what} {rounding:?}: {rep:?}");
        }
        for j in 0..n {
            for i in 0..ldc {
                let got = c[i + j * ldc];
                if i >= m {
                    assert_eq!(got.to_bits(), c0[i + j * ldc].to_bits(), "{what}: padding ({i},{j}) written");
                    continue;
                }
                let w = &want[i + j * m];
                match rounding {
                    Rounding::Nearest => assert!(
                        is_nearest(got, w, 3222),
                        "{what}: ({i},{j}) = {got:e} is not the nearest double ({rep:?})"
                    ),
                    Rounding::Faithful => {
                        assert!(is_faithful(got, w, 3222), "{what}: ({i},{j}) = {got:e} is not faithful ({rep:?})")
                    }
                }
            }
        }
    }
}

/// Whether r is one of the two doubles around exact (units of 2^-shift): exact == r, or no
/// double lies strictly between them (r's neighbour toward exact is at or beyond exact). Past the
/// largest double, ±Inf and ±MAX are both faithful.
fn is_faithful(r: f64, exact: &BigInt, shift: i32) -> bool {
    use num_bigint::Sign;
    let max = scaled_any(f64::MAX, shift);
    if r.is_infinite() {
        let mag = if exact.sign() == Sign::Minus { -exact.clone() } else { exact.clone() };
        return mag > max && (exact.sign() == Sign::Minus) == (r < 0.0);
    }
    let ur = scaled_any(r, shift);
    if *exact == ur {
        return true;
    }
    // The neighbour of r toward exact.
    let toward_up = *exact > ur;
    let bits = r.to_bits();
    let next = if r == 0.0 {
        if toward_up {
            5e-324
        } else {
            -5e-324
        }
    } else if (r > 0.0) == toward_up {
        f64::from_bits(bits + 1)
    } else {
        f64::from_bits(bits - 1)
    };
    if next.is_infinite() {
        return true;
    }
    let un = scaled_any(next, shift);
    if toward_up {
        *exact <= un
    } else {
        *exact >= un
    }
}

fn padded(
    rng: &mut Rng,
    rows: usize,
    cols: usize,
    ld: usize,
    gen: &mut dyn FnMut(&mut Rng, usize) -> Vec<f64>,
) -> Vec<f64> {
    let mut v = vec![0.0; ld * cols];
    for j in 0..cols {
        let col = gen(rng, rows);
        v[j * ld..j * ld + rows].copy_from_slice(&col);
        for i in rows..ld {
            v[i + j * ld] = -7.0; // padding: never read
        }
    }
    v
}

#[test]
fn accurate_dgemm_is_correctly_rounded() {
    let mut rng = Rng::new(23);
    let (m, n, k) = (7usize, 5usize, 300usize);
    for (phi, ta, tb) in [(0.5, false, false), (2.0, true, false), (8.0, false, true), (8.0, true, true)] {
        let (ar, ac) = if ta { (k, m) } else { (m, k) };
        let (br, bc) = if tb { (n, k) } else { (k, n) };
        let a = padded(&mut rng, ar, ac, ar + 1, &mut |r, len| lognormal(r, len, phi));
        let b = padded(&mut rng, br, bc, br + 1, &mut |r, len| lognormal(r, len, phi));
        let c = padded(&mut rng, m, n, m + 2, &mut |r, len| lognormal(r, len, 1.0));
        accurate_case(&format!("phi={phi} ta={ta} tb={tb} beta=-0.5"), ta, tb, (m, n, k), 0.1, &a, &b, -0.5, &c);
        // beta = 0: C is not read (NaN there must not show).
        let nan = vec![f64::NAN; c.len()];
        let mut nan_padded = nan.clone();
        for j in 0..n {
            for i in m..m + 2 {
                nan_padded[i + j * (m + 2)] = 1.0;
            }
        }
        accurate_case(
            &format!("phi={phi} ta={ta} tb={tb} beta=0"),
            ta,
            tb,
            (m, n, k),
            1.0 / 3.0,
            &a,
            &b,
            0.0,
            &nan_padded,
        );
    }
    // Cancellation: rows of alternating huge terms that cancel, with small ones between, and
    // a column of ones (plain DGEMM returns the rounding noise of the huge terms).
    let k = 64;
    let mut a = vec![0.0; (m + 1) * k];
    for i in 0..m {
        for l in 0..k {
            let big = 2f64.powi(200 + i as i32 * 10) * (1.0 + l as f64 * f64::EPSILON);
            a[i + l * (m + 1)] = match l % 3 {
                0 => big,
                1 => -big,
                _ => rng.unit() * 1e-10,
            };
        }
    }
    let b = padded(&mut rng, k, n, k + 1, &mut |_, len| vec![1.0; len]);
    let c = vec![0.0; (m + 2) * n];
    accurate_case("cancellation", false, false, (m, n, k), 1.0, &a, &b, 0.0, &c);
    // Subnormal results, and entries near the largest double (exact sums that plain DGEMM
    // would overflow on the way).
    let a = padded(&mut rng, m, k, m + 1, &mut |r, len| lognormal(r, len, 0.5).iter().map(|x| x * 1e-300).collect());
    let b = padded(&mut rng, k, n, k + 1, &mut |r, len| lognormal(r, len, 0.5).iter().map(|x| x * 1e-15).collect());
    accurate_case("subnormal", false, false, (m, n, k), 1.0, &a, &b, 0.0, &c);
    let a = padded(&mut rng, m, k, m + 1, &mut |_, len| {
        (0..len).map(|l| if l % 2 == 0 { 1e308 } else { -1e308 }).collect()
    });
    let b = padded(&mut rng, k, n, k + 1, &mut |r, len| (0..len).map(|_| 1.0 + r.unit() * 1e-3).collect());
    accurate_case("near overflow", false, false, (m, n, k), 0.5, &a, &b, 0.0, &c);
}

#[test]
fn accurate_dgemm_puts_inf_and_nan_where_dgemm_does() {
    let (m, n, k) = (3usize, 3usize, 4usize);
    let mut a = vec![1.0; m * k];
    a[1 + 2 * m] = f64::INFINITY; // row 1
    let mut b = vec![0.5; k * n];
    b[3 + 2 * k] = f64::NAN; // column 2
    let mut c = vec![2.0; m * n];
    c[0] = f64::INFINITY; // (0, 0), with beta != 0
    let mut want = c.clone();
    for j in 0..n {
        for i in 0..m {
            let dot: f64 = (0..k).map(|l| a[i + l * m] * b[l + j * k]).sum();
            want[i + j * m] = 1.5 * dot + 0.25 * c[i + j * m];
        }
    }
    let rep = unsafe {
        hyblas::plan::accurate::dgemm(
            Rounding::Faithful,
            hyblas::types::Trans::No,
            hyblas::types::Trans::No,
            m,
            n,
            k,
            1.5,
            a.as_ptr(),
            m,
            b.as_ptr(),
            k,
            0.25,
            c.as_mut_ptr(),
            m,
        )
    };
    // Row 1 (3 elements), column 2 (3, one shared with row 1) and (0, 0): 6 elements by IEEE.
    assert_eq!(rep.ieee, 6);
    for (x, y) in c.iter().zip(&want) {
        assert!(x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()), "{c:?} vs {want:?}");
    }
    assert!(c[1].is_infinite() && c[2 * m].is_nan() && c[0].is_infinite() && c[4].is_infinite());
}

/// Rows of op(A) and columns of op(B) whose entries spread over 2^0..2^±300 around 2^0 and
/// 2^±600 (the exponent spreads within a row), every element against the oracle.
#[test]
fn accurate_dgemm_handles_wide_exponent_spreads() {
    let mut rng = Rng::new(31);
    let (m, n, k) = (6usize, 5usize, 200usize);
    for (spread, center) in [(0, 0), (30, 0), (300, 0), (300, 600), (300, -600)] {
        let a = padded(&mut rng, m, k, m + 1, &mut |r, len| spread_vec(r, len, center, spread));
        let b = padded(&mut rng, k, n, k + 1, &mut |r, len| spread_vec(r, len, -center, spread));
        let c = padded(&mut rng, m, n, m + 2, &mut |r, len| lognormal(r, len, 1.0));
        accurate_case(&format!("spread 2^±{spread} at 2^{center}"), false, false, (m, n, k), 1.0, &a, &b, 0.25, &c);
    }
}

/// The seed's A*inv(A), n = 64 (every element) and 500 (a sample of 1500 elements, the exact
/// oracle being a big-integer dot product each), in both roundings.
#[test]
fn accurate_dgemm_on_the_seeds_matrices() {
    let mut rng = Rng::new(41);
    let n = 64;
    let (a, b) = seed_pair(&mut rng, n);
    // accurate_case pads: copy into its layout.
    let pad = |x: &[f64], ld: usize| {
        let mut v = vec![-7.0; ld * n];
        for j in 0..n {
            v[j * ld..j * ld + n].copy_from_slice(&x[j * n..(j + 1) * n]);
        }
        v
    };
    let c = vec![0.0; (n + 2) * n];
    accurate_case("seed n=64", false, false, (n, n, n), 1.0, &pad(&a, n + 1), &pad(&b, n + 1), 0.0, &c);
    for n in [500, 1000] {
        let (a, b) = seed_pair(&mut rng, n);
        for rounding in [Rounding::Faithful, Rounding::Nearest] {
            let mut c = vec![f64::NAN; n * n];
            let rep = unsafe {
                hyblas::plan::accurate::dgemm(
                    rounding,
                    hyblas::types::Trans::No,
                    hyblas::types::Trans::No,
                    n,
                    n,
                    n,
                    1.0,
                    a.as_ptr(),
                    n,
                    b.as_ptr(),
                    n,
                    0.0,
                    c.as_mut_ptr(),
                    n,
                )
            };
            // Plain DGEMM's error on the same product, for contrast (the seed's point).
            let mut plain = vec![0.0; n * n];
            unsafe {
                cblas_dgemm(
                    102,
                    111,
                    111,
                    n as c_int,
                    n as c_int,
                    n as c_int,
                    1.0,
                    a.as_ptr(),
                    n as c_int,
                    b.as_ptr(),
                    n as c_int,
                    0.0,
                    plain.as_mut_ptr(),
                    n as c_int,
                )
            };
            let mut differ = 0;
            for t in 0..1500 {
                let at = if t < 100 { (t * 5) * (n + 1) } else { (rng.next_u64() % (n * n) as u64) as usize };
                let (i, j) = (at % n, at / n);
                let mut exact = BigInt::from(0);
                for l in 0..n {
                    exact += units(a[i + l * n]) * units(b[l + j * n]);
                }
                let got = c[at];
                let ok = match rounding {
                    Rounding::Nearest => is_nearest(got, &exact, 2148),
                    Rounding::Faithful => is_faithful(got, &exact, 2148),
                };
                assert!(ok, "seed n={n} {rounding:?}: ({i},{j}) = {got:e} ({rep:?})");
                differ += usize::from(plain[at].to_bits() != got.to_bits());
            }
            assert!(differ > 100, "plain DGEMM agreed with the accurate result on {} of 1500 elements", 1500 - differ);
            assert!(rep.levels >= 1, "{rep:?}");
        }
    }
}

/// An element whose computed rest rounds to the other side of a midpoint: the exact value is
/// 1.5 + 2^-53 + 2^-80 (nearest: 1.5 + 2^-52), but the rest's FP64 sum (the entries below the
/// first slice) loses 2^-79 on the way, in the product or the sum, and lands at
/// 1.5 + 2^-53 - 2^-80, whose nearest double is 1.5. Only the rest's error bound tells the two
/// apart: certification must refuse, and the exact path gives 1.5 + 2^-52. (Dropping the bound's
/// gamma makes this fail.)
#[test]
fn a_rest_that_rounds_across_a_midpoint_is_not_certified() {
    let p = |e: i32| 2f64.powi(e);
    let a = [1.5, p(-53), p(-25) + p(-40), -(p(-25) + p(-40) + p(-64)), -p(-80)];
    let b = [1.0, 1.0, 1.0 + p(-39), 1.0, 1.0];
    let mut c = [0.0f64];
    let rep = unsafe {
        hyblas::plan::accurate::dgemm(
            Rounding::Nearest,
            hyblas::types::Trans::No,
            hyblas::types::Trans::No,
            1,
            1,
            5,
            1.0,
            a.as_ptr(),
            1,
            b.as_ptr(),
            5,
            0.0,
            c.as_mut_ptr(),
            1,
        )
    };
    assert_eq!(c[0], 1.5 + p(-52), "{rep:?}");
    assert_eq!(rep.exact, 1, "{rep:?}");
    let mut exact = BigInt::from(0);
    for l in 0..5 {
        exact += units(a[l]) * units(b[l]);
    }
    assert!(is_nearest(c[0], &exact, 2148));
}

/// `Exact::set_dot` (the exact elements' fixed window) gives the nearest double of the exact dot
/// product, on vectors spread over 2^0..2^±300 and with subnormals and cancellation, and agrees
/// with term-by-term `add_product`.
#[test]
fn exact_dot_in_a_window_rounds_to_the_nearest() {
    let mut rng = Rng::new(53);
    let len = 64;
    let mut acc = Exact::new();
    let mut one = Exact::new();
    let xs = cases(&mut rng, len);
    for x in &xs {
        for y in &xs {
            if x.iter().chain(y.iter()).any(|v| !v.is_finite()) {
                continue;
            }
            acc.set_dot(len, |t| (x[t], y[t]));
            one.clear();
            let mut exact = BigInt::from(0);
            for t in 0..len {
                one.add_product(x[t], y[t]);
                exact += units(x[t]) * units(y[t]);
            }
            let r = acc.round();
            assert!(is_nearest(r, &exact, 2148), "set_dot gave {r:e}");
            assert_eq!(r.to_bits(), one.round().to_bits());
        }
    }
    // Exact cancellation to zero, and one negative result.
    acc.set_dot(2, |t| [(1e300, 1e-300), (-1e300, 1e-300)][t]);
    assert_eq!(acc.round(), 0.0);
    acc.set_dot(2, |t| [(3.0, 1.0), (-5.0, 1.0)][t]);
    assert_eq!(acc.round(), -2.0);
    // A sum that crosses zero at every other term (each term a full 106-bit product, 2^±40
    // apart), ending in a tiny nonzero value: the window's carries in both directions.
    let len = 4001;
    let big = |t: usize| (1.0 + (t as f64) * f64::EPSILON * 3.0) * 2f64.powi((t % 81) as i32 - 40);
    let y = 1.0 - f64::EPSILON / 2.0;
    let term = |t: usize| {
        if t == len - 1 {
            (3.0 * 2f64.powi(-900), y)
        } else if t.is_multiple_of(2) {
            (big(t / 2), y)
        } else {
            (-big(t / 2), y)
        }
    };
    acc.set_dot(len, term);
    let mut exact = BigInt::from(0);
    for t in 0..len {
        let (a, b) = term(t);
        exact += units(a) * units(b);
    }
    let r = acc.round();
    assert!(is_nearest(r, &exact, 2148), "set_dot gave {r:e}");
    assert_eq!(r, 3.0 * 2f64.powi(-900) * y);
}

/// ZGEMM's alpha*op(A)*op(B) + beta*C exactly, [re, im] per element in units of 2^-3222.
/// Complex numbers as [re, im] pairs; `t` 0 none, 1 transpose, 2 conjugate transpose.
#[allow(clippy::too_many_arguments)]
fn exact_zgemm(
    (ta, tb): (u8, u8),
    (m, n, k): (usize, usize, usize),
    alpha: [f64; 2],
    (a, lda): (&[f64], usize),
    (b, ldb): (&[f64], usize),
    beta: [f64; 2],
    (c, ldc): (&[f64], usize),
) -> Vec<[BigInt; 2]> {
    let get = |v: &[f64], t: u8, ld: usize, r: usize, s: usize| {
        let at = 2 * if t == 0 { r + s * ld } else { s + r * ld };
        [units(v[at]), if t == 2 { -units(v[at + 1]) } else { units(v[at + 1]) }]
    };
    let (ar, ai) = (units(alpha[0]), units(alpha[1]));
    let (br, bi) = (units(beta[0]), units(beta[1]));
    let mut out = Vec::with_capacity(m * n);
    for j in 0..n {
        for i in 0..m {
            let (mut re, mut im) = (BigInt::from(0), BigInt::from(0));
            for l in 0..k {
                let [x, y] = get(a, ta, lda, i, l);
                let [u, v] = get(b, tb, ldb, l, j);
                re += &x * &u - &y * &v;
                im += &x * &v + &y * &u;
            }
            let mut z = [&re * &ar - &im * &ai, &re * &ai + &im * &ar];
            if beta != [0.0, 0.0] {
                let (cr, ci) = (units(c[2 * (i + j * ldc)]), units(c[2 * (i + j * ldc) + 1]));
                z[0] += (&br * &cr - &bi * &ci) << 1074usize;
                z[1] += (&bi * &cr + &br * &ci) << 1074usize;
            }
            out.push(z);
        }
    }
    out
}

/// The accurate ZGEMM against the exact oracle: both parts of every element the nearest double
/// (faithful: one of the two around it), C's padding untouched.
#[allow(clippy::too_many_arguments)]
fn accurate_zcase(
    what: &str,
    (ta, tb): (u8, u8),
    (m, n, k): (usize, usize, usize),
    alpha: [f64; 2],
    a: &[f64],
    b: &[f64],
    beta: [f64; 2],
    c0: &[f64],
) {
    use hyblas::types::Trans;
    let t = |x: u8| [Trans::No, Trans::Trans, Trans::ConjTrans][x as usize];
    let lda = if ta > 0 { k } else { m } + 1;
    let ldb = if tb > 0 { n } else { k } + 1;
    let ldc = m + 2;
    let want = exact_zgemm((ta, tb), (m, n, k), alpha, (a, lda), (b, ldb), beta, (c0, ldc));
    for rounding in [Rounding::Faithful, Rounding::Nearest] {
        let mut c = c0.to_vec();
        // SAFETY: buffers sized for the shapes and leading dimensions above.
        let rep = unsafe {
            hyblas::plan::accurate::zgemm(
                rounding,
                t(ta),
                t(tb),
                m,
                n,
                k,
                alpha,
                a.as_ptr(),
                lda,
                b.as_ptr(),
                ldb,
                beta,
                c.as_mut_ptr(),
                ldc,
            )
        };
        assert_eq!(rep.ieee, 0, "{what}");
        if std::env::var("OZAKI_SHOW").is_ok() {
            eprintln!("{what} {rounding:?}: {rep:?}");
        }
        for j in 0..n {
            for i in 0..ldc {
                for q in 0..2 {
                    let got = c[2 * (i + j * ldc) + q];
                    if i >= m {
                        assert_eq!(
                            got.to_bits(),
                            c0[2 * (i + j * ldc) + q].to_bits(),
                            "{what}: padding ({i},{j}) written"
                        );
                        continue;
                    }
                    let w = &want[i + j * m][q];
                    let ok = match rounding {
                        Rounding::Nearest => is_nearest(got, w, 3222),
                        Rounding::Faithful => is_faithful(got, w, 3222),
                    };
                    assert!(ok, "{what}: part {q} of ({i},{j}) = {got:e} is not {rounding:?} ({rep:?})");
                }
            }
        }
    }
}

#[test]
fn accurate_zgemm_is_correctly_rounded() {
    let mut rng = Rng::new(31);
    let (m, n, k) = (6usize, 5usize, 200usize);
    // Complex matrices as [re, im] pairs, stored with padding rows.
    let cpadded = |rng: &mut Rng, rows: usize, cols: usize, ld: usize, phi: f64| {
        let mut v = padded(rng, 2 * rows, cols, 2 * ld, &mut |r, len| lognormal(r, len, phi));
        for j in 0..cols {
            for x in 2 * rows..2 * ld {
                v[x + j * 2 * ld] = -7.0;
            }
        }
        v
    };
    let scalars =
        [([0.3, -0.7], [-0.5, 0.25]), ([1.0, 0.0], [1.0, 0.0]), ([0.0, 2.0], [0.0, -1.5]), ([-1.0, 0.0], [0.0, 0.0])];
    for (x, (phi, ta, tb)) in [(0.5, 0, 0), (2.0, 1, 2), (8.0, 2, 0), (0.5, 2, 2), (2.0, 0, 1)].into_iter().enumerate()
    {
        let (ar, ac) = if ta > 0 { (k, m) } else { (m, k) };
        let (br, bc) = if tb > 0 { (n, k) } else { (k, n) };
        let a = cpadded(&mut rng, ar, ac, ar + 1, phi);
        let b = cpadded(&mut rng, br, bc, br + 1, phi);
        let (alpha, beta) = scalars[x % scalars.len()];
        let mut c = cpadded(&mut rng, m, n, m + 2, 1.0);
        if beta == [0.0, 0.0] {
            // beta = 0: C is not read (NaN there must not show).
            for j in 0..n {
                for v in &mut c[j * 2 * (m + 2)..j * 2 * (m + 2) + 2 * m] {
                    *v = f64::NAN;
                }
            }
        }
        accurate_zcase(
            &format!("phi={phi} ta={ta} tb={tb} alpha={alpha:?} beta={beta:?}"),
            (ta, tb),
            (m, n, k),
            alpha,
            &a,
            &b,
            beta,
            &c,
        );
    }
    // Cancellation in the complex sum: a_l = (x, y) and b_l = (x, y(1 + 2^-40)) with huge x, y,
    // so Re(a b) = x^2 - y^2 (1 + 2^-40) cancels (x = y), and alternating signs over l cancel
    // the rest; small terms between carry the answer.
    let k = 60;
    let mut a = vec![0.0; 2 * (m + 1) * k];
    let mut b = vec![0.0; 2 * (k + 1) * n];
    for l in 0..k {
        for i in 0..m {
            let big = 2f64.powi(100 + 7 * i as i32) * if l % 2 == 0 { 1.0 } else { -1.0 };
            let (re, im) = if l % 3 == 2 { (rng.unit() * 1e-9, rng.unit() * 1e-9) } else { (big, big) };
            a[2 * (i + l * (m + 1))] = re;
            a[2 * (i + l * (m + 1)) + 1] = im;
        }
        for j in 0..n {
            b[2 * (l + j * (k + 1))] = 1.0 + j as f64 * f64::EPSILON;
            b[2 * (l + j * (k + 1)) + 1] = 1.0 + 2f64.powi(-40);
        }
    }
    let c = vec![0.5; 2 * (m + 2) * n];
    accurate_zcase("cancellation", (0, 0), (m, n, k), [1.0, 0.0], &a, &b, [0.0, 0.0], &c);
    accurate_zcase("cancellation, complex alpha and beta", (0, 0), (m, n, k), [0.75, -1.25], &a, &b, [2.0, 0.5], &c);
    // (beta = 0: the exact path with a complex alpha, each product's sum times its coefficient.)
    accurate_zcase("cancellation, complex alpha", (0, 0), (m, n, k), [0.75, -1.25], &a, &b, [0.0, 0.0], &c);
}

#[test]
fn accurate_zgemm_inf_nan_and_degenerate_calls() {
    use hyblas::types::Trans;
    let mut rng = Rng::new(5);
    let (m, n, k) = (4usize, 3usize, 9usize);
    let mut a: Vec<f64> = (0..2 * m * k).map(|_| rng.unit() - 0.5).collect();
    let b: Vec<f64> = (0..2 * k * n).map(|_| rng.unit() - 0.5).collect();
    a[2 * (1 + 3 * m) + 1] = f64::INFINITY; // Im of op(A)(1, 3)
    let c0: Vec<f64> = (0..2 * m * n).map(|_| rng.unit()).collect();
    let mut c = c0.clone();
    // SAFETY: buffers sized for the shapes.
    let rep = unsafe {
        hyblas::plan::accurate::zgemm(
            Rounding::Nearest,
            Trans::No,
            Trans::No,
            m,
            n,
            k,
            [1.0, 0.5],
            a.as_ptr(),
            m,
            b.as_ptr(),
            k,
            [0.5, 0.0],
            c.as_mut_ptr(),
            m,
        )
    };
    assert_eq!(rep.ieee, 2 * n, "row 1's elements take IEEE arithmetic: {rep:?}");
    for j in 0..n {
        for i in 0..m {
            let z = [c[2 * (i + j * m)], c[2 * (i + j * m) + 1]];
            assert_eq!(i == 1, !z[0].is_finite() || !z[1].is_finite(), "({i},{j}) = {z:?}");
        }
    }
    // alpha = 0: beta*C, each part rounded once; k = 0 the same (A and B not read).
    for (alpha, kk) in [([0.0, 0.0], k), ([1.0, 1.0], 0)] {
        let mut c = c0.clone();
        let beta = [1.0 / 3.0, -0.2];
        // SAFETY: as above (k = 0: A and B not read).
        unsafe {
            hyblas::plan::accurate::zgemm(
                Rounding::Nearest,
                Trans::No,
                Trans::No,
                m,
                n,
                kk,
                alpha,
                a.as_ptr(),
                m,
                b.as_ptr(),
                k,
                beta,
                c.as_mut_ptr(),
                m,
            );
        }
        let want = exact_zgemm((0, 0), (m, n, 0), [1.0, 0.0], (&a, m), (&b, k), beta, (&c0, m));
        for x in 0..m * n {
            for q in 0..2 {
                assert!(is_nearest(c[2 * x + q], &want[x][q], 3222), "alpha={alpha:?} k={kk}: element {x} part {q}");
            }
        }
    }
}

/// The products' forms and sparse slices change only how the exact levels and the rest are
/// summed, never the result: under every form, and with every slice of A run as sparse x dense
/// (density limit 1), each element is still the nearest double (the oracle), on dense inputs,
/// wide exponent ranges (phi = 8: slice 0 mostly zeros) and the seed's mostly-zero matrices.
#[test]
fn forms_and_sparse_slices_keep_the_rounding() {
    use hyblas::plan::accurate::{last_report, with_tuning, Form, Side, Tuning};
    let mut rng = Rng::new(77);
    let (m, n, k) = (9usize, 7usize, 150usize);
    let a8 = padded(&mut rng, m, k, m + 1, &mut |r, len| lognormal(r, len, 8.0));
    let b8 = padded(&mut rng, k, n, k + 1, &mut |r, len| lognormal(r, len, 8.0));
    let c = padded(&mut rng, m, n, m + 2, &mut |r, len| lognormal(r, len, 1.0));
    let (sa, sb) = seed_pair(&mut rng, 40);
    let pad = |v: &[f64], rows: usize, cols: usize| {
        let mut o = vec![-7.0; (rows + 1) * cols];
        for j in 0..cols {
            o[j * (rows + 1)..j * (rows + 1) + rows].copy_from_slice(&v[j * rows..(j + 1) * rows]);
        }
        o
    };
    let (sa, sb) = (pad(&sa, 40, 40), pad(&sb, 40, 40));
    let cs = vec![0.0; 42 * 40];
    for form in [Form::Joined, Form::Batched, Form::Looped] {
        for (density, side) in [(0.0, Side::Both), (1.0, Side::Left), (1.0, Side::Right)] {
            let t = Tuning { form: Some(form), sparse_density: Some(density), sparse_side: Some(side) };
            let what = format!("{form:?} density {density} {side:?}");
            with_tuning(t, || {
                accurate_case(&format!("phi=8 {what}"), false, false, (m, n, k), 0.3, &a8, &b8, -0.5, &c);
                let rep = last_report();
                assert_eq!(rep.form, form, "{what}");
                assert_eq!(rep.sparse > 0, density > 0.0, "{what}: {rep:?}");
                accurate_case(&format!("seed {what}"), false, false, (40, 40, 40), 1.0, &sa, &sb, 0.0, &cs);
            });
        }
    }
}
