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
L1_AXPY(s, float)
L1_AXPY(d, double)
L1_AXPY(c, cfloat)
L1_AXPY(z, cdouble)
