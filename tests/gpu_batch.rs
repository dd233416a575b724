//! Batched GEMM on device memory (issue 48, item 3): `cblas_?gemm_batch_strided` and
//! `cblas_?gemm_batch` given device pointers run on the GPU (runs of products at constant steps
//! as one `cublas?gemmStridedBatched`, the others one by one through the GEMM planner's device
//! path), checked against the same batch on host copies of the same fresh random data (the CPU
//! engine). Covered: a strided batch (beta 0 over NaN), groups of which one is strided and one is
//! scattered over separate buffers, products that share an output (in order), alpha 0, and the
//! padding rows of C left untouched. Runs on a machine with a GPU and the real cuBLAS; elsewhere
//! every test prints SKIPPED.

mod common;
#[path = "common/cublas.rs"]
mod harness;

use common::*;
use hyblas::gpu::DeviceBuffer;
use hyblas::types::C64;
use std::ffi::c_int;

const COL: c_int = 102;
const N: c_int = 111;
const T: c_int = 112;

#[rustfmt::skip]
extern "C" {
    fn cblas_dgemm_batch(l: c_int, ta: *const c_int, tb: *const c_int, m: *const c_int, n: *const c_int, k: *const c_int, al: *const f64, a: *const *const f64, lda: *const c_int, b: *const *const f64, ldb: *const c_int, be: *const f64, c: *const *mut f64, ldc: *const c_int, gc: c_int, gs: *const c_int);
    fn cblas_dgemm_batch_strided(l: c_int, ta: c_int, tb: c_int, m: c_int, n: c_int, k: c_int, al: f64, a: *const f64, lda: c_int, sa: c_int, b: *const f64, ldb: c_int, sb: c_int, be: f64, c: *mut f64, ldc: c_int, sc: c_int, bs: c_int);
    fn cblas_zgemm_batch(l: c_int, ta: *const c_int, tb: *const c_int, m: *const c_int, n: *const c_int, k: *const c_int, al: *const C64, a: *const *const C64, lda: *const c_int, b: *const *const C64, ldb: *const c_int, be: *const C64, c: *const *mut C64, ldc: *const c_int, gc: c_int, gs: *const c_int);
    fn cblas_zgemm_batch_strided(l: c_int, ta: c_int, tb: c_int, m: c_int, n: c_int, k: c_int, al: *const C64, a: *const C64, lda: c_int, sa: c_int, b: *const C64, ldb: c_int, sb: c_int, be: *const C64, c: *mut C64, ldc: c_int, sc: c_int, bs: c_int);
}

fn up<T: Copy>(v: &[T]) -> DeviceBuffer {
    harness::up(v)
}

fn down<T: Copy + Default>(b: &DeviceBuffer) -> Vec<T> {
    harness::down(b)
}

fn dptr<T>(b: &DeviceBuffer, off: usize) -> *mut T {
    (b.ptr + (off * std::mem::size_of::<T>()) as u64) as *mut T
}

/// A strided DGEMM batch (A not transposed, B transposed, padded leading dimensions, beta 0
/// over NaN in C) and a strided ZGEMM batch (beta non-zero), device against host.
#[test]
fn strided_batch_on_device_matches_the_host() {
    let Some(_rt) = gpu_or_skip("strided_batch_on_device_matches_the_host") else { return };
    let mut rng = Rng::new(48_001);
    let (m, n, k, count) = (5usize, 7usize, 3usize, 300usize);
    let (lda, ldb, ldc) = (m + 2, n + 1, m + 3);
    let (sa, sb, sc) = (lda * k + 4, ldb * k, ldc * n + 1);
    let a: Vec<f64> = rng.vec(sa * count);
    let b: Vec<f64> = rng.vec(sb * count);
    // C: NaN in the products' elements (beta 0 must overwrite them), values in the padding.
    let mut c: Vec<f64> = rng.vec(sc * count);
    nan_products(&mut c, count, sc, ldc, m, n);
    let (da, db, dc) = (up(&a), up(&b), up(&c));
    let mut want = c.clone();
    let ci = |v: usize| v as c_int;
    unsafe {
        cblas_dgemm_batch_strided(
            COL,
            N,
            T,
            ci(m),
            ci(n),
            ci(k),
            1.5,
            a.as_ptr(),
            ci(lda),
            ci(sa),
            b.as_ptr(),
            ci(ldb),
            ci(sb),
            0.0,
            want.as_mut_ptr(),
            ci(ldc),
            ci(sc),
            ci(count),
        );
        cblas_dgemm_batch_strided(
            COL,
            N,
            T,
            ci(m),
            ci(n),
            ci(k),
            1.5,
            dptr(&da, 0),
            ci(lda),
            ci(sa),
            dptr(&db, 0),
            ci(ldb),
            ci(sb),
            0.0,
            dptr(&dc, 0),
            ci(ldc),
            ci(sc),
            ci(count),
        );
    }
    let got: Vec<f64> = down(&dc);
    assert!(want.iter().enumerate().all(|(i, w)| !w.is_nan() || i % sc >= ldc * n || i % sc % ldc >= m));
    assert_close(&got, &want, k, "dgemm_batch_strided on device");
    // The padding (rows past m, the gap past each C) is the caller's, byte for byte.
    assert_padding_kept(&got, &c, sc, ldc, m, n, "dgemm_batch_strided on device");

    let (m, n, k, count) = (9usize, 4usize, 6usize, 40usize);
    let (sa, sb, sc) = (m * k, k * n, m * n);
    let a: Vec<C64> = rng.vec(sa * count);
    let b: Vec<C64> = rng.vec(sb * count);
    let c: Vec<C64> = rng.vec(sc * count);
    let (al, be) = (C64::new(0.5, -1.25), C64::new(0.75, 0.5));
    let (da, db, dc) = (up(&a), up(&b), up(&c));
    let mut want = c.clone();
    unsafe {
        cblas_zgemm_batch_strided(
            COL,
            N,
            N,
            ci(m),
            ci(n),
            ci(k),
            &al,
            a.as_ptr(),
            ci(m),
            ci(sa),
            b.as_ptr(),
            ci(k),
            ci(sb),
            &be,
            want.as_mut_ptr(),
            ci(m),
            ci(sc),
            ci(count),
        );
        cblas_zgemm_batch_strided(
            COL,
            N,
            N,
            ci(m),
            ci(n),
            ci(k),
            &al,
            dptr(&da, 0),
            ci(m),
            ci(sa),
            dptr(&db, 0),
            ci(k),
            ci(sb),
            &be,
            dptr(&dc, 0),
            ci(m),
            ci(sc),
            ci(count),
        );
    }
    assert_close(&down::<C64>(&dc), &want, k, "zgemm_batch_strided on device");
}

/// Three groups on device memory: one whose products lie at constant steps in one buffer (a
/// strided call), one scattered over buffers of their own (one by one), one with alpha 0 (C :=
/// beta*C, A and B never read: their pointers are left dangling into a freed buffer's range).
#[test]
fn grouped_batch_on_device_matches_the_host() {
    let Some(_rt) = gpu_or_skip("grouped_batch_on_device_matches_the_host") else { return };
    let mut rng = Rng::new(48_002);
    // Group 0: 60 products of 4 x 4 x 4 packed one after the other.
    let (g0, s0) = (60usize, 16usize);
    let a0: Vec<f64> = rng.vec(s0 * g0);
    let b0: Vec<f64> = rng.vec(s0 * g0);
    let c0: Vec<f64> = rng.vec(s0 * g0);
    // Group 1: 3 products of 33 x 17 x 9 (A^T), each in its own buffers.
    let (m1, n1, k1) = (33usize, 17usize, 9usize);
    let a1: Vec<Vec<f64>> = (0..3).map(|_| rng.vec(k1 * m1)).collect();
    let b1: Vec<Vec<f64>> = (0..3).map(|_| rng.vec(k1 * n1)).collect();
    let c1: Vec<Vec<f64>> = (0..3).map(|_| rng.vec(m1 * n1)).collect();
    // Group 2: 2 products of 6 x 5, alpha 0.
    let c2: Vec<Vec<f64>> = (0..2).map(|_| rng.vec(6 * 5)).collect();

    let (da0, db0, dc0) = (up(&a0), up(&b0), up(&c0));
    let da1: Vec<DeviceBuffer> = a1.iter().map(|v| up(v)).collect();
    let db1: Vec<DeviceBuffer> = b1.iter().map(|v| up(v)).collect();
    let dc1: Vec<DeviceBuffer> = c1.iter().map(|v| up(v)).collect();
    let dc2: Vec<DeviceBuffer> = c2.iter().map(|v| up(v)).collect();

    let ta = [N, T, N];
    let tb = [N, N, T];
    let (m, n, k) = ([4, 33, 6], [4, 17, 5], [4, 9, 3]);
    let (alpha, beta) = ([1.0, -0.5, 0.0], [0.0, 0.25, 2.0]);
    let (lda, ldb, ldc) = ([4, 9, 6], [4, 9, 5], [4, 33, 6]);
    let sizes = [g0 as c_int, 3, 2];
    let dangling = 0x7000_0000_0000u64 as *const f64;

    // Host: the same calls on host copies.
    let mut hc0 = c0.clone();
    let mut hc1 = c1.clone();
    let mut hc2 = c2.clone();
    let mut ha: Vec<*const f64> = (0..g0).map(|p| a0[p * s0..].as_ptr()).collect();
    let mut hb: Vec<*const f64> = (0..g0).map(|p| b0[p * s0..].as_ptr()).collect();
    let mut hc: Vec<*mut f64> = (0..g0).map(|p| hc0[p * s0..].as_mut_ptr()).collect();
    for p in 0..3 {
        ha.push(a1[p].as_ptr());
        hb.push(b1[p].as_ptr());
        hc.push(hc1[p].as_mut_ptr());
    }
    for c in hc2.iter_mut() {
        ha.push(dangling);
        hb.push(dangling);
        hc.push(c.as_mut_ptr());
    }
    // Device: the same structure over the device buffers.
    let mut da: Vec<*const f64> = (0..g0).map(|p| dptr(&da0, p * s0) as *const f64).collect();
    let mut db: Vec<*const f64> = (0..g0).map(|p| dptr(&db0, p * s0) as *const f64).collect();
    let mut dc: Vec<*mut f64> = (0..g0).map(|p| dptr(&dc0, p * s0)).collect();
    for p in 0..3 {
        da.push(dptr(&da1[p], 0));
        db.push(dptr(&db1[p], 0));
        dc.push(dptr(&dc1[p], 0));
    }
    for c in &dc2 {
        da.push(dangling);
        db.push(dangling);
        dc.push(dptr(c, 0));
    }
    unsafe {
        let call = |a: &[*const f64], b: &[*const f64], c: &[*mut f64]| {
            cblas_dgemm_batch(
                COL,
                ta.as_ptr(),
                tb.as_ptr(),
                m.as_ptr(),
                n.as_ptr(),
                k.as_ptr(),
                alpha.as_ptr(),
                a.as_ptr(),
                lda.as_ptr(),
                b.as_ptr(),
                ldb.as_ptr(),
                beta.as_ptr(),
                c.as_ptr(),
                ldc.as_ptr(),
                3,
                sizes.as_ptr(),
            )
        };
        call(&ha, &hb, &hc);
        call(&da, &db, &dc);
    }
    assert_close(&down::<f64>(&dc0), &hc0, 4, "group 0 (strided) on device");
    for p in 0..3 {
        assert_close(&down::<f64>(&dc1[p]), &hc1[p], k1, "group 1 (one by one) on device");
    }
    for p in 0..2 {
        assert_close(&down::<f64>(&dc2[p]), &hc2[p], 1, "group 2 (alpha 0) on device");
        assert!(hc2[p].iter().zip(&c2[p]).all(|(h, c)| *h == 2.0 * c), "alpha 0: C := beta*C on the host");
    }
}

/// Products that share their output accumulate in order (beta 1): on device memory too.
#[test]
fn shared_outputs_on_device_accumulate_in_order() {
    let Some(_rt) = gpu_or_skip("shared_outputs_on_device_accumulate_in_order") else { return };
    let mut rng = Rng::new(48_003);
    let (m, n, k, count) = (8usize, 6usize, 5usize, 12usize);
    let a: Vec<f64> = rng.vec(m * k * count);
    let b: Vec<f64> = rng.vec(k * n * count);
    let c: Vec<f64> = rng.vec(m * n);
    let (da, db, dc) = (up(&a), up(&b), up(&c));
    let mut want = c.clone();
    let ci = |v: usize| v as c_int;
    unsafe {
        // stridec 0 is outside the strided API's rules (it reports it), so the shared output
        // goes through the grouped API: every product's C is the same matrix.
        let hc: Vec<*mut f64> = vec![want.as_mut_ptr(); count];
        let dcs: Vec<*mut f64> = vec![dptr(&dc, 0); count];
        let ha: Vec<*const f64> = (0..count).map(|p| a[p * m * k..].as_ptr()).collect();
        let hb: Vec<*const f64> = (0..count).map(|p| b[p * k * n..].as_ptr()).collect();
        let das: Vec<*const f64> = (0..count).map(|p| dptr(&da, p * m * k) as *const f64).collect();
        let dbs: Vec<*const f64> = (0..count).map(|p| dptr(&db, p * k * n) as *const f64).collect();
        let (mm, nn, kk) = ([ci(m)], [ci(n)], [ci(k)]);
        let (al, be) = ([1.0f64], [1.0f64]);
        let (lda, ldb, ldc, gs) = ([ci(m)], [ci(k)], [ci(m)], [ci(count)]);
        let call = |a: &[*const f64], b: &[*const f64], c: &[*mut f64]| {
            cblas_dgemm_batch(
                COL,
                [N].as_ptr(),
                [N].as_ptr(),
                mm.as_ptr(),
                nn.as_ptr(),
                kk.as_ptr(),
                al.as_ptr(),
                a.as_ptr(),
                lda.as_ptr(),
                b.as_ptr(),
                ldb.as_ptr(),
                be.as_ptr(),
                c.as_ptr(),
                ldc.as_ptr(),
                1,
                gs.as_ptr(),
            )
        };
        call(&ha, &hb, &hc);
        call(&das, &dbs, &dcs);
    }
    assert_close(&down::<f64>(&dc), &want, k * count, "shared output on device");
}

/// Host-memory batches forced to the GPU (issue 48 item 4: `HYBLAS_DEVICE=gpu`'s per-thread
/// form) against the same batches on the CPU engine: a strided DGEMM batch (padded leading
/// dimensions, gaps between products, beta 0 over NaN), and a ZGEMM group of products in buffers
/// of their own, conjugated, beta non-zero, large enough that the packed operands straddle the
/// pipeline's 16 MB chunks. Each must have gone through the offload (the count moves) and leave
/// the padding untouched.
#[test]
fn host_batches_offloaded_match_the_cpu() {
    use hyblas::plan::host::with_side;
    use hyblas::plan::offload::Side;
    let Some(_rt) = gpu_or_skip("host_batches_offloaded_match_the_cpu") else { return };
    let mut rng = Rng::new(48_003);
    let ci = |v: usize| v as c_int;
    // DGEMM, N x T, 64 products of 40 x 33 x 50.
    let (m, n, k, count) = (40usize, 33usize, 50usize, 64usize);
    let (lda, ldb, ldc) = (m + 3, n + 1, m + 2);
    let (sa, sb, sc) = (lda * k + 5, ldb * k + 1, ldc * n + 7);
    let a: Vec<f64> = rng.vec(sa * count);
    let b: Vec<f64> = rng.vec(sb * count);
    let mut c0: Vec<f64> = rng.vec(sc * count);
    nan_products(&mut c0, count, sc, ldc, m, n);
    let run = |side: Side, c: &mut Vec<f64>| {
        with_side(Some(side), || unsafe {
            cblas_dgemm_batch_strided(
                COL,
                N,
                T,
                ci(m),
                ci(n),
                ci(k),
                0.75,
                a.as_ptr(),
                ci(lda),
                ci(sa),
                b.as_ptr(),
                ci(ldb),
                ci(sb),
                0.0,
                c.as_mut_ptr(),
                ci(ldc),
                ci(sc),
                ci(count),
            )
        })
    };
    let (mut got, mut want) = (c0.clone(), c0.clone());
    let before = hyblas::plan::batch::offloaded_batches();
    run(Side::Gpu, &mut got);
    assert!(hyblas::plan::batch::offloaded_batches() > before, "the strided batch did not go to the GPU");
    run(Side::Cpu, &mut want);
    assert_close(&got, &want, k, "dgemm_batch_strided offloaded");
    assert_padding_kept(&got, &c0, sc, ldc, m, n, "dgemm_batch_strided offloaded");

    // ZGEMM, C x N, one group of 70 products of 100 x 90 x 110 in buffers of their own.
    let (m, n, k, count) = (100usize, 90usize, 110usize, 70usize);
    let (lda, ldb, ldc) = (k + 2, k + 1, m + 3);
    let a: Vec<Vec<C64>> = (0..count).map(|_| rng.vec(lda * m)).collect();
    let b: Vec<Vec<C64>> = (0..count).map(|_| rng.vec(ldb * n)).collect();
    let c0: Vec<Vec<C64>> = (0..count).map(|_| rng.vec(ldc * n)).collect();
    let (al, be) = (C64::new(0.5, -1.25), C64::new(-0.75, 0.5));
    let pa: Vec<*const C64> = a.iter().map(|v| v.as_ptr()).collect();
    let pb: Vec<*const C64> = b.iter().map(|v| v.as_ptr()).collect();
    let run = |side: Side, c: &mut [Vec<C64>]| {
        let pc: Vec<*mut C64> = c.iter_mut().map(|v| v.as_mut_ptr()).collect();
        let (ta, tb, mm, nn, kk) = ([113], [N], [ci(m)], [ci(n)], [ci(k)]);
        let (la, lb, lc, gs) = ([ci(lda)], [ci(ldb)], [ci(ldc)], [ci(count)]);
        with_side(Some(side), || unsafe {
            cblas_zgemm_batch(
                COL,
                ta.as_ptr(),
                tb.as_ptr(),
                mm.as_ptr(),
                nn.as_ptr(),
                kk.as_ptr(),
                &al,
                pa.as_ptr(),
                la.as_ptr(),
                pb.as_ptr(),
                lb.as_ptr(),
                &be,
                pc.as_ptr(),
                lc.as_ptr(),
                1,
                gs.as_ptr(),
            )
        })
    };
    let (mut got, mut want) = (c0.clone(), c0.clone());
    let before = hyblas::plan::batch::offloaded_batches();
    run(Side::Gpu, &mut got);
    assert!(hyblas::plan::batch::offloaded_batches() > before, "the group did not go to the GPU");
    run(Side::Cpu, &mut want);
    for p in 0..count {
        assert_close(&got[p], &want[p], k, &format!("zgemm_batch offloaded, product {p}"));
        for (e, (g, w)) in got[p].iter().zip(&c0[p]).enumerate() {
            if e % ldc >= m {
                assert_eq!((g.re.to_bits(), g.im.to_bits()), (w.re.to_bits(), w.im.to_bits()), "padding {p}/{e}");
            }
        }
    }
}
