//! `ozakibench --forms`: how the CPU path runs its slice products (issue 49: batched against
//! looped, sparse slices, and the planner's choices), timed on the same inputs in rounds.
//!
//! Per input and n (m = n = k), each round times the accurate DGEMM (`plan::accurate::dgemm`,
//! nearest) with its products forced `joined` (one GEMM over the stacked slices), `batched`
//! (one batched call), `looped` (a GEMM call per product, the seed's looped form), left to the
//! planner (`auto`), and left to the planner with no sparse slices (`dense`), back to back; a
//! time is the mean over calls repeated for at least 50 ms, and a variant's figure the fastest
//! of its rounds (this VM's other tenants only ever slow a round down). Reported: batched /
//! looped; the planner's form against the best of the three (the issue's targets: batched
//! faster than looped at small n, the planner within 5% of the better); sparse slices against
//! none. Writes `<machine>-ozaki-forms.{csv,md,svg}`.

use super::ozaki_inputs::{lognormal, seed_pair, Rng};
use super::svg_axes;
use hyblas::plan::accurate::{self, Form, Rounding, Side, Tuning};
use hyblas::types::Trans;
use std::fmt::Write as _;
use std::time::Instant;

/// The variants timed: the three forms forced (sparse slices as the planner says), the
/// planner's choice, the planner's choice with no sparse slices, and with A's only.
const VARIANTS: [(&str, Tuning); 6] = [
    ("joined", Tuning { form: Some(Form::Joined), sparse_density: None, sparse_side: None }),
    ("batched", Tuning { form: Some(Form::Batched), sparse_density: None, sparse_side: None }),
    ("looped", Tuning { form: Some(Form::Looped), sparse_density: None, sparse_side: None }),
    ("auto", Tuning { form: None, sparse_density: None, sparse_side: None }),
    ("dense", Tuning { form: None, sparse_density: Some(0.0), sparse_side: None }),
    ("A only", Tuning { form: None, sparse_density: None, sparse_side: Some(Side::Left) }),
];

struct Row {
    input: String,
    n: usize,
    /// Fastest round's ms per call, per variant (VARIANTS' order).
    ms: [f64; 6],
    /// The planner's form, the levels the calls ran, and (sparse, all) products of its calls.
    auto: Form,
    levels: usize,
    sparse: (usize, usize),
    /// Slowest round over the fastest, of the best fixed form (the noise beside the ratios).
    spread: f64,
}

impl Row {
    /// The fastest of the three forms' times.
    fn best(&self) -> f64 {
        self.ms[..3].iter().cloned().fold(f64::MAX, f64::min)
    }
    /// The planner's form's time (from the forced runs: the same calls, so no new noise).
    fn chosen(&self) -> f64 {
        self.ms[match self.auto {
            Form::Joined => 0,
            Form::Batched => 1,
            Form::Looped => 2,
        }]
    }
}

/// Mean seconds per call of `f`, repeated for at least 50 ms (and at least once).
fn per_call(mut f: impl FnMut()) -> f64 {
    let t = Instant::now();
    let mut calls = 0;
    while calls == 0 || t.elapsed().as_secs_f64() < 0.05 {
        f();
        calls += 1;
    }
    t.elapsed().as_secs_f64() / calls as f64
}

const HEADER: &str = "| input | n | levels | joined | batched | looped | planner's form | batched / looped | planner's form / best | auto (measured) | dense (no sparse slices) | sparse products | auto / dense | A only (sparse slices of A only) | auto / A only | best form's slowest / fastest round |\n|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|";

pub fn run(
    sizes: &[usize],
    inputs: &[String],
    reps: usize,
    machine: &str,
    out: &std::path::Path,
) -> Result<(), String> {
    let threads = hyblas::cpu::threads::nthreads();
    println!("ozakibench --forms: {threads} threads, machine {machine}; the CPU path, nearest; ms per call, fastest of {reps} rounds");
    println!("{HEADER}");
    let mut rng = Rng(0x9e3779b97f4a7c15);
    let mut rows = Vec::new();
    for input in inputs {
        for &n in sizes {
            let (a, b) = match input.strip_prefix("phi").and_then(|p| p.parse::<f64>().ok()) {
                Some(phi) => (lognormal(&mut rng, n * n, phi), lognormal(&mut rng, n * n, phi)),
                None => seed_pair(&mut rng, n),
            };
            let mut c = vec![0.0f64; n * n];
            let mut times: [Vec<f64>; 6] = Default::default();
            let (mut auto, mut levels, mut sparse) = (Form::Joined, 0, (0, 0));
            for _ in 0..reps {
                for (x, (_, tuning)) in VARIANTS.iter().enumerate() {
                    let mut call = || unsafe {
                        accurate::dgemm(
                            Rounding::Nearest,
                            Trans::No,
                            Trans::No,
                            n,
                            n,
                            n,
                            1.0,
                            a.as_ptr(),
                            n,
                            b.as_ptr(),
                            n,
                            0.0,
                            c.as_mut_ptr(),
                            n,
                        );
                    };
                    times[x].push(accurate::with_tuning(*tuning, || per_call(&mut call)));
                    let rep = accurate::last_report();
                    levels = rep.levels;
                    if x == 3 {
                        auto = rep.form;
                        sparse = (rep.sparse, rep.products);
                    }
                }
            }
            let fastest = |v: &[f64]| v.iter().cloned().fold(f64::MAX, f64::min);
            let ms = [0, 1, 2, 3, 4, 5].map(|x| fastest(&times[x]) * 1e3);
            let best_fixed = (0..3).min_by(|&x, &y| ms[x].total_cmp(&ms[y])).unwrap_or(0);
            let spread = times[best_fixed].iter().cloned().fold(0.0, f64::max) / fastest(&times[best_fixed]);
            let row = Row { input: input.clone(), n, ms, auto, levels, sparse, spread };
            println!("{}", line(&row));
            rows.push(row);
        }
    }
    let mut csv = String::from("machine,threads,input,n,levels,joined_ms,batched_ms,looped_ms,auto_ms,dense_ms,planner_form,batched_over_looped,planner_over_best,sparse_products,products,auto_over_dense,a_only_ms,auto_over_a_only,best_spread\n");
    let mut md = format!(
        "# Accurate DGEMM: how the slice products run, {machine} ({threads} threads)\n\nCommand: `./target/release/ozakibench {}`\n\nms per call (nearest), fastest of {reps} rounds. The planner's form / best: its form's time from the forced runs over the best of the three; auto: the planner's own calls measured; dense: the planner with no sparse slices.\n\n{HEADER}\n",
        std::env::args().skip(1).collect::<Vec<_>>().join(" ")
    );
    for r in &rows {
        let _ = writeln!(
            csv,
            "{machine},{threads},{},{},{},{:.4},{:.4},{:.4},{:.4},{:.4},{},{:.3},{:.3},{},{},{:.3},{:.4},{:.3},{:.3}",
            r.input,
            r.n,
            r.levels,
            r.ms[0],
            r.ms[1],
            r.ms[2],
            r.ms[3],
            r.ms[4],
            format!("{:?}", r.auto).to_lowercase(),
            r.ms[1] / r.ms[2],
            r.chosen() / r.best(),
            r.sparse.0,
            r.sparse.1,
            r.ms[3] / r.ms[4],
            r.ms[5],
            r.ms[3] / r.ms[5],
            r.spread
        );
        let _ = writeln!(md, "{}", line(r));
    }
    let stem = format!("{machine}-ozaki-forms");
    std::fs::create_dir_all(out).map_err(|e| e.to_string())?;
    std::fs::write(out.join(format!("{stem}.md")), md).map_err(|e| e.to_string())?;
    svg_axes::write_results(out, &stem, &csv, &svg(&rows))
}

fn line(r: &Row) -> String {
    format!(
        "| {} | {} | {} | {:.3} | {:.3} | {:.3} | {} | {:.3} | {:.3} | {:.3} | {:.3} | {} of {} | {:.3} | {:.3} | {:.3} | {:.3} |",
        r.input,
        r.n,
        r.levels,
        r.ms[0],
        r.ms[1],
        r.ms[2],
        format!("{:?}", r.auto).to_lowercase(),
        r.ms[1] / r.ms[2],
        r.chosen() / r.best(),
        r.ms[3],
        r.ms[4],
        r.sparse.0,
        r.sparse.1,
        r.ms[3] / r.ms[4],
        r.ms[5],
        r.ms[3] / r.ms[5],
        r.spread
    )
}

/// Each variant's time over the best form's, against n, one panel per input.
fn svg(rows: &[Row]) -> String {
    let mut inputs: Vec<&str> = rows.iter().map(|r| r.input.as_str()).collect();
    inputs.dedup();
    let (pw, h) = (440.0, 380.0);
    let w = pw * inputs.len().max(1) as f64;
    let mut s = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="11">"#
    );
    s.push('\n');
    let colors = ["#1f77b4", "#d62728", "#2ca02c", "#444444", "#ff7f0e", "#9467bd"];
    for (p, input) in inputs.iter().enumerate() {
        let mine: Vec<&Row> = rows.iter().filter(|r| r.input == *input).collect();
        let (lo, hi) = mine.iter().fold((f64::MAX, f64::MIN), |(lo, hi), r| {
            let l = (r.n as f64).log2();
            (lo.min(l), hi.max(l))
        });
        let hi = hi.max(lo + 1.0);
        let (x0, x1, y0, y1) = (60.0 + p as f64 * pw, pw - 40.0 + p as f64 * pw, 320.0, 40.0);
        let px = |n: usize| x0 + ((n as f64).log2() - lo) / (hi - lo) * (x1 - x0);
        let ratio = |r: &Row, x: usize| r.ms[x] / r.best();
        let vmax = mine.iter().flat_map(|r| (0..6).map(move |x| ratio(r, x))).fold(1.2, f64::max) * 1.05;
        let vmin = mine.iter().flat_map(|r| (0..6).map(move |x| ratio(r, x))).fold(1.0, f64::min) * 0.95;
        let py = |v: f64| y0 - (v - vmin) / (vmax - vmin) * (y0 - y1);
        let ticks: Vec<(f64, String)> = mine.iter().map(|r| (px(r.n), r.n.to_string())).collect();
        svg_axes::panel(&mut s, &format!("{input}: time over the best form"), (x0, x1, y0, y1), &ticks);
        for t in 0..=4 {
            let v = vmin + (vmax - vmin) * t as f64 / 4.0;
            let _ = writeln!(s, r##"<text x="{}" y="{:.1}" text-anchor="end">{v:.2}</text>"##, x0 - 4.0, py(v) + 4.0);
        }
        svg_axes::axis_titles(
            &mut s,
            ((x0 + x1) / 2.0, y0 + 32.0),
            (x0 - 40.0, (y0 + y1) / 2.0),
            "n (m = n = k)",
            "time / best form",
        );
        for (x, (name, _)) in VARIANTS.iter().enumerate() {
            let path: Vec<String> = mine.iter().map(|r| format!("{:.1},{:.1}", px(r.n), py(ratio(r, x)))).collect();
            let dash = if x >= 3 { r#" stroke-dasharray="5 3""# } else { "" };
            let _ = writeln!(
                s,
                r##"<polyline points="{}" fill="none" stroke="{}" stroke-width="1.5"{dash}/><text x="{}" y="{}" fill="{}">{name}</text>"##,
                path.join(" "),
                colors[x],
                x0 + 8.0,
                y1 + 14.0 + 13.0 * x as f64,
                colors[x]
            );
        }
    }
    s.push_str("</svg>\n");
    s
}
