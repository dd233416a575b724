//! Level 3 on operands that end (or start) at an inaccessible page: no routine may read or
//! write outside its matrices. Each call runs on guarded copies, placed once against a
//! PROT_NONE page after the last element and once after one before the first, and on plain
//! copies; a stray access faults the test, and the guarded results must match the plain ones.
//!
//! Why: the TRSM/TRMM leaf read B's columns in place in slices of the kernel's NR and, on a
//! last slice narrower than NR, read the columns past B's end: DTRSM L,L,N,N with m = 100, n = 9
//! and B ending at a page boundary faulted.

mod common;

use common::{assert_close, Rng};
use hyblas::types::{Scalar, C32, C64};
use std::os::raw::c_char;

/// `n` values of T in an anonymous mapping with an inaccessible page right after them
/// (`at_end`) or right before them.
struct Guarded<T> {
    map: *mut libc::c_void,
    map_len: usize,
    ptr: *mut T,
    n: usize,
}

impl<T: Copy> Guarded<T> {
    fn new(vals: &[T], at_end: bool) -> Self {
        let page = 4096usize;
        let bytes = std::mem::size_of_val(vals).max(1);
        let body = bytes.div_ceil(page) * page;
        let map_len = body + 2 * page;
        // SAFETY: a fresh private anonymous mapping; the guard pages are inside it.
        unsafe {
            let map = libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            assert_ne!(map, libc::MAP_FAILED, "mmap");
            let base = map as *mut u8;
            assert_eq!(libc::mprotect(base as *mut _, page, libc::PROT_NONE), 0);
            assert_eq!(libc::mprotect(base.add(page + body) as *mut _, page, libc::PROT_NONE), 0);
            let start = if at_end { base.add(page + body - bytes) } else { base.add(page) };
            let ptr = start as *mut T;
            std::ptr::copy_nonoverlapping(vals.as_ptr(), ptr, vals.len());
            Guarded { map, map_len, ptr, n: vals.len() }
        }
    }

    fn to_vec(&self) -> Vec<T> {
        // SAFETY: the n values written in `new`.
        unsafe { std::slice::from_raw_parts(self.ptr, self.n).to_vec() }
    }
}

impl<T> Drop for Guarded<T> {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`.
        unsafe { libc::munmap(self.map, self.map_len) };
    }
}

/// One Level-3 call: its character options, sizes, scalars and the operands it takes.
#[derive(Clone, Copy, Debug)]
enum Call {
    /// transa, transb, m, n, k
    Gemm(u8, u8, usize, usize, usize),
    /// side, uplo, m, n
    Symm(u8, u8, usize, usize),
    /// uplo, trans, n, k
    Syrk(u8, u8, usize, usize),
    /// uplo, trans, n, k
    Syr2k(u8, u8, usize, usize),
    /// side, uplo, transa, m, n
    Trmm(u8, u8, u8, usize, usize),
    /// side, uplo, transa, m, n
    Trsm(u8, u8, u8, usize, usize),
}

/// The Fortran symbols of one precision, called with the operands' pointers.
trait Api: Scalar {
    /// Run `call` with A, B, C (C unused by TRMM/TRSM, whose output is B).
    unsafe fn run(call: Call, alpha: Self, beta: Self, a: *const Self, b: *mut Self, c: *mut Self);
}

macro_rules! api {
    ($t:ty, $gemm:ident, $symm:ident, $syrk:ident, $syr2k:ident, $trmm:ident, $trsm:ident) => {
        extern "C" {
            fn $gemm(
                ta: *const c_char,
                tb: *const c_char,
                m: *const i32,
                n: *const i32,
                k: *const i32,
                alpha: *const $t,
                a: *const $t,
                lda: *const i32,
                b: *const $t,
                ldb: *const i32,
                beta: *const $t,
                c: *mut $t,
                ldc: *const i32,
            );
            fn $symm(
                s: *const c_char,
                u: *const c_char,
                m: *const i32,
                n: *const i32,
                alpha: *const $t,
                a: *const $t,
                lda: *const i32,
                b: *const $t,
                ldb: *const i32,
                beta: *const $t,
                c: *mut $t,
                ldc: *const i32,
            );
            fn $syrk(
                u: *const c_char,
                t: *const c_char,
                n: *const i32,
                k: *const i32,
                alpha: *const $t,
                a: *const $t,
                lda: *const i32,
                beta: *const $t,
                c: *mut $t,
                ldc: *const i32,
            );
            fn $syr2k(
                u: *const c_char,
                t: *const c_char,
                n: *const i32,
                k: *const i32,
                alpha: *const $t,
                a: *const $t,
                lda: *const i32,
                b: *const $t,
                ldb: *const i32,
                beta: *const $t,
                c: *mut $t,
                ldc: *const i32,
            );
            fn $trmm(
                s: *const c_char,
                u: *const c_char,
                t: *const c_char,
                d: *const c_char,
                m: *const i32,
                n: *const i32,
                alpha: *const $t,
                a: *const $t,
                lda: *const i32,
                b: *mut $t,
                ldb: *const i32,
            );
            fn $trsm(
                s: *const c_char,
                u: *const c_char,
                t: *const c_char,
                d: *const c_char,
                m: *const i32,
                n: *const i32,
                alpha: *const $t,
                a: *const $t,
                lda: *const i32,
                b: *mut $t,
                ldb: *const i32,
            );
        }
        impl Api for $t {
            unsafe fn run(call: Call, alpha: $t, beta: $t, a: *const $t, b: *mut $t, c: *mut $t) {
                let ch = |x: &u8| x as *const u8 as *const c_char;
                let (al, be) = (&alpha as *const $t, &beta as *const $t);
                let nd = b'N';
                match call {
                    Call::Gemm(ta, tb, m, n, k) => {
                        let (lda, ldb) = (shape(ta, m, k).0 as i32, shape(tb, k, n).0 as i32);
                        let (m, n, k) = (m as i32, n as i32, k as i32);
                        $gemm(ch(&ta), ch(&tb), &m, &n, &k, al, a, &lda, b, &ldb, be, c, &m)
                    }
                    Call::Symm(s, u, m, n) => {
                        let ka = if s == b'L' { m } else { n } as i32;
                        let (m, n) = (m as i32, n as i32);
                        $symm(ch(&s), ch(&u), &m, &n, al, a, &ka, b, &m, be, c, &m)
                    }
                    Call::Syrk(u, t, n, k) => {
                        let lda = shape(t, n, k).0 as i32;
                        let (n, k) = (n as i32, k as i32);
                        $syrk(ch(&u), ch(&t), &n, &k, al, a, &lda, be, c, &n)
                    }
                    Call::Syr2k(u, t, n, k) => {
                        let lda = shape(t, n, k).0 as i32;
                        let (n, k) = (n as i32, k as i32);
                        $syr2k(ch(&u), ch(&t), &n, &k, al, a, &lda, b, &lda, be, c, &n)
                    }
                    Call::Trmm(s, u, t, m, n) | Call::Trsm(s, u, t, m, n) => {
                        let ka = if s == b'L' { m } else { n } as i32;
                        let (m, n) = (m as i32, n as i32);
                        let f = if matches!(call, Call::Trmm(..)) { $trmm } else { $trsm };
                        f(ch(&s), ch(&u), ch(&t), ch(&nd), &m, &n, al, a, &ka, b, &m)
                    }
                }
            }
        }
    };
}

api!(f32, sgemm_, ssymm_, ssyrk_, ssyr2k_, strmm_, strsm_);
api!(f64, dgemm_, dsymm_, dsyrk_, dsyr2k_, dtrmm_, dtrsm_);
api!(C32, cgemm_, csymm_, csyrk_, csyr2k_, ctrmm_, ctrsm_);
api!(C64, zgemm_, zsymm_, zsyrk_, zsyr2k_, ztrmm_, ztrsm_);

/// Rows and columns of the stored operand op(X) = rows x cols is taken from.
fn shape(t: u8, rows: usize, cols: usize) -> (usize, usize) {
    if t == b'N' {
        (rows, cols)
    } else {
        (cols, rows)
    }
}

/// Element counts of A, B, C (column-major, leading dimensions = rows) and the depth of
/// the call's sums.
fn sizes(call: Call) -> (usize, usize, usize, usize) {
    match call {
        Call::Gemm(ta, tb, m, n, k) => {
            let (ar, ac) = shape(ta, m, k);
            let (br, bc) = shape(tb, k, n);
            (ar * ac, br * bc, m * n, k)
        }
        Call::Symm(s, _, m, n) => {
            let ka = if s == b'L' { m } else { n };
            (ka * ka, m * n, m * n, ka)
        }
        Call::Syrk(_, t, n, k) | Call::Syr2k(_, t, n, k) => {
            let (ar, ac) = shape(t, n, k);
            (ar * ac, ar * ac, n * n, 2 * k)
        }
        Call::Trmm(s, _, _, m, n) | Call::Trsm(s, _, _, m, n) => {
            let ka = if s == b'L' { m } else { n };
            (ka * ka, m * n, 0, ka)
        }
    }
}

fn check<T: Api>(call: Call, rng: &mut Rng) {
    let (na, nb, nc, depth) = sizes(call);
    let mut a: Vec<T> = rng.vec(na);
    if let Call::Trmm(s, _, _, m, n) | Call::Trsm(s, _, _, m, n) = call {
        // A well-conditioned triangle: a heavy diagonal.
        let ka = if s == b'L' { m } else { n };
        for i in 0..ka {
            a[i * ka + i] = T::from_f64(ka as f64 + 1.0);
        }
    }
    let (b, c): (Vec<T>, Vec<T>) = (rng.vec(nb), rng.vec(nc));
    let (alpha, beta) = (T::from_parts(T::Real::from_f64(0.75), T::Real::from_f64(0.25)), T::from_f64(0.5));
    // The output of TRMM/TRSM is B, of the others C.
    let out_b = matches!(call, Call::Trmm(..) | Call::Trsm(..));
    let (mut pb, mut pc) = (b.clone(), c.clone());
    // SAFETY: the operands have the sizes the call reads and writes.
    unsafe { T::run(call, alpha, beta, a.as_ptr(), pb.as_mut_ptr(), pc.as_mut_ptr()) };
    let want = if out_b { pb } else { pc };
    for at_end in [true, false] {
        let (ga, gb, gc) = (Guarded::new(&a, at_end), Guarded::new(&b, at_end), Guarded::new(&c, at_end));
        // SAFETY: as above; the guarded copies have the same sizes.
        unsafe { T::run(call, alpha, beta, ga.ptr, gb.ptr, gc.ptr) };
        let got = if out_b { gb.to_vec() } else { gc.to_vec() };
        let place = if at_end { "ending at" } else { "starting after" };
        assert_close(&got, &want, depth, &format!("{} {call:?}, operands {place} a guard page", T::PREFIX));
    }
}

fn all<T: Api>(seed: u64) {
    let mut rng = Rng::new(seed);
    let ts: &[u8] = if T::IS_COMPLEX { b"NTC" } else { b"NT" };
    // Tall, wide and thin shapes around the kernels' tiles; 300 takes the TRSM/TRMM leaf.
    for &(m, n, k) in &[(1, 9, 300), (9, 1, 300), (100, 9, 300), (300, 7, 100), (7, 300, 100), (37, 41, 43)] {
        for &ta in ts {
            for &tb in ts {
                check::<T>(Call::Gemm(ta, tb, m, n, k), &mut rng);
            }
        }
    }
    for &(m, n) in &[(9, 300), (300, 9), (37, 41)] {
        for s in [b'L', b'R'] {
            for u in [b'U', b'L'] {
                check::<T>(Call::Symm(s, u, m, n), &mut rng);
            }
        }
    }
    for &(n, k) in &[(9, 300), (300, 9), (100, 7)] {
        for u in [b'U', b'L'] {
            for t in [b'N', b'T'] {
                check::<T>(Call::Syrk(u, t, n, k), &mut rng);
                check::<T>(Call::Syr2k(u, t, n, k), &mut rng);
            }
        }
    }
    for order in [100, 300] {
        for rhs in [1, 5, 9, 13, 17] {
            for s in [b'L', b'R'] {
                let (m, n) = if s == b'L' { (order, rhs) } else { (rhs, order) };
                for u in [b'U', b'L'] {
                    for &t in ts {
                        check::<T>(Call::Trmm(s, u, t, m, n), &mut rng);
                        check::<T>(Call::Trsm(s, u, t, m, n), &mut rng);
                    }
                }
            }
        }
    }
}

#[test]
fn level3_stays_inside_its_operands_f32() {
    all::<f32>(1);
}

#[test]
fn level3_stays_inside_its_operands_f64() {
    all::<f64>(2);
}

#[test]
fn level3_stays_inside_its_operands_c32() {
    all::<C32>(3);
}

#[test]
fn level3_stays_inside_its_operands_c64() {
    all::<C64>(4);
}
