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
// The asynchronous copies (cp_async, cp_commit, cp_wait) are kernels/common.cuh's.

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
        cp_async<16>(dst, valid > 0 ? src : any, valid * (int)sizeof(T));
        return;
    }
#pragma unroll
    for (int v = 0; v < V; v++) {
        const bool ok = v < valid;
        const T* s = ok ? src + v : any;
        if (sizeof(T) == 16) {
            const double* sd = reinterpret_cast<const double*>(s);
            double* dd = reinterpret_cast<double*>(dst + v);
            cp_async<8>(dd, sd, ok ? 8 : 0);
            cp_async<8>(dd + 1, ok ? sd + 1 : sd, ok ? 8 : 0);
        } else {
            cp_async<sizeof(T)>(dst + v, s, ok ? (int)sizeof(T) : 0);
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
        cp_commit();
    }
    T acc[RM][RN];
#pragma unroll
    for (int r = 0; r < RM; r++)
#pragma unroll
        for (int q = 0; q < RN; q++) acc[r][q] = zero<T>();

    for (i64 step = 0; step < steps; step++) {
        // Stage `step` has landed (this thread's copies), and after the barrier everyone's; the
        // barrier also says every thread is done with the buffer refilled below (step - 1's).
        cp_wait<SK_NS - 2>();
        sk_team_sync(bar, NT);
        const i64 nx = step + SK_NS - 1;
        if (nx < steps) {
            T* st = sm + (int)(nx % SK_NS) * STAGE;
            sk_load_stage<T, AKC, TM, KT, NT>(st, a, lda, m, i0, k0 + nx * KT, kend, va, t);
            sk_load_stage<T, BKC, TN, KT, NT>(st + A_ST, b, ldb, n, j0, k0 + nx * KT, kend, vb, t);
        }
        cp_commit();
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
    cp_wait<0>();

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

// ---- Fragment kernels: split-k on FP64 tensor cores (double, complex double; sm_80+) ----
//
// The tile kernels above stage operands through shared memory and feed the FMAs from there; for
// the memory-bound shapes (m, n <= 32, long k) that costs more shared-memory traffic than FMAs
// and they reach only half the read bandwidth. These kernels load the mma.sync m8n8k4 fragments
// straight from global memory into registers, with no shared memory on the operand path.
//
// mma m8n8k4 (f64): lane l = 4*gi + t holds A[gi][t] and B[t][gi] and its C fragment
// C[gi][2t], C[gi][2t+1]. The kernel is free to choose which row of op(A) (column of op(B))
// fragment index gi stands for, and which k value t stands for, as long as A and B agree; it
// chooses them so that every lane issues 16-byte loads:
// - a superstep covers KSS = 4*E consecutive k (E = 2 doubles or 1 complex double per 16
//   bytes); lane t owns k = kb + E*t + e, e < E, and the superstep runs one mma per e;
// - k-contiguous operands (KC): lane (gi, t) loads E consecutive k of row 8*s + gi (subtile s);
// - k-strided double operands (KS) with 2+ subtiles pair subtiles 2s', 2s'+1 so one 16-byte
//   load brings rows 16s' + 2gi and 16s' + 2gi + 1 at one k (two loads cover the lane's 2 k);
// - complex double: every element is a 16-byte load; a complex product is 4 real mma
//   (re += ar*br - ai*bi, im += ar*bi + ai*br; conjugation flips ai or bi).
// A warp holds an (8 MT) x (8 NT) output tile in registers (MT, NT subtiles).
//
// Work decomposition and summation order (bitwise reproducible: nothing depends on the SM count,
// the grid shape or timing):
// - block x (of G) takes the k-chunk [x*L, min(k, (x+1)*L)); its SKM_WARPS warps take the
//   chunk's supersteps round robin (warp w: supersteps w, w + W, w + 2W, ... in increasing
//   order, U of them loaded before the first is multiplied);
// - the block's warps are added by a fixed tree through shared memory (w += w + h for h = W/2,
//   ..., 1);
// - the tensor-core kernels fold their fragments into the tile's outputs (skm_out) here, so
//   what crosses blocks is one word per output (per part of a complex one);
// - G > 1 (SK_PART): block partials go to the stream's partial slots, whose words are empty
//   (SK_EMPTY) between calls; the blocks of the last chunks add them in one level, each a fixed
//   share of the words, waiting for each word to be written, in an order fixed by the tile and
//   G only (sk_cross), write C and set the words back to empty. No second kernel;
// - SK_ATOMIC: each block adds alpha*(its sum) into C (scaled by beta before) with atomics.
#ifndef SK_HOST_EMU
#define SKM_WARPS 8   // warps per block: part of the summation order

template <typename T> struct skm_t;
template <> struct skm_t<double> { static constexpr int E = 2, ACC = 2; };
template <> struct skm_t<cdouble> { static constexpr int E = 1, ACC = 4; };

// Row of op(A) (column of op(B)) that fragment index gi (0..7) of subtile s stands for. With a
// fold F > 1 (outputs of at most P = 8/F rows and columns, one subtile) fragment index gi is
// row gi % P of k-segment gi / P: the superstep covers F segments of 4E k each, so all 8
// fragment rows carry data and the useful products are the F diagonal P x P blocks, added at
// the end (skm_out).
template <typename T, bool KC, int S, int F = 1> __device__ __forceinline__ int skm_idx(int s, int gi) {
    if (F > 1) return gi % (8 / F);
    return (!KC && skm_t<T>::E == 2 && S >= 2) ? 16 * (s >> 1) + 2 * gi + (s & 1) : 8 * s + gi;
}

// 16 bytes that are read once: no L1 allocation, and a 256-byte L2 prefetch (the operands are
// long streams; the hint lets DRAM serve whole bursts).
__device__ __forceinline__ double2 skm_ld16(const void* p) {
    double2 v;
    asm("ld.global.nc.L1::no_allocate.L2::256B.v2.f64 {%0, %1}, [%2];" : "=d"(v.x), "=d"(v.y) : "l"(p));
    return v;
}
template <typename T> __device__ __forceinline__ T skm_ld(const T* p) {
    if constexpr (sizeof(T) == 16) {
        const double2 v = skm_ld16(p);
        return T{v.x, v.y};
    } else {
        return *p;
    }
}

// Plain register mma (no volatile: the compiler may schedule loads around it).
__device__ __forceinline__ void skm_dmma(double& c0, double& c1, double a, double b) {
    asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};\n"
        : "+d"(c0), "+d"(c1)
        : "d"(a), "d"(b));
}

// This lane's fragment values of one operand for the superstep at kb: x[s][e] = op(X)(row of
// subtile s, kb + E*t + e) (plus the lane's segment offset with a fold), zero past `rows` and,
// with PRED, past kend. VEC: 16-byte loads of doubles (the host checked that the base and
// leading dimension are 16-byte aligned); complex doubles are always one 16-byte load.
template <typename T, bool KC, int S, int F, bool VEC, bool PRED>
__device__ __forceinline__ void skm_load(const T* __restrict__ g, i64 ld, i64 rows, i64 r0, i64 kb, i64 kend, int gi,
                                         int t, T (&x)[S][skm_t<T>::E]) {
    constexpr int E = skm_t<T>::E;
    if (F > 1) kb += (gi / (8 / F)) * (4 * E);
    if constexpr (E == 2 && KC) {
#pragma unroll
        for (int s = 0; s < S; s++) {
            const i64 row = r0 + skm_idx<T, KC, S, F>(s, gi), p = kb + 2 * t;
            if (VEC && !PRED) {
                double2 v = make_double2(0.0, 0.0);
                if (row < rows) v = skm_ld16(g + row * ld + p);
                x[s][0] = v.x;
                x[s][1] = v.y;
            } else {
#pragma unroll
                for (int e = 0; e < 2; e++) x[s][e] = (row < rows && (!PRED || p + e < kend)) ? g[row * ld + p + e] : 0.0;
            }
        }
    } else if constexpr (E == 2 && S >= 2) {
#pragma unroll
        for (int sp = 0; sp < S / 2; sp++) {
            const i64 row = r0 + 16 * sp + 2 * gi;
#pragma unroll
            for (int e = 0; e < 2; e++) {
                const i64 p = kb + 2 * t + e;
                const bool kok = !PRED || p < kend;
                if (VEC && kok && row + 1 < rows) {
                    const double2 v = skm_ld16(g + row + p * ld);
                    x[2 * sp][e] = v.x;
                    x[2 * sp + 1][e] = v.y;
                } else {
                    x[2 * sp][e] = (kok && row < rows) ? g[row + p * ld] : 0.0;
                    x[2 * sp + 1][e] = (kok && row + 1 < rows) ? g[row + 1 + p * ld] : 0.0;
                }
            }
        }
    } else {
#pragma unroll
        for (int s = 0; s < S; s++) {
            const i64 row = r0 + skm_idx<T, KC, S, F>(s, gi);
#pragma unroll
            for (int e = 0; e < E; e++) {
                const i64 p = kb + E * t + e;
                const bool ok = row < rows && (!PRED || p < kend);
                x[s][e] = ok ? skm_ld(KC ? g + row * ld + p : g + row + p * ld) : zero<T>();
            }
        }
    }
}

// acc += op(A) fragment x op(B) fragment for one superstep.
template <typename T, int MT, int NT>
__device__ __forceinline__ void skm_mma(double (&acc)[MT][NT][skm_t<T>::ACC], const T (&a)[MT][skm_t<T>::E],
                                        const T (&b)[NT][skm_t<T>::E], int cja, int cjb) {
    if constexpr (skm_t<T>::E == 2) {
#pragma unroll
        for (int e = 0; e < 2; e++)
#pragma unroll
            for (int s = 0; s < MT; s++)
#pragma unroll
                for (int q = 0; q < NT; q++) skm_dmma(acc[s][q][0], acc[s][q][1], a[s][e], b[q][e]);
    } else {
        double ai[MT], bi[NT];
#pragma unroll
        for (int s = 0; s < MT; s++) ai[s] = cja ? -a[s][0].y : a[s][0].y;
#pragma unroll
        for (int q = 0; q < NT; q++) bi[q] = cjb ? -b[q][0].y : b[q][0].y;
#pragma unroll
        for (int s = 0; s < MT; s++)
#pragma unroll
            for (int q = 0; q < NT; q++) {
                skm_dmma(acc[s][q][0], acc[s][q][1], a[s][0].x, b[q][0].x);
                skm_dmma(acc[s][q][0], acc[s][q][1], -ai[s], bi[q]);
                skm_dmma(acc[s][q][2], acc[s][q][3], a[s][0].x, bi[q]);
                skm_dmma(acc[s][q][2], acc[s][q][3], ai[s], b[q][0].x);
            }
    }
}

// Output o of a warp tile held as R*32 doubles (slot r*32 + lane, r = (s*NT + q)*ACC + a):
// its value from buf, and its row and column in the tile. Outputs: 64*MT*NT, or P*P with a
// fold (the sum of the F diagonal blocks' entries, in segment order).
template <typename T> __device__ __forceinline__ T skm_frag(const double* buf, int sq, int c, int lane) {
    if constexpr (skm_t<T>::ACC == 2) {
        return buf[(sq * 2 + c) * 32 + lane];
    } else {
        return cdouble{buf[(sq * 4 + c) * 32 + lane], buf[(sq * 4 + 2 + c) * 32 + lane]};
    }
}

// Where output o of skm_out goes: its row and column in the tile (no value read).
template <typename T, bool AKC, bool BKC, int MT, int NT, int F>
__device__ __forceinline__ void skm_pos(int o, int& row, int& col) {
    if constexpr (F > 1) {
        row = o % (8 / F);
        col = o / (8 / F);
    } else {
        const int lane = o & 31, r2 = o >> 5, c = r2 & 1, sq = r2 >> 1;
        row = skm_idx<T, AKC, MT>(sq / NT, lane >> 2);
        col = skm_idx<T, BKC, NT>(sq % NT, 2 * (lane & 3) + c);
    }
}
template <typename T, bool AKC, bool BKC, int MT, int NT, int F>
__device__ __forceinline__ T skm_out(const double* buf, int o, int& row, int& col) {
    skm_pos<T, AKC, BKC, MT, NT, F>(o, row, col);
    if constexpr (F > 1) {
        constexpr int P = 8 / F;
        T v = zero<T>();
#pragma unroll
        for (int sg = 0; sg < F; sg++) {
            const int gi = sg * P + row, ci = sg * P + col;
            v = v + skm_frag<T>(buf, 0, ci & 1, gi * 4 + (ci >> 1));
        }
        return v;
    } else {
        const int lane = o & 31, r2 = o >> 5;
        return skm_frag<T>(buf, r2 >> 1, r2 & 1, lane);
    }
}

// Loads in flight per lane while partials are added, and the most partials a lane of the
// cross-block reduction adds (host: RED_LOADS).
#define SKM_BATCH 8
// Most lanes per word group in the cross-block reduction (host: RED_LANES).
#define SK_RED_LANES 64

__host__ __device__ constexpr int sk_log2(int x) { return x <= 1 ? 0 : 1 + sk_log2(x / 2); }

// Words of a partial per load: the most that fit 16 bytes and divide NW.
__host__ __device__ constexpr int sk_vw_of(int v, int nw) { return (v <= 1 || nw % v == 0) ? v : sk_vw_of(v / 2, nw); }
template <typename W, int NW> __host__ __device__ constexpr int sk_vw() { return sk_vw_of(16 / (int)sizeof(W), NW); }

// The partial slots of the cross-block reduction (host: StreamScratch::slots). Between calls
// every 32-bit word of the buffer holds SK_EMPTY, a NaN that no arithmetic produces (a double
// slot word is the pattern twice, also a NaN). A block writes each word of its slot once; a
// reducer waits until none of the words it adds is empty any more, adds them, and sets them back
// to empty for the next call on the stream. No fence, no counter: a word that is not empty is the
// final value, because nothing else writes it during the call (its words are single-copy atomic).
#define SK_EMPTY 0x7FF5A5A5u
__device__ __forceinline__ bool sk_empty(float w) { return __float_as_uint(w) == SK_EMPTY; }
__device__ __forceinline__ bool sk_empty(double w) {
    return (unsigned long long)__double_as_longlong(w) == (((unsigned long long)SK_EMPTY << 32) | SK_EMPTY);
}
// A word to write into a slot: never the empty pattern (a NaN with that payload, which only an
// operand could carry, becomes the canonical NaN; a reducer would otherwise wait forever).
__device__ __forceinline__ void sk_put(float* p, float w) {
    const unsigned u = sk_empty(w) ? 0x7FFFFFFFu : __float_as_uint(w);
    asm volatile("st.relaxed.gpu.global.b32 [%0], %1;" ::"l"(p), "r"(u) : "memory");
}
__device__ __forceinline__ void sk_put(double* p, double w) {
    const unsigned long long u = sk_empty(w) ? 0x7FFFFFFFFFFFFFFFull : (unsigned long long)__double_as_longlong(w);
    asm volatile("st.relaxed.gpu.global.b64 [%0], %1;" ::"l"(p), "l"(u) : "memory");
}
// VW consecutive words of a partial (16-byte aligned loads where VW words fill 16 bytes),
// re-read from L2 on every call (relaxed, GPU scope: never a stale L1 line).
template <typename W, int VW> __device__ __forceinline__ void sk_get(const W* p, W (&x)[VW]) {
    if constexpr (sizeof(W) == 8 && VW == 2) {
        asm volatile("ld.relaxed.gpu.global.v2.f64 {%0, %1}, [%2];" : "=d"(x[0]), "=d"(x[1]) : "l"(p) : "memory");
    } else if constexpr (sizeof(W) == 4 && VW == 4) {
        asm volatile("ld.relaxed.gpu.global.v4.f32 {%0, %1, %2, %3}, [%4];"
                     : "=f"(x[0]), "=f"(x[1]), "=f"(x[2]), "=f"(x[3])
                     : "l"(p)
                     : "memory");
    } else if constexpr (sizeof(W) == 4 && VW == 2) {
        asm volatile("ld.relaxed.gpu.global.v2.f32 {%0, %1}, [%2];" : "=f"(x[0]), "=f"(x[1]) : "l"(p) : "memory");
    } else if constexpr (sizeof(W) == 8) {
#pragma unroll
        for (int v = 0; v < VW; v++) asm volatile("ld.relaxed.gpu.global.f64 %0, [%1];" : "=d"(x[v]) : "l"(p + v) : "memory");
    } else {
#pragma unroll
        for (int v = 0; v < VW; v++) asm volatile("ld.relaxed.gpu.global.f32 %0, [%1];" : "=f"(x[v]) : "l"(p + v) : "memory");
    }
}
template <typename W, int VW> __device__ __forceinline__ bool sk_any_empty(const W (&x)[VW]) {
    bool e = false;
#pragma unroll
    for (int v = 0; v < VW; v++) e = e || sk_empty(x[v]);
    return e;
}
// The same words set back to empty (read by no one before the kernel ends).
template <typename W, int VW> __device__ __forceinline__ void sk_clear(W* p) {
    unsigned* u = reinterpret_cast<unsigned*>(p);
    constexpr int N = VW * (int)sizeof(W) / 4;
    if constexpr (N == 4) {
        *reinterpret_cast<uint4*>(u) = make_uint4(SK_EMPTY, SK_EMPTY, SK_EMPTY, SK_EMPTY);
    } else if constexpr (N == 2) {
        *reinterpret_cast<uint2*>(u) = make_uint2(SK_EMPTY, SK_EMPTY);
    } else {
#pragma unroll
        for (int v = 0; v < N; v++) u[v] = SK_EMPTY;
    }
}

// SK_TRACE=N (a measuring aid, off by default: HYBLAS_KERNEL_DEFINES=-DSK_TRACE=100): the N-th
// launch of the process that reduces across blocks prints one line per block, from thread 0:
//   TRB tile blk smid t_start cycles_to_partial t_partial_written          (every other block)
//   TRR tile blk smid t_start cycles_to_partial cycles_polled cycles_end polls t_polled t_end
// t_* from %globaltimer (ns, 32 ns steps on an H200), cycles from the block's start (clock64),
// polls: thread 0's poll rounds over all its batches. Counts launches with one global counter,
// so it is meant for one point per process (gpubench --gemm-points P).
#ifdef SK_TRACE
__device__ unsigned sk_tr_calls;
__device__ __forceinline__ long long* sk_tr() {
    __shared__ long long v[3];
    return v;
}
__device__ __forceinline__ long long sk_gt() {
    unsigned long long g;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g));
    return (long long)g;
}
__device__ __forceinline__ unsigned sk_smid() {
    unsigned r;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(r));
    return r;
}
// At the kernel's start: the block's start in cycles and ns, and the launch number.
#define SK_TR_START()                                          \
    if (threadIdx.x == 0 && threadIdx.y == 0) {                \
        sk_tr()[0] = clock64();                                \
        sk_tr()[1] = sk_gt();                                  \
        sk_tr()[2] = *(volatile unsigned*)&sk_tr_calls;        \
    }
#else
#define SK_TR_START()
#endif

// The cross-block reduction of both fragment families (SK_PART), in one level. Every block
// writes its sum (NW words in red, shared) to its slot of the tile's G partials (`part`, the
// stream's slots: see SK_EMPTY). The blocks of the last `nred` chunks (the last launched) are the
// reducers: each adds a fixed share of the words over all G partials, waiting for each word until
// it is no longer empty, and writes those outputs of C; the other blocks leave after writing.
//
// `cross` = lq | nred << 8 (host: cross_arg). Order of a word's sum (fixed by NW and G only;
// nred, the block shape and the device do not change it): words go in groups of VW (sk_vw, one
// 16-byte load), a group gets Q = 2^lq lanes (Q = the power of two >= G/SKM_BATCH, at most
// SK_RED_LANES); lane l adds partials l, l + Q, l + 2Q, ... in increasing order, then the lanes
// are added by the fixed tree l += l + h for h = Q/2, ..., 1. Pass p covers the gpp = NTH/Q
// groups [p*gpp, (p+1)*gpp) and belongs to reducer p % nred.
//
// Why several reducers: one block adding G x NW words alone takes G*NW/(NTH*SKM_BATCH) dependent
// rounds of L2 loads (5 for an 8x8 double output from 264 blocks, over 30 for 32x32 tiles); spread
// over the last blocks it is one. On an H200 (session 11, same run, against the reduction in
// levels of 16 blocks): DGEMM 8x8 k = 100003 9.4 -> 8.4 us, 32x32 k = 100003 24.3 -> 21.9, 16x16
// k = 2^20 70.3 -> 68.0. The lanes of a group sit gw threads apart so that a warp's loads are
// coalesced: a first version put a group's lanes side by side in one warp (each lane a different
// partial, 32 lines per load) and was slower than one block adding everything (DGEMM 8x8 k = 2^18
// 12.2 -> 14.4 us).
//
// Why empty words instead of an arrival counter: with a counter, the last block's path to C was
// three dependent trips to L2 (a fence after its partial, the atomic ticket, the loads); here it
// is the loads alone, and the other blocks neither fence nor count. On an H200 (session 12, same
// run, against the counter): DGEMM 8x8 k = 100003 8.3 -> 7.3 us, 16x16 k = 2^20 68.7 -> 67.6,
// SGEMM 1x1 k = 2^21 8.0 -> 6.9, ZGEMM 16x16 T,N k = 2^20 144.3 -> 137.4; a counter taken with
// one acq_rel atomic instead of two fences gained a quarter of that at most. A reducer that waits
// holds its SM slot, so the host keeps nred at most half of the blocks the device holds at once,
// and the reducers are launched last: the blocks they wait for have all been launched before
// them. Each lane keeps SKM_BATCH = 8 loads in flight: with 16, re-issued together, the complex
// double kernels spilled about 100 bytes per thread.
template <typename W, int NW, int NTH, int WPO, typename F>
__device__ __forceinline__ void sk_cross(W* red, W* part, int G, int cross, i64 tile, int blk, int tid, F store) {
    constexpr int VW = sk_vw<W, NW>(), NG = NW / VW, B = SKM_BATCH;
    static_assert(VW % WPO == 0, "a load holds whole outputs");
    static_assert((NTH & (NTH - 1)) == 0 && NTH >= SK_RED_LANES, "NTH a power of two, at least a warp");
    const int lq = cross & 31, nred = cross >> 8, Q = 1 << lq, gpp = NTH >> lq;
    W* pt = part + tile * (i64)G * NW;
#ifdef SK_TRACE
    const long long tr_part = clock64() - sk_tr()[0];
    const bool tr_on = sk_tr()[2] == SK_TRACE;
    int tr_polls = 0;
#endif
    for (int e = tid; e < NW; e += NTH) sk_put(pt + (i64)blk * NW + e, red[e]);
    const int r = blk - (G - nred);
#ifdef SK_TRACE
    if (r < 0 && tr_on && tid == 0)
        printf("TRB %lld %d %u %lld %lld %lld\n", tile, blk, sk_smid(), sk_tr()[1], tr_part, sk_gt());
#endif
    if (r < 0) return;  // the same for the whole block
    __syncthreads();    // red is reused below
    // Thread tid takes group tid % gw of the pass as its lane tid / gw (gw = gpp, or fewer when
    // the tile has fewer groups; threads past Q lanes idle): a warp's loads cover consecutive
    // groups of one partial (coalesced), and a group's lanes are gw threads apart.
    const int lgw = min(sk_log2(NTH) - lq, sk_log2(2 * NG - 1)), gl = tid & ((1 << lgw) - 1), l = tid >> lgw;
    __shared__ W comb[VW * NTH];
    for (int ps = r; ps * gpp < NG; ps += nred) {
        const int g = l < Q ? ps * gpp + gl : NG;
        W s[VW];
#pragma unroll
        for (int v = 0; v < VW; v++) s[v] = W(0);
        if (g < NG) {
            W* src = pt + g * VW;
            for (int q0 = l; q0 < G; q0 += Q * B) {
                // All B loads in flight together; while any word is still empty, all of them
                // again (one trip to L2 a round). Re-reading only the empty ones made the
                // compiler serialise the re-reads through one register, a trip per partial a
                // round (H200, session 12: DGEMM 2x2 k = 10^6+3 12.6 us against 9.7 now).
                W x[B][VW];
                const auto poll = [&](W(&y)[B][VW]) {
#pragma unroll
                    for (int b = 0; b < B; b++) {
                        if (q0 + b * Q < G) {
                            sk_get<W, VW>(src + (i64)(q0 + b * Q) * NW, y[b]);
                        } else {
#pragma unroll
                            for (int v = 0; v < VW; v++) y[b][v] = W(0);
                        }
                    }
#ifdef SK_TRACE
                    tr_polls++;
#endif
                };
                const auto waiting = [&](const W(&y)[B][VW]) {
                    bool e = false;
#pragma unroll
                    for (int b = 0; b < B; b++) e = e || sk_any_empty<W, VW>(y[b]);
                    return e;
                };
                if constexpr (NG <= 2 && B * VW * sizeof(W) <= 64) {
                    // A slot of one or two 16-byte groups (the double 1x1 tile): the next round
                    // is in flight while this one is checked, so a partial that lands is seen
                    // about half a round sooner. A round is one trip to L2, ~1 us while the other
                    // blocks still stream (H200, SK_TRACE). Only where the second set of loads
                    // costs at most 8 more registers: the complex double 1x1 tile spilled.
                    poll(x);
                    for (;;) {
                        W y[B][VW];
                        poll(y);
                        if (!waiting(x)) break;
                        poll(x);
                        if (!waiting(y)) {
#pragma unroll
                            for (int b = 0; b < B; b++)
#pragma unroll
                                for (int v = 0; v < VW; v++) x[b][v] = y[b][v];
                            break;
                        }
                    }
                } else {
                    do {
                        poll(x);
                    } while (waiting(x));
                }
#pragma unroll
                for (int b = 0; b < B; b++)
                    if (q0 + b * Q < G) {
#pragma unroll
                        for (int v = 0; v < VW; v++) s[v] = (q0 + b * Q == l) ? x[b][v] : s[v] + x[b][v];
                        sk_clear<W, VW>(src + (i64)(q0 + b * Q) * NW);
                    }
            }
        }
#ifdef SK_TRACE
        const long long tr_polled = clock64() - sk_tr()[0], tr_tpolled = sk_gt();
#endif
        // The group's lanes by the tree: through shared memory while they are in different
        // warps, then by shuffles (h and the pass count are the same for the whole block, so
        // every thread takes part in both).
        for (int h = Q / 2; h >= 1; h >>= 1) {
            const int d = h << lgw;
            if (d >= 32) {
#pragma unroll
                for (int v = 0; v < VW; v++) comb[v * NTH + tid] = s[v];
                __syncthreads();
                if (l < h) {
#pragma unroll
                    for (int v = 0; v < VW; v++) s[v] = s[v] + comb[v * NTH + tid + d];
                }
                __syncthreads();
            } else {
#pragma unroll
                for (int v = 0; v < VW; v++) s[v] = s[v] + __shfl_down_sync(0xffffffffu, s[v], d);
            }
        }
        // The pass's totals through red (this block's own partial is in its slot already), so
        // that every thread stores one output.
        if (l == 0 && g < NG) {
#pragma unroll
            for (int v = 0; v < VW; v++) red[g * VW + v] = s[v];
        }
        __syncthreads();
        const int o0 = ps * gpp * (VW / WPO);
        for (int o = o0 + tid; o < o0 + gpp * (VW / WPO) && o < NW / WPO; o += NTH) store(o, red + o * WPO);
#ifdef SK_TRACE
        if (tr_on && tid == 0)
            printf("TRR %lld %d %u %lld %lld %lld %lld %d %lld %lld\n", tile, blk, sk_smid(), sk_tr()[1], tr_part,
                   tr_polled, clock64() - sk_tr()[0], tr_polls, tr_tpolled, sk_gt());
#endif
    }
#ifdef SK_TRACE
    if (tile == 0 && r == 0 && tid == 0) atomicAdd(&sk_tr_calls, 1u);
#endif
}

// An output from its WPO words (sk_cross's store).
template <typename T, typename W> __device__ __forceinline__ T sk_of_words(const W* w) {
    T v;
    memcpy(&v, w, sizeof(T));
    return v;
}

template <typename T, bool AKC, bool BKC, int MT, int NT, int F, int U, bool VEC>
__device__ __forceinline__ void skm_stream(double (&acc)[MT][NT][skm_t<T>::ACC], const T* __restrict__ a, i64 lda,
                                           const T* __restrict__ b, i64 ldb, i64 m, i64 n, i64 i0, i64 j0, i64 k0,
                                           i64 kend, int w, int gi, int t, int cja, int cjb) {
    constexpr int E = skm_t<T>::E, KSS = 4 * E * F;
    const i64 nfull = (kend - k0) / KSS, nall = (kend - k0 + KSS - 1) / KSS;
    i64 j = w;
    for (; j + (U - 1) * SKM_WARPS < nfull; j += U * SKM_WARPS) {
        T x[U][MT][E], y[U][NT][E];
#pragma unroll
        for (int u = 0; u < U; u++) {
            const i64 kb = k0 + (j + u * SKM_WARPS) * KSS;
            skm_load<T, AKC, MT, F, VEC, false>(a, lda, m, i0, kb, kend, gi, t, x[u]);
            skm_load<T, BKC, NT, F, VEC, false>(b, ldb, n, j0, kb, kend, gi, t, y[u]);
        }
#pragma unroll
        for (int u = 0; u < U; u++) skm_mma<T, MT, NT>(acc, x[u], y[u], cja, cjb);
    }
    for (; j < nall; j += SKM_WARPS) {
        T x[MT][E], y[NT][E];
        const i64 kb = k0 + j * KSS;
        skm_load<T, AKC, MT, F, false, true>(a, lda, m, i0, kb, kend, gi, t, x);
        skm_load<T, BKC, NT, F, false, true>(b, ldb, n, j0, kb, kend, gi, t, y);
        skm_mma<T, MT, NT>(acc, x, y, cja, cjb);
    }
}

// Block (32, SKM_WARPS); grid (tiles, G): the tiles of one k-chunk are neighbours in launch
// order, so they run together and share their rows of A and B through L2. part: the stream's
// partial slots (SK_EMPTY).
template <typename T, bool AKC, bool BKC, int MT, int NT, int F, int U>
__device__ __forceinline__ void skm_body(SK_PARAMS(T), int cross) {
    constexpr int ACC = skm_t<T>::ACC, R = MT * NT * ACC, NTH = 32 * SKM_WARPS;
    constexpr int EDGE = F > 1 ? 8 / F : 8 * MT, NO = F > 1 ? EDGE * EDGE : 64 * MT * NT;
    // 16-byte aligned: the tile's outputs are kept in it as T (complex double included).
    __shared__ __align__(16) double red[(SKM_WARPS / 2) * R * 32];
    if (blockDim.x != 32 || blockDim.y != SKM_WARPS) sk_fail();
    SK_TR_START();
    const int lane = threadIdx.x, w = threadIdx.y, tid = w * 32 + lane, gi = lane >> 2, t = lane & 3;
    const i64 blk = blockIdx.y, tile = blockIdx.x;
    const i64 i0 = (tile % tiles_m) * EDGE, j0 = (tile / tiles_m) * (F > 1 ? EDGE : 8 * NT);
    const T al = scalar_arg(alpha, alpha_p);
    const T be = scalar_arg(beta, beta_p);
    if (is_zero(al)) {
        // A and B are not read; block 0 applies beta to its tile (the atomic path's scale kernel
        // did it already).
        if (blk == 0 && mode != SK_ATOMIC) {
            for (int o = tid; o < NO; o += NTH) {
                int row, col;
                skm_pos<T, AKC, BKC, MT, NT, F>(o, row, col);
                if (i0 + row < m && j0 + col < n) sk_scale(c + (i0 + row) + (j0 + col) * ldc, be);
            }
        }
        return;
    }
    double acc[MT][NT][ACC];
#pragma unroll
    for (int s = 0; s < MT; s++)
#pragma unroll
        for (int q = 0; q < NT; q++)
#pragma unroll
            for (int v = 0; v < ACC; v++) acc[s][q][v] = 0.0;
    const i64 k0 = blk * L, kend = (k - k0 < L) ? k : k0 + L;
    if (vec == 3) skm_stream<T, AKC, BKC, MT, NT, F, U, true>(acc, a, lda, b, ldb, m, n, i0, j0, k0, kend, w, gi, t, cja, cjb);
    else skm_stream<T, AKC, BKC, MT, NT, F, U, false>(acc, a, lda, b, ldb, m, n, i0, j0, k0, kend, w, gi, t, cja, cjb);

    // The block's warps, by a fixed tree; then the block's sum in red[0 .. R*32).
    double* accf = &acc[0][0][0];
#pragma unroll
    for (int h = SKM_WARPS / 2; h >= 1; h >>= 1) {
        if (w >= h && w < 2 * h) {
#pragma unroll
            for (int r = 0; r < R; r++) red[((w - h) * R + r) * 32 + lane] = accf[r];
        }
        __syncthreads();
        if (w < h) {
#pragma unroll
            for (int r = 0; r < R; r++) accf[r] += red[(w * R + r) * 32 + lane];
        }
        __syncthreads();
    }
    if (w == 0) {
#pragma unroll
        for (int r = 0; r < R; r++) red[r * 32 + lane] = accf[r];
    }
    __syncthreads();

    if (mode == SK_ATOMIC) {
        for (int o = tid; o < NO; o += NTH) {
            int row, col;
            const T v = skm_out<T, AKC, BKC, MT, NT, F>(red, o, row, col);
            if (i0 + row < m && j0 + col < n) atomic_add_t(c + (i0 + row) + (j0 + col) * ldc, al * v);
        }
        return;
    }
    // The tile's outputs, compact, after the block's sum: (SKM_WARPS/2)*R*32 >= 2*R*32 words,
    // and an output takes at most 32*R/NO (F = 1: exactly that) words.
    static_assert(NO * sizeof(T) <= R * 32 * sizeof(double) && SKM_WARPS >= 4, "outs fit in red");
    constexpr int NOW = NO * (int)(sizeof(T) / sizeof(double));
    T* outs = reinterpret_cast<T*>(red + R * 32);
    for (int o = tid; o < NO; o += NTH) {
        int row, col;
        outs[o] = skm_out<T, AKC, BKC, MT, NT, F>(red, o, row, col);
    }
    __syncthreads();
    // SK_STORE: C := alpha*sum + beta*C; SK_PART: the reducers do it for the outputs they add.
    const auto write = [&](int o, T v) {
        int row, col;
        skm_pos<T, AKC, BKC, MT, NT, F>(o, row, col);
        if (i0 + row < m && j0 + col < n) sk_update(c + (i0 + row) + (j0 + col) * ldc, al, be, v);
    };
    if (mode == SK_PART) {
        sk_cross<double, NOW, NTH, (int)(sizeof(T) / sizeof(double))>(
            red + R * 32, reinterpret_cast<double*>(part), (int)chunks, cross, tile, (int)blk, tid,
            [&](int o, const double* w) { write(o, sk_of_words<T>(w)); });
        return;
    }
    for (int o = tid; o < NO; o += NTH) write(o, outs[o]);
}
#endif

// ---- FFMA fragment kernels: split-k for float and complex float (any architecture) ----
//
// The same plan as the tensor-core kernels, on CUDA cores: operands go from global memory
// straight into registers with 16-byte loads (no shared memory on the operand path), and a block
// of SKM_WARPS warps per k-chunk ends in the same cross-block reduction (sk_cross).
//
// A warp holds a TM x TN output tile, cut into SG = (TM/RM)*(TN/RN) lane groups of RM x RN
// outputs; the KL = 32/SG lanes of a group (lane = group*KL + kl) take different k: one warp step
// covers KW = KL*V consecutive k (V = 16/sizeof(T) elements per 16 bytes), lane kl the V values
// from kb + kl*V. Per step a lane loads its RM rows of op(A) and RN columns of op(B) at those V
// k (k-contiguous operands: one 16-byte load per row; k-strided ones: one 16-byte load per V
// consecutive rows and k value) and does RM*RN*V FMAs. Lanes of different groups that need the
// same rows load the same addresses in the same instruction, which the memory system merges.
//
// Summation order (fixed by m, n, k and the configuration): each lane adds its steps in order
// (warp w: steps w, w + W, ...; within a step the V k values in order); the KL lanes of a group
// by a butterfly (xor 1, 2, .. : every lane ends with the same bits); the block's warps by the
// fixed tree of the tensor-core kernels; the blocks by sk_cross.
#ifndef SK_HOST_EMU
__device__ __forceinline__ float shfl_xor_t(float v, int d) { return __shfl_xor_sync(0xffffffffu, v, d); }
__device__ __forceinline__ cfloat shfl_xor_t(cfloat v, int d) {
    return cfloat{__shfl_xor_sync(0xffffffffu, v.x, d), __shfl_xor_sync(0xffffffffu, v.y, d)};
}

// 16 bytes read once (see skm_ld16), as V elements of T.
template <typename T> __device__ __forceinline__ void skf_ld16(const T* p, T (&out)[16 / sizeof(T)]) {
    float4 v;
    asm("ld.global.nc.L1::no_allocate.L2::256B.v4.f32 {%0, %1, %2, %3}, [%4];"
        : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
        : "l"(p));
    static_assert(sizeof(out) == sizeof(v), "16 bytes");
    memcpy(&out, &v, 16);
}

// This lane's values of one operand for its unit at kb: x[r][e] = op(X)(r0 + r, kb + e), e < V,
// zero past `rows` and (PRED) past kend, conjugated when cj. VEC: the base and leading dimension
// are 16-byte aligned (host check); kb and r0 are multiples of V by construction.
template <typename T, bool KC, int R, bool VEC, bool PRED>
__device__ __forceinline__ void skf_load(const T* __restrict__ g, i64 ld, i64 rows, i64 r0, i64 kb, i64 kend, int cj,
                                         T (&x)[R][16 / sizeof(T)]) {
    constexpr int V = 16 / (int)sizeof(T);
    if constexpr (KC) {
#pragma unroll
        for (int r = 0; r < R; r++) {
            const i64 row = r0 + r;
            if (VEC && !PRED) {
                if (row < rows) skf_ld16(g + row * ld + kb, x[r]);
                else
#pragma unroll
                    for (int e = 0; e < V; e++) x[r][e] = zero<T>();
            } else {
#pragma unroll
                for (int e = 0; e < V; e++)
                    x[r][e] = (row < rows && (!PRED || kb + e < kend)) ? g[row * ld + kb + e] : zero<T>();
            }
        }
    } else {
#pragma unroll
        for (int e = 0; e < V; e++) {
            const i64 p = kb + e;
            const bool kok = !PRED || p < kend;
#pragma unroll
            for (int rv = 0; rv < R; rv += V) {
                const i64 row = r0 + rv;
                if (R % V == 0 && VEC && kok && row + V <= rows) {
                    T u[V];
                    skf_ld16(g + row + p * ld, u);
#pragma unroll
                    for (int v = 0; v < V; v++)
                        if (rv + v < R) x[rv + v][e] = u[v];
                } else {
#pragma unroll
                    for (int v = 0; v < V; v++)
                        if (rv + v < R) x[rv + v][e] = (kok && row + v < rows) ? g[row + v + p * ld] : zero<T>();
                }
            }
        }
    }
    if constexpr (sizeof(T) == 8) {
        if (cj) {
#pragma unroll
            for (int r = 0; r < R; r++)
#pragma unroll
                for (int e = 0; e < V; e++) x[r][e] = conj_t(x[r][e]);
        }
    }
}

template <typename T, int RM, int RN>
__device__ __forceinline__ void skf_fma(T (&acc)[RM][RN], const T (&x)[RM][16 / sizeof(T)],
                                        const T (&y)[RN][16 / sizeof(T)]) {
#pragma unroll
    for (int e = 0; e < 16 / (int)sizeof(T); e++)
#pragma unroll
        for (int i = 0; i < RM; i++)
#pragma unroll
            for (int j = 0; j < RN; j++) acc[i][j] = fma_t(x[i][e], y[j][e], acc[i][j]);
}

// The FFMA kernels' SK_PART tail: sk_cross, the reducers writing C. Not inlined: inlined, the
// reduction's code changes how the compiler allocates the streaming loop's registers (it
// reloaded lda, ldb and the operand pointers from constant memory on every step; cgemm 32x32
// 23% slower).
template <typename T, int TM, int NW, int NTH>
__device__ __noinline__ void skf_part(T* red, T* part, int chunks, int cross, i64 tile, int blk, int tid,
                                      T* c, i64 ldc, i64 m, i64 n, i64 i0, i64 j0, T al, T be) {
    sk_cross<float, NW, NTH, (int)(sizeof(T) / sizeof(float))>(
        reinterpret_cast<float*>(red), reinterpret_cast<float*>(part), chunks, cross, tile, blk, tid,
        [&](int o, const float* w) {
            const i64 i = i0 + o % TM, j = j0 + o / TM;
            if (i < m && j < n) sk_update(c + i + j * ldc, al, be, sk_of_words<T>(w));
        });
}

// Block (32, SKM_WARPS); grid (tiles, G) as in skm_body.
template <typename T, bool AKC, bool BKC, int TM, int TN, int RM, int RN, int U>
__device__ __forceinline__ void skf_body(SK_PARAMS(T), int cross) {
    constexpr int V = 16 / (int)sizeof(T), GM = TM / RM, SG = GM * (TN / RN), KL = 32 / SG, KW = KL * V;
    constexpr int NTH = 32 * SKM_WARPS, NO = TM * TN, NW = NO * (int)(sizeof(T) / sizeof(float));
    static_assert(SG * KL == 32 && TM % RM == 0 && TN % RN == 0, "skf geometry");
    __shared__ T red[(SKM_WARPS / 2) * NO];
    if (blockDim.x != 32 || blockDim.y != SKM_WARPS) sk_fail();
    SK_TR_START();
    const int lane = threadIdx.x, w = threadIdx.y, tid = w * 32 + lane, grp = lane / KL, kl = lane % KL;
    const i64 blk = blockIdx.y, tile = blockIdx.x;
    const i64 i0 = (tile % tiles_m) * TM, j0 = (tile / tiles_m) * TN;
    const int ri = (grp % GM) * RM, cj0 = (grp / GM) * RN;  // the group's subtile in the warp tile
    const T al = scalar_arg(alpha, alpha_p);
    const T be = scalar_arg(beta, beta_p);
    if (is_zero(al)) {
        // A and B are not read; block 0 applies beta to its tile (the atomic path's scale kernel
        // did it already).
        if (blk == 0 && mode != SK_ATOMIC) {
            for (int o = tid; o < NO; o += NTH) {
                const i64 i = i0 + o % TM, j = j0 + o / TM;
                if (i < m && j < n) sk_scale(c + i + j * ldc, be);
            }
        }
        return;
    }
    T acc[RM][RN];
#pragma unroll
    for (int i = 0; i < RM; i++)
#pragma unroll
        for (int j = 0; j < RN; j++) acc[i][j] = zero<T>();
    const i64 k0 = blk * L, kend = (k - k0 < L) ? k : k0 + L;
    const i64 nfull = (kend - k0) / KW, nall = (kend - k0 + KW - 1) / KW;
    const i64 ra = i0 + ri, rb = j0 + cj0;
    i64 s = w;
    if (vec == 3) {
        for (; s + (U - 1) * SKM_WARPS < nfull; s += U * SKM_WARPS) {
            T x[U][RM][V], y[U][RN][V];
#pragma unroll
            for (int u = 0; u < U; u++) {
                const i64 kb = k0 + (s + u * SKM_WARPS) * KW + kl * V;
                skf_load<T, AKC, RM, true, false>(a, lda, m, ra, kb, kend, cja, x[u]);
                skf_load<T, BKC, RN, true, false>(b, ldb, n, rb, kb, kend, cjb, y[u]);
            }
#pragma unroll
            for (int u = 0; u < U; u++) skf_fma<T, RM, RN>(acc, x[u], y[u]);
        }
    }
    for (; s < nall; s += SKM_WARPS) {
        T x[RM][V], y[RN][V];
        const i64 kb = k0 + s * KW + kl * V;
        skf_load<T, AKC, RM, false, true>(a, lda, m, ra, kb, kend, cja, x);
        skf_load<T, BKC, RN, false, true>(b, ldb, n, rb, kb, kend, cjb, y);
        skf_fma<T, RM, RN>(acc, x, y);
    }
    // The group's KL lanes: a butterfly, identical bits in every lane.
#pragma unroll
    for (int d = 1; d < KL; d <<= 1)
#pragma unroll
        for (int i = 0; i < RM; i++)
#pragma unroll
            for (int j = 0; j < RN; j++) acc[i][j] = acc[i][j] + shfl_xor_t(acc[i][j], d);
    // The block's warps, by the fixed tree (w += w + h for h = W/2, ..., 1); then the block's
    // sum in red[0 .. NO), output o = row + col*TM of the tile.
#pragma unroll
    for (int h = SKM_WARPS / 2; h >= 1; h >>= 1) {
        if (w >= h && w < 2 * h && kl == 0) {
#pragma unroll
            for (int i = 0; i < RM; i++)
#pragma unroll
                for (int j = 0; j < RN; j++) red[(w - h) * NO + (ri + i) + (cj0 + j) * TM] = acc[i][j];
        }
        __syncthreads();
        if (w < h) {
#pragma unroll
            for (int i = 0; i < RM; i++)
#pragma unroll
                for (int j = 0; j < RN; j++) acc[i][j] = acc[i][j] + red[w * NO + (ri + i) + (cj0 + j) * TM];
        }
        __syncthreads();
    }
    if (w == 0 && kl == 0) {
#pragma unroll
        for (int i = 0; i < RM; i++)
#pragma unroll
            for (int j = 0; j < RN; j++) red[(ri + i) + (cj0 + j) * TM] = acc[i][j];
    }
    __syncthreads();

    if (mode == SK_ATOMIC) {
        for (int o = tid; o < NO; o += NTH) {
            const i64 i = i0 + o % TM, j = j0 + o / TM;
            if (i < m && j < n) atomic_add_t(c + i + j * ldc, al * red[o]);
        }
        return;
    }
    if (mode == SK_PART) {
        skf_part<T, TM, NW, NTH>(red, part, (int)chunks, cross, tile, (int)blk, tid, c, ldc, m, n, i0, j0, al, be);
        return;
    }
    for (int o = tid; o < NO; o += NTH) {
        const i64 i = i0 + o % TM, j = j0 + o / TM;
        if (i < m && j < n) sk_update(c + i + j * ldc, al, be, red[o]);
    }
}
#endif

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

// The reduction of the chunk partials and C := beta*C: in every unit of a precision (a call of
// any configuration may need them).
#define SK_AUX(P, T)                                                                                              \
    extern "C" __global__ void P##gemm_sk_reduce(i64 m, i64 n, i64 G, T alpha, const T* alpha_p, T beta,         \
                                                 const T* beta_p, const T* part, T* c, i64 ldc) {                 \
        sk_reduce_body<T>(m, n, G, alpha, alpha_p, beta, beta_p, part, c, ldc);                                   \
    }                                                                                                             \
    extern "C" __global__ void P##gemm_sk_scale(i64 m, i64 n, T beta, const T* beta_p, T* c, i64 ldc) {           \
        sk_scale_body<T>(m, n, beta, beta_p, c, ldc);                                                             \
    }

// Fragment kernels: P gemm_skm<edge>_<layout>, edge = 8*MT (MT = NT), or with a fold F
// (one subtile) edge = 8/F.
// MINB: blocks per SM the registers must allow (2 for all but the 32x32 tile, whose
// accumulators and loads need more than 128 registers; the host caps its chunks to match).
#define SKM_ENTRY(P, T, EDGE, MT, F, U, MINB, SFX, AKC, BKC)                                                    \
    extern "C" __global__ void __launch_bounds__(32 * SKM_WARPS, MINB) P##gemm_skm##EDGE##_##SFX(SK_PARAMS(T), \
                                                                                                 int cross) { \
        skm_body<T, AKC, BKC, MT, MT, F, U>(SK_ARGS, cross);                                                   \
    }
#define SKM1(P, T, SFX, AKC, BKC) SKM_ENTRY(P, T, 1, 1, 8, 8, 2, SFX, AKC, BKC)
#define SKM4(P, T, SFX, AKC, BKC) SKM_ENTRY(P, T, 4, 1, 2, 8, 2, SFX, AKC, BKC)
#define SKM8(P, T, SFX, AKC, BKC) SKM_ENTRY(P, T, 8, 1, 1, 8, 2, SFX, AKC, BKC)
#define SKM16(P, T, SFX, AKC, BKC) SKM_ENTRY(P, T, 16, 2, 1, 4, 2, SFX, AKC, BKC)
#define SKM16Z(P, T, SFX, AKC, BKC) SKM_ENTRY(P, T, 16, 2, 1, 2, 2, SFX, AKC, BKC)
#define SKM32(P, T, SFX, AKC, BKC) SKM_ENTRY(P, T, 32, 4, 1, 2, 1, SFX, AKC, BKC)

// FFMA fragment kernels: P gemm_skf<edge>_<layout> (warp tile edge x edge, lane subtile RM x RN,
// U steps in flight).
#define SKF_ENTRY(P, T, EDGE, RM, RN, U, SFX, AKC, BKC)                                                      \
    extern "C" __global__ void __launch_bounds__(32 * SKM_WARPS, 2) P##gemm_skf##EDGE##_##SFX(SK_PARAMS(T), \
                                                                                           int cross) { \
        skf_body<T, AKC, BKC, EDGE, EDGE, RM, RN, U>(SK_ARGS, cross);                                     \
    }
// Every configuration fits 2 blocks of 8 warps per SM (at most 128 registers): the kernels are
// bound by loads in flight, not by FMAs.
#define SKF2S(P, T, SFX, AKC, BKC) SKF_ENTRY(P, T, 2, 2, 2, 6, SFX, AKC, BKC)
#define SKF2C(P, T, SFX, AKC, BKC) SKF_ENTRY(P, T, 2, 2, 2, 4, SFX, AKC, BKC)
#define SKF4(P, T, SFX, AKC, BKC) SKF_ENTRY(P, T, 4, 4, 4, 2, SFX, AKC, BKC)
#define SKF8(P, T, SFX, AKC, BKC) SKF_ENTRY(P, T, 8, 4, 4, 2, SFX, AKC, BKC)
#define SKF16(P, T, SFX, AKC, BKC) SKF_ENTRY(P, T, 16, 4, 4, 2, SFX, AKC, BKC)

// ---- Entry points: one precision and one kernel configuration per compile unit ----
//
// HB_PREC / HB_VARIANT: kernels/common.cuh. A unit holds one configuration's four layouts and
// the precision's SK_AUX kernels; src/gpu/kernels.rs names the units (`splitk_d_skm16`) and the
// host (src/gpu/splitk.rs) asks for the unit of the configuration it runs. The fragment kernels
// have no emulator build (SK_HOST_EMU); the FP64 tensor-core ones need sm_80.
#ifndef SK_HOST_EMU
#define SK_FFMA_OK 1
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
#define SK_DMMA_OK 1
#endif
#endif

#if HB_PREC(s)
SK_AUX(s, float)
#if HB_VARIANT(gemm_sk_direct)
SK_LAYOUTS(s, float, SK_DIRECT_ENTRY)
#endif
#if HB_VARIANT(gemm_sk16)
SK_LAYOUTS(s, float, SK_T16)
#endif
#if HB_VARIANT(gemm_sk32)
SK_LAYOUTS(s, float, SK_T32)
#endif
#if HB_VARIANT(gemm_sk64)
SK_LAYOUTS(s, float, SK_T64)
#endif
#if HB_VARIANT(gemm_skf2) && SK_FFMA_OK
SK_LAYOUTS(s, float, SKF2S)
#endif
#if HB_VARIANT(gemm_skf4) && SK_FFMA_OK
SK_LAYOUTS(s, float, SKF4)
#endif
#if HB_VARIANT(gemm_skf8) && SK_FFMA_OK
SK_LAYOUTS(s, float, SKF8)
#endif
#if HB_VARIANT(gemm_skf16) && SK_FFMA_OK
SK_LAYOUTS(s, float, SKF16)
#endif
#endif

#if HB_PREC(d)
SK_AUX(d, double)
#if HB_VARIANT(gemm_sk_direct)
SK_LAYOUTS(d, double, SK_DIRECT_ENTRY)
#endif
#if HB_VARIANT(gemm_sk16)
SK_LAYOUTS(d, double, SK_T16)
#endif
#if HB_VARIANT(gemm_sk32)
SK_LAYOUTS(d, double, SK_T32)
#endif
#if HB_VARIANT(gemm_sk64)
SK_LAYOUTS(d, double, SK_T64)
#endif
#if HB_VARIANT(gemm_sk32m)
SK_LAYOUTS(d, double, SK_T32M)
#endif
#if HB_VARIANT(gemm_sk64m)
SK_LAYOUTS(d, double, SK_T64M)
#endif
#if HB_VARIANT(gemm_skm1) && SK_DMMA_OK
SK_LAYOUTS(d, double, SKM1)
#endif
#if HB_VARIANT(gemm_skm4) && SK_DMMA_OK
SK_LAYOUTS(d, double, SKM4)
#endif
#if HB_VARIANT(gemm_skm8) && SK_DMMA_OK
SK_LAYOUTS(d, double, SKM8)
#endif
#if HB_VARIANT(gemm_skm16) && SK_DMMA_OK
SK_LAYOUTS(d, double, SKM16)
#endif
#if HB_VARIANT(gemm_skm32) && SK_DMMA_OK
SK_LAYOUTS(d, double, SKM32)
#endif
#endif

#if HB_PREC(c)
SK_AUX(c, cfloat)
#if HB_VARIANT(gemm_sk_direct)
SK_LAYOUTS(c, cfloat, SK_DIRECT_ENTRY)
#endif
#if HB_VARIANT(gemm_sk16)
SK_LAYOUTS(c, cfloat, SK_T16)
#endif
#if HB_VARIANT(gemm_sk32)
SK_LAYOUTS(c, cfloat, SK_T32)
#endif
#if HB_VARIANT(gemm_sk64)
SK_LAYOUTS(c, cfloat, SK_T64)
#endif
#if HB_VARIANT(gemm_skf2) && SK_FFMA_OK
SK_LAYOUTS(c, cfloat, SKF2C)
#endif
#if HB_VARIANT(gemm_skf4) && SK_FFMA_OK
SK_LAYOUTS(c, cfloat, SKF4)
#endif
#if HB_VARIANT(gemm_skf8) && SK_FFMA_OK
SK_LAYOUTS(c, cfloat, SKF8)
#endif
#if HB_VARIANT(gemm_skf16) && SK_FFMA_OK
SK_LAYOUTS(c, cfloat, SKF16)
#endif
#endif

#if HB_PREC(z)
SK_AUX(z, cdouble)
#if HB_VARIANT(gemm_sk_direct)
SK_LAYOUTS(z, cdouble, SK_DIRECT_ENTRY)
#endif
#if HB_VARIANT(gemm_sk16)
SK_LAYOUTS(z, cdouble, SK_T16)
#endif
#if HB_VARIANT(gemm_sk32)
SK_LAYOUTS(z, cdouble, SK_T32)
#endif
#if HB_VARIANT(gemm_sk64)
SK_LAYOUTS(z, cdouble, SK_T64)
#endif
#if HB_VARIANT(gemm_skm1) && SK_DMMA_OK
SK_LAYOUTS(z, cdouble, SKM1)
#endif
#if HB_VARIANT(gemm_skm4) && SK_DMMA_OK
SK_LAYOUTS(z, cdouble, SKM4)
#endif
#if HB_VARIANT(gemm_skm8) && SK_DMMA_OK
SK_LAYOUTS(z, cdouble, SKM8)
#endif
#if HB_VARIANT(gemm_skm16) && SK_DMMA_OK
SK_LAYOUTS(z, cdouble, SKM16Z)
#endif
#endif
