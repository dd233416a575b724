//! Sparse x dense products for the accurate GEMM's sparse slices (issue 49).
//!
//! The accurate (Ozaki-scheme) DGEMM cuts A into slices of A's shape whose entries are small
//! integers; on inputs such as the identity plus a few random entries most of a slice is
//! zero, and its product with a dense B is cheaper as sparse x dense than as a dense GEMM
//! (`examples/sparse_crossover.rs` measures where). Every slice product is exact in any
//! summation order (the splitting guarantees it), so these kernels sum in whatever order is
//! fastest: their results equal a naive triple loop's bit for bit on such data.
//!
//! Zeros of S are skipped: unlike a dense product, a zero of S times an Inf or NaN of B adds
//! nothing, and a row of S without nonzeros leaves its row of `out` untouched (a -0.0 there
//! stays -0.0). The accurate GEMM splits only finite operands, so neither case reaches it.

use crate::cpu::level3::packed::SendPtr;
use crate::cpu::simd::mac;
use crate::cpu::threads;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Columns of B (and `out`) one panel of [`spmm_add`] covers: one 64-byte cache line of the
/// packed panel per nonzero, one AVX-512 register (two AVX2 ones) per accumulator.
const NB: usize = 8;

/// Independent accumulators per row in [`spmm_add`]'s kernel (see `panel_product`).
const CHAINS: usize = 4;

/// Matrix entries one thread of [`Csr::from_col_major`] or [`count_nonzeros`] should get at
/// least: a pass over them is memory-bound, and below this waking the pool costs more.
const MIN_SCAN_PER_THREAD: usize = 1 << 17;

/// Multiply-adds one thread of [`spmm_add`] should get at least (a pool hand-off is some
/// microseconds).
const MIN_FMAS_PER_THREAD: usize = 1 << 16;

/// A sparse matrix in compressed sparse rows: row i's nonzeros are `val[ptr[i]..ptr[i + 1]]`
/// in the columns `idx[ptr[i]..ptr[i + 1]]` (ascending). Rows, because [`spmm_add`] sums each
/// row of the product in registers and writes it once.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Csr {
    pub rows: usize,
    pub cols: usize,
    /// `rows + 1` offsets into `idx`/`val`, from 0 to `nnz`.
    pub ptr: Vec<usize>,
    /// Column of each nonzero (u32: a third less to read per nonzero than usize).
    pub idx: Vec<u32>,
    pub val: Vec<f64>,
}

/// One row of a packed panel of B: NB consecutive columns' entries of one row of B, aligned
/// so that a nonzero's load is one cache line.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct PanelRow([f64; NB]);

/// Rows `[r0, r1)` of the `p`-th of `parts` row blocks of an m-row matrix (multiples of 8
/// rows, so that blocks do not share the cache lines of a column).
#[inline]
fn row_block(m: usize, parts: usize, p: usize) -> (usize, usize) {
    let groups = m.div_ceil(8);
    let g = |q: usize| (groups * q / parts * 8).min(m);
    (g(p), g(p + 1))
}

impl Csr {
    /// From a column-major m x k matrix at `a` with leading dimension `lda`, its nonzeros
    /// only (-0.0 counts as zero; a NaN as nonzero). Two passes over A: count each row's
    /// nonzeros (column by column, so the reads are contiguous), then fill each row's slots
    /// in column order. Large matrices are split into row blocks over the pool (each block's
    /// slots are one contiguous range of `idx`/`val`).
    ///
    /// # Safety
    /// `a` valid for an m x k column-major matrix with `lda >= m` (nothing read if m or k is
    /// 0), not written while this runs. k must fit in u32.
    pub unsafe fn from_col_major(a: *const f64, m: usize, k: usize, lda: usize) -> Csr {
        let t = threads::threads_for(m.saturating_mul(k), MIN_SCAN_PER_THREAD);
        let parts = t.min(m.div_ceil(8));
        let ap = SendPtr(a as *mut f64);
        Csr::assemble(
            (m, k),
            (t, parts),
            |p, counts| {
                let (r0, r1) = row_block(m, parts, p);
                if r0 < r1 {
                    crate::dispatch!(count_rows(ap.get().add(r0), r1 - r0, k, lda, counts.add(r0)));
                }
            },
            |p, offsets, ip, vp| {
                let (r0, r1) = row_block(m, parts, p);
                if r0 < r1 {
                    let mut next = offsets[r0..r1].to_vec();
                    crate::dispatch!(fill_rows(ap.get().add(r0), r1 - r0, k, lda, &mut next, ip, vp));
                }
            },
        )
    }

    /// From `rows` rows of `cols` entries each, row r contiguous at `a + r * ld` (so the
    /// transpose of a column-major cols x rows matrix with leading dimension `ld`: what
    /// [`dense_spmm_add`] takes for a mostly-zero right operand), its nonzeros only (-0.0
    /// counts as zero). Rows are counted, then filled, in row blocks over the pool.
    ///
    /// # Safety
    /// `a` valid for `rows` rows of `cols` entries at stride `ld >= cols` (nothing read if
    /// either is 0), not written while this runs. cols must fit in u32.
    pub unsafe fn from_rows(a: *const f64, rows: usize, cols: usize, ld: usize) -> Csr {
        let t = threads::threads_for(rows.saturating_mul(cols), MIN_SCAN_PER_THREAD);
        let parts = t.min(rows);
        let ap = SendPtr(a as *mut f64);
        let row = |r: usize| std::slice::from_raw_parts(ap.get().add(r * ld), cols);
        let block = |p: usize| (rows * p / parts, rows * (p + 1) / parts);
        Csr::assemble(
            (rows, cols),
            (t, parts),
            |p, counts| {
                let (r0, r1) = block(p);
                for r in r0..r1 {
                    *counts.add(r) = row(r).iter().fold(0u32, |c, &x| c + (x != 0.0) as u32) as usize;
                }
            },
            |p, offsets, ip, vp| {
                let (r0, r1) = block(p);
                for (r, &start) in offsets[r0..r1].iter().enumerate() {
                    let mut at = start;
                    for (c, &x) in row(r0 + r).iter().enumerate() {
                        if x != 0.0 {
                            *ip.add(at) = c as u32;
                            *vp.add(at) = x;
                            at += 1;
                        }
                    }
                }
            },
        )
    }

    /// The builders' two passes over the pool's `parts` row blocks (t threads): `count(p,
    /// counts)` sets counts[r] to row r's nonzeros for part p's rows, the counts become
    /// offsets, then `fill(p, offsets, idx, val)` writes part p's rows' nonzeros (ascending
    /// columns) from their offsets on.
    unsafe fn assemble(
        (rows, cols): (usize, usize),
        (t, parts): (usize, usize),
        count: impl Fn(usize, *mut usize) + Sync,
        fill: impl Fn(usize, &[usize], *mut u32, *mut f64) + Sync,
    ) -> Csr {
        assert!(cols <= u32::MAX as usize, "sparse: {cols} columns do not fit the u32 column indices");
        let mut ptr = vec![0usize; rows + 1];
        if rows == 0 || cols == 0 {
            return Csr { rows, cols, ptr, idx: Vec::new(), val: Vec::new() };
        }
        // Counts go into ptr[1..] (disjoint per block), then become offsets.
        let counts = SendPtr(ptr.as_mut_ptr().add(1));
        threads::for_each_part(t, parts, |p| count(p, counts.get()));
        for r in 0..rows {
            ptr[r + 1] += ptr[r];
        }
        let nnz = ptr[rows];
        let mut idx: Vec<u32> = Vec::with_capacity(nnz);
        let mut val: Vec<f64> = Vec::with_capacity(nnz);
        let (ip, vp) = (SendPtr(idx.as_mut_ptr()), SendPtr(val.as_mut_ptr()));
        let offsets = &ptr;
        threads::for_each_part(t, parts, |p| fill(p, offsets, ip.get(), vp.get()));
        // SAFETY: the fill wrote every one of the nnz slots (it saw the nonzeros the count saw).
        idx.set_len(nnz);
        val.set_len(nnz);
        Csr { rows, cols, ptr, idx, val }
    }

    /// Stored nonzeros.
    #[inline]
    pub fn nnz(&self) -> usize {
        self.val.len()
    }
}

/// A strided matrix: entry (r, c) at `ptr + r * rs + c * cs` (column-major: rs = 1, cs = the
/// leading dimension; its transpose: the same pointer with the strides swapped).
#[derive(Clone, Copy)]
struct View {
    ptr: *mut f64,
    rs: usize,
    cs: usize,
}

/// counts[i] += nonzeros of row i of the len x k block at `a` (counts already hold 0s).
#[inline(always)]
unsafe fn count_rows(a: *const f64, len: usize, k: usize, lda: usize, counts: *mut usize) {
    // u32 lanes (twice as many per register as usize); k fits in u32.
    let mut c = vec![0u32; len];
    for j in 0..k {
        let col = std::slice::from_raw_parts(a.add(j * lda), len);
        for (ci, &x) in c.iter_mut().zip(col) {
            *ci += (x != 0.0) as u32;
        }
    }
    for (i, &ci) in c.iter().enumerate() {
        *counts.add(i) = ci as usize;
    }
}

/// Write the nonzeros of the len x k block at `a` to their slots: row i's next slot is
/// `next[i]` (an offset into `idx`/`val`), advanced as it is filled.
#[inline(always)]
unsafe fn fill_rows(a: *const f64, len: usize, k: usize, lda: usize, next: &mut [usize], idx: *mut u32, val: *mut f64) {
    for j in 0..k {
        let col = std::slice::from_raw_parts(a.add(j * lda), len);
        // Slices are mostly zero: skip 8 zeros at a time with one test.
        for (c, nx) in col.chunks(8).zip(next.chunks_mut(8)) {
            if !c.iter().fold(false, |any, &x| any | (x != 0.0)) {
                continue;
            }
            for (&x, n) in c.iter().zip(nx) {
                if x != 0.0 {
                    *idx.add(*n) = j as u32;
                    *val.add(*n) = x;
                    *n += 1;
                }
            }
        }
    }
}

/// The count of nonzeros of a column-major m x k matrix with leading dimension `lda` (-0.0
/// counts as zero): the caller's cheap test of a slice's density before it builds a [`Csr`]
/// (one read of the matrix, no writes).
///
/// # Safety
/// `a` valid for an m x k column-major matrix with `lda >= m` (nothing read if m or k is 0).
pub unsafe fn count_nonzeros(a: *const f64, m: usize, k: usize, lda: usize) -> usize {
    if m == 0 || k == 0 {
        return 0;
    }
    let t = threads::threads_for(m.saturating_mul(k), MIN_SCAN_PER_THREAD);
    if t <= 1 {
        return crate::dispatch!(count_cols(a, m, k, lda));
    }
    // Column blocks: each thread reads whole columns, contiguous.
    let parts = t.min(k);
    let total = AtomicUsize::new(0);
    let ap = SendPtr(a as *mut f64);
    threads::for_each_part(t, parts, |p| {
        let (j0, j1) = (k * p / parts, k * (p + 1) / parts);
        let n = crate::dispatch!(count_cols(ap.get().add(j0 * lda), m, j1 - j0, lda));
        total.fetch_add(n, Ordering::Relaxed);
    });
    total.into_inner()
}

/// Nonzeros of the m x k column-major block at `a`.
#[inline(always)]
unsafe fn count_cols(a: *const f64, m: usize, k: usize, lda: usize) -> usize {
    let mut n = 0usize;
    for j in 0..k {
        let col = std::slice::from_raw_parts(a.add(j * lda), m);
        // Summed in u32 lanes per column (twice as many per register as usize; a column's
        // count is at most m, which fits): vectorizes as compare-and-add.
        n += col.iter().fold(0u32, |s, &x| s + (x != 0.0) as u32) as usize;
    }
    n
}

/// out (m x n column-major, leading dimension `ldo`) += S * B, for S = `s` (m x k) and B a
/// k x n column-major matrix at `b` with leading dimension `ldb`.
///
/// B is taken in panels of NB (8) columns, each packed row-major (row l of the panel is one
/// aligned cache line); each row of S then sums `val * panel[idx]` over its nonzeros in
/// NB-wide registers and adds the sums to its row of `out` once. The panels are shared out
/// over the pool (`crate::cpu::threads::for_each_part`), each part packing its own.
/// Summation order differs from a naive loop's (exact for the accurate GEMM's slices).
///
/// Cutting k into blocks whose part of the panel stays in L1 (16 KiB), with each row's sums
/// kept across blocks in a buffer, was tried: 1.3-1.6x slower at n = 1024 and densities of
/// 10-30% (25-75 nonzeros per row and block: the per-row cost of starting and ending a block
/// outweighed the L1 hits), no faster at 50%.
///
/// # Safety
/// `b` valid for k x n with `ldb >= k`, `out` for m x n with `ldo >= m` (m = s.rows,
/// k = s.cols), `out` not overlapping `b`; nothing is touched where m, n or k is 0.
pub unsafe fn spmm_add(s: &Csr, b: *const f64, ldb: usize, n: usize, out: *mut f64, ldo: usize) {
    let view = |ptr: *const f64, ld: usize| View { ptr: ptr as *mut f64, rs: 1, cs: ld };
    spmm_add_view(s, view(b, ldb), n, view(out, ldo));
}

/// out (m x n column-major, leading dimension `ldo`) += A * S, for A an m x k column-major
/// matrix at `a` with leading dimension `lda` and S a mostly-zero k x n matrix given by its
/// transpose `st` (n x k, row j = column j of S; [`Csr::from_rows`] of S's columns).
///
/// The same kernel as [`spmm_add`] on the transposed product, out^T += S^T A^T: its panels
/// are then 8 consecutive rows of A (one contiguous run of each column of A) and each row of
/// S^T adds 8 consecutive entries of a column of `out`.
///
/// # Safety
/// `a` valid for m x k with `lda >= m`, `out` for m x n with `ldo >= m` (n = st.rows,
/// k = st.cols), `out` not overlapping `a`; nothing is touched where m, n or k is 0.
pub unsafe fn dense_spmm_add(a: *const f64, lda: usize, m: usize, st: &Csr, out: *mut f64, ldo: usize) {
    spmm_add_view(st, View { ptr: a as *mut f64, rs: lda, cs: 1 }, m, View { ptr: out, rs: ldo, cs: 1 });
}

/// out (m x n) += S * B for S = `s` (m x k) and B (k x n), both B and out strided views.
unsafe fn spmm_add_view(s: &Csr, b: View, n: usize, out: View) {
    let (m, k) = (s.rows, s.cols);
    debug_assert_eq!(s.ptr.len(), m + 1);
    if m == 0 || n == 0 || k == 0 || s.nnz() == 0 {
        return;
    }
    let panels = n.div_ceil(NB);
    let t = threads::threads_for(s.nnz().saturating_mul(n), MIN_FMAS_PER_THREAD).min(panels);
    let parts = threads::balanced_parts(t).min(panels);
    let (bp, op) = (SendPtr(b.ptr), SendPtr(out.ptr));
    threads::for_each_part(t, parts, |p| {
        let (q0, q1) = (panels * p / parts, panels * (p + 1) / parts);
        let mut panel = vec![PanelRow([0.0; NB]); k];
        for q in q0..q1 {
            let j = q * NB;
            let w = NB.min(n - j);
            let bj = View { ptr: bp.get().add(j * b.cs), ..b };
            pack_panel(bj, k, w, &mut panel);
            let oj = View { ptr: op.get().add(j * out.cs), ..out };
            crate::dispatch_level!(panel_product::<CHAINS>(s, &panel, w, oj));
        }
    });
}

/// panel[l][c] = B[l, c] for the w (<= NB) columns of the view `b`; zeros in columns w..NB.
#[inline]
unsafe fn pack_panel(b: View, k: usize, w: usize, panel: &mut [PanelRow]) {
    debug_assert_eq!(panel.len(), k);
    if w == NB {
        for (l, row) in panel.iter_mut().enumerate() {
            for (c, x) in row.0.iter_mut().enumerate() {
                *x = *b.ptr.add(l * b.rs + c * b.cs);
            }
        }
    } else {
        for (l, row) in panel.iter_mut().enumerate() {
            row.0 = [0.0; NB];
            for (c, x) in row.0[..w].iter_mut().enumerate() {
                *x = *b.ptr.add(l * b.rs + c * b.cs);
            }
        }
    }
}

/// out[:, 0..w] += S * panel (the panel's first w columns), row by row of S, with CH
/// independent accumulator chains per row (an FMA has 4 cycles of latency and there are two
/// FMA ports: one chain would run at an eighth of the rate). Rows without nonzeros are left
/// alone (a -0.0 in `out` stays).
#[inline(always)]
unsafe fn panel_product<const CH: usize, const LV: u8>(s: &Csr, panel: &[PanelRow], w: usize, out: View) {
    for i in 0..s.rows {
        let (lo, hi) = (*s.ptr.get_unchecked(i), *s.ptr.get_unchecked(i + 1));
        if lo == hi {
            continue;
        }
        let idx = s.idx.get_unchecked(lo..hi);
        let val = s.val.get_unchecked(lo..hi);
        let mut sums = [[0.0f64; NB]; CH];
        let mut ic = idx.chunks_exact(CH);
        let mut vc = val.chunks_exact(CH);
        for (is, vs) in (&mut ic).zip(&mut vc) {
            for (ch, sum) in sums.iter_mut().enumerate() {
                let x = &panel.get_unchecked(*is.get_unchecked(ch) as usize).0;
                let v = *vs.get_unchecked(ch);
                for (a, &xc) in sum.iter_mut().zip(x) {
                    *a = mac::<f64, LV>(*a, v, xc);
                }
            }
        }
        for (&l, &v) in ic.remainder().iter().zip(vc.remainder()) {
            let x = &panel.get_unchecked(l as usize).0;
            for (a, &xc) in sums[0].iter_mut().zip(x) {
                *a = mac::<f64, LV>(*a, v, xc);
            }
        }
        let mut total = sums[0];
        for sum in &sums[1..] {
            for (t, &a) in total.iter_mut().zip(sum) {
                *t += a;
            }
        }
        for (c, &x) in total[..w].iter().enumerate() {
            *out.ptr.add(i * out.rs + c * out.cs) += x;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// splitmix64: a tiny deterministic generator for the tests.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9e3779b97f4a7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d049bb133111eb);
            z ^ (z >> 31)
        }
        /// Uniform in [0, 1).
        fn unit(&mut self) -> f64 {
            (self.next() >> 11) as f64 / (1u64 << 53) as f64
        }
        /// A nonzero integer in [-2^bits, 2^bits].
        fn int(&mut self, bits: u32) -> f64 {
            loop {
                let x = (self.next() % ((2u64 << bits) + 1)) as i64 - (1i64 << bits);
                if x != 0 {
                    return x as f64;
                }
            }
        }
        /// A nonzero double of either sign, magnitudes over a few binades.
        fn real(&mut self) -> f64 {
            let x = (self.unit() - 0.5) * (4.0 * self.unit() - 2.0).exp2();
            if x == 0.0 {
                1.0
            } else {
                x
            }
        }
    }

    /// A column-major m x k matrix with leading dimension ld, each entry nonzero with
    /// probability `density` (padding rows hold NaN: they must never be read).
    fn sparse_matrix(r: &mut Rng, m: usize, k: usize, ld: usize, density: f64, ints: bool) -> Vec<f64> {
        let mut a = vec![f64::NAN; ld * k.max(1)];
        for j in 0..k {
            for i in 0..m {
                a[i + j * ld] = if r.unit() < density {
                    if ints {
                        r.int(20)
                    } else {
                        r.real()
                    }
                } else {
                    0.0
                };
            }
        }
        a
    }

    fn dense_matrix(r: &mut Rng, m: usize, n: usize, ld: usize, ints: bool) -> Vec<f64> {
        let mut a = vec![f64::NAN; ld * n.max(1)];
        for j in 0..n {
            for i in 0..m {
                a[i + j * ld] = if ints { r.int(20) } else { r.real() };
            }
        }
        a
    }

    /// The naive triple loop: out + S * B (every term, in column order), and sum |terms| per
    /// entry for the error bound.
    #[allow(clippy::too_many_arguments)]
    fn naive(
        a: &[f64],
        lda: usize,
        b: &[f64],
        ldb: usize,
        out: &[f64],
        ldo: usize,
        m: usize,
        k: usize,
        n: usize,
    ) -> (Vec<f64>, Vec<f64>) {
        let (mut c, mut mag) = (out.to_vec(), vec![0.0; out.len()]);
        for j in 0..n {
            for i in 0..m {
                let mut s = c[i + j * ldo];
                let mut g = s.abs();
                for l in 0..k {
                    s += a[i + l * lda] * b[l + j * ldb];
                    g += (a[i + l * lda] * b[l + j * ldb]).abs();
                }
                c[i + j * ldo] = s;
                mag[i + j * ldo] = g;
            }
        }
        (c, mag)
    }

    /// One random case: the Csr against A, then out += S B against the naive loop (bit for
    /// bit on integers, within 1e-12 of the terms' magnitude on reals), padding untouched.
    #[allow(clippy::too_many_arguments)]
    fn check(r: &mut Rng, m: usize, k: usize, n: usize, pads: (usize, usize, usize), density: f64, ints: bool) {
        let (lda, ldb, ldo) = (m + pads.0, k + pads.1, m + pads.2);
        let a = sparse_matrix(r, m, k, lda, density, ints);
        let b = dense_matrix(r, k, n, ldb, ints);
        let out0 = dense_matrix(r, m, n, ldo, ints);
        let what = format!("m {m} k {k} n {n} lds {lda} {ldb} {ldo} density {density} ints {ints}");

        let s = unsafe { Csr::from_col_major(a.as_ptr(), m, k, lda) };
        let mut want_nnz = 0;
        assert_eq!((s.rows, s.cols, s.ptr.len(), s.ptr[0]), (m, k, m + 1, 0), "{what}");
        for i in 0..m {
            let row: Vec<(u32, f64)> =
                (0..k).filter(|&l| a[i + l * lda] != 0.0).map(|l| (l as u32, a[i + l * lda])).collect();
            want_nnz += row.len();
            let got: Vec<(u32, f64)> = (s.ptr[i]..s.ptr[i + 1]).map(|p| (s.idx[p], s.val[p])).collect();
            assert_eq!(got, row, "row {i}: {what}");
        }
        assert_eq!(s.nnz(), want_nnz, "{what}");
        assert_eq!(unsafe { count_nonzeros(a.as_ptr(), m, k, lda) }, want_nnz, "{what}");

        let mut out = out0.clone();
        unsafe { spmm_add(&s, b.as_ptr(), ldb, n, out.as_mut_ptr(), ldo) };
        let (want, mag) = naive(&a, lda, &b, ldb, &out0, ldo, m, k, n);
        same_output(&out, &want, &mag, (m, n, ldo), ints, &what);
    }

    /// `out` (m x n, ld ldo) against the naive loop's `want`: bit for bit on integers, within
    /// 1e-12 of the terms' magnitude on reals; the padding rows untouched (NaN).
    fn same_output(out: &[f64], want: &[f64], mag: &[f64], (m, n, ldo): (usize, usize, usize), ints: bool, what: &str) {
        for j in 0..n {
            for i in 0..ldo {
                let p = i + j * ldo;
                if i >= m {
                    assert!(out[p].is_nan(), "padding written at ({i}, {j}): {what}");
                } else if ints {
                    assert_eq!(out[p].to_bits(), want[p].to_bits(), "({i}, {j}): {} vs {}: {what}", out[p], want[p]);
                } else {
                    assert!(
                        (out[p] - want[p]).abs() <= 1e-12 * mag[p],
                        "({i}, {j}): {} vs {}: {what}",
                        out[p],
                        want[p]
                    );
                }
            }
        }
    }

    /// The same for a mostly-zero right operand: `Csr::from_rows` of S's columns against S,
    /// then out += A S by `dense_spmm_add` against the naive loop, padding untouched.
    #[allow(clippy::too_many_arguments)]
    fn check_right(r: &mut Rng, m: usize, k: usize, n: usize, pads: (usize, usize, usize), density: f64, ints: bool) {
        let (lda, lds, ldo) = (m + pads.0, k + pads.1, m + pads.2);
        let a = dense_matrix(r, m, k, lda, ints);
        let sm = sparse_matrix(r, k, n, lds, density, ints);
        let out0 = dense_matrix(r, m, n, ldo, ints);
        let what = format!("right: m {m} k {k} n {n} lds {lda} {lds} {ldo} density {density} ints {ints}");
        let st = unsafe { Csr::from_rows(sm.as_ptr(), n, k, lds) };
        assert_eq!((st.rows, st.cols, st.ptr.len(), st.ptr[0]), (n, k, n + 1, 0), "{what}");
        for j in 0..n {
            let col: Vec<(u32, f64)> =
                (0..k).filter(|&l| sm[l + j * lds] != 0.0).map(|l| (l as u32, sm[l + j * lds])).collect();
            let got: Vec<(u32, f64)> = (st.ptr[j]..st.ptr[j + 1]).map(|p| (st.idx[p], st.val[p])).collect();
            assert_eq!(got, col, "column {j}: {what}");
        }
        let (want, mag) = naive(&a, lda, &sm, lds, &out0, ldo, m, k, n);
        let mut out = out0.clone();
        unsafe { dense_spmm_add(a.as_ptr(), lda, m, &st, out.as_mut_ptr(), ldo) };
        same_output(&out, &want, &mag, (m, n, ldo), ints, &what);
    }

    const DENSITIES: [f64; 5] = [0.0, 0.01, 0.1, 0.6, 1.0];

    #[test]
    fn spmm_add_matches_the_naive_loop_on_odd_shapes() {
        let mut r = Rng(49);
        let sizes = [1usize, 2, 3, 7, 8, 9, 15, 16, 17, 31, 33, 64, 69];
        for ints in [true, false] {
            for &density in &DENSITIES {
                for _ in 0..40 {
                    let pick = |r: &mut Rng| sizes[(r.next() % sizes.len() as u64) as usize];
                    let (m, k, n) = (pick(&mut r), pick(&mut r), pick(&mut r));
                    let pads = ((r.next() % 3) as usize * 5, (r.next() % 3) as usize * 3, (r.next() % 3) as usize * 2);
                    check(&mut r, m, k, n, pads, density, ints);
                    check_right(&mut r, m, k, n, pads, density, ints);
                }
            }
        }
    }

    /// Every n from 1 to 70 (remainder panels of every width), and empty shapes.
    #[test]
    fn spmm_add_covers_every_panel_remainder_and_empty_shapes() {
        let mut r = Rng(7);
        for n in 1..=70 {
            check(&mut r, 13, 11, n, (3, 1, 2), 0.3, true);
            // (The right operand's kernel has its panels along m.)
            check_right(&mut r, n, 11, 13, (3, 1, 2), 0.3, true);
        }
        for (m, k, n) in [(0, 5, 4), (5, 0, 4), (5, 4, 0), (0, 0, 0)] {
            check(&mut r, m, k, n, (1, 1, 1), 0.5, true);
            check_right(&mut r, m, k, n, (1, 1, 1), 0.5, true);
        }
    }

    /// Shapes large enough that the conversion, the count and the product run on the pool.
    #[test]
    fn threaded_shapes_match_the_naive_loop() {
        let mut r = Rng(2025);
        for &density in &[0.02, 0.1, 0.6] {
            check(&mut r, 523, 517, 61, (5, 3, 1), density, true);
            check(&mut r, 300, 450, 37, (0, 0, 0), density, false);
            check_right(&mut r, 523, 517, 61, (5, 3, 1), density, true);
            check_right(&mut r, 61, 450, 300, (0, 0, 0), density, false);
        }
    }

    /// Negative zeros are zeros; NaN is a nonzero (it must reach the product).
    #[test]
    fn negative_zero_is_not_stored_and_nan_is() {
        let a = [-0.0, 1.0, f64::NAN, 0.0];
        let s = unsafe { Csr::from_col_major(a.as_ptr(), 2, 2, 2) };
        assert_eq!(s.ptr, vec![0, 1, 2]);
        assert_eq!(s.idx, vec![1, 0]);
        assert!(s.val[0].is_nan() && s.val[1] == 1.0);
        assert_eq!(unsafe { count_nonzeros(a.as_ptr(), 2, 2, 2) }, 2);
    }
}
