// Batched GEMM of small products (src/gpu/batched.rs): C_p := alpha*op(A_p)*op(B_p) + beta*C_p
// for p < batch, m and n at most 64 (any k), all products of one shape. Operands are given
// either strided (X_p = x + p*sx, cublas?gemmStridedBatched) or as a device array of pointers
// (X_p = xa[p], cublas?gemmBatched); a null array means strided.
//
// Where cuBLAS's batched GEMM leaves time at these sizes is its per-product set-up and tiles
// sized for larger products; a small product is memory-bound (at m = n = k = 32 a DGEMM moves
// 24 KB for 65 kflop), so the kernel's job is to read each operand once, coalesced, and keep
// every thread busy:
// - a group of tpp = ceil(m/R) * ceil(n/R) threads computes one product, each thread an R x R
//   block of C (rows ti + r*mt, columns tj + s*nt: neighbouring threads take neighbouring rows,
//   so C's stores and the shared-memory reads of A are contiguous);
// - a block of blockDim.x threads holds G = blockDim.x / tpp groups (many products per block
//   when they are tiny: a 4 x 4 product has 16 threads);
// - op(A) and op(B) go through shared memory in chunks of kc (the host picks kc so the block's
//   chunks fit): As[l][i] and Bs[j][l], so a transposed or conjugated operand is read
//   coalesced in its own layout and stored in the one the product reads.
// Each element of C is one sum over l in order, then alpha*sum + beta*c: the result does not
// depend on R, G or kc (the same bits for every launch shape).

// Where element e of a chunk of an operand lies, walked in the operand's own order (its
// contiguous index u fastest, so a warp's loads are coalesced) with an incremental (u, v) pair:
// no division per element.
struct ChunkWalk {
    int u, v, du, dv, fast;
    __device__ __forceinline__ ChunkWalk(int t, int step, int fast_)
        : u(t % fast_), v(t / fast_), du(step % fast_), dv(step / fast_), fast(fast_) {}
    __device__ __forceinline__ void next() {
        u += du;
        v += dv;
        if (u >= fast) {
            u -= fast;
            v++;
        }
    }
};

// Copy one k chunk of op(A) (m x kb) into As[l][i] and of op(B) (kb x n) into Bs[j][l] with the
// group's tpp threads (this thread is t), as asynchronous copies (cp.async): every element of
// the chunk is in flight at once, and none passes through a register. (A loop that loaded and
// stored each element in turn waited a whole memory latency per element: a 32 x 32 DGEMM batch
// ran at a third of cuBLAS's speed.) Conjugation is left to the reads. The caller waits
// (cp_wait<0>) and synchronises the block.
template <typename T>
__device__ __forceinline__ void load_chunks(int ta, int tb, int mi, int ni, int kb, int t, int tpp, const T* a0,
                                            i64 lda, const T* b0, i64 ldb, T* As, int lsa, T* Bs, int lsb) {
    // (u, v) is (i, l) of A for op N, (l, i) for T and C; (l, j) of B for op N, (j, l) else.
    ChunkWalk w(t, tpp, ta == 0 ? mi : kb);
    for (int e = t; e < mi * kb; e += tpp, w.next())
        cp_async<sizeof(T)>(As + (ta == 0 ? w.v * lsa + w.u : w.u * lsa + w.v), a0 + w.u + (i64)w.v * lda, sizeof(T));
    w = ChunkWalk(t, tpp, tb == 0 ? kb : ni);
    for (int e = t; e < ni * kb; e += tpp, w.next())
        cp_async<sizeof(T)>(Bs + (tb == 0 ? w.v * lsb + w.u : w.u * lsb + w.v), b0 + w.u + (i64)w.v * ldb, sizeof(T));
    cp_commit();
}

template <typename T, int R>
__device__ __forceinline__ void gemm_batch_body(int ta, int tb, i64 m, i64 n, i64 k, T alpha, const T* alpha_p,
                                                const T* a, i64 lda, i64 sa, const T* const* aa, const T* b, i64 ldb,
                                                i64 sb, const T* const* ba, T beta, const T* beta_p, T* c, i64 ldc,
                                                i64 sc, T* const* ca, i64 batch, int kc) {
    extern __shared__ __align__(16) unsigned char batch_smem[];
    const int mi = (int)m, ni = (int)n;
    const int mt = (mi + R - 1) / R, nt = (ni + R - 1) / R, tpp = mt * nt;
    const int groups = blockDim.x / tpp;
    const int g = threadIdx.x / tpp, t = threadIdx.x - g * tpp;
    const i64 p = (i64)blockIdx.x * groups + g;
    const bool live = g < groups && p < batch;
    // Shared layouts without bank conflicts on either side: As[l][i] with rows of lsa = m | 1
    // and Bs[j][l] with columns of lsb = kc | 1 (odd strides: a transposed operand's stores,
    // neighbouring threads a row apart, fall in different banks; the product's reads are
    // neighbouring rows of As and few columns of Bs, broadcast).
    const int lsa = mi | 1, lsb = kc | 1;
    T* As = (T*)batch_smem + (i64)g * (lsa * kc + lsb * ni);
    T* Bs = As + lsa * kc;
    const T al = scalar_arg(alpha, alpha_p);
    const T be = scalar_arg(beta, beta_p);
    const T* A = nullptr;
    const T* B = nullptr;
    T* C = nullptr;
    if (live) {
        A = aa ? aa[p] : a + p * sa;
        B = ba ? ba[p] : b + p * sb;
        C = ca ? ca[p] : c + p * sc;
    }
    const int ti = t % mt, tj = t / mt;
    T acc[R][R];
#pragma unroll
    for (int r = 0; r < R; r++)
#pragma unroll
        for (int s = 0; s < R; s++) acc[r][s] = zero<T>();
    // alpha == 0 reads neither A nor B (reference BLAS). alpha and k are the block's: the
    // chunk loop and its barriers are uniform.
    const i64 kr = is_zero(al) ? 0 : k;
    for (i64 l0 = 0; l0 < kr; l0 += kc) {
        const int kb = (int)min((i64)kc, kr - l0);
        __syncthreads();  // the previous chunk has been read
        if (live) {
            load_chunks<T>(ta, tb, mi, ni, kb, t, tpp, A + (ta == 0 ? l0 * lda : l0), lda, B + (tb == 0 ? l0 : l0 * ldb),
                           ldb, As, lsa, Bs, lsb);
            cp_wait<0>();
        }
        __syncthreads();
        if (live) {
#pragma unroll 4
            for (int l = 0; l < kb; l++) {
                T av[R], bv[R];
#pragma unroll
                for (int r = 0; r < R; r++) {
                    const int i = ti + r * mt;
                    av[r] = i < mi ? As[l * lsa + i] : zero<T>();
                    if (ta == 2) av[r] = conj_t(av[r]);
                }
#pragma unroll
                for (int s = 0; s < R; s++) {
                    const int j = tj + s * nt;
                    bv[s] = j < ni ? Bs[j * lsb + l] : zero<T>();
                    if (tb == 2) bv[s] = conj_t(bv[s]);
                }
#pragma unroll
                for (int r = 0; r < R; r++)
#pragma unroll
                    for (int s = 0; s < R; s++) acc[r][s] = fma_t(av[r], bv[s], acc[r][s]);
            }
        }
    }
    if (!live) return;
    const bool read_c = !is_zero(be);
#pragma unroll
    for (int s = 0; s < R; s++) {
        const int j = tj + s * nt;
        if (j >= ni) continue;
#pragma unroll
        for (int r = 0; r < R; r++) {
            const int i = ti + r * mt;
            if (i >= mi) continue;
            T* cij = C + i + (i64)j * ldc;
            // beta == 0 never reads C (NaN there is overwritten, as BLAS says); alpha == 0 or
            // k == 0 is beta*C (alpha not applied: an Inf alpha times an empty sum is no NaN).
            T v = kr > 0 ? al * acc[r][s] : zero<T>();
            if (read_c) v = v + be * *cij;
            *cij = v;
        }
    }
}

#define GEMM_BATCH_ENTRY(P, T, R)                                                                             \
    extern "C" __global__ void P##gemm_batch_r##R(                                                            \
        int ta, int tb, i64 m, i64 n, i64 k, T alpha, const T* alpha_p, const T* a, i64 lda, i64 sa,          \
        const T* const* aa, const T* b, i64 ldb, i64 sb, const T* const* ba, T beta, const T* beta_p, T* c,  \
        i64 ldc, i64 sc, T* const* ca, i64 batch, int kc) {                                                   \
        gemm_batch_body<T, R>(ta, tb, m, n, k, alpha, alpha_p, a, lda, sa, aa, b, ldb, sb, ba, beta, beta_p, \
                              c, ldc, sc, ca, batch, kc);                                                     \
    }
#define GEMM_BATCH_ENTRIES(P, T) GEMM_BATCH_ENTRY(P, T, 1) GEMM_BATCH_ENTRY(P, T, 2) GEMM_BATCH_ENTRY(P, T, 4)

// Entry points, one precision per compile unit (HB_PREC: kernels/common.cuh).
#if HB_PREC(s)
GEMM_BATCH_ENTRIES(s, float)
#endif
#if HB_PREC(d)
GEMM_BATCH_ENTRIES(d, double)
#endif
#if HB_PREC(c)
GEMM_BATCH_ENTRIES(c, cfloat)
#endif
#if HB_PREC(z)
GEMM_BATCH_ENTRIES(z, cdouble)
#endif
