//! How users reach the accurate DGEMM (issue 49): `hyblas_set_dgemm_mode` and `hyblas_dgemm_ex`
//! route `dgemm_` (LP64 and ILP64) and `cblas_dgemm` (both layouts) to the Ozaki scheme on host
//! memory; the results are the correctly rounded (or faithful) products, checked here against
//! the planner's own accurate call and, on a sample, against a big-integer oracle. A bad mode
//! is refused with nothing written.
mod common;
// Its LP64 `dgemm_`; the rest of it serves other tests.
#[allow(dead_code)]
#[path = "common/fortran_gemm.rs"]
mod fortran_gemm;

use common::{cblas_dgemm, cblas_zgemm, Rng};
use fortran_gemm::{dgemm_, zgemm_};
use hyblas::plan::accurate::{self, Rounding};
use hyblas::types::Trans;
use std::os::raw::{c_char, c_int};

extern "C" {
    fn hyblas_set_dgemm_mode(mode: c_int) -> c_int;
    fn hyblas_dgemm_ex(
        mode: c_int,
        layout: c_int,
        ta: c_int,
        tb: c_int,
        m: c_int,
        n: c_int,
        k: c_int,
        alpha: f64,
        a: *const f64,
        lda: c_int,
        b: *const f64,
        ldb: c_int,
        beta: f64,
        c: *mut f64,
        ldc: c_int,
    ) -> c_int;
    fn dgemm_64_(
        ta: *const c_char,
        tb: *const c_char,
        m: *const i64,
        n: *const i64,
        k: *const i64,
        al: *const f64,
        a: *const f64,
        lda: *const i64,
        b: *const f64,
        ldb: *const i64,
        be: *const f64,
        c: *mut f64,
        ldc: *const i64,
    );
}

/// A cancellation-heavy product: rows of alternating large terms (2^0..2^40) with small ones.
fn operands(rng: &mut Rng, m: usize, n: usize, k: usize) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let a: Vec<f64> = (0..m * k)
        .map(|x| {
            let big = 2f64.powi((x % 41) as i32);
            if x % 3 == 2 {
                rng.unit() * 1e-6
            } else {
                big * (1.0 + rng.unit() * 1e-3)
            }
        })
        .collect();
    let b: Vec<f64> = (0..k * n).map(|x| if x % 2 == 0 { 1.0 } else { -1.0 } * (1.0 + rng.unit() * 1e-9)).collect();
    let c: Vec<f64> = (0..m * n).map(|_| rng.unit()).collect();
    (a, b, c)
}

/// The planner's accurate call on column-major operands (the reference for the ABI paths).
fn reference(r: Rounding, (m, n, k): (usize, usize, usize), a: &[f64], b: &[f64], beta: f64, c: &[f64]) -> Vec<f64> {
    let mut out = c.to_vec();
    unsafe {
        accurate::dgemm(
            r,
            Trans::No,
            Trans::No,
            m,
            n,
            k,
            0.75,
            a.as_ptr(),
            m,
            b.as_ptr(),
            k,
            beta,
            out.as_mut_ptr(),
            m,
        );
    }
    out
}

fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

#[test]
fn the_modes_route_dgemm_and_cblas_dgemm() {
    let mut rng = Rng::new(5);
    let (m, n, k) = (37usize, 29usize, 300usize);
    let (a, b, c0) = operands(&mut rng, m, n, k);
    let want = reference(Rounding::Nearest, (m, n, k), &a, &b, -0.5, &c0);
    let (mi, ni, ki) = (m as i32, n as i32, k as i32);
    let (al, be) = (0.75f64, -0.5f64);
    let nn = b"N".as_ptr() as *const c_char;
    // Native first: the plain product differs from the correctly rounded one somewhere.
    assert_eq!(unsafe { hyblas_set_dgemm_mode(0) }, -2);
    let mut native = c0.clone();
    unsafe { dgemm_(nn, nn, &mi, &ni, &ki, &al, a.as_ptr(), &mi, b.as_ptr(), &ki, &be, native.as_mut_ptr(), &mi) };
    assert_ne!(bits(&native), bits(&want), "the test's product has no cancellation to show");
    // Accurate for this thread: dgemm_, dgemm_64_, cblas_dgemm column- and row-major.
    assert_eq!(unsafe { hyblas_set_dgemm_mode(1) }, 0);
    let mut got = c0.clone();
    unsafe { dgemm_(nn, nn, &mi, &ni, &ki, &al, a.as_ptr(), &mi, b.as_ptr(), &ki, &be, got.as_mut_ptr(), &mi) };
    assert_eq!(bits(&got), bits(&want), "dgemm_");
    let (m8, n8, k8) = (m as i64, n as i64, k as i64);
    let mut got = c0.clone();
    unsafe { dgemm_64_(nn, nn, &m8, &n8, &k8, &al, a.as_ptr(), &m8, b.as_ptr(), &k8, &be, got.as_mut_ptr(), &m8) };
    assert_eq!(bits(&got), bits(&want), "dgemm_64_");
    let mut got = c0.clone();
    unsafe { cblas_dgemm(102, 111, 111, mi, ni, ki, al, a.as_ptr(), mi, b.as_ptr(), ki, be, got.as_mut_ptr(), mi) };
    assert_eq!(bits(&got), bits(&want), "cblas_dgemm column-major");
    // Row-major: C^T = B^T A^T with the same arrays read transposed.
    let t = |x: &[f64], r: usize, c: usize| {
        let mut o = vec![0.0; r * c];
        for i in 0..r {
            for j in 0..c {
                o[j + i * c] = x[i + j * r];
            }
        }
        o
    };
    let (ar, br, mut cr) = (t(&a, m, k), t(&b, k, n), t(&c0, m, n));
    unsafe { cblas_dgemm(101, 111, 111, mi, ni, ki, al, ar.as_ptr(), ki, br.as_ptr(), ni, be, cr.as_mut_ptr(), ni) };
    assert_eq!(bits(&cr), bits(&t(&want, m, n)), "cblas_dgemm row-major");
    // Back to the environment's setting (native in tests): the thread's own was 1.
    assert_eq!(unsafe { hyblas_set_dgemm_mode(-2) }, 1);
    assert_eq!(unsafe { hyblas_set_dgemm_mode(7) }, -3);
    let mut again = c0.clone();
    unsafe { dgemm_(nn, nn, &mi, &ni, &ki, &al, a.as_ptr(), &mi, b.as_ptr(), &ki, &be, again.as_mut_ptr(), &mi) };
    assert_eq!(bits(&again), bits(&native), "mode -2 did not go back to native");
}

#[test]
fn dgemm_ex_sets_the_mode_for_one_call() {
    let mut rng = Rng::new(6);
    let (m, n, k) = (20usize, 17usize, 250usize);
    let (a, b, c0) = operands(&mut rng, m, n, k);
    let (mi, ni, ki) = (m as i32, n as i32, k as i32);
    for (mode, r) in [(1, Rounding::Nearest), (2, Rounding::Faithful)] {
        let want = reference(r, (m, n, k), &a, &b, -0.5, &c0);
        let mut got = c0.clone();
        let rc = unsafe {
            hyblas_dgemm_ex(
                mode,
                102,
                111,
                111,
                mi,
                ni,
                ki,
                0.75,
                a.as_ptr(),
                mi,
                b.as_ptr(),
                ki,
                -0.5,
                got.as_mut_ptr(),
                mi,
            )
        };
        assert_eq!(rc, 0);
        assert_eq!(bits(&got), bits(&want), "mode {mode}");
    }
    // A bad mode: -3 and C untouched; the thread's mode is unchanged after (native).
    let mut got = c0.clone();
    let rc = unsafe {
        hyblas_dgemm_ex(9, 102, 111, 111, mi, ni, ki, 0.75, a.as_ptr(), mi, b.as_ptr(), ki, -0.5, got.as_mut_ptr(), mi)
    };
    assert_eq!(rc, -3);
    assert_eq!(bits(&got), bits(&c0));
    assert_eq!(accurate::mode(), accurate::Mode::Native);
}

/// `cblas_dgemm` in accurate mode where a level's products run batched (n = 128, phi = 0.5, as
/// `ozakibench --quick`): the batch's products stay plain FP64 (they once went back through the
/// accurate path and recursed until the stack overflowed), and the result is the direct call's.
#[test]
fn accurate_mode_with_batched_products_does_not_recurse() {
    let n = 128;
    let mut rng = Rng::new(4907);
    let a = common::lognormal(&mut rng, n * n, 0.5);
    let b = common::lognormal(&mut rng, n * n, 0.5);
    let mut want = vec![f64::NAN; n * n];
    unsafe {
        accurate::dgemm(
            Rounding::Nearest,
            Trans::No,
            Trans::No,
            n,
            n,
            n,
            1.0,
            a.as_ptr(),
            n,
            b.as_ptr(),
            n,
            0.0,
            want.as_mut_ptr(),
            n,
        );
    }
    let mut got = vec![f64::NAN; n * n];
    let ni = n as c_int;
    accurate::with_mode(accurate::Mode::Accurate(Rounding::Nearest), || unsafe {
        cblas_dgemm(102, 111, 111, ni, ni, ni, 1.0, a.as_ptr(), ni, b.as_ptr(), ni, 0.0, got.as_mut_ptr(), ni)
    });
    assert!(accurate::last_report().products >= 3, "a level of two products ran: {:?}", accurate::last_report());
    assert!(
        got.iter().zip(&want).all(|(x, y)| x.to_bits() == y.to_bits()),
        "cblas_dgemm in accurate mode != the direct call"
    );
}

/// ZGEMM follows the same mode: `zgemm_` and `cblas_zgemm` (column-major, and row-major with
/// conjugate transposes) return the accurate path's bits, which differ from the plain product.
#[test]
fn the_mode_routes_zgemm_and_cblas_zgemm() {
    let mut rng = Rng::new(8);
    let (m, n, k) = (13usize, 11usize, 120usize);
    // Complex operands as [re, im] pairs: real and imaginary parts from two cancelling sets.
    let (a1, b1, c1) = operands(&mut rng, m, n, k);
    let (a2, b2, c2) = operands(&mut rng, m, n, k);
    let zip = |x: &[f64], y: &[f64]| x.iter().zip(y).flat_map(|(p, q)| [*p, *q]).collect::<Vec<f64>>();
    let (a, b, c0) = (zip(&a1, &a2), zip(&b1, &b2), zip(&c1, &c2));
    let (al, be) = ([0.75f64, -0.25f64], [-0.5f64, 0.125f64]);
    let mut want = c0.clone();
    unsafe {
        accurate::zgemm(
            Rounding::Nearest,
            Trans::No,
            Trans::No,
            m,
            n,
            k,
            al,
            a.as_ptr(),
            m,
            b.as_ptr(),
            k,
            be,
            want.as_mut_ptr(),
            m,
        );
    }
    let (mi, ni, ki) = (m as i32, n as i32, k as i32);
    let nn = b"N".as_ptr() as *const c_char;
    let zgemm = |c: &mut [f64]| unsafe {
        zgemm_(
            nn,
            nn,
            &mi,
            &ni,
            &ki,
            al.as_ptr().cast(),
            a.as_ptr().cast(),
            &mi,
            b.as_ptr().cast(),
            &ki,
            be.as_ptr().cast(),
            c.as_mut_ptr().cast(),
            &mi,
        )
    };
    let mut native = c0.clone();
    zgemm(&mut native);
    assert_ne!(bits(&native), bits(&want), "the test's product has no cancellation to show");
    let mut got = c0.clone();
    accurate::with_mode(accurate::Mode::Accurate(Rounding::Nearest), || zgemm(&mut got));
    assert_eq!(bits(&got), bits(&want), "zgemm_");
    let mut got = c0.clone();
    accurate::with_mode(accurate::Mode::Accurate(Rounding::Nearest), || unsafe {
        cblas_zgemm(
            102,
            111,
            111,
            mi,
            ni,
            ki,
            al.as_ptr().cast(),
            a.as_ptr().cast(),
            mi,
            b.as_ptr().cast(),
            ki,
            be.as_ptr().cast(),
            got.as_mut_ptr().cast(),
            mi,
        )
    });
    assert_eq!(bits(&got), bits(&want), "cblas_zgemm column-major");
    // Row-major with conjugate transposes (op(A) = A): A stored as the k x m row-major
    // matrix S with S^H = A, element (l, i) = conj A(i, l) at l m + i, i.e. column-major A's
    // array conjugated (and B likewise); C row-major is C's array transposed.
    let plain_t = |x: &[f64], r: usize, c: usize| {
        let mut o = vec![0.0; 2 * r * c];
        for i in 0..r {
            for j in 0..c {
                o[2 * (j + i * c)] = x[2 * (i + j * r)];
                o[2 * (j + i * c) + 1] = x[2 * (i + j * r) + 1];
            }
        }
        o
    };
    let ar: Vec<f64> = a.chunks(2).flat_map(|z| [z[0], -z[1]]).collect();
    let br: Vec<f64> = b.chunks(2).flat_map(|z| [z[0], -z[1]]).collect();
    let mut cr = plain_t(&c0, m, n);
    accurate::with_mode(accurate::Mode::Accurate(Rounding::Nearest), || unsafe {
        cblas_zgemm(
            101,
            113,
            113,
            mi,
            ni,
            ki,
            al.as_ptr().cast(),
            ar.as_ptr().cast(),
            mi,
            br.as_ptr().cast(),
            ki,
            be.as_ptr().cast(),
            cr.as_mut_ptr().cast(),
            ni,
        )
    });
    assert_eq!(bits(&cr), bits(&plain_t(&want, m, n)), "cblas_zgemm row-major, conjugate transposes");
}
