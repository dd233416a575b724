//! Run-time compilation of the embedded kernel sources with NVRTC, for the device's exact
//! architecture, with an on-disk cubin cache.
//!
//! Cache layout: `$HYBLAS_CACHE_DIR` (default `$XDG_CACHE_HOME/hyblas`, else
//! `~/.cache/hyblas`) `/kernels/nvrtc-<major>.<minor>/<unit>-<arch>-<sha256 prefix>.cubin`, and
//! beside each cubin a `.meta` text file (the unit, the architecture, NVRTC's version, the compile
//! time, when and by what it was compiled) that `hyblas info` reads. The entry's name hashes the
//! source, the architecture and the options, so any change compiles afresh and stale files are
//! simply never read again; the directory names the NVRTC that compiled it. A program looks for
//! its entries without loading NVRTC ([`find_cached`]): a cubin is machine code for its
//! architecture whichever NVRTC made it, so another version's entry serves too (newest first;
//! one the driver refuses is compiled again). Entries are written whole under a temporary name
//! and renamed (`cache_file`), so concurrent processes never read half a file.
//!
//! Two ways to compile: [`compile`] runs NVRTC in this process (the `hyblas compile` command,
//! the tests); [`compile_in_helper`] runs it in a process of its own (`hyblas-nvrtc`,
//! helper/nvrtc_helper.rs, embedded in the library), which is what the background compiles of
//! a program use (`gpu::loader`): a compile thread still inside NVRTC when the program exits
//! crashes the program, and the helper also keeps NVRTC's memory out of it.

use super::cache_file;
use super::driver::{GpuError, Result};
use cudarc::nvrtc::sys as nv;
use once_cell::sync::Lazy;
use parking_lot::Mutex;
use sha2::{Digest, Sha256};
use std::ffi::{CStr, CString};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The cache directory (created on demand by writers).
pub fn cache_dir() -> PathBuf {
    if let Some(d) = crate::config::value("HYBLAS_CACHE_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(d);
    }
    if let Some(x) = std::env::var_os("XDG_CACHE_HOME").filter(|x| !x.is_empty()) {
        return PathBuf::from(x).join("hyblas");
    }
    if let Some(h) = std::env::var_os("HOME").filter(|h| !h.is_empty()) {
        return PathBuf::from(h).join(".cache").join("hyblas");
    }
    std::env::temp_dir().join("hyblas-cache")
}

/// NVRTC's version, `(major, minor)`.
pub fn version() -> Result<(i32, i32)> {
    if !super::driver::nvrtc_present() {
        return Err(GpuError::Unavailable("NVRTC (libnvrtc) not found".into()));
    }
    let (mut a, mut b) = (0, 0);
    let r = unsafe { nv::nvrtcVersion(&mut a, &mut b) };
    if r != nv::nvrtcResult::NVRTC_SUCCESS {
        return Err(GpuError::Compile(format!("nvrtcVersion: {r:?}")));
    }
    Ok((a, b))
}

/// Options every kernel is compiled with (besides the architecture).
pub const OPTIONS: &[&str] = &["--std=c++17"];

/// `HYBLAS_KERNEL_LINEINFO=1` adds `-lineinfo`, for the profilers' source view
/// (`scripts/gpu-ncu.sh`). Off by default: it embeds the PTX text in the cubin, which made the
/// split-k family's cubin 24 MB where its machine code is 7.5 MB (55% PTX text, 12% line tables).
static LINEINFO: Lazy<bool> = Lazy::new(|| crate::config::threshold("HYBLAS_KERNEL_LINEINFO", 0) != 0);

/// `HYBLAS_KERNEL_DEFINES`: extra `-DNAME[=VALUE]` options (space-separated) for every kernel,
/// for measuring a kernel's compile-time variants (`-DTRMV_UN=4`, `-DGEMV_T_UNROLL=8`, ...)
/// without a rebuild. Part of the cache key; anything but `-D` options is ignored.
static DEFINES: Lazy<Vec<String>> = Lazy::new(|| {
    crate::config::value("HYBLAS_KERNEL_DEFINES")
        .unwrap_or_default()
        .split_whitespace()
        .filter(|o| {
            let ok = o.starts_with("-D") && o.len() > 2;
            if !ok {
                eprintln!("hyblas: HYBLAS_KERNEL_DEFINES item `{o}` is not -DNAME[=VALUE]; ignored");
            }
            ok
        })
        .map(str::to_string)
        .collect()
});

/// Every option of a compile for `arch`.
fn options(arch: &str) -> Vec<String> {
    let mut o: Vec<String> = OPTIONS.iter().map(|s| s.to_string()).collect();
    if *LINEINFO {
        o.push("-lineinfo".into());
    }
    o.extend(DEFINES.iter().cloned());
    o.push(format!("--gpu-architecture={arch}"));
    o
}

/// How a module's image was obtained.
#[derive(Clone, Debug)]
pub struct Compiled {
    pub cubin: Vec<u8>,
    pub from_cache: bool,
    pub seconds: f64,
    pub path: PathBuf,
}

/// The cache entry's name: `<name>-<arch>-<hash of the source, architecture and options>`.
pub fn entry(name: &str, source: &str, arch: &str) -> String {
    let mut h = Sha256::new();
    h.update(source.as_bytes());
    h.update(arch.as_bytes());
    for o in options(arch) {
        h.update(o.as_bytes());
        h.update([0u8]);
    }
    let d = h.finalize();
    let hex: String = d.iter().take(12).map(|b| format!("{b:02x}")).collect();
    format!("{name}-{arch}-{hex}")
}

/// The kernels directory of the cache.
pub fn kernels_dir() -> PathBuf {
    cache_dir().join("kernels")
}

/// Where this process's NVRTC stores the cubin of `source` for `arch` (whether or not it is
/// there). Loads NVRTC for its version.
pub fn cache_path(name: &str, source: &str, arch: &str) -> Result<PathBuf> {
    let (a, b) = version()?;
    Ok(kernels_dir().join(format!("nvrtc-{a}.{b}")).join(format!("{}.cubin", entry(name, source, arch))))
}

/// The cached cubins of `entry` ([`entry`]), by whichever NVRTC compiled them, newest NVRTC
/// first. Does not load NVRTC: this is how a program finds its kernels.
pub fn find_cached(entry: &str) -> Vec<PathBuf> {
    find_cached_in(&kernels_dir(), entry)
}

/// [`find_cached`] in the kernels directory `dir`.
pub fn find_cached_in(dir: &Path, entry: &str) -> Vec<PathBuf> {
    let Ok(dirs) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut found: Vec<((u32, u32), PathBuf)> = dirs
        .filter_map(|d| d.ok())
        .filter_map(|d| {
            let name = d.file_name().into_string().ok()?;
            let (a, b) = name.strip_prefix("nvrtc-")?.split_once('.')?;
            let path = d.path().join(format!("{entry}.cubin"));
            path.is_file().then_some(((a.parse().ok()?, b.parse().ok()?), path))
        })
        .collect();
    found.sort_by_key(|f| std::cmp::Reverse(f.0));
    found.into_iter().map(|(_, p)| p).collect()
}

/// The cached cubin at `path`, if there is a whole one.
pub fn read_cached(path: &Path) -> Option<Vec<u8>> {
    std::fs::read(path).ok().filter(|b| !b.is_empty())
}

/// The meta text stored beside the cubin at `path` (`cache_file`), if any.
pub fn read_meta(path: &Path) -> Option<String> {
    std::fs::read_to_string(cache_file::meta_path(path)).ok()
}

/// The meta lines a compile of unit `name` for `arch` stores (the compiler adds the rest).
fn meta_lines(name: &str, arch: &str) -> Vec<String> {
    vec![format!("unit={name}"), format!("arch={arch}")]
}

/// The cubin of `source` for `arch` (e.g. `sm_90`): from the cache if present, else compiled
/// in this process (and stored, best effort: an unwritable cache only costs the next process a
/// compile).
pub fn cubin(name: &str, source: &str, arch: &str) -> Result<Compiled> {
    let start = Instant::now();
    let path = cache_path(name, source, arch)?;
    if let Some(bytes) = read_cached(&path) {
        return Ok(Compiled { cubin: bytes, from_cache: true, seconds: start.elapsed().as_secs_f64(), path });
    }
    let cubin = compile(name, source, arch)?;
    let seconds = start.elapsed().as_secs_f64();
    let by = format!("process {} (in-process NVRTC)", std::process::id());
    let meta =
        meta_lines(name, arch).join("\n") + "\n" + &cache_file::compile_facts(version()?, seconds, cubin.len(), &by);
    let _ = cache_file::store(&path, &cubin, &meta);
    Ok(Compiled { cubin, from_cache: false, seconds, path })
}

/// Compile without the cache, in this process (also used by the kernel check that needs no
/// GPU).
pub fn compile(name: &str, source: &str, arch: &str) -> Result<Vec<u8>> {
    version()?;
    let csrc = CString::new(source).map_err(|_| GpuError::Other("NUL in kernel source".into()))?;
    let cname = CString::new(format!("{name}.cu")).unwrap();
    let mut prog: nv::nvrtcProgram = std::ptr::null_mut();
    let nvcheck = |r: nv::nvrtcResult, what: &str| -> Result<()> {
        if r == nv::nvrtcResult::NVRTC_SUCCESS {
            Ok(())
        } else {
            let s = unsafe { CStr::from_ptr(nv::nvrtcGetErrorString(r)) }.to_string_lossy().into_owned();
            Err(GpuError::Compile(format!("{what}: {s}")))
        }
    };
    unsafe {
        nvcheck(
            nv::nvrtcCreateProgram(&mut prog, csrc.as_ptr(), cname.as_ptr(), 0, std::ptr::null(), std::ptr::null()),
            "nvrtcCreateProgram",
        )?;
    }
    let opts: Vec<CString> = options(arch).into_iter().map(|o| CString::new(o).unwrap()).collect();
    let optp: Vec<*const std::ffi::c_char> = opts.iter().map(|o| o.as_ptr()).collect();
    let r = unsafe { nv::nvrtcCompileProgram(prog, optp.len() as i32, optp.as_ptr()) };
    let log = unsafe {
        let mut n = 0usize;
        nv::nvrtcGetProgramLogSize(prog, &mut n);
        let mut buf = vec![0u8; n.max(1)];
        nv::nvrtcGetProgramLog(prog, buf.as_mut_ptr() as *mut std::ffi::c_char);
        String::from_utf8_lossy(&buf).trim_end_matches('\0').trim().to_string()
    };
    let out = if r != nv::nvrtcResult::NVRTC_SUCCESS {
        Err(GpuError::Compile(format!("{name}.cu for {arch}: {r:?}\n{log}")))
    } else {
        let mut n = 0usize;
        unsafe {
            nvcheck(nv::nvrtcGetCUBINSize(prog, &mut n), "nvrtcGetCUBINSize").and_then(|_| {
                let mut buf = vec![0u8; n];
                nvcheck(nv::nvrtcGetCUBIN(prog, buf.as_mut_ptr() as *mut std::ffi::c_char), "nvrtcGetCUBIN")
                    .map(|_| buf)
            })
        }
    };
    unsafe {
        nv::nvrtcDestroyProgram(&mut prog);
    }
    out
}

// ---- The compile helper ----

/// The helper executable (helper/nvrtc_helper.rs, built by build.rs).
static HELPER_IMAGE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/hyblas-nvrtc"));

/// Why [`compile_in_helper`] did not compile.
#[derive(Debug)]
pub enum HelperError {
    /// The helper could not be started here (no executable place for it, a sandbox that forbids
    /// it): compile in this process instead.
    Unavailable(String),
    /// It ran and failed (NVRTC's log, or its own error).
    Failed(GpuError),
}

/// Places the helper can be started from, tried in order: an anonymous in-memory file (no file
/// on disk; `/proc/self/fd/N`), then a file in the cache directory. A place that failed once is
/// not tried again.
static HELPER_PLACES: Lazy<Mutex<Vec<PathBuf>>> = Lazy::new(|| Mutex::new(helper_places()));

fn helper_places() -> Vec<PathBuf> {
    let mut places = Vec::new();
    // SAFETY: memfd_create with a NUL-terminated name; the fd is kept open (close-on-exec) for
    // the life of the process, so its /proc path stays valid.
    unsafe {
        let fd = libc::memfd_create(c"hyblas-nvrtc".as_ptr(), libc::MFD_CLOEXEC);
        if fd >= 0 {
            let mut f = std::fs::File::from(std::os::fd::OwnedFd::from_raw_fd(fd));
            if f.write_all(HELPER_IMAGE).is_ok() {
                std::mem::forget(f);
                places.push(PathBuf::from(format!("/proc/self/fd/{fd}")));
            }
        }
    }
    let digest: String = Sha256::digest(HELPER_IMAGE).iter().take(8).map(|b| format!("{b:02x}")).collect();
    places.push(cache_dir().join("bin").join(format!("hyblas-nvrtc-{digest}")));
    places
}

use std::os::fd::FromRawFd;

/// Make sure the helper file at `path` exists (the cache-dir place): written whole, executable.
fn ensure_helper_file(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    if path.starts_with("/proc/self/fd") || std::fs::metadata(path).is_ok_and(|m| m.len() == HELPER_IMAGE.len() as u64)
    {
        return Ok(());
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = path.with_extension(format!("tmp.{}", std::process::id()));
    std::fs::write(&tmp, HELPER_IMAGE)?;
    std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o755))?;
    std::fs::rename(&tmp, path)
}

/// Compile `source` for `arch` in the helper process, which stores the result in the cache's
/// kernels directory `dir` ([`kernels_dir`]; under its NVRTC's version: the entry lands even if
/// this process exits first) and hands it back with the path it stored it at. Blocks until the helper exits. The helper runs at the
/// lowest CPU priority and loads NVRTC itself: this process never does (loading a 110 MB library
/// holds the dynamic loader's lock while the program's own first calls may need it).
pub fn compile_in_helper(
    name: &str,
    source: &str,
    arch: &str,
    dir: &Path,
) -> std::result::Result<(Vec<u8>, PathBuf), HelperError> {
    loop {
        let Some(place) = HELPER_PLACES.lock().first().cloned() else {
            return Err(HelperError::Unavailable("no place to start hyblas-nvrtc from".into()));
        };
        let started = ensure_helper_file(&place).and_then(|_| {
            let mut cmd = std::process::Command::new(&place);
            cmd.arg("--name").arg(name).arg("--cache-dir").arg(dir);
            cmd.arg("--entry").arg(entry(name, source, arch));
            for m in meta_lines(name, arch) {
                cmd.arg("--meta").arg(m);
            }
            // The library names cudarc would try here, in its order.
            for l in cudarc::get_lib_name_candidates("nvrtc") {
                cmd.arg("--lib").arg(l);
            }
            cmd.arg("--").args(options(arch));
            // Nothing needs preloading in the helper (LD_PRELOAD would load hyblas into it).
            cmd.env_remove("LD_PRELOAD")
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
        });
        let mut child = match started {
            Ok(c) => c,
            Err(e) => {
                // Not startable from here (noexec mount, no memfd exec): try the next place.
                let mut places = HELPER_PLACES.lock();
                if places.first() == Some(&place) {
                    places.remove(0);
                }
                if places.is_empty() {
                    return Err(HelperError::Unavailable(format!("cannot start hyblas-nvrtc: {e}")));
                }
                continue;
            }
        };
        // The helper reads all of stdin before it writes anything.
        let wrote = child.stdin.take().map(|mut s| s.write_all(source.as_bytes()));
        let out =
            child.wait_with_output().map_err(|e| HelperError::Failed(GpuError::Other(format!("hyblas-nvrtc: {e}"))))?;
        let log = String::from_utf8_lossy(&out.stderr).trim().to_string();
        // stdout: the path it stored the entry at, a newline, the cubin.
        let split = out.stdout.iter().position(|&b| b == b'\n');
        return match (out.status.code(), wrote, split) {
            (Some(0), Some(Ok(())), Some(nl)) if out.stdout.len() > nl + 1 => {
                let path = PathBuf::from(String::from_utf8_lossy(&out.stdout[..nl]).into_owned());
                Ok((out.stdout[nl + 1..].to_vec(), path))
            }
            (Some(1), _, _) => Err(HelperError::Failed(GpuError::Compile(format!("{name}.cu for {arch}:\n{log}")))),
            (code, _, _) => Err(HelperError::Failed(GpuError::Other(format!(
                "hyblas-nvrtc for {name} ended with {}: {log}",
                code.map_or("a signal".to_string(), |c| format!("status {c}"))
            )))),
        };
    }
}
