// Lab (not part of the library): a one-pass GEMV-N where every block owns whole rows (R rows,
// every column), so no partial sums leave the block and there is no second pass: the shape
// cuBLAS's own GEMV-N kernels have (120-352 blocks of 128-512 threads, session 9's ncu table).
// Timed against cuBLAS on the same buffers, at the sizes where hyblas's two-pass GEMV-N dips
// (d 5120-7168, z 3584-5888) and SGEMV-N 8448.
//
// Measured on an H200 (session 9), cuBLAS time / this kernel: 8 lanes (128 bytes) per column and
// 512 threads won: d 5888 0.995, 8192 1.038 (4 columns in flight); z 4608 0.990, 5888 0.999 (8);
// s 8448 1.032, 8704 1.205 (4). 256 threads, 16 or 32 lanes per column, or 4 lanes were 5-50%
// slower. The kernel needs its 32 registers (four blocks per SM): at 47-56 the same code in the
// library was 15-20% slower. Shipped as gemv_n_rows (kernels/gemv.cu) where its blocks fit one
// wave.
//
// Build and run on the GPU host:  nvcc -O3 -arch=sm_90 -o /tmp/glab lab/gemv_fullrow.cu -lcublas
//   /tmp/glab            every shape at every point
//   /tmp/glab d 5888     only the shipped shape (for ncu)
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <cmath>

#include "lab.cuh"

// Elements: float, double, float2 (c), double2 (z).
__device__ __forceinline__ float fma_t(float a, float b, float c) { return fmaf(a, b, c); }
__device__ __forceinline__ double fma_t(double a, double b, double c) { return fma(a, b, c); }
__device__ __forceinline__ float2 fma_t(float2 a, float2 b, float2 c) {
    return make_float2(fmaf(-a.y, b.y, fmaf(a.x, b.x, c.x)), fmaf(a.y, b.x, fmaf(a.x, b.y, c.y)));
}
__device__ __forceinline__ double2 fma_t(double2 a, double2 b, double2 c) {
    return make_double2(fma(-a.y, b.y, fma(a.x, b.x, c.x)), fma(a.y, b.x, fma(a.x, b.y, c.y)));
}
template <typename T> __device__ __forceinline__ T zero();
template <> __device__ __forceinline__ float zero<float>() { return 0.f; }
template <> __device__ __forceinline__ double zero<double>() { return 0.; }
template <> __device__ __forceinline__ float2 zero<float2>() { return make_float2(0.f, 0.f); }
template <> __device__ __forceinline__ double2 zero<double2>() { return make_double2(0., 0.); }
__device__ __forceinline__ float add(float a, float b) { return a + b; }
__device__ __forceinline__ double add(double a, double b) { return a + b; }
__device__ __forceinline__ float2 add(float2 a, float2 b) { return make_float2(a.x + b.x, a.y + b.y); }
__device__ __forceinline__ double2 add(double2 a, double2 b) { return make_double2(a.x + b.x, a.y + b.y); }

template <typename T> struct __align__(16) v16 { T v[16 / sizeof(T)]; };

// Block: R rows x every column. V = 16/sizeof(T) rows per lane, LPC = R/V lanes per column,
// CL = NT/LPC column lanes; lane takes columns cl, cl+CL, ... U at a time. Then the CL
// partials of each row are added in a fixed tree in shared memory. y = A x (alpha 1, beta 0).
template <typename T, int R, int NT, int U>
__global__ void __launch_bounds__(NT) gemv_rows(i64 m, i64 n, const T* __restrict__ a, i64 lda,
                                                const T* __restrict__ x, T* __restrict__ y) {
    constexpr int V = 16 / sizeof(T);
    constexpr int LPC = R / V;
    constexpr int CL = NT / LPC;
    __shared__ T red[CL][R + 1];
    const int tid = threadIdx.x;
    const int cl = tid / LPC, rr = (tid % LPC) * V;
    const i64 r0 = (i64)blockIdx.x * R;
    const i64 i0 = r0 + rr;
    T acc[V];
#pragma unroll
    for (int e = 0; e < V; e++) acc[e] = zero<T>();
    if (i0 + V <= m) {
        const T* ap = a + i0 + (i64)cl * lda;
        i64 j = cl;
        for (; j + (i64)CL * (U - 1) < n; j += (i64)CL * U) {
            v16<T> av[U];
            T xv[U];
#pragma unroll
            for (int u = 0; u < U; u++) {
                uint4 r = ld_nc(ap + (i64)u * CL * lda);
                av[u] = *reinterpret_cast<v16<T>*>(&r);
                xv[u] = x[j + (i64)u * CL];
            }
            ap += (i64)CL * U * lda;
#pragma unroll
            for (int u = 0; u < U; u++)
#pragma unroll
                for (int e = 0; e < V; e++) acc[e] = fma_t(av[u].v[e], xv[u], acc[e]);
        }
        for (; j < n; j += CL, ap += (i64)CL * lda) {
            uint4 r = ld_nc(ap);
            v16<T> av = *reinterpret_cast<v16<T>*>(&r);
            const T xj = x[j];
#pragma unroll
            for (int e = 0; e < V; e++) acc[e] = fma_t(av.v[e], xj, acc[e]);
        }
    } else {
        for (i64 j = cl; j < n; j += CL) {
            const T xj = x[j];
#pragma unroll
            for (int e = 0; e < V; e++)
                if (i0 + e < m) acc[e] = fma_t(a[i0 + e + j * lda], xj, acc[e]);
        }
    }
#pragma unroll
    for (int e = 0; e < V; e++) red[cl][rr + e] = acc[e];
    __syncthreads();
    for (int s = CL / 2; s > 0; s >>= 1) {
        for (int t = tid; t < s * R; t += NT) {
            const int c = t / R, r = t % R;
            red[c][r] = add(red[c][r], red[c + s][r]);
        }
        __syncthreads();
    }
    if (tid < R && r0 + tid < m) y[r0 + tid] = red[0][tid];
}

template <typename T> struct Blas;
template <> struct Blas<float> {
    static cublasStatus_t gemv(cublasHandle_t h, int m, int n, const float* a, const float* x, float* y) {
        float one = 1, zero = 0;
        return cublasSgemv(h, CUBLAS_OP_N, m, n, &one, a, m, x, 1, &zero, y, 1);
    }
    static const char* name() { return "s"; }
};
template <> struct Blas<double> {
    static cublasStatus_t gemv(cublasHandle_t h, int m, int n, const double* a, const double* x, double* y) {
        double one = 1, zero = 0;
        return cublasDgemv(h, CUBLAS_OP_N, m, n, &one, a, m, x, 1, &zero, y, 1);
    }
    static const char* name() { return "d"; }
};
template <> struct Blas<float2> {
    static cublasStatus_t gemv(cublasHandle_t h, int m, int n, const float2* a, const float2* x, float2* y) {
        cuComplex one = {1, 0}, zero = {0, 0};
        return cublasCgemv(h, CUBLAS_OP_N, m, n, &one, (const cuComplex*)a, m, (const cuComplex*)x, 1, &zero,
                           (cuComplex*)y, 1);
    }
    static const char* name() { return "c"; }
};
template <> struct Blas<double2> {
    static cublasStatus_t gemv(cublasHandle_t h, int m, int n, const double2* a, const double2* x, double2* y) {
        cuDoubleComplex one = {1, 0}, zero = {0, 0};
        return cublasZgemv(h, CUBLAS_OP_N, m, n, &one, (const cuDoubleComplex*)a, m, (const cuDoubleComplex*)x, 1,
                           &zero, (cuDoubleComplex*)y, 1);
    }
    static const char* name() { return "z"; }
};

template <typename F> static float time_us(cudaStream_t st, F f) {
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    std::vector<float> v;
    for (int s = 0; s < 15; s++) {
        f();
        cudaEventRecord(e0, st);
        for (int b = 0; b < 20; b++) f();
        cudaEventRecord(e1, st);
        CK(cudaEventSynchronize(e1));
        float ms;
        cudaEventElapsedTime(&ms, e0, e1);
        v.push_back(ms * 1000 / 20);
    }
    std::sort(v.begin(), v.end());
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    return v[7];
}

static double absmax(const float& v) { return std::fabs(v); }
static double absmax(const double& v) { return std::fabs(v); }
static double absmax(const float2& v) { return std::max(std::fabs(v.x), std::fabs(v.y)); }
static double absmax(const double2& v) { return std::max(std::fabs(v.x), std::fabs(v.y)); }
static float2 sub(float2 a, float2 b) { return make_float2(a.x - b.x, a.y - b.y); }
static double2 sub(double2 a, double2 b) { return make_double2(a.x - b.x, a.y - b.y); }
static float sub(float a, float b) { return a - b; }
static double sub(double a, double b) { return a - b; }

template <typename T, int R, int NT, int U>
static void variant(int n, const T* dA, const T* dx, T* dy, const std::vector<T>& ref, float cub, cudaStream_t st) {
    constexpr int V = 16 / sizeof(T);
    if (R % V || NT % (R / V) || (NT / (R / V)) < 1) return;
    const int G = (n + R - 1) / R;
    auto f = [&]() { gemv_rows<T, R, NT, U><<<G, NT, 0, st>>>(n, n, dA, n, dx, dy); };
    f();
    CK(cudaStreamSynchronize(st));
    std::vector<T> got(n);
    CK(cudaMemcpy(got.data(), dy, n * sizeof(T), cudaMemcpyDeviceToHost));
    double err = 0, scale = 1e-30;
    for (int i = 0; i < n; i++) {
        err = std::max(err, absmax(sub(got[i], ref[i])));
        scale = std::max(scale, absmax(ref[i]));
    }
    const float us = time_us(st, f);
    const double bytes = (double)n * n * sizeof(T) + 2.0 * n * sizeof(T);
    printf("  %s n=%d R=%d NT=%d U=%d G=%d: %.2f us %.0f GB/s  cuBLAS/this %.3f  err %.1e\n", Blas<T>::name(), n, R,
           NT, U, G, us, bytes / us / 1e3, cub / us, err / scale);
}

template <typename T> struct Comp {
    typedef T type;
    static const int k = 1;
};
template <> struct Comp<float2> {
    typedef float type;
    static const int k = 2;
};
template <> struct Comp<double2> {
    typedef double type;
    static const int k = 2;
};
static void rnd(float* p, size_t k) {
    for (size_t i = 0; i < k; i++) p[i] = (float)rand() / RAND_MAX - 0.5f;
}
static void rnd(double* p, size_t k) {
    for (size_t i = 0; i < k; i++) p[i] = (double)rand() / RAND_MAX - 0.5;
}

template <typename T> static void point(cublasHandle_t h, cudaStream_t st, int n, bool one = false) {
    std::vector<T> hA((size_t)n * n), hx(n);
    srand(n);
    typedef typename Comp<T>::type C;
    rnd(reinterpret_cast<C*>(hA.data()), hA.size() * Comp<T>::k);
    rnd(reinterpret_cast<C*>(hx.data()), hx.size() * Comp<T>::k);
    T *dA, *dx, *dy;
    CK(cudaMalloc(&dA, hA.size() * sizeof(T)));
    CK(cudaMalloc(&dx, n * sizeof(T)));
    CK(cudaMalloc(&dy, n * sizeof(T)));
    CK(cudaMemcpy(dA, hA.data(), hA.size() * sizeof(T), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dx, hx.data(), n * sizeof(T), cudaMemcpyHostToDevice));
    // cuBLAS: the reference result and time.
    Blas<T>::gemv(h, n, n, dA, dx, dy);
    CK(cudaStreamSynchronize(st));
    std::vector<T> ref(n);
    CK(cudaMemcpy(ref.data(), dy, n * sizeof(T), cudaMemcpyDeviceToHost));
    const float cub = time_us(st, [&]() { Blas<T>::gemv(h, n, n, dA, dx, dy); });
    const double bytes = (double)n * n * sizeof(T) + 2.0 * n * sizeof(T);
    printf("%s n=%d cuBLAS %.2f us %.0f GB/s\n", Blas<T>::name(), n, cub, bytes / cub / 1e3);
    constexpr int V = 16 / sizeof(T);
    if (one) {
        // The shape hyblas ships (kernels/gemv.cu gemv_n_rows): 8 lanes per column, 512 threads.
        variant<T, 8 * V, 512, sizeof(T) == 16 ? 8 : 4>(n, dA, dx, dy, ref, cub, st);
        cudaFree(dA);
        cudaFree(dx);
        cudaFree(dy);
        return;
    }
    variant<T, 8 * V, 256, 8>(n, dA, dx, dy, ref, cub, st);
    variant<T, 8 * V, 512, 8>(n, dA, dx, dy, ref, cub, st);
    variant<T, 8 * V, 512, 4>(n, dA, dx, dy, ref, cub, st);
    variant<T, 16 * V, 512, 8>(n, dA, dx, dy, ref, cub, st);
    variant<T, 16 * V, 256, 8>(n, dA, dx, dy, ref, cub, st);
    variant<T, 4 * V, 256, 8>(n, dA, dx, dy, ref, cub, st);
    variant<T, 4 * V, 512, 8>(n, dA, dx, dy, ref, cub, st);
    variant<T, 32 * V, 512, 4>(n, dA, dx, dy, ref, cub, st);
    cudaFree(dA);
    cudaFree(dx);
    cudaFree(dy);
}

int main(int argc, char** argv) {
    cudaStream_t st;
    CK(cudaStreamCreate(&st));
    cublasHandle_t h;
    cublasCreate(&h);
    cublasSetStream(h, st);
    if (argc == 3) {  // glab PREC N: only the shipped shape at one point
        const int n = atoi(argv[2]);
        switch (argv[1][0]) {
            case 's': point<float>(h, st, n, true); break;
            case 'd': point<double>(h, st, n, true); break;
            case 'c': point<float2>(h, st, n, true); break;
            default: point<double2>(h, st, n, true); break;
        }
        return 0;
    }
    for (int n : {4096, 5120, 5376, 5888, 6656, 7168, 8192}) point<double>(h, st, n);
    for (int n : {3072, 3584, 4096, 4608, 5120, 5888}) point<double2>(h, st, n);
    for (int n : {8192, 8448, 8704}) point<float>(h, st, n);
    for (int n : {4096, 6144}) point<float2>(h, st, n);
    return 0;
}
