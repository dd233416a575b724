//! Level 1 on the GPU: host sides of `kernels/level1.cu`.
//!
//! Each routine is one generic body over the four precisions: quick returns decided on the
//! host where the scalars are host values, the block shape from the tuner, then the launch.

use super::kernels::{Args, Family, Launch};
use super::tune::{self, KernelSpec, TuneCase};
use super::{elem, DVec, Exec, In, Result, Runtime};
use crate::types::Scalar;

/// Elementwise kernels: 1-D blocks, one 16-byte unit (or one element) per thread.
pub static ELEMWISE: KernelSpec =
    KernelSpec { name: "axpy", tx: &[64, 96, 128, 192, 256, 384, 512, 768, 1024], ty: &[1], smem: tune::no_smem };

/// Elements per thread on the contiguous path (one 16-byte access).
fn per_thread<T>() -> u64 {
    16 / std::mem::size_of::<T>() as u64
}

/// Contiguous and 16-byte aligned: the `_v` kernels apply.
fn vectorizable<T>(v: &[DVec]) -> bool {
    v.iter().all(|d| d.inc == 1 && d.ptr % 16 == 0) && std::mem::size_of::<T>() <= 16
}

/// y := alpha*x + y.
pub fn axpy<T: Scalar>(ex: &Exec, n: i64, alpha: In<T>, x: DVec, y: DVec) -> Result<()> {
    if n <= 0 || alpha.host().is_some_and(|a| a == T::zero()) {
        return Ok(());
    }
    let (a, ap) = alpha.parts();
    let vec = vectorizable::<T>(&[x, y]);
    let units = if vec { (n as u64).div_ceil(per_thread::<T>()) } else { n as u64 };
    let f = ex.function::<T>(Family::Level1, if vec { "axpy_v" } else { "axpy" })?;
    let (tx, _) = tune::choose(ex.rt, &f, &ELEMWISE, T::PREFIX, elem::<T>(), tune::size_class(units), |tx, _| {
        units.div_ceil(tx as u64)
    });
    let l = Launch { grid: (units.div_ceil(tx as u64) as u32, 1, 1), block: (tx, 1, 1), smem: 0 };
    let mut args = Args::new();
    args.arg(n).arg(a).arg(ap).arg(x.ptr);
    if vec {
        args.arg(y.ptr);
    } else {
        args.arg(x.inc).arg(y.ptr).arg(y.inc);
    }
    f.launch(l, ex.stream, &mut args)
}

/// The cases `hyblas tune` measures for this family.
pub fn tune_cases(rt: &'static Runtime) -> Result<Vec<TuneCase>> {
    Ok(vec![axpy_case::<f32>(rt)?, axpy_case::<f64>(rt)?])
}

fn axpy_case<T: Scalar>(rt: &'static Runtime) -> Result<TuneCase> {
    let n: i64 = 1 << 26;
    let bytes = n as usize * std::mem::size_of::<T>();
    let x = super::DeviceBuffer::new(bytes)?;
    let y = super::DeviceBuffer::new(bytes)?;
    let ex = Exec::own(rt);
    let timer = super::timing::Timer::new(ex.stream)?;
    let func = ex.function::<T>(Family::Level1, "axpy_v")?;
    Ok(TuneCase {
        key: format!("{}axpy", T::PREFIX),
        spec: &ELEMWISE,
        func,
        elem: elem::<T>(),
        run: Box::new(move || {
            let ex = Exec::own(rt);
            let xv = DVec { ptr: x.ptr, inc: 1 };
            let yv = DVec { ptr: y.ptr, inc: 1 };
            timer.median(2, 10, &mut || axpy::<T>(&ex, n, In::Host(T::one()), xv, yv))
        }),
    })
}

// ---- The rest of Level 1 (signatures fixed; bodies by the Level 1 work) ----

/// Result index of `i?amax` (1-based, 0 when n <= 0 or inc <= 0), as cuBLAS returns it:
/// 32-bit (`cublasIsamax_v2`) or 64-bit (`_v2_64`), in host or device memory.
#[derive(Clone, Copy, Debug)]
pub enum IndexOut {
    Host32(*mut i32),
    Host64(*mut i64),
    Dev32(u64),
    Dev64(u64),
}

/// x := alpha*x. `A` is `T` or, for `csscal`/`zdscal`, `T::Real`.
pub fn scal<T: Scalar, A: Scalar>(_ex: &Exec, _n: i64, _alpha: In<A>, _x: DVec) -> Result<()> {
    Err(super::GpuError::Unsupported("scal"))
}
/// y := x.
pub fn copy<T: Scalar>(_ex: &Exec, _n: i64, _x: DVec, _y: DVec) -> Result<()> {
    Err(super::GpuError::Unsupported("copy"))
}
/// x <-> y.
pub fn swap<T: Scalar>(_ex: &Exec, _n: i64, _x: DVec, _y: DVec) -> Result<()> {
    Err(super::GpuError::Unsupported("swap"))
}
/// sum x_i * y_i (conj: sum conj(x_i) * y_i).
pub fn dot<T: Scalar>(_ex: &Exec, _n: i64, _x: DVec, _y: DVec, _conj: bool, _out: super::Out<T>) -> Result<()> {
    Err(super::GpuError::Unsupported("dot"))
}
/// Euclidean norm, without overflow or harmful underflow.
pub fn nrm2<T: Scalar>(_ex: &Exec, _n: i64, _x: DVec, _out: super::Out<T::Real>) -> Result<()> {
    Err(super::GpuError::Unsupported("nrm2"))
}
/// sum |re x_i| + |im x_i|.
pub fn asum<T: Scalar>(_ex: &Exec, _n: i64, _x: DVec, _out: super::Out<T::Real>) -> Result<()> {
    Err(super::GpuError::Unsupported("asum"))
}
/// First index of the largest |re| + |im|.
pub fn iamax<T: Scalar>(_ex: &Exec, _n: i64, _x: DVec, _out: IndexOut) -> Result<()> {
    Err(super::GpuError::Unsupported("iamax"))
}
