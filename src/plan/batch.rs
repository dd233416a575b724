//! Batched GEMM (`cblas_?gemm_batch`, `cblas_?gemm_batch_strided` and their Fortran forms, after
//! the ABI's checks): how a batch of independent products runs.
//!
//! | step | decision | setting (default) |
//! | --- | --- | --- |
//! | 1 | the batch in device memory: on the GPU, each group of same-call products as one batched call (hyblas's small-product kernel for small m*n and m*n*k, else cuBLAS's strided or pointer-array batched GEMM), the others one by one through the GEMM planner's device path | `HYBLAS_GPU_BATCH_MAX_MN` (256; z 128), `HYBLAS_GPU_BATCH_MAX_MNK` (s, c 8192; d, z 4096) |
//! | 2 | a host batch that is one call (same shape and scalars, distinct outputs) of at least `HYBLAS_OFFLOAD_MIN_FLOPS` in all: on the GPU (one pipelined transfer, one batched call) where the offload model prices it faster (its copies at most `HYBLAS_BATCH_OFFLOAD_GBS`), or where `HYBLAS_DEVICE=gpu` forces it | `HYBLAS_OFFLOAD_MIN_FLOPS` (2*256^3), `HYBLAS_BATCH_OFFLOAD_GBS` (10) |
//! | 3 | two products write the same C: one after the other, in order (what a loop of calls would give) | |
//! | 4 | a group of small products (at most `HYBLAS_BATCH_SMALL_FLOPS` flops each), or of at least `HYBLAS_BATCH_AT_ONCE` products per thread: many at once, one thread each | `HYBLAS_BATCH_SMALL_FLOPS` (2*96^3), `HYBLAS_BATCH_AT_ONCE` (4) |
//! | 5 | the others (a few large products): one after the other, each threaded (the planner's own choice, offload included) | |
//!
//! Step 4 is where a batch gains over a loop of calls: a product of a few hundred flops costs
//! less than waking the pool, so a loop runs it on one thread while the other threads wait; the
//! batch spreads the products over the threads instead. Larger products too, where there are
//! several per thread: each thread then computes whole products and waits on no other (100
//! DGEMM products of 128 on the H200 host's 16 cores: 661 GFLOP/s at once, 134 each threaded;
//! 256: 756 and 330; 512: 733 and 513; on 4 threads 128: 207 and 104, 512: 426 and 443). The
//! trace writes one line per batch.

use crate::config;
use crate::cpu::level3 as eng;
use crate::cpu::threads;
use crate::plan::gpu::{Decision, Reason, Route};
use crate::trace;
use crate::types::{MatMut, MatRef, Scalar, Trans};
use once_cell::sync::Lazy;

/// One product of a batch, column-major (the ABI has mapped row-major calls), checked.
#[derive(Clone, Copy, Debug)]
pub struct Product<T> {
    pub ta: Trans,
    pub tb: Trans,
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub alpha: T,
    pub a: *const T,
    pub lda: usize,
    pub b: *const T,
    pub ldb: usize,
    pub beta: T,
    pub c: *mut T,
    pub ldc: usize,
}

// SAFETY: the pointers are the caller's operands, valid for the whole batch call; products that
// run at once write disjoint C (step 3 runs the others in order).
unsafe impl<T: Send> Send for Product<T> {}
unsafe impl<T: Sync> Sync for Product<T> {}

impl<T: Scalar> Product<T> {
    /// Nothing to compute (reference GEMM's quick return).
    fn is_empty(&self) -> bool {
        self.m == 0 || self.n == 0 || ((self.alpha.is_zero() || self.k == 0) && self.beta.is_one())
    }
    /// Step 4's: something to compute, at most `HYBLAS_BATCH_SMALL_FLOPS`.
    fn is_small(&self) -> bool {
        // In integers (saturating): this runs once or twice per product of a batch of 10^4
        // 4 x 4 products, where three conversions to f64 showed in the profile.
        let mnk = self.m.saturating_mul(self.n).saturating_mul(self.k);
        !self.is_empty() && mnk.saturating_mul(if T::IS_COMPLEX { 8 } else { 2 }) <= *SMALL_FLOPS_INT
    }
    fn flops(&self) -> f64 {
        let f = 2.0 * self.m as f64 * self.n as f64 * self.k as f64;
        if T::IS_COMPLEX {
            4.0 * f
        } else {
            f
        }
    }
    /// Through the one GEMM planner (device memory, offload, threads: as a single call).
    unsafe fn planned(&self) {
        let p = self;
        let i = |v: usize| v as isize;
        super::gemm::gemm(
            p.ta,
            p.tb,
            i(p.m),
            i(p.n),
            i(p.k),
            p.alpha,
            p.a,
            i(p.lda),
            p.b,
            i(p.ldb),
            p.beta,
            p.c,
            i(p.ldc),
        );
    }
    /// The operands as the CPU engine takes them.
    fn views(&self) -> (MatRef<T>, bool, MatRef<T>, bool, MatMut<T>) {
        let p = self;
        let (av, ca) = MatRef::op(p.a, p.ta, p.m, p.k, p.lda);
        let (bv, cb) = MatRef::op(p.b, p.tb, p.k, p.n, p.ldb);
        (av, ca, bv, cb, MatMut::col_major(p.c, p.m, p.n, p.ldc))
    }
    /// Whether A and B are read (alpha == 0 or k == 0 reads neither, as reference BLAS).
    fn reads(&self) -> bool {
        !self.alpha.is_zero() && self.k > 0
    }
    /// The operands as device matrices (device memory: step 1).
    fn dmats(&self) -> (crate::gpu::DMat, crate::gpu::DMat, crate::gpu::DMat) {
        use crate::gpu::DMat;
        (
            DMat::of(self.a, self.lda as isize),
            DMat::of(self.b, self.ldb as isize),
            DMat::of(self.c as *const T, self.ldc as isize),
        )
    }
}

/// Where the products of a [`Group`] find their operands.
#[derive(Clone, Copy, Debug)]
pub enum Ops<T> {
    /// Product i's at the group's first product's plus i times these steps (elements): a strided
    /// call.
    Strided { sa: isize, sb: isize, sc: isize },
    /// Product i's at `a[i]`, `b[i]`, `c[i]` (the caller's arrays: a group of a grouped call).
    Arrays { a: *const *const T, b: *const *const T, c: *const *mut T },
}

/// `count` products of one call but for their operands, as the batch APIs give them: a group of
/// `cblas_?gemm_batch` or a whole `cblas_?gemm_batch_strided` (column-major: the ABI has
/// mapped row-major calls). The batch is walked group by group, never copied out product by
/// product on the CPU (10^4 products of 4 x 4 x 4 take about 10 ns each; building a list of
/// them cost a third of that).
#[derive(Clone, Copy, Debug)]
pub struct Group<T> {
    /// The call's transposes, sizes, leading dimensions and scalars; its operands product 0's
    /// (for [`Ops::Arrays`], what the arrays' first entries hold).
    pub call: Product<T>,
    pub ops: Ops<T>,
    pub count: usize,
}

// SAFETY: as Product's: the caller's arrays and operands, valid for the whole batch call.
unsafe impl<T: Send> Send for Group<T> {}
unsafe impl<T: Sync> Sync for Group<T> {}

impl<T: Scalar> Group<T> {
    /// Product i < count.
    ///
    /// # Safety
    /// The caller's arrays hold `count` entries.
    #[inline]
    pub unsafe fn product(&self, i: usize) -> Product<T> {
        let p = &self.call;
        match self.ops {
            Ops::Strided { sa, sb, sc } => {
                let i = i as isize;
                let (a, b, c) = (p.a.wrapping_offset(i * sa), p.b.wrapping_offset(i * sb), p.c.wrapping_offset(i * sc));
                Product { a, b, c, ..*p }
            }
            Ops::Arrays { a, b, c } => Product { a: *a.add(i), b: *b.add(i), c: *c.add(i), ..*p },
        }
    }
    /// Whether its products have work (the same answer for every one).
    fn works(&self) -> bool {
        self.count > 0 && !self.call.is_empty()
    }
    /// Its products with work, in order.
    unsafe fn products(&self) -> impl Iterator<Item = Product<T>> + Clone + '_ {
        (0..if self.works() { self.count } else { 0 }).map(move |i| self.product(i))
    }
}

/// Every product with work of `groups`, in order (device memory and the GPU's steps take them
/// as a list; the CPU's never).
unsafe fn work_list<T: Scalar>(groups: &[Group<T>]) -> Vec<Product<T>> {
    groups.iter().flat_map(|g| g.products()).collect()
}

/// Products [lo, hi) of `g` (small ones: step 4's) one after the other on this thread, on the
/// set-up `eng` made for the group. On the tiny kernels, a product costs the kernel calls
/// and a few additions; else the one-block path per product.
unsafe fn one_thread<T: Scalar>(g: &Group<T>, eng: &eng::gemm::OneThread<T>, lo: usize, hi: usize) {
    let p = g.product(lo);
    let (av, ca, bv, cb, cv) = p.views();
    match (eng.tiles(p.alpha, &av, ca, &bv, cb, &cv), g.ops) {
        (Some(t), Ops::Strided { sa, sb, sc }) => {
            let (mut a, mut b, mut c) = (p.a, p.b, p.c);
            for _ in lo..hi {
                t.product(p.alpha, a, b, p.beta, c);
                (a, b, c) = (a.wrapping_offset(sa), b.wrapping_offset(sb), c.wrapping_offset(sc));
            }
        }
        (Some(t), Ops::Arrays { a, b, c }) => {
            for i in lo..hi {
                t.product(p.alpha, *a.add(i), *b.add(i), p.beta, *c.add(i));
            }
        }
        (None, ops) => {
            // Packed: an operand every product of the piece reads is packed once.
            let same = match ops {
                Ops::Strided { sa, sb, .. } => (sa == 0, sb == 0),
                Ops::Arrays { a, b, .. } => {
                    let all = |x: *const *const T| (lo..hi).all(|i| *x.add(i) == *x.add(lo));
                    (all(a), all(b))
                }
            };
            eng.gemm_many(p.alpha, p.beta, hi - lo, same, |i| g.product(lo + i).views());
        }
    }
}

/// Products per piece of work a thread claims in step 4: enough that claiming costs little next
/// to the products, few enough that the threads finish together.
const SMALL_CHUNK: usize = 64;

/// Whether `q` is the same call as `p` but for its operands (one strided call can hold both).
fn same_call<T: Scalar>(p: &Product<T>, q: &Product<T>) -> bool {
    (p.ta, p.tb, p.m, p.n, p.k, p.lda, p.ldb, p.ldc) == (q.ta, q.tb, q.m, q.n, q.k, q.lda, q.ldb, q.ldc)
        && p.alpha == q.alpha
        && p.beta == q.beta
}

/// Elements from `x` to `y`, where that is a whole non-negative number of them.
fn step<T>(x: *const T, y: *const T) -> Option<i64> {
    let (d, e) = ((y as isize).wrapping_sub(x as isize), std::mem::size_of::<T>() as isize);
    (d >= 0 && d % e == 0).then_some((d / e) as i64)
}

/// The operand steps from product `p` to `q`: A's, B's, C's.
fn steps<T>(p: &Product<T>, q: &Product<T>) -> (Option<i64>, Option<i64>, Option<i64>) {
    (step(p.a, q.a), step(p.b, q.b), step(p.c as *const T, q.c as *const T))
}

/// Step 1: a batch in device memory runs on the GPU, waited for once. Each group of products
/// that one batched call describes (the same call but for the operands, each writing its own C)
/// runs as one call: on hyblas's small-product kernel where [`kernel_decision`] says (small m,
/// n, k), else cuBLAS's `cublas?gemmStridedBatched` (operands at constant steps) or
/// `cublas?gemmBatched` (device arrays of the operands' addresses, uploaded for the call). The
/// other products go one by one, in order, through the GEMM planner's device path (split-k,
/// Strassen or cuBLAS by its model). Whether the batch is in device memory is asked of its first
/// and last products' operands only (a pointer query costs about a microsecond; the batch APIs
/// take a batch on one side). False: host memory, nothing done.
unsafe fn on_device<T: Scalar>(name: &'static str, products: &[Product<T>]) -> bool {
    // Host memory (the common case) is told by the first product, before anything is collected.
    let Some(first) = products.iter().find(|p| !p.is_empty()) else { return false };
    if !crate::gpu::runtime::is_device_pointer(first.c as *const std::ffi::c_void) {
        return false;
    }
    let work: Vec<&Product<T>> = products.iter().filter(|p| !p.is_empty()).collect();
    let last = work[work.len() - 1];
    let mut ops = vec![first.c as *const std::ffi::c_void, last.c as *const std::ffi::c_void];
    for p in [first, last] {
        if p.reads() {
            ops.extend([p.a as *const std::ffi::c_void, p.b as *const std::ffi::c_void]);
        }
    }
    // Calls made: [hyblas strided, hyblas pointer arrays, cuBLAS strided, cuBLAS pointer
    // arrays, one by one].
    let calls = std::cell::Cell::new([0usize; 5]);
    let count = |i: usize| {
        let mut c = calls.get();
        c[i] += 1;
        calls.set(c);
    };
    let shape = || {
        let c = calls.get();
        format!(
            "products={} run={} (hyblas kernel: strided calls={}, pointer-array calls={}; cuBLAS: strided calls={}, pointer-array calls={}; one by one={})",
            products.len(),
            work.len(),
            c[0],
            c[1],
            c[2],
            c[3],
            c[4]
        )
    };
    let gpu = |ex: &crate::gpu::Exec| -> crate::gpu::Result<()> {
        let mut s = 0;
        while s < work.len() {
            // The group from s: the same call, each product writing its own C.
            let p = work[s];
            let mut e = s + 1;
            while e < work.len() && same_call(p, work[e]) {
                e += 1;
            }
            let group = &work[s..e];
            if group.len() > 1 && !outputs_repeat_in(group) {
                device_group(ex, group, &count)?;
            } else {
                for q in group {
                    let (a, b, c) = q.dmats();
                    let i = |v: usize| v as i64;
                    super::gemm::device_gemm(ex, q.ta, q.tb, i(q.m), i(q.n), i(q.k), q.alpha, a, b, q.beta, c)?;
                    count(4);
                }
            }
            s = e;
        }
        Ok(())
    };
    // Nothing here answers NotReady (a kernel still compiling gives its group to cuBLAS, and the
    // planner's device path falls back to cuBLAS itself), so the vendor route is never taken.
    let vendor = |_: &crate::gpu::Exec| Err(crate::gpu::GpuError::Other("batch: no vendor route".into()));
    super::on_gpu("", name, shape, &ops, gpu, vendor).is_some()
}

/// One group of same-call products with distinct outputs (on_device's) as one batched call
/// ([`batched_call`]): strided where the operands lie at constant steps (and C's do not
/// overlap), else through device arrays of their addresses.
unsafe fn device_group<T: Scalar>(
    ex: &crate::gpu::Exec,
    group: &[&Product<T>],
    count: &dyn Fn(usize),
) -> crate::gpu::Result<()> {
    use crate::gpu::batched::{At, BMat};
    use crate::gpu::driver;
    let p = group[0];
    let i = |v: usize| v as i64;
    let (a, b, c) = p.dmats();
    // Constant steps: every pair at the first pair's, C's far enough apart not to overlap.
    let st = steps(p, group[1]);
    if let (Some(sa), Some(sb), Some(sc)) = st {
        if sc >= i(p.ldc * (p.n - 1) + p.m) && group.windows(2).all(|w| steps(w[0], w[1]) == st) {
            let x = |d: crate::gpu::DMat, stride| BMat { at: At::Strided { ptr: d.ptr, stride }, ld: d.ld };
            let own = batched_call(ex, p, [x(a, sa), x(b, sb), x(c, sc)], i(group.len()))?;
            count(if own { 0 } else { 2 });
            return Ok(());
        }
    }
    // Pointer arrays: A's, B's and C's addresses, uploaded to the stream's workspace (the copy is
    // ordered before the call on the stream; a pageable source is staged before the copy returns).
    let mut addrs: Vec<u64> = Vec::with_capacity(3 * group.len());
    addrs.extend(group.iter().map(|q| q.a as u64));
    addrs.extend(group.iter().map(|q| q.b as u64));
    addrs.extend(group.iter().map(|q| q.c as u64));
    let bytes = addrs.len() * 8;
    let scratch = ex.rt.scratch(ex.stream);
    let mut sc = scratch.lock();
    let dev = sc.workspace(bytes)?;
    driver::check(
        driver::sys::cuMemcpyHtoDAsync_v2(dev, addrs.as_ptr() as *const std::ffi::c_void, bytes, ex.stream),
        "cuMemcpyHtoDAsync",
    )?;
    let g = 8 * group.len() as u64;
    let x = |j: u64, ld| BMat { at: At::Array(dev + j * g), ld };
    let own = batched_call(ex, p, [x(0, a.ld), x(1, b.ld), x(2, c.ld)], i(group.len()))?;
    count(if own { 1 } else { 3 });
    Ok(())
}

/// `count` products of `p`'s call (its transposes, sizes and scalars; operands `ops`, all
/// strided or all device arrays of addresses) as one batched call on `ex`: hyblas's kernel where
/// [`kernel_decision`] says, else (or while the kernel still compiles) cuBLAS's strided or
/// pointer-array batched GEMM. True where hyblas's kernel ran. Where `p` reads neither A nor B,
/// k = 0 is passed (reference BLAS: they may be anything).
fn batched_call<T: Scalar>(
    ex: &crate::gpu::Exec,
    p: &Product<T>,
    ops: [crate::gpu::batched::BMat; 3],
    count: i64,
) -> crate::gpu::Result<bool> {
    use crate::gpu::batched::{self, At};
    use crate::gpu::vendor_calls::{vendor_gemm_batched, vendor_gemm_strided};
    use crate::gpu::{DMat, GpuError, In};
    let i = |v: usize| v as i64;
    let (m, n, k) = (i(p.m), i(p.n), if p.reads() { i(p.k) } else { 0 });
    if kernel_decision::<T>(m, n, k).route == Route::Hyblas {
        let [a, b, c] = ops;
        let (al, be) = (In::Host(p.alpha), In::Host(p.beta));
        match batched::gemm_shaped(ex, batched::Shape::of(m, n), p.ta, p.tb, m, n, k, al, a, b, be, c, count) {
            Err(GpuError::NotReady { .. }) => {}
            r => return r.map(|_| true),
        }
    }
    let (ta, tb) = (p.ta, p.tb);
    match ops.map(|x| (x.at, x.ld)) {
        [(At::Strided { ptr: pa, stride: sa }, la), (At::Strided { ptr: pb, stride: sb }, lb), (At::Strided { ptr: pc, stride: sc }, lc)] =>
        {
            let d = |ptr, ld| DMat { ptr, ld };
            let (a, b, c) = ((d(pa, la), sa), (d(pb, lb), sb), (d(pc, lc), sc));
            vendor_gemm_strided(ex, (ta, tb), (m, n, k), p.alpha, a, b, p.beta, c, count)?
        }
        [(At::Array(a), la), (At::Array(b), lb), (At::Array(c), lc)] => {
            vendor_gemm_batched(ex, (ta, tb), (m, n, k), p.alpha, [a, b, c], [la, lb, lc], p.beta, count)?
        }
        _ => return Err(GpuError::Unsupported("batched call: operands of both forms")),
    }
    Ok(false)
}

/// Host batches step 2 has run on the GPU in this process (tests check their route with it).
static OFFLOADED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// How many host-memory batches this process has run on the GPU (step 2).
pub fn offloaded_batches() -> usize {
    OFFLOADED.load(std::sync::atomic::Ordering::Relaxed)
}

/// Step 2: a host-memory batch that is one call (every product the same shape and scalars, each
/// writing its own C) goes to the GPU as one pipelined transfer and one batched call
/// (`hybrid::offload_batch`) where the offload model (`plan::offload::Rates`, the host GEMM's)
/// prices it faster than the CPU engine, or where the GPU is forced (`HYBLAS_DEVICE=gpu`,
/// `plan::host::with_side`). Below `HYBLAS_OFFLOAD_MIN_FLOPS` in all, the CPU without asking.
/// True: done (C written). False: the CPU's; C untouched (a failed offload writes C only if the
/// failure comes while C is being copied back, which a device error alone can cause).
unsafe fn offloaded<T: Scalar>(name: &'static str, products: &[Product<T>], run: usize) -> bool {
    use super::offload::Side;
    use crate::hybrid::offload_batch::{self as ob, HostBlock};
    use crate::types::prec_index;
    let forced = super::host::forced();
    if forced.is_some_and(|f| f.0 == Side::Cpu) {
        return false;
    }
    let Some(p) = products.iter().find(|p| !p.is_empty()) else { return false };
    let flops = p.flops() * run as f64;
    if forced.is_none() && flops < *super::gemm::MIN_FLOPS || super::host::disabled() {
        return false;
    }
    let work: Vec<&Product<T>> = products.iter().filter(|q| !q.is_empty()).collect();
    if !work.iter().all(|q| same_call(p, q)) || outputs_repeat_in(&work) {
        return false;
    }
    let Ok(rt) = crate::gpu::Runtime::current() else { return false };
    let start = std::time::Instant::now();
    // The prices: the CPU engine on every thread at this size's rate; the GPU as the uploads,
    // the products at cuBLAS's rate on one GEMM of the batch's whole area, and the downloads,
    // one after the other, plus an offloaded call's fixed cost.
    let es = std::mem::size_of::<T>();
    let reads = p.reads();
    let (c_in, count) = (!p.beta.is_zero(), work.len());
    let (m, n, k) = (p.m, p.n, p.k);
    let rates = super::offload::Rates::for_device(rt);
    let i = prec_index(T::PREFIX);
    let threads = threads::nthreads();
    let cpu_s = flops / (rates.cpu_rate(i, ((m * n * k) as f64).cbrt()) * threads as f64);
    let up = count * es * (if reads { m * k + k * n } else { 0 } + if c_in { m * n } else { 0 });
    let down = count * es * m * n;
    // The copies at the rate the batch's packing threads feed them, and at most the rate the
    // batch pipeline has been measured at (`BATCH_PIPE_KEY`). Priced at the DMA's own rate, a
    // 1-thread batch of 10^4 16 x 16 DGEMMs went to the H200 for a predicted 1.6 ms against the
    // CPU's 2.6 and took 12-14 ms there; 100 products of 128-512 took 2.5-8x their prediction.
    let (alone, fed, pipe) = (rates.alone(), rates.feed_xfer(threads), *BATCH_PIPE_BPS);
    let x = super::offload::Xfer { h2d: alone.h2d.min(fed.h2d).min(pipe), d2h: alone.d2h.min(fed.d2h).min(pipe) };
    let side = ((m * n * count) as f64).sqrt();
    let gpu_s =
        rates.latency + up as f64 / x.h2d + flops / rates.gpu_rate(i, side, k.max(1) as f64) + down as f64 / x.d2h;
    let priced = format!("predicted cpu {:.1} us, gpu {:.1} us", cpu_s * 1e6, gpu_s * 1e6);
    if forced.is_none() && gpu_s >= cpu_s {
        if trace::enabled() {
            trace::line(name, &format!("products={} offload declined ({priced})", products.len()), "cpu", 0, 0.0);
        }
        return false;
    }
    // The blocks: op(A) is m x k, stored rows_a x cols_a with lda; likewise B; C m x n.
    let (ra, ca) = if p.ta == Trans::No { (m, k) } else { (k, m) };
    let (rb, cb) = if p.tb == Trans::No { (k, n) } else { (n, k) };
    let block = |ptr: *const T, rows: usize, cols: usize, ld: usize| HostBlock {
        host: ptr as *mut u8,
        pitch: ld * es,
        width: rows * es,
        height: cols,
    };
    let (a, b): (Vec<HostBlock>, Vec<HostBlock>) = if reads {
        (
            work.iter().map(|q| block(q.a, ra, ca, q.lda)).collect(),
            work.iter().map(|q| block(q.b, rb, cb, q.ldb)).collect(),
        )
    } else {
        (vec![], vec![])
    };
    let c: Vec<HostBlock> = work.iter().map(|q| block(q.c, m, n, q.ldc)).collect();
    let own = std::cell::Cell::new(false);
    let on_gpu = |ex: &crate::gpu::Exec, [da, db, dc]: [u64; 3]| -> crate::gpu::Result<()> {
        use crate::gpu::batched::{At, BMat};
        // Packed back to back: leading dimension the rows, stride the block.
        let x = |ptr, rows: usize, cols: usize| BMat {
            at: At::Strided { ptr, stride: (rows * cols) as i64 },
            ld: rows.max(1) as i64,
        };
        own.set(batched_call(ex, p, [x(da, ra, ca), x(db, rb, cb), x(dc, m, n)], count as i64)?);
        Ok(())
    };
    match ob::batch(rt, &a, &b, &c, c_in, &on_gpu) {
        Ok(st) => {
            OFFLOADED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            if trace::enabled() {
                let by = if forced.is_some() { "forced" } else { "model" };
                let mb = |b: usize| b as f64 / 1e6;
                let kernel = kernel_decision::<T>(m as i64, n as i64, if reads { k as i64 } else { 0 });
                let shape = format!(
                    "products={} run={count} offloaded ({by}: {priced}; up {:.1} MB, down {:.1} MB in {} copies; batched call: {} ({}))",
                    products.len(),
                    mb(st.up_bytes),
                    mb(st.down_bytes),
                    st.copies,
                    if own.get() { "hyblas kernel" } else { "cuBLAS strided" },
                    kernel.reason
                );
                trace::line(name, &shape, "gpu", 0, start.elapsed().as_secs_f64());
            }
            true
        }
        Err(e) => {
            if super::host::disables(&e) {
                super::host::disable();
            }
            if trace::enabled() {
                trace::line(name, &format!("products={} offload failed ({e}): the CPU", products.len()), "cpu", 0, 0.0);
            }
            false
        }
    }
}

/// `HYBLAS_GPU_BATCH_MAX_MN`: batched products on device memory with m*n at most this (and
/// m, n at most 64) and ...
pub const GPU_MAX_MN_KEY: &str = "HYBLAS_GPU_BATCH_MAX_MN";
/// `HYBLAS_GPU_BATCH_MAX_MNK`: ... m*n*k at most this run on hyblas's small-product kernel
/// (`gpu::batched`), the others on cuBLAS's batched GEMM.
pub const GPU_MAX_MNK_KEY: &str = "HYBLAS_GPU_BATCH_MAX_MNK";

/// The defaults, (m*n, m*n*k) per precision s, d, c, z, from `gpubench batch` on an H200
/// (bench/results/s65-h200-batch/, batches of 10^4, cuBLAS's time over the kernel's): within
/// them the kernel was 1.3-38x faster (16 x 16 x 16: SGEMM 1.47, DGEMM 1.59, CGEMM 1.85; 16 x 16
/// x 32 SGEMM 1.22, CGEMM 1.48; 2 x 64 x 16 ZGEMM 1.95; 8 x 8 x 64 ZGEMM 1.30); just past them
/// within noise or slower (16 x 16 x 32 DGEMM 1.02, 24 x 24 x 24 SGEMM 0.84, DGEMM 0.88, CGEMM
/// 0.86; 12 x 12 x 12 ZGEMM 0.94, 16 x 16 x 16 ZGEMM 1.00).
const GPU_DEFAULTS: [(u64, u64); 4] = [(256, 8192), (256, 4096), (256, 8192), (128, 4096)];
static GPU_LIMITS: Lazy<[(u64, u64); 4]> = Lazy::new(|| {
    GPU_DEFAULTS.map(|(mn, mnk)| {
        let get = |key, d: u64| config::threshold(key, d as usize) as u64;
        (get(GPU_MAX_MN_KEY, mn), get(GPU_MAX_MNK_KEY, mnk))
    })
});

/// Whether batched products of this shape on device memory run on hyblas's small-product
/// kernel (`Route::Hyblas`) or cuBLAS's batched GEMM (`Route::Vendor`), and why.
pub fn kernel_decision<T: Scalar>(m: i64, n: i64, k: i64) -> Decision {
    let (max_mn, max_mnk) = GPU_LIMITS[crate::types::prec_index(T::PREFIX)];
    let c = |v: i64| v.max(0) as u64;
    let (mn, mnk) = (c(m) * c(n), c(m) * c(n) * c(k));
    let within = crate::gpu::batched::fits(m, n) && mn <= max_mn && mnk <= max_mnk;
    let route = if within { Route::Hyblas } else { Route::Vendor };
    Decision { route, reason: Reason::BatchSize { mn, mnk, max_mn, max_mnk } }
}

/// Whether two products of the batch write the same C (step 3: then they run in order). Only
/// the first elements are compared: products whose C blocks overlap otherwise are outside the
/// API's rules. A lone strided call answers from its step.
unsafe fn outputs_repeat<T: Scalar>(groups: &[Group<T>]) -> bool {
    let mut working = groups.iter().filter(|g| g.works());
    if let (Some(g), None) = (working.next(), working.next()) {
        if let Ops::Strided { sc, .. } = g.ops {
            return g.count > 1 && sc == 0;
        }
    }
    repeats(groups.iter().flat_map(|g| g.products()).map(|p| p.c as usize))
}

/// The same, for a list of products (a device group's).
fn outputs_repeat_in<T: Scalar>(group: &[&Product<T>]) -> bool {
    repeats(group.iter().map(|p| p.c as usize))
}

/// Whether an address comes twice in `outputs`.
fn repeats(outputs: impl Iterator<Item = usize> + Clone) -> bool {
    // Outputs in increasing order (a strided batch, groups laid out one after the other) repeat
    // none: no sort (sorting 10^4 addresses cost about a tenth of a 4 x 4 batch).
    let mut last = None;
    if outputs.clone().all(|c| last.replace(c).is_none_or(|l| l < c)) {
        return false;
    }
    let mut cs: Vec<usize> = outputs.collect();
    cs.sort_unstable();
    cs.windows(2).any(|w| w[0] == w[1])
}

/// `HYBLAS_BATCH_OFFLOAD_GBS`: the rate (GB/s, each way) at which step 2 prices a host batch's
/// copies at most. Default 10: what the pipeline moved for batches of 100 DGEMM products of
/// 128-512 on the H200 host (`scripts/dev-batch-cpu.sh`, session 66: 8.9-12.7 GB/s, 4 and 16
/// threads; every operand gathered from the caller's memory into pinned chunks, then copied).
pub const BATCH_PIPE_KEY: &str = "HYBLAS_BATCH_OFFLOAD_GBS";
static BATCH_PIPE_BPS: Lazy<f64> = Lazy::new(|| config::float(BATCH_PIPE_KEY).unwrap_or(10.0).max(0.001) * 1e9);

/// `HYBLAS_BATCH_AT_ONCE`: a group of at least this many products per thread runs many at once,
/// one thread a product, whatever their size (step 4); 0: only small products do.
pub const AT_ONCE_KEY: &str = "HYBLAS_BATCH_AT_ONCE";
static AT_ONCE_PER_THREAD: Lazy<usize> = Lazy::new(|| config::threshold(AT_ONCE_KEY, 4));

/// `HYBLAS_BATCH_SMALL_FLOPS`: products of at most this many flops run many at once (step 4).
pub const SMALL_FLOPS_KEY: &str = "HYBLAS_BATCH_SMALL_FLOPS";
static SMALL_FLOPS_INT: Lazy<usize> = Lazy::new(|| {
    config::float(SMALL_FLOPS_KEY).unwrap_or(2.0 * 96.0 * 96.0 * 96.0).clamp(0.0, usize::MAX as f64) as usize
});

/// Run a checked batch (`name`: `dgemm_batch`, for the trace), its groups in order.
///
/// # Safety
/// Every product checked by the ABI (reference GEMM rules); pointers and arrays valid for the
/// call.
pub unsafe fn gemm_batch<T: Scalar>(name: &'static str, groups: &[Group<T>]) {
    let Some(first) = groups.iter().find(|g| g.works()) else { return };
    let count: usize = groups.iter().map(|g| g.count).sum();
    let run: usize = groups.iter().filter(|g| g.works()).map(|g| g.count).sum();
    // 1. Device memory (a batch is on one side: its first product says): on the GPU.
    // (Asked here before a list of products is made for it.)
    if crate::gpu::runtime::is_device_pointer(first.product(0).c as *const std::ffi::c_void)
        && on_device(name, &work_list(groups))
    {
        return;
    }
    let start = std::time::Instant::now();
    // 2. Large enough, one call: the GPU where the offload model says.
    let flops: f64 = groups.iter().filter(|g| g.works()).map(|g| g.call.flops() * g.count as f64).sum();
    if (flops >= *super::gemm::MIN_FLOPS || super::host::forced().is_some()) && offloaded(name, &work_list(groups), run)
    {
        return;
    }
    // 3. Outputs written twice: in order.
    let in_order = outputs_repeat(groups);
    let threads = threads::nthreads();
    // 4. Many at once on the pool's threads, one thread a product: a group of small products,
    // or of enough products that every thread gets several whole ones. Pieces of at most
    // SMALL_CHUNK small products (one large one) of a group, the engine set up once per group.
    let per_thread = *AT_ONCE_PER_THREAD;
    let at_once = |g: &Group<T>| g.call.is_small() || (per_thread > 0 && g.count >= per_thread * threads);
    let groups_at_once: Vec<(&Group<T>, eng::gemm::OneThread<T>)> = if in_order {
        Vec::new()
    } else {
        groups
            .iter()
            .filter(|g| g.works() && at_once(g))
            .map(|g| {
                let p = g.product(0);
                let (_, _, bv, cb, _) = p.views();
                (g, eng::gemm::OneThread::new(p.m, p.n, p.k, bv.rs, cb))
            })
            .collect()
    };
    let together: usize = groups_at_once.iter().map(|(g, _)| g.count).sum();
    if together > 0 {
        if threads <= 1 || together == 1 {
            for (g, e) in &groups_at_once {
                one_thread(g, e, 0, g.count);
            }
        } else {
            // Claimed from one counter by the caller and the pool's threads (rayon's splitting
            // of 10^4 4x4 products into stolen halves cost more than the second core gained).
            let chunk = together.div_ceil(4 * threads).clamp(1, SMALL_CHUNK);
            let chunk_of = |g: &Group<T>| if g.call.is_small() { chunk } else { 1 };
            let pieces: Vec<(usize, usize, usize)> = groups_at_once
                .iter()
                .enumerate()
                .flat_map(|(i, (g, _))| {
                    let c = chunk_of(g);
                    (0..g.count.div_ceil(c)).map(move |q| (i, q * c, ((q + 1) * c).min(g.count)))
                })
                .collect();
            threads::for_each_part(threads, pieces.len(), |q| {
                let (i, lo, hi) = pieces[q];
                let (g, e) = &groups_at_once[i];
                one_thread(g, e, lo, hi)
            });
        }
    }
    // 5. The rest, one after the other, each threaded (none when every group ran at once: no
    // second pass).
    if together < run {
        for g in groups.iter().filter(|g| in_order || !at_once(g)) {
            g.products().for_each(|p| p.planned());
        }
    }
    if trace::enabled() {
        let how = if in_order {
            "outputs repeat: one product after the other".to_string()
        } else {
            format!("{together} products at once on {threads} threads, {} one after the other", run - together)
        };
        let shape = format!("products={count} groups={} run={run} ({how})", groups.len());
        trace::line(name, &shape, "cpu", threads, start.elapsed().as_secs_f64());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn product(c: usize) -> Product<f64> {
        let p = std::ptr::null::<f64>();
        Product {
            ta: Trans::No,
            tb: Trans::No,
            m: 1,
            n: 1,
            k: 1,
            alpha: 1.0,
            a: p,
            lda: 1,
            b: p,
            ldb: 1,
            beta: 1.0,
            c: c as *mut f64,
            ldc: 1,
        }
    }

    /// The measured limits route each precision's shapes as the H200 table says (docs/batched.md),
    /// and the reason names the keys.
    #[test]
    fn gpu_batch_routes_follow_the_measured_limits() {
        use crate::types::{C32, C64};
        let own = |d: Decision| d.route == Route::Hyblas;
        assert!(own(kernel_decision::<f64>(16, 16, 16)) && !own(kernel_decision::<f64>(16, 16, 32)));
        assert!(own(kernel_decision::<f32>(16, 16, 32)) && !own(kernel_decision::<f32>(24, 24, 24)));
        assert!(own(kernel_decision::<C32>(16, 16, 32)) && !own(kernel_decision::<C32>(24, 24, 24)));
        assert!(own(kernel_decision::<C64>(8, 8, 64)) && own(kernel_decision::<C64>(2, 64, 16)));
        assert!(!own(kernel_decision::<C64>(12, 12, 12)) && !own(kernel_decision::<C64>(16, 16, 16)));
        // Past the kernel's 64 even where m*n is small.
        assert!(!own(kernel_decision::<f64>(65, 1, 1)) && !own(kernel_decision::<f64>(1, 65, 1)));
        let why = kernel_decision::<f64>(24, 24, 24).reason.to_string();
        assert!(why.contains("not within") && why.contains(GPU_MAX_MN_KEY) && why.contains(GPU_MAX_MNK_KEY), "{why}");
    }

    #[test]
    fn repeated_outputs_are_found() {
        // Each product a group of one (strided), or all of them one group of arrays.
        let one = |p: Product<f64>| Group { call: p, ops: Ops::Strided { sa: 0, sb: 0, sc: 0 }, count: 1 };
        let repeat = |ps: &[Product<f64>]| {
            let singles: Vec<Group<f64>> = ps.iter().map(|&p| one(p)).collect();
            let (a, b) = (vec![std::ptr::null::<f64>(); ps.len()], vec![std::ptr::null::<f64>(); ps.len()]);
            let c: Vec<*mut f64> = ps.iter().map(|p| p.c).collect();
            let arrays = Group {
                call: ps.first().copied().unwrap_or(product(8)),
                ops: Ops::Arrays { a: a.as_ptr(), b: b.as_ptr(), c: c.as_ptr() },
                count: ps.len(),
            };
            // SAFETY: nothing is read through the operands; the arrays hold ps.len() entries.
            let (x, y) = unsafe { (outputs_repeat(&singles), outputs_repeat(&[arrays])) };
            assert_eq!(x, y, "{ps:?}");
            x
        };
        let (a, b, c) = (product(8), product(16), product(8));
        assert!(!repeat(&[a, b]));
        assert!(repeat(&[a, b, c]));
        assert!(!repeat(&[]));
        // In order (no sort), out of order, a repeat next to itself.
        assert!(!repeat(&[product(8), product(16), product(24)]));
        assert!(!repeat(&[product(24), product(8), product(16)]));
        assert!(repeat(&[product(8), product(16), product(16)]));
        // A product with nothing to compute writes nothing (a group of one).
        let empty = one(Product { m: 0, ..c });
        // SAFETY: as above.
        assert!(!unsafe { outputs_repeat(&[one(a), one(b), empty]) });
        // A strided call: repeats where its step is 0 and it has two products or more.
        let strided = |sc, count| Group { call: a, ops: Ops::Strided { sa: 1, sb: 1, sc }, count };
        // SAFETY: as above.
        unsafe {
            assert!(outputs_repeat(&[strided(0, 2)]) && !outputs_repeat(&[strided(0, 1)]));
            assert!(!outputs_repeat(&[strided(4, 3)]) && !outputs_repeat(&[strided(-4, 3)]));
            // Two strided calls that meet.
            assert!(outputs_repeat(&[strided(1, 3), Group { call: product(16), ..strided(1, 1) }]));
        }
    }
}
