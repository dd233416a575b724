//! TRMV on the GPU (every uplo/trans/diag, load-balanced as in seed 004): host side of
//! `kernels/trmv.cu`.
//!
//! One call enqueues: `trmv_gather` (only for a strided or misaligned x: packs it into the
//! workspace), pass 1 (`trmv_n` or `trmv_t`: partial sums of fixed pieces of the triangle into
//! the workspace) and pass 2 (`trmv_sum`: each element's partials in a fixed order, written to
//! x). The pieces depend only on n and the SM count (`n_plan`, `t_plan`), so the result is
//! bitwise the same for every block shape the tuner picks.

use super::kernels::{Args, Family, Function, Launch};
use super::tune::{self, KernelSpec, TuneCase};
use super::{cdiv, elem, DMat, DVec, DeviceBuffer, Exec, GpuError, Result, Runtime};
use crate::types::{Diag, Scalar, Trans, Uplo};
use once_cell::sync::Lazy;
use std::sync::Arc;

/// Strands per panel of `trmv_n` (`TRMV_G` in the kernel; part of the summation order).
pub const STRANDS: i64 = 8;
/// No-trans: work items (one thread's V rows times one strand) aimed at per SM. About two
/// waves of resident threads: enough loads in flight, and partial sums per row stay few.
/// `HYBLAS_TRMV_N_ITEMS` overrides it (it fixes the summation order).
pub static N_ITEMS_PER_SM: Lazy<u64> =
    Lazy::new(|| crate::config::threshold("HYBLAS_TRMV_N_ITEMS", 2048).max(1) as u64);
/// Strand width bounds in columns (a multiple of 8, the kernel's unrolled step).
pub const SW_MIN: i64 = 16;
/// The widest strand. Past it the tile count grows with n^2 instead of staying near the target,
/// and a count just over one wave leaves a partial second wave of large tiles running nearly
/// alone: with 256, ZTRMV-LNN (the only case that reached the cap below n = 16384) fell from
/// 4351 GB/s at n = 11776 to 3601 at 13312 on an H200; with 512 it holds 4195-4377 from 12288
/// to 16384 (session 9). `HYBLAS_TRMV_SW_MAX` overrides it (it fixes the summation order).
pub static SW_MAX: Lazy<i64> =
    Lazy::new(|| round_up(crate::config::threshold("HYBLAS_TRMV_SW_MAX", 512) as i64, 8).max(SW_MIN));
/// Trans: warps (one column times one segment) aimed at per SM: about two waves.
/// `HYBLAS_TRMV_T_WARPS` overrides it (it fixes the summation order).
pub static T_WARPS_PER_SM: Lazy<u64> = Lazy::new(|| crate::config::threshold("HYBLAS_TRMV_T_WARPS", 128).max(1) as u64);
/// Trans, double: where the column stride (lda times 8 bytes) is a multiple of this many bytes,
/// the staggered kernel `trmv_ts` runs, whose columns walk their stripes from a start staggered
/// by the column index (see `kernels/trmv.cu`): on an H200 it took DTRMV-UTN 16384 (a 128 KiB
/// stride) from 256.4 to 245.8 us (4.1-4.3% in three runs on three machines). Complex double
/// at such strides gained 3.5% in one run and lost 2-3% in another (ZTRMV-UTN 8192 and
/// 16384), so it keeps the plain kernel. `HYBLAS_TRMV_T_STAGGER` sets the multiple (0: never);
/// it fixes the summation order, with lda.
pub static T_STAGGER_BYTES: Lazy<i64> =
    Lazy::new(|| crate::config::threshold("HYBLAS_TRMV_T_STAGGER", 128 << 10) as i64);

/// Whether a trans TRMV of T with leading dimension `lda` runs the staggered kernel.
pub fn t_staggered<T: Scalar>(lda: i64) -> bool {
    let m = *T_STAGGER_BYTES;
    T::PREFIX == 'd' && m > 0 && (lda * 8) % m == 0
}

/// The longest segment, in stripes of 32*V rows.
pub const SEG_MAX_STRIPES: i64 = 64;

/// Flag bits of the kernels (`TRMV_UPPER` ... in the kernel).
const F_UPPER: i32 = 1;
const F_UNIT: i32 = 2;
const F_CONJ: i32 = 4;
const F_VEC: i32 = 8;

/// Dynamic shared memory the launch may use without opting in.
const SMEM_DEFAULT_MAX: u32 = 48 << 10;

/// `trmv_n`: tx threads along rows (V rows each), ty along the panel's strands. Measured on
/// an H200 over every shape of tx 32..256, ty 1..8 (`scripts/gpu-scan.sh shapes`, n = 2048..
/// 11264, s/d/z): the best was always tx 32 or 64 with ty 4 or 8. Wider tiles make so few
/// blocks at large n that SMs hold one or two (ZTRMV 10240: 233 us at the shape the rule then
/// picked, 198 us at 64x4); fewer strands per block make each thread walk several in turn.
pub static TRMV_N: KernelSpec = KernelSpec { name: "trmv_n", tx: &[32, 64], ty: &[4, 8], smem: n_smem };
/// `trmv_t`: one warp per (column, segment); ty warps per block. The same scan found ty 1..4
/// best everywhere and ty 1 up to 35% slower at n <= 2304 (DTRMV-UTN 2048: 17.1 vs 12.6 us).
pub static TRMV_T: KernelSpec = KernelSpec { name: "trmv_t", tx: &[32], ty: &[2, 4], smem: tune::no_smem };
/// Pass 2 and the x packing: one element per thread.
pub static TRMV_SUM: KernelSpec =
    KernelSpec { name: "trmv_sum", tx: &[64, 128, 256, 512, 1024], ty: &[1], smem: tune::no_smem };
pub static TRMV_GATHER: KernelSpec =
    KernelSpec { name: "trmv_gather", tx: &[64, 128, 256, 512, 1024], ty: &[1], smem: tune::no_smem };

/// The strand sums of a block: STRANDS x (tx*V rows) elements, 16 bytes per V rows.
fn n_smem(tx: u32, _ty: u32, _elem: u32) -> u32 {
    STRANDS as u32 * tx * 16
}

/// Elements per 16-byte load.
fn per16<T>() -> i64 {
    16 / std::mem::size_of::<T>() as i64
}

fn round_up(x: i64, m: i64) -> i64 {
    cdiv(x, m) * m
}

/// No-trans decomposition for n, V elements per 16 bytes and `sms` SMs: (strand width sw,
/// panels np); a panel is STRANDS*sw columns.
pub fn n_plan(n: i64, v: i64, sms: u32) -> (i64, i64) {
    let target = sms.max(1) as u128 * *N_ITEMS_PER_SM as u128;
    let sw = (n as u128 * n as u128 / (2 * v as u128 * target)).min(*SW_MAX as u128) as i64;
    let sw = round_up(sw.max(1), 8).clamp(SW_MIN, *SW_MAX);
    (sw, cdiv(n, STRANDS * sw))
}

/// Tiles of `rb` rows in panel p (lower: rows [p*cp, n); upper: rows [0, (p+1)*cp)).
pub fn n_tiles(upper: bool, n: i64, cp: i64, rb: i64, p: i64) -> i64 {
    let rows = if upper { n.min((p + 1) * cp) } else { n - p * cp };
    cdiv(rows, rb)
}

/// Blocks per pair of panels (q, np-1-q): the most any pair needs.
pub fn n_per_pair(upper: bool, n: i64, cp: i64, rb: i64, np: i64) -> i64 {
    (0..cdiv(np, 2))
        .map(|q| {
            let other = np - 1 - q;
            n_tiles(upper, n, cp, rb, q) + if other != q { n_tiles(upper, n, cp, rb, other) } else { 0 }
        })
        .max()
        .unwrap_or(0)
}

/// Trans decomposition: (segment length seg in rows, a multiple of the 32*V-row stripe;
/// segments nseg).
pub fn t_plan(n: i64, v: i64, sms: u32) -> (i64, i64) {
    let stripe = 32 * v;
    let target = sms.max(1) as u128 * *T_WARPS_PER_SM as u128;
    let seg = (n as u128 * n as u128 / (2 * target)).min((SEG_MAX_STRIPES * stripe) as u128) as i64;
    let seg = round_up(seg.max(1), stripe).clamp(stripe, SEG_MAX_STRIPES * stripe);
    (seg, cdiv(n, seg))
}

/// Columns that cross segment r (lower: [0, min(n, (r+1)*seg)); upper: [r*seg, n)).
pub fn t_cols(upper: bool, n: i64, seg: i64, r: i64) -> i64 {
    if upper {
        n - r * seg
    } else {
        n.min((r + 1) * seg)
    }
}

/// Warps per pair of segments (r, nseg-1-r): the most any pair needs.
pub fn t_per_pair(upper: bool, n: i64, seg: i64, nseg: i64) -> i64 {
    (0..cdiv(nseg, 2))
        .map(|q| {
            let other = nseg - 1 - q;
            t_cols(upper, n, seg, q) + if other != q { t_cols(upper, n, seg, other) } else { 0 }
        })
        .max()
        .unwrap_or(0)
}

/// A 1-D grid of `blocks` blocks, or Unsupported past the hardware limit.
fn grid(blocks: i64) -> Result<(u32, u32, u32)> {
    if blocks > i32::MAX as i64 {
        return Err(GpuError::Unsupported("trmv: grid too large"));
    }
    Ok((blocks as u32, 1, 1))
}

/// A one-element-per-thread launch (pass 2, the packing) of n elements; pass 2 (`dependent`)
/// as a programmatic dependent launch of pass 1.
fn launch_elementwise<T: Scalar>(
    ex: &Exec,
    f: &Function,
    spec: &'static KernelSpec,
    n: i64,
    args: &mut Args,
    dependent: bool,
) -> Result<()> {
    let units = n as u64;
    let blocks = |tx: u32, ty: u32| units.div_ceil((tx * ty) as u64);
    let (tx, ty) = tune::choose(ex.rt, f, spec, T::PREFIX, elem::<T>(), tune::size_class(units), blocks);
    // These passes touch only n elements (a few partials each).
    let tx = tune::spread_over_sms(tx, 64, ex.rt.props.sm_count, |tx| blocks(tx, ty));
    let threads = (tx * ty) as i64;
    let l = Launch { grid: grid(cdiv(n, threads))?, block: (tx, ty, 1), smem: 0 };
    if dependent {
        f.launch_dependent(l, ex.stream, args, ex.rt.props.cc)
    } else {
        f.launch(l, ex.stream, args)
    }
}

/// x := op(A)*x, A n x n triangular column-major; op = N, T or C.
pub fn trmv<T: Scalar>(ex: &Exec, uplo: Uplo, trans: Trans, diag: Diag, n: i64, a: DMat, x: DVec) -> Result<()> {
    if n <= 0 {
        return Ok(());
    }
    if x.inc == 0 || a.ld < n {
        return Err(GpuError::Unsupported("trmv: lda < n or incx == 0"));
    }
    let es = std::mem::size_of::<T>() as i64;
    let v = per16::<T>();
    let upper = uplo == Uplo::Upper;
    let notrans = trans == Trans::No;
    let vec = a.aligned16::<T>();
    let flags = if upper { F_UPPER } else { 0 }
        | if diag == Diag::Unit { F_UNIT } else { 0 }
        | if trans == Trans::ConjTrans && T::IS_COMPLEX { F_CONJ } else { 0 }
        | if vec { F_VEC } else { 0 };
    let sms = ex.rt.props.sm_count;
    let (width, parts) = if notrans { n_plan(n, v, sms) } else { t_plan(n, v, sms) };

    // Workspace: [packed x (if needed)][partials: parts x n].
    let gather = x.inc != 1 || !x.ptr.is_multiple_of(16);
    let xc_bytes = if gather { round_up(n * es, 256) } else { 0 };
    let w_bytes = parts * n * es;
    let scratch = ex.rt.scratch(ex.stream);
    let mut s = scratch.lock();
    let ws = s.workspace((xc_bytes + w_bytes) as usize)?;
    let xc = if gather { ws } else { x.ptr };
    let w = ws + xc_bytes as u64;

    if gather {
        let f = ex.function::<T>(Family::Trmv, "trmv_gather")?;
        let mut args = Args::new();
        args.arg(n).arg(x.ptr).arg(x.inc).arg(xc);
        launch_elementwise::<T>(ex, &f, &TRMV_GATHER, n, &mut args, false)?;
    }

    // Pass 1.
    let class = tune::size_class(n as u64);
    if notrans {
        let (sw, np) = (width, parts);
        let cp = STRANDS * sw;
        let npairs = cdiv(np, 2);
        let f = ex.function::<T>(Family::Trmv, "trmv_n")?;
        let (mut tx, mut ty) = tune::choose(ex.rt, &f, &TRMV_N, T::PREFIX, elem::<T>(), class, |tx, _| {
            (npairs * n_per_pair(upper, n, cp, tx as i64 * v, np)) as u64
        });
        // A forced shape too wide for the default shared memory keeps its thread count.
        while tx > 32 && n_smem(tx, ty, 0) > SMEM_DEFAULT_MAX {
            tx /= 2;
            ty *= 2;
        }
        let per_pair = n_per_pair(upper, n, cp, tx as i64 * v, np);
        let l = Launch { grid: grid(npairs * per_pair)?, block: (tx, ty, 1), smem: n_smem(tx, ty, 0) };
        let mut args = Args::new();
        args.arg(n).arg(a.ptr).arg(a.ld).arg(xc).arg(w).arg(sw).arg(np).arg(per_pair).arg(flags);
        f.launch(l, ex.stream, &mut args)?;
    } else {
        let (seg, nseg) = (width, parts);
        let npairs = cdiv(nseg, 2);
        let per_pair = t_per_pair(upper, n, seg, nseg);
        let warps = npairs * per_pair;
        let f = ex.function::<T>(Family::Trmv, if t_staggered::<T>(a.ld) { "trmv_ts" } else { "trmv_t" })?;
        let (mut tx, mut ty) = tune::choose(ex.rt, &f, &TRMV_T, T::PREFIX, elem::<T>(), class, |tx, ty| {
            (warps as u64).div_ceil((tx * ty / 32).max(1) as u64)
        });
        // The kernel works in whole warps.
        if (tx * ty) % 32 != 0 {
            (tx, ty) = (32, (tx * ty).div_ceil(32));
        }
        let wpb = (tx * ty / 32) as i64;
        let l = Launch { grid: grid(cdiv(warps, wpb))?, block: (tx, ty, 1), smem: 0 };
        let mut args = Args::new();
        args.arg(n).arg(a.ptr).arg(a.ld).arg(xc).arg(w).arg(seg).arg(nseg).arg(per_pair).arg(flags);
        f.launch(l, ex.stream, &mut args)?;
    }

    // Pass 2: lower no-trans and upper trans rows take parts [0, i/part_width]; the others
    // [i/part_width, parts). A part is a panel (no-trans) or a segment (trans).
    let from_start = (notrans != upper) as i32;
    let part_width = if notrans { STRANDS * width } else { width };
    let f = ex.function::<T>(Family::Trmv, "trmv_sum")?;
    let mut args = Args::new();
    args.arg(n).arg(w).arg(part_width).arg(parts).arg(from_start).arg(x.ptr).arg(x.inc);
    launch_elementwise::<T>(ex, &f, &TRMV_SUM, n, &mut args, true)?;
    drop(s);
    Ok(())
}

/// The cases `hyblas tune` measures for this family: `?trmv_n` and `?trmv_t` (lower,
/// non-unit) at n = 8192 for the four precisions.
pub fn tune_cases(rt: &'static Runtime) -> Result<Vec<TuneCase>> {
    let mut v = Vec::new();
    v.extend(cases::<f32>(rt)?);
    v.extend(cases::<f64>(rt)?);
    v.extend(cases::<crate::types::C32>(rt)?);
    v.extend(cases::<crate::types::C64>(rt)?);
    Ok(v)
}

fn cases<T: Scalar>(rt: &'static Runtime) -> Result<[TuneCase; 2]> {
    let n: i64 = 8192;
    let es = std::mem::size_of::<T>();
    // One matrix per precision shared by both cases; its contents do not change the timing.
    let a = Arc::new(DeviceBuffer::new(n as usize * n as usize * es)?);
    let ex = Exec::own(rt);
    let case = |trans: Trans, spec: &'static KernelSpec, kernel: &'static str| -> Result<TuneCase> {
        let x = DeviceBuffer::new(n as usize * es)?;
        x.write(&vec![T::one(); n as usize])?;
        let timer = super::timing::Timer::new(ex.stream)?;
        let a = a.clone();
        Ok(TuneCase {
            key: format!("{}{}", T::PREFIX, spec.name),
            spec,
            func: ex.function::<T>(Family::Trmv, kernel)?,
            elem: elem::<T>(),
            run: Box::new(move || {
                let ex = Exec::own(rt);
                let am = DMat { ptr: a.ptr, ld: n };
                let xv = DVec { ptr: x.ptr, inc: 1 };
                timer.median(2, 10, &mut || trmv::<T>(&ex, Uplo::Lower, trans, Diag::NonUnit, n, am, xv))
            }),
        })
    };
    Ok([case(Trans::No, &TRMV_N, "trmv_n")?, case(Trans::Trans, &TRMV_T, "trmv_t")?])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every element of the triangle lies in exactly one (panel, tile) of the no-trans walk
    /// over pairs, for the tile heights the shapes give.
    #[test]
    fn n_pairs_cover_the_triangle_once() {
        for &(n, v, sms) in
            &[(1i64, 4i64, 132u32), (17, 4, 132), (300, 2, 132), (1000, 1, 4), (4097, 4, 132), (777, 2, 1)]
        {
            let (sw, np) = n_plan(n, v, sms);
            let cp = STRANDS * sw;
            for upper in [false, true] {
                for rb in [32 * v, 256 * v] {
                    let per_pair = n_per_pair(upper, n, cp, rb, np);
                    let mut seen = vec![0u8; (n * n) as usize];
                    for b in 0..cdiv(np, 2) * per_pair {
                        let q = b / per_pair;
                        let mut t = b % per_pair;
                        let mut p = q;
                        let first = n_tiles(upper, n, cp, rb, q);
                        if t >= first {
                            p = np - 1 - q;
                            t -= first;
                            if p == q || t >= n_tiles(upper, n, cp, rb, p) {
                                continue;
                            }
                        }
                        let row0 = if upper { 0 } else { p * cp } + t * rb;
                        let row1 = (if upper { n.min((p + 1) * cp) } else { n }).min(row0 + rb);
                        for i in row0..row1 {
                            for j in p * cp..n.min((p + 1) * cp) {
                                if (upper && i <= j) || (!upper && i >= j) {
                                    seen[(i * n + j) as usize] += 1;
                                }
                            }
                        }
                    }
                    for i in 0..n {
                        for j in 0..n {
                            let want = ((upper && i <= j) || (!upper && i >= j)) as u8;
                            assert_eq!(seen[(i * n + j) as usize], want, "n={n} upper={upper} rb={rb} ({i},{j})");
                        }
                    }
                }
            }
        }
    }

    /// Every (column, segment) pair that holds triangle elements is visited exactly once by
    /// the trans walk over pairs.
    #[test]
    fn t_pairs_cover_every_column_segment_once() {
        for &(n, v, sms) in
            &[(1i64, 4i64, 132u32), (17, 4, 132), (300, 2, 132), (1000, 1, 4), (4097, 4, 132), (777, 2, 1)]
        {
            let (seg, nseg) = t_plan(n, v, sms);
            assert_eq!(seg % (32 * v), 0);
            for upper in [false, true] {
                let per_pair = t_per_pair(upper, n, seg, nseg);
                let mut seen = vec![0u8; (n * nseg) as usize];
                for wid in 0..cdiv(nseg, 2) * per_pair {
                    let q = wid / per_pair;
                    let mut u = wid % per_pair;
                    let mut r = q;
                    let first = t_cols(upper, n, seg, q);
                    if u >= first {
                        r = nseg - 1 - q;
                        u -= first;
                        if r == q || u >= t_cols(upper, n, seg, r) {
                            continue;
                        }
                    }
                    let j = if upper { r * seg + u } else { u };
                    seen[(r * n + j) as usize] += 1;
                }
                for r in 0..nseg {
                    for j in 0..n {
                        let (s0, s1) = (r * seg, n.min((r + 1) * seg));
                        let want = if upper { j >= s0 } else { j < s1 } as u8;
                        assert_eq!(seen[(r * n + j) as usize], want, "n={n} upper={upper} r={r} j={j}");
                    }
                }
            }
        }
    }

    #[test]
    fn plans_scale_with_n() {
        // n = 8192 on 132 SMs: s strands of 32 columns (32 panels), segments of 2048 rows.
        assert_eq!(n_plan(8192, 4, 132), (32, 32));
        assert_eq!(t_plan(8192, 4, 132).0 % 128, 0);
        let (sw, _) = n_plan(48000, 4, 132);
        assert_eq!(sw, *SW_MAX);
        // Complex double keeps its tile count near the target up to n = 16384 (the sweep's end):
        // the strand widens with n instead of hitting the cap.
        let (a, _) = n_plan(12288, 1, 132);
        let (b, _) = n_plan(16384, 1, 132);
        assert!(a < b && b < *SW_MAX, "{a} {b}");
        assert_eq!(n_plan(1, 1, 132), (SW_MIN, 1));
    }
}
