//! `ozakibench`: the accurate DGEMM (issue 49, `plan::accurate`, the Ozaki scheme) against native
//! DGEMM on this machine's CPU, time and error, in one process.
//!
//! Per input kind and n (m = n = k), in rounds: native DGEMM (hyblas's `cblas_dgemm`), then the
//! accurate call in each rounding asked, back to back; the ratio is the median over rounds of
//! accurate time over the same round's native time, beside native's slowest/fastest round (the
//! noise). The
//! error of each is measured against the correctly rounded product, which the `nearest` call
//! returns (proven element by element against a big-integer oracle in `tests/ozaki.rs`): the
//! largest relative error of an element (|c - exact| / |exact|) and the normwise one
//! (||C - exact||_F / ||exact||_F); for `faithful`, the largest distance in ulps.
//!
//! Inputs: `phiX`, entries (U - 0.5) exp(X N(0, 1)) (the issue's, X = 0.5, 2, 8); `zphiX`, ZGEMM
//! (`cblas_zgemm`) with both parts of each entry drawn so (errors over both parts); and `seed`,
//! the seed paper's A = identity with 10% of its entries replaced by U(0, 1) and B = inv(A)
//! (Gauss-Jordan here, O(n^3): `--seed-max` caps its n; the generators are in bench/ozaki_inputs.rs).
//!
//! Writes `<machine>-ozaki.csv`, `.md` and `.svg` (time over native, and native's error, against
//! n) under --out, and prints the table.

use hyblas::plan::accurate::{self, Report, Rounding};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Instant;

#[path = "svg_axes.rs"]
mod svg_axes;

// `--forms`: the CPU path's forms of the slice products.
#[path = "ozaki_forms.rs"]
mod ozaki_forms;

// The inputs, shared with ozakigpubench (bench/ozaki_gpu.rs).
#[path = "ozaki_inputs.rs"]
mod ozaki_inputs;
use ozaki_inputs::{lognormal, seed_pair, Rng};

extern "C" {
    fn cblas_dgemm(
        l: i32,
        ta: i32,
        tb: i32,
        m: i32,
        n: i32,
        k: i32,
        al: f64,
        a: *const f64,
        lda: i32,
        b: *const f64,
        ldb: i32,
        be: f64,
        c: *mut f64,
        ldc: i32,
    );
    fn cblas_zgemm(
        l: i32,
        ta: i32,
        tb: i32,
        m: i32,
        n: i32,
        k: i32,
        al: *const f64,
        a: *const f64,
        lda: i32,
        b: *const f64,
        ldb: i32,
        be: *const f64,
        c: *mut f64,
        ldc: i32,
    );
}

const HELP: &str = "\
usage: ozakibench [options]
  --sizes LIST     n (m = n = k; default 256,512,1024,2048,4096)
  --inputs LIST    phi0.5, phi2, phi8, seed (default all four); zphiX: ZGEMM, both parts as phiX
  --rounding LIST  nearest, faithful (default both)
  --seed-max N     largest n of the seed's matrices (inv(A) costs O(n^3); default 2048)
  --reps N         rounds (native, then each rounding, back to back; default 5, 3 from n = 2048)
  --machine NAME   the results' name (default from /proc/cpuinfo, e.g. cpu-amd-epyc)
  --out DIR        where the files go (default bench/results)
  --forms          time the CPU path's forms of the slice products (joined, batched, looped,
                   the planner's, without sparse slices) instead: sizes 32..1024,
                   inputs phi0.5 and seed unless given
  --quick          sizes 128,256, inputs phi0.5,seed, one rep (a smoke run)
";

struct Opts {
    sizes: Vec<usize>,
    inputs: Vec<String>,
    roundings: Vec<Rounding>,
    seed_max: usize,
    reps: Option<usize>,
    machine: String,
    out: PathBuf,
    /// `--forms`: time the forms of the slice products instead (bench/ozaki_forms.rs).
    forms: bool,
}

fn machine() -> String {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = info.lines().find(|l| l.starts_with("model name")).unwrap_or("").to_ascii_lowercase();
    if model.contains("epyc") {
        "cpu-amd-epyc".into()
    } else if model.contains("xeon") {
        "cpu-intel-xeon".into()
    } else if model.contains("amd") {
        "cpu-amd".into()
    } else {
        "cpu".into()
    }
}

fn parse() -> Result<Opts, String> {
    let mut o = Opts {
        sizes: vec![256, 512, 1024, 2048, 4096],
        inputs: ["phi0.5", "phi2", "phi8", "seed"].map(String::from).to_vec(),
        roundings: vec![Rounding::Nearest, Rounding::Faithful],
        seed_max: 2048,
        reps: None,
        machine: machine(),
        out: PathBuf::from("bench/results"),
        forms: false,
    };
    let (mut sizes_given, mut inputs_given) = (false, false);
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = || it.next().cloned().ok_or(format!("{a} needs a value"));
        match a.as_str() {
            "--sizes" => {
                sizes_given = true;
                o.sizes = value()?
                    .split(',')
                    .map(|s| s.trim().parse().map_err(|_| format!("bad size {s}")))
                    .collect::<Result<_, _>>()?
            }
            "--inputs" => {
                inputs_given = true;
                o.inputs = value()?.split(',').map(|s| s.trim().to_string()).collect();
            }
            "--rounding" => {
                o.roundings = value()?
                    .split(',')
                    .map(|s| match s.trim() {
                        "nearest" => Ok(Rounding::Nearest),
                        "faithful" => Ok(Rounding::Faithful),
                        x => Err(format!("rounding {x} is not nearest or faithful")),
                    })
                    .collect::<Result<_, _>>()?
            }
            "--seed-max" => o.seed_max = value()?.parse().map_err(|_| "bad --seed-max")?,
            "--reps" => o.reps = Some(value()?.parse().map_err(|_| "bad --reps")?),
            "--machine" => o.machine = value()?,
            "--out" => o.out = PathBuf::from(value()?),
            "--forms" => o.forms = true,
            "--quick" => {
                o.sizes = vec![128, 256];
                o.inputs = vec!["phi0.5".into(), "seed".into()];
                o.reps = Some(1);
            }
            "-h" | "--help" => {
                print!("{HELP}");
                std::process::exit(0);
            }
            x => return Err(format!("unknown option {x}\n{HELP}")),
        }
    }
    for i in &o.inputs {
        if i != "seed" && phi_of(i).is_none() {
            return Err(format!("input {i} is not phiX, zphiX or seed"));
        }
    }
    if o.forms {
        if !sizes_given {
            o.sizes = vec![32, 64, 96, 128, 192, 256, 384, 512, 1024];
        }
        if !inputs_given {
            o.inputs = vec!["phi0.5".into(), "seed".into()];
        }
    }
    Ok(o)
}

struct Row {
    input: String,
    n: usize,
    native_ms: f64,
    /// Slowest native round over the fastest: the noise beside the ratio.
    native_spread: f64,
    rounding: Rounding,
    accurate_ms: f64,
    /// Median over rounds of accurate time / native time of the same round.
    ratio: f64,
    rep: Report,
    native_max_rel: f64,
    native_norm_rel: f64,
    accurate_max_ulps: f64,
}

/// X of an input `phiX` or `zphiX`.
fn phi_of(input: &str) -> Option<f64> {
    input.strip_prefix('z').unwrap_or(input).strip_prefix("phi")?.parse().ok()
}

fn time(f: impl FnOnce()) -> f64 {
    let t = Instant::now();
    f();
    t.elapsed().as_secs_f64()
}

fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let h = s.len() / 2;
    if s.len() % 2 == 1 {
        s[h]
    } else {
        (s[h - 1] + s[h]) / 2.0
    }
}

fn ulps(x: f64, exact: f64) -> f64 {
    if x == exact {
        return 0.0;
    }
    let step = hyblas::cpu::ozaki::ulp_min(exact);
    (x - exact).abs() / step
}

fn main() {
    let o = match parse() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("ozakibench: {e}");
            std::process::exit(2);
        }
    };
    if o.forms {
        if let Err(e) = ozaki_forms::run(&o.sizes, &o.inputs, o.reps.unwrap_or(5), &o.machine, &o.out) {
            eprintln!("ozakibench: {e}");
            std::process::exit(1);
        }
        return;
    }
    let threads = hyblas::cpu::threads::nthreads();
    println!(
        "ozakibench: {} threads, machine {}; accurate = cblas_dgemm in accurate mode (the GPU where one is usable: HYBLAS_DEVICE=cpu for the CPU), native = cblas_dgemm",
        threads, o.machine
    );
    let mut rows: Vec<Row> = Vec::new();
    let mut rng = Rng(0x2545f4914f6cdd1d);
    for input in &o.inputs {
        for &n in &o.sizes {
            if input == "seed" && n > o.seed_max {
                continue;
            }
            let reps = o.reps.unwrap_or(if n >= 2048 { 3 } else { 5 });
            eprint!("{input} n={n}: inputs...");
            // ZGEMM (zphiX): complex entries as [re, im] pairs, both parts drawn as phiX.
            let parts = if input.starts_with('z') { 2 } else { 1 };
            let (a, b) = match phi_of(input) {
                Some(phi) => (lognormal(&mut rng, parts * n * n, phi), lognormal(&mut rng, parts * n * n, phi)),
                None => seed_pair(&mut rng, n),
            };
            let ni = n as i32;
            let mut native = vec![0.0f64; parts * n * n];
            // Nearest first: its result is the reference.
            let mut order = o.roundings.clone();
            order.sort_by_key(|r| *r != Rounding::Nearest);
            if !order.contains(&Rounding::Nearest) {
                order.insert(0, Rounding::Nearest);
            }
            // Rounds of native then each rounding, back to back, so that each ratio compares
            // calls made moments apart (this VM's speed drifts by tens of percent).
            let mut native_s = Vec::new();
            let mut outs: Vec<(Rounding, Vec<f64>, Report, Vec<f64>)> =
                order.iter().map(|&r| (r, Vec::new(), Report::default(), vec![f64::NAN; parts * n * n])).collect();
            // C := A B through hyblas's cblas_dgemm or cblas_zgemm (the mode in force decides
            // native or accurate).
            let (one, zero) = ([1.0f64, 0.0], [0.0f64, 0.0]);
            let gemm = |c: &mut [f64]| unsafe {
                if parts == 2 {
                    let (al, be) = (one.as_ptr(), zero.as_ptr());
                    cblas_zgemm(102, 111, 111, ni, ni, ni, al, a.as_ptr(), ni, b.as_ptr(), ni, be, c.as_mut_ptr(), ni)
                } else {
                    cblas_dgemm(102, 111, 111, ni, ni, ni, 1.0, a.as_ptr(), ni, b.as_ptr(), ni, 0.0, c.as_mut_ptr(), ni)
                }
            };
            for round in 0..reps {
                eprint!(" round {}...", round + 1);
                native_s.push(time(|| gemm(&mut native)));
                for (r, secs, rep, c) in outs.iter_mut() {
                    // Through the ABI, as users reach it (on a GPU host the GPU's scheme runs
                    // unless HYBLAS_DEVICE=cpu); the report says which engine ran.
                    secs.push(time(|| accurate::with_mode(accurate::Mode::Accurate(*r), || gemm(c))));
                    *rep = accurate::last_report();
                }
            }
            let exact = outs[0].3.clone();
            let results: Vec<(Rounding, Vec<f64>, Report, Vec<f64>)> = outs;
            eprintln!();
            let (mut max_rel, mut num, mut den) = (0.0f64, 0.0f64, 0.0f64);
            for (x, e) in native.iter().zip(&exact) {
                let d = (x - e).abs();
                max_rel = max_rel.max(if *e == 0.0 { d } else { d / e.abs() });
                num += d * d;
                den += e * e;
            }
            for (r, secs, rep, c) in results {
                if !o.roundings.contains(&r) {
                    continue;
                }
                let ratios: Vec<f64> = secs.iter().zip(&native_s).map(|(a, n)| a / n).collect();
                let max_ulps = c.iter().zip(&exact).map(|(x, e)| ulps(*x, *e)).fold(0.0, f64::max);
                rows.push(Row {
                    input: input.clone(),
                    n,
                    native_ms: median(&native_s) * 1e3,
                    native_spread: native_s.iter().cloned().fold(0.0, f64::max)
                        / native_s.iter().cloned().fold(f64::MAX, f64::min),
                    rounding: r,
                    accurate_ms: median(&secs) * 1e3,
                    ratio: median(&ratios),
                    rep,
                    native_max_rel: max_rel,
                    native_norm_rel: (num / den).sqrt(),
                    accurate_max_ulps: max_ulps,
                });
                let row = rows.last().unwrap();
                println!("{}", line(row));
            }
        }
    }
    let mut csv = String::from("machine,threads,input,n,rounding,native_ms,native_spread,accurate_ms,ratio,levels,products,form,exact_elements,native_max_rel_err,native_norm_rel_err,accurate_max_ulps_from_nearest,engine\n");
    let mut md = format!(
        "# Accurate DGEMM (Ozaki scheme) against native DGEMM, {} ({threads} threads)\n\nCommand: `./target/release/ozakibench {}`\n\n| input | n | rounding | native ms (median) | native slowest / fastest | accurate ms (median) | accurate / native (median of rounds) | levels | GEMMs | elements computed exactly | native max rel. error | native normwise error | accurate: ulps from nearest | engine |\n|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n",
        o.machine,
        std::env::args().skip(1).collect::<Vec<_>>().join(" ")
    );
    for r in &rows {
        let _ = writeln!(
            csv,
            "{},{threads},{},{},{:?},{:.3},{:.3},{:.3},{:.3},{},{},{},{},{:.3e},{:.3e},{},{}",
            o.machine,
            r.input,
            r.n,
            r.rounding,
            r.native_ms,
            r.native_spread,
            r.accurate_ms,
            r.ratio,
            r.rep.levels,
            r.rep.products,
            format!("{:?}", r.rep.form).to_lowercase(),
            r.rep.exact,
            r.native_max_rel,
            r.native_norm_rel,
            r.accurate_max_ulps,
            engine(r)
        );
        let _ = writeln!(md, "{}", line(r));
    }
    let stem = format!("{}-ozaki", o.machine);
    let _ = std::fs::create_dir_all(&o.out);
    if let Err(e) = std::fs::write(o.out.join(format!("{stem}.md")), md) {
        eprintln!("ozakibench: {e}");
    }
    if let Err(e) = svg_axes::write_results(&o.out, &stem, &csv, &svg(&rows)) {
        eprintln!("ozakibench: {e}");
        std::process::exit(1);
    }
}

/// Which engine ran the accurate calls (the report's).
fn engine(r: &Row) -> &'static str {
    if r.rep.gpu {
        "gpu"
    } else {
        "cpu"
    }
}

fn line(r: &Row) -> String {
    format!(
        "| {} | {} | {:?} | {:.2} | {:.2} | {:.2} | {:.2} | {} | {} | {} | {:.2e} | {:.2e} | {} | {} |",
        r.input,
        r.n,
        r.rounding,
        r.native_ms,
        r.native_spread,
        r.accurate_ms,
        r.ratio,
        r.rep.levels,
        r.rep.products,
        r.rep.exact,
        r.native_max_rel,
        r.native_norm_rel,
        r.accurate_max_ulps,
        engine(r)
    )
}

/// Two panels against n (log2): accurate time over native per input and rounding, and native
/// DGEMM's largest relative error per input (log10; the accurate results are within half an ulp
/// or one, drawn as the line at 2^-53).
fn svg(rows: &[Row]) -> String {
    let (w, h) = (900.0, 380.0);
    let mut s = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="11">"#
    );
    s.push('\n');
    let colors = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"];
    let mut sizes: Vec<usize> = rows.iter().map(|r| r.n).collect();
    sizes.sort();
    sizes.dedup();
    let (lo, hi) = (
        (*sizes.first().unwrap_or(&1) as f64).log2(),
        (*sizes.last().unwrap_or(&2) as f64).log2().max((*sizes.first().unwrap_or(&1) as f64).log2() + 1.0),
    );
    let mut inputs: Vec<&str> = rows.iter().map(|r| r.input.as_str()).collect();
    inputs.dedup();
    inputs.sort();
    inputs.dedup();
    for panel in 0..2 {
        let (x0, x1, y0, y1) = (60.0 + panel as f64 * 440.0, 400.0 + panel as f64 * 440.0, 320.0, 40.0);
        let px = |n: usize| x0 + ((n as f64).log2() - lo) / (hi - lo) * (x1 - x0);
        let (vals, ylab, title): (Vec<f64>, &str, &str) = if panel == 0 {
            (
                rows.iter().map(|r| r.accurate_ms / r.native_ms).collect(),
                "accurate time / native time",
                "time over native DGEMM",
            )
        } else {
            (
                rows.iter().map(|r| r.native_max_rel.max(1e-17).log10()).collect(),
                "log10 max relative error",
                "native DGEMM's error (accurate: <= 2^-53)",
            )
        };
        let (vmin, vmax) = if panel == 0 {
            (0.0, vals.iter().cloned().fold(1.0, f64::max) * 1.1)
        } else {
            (-17.0, vals.iter().cloned().fold(-15.0, f64::max).ceil() + 0.5)
        };
        let py = |v: f64| y0 - (v - vmin) / (vmax - vmin) * (y0 - y1);
        let ticks: Vec<(f64, String)> = sizes.iter().map(|&n| (px(n), n.to_string())).collect();
        svg_axes::panel(&mut s, title, (x0, x1, y0, y1), &ticks);
        for t in 0..=5 {
            let v = vmin + (vmax - vmin) * t as f64 / 5.0;
            let _ = writeln!(s, r##"<text x="{}" y="{:.1}" text-anchor="end">{v:.1}</text>"##, x0 - 4.0, py(v) + 4.0);
        }
        svg_axes::axis_titles(
            &mut s,
            ((x0 + x1) / 2.0, y0 + 32.0),
            (x0 - 40.0, (y0 + y1) / 2.0),
            "n (m = n = k)",
            ylab,
        );
        if panel == 1 {
            let y = py((2f64.powi(-53)).log10());
            let _ = writeln!(
                s,
                r##"<line x1="{x0}" y1="{y:.1}" x2="{x1}" y2="{y:.1}" stroke="#444" stroke-dasharray="4 3"/>"##
            );
        }
        let mut series = 0;
        for input in &inputs {
            for rounding in [Rounding::Nearest, Rounding::Faithful] {
                if panel == 1 && rounding == Rounding::Faithful {
                    continue;
                }
                let pts: Vec<(f64, f64)> = rows
                    .iter()
                    .zip(&vals)
                    .filter(|(r, _)| r.input == *input && (panel == 1 || r.rounding == rounding))
                    .map(|(r, v)| (px(r.n), py(*v)))
                    .collect();
                if pts.is_empty() {
                    continue;
                }
                let color = colors[series % colors.len()];
                let path: Vec<String> = pts.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
                let dash = if rounding == Rounding::Faithful { r#" stroke-dasharray="5 3""# } else { "" };
                let _ = writeln!(
                    s,
                    r##"<polyline points="{}" fill="none" stroke="{color}" stroke-width="1.8"{dash}/>"##,
                    path.join(" ")
                );
                let label = if panel == 0 { format!("{input} {rounding:?}") } else { input.to_string() };
                let _ = writeln!(
                    s,
                    r##"<text x="{}" y="{}" fill="{color}">{label}</text>"##,
                    x0 + 8.0,
                    y1 + 14.0 + 13.0 * series as f64
                );
                series += 1;
            }
        }
    }
    s.push_str("</svg>\n");
    s
}
