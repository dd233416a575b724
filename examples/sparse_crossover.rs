//! Where a sparse slice product beats a dense one (issue 49): for A n x n with a given fraction
//! of nonzeros (integers in [-2^20, 2^20] at random positions, as the accurate GEMM's slices of
//! a mostly-zero matrix look), the time of `Csr::from_col_major` + `spmm_add` (A * B added to
//! C) against the CPU engine's dense GEMM of the same shape, best of three each; and the same
//! matrix as the right operand, `Csr::from_rows` of its columns + `dense_spmm_add` (B * A added
//! to C), "right" in the table.
//!   cargo run --release --example sparse_crossover [n...]     (default 256 512 1024 2048)
use hyblas::cpu::level3::gemm::gemm;
use hyblas::cpu::sparse::{dense_spmm_add, spmm_add, Csr};
use hyblas::types::{MatMut, MatRef};
use std::time::Instant;

const DENSITIES: [f64; 9] = [0.005, 0.01, 0.02, 0.05, 0.10, 0.15, 0.20, 0.30, 0.50];

/// xorshift64: uniform u64s, reproducible.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// A nonzero integer in [-2^20, 2^20].
    fn int(&mut self) -> f64 {
        loop {
            let x = (self.next() % ((2u64 << 20) + 1)) as i64 - (1 << 20);
            if x != 0 {
                return x as f64;
            }
        }
    }
}

/// Best of three runs of `f`, in seconds (after one untimed run).
fn best(mut f: impl FnMut()) -> f64 {
    f();
    (0..3)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::MAX, f64::min)
}

fn main() {
    let mut sizes: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    if sizes.is_empty() {
        sizes = vec![256, 512, 1024, 2048];
    }
    println!("threads {}, simd {}", hyblas::cpu::threads::nthreads(), hyblas::cpu::simd::describe());
    println!(
        "{:>6} {:>8} {:>10} {:>10} {:>10} {:>10} {:>8} {:>9} {:>10} {:>8}",
        "n", "density", "csr ms", "spmm ms", "sparse ms", "dense ms", "ratio", "nnz", "right ms", "ratio"
    );
    let mut rng = Rng(0x2545f4914f6cdd1d);
    let mut summary = Vec::new();
    for &n in &sizes {
        let b: Vec<f64> = (0..n * n).map(|_| rng.int()).collect();
        let mut c = vec![0.0f64; n * n];
        let (mut crossover, mut crossover_right): (Option<f64>, Option<f64>) = (None, None);
        for &d in &DENSITIES {
            let a: Vec<f64> = (0..n * n).map(|_| if rng.unit() < d { rng.int() } else { 0.0 }).collect();
            let (ap, bp) = (a.as_ptr(), b.as_ptr());
            let mut nnz = 0;
            let csr = best(|| {
                nnz = unsafe { Csr::from_col_major(ap, n, n, n) }.nnz();
            });
            let s = unsafe { Csr::from_col_major(ap, n, n, n) };
            let spmm = best(|| unsafe { spmm_add(&s, bp, n, n, c.as_mut_ptr(), n) });
            let sparse = best(|| unsafe {
                let s = Csr::from_col_major(ap, n, n, n);
                spmm_add(&s, bp, n, n, c.as_mut_ptr(), n);
            });
            let dense = best(|| unsafe {
                gemm(
                    1.0,
                    MatRef::col_major(ap, n, n, n),
                    false,
                    MatRef::col_major(bp, n, n, n),
                    false,
                    1.0,
                    MatMut::col_major(c.as_mut_ptr(), n, n, n),
                )
            });
            let right = best(|| unsafe {
                let st = Csr::from_rows(ap, n, n, n);
                dense_spmm_add(bp, n, n, &st, c.as_mut_ptr(), n);
            });
            let (ratio, ratio_right) = (sparse / dense, right / dense);
            println!(
                "{n:>6} {:>7.1}% {:>10.3} {:>10.3} {:>10.3} {:>10.3} {ratio:>8.3} {nnz:>9} {:>10.3} {ratio_right:>8.3}",
                d * 100.0,
                csr * 1e3,
                spmm * 1e3,
                sparse * 1e3,
                dense * 1e3,
                right * 1e3
            );
            if ratio < 1.0 {
                crossover = Some(d);
            }
            if ratio_right < 1.0 {
                crossover_right = Some(d);
            }
        }
        summary.push((n, crossover, crossover_right));
    }
    println!("\ncrossover (largest density at which sparse is faster; left operand sparse, right):");
    let pct = |d: Option<f64>| d.map_or("none".to_string(), |d| format!("{:.1}%", d * 100.0));
    for (n, d, dr) in summary {
        println!("  n = {n:>5}: {}, {}", pct(d), pct(dr));
    }
}
