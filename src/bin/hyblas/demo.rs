//! `hyblas demo`: a real workload through the exported C ABI, traced and checked, and the same
//! calls on the BLAS the machine already has, side by side.
//!
//! The comparison library is the `libblas.so.3` the dynamic loader gives a program that asks for
//! it (Debian's alternatives point it at OpenBLAS or the reference BLAS), or the one named by
//! `HYBLAS_DEMO_PEER` (a path or soname; `none` skips it). It is `dlopen`ed with `RTLD_LOCAL`,
//! so its `dgemm_` is its own and not hyblas's. On a GPU the device-memory step also runs the
//! real cuBLAS on the same device buffers.

use hyblas::config;
use hyblas::cpu::{simd, threads};
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::io::{Read, Seek, SeekFrom};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
struct Z {
    re: f64,
    im: f64,
}

type Ch = *const c_char;
type I = *const c_int;

extern "C" {
    fn dgemm_(
        ta: Ch,
        tb: Ch,
        m: I,
        n: I,
        k: I,
        al: *const f64,
        a: *const f64,
        lda: I,
        b: *const f64,
        ldb: I,
        be: *const f64,
        c: *mut f64,
        ldc: I,
        lta: usize,
        ltb: usize,
    );
    fn dgemv_(
        t: Ch,
        m: I,
        n: I,
        al: *const f64,
        a: *const f64,
        lda: I,
        x: *const f64,
        incx: I,
        be: *const f64,
        y: *mut f64,
        incy: I,
        lt: usize,
    );
    fn zgemv_(
        t: Ch,
        m: I,
        n: I,
        al: *const Z,
        a: *const Z,
        lda: I,
        x: *const Z,
        incx: I,
        be: *const Z,
        y: *mut Z,
        incy: I,
        lt: usize,
    );
    fn daxpy_(n: I, al: *const f64, x: *const f64, incx: I, y: *mut f64, incy: I);
    fn strmv_(u: Ch, t: Ch, d: Ch, n: I, a: *const f32, lda: I, x: *mut f32, incx: I, lu: usize, lt: usize, ld: usize);
    fn ddot_(n: I, x: *const f64, incx: I, y: *const f64, incy: I) -> f64;
    fn cblas_zgemm(
        layout: c_int,
        ta: c_int,
        tb: c_int,
        m: c_int,
        n: c_int,
        k: c_int,
        al: *const c_void,
        a: *const c_void,
        lda: c_int,
        b: *const c_void,
        ldb: c_int,
        be: *const c_void,
        c: *mut c_void,
        ldc: c_int,
    );
}

const CBLAS_COL_MAJOR: c_int = 102;
const CBLAS_NO_TRANS: c_int = 111;
const CBLAS_CONJ_TRANS: c_int = 113;

/// Safe wrappers over the column-major calls the demo needs (square/contiguous operands).
fn dgemv(trans: u8, n: usize, a: &[f64], x: &[f64], y: &mut [f64]) {
    assert!(a.len() >= n * n && x.len() >= n && y.len() >= n);
    let (ni, one, zero, inc) = (n as c_int, 1.0f64, 0.0f64, 1 as c_int);
    // SAFETY: sizes asserted above; lda = n.
    unsafe {
        dgemv_(&(trans as c_char), &ni, &ni, &one, a.as_ptr(), &ni, x.as_ptr(), &inc, &zero, y.as_mut_ptr(), &inc, 1)
    }
}

fn zgemv(trans: u8, n: usize, a: &[Z], x: &[Z], y: &mut [Z]) {
    assert!(a.len() >= n * n && x.len() >= n && y.len() >= n);
    let (ni, one, zero, inc) = (n as c_int, Z { re: 1.0, im: 0.0 }, Z::default(), 1 as c_int);
    // SAFETY: sizes asserted above; lda = n.
    unsafe {
        zgemv_(&(trans as c_char), &ni, &ni, &one, a.as_ptr(), &ni, x.as_ptr(), &inc, &zero, y.as_mut_ptr(), &inc, 1)
    }
}

struct Rng(u64);
impl Rng {
    fn unit(&mut self) -> f64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    }
    fn vec(&mut self, n: usize) -> Vec<f64> {
        (0..n).map(|_| self.unit()).collect()
    }
    fn zvec(&mut self, n: usize) -> Vec<Z> {
        (0..n).map(|_| Z { re: self.unit(), im: self.unit() }).collect()
    }
}

/// Reads the trace lines the library writes while the demo runs, so they can be shown on
/// stderr and the engine/threads each call took can go into the table.
struct TraceTap {
    file: Option<(PathBuf, bool)>,
    pos: u64,
}

impl TraceTap {
    /// Must run before the first BLAS call (the library reads HYBLAS_TRACE once).
    fn start() -> TraceTap {
        match std::env::var("HYBLAS_TRACE") {
            // The user chose where traces go: leave it, and read it back only if it is a file.
            Ok(v) if !v.is_empty() => {
                let file = (!matches!(v.as_str(), "stderr" | "1" | "0" | "off")).then(|| (PathBuf::from(v), false));
                let pos = file.as_ref().and_then(|(p, _)| std::fs::metadata(p).ok()).map_or(0, |m| m.len());
                TraceTap { file, pos }
            }
            _ => {
                let path = std::env::temp_dir().join(format!("hyblas-demo-{}.trace", std::process::id()));
                let _ = std::fs::remove_file(&path);
                std::env::set_var("HYBLAS_TRACE", &path);
                TraceTap { file: Some((path, true)), pos: 0 }
            }
        }
    }

    /// New trace lines since the last call; echoed to stderr when the demo set up the trace.
    fn drain(&mut self) -> Vec<String> {
        let Some((path, ours)) = &self.file else { return Vec::new() };
        let mut text = String::new();
        if let Ok(mut f) = std::fs::File::open(path) {
            if f.seek(SeekFrom::Start(self.pos)).is_ok() && f.read_to_string(&mut text).is_ok() {
                self.pos += text.len() as u64;
            }
        }
        let lines: Vec<String> = text.lines().map(String::from).collect();
        if *ours {
            for l in &lines {
                eprintln!("  {l}");
            }
        }
        lines
    }

    /// "engine, N threads" of the call just made, from its trace line; when the lines can't be
    /// read back (tracing off, or going to stderr), what the pool says, marked as such.
    fn path(&mut self, routine: &str) -> String {
        let lines = self.drain();
        let field = |l: &str, key: &str| l.split_whitespace().find_map(|w| w.strip_prefix(key)).map(String::from);
        // (An offloaded call also writes a line of its offload decision, without `engine=`.)
        let traced = lines
            .iter()
            .rev()
            .find(|l| l.split_whitespace().nth(1) == Some(routine) && l.contains(" engine="))
            .and_then(|l| match field(l, "engine=")?.as_str() {
                "gpu" => Some("gpu (device memory)".to_string()),
                "gpu-offload" => Some("gpu (host memory, offloaded)".to_string()),
                e => Some(format!("{e}, {} threads", field(l, "threads=")?)),
            });
        traced.unwrap_or_else(|| {
            let why = match &self.file {
                Some(_) => "no trace line",
                None if config::get().trace.is_some() => "see trace",
                None => "untraced",
            };
            format!("cpu, {} threads ({why})", threads::nthreads())
        })
    }

    fn finish(self) {
        if let Some((path, true)) = self.file {
            let _ = std::fs::remove_file(path);
        }
    }
}

// ---- The comparison library ----

type DgemmFn = unsafe extern "C" fn(
    Ch,
    Ch,
    I,
    I,
    I,
    *const f64,
    *const f64,
    I,
    *const f64,
    I,
    *const f64,
    *mut f64,
    I,
    usize,
    usize,
);
type ZgemmFn =
    unsafe extern "C" fn(Ch, Ch, I, I, I, *const Z, *const Z, I, *const Z, I, *const Z, *mut Z, I, usize, usize);
type DgemvFn = unsafe extern "C" fn(Ch, I, I, *const f64, *const f64, I, *const f64, I, *const f64, *mut f64, I, usize);
type DaxpyFn = unsafe extern "C" fn(I, *const f64, *const f64, I, *mut f64, I);
type DdotFn = unsafe extern "C" fn(I, *const f64, I, *const f64, I) -> f64;

/// The BLAS the demo compares with: its file and the entry points the steps call.
struct Peer {
    file: String,
    dgemm: DgemmFn,
    zgemm: ZgemmFn,
    dgemv: DgemvFn,
    daxpy: DaxpyFn,
    ddot: DdotFn,
    /// Its call that sets its thread count, where it has one.
    set_threads: Option<unsafe extern "C" fn(c_int)>,
}

fn dlerror_text() -> String {
    // SAFETY: dlerror returns null or a NUL-terminated string owned by libc.
    let e = unsafe { libc::dlerror() };
    if e.is_null() {
        "unknown error".into()
    } else {
        // SAFETY: non-null, NUL-terminated (above).
        unsafe { CStr::from_ptr(e) }.to_string_lossy().into_owned()
    }
}

impl Peer {
    /// The library named by `HYBLAS_DEMO_PEER` (default `libblas.so.3`, as the loader finds
    /// it), set to `threads` threads where it says how (OpenBLAS, BLIS, MKL), and tried once on
    /// the demo's sizes in a child process first ([`Peer::survives`]). None, saying why on
    /// stderr, when it is switched off, missing, lacks a routine, is hyblas itself (installed
    /// as the system's BLAS), or crashed in the trial.
    fn load(threads: usize, sizes: &Sizes) -> Option<Peer> {
        let want = std::env::var("HYBLAS_DEMO_PEER").unwrap_or_else(|_| "libblas.so.3".into());
        if want.is_empty() || want == "none" {
            eprintln!("demo: no comparison (HYBLAS_DEMO_PEER={want})");
            return None;
        }
        let name = CString::new(want.clone()).ok()?;
        // SAFETY: dlopen of a NUL-terminated name; the handle is never closed (the demo's
        // process is short and the functions are used to its end).
        let h = unsafe { libc::dlopen(name.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if h.is_null() {
            eprintln!(
                "demo: no BLAS to compare with ({want}: {}); install one (Debian: libopenblas0-pthread, which \
                 scripts/test-all.sh's set-up installs) or name one in HYBLAS_DEMO_PEER",
                dlerror_text()
            );
            return None;
        }
        let sym = |s: &str| {
            let c = CString::new(s).ok()?;
            // SAFETY: dlsym on a live handle with a NUL-terminated name.
            let p = unsafe { libc::dlsym(h, c.as_ptr()) };
            (!p.is_null()).then_some(p)
        };
        if sym("hyblas_version").is_some() {
            eprintln!("demo: {want} is hyblas itself (installed as the system BLAS): no comparison");
            return None;
        }
        let (Some(dgemm), Some(zgemm), Some(dgemv), Some(daxpy), Some(ddot)) =
            (sym("dgemm_"), sym("zgemm_"), sym("dgemv_"), sym("daxpy_"), sym("ddot_"))
        else {
            eprintln!("demo: {want} lacks one of dgemm_ zgemm_ dgemv_ daxpy_ ddot_: no comparison");
            return None;
        };
        // The file the symbols came from (libblas.so.3 is usually a chain of links).
        let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
        // SAFETY: dladdr on an address inside a loaded object; info is plain data.
        let file = if unsafe { libc::dladdr(dgemm, &mut info) } != 0 && !info.dli_fname.is_null() {
            // SAFETY: dli_fname is a NUL-terminated path owned by the loader.
            let f = unsafe { CStr::from_ptr(info.dli_fname) }.to_string_lossy().into_owned();
            std::fs::canonicalize(&f).map_or(f, |p| p.display().to_string())
        } else {
            want
        };
        // The same thread count as hyblas's: a library left to itself may take every core of
        // a large host (past a container's share of it). Set after the trial's fork (below), so
        // the library starts no threads before it.
        let set_threads = ["openblas_set_num_threads", "bli_thread_set_num_threads", "MKL_Set_Num_Threads"]
            .into_iter()
            .find_map(sym)
            // SAFETY: each of these takes one int (BLIS: a dim_t, in the same register).
            .map(|f| unsafe { std::mem::transmute::<*mut c_void, unsafe extern "C" fn(c_int)>(f) });
        // SAFETY: the Fortran BLAS prototypes of these routines (hidden string lengths last).
        let peer = unsafe {
            Peer {
                file,
                dgemm: std::mem::transmute::<*mut c_void, DgemmFn>(dgemm),
                zgemm: std::mem::transmute::<*mut c_void, ZgemmFn>(zgemm),
                dgemv: std::mem::transmute::<*mut c_void, DgemvFn>(dgemv),
                daxpy: std::mem::transmute::<*mut c_void, DaxpyFn>(daxpy),
                ddot: std::mem::transmute::<*mut c_void, DdotFn>(ddot),
                set_threads,
            }
        };
        match peer.survives(threads, sizes) {
            Ok(()) => {
                peer.threads(threads);
                Some(peer)
            }
            Err(why) => {
                eprintln!("demo: {} {why} in a trial of the demo's calls: no comparison", peer.file);
                None
            }
        }
    }

    fn threads(&self, n: usize) {
        if let Some(f) = self.set_threads {
            // SAFETY: the library's own setter (see `load`).
            unsafe { f(n as c_int) };
        }
    }

    /// Each routine once at the demo's sizes, on `threads` threads, in a child process given
    /// [`TRIAL_SECS`]: a library that crashes or hangs (on the H200 host the system's OpenBLAS
    /// died in its first DGEMM n = 2048, with no message) costs the comparison, not the demo.
    fn survives(&self, threads: usize, z: &Sizes) -> Result<(), String> {
        // SAFETY: fork before the demo's first BLAS call; the child only calls the library and
        // leaves with _exit.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            self.threads(threads);
            self.trial(z);
            // SAFETY: ends the child without running the parent's exit handlers.
            unsafe { libc::_exit(0) }
        }
        if pid < 0 {
            return Err("could not be tried (fork failed)".into());
        }
        let start = Instant::now();
        let mut status = 0;
        loop {
            // SAFETY: polls the child just forked.
            match unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) } {
                0 if start.elapsed().as_secs_f64() < TRIAL_SECS => {
                    std::thread::sleep(std::time::Duration::from_millis(20))
                }
                0 => {
                    // SAFETY: our own child.
                    unsafe {
                        libc::kill(pid, libc::SIGKILL);
                        libc::waitpid(pid, &mut status, 0);
                    }
                    return Err(format!("did not finish in {TRIAL_SECS} s"));
                }
                r if r == pid => break,
                _ => return Err("could not be tried (waitpid failed)".into()),
            }
        }
        if libc::WIFSIGNALED(status) {
            Err(format!("crashed (signal {})", libc::WTERMSIG(status)))
        } else if libc::WEXITSTATUS(status) != 0 {
            Err(format!("exited with status {}", libc::WEXITSTATUS(status)))
        } else {
            Ok(())
        }
    }

    /// The trial's calls, on zeros (each output its own buffer of its own size).
    fn trial(&self, z: &Sizes) {
        let (g, c, v, l) = (z.dgemm, z.zgemm, z.dgemv, z.level1);
        let (gd, zz, vd, ld) = (vec![0.0f64; g * g], vec![Z::default(); c * c], vec![0.0f64; v * v], vec![0.0f64; l]);
        let (mut out, mut zout) = (vec![0.0f64; g * g], vec![Z::default(); c * c]);
        let (mut vout, mut lout) = (vec![0.0f64; v], vec![0.0f64; l]);
        let (gi, ci, vi, li, inc) = (g as c_int, c as c_int, v as c_int, l as c_int, 1 as c_int);
        let (one, zone, no) = (1.0f64, Z { re: 1.0, im: 0.0 }, b'N' as c_char);
        // SAFETY: square operands of the sizes given, unit strides.
        unsafe {
            (self.dgemm)(
                &no,
                &no,
                &gi,
                &gi,
                &gi,
                &one,
                gd.as_ptr(),
                &gi,
                gd.as_ptr(),
                &gi,
                &one,
                out.as_mut_ptr(),
                &gi,
                1,
                1,
            );
            (self.zgemm)(
                &no,
                &no,
                &ci,
                &ci,
                &ci,
                &zone,
                zz.as_ptr(),
                &ci,
                zz.as_ptr(),
                &ci,
                &zone,
                zout.as_mut_ptr(),
                &ci,
                1,
                1,
            );
            (self.dgemv)(&no, &vi, &vi, &one, vd.as_ptr(), &vi, vd.as_ptr(), &inc, &one, vout.as_mut_ptr(), &inc, 1);
            (self.daxpy)(&li, &one, ld.as_ptr(), &inc, lout.as_mut_ptr(), &inc);
            (self.ddot)(&li, ld.as_ptr(), &inc, ld.as_ptr(), &inc);
        }
    }
}

/// Seconds the comparison library's trial may take (its calls take well under one on any
/// machine the demo is meant for).
const TRIAL_SECS: f64 = 30.0;

/// The demo's sizes (`--quick` divides them by 4).
struct Sizes {
    dgemm: usize,
    zgemm: usize,
    dgemv: usize,
    level1: usize,
    trmv: usize,
}

impl Sizes {
    fn new(div: usize) -> Sizes {
        Sizes { dgemm: 2048 / div, zgemm: 1024 / div, dgemv: 4096 / div, level1: (1 << 22) / div, trmv: 8192 / div }
    }
}

// ---- The steps ----

/// One library's run of a step: its time and its result's check.
#[derive(Clone, Copy)]
struct Run {
    secs: f64,
    resid: f64,
}

struct Step {
    routine: &'static str,
    shape: String,
    path: String,
    flops: f64,
    tol: f64,
    ours: Run,
    /// The same call on the comparison library (or, on device memory, the real cuBLAS).
    peer: Option<Run>,
}

impl Step {
    fn ok(&self) -> bool {
        self.ours.resid <= self.tol
    }
}

/// Calls per timing: one to warm up (pools, caches, a kernel's first launch), then the best of
/// the rest.
const CALLS: usize = 4;

/// The best time of `f` over [`CALLS`] - 1 calls after a first one. A pause first lets the other
/// library's threads go to sleep (OpenBLAS's spin for a while after a call).
fn timed(mut f: impl FnMut()) -> f64 {
    std::thread::sleep(std::time::Duration::from_millis(200));
    f();
    (1..CALLS)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

/// max |a - b| / max bound.
fn resid(a: &[f64], b: &[f64], bound: &[f64]) -> f64 {
    let num =
        a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, |m: f64, d| if d.is_nan() { f64::NAN } else { m.max(d) });
    let den = bound.iter().fold(0.0f64, |m, v| m.max(*v));
    if num == 0.0 {
        0.0
    } else {
        num / den.max(f64::MIN_POSITIVE)
    }
}

fn abs_vec(v: &[f64]) -> Vec<f64> {
    v.iter().map(|x| x.abs()).collect()
}

/// C = A*B (DGEMM); checked as C*x against A*(B*x), relative to |A|*(|B|*|x|).
fn demo_dgemm(n: usize, rng: &mut Rng, tap: &mut TraceTap, peer: Option<&Peer>) -> Step {
    let (a, b, x) = (rng.vec(n * n), rng.vec(n * n), rng.vec(n));
    let (ni, one, zero, no) = (n as c_int, 1.0f64, 0.0f64, b'N' as c_char);
    eprintln!("demo: dgemm {n}x{n}x{n}");
    let run = |f: DgemmFn| {
        let mut c = vec![f64::NAN; n * n];
        // SAFETY: n x n column-major operands, ld = n.
        let secs = timed(|| unsafe {
            f(&no, &no, &ni, &ni, &ni, &one, a.as_ptr(), &ni, b.as_ptr(), &ni, &zero, c.as_mut_ptr(), &ni, 1, 1)
        });
        (secs, c)
    };
    let (secs, c) = run(dgemm_);
    let path = tap.path("dgemm");
    let (mut t, mut y2) = (vec![0.0; n], vec![0.0; n]);
    dgemv(b'N', n, &b, &x, &mut t);
    dgemv(b'N', n, &a, &t, &mut y2);
    let (mut tb, mut bound) = (vec![0.0; n], vec![0.0; n]);
    dgemv(b'N', n, &abs_vec(&b), &abs_vec(&x), &mut tb);
    dgemv(b'N', n, &abs_vec(&a), &tb, &mut bound);
    let check = |c: &[f64]| {
        let mut y1 = vec![0.0; n];
        dgemv(b'N', n, c, &x, &mut y1);
        resid(&y1, &y2, &bound)
    };
    let ours = Run { secs, resid: check(&c) };
    let peer = peer.map(|p| {
        let (secs, c) = run(p.dgemm);
        Run { secs, resid: check(&c) }
    });
    tap.drain();
    Step {
        routine: "dgemm",
        shape: format!("{n}x{n}x{n} NN"),
        path,
        flops: 2.0 * (n as f64).powi(3),
        tol: 4.0 * n as f64 * f64::EPSILON,
        ours,
        peer,
    }
}

/// C = A*B^H (hyblas through CBLAS, column-major; the comparison library through `zgemm_`);
/// checked as C*x against A*(B^H*x).
fn demo_zgemm(n: usize, rng: &mut Rng, tap: &mut TraceTap, peer: Option<&Peer>) -> Step {
    let (a, b, x) = (rng.zvec(n * n), rng.zvec(n * n), rng.zvec(n));
    let (ni, one, zero) = (n as c_int, Z { re: 1.0, im: 0.0 }, Z::default());
    eprintln!("demo: cblas_zgemm {n}x{n}x{n} NoTrans, ConjTrans");
    let nan = Z { re: f64::NAN, im: f64::NAN };
    let mut c = vec![nan; n * n];
    let secs = timed(|| {
        // SAFETY: n x n column-major operands, ld = n; complex scalars passed by pointer.
        unsafe {
            cblas_zgemm(
                CBLAS_COL_MAJOR,
                CBLAS_NO_TRANS,
                CBLAS_CONJ_TRANS,
                ni,
                ni,
                ni,
                &one as *const Z as *const c_void,
                a.as_ptr() as *const c_void,
                ni,
                b.as_ptr() as *const c_void,
                ni,
                &zero as *const Z as *const c_void,
                c.as_mut_ptr() as *mut c_void,
                ni,
            )
        }
    });
    let path = tap.path("zgemm");
    let (mut t, mut y2) = (vec![Z::default(); n], vec![Z::default(); n]);
    zgemv(b'C', n, &b, &x, &mut t);
    zgemv(b'N', n, &a, &t, &mut y2);
    // Bound with |re| + |im| (>= the modulus): |A| * (|B|^T * |x|).
    let abs1 = |v: &[Z]| v.iter().map(|z| z.re.abs() + z.im.abs()).collect::<Vec<f64>>();
    let (mut tb, mut bound) = (vec![0.0; n], vec![0.0; n]);
    dgemv(b'T', n, &abs1(&b), &abs1(&x), &mut tb);
    dgemv(b'N', n, &abs1(&a), &tb, &mut bound);
    let flat = |v: &[Z]| v.iter().flat_map(|z| [z.re, z.im]).collect::<Vec<f64>>();
    let bound2: Vec<f64> = bound.iter().flat_map(|b| [*b, *b]).collect();
    let check = |c: &[Z]| {
        let mut y1 = vec![Z::default(); n];
        zgemv(b'N', n, c, &x, &mut y1);
        resid(&flat(&y1), &flat(&y2), &bound2)
    };
    let ours = Run { secs, resid: check(&c) };
    let peer = peer.map(|p| {
        let mut c = vec![nan; n * n];
        let (no, ct) = (b'N' as c_char, b'C' as c_char);
        // SAFETY: as above, through the Fortran interface.
        let secs = timed(|| unsafe {
            (p.zgemm)(&no, &ct, &ni, &ni, &ni, &one, a.as_ptr(), &ni, b.as_ptr(), &ni, &zero, c.as_mut_ptr(), &ni, 1, 1)
        });
        Run { secs, resid: check(&c) }
    });
    tap.drain();
    Step {
        routine: "zgemm",
        shape: format!("{n}x{n}x{n} NC (cblas)"),
        path,
        flops: 8.0 * (n as f64).powi(3),
        tol: 8.0 * n as f64 * f64::EPSILON,
        ours,
        peer,
    }
}

/// y = A*x (DGEMV); checked against a plain loop.
fn demo_dgemv(n: usize, rng: &mut Rng, tap: &mut TraceTap, peer: Option<&Peer>) -> Step {
    let (a, x) = (rng.vec(n * n), rng.vec(n));
    eprintln!("demo: dgemv {n}x{n} N");
    let run = |f: DgemvFn| {
        let mut y = vec![f64::NAN; n];
        let (ni, one, zero, inc, no) = (n as c_int, 1.0f64, 0.0f64, 1 as c_int, b'N' as c_char);
        // SAFETY: n x n column-major A, vectors of n, unit strides.
        let secs = timed(|| unsafe {
            f(&no, &ni, &ni, &one, a.as_ptr(), &ni, x.as_ptr(), &inc, &zero, y.as_mut_ptr(), &inc, 1)
        });
        (secs, y)
    };
    let (secs, y) = run(dgemv_);
    let path = tap.path("dgemv");
    let (mut want, mut bound) = (vec![0.0; n], vec![0.0; n]);
    for (j, &xj) in x.iter().enumerate() {
        let col = &a[j * n..(j + 1) * n];
        for i in 0..n {
            want[i] += col[i] * xj;
            bound[i] += (col[i] * xj).abs();
        }
    }
    let ours = Run { secs, resid: resid(&y, &want, &bound) };
    let peer = peer.map(|p| {
        let (secs, y) = run(p.dgemv);
        Run { secs, resid: resid(&y, &want, &bound) }
    });
    Step {
        routine: "dgemv",
        shape: format!("{n}x{n} N"),
        path,
        flops: 2.0 * (n as f64).powi(2),
        tol: 2.0 * n as f64 * f64::EPSILON,
        ours,
        peer,
    }
}

/// y = alpha*x + y (DAXPY); checked element by element.
fn demo_daxpy(n: usize, rng: &mut Rng, tap: &mut TraceTap, peer: Option<&Peer>) -> Step {
    let (x, y0) = (rng.vec(n), rng.vec(n));
    let (ni, alpha, inc) = (n as c_int, 0.75f64, 1 as c_int);
    eprintln!("demo: daxpy n={n}");
    // Each of the CALLS calls adds alpha*x once.
    let k = CALLS as f64;
    let want: Vec<f64> = y0.iter().zip(&x).map(|(y, x)| y + k * alpha * x).collect();
    let bound: Vec<f64> = y0.iter().zip(&x).map(|(y, x)| y.abs() + k * (alpha * x).abs()).collect();
    let run = |f: DaxpyFn| {
        let mut y = y0.clone();
        // SAFETY: vectors of n, unit strides.
        let secs = timed(|| unsafe { f(&ni, &alpha, x.as_ptr(), &inc, y.as_mut_ptr(), &inc) });
        Run { secs, resid: resid(&y, &want, &bound) }
    };
    let ours = run(daxpy_);
    let path = tap.path("daxpy");
    Step {
        routine: "daxpy",
        shape: format!("n={n}"),
        path,
        flops: 2.0 * n as f64,
        tol: 2.0 * k * f64::EPSILON,
        ours,
        peer: peer.map(|p| run(p.daxpy)),
    }
}

/// x . y (DDOT); checked against a plain sum.
fn demo_ddot(n: usize, rng: &mut Rng, tap: &mut TraceTap, peer: Option<&Peer>) -> Step {
    let (x, y) = (rng.vec(n), rng.vec(n));
    let (ni, inc) = (n as c_int, 1 as c_int);
    eprintln!("demo: ddot n={n}");
    let want: f64 = x.iter().zip(&y).map(|(a, b)| a * b).sum();
    let bound: f64 = x.iter().zip(&y).map(|(a, b)| (a * b).abs()).sum();
    let run = |f: DdotFn| {
        let mut got = f64::NAN;
        // SAFETY: vectors of n, unit strides.
        let secs = timed(|| got = unsafe { f(&ni, x.as_ptr(), &inc, y.as_ptr(), &inc) });
        Run { secs, resid: resid(&[got], &[want], &[bound]) }
    };
    let ours = run(ddot_);
    let path = tap.path("ddot");
    Step {
        routine: "ddot",
        shape: format!("n={n}"),
        path,
        flops: 2.0 * n as f64,
        tol: 2.0 * n as f64 * f64::EPSILON,
        ours,
        peer: peer.map(|p| run(p.ddot)),
    }
}

/// STRMV (lower, no-trans) through the Fortran ABI on *device* memory (a CUDA program's
/// `cudaMalloc` pointers): the planner sends it to the GPU. Checked against the same call on
/// host copies (the CPU engine); the real cuBLAS's `cublasStrmv_v2` on the same device buffers
/// is the comparison. None without a GPU.
fn demo_gpu_strmv(n: usize, rng: &mut Rng, tap: &mut TraceTap) -> Option<Step> {
    use hyblas::abi::cublas::host_vendor;
    use hyblas::gpu::{DMat, DVec, DeviceBuffer, Exec};
    use hyblas::types::{Diag, Trans, Uplo};
    if !hyblas::gpu::available() {
        eprintln!("demo: no GPU, the device-memory step is skipped");
        return None;
    }
    let a: Vec<f32> = rng.vec(n * n).into_iter().map(|v| v as f32).collect();
    let x0: Vec<f32> = rng.vec(n).into_iter().map(|v| v as f32).collect();
    let (ni, inc, ch) = (n as c_int, 1 as c_int, |c: u8| c as c_char);
    let (l, no) = (ch(b'L'), ch(b'N'));
    let mut want = x0.clone();
    let abs_a: Vec<f32> = a.iter().map(|v| v.abs()).collect();
    let mut bound: Vec<f32> = x0.iter().map(|v| v.abs()).collect();
    // SAFETY: n x n column-major A, x of n, unit stride; host memory -> CPU engine.
    unsafe {
        strmv_(&l, &no, &no, &ni, a.as_ptr(), &ni, want.as_mut_ptr(), &inc, 1, 1, 1);
        strmv_(&l, &no, &no, &ni, abs_a.as_ptr(), &ni, bound.as_mut_ptr(), &inc, 1, 1, 1);
    }
    tap.drain();
    eprintln!("demo: strmv {n}x{n} on device memory");
    let rt = hyblas::gpu::Runtime::get(0).ok()?;
    let (da, dx) = (DeviceBuffer::from_slice(&a).ok()?, DeviceBuffer::from_slice(&x0).ok()?);
    // A first call never waits for a kernel (cuBLAS answers while the unit compiles in the
    // background); the demo times hyblas's kernel, so it waits for the unit here.
    let unit = hyblas::gpu::kernels::Unit::of(hyblas::gpu::kernels::Family::Trmv, 's');
    let t = Instant::now();
    if let Err(e) = rt.prepare(&[unit]) {
        eprintln!("demo: the {unit} kernels are not available ({e}); the step runs on cuBLAS");
    } else {
        eprintln!("demo: {unit} ready after {:.1} s", t.elapsed().as_secs_f64());
    }
    let f = |v: &[f32]| v.iter().map(|&x| x as f64).collect::<Vec<f64>>();
    // x := A*x changes x: every timed call starts from x0 again, and the last one is checked.
    let run = |call: &dyn Fn() -> bool| -> Option<Run> {
        let mut best = f64::INFINITY;
        for i in 0..CALLS {
            dx.write(&x0).ok()?;
            let t = Instant::now();
            if !call() {
                return None;
            }
            if i > 0 {
                best = best.min(t.elapsed().as_secs_f64());
            }
        }
        let got: Vec<f32> = dx.to_vec().ok()?;
        Some(Run { secs: best, resid: resid(&f(&got), &f(&want), &f(&bound)) })
    };
    // SAFETY: device pointers of the sizes above; the call returns once it is done.
    let ours = run(&|| {
        unsafe { strmv_(&l, &no, &no, &ni, da.ptr as *const f32, &ni, dx.ptr as *mut f32, &inc, 1, 1, 1) };
        true
    })?;
    let path = tap.path("strmv");
    let ex = Exec::own(rt);
    let (am, xv) = (DMat { ptr: da.ptr, ld: n as i64 }, DVec { ptr: dx.ptr, inc: 1 });
    let peer = run(&|| {
        host_vendor::trmv::<f32>(&ex, Uplo::Lower, Trans::No, Diag::NonUnit, n as i64, am, xv).is_ok()
            && rt.sync(ex.stream).is_ok()
    });
    if peer.is_none() {
        eprintln!("demo: the real cuBLAS did not run (not found, or it failed): no comparison on the GPU");
    }
    Some(Step {
        routine: "strmv",
        shape: format!("{n}x{n} L,N,N device"),
        path,
        flops: (n * n) as f64,
        tol: 2.0 * n as f64 * f32::EPSILON as f64,
        ours,
        peer,
    })
}

pub fn demo(quick: bool) -> ExitCode {
    let mut tap = TraceTap::start();
    let div = if quick { 4 } else { 1 };
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    eprintln!(
        "hyblas {} demo: {} threads, {} kernels",
        env!("CARGO_PKG_VERSION"),
        threads::nthreads(),
        simd::describe()
    );
    let z = Sizes::new(div);
    let peer = Peer::load(threads::nthreads(), &z);
    if let Some(p) = &peer {
        eprintln!(
            "demo: comparing with {} on {} threads (HYBLAS_DEMO_PEER names another; none skips it)",
            p.file,
            threads::nthreads()
        );
    }
    let p = peer.as_ref();
    let mut steps = vec![
        demo_dgemm(z.dgemm, &mut rng, &mut tap, p),
        demo_zgemm(z.zgemm, &mut rng, &mut tap, p),
        demo_dgemv(z.dgemv, &mut rng, &mut tap, p),
        demo_daxpy(z.level1, &mut rng, &mut tap, p),
        demo_ddot(z.level1, &mut rng, &mut tap, p),
    ];
    steps.extend(demo_gpu_strmv(z.trmv, &mut rng, &mut tap));
    tap.finish();
    println!(
        "{:<7} {:<25} {:<26} {:>10} {:>9} {:>9} {:>7}  check",
        "routine", "shape", "path", "time", "GFLOP/s", "other", "ratio"
    );
    for s in &steps {
        let rate = |r: &Run| s.flops / r.secs / 1e9;
        let (other, ratio) = match &s.peer {
            Some(r) => (format!("{:.2}", rate(r)), format!("{:.2}x", r.secs / s.ours.secs)),
            None => ("-".into(), "-".into()),
        };
        println!(
            "{:<7} {:<25} {:<26} {:>8.3}ms {:>9.2} {:>9} {:>7}  {} (residual {:.1e}, tolerance {:.1e})",
            s.routine,
            s.shape,
            s.path,
            s.ours.secs * 1e3,
            rate(&s.ours),
            other,
            ratio,
            if s.ok() { "ok" } else { "FAILED" },
            s.ours.resid,
            s.tol
        );
    }
    let mut others: Vec<String> = peer.iter().map(|p| format!("{} (host memory)", p.file)).collect();
    if steps.iter().any(|s| s.routine == "strmv" && s.peer.is_some()) {
        others.push("the real cuBLAS (device memory)".into());
    }
    if others.is_empty() {
        println!("other: no library to compare with (see above)");
    } else {
        println!("other: the same call on {}; ratio: its time over hyblas's", others.join(" and "));
    }
    let peer_bad: Vec<&str> = steps
        .iter()
        .filter(|s| s.peer.is_some_and(|r| r.resid.is_nan() || r.resid > s.tol))
        .map(|s| s.routine)
        .collect();
    if !peer_bad.is_empty() {
        println!("note: the other library's result missed the check in {}", peer_bad.join(", "));
    }
    let failed: Vec<&str> = steps.iter().filter(|s| !s.ok()).map(|s| s.routine).collect();
    if failed.is_empty() {
        println!("all checks passed");
        ExitCode::SUCCESS
    } else {
        println!("checks FAILED: {}", failed.join(", "));
        ExitCode::FAILURE
    }
}
