//! Explicit SIMD registers for the Level 2 kernels.
//!
//! LLVM vectorises chunked generic loops the wrong way round here (across chunks, with
//! gathers and scatters, or across columns with transposes), so the kernels are written
//! against this small register abstraction instead. One implementation per build level:
//! AVX-512 (8 x f64 / 16 x f32), AVX2+FMA (4 / 8), SSE2 (2 / 4, no FMA). The functions are
//! `#[inline(always)]`; they are only called from kernels compiled inside a `kdispatch!`
//! wrapper that enables the matching target features.
//!
//! Complex data is handled as interleaved (re, im) reals: `splat2` and `swap_pairs` give the
//! two shuffles complex products need.

#![allow(clippy::missing_safety_doc)]

use crate::types::Real;

/// A SIMD register of `N` lanes of `R`.
pub trait Vreg<R: Real>: Copy {
    const N: usize;
    unsafe fn zero() -> Self;
    unsafe fn splat(v: R) -> Self;
    /// Lanes alternate a, b, a, b, ...
    unsafe fn splat2(a: R, b: R) -> Self;
    unsafe fn load(p: *const R) -> Self;
    unsafe fn store(self, p: *mut R);
    /// self * b + c (fused where the level has FMA).
    unsafe fn fma(self, b: Self, c: Self) -> Self;
    unsafe fn add(self, b: Self) -> Self;
    unsafe fn mul(self, b: Self) -> Self;
    /// Swap the lanes of each (even, odd) pair: (re, im) -> (im, re).
    unsafe fn swap_pairs(self) -> Self;
    /// Sum of all lanes.
    unsafe fn hsum(self) -> R;
}

/// The register types of one real type, by build level (2 = AVX-512, 1 = AVX2, 0 = base).
pub trait Lanes: Real {
    type V2: Vreg<Self>;
    type V1: Vreg<Self>;
    type V0: Vreg<Self>;
}

/// Run `$body` with `$V` bound to the register type of level `$lv` for real type `$r`.
macro_rules! with_vec {
    ($lv:expr, $r:ty, $V:ident => $body:expr) => {
        match $lv {
            2 => {
                type $V = <$r as $crate::cpu::level2::simd::Lanes>::V2;
                $body
            }
            1 => {
                type $V = <$r as $crate::cpu::level2::simd::Lanes>::V1;
                $body
            }
            _ => {
                type $V = <$r as $crate::cpu::level2::simd::Lanes>::V0;
                $body
            }
        }
    };
}
pub(crate) use with_vec;

// AVX-512 intrinsics need Rust 1.89, as do the AVX-512 target features `dispatch!` enables.
#[cfg(target_arch = "x86_64")]
#[allow(clippy::incompatible_msrv)]
mod x86 {
    use super::{Lanes, Vreg};
    use std::arch::x86_64::*;

    #[derive(Clone, Copy)]
    pub struct F64x8(__m512d);
    #[derive(Clone, Copy)]
    pub struct F32x16(__m512);
    #[derive(Clone, Copy)]
    pub struct F64x4(__m256d);
    #[derive(Clone, Copy)]
    pub struct F32x8(__m256);
    #[derive(Clone, Copy)]
    pub struct F64x2(__m128d);
    #[derive(Clone, Copy)]
    pub struct F32x4(__m128);

    impl Lanes for f64 {
        type V2 = F64x8;
        type V1 = F64x4;
        type V0 = F64x2;
    }
    impl Lanes for f32 {
        type V2 = F32x16;
        type V1 = F32x8;
        type V0 = F32x4;
    }

    impl Vreg<f64> for F64x8 {
        const N: usize = 8;
        #[inline(always)]
        unsafe fn zero() -> Self {
            F64x8(_mm512_setzero_pd())
        }
        #[inline(always)]
        unsafe fn splat(v: f64) -> Self {
            F64x8(_mm512_set1_pd(v))
        }
        #[inline(always)]
        unsafe fn splat2(a: f64, b: f64) -> Self {
            F64x8(_mm512_setr_pd(a, b, a, b, a, b, a, b))
        }
        #[inline(always)]
        unsafe fn load(p: *const f64) -> Self {
            F64x8(_mm512_loadu_pd(p))
        }
        #[inline(always)]
        unsafe fn store(self, p: *mut f64) {
            _mm512_storeu_pd(p, self.0)
        }
        #[inline(always)]
        unsafe fn fma(self, b: Self, c: Self) -> Self {
            F64x8(_mm512_fmadd_pd(self.0, b.0, c.0))
        }
        #[inline(always)]
        unsafe fn add(self, b: Self) -> Self {
            F64x8(_mm512_add_pd(self.0, b.0))
        }
        #[inline(always)]
        unsafe fn mul(self, b: Self) -> Self {
            F64x8(_mm512_mul_pd(self.0, b.0))
        }
        #[inline(always)]
        unsafe fn swap_pairs(self) -> Self {
            F64x8(_mm512_permute_pd::<0x55>(self.0))
        }
        #[inline(always)]
        unsafe fn hsum(self) -> f64 {
            let lo = _mm512_castpd512_pd256(self.0);
            let hi = _mm512_extractf64x4_pd::<1>(self.0);
            F64x4(_mm256_add_pd(lo, hi)).hsum()
        }
    }

    impl Vreg<f32> for F32x16 {
        const N: usize = 16;
        #[inline(always)]
        unsafe fn zero() -> Self {
            F32x16(_mm512_setzero_ps())
        }
        #[inline(always)]
        unsafe fn splat(v: f32) -> Self {
            F32x16(_mm512_set1_ps(v))
        }
        #[inline(always)]
        unsafe fn splat2(a: f32, b: f32) -> Self {
            F32x16(_mm512_setr_ps(a, b, a, b, a, b, a, b, a, b, a, b, a, b, a, b))
        }
        #[inline(always)]
        unsafe fn load(p: *const f32) -> Self {
            F32x16(_mm512_loadu_ps(p))
        }
        #[inline(always)]
        unsafe fn store(self, p: *mut f32) {
            _mm512_storeu_ps(p, self.0)
        }
        #[inline(always)]
        unsafe fn fma(self, b: Self, c: Self) -> Self {
            F32x16(_mm512_fmadd_ps(self.0, b.0, c.0))
        }
        #[inline(always)]
        unsafe fn add(self, b: Self) -> Self {
            F32x16(_mm512_add_ps(self.0, b.0))
        }
        #[inline(always)]
        unsafe fn mul(self, b: Self) -> Self {
            F32x16(_mm512_mul_ps(self.0, b.0))
        }
        #[inline(always)]
        unsafe fn swap_pairs(self) -> Self {
            F32x16(_mm512_permute_ps::<0xB1>(self.0))
        }
        #[inline(always)]
        unsafe fn hsum(self) -> f32 {
            let lo = _mm512_castps512_ps256(self.0);
            let hi = _mm256_castpd_ps(_mm512_extractf64x4_pd::<1>(_mm512_castps_pd(self.0)));
            F32x8(_mm256_add_ps(lo, hi)).hsum()
        }
    }

    impl Vreg<f64> for F64x4 {
        const N: usize = 4;
        #[inline(always)]
        unsafe fn zero() -> Self {
            F64x4(_mm256_setzero_pd())
        }
        #[inline(always)]
        unsafe fn splat(v: f64) -> Self {
            F64x4(_mm256_set1_pd(v))
        }
        #[inline(always)]
        unsafe fn splat2(a: f64, b: f64) -> Self {
            F64x4(_mm256_setr_pd(a, b, a, b))
        }
        #[inline(always)]
        unsafe fn load(p: *const f64) -> Self {
            F64x4(_mm256_loadu_pd(p))
        }
        #[inline(always)]
        unsafe fn store(self, p: *mut f64) {
            _mm256_storeu_pd(p, self.0)
        }
        #[inline(always)]
        unsafe fn fma(self, b: Self, c: Self) -> Self {
            F64x4(_mm256_fmadd_pd(self.0, b.0, c.0))
        }
        #[inline(always)]
        unsafe fn add(self, b: Self) -> Self {
            F64x4(_mm256_add_pd(self.0, b.0))
        }
        #[inline(always)]
        unsafe fn mul(self, b: Self) -> Self {
            F64x4(_mm256_mul_pd(self.0, b.0))
        }
        #[inline(always)]
        unsafe fn swap_pairs(self) -> Self {
            F64x4(_mm256_permute_pd::<0b0101>(self.0))
        }
        #[inline(always)]
        unsafe fn hsum(self) -> f64 {
            let s = _mm_add_pd(_mm256_castpd256_pd128(self.0), _mm256_extractf128_pd::<1>(self.0));
            F64x2(s).hsum()
        }
    }

    impl Vreg<f32> for F32x8 {
        const N: usize = 8;
        #[inline(always)]
        unsafe fn zero() -> Self {
            F32x8(_mm256_setzero_ps())
        }
        #[inline(always)]
        unsafe fn splat(v: f32) -> Self {
            F32x8(_mm256_set1_ps(v))
        }
        #[inline(always)]
        unsafe fn splat2(a: f32, b: f32) -> Self {
            F32x8(_mm256_setr_ps(a, b, a, b, a, b, a, b))
        }
        #[inline(always)]
        unsafe fn load(p: *const f32) -> Self {
            F32x8(_mm256_loadu_ps(p))
        }
        #[inline(always)]
        unsafe fn store(self, p: *mut f32) {
            _mm256_storeu_ps(p, self.0)
        }
        #[inline(always)]
        unsafe fn fma(self, b: Self, c: Self) -> Self {
            F32x8(_mm256_fmadd_ps(self.0, b.0, c.0))
        }
        #[inline(always)]
        unsafe fn add(self, b: Self) -> Self {
            F32x8(_mm256_add_ps(self.0, b.0))
        }
        #[inline(always)]
        unsafe fn mul(self, b: Self) -> Self {
            F32x8(_mm256_mul_ps(self.0, b.0))
        }
        #[inline(always)]
        unsafe fn swap_pairs(self) -> Self {
            F32x8(_mm256_permute_ps::<0xB1>(self.0))
        }
        #[inline(always)]
        unsafe fn hsum(self) -> f32 {
            let s = _mm_add_ps(_mm256_castps256_ps128(self.0), _mm256_extractf128_ps::<1>(self.0));
            F32x4(s).hsum()
        }
    }

    impl Vreg<f64> for F64x2 {
        const N: usize = 2;
        #[inline(always)]
        unsafe fn zero() -> Self {
            F64x2(_mm_setzero_pd())
        }
        #[inline(always)]
        unsafe fn splat(v: f64) -> Self {
            F64x2(_mm_set1_pd(v))
        }
        #[inline(always)]
        unsafe fn splat2(a: f64, b: f64) -> Self {
            F64x2(_mm_setr_pd(a, b))
        }
        #[inline(always)]
        unsafe fn load(p: *const f64) -> Self {
            F64x2(_mm_loadu_pd(p))
        }
        #[inline(always)]
        unsafe fn store(self, p: *mut f64) {
            _mm_storeu_pd(p, self.0)
        }
        #[inline(always)]
        unsafe fn fma(self, b: Self, c: Self) -> Self {
            F64x2(_mm_add_pd(_mm_mul_pd(self.0, b.0), c.0))
        }
        #[inline(always)]
        unsafe fn add(self, b: Self) -> Self {
            F64x2(_mm_add_pd(self.0, b.0))
        }
        #[inline(always)]
        unsafe fn mul(self, b: Self) -> Self {
            F64x2(_mm_mul_pd(self.0, b.0))
        }
        #[inline(always)]
        unsafe fn swap_pairs(self) -> Self {
            F64x2(_mm_shuffle_pd::<0b01>(self.0, self.0))
        }
        #[inline(always)]
        unsafe fn hsum(self) -> f64 {
            _mm_cvtsd_f64(_mm_add_sd(self.0, _mm_unpackhi_pd(self.0, self.0)))
        }
    }

    impl Vreg<f32> for F32x4 {
        const N: usize = 4;
        #[inline(always)]
        unsafe fn zero() -> Self {
            F32x4(_mm_setzero_ps())
        }
        #[inline(always)]
        unsafe fn splat(v: f32) -> Self {
            F32x4(_mm_set1_ps(v))
        }
        #[inline(always)]
        unsafe fn splat2(a: f32, b: f32) -> Self {
            F32x4(_mm_setr_ps(a, b, a, b))
        }
        #[inline(always)]
        unsafe fn load(p: *const f32) -> Self {
            F32x4(_mm_loadu_ps(p))
        }
        #[inline(always)]
        unsafe fn store(self, p: *mut f32) {
            _mm_storeu_ps(p, self.0)
        }
        #[inline(always)]
        unsafe fn fma(self, b: Self, c: Self) -> Self {
            F32x4(_mm_add_ps(_mm_mul_ps(self.0, b.0), c.0))
        }
        #[inline(always)]
        unsafe fn add(self, b: Self) -> Self {
            F32x4(_mm_add_ps(self.0, b.0))
        }
        #[inline(always)]
        unsafe fn mul(self, b: Self) -> Self {
            F32x4(_mm_mul_ps(self.0, b.0))
        }
        #[inline(always)]
        unsafe fn swap_pairs(self) -> Self {
            F32x4(_mm_shuffle_ps::<0xB1>(self.0, self.0))
        }
        #[inline(always)]
        unsafe fn hsum(self) -> f32 {
            let h = _mm_add_ps(self.0, _mm_movehl_ps(self.0, self.0));
            _mm_cvtss_f32(_mm_add_ss(h, _mm_shuffle_ps::<0b01>(h, h)))
        }
    }
}

/// Portable two-lane register for targets without an implementation above.
#[cfg(not(target_arch = "x86_64"))]
mod portable {
    use super::{Lanes, Vreg};
    use crate::types::Real;

    #[derive(Clone, Copy)]
    pub struct Pair<R>([R; 2]);

    impl<R: Real> Vreg<R> for Pair<R> {
        const N: usize = 2;
        #[inline(always)]
        unsafe fn zero() -> Self {
            Pair([R::zero(); 2])
        }
        #[inline(always)]
        unsafe fn splat(v: R) -> Self {
            Pair([v; 2])
        }
        #[inline(always)]
        unsafe fn splat2(a: R, b: R) -> Self {
            Pair([a, b])
        }
        #[inline(always)]
        unsafe fn load(p: *const R) -> Self {
            Pair([*p, *p.add(1)])
        }
        #[inline(always)]
        unsafe fn store(self, p: *mut R) {
            *p = self.0[0];
            *p.add(1) = self.0[1];
        }
        #[inline(always)]
        unsafe fn fma(self, b: Self, c: Self) -> Self {
            Pair([self.0[0] * b.0[0] + c.0[0], self.0[1] * b.0[1] + c.0[1]])
        }
        #[inline(always)]
        unsafe fn add(self, b: Self) -> Self {
            Pair([self.0[0] + b.0[0], self.0[1] + b.0[1]])
        }
        #[inline(always)]
        unsafe fn mul(self, b: Self) -> Self {
            Pair([self.0[0] * b.0[0], self.0[1] * b.0[1]])
        }
        #[inline(always)]
        unsafe fn swap_pairs(self) -> Self {
            Pair([self.0[1], self.0[0]])
        }
        #[inline(always)]
        unsafe fn hsum(self) -> R {
            self.0[0] + self.0[1]
        }
    }

    impl Lanes for f64 {
        type V2 = Pair<f64>;
        type V1 = Pair<f64>;
        type V0 = Pair<f64>;
    }
    impl Lanes for f32 {
        type V2 = Pair<f32>;
        type V1 = Pair<f32>;
        type V0 = Pair<f32>;
    }
}
