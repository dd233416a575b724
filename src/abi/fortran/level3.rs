//! Fortran Level 3 BLAS: GEMM, SYMM/HEMM, SYRK/HERK, SYR2K/HER2K (TRMM/TRSM live in
//! `level3_tri.rs`).
//!
//! Each routine has a `check_*` function (argument checks in reference order, shared with
//! CBLAS, which calls it on the column-major problem a row-major call maps to) and a `*_run`
//! function taking validated arguments: quick returns, views, and the call into the engine.
//!
//! GEMM whose operands are all device memory (a CUDA program passing `cudaMalloc` pointers to
//! `dgemm_` or `cblas_sgemm`) runs on the GPU ([`device_gemm`]): split-k where the planner's
//! model says so, else the real cuBLAS GEMM. GEMM on host memory goes to the GPU when the
//! offload planner predicts it faster (`gpu::offload::host_gemm`); so do SYMM/HEMM, SYRK/HERK, SYR2K/HER2K
//! here and TRMM/TRSM in `level3_tri.rs` ([`offload_level3`], `gpu::offload::l3`). CBLAS reaches
//! all of these through the same `*_run` functions.

use crate::abi::fortran::util::report;
use crate::cpu::level3 as eng;
use crate::gpu::offload::l3;
use crate::gpu::{self, DMat, Exec, In};
use crate::plan;
use crate::plan::gpu::{self as policy, Decision, Route};
use crate::types::{chars, FInt, MatMut, MatRef, Scalar, Side, Trans, Uplo};
use std::ffi::c_void;
use std::os::raw::c_char;

#[inline]
fn max1(v: isize) -> isize {
    v.max(1)
}

/// Reference `?GEMM` checks: 1 TRANSA, 2 TRANSB, 3 M, 4 N, 5 K, 8 LDA, 10 LDB, 13 LDC.
#[allow(clippy::too_many_arguments)]
pub fn check_gemm(
    ta: Option<Trans>,
    tb: Option<Trans>,
    m: isize,
    n: isize,
    k: isize,
    lda: isize,
    ldb: isize,
    ldc: isize,
) -> Result<(Trans, Trans), isize> {
    let ta = ta.ok_or(1isize)?;
    let tb = tb.ok_or(2isize)?;
    let nrowa = if ta == Trans::No { m } else { k };
    let nrowb = if tb == Trans::No { k } else { n };
    if m < 0 {
        Err(3)
    } else if n < 0 {
        Err(4)
    } else if k < 0 {
        Err(5)
    } else if lda < max1(nrowa) {
        Err(8)
    } else if ldb < max1(nrowb) {
        Err(10)
    } else if ldc < max1(m) {
        Err(13)
    } else {
        Ok((ta, tb))
    }
}

/// op(X) of a column-major operand with `rows x cols` = the shape of op(X), and whether it is
/// conjugated.
#[inline]
fn op_view<T>(p: *const T, t: Trans, rows: usize, cols: usize, ld: usize) -> (MatRef<T>, bool) {
    match t {
        Trans::No => (MatRef::col_major(p, rows, cols, ld), false),
        _ => (MatRef::col_major(p, cols, rows, ld).t(), t == Trans::ConjTrans),
    }
}

/// `?GEMM` after validation: C := alpha*op(A)*op(B) + beta*C.
///
/// # Safety
/// Arguments validated by [`check_gemm`]; pointers as in reference BLAS.
#[allow(clippy::too_many_arguments)]
pub unsafe fn gemm_run<T: Scalar>(
    ta: Trans,
    tb: Trans,
    m: isize,
    n: isize,
    k: isize,
    alpha: T,
    a: *const T,
    lda: isize,
    b: *const T,
    ldb: isize,
    beta: T,
    c: *mut T,
    ldc: isize,
) {
    if m == 0 || n == 0 || ((alpha.is_zero() || k == 0) && beta.is_one()) {
        return;
    }
    // Device memory: C decides (it is always written); A and B count only when read.
    let reads_ab = !alpha.is_zero() && k != 0;
    let ops = [c as *const c_void, a as *const c_void, b as *const c_void];
    let ops = if reads_ab { &ops[..] } else { &ops[..1] };
    let desc = || format!("ta={ta:?} tb={tb:?} m={m} n={n} k={k} lda={lda} ldb={ldb} ldc={ldc}");
    let run = std::cell::Cell::new(None);
    let shape = || {
        let s = desc();
        match run.take() {
            Some(r) => format!("{s} {r}"),
            None => s,
        }
    };
    let dev = |ex: &Exec| {
        let (a, b, c) = (DMat::of(a, lda), DMat::of(b, ldb), DMat::of(c as *const T, ldc));
        run.set(Some(device_gemm(ex, ta, tb, m as i64, n as i64, k as i64, alpha, a, b, beta, c)?));
        Ok(())
    };
    // device_gemm falls back to the real cuBLAS itself (it never answers NotReady); the same
    // fallback, for a uniform signature.
    let vnd = |ex: &Exec| {
        let (a, b, c) = (DMat::of(a, lda), DMat::of(b, ldb), DMat::of(c as *const T, ldc));
        vendor_device_gemm(ex, ta, tb, m as i64, n as i64, k as i64, alpha, a, b, beta, c)
    };
    if plan::on_gpu(T::PREFIX, "gemm", shape, ops, dev, vnd).is_some() {
        return;
    }
    let (m, n, k) = (m as usize, n as usize, k as usize);
    let (lda, ldb, ldc) = (lda as usize, ldb as usize, ldc as usize);
    // The offload planner: CPU, GPU or both (true: done there, with its trace line).
    if gpu::offload::host_gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) {
        return;
    }
    let (av, ca) = op_view(a, ta, m, k, lda);
    let (bv, cb) = op_view(b, tb, k, n, ldb);
    let cv = MatMut::col_major(c, m, n, ldc);
    plan::run::<T, _>("gemm", desc, || eng::gemm(alpha, av, ca, bv, cb, beta, cv));
}

/// What [`offload_level3`] did with a call.
pub(crate) enum Level3Run {
    /// Done: on the GPU, or (after a GPU failure that wrote part of the output) finished by
    /// the CPU engine on exactly the parts left.
    Done,
    /// The caller runs the CPU engine on the whole call, holding the watch until it is done
    /// (a call the planner priced: its trace line and what the planner learns from it, when
    /// it drops).
    Cpu(Option<Box<crate::plan::offload::CpuWatch>>),
}

/// A host SYMM/HEMM, SYRK/HERK, SYR2K/HER2K (and, from `level3_tri`, TRMM/TRSM) call that the
/// offload planner (`plan::offload::decide_level3`) sends to the GPU runs through
/// `gpu::offload::l3`. A failed offload that wrote part of the output is finished by `finish`
/// (the CPU engine on exactly the parts left), with a trace line. [`Level3Run::Cpu`]: the
/// caller runs the CPU engine on the whole call (the planner said so, cheaply for small calls;
/// or the GPU failed before writing anything: out of memory, no cuBLAS, ...).
///
/// # Safety
/// `call` built from validated, non-empty arguments.
pub(crate) unsafe fn offload_level3<T: Scalar>(
    call: &l3::Call<T>,
    shape: &dyn Fn() -> String,
    finish: &dyn Fn(&[gpu::offload::Tile]),
) -> Level3Run {
    use crate::plan::offload::{self as off, CpuWatch, Outcome, Plan, Reason, Side as Dev};
    use crate::plan::trace;
    let base = call.kind.name();
    let name = || format!("{}{base}", T::PREFIX);
    let (rt, d) = match off::decide_level3(call.problem(), &call.operands()) {
        Plan::Cpu(None) => return Level3Run::Cpu(None),
        Plan::Cpu(Some(d)) => {
            off::set_last(Outcome { routine: name(), planned: d.side, ran: Dev::Cpu, fallback: None, stats: None });
            return Level3Run::Cpu(Some(Box::new(CpuWatch::start(call.problem(), d, || {
                format!("{} {}", name(), shape())
            }))));
        }
        Plan::Gpu(rt, d) => (rt, d),
    };
    let (start, warm) = (std::time::Instant::now(), crate::plan::learned::Warm::start());
    match l3::run::<T>(rt, call) {
        Ok(stats) => {
            let secs = start.elapsed().as_secs_f64();
            if warm.stayed() {
                off::observe(&call.problem(), Dev::Gpu, &d, secs);
            }
            if trace::enabled() {
                trace::line(&name(), &shape(), "gpu-offload", 0, secs);
                trace::note(&format!("{} {} offload: {d} measured={:.1}us {stats}", name(), shape(), secs * 1e6));
            }
            let o = Outcome { routine: name(), planned: Dev::Gpu, ran: Dev::Gpu, fallback: None, stats: Some(stats) };
            off::set_last(o);
            Level3Run::Done
        }
        Err(f) => {
            // The CPU engine cannot read device memory (and a device output may be half
            // computed in place): nothing to fall back to.
            let on_device = d.reason == Reason::DeviceOperand
                || call.operands().iter().any(|&p| gpu::runtime::is_device_pointer(p));
            if on_device {
                eprintln!("hyblas: {} with device operands failed on the GPU: {f}", name());
                let fallback = Some(f.to_string());
                off::set_last(Outcome { routine: name(), planned: Dev::Gpu, ran: Dev::Gpu, fallback, stats: None });
                return Level3Run::Done;
            }
            if off::disables(&f.error) {
                eprintln!("hyblas: {} offload: device error, later calls stay on the CPU: {f}", name());
                off::disable();
            }
            if trace::enabled() {
                trace::note(&format!("{} {} offload failed, CPU engine takes over: {f}", name(), shape()));
            }
            let fallback = Some(f.to_string());
            off::set_last(Outcome { routine: name(), planned: Dev::Gpu, ran: Dev::Cpu, fallback, stats: None });
            if f.untouched_c() {
                return Level3Run::Cpu(None);
            }
            let left = f.remaining();
            plan::run::<T, _>(base, shape, || finish(&left));
            Level3Run::Done
        }
    }
}

/// How [`device_gemm`] ran a call, for the trace line (formatted only when tracing is on).
pub struct DeviceGemm {
    pub decision: Decision,
    /// Split-k was chosen but declined (the real cuBLAS ran the call).
    pub declined: Option<gpu::GpuError>,
    /// The model's account of its inputs, when it was asked and tracing is on.
    pub why: Option<String>,
}

impl std::fmt::Display for DeviceGemm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let outcome = self.declined.as_ref().map_or(policy::Outcome::Done, policy::Outcome::of_error);
        f.write_str(&outcome.describe(&self.decision))?;
        if let Some(w) = &self.why {
            write!(f, " model: {w}")?;
        }
        Ok(())
    }
}

/// GEMM on device operands, on `ex`'s stream (the caller waits): split-k when the planner
/// routes it there (the model, or `HYBLAS_CUBLAS_GEMM` / `HYBLAS_CUBLAS` / `with_mode`) and the
/// kernel takes it, else the real cuBLAS GEMM on a handle of hyblas's own. alpha = 0 reads
/// neither A nor B (reference BLAS; they may be anything): cuBLAS then gets k = 0, C := beta*C.
#[allow(clippy::too_many_arguments)]
pub fn device_gemm<T: Scalar>(
    ex: &Exec,
    ta: Trans,
    tb: Trans,
    m: i64,
    n: i64,
    k: i64,
    alpha: T,
    a: DMat,
    b: DMat,
    beta: T,
    c: DMat,
) -> gpu::Result<DeviceGemm> {
    let mut why = None;
    let decision = policy::decide_gemm(None, || {
        let vector = gpu::splitk::vector_loads::<T>(ta, tb, m, n, a, b);
        let (d, w) = policy::gemm::<T>(ex.rt, ta, tb, m, n, k, vector);
        why = w;
        d
    });
    let mut declined = None;
    if decision.route == Route::Hyblas {
        // Host-ABI callers have no atomics mode to set: HYBLAS_DETERMINISTIC=0 allows atomics.
        let red = policy::reduction(false);
        // A unit not loaded yet answers NotReady (C untouched) unless the route was forced.
        let run = || gpu::splitk::gemm::<T>(ex, ta, tb, m, n, k, In::Host(alpha), a, b, In::Host(beta), c, red);
        // Without a real cuBLAS to answer meanwhile, the call waits for its kernel.
        let wait = decision.forced_hyblas() || !gpu::vendor::present();
        match gpu::loader::routed(wait, run) {
            Ok(()) => return Ok(DeviceGemm { decision, declined, why }),
            Err(e) => declined = Some(e),
        }
    }
    vendor_device_gemm(ex, ta, tb, m, n, k, alpha, a, b, beta, c)?;
    Ok(DeviceGemm { decision, declined, why })
}

/// GEMM on device operands by the real cuBLAS: alpha = 0 reads neither A nor B (reference
/// BLAS; they may be anything), so cuBLAS then gets k = 0, C := beta*C.
#[allow(clippy::too_many_arguments)]
fn vendor_device_gemm<T: Scalar>(
    ex: &Exec,
    ta: Trans,
    tb: Trans,
    m: i64,
    n: i64,
    k: i64,
    alpha: T,
    a: DMat,
    b: DMat,
    beta: T,
    c: DMat,
) -> gpu::Result<()> {
    let k = if alpha.is_zero() { 0 } else { k };
    crate::abi::cublas::vendor_gemm::<T>(ex, ta, tb, m, n, k, alpha, a, b, beta, c)
}

/// `?gemm_` (Fortran).
///
/// # Safety
/// Pointers as in reference BLAS.
#[allow(clippy::too_many_arguments)]
pub unsafe fn gemm<T: Scalar, I: FInt>(
    ta: *const c_char,
    tb: *const c_char,
    m: *const I,
    n: *const I,
    k: *const I,
    alpha: *const T,
    a: *const T,
    lda: *const I,
    b: *const T,
    ldb: *const I,
    beta: *const T,
    c: *mut T,
    ldc: *const I,
) {
    let (m, n, k) = (I::read(m), I::read(n), I::read(k));
    let (lda, ldb, ldc) = (I::read(lda), I::read(ldb), I::read(ldc));
    match check_gemm(chars::trans(ta), chars::trans(tb), m, n, k, lda, ldb, ldc) {
        Err(info) => report::<I>(&format!("{}gemm", T::PREFIX), info),
        Ok((ta, tb)) => gemm_run(ta, tb, m, n, k, *alpha, a, lda, b, ldb, *beta, c, ldc),
    }
}

/// Reference `?SYMM`/`?HEMM` checks: 1 SIDE, 2 UPLO, 3 M, 4 N, 7 LDA, 9 LDB, 12 LDC.
pub fn check_symm(
    side: Option<Side>,
    uplo: Option<Uplo>,
    m: isize,
    n: isize,
    lda: isize,
    ldb: isize,
    ldc: isize,
) -> Result<(Side, Uplo), isize> {
    let side = side.ok_or(1isize)?;
    let uplo = uplo.ok_or(2isize)?;
    let nrowa = if side == Side::Left { m } else { n };
    if m < 0 {
        Err(3)
    } else if n < 0 {
        Err(4)
    } else if lda < max1(nrowa) {
        Err(7)
    } else if ldb < max1(m) {
        Err(9)
    } else if ldc < max1(m) {
        Err(12)
    } else {
        Ok((side, uplo))
    }
}

/// `?SYMM` (`herm == false`) or `?HEMM` after validation.
///
/// # Safety
/// Arguments validated by [`check_symm`]; pointers as in reference BLAS.
#[allow(clippy::too_many_arguments)]
pub unsafe fn symm_run<T: Scalar>(
    herm: bool,
    side: Side,
    uplo: Uplo,
    m: isize,
    n: isize,
    alpha: T,
    a: *const T,
    lda: isize,
    b: *const T,
    ldb: isize,
    beta: T,
    c: *mut T,
    ldc: isize,
) {
    if m == 0 || n == 0 || (alpha.is_zero() && beta.is_one()) {
        return;
    }
    let (m, n) = (m as usize, n as usize);
    let shape = || format!("side={side:?} uplo={uplo:?} m={m} n={n} lda={lda} ldb={ldb} ldc={ldc}");
    let (la, lb, lc) = (lda as usize, ldb as usize, ldc as usize);
    let call = l3::Call::symm(herm, side, uplo, m, n, alpha, a, la, b, lb, beta, c, lc);
    let Level3Run::Cpu(_watch) = offload_level3(&call, &shape, &|left| l3::finish_rank(&call, left)) else {
        return;
    };
    let na = if side == Side::Left { m } else { n };
    let av = MatRef::col_major(a, na, na, lda as usize);
    let bv = MatRef::col_major(b, m, n, ldb as usize);
    let cv = MatMut::col_major(c, m, n, ldc as usize);
    plan::run::<T, _>(if herm { "hemm" } else { "symm" }, shape, || {
        eng::sym::symm(side, uplo, herm, alpha, av, bv, beta, cv)
    });
}

/// `?symm_` / `?hemm_` (Fortran).
///
/// # Safety
/// Pointers as in reference BLAS.
#[allow(clippy::too_many_arguments)]
pub unsafe fn symm<T: Scalar, I: FInt>(
    herm: bool,
    side: *const c_char,
    uplo: *const c_char,
    m: *const I,
    n: *const I,
    alpha: *const T,
    a: *const T,
    lda: *const I,
    b: *const T,
    ldb: *const I,
    beta: *const T,
    c: *mut T,
    ldc: *const I,
) {
    let (m, n) = (I::read(m), I::read(n));
    let (lda, ldb, ldc) = (I::read(lda), I::read(ldb), I::read(ldc));
    match check_symm(chars::side(side), chars::uplo(uplo), m, n, lda, ldb, ldc) {
        Err(info) => report::<I>(&format!("{}{}", T::PREFIX, if herm { "hemm" } else { "symm" }), info),
        Ok((side, uplo)) => symm_run(herm, side, uplo, m, n, *alpha, a, lda, b, ldb, *beta, c, ldc),
    }
}

/// Which TRANS values a rank-k routine accepts: real SYRK/SYR2K take N, T and C (C meaning T);
/// complex SYRK/SYR2K only N and T; HERK/HER2K only N and C.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RankKind {
    Sym,
    Herm,
}

fn rank_trans<T: Scalar>(kind: RankKind, t: Option<Trans>) -> Option<Trans> {
    match (kind, t?) {
        (_, Trans::No) => Some(Trans::No),
        (RankKind::Sym, Trans::Trans) => Some(Trans::Trans),
        (RankKind::Sym, Trans::ConjTrans) if !T::IS_COMPLEX => Some(Trans::Trans),
        (RankKind::Herm, Trans::ConjTrans) => Some(Trans::ConjTrans),
        _ => None,
    }
}

/// Reference `?SYRK`/`?HERK` (`ldb == None`) and `?SYR2K`/`?HER2K` checks: 1 UPLO, 2 TRANS,
/// 3 N, 4 K, 7 LDA, then 9 LDB and 12 LDC for the rank-2k routines, 10 LDC for rank-k.
#[allow(clippy::too_many_arguments)]
pub fn check_rank<T: Scalar>(
    kind: RankKind,
    uplo: Option<Uplo>,
    trans: Option<Trans>,
    n: isize,
    k: isize,
    lda: isize,
    ldb: Option<isize>,
    ldc: isize,
) -> Result<(Uplo, Trans), isize> {
    let uplo = uplo.ok_or(1isize)?;
    let trans = rank_trans::<T>(kind, trans).ok_or(2isize)?;
    let nrowa = if trans == Trans::No { n } else { k };
    if n < 0 {
        Err(3)
    } else if k < 0 {
        Err(4)
    } else if lda < max1(nrowa) {
        Err(7)
    } else if ldb.is_some_and(|ldb| ldb < max1(nrowa)) {
        Err(9)
    } else if ldc < max1(n) {
        Err(if ldb.is_some() { 12 } else { 10 })
    } else {
        Ok((uplo, trans))
    }
}

/// `?SYRK`/`?HERK` after validation (`herm`: alpha and beta are real, C's diagonal is real).
///
/// # Safety
/// Arguments validated by [`check_rank`]; pointers as in reference BLAS.
#[allow(clippy::too_many_arguments)]
pub unsafe fn syrk_run<T: Scalar>(
    kind: RankKind,
    uplo: Uplo,
    trans: Trans,
    n: isize,
    k: isize,
    alpha: T,
    a: *const T,
    lda: isize,
    beta: T,
    c: *mut T,
    ldc: isize,
) {
    if n == 0 || ((alpha.is_zero() || k == 0) && beta.is_one()) {
        return;
    }
    let (n, k) = (n as usize, k as usize);
    let herm = kind == RankKind::Herm;
    let shape = || format!("uplo={uplo:?} trans={trans:?} n={n} k={k} lda={lda} ldc={ldc}");
    let call = l3::Call::syrk(herm, uplo, trans, n, k, alpha, a, lda as usize, beta, c, ldc as usize);
    let Level3Run::Cpu(_watch) = offload_level3(&call, &shape, &|left| l3::finish_rank(&call, left)) else {
        return;
    };
    let (xv, conj) = op_view(a, trans, n, k, lda as usize);
    let cv = MatMut::col_major(c, n, n, ldc as usize);
    plan::run::<T, _>(if herm { "herk" } else { "syrk" }, shape, || {
        eng::sym::syrk(uplo, herm, alpha, xv, conj, beta, cv)
    });
}

/// `?syrk_` / `?herk_` (Fortran). `R` is the type of alpha and beta (real for HERK).
///
/// # Safety
/// Pointers as in reference BLAS.
#[allow(clippy::too_many_arguments)]
pub unsafe fn syrk<T: Scalar, R: Copy + Into<T>, I: FInt>(
    kind: RankKind,
    uplo: *const c_char,
    trans: *const c_char,
    n: *const I,
    k: *const I,
    alpha: *const R,
    a: *const T,
    lda: *const I,
    beta: *const R,
    c: *mut T,
    ldc: *const I,
) {
    let (n, k, lda, ldc) = (I::read(n), I::read(k), I::read(lda), I::read(ldc));
    match check_rank::<T>(kind, chars::uplo(uplo), chars::trans(trans), n, k, lda, None, ldc) {
        Err(info) => {
            report::<I>(&format!("{}{}", T::PREFIX, if kind == RankKind::Herm { "herk" } else { "syrk" }), info)
        }
        Ok((uplo, trans)) => syrk_run(kind, uplo, trans, n, k, (*alpha).into(), a, lda, (*beta).into(), c, ldc),
    }
}

/// `?SYR2K`/`?HER2K` after validation (`herm`: beta is real, C's diagonal is real).
///
/// # Safety
/// Arguments validated by [`check_rank`]; pointers as in reference BLAS.
#[allow(clippy::too_many_arguments)]
pub unsafe fn syr2k_run<T: Scalar>(
    kind: RankKind,
    uplo: Uplo,
    trans: Trans,
    n: isize,
    k: isize,
    alpha: T,
    a: *const T,
    lda: isize,
    b: *const T,
    ldb: isize,
    beta: T,
    c: *mut T,
    ldc: isize,
) {
    if n == 0 || ((alpha.is_zero() || k == 0) && beta.is_one()) {
        return;
    }
    let (n, k) = (n as usize, k as usize);
    let herm = kind == RankKind::Herm;
    let shape = || format!("uplo={uplo:?} trans={trans:?} n={n} k={k} lda={lda} ldb={ldb} ldc={ldc}");
    let (la, lb, lc) = (lda as usize, ldb as usize, ldc as usize);
    let call = l3::Call::syr2k(herm, uplo, trans, n, k, alpha, a, la, b, lb, beta, c, lc);
    let Level3Run::Cpu(_watch) = offload_level3(&call, &shape, &|left| l3::finish_rank(&call, left)) else {
        return;
    };
    let (xv, conj) = op_view(a, trans, n, k, lda as usize);
    let (yv, _) = op_view(b, trans, n, k, ldb as usize);
    let cv = MatMut::col_major(c, n, n, ldc as usize);
    plan::run::<T, _>(if herm { "her2k" } else { "syr2k" }, shape, || {
        eng::sym::syr2k(uplo, herm, alpha, xv, yv, conj, beta, cv)
    });
}

/// `?syr2k_` / `?her2k_` (Fortran). `R` is the type of beta (real for HER2K).
///
/// # Safety
/// Pointers as in reference BLAS.
#[allow(clippy::too_many_arguments)]
pub unsafe fn syr2k<T: Scalar, R: Copy + Into<T>, I: FInt>(
    kind: RankKind,
    uplo: *const c_char,
    trans: *const c_char,
    n: *const I,
    k: *const I,
    alpha: *const T,
    a: *const T,
    lda: *const I,
    b: *const T,
    ldb: *const I,
    beta: *const R,
    c: *mut T,
    ldc: *const I,
) {
    let (n, k) = (I::read(n), I::read(k));
    let (lda, ldb, ldc) = (I::read(lda), I::read(ldb), I::read(ldc));
    match check_rank::<T>(kind, chars::uplo(uplo), chars::trans(trans), n, k, lda, Some(ldb), ldc) {
        Err(info) => {
            report::<I>(&format!("{}{}", T::PREFIX, if kind == RankKind::Herm { "her2k" } else { "syr2k" }), info)
        }
        Ok((uplo, trans)) => syr2k_run(kind, uplo, trans, n, k, *alpha, a, lda, b, ldb, (*beta).into(), c, ldc),
    }
}

macro_rules! level3_exports {
    ($I:ty, $sfx:literal) => {
        $crate::export!(concat!("sgemm", $sfx), fn(ta: *const c_char, tb: *const c_char, m: *const $I, n: *const $I, k: *const $I, alpha: *const f32, a: *const f32, lda: *const $I, b: *const f32, ldb: *const $I, beta: *const f32, c: *mut f32, ldc: *const $I) => gemm::<f32, $I>(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc));
        $crate::export!(concat!("dgemm", $sfx), fn(ta: *const c_char, tb: *const c_char, m: *const $I, n: *const $I, k: *const $I, alpha: *const f64, a: *const f64, lda: *const $I, b: *const f64, ldb: *const $I, beta: *const f64, c: *mut f64, ldc: *const $I) => gemm::<f64, $I>(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc));
        $crate::export!(concat!("cgemm", $sfx), fn(ta: *const c_char, tb: *const c_char, m: *const $I, n: *const $I, k: *const $I, alpha: *const C32, a: *const C32, lda: *const $I, b: *const C32, ldb: *const $I, beta: *const C32, c: *mut C32, ldc: *const $I) => gemm::<C32, $I>(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc));
        $crate::export!(concat!("zgemm", $sfx), fn(ta: *const c_char, tb: *const c_char, m: *const $I, n: *const $I, k: *const $I, alpha: *const C64, a: *const C64, lda: *const $I, b: *const C64, ldb: *const $I, beta: *const C64, c: *mut C64, ldc: *const $I) => gemm::<C64, $I>(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc));

        $crate::export!(concat!("ssymm", $sfx), fn(side: *const c_char, uplo: *const c_char, m: *const $I, n: *const $I, alpha: *const f32, a: *const f32, lda: *const $I, b: *const f32, ldb: *const $I, beta: *const f32, c: *mut f32, ldc: *const $I) => symm::<f32, $I>(false, side, uplo, m, n, alpha, a, lda, b, ldb, beta, c, ldc));
        $crate::export!(concat!("dsymm", $sfx), fn(side: *const c_char, uplo: *const c_char, m: *const $I, n: *const $I, alpha: *const f64, a: *const f64, lda: *const $I, b: *const f64, ldb: *const $I, beta: *const f64, c: *mut f64, ldc: *const $I) => symm::<f64, $I>(false, side, uplo, m, n, alpha, a, lda, b, ldb, beta, c, ldc));
        $crate::export!(concat!("csymm", $sfx), fn(side: *const c_char, uplo: *const c_char, m: *const $I, n: *const $I, alpha: *const C32, a: *const C32, lda: *const $I, b: *const C32, ldb: *const $I, beta: *const C32, c: *mut C32, ldc: *const $I) => symm::<C32, $I>(false, side, uplo, m, n, alpha, a, lda, b, ldb, beta, c, ldc));
        $crate::export!(concat!("zsymm", $sfx), fn(side: *const c_char, uplo: *const c_char, m: *const $I, n: *const $I, alpha: *const C64, a: *const C64, lda: *const $I, b: *const C64, ldb: *const $I, beta: *const C64, c: *mut C64, ldc: *const $I) => symm::<C64, $I>(false, side, uplo, m, n, alpha, a, lda, b, ldb, beta, c, ldc));
        $crate::export!(concat!("chemm", $sfx), fn(side: *const c_char, uplo: *const c_char, m: *const $I, n: *const $I, alpha: *const C32, a: *const C32, lda: *const $I, b: *const C32, ldb: *const $I, beta: *const C32, c: *mut C32, ldc: *const $I) => symm::<C32, $I>(true, side, uplo, m, n, alpha, a, lda, b, ldb, beta, c, ldc));
        $crate::export!(concat!("zhemm", $sfx), fn(side: *const c_char, uplo: *const c_char, m: *const $I, n: *const $I, alpha: *const C64, a: *const C64, lda: *const $I, b: *const C64, ldb: *const $I, beta: *const C64, c: *mut C64, ldc: *const $I) => symm::<C64, $I>(true, side, uplo, m, n, alpha, a, lda, b, ldb, beta, c, ldc));

        $crate::export!(concat!("ssyrk", $sfx), fn(uplo: *const c_char, trans: *const c_char, n: *const $I, k: *const $I, alpha: *const f32, a: *const f32, lda: *const $I, beta: *const f32, c: *mut f32, ldc: *const $I) => syrk::<f32, f32, $I>(RankKind::Sym, uplo, trans, n, k, alpha, a, lda, beta, c, ldc));
        $crate::export!(concat!("dsyrk", $sfx), fn(uplo: *const c_char, trans: *const c_char, n: *const $I, k: *const $I, alpha: *const f64, a: *const f64, lda: *const $I, beta: *const f64, c: *mut f64, ldc: *const $I) => syrk::<f64, f64, $I>(RankKind::Sym, uplo, trans, n, k, alpha, a, lda, beta, c, ldc));
        $crate::export!(concat!("csyrk", $sfx), fn(uplo: *const c_char, trans: *const c_char, n: *const $I, k: *const $I, alpha: *const C32, a: *const C32, lda: *const $I, beta: *const C32, c: *mut C32, ldc: *const $I) => syrk::<C32, C32, $I>(RankKind::Sym, uplo, trans, n, k, alpha, a, lda, beta, c, ldc));
        $crate::export!(concat!("zsyrk", $sfx), fn(uplo: *const c_char, trans: *const c_char, n: *const $I, k: *const $I, alpha: *const C64, a: *const C64, lda: *const $I, beta: *const C64, c: *mut C64, ldc: *const $I) => syrk::<C64, C64, $I>(RankKind::Sym, uplo, trans, n, k, alpha, a, lda, beta, c, ldc));
        $crate::export!(concat!("cherk", $sfx), fn(uplo: *const c_char, trans: *const c_char, n: *const $I, k: *const $I, alpha: *const f32, a: *const C32, lda: *const $I, beta: *const f32, c: *mut C32, ldc: *const $I) => syrk::<C32, f32, $I>(RankKind::Herm, uplo, trans, n, k, alpha, a, lda, beta, c, ldc));
        $crate::export!(concat!("zherk", $sfx), fn(uplo: *const c_char, trans: *const c_char, n: *const $I, k: *const $I, alpha: *const f64, a: *const C64, lda: *const $I, beta: *const f64, c: *mut C64, ldc: *const $I) => syrk::<C64, f64, $I>(RankKind::Herm, uplo, trans, n, k, alpha, a, lda, beta, c, ldc));

        $crate::export!(concat!("ssyr2k", $sfx), fn(uplo: *const c_char, trans: *const c_char, n: *const $I, k: *const $I, alpha: *const f32, a: *const f32, lda: *const $I, b: *const f32, ldb: *const $I, beta: *const f32, c: *mut f32, ldc: *const $I) => syr2k::<f32, f32, $I>(RankKind::Sym, uplo, trans, n, k, alpha, a, lda, b, ldb, beta, c, ldc));
        $crate::export!(concat!("dsyr2k", $sfx), fn(uplo: *const c_char, trans: *const c_char, n: *const $I, k: *const $I, alpha: *const f64, a: *const f64, lda: *const $I, b: *const f64, ldb: *const $I, beta: *const f64, c: *mut f64, ldc: *const $I) => syr2k::<f64, f64, $I>(RankKind::Sym, uplo, trans, n, k, alpha, a, lda, b, ldb, beta, c, ldc));
        $crate::export!(concat!("csyr2k", $sfx), fn(uplo: *const c_char, trans: *const c_char, n: *const $I, k: *const $I, alpha: *const C32, a: *const C32, lda: *const $I, b: *const C32, ldb: *const $I, beta: *const C32, c: *mut C32, ldc: *const $I) => syr2k::<C32, C32, $I>(RankKind::Sym, uplo, trans, n, k, alpha, a, lda, b, ldb, beta, c, ldc));
        $crate::export!(concat!("zsyr2k", $sfx), fn(uplo: *const c_char, trans: *const c_char, n: *const $I, k: *const $I, alpha: *const C64, a: *const C64, lda: *const $I, b: *const C64, ldb: *const $I, beta: *const C64, c: *mut C64, ldc: *const $I) => syr2k::<C64, C64, $I>(RankKind::Sym, uplo, trans, n, k, alpha, a, lda, b, ldb, beta, c, ldc));
        $crate::export!(concat!("cher2k", $sfx), fn(uplo: *const c_char, trans: *const c_char, n: *const $I, k: *const $I, alpha: *const C32, a: *const C32, lda: *const $I, b: *const C32, ldb: *const $I, beta: *const f32, c: *mut C32, ldc: *const $I) => syr2k::<C32, f32, $I>(RankKind::Herm, uplo, trans, n, k, alpha, a, lda, b, ldb, beta, c, ldc));
        $crate::export!(concat!("zher2k", $sfx), fn(uplo: *const c_char, trans: *const c_char, n: *const $I, k: *const $I, alpha: *const C64, a: *const C64, lda: *const $I, b: *const C64, ldb: *const $I, beta: *const f64, c: *mut C64, ldc: *const $I) => syr2k::<C64, f64, $I>(RankKind::Herm, uplo, trans, n, k, alpha, a, lda, b, ldb, beta, c, ldc));
    };
}

mod exports {
    use super::*;
    use crate::types::{C32, C64};
    level3_exports!(i32, "_");
    level3_exports!(i64, "_64_");
}
