//! `gpubench strassen`: Strassen-Winograd GEMM (seed 003, `gpu::strassen`) against the real
//! cuBLAS in one process, on device memory: time and error per size and level.
//!
//! Per point (precision, m, n, k; A, B random in [-1, 1), beta = 0) it times, in alternating
//! rounds on one stream: cuBLAS twice (`cublas`, `cublas2`: its run-to-run noise beside the
//! ratios), `HYBLAS_STRASSEN=auto` (the planner's pick, through `plan::gemm::device_gemm`, the
//! path of `?gemm_` on device memory) and levels 1 and 2 forced. Each side's output is then
//! checked at sampled entries against an exact oracle (128-bit integer sums of the exact
//! products: every input is a multiple of 2^-52, see [`FIX`]):
//! `err` is max |C - exact| / (||A||_M ||B||_M), beside cuBLAS's and the Winograd-variant bound
//! [(n0^2 + 6 n0) 18^l - 6 n] u (Higham, Accuracy and Stability, 2nd ed., ch. 23; n = max(m, n,
//! k), n0 = n / 2^l; l = 0 is the classical n^2 u).
//!
//! Writes `strassen.csv` and `strassen.svg` (effective TFLOP/s, 2mnk / time, against n) under
//! --out, and prints the table.

use hyblas::gpu::driver::{check, sys};
use hyblas::gpu::timing::Timer;
use hyblas::gpu::{DMat, DeviceBuffer, Exec, Runtime};
use hyblas::plan::gemm::{self as gp, Strassen};
use hyblas::types::{Real, Scalar, Trans};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

const HELP: &str = "\
usage: gpubench strassen [options]
  --n LIST        square sizes (default 2048..8192 step 1024, then ..32768 step 1024)
  --rect LIST     m:n:k rectangles besides (default 16384:16384:4096,8192:8192:32768; none: -)
  --prec LIST     s,d (default both)
  --reps N        timed rounds per point (default 3)
  --samples N     entries checked against the exact oracle per side (default 64)
  --out DIR       where strassen.csv and strassen.svg go (default bench/results)
  --quick         n = 4096,8192,16384, no rectangles, 2 rounds
  --explain LIST  instead of the sweep: where one level's time goes at these n (cuBLAS's product
                  of n; 7 half-size products contiguous and on the quadrants; the 11 addition
                  passes; two half-size products on two streams at once against one after the
                  other; the whole one-level call)
";

struct Opts {
    explain: Vec<usize>,
    shapes: Vec<(usize, usize, usize)>,
    precs: Vec<char>,
    reps: usize,
    samples: usize,
    out: PathBuf,
}

fn list(v: &str) -> Result<Vec<usize>, String> {
    v.split(',').filter(|x| !x.is_empty()).map(|x| x.trim().parse().map_err(|_| format!("bad number {x}"))).collect()
}

fn parse(args: &[String]) -> Result<Opts, String> {
    let mut n: Vec<usize> = (2048..=8192).step_by(1024).chain((9216..=32768).step_by(1024)).collect();
    let mut rect = vec![(16384, 16384, 4096), (8192, 8192, 32768)];
    let mut o = Opts {
        explain: vec![],
        shapes: vec![],
        precs: vec!['s', 'd'],
        reps: 3,
        samples: 64,
        out: "bench/results".into(),
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut val = || it.next().cloned().ok_or_else(|| format!("{a} needs a value"));
        match a.as_str() {
            "--n" => n = list(&val()?)?,
            "--rect" => {
                let v = val()?;
                rect = if v == "-" {
                    vec![]
                } else {
                    v.split(',')
                        .map(|r| match list(&r.replace(':', ","))?[..] {
                            [m, n, k] => Ok((m, n, k)),
                            _ => Err(format!("bad rectangle {r}")),
                        })
                        .collect::<Result<_, String>>()?
                };
            }
            "--prec" => o.precs = val()?.split(',').filter_map(|p| p.chars().next()).collect(),
            "--reps" => o.reps = val()?.parse().map_err(|_| "bad --reps")?,
            "--samples" => o.samples = val()?.parse().map_err(|_| "bad --samples")?,
            "--out" => o.out = val()?.into(),
            "--explain" => o.explain = list(&val()?)?,
            "--quick" => {
                n = vec![4096, 8192, 16384];
                rect.clear();
                o.reps = 2;
            }
            "-h" | "--help" => return Err(HELP.into()),
            x => return Err(format!("unknown option {x}\n{HELP}")),
        }
    }
    if o.precs.iter().any(|p| !"sd".contains(*p)) {
        return Err("--prec takes s and d".into());
    }
    o.shapes = n.into_iter().map(|n| (n, n, n)).chain(rect).collect();
    Ok(o)
}

/// The values a matrix repeats (column-major, ld = rows: element e is `chunk[e % len]`): a
/// fixed pseudo-random chunk of odd length, so no row or column lines up with its period.
struct Filled {
    buf: DeviceBuffer,
    /// The chunk's values times 2^FIX (integers: see [`FIX`]).
    fixed: Vec<i64>,
    max_abs: f64,
}

/// `len` pseudo-random values in [-1, 1), fixed by the seed, representable in T (also
/// `gpubench batch`'s data).
pub(super) fn chunk<T: Scalar>(len: usize, seed: u64) -> Vec<f64> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let v = (x >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0;
            // Representable in T, so the device holds exactly these values.
            if std::mem::size_of::<T>() == 4 {
                v as f32 as f64
            } else {
                v
            }
        })
        .collect()
}

fn fill<T: Scalar>(ex: &Exec, elems: usize, len: usize, seed: u64) -> Result<Filled, String> {
    let es = std::mem::size_of::<T>();
    let chunk = chunk::<T>(len, seed);
    let max_abs = chunk.iter().fold(0f64, |m, v| m.max(v.abs()));
    let host: Vec<T> = chunk.iter().map(|&v| T::from_f64(v)).collect();
    let buf = DeviceBuffer::new(elems * es).map_err(|e| e.to_string())?;
    let src = DeviceBuffer::from_slice(&host).map_err(|e| e.to_string())?;
    hyblas::gpu::strassen::fill_repeat(ex, buf.ptr, elems, es, &src).map_err(|e| e.to_string())?;
    ex.rt.sync(ex.stream).map_err(|e| e.to_string())?;
    assert!(chunk.iter().all(|&v| (v * 2f64.powi(FIX)).fract() == 0.0), "chunk values are multiples of 2^-52");
    let fixed = chunk.iter().map(|&v| fixed(v)).collect();
    Ok(Filled { buf, fixed, max_abs })
}

/// The oracle's fixed point: every value [`chunk`] makes is a multiple of 2^-52 in [-1, 1)
/// (checked there), so `a * 2^52` is an integer below 2^52 in magnitude, a product of two is
/// below 2^104 at scale 2^104, and a sum of k <= 2^22 of them fits an i128 exactly.
const FIX: i32 = 52;

/// x * 2^FIX as an integer (x a multiple of 2^-FIX).
fn fixed(x: f64) -> i64 {
    let v = x * 2f64.powi(FIX);
    debug_assert!(v.fract() == 0.0 && v.abs() <= 2f64.powi(FIX));
    v as i64
}

/// max |C - exact| at the sampled entries, for C as `got` (device, ld = m): the exact sum in
/// i128 at scale 2^104, the computed entry brought to the same scale exactly where it can be
/// (|c| in [2^-52, 2^22): an integer there), so the difference is exact before its one rounding.
fn max_err<T: Scalar>(a: &Filled, b: &Filled, m: usize, k: usize, got: u64, samples: &[(usize, usize)]) -> f64 {
    assert!(k <= 1 << 22, "the i128 oracle holds k <= 2^22");
    let es = std::mem::size_of::<T>();
    let scale = 2f64.powi(2 * FIX);
    let mut worst = 0f64;
    for &(i, j) in samples {
        let mut exact: i128 = 0;
        for l in 0..k {
            let x = a.fixed[(i + l * m) % a.fixed.len()];
            let y = b.fixed[(l + j * k) % b.fixed.len()];
            exact += x as i128 * y as i128;
        }
        let mut c = T::zero();
        let at = got + ((i + j * m) * es) as u64;
        unsafe { sys::cuMemcpyDtoH_v2(&mut c as *mut T as *mut std::ffi::c_void, at, es) };
        let c = c.re().to_f64();
        let cs = c * scale;
        let err = if c.is_finite() && cs.fract() == 0.0 && cs.abs() < 2f64.powi(126) {
            (cs as i128 - exact) as f64 / scale
        } else {
            // NaN, or outside the exact range: a plain difference (NaN stays NaN).
            c - exact as f64 / scale
        };
        // A NaN anywhere (a skipped or poisoned entry) stays in the result.
        worst = if worst.is_nan() || err.is_nan() { f64::NAN } else { worst.max(err.abs()) };
    }
    worst
}

/// The Winograd-variant bound's factor at `levels` (times u ||A||_M ||B||_M).
fn bound(n: usize, levels: u32) -> f64 {
    let n = n as f64;
    let n0 = n / 2f64.powi(levels as i32);
    (n0 * n0 + 6.0 * n0) * 18f64.powi(levels as i32) - 6.0 * n * (levels > 0) as u8 as f64
}

#[derive(Default, Clone)]
struct Row {
    prec: char,
    m: usize,
    n: usize,
    k: usize,
    levels: u32,
    us: [f64; 5],
    err: [f64; 5],
    bound: [f64; 3],
}

const SIDES: [&str; 5] = ["cublas", "cublas2", "auto", "level1", "level2"];

fn point<T: Scalar>(ex: &Exec, t: &Timer, o: &Opts, (m, n, k): (usize, usize, usize)) -> Result<Row, String> {
    let a = fill::<T>(ex, m * k, (1 << 20) + 7, 11 + m as u64)?;
    let b = fill::<T>(ex, k * n, (1 << 20) + 13, 23 + n as u64)?;
    let c = DeviceBuffer::new(m * n * std::mem::size_of::<T>()).map_err(|e| e.to_string())?;
    let (am, bm, cm) = (
        DMat { ptr: a.buf.ptr, ld: m as i64 },
        DMat { ptr: b.buf.ptr, ld: k as i64 },
        DMat { ptr: c.ptr, ld: m as i64 },
    );
    let modes = [Strassen::Off, Strassen::Off, Strassen::Auto, Strassen::Levels(1), Strassen::Levels(2)];
    let mut levels = 0;
    let call = |side: usize, levels: &mut u32| -> hyblas::gpu::Result<()> {
        gp::with_strassen(modes[side], || {
            let (one, zero) = (T::one(), T::zero());
            let r =
                gp::device_gemm::<T>(ex, Trans::No, Trans::No, m as i64, n as i64, k as i64, one, am, bm, zero, cm)?;
            if side == 2 {
                *levels = match r.decision.route {
                    hyblas::plan::gpu::Route::Strassen(l) => l,
                    _ => 0,
                };
            }
            if let Some(e) = r.declined {
                eprintln!("gpubench strassen: {} declined: {e}", SIDES[side]);
            }
            Ok(())
        })
    };
    let mut times: Vec<Vec<f64>> = vec![vec![]; SIDES.len()];
    for side in 0..SIDES.len() {
        call(side, &mut levels).map_err(|e| e.to_string())?;
    }
    ex.rt.sync(ex.stream).map_err(|e| e.to_string())?;
    for _ in 0..o.reps {
        for (side, ts) in times.iter_mut().enumerate() {
            ts.push(t.time(&mut || call(side, &mut levels)).map_err(|e| e.to_string())? * 1e6);
        }
    }
    let mut row = Row { prec: T::PREFIX, m, n, k, levels, ..Default::default() };
    for (side, ts) in times.iter_mut().enumerate() {
        ts.sort_by(f64::total_cmp);
        row.us[side] = ts[ts.len() / 2];
    }
    // Errors: each side once more, poisoned C first (NaN bytes: a side that skipped an entry
    // shows as NaN), then its sampled entries against the oracle.
    let mut rng = 0x1234_5678_9abc_def1u64 ^ (m * 31 + n * 17 + k) as u64;
    let samples: Vec<(usize, usize)> = (0..o.samples)
        .map(|_| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            ((rng % m as u64) as usize, ((rng >> 32) % n as u64) as usize)
        })
        .collect();
    let scale = a.max_abs * b.max_abs;
    for side in 0..SIDES.len() {
        check(unsafe { sys::cuMemsetD8Async(c.ptr, 0xff, c.bytes, ex.stream) }, "cuMemsetD8Async")
            .map_err(|e| e.to_string())?;
        call(side, &mut levels).map_err(|e| e.to_string())?;
        ex.rt.sync(ex.stream).map_err(|e| e.to_string())?;
        row.err[side] = max_err::<T>(&a, &b, m, k, c.ptr, &samples) / scale;
    }
    let u = if T::PREFIX == 's' { f32::EPSILON as f64 / 2.0 } else { f64::EPSILON / 2.0 };
    let big = m.max(n).max(k);
    row.bound = [0, 1, 2].map(|l| bound(big, l) * u);
    Ok(row)
}

fn tflops(r: &Row, us: f64) -> f64 {
    2.0 * (r.m * r.n * r.k) as f64 / (us * 1e-6) / 1e12
}

fn csv(rows: &[Row]) -> String {
    let mut s = String::from(
        "precision,m,n,k,levels,hyblas_us,cublas_us,cublas2_us,ratio,level1_us,level2_us,err,cublas_err,level1_err,level2_err,bound_levels,bound_l1,bound_l2\n",
    );
    for r in rows {
        let _ = writeln!(
            s,
            "{},{},{},{},{},{:.1},{:.1},{:.1},{:.4},{:.1},{:.1},{:.3e},{:.3e},{:.3e},{:.3e},{:.3e},{:.3e},{:.3e}",
            r.prec,
            r.m,
            r.n,
            r.k,
            r.levels,
            r.us[2],
            r.us[0],
            r.us[1],
            r.us[0] / r.us[2],
            r.us[3],
            r.us[4],
            r.err[2],
            r.err[0],
            r.err[3],
            r.err[4],
            r.bound[r.levels as usize],
            r.bound[1],
            r.bound[2]
        );
    }
    s
}

/// Effective TFLOP/s against n of the square points: cuBLAS and auto, per precision.
fn svg(rows: &[Row]) -> String {
    let (w, h, x0, x1, y0, y1) = (720.0, 420.0, 60.0, 700.0, 370.0, 20.0);
    let sq: Vec<&Row> = rows.iter().filter(|r| r.m == r.n && r.n == r.k).collect();
    let nmax = sq.iter().map(|r| r.n).max().unwrap_or(1) as f64;
    let nmin = sq.iter().map(|r| r.n).min().unwrap_or(0) as f64;
    let ymax = sq.iter().map(|r| tflops(r, r.us[2]).max(tflops(r, r.us[0]))).fold(1.0, f64::max) * 1.1;
    let px = |n: f64| x0 + (n - nmin) / (nmax - nmin).max(1.0) * (x1 - x0);
    let py = |v: f64| y0 - v / ymax * (y0 - y1);
    let mut s = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(
        s,
        r##"<rect width="{w}" height="{h}" fill="white"/><line x1="{x0}" y1="{y0}" x2="{x1}" y2="{y0}" stroke="#888"/><line x1="{x0}" y1="{y0}" x2="{x0}" y2="{y1}" stroke="#888"/>"##
    );
    for t in 0..=5 {
        let v = ymax / 5.0 * t as f64;
        let _ = writeln!(s, r##"<text x="{}" y="{:.1}" text-anchor="end">{v:.0}</text>"##, x0 - 4.0, py(v) + 4.0);
    }
    for n in [nmin, (nmin + nmax) / 2.0, nmax] {
        super::svg_axes::x_tick(&mut s, px(n), y0, &format!("{}", n as usize));
    }
    super::svg_axes::axis_titles(
        &mut s,
        ((x0 + x1) / 2.0, y0 + 29.0),
        (15.0, (y0 + y1) / 2.0),
        "n (m = n = k)",
        "TFLOP/s (2n^3 / time)",
    );
    let lines = [
        ('d', 0, "#1f77b4", "cuBLAS DGEMM", ""),
        ('d', 2, "#d62728", "hyblas DGEMM (Strassen auto)", ""),
        ('s', 0, "#1f77b4", "cuBLAS SGEMM", " stroke-dasharray=\"5,3\""),
        ('s', 2, "#d62728", "hyblas SGEMM (Strassen auto)", " stroke-dasharray=\"5,3\""),
    ];
    for (i, (p, side, color, label, dash)) in lines.iter().enumerate() {
        let pts: Vec<String> = sq
            .iter()
            .filter(|r| r.prec == *p)
            .map(|r| format!("{:.1},{:.1}", px(r.n as f64), py(tflops(r, r.us[*side]))))
            .collect();
        if pts.is_empty() {
            continue;
        }
        let _ = writeln!(
            s,
            r#"<polyline points="{}" fill="none" stroke="{color}" stroke-width="1.5"{dash}/>"#,
            pts.join(" ")
        );
        let ly = y1 + 14.0 * i as f64 + 10.0;
        let _ = writeln!(
            s,
            r#"<line x1="{}" y1="{ly}" x2="{}" y2="{ly}" stroke="{color}"{dash}/><text x="{}" y="{}">{label}</text>"#,
            x0 + 20.0,
            x0 + 45.0,
            x0 + 50.0,
            ly + 4.0
        );
    }
    s.push_str("</svg>\n");
    s
}

pub fn main(args: &[String]) -> ExitCode {
    let o = match parse(args) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let rt = match Runtime::get(0).and_then(|rt| rt.bind().map(|_| rt)) {
        Ok(rt) => rt,
        Err(e) => {
            println!("no GPU ({e}): nothing to measure");
            return ExitCode::SUCCESS;
        }
    };
    let ex = Exec::own(rt);
    let t = match Timer::new(ex.stream) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("gpubench strassen: {e}");
            return ExitCode::from(1);
        }
    };
    if !o.explain.is_empty() {
        for &p in &o.precs {
            for &n in &o.explain {
                let r = if p == 's' { explain::<f32>(&ex, &t, n) } else { explain::<f64>(&ex, &t, n) };
                if let Err(e) = r {
                    eprintln!("gpubench strassen --explain {p} {n}: {e}");
                    return ExitCode::from(1);
                }
            }
        }
        return ExitCode::SUCCESS;
    }
    let model = hyblas::gpu::strassen::model(rt);
    println!("gpubench strassen on {}: Strassen model from {}", rt.props.name, model.source);
    println!(
        "{:<4} {:>6} {:>6} {:>6} {:>3} {:>10} {:>10} {:>7} {:>6} {:>10} {:>10} {:>9} {:>9} {:>9}",
        "prec",
        "m",
        "n",
        "k",
        "lvl",
        "auto us",
        "cuBLAS us",
        "ratio",
        "noise",
        "1 lvl us",
        "2 lvl us",
        "err",
        "cuBLAS",
        "bound"
    );
    let mut rows = vec![];
    let total = o.precs.len() * o.shapes.len();
    for (i, (&p, &shape)) in o.precs.iter().flat_map(|p| o.shapes.iter().map(move |s| (p, s))).enumerate() {
        let r = match p {
            's' => point::<f32>(&ex, &t, &o, shape),
            _ => point::<f64>(&ex, &t, &o, shape),
        };
        match r {
            Ok(r) => {
                println!(
                    "{:<4} {:>6} {:>6} {:>6} {:>3} {:>10.1} {:>10.1} {:>6.3}x {:>5.1}% {:>10.1} {:>10.1} {:>9.2e} {:>9.2e} {:>9.2e}   [{}/{}]",
                    r.prec,
                    r.m,
                    r.n,
                    r.k,
                    r.levels,
                    r.us[2],
                    r.us[0],
                    r.us[0] / r.us[2],
                    100.0 * (r.us[1] / r.us[0] - 1.0).abs(),
                    r.us[3],
                    r.us[4],
                    r.err[2],
                    r.err[0],
                    r.bound[r.levels as usize],
                    i + 1,
                    total
                );
                rows.push(r);
            }
            Err(e) => eprintln!("gpubench strassen: {p} {shape:?}: {e}"),
        }
    }
    let stem = format!("{}-strassen", rt.props.slug());
    if let Err(e) = super::svg_axes::write_results(&o.out, &stem, &csv(&rows), &svg(&rows)) {
        eprintln!("gpubench strassen: {e}");
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}

/// `--explain`: one level's parts at n x n x n, each timed alone (median of 3 after one warm-up).
fn explain<T: Scalar>(ex: &Exec, t: &Timer, n: usize) -> Result<(), String> {
    use hyblas::gpu::strassen::{self as st, Blk, Ops};
    let err = |e: hyblas::gpu::GpuError| e.to_string();
    let es = std::mem::size_of::<T>();
    let h = n / 2;
    let a = fill::<T>(ex, n * n, (1 << 20) + 7, 1)?;
    let b = fill::<T>(ex, n * n, (1 << 20) + 13, 2)?;
    let c = DeviceBuffer::new(n * n * es).map_err(|e| e.to_string())?;
    // Contiguous half-size operands and outputs (two of each, for the two-stream pair).
    let bufs: Vec<DeviceBuffer> =
        (0..6).map(|_| DeviceBuffer::new(h * h * es)).collect::<Result<_, _>>().map_err(err)?;
    let mut dev = st::Device::new::<T>(ex).map_err(err)?;
    let mut side_stream: sys::CUstream = std::ptr::null_mut();
    check(unsafe { sys::cuStreamCreate(&mut side_stream, 0) }, "cuStreamCreate").map_err(err)?;
    let side = Exec { rt: ex.rt, stream: side_stream };
    let mut dev2 = st::Device::new::<T>(&side).map_err(err)?;
    let (one, zero) = (T::one(), T::zero());
    let q = |buf: &DeviceBuffer| Blk { ptr: buf.ptr, ld: h };
    let quad = |buf: &DeviceBuffer, i: usize, j: usize| Blk { ptr: buf.ptr, ld: n }.at::<T>(i * h, j * h);
    let med = |f: &mut dyn FnMut() -> hyblas::gpu::Result<()>| t.median(1, 3, f).map(|s| s * 1e6).map_err(err);
    let full = med(&mut || {
        Ops::<T>::gemm(
            &mut dev,
            false,
            false,
            n,
            n,
            n,
            one,
            Blk { ptr: a.buf.ptr, ld: n },
            Blk { ptr: b.buf.ptr, ld: n },
            zero,
            Blk { ptr: c.ptr, ld: n },
        )
    })?;
    let half =
        med(&mut || Ops::<T>::gemm(&mut dev, false, false, h, h, h, one, q(&bufs[0]), q(&bufs[1]), zero, q(&bufs[2])))?;
    let seven = med(&mut || {
        (0..7).try_for_each(|_| {
            Ops::<T>::gemm(&mut dev, false, false, h, h, h, one, q(&bufs[0]), q(&bufs[1]), zero, q(&bufs[2]))
        })
    })?;
    let seven_quad = med(&mut || {
        (0..7).try_for_each(|i| {
            Ops::<T>::gemm(
                &mut dev,
                false,
                false,
                h,
                h,
                h,
                one,
                quad(&a.buf, i % 2, 0),
                quad(&b.buf, 0, i / 4),
                zero,
                quad(&c, i % 2, (i / 2) % 2),
            )
        })
    })?;
    // The 11 passes of one level (square: every block h x h), as the schedule issues them.
    let adds = med(&mut || {
        for i in 0..8 {
            let (x, y) =
                if i < 4 { (quad(&a.buf, 0, 0), quad(&a.buf, 1, 0)) } else { (quad(&b.buf, 1, 1), quad(&b.buf, 0, 1)) };
            Ops::<T>::add(&mut dev, h, h, x, -one, y, q(&bufs[3 + i % 2]))?;
        }
        Ops::<T>::combine(&mut dev, h, h, q(&bufs[5]), Blk { ptr: c.ptr, ld: n })?;
        Ops::<T>::add(&mut dev, h, h, quad(&c, 1, 0), -one, quad(&c, 0, 0), quad(&c, 1, 0))?;
        Ops::<T>::add(&mut dev, h, h, quad(&c, 0, 0), one, q(&bufs[5]), quad(&c, 0, 0))
    })?;
    // Two half-size products: one after the other, then on two streams at once.
    let seq2 = med(&mut || {
        Ops::<T>::gemm(&mut dev, false, false, h, h, h, one, q(&bufs[0]), q(&bufs[1]), zero, q(&bufs[2]))?;
        Ops::<T>::gemm(&mut dev, false, false, h, h, h, one, q(&bufs[3]), q(&bufs[4]), zero, q(&bufs[5]))
    })?;
    let mut evs = [std::ptr::null_mut(); 2];
    for e in evs.iter_mut() {
        check(unsafe { sys::cuEventCreate(e, 2) }, "cuEventCreate").map_err(err)?;
        // CU_EVENT_DISABLE_TIMING
    }
    let par2 = med(&mut || {
        check(unsafe { sys::cuEventRecord(evs[0], ex.stream) }, "cuEventRecord")?;
        check(unsafe { sys::cuStreamWaitEvent(side_stream, evs[0], 0) }, "cuStreamWaitEvent")?;
        Ops::<T>::gemm(&mut dev, false, false, h, h, h, one, q(&bufs[0]), q(&bufs[1]), zero, q(&bufs[2]))?;
        Ops::<T>::gemm(&mut dev2, false, false, h, h, h, one, q(&bufs[3]), q(&bufs[4]), zero, q(&bufs[5]))?;
        check(unsafe { sys::cuEventRecord(evs[1], side_stream) }, "cuEventRecord")?;
        check(unsafe { sys::cuStreamWaitEvent(ex.stream, evs[1], 0) }, "cuStreamWaitEvent")
    })?;
    let whole = med(&mut || {
        st::run::<T>(
            ex,
            Trans::No,
            Trans::No,
            n as i64,
            n as i64,
            n as i64,
            one,
            DMat { ptr: a.buf.ptr, ld: n as i64 },
            DMat { ptr: b.buf.ptr, ld: n as i64 },
            zero,
            DMat { ptr: c.ptr, ld: n as i64 },
            1,
        )
    })?;
    let gbs = |us: f64, units: f64| units * (h * h * es) as f64 / (us * 1e-6) / 1e9;
    println!(
        "{} n={n}: cuBLAS {full:.0} us; one level {whole:.0} us ({:.3}x); 7 x cuBLAS(n/2) contiguous {seven:.0} us (1 x {half:.0}), on the quadrants {seven_quad:.0} us; 11 passes {adds:.0} us ({:.0} GB/s); 2 products one after the other {seq2:.0} us, on two streams {par2:.0} us ({:.3}x)",
        T::PREFIX,
        full / whole,
        gbs(adds, 38.0),
        seq2 / par2
    );
    for e in evs {
        unsafe { sys::cuEventDestroy_v2(e) };
    }
    ex.rt.sync(side_stream).map_err(err)?;
    unsafe { sys::cuStreamDestroy_v2(side_stream) };
    Ok(())
}
