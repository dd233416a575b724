// Level 1 kernels: AXPY (the pattern the rest follow).
//
// Elementwise kernels run one "unit" per thread: V = 16 / sizeof(T) consecutive elements
// loaded with one 16-byte access on the contiguous, aligned path (the `_v` entry points),
// else one element (any increment, negative included). Block shape (Tx, 1).

template <typename T> struct __align__(16) vec16 { T v[16 / sizeof(T)]; };

template <typename T>
__device__ __forceinline__ void axpy_body(i64 n, T alpha, const T* alpha_p, const T* x, i64 incx, T* y, i64 incy) {
    const T a = scalar_arg(alpha, alpha_p);
    if (is_zero(a)) return;
    const i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        const i64 iy = vidx(i, n, incy);
        y[iy] = fma_t(a, x[vidx(i, n, incx)], y[iy]);
    }
}

template <typename T>
__device__ __forceinline__ void axpy_v_body(i64 n, T alpha, const T* alpha_p, const T* x, T* y) {
    constexpr int V = 16 / sizeof(T);
    const T a = scalar_arg(alpha, alpha_p);
    if (is_zero(a)) return;
    const i64 base = ((i64)blockIdx.x * blockDim.x + threadIdx.x) * V;
    if (base + V <= n) {
        vec16<T> xv = *reinterpret_cast<const vec16<T>*>(x + base);
        vec16<T> yv = *reinterpret_cast<const vec16<T>*>(y + base);
#pragma unroll
        for (int k = 0; k < V; k++) yv.v[k] = fma_t(a, xv.v[k], yv.v[k]);
        *reinterpret_cast<vec16<T>*>(y + base) = yv;
    } else {
        for (i64 i = base; i < n; i++) y[i] = fma_t(a, x[i], y[i]);
    }
}

#define L1_AXPY(P, T)                                                                                     \
    extern "C" __global__ void P##axpy(i64 n, T alpha, const T* alpha_p, const T* x, i64 incx, T* y,      \
                                       i64 incy) {                                                        \
        axpy_body<T>(n, alpha, alpha_p, x, incx, y, incy);                                                \
    }                                                                                                     \
    extern "C" __global__ void P##axpy_v(i64 n, T alpha, const T* alpha_p, const T* x, T* y) {            \
        axpy_v_body<T>(n, alpha, alpha_p, x, y);                                                          \
    }

// ---------------------------------------------------------------------------------------
// SCAL, COPY, SWAP: elementwise like AXPY (one 16-byte unit or one element per thread).

// alpha*x formed as the reference forms it, with no FMA contraction (real: one product;
// complex alpha: the textbook product; real alpha on complex x: each part scaled), so the GPU
// matches the CPU engine bit for bit.
__device__ __forceinline__ float mul_exact(float a, float x) { return __fmul_rn(a, x); }
__device__ __forceinline__ double mul_exact(double a, double x) { return __dmul_rn(a, x); }
__device__ __forceinline__ cfloat mul_exact(float a, cfloat x) { return cfloat{__fmul_rn(a, x.x), __fmul_rn(a, x.y)}; }
__device__ __forceinline__ cdouble mul_exact(double a, cdouble x) {
    return cdouble{__dmul_rn(a, x.x), __dmul_rn(a, x.y)};
}
__device__ __forceinline__ cfloat mul_exact(cfloat a, cfloat x) {
    return cfloat{__fsub_rn(__fmul_rn(a.x, x.x), __fmul_rn(a.y, x.y)),
                  __fadd_rn(__fmul_rn(a.x, x.y), __fmul_rn(a.y, x.x))};
}
__device__ __forceinline__ cdouble mul_exact(cdouble a, cdouble x) {
    return cdouble{__dsub_rn(__dmul_rn(a.x, x.x), __dmul_rn(a.y, x.y)),
                   __dadd_rn(__dmul_rn(a.x, x.y), __dmul_rn(a.y, x.x))};
}

// alpha == 1 returns at once, as in the reference (a complex Inf keeps its zero part); alpha
// == 0 multiplies (NaN and Inf become NaN), as the reference and the CPU engine do.
template <typename T, typename A>
__device__ __forceinline__ void scal_body(i64 n, A alpha, const A* alpha_p, T* x, i64 incx) {
    const A a = scalar_arg(alpha, alpha_p);
    if (is_one(a)) return;
    const i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        T* p = x + vidx(i, n, incx);
        *p = mul_exact(a, *p);
    }
}

template <typename T, typename A>
__device__ __forceinline__ void scal_v_body(i64 n, A alpha, const A* alpha_p, T* x) {
    constexpr int V = 16 / sizeof(T);
    const A a = scalar_arg(alpha, alpha_p);
    if (is_one(a)) return;
    const i64 base = ((i64)blockIdx.x * blockDim.x + threadIdx.x) * V;
    if (base + V <= n) {
        vec16<T> xv = *reinterpret_cast<const vec16<T>*>(x + base);
#pragma unroll
        for (int k = 0; k < V; k++) xv.v[k] = mul_exact(a, xv.v[k]);
        *reinterpret_cast<vec16<T>*>(x + base) = xv;
    } else {
        for (i64 i = base; i < n; i++) x[i] = mul_exact(a, x[i]);
    }
}

template <typename T>
__device__ __forceinline__ void copy_body(i64 n, const T* x, i64 incx, T* y, i64 incy) {
    const i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[vidx(i, n, incy)] = x[vidx(i, n, incx)];
}

template <typename T> __device__ __forceinline__ void copy_v_body(i64 n, const T* x, T* y) {
    constexpr int V = 16 / sizeof(T);
    const i64 base = ((i64)blockIdx.x * blockDim.x + threadIdx.x) * V;
    if (base + V <= n) {
        *reinterpret_cast<vec16<T>*>(y + base) = *reinterpret_cast<const vec16<T>*>(x + base);
    } else {
        for (i64 i = base; i < n; i++) y[i] = x[i];
    }
}

template <typename T> __device__ __forceinline__ void swap_body(i64 n, T* x, i64 incx, T* y, i64 incy) {
    const i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        T* px = x + vidx(i, n, incx);
        T* py = y + vidx(i, n, incy);
        const T t = *px;
        *px = *py;
        *py = t;
    }
}

template <typename T> __device__ __forceinline__ void swap_v_body(i64 n, T* x, T* y) {
    constexpr int V = 16 / sizeof(T);
    const i64 base = ((i64)blockIdx.x * blockDim.x + threadIdx.x) * V;
    if (base + V <= n) {
        const vec16<T> xv = *reinterpret_cast<const vec16<T>*>(x + base);
        const vec16<T> yv = *reinterpret_cast<const vec16<T>*>(y + base);
        *reinterpret_cast<vec16<T>*>(x + base) = yv;
        *reinterpret_cast<vec16<T>*>(y + base) = xv;
    } else {
        for (i64 i = base; i < n; i++) {
            const T t = x[i];
            x[i] = y[i];
            y[i] = t;
        }
    }
}

// NAME: the entry point's name after the precision letter (scal, or sscal/dscal for csscal
// and zdscal), A: alpha's type.
#define L1_SCAL(P, NAME, T, A)                                                                            \
    extern "C" __global__ void P##NAME(i64 n, A alpha, const A* alpha_p, T* x, i64 incx) {                \
        scal_body<T, A>(n, alpha, alpha_p, x, incx);                                                      \
    }                                                                                                     \
    extern "C" __global__ void P##NAME##_v(i64 n, A alpha, const A* alpha_p, T* x) {                      \
        scal_v_body<T, A>(n, alpha, alpha_p, x);                                                          \
    }
#define L1_COPY_SWAP(P, T)                                                                                \
    extern "C" __global__ void P##copy(i64 n, const T* x, i64 incx, T* y, i64 incy) {                     \
        copy_body<T>(n, x, incx, y, incy);                                                                \
    }                                                                                                     \
    extern "C" __global__ void P##copy_v(i64 n, const T* x, T* y) { copy_v_body<T>(n, x, y); }            \
    extern "C" __global__ void P##swap(i64 n, T* x, i64 incx, T* y, i64 incy) {                           \
        swap_body<T>(n, x, incx, y, incy);                                                                \
    }                                                                                                     \
    extern "C" __global__ void P##swap_v(i64 n, T* x, T* y) { swap_v_body<T>(n, x, y); }

// ---------------------------------------------------------------------------------------
// Reductions: DOT (u, c), NRM2, ASUM, I?AMAX.
//
// The order of every operation depends on n only, never on the block shape, the grid or the
// memory alignment:
// - The vector is cut into chunks of L elements (L from n, chosen on the host: a multiple of
//   32*V*8 with at most 8192 chunks); chunk c is reduced by one warp, the warp of global
//   index c (blocks are 32 x Ty threads: threadIdx.x is the lane, threadIdx.y the warp).
// - In a chunk, unit u (V = 16/sizeof(T) consecutive elements) belongs to lane u % 32 at step
//   u / 32; its element k goes to accumulator (step % S)*V + k of that lane (S = 4/V, so 4
//   accumulators per lane). Steps come in trips of U; chunk c adds its whole trips starting
//   at trip c % trips and wrapping around (DOT, NRM2, ASUM; I?AMAX in order), then the steps
//   past the last whole trip in order. The
//   lane combines its accumulators as (a0 + a1) + (a2 + a3), then the warp with the fixed
//   shuffle tree (16, 8, 4, 2, 1).
// - The contiguous aligned path (`_part_v`, 16-byte loads) and the strided path (`_part`,
//   element loads, any increment) follow the same assignment, so they give the same bits.
// - Chunk partials go to the workspace; `_fin` (one block of whole warps, any shape) combines
//   them: slot s < 1024 takes partials s, s+1024, ... in order, then two levels of the warp
//   tree (32 groups of 32 slots, then the 32 group results). With a single chunk the warp
//   writes the result itself.

// Blue's thresholds and scales for double (reference dnrm2, LAPACK 3.10): values above TBIG
// are summed scaled by SBIG, below TSML scaled by SSML.
#define BLUE_TSML 0x1p-511
#define BLUE_TBIG 0x1p486
#define BLUE_SSML 0x1p537
#define BLUE_SBIG 0x1p-538

// Three sums of squares (big values scaled down, mid-range, small values scaled up).
struct Ssq { double big, med, small; };
__device__ __forceinline__ Ssq shfl_down(Ssq v, int d) {
    return Ssq{shfl_down(v.big, d), shfl_down(v.med, d), shfl_down(v.small, d)};
}

__device__ __forceinline__ float inf_of(float) { return __int_as_float(0x7f800000); }
__device__ __forceinline__ double inf_of(double) { return __longlong_as_double(0x7ff0000000000000LL); }

// The running maximum of i?amax: value |re|+|im| and the element's 0-based index.
template <typename R> struct AMax { R v; i64 i; };
template <typename R> __device__ __forceinline__ AMax<R> shfl_down(AMax<R> a, int d) {
    return AMax<R>{shfl_down(a.v, d), (i64)__shfl_down_sync(0xffffffffu, (long long)a.i, d)};
}

// Squares accumulated for NRM2: single precision in double (no overflow or underflow is
// possible: squares of floats lie far inside double's range), double with Blue's method.
__device__ __forceinline__ void sq_add(double& a, float v) {
    const double d = v;
    a = fma(d, d, a);
}
__device__ __forceinline__ void sq_add(double& a, cfloat v) {
    sq_add(a, v.x);
    sq_add(a, v.y);
}
__device__ __forceinline__ void sq_add(Ssq& a, double v) {
    const double ax = fabs(v);
    if (ax > BLUE_TBIG) {
        const double s = ax * BLUE_SBIG;
        a.big = fma(s, s, a.big);
    } else if (ax < BLUE_TSML) {
        const double s = ax * BLUE_SSML;
        a.small = fma(s, s, a.small);
    } else {
        // NaN lands here (comparisons with it are false) and poisons the result.
        a.med = fma(ax, ax, a.med);
    }
}
__device__ __forceinline__ void sq_add(Ssq& a, cdouble v) {
    sq_add(a, v.x);
    sq_add(a, v.y);
}

// The norm from the three sums, combined exactly as the reference (and the CPU engine) does
// (explicitly rounded products: no FMA contraction).
__device__ __forceinline__ double ssq_finish(Ssq s) {
    double big = s.big, med = s.med, small = s.small;
    const bool med_used = med > 0.0 || med != med;
    double scl, sumsq;
    if (big > 0.0) {
        if (med_used) big = __dadd_rn(big, __dmul_rn(__dmul_rn(med, BLUE_SBIG), BLUE_SBIG));
        scl = 1.0 / BLUE_SBIG;
        sumsq = big;
    } else if (small > 0.0) {
        if (med_used) {
            med = sqrt(med);
            small = sqrt(small) / BLUE_SSML;
            const double ymin = small > med ? med : small, ymax = small > med ? small : med;
            const double q = ymin / ymax;
            scl = 1.0;
            sumsq = __dmul_rn(__dmul_rn(ymax, ymax), __dadd_rn(1.0, __dmul_rn(q, q)));
        } else {
            scl = 1.0 / BLUE_SSML;
            sumsq = small;
        }
    } else {
        scl = 1.0;
        sumsq = med;
    }
    return scl * sqrt(sumsq);
}

template <typename T> struct nrm2_acc { typedef double type; };
template <> struct nrm2_acc<double> { typedef Ssq type; };
template <> struct nrm2_acc<cdouble> { typedef Ssq type; };
__device__ __forceinline__ Ssq operator+(Ssq a, Ssq b) { return Ssq{a.big + b.big, a.med + b.med, a.small + b.small}; }
__device__ __forceinline__ void nrm2_write(double a, float* out) { *out = (float)sqrt(a); }
__device__ __forceinline__ void nrm2_write(Ssq a, double* out) { *out = ssq_finish(a); }

// The operations. Each has: acc_t (accumulator and chunk partial), TWO (reads y too), U
// (units per lane loaded per loop trip: memory parallelism only, no effect on the order),
// init, add (one element, with its 0-based logical index), combine (a first), write.
template <typename T, bool CONJ> struct DotOp {
    typedef T acc_t;
    static constexpr bool TWO = true;
    static constexpr int U = 4;
    static constexpr bool ROTATE = true;
    static __device__ __forceinline__ acc_t init() { return zero<T>(); }
    static __device__ __forceinline__ void add(acc_t& a, T x, T y, i64) { a = fma_t(CONJ ? conj_t(x) : x, y, a); }
    static __device__ __forceinline__ acc_t combine(acc_t a, acc_t b) { return a + b; }
    static __device__ __forceinline__ void write(acc_t a, void* out, int) { *(T*)out = a; }
};

template <typename T> struct AsumOp {
    typedef typename real_of<T>::type acc_t;
    static constexpr bool TWO = false;
    static constexpr int U = 8;
    static constexpr bool ROTATE = true;
    static __device__ __forceinline__ acc_t init() { return acc_t(0); }
    static __device__ __forceinline__ void add(acc_t& a, T x, T, i64) { a = a + abs1(x); }
    static __device__ __forceinline__ acc_t combine(acc_t a, acc_t b) { return a + b; }
    static __device__ __forceinline__ void write(acc_t a, void* out, int) { *(acc_t*)out = a; }
};

// Units in flight per lane of DNRM2 and DZNRM2 (NRM2_U): half the other reductions'. Blue's
// three sums per accumulator are wide; with 8 units dnrm2_part_v took 75 registers (25 warps
// per SM where DASUM keeps 32), which left a partial third wave of 8192 chunk warps, and on
// an H200 DNRM2 took 15.1 us at 2^22 elements (DASUM 8.7); with 4 (59 registers) 11.1 us.
// DZNRM2 was 1-25% faster from 2^20 to 2^25 and equal at 2^26. Below 2^21 elements one run
// had DNRM2 up to 1.5 us slower (8.9 against 7.4 us at 2^16), another not. Single precision
// (sums in double) keeps 8: with 4, SNRM2 lost up to 19% past 2^22 and SCNRM2 as much at
// 1.5 x 2^k. Part of the summation order (chunks start at a rotated trip).
#ifndef NRM2_U
#define NRM2_U 4
#endif
#ifndef NRM2_U_SINGLE
#define NRM2_U_SINGLE 8
#endif

template <typename T> struct Nrm2Op {
    typedef typename nrm2_acc<T>::type acc_t;
    static constexpr bool TWO = false;
    static constexpr int U = sizeof(typename real_of<T>::type) == 8 ? NRM2_U : NRM2_U_SINGLE;
    static constexpr bool ROTATE = true;
    static __device__ __forceinline__ acc_t init() { return acc_t{}; }
    static __device__ __forceinline__ void add(acc_t& a, T x, T, i64) { sq_add(a, x); }
    static __device__ __forceinline__ acc_t combine(acc_t a, acc_t b) { return a + b; }
    static __device__ __forceinline__ void write(acc_t a, void* out, int) {
        nrm2_write(a, (typename real_of<T>::type*)out);
    }
};

// First index of the largest |re|+|im|, as the CPU engine (and the reference loop) defines it:
// NaN is never chosen, except at element 0, which then wins (the reference's running maximum
// starts there and nothing compares greater than NaN). So NaN counts as -1, a NaN at element 0
// as +Inf (ties go to the smaller index), and the maximum with its first index is taken: an
// order-free rule, so any combination order gives the same answer.
template <typename T> struct AmaxOp {
    typedef typename real_of<T>::type R;
    typedef AMax<R> acc_t;
    static constexpr bool TWO = false;
    static constexpr int U = 8;
    // Not rotated: the running maximum keeps the first of equal values only when a lane sees
    // its elements in index order, and a tie-aware comparison costs IAMAX a third of its
    // single-precision speed (it is issue-bound there).
    static constexpr bool ROTATE = false;
    static __device__ __forceinline__ acc_t init() { return acc_t{R(-1), 0x7fffffffffffffffLL}; }
    static __device__ __forceinline__ void add(acc_t& a, T x, T, i64 e) {
        R v = abs1(x);
        if (v != v) v = e == 0 ? inf_of(v) : R(-1);
        // A lane sees its elements in increasing index (ROTATE is off for this op), so the
        // first of equal values is kept by a strict comparison.
        if (v > a.v) {
            a.v = v;
            a.i = e;
        }
    }
    static __device__ __forceinline__ acc_t combine(acc_t a, acc_t b) {
        return (b.v > a.v || (b.v == a.v && b.i < a.i)) ? b : a;
    }
    // 1-based; 0 only if nothing was seen (not reachable for n >= 1).
    static __device__ __forceinline__ void write(acc_t a, void* out, int out64) {
        const i64 idx = a.i == 0x7fffffffffffffffLL ? 0 : a.i + 1;
        if (out64) {
            *(i64*)out = idx;
        } else {
            *(int*)out = (int)idx;
        }
    }
};

template <typename Op> __device__ __forceinline__ typename Op::acc_t warp_reduce(typename Op::acc_t v) {
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) v = Op::combine(v, shfl_down(v, d));
    return v;
}

// Unit (V elements from logical index e) of a vector: one 16-byte load, or V element loads.
template <typename T, bool VEC>
__device__ __forceinline__ void load_unit(T (&v)[16 / sizeof(T)], const T* x, i64 inc, i64 n, i64 e) {
    constexpr int V = 16 / sizeof(T);
    if constexpr (VEC) {
        const vec16<T> t = *reinterpret_cast<const vec16<T>*>(x + e);
#pragma unroll
        for (int k = 0; k < V; k++) v[k] = t.v[k];
    } else {
        // vidx(e + k) = vidx(e) + k*inc for either sign of inc.
        const T* p = x + vidx(e, n, inc);
#pragma unroll
        for (int k = 0; k < V; k++) v[k] = p[k * inc];
    }
}

template <typename T, typename Op, bool VEC>
__device__ __forceinline__ void reduce_part(i64 n, i64 L, const T* x, i64 incx, const T* y, i64 incy,
                                            typename Op::acc_t* part, void* out, int out64) {
    typedef typename Op::acc_t A;
    constexpr int V = 16 / sizeof(T);
    constexpr int S = V >= 4 ? 1 : 4 / V;
    constexpr int U = Op::U;
    static_assert(S * V == 4 && U % S == 0, "accumulator layout");
    const int lane = threadIdx.x;
    const i64 c = (i64)blockIdx.x * blockDim.y + threadIdx.y;
    const i64 chunks = (n + L - 1) / L;
    if (c >= chunks) return;  // whole warps leave, so the shuffles below stay full-warp
    const i64 start = c * L;
    const i64 len = L < n - start ? L : n - start;
    A acc[4];
#pragma unroll
    for (int a = 0; a < 4; a++) acc[a] = Op::init();
    const i64 units = (len + V - 1) / V, full = len / V;
    // Trips where every unit of every lane lies inside the chunk: U loads in flight per lane.
    // Chunk c takes its trips from trip c % trips, wrapping around: warps that run at the same
    // time then read different offsets of their chunks instead of addresses a multiple of the
    // (often power-of-two) chunk length apart, which land on the same memory channels. A
    // trip is 32*U units and U is a multiple of S, so every unit keeps its accumulator.
    const i64 trips = full / (32 * U);
    const i64 rot = (Op::ROTATE && trips > 1) ? c % trips : 0;
    for (i64 k = 0; k < trips; k++) {
        const i64 u0 = (k + rot < trips ? k + rot : k + rot - trips) * (32 * U);
        T xv[U][V], yv[U][V];
#pragma unroll
        for (int j = 0; j < U; j++) {
            const i64 e = start + (u0 + j * 32 + lane) * V;
            load_unit<T, VEC>(xv[j], x, incx, n, e);
            if constexpr (Op::TWO) load_unit<T, VEC>(yv[j], y, incy, n, e);
        }
#pragma unroll
        for (int j = 0; j < U; j++) {
            const i64 e = start + (u0 + j * 32 + lane) * V;
#pragma unroll
            for (int k = 0; k < V; k++) {
                if constexpr (Op::TWO) {
                    Op::add(acc[(j % S) * V + k], xv[j][k], yv[j][k], e + k);
                } else {
                    Op::add(acc[(j % S) * V + k], xv[j][k], xv[j][k], e + k);
                }
            }
        }
    }
    // The rest of the chunk, element by element in the same assignment (u0 is a multiple of
    // 32*U, so step % S == j % S as above).
    for (i64 u0 = trips * (32 * U); u0 < units; u0 += 32 * U) {
#pragma unroll
        for (int j = 0; j < U; j++) {
#pragma unroll
            for (int k = 0; k < V; k++) {
                const i64 p = (u0 + j * 32 + lane) * V + k;
                if (p < len) {
                    const i64 e = start + p;
                    const T xe = VEC ? x[e] : x[vidx(e, n, incx)];
                    if constexpr (Op::TWO) {
                        const T ye = VEC ? y[e] : y[vidx(e, n, incy)];
                        Op::add(acc[(j % S) * V + k], xe, ye, e);
                    } else {
                        Op::add(acc[(j % S) * V + k], xe, xe, e);
                    }
                }
            }
        }
    }
    A r = Op::combine(Op::combine(acc[0], acc[1]), Op::combine(acc[2], acc[3]));
    r = warp_reduce<Op>(r);
    if (lane == 0) {
        if (part) {
            part[c] = r;
        } else {
            Op::write(r, out, out64);  // a single chunk: this warp has the whole result
        }
    }
}

#define FIN_SLOTS 1024

// Slot s < 1024 combines partials s, s+1024, ... in order; group g < 32 (slots 32g..32g+31)
// is reduced by one warp with the fixed shuffle tree; then one warp reduces the 32 group
// results the same way. Slots past the last partial hold Op::init(). Which warp takes which
// group does not matter, so any block of whole warps gives the same bits.
template <typename Op>
__device__ __forceinline__ void reduce_fin(i64 chunks, const typename Op::acc_t* part, void* out, int out64) {
    typedef typename Op::acc_t A;
    __shared__ A sh[32];
    pdl_wait();  // the _part kernel (launched just before) writes part
    const int tid = threadIdx.y * blockDim.x + threadIdx.x, nwarps = blockDim.x * blockDim.y / 32;
    const int lane = tid % 32, warp = tid / 32;
    for (int g = warp; g < 32; g += nwarps) {
        const i64 s = g * 32 + lane;
        A a = Op::init();
        if (s < chunks) {
            a = part[s];
            // Latency-bound: 8 partials loaded at a time, then combined in order.
            for (i64 p = s + FIN_SLOTS; p < chunks; p += 8 * FIN_SLOTS) {
                A v[8];
#pragma unroll
                for (int k = 0; k < 8; k++) v[k] = (p + k * FIN_SLOTS < chunks) ? part[p + k * FIN_SLOTS] : Op::init();
#pragma unroll
                for (int k = 0; k < 8; k++)
                    if (p + k * FIN_SLOTS < chunks) a = Op::combine(a, v[k]);
            }
        }
        a = warp_reduce<Op>(a);
        if (lane == 0) sh[g] = a;
    }
    __syncthreads();
    if (warp == 0) {
        const A a = warp_reduce<Op>(sh[lane]);
        if (lane == 0) Op::write(a, out, out64);
    }
}

// Entry points P<NAME>_part, P<NAME>_part_v (same parameters; the increments are unused on
// the contiguous path) and P<NAME>_fin.
#define L1_REDUCE(P, NAME, T, OP) L1_REDUCE_B(P, NAME, T, OP, )
// BOUNDS: launch bounds of the contiguous kernel (empty: none).
#define L1_REDUCE_B(P, NAME, T, OP, BOUNDS)                                                               \
    extern "C" __global__ void P##NAME##_part(i64 n, i64 L, const T* x, i64 incx, const T* y, i64 incy,   \
                                              OP::acc_t* part, void* out, int out64) {                    \
        reduce_part<T, OP, false>(n, L, x, incx, y, incy, part, out, out64);                              \
    }                                                                                                     \
    extern "C" __global__ void BOUNDS P##NAME##_part_v(i64 n, i64 L, const T* x, i64 incx, const T* y,    \
                                                       i64 incy, OP::acc_t* part, void* out, int out64) { \
        reduce_part<T, OP, true>(n, L, x, incx, y, incy, part, out, out64);                               \
    }                                                                                                     \
    extern "C" __global__ void P##NAME##_fin(i64 chunks, const OP::acc_t* part, void* out, int out64) {   \
        reduce_fin<OP>(chunks, part, out, out64);                                                         \
    }

typedef DotOp<float, false> sdot_op;
typedef DotOp<double, false> ddot_op;
typedef DotOp<cfloat, false> cdotu_op;
typedef DotOp<cfloat, true> cdotc_op;
typedef DotOp<cdouble, false> zdotu_op;
typedef DotOp<cdouble, true> zdotc_op;
// SCNRM2's contiguous kernel is held to 64 registers (4 blocks of 256 threads per SM; it took
// 72, 28 warps per SM): 8192 one-trip chunk warps at 2^22 elements then fit in two waves
// instead of a partial third. On an H200 (session 10, cold operands) SCNRM2 2^22 went from
// 15.0 to 13.0 us and 2^23-2^26 1-8% faster, with no dip left in its curve (6.3% at 2^22
// before); 3 and 6 x 2^20 lost 5-6%. `-DCNRM2_BOUNDS=` (HYBLAS_KERNEL_DEFINES) removes it.
#ifndef CNRM2_BOUNDS
#define CNRM2_BOUNDS __launch_bounds__(256, 4)
#endif

// ---------------------------------------------------------------------------------------
// Entry points, one precision per compile unit (HB_PREC: kernels/common.cuh).

#if HB_PREC(s)
L1_AXPY(s, float)
L1_SCAL(s, scal, float, float)
L1_COPY_SWAP(s, float)
L1_REDUCE(s, dot, float, sdot_op)
L1_REDUCE(s, asum, float, AsumOp<float>)
L1_REDUCE(s, nrm2, float, Nrm2Op<float>)
L1_REDUCE(s, amax, float, AmaxOp<float>)
#endif

#if HB_PREC(d)
L1_AXPY(d, double)
L1_SCAL(d, scal, double, double)
L1_COPY_SWAP(d, double)
L1_REDUCE(d, dot, double, ddot_op)
L1_REDUCE(d, asum, double, AsumOp<double>)
L1_REDUCE(d, nrm2, double, Nrm2Op<double>)
L1_REDUCE(d, amax, double, AmaxOp<double>)
#endif

#if HB_PREC(c)
L1_AXPY(c, cfloat)
L1_SCAL(c, scal, cfloat, cfloat)
L1_SCAL(c, sscal, cfloat, float)
L1_COPY_SWAP(c, cfloat)
L1_REDUCE(c, dotu, cfloat, cdotu_op)
L1_REDUCE(c, dotc, cfloat, cdotc_op)
L1_REDUCE(c, asum, cfloat, AsumOp<cfloat>)
L1_REDUCE_B(c, nrm2, cfloat, Nrm2Op<cfloat>, CNRM2_BOUNDS)
L1_REDUCE(c, amax, cfloat, AmaxOp<cfloat>)
#endif

#if HB_PREC(z)
L1_AXPY(z, cdouble)
L1_SCAL(z, scal, cdouble, cdouble)
L1_SCAL(z, dscal, cdouble, double)
L1_COPY_SWAP(z, cdouble)
L1_REDUCE(z, dotu, cdouble, zdotu_op)
L1_REDUCE(z, dotc, cdouble, zdotc_op)
L1_REDUCE(z, asum, cdouble, AsumOp<cdouble>)
L1_REDUCE(z, nrm2, cdouble, Nrm2Op<cdouble>)
L1_REDUCE(z, amax, cdouble, AmaxOp<cdouble>)
#endif
