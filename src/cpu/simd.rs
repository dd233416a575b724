//! Run-time CPU feature dispatch for hot loops.
//!
//! The library is built for baseline x86-64 so it runs anywhere; `dispatch!` compiles the same
//! generic body three times (AVX-512, AVX2+FMA, baseline) through `#[target_feature]` wrappers
//! and picks one from the features detected once at startup. The body must be
//! `#[inline(always)]` so it is optimised inside each wrapper.

use once_cell::sync::Lazy;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Baseline,
    Avx2,
    Avx512,
}

pub static LEVEL: Lazy<Level> = Lazy::new(|| {
    // `HYBLAS_SIMD=avx2|baseline` caps the level (to test or compare the narrower builds).
    let cap = match crate::config::value("HYBLAS_SIMD").as_deref().map(str::to_ascii_lowercase).as_deref() {
        Some("baseline") | Some("none") => Level::Baseline,
        Some("avx2") => Level::Avx2,
        _ => Level::Avx512,
    };
    detected().min(cap)
});

fn detected() -> Level {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") && std::arch::is_x86_feature_detected!("avx512vl") {
            return Level::Avx512;
        }
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
            return Level::Avx2;
        }
    }
    Level::Baseline
}

/// Names of the detected features, for `hyblas info`.
pub fn describe() -> &'static str {
    match *LEVEL {
        Level::Avx512 => "avx512f avx512vl avx2 fma",
        Level::Avx2 => "avx2 fma",
        Level::Baseline => "baseline (no avx2)",
    }
}

/// One core's double-precision FMA rate in GFLOP/s: 16 independent chains of 512-bit FMAs
/// (two FMA ports x 4 cycles of latency need 8), the best of three runs of about 10 ms; None
/// without AVX-512. For measuring the kernels against the machine (`blasbench`, the
/// `kernel_rate` test), not used by any routine.
pub fn fma_peak_gflops() -> Option<f64> {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        if *LEVEL < Level::Avx512 {
            return None;
        }
        #[target_feature(enable = "avx512f")]
        unsafe fn chains(iters: usize) -> f64 {
            // Distinct starting values: 24 equal chains were merged and partly spilled by the
            // compiler, and the "peak" read about half the kernels' rate.
            let mut acc: [__m512d; 16] = std::array::from_fn(|i| _mm512_set1_pd(1.0 + i as f64 * 1e-3));
            let a = _mm512_set1_pd(std::hint::black_box(1.0000001));
            let b = _mm512_set1_pd(std::hint::black_box(-1e-7));
            for _ in 0..iters {
                for v in acc.iter_mut() {
                    *v = _mm512_fmadd_pd(a, *v, b);
                }
            }
            acc.iter().map(|v| _mm512_reduce_add_pd(*v)).sum()
        }
        let iters = 4_000_000;
        let mut best = 0.0f64;
        for _ in 0..3 {
            let t = std::time::Instant::now();
            // SAFETY: AVX-512F was detected (LEVEL).
            std::hint::black_box(unsafe { chains(std::hint::black_box(iters)) });
            best = best.max((iters * 16 * 16) as f64 / t.elapsed().as_secs_f64() / 1e9);
        }
        Some(best)
    }
    #[cfg(not(target_arch = "x86_64"))]
    None
}

/// Call `$body(args...)` (an `#[inline(always)]` generic fn) compiled for the best level.
/// The closures handed to the `#[target_feature]` wrappers are `#[inline(always)]` too:
/// otherwise a large body may stay outside the wrapper and be built without AVX.
///
/// ```ignore
/// dispatch!(axpy_body::<T>(alpha, x, y))
/// ```
#[macro_export]
#[doc(hidden)]
macro_rules! dispatch {
    ($f:ident $(::<$($g:ty),*>)? ($($arg:expr),* $(,)?)) => {{
        #[cfg(target_arch = "x86_64")]
        {
            #[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
            #[inline]
            unsafe fn avx512<R>(f: impl FnOnce() -> R) -> R { f() }
            #[target_feature(enable = "avx2,fma")]
            #[inline]
            unsafe fn avx2<R>(f: impl FnOnce() -> R) -> R { f() }
            match *$crate::cpu::simd::LEVEL {
                $crate::cpu::simd::Level::Avx512 => unsafe { avx512(#[inline(always)] || $f$(::<$($g),*>)?($($arg),*)) },
                $crate::cpu::simd::Level::Avx2 => unsafe { avx2(#[inline(always)] || $f$(::<$($g),*>)?($($arg),*)) },
                $crate::cpu::simd::Level::Baseline => $f$(::<$($g),*>)?($($arg),*),
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            $f$(::<$($g),*>)?($($arg),*)
        }
    }};
}

/// Like [`dispatch!`], but also hands the kernel its build level as the last const generic
/// argument (`LV`: 2 = AVX-512, 1 = AVX2+FMA, 0 = baseline), which picks the SIMD registers
/// and whether scalar code may use `mul_add` (see [`mac`]).
///
/// ```ignore
/// dispatch_level!(gemv_t_block::<T, CJ>(m, n, a, x, alpha, out, inc))  // calls ::<T, CJ, LV>
/// ```
#[macro_export]
#[doc(hidden)]
macro_rules! dispatch_level {
    ($f:ident :: < $($g:tt),* > ( $($arg:expr),* $(,)? )) => {{
        #[cfg(target_arch = "x86_64")]
        {
            #[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
            #[inline]
            unsafe fn avx512<R>(f: impl FnOnce() -> R) -> R {
                f()
            }
            #[target_feature(enable = "avx2,fma")]
            #[inline]
            unsafe fn avx2<R>(f: impl FnOnce() -> R) -> R {
                f()
            }
            match *$crate::cpu::simd::LEVEL {
                $crate::cpu::simd::Level::Avx512 => unsafe { avx512(#[inline(always)] || $f::<$($g),*, 2>($($arg),*)) },
                $crate::cpu::simd::Level::Avx2 => unsafe { avx2(#[inline(always)] || $f::<$($g),*, 1>($($arg),*)) },
                $crate::cpu::simd::Level::Baseline => $f::<$($g),*, 0>($($arg),*),
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            $f::<$($g),*, 0>($($arg),*)
        }
    }};
}

/// acc + a*b, fused (one rounding) at the FMA levels (`LV` > 0, see [`dispatch_level!`]);
/// on the baseline `mul_add` would be a libm call per element.
#[inline(always)]
pub fn mac<T: crate::types::Scalar, const LV: u8>(acc: T, a: T, b: T) -> T {
    use num_traits::Float;
    if LV == 0 {
        return acc + a * b;
    }
    if T::IS_COMPLEX {
        let (ar, ai, br, bi) = (a.re(), a.im(), b.re(), b.im());
        let re = (-ai).mul_add(bi, ar.mul_add(br, acc.re()));
        let im = ai.mul_add(br, ar.mul_add(bi, acc.im()));
        T::from_parts(re, im)
    } else {
        T::from_real(a.re().mul_add(b.re(), acc.re()))
    }
}
