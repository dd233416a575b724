//! The kernel compile units: every unit compiles with the real NVRTC for Hopper (sm_90) and
//! holds exactly the kernels the host asks it for; the split into units lost no kernel; the
//! `hyblas compile` command and the compile helper fill the cache with whole entries, also when
//! two processes compile the same unit at once or a process exits in the middle. Needs only
//! libnvrtc, no GPU: `scripts/nvrtc-local.sh` fetches it for machines without CUDA. Skipped,
//! visibly, where libnvrtc is not found (and failing where HYBLAS_REQUIRE_NVRTC is set).

use hyblas::gpu::kernels::{self, Family, Unit, SPLITK_VARIANTS};
use hyblas::gpu::{cache_file, driver, nvrtc};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

fn nvrtc_or_skip(test: &str) -> bool {
    if driver::nvrtc_present() {
        return true;
    }
    assert!(std::env::var("HYBLAS_REQUIRE_NVRTC").is_err(), "HYBLAS_REQUIRE_NVRTC is set but libnvrtc was not found");
    eprintln!("SKIPPED {test}: libnvrtc not found (scripts/nvrtc-local.sh provides it)");
    false
}

/// The kernels (entry points) of a cubin: its `.text.<name>` sections, read from the ELF
/// section headers. Panics on anything that is not a whole 64-bit ELF file.
fn cubin_kernels(image: &[u8]) -> BTreeSet<String> {
    let u16_at = |o: usize| u16::from_le_bytes(image[o..o + 2].try_into().unwrap()) as usize;
    let u32_at = |o: usize| u32::from_le_bytes(image[o..o + 4].try_into().unwrap()) as usize;
    let u64_at = |o: usize| u64::from_le_bytes(image[o..o + 8].try_into().unwrap()) as usize;
    assert!(image.len() > 64 && &image[..4] == b"\x7fELF" && image[4] == 2, "not a 64-bit ELF image");
    let (shoff, shentsize, shnum, shstrndx) = (u64_at(0x28), u16_at(0x3A), u16_at(0x3C), u16_at(0x3E));
    assert!(shoff + shnum * shentsize <= image.len(), "section table past the end: a truncated cubin");
    let header = |i: usize| shoff + i * shentsize;
    let strtab = u64_at(header(shstrndx) + 0x18);
    let mut names = BTreeSet::new();
    for i in 0..shnum {
        let h = header(i);
        let (name_off, kind, off, size) = (u32_at(h), u32_at(h + 4), u64_at(h + 0x18), u64_at(h + 0x20));
        // NOBITS sections (kind 8) take no room in the file.
        assert!(kind == 8 || off + size <= image.len(), "section {i} past the end: a truncated cubin");
        let s = &image[strtab + name_off..];
        let name = std::str::from_utf8(&s[..s.iter().position(|&b| b == 0).unwrap()]).unwrap();
        if let Some(k) = name.strip_prefix(".text.") {
            names.insert(k.to_string());
        }
    }
    names
}

/// The kernels a split-k unit must hold: its configuration's four layouts and its precision's
/// reduction and scaling kernels (`kernels/gemm_splitk.cu`, `gpu::splitk`).
fn splitk_kernels(u: &Unit) -> BTreeSet<String> {
    let p = u.prec;
    let mut k: BTreeSet<String> = ["nn", "nt", "tn", "tt"].iter().map(|l| format!("{p}{}_{l}", u.variant)).collect();
    k.insert(format!("{p}gemm_sk_reduce"));
    k.insert(format!("{p}gemm_sk_scale"));
    k
}

/// Compile `jobs` on every core, in this process.
fn compile_all(jobs: &[(String, String)]) -> Vec<Result<Vec<u8>, String>> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let out: Vec<_> = jobs.iter().map(|_| std::sync::Mutex::new(None)).collect();
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()).min(jobs.len());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let Some((name, source)) = jobs.get(i) else { break };
                let r = nvrtc::compile(name, source, "sm_90").map_err(|e| e.to_string());
                *out[i].lock().unwrap() = Some(r);
            });
        }
    });
    out.into_iter().map(|m| m.into_inner().unwrap().unwrap()).collect()
}

#[test]
fn every_unit_compiles_and_holds_its_kernels() {
    if !nvrtc_or_skip("every_unit_compiles_and_holds_its_kernels") {
        return;
    }
    let units: Vec<Unit> = Unit::all().into_iter().filter(|u| u.runs_on((9, 0))).collect();
    // The whole Level 1, GEMV and TRMV files too, for the check that the units lost no kernel
    // (split-k's whole file takes minutes; its units are checked kernel by kernel instead).
    let whole = [Family::Level1, Family::Gemv, Family::Trmv];
    let mut jobs: Vec<(String, String)> = units.iter().map(|u| (u.name(), u.source())).collect();
    jobs.extend(whole.iter().map(|f| (f.name().to_string(), f.source())));
    let t = std::time::Instant::now();
    let results = compile_all(&jobs);
    println!("{} compiles in {:.1} s", jobs.len(), t.elapsed().as_secs_f64());
    let mut failed = Vec::new();
    let mut by_family: std::collections::HashMap<Family, BTreeSet<String>> = Default::default();
    for (u, r) in units.iter().zip(&results) {
        let image = match r {
            Ok(image) => image,
            Err(e) => {
                failed.push(format!("{u}: {e}"));
                continue;
            }
        };
        let names = cubin_kernels(image);
        println!("{u}: {} bytes of sm_90 cubin, {} kernels", image.len(), names.len());
        if u.family == Family::Gemm {
            assert_eq!(names, splitk_kernels(u), "{u}: the kernels the host asks for");
        } else {
            assert!(!names.is_empty(), "{u}: no kernels");
            assert!(names.iter().all(|n| n.starts_with(u.prec)), "{u}: a kernel of another precision: {names:?}");
        }
        by_family.entry(u.family).or_default().extend(names);
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
    for (f, r) in whole.iter().zip(&results[units.len()..]) {
        let all = cubin_kernels(r.as_ref().unwrap_or_else(|e| panic!("{}: {e}", f.name())));
        assert_eq!(by_family[f], all, "{}: the units' kernels against the whole file's", f.name());
    }
    // Every split-k configuration the planner can pick on sm_90 (and, for double, before
    // sm_80) is a unit.
    for cc in [(9, 0), (7, 5)] {
        for u in kernels::reachable_units(cc) {
            assert!(Unit::all().contains(&u), "{u} reachable on {cc:?} but not a unit");
            if u.family == Family::Gemm {
                let precs = SPLITK_VARIANTS.iter().find(|(v, _)| *v == u.variant).map(|v| v.1).unwrap();
                assert!(precs.contains(u.prec), "{u}");
            }
        }
    }
    let on90: Vec<String> = kernels::reachable_units((9, 0)).iter().map(Unit::name).collect();
    assert!(on90.contains(&"splitk_d_skm16".to_string()) && !on90.contains(&"splitk_d_sk16".to_string()), "{on90:?}");
    let on75: Vec<String> = kernels::reachable_units((7, 5)).iter().map(Unit::name).collect();
    assert!(on75.contains(&"splitk_d_sk16".to_string()) && !on75.contains(&"splitk_d_skm16".to_string()), "{on75:?}");
}

fn fresh_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hyblas-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// The `hyblas` command: cargo's build of it, else the one beside the tests' folder (a staged
/// copy on a GPU host: gpu-stage/tests/gpu_compile next to gpu-stage/hyblas).
fn hyblas_bin() -> PathBuf {
    let built = PathBuf::from(env!("CARGO_BIN_EXE_hyblas"));
    if built.is_file() {
        return built;
    }
    let exe = std::env::current_exe().unwrap();
    let staged = exe.parent().and_then(Path::parent).map(|d| d.join("hyblas")).unwrap();
    assert!(staged.is_file(), "no hyblas command at {} or {}", built.display(), staged.display());
    staged
}

fn hyblas_in(dir: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(hyblas_bin());
    c.args(args).env("HYBLAS_CACHE_DIR", dir).env_remove("HYBLAS_KERNEL_DEFINES").env_remove("HYBLAS_KERNEL_LINEINFO");
    c
}

/// The files of the cache's kernels directory (`kernels/nvrtc-<version>/`), by extension.
fn entries(dir: &Path) -> (Vec<PathBuf>, Vec<PathBuf>, Vec<PathBuf>) {
    let list = |d: &Path| -> Vec<PathBuf> {
        std::fs::read_dir(d).map(|d| d.filter_map(|e| e.ok()).map(|e| e.path()).collect()).unwrap_or_default()
    };
    let files: Vec<PathBuf> =
        list(&dir.join("kernels")).into_iter().flat_map(|p| if p.is_dir() { list(&p) } else { vec![p] }).collect();
    let ext = |x: &str| files.iter().filter(|p| p.extension().is_some_and(|e| e == x)).cloned().collect::<Vec<_>>();
    let other = files.iter().filter(|p| !p.extension().is_some_and(|e| e == "cubin" || e == "meta")).cloned().collect();
    (ext("cubin"), ext("meta"), other)
}

/// `hyblas compile --arch ... UNIT|FAMILY ...` fills the kernel cache without a GPU, a line per
/// unit; the second run finds every cubin in the cache; each entry has its meta file with the
/// compile time; bad arguments exit with status 2.
#[test]
fn compile_command_fills_the_cache() {
    if !nvrtc_or_skip("compile_command_fills_the_cache") {
        return;
    }
    let dir = fresh_dir("compile-cmd");
    let run = |args: &[&str]| hyblas_in(&dir, args).output().expect("run hyblas");
    let first = run(&["compile", "--arch", "sm_90,sm_80", "level1_s", "trmv"]);
    let out = String::from_utf8_lossy(&first.stdout).to_string();
    assert!(first.status.success(), "hyblas compile failed: {out}{}", String::from_utf8_lossy(&first.stderr));
    assert_eq!(out.matches(" compiled ").count(), 10, "5 units for 2 architectures:\n{out}");
    assert!(out.contains("[10/10]") && out.contains("10 of 10 units ready"), "{out}");
    let (cubins, metas, other) = entries(&dir);
    assert_eq!((cubins.len(), metas.len()), (10, 10), "{out}");
    assert!(other.is_empty(), "temporary files left: {other:?}");
    for c in &cubins {
        let meta = std::fs::read_to_string(cache_file::meta_path(c)).expect("meta beside the cubin");
        let secs: f64 =
            cache_file::meta_value(&meta, "compile_seconds").and_then(|s| s.parse().ok()).expect("compile time");
        assert!(secs > 0.0, "{meta}");
        let arch = cache_file::meta_value(&meta, "arch").unwrap();
        assert!(c.file_name().unwrap().to_string_lossy().contains(arch), "{meta}");
        assert!(!cubin_kernels(&std::fs::read(c).unwrap()).is_empty());
    }
    let again =
        String::from_utf8_lossy(&run(&["compile", "--arch", "sm_90,sm_80", "level1_s", "trmv"]).stdout).to_string();
    assert_eq!(again.matches(" cached ").count(), 10, "{again}");
    for bad in [&["compile", "--arch"][..], &["compile", "--arch", "90"], &["compile", "--arch", "sm_90", "nosuch"]] {
        assert_eq!(run(bad).status.code(), Some(2), "{bad:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Two processes compiling the same unit at once (two `hyblas compile`, and two compile
/// helpers as two programs' background compiles would start them) both succeed and leave one
/// whole entry: the same kernels as a compile of its own, its meta file, no temporary files.
#[test]
fn two_processes_compiling_one_unit_leave_a_whole_entry() {
    if !nvrtc_or_skip("two_processes_compiling_one_unit_leave_a_whole_entry") {
        return;
    }
    let unit = Unit::parse("splitk_d_skm16").unwrap();
    let want = splitk_kernels(&unit);
    let check = |dir: &Path, what: &str| {
        let (cubins, metas, other) = entries(dir);
        assert_eq!((cubins.len(), metas.len()), (1, 1), "{what}: one entry");
        assert!(other.is_empty(), "{what}: temporary files left: {other:?}");
        assert_eq!(cubin_kernels(&std::fs::read(&cubins[0]).unwrap()), want, "{what}");
    };
    // Two hyblas compile processes.
    let dir = fresh_dir("two-compiles");
    let kids: Vec<_> = (0..2)
        .map(|_| hyblas_in(&dir, &["compile", "--arch", "sm_90", "splitk_d_skm16"]).spawn().expect("spawn"))
        .collect();
    for k in kids {
        let out = k.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    check(&dir, "two hyblas compile");
    let _ = std::fs::remove_dir_all(&dir);
    // Two helper processes, started from two threads at once, storing the same entry.
    let dir = fresh_dir("two-helpers");
    let kernels = dir.join("kernels");
    let done: Vec<(Vec<u8>, PathBuf)> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..2)
            .map(|_| s.spawn(|| nvrtc::compile_in_helper(&unit.name(), &unit.source(), "sm_90", &kernels)))
            .collect();
        hs.into_iter().map(|h| h.join().unwrap().unwrap_or_else(|e| panic!("helper: {e:?}"))).collect()
    });
    for (image, path) in &done {
        assert_eq!(cubin_kernels(image), want);
        assert_eq!(&std::fs::read(path).unwrap(), image, "the helper hands back what it stored");
    }
    assert_eq!(done[0].1, done[1].1);
    check(&dir, "two helpers");
    // A program's lookup (no NVRTC loaded) finds it, and prefers the newest NVRTC's entry.
    let name = nvrtc::entry(&unit.name(), &unit.source(), "sm_90");
    let path = &done[0].1;
    assert_eq!(nvrtc::find_cached_in(&kernels, &name), vec![path.clone()]);
    for (v, newer) in [("nvrtc-9.9", false), ("nvrtc-99.0", true)] {
        let other = kernels.join(v).join(format!("{name}.cubin"));
        std::fs::create_dir_all(other.parent().unwrap()).unwrap();
        std::fs::write(&other, b"x").unwrap();
        let found = nvrtc::find_cached_in(&kernels, &name);
        assert_eq!(found.len(), if newer { 3 } else { 2 });
        assert_eq!(found[0] == other, newer, "{found:?}");
    }
    let _ = std::fs::remove_dir_all(kernels.join("nvrtc-9.9"));
    let _ = std::fs::remove_dir_all(kernels.join("nvrtc-99.0"));
    let meta = std::fs::read_to_string(cache_file::meta_path(path)).unwrap();
    assert!(cache_file::meta_value(&meta, "compiled_by").unwrap().starts_with("hyblas-nvrtc"), "{meta}");
    assert_eq!(cache_file::meta_value(&meta, "unit"), Some("splitk_d_skm16"), "{meta}");
    let _ = std::fs::remove_dir_all(&dir);
}

const CHILD: &str = "HYBLAS_COMPILE_TEST_CHILD";

/// A process that exits while its unit compiles leaves no half-written entry: killed in the
/// middle of `hyblas compile` it leaves nothing; exiting normally while a background thread
/// waits for the compile helper (a program's first GPU call, then exit) it exits cleanly and the
/// helper, outliving it, still lands the whole entry.
#[test]
fn a_process_exiting_mid_compile_leaves_no_half_entry() {
    if std::env::var_os(CHILD).is_some() || !nvrtc_or_skip("a_process_exiting_mid_compile_leaves_no_half_entry") {
        return;
    }
    let dir = fresh_dir("killed-compile");
    let mut kid = hyblas_in(&dir, &["compile", "--arch", "sm_90", "splitk_d_skm32"]).spawn().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(700));
    let _ = kid.kill();
    let _ = kid.wait();
    let (cubins, metas, _) = entries(&dir);
    assert!(cubins.is_empty() && metas.is_empty(), "a killed compile left {cubins:?} {metas:?}");
    let _ = std::fs::remove_dir_all(&dir);

    let dir = fresh_dir("early-exit");
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "exit_while_the_helper_compiles", "--nocapture", "--test-threads=1"])
        .env(CHILD, &dir)
        .output()
        .unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "the child did not exit cleanly ({:?}):\n{text}", out.status);
    assert!(text.contains("CHILD EXITING"), "{text}");
    let (cubins, _, _) = entries(&dir);
    assert!(cubins.is_empty(), "the compile cannot have finished before the child exited");
    // The helper lives on and stores the entry. It compiles at nice 19: beside the test that
    // compiles every unit on a 2-core machine it gets almost no CPU until that one ends (about
    // two minutes in CI), so the wait is generous.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(600);
    loop {
        let (cubins, metas, other) = entries(&dir);
        if cubins.len() == 1 && metas.len() == 1 && other.is_empty() {
            assert_eq!(
                cubin_kernels(&std::fs::read(&cubins[0]).unwrap()),
                splitk_kernels(&Unit::parse("splitk_z_skm8").unwrap())
            );
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the helper's entry never landed: {cubins:?} {other:?}");
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The child of the test above: starts a helper compile in a thread (as `gpu::loader` does)
/// and exits the process while it runs.
#[test]
fn exit_while_the_helper_compiles() {
    let Some(dir) = std::env::var_os(CHILD) else { return };
    let unit = Unit::parse("splitk_z_skm8").unwrap();
    let kernels = PathBuf::from(dir).join("kernels");
    std::thread::spawn(move || nvrtc::compile_in_helper(&unit.name(), &unit.source(), "sm_90", &kernels));
    // Exit only once the helper holds the whole source: it maps NVRTC only after reading all of
    // stdin. Waiting for the helper process alone was not enough: on a loaded 2-core machine (CI,
    // beside the test that compiles every unit) the helper, at nice 19, had not read its input
    // within a fixed 300 ms once, the process exited, and no entry could land.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !child_processes().iter().any(|pid| maps_nvrtc(*pid)) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    println!("CHILD EXITING");
    std::process::exit(0);
}

/// The processes this process has started (Linux: /proc/self/task/*/children).
fn child_processes() -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else { return Vec::new() };
    tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("children")).ok())
        .flat_map(|c| c.split_whitespace().filter_map(|p| p.parse().ok()).collect::<Vec<u32>>())
        .collect()
}

/// Whether process `pid` has NVRTC mapped.
fn maps_nvrtc(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/maps")).is_ok_and(|m| m.contains("nvrtc"))
}
