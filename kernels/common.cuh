// Shared by every kernel family: compiled in front of each kernels/<family>.cu by NVRTC
// (no include path, no CUDA headers: everything a kernel needs is here).
//
// Conventions
// - Entry points are extern "C" and named by precision and variant: saxpy, zdotc, dgemv_t.
// - Sizes, increments and leading dimensions are 64-bit (long long); indices too.
// - Block shapes are launch parameters (blockDim.x = Tx, the contiguous direction; blockDim.y
//   = Ty), chosen by the occupancy tuner: never assume a fixed block size.
// - Scalars come as (value, pointer): when the pointer is non-null it is a device pointer and
//   wins (cuBLAS's device pointer mode), else the value is used.
// - Reductions never depend on the block shape or on atomics: a fixed decomposition of the
//   index space (chunks, panels) and fixed summation trees, so results are bitwise identical
//   across shapes and runs.

typedef long long i64;

// Compile units. The host compiles each kernel file once per precision, split-k once per
// precision and kernel configuration (src/gpu/kernels.rs, `Unit`): in front of this file it
// defines HB_UNIT, HB_UNIT_PREC_<p> and, for split-k, HB_UNIT_VARIANT_<kernel>, and each file
// instantiates its entry points under `#if HB_PREC(p)` and `#if HB_VARIANT(kernel)`. A unit
// then holds what one kind of call needs, compiles in seconds, and a process compiles only
// the units it uses. Without HB_UNIT (scripts/kernel-regs.py) every entry point is compiled.
#define HB_CAT_(a, b) a##b
#define HB_CAT(a, b) HB_CAT_(a, b)
#ifdef HB_UNIT
#define HB_PREC(P) HB_CAT(HB_UNIT_PREC_, P)
#define HB_VARIANT(V) HB_CAT(HB_UNIT_VARIANT_, V)
#else
#define HB_PREC(P) 1
#define HB_VARIANT(V) 1
#endif

// Programmatic dependent launch (sm_90+, see Function::launch_dependent): a second pass calls
// pdl_wait() before it touches memory the first pass writes or reads. It returns once that grid
// has completed and its writes are visible (at once when the kernel was launched the ordinary
// way). First passes do not call griddepcontrol.launch_dependents: the implicit trigger as
// their blocks exit already hides the launch gap, and an explicit one at the start made
// DTRMV-UTN 8192 13% and SGEMV-N 8192 7% slower on an H200 (scripts/gpu-ab.sh).
__device__ __forceinline__ void pdl_wait() {
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
typedef unsigned long long u64;

// A 16-byte load of data the kernel reads once and never writes (a matrix streamed by a
// memory-bound kernel): the read-only path, not allocated in L1, so L1 keeps the vector that
// every warp reads again. V is a 16-byte, 16-byte-aligned struct.
template <typename V> __device__ __forceinline__ V ld_stream16(const void* p) {
#ifdef HYBLAS_EMU
    V r;
    __builtin_memcpy(&r, p, 16);
    return r;
#else
    union {
        unsigned u[4];
        V v;
    } r;
    asm("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
        : "=r"(r.u[0]), "=r"(r.u[1]), "=r"(r.u[2]), "=r"(r.u[3])
        : "l"(p));
    return r.v;
#endif
}

struct __align__(8) cfloat { float x, y; };
struct __align__(16) cdouble { double x, y; };

// Real type of each precision and basic arithmetic, overloaded for all four.
template <typename T> struct real_of { typedef T type; };
template <> struct real_of<cfloat> { typedef float type; };
template <> struct real_of<cdouble> { typedef double type; };

__device__ __forceinline__ float  make_t(float re, float)   { return re; }
__device__ __forceinline__ double make_t(double re, double) { return re; }

template <typename T> __device__ __forceinline__ T zero() { return T(0); }
template <> __device__ __forceinline__ cfloat zero<cfloat>() { return cfloat{0.f, 0.f}; }
template <> __device__ __forceinline__ cdouble zero<cdouble>() { return cdouble{0.0, 0.0}; }
template <typename T> __device__ __forceinline__ T one() { return T(1); }
template <> __device__ __forceinline__ cfloat one<cfloat>() { return cfloat{1.f, 0.f}; }
template <> __device__ __forceinline__ cdouble one<cdouble>() { return cdouble{1.0, 0.0}; }

__device__ __forceinline__ cfloat operator+(cfloat a, cfloat b) { return cfloat{a.x + b.x, a.y + b.y}; }
__device__ __forceinline__ cdouble operator+(cdouble a, cdouble b) { return cdouble{a.x + b.x, a.y + b.y}; }
__device__ __forceinline__ cfloat operator-(cfloat a, cfloat b) { return cfloat{a.x - b.x, a.y - b.y}; }
__device__ __forceinline__ cdouble operator-(cdouble a, cdouble b) { return cdouble{a.x - b.x, a.y - b.y}; }
__device__ __forceinline__ cfloat operator*(cfloat a, cfloat b) {
    return cfloat{a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x};
}
__device__ __forceinline__ cdouble operator*(cdouble a, cdouble b) {
    return cdouble{a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x};
}
__device__ __forceinline__ cfloat operator*(float a, cfloat b) { return cfloat{a * b.x, a * b.y}; }
__device__ __forceinline__ cdouble operator*(double a, cdouble b) { return cdouble{a * b.x, a * b.y}; }

// Fused multiply-add acc + a*b with a fixed evaluation order (the same on every shape).
__device__ __forceinline__ float  fma_t(float a, float b, float acc)    { return fmaf(a, b, acc); }
__device__ __forceinline__ double fma_t(double a, double b, double acc) { return fma(a, b, acc); }
__device__ __forceinline__ cfloat fma_t(cfloat a, cfloat b, cfloat acc) {
    return cfloat{fmaf(-a.y, b.y, fmaf(a.x, b.x, acc.x)), fmaf(a.y, b.x, fmaf(a.x, b.y, acc.y))};
}
__device__ __forceinline__ cdouble fma_t(cdouble a, cdouble b, cdouble acc) {
    return cdouble{fma(-a.y, b.y, fma(a.x, b.x, acc.x)), fma(a.y, b.x, fma(a.x, b.y, acc.y))};
}

__device__ __forceinline__ float  conj_t(float a)  { return a; }
__device__ __forceinline__ double conj_t(double a) { return a; }
__device__ __forceinline__ cfloat conj_t(cfloat a)  { return cfloat{a.x, -a.y}; }
__device__ __forceinline__ cdouble conj_t(cdouble a) { return cdouble{a.x, -a.y}; }

__device__ __forceinline__ bool is_zero(float a)   { return a == 0.f; }
__device__ __forceinline__ bool is_zero(double a)  { return a == 0.0; }
__device__ __forceinline__ bool is_zero(cfloat a)  { return a.x == 0.f && a.y == 0.f; }
__device__ __forceinline__ bool is_zero(cdouble a) { return a.x == 0.0 && a.y == 0.0; }
__device__ __forceinline__ bool is_one(float a)   { return a == 1.f; }
__device__ __forceinline__ bool is_one(double a)  { return a == 1.0; }
__device__ __forceinline__ bool is_one(cfloat a)  { return a.x == 1.f && a.y == 0.f; }
__device__ __forceinline__ bool is_one(cdouble a) { return a.x == 1.0 && a.y == 0.0; }

// |re| + |im| (BLAS cabs1), |x| for reals.
__device__ __forceinline__ float  abs1(float a)   { return fabsf(a); }
__device__ __forceinline__ double abs1(double a)  { return fabs(a); }
__device__ __forceinline__ float  abs1(cfloat a)  { return fabsf(a.x) + fabsf(a.y); }
__device__ __forceinline__ double abs1(cdouble a) { return fabs(a.x) + fabs(a.y); }

// The scalar argument convention: device pointer if non-null, else the value.
template <typename T> __device__ __forceinline__ T scalar_arg(T v, const T* p) { return p ? *p : v; }

// Element i (0-based, logical) of a strided vector as BLAS defines it: a negative increment
// starts at the far end.
__device__ __forceinline__ i64 vidx(i64 i, i64 n, i64 inc) { return inc >= 0 ? i * inc : (i - n + 1) * inc; }

// Warp shuffles for all four types (a fixed butterfly: the same order on every shape).
__device__ __forceinline__ float  shfl_down(float v, int d)  { return __shfl_down_sync(0xffffffffu, v, d); }
__device__ __forceinline__ double shfl_down(double v, int d) { return __shfl_down_sync(0xffffffffu, v, d); }
__device__ __forceinline__ cfloat shfl_down(cfloat v, int d) {
    return cfloat{__shfl_down_sync(0xffffffffu, v.x, d), __shfl_down_sync(0xffffffffu, v.y, d)};
}
__device__ __forceinline__ cdouble shfl_down(cdouble v, int d) {
    return cdouble{__shfl_down_sync(0xffffffffu, v.x, d), __shfl_down_sync(0xffffffffu, v.y, d)};
}
// Sum over the 32 lanes of a warp, result in lane 0: a fixed tree (16, 8, 4, 2, 1).
template <typename T> __device__ __forceinline__ T warp_sum(T v) {
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) v = v + shfl_down(v, d);
    return v;
}

// Instantiate an entry point for the four precisions: INSTANTIATE4(axpy) with a template
// kernel body axpy_body<T>(...) is written per family; see level1.cu for the pattern.

// ---- Asynchronous global -> shared copies (cp.async, sm_80+; plain copies before) ----

// The shared-state-space address of a generic pointer into shared memory.
__device__ __forceinline__ unsigned smem_addr(const void* p) {
    unsigned r;
    asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(r) : "l"(p));
    return r;
}

// Copy `src_bytes` (0 .. cp) bytes from global memory and zero-fill the rest of the cp bytes at
// dst. cp is 16 (src and dst 16-byte aligned), 8 or 4 (aligned to it). With src_bytes == 0
// nothing is read (src must still be a valid address).
template <int CP> __device__ __forceinline__ void cp_async(void* dst, const void* src, int src_bytes) {
#if __CUDA_ARCH__ >= 800
    if (CP == 16) {
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)), "l"(src),
                     "r"(src_bytes)
                     : "memory");
    } else {
        asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(smem_addr(dst)), "l"(src), "n"(CP),
                     "r"(src_bytes)
                     : "memory");
    }
#else
    const unsigned* s = reinterpret_cast<const unsigned*>(src);
    unsigned* d = reinterpret_cast<unsigned*>(dst);
#pragma unroll
    for (int w = 0; w < CP / 4; w++) d[w] = (4 * w < src_bytes) ? s[w] : 0u;
#endif
}

__device__ __forceinline__ void cp_commit() {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

// Wait until at most N of this thread's committed copy groups are still in flight.
template <int N> __device__ __forceinline__ void cp_wait() {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}
