//! Pieces the benchmarks' plots and result files share (gpubench, offloadbench include this file
//! by path).

use std::fmt::Write as _;

/// A tick on the x axis at `x` (the plot's bottom edge at `y0`) with its label below.
pub fn x_tick(s: &mut String, x: f64, y0: f64, label: &str) {
    let _ = writeln!(
        s,
        r##"<line x1="{x:.1}" y1="{y0}" x2="{x:.1}" y2="{}" stroke="#888"/><text x="{x:.1}" y="{}" text-anchor="middle">{label}</text>"##,
        y0 + 4.0,
        y0 + 15.0
    );
}

/// One panel of a two-panel plot: its title centred above (at y = 24), its frame from (`x0`,
/// `y1`) to (`x1`, `y0`), and a tick at each `(x, label)` of `ticks` on its bottom edge.
#[allow(dead_code)]
pub fn panel(s: &mut String, title: &str, (x0, x1, y0, y1): (f64, f64, f64, f64), ticks: &[(f64, String)]) {
    let _ =
        writeln!(s, r##"<text x="{}" y="24" text-anchor="middle" font-weight="bold">{title}</text>"##, (x0 + x1) / 2.0);
    let _ = writeln!(
        s,
        r##"<rect x="{x0}" y="{y1}" width="{}" height="{}" fill="none" stroke="#888"/>"##,
        x1 - x0,
        y0 - y1
    );
    for (x, label) in ticks {
        x_tick(s, *x, y0, label);
    }
}

/// The two axis titles: `xt` centred at (`xm`, `yb`) below the plot, `yt` rotated at (`xl`, `ym`).
pub fn axis_titles(s: &mut String, (xm, yb): (f64, f64), (xl, ym): (f64, f64), xt: &str, yt: &str) {
    let _ = writeln!(
        s,
        r##"<text x="{xm}" y="{yb}" text-anchor="middle" fill="#555">{xt}</text><text x="{xl}" y="{ym}" text-anchor="middle" fill="#555" transform="rotate(-90 {xl} {ym})">{yt}</text>"##
    );
}

/// Write a benchmark's CSV and SVG as `<stem>.csv` and `<stem>.svg` under `out` (created),
/// and say where; the error names the file. (offloadbench includes this file too and writes its
/// three files its own way.)
#[allow(dead_code)]
pub fn write_results(out: &std::path::Path, stem: &str, csv: &str, svg: &str) -> Result<(), String> {
    let _ = std::fs::create_dir_all(out);
    let (c, s) = (out.join(format!("{stem}.csv")), out.join(format!("{stem}.svg")));
    std::fs::write(&c, csv)
        .and_then(|_| std::fs::write(&s, svg))
        .map_err(|e| format!("writing {}: {e}", c.display()))?;
    println!("wrote {} and {}", c.display(), s.display());
    Ok(())
}
