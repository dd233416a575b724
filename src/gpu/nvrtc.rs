//! Run-time compilation of the embedded kernel sources with NVRTC, for the device's exact
//! architecture, with an on-disk cubin cache.
//!
//! Cache layout: `$HYBLAS_CACHE_DIR` (default `$XDG_CACHE_HOME/hyblas`, else
//! `~/.cache/hyblas`) `/kernels/<family>-<sha256 prefix>.cubin`. The key hashes the source,
//! the architecture, the NVRTC version and the options, so any change compiles afresh and
//! stale files are simply never read again. Files are written to a temporary name and renamed,
//! so concurrent processes never read half a file.

use super::driver::{GpuError, Result};
use cudarc::nvrtc::sys as nv;
use sha2::{Digest, Sha256};
use std::ffi::{CStr, CString};
use std::path::PathBuf;

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
pub const OPTIONS: &[&str] = &["--std=c++17", "-lineinfo"];

/// `HYBLAS_KERNEL_DEFINES`: extra `-DNAME[=VALUE]` options (space-separated) for every kernel,
/// for measuring a kernel's compile-time variants (`-DTRMV_UN=4`, `-DGEMV_T_UNROLL=8`, ...)
/// without a rebuild. Part of the cache key; anything but `-D` options is ignored.
static DEFINES: once_cell::sync::Lazy<Vec<String>> = once_cell::sync::Lazy::new(|| {
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

/// Every option of a compile besides the architecture.
fn options() -> impl Iterator<Item = &'static str> {
    OPTIONS.iter().copied().chain(DEFINES.iter().map(String::as_str))
}

/// How a module's image was obtained.
#[derive(Clone, Debug)]
pub struct Compiled {
    pub cubin: Vec<u8>,
    pub from_cache: bool,
    pub seconds: f64,
    pub path: PathBuf,
}

fn key(name: &str, source: &str, arch: &str, ver: (i32, i32)) -> String {
    let mut h = Sha256::new();
    h.update(source.as_bytes());
    h.update(arch.as_bytes());
    h.update(format!("nvrtc {}.{}", ver.0, ver.1).as_bytes());
    for o in options() {
        h.update(o.as_bytes());
        h.update([0u8]);
    }
    let d = h.finalize();
    let hex: String = d.iter().take(12).map(|b| format!("{b:02x}")).collect();
    format!("{name}-{arch}-{hex}")
}

/// The cubin of `source` for `arch` (e.g. `sm_90`): from the cache if present, else compiled
/// (and stored, best effort: an unwritable cache only costs the next process a compile).
pub fn cubin(name: &str, source: &str, arch: &str) -> Result<Compiled> {
    let start = std::time::Instant::now();
    let ver = version()?;
    let path = cache_dir().join("kernels").join(format!("{}.cubin", key(name, source, arch, ver)));
    if let Ok(bytes) = std::fs::read(&path) {
        if !bytes.is_empty() {
            return Ok(Compiled { cubin: bytes, from_cache: true, seconds: start.elapsed().as_secs_f64(), path });
        }
    }
    let cubin = compile(name, source, arch)?;
    if let Some(dir) = path.parent() {
        if std::fs::create_dir_all(dir).is_ok() {
            let tmp = path.with_extension(format!("tmp{}", std::process::id()));
            if std::fs::write(&tmp, &cubin).is_ok() {
                let _ = std::fs::rename(&tmp, &path);
            }
        }
    }
    Ok(Compiled { cubin, from_cache: false, seconds: start.elapsed().as_secs_f64(), path })
}

/// Compile without the cache (also used by the kernel check that needs no GPU).
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
    let mut opts: Vec<CString> = options().map(|o| CString::new(o).unwrap()).collect();
    opts.push(CString::new(format!("--gpu-architecture={arch}")).unwrap());
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
