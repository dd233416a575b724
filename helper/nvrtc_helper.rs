//! `hyblas-nvrtc`: compiles one kernel unit with NVRTC in a process of its own, so that a
//! program using hyblas never runs the compiler in its own address space.
//!
//! Why a process: a compile that is still running in a thread when the program exits crashes
//! it (libnvrtc's static objects are destroyed under the running compile; seen as SIGSEGV at
//! exit), and NVRTC takes hundreds of MB while it runs. A separate process can outlive the
//! program and still finish its cache entry, and it runs at the lowest CPU priority.
//!
//! build.rs compiles this file with the same rustc into `$OUT_DIR/hyblas-nvrtc`; the library
//! embeds the executable and starts it from memory (src/gpu/nvrtc.rs, `compile_in_helper`).
//!
//!   hyblas-nvrtc [--lib LIBNVRTC ...] [--cache-dir DIR --entry ENTRY] [--meta KEY=VALUE ...]
//!                --name NAME -- OPTION...
//!
//! The CUDA source comes on stdin. On success the cubin is stored at
//! DIR/nvrtc-<this NVRTC's version>/ENTRY.cubin (with its meta file, atomically:
//! src/gpu/cache_file.rs) before anything is written to stdout, so the entry lands even if the
//! program that asked is gone; then stdout gets that path, a newline and the cubin; exit status
//! 0. A compile error prints NVRTC's log on stderr and exits 1; anything else (no libnvrtc, bad
//! arguments) exits 2. The libraries named by --lib are tried in order (default: the usual
//! names).

#[path = "../src/gpu/cache_file.rs"]
mod cache_file;

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::io::{Read, Write};
use std::time::Instant;

extern "C" {
    fn dlopen(file: *const c_char, mode: c_int) -> *mut c_void;
    fn dlsym(handle: *mut c_void, name: *const c_char) -> *mut c_void;
    fn setpriority(which: c_int, who: u32, prio: c_int) -> c_int;
    fn signal(sig: c_int, handler: usize) -> usize;
}
const RTLD_NOW: c_int = 2;
const PRIO_PROCESS: c_int = 0;
const SIGPIPE: c_int = 13;
const SIG_IGN: usize = 1;

type Prog = *mut c_void;

fn fail(code: i32, msg: &str) -> ! {
    eprintln!("hyblas-nvrtc: {msg}");
    std::process::exit(code)
}

/// libnvrtc's entry points, looked up by name.
struct Nvrtc {
    lib: *mut c_void,
}

impl Nvrtc {
    /// The first of `names` that loads (the usual names when empty).
    fn open(mut names: Vec<String>) -> Nvrtc {
        if names.is_empty() {
            names = ["libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"].iter().map(|s| s.to_string()).collect();
        }
        for n in &names {
            let c = CString::new(n.as_str()).unwrap();
            // SAFETY: dlopen with a NUL-terminated name.
            let lib = unsafe { dlopen(c.as_ptr(), RTLD_NOW) };
            if !lib.is_null() {
                return Nvrtc { lib };
            }
        }
        fail(2, &format!("cannot load libnvrtc (tried {})", names.join(", ")))
    }

    fn sym<F: Copy>(&self, name: &str) -> F {
        let c = CString::new(name).unwrap();
        // SAFETY: looking up a symbol of a loaded library.
        let p = unsafe { dlsym(self.lib, c.as_ptr()) };
        if p.is_null() {
            fail(2, &format!("libnvrtc has no {name}"));
        }
        assert_eq!(std::mem::size_of::<F>(), std::mem::size_of::<*mut c_void>());
        // SAFETY: F is the function pointer type of `name` (NVRTC's documented prototypes).
        unsafe { std::mem::transmute_copy(&p) }
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (mut libs, mut dir, mut entry, mut name, mut meta) = (Vec::new(), None, None, None, String::new());
    let mut options = Vec::new();
    while let Some(a) = args.next() {
        match a.as_str() {
            "--lib" => libs.extend(args.next()),
            "--cache-dir" => dir = args.next(),
            "--entry" => entry = args.next(),
            "--name" => name = args.next(),
            "--meta" => {
                let kv = args.next().unwrap_or_else(|| fail(2, "--meta needs KEY=VALUE"));
                meta.push_str(&kv);
                meta.push('\n');
            }
            "--" => options.extend(args.by_ref()),
            other => fail(2, &format!("unknown argument {other}")),
        }
    }
    let name = name.unwrap_or_else(|| fail(2, "--name is required"));
    // The source first, at the asking program's priority: once it is read, the compile no
    // longer depends on that program staying alive.
    let mut source = Vec::new();
    if std::io::stdin().read_to_end(&mut source).is_err() || source.contains(&0) {
        fail(2, "cannot read the source from stdin");
    }
    // SAFETY: lowering this process's own priority; ignoring SIGPIPE so that a reader that went
    // away (the asking program exited) costs only the stdout copy, after the cache entry landed.
    unsafe {
        setpriority(PRIO_PROCESS, 0, 19);
        signal(SIGPIPE, SIG_IGN);
    }
    let nv = Nvrtc::open(libs);
    type Create = unsafe extern "C" fn(*mut Prog, *const c_char, *const c_char, c_int, *const *const c_char, *const *const c_char) -> c_int;
    type Compile = unsafe extern "C" fn(Prog, c_int, *const *const c_char) -> c_int;
    type Size = unsafe extern "C" fn(Prog, *mut usize) -> c_int;
    type Get = unsafe extern "C" fn(Prog, *mut c_char) -> c_int;
    type Version = unsafe extern "C" fn(*mut c_int, *mut c_int) -> c_int;
    type ErrStr = unsafe extern "C" fn(c_int) -> *const c_char;
    let (create, compile): (Create, Compile) = (nv.sym("nvrtcCreateProgram"), nv.sym("nvrtcCompileProgram"));
    let (log_size, log): (Size, Get) = (nv.sym("nvrtcGetProgramLogSize"), nv.sym("nvrtcGetProgramLog"));
    let (cubin_size, cubin): (Size, Get) = (nv.sym("nvrtcGetCUBINSize"), nv.sym("nvrtcGetCUBIN"));
    let (version, err_str): (Version, ErrStr) = (nv.sym("nvrtcVersion"), nv.sym("nvrtcGetErrorString"));
    let errtext = |r: c_int| unsafe { CStr::from_ptr(err_str(r)) }.to_string_lossy().into_owned();

    let csrc = CString::new(source).unwrap();
    let cname = CString::new(format!("{name}.cu")).unwrap();
    let copts: Vec<CString> = options.iter().map(|o| CString::new(o.as_str()).unwrap()).collect();
    let optp: Vec<*const c_char> = copts.iter().map(|o| o.as_ptr()).collect();
    let mut prog: Prog = std::ptr::null_mut();
    let start = Instant::now();
    // SAFETY: NVRTC's API with valid NUL-terminated strings and buffers of the sizes it reports.
    let image = unsafe {
        let r = create(&mut prog, csrc.as_ptr(), cname.as_ptr(), 0, std::ptr::null(), std::ptr::null());
        if r != 0 {
            fail(2, &format!("nvrtcCreateProgram: {}", errtext(r)));
        }
        let r = compile(prog, optp.len() as c_int, optp.as_ptr());
        if r != 0 {
            let mut n = 0usize;
            log_size(prog, &mut n);
            let mut buf = vec![0u8; n.max(1)];
            log(prog, buf.as_mut_ptr() as *mut c_char);
            eprintln!("{name}.cu: {}\n{}", errtext(r), String::from_utf8_lossy(&buf).trim_end_matches('\0').trim());
            std::process::exit(1);
        }
        let mut n = 0usize;
        if cubin_size(prog, &mut n) != 0 {
            fail(2, "nvrtcGetCUBINSize failed");
        }
        let mut buf = vec![0u8; n];
        if cubin(prog, buf.as_mut_ptr() as *mut c_char) != 0 {
            fail(2, "nvrtcGetCUBIN failed");
        }
        buf
    };
    let seconds = start.elapsed().as_secs_f64();
    let (mut major, mut minor) = (0, 0);
    // SAFETY: plain query into locals.
    unsafe { version(&mut major, &mut minor) };
    let out = match (dir, entry) {
        (Some(d), Some(e)) => {
            Some(std::path::Path::new(&d).join(format!("nvrtc-{major}.{minor}")).join(format!("{e}.cubin")))
        }
        _ => None,
    };
    if let Some(out) = &out {
        let by = format!("hyblas-nvrtc pid {}", std::process::id());
        meta.push_str(&cache_file::compile_facts((major, minor), seconds, image.len(), &by));
        if let Err(e) = cache_file::store(out, &image, &meta) {
            eprintln!("hyblas-nvrtc: could not store {}: {e}", out.display());
        }
    }
    // The asking program may be gone (EPIPE): the entry is stored, so that is not a failure.
    let mut stdout = std::io::stdout().lock();
    let path = out.map_or(String::new(), |p| p.display().to_string());
    let _ = stdout.write_all(format!("{path}\n").as_bytes()).and_then(|_| stdout.write_all(&image));
}
