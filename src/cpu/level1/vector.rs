//! Register-sized vectors for the Level 1 reduction kernels: one trait, implemented with
//! AVX-512 and AVX2 intrinsics and as a plain array elsewhere.
//!
//! Kernels are generic over [`Vector`] and are compiled once per implementation inside a
//! `#[target_feature]` wrapper (`simd_fn!` in `reduce.rs`), so every intrinsic inlines into
//! code built for its instruction set. (Leaving the vectorisation of reductions to LLVM proved
//! fragile: depending on the kernel it kept accumulators in memory or used 128-bit vectors.)

use crate::types::{Real, Scalar};

pub(super) trait Vector: Copy {
    type R: Real;
    /// Lanes.
    const W: usize;
    unsafe fn zero() -> Self;
    unsafe fn splat(v: Self::R) -> Self;
    unsafe fn load(p: *const Self::R) -> Self;
    unsafe fn store(self, p: *mut Self::R);
    unsafe fn add(self, o: Self) -> Self;
    unsafe fn mul(self, o: Self) -> Self;
    unsafe fn abs(self) -> Self;
    /// Lane-wise `if v > self { v } else { self }`: a NaN in `v` never wins.
    unsafe fn max_keep(self, v: Self) -> Self;
    /// Lane-wise `if v < self { v } else { self }`.
    unsafe fn min_keep(self, v: Self) -> Self;
    /// Zero lanes replaced by +Inf.
    unsafe fn zero_to_inf(self) -> Self;
    /// Each (even, odd) pair of lanes swapped.
    unsafe fn swap_pairs(self) -> Self;
}

/// Double-precision vectors that can be loaded from floats (for `dsdot`).
pub(super) trait WidenF32: Vector<R = f64> {
    /// W floats, converted.
    unsafe fn load_f32(p: *const f32) -> Self;
}

/// The vector types of a precision, widest first.
pub(super) trait Lanes: Real {
    type V512: Vector<R = Self>;
    type V256: Vector<R = Self>;
    type Plain: Vector<R = Self>;
}

/// Lanes copied out (W <= 16).
#[inline(always)]
unsafe fn lanes<V: Vector>(v: V) -> [V::R; 16] {
    let mut buf = [<V::R as Scalar>::zero(); 16];
    v.store(buf.as_mut_ptr());
    buf
}

/// Sum of the lanes, folded pairwise.
#[inline(always)]
pub(super) unsafe fn hsum<V: Vector>(v: V) -> V::R {
    let mut b = lanes(v);
    let mut len = V::W;
    while len > 1 {
        len /= 2;
        for j in 0..len {
            let v = b[j + len];
            b[j] += v;
        }
    }
    b[0]
}

/// Sums of the even and of the odd lanes, folded pairwise.
#[inline(always)]
pub(super) unsafe fn hsum_parity<V: Vector>(v: V) -> (V::R, V::R) {
    let mut b = lanes(v);
    let mut len = V::W;
    while len > 2 {
        len /= 2;
        for j in 0..len {
            let v = b[j + len];
            b[j] += v;
        }
    }
    (b[0], b[1])
}

/// Largest lane (NaN lanes ignored unless all are NaN).
#[inline(always)]
pub(super) unsafe fn hmax<V: Vector>(v: V) -> V::R {
    let b = lanes(v);
    let mut m = b[0];
    for &x in &b[1..V::W] {
        m = if x > m { x } else { m };
    }
    m
}

/// Smallest lane.
#[inline(always)]
pub(super) unsafe fn hmin<V: Vector>(v: V) -> V::R {
    let b = lanes(v);
    let mut m = b[0];
    for &x in &b[1..V::W] {
        m = if x < m { x } else { m };
    }
    m
}

/// Four lanes in an array: the fallback for CPUs without AVX2 (and other architectures).
#[derive(Clone, Copy)]
pub(super) struct Plain<R>([R; 4]);

impl<R: Real> Plain<R> {
    #[inline(always)]
    fn map(self, f: impl Fn(R) -> R) -> Self {
        Plain(self.0.map(f))
    }
    #[inline(always)]
    fn zip(self, o: Self, f: impl Fn(R, R) -> R) -> Self {
        let mut r = self.0;
        for (r, (&a, &b)) in r.iter_mut().zip(self.0.iter().zip(&o.0)) {
            *r = f(a, b);
        }
        Plain(r)
    }
}

impl<R: Real> Vector for Plain<R> {
    type R = R;
    const W: usize = 4;
    #[inline(always)]
    unsafe fn zero() -> Self {
        Plain([<R as Scalar>::zero(); 4])
    }
    #[inline(always)]
    unsafe fn splat(v: R) -> Self {
        Plain([v; 4])
    }
    #[inline(always)]
    unsafe fn load(p: *const R) -> Self {
        Plain(std::ptr::read_unaligned(p as *const [R; 4]))
    }
    #[inline(always)]
    unsafe fn store(self, p: *mut R) {
        std::ptr::write_unaligned(p as *mut [R; 4], self.0)
    }
    #[inline(always)]
    unsafe fn add(self, o: Self) -> Self {
        self.zip(o, |a, b| a + b)
    }
    #[inline(always)]
    unsafe fn mul(self, o: Self) -> Self {
        self.zip(o, |a, b| a * b)
    }
    #[inline(always)]
    unsafe fn abs(self) -> Self {
        self.map(|a| a.abs())
    }
    #[inline(always)]
    unsafe fn max_keep(self, v: Self) -> Self {
        self.zip(v, |m, v| if v > m { v } else { m })
    }
    #[inline(always)]
    unsafe fn min_keep(self, v: Self) -> Self {
        self.zip(v, |m, v| if v < m { v } else { m })
    }
    #[inline(always)]
    unsafe fn zero_to_inf(self) -> Self {
        self.map(|a| if a == <R as Scalar>::zero() { R::infinity() } else { a })
    }
    #[inline(always)]
    unsafe fn swap_pairs(self) -> Self {
        let a = self.0;
        Plain([a[1], a[0], a[3], a[2]])
    }
}

impl WidenF32 for Plain<f64> {
    #[inline(always)]
    unsafe fn load_f32(p: *const f32) -> Self {
        Plain(std::ptr::read_unaligned(p as *const [f32; 4]).map(|v| v as f64))
    }
}

#[cfg(target_arch = "x86_64")]
pub(super) use x86::{F32x16, F32x8, F64x4, F64x8};

// The AVX-512 intrinsics are stable since Rust 1.89, like the `avx512f` target feature the
// crate's `dispatch!` already enables, so the crate's real minimum is 1.89.
#[cfg(target_arch = "x86_64")]
#[allow(clippy::incompatible_msrv)]
mod x86 {
    use super::{Vector, WidenF32};
    use std::arch::x86_64::*;

    /// Implements [`Vector`] for one register type; `$f` is the target feature its
    /// intrinsics need, the other arguments name them.
    macro_rules! vector {
        ($V:ident, $reg:ty, $R:ty, $w:expr, $f:literal, zero = $zero:ident, splat = $splat:ident,
         load = $load:ident, store = $store:ident, add = $add:ident, mul = $mul:ident, max = $max:ident,
         min = $min:ident, abs = |$a:ident| $abs:expr, zinf = |$z:ident| $zinf:expr,
         swap = |$s:ident| $swap:expr) => {
            #[derive(Clone, Copy)]
            pub struct $V($reg);

            impl Vector for $V {
                type R = $R;
                const W: usize = $w;
                #[inline]
                #[target_feature(enable = $f)]
                unsafe fn zero() -> Self {
                    $V($zero())
                }
                #[inline]
                #[target_feature(enable = $f)]
                unsafe fn splat(v: $R) -> Self {
                    $V($splat(v))
                }
                #[inline]
                #[target_feature(enable = $f)]
                unsafe fn load(p: *const $R) -> Self {
                    $V($load(p))
                }
                #[inline]
                #[target_feature(enable = $f)]
                unsafe fn store(self, p: *mut $R) {
                    $store(p, self.0)
                }
                #[inline]
                #[target_feature(enable = $f)]
                unsafe fn add(self, o: Self) -> Self {
                    $V($add(self.0, o.0))
                }
                #[inline]
                #[target_feature(enable = $f)]
                unsafe fn mul(self, o: Self) -> Self {
                    $V($mul(self.0, o.0))
                }
                #[inline]
                #[target_feature(enable = $f)]
                unsafe fn abs(self) -> Self {
                    let $a = self.0;
                    $V($abs)
                }
                // max(a, b) and min(a, b) return b unless a is strictly larger (smaller),
                // NaN included: with a = v, b = self that is exactly "keep unless v wins".
                #[inline]
                #[target_feature(enable = $f)]
                unsafe fn max_keep(self, v: Self) -> Self {
                    $V($max(v.0, self.0))
                }
                #[inline]
                #[target_feature(enable = $f)]
                unsafe fn min_keep(self, v: Self) -> Self {
                    $V($min(v.0, self.0))
                }
                #[inline]
                #[target_feature(enable = $f)]
                unsafe fn zero_to_inf(self) -> Self {
                    let $z = self.0;
                    $V($zinf)
                }
                #[inline]
                #[target_feature(enable = $f)]
                unsafe fn swap_pairs(self) -> Self {
                    let $s = self.0;
                    $V($swap)
                }
            }
        };
    }

    vector!(
        F64x8,
        __m512d,
        f64,
        8,
        "avx512f",
        zero = _mm512_setzero_pd,
        splat = _mm512_set1_pd,
        load = _mm512_loadu_pd,
        store = _mm512_storeu_pd,
        add = _mm512_add_pd,
        mul = _mm512_mul_pd,
        max = _mm512_max_pd,
        min = _mm512_min_pd,
        abs = |a| _mm512_abs_pd(a),
        zinf = |a| _mm512_mask_blend_pd(
            _mm512_cmp_pd_mask::<_CMP_EQ_OQ>(a, _mm512_setzero_pd()),
            a,
            _mm512_set1_pd(f64::INFINITY)
        ),
        swap = |a| _mm512_permute_pd::<0b0101_0101>(a)
    );

    vector!(
        F32x16,
        __m512,
        f32,
        16,
        "avx512f",
        zero = _mm512_setzero_ps,
        splat = _mm512_set1_ps,
        load = _mm512_loadu_ps,
        store = _mm512_storeu_ps,
        add = _mm512_add_ps,
        mul = _mm512_mul_ps,
        max = _mm512_max_ps,
        min = _mm512_min_ps,
        abs = |a| _mm512_abs_ps(a),
        zinf = |a| _mm512_mask_blend_ps(
            _mm512_cmp_ps_mask::<_CMP_EQ_OQ>(a, _mm512_setzero_ps()),
            a,
            _mm512_set1_ps(f32::INFINITY)
        ),
        swap = |a| _mm512_permute_ps::<0b1011_0001>(a)
    );

    vector!(
        F64x4,
        __m256d,
        f64,
        4,
        "avx2",
        zero = _mm256_setzero_pd,
        splat = _mm256_set1_pd,
        load = _mm256_loadu_pd,
        store = _mm256_storeu_pd,
        add = _mm256_add_pd,
        mul = _mm256_mul_pd,
        max = _mm256_max_pd,
        min = _mm256_min_pd,
        abs = |a| _mm256_andnot_pd(_mm256_set1_pd(-0.0), a),
        zinf =
            |a| _mm256_blendv_pd(a, _mm256_set1_pd(f64::INFINITY), _mm256_cmp_pd::<_CMP_EQ_OQ>(a, _mm256_setzero_pd())),
        swap = |a| _mm256_permute_pd::<0b0101>(a)
    );

    vector!(
        F32x8,
        __m256,
        f32,
        8,
        "avx2",
        zero = _mm256_setzero_ps,
        splat = _mm256_set1_ps,
        load = _mm256_loadu_ps,
        store = _mm256_storeu_ps,
        add = _mm256_add_ps,
        mul = _mm256_mul_ps,
        max = _mm256_max_ps,
        min = _mm256_min_ps,
        abs = |a| _mm256_andnot_ps(_mm256_set1_ps(-0.0), a),
        zinf =
            |a| _mm256_blendv_ps(a, _mm256_set1_ps(f32::INFINITY), _mm256_cmp_ps::<_CMP_EQ_OQ>(a, _mm256_setzero_ps())),
        swap = |a| _mm256_permute_ps::<0b1011_0001>(a)
    );

    impl WidenF32 for F64x8 {
        #[inline]
        #[target_feature(enable = "avx512f")]
        unsafe fn load_f32(p: *const f32) -> Self {
            F64x8(_mm512_cvtps_pd(_mm256_loadu_ps(p)))
        }
    }

    impl WidenF32 for F64x4 {
        #[inline]
        #[target_feature(enable = "avx2")]
        unsafe fn load_f32(p: *const f32) -> Self {
            F64x4(_mm256_cvtps_pd(_mm_loadu_ps(p)))
        }
    }
}

#[cfg(target_arch = "x86_64")]
impl Lanes for f64 {
    type V512 = F64x8;
    type V256 = F64x4;
    type Plain = Plain<f64>;
}

#[cfg(target_arch = "x86_64")]
impl Lanes for f32 {
    type V512 = F32x16;
    type V256 = F32x8;
    type Plain = Plain<f32>;
}

#[cfg(not(target_arch = "x86_64"))]
impl Lanes for f64 {
    type V512 = Plain<f64>;
    type V256 = Plain<f64>;
    type Plain = Plain<f64>;
}

#[cfg(not(target_arch = "x86_64"))]
impl Lanes for f32 {
    type V512 = Plain<f32>;
    type V256 = Plain<f32>;
    type Plain = Plain<f32>;
}
