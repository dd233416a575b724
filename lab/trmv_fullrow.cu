// Lab (not part of the library): can a single-pass, in-place lower no-trans STRMV stream its
// triangle as fast as cuBLAS's one-kernel GEMVs do (134 MB in ~33.8 us on an H200)?
//
// Design under test: every block owns whole rows (strips of R rows, strip k paired with strip
// S-1-k so every block adds about n columns), so no partial sums leave the block; x is
// overwritten in place after a grid-wide barrier (cooperative launch: all blocks resident),
// which is the only point where blocks wait for each other. Summation order per row: the
// 64*... column lanes in a fixed tree, so results do not depend on timing.
//
// Measured on an H200 (session 9; CUDA events, batches of 20, median of 15), n = 8192 / 10240:
//   this design, best shape (R=16, 512 threads)           40.8 / 60.1 us
//   the same without the grid barrier (wrong results)      37.7 / 55.3 us   (R=32, 512 threads)
//   hyblas's two-pass STRMV (trmv_n + PDL trmv_sum)         38.4 / 55.0 us
//   cuBLAS SGEMV-N, one kernel, same bytes (m = 5792/7240)  36.1 / 53.1 us   (3718 / 3950 GB/s)
// So the cooperative launch and grid barrier cost about 4 us, more than the second pass they
// replace, and the one-pass kernel itself is no faster than hyblas's first pass. At 134 MB even
// cuBLAS's one-kernel SGEMV stays under 3810 GB/s: the fixed cost of a launch, its ramp and its
// tail is about 10% of a call of that size. Not taken.
//
// Build and run on the GPU host:  nvcc -O3 -arch=sm_90 -o /tmp/lab lab/trmv_fullrow.cu -lcublas
//   /tmp/lab [n ...]
#include <cooperative_groups.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <cmath>

#include "lab.cuh"

__device__ __forceinline__ float4 ldg_stream(const float* p) {
    const uint4 r = ld_nc(p);
    return make_float4(__uint_as_float(r.x), __uint_as_float(r.y), __uint_as_float(r.z), __uint_as_float(r.w));
}

__device__ __forceinline__ unsigned ld_acquire(const unsigned* p) {
    unsigned v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

// Grid barrier on bar[0] (arrivals, reset by the last) and bar[1] (generation).
__device__ __forceinline__ void grid_barrier(unsigned* bar) {
    __syncthreads();
    if (threadIdx.x == 0) {
        const unsigned gen = ld_acquire(bar + 1);
        __threadfence();
        const unsigned arrived = atomicAdd(bar, 1u);
        if (arrived == gridDim.x - 1) {
            atomicExch(bar, 0u);
            __threadfence();
            atomicAdd(bar + 1, 1u);
        } else {
            while (ld_acquire(bar + 1) == gen) __nanosleep(40);
        }
    }
    __syncthreads();
}

// R rows per strip, LPC lanes per column (R = 4*LPC), NT threads, U columns in flight per
// thread. Lane layout: warp w, lane l: column group cg = l / LPC, rows (l % LPC)*4 .. +3.
// Column lanes CL = NT/LPC; thread takes columns c0 + CL*t.
template <int R, int NT, int U, bool BAR>
__global__ void __launch_bounds__(NT) fullrow_lnn(i64 n, const float* __restrict__ a, i64 lda, float* x,
                                                   unsigned* bar, int STRIPS_PER_BLOCK_MAX) {
    constexpr int LPC = R / 4;
    constexpr int CL = NT / LPC;  // column lanes
    __shared__ float red[CL][R + 1];
    __shared__ float res[8][R];  // results held until the barrier (<= 8 strips per block)
    const int tid = threadIdx.x;
    const int cl = tid / LPC, rr = (tid % LPC) * 4;
    const i64 S = (n + R - 1) / R;
    const int G = gridDim.x;
    int held = 0;
    i64 strips[8];
    // Strip list of this block: k, S-1-k for k = b, b + G, ...
    for (i64 k = blockIdx.x; k < (S + 1) / 2; k += G) {
        strips[held++] = k;
        if (S - 1 - k != k) strips[held++] = S - 1 - k;
    }
    for (int h = 0; h < held; h++) {
        const i64 r0 = strips[h] * R;
        const i64 i0 = r0 + rr;  // this thread's first row
        float acc[4] = {0.f, 0.f, 0.f, 0.f};
        const i64 jfull = r0;  // columns [0, r0): whole strip inside the triangle
        const bool rows_ok = (i0 + 4 <= n);
        i64 j = cl;
        const float* ap = a + i0 + j * lda;
        if (rows_ok) {
            for (; j + (i64)CL * (U - 1) < jfull; j += (i64)CL * U) {
                float4 av[U];
                float xv[U];
#pragma unroll
                for (int u = 0; u < U; u++) {
                    av[u] = ldg_stream(ap + (i64)u * CL * lda);
                    xv[u] = x[j + (i64)u * CL];
                }
                ap += (i64)CL * U * lda;
#pragma unroll
                for (int u = 0; u < U; u++) {
                    acc[0] = fmaf(av[u].x, xv[u], acc[0]);
                    acc[1] = fmaf(av[u].y, xv[u], acc[1]);
                    acc[2] = fmaf(av[u].z, xv[u], acc[2]);
                    acc[3] = fmaf(av[u].w, xv[u], acc[3]);
                }
            }
            for (; j < jfull; j += CL, ap += (i64)CL * lda) {
                const float4 av = ldg_stream(ap);
                const float xj = x[j];
                acc[0] = fmaf(av.x, xj, acc[0]);
                acc[1] = fmaf(av.y, xj, acc[1]);
                acc[2] = fmaf(av.z, xj, acc[2]);
                acc[3] = fmaf(av.w, xj, acc[3]);
            }
        }
        // Diagonal block and ragged rows: element loads under the triangle mask.
        for (i64 jj = (rows_ok ? j : cl); jj < min(n, r0 + R); jj += CL) {
            const float xj = x[jj];
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const i64 i = i0 + e;
                if (i < n && jj <= i) acc[e] = fmaf(a[i + jj * lda], xj, acc[e]);
            }
        }
#pragma unroll
        for (int e = 0; e < 4; e++) red[cl][rr + e] = acc[e];
        __syncthreads();
        // Row sums: column lanes added in a fixed pairwise tree.
        for (int s = CL / 2; s > 0; s >>= 1) {
            for (int t = tid; t < s * R; t += NT) {
                const int c = t / R, r = t % R;
                red[c][r] = red[c][r] + red[c + s][r];
            }
            __syncthreads();
        }
        if (tid < R) res[h][tid] = red[0][tid];
        __syncthreads();
    }
    if (BAR) grid_barrier(bar);  // every block has read all of x it needs
    for (int h = 0; h < held; h++) {
        const i64 r0 = strips[h] * R;
        if (tid < R && r0 + tid < n) x[r0 + tid] = res[h][tid];
    }
}

static void cpu_lnn(int n, const std::vector<float>& A, std::vector<double>& x) {
    std::vector<double> y(n, 0.0);
    for (int j = 0; j < n; j++)
        for (int i = j; i < n; i++) y[i] += (double)A[(size_t)i + (size_t)j * n] * x[j];
    x = y;
}

template <int R, int NT, int U, bool BAR = true>
void run(int n, const float* dA, float* dx, const float* dx0, unsigned* bar, int G, const std::vector<float>& hA,
         const std::vector<float>& hx, cudaStream_t st) {
    auto k = fullrow_lnn<R, NT, U, BAR>;
    int per_sm = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, NT, 0));
    int sms;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    const i64 S = (n + R - 1) / R;
    const i64 need = (S + 1) / 2;
    if (G <= 0) G = (int)std::min<i64>(need, (i64)per_sm * sms);
    if ((need + G - 1) / G * 2 > 8 || G > per_sm * sms) {
        printf("R=%d NT=%d U=%d G=%d: skipped (per_sm %d, strips %lld)\n", R, NT, U, G, per_sm, S);
        return;
    }
    i64 nn = n, lda = n;
    int spb = 8;
    void* args[] = {&nn, (void*)&dA, &lda, &dx, &bar, &spb};
    auto launch = [&]() {
        CK(cudaLaunchCooperativeKernel((void*)k, dim3(G), dim3(NT), args, 0, st));
    };
    // Check once.
    CK(cudaMemcpyAsync(dx, dx0, n * 4, cudaMemcpyDeviceToDevice, st));
    launch();
    std::vector<float> got(n);
    CK(cudaMemcpy(got.data(), dx, n * 4, cudaMemcpyDeviceToHost));
    std::vector<double> ref(hx.begin(), hx.end());
    if (n <= 16384) cpu_lnn(n, hA, ref);
    double err = 0;
    for (int i = 0; i < n; i++) err = std::max(err, std::fabs(got[i] - ref[i]) / (std::fabs(ref[i]) + 1e-3));
    // Time: batches of B calls between events (x grows; timing does not care), median of 15.
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    const int B = 20;
    std::vector<float> v;
    for (int s = 0; s < 15; s++) {
        CK(cudaMemcpyAsync(dx, dx0, n * 4, cudaMemcpyDeviceToDevice, st));
        launch();
        cudaEventRecord(e0, st);
        for (int b = 0; b < B; b++) launch();
        cudaEventRecord(e1, st);
        CK(cudaEventSynchronize(e1));
        float ms;
        cudaEventElapsedTime(&ms, e0, e1);
        v.push_back(ms * 1000 / B);
    }
    std::sort(v.begin(), v.end());
    const double bytes = (double)n * (n + 1) / 2 * 4 + 2.0 * n * 4;
    printf("n=%d R=%d NT=%d U=%d G=%d bar=%d (per_sm %d): %.2f us  %.0f GB/s  max rel err %.1e\n", n, R, NT, U, G, (int)BAR, per_sm,
           v[7], bytes / v[7] / 1e3, err);
}

int main(int argc, char** argv) {
    std::vector<int> ns;
    for (int i = 1; i < argc; i++) ns.push_back(atoi(argv[i]));
    if (ns.empty()) ns = {8192, 9216, 10240};
    cudaStream_t st;
    CK(cudaStreamCreate(&st));
    unsigned* bar;
    CK(cudaMalloc(&bar, 8));
    CK(cudaMemset(bar, 0, 8));
    cublasHandle_t h;
    cublasCreate(&h);
    cublasSetStream(h, st);
    for (int n : ns) {
        std::vector<float> hA((size_t)n * n), hx(n);
        srand(1);
        for (auto& v : hA) v = (float)rand() / RAND_MAX - 0.5f;
        for (auto& v : hx) v = (float)rand() / RAND_MAX - 0.5f;
        float *dA, *dx, *dx0;
        CK(cudaMalloc(&dA, (size_t)n * n * 4));
        CK(cudaMalloc(&dx, n * 4));
        CK(cudaMalloc(&dx0, n * 4));
        CK(cudaMemcpy(dA, hA.data(), (size_t)n * n * 4, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(dx0, hx.data(), n * 4, cudaMemcpyHostToDevice));
        run<32, 512, 8>(n, dA, dx, dx0, bar, 0, hA, hx, st);
        run<32, 512, 8, false>(n, dA, dx, dx0, bar, 0, hA, hx, st);
        run<32, 512, 8>(n, dA, dx, dx0, bar, 128, hA, hx, st);
        run<32, 512, 16>(n, dA, dx, dx0, bar, 0, hA, hx, st);
        run<32, 512, 4>(n, dA, dx, dx0, bar, 0, hA, hx, st);
        run<32, 256, 8>(n, dA, dx, dx0, bar, 0, hA, hx, st);
        run<64, 512, 8>(n, dA, dx, dx0, bar, 0, hA, hx, st);
        run<64, 1024, 4>(n, dA, dx, dx0, bar, 0, hA, hx, st);
        run<16, 512, 8>(n, dA, dx, dx0, bar, 0, hA, hx, st);
        run<16, 256, 8>(n, dA, dx, dx0, bar, 0, hA, hx, st);
        // Reference: cuBLAS SGEMV-N of the same byte count (sqrt(n^2/2) square), one kernel.
        {
            int m = (int)std::sqrt((double)n * n / 2);
            float *gA, *gx, *gy;
            CK(cudaMalloc(&gA, (size_t)m * m * 4));
            CK(cudaMalloc(&gx, m * 4));
            CK(cudaMalloc(&gy, m * 4));
            CK(cudaMemcpy(gA, dA, (size_t)m * m * 4, cudaMemcpyDeviceToDevice));
            CK(cudaMemcpy(gx, dx0, m * 4, cudaMemcpyDeviceToDevice));
            float one = 1, zero = 0;
            cudaEvent_t e0, e1;
            cudaEventCreate(&e0);
            cudaEventCreate(&e1);
            std::vector<float> v;
            for (int s = 0; s < 15; s++) {
                cublasSgemv(h, CUBLAS_OP_N, m, m, &one, gA, m, gx, 1, &zero, gy, 1);
                cudaEventRecord(e0, st);
                for (int b = 0; b < 20; b++) cublasSgemv(h, CUBLAS_OP_N, m, m, &one, gA, m, gx, 1, &zero, gy, 1);
                cudaEventRecord(e1, st);
                cudaEventSynchronize(e1);
                float ms;
                cudaEventElapsedTime(&ms, e0, e1);
                v.push_back(ms * 1000 / 20);
            }
            std::sort(v.begin(), v.end());
            printf("cuBLAS SGEMV-N m=%d (%.0f MB): %.2f us  %.0f GB/s\n", m, (double)m * m * 4 / 1e6, v[7],
                   ((double)m * m * 4 + 8.0 * m) / v[7] / 1e3);
            cudaFree(gA);
            cudaFree(gx);
            cudaFree(gy);
        }
        cudaFree(dA);
        cudaFree(dx);
        cudaFree(dx0);
    }
    return 0;
}
