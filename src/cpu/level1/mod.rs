//! Level 1 on the CPU: memory-bound loops over strided vectors.
//!
//! - `elementwise.rs`: axpy, copy, swap, scal, rot, rotm. Every element is computed with the
//!   reference's expression (no FMA contraction, same operand order), so results match
//!   reference BLAS bit for bit.
//! - `reduce.rs`: dot, asum, nrm2, i?amax. Unit-stride sums keep many independent partial sums
//!   ("lanes") so they vectorise without reassociating a single accumulator; lanes, and the
//!   per-thread parts, are combined in a fixed order, so a result depends only on the data
//!   and the thread count. Strided sums run in the reference's order.
//! - `givens.rs`: rotg and rotmg (scalar).
//! - `vector.rs`: the AVX-512 / AVX2 / plain vector types the reduction kernels are written
//!   with.
//!
//! Unit-stride loops are built for AVX-512, AVX2 and baseline CPUs and picked at run time
//! (element-wise ones through `dispatch!`, reductions through `simd_fn!` in `reduce.rs`);
//! vectors past `HYBLAS_L1_PAR_MIN` are split into one contiguous part per thread.

/// `a` as a `B`, where A and B are the same type (checked; the check folds away).
#[inline(always)]
pub(crate) fn cast<A: 'static, B: 'static>(a: A) -> B {
    assert!(std::any::TypeId::of::<A>() == std::any::TypeId::of::<B>());
    // SAFETY: A and B are the same type.
    unsafe { std::mem::transmute_copy(&std::mem::ManuallyDrop::new(a)) }
}

/// Evaluate `$e` with `$F` naming the concrete type (f32 or f64) of the generic real `$R`,
/// and give the result back in terms of `$R` (the vector types hang off the concrete types).
macro_rules! as_concrete {
    ($R:ty, $F:ident => $e:expr) => {
        if std::any::TypeId::of::<$R>() == std::any::TypeId::of::<f32>() {
            type $F = f32;
            $crate::cpu::level1::cast($e)
        } else {
            type $F = f64;
            $crate::cpu::level1::cast($e)
        }
    };
}

/// `unsafe fn $name<R: Lanes>(args) -> ret`: runs `$kernel::<V>(args)` with the widest vector
/// type V the CPU supports, each instance compiled inside a `#[target_feature]` function so the
/// intrinsics inline.
macro_rules! simd_fn {
    ($name:ident => $kernel:ident ($($a:ident: $t:ty),*) -> $ret:ty) => {
        #[inline]
        unsafe fn $name<R: Lanes>($($a: $t),*) -> $ret {
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
                unsafe fn v512<R: Lanes>($($a: $t),*) -> $ret {
                    $kernel::<R::V512>($($a),*)
                }
                #[target_feature(enable = "avx2,fma")]
                unsafe fn v256<R: Lanes>($($a: $t),*) -> $ret {
                    $kernel::<R::V256>($($a),*)
                }
                match *crate::cpu::simd::LEVEL {
                    crate::cpu::simd::Level::Avx512 => return v512::<R>($($a),*),
                    crate::cpu::simd::Level::Avx2 => return v256::<R>($($a),*),
                    crate::cpu::simd::Level::Baseline => {}
                }
            }
            $kernel::<R::Plain>($($a),*)
        }
    };
}

mod elementwise;
mod givens;
mod reduce;
mod vector;

pub use elementwise::*;
pub use givens::*;
pub use reduce::*;

use crate::cpu::threads;
use once_cell::sync::Lazy;
use parking_lot::Mutex;

/// Vector length, in f64-sized elements (an f32 counts half, a complex double twice), from
/// which a Level 1 call is split over two threads (`HYBLAS_L1_PAR_MIN`). Below it handing a
/// part to another thread (about a microsecond when the pool is awake, more when it sleeps)
/// costs more than the second core's bandwidth brings.
pub static L1_PAR_MIN: Lazy<usize> = Lazy::new(|| crate::config::threshold("HYBLAS_L1_PAR_MIN", 1 << 16));

/// Parts of a split vector start on multiples of this many elements, so threads never write to
/// the same cache line.
const SPLIT_ALIGN: usize = 64;

/// Threads worth using for `n` elements of `T`.
#[inline]
fn threads_for<T>(n: usize) -> usize {
    let work = n.saturating_mul(std::mem::size_of::<T>()) / std::mem::size_of::<f64>();
    threads::threads_for(work, (*L1_PAR_MIN / 2).max(1))
}

/// (number of parts, elements per part) for splitting `n` elements over `t` threads.
#[inline]
fn split(n: usize, t: usize) -> (usize, usize) {
    let chunk = n.div_ceil(t.max(1)).next_multiple_of(SPLIT_ALIGN);
    (n.div_ceil(chunk), chunk)
}

/// Run `f(start, len)` on the parts of `0..n`, one per thread.
fn par_parts(n: usize, t: usize, f: impl Fn(usize, usize) + Sync + Send) {
    let (parts, chunk) = split(n, t);
    threads::for_each_part_inline(t, parts, |p| {
        let start = p * chunk;
        f(start, chunk.min(n - start));
    });
}

/// Reduce `0..n` in parts: `f(start, len)` gives each part's partial result and `combine`
/// folds them left to right, so the result depends only on `n` and `t`.
fn par_reduce<A: Copy + Send + Default>(
    n: usize,
    t: usize,
    f: impl Fn(usize, usize) -> A + Sync + Send,
    combine: impl Fn(A, A) -> A,
) -> A {
    let (parts, chunk) = split(n, t);
    let slots: Vec<Mutex<A>> = (0..parts).map(|_| Mutex::new(A::default())).collect();
    threads::for_each_part_inline(t, parts, |p| {
        let start = p * chunk;
        *slots[p].lock() = f(start, chunk.min(n - start));
    });
    slots.into_iter().map(Mutex::into_inner).reduce(combine).unwrap_or_default()
}

/// Leading elements to handle one by one so that `p` + that many is 64-byte aligned (a
/// cache line: vector loads then never straddle two), or `m` if that is never reached.
#[inline(always)]
fn peel<R>(p: *const R, m: usize) -> usize {
    let size = std::mem::size_of::<R>();
    let mis = p as usize % 64;
    if !mis.is_multiple_of(size) {
        return 0;
    }
    (((64 - mis) % 64) / size).min(m)
}

/// Pointer to the underlying reals of a unit-stride vector of `n` elements, and their count
/// (complex numbers are stored as (re, im) pairs).
#[inline(always)]
fn as_reals<T: crate::types::Scalar>(p: *const T, n: usize) -> (*const T::Real, usize) {
    (p as *const T::Real, if T::IS_COMPLEX { 2 * n } else { n })
}

/// Mutable form of [`as_reals`].
#[inline(always)]
fn as_reals_mut<T: crate::types::Scalar>(p: *mut T, n: usize) -> (*mut T::Real, usize) {
    (p as *mut T::Real, if T::IS_COMPLEX { 2 * n } else { n })
}

/// Real zero and one, for the scalar code of rotg/rotmg/nrm2 (short for the `Scalar` calls).
#[inline(always)]
fn zero<R: crate::types::Real>() -> R {
    <R as crate::types::Scalar>::zero()
}

#[inline(always)]
fn one<R: crate::types::Real>() -> R {
    <R as crate::types::Scalar>::one()
}

/// 2^e, exactly (|e| well inside the double range).
#[inline]
fn pow2<R: crate::types::Real>(e: i32) -> R {
    <R as crate::types::Scalar>::from_f64(f64::from_bits(((e + 1023) as u64) << 52))
}
