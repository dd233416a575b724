//! blasbench: hyblas against OpenBLAS, routine by routine, on the same data.
//!
//! Both libraries are `dlopen`ed with `RTLD_LOCAL`, so each one's `dgemm_` is resolved from its
//! own handle and neither can interpose on the other. For every routine, size and thread count
//! both libraries get identical inputs; one call of each is compared (a wrong-but-fast result
//! is flagged), then timed blocks of repetitions alternate between the two and the medians are
//! reported. See bench/README.md for the options and the output files.

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::fmt::Write as _;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const OPENBLAS_DIR: &str = "/usr/lib/x86_64-linux-gnu/openblas-pthread";
const DEFAULT_ROUTINES: &[&str] = &["dgemm", "sgemm", "zgemm", "dtrsm", "dsyrk", "dgemv", "daxpy", "ddot"];
const DEFAULT_SIZES: &[usize] = &[64, 128, 256, 512, 1024, 2048, 4096];
const QUICK_SIZES: &[usize] = &[64, 256];
/// Largest default n for complex Level 3: a ZGEMM at n = 4096 is 550 GFLOP per call, half a
/// minute per case on two cores, which alone would blow the ten-minute budget of a full run.
const COMPLEX_L3_MAX: usize = 2048;

const HELP: &str = "\
blasbench: compare a BLAS (hyblas by default) with OpenBLAS on the same data

usage: blasbench [options]

  --quick            small subset for a CI smoke run (sizes 64,256, short blocks)
  --routines LIST    comma list, e.g. dgemm,zgemm:NC,dgemv:T,daxpy (default:
                     dgemm,sgemm,zgemm,dtrsm,dsyrk,dgemv,daxpy,ddot). Any of s/d/c/z +
                     gemm, trsm, trmm, syrk, gemv, axpy, and s/d + dot; `name:VARIANT`
                     picks one variant (gemm NN|NT|TN|TT|NC, gemv N|T)
  --sizes LIST       n values (default 64,128,256,512,1024,2048,4096, complex Level 3 up
                     to 2048); matrices are n x n, Level 1 vectors have n*n elements
  --threads LIST     thread counts (default 1,2)
  --out DIR          where the CSV, markdown and SVG go (default <repo>/bench/results)
  --lib PATH         the library measured as \"hyblas\" (default target/release/libhyblas.so
                     next to this program); e.g. the reference BLAS to test the harness
  --peer PATH,...    libraries of the peer (default the Debian OpenBLAS pthread build:
                     libopenblas.so.0 and libblas.so.3 in /usr/lib/x86_64-linux-gnu/openblas-pthread)
  --tag NAME         appended to the output file names (cpu-<cpu>-<NAME>.csv)
  --block-ms MS      length of one timed block (default 50, quick 10)
  --rounds N         alternating rounds per case (default 5, quick 3)
  --case-cap S       seconds one case may take before rounds are cut (default 8)
  --settle-ms MS     pause before a block that follows a multi-threaded OpenBLAS block, while
                     OpenBLAS's idle workers still busy-wait (default 120)
  --from-csv FILE    only render: read a CSV written earlier, print the tables, write .md/.svg
  -h, --help         this text

Exit status: 0, or 1 when a result differed between the libraries beyond tolerance, 2 on
usage or loading errors.
";

// ---------------------------------------------------------------------------------------------
// Options

struct Opts {
    quick: bool,
    routines: Vec<String>,
    sizes: Vec<usize>,
    /// No --sizes given: complex Level 3 stops at COMPLEX_L3_MAX.
    default_sizes: bool,
    threads: Vec<usize>,
    out: PathBuf,
    lib: Option<PathBuf>,
    peer: Vec<PathBuf>,
    tag: Option<String>,
    block: f64,
    rounds: usize,
    case_cap: f64,
    settle: f64,
    from_csv: Option<PathBuf>,
}

fn list<T: std::str::FromStr>(s: &str, what: &str) -> Result<Vec<T>, String> {
    s.split(',')
        .filter(|p| !p.trim().is_empty())
        .map(|p| p.trim().parse::<T>().map_err(|_| format!("bad {what} value `{p}`")))
        .collect()
}

fn parse_opts() -> Result<Opts, String> {
    let mut o = Opts {
        quick: false,
        routines: Vec::new(),
        sizes: Vec::new(),
        default_sizes: true,
        threads: vec![1, 2],
        out: default_out_dir(),
        lib: None,
        peer: vec![
            PathBuf::from(format!("{OPENBLAS_DIR}/libopenblas.so.0")),
            PathBuf::from(format!("{OPENBLAS_DIR}/libblas.so.3")),
        ],
        tag: None,
        block: f64::NAN,
        rounds: 0,
        case_cap: 8.0,
        settle: 0.120,
        from_csv: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let (key, inline) = match arg.split_once('=') {
            Some((k, v)) if k.starts_with("--") => (k.to_string(), Some(v.to_string())),
            _ => (arg.clone(), None),
        };
        let mut value = || inline.clone().or_else(|| args.next()).ok_or_else(|| format!("{key} needs a value"));
        match key.as_str() {
            "-h" | "--help" => {
                print!("{HELP}");
                std::process::exit(0);
            }
            "--quick" => o.quick = true,
            "--routines" => o.routines = list(&value()?, "routine")?,
            "--sizes" => o.sizes = list(&value()?, "size")?,
            "--threads" => o.threads = list(&value()?, "thread count")?,
            "--out" => o.out = PathBuf::from(value()?),
            "--lib" => o.lib = Some(PathBuf::from(value()?)),
            "--peer" => o.peer = list::<String>(&value()?, "path")?.into_iter().map(PathBuf::from).collect(),
            "--tag" => o.tag = Some(value()?),
            "--block-ms" => o.block = value()?.parse::<f64>().map_err(|_| "bad --block-ms")? / 1e3,
            "--rounds" => o.rounds = value()?.parse().map_err(|_| "bad --rounds")?,
            "--case-cap" => o.case_cap = value()?.parse().map_err(|_| "bad --case-cap")?,
            "--settle-ms" => o.settle = value()?.parse::<f64>().map_err(|_| "bad --settle-ms")? / 1e3,
            "--from-csv" => o.from_csv = Some(PathBuf::from(value()?)),
            _ => return Err(format!("unknown argument `{arg}` (see --help)")),
        }
    }
    if o.routines.is_empty() {
        o.routines = DEFAULT_ROUTINES.iter().map(|s| s.to_string()).collect();
    }
    o.default_sizes = o.sizes.is_empty();
    if o.sizes.is_empty() {
        o.sizes = if o.quick { QUICK_SIZES } else { DEFAULT_SIZES }.to_vec();
    }
    if o.block.is_nan() {
        o.block = if o.quick { 0.010 } else { 0.050 };
    }
    if o.rounds == 0 {
        o.rounds = if o.quick { 3 } else { 5 };
    }
    if o.quick && o.tag.is_none() {
        o.tag = Some("quick".into());
    }
    if o.sizes.iter().any(|&n| n == 0 || n > 1 << 15) || o.threads.contains(&0) {
        return Err("sizes must be in 1..=32768 and thread counts positive".into());
    }
    Ok(o)
}

/// `<repo>/bench/results` when this program runs from its build tree, else `./bench/results`.
fn default_out_dir() -> PathBuf {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    if repo.join("bench").is_dir() {
        repo.join("bench/results")
    } else {
        PathBuf::from("bench/results")
    }
}

// ---------------------------------------------------------------------------------------------
// Libraries

struct Lib {
    label: &'static str,
    desc: String,
    /// Searched in order for symbols (a handle's search also covers its dependencies).
    handles: Vec<*mut c_void>,
    set_threads: Option<unsafe extern "C" fn(c_int)>,
    get_threads: Option<unsafe extern "C" fn() -> c_int>,
    /// Its idle worker threads busy-wait for a while after a multi-threaded call (OpenBLAS's
    /// do, ~0.1 s): the other library must not be timed while they spin.
    spins: bool,
}

fn dlerror_text() -> String {
    // SAFETY: dlerror returns NULL or a NUL-terminated string owned by libc.
    unsafe {
        let e = libc::dlerror();
        if e.is_null() {
            "unknown error".into()
        } else {
            CStr::from_ptr(e).to_string_lossy().into_owned()
        }
    }
}

impl Lib {
    fn open(label: &'static str, paths: &[PathBuf], spins: bool) -> Result<Lib, String> {
        let mut handles = Vec::new();
        for p in paths {
            let c = CString::new(p.as_os_str().as_encoded_bytes()).map_err(|_| format!("bad path {}", p.display()))?;
            // SAFETY: plain dlopen of a path; RTLD_LOCAL keeps its symbols out of the global scope.
            let h = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
            if h.is_null() {
                return Err(format!("cannot load {}: {}", p.display(), dlerror_text()));
            }
            handles.push(h);
        }
        // The BLAS symbols come from the last path named (libblas.so.3 for OpenBLAS), the
        // thread control from whichever has it.
        handles.reverse();
        let desc = paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(" + ");
        let mut lib = Lib { label, desc, handles, set_threads: None, get_threads: None, spins };
        lib.set_threads = lib.sym("hyblas_set_num_threads").or_else(|| lib.sym("openblas_set_num_threads"));
        lib.get_threads = lib.sym("hyblas_get_num_threads").or_else(|| lib.sym("openblas_get_num_threads"));
        Ok(lib)
    }

    /// A function pointer named `name`, if the library has it.
    fn sym<F: Copy>(&self, name: &str) -> Option<F> {
        assert_eq!(std::mem::size_of::<F>(), std::mem::size_of::<*mut c_void>());
        let c = CString::new(name).ok()?;
        for &h in &self.handles {
            // SAFETY: dlsym on a live handle.
            let p = unsafe { libc::dlsym(h, c.as_ptr()) };
            if !p.is_null() {
                // SAFETY: the caller names the function type matching the symbol.
                return Some(unsafe { std::mem::transmute_copy::<*mut c_void, F>(&p) });
            }
        }
        None
    }

    /// Set the thread count; returns what the library reports afterwards (None: no control).
    fn threads(&self, n: usize) -> Option<usize> {
        let set = self.set_threads?;
        // SAFETY: the thread-control entry points take/return a plain int.
        unsafe {
            set(n as c_int);
            Some(self.get_threads.map(|g| g() as usize).unwrap_or(n))
        }
    }
}

fn hyblas_path(opts: &Opts) -> Result<PathBuf, String> {
    if let Some(p) = &opts.lib {
        return Ok(p.clone());
    }
    let mut candidates = Vec::new();
    if let Ok(exe) = std::env::current_exe() {
        if let Some(dir) = exe.parent() {
            candidates.push(dir.join("libhyblas.so"));
        }
    }
    candidates.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("target/release/libhyblas.so"));
    candidates
        .iter()
        .find(|p| p.is_file())
        .cloned()
        .ok_or_else(|| "libhyblas.so not found next to blasbench: run `cargo build --release` or pass --lib".into())
}

// ---------------------------------------------------------------------------------------------
// Element types

#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
struct Cplx<R> {
    re: R,
    im: R,
}

trait Elem: Copy + Default + 'static {
    fn new(re: f64, im: f64) -> Self;
    fn parts(self) -> (f64, f64);
}

impl Elem for f32 {
    fn new(re: f64, _: f64) -> Self {
        re as f32
    }
    fn parts(self) -> (f64, f64) {
        (self as f64, 0.0)
    }
}
impl Elem for f64 {
    fn new(re: f64, _: f64) -> Self {
        re
    }
    fn parts(self) -> (f64, f64) {
        (self, 0.0)
    }
}
impl Elem for Cplx<f32> {
    fn new(re: f64, im: f64) -> Self {
        Cplx { re: re as f32, im: im as f32 }
    }
    fn parts(self) -> (f64, f64) {
        (self.re as f64, self.im as f64)
    }
}
impl Elem for Cplx<f64> {
    fn new(re: f64, im: f64) -> Self {
        Cplx { re, im }
    }
    fn parts(self) -> (f64, f64) {
        (self.re, self.im)
    }
}

/// xorshift64*: deterministic data, the same for both libraries.
struct Rng(u64);
impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn unit(&mut self) -> f64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    }
    fn vec<T: Elem>(&mut self, n: usize) -> Vec<T> {
        (0..n).map(|_| T::new(self.unit(), self.unit())).collect()
    }
}

/// max |a - b| / max |b| over all components (normwise, so tiny entries don't dominate).
fn rel_diff<T: Elem>(a: &[T], b: &[T]) -> f64 {
    let (mut num, mut den) = (0.0f64, 0.0f64);
    for (&x, &y) in a.iter().zip(b) {
        let ((xr, xi), (yr, yi)) = (x.parts(), y.parts());
        let d = (xr - yr).abs().max((xi - yi).abs());
        // NaN anywhere must show up as a difference, not vanish in max().
        num = if d.is_nan() || num.is_nan() { f64::NAN } else { num.max(d) };
        den = den.max(yr.abs()).max(yi.abs());
    }
    if num == 0.0 {
        0.0
    } else {
        num / den.max(f64::MIN_POSITIVE)
    }
}

// ---------------------------------------------------------------------------------------------
// Problems: one BLAS call with its data, for both libraries (side 0 = hyblas, 1 = peer).

type Ch = *const c_char;
type I = *const c_int;
type GemmFn<T> =
    unsafe extern "C" fn(Ch, Ch, I, I, I, *const T, *const T, I, *const T, I, *const T, *mut T, I, usize, usize);
type TrxmFn<T> =
    unsafe extern "C" fn(Ch, Ch, Ch, Ch, I, I, *const T, *const T, I, *mut T, I, usize, usize, usize, usize);
type SyrkFn<T> = unsafe extern "C" fn(Ch, Ch, I, I, *const T, *const T, I, *const T, *mut T, I, usize, usize);
type GemvFn<T> = unsafe extern "C" fn(Ch, I, I, *const T, *const T, I, *const T, I, *const T, *mut T, I, usize);
type AxpyFn<T> = unsafe extern "C" fn(I, *const T, *const T, I, *mut T, I);
type DotFn<T> = unsafe extern "C" fn(I, *const T, I, *const T, I) -> T;

trait Problem {
    /// One call on side `s`'s output.
    fn call(&mut self, s: usize);
    /// Reset side `s`'s output before a call (only for routines whose output feeds back).
    fn restore(&mut self, _s: usize) {}
    fn needs_restore(&self) -> bool {
        false
    }
    /// Normwise relative difference of the two sides' outputs.
    fn diff(&self) -> f64;
}

struct Gemm<T> {
    f: [GemmFn<T>; 2],
    ta: c_char,
    tb: c_char,
    n: c_int,
    a: Vec<T>,
    b: Vec<T>,
    c: [Vec<T>; 2],
}
impl<T: Elem> Problem for Gemm<T> {
    fn call(&mut self, s: usize) {
        let (one, zero, n) = (T::new(1.0, 0.0), T::new(0.0, 0.0), self.n);
        let (a, b, c) = (self.a.as_ptr(), self.b.as_ptr(), self.c[s].as_mut_ptr());
        // SAFETY: n x n column-major buffers, lda = ldb = ldc = n.
        unsafe { (self.f[s])(&self.ta, &self.tb, &n, &n, &n, &one, a, &n, b, &n, &zero, c, &n, 1, 1) }
    }
    fn diff(&self) -> f64 {
        rel_diff(&self.c[0], &self.c[1])
    }
}

/// TRSM or TRMM, side L, lower, no transpose, non-unit: B := alpha*op(A)^{-1 or 1}*B. B feeds
/// back into the next call, so it is restored (outside the timing) before each one.
struct Trxm<T> {
    f: [TrxmFn<T>; 2],
    n: c_int,
    a: Vec<T>,
    b0: Vec<T>,
    b: [Vec<T>; 2],
}
impl<T: Elem> Problem for Trxm<T> {
    fn call(&mut self, s: usize) {
        let (one, n) = (T::new(1.0, 0.0), self.n);
        let (l, no, nu) = (b'L' as c_char, b'N' as c_char, b'N' as c_char);
        // SAFETY: n x n buffers, lda = ldb = n.
        unsafe {
            (self.f[s])(&l, &l, &no, &nu, &n, &n, &one, self.a.as_ptr(), &n, self.b[s].as_mut_ptr(), &n, 1, 1, 1, 1)
        }
    }
    fn restore(&mut self, s: usize) {
        self.b[s].copy_from_slice(&self.b0);
    }
    fn needs_restore(&self) -> bool {
        true
    }
    fn diff(&self) -> f64 {
        rel_diff(&self.b[0], &self.b[1])
    }
}

/// SYRK, lower, no transpose, k = n: C := A*A^T (beta = 0; the upper triangle must stay as is).
struct Syrk<T> {
    f: [SyrkFn<T>; 2],
    n: c_int,
    a: Vec<T>,
    c: [Vec<T>; 2],
}
impl<T: Elem> Problem for Syrk<T> {
    fn call(&mut self, s: usize) {
        let (one, zero, n) = (T::new(1.0, 0.0), T::new(0.0, 0.0), self.n);
        let (l, no) = (b'L' as c_char, b'N' as c_char);
        // SAFETY: n x n buffers, lda = ldc = n.
        unsafe { (self.f[s])(&l, &no, &n, &n, &one, self.a.as_ptr(), &n, &zero, self.c[s].as_mut_ptr(), &n, 1, 1) }
    }
    fn diff(&self) -> f64 {
        rel_diff(&self.c[0], &self.c[1])
    }
}

struct Gemv<T> {
    f: [GemvFn<T>; 2],
    trans: c_char,
    n: c_int,
    a: Vec<T>,
    x: Vec<T>,
    y: [Vec<T>; 2],
}
impl<T: Elem> Problem for Gemv<T> {
    fn call(&mut self, s: usize) {
        let (one, zero, n, inc) = (T::new(1.0, 0.0), T::new(0.0, 0.0), self.n, 1 as c_int);
        let (a, x, y) = (self.a.as_ptr(), self.x.as_ptr(), self.y[s].as_mut_ptr());
        // SAFETY: n x n matrix, vectors of n, unit strides.
        unsafe { (self.f[s])(&self.trans, &n, &n, &one, a, &n, x, &inc, &zero, y, &inc, 1) }
    }
    fn diff(&self) -> f64 {
        rel_diff(&self.y[0], &self.y[1])
    }
}

/// AXPY with a small alpha, so y drifts by little over many repetitions.
struct Axpy<T> {
    f: [AxpyFn<T>; 2],
    n: c_int,
    x: Vec<T>,
    y0: Vec<T>,
    y: [Vec<T>; 2],
}
impl<T: Elem> Problem for Axpy<T> {
    fn call(&mut self, s: usize) {
        let (alpha, inc) = (T::new(1e-3, -1e-3), 1 as c_int);
        // SAFETY: vectors of n, unit strides.
        unsafe { (self.f[s])(&self.n, &alpha, self.x.as_ptr(), &inc, self.y[s].as_mut_ptr(), &inc) }
    }
    fn restore(&mut self, s: usize) {
        self.y[s].copy_from_slice(&self.y0);
    }
    fn diff(&self) -> f64 {
        rel_diff(&self.y[0], &self.y[1])
    }
}

struct Dot<T> {
    f: [DotFn<T>; 2],
    n: c_int,
    x: Vec<T>,
    y: Vec<T>,
    r: [T; 2],
}
impl<T: Elem> Problem for Dot<T> {
    fn call(&mut self, s: usize) {
        let inc = 1 as c_int;
        // SAFETY: vectors of n, unit strides.
        self.r[s] = black_box(unsafe { (self.f[s])(&self.n, self.x.as_ptr(), &inc, self.y.as_ptr(), &inc) });
    }
    fn diff(&self) -> f64 {
        // Relative to the sum of |x_i*y_i| scale: a dot product of random signs can cancel to
        // near zero, where a plain relative difference says nothing about correctness.
        let scale: f64 = self.x.iter().zip(&self.y).map(|(a, b)| a.parts().0.abs() * b.parts().0.abs()).sum();
        let d = (self.r[0].parts().0 - self.r[1].parts().0).abs();
        if d == 0.0 {
            0.0
        } else {
            d / scale.max(f64::MIN_POSITIVE)
        }
    }
}

// ---------------------------------------------------------------------------------------------
// What is measured

#[derive(Clone, Debug)]
struct Spec {
    prec: char,
    base: &'static str,
    variant: String,
}

impl Spec {
    fn name(&self) -> String {
        format!("{}{}", self.prec, self.base)
    }
    fn label(&self) -> String {
        if self.variant == "-" {
            self.name()
        } else {
            format!("{} {}", self.name(), self.variant)
        }
    }
    fn symbol(&self) -> String {
        format!("{}_", self.name())
    }
    fn level1(&self) -> bool {
        matches!(self.base, "axpy" | "dot")
    }
}

const BASES: &[&str] = &["gemm", "trsm", "trmm", "syrk", "gemv", "axpy", "dot"];

fn parse_specs(names: &[String]) -> Result<Vec<Spec>, String> {
    let mut out = Vec::new();
    for name in names {
        let (routine, variant) = match name.split_once(':') {
            Some((r, v)) => (r.to_ascii_lowercase(), Some(v.to_ascii_uppercase())),
            None => (name.to_ascii_lowercase(), None),
        };
        let bad = || format!("unknown routine `{name}` (see --help)");
        let mut chars = routine.chars();
        let prec = chars.next().filter(|c| "sdcz".contains(*c)).ok_or_else(bad)?;
        let base = BASES.iter().copied().find(|b| *b == chars.as_str()).ok_or_else(bad)?;
        let complex = matches!(prec, 'c' | 'z');
        if base == "dot" && complex {
            return Err(format!("`{name}`: only sdot and ddot are benchmarked"));
        }
        let (defaults, allowed): (Vec<&str>, &[&str]) = match base {
            "gemm" if complex => (vec!["NN", "NC"], &["NN", "NT", "TN", "TT", "NC", "CN", "CC"]),
            "gemm" => (vec!["NN"], &["NN", "NT", "TN", "TT"]),
            "trsm" | "trmm" => (vec!["LLNN"], &["LLNN"]),
            "syrk" => (vec!["LN"], &["LN"]),
            "gemv" => (vec!["N", "T"], &["N", "T", "C"]),
            _ => (vec!["-"], &["-"]),
        };
        let variants = match variant {
            Some(v) if allowed.contains(&v.as_str()) => vec![v],
            Some(v) => return Err(format!("`{name}`: variant {v} not one of {}", allowed.join(", "))),
            None => defaults.into_iter().map(String::from).collect(),
        };
        for variant in variants {
            out.push(Spec { prec, base, variant });
        }
    }
    Ok(out)
}

/// Flops of one call (real flops: a complex multiply-add counts 8).
fn flops(base: &str, prec: char, n: usize) -> f64 {
    let n = n as f64;
    let scale = if matches!(prec, 'c' | 'z') { 4.0 } else { 1.0 };
    scale
        * match base {
            "gemm" => 2.0 * n * n * n,
            "trsm" | "trmm" => n * n * n,
            "syrk" => n * (n + 1.0) * n,
            "gemv" => 2.0 * n * n,
            _ => 2.0 * n, // axpy, dot (n = elements)
        }
}

fn elem_size(prec: char) -> f64 {
    match prec {
        's' => 4.0,
        'd' | 'c' => 8.0,
        _ => 16.0,
    }
}

/// Bytes moved per call for the memory-bound routines (None for Level 3).
fn bytes(base: &str, prec: char, n: usize) -> Option<f64> {
    let (n, e) = (n as f64, elem_size(prec));
    match base {
        "gemv" => Some(e * (n * n + 2.0 * n)),
        "axpy" => Some(e * 3.0 * n),
        "dot" => Some(e * 2.0 * n),
        _ => None,
    }
}

/// The BLAS `n` of a case: Level 1 vectors have size^2 elements.
fn blas_n(spec: &Spec, size: usize) -> usize {
    if spec.level1() {
        size * size
    } else {
        size
    }
}

/// Largest acceptable relative difference between two correct results.
fn tolerance(base: &str, prec: char, n: usize) -> f64 {
    let eps = if matches!(prec, 's' | 'c') { f32::EPSILON as f64 } else { f64::EPSILON };
    let inner = match base {
        "axpy" => 1,
        _ => n,
    };
    8.0 * eps * inner.max(16) as f64
}

/// Speed target from the issue: (minimum ratio, applies at this n?).
fn target(base: &str, prec: char, n: usize, l2: usize) -> (f64, bool) {
    match base {
        "gemm" => (1.0, n >= 512),
        "trsm" | "trmm" | "syrk" => (0.85, n >= 512),
        _ => (0.9, bytes(base, prec, n).unwrap_or(0.0) > l2 as f64),
    }
}

fn build<T: Elem>(spec: &Spec, n: usize, libs: &[Lib; 2]) -> Result<Box<dyn Problem>, String> {
    fn both<F: Copy>(libs: &[Lib; 2], sym: &str) -> Result<[F; 2], String> {
        let get =
            |l: &Lib| l.sym::<F>(sym).ok_or_else(|| format!("symbol {sym} not found in {} ({})", l.label, l.desc));
        Ok([get(&libs[0])?, get(&libs[1])?])
    }
    let sym = spec.symbol();
    let mut rng = Rng::new(0x5EED ^ n as u64);
    let nn = n * n;
    let ci = n as c_int;
    Ok(match spec.base {
        "gemm" => {
            let v = spec.variant.as_bytes();
            let c = rng.vec::<T>(nn);
            Box::new(Gemm::<T> {
                f: both(libs, &sym)?,
                ta: v[0] as c_char,
                tb: v[1] as c_char,
                n: ci,
                a: rng.vec(nn),
                b: rng.vec(nn),
                c: [c.clone(), c],
            })
        }
        "trsm" | "trmm" => {
            // Lower triangle: diagonal 2..3, off-diagonal entries O(1/n), so A is well
            // conditioned at every n. The upper triangle holds data that must not be read.
            let mut a = rng.vec::<T>(nn);
            for j in 0..n {
                for i in j..n {
                    let (re, im) = a[i + j * n].parts();
                    a[i + j * n] =
                        if i == j { T::new(2.5 + 0.5 * re, 0.5 * im) } else { T::new(re / n as f64, im / n as f64) };
                }
            }
            let b0 = rng.vec::<T>(nn);
            Box::new(Trxm::<T> { f: both(libs, &sym)?, n: ci, a, b: [b0.clone(), b0.clone()], b0 })
        }
        "syrk" => {
            let c = rng.vec::<T>(nn);
            Box::new(Syrk::<T> { f: both(libs, &sym)?, n: ci, a: rng.vec(nn), c: [c.clone(), c] })
        }
        "gemv" => {
            let y = rng.vec::<T>(n);
            Box::new(Gemv::<T> {
                f: both(libs, &sym)?,
                trans: spec.variant.as_bytes()[0] as c_char,
                n: ci,
                a: rng.vec(nn),
                x: rng.vec(n),
                y: [y.clone(), y],
            })
        }
        "axpy" => {
            let y0 = rng.vec::<T>(n);
            Box::new(Axpy::<T> { f: both(libs, &sym)?, n: ci, x: rng.vec(n), y: [y0.clone(), y0.clone()], y0 })
        }
        "dot" => Box::new(Dot::<T> { f: both(libs, &sym)?, n: ci, x: rng.vec(n), y: rng.vec(n), r: [T::default(); 2] }),
        other => return Err(format!("no benchmark for {other}")),
    })
}

fn build_any(spec: &Spec, n: usize, libs: &[Lib; 2]) -> Result<Box<dyn Problem>, String> {
    match spec.prec {
        's' => build::<f32>(spec, n, libs),
        'd' => build::<f64>(spec, n, libs),
        'c' => build::<Cplx<f32>>(spec, n, libs),
        _ => build::<Cplx<f64>>(spec, n, libs),
    }
}

// ---------------------------------------------------------------------------------------------
// Timing

/// Tracks when the last multi-threaded call of a spinning library ended.
struct Settle {
    pause: f64,
    spinner_end: Option<Instant>,
}

impl Settle {
    /// Before timing side `s`: wait out the other library's busy-waiting workers.
    fn before(&self, s: usize, libs: &[Lib; 2]) {
        if let Some(end) = self.spinner_end {
            if !libs[s].spins {
                let left = self.pause - end.elapsed().as_secs_f64();
                if left > 0.0 {
                    std::thread::sleep(Duration::from_secs_f64(left));
                }
            }
        }
    }
    fn after(&mut self, s: usize, libs: &[Lib; 2], threads: usize) {
        if libs[s].spins && threads > 1 {
            self.spinner_end = Some(Instant::now());
        }
    }
}

/// Seconds per call over `reps` calls on side `s` (restores, when needed, are not timed).
fn time_block(p: &mut dyn Problem, s: usize, reps: usize) -> f64 {
    if p.needs_restore() {
        let mut total = 0.0;
        for _ in 0..reps {
            p.restore(s);
            let t = Instant::now();
            p.call(s);
            total += t.elapsed().as_secs_f64();
        }
        total / reps as f64
    } else {
        let t = Instant::now();
        for _ in 0..reps {
            p.call(s);
        }
        t.elapsed().as_secs_f64() / reps as f64
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        0.5 * (v[m - 1] + v[m])
    }
}

#[derive(Clone, Debug)]
struct Row {
    base: String,
    prec: char,
    variant: String,
    n: usize,
    threads: usize,
    /// GFLOP/s of each side.
    h: f64,
    o: f64,
    ratio: f64,
    diff: f64,
}

impl Row {
    fn label(&self) -> String {
        if self.variant == "-" {
            format!("{}{}", self.prec, self.base)
        } else {
            format!("{}{} {}", self.prec, self.base, self.variant)
        }
    }
    fn ok(&self) -> bool {
        self.diff <= tolerance(&self.base, self.prec, self.n)
    }
    /// Rate in the unit shown to people: GB/s for Level 1/2, GFLOP/s for Level 3.
    fn shown(&self, gflops: f64) -> f64 {
        match bytes(&self.base, self.prec, self.n) {
            Some(b) => gflops * b / flops(&self.base, self.prec, self.n),
            None => gflops,
        }
    }
    fn unit(&self) -> &'static str {
        if bytes(&self.base, self.prec, self.n).is_some() {
            "GB/s"
        } else {
            "GFLOP/s"
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn run_case(
    p: &mut dyn Problem,
    spec: &Spec,
    n: usize,
    threads: usize,
    libs: &[Lib; 2],
    opts: &Opts,
    settle: &mut Settle,
) -> Row {
    let fl = flops(spec.base, spec.prec, n);
    let started = Instant::now();
    // Check call, which is also the first warm-up: same inputs, same starting outputs.
    let mut first = [0.0f64; 2];
    for (s, secs) in first.iter_mut().enumerate() {
        p.restore(s);
        settle.before(s, libs);
        let t = Instant::now();
        p.call(s);
        *secs = t.elapsed().as_secs_f64();
        settle.after(s, libs, threads);
    }
    let diff = p.diff();

    // Seconds per call of (hyblas, peer), one pair per round.
    let mut samples: Vec<[f64; 2]> = Vec::new();
    let mut est = first[0].max(first[1]);
    if est < 0.25 {
        // Warm-up (caches, pools, clock ramp) and a better per-call estimate.
        let reps = ((opts.block * 0.5 / est.max(1e-9)).ceil() as usize).clamp(1, 1 << 20);
        let mut t = [0.0f64; 2];
        for (s, ts) in t.iter_mut().enumerate() {
            settle.before(s, libs);
            *ts = time_block(p, s, reps);
            settle.after(s, libs, threads);
        }
        est = t[0].max(t[1]);
    } else if est >= 0.5 {
        // Half a second and more per call: start-up effects are lost in the noise, so the
        // check calls count as the first round instead of being thrown away.
        samples.push(first);
    }
    let reps = ((opts.block / est.max(1e-9)).ceil() as usize).clamp(1, 1 << 24);
    let block = est * reps as f64;
    // Rounds that fit in what is left of the case's time cap, at least two in total (one
    // with --quick) and at most --rounds.
    let seeded = samples.len();
    let left = (opts.case_cap - started.elapsed().as_secs_f64()).max(0.0);
    let least = opts.rounds.min(if opts.quick { 1 } else { 2 }).saturating_sub(seeded);
    let rounds = ((left / (2.0 * block)) as usize).min(opts.rounds - seeded).max(least);

    for r in 0..rounds {
        // Alternate which library goes first, so neither always follows the other.
        let order = if (r + seeded).is_multiple_of(2) { [0, 1] } else { [1, 0] };
        let mut secs = [0.0f64; 2];
        for s in order {
            settle.before(s, libs);
            std::thread::sleep(Duration::from_millis(1));
            secs[s] = time_block(p, s, reps);
            settle.after(s, libs, threads);
        }
        samples.push(secs);
    }
    let mut rh: Vec<f64> = samples.iter().map(|t| fl / t[0] / 1e9).collect();
    let mut ro: Vec<f64> = samples.iter().map(|t| fl / t[1] / 1e9).collect();
    let mut rr: Vec<f64> = samples.iter().map(|t| t[1] / t[0]).collect();
    Row {
        base: spec.base.to_string(),
        prec: spec.prec,
        variant: spec.variant.clone(),
        n,
        threads,
        h: median(&mut rh),
        o: median(&mut ro),
        // Median of per-round ratios: each pair ran back to back, so load from other processes
        // on the machine cancels better than in a ratio of medians.
        ratio: median(&mut rr),
        diff,
    }
}

// ---------------------------------------------------------------------------------------------
// Machine facts

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown cpu".into())
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname").map(|s| s.trim().to_string()).unwrap_or_else(|_| "host".into())
}

fn cores() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
}

/// Per-core L2 size in bytes (1 MiB when sysfs doesn't say).
fn l2_bytes() -> usize {
    let parse = |s: &str| {
        let s = s.trim();
        let (num, mul) = match s.strip_suffix('K') {
            Some(v) => (v, 1024),
            None => match s.strip_suffix('M') {
                Some(v) => (v, 1024 * 1024),
                None => (s, 1),
            },
        };
        num.parse::<usize>().ok().map(|v| v * mul)
    };
    for idx in 0..8 {
        let dir = format!("/sys/devices/system/cpu/cpu0/cache/index{idx}");
        let level = std::fs::read_to_string(format!("{dir}/level")).unwrap_or_default();
        if level.trim() == "2" {
            if let Some(b) = std::fs::read_to_string(format!("{dir}/size")).ok().as_deref().and_then(parse) {
                return b;
            }
        }
    }
    1 << 20
}

fn slug(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    let out = out.trim_end_matches('-').to_string();
    // Strip the marketing words that make file names long without telling CPUs apart.
    let out = out.replace("-processor", "").replace("-with-radeon-graphics", "").replace("-cpu", "");
    if out.is_empty() {
        "unknown".into()
    } else {
        out
    }
}

// ---------------------------------------------------------------------------------------------
// Output

const CSV_HEADER: &str = "routine,precision,variant,n,threads,hyblas_gflops,openblas_gflops,ratio,max_rel_diff";

fn csv(rows: &[Row]) -> String {
    let mut s = String::from(CSV_HEADER);
    s.push('\n');
    for r in rows {
        let _ = writeln!(
            s,
            "{},{},{},{},{},{:.4},{:.4},{:.4},{:.3e}",
            r.base, r.prec, r.variant, r.n, r.threads, r.h, r.o, r.ratio, r.diff
        );
    }
    s
}

fn read_csv(path: &Path) -> Result<Vec<Row>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut rows = Vec::new();
    for (i, line) in text.lines().enumerate().skip(1) {
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        let bad = || format!("{}:{}: malformed line", path.display(), i + 1);
        if f.len() < 9 {
            return Err(bad());
        }
        let num = |k: usize| f[k].parse::<f64>().map_err(|_| bad());
        rows.push(Row {
            base: f[0].to_string(),
            prec: f[1].chars().next().ok_or_else(bad)?,
            variant: f[2].to_string(),
            n: f[3].parse().map_err(|_| bad())?,
            threads: f[4].parse().map_err(|_| bad())?,
            h: num(5)?,
            o: num(6)?,
            ratio: num(7)?,
            diff: num(8)?,
        });
    }
    Ok(rows)
}

fn fmt_rate(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// One line per case, aligned, for the terminal.
fn text_table(rows: &[Row], l2: usize) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<12} {:>9} {:>3} {:>9} {:>9} {:<7} {:>6}  {:>8}  notes",
        "routine", "n", "thr", "hyblas", "OpenBLAS", "unit", "ratio", "diff"
    );
    for r in rows {
        let (goal, applies) = target(&r.base, r.prec, r.n, l2);
        let mut notes = Vec::new();
        if !r.ok() {
            notes.push("WRONG RESULT".to_string());
        }
        if applies && r.ratio < goal {
            notes.push(format!("below target {goal:.2}"));
        }
        let _ = writeln!(
            s,
            "{:<12} {:>9} {:>3} {:>9} {:>9} {:<7} {:>6.2}  {:>8.1e}  {}",
            r.label(),
            r.n,
            r.threads,
            fmt_rate(r.shown(r.h)),
            fmt_rate(r.shown(r.o)),
            r.unit(),
            r.ratio,
            r.diff,
            notes.join(", ")
        );
    }
    s
}

/// Compact markdown for the README: one row per routine and size, one column group per
/// thread count.
fn markdown(rows: &[Row], l2: usize, meta: &str) -> String {
    let mut threads: Vec<usize> = rows.iter().map(|r| r.threads).collect();
    threads.sort_unstable();
    threads.dedup();
    let mut keys: Vec<(String, usize)> = Vec::new();
    for r in rows {
        let k = (r.label(), r.n);
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    let mut s = String::new();
    let _ = writeln!(s, "{meta}\n");
    let mut head = String::from("| routine | n | unit |");
    let mut rule = String::from("|---|---:|---|");
    for t in &threads {
        let th = if *t == 1 { "1 thread".to_string() } else { format!("{t} threads") };
        let _ = write!(head, " hyblas ({th}) | OpenBLAS | ratio |");
        rule.push_str("---:|---:|---:|");
    }
    let _ = writeln!(s, "{head}\n{rule}");
    let (mut miss, mut wrong) = (false, false);
    for (label, n) in keys {
        let mut line = String::new();
        for t in &threads {
            match rows.iter().find(|r| r.label() == label && r.n == n && r.threads == *t) {
                Some(r) => {
                    if line.is_empty() {
                        let _ = write!(line, "| {label} | {n} | {} |", r.unit());
                    }
                    let (goal, applies) = target(&r.base, r.prec, r.n, l2);
                    let mut mark = String::new();
                    if applies && r.ratio < goal {
                        mark.push_str(" \\*");
                        miss = true;
                    }
                    if !r.ok() {
                        mark.push_str(" **wrong**");
                        wrong = true;
                    }
                    let _ = write!(
                        line,
                        " {} | {} | {:.2}{mark} |",
                        fmt_rate(r.shown(r.h)),
                        fmt_rate(r.shown(r.o)),
                        r.ratio
                    );
                }
                None => line.push_str(" | | |"),
            }
        }
        let _ = writeln!(s, "{line}");
    }
    s.push_str(
        "\nRatio = hyblas / OpenBLAS (median of alternating rounds). Level 1/2 in GB/s, Level 3 in GFLOP/s; \
         Level 1 n is the vector length.\n",
    );
    if miss {
        s.push_str(
            "\\* below the target (GEMM 1.0 for n >= 512; TRSM/TRMM/SYRK 0.85 for n >= 512; Level 1/2 0.9 past L2).\n",
        );
    }
    if wrong {
        s.push_str("**wrong**: results differ from OpenBLAS beyond rounding.\n");
    }
    s
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// Ratio against n, one panel per routine variant, one line per thread count, the target from
/// the first size it applies to.
fn svg(rows: &[Row], title: &str, l2: usize) -> String {
    const PW: f64 = 330.0;
    const PH: f64 = 220.0;
    const COLS: usize = 3;
    const COLORS: &[&str] = &["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b"];
    let mut panels: Vec<String> = Vec::new();
    for r in rows {
        if !panels.contains(&r.label()) {
            panels.push(r.label());
        }
    }
    let mut threads: Vec<usize> = rows.iter().map(|r| r.threads).collect();
    threads.sort_unstable();
    threads.dedup();
    let nrows = panels.len().div_ceil(COLS).max(1);
    let (w, h) = (COLS as f64 * PW + 20.0, nrows as f64 * PH + 70.0);
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(s, r#"<text x="10" y="20" font-size="14" font-weight="bold">{}</text>"#, esc(title));
    // Legend.
    let mut lx = 10.0;
    for (i, t) in threads.iter().enumerate() {
        let c = COLORS[i % COLORS.len()];
        let _ = writeln!(
            s,
            r#"<line x1="{lx}" y1="38" x2="{}" y2="38" stroke="{c}" stroke-width="2"/><text x="{}" y="42">{t} thread{}</text>"#,
            lx + 20.0,
            lx + 25.0,
            if *t == 1 { "" } else { "s" }
        );
        lx += 90.0;
    }
    let _ = writeln!(
        s,
        r##"<line x1="{lx}" y1="38" x2="{}" y2="38" stroke="#2a2" stroke-dasharray="2,3"/><text x="{}" y="42">target</text><text x="{}" y="42" fill="#d00">x = results differ</text>"##,
        lx + 20.0,
        lx + 25.0,
        lx + 90.0
    );
    for (pi, label) in panels.iter().enumerate() {
        let ox = 10.0 + (pi % COLS) as f64 * PW;
        let oy = 55.0 + (pi / COLS) as f64 * PH;
        let (x0, x1, y0, y1) = (ox + 40.0, ox + PW - 15.0, oy + PH - 35.0, oy + 22.0);
        let pr: Vec<&Row> = rows.iter().filter(|r| &r.label() == label).collect();
        let mut ns: Vec<usize> = pr.iter().map(|r| r.n).collect();
        ns.sort_unstable();
        ns.dedup();
        let (lmin, lmax) = ((ns[0] as f64).log2(), (ns[ns.len() - 1] as f64).log2());
        let xs = |n: usize| {
            if lmax > lmin {
                x0 + ((n as f64).log2() - lmin) / (lmax - lmin) * (x1 - x0)
            } else {
                (x0 + x1) / 2.0
            }
        };
        let top = pr.iter().map(|r| r.ratio).filter(|v| v.is_finite()).fold(1.25f64, f64::max).min(4.0);
        let ymax = (top * 1.1 / 0.25).ceil() * 0.25;
        let ys = |v: f64| y0 - (v.clamp(0.0, ymax) / ymax) * (y0 - y1);
        let _ = writeln!(s, r#"<text x="{}" y="{}" font-weight="bold">{}</text>"#, x0, oy + 14.0, esc(label));
        let _ = writeln!(
            s,
            r##"<rect x="{x0}" y="{y1}" width="{}" height="{}" fill="none" stroke="#888"/>"##,
            x1 - x0,
            y0 - y1
        );
        // Horizontal grid every 0.25 (0.5 when tall), labelled.
        let step = if ymax > 2.0 { 0.5 } else { 0.25 };
        let mut v = 0.0;
        while v <= ymax + 1e-9 {
            let y = ys(v);
            let (stroke, dash) = if (v - 1.0).abs() < 1e-9 { ("#444", "") } else { ("#ddd", "") };
            let _ = writeln!(
                s,
                r#"<line x1="{x0}" y1="{y:.1}" x2="{x1}" y2="{y:.1}" stroke="{stroke}"{dash}/><text x="{}" y="{:.1}" text-anchor="end">{v:.2}</text>"#,
                x0 - 3.0,
                y + 4.0
            );
            v += step;
        }
        for &n in &ns {
            let x = xs(n);
            let lbl = if n >= 1 << 20 {
                format!("{}M", n >> 20)
            } else if n >= 1 << 10 && n % 1024 == 0 {
                format!("{}K", n >> 10)
            } else {
                n.to_string()
            };
            let _ = writeln!(s, r#"<text x="{x:.1}" y="{}" text-anchor="middle">{lbl}</text>"#, y0 + 13.0);
        }
        // The target line starts at the first size it applies to.
        let (goal, _) = target(&pr[0].base, pr[0].prec, usize::MAX >> 8, 0);
        if let Some(&from) = ns.iter().find(|&&n| target(&pr[0].base, pr[0].prec, n, l2).1) {
            let _ = writeln!(
                s,
                r##"<line x1="{:.1}" y1="{y:.1}" x2="{x1}" y2="{y:.1}" stroke="#2a2" stroke-width="1.5" stroke-dasharray="3,3"/>"##,
                xs(from),
                y = ys(goal)
            );
        }
        let xlabel = if pr[0].base == "axpy" || pr[0].base == "dot" { "n (elements)" } else { "n" };
        let _ = writeln!(
            s,
            r##"<text x="{}" y="{}" text-anchor="middle" fill="#555">{xlabel}</text>"##,
            (x0 + x1) / 2.0,
            y0 + 26.0
        );
        for (ti, t) in threads.iter().enumerate() {
            let c = COLORS[ti % COLORS.len()];
            let mut pts: Vec<&Row> = pr.iter().copied().filter(|r| r.threads == *t).collect();
            pts.sort_by_key(|r| r.n);
            if pts.is_empty() {
                continue;
            }
            let path: Vec<String> = pts.iter().map(|r| format!("{:.1},{:.1}", xs(r.n), ys(r.ratio))).collect();
            let _ = writeln!(s, r#"<polyline points="{}" fill="none" stroke="{c}" stroke-width="2"/>"#, path.join(" "));
            for r in pts {
                let (x, y) = (xs(r.n), ys(r.ratio));
                if r.ok() {
                    let _ = writeln!(s, r#"<circle cx="{x:.1}" cy="{y:.1}" r="3" fill="{c}"/>"#);
                } else {
                    let _ = writeln!(
                        s,
                        r##"<path d="M{:.1},{:.1}l8,8m0,-8l-8,8" stroke="#d00" stroke-width="2"/>"##,
                        x - 4.0,
                        y - 4.0
                    );
                }
            }
        }
    }
    s.push_str("</svg>\n");
    s
}

fn write_outputs(rows: &[Row], out: &Path, stem: &str, meta: &str, title: &str, l2: usize) -> Result<(), String> {
    std::fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let write = |ext: &str, text: String| {
        let p = out.join(format!("{stem}.{ext}"));
        std::fs::write(&p, text).map_err(|e| format!("cannot write {}: {e}", p.display()))
    };
    write("csv", csv(rows))?;
    write("md", markdown(rows, l2, meta))?;
    write("svg", svg(rows, title, l2))?;
    Ok(())
}

// ---------------------------------------------------------------------------------------------

fn main() {
    let opts = match parse_opts() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("blasbench: {e}");
            std::process::exit(2);
        }
    };
    match run(&opts) {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("blasbench: {e}");
            std::process::exit(2);
        }
    }
}

fn run(opts: &Opts) -> Result<i32, String> {
    let l2 = l2_bytes();
    if let Some(path) = &opts.from_csv {
        let rows = read_csv(path)?;
        let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "results".into());
        let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let meta = format!("From {}.", path.display());
        print!("{}\n{}", text_table(&rows, l2), markdown(&rows, l2, &meta));
        write_outputs(&rows, dir, &stem, &meta, &format!("hyblas / OpenBLAS: {stem}"), l2)?;
        eprintln!("wrote {}/{stem}.md and .svg", dir.display());
        return Ok(if rows.iter().all(Row::ok) { 0 } else { 1 });
    }

    let specs = parse_specs(&opts.routines)?;
    let hpath = hyblas_path(opts)?;
    let libs = [Lib::open("hyblas", &[hpath], false)?, Lib::open("OpenBLAS", &opts.peer, true)?];
    let model = cpu_model();
    let cpu = if model == "unknown cpu" { hostname() } else { model.clone() };
    let mut stem = format!("cpu-{}", slug(&cpu));
    if let Some(tag) = &opts.tag {
        stem = format!("{stem}-{}", slug(tag));
    }
    eprintln!("blasbench: {model}, {} cores, L2 {} KiB per core, host {}", cores(), l2 >> 10, hostname());
    for lib in &libs {
        eprintln!(
            "  {:<8} {}{}",
            lib.label,
            lib.desc,
            if lib.set_threads.is_none() { "  (no thread control: runs at its own default)" } else { "" }
        );
    }

    if std::env::var("HYBLAS_TRACE").is_ok_and(|v| !matches!(v.as_str(), "" | "0" | "off")) {
        eprintln!("  note: HYBLAS_TRACE is set, so hyblas's timings include writing a trace line per call");
    }

    // Resolve every routine up front so a missing one is reported once, before any timing.
    let mut runnable = Vec::new();
    let mut skipped = Vec::new();
    for spec in specs {
        let sym = spec.symbol();
        match libs.iter().find(|l| l.sym::<unsafe extern "C" fn()>(&sym).is_none()) {
            Some(l) => {
                let msg = format!("skipping {}: symbol {sym} not found in {} ({})", spec.label(), l.label, l.desc);
                eprintln!("  {msg}");
                skipped.push(msg);
            }
            None => runnable.push(spec),
        }
    }
    let sizes_of = |spec: &Spec| -> Vec<usize> {
        let capped = opts.default_sizes && matches!(spec.prec, 'c' | 'z') && !spec.level1() && spec.base != "gemv";
        opts.sizes.iter().copied().filter(|&n| !capped || n <= COMPLEX_L3_MAX).collect()
    };
    let total: usize = runnable.iter().map(|s| sizes_of(s).len() * opts.threads.len()).sum();
    let meta = format!(
        "{model}, {} cores; hyblas side: {}; OpenBLAS side: {}; blocks {} ms, {} rounds",
        cores(),
        libs[0].desc,
        libs[1].desc,
        (opts.block * 1e3).round(),
        opts.rounds
    );
    let title = format!("hyblas / OpenBLAS — {model}, {} cores", cores());
    let mut rows: Vec<Row> = Vec::new();
    let mut settle = Settle { pause: opts.settle, spinner_end: None };
    let started = Instant::now();
    let mut done = 0;
    let mut warned_threads = false;
    for spec in &runnable {
        for size in sizes_of(spec) {
            let n = blas_n(spec, size);
            let mut p = build_any(spec, n, &libs)?;
            for &t in &opts.threads {
                done += 1;
                for lib in &libs {
                    if let Some(got) = lib.threads(t) {
                        if got != t && !warned_threads {
                            eprintln!("  note: {} runs {got} threads when asked for {t}", lib.label);
                            warned_threads = true;
                        }
                    }
                }
                let t0 = Instant::now();
                let row = run_case(p.as_mut(), spec, n, t, &libs, opts, &mut settle);
                eprintln!(
                    "[{done:>3}/{total}] {:<10} n={:<8} t={t}: hyblas {:>7} {u}, OpenBLAS {:>7} {u}, ratio {:.2}, diff {:.1e}{} ({:.1}s)",
                    spec.label(),
                    n,
                    fmt_rate(row.shown(row.h)),
                    fmt_rate(row.shown(row.o)),
                    row.ratio,
                    row.diff,
                    if row.ok() { "" } else { "  WRONG RESULT" },
                    t0.elapsed().as_secs_f64(),
                    u = row.unit()
                );
                rows.push(row);
                // Rewritten after every case so an interrupted run keeps what it measured.
                write_outputs(&rows, &opts.out, &stem, &meta, &title, l2)?;
            }
        }
    }
    println!("{}", text_table(&rows, l2));
    println!("{}", markdown(&rows, l2, &meta));
    for msg in &skipped {
        println!("{msg}");
    }
    eprintln!(
        "blasbench: {} cases in {:.0} s; wrote {}/{stem}.csv, .md, .svg",
        rows.len(),
        started.elapsed().as_secs_f64(),
        opts.out.display()
    );
    let wrong = rows.iter().filter(|r| !r.ok()).count();
    if wrong > 0 {
        eprintln!("blasbench: {wrong} case(s) gave results that differ from OpenBLAS beyond tolerance");
        return Ok(1);
    }
    Ok(0)
}
