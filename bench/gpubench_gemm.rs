//! gpubench's `gemm_smallout` group (issue 4): GEMM with a small output and a long k, hyblas's
//! split-k (`hyblas::gpu::splitk::gemm`, called directly, deterministic and atomic reductions)
//! against the real cuBLAS `cublas?gemm_v2` and hyblas's exported `cublas?gemm_v2` (the entry
//! a cuBLAS program that preloads hyblas takes), side by side on the same buffers and stream
//! with the group's common `measure` (CUDA events, alternating sides, median).
//!
//! Grid: m = n in {1, 2, 4, 8, 16, 32, 64, 128} and the pairs (16, 64), (64, 16), (8, 128);
//! k = 2^12..2^22 and three odd k; s/d/c/z; op(A), op(B) = (N, N) and (T, N) everywhere, all
//! nine combinations at d, m = n = 16, k = 2^20 and z, m = n = 16, k = 2^18. C := A*B (alpha 1,
//! beta 0: the Gram-matrix case); points whose A and B exceed 8 GiB are skipped. GB/s counts A
//! and B read once. After each point the four C's are compared with cuBLAS's (`rel_diff`).
//!
//! Writes `<device>-gemm-smallout.csv` and `<device>-gemm-smallout-<p>.svg` (GB/s against k,
//! one panel per m x n) and prints, per precision and op pair, the cuBLAS/hyblas ratio over the
//! grid, the geometric mean over m, n <= 32 and k >= 2^16, deterministic against atomic, the
//! entry against cuBLAS, and the measured crossover k.

use super::*;
use hyblas::gpu::splitk::{self, Reduction};

const SQUARE: &[usize] = &[1, 2, 4, 8, 16, 32, 64, 128];
const PAIRS: &[(usize, usize)] = &[(16, 64), (64, 16), (8, 128)];
const ODD_K: &[usize] = &[12_345, 100_003, 1_000_003];
const QUICK_SQUARE: &[usize] = &[1, 8, 16, 32, 64];
const QUICK_PAIRS: &[(usize, usize)] = &[(16, 64)];
const QUICK_ODD_K: &[usize] = &[100_003];
/// The (precision, m = n, k) points that run all nine op combinations.
const ALL_OPS_AT: &[(char, usize, usize)] = &[('d', 16, 1 << 20), ('z', 16, 1 << 18)];
/// Points whose A and B together exceed this are skipped.
const MAX_OPERAND_BYTES: u64 = 8 << 30;
/// The summary's region: m, n <= 32 and k >= 2^16 (the issue's geometric-mean target).
const SMALL_MN: usize = 32;
const LONG_K: usize = 1 << 16;
/// Read-stream ceiling of an H200 (anchors.md: SGEMV-N at 16384).
const READ_GBS: f64 = 4460.0;

/// The sides of one point, in `measure`'s order.
pub(super) const SIDES: [&str; 5] = ["hyblas", "atomic", "cublas", "entry", "cublas2"];

/// `--gemm-sides hyblas,atomic`: a subset of [`SIDES`] (to time one side back to back with
/// itself, or a pair alone).
pub(super) fn parse_sides(v: &str) -> Result<Vec<String>, String> {
    v.split(',')
        .map(|x| match SIDES.iter().find(|&&s| s == x.trim()) {
            Some(s) => Ok(s.to_string()),
            None => Err(format!("--gemm-sides: `{x}` is not one of {}", SIDES.join(", "))),
        })
        .collect()
}

/// Whether `--only` selects this group (no `--only`: every group).
pub(super) fn selected(o: &Opts) -> bool {
    o.only.is_empty() || o.only.iter().any(|w| w == "gemm" || w == "gemm_smallout")
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Point {
    ta: Trans,
    tb: Trans,
    m: usize,
    n: usize,
    k: usize,
}

impl Point {
    fn lda(&self) -> usize {
        if self.ta == Trans::No {
            self.m
        } else {
            self.k
        }
    }
    fn ldb(&self) -> usize {
        if self.tb == Trans::No {
            self.k
        } else {
            self.n
        }
    }
    fn operand_bytes(&self, esz: usize) -> u64 {
        ((self.m * self.k + self.k * self.n) * esz) as u64
    }
}

fn k_values(quick: bool) -> Vec<usize> {
    let mut v: Vec<usize> =
        if quick { vec![1 << 12, 1 << 16, 1 << 20] } else { (12..=22).map(|e| 1usize << e).collect() };
    v.extend_from_slice(if quick { QUICK_ODD_K } else { ODD_K });
    v.sort_unstable();
    v
}

fn shapes(quick: bool) -> Vec<(usize, usize)> {
    let (sq, pairs) = if quick { (QUICK_SQUARE, QUICK_PAIRS) } else { (SQUARE, PAIRS) };
    sq.iter().map(|&s| (s, s)).chain(pairs.iter().copied()).collect()
}

/// `--gemm-points`: `p:ab:m:n:k` items (precision, op(A) op(B) letters, sizes; k may be 2^e),
/// e.g. `s:nn:64:64:8192,d:tn:1:1:2^20`.
pub(super) fn parse_points(v: &str) -> Result<Vec<(char, Point)>, String> {
    let op = |c: char| match c {
        'n' => Some(Trans::No),
        't' => Some(Trans::Trans),
        'c' => Some(Trans::ConjTrans),
        _ => None,
    };
    let num = |t: &str| match t.strip_prefix("2^") {
        Some(e) => e.parse::<u32>().ok().filter(|&e| e < 40).map(|e| 1usize << e),
        None => t.parse::<usize>().ok(),
    };
    v.split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(|item| {
            let f: Vec<&str> = item.split(':').collect();
            let bad = || format!("bad --gemm-points item `{item}` (want p:ab:m:n:k, e.g. s:nn:64:64:8192)");
            let [p, ops, m, n, k] = f[..] else { return Err(bad()) };
            let p = p.chars().next().filter(|c| p.len() == 1 && "sdcz".contains(*c)).ok_or_else(bad)?;
            let mut oc = ops.chars().map(op);
            let (Some(Some(ta)), Some(Some(tb)), None) = (oc.next(), oc.next(), oc.next()) else { return Err(bad()) };
            let (Some(m), Some(n), Some(k)) = (num(m), num(n), num(k)) else { return Err(bad()) };
            if m == 0 || n == 0 || k == 0 {
                return Err(bad());
            }
            Ok((p, Point { ta, tb, m, n, k }))
        })
        .collect()
}

/// The points of precision `prec` (the `--gemm-points` of it when given), and how many were
/// skipped for size.
fn points(o: &Opts, prec: char, esz: usize) -> (Vec<Point>, usize) {
    if !o.gemm_points.is_empty() {
        let pts: Vec<Point> = o.gemm_points.iter().filter(|(p, _)| *p == prec).map(|&(_, pt)| pt).collect();
        let n = pts.len();
        let pts: Vec<Point> = pts.into_iter().filter(|p| p.operand_bytes(esz) <= MAX_OPERAND_BYTES).collect();
        let skipped = n - pts.len();
        return (pts, skipped);
    }
    let quick = o.quick;
    let mut pts = Vec::new();
    for (ta, tb) in [(Trans::No, Trans::No), (Trans::Trans, Trans::No)] {
        for &(m, n) in &shapes(quick) {
            for &k in &k_values(quick) {
                pts.push(Point { ta, tb, m, n, k });
            }
        }
    }
    let ops = [Trans::No, Trans::Trans, Trans::ConjTrans];
    for &(p, mn, k) in ALL_OPS_AT {
        if p != prec {
            continue;
        }
        for ta in ops {
            for tb in ops {
                let pt = Point { ta, tb, m: mn, n: mn, k };
                if !pts.contains(&pt) {
                    pts.push(pt);
                }
            }
        }
    }
    let before = pts.len();
    pts.retain(|p| p.operand_bytes(esz) <= MAX_OPERAND_BYTES);
    let skipped = before - pts.len();
    (pts, skipped)
}

// ---------------------------------------------------------------------------------------------
// Rows

#[derive(Clone, Debug, Default)]
pub(super) struct GRow {
    prec: char,
    ta: char,
    tb: char,
    m: usize,
    n: usize,
    k: usize,
    det_us: Option<f64>,
    atomic_us: Option<f64>,
    cublas_us: Option<f64>,
    entry_us: Option<f64>,
    /// `--gemm-twin`: the real cuBLAS again, through a second handle (how far two cuBLAS handles
    /// on one stream differ: the noise floor of the entry's comparison).
    twin_us: Option<f64>,
    /// Largest difference of hyblas's and the entry's C from cuBLAS's, relative to max |C|.
    rel_diff: Option<f64>,
    reps: usize,
    /// Ratios paired round by round (`paired_ratio`): deterministic / atomic, entry / cuBLAS,
    /// and the twin / cuBLAS (the noise floor of the entry's).
    det_atomic_p: Option<f64>,
    entry_cublas_p: Option<f64>,
    twin_cublas_p: Option<f64>,
}

fn esz_of(p: char) -> f64 {
    match p {
        's' => 4.0,
        'd' | 'c' => 8.0,
        _ => 16.0,
    }
}

impl GRow {
    fn bytes(&self) -> f64 {
        esz_of(self.prec) * (self.m * self.k + self.k * self.n) as f64
    }
    fn gbs(&self, us: Option<f64>) -> Option<f64> {
        us.map(|t| self.bytes() / (t * 1e-6) / 1e9)
    }
    fn ratio(&self) -> Option<f64> {
        Some(self.cublas_us? / self.det_us?)
    }
    fn group(&self) -> (char, char, char) {
        (self.prec, self.ta, self.tb)
    }
}

const CSV_HEADER: &str = "precision,transa,transb,m,n,k,hyblas_us,cublas_us,atomic_us,entry_us,gbs,cublas_gbs,\
atomic_gbs,entry_gbs,bytes,cublas_over_hyblas,hyblas_over_atomic,entry_over_cublas,rel_diff,reps,cublas2_us,\
hyblas_over_atomic_paired,entry_over_cublas_paired,cublas2_over_cublas_paired";

fn csv(rows: &[GRow]) -> String {
    let mut s = String::from(CSV_HEADER);
    s.push('\n');
    let div = |a: Option<f64>, b: Option<f64>| Some(a? / b?);
    for r in rows {
        let _ = writeln!(
            s,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{:.0},{},{},{},{},{},{},{},{},{}",
            r.prec,
            r.ta.to_ascii_uppercase(),
            r.tb.to_ascii_uppercase(),
            r.m,
            r.n,
            r.k,
            opt(r.det_us, 3),
            opt(r.cublas_us, 3),
            opt(r.atomic_us, 3),
            opt(r.entry_us, 3),
            opt(r.gbs(r.det_us), 1),
            opt(r.gbs(r.cublas_us), 1),
            opt(r.gbs(r.atomic_us), 1),
            opt(r.gbs(r.entry_us), 1),
            r.bytes(),
            opt(r.ratio(), 4),
            opt(div(r.det_us, r.atomic_us), 4),
            opt(div(r.entry_us, r.cublas_us), 4),
            r.rel_diff.map_or(String::new(), |d| format!("{d:.2e}")),
            r.reps,
            opt(r.twin_us, 3),
            opt(r.det_atomic_p, 4),
            opt(r.entry_cublas_p, 4),
            opt(r.twin_cublas_p, 4)
        );
    }
    s
}

fn read_csv(path: &Path) -> Result<Vec<GRow>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap_or("").split(',').map(str::trim).collect();
    let col = |name: &str| head.iter().position(|h| *h == name);
    let need = |name: &str| col(name).ok_or_else(|| format!("{}: no column `{name}`", path.display()));
    let (ip, ita, itb, im, inn, ik) =
        (need("precision")?, need("transa")?, need("transb")?, need("m")?, need("n")?, need("k")?);
    let (ih, ic) = (need("hyblas_us")?, need("cublas_us")?);
    let (ia, ie, id, ir) = (col("atomic_us"), col("entry_us"), col("rel_diff"), col("reps"));
    let itw = col("cublas2_us");
    let (ipa, ipe, ipt) =
        (col("hyblas_over_atomic_paired"), col("entry_over_cublas_paired"), col("cublas2_over_cublas_paired"));
    let mut rows = Vec::new();
    for (i, line) in lines.enumerate() {
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        let bad = || format!("{}:{}: malformed line", path.display(), i + 2);
        let get = |k: Option<usize>| k.and_then(|k| f.get(k)).and_then(|v| v.parse::<f64>().ok());
        let ch = |k: usize| f.get(k).and_then(|v| v.chars().next()).ok_or_else(bad);
        let num = |k: usize| f.get(k).and_then(|v| v.parse::<usize>().ok()).ok_or_else(bad);
        rows.push(GRow {
            prec: ch(ip)?,
            ta: ch(ita)?.to_ascii_lowercase(),
            tb: ch(itb)?.to_ascii_lowercase(),
            m: num(im)?,
            n: num(inn)?,
            k: num(ik)?,
            det_us: get(Some(ih)),
            cublas_us: get(Some(ic)),
            atomic_us: get(ia),
            entry_us: get(ie),
            twin_us: get(itw),
            rel_diff: get(id),
            reps: get(ir).unwrap_or(0.0) as usize,
            det_atomic_p: get(ipa),
            entry_cublas_p: get(ipe),
            twin_cublas_p: get(ipt),
        });
    }
    Ok(rows)
}

// ---------------------------------------------------------------------------------------------
// The sides

type GemmPtr =
    unsafe extern "C" fn(H, c_int, c_int, c_int, c_int, c_int, Vp, Vp, c_int, Vp, c_int, Vp, Mp, c_int) -> c_int;

/// Device addresses of one point's operands and the C of one side.
#[derive(Clone, Copy)]
struct Bufs {
    a: u64,
    b: u64,
    c: u64,
}

fn hyblas_gemm<'a, T: Scalar>(ex: Exec<'a>, p: Point, d: Bufs, red: Reduction) -> Call<'a> {
    let (a, b, c) = (
        DMat { ptr: d.a, ld: p.lda() as i64 },
        DMat { ptr: d.b, ld: p.ldb() as i64 },
        DMat { ptr: d.c, ld: p.m as i64 },
    );
    let (m, n, k) = (p.m as i64, p.n as i64, p.k as i64);
    Box::new(move |_| {
        hy(splitk::gemm::<T>(&ex, p.ta, p.tb, m, n, k, In::Host(T::one()), a, b, In::Host(T::zero()), c, red))
    })
}

fn api_gemm<'a, T: Scalar>(api: &'a Api, p: Point, d: Bufs) -> Option<Call<'a>> {
    let name = format!("cublas{}gemm_v2", T::PREFIX.to_ascii_uppercase());
    // SAFETY: GemmPtr is cublas?gemm_v2's prototype.
    let f: GemmPtr = unsafe { api.get(&name)? };
    let h = api.handle;
    let (m, n, k) = (p.m as c_int, p.n as c_int, p.k as c_int);
    let (lda, ldb) = (p.lda() as c_int, p.ldb() as c_int);
    let (ta, tb) = (trans_code(p.ta), trans_code(p.tb));
    Some(Box::new(move |_| {
        let (al, be) = (A16(T::one()), A16(T::zero()));
        let sp = |v: &A16<T>| &v.0 as *const T as Vp;
        // SAFETY: the buffers hold the operands of this point; host pointer mode, scalars on
        // this frame (16-byte aligned).
        let s = unsafe { f(h, ta, tb, m, n, k, sp(&al), d.a as Vp, lda, d.b as Vp, ldb, sp(&be), d.c as Mp, m) };
        status(s, &name)
    }))
}

fn download<T: Scalar>(ptr: u64, count: usize) -> Result<Vec<T>, String> {
    let mut v = vec![T::zero(); count];
    let bytes = count * std::mem::size_of::<T>();
    check(unsafe { sys::cuMemcpyDtoH_v2(v.as_mut_ptr() as *mut c_void, ptr, bytes) }, "cuMemcpyDtoH")
        .map_err(|e| e.to_string())?;
    Ok(v)
}

/// max |x - ref| / max(max |ref|, tiny).
fn rel_to<T: Scalar>(x: &[T], r: &[T]) -> f64 {
    let scale = r.iter().map(|v| (v.re().to_f64().powi(2) + v.im().to_f64().powi(2)).sqrt()).fold(1e-300, f64::max);
    let d = x
        .iter()
        .zip(r)
        .map(|(a, b)| {
            let (dr, di) = (a.re().to_f64() - b.re().to_f64(), a.im().to_f64() - b.im().to_f64());
            (dr * dr + di * di).sqrt()
        })
        .fold(0.0, |m: f64, v| if v.is_nan() { f64::INFINITY } else { m.max(v) });
    d / scale
}

fn letter(t: Trans) -> char {
    match t {
        Trans::No => 'n',
        Trans::Trans => 't',
        Trans::ConjTrans => 'c',
    }
}

/// Every point of precision T; rows appended.
fn run_precision<T: Scalar>(
    cx: &Ctx,
    o: &Opts,
    twin: Option<&Api>,
    rows: &mut Vec<GRow>,
    save: &mut dyn FnMut(&[GRow]),
    progress: &mut dyn FnMut(String),
) {
    let esz = std::mem::size_of::<T>();
    let (pts, skipped) = points(o, T::PREFIX, esz);
    if pts.is_empty() {
        return;
    }
    if skipped > 0 {
        progress(format!("{}gemm: {skipped} points skipped (A and B over 8 GiB)", T::PREFIX));
    }
    let t0 = Instant::now();
    let amax = pts.iter().map(|p| p.m * p.k).max().unwrap_or(0);
    let bmax = pts.iter().map(|p| p.k * p.n).max().unwrap_or(0);
    let cmax = pts.iter().map(|p| p.m * p.n).max().unwrap_or(0);
    let need = (amax + bmax + 4 * cmax) * esz;
    let (mut free, mut total) = (0usize, 0usize);
    unsafe { sys::cuMemGetInfo_v2(&mut free, &mut total) };
    if need > free {
        progress(format!(
            "{}gemm: skipped: needs {:.1} GiB of device memory, {:.1} GiB free",
            T::PREFIX,
            need as f64 / (1u64 << 30) as f64,
            free as f64 / (1u64 << 30) as f64
        ));
        return;
    }
    let alloc = |n: usize| DeviceBuffer::new(n * esz).map_err(|e| e.to_string());
    let bufs = (|| -> Result<_, String> {
        let (a, b) = (alloc(amax)?, alloc(bmax)?);
        let c = [alloc(cmax)?, alloc(cmax)?, alloc(cmax)?, alloc(cmax)?, alloc(cmax)?];
        let seed = 0x6E44_0000 + T::PREFIX as u64;
        fill::<T>(a.ptr, amax, seed)?;
        fill::<T>(b.ptr, bmax, seed.wrapping_mul(977).wrapping_add(0x1000_0000_0000))?;
        Ok((a, b, c))
    })();
    let (a, b, c) = match bufs {
        Ok(v) => v,
        Err(e) => {
            progress(format!("{}gemm: skipped: {e}", T::PREFIX));
            return;
        }
    };
    progress(format!("{}gemm: random operands ready in {:.1} s", T::PREFIX, t0.elapsed().as_secs_f64()));
    let ex = Exec { rt: cx.rt, stream: cx.stream };
    let mut group_start = Instant::now();
    let mut errs: Vec<String> = Vec::new();
    let mut mismatch: Vec<String> = Vec::new();
    let eps = if matches!(T::PREFIX, 's' | 'c') { f32::EPSILON as f64 } else { f64::EPSILON };
    for (i, p) in pts.iter().enumerate() {
        let d = |j: usize| Bufs { a: a.ptr, b: b.ptr, c: c[j].ptr };
        let mut sides: Vec<Option<Call>> = vec![
            Some(hyblas_gemm::<T>(ex, *p, d(0), Reduction::Deterministic)),
            Some(hyblas_gemm::<T>(ex, *p, d(1), Reduction::Atomic)),
            cx.cublas.and_then(|api| api_gemm::<T>(api, *p, d(2))),
            cx.entry.and_then(|api| api_gemm::<T>(api, *p, d(3))),
            twin.and_then(|api| api_gemm::<T>(api, *p, d(4))),
        ];
        if let Some(keep) = &o.gemm_sides {
            for (side, name) in sides.iter_mut().zip(SIDES) {
                if !keep.iter().any(|k| k == name) {
                    *side = None;
                }
            }
        }
        let meas = measure(&mut sides, &mut || Ok(()), cx.timer, cx.rt, cx.stream, &cx.cfg);
        for (label, mm) in SIDES.iter().zip(&meas) {
            if let Some(e) = &mm.err {
                let e = format!("{label}: {}", e.lines().next().unwrap_or(""));
                if !errs.contains(&e) {
                    errs.push(e);
                }
            }
        }
        // Every side computed C := A*B: compare with cuBLAS's.
        let count = p.m * p.n;
        let rel_diff = (|| -> Option<f64> {
            meas[2].us?;
            cx.rt.sync(cx.stream).ok()?;
            let r = download::<T>(c[2].ptr, count).ok()?;
            [0usize, 1, 3]
                .iter()
                .filter(|&&j| meas[j].us.is_some())
                .filter_map(|&j| download::<T>(c[j].ptr, count).ok().map(|x| rel_to(&x, &r)))
                .reduce(f64::max)
        })();
        if rel_diff.is_some_and(|r| r > 1e3 * eps) {
            mismatch.push(format!(
                "{}{}{} m={} n={} k={}: rel_diff {:.2e}",
                letter(p.ta),
                letter(p.tb),
                T::PREFIX,
                p.m,
                p.n,
                p.k,
                rel_diff.unwrap()
            ));
        }
        rows.push(GRow {
            prec: T::PREFIX,
            ta: letter(p.ta),
            tb: letter(p.tb),
            m: p.m,
            n: p.n,
            k: p.k,
            det_us: meas[0].us,
            atomic_us: meas[1].us,
            cublas_us: meas[2].us,
            entry_us: meas[3].us,
            twin_us: meas[4].us,
            rel_diff,
            reps: meas.iter().map(|m| m.reps).max().unwrap_or(0),
            det_atomic_p: paired_ratio(&meas[0], &meas[1]),
            entry_cublas_p: paired_ratio(&meas[3], &meas[2]),
            twin_cublas_p: paired_ratio(&meas[4], &meas[2]),
        });
        let last = i + 1 == pts.len() || (pts[i + 1].ta, pts[i + 1].tb) != (p.ta, p.tb);
        if last {
            save(rows);
            let n = rows.iter().filter(|r| r.group() == (T::PREFIX, letter(p.ta), letter(p.tb))).count();
            let mut line = format!(
                "{}gemm {}{}: {n} points in {:.1} s",
                T::PREFIX,
                letter(p.ta).to_ascii_uppercase(),
                letter(p.tb).to_ascii_uppercase(),
                group_start.elapsed().as_secs_f64()
            );
            for e in errs.drain(..) {
                let _ = write!(line, "\n    n/a: {e}");
            }
            for e in mismatch.drain(..).take(5) {
                let _ = write!(line, "\n    MISMATCH: {e}");
            }
            progress(line);
            group_start = Instant::now();
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Tables

fn geomean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| (v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp())
}

fn k_label(k: usize) -> String {
    if k.is_power_of_two() {
        size_label(k)
    } else {
        k.to_string()
    }
}

/// (precision, transa, transb) and its rows.
type Group<'a> = ((char, char, char), Vec<&'a GRow>);

/// Groups (precision, transa, transb) in first-seen order.
fn groups(rows: &[GRow]) -> Vec<Group<'_>> {
    let mut out: Vec<Group> = Vec::new();
    for r in rows {
        match out.iter_mut().find(|g| g.0 == r.group()) {
            Some(g) => g.1.push(r),
            None => out.push((r.group(), vec![r])),
        }
    }
    out
}

/// The smallest power-of-two k from which split-k (deterministic) stays at least as fast as
/// cuBLAS at every larger power of two; "never" / "all".
fn crossover(g: &[&GRow]) -> String {
    let mut pts: Vec<(usize, f64)> =
        g.iter().filter(|r| r.k.is_power_of_two()).filter_map(|r| Some((r.k, r.ratio()?))).collect();
    pts.sort_by_key(|p| p.0);
    if pts.is_empty() {
        return "-".into();
    }
    let mut from = None;
    for (i, &(k, _)) in pts.iter().enumerate() {
        if pts[i..].iter().all(|p| p.1 >= 1.0) {
            from = Some((i, k));
            break;
        }
    }
    match from {
        None => "never".into(),
        Some((0, _)) => "all".into(),
        Some((_, k)) => k_label(k),
    }
}

fn text_tables(rows: &[GRow]) -> String {
    let mut s = String::new();
    for ((p, ta, tb), g) in groups(rows) {
        let mut ks: Vec<usize> = g.iter().map(|r| r.k).collect();
        ks.sort_unstable();
        ks.dedup();
        let mut shapes: Vec<(usize, usize)> = Vec::new();
        for r in &g {
            if !shapes.contains(&(r.m, r.n)) {
                shapes.push((r.m, r.n));
            }
        }
        let (tu, bu) = (ta.to_ascii_uppercase(), tb.to_ascii_uppercase());
        if ks.len() == 1 && shapes.len() == 1 {
            continue; // the nine-combination subset: listed below
        }
        let _ = writeln!(s, "\n== {p}gemm ({}) op(A),op(B) = {tu},{bu}: cuBLAS time / hyblas time ==", prec_name(p));
        let _ = write!(s, "{:>9}", "m x n");
        for &k in &ks {
            let _ = write!(s, " {:>7}", k_label(k));
        }
        let _ = writeln!(s, " {:>7}", "x-over");
        for &(m, n) in &shapes {
            let _ = write!(s, "{:>9}", format!("{m}x{n}"));
            let sg: Vec<&GRow> = g.iter().copied().filter(|r| (r.m, r.n) == (m, n)).collect();
            for &k in &ks {
                let v = sg.iter().find(|r| r.k == k).and_then(|r| r.ratio());
                let _ = write!(s, " {:>7}", fmt_ratio(v));
            }
            let _ = writeln!(s, " {:>7}", crossover(&sg));
        }
    }
    // The op combinations at the subset points.
    let subset: Vec<&GRow> = rows
        .iter()
        .filter(|r| ALL_OPS_AT.iter().any(|&(p, mn, k)| r.prec == p && r.m == mn && r.n == mn && r.k == k))
        .collect();
    if !subset.is_empty() {
        let _ = writeln!(s, "\n== every op(A), op(B) ==");
        let _ = writeln!(
            s,
            "{:>5} {:>4} {:>4} {:>8} {:>10} {:>10} {:>10} {:>10} {:>8} {:>9}",
            "prec", "ops", "m=n", "k", "hyblas_us", "atomic_us", "cublas_us", "entry_us", "cub/hyb", "GB/s"
        );
        for r in subset {
            let _ = writeln!(
                s,
                "{:>5} {:>4} {:>4} {:>8} {:>10} {:>10} {:>10} {:>10} {:>8} {:>9}",
                r.prec,
                format!("{}{}", r.ta.to_ascii_uppercase(), r.tb.to_ascii_uppercase()),
                r.m,
                k_label(r.k),
                fmt_us(r.det_us),
                fmt_us(r.atomic_us),
                fmt_us(r.cublas_us),
                fmt_us(r.entry_us),
                fmt_ratio(r.ratio()),
                fmt_gbs(r.gbs(r.det_us))
            );
        }
    }
    s
}

fn summary(rows: &[GRow]) -> String {
    let mut s = String::from("\n== gemm_smallout summary ==\n");
    let region = |r: &&GRow| r.m <= SMALL_MN && r.n <= SMALL_MN && r.k >= LONG_K;
    let ratios = |rs: &[&GRow], side: fn(&GRow) -> Option<f64>| -> Vec<f64> {
        rs.iter().filter_map(|r| Some(r.cublas_us? / side(r)?)).collect()
    };
    let det = |r: &GRow| r.det_us;
    let atomic = |r: &GRow| r.atomic_us;
    let mut precs: Vec<char> = rows.iter().map(|r| r.prec).collect();
    precs.sort_by_key(|p| "sdcz".find(*p));
    precs.dedup();
    let _ = writeln!(
        s,
        "geometric mean of cuBLAS/hyblas over m, n <= {SMALL_MN} and k >= 2^16 (target >= 1.3), deterministic | atomic:"
    );
    let all: Vec<&GRow> = rows.iter().filter(region).collect();
    for p in &precs {
        let pr: Vec<&GRow> = all.iter().copied().filter(|r| r.prec == *p).collect();
        let (d, a) = (ratios(&pr, det), ratios(&pr, atomic));
        let _ = writeln!(s, "  {p}: {} | {} ({} points)", fmt_ratio(geomean(&d)), fmt_ratio(geomean(&a)), d.len());
    }
    let (d, a) = (ratios(&all, det), ratios(&all, atomic));
    let _ = writeln!(s, "  all: {} | {} ({} points)", fmt_ratio(geomean(&d)), fmt_ratio(geomean(&a)), d.len());

    // Deterministic against atomic (target: within 5%), the entry against cuBLAS (target: never
    // more than 3% slower) and, as its noise floor, the twin against cuBLAS: as ratios of the
    // medians and paired round by round.
    let worst = |what: &str, limit: f64, key: &dyn Fn(&GRow) -> Option<f64>, s: &mut String| {
        let v: Vec<(f64, &GRow)> = rows.iter().filter_map(|r| Some((key(r)?, r))).collect();
        if let Some(&(worst, w)) = v.iter().max_by(|a, b| a.0.total_cmp(&b.0)) {
            let x: Vec<f64> = v.iter().map(|p| p.0).collect();
            let _ = writeln!(
                s,
                "  {what}: geomean {}, worst {worst:.3} ({}gemm {}{} {}x{} k={}), over {limit:.2} at {}/{} points",
                fmt_ratio(geomean(&x)),
                w.prec,
                w.ta.to_ascii_uppercase(),
                w.tb.to_ascii_uppercase(),
                w.m,
                w.n,
                k_label(w.k),
                x.iter().filter(|&&r| r > limit).count(),
                x.len()
            );
        }
    };
    let _ = writeln!(s, "time ratios (medians' ratio | paired round by round):");
    worst("deterministic/atomic", 1.05, &|r| Some(r.det_us? / r.atomic_us?), &mut s);
    worst("deterministic/atomic, paired", 1.05, &|r| r.det_atomic_p, &mut s);
    let in_region = |r: &GRow| region(&r);
    worst(
        "deterministic/atomic in the region",
        1.05,
        &|r| Some(r.det_us? / r.atomic_us?).filter(|_| in_region(r)),
        &mut s,
    );
    worst("deterministic/atomic in the region, paired", 1.05, &|r| r.det_atomic_p.filter(|_| in_region(r)), &mut s);
    worst("entry/cuBLAS", 1.03, &|r| Some(r.entry_us? / r.cublas_us?), &mut s);
    worst("entry/cuBLAS, paired", 1.03, &|r| r.entry_cublas_p, &mut s);
    worst("cuBLAS twin/cuBLAS (noise floor)", 1.03, &|r| Some(r.twin_us? / r.cublas_us?), &mut s);
    worst("cuBLAS twin/cuBLAS, paired", 1.03, &|r| r.twin_cublas_p, &mut s);
    // The headline point.
    if let Some(r) =
        rows.iter().find(|r| r.prec == 'd' && r.ta == 'n' && r.tb == 'n' && r.m == 16 && r.n == 16 && r.k == 1 << 20)
    {
        let _ = writeln!(
            s,
            "DGEMM N,N m = n = 16, k = 2^20: hyblas {} us ({} GB/s, {:.0}% of {READ_GBS:.0}), atomic {} us, cuBLAS {} us ({} GB/s), entry {} us; target <= 70 us",
            fmt_us(r.det_us),
            fmt_gbs(r.gbs(r.det_us)),
            r.gbs(r.det_us).map_or(0.0, |g| 100.0 * g / READ_GBS),
            fmt_us(r.atomic_us),
            fmt_us(r.cublas_us),
            fmt_gbs(r.gbs(r.cublas_us)),
            fmt_us(r.entry_us),
        );
    }
    if let Some(w) = rows.iter().filter_map(|r| r.rel_diff).reduce(f64::max) {
        let _ = writeln!(s, "largest rel_diff of C against cuBLAS: {w:.2e}");
    }
    s
}

// ---------------------------------------------------------------------------------------------
// SVG: GB/s against k (log axis), one panel per m x n; colour per op pair; hyblas deterministic
// solid, atomic dotted, cuBLAS dashed.

fn ops_color(ta: char, tb: char) -> &'static str {
    match (ta, tb) {
        ('n', 'n') => "#1f77b4",
        ('t', 'n') => "#ff7f0e",
        _ => "#2ca02c",
    }
}

/// Which time of a row a line shows.
type Side = fn(&GRow) -> Option<f64>;

fn svg(rows: &[&GRow], title: &str) -> String {
    const PW: f64 = 300.0;
    const PH: f64 = 230.0;
    const COLS: usize = 4;
    // Only the op pairs swept over k (the nine-combination subset is a single point each).
    let mut pairs: Vec<(char, char)> = Vec::new();
    for r in rows {
        if !pairs.contains(&(r.ta, r.tb)) && rows.iter().filter(|x| (x.ta, x.tb) == (r.ta, r.tb)).count() > 1 {
            pairs.push((r.ta, r.tb));
        }
    }
    let mut panels: Vec<(usize, usize)> = Vec::new();
    for r in rows {
        if pairs.contains(&(r.ta, r.tb)) && !panels.contains(&(r.m, r.n)) {
            panels.push((r.m, r.n));
        }
    }
    let cols = COLS.min(panels.len()).max(1);
    let nrows = panels.len().div_ceil(cols).max(1);
    let (w, h) = (cols as f64 * PW + 20.0, nrows as f64 * PH + 75.0);
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(s, r#"<text x="10" y="20" font-size="14" font-weight="bold">{}</text>"#, esc(title));
    let mut lx = 10.0;
    for &(ta, tb) in &pairs {
        let c = ops_color(ta, tb);
        let _ = writeln!(
            s,
            r#"<line x1="{lx}" y1="40" x2="{}" y2="40" stroke="{c}" stroke-width="3"/><text x="{}" y="44">{}{}</text>"#,
            lx + 18.0,
            lx + 22.0,
            ta.to_ascii_uppercase(),
            tb.to_ascii_uppercase()
        );
        lx += 50.0;
    }
    for (label, dash) in [("hyblas (deterministic)", ""), ("hyblas (atomic)", "1,3"), ("cuBLAS", "5,3")] {
        let _ = writeln!(
            s,
            r##"<line x1="{lx}" y1="40" x2="{}" y2="40" stroke="#333" stroke-width="1.8" stroke-dasharray="{dash}"/><text x="{}" y="44">{label}</text>"##,
            lx + 22.0,
            lx + 26.0
        );
        lx += 40.0 + 6.0 * label.len() as f64;
    }
    let _ = writeln!(
        s,
        r##"<line x1="{lx}" y1="40" x2="{}" y2="40" stroke="#999" stroke-dasharray="2,3"/><text x="{}" y="44">read ceiling {READ_GBS:.0} GB/s</text>"##,
        lx + 22.0,
        lx + 26.0
    );
    for (pi, &(m, n)) in panels.iter().enumerate() {
        let ox = 10.0 + (pi % cols) as f64 * PW;
        let oy = 60.0 + (pi / cols) as f64 * PH;
        let (x0, x1, y0, y1) = (ox + 48.0, ox + PW - 12.0, oy + PH - 38.0, oy + 22.0);
        let pr: Vec<&GRow> =
            rows.iter().copied().filter(|r| (r.m, r.n) == (m, n) && pairs.contains(&(r.ta, r.tb))).collect();
        let (lo, hi) = pr.iter().fold((f64::MAX, f64::MIN), |(a, b), r| {
            let x = (r.k as f64).log2();
            (a.min(x), b.max(x))
        });
        let xs = |k: usize| {
            let x = (k as f64).log2();
            if hi > lo {
                x0 + (x - lo) / (hi - lo) * (x1 - x0)
            } else {
                (x0 + x1) / 2.0
            }
        };
        let top = pr
            .iter()
            .flat_map(|r| [r.gbs(r.det_us), r.gbs(r.atomic_us), r.gbs(r.cublas_us)])
            .flatten()
            .filter(|v| v.is_finite())
            .fold(READ_GBS, f64::max);
        let ys = gbs_panel(&mut s, (x0, x1, y0, y1), oy + 14.0, &format!("m = {m}, n = {n}"), top, &[READ_GBS]);
        let mut ks: Vec<usize> = pr.iter().map(|r| r.k).filter(|k| k.is_power_of_two()).collect();
        ks.sort_unstable();
        ks.dedup();
        for k in ks.into_iter().filter(|k| k.trailing_zeros() % 2 == 0) {
            let x = xs(k);
            svg_axes::x_tick(&mut s, x, y0, &size_label(k));
        }
        svg_axes::axis_titles(
            &mut s,
            ((x0 + x1) / 2.0, y0 + 29.0),
            (ox + 10.0, (y0 + y1) / 2.0),
            "k (log scale)",
            "GB/s",
        );
        for &(ta, tb) in &pairs {
            let c = ops_color(ta, tb);
            let mut pts: Vec<&GRow> = pr.iter().copied().filter(|r| (r.ta, r.tb) == (ta, tb)).collect();
            pts.sort_by_key(|r| r.k);
            let sides: [(Side, &str, f64); 3] =
                [(|r| r.det_us, "", 1.8), (|r| r.atomic_us, "1,3", 1.4), (|r| r.cublas_us, "5,3", 1.3)];
            for (side, dash, width) in sides {
                let mut seg: Vec<String> = Vec::new();
                let flush = |seg: &mut Vec<String>, s: &mut String| {
                    if seg.len() > 1 {
                        let _ = writeln!(
                            s,
                            r#"<polyline points="{}" fill="none" stroke="{c}" stroke-width="{width}" stroke-dasharray="{dash}"/>"#,
                            seg.join(" ")
                        );
                    } else if seg.len() == 1 {
                        let (x, y) = seg[0].split_once(',').unwrap();
                        let _ = writeln!(s, r#"<circle cx="{x}" cy="{y}" r="2" fill="{c}"/>"#);
                    }
                    seg.clear();
                };
                for r in &pts {
                    match r.gbs(side(r)) {
                        Some(g) => seg.push(format!("{:.1},{:.1}", xs(r.k), ys(g))),
                        None => flush(&mut seg, &mut s),
                    }
                }
                flush(&mut seg, &mut s);
            }
        }
    }
    s.push_str("</svg>\n");
    s
}

fn write_outputs(rows: &[GRow], out: &Path, stem: &str, device: &str) -> Result<Vec<PathBuf>, String> {
    std::fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let mut written = Vec::new();
    let p = out.join(format!("{stem}.csv"));
    std::fs::write(&p, csv(rows)).map_err(|e| format!("cannot write {}: {e}", p.display()))?;
    written.push(p);
    let mut precs: Vec<char> = rows.iter().map(|r| r.prec).collect();
    precs.sort_by_key(|p| "sdcz".find(*p));
    precs.dedup();
    for prec in precs {
        let pr: Vec<&GRow> = rows.iter().filter(|r| r.prec == prec).collect();
        let title = format!(
            "{device}: {prec}gemm, small output, GB/s (A and B read once) against k (hyblas split-k vs cuBLAS)"
        );
        let p = out.join(format!("{stem}-{prec}.svg"));
        std::fs::write(&p, svg(&pr, &title)).map_err(|e| format!("cannot write {}: {e}", p.display()))?;
        written.push(p);
    }
    Ok(written)
}

/// `--from-csv` of a gemm-smallout CSV: tables and plots again, no GPU work.
pub(super) fn from_csv(path: &Path, o: &Opts) -> ExitCode {
    let rows = match read_csv(path) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("gpubench: {e}");
            return ExitCode::from(2);
        }
    };
    print!("{}", text_tables(&rows));
    print!("{}", summary(&rows));
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "gemm-smallout".into());
    let device = stem.trim_end_matches("-gemm-smallout").to_string();
    // Re-render the plots only (the CSV is the input).
    let mut ok = true;
    let mut precs: Vec<char> = rows.iter().map(|r| r.prec).collect();
    precs.sort_by_key(|p| "sdcz".find(*p));
    precs.dedup();
    for prec in precs {
        let pr: Vec<&GRow> = rows.iter().filter(|r| r.prec == prec).collect();
        let p = o.out.join(format!("{stem}-{prec}.svg"));
        let title = format!("{device}: {prec}gemm, small output, GB/s against k (hyblas split-k vs cuBLAS)");
        match std::fs::create_dir_all(&o.out).and_then(|_| std::fs::write(&p, svg(&pr, &title))) {
            Ok(()) => println!("wrote {}", p.display()),
            Err(e) => {
                eprintln!("gpubench: cannot write {}: {e}", p.display());
                ok = false;
            }
        }
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// Whether a CSV is this group's (by its header).
pub(super) fn is_gemm_csv(path: &Path) -> bool {
    std::fs::read_to_string(path)
        .is_ok_and(|t| t.lines().next().is_some_and(|h| h.split(',').any(|c| c.trim() == "transa")))
}

/// The whole group: every selected precision, tables, CSV and plots.
pub(super) fn run(cx: &Ctx, o: &Opts) {
    let t0 = Instant::now();
    let slug = cx.rt.props.slug();
    let stem = format!("{slug}-gemm-smallout");
    let mut rows: Vec<GRow> = Vec::new();
    let out = o.out.clone();
    let mut save = |rows: &[GRow]| {
        let p = out.join(format!("{stem}.csv"));
        if let Err(e) = std::fs::create_dir_all(&out).and_then(|_| std::fs::write(&p, csv(rows))) {
            eprintln!("gpubench: cannot write {}: {e}", p.display());
        }
    };
    let mut progress = |line: String| eprintln!("[gemm] {:>5.0} s  {line}", t0.elapsed().as_secs_f64());
    let twin = if o.gemm_twin {
        match real_cublas(cx.stream) {
            Ok(api) => Some(api),
            Err(e) => {
                progress(format!("--gemm-twin: no second cuBLAS handle: {e}"));
                None
            }
        }
    } else {
        None
    };
    let twin = twin.as_ref();
    for &p in &o.prec {
        match p {
            's' => run_precision::<f32>(cx, o, twin, &mut rows, &mut save, &mut progress),
            'd' => run_precision::<f64>(cx, o, twin, &mut rows, &mut save, &mut progress),
            'c' => run_precision::<C32>(cx, o, twin, &mut rows, &mut save, &mut progress),
            _ => run_precision::<C64>(cx, o, twin, &mut rows, &mut save, &mut progress),
        }
    }
    print!("{}", text_tables(&rows));
    print!("{}", summary(&rows));
    println!("\ngemm_smallout: {} points in {:.0} s", rows.len(), t0.elapsed().as_secs_f64());
    match write_outputs(&rows, &o.out, &stem, &cx.rt.props.name) {
        Ok(ps) => ps.iter().for_each(|p| println!("wrote {}", p.display())),
        Err(e) => eprintln!("gpubench: {e}"),
    }
}
