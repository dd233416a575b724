//! Every kernel family compiles with NVRTC for Hopper (sm_90). Needs only libnvrtc, no GPU:
//! `scripts/nvrtc-local.sh` fetches it for machines without CUDA. Skipped, visibly, where
//! libnvrtc is not found.

use hyblas::gpu::{driver, kernels, nvrtc};

#[test]
fn kernel_families_compile_for_sm90() {
    if !driver::nvrtc_present() {
        assert!(
            std::env::var("HYBLAS_REQUIRE_NVRTC").is_err(),
            "HYBLAS_REQUIRE_NVRTC is set but libnvrtc was not found"
        );
        eprintln!("SKIPPED kernel_families_compile_for_sm90: libnvrtc not found (scripts/nvrtc-local.sh provides it)");
        return;
    }
    let mut failed = Vec::new();
    for &fam in kernels::FAMILIES {
        match nvrtc::compile(fam.name(), &fam.source(), "sm_90") {
            Ok(cubin) => {
                assert!(!cubin.is_empty(), "{}: empty cubin", fam.name());
                println!("{}: {} bytes of sm_90 cubin", fam.name(), cubin.len());
            }
            Err(e) => failed.push(format!("{}: {e}", fam.name())),
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

/// `hyblas compile --arch sm_90 FAMILY ...` fills the kernel cache without a GPU: the first run
/// compiles, the second finds every cubin in the cache; bad arguments exit with status 2.
#[test]
fn compile_command_fills_the_cache() {
    if !driver::nvrtc_present() {
        eprintln!("SKIPPED compile_command_fills_the_cache: libnvrtc not found (scripts/nvrtc-local.sh provides it)");
        return;
    }
    let dir = std::env::temp_dir().join(format!("hyblas-compile-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_hyblas"))
            .args(args)
            .env("HYBLAS_CACHE_DIR", &dir)
            .env_remove("HYBLAS_KERNEL_DEFINES")
            .output()
            .expect("run hyblas")
    };
    let first = run(&["compile", "--arch", "sm_90", "level1", "trmv"]);
    let out = String::from_utf8_lossy(&first.stdout).to_string();
    assert!(first.status.success(), "hyblas compile failed: {out}{}", String::from_utf8_lossy(&first.stderr));
    assert_eq!(out.matches(" compiled ").count(), 2, "{out}");
    let cubins: Vec<_> = std::fs::read_dir(dir.join("kernels"))
        .expect("kernels dir")
        .filter_map(|e| e.ok())
        .filter(|e| e.path().extension().is_some_and(|x| x == "cubin"))
        .collect();
    assert_eq!(cubins.len(), 2, "{out}");
    let again = String::from_utf8_lossy(&run(&["compile", "--arch", "sm_90", "level1", "trmv"]).stdout).to_string();
    assert_eq!(again.matches(" cached ").count(), 2, "{again}");
    for bad in [&["compile", "--arch"][..], &["compile", "--arch", "90"], &["compile", "--arch", "sm_90", "nosuch"]] {
        assert_eq!(run(bad).status.code(), Some(2), "{bad:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
