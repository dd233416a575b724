//! Level 3 timing against OpenBLAS: GFLOP/s of hyblas and OpenBLAS and their ratio for
//! dgemm, sgemm, zgemm (N,N), zgemm (N,C) and dsyrk (and the other Level 3 routines on request).
//!
//! ```text
//! cargo run --release --example l3bench -- [routines] [--sizes 512,1024,2048] [--threads 1,2]
//!     [--reps 3] [--openblas /path/libopenblas.so.0]
//! ```
//! routines: dgemm dgemmtt sgemm zgemm zgemmnc zgemmnt cgemm dsyrk dsyrkt ssyrk zherk dsyr2k
//! zher2k dsymm zhemm (default: dgemm sgemm zgemm zgemmnc dsyrk); all on n x n operands. OpenBLAS is dlopen'ed with RTLD_DEEPBIND so its
//! symbols never mix with the hyblas ones linked into this program; hyblas runs through its
//! exported Fortran symbols, exactly as a C caller sees them.

use hyblas::types::{C32, C64};
use std::ffi::{c_void, CString};
use std::os::raw::{c_char, c_int};
use std::time::Instant;

extern "C" {
    fn dgemm_(
        ta: *const c_char,
        tb: *const c_char,
        m: *const i32,
        n: *const i32,
        k: *const i32,
        alpha: *const f64,
        a: *const f64,
        lda: *const i32,
        b: *const f64,
        ldb: *const i32,
        beta: *const f64,
        c: *mut f64,
        ldc: *const i32,
    );
    fn sgemm_(
        ta: *const c_char,
        tb: *const c_char,
        m: *const i32,
        n: *const i32,
        k: *const i32,
        alpha: *const f32,
        a: *const f32,
        lda: *const i32,
        b: *const f32,
        ldb: *const i32,
        beta: *const f32,
        c: *mut f32,
        ldc: *const i32,
    );
    fn zgemm_(
        ta: *const c_char,
        tb: *const c_char,
        m: *const i32,
        n: *const i32,
        k: *const i32,
        alpha: *const C64,
        a: *const C64,
        lda: *const i32,
        b: *const C64,
        ldb: *const i32,
        beta: *const C64,
        c: *mut C64,
        ldc: *const i32,
    );
    fn cgemm_(
        ta: *const c_char,
        tb: *const c_char,
        m: *const i32,
        n: *const i32,
        k: *const i32,
        alpha: *const C32,
        a: *const C32,
        lda: *const i32,
        b: *const C32,
        ldb: *const i32,
        beta: *const C32,
        c: *mut C32,
        ldc: *const i32,
    );
    fn dsyrk_(
        uplo: *const c_char,
        t: *const c_char,
        n: *const i32,
        k: *const i32,
        alpha: *const f64,
        a: *const f64,
        lda: *const i32,
        beta: *const f64,
        c: *mut f64,
        ldc: *const i32,
    );
    fn ssyrk_(
        uplo: *const c_char,
        t: *const c_char,
        n: *const i32,
        k: *const i32,
        alpha: *const f32,
        a: *const f32,
        lda: *const i32,
        beta: *const f32,
        c: *mut f32,
        ldc: *const i32,
    );
    fn zherk_(
        uplo: *const c_char,
        t: *const c_char,
        n: *const i32,
        k: *const i32,
        alpha: *const f64,
        a: *const C64,
        lda: *const i32,
        beta: *const f64,
        c: *mut C64,
        ldc: *const i32,
    );
    fn dsyr2k_(
        uplo: *const c_char,
        t: *const c_char,
        n: *const i32,
        k: *const i32,
        alpha: *const f64,
        a: *const f64,
        lda: *const i32,
        b: *const f64,
        ldb: *const i32,
        beta: *const f64,
        c: *mut f64,
        ldc: *const i32,
    );
    fn zher2k_(
        uplo: *const c_char,
        t: *const c_char,
        n: *const i32,
        k: *const i32,
        alpha: *const C64,
        a: *const C64,
        lda: *const i32,
        b: *const C64,
        ldb: *const i32,
        beta: *const f64,
        c: *mut C64,
        ldc: *const i32,
    );
    fn dsymm_(
        side: *const c_char,
        uplo: *const c_char,
        m: *const i32,
        n: *const i32,
        alpha: *const f64,
        a: *const f64,
        lda: *const i32,
        b: *const f64,
        ldb: *const i32,
        beta: *const f64,
        c: *mut f64,
        ldc: *const i32,
    );
    fn zhemm_(
        side: *const c_char,
        uplo: *const c_char,
        m: *const i32,
        n: *const i32,
        alpha: *const C64,
        a: *const C64,
        lda: *const i32,
        b: *const C64,
        ldb: *const i32,
        beta: *const C64,
        c: *mut C64,
        ldc: *const i32,
    );
    fn hyblas_set_num_threads(n: c_int);
}

type Gemm<T> = unsafe extern "C" fn(
    *const c_char,
    *const c_char,
    *const i32,
    *const i32,
    *const i32,
    *const T,
    *const T,
    *const i32,
    *const T,
    *const i32,
    *const T,
    *mut T,
    *const i32,
);
type Syrk<T, R> = unsafe extern "C" fn(
    *const c_char,
    *const c_char,
    *const i32,
    *const i32,
    *const R,
    *const T,
    *const i32,
    *const R,
    *mut T,
    *const i32,
);
type Syr2k<T, R> = unsafe extern "C" fn(
    *const c_char,
    *const c_char,
    *const i32,
    *const i32,
    *const T,
    *const T,
    *const i32,
    *const T,
    *const i32,
    *const R,
    *mut T,
    *const i32,
);
type Symm<T> = unsafe extern "C" fn(
    *const c_char,
    *const c_char,
    *const i32,
    *const i32,
    *const T,
    *const T,
    *const i32,
    *const T,
    *const i32,
    *const T,
    *mut T,
    *const i32,
);

/// The two libraries' entry points for one routine.
struct OpenBlas {
    handle: *mut c_void,
    set_threads: unsafe extern "C" fn(c_int),
}

impl OpenBlas {
    fn open(path: &str) -> OpenBlas {
        let cpath = CString::new(path).expect("path without NUL");
        // SAFETY: dlopen/dlsym with valid C strings.
        unsafe {
            let handle = libc::dlopen(cpath.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL | libc::RTLD_DEEPBIND);
            if handle.is_null() {
                let err = std::ffi::CStr::from_ptr(libc::dlerror()).to_string_lossy().into_owned();
                panic!("cannot dlopen {path}: {err}");
            }
            let name = c"openblas_set_num_threads";
            let set = libc::dlsym(handle, name.as_ptr());
            assert!(!set.is_null(), "OpenBLAS has no openblas_set_num_threads");
            OpenBlas { handle, set_threads: std::mem::transmute::<*mut c_void, unsafe extern "C" fn(c_int)>(set) }
        }
    }
    fn sym(&self, name: &str) -> *mut c_void {
        let c = CString::new(name).expect("name without NUL");
        // SAFETY: valid handle and C string.
        let p = unsafe { libc::dlsym(self.handle, c.as_ptr()) };
        assert!(!p.is_null(), "OpenBLAS has no {name}");
        p
    }
}

struct Rng(u64);
impl Rng {
    fn unit(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    }
}

trait Num: Copy {
    fn make(r: &mut Rng) -> Self;
    /// Real flops per multiply-add.
    const FMA_FLOPS: f64;
}
impl Num for f64 {
    fn make(r: &mut Rng) -> Self {
        r.unit()
    }
    const FMA_FLOPS: f64 = 2.0;
}
impl Num for f32 {
    fn make(r: &mut Rng) -> Self {
        r.unit() as f32
    }
    const FMA_FLOPS: f64 = 2.0;
}
impl Num for C64 {
    fn make(r: &mut Rng) -> Self {
        C64::new(r.unit(), r.unit())
    }
    const FMA_FLOPS: f64 = 8.0;
}
impl Num for C32 {
    fn make(r: &mut Rng) -> Self {
        C32::new(r.unit() as f32, r.unit() as f32)
    }
    const FMA_FLOPS: f64 = 8.0;
}

fn data<T: Num>(n: usize, seed: u64) -> Vec<T> {
    let mut r = Rng(seed | 1);
    (0..n).map(|_| T::make(&mut r)).collect()
}

/// GFLOP/s of (hyblas, OpenBLAS). `call(true)` runs hyblas once, `call(false)` OpenBLAS.
/// Each sample repeats the call for at least 30 ms (small sizes take microseconds); the two
/// libraries alternate sample by sample so both see the same machine load (with a pause at
/// each switch), and the best sample of each counts.
fn compare(reps: usize, flops: f64, mut call: impl FnMut(bool)) -> (f64, f64) {
    call(true);
    call(false);
    let s = Instant::now();
    call(true);
    let once = s.elapsed().as_secs_f64().max(1e-7);
    let iters = ((0.03 / once).ceil() as usize).clamp(1, 100_000);
    let mut best = [f64::INFINITY; 2];
    for _ in 0..reps.max(1) {
        for (slot, ours) in [(0, true), (1, false)] {
            // OpenBLAS's idle workers spin for a while after a call (rayon's far less); let
            // them settle so neither library runs against the other's spinning threads.
            std::thread::sleep(std::time::Duration::from_millis(200));
            let s = Instant::now();
            for _ in 0..iters {
                call(ours);
            }
            best[slot] = best[slot].min(s.elapsed().as_secs_f64() / iters as f64);
        }
    }
    (flops / best[0] * 1e-9, flops / best[1] * 1e-9)
}

/// Times one routine on both libraries: returns (hyblas GFLOP/s, OpenBLAS GFLOP/s).
type Case = Box<dyn Fn(usize, usize, &OpenBlas) -> (f64, f64)>;

fn gemm_case<T: Num + 'static>(ours: Gemm<T>, theirs: &'static str, tb: u8) -> Case {
    Box::new(move |n, reps, ob| {
        let a = data::<T>(n * n, 1);
        let b = data::<T>(n * n, 2);
        let mut c = data::<T>(n * n, 3);
        let alpha = data::<T>(1, 4)[0];
        let beta = data::<T>(1, 5)[0];
        // SAFETY: the symbol has the gemm signature.
        let theirs: Gemm<T> = unsafe { std::mem::transmute::<*mut c_void, Gemm<T>>(ob.sym(theirs)) };
        let ni = n as i32;
        let (ta, tb) = (b'N' as c_char, tb as c_char);
        let flops = T::FMA_FLOPS * (n as f64).powi(3);
        compare(reps, flops, |mine| {
            let f = if mine { ours } else { theirs };
            // SAFETY: buffers are n*n with ld n.
            unsafe { f(&ta, &tb, &ni, &ni, &ni, &alpha, a.as_ptr(), &ni, b.as_ptr(), &ni, &beta, c.as_mut_ptr(), &ni) }
        })
    })
}

fn syrk_case<T: Num + 'static, R: Num + 'static>(ours: Syrk<T, R>, theirs: &'static str, trans: u8) -> Case {
    Box::new(move |n, reps, ob| {
        let a = data::<T>(n * n, 1);
        let mut c = data::<T>(n * n, 3);
        let (alpha, beta) = (data::<R>(1, 4)[0], data::<R>(1, 5)[0]);
        // SAFETY: the symbol has the syrk signature.
        let theirs: Syrk<T, R> = unsafe { std::mem::transmute::<*mut c_void, Syrk<T, R>>(ob.sym(theirs)) };
        let ni = n as i32;
        let (ul, tr) = (b'L' as c_char, trans as c_char);
        let flops = T::FMA_FLOPS * (n as f64).powi(3) / 2.0;
        compare(reps, flops, |mine| {
            let f = if mine { ours } else { theirs };
            // SAFETY: buffers are n*n with ld n.
            unsafe { f(&ul, &tr, &ni, &ni, &alpha, a.as_ptr(), &ni, &beta, c.as_mut_ptr(), &ni) }
        })
    })
}

fn syr2k_case<T: Num + 'static, R: Num + 'static>(ours: Syr2k<T, R>, theirs: &'static str, trans: u8) -> Case {
    Box::new(move |n, reps, ob| {
        let a = data::<T>(n * n, 1);
        let b = data::<T>(n * n, 2);
        let mut c = data::<T>(n * n, 3);
        let (alpha, beta) = (data::<T>(1, 4)[0], data::<R>(1, 5)[0]);
        // SAFETY: the symbol has the syr2k signature.
        let theirs: Syr2k<T, R> = unsafe { std::mem::transmute::<*mut c_void, Syr2k<T, R>>(ob.sym(theirs)) };
        let ni = n as i32;
        let (ul, tr) = (b'U' as c_char, trans as c_char);
        let flops = T::FMA_FLOPS * (n as f64).powi(3);
        compare(reps, flops, |mine| {
            let f = if mine { ours } else { theirs };
            // SAFETY: buffers are n*n with ld n.
            unsafe { f(&ul, &tr, &ni, &ni, &alpha, a.as_ptr(), &ni, b.as_ptr(), &ni, &beta, c.as_mut_ptr(), &ni) }
        })
    })
}

fn symm_case<T: Num + 'static>(ours: Symm<T>, theirs: &'static str) -> Case {
    Box::new(move |n, reps, ob| {
        let a = data::<T>(n * n, 1);
        let b = data::<T>(n * n, 2);
        let mut c = data::<T>(n * n, 3);
        let (alpha, beta) = (data::<T>(1, 4)[0], data::<T>(1, 5)[0]);
        // SAFETY: the symbol has the symm signature.
        let theirs: Symm<T> = unsafe { std::mem::transmute::<*mut c_void, Symm<T>>(ob.sym(theirs)) };
        let ni = n as i32;
        let (sd, ul) = (b'L' as c_char, b'U' as c_char);
        let flops = T::FMA_FLOPS * (n as f64).powi(3);
        compare(reps, flops, |mine| {
            let f = if mine { ours } else { theirs };
            // SAFETY: buffers are n*n with ld n.
            unsafe { f(&sd, &ul, &ni, &ni, &alpha, a.as_ptr(), &ni, b.as_ptr(), &ni, &beta, c.as_mut_ptr(), &ni) }
        })
    })
}

fn case(name: &str) -> Option<Case> {
    Some(match name {
        "dgemm" => gemm_case::<f64>(dgemm_, "dgemm_", b'N'),
        "dgemmtt" => gemm_case::<f64>(dgemm_, "dgemm_", b'T'),
        "sgemm" => gemm_case::<f32>(sgemm_, "sgemm_", b'N'),
        "zgemm" => gemm_case::<C64>(zgemm_, "zgemm_", b'N'),
        "zgemmnc" => gemm_case::<C64>(zgemm_, "zgemm_", b'C'),
        "zgemmnt" => gemm_case::<C64>(zgemm_, "zgemm_", b'T'),
        "cgemm" => gemm_case::<C32>(cgemm_, "cgemm_", b'N'),
        "dsyrk" => syrk_case::<f64, f64>(dsyrk_, "dsyrk_", b'N'),
        "dsyrkt" => syrk_case::<f64, f64>(dsyrk_, "dsyrk_", b'T'),
        "ssyrk" => syrk_case::<f32, f32>(ssyrk_, "ssyrk_", b'N'),
        "zherk" => syrk_case::<C64, f64>(zherk_, "zherk_", b'N'),
        "dsyr2k" => syr2k_case::<f64, f64>(dsyr2k_, "dsyr2k_", b'N'),
        "zher2k" => syr2k_case::<C64, f64>(zher2k_, "zher2k_", b'N'),
        "dsymm" => symm_case::<f64>(dsymm_, "dsymm_"),
        "zhemm" => symm_case::<C64>(zhemm_, "zhemm_"),
        _ => return None,
    })
}

fn list(s: &str) -> Vec<usize> {
    s.split(',').filter_map(|v| v.trim().parse().ok()).collect()
}

fn main() {
    let mut routines: Vec<String> = Vec::new();
    let mut sizes = vec![512, 1024, 2048];
    let mut threads = vec![1, 2];
    let mut reps = 3;
    let mut path = String::from("/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0");
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--sizes" => sizes = list(&args.next().unwrap_or_default()),
            "--threads" => threads = list(&args.next().unwrap_or_default()),
            "--reps" => reps = args.next().and_then(|v| v.parse().ok()).unwrap_or(3),
            "--openblas" => path = args.next().unwrap_or(path),
            r => routines.push(r.to_string()),
        }
    }
    if routines.is_empty() {
        routines = ["dgemm", "sgemm", "zgemm", "zgemmnc", "dsyrk"].map(String::from).to_vec();
    }
    let ob = OpenBlas::open(&path);
    println!("{:<9} {:>5} {:>3} {:>10} {:>10} {:>7}", "routine", "n", "thr", "hyblas", "openblas", "ratio");
    for r in &routines {
        let Some(f) = case(r) else {
            eprintln!("unknown routine {r}");
            continue;
        };
        for &t in &threads {
            // SAFETY: plain thread-count setters.
            unsafe {
                hyblas_set_num_threads(t as c_int);
                (ob.set_threads)(t as c_int);
            }
            for &n in &sizes {
                let (ours, theirs) = f(n, reps, &ob);
                println!("{r:<9} {n:>5} {t:>3} {ours:>10.1} {theirs:>10.1} {:>7.3}", ours / theirs);
            }
        }
    }
}
