//! Runtime behaviour that is not a BLAS routine: the thread pool across fork(), thread control.

mod common;
use common::*;
use hyblas::cpu::{level3::gemm::gemm, threads};
use hyblas::types::{MatMut, MatRef};

fn naive(m: usize, n: usize, k: usize, a: &[f64], b: &[f64]) -> Vec<f64> {
    let mut c = vec![0.0; m * n];
    for j in 0..n {
        for p in 0..k {
            for i in 0..m {
                c[i + j * m] += a[i + p * m] * b[p + j * k];
            }
        }
    }
    c
}

fn threaded_gemm(n: usize, seed: u64) -> bool {
    let mut rng = Rng::new(seed);
    let a: Vec<f64> = rng.vec(n * n);
    let b: Vec<f64> = rng.vec(n * n);
    let mut c = vec![f64::NAN; n * n];
    unsafe {
        gemm(
            1.0,
            MatRef::col_major(a.as_ptr(), n, n, n),
            false,
            MatRef::col_major(b.as_ptr(), n, n, n),
            false,
            0.0,
            MatMut::col_major(c.as_mut_ptr(), n, n, n),
        );
    }
    let want = naive(n, n, n, &a, &b);
    c.iter().zip(&want).all(|(g, w)| (g - w).abs() <= 1e-12 * n as f64)
}

/// After fork() the child has none of the pool's threads; a threaded call there must still
/// finish (serially) with the right answer instead of waiting forever for the pool.
#[test]
fn threaded_calls_work_in_a_forked_child() {
    threads::set_nthreads(2);
    assert!(threaded_gemm(200, 1), "parent result");
    // SAFETY: the child only runs the BLAS call and _exit()s.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        unsafe { libc::alarm(60) }; // a hang becomes SIGALRM, which the parent sees
        let ok = threaded_gemm(200, 2);
        unsafe { libc::_exit(if ok { 0 } else { 3 }) };
    }
    let mut status = 0;
    unsafe { libc::waitpid(pid, &mut status, 0) };
    assert!(libc::WIFEXITED(status), "child did not exit normally (status {status:#x}): hung or crashed after fork");
    assert_eq!(libc::WEXITSTATUS(status), 0, "child computed a wrong result");
    assert!(threaded_gemm(200, 3), "parent still works after fork");
}

#[test]
fn thread_count_is_clamped_and_settable() {
    threads::set_nthreads(0);
    assert_eq!(threads::nthreads(), 1);
    threads::set_nthreads(1 << 20);
    assert_eq!(threads::nthreads(), threads::pool_size());
    threads::set_nthreads(1);
    assert!(threaded_gemm(64, 4));
}
