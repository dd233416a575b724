//! The blocked GEMM over hyblas's own micro-kernels ([`super::micro`]), in the BLIS manner.
//!
//! C (m x n) is updated in steps: a block of NC columns of B and KC of k is packed into NR-wide
//! panels (shared by all threads), then row blocks of A (MC x KC, packed into MR-high panels,
//! one per thread) are multiplied against it tile by tile. Block sizes come from the detected
//! caches: a B panel (KC x NR) fills about half of L1, an A block about half of L2, a B block
//! a share of L3. Conjugation and transposition are absorbed by the packing.
//!
//! Threads: every step's work is a list of parts claimed from counters, packing of B first,
//! then (row block, column range) tasks. A thread waits only for parts another thread has
//! already claimed and is running, so a thread that starts late (or never) only means the
//! others do its share: there is no barrier to deadlock on when the pool is busy.
//!
//! `tri` restricts the update to one triangle of a square C (SYRK/HERK/SYR2K): tiles wholly
//! outside it are skipped and tiles across the diagonal are written element by element, so
//! the product costs about half the flops.

use super::micro::{micro, Micro};
use crate::cpu::threads;
use crate::types::{MatMut, MatRef, Scalar, Uplo};
use once_cell::sync::Lazy;
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::*};

/// Cache sizes in bytes (L1 data, L2, L3), read once from sysfs (Linux), with defaults of a
/// current server core where they are not known.
pub(super) fn caches() -> (usize, usize, usize) {
    static C: Lazy<(usize, usize, usize)> = Lazy::new(|| {
        let read = |level: u32| -> Option<usize> {
            for i in 0..8 {
                let dir = format!("/sys/devices/system/cpu/cpu0/cache/index{i}");
                let lv: u32 = std::fs::read_to_string(format!("{dir}/level")).ok()?.trim().parse().ok()?;
                let ty = std::fs::read_to_string(format!("{dir}/type")).ok()?;
                if lv == level && ty.trim() != "Instruction" {
                    let s = std::fs::read_to_string(format!("{dir}/size")).ok()?;
                    let s = s.trim();
                    let (num, mul) = match s.strip_suffix('K') {
                        Some(v) => (v, 1024),
                        None => match s.strip_suffix('M') {
                            Some(v) => (v, 1 << 20),
                            None => (s, 1),
                        },
                    };
                    return num.parse::<usize>().ok().map(|v| v * mul);
                }
            }
            None
        };
        (read(1).unwrap_or(48 << 10), read(2).unwrap_or(2 << 20), read(3).unwrap_or(32 << 20))
    });
    *C
}

/// Block sizes (in elements of T) for a micro-kernel of `mr` x `nr`.
#[derive(Clone, Copy, Debug)]
pub struct Blocks {
    pub kc: usize,
    pub mc: usize,
    pub nc: usize,
}

/// Block sizes for `T`: `HYBLAS_GEMM_KC`, `_MC`, `_NC` override the cache-derived ones.
pub fn blocks<T: Scalar>(mr: usize, nr: usize) -> Blocks {
    // Worked out once per precision.
    static CACHED: [once_cell::sync::OnceCell<Blocks>; 4] = [const { once_cell::sync::OnceCell::new() }; 4];
    let slot = match T::PREFIX {
        's' => 0,
        'd' => 1,
        'c' => 2,
        _ => 3,
    };
    *CACHED[slot].get_or_init(|| blocks_for(mr, nr, std::mem::size_of::<T>()))
}

fn blocks_for(mr: usize, nr: usize, sz: usize) -> Blocks {
    let (l1, l2, l3) = caches();
    let per_thread_l3 = (l3 / threads::pool_size().max(1)).max(l2);
    // A B panel (KC x NR) in about two thirds of L1, KC a multiple of 8 and at least 256
    // (the kernel's start and end then cost little next to its loop).
    let kc = crate::config::threshold("HYBLAS_GEMM_KC", (((2 * l1 / 3) / (nr * sz)) / 8 * 8).max(256)).max(8);
    // Eight A panels a block (as the `gemm` crate, whose blocking matched MKL here): the
    // block stays in L2 with room to spare, and threads get blocks of work fine enough.
    let mc = crate::config::threshold("HYBLAS_GEMM_MC", 8 * mr).max(mr) / mr * mr;
    // A B block (KC x NC) in a share of L3, at most 4096 columns of it.
    let nc =
        crate::config::threshold("HYBLAS_GEMM_NC", (per_thread_l3 / 2 / (kc * sz)).clamp(nr, 4096)).max(nr) / nr * nr;
    Blocks { kc, mc, nc }
}

/// Threads from which B is packed (`HYBLAS_GEMM_PACK_B_THREADS`), for products whose C
/// columns are longer than `PACK_B_BYTES` (`HYBLAS_GEMM_PACK_B_BYTES`); otherwise the kernels
/// read B where it lies and only a last partial panel is packed.
///
/// On one or two threads (this project's 2-vCPU VM) packing B cost 3-8% of a DGEMM, and half
/// the time of a 64-row one. On the H200 host's Xeon (session 52,
/// scripts/cpu-host-gemm-settings.sh and blasbench runs beside it, ratios to MKL) packing paid
/// from 4 threads on for long columns: DGEMM 4096 (32 KiB columns) on 8 threads 0.89x in place,
/// 0.99x packed, on 16 0.86x and 0.96x; ZGEMM 2048 (32 KiB) on 4 threads 0.91x and 1.01x. With
/// 16 KiB columns or less it lost: DGEMM 2048 on 8 threads 1.28x and 1.01x, DGEMM 1024 on 16
/// 1.50x and 1.17x, ZGEMM 1024 on 16 1.41x and 1.26x. Many threads each streaming eight
/// strided columns of a large B from the shared L3 lose to one contiguous copy they share.
pub static PACK_B_THREADS: Lazy<usize> = Lazy::new(|| crate::config::threshold("HYBLAS_GEMM_PACK_B_THREADS", 4));
/// See [`PACK_B_THREADS`].
pub static PACK_B_BYTES: Lazy<usize> = Lazy::new(|| crate::config::threshold("HYBLAS_GEMM_PACK_B_BYTES", 16 << 10));

/// A threaded step's row blocks (`HYBLAS_GEMM_TASKS`): each takes 1/(threads x this) of the
/// rows still left, see `gemm_impl`.
static TASKS_PER_THREAD: Lazy<usize> = Lazy::new(|| crate::config::threshold("HYBLAS_GEMM_TASKS", 2).max(1));

/// 64 aligned bytes (the stack tile of edge tiles).
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line([u8; 64]);

/// A thread's packing buffer: 64-byte aligned, and from 1 MiB on 2 MiB aligned and offered
/// to the kernel as huge pages (a packed block spans hundreds of 4 KiB pages otherwise).
struct Scratch {
    ptr: *mut u8,
    layout: std::alloc::Layout,
}

impl Scratch {
    fn new(bytes: usize) -> Option<Scratch> {
        const HUGE: usize = 2 << 20;
        let align = if bytes >= HUGE / 2 { HUGE } else { 64 };
        let layout = std::alloc::Layout::from_size_align(bytes.max(64).next_multiple_of(align), align).ok()?;
        // SAFETY: a non-zero size.
        let ptr = unsafe { std::alloc::alloc(layout) };
        if ptr.is_null() {
            return None;
        }
        #[cfg(target_os = "linux")]
        if align == HUGE {
            // SAFETY: advice on memory this allocation owns; failure only means small pages.
            unsafe { libc::madvise(ptr as *mut libc::c_void, layout.size(), libc::MADV_HUGEPAGE) };
        }
        Some(Scratch { ptr, layout })
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { std::alloc::dealloc(self.ptr, self.layout) }
    }
}

thread_local! {
    /// Each thread's packing buffers, kept between calls (first touches of a fresh megabyte
    /// cost more than a small product). Taken out while in use: a nested call on the same
    /// thread finds none and makes its own.
    static A_BUF: Cell<Option<Scratch>> = const { Cell::new(None) };
    static B_BUF: Cell<Option<Scratch>> = const { Cell::new(None) };
    /// The TRSM/TRMM row kernels' rows (see [`with_rows_buf`]).
    static ROWS_BUF: Cell<Option<Scratch>> = const { Cell::new(None) };
    /// The TRSM/TRMM leaf's packed rows of B (see [`with_leaf_buf`]).
    static LEAF_BUF: Cell<Option<Scratch>> = const { Cell::new(None) };
    /// The TRSM/TRMM leaf's packed triangle (see [`with_tri_buf`]).
    static TRI_BUF: Cell<Option<Scratch>> = const { Cell::new(None) };
}

/// The calling thread's scratch for the TRSM/TRMM leaf's packed triangle (read by every
/// thread of the call while the caller waits in it).
pub(super) fn with_tri_buf<T, R>(elems: usize, f: impl FnOnce(*mut T) -> R) -> R {
    with_buf(&TRI_BUF, elems, f)
}

/// A thread's scratch for the TRSM/TRMM leaf from the right (its packed block of B's rows),
/// as [`with_rows_buf`] and apart from it (the row kernels run inside).
pub(super) fn with_leaf_buf<T, R>(elems: usize, f: impl FnOnce(*mut T) -> R) -> R {
    with_buf(&LEAF_BUF, elems, f)
}

/// A thread's scratch for `elems` values of T (uninitialised), kept between calls: the
/// TRSM/TRMM leaf runs the row kernels once per MR x NR tile, and allocating their rows each
/// time cost 4% of a 1-thread ZTRSM 512.
pub(super) fn with_rows_buf<T, R>(elems: usize, f: impl FnOnce(*mut T) -> R) -> R {
    with_buf(&ROWS_BUF, elems, f)
}

/// Borrow a thread's buffer with room for `elems` values of T, run `f`, give it back.
fn with_buf<T, R>(
    key: &'static std::thread::LocalKey<Cell<Option<Scratch>>>,
    elems: usize,
    f: impl FnOnce(*mut T) -> R,
) -> R {
    let bytes = elems * std::mem::size_of::<T>();
    let mut held = key.with(|c| c.take());
    if held.as_ref().is_none_or(|s| s.layout.size() < bytes) {
        drop(held.take());
        held = Some(Scratch::new(bytes).expect("packing buffer allocation"));
    }
    let buf = held.expect("allocated above");
    let r = f(buf.ptr as *mut T);
    key.with(|c| c.set(Some(buf)));
    r
}

/// An operand of the blocked product: a view, conjugated or not, or the full symmetric
/// (Hermitian when `herm`) matrix of which the view stores one triangle. SYMM/HEMM pack their
/// A straight from that triangle; expanding it into a full copy first cost 9-12% of a
/// 1-thread DSYMM at n = 1024 (best of 15 against DGEMM, this project's VM).
#[derive(Clone, Copy)]
pub struct Operand<T> {
    pub m: MatRef<T>,
    pub conj: bool,
    /// The stored triangle and whether the matrix is Hermitian.
    pub sym: Option<(Uplo, bool)>,
}

impl<T: Scalar> Operand<T> {
    pub fn plain(m: MatRef<T>, conj: bool) -> Self {
        Operand { m, conj, sym: None }
    }
    /// The symmetric (Hermitian) matrix whose `uplo` triangle `m` (square) stores.
    pub fn symmetric(m: MatRef<T>, uplo: Uplo, herm: bool) -> Self {
        Operand { m, conj: false, sym: Some((uplo, herm)) }
    }
    /// The transpose (a symmetric one's storage read transposed: the other triangle).
    fn t(self) -> Self {
        Operand { m: self.m.t(), conj: self.conj, sym: self.sym.map(|(u, h)| (u.flip(), h)) }
    }
    /// Element (i, j) of the full matrix (a Hermitian diagonal taken as real).
    #[inline]
    unsafe fn get(&self, i: usize, j: usize) -> T {
        let v = match self.sym {
            None => self.m.get(i, j),
            Some((_, true)) if i == j => T::from_real(self.m.get(i, i).re()),
            Some((uplo, herm)) => {
                if (uplo == Uplo::Lower) == (i >= j) {
                    self.m.get(i, j)
                } else {
                    self.m.get(j, i).conj_if(herm)
                }
            }
        };
        v.conj_if(self.conj)
    }
    /// Rows [i0, i0+h) x columns [j0, j0+w) as a plain view and its conjugation, unless the
    /// block of a symmetric operand meets the diagonal. The block lies within the operand.
    #[inline]
    unsafe fn block(&self, i0: usize, j0: usize, h: usize, w: usize) -> Option<(MatRef<T>, bool)> {
        let Some((uplo, herm)) = self.sym else { return Some((self.m.sub(i0, j0, h, w), self.conj)) };
        let (below, above) = (i0 >= j0 + w, j0 >= i0 + h);
        if (uplo == Uplo::Lower && below) || (uplo == Uplo::Upper && above) {
            Some((self.m.sub(i0, j0, h, w), self.conj))
        } else if below || above {
            // The mirror of a block of the stored triangle.
            Some((self.m.sub(j0, i0, w, h).t(), self.conj ^ herm))
        } else {
            None
        }
    }
}

/// Pack one MR-high panel of the view `a` (rows <= MR, kc columns) at `d`: for each k, its MR
/// elements (zero past the view's rows).
#[inline(always)]
unsafe fn pack_a_panel<T: Scalar, const MR: usize>(a: MatRef<T>, conj: bool, d: *mut T) {
    let (rows, kc) = (a.rows, a.cols);
    if a.rs == 1 {
        // Column-major: MR contiguous elements per k.
        for kk in 0..kc {
            let s = a.ptr.offset(kk as isize * a.cs);
            let dk = d.add(kk * MR);
            if rows == MR {
                for ii in 0..MR {
                    *dk.add(ii) = (*s.add(ii)).conj_if(conj);
                }
            } else {
                for ii in 0..MR {
                    *dk.add(ii) = if ii < rows { (*s.add(ii)).conj_if(conj) } else { T::zero() };
                }
            }
        }
    } else {
        // Rows contiguous along k (a transposed operand, or a B panel's columns): MR streams
        // read side by side, whole register tiles first (super::transpose).
        let done = if rows == MR && a.cs == 1 {
            super::transpose::rows_to_panel::<T, MR>(a.ptr, a.rs, kc, conj, d)
        } else {
            0
        };
        for kk in done..kc {
            let sk = a.ptr.offset(kk as isize * a.cs);
            let dk = d.add(kk * MR);
            if rows == MR {
                for ii in 0..MR {
                    *dk.add(ii) = (*sk.offset(ii as isize * a.rs)).conj_if(conj);
                }
            } else {
                for ii in 0..MR {
                    *dk.add(ii) = if ii < rows { (*sk.offset(ii as isize * a.rs)).conj_if(conj) } else { T::zero() };
                }
            }
        }
    }
}

/// Pack the view `a` (m x kc) into MR-high panels at `dst` (panel p at p*MR*kc). A
/// column-major `a` is read column by column, each column's rows dealt to the panels: one
/// pass down contiguous memory per column. Panel by panel, every panel walked all kc columns
/// again, ld apart, a new page per step (DTRSM 1024 spent 5.7% of its time packing A so).
#[inline(always)]
unsafe fn pack_a_block<T: Scalar, const MR: usize>(a: MatRef<T>, conj: bool, dst: *mut T) {
    let (m, kc) = (a.rows, a.cols);
    let whole = if a.rs == 1 { m / MR } else { 0 };
    if whole > 0 {
        let line = 64 / std::mem::size_of::<T>();
        for kk in 0..kc {
            let s = a.ptr.offset(kk as isize * a.cs);
            #[cfg(target_arch = "x86_64")]
            if kk + 4 < kc {
                let ahead = s.offset(4 * a.cs);
                for i in (0..whole * MR).step_by(line) {
                    std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(ahead.add(i) as *const i8);
                }
            }
            for p in 0..whole {
                let (sp, d) = (s.add(p * MR), dst.add(p * MR * kc + kk * MR));
                if conj {
                    for ii in 0..MR {
                        *d.add(ii) = (*sp.add(ii)).conj();
                    }
                } else {
                    // A copy of a size known here compiles to whole-register moves; the
                    // element loop did not vectorize (scalar moves: DSYRK 512 packed B at
                    // a third of the rate).
                    std::ptr::copy_nonoverlapping(sp, d, MR);
                }
            }
        }
    }
    for p in whole..m.div_ceil(MR) {
        let i0 = p * MR;
        pack_a_panel::<T, MR>(a.sub(i0, 0, MR.min(m - i0), kc), conj, dst.add(p * MR * kc));
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
unsafe fn pack_a_512<T: Scalar, const MR: usize>(a: MatRef<T>, conj: bool, d: *mut T) {
    pack_a_block::<T, MR>(a, conj, d)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
unsafe fn pack_b_512<T: Scalar, const NR: usize>(b: MatRef<T>, conj: bool, d: *mut T) {
    // B's panels (kc x NR) are laid out as the A panels of B^T: for each k, their NR elements.
    pack_a_block::<T, NR>(b.t(), conj, d)
}

/// [`pack_a_block`] for the kernel's MR (the kernels exist only on AVX-512 machines).
pub(super) unsafe fn pack_a_fast<T: Scalar>(a: MatRef<T>, conj: bool, mr: usize, d: *mut T) {
    match mr {
        4 => pack_a_512::<T, 4>(a, conj, d),
        8 => pack_a_512::<T, 8>(a, conj, d),
        16 => pack_a_512::<T, 16>(a, conj, d),
        32 => pack_a_512::<T, 32>(a, conj, d),
        12 => pack_a_512::<T, 12>(a, conj, d),
        24 => pack_a_512::<T, 24>(a, conj, d),
        48 => pack_a_512::<T, 48>(a, conj, d),
        _ => unreachable!("no kernel has MR = {mr}"),
    }
}

/// B's NR-wide panels (kc x n, the last one zero past its columns) for the kernel's NR.
pub(super) unsafe fn pack_b_fast<T: Scalar>(b: MatRef<T>, conj: bool, nr: usize, d: *mut T) {
    match nr {
        4 => pack_b_512::<T, 4>(b, conj, d),
        8 => pack_b_512::<T, 8>(b, conj, d),
        _ => unreachable!("no kernel has NR = {nr}"),
    }
}

/// Pack rows [i0, i0+m) x k [k0, k0+kc) of `a` into MR-high panels at `dst` (panel p at
/// p*MR*kc). A panel of a symmetric operand that meets the diagonal goes in three pieces
/// along k: the block left of the diagonal, the diagonal square element by element, the
/// block right of it.
unsafe fn pack_a<T: Scalar>(a: &Operand<T>, i0: usize, k0: usize, m: usize, kc: usize, mr: usize, dst: *mut T) {
    if let Some((v, cj)) = a.block(i0, k0, m, kc) {
        return pack_a_fast(v, cj, mr, dst);
    }
    for (p, r) in (0..m).step_by(mr).enumerate() {
        let (ra, rows) = (i0 + r, mr.min(m - r));
        let d = dst.add(p * mr * kc);
        if let Some((v, cj)) = a.block(ra, k0, rows, kc) {
            pack_a_fast(v, cj, mr, d);
            continue;
        }
        let kend = k0 + kc;
        let (da, db) = (ra.clamp(k0, kend), (ra + rows).clamp(k0, kend));
        for (ka, kb) in [(k0, da), (db, kend)] {
            if ka < kb {
                let (v, cj) = a.block(ra, ka, rows, kb - ka).expect("off the diagonal");
                pack_a_fast(v, cj, mr, d.add((ka - k0) * mr));
            }
        }
        for kk in da..db {
            for ii in 0..mr {
                *d.add((kk - k0) * mr + ii) = if ii < rows { a.get(ra + ii, kk) } else { T::zero() };
            }
        }
    }
}

/// Pack the NR-wide panels [p0, p1) of rows [k0, k0+kc) x columns [j0, j0+n) of `b` into
/// `dst` (panel p at p*NR*kc), a symmetric operand's diagonal pieces as in [`pack_a`].
#[allow(clippy::too_many_arguments)]
unsafe fn pack_b<T: Scalar>(
    b: &Operand<T>,
    k0: usize,
    j0: usize,
    kc: usize,
    n: usize,
    nr: usize,
    p0: usize,
    p1: usize,
    dst: *mut T,
) {
    // Off a symmetric operand's diagonal, all the panels at once: a transposed B (SYRK's
    // A^T, GEMM's op(B) = B^T) is then read one pass along each row of B^T for all of them.
    // Panel by panel, each walked its kc rows ld apart, a new page per step: DSYRK 512 on
    // one thread spent 19% of its time packing so.
    let (c0, c1) = (j0 + p0 * nr, (j0 + p1 * nr).min(j0 + n));
    if let Some((v, cj)) = b.block(k0, c0, kc, c1 - c0) {
        return pack_b_fast(v, cj, nr, dst.add(p0 * nr * kc));
    }
    for p in p0..p1 {
        let (ca, cols) = (j0 + p * nr, nr.min(n - p * nr));
        let d = dst.add(p * nr * kc);
        if let Some((v, cj)) = b.block(k0, ca, kc, cols) {
            pack_b_fast(v, cj, nr, d);
            continue;
        }
        let kend = k0 + kc;
        let (da, db) = (ca.clamp(k0, kend), (ca + cols).clamp(k0, kend));
        for (ka, kb) in [(k0, da), (db, kend)] {
            if ka < kb {
                let (v, cj) = b.block(ka, ca, kb - ka, cols).expect("off the diagonal");
                pack_b_fast(v, cj, nr, d.add((ka - k0) * nr));
            }
        }
        for kk in da..db {
            for jj in 0..nr {
                *d.add((kk - k0) * nr + jj) = if jj < cols { b.get(kk, ca + jj) } else { T::zero() };
            }
        }
    }
}

/// The product's k blocks for depth k: (count, size), equal blocks of at most KC.
fn k_blocks<T: Scalar>(mk: &Micro<T>, k: usize) -> (usize, usize) {
    let kc_n = k.div_ceil(blocks::<T>(mk.mr, mk.nr).kc);
    (kc_n, k.div_ceil(kc_n))
}

/// Counters of one step (one packed B block).
#[derive(Default)]
struct Step {
    pack_next: AtomicUsize,
    pack_done: AtomicUsize,
    task_next: AtomicUsize,
    task_done: AtomicUsize,
}

/// Wait until `c` reaches `n` (work another running thread has claimed).
#[inline]
fn wait_for(c: &AtomicUsize, n: usize) {
    wait_until(|| c.load(Acquire) >= n)
}

/// Spin, then yield, until `done()` (work another running thread has claimed).
#[inline]
fn wait_until(done: impl Fn() -> bool) {
    let mut spins = 0u32;
    while !done() {
        spins += 1;
        if spins < 4096 {
            std::hint::spin_loop();
        } else {
            std::thread::yield_now();
        }
    }
}

/// Whether the own kernels take `T` on this machine.
pub fn available<T: Scalar>() -> bool {
    micro::<T>().is_some()
}

/// C := alpha * conj_a?(A) * conj_b?(B) + beta*C on up to `t` threads, on the own kernels;
/// false (nothing touched) where this machine has none for T. With `tri`, only that triangle
/// of the square C is referenced.
///
/// # Safety
/// Views valid and consistent (a: m x k, b: k x n, c: m x n); C overlaps neither A nor B.
#[allow(clippy::too_many_arguments)]
pub unsafe fn gemm<T: Scalar>(
    t: usize,
    alpha: T,
    a: MatRef<T>,
    conj_a: bool,
    b: MatRef<T>,
    conj_b: bool,
    beta: T,
    c: MatMut<T>,
    tri: Option<Uplo>,
) -> bool {
    gemm_ops(t, alpha, Operand::plain(a, conj_a), Operand::plain(b, conj_b), beta, c, tri)
}

/// [`gemm`] on operands that may be symmetric matrices stored as one triangle.
///
/// # Safety
/// As [`gemm`], for the full matrices the operands stand for.
pub unsafe fn gemm_ops<T: Scalar>(
    t: usize,
    alpha: T,
    a: Operand<T>,
    b: Operand<T>,
    beta: T,
    c: MatMut<T>,
    tri: Option<Uplo>,
) -> bool {
    if c.rs != 1 && c.cs == 1 {
        // A row-major C (TRSM/TRMM from the right work on B^T) is the column-major C^T =
        // B^T A^T: the kernels store whole tiles only down contiguous columns, other tiles go
        // element by element (right-side DTRSM ran at 0.40-0.60x MKL that way).
        return gemm_ops(t, alpha, b.t(), a.t(), beta, c.t(), tri.map(Uplo::flip));
    }
    // In place only along k-contiguous columns: a row-major B walked down k touches a new
    // line per step, ld apart (a power-of-two ld maps them all to one L1 set); DSYRK, whose B is
    // X^T, ran at 0.37-0.59x MKL that way against 0.86-0.90x packed.
    let direct = b_in_place::<T>(t, b.sym.is_none() && !b.conj, b.m.rs, c.rows);
    gemm_impl(t, alpha, a, b, beta, c, tri, direct)
}

/// Bytes of A up to which a one-block product runs on the tiny kernels, unpacked
/// (`HYBLAS_GEMM_TINY_A_BYTES`; default half of L1).
static TINY_A_BYTES: Lazy<usize> = Lazy::new(|| crate::config::threshold("HYBLAS_GEMM_TINY_A_BYTES", caches().0 / 2));

/// Whether a `t`-thread product with C columns of `rows` reads B (`plain`: neither stored as
/// one triangle nor conjugated; `rs` its row stride) where it lies (see [`PACK_B_THREADS`]).
fn b_in_place<T>(t: usize, plain: bool, rs: isize, rows: usize) -> bool {
    let column_bytes = rows.saturating_mul(std::mem::size_of::<T>());
    plain && rs == 1 && (t < *PACK_B_THREADS || column_bytes <= *PACK_B_BYTES)
}

/// [`gemm_ops`] with B read where it lies (`direct`: a plain B, not conjugated) or packed.
#[allow(clippy::too_many_arguments)]
unsafe fn gemm_impl<T: Scalar>(
    t: usize,
    alpha: T,
    a: Operand<T>,
    b: Operand<T>,
    beta: T,
    c: MatMut<T>,
    tri: Option<Uplo>,
    direct: bool,
) -> bool {
    let Some(mk) = micro::<T>() else { return false };
    debug_assert!(!direct || (b.sym.is_none() && !b.conj));
    let (m, n, k) = (c.rows, c.cols, a.m.cols);
    debug_assert!(a.m.rows == m && b.m.rows == k && b.m.cols == n && k > 0);
    let Micro { mr, nr, .. } = mk;
    let bl = blocks::<T>(mr, nr);
    let (kc_n, kc) = k_blocks(&mk, k);
    let nc = bl.nc.min(n.div_ceil(nr) * nr);
    let nc_n = n.div_ceil(nc);
    let t = t.max(1);
    if t == 1 && kc_n == 1 && nc_n == 1 && tri.is_none() && m <= bl.mc {
        Small::setup(&mk, m, k, direct, b.conj).run(alpha, &a, &b, beta, c);
        return true;
    }

    // Row blocks [p0, p1) of register blocks, in the order tasks claim them, each at most MC
    // rows. On one thread: equal blocks (within one register block). On several, where C has
    // at least two register blocks of rows per task, by guided self-scheduling: each block
    // takes 1/target of the rows still left, so blocks shrink to one register block at the end
    // and threads that run at different speeds (another tenant on a core) finish together.
    // (Equal blocks, about TASKS_PER_THREAD per thread, left DGEMM 512 on this project's 2-vCPU
    // VM one thread with 12 register blocks and one with 10, or a thread slowed by the host
    // holding two of four blocks: medians of 4 alternating rounds 94.6 GFLOP/s equal, 105.2
    // guided, MKL 115.2.) Fewer rows: blocks of at least two register blocks, and each
    // block's columns in ranges too. (Rows alone left a 64-row DGEMM on 2 threads one 48-row
    // and one 16-row block: 53 GFLOP/s against MKL's 99.)
    let panels_m = m.div_ceil(mr);
    let max_p = (bl.mc / mr).max(1);
    let per = if tri.is_some() { 2 * *TASKS_PER_THREAD } else { *TASKS_PER_THREAD };
    let target = t * per;
    let mut nj = 1;
    let mut bounds = Vec::new();
    if t > 1 && panels_m >= 2 * target {
        let mut p0 = 0;
        while p0 < panels_m {
            let p1 = p0 + (panels_m - p0).div_ceil(target).min(max_p);
            bounds.push((p0, p1));
            p0 = p1;
        }
    } else {
        let mut mi = panels_m.div_ceil(max_p).max(1);
        if t > 1 {
            mi = mi.max(panels_m / 2).max(1);
            nj = target.div_ceil(mi);
        }
        let mi = mi.min(panels_m);
        bounds.extend((0..mi).map(|ib| (ib * panels_m / mi, (ib + 1) * panels_m / mi)));
    }
    let mi = bounds.len();
    // Rows of block ib: (first row, rows).
    let block = |ib: usize| {
        let (p0, p1) = bounds[ib];
        (p0 * mr, (p1 * mr).min(m) - p0 * mr)
    };
    let mc = bounds.iter().map(|&(p0, p1)| p1 - p0).max().unwrap_or(1) * mr;

    let steps: Vec<Step> = (0..kc_n * nc_n).map(|_| Step::default()).collect();
    let tasks = mi * nj;
    // Task q of step s updates the same block of C as task q of step s - 1: it waits for it.
    let done: Vec<AtomicBool> = (0..steps.len() * tasks).map(|_| AtomicBool::new(false)).collect();
    let b_elems = kc * nc;
    let run = |bufs: *mut T| {
        with_buf::<T, _>(&A_BUF, mc * kc, |ap| {
            // The (step, row block) this thread's A buffer holds.
            let mut held = usize::MAX;
            for (s, st) in steps.iter().enumerate() {
                let (jc, pc) = ((s / kc_n) * nc, (s % kc_n) * kc);
                let (ncur, kcur) = (nc.min(n - jc), kc.min(k - pc));
                let panels = ncur.div_ceil(nr);
                // Two B buffers: step s packs into the one step s - 2's tasks read.
                let bp = bufs.add((s % 2) * b_elems);
                if s >= 2 {
                    wait_for(&steps[s - 2].task_done, tasks);
                }
                let bsub = b.m.sub(pc, jc, kcur, ncur);
                // Read directly, B needs packing only from its partial last panel on.
                let from = if direct { ncur / nr } else { 0 };
                let chunk = (panels - from).div_ceil(4 * t).max(1);
                let chunks = (panels - from).div_ceil(chunk);
                loop {
                    let q = st.pack_next.fetch_add(1, AcqRel);
                    if q >= chunks {
                        break;
                    }
                    let (q0, q1) = (from + q * chunk, (from + (q + 1) * chunk).min(panels));
                    pack_b(&b, pc, jc, kcur, ncur, nr, q0, q1, bp);
                    st.pack_done.fetch_add(1, AcqRel);
                }
                wait_for(&st.pack_done, chunks);
                let beta_s = if pc == 0 { beta } else { T::one() };
                let per = panels.div_ceil(nj);
                loop {
                    let q = st.task_next.fetch_add(1, AcqRel);
                    if q >= tasks {
                        break;
                    }
                    let (ib, jb) = (q / nj, q % nj);
                    let ((i0, mcur), p0) = (block(ib), jb * per);
                    let p1 = ((jb + 1) * per).min(panels);
                    if p0 < p1 && !skip_block(tri, i0, mcur, jc + p0 * nr, (jc + p1 * nr).min(n)) {
                        let key = s * mi + ib;
                        if held != key {
                            pack_a(&a, i0, pc, mcur, kcur, mr, ap);
                            held = key;
                        }
                        if pc > 0 {
                            let prev = &done[(s - 1) * tasks + q];
                            wait_until(|| prev.load(Acquire));
                        }
                        let bd = BSource { packed: bp, direct: bsub, from };
                        macro_kernel(&mk, kcur, ap, &bd, alpha, beta_s, c, i0, mcur, jc, ncur, p0, p1, tri);
                    }
                    done[s * tasks + q].store(true, Release);
                    st.task_done.fetch_add(1, AcqRel);
                }
            }
        })
    };
    with_buf::<T, _>(&B_BUF, 2 * b_elems, |bufs| {
        let bufs = SendPtr(bufs);
        if t == 1 {
            run(bufs.0)
        } else {
            threads::for_each_part_inline(t, t, |_| run(bufs.get()))
        }
    });
    true
}

/// One-thread products of one block (k <= KC, m <= MC, n <= NC), set up once for any number
/// of products of that shape (a batch's group). The same packing and tiles in the same order as
/// [`gemm_impl`], so the same bits, without the step counters and task lists a threaded product
/// needs: their allocations and the block arithmetic were most of a small product's time (DGEMM
/// n = 4 took 259 ns on this project's VM, against OpenBLAS's 24 ns).
#[derive(Clone, Copy)]
pub struct Small<T> {
    mk: Micro<T>,
    direct: bool,
    /// The tiny kernel and its rows, where the product runs unpacked (see [`Small::new`]).
    tiny: Option<(usize, [super::micro::Tiny<T>; 2])>,
}

impl<T: Scalar> Small<T> {
    /// The set-up for m x n x k products (k > 0) with op(B) stored with row stride `b_rs` and
    /// conjugated or not; None where this machine's own kernels do not take T or the product
    /// spans more than one block (the blocked product then).
    pub fn new(m: usize, n: usize, k: usize, b_rs: isize, conj_b: bool) -> Option<Self> {
        let mk = micro::<T>()?;
        let bl = blocks::<T>(mk.mr, mk.nr);
        if k == 0 || k > bl.kc || m > bl.mc || n > bl.nc {
            return None;
        }
        Some(Small::setup(&mk, m, k, b_in_place::<T>(1, !conj_b, b_rs, m), conj_b))
    }

    fn setup(mk: &Micro<T>, m: usize, k: usize, direct: bool, conj_b: bool) -> Self {
        // Unpacked where A fits in half of L1 (it is read once per column of tiles from there).
        let a_bytes = m * k * std::mem::size_of::<T>();
        let tiny = (!conj_b && a_bytes <= *TINY_A_BYTES).then(|| mk.tiny_for(m));
        Small { mk: mk.for_rows(m), direct, tiny }
    }

    /// C := alpha * conj_a?(A) * conj_b?(B) + beta*C for one product of the shape (alpha != 0).
    ///
    /// # Safety
    /// As [`gemm`]; the views have the shape and B's row stride [`Small::new`] was given.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn product(
        &self,
        alpha: T,
        a: MatRef<T>,
        conj_a: bool,
        b: MatRef<T>,
        conj_b: bool,
        beta: T,
        c: MatMut<T>,
    ) {
        self.run(alpha, &Operand::plain(a, conj_a), &Operand::plain(b, conj_b), beta, c)
    }

    /// The tiny kernels' walk over products of the shape with these operands' strides, where
    /// the tiny kernels take them: A's columns and C's contiguous, nothing conjugated (they read
    /// the operands as they lie).
    pub fn tiles(&self, a: &MatRef<T>, ca: bool, b: &MatRef<T>, cb: bool, c: &MatMut<T>) -> Option<Tiles<T>> {
        let (mr, kernels) = self.tiny.filter(|_| !ca && !cb && a.rs == 1 && c.rs == 1)?;
        let (m, n, k) = (c.rows, c.cols, a.cols);
        Some(Tiles { m, n, k, mr, nr: self.mk.nr, kernels, lda: a.cs, b_rs: b.rs, b_cs: b.cs, ldc: c.cs })
    }

    unsafe fn run(&self, alpha: T, a: &Operand<T>, b: &Operand<T>, beta: T, c: MatMut<T>) {
        if a.sym.is_none() && b.sym.is_none() {
            if let Some(t) = self.tiles(&a.m, a.conj, &b.m, b.conj, &c) {
                return t.product(alpha, a.m.ptr, b.m.ptr, beta, c.ptr);
            }
        }
        self.packed(alpha, beta, 1, (false, false), |_| (*a, *b, c))
    }

    /// Products i < `count` of the shape (alpha != 0) on the packed path, operands `op(i)`, one
    /// after the other: A packed, B packed or read where it lies. Where every product reads the
    /// same A (`same.0`) or the same B (`same.1`), that operand is packed once for all of them (a
    /// batch of 64 x 8 x 256 products sharing A spent half its time packing A again).
    ///
    /// # Safety
    /// As [`Small::product`] for every product; `same` true only where the operand repeats.
    pub(super) unsafe fn packed(
        &self,
        alpha: T,
        beta: T,
        count: usize,
        (same_a, same_b): (bool, bool),
        op: impl Fn(usize) -> (Operand<T>, Operand<T>, MatMut<T>),
    ) {
        let mk = &self.mk;
        let Micro { mr, nr, .. } = *mk;
        // The shape (Small::new's), the same for every product.
        let (a0, _, c0) = op(0);
        let (m, n, k) = (c0.rows, c0.cols, a0.m.cols);
        let panels = n.div_ceil(nr);
        let from = if self.direct { n / nr } else { 0 };
        with_buf::<T, _>(&A_BUF, m.div_ceil(mr) * mr * k, |ap| {
            with_buf::<T, _>(&B_BUF, panels * nr * k, |bp| {
                for i in 0..count {
                    let (a, b, c) = op(i);
                    if i == 0 || !same_a {
                        pack_a(&a, 0, 0, m, k, mr, ap);
                    }
                    if from < panels && (i == 0 || !same_b) {
                        pack_b(&b, 0, 0, k, n, nr, from, panels, bp);
                    }
                    let bs = BSource { packed: bp, direct: b.m, from };
                    macro_kernel(mk, k, ap, &bs, alpha, beta, c, 0, m, 0, n, 0, panels, None);
                }
            })
        });
    }
}

/// Products of one shape and strides on the tiny kernels (see [`Small::tiles`]): the walk over
/// their tiles, set up once for a batch's run of them.
#[derive(Clone, Copy)]
pub struct Tiles<T> {
    m: usize,
    n: usize,
    k: usize,
    mr: usize,
    nr: usize,
    /// The kernels of NR and of NR/2 columns.
    kernels: [super::micro::Tiny<T>; 2],
    lda: isize,
    b_rs: isize,
    b_cs: isize,
    ldc: isize,
}

impl<T: Scalar> Tiles<T> {
    /// C := alpha * A B + beta * C for one product (alpha != 0) of operands at `a`, `b`, `c`.
    ///
    /// # Safety
    /// The operands hold the shape at the strides [`Small::tiles`] was given.
    #[inline]
    pub unsafe fn product(&self, alpha: T, a: *const T, b: *const T, beta: T, c: *mut T) {
        let Tiles { m, n, k, mr, nr, kernels, lda, b_rs, b_cs, ldc } = *self;
        let mut j = 0;
        while j < n {
            let w = nr.min(n - j);
            let tiny = kernels[(2 * w <= nr) as usize];
            let bj = b.offset(j as isize * b_cs);
            let mut i = 0;
            while i < m {
                tiny(
                    k,
                    a.add(i),
                    lda,
                    bj,
                    b_rs,
                    b_cs,
                    c.offset(i as isize + j as isize * ldc),
                    ldc,
                    mr.min(m - i),
                    w,
                    alpha,
                    beta,
                );
                i += mr;
            }
            j += nr;
        }
    }
}

/// A pointer handed to the threads of one call, each writing its own part of what it points to.
#[derive(Clone, Copy)]
pub(crate) struct SendPtr<T>(pub(crate) *mut T);
unsafe impl<T> Send for SendPtr<T> {}
unsafe impl<T> Sync for SendPtr<T> {}
impl<T> SendPtr<T> {
    pub(crate) fn get(&self) -> *mut T {
        self.0
    }
}

/// Whether the rows [i0, i0+h) x columns [j0, j1) of C lie wholly outside the triangle.
#[inline]
fn skip_block(tri: Option<Uplo>, i0: usize, h: usize, j0: usize, j1: usize) -> bool {
    match tri {
        None => false,
        // Lower: element (i, j) with i >= j. Outside when the last row is above the first column.
        Some(Uplo::Lower) => i0 + h <= j0,
        Some(Uplo::Upper) => i0 >= j1,
    }
}

/// Where a step's B panels are: panels from `from` on packed at `packed` (panel p at
/// p*NR*KC), those before it read from `direct` as it lies.
struct BSource<T> {
    packed: *const T,
    direct: MatRef<T>,
    from: usize,
}

/// Tiles of rows [i0, i0+mcur) of C against B panels [p0, p1) of the step at column jc.
#[allow(clippy::too_many_arguments)]
#[inline]
unsafe fn macro_kernel<T: Scalar>(
    mk: &Micro<T>,
    kcur: usize,
    ap: *const T,
    bs: &BSource<T>,
    alpha: T,
    beta: T,
    c: MatMut<T>,
    i0: usize,
    mcur: usize,
    jc: usize,
    ncur: usize,
    p0: usize,
    p1: usize,
    tri: Option<Uplo>,
) {
    let (mr, nr) = (mk.mr, mk.nr);
    // Written by the kernel before it is read; not zeroed (1.8 KB: 9% of a 4x4 DGEMM's time).
    let mut tile = std::mem::MaybeUninit::<[Line; 28]>::uninit();
    let tp = tile.as_mut_ptr() as *mut T;
    debug_assert!(mr * nr * std::mem::size_of::<T>() <= std::mem::size_of_val(&tile));
    for p in p0..p1 {
        let jt = jc + p * nr;
        let w = nr.min(jc + ncur - jt);
        let (kern, bpan, rsb, csb) = if p >= bs.from {
            (mk.kernel, bs.packed.add(p * nr * kcur), nr as isize, 1)
        } else {
            (mk.direct, bs.direct.ptr.offset((p * nr) as isize * bs.direct.cs), bs.direct.rs, bs.direct.cs)
        };
        // The panel after this one (this one again at the end), fetched into L2 meanwhile.
        let np = if p + 1 < p1 { p + 1 } else { p };
        let next = if np >= bs.from {
            bs.packed.add(np * nr * kcur)
        } else {
            bs.direct.ptr.offset((np * nr) as isize * bs.direct.cs)
        };
        for (q, it) in (i0..i0 + mcur).step_by(mr).enumerate() {
            let h = mr.min(i0 + mcur - it);
            let apan = ap.add(q * mr * kcur);
            // Triangle: skip tiles outside, write crossing tiles element by element.
            if skip_block(tri, it, h, jt, jt + w) {
                continue;
            }
            let crossing = match tri {
                None => false,
                Some(Uplo::Lower) => it < jt + w - 1,
                Some(Uplo::Upper) => it + h - 1 > jt,
            };
            let ct = c.ptr.offset(it as isize * c.rs + jt as isize * c.cs);
            if c.rs == 1 && !crossing {
                kern(kcur, apan, bpan, rsb, csb, ct, c.cs, h, w, alpha, beta, next);
                continue;
            }
            kern(kcur, apan, bpan, rsb, csb, tp, mr as isize, mr, nr, T::one(), T::zero(), next);
            for j in 0..w {
                for i in 0..h {
                    let inside = match tri {
                        None => true,
                        Some(Uplo::Lower) => it + i >= jt + j,
                        Some(Uplo::Upper) => it + i <= jt + j,
                    };
                    if !inside {
                        continue;
                    }
                    let d = ct.offset(i as isize * c.rs + j as isize * c.cs);
                    let v = alpha * *tp.add(j * mr + i);
                    *d = if beta.is_zero() { v } else { v + beta * *d };
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_complex::{Complex32, Complex64};

    /// Values in [-1, 1) from a seed (no dependency for a few numbers).
    fn fill<T: Scalar>(len: usize, seed: u64) -> Vec<T>
    where
        T::Real: Lossy,
    {
        let mut x = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        };
        (0..len).map(|_| T::from_parts(T::Real::from_f64_lossy(next()), T::Real::from_f64_lossy(next()))).collect()
    }

    trait Lossy {
        fn from_f64_lossy(x: f64) -> Self;
        fn to_f64(self) -> f64;
    }
    impl Lossy for f64 {
        fn from_f64_lossy(x: f64) -> f64 {
            x
        }
        fn to_f64(self) -> f64 {
            self
        }
    }
    impl Lossy for f32 {
        fn from_f64_lossy(x: f64) -> f32 {
            x as f32
        }
        fn to_f64(self) -> f64 {
            self as f64
        }
    }

    /// The error allowed per term of a sum for T, or None (said so) where this machine has no
    /// own kernels to test.
    fn tolerance<T: Scalar>() -> Option<f64> {
        if micro::<T>().is_none() {
            eprintln!("skipped: no AVX-512 kernels on this machine");
            return None;
        }
        Some(if std::mem::size_of::<T::Real>() == 4 { 1e-5 } else { 1e-13 })
    }

    /// Every path of the blocked product (B packed or read in place, several k and column
    /// blocks, edge tiles, 1-3 threads, transposed and conjugated operands, triangles, beta
    /// zero over NaN, a row-major C) against a plain triple loop.
    /// The same bits (NaN payloads included): an element outside the triangle is untouched.
    fn same_bits<T>(x: &T, y: &T) -> bool {
        let bytes = |v: &T| unsafe { std::slice::from_raw_parts(v as *const T as *const u8, std::mem::size_of::<T>()) };
        bytes(x) == bytes(y)
    }

    fn check<T: Scalar>(seed: u64)
    where
        T::Real: Lossy,
    {
        let Some(eps) = tolerance::<T>() else { return };
        let mut case = 0u64;
        for &(m, n, k) in &[
            (1usize, 1usize, 1usize),
            (37, 29, 1100),
            (100, 9, 700),
            (5, 300, 513),
            (75, 75, 40),
            (400, 40, 30),
            (400, 400, 4),
        ] {
            for (ta, tb) in [(false, false), (true, false), (false, true), (true, true)] {
                for (ca, cb) in [(false, false), (true, true), (false, true)] {
                    if !T::IS_COMPLEX && (ca || cb) {
                        continue;
                    }
                    for tri in [None, Some(Uplo::Lower), Some(Uplo::Upper)] {
                        if tri.is_some() && m != n {
                            continue;
                        }
                        // rowc: C row-major, through `gemm` (which turns it into C^T = B^T A^T).
                        for (t, direct, rowc) in
                            [(1, false, false), (1, true, false), (2, true, false), (3, false, false), (2, false, true)]
                        {
                            if direct && cb {
                                continue;
                            }
                            case += 1;
                            let av: Vec<T> = fill(m * k, seed + case);
                            let bv: Vec<T> = fill(k * n, seed + 1000 + case);
                            let c0: Vec<T> = fill(m * n, seed + 2000 + case);
                            let a = if ta {
                                MatRef::col_major(av.as_ptr(), k, m, k).t()
                            } else {
                                MatRef::col_major(av.as_ptr(), m, k, m)
                            };
                            let b = if tb {
                                MatRef::col_major(bv.as_ptr(), n, k, n).t()
                            } else {
                                MatRef::col_major(bv.as_ptr(), k, n, k)
                            };
                            let (alpha, beta) = (
                                T::from_parts(T::Real::from_f64_lossy(0.75), T::Real::from_f64_lossy(-0.5)),
                                if case.is_multiple_of(3) { T::zero() } else { T::from_f64(1.25) },
                            );
                            let mut c = c0.clone();
                            if beta.is_zero() {
                                // beta = 0: C is not read, NaN there must not come through.
                                for (i, x) in c.iter_mut().enumerate() {
                                    if i % 7 == 0 {
                                        *x = T::from_f64(f64::NAN);
                                    }
                                }
                            }
                            let given = c.clone();
                            let at = |i: usize, j: usize| if rowc { i * n + j } else { i + j * m };
                            if rowc {
                                let cv = MatMut::col_major(c.as_mut_ptr(), n, m, n).t();
                                assert!(unsafe { gemm(t, alpha, a, ca, b, cb, beta, cv, tri) });
                            } else {
                                let cv = MatMut::col_major(c.as_mut_ptr(), m, n, m);
                                assert!(unsafe {
                                    gemm_impl(
                                        t,
                                        alpha,
                                        Operand::plain(a, ca),
                                        Operand::plain(b, cb),
                                        beta,
                                        cv,
                                        tri,
                                        direct,
                                    )
                                });
                            }
                            for j in 0..n {
                                for i in 0..m {
                                    let inside = match tri {
                                        None => true,
                                        Some(Uplo::Lower) => i >= j,
                                        Some(Uplo::Upper) => i <= j,
                                    };
                                    let got = c[at(i, j)];
                                    if !inside {
                                        assert!(same_bits(&got, &given[at(i, j)]), "outside the triangle written: {} {m}x{n}x{k} ({i},{j}) tri={tri:?} t={t} direct={direct} rowc={rowc} ta={ta} tb={tb}", T::PREFIX);
                                        continue;
                                    }
                                    let mut s = T::zero();
                                    for p in 0..k {
                                        s += unsafe { a.get(i, p).conj_if(ca) * b.get(p, j).conj_if(cb) };
                                    }
                                    let want = alpha * s + if beta.is_zero() { T::zero() } else { beta * c0[at(i, j)] };
                                    let err = (got - want).abs1().to_f64();
                                    assert!(err <= eps * (k as f64 + 4.0), "{} {m}x{n}x{k} ta={ta} tb={tb} ca={ca} cb={cb} tri={tri:?} t={t} direct={direct} rowc={rowc} ({i},{j}): {got:?} vs {want:?}", T::PREFIX);
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn blocked_product_matches_a_triple_loop() {
        check::<f64>(1);
        check::<f32>(2);
        check::<Complex64>(3);
        check::<Complex32>(4);
    }

    /// A symmetric (Hermitian) operand packed from its stored triangle, on either side, both
    /// triangles, several k blocks, 1-3 threads, a row-major C, against the product with the
    /// full matrix built here. The other triangle holds NaN (never read) and a Hermitian
    /// diagonal a non-zero imaginary part (taken as zero).
    fn check_symmetric<T: Scalar>(seed: u64)
    where
        T::Real: Lossy,
    {
        let Some(eps) = tolerance::<T>() else { return };
        let mut case = 0u64;
        for &(m, n) in &[(600usize, 9usize), (7, 530), (50, 50), (1, 1)] {
            for left in [true, false] {
                for uplo in [Uplo::Lower, Uplo::Upper] {
                    for herm in [false, true] {
                        if herm && !T::IS_COMPLEX {
                            continue;
                        }
                        for (t, rowc) in [(1, false), (3, false), (2, true)] {
                            case += 1;
                            let na = if left { m } else { n };
                            let mut sv: Vec<T> = fill(na * na, seed + case);
                            let mut full = sv.clone();
                            for j in 0..na {
                                for i in 0..na {
                                    let stored = if uplo == Uplo::Lower { i >= j } else { i <= j };
                                    full[i + j * na] = if i == j && herm {
                                        T::from_real(sv[i + i * na].re())
                                    } else if stored {
                                        sv[i + j * na]
                                    } else {
                                        sv[j + i * na].conj_if(herm)
                                    };
                                }
                            }
                            for j in 0..na {
                                for i in 0..na {
                                    if (uplo == Uplo::Lower && i < j) || (uplo == Uplo::Upper && i > j) {
                                        sv[i + j * na] = T::from_f64(f64::NAN);
                                    }
                                }
                            }
                            let bv: Vec<T> = fill(m * n, seed + 1000 + case);
                            let b = MatRef::col_major(bv.as_ptr(), m, n, m);
                            let s = Operand::symmetric(MatRef::col_major(sv.as_ptr(), na, na, na), uplo, herm);
                            let alpha = T::from_parts(T::Real::from_f64_lossy(0.75), T::Real::from_f64_lossy(-0.5));
                            let beta = T::from_f64(1.25);
                            let c0: Vec<T> = fill(m * n, seed + 2000 + case);
                            let mut c = c0.clone();
                            let at = |i: usize, j: usize| if rowc { i * n + j } else { i + j * m };
                            let cv = if rowc {
                                MatMut::col_major(c.as_mut_ptr(), n, m, n).t()
                            } else {
                                MatMut::col_major(c.as_mut_ptr(), m, n, m)
                            };
                            let (x, y) =
                                if left { (s, Operand::plain(b, false)) } else { (Operand::plain(b, false), s) };
                            assert!(unsafe { gemm_ops(t, alpha, x, y, beta, cv, None) });
                            let kk = na;
                            for j in 0..n {
                                for i in 0..m {
                                    let mut acc = T::zero();
                                    for p in 0..kk {
                                        acc += if left {
                                            full[i + p * na] * bv[p + j * m]
                                        } else {
                                            bv[i + p * m] * full[p + j * na]
                                        };
                                    }
                                    let want = alpha * acc + beta * c0[at(i, j)];
                                    let got = c[at(i, j)];
                                    let err = (got - want).abs1().to_f64();
                                    assert!(err <= eps * (kk as f64 + 4.0), "{} {m}x{n} left={left} {uplo:?} herm={herm} t={t} rowc={rowc} ({i},{j}): {got:?} vs {want:?}", T::PREFIX);
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// The one-block products (`Small`): the tiny kernels (operands where they lie), the packed
    /// short and full tiles, against each other bit for bit (every kernel must give an element
    /// the same bits, which is what lets a product of any size take any of them) and against a
    /// plain loop. Sizes around every tile edge (1-3 vectors of rows, fewer columns than NR),
    /// padded leading dimensions whose padding must stay untouched, beta 0 over NaN.
    fn check_small<T: Scalar>(seed: u64)
    where
        T::Real: Lossy,
    {
        let Some(eps) = tolerance::<T>() else { return };
        let mk = micro::<T>().expect("checked by tolerance");
        let sizes = [1usize, 2, 3, 4, 5, 7, 8, 9, 13, 16, 17, 24, 25, 31, 33, 48, 49, 100, 191];
        let nan = T::from_f64(f64::NAN);
        let mut case = 0u64;
        for &m in &sizes {
            for &n in &sizes {
                for k in [1usize, 3, 8, 17, 130, 511] {
                    case += 1;
                    let (ta, tb) = (case % 4 >= 2, case % 2 == 1);
                    let (ca, cb) = (T::IS_COMPLEX && case.is_multiple_of(3), T::IS_COMPLEX && case.is_multiple_of(5));
                    let beta = if case.is_multiple_of(2) {
                        T::zero()
                    } else {
                        T::from_parts(T::Real::from_f64_lossy(0.5), T::Real::from_f64_lossy(0.25))
                    };
                    let alpha = T::from_parts(T::Real::from_f64_lossy(-1.5), T::Real::from_f64_lossy(0.75));
                    // Stored shapes, with leading dimensions padded by 3.
                    let (ar, ac) = if ta { (k, m) } else { (m, k) };
                    let (br, bc) = if tb { (n, k) } else { (k, n) };
                    let (lda, ldb, ldc) = (ar + 3, br + 3, m + 3);
                    let av: Vec<T> = fill(lda * ac, seed * 1000 + case);
                    let bv: Vec<T> = fill(ldb * bc, seed * 2000 + case);
                    let mut c0: Vec<T> = fill(ldc * n, seed * 3000 + case);
                    if beta.is_zero() {
                        c0.iter_mut().enumerate().filter(|(i, _)| i % ldc < m).for_each(|(_, x)| *x = nan);
                    }
                    let a = {
                        let v = MatRef::col_major(av.as_ptr(), ar, ac, lda);
                        Operand::plain(if ta { v.t() } else { v }, ca)
                    };
                    let b = {
                        let v = MatRef::col_major(bv.as_ptr(), br, bc, ldb);
                        Operand::plain(if tb { v.t() } else { v }, cb)
                    };
                    let run = |small: Small<T>| {
                        let mut c = c0.clone();
                        unsafe { small.run(alpha, &a, &b, beta, MatMut::col_major(c.as_mut_ptr(), m, n, ldc)) };
                        c
                    };
                    let direct = b_in_place::<T>(1, !cb, b.m.rs, m);
                    let tiny = Small::setup(&mk, m, k, direct, cb);
                    let got = run(tiny);
                    for packed in [Small { tiny: None, ..tiny }, Small { mk, direct, tiny: None }] {
                        let want = run(packed);
                        let diff = got.iter().zip(&want).position(|(x, y)| !same_bits(x, y));
                        assert!(
                            diff.is_none(),
                            "{} {m}x{n}x{k} ta={ta} tb={tb} ca={ca} cb={cb} tiny={} mr={}: element {diff:?} differs",
                            T::PREFIX,
                            tiny.tiny.is_some(),
                            packed.mk.mr
                        );
                    }
                    for j in 0..n {
                        for i in 0..ldc {
                            let got = got[i + j * ldc];
                            if i >= m {
                                assert!(
                                    same_bits(&got, &c0[i + j * ldc]),
                                    "{} {m}x{n}x{k}: padding ({i},{j}) written",
                                    T::PREFIX
                                );
                                continue;
                            }
                            let mut acc = T::zero();
                            for p in 0..k {
                                acc += unsafe { a.get(i, p) * b.get(p, j) };
                            }
                            let old = if beta.is_zero() { T::zero() } else { beta * c0[i + j * ldc] };
                            let want = alpha * acc + old;
                            let err = (got - want).abs1().to_f64();
                            assert!(
                                err <= eps * (k as f64 + 4.0),
                                "{} {m}x{n}x{k} ta={ta} tb={tb} ({i},{j}): {got:?} vs {want:?}",
                                T::PREFIX
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn small_products_give_the_blocked_products_bits() {
        check_small::<f64>(21);
        check_small::<f32>(22);
        check_small::<Complex64>(23);
        check_small::<Complex32>(24);
    }

    #[test]
    fn symmetric_operand_packed_from_its_triangle() {
        check_symmetric::<f64>(11);
        check_symmetric::<f32>(12);
        check_symmetric::<Complex64>(13);
        check_symmetric::<Complex32>(14);
    }
}
