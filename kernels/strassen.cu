// Strassen-Winograd's additions (src/gpu/strassen.rs): elementwise passes over column-major
// blocks, memory-bound, so each pass is as fast as the bytes it moves. Real precisions only
// (the schedule runs SGEMM and DGEMM).
//
// Layout of every kernel: blockDim.x threads along a column (the contiguous direction), each
// taking STR_U elements blockDim.x apart (a warp's accesses stay coalesced); blockIdx.y walks
// the columns with a grid stride. Every thread loads all its inputs before it stores, so an
// output may be one of its inputs (the same block: z = x + s*y with z == x or z == y).

#define STR_U 4

// z := x + s*y. The schedule's additions take s = 1 or -1 (s*y exact: the pass rounds once, as
// an addition does); C := W + beta*C (beta != 0) is this pass with x = W, y = z = C.
template <typename T>
__device__ __forceinline__ void mat_add_body(i64 rows, i64 cols, const T* x, i64 ldx, T s, const T* y, i64 ldy,
                                             T* z, i64 ldz) {
    const i64 i0 = (i64)blockIdx.x * blockDim.x * STR_U + threadIdx.x;
    for (i64 j = blockIdx.y; j < cols; j += gridDim.y) {
        const T* xc = x + j * ldx;
        const T* yc = y + j * ldy;
        T* zc = z + j * ldz;
        T a[STR_U], b[STR_U];
#pragma unroll
        for (int u = 0; u < STR_U; u++) {
            i64 i = i0 + (i64)u * blockDim.x;
            if (i < rows) {
                a[u] = xc[i];
                b[u] = yc[i];
            }
        }
#pragma unroll
        for (int u = 0; u < STR_U; u++) {
            i64 i = i0 + (i64)u * blockDim.x;
            if (i < rows) zc[i] = a[u] + s * b[u];
        }
    }
}

// c := beta*c; beta == 0 writes zeros without reading c (NaN in C is overwritten, as BLAS says).
template <typename T> __device__ __forceinline__ void mat_scale_body(i64 rows, i64 cols, T beta, T* c, i64 ldc) {
    const i64 i0 = (i64)blockIdx.x * blockDim.x * STR_U + threadIdx.x;
    for (i64 j = blockIdx.y; j < cols; j += gridDim.y) {
        T* cc = c + j * ldc;
#pragma unroll
        for (int u = 0; u < STR_U; u++) {
            i64 i = i0 + (i64)u * blockDim.x;
            if (i < rows) cc[i] = is_zero(beta) ? zero<T>() : beta * cc[i];
        }
    }
}

// Steps 13-17 of the schedule in one pass: with P1 in p, P3 in C11, P6 in C12, P7 in C21 and
// P5 in C22,
//   U2 = P1 + P6, U3 = U2 + P7, U4 = U2 + P5, C22 = U3 + P5, C12 = U4 + P3, C21 = U3
// (the same additions in the same order as the five passes they replace, so the same bits),
// reading five blocks and writing three instead of reading ten and writing five. C11 keeps P3.
template <typename T>
__device__ __forceinline__ void combine_body(i64 rows, i64 cols, const T* p, i64 ldp, T* c11, T* c12, T* c21, T* c22,
                                             i64 ldc) {
    const i64 i0 = (i64)blockIdx.x * blockDim.x * STR_U + threadIdx.x;
    for (i64 j = blockIdx.y; j < cols; j += gridDim.y) {
        const T* pc = p + j * ldp;
        const i64 o = j * ldc;
        T p1[STR_U], p3[STR_U], p6[STR_U], p7[STR_U], p5[STR_U];
#pragma unroll
        for (int u = 0; u < STR_U; u++) {
            i64 i = i0 + (i64)u * blockDim.x;
            if (i < rows) {
                p1[u] = pc[i];
                p3[u] = c11[o + i];
                p6[u] = c12[o + i];
                p7[u] = c21[o + i];
                p5[u] = c22[o + i];
            }
        }
#pragma unroll
        for (int u = 0; u < STR_U; u++) {
            i64 i = i0 + (i64)u * blockDim.x;
            if (i < rows) {
                T u2 = p1[u] + p6[u];
                T u3 = u2 + p7[u];
                T u4 = u2 + p5[u];
                c22[o + i] = u3 + p5[u];
                c12[o + i] = u4 + p3[u];
                c21[o + i] = u3;
            }
        }
    }
}

#define STRASSEN_KERNELS(P, T)                                                                            \
    extern "C" __global__ void P##mat_add(i64 rows, i64 cols, const T* x, i64 ldx, T s, const T* y,      \
                                          i64 ldy, T* z, i64 ldz) {                                       \
        mat_add_body<T>(rows, cols, x, ldx, s, y, ldy, z, ldz);                                           \
    }                                                                                                     \
    extern "C" __global__ void P##mat_scale(i64 rows, i64 cols, T beta, T* c, i64 ldc) {                 \
        mat_scale_body<T>(rows, cols, beta, c, ldc);                                                      \
    }                                                                                                     \
    extern "C" __global__ void P##strassen_combine(i64 rows, i64 cols, const T* p, i64 ldp, T* c11,      \
                                                   T* c12, T* c21, T* c22, i64 ldc) {                     \
        combine_body<T>(rows, cols, p, ldp, c11, c12, c21, c22, ldc);                                     \
    }

#if HB_PREC(s)
STRASSEN_KERNELS(s, float)
#endif
#if HB_PREC(d)
STRASSEN_KERNELS(d, double)
#endif
