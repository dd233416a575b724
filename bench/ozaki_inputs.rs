//! The accurate DGEMM benchmarks' inputs (issue 49), shared by `ozakibench` (bench/ozaki.rs, on
//! the CPU) and `ozakigpubench` (bench/ozaki_gpu.rs, on the GPU), which include this file by path
//! so that both measure the same kinds of matrices:
//!
//! - `phiX`: entries (U - 0.5) exp(X N(0, 1)), the lognormal inputs (X = 0.5, 2, 8): the
//!   larger X, the wider the exponent range within a row, the more slices the scheme needs;
//! - `seed`: the seed paper's pair, A = identity with 10% of its entries replaced by U(0, 1) and
//!   B = inv(A), whose product is mostly cancellation (plain DGEMM gets most elements wrong).
//!
//! All matrices are column-major, n x n.

// Each including benchmark uses only some of these.
#![allow(dead_code)]

use rayon::prelude::*;

/// xorshift uniforms in [0, 1).
pub struct Rng(pub u64);
impl Rng {
    pub fn unit(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// `len` entries (U - 0.5) exp(phi N(0, 1)) (N by Box-Muller), from one stream.
pub fn lognormal(rng: &mut Rng, len: usize, phi: f64) -> Vec<f64> {
    let mut v = vec![0.0; len];
    fill_lognormal(rng, &mut v, phi);
    v
}

/// [`lognormal`] into `out`.
pub fn fill_lognormal(rng: &mut Rng, out: &mut [f64], phi: f64) {
    for x in out {
        let (u1, u2) = (rng.unit().max(1e-300), rng.unit());
        let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
        *x = (rng.unit() - 0.5) * (phi * z).exp();
    }
}

/// [`lognormal`] in parallel: chunk c of 2^20 entries comes from its own stream, seeded by `seed`
/// and c, so the matrix is the same on any thread count. (One stream takes about 10 s per
/// 16384^2 matrix; the GPU benchmark's sizes need the cores.)
pub fn lognormal_par(seed: u64, len: usize, phi: f64) -> Vec<f64> {
    const CHUNK: usize = 1 << 20;
    let mut v = vec![0.0; len];
    v.par_chunks_mut(CHUNK).enumerate().for_each(|(c, out)| {
        // splitmix64 of (seed, c): neighbouring chunks get unrelated, non-zero xorshift states.
        let mut z = seed.wrapping_add((c as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        fill_lognormal(&mut Rng((z ^ (z >> 31)) | 1), out, phi);
    });
    v
}

/// The seed's pair: A = identity with 10% of its entries replaced by U(0,1), B = inv(A)
/// (Gauss-Jordan with partial pivoting, row operations along contiguous rows of the transpose).
/// The elimination of each column updates the other rows in parallel: each row's arithmetic is
/// the same as one core's in the same order, so B does not depend on the thread count, and n =
/// 4096 takes seconds instead of minutes (every column streams both n x n matrices).
pub fn seed_pair(rng: &mut Rng, n: usize) -> (Vec<f64>, Vec<f64>) {
    let mut a = vec![0.0; n * n];
    for i in 0..n {
        a[i + i * n] = 1.0;
    }
    for _ in 0..n * n / 10 {
        let at = ((rng.unit() * (n * n) as f64) as usize).min(n * n - 1);
        a[at] = rng.unit();
    }
    // Work on rows: w[r][c] = A[r][c] stored row-major, inv likewise.
    let mut w: Vec<f64> = (0..n * n).map(|x| a[(x / n) + (x % n) * n]).collect();
    let mut inv = vec![0.0; n * n];
    for i in 0..n {
        inv[i * n + i] = 1.0;
    }
    for col in 0..n {
        let p = (col..n).max_by(|&x, &y| w[x * n + col].abs().total_cmp(&w[y * n + col].abs())).unwrap_or(col);
        if p != col {
            for j in 0..n {
                w.swap(col * n + j, p * n + j);
                inv.swap(col * n + j, p * n + j);
            }
        }
        let d = w[col * n + col];
        for j in 0..n {
            w[col * n + j] /= d;
            inv[col * n + j] /= d;
        }
        let (prow, pinv) = (w[col * n..(col + 1) * n].to_vec(), inv[col * n..(col + 1) * n].to_vec());
        w.par_chunks_mut(n).zip(inv.par_chunks_mut(n)).enumerate().for_each(|(r, (wr, ir))| {
            let f = wr[col];
            if r == col || f == 0.0 {
                return;
            }
            for (x, y) in wr.iter_mut().zip(&prow) {
                *x -= f * y;
            }
            for (x, y) in ir.iter_mut().zip(&pinv) {
                *x -= f * y;
            }
        });
    }
    // Back to column-major.
    let b: Vec<f64> = (0..n * n).map(|x| inv[(x % n) * n + x / n]).collect();
    (a, b)
}
