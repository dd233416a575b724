//! Batched GEMM with oneMKL's signatures (OpenBLAS 0.3.34 has the same ones):
//! `cblas_?gemm_batch`, `cblas_?gemm_batch_strided` (LP64; ILP64 as `cblas_?gemm_batch64_`,
//! `cblas_?gemm_batch_strided64_`) and the Fortran `?gemm_batch_`, `?gemm_batch_strided_` (+
//! `_64_`), for s, d, c, z.
//!
//! Argument errors are reported as oneMKL 2026.2 reports them (measured: docs/batched.md): every
//! group is checked before any product runs, so a bad argument anywhere leaves every C
//! untouched. The layout first, then the group count, then the lowest-numbered bad argument over
//! all groups (MKL checks each parameter across the groups in the prototype's order), the group
//! sizes last; a group of no products is checked too. Numbers are the prototype's positions:
//! the CBLAS ones count the layout (transa 2, m 4, lda 9, ldb 11, ldc 14, group_count 15), the
//! Fortran ones do not (transa 1 .. group_size 15). As MKL does, a negative group size in a
//! CBLAS call is reported as argument 15 of the Fortran `?GEMM_BATCH` through `xerbla_`.
//! Row-major calls keep m and n at their positions (MKL does not swap them, unlike
//! `cblas_?gemm`'s reference numbering) and are run as the column-major product with A and B
//! swapped.

use crate::abi::cblas::{layout, report as cblas_report, trans, Layout};
use crate::abi::fortran::util::report as fortran_report;
use crate::plan::batch::{gemm_batch, Group, Ops, Product};
use crate::types::{chars, FInt, Scalar, Trans};
use std::os::raw::{c_char, c_int};

/// Positions (Fortran numbering) of one form's leading dimensions and output stride.
#[derive(Clone, Copy)]
struct Positions {
    lda: isize,
    ldb: isize,
    ldc: isize,
}
/// `?gemm_batch`: transa 1, transb 2, m 3, n 4, k 5, alpha 6, a 7, lda 8, b 9, ldb 10, beta 11,
/// c 12, ldc 13, group_count 14, group_size 15.
const GROUPED: Positions = Positions { lda: 8, ldb: 10, ldc: 13 };
/// `?gemm_batch_strided`: ... lda 8, stridea 9, b 10, ldb 11, strideb 12, beta 13, c 14, ldc 15,
/// stridec 16, batch_size 17.
const STRIDED: Positions = Positions { lda: 8, ldb: 11, ldc: 15 };
const GROUP_COUNT: isize = 14;
const GROUP_SIZE: isize = 15;
const STRIDEC: isize = 16;
const BATCH_SIZE: isize = 17;

/// One group's arguments as given.
#[derive(Clone, Copy, Debug)]
pub struct GroupArgs {
    pub ta: Option<Trans>,
    pub tb: Option<Trans>,
    pub m: isize,
    pub n: isize,
    pub k: isize,
    pub lda: isize,
    pub ldb: isize,
    pub ldc: isize,
}

/// The lowest-numbered bad argument of one group (Fortran numbering of `pos`'s form), for a
/// row-major (`row`) or column-major call.
fn group_error(row: bool, g: &GroupArgs, pos: Positions) -> Option<isize> {
    let (ta, tb) = (g.ta?, g.tb?);
    let max1 = |v: isize| v.max(1);
    let a_rows = if (ta == Trans::No) != row { g.m } else { g.k };
    let b_rows = if (tb == Trans::No) != row { g.k } else { g.n };
    let c_rows = if row { g.n } else { g.m };
    if g.m < 0 {
        Some(3)
    } else if g.n < 0 {
        Some(4)
    } else if g.k < 0 {
        Some(5)
    } else if g.lda < max1(a_rows) {
        Some(pos.lda)
    } else if g.ldb < max1(b_rows) {
        Some(pos.ldb)
    } else if g.ldc < max1(c_rows) {
        Some(pos.ldc)
    } else {
        None
    }
}

/// [`group_error`] with the transposes' own checks (1 and 2) first.
fn group_first_error(row: bool, g: &GroupArgs, pos: Positions) -> Option<isize> {
    if g.ta.is_none() {
        Some(1)
    } else if g.tb.is_none() {
        Some(2)
    } else {
        group_error(row, g, pos)
    }
}

/// The argument oneMKL reports for a grouped call (Fortran numbering), or None: the lowest bad
/// position over all groups, the group sizes last. (`group_count` >= 0, checked by the caller.)
pub fn grouped_error(row: bool, groups: &[GroupArgs], sizes: &[isize]) -> Option<isize> {
    groups
        .iter()
        .filter_map(|g| group_first_error(row, g, GROUPED))
        .min()
        .or_else(|| sizes.iter().any(|&s| s < 0).then_some(GROUP_SIZE))
}

/// The argument oneMKL reports for a strided call (Fortran numbering), or None.
pub fn strided_error(row: bool, g: &GroupArgs, stridec: isize, batch: isize) -> Option<isize> {
    let c_cols = if row { g.m } else { g.n };
    let args = group_first_error(row, g, STRIDED);
    let stride = (args.is_none() && batch > 1 && stridec < g.ldc.saturating_mul(c_cols)).then_some(STRIDEC);
    args.or(stride).or((batch < 0).then_some(BATCH_SIZE))
}

/// `<p>gemm_batch` / `<p>gemm_batch_strided` as a static name (the trace's).
fn name<T: Scalar>(strided: bool) -> &'static str {
    match (T::PREFIX, strided) {
        ('s', false) => "sgemm_batch",
        ('d', false) => "dgemm_batch",
        ('c', false) => "cgemm_batch",
        ('z', false) => "zgemm_batch",
        ('s', true) => "sgemm_batch_strided",
        ('d', true) => "dgemm_batch_strided",
        ('c', true) => "cgemm_batch_strided",
        _ => "zgemm_batch_strided",
    }
}

/// The column-major product a call's product is (row-major: A and B swapped, m and n too).
#[allow(clippy::too_many_arguments)]
fn product<T>(
    row: bool,
    (ta, tb): (Trans, Trans),
    (m, n, k): (isize, isize, isize),
    alpha: T,
    (a, lda): (*const T, isize),
    (b, ldb): (*const T, isize),
    beta: T,
    (c, ldc): (*mut T, isize),
) -> Product<T> {
    let u = |v: isize| v as usize;
    if row {
        Product {
            ta: tb,
            tb: ta,
            m: u(n),
            n: u(m),
            k: u(k),
            alpha,
            a: b,
            lda: u(ldb),
            b: a,
            ldb: u(lda),
            beta,
            c,
            ldc: u(ldc),
        }
    } else {
        Product { ta, tb, m: u(m), n: u(n), k: u(k), alpha, a, lda: u(lda), b, ldb: u(ldb), beta, c, ldc: u(ldc) }
    }
}

/// How a call names and reports: the CBLAS form (with its layout) or the Fortran one.
#[derive(Clone, Copy)]
enum Form {
    Cblas(Layout),
    Fortran,
}

/// The arrays of a grouped call (one entry per group; pointers one per product).
struct Grouped<T, I> {
    ta: Vec<Option<Trans>>,
    tb: Vec<Option<Trans>>,
    m: *const I,
    n: *const I,
    k: *const I,
    alpha: *const T,
    a: *const *const T,
    lda: *const I,
    b: *const *const T,
    ldb: *const I,
    beta: *const T,
    c: *const *mut T,
    ldc: *const I,
    count: isize,
    size: *const I,
}

/// A grouped call past its layout: check everything, then run every product.
unsafe fn grouped<T: Scalar, I: FInt>(form: Form, g: Grouped<T, I>) {
    let row = matches!(form, Form::Cblas(Layout::RowMajor));
    let report = |pos: isize| match form {
        Form::Cblas(_) if pos == GROUP_SIZE => fortran_report::<I>(&format!("{}gemm_batch", T::PREFIX), pos),
        Form::Cblas(_) => cblas_report(&format!("cblas_{}gemm_batch", T::PREFIX), pos + 1),
        Form::Fortran => fortran_report::<I>(&format!("{}gemm_batch", T::PREFIX), pos),
    };
    if g.count < 0 {
        return report(GROUP_COUNT);
    }
    let count = g.count as usize;
    let at = |p: *const I, i: usize| I::read(p.add(i));
    let args: Vec<GroupArgs> = (0..count)
        .map(|i| GroupArgs {
            ta: g.ta[i],
            tb: g.tb[i],
            m: at(g.m, i),
            n: at(g.n, i),
            k: at(g.k, i),
            lda: at(g.lda, i),
            ldb: at(g.ldb, i),
            ldc: at(g.ldc, i),
        })
        .collect();
    let sizes: Vec<isize> = (0..count).map(|i| at(g.size, i)).collect();
    if let Some(pos) = grouped_error(row, &args, &sizes) {
        return report(pos);
    }
    let mut groups = Vec::with_capacity(count);
    let mut p = 0;
    for (i, ga) in args.iter().enumerate() {
        let (ta, tb) = (ga.ta.unwrap_or(Trans::No), ga.tb.unwrap_or(Trans::No));
        let (alpha, beta) = (*g.alpha.add(i), *g.beta.add(i));
        let size = sizes[i] as usize;
        // Product 0's operands where there is one (the arrays may hold none past the last).
        let at = |arr: *const *const T| if size > 0 { *arr.add(p) } else { std::ptr::null() };
        let (a0, b0) = (at(g.a), at(g.b));
        let c0 = if size > 0 { *g.c.add(p) } else { std::ptr::null_mut() };
        let call = product(row, (ta, tb), (ga.m, ga.n, ga.k), alpha, (a0, ga.lda), (b0, ga.ldb), beta, (c0, ga.ldc));
        // Row-major: the column-major product swaps A and B.
        let (a, b) = if row { (g.b.add(p), g.a.add(p)) } else { (g.a.add(p), g.b.add(p)) };
        groups.push(Group { call, ops: Ops::Arrays { a, b, c: g.c.add(p) }, count: size });
        p += size;
    }
    gemm_batch(name::<T>(false), &groups);
}

/// `cblas_?gemm_batch`.
///
/// # Safety
/// Arrays of `group_count` entries (pointers: one per product), as oneMKL documents.
#[allow(clippy::too_many_arguments)]
pub unsafe fn cblas_gemm_batch<T: Scalar, I: FInt>(
    lay: c_int,
    ta: *const c_int,
    tb: *const c_int,
    m: *const I,
    n: *const I,
    k: *const I,
    alpha: *const T,
    a: *const *const T,
    lda: *const I,
    b: *const *const T,
    ldb: *const I,
    beta: *const T,
    c: *const *mut T,
    ldc: *const I,
    group_count: I,
    group_size: *const I,
) {
    let Some(lay) = layout(lay) else { return cblas_report(&format!("cblas_{}gemm_batch", T::PREFIX), 1) };
    let count = group_count.to_isize().max(0) as usize;
    let g = Grouped {
        ta: (0..count).map(|i| trans(*ta.add(i))).collect(),
        tb: (0..count).map(|i| trans(*tb.add(i))).collect(),
        m,
        n,
        k,
        alpha,
        a,
        lda,
        b,
        ldb,
        beta,
        c,
        ldc,
        count: group_count.to_isize(),
        size: group_size,
    };
    grouped::<T, I>(Form::Cblas(lay), g)
}

/// `?gemm_batch_` (Fortran).
///
/// # Safety
/// As [`cblas_gemm_batch`], everything by reference; the transposes one character each.
#[allow(clippy::too_many_arguments)]
pub unsafe fn fortran_gemm_batch<T: Scalar, I: FInt>(
    ta: *const c_char,
    tb: *const c_char,
    m: *const I,
    n: *const I,
    k: *const I,
    alpha: *const T,
    a: *const *const T,
    lda: *const I,
    b: *const *const T,
    ldb: *const I,
    beta: *const T,
    c: *const *mut T,
    ldc: *const I,
    group_count: *const I,
    group_size: *const I,
) {
    let gc = I::read(group_count);
    let count = gc.max(0) as usize;
    let g = Grouped {
        ta: (0..count).map(|i| chars::trans(ta.add(i))).collect(),
        tb: (0..count).map(|i| chars::trans(tb.add(i))).collect(),
        m,
        n,
        k,
        alpha,
        a,
        lda,
        b,
        ldb,
        beta,
        c,
        ldc,
        count: gc,
        size: group_size,
    };
    grouped::<T, I>(Form::Fortran, g)
}

/// A strided call's scalars and pointers (the integers already read).
struct Strided<T> {
    ta: Option<Trans>,
    tb: Option<Trans>,
    m: isize,
    n: isize,
    k: isize,
    alpha: T,
    a: *const T,
    lda: isize,
    stridea: isize,
    b: *const T,
    ldb: isize,
    strideb: isize,
    beta: T,
    c: *mut T,
    ldc: isize,
    stridec: isize,
    batch: isize,
}

/// `I`: the call's integer type (which Fortran `xerbla` hears of an error).
unsafe fn strided<T: Scalar, I: FInt>(form: Form, s: Strided<T>) {
    let row = matches!(form, Form::Cblas(Layout::RowMajor));
    let g = GroupArgs { ta: s.ta, tb: s.tb, m: s.m, n: s.n, k: s.k, lda: s.lda, ldb: s.ldb, ldc: s.ldc };
    if let Some(pos) = strided_error(row, &g, s.stridec, s.batch) {
        return match form {
            Form::Cblas(_) => cblas_report(&format!("cblas_{}gemm_batch_strided", T::PREFIX), pos + 1),
            Form::Fortran => fortran_report::<I>(&format!("{}gemm_batch_strided", T::PREFIX), pos),
        };
    }
    let (ta, tb) = (s.ta.unwrap_or(Trans::No), s.tb.unwrap_or(Trans::No));
    let call = product(row, (ta, tb), (s.m, s.n, s.k), s.alpha, (s.a, s.lda), (s.b, s.ldb), s.beta, (s.c, s.ldc));
    // Row-major: the column-major product swaps A and B, and their steps.
    let (sa, sb) = if row { (s.strideb, s.stridea) } else { (s.stridea, s.strideb) };
    let group = Group { call, ops: Ops::Strided { sa, sb, sc: s.stridec }, count: s.batch as usize };
    gemm_batch(name::<T>(true), &[group]);
}

/// `cblas_?gemm_batch_strided`.
///
/// # Safety
/// As oneMKL documents: `batch_size` products, operand i at `a + i*stridea` (and so on).
#[allow(clippy::too_many_arguments)]
pub unsafe fn cblas_gemm_batch_strided<T: Scalar, I: FInt>(
    lay: c_int,
    ta: c_int,
    tb: c_int,
    m: I,
    n: I,
    k: I,
    alpha: T,
    a: *const T,
    lda: I,
    stridea: I,
    b: *const T,
    ldb: I,
    strideb: I,
    beta: T,
    c: *mut T,
    ldc: I,
    stridec: I,
    batch_size: I,
) {
    let Some(lay) = layout(lay) else {
        return cblas_report(&format!("cblas_{}gemm_batch_strided", T::PREFIX), 1);
    };
    let v = |x: I| x.to_isize();
    let s = Strided {
        ta: trans(ta),
        tb: trans(tb),
        m: v(m),
        n: v(n),
        k: v(k),
        alpha,
        a,
        lda: v(lda),
        stridea: v(stridea),
        b,
        ldb: v(ldb),
        strideb: v(strideb),
        beta,
        c,
        ldc: v(ldc),
        stridec: v(stridec),
        batch: v(batch_size),
    };
    strided::<T, I>(Form::Cblas(lay), s)
}

/// `?gemm_batch_strided_` (Fortran).
///
/// # Safety
/// As [`cblas_gemm_batch_strided`], everything by reference.
#[allow(clippy::too_many_arguments)]
pub unsafe fn fortran_gemm_batch_strided<T: Scalar, I: FInt>(
    ta: *const c_char,
    tb: *const c_char,
    m: *const I,
    n: *const I,
    k: *const I,
    alpha: *const T,
    a: *const T,
    lda: *const I,
    stridea: *const I,
    b: *const T,
    ldb: *const I,
    strideb: *const I,
    beta: *const T,
    c: *mut T,
    ldc: *const I,
    stridec: *const I,
    batch_size: *const I,
) {
    let s = Strided {
        ta: chars::trans(ta),
        tb: chars::trans(tb),
        m: I::read(m),
        n: I::read(n),
        k: I::read(k),
        alpha: *alpha,
        a,
        lda: I::read(lda),
        stridea: I::read(stridea),
        b,
        ldb: I::read(ldb),
        strideb: I::read(strideb),
        beta: *beta,
        c,
        ldc: I::read(ldc),
        stridec: I::read(stridec),
        batch: I::read(batch_size),
    };
    strided::<T, I>(Form::Fortran, s)
}

macro_rules! batch_exports {
    ($T:ty, $p:literal, $S:ty) => {
        // CBLAS: real scalars by value, complex through pointers (`const void *`).
        $crate::export!(concat!("cblas_", $p, "gemm_batch"), fn(lay: c_int, ta: *const c_int, tb: *const c_int, m: *const c_int, n: *const c_int, k: *const c_int, alpha: *const $T, a: *const *const $T, lda: *const c_int, b: *const *const $T, ldb: *const c_int, beta: *const $T, c: *const *mut $T, ldc: *const c_int, gc: c_int, gs: *const c_int) => cblas_gemm_batch::<$T, c_int>(lay, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, gc, gs));
        $crate::export!(concat!("cblas_", $p, "gemm_batch64_"), fn(lay: c_int, ta: *const c_int, tb: *const c_int, m: *const i64, n: *const i64, k: *const i64, alpha: *const $T, a: *const *const $T, lda: *const i64, b: *const *const $T, ldb: *const i64, beta: *const $T, c: *const *mut $T, ldc: *const i64, gc: i64, gs: *const i64) => cblas_gemm_batch::<$T, i64>(lay, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, gc, gs));
        $crate::export!(concat!("cblas_", $p, "gemm_batch_strided"), fn(lay: c_int, ta: c_int, tb: c_int, m: c_int, n: c_int, k: c_int, alpha: $S, a: *const $T, lda: c_int, sa: c_int, b: *const $T, ldb: c_int, sb: c_int, beta: $S, c: *mut $T, ldc: c_int, sc: c_int, bs: c_int) => cblas_gemm_batch_strided::<$T, c_int>(lay, ta, tb, m, n, k, batch_exports!(@val $S, alpha), a, lda, sa, b, ldb, sb, batch_exports!(@val $S, beta), c, ldc, sc, bs));
        $crate::export!(concat!("cblas_", $p, "gemm_batch_strided64_"), fn(lay: c_int, ta: c_int, tb: c_int, m: i64, n: i64, k: i64, alpha: $S, a: *const $T, lda: i64, sa: i64, b: *const $T, ldb: i64, sb: i64, beta: $S, c: *mut $T, ldc: i64, sc: i64, bs: i64) => cblas_gemm_batch_strided::<$T, i64>(lay, ta, tb, m, n, k, batch_exports!(@val $S, alpha), a, lda, sa, b, ldb, sb, batch_exports!(@val $S, beta), c, ldc, sc, bs));
        $crate::export!(concat!($p, "gemm_batch_"), fn(ta: *const c_char, tb: *const c_char, m: *const i32, n: *const i32, k: *const i32, alpha: *const $T, a: *const *const $T, lda: *const i32, b: *const *const $T, ldb: *const i32, beta: *const $T, c: *const *mut $T, ldc: *const i32, gc: *const i32, gs: *const i32) => fortran_gemm_batch::<$T, i32>(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, gc, gs));
        $crate::export!(concat!($p, "gemm_batch_64_"), fn(ta: *const c_char, tb: *const c_char, m: *const i64, n: *const i64, k: *const i64, alpha: *const $T, a: *const *const $T, lda: *const i64, b: *const *const $T, ldb: *const i64, beta: *const $T, c: *const *mut $T, ldc: *const i64, gc: *const i64, gs: *const i64) => fortran_gemm_batch::<$T, i64>(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, gc, gs));
        $crate::export!(concat!($p, "gemm_batch_strided_"), fn(ta: *const c_char, tb: *const c_char, m: *const i32, n: *const i32, k: *const i32, alpha: *const $T, a: *const $T, lda: *const i32, sa: *const i32, b: *const $T, ldb: *const i32, sb: *const i32, beta: *const $T, c: *mut $T, ldc: *const i32, sc: *const i32, bs: *const i32) => fortran_gemm_batch_strided::<$T, i32>(ta, tb, m, n, k, alpha, a, lda, sa, b, ldb, sb, beta, c, ldc, sc, bs));
        $crate::export!(concat!($p, "gemm_batch_strided_64_"), fn(ta: *const c_char, tb: *const c_char, m: *const i64, n: *const i64, k: *const i64, alpha: *const $T, a: *const $T, lda: *const i64, sa: *const i64, b: *const $T, ldb: *const i64, sb: *const i64, beta: *const $T, c: *mut $T, ldc: *const i64, sc: *const i64, bs: *const i64) => fortran_gemm_batch_strided::<$T, i64>(ta, tb, m, n, k, alpha, a, lda, sa, b, ldb, sb, beta, c, ldc, sc, bs));
    };
    (@val $S:ty, $v:expr) => {
        <$S as ScalarArg>::get($v)
    };
}

/// A strided call's alpha/beta as CBLAS passes it: real by value, complex by pointer.
trait ScalarArg {
    type T;
    /// # Safety
    /// A complex scalar's pointer must be readable.
    unsafe fn get(self) -> Self::T;
}
impl ScalarArg for f32 {
    type T = f32;
    unsafe fn get(self) -> f32 {
        self
    }
}
impl ScalarArg for f64 {
    type T = f64;
    unsafe fn get(self) -> f64 {
        self
    }
}
impl ScalarArg for *const crate::types::C32 {
    type T = crate::types::C32;
    unsafe fn get(self) -> crate::types::C32 {
        *self
    }
}
impl ScalarArg for *const crate::types::C64 {
    type T = crate::types::C64;
    unsafe fn get(self) -> crate::types::C64 {
        *self
    }
}

mod exports {
    use super::*;
    use crate::types::{C32, C64};
    batch_exports!(f32, "s", f32);
    batch_exports!(f64, "d", f64);
    batch_exports!(C32, "c", *const C32);
    batch_exports!(C64, "z", *const C64);
}
