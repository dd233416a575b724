//! The leaf of TRSM/TRMM where the blocked product's own kernels run: a triangle whose
//! packing fits in half of L2 is done in panels of the kernel's size, left-looking, BLIS's
//! way. Side Left first (X's columns contiguous, column-major B):
//!
//! For each NR-wide slice of X's columns and each row panel in solve order, one micro-kernel
//! call applies every row already finished (k runs over all of them, B read where it lies in
//! X), and the triangular tile kernel (`Micro::tri`) does the panel's own MR x MR block:
//! - TRSM: X_i := alpha*X_i - T_i,done X_done (one kernel call), then X_i := T_ii^-1 X_i with
//!   the block's inverse made while packing;
//! - TRMM: X_i := alpha*T_ii X_i, then X_i += alpha*T_i,rest X_rest (rows not yet
//!   overwritten: panels go bottom-up for lower T, top-down for upper).
//!
//! From the right the base kernels (`super::TriScalar`) do the diagonal blocks.
//!
//! The panels of the triangle are packed once (MR-high, as the product packs A) and shared
//! by all threads, which split X's columns.
//!
//! Side Right (X = B^T, B column-major, so X's rows are the contiguous ones) runs the same
//! steps on B's side of the transpose: the kernel's tile is a block of B (MR of B's rows by
//! NR of its columns, rows contiguous), its A operand the finished columns of B's row panel,
//! packed as they are finished, and its B operand the triangle, packed once in NR-wide
//! panels. Threads split B's rows.
//!
//! Why: the 2x2 recursion down to blocks of 64 ran its off-diagonal products as GEMMs of
//! k = 64, 128, 256, ..., each C tile loaded and stored every k steps, and 1/8 of the flops in
//! 64 x 64 base blocks at half the GEMM rate (1-thread DTRSM 512 at 45 GFLOP/s, DGEMM 65).
//! Here the base kernel meets only MR x MR blocks (MR/m of the flops) and the kernel's depth is
//! every finished row.

use super::{Op, Packed, Tri, TriScalar};
use crate::cpu::level3::micro::{micro, Micro};
use crate::cpu::level3::packed;
use crate::cpu::threads;
use crate::types::{MatMut, Scalar};
use once_cell::sync::Lazy;

/// Whether the leaf runs (`HYBLAS_TRI_LEAF=0`: the recursion all the way down, to compare).
static TRI_LEAF: Lazy<bool> = Lazy::new(|| crate::config::enabled("HYBLAS_TRI_LEAF"));

/// The largest triangle the leaf takes for precision T (0 where it does not run): packed,
/// it fills at most half of L2, so that every column slice streams it from there.
pub(super) fn max_order<T: Scalar>() -> usize {
    if !*TRI_LEAF || micro::<T>().is_none() {
        return 0;
    }
    let (_, l2, _) = packed::caches();
    // m * m / 2 elements <= l2 / 2 bytes.
    ((l2 / std::mem::size_of::<T>()) as f64).sqrt() as usize
}

/// Where the leaf runs from the right on an order-m triangle, the rows of B a thread's part
/// should be a multiple of: the kernel's MR. Parts of 16 rows (the general rounding) filled
/// 16 of the 24 rows of every DTRSM tile. On the H200 host's 16 cores at n = 1024, against
/// the recursion's build in the same runs: DTRSM RUTN 1.34x -> 1.70x, DTRMM RLNN 1.04x ->
/// 1.49x (0.79x -> 0.95x MKL), ZTRSM RLCN 433 -> 551 GFLOP/s (`bench/results/s54-h200-host/`).
pub(super) fn part_rows<T: Scalar>(m: usize, x_rs: isize, x_cs: isize) -> Option<usize> {
    let right = right_side(x_rs, x_cs) == Some(true);
    (right && m <= max_order::<T>()).then(|| micro::<T>().map(|mk| mk.mr)).flatten()
}

/// The side the leaf works X of strides (`x_rs`, `x_cs`) from: Some(false) from the left (X's
/// columns contiguous), Some(true) from the right (its rows), None for neither.
pub(super) fn right_side(x_rs: isize, x_cs: isize) -> Option<bool> {
    match (x_rs, x_cs) {
        (1, _) => Some(false),
        (_, 1) => Some(true),
        _ => None,
    }
}

/// One panel of the triangle: rows [r0, r0 + h) (columns of B from the right), the finished
/// rows it applies ([k0, k0 + k)), where its packed block starts, and its diagonal block for
/// the base kernel.
struct Panel<T> {
    r0: usize,
    h: usize,
    k0: usize,
    k: usize,
    at: usize,
    diag: Block<T>,
}

/// A panel's diagonal block as its side's code takes it.
///
/// Complex TRMM from the left keeps the base kernels (their complex column kernels multiply
/// as fast): with the triangular tile kernel CTRMM L,L,N,N 512 ran at 0.98x of them on one
/// thread and ZTRMM L,U,N,N at 1.00x / 0.985x on one / two threads (interleaved, this
/// project's VM), where DTRMM gained 3% and every TRSM 2-8% on the H200 host's Xeon (the
/// substitution, not a product, is what the base kernels do slowly).
enum Block<T> {
    /// From the left: where in the leaf's buffer its MR x MR block in the kernel's A layout
    /// for [`Micro::tri`] lies, T_ii for TRMM and T_ii^-1 for TRSM ([`super::kernel_block`]),
    /// made while packing.
    Kernel(usize),
    /// From the right, and complex TRMM from the left: the base kernels' packing.
    Base(Packed<T>),
}

/// An order-m triangle packed for the leaf, panels in the order they are done.
pub(super) struct Leaf<T> {
    mk: Micro<T>,
    op: Op,
    lower: bool,
    /// X's rows contiguous (side Right): panels NR high, packed as the product's B.
    right: bool,
    /// The packed panels (the calling thread's scratch, see [`Leaf::with`]).
    buf: *const T,
    panels: Vec<Panel<T>>,
}

// SAFETY: the leaf is only read once packed (the kernels' function pointers are plain code,
// `buf` the packed panels).
unsafe impl<T: Sync> Sync for Leaf<T> {}

impl<T: TriScalar> Leaf<T> {
    /// Pack the triangle `t` (order m) for right-hand sides X of strides (`x_rs`, `x_cs`) on
    /// up to `nt` threads and run `f` on the leaf; None where the own kernels do not run or X
    /// is laid out for neither side.
    ///
    /// The packed panels go to a scratch buffer the calling thread keeps: allocated per call
    /// (a megabyte for DTRSM 512, fresh pages each time whenever the allocator mapped it anew)
    /// the leaf's 1-thread DTRSM 512 ran at a median of 44.5 GFLOP/s for a best of 67.
    pub(super) unsafe fn with<R>(
        t: Tri<T>,
        op: Op,
        m: usize,
        (x_rs, x_cs): (isize, isize),
        nt: usize,
        f: impl FnOnce(&Self) -> R,
    ) -> Option<R> {
        let mk = micro::<T>()?;
        let right = right_side(x_rs, x_cs)?;
        let ph = if right { mk.nr } else { mk.mr };
        let np = m.div_ceil(ph);
        // Forward for a lower solve and an upper product (each panel needs the rows above
        // it finished, or still old), backward otherwise.
        let forward = (op == Op::Solve) == t.lower;
        let mut panels = Vec::with_capacity(np);
        let mut len = 0;
        for s in 0..np {
            let i = if forward { s } else { np - 1 - s };
            let (r0, h) = (i * ph, ph.min(m - i * ph));
            let (k0, k) = if t.lower { (0, r0) } else { (r0 + h, m - r0 - h) };
            let diag = if right || (op == Op::Multiply && T::IS_COMPLEX) {
                Block::Base(T::base_pack(&t.diag(r0, h), op, x_rs))
            } else {
                len += ph * ph;
                Block::Kernel(len - ph * ph)
            };
            panels.push(Panel { r0, h, k0, k, at: len, diag });
            len += k * ph;
        }
        Some(packed::with_tri_buf::<T, _>(len, |buf| {
            Self::pack(t, op, right, ph, &panels, buf, len, nt);
            f(&Leaf { mk, op, lower: t.lower, right, buf, panels })
        }))
    }

    /// Pack every panel's block into `buf` (`len` elements).
    ///
    /// Either side stores panel p's column c (of the triangle's storage) as its `ph` elements
    /// at `at + (c - k0)*ph`, zero past its h rows. Where the triangle's columns are the
    /// contiguous ones, that is one pass down each column, dealing its rows to the panels
    /// that take it; panel by panel, each read `ph` elements a column, a new page per step
    /// (from the right, with 8-row panels, 11% of a 1-thread DTRSM 512 RUTN).
    ///
    /// The left side's diagonal blocks are parts of the same parallel loop.
    #[allow(clippy::too_many_arguments)]
    unsafe fn pack(t: Tri<T>, op: Op, right: bool, ph: usize, panels: &[Panel<T>], buf: *mut T, len: usize, nt: usize) {
        let dst = packed::SendPtr(buf);
        let nt = if len * std::mem::size_of::<T>() > 256 << 10 { nt } else { 1 };
        let m = t.a.cols;
        let cols_per = m.div_ceil(4 * nt).max(1);
        let sweeps = if t.a.rs == 1 { m.div_ceil(cols_per) } else { panels.len() };
        let blocks = panels.len();
        threads::for_each_part(nt, blocks + sweeps, |q| {
            if q < blocks {
                // (Blocks for the base kernels were packed with the panel list.)
                let (p, Block::Kernel(at)) = (&panels[q], &panels[q].diag) else { return };
                // SAFETY: the block's own range of the buffer.
                return unsafe { super::kernel_block(&t.diag(p.r0, p.h), op, ph, dst.get().add(*at)) };
            }
            let q = q - blocks;
            if t.a.rs == 1 {
                let cols = q * cols_per..((q + 1) * cols_per).min(m);
                // SAFETY: as `pack`'s caller promised.
                return unsafe { sweep_cols(t, ph, panels, dst.get(), cols) };
            }
            let p = &panels[q];
            if p.k > 0 {
                // SAFETY: panel q's own range of the buffer; the block lies in the triangle.
                unsafe {
                    let (v, d) = (t.a.sub(p.r0, p.k0, p.h, p.k), dst.get().add(p.at));
                    if right {
                        packed::pack_b_fast(v.t(), t.conj, ph, d)
                    } else {
                        packed::pack_a_fast(v, t.conj, ph, d)
                    }
                };
            }
        });
    }

    /// The leaf on right-hand sides X (m x n, laid out as [`Leaf::with`] was told).
    pub(super) unsafe fn run(&self, alpha: T, x: MatMut<T>) {
        if self.right {
            self.run_right(alpha, x)
        } else {
            self.run_left(alpha, x)
        }
    }

    /// Side Left (X's columns contiguous), slice of NR columns by slice.
    ///
    /// B is read where it lies: copying each solved panel into a packed slice for the kernel
    /// cost more than it gained (1-thread DTRSM/DTRMM 512: 0.78-0.86x MKL packed, 0.85-0.93x
    /// in place, same runs on this project's VM).
    unsafe fn run_left(&self, alpha: T, x: MatMut<T>) {
        let nr = self.mk.nr;
        // Slices solved together: a tile row of at least 64 bytes for the base kernels (two
        // 4-wide slices of complex single; one slice of one 32-byte row ran CTRSM 512's
        // diagonal blocks at a third of the kernel's rate).
        let wide = nr * (64 / (nr * std::mem::size_of::<T>())).max(1);
        for c0 in (0..x.cols).step_by(wide) {
            let ww = wide.min(x.cols - c0);
            for p in &self.panels {
                let a = self.buf.add(p.at);
                let tile = x.sub(p.r0, c0, p.h, ww);
                let kernel = |al: T, be: T| {
                    for s in (0..ww).step_by(nr) {
                        let w = nr.min(ww - s);
                        // Rows k0.. of the slice (its columns contiguous).
                        let b = x.ptr_at(p.k0.min(x.rows - 1), c0 + s);
                        let c = tile.ptr_at(0, s);
                        (self.mk.direct)(p.k, a, b, 1, x.cs, c, x.cs, p.h, w, al, be, b);
                    }
                };
                // X_i := scale * D X_i in place, D = T_ii (TRMM) or T_ii^-1 (TRSM).
                let diag = |sc: T| match &p.diag {
                    Block::Kernel(at) => {
                        let d = self.buf.add(*at);
                        for s in (0..ww).step_by(nr) {
                            let (w, c) = (nr.min(ww - s), tile.ptr_at(0, s));
                            (self.mk.tri[!self.lower as usize])(p.h, d, c, 1, x.cs, c, x.cs, p.h, w, sc, T::zero(), c);
                        }
                    }
                    Block::Base(d) => T::base_run(self.op, self.lower, d, sc, tile),
                };
                self.panel(p, alpha, &kernel, &diag);
            }
        }
    }

    /// Side Right (X's rows contiguous: B = X^T column-major), by blocks of B's rows. In a
    /// block, each panel of the triangle (NR of B's columns) meets every MR-row panel of
    /// the block in turn, so its packed copy stays in L1; the block's finished columns
    /// (packed MR-high as the product's A, column c at c*MR) stay in L2.
    unsafe fn run_right(&self, alpha: T, x: MatMut<T>) {
        let (mr, nr) = (self.mk.mr, self.mk.nr);
        let b = x.t();
        let (rows, m) = (b.rows, b.cols);
        let mc = packed::blocks::<T>(mr, nr).mc;
        packed::with_leaf_buf::<T, _>(mc * m, |xp| {
            for rb in (0..rows).step_by(mc) {
                let nq = mc.min(rows - rb).div_ceil(mr);
                let panel_rows = |q: usize| (rb + q * mr, mr.min(rows - rb - q * mr));
                // Column c of row panel q (its MR elements, zero past the panel's rows).
                let put = |q: usize, c: usize| {
                    let (r0, h) = panel_rows(q);
                    let (s, d) = (b.ptr_at(r0, c), xp.add((q * m + c) * mr));
                    // Loops, not a library copy: a call per MR elements cost 4% of DTRSM.
                    if h == mr {
                        for i in 0..mr {
                            *d.add(i) = *s.add(i);
                        }
                    } else {
                        for i in 0..mr {
                            *d.add(i) = if i < h { *s.add(i) } else { T::zero() };
                        }
                    }
                };
                if self.op == Op::Multiply {
                    // The product reads the old values of rows it has not overwritten yet.
                    for q in 0..nq {
                        (0..m).for_each(|c| put(q, c));
                    }
                }
                for p in &self.panels {
                    let bp = self.buf.add(p.at);
                    for q in 0..nq {
                        let (r0, h) = panel_rows(q);
                        let tile = b.sub(r0, p.r0, h, p.h);
                        let a = xp.add((q * m + p.k0.min(m - 1)) * mr);
                        let kernel = |al: T, be: T| {
                            (self.mk.kernel)(p.k, a, bp, nr as isize, 1, tile.ptr, b.cs, h, p.h, al, be, bp);
                        };
                        // TRSM: the solved columns also go to the packed panel.
                        let cols = xp.add((q * m + p.r0) * mr);
                        let Block::Base(d) = &p.diag else { unreachable!("the right side packs base blocks") };
                        self.panel(p, alpha, &kernel, &|sc: T| right_tile(self.op, self.lower, d, sc, tile, mr, cols));
                    }
                }
            }
        })
    }

    /// One tile of panel `p` on either side: `kernel(alpha, beta)` applies the rows the panel
    /// takes from the others, `diag(scale)` the tile's diagonal block. TRSM X_i := alpha*X_i -
    /// T_i,done X_done, then the block's solve; TRMM X_i := alpha*T_ii X_i, then += alpha*
    /// T_i,rest X_rest.
    unsafe fn panel(&self, p: &Panel<T>, alpha: T, kernel: &dyn Fn(T, T), diag: &dyn Fn(T)) {
        match self.op {
            Op::Solve => {
                // k == 0 (the first panel) only scales: alpha*X_i.
                kernel(-T::one(), alpha);
                diag(T::one());
            }
            Op::Multiply => {
                diag(alpha);
                if p.k > 0 {
                    kernel(alpha, T::one());
                }
            }
        }
    }
}

/// [`Leaf::pack`] for the triangle's columns `cols` (its storage column-major).
unsafe fn sweep_cols<T: Scalar>(t: Tri<T>, ph: usize, panels: &[Panel<T>], buf: *mut T, cols: std::ops::Range<usize>) {
    crate::dispatch_level!(sweep::<T>(t, ph, panels, buf, cols))
}

#[inline(always)]
unsafe fn sweep<T: Scalar, const LV: u8>(
    t: Tri<T>,
    ph: usize,
    panels: &[Panel<T>],
    buf: *mut T,
    cols: std::ops::Range<usize>,
) {
    for c in cols {
        for p in panels.iter().filter(|p| (p.k0..p.k0 + p.k).contains(&c)) {
            // Panel p's column c, inside its range of the buffer; the rows read lie in the
            // triangle.
            let (s, d) = (t.a.ptr_at(p.r0, c), buf.add(p.at + (c - p.k0) * ph));
            if p.h == ph && !t.conj {
                copy_panel_col(s, d, ph);
            } else {
                for i in 0..ph {
                    *d.add(i) = if i < p.h { (*s.add(i)).conj_if(t.conj) } else { T::zero() };
                }
            }
        }
    }
}

/// Copy `n` elements, a kernel's MR or NR: copies of a size known at compile time are
/// whole-register moves, where a call to `memcpy` per 64 bytes cost more than the copy.
#[inline(always)]
unsafe fn copy_panel_col<T>(s: *const T, d: *mut T, n: usize) {
    #[inline(always)]
    unsafe fn fixed<T, const N: usize>(s: *const T, d: *mut T) {
        std::ptr::copy_nonoverlapping(s, d, N)
    }
    match n {
        4 => fixed::<T, 4>(s, d),
        8 => fixed::<T, 8>(s, d),
        12 => fixed::<T, 12>(s, d),
        16 => fixed::<T, 16>(s, d),
        24 => fixed::<T, 24>(s, d),
        48 => fixed::<T, 48>(s, d),
        _ => std::ptr::copy_nonoverlapping(s, d, n),
    }
}

/// From the right, a tile's diagonal block (`tile`: h of B's rows by w of its columns; in X's
/// orientation the block's rows are B's columns): copied into a buffer of whole columns,
/// solved or multiplied right-looking as the reference (column k, finished, taken out of or
/// added into the columns after it), written back, and for TRSM also into the packed panel's
/// columns (`cols`, column c at c*mr, zero past h). The row kernels did the same through
/// a transposing driver in chunks of 8, and with the separate copy into the panel took 15% of
/// a 1-thread DTRSM 512 from the right for 1.6% of its flops.
unsafe fn right_tile<T: TriScalar>(
    op: Op,
    lower: bool,
    pk: &Packed<T>,
    alpha: T,
    tile: MatMut<T>,
    mr: usize,
    cols: *mut T,
) {
    let (p, d) = (pk.p.as_ptr(), pk.d.as_ptr());
    let hw = (tile.rows, tile.cols);
    if hw.0 == mr && T::simd_right(op == Op::Solve, lower, p, d, alpha, tile.ptr, tile.cs, hw, cols) {
        return;
    }
    // The other whole tiles (complex: the leaf runs only where the AVX-512 kernels do, so
    // real whole tiles took the register path above) with their sizes known at compile time:
    // the loops below then run on whole registers with no remainder. With the sizes read at
    // run time this took 13% of a 1-thread DTRSM 512 RUTN, before its register path.
    macro_rules! shapes {
        ($($h:literal x $w:literal),*) => {
            match (tile.rows, tile.cols) {
                $(($h, $w) if mr == $h => crate::dispatch_level!(right_tile_body::<T, $h, $w>(op, lower, pk, alpha, tile, mr, cols)),)*
                _ => crate::dispatch_level!(right_tile_body::<T, 0, 0>(op, lower, pk, alpha, tile, mr, cols)),
            }
        };
    }
    shapes!(12 x 4, 24 x 4)
}

/// `H` x `W`: the tile's size where fixed at compile time (0: read from `tile`).
#[inline(always)]
unsafe fn right_tile_body<T: Scalar, const H: usize, const W: usize, const LV: u8>(
    op: Op,
    lower: bool,
    pk: &Packed<T>,
    alpha: T,
    tile: MatMut<T>,
    mr: usize,
    cols: *mut T,
) {
    use crate::cpu::simd::mac;
    // Room for the largest tile (48 x 8 single precision).
    const ROOM: usize = 384;
    let (h, w) = (if H > 0 { H } else { tile.rows }, if W > 0 { W } else { tile.cols });
    let mr = if H > 0 { H } else { mr };
    debug_assert!(h == tile.rows && w == tile.cols);
    debug_assert!(h <= mr && mr * w <= ROOM && tile.rs == 1 && !pk.col_major);
    let mut room = std::mem::MaybeUninit::<[T; ROOM]>::uninit();
    // Column c at c*mr; only the first h elements of each are used.
    let b = room.as_mut_ptr() as *mut T;
    // Copies of a size fixed at compile time, not library calls (a call per column cost more
    // than the copy; element loops compile to such calls too).
    let copy = |from: *const T, to: *mut T| copy_panel_col(from, to, h);
    for c in 0..w {
        copy(tile.ptr_at(0, c), b.add(c * mr));
    }
    let (p, d) = (pk.p.as_ptr(), pk.d.as_ptr());
    for step in 0..w {
        let k = if (op == Op::Solve) == lower { step } else { w - 1 - step };
        let (i0, i1) = if lower { (k + 1, w) } else { (0, k) };
        let bk = b.add(k * mr);
        let scale = |f: T| {
            for e in 0..h {
                *bk.add(e) = *bk.add(e) * f;
            }
        };
        // The other columns take column k times T(i, k) (X's orientation, row-major, ld w).
        let spread = |sign: T| {
            for i in i0..i1 {
                let (s, bi) = (sign * *p.add(i * w + k), b.add(i * mr));
                for e in 0..h {
                    *bi.add(e) = mac::<T, LV>(*bi.add(e), s, *bk.add(e));
                }
            }
        };
        match op {
            Op::Solve => {
                scale(*d.add(k));
                spread(-T::one());
            }
            Op::Multiply => {
                scale(alpha);
                spread(T::one());
                scale(*d.add(k));
            }
        }
    }
    for c in 0..w {
        let bc = b.add(c * mr);
        copy(bc, tile.ptr_at(0, c));
        if op == Op::Solve {
            let pc = cols.add(c * mr);
            copy(bc, pc);
            if h < mr {
                std::ptr::write_bytes(pc.add(h), 0, mr - h);
            }
        }
    }
}
