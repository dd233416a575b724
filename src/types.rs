//! The vocabulary shared by every layer: the four precisions (`Scalar`), the two Fortran
//! integer widths (`FInt`), BLAS option enums, and raw strided views of vectors and matrices.
//!
//! Views hold raw pointers because they come straight from C callers; every engine routine
//! that takes one is `unsafe` and documents that the caller (the ABI layer) has validated the
//! shape and the leading dimensions first.

use num_complex::Complex;
use std::fmt::Debug;
use std::ops::{Add, AddAssign, Div, Mul, MulAssign, Neg, Sub, SubAssign};

pub type C32 = Complex<f32>;
pub type C64 = Complex<f64>;

/// A real floating-point type: `f32` or `f64`.
pub trait Real: Scalar<Real = Self> + PartialOrd + num_traits::Float + Div<Output = Self> {
    /// Machine epsilon, safe minimum etc. come from `num_traits::Float`.
    fn to_f64(self) -> f64;
}

/// Where per-precision tables (`[_; 4]`) keep precision `prefix`: s, d, c, z -> 0, 1, 2, 3.
pub const fn prec_index(prefix: char) -> usize {
    match prefix {
        's' => 0,
        'd' => 1,
        'c' => 2,
        _ => 3,
    }
}

/// One of the four BLAS precisions. Generic routine bodies are written once over this trait.
pub trait Scalar:
    Copy
    + Send
    + Sync
    + 'static
    + Debug
    + Default
    + PartialEq
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Neg<Output = Self>
    + AddAssign
    + SubAssign
    + MulAssign
{
    type Real: Real;
    /// 's', 'd', 'c' or 'z': the BLAS name prefix, used for names in traces and xerbla.
    const PREFIX: char;
    /// 0, 1, 2, 3 for s, d, c, z: where per-precision tables keep this precision.
    const INDEX: usize = prec_index(Self::PREFIX);
    const IS_COMPLEX: bool;
    fn zero() -> Self;
    fn one() -> Self;
    fn from_real(r: Self::Real) -> Self;
    fn from_f64(r: f64) -> Self;
    fn from_parts(re: Self::Real, im: Self::Real) -> Self;
    fn re(self) -> Self::Real;
    fn im(self) -> Self::Real;
    fn conj(self) -> Self;
    /// |re| + |im| (BLAS `?cabs1`, used by `i?amax` and `?asum` on complex data).
    fn abs1(self) -> Self::Real;
    fn mul_real(self, r: Self::Real) -> Self;
    #[inline(always)]
    fn is_zero(self) -> bool {
        self == Self::zero()
    }
    #[inline(always)]
    fn is_one(self) -> bool {
        self == Self::one()
    }
    /// `self` or its conjugate.
    #[inline(always)]
    fn conj_if(self, c: bool) -> Self {
        if c {
            self.conj()
        } else {
            self
        }
    }
}

macro_rules! impl_real {
    ($t:ty, $p:literal) => {
        impl Scalar for $t {
            type Real = $t;
            const PREFIX: char = $p;
            const IS_COMPLEX: bool = false;
            #[inline(always)]
            fn zero() -> Self {
                0.0
            }
            #[inline(always)]
            fn one() -> Self {
                1.0
            }
            #[inline(always)]
            fn from_real(r: $t) -> Self {
                r
            }
            #[inline(always)]
            fn from_f64(r: f64) -> Self {
                r as $t
            }
            #[inline(always)]
            fn from_parts(re: $t, _im: $t) -> Self {
                re
            }
            #[inline(always)]
            fn re(self) -> $t {
                self
            }
            #[inline(always)]
            fn im(self) -> $t {
                0.0
            }
            #[inline(always)]
            fn conj(self) -> Self {
                self
            }
            #[inline(always)]
            fn abs1(self) -> $t {
                self.abs()
            }
            #[inline(always)]
            fn mul_real(self, r: $t) -> Self {
                self * r
            }
        }
        impl Real for $t {
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self as f64
            }
        }
    };
}
impl_real!(f32, 's');
impl_real!(f64, 'd');

macro_rules! impl_complex {
    ($r:ty, $p:literal) => {
        impl Scalar for Complex<$r> {
            type Real = $r;
            const PREFIX: char = $p;
            const IS_COMPLEX: bool = true;
            #[inline(always)]
            fn zero() -> Self {
                Complex::new(0.0, 0.0)
            }
            #[inline(always)]
            fn one() -> Self {
                Complex::new(1.0, 0.0)
            }
            #[inline(always)]
            fn from_real(r: $r) -> Self {
                Complex::new(r, 0.0)
            }
            #[inline(always)]
            fn from_f64(r: f64) -> Self {
                Complex::new(r as $r, 0.0)
            }
            #[inline(always)]
            fn from_parts(re: $r, im: $r) -> Self {
                Complex::new(re, im)
            }
            #[inline(always)]
            fn re(self) -> $r {
                self.re
            }
            #[inline(always)]
            fn im(self) -> $r {
                self.im
            }
            #[inline(always)]
            fn conj(self) -> Self {
                Complex::new(self.re, -self.im)
            }
            #[inline(always)]
            fn abs1(self) -> $r {
                self.re.abs() + self.im.abs()
            }
            #[inline(always)]
            fn mul_real(self, r: $r) -> Self {
                Complex::new(self.re * r, self.im * r)
            }
        }
    };
}
impl_complex!(f32, 'c');
impl_complex!(f64, 'z');

/// A Fortran INTEGER: `i32` for the LP64 ABI (`dgemm_`), `i64` for ILP64 (`dgemm_64_`).
pub trait FInt: Copy + Send + Sync + 'static + Debug {
    /// Symbol suffix of this ABI: "_" or "_64_".
    const SUFFIX: &'static str;
    fn to_isize(self) -> isize;
    fn from_isize(v: isize) -> Self;
    /// Read a by-reference Fortran integer argument.
    ///
    /// # Safety
    /// `p` must point to a readable integer (BLAS callers always pass one).
    #[inline(always)]
    unsafe fn read(p: *const Self) -> isize {
        (*p).to_isize()
    }
}
impl FInt for i32 {
    const SUFFIX: &'static str = "_";
    #[inline(always)]
    fn to_isize(self) -> isize {
        self as isize
    }
    #[inline(always)]
    fn from_isize(v: isize) -> Self {
        v as i32
    }
}
impl FInt for i64 {
    const SUFFIX: &'static str = "_64_";
    #[inline(always)]
    fn to_isize(self) -> isize {
        self as isize
    }
    #[inline(always)]
    fn from_isize(v: isize) -> Self {
        v as i64
    }
}

/// op(A) for a matrix operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trans {
    No,
    Trans,
    ConjTrans,
}
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Uplo {
    Upper,
    Lower,
}
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Diag {
    NonUnit,
    Unit,
}
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Left,
    Right,
}

impl Uplo {
    pub fn flip(self) -> Uplo {
        match self {
            Uplo::Upper => Uplo::Lower,
            Uplo::Lower => Uplo::Upper,
        }
    }
}
impl Side {
    pub fn flip(self) -> Side {
        match self {
            Side::Left => Side::Right,
            Side::Right => Side::Left,
        }
    }
}
impl Trans {
    /// Is the operand transposed (T or C)?
    pub fn is_trans(self) -> bool {
        self != Trans::No
    }
    pub fn is_conj(self) -> bool {
        self == Trans::ConjTrans
    }
}

/// Fortran character options, read like LSAME: first byte only, case-insensitive. Hidden
/// length arguments are never relied on (many C callers omit them).
pub mod chars {
    use super::*;
    use std::os::raw::c_char;

    #[inline]
    pub fn upper(c: c_char) -> u8 {
        (c as u8).to_ascii_uppercase()
    }
    /// # Safety
    /// `p` must point to at least one readable byte.
    #[inline]
    pub unsafe fn trans(p: *const c_char) -> Option<Trans> {
        match upper(*p) {
            b'N' => Some(Trans::No),
            b'T' => Some(Trans::Trans),
            b'C' => Some(Trans::ConjTrans),
            _ => None,
        }
    }
    /// # Safety
    /// `p` must point to at least one readable byte.
    #[inline]
    pub unsafe fn uplo(p: *const c_char) -> Option<Uplo> {
        match upper(*p) {
            b'U' => Some(Uplo::Upper),
            b'L' => Some(Uplo::Lower),
            _ => None,
        }
    }
    /// # Safety
    /// `p` must point to at least one readable byte.
    #[inline]
    pub unsafe fn diag(p: *const c_char) -> Option<Diag> {
        match upper(*p) {
            b'N' => Some(Diag::NonUnit),
            b'U' => Some(Diag::Unit),
            _ => None,
        }
    }
    /// # Safety
    /// `p` must point to at least one readable byte.
    #[inline]
    pub unsafe fn side(p: *const c_char) -> Option<Side> {
        match upper(*p) {
            b'L' => Some(Side::Left),
            b'R' => Some(Side::Right),
            _ => None,
        }
    }
}

/// A read-only strided vector: logical element `i` lives at `ptr.offset(i * inc)`.
/// BLAS negative increments are folded in by [`VecRef::from_blas`].
#[derive(Clone, Copy, Debug)]
pub struct VecRef<T> {
    pub ptr: *const T,
    pub n: usize,
    pub inc: isize,
}
/// A writable strided vector (same layout rules as [`VecRef`]).
#[derive(Clone, Copy, Debug)]
pub struct VecMut<T> {
    pub ptr: *mut T,
    pub n: usize,
    pub inc: isize,
}
unsafe impl<T: Sync> Send for VecRef<T> {}
unsafe impl<T: Sync> Sync for VecRef<T> {}
unsafe impl<T: Send> Send for VecMut<T> {}
unsafe impl<T: Send> Sync for VecMut<T> {}

/// Offset of logical element 0 for a BLAS vector argument: with `inc < 0` the first element
/// is the last in memory, at `(n-1)*|inc|` (reference BLAS's `KX = 1 - (N-1)*INCX`).
#[inline(always)]
pub fn blas_start(n: usize, inc: isize) -> isize {
    if inc < 0 && n > 0 {
        (n as isize - 1) * -inc
    } else {
        0
    }
}

impl<T> VecRef<T> {
    /// # Safety
    /// `base` must be the pointer a BLAS caller passed for an `n`-vector with increment `inc`.
    #[inline(always)]
    pub unsafe fn from_blas(base: *const T, n: usize, inc: isize) -> Self {
        VecRef { ptr: base.offset(blas_start(n, inc)), n, inc }
    }
    /// # Safety
    /// `i < n` and the view is valid.
    #[inline(always)]
    pub unsafe fn get(&self, i: usize) -> T
    where
        T: Copy,
    {
        *self.ptr.offset(i as isize * self.inc)
    }
    /// Sub-vector `[start, start+len)`.
    ///
    /// # Safety
    /// `start + len <= n`.
    #[inline(always)]
    pub unsafe fn sub(&self, start: usize, len: usize) -> Self {
        VecRef { ptr: self.ptr.offset(start as isize * self.inc), n: len, inc: self.inc }
    }
}
impl<T> VecMut<T> {
    /// # Safety
    /// `base` must be the pointer a BLAS caller passed for an `n`-vector with increment `inc`.
    #[inline(always)]
    pub unsafe fn from_blas(base: *mut T, n: usize, inc: isize) -> Self {
        VecMut { ptr: base.offset(blas_start(n, inc)), n, inc }
    }
    #[inline(always)]
    pub fn as_ref(&self) -> VecRef<T> {
        VecRef { ptr: self.ptr, n: self.n, inc: self.inc }
    }
    /// # Safety
    /// `i < n` and the view is valid.
    #[inline(always)]
    pub unsafe fn get(&self, i: usize) -> T
    where
        T: Copy,
    {
        *self.ptr.offset(i as isize * self.inc)
    }
    /// # Safety
    /// `i < n` and the view is valid.
    #[inline(always)]
    pub unsafe fn at<'a>(self, i: usize) -> &'a mut T {
        &mut *self.ptr.offset(i as isize * self.inc)
    }
    /// Sub-vector `[start, start+len)`.
    ///
    /// # Safety
    /// `start + len <= n`.
    #[inline(always)]
    pub unsafe fn sub(&self, start: usize, len: usize) -> Self {
        VecMut { ptr: self.ptr.offset(start as isize * self.inc), n: len, inc: self.inc }
    }
}

/// A read-only matrix with general strides: element (i, j) at `ptr + i*rs + j*cs`.
/// A column-major BLAS operand with leading dimension `ld` has `rs = 1, cs = ld`; its
/// transpose (and a row-major operand) swaps the two.
#[derive(Clone, Copy, Debug)]
pub struct MatRef<T> {
    pub ptr: *const T,
    pub rows: usize,
    pub cols: usize,
    pub rs: isize,
    pub cs: isize,
}
/// A writable matrix view (same layout rules as [`MatRef`]).
#[derive(Clone, Copy, Debug)]
pub struct MatMut<T> {
    pub ptr: *mut T,
    pub rows: usize,
    pub cols: usize,
    pub rs: isize,
    pub cs: isize,
}
unsafe impl<T: Sync> Send for MatRef<T> {}
unsafe impl<T: Sync> Sync for MatRef<T> {}
unsafe impl<T: Send> Send for MatMut<T> {}
unsafe impl<T: Send> Sync for MatMut<T> {}

impl<T> MatRef<T> {
    /// Column-major `rows x cols` operand with leading dimension `ld`.
    #[inline(always)]
    pub fn col_major(ptr: *const T, rows: usize, cols: usize, ld: usize) -> Self {
        MatRef { ptr, rows, cols, rs: 1, cs: ld as isize }
    }

    /// op(X) of a stored column-major operand (`rows x cols` = op(X)'s shape, `ld` the
    /// stored matrix's), and whether it is conjugated.
    #[inline]
    pub fn op(ptr: *const T, t: Trans, rows: usize, cols: usize, ld: usize) -> (Self, bool) {
        match t {
            Trans::No => (Self::col_major(ptr, rows, cols, ld), false),
            _ => (Self::col_major(ptr, cols, rows, ld).t(), t == Trans::ConjTrans),
        }
    }
    #[inline(always)]
    pub fn t(self) -> Self {
        MatRef { ptr: self.ptr, rows: self.cols, cols: self.rows, rs: self.cs, cs: self.rs }
    }
    /// # Safety
    /// (i, j) inside the view.
    #[inline(always)]
    pub unsafe fn ptr_at(&self, i: usize, j: usize) -> *const T {
        self.ptr.offset(i as isize * self.rs + j as isize * self.cs)
    }
    /// # Safety
    /// (i, j) inside the view.
    #[inline(always)]
    pub unsafe fn get(&self, i: usize, j: usize) -> T
    where
        T: Copy,
    {
        *self.ptr_at(i, j)
    }
    /// The block starting at (i, j) of size rows x cols.
    ///
    /// # Safety
    /// The block lies inside the view.
    #[inline(always)]
    pub unsafe fn sub(&self, i: usize, j: usize, rows: usize, cols: usize) -> Self {
        MatRef { ptr: self.ptr_at(i, j), rows, cols, rs: self.rs, cs: self.cs }
    }
}
impl<T> MatMut<T> {
    /// Column-major `rows x cols` operand with leading dimension `ld`.
    #[inline(always)]
    pub fn col_major(ptr: *mut T, rows: usize, cols: usize, ld: usize) -> Self {
        MatMut { ptr, rows, cols, rs: 1, cs: ld as isize }
    }
    #[inline(always)]
    pub fn t(self) -> Self {
        MatMut { ptr: self.ptr, rows: self.cols, cols: self.rows, rs: self.cs, cs: self.rs }
    }
    #[inline(always)]
    pub fn as_ref(&self) -> MatRef<T> {
        MatRef { ptr: self.ptr, rows: self.rows, cols: self.cols, rs: self.rs, cs: self.cs }
    }
    /// # Safety
    /// (i, j) inside the view.
    #[inline(always)]
    pub unsafe fn ptr_at(&self, i: usize, j: usize) -> *mut T {
        self.ptr.offset(i as isize * self.rs + j as isize * self.cs)
    }
    /// # Safety
    /// (i, j) inside the view.
    #[inline(always)]
    pub unsafe fn at<'a>(self, i: usize, j: usize) -> &'a mut T {
        &mut *self.ptr_at(i, j)
    }
    /// # Safety
    /// (i, j) inside the view.
    #[inline(always)]
    pub unsafe fn get(&self, i: usize, j: usize) -> T
    where
        T: Copy,
    {
        *self.ptr_at(i, j)
    }
    /// The block starting at (i, j) of size rows x cols.
    ///
    /// # Safety
    /// The block lies inside the view.
    #[inline(always)]
    pub unsafe fn sub(&self, i: usize, j: usize, rows: usize, cols: usize) -> Self {
        MatMut { ptr: self.ptr_at(i, j), rows, cols, rs: self.rs, cs: self.cs }
    }
}
