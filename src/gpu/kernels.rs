//! The embedded kernel sources, their compile units, modules and functions, and the one launch
//! call.
//!
//! Each family is one file under `kernels/`, compiled as `kernels/common.cuh` followed by the
//! family's source (NVRTC gets no include path: the sources are self-contained). Entry points
//! are `extern "C"` and named by precision and variant (`daxpy`, `sgemv_t`, ...).
//!
//! A family is compiled in units ([`Unit`]): one precision of Level 1, GEMV/GER, TRMV or
//! Strassen's additions (s and d only), and one precision and kernel configuration of split-k
//! GEMM. A unit is what one kind of call needs,
//! compiles in seconds (the whole split-k family took 74-105 s), and a process compiles only the
//! units its calls use (`gpu::loader` gets them, in the background).

use super::driver::{check, sys, GpuError, Handle, Result};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::ffi::{c_void, CString};

/// The kernel families (one source file each).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Family {
    Level1,
    Gemv,
    Trmv,
    /// Split-k GEMM for small outputs (seed 000).
    Gemm,
    /// Strassen-Winograd's additions (seed 003; real precisions only).
    Strassen,
    /// Batched GEMM of small products (`gpu::batched`).
    Batch,
    /// The accurate DGEMM's residues, reconstruction and certificates (`gpu::ozaki`; 'd' only).
    Ozaki,
}

pub const FAMILIES: &[Family] =
    &[Family::Level1, Family::Gemv, Family::Trmv, Family::Gemm, Family::Strassen, Family::Batch, Family::Ozaki];

pub const COMMON: &str = include_str!("../../kernels/common.cuh");

impl Family {
    pub fn name(self) -> &'static str {
        match self {
            Family::Level1 => "level1",
            Family::Gemv => "gemv",
            Family::Trmv => "trmv",
            Family::Gemm => "splitk",
            Family::Strassen => "strassen",
            Family::Batch => "batch",
            Family::Ozaki => "ozaki",
        }
    }
    fn file(self) -> &'static str {
        match self {
            Family::Level1 => "level1.cu",
            Family::Gemv => "gemv.cu",
            Family::Trmv => "trmv.cu",
            Family::Gemm => "gemm_splitk.cu",
            Family::Strassen => "strassen.cu",
            Family::Batch => "gemm_batch.cu",
            Family::Ozaki => "ozaki.cu",
        }
    }
    fn body(self) -> &'static str {
        match self {
            Family::Level1 => include_str!("../../kernels/level1.cu"),
            Family::Gemv => include_str!("../../kernels/gemv.cu"),
            Family::Trmv => include_str!("../../kernels/trmv.cu"),
            Family::Gemm => include_str!("../../kernels/gemm_splitk.cu"),
            Family::Strassen => include_str!("../../kernels/strassen.cu"),
            Family::Batch => include_str!("../../kernels/gemm_batch.cu"),
            Family::Ozaki => include_str!("../../kernels/ozaki.cu"),
        }
    }
    /// The whole family's source (every unit's entry points; `scripts/kernel-regs.py` and the
    /// tests that read the source use this).
    pub fn source(self) -> String {
        format!("{COMMON}\n#line 1 \"{}\"\n{}", self.file(), self.body())
    }
    /// The family's units, in a fixed order.
    pub fn units(self) -> Vec<Unit> {
        match self {
            Family::Gemm => SPLITK_VARIANTS
                .iter()
                .flat_map(|&(v, precs)| precs.chars().map(move |p| Unit { family: self, prec: p, variant: v }))
                .collect(),
            Family::Strassen => "sd".chars().map(|p| Unit { family: self, prec: p, variant: "" }).collect(),
            Family::Ozaki => vec![Unit { family: self, prec: 'd', variant: "" }],
            _ => PRECISIONS.chars().map(|p| Unit { family: self, prec: p, variant: "" }).collect(),
        }
    }
}

const PRECISIONS: &str = "sdcz";

/// The split-k kernel configurations (kernel names without precision and layout,
/// `src/gpu/splitk.rs`'s `Config`) and the precisions each exists for: one unit each.
pub const SPLITK_VARIANTS: &[(&str, &str)] = &[
    ("gemm_skm1", "dz"),
    ("gemm_skm4", "dz"),
    ("gemm_skm8", "dz"),
    ("gemm_skm16", "dz"),
    ("gemm_skm32", "d"),
    ("gemm_skf2", "sc"),
    ("gemm_skf4", "sc"),
    ("gemm_skf8", "sc"),
    ("gemm_skf16", "sc"),
    ("gemm_sk_direct", "sdcz"),
    ("gemm_sk16", "sdcz"),
    ("gemm_sk32", "sdcz"),
    ("gemm_sk64", "sdcz"),
    ("gemm_sk32m", "d"),
    ("gemm_sk64m", "d"),
];

/// One compile unit: the kernels of `family` for precision `prec` ('s', 'd', 'c', 'z') and, for
/// split-k, one configuration (`variant`, a kernel name such as `gemm_skm16`; empty otherwise).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Unit {
    pub family: Family,
    pub prec: char,
    pub variant: &'static str,
}

impl Unit {
    /// The unit of a Level 1, GEMV or TRMV kernel of precision `prec`.
    pub fn of(family: Family, prec: char) -> Unit {
        debug_assert!(family != Family::Gemm, "split-k units are named by configuration: Unit::splitk");
        Unit { family, prec, variant: "" }
    }
    /// The split-k unit of configuration `variant` (`gemm_skm16`) in precision `prec`.
    pub fn splitk(prec: char, variant: &'static str) -> Unit {
        Unit { family: Family::Gemm, prec, variant }
    }
    /// Every unit of every family.
    pub fn all() -> Vec<Unit> {
        FAMILIES.iter().flat_map(|f| f.units()).collect()
    }
    /// `level1_s`, `gemv_z`, `splitk_d_skm16`: the cache file's and `hyblas compile`'s name.
    pub fn name(&self) -> String {
        match self.variant {
            "" => format!("{}_{}", self.family.name(), self.prec),
            v => format!("{}_{}_{}", self.family.name(), self.prec, v.strip_prefix("gemm_").unwrap_or(v)),
        }
    }
    /// The unit named `name` ([`Unit::name`]).
    pub fn parse(name: &str) -> Option<Unit> {
        Unit::all().into_iter().find(|u| u.name() == name)
    }
    /// Whether the unit has code for a device of compute capability `cc` (the FP64
    /// tensor-core fragment kernels need sm_80; on older devices their unit is empty).
    pub fn runs_on(&self, cc: (i32, i32)) -> bool {
        !self.variant.starts_with("gemm_skm") || cc.0 >= 8
    }
    /// The source NVRTC compiles: the unit's selection (`HB_UNIT_*`, kernels/common.cuh), the
    /// common header and the family's file.
    pub fn source(&self) -> String {
        let mut s = format!("#define HB_UNIT 1\n#define HB_UNIT_PREC_{} 1\n", self.prec);
        if !self.variant.is_empty() {
            s.push_str(&format!("#define HB_UNIT_VARIANT_{} 1\n", self.variant));
        }
        s + &self.family.source()
    }
}

/// The units calls can reach on a device of compute capability `cc` with this process's
/// settings: every unit of the other families (Level 1, GEMV, TRMV, Strassen, batched GEMM), and
/// the split-k configurations the planner picks
/// there (`splitk::reachable_variants`; the others serve `HYBLAS_SPLITK_MMA=0` and older
/// devices). What `hyblas compile` compiles ahead by default and `hyblas info` reports.
pub fn reachable_units(cc: (i32, i32)) -> Vec<Unit> {
    use super::splitk::reachable_variants as rv;
    use crate::types::{C32, C64};
    // Every family's units but split-k's, whose configurations are picked below.
    let mut units: Vec<Unit> = FAMILIES.iter().filter(|&&f| f != Family::Gemm).flat_map(|f| f.units()).collect();
    for (p, variants) in [('s', rv::<f32>(cc)), ('d', rv::<f64>(cc)), ('c', rv::<C32>(cc)), ('z', rv::<C64>(cc))] {
        units.extend(variants.into_iter().map(|v| Unit::splitk(p, v)));
    }
    units.sort();
    units
}

/// The compute capability an NVRTC architecture names (`sm_90` -> (9, 0), `sm_100a` ->
/// (10, 0)), if it is one.
pub fn arch_cc(arch: &str) -> Option<(i32, i32)> {
    let digits: String = arch.strip_prefix("sm_")?.chars().take_while(|c| c.is_ascii_digit()).collect();
    let rest = &arch[3 + digits.len()..];
    let n: i32 = digits.parse().ok()?;
    (digits.len() >= 2 && (rest.is_empty() || rest == "a" || rest == "f")).then_some((n / 10, n % 10))
}

impl std::fmt::Display for Unit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name())
    }
}

/// A loaded module and the functions looked up in it so far.
pub struct Module {
    raw: Handle<sys::CUmodule>,
    funcs: Mutex<HashMap<String, Function>>,
}

impl Module {
    /// Load a cubin into the current context (the runtime's context must be current).
    pub fn from_cubin(image: &[u8]) -> Result<Module> {
        let mut m = std::ptr::null_mut();
        // SAFETY: the image is a whole cubin (NVRTC's output or a cache file written whole).
        check(unsafe { sys::cuModuleLoadData(&mut m, image.as_ptr() as *const c_void) }, "cuModuleLoadData")?;
        Ok(Module { raw: Handle(m), funcs: Mutex::new(HashMap::new()) })
    }

    pub fn function(&self, name: &str) -> Result<Function> {
        if let Some(f) = self.funcs.lock().get(name) {
            return Ok(*f);
        }
        let cname = CString::new(name).map_err(|_| GpuError::Other("bad kernel name".into()))?;
        let mut f = std::ptr::null_mut();
        check(unsafe { sys::cuModuleGetFunction(&mut f, self.raw.0, cname.as_ptr()) }, "cuModuleGetFunction")
            .map_err(|e| GpuError::Other(format!("kernel {name}: {e}")))?;
        let get = |a: sys::CUfunction_attribute| -> Result<i32> {
            let mut v = 0;
            check(unsafe { sys::cuFuncGetAttribute(&mut v, a, f) }, "cuFuncGetAttribute")?;
            Ok(v)
        };
        use sys::CUfunction_attribute as A;
        let func = Function {
            raw: Handle(f),
            regs: get(A::CU_FUNC_ATTRIBUTE_NUM_REGS)? as u32,
            static_smem: get(A::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)? as u32,
            max_threads: get(A::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)? as u32,
            local_bytes: get(A::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)? as u32,
        };
        self.funcs.lock().insert(name.to_string(), func);
        Ok(func)
    }
}

/// A kernel entry point with the attributes the occupancy model needs.
#[derive(Clone, Copy, Debug)]
pub struct Function {
    pub raw: Handle<sys::CUfunction>,
    /// Registers per thread.
    pub regs: u32,
    /// Static shared memory per block (bytes).
    pub static_smem: u32,
    /// The most threads per block this function can be launched with.
    pub max_threads: u32,
    /// Local memory per thread (bytes); non-zero means spills.
    pub local_bytes: u32,
}

/// A launch geometry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Launch {
    pub grid: (u32, u32, u32),
    pub block: (u32, u32, u32),
    pub smem: u32,
}

/// Most parameters a kernel takes (the accurate DGEMM's doz_crt has 29).
const MAX_ARGS: usize = 32;

/// A transpose as the kernels take it (cuBLAS's `cublasOperation_t` codes): 0 none, 1 transpose,
/// 2 conjugate transpose.
pub(crate) fn trans_code(t: crate::types::Trans) -> i32 {
    match t {
        crate::types::Trans::No => 0,
        crate::types::Trans::Trans => 1,
        crate::types::Trans::ConjTrans => 2,
    }
}

/// Kernel arguments, pushed in the order of the kernel's parameter list. Each value is copied
/// into the builder (inline storage: a launch allocates nothing), so temporaries are fine.
pub struct Args {
    store: [[u64; 2]; MAX_ARGS],
    len: usize,
}

impl Default for Args {
    fn default() -> Self {
        Self::new()
    }
}

impl Args {
    pub fn new() -> Self {
        Args { store: [[0; 2]; MAX_ARGS], len: 0 }
    }
    /// Push one argument (at most 16 bytes, plain data: integers, floats, complex, pointers).
    pub fn arg<T: Copy>(&mut self, v: T) -> &mut Self {
        assert!(std::mem::size_of::<T>() <= 16 && std::mem::align_of::<T>() <= 16);
        assert!(self.len < MAX_ARGS, "more than {MAX_ARGS} kernel arguments");
        unsafe { std::ptr::write_unaligned(self.store[self.len].as_mut_ptr() as *mut T, v) };
        self.len += 1;
        self
    }
}

/// `HYBLAS_PDL=0` turns programmatic dependent launch off (see [`Function::launch_dependent`]).
static PDL: once_cell::sync::Lazy<bool> = once_cell::sync::Lazy::new(|| crate::config::threshold("HYBLAS_PDL", 1) != 0);

impl Function {
    /// Launch on `stream`. The driver copies the arguments at launch, so `args` may be dropped
    /// right after.
    pub fn launch(&self, l: Launch, stream: sys::CUstream, args: &mut Args) -> Result<()> {
        self.launch_with(l, stream, args, false)
    }

    /// Launch a second pass that reads what the kernel before it on `stream` wrote, as a
    /// programmatic dependent launch on sm_90+ (`cc`): the driver prepares it while the first
    /// pass's last blocks still run, and its blocks wait in `pdl_wait()` (kernels/common.cuh)
    /// until that grid has finished and its writes are visible. This hides most of the launch
    /// gap between the two passes (about 1 us on an H200). The kernel must call `pdl_wait()`
    /// before it touches memory the first pass writes or reads. Elsewhere (older GPUs,
    /// `HYBLAS_PDL=0`) it is an ordinary launch and `pdl_wait()` returns at once.
    pub fn launch_dependent(&self, l: Launch, stream: sys::CUstream, args: &mut Args, cc: (i32, i32)) -> Result<()> {
        self.launch_with(l, stream, args, cc.0 >= 9 && *PDL)
    }

    fn launch_with(&self, l: Launch, stream: sys::CUstream, args: &mut Args, pdl: bool) -> Result<()> {
        if l.grid.0 == 0 || l.grid.1 == 0 || l.grid.2 == 0 {
            return Ok(());
        }
        let mut ptrs = [std::ptr::null_mut::<c_void>(); MAX_ARGS];
        for (p, s) in ptrs.iter_mut().zip(&mut args.store[..args.len]) {
            *p = s.as_mut_ptr() as *mut c_void;
        }
        if pdl {
            // SAFETY: the attribute and config live until the call returns; the value union
            // is zeroed before the one field is set.
            let mut attr: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
            attr.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
            attr.value.programmaticStreamSerializationAllowed = 1;
            let config = sys::CUlaunchConfig {
                gridDimX: l.grid.0,
                gridDimY: l.grid.1,
                gridDimZ: l.grid.2,
                blockDimX: l.block.0,
                blockDimY: l.block.1,
                blockDimZ: l.block.2,
                sharedMemBytes: l.smem,
                hStream: stream,
                attrs: &mut attr,
                numAttrs: 1,
            };
            return check(
                unsafe { sys::cuLaunchKernelEx(&config, self.raw.0, ptrs.as_mut_ptr(), std::ptr::null_mut()) },
                "cuLaunchKernelEx",
            );
        }
        check(
            unsafe {
                sys::cuLaunchKernel(
                    self.raw.0,
                    l.grid.0,
                    l.grid.1,
                    l.grid.2,
                    l.block.0,
                    l.block.1,
                    l.block.2,
                    l.smem,
                    stream,
                    ptrs.as_mut_ptr(),
                    std::ptr::null_mut(),
                )
            },
            "cuLaunchKernel",
        )
    }
}
