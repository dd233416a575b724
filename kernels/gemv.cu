// GEMV (N, T, C) and GER (u, c).
//
// Summation orders are fixed by the problem and the device's SM count only (the host picks the
// row segments of GEMV-T and the column panels of GEMV-N from m, n and the SM count), never by
// the block shape, the grid size or the alignment of the data: results are bitwise identical
// across shapes and runs, and between the 16-byte and the element-wise paths.
//
// - GEMV-T/C (y_j = sum_i op(A[i,j]) x_i): column j is cut into S segments of L rows (L a
//   multiple of 32*V*UNROLL, V = 16 / sizeof(T) elements per 16-byte unit). Inside a segment,
//   unit u (rows u*V .. u*V+V-1 from the segment start) belongs to lane u % 32, and its element
//   k to the lane's accumulator k; a lane adds its units trip by trip (32*UNROLL units a
//   trip) starting at trip t % trips of task t and wrapping around (`stagger`, else from
//   trip 0), then the units past the last whole trip in order, then sums its V accumulators
//   left to right, and the warp adds the lanes with warp_sum. One segment writes
//   y directly; more write a partial each and gemv_fin_t adds them (lane-strided, then
//   warp_sum) before alpha and beta are applied.
// - GEMV-N (y_i = sum_j A[i,j] x_j): the columns are cut into KS panels of 16 sub-panels of Lq
//   columns. A sub-panel's partial of row i is a sequential fused sum over its columns; the 16
//   partials of a panel are added by the balanced pairwise tree (left + right at every node).
//   Ty threads (a power of two <= 16) share a panel: thread ty takes the 16/Ty consecutive
//   sub-panels that form one subtree, builds it in registers, and the Ty subtrees are joined
//   in shared memory by the upper levels of the same tree. One panel writes y directly; more
//   write a partial each and gemv_fin_n adds them in panel order. Where whole rows fill the GPU
//   in one wave, gemv_n_rows does GEMV-N in one pass instead (its own order, below).
// - GER: elementwise (A(i,j) += x_i * alpha*y_j), deterministic by construction.
//
// GEMV kernels are persistent: the host launches at most one wave (from the occupancy of the
// chosen shape) and every warp (GEMV-T) or block (GEMV-N) takes a contiguous, balanced run of
// tasks, so no partial last wave leaves the device half idle.
//
// Scalars follow the reference: beta == 0 assigns (NaN in y is cleared), alpha == 0 reads
// neither A nor x, alpha == 0 with beta == 1 writes nothing; A outside its m x n block and the
// gaps of strided vectors are never touched.

#ifndef GEMV_T_UNROLL
#define GEMV_T_UNROLL 4  // 16-byte units of A (and x) in flight per lane; the host's T_UNROLL
#endif
// GEMV-N: columns in flight per thread, whether A takes the read-only, L1-bypassing path
// (ld_stream16), and whether addresses advance by lda per column (walk) or are offsets of the
// sub-panel start. Complex double differs: on an H200 (scripts/gpu-ab.sh, 10 sizes 2048..10240
// against the build before) 4 columns, bypassing loads and walking addresses took ZGEMV-N 2048
// from 28.2 to 23.0 us and 8448 from 287 to 258 us; the same for s and d lost as much as it won.
template <typename T> struct gemv_n_cfg {
    static constexpr int unroll = 8;
    static constexpr bool nc = false, walk = false;
};
template <> struct gemv_n_cfg<cdouble> {
    static constexpr int unroll = 4;
    static constexpr bool nc = true, walk = true;
};
#define GER_COLS 4       // columns per thread in GER

template <typename T> struct __align__(16) gvec { T v[16 / sizeof(T)]; };
template <typename T, int N> struct tvec { T v[N]; };

template <typename T> __device__ __forceinline__ T op_t(T a, int conj) { return conj ? conj_t(a) : a; }

// y := beta*y + alpha*sum as the reference forms it (beta*y first, then the product added),
// beta == 0 assigning; without a sum (alpha == 0) y is only scaled, and left alone for beta == 1.
template <typename T> __device__ __forceinline__ void gemv_store(T al, T be, T sum, bool has_sum, T* yp) {
    if (!has_sum && is_one(be)) return;
    T r = zero<T>();
    if (!is_zero(be)) r = is_one(be) ? *yp : be * *yp;
    if (has_sum) r = fma_t(al, sum, r);
    *yp = r;
}

// Contiguous run [t0, t1) of `tasks` tasks for worker w of `workers`: the first tasks % workers
// workers take one more.
__device__ __forceinline__ void task_range(i64 tasks, i64 workers, i64 w, i64& t0, i64& t1) {
    const i64 q = tasks / workers, r = tasks % workers;
    t0 = w * q + (w < r ? w : r);
    t1 = t0 + q + (w < r ? 1 : 0);
}

// ---- GEMV-T/C ----

template <typename T, bool VA> __device__ __forceinline__ gvec<T> load_a_unit(const T* p) {
    if (VA) return *reinterpret_cast<const gvec<T>*>(p);
    gvec<T> r;
#pragma unroll
    for (int k = 0; k < 16 / (int)sizeof(T); k++) r.v[k] = p[k];
    return r;
}

template <typename T, bool VX> __device__ __forceinline__ gvec<T> load_x_unit(const T* x, i64 i, i64 len, i64 inc) {
    if (VX) return *reinterpret_cast<const gvec<T>*>(x + i);
    gvec<T> r;
#pragma unroll
    for (int k = 0; k < 16 / (int)sizeof(T); k++) r.v[k] = x[vidx(i + k, len, inc)];
    return r;
}

// Block (32, Ty), grid ceil(warps / Ty). VA: A and lda 16-byte aligned; VX: x contiguous and
// 16-byte aligned. S segments of L rows; `warps` persistent warps; `part` holds S partials per
// column (j*S + s) when S > 1.
template <typename T, bool VA, bool VX>
__device__ __forceinline__ void gemv_t_body(i64 m, i64 n, T alpha, const T* alpha_p, T beta, const T* beta_p,
                                            const T* __restrict__ a, i64 lda, const T* __restrict__ x, i64 incx,
                                            T* y, i64 incy, int conj, i64 S, i64 L, i64 warps, T* part,
                                            int stagger) {
    constexpr int V = 16 / sizeof(T);
    constexpr int U = GEMV_T_UNROLL;
    const i64 w = (i64)blockIdx.x * blockDim.y + threadIdx.y;
    if (w >= warps) return;  // whole warps leave: the shuffles below see all 32 lanes
    const int lane = threadIdx.x;
    const T al = scalar_arg(alpha, alpha_p);
    i64 t0, t1;
    task_range(n * S, warps, w, t0, t1);
    if (is_zero(al)) {
        // A and x are not read. With one segment this kernel owns y; else gemv_fin_t scales it.
        if (S == 1 && lane == 0) {
            const T be = scalar_arg(beta, beta_p);
            for (i64 t = t0; t < t1; t++) gemv_store(al, be, zero<T>(), false, y + vidx(t, n, incy));
        }
        return;
    }
    for (i64 t = t0; t < t1; t++) {
        const i64 j = t / S, s = t - j * S;
        const i64 r0 = s * L;
        const i64 len = (m - r0 < L) ? m - r0 : L;
        const T* col = a + j * lda + r0;
        T acc[V];
#pragma unroll
        for (int k = 0; k < V; k++) acc[k] = zero<T>();
        const i64 nu = len / V;  // whole units in the segment
        // Whole trips of 32*U units. With `stagger`, task t walks its trips starting at trip
        // t % trips and wraps around: tasks that run at the same time then read different
        // offsets of their columns, instead of addresses a multiple of lda apart, which a
        // power-of-two lda maps onto the same memory channels. The order depends on (t, m,
        // segment length) only, so it is still fixed.
        const i64 trips = nu / (32 * U);
        const i64 rot = (stagger && trips > 1) ? t % trips : 0;
        for (i64 k = 0; k < trips; k++) {
            i64 kk = k + rot;
            if (kk >= trips) kk -= trips;
            const i64 u = kk * 32 * U + lane;
            gvec<T> av[U], xv[U];
#pragma unroll
            for (int p = 0; p < U; p++) {
                av[p] = load_a_unit<T, VA>(col + (u + 32 * p) * V);
                xv[p] = load_x_unit<T, VX>(x, r0 + (u + 32 * p) * V, m, incx);
            }
#pragma unroll
            for (int p = 0; p < U; p++)
#pragma unroll
                for (int k = 0; k < V; k++) acc[k] = fma_t(op_t(av[p].v[k], conj), xv[p].v[k], acc[k]);
        }
        for (i64 u = trips * 32 * U + lane; u < nu; u += 32) {
            const gvec<T> av = load_a_unit<T, VA>(col + u * V);
            const gvec<T> xv = load_x_unit<T, VX>(x, r0 + u * V, m, incx);
#pragma unroll
            for (int k = 0; k < V; k++) acc[k] = fma_t(op_t(av.v[k], conj), xv.v[k], acc[k]);
        }
        // The partial last unit of the column (only the last segment has one).
        const int tail = (int)(len - nu * V);
        if (tail > 0 && lane == (int)(nu % 32)) {
#pragma unroll
            for (int k = 0; k < V; k++)
                if (k < tail) acc[k] = fma_t(op_t(col[nu * V + k], conj), x[vidx(r0 + nu * V + k, m, incx)], acc[k]);
        }
        T sum = acc[0];
#pragma unroll
        for (int k = 1; k < V; k++) sum = sum + acc[k];
        sum = warp_sum(sum);
        if (lane == 0) {
            if (S == 1) gemv_store(al, scalar_arg(beta, beta_p), sum, true, y + vidx(j, n, incy));
            else part[j * S + s] = sum;
        }
    }
}

// y_j := beta*y_j + alpha * (sum of the S partials of column j): one warp per output, block
// (32, Ty). Lane l adds partials l, l+32, ... in order, then warp_sum.
template <typename T>
__device__ __forceinline__ void gemv_fin_t_body(i64 n, i64 S, T alpha, const T* alpha_p, T beta, const T* beta_p,
                                                const T* part, T* y, i64 incy) {
    pdl_wait();  // gemv_t (launched just before) writes part
    const i64 j = (i64)blockIdx.x * blockDim.y + threadIdx.y;
    if (j >= n) return;
    const int lane = threadIdx.x;
    const T al = scalar_arg(alpha, alpha_p), be = scalar_arg(beta, beta_p);
    if (is_zero(al)) {
        if (lane == 0) gemv_store(al, be, zero<T>(), false, y + vidx(j, n, incy));
        return;
    }
    T acc = zero<T>();
    for (i64 s = lane; s < S; s += 32) acc = acc + part[j * S + s];
    acc = warp_sum(acc);
    if (lane == 0) gemv_store(al, be, acc, true, y + vidx(j, n, incy));
}

// ---- GEMV-N ----

// RV rows r .. r+RV-1 of one column (p points at row r): one 16-byte load when VA and the
// rows are all inside the matrix, else element loads of the rows < m (zero beyond). NC: the
// matrix is only read by this kernel (GEMV, not GER), so the load may take ld_stream16.
template <typename T, int RV, bool VA, bool NC = false>
__device__ __forceinline__ tvec<T, RV> load_rows(const T* p, i64 r, i64 m) {
    tvec<T, RV> v;
    if (VA && r + RV <= m) {
        const gvec<T> g = NC ? ld_stream16<gvec<T>>(p) : *reinterpret_cast<const gvec<T>*>(p);
#pragma unroll
        for (int e = 0; e < RV; e++) v.v[e] = g.v[e];
    } else {
#pragma unroll
        for (int e = 0; e < RV; e++) v.v[e] = (r + e < m) ? p[e] : zero<T>();
    }
    return v;
}

template <typename T, int RV, bool VA>
__device__ __forceinline__ void store_rows(T* p, i64 r, i64 m, const tvec<T, RV>& v) {
    if (VA && r + RV <= m) {
        gvec<T> g;
#pragma unroll
        for (int e = 0; e < RV; e++) g.v[e] = v.v[e];
        *reinterpret_cast<gvec<T>*>(p) = g;
    } else {
#pragma unroll
        for (int e = 0; e < RV; e++)
            if (r + e < m) p[e] = v.v[e];
    }
}

// Block (Tx, Ty), Ty a power of two <= 16; each thread RV consecutive rows (RV = V on the
// aligned path, 1 otherwise: the row-to-thread map does not change any sum). Tasks are
// (panel k, row block rb) with rbs row blocks of Tx*RV rows; gridDim.x persistent blocks.
// Dynamic shared memory: Ty * RV * Tx elements when Ty > 1. `part` holds KS partials per row
// (k*m + i) when KS > 1.
template <typename T, int RV, bool VA>
__device__ __forceinline__ void gemv_n_body(i64 m, i64 n, T alpha, const T* alpha_p, T beta, const T* beta_p,
                                            const T* __restrict__ a, i64 lda, const T* __restrict__ x, i64 incx,
                                            T* y, i64 incy, i64 KS, i64 Lq, i64 rbs, T* part) {
    extern __shared__ __align__(16) unsigned char gemv_smem[];
    T* red = reinterpret_cast<T*>(gemv_smem);
    const int tx = threadIdx.x, ty = threadIdx.y, Tx = blockDim.x, Ty = blockDim.y;
    const int R = 16 / Ty;  // sub-panels per thread
    const T al = scalar_arg(alpha, alpha_p);
    i64 t0, t1;
    task_range(rbs * KS, gridDim.x, blockIdx.x, t0, t1);
    if (is_zero(al)) {
        // Uniform over the block, so no thread is left waiting at a barrier.
        if (KS == 1 && ty == 0) {
            const T be = scalar_arg(beta, beta_p);
            for (i64 t = t0; t < t1; t++) {
                const i64 r = (t * Tx + tx) * RV;
                for (int e = 0; e < RV; e++)
                    if (r + e < m) gemv_store(al, be, zero<T>(), false, y + vidx(r + e, m, incy));
            }
        }
        return;
    }
    for (i64 t = t0; t < t1; t++) {
        const i64 k = t / rbs, rb = t - k * rbs;
        const i64 r = (rb * Tx + tx) * RV;
        const i64 c0 = k * 16 * Lq;
        const i64 c1 = (n - c0 < 16 * Lq) ? n : c0 + 16 * Lq;
        T cur[RV], stk[4][RV];
#pragma unroll
        for (int e = 0; e < RV; e++) cur[e] = zero<T>();
        if (r < m) {
            const T* ar = a + r;
            for (int i = 0; i < R; i++) {
                const i64 cb = c0 + (i64)(ty * R + i) * Lq;
                const i64 ce = (c1 - cb < Lq) ? c1 : cb + Lq;  // empty past the last column
                T acc[RV];
#pragma unroll
                for (int e = 0; e < RV; e++) acc[e] = zero<T>();
                constexpr int U = gemv_n_cfg<T>::unroll;
                constexpr bool NC = gemv_n_cfg<T>::nc, WALK = gemv_n_cfg<T>::walk;
                i64 j = cb;
                // Walking: vidx(j+1) - vidx(j) = incx for either sign.
                const T* ap = ar + cb * lda;
                const T* xp = x + vidx(cb, n, incx);
                for (; j + U <= ce; j += U) {
                    tvec<T, RV> av[U];
                    T xv[U];
#pragma unroll
                    for (int c = 0; c < U; c++) {
                        if (WALK) {
                            av[c] = load_rows<T, RV, VA, NC>(ap, r, m);
                            xv[c] = *xp;
                            ap += lda;
                            xp += incx;
                        } else {
                            av[c] = load_rows<T, RV, VA, NC>(ar + (j + c) * lda, r, m);
                            xv[c] = x[vidx(j + c, n, incx)];
                        }
                    }
#pragma unroll
                    for (int c = 0; c < U; c++)
#pragma unroll
                        for (int e = 0; e < RV; e++) acc[e] = fma_t(av[c].v[e], xv[c], acc[e]);
                }
                for (; j < ce; j++) {
                    const tvec<T, RV> av = load_rows<T, RV, VA, NC>(WALK ? ap : ar + j * lda, r, m);
                    const T xv = WALK ? *xp : x[vidx(j, n, incx)];
                    ap += lda;
                    xp += incx;
#pragma unroll
                    for (int e = 0; e < RV; e++) acc[e] = fma_t(av.v[e], xv, acc[e]);
                }
                // Binary-counter merge: leaf i joins the pending left subtrees of its trailing
                // one bits (left + right), then waits at the first zero bit. After the last
                // leaf (R a power of two) `cur` holds this thread's whole subtree.
#pragma unroll
                for (int e = 0; e < RV; e++) cur[e] = acc[e];
bool carry = true;
#pragma unroll
                for (int lv = 0; lv < 4; lv++) {
                    if (carry && ((i >> lv) & 1)) {
#pragma unroll
                        for (int e = 0; e < RV; e++) cur[e] = stk[lv][e] + cur[e];
                    } else if (carry) {
#pragma unroll
                        for (int e = 0; e < RV; e++) stk[lv][e] = cur[e];
                        carry = false;
                    }
                }
            }
        }
        if (Ty > 1) {
            // Upper levels of the tree across the Ty threads of a row (planes per element so
            // that consecutive tx hit consecutive banks).
#pragma unroll
            for (int e = 0; e < RV; e++) red[(ty * RV + e) * Tx + tx] = cur[e];
            __syncthreads();
            for (int s = 1; s < Ty; s <<= 1) {
                if ((ty & (2 * s - 1)) == 0) {
#pragma unroll
                    for (int e = 0; e < RV; e++)
                        red[(ty * RV + e) * Tx + tx] = red[(ty * RV + e) * Tx + tx] + red[((ty + s) * RV + e) * Tx + tx];
                }
                __syncthreads();
            }
            // Only thread ty == 0 reads row 0 of `red`, and only it writes there: the next
            // task's writes by other threads cannot race with this read.
            if (ty == 0) {
#pragma unroll
                for (int e = 0; e < RV; e++) cur[e] = red[e * Tx + tx];
            }
        }
        if (ty == 0 && r < m) {
            if (KS == 1) {
                const T be = scalar_arg(beta, beta_p);
#pragma unroll
                for (int e = 0; e < RV; e++)
                    if (r + e < m) gemv_store(al, be, cur[e], true, y + vidx(r + e, m, incy));
            } else {
#pragma unroll
                for (int e = 0; e < RV; e++)
                    if (r + e < m) part[k * m + r + e] = cur[e];
            }
        }
    }
}

// ---- GEMV-N in one pass (whole rows per block) ----
//
// Block of GEMV_ROWS_THREADS = 512 threads owning R = 8*V consecutive rows (V = 16/sizeof(T)) and
// every column: 8 lanes cover the R rows of a column with 16-byte loads (128 bytes), and the 64
// column lanes take columns cl, cl+64, cl+128, ... So no partial sum leaves the block and no
// second pass runs: cuBLAS's own GEMV-N kernels have this shape (120-352 blocks of 128-512
// threads), and on an H200 it took DGEMV-N 5120 from 64.7 to 51.6 us, ZGEMV-N 5888 from 144.1
// to 127.3 us and SGEMV-N 8448 from 77.2 to 69.6 us against the panel kernel above (session 9,
// lab/gemv_fullrow.cu; the final level12 sweeps).
// Summation order of row i: lane cl adds a_ij*x_j over its columns in increasing j (fused
// multiply-adds from zero), then the 64 lane sums are added by the pairwise tree
// (c += c+32, c += c+16, ..., c += c+1): fixed by n alone, the same for the 16-byte and the
// element loads. The host picks this kernel (and the lanes per column) from (m, the device's
// SM count and threads per SM) only.
// Complex double also has a 16-lane variant (gemv_n_rows16: 16 rows a block, 32 column lanes,
// the same tree over 32), which halves the blocks so that m up to twice as large still fits
// one wave; on an H200 (lab) it ran ZGEMV-N as fast as the 8-lane kernel (4096: 64.6 against
// 64.9 us; 5888: 126.5 against 126.9, cuBLAS 126.5), where s and d lost 10-25% with it.
#define GEMV_ROWS_THREADS 512
template <typename T> struct gemv_rows_cfg {
    static constexpr int unroll = 4;  // columns in flight per lane (lab: best for s, d, c)
};
template <> struct gemv_rows_cfg<cdouble> {
    static constexpr int unroll = 8;
};

// LPC: lanes per column (8, or 16 for gemv_n_rows16); GEMV_ROWS_THREADS / LPC column lanes.
template <typename T, bool VA, int LPC>
__device__ __forceinline__ void gemv_n_rows_body(i64 m, i64 n, T alpha, const T* alpha_p, T beta, const T* beta_p,
                                                 const T* __restrict__ a, i64 lda, const T* __restrict__ x, i64 incx,
                                                 T* y, i64 incy) {
    constexpr int V = 16 / sizeof(T);
    constexpr int R = LPC * V;
    constexpr int U = gemv_rows_cfg<T>::unroll;
    constexpr i64 CL = GEMV_ROWS_THREADS / LPC;  // column lanes
    __shared__ T red[CL][R + 1];
    const int tid = threadIdx.x;
    const int cl = tid / LPC;
    const int rr = (tid % LPC) * V;
    const i64 r0 = (i64)blockIdx.x * R;
    const i64 i0 = r0 + rr;
    const T al = scalar_arg(alpha, alpha_p);
    if (is_zero(al)) {
        // A and x are not read (uniform over the block: no barrier is skipped by a part of it).
        if (tid < R && r0 + tid < m) gemv_store(al, scalar_arg(beta, beta_p), zero<T>(), false, y + vidx(r0 + tid, m, incy));
        return;
    }
    T acc[V];
#pragma unroll
    for (int e = 0; e < V; e++) acc[e] = zero<T>();
    if (i0 < m && cl < n) {
        if (VA && i0 + V <= m && incx == 1) {
            // The common case, kept lean (32 registers: four 512-thread blocks per SM): x
            // indexed from one base with constant offsets.
            const T* ap = a + i0 + cl * lda;
            const T* xc = x + cl;
            const i64 astep = CL * lda;
            i64 j = cl;
            for (; j + CL * (U - 1) < n; j += CL * U) {
                gvec<T> av[U];
                T xv[U];
#pragma unroll
                for (int u = 0; u < U; u++) {
                    av[u] = ld_stream16<gvec<T>>(ap + u * astep);
                    xv[u] = xc[u * CL];
                }
                ap += U * astep;
                xc += U * CL;
#pragma unroll
                for (int u = 0; u < U; u++)
#pragma unroll
                    for (int e = 0; e < V; e++) acc[e] = fma_t(av[u].v[e], xv[u], acc[e]);
            }
            for (; j < n; j += CL, ap += astep, xc += CL) {
                const gvec<T> av = ld_stream16<gvec<T>>(ap);
                const T xj = *xc;
#pragma unroll
                for (int e = 0; e < V; e++) acc[e] = fma_t(av.v[e], xj, acc[e]);
            }
        } else {
            // Misaligned A, the matrix's last rows or a strided x: element loads, the same
            // sums. Walking x: vidx(j + CL) - vidx(j) = CL * incx for either sign of incx.
            const T* ap = a + i0 + cl * lda;
            const T* xp = x + vidx(cl, n, incx);
#pragma unroll 1
            for (i64 j = cl; j < n; j += CL, ap += CL * lda, xp += CL * incx) {
                const T xj = *xp;
#pragma unroll
                for (int e = 0; e < V; e++)
                    if (i0 + e < m) acc[e] = fma_t(ap[e], xj, acc[e]);
            }
        }
    }
#pragma unroll
    for (int e = 0; e < V; e++) red[cl][rr + e] = acc[e];
    __syncthreads();
    for (int s = CL / 2; s > 0; s >>= 1) {
        for (int t = tid; t < s * R; t += GEMV_ROWS_THREADS) {
            const int c = t / R, r = t - c * R;
            red[c][r] = red[c][r] + red[c + s][r];
        }
        __syncthreads();
    }
    if (tid < R && r0 + tid < m) gemv_store(al, scalar_arg(beta, beta_p), red[0][tid], true, y + vidx(r0 + tid, m, incy));
}

// y_i := beta*y_i + alpha * (sum of the KS partials of row i, in panel order): one thread per
// output, block (32, Ty). With alpha == 0 only scales y (also the alpha == 0 path of gemv).
template <typename T>
__device__ __forceinline__ void gemv_fin_n_body(i64 m, i64 KS, T alpha, const T* alpha_p, T beta, const T* beta_p,
                                                const T* part, T* y, i64 incy) {
    pdl_wait();  // gemv_n (launched just before) writes part
    const i64 i = ((i64)blockIdx.x * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
    if (i >= m) return;
    const T al = scalar_arg(alpha, alpha_p), be = scalar_arg(beta, beta_p);
    if (is_zero(al) || KS <= 0) {
        gemv_store(al, be, zero<T>(), false, y + vidx(i, m, incy));
        return;
    }
    T acc = part[i];
    // Latency-bound: 8 partials loaded at a time, then added in panel order. Measured on an
    // H200 (session 7) and dropped: sharing an output's partials among 2-16 threads (chunks
    // added in order) changed nothing, so this pass's cost is not its loads; adding them in
    // gemv_n itself (the last panel of a row block to arrive, counted with tickets) raised
    // gemv_n_v's registers (s 88 -> 116-124, d 120 -> 166) and made it slower everywhere
    // (DGEMV-N 8704: 151 -> 297 us, 184 with the tickets unused).
    for (i64 k = 1; k < KS; k += 8) {
        T v[8];
#pragma unroll
        for (int e = 0; e < 8; e++) v[e] = (k + e < KS) ? part[(k + e) * m + i] : zero<T>();
#pragma unroll
        for (int e = 0; e < 8; e++)
            if (k + e < KS) acc = acc + v[e];
    }
    gemv_store(al, be, acc, true, y + vidx(i, m, incy));
}

// ---- GER ----

// Block (Tx, Ty); block b covers row block b % rbs (Tx*RV rows) and GER_COLS*Ty columns of
// column block b / rbs, thread ty taking columns ty, ty+Ty, ... Columns with y_j == 0 are
// skipped as the reference does.
template <typename T, int RV, bool VA>
__device__ __forceinline__ void ger_body(i64 m, i64 n, T alpha, const T* alpha_p, const T* __restrict__ x, i64 incx,
                                         const T* __restrict__ y, i64 incy, T* a, i64 lda, int conj, i64 rbs) {
    const T al = scalar_arg(alpha, alpha_p);
    if (is_zero(al)) return;
    const i64 b = blockIdx.x, rb = b % rbs, cb = b / rbs;
    const i64 r = (rb * blockDim.x + threadIdx.x) * RV;
    if (r >= m) return;
    T xv[RV];
#pragma unroll
    for (int e = 0; e < RV; e++) xv[e] = (r + e < m) ? x[vidx(r + e, m, incx)] : zero<T>();
    const i64 j0 = cb * blockDim.y * GER_COLS + threadIdx.y;
    T tj[GER_COLS];
    bool on[GER_COLS];
#pragma unroll
    for (int q = 0; q < GER_COLS; q++) {
        const i64 j = j0 + (i64)q * blockDim.y;
        const T yj = (j < n) ? y[vidx(j, n, incy)] : zero<T>();
        on[q] = j < n && !is_zero(yj);
        tj[q] = al * op_t(yj, conj);
    }
    tvec<T, RV> av[GER_COLS];
#pragma unroll
    for (int q = 0; q < GER_COLS; q++)
        if (on[q]) av[q] = load_rows<T, RV, VA>(a + (j0 + (i64)q * blockDim.y) * lda + r, r, m);
#pragma unroll
    for (int q = 0; q < GER_COLS; q++) {
        if (on[q]) {
#pragma unroll
            for (int e = 0; e < RV; e++) av[q].v[e] = fma_t(xv[e], tj[q], av[q].v[e]);
            store_rows<T, RV, VA>(a + (j0 + (i64)q * blockDim.y) * lda + r, r, m, av[q]);
        }
    }
}

// ---- Entry points ----

#define GEMV_T_ENTRY(P, T, SFX, VA, VX)                                                                         \
    extern "C" __global__ void P##gemv_t_##SFX(i64 m, i64 n, T alpha, const T* alpha_p, T beta, const T* beta_p, \
                                               const T* a, i64 lda, const T* x, i64 incx, T* y, i64 incy,        \
                                               int conj, i64 S, i64 L, i64 warps, T* part, int stagger) {       \
        gemv_t_body<T, VA, VX>(m, n, alpha, alpha_p, beta, beta_p, a, lda, x, incx, y, incy, conj, S, L, warps, \
                               part, stagger);                                                                   \
    }

// The one-pass GEMV-N kernels with LPC lanes per column: P##NAME_v (16-byte loads; 4 blocks per
// SM, 32 registers: twice the loads in flight of 2 blocks, which made a 48-56-register build
// 15-20% slower on an H200) and P##NAME (element loads).
#define GEMV_ROWS_ENTRIES(P, T, NAME, LPC)                                                                       \
    extern "C" __global__ void __launch_bounds__(GEMV_ROWS_THREADS, 4)                                            \
        P##gemv_n_##NAME##_v(i64 m, i64 n, T alpha, const T* alpha_p, T beta, const T* beta_p, const T* a,       \
                             i64 lda, const T* x, i64 incx, T* y, i64 incy) {                                    \
        gemv_n_rows_body<T, true, LPC>(m, n, alpha, alpha_p, beta, beta_p, a, lda, x, incx, y, incy);             \
    }                                                                                                             \
    extern "C" __global__ void __launch_bounds__(GEMV_ROWS_THREADS)                                               \
        P##gemv_n_##NAME(i64 m, i64 n, T alpha, const T* alpha_p, T beta, const T* beta_p, const T* a, i64 lda,  \
                         const T* x, i64 incx, T* y, i64 incy) {                                                 \
        gemv_n_rows_body<T, false, LPC>(m, n, alpha, alpha_p, beta, beta_p, a, lda, x, incx, y, incy);            \
    }

#define GEMV_ENTRIES(P, T)                                                                                        \
    GEMV_T_ENTRY(P, T, vv, true, true)                                                                            \
    GEMV_T_ENTRY(P, T, vs, true, false)                                                                           \
    GEMV_T_ENTRY(P, T, sv, false, true)                                                                           \
    GEMV_T_ENTRY(P, T, ss, false, false)                                                                          \
    extern "C" __global__ void P##gemv_fin_t(i64 n, i64 S, T alpha, const T* alpha_p, T beta, const T* beta_p,    \
                                             const T* part, T* y, i64 incy) {                                     \
        gemv_fin_t_body<T>(n, S, alpha, alpha_p, beta, beta_p, part, y, incy);                                    \
    }                                                                                                             \
    extern "C" __global__ void P##gemv_n_v(i64 m, i64 n, T alpha, const T* alpha_p, T beta, const T* beta_p,      \
                                           const T* a, i64 lda, const T* x, i64 incx, T* y, i64 incy, i64 KS,     \
                                           i64 Lq, i64 rbs, T* part) {                                            \
        gemv_n_body<T, 16 / sizeof(T), true>(m, n, alpha, alpha_p, beta, beta_p, a, lda, x, incx, y, incy, KS, Lq, \
                                             rbs, part);                                                          \
    }                                                                                                             \
    extern "C" __global__ void P##gemv_n(i64 m, i64 n, T alpha, const T* alpha_p, T beta, const T* beta_p,        \
                                         const T* a, i64 lda, const T* x, i64 incx, T* y, i64 incy, i64 KS,       \
                                         i64 Lq, i64 rbs, T* part) {                                              \
        gemv_n_body<T, 1, false>(m, n, alpha, alpha_p, beta, beta_p, a, lda, x, incx, y, incy, KS, Lq, rbs, part); \
    }                                                                                                             \
    GEMV_ROWS_ENTRIES(P, T, rows, 8)                                                                             \
    extern "C" __global__ void P##gemv_fin_n(i64 m, i64 KS, T alpha, const T* alpha_p, T beta, const T* beta_p,   \
                                             const T* part, T* y, i64 incy) {                                     \
        gemv_fin_n_body<T>(m, KS, alpha, alpha_p, beta, beta_p, part, y, incy);                                   \
    }                                                                                                             \
    extern "C" __global__ void P##ger_v(i64 m, i64 n, T alpha, const T* alpha_p, const T* x, i64 incx,            \
                                        const T* y, i64 incy, T* a, i64 lda, int conj, i64 rbs) {                 \
        ger_body<T, 16 / sizeof(T), true>(m, n, alpha, alpha_p, x, incx, y, incy, a, lda, conj, rbs);             \
    }                                                                                                             \
    extern "C" __global__ void P##ger(i64 m, i64 n, T alpha, const T* alpha_p, const T* x, i64 incx, const T* y,  \
                                      i64 incy, T* a, i64 lda, int conj, i64 rbs) {                               \
        ger_body<T, 1, false>(m, n, alpha, alpha_p, x, incx, y, incy, a, lda, conj, rbs);                         \
    }

// Entry points, one precision per compile unit (HB_PREC: kernels/common.cuh).
#if HB_PREC(s)
GEMV_ENTRIES(s, float)
#endif
#if HB_PREC(d)
GEMV_ENTRIES(d, double)
#endif
#if HB_PREC(c)
GEMV_ENTRIES(c, cfloat)
#endif
#if HB_PREC(z)
GEMV_ENTRIES(z, cdouble)
GEMV_ROWS_ENTRIES(z, cdouble, rows16, 16)
#endif
