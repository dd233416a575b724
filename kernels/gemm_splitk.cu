// Split-k GEMM for small outputs (seed 000): C := alpha*op(A)*op(B) + beta*C with m, n small
// and k long. Host side: src/gpu/splitk.rs (it holds the chunk rules and the kernel choice).
//
// Operands as the kernels see them. Each operand has "rows" (i of op(A), j of op(B)) and the
// long k dimension; element (row, p) lives at
//   KC ("k-contiguous", op(A) = T/C, op(B) = N):  base[row*ld + p]   (a row is contiguous in k)
//   KS ("k-strided",    op(A) = N,   op(B) = T/C): base[row + p*ld]   (a k-column is contiguous)
// Entry points are named P gemm_sk<config>_<a><b>: <a> = n (op(A) = N) or t (T/C), <b> = n
// (op(B) = N) or t (T/C); conjugation is a run-time flag.
//
// Work decomposition: k is cut into chunks of L (the host's rule; a multiple of 128 on the
// deterministic path, a function of (m, n, k, precision) only). One *team* computes the partial
// product of one chunk for one output tile:
// - tile kernels (gemm_sk16/32/64): a team of NT threads, TM x TN tile, RM x RN outputs per
//   thread; each k-step of KT values goes global -> shared memory through a 3-stage cp.async
//   pipeline (16-byte copies where the operand and its leading dimension are 16-byte aligned,
//   element copies else; rows past m/n and k past the chunk are zero-filled, never read); a
//   block holds blockDim.y independent teams, each with its own shared memory and named barrier.
//   gemm_sk32m/64m (double, sm_80+): the same with the product on FP64 tensor cores
//   (mma.sync m8n8k4), for the 32..64 shapes where FP64 FMAs, not memory, would bound.
// - direct kernel (gemm_sk_direct, m, n <= 4): a team is one warp; no shared memory; lane l
//   takes 16-byte units (V = 16/sizeof(T) consecutive k) l, l+32, ... of the chunk straight from
//   global memory and keeps all m x n sums in registers.
//
// Summation order (bitwise reproducible; independent of the block shape, the grid, the SM count
// and the alignment of the data):
// - tile kernels: inside a chunk every output is one sequential fused sum over k in increasing
//   order (which thread holds it, KT and the pipeline do not change it; zero-filled tails add
//   +0 to a sum that is never -0, so they change nothing either); the tensor-core variants add
//   4 products per step in the hardware's fixed order;
// - direct kernel: lane l sums its units in increasing order (inside a unit, k in order), the
//   32 lane sums are added by warp_sum's fixed tree;
// - chunks: the partials go to the workspace (part[g*m*n + i + j*m]) and gemm_sk_reduce adds
//   them in a fixed pattern: S_r = sum of chunks r, r+32, r+64, ... in order (r < 32), then the
//   tree S_r += S_{r+h} for h = 16, 8, 4, 2, 1. With one chunk the team stores C itself.
// The atomic variant (mode SK_ATOMIC) scales C by beta first (gemm_sk_scale) and every team (or
// in the direct kernel every block) adds alpha*partial into C with atomicAdd (complex: the two
// parts separately); its result depends on timing.
//
// Scalars follow the reference: beta == 0 assigns (NaN in C is overwritten), alpha == 0 reads
// neither A nor B (device scalars are checked here; host scalars on the host), and nothing
// outside the m x n block of C is written. All index arithmetic is 64-bit. Operands are aligned
// to their element (complex double to 16 bytes, like cuDoubleComplex; the host checks).

#define SK_NS 3  // pipeline stages of the tile kernels (host: NSTAGE)

#define SK_PART 0    // write the chunk partial to part[]
#define SK_STORE 1   // one chunk: C := alpha*sum + beta*C directly
#define SK_ATOMIC 2  // C += alpha*sum with atomics (C was scaled by beta before)

template <typename T> struct __align__(16) sk_vec { T v[16 / sizeof(T)]; };

__device__ __forceinline__ constexpr int sk_max(int a, int b) { return a > b ? a : b; }

// ---- Asynchronous copies, barriers, shared memory (real GPU; the host emulator used to test
// this file without a GPU supplies its own versions under SK_HOST_EMU) ----
#ifndef SK_HOST_EMU
__device__ __forceinline__ unsigned sk_smem_addr(const void* p) {
    unsigned r;
    asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(r) : "l"(p));
    return r;
}

// Copy `src_bytes` (0 .. cp) bytes from global memory and zero-fill the rest of the cp bytes at
// dst. cp is 16 (src and dst 16-byte aligned), 8 or 4 (aligned to it). With src_bytes == 0
// nothing is read (src must still be a valid address).
template <int CP> __device__ __forceinline__ void sk_cp_async(void* dst, const void* src, int src_bytes) {
#if __CUDA_ARCH__ >= 800
    if (CP == 16) {
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(sk_smem_addr(dst)), "l"(src),
                     "r"(src_bytes)
                     : "memory");
    } else {
        asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(sk_smem_addr(dst)), "l"(src), "n"(CP),
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

__device__ __forceinline__ void sk_cp_commit() {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

// Wait until at most N of this thread's committed copy groups are still in flight.
template <int N> __device__ __forceinline__ void sk_cp_wait() {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

// Barrier of one team: named barrier `id` (1..15) over `n` threads (whole warps).
__device__ __forceinline__ void sk_team_sync(int id, int n) {
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(n) : "memory");
}

template <typename T> __device__ __forceinline__ T* sk_smem() {
    extern __shared__ __align__(16) unsigned char sk_dyn_smem[];
    return reinterpret_cast<T*>(sk_dyn_smem);
}

__device__ __forceinline__ void sk_fail() { __trap(); }

// c[0..1] += A(8x4) * B(4x8) on FP64 tensor cores for the warp: this lane gives A[g][t] and
// B[t][g] and holds C[g][2t], C[g][2t+1] (g = lane / 4, t = lane % 4). sm_80 and later.
__device__ __forceinline__ void sk_dmma(double& c0, double& c1, double a, double b) {
#if __CUDA_ARCH__ >= 800
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};\n"
                 : "+d"(c0), "+d"(c1)
                 : "d"(a), "d"(b));
#else
    sk_fail();
#endif
}
#endif

// ---- Scalar helpers ----

__device__ __forceinline__ float conj_if(float a, bool) { return a; }
__device__ __forceinline__ double conj_if(double a, bool) { return a; }
__device__ __forceinline__ cfloat conj_if(cfloat a, bool c) { return cfloat{a.x, c ? -a.y : a.y}; }
__device__ __forceinline__ cdouble conj_if(cdouble a, bool c) { return cdouble{a.x, c ? -a.y : a.y}; }

__device__ __forceinline__ void atomic_add_t(float* p, float v) { atomicAdd(p, v); }
__device__ __forceinline__ void atomic_add_t(double* p, double v) { atomicAdd(p, v); }
__device__ __forceinline__ void atomic_add_t(cfloat* p, cfloat v) {
    atomicAdd(&p->x, v.x);
    atomicAdd(&p->y, v.y);
}
__device__ __forceinline__ void atomic_add_t(cdouble* p, cdouble v) {
    atomicAdd(&p->x, v.x);
    atomicAdd(&p->y, v.y);
}

// C := alpha*sum + beta*C as the reference forms it (beta*C first; beta == 0 assigns).
template <typename T> __device__ __forceinline__ void sk_update(T* c, T al, T be, T sum) {
    T r = zero<T>();
    if (!is_zero(be)) r = is_one(be) ? *c : be * *c;
    *c = fma_t(al, sum, r);
}

// C := beta*C (beta == 0 assigns zero, beta == 1 leaves C alone).
template <typename T> __device__ __forceinline__ void sk_scale(T* c, T be) {
    if (is_one(be)) return;
    *c = is_zero(be) ? zero<T>() : be * *c;
}

// Copy V elements (one 16-byte unit) of an operand into shared memory: `valid` (0..V) leading
// elements from src, zeros after. vec: one 16-byte copy (src, dst 16-byte aligned); else one
// copy per element (complex double in two 8-byte halves: its pointer may be 8-byte aligned).
// `any` is a valid address, used where nothing is read.
template <typename T>
__device__ __forceinline__ void sk_copy_unit(T* dst, const T* src, const T* any, int valid, bool vec) {
    constexpr int V = 16 / sizeof(T);
    if (vec) {
        sk_cp_async<16>(dst, valid > 0 ? src : any, valid * (int)sizeof(T));
        return;
    }
#pragma unroll
    for (int v = 0; v < V; v++) {
        const bool ok = v < valid;
        const T* s = ok ? src + v : any;
        if (sizeof(T) == 16) {
            const double* sd = reinterpret_cast<const double*>(s);
            double* dd = reinterpret_cast<double*>(dst + v);
            sk_cp_async<8>(dd, sd, ok ? 8 : 0);
            sk_cp_async<8>(dd + 1, ok ? sd + 1 : sd, ok ? 8 : 0);
        } else {
            sk_cp_async<sizeof(T)>(dst + v, s, ok ? (int)sizeof(T) : 0);
        }
    }
}

// ---- Tile kernels ----

// Shared-memory geometry of one operand's stage: R tile rows, KT k values. KC: [row][k] with a
// row stride of KT + V elements; KS: [k][row] with a stride of R + V (16 bytes of padding keep
// the rows 16-byte aligned and spread the rows a warp reads over the banks). Both layouts get
// the larger of the two sizes, so the host needs no layout to size shared memory.
template <typename T, int R, int KT> struct sk_geom {
    static constexpr int V = 16 / (int)sizeof(T);
    static constexpr int STAGE = sk_max(R * (KT + V), KT * (R + V));
};

// Issue the copies of one stage of one operand: tile rows [r0, r0 + R) of `rows`, k values
// [p0, p0 + KT) of which those < pend are real. Thread t of NT takes units t, t + NT, ...
template <typename T, bool KC, int R, int KT, int NT>
__device__ __forceinline__ void sk_load_stage(T* s, const T* g, i64 ld, i64 rows, i64 r0, i64 p0, i64 pend, bool vec,
                                              int t) {
    constexpr int V = 16 / (int)sizeof(T);
    if (KC) {
        constexpr int UPR = KT / V;  // units per tile row
        constexpr int NU = R * UPR;
#pragma unroll
        for (int u = t; u < NU; u += NT) {
            const int r = u / UPR, ku = u - r * UPR;
            const i64 row = r0 + r, p = p0 + (i64)ku * V;
            int valid = 0;
            if (row < rows && p < pend) valid = (pend - p >= V) ? V : (int)(pend - p);
            const T* src = valid > 0 ? g + row * ld + p : g;
            sk_copy_unit<T>(s + r * (KT + V) + ku * V, src, g, valid, vec);
        }
    } else {
        constexpr int UPK = R / V;  // units per k value
        constexpr int NU = KT * UPK;
#pragma unroll
        for (int u = t; u < NU; u += NT) {
            const int kk = u / UPK, ru = u - kk * UPK;
            const i64 row = r0 + (i64)ru * V, p = p0 + kk;
            int valid = 0;
            if (p < pend && row < rows) valid = (rows - row >= V) ? V : (int)(rows - row);
            const T* src = valid > 0 ? g + row + p * ld : g;
            sk_copy_unit<T>(s + kk * (R + V) + ru * V, src, g, valid, vec);
        }
    }
}

// The RR rows (tr, tr + RT, ...) of one operand at k values kk .. kk+V-1 of a stage.
template <typename T, bool KC, int R, int KT, int RR, int RT>
__device__ __forceinline__ void sk_frag(const T* s, int tr, int kk, T (&x)[RR][16 / sizeof(T)]) {
    constexpr int V = 16 / (int)sizeof(T);
#pragma unroll
    for (int r = 0; r < RR; r++) {
        const int row = tr + r * RT;
        if (KC) {
            const sk_vec<T> u = *reinterpret_cast<const sk_vec<T>*>(s + row * (KT + V) + kk);
#pragma unroll
            for (int v = 0; v < V; v++) x[r][v] = u.v[v];
        } else {
#pragma unroll
            for (int v = 0; v < V; v++) x[r][v] = s[(kk + v) * (R + V) + row];
        }
    }
}

// Element (row, k) of one operand's stage.
template <typename T, bool KC, int R, int KT> __device__ __forceinline__ T sk_at(const T* s, int row, int k) {
    constexpr int V = 16 / (int)sizeof(T);
    return KC ? s[row * (KT + V) + k] : s[k * (R + V) + row];
}

// The argument list every main kernel takes. vec: bit 0 = A, bit 1 = B may use 16-byte copies.
// L: chunk length; chunks: chunks per tile; tiles_m: tiles along m (blockIdx.y = tile);
// check: the shared memory per team the host sized (tile kernels trap on a mismatch).
#define SK_PARAMS(T)                                                                                              \
    i64 m, i64 n, i64 k, T alpha, const T *alpha_p, T beta, const T *beta_p, const T *__restrict__ a, i64 lda,  \
        const T *__restrict__ b, i64 ldb, T *c, i64 ldc, int cja, int cjb, int vec, i64 L, i64 chunks, int mode, \
        T *part, i64 tiles_m, int check
#define SK_ARGS m, n, k, alpha, alpha_p, beta, beta_p, a, lda, b, ldb, c, ldc, cja, cjb, vec, L, chunks, mode, part, tiles_m, check

// Block (NT, teams); grid (ceil(chunks / teams), tiles). SB: bytes of one stage (both operands).
// MMA (double only, sm_80+): FP64 tensor cores, warps of 32 x 16 outputs (4 x 2 m8n8 tiles; each
// thread holds RM x RN = 4 x 4 of them), NT = (TM/32)*(TN/16)*32 threads, as many as the
// CUDA-core variant with 4 x 4 outputs per thread. Either way every output is a sequential sum
// over k (the MMA adds 4 products per step in the hardware's fixed order).
template <typename T, bool AKC, bool BKC, int TM, int TN, int RM, int RN, int SB, bool MMA>
__device__ __forceinline__ void sk_tile_body(SK_PARAMS(T)) {
    constexpr int V = 16 / (int)sizeof(T);
    constexpr int KT = SB / ((TM + TN) * (int)sizeof(T));
    constexpr int TMT = TM / RM, TNT = TN / RN, NT = TMT * TNT;
    static_assert(!MMA || (sizeof(T) == 8 && RM == 4 && RN == 4 && TM % 32 == 0 && TN % 16 == 0 &&
                           NT == (TM / 32) * (TN / 16) * 32 && KT % 4 == 0),
                  "MMA geometry");
    constexpr int A_ST = sk_geom<T, TM, KT>::STAGE, B_ST = sk_geom<T, TN, KT>::STAGE;
    constexpr int STAGE = A_ST + B_ST;
    static_assert(KT % V == 0 && TM % V == 0 && TN % V == 0 && NT % 32 == 0, "tile geometry");
    // A host that sized shared memory or the block differently fails here, loudly.
    if (check != SK_NS * STAGE * (int)sizeof(T) || blockDim.x != NT || blockDim.y > 15) sk_fail();
    const i64 g = (i64)blockIdx.x * blockDim.y + threadIdx.y;
    if (g >= chunks) return;  // the whole team leaves
    const int t = threadIdx.x, tr = t % TMT, tc = t / TMT;
    const i64 tile = blockIdx.y;
    const i64 i0 = (tile % tiles_m) * TM, j0 = (tile / tiles_m) * TN;
    // MMA: warp (wm, wn) of the tile, lane (g, tq) of the warp.
    constexpr int WMS = MMA ? TM / 32 : 1;  // warps along m
    const int lane = t & 31, wm = (t >> 5) % WMS, wn = (t >> 5) / WMS, g8 = lane >> 2, tq = lane & 3;
    // Tile-relative row and column of this thread's output (r, q).
    auto row_of = [&](int r, int q) -> int { return MMA ? wm * 32 + r * 8 + g8 : tr + r * TMT; };
    auto col_of = [&](int r, int q) -> int { return MMA ? wn * 16 + (q >> 1) * 8 + 2 * tq + (q & 1) : tc + q * TNT; };
    const T al = scalar_arg(alpha, alpha_p);
    if (is_zero(al)) {
        // A and B are not read. With one chunk the team owns its tile of C; else the reduce or
        // scale kernel applies beta.
        if (mode == SK_STORE) {
            const T be = scalar_arg(beta, beta_p);
#pragma unroll
            for (int r = 0; r < RM; r++)
#pragma unroll
                for (int q = 0; q < RN; q++) {
                    const i64 i = i0 + row_of(r, q), j = j0 + col_of(r, q);
                    if (i < m && j < n) sk_scale(c + i + j * ldc, be);
                }
        }
        return;
    }
    T* sm = sk_smem<T>() + (i64)threadIdx.y * (SK_NS * STAGE);
    const i64 k0 = g * L;
    const i64 kend = (k - k0 < L) ? k : k0 + L;
    const i64 steps = (kend - k0 + KT - 1) / KT;
    const bool va = vec & 1, vb = (vec >> 1) & 1;
    const int bar = 1 + threadIdx.y;

#pragma unroll
    for (int s = 0; s < SK_NS - 1; s++) {
        if (s < steps) {
            T* st = sm + s * STAGE;
            sk_load_stage<T, AKC, TM, KT, NT>(st, a, lda, m, i0, k0 + (i64)s * KT, kend, va, t);
            sk_load_stage<T, BKC, TN, KT, NT>(st + A_ST, b, ldb, n, j0, k0 + (i64)s * KT, kend, vb, t);
        }
        sk_cp_commit();
    }
    T acc[RM][RN];
#pragma unroll
    for (int r = 0; r < RM; r++)
#pragma unroll
        for (int q = 0; q < RN; q++) acc[r][q] = zero<T>();

    for (i64 step = 0; step < steps; step++) {
        // Stage `step` has landed (this thread's copies), and after the barrier everyone's; the
        // barrier also says every thread is done with the buffer refilled below (step - 1's).
        sk_cp_wait<SK_NS - 2>();
        sk_team_sync(bar, NT);
        const i64 nx = step + SK_NS - 1;
        if (nx < steps) {
            T* st = sm + (int)(nx % SK_NS) * STAGE;
            sk_load_stage<T, AKC, TM, KT, NT>(st, a, lda, m, i0, k0 + nx * KT, kend, va, t);
            sk_load_stage<T, BKC, TN, KT, NT>(st + A_ST, b, ldb, n, j0, k0 + nx * KT, kend, vb, t);
        }
        sk_cp_commit();
        const T* As = sm + (int)(step % SK_NS) * STAGE;
        const T* Bs = As + A_ST;
        if constexpr (MMA) {
#pragma unroll 1
            for (int kk = 0; kk < KT; kk += 4) {
                T af[4], bf[2];
#pragma unroll
                for (int r = 0; r < 4; r++) af[r] = sk_at<T, AKC, TM, KT>(As, wm * 32 + r * 8 + g8, kk + tq);
#pragma unroll
                for (int q = 0; q < 2; q++) bf[q] = sk_at<T, BKC, TN, KT>(Bs, wn * 16 + q * 8 + g8, kk + tq);
#pragma unroll
                for (int r = 0; r < 4; r++)
#pragma unroll
                    for (int q = 0; q < 2; q++) sk_dmma(acc[r][2 * q], acc[r][2 * q + 1], af[r], bf[q]);
            }
        } else {
#pragma unroll 1
            for (int kk = 0; kk < KT; kk += V) {
                T x[RM][V], y[RN][V];
                sk_frag<T, AKC, TM, KT, RM, TMT>(As, tr, kk, x);
                sk_frag<T, BKC, TN, KT, RN, TNT>(Bs, tc, kk, y);
#pragma unroll
                for (int v = 0; v < V; v++) {
#pragma unroll
                    for (int r = 0; r < RM; r++) x[r][v] = conj_if(x[r][v], cja);
#pragma unroll
                    for (int q = 0; q < RN; q++) y[q][v] = conj_if(y[q][v], cjb);
                }
#pragma unroll
                for (int v = 0; v < V; v++)
#pragma unroll
                    for (int r = 0; r < RM; r++)
#pragma unroll
                        for (int q = 0; q < RN; q++) acc[r][q] = fma_t(x[r][v], y[q][v], acc[r][q]);
            }
        }
    }
    sk_cp_wait<0>();

    const T be = scalar_arg(beta, beta_p);
#pragma unroll
    for (int r = 0; r < RM; r++)
#pragma unroll
        for (int q = 0; q < RN; q++) {
            const i64 i = i0 + row_of(r, q), j = j0 + col_of(r, q);
            if (i >= m || j >= n) continue;
            if (mode == SK_PART) part[g * (m * n) + i + j * m] = acc[r][q];
            else if (mode == SK_STORE) sk_update(c + i + j * ldc, al, be, acc[r][q]);
            else atomic_add_t(c + i + j * ldc, al * acc[r][q]);
        }
}

// ---- Direct kernel (m, n <= 4) ----

#define SK_DMAX 4  // most rows of op(A) and columns of op(B) the direct kernel handles

// One 16-byte unit (V consecutive k from p) of the <= SK_DMAX rows of an operand, zeros past
// `rows` and past pend.
template <typename T, bool KC>
__device__ __forceinline__ void sk_direct_unit(const T* g, i64 ld, i64 rows, i64 p, i64 pend, bool vec,
                                               T (&x)[SK_DMAX][16 / sizeof(T)]) {
    constexpr int V = 16 / (int)sizeof(T);
    const bool full = p + V <= pend;
#pragma unroll
    for (int r = 0; r < SK_DMAX; r++) {
        if (KC && vec && full && r < rows) {
            const sk_vec<T> u = *reinterpret_cast<const sk_vec<T>*>(g + r * ld + p);
#pragma unroll
            for (int v = 0; v < V; v++) x[r][v] = u.v[v];
        } else {
#pragma unroll
            for (int v = 0; v < V; v++) {
                const bool ok = r < rows && p + v < pend;
                x[r][v] = ok ? (KC ? g[r * ld + p + v] : g[r + (p + v) * ld]) : zero<T>();
            }
        }
    }
}

// Block (32, warps). SK_PART / SK_STORE: warp w of block b takes chunk b*warps + w alone.
// SK_ATOMIC: the block takes chunk b, its warps interleaving the units, and adds the block's
// sums into C once.
template <typename T, bool AKC, bool BKC> __device__ __forceinline__ void sk_direct_body(SK_PARAMS(T)) {
    constexpr int V = 16 / (int)sizeof(T);
    constexpr int U = 2;  // units per lane in flight
    __shared__ T red[16][SK_DMAX * SK_DMAX];
    if (blockDim.x != 32 || m > SK_DMAX || n > SK_DMAX || (mode == SK_ATOMIC && blockDim.y > 16)) sk_fail();
    const bool coop = mode == SK_ATOMIC;
    const int lane = threadIdx.x, w = threadIdx.y;
    const i64 g = coop ? (i64)blockIdx.x : (i64)blockIdx.x * blockDim.y + w;
    if (g >= chunks) return;  // a whole warp (block when coop) leaves
    const T al = scalar_arg(alpha, alpha_p);
    if (is_zero(al)) {
        if (mode == SK_STORE && lane == 0) {
            const T be = scalar_arg(beta, beta_p);
            for (int j = 0; j < n; j++)
                for (int i = 0; i < m; i++) sk_scale(c + i + j * ldc, be);
        }
        return;
    }
    const i64 k0 = g * L;
    const i64 kend = (k - k0 < L) ? k : k0 + L;
    const i64 units = (kend - k0 + V - 1) / V;
    const i64 slot = coop ? (i64)w * 32 + lane : lane;
    const i64 slots = coop ? 32 * (i64)blockDim.y : 32;
    const bool va = vec & 1, vb = (vec >> 1) & 1;
    T acc[SK_DMAX][SK_DMAX];
#pragma unroll
    for (int i = 0; i < SK_DMAX; i++)
#pragma unroll
        for (int j = 0; j < SK_DMAX; j++) acc[i][j] = zero<T>();
    for (i64 u = slot; u < units; u += U * slots) {
        T x[U][SK_DMAX][V], y[U][SK_DMAX][V];
#pragma unroll
        for (int q = 0; q < U; q++) {
            const i64 p = k0 + (u + q * slots) * V;  // past kend for units past the chunk: zeros
            sk_direct_unit<T, AKC>(a, lda, m, p, kend, va, x[q]);
            sk_direct_unit<T, BKC>(b, ldb, n, p, kend, vb, y[q]);
        }
#pragma unroll
        for (int q = 0; q < U; q++)
#pragma unroll
            for (int v = 0; v < V; v++)
#pragma unroll
                for (int i = 0; i < SK_DMAX; i++)
#pragma unroll
                    for (int j = 0; j < SK_DMAX; j++)
                        acc[i][j] = fma_t(conj_if(x[q][i][v], cja), conj_if(y[q][j][v], cjb), acc[i][j]);
    }
#pragma unroll
    for (int i = 0; i < SK_DMAX; i++)
#pragma unroll
        for (int j = 0; j < SK_DMAX; j++) acc[i][j] = warp_sum(acc[i][j]);
    if (!coop) {
        if (lane != 0) return;
        const T be = scalar_arg(beta, beta_p);
#pragma unroll
        for (int i = 0; i < SK_DMAX; i++)
#pragma unroll
            for (int j = 0; j < SK_DMAX; j++) {
                if (i >= m || j >= n) continue;
                if (mode == SK_PART) part[g * (m * n) + i + j * m] = acc[i][j];
                else sk_update(c + i + j * ldc, al, be, acc[i][j]);
            }
        return;
    }
    if (lane == 0) {
#pragma unroll
        for (int i = 0; i < SK_DMAX; i++)
#pragma unroll
            for (int j = 0; j < SK_DMAX; j++) red[w][i * SK_DMAX + j] = acc[i][j];
    }
    __syncthreads();
    if (w == 0 && lane < SK_DMAX * SK_DMAX) {
        const int i = lane / SK_DMAX, j = lane % SK_DMAX;
        if (i < m && j < n) {
            T s = red[0][lane];
            for (int q = 1; q < (int)blockDim.y; q++) s = s + red[q][lane];
            atomic_add_t(c + i + j * ldc, al * s);
        }
    }
}

// ---- Reduction of the chunk partials, and C := beta*C ----

// Block (X <= 32, 32): thread (x, r) sums chunks r, r+32, ... of output blockIdx.x*X + x; the
// 32 sums are added by the fixed tree; then C := alpha*sum + beta*C. With alpha == 0 the
// partials are not read (C := beta*C).
template <typename T>
__device__ __forceinline__ void sk_reduce_body(i64 m, i64 n, i64 G, T alpha, const T* alpha_p, T beta, const T* beta_p,
                                               const T* __restrict__ part, T* c, i64 ldc) {
    __shared__ T red[32][33];
    if (blockDim.y != 32 || blockDim.x > 32) sk_fail();
    const int x = threadIdx.x, r = threadIdx.y;
    const i64 mn = m * n;
    const i64 o = (i64)blockIdx.x * blockDim.x + x;
    const T al = scalar_arg(alpha, alpha_p);
    const bool skip = is_zero(al);
    T s = zero<T>();
    if (!skip && o < mn) {
        i64 q = r;
        // Four partials in flight, added in order.
        for (; q + 96 < G; q += 128) {
            const T p0 = part[q * mn + o], p1 = part[(q + 32) * mn + o];
            const T p2 = part[(q + 64) * mn + o], p3 = part[(q + 96) * mn + o];
            s = s + p0;
            s = s + p1;
            s = s + p2;
            s = s + p3;
        }
        for (; q < G; q += 32) s = s + part[q * mn + o];
    }
    red[r][x] = s;
    __syncthreads();
#pragma unroll
    for (int h = 16; h > 0; h >>= 1) {
        if (r < h) red[r][x] = red[r][x] + red[r + h][x];
        __syncthreads();
    }
    if (r == 0 && o < mn) {
        T* cp = c + (o % m) + (o / m) * ldc;
        const T be = scalar_arg(beta, beta_p);
        if (skip) sk_scale(cp, be);
        else sk_update(cp, al, be, red[0][x]);
    }
}

// C := beta*C over the m x n block (beta == 0 assigns): one thread per element.
template <typename T> __device__ __forceinline__ void sk_scale_body(i64 m, i64 n, T beta, const T* beta_p, T* c, i64 ldc) {
    const i64 idx = ((i64)blockIdx.x * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
    if (idx >= m * n) return;
    sk_scale(c + idx % m + (idx / m) * ldc, scalar_arg(beta, beta_p));
}

// ---- Entry points ----

// Stage bytes of the tile configurations (host: Cfg::stage_bytes).
#define SK16_SB 8192
#define SK32_SB 8192
#define SK64_SB 16384

#define SK_TILE_ENTRY(P, T, NAME, SFX, AKC, BKC, TM, TN, RM, RN, SB, MMA)             \
    extern "C" __global__ void P##NAME##_##SFX(SK_PARAMS(T)) {                        \
        sk_tile_body<T, AKC, BKC, TM, TN, RM, RN, SB, MMA>(SK_ARGS);                  \
    }
#define SK_DIRECT_ENTRY(P, T, SFX, AKC, BKC) \
    extern "C" __global__ void P##gemm_sk_direct_##SFX(SK_PARAMS(T)) { sk_direct_body<T, AKC, BKC>(SK_ARGS); }

#define SK_LAYOUTS(P, T, M)  \
    M(P, T, nn, false, true) \
    M(P, T, nt, false, false) \
    M(P, T, tn, true, true)  \
    M(P, T, tt, true, false)

#define SK_T16(P, T, SFX, AKC, BKC) SK_TILE_ENTRY(P, T, gemm_sk16, SFX, AKC, BKC, 16, 16, 2, 2, SK16_SB, false)
#define SK_T32(P, T, SFX, AKC, BKC) SK_TILE_ENTRY(P, T, gemm_sk32, SFX, AKC, BKC, 32, 32, 4, 4, SK32_SB, false)
#define SK_T64(P, T, SFX, AKC, BKC) SK_TILE_ENTRY(P, T, gemm_sk64, SFX, AKC, BKC, 64, 64, 4, 4, SK64_SB, false)
// FP64 tensor cores (double only; the host picks them on sm_80 and later).
#define SK_T32M(P, T, SFX, AKC, BKC) SK_TILE_ENTRY(P, T, gemm_sk32m, SFX, AKC, BKC, 32, 32, 4, 4, SK32_SB, true)
#define SK_T64M(P, T, SFX, AKC, BKC) SK_TILE_ENTRY(P, T, gemm_sk64m, SFX, AKC, BKC, 64, 64, 4, 4, SK64_SB, true)

#define SK_ENTRIES(P, T)                                                                                          \
    SK_LAYOUTS(P, T, SK_DIRECT_ENTRY)                                                                             \
    SK_LAYOUTS(P, T, SK_T16)                                                                                      \
    SK_LAYOUTS(P, T, SK_T32)                                                                                      \
    SK_LAYOUTS(P, T, SK_T64)                                                                                      \
    extern "C" __global__ void P##gemm_sk_reduce(i64 m, i64 n, i64 G, T alpha, const T* alpha_p, T beta,         \
                                                 const T* beta_p, const T* part, T* c, i64 ldc) {                 \
        sk_reduce_body<T>(m, n, G, alpha, alpha_p, beta, beta_p, part, c, ldc);                                   \
    }                                                                                                             \
    extern "C" __global__ void P##gemm_sk_scale(i64 m, i64 n, T beta, const T* beta_p, T* c, i64 ldc) {           \
        sk_scale_body<T>(m, n, beta, beta_p, c, ldc);                                                             \
    }

SK_ENTRIES(s, float)
SK_ENTRIES(d, double)
SK_LAYOUTS(d, double, SK_T32M)
SK_LAYOUTS(d, double, SK_T64M)
SK_ENTRIES(c, cfloat)
SK_ENTRIES(z, cdouble)
