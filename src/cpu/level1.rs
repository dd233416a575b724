//! Level 1 on the CPU: memory-bound loops, vectorised through `dispatch!` and split across the
//! pool past `HYBLAS_L1_PAR_MIN` elements.

use crate::cpu::threads;
use crate::types::{Scalar, VecMut, VecRef};
use once_cell::sync::Lazy;

/// Elements below which a Level 1 call stays on one thread (the pool's wake-up costs more).
pub static L1_PAR_MIN: Lazy<usize> = Lazy::new(|| crate::config::threshold("HYBLAS_L1_PAR_MIN", 1 << 16));

#[inline(always)]
unsafe fn axpy_body<T: Scalar>(alpha: T, x: VecRef<T>, y: VecMut<T>) {
    if x.inc == 1 && y.inc == 1 {
        let xs = std::slice::from_raw_parts(x.ptr, x.n);
        let ys = std::slice::from_raw_parts_mut(y.ptr, y.n);
        for (yi, &xi) in ys.iter_mut().zip(xs) {
            *yi += alpha * xi;
        }
    } else {
        for i in 0..x.n {
            *y.at(i) += alpha * x.get(i);
        }
    }
}

/// y := alpha*x + y.
///
/// # Safety
/// `x` and `y` are valid views of the same length.
pub unsafe fn axpy<T: Scalar>(alpha: T, x: VecRef<T>, y: VecMut<T>) {
    let n = x.n;
    let t = threads::threads_for(n, *L1_PAR_MIN / 2);
    if t <= 1 {
        return crate::dispatch!(axpy_body::<T>(alpha, x, y));
    }
    let chunk = n.div_ceil(t);
    threads::for_each_part(t, t, |p| {
        let s = p * chunk;
        let len = chunk.min(n.saturating_sub(s));
        if len > 0 {
            let (xs, ys) = (x.sub(s, len), y.sub(s, len));
            crate::dispatch!(axpy_body::<T>(alpha, xs, ys))
        }
    });
}
