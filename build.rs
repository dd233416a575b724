//! Build script: sets the shared library's SONAME, regenerates `include/hyblas.h`, and builds
//! the kernel compile helper (`helper/nvrtc_helper.rs`) that the library embeds.
use std::path::PathBuf;
use std::process::Command;

fn main() {
    // SONAME: programs that link `-lhyblas` record `libhyblas.so.0`; the install script
    // adds that name plus the `libblas.so.3` / `libcblas.so.3` aliases.
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libhyblas.so.0");
    println!("cargo:rerun-if-changed=src/abi/native.rs");
    println!("cargo:rerun-if-changed=cbindgen.toml");

    let crate_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml")).expect("cbindgen.toml is readable");
    let out = crate_dir.join("include").join("hyblas.h");
    match cbindgen::Builder::new().with_config(config).with_src(crate_dir.join("src/abi/native.rs")).generate() {
        // write_to_file only rewrites the file when its contents change, so a clean tree
        // stays clean; CI checks `git diff --exit-code include/`.
        Ok(bindings) => {
            bindings.write_to_file(&out);
        }
        Err(e) => panic!("cbindgen failed to generate {}: {e}", out.display()),
    }
    build_helper(&crate_dir);
}

/// `hyblas-nvrtc`, the process that runs NVRTC for the library's background compiles
/// (src/gpu/nvrtc.rs): a std-only program compiled by the same rustc for the same target, placed
/// in OUT_DIR, where `include_bytes!` picks it up.
fn build_helper(crate_dir: &std::path::Path) {
    let src = crate_dir.join("helper/nvrtc_helper.rs");
    println!("cargo:rerun-if-changed=helper/nvrtc_helper.rs");
    println!("cargo:rerun-if-changed=src/gpu/cache_file.rs");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("hyblas-nvrtc");
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let target = std::env::var("TARGET").unwrap();
    let mut cmd = Command::new(rustc);
    cmd.args(["--edition", "2021", "--crate-name", "hyblas_nvrtc", "--crate-type", "bin", "--target", &target])
        .args(["-C", "opt-level=2", "-C", "panic=abort", "-C", "strip=symbols", "-C", "debuginfo=0"])
        .arg("-o")
        .arg(&out)
        .arg(&src);
    if let Ok(linker) = std::env::var(format!("CARGO_TARGET_{}_LINKER", target.to_uppercase().replace('-', "_"))) {
        cmd.arg("-C").arg(format!("linker={linker}"));
    }
    // glibc before 2.34 keeps dlopen in libdl.
    cmd.args(["-l", "dylib=dl"]);
    let status = cmd.status().expect("run rustc for helper/nvrtc_helper.rs");
    assert!(status.success(), "rustc failed to build helper/nvrtc_helper.rs");
}
