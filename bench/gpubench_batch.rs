//! `gpubench batch`: batched GEMM of small products on device memory, hyblas's kernel
//! (`gpu::batched`) against the real cuBLAS's `cublas?gemmStridedBatched` and
//! `cublas?gemmBatched` in one process.
//!
//! Per point (precision, n; m = n = k, `batch` products, A and B random in [-1, 1), beta 0 or
//! --beta) it times, as back-to-back calls in alternating batches (`Timer::median_batched_each`):
//! cuBLAS strided twice (`cublas`, `cublas2`: its noise beside the ratios), cuBLAS with pointer
//! arrays (`cublas_ptr`), the planner's route for a strided call (`auto`: hyblas's kernel or
//! cuBLAS, `plan::batch::own_kernel`), hyblas's kernel strided and with pointer arrays
//! (`hyblas`, `hyblas_ptr`; n <= 64), and with --shapes every other launch shape of the kernel
//! (the best is printed). Every side's output is then checked, C poisoned first, at sampled
//! products against a plain loop on the host (the same random values).
//!
//! Writes `<gpu>-batch.csv` and `<gpu>-batch.svg` (cuBLAS strided time over hyblas's, against
//! n) under --out, and prints the table.

use hyblas::gpu::batched::{self, At, BMat, Shape};
use hyblas::gpu::driver::{check, sys};
use hyblas::gpu::timing::Timer;
use hyblas::gpu::vendor_calls::{vendor_gemm_batched, vendor_gemm_strided};
use hyblas::gpu::{DMat, DeviceBuffer, Exec, In, Runtime};
use hyblas::types::{Real, Scalar, Trans, C32, C64};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

const HELP: &str = "\
usage: gpubench batch [options]
  --n LIST        sizes: n (m = n = k) or m:n:k (default 2,3,4,6,8,12,16,24,32,48,64,96,128)
  --prec LIST     s,d,c,z (default all)
  --batch N       products per call (default 10000; fewer where an operand would pass 1 GiB)
  --trans AB      nn, nt, tn, tt (default nn)
  --beta X        beta (default 0; 1 reads C too)
  --reps N        timed batches per side (default 5)
  --shapes        also time every launch shape of the kernel (r 1, 2, 4 x 64..512 threads)
  --host          instead: host-memory DGEMM batches (cblas_dgemm_batch_strided), the CPU
                  engine, the GPU (one pipelined transfer, one batched call) and the planner's
                  choice, wall time; sizes n:count (default 4:10000,8:10000,16:10000,32:10000,
                  128:100,256:100,512:100); writes <gpu>-batch-host.csv
  --out DIR       where the CSV and SVG go (default bench/results)
  --plot CSV      only redraw the SVG beside CSV (a file this command wrote; no GPU needed)
";

struct Opts {
    n: Vec<(usize, usize, usize)>,
    precs: Vec<char>,
    batch: usize,
    trans: (Trans, Trans),
    beta: f64,
    reps: usize,
    shapes: bool,
    host: bool,
    plot: Option<PathBuf>,
    out: PathBuf,
}

fn parse(args: &[String]) -> Result<Opts, String> {
    let mut o = Opts {
        n: [2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128].map(|n| (n, n, n)).to_vec(),
        precs: vec!['s', 'd', 'c', 'z'],
        batch: 10_000,
        trans: (Trans::No, Trans::No),
        beta: 0.0,
        reps: 5,
        shapes: false,
        host: false,
        plot: None,
        out: "bench/results".into(),
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut val = || it.next().cloned().ok_or_else(|| format!("{a} needs a value"));
        match a.as_str() {
            "--n" => {
                o.n = val()?
                    .split(',')
                    .map(|x| {
                        let v: Vec<usize> = x
                            .split(':')
                            .map(|d| d.trim().parse().map_err(|_| format!("bad size {x}")))
                            .collect::<Result<_, _>>()?;
                        match v[..] {
                            [n] => Ok((n, n, n)),
                            [n, count] => Ok((n, count, 0)),
                            [m, n, k] => Ok((m, n, k)),
                            _ => Err(format!("bad size {x} (n or m:n:k)")),
                        }
                    })
                    .collect::<Result<_, String>>()?
            }
            "--prec" => o.precs = val()?.split(',').filter_map(|p| p.chars().next()).collect(),
            "--batch" => o.batch = val()?.parse().map_err(|_| "bad --batch")?,
            "--trans" => {
                let t = |c: char| if c == 't' { Trans::Trans } else { Trans::No };
                let v: Vec<char> = val()?.chars().collect();
                o.trans = (t(v[0]), t(*v.get(1).unwrap_or(&'n')));
            }
            "--beta" => o.beta = val()?.parse().map_err(|_| "bad --beta")?,
            "--reps" => o.reps = val()?.parse().map_err(|_| "bad --reps")?,
            "--shapes" => o.shapes = true,
            "--host" => o.host = true,
            "--plot" => o.plot = Some(val()?.into()),
            "--out" => o.out = val()?.into(),
            "-h" | "--help" => return Err(HELP.into()),
            x => return Err(format!("unknown option {x}\n{HELP}")),
        }
    }
    if o.precs.iter().any(|p| !"sdcz".contains(*p)) {
        return Err("--prec takes s, d, c and z".into());
    }
    Ok(o)
}

const SIDES: [&str; 6] = ["cublas", "cublas2", "cublas_ptr", "auto", "hyblas", "hyblas_ptr"];

#[derive(Default, Clone)]
struct Row {
    prec: char,
    m: usize,
    n: usize,
    k: usize,
    batch: usize,
    /// Microseconds per call of each side (NaN: not run).
    us: [f64; 6],
    /// Whether `auto` ran hyblas's kernel.
    auto_own: bool,
    /// The best launch shape (with --shapes) and its time.
    best: Option<(Shape, f64)>,
    /// max |C - loop| / (k max|A| max|B|) at the sampled products, per side.
    err: [f64; 6],
}

/// A device buffer of `elems` elements repeating a host chunk of odd length (the chunk is
/// returned, so the host knows every value: element e is `chunk[e % len]`).
fn filled<T: Scalar>(ex: &Exec, elems: usize, seed: u64) -> Result<(DeviceBuffer, Vec<T>), String> {
    let len = ((1usize << 18) + 7).min(elems.max(1));
    let v = super::strassen::chunk::<f64>(2 * len, seed);
    let re = |x: f64| T::from_f64(x).re();
    let chunk: Vec<T> = (0..len).map(|i| T::from_parts(re(v[2 * i]), re(v[2 * i + 1]))).collect();
    let es = std::mem::size_of::<T>();
    let buf = DeviceBuffer::new(elems.max(1) * es).map_err(|e| e.to_string())?;
    let src = DeviceBuffer::from_slice(&chunk).map_err(|e| e.to_string())?;
    hyblas::gpu::strassen::fill_repeat(ex, buf.ptr, elems, es, &src).map_err(|e| e.to_string())?;
    ex.rt.sync(ex.stream).map_err(|e| e.to_string())?;
    Ok((buf, chunk))
}

fn point<T: Scalar>(ex: &Exec, t: &Timer, o: &Opts, (m, n, k): (usize, usize, usize)) -> Result<Row, String> {
    let es = std::mem::size_of::<T>();
    let (ta, tb) = o.trans;
    // Column-major, leading dimension = rows, each product right after the one before.
    let (ra, rb) = (if ta == Trans::No { m } else { k }, if tb == Trans::No { k } else { n });
    let (sa, sb, sc) = (m * k, k * n, m * n);
    let batch = o.batch.min((1usize << 30) / (sa.max(sb).max(sc) * es)).max(1);
    let seed = (m * 131 + n * 17 + k) as u64;
    let (a, ca) = filled::<T>(ex, sa * batch, 11 + seed)?;
    let (b, cb) = filled::<T>(ex, sb * batch, 23 + seed)?;
    let (c, c0) = filled::<T>(ex, sc * batch, 37 + seed)?;
    let arrays = |base: u64, s: usize| -> Result<DeviceBuffer, String> {
        let ptrs: Vec<u64> = (0..batch).map(|p| base + (p * s * es) as u64).collect();
        DeviceBuffer::from_slice(&ptrs).map_err(|e| e.to_string())
    };
    let (pa, pb, pc) = (arrays(a.ptr, sa)?, arrays(b.ptr, sb)?, arrays(c.ptr, sc)?);
    let (one, beta) = (T::one(), T::from_f64(o.beta));
    let (mi, ni, ki) = (m as i64, n as i64, k as i64);
    let lds = [ra as i64, rb as i64, mi];
    let strided = |x: &DeviceBuffer, s: usize, ld: i64| BMat { at: At::Strided { ptr: x.ptr, stride: s as i64 }, ld };
    let arr = |x: &DeviceBuffer, ld: i64| BMat { at: At::Array(x.ptr), ld };
    let own = hyblas::plan::batch::kernel_decision::<T>(mi, ni, ki).route == hyblas::plan::gpu::Route::Hyblas;
    let fits = batched::fits(mi, ni);
    let run = |side: usize, shape: Option<Shape>| -> hyblas::gpu::Result<()> {
        let dm = |x: &DeviceBuffer, ld: i64| DMat { ptr: x.ptr, ld };
        let (sai, sbi, sci) = (sa as i64, sb as i64, sc as i64);
        let cublas = || {
            let (am, bm, cm) = ((dm(&a, lds[0]), sai), (dm(&b, lds[1]), sbi), (dm(&c, lds[2]), sci));
            vendor_gemm_strided(ex, (ta, tb), (mi, ni, ki), one, am, bm, beta, cm, batch as i64)
        };
        let (al, be) = (In::Host(one), In::Host(beta));
        let shape = shape.unwrap_or(Shape::of(mi, ni));
        let b_ = batch as i64;
        match side {
            0 | 1 => cublas(),
            2 => vendor_gemm_batched(ex, (ta, tb), (mi, ni, ki), one, [pa.ptr, pb.ptr, pc.ptr], lds, beta, b_),
            3 if !own => cublas(),
            3 | 4 => {
                let (am, bm, cm) = (strided(&a, sa, lds[0]), strided(&b, sb, lds[1]), strided(&c, sc, lds[2]));
                batched::gemm_shaped(ex, shape, ta, tb, mi, ni, ki, al, am, bm, be, cm, b_)
            }
            _ => {
                let (am, bm, cm) = (arr(&pa, lds[0]), arr(&pb, lds[1]), arr(&pc, lds[2]));
                batched::gemm_shaped(ex, shape, ta, tb, mi, ni, ki, al, am, bm, be, cm, b_)
            }
        }
    };
    let sides: Vec<usize> = (0..SIDES.len()).filter(|&s| s < 4 || fits).collect();
    let mut row =
        Row { prec: T::PREFIX, m, n, k, batch, us: [f64::NAN; 6], err: [f64::NAN; 6], auto_own: own, best: None };
    for &side in &sides {
        run(side, None).map_err(|e| format!("{}: {e}", SIDES[side]))?;
    }
    ex.rt.sync(ex.stream).map_err(|e| e.to_string())?;
    {
        let mut fs: Vec<Box<dyn FnMut() -> hyblas::gpu::Result<()> + '_>> =
            sides.iter().map(|&side| Box::new(move || run(side, None)) as Box<dyn FnMut() -> _>).collect();
        let mut refs: Vec<&mut dyn FnMut() -> hyblas::gpu::Result<()>> =
            fs.iter_mut().map(|f| &mut **f as &mut dyn FnMut() -> _).collect();
        let times = t.median_batched_each(o.reps, 0.02, &mut refs).map_err(|e| e.to_string())?;
        for (&side, us) in sides.iter().zip(times) {
            row.us[side] = us * 1e6;
        }
    }
    if o.shapes && fits {
        let mut best: Option<(Shape, f64)> = None;
        for r in [1, 2, 4] {
            for threads in [64, 128, 256, 512] {
                let shape = Shape { r, threads };
                if shape.per_product(mi, ni) > threads {
                    continue;
                }
                // Shapes the kernel refuses (more threads than its registers allow) are skipped.
                let Ok(us) = t.median_batched(o.reps, 0.01, &mut || run(4, Some(shape))) else { continue };
                let us = us * 1e6;
                if best.is_none_or(|(_, b)| us < b) {
                    best = Some((shape, us));
                }
            }
        }
        row.best = best;
    }
    // Check every side: C reset to its start (beta != 0 reads it), poisoned where beta == 0
    // (NaN bytes: a skipped entry shows), one call, sampled products against a loop.
    let samples: Vec<usize> = (0..8).map(|i| (i * 7919 + n * 31) % batch).chain([0, batch - 1]).collect();
    let scale = k.max(1) as f64;
    for &side in &sides {
        if o.beta == 0.0 {
            check(unsafe { sys::cuMemsetD8Async(c.ptr, 0xff, c.bytes, ex.stream) }, "cuMemsetD8Async")
                .map_err(|e| e.to_string())?;
        } else {
            let src = DeviceBuffer::from_slice(&c0).map_err(|e| e.to_string())?;
            hyblas::gpu::strassen::fill_repeat(ex, c.ptr, sc * batch, es, &src).map_err(|e| e.to_string())?;
        }
        run(side, None).map_err(|e| e.to_string())?;
        ex.rt.sync(ex.stream).map_err(|e| e.to_string())?;
        let mut worst = 0f64;
        for &p in &samples {
            let mut got = vec![T::zero(); sc];
            let at = c.ptr + (p * sc * es) as u64;
            check(
                unsafe { sys::cuMemcpyDtoH_v2(got.as_mut_ptr() as *mut std::ffi::c_void, at, sc * es) },
                "cuMemcpyDtoH",
            )
            .map_err(|e| e.to_string())?;
            // Element (i, j) of product p's copy of an operand with `rows` rows and `len` elements.
            let el = |chunk: &[T], len: usize, rows: usize, i: usize, j: usize| {
                chunk[(p * len + i + j * rows) % chunk.len()]
            };
            for j in 0..n {
                for i in 0..m {
                    let mut sum = T::zero();
                    for l in 0..k {
                        let x = if ta == Trans::No { el(&ca, sa, ra, i, l) } else { el(&ca, sa, ra, l, i) };
                        let y = if tb == Trans::No { el(&cb, sb, rb, l, j) } else { el(&cb, sb, rb, j, l) };
                        sum += x * y;
                    }
                    let want = sum + if o.beta == 0.0 { T::zero() } else { beta * el(&c0, sc, m, i, j) };
                    let e = (got[i + j * m] - want).abs1().to_f64() / scale;
                    worst = if e.is_nan() || worst.is_nan() { f64::NAN } else { worst.max(e) };
                }
            }
        }
        row.err[side] = worst;
    }
    Ok(row)
}

fn csv(rows: &[Row]) -> String {
    let mut s = String::from("precision,m,n,k,batch,cublas_us,cublas2_us,cublas_ptr_us,auto_us,auto_route,hyblas_us,hyblas_ptr_us,ratio_auto,ratio_hyblas,ratio_ptr,best_r,best_threads,best_us,err_hyblas,err_cublas\n");
    for r in rows {
        let (br, bt, bu) = r.best.map(|(s, u)| (s.r, s.threads, u)).unwrap_or((0, 0, f64::NAN));
        let _ = writeln!(
            s,
            "{},{},{},{},{},{:.2},{:.2},{:.2},{:.2},{},{:.2},{:.2},{:.4},{:.4},{:.4},{br},{bt},{bu:.2},{:.2e},{:.2e}",
            r.prec,
            r.m,
            r.n,
            r.k,
            r.batch,
            r.us[0],
            r.us[1],
            r.us[2],
            r.us[3],
            if r.auto_own { "hyblas" } else { "cublas" },
            r.us[4],
            r.us[5],
            r.us[0] / r.us[3],
            r.us[0] / r.us[4],
            r.us[2] / r.us[5],
            r.err[4],
            r.err[0]
        );
    }
    s
}

/// cuBLAS strided time over `auto`'s, against n, both on log scales, one line per precision.
fn svg(rows: &[Row]) -> String {
    let (w, h, x0, x1, y0, y1) = (720.0, 420.0, 60.0, 700.0, 370.0, 20.0);
    let ratio = |r: &Row| r.us[0] / r.us[3];
    let rows: Vec<&Row> = rows.iter().filter(|r| r.m == r.n && r.n == r.k).collect();
    // Powers of two from below the smallest ratio to above the largest (at least 0.5 .. 2).
    let finite = || rows.iter().map(|r| ratio(r)).filter(|v| v.is_finite() && *v > 0.0);
    let lo = finite().fold(0.5f64, f64::min).log2().floor();
    let hi = finite().fold(2.0f64, f64::max).log2().ceil();
    let (lmin, lmax) = rows.iter().fold((f64::MAX, f64::MIN), |(a, b), r| {
        let l = (r.n as f64).log2();
        (a.min(l), b.max(l))
    });
    let px = |n: usize| x0 + ((n as f64).log2() - lmin) / (lmax - lmin).max(1.0) * (x1 - x0);
    let py = |v: f64| y0 - (v.log2() - lo) / (hi - lo).max(1.0) * (y0 - y1);
    let mut s = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(
        s,
        r##"<rect width="{w}" height="{h}" fill="white"/><line x1="{x0}" y1="{y0}" x2="{x1}" y2="{y0}" stroke="#888"/><line x1="{x0}" y1="{y0}" x2="{x0}" y2="{y1}" stroke="#888"/><line x1="{x0}" y1="{:.1}" x2="{x1}" y2="{:.1}" stroke="#bbb" stroke-dasharray="3,3"/>"##,
        py(1.0),
        py(1.0)
    );
    for e in lo as i32..=hi as i32 {
        let v = 2f64.powi(e);
        let _ = writeln!(s, r##"<text x="{}" y="{:.1}" text-anchor="end">{v}</text>"##, x0 - 4.0, py(v) + 4.0);
    }
    let mut ns: Vec<usize> = rows.iter().map(|r| r.n).collect();
    ns.sort_unstable();
    ns.dedup();
    for &n in &ns {
        super::svg_axes::x_tick(&mut s, px(n), y0, &n.to_string());
    }
    super::svg_axes::axis_titles(
        &mut s,
        ((x0 + x1) / 2.0, y0 + 29.0),
        (15.0, (y0 + y1) / 2.0),
        "n (m = n = k)",
        "cuBLAS strided batched time / hyblas time",
    );
    let lines = [('s', "#1f77b4"), ('d', "#d62728"), ('c', "#2ca02c"), ('z', "#9467bd")];
    for (i, (p, color)) in lines.iter().enumerate() {
        let pts: Vec<String> = rows
            .iter()
            .filter(|r| r.prec == *p && ratio(r).is_finite())
            .map(|r| format!("{:.1},{:.1}", px(r.n), py(ratio(r))))
            .collect();
        if pts.is_empty() {
            continue;
        }
        let _ =
            writeln!(s, r#"<polyline points="{}" fill="none" stroke="{color}" stroke-width="1.5"/>"#, pts.join(" "));
        let ly = y1 + 14.0 * i as f64 + 10.0;
        let _ = writeln!(
            s,
            r#"<line x1="{}" y1="{ly}" x2="{}" y2="{ly}" stroke="{color}"/><text x="{}" y="{}">{}gemm (planner's route)</text>"#,
            x1 - 170.0,
            x1 - 145.0,
            x1 - 140.0,
            ly + 4.0,
            p
        );
    }
    s.push_str("</svg>\n");
    s
}

#[rustfmt::skip]
extern "C" {
    fn cblas_dgemm_batch_strided(l: i32, ta: i32, tb: i32, m: i32, n: i32, k: i32, al: f64, a: *const f64, lda: i32, sa: i32, b: *const f64, ldb: i32, sb: i32, be: f64, c: *mut f64, ldc: i32, sc: i32, bs: i32);
}

/// `--host`: host-memory DGEMM batches of `count` n x n x n products each, the CPU engine
/// against the GPU offload and the planner's choice, median wall time of `o.reps` calls.
fn host_mode(o: &Opts, sizes: &[(usize, usize)]) -> ExitCode {
    use hyblas::plan::host::with_side;
    use hyblas::plan::offload::Side;
    let threads = hyblas::cpu::threads::nthreads();
    println!(
        "gpubench batch --host: DGEMM batches in host memory, {threads} CPU threads; ms per call (median of {})",
        o.reps
    );
    println!(
        "{:>5} {:>6} {:>9} {:>9} {:>9} {:>8} {:>8} {:>9}",
        "n", "count", "cpu ms", "gpu ms", "auto ms", "auto", "best/auto", "max diff"
    );
    let mut csv = String::from("n,count,threads,cpu_ms,gpu_ms,auto_ms,auto_route,best_over_auto,max_rel_diff\n");
    for &(n, count) in sizes {
        let nn = n * n;
        let v = super::strassen::chunk::<f64>(2 * nn * count + nn, 99 + n as u64);
        let (a, b) = (&v[..nn * count], &v[nn * count..2 * nn * count]);
        let mut c = vec![0.0f64; nn * count];
        let i = n as i32;
        let call = |c: &mut Vec<f64>| unsafe {
            cblas_dgemm_batch_strided(
                102,
                111,
                111,
                i,
                i,
                i,
                1.0,
                a.as_ptr(),
                i,
                nn as i32,
                b.as_ptr(),
                i,
                nn as i32,
                0.0,
                c.as_mut_ptr(),
                i,
                nn as i32,
                count as i32,
            )
        };
        let time = |side: Option<Side>, c: &mut Vec<f64>| -> (f64, bool) {
            let before = hyblas::plan::batch::offloaded_batches();
            with_side(side, || call(c));
            let gpu = hyblas::plan::batch::offloaded_batches() > before;
            let mut t: Vec<f64> = (0..o.reps.max(1))
                .map(|_| {
                    let s = std::time::Instant::now();
                    with_side(side, || call(c));
                    s.elapsed().as_secs_f64() * 1e3
                })
                .collect();
            t.sort_by(f64::total_cmp);
            (t[t.len() / 2], gpu)
        };
        let (cpu, _) = time(Some(Side::Cpu), &mut c);
        let want = c.clone();
        let (gpu, went) = time(Some(Side::Gpu), &mut c);
        let scale = want.iter().fold(1e-300f64, |m, x| m.max(x.abs()));
        let diff = c.iter().zip(&want).fold(0f64, |m, (x, y)| m.max((x - y).abs() / scale));
        let (auto, auto_gpu) = time(None, &mut c);
        let route = if auto_gpu { "gpu" } else { "cpu" };
        let best = cpu.min(gpu);
        println!(
            "{n:>5} {count:>6} {cpu:>9.3} {gpu:>9.3} {auto:>9.3} {route:>8} {:>8.2}x {diff:>9.1e}{}",
            best / auto,
            if went { "" } else { "  (gpu side not offloaded!)" }
        );
        csv.push_str(&format!(
            "{n},{count},{threads},{cpu:.4},{gpu:.4},{auto:.4},{route},{:.4},{diff:.2e}\n",
            best / auto
        ));
    }
    let _ = std::fs::create_dir_all(&o.out);
    let slug = hyblas::gpu::Runtime::get(0).map(|rt| rt.props.slug()).unwrap_or_else(|_| "cpu".into());
    let path = o.out.join(format!("{slug}-batch-host.csv"));
    if let Err(e) = std::fs::write(&path, csv) {
        eprintln!("gpubench batch: writing {}: {e}", path.display());
        return ExitCode::from(1);
    }
    println!("wrote {}", path.display());
    ExitCode::SUCCESS
}

/// `--plot`: the SVG of a CSV [`csv`] wrote, beside it (the plot reads cuBLAS's and `auto`'s
/// times only).
fn replot(path: &std::path::Path) -> Result<PathBuf, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().ok_or("empty file")?.split(',').collect();
    let col = |name: &str| head.iter().position(|h| *h == name).ok_or(format!("no column {name}"));
    let (p, m, n, k, cu, au) = (col("precision")?, col("m")?, col("n")?, col("k")?, col("cublas_us")?, col("auto_us")?);
    let mut rows = vec![];
    for l in lines {
        let f: Vec<&str> = l.split(',').collect();
        let num = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).ok_or(format!("bad line {l}"));
        let mut r = Row { prec: f[p].chars().next().unwrap_or('?'), us: [f64::NAN; 6], ..Default::default() };
        (r.m, r.n, r.k) = (num(m)? as usize, num(n)? as usize, num(k)? as usize);
        (r.us[0], r.us[3]) = (num(cu)?, num(au)?);
        rows.push(r);
    }
    let out = path.with_extension("svg");
    std::fs::write(&out, svg(&rows)).map_err(|e| format!("{}: {e}", out.display()))?;
    Ok(out)
}

pub fn main(args: &[String]) -> ExitCode {
    let o = match parse(args) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    if let Some(csv) = &o.plot {
        return match replot(csv) {
            Ok(path) => {
                println!("wrote {}", path.display());
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("gpubench batch --plot: {e}");
                ExitCode::from(1)
            }
        };
    }
    let rt = match Runtime::get(0).and_then(|rt| rt.bind().map(|_| rt)) {
        Ok(rt) => rt,
        Err(e) => {
            println!("no GPU ({e}): nothing to measure");
            return ExitCode::SUCCESS;
        }
    };
    if o.host {
        let default = o.n.len() == 13 && o.n[0] == (2, 2, 2);
        let sizes: Vec<(usize, usize)> = if default {
            [(4, 10_000), (8, 10_000), (16, 10_000), (32, 10_000), (128, 100), (256, 100), (512, 100)].to_vec()
        } else {
            // n:count (a plain n: 100 products).
            o.n.iter().map(|&(n, count, k)| (n, if k == 0 { count } else { 100 })).collect()
        };
        return host_mode(&o, &sizes);
    }
    let ex = Exec::own(rt);
    let units: Vec<_> =
        o.precs.iter().map(|&p| hyblas::gpu::kernels::Unit::of(hyblas::gpu::kernels::Family::Batch, p)).collect();
    let t = match rt.prepare(&units).and_then(|_| Timer::new(ex.stream)) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("gpubench batch: {e}");
            return ExitCode::from(1);
        }
    };
    println!("gpubench batch on {}: {:?} x {:?}, beta {}", rt.props.name, o.trans.0, o.trans.1, o.beta);
    println!(
        "{:<4} {:>12} {:>6} {:>9} {:>7} {:>9} {:>9} {:>9} {:>7} {:>7} {:>7} {:>14} {:>9}",
        "prec",
        "m:n:k",
        "batch",
        "cuBLAS us",
        "noise",
        "cuB ptr",
        "auto us",
        "hyb us",
        "auto x",
        "hyb x",
        "ptr x",
        "best shape",
        "err"
    );
    let mut rows = vec![];
    for &p in &o.precs {
        for &n in &o.n {
            let r = match p {
                's' => point::<f32>(&ex, &t, &o, n),
                'd' => point::<f64>(&ex, &t, &o, n),
                'c' => point::<C32>(&ex, &t, &o, n),
                _ => point::<C64>(&ex, &t, &o, n),
            };
            match r {
                Ok(r) => {
                    let best = r.best.map(|(s, u)| format!("r{} t{} {:.1}", s.r, s.threads, u)).unwrap_or_default();
                    println!(
                        "{:<4} {:>12} {:>6} {:>9.1} {:>6.1}% {:>9.1} {:>9.1} {:>9.1} {:>6.2}x {:>6.2}x {:>6.2}x {:>14} {:>9.1e} {}",
                        r.prec,
                        format!("{}:{}:{}", r.m, r.n, r.k),
                        r.batch,
                        r.us[0],
                        100.0 * (r.us[1] / r.us[0] - 1.0).abs(),
                        r.us[2],
                        r.us[3],
                        r.us[4],
                        r.us[0] / r.us[3],
                        r.us[0] / r.us[4],
                        r.us[2] / r.us[5],
                        best,
                        r.err[4],
                        if r.auto_own { "hyblas" } else { "cublas" }
                    );
                    rows.push(r);
                }
                Err(e) => eprintln!("gpubench batch: {p} {n:?}: {e}"),
            }
        }
    }
    let stem = format!("{}-batch", rt.props.slug());
    if let Err(e) = super::svg_axes::write_results(&o.out, &stem, &csv(&rows), &svg(&rows)) {
        eprintln!("gpubench batch: {e}");
        return ExitCode::from(1);
    }
    // Sides not run (hyblas's kernel above n = 64) have no error.
    let bad = rows.iter().any(|r| r.err.iter().zip(r.us).any(|(e, us)| !us.is_nan() && (e.is_nan() || *e > 1e-2)));
    if bad {
        eprintln!("gpubench batch: a side's output is wrong (err column)");
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}
