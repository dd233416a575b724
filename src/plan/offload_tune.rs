//! `hyblas tune offload`: measure the host offload model's rates on this machine
//! ([`calibrate`]) and return them as the recipe file's `offload` lines.

use super::*;
use crate::types::Scalar;

/// Measure the model's rates on this machine and return them as `offload <key> <value...>`
/// lines for the recipe file (the recipe parser skips them), followed by comment lines
/// comparing the model with measured calls.
///
/// Steps (about a minute on an H200 host): staged transfers of 256 MiB each way, packed by the
/// CPU engine's threads and by 1, 2, 4 feeders; cuBLAS ?GEMM at n = 4096 and on tiles of side
/// 256..2048 with k = 256..16384; the CPU engine at n = 512..4096 and 8192 (2048 for complex);
/// whole GPU-only calls (s, d at n = 512..8192, c, z to 4096) to which the latency, the
/// per-piece cost and the transfer efficiency are fitted, and which the learnt table then
/// starts from (`offload gpu_call_ms`); co-executed calls (d, s at n = 512..4096, z to 2048)
/// at GPU shares 0.3, 0.5, 0.7, 0.9 for the sides' efficiencies while both run; DSYRK and
/// DTRSM at n = 512..8192 on each side (`offload op_eff`). Whole calls are timed in
/// [`PASSES`] passes over their sizes ([`in_passes`]).
pub fn calibrate(rt: &'static Runtime) -> gpu::Result<Vec<String>> {
    use crate::gpu::{timing::Timer, DMat, DeviceBuffer, Exec};
    use crate::hybrid::offload::{measure_transfers, measure_transfers_with, Copier};
    use crate::types::{Trans, C32, C64};
    rt.bind()?;
    let start = std::time::Instant::now();
    let mut lines = Vec::new();

    // ---- Transfers through the pipeline (pageable memory, as callers pass it) ----
    let mb = 256usize << 20;
    let t = measure_transfers(rt, mb)?;
    lines.push(format!("offload h2d_gbs {:.2}", t.h2d / 1e9));
    lines.push(format!("offload d2h_gbs {:.2}", t.d2h / 1e9));
    lines.push(format!(
        "# offload pinned h2d {:.2} GB/s, d2h {:.2} GB/s (the bus alone)",
        t.h2d_pinned / 1e9,
        t.d2h_pinned / 1e9
    ));
    for f in [1usize, 2, 4] {
        let x = measure_transfers_with(rt, mb, Copier::Feed(f))?;
        lines.push(format!("offload feed_gbs {f} {:.2} {:.2}", x.h2d / 1e9, x.d2h / 1e9));
    }

    // ---- cuBLAS: n = 4096, and one tile of each side and k ----
    let (tile_sides, tile_ks) = ([256usize, 512, 1024, 2048], [256usize, 1024, 4096, 16384]);
    // The largest tile's A and B (2048 x 16384 complex double); n = 4096's fit too.
    let ab_bytes = 2048 * 16384 * 16;
    let bufs = [DeviceBuffer::new(ab_bytes)?, DeviceBuffer::new(ab_bytes)?, DeviceBuffer::new(4096 * 4096 * 16)?];
    for buf in &bufs {
        // 2^-7 in every 32-bit word: finite in every precision.
        gpu::driver::check(
            unsafe { gpu::driver::sys::cuMemsetD32_v2(buf.ptr, 0x3c00_0000, buf.bytes / 4) },
            "cuMemsetD32",
        )?;
    }
    let ex = Exec::own(rt);
    let timer = Timer::new(ex.stream)?;
    /// Seconds per call of an m x n x k cuBLAS ?GEMM (A m x k, B k x n, C m x n, packed),
    /// back to back as the pipeline issues tiles.
    fn vendor<T: Scalar>(
        ex: &Exec,
        t: &Timer,
        bufs: &[DeviceBuffer; 3],
        m: usize,
        n: usize,
        k: usize,
    ) -> gpu::Result<f64> {
        let mat = |b: &DeviceBuffer, ld: usize| DMat { ptr: b.ptr, ld: ld.max(1) as i64 };
        let (one, half) = (T::one(), T::from_f64(0.5));
        let (a, b, c) = (mat(&bufs[0], m), mat(&bufs[1], k), mat(&bufs[2], m));
        let (m, n, k) = (m as i64, n as i64, k as i64);
        t.median_batched(3, 0.01, &mut || {
            crate::gpu::vendor_calls::vendor_gemm::<T>(ex, Trans::No, Trans::No, m, n, k, one, a, b, half, c)
        })
    }
    let flops = |m: usize, n: usize, k: usize, complex: bool| {
        2.0 * m as f64 * n as f64 * k as f64 * if complex { 4.0 } else { 1.0 }
    };
    let n = 4096usize;
    let gemm_t = |i: usize, m: usize, n: usize, k: usize| match i {
        0 => vendor::<f32>(&ex, &timer, &bufs, m, n, k),
        1 => vendor::<f64>(&ex, &timer, &bufs, m, n, k),
        2 => vendor::<C32>(&ex, &timer, &bufs, m, n, k),
        _ => vendor::<C64>(&ex, &timer, &bufs, m, n, k),
    };
    for (i, p) in PRECS.iter().enumerate() {
        let tn = gemm_t(i, n, n, n)?;
        lines.push(format!("offload gpu_gflops_{p} {:.1}", flops(n, n, n, i >= 2) / tn / 1e9));
    }
    for (i, p) in PRECS.iter().enumerate() {
        for &s in &tile_sides {
            for &k in &tile_ks {
                let secs = gemm_t(i, s, s, k)?;
                lines.push(format!("offload gpu_tile_gflops_{p} {s} {k} {:.1}", flops(s, s, k, i >= 2) / secs / 1e9));
            }
        }
    }
    drop(timer);
    drop(bufs);

    // ---- The CPU engine at a few sizes, on the threads a call uses now ----
    let threads = crate::cpu::threads::nthreads();
    lines.push(format!("offload cpu_threads {threads}"));
    let mut keys: Vec<(usize, usize)> = Vec::new();
    for i in 0..4 {
        let sizes: &[usize] = if i < 2 { &[512, 1024, 2048, 3072, 4096] } else { &[512, 1024, 2048] };
        keys.extend(sizes.iter().map(|&s| (i, s)));
    }
    let cpu_at = |(i, s): (usize, usize)| -> gpu::Result<f64> {
        Ok(match i {
            0 => time_cpu::<f32>(s),
            1 => time_cpu::<f64>(s),
            2 => time_cpu::<C32>(s),
            _ => time_cpu::<C64>(s),
        })
    };
    let mut cpu = in_passes(&keys, PASSES, cpu_at)?;
    // n = 8192 (s, d) once: a call takes a second or two.
    for i in 0..2 {
        keys.push((i, 8192));
        cpu.push(vec![cpu_at((i, 8192))?]);
    }
    for (i, p) in PRECS.iter().enumerate() {
        let mut top = 0.0;
        for (&(_, s), v) in keys.iter().zip(&cpu).filter(|(k, _)| k.0 == i) {
            top = flops(s, s, s, i >= 2) / median_of(v.clone()) / 1e9;
            lines.push(format!("offload cpu_size_gflops_{p} {s} {top:.1}"));
        }
        lines.push(format!("offload cpu_gflops_{p} {top:.1}"));
    }

    // ---- Whole GPU-only calls: fit the latency, the per-piece cost, the transfer efficiency ----
    // Every size the benchmark times up to 8192 (4096 in complex): the fit sets the model's
    // shape, and each call's time over it is the learnt table's first lesson at its size
    // (`offload gpu_call_ms`, [`Rates::teach_calls`]).
    let rates = Rates::builtin(&rt.props).with_lines(&lines.join("\n"), "tuned");
    let mut host = HostBufs::new(8192 * 8192 * 8);
    let mut keys = Vec::new();
    for pc in PRECS {
        let top = if pc == 's' || pc == 'd' { 8192 } else { 4096 };
        keys.extend([512usize, 1024, 2048, 4096, 8192].into_iter().filter(|&n| n <= top).map(|n| (pc, n)));
    }
    let timed = in_passes(&keys, PASSES, |(pc, n)| match pc {
        's' => time_gpu_call::<f32>(rt, n, &mut host),
        'd' => time_gpu_call::<f64>(rt, n, &mut host),
        'c' => time_gpu_call::<C32>(rt, n, &mut host),
        _ => time_gpu_call::<C64>(rt, n, &mut host),
    })?;
    let samples: Vec<Sample> =
        keys.iter().zip(timed).map(|(&(pc, n), v)| Sample { p: Problem::square(pc, n), secs: median_of(v) }).collect();
    let ((lat, piece, eff), rms) = fit_pipeline(&rates, &samples);
    lines.push(format!("offload latency_us {:.1}", lat * 1e6));
    lines.push(format!("offload piece_us {:.1}", piece * 1e6));
    lines.push(format!("offload bw_eff {eff:.3}"));
    lines.push(format!("# offload fit of {} whole GPU calls: rms relative error {:.1}%", samples.len(), rms * 100.0));
    for s in &samples {
        lines.push(format!("offload gpu_call_ms {} {} {:.4}", s.p.prec, s.p.n, s.secs * 1e3));
    }
    let rates = Rates::builtin(&rt.props).with_lines(&lines.join("\n"), "tuned");

    // ---- Co-executed calls at GPU shares 0.3, 0.5, 0.7, 0.9: the sides' efficiencies ----
    // ---- while both run and co-execution's own cost                                   ----
    let plan_of = |pc: char, n: usize, share: f64| SplitPlan {
        pred: rates.split_at(&Problem::square(pc, n), share, threads),
        fixed: true,
    };
    let mut keys: Vec<(char, usize, f64)> = Vec::new();
    for (pc, ns) in
        [('d', &[512usize, 1024, 2048, 4096][..]), ('s', &[512, 1024, 2048, 4096]), ('z', &[512, 1024, 2048])]
    {
        for &n in ns {
            keys.extend([0.3, 0.5, 0.7, 0.9].map(|x| (pc, n, x)));
        }
    }
    let timed = in_passes(&keys, 1, |(pc, n, share)| {
        let plan = plan_of(pc, n, share);
        Ok(match pc {
            's' => time_split_call::<f32>(rt, n, &plan, &mut host),
            'd' => time_split_call::<f64>(rt, n, &plan, &mut host),
            _ => time_split_call::<C64>(rt, n, &plan, &mut host),
        })
    })?;
    let mut splits = Vec::new();
    for (&(pc, n, share), r) in keys.iter().zip(timed) {
        match r.into_iter().next() {
            Some(Ok((gpu_secs, cpu_secs, secs))) => {
                let plan = plan_of(pc, n, share);
                splits.push(SplitSample {
                    p: Problem::square(pc, n),
                    ng: split_cols(plan.pred.share, n),
                    threads,
                    feeders: plan.pred.feeders,
                    gpu_secs,
                    cpu_secs,
                    secs,
                });
            }
            Some(Err(e)) => lines.push(format!("# offload co-execution {pc}gemm n={n} share {share} failed: {e}")),
            None => {}
        }
    }
    let (cpu_eff, gpu_eff, split_lat) = fit_coexec(&rates, &splits);
    lines.push(format!("offload cpu_coexec {cpu_eff:.3}"));
    lines.push(format!("offload gpu_coexec {gpu_eff:.3}"));
    lines.push(format!("offload split_latency_us {:.1}", split_lat * 1e6));
    let rates = Rates::builtin(&rt.props).with_lines(&lines.join("\n"), "tuned");

    // ---- DSYRK and DTRSM on each side, over the GEMM the model prices for them ----
    lines.extend(measure_op_factors(rt, &rates, threads));
    let rates = Rates::builtin(&rt.props).with_lines(&lines.join("\n"), "tuned");

    // ---- The final model against what was measured ----
    // GPU-only: the fitted pipeline alone (the timed calls then teach the learnt table); the
    // rest with those first lessons, as the planner will price.
    let parametric = rates.calibrated();
    let taught = Arc::new(Learned::default());
    rates.teach_calls(&taught);
    let rates = Rates { learned: Some(taught), ..rates };
    for s in &samples {
        let (pred, bound) = parametric.gpu_secs(&s.p, 1.0);
        lines.push(format!(
            "# offload check {}gemm n={}: gpu measured {:.3} ms; the fitted pipeline {:.3} ms ({bound}-bound, {:+.1}%)",
            s.p.prec,
            s.p.n,
            s.secs * 1e3,
            pred * 1e3,
            (pred / s.secs - 1.0) * 100.0
        ));
    }
    for s in &splits {
        let x = rates.split_at(&s.p, s.ng as f64 / s.p.n as f64, threads);
        lines.push(format!(
            "# offload check {}gemm n={} split at gpu share {:.3} ({} cpu threads, {} feeders): predicted {:.3} ms (gpu side {:.3}, cpu side {:.3}), measured {:.3} ms ({:.3}, {:.3}), {:+.1}%",
            s.p.prec,
            s.p.n,
            x.share,
            x.cpu_threads,
            x.feeders,
            x.us / 1e3,
            x.gpu_us / 1e3,
            x.cpu_us / 1e3,
            s.secs * 1e3,
            s.gpu_secs * 1e3,
            s.cpu_secs * 1e3,
            (x.us / 1e6 / s.secs - 1.0) * 100.0
        ));
    }
    for (pc, n) in [('d', 1024usize), ('d', 2048), ('d', 4096), ('d', 16384), ('z', 2048), ('s', 2048)] {
        let p = Problem::square(pc, n);
        let (pr, sp) = rates.choose(&p, threads);
        let best = rates.best_split(&p, threads);
        lines.push(format!(
            "# offload model {pc}gemm n={n}: cpu {:.3} ms, gpu {:.3} ms, best split {} -> {}",
            pr.cpu_us / 1e3,
            pr.gpu_us / 1e3,
            best.map_or("-".into(), |b| format!("{:.3} ms at share {:.3}", b.us / 1e3, b.share)),
            match sp {
                Some(s) => format!("split at {:.3}", s.share),
                None if pr.gpu_us < pr.cpu_us => "gpu".into(),
                None => "cpu".into(),
            }
        ));
    }
    // Where the model now sends square calls.
    for pc in PRECS {
        let x = (6..=15).map(|l| 1usize << l).flat_map(|s| [s, s + s / 2]).find(|&s| {
            let pr = rates.predict(&Problem::square(pc, s), threads);
            pr.gpu_us < pr.cpu_us
        });
        lines.push(match x {
            Some(s) => format!("# offload crossover {pc}gemm (beta != 0): GPU from n = {s}"),
            None => format!("# offload crossover {pc}gemm: the CPU up to n = 49152"),
        });
    }
    lines.push(format!("# offload calibration took {:.1} s", start.elapsed().as_secs_f64()));
    Ok(lines)
}

/// A whole GPU-only call measured, for [`fit_pipeline`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    pub p: Problem,
    pub secs: f64,
}

/// Fit the per-call latency, the per-piece cost and the transfer efficiency of `r` to whole
/// GPU-only calls: least squares on the relative error, over a grid of efficiency (0.4..1.3)
/// and per-piece cost (0..400 us), the latency in closed form for each. Returns
/// `(latency, piece, bw_eff)` and the root-mean-square relative error of the fit.
pub fn fit_pipeline(r: &Rates, samples: &[Sample]) -> ((f64, f64, f64), f64) {
    let mut best = ((r.latency, r.piece, r.bw_eff), f64::INFINITY);
    if samples.is_empty() {
        return best;
    }
    let mut q = r.clone();
    q.latency = 0.0;
    q.learned = None;
    for ei in 0..=36 {
        q.bw_eff = 0.4 + 0.025 * ei as f64;
        for pi in 0..=40 {
            q.piece = pi as f64 * 10e-6;
            let base: Vec<f64> = samples.iter().map(|s| q.gpu_secs(&s.p, 1.0).0).collect();
            // d/dL sum ((L + b)/y - 1)^2 = 0.
            let (num, den) = samples
                .iter()
                .zip(&base)
                .fold((0.0, 0.0), |(n, d), (s, b)| (n + (s.secs - b) / (s.secs * s.secs), d + 1.0 / (s.secs * s.secs)));
            let lat = (num / den).max(0.0);
            let err = (samples.iter().zip(&base).map(|(s, b)| ((lat + b) / s.secs - 1.0).powi(2)).sum::<f64>()
                / samples.len() as f64)
                .sqrt();
            if err < best.1 {
                best = ((lat, q.piece, q.bw_eff), err);
            }
        }
    }
    best
}

/// A co-executed call measured at a fixed share, for [`fit_coexec`]: the problem, the GPU's
/// columns, the configuration, and the measured times (each side's end and the whole call).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SplitSample {
    pub p: Problem,
    pub ng: usize,
    pub threads: usize,
    pub feeders: usize,
    pub gpu_secs: f64,
    pub cpu_secs: f64,
    pub secs: f64,
}

/// Fit the CPU engine's and the GPU side's efficiencies while co-executing, and the split's
/// own fixed cost, to measured co-executed calls: each side's the median of the factor that
/// makes its prediction exact, each sample weighted by the side's measured time; the fixed
/// cost the plain median. Returns `(cpu_coexec, gpu_coexec, split_latency)`.
///
/// Why weighted: on the H200 host (session 62) GPU sides of 0.4-2.3 ms ran at their feeders'
/// rate alone (factor 0.96-1.32) and sides of 4-70 ms at 0.5-0.9 of it (the CPU engine's
/// threads contend for memory once they run at full tilt). The plain median of the 44 samples,
/// 20 of them short, gave 0.96 and priced the long calls' GPU side 20-45% short; the weighted
/// one gives 0.66. A long call is where a wrong price costs a user.
pub fn fit_coexec(r: &Rates, samples: &[SplitSample]) -> (f64, f64, f64) {
    let median = |v: Vec<(f64, f64)>, dflt: f64| {
        let mut v: Vec<(f64, f64)> = v.into_iter().filter(|(x, w)| x.is_finite() && *w > 0.0).collect();
        v.sort_by(|a, b| a.0.total_cmp(&b.0));
        let half = v.iter().map(|x| x.1).sum::<f64>() / 2.0;
        let mut seen = 0.0;
        v.into_iter()
            .find(|x| {
                seen += x.1;
                seen >= half
            })
            .map_or(dflt, |x| x.0)
    };
    let mut cpu = Vec::new();
    let mut gpu = Vec::new();
    let mut lat = Vec::new();
    for s in samples {
        let Some(cfg) = r.split_configs(s.threads).find(|c| c.0 == s.feeders) else { continue };
        let (f, ct, _, eff) = cfg;
        if s.ng < s.p.n && s.cpu_secs > 0.0 {
            // The CPU side's time falls as its efficiency rises: bisect it, with the GPU side
            // ending when it was measured to. Only where the GPU side covers a good part of
            // the CPU's (else the CPU ran mostly alone and says little about sharing).
            let nominal = eff / r.cpu_coexec;
            let at = |e: f64| {
                shared_then_alone(
                    r.cpu_cols_secs(&s.p, s.p.n - s.ng, ct, nominal * e),
                    || r.cpu_cols_secs(&s.p, s.p.n - s.ng, ct, 1.0),
                    s.gpu_secs,
                )
            };
            if s.gpu_secs >= 0.5 * s.cpu_secs {
                cpu.extend(solve_factor(at, s.cpu_secs).map(|x| (x, s.cpu_secs)));
            }
        }
        if s.ng > 0 && s.gpu_secs > 0.0 {
            // The GPU side's time falls as its rates rise: bisect the factor on them.
            let x = r.feed_xfer(f.max(1));
            let shared = if f == 0 { SHARED_FEEDER } else { 1.0 };
            let at = |g: f64| r.pipe_secs(&s.p, s.ng, Xfer { h2d: x.h2d * g * shared, d2h: x.d2h * g * shared }).0;
            // Only where the transfers matter (a compute-bound side says nothing about them).
            if at(FACTOR_RANGE.0) > 1.05 * at(FACTOR_RANGE.1) {
                gpu.extend(solve_factor(at, s.gpu_secs).map(|x| (x, s.gpu_secs)));
            }
        }
        lat.push(((s.secs - s.gpu_secs.max(s.cpu_secs)).max(0.0), 1.0));
    }
    (
        median(cpu, r.cpu_coexec).clamp(0.2, 1.5),
        median(gpu, r.gpu_coexec).clamp(0.05, 4.0),
        median(lat, r.split_latency).clamp(0.0, 5e-3),
    )
}

/// The factors [`fit_coexec`] considers.
const FACTOR_RANGE: (f64, f64) = (0.05, 4.0);

/// The factor in [`FACTOR_RANGE`] at which `at` (falling as the factor rises) gives `target`,
/// by bisection in log scale; None when the range does not reach it.
fn solve_factor(at: impl Fn(f64) -> f64, target: f64) -> Option<f64> {
    let (mut lo, mut hi) = FACTOR_RANGE;
    if at(hi) > target || at(lo) < target {
        return None;
    }
    for _ in 0..40 {
        let mid = (lo * hi).sqrt();
        if at(mid) > target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Some((lo * hi).sqrt())
}

/// Host buffers for calibration's whole calls: three of `bytes`, every 32-bit word 2^-7 (finite
/// in every precision), 8-byte aligned.
struct HostBufs {
    a: Vec<u64>,
    b: Vec<u64>,
    c: Vec<u64>,
}

impl HostBufs {
    fn new(bytes: usize) -> HostBufs {
        let w = 0x3c00_0000_3c00_0000u64;
        let len = bytes.div_ceil(8);
        HostBufs { a: vec![w; len], b: vec![w; len], c: vec![w; len] }
    }
}

/// `time(key)` for every key, in `passes` passes over all of them, each key's results in pass
/// order. The H200 host's speed drifts by 10-20% over seconds: a key's calls spread over the
/// whole step instead of one moment, and the medians of the passes stand for the machine.
fn in_passes<K: Copy, R>(
    keys: &[K],
    passes: usize,
    mut time: impl FnMut(K) -> gpu::Result<R>,
) -> gpu::Result<Vec<Vec<R>>> {
    let mut out: Vec<Vec<R>> = keys.iter().map(|_| Vec::new()).collect();
    for _ in 0..passes {
        for (o, &k) in out.iter_mut().zip(keys) {
            o.push(time(k)?);
        }
    }
    Ok(out)
}

/// Passes over the keys of a calibration step ([`in_passes`]).
const PASSES: usize = 3;

fn median_of(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// One C = A*B + 0.5*C, n x n, on host memory: GPU-only (`plan` None), or co-executed under
/// `plan`. Its (GPU side, CPU side, call) seconds (GPU-only: (call, 0, call)).
fn host_call<T: Scalar>(rt: &Runtime, n: usize, plan: Option<&SplitPlan>, h: &mut HostBufs) -> gpu::Result<Sides> {
    use crate::types::Trans::No;
    let (a, b, c) = (h.a.as_ptr() as *const T, h.b.as_ptr() as *const T, h.c.as_mut_ptr() as *mut T);
    let (one, half) = (T::one(), T::from_f64(0.5));
    let t0 = std::time::Instant::now();
    match plan {
        None => {
            unsafe { crate::hybrid::offload::gemm::<T>(rt, No, No, n, n, n, one, a, n, b, n, half, c, n) }
                .map_err(|f| f.error)?;
            let secs = t0.elapsed().as_secs_f64();
            Ok((secs, 0.0, secs))
        }
        Some(plan) => {
            match unsafe {
                crate::hybrid::offload::coexec::<T>(rt, No, No, n, n, n, one, a, n, b, n, half, c, n, &plan.split())
            } {
                (_, Some(e)) => Err(e),
                (st, None) => Ok((st.gpu_side_secs, st.cpu_side_secs, st.secs)),
            }
        }
    }
}

/// Median seconds of a whole GPU-only C = A*B + 0.5*C, n x n, on host memory
/// ([`median_after_warmup`]).
fn time_gpu_call<T: Scalar>(rt: &Runtime, n: usize, h: &mut HostBufs) -> gpu::Result<f64> {
    let mut err = None;
    let secs = median_after_warmup(|| {
        if let Err(e) = host_call::<T>(rt, n, None, h) {
            err.get_or_insert(e);
        }
    });
    match err {
        Some(e) => Err(e),
        None => Ok(secs),
    }
}

/// Medians of a co-executed C = A*B + 0.5*C under `plan` (one warm-up): (GPU side, CPU side,
/// the call) in seconds.
fn time_split_call<T: Scalar>(rt: &Runtime, n: usize, plan: &SplitPlan, h: &mut HostBufs) -> gpu::Result<Sides> {
    // One warm-up, then as many timed calls as `timed_reps` gives for its time.
    let first = host_call::<T>(rt, n, Some(plan), h)?;
    let v = (0..timed_reps(first.2)).map(|_| host_call::<T>(rt, n, Some(plan), h)).collect::<gpu::Result<Vec<_>>>()?;
    Ok(median_sides(&v))
}

/// A call's (GPU side, CPU side, whole call) in seconds (a GPU-only call: (call, 0, call)).
type Sides = (f64, f64, f64);

/// The medians of each of `v`'s three times.
fn median_sides(v: &[Sides]) -> Sides {
    let med = |f: fn(&Sides) -> f64| median_of(v.iter().map(f).collect());
    (med(|x| x.0), med(|x| x.1), med(|x| x.2))
}

/// Median seconds of the CPU engine's C = A*B + 0.5*C at n.
fn time_cpu<T: Scalar>(n: usize) -> f64 {
    use crate::types::{MatMut, MatRef};
    let a: Vec<T> = (0..n * n).map(|i| T::from_f64(((i * 7919) % 1000) as f64 / 1000.0 - 0.5)).collect();
    let b = a.clone();
    let mut c = vec![T::zero(); n * n];
    median_after_warmup(|| unsafe {
        crate::cpu::level3::gemm(
            T::one(),
            MatRef::col_major(a.as_ptr(), n, n, n),
            false,
            MatRef::col_major(b.as_ptr(), n, n, n),
            false,
            T::from_f64(0.5),
            MatMut::col_major(c.as_mut_ptr(), n, n, n),
        )
    })
}

/// Timed calls after a warm-up call of `first` seconds in one pass of a calibration step: two
/// of a call over 0.3 s, else as many as fit in [`PASS_SECS`], 3 to 25
/// (the H200 host's calls under a few ms vary by 10-20% from call to call: their medians need
/// the most calls, and cost the least).
fn timed_reps(first: f64) -> usize {
    if first > 0.3 {
        2
    } else {
        (PASS_SECS / first.max(1e-6)).clamp(3.0, 25.0) as usize
    }
}

/// Time one key's timed calls take in one pass, at most (unless 3 calls take longer).
const PASS_SECS: f64 = 0.06;

/// Median seconds of `f`: a first call, then [`timed_reps`] timed ones (the first joins them
/// where it took over 0.3 s).
fn median_after_warmup(mut f: impl FnMut()) -> f64 {
    let mut timed = || {
        let t0 = std::time::Instant::now();
        f();
        t0.elapsed().as_secs_f64()
    };
    let first = timed();
    let mut v: Vec<f64> = (0..timed_reps(first)).map(|_| timed()).collect();
    if first > 0.3 {
        v.push(first);
    }
    median_of(v)
}

/// `offload op_eff` lines for SYRK and TRSM (n x n, k = n; left, lower, no transpose): at
/// n = 512..4096, the median time of the routine on the CPU engine and offloaded to the GPU
/// (the CPU engine, and the offload executor), each over the model's time for the GEMM
/// it prices the routine as. The CPU engine's SYRK and TRSM and cuBLAS's run at rates of their
/// own (the engine's recursive SYRK was 2.5x its GEMM-equivalent at n = 512 and half of it at
/// 16384 on the H200 host), which these factors carry into the model.
fn measure_op_factors(rt: &Runtime, rates: &Rates, threads: usize) -> Vec<String> {
    use crate::cpu::level3::{sym, tri};
    use crate::hybrid::offload::l3;
    use crate::types::{Diag, MatMut, MatRef, Side as TSide, Trans, Uplo};
    let mut base = rates.clone();
    base.op_factors.clear();
    let mut lines = Vec::new();
    for n in [512usize, 1024, 2048, 4096, 8192] {
        let len = n * n;
        // A: well conditioned for TRSM (a dominant diagonal); C the host buffer, rewritten.
        let a: Vec<f64> = (0..len)
            .map(|i| {
                let (r, c) = (i % n, i / n);
                if r == c {
                    2.0
                } else {
                    (((i * 7919) % 1000) as f64 / 1000.0 - 0.5) / n as f64
                }
            })
            .collect();
        let mut c = vec![0.5f64; len];
        for (name, shape) in [("syrk", Level3::Syrk { n, k: n }), ("trsm", Level3::Trsm { left: true, m: n, n })] {
            let p = Problem::level3::<f64>(shape, false, false);
            let pr = base.predict(&p, threads);
            // Each side as the planner runs it once decided: the CPU engine, or the offload
            // executor (`hybrid::offload::l3`) on this device.
            let mut time_on = |side: Side| {
                let (pa, pc) = (a.as_ptr(), c.as_mut_ptr());
                median_after_warmup(|| unsafe {
                    let call = if name == "syrk" {
                        l3::Call::syrk(false, Uplo::Lower, Trans::No, n, n, 1.0, pa, n, 0.5, pc, n)
                    } else {
                        l3::Call::trxm(
                            true,
                            TSide::Left,
                            Uplo::Lower,
                            Trans::No,
                            Diag::NonUnit,
                            n,
                            n,
                            1.0,
                            pa,
                            n,
                            pc,
                            n,
                        )
                    };
                    match side {
                        Side::Gpu => {
                            // (A failure leaves the rest to the CPU engine, as a call's would.)
                            if let Err(f) = l3::run::<f64>(rt, &call) {
                                if name == "syrk" {
                                    l3::finish_rank(&call, &f.remaining())
                                } else {
                                    l3::finish_tri(&call, &f.remaining())
                                }
                            }
                        }
                        Side::Cpu if name == "syrk" => {
                            let x = MatRef::col_major(pa, n, n, n);
                            sym::syrk(Uplo::Lower, false, 1.0, x, false, 0.5, MatMut::col_major(pc, n, n, n))
                        }
                        Side::Cpu => tri::trsm(
                            TSide::Left,
                            Uplo::Lower,
                            Trans::No,
                            Diag::NonUnit,
                            1.0,
                            MatRef::col_major(pa, n, n, n),
                            MatMut::col_major(pc, n, n, n),
                        ),
                    }
                })
            };
            let (tc, tg) = (time_on(Side::Cpu), time_on(Side::Gpu));
            lines.push(format!(
                "offload op_eff {name} {n} {:.3} {:.3}",
                tc * 1e6 / pr.cpu_us.max(1e-3),
                tg * 1e6 / pr.gpu_us.max(1e-3)
            ));
        }
    }
    lines
}
