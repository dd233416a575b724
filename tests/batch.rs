//! Batched GEMM (`cblas_?gemm_batch`, `cblas_?gemm_batch_strided`, the Fortran `?gemm_batch_`,
//! `?gemm_batch_strided_`, LP64 and ILP64) against a loop of single `cblas_?gemm` calls on fresh
//! random data: groups of different shapes and transposes in one call, group sizes 0 and 1,
//! both layouts, beta 0 over NaN, outputs shared between products (run in order), batches of
//! small products (many at once) and larger ones; and the argument errors as oneMKL reports them
//! (docs/batched.md), with nothing of any group written.

mod common;

use common::*;
use hyblas::abi::batch::{grouped_error, strided_error, GroupArgs};
use hyblas::types::{Scalar, Trans, C32, C64};
use std::ffi::{c_char, c_int};

const ROW: c_int = 101;
const COL: c_int = 102;
const N: c_int = 111;
const T: c_int = 112;
const C: c_int = 113;

#[rustfmt::skip]
extern "C" {
    fn cblas_sgemm(l: c_int, ta: c_int, tb: c_int, m: c_int, n: c_int, k: c_int, al: f32, a: *const f32, lda: c_int, b: *const f32, ldb: c_int, be: f32, c: *mut f32, ldc: c_int);
    fn cblas_dgemm(l: c_int, ta: c_int, tb: c_int, m: c_int, n: c_int, k: c_int, al: f64, a: *const f64, lda: c_int, b: *const f64, ldb: c_int, be: f64, c: *mut f64, ldc: c_int);
    fn cblas_cgemm(l: c_int, ta: c_int, tb: c_int, m: c_int, n: c_int, k: c_int, al: *const C32, a: *const C32, lda: c_int, b: *const C32, ldb: c_int, be: *const C32, c: *mut C32, ldc: c_int);
    fn cblas_zgemm(l: c_int, ta: c_int, tb: c_int, m: c_int, n: c_int, k: c_int, al: *const C64, a: *const C64, lda: c_int, b: *const C64, ldb: c_int, be: *const C64, c: *mut C64, ldc: c_int);
    fn cblas_sgemm_batch(l: c_int, ta: *const c_int, tb: *const c_int, m: *const c_int, n: *const c_int, k: *const c_int, al: *const f32, a: *const *const f32, lda: *const c_int, b: *const *const f32, ldb: *const c_int, be: *const f32, c: *const *mut f32, ldc: *const c_int, gc: c_int, gs: *const c_int);
    fn cblas_dgemm_batch(l: c_int, ta: *const c_int, tb: *const c_int, m: *const c_int, n: *const c_int, k: *const c_int, al: *const f64, a: *const *const f64, lda: *const c_int, b: *const *const f64, ldb: *const c_int, be: *const f64, c: *const *mut f64, ldc: *const c_int, gc: c_int, gs: *const c_int);
    fn cblas_cgemm_batch(l: c_int, ta: *const c_int, tb: *const c_int, m: *const c_int, n: *const c_int, k: *const c_int, al: *const C32, a: *const *const C32, lda: *const c_int, b: *const *const C32, ldb: *const c_int, be: *const C32, c: *const *mut C32, ldc: *const c_int, gc: c_int, gs: *const c_int);
    fn cblas_zgemm_batch(l: c_int, ta: *const c_int, tb: *const c_int, m: *const c_int, n: *const c_int, k: *const c_int, al: *const C64, a: *const *const C64, lda: *const c_int, b: *const *const C64, ldb: *const c_int, be: *const C64, c: *const *mut C64, ldc: *const c_int, gc: c_int, gs: *const c_int);
    fn cblas_dgemm_batch64_(l: c_int, ta: *const c_int, tb: *const c_int, m: *const i64, n: *const i64, k: *const i64, al: *const f64, a: *const *const f64, lda: *const i64, b: *const *const f64, ldb: *const i64, be: *const f64, c: *const *mut f64, ldc: *const i64, gc: i64, gs: *const i64);
    fn dgemm_batch_(ta: *const c_char, tb: *const c_char, m: *const i32, n: *const i32, k: *const i32, al: *const f64, a: *const *const f64, lda: *const i32, b: *const *const f64, ldb: *const i32, be: *const f64, c: *const *mut f64, ldc: *const i32, gc: *const i32, gs: *const i32);
    fn zgemm_batch_64_(ta: *const c_char, tb: *const c_char, m: *const i64, n: *const i64, k: *const i64, al: *const C64, a: *const *const C64, lda: *const i64, b: *const *const C64, ldb: *const i64, be: *const C64, c: *const *mut C64, ldc: *const i64, gc: *const i64, gs: *const i64);
    fn cblas_dgemm_batch_strided(l: c_int, ta: c_int, tb: c_int, m: c_int, n: c_int, k: c_int, al: f64, a: *const f64, lda: c_int, sa: c_int, b: *const f64, ldb: c_int, sb: c_int, be: f64, c: *mut f64, ldc: c_int, sc: c_int, bs: c_int);
    fn cblas_zgemm_batch_strided64_(l: c_int, ta: c_int, tb: c_int, m: i64, n: i64, k: i64, al: *const C64, a: *const C64, lda: i64, sa: i64, b: *const C64, ldb: i64, sb: i64, be: *const C64, c: *mut C64, ldc: i64, sc: i64, bs: i64);
    fn sgemm_batch_strided_(ta: *const c_char, tb: *const c_char, m: *const i32, n: *const i32, k: *const i32, al: *const f32, a: *const f32, lda: *const i32, sa: *const i32, b: *const f32, ldb: *const i32, sb: *const i32, be: *const f32, c: *mut f32, ldc: *const i32, sc: *const i32, bs: *const i32);
}

/// One precision's single and grouped CBLAS calls (LP64).
trait Prec: Scalar {
    #[allow(clippy::too_many_arguments)]
    unsafe fn single(
        l: c_int,
        ta: c_int,
        tb: c_int,
        m: c_int,
        n: c_int,
        k: c_int,
        al: Self,
        a: *const Self,
        lda: c_int,
        b: *const Self,
        ldb: c_int,
        be: Self,
        c: *mut Self,
        ldc: c_int,
    );
    #[allow(clippy::too_many_arguments)]
    unsafe fn batch(
        l: c_int,
        ta: *const c_int,
        tb: *const c_int,
        m: *const c_int,
        n: *const c_int,
        k: *const c_int,
        al: *const Self,
        a: *const *const Self,
        lda: *const c_int,
        b: *const *const Self,
        ldb: *const c_int,
        be: *const Self,
        c: *const *mut Self,
        ldc: *const c_int,
        gc: c_int,
        gs: *const c_int,
    );
}
macro_rules! prec {
    ($T:ty, $single:ident, $batch:ident, real) => {
        impl Prec for $T {
            unsafe fn single(
                l: c_int,
                ta: c_int,
                tb: c_int,
                m: c_int,
                n: c_int,
                k: c_int,
                al: Self,
                a: *const Self,
                lda: c_int,
                b: *const Self,
                ldb: c_int,
                be: Self,
                c: *mut Self,
                ldc: c_int,
            ) {
                $single(l, ta, tb, m, n, k, al, a, lda, b, ldb, be, c, ldc)
            }
            unsafe fn batch(
                l: c_int,
                ta: *const c_int,
                tb: *const c_int,
                m: *const c_int,
                n: *const c_int,
                k: *const c_int,
                al: *const Self,
                a: *const *const Self,
                lda: *const c_int,
                b: *const *const Self,
                ldb: *const c_int,
                be: *const Self,
                c: *const *mut Self,
                ldc: *const c_int,
                gc: c_int,
                gs: *const c_int,
            ) {
                $batch(l, ta, tb, m, n, k, al, a, lda, b, ldb, be, c, ldc, gc, gs)
            }
        }
    };
    ($T:ty, $single:ident, $batch:ident, complex) => {
        impl Prec for $T {
            unsafe fn single(
                l: c_int,
                ta: c_int,
                tb: c_int,
                m: c_int,
                n: c_int,
                k: c_int,
                al: Self,
                a: *const Self,
                lda: c_int,
                b: *const Self,
                ldb: c_int,
                be: Self,
                c: *mut Self,
                ldc: c_int,
            ) {
                $single(l, ta, tb, m, n, k, &al, a, lda, b, ldb, &be, c, ldc)
            }
            unsafe fn batch(
                l: c_int,
                ta: *const c_int,
                tb: *const c_int,
                m: *const c_int,
                n: *const c_int,
                k: *const c_int,
                al: *const Self,
                a: *const *const Self,
                lda: *const c_int,
                b: *const *const Self,
                ldb: *const c_int,
                be: *const Self,
                c: *const *mut Self,
                ldc: *const c_int,
                gc: c_int,
                gs: *const c_int,
            ) {
                $batch(l, ta, tb, m, n, k, al, a, lda, b, ldb, be, c, ldc, gc, gs)
            }
        }
    };
}
prec!(f32, cblas_sgemm, cblas_sgemm_batch, real);
prec!(f64, cblas_dgemm, cblas_dgemm_batch, real);
prec!(C32, cblas_cgemm, cblas_cgemm_batch, complex);
prec!(C64, cblas_zgemm, cblas_zgemm_batch, complex);

/// One group of a test batch.
#[derive(Clone, Copy)]
struct G {
    ta: c_int,
    tb: c_int,
    m: usize,
    n: usize,
    k: usize,
    size: usize,
    beta: u8,
}

/// Operands of one product, stored as the layout says, with one spare row/column of padding.
struct Ops<T> {
    a: Vec<T>,
    b: Vec<T>,
    c: Vec<T>,
    lda: usize,
    ldb: usize,
    ldc: usize,
}

fn stored(row: bool, t: c_int, rows: usize, cols: usize) -> (usize, usize) {
    // (leading dimension's count, the other) of op(X) = rows x cols as stored.
    let (r, c) = if t == N { (rows, cols) } else { (cols, rows) };
    if row {
        (c, r)
    } else {
        (r, c)
    }
}

/// A group's leading dimensions: each one more than its minimum (two for B).
fn lds(row: bool, g: &G) -> (usize, usize, usize) {
    let la = stored(row, g.ta, g.m, g.k).0;
    let lb = stored(row, g.tb, g.k, g.n).0;
    let lc = if row { g.n } else { g.m };
    (la.max(1) + 1, lb.max(1) + 2, lc.max(1) + 1)
}

fn make<T: Scalar>(row: bool, g: &G, rng: &mut Rng) -> Ops<T> {
    let oa = stored(row, g.ta, g.m, g.k).1;
    let ob = stored(row, g.tb, g.k, g.n).1;
    let oc = if row { g.m } else { g.n };
    let (lda, ldb, ldc) = lds(row, g);
    let mut c: Vec<T> = rng.vec(ldc * oc.max(1));
    if g.beta == 0 {
        c.iter_mut().for_each(|x| *x = nan());
    }
    Ops { a: rng.vec(lda * oa.max(1)), b: rng.vec(ldb * ob.max(1)), c, lda, ldb, ldc }
}

/// Run `groups` as one grouped call and as a loop of single calls; compare.
fn grouped_vs_loop<T: Prec>(layout: c_int, groups: &[G], seed: u64) {
    let row = layout == ROW;
    let mut rng = Rng::new(seed);
    let mut ops: Vec<Ops<T>> = Vec::new();
    let (mut alphas, mut betas) = (Vec::new(), Vec::new());
    for g in groups {
        alphas.push(rng.scalar::<T>());
        betas.push(scalar_of::<T>(g.beta, &mut rng));
        for _ in 0..g.size {
            ops.push(make::<T>(row, g, &mut rng));
        }
    }
    let mut want: Vec<Vec<T>> = ops.iter().map(|o| o.c.clone()).collect();
    let mut p = 0;
    for (gi, g) in groups.iter().enumerate() {
        for _ in 0..g.size {
            let o = &ops[p];
            unsafe {
                T::single(
                    layout,
                    g.ta,
                    g.tb,
                    g.m as c_int,
                    g.n as c_int,
                    g.k as c_int,
                    alphas[gi],
                    o.a.as_ptr(),
                    o.lda as c_int,
                    o.b.as_ptr(),
                    o.ldb as c_int,
                    betas[gi],
                    want[p].as_mut_ptr(),
                    o.ldc as c_int,
                );
            }
            p += 1;
        }
    }
    let col = |f: &dyn Fn(&G) -> c_int| groups.iter().map(f).collect::<Vec<c_int>>();
    let (ta, tb) = (col(&|g| g.ta), col(&|g| g.tb));
    let (m, n, k, gs) =
        (col(&|g| g.m as c_int), col(&|g| g.n as c_int), col(&|g| g.k as c_int), col(&|g| g.size as c_int));
    // Leading dimensions are per group, as `make` chose them (a group of no products is checked
    // too, so it gets valid ones).
    let lds: Vec<(usize, usize, usize)> = groups.iter().map(|g| lds(row, g)).collect();
    let lda: Vec<c_int> = lds.iter().map(|l| l.0 as c_int).collect();
    let ldb: Vec<c_int> = lds.iter().map(|l| l.1 as c_int).collect();
    let ldc: Vec<c_int> = lds.iter().map(|l| l.2 as c_int).collect();
    let a: Vec<*const T> = ops.iter().map(|o| o.a.as_ptr()).collect();
    let b: Vec<*const T> = ops.iter().map(|o| o.b.as_ptr()).collect();
    let c: Vec<*mut T> = ops.iter_mut().map(|o| o.c.as_mut_ptr()).collect();
    unsafe {
        T::batch(
            layout,
            ta.as_ptr(),
            tb.as_ptr(),
            m.as_ptr(),
            n.as_ptr(),
            k.as_ptr(),
            alphas.as_ptr(),
            a.as_ptr(),
            lda.as_ptr(),
            b.as_ptr(),
            ldb.as_ptr(),
            betas.as_ptr(),
            c.as_ptr(),
            ldc.as_ptr(),
            groups.len() as c_int,
            gs.as_ptr(),
        );
    }
    for (i, (o, w)) in ops.iter().zip(&want).enumerate() {
        let kmax = groups.iter().map(|g| g.k).max().unwrap_or(1);
        assert_close(&o.c, w, kmax, &format!("{} layout {layout} product {i}", T::PREFIX));
    }
}

fn mixed_groups() -> Vec<G> {
    vec![
        G { ta: N, tb: N, m: 7, n: 5, k: 9, size: 3, beta: 0 },
        G { ta: T, tb: N, m: 4, n: 6, k: 3, size: 0, beta: 1 },
        G { ta: N, tb: T, m: 1, n: 8, k: 5, size: 1, beta: 2 },
        G { ta: T, tb: T, m: 16, n: 16, k: 16, size: 5, beta: 2 },
        G { ta: C, tb: N, m: 3, n: 3, k: 0, size: 2, beta: 2 },
        G { ta: N, tb: C, m: 0, n: 4, k: 4, size: 1, beta: 2 },
        G { ta: N, tb: N, m: 150, n: 130, k: 120, size: 2, beta: 1 },
    ]
}

#[test]
fn grouped_matches_a_loop_of_single_calls() {
    for layout in [COL, ROW] {
        grouped_vs_loop::<f32>(layout, &mixed_groups(), 1);
        grouped_vs_loop::<f64>(layout, &mixed_groups(), 2);
        grouped_vs_loop::<C32>(layout, &mixed_groups(), 3);
        grouped_vs_loop::<C64>(layout, &mixed_groups(), 4);
    }
    // Many small products (run many at once) and an empty batch.
    let many = [
        G { ta: N, tb: T, m: 4, n: 4, k: 4, size: 2000, beta: 2 },
        G { ta: T, tb: N, m: 8, n: 3, k: 8, size: 500, beta: 0 },
    ];
    grouped_vs_loop::<f64>(COL, &many, 5);
    grouped_vs_loop::<C64>(ROW, &many, 6);
    grouped_vs_loop::<f64>(COL, &[], 7);
}

#[test]
fn products_sharing_an_output_run_in_order() {
    // C := A_i*B_i + C for i = 0..64 on the same C: the batch must equal the loop (in order;
    // run at once, the products would lose each other's updates).
    let mut rng = Rng::new(11);
    let (m, n, k, count) = (8usize, 8usize, 2048usize, 64usize);
    let a: Vec<Vec<f64>> = (0..count).map(|_| rng.vec(m * k)).collect();
    let b: Vec<Vec<f64>> = (0..count).map(|_| rng.vec(k * n)).collect();
    let c0: Vec<f64> = rng.vec(m * n);
    let mut want = c0.clone();
    for i in 0..count {
        unsafe {
            cblas_dgemm(
                COL,
                N,
                N,
                m as c_int,
                n as c_int,
                k as c_int,
                0.5,
                a[i].as_ptr(),
                m as c_int,
                b[i].as_ptr(),
                k as c_int,
                1.0,
                want.as_mut_ptr(),
                m as c_int,
            )
        };
    }
    let mut got = c0.clone();
    let ap: Vec<*const f64> = a.iter().map(|v| v.as_ptr()).collect();
    let bp: Vec<*const f64> = b.iter().map(|v| v.as_ptr()).collect();
    let cp: Vec<*mut f64> = vec![got.as_mut_ptr(); count];
    let i = |v: usize| [v as c_int];
    unsafe {
        cblas_dgemm_batch(
            COL,
            [N].as_ptr(),
            [N].as_ptr(),
            i(m).as_ptr(),
            i(n).as_ptr(),
            i(k).as_ptr(),
            [0.5].as_ptr(),
            ap.as_ptr(),
            i(m).as_ptr(),
            bp.as_ptr(),
            i(k).as_ptr(),
            [1.0].as_ptr(),
            cp.as_ptr(),
            i(m).as_ptr(),
            1,
            [count as c_int].as_ptr(),
        );
    }
    assert!(same_bits(&got, &want), "shared C: {got:?} vs {want:?}");
}

/// `count` single `cblas_?gemm` calls: product p reads A at `p * stride_a` (stride 0: one A for
/// all), B at `p * stride_b` and writes C at `p * stride_c`; each operand with its leading
/// dimension.
#[allow(clippy::too_many_arguments)]
fn reference_loop<T: Prec>(
    layout: c_int,
    ta: c_int,
    tb: c_int,
    (m, n, k): (usize, usize, usize),
    alpha: T,
    (a, sa, lda): (&[T], usize, usize),
    (b, sb, ldb): (&[T], usize, usize),
    beta: T,
    (c, sc, ldc): (&mut [T], usize, usize),
    count: usize,
) {
    let i = |v: usize| v as c_int;
    for p in 0..count {
        let (ap, bp, cp) = (a[p * sa..].as_ptr(), b[p * sb..].as_ptr(), c[p * sc..].as_mut_ptr());
        unsafe { T::single(layout, ta, tb, i(m), i(n), i(k), alpha, ap, i(lda), bp, i(ldb), beta, cp, i(ldc)) };
    }
}

#[test]
fn ilp64_fortran_and_strided_forms() {
    let mut rng = Rng::new(21);
    let (m, n, k, count) = (5usize, 7usize, 3usize, 4usize);
    let a: Vec<f64> = rng.vec(m * k * count);
    let b: Vec<f64> = rng.vec(k * n * count);
    let c0: Vec<f64> = rng.vec(m * n * count);
    let mut want = c0.clone();
    reference_loop(COL, N, T, (m, n, k), 1.5, (&a, m * k, m), (&b, k * n, n), -0.5, (&mut want, m * n, m), count);
    let ap: Vec<*const f64> = (0..count).map(|p| a[p * m * k..].as_ptr()).collect();
    let bp: Vec<*const f64> = (0..count).map(|p| b[p * k * n..].as_ptr()).collect();
    // ILP64 CBLAS.
    let mut got = c0.clone();
    let cp: Vec<*mut f64> = (0..count).map(|p| got[p * m * n..].as_mut_ptr()).collect();
    let l = |v: usize| [v as i64];
    unsafe {
        cblas_dgemm_batch64_(
            COL,
            [N].as_ptr(),
            [T].as_ptr(),
            l(m).as_ptr(),
            l(n).as_ptr(),
            l(k).as_ptr(),
            [1.5].as_ptr(),
            ap.as_ptr(),
            l(m).as_ptr(),
            bp.as_ptr(),
            l(n).as_ptr(),
            [-0.5].as_ptr(),
            cp.as_ptr(),
            l(m).as_ptr(),
            1,
            l(count).as_ptr(),
        );
    }
    assert_close(&got, &want, k, "cblas_dgemm_batch64_");
    // Fortran LP64 (two groups of two, same arguments).
    let mut got = c0.clone();
    let cp: Vec<*mut f64> = (0..count).map(|p| got[p * m * n..].as_mut_ptr()).collect();
    let i2 = |v: usize| [v as i32, v as i32];
    unsafe {
        dgemm_batch_(
            b"NN".as_ptr() as *const c_char,
            b"tT".as_ptr() as *const c_char,
            i2(m).as_ptr(),
            i2(n).as_ptr(),
            i2(k).as_ptr(),
            [1.5, 1.5].as_ptr(),
            ap.as_ptr(),
            i2(m).as_ptr(),
            bp.as_ptr(),
            i2(n).as_ptr(),
            [-0.5, -0.5].as_ptr(),
            cp.as_ptr(),
            i2(m).as_ptr(),
            &2,
            i2(2).as_ptr(),
        );
    }
    assert_close(&got, &want, k, "dgemm_batch_");
    // Strided, CBLAS LP64.
    let mut got = c0.clone();
    unsafe {
        cblas_dgemm_batch_strided(
            COL,
            N,
            T,
            m as c_int,
            n as c_int,
            k as c_int,
            1.5,
            a.as_ptr(),
            m as c_int,
            (m * k) as c_int,
            b.as_ptr(),
            n as c_int,
            (k * n) as c_int,
            -0.5,
            got.as_mut_ptr(),
            m as c_int,
            (m * n) as c_int,
            count as c_int,
        );
    }
    assert_close(&got, &want, k, "cblas_dgemm_batch_strided");
    // Strided, stride 0 for A (one A for every product), Fortran single precision.
    let a32: Vec<f32> = rng.vec(m * k);
    let b32: Vec<f32> = rng.vec(k * n * count);
    let c32: Vec<f32> = rng.vec(m * n * count);
    let mut want32 = c32.clone();
    reference_loop(COL, N, N, (m, n, k), 2.0, (&a32, 0, m), (&b32, k * n, k), 0.0, (&mut want32, m * n, m), count);
    let mut got32 = c32.clone();
    let r = |v: usize| v as i32;
    unsafe {
        sgemm_batch_strided_(
            b"N".as_ptr() as *const c_char,
            b"N".as_ptr() as *const c_char,
            &r(m),
            &r(n),
            &r(k),
            &2.0,
            a32.as_ptr(),
            &r(m),
            &0,
            b32.as_ptr(),
            &r(k),
            &r(k * n),
            &0.0,
            got32.as_mut_ptr(),
            &r(m),
            &r(m * n),
            &r(count),
        );
    }
    assert_close(&got32, &want32, k, "sgemm_batch_strided_");
    // Complex, ILP64 strided, row-major, and the Fortran ILP64 grouped form.
    let az: Vec<C64> = rng.vec(m * k * count);
    let bz: Vec<C64> = rng.vec(k * n * count);
    let cz: Vec<C64> = rng.vec(m * n * count);
    let (al, be) = (rng.scalar::<C64>(), rng.scalar::<C64>());
    let mut wantz = cz.clone();
    reference_loop(ROW, C, N, (m, n, k), al, (&az, m * k, m), (&bz, k * n, n), be, (&mut wantz, m * n, n), count);
    let mut gotz = cz.clone();
    unsafe {
        cblas_zgemm_batch_strided64_(
            ROW,
            C,
            N,
            m as i64,
            n as i64,
            k as i64,
            &al,
            az.as_ptr(),
            m as i64,
            (m * k) as i64,
            bz.as_ptr(),
            n as i64,
            (k * n) as i64,
            &be,
            gotz.as_mut_ptr(),
            n as i64,
            (m * n) as i64,
            count as i64,
        );
    }
    assert_close(&gotz, &wantz, k, "cblas_zgemm_batch_strided64_");
    // Fortran grouped, ILP64, column-major: op(A) = A^H with A stored k x m.
    let mut wantz = cz.clone();
    reference_loop(COL, C, N, (m, n, k), al, (&az, m * k, k), (&bz, k * n, k), be, (&mut wantz, m * n, m), count);
    let mut gotz = cz.clone();
    let azp: Vec<*const C64> = (0..count).map(|p| az[p * m * k..].as_ptr()).collect();
    let bzp: Vec<*const C64> = (0..count).map(|p| bz[p * k * n..].as_ptr()).collect();
    let czp: Vec<*mut C64> = (0..count).map(|p| gotz[p * m * n..].as_mut_ptr()).collect();
    unsafe {
        zgemm_batch_64_(
            b"c".as_ptr() as *const c_char,
            b"n".as_ptr() as *const c_char,
            l(m).as_ptr(),
            l(n).as_ptr(),
            l(k).as_ptr(),
            &al,
            azp.as_ptr(),
            l(k).as_ptr(),
            bzp.as_ptr(),
            l(k).as_ptr(),
            &be,
            czp.as_ptr(),
            l(m).as_ptr(),
            &1,
            l(count).as_ptr(),
        );
    }
    assert_close(&gotz, &wantz, k, "zgemm_batch_64_");
}

/// oneMKL 2026.2's numbers for the cases of docs/batched.md (Fortran numbering: CBLAS adds 1).
#[test]
fn errors_are_numbered_as_onemkl_numbers_them() {
    let ok = GroupArgs { ta: Some(Trans::No), tb: Some(Trans::No), m: 2, n: 2, k: 2, lda: 2, ldb: 2, ldc: 2 };
    let two = |f: &dyn Fn(&mut [GroupArgs; 2])| {
        let mut g = [ok, ok];
        f(&mut g);
        g
    };
    let e = |g: [GroupArgs; 2], s: [isize; 2]| grouped_error(false, &g, &s).map(|p| p + 1);
    assert_eq!(e([ok, ok], [1, 1]), None);
    assert_eq!(e(two(&|g| g[0].ta = None), [1, 1]), Some(2));
    assert_eq!(e(two(&|g| g[1].tb = None), [1, 1]), Some(3));
    assert_eq!(e(two(&|g| g[0].m = -1), [1, 1]), Some(4));
    assert_eq!(e(two(&|g| g[1].n = -1), [1, 1]), Some(5));
    assert_eq!(e(two(&|g| g[1].k = -1), [1, 1]), Some(6));
    assert_eq!(e(two(&|g| g[1].lda = 1), [1, 1]), Some(9));
    assert_eq!(e(two(&|g| g[1].ldb = 1), [1, 1]), Some(11));
    assert_eq!(e(two(&|g| g[1].ldc = 1), [1, 1]), Some(14));
    // A group of no products is checked; the lowest position over all groups wins; sizes last.
    assert_eq!(e(two(&|g| g[1].lda = 1), [1, 0]), Some(9));
    assert_eq!(
        e(
            two(&|g| {
                g[0].ldc = 1;
                g[1].m = -1
            }),
            [1, 1]
        ),
        Some(4)
    );
    assert_eq!(e(two(&|g| g[1].ta = None), [1, 0]), Some(2));
    assert_eq!(e(two(&|g| g[1].m = -1), [-1, 1]), Some(4));
    // (A negative group size: Fortran position 15, which MKL reports from the CBLAS form too.)
    assert_eq!(grouped_error(false, &[ok, ok], &[1, -1]), Some(15));
    // lda 2 < m 3 is bad column-major (A is m x k) and fine row-major (A is m x k, ld >= k).
    let tall = GroupArgs { m: 3, ..ok };
    assert_eq!(grouped_error(false, &[tall], &[1]).map(|p| p + 1), Some(9));
    assert_eq!(grouped_error(true, &[tall], &[1]), None);
    // Strided: 101 batch -1 -> 18; 103 stridec 1 -> 17; 104 lda 1 -> 9; 105 m -1 -> 4; small
    // stridea / strideb are fine (products may share an input).
    let s = |g: GroupArgs, sc: isize, bs: isize| strided_error(false, &g, sc, bs).map(|p| p + 1);
    assert_eq!(s(ok, 4, 2), None);
    assert_eq!(s(ok, 4, -1), Some(18));
    assert_eq!(s(ok, 1, 2), Some(17));
    assert_eq!(s(GroupArgs { lda: 1, ..ok }, 4, 2), Some(9));
    assert_eq!(s(GroupArgs { m: -1, ..ok }, 4, 2), Some(4));
    assert_eq!(s(GroupArgs { ldb: 1, ..ok }, 4, 2), Some(12));
    assert_eq!(s(GroupArgs { ldc: 1, ..ok }, 4, 2), Some(16));
}

#[test]
fn a_bad_later_group_writes_nothing() {
    let mut rng = Rng::new(31);
    let a: Vec<f64> = rng.vec(16);
    let b: Vec<f64> = rng.vec(16);
    let mut c0: Vec<f64> = rng.vec(16);
    let mut c1: Vec<f64> = rng.vec(16);
    let (o0, o1) = (c0.clone(), c1.clone());
    let ap = [a.as_ptr(), a.as_ptr()];
    let bp = [b.as_ptr(), b.as_ptr()];
    let cp = [c0.as_mut_ptr(), c1.as_mut_ptr()];
    let two = |x: c_int, y: c_int| [x, y];
    // (layout, m, lda, ldc, group_count, group_size) of a two-group call.
    type Call = (c_int, [c_int; 2], [c_int; 2], [c_int; 2], c_int, [c_int; 2]);
    let calls: [Call; 6] = [
        (COL, two(2, 2), two(2, 1), two(2, 2), 2, two(1, 1)), // lda of group 1
        (COL, two(2, 2), two(2, 2), two(2, 1), 2, two(1, 1)), // ldc of group 1
        (COL, two(2, -1), two(2, 2), two(2, 2), 2, two(1, 1)), // m of group 1
        (COL, two(2, 2), two(2, 2), two(2, 2), -1, two(1, 1)), // group count
        (COL, two(2, 2), two(2, 2), two(2, 2), 2, two(1, -1)), // group size
        (7, two(2, 2), two(2, 2), two(2, 2), 2, two(1, 1)),   // layout
    ];
    for (lay, m, lda, ldc, gc, gs) in calls {
        unsafe {
            cblas_dgemm_batch(
                lay,
                [N, N].as_ptr(),
                [N, N].as_ptr(),
                m.as_ptr(),
                two(2, 2).as_ptr(),
                two(2, 2).as_ptr(),
                [1.0, 1.0].as_ptr(),
                ap.as_ptr(),
                lda.as_ptr(),
                bp.as_ptr(),
                two(2, 2).as_ptr(),
                [0.0, 0.0].as_ptr(),
                cp.as_ptr(),
                ldc.as_ptr(),
                gc,
                gs.as_ptr(),
            );
        }
        assert!(
            same_bits(&c0, &o0) && same_bits(&c1, &o1),
            "a bad argument wrote C (m {m:?} lda {lda:?} ldc {ldc:?} gc {gc} gs {gs:?})"
        );
    }
    // Strided: a bad stride of C writes nothing either.
    unsafe {
        cblas_dgemm_batch_strided(
            COL,
            N,
            N,
            2,
            2,
            2,
            1.0,
            a.as_ptr(),
            2,
            4,
            b.as_ptr(),
            2,
            4,
            0.0,
            c0.as_mut_ptr(),
            2,
            1,
            2,
        );
    }
    assert!(same_bits(&c0, &o0));
    let _ = &mut c1;
}

/// Products that read one A (or one B) for all: the batch packs it once (the engine's packed
/// one-block path: A too large for the tiny kernels, B transposed so it is packed too) and
/// gives the loop's bits, whether the operand repeats through every product, through a piece
/// of them, or not at all. Grouped (pointer arrays) and strided, with 2 threads splitting the
/// batch into pieces.
fn shared_operand_case<T: Prec>(seed: u64) {
    let mut rng = Rng::new(seed);
    let (m, n, k, count) = (40usize, 12usize, 300usize, 150usize);
    let (alpha, beta) = (rng.scalar::<T>(), rng.scalar::<T>());
    let i = |v: usize| v as c_int;
    // A as stored m x k (lda m), B stored n x k (transposed: ldb n).
    let a: Vec<Vec<T>> = (0..3).map(|_| rng.vec(m * k)).collect();
    let b: Vec<Vec<T>> = (0..3).map(|_| rng.vec(n * k)).collect();
    let c0: Vec<Vec<T>> = (0..count).map(|_| rng.vec(m * n)).collect();
    // Which A and B product p reads: every one the same A; B the same for the first 100, then
    // alternating; (the strided call below covers a B that never repeats).
    let (ai, bi) = (|_p: usize| 0usize, |p: usize| if p < 100 { 1 } else { p % 3 });
    let mut want = c0.clone();
    for (p, w) in want.iter_mut().enumerate() {
        let (ap, bp) = (a[ai(p)].as_ptr(), b[bi(p)].as_ptr());
        unsafe { T::single(COL, N, T, i(m), i(n), i(k), alpha, ap, i(m), bp, i(n), beta, w.as_mut_ptr(), i(m)) };
    }
    let mut got = c0.clone();
    let ap: Vec<*const T> = (0..count).map(|p| a[ai(p)].as_ptr()).collect();
    let bp: Vec<*const T> = (0..count).map(|p| b[bi(p)].as_ptr()).collect();
    let cp: Vec<*mut T> = got.iter_mut().map(|c| c.as_mut_ptr()).collect();
    unsafe {
        T::batch(
            COL,
            [N].as_ptr(),
            [T].as_ptr(),
            [i(m)].as_ptr(),
            [i(n)].as_ptr(),
            [i(k)].as_ptr(),
            [alpha].as_ptr(),
            ap.as_ptr(),
            [i(m)].as_ptr(),
            bp.as_ptr(),
            [i(n)].as_ptr(),
            [beta].as_ptr(),
            cp.as_ptr(),
            [i(m)].as_ptr(),
            1,
            [count as c_int].as_ptr(),
        );
    }
    for p in 0..count {
        assert!(same_bits(&got[p], &want[p]), "{} grouped, product {p}: not the loop's bits", T::PREFIX);
    }
}

#[test]
fn a_shared_operand_gives_the_loops_bits() {
    shared_operand_case::<f64>(41);
    shared_operand_case::<C32>(42);
    // Strided: A at stride 0 (one A), B fresh per product, in the engine's packed path.
    let mut rng = Rng::new(43);
    let (m, n, k, count) = (64usize, 8usize, 256usize, 300usize);
    let a: Vec<f64> = rng.vec(m * k);
    let b: Vec<f64> = rng.vec(k * n * count);
    let c0: Vec<f64> = rng.vec(m * n * count);
    let mut want = c0.clone();
    reference_loop(COL, N, N, (m, n, k), 0.75, (&a, 0, m), (&b, k * n, k), 1.25, (&mut want, m * n, m), count);
    let mut got = c0.clone();
    unsafe {
        cblas_dgemm_batch_strided(
            COL,
            N,
            N,
            m as c_int,
            n as c_int,
            k as c_int,
            0.75,
            a.as_ptr(),
            m as c_int,
            0,
            b.as_ptr(),
            k as c_int,
            (k * n) as c_int,
            1.25,
            got.as_mut_ptr(),
            m as c_int,
            (m * n) as c_int,
            count as c_int,
        );
    }
    assert!(same_bits(&got, &want), "strided, one A: not the loop's bits");
}
