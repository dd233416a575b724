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
