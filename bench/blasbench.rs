//! blasbench: hyblas against other BLAS libraries ("peers"), routine by routine, on the same data.
//!
//! Every library is `dlopen`ed with `RTLD_LOCAL`, so each one's `dgemm_` is resolved from its
//! own handle (with its symbol prefix, e.g. scipy-openblas's `scipy_dgemm_`) and none can
//! interpose on another. The peers: Debian's OpenBLAS when installed, and the pip wheels that
//! `scripts/cpu-peers.sh` puts in `.peers/` (OpenBLAS 0.3.34 from scipy-openblas32, oneMKL).
//! For every routine, size and thread count all libraries get identical inputs; one call of each
//! is compared with hyblas's (a wrong-but-fast result is flagged), then timed blocks of
//! repetitions rotate through the libraries round by round and the medians are reported.
//! See bench/README.md for the options and the output files.

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
/// The built-in peers, in column order: Debian's OpenBLAS, scipy-openblas32's, oneMKL.
const BUILTIN_PEERS: &[&str] = &["openblas-debian", "openblas-scipy", "mkl"];

const HELP: &str = "\
blasbench: compare a BLAS (hyblas by default) with other BLAS libraries on the same data

usage: blasbench [options]

  --quick            small subset for a CI smoke run (sizes 64,256, short blocks)
  --routines LIST    comma list, e.g. dgemm,zgemm:NC,dgemv:T,daxpy (default:
                     dgemm,sgemm,zgemm,dtrsm,dsyrk,dgemv,daxpy,ddot). Any of s/d/c/z +
                     gemm, symm, syrk, syr2k, trsm, trmm, gemv, axpy, c/z + hemm, herk,
                     her2k, and s/d + dot; `name:VARIANT` picks one variant (gemm
                     NN|NT|TN|TT|NC, gemv N|T, symm/hemm side+uplo such as LL or RU,
                     syrk/herk/syr2k/her2k uplo+trans such as LN or UT, trsm/trmm
                     side+uplo+trans+diag such as LLNN (default) or RUTN), and
                     s/d/c/z + gemm_batch (variants NN: ?gemm_batch_ with one group, STRIDED:
                     ?gemm_batch_strided_, LOOP: a loop of ?gemm_, SHARED_A: strided with
                     one A for all (stride 0); 10^4 products of n x n x n
                     up to n = 32, 2000 at 64, 100 beyond)
  --sizes LIST       n values (default 64,128,256,512,1024,2048,4096, complex Level 3 up
                     to 2048); matrices are n x n, Level 1 vectors have n*n elements
  --threads LIST     thread counts (default 1,2)
  --out DIR          where the CSV, markdown and SVG go (default <repo>/bench/results)
  --lib PATH         the library measured as \"hyblas\" (default target/release/libhyblas.so
                     next to this program); e.g. the reference BLAS to test the harness
  --peers LIST       built-in peers to compare with (default: every one that is present):
                       openblas-debian  /usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0
                                        (+ libblas.so.3), Debian's OpenBLAS (0.3.21 on bookworm)
                       openblas-scipy   <peers-dir>/scipy-openblas32/scipy_openblas32/lib/
                                        libscipy_openblas.so, OpenBLAS 0.3.34, symbols scipy_*
                       mkl              <peers-dir>/mkl/lib/libmkl_rt.so.3, oneMKL
                     `none` for no built-in peer (then name them with --peer)
  --peer SPEC        an extra peer, repeatable: [NAME=]PATH[+PATH...][@PREFIX], e.g.
                     --peer blis=/usr/lib/x86_64-linux-gnu/blis-pthread/libblis.so.4
                     (symbols are looked up as PREFIXdgemm_; NAME defaults to peer, peer2, ...).
                     With --peer and without --peers, the built-in peers are left out.
                     A NAME starting with `hyblas` (another build, to compare builds) is a
                     column only: never the best peer the ratio is taken against.
  --peers-dir DIR    where scripts/cpu-peers.sh put the wheels (default <repo>/.peers)
  --mkl-threading L  MKL's threading layer: INTEL (libiomp5.so beside libmkl_rt; the default
                     when there), GNU (the system's libgomp.so.1), TBB, SEQUENTIAL. Default:
                     $MKL_THREADING_LAYER when set
  --twin NAME        time library NAME (hyblas or a peer) twice, as two columns: the second,
                     NAME~, measures the noise of a library against itself beside the results
  --tag NAME         appended to the output file names (cpu-<cpu>-<NAME>.csv)
  --block-ms MS      length of one timed block (default 50, quick 10)
  --rounds N         rounds per case, each timing every library once (default 5, quick 3)
  --case-cap S       seconds per library a case may take before rounds are cut, keeping at
                     least 3 rounds (quick: 1) (default 4)
  --settle-ms MS     longest wait, before each timed block, for the process to go quiet
                     (idle workers of the library before still busy-waiting: OpenBLAS's
                     ~0.12 s, Intel OpenMP's 0.2 s) (default 1000)
  --idle-wait S      before each case, wait up to S seconds for other processes to use under
                     10% of the machine (default 30, quick 0); the share they used during
                     each case is in the CSV (other_load) and marks cases over 10%
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
    /// Built-in peers asked for by name (None: every one present, unless --peer was given).
    peers: Option<Vec<String>>,
    extra_peers: Vec<String>,
    peers_dir: PathBuf,
    mkl_threading: Option<String>,
    twin: Option<String>,
    tag: Option<String>,
    block: f64,
    rounds: usize,
    case_cap: f64,
    settle: f64,
    idle_wait: f64,
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
        peers: None,
        extra_peers: Vec::new(),
        peers_dir: Path::new(env!("CARGO_MANIFEST_DIR")).join(".peers"),
        mkl_threading: None,
        twin: None,
        tag: None,
        block: f64::NAN,
        rounds: 0,
        case_cap: 4.0,
        settle: 1.0,
        idle_wait: f64::NAN,
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
            "--peers" => {
                let v: Vec<String> = list(&value()?, "peer")?;
                o.peers = Some(v.into_iter().filter(|p| p != "none").collect());
            }
            "--peer" => o.extra_peers.push(value()?),
            "--peers-dir" => o.peers_dir = PathBuf::from(value()?),
            "--mkl-threading" => o.mkl_threading = Some(value()?.to_ascii_uppercase()),
            "--twin" => o.twin = Some(value()?).filter(|t| t != "none"),
            "--tag" => o.tag = Some(value()?),
            "--block-ms" => o.block = value()?.parse::<f64>().map_err(|_| "bad --block-ms")? / 1e3,
            "--rounds" => o.rounds = value()?.parse().map_err(|_| "bad --rounds")?,
            "--case-cap" => o.case_cap = value()?.parse().map_err(|_| "bad --case-cap")?,
            "--settle-ms" => o.settle = value()?.parse::<f64>().map_err(|_| "bad --settle-ms")? / 1e3,
            "--idle-wait" => o.idle_wait = value()?.parse().map_err(|_| "bad --idle-wait")?,
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
    if o.idle_wait.is_nan() {
        o.idle_wait = if o.quick { 0.0 } else { 30.0 };
    }
    if o.quick && o.tag.is_none() {
        o.tag = Some("quick".into());
    }
    if o.sizes.iter().any(|&n| n == 0 || n > 1 << 15) || o.threads.contains(&0) {
        return Err("sizes must be in 1..=32768 and thread counts positive".into());
    }
    if let Some(l) = &o.mkl_threading {
        if !matches!(l.as_str(), "INTEL" | "GNU" | "TBB" | "SEQUENTIAL") {
            return Err(format!("--mkl-threading {l}: not one of INTEL, GNU, TBB, SEQUENTIAL"));
        }
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

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Hyblas,
    OpenBlas,
    Mkl,
    Other,
}

/// A library to load: its column name, files and symbol prefix.
struct LibSpec {
    label: String,
    kind: Kind,
    paths: Vec<PathBuf>,
    prefix: String,
}

struct Lib {
    /// Column name in the tables and the CSV (no commas, no underscores).
    label: String,
    kind: Kind,
    desc: String,
    /// Prepended to every symbol looked up (scipy-openblas: `scipy_`).
    prefix: String,
    /// Searched in order for symbols (a handle's search also covers its dependencies).
    handles: Vec<*mut c_void>,
    set_threads: Option<unsafe extern "C" fn(c_int)>,
    get_threads: Option<unsafe extern "C" fn() -> c_int>,
    /// What the library says about itself: version, the kernels it picked for this CPU.
    kernels: String,
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

fn dlopen(path: &Path, flags: c_int) -> Result<*mut c_void, String> {
    let c = CString::new(path.as_os_str().as_encoded_bytes()).map_err(|_| format!("bad path {}", path.display()))?;
    // SAFETY: plain dlopen of a path.
    let h = unsafe { libc::dlopen(c.as_ptr(), flags) };
    if h.is_null() {
        Err(format!("cannot load {}: {}", path.display(), dlerror_text()))
    } else {
        Ok(h)
    }
}

/// A C string returned by a library (NULL: empty).
fn c_text(p: *const c_char) -> String {
    if p.is_null() {
        String::new()
    } else {
        // SAFETY: the library returns a NUL-terminated string it owns.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().trim().to_string()
    }
}

/// oneMKL's `MKLVersion` (mkl_types.h).
#[repr(C)]
struct MklVersion {
    major: c_int,
    minor: c_int,
    update: c_int,
    product_status: *const c_char,
    build: *const c_char,
    processor: *const c_char,
    platform: *const c_char,
}

impl Lib {
    fn open(spec: &LibSpec) -> Result<Lib, String> {
        let mut handles = Vec::new();
        for p in &spec.paths {
            // RTLD_LOCAL keeps its symbols out of the global scope.
            handles.push(dlopen(p, libc::RTLD_NOW | libc::RTLD_LOCAL)?);
        }
        // The BLAS symbols come from the last path named (libblas.so.3 for Debian's OpenBLAS),
        // the thread control from whichever has it.
        handles.reverse();
        let desc = spec.paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(" + ");
        let mut lib = Lib {
            label: spec.label.clone(),
            kind: spec.kind,
            desc,
            prefix: spec.prefix.clone(),
            handles,
            set_threads: None,
            get_threads: None,
            kernels: String::new(),
        };
        lib.set_threads = lib
            .sym("hyblas_set_num_threads")
            .or_else(|| lib.sym("openblas_set_num_threads"))
            .or_else(|| lib.sym("MKL_Set_Num_Threads"));
        lib.get_threads = lib
            .sym("hyblas_get_num_threads")
            .or_else(|| lib.sym("openblas_get_num_threads"))
            .or_else(|| lib.sym("MKL_Get_Max_Threads"));
        lib.kernels = lib.describe();
        Ok(lib)
    }

    /// A function pointer named `name` (after the library's prefix), if the library has it.
    fn sym<F: Copy>(&self, name: &str) -> Option<F> {
        assert_eq!(std::mem::size_of::<F>(), std::mem::size_of::<*mut c_void>());
        let c = CString::new(format!("{}{name}", self.prefix)).ok()?;
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

    /// Version and kernels, from the library's own introspection calls.
    fn describe(&self) -> String {
        type Text = unsafe extern "C" fn() -> *const c_char;
        let mut parts = Vec::new();
        if let Some(v) = self.sym::<Text>("hyblas_version") {
            // SAFETY: returns a static string.
            parts.push(format!("hyblas {}", c_text(unsafe { v() })));
        }
        if let Some(cfg) = self.sym::<Text>("openblas_get_config") {
            // SAFETY: both return static strings.
            parts.push(c_text(unsafe { cfg() }));
            if let Some(core) = self.sym::<Text>("openblas_get_corename") {
                parts.push(format!("core {}", c_text(unsafe { core() })));
            }
        }
        if let Some(vs) = self.sym::<unsafe extern "C" fn(*mut c_char, c_int)>("MKL_Get_Version_String") {
            let mut buf = vec![0 as c_char; 512];
            // SAFETY: writes at most len bytes, NUL-terminated.
            unsafe { vs(buf.as_mut_ptr(), buf.len() as c_int - 1) };
            parts.push(c_text(buf.as_ptr()));
        }
        if let Some(gv) = self.sym::<unsafe extern "C" fn(*mut MklVersion)>("MKL_Get_Version") {
            let mut v = MklVersion {
                major: 0,
                minor: 0,
                update: 0,
                product_status: std::ptr::null(),
                build: std::ptr::null(),
                processor: std::ptr::null(),
                platform: std::ptr::null(),
            };
            // SAFETY: fills the struct with numbers and static strings.
            unsafe { gv(&mut v) };
            // The processor string names the instruction set of the code path MKL dispatched to.
            parts.push(format!("code path: {}", c_text(v.processor)));
        }
        if let Some(ab) = self.sym::<unsafe extern "C" fn() -> c_int>("mkl_cbwr_get_auto_branch") {
            // SAFETY: plain getter.
            let b = unsafe { ab() };
            parts.push(format!("CNR auto branch {}", cbwr_name(b)));
        }
        if let Some(tl) = self.sym::<unsafe extern "C" fn() -> c_int>("mkl_sdl_get_threading_layer") {
            // SAFETY: plain getter (libmkl_rt's record of the layer it loaded).
            let l = unsafe { tl() };
            let name = ["INTEL", "SEQUENTIAL", "PGI", "GNU", "TBB"].get(l as usize).copied().unwrap_or("?");
            parts.push(format!("threading layer {name}"));
        }
        parts.retain(|p| !p.is_empty());
        parts.join("; ")
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

/// mkl_cbwr.h's branch names.
fn cbwr_name(b: c_int) -> String {
    let name = match b {
        2 => "AUTO",
        3 => "COMPATIBLE",
        4 => "SSE2",
        6 => "SSSE3",
        7 => "SSE4_1",
        8 => "SSE4_2",
        9 => "AVX",
        10 => "AVX2",
        11 => "AVX512_MIC",
        12 => "AVX512",
        13 => "AVX512_MIC_E1",
        14 => "AVX512_E1",
        _ => return format!("{b}"),
    };
    format!("{name} ({b})")
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

/// A built-in peer's files, if present.
fn builtin_peer(name: &str, dir: &Path) -> Result<Option<LibSpec>, String> {
    let spec = |kind, paths: Vec<PathBuf>, prefix: &str| {
        let present = paths.iter().all(|p| p.exists());
        present.then(|| LibSpec { label: name.to_string(), kind, paths, prefix: prefix.into() })
    };
    Ok(match name {
        "openblas-debian" => spec(
            Kind::OpenBlas,
            vec![
                PathBuf::from(format!("{OPENBLAS_DIR}/libopenblas.so.0")),
                PathBuf::from(format!("{OPENBLAS_DIR}/libblas.so.3")),
            ],
            "",
        ),
        "openblas-scipy" => {
            spec(Kind::OpenBlas, vec![dir.join("scipy-openblas32/scipy_openblas32/lib/libscipy_openblas.so")], "scipy_")
        }
        "mkl" => spec(Kind::Mkl, vec![dir.join("mkl/lib/libmkl_rt.so.3")], ""),
        other => return Err(format!("unknown peer `{other}` (built-in: {})", BUILTIN_PEERS.join(", "))),
    })
}

/// `[NAME=]PATH[+PATH...][@PREFIX]` (commas separate paths too, as before named peers).
fn parse_peer(s: &str, i: usize) -> Result<LibSpec, String> {
    let (name, rest) = match s.split_once('=') {
        Some((n, r)) if !n.contains('/') => (n.to_string(), r),
        _ => (if i == 0 { "peer".to_string() } else { format!("peer{}", i + 1) }, s),
    };
    if name.is_empty() || name.contains(['_', ',', ' ', '~']) {
        return Err(format!("--peer {s}: a name without `_`, `,`, `~` or spaces"));
    }
    let (paths, prefix) = rest.split_once('@').unwrap_or((rest, ""));
    let paths: Vec<PathBuf> = paths.split(['+', ',']).filter(|p| !p.is_empty()).map(PathBuf::from).collect();
    if paths.is_empty() {
        return Err(format!("--peer {s}: no path"));
    }
    // Recognised by the file name, for the thread-spin pause and the MKL set-up.
    Ok(LibSpec { label: name, kind: kind_of(&paths[0]), paths, prefix: prefix.into() })
}

fn peer_specs(opts: &Opts) -> Result<Vec<LibSpec>, String> {
    let mut specs = Vec::new();
    match &opts.peers {
        Some(names) => {
            for name in names {
                let s = builtin_peer(name, &opts.peers_dir)?;
                specs.push(s.ok_or_else(|| {
                    format!("peer {name} is not installed (openblas-debian: apt-get install libopenblas0-pthread; others: scripts/cpu-peers.sh)")
                })?);
            }
        }
        None if opts.extra_peers.is_empty() => {
            for name in BUILTIN_PEERS {
                specs.extend(builtin_peer(name, &opts.peers_dir)?);
            }
        }
        None => {}
    }
    for (i, s) in opts.extra_peers.iter().enumerate() {
        specs.push(parse_peer(s, i)?);
    }
    for (i, s) in specs.iter().enumerate() {
        if s.label == "hyblas" || specs[..i].iter().any(|o| o.label == s.label) {
            return Err(format!("two libraries named {}", s.label));
        }
    }
    if specs.is_empty() {
        return Err("no peer to compare with: install Debian's OpenBLAS (apt-get install libopenblas0-pthread), \
             run scripts/cpu-peers.sh, or name one with --peer"
            .into());
    }
    Ok(specs)
}

/// Environment for the peers, set before any library is loaded (and so before any thread
/// exists): OpenBLAS detects the CPU itself, MKL gets its threading layer (whose run time is
/// loaded globally first, from beside libmkl_rt). Returns the notes for the header.
fn prepare_env(specs: &[LibSpec], opts: &Opts) -> Result<Vec<String>, String> {
    let mut notes = Vec::new();
    if specs.iter().any(|s| s.kind == Kind::OpenBlas) {
        if let Ok(v) = std::env::var("OPENBLAS_CORETYPE") {
            notes.push(format!("OPENBLAS_CORETYPE={v} unset, so OpenBLAS detects the CPU"));
            std::env::remove_var("OPENBLAS_CORETYPE");
        }
    }
    if let Some(mkl) = specs.iter().find(|s| s.kind == Kind::Mkl) {
        let dir = mkl.paths[0].parent().unwrap_or(Path::new(".")).to_path_buf();
        let iomp = dir.join("libiomp5.so");
        let layer = match (&opts.mkl_threading, std::env::var("MKL_THREADING_LAYER")) {
            (Some(l), _) => l.clone(),
            (None, Ok(l)) if !l.is_empty() => l.to_ascii_uppercase(),
            _ if iomp.exists() => "INTEL".into(),
            // SAFETY: probing dlopen of a system library by name.
            _ if !unsafe { libc::dlopen(c"libgomp.so.1".as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) }.is_null() => {
                "GNU".into()
            }
            _ => "SEQUENTIAL".into(),
        };
        std::env::set_var("MKL_THREADING_LAYER", &layer);
        let runtime = match layer.as_str() {
            "INTEL" => Some(iomp),
            "TBB" => Some(dir.join("libtbb.so.12")),
            _ => None,
        };
        // libmkl_rt dlopens the layer (libmkl_intel_thread.so.3), which needs the OpenMP / TBB
        // symbols from a library already loaded globally: load it by path first.
        if let Some(rt) = runtime.filter(|p| p.exists()) {
            dlopen(&rt, libc::RTLD_NOW | libc::RTLD_GLOBAL)?;
        }
        notes.push(format!("MKL_THREADING_LAYER={layer}"));
    }
    Ok(notes)
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
// Problems: one BLAS call with its data, for every side (side 0 = hyblas, then the peers).

type Ch = *const c_char;
type I = *const c_int;
type GemmFn<T> =
    unsafe extern "C" fn(Ch, Ch, I, I, I, *const T, *const T, I, *const T, I, *const T, *mut T, I, usize, usize);
type TrxmFn<T> =
    unsafe extern "C" fn(Ch, Ch, Ch, Ch, I, I, *const T, *const T, I, *mut T, I, usize, usize, usize, usize);
type SyrkFn<T> = unsafe extern "C" fn(Ch, Ch, I, I, *const T, *const T, I, *const T, *mut T, I, usize, usize);
type Syr2kFn<T> =
    unsafe extern "C" fn(Ch, Ch, I, I, *const T, *const T, I, *const T, I, *const T, *mut T, I, usize, usize);
type SymmFn<T> =
    unsafe extern "C" fn(Ch, Ch, I, I, *const T, *const T, I, *const T, I, *const T, *mut T, I, usize, usize);
type GemvFn<T> = unsafe extern "C" fn(Ch, I, I, *const T, *const T, I, *const T, I, *const T, *mut T, I, usize);
type AxpyFn<T> = unsafe extern "C" fn(I, *const T, *const T, I, *mut T, I);
type DotFn<T> = unsafe extern "C" fn(I, *const T, I, *const T, I) -> T;
type BatchFn<T> = unsafe extern "C" fn(
    Ch,
    Ch,
    I,
    I,
    I,
    *const T,
    *const *const T,
    I,
    *const *const T,
    I,
    *const T,
    *const *mut T,
    I,
    I,
    I,
    usize,
    usize,
);
type StridedFn<T> = unsafe extern "C" fn(
    Ch,
    Ch,
    I,
    I,
    I,
    *const T,
    *const T,
    I,
    I,
    *const T,
    I,
    I,
    *const T,
    *mut T,
    I,
    I,
    I,
    usize,
    usize,
);

trait Problem {
    /// One call on side `s`'s output.
    fn call(&mut self, s: usize);
    /// Reset side `s`'s output before a call (only for routines whose output feeds back).
    fn restore(&mut self, _s: usize) {}
    fn needs_restore(&self) -> bool {
        false
    }
    /// Normwise relative difference of side `s`'s output from side `r`'s (`r`'s scale).
    fn diff(&self, s: usize, r: usize) -> f64;
}

struct Gemm<T> {
    f: Vec<GemmFn<T>>,
    ta: c_char,
    tb: c_char,
    n: c_int,
    a: Vec<T>,
    b: Vec<T>,
    c: Vec<Vec<T>>,
}
impl<T: Elem> Problem for Gemm<T> {
    fn call(&mut self, s: usize) {
        let (one, zero, n) = (T::new(1.0, 0.0), T::new(0.0, 0.0), self.n);
        let (a, b, c) = (self.a.as_ptr(), self.b.as_ptr(), self.c[s].as_mut_ptr());
        // SAFETY: n x n column-major buffers, lda = ldb = ldc = n.
        unsafe { (self.f[s])(&self.ta, &self.tb, &n, &n, &n, &one, a, &n, b, &n, &zero, c, &n, 1, 1) }
    }
    fn diff(&self, s: usize, r: usize) -> f64 {
        rel_diff(&self.c[s], &self.c[r])
    }
}

/// Products in a batched GEMM case of size n: many small ones, fewer large ones (issue 48's
/// sizes: 10^4 products up to n = 32, 10^2 from n = 128).
fn batch_count(n: usize) -> usize {
    if n <= 32 {
        10_000
    } else if n <= 64 {
        2_000
    } else {
        100
    }
}

/// `?gemm_batch_` (one group: N, N, n x n x n, alpha 1, beta 0), `?gemm_batch_strided_`, or a
/// loop of `?gemm_` over the same products (variants NN, STRIDED, LOOP), on every side; SHARED_A:
/// the strided call with one A for every product (stride 0).
struct GemmBatch<T> {
    grouped: Vec<BatchFn<T>>,
    strided: Vec<StridedFn<T>>,
    shared_a: bool,
    single: Vec<GemmFn<T>>,
    n: c_int,
    count: usize,
    a: Vec<T>,
    b: Vec<T>,
    c: Vec<Vec<T>>,
}
impl<T: Elem> Problem for GemmBatch<T> {
    fn call(&mut self, s: usize) {
        let (one, zero, n) = (T::new(1.0, 0.0), T::new(0.0, 0.0), self.n);
        let e = (n * n) as usize;
        let nc = b'N' as c_char;
        let (a, b, c) = (self.a.as_ptr(), self.b.as_ptr(), self.c[s].as_mut_ptr());
        // SAFETY: `count` n x n column-major products laid out one after the other.
        unsafe {
            if let Some(f) = self.grouped.get(s) {
                let ap: Vec<*const T> = (0..self.count).map(|p| a.add(p * e)).collect();
                let bp: Vec<*const T> = (0..self.count).map(|p| b.add(p * e)).collect();
                let cp: Vec<*mut T> = (0..self.count).map(|p| c.add(p * e)).collect();
                let (gc, gs) = (1 as c_int, self.count as c_int);
                f(&nc, &nc, &n, &n, &n, &one, ap.as_ptr(), &n, bp.as_ptr(), &n, &zero, cp.as_ptr(), &n, &gc, &gs, 1, 1)
            } else if let Some(f) = self.strided.get(s) {
                let (st, bs) = (e as c_int, self.count as c_int);
                let sa = if self.shared_a { 0 } else { st };
                f(&nc, &nc, &n, &n, &n, &one, a, &n, &sa, b, &n, &st, &zero, c, &n, &st, &bs, 1, 1)
            } else {
                let f = self.single[s];
                for p in 0..self.count {
                    f(&nc, &nc, &n, &n, &n, &one, a.add(p * e), &n, b.add(p * e), &n, &zero, c.add(p * e), &n, 1, 1)
                }
            }
        }
    }
    fn diff(&self, s: usize, r: usize) -> f64 {
        rel_diff(&self.c[s], &self.c[r])
    }
}

/// TRSM or TRMM, side L, lower, no transpose, non-unit: B := alpha*op(A)^{-1 or 1}*B. B feeds
/// back into the next call, so it is restored (outside the timing) before each one.
struct Trxm<T> {
    f: Vec<TrxmFn<T>>,
    /// side, uplo, trans, diag.
    opts: [c_char; 4],
    n: c_int,
    a: Vec<T>,
    b0: Vec<T>,
    b: Vec<Vec<T>>,
}
impl<T: Elem> Problem for Trxm<T> {
    fn call(&mut self, s: usize) {
        let (one, n) = (T::new(1.0, 0.0), self.n);
        let [sd, ul, tr, dg] = self.opts;
        // SAFETY: n x n buffers, lda = ldb = n.
        unsafe {
            (self.f[s])(&sd, &ul, &tr, &dg, &n, &n, &one, self.a.as_ptr(), &n, self.b[s].as_mut_ptr(), &n, 1, 1, 1, 1)
        }
    }
    fn restore(&mut self, s: usize) {
        self.b[s].copy_from_slice(&self.b0);
    }
    fn needs_restore(&self) -> bool {
        true
    }
    fn diff(&self, s: usize, r: usize) -> f64 {
        rel_diff(&self.b[s], &self.b[r])
    }
}

/// SYRK/HERK (`b` empty) or SYR2K/HER2K, k = n: C := A*op(A) (+ B*op(A) ...), beta = 0; the
/// other triangle must stay as is. HERK/HER2K take a real beta (and HERK a real alpha): the
/// pointer to a complex 1 or 0 reads as that real.
struct Rank<T> {
    f: Vec<SyrkFn<T>>,
    f2: Vec<Syr2kFn<T>>,
    /// uplo, trans.
    opts: [c_char; 2],
    n: c_int,
    a: Vec<T>,
    b: Vec<T>,
    c: Vec<Vec<T>>,
}
impl<T: Elem> Problem for Rank<T> {
    fn call(&mut self, s: usize) {
        let (one, zero, n) = (T::new(1.0, 0.0), T::new(0.0, 0.0), self.n);
        let [ul, tr] = self.opts;
        let (a, c) = (self.a.as_ptr(), self.c[s].as_mut_ptr());
        // SAFETY: n x n buffers, lda = ldb = ldc = n.
        unsafe {
            if self.f2.is_empty() {
                (self.f[s])(&ul, &tr, &n, &n, &one, a, &n, &zero, c, &n, 1, 1)
            } else {
                (self.f2[s])(&ul, &tr, &n, &n, &one, a, &n, self.b.as_ptr(), &n, &zero, c, &n, 1, 1)
            }
        }
    }
    fn diff(&self, s: usize, r: usize) -> f64 {
        rel_diff(&self.c[s], &self.c[r])
    }
}

/// SYMM/HEMM, m = n: C := A*B or B*A with A symmetric (Hermitian), beta = 0.
struct Symm<T> {
    f: Vec<SymmFn<T>>,
    /// side, uplo.
    opts: [c_char; 2],
    n: c_int,
    a: Vec<T>,
    b: Vec<T>,
    c: Vec<Vec<T>>,
}
impl<T: Elem> Problem for Symm<T> {
    fn call(&mut self, s: usize) {
        let (one, zero, n) = (T::new(1.0, 0.0), T::new(0.0, 0.0), self.n);
        let [sd, ul] = self.opts;
        let (a, b, c) = (self.a.as_ptr(), self.b.as_ptr(), self.c[s].as_mut_ptr());
        // SAFETY: n x n buffers, lda = ldb = ldc = n.
        unsafe { (self.f[s])(&sd, &ul, &n, &n, &one, a, &n, b, &n, &zero, c, &n, 1, 1) }
    }
    fn diff(&self, s: usize, r: usize) -> f64 {
        rel_diff(&self.c[s], &self.c[r])
    }
}

struct Gemv<T> {
    f: Vec<GemvFn<T>>,
    trans: c_char,
    n: c_int,
    a: Vec<T>,
    x: Vec<T>,
    y: Vec<Vec<T>>,
}
impl<T: Elem> Problem for Gemv<T> {
    fn call(&mut self, s: usize) {
        let (one, zero, n, inc) = (T::new(1.0, 0.0), T::new(0.0, 0.0), self.n, 1 as c_int);
        let (a, x, y) = (self.a.as_ptr(), self.x.as_ptr(), self.y[s].as_mut_ptr());
        // SAFETY: n x n matrix, vectors of n, unit strides.
        unsafe { (self.f[s])(&self.trans, &n, &n, &one, a, &n, x, &inc, &zero, y, &inc, 1) }
    }
    fn diff(&self, s: usize, r: usize) -> f64 {
        rel_diff(&self.y[s], &self.y[r])
    }
}

/// AXPY with a small alpha, so y drifts by little over many repetitions.
struct Axpy<T> {
    f: Vec<AxpyFn<T>>,
    n: c_int,
    x: Vec<T>,
    y0: Vec<T>,
    y: Vec<Vec<T>>,
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
    fn diff(&self, s: usize, r: usize) -> f64 {
        rel_diff(&self.y[s], &self.y[r])
    }
}

struct Dot<T> {
    f: Vec<DotFn<T>>,
    n: c_int,
    x: Vec<T>,
    y: Vec<T>,
    r: Vec<T>,
}
impl<T: Elem> Problem for Dot<T> {
    fn call(&mut self, s: usize) {
        let inc = 1 as c_int;
        // SAFETY: vectors of n, unit strides.
        self.r[s] = black_box(unsafe { (self.f[s])(&self.n, self.x.as_ptr(), &inc, self.y.as_ptr(), &inc) });
    }
    fn diff(&self, s: usize, r: usize) -> f64 {
        // Relative to the sum of |x_i*y_i| scale: a dot product of random signs can cancel to
        // near zero, where a plain relative difference says nothing about correctness.
        let scale: f64 = self.x.iter().zip(&self.y).map(|(a, b)| a.parts().0.abs() * b.parts().0.abs()).sum();
        let d = (self.r[s].parts().0 - self.r[r].parts().0).abs();
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

const BASES: &[&str] =
    &["gemm", "gemm_batch", "symm", "hemm", "syrk", "herk", "syr2k", "her2k", "trsm", "trmm", "gemv", "axpy", "dot"];

/// TRSM/TRMM variants: side, uplo, trans, diag as the BLAS characters (non-unit diagonal).
const TRXM_VARIANTS: &[&str] =
    &["LLNN", "LLTN", "LLCN", "LUNN", "LUTN", "LUCN", "RLNN", "RLTN", "RLCN", "RUNN", "RUTN", "RUCN"];

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
        if base.starts_with("he") && !complex {
            return Err(format!("`{name}`: {base} exists for c and z only"));
        }
        let (defaults, allowed): (Vec<&str>, &[&str]) = match base {
            "gemm" if complex => (vec!["NN", "NC"], &["NN", "NT", "TN", "TT", "NC", "CN", "CC"]),
            "gemm" => (vec!["NN"], &["NN", "NT", "TN", "TT"]),
            "trsm" | "trmm" => (vec!["LLNN"], TRXM_VARIANTS),
            "symm" | "hemm" => (vec!["LL"], &["LL", "LU", "RL", "RU"]),
            "syrk" | "syr2k" if complex => (vec!["LN"], &["LN", "UN", "LT", "UT"]),
            "syrk" | "syr2k" => (vec!["LN"], &["LN", "UN", "LT", "UT", "LC", "UC"]),
            "herk" | "her2k" => (vec!["LN"], &["LN", "UN", "LC", "UC"]),
            "gemv" => (vec!["N", "T"], &["N", "T", "C"]),
            "gemm_batch" => (vec!["NN", "STRIDED", "LOOP"], &["NN", "STRIDED", "LOOP", "SHARED_A"]),
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
            "gemm" | "symm" | "hemm" => 2.0 * n * n * n,
            "gemm_batch" => batch_count(n as usize) as f64 * 2.0 * n * n * n,
            "trsm" | "trmm" => n * n * n,
            "syrk" | "herk" => n * (n + 1.0) * n,
            "syr2k" | "her2k" => 2.0 * n * (n + 1.0) * n,
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
fn target(base: &str, prec: char, n: usize, llc: usize) -> (f64, bool) {
    if base == "gemm_batch" {
        // Issue 48: at least the best peer's batch everywhere.
        return (1.0, true);
    }
    match bytes(base, prec, n) {
        // Issue 44: Level 3 at 0.97 of the best peer from n = 512, Level 1/2 at 0.95 once the
        // operands no longer fit in the last-level cache.
        None => (0.97, n >= 512),
        Some(b) => (0.95, b > llc as f64),
    }
}

/// The problem of `spec` at `n`, one side per entry of `sides` (each a library; a library may
/// appear twice, the twin).
fn build<T: Elem>(spec: &Spec, n: usize, sides: &[&Lib]) -> Result<Box<dyn Problem>, String> {
    fn all<F: Copy>(sides: &[&Lib], sym: &str) -> Result<Vec<F>, String> {
        sides
            .iter()
            .map(|l| l.sym::<F>(sym).ok_or_else(|| format!("symbol {sym} not found in {} ({})", l.label, l.desc)))
            .collect()
    }
    let sym = spec.symbol();
    let k = sides.len();
    let mut rng = Rng::new(0x5EED ^ n as u64);
    let nn = n * n;
    let ci = n as c_int;
    Ok(match spec.base {
        "gemm" => {
            let v = spec.variant.as_bytes();
            let c = rng.vec::<T>(nn);
            Box::new(Gemm::<T> {
                f: all(sides, &sym)?,
                ta: v[0] as c_char,
                tb: v[1] as c_char,
                n: ci,
                a: rng.vec(nn),
                b: rng.vec(nn),
                c: vec![c; k],
            })
        }
        "gemm_batch" => {
            let count = batch_count(n);
            let c = rng.vec::<T>(nn * count);
            let v = spec.variant.as_str();
            let single_sym = format!("{}gemm_", spec.prec);
            let strided_sym = format!("{}gemm_batch_strided_", spec.prec);
            Box::new(GemmBatch::<T> {
                grouped: if v == "NN" { all(sides, &sym)? } else { Vec::new() },
                strided: if v == "STRIDED" || v == "SHARED_A" { all(sides, &strided_sym)? } else { Vec::new() },
                shared_a: v == "SHARED_A",
                single: if v == "LOOP" { all(sides, &single_sym)? } else { Vec::new() },
                n: ci,
                count,
                a: rng.vec(nn * count),
                b: rng.vec(nn * count),
                c: vec![c; k],
            })
        }
        "trsm" | "trmm" => {
            // Diagonal 2..3, off-diagonal entries O(1/n), so either triangle is well
            // conditioned at every n.
            let mut a = rng.vec::<T>(nn);
            for j in 0..n {
                for i in 0..n {
                    let (re, im) = a[i + j * n].parts();
                    a[i + j * n] =
                        if i == j { T::new(2.5 + 0.5 * re, 0.5 * im) } else { T::new(re / n as f64, im / n as f64) };
                }
            }
            let b0 = rng.vec::<T>(nn);
            let o = spec.variant.as_bytes();
            let opts = [o[0] as c_char, o[1] as c_char, o[2] as c_char, o[3] as c_char];
            Box::new(Trxm::<T> { f: all(sides, &sym)?, opts, n: ci, a, b: vec![b0.clone(); k], b0 })
        }
        "syrk" | "herk" | "syr2k" | "her2k" => {
            let c = rng.vec::<T>(nn);
            let o = spec.variant.as_bytes();
            let two = spec.base.ends_with("2k");
            Box::new(Rank::<T> {
                f: if two { Vec::new() } else { all(sides, &sym)? },
                f2: if two { all(sides, &sym)? } else { Vec::new() },
                opts: [o[0] as c_char, o[1] as c_char],
                n: ci,
                a: rng.vec(nn),
                b: if two { rng.vec(nn) } else { Vec::new() },
                c: vec![c; k],
            })
        }
        "symm" | "hemm" => {
            let c = rng.vec::<T>(nn);
            let o = spec.variant.as_bytes();
            Box::new(Symm::<T> {
                f: all(sides, &sym)?,
                opts: [o[0] as c_char, o[1] as c_char],
                n: ci,
                a: rng.vec(nn),
                b: rng.vec(nn),
                c: vec![c; k],
            })
        }
        "gemv" => {
            let y = rng.vec::<T>(n);
            Box::new(Gemv::<T> {
                f: all(sides, &sym)?,
                trans: spec.variant.as_bytes()[0] as c_char,
                n: ci,
                a: rng.vec(nn),
                x: rng.vec(n),
                y: vec![y; k],
            })
        }
        "axpy" => {
            let y0 = rng.vec::<T>(n);
            Box::new(Axpy::<T> { f: all(sides, &sym)?, n: ci, x: rng.vec(n), y: vec![y0.clone(); k], y0 })
        }
        "dot" => {
            Box::new(Dot::<T> { f: all(sides, &sym)?, n: ci, x: rng.vec(n), y: rng.vec(n), r: vec![T::default(); k] })
        }
        other => return Err(format!("no benchmark for {other}")),
    })
}

fn build_any(spec: &Spec, n: usize, sides: &[&Lib]) -> Result<Box<dyn Problem>, String> {
    match spec.prec {
        's' => build::<f32>(spec, n, sides),
        'd' => build::<f64>(spec, n, sides),
        'c' => build::<Cplx<f32>>(spec, n, sides),
        _ => build::<Cplx<f64>>(spec, n, sides),
    }
}

// ---------------------------------------------------------------------------------------------
// Timing

/// CPU time of the whole process, all threads, in seconds.
fn process_cpu_time() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes the timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// Before every timed block the process must be quiet: idle worker threads of the library
/// that ran before busy-wait for a while after a multi-threaded call (OpenBLAS's ~0.12 s, Intel
/// OpenMP's KMP_BLOCKTIME, 0.2 s), and on a machine with few cores a block timed meanwhile
/// would share a core with them (seen: MKL's 2-thread DGEMM n = 64 at 4 ms per call rather
/// than 10 us, one of its threads waiting for a time slice beside a spinning OpenBLAS worker).
/// So the block waits until the process used under a tenth of one core over a 10 ms window
/// (the process's CPU clock sees another thread's time only at a scheduler tick, every 4 ms at
/// HZ = 250, so a shorter window can miss a spinning thread altogether).
struct Settle {
    /// Longest wait, in seconds.
    max_wait: f64,
    /// Total time waited, and the waits that hit `max_wait`.
    waited: f64,
    timeouts: usize,
}

impl Settle {
    fn before(&mut self) {
        let start = Instant::now();
        loop {
            let (c0, w0) = (process_cpu_time(), Instant::now());
            std::thread::sleep(Duration::from_millis(10));
            let (cpu, wall) = (process_cpu_time() - c0, w0.elapsed().as_secs_f64());
            if cpu < 0.1 * wall {
                break;
            }
            if start.elapsed().as_secs_f64() > self.max_wait {
                self.timeouts += 1;
                break;
            }
        }
        self.waited += start.elapsed().as_secs_f64();
    }
}

/// A reading of the machine's CPU use: busy seconds of all processes (/proc/stat) and of this
/// one, and the seconds the hypervisor ran something else on our virtual CPUs (steal).
#[derive(Clone, Copy)]
struct Load {
    busy: f64,
    own: f64,
    steal: f64,
    at: Instant,
}

impl Load {
    fn now() -> Option<Load> {
        let text = std::fs::read_to_string("/proc/stat").ok()?;
        let v: Vec<f64> = text.lines().next()?.split_whitespace().skip(1).map(|x| x.parse().unwrap_or(0.0)).collect();
        // user nice system idle iowait irq softirq (steal, the hypervisor's, is not ours).
        let busy = v.first()? + v.get(1)? + v.get(2)? + v.get(5)? + v.get(6)?;
        // SAFETY: sysconf is a plain query.
        let tck = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
        let steal = v.get(7).copied().unwrap_or(0.0);
        Some(Load { busy: busy / tck, own: process_cpu_time(), steal: steal / tck, at: Instant::now() })
    }
    /// Share of the machine the hypervisor took away since `self`.
    fn steal_since(&self, now: &Load) -> f64 {
        let wall = now.at.duration_since(self.at).as_secs_f64().max(1e-3);
        ((now.steal - self.steal) / (wall * cores() as f64)).max(0.0)
    }
    /// Share of the machine (1 = every core) that other processes used since `self`.
    fn others_since(&self, now: &Load) -> f64 {
        let wall = now.at.duration_since(self.at).as_secs_f64().max(1e-3);
        (((now.busy - self.busy) - (now.own - self.own)) / (wall * cores() as f64)).max(0.0)
    }
}

/// Before a case: wait up to `max` seconds for other processes to use under a tenth of the
/// machine (over 200 ms); a build beside the benchmark skews 2-thread cases by far more than
/// their differences. Returns the share they used in the last window.
fn wait_idle(max: f64) -> f64 {
    let start = Instant::now();
    loop {
        let Some(a) = Load::now() else { return f64::NAN };
        std::thread::sleep(Duration::from_millis(200));
        let Some(b) = Load::now() else { return f64::NAN };
        let other = a.others_since(&b);
        if other < 0.1 || start.elapsed().as_secs_f64() >= max {
            return other;
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

fn median(v: &mut Vec<f64>) -> f64 {
    v.retain(|x| !x.is_nan());
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        0.5 * (v[m - 1] + v[m])
    }
}

/// The libraries of a table: names of the rate columns (hyblas first), and the twin's library.
#[derive(Clone, Debug)]
struct Cols {
    libs: Vec<String>,
    twin: Option<String>,
}

#[derive(Clone, Debug)]
struct Row {
    base: String,
    prec: char,
    variant: String,
    n: usize,
    threads: usize,
    /// GFLOP/s of each library, in `Cols::libs` order (NaN: not run).
    rates: Vec<f64>,
    /// The fastest peer (an index into `rates`).
    best: Option<usize>,
    /// hyblas / best peer: median of the per-round ratios (each pair of blocks ran in one
    /// round, so load from other processes cancels better than in a ratio of medians), and
    /// the lowest and highest of them (NaN: unknown, e.g. an old CSV).
    ratio: f64,
    ratio_lo: f64,
    ratio_hi: f64,
    /// The twin's GFLOP/s, and twin / its library (median of per-round ratios): the noise.
    twin_rate: f64,
    twin_ratio: f64,
    /// Largest normwise difference of hyblas's result from a peer's, and each peer's.
    diff: f64,
    diffs: Vec<f64>,
    /// Share of the machine other processes used during the case, and the share the
    /// hypervisor stole (NaN: unknown).
    other: f64,
    steal: f64,
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
    /// Other processes or the hypervisor took more than `BUSY` of the machine during the case.
    fn busy(&self) -> bool {
        self.other > BUSY || self.steal > BUSY
    }
    fn unit(&self) -> &'static str {
        if bytes(&self.base, self.prec, self.n).is_some() {
            "GB/s"
        } else {
            "GFLOP/s"
        }
    }
    /// The peers whose results differ from hyblas's beyond tolerance.
    fn differs_from(&self, cols: &Cols) -> Vec<String> {
        let tol = tolerance(&self.base, self.prec, self.n);
        let named: Vec<String> =
            self.diffs.iter().enumerate().filter(|(_, d)| **d > tol).map(|(i, _)| cols.libs[i].clone()).collect();
        if named.is_empty() && !self.ok() {
            vec!["a peer".into()]
        } else {
            named
        }
    }
}

/// One case: `sides[s]` is the library of side `s` (side 0 is hyblas; `twin`, when set, is the
/// side that times a library a second time).
#[allow(clippy::too_many_arguments)]
fn run_case(
    p: &mut dyn Problem,
    spec: &Spec,
    n: usize,
    threads: usize,
    sides: &[usize],
    twin: Option<usize>,
    libs: &[Lib],
    opts: &Opts,
    settle: &mut Settle,
) -> Row {
    let k = sides.len();
    let fl = flops(spec.base, spec.prec, n);
    let load0 = Load::now();
    let started = Instant::now();
    // Check call, which is also the first warm-up: same inputs, same starting outputs.
    let mut first = vec![0.0f64; k];
    for (s, secs) in first.iter_mut().enumerate() {
        p.restore(s);
        settle.before();
        let t = Instant::now();
        p.call(s);
        *secs = t.elapsed().as_secs_f64();
    }
    // hyblas's result against each peer's (on the peer's scale); a NaN is a difference.
    let mut diffs = vec![f64::NAN; libs.len()];
    diffs[0] = 0.0;
    let mut diff = 0.0f64;
    for s in (1..k).filter(|&s| Some(s) != twin) {
        let d = p.diff(0, s);
        diffs[sides[s]] = d;
        diff = if d.is_nan() || diff.is_nan() { f64::NAN } else { diff.max(d) };
    }

    // Seconds per call of each side, one entry per round.
    let mut samples: Vec<Vec<f64>> = Vec::new();
    let mut est = first.clone();
    if first.iter().all(|&t| t >= 0.5) {
        // Half a second and more per call: start-up effects are lost in the noise, so the
        // check calls count as the first round instead of being thrown away.
        samples.push(first.clone());
    } else {
        // Warm-up (caches, pools, clock ramp) and a better per-call estimate, for the sides
        // whose check call was short.
        for s in 0..k {
            if first[s] < 0.25 {
                let reps = ((opts.block * 0.5 / first[s].max(1e-9)).ceil() as usize).clamp(1, 1 << 20);
                settle.before();
                est[s] = time_block(p, s, reps);
            }
        }
    }
    // Each side's block is about --block-ms long (one call when a call takes longer).
    let reps_for = |secs: f64| ((opts.block / secs.max(1e-9)).ceil() as usize).clamp(1, 1 << 24);
    let mut reps: Vec<usize> = est.iter().map(|&e| reps_for(e)).collect();
    let round: f64 = est.iter().zip(&reps).map(|(e, r)| e * *r as f64).sum();
    // Rounds that fit in what is left of the case's time cap, at least three in total (one
    // with --quick) and at most --rounds.
    let seeded = samples.len();
    let left = (opts.case_cap * k as f64 - started.elapsed().as_secs_f64()).max(0.0);
    let least = opts.rounds.min(if opts.quick { 1 } else { 3 }).saturating_sub(seeded);
    let rounds = ((left / round.max(1e-9)) as usize).min(opts.rounds.saturating_sub(seeded)).max(least);

    for r in 0..rounds {
        // Rotate the order, so no library always follows the same one.
        let mut secs = vec![0.0f64; k];
        for i in 0..k {
            let s = (r + seeded + i) % k;
            settle.before();
            secs[s] = time_block(p, s, reps[s]);
        }
        if std::env::var_os("BLASBENCH_DEBUG").is_some() {
            let order: Vec<usize> = (0..k).map(|i| (r + seeded + i) % k).collect();
            eprintln!(
                "    round {r} order {order:?} reps {reps:?} us/call {:?}",
                secs.iter().map(|x| (x * 1e6).round()).collect::<Vec<_>>()
            );
        }
        // The next round's blocks from this round's times (a warm-up estimate can be off when
        // a library's first calls after idling were slow).
        reps = secs.iter().map(|&t| reps_for(t)).collect();
        samples.push(secs);
    }

    let load1 = Load::now();
    let mut rates = vec![f64::NAN; libs.len()];
    for s in 0..k {
        if Some(s) != twin {
            let mut v: Vec<f64> = samples.iter().map(|t| fl / t[s] / 1e9).collect();
            rates[sides[s]] = median(&mut v);
        }
    }
    // The best peer is another BLAS: a build of hyblas given as a peer (`--peer hyblas-old=...`,
    // to compare builds) is a column, not a competitor.
    let best_side = (1..k)
        .filter(|&s| Some(s) != twin && !libs[sides[s]].label.starts_with("hyblas"))
        .max_by(|&a, &b| rates[sides[a]].total_cmp(&rates[sides[b]]));
    let (mut ratio, mut lo, mut hi) = (f64::NAN, f64::NAN, f64::NAN);
    if let Some(b) = best_side {
        let mut rr: Vec<f64> = samples.iter().map(|t| t[b] / t[0]).collect();
        lo = rr.iter().copied().fold(f64::INFINITY, f64::min);
        hi = rr.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        ratio = median(&mut rr);
    }
    let (mut twin_rate, mut twin_ratio) = (f64::NAN, f64::NAN);
    if let Some(t) = twin {
        let orig = (0..k).find(|&s| s != t && sides[s] == sides[t]).unwrap_or(0);
        let mut v: Vec<f64> = samples.iter().map(|x| fl / x[t] / 1e9).collect();
        twin_rate = median(&mut v);
        let mut rr: Vec<f64> = samples.iter().map(|x| x[orig] / x[t]).collect();
        twin_ratio = median(&mut rr);
    }
    Row {
        base: spec.base.to_string(),
        prec: spec.prec,
        variant: spec.variant.clone(),
        n,
        threads,
        rates,
        best: best_side.map(|s| sides[s]),
        ratio,
        ratio_lo: lo,
        ratio_hi: hi,
        twin_rate,
        twin_ratio,
        diff,
        diffs,
        other: load0.zip(load1).map(|(a, b)| a.others_since(&b)).unwrap_or(f64::NAN),
        steal: load0.zip(load1).map(|(a, b)| a.steal_since(&b)).unwrap_or(f64::NAN),
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

/// `family F model M stepping S` from /proc/cpuinfo (x86; the model name of a VM can be generic).
fn cpu_ids() -> String {
    let text = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let field = |key: &str| {
        text.lines()
            .find(|l| l.split(':').next().is_some_and(|k| k.trim() == key))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
    };
    match (field("cpu family"), field("model"), field("stepping")) {
        (Some(f), Some(m), Some(s)) => format!("family {f} model {m} stepping {s}"),
        _ => String::new(),
    }
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname").map(|s| s.trim().to_string()).unwrap_or_else(|_| "host".into())
}

fn cores() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
}

/// Per-core L2 size in bytes (1 MiB when sysfs doesn't say).
fn l2_bytes() -> usize {
    cache_bytes("2").unwrap_or(1 << 20)
}

/// The last-level cache (L3, else L2) in bytes: Level 1/2 targets apply past it.
fn llc_bytes() -> usize {
    cache_bytes("3").unwrap_or_else(l2_bytes)
}

/// The size of cpu0's data/unified cache of `level`, from sysfs.
fn cache_bytes(level: &str) -> Option<usize> {
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
        let lv = std::fs::read_to_string(format!("{dir}/level")).unwrap_or_default();
        let ty = std::fs::read_to_string(format!("{dir}/type")).unwrap_or_default();
        if lv.trim() == level && ty.trim() != "Instruction" {
            if let Some(b) = std::fs::read_to_string(format!("{dir}/size")).ok().as_deref().and_then(parse) {
                return Some(b);
            }
        }
    }
    None
}

fn slug(s: &str) -> String {
    let mut out = String::new();
    let s = s.replace("(R)", "").replace("(r)", "").replace("(TM)", "").replace("(tm)", "");
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

/// A rate or ratio for the CSV (empty: not measured).
fn num(v: f64, prec: usize) -> String {
    if v.is_nan() {
        String::new()
    } else {
        format!("{v:.prec$}")
    }
}

fn csv(rows: &[Row], cols: &Cols, meta: &str) -> String {
    let mut s = String::new();
    for line in meta.lines() {
        let _ = writeln!(s, "# {line}");
    }
    s.push_str("routine,precision,variant,n,threads");
    for l in &cols.libs {
        let _ = write!(s, ",{l}_gflops");
    }
    s.push_str(",best_peer,ratio,ratio_min,ratio_max");
    if let Some(t) = &cols.twin {
        let _ = write!(s, ",{t}_twin_gflops,twin_ratio");
    }
    s.push_str(",max_rel_diff");
    for l in &cols.libs[1..] {
        let _ = write!(s, ",{l}_diff");
    }
    s.push_str(",other_load,steal\n");
    for r in rows {
        let _ = write!(s, "{},{},{},{},{}", r.base, r.prec, r.variant, r.n, r.threads);
        for v in &r.rates {
            let _ = write!(s, ",{}", num(*v, 4));
        }
        let best = r.best.map(|b| cols.libs[b].as_str()).unwrap_or("");
        let _ = write!(s, ",{best},{},{},{}", num(r.ratio, 4), num(r.ratio_lo, 4), num(r.ratio_hi, 4));
        if cols.twin.is_some() {
            let _ = write!(s, ",{},{}", num(r.twin_rate, 4), num(r.twin_ratio, 4));
        }
        let _ = write!(s, ",{:.3e}", r.diff);
        for d in &r.diffs[1..] {
            let _ = write!(s, ",{}", if d.is_nan() { String::new() } else { format!("{d:.3e}") });
        }
        let _ = writeln!(s, ",{},{}", num(r.other, 3), num(r.steal, 3));
    }
    s
}

/// Reads a CSV of this program: the current layout (one `<lib>_gflops` column per library,
/// `# ` metadata lines) or the earlier one (`hyblas_gflops,openblas_gflops,ratio,max_rel_diff`).
fn read_csv(path: &Path) -> Result<(Cols, Vec<Row>, String), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut meta = String::new();
    let mut lines = text.lines().enumerate().filter(|(_, l)| {
        if let Some(m) = l.strip_prefix('#') {
            meta.push_str(m.strip_prefix(' ').unwrap_or(m));
            meta.push('\n');
            false
        } else {
            !l.trim().is_empty()
        }
    });
    let (_, header) = lines.next().ok_or_else(|| format!("{}: empty", path.display()))?;
    let head: Vec<&str> = header.split(',').map(str::trim).collect();
    let col = |name: &str| head.iter().position(|h| *h == name);
    let need = |name: &str| col(name).ok_or_else(|| format!("{}: no column {name}", path.display()));
    let (c_routine, c_prec, c_var, c_n, c_thr) =
        (need("routine")?, need("precision")?, need("variant")?, need("n")?, need("threads")?);
    let (c_ratio, c_diff) = (need("ratio")?, need("max_rel_diff")?);
    let mut libs: Vec<(String, usize)> = Vec::new();
    let mut twin = None;
    for (i, h) in head.iter().enumerate() {
        if let Some(name) = h.strip_suffix("_gflops") {
            match name.strip_suffix("_twin") {
                Some(t) => twin = Some((t.to_string(), i)),
                None => libs.push((name.to_string(), i)),
            }
        }
    }
    if libs.first().map(|l| l.0.as_str()) != Some("hyblas") || libs.len() < 2 {
        return Err(format!("{}: expected hyblas_gflops and at least one peer's _gflops column", path.display()));
    }
    let cols = Cols { libs: libs.iter().map(|l| l.0.clone()).collect(), twin: twin.as_ref().map(|t| t.0.clone()) };
    let (c_best, c_lo, c_hi, c_tr) = (col("best_peer"), col("ratio_min"), col("ratio_max"), col("twin_ratio"));
    let (c_other, c_steal) = (col("other_load"), col("steal"));
    let diff_cols: Vec<Option<usize>> = cols.libs.iter().map(|l| col(&format!("{l}_diff"))).collect();
    let mut rows = Vec::new();
    for (i, line) in lines {
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        let bad = || format!("{}:{}: malformed line", path.display(), i + 1);
        if f.len() != head.len() {
            return Err(bad());
        }
        let num = |k: usize| if f[k].is_empty() { Ok(f64::NAN) } else { f[k].parse::<f64>().map_err(|_| bad()) };
        let opt = |k: Option<usize>| k.map(num).unwrap_or(Ok(f64::NAN));
        let rates = libs.iter().map(|l| num(l.1)).collect::<Result<Vec<f64>, String>>()?;
        let best = match c_best {
            Some(k) => cols.libs.iter().position(|l| l == f[k]),
            None => (1..rates.len()).filter(|&j| !rates[j].is_nan()).max_by(|&a, &b| rates[a].total_cmp(&rates[b])),
        };
        rows.push(Row {
            base: f[c_routine].to_string(),
            prec: f[c_prec].chars().next().ok_or_else(bad)?,
            variant: f[c_var].to_string(),
            n: f[c_n].parse().map_err(|_| bad())?,
            threads: f[c_thr].parse().map_err(|_| bad())?,
            rates,
            best,
            ratio: num(c_ratio)?,
            ratio_lo: opt(c_lo)?,
            ratio_hi: opt(c_hi)?,
            twin_rate: opt(twin.as_ref().map(|t| t.1))?,
            twin_ratio: opt(c_tr)?,
            diff: num(c_diff)?,
            diffs: diff_cols.iter().map(|&k| opt(k)).collect::<Result<_, _>>()?,
            other: opt(c_other)?,
            steal: opt(c_steal)?,
        });
    }
    Ok((cols, rows, meta))
}

fn fmt_rate(v: f64) -> String {
    if v.is_nan() {
        "-".into()
    } else if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

fn fmt_ratio(v: f64) -> String {
    if v.is_nan() {
        "-".into()
    } else {
        format!("{v:.2}")
    }
}

/// `lo-hi` of the per-round ratios.
fn fmt_range(r: &Row) -> String {
    if r.ratio_lo.is_nan() {
        "-".into()
    } else {
        format!("{:.2}-{:.2}", r.ratio_lo, r.ratio_hi)
    }
}

/// Notes of a row: wrong results, a missed target.
fn notes(r: &Row, cols: &Cols, llc: usize) -> Vec<String> {
    let (goal, applies) = target(&r.base, r.prec, r.n, llc);
    let mut notes = Vec::new();
    if !r.ok() {
        notes.push(format!("WRONG RESULT (differs from {})", r.differs_from(cols).join(", ")));
    }
    if applies && r.ratio < goal {
        notes.push(format!("below target {goal:.2}"));
    }
    if r.busy() {
        notes.push(format!(
            "other processes used {:.0}%, the hypervisor stole {:.0}% of the machine",
            r.other * 100.0,
            r.steal * 100.0
        ));
    }
    notes
}

/// Share of the machine used by other processes (or stolen by the hypervisor) above which a
/// case is marked.
const BUSY: f64 = 0.1;

/// One line per case, aligned, for the terminal.
fn text_table(rows: &[Row], cols: &Cols, llc: usize) -> String {
    let mut s = String::new();
    let w: Vec<usize> = cols.libs.iter().map(|l| l.len().max(8)).collect();
    let _ = write!(s, "{:<12} {:>9} {:>3}", "routine", "n", "thr");
    for (l, w) in cols.libs.iter().zip(&w) {
        let _ = write!(s, " {l:>w$}");
    }
    let bw = cols.libs[1..].iter().map(|l| l.len()).max().unwrap_or(4).max(4);
    let _ = write!(s, " {:<7} {:<bw$} {:>6} {:>9}", "unit", "best", "h/best", "rounds");
    if let Some(t) = &cols.twin {
        let _ = write!(s, " {:>9}", format!("{t}~/{t}"));
    }
    let _ = writeln!(s, "  {:>8}  notes", "diff");
    for r in rows {
        let _ = write!(s, "{:<12} {:>9} {:>3}", r.label(), r.n, r.threads);
        for (v, w) in r.rates.iter().zip(&w) {
            let _ = write!(s, " {:>w$}", fmt_rate(r.shown(*v)));
        }
        let best = r.best.map(|b| cols.libs[b].as_str()).unwrap_or("-");
        let _ = write!(s, " {:<7} {best:<bw$} {:>6} {:>9}", r.unit(), fmt_ratio(r.ratio), fmt_range(r));
        if cols.twin.is_some() {
            let _ = write!(s, " {:>9}", fmt_ratio(r.twin_ratio));
        }
        let _ = writeln!(s, "  {:>8.1e}  {}", r.diff, notes(r, cols, llc).join(", "));
    }
    s
}

/// Markdown for the README: one row per routine, size and thread count, one rate column per
/// library, then the fastest peer and hyblas's ratio to it.
fn markdown(rows: &[Row], cols: &Cols, llc: usize, meta: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{}\n", meta.trim_end());
    let ranges = rows.iter().any(|r| !r.ratio_lo.is_nan());
    let mut head = String::from("| routine | n | threads | unit |");
    let mut rule = String::from("|---|---:|---:|---|");
    for l in &cols.libs {
        let _ = write!(head, " {l} |");
        rule.push_str("---:|");
    }
    head.push_str(" best peer | hyblas / best |");
    rule.push_str("---|---:|");
    if ranges {
        head.push_str(" rounds |");
        rule.push_str("---:|");
    }
    if let Some(t) = &cols.twin {
        let _ = write!(head, " {t}~ / {t} |");
        rule.push_str("---:|");
    }
    let _ = writeln!(s, "{head}\n{rule}");
    let (mut miss, mut wrong, mut busy) = (false, false, false);
    for r in rows {
        let _ = write!(s, "| {} | {} | {} | {} |", r.label(), r.n, r.threads, r.unit());
        for v in &r.rates {
            let _ = write!(s, " {} |", fmt_rate(r.shown(*v)));
        }
        let (goal, applies) = target(&r.base, r.prec, r.n, llc);
        let mut mark = String::new();
        if applies && r.ratio < goal {
            mark.push_str(" \\*");
            miss = true;
        }
        if !r.ok() {
            mark.push_str(" **wrong**");
            wrong = true;
        }
        if r.busy() {
            mark.push_str(" †");
            busy = true;
        }
        let best = r.best.map(|b| cols.libs[b].as_str()).unwrap_or("-");
        let _ = write!(s, " {best} | {}{mark} |", fmt_ratio(r.ratio));
        if ranges {
            let _ = write!(s, " {} |", fmt_range(r));
        }
        if cols.twin.is_some() {
            let _ = write!(s, " {} |", fmt_ratio(r.twin_ratio));
        }
        s.push('\n');
    }
    s.push_str(
        "\nhyblas / best = hyblas's rate over the fastest peer's (median of per-round ratios; each round times \
         every library once, in rotating order). Level 1/2 in GB/s, Level 3 in GFLOP/s; Level 1 n is the vector \
         length.\n",
    );
    if ranges {
        s.push_str("rounds = the lowest and highest per-round hyblas / best.\n");
    }
    if let Some(t) = &cols.twin {
        let _ = writeln!(
            s,
            "{t}~ / {t} = {t} timed a second time as its own column, over itself (median of per-round ratios): \
             the noise beside the results."
        );
    }
    if miss {
        s.push_str("\\* below the target (Level 3 0.97 for n >= 512; Level 1/2 0.95 past the last-level cache).\n");
    }
    if wrong {
        s.push_str("**wrong**: results differ from a peer's beyond rounding.\n");
    }
    if busy {
        let _ = writeln!(
            s,
            "† other processes used, or the hypervisor stole, more than {:.0}% of the machine during the case.",
            BUSY * 100.0
        );
    }
    s
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// Ratio against n, one panel per routine variant, one line per thread count, the target from
/// the first size it applies to; the twin's ratio (the noise) dashed.
fn svg(rows: &[Row], cols: &Cols, title: &str, llc: usize) -> String {
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
    if let Some(t) = &cols.twin {
        let _ = writeln!(
            s,
            r##"<line x1="{lx}" y1="38" x2="{}" y2="38" stroke="#777" stroke-dasharray="5,3"/><text x="{}" y="42">{} (noise)</text>"##,
            lx + 20.0,
            lx + 25.0,
            esc(&format!("{t}~ / {t}"))
        );
        lx += 150.0;
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
        let top =
            pr.iter().flat_map(|r| [r.ratio, r.twin_ratio]).filter(|v| v.is_finite()).fold(1.25f64, f64::max).min(4.0);
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
            let stroke = if (v - 1.0).abs() < 1e-9 { "#444" } else { "#ddd" };
            let _ = writeln!(
                s,
                r#"<line x1="{x0}" y1="{y:.1}" x2="{x1}" y2="{y:.1}" stroke="{stroke}"/><text x="{}" y="{:.1}" text-anchor="end">{v:.2}</text>"#,
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
        if let Some(&from) = ns.iter().find(|&&n| target(&pr[0].base, pr[0].prec, n, llc).1) {
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
            let noise: Vec<String> = pts
                .iter()
                .filter(|r| r.twin_ratio.is_finite())
                .map(|r| format!("{:.1},{:.1}", xs(r.n), ys(r.twin_ratio)))
                .collect();
            if !noise.is_empty() {
                let _ = writeln!(
                    s,
                    r#"<polyline points="{}" fill="none" stroke="{c}" stroke-width="1" stroke-dasharray="5,3" opacity="0.7"/>"#,
                    noise.join(" ")
                );
            }
            let path: Vec<String> = pts
                .iter()
                .filter(|r| r.ratio.is_finite())
                .map(|r| format!("{:.1},{:.1}", xs(r.n), ys(r.ratio)))
                .collect();
            let _ = writeln!(s, r#"<polyline points="{}" fill="none" stroke="{c}" stroke-width="2"/>"#, path.join(" "));
            for r in pts.iter().filter(|r| r.ratio.is_finite()) {
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

#[allow(clippy::too_many_arguments)]
fn write_outputs(
    rows: &[Row],
    cols: &Cols,
    out: &Path,
    stem: &str,
    meta: &str,
    title: &str,
    llc: usize,
    with_csv: bool,
) -> Result<(), String> {
    std::fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let write = |ext: &str, text: String| {
        let p = out.join(format!("{stem}.{ext}"));
        std::fs::write(&p, text).map_err(|e| format!("cannot write {}: {e}", p.display()))
    };
    if with_csv {
        write("csv", csv(rows, cols, meta))?;
    }
    write("md", markdown(rows, cols, llc, meta))?;
    write("svg", svg(rows, cols, title, llc))?;
    Ok(())
}

fn title_of(cols: &Cols, what: &str) -> String {
    format!("hyblas / fastest of {} — {what}", cols.libs[1..].join(", "))
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

/// The library kind a file name suggests (for a library given by path).
fn kind_of(path: &Path) -> Kind {
    let file = path.file_name().map(|f| f.to_string_lossy().to_lowercase()).unwrap_or_default();
    if file.contains("hyblas") {
        Kind::Hyblas
    } else if file.contains("openblas") {
        Kind::OpenBlas
    } else if file.contains("mkl") {
        Kind::Mkl
    } else {
        Kind::Other
    }
}

fn run(opts: &Opts) -> Result<i32, String> {
    let llc = llc_bytes();
    if let Some(path) = &opts.from_csv {
        let (cols, rows, meta) = read_csv(path)?;
        let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "results".into());
        let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let meta = if meta.is_empty() { format!("From {}.", path.display()) } else { meta };
        print!("{}\n{}", text_table(&rows, &cols, llc), markdown(&rows, &cols, llc, &meta));
        write_outputs(&rows, &cols, dir, &stem, &meta, &title_of(&cols, &stem), llc, false)?;
        eprintln!("wrote {}/{stem}.md and .svg", dir.display());
        return Ok(if rows.iter().all(Row::ok) { 0 } else { 1 });
    }

    let specs = parse_specs(&opts.routines)?;
    let hpath = hyblas_path(opts)?;
    let mut lib_specs =
        vec![LibSpec { label: "hyblas".into(), kind: kind_of(&hpath), paths: vec![hpath], prefix: "".into() }];
    lib_specs.extend(peer_specs(opts)?);
    let env_notes = prepare_env(&lib_specs, opts)?;
    let libs = lib_specs.iter().map(Lib::open).collect::<Result<Vec<Lib>, String>>()?;
    let twin = match &opts.twin {
        Some(t) => Some(
            libs.iter()
                .position(|l| &l.label == t)
                .ok_or_else(|| format!("--twin {t}: no library of that name (have {})", label_list(&libs)))?,
        ),
        None => None,
    };
    let cols = Cols { libs: libs.iter().map(|l| l.label.clone()).collect(), twin: twin.map(|t| libs[t].label.clone()) };

    let model = cpu_model();
    let cpu = if model == "unknown cpu" { hostname() } else { model.clone() };
    let mut stem = format!("cpu-{}", slug(&cpu));
    if let Some(tag) = &opts.tag {
        stem = format!("{stem}-{}", slug(tag));
    }
    let ids = cpu_ids();
    let machine = format!(
        "{model}{}, {} cores, L2 {} KiB per core, last-level cache {} MiB, host {}",
        if ids.is_empty() { String::new() } else { format!(" ({ids})") },
        cores(),
        l2_bytes() >> 10,
        llc >> 20,
        hostname()
    );
    let mut meta = format!(
        "{machine}; blocks {} ms, up to {} rounds (at least {}), each round times every library once in rotating order.\n",
        (opts.block * 1e3).round(),
        opts.rounds,
        opts.rounds.min(if opts.quick { 1 } else { 3 })
    );
    eprintln!("blasbench: {machine}");
    for lib in &libs {
        let control = if lib.set_threads.is_none() { " (no thread control: runs at its own default)" } else { "" };
        let kernels = if lib.kernels.is_empty() { String::new() } else { format!("; {}", lib.kernels) };
        let _ = writeln!(meta, "- {}: {}{control}{kernels}", lib.label, lib.desc);
        eprintln!("  {:<16} {}{control}\n  {:<16} {}", lib.label, lib.desc, "", lib.kernels);
    }
    for note in &env_notes {
        let _ = writeln!(meta, "- {note}");
        eprintln!("  note: {note}");
    }
    if let Some(t) = twin {
        let _ = writeln!(meta, "- {0}~: {0} timed a second time, as its own column (noise)", libs[t].label);
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    let _ = writeln!(meta, "- command: blasbench {}", args.join(" "));
    let peak_start = hyblas::cpu::simd::fma_peak_gflops();
    if let Some(p) = peak_start {
        let _ = writeln!(meta, "- one core's double-precision FMA peak, measured at the start: {p:.1} GFLOP/s");
        eprintln!("  one core's FMA peak (double, AVX-512): {p:.1} GFLOP/s");
    }

    if std::env::var("HYBLAS_TRACE").is_ok_and(|v| !matches!(v.as_str(), "" | "0" | "off")) {
        eprintln!("  note: HYBLAS_TRACE is set, so hyblas's timings include writing a trace line per call");
    }

    // Resolve every routine up front so a missing one is reported once, before any timing:
    // hyblas must have it, a peer without it gets an empty column.
    let mut runnable = Vec::new();
    let mut skipped = Vec::new();
    for spec in specs {
        let sym = spec.symbol();
        let missing: Vec<&Lib> = libs.iter().filter(|l| l.sym::<unsafe extern "C" fn()>(&sym).is_none()).collect();
        for l in &missing {
            let msg = format!(
                "{}: symbol {}{sym} not found in {} ({}){}",
                spec.label(),
                l.prefix,
                l.label,
                l.desc,
                if l.kind == Kind::Hyblas || l.label == "hyblas" { ", skipped" } else { ", column left empty" }
            );
            eprintln!("  {msg}");
            skipped.push(msg);
        }
        if missing.iter().all(|l| l.label != "hyblas") {
            runnable.push(spec);
        }
    }
    let sizes_of = |spec: &Spec| -> Vec<usize> {
        let capped = opts.default_sizes && matches!(spec.prec, 'c' | 'z') && !spec.level1() && spec.base != "gemv";
        opts.sizes.iter().copied().filter(|&n| !capped || n <= COMPLEX_L3_MAX).collect()
    };
    let total: usize = runnable.iter().map(|s| sizes_of(s).len() * opts.threads.len()).sum();
    let title = title_of(&cols, &format!("{model}, {} cores", cores()));
    let mut rows: Vec<Row> = Vec::new();
    let mut settle = Settle { max_wait: opts.settle, waited: 0.0, timeouts: 0 };
    let started = Instant::now();
    let mut done = 0;
    let mut warned_threads = vec![false; libs.len()];
    for spec in &runnable {
        let sym = spec.symbol();
        // Sides: every library that has the routine, then the twin.
        let mut sides: Vec<usize> =
            (0..libs.len()).filter(|&i| libs[i].sym::<unsafe extern "C" fn()>(&sym).is_some()).collect();
        let twin_side = twin.filter(|t| sides.contains(t)).map(|t| {
            sides.push(t);
            sides.len() - 1
        });
        let side_libs: Vec<&Lib> = sides.iter().map(|&i| &libs[i]).collect();
        for size in sizes_of(spec) {
            let n = blas_n(spec, size);
            let mut p = build_any(spec, n, &side_libs)?;
            for &t in &opts.threads {
                done += 1;
                for (i, lib) in libs.iter().enumerate() {
                    if let Some(got) = lib.threads(t) {
                        if got != t && !warned_threads[i] {
                            eprintln!("  note: {} runs {got} threads when asked for {t}", lib.label);
                            warned_threads[i] = true;
                        }
                    }
                }
                let t0 = Instant::now();
                if opts.idle_wait > 0.0 {
                    let other = wait_idle(opts.idle_wait);
                    if other >= 0.1 {
                        eprintln!("  note: other processes still use {:.0}% of the machine", other * 100.0);
                    }
                }
                let row = run_case(p.as_mut(), spec, n, t, &sides, twin_side, &libs, opts, &mut settle);
                let mut line = format!("[{done:>3}/{total}] {:<10} n={:<8} t={t}:", spec.label(), n);
                for (i, v) in row.rates.iter().enumerate() {
                    if !v.is_nan() {
                        let _ = write!(line, " {} {}", libs[i].label, fmt_rate(row.shown(*v)));
                    }
                }
                let best = row.best.map(|b| libs[b].label.as_str()).unwrap_or("-");
                let _ = write!(line, " {}; hyblas/{best} {} ({})", row.unit(), fmt_ratio(row.ratio), fmt_range(&row));
                if let Some(t) = twin {
                    let _ = write!(line, ", {0}~/{0} {1}", libs[t].label, fmt_ratio(row.twin_ratio));
                }
                let _ = write!(line, ", diff {:.1e}", row.diff);
                if row.busy() {
                    let _ =
                        write!(line, ", other processes {:.0}%, steal {:.0}%", row.other * 100.0, row.steal * 100.0);
                }
                if !row.ok() {
                    let _ = write!(line, "  WRONG RESULT (differs from {})", row.differs_from(&cols).join(", "));
                }
                eprintln!("{line} ({:.1}s)", t0.elapsed().as_secs_f64());
                rows.push(row);
                // Rewritten after every case so an interrupted run keeps what it measured.
                write_outputs(&rows, &cols, &opts.out, &stem, &meta, &title, llc, true)?;
            }
        }
    }
    // One-thread DGEMM against the core's FMA peak, measured at the start and again now (the
    // clock of a shared machine drifts): the issue-44 target of 92%.
    if let (Some(p0), Some(p1)) = (peak_start, hyblas::cpu::simd::fma_peak_gflops()) {
        let peak = 0.5 * (p0 + p1);
        let _ = writeln!(meta, "- FMA peak at the end: {p1:.1} GFLOP/s");
        for r in rows.iter().filter(|r| r.base == "gemm" && r.prec == 'd' && r.threads == 1) {
            let _ = writeln!(
                meta,
                "- {} n = {}, 1 thread: {}",
                r.label(),
                r.n,
                cols.libs
                    .iter()
                    .zip(&r.rates)
                    .filter(|(_, x)| x.is_finite())
                    .map(|(l, x)| format!("{l} {:.0}%", 100.0 * x / peak))
                    .collect::<Vec<_>>()
                    .join(", ")
                    + " of the peak (mean of start and end)"
            );
        }
        write_outputs(&rows, &cols, &opts.out, &stem, &meta, &title, llc, true)?;
    }
    println!("{}", text_table(&rows, &cols, llc));
    println!("{}", markdown(&rows, &cols, llc, &meta));
    for msg in &skipped {
        println!("{msg}");
    }
    eprintln!(
        "blasbench: {} cases in {:.0} s ({:.0} s of it waiting for a quiet process before blocks{}); wrote {}/{stem}.csv, .md, .svg",
        rows.len(),
        started.elapsed().as_secs_f64(),
        settle.waited,
        if settle.timeouts > 0 {
            format!(", {} waits gave up after --settle-ms", settle.timeouts)
        } else {
            String::new()
        },
        opts.out.display()
    );
    let wrong = rows.iter().filter(|r| !r.ok()).count();
    if wrong > 0 {
        eprintln!("blasbench: {wrong} case(s) gave results that differ from a peer's beyond tolerance");
        return Ok(1);
    }
    Ok(0)
}

fn label_list(libs: &[Lib]) -> String {
    libs.iter().map(|l| l.label.as_str()).collect::<Vec<_>>().join(", ")
}
