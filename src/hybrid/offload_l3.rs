//! Host Level-3 offload beyond GEMM (issue 5, phase 2): SYMM/HEMM, SYRK/HERK, SYR2K/HER2K,
//! TRMM and TRSM computed on the GPU from host memory, for host-ABI calls the planner
//! (`plan::offload::decide_level3`) sent here.
//!
//! This is a child module of `hybrid::offload` (declared there with `#[path]`) so that it runs on
//! the GEMM pipeline's own pieces without copying them: the pooled [`Pipe`] (three streams,
//! pinned chunk rings, events, the device arena), [`Uploader`] / [`Downloader`] (pieces packed
//! and unpacked by the CPU-engine threads), [`Pieces`], [`tile_for`] / [`piece_for`] / the
//! [`Knobs`] of `with_knobs`, and the [`Failure`] / [`Tile`] / [`OffloadStats`] types.
//!
//! Design: every host operand gets a *resident* copy on the device (laid out as stored, leading
//! dimension = its rows), filled piece by piece as the computation needs it; the output is cut
//! into tiles, each tile is a short chain of real cuBLAS calls on hyblas's own handle, and a
//! tile goes back to the host as soon as its chain is done, while later tiles are still being
//! uploaded and computed. So transfers in, compute and transfers out overlap as in GEMM, and
//! each stored element crosses the bus once. Decompositions (t = tile, `A^` = the full
//! symmetric matrix):
//! - SYRK/HERK, SYR2K/HER2K: square tiles of C's triangle, tile row by tile row (lower; tile
//!   column by column for upper) so that op(A)'s row panel i is uploaded just before the tiles
//!   that need it. Off-diagonal tiles are GEMMs (two for the rank-2k routines), diagonal tiles
//!   the routine itself on a t x t block. Diagonal tiles go back masked: only their triangle is
//!   written to the caller's C.
//! - SYMM/HEMM: tiles of C; a tile is A^'s block row (left) or column (right) times B: the
//!   part left of / above the diagonal block is one GEMM on the stored triangle (transposed
//!   where A^'s block is the mirror of the stored one), the diagonal block one SYMM/HEMM, the
//!   rest one more GEMM. A's triangle goes up in panels (lower: a column panel from the diagonal
//!   down; upper: a row panel from the diagonal right), panel i just before the first tile that
//!   needs it.
//! - TRMM/TRSM: B's columns (left) or rows (right) are independent: panels of them, each
//!   processed tile by tile along the triangle in place on the resident B. TRSM in solve order:
//!   GEMM update by the solved tiles (B_i := alpha*B_i - op(A)_ij X_j), then cuBLAS TRSM on the
//!   diagonal block. TRMM in the order that reads every tile of B before it is overwritten:
//!   cuBLAS TRMM on the diagonal block (in place, C = B as cuBLAS allows), then the GEMM with
//!   the tiles not yet processed. Tiles go back in that order, which is what makes a partial
//!   result recoverable (below).
//!
//! Whole-problem residency keeps it simple: a problem whose copies do not fit the device
//! memory (or the `device_budget` knob) is refused before anything is copied, and the CPU
//! engine runs it. beta == 0: C is not uploaded (its resident tiles are zeroed on the device
//! before a non-GEMM cuBLAS call could read them); alpha == 0 reads neither A nor B (C :=
//! beta*C by GEMMs with k = 0, except on the diagonal tiles of an in-place C, where the
//! routine itself with k = 0 keeps off the other triangle; TRMM/TRSM zero B). Operands in
//! device or managed memory are used in place; a device output is computed in place. Diagonal
//! tiles of a resident C hold the whole square on the device, and every piece of theirs goes
//! back through the tile's mask, whichever way it leaves the download ring ([`down_tile`]).
//!
//! Failure: every allocation, the handle and the cuBLAS symbols are checked before the first
//! copy, so out-of-memory and a missing cuBLAS leave the caller's output untouched (the ABI then
//! runs the CPU engine on the whole call). A copy or cuBLAS call that fails later stops the
//! pipeline; the [`Failure`] says which pieces of the output went back ([`Failure::remaining`]
//! lists the rest), and [`finish_rank`] / [`finish_tri`] let the CPU engine compute exactly the
//! rest: the elements of C of SYMM/SYRK/SYR2K are independent, and for TRMM/TRSM each column
//! (left) or row (right) of B holds a prefix of final tiles in processing order, from which the
//! CPU engine resumes the same algorithm. No element is updated twice.

use super::*;
use crate::cpu::level3 as eng;
use crate::cpu::level3::tri::TriScalar;
use crate::gpu::vendor_calls as vc;
use crate::types::{Diag, MatMut, MatRef, Side, Uplo};

// ---- The call ----

/// Which routine a [`Call`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Symm,
    Hemm,
    Syrk,
    Herk,
    Syr2k,
    Her2k,
    Trmm,
    Trsm,
}

impl Kind {
    /// The routine's name without the precision prefix.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Symm => "symm",
            Kind::Hemm => "hemm",
            Kind::Syrk => "syrk",
            Kind::Herk => "herk",
            Kind::Syr2k => "syr2k",
            Kind::Her2k => "her2k",
            Kind::Trmm => "trmm",
            Kind::Trsm => "trsm",
        }
    }
    pub fn herm(self) -> bool {
        matches!(self, Kind::Hemm | Kind::Herk | Kind::Her2k)
    }
    fn rank(self) -> bool {
        matches!(self, Kind::Syrk | Kind::Herk | Kind::Syr2k | Kind::Her2k)
    }
    fn two(self) -> bool {
        matches!(self, Kind::Syr2k | Kind::Her2k)
    }
    fn tri(self) -> bool {
        matches!(self, Kind::Trmm | Kind::Trsm)
    }
    fn symm(self) -> bool {
        matches!(self, Kind::Symm | Kind::Hemm)
    }
    /// The real cuBLAS routine of its diagonal tiles.
    fn vendor(self) -> vc::Level3 {
        match self {
            Kind::Symm => vc::Level3::Symm,
            Kind::Hemm => vc::Level3::Hemm,
            Kind::Syrk => vc::Level3::Syrk,
            Kind::Herk => vc::Level3::Herk,
            Kind::Syr2k => vc::Level3::Syr2k,
            Kind::Her2k => vc::Level3::Her2k,
            Kind::Trmm => vc::Level3::Trmm,
            Kind::Trsm => vc::Level3::Trsm,
        }
    }
}

/// One validated, column-major Level-3 call (reference BLAS arguments; the ABI layer checked
/// them and took the quick returns). The output is `c` (m x n, leading dimension `ldc`): C for
/// SYMM and the rank-k routines (m = n), B for TRMM/TRSM (then `b == c`).
#[derive(Clone, Copy, Debug)]
pub struct Call<T> {
    pub kind: Kind,
    pub side: Side,
    pub uplo: Uplo,
    pub trans: Trans,
    pub diag: Diag,
    pub m: usize,
    pub n: usize,
    /// The rank-k routines' k (0 otherwise).
    pub k: usize,
    /// HERK's alpha and HERK/HER2K's beta are real (zero imaginary part).
    pub alpha: T,
    pub beta: T,
    pub a: *const T,
    pub lda: usize,
    /// SYMM's and SYR2K's B (A for SYRK, the output for TRMM/TRSM).
    pub b: *const T,
    pub ldb: usize,
    pub c: *mut T,
    pub ldc: usize,
}

impl<T: Scalar> Call<T> {
    /// SYMM (`herm == false`) or HEMM: C := alpha*A*B + beta*C (left) or alpha*B*A + beta*C.
    #[allow(clippy::too_many_arguments)]
    pub fn symm(
        herm: bool,
        side: Side,
        uplo: Uplo,
        m: usize,
        n: usize,
        alpha: T,
        a: *const T,
        lda: usize,
        b: *const T,
        ldb: usize,
        beta: T,
        c: *mut T,
        ldc: usize,
    ) -> Self {
        let kind = if herm { Kind::Hemm } else { Kind::Symm };
        Call {
            kind,
            side,
            uplo,
            trans: Trans::No,
            diag: Diag::NonUnit,
            m,
            n,
            k: 0,
            alpha,
            a,
            lda,
            b,
            ldb,
            beta,
            c,
            ldc,
        }
    }

    /// SYRK or HERK on C (n x n) with op(A) n x k.
    #[allow(clippy::too_many_arguments)]
    pub fn syrk(
        herm: bool,
        uplo: Uplo,
        trans: Trans,
        n: usize,
        k: usize,
        alpha: T,
        a: *const T,
        lda: usize,
        beta: T,
        c: *mut T,
        ldc: usize,
    ) -> Self {
        let kind = if herm { Kind::Herk } else { Kind::Syrk };
        let (side, diag) = (Side::Left, Diag::NonUnit);
        Call { kind, side, uplo, trans, diag, m: n, n, k, alpha, a, lda, b: a, ldb: lda, beta, c, ldc }
    }

    /// SYR2K or HER2K on C (n x n) with op(A), op(B) n x k.
    #[allow(clippy::too_many_arguments)]
    pub fn syr2k(
        herm: bool,
        uplo: Uplo,
        trans: Trans,
        n: usize,
        k: usize,
        alpha: T,
        a: *const T,
        lda: usize,
        b: *const T,
        ldb: usize,
        beta: T,
        c: *mut T,
        ldc: usize,
    ) -> Self {
        let kind = if herm { Kind::Her2k } else { Kind::Syr2k };
        let (side, diag) = (Side::Left, Diag::NonUnit);
        Call { kind, side, uplo, trans, diag, m: n, n, k, alpha, a, lda, b, ldb, beta, c, ldc }
    }

    /// TRSM (`solve`) or TRMM on B (m x n), in place.
    #[allow(clippy::too_many_arguments)]
    pub fn trxm(
        solve: bool,
        side: Side,
        uplo: Uplo,
        trans: Trans,
        diag: Diag,
        m: usize,
        n: usize,
        alpha: T,
        a: *const T,
        lda: usize,
        b: *mut T,
        ldb: usize,
    ) -> Self {
        let kind = if solve { Kind::Trsm } else { Kind::Trmm };
        let beta = T::zero();
        Call { kind, side, uplo, trans, diag, m, n, k: 0, alpha, a, lda, b, ldb, beta, c: b, ldc: ldb }
    }

    /// Order of A (SYMM, TRMM, TRSM).
    fn na(&self) -> usize {
        if self.side == Side::Left {
            self.m
        } else {
            self.n
        }
    }

    /// Whether A (and B) are read at all.
    pub fn reads(&self) -> bool {
        !self.alpha.is_zero() && (!self.kind.rank() || self.k > 0)
    }

    /// Whether the call has a second input (SYMM's and SYR2K's B).
    fn has_b(&self) -> bool {
        self.kind.symm() || self.kind.two()
    }

    /// The caller's pointers the call reads or writes (null where an operand is not touched):
    /// the planner sends a call with one in device memory to the GPU.
    pub fn operands(&self) -> [*const c_void; 3] {
        let reads = self.reads();
        let a = if reads { self.a as *const c_void } else { std::ptr::null() };
        let b = if reads && self.has_b() { self.b as *const c_void } else { std::ptr::null() };
        [a, b, self.c as *const c_void]
    }

    /// The output tile: square for the rank-k routines (diagonal tiles on C's diagonal), else
    /// [`tile_for`] of the output.
    fn tile(&self) -> (usize, usize) {
        if self.kind.rank() {
            let t = tile_for(self.n, self.n, self.k, std::mem::size_of::<T>()).0;
            (t, t)
        } else {
            tile_for(self.m, self.n, self.na(), std::mem::size_of::<T>())
        }
    }

    /// Stored (rows, columns) of A, of the second input, and of the output.
    fn shapes(&self) -> [(usize, usize); 3] {
        let (m, n, k, na) = (self.m, self.n, self.k, self.na());
        let x = if self.trans == Trans::No { (n, k) } else { (k, n) };
        match self.kind {
            Kind::Symm | Kind::Hemm => [(na, na), (m, n), (m, n)],
            Kind::Syrk | Kind::Herk => [x, (0, 0), (n, n)],
            Kind::Syr2k | Kind::Her2k => [x, x, (n, n)],
            Kind::Trmm | Kind::Trsm => [(na, na), (0, 0), (m, n)],
        }
    }

    /// Which of A, B, the output are in device (or managed) memory and used in place, and which
    /// get a resident copy.
    fn placement(&self) -> ([bool; 3], [bool; 3]) {
        let (reads, has_b) = (self.reads(), self.has_b());
        let dev = |p: *const T| is_device_pointer(p as *const c_void);
        let on_dev = [reads && dev(self.a), reads && has_b && dev(self.b), dev(self.c)];
        let copy = [reads && !on_dev[0], reads && has_b && !on_dev[1], !on_dev[2]];
        (on_dev, copy)
    }
}

// ---- The schedule: uploads, cuBLAS calls and finished tiles, in enqueue order ----

/// Which part of a downloaded tile is written to the caller's memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mask {
    Full,
    /// A diagonal tile of a lower (upper) triangle: rows >= (<=) the column only.
    Lower,
    Upper,
}

/// One device operation (on the compute stream).
#[derive(Clone, Copy, Debug)]
enum Op<T> {
    Gemm {
        ta: Trans,
        tb: Trans,
        m: usize,
        n: usize,
        k: usize,
        alpha: T,
        a: DMat,
        b: DMat,
        beta: T,
        c: DMat,
    },
    /// SYRK/HERK (`two == false`, `b` unused) or SYR2K/HER2K on an n x n diagonal block.
    Rank {
        two: bool,
        herm: bool,
        uplo: Uplo,
        trans: Trans,
        n: usize,
        k: usize,
        alpha: T,
        a: DMat,
        b: DMat,
        beta: T,
        c: DMat,
    },
    Symm {
        herm: bool,
        side: Side,
        uplo: Uplo,
        m: usize,
        n: usize,
        alpha: T,
        a: DMat,
        b: DMat,
        beta: T,
        c: DMat,
    },
    /// TRSM (`solve`) or TRMM, in place on `b` (m x n).
    Tri {
        solve: bool,
        side: Side,
        uplo: Uplo,
        trans: Trans,
        diag: Diag,
        m: usize,
        n: usize,
        alpha: T,
        a: DMat,
        b: DMat,
    },
    /// Zero the imaginary parts of an n x n block's diagonal (HERK/HER2K make it real).
    RealDiag {
        n: usize,
        c: DMat,
    },
    /// Zero a rows x cols block.
    Zero {
        rows: usize,
        cols: usize,
        c: DMat,
    },
}

#[derive(Clone, Copy, Debug)]
enum Step<T> {
    Up(Region),
    Op(Op<T>),
    /// Tile `t` of [`Sched::tiles`] is final.
    Done(usize),
}

/// One call's schedule: run by the GPU pipeline, and on the CPU by the unit tests.
struct Sched<T> {
    steps: Vec<Step<T>>,
    /// The output's tiles, in the order they become final.
    tiles: Vec<Tile>,
    /// Per tile (output on the host only): its region of the caller's output and its mask.
    down: Vec<(Region, Mask)>,
}

/// Where an operand lives on the device: element (r, c) of its stored matrix at
/// `ptr + (r + c*ld)*elem` (the resident copy, or the caller's device memory).
#[derive(Clone, Copy, Debug)]
struct Dev {
    ptr: u64,
    ld: usize,
}

impl Dev {
    fn at(&self, r: usize, c: usize, e: usize) -> DMat {
        DMat { ptr: self.ptr + ((r + c * self.ld) * e) as u64, ld: self.ld.max(1) as i64 }
    }
}

/// Device bytes of the resident copies of A, B and the output.
fn layout<T: Scalar>(call: &Call<T>, copy: [bool; 3]) -> [usize; 3] {
    let e = std::mem::size_of::<T>();
    let s = call.shapes();
    [0, 1, 2].map(|i| if copy[i] { align(s[i].0 * s[i].1 * e) } else { 0 })
}

struct Builder<'a, T> {
    call: &'a Call<T>,
    e: usize,
    /// A, B, the output on the device.
    dev: [Dev; 3],
    copy: [bool; 3],
    s: Sched<T>,
}

impl<T: Scalar> Builder<'_, T> {
    /// Upload rows r0.. and columns c0.. of operand `w` (0 A, 1 B, 2 the output) if it has a
    /// resident copy.
    fn up(&mut self, w: usize, r0: usize, c0: usize, rows: usize, cols: usize) {
        if !self.copy[w] || rows == 0 || cols == 0 {
            return;
        }
        let c = self.call;
        let (base, ld) = match w {
            0 => (c.a as *const u8, c.lda),
            1 => (c.b as *const u8, c.ldb),
            _ => (c.c as *const u8, c.ldc),
        };
        let d = self.dev[w];
        let r = region(base, ld, r0, c0, rows, cols, d.at(r0, c0, self.e).ptr, d.ld, self.e);
        self.s.steps.push(Step::Up(r));
    }
    fn op(&mut self, op: Op<T>) {
        self.s.steps.push(Step::Op(op));
    }
    fn at(&self, w: usize, r: usize, c: usize) -> DMat {
        self.dev[w].at(r, c, self.e)
    }
    /// C := beta*C on a tile (a GEMM with k = 0: neither A nor B is read).
    fn scale(&mut self, m: usize, n: usize, c: DMat) {
        let (one, zero) = (DMat { ptr: c.ptr, ld: m.max(1) as i64 }, DMat { ptr: c.ptr, ld: 1 });
        let (alpha, beta) = (self.call.alpha, self.call.beta);
        self.op(Op::Gemm { ta: Trans::No, tb: Trans::No, m, n, k: 0, alpha, a: one, b: zero, beta, c });
    }
    /// Tile `t` of the output is final.
    fn done(&mut self, t: Tile, mask: Mask) {
        let idx = self.s.tiles.len();
        self.s.tiles.push(t);
        self.s.steps.push(Step::Done(idx));
        if self.copy[2] {
            let (c, d) = (self.call, self.dev[2]);
            let r = region(c.c as *const u8, c.ldc, t.i0, t.j0, t.m, t.n, d.at(t.i0, t.j0, self.e).ptr, d.ld, self.e);
            self.s.down.push((r, mask));
        }
    }
}

/// (start, length) of block `i` of a dimension `len` cut in blocks of `t`.
fn blk(i: usize, t: usize, len: usize) -> (usize, usize) {
    (i * t, t.min(len - i * t))
}

/// The schedule of `call` with output tiles `tile`, the resident copies at device address
/// `base` (laid out as [`layout`] says).
fn schedule<T: Scalar>(call: &Call<T>, copy: [bool; 3], tile: (usize, usize), base: u64) -> Sched<T> {
    let e = std::mem::size_of::<T>();
    let shapes = call.shapes();
    let bytes = layout(call, copy);
    let mut off = base;
    let mut dev = [Dev { ptr: 0, ld: 1 }; 3];
    let given = [(call.a as u64, call.lda), (call.b as u64, call.ldb), (call.c as u64, call.ldc)];
    for w in 0..3 {
        dev[w] =
            if copy[w] { Dev { ptr: off, ld: shapes[w].0.max(1) } } else { Dev { ptr: given[w].0, ld: given[w].1 } };
        off += bytes[w] as u64;
    }
    if !call.has_b() && !call.kind.tri() {
        // SYRK: op(A) plays both parts.
        dev[1] = dev[0];
    }
    let mut b = Builder { call, e, dev, copy, s: Sched { steps: Vec::new(), tiles: Vec::new(), down: Vec::new() } };
    if call.kind.rank() {
        rank_sched(&mut b, tile.0);
    } else if call.kind.symm() {
        symm_sched(&mut b, tile);
    } else {
        tri_sched(&mut b, tile);
    }
    b.s
}

/// SYRK/HERK, SYR2K/HER2K: tiles of C's triangle (see the module notes).
fn rank_sched<T: Scalar>(b: &mut Builder<T>, t: usize) {
    let c = *b.call;
    let (n, k, e) = (c.n, c.k, b.e);
    let (reads, two, herm) = (c.reads(), c.kind.two(), c.kind.herm());
    let lower = c.uplo == Uplo::Lower;
    // op(X)'s rows p.. as stored, and the GEMM transposes of a tile X_i * Y_j^T (^H).
    let no = c.trans == Trans::No;
    let xat = |d: Dev, p: usize| if no { d.at(p, 0, e) } else { d.at(0, p, e) };
    let (opl, opr) =
        if no { (Trans::No, if herm { Trans::ConjTrans } else { Trans::Trans }) } else { (c.trans, Trans::No) };
    let alpha2 = if herm { c.alpha.conj() } else { c.alpha };
    let (da, db) = (b.dev[0], b.dev[1]);
    let nb = n.div_ceil(t);
    for outer in 0..nb {
        let (p0, pl) = blk(outer, t, n);
        if reads {
            let (r0, c0, rows, cols) = if no { (p0, 0, pl, k) } else { (0, p0, k, pl) };
            b.up(0, r0, c0, rows, cols);
            if two {
                b.up(1, r0, c0, rows, cols);
            }
        }
        for inner in 0..=outer {
            let (i, j) = if lower { (outer, inner) } else { (inner, outer) };
            let ((i0, mi), (j0, nj)) = (blk(i, t, n), blk(j, t, n));
            if !c.beta.is_zero() {
                b.up(2, i0, j0, mi, nj);
            }
            let ct = b.at(2, i0, j0);
            let tile = Tile { i0, j0, m: mi, n: nj };
            if i != j {
                if reads {
                    let (alpha, beta) = (c.alpha, c.beta);
                    b.op(Op::Gemm {
                        ta: opl,
                        tb: opr,
                        m: mi,
                        n: nj,
                        k,
                        alpha,
                        a: xat(da, i0),
                        b: xat(db, j0),
                        beta,
                        c: ct,
                    });
                    if two {
                        let (a, bb) = (xat(db, i0), xat(da, j0));
                        b.op(Op::Gemm {
                            ta: opl,
                            tb: opr,
                            m: mi,
                            n: nj,
                            k,
                            alpha: alpha2,
                            a,
                            b: bb,
                            beta: T::one(),
                            c: ct,
                        });
                    }
                } else {
                    b.scale(mi, nj, ct);
                }
                b.done(tile, Mask::Full);
                continue;
            }
            if reads {
                if c.beta.is_zero() && b.copy[2] {
                    // The resident tile holds whatever the arena held: zero it, so that a
                    // cuBLAS kernel that multiplies beta into C never meets a NaN there.
                    b.op(Op::Zero { rows: mi, cols: mi, c: ct });
                }
                let (a, bb) = (xat(da, i0), xat(db, i0));
                let (uplo, trans) = (c.uplo, c.trans);
                let (alpha, beta) = (c.alpha, c.beta);
                b.op(Op::Rank { two, herm, uplo, trans, n: mi, k, alpha, a, b: bb, beta, c: ct });
            } else if b.copy[2] {
                // The whole resident tile: only its triangle goes back (masked download).
                b.scale(mi, mi, ct);
            } else {
                // C in device memory, computed in place: the tile's other triangle is the
                // caller's and keeps its values, so not a GEMM over the square but the routine
                // itself with k = 0 (C := beta*C on the triangle; nothing else read: C's tile
                // stands in for A and B, its ld valid for them).
                let (uplo, beta) = (c.uplo, c.beta);
                let (alpha, trans) = (T::zero(), Trans::No);
                b.op(Op::Rank { two, herm, uplo, trans, n: mi, k: 0, alpha, a: ct, b: ct, beta, c: ct });
            }
            if herm {
                b.op(Op::RealDiag { n: mi, c: ct });
            }
            b.done(tile, if lower { Mask::Lower } else { Mask::Upper });
        }
    }
}

/// SYMM/HEMM: tiles of C, each A^'s block row/column times B (see the module notes).
fn symm_sched<T: Scalar>(b: &mut Builder<T>, (tm, tn): (usize, usize)) {
    let c = *b.call;
    let (m, n, e) = (c.m, c.n, b.e);
    let left = c.side == Side::Left;
    let na = c.na();
    let lower = c.uplo == Uplo::Lower;
    let herm = c.kind.herm();
    let tt = if herm { Trans::ConjTrans } else { Trans::Trans };
    let reads = c.reads();
    let da = b.dev[0];
    // A^'s block starting at (r0, c0), entirely below (`below`) or above the diagonal: the
    // stored block, or the mirror of the stored one transposed.
    let ahat = |below: bool, r0: usize, c0: usize| {
        if below == lower {
            (da.at(r0, c0, e), Trans::No)
        } else {
            (da.at(c0, r0, e), tt)
        }
    };
    // A's panel p: lower, the column panel from the diagonal down; upper, the row panel from
    // the diagonal right. HEMM: the copy's diagonal is made real (reference HEMM reads only the
    // real parts; cuBLAS says it assumes them, which a caller's data need not satisfy).
    let panel = |b: &mut Builder<T>, p0: usize, pl: usize| {
        if lower {
            b.up(0, p0, p0, na - p0, pl)
        } else {
            b.up(0, p0, p0, pl, na - p0)
        }
        if herm && b.copy[0] {
            b.op(Op::RealDiag { n: pl, c: da.at(p0, p0, e) });
        }
    };
    let (mb, nb) = (m.div_ceil(tm), n.div_ceil(tn));
    for j in 0..nb {
        let (j0, nj) = blk(j, tn, n);
        if left && reads {
            b.up(1, 0, j0, m, nj);
        }
        for i in 0..mb {
            let (i0, mi) = blk(i, tm, m);
            if reads {
                if left && j == 0 {
                    panel(b, i0, mi);
                }
                if !left && i == 0 {
                    panel(b, j0, nj);
                }
                if !left && j == 0 {
                    b.up(1, i0, 0, mi, n);
                }
            }
            if !c.beta.is_zero() {
                b.up(2, i0, j0, mi, nj);
            }
            let ct = b.at(2, i0, j0);
            let tile = Tile { i0, j0, m: mi, n: nj };
            if !reads {
                b.scale(mi, nj, ct);
                b.done(tile, Mask::Full);
                continue;
            }
            let (alpha, one) = (c.alpha, T::one());
            // The diagonal block's range, and the parts of A^'s block row/column before and
            // after it.
            let (p0, p1) = if left { (i0, i0 + mi) } else { (j0, j0 + nj) };
            let mut beta = c.beta;
            if p0 > 0 {
                if left {
                    let (x, op) = ahat(true, i0, 0);
                    b.op(Op::Gemm {
                        ta: op,
                        tb: Trans::No,
                        m: mi,
                        n: nj,
                        k: p0,
                        alpha,
                        a: x,
                        b: b.at(1, 0, j0),
                        beta,
                        c: ct,
                    });
                } else {
                    let (x, op) = ahat(false, 0, j0);
                    b.op(Op::Gemm {
                        ta: Trans::No,
                        tb: op,
                        m: mi,
                        n: nj,
                        k: p0,
                        alpha,
                        a: b.at(1, i0, 0),
                        b: x,
                        beta,
                        c: ct,
                    });
                }
                beta = one;
            } else if c.beta.is_zero() && b.copy[2] {
                // SYMM first on a resident tile that was not uploaded: see rank_sched.
                b.op(Op::Zero { rows: mi, cols: nj, c: ct });
            }
            let (side, uplo) = (c.side, c.uplo);
            let (a, bb) = (da.at(p0, p0, e), b.at(1, i0, j0));
            b.op(Op::Symm { herm, side, uplo, m: mi, n: nj, alpha, a, b: bb, beta, c: ct });
            if p1 < na {
                let k = na - p1;
                if left {
                    let (x, op) = ahat(false, i0, p1);
                    b.op(Op::Gemm {
                        ta: op,
                        tb: Trans::No,
                        m: mi,
                        n: nj,
                        k,
                        alpha,
                        a: x,
                        b: b.at(1, p1, j0),
                        beta: one,
                        c: ct,
                    });
                } else {
                    let (x, op) = ahat(true, p1, j0);
                    b.op(Op::Gemm {
                        ta: Trans::No,
                        tb: op,
                        m: mi,
                        n: nj,
                        k,
                        alpha,
                        a: b.at(1, i0, p1),
                        b: x,
                        beta: one,
                        c: ct,
                    });
                }
            }
            b.done(tile, Mask::Full);
        }
    }
}

/// Whether TRMM/TRSM process the tiles along the triangle from the first (`true`) or the last.
/// TRSM goes in solve order (op(A) lower on the left: top down); TRMM the other way round, so
/// that the tiles of B it still reads are never overwritten first.
fn forward<T>(c: &Call<T>) -> bool {
    let op_lower = (c.uplo == Uplo::Lower) == (c.trans == Trans::No);
    let solve_fwd = if c.side == Side::Left { op_lower } else { !op_lower };
    solve_fwd == (c.kind == Kind::Trsm)
}

/// The output tile of `call` adjusted to the copy pieces of `piece` bytes. TRMM/TRSM write each
/// column (left) or row (right) of B back in processing order, which is what [`finish_tri`]
/// relies on: a piece holds whole columns of a tile (so a column of B is written tile by tile),
/// and where the tiles along a row go right to left (side right, processed backward) a tile is
/// one piece (its columns would otherwise go back left to right).
fn fit_tile<T: Scalar>(call: &Call<T>, (tm, tn): (usize, usize), piece: usize) -> (usize, usize) {
    if !call.kind.tri() {
        return (tm, tn);
    }
    let e = std::mem::size_of::<T>();
    let tm = tm.min((piece / e).max(1));
    let tn = if call.side == Side::Right && !forward(call) { tn.min((piece / (tm * e)).max(1)) } else { tn };
    (tm, tn)
}

/// TRMM/TRSM: panels of B's independent columns (left) or rows (right), tile by tile along the
/// triangle in processing order, in place on B (see the module notes).
fn tri_sched<T: Scalar>(b: &mut Builder<T>, (tm, tn): (usize, usize)) {
    let c = *b.call;
    let (m, n, e) = (c.m, c.n, b.e);
    let left = c.side == Side::Left;
    let na = c.na();
    let solve = c.kind == Kind::Trsm;
    let op_lower = (c.uplo == Uplo::Lower) == (c.trans == Trans::No);
    // Real types: 'C' means 'T' (as in reference BLAS).
    let tr = if !T::IS_COMPLEX && c.trans == Trans::ConjTrans { Trans::Trans } else { c.trans };
    // The off-diagonal part of op(A)'s block row (left) or column (right) comes before the
    // diagonal block when op(A) is lower (left) / upper (right).
    let before = left == op_lower;
    let da = b.dev[0];
    // op(A)'s block (r0.., c0..) off the diagonal: stored, or the stored mirror transposed.
    let opa = |r0: usize, c0: usize| {
        if c.trans == Trans::No {
            (da.at(r0, c0, e), Trans::No)
        } else {
            (da.at(c0, r0, e), tr)
        }
    };
    let (tt, lt, lines) = if left { (tm, tn, n) } else { (tn, tm, m) };
    let pb = na.div_ceil(tt);
    let order: Vec<usize> = if forward(&c) { (0..pb).collect() } else { (0..pb).rev().collect() };
    let reads = c.reads();
    let (alpha, one) = (c.alpha, T::one());
    for q in 0..lines.div_ceil(lt) {
        let (q0, ql) = blk(q, lt, lines);
        if reads {
            if left {
                b.up(2, 0, q0, m, ql);
            } else {
                b.up(2, q0, 0, ql, n);
            }
        }
        for &p in &order {
            let (p0, pl) = blk(p, tt, na);
            let p1 = p0 + pl;
            // The part of op(A)'s block row/column that is not zero, and its off-diagonal part.
            let (s0, sl) = if before { (0, p1) } else { (p0, na - p0) };
            let (o0, ol) = if before { (0, p0) } else { (p1, na - p1) };
            if reads && q == 0 {
                // Stored rows P (cols S) or rows S (cols P).
                if left == (c.trans == Trans::No) {
                    b.up(0, p0, s0, pl, sl);
                } else {
                    b.up(0, s0, p0, sl, pl);
                }
            }
            let (i0, mi, j0, nj) = if left { (p0, pl, q0, ql) } else { (q0, ql, p0, pl) };
            let bt = b.at(2, i0, j0);
            let tile = Tile { i0, j0, m: mi, n: nj };
            if !reads {
                b.op(Op::Zero { rows: mi, cols: nj, c: bt });
                b.done(tile, Mask::Full);
                continue;
            }
            let (side, uplo, diag) = (c.side, c.uplo, c.diag);
            let adiag = da.at(p0, p0, e);
            // The GEMM with the off-diagonal part: (alpha_g, beta_g).
            let update = |b: &mut Builder<T>, ag: T, bg: T| {
                if ol == 0 {
                    return;
                }
                if left {
                    let (x, op) = opa(p0, o0);
                    let bo = b.at(2, o0, q0);
                    b.op(Op::Gemm {
                        ta: op,
                        tb: Trans::No,
                        m: mi,
                        n: nj,
                        k: ol,
                        alpha: ag,
                        a: x,
                        b: bo,
                        beta: bg,
                        c: bt,
                    });
                } else {
                    let (x, op) = opa(o0, p0);
                    let bo = b.at(2, q0, o0);
                    b.op(Op::Gemm {
                        ta: Trans::No,
                        tb: op,
                        m: mi,
                        n: nj,
                        k: ol,
                        alpha: ag,
                        a: bo,
                        b: x,
                        beta: bg,
                        c: bt,
                    });
                }
            };
            if solve {
                // B_p := alpha*B_p - op(A)_po X_o, then X_p := op(A)_pp^-1 B_p.
                update(b, -one, alpha);
                let a1 = if ol > 0 { one } else { alpha };
                let (m, n) = (mi, nj);
                b.op(Op::Tri { solve, side, uplo, trans: tr, diag, m, n, alpha: a1, a: adiag, b: bt });
            } else {
                // B_p := alpha*op(A)_pp B_p (in place), then += alpha*op(A)_po B_o (B_o not yet
                // processed, so still the caller's values).
                let (m, n) = (mi, nj);
                b.op(Op::Tri { solve, side, uplo, trans: tr, diag, m, n, alpha, a: adiag, b: bt });
                update(b, alpha, one);
            }
            b.done(tile, Mask::Full);
        }
    }
}

/// Copy `h` columns of `w` bytes (rows `row0..` of the tile's columns `col0..`) from `src`
/// (pitch `sp`) to `dst` (pitch `dp`), keeping only the part `mask` allows.
///
/// # Safety
/// Both regions valid.
#[allow(clippy::too_many_arguments)]
unsafe fn copy_masked(
    src: *const u8,
    sp: usize,
    dst: *mut u8,
    dp: usize,
    (w, h): (usize, usize),
    (row0, col0): (usize, usize),
    mask: Mask,
    e: usize,
) {
    let row1 = row0 + w / e;
    for j in 0..h {
        let col = col0 + j;
        let (lo, hi) = match mask {
            Mask::Full => (row0, row1),
            Mask::Lower => (col.max(row0), row1),
            Mask::Upper => (row0, (col + 1).min(row1)),
        };
        if lo < hi {
            let off = (lo - row0) * e;
            std::ptr::copy_nonoverlapping(src.add(j * sp + off), dst.add(j * dp + off), (hi - lo) * e);
        }
    }
}

/// Enqueue `op` on `ex`'s stream.
unsafe fn launch<T: Scalar>(ex: &Exec, op: &Op<T>) -> Result<()> {
    let e = std::mem::size_of::<T>();
    match *op {
        Op::Gemm { ta, tb, m, n, k, alpha, a, b, beta, c } => {
            let (m, n, k) = (m as i64, n as i64, k as i64);
            vc::vendor_gemm::<T>(ex, ta, tb, m, n, k, alpha, a, b, beta, c)
        }
        Op::Rank { two, herm, uplo, trans, n, k, alpha, a, b, beta, c } => {
            vc::vendor_rank::<T>(ex, two, herm, uplo, trans, n, k, alpha, a, b, beta, c)
        }
        Op::Symm { herm, side, uplo, m, n, alpha, a, b, beta, c } => {
            vc::vendor_symm::<T>(ex, herm, side, uplo, m, n, alpha, a, b, beta, c)
        }
        Op::Tri { solve, side, uplo, trans, diag, m, n, alpha, a, b } => {
            vc::vendor_tri::<T>(ex, solve, side, uplo, trans, diag, m, n, alpha, a, b)
        }
        Op::RealDiag { n, c } => {
            // The imaginary halves of the diagonal: one 32-bit word (C32) or two (C64) every
            // ld+1 elements.
            let half = e / 2;
            let pitch = (c.ld as usize + 1) * e;
            check(sys::cuMemsetD2D32Async(c.ptr + half as u64, pitch, 0, half / 4, n, ex.stream), "cuMemsetD2D32Async")
        }
        Op::Zero { rows, cols, c } => {
            check(sys::cuMemsetD2D8Async(c.ptr, c.ld as usize * e, 0, rows * e, cols, ex.stream), "cuMemsetD2D8Async")
        }
    }
}

// ---- Running a call ----

/// Compute `call` on the GPU of `rt` from host (or device) memory and wait for the result. On
/// `Err`, [`Failure::remaining`] lists the parts of the output not written yet (all of it when
/// [`Failure::untouched_c`]); [`finish_rank`] / [`finish_tri`] compute them on the CPU.
///
/// # Safety
/// Pointers and leading dimensions as in reference BLAS (validated by the caller); the output
/// does not overlap the inputs.
pub unsafe fn run<T: Scalar>(rt: &Runtime, call: &Call<T>) -> std::result::Result<OffloadStats, Failure> {
    let start = Instant::now();
    mark("start", call.m, call.n);
    let (m, n) = (call.m, call.n);
    let tile = call.tile();
    let mut stats = OffloadStats { tile, blocks: 1, ..Default::default() };
    if m == 0 || n == 0 {
        return Ok(stats);
    }
    let untouched = |e| Failure::untouched(e, m, n);
    rt.bind().map_err(untouched)?;
    let (on_dev, copy) = call.placement();
    stats.in_place = on_dev;
    let mut pipe = take_pipe(rt).map_err(untouched)?;
    let r = exec(rt, &mut pipe, &mut stats, call, copy);
    // Nothing may still be in flight on the chunks or the arena when the pipe goes back.
    let synced = pipe.sync();
    give_pipe(rt, pipe);
    stats.secs = start.elapsed().as_secs_f64();
    dump_timeline(format_args!("level3 m={m} n={n} tile={tile:?} {:.1}us", stats.secs * 1e6));
    match (r, synced) {
        (Ok(()), Ok(())) => Ok(stats),
        (Err(f), _) => Err(f),
        (Ok(()), Err(e)) => Err(untouched(e)),
    }
}

unsafe fn exec<T: Scalar>(
    rt: &Runtime,
    pipe: &mut Pipe,
    stats: &mut OffloadStats,
    call: &Call<T>,
    copy: [bool; 3],
) -> std::result::Result<(), Failure> {
    let (m, n, e) = (call.m, call.n, std::mem::size_of::<T>());
    let untouched = |err| Failure::untouched(err, m, n);
    // cuBLAS's 32-bit API: every size and leading dimension it will see.
    let shapes = call.shapes();
    let lds = [call.lda, call.ldb, call.ldc];
    let big = (0..3).any(|w| (if copy[w] { shapes[w].0 } else { lds[w] }) > i32::MAX as usize)
        || call.k > i32::MAX as usize
        || m.max(n) > i32::MAX as usize;
    if big {
        return Err(untouched(GpuError::Unsupported("offload: a size or leading dimension past 2^31")));
    }

    // ---- Device memory, the handle and the cuBLAS symbols, before any copy ----
    let (mut free, mut total) = (0usize, 0usize);
    check(sys::cuMemGetInfo_v2(&mut free, &mut total), "cuMemGetInfo").map_err(untouched)?;
    let have = pipe.arena.as_ref().map_or(0, |a| a.bytes);
    let budget = match knobs().device_budget {
        Some(b) => b,
        None => (((free + have) as f64 * 0.9) as usize).saturating_sub(64 << 20),
    };
    let need: usize = layout(call, copy).iter().sum();
    if need > budget {
        return Err(untouched(GpuError::Other(format!(
            "offload: the {}{} operands need {} MB of device memory, {} MB available",
            T::PREFIX,
            call.kind.name(),
            need >> 20,
            budget >> 20
        ))));
    }
    let base = pipe.arena(need.max(ALIGN)).map_err(untouched)?;
    let ex = Exec { rt, stream: pipe.comp };
    let nil = DMat { ptr: base, ld: 1 };
    vc::vendor_gemm::<T>(&ex, Trans::No, Trans::No, 0, 0, 0, call.alpha, nil, nil, call.beta, nil)
        .map_err(untouched)?;
    let s = vc::level3_sym::<T>(call.kind.vendor());
    // alpha == 0 needs the routine itself only on an in-place output's diagonal tiles.
    let own = call.reads() || (call.kind.rank() && !copy[2]);
    if own && s.addr().is_none() {
        return Err(untouched(GpuError::Unavailable(format!("no real cuBLAS {}", s.name))));
    }

    // Copy pieces from the traffic (A counted whole), then the tile that fits them.
    let traffic: usize = (0..3).filter(|&w| copy[w]).map(|w| shapes[w].0 * shapes[w].1 * e).sum::<usize>()
        + if copy[2] { m * n * e } else { 0 };
    let piece = piece_for(traffic);
    stats.tile = fit_tile(call, stats.tile, piece);
    let sched = schedule(call, copy, stats.tile, base);
    let nt = sched.tiles.len();
    pipe.done_events(nt).map_err(untouched)?;
    stats.tiles = nt;
    let host_out = copy[2];

    let abort = AtomicBool::new(false);
    let (tx, rx) = mpsc::channel::<usize>();
    let (h2d, d2h, ready) = (pipe.h2d, pipe.d2h, pipe.ready);
    let done_ev: Vec<Shared<sys::CUevent>> = pipe.done[..nt].iter().map(|&e| Shared(e)).collect();
    let (up_chunks, down_chunks) = (&pipe.up, &pipe.down);
    let fail_after = knobs().fail_after;

    let (r, ubytes, dr, dd, dbytes) = std::thread::scope(|s| {
        // ---- The download thread (output on the host): tiles back as they become final ----
        let downloader = host_out.then(|| {
            let (chunks, stream, down) = (Shared(down_chunks), Shared(d2h), Shared(&sched.down));
            let (done_ev, abort) = (&done_ev, &abort);
            s.spawn(move || -> (Result<()>, Vec<usize>, u64) {
                let (chunks, stream, down) = (chunks, stream, down);
                let mut d = Downloader::new(chunks.0, stream.0, nt, 0, fail_after, Copier::Pool);
                let r = download_loop(
                    rt,
                    &mut d,
                    &rx,
                    abort,
                    |d| down_next(d, down.0, e, piece),
                    |d, t: usize| {
                        // The tile's pieces leave once its chain of cuBLAS calls is done.
                        check(sys::cuStreamWaitEvent(d.stream, done_ev[t].0, 0), "cuStreamWaitEvent")?;
                        down_tile(d, down.0, t, e, piece)
                    },
                );
                (r, d.done, d.bytes)
            })
        });

        // ---- Uploads and cuBLAS calls in schedule order, on the calling thread ----
        let mut up = Uploader::new(up_chunks, h2d, Copier::Pool);
        let r = (|| -> Result<()> {
            // Uploads enqueued since the compute stream last waited for them.
            let mut pending = false;
            for step in &sched.steps {
                if abort.load(Ordering::Relaxed) {
                    return Ok(());
                }
                match step {
                    Step::Up(r) => {
                        up.upload(*r, e, piece)?;
                        pending = true;
                    }
                    Step::Op(op) => {
                        if pending {
                            check(sys::cuEventRecord(ready, h2d), "cuEventRecord")?;
                            check(sys::cuStreamWaitEvent(ex.stream, ready, 0), "cuStreamWaitEvent")?;
                            pending = false;
                        }
                        launch::<T>(&ex, op)?;
                    }
                    Step::Done(t) => {
                        check(sys::cuEventRecord(done_ev[*t].0, ex.stream), "cuEventRecord")?;
                        if host_out {
                            // A send fails only when the downloader stopped on an error, which
                            // the abort flag reports.
                            let _ = tx.send(*t);
                        }
                    }
                }
            }
            Ok(())
        })();
        if r.is_err() {
            abort.store(true, Ordering::Relaxed);
        }
        drop(tx);
        let (dr, dd, dbytes) = match downloader {
            Some(h) => h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)),
            None => (Ok(()), vec![0; nt], 0),
        };
        (r, up.bytes, dr, dd, dbytes)
    });
    stats.h2d_bytes = ubytes;
    stats.d2h_bytes = dbytes;
    // A failed copy or cuBLAS call surfaces at this wait at the latest.
    let synced = pipe.sync();
    if let Err(error) = r.and(dr).and(synced) {
        return Err(Failure { error, tiles: sched.tiles.clone(), done: dd, piece_bytes: piece, elem: e });
    }
    Ok(())
}

// ---- Downloads: finished tiles back to the caller, through their masks ----

/// A piece of a finished tile staged in a chunk of the download ring: tile `tile`'s piece
/// `piece`, `w` bytes x `h` columns at `src` (pitch `w`), for the caller's memory at `host`
/// (pitch `hpitch`).
struct Staged {
    chunk: usize,
    tile: usize,
    piece: usize,
    src: *const u8,
    host: *mut u8,
    hpitch: usize,
    w: usize,
    h: usize,
}

/// The ring of chunks the download thread stages pieces in: the pipeline's [`Downloader`] on
/// the GPU, plain memory in the unit tests. [`down_tile`] and [`down_next`] drive both, so every
/// piece is written back through its tile's mask whichever way it leaves the ring (the next
/// piece in turn, or the oldest one pushed out because the ring is full), and the tests run the
/// very order and masks the GPU runs.
trait Ring {
    /// Whether every chunk holds a piece not yet written back.
    fn full(&self) -> bool;
    /// Start copying piece `p` of tile `t` (bytes `x0..`, columns `c0..` of `r`: `w` x `h`) into
    /// the next free chunk.
    unsafe fn stage(&mut self, t: usize, p: usize, r: &Region, piece: (usize, usize, usize, usize)) -> Result<()>;
    /// The oldest staged piece, its copy into the chunk complete (`None`: nothing staged).
    /// Fails where the `fail_after` knob says.
    unsafe fn oldest(&mut self) -> Result<Option<Staged>>;
    /// The oldest piece was written back: its chunk is free, its tile one piece further.
    fn release(&mut self, s: &Staged);
    fn copier(&self) -> Copier;
}

impl Ring for Downloader<'_> {
    fn full(&self) -> bool {
        self.pending.len() == self.chunks.len()
    }
    unsafe fn stage(
        &mut self,
        t: usize,
        p: usize,
        r: &Region,
        (x0, c0, w, h): (usize, usize, usize, usize),
    ) -> Result<()> {
        if self.done.len() <= t {
            self.done.resize(t + 1, 0);
        }
        let ci = (self.head + self.pending.len()) % self.chunks.len();
        let ch = &self.chunks[ci];
        copy_async(false, ch.host, r.dev + (c0 * r.dpitch + x0) as u64, r.dpitch, w, h, self.stream)?;
        check(sys::cuEventRecord(ch.ev, self.stream), "cuEventRecord")?;
        self.pending.push_back((ci, t, p, r.host.add(c0 * r.hpitch + x0), r.hpitch, w, h));
        Ok(())
    }
    unsafe fn oldest(&mut self) -> Result<Option<Staged>> {
        let Some((chunk, tile, piece, host, hpitch, w, h)) = self.pending.pop_front() else { return Ok(None) };
        if self.fail_after == Some(self.written) {
            return Err(GpuError::Other("injected failure (offload knob fail_after)".into()));
        }
        self.written += 1;
        let ch = &self.chunks[chunk];
        check(sys::cuEventSynchronize(ch.ev), "cuEventSynchronize")?;
        Ok(Some(Staged { chunk, tile, piece, src: ch.host, host, hpitch, w, h }))
    }
    fn release(&mut self, s: &Staged) {
        self.head = (s.chunk + 1) % self.chunks.len();
        debug_assert_eq!(self.done[s.tile], s.piece);
        self.done[s.tile] = s.piece + 1;
        self.bytes += (s.w * s.h) as u64;
    }
    fn copier(&self) -> Copier {
        self.copier
    }
}

/// Stage the pieces of finished tile `t` (`down[t]`: its region of the caller's output and its
/// mask) in the ring; where the ring is full, the oldest staged piece is written back first,
/// through [`down_next`] and so through its own tile's mask. (The GEMM pipeline's
/// [`Downloader::tile`] knows no masks: a diagonal tile's piece pushed out there would write the
/// other triangle of C.)
unsafe fn down_tile<R: Ring>(d: &mut R, down: &[(Region, Mask)], t: usize, e: usize, piece: usize) -> Result<()> {
    let r = down[t].0;
    let g = Pieces::new(r.width, r.height, e, piece);
    for p in 0..g.count() {
        if d.full() {
            down_next(d, down, e, piece)?;
        }
        d.stage(t, p, &r, g.piece(p))?;
    }
    Ok(())
}

/// Write the oldest staged piece back to the caller's memory, keeping only what its tile's mask
/// allows (diagonal tiles of a triangle write their triangle only). False: nothing was staged.
unsafe fn down_next<R: Ring>(d: &mut R, down: &[(Region, Mask)], e: usize, piece: usize) -> Result<bool> {
    let Some(s) = d.oldest()? else { return Ok(false) };
    let (r, mask) = down[s.tile];
    if mask == Mask::Full {
        copy2d(d.copier(), s.src, s.w, s.host, s.hpitch, s.w, s.h);
    } else {
        // The piece's rows and columns within the tile: a diagonal tile starts on the diagonal
        // (i0 == j0), so tile-relative row >= column is the triangle's row >= column.
        let (x0, c0, _, _) = Pieces::new(r.width, r.height, e, piece).piece(s.piece);
        copy_masked(s.src, s.w, s.host, s.hpitch, (s.w, s.h), (x0 / e, c0), mask, e);
    }
    d.release(&s);
    Ok(true)
}

// ---- The CPU engine: whole calls, and the rest after a failure ----

/// SYMM/HEMM, SYRK/HERK or SYR2K/HER2K by the CPU engine with the output at `c` (ld `ldc`).
unsafe fn cpu_rank<T: Scalar>(call: &Call<T>, c: *mut T, ldc: usize) {
    let (m, n, k) = (call.m, call.n, call.k);
    let herm = call.kind.herm();
    let cv = MatMut::col_major(c, m, n, ldc);
    match call.kind {
        Kind::Symm | Kind::Hemm => {
            let na = call.na();
            let av = MatRef::col_major(call.a, na, na, call.lda);
            let bv = MatRef::col_major(call.b, m, n, call.ldb);
            eng::sym::symm(call.side, call.uplo, herm, call.alpha, av, bv, call.beta, cv)
        }
        Kind::Syrk | Kind::Herk => {
            let (x, conj) = MatRef::op(call.a, call.trans, n, k, call.lda);
            eng::sym::syrk(call.uplo, herm, call.alpha, x, conj, call.beta, cv)
        }
        Kind::Syr2k | Kind::Her2k => {
            let (x, conj) = MatRef::op(call.a, call.trans, n, k, call.lda);
            let (y, _) = MatRef::op(call.b, call.trans, n, k, call.ldb);
            eng::sym::syr2k(call.uplo, herm, call.alpha, x, y, conj, call.beta, cv)
        }
        Kind::Trmm | Kind::Trsm => unreachable!("TRMM/TRSM go through finish_tri"),
    }
}

/// After a failed SYMM/HEMM, SYRK/HERK or SYR2K/HER2K offload that wrote part of C: compute the
/// `left` parts ([`Failure::remaining`]) on the CPU. C's elements are independent (each depends
/// on A, B and its own old value only), so the CPU engine computes the call on a copy of C and
/// only the parts left (within the referenced triangle) are copied into the caller's C.
///
/// # Safety
/// `call` as given to [`run`].
pub unsafe fn finish_rank<T: Scalar>(call: &Call<T>, left: &[Tile]) {
    let (m, n) = (call.m, call.n);
    let mut w: Vec<T> = Vec::with_capacity(m * n);
    for j in 0..n {
        w.extend_from_slice(std::slice::from_raw_parts(call.c.add(j * call.ldc), m));
    }
    cpu_rank(call, w.as_mut_ptr(), m);
    let tri = call.kind.rank();
    for t in left {
        for j in t.j0..t.j0 + t.n {
            let (mut lo, mut hi) = (t.i0, t.i0 + t.m);
            if tri {
                if call.uplo == Uplo::Lower {
                    lo = lo.max(j);
                } else {
                    hi = hi.min(j + 1);
                }
            }
            if lo < hi {
                std::ptr::copy_nonoverlapping(w.as_ptr().add(lo + j * m), call.c.add(lo + j * call.ldc), hi - lo);
            }
        }
    }
}

/// After a failed TRMM/TRSM offload that wrote part of B: compute the `left` parts on the CPU.
/// Each column (left) or row (right) of B is an independent problem whose tiles went back in
/// processing order, so it holds a final prefix (in that order) and the caller's values beyond
/// it: lines with the same prefix are resumed together, TRSM with the GEMM update by the solved
/// part then a TRSM on the rest, TRMM with a TRMM on the rest (the part it reads is untouched).
///
/// # Safety
/// `call` as given to [`run`].
pub unsafe fn finish_tri<T: TriScalar>(call: &Call<T>, left: &[Tile]) {
    let is_left = call.side == Side::Left;
    let (lines, len) = if is_left { (call.n, call.m) } else { (call.m, call.n) };
    // Per line, the interval [lo, hi) along the triangle still to compute; lines with equal
    // intervals grouped: (first line, count, lo, hi).
    let mut groups: Vec<(usize, usize, usize, usize)> = Vec::new();
    for l in 0..lines {
        let (mut lo, mut hi) = (len, 0);
        for t in left {
            let (l0, ln, r0, rn) = if is_left { (t.j0, t.n, t.i0, t.m) } else { (t.i0, t.m, t.j0, t.n) };
            if l >= l0 && l < l0 + ln {
                lo = lo.min(r0);
                hi = hi.max(r0 + rn);
            }
        }
        if lo >= hi {
            continue;
        }
        match groups.last_mut() {
            Some(g) if g.0 + g.1 == l && (g.2, g.3) == (lo, hi) => g.1 += 1,
            _ => groups.push((l, 1, lo, hi)),
        }
    }
    let fwd = forward(call);
    let a = call.a;
    let (b, ldb, lda) = (call.c, call.ldc, call.lda);
    let one = T::one();
    for (l0, ln, lo, hi) in groups {
        debug_assert!(if fwd { hi == len } else { lo == 0 }, "{l0}+{ln}: [{lo}, {hi}) of {len}");
        let rl = hi - lo;
        // The part already final: before the rest in processing order.
        let (d0, dl) = if fwd { (0, lo) } else { (hi, len - hi) };
        let ar = MatRef::col_major(a.add(lo + lo * lda), rl, rl, lda);
        let (opa, conj) = MatRef::op(a, call.trans, len, len, lda);
        let (br, bd) = if is_left {
            (MatMut::col_major(b.add(lo + l0 * ldb), rl, ln, ldb), MatRef::col_major(b.add(d0 + l0 * ldb), dl, ln, ldb))
        } else {
            (MatMut::col_major(b.add(l0 + lo * ldb), ln, rl, ldb), MatRef::col_major(b.add(l0 + d0 * ldb), ln, dl, ldb))
        };
        let (side, uplo, trans, diag) = (call.side, call.uplo, call.trans, call.diag);
        if call.kind == Kind::Trmm {
            eng::tri::trmm(side, uplo, trans, diag, call.alpha, ar, br);
            continue;
        }
        let mut alpha = call.alpha;
        if dl > 0 {
            // B_rest := alpha*B_rest - op(A)[rest, done] X_done (left; the transpose on the right).
            if is_left {
                eng::gemm::gemm(-one, opa.sub(lo, d0, rl, dl), conj, bd, false, alpha, br);
            } else {
                eng::gemm::gemm(-one, bd, false, opa.sub(d0, lo, dl, rl), conj, alpha, br);
            }
            alpha = one;
        }
        eng::tri::trsm(side, uplo, trans, diag, alpha, ar, br);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{C32, C64};

    /// The download ring on the CPU: a piece is copied out of the "device" tile when staged
    /// (the tile is final by then, as on the GPU) and written back when it leaves the ring.
    struct SimRing {
        slots: usize,
        staged: VecDeque<(Staged, Vec<u8>)>,
        /// The buffer of the piece being written back.
        out: Vec<u8>,
        done: Vec<usize>,
        written: usize,
        fail_after: Option<usize>,
    }

    impl Ring for SimRing {
        fn full(&self) -> bool {
            self.staged.len() == self.slots
        }
        unsafe fn stage(
            &mut self,
            t: usize,
            p: usize,
            r: &Region,
            (x0, c0, w, h): (usize, usize, usize, usize),
        ) -> Result<()> {
            let mut buf = vec![0u8; w * h];
            copy2d(Copier::Pool, (r.dev as *const u8).add(c0 * r.dpitch + x0), r.dpitch, buf.as_mut_ptr(), w, w, h);
            let host = r.host.add(c0 * r.hpitch + x0);
            let s = Staged { chunk: 0, tile: t, piece: p, src: buf.as_ptr(), host, hpitch: r.hpitch, w, h };
            self.staged.push_back((s, buf));
            Ok(())
        }
        unsafe fn oldest(&mut self) -> Result<Option<Staged>> {
            let Some((s, buf)) = self.staged.pop_front() else { return Ok(None) };
            if self.fail_after == Some(self.written) {
                return Err(GpuError::Other("simulated".into()));
            }
            self.written += 1;
            self.out = buf;
            Ok(Some(s))
        }
        fn release(&mut self, s: &Staged) {
            assert_eq!(self.done[s.tile], s.piece, "tile {}: pieces out of order", s.tile);
            self.done[s.tile] = s.piece + 1;
        }
        fn copier(&self) -> Copier {
            Copier::Pool
        }
    }

    /// Run `s` on the CPU: device addresses are host memory, uploads plain copies cut into the
    /// pipeline's pieces, downloads through a ring of `ring` chunks driven by the GPU path's own
    /// [`down_tile`] / [`down_next`], cuBLAS calls the CPU engine. The ring is drained only when
    /// full (and at the end): the download thread at its slowest, so that pieces leave it by
    /// being pushed out. A failure is simulated after `fail_after` downloaded pieces.
    unsafe fn simulate<T: TriScalar>(
        s: &Sched<T>,
        piece: usize,
        ring: usize,
        fail_after: Option<usize>,
    ) -> std::result::Result<(), Failure> {
        let e = std::mem::size_of::<T>();
        let mut d = SimRing {
            slots: ring.max(1),
            staged: VecDeque::new(),
            out: Vec::new(),
            done: vec![0; s.tiles.len()],
            written: 0,
            fail_after,
        };
        let r = (|| -> Result<()> {
            for step in &s.steps {
                match step {
                    Step::Up(r) => {
                        let g = Pieces::new(r.width, r.height, e, piece);
                        for i in 0..g.count() {
                            let (x0, c0, w, h) = g.piece(i);
                            let dst = (r.dev as *mut u8).add(c0 * r.dpitch + x0);
                            copy2d(Copier::Pool, r.host.add(c0 * r.hpitch + x0), r.hpitch, dst, r.dpitch, w, h);
                        }
                    }
                    Step::Op(op) => sim_op(op),
                    Step::Done(t) => {
                        if !s.down.is_empty() {
                            down_tile(&mut d, &s.down, *t, e, piece)?;
                        }
                    }
                }
            }
            while down_next(&mut d, &s.down, e, piece)? {}
            Ok(())
        })();
        r.map_err(|error| Failure { error, tiles: s.tiles.clone(), done: d.done, piece_bytes: piece, elem: e })
    }

    /// One device operation by the CPU engine.
    unsafe fn sim_op<T: TriScalar>(op: &Op<T>) {
        let view =
            |d: DMat, t: Trans, rows: usize, cols: usize| MatRef::op(d.ptr as *const T, t, rows, cols, d.ld as usize);
        let mat = |d: DMat, rows: usize, cols: usize| MatMut::col_major(d.ptr as *mut T, rows, cols, d.ld as usize);
        let rmat = |d: DMat, rows: usize, cols: usize| MatRef::col_major(d.ptr as *const T, rows, cols, d.ld as usize);
        match *op {
            Op::Gemm { ta, tb, m, n, k, alpha, a, b, beta, c } => {
                let (av, ca) = view(a, ta, m, k);
                let (bv, cb) = view(b, tb, k, n);
                eng::gemm::gemm(alpha, av, ca, bv, cb, beta, mat(c, m, n));
            }
            Op::Rank { two, herm, uplo, trans, n, k, alpha, a, b, beta, c } => {
                let (x, conj) = view(a, trans, n, k);
                if two {
                    let (y, _) = view(b, trans, n, k);
                    eng::sym::syr2k(uplo, herm, alpha, x, y, conj, beta, mat(c, n, n));
                } else {
                    eng::sym::syrk(uplo, herm, alpha, x, conj, beta, mat(c, n, n));
                }
            }
            Op::Symm { herm, side, uplo, m, n, alpha, a, b, beta, c } => {
                let na = if side == Side::Left { m } else { n };
                eng::sym::symm(side, uplo, herm, alpha, rmat(a, na, na), rmat(b, m, n), beta, mat(c, m, n));
            }
            Op::Tri { solve, side, uplo, trans, diag, m, n, alpha, a, b } => {
                let na = if side == Side::Left { m } else { n };
                if solve {
                    eng::tri::trsm(side, uplo, trans, diag, alpha, rmat(a, na, na), mat(b, m, n));
                } else {
                    eng::tri::trmm(side, uplo, trans, diag, alpha, rmat(a, na, na), mat(b, m, n));
                }
            }
            Op::RealDiag { n, c } => {
                for i in 0..n {
                    let p = (c.ptr as *mut T).add(i * (c.ld as usize + 1));
                    *p = T::from_real((*p).re());
                }
            }
            Op::Zero { rows, cols, c } => {
                for j in 0..cols {
                    for i in 0..rows {
                        *(c.ptr as *mut T).add(i + j * c.ld as usize) = T::zero();
                    }
                }
            }
        }
    }

    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self) -> f64 {
            self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((self.0 >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
        }
        fn val<T: Scalar>(&mut self) -> T {
            let (re, im) = (self.next(), self.next());
            T::from_parts(<T::Real as Scalar>::from_f64(re), <T::Real as Scalar>::from_f64(im))
        }
        fn vec<T: Scalar>(&mut self, len: usize) -> Vec<T> {
            (0..len).map(|_| self.val()).collect()
        }
    }

    fn nan<T: Scalar>() -> T {
        T::from_f64(f64::NAN)
    }
    fn poison<T: Scalar>() -> T {
        T::from_parts(<T::Real as Scalar>::from_f64(-7.77e5), <T::Real as Scalar>::from_f64(3.33e5))
    }

    /// One routine variant.
    #[derive(Clone, Copy, Debug)]
    struct V {
        kind: Kind,
        side: Side,
        uplo: Uplo,
        trans: Trans,
        diag: Diag,
    }

    /// How a case is run.
    #[derive(Clone, Copy, Debug)]
    struct How {
        tile: (usize, usize),
        piece: usize,
        /// Which of A, B, the output get a resident copy (the others are "device memory", used
        /// in place: on the CPU, read where they are).
        copy: [bool; 3],
        fail_after: Option<usize>,
        /// Chunks in the download ring (the pipeline has `HYBLAS_OFFLOAD_CHUNKS`, 2..64,
        /// default 4).
        ring: usize,
    }

    /// One call through the schedule on the CPU against the CPU engine on the whole call; after
    /// a simulated failure, the CPU finishes the rest as the ABI does. The referenced part of
    /// the output must match, everything else (padding rows, the other triangle) keep its bits.
    fn case<T: TriScalar>(v: V, (m, n, k): (usize, usize, usize), (alpha, beta): (T, T), how: How, seed: u64) {
        let mut rng = Lcg(seed);
        let pad = 3;
        let left = v.side == Side::Left;
        let tri = v.kind.tri();
        let rank = v.kind.rank();
        let herm = v.kind.herm();
        let (m, k) = if rank { (n, k) } else { (m, 0) };
        let na = if left { m } else { n };
        // A: stored shape, with NaN wherever the routine must not look.
        let (ar, ac) = if rank {
            if v.trans == Trans::No {
                (n, k)
            } else {
                (k, n)
            }
        } else {
            (na, na)
        };
        let lda = ar.max(1) + pad;
        let mut a: Vec<T> = rng.vec(lda * ac.max(1));
        if !rank {
            for j in 0..na {
                for i in 0..lda {
                    let inside = i < na && if v.uplo == Uplo::Lower { i >= j } else { i <= j };
                    let idx = i + j * lda;
                    if !inside {
                        a[idx] = nan();
                    } else if tri && i == j {
                        // A well-conditioned triangle: a diagonal of 1..2, small off-diagonal.
                        a[idx] = if v.diag == Diag::Unit { nan() } else { T::from_f64(1.5 + 0.5 * rng.next()) };
                    } else if tri {
                        a[idx] = a[idx].mul_real(<T::Real as Scalar>::from_f64(1.0 / na as f64));
                    } else if herm && i == j {
                        // HEMM reads only the real part of A's diagonal.
                        a[idx] = T::from_parts(a[idx].re(), <T::Real as Scalar>::from_f64(f64::NAN));
                    }
                }
            }
        }
        let (br, bc) = if v.kind.two() { (ar, ac) } else { (m, n) };
        let ldb = br.max(1) + pad;
        let bmat: Vec<T> = rng.vec(ldb * bc.max(1));
        let ldc = m.max(1) + pad;
        let mut c: Vec<T> = if tri { bmat.clone() } else { rng.vec(ldc * n.max(1)) };
        let ldc = if tri { ldb } else { ldc };
        // Referenced elements of the output.
        let refd = |i: usize, j: usize| i < m && (!rank || if v.uplo == Uplo::Lower { i >= j } else { i <= j });
        for j in 0..n {
            for i in 0..ldc {
                if !refd(i, j) {
                    c[i + j * ldc] = poison();
                } else if beta.is_zero() && !tri {
                    c[i + j * ldc] = nan();
                }
            }
        }
        let mk = |cp: *mut T| match v.kind {
            Kind::Symm | Kind::Hemm => {
                Call::symm(herm, v.side, v.uplo, m, n, alpha, a.as_ptr(), lda, bmat.as_ptr(), ldb, beta, cp, ldc)
            }
            Kind::Syrk | Kind::Herk => Call::syrk(herm, v.uplo, v.trans, n, k, alpha, a.as_ptr(), lda, beta, cp, ldc),
            Kind::Syr2k | Kind::Her2k => {
                Call::syr2k(herm, v.uplo, v.trans, n, k, alpha, a.as_ptr(), lda, bmat.as_ptr(), ldb, beta, cp, ldc)
            }
            Kind::Trmm | Kind::Trsm => {
                Call::trxm(v.kind == Kind::Trsm, v.side, v.uplo, v.trans, v.diag, m, n, alpha, a.as_ptr(), lda, cp, ldc)
            }
        };
        // The CPU engine on the whole call.
        let mut want = c.clone();
        unsafe {
            let call = mk(want.as_mut_ptr());
            if tri {
                let (b, ldb) = (call.c, call.ldc);
                let av = MatRef::col_major(call.a, na, na, lda);
                let bv = MatMut::col_major(b, m, n, ldb);
                if v.kind == Kind::Trsm {
                    eng::tri::trsm(v.side, v.uplo, v.trans, v.diag, alpha, av, bv);
                } else {
                    eng::tri::trmm(v.side, v.uplo, v.trans, v.diag, alpha, av, bv);
                }
            } else {
                cpu_rank(&call, call.c, call.ldc);
            }
        }
        // The schedule on the CPU.
        let mut got = c.clone();
        let call = mk(got.as_mut_ptr());
        let mut copy = how.copy;
        if !call.reads() {
            copy[0] = false;
            copy[1] = false;
        }
        if !call.has_b() {
            copy[1] = false;
        }
        let tile = (how.tile.0.min(m.max(1)), how.tile.1.min(n.max(1)));
        let tile = if rank { (tile.0, tile.0) } else { fit_tile(&call, tile, how.piece) };
        let need: usize = layout(&call, copy).iter().sum();
        let mut arena = vec![0xffu8; need + 2 * ALIGN];
        let base = align(arena.as_mut_ptr() as usize) as u64;
        let s = schedule(&call, copy, tile, base);
        let what = format!(
            "{}{} {v:?} m={m} n={n} k={k} alpha={alpha:?} beta={beta:?} {how:?} tiles={}",
            T::PREFIX,
            v.kind.name(),
            s.tiles.len()
        );
        let r = unsafe { simulate(&s, how.piece, how.ring, how.fail_after) };
        if let Err(f) = r {
            let left = f.remaining();
            unsafe {
                if tri {
                    finish_tri(&call, &left)
                } else {
                    finish_rank(&call, &left)
                }
            }
        }
        // Every referenced element computed once: compare; the rest bit for bit.
        let eps = if std::mem::size_of::<T::Real>() == 4 { 1.2e-7 } else { 2.3e-16 };
        let scale = want
            .iter()
            .map(|w| num_traits::ToPrimitive::to_f64(&w.abs1()).unwrap())
            .filter(|x| x.is_finite())
            .fold(1.0, f64::max);
        let tol = eps * 64.0 * (k.max(na) as f64 + 4.0) * scale;
        for j in 0..n {
            for i in 0..ldc {
                let idx = i + j * ldc;
                let (g, w) = (got[idx], want[idx]);
                if !refd(i, j) {
                    assert!(same_bits(&g, &c[idx]), "{what}: ({i},{j}) outside the output was written: {g:?}");
                    continue;
                }
                let d = num_traits::ToPrimitive::to_f64(&(g - w).abs1()).unwrap();
                assert!(d <= tol, "{what}: ({i},{j}) got {g:?} want {w:?}");
            }
        }
    }

    fn same_bits<T>(a: &T, b: &T) -> bool {
        let n = std::mem::size_of::<T>();
        // SAFETY: plain-data scalars, read as bytes.
        unsafe {
            std::slice::from_raw_parts(a as *const T as *const u8, n)
                == std::slice::from_raw_parts(b as *const T as *const u8, n)
        }
    }

    const SIDES: [Side; 2] = [Side::Left, Side::Right];
    const UPLOS: [Uplo; 2] = [Uplo::Lower, Uplo::Upper];

    /// Every variant of `kind` (transposes allowed for T, both diagonals for TRMM/TRSM).
    fn variants(kind: Kind) -> Vec<V> {
        let mut out = Vec::new();
        let transes: Vec<Trans> = match kind {
            Kind::Symm | Kind::Hemm => vec![Trans::No],
            Kind::Herk | Kind::Her2k => vec![Trans::No, Trans::ConjTrans],
            Kind::Syrk | Kind::Syr2k => vec![Trans::No, Trans::Trans],
            _ => vec![Trans::No, Trans::Trans, Trans::ConjTrans],
        };
        let sides: &[Side] = if kind.rank() { &SIDES[..1] } else { &SIDES };
        let diags: &[Diag] = if kind.tri() { &[Diag::NonUnit, Diag::Unit] } else { &[Diag::NonUnit] };
        for &side in sides {
            for uplo in UPLOS {
                for &trans in &transes {
                    for &diag in diags {
                        out.push(V { kind, side, uplo, trans, diag });
                    }
                }
            }
        }
        out
    }

    fn kinds<T: Scalar>() -> Vec<Kind> {
        let mut k = vec![Kind::Symm, Kind::Syrk, Kind::Syr2k, Kind::Trmm, Kind::Trsm];
        if T::IS_COMPLEX {
            k.extend([Kind::Hemm, Kind::Herk, Kind::Her2k]);
        }
        k
    }

    fn sweep<T: TriScalar>(hows: &[How], scalars: &[(f64, f64)], seed: u64) {
        let mut seed = seed;
        for kind in kinds::<T>() {
            for v in variants(kind) {
                for how in hows {
                    for &(al, be) in scalars {
                        seed += 1;
                        let mut rng = Lcg(seed);
                        // Complex scalars with an imaginary part, except where the routine takes
                        // real ones (HERK's alpha and beta, HER2K's beta).
                        let cplx = |x: f64, rng: &mut Lcg, real: bool| {
                            let im = if real || x == 0.0 || !T::IS_COMPLEX { 0.0 } else { 0.5 * rng.next() };
                            T::from_parts(<T::Real as Scalar>::from_f64(x), <T::Real as Scalar>::from_f64(im))
                        };
                        let alpha = cplx(al, &mut rng, kind == Kind::Herk);
                        let beta = cplx(be, &mut rng, kind.herm() && kind.rank());
                        case::<T>(v, (37, 29, 23), (alpha, beta), *how, seed);
                    }
                }
            }
        }
    }

    const ALL: [bool; 3] = [true; 3];

    #[test]
    fn every_routine_and_variant_on_the_cpu() {
        let hows = [
            How { tile: (8, 16), piece: 40, copy: ALL, fail_after: None, ring: 2 },
            How { tile: (16, 5), piece: 1 << 20, copy: ALL, fail_after: None, ring: 64 },
            How { tile: (64, 64), piece: 24, copy: ALL, fail_after: None, ring: 4 },
        ];
        let scalars = [(0.75, 0.5), (-1.25, 0.0)];
        sweep::<f64>(&hows, &scalars, 1);
        sweep::<C64>(&hows, &scalars, 1000);
        sweep::<f32>(&hows[..1], &scalars[..1], 2000);
        sweep::<C32>(&hows[..1], &scalars[..1], 3000);
    }

    #[test]
    fn alpha_zero_and_operands_in_place() {
        let hows = [
            How { tile: (8, 8), piece: 64, copy: [false, true, true], fail_after: None, ring: 2 },
            How { tile: (8, 8), piece: 64, copy: [true, false, true], fail_after: None, ring: 2 },
            How { tile: (8, 8), piece: 64, copy: [true, true, false], fail_after: None, ring: 2 },
        ];
        sweep::<f64>(&hows, &[(1.5, 0.25)], 5000);
        sweep::<C64>(&hows, &[(1.5, 0.0)], 6000);
        // alpha == 0 with the output resident and in place (device memory: diagonal tiles
        // must not scale the other triangle).
        let zero = [
            How { tile: (8, 16), piece: 64, copy: ALL, fail_after: None, ring: 2 },
            How { tile: (8, 16), piece: 64, copy: [true, true, false], fail_after: None, ring: 2 },
        ];
        sweep::<f64>(&zero, &[(0.0, 0.0), (0.0, 0.5)], 7000);
        sweep::<C64>(&zero, &[(0.0, 0.0), (0.0, 1.5)], 8000);
    }

    #[test]
    fn diagonal_tiles_pushed_out_of_a_full_ring_stay_masked() {
        // The H200 failure of gpu_offload_l3's special_alpha_and_beta: ZSYRK LN, n = 83, k = 45,
        // alpha = beta = 0, tile 64 (knob (64, 48)), 16 KB pieces: the 64 x 64 diagonal tile is
        // 4 pieces of 16 columns, which fill the 4-chunk ring, so the next tile's first piece
        // pushes the diagonal tile's first piece out. It must go back masked like the others.
        let v = V { kind: Kind::Syrk, side: Side::Left, uplo: Uplo::Lower, trans: Trans::No, diag: Diag::NonUnit };
        let z = C64::new(0.0, 0.0);
        for ring in [2, 4] {
            let how = How { tile: (64, 48), piece: 16384, copy: ALL, fail_after: None, ring };
            case::<C64>(v, (83, 83, 45), (z, z), how, 11);
        }
        // Every rank-k routine, triangle and special scalar pair, small rings and pieces.
        let scalars = [(0.0, 0.0), (0.0, 0.5), (1.0, 0.0), (-0.5, 0.0), (1.0, 1.0)];
        let mut hows = Vec::new();
        for ring in [2, 3, 4] {
            hows.push(How { tile: (16, 12), piece: 256, copy: ALL, fail_after: None, ring });
            hows.push(How { tile: (16, 12), piece: 40, copy: ALL, fail_after: None, ring });
        }
        let mut seed = 12000;
        for kind in [Kind::Syrk, Kind::Syr2k, Kind::Herk, Kind::Her2k] {
            for v in variants(kind) {
                for how in &hows {
                    for &(al, be) in &scalars {
                        seed += 1;
                        let (al, be) = (C64::new(al, 0.0), C64::new(be, 0.0));
                        case::<C64>(v, (41, 41, 13), (al, be), *how, seed);
                    }
                }
            }
        }
    }

    #[test]
    fn failures_leave_nothing_twice() {
        let mut hows = Vec::new();
        for fail in [0usize, 1, 2, 5, 13, 40] {
            // Whole tile columns per piece, and pieces of three elements (parts of columns).
            hows.push(How { tile: (8, 16), piece: 1 << 20, copy: ALL, fail_after: Some(fail), ring: 2 });
            hows.push(How { tile: (8, 16), piece: 24, copy: ALL, fail_after: Some(fail), ring: 2 });
        }
        sweep::<f64>(&hows, &[(0.75, 0.5), (-1.0, 0.0)], 9000);
        sweep::<C64>(&hows[..6], &[(0.75, 0.5)], 10000);
    }

    #[test]
    fn every_stored_element_crosses_once() {
        // Uploads of A never overlap (each stored block crosses the bus once), and the tiles
        // cover the referenced output exactly once.
        for kind in kinds::<f64>() {
            for v in variants(kind) {
                let (m, n, k) = (37, 29, 23);
                let mut x = vec![0.0f64; 64 * 64];
                let call = match kind {
                    Kind::Symm | Kind::Hemm => Call::symm(
                        false,
                        v.side,
                        v.uplo,
                        m,
                        n,
                        1.0,
                        x.as_ptr(),
                        64,
                        x.as_ptr(),
                        64,
                        1.0,
                        x.as_mut_ptr(),
                        64,
                    ),
                    Kind::Syrk | Kind::Herk => {
                        Call::syrk(false, v.uplo, v.trans, n, k, 1.0, x.as_ptr(), 64, 1.0, x.as_mut_ptr(), 64)
                    }
                    Kind::Syr2k | Kind::Her2k => Call::syr2k(
                        false,
                        v.uplo,
                        v.trans,
                        n,
                        k,
                        1.0,
                        x.as_ptr(),
                        64,
                        x.as_ptr(),
                        64,
                        1.0,
                        x.as_mut_ptr(),
                        64,
                    ),
                    _ => Call::trxm(
                        kind == Kind::Trsm,
                        v.side,
                        v.uplo,
                        v.trans,
                        v.diag,
                        m,
                        n,
                        1.0,
                        x.as_ptr(),
                        64,
                        x.as_mut_ptr(),
                        64,
                    ),
                };
                let tile = if kind.rank() { (8, 8) } else { (8, 5) };
                let base = 1u64 << 40;
                let s = schedule(&call, ALL, tile, base);
                let mut seen = std::collections::HashMap::new();
                for step in &s.steps {
                    if let Step::Up(r) = step {
                        if r.dev >= base + align(64 * 64 * 8) as u64 {
                            continue; // B or the output
                        }
                        for col in 0..r.height {
                            for x in (0..r.width).step_by(8) {
                                *seen.entry(r.dev + (col * r.dpitch + x) as u64).or_insert(0) += 1;
                            }
                        }
                    }
                }
                assert!(seen.values().all(|&c| c == 1), "{kind:?} {v:?}: an element of A uploaded twice");
                let rows = call.m;
                let mut cover = vec![0u8; rows * call.n];
                for t in &s.tiles {
                    for j in t.j0..t.j0 + t.n {
                        for i in t.i0..t.i0 + t.m {
                            cover[i + j * rows] += 1;
                        }
                    }
                }
                // Every element of the output (the triangle for SYRK/SYR2K) exactly once.
                for j in 0..call.n {
                    for i in 0..rows {
                        let refd = !kind.rank() || if v.uplo == Uplo::Lower { i >= j } else { i <= j };
                        let want = if refd { 1 } else { cover[i + j * rows].min(1) };
                        assert_eq!(cover[i + j * rows], want, "{kind:?} {v:?}: ({i},{j}) covered wrongly");
                    }
                }
            }
        }
    }
}
