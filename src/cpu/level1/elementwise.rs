//! Element-by-element Level 1 operations: axpy, copy, swap, scal, rot, rotm.
//!
//! Loops work on raw pointers rather than slices: callers may pass overlapping vectors (e.g.
//! `daxpy(n, a, x, 1, x, 1)`), so nothing may be assumed `noalias`; LLVM vectorises with a
//! run-time overlap check and keeps the sequential semantics when they do overlap.

use super::vector::{Lanes, Vector};
use super::{as_reals_mut, par_parts, peel, threads_for};
use crate::types::{Real, Scalar, VecMut, VecRef};
use std::mem::size_of;

/// The bytes [lo, hi) a strided view touches.
fn span<T>(ptr: *const T, n: usize, inc: isize) -> (usize, usize) {
    if n == 0 {
        return (0, 0);
    }
    let first = ptr as usize;
    let last = (ptr as isize).wrapping_add((n as isize - 1) * inc * size_of::<T>() as isize) as usize;
    (first.min(last), first.max(last) + size_of::<T>())
}

/// Do two views share memory? (Callers may pass overlapping vectors; such calls then run on
/// one thread, in the reference's element order.)
fn overlap<T>(a: (*const T, usize, isize), b: (*const T, usize, isize)) -> bool {
    let (a, b) = (span(a.0, a.1, a.2), span(b.0, b.1, b.2));
    a.0 < b.1 && b.0 < a.1
}

/// y := y + alpha*x over `n` unit-stride reals, blocks of four vectors.
#[inline(always)]
unsafe fn axpy_k<V: Vector>(alpha: V::R, x: *const V::R, y: *mut V::R, n: usize) {
    let w = V::W;
    let a = V::splat(alpha);
    let mut i = 0;
    while i < peel(y, n) {
        *y.add(i) = *y.add(i) + alpha * *x.add(i);
        i += 1;
    }
    while i + 4 * w <= n {
        // All loads before the stores: with x ahead of y in the same array the loads still
        // see the values the sequential loop would.
        let r0 = V::load(y.add(i)).add(a.mul(V::load(x.add(i))));
        let r1 = V::load(y.add(i + w)).add(a.mul(V::load(x.add(i + w))));
        let r2 = V::load(y.add(i + 2 * w)).add(a.mul(V::load(x.add(i + 2 * w))));
        let r3 = V::load(y.add(i + 3 * w)).add(a.mul(V::load(x.add(i + 3 * w))));
        r0.store(y.add(i));
        r1.store(y.add(i + w));
        r2.store(y.add(i + 2 * w));
        r3.store(y.add(i + 3 * w));
        i += 4 * w;
    }
    while i < n {
        *y.add(i) = *y.add(i) + alpha * *x.add(i);
        i += 1;
    }
}

simd_fn!(axpy_simd => axpy_k(alpha: R, x: *const R, y: *mut R, n: usize) -> ());

/// x := alpha*x over `n` unit-stride reals.
#[inline(always)]
unsafe fn scal_k<V: Vector>(alpha: V::R, x: *mut V::R, n: usize) {
    let w = V::W;
    let a = V::splat(alpha);
    let mut i = 0;
    while i < peel(x, n) {
        *x.add(i) = alpha * *x.add(i);
        i += 1;
    }
    while i + 4 * w <= n {
        a.mul(V::load(x.add(i))).store(x.add(i));
        a.mul(V::load(x.add(i + w))).store(x.add(i + w));
        a.mul(V::load(x.add(i + 2 * w))).store(x.add(i + 2 * w));
        a.mul(V::load(x.add(i + 3 * w))).store(x.add(i + 3 * w));
        i += 4 * w;
    }
    while i < n {
        *x.add(i) = alpha * *x.add(i);
        i += 1;
    }
}

simd_fn!(scal_simd => scal_k(alpha: R, x: *mut R, n: usize) -> ());

#[inline(always)]
unsafe fn axpy_body<T: Scalar>(alpha: T, x: VecRef<T>, y: VecMut<T>) {
    if x.inc == 1 && y.inc == 1 {
        let (xp, yp) = (x.ptr, y.ptr);
        for i in 0..x.n {
            *yp.add(i) += alpha * *xp.add(i);
        }
    } else {
        for i in 0..x.n {
            *y.at(i) += alpha * x.get(i);
        }
    }
}

/// y := alpha*x + y (each element `y + alpha*x`, complex products in the textbook form).
///
/// # Safety
/// `x` and `y` are valid views of the same length.
pub unsafe fn axpy<T: Scalar>(alpha: T, x: VecRef<T>, y: VecMut<T>) {
    let n = x.n;
    let aliased = overlap((x.ptr, n, x.inc), (y.ptr as *const T, n, y.inc));
    let run = |x: VecRef<T>, y: VecMut<T>| {
        // Real unit-stride vectors take the vector kernel unless x starts before y inside
        // it (then each element must see the updates of the ones before it).
        if !T::IS_COMPLEX && x.inc == 1 && y.inc == 1 && !(aliased && (x.ptr as usize) < (y.ptr as usize)) {
            let a = alpha.re();
            as_concrete!(T::Real, F => axpy_simd::<F>(super::cast(a), x.ptr as *const F, y.ptr as *mut F, x.n))
        } else {
            crate::dispatch!(axpy_body::<T>(alpha, x, y))
        }
    };
    let t = if y.inc != 0 && !aliased { threads_for::<T>(n) } else { 1 };
    if t <= 1 {
        return run(x, y);
    }
    par_parts(n, t, |s, len| run(x.sub(s, len), y.sub(s, len)));
}

#[inline(always)]
unsafe fn copy_body<T: Scalar>(x: VecRef<T>, y: VecMut<T>) {
    let (xs, ys) = (x.ptr as usize, y.ptr as usize);
    // memmove equals the reference's forward loop unless y starts inside x, after its start.
    if x.inc == 1 && y.inc == 1 && !(ys > xs && ys < xs + x.n * size_of::<T>()) {
        std::ptr::copy(x.ptr, y.ptr, x.n);
    } else {
        for i in 0..x.n {
            *y.at(i) = x.get(i);
        }
    }
}

/// y := x.
///
/// # Safety
/// `x` and `y` are valid views of the same length.
pub unsafe fn copy<T: Scalar>(x: VecRef<T>, y: VecMut<T>) {
    let n = x.n;
    let aliased = overlap((x.ptr, n, x.inc), (y.ptr as *const T, n, y.inc));
    let t = if y.inc != 0 && !aliased { threads_for::<T>(n) } else { 1 };
    if t <= 1 {
        return copy_body(x, y);
    }
    par_parts(n, t, |s, len| copy_body(x.sub(s, len), y.sub(s, len)));
}

#[inline(always)]
unsafe fn swap_body<T: Scalar>(x: VecMut<T>, y: VecMut<T>) {
    if x.inc == 1 && y.inc == 1 {
        let (xp, yp) = (x.ptr, y.ptr);
        for i in 0..x.n {
            let t = *xp.add(i);
            *xp.add(i) = *yp.add(i);
            *yp.add(i) = t;
        }
    } else {
        for i in 0..x.n {
            let t = x.get(i);
            *x.at(i) = y.get(i);
            *y.at(i) = t;
        }
    }
}

/// x <-> y.
///
/// # Safety
/// `x` and `y` are valid views of the same length.
pub unsafe fn swap<T: Scalar>(x: VecMut<T>, y: VecMut<T>) {
    let n = x.n;
    let t = if x.inc != 0 && y.inc != 0 && !overlap((x.ptr as *const T, n, x.inc), (y.ptr as *const T, n, y.inc)) {
        threads_for::<T>(n)
    } else {
        1
    };
    if t <= 1 {
        return crate::dispatch!(swap_body::<T>(x, y));
    }
    par_parts(n, t, |s, len| crate::dispatch!(swap_body::<T>(x.sub(s, len), y.sub(s, len))));
}

#[inline(always)]
unsafe fn scal_body<T: Scalar>(alpha: T, x: VecMut<T>) {
    if x.inc == 1 {
        let p = x.ptr;
        for i in 0..x.n {
            *p.add(i) = alpha * *p.add(i);
        }
    } else {
        for i in 0..x.n {
            let p = x.at(i);
            *p = alpha * *p;
        }
    }
}

/// x := alpha*x, the product formed as `alpha * x` (reference `?scal`; zero times Inf or
/// NaN stays NaN, as in the reference).
///
/// # Safety
/// `x` is a valid view.
pub unsafe fn scal<T: Scalar>(alpha: T, x: VecMut<T>) {
    let n = x.n;
    let run = |x: VecMut<T>| {
        if !T::IS_COMPLEX && x.inc == 1 {
            let a = alpha.re();
            as_concrete!(T::Real, F => scal_simd::<F>(super::cast(a), x.ptr as *mut F, x.n))
        } else {
            crate::dispatch!(scal_body::<T>(alpha, x))
        }
    };
    let t = if x.inc != 0 { threads_for::<T>(n) } else { 1 };
    if t <= 1 {
        return run(x);
    }
    par_parts(n, t, |s, len| run(x.sub(s, len)));
}

/// x := alpha*x for a real alpha, each part of a complex x scaled on its own (`csscal`,
/// `zdscal`: (alpha*re, alpha*im), not a complex product with (alpha, 0)).
///
/// # Safety
/// `x` is a valid view.
pub unsafe fn scal_real<T: Scalar>(alpha: T::Real, x: VecMut<T>) {
    if x.inc == 1 {
        let (p, m) = as_reals_mut(x.ptr, x.n);
        return scal(alpha, VecMut { ptr: p, n: m, inc: 1 });
    }
    let n = x.n;
    let t = if x.inc != 0 { threads_for::<T>(n) } else { 1 };
    let body = |x: VecMut<T>| {
        for i in 0..x.n {
            let p = x.at(i);
            *p = p.mul_real(alpha);
        }
    };
    if t <= 1 {
        return body(x);
    }
    par_parts(n, t, |s, len| body(x.sub(s, len)));
}

#[inline(always)]
unsafe fn rot_body<T: Scalar>(c: T::Real, s: T::Real, x: VecMut<T>, y: VecMut<T>) {
    // The reference multiplies a complex element by c and s converted to (c, +0) and (s, +0):
    // full complex products, so Inf/NaN and zero signs spread between the parts as there.
    let (c, s) = (T::from_real(c), T::from_real(s));
    if x.inc == 1 && y.inc == 1 {
        let (xp, yp) = (x.ptr, y.ptr);
        for i in 0..x.n {
            let (xi, yi) = (*xp.add(i), *yp.add(i));
            *xp.add(i) = c * xi + s * yi;
            *yp.add(i) = c * yi - s * xi;
        }
    } else {
        for i in 0..x.n {
            let (xi, yi) = (x.get(i), y.get(i));
            *x.at(i) = c * xi + s * yi;
            *y.at(i) = c * yi - s * xi;
        }
    }
}

/// Plane rotation with real c, s: (x, y) := (c*x + s*y, c*y - s*x) (`?rot`, `csrot`, `zdrot`;
/// for complex vectors c and s act as the complex numbers (c, 0), (s, 0)).
///
/// # Safety
/// `x` and `y` are valid views of the same length.
pub unsafe fn rot<T: Scalar>(c: T::Real, s: T::Real, x: VecMut<T>, y: VecMut<T>) {
    let n = x.n;
    let t = if x.inc != 0 && y.inc != 0 && !overlap((x.ptr as *const T, n, x.inc), (y.ptr as *const T, n, y.inc)) {
        threads_for::<T>(n)
    } else {
        1
    };
    if t <= 1 {
        return crate::dispatch!(rot_body::<T>(c, s, x, y));
    }
    par_parts(n, t, |i, len| crate::dispatch!(rot_body::<T>(c, s, x.sub(i, len), y.sub(i, len))));
}

/// The modified-Givens matrix H of a `param` array, in the form `?rotm` applies it.
#[derive(Clone, Copy, Debug)]
enum RotmH<R> {
    /// flag < 0: H = [h11 h12; h21 h22].
    Full(R, R, R, R),
    /// flag = 0: H = [1 h12; h21 1].
    OffDiag(R, R),
    /// flag > 0: H = [h11 1; -1 h22].
    Diag(R, R),
}

#[inline(always)]
unsafe fn rotm_apply<R: Real>(h: RotmH<R>, x: *mut R, y: *mut R) {
    let (w, z) = (*x, *y);
    match h {
        RotmH::Full(h11, h21, h12, h22) => {
            *x = w * h11 + z * h12;
            *y = w * h21 + z * h22;
        }
        RotmH::OffDiag(h21, h12) => {
            *x = w + z * h12;
            *y = w * h21 + z;
        }
        RotmH::Diag(h11, h22) => {
            *x = w * h11 + z;
            *y = -w + h22 * z;
        }
    }
}

#[inline(always)]
unsafe fn rotm_body<R: Real>(h: RotmH<R>, x: VecMut<R>, y: VecMut<R>) {
    if x.inc == 1 && y.inc == 1 {
        // One loop per form, so each vectorises without a per-element branch.
        let (xp, yp) = (x.ptr, y.ptr);
        match h {
            RotmH::Full(h11, h21, h12, h22) => {
                for i in 0..x.n {
                    let (w, z) = (*xp.add(i), *yp.add(i));
                    *xp.add(i) = w * h11 + z * h12;
                    *yp.add(i) = w * h21 + z * h22;
                }
            }
            RotmH::OffDiag(h21, h12) => {
                for i in 0..x.n {
                    let (w, z) = (*xp.add(i), *yp.add(i));
                    *xp.add(i) = w + z * h12;
                    *yp.add(i) = w * h21 + z;
                }
            }
            RotmH::Diag(h11, h22) => {
                for i in 0..x.n {
                    let (w, z) = (*xp.add(i), *yp.add(i));
                    *xp.add(i) = w * h11 + z;
                    *yp.add(i) = -w + h22 * z;
                }
            }
        }
    } else {
        for i in 0..x.n {
            rotm_apply(h, x.at(i), y.at(i));
        }
    }
}

/// Apply the modified Givens transformation in `param` (`?rotm`): flag = param[0] selects
/// the form as the reference does (-2: identity, < 0: full, 0: unit diagonal, > 0: unit
/// off-diagonal).
///
/// # Safety
/// `x` and `y` are valid views of the same length.
pub unsafe fn rotm<R: Real>(param: [R; 5], x: VecMut<R>, y: VecMut<R>) {
    let flag = param[0];
    let two = <R as Scalar>::from_f64(2.0);
    if x.n == 0 || flag + two == <R as Scalar>::zero() {
        return;
    }
    let zero = <R as Scalar>::zero();
    let h = if flag < zero {
        RotmH::Full(param[1], param[2], param[3], param[4])
    } else if flag == zero {
        RotmH::OffDiag(param[2], param[3])
    } else {
        RotmH::Diag(param[1], param[4])
    };
    let n = x.n;
    let t = if x.inc != 0 && y.inc != 0 && !overlap((x.ptr as *const R, n, x.inc), (y.ptr as *const R, n, y.inc)) {
        threads_for::<R>(n)
    } else {
        1
    };
    if t <= 1 {
        return crate::dispatch!(rotm_body::<R>(h, x, y));
    }
    par_parts(n, t, |i, len| crate::dispatch!(rotm_body::<R>(h, x.sub(i, len), y.sub(i, len))));
}
