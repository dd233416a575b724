//! Time per term of the accurate GEMM's exact dot product (`cpu::ozaki::Exact::set_dot`, what an
//! element certification refuses costs), on one core, for rows x of A and columns y of B of the
//! accurate benchmarks' inputs (`bench/ozaki_inputs.rs`), n = k:
//!   phi0.5, phi8  entries (U - 0.5) exp(phi N(0,1)) (products spread over about 2^±70 at 8);
//!   seed          the seed's A (identity plus 10% U(0,1): rows 90% zeros) and B = inv(A), at
//!                 off-diagonal elements (i != j), whose sums cancel to about 0.
//!   cargo run --release --example exact_dot [k...]      (default 1024 2048)
#[path = "../bench/ozaki_inputs.rs"]
mod ozaki_inputs;

use hyblas::cpu::ozaki::Exact;
use ozaki_inputs::{lognormal, seed_pair, Rng};
use std::time::Instant;

fn main() {
    let ks: Vec<usize> = std::env::args().skip(1).filter_map(|s| s.parse().ok()).collect();
    let ks = if ks.is_empty() { vec![1024, 2048] } else { ks };
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut acc = Exact::new();
    println!("{:>7} {:>8} {:>10}", "k", "inputs", "ns/term");
    for &k in &ks {
        for kind in ["phi0.5", "phi8", "seed"] {
            let (a, b) = match kind {
                "seed" => seed_pair(&mut rng, k),
                _ => {
                    let phi = kind[3..].parse().unwrap_or(0.5);
                    (lognormal(&mut rng, k * k, phi), lognormal(&mut rng, k * k, phi))
                }
            };
            // 64 elements (i, j), i != j, each a row of A (strided, gathered) and a column of B.
            let pairs: Vec<(Vec<f64>, Vec<f64>)> = (0..64)
                .map(|e| {
                    let (i, j) = ((e * 37 + 5) % k, (e * 101 + 11) % k);
                    let j = if i == j { (j + 1) % k } else { j };
                    ((0..k).map(|t| a[i + t * k]).collect(), b[j * k..(j + 1) * k].to_vec())
                })
                .collect();
            let mut sink = 0.0;
            let mut best = f64::INFINITY;
            for _ in 0..5 {
                let t = Instant::now();
                for (x, y) in &pairs {
                    acc.set_dot(k, |t| (x[t], y[t]));
                    sink += acc.round().abs();
                }
                best = best.min(t.elapsed().as_secs_f64());
            }
            println!("{k:>7} {kind:>8} {:>10.2}   (sum of |results| {sink:.3e})", best / (64 * k) as f64 * 1e9);
        }
    }
}
