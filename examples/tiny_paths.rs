//! Two ways to run the same fresh 32 x 32 DGEMMs on one thread, interleaved (a diagnostic):
//! the batch's tile walk set up once, against the one-product path set up per product.
use hyblas::cpu::level3::gemm::OneThread;
use hyblas::types::{MatMut, MatRef, Trans};
use std::time::Instant;

fn main() {
    let n: usize = std::env::args().nth(1).and_then(|v| v.parse().ok()).unwrap_or(32);
    let count: usize = std::env::var("COUNT").ok().and_then(|v| v.parse().ok()).unwrap_or(10_000);
    let e = n * n;
    let a: Vec<f64> = (0..e * count).map(|i| (i % 7) as f64 * 0.25).collect();
    let b: Vec<f64> = (0..e * count).map(|i| (i % 5) as f64 * 0.5).collect();
    let mut c = vec![0.0f64; e * count];
    let eng = OneThread::<f64>::new(n, n, n, 1, false);
    let (mut best_t, mut best_o) = (f64::MAX, f64::MAX);
    for rep in 0..20 {
        for way in [rep % 2, 1 - rep % 2] {
            let t = Instant::now();
            for p in 0..count {
                unsafe {
                    let (av, ca) = MatRef::op(a[p * e..].as_ptr(), Trans::No, n, n, n);
                    let (bv, cb) = MatRef::op(b[p * e..].as_ptr(), Trans::No, n, n, n);
                    let cv = MatMut::col_major(c[p * e..].as_mut_ptr(), n, n, n);
                    if way == 0 {
                        let tl = eng.tiles(1.0, &av, ca, &bv, cb, &cv).unwrap();
                        tl.product(1.0, av.ptr, bv.ptr, 0.0, cv.ptr);
                    } else {
                        let e1 = OneThread::<f64>::new(n, n, n, bv.rs, cb);
                        e1.gemm(1.0, av, ca, bv, cb, 0.0, cv);
                    }
                }
            }
            let s = t.elapsed().as_secs_f64() / count as f64 * 1e9;
            if way == 0 {
                best_t = best_t.min(s)
            } else {
                best_o = best_o.min(s)
            }
        }
    }
    println!("n={n}: tiles {best_t:.0} ns, one-product path {best_o:.0} ns (best of 20, interleaved)");
}
