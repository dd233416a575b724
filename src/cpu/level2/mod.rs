//! Level 2 on the CPU.
//!
//! Everything memory-bound funnels into three vectorised kernels (`kernels.rs`): fused column
//! axpys (`y += sum_k a_k * s_k`), multi-column dots, and the fused axpy+dot that symmetric and
//! Hermitian products need (one pass over each column serves both halves of the matrix).
//!
//! - `gemv.rs`: GEMV (threads split the columns; for `N` each extra thread sums into a private
//!   `y`) and GBMV.
//! - `symv.rs`: SYMV/HEMV/SPMV/HPMV (columns split, private `y` per thread) and SBMV/HBMV.
//! - `tri.rs`: TRMV/TRSV/TPMV/TPSV, blocked so the off-diagonal work is GEMV; TBMV/TBSV.
//! - `rank.rs`: GER, SYR/HER/SPR/HPR, SYR2/HER2/SPR2/HPR2.
//!
//! - `simd.rs`: the SIMD register abstraction the kernels are written against.
//!
//! Conventions: matrices arrive with unit row stride (the ABI maps row-major CBLAS onto the
//! column-major problem; a view with unit column stride is transposed on entry); `op` is given
//! as `(trans, conj)` so that "conjugate, no transpose", which row-major CBLAS calls need, costs
//! no copy. Vectors with non-unit increments are staged into contiguous buffers (O(n) next to
//! the O(n^2) work). Parallel regions use `threads::for_each_part_inline` with one contiguous
//! part per thread: the caller works too, and the same core sees the same part on every call.
//!
//! Thresholds (elements of the matrix touched; environment or config file): `HYBLAS_GEMV_PAR_MIN`
//! (default 2^15), `HYBLAS_SYMV_PAR_MIN` (2^17), `HYBLAS_RANK_PAR_MIN` (2^17, GER/SYR/SYR2 and
//! their packed and Hermitian forms). TRMV/TRSV and the band forms run on one thread.

mod gemv;
mod kernels;
mod rank;
mod simd;
mod symv;
mod tri;

pub use gemv::{gbmv, gemv, GEMV_PAR_MIN};
pub use rank::{ger, spr, spr2, syr, syr2, RANK_PAR_MIN};
pub use symv::{sbmv, spmv, symv, SYMV_PAR_MIN};
pub use tri::{tbmv, tbsv, tpmv, tpsv, trmv, trsv};

use crate::types::{Scalar, VecMut, VecRef};
use num_traits::Float;

/// Turn a run-time flag into a const generic: `with_flag!(c, C => expr using C)`.
macro_rules! with_flag {
    ($flag:expr, $c:ident => $body:expr) => {
        if $flag {
            const $c: bool = true;
            $body
        } else {
            const $c: bool = false;
            $body
        }
    };
}
pub(crate) use with_flag;

/// A raw pointer that may cross into pool threads. The engine hands each thread a disjoint
/// part of the output; reads are shared.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SyncPtr<T>(pub *mut T);
unsafe impl<T> Send for SyncPtr<T> {}
unsafe impl<T> Sync for SyncPtr<T> {}
impl<T> SyncPtr<T> {
    /// Through a method, so closures capture the whole (Sync) wrapper, not the raw field.
    #[inline(always)]
    pub fn get(self) -> *mut T {
        self.0
    }
}

/// Where the referenced elements of a square matrix live: full column-major storage with a
/// leading dimension, or packed storage of the upper or lower triangle (column by column).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Stor<T> {
    ptr: *mut T,
    kind: Kind,
}
#[derive(Clone, Copy, Debug)]
enum Kind {
    Full { ld: usize },
    PackedUpper,
    PackedLower { n: usize },
}
unsafe impl<T> Send for Stor<T> {}
unsafe impl<T> Sync for Stor<T> {}

impl<T> Stor<T> {
    pub fn full(ptr: *const T, ld: usize) -> Self {
        Stor { ptr: ptr as *mut T, kind: Kind::Full { ld } }
    }
    pub fn packed(ptr: *const T, n: usize, upper: bool) -> Self {
        let kind = if upper { Kind::PackedUpper } else { Kind::PackedLower { n } };
        Stor { ptr: ptr as *mut T, kind }
    }
    /// Address of element (i, j); only for elements the storage holds (for packed storage:
    /// `i <= j` when upper, `i >= j` when lower).
    #[inline(always)]
    pub unsafe fn at(&self, i: usize, j: usize) -> *mut T {
        match self.kind {
            Kind::Full { ld } => self.ptr.add(i + j * ld),
            Kind::PackedUpper => self.ptr.add(i + j * (j + 1) / 2),
            // Column j starts at j*n - j(j-1)/2 and holds rows j..n; j*(2n-j-1) is even.
            Kind::PackedLower { n } => self.ptr.add(i + j * (2 * n - j - 1) / 2),
        }
    }
}

/// A read-only vector as a contiguous slice: borrowed when its increment is 1, else copied.
pub(crate) enum Contig<'a, T> {
    Borrowed(&'a [T]),
    Owned(Vec<T>),
}
impl<T: Copy> Contig<'_, T> {
    /// # Safety
    /// `x` is a valid view.
    pub unsafe fn new(x: VecRef<T>) -> Self {
        if x.inc == 1 || x.n <= 1 {
            Contig::Borrowed(if x.n == 0 { &[] } else { std::slice::from_raw_parts(x.ptr, x.n) })
        } else {
            Contig::Owned((0..x.n).map(|i| x.get(i)).collect())
        }
    }
    pub fn ptr(&self) -> *const T {
        match self {
            Contig::Borrowed(s) => s.as_ptr(),
            Contig::Owned(v) => v.as_ptr(),
        }
    }
}

/// An in/out vector as contiguous memory: the caller's when its increment is 1, else a
/// gathered copy that [`Staged::finish`] scatters back.
pub(crate) struct Staged<T> {
    v: VecMut<T>,
    buf: Option<Vec<T>>,
}
impl<T: Copy> Staged<T> {
    /// # Safety
    /// `v` is a valid view.
    pub unsafe fn new(v: VecMut<T>) -> Self {
        let buf = if v.inc == 1 || v.n <= 1 { None } else { Some((0..v.n).map(|i| v.get(i)).collect()) };
        Staged { v, buf }
    }
    pub fn ptr(&mut self) -> *mut T {
        match &mut self.buf {
            Some(b) => b.as_mut_ptr(),
            None => self.v.ptr,
        }
    }
    /// # Safety
    /// The view given to `new` is still valid.
    pub unsafe fn finish(self) {
        if let Some(b) = self.buf {
            for (i, &e) in b.iter().enumerate() {
                *self.v.at(i) = e;
            }
        }
    }
}

/// y := beta*y as reference BLAS does it: nothing for beta == 1, exact zeros for beta == 0
/// (so NaN/Inf in y do not survive).
///
/// # Safety
/// `y` is a valid view.
pub(crate) unsafe fn scale_vec<T: Scalar>(beta: T, y: VecMut<T>) {
    if beta.is_one() {
        return;
    }
    if beta.is_zero() {
        for i in 0..y.n {
            *y.at(i) = T::zero();
        }
    } else {
        for i in 0..y.n {
            let p = y.at(i);
            *p = beta * *p;
        }
    }
}

/// a / b. Complex quotients use Smith's algorithm (no overflow for large |b|), as Fortran
/// compilers do for COMPLEX division.
#[inline(always)]
pub(crate) fn div<T: Scalar>(a: T, b: T) -> T {
    if !T::IS_COMPLEX {
        return T::from_real(a.re() / b.re());
    }
    let (ar, ai, br, bi) = (a.re(), a.im(), b.re(), b.im());
    if br.abs() >= bi.abs() {
        let r = bi / br;
        let d = br + bi * r;
        T::from_parts((ar + ai * r) / d, (ai - ar * r) / d)
    } else {
        let r = br / bi;
        let d = bi + br * r;
        T::from_parts((ar * r + ai) / d, (ai * r - ar) / d)
    }
}

/// The real part as a scalar (a Hermitian diagonal is read as real).
#[inline(always)]
pub(crate) fn real_part<T: Scalar>(a: T) -> T {
    T::from_real(a.re())
}

/// Column boundaries `b[0]=0 < ... < b[parts]=n` splitting the columns of an n x n triangle
/// into parts of about equal area (column j holds j+1 elements when upper, n-j when lower).
pub(crate) fn triangle_split(n: usize, parts: usize, upper: bool) -> Vec<usize> {
    let total = n * (n + 1) / 2;
    let mut bounds = vec![0];
    let mut acc = 0usize;
    let mut next = 1;
    for j in 0..n {
        acc += if upper { j + 1 } else { n - j };
        if next < parts && acc * parts >= next * total {
            bounds.push(j + 1);
            next += 1;
        }
    }
    while bounds.len() <= parts {
        bounds.push(n);
    }
    bounds
}
