//! Build script: sets the shared library's SONAME and regenerates `include/hyblas.h`.
use std::path::PathBuf;

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
}
