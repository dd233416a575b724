//! Packing a panel whose rows are the contiguous ones (a transposed operand, the B panels of a
//! column-major B, a triangle stored across its rows) in register tiles: a few rows read side
//! by side, transposed in registers, stored as the panel's columns.
//!
//! Why: element by element, such a panel costs one load and one store per element from MR
//! streams. In tiles, 1-thread DGEMM TN 512 (A^T packed this way) ran 1.021x the element loop
//! (middle half of 134 interleaved rounds 1.012-1.030), 2 threads 1.025x, on the H200 host;
//! DGEMM NN (B's panels) and TRSM from the right did not change (`bench/results/s57-h200-host`).

use crate::types::Scalar;
#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

/// Pack k = 0..kc of the MR rows at `src` (row i's element k at `src + i*rs + k`) into `d`
/// (element (i, k) at `d + k*MR + i`), conjugated if asked, in whole register tiles; returns
/// how many k were done (a multiple of the tile's width; the caller does the rest), 0 where
/// no tile fits the element size and MR.
///
/// # Safety
/// The rows and `d`'s `kc*MR` elements are valid; the caller runs with AVX-512F enabled.
#[inline(always)]
pub(super) unsafe fn rows_to_panel<T: Scalar, const MR: usize>(
    src: *const T,
    rs: isize,
    kc: usize,
    conj: bool,
    d: *mut T,
) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        let flip = conj && T::IS_COMPLEX;
        match std::mem::size_of::<T>() {
            // f64, complex f32: 8 x 8 tiles of 64-bit lanes.
            8 if MR.is_multiple_of(8) => {
                let rs = rs * 8;
                tiles::<MR, 8>(src as *const u8, rs, kc, d as *mut u8, 8, |s, t| t8x8_64(s, rs, t, MR * 8, flip))
            }
            // f32: 8 x 8 tiles in 256-bit registers.
            4 if MR.is_multiple_of(8) => {
                let rs = rs * 4;
                tiles::<MR, 8>(src as *const u8, rs, kc, d as *mut u8, 4, |s, t| t8x8_32(s, rs, t, MR * 4))
            }
            // complex f64: 4 x 4 tiles of 128-bit lanes.
            16 if MR.is_multiple_of(4) => {
                let rs = rs * 16;
                tiles::<MR, 4>(src as *const u8, rs, kc, d as *mut u8, 16, |s, t| t4x4_128(s, rs, t, MR * 16, flip))
            }
            _ => 0,
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (src, rs, kc, conj, d);
        0
    }
}

/// The tiles of B x B elements (`size` bytes each) over MR rows (`rs` bytes apart) and the
/// whole multiples of B in kc; `tile(from, to)` moves one, its rows read at `from`, its columns
/// stored from `to` on, MR elements apart.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn tiles<const MR: usize, const B: usize>(
    src: *const u8,
    rs: isize,
    kc: usize,
    d: *mut u8,
    size: usize,
    tile: impl Fn(*const u8, *mut u8),
) -> usize {
    let whole = kc / B * B;
    for k in (0..whole).step_by(B) {
        for i in (0..MR).step_by(B) {
            tile(src.offset(i as isize * rs + (k * size) as isize), d.add((k * MR + i) * size));
        }
    }
    whole
}

/// Sign bits of the imaginary parts in a register of complex values.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn imag_signs(lane_bits: u32) -> __m512i {
    match lane_bits {
        // complex f32: the high half of each 64-bit lane.
        64 => _mm512_set1_epi64(i64::MIN),
        // complex f64: every other 64-bit lane.
        _ => _mm512_set_epi64(i64::MIN, 0, i64::MIN, 0, i64::MIN, 0, i64::MIN, 0),
    }
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn store_flipped(p: *mut u8, v: __m512d, flip: bool, lane_bits: u32) {
    let v = if flip { _mm512_castsi512_pd(_mm512_xor_si512(_mm512_castpd_si512(v), imag_signs(lane_bits))) } else { v };
    _mm512_storeu_pd(p as *mut f64, v);
}

/// 8 x 8 tile of 64-bit elements.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn t8x8_64(src: *const u8, rs: isize, dst: *mut u8, ld: usize, flip: bool) {
    let (r0, r1) = (_mm512_loadu_pd(src as *const f64), _mm512_loadu_pd(src.offset(rs) as *const f64));
    let (r2, r3) =
        (_mm512_loadu_pd(src.offset(2 * rs) as *const f64), _mm512_loadu_pd(src.offset(3 * rs) as *const f64));
    let (r4, r5) =
        (_mm512_loadu_pd(src.offset(4 * rs) as *const f64), _mm512_loadu_pd(src.offset(5 * rs) as *const f64));
    let (r6, r7) =
        (_mm512_loadu_pd(src.offset(6 * rs) as *const f64), _mm512_loadu_pd(src.offset(7 * rs) as *const f64));
    // Pairs of rows interleaved, then 128-bit lanes gathered twice.
    let (t0, t1) = (_mm512_unpacklo_pd(r0, r1), _mm512_unpackhi_pd(r0, r1));
    let (t2, t3) = (_mm512_unpacklo_pd(r2, r3), _mm512_unpackhi_pd(r2, r3));
    let (t4, t5) = (_mm512_unpacklo_pd(r4, r5), _mm512_unpackhi_pd(r4, r5));
    let (t6, t7) = (_mm512_unpacklo_pd(r6, r7), _mm512_unpackhi_pd(r6, r7));
    let (u0, u2) = (_mm512_shuffle_f64x2::<0x88>(t0, t2), _mm512_shuffle_f64x2::<0xdd>(t0, t2));
    let (u1, u3) = (_mm512_shuffle_f64x2::<0x88>(t1, t3), _mm512_shuffle_f64x2::<0xdd>(t1, t3));
    let (u4, u6) = (_mm512_shuffle_f64x2::<0x88>(t4, t6), _mm512_shuffle_f64x2::<0xdd>(t4, t6));
    let (u5, u7) = (_mm512_shuffle_f64x2::<0x88>(t5, t7), _mm512_shuffle_f64x2::<0xdd>(t5, t7));
    let cols = [
        _mm512_shuffle_f64x2::<0x88>(u0, u4),
        _mm512_shuffle_f64x2::<0x88>(u1, u5),
        _mm512_shuffle_f64x2::<0x88>(u2, u6),
        _mm512_shuffle_f64x2::<0x88>(u3, u7),
        _mm512_shuffle_f64x2::<0xdd>(u0, u4),
        _mm512_shuffle_f64x2::<0xdd>(u1, u5),
        _mm512_shuffle_f64x2::<0xdd>(u2, u6),
        _mm512_shuffle_f64x2::<0xdd>(u3, u7),
    ];
    for (j, c) in cols.into_iter().enumerate() {
        store_flipped(dst.add(j * ld), c, flip, 64);
    }
}

/// 4 x 4 tile of 128-bit elements.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn t4x4_128(src: *const u8, rs: isize, dst: *mut u8, ld: usize, flip: bool) {
    let (r0, r1) = (_mm512_loadu_pd(src as *const f64), _mm512_loadu_pd(src.offset(rs) as *const f64));
    let (r2, r3) =
        (_mm512_loadu_pd(src.offset(2 * rs) as *const f64), _mm512_loadu_pd(src.offset(3 * rs) as *const f64));
    let (t0, t1) = (_mm512_shuffle_f64x2::<0x44>(r0, r1), _mm512_shuffle_f64x2::<0xee>(r0, r1));
    let (t2, t3) = (_mm512_shuffle_f64x2::<0x44>(r2, r3), _mm512_shuffle_f64x2::<0xee>(r2, r3));
    let cols = [
        _mm512_shuffle_f64x2::<0x88>(t0, t2),
        _mm512_shuffle_f64x2::<0xdd>(t0, t2),
        _mm512_shuffle_f64x2::<0x88>(t1, t3),
        _mm512_shuffle_f64x2::<0xdd>(t1, t3),
    ];
    for (j, c) in cols.into_iter().enumerate() {
        store_flipped(dst.add(j * ld), c, flip, 128);
    }
}

/// 8 x 8 tile of 32-bit elements (256-bit registers; real f32 only, nothing to conjugate).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn t8x8_32(src: *const u8, rs: isize, dst: *mut u8, ld: usize) {
    let (r0, r1) = (_mm256_loadu_ps(src as *const f32), _mm256_loadu_ps(src.offset(rs) as *const f32));
    let (r2, r3) =
        (_mm256_loadu_ps(src.offset(2 * rs) as *const f32), _mm256_loadu_ps(src.offset(3 * rs) as *const f32));
    let (r4, r5) =
        (_mm256_loadu_ps(src.offset(4 * rs) as *const f32), _mm256_loadu_ps(src.offset(5 * rs) as *const f32));
    let (r6, r7) =
        (_mm256_loadu_ps(src.offset(6 * rs) as *const f32), _mm256_loadu_ps(src.offset(7 * rs) as *const f32));
    let (t0, t1) = (_mm256_unpacklo_ps(r0, r1), _mm256_unpackhi_ps(r0, r1));
    let (t2, t3) = (_mm256_unpacklo_ps(r2, r3), _mm256_unpackhi_ps(r2, r3));
    let (t4, t5) = (_mm256_unpacklo_ps(r4, r5), _mm256_unpackhi_ps(r4, r5));
    let (t6, t7) = (_mm256_unpacklo_ps(r6, r7), _mm256_unpackhi_ps(r6, r7));
    let (s0, s1) = (_mm256_shuffle_ps::<0x44>(t0, t2), _mm256_shuffle_ps::<0xee>(t0, t2));
    let (s2, s3) = (_mm256_shuffle_ps::<0x44>(t1, t3), _mm256_shuffle_ps::<0xee>(t1, t3));
    let (s4, s5) = (_mm256_shuffle_ps::<0x44>(t4, t6), _mm256_shuffle_ps::<0xee>(t4, t6));
    let (s6, s7) = (_mm256_shuffle_ps::<0x44>(t5, t7), _mm256_shuffle_ps::<0xee>(t5, t7));
    let cols = [
        _mm256_permute2f128_ps::<0x20>(s0, s4),
        _mm256_permute2f128_ps::<0x20>(s1, s5),
        _mm256_permute2f128_ps::<0x20>(s2, s6),
        _mm256_permute2f128_ps::<0x20>(s3, s7),
        _mm256_permute2f128_ps::<0x31>(s0, s4),
        _mm256_permute2f128_ps::<0x31>(s1, s5),
        _mm256_permute2f128_ps::<0x31>(s2, s6),
        _mm256_permute2f128_ps::<0x31>(s3, s7),
    ];
    for (j, c) in cols.into_iter().enumerate() {
        _mm256_storeu_ps(dst.add(j * ld) as *mut f32, c);
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;
    use num_complex::{Complex32, Complex64};

    /// Every tile kind against the element-by-element definition, with a remainder in k
    /// and conjugation, on distinct values.
    fn check<T: Scalar, const MR: usize>(make: impl Fn(f64) -> T) {
        if !std::is_x86_feature_detected!("avx512f") {
            eprintln!("transpose: no AVX-512 here, skipped");
            return;
        }
        let (kc, rs) = (21usize, 37usize);
        let src: Vec<T> = (0..MR * rs).map(|v| make(v as f64)).collect();
        for conj in [false, true] {
            let mut d = vec![make(-1.0); kc * MR];
            let done = unsafe { rows_to_panel::<T, MR>(src.as_ptr(), rs as isize, kc, conj, d.as_mut_ptr()) };
            assert!(done > 0 && done % 4 == 0 && done <= kc, "{done}");
            for k in 0..kc {
                for i in 0..MR {
                    let want = if k < done { src[i * rs + k].conj_if(conj) } else { make(-1.0) };
                    assert!(d[k * MR + i] == want, "{} conj {conj}: ({i}, {k})", T::PREFIX);
                }
            }
        }
    }

    #[test]
    fn tiles_match_the_definition() {
        check::<f64, 24>(|v| v);
        check::<f64, 8>(|v| v);
        check::<f32, 48>(|v| v as f32);
        check::<f32, 8>(|v| v as f32);
        check::<Complex32, 24>(|v| Complex32::new(v as f32, 0.5 - v as f32));
        check::<Complex64, 12>(|v| Complex64::new(v, 0.25 - v));
        check::<Complex64, 4>(|v| Complex64::new(v, 0.25 - v));
    }
}
