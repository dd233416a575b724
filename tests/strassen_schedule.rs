//! The Strassen-Winograd schedule (`gpu::strassen`) on host memory, with plain loops as its
//! GEMM and additions: every transpose pair, odd and rectangular sizes around the peeling edges,
//! leading dimensions past the rows, alpha and beta 0 / 1 / other, levels 0-3. Checked against a
//! plain triple loop on fresh random data, with C's spare rows, A, B and the workspace's guard
//! checked untouched, NaN in C overwritten where beta == 0, and the workspace poisoned first.
//! The GPU engine runs the same schedule on the real cuBLAS and its own addition kernels.

use hyblas::gpu::strassen::{gemm, workspace, Blk, Gemm, Ops};

/// Column-major host blocks behind `Blk` pointers; counts the calls it made.
#[derive(Default)]
struct Host {
    gemms: usize,
    adds: usize,
}

/// Element (i, j) of a block.
unsafe fn el(b: Blk, i: usize, j: usize) -> *mut f64 {
    (b.ptr as *mut f64).add(i + j * b.ld)
}

impl Ops<f64> for Host {
    type Error = ();
    fn gemm(
        &mut self,
        ta: bool,
        tb: bool,
        m: usize,
        n: usize,
        k: usize,
        alpha: f64,
        a: Blk,
        b: Blk,
        beta: f64,
        c: Blk,
    ) -> Result<(), ()> {
        self.gemms += 1;
        for j in 0..n {
            for i in 0..m {
                let mut s = 0.0;
                for l in 0..k {
                    // SAFETY: the schedule passes blocks inside the test's buffers.
                    unsafe {
                        let x = if ta { *el(a, l, i) } else { *el(a, i, l) };
                        let y = if tb { *el(b, j, l) } else { *el(b, l, j) };
                        s += x * y;
                    }
                }
                // SAFETY: as above; beta == 0 does not read C.
                unsafe {
                    let cij = el(c, i, j);
                    *cij = if beta == 0.0 { alpha * s } else { alpha * s + beta * *cij };
                }
            }
        }
        Ok(())
    }
    fn add(&mut self, rows: usize, cols: usize, x: Blk, s: f64, y: Blk, z: Blk) -> Result<(), ()> {
        self.adds += 1;
        for j in 0..cols {
            for i in 0..rows {
                // SAFETY: as above.
                unsafe { *el(z, i, j) = *el(x, i, j) + s * *el(y, i, j) };
            }
        }
        Ok(())
    }
    fn axpby(&mut self, rows: usize, cols: usize, w: Blk, beta: f64, c: Blk) -> Result<(), ()> {
        for j in 0..cols {
            for i in 0..rows {
                // SAFETY: as above.
                unsafe { *el(c, i, j) = *el(w, i, j) + beta * *el(c, i, j) };
            }
        }
        Ok(())
    }
    fn scale(&mut self, rows: usize, cols: usize, beta: f64, c: Blk) -> Result<(), ()> {
        for j in 0..cols {
            for i in 0..rows {
                // SAFETY: as above.
                unsafe { *el(c, i, j) = if beta == 0.0 { 0.0 } else { beta * *el(c, i, j) } };
            }
        }
        Ok(())
    }
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    }
    fn vec(&mut self, n: usize) -> Vec<f64> {
        (0..n).map(|_| self.next()).collect()
    }
}

const GUARD: usize = 64;
const SENTINEL: f64 = 1.2345e300;

/// One case: returns the normwise relative error max|C - ref| / (|alpha| |A| |B| + |beta| |C|).
#[allow(clippy::too_many_arguments)]
fn case(ta: bool, tb: bool, m: usize, n: usize, k: usize, alpha: f64, beta: f64, levels: u32, seed: u64) -> f64 {
    let mut rng = Rng(seed);
    let (ar, ac) = if ta { (k, m) } else { (m, k) };
    let (br, bc) = if tb { (n, k) } else { (k, n) };
    let (lda, ldb, ldc) = (ar + 3, br + 1, m + 2);
    let a = rng.vec(lda * ac.max(1));
    let b = rng.vec(ldb * bc.max(1));
    let mut c = rng.vec(ldc * n);
    if beta == 0.0 {
        // C is not read: its NaNs must be overwritten.
        for j in 0..n {
            for i in 0..m {
                if (i + j) % 3 == 0 {
                    c[i + j * ldc] = f64::NAN;
                }
            }
        }
    }
    let c0 = c.clone();
    let (a0, b0) = (a.clone(), b.clone());
    let len = workspace(m, n, k, levels, beta == 0.0);
    let mut work = vec![f64::NAN; len + GUARD];
    work[len..].iter_mut().for_each(|w| *w = SENTINEL);
    let blk = |v: &[f64], ld: usize| Blk { ptr: v.as_ptr() as u64, ld };
    let g = Gemm { ta, tb, m, n, k, alpha, a: blk(&a, lda), b: blk(&b, ldb), beta, c: blk(&c, ldc) };
    let mut host = Host::default();
    gemm(&mut host, g, levels, Blk { ptr: work.as_mut_ptr() as u64, ld: 1 }).unwrap();
    assert!(a == a0 && b == b0, "A or B written");
    assert!(work[len..].iter().all(|w| *w == SENTINEL), "workspace overrun: {len} elements");
    let mut err: f64 = 0.0;
    for j in 0..n {
        for i in 0..ldc {
            let got = c[i + j * ldc];
            if i >= m {
                assert_eq!(got.to_bits(), c0[i + j * ldc].to_bits(), "C's spare row {i} written");
                continue;
            }
            let (mut s, mut bound) = (0.0, 0.0);
            for l in 0..k {
                let x = if ta { a[l + i * lda] } else { a[i + l * lda] };
                let y = if tb { b[j + l * ldb] } else { b[l + j * ldb] };
                s += x * y;
                bound += (x * y).abs();
            }
            let old = if beta == 0.0 { 0.0 } else { c0[i + j * ldc] };
            let want = alpha * s + beta * old;
            let scale = alpha.abs() * bound + beta.abs() * old.abs();
            assert!(got.is_finite(), "C({i},{j}) = {got} ({m}x{n}x{k} {ta} {tb} levels {levels})");
            err = err.max((got - want).abs() / scale.max(f64::MIN_POSITIVE));
        }
    }
    err
}

#[test]
fn every_transpose_and_peeling_edge_at_one_and_two_levels() {
    let mut seed = 1;
    for (m, n, k) in [
        (8, 8, 8),
        (9, 8, 8),
        (8, 9, 8),
        (8, 8, 9),
        (9, 9, 9),
        (7, 12, 5),
        (16, 6, 30),
        (13, 17, 11),
        (2, 2, 2),
        (3, 2, 5),
    ] {
        for (ta, tb) in [(false, false), (true, false), (false, true), (true, true)] {
            for (alpha, beta) in [(1.0, 0.0), (1.0, 1.0), (-0.5, 2.5), (1.5, 0.0)] {
                for levels in [1, 2] {
                    seed += 1;
                    let e = case(ta, tb, m, n, k, alpha, beta, levels, seed);
                    // Winograd's bound grows with the level; at these sizes it stays far under 1e-13.
                    assert!(e < 1e-13, "{m}x{n}x{k} ta={ta} tb={tb} alpha={alpha} beta={beta} levels={levels}: {e:e}");
                }
            }
        }
    }
}

#[test]
fn deeper_levels_and_larger_sizes() {
    for (m, n, k, levels) in [(64, 64, 64, 3), (63, 65, 67, 3), (40, 24, 56, 2), (33, 48, 20, 3)] {
        let e = case(false, true, m, n, k, 0.75, -1.0, levels, m as u64 * 7 + levels as u64);
        assert!(e < 1e-12, "{m}x{n}x{k} levels {levels}: {e:e}");
    }
}

#[test]
fn one_level_is_seven_products_and_fifteen_additions() {
    let (m, n, k) = (8, 8, 8);
    let (a, b, mut c) = (vec![1.0; 64], vec![1.0; 64], vec![0.0; 64]);
    let mut work = vec![0.0; workspace(m, n, k, 1, true)];
    let blk = |v: &[f64]| Blk { ptr: v.as_ptr() as u64, ld: 8 };
    let g = Gemm { ta: false, tb: false, m, n, k, alpha: 1.0, a: blk(&a), b: blk(&b), beta: 0.0, c: blk(&c) };
    let mut host = Host::default();
    gemm(&mut host, g, 1, Blk { ptr: work.as_mut_ptr() as u64, ld: 1 }).unwrap();
    assert_eq!((host.gemms, host.adds), (7, 15));
    c.iter_mut().for_each(|x| assert_eq!(*x, 8.0));
}

#[test]
fn alpha_zero_and_k_zero_read_nothing_and_scale_c() {
    for (alpha, k) in [(0.0, 5), (1.0, 0)] {
        let (m, n) = (5, 4);
        let mut c = vec![2.0; m * n];
        // A and B are dangling: neither may be read.
        let dangling = Blk { ptr: 8, ld: 1 };
        let g = Gemm {
            ta: false,
            tb: false,
            m,
            n,
            k,
            alpha,
            a: dangling,
            b: dangling,
            beta: 0.5,
            c: Blk { ptr: c.as_mut_ptr() as u64, ld: m },
        };
        let mut host = Host::default();
        gemm(&mut host, g, 2, Blk { ptr: 8, ld: 1 }).unwrap();
        assert!(c.iter().all(|x| *x == 1.0) && host.gemms == 0);
    }
}
