//! Block-shape choice (seed 004): offline recipes and the online choice per call.
//!
//! A kernel declares its candidate shapes (`KernelSpec`: the Tx values, x being the contiguous
//! direction, and the Ty values). A *recipe* says which candidates are good enough on a device:
//! at least `min_warp` warp occupancy, `min_block` block occupancy and `min_threads` threads,
//! and at most `max_ty_per_tx`. The online choice takes, among the candidates that meet the
//! recipe, the one with the highest grid occupancy (ties: largest Tx, then smallest Ty), and
//! caches it per (kernel, precision, size class) so a call pays a hash lookup.
//!
//! Recipes come from `hyblas tune` (measured on this device, stored under the cache dir as
//! `recipes/<device>.txt`), else from the built-in Hopper table below.

use super::driver::Result;
use super::kernels::Function;
use super::occupancy::{grid_occupancy, occupancy};
use super::runtime::{DeviceProps, Runtime};
use once_cell::sync::Lazy;
use parking_lot::{Mutex, RwLock};
use std::cell::Cell;
use std::collections::HashMap;
use std::sync::Arc;

/// The candidate block shapes of one kernel and its dynamic shared memory per shape.
pub struct KernelSpec {
    /// Recipe key without the precision prefix: `axpy`, `gemv_n`, ...
    pub name: &'static str,
    pub tx: &'static [u32],
    pub ty: &'static [u32],
    /// Dynamic shared memory in bytes for (tx, ty, element bytes).
    pub smem: fn(u32, u32, u32) -> u32,
}

/// No dynamic shared memory.
pub fn no_smem(_: u32, _: u32, _: u32) -> u32 {
    0
}

/// What a tuned kernel needs to run near its best on one device.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Recipe {
    pub min_warp: f64,
    pub min_block: f64,
    pub min_threads: u32,
    pub max_ty_per_tx: f64,
}

/// Generic recipe, for kernels and devices without a tuned or shipped one: memory-bound
/// kernels want about half the warps resident and blocks of at least 128 threads.
pub const BUILTIN: Recipe = Recipe { min_warp: 0.5, min_block: 0.0, min_threads: 128, max_ty_per_tx: 8.0 };

/// Where a recipe in use came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    Tuned,
    Builtin,
}

struct Recipes {
    tuned: HashMap<String, Recipe>,
    path: std::path::PathBuf,
}

static RECIPES: Lazy<Mutex<HashMap<String, Arc<Recipes>>>> = Lazy::new(|| Mutex::new(HashMap::new()));

/// The recipe file of a device.
pub fn recipe_path(p: &DeviceProps) -> std::path::PathBuf {
    super::nvrtc::cache_dir().join("recipes").join(format!("{}.txt", p.slug()))
}

fn recipes(p: &DeviceProps) -> Arc<Recipes> {
    RECIPES
        .lock()
        .entry(p.slug())
        .or_insert_with(|| {
            let path = recipe_path(p);
            let tuned = std::fs::read_to_string(&path).map(|s| parse(&s)).unwrap_or_default();
            Arc::new(Recipes { tuned, path })
        })
        .clone()
}

/// Parse a recipe file: `key min_warp min_block min_threads max_ty_per_tx` per line, `#`
/// comments. Malformed lines are skipped.
pub fn parse(s: &str) -> HashMap<String, Recipe> {
    let mut out = HashMap::new();
    for line in s.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() != 5 {
            continue;
        }
        let (Ok(w), Ok(b), Ok(t), Ok(r)) = (f[1].parse(), f[2].parse(), f[3].parse(), f[4].parse()) else {
            continue;
        };
        out.insert(f[0].to_string(), Recipe { min_warp: w, min_block: b, min_threads: t, max_ty_per_tx: r });
    }
    out
}

/// Format recipes as a file.
pub fn format(p: &DeviceProps, list: &[(String, Recipe)]) -> String {
    let mut s = format!(
        "# hyblas tuning recipes for {} ({}), written by `hyblas tune`\n# key min_warp_occ min_block_occ min_threads max_ty_per_tx\n",
        p.name,
        p.arch()
    );
    for (k, r) in list {
        s += &format!("{k} {:.4} {:.4} {} {:.4}\n", r.min_warp, r.min_block, r.min_threads, r.max_ty_per_tx);
    }
    s
}

/// Recipes shipped for Hopper (sm_90): `hyblas tune` run on an H200, kept in
/// `kernels/recipes/sm90.txt`. Used on sm_90 devices until `hyblas tune` has run there.
static HOPPER: Lazy<HashMap<String, Recipe>> = Lazy::new(|| parse(include_str!("../../kernels/recipes/sm90.txt")));

/// The recipe in use for `key` (`saxpy`, `dgemv_t`, ...) and where it came from.
pub fn recipe(p: &DeviceProps, key: &str) -> (Recipe, Source) {
    if let Some(r) = recipes(p).tuned.get(key) {
        return (*r, Source::Tuned);
    }
    match HOPPER.get(key) {
        Some(r) if p.cc == (9, 0) => (*r, Source::Builtin),
        _ => (BUILTIN, Source::Builtin),
    }
}

/// The shipped Hopper recipes (for `hyblas info`).
pub fn hopper_recipes() -> Vec<(String, Recipe)> {
    let mut v: Vec<_> = HOPPER.iter().map(|(k, r)| (k.clone(), *r)).collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

/// The recipe file in use, if any was tuned.
pub fn tuned_file(p: &DeviceProps) -> Option<std::path::PathBuf> {
    let r = recipes(p);
    (!r.tuned.is_empty()).then(|| r.path.clone())
}

/// Forget loaded recipes and cached choices (after `hyblas tune` wrote new ones).
pub fn reload() {
    RECIPES.lock().clear();
    CHOICES.write().clear();
}

thread_local! {
    static FORCED: Cell<Option<(u32, u32)>> = const { Cell::new(None) };
}

/// Run `f` with every kernel launched by this thread using block shape (tx, ty) where the
/// kernel allows it (the tuner, and the tests that compare results across shapes).
pub fn with_shape<R>(tx: u32, ty: u32, f: impl FnOnce() -> R) -> R {
    let old = FORCED.with(|c| c.replace(Some((tx, ty))));
    let r = f();
    FORCED.with(|c| c.set(old));
    r
}

type ChoiceKey = (usize, char, u64);
static CHOICES: Lazy<RwLock<HashMap<ChoiceKey, (u32, u32)>>> = Lazy::new(|| RwLock::new(HashMap::new()));

/// For latency-bound second passes over few elements: halve a block dimension (`dim`, down to
/// `floor`) while `blocks(dim)` leaves SMs without a block. The shape rule breaks occupancy
/// ties toward the widest block, which for a small grid puts all the work on a few SMs whose
/// threads then only wait on their loads; spreading them first hides that latency.
pub fn spread_over_sms(mut dim: u32, floor: u32, sm_count: u32, blocks: impl Fn(u32) -> u64) -> u32 {
    while dim > floor && blocks(dim) < sm_count as u64 {
        dim /= 2;
    }
    dim
}

/// Round `n` to its 7 leading bits: sizes within 1% share a class (and a cached choice).
pub fn size_class(n: u64) -> u64 {
    let bits = 64 - n.leading_zeros();
    if bits <= 7 {
        n
    } else {
        let s = bits - 7;
        ((n >> s) << s) | (s as u64) << 58
    }
}

/// The candidates of `spec` that `f` can run, with their occupancies.
pub fn candidates(
    p: &DeviceProps,
    f: &Function,
    spec: &KernelSpec,
    elem: u32,
) -> Vec<(u32, u32, super::occupancy::Occupancy)> {
    let mut v = Vec::new();
    for &tx in spec.tx {
        for &ty in spec.ty {
            let th = tx * ty;
            if th % p.warp_size != 0 || th > f.max_threads.min(p.max_threads_per_block) {
                continue;
            }
            let o = occupancy(p, f, th, (spec.smem)(tx, ty, elem));
            if o.active_blocks_per_sm > 0 {
                v.push((tx, ty, o));
            }
        }
    }
    v
}

/// The block shape for one launch of `f` (spec `spec`, precision prefix `prefix`, element
/// size `elem` bytes). `blocks(tx, ty)` is the grid size that shape would need; `class` is
/// the problem's size class (`size_class` of the size, or a combination for 2-D problems).
pub fn choose(
    rt: &Runtime,
    f: &Function,
    spec: &'static KernelSpec,
    prefix: char,
    elem: u32,
    class: u64,
    blocks: impl Fn(u32, u32) -> u64,
) -> (u32, u32) {
    if let Some(s) = FORCED.with(|c| c.get()) {
        return s;
    }
    let key = (spec as *const KernelSpec as usize, prefix, class);
    if let Some(s) = CHOICES.read().get(&key) {
        return *s;
    }
    let s = choose_uncached(&rt.props, f, spec, prefix, elem, &blocks);
    CHOICES.write().insert(key, s);
    if crate::trace::enabled() {
        // Once per (kernel, size class): the choice is cached from here on.
        crate::trace::note(&format!(
            "shape {prefix}{} class {class:#x}: {}x{} ({} blocks)",
            spec.name,
            s.0,
            s.1,
            blocks(s.0, s.1)
        ));
    }
    s
}

/// Shapes forced from the environment: `HYBLAS_SHAPE=dgemv_n:64x2,strmv_n:32x8` (kernel with
/// its precision prefix, then TxxTy). For measuring the shape rule against every candidate
/// (`scripts/gpu-scan.sh shapes`); a forced shape the kernel cannot run is brought to the
/// nearest one it can by the kernel's host code, as for `with_shape`.
static ENV_SHAPES: Lazy<HashMap<String, (u32, u32)>> = Lazy::new(|| {
    let mut m = HashMap::new();
    for item in crate::config::value("HYBLAS_SHAPE").unwrap_or_default().split(',').filter(|s| !s.trim().is_empty()) {
        let parsed = item.split_once(':').and_then(|(k, v)| {
            let (tx, ty) = v.trim().split_once('x')?;
            Some((k.trim().to_string(), (tx.parse().ok()?, ty.parse().ok()?)))
        });
        match parsed {
            Some((k, s)) => {
                m.insert(k, s);
            }
            None => eprintln!("hyblas: HYBLAS_SHAPE item `{item}` is not kernel:TXxTY; ignored"),
        }
    }
    m
});

/// The seed's online algorithm, without the cache (or the shape `HYBLAS_SHAPE` forces).
pub fn choose_uncached(
    p: &DeviceProps,
    f: &Function,
    spec: &KernelSpec,
    prefix: char,
    elem: u32,
    blocks: &dyn Fn(u32, u32) -> u64,
) -> (u32, u32) {
    let key = format!("{prefix}{}", spec.name);
    if let Some(&s) = ENV_SHAPES.get(&key) {
        return s;
    }
    let (r, _) = recipe(p, &key);
    let all = candidates(p, f, spec, elem);
    let meets = |&&(tx, ty, o): &&(u32, u32, super::occupancy::Occupancy)| {
        o.warp + 1e-9 >= r.min_warp
            && o.block + 1e-9 >= r.min_block
            && tx * ty >= r.min_threads
            && ty as f64 / tx as f64 <= r.max_ty_per_tx + 1e-9
    };
    let mut pool: Vec<_> = all.iter().filter(meets).collect();
    if pool.is_empty() {
        // Nothing meets the recipe (a small function limit, say): take any runnable shape.
        pool = all.iter().collect();
    }
    let mut best: Option<(f64, u32, u32)> = None;
    for &&(tx, ty, o) in &pool {
        let g = grid_occupancy(blocks(tx, ty), o.active_blocks_per_sm, p.sm_count);
        let better = match best {
            None => true,
            Some((bg, btx, bty)) => g > bg + 1e-9 || ((g - bg).abs() <= 1e-9 && (tx > btx || (tx == btx && ty < bty))),
        };
        if better {
            best = Some((g, tx, ty));
        }
    }
    best.map(|(_, tx, ty)| (tx, ty)).unwrap_or((spec.tx[0], spec.ty[0]))
}

/// One kernel the offline tuner measures: it runs the kernel at a large size with the shape
/// set by `with_shape` and returns the median time in seconds.
pub struct TuneCase {
    pub key: String,
    pub spec: &'static KernelSpec,
    pub func: Function,
    pub elem: u32,
    pub run: Box<dyn FnMut() -> Result<f64>>,
}

/// What the tuner found for one kernel.
#[derive(Clone, Debug)]
pub struct TuneResult {
    pub key: String,
    pub recipe: Recipe,
    pub best: (u32, u32),
    pub best_seconds: f64,
    pub tried: usize,
}

/// Measure every candidate of `case`, and derive the recipe: among the shapes that reach 98%
/// of the best speed, the least warp occupancy, block occupancy and thread count, and the
/// largest Ty/Tx. `tick` is called after each candidate (the progress bar).
pub fn tune_case(p: &DeviceProps, case: &mut TuneCase, tick: &mut dyn FnMut()) -> Result<TuneResult> {
    let cands = candidates(p, &case.func, case.spec, case.elem);
    let mut times = Vec::with_capacity(cands.len());
    for &(tx, ty, o) in &cands {
        let t = with_shape(tx, ty, || (case.run)())?;
        times.push((tx, ty, o, t));
        tick();
    }
    let best = times.iter().cloned().min_by(|a, b| a.3.total_cmp(&b.3)).expect("no candidate");
    let good: Vec<_> = times.iter().filter(|c| c.3 <= best.3 / 0.98).collect();
    let recipe = Recipe {
        min_warp: good.iter().map(|c| c.2.warp).fold(f64::INFINITY, f64::min),
        min_block: good.iter().map(|c| c.2.block).fold(f64::INFINITY, f64::min),
        min_threads: good.iter().map(|c| c.0 * c.1).min().unwrap_or(0),
        max_ty_per_tx: good.iter().map(|c| c.1 as f64 / c.0 as f64).fold(0.0, f64::max),
    };
    Ok(TuneResult { key: case.key.clone(), recipe, best: (best.0, best.1), best_seconds: best.3, tried: cands.len() })
}

/// Number of candidates of a case (for sizing the progress bar).
pub fn candidate_count(p: &DeviceProps, case: &TuneCase) -> usize {
    candidates(p, &case.func, case.spec, case.elem).len()
}
