//! Writing one kernel-cache entry so that no reader ever sees half of it: a cubin and, beside
//! it, a small text file of facts about its compile (`<key>.meta`: the unit, the architecture,
//! NVRTC's version, the compile time, the date), which `hyblas info` reads.
//!
//! Each file is written under a name of its own (process id and a counter) and renamed into
//! place, meta first: a process that dies half-way leaves at most a temporary file nobody reads,
//! and two processes storing the same entry at once both leave a whole one. Shared with the
//! compile helper (helper/nvrtc_helper.rs includes this file), so std only.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The meta file of the cubin at `cubin`.
pub fn meta_path(cubin: &Path) -> PathBuf {
    cubin.with_extension("meta")
}

/// Write `bytes` to `path` through a temporary name and a rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let tmp = path.with_extension(format!("tmp.{}.{}", std::process::id(), SEQ.fetch_add(1, Ordering::Relaxed)));
    let result = std::fs::write(&tmp, bytes).and_then(|_| std::fs::rename(&tmp, path));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Store a compiled cubin at `cubin` with its meta lines (`key=value`, one per line): the
/// directory is created if needed; the meta file lands before the cubin.
pub fn store(cubin: &Path, image: &[u8], meta: &str) -> io::Result<()> {
    if let Some(dir) = cubin.parent() {
        std::fs::create_dir_all(dir)?;
    }
    write_atomic(&meta_path(cubin), meta.as_bytes())?;
    write_atomic(cubin, image)
}

/// The facts a compiler adds to an entry's meta lines: NVRTC's version, the compile's seconds,
/// the cubin's size, when, and by what (`by`).
pub fn compile_facts(nvrtc: (i32, i32), seconds: f64, bytes: usize, by: &str) -> String {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    format!(
        "nvrtc={}.{}\ncompile_seconds={seconds:.3}\nbytes={bytes}\ncompiled_unix={now}\ncompiled_by={by}\n",
        nvrtc.0, nvrtc.1
    )
}

/// The value of `key` in meta text.
pub fn meta_value<'a>(meta: &'a str, key: &str) -> Option<&'a str> {
    meta.lines().find_map(|l| l.split_once('=').filter(|(k, _)| k.trim() == key).map(|(_, v)| v.trim()))
}
