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
