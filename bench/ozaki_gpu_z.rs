//! `ozakigpubench --zgemm`: the accurate ZGEMM on device memory (issue 49: "ZGEMM accurate where
//! it costs little more") against native cuBLAS ZGEMM (`cublasZgemm_v2`), time and error, in
//! one process. Per n (m = n = k): entries with both parts (U - 0.5) exp(0.5 N(0, 1)); rounds
//! of native then accurate (`cblas_zgemm` on device pointers in accurate mode, nearest: alpha
//! and beta real, so the GPU's scheme runs on the expanded real view), each call between two
//! context synchronizes, one warm-up call each first; the ratio is the median over rounds of
//! the two times of the same round. Errors: sampled elements of both results against the exact
//! value (a big-integer dot product of length 2k, `hyblas::cpu::ozaki::Exact`). Writes
//! `<machine>-ozaki-zgemm.{csv,md,svg}`.

use super::ozaki_inputs::lognormal_par;
use super::svg_axes;
use super::{ctx_sync, median, ordinal, H};
use hyblas::cpu::ozaki::Exact;
use hyblas::gpu::{vendor, DeviceBuffer};
use hyblas::plan::accurate::{self, Report, Rounding};
use std::ffi::c_int;
use std::fmt::Write as _;
use std::time::Instant;

/// `cublasZgemm_v2`'s prototype (complex numbers as `C64`, i.e. [re, im]).
type ZgemmFn = vendor::GemmFn<hyblas::types::C64, c_int>;

extern "C" {
    fn cblas_zgemm(
        l: c_int,
        ta: c_int,
        tb: c_int,
        m: c_int,
        n: c_int,
        k: c_int,
        al: *const f64,
        a: *const f64,
        lda: c_int,
        b: *const f64,
        ldb: c_int,
        be: *const f64,
        c: *mut f64,
        ldc: c_int,
    );
}

struct Row {
    n: usize,
    native_ms: f64,
    accurate_ms: f64,
    ratio: f64,
    native_spread: f64,
    rep: Report,
    /// Sampled parts (re and im) not the correctly rounded value: native, accurate.
    misses: (usize, usize),
    native_max_ulps: f64,
    samples: usize,
}

/// Seconds of `f`, between two context synchronizes.
fn timed(f: impl FnOnce() -> Result<(), String>) -> Result<f64, String> {
    ctx_sync()?;
    let t = Instant::now();
    f()?;
    ctx_sync()?;
    Ok(t.elapsed().as_secs_f64())
}

/// Runs the comparison; `native_handle` a cuBLAS handle in host pointer mode.
pub fn run(
    sizes: &[usize],
    reps: usize,
    samples: usize,
    native_handle: H,
    machine: &str,
    out: &std::path::Path,
) -> Result<(), String> {
    // SAFETY: the type is cublas_api.h's cublasZgemm_v2.
    let zgemm: ZgemmFn = unsafe { vendor::get("cublasZgemm_v2") }.ok_or("no cublasZgemm_v2")?;
    let (one, zero) = ([1.0f64, 0.0], [0.0f64, 0.0]);
    let mut rows = Vec::new();
    println!("ozakigpubench --zgemm: native = cublasZgemm_v2, accurate = cblas_zgemm in accurate mode (nearest) on device pointers; phi = 0.5 in both parts");
    println!("| n | native ms | accurate ms | accurate / native | native slowest / fastest | moduli | exact elements | on the GPU | native: parts not correctly rounded | native max ulps | accurate: parts not correctly rounded |");
    println!("|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|");
    for &n in sizes {
        let len = 2 * n * n;
        let a = lognormal_par(0x5a17 + n as u64, len, 0.5);
        let b = lognormal_par(0x5b17 + n as u64, len, 0.5);
        let da = DeviceBuffer::from_slice(&a).map_err(|e| e.to_string())?;
        let db = DeviceBuffer::from_slice(&b).map_err(|e| e.to_string())?;
        let dn = DeviceBuffer::from_slice(&vec![f64::NAN; len]).map_err(|e| e.to_string())?;
        let dz = DeviceBuffer::from_slice(&vec![f64::NAN; len]).map_err(|e| e.to_string())?;
        let ni = n as c_int;
        let (pa, pb) = (da.ptr as *const f64, db.ptr as *const f64);
        let native = || -> Result<(), String> {
            // SAFETY: device buffers of n^2 complex numbers; scalars on the host.
            let s = unsafe {
                zgemm(
                    native_handle,
                    0,
                    0,
                    ni,
                    ni,
                    ni,
                    one.as_ptr().cast(),
                    pa.cast(),
                    ni,
                    pb.cast(),
                    ni,
                    zero.as_ptr().cast(),
                    dn.ptr as *mut _,
                    ni,
                )
            };
            if s == 0 {
                Ok(())
            } else {
                Err(format!("cublasZgemm_v2 returned {s}"))
            }
        };
        let acc = || -> Result<(), String> {
            accurate::with_mode(accurate::Mode::Accurate(Rounding::Nearest), || unsafe {
                cblas_zgemm(
                    102,
                    111,
                    111,
                    ni,
                    ni,
                    ni,
                    one.as_ptr(),
                    pa,
                    ni,
                    pb,
                    ni,
                    zero.as_ptr(),
                    dz.ptr as *mut f64,
                    ni,
                )
            });
            Ok(())
        };
        timed(native)?;
        timed(acc)?;
        let (mut tn, mut ta) = (Vec::new(), Vec::new());
        for _ in 0..reps {
            tn.push(timed(native)?);
            ta.push(timed(acc)?);
        }
        let rep = accurate::last_report();
        // Sampled elements against the exact value.
        let (vn, vz): (Vec<f64>, Vec<f64>) =
            (dn.to_vec().map_err(|e| e.to_string())?, dz.to_vec().map_err(|e| e.to_string())?);
        let (mut miss_n, mut miss_a, mut max_ulps) = (0, 0, 0.0f64);
        let mut acc_e = Exact::new();
        for s in 0..samples {
            let j = s * n / samples;
            let i = ((s as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 33) as usize % n;
            for q in 0..2 {
                // Re: sum ar br - ai bi; Im: sum ar bi + ai br (A(i, l) at i + l n, B(l, j) at l + j n).
                acc_e.set_dot(2 * n, |t| {
                    let (l, h) = (t % n, t / n);
                    let (ar, ai) = (a[2 * (i + l * n)], a[2 * (i + l * n) + 1]);
                    let (br, bi) = (b[2 * (l + j * n)], b[2 * (l + j * n) + 1]);
                    match (q, h) {
                        (0, 0) => (ar, br),
                        (0, _) => (-ai, bi),
                        (_, 0) => (ar, bi),
                        _ => (ai, br),
                    }
                });
                let exact = acc_e.round();
                let at = 2 * (i + j * n) + q;
                let d = (ordinal(vn[at]) - ordinal(exact)).unsigned_abs() as f64;
                max_ulps = max_ulps.max(d);
                miss_n += usize::from(d != 0.0);
                miss_a += usize::from(vz[at].to_bits() != exact.to_bits());
            }
        }
        let row = Row {
            n,
            native_ms: median(&tn) * 1e3,
            accurate_ms: median(&ta) * 1e3,
            ratio: median(&ta.iter().zip(&tn).map(|(x, y)| x / y).collect::<Vec<_>>()),
            native_spread: tn.iter().cloned().fold(0.0, f64::max) / tn.iter().cloned().fold(f64::MAX, f64::min),
            rep,
            misses: (miss_n, miss_a),
            native_max_ulps: max_ulps,
            samples: 2 * samples,
        };
        println!("{}", line(&row));
        rows.push(row);
    }
    let mut csv = String::from("machine,n,native_ms,accurate_ms,ratio,native_spread,moduli,exact_elements,on_gpu,sampled_parts,native_not_nearest,native_max_ulps,accurate_not_nearest\n");
    let mut md = format!(
        "# Accurate ZGEMM on the GPU against cuBLAS ZGEMM, {machine}\n\nCommand: `ozakigpubench {}`; median of {reps} rounds after a warm-up; errors on {} sampled elements (both parts) against the exact value.\n\n| n | native ms | accurate ms | accurate / native | native slowest / fastest | moduli | exact elements | on the GPU | native: parts not correctly rounded | native max ulps | accurate: parts not correctly rounded |\n|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|\n",
        std::env::args().skip(1).collect::<Vec<_>>().join(" "),
        samples
    );
    for r in &rows {
        let _ = writeln!(
            csv,
            "{machine},{},{:.3},{:.3},{:.3},{:.3},{},{},{},{},{},{},{}",
            r.n,
            r.native_ms,
            r.accurate_ms,
            r.ratio,
            r.native_spread,
            r.rep.moduli,
            r.rep.exact,
            r.rep.gpu,
            r.samples,
            r.misses.0,
            r.native_max_ulps,
            r.misses.1
        );
        let _ = writeln!(md, "{}", line(r));
    }
    let stem = format!("{machine}-ozaki-zgemm");
    std::fs::create_dir_all(out).map_err(|e| e.to_string())?;
    std::fs::write(out.join(format!("{stem}.md")), md).map_err(|e| e.to_string())?;
    svg_axes::write_results(out, &stem, &csv, &svg(&rows))?;
    if rows.iter().any(|r| r.misses.1 > 0) {
        return Err("accurate ZGEMM: a sampled part not correctly rounded".into());
    }
    Ok(())
}

fn line(r: &Row) -> String {
    format!(
        "| {} | {:.3} | {:.3} | {:.2} | {:.2} | {} | {} | {} | {} of {} | {} | {} of {} |",
        r.n,
        r.native_ms,
        r.accurate_ms,
        r.ratio,
        r.native_spread,
        r.rep.moduli,
        r.rep.exact,
        r.rep.gpu,
        r.misses.0,
        r.samples,
        r.native_max_ulps,
        r.misses.1,
        r.samples
    )
}

/// Accurate time over native against n.
fn svg(rows: &[Row]) -> String {
    let (w, h) = (480.0, 380.0);
    let mut s = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="11">"#
    );
    s.push('\n');
    let (x0, x1, y0, y1) = (60.0, 440.0, 320.0, 40.0);
    let lo = rows.iter().map(|r| (r.n as f64).log2()).fold(f64::MAX, f64::min);
    let hi = rows.iter().map(|r| (r.n as f64).log2()).fold(f64::MIN, f64::max).max(lo + 1.0);
    let px = |n: usize| x0 + ((n as f64).log2() - lo) / (hi - lo) * (x1 - x0);
    let vmax = rows.iter().map(|r| r.ratio).fold(2.0, f64::max) * 1.1;
    let py = |v: f64| y0 - v / vmax * (y0 - y1);
    let ticks: Vec<(f64, String)> = rows.iter().map(|r| (px(r.n), r.n.to_string())).collect();
    svg_axes::panel(&mut s, "accurate ZGEMM / cuBLAS ZGEMM", (x0, x1, y0, y1), &ticks);
    for t in 0..=4 {
        let v = vmax * t as f64 / 4.0;
        let _ = writeln!(s, r##"<text x="{}" y="{:.1}" text-anchor="end">{v:.1}</text>"##, x0 - 4.0, py(v) + 4.0);
    }
    svg_axes::axis_titles(
        &mut s,
        ((x0 + x1) / 2.0, y0 + 32.0),
        (x0 - 40.0, (y0 + y1) / 2.0),
        "n (m = n = k)",
        "time / native",
    );
    let pts: Vec<String> = rows.iter().map(|r| format!("{:.1},{:.1}", px(r.n), py(r.ratio))).collect();
    let _ = writeln!(s, r##"<polyline points="{}" fill="none" stroke="#1f77b4" stroke-width="1.5"/>"##, pts.join(" "));
    s.push_str("</svg>\n");
    s
}
