//! hyblas's batched GEMM kernel for small products (`gpu::batched`, issue 48 item 3), called
//! directly, against the CPU engine on host copies of the same fresh random data, product by
//! product. Covered: the four precisions, every transpose pair (conjugates for complex), sizes
//! around the kernel's tile edges and k past one shared-memory chunk, strided operands and
//! device arrays of addresses (in a shuffled order), padded leading dimensions and gaps between
//! products left untouched, beta 0 over NaN, alpha 0 over NaN operands (A and B not read), k 0,
//! scalars in device memory, and every launch shape giving the same bits. Runs on a machine with
//! a GPU; elsewhere every test prints SKIPPED.

mod common;
#[path = "common/cublas.rs"]
mod harness;

use common::*;
use hyblas::gpu::batched::{self, At, BMat, Shape};
use hyblas::gpu::kernels::{Family, Unit};
use hyblas::gpu::{DeviceBuffer, Exec};
use hyblas::types::{Scalar, Trans, C32, C64};

/// How the products' operands are given.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Form {
    Strided,
    /// Device arrays of addresses; product p's operands in slot `order[p]` of the host buffers.
    Array,
}

#[derive(Clone, Copy)]
struct Case<T> {
    ta: Trans,
    tb: Trans,
    m: usize,
    n: usize,
    k: usize,
    batch: usize,
    alpha: T,
    beta: T,
    form: Form,
    dev_scalars: bool,
    /// alpha 0 with NaN in A and B: they must not be read.
    nan_ab: bool,
}

fn shapes(m: usize, n: usize) -> Vec<Shape> {
    let (m, n) = (m as i64, n as i64);
    let mut v = vec![Shape::of(m, n)];
    for r in [1, 2, 4] {
        for threads in [64, 256, 512] {
            let s = Shape { r, threads };
            if s.per_product(m, n) <= threads && !v.contains(&s) {
                v.push(s);
            }
        }
    }
    v
}

fn run<T: Scalar>(rt: &'static hyblas::gpu::Runtime, rng: &mut Rng, cs: &Case<T>) {
    let what = format!(
        "{}gemm batch {:?}{:?} m={} n={} k={} batch={} {:?} alpha={:?} beta={:?} dev={}",
        T::PREFIX,
        cs.ta,
        cs.tb,
        cs.m,
        cs.n,
        cs.k,
        cs.batch,
        cs.form,
        cs.alpha,
        cs.beta,
        cs.dev_scalars
    );
    let (m, n, k, count) = (cs.m, cs.n, cs.k, cs.batch);
    let (ra, ca) = if cs.ta == Trans::No { (m, k) } else { (k, m) };
    let (rb, cb) = if cs.tb == Trans::No { (k, n) } else { (n, k) };
    let (lda, ldb, ldc) = (ra.max(1) + 1, rb.max(1) + 2, m.max(1) + 3);
    let (sa, sb, sc) = (lda * ca + 3, ldb * cb + 1, ldc * n + 2);
    let mut a: Vec<T> = rng.vec(sa * count);
    let mut b: Vec<T> = rng.vec(sb * count);
    if cs.nan_ab {
        a.iter_mut().for_each(|x| *x = nan());
        b.iter_mut().for_each(|x| *x = nan());
    }
    let mut c: Vec<T> = rng.vec(sc * count);
    if cs.beta.is_zero() {
        nan_products(&mut c, count, sc, ldc, m, n);
    }
    // Slot of product p's operands (the array form reads them through shuffled addresses).
    let order: Vec<usize> = if cs.form == Form::Array { (0..count).rev().collect() } else { (0..count).collect() };
    let mut want = c.clone();
    let i = |v: usize| v as isize;
    for q in 0..count {
        unsafe {
            hyblas::plan::gemm::gemm(
                cs.ta,
                cs.tb,
                i(m),
                i(n),
                i(k),
                cs.alpha,
                a.as_ptr().add(q * sa),
                i(lda),
                b.as_ptr().add(q * sb),
                i(ldb),
                cs.beta,
                want.as_mut_ptr().add(q * sc),
                i(ldc),
            );
        }
    }
    let (da, db) = (harness::up(&a), harness::up(&b));
    let es = std::mem::size_of::<T>() as u64;
    let arrays = |base: u64, stride: usize| -> DeviceBuffer {
        let v: Vec<u64> = order.iter().map(|&q| base + (q * stride) as u64 * es).collect();
        harness::up(&v)
    };
    let sc_ = scalars(cs.alpha, cs.beta, cs.dev_scalars);
    let ex = Exec::own(rt);
    let mut first: Option<Vec<T>> = None;
    for shape in shapes(m, n) {
        let dc = harness::up(&c);
        let keep: Vec<DeviceBuffer>;
        let (am, bm, cm) = match cs.form {
            Form::Strided => {
                keep = vec![];
                let st = |x: &DeviceBuffer, s: usize, ld: usize| BMat {
                    at: At::Strided { ptr: x.ptr, stride: s as i64 },
                    ld: ld as i64,
                };
                (st(&da, sa, lda), st(&db, sb, ldb), st(&dc, sc, ldc))
            }
            Form::Array => {
                keep = vec![arrays(da.ptr, sa), arrays(db.ptr, sb), arrays(dc.ptr, sc)];
                let ar = |x: &DeviceBuffer, ld: usize| BMat { at: At::Array(x.ptr), ld: ld as i64 };
                (ar(&keep[0], lda), ar(&keep[1], ldb), ar(&keep[2], ldc))
            }
        };
        let (mi, ni, ki) = (m as i64, n as i64, k as i64);
        match batched::gemm_shaped(&ex, shape, cs.ta, cs.tb, mi, ni, ki, sc_.alpha, am, bm, sc_.beta, cm, count as i64)
        {
            Ok(()) => {}
            // A block larger than the kernel's registers allow (zgemm's 4 x 4 at 512 threads):
            // refused before launch, so nothing to compare. The default shape always runs.
            Err(e) if shape != Shape::of(mi, ni) && e.to_string().contains("registers allow") => continue,
            Err(e) => panic!("{what}: {shape:?}: {e}"),
        }
        rt.sync(ex.stream).expect("sync");
        let got: Vec<T> = harness::down(&dc);
        drop(keep);
        let tag = format!("{what} {shape:?}");
        assert_close(&got, &want, k, &tag);
        // Padding rows and the gaps between products are the caller's, byte for byte.
        assert_padding_kept(&got, &c, sc, ldc, m, n, &tag);
        match &first {
            None => first = Some(got),
            Some(f) => assert!(same_bits(f, &got), "{tag}: other bits than {:?}", Shape::of(mi, ni)),
        }
    }
}

const SIZES: &[(usize, usize, usize)] = &[
    (1, 1, 1),
    (2, 3, 4),
    (4, 4, 4),
    (5, 7, 3),
    (16, 16, 16),
    (17, 9, 33),
    (32, 32, 32),
    (33, 64, 100),
    (64, 64, 64),
    (64, 1, 130),
    (1, 64, 7),
];

fn pairs<T: Scalar>() -> Vec<(Trans, Trans)> {
    let (n, t, c) = (Trans::No, Trans::Trans, Trans::ConjTrans);
    if T::IS_COMPLEX {
        vec![(n, n), (c, n), (n, c), (t, c), (c, t)]
    } else {
        vec![(n, n), (n, t), (t, n), (t, t)]
    }
}

fn sweep<T: Scalar>(test: &str, seed: u64) {
    let Some(rt) = gpu_or_skip(test) else { return };
    rt.prepare(&[Unit::of(Family::Batch, T::PREFIX)]).expect("batch unit");
    let mut rng = Rng::new(seed);
    for (s, &(m, n, k)) in SIZES.iter().enumerate() {
        for (t, &(ta, tb)) in pairs::<T>().iter().enumerate() {
            let form = if (s + t) % 2 == 0 { Form::Strided } else { Form::Array };
            let beta = scalar_of::<T>(((s + t) % 3) as u8, &mut rng);
            let alpha = rng.scalar();
            let batch = 1 + (s * 7 + t * 3) % 23;
            let dev_scalars = (s + t) % 4 == 1;
            run(rt, &mut rng, &Case { ta, tb, m, n, k, batch, alpha, beta, form, dev_scalars, nan_ab: false });
        }
    }
    // alpha 0 over NaN operands (not read), k 0 (C := beta*C), beta 1 (nothing to do), in both
    // forms and scalar modes.
    for form in [Form::Strided, Form::Array] {
        for dev_scalars in [false, true] {
            let beta = rng.scalar();
            let base = Case {
                ta: Trans::No,
                tb: Trans::Trans,
                m: 6,
                n: 5,
                k: 4,
                batch: 9,
                alpha: T::zero(),
                beta,
                form,
                dev_scalars,
                nan_ab: true,
            };
            run(rt, &mut rng, &base);
            let alpha = rng.scalar();
            run(rt, &mut rng, &Case { k: 0, alpha, nan_ab: false, ..base });
            run(rt, &mut rng, &Case { beta: T::one(), nan_ab: false, alpha: T::zero(), ..base });
        }
    }
}

#[test]
fn sgemm_batch_kernel_matches_the_cpu() {
    sweep::<f32>("sgemm_batch_kernel_matches_the_cpu", 4801);
}

#[test]
fn dgemm_batch_kernel_matches_the_cpu() {
    sweep::<f64>("dgemm_batch_kernel_matches_the_cpu", 4802);
}

#[test]
fn cgemm_batch_kernel_matches_the_cpu() {
    sweep::<C32>("cgemm_batch_kernel_matches_the_cpu", 4803);
}

#[test]
fn zgemm_batch_kernel_matches_the_cpu() {
    sweep::<C64>("zgemm_batch_kernel_matches_the_cpu", 4804);
}

/// Arguments the kernel does not take are refused before anything is enqueued.
#[test]
fn batch_kernel_refuses_what_it_does_not_take() {
    let Some(rt) = gpu_or_skip("batch_kernel_refuses_what_it_does_not_take") else { return };
    let ex = Exec::own(rt);
    let c: Vec<f64> = vec![3.0; 65 * 65];
    let dc = harness::up(&c);
    let m = |ld: i64| BMat { at: At::Strided { ptr: dc.ptr, stride: 0 }, ld };
    let (one, n) = (hyblas::gpu::In::Host(1.0f64), Trans::No);
    let go = |mm: i64, nn: i64, ld: i64, shape: Shape| {
        batched::gemm_shaped(&ex, shape, n, n, mm, nn, 4, one, m(ld), m(ld), one, m(ld), 3)
    };
    assert!(go(65, 4, 65, Shape::of(64, 4)).is_err(), "m above 64");
    assert!(go(4, 65, 65, Shape::of(4, 64)).is_err(), "n above 64");
    assert!(go(8, 4, 7, Shape::of(8, 4)).is_err(), "lda below m");
    assert!(go(64, 64, 64, Shape { r: 1, threads: 256 }).is_err(), "64 x 64 with a thread per element");
    assert!(go(4, 4, 4, Shape { r: 3, threads: 256 }).is_err(), "r 3");
    let odd = BMat { at: At::Strided { ptr: dc.ptr + 4, stride: 0 }, ld: 8 };
    assert!(batched::gemm_shaped(&ex, Shape::of(4, 4), n, n, 4, 4, 4, one, odd, m(8), one, m(8), 3).is_err());
    rt.sync(ex.stream).unwrap();
    let got: Vec<f64> = harness::down(&dc);
    assert!(got.iter().all(|&v| v == 3.0), "a refused call wrote");
}
